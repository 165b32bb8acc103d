"""Skip and coverage parity, pure: vendor-gated skip reasons, and the lanes, suites and configs
that one vendor runs and the other does not (or that build but run nothing, have no accuracy
gate, or went stale)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from parity.dashboard.groups import distinct, groups
from parity.dashboard.performance import config_label
from parity.db.models import VENDOR_GATED


def skip_parity(skips: pd.DataFrame, amd_only: pd.DataFrame) -> pd.DataFrame:
    """Skips per framework × vendor × hardware × reason category in each lane's latest run,
    with how many of them ran on the other vendor's reference (AMD-only skips), from counts:
    each lane's skips per reason (framework, vendor, hardware, skip_category, skips; a lane
    per suite) and each aligned pair's AMD-only skips per reason (framework, hardware,
    skip_category, ran_on_reference). A missing reason is "other"."""
    cols = ["framework", "vendor", "hardware", "skip_category", "vendor_gated", "skips",
            "ran_on_reference"]
    if skips.empty:
        return pd.DataFrame(columns=cols)

    def summed(df: pd.DataFrame, keys: list[str], count: str) -> pd.DataFrame:
        df = df.assign(skip_category=df["skip_category"].fillna("other"))
        return df.groupby(keys + ["skip_category"], as_index=False)[count].sum()

    counts = summed(skips, ["framework", "vendor", "hardware"], "skips")
    if not amd_only.empty:
        counts = counts.merge(summed(amd_only, ["framework", "hardware"], "ran_on_reference"),
                              on=["framework", "hardware", "skip_category"], how="left")
    else:
        counts["ran_on_reference"] = 0
    counts["ran_on_reference"] = counts["ran_on_reference"].fillna(0).astype(int)
    counts["vendor_gated"] = counts["skip_category"].isin(list(VENDOR_GATED))
    return counts[cols].sort_values(["framework", "vendor", "hardware", "skips"],
                                    ascending=[True, True, True, False]).reset_index(drop=True)


def coverage(jobs: pd.DataFrame, bench_values: pd.DataFrame, acc: pd.DataFrame, *,
             stale_days: float = 7.0, configs: bool = True) -> pd.DataFrame:
    """Coverage gaps, one finding per row: `no AMD lane` (a suite NVIDIA runs with tests and
    no AMD hardware does), `config without AMD run` (a benchmark config only NVIDIA runs;
    not looked for without `configs`), `builds but runs no tests`, `no accuracy gate`, and
    `stale` (a lane whose last run is more than `stale_days` older than its framework's
    newest run). Of `bench_values` only AMD hardware's rows count, but for the configs."""
    cols = ["framework", "finding", "suite", "hardware", "detail", "last_run"]
    rows: list[dict] = []
    if jobs.empty:
        return pd.DataFrame(columns=cols)
    lanes = _lanes(jobs)
    # (distinct values first: a window has tens of thousands of benchmark rows)
    has_bench, has_acc = (_hardware_of(df) for df in (bench_values, acc))
    for fw in sorted({k[0] for k in lanes if not pd.isna(k[0])}):
        mine = {k[1:]: v for k, v in lanes.items() if k[0] == fw}
        newest = _latest(v["last"] for v in mine.values())
        ran = {(vendor, suite): v for (vendor, suite, hw), v in mine.items() if v["ran"]}
        amd_suites = {suite for vendor, suite in ran if vendor == "amd"}
        for suite in sorted({s for v, s in ran if v == "nvidia" and not pd.isna(s)}):
            if suite not in amd_suites:
                nv = [(hw, v) for (vendor, s, hw), v in mine.items()
                      if vendor == "nvidia" and s == suite and v["ran"]]
                rows.append(dict(framework=fw, finding="no AMD lane", suite=suite, hardware="",
                                 detail="runs on " + ", ".join(sorted({hw for hw, _ in nv})),
                                 last_run=_latest(v["last_ran"] for _, v in nv)))
        bench, gated = has_bench.get(fw, set()), has_acc.get(fw, set())
        for hw in sorted({hw for (vendor, _, hw) in mine if vendor == "amd"
                          and not pd.isna(hw)}):
            g = [v for (vendor, _, h), v in mine.items() if vendor == "amd" and h == hw]
            last = _latest(v["last"] for v in g)
            if sum(v["executed"] for v in g) == 0 and hw not in bench and hw not in gated:
                tests = sum(v["tests"] for v in g)
                what = f"{tests} tests, all skipped" if tests else "0 tests"
                rows.append(dict(framework=fw, finding="builds but runs no tests", suite="",
                                 hardware=hw, detail=f"{sum(v['jobs'] for v in g)} jobs, "
                                 f"{what}, no benchmark or accuracy result", last_run=last))
            if gated and hw not in gated:
                rows.append(dict(framework=fw, finding="no accuracy gate", suite="", hardware=hw,
                                 detail="accuracy runs on " + ", ".join(sorted(gated)),
                                 last_run=last))
        # each lane's last run, over both vendors' jobs of its suite and hardware
        by_lane: dict[tuple, list] = {}
        for (vendor, suite, hw), v in mine.items():
            if not (pd.isna(suite) or pd.isna(hw)):
                by_lane.setdefault((suite, hw), []).append(v["last"])
        for (suite, hw), times in sorted(by_lane.items()):
            last = _latest(times)
            if newest - last > pd.Timedelta(days=stale_days):
                rows.append(dict(framework=fw, finding="stale", suite=suite, hardware=hw,
                                 detail=f"last run {(newest - last).days} days before the "
                                 "newest", last_run=last))
    if configs and not bench_values.empty:
        rows += _configs_without_amd(bench_values)
    out = pd.DataFrame(rows, columns=cols).drop_duplicates(
        subset=["framework", "finding", "suite", "hardware", "detail"])
    return out.sort_values(["framework", "finding", "suite", "hardware"]).reset_index(drop=True)


