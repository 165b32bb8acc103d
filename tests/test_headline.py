"""The headline, pure, on small frames counted by hand: coverage of the reference's suites,
the same-denominator rate summed over suites with its interval, the preferred performance
metric, the accuracy difference and cliffs, open findings, and a note for every empty cell."""
from __future__ import annotations

import math
from datetime import datetime

import pandas as pd
import pytest

from parity.dashboard.headline import COLUMNS, headline
from parity.dashboard.intervals import wilson

T1, T2 = datetime(2026, 11, 1), datetime(2026, 11, 2)


def _parity(rows) -> pd.DataFrame:
    return pd.DataFrame([dict(framework=fw, amd_hardware=a, nvidia_hardware=r, suite=s,
                              denominator=d, amd_passed=p, nvidia_passed=n, alignment=al,
                              amd_run_at=t, amd_commit=f"c-{s}", amd_url=f"u-{s}")
                         for fw, a, r, s, d, p, n, al, t in rows])


def _jobs(rows) -> pd.DataFrame:
    return pd.DataFrame([dict(framework=fw, hardware=hw, suite=s, total=n)
                         for fw, hw, s, n in rows])


def _perf(rows) -> pd.DataFrame:
    return pd.DataFrame([dict(framework="vllm", amd_hardware="mi300x", nvidia_hardware="h100",
                              metric=m, geomean=g, lo=g - 0.1, hi=g + 0.1) for m, g in rows])


def _acc(rows) -> pd.DataFrame:
    return pd.DataFrame([dict(framework="vllm", amd_hardware="mi300x", nvidia_hardware="h100",
                              diff=d, cliff=c) for d, c in rows])


def _found(rows) -> pd.DataFrame:
    return pd.DataFrame([dict(framework=fw, hardware=hw, status=s) for fw, hw, s in rows])


EMPTY = pd.DataFrame()

JOBS = _jobs([("vllm", "h100", "kernels", 10), ("vllm", "h100", "lora", 5),
              ("vllm", "h100", "spec", 3), ("vllm", "h100", "built-only", 0),
              ("vllm", "mi300x", "kernels", 10), ("vllm", "mi300x", "lora", 0),
              ("vllm", "mi300x", "amd-extra", 4)])


def test_the_headline_by_hand():
    parity = _parity([
        ("vllm", "mi300x", "h100", "kernels", 10, 7, 9, "same-commit", T2),
        ("vllm", "mi300x", "h100", "lora", 4, 1, 4, "nearest", T1),
    ])
    perf = _perf([("request_throughput", 0.7), ("output_throughput", 0.9),
                  ("zz_custom", 2.0)])
    acc = _acc([(-0.02, False), (0.04, True), (None, None)])
    found = _found([("vllm", "mi300x", "regression"), ("vllm", "mi300x", "cliff"),
                    ("vllm", "mi300x", "new failure"), ("vllm", "mi300x", "resolved"),
                    ("vllm", "mi325x", "regression"), ("sglang", "mi300x", "drop")])
    h = headline(parity, JOBS, perf, acc, found)
    assert list(h.columns) == COLUMNS and len(h) == 1
    r = h.iloc[0]
    # the reference ran tests in kernels, lora and spec; the AMD lane in kernels (and an
    # extra suite the reference does not have): 1 of 3
    assert (r["suites_tested"], r["suites_reference"]) == (1, 3)
    assert r["coverage"] == pytest.approx(1 / 3)
    assert r["same_denominator_rate"] == pytest.approx(8 / 14)
    assert (r["rate_lo"], r["rate_hi"]) == pytest.approx(wilson(8, 14))
    assert r["nvidia_rate"] == pytest.approx(13 / 14)
    # output throughput is preferred over request throughput and anything else
    assert (r["perf_metric"], r["perf_ratio"]) == ("output_throughput", 0.9)
    assert (r["perf_lo"], r["perf_hi"]) == pytest.approx((0.8, 1.0))
    assert r["accuracy_diff"] == pytest.approx(0.01) and r["accuracy_cells"] == 2
    assert r["cliffs"] == 1 and r["open_findings"] == 3
    # the latest suite run gives the run, commit and link
    assert (r["run_at"], r["commit"], r["run_url"]) == (T2, "c-kernels", "u-kernels")
    assert r["notes"] == ""


def test_metric_order_without_the_first_choice():
    parity = _parity([("vllm", "mi300x", "h100", "kernels", 10, 7, 9, "same-commit", T1)])
    h = headline(parity, JOBS, _perf([("zz_custom", 2.0), ("request_throughput", 0.7),
                                       ("total_token_throughput", 0.8)]), EMPTY, EMPTY)
    assert h.iloc[0]["perf_metric"] == "total_token_throughput"
    h = headline(parity, JOBS, _perf([("zz_b", 2.0), ("zz_a", 3.0)]), EMPTY, EMPTY)
    assert h.iloc[0]["perf_metric"] == "zz_a"  # unknown metrics: by name


