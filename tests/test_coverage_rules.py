"""`dashboard.coverage`, pure: the gaps found in a window's jobs, on frames whose right
answer is known, including the missing values real stores hold (a job without a suite or
hardware, a run without a time), and the skips counted per reason."""
from __future__ import annotations

import numpy as np
import pandas as pd

from parity.dashboard import coverage

T0 = pd.Timestamp("2026-11-01 02:00")
COUNTS = ("total", "passed", "failed", "error", "skipped", "xfailed", "xpassed")


def _job(framework, vendor, hardware, suite, day, total=10, passed=None, skipped=0):
    passed = total - skipped if passed is None else passed
    return dict(framework=framework, vendor=vendor, hardware=hardware, suite=suite,
                run_at=T0 + pd.Timedelta(days=day) if day is not None else pd.NaT,
                total=total, passed=passed, failed=0, error=0, skipped=skipped,
                xfailed=0, xpassed=0)


def _jobs(*rows) -> pd.DataFrame:
    df = pd.DataFrame(list(rows))
    df["run_at"] = pd.to_datetime(df["run_at"]).astype("datetime64[us]")
    return df


def _bench(*rows) -> pd.DataFrame:
    """Benchmark values: (framework, vendor, hardware, model, precision, day) each."""
    return pd.DataFrame([dict(framework=fw, vendor=v, hardware=hw, benchmark="serving",
                              model=m, match_key=f"{m}|{p}", precision=p,
                              run_at=T0 + pd.Timedelta(days=d))
                         for fw, v, hw, m, p, d in rows],
                        columns=["framework", "vendor", "hardware", "benchmark", "model",
                                 "match_key", "precision", "run_at"])


def _acc(*pairs) -> pd.DataFrame:
    return pd.DataFrame(pairs, columns=["framework", "hardware"])


def test_every_kind_of_gap_with_missing_values():
    jobs = _jobs(
        _job("vllm", "nvidia", "h100", "kernels", 20),
        _job("vllm", "nvidia", "b200", "kernels", 18),
        _job("vllm", "nvidia", "h100", "entrypoints", 20),
        _job("vllm", "amd", "mi300x", "entrypoints", 20),
        _job("vllm", "amd", "mi300x", None, 19),  # a job without a suite
        _job("vllm", "nvidia", "h100", "lora", 20, total=0),  # ran no tests: not a suite run
        _job("vllm", "amd", "mi355x", "entrypoints", 10),  # stale: ten days before
        _job("vllm", "amd", "mi355x", "entrypoints", None),  # a run without a time
        _job("vllm", "amd", "mi455x", "build", 20, total=0),
        _job("vllm", "amd", "mi455x", "build", 19, total=5, skipped=5),
        _job("vllm", "amd", None, "entrypoints", 20),  # hardware unknown
        _job("sglang", "amd", "mi300x", "srt", 5),
        _job("sglang", "nvidia", "h100", "srt", 6),
    )
    acc = _acc(("vllm", "h100"), ("vllm", "mi300x"), ("vllm", "mi355x"))
    bench = _bench(("vllm", "nvidia", "h100", "llama", "fp8", 20),
                   ("vllm", "amd", "mi300x", "llama", "fp8", 20),
                   ("vllm", "nvidia", "h100", "llama", "bf16", 19))
    out = coverage.coverage(jobs, bench, acc)
    got = [tuple(r) for r in out[["framework", "finding", "suite", "hardware", "detail"]]
           .itertuples(index=False)]
    assert got == [
        ("vllm", "builds but runs no tests", "", "mi455x",
         "2 jobs, 5 tests, all skipped, no benchmark or accuracy result"),
        ("vllm", "config without AMD run", "serving", "", "llama bf16"),
        ("vllm", "no AMD lane", "kernels", "", "runs on b200, h100"),
        ("vllm", "no accuracy gate", "", "mi455x", "accuracy runs on h100, mi300x, mi355x"),
        ("vllm", "stale", "entrypoints", "mi355x", "last run 10 days before the newest"),
    ]
    # without its configs, from AMD's benchmark rows alone: the same findings but those
    amd_only = coverage.coverage(jobs, bench[bench["vendor"] == "amd"], acc, configs=False)
    pd.testing.assert_frame_equal(amd_only, out[out["finding"] != "config without AMD run"]
                                  .reset_index(drop=True))
    # a lane with benchmark rows is not one that runs nothing
    benched = coverage.coverage(jobs, pd.concat([bench, _bench(
        ("vllm", "amd", "mi455x", "llama", "bf16", 20))], ignore_index=True), acc)
    assert "builds but runs no tests" not in set(benched["finding"])
    last = dict(zip(out["finding"] + "/" + out["hardware"], out["last_run"]))
    assert last["no AMD lane/"] == T0 + pd.Timedelta(days=20)  # the latest of its NVIDIA runs
    assert last["builds but runs no tests/mi455x"] == T0 + pd.Timedelta(days=20)
    assert last["stale/mi355x"] == T0 + pd.Timedelta(days=10)  # the run without a time left out
    assert out["last_run"].dtype == jobs["run_at"].dtype


