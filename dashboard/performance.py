"""Performance parity, pure: AMD/NVIDIA ratios at matched configs with intervals from repeated
runs, their geometric mean per hardware pair, and the throughput/interactivity Pareto frontier.

Input is the frame `tables.benchmarks()` returns. A config *matches* across vendors when every
dimension of it is equal except the ones that name the vendor's own platform (`VENDOR_KEYS`).
"""
from __future__ import annotations

import json
import math
from typing import Callable

import numpy as np
import pandas as pd

from parity.dashboard.groups import distinct, groups, members
from parity.dashboard.intervals import geomean_interval, ratio_interval

# config fields that describe the platform rather than the workload
VENDOR_KEYS = frozenset({"hw", "image", "date", "recipe_fingerprint", "power_valid",
                         "schema_version", "prefill_hw", "decode_hw", "runner", "gpu",
                         "device", "rocm_version", "cuda_version", "driver"})
SERIES = ["framework", "benchmark", "model", "metric", "match_key"]
CONFIG_COLUMNS = ["unit", "direction", "precision", "tp", "ep", "dp", "pp", "isl", "osl",
                  "concurrency", "request_rate", "batch_size"]


def match_keys(configs: pd.Series) -> pd.Series:
    """The vendor-neutral key of each config JSON text, computed once per distinct text (a
    window's tens of thousands of rows hold a few dozen) and taken for every row."""
    codes, texts = pd.factorize(configs.fillna("{}"))
    keys = []
    for text in texts:
        try:
            cfg = json.loads(text or "{}")
        except ValueError:
            cfg = {}
        keys.append(json.dumps({k: v for k, v in sorted(cfg.items()) if k not in VENDOR_KEYS},
                               sort_keys=True, default=str))
    return pd.Series(pd.array(keys, dtype="str").take(codes), index=configs.index,
                     name=configs.name, dtype="str")


def config_label(row) -> str:
    """A short human label of a config: precision, parallelism, lengths, concurrency."""
    parts = []
    if row.get("precision"):
        parts.append(str(row["precision"]))
    for dim in ("tp", "ep", "dp", "pp"):
        v = row.get(dim)
        if v is not None and not (isinstance(v, float) and math.isnan(v)) and v != 1:
            parts.append(f"{dim}{int(v)}")
    if _present(row.get("isl")) and _present(row.get("osl")):
        parts.append(f"{int(row['isl'])}/{int(row['osl'])}")
    if _present(row.get("concurrency")):
        parts.append(f"c{int(row['concurrency'])}")
    return " ".join(parts)


LABEL_COLUMNS = ("precision", "tp", "ep", "dp", "pp", "isl", "osl", "concurrency")


def config_labels(frame: pd.DataFrame) -> pd.Series:
    """`config_label` of every row, computed once per distinct config (a history has
    thousands of runs of a few hundred configs)."""
    cols = [c for c in LABEL_COLUMNS if c in frame.columns]
    if frame.empty:
        return pd.Series([], index=frame.index, dtype="str")
    if not cols:
        return pd.Series(config_label({}), index=frame.index, dtype="str")
    # grouped, not hashed as tuples: a missing dimension is a NaN, and no two NaNs are equal
    # in a set, which made every row with one a config of its own
    group = frame.groupby(cols, sort=False, dropna=False).ngroup().to_numpy()
    first = np.unique(group, return_index=True)[1]
    rows = frame[cols].iloc[first].astype(object).to_dict("records")
    labels = pd.array([config_label(r) for r in rows], dtype="str")
    return pd.Series(labels.take(group), index=frame.index, dtype="str")


def _present(v) -> bool:
    return v is not None and not (isinstance(v, float) and math.isnan(v))


