"""Accuracy parity, pure: both vendors' scores per model × task × config × concurrency with
Wilson intervals, the difference with a two-proportion test, and cliff detection.

A *cliff* (see ../shared/docs/regression-and-flake-detection.md §3.3) is a score at least
`min_drop` below the same config's other concurrencies or below the other vendor, with
non-overlapping Wilson intervals and a Holm-adjusted p-value under `alpha`. Ordinary binomial
noise (a point or two at n≈1,300) is never a cliff.
"""
from __future__ import annotations

import json
from typing import Callable

import numpy as np
import pandas as pd

from parity.dashboard.groups import key_codes, members
from parity.dashboard.intervals import holm, n_from_stderrs, two_proportion, wilson_bounds

CELL = ["framework", "model", "task", "metric", "filter", "config", "concurrency"]
DIM_KEYS = frozenset({"concurrency", "hw", "image", "date", "recipe_fingerprint", "conc"})


def _config_text(text: str) -> str:
    try:
        cfg = json.loads(text or "{}")
    except ValueError:
        cfg = {}
    parts = [f"{k}={cfg[k]}" for k in sorted(cfg) if k not in DIM_KEYS]
    return " ".join(parts)


# what orders scores of one time (`history`): a run's attempts (a re-run, or a Buildkite
# build's retried jobs) share the run's time, the later attempt is the later score, and
# within one, the later job and the later row; whichever of these a frame has
TIES = ("attempt", "job_pk", "accuracy_pk")


def history(acc: pd.DataFrame) -> pd.DataFrame:
    """Every score with its cell keys, n (from stderr when not reported) and Wilson bounds,
    oldest first (scores of one time in the order `TIES` gives, the same on every store:
    the latest score of a cell is the last)."""
    cols = CELL + ["vendor", "hardware", "value", "n", "lo", "hi", "threshold", "gate_passed",
                   "run_at", "commit", "job_url"]
    if acc.empty:
        return pd.DataFrame(columns=cols)
    a = acc[~acc["is_group"].astype(bool)].copy()
    texts = a["config"].fillna("{}")
    # each config's text parsed once: a window repeats a few configs over thousands of rows
    a["config"] = texts.map({t: _config_text(t) for t in texts.unique()})
    a["concurrency"] = a["concurrency"].astype("Float64")
    value = a["value"].to_numpy(dtype=float)
    n = a["n"].to_numpy(dtype=float)
    est = n_from_stderrs(value, a["stderr"].to_numpy(dtype=float))
    n = np.where(~np.isnan(n) & (n > 0), n, est)
    a["n"] = n
    a["lo"], a["hi"] = wilson_bounds(value * n, n)
    order = ["run_at"] + [c for c in TIES if c in a.columns]
    return a.sort_values(order, kind="stable")[cols].reset_index(drop=True)


def cells(history_: pd.DataFrame) -> pd.DataFrame:
    """The latest score per cell and hardware."""
    if history_.empty:
        return history_
    # each cell and hardware's last row, in the history's order, by integer keys (a pandas
    # grouping of the texts cost about twice as much)
    number = key_codes(*(history_[c] for c in CELL + ["vendor", "hardware"]))
    last = len(number) - 1 - np.unique(number[::-1], return_index=True)[1]
    return history_.take(np.sort(last)).reset_index(drop=True)


