"""Skip and coverage parity, pure: vendor-gated skip reasons, and the lanes, suites and configs
that one vendor runs and the other does not (or that build but run nothing, have no accuracy
gate, or went stale)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from parity.dashboard.performance import config_label
from parity.db.models import VENDOR_GATED


def skip_parity(latest_tests: pd.DataFrame, matrix: pd.DataFrame) -> pd.DataFrame:
    """Skips per framework × vendor × hardware × reason category in each lane's latest run,
    with how many of them ran on the other vendor's reference (AMD-only skips)."""
    cols = ["framework", "vendor", "hardware", "skip_category", "vendor_gated", "skips",
            "ran_on_reference"]
    if latest_tests.empty:
        return pd.DataFrame(columns=cols)
    s = latest_tests[latest_tests["outcome"] == "skipped"].copy()
    s["skip_category"] = s["skip_category"].fillna("other")
    counts = s.groupby(["framework", "vendor", "hardware", "skip_category"],
                       as_index=False).size().rename(columns={"size": "skips"})
    only = matrix[matrix["quadrant"] == "amd-only skip"].copy() if not matrix.empty else matrix
    if only is not None and not only.empty:
        only["skip_category"] = only["amd_skip_category"].fillna("other")
        amd_only = only.groupby(["framework", "amd_hardware", "skip_category"]).size() \
            .rename("ran_on_reference").reset_index().rename(columns={"amd_hardware": "hardware"})
        counts = counts.merge(amd_only, on=["framework", "hardware", "skip_category"], how="left")
    else:
        counts["ran_on_reference"] = 0
    counts["ran_on_reference"] = counts["ran_on_reference"].fillna(0).astype(int)
    counts["vendor_gated"] = counts["skip_category"].isin(list(VENDOR_GATED))
    return counts[cols].sort_values(["framework", "vendor", "hardware", "skips"],
                                    ascending=[True, True, True, False]).reset_index(drop=True)


def coverage(jobs: pd.DataFrame, bench_values: pd.DataFrame, acc: pd.DataFrame, *,
             stale_days: float = 7.0) -> pd.DataFrame:
    """Coverage gaps, one finding per row: `no AMD lane` (a suite NVIDIA runs with tests and
    no AMD hardware does), `config without AMD run` (a benchmark config only NVIDIA runs),
    `builds but runs no tests`, `no accuracy gate`, and `stale` (a lane whose last run is
    more than `stale_days` older than its framework's newest run)."""
    cols = ["framework", "finding", "suite", "hardware", "detail", "last_run"]
    rows: list[dict] = []
    if jobs.empty:
        return pd.DataFrame(columns=cols)
    ran = jobs[jobs["total"] > 0]
    for fw, j in jobs.groupby("framework"):
        r = ran[ran["framework"] == fw]
        newest = j["run_at"].max()
        nv_suites = r[r["vendor"] == "nvidia"].groupby("suite")
        amd_suites = set(r.loc[r["vendor"] == "amd", "suite"])
        for suite, g in nv_suites:
            if suite not in amd_suites:
                rows.append(dict(framework=fw, finding="no AMD lane", suite=suite, hardware="",
                                 detail="runs on " + ", ".join(sorted(set(g["hardware"]))),
                                 last_run=g["run_at"].max()))
        # (distinct values first: a window has tens of thousands of benchmark rows)
        has_bench = set(bench_values.loc[bench_values["framework"] == fw, "hardware"].unique()) \
            if not bench_values.empty else set()
        has_acc = set(acc.loc[acc["framework"] == fw, "hardware"].unique()) \
            if not acc.empty else set()
        for hw, g in j[j["vendor"] == "amd"].groupby("hardware"):
            tests = int(g["total"].sum())
            executed = int((g["passed"] + g["failed"] + g["error"] + g["xfailed"]
                            + g["xpassed"]).sum())
            if executed == 0 and hw not in has_bench and hw not in has_acc:
                what = f"{tests} tests, all skipped" if tests else "0 tests"
                rows.append(dict(framework=fw, finding="builds but runs no tests", suite="",
                                 hardware=hw, detail=f"{len(g)} jobs, {what}, no benchmark "
                                 "or accuracy result", last_run=g["run_at"].max()))
            if has_acc and hw not in has_acc:
                rows.append(dict(framework=fw, finding="no accuracy gate", suite="", hardware=hw,
                                 detail="accuracy runs on " + ", ".join(sorted(has_acc)),
                                 last_run=g["run_at"].max()))
        # each lane's last run, as one aggregate (in the groups' order, as iterating them)
        last_runs = j.groupby(["suite", "hardware"])["run_at"].max()
        for (suite, hw), last in zip(last_runs.index.tolist(), last_runs.tolist()):
            if newest - last > pd.Timedelta(days=stale_days):
                rows.append(dict(framework=fw, finding="stale", suite=suite, hardware=hw,
                                 detail=f"last run {(newest - last).days} days before the "
                                 "newest", last_run=last))
    if not bench_values.empty:
        rows += _configs_without_amd(bench_values)
    out = pd.DataFrame(rows, columns=cols).drop_duplicates(
        subset=["framework", "finding", "suite", "hardware", "detail"])
    return out.sort_values(["framework", "finding", "suite", "hardware"]).reset_index(drop=True)


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
