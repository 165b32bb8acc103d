"""Frames compared as a user reads them."""
from __future__ import annotations

import pandas as pd


def assert_same_frame(left: pd.DataFrame, right: pd.DataFrame, **kwargs) -> None:
    """pandas' `assert_frame_equal`, with text columns compared by their values and dtype
    (`str`) but not by how pandas stores them: the jobs read holds its texts as Python
    strings (`dashboard.tables._jobs`), a joined read as Arrow's."""
    def texts(df: pd.DataFrame) -> dict:
        return {c: "str" for c, t in df.dtypes.items() if isinstance(t, pd.StringDtype)}
    assert texts(left) == texts(right), "text columns differ"
    pd.testing.assert_frame_equal(left.astype(texts(left)), right.astype(texts(right)),
                                  **kwargs)
