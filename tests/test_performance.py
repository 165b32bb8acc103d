"""Pure performance helpers, without a store."""
from __future__ import annotations

import math

import pandas as pd

from parity.dashboard import performance


def test_config_labels_are_each_rows_label_with_missing_dimensions_too():
    nan = math.nan
    frame = pd.DataFrame({
        "precision": ["fp8", "fp8", "bf16", "fp8", ""],
        "tp": [8, 8, 1, nan, nan],
        "ep": [nan, nan, 8, nan, nan],
        "dp": [nan] * 5, "pp": [nan] * 5,
        "isl": [1024, 1024, 8192, nan, 1024],
        "osl": [1024, 1024, 1024, nan, nan],
        "concurrency": [64, 64, 16, 4, nan]}, index=[10, 11, 12, 13, 14])
    labels = performance.config_labels(frame)
    assert labels.tolist() == ["fp8 tp8 1024/1024 c64", "fp8 tp8 1024/1024 c64",
                               "bf16 ep8 8192/1024 c16", "fp8 c4", ""]
    assert labels.tolist() == [performance.config_label(r) for r in
                               frame.astype(object).to_dict("records")]
    assert list(labels.index) == [10, 11, 12, 13, 14]
    assert labels.dtype == "str"


def test_config_labels_of_no_rows_and_of_a_frame_without_dimensions():
    assert performance.config_labels(pd.DataFrame(columns=["tp"])).empty
    assert performance.config_labels(pd.DataFrame({"value": [1.0, 2.0]})).tolist() == ["", ""]


def _reduced(bench: pd.DataFrame) -> pd.DataFrame:
    """`run_values` as the plain reduction every row goes through."""
    b = bench.assign(match_key=performance.match_keys(bench["config"]))
    agg = {"value": ("value", "mean"), "run_at": ("run_at", "min"),
           "commit": ("commit", "first"), "run_url": ("run_url", "first"),
           "gpu_count": ("gpu_count", "max")}
    agg.update({c: (c, "first") for c in performance.CONFIG_COLUMNS})
    return b.groupby(performance.SERIES + ["vendor", "hardware", "run_pk"], as_index=False,
                     dropna=False).agg(**agg) \
        .sort_values("run_at", kind="stable", ignore_index=True)


def test_run_values_without_repeated_records_equal_the_reduction():
    """One record per series, hardware and run skips the reduction: the same frame, rows,
    order and types, with missing keys and values too; a repeated record takes the mean."""
    nan = math.nan
    n = 6
    bench = pd.DataFrame({
        "framework": ["vllm", "vllm", None, "sglang", "vllm", "vllm"],
        "benchmark": ["serving"] * n, "model": ["m", "m", "m", None, "m2", "m"],
        "metric": ["tput"] * n,
        "config": ['{"tp": 8}', '{"tp": 8}', None, '{"tp": 1}', '{"tp": 8}', '{"tp": 8}'],
        "vendor": ["amd", "nvidia", "amd", "amd", "amd", "amd"],
        "hardware": ["mi355x", "b200", "mi355x", "mi300x", "mi355x", "mi355x"],
        "run_pk": [3, 3, 1, 2, 1, 2],
        "run_at": pd.to_datetime(["2026-11-03", "2026-11-03", "2026-11-01", "2026-11-02",
                                  "2026-11-01", "2026-11-02"]),
        "commit": ["c3", "c3", "c1", "c2", "c1", "c2"], "run_url": ["u"] * n,
        "gpu_count": [8, 8, 8, 1, 8, 8], "value": [1.0, 2.0, nan, 4.0, 5.0, 6.0],
        **{c: [nan] * n for c in performance.CONFIG_COLUMNS}})
    assert len(performance.run_values(bench)) == n
    pd.testing.assert_frame_equal(performance.run_values(bench), _reduced(bench))
    repeated = pd.concat([bench, bench.iloc[[0]].assign(value=3.0)], ignore_index=True)
    got = performance.run_values(repeated)
    pd.testing.assert_frame_equal(got, _reduced(repeated))
    assert len(got) == n and got["value"].tolist().count(2.0) == 2  # (1 + 3) / 2, and b200's