def test_every_empty_cell_has_a_note():
    # no aligned reference run: the pass rate is missing and says why
    parity = _parity([("vllm", "mi300x", "h100", "kernels", 0, 0, 0, "none", T1)])
    r = headline(parity, JOBS, EMPTY, EMPTY, EMPTY).iloc[0]
    assert math.isnan(r["same_denominator_rate"]) and r["open_findings"] == 0
    assert r["notes"] == ("pass rate: no h100 run aligned with the AMD run; performance: no "
                          "benchmark config run on both mi300x and h100; accuracy: no accuracy "
                          "cell scored on both mi300x and h100")
    assert (r["accuracy_cells"], r["cliffs"]) == (0, 0)
    # aligned, but the reference run ran nothing
    parity = _parity([("vllm", "mi300x", "h100", "kernels", 0, 0, 0, "same-commit", T1)])
    r = headline(parity, JOBS, EMPTY, EMPTY, EMPTY).iloc[0]
    assert r["notes"].startswith("pass rate: the aligned h100 run ran no tests;")
    # the AMD lane ran no tests at all, and the reference nothing in the window either
    parity = _parity([("vllm", "mi455x", "b200", "kernels", 0, 0, 0, "same-commit", T1)])
    r = headline(parity, JOBS, EMPTY, EMPTY, EMPTY).iloc[0]
    assert r["coverage"] is None or math.isnan(r["coverage"])
    assert r["notes"].startswith("coverage: b200 ran no tests in the window; pass rate: "
                                 "mi455x ran no tests in the window;")
    # accuracy rows without a difference are no accuracy figure
    parity = _parity([("vllm", "mi300x", "h100", "kernels", 10, 7, 9, "same-commit", T1)])
    r = headline(parity, JOBS, EMPTY, _acc([(None, True)]), EMPTY).iloc[0]
    assert r["accuracy_cells"] == 0 and r["cliffs"] == 1
    assert r["notes"] == ("performance: no benchmark config run on both mi300x and h100; "
                          "accuracy: no accuracy cell scored on both mi300x and h100")


def test_pairs_come_from_every_view_and_are_sorted():
    parity = _parity([("vllm", "mi355x", "b200", "kernels", 1, 1, 1, "same-commit", T1)])
    perf = _perf([("output_throughput", 1.1)])
    acc = _acc([(0.0, False)]).assign(framework="sglang")
    h = headline(parity, JOBS, perf, acc, EMPTY)
    assert list(zip(h["framework"], h["amd_hardware"])) == [
        ("sglang", "mi300x"), ("vllm", "mi300x"), ("vllm", "mi355x")]
    assert h.set_index("amd_hardware").loc["mi355x", "suites_tested"] == 0
    # nothing anywhere: an empty frame with the columns
    none = headline(_parity([]).reindex(columns=["framework", "amd_hardware",
                                                 "nvidia_hardware"]), JOBS, EMPTY, EMPTY, EMPTY)
    assert none.empty and list(none.columns) == COLUMNS


def test_each_pair_counts_only_its_own_rows():
    jobs = _jobs([("vllm", "h100", "kernels", 1), ("vllm", "mi300x", "kernels", 1),
                  ("vllm", "mi355x", "kernels", 4), ("sglang", "h100", "kernels", 2),
                  ("sglang", "mi300x", "kernels", 2)])
    parity = _parity([
        ("vllm", "mi300x", "h100", "kernels", 1, 1, 0, "same-commit", T1),
        ("vllm", "mi355x", "h100", "kernels", 4, 1, 4, "same-commit", T1),
        ("vllm", "mi300x", "b200", "kernels", 9, 9, 9, "same-commit", T1),
        ("sglang", "mi300x", "h100", "kernels", 2, 0, 2, "same-commit", T1),
    ])
    perf = pd.concat([_perf([("output_throughput", 0.5)]),
                      _perf([("output_throughput", 0.9)]).assign(amd_hardware="mi355x"),
                      _perf([("output_throughput", 1.5)]).assign(nvidia_hardware="b200"),
                      _perf([("output_throughput", 2.0)]).assign(framework="sglang")])
    acc = pd.concat([_acc([(0.1, False)]), _acc([(0.3, True)]).assign(amd_hardware="mi355x"),
                     _acc([(0.5, True)]).assign(nvidia_hardware="b200"),
                     _acc([(0.7, True)]).assign(framework="sglang")])
    h = headline(parity, jobs, perf, acc, EMPTY).set_index(
        ["framework", "amd_hardware", "nvidia_hardware"])
    r = h.loc[("vllm", "mi300x", "h100")]
    # one test is a rate, and a job that ran one test ran tests
    assert r["same_denominator_rate"] == 1.0 and r["nvidia_rate"] == 0.0
    assert (r["suites_tested"], r["suites_reference"]) == (1, 1)
    assert (r["perf_ratio"], r["accuracy_diff"], r["cliffs"]) == (0.5, 0.1, 0)
    assert h.loc[("vllm", "mi355x", "h100")]["same_denominator_rate"] == 0.25
    assert h.loc[("vllm", "mi355x", "h100")]["perf_ratio"] == 0.9
    assert h.loc[("vllm", "mi300x", "b200")]["accuracy_diff"] == 0.5
    assert h.loc[("sglang", "mi300x", "h100")]["same_denominator_rate"] == 0.0
    assert h.loc[("sglang", "mi300x", "h100")]["perf_ratio"] == 2.0
