"""Accuracy findings, pure: drops over time (`regressions.accuracy`) and cliffs against the
other vendor and the other concurrencies (`accuracy.parity`), on hand-built histories whose
figures can be checked by hand."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from parity.dashboard import accuracy as acc_rules
from parity.dashboard import regressions as findings
from parity.dashboard.intervals import two_proportion, wilson


def _score(hardware, vendor, day, value, n=1319.0, concurrency=8.0, model="Llama-3.1-8B",
           task="gsm8k", url=None):
    return dict(framework="vllm", model=model, task=task, metric="exact_match",
                filter="strict-match", config='{"tp": 1}', concurrency=concurrency,
                vendor=vendor, hardware=hardware, value=value, n=n, stderr=None,
                is_group=False, threshold=None, gate_passed=None,
                run_at=pd.Timestamp("2026-11-01") + pd.Timedelta(days=day),
                commit=f"c{day}", job_url=url or f"https://ci/{hardware}/{day}")


def _history(rows):
    return acc_rules.history(pd.DataFrame(rows))


def test_a_drop_against_the_pooled_earlier_runs_is_one_finding():
    earlier = [0.80, 0.81, 0.79, 0.80]
    rows = [_score("mi300x", "amd", d, v) for d, v in enumerate(earlier)]
    rows.append(_score("mi300x", "amd", 4, 0.70))
    # a second cell that only wobbles, and a third with two runs: neither is a finding
    rows += [_score("mi355x", "amd", d, v) for d, v in enumerate([0.80, 0.81, 0.80, 0.795])]
    rows += [_score("h100", "nvidia", d, v) for d, v in enumerate([0.9, 0.5])]
    # the latest run by date, whatever the order the rows come in
    out = findings.accuracy(_history(rows).iloc[::-1].reset_index(drop=True))
    assert len(out) == 1
    f = out.iloc[0]
    base = sum(earlier) / 4
    assert (f["status"], f["hardware"], f["vendor"]) == ("drop", "mi300x", "amd")
    assert f["subject"] == "Llama-3.1-8B gsm8k tp=1 c8.0"
    assert f["before"] == pytest.approx(base) and f["after"] == pytest.approx(0.70)
    assert f["size"] == pytest.approx(0.70 - base)
    assert f["when"] == pd.Timestamp("2026-11-05") and f["commit"] == "c4"
    assert f["url"] == "https://ci/mi300x/4"
    z, p = two_proportion(0.70, 1319, base, 4 * 1319)
    assert f["confidence"] == pytest.approx(-math.log10(p) / 2)
    assert f["detail"] == f"p={p:.1e} against 4 earlier runs"


def test_no_drop_finding_without_a_sample_size_noise_or_a_recent_date():
    steady = [_score("mi300x", "amd", d, v) for d, v in enumerate([0.80, 0.80, 0.80])]
    last_unknown = steady + [_score("mi300x", "amd", 3, 0.5, n=float("nan"))]
    assert findings.accuracy(_history(last_unknown)).empty
    # earlier runs that swing by ten points: a drop of ten is within three of their SDs
    noisy = [_score("mi300x", "amd", d, v) for d, v in enumerate([0.9, 0.7, 0.9, 0.7])]
    noisy.append(_score("mi300x", "amd", 4, 0.70))
    assert findings.accuracy(_history(noisy)).empty
    dropped = steady + [_score("mi300x", "amd", 3, 0.6)]
    assert len(findings.accuracy(_history(dropped))) == 1
    assert findings.accuracy(_history(dropped), since=pd.Timestamp("2026-11-05")).empty
    assert findings.accuracy(_history([])).empty


def test_a_cliff_below_the_other_concurrencies_and_below_nvidia():
    rows = [_score("mi355x", "amd", 0, 0.80, concurrency=c) for c in (1.0, 8.0)]
    rows.append(_score("mi355x", "amd", 0, 0.60, concurrency=64.0))
    rows += [_score("h100", "nvidia", 0, v, concurrency=c)
             for c, v in ((1.0, 0.81), (8.0, 0.80), (64.0, 0.80))]
    out = acc_rules.parity(acc_rules.cells(_history(rows)),
                           lambda hw, present: "h100" if "h100" in present else None)
    assert len(out) == 3 and set(out["nvidia_hardware"]) == {"h100"}
    by = out.set_index("concurrency")
    cliff = by.loc[64.0]
    assert bool(cliff["cliff"]) and not by.loc[1.0, "cliff"] and not by.loc[8.0, "cliff"]
    assert cliff["cliff_reason"] == "below other concurrencies and below NVIDIA"
    assert cliff["others_value"] == pytest.approx(0.80)  # the AMD cells at 1 and 8 pooled
    assert (cliff["others_lo"], cliff["others_hi"]) == pytest.approx(wilson(0.8 * 2638, 2638))
    assert cliff["diff"] == pytest.approx(-0.20)
    assert cliff["p_vendor"] == pytest.approx(two_proportion(0.60, 1319, 0.80, 1319)[1])
    # the cliff as a finding compares with the other concurrencies, as its reason says first
    f = findings.cliffs(out).iloc[0]
    assert (f["status"], f["hardware"], f["subject"]) == (
        "cliff", "mi355x", "Llama-3.1-8B gsm8k tp=1 c64")
    assert f["before"] == pytest.approx(0.80) and f["after"] == pytest.approx(0.60)


def test_an_amd_cell_without_a_reference_or_a_sample_size_is_kept_without_tests():
    rows = [_score("mi300x", "amd", 0, 0.80, n=float("nan"), concurrency=1.0),
            _score("mi300x", "amd", 0, 0.50, concurrency=8.0)]
    out = acc_rules.parity(acc_rules.cells(_history(rows)), lambda hw, present: None)
    by = out.set_index("concurrency")
    assert by["nvidia_hardware"].isna().all() and by["p_vendor"].isna().all()
    # the cell at 8 has no other concurrency with a sample size to compare with
    assert math.isnan(by.loc[8.0, "others_value"]) and not out["cliff"].any()
    # the cell at 1 compares with the one at 8, which has one
    assert by.loc[1.0, "others_value"] == pytest.approx(0.50)