def _lanes(jobs: pd.DataFrame) -> dict[tuple, dict]:
    """(framework, vendor, suite, hardware) -> its jobs' figures, from the window's jobs
    (thousands at real volume, a few hundred lanes), summed per key with NumPy (a pandas
    aggregate of six columns cost as much as the rest of the view): `jobs`, `tests` (their
    total), `executed` (passed, failed, errors, xfailed, xpassed), `ran` (jobs with tests),
    `last` (latest run) and `last_ran` (latest run with tests). A suite or hardware that is
    missing is a key of its own (NaN)."""
    group, keys = groups(*(jobs[c] for c in ("framework", "vendor", "suite", "hardware")))
    n = len(keys)
    executed = jobs[["passed", "failed", "error", "xfailed", "xpassed"]].to_numpy(
        np.int64).sum(axis=1)
    total = jobs["total"].to_numpy(np.int64)
    times = pd.to_datetime(jobs["run_at"]).to_numpy()  # in the jobs' own unit
    at = times.view(np.int64)  # NaT: the smallest
    last, last_ran = np.full(n, np.iinfo(np.int64).min), np.full(n, np.iinfo(np.int64).min)
    np.maximum.at(last, group, at)
    np.maximum.at(last_ran, group[total > 0], at[total > 0])
    figures = zip(np.bincount(group, minlength=n).tolist(),
                  np.bincount(group, weights=total, minlength=n).astype(np.int64).tolist(),
                  np.bincount(group, weights=executed, minlength=n).astype(np.int64).tolist(),
                  np.bincount(group, weights=total > 0, minlength=n).astype(np.int64).tolist(),
                  pd.to_datetime(last.view(times.dtype)),
                  pd.to_datetime(last_ran.view(times.dtype)))
    names = ("jobs", "tests", "executed", "ran", "last", "last_ran")
    return {k: dict(zip(names, v)) for k, v in zip(keys, figures)}


def _latest(times) -> pd.Timestamp:
    """The latest of these run times, missing ones left out (NaT when none is known)."""
    known = [t for t in times if not pd.isna(t)]
    return max(known) if known else pd.NaT


def _hardware_of(df: pd.DataFrame) -> dict[str, set]:
    """framework -> the hardware with rows in `df` (benchmark or accuracy rows)."""
    out: dict[str, set] = {}
    if df.empty:
        return out
    for fw, hw in distinct(df["framework"], df["hardware"]):
        out.setdefault(fw, set()).add(hw)
    return out


def _configs_without_amd(b: pd.DataFrame) -> list[dict]:
    """`config without AMD run` rows: per (framework, benchmark, model, match key) that NVIDIA
    ran and AMD did not, in the groups' order, labelled from the group's last row. Which
    vendors ran a group is counted over group numbers, not by iterating a few hundred groups
    of tens of thousands of rows."""
    g = b.groupby(["framework", "benchmark", "model", "match_key"], dropna=False)
    code = g.ngroup().to_numpy()
    groups = int(code.max()) + 1 if len(code) else 0
    vendor = b["vendor"].to_numpy(dtype=object)
    nvidia = np.bincount(code, weights=vendor == "nvidia", minlength=groups) > 0
    amd = np.bincount(code, weights=vendor == "amd", minlength=groups) > 0
    last_row = np.full(groups, -1, np.int64)
    np.maximum.at(last_row, code, np.arange(len(code)))
    last_run = g["run_at"].max().tolist()
    keys = g.size().index.tolist()
    rows = []
    for i in np.flatnonzero(nvidia & ~amd).tolist():
        fw, bench, model, _ = keys[i]
        rows.append(dict(framework=fw, finding="config without AMD run", suite=bench,
                         hardware="", detail=f"{model} {config_label(b.iloc[last_row[i]])}"
                         .strip(), last_run=last_run[i]))
    return rows
