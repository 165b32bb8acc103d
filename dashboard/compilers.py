"""torch.compile pass rate as PyTorch's compiler dashboard computes it, pure.

torchci (`lib/benchmark/compilerUtils.ts`) counts a model as passing when its accuracy
status is one of `PASSING_ACCURACY` (`pass`, `pass_due_to_skip`, `eager_variation`) and its
performance run did not report a zero speedup; `pass_due_to_skip` passes whatever the
speedup. The rate is passing models over all models of the accuracy run, per suite
(torchbench, huggingface, timm_models), compiler (which says static or dynamic shapes),
dtype and mode. Parity computes the same from the TorchInductor CSVs both vendors upload,
so a quoted figure ("dynamic shapes at 77 % on AMD against 90 %+ on NVIDIA") can be checked
side by side."""
from __future__ import annotations

import numpy as np
import pandas as pd

PASSING_ACCURACY = ("pass", "pass_due_to_skip", "eager_variation")
CONFIG = ["suite", "compiler", "dtype", "mode", "shapes"]
KEYS = ["framework", "vendor", "hardware", "run_pk", "run_at"] + CONFIG
COLUMNS = KEYS + ["models", "passed", "pass_rate", "zero_speedup"]


def pass_rate(accuracy: pd.DataFrame, speedups: pd.DataFrame) -> pd.DataFrame:
    """`accuracy`: one row per model of an accuracy run (KEYS, `model`, `status`);
    `speedups`: the performance run's (KEYS without run_at, `model`, `speedup`). One row per
    run and configuration: models, passing models, the pass rate, and how many models with
    a passing status were failed for a zero speedup."""
    if accuracy.empty:
        return pd.DataFrame(columns=COLUMNS)
    on = [k for k in KEYS if k != "run_at"] + ["model"]
    sp = speedups[on + ["speedup"]].drop_duplicates(on, keep="last") if not speedups.empty \
        else pd.DataFrame(columns=on + ["speedup"])
    m = accuracy.merge(sp, on=on, how="left")
    status_ok = m["status"].isin(PASSING_ACCURACY)
    # a missing performance row is no zero speedup (the dashboard compares it to 0.0)
    zero = m["speedup"].eq(0.0)
    m["passing"] = (status_ok & ~zero) | m["status"].eq("pass_due_to_skip")
    m["zero_speedup"] = status_ok & zero & ~m["status"].eq("pass_due_to_skip")
    g = m.groupby(KEYS, dropna=False, sort=True)
    out = g.agg(models=("model", "size"), passed=("passing", "sum"),
                zero_speedup=("zero_speedup", "sum")).reset_index()
    out["pass_rate"] = np.where(out["models"] > 0, out["passed"] / out["models"], np.nan)
    return out[COLUMNS]
