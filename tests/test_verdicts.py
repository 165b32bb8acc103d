"""Verdict completeness: a night of an AMD lane is complete only when every suite its NVIDIA
reference ran that week executed tests on AMD, with the accuracy gate the reference has."""
from __future__ import annotations

import pandas as pd

from parity.dashboard import frames
from parity.dashboard.verdicts import nightly, share

PAIRS = pd.DataFrame([{"framework": "vllm", "amd_hardware": "mi455x", "nvidia_hardware": "b200"},
                      {"framework": "vllm", "amd_hardware": "mi355x", "nvidia_hardware": "b200"}])


def _job(hw, suite, day, passed=0, skipped=0, vendor="amd"):
    return dict(framework="vllm", vendor=vendor, hardware=hw, suite=suite,
                run_at=pd.Timestamp(f"2026-11-{day:02d} 09:00"), passed=passed, failed=0,
                error=0, xfailed=0, xpassed=0, skipped=skipped)


def test_complete_only_with_every_reference_suite_executed_and_the_gate():
    jobs = pd.DataFrame([
        _job("b200", "kernels", 10, 5, vendor="nvidia"), _job("b200", "e2e", 10, 5, vendor="nvidia"),
        _job("b200", "kernels", 11, 5, vendor="nvidia"),
        # MI355X: night 10 complete; night 11 runs kernels only but e2e ran on B200 that week
        _job("mi355x", "kernels", 10, 3), _job("mi355x", "e2e", 10, 1),
        _job("mi355x", "kernels", 11, 3),
        # MI455X builds (a job with no test) on night 10, and skips everything on night 11
        _job("mi455x", "build", 10), _job("mi455x", "kernels", 11, skipped=4),
        _job("mi455x", "e2e", 11, skipped=4)])
    acc = pd.DataFrame([{"framework": "vllm", "hardware": "b200", "run_at": pd.Timestamp("2026-11-10")},
                        {"framework": "vllm", "hardware": "mi355x", "run_at": pd.Timestamp("2026-11-10")},
                        {"framework": "vllm", "hardware": "mi355x", "run_at": pd.Timestamp("2026-11-11")}])
    out = nightly(jobs, acc, PAIRS).set_index(["amd_hardware", "night"])
    assert out.loc[("mi355x", pd.Timestamp("2026-11-10")), "complete"]
    n11 = out.loc[("mi355x", pd.Timestamp("2026-11-11"))]
    assert not n11["complete"] and n11["missing_suites"] == "e2e"
    for day in (10, 11):  # building, or skipping every test, is never complete
        row = out.loc[("mi455x", pd.Timestamp(f"2026-11-{day}"))]
        assert not row["complete"]
        assert row["why"].startswith("no test executed") and "no accuracy gate" in row["why"]
    s = share(out.reset_index()).set_index("amd_hardware")
    assert s.loc["mi355x", ["verdict_nights", "complete_nights"]].tolist() == [2, 1]
    assert s.loc["mi455x", "verdict_completeness"] == 0.0


def test_the_demo_headline_carries_completeness(demo_db):
    head = frames.headline(demo_db).set_index(["framework", "amd_hardware"])
    assert head.loc[("vllm", "mi455x"), "verdict_completeness"] == 0.0  # builds, runs nothing
    assert "verdicts complete on 0 of" in head.loc[("vllm", "mi455x"), "notes"]
    assert head.loc[("sglang", "mi300x"), "verdict_completeness"] == 1.0
    nights = frames.verdicts(demo_db)
    assert set(nights.columns) >= {"night", "complete", "why"} and not nights.empty