def parity(cells_: pd.DataFrame, reference: Callable[[str, set[str]], str | None], *,
           min_drop: float = 0.05, alpha: float = 0.01) -> pd.DataFrame:
    """One row per AMD cell beside its NVIDIA reference, with cliff flags on both axes."""
    cols = CELL + ["amd_hardware", "nvidia_hardware", "amd_value", "amd_lo", "amd_hi", "amd_n",
                   "nvidia_value", "nvidia_lo", "nvidia_hi", "nvidia_n", "diff", "p_vendor",
                   "others_value", "others_lo", "others_hi", "p_others", "p_vendor_holm",
                   "p_others_holm", "cliff", "cliff_reason", "gate_passed", "run_at",
                   "job_url"]
    if cells_.empty:
        return pd.DataFrame(columns=cols)
    # each column as the frame's object array holds it (the values `iterrows` gives), read
    # by position: a window holds hundreds of cells and a pandas row per cell cost more
    # than the tests
    v = dict(zip(cells_.columns, cells_.to_numpy(dtype=object).T))
    nvidia_hw: dict[str, set] = {}  # framework -> the NVIDIA hardware with cells
    for i in np.flatnonzero(v["vendor"] == "nvidia"):
        if not pd.isna(v["framework"][i]):
            nvidia_hw.setdefault(v["framework"][i], set()).add(v["hardware"][i])
    cell_key = list(zip(*(v[c] for c in CELL)))
    ref_index = {cell_key[j] + (v["hardware"][j],): j
                 for j in np.flatnonzero(v["vendor"] == "nvidia")}
    n = cells_["n"].to_numpy(dtype=float)
    hits = np.nan_to_num(cells_["value"].to_numpy(dtype=float) * n, nan=0.0)
    n0 = np.nan_to_num(n, nan=0.0)
    rows = []
    pooled: dict[int, float] = {}  # row -> the other concurrencies' n, where it has them
    group = [c for c in CELL if c != "concurrency"]
    # the cells of each (cell less its concurrency, hardware), in order of first appearance
    for idx in members(key_codes(*(cells_[c] for c in group + ["hardware"]))):
        total_hits, total_n = hits[idx].sum(), n0[idx].sum()
        for i in idx:
            if v["vendor"][i] != "amd":
                continue
            hardware, value, n_i = v["hardware"][i], v["value"][i], v["n"][i]
            ref_hw = reference(hardware, nvidia_hw.get(v["framework"][i], set()))
            j = ref_index.get(cell_key[i] + (ref_hw,))
            row = dict(zip(CELL, cell_key[i]))
            row.update(amd_hardware=hardware, nvidia_hardware=ref_hw, amd_value=value,
                       amd_lo=v["lo"][i], amd_hi=v["hi"][i], amd_n=n_i,
                       gate_passed=v["gate_passed"][i], run_at=v["run_at"][i],
                       job_url=v["job_url"][i])
            if j is not None:
                z, p = two_proportion(value, n_i, v["value"][j], v["n"][j])
                row.update(nvidia_value=v["value"][j], nvidia_lo=v["lo"][j],
                           nvidia_hi=v["hi"][j], nvidia_n=v["n"][j],
                           diff=value - v["value"][j], p_vendor=p)
            others_n = total_n - (n_i if n_i == n_i else 0)
            if len(idx) > 1 and others_n > 0:
                others = (total_hits - hits[i]) / others_n
                z, p = two_proportion(value, n_i, others, others_n)
                row.update(others_value=others, p_others=p)
                pooled[len(rows)] = others_n
            rows.append(row)
    out = pd.DataFrame(rows, columns=cols)
    if rows:  # the other concurrencies' intervals, all at once
        others_n = np.full(len(rows), np.nan)
        others_n[list(pooled)] = list(pooled.values())
        out["others_lo"], out["others_hi"] = wilson_bounds(
            out["others_value"].to_numpy(dtype=float) * others_n, others_n)
    out["p_vendor_holm"] = holm(out["p_vendor"].astype(float))
    out["p_others_holm"] = holm(out["p_others"].astype(float))
    vendor_cliff = ((out["nvidia_value"] - out["amd_value"] >= min_drop)
                    & (out["amd_hi"] < out["nvidia_lo"]) & (out["p_vendor_holm"] < alpha))
    others_cliff = ((out["others_value"] - out["amd_value"] >= min_drop)
                    & (out["amd_hi"] < out["others_lo"]) & (out["p_others_holm"] < alpha))
    out["cliff"] = (vendor_cliff | others_cliff).astype(bool)
    out["cliff_reason"] = np.select(
        [vendor_cliff & others_cliff, others_cliff, vendor_cliff],
        ["below other concurrencies and below NVIDIA", "below other concurrencies",
         "below NVIDIA"], "")
    return out.sort_values(["framework", "model", "task", "amd_hardware", "config",
                            "concurrency"]).reset_index(drop=True)