def test_stale_days_and_frameworks_apart():
    jobs = _jobs(_job("vllm", "amd", "mi300x", "a", 0), _job("vllm", "nvidia", "h100", "a", 3),
                 _job("sglang", "amd", "mi300x", "a", 30), _job("sglang", "nvidia", "h100", "a", 30))
    empty = _acc()
    # each framework's lanes are measured against its own newest run
    assert coverage.coverage(jobs, empty, empty).empty
    out = coverage.coverage(jobs, empty, empty, stale_days=2)
    assert out[["framework", "finding", "hardware"]].values.tolist() == [
        ["vllm", "stale", "mi300x"]]


def test_no_jobs_and_no_times():
    empty = _acc()
    assert coverage.coverage(_jobs(_job("vllm", "amd", "mi300x", "a", 0)).iloc[0:0],
                             empty, empty).empty
    out = coverage.coverage(_jobs(_job("vllm", "amd", "mi300x", "a", None),
                                  _job("vllm", "nvidia", "h100", "b", None)), empty, empty)
    assert out[["finding", "suite"]].values.tolist() == [["no AMD lane", "b"]]
    assert out["last_run"].isna().all()
    assert np.issubdtype(out["last_run"].dtype, np.datetime64)


def test_skip_parity_sums_the_counts_of_each_lane_and_pair():
    """Counts per lane (one per suite) are summed per framework × vendor × hardware ×
    reason, a missing reason is "other" (with the lanes' own "other"), and the AMD-only
    skips of the pairs on that hardware are summed beside them; the largest counts first."""
    skips = pd.DataFrame(
        [("vllm", "amd", "mi300x", "vendor_amd", 3), ("vllm", "amd", "mi300x", "vendor_amd", 4),
         ("vllm", "amd", "mi300x", None, 1), ("vllm", "amd", "mi300x", "other", 2),
         ("vllm", "amd", "mi300x", "hardware", 5), ("vllm", "nvidia", "h100", "hardware", 6)],
        columns=["framework", "vendor", "hardware", "skip_category", "skips"])
    amd_only = pd.DataFrame([("vllm", "mi300x", "vendor_amd", 2), ("vllm", "mi300x",
                                                                     "vendor_amd", 1)],
                            columns=["framework", "hardware", "skip_category",
                                     "ran_on_reference"])
    out = coverage.skip_parity(skips, amd_only)
    assert list(zip(out["vendor"], out["skip_category"], out["skips"], out["ran_on_reference"],
                    out["vendor_gated"])) == [
        ("amd", "vendor_amd", 7, 3, True), ("amd", "hardware", 5, 0, False),
        ("amd", "other", 3, 0, False), ("nvidia", "hardware", 6, 0, False)]
    none = coverage.skip_parity(skips, amd_only.iloc[:0])
    assert none["ran_on_reference"].tolist() == [0, 0, 0, 0]
    assert coverage.skip_parity(skips.iloc[:0], amd_only).empty