def run_values(bench: pd.DataFrame) -> pd.DataFrame:
    """One value per series, hardware and run (the mean of repeated records in a run), in
    order of time, then of series and hardware: a run's values depend on its rows alone and
    the order is total, so a window's values are a wider window's cut by `run_at`."""
    if bench.empty:
        return pd.DataFrame(columns=SERIES + ["vendor", "hardware", "run_pk", "run_at",
                                              "commit", "value"] + CONFIG_COLUMNS)
    b = bench.assign(match_key=match_keys(bench["config"]))
    keys = SERIES + ["vendor", "hardware", "run_pk"]
    agg = {"value": ("value", "mean"), "run_at": ("run_at", "min"),
           "commit": ("commit", "first"), "run_url": ("run_url", "first"),
           "gpu_count": ("gpu_count", "max")}
    agg.update({c: (c, "first") for c in CONFIG_COLUMNS})
    groups = b.groupby(keys, dropna=False)
    number = groups.ngroup().to_numpy()  # each row's group, in the groups' sorted order
    if groups.ngroups < len(b):
        return groups.agg(**agg).reset_index() \
            .sort_values("run_at", kind="stable", ignore_index=True)
    # one record per series, hardware and run (the usual case): nothing to reduce, so the
    # rows are taken once in the order the reduction gives (a third of the time)
    row = np.empty(len(b), np.int64)
    row[number] = np.arange(len(b))  # group -> its row
    row = row[np.argsort(b["run_at"].to_numpy()[row], kind="stable")]
    out = b[keys + [c for c, _ in agg.values()]].take(row).reset_index(drop=True)
    out["value"] = out["value"].astype(float)  # as a mean gives it
    return out


def parity(values: pd.DataFrame, reference: Callable[[str, set[str]], str | None], *,
           runs: int = 7, level: float = 0.95) -> pd.DataFrame:
    """Per matched config and AMD hardware: the AMD/NVIDIA ratio of the last `runs` runs on
    each side with a Welch interval, and `perf_ratio`, the same oriented so that above 1 means
    AMD is better (inverted for lower-is-better metrics)."""
    cols = SERIES[:-1] + ["config", "amd_hardware", "nvidia_hardware", "amd_mean",
                          "nvidia_mean", "amd_runs", "nvidia_runs", "ratio", "ratio_lo",
                          "ratio_hi", "perf_ratio", "perf_lo", "perf_hi", "amd_last_run",
                          "nvidia_last_run", "match_key"] + CONFIG_COLUMNS
    if values.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    nvidia_hw: dict[str, set] = {}  # framework -> the NVIDIA hardware it ran on
    nv = (values["vendor"] == "nvidia").to_numpy(bool)
    for fw, hw in distinct(values["framework"][nv], values["hardware"][nv]):
        if not pd.isna(fw):
            nvidia_hw.setdefault(fw, set()).add(hw)
    v = values.sort_values("run_at", kind="stable").reset_index(drop=True)
    numbers, when = v["value"].to_numpy(dtype=float), v["run_at"].to_numpy()
    series: dict[tuple, dict[str, tuple[str, np.ndarray]]] = {}  # key -> hardware -> rows
    # each series and hardware's rows by `groups`, at about half a pandas grouping's cost
    number, keys = groups(*(v[c] for c in SERIES + ["vendor", "hardware"]))
    for key, at in sorted(zip(keys, members(number)), key=lambda kv: kv[1][0]):
        series.setdefault(key[:len(SERIES)], {})[key[-1]] = (key[-2], at)
    matched = []  # (series, AMD hardware, its reference, their rows)
    for key, sides in series.items():  # in order of first appearance, as the runs came
        present = nvidia_hw.get(key[0], set())
        for hw in sorted(h for h, (vendor, _) in sides.items() if vendor == "amd"):
            ref_hw = reference(hw, present)
            if ref_hw in sides:
                matched.append((key, hw, ref_hw, sides[hw][1], sides[ref_hw][1]))
    # the config columns of each match's latest AMD run, as plain values: the few rows
    # read, not every row converted (pandas row access costs more than the interval)
    last = np.array([a[-1] for *_, a, _ in matched], np.int64)
    config = {c: v[c].take(last).to_numpy(dtype=object) for c in CONFIG_COLUMNS}
    for i, (key, hw, ref_hw, a, b) in enumerate(matched):
        a_vals, b_vals = numbers[a][-runs:], numbers[b][-runs:]
        ratio, lo, hi = ratio_interval(a_vals, b_vals, level)
        first = {c: config[c][i] for c in CONFIG_COLUMNS}  # the latest AMD run's
        lower = first["direction"] == "lower"
        row = dict(zip(SERIES, key))
        row.update(config=config_label(first), amd_hardware=hw, nvidia_hardware=ref_hw,
                   amd_mean=float(np.exp(np.log(a_vals[a_vals > 0]).mean())),
                   nvidia_mean=float(np.exp(np.log(b_vals[b_vals > 0]).mean())),
                   amd_runs=len(a_vals), nvidia_runs=len(b_vals), ratio=ratio,
                   ratio_lo=lo, ratio_hi=hi,
                   perf_ratio=1 / ratio if lower else ratio,
                   perf_lo=1 / hi if lower else lo, perf_hi=1 / lo if lower else hi,
                   amd_last_run=when[a[-1]], nvidia_last_run=when[b[-1]])
        row.update(first)
        rows.append(row)
    out = pd.DataFrame(rows, columns=cols)
    return out.sort_values(["framework", "amd_hardware", "model", "metric", "config"]) \
        .reset_index(drop=True)


