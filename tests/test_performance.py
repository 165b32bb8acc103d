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