def summary(ratios: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Geometric mean of `perf_ratio` per framework × hardware pair × metric, across the
    matched configs, with a t-interval that treats configs as the replicates."""
    cols = ["framework", "amd_hardware", "nvidia_hardware", "metric", "configs", "geomean",
            "lo", "hi", "amd_better"]
    if ratios.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    for (fw, a, n, metric), g in ratios.groupby(
            ["framework", "amd_hardware", "nvidia_hardware", "metric"], sort=True):
        gm, lo, hi = geomean_interval(g["perf_ratio"], level)
        rows.append(dict(framework=fw, amd_hardware=a, nvidia_hardware=n, metric=metric,
                         configs=len(g), geomean=gm, lo=lo, hi=hi,
                         amd_better=int((g["perf_ratio"] > 1).sum())))
    return pd.DataFrame(rows, columns=cols)


THROUGHPUT = ("tput_per_gpu", "total_token_throughput", "total_throughput")
INTERACTIVITY = ("median_intvty", "interactivity")
TPOT = ("median_tpot_ms", "mean_tpot_ms", "median_itl_ms", "mean_itl_ms")


def _first_metric(wide: pd.DataFrame, names) -> tuple[pd.Series, str | None]:
    for name in names:
        if name in wide and wide[name].notna().any():
            return wide[name], name
    return pd.Series(np.nan, index=wide.index), None


def pareto(bench: pd.DataFrame) -> pd.DataFrame:
    """Throughput per GPU against interactivity (tok/s/user) for each record of the latest
    run per framework × hardware × model × precision × ISL/OSL, with `frontier` marking the
    points no other point of the same group beats on both axes."""
    cols = ["framework", "vendor", "hardware", "model", "precision", "isl", "osl",
            "concurrency", "throughput_per_gpu", "interactivity", "frontier", "run_at"]
    if bench.empty:
        return pd.DataFrame(columns=cols)
    group = ["framework", "vendor", "hardware", "model", "precision", "isl", "osl"]
    latest = bench.groupby(group, dropna=False)["run_at"].transform("max")
    b = bench[bench["run_at"] == latest]
    point = group + ["run_at", "artifact_pk", "record_no"]
    wide = b.pivot_table(index=point, columns="metric", values="value", aggfunc="mean")
    meta = b.groupby(point, dropna=False)[["concurrency", "tp", "dp", "gpu_count"]].first()
    wide = wide.join(meta).reset_index()
    tput, name = _first_metric(wide, THROUGHPUT)
    gpus = (wide["tp"].fillna(1) * wide["dp"].fillna(1)).where(wide["tp"].notna(),
                                                                 wide["gpu_count"])
    gpus = gpus.where(gpus > 0, 1)
    wide["throughput_per_gpu"] = tput if name == "tput_per_gpu" else tput / gpus
    inter, _ = _first_metric(wide, INTERACTIVITY)
    tpot, _ = _first_metric(wide, TPOT)
    wide["interactivity"] = inter.where(inter.notna(), 1000.0 / tpot)
    wide = wide.dropna(subset=["throughput_per_gpu", "interactivity"])
    frontier = pd.Series(False, index=wide.index)
    for _, g in wide.groupby(group, dropna=False):
        x, y = g["interactivity"].to_numpy(), g["throughput_per_gpu"].to_numpy()
        for i, idx in enumerate(g.index):
            beaten = (x >= x[i]) & (y >= y[i]) & ((x > x[i]) | (y > y[i]))
            frontier[idx] = not beaten.any()
    wide["frontier"] = frontier
    return wide[cols].sort_values(group + ["concurrency"]).reset_index(drop=True)
