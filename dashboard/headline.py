"""The headline: one row per framework × AMD hardware against its NVIDIA reference, with the
figures a reader looks at first. Pure: it combines the other views' frames.

- coverage: of the suites the NVIDIA reference ran tests in, the share the AMD lane ran
  tests in too (a lane that builds but runs nothing covers 0);
- the same-denominator pass rate, its interval, and the NVIDIA rate beside it;
- the performance ratio: geometric mean of AMD/NVIDIA on the throughput metric at matched
  configs (>1 means AMD is ahead), with its interval;
- the accuracy difference: mean AMD − NVIDIA score over matched cells, and the cliffs;
- open findings: regressions, cliffs, drops and new failures on the AMD hardware;
- notes: why a figure is missing (no aligned reference run, no matched config, …), so an
  empty cell is never mistaken for a zero."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from parity.dashboard.intervals import wilson

COLUMNS = ["framework", "amd_hardware", "nvidia_hardware", "suites_tested", "suites_reference",
           "coverage", "same_denominator_rate", "rate_lo", "rate_hi", "nvidia_rate",
           "perf_metric", "perf_ratio", "perf_lo", "perf_hi", "accuracy_diff", "accuracy_cells",
           "cliffs", "open_findings", "verdict_nights", "complete_nights",
           "verdict_completeness", "run_at", "commit", "run_url", "notes"]
PERF_METRICS = ("output_throughput", "total_token_throughput", "request_throughput")
OPEN = ("regression", "cliff", "drop", "new failure")


def _suites(jobs: pd.DataFrame) -> dict[tuple[str, str], set[str]]:
    ran = (jobs["total"].to_numpy() > 0).tolist()
    out: dict[tuple[str, str], set[str]] = {}
    # each distinct triple once (a window has thousands of jobs of a few hundred lanes)
    for fw, hw, suite, any_test in set(zip(*(jobs[c].tolist() for c in (
            "framework", "hardware", "suite")), ran)):
        if any_test and not (pd.isna(fw) or pd.isna(hw)):
            out.setdefault((fw, hw), set()).add(suite)
    return out


def _lanes(df: pd.DataFrame, keys: list[str]) -> dict[tuple, list[int]]:
    """`df`'s row positions by their values of `keys` (none missing), in order of first
    appearance: the headline looks each lane up in three frames of a few dozen rows, where
    a pandas call per lane, or a pandas grouping, cost more than the rest."""
    out: dict[tuple, list[int]] = {}
    if df.empty:
        return out
    for i, key in enumerate(zip(*(df[c].tolist() for c in keys))):
        if not any(pd.isna(k) for k in key):
            out.setdefault(key, []).append(i)
    return out


def headline(parity_by_suite: pd.DataFrame, jobs: pd.DataFrame, perf: pd.DataFrame,
             acc: pd.DataFrame, found: pd.DataFrame) -> pd.DataFrame:
    """`parity_by_suite`: pass_rate_parity rows per suite; `jobs`: the window's jobs;
    `perf`: performance_summary; `acc`: accuracy_parity; `found`: regressions."""
    keys = ["framework", "amd_hardware", "nvidia_hardware"]
    parity_by_suite = parity_by_suite.reset_index(drop=True)
    by_suite, by_perf, by_acc = (_lanes(df, keys) for df in (parity_by_suite, perf, acc))
    # every lane any of the three has, in order of first appearance
    pairs = list(dict.fromkeys([*by_suite, *by_perf, *by_acc]))
    if not pairs:
        return pd.DataFrame(columns=COLUMNS)
    suites = _suites(jobs)
    # each column once as plain values, read by position per lane
    p = {c: parity_by_suite[c].to_numpy() for c in ("denominator", "amd_passed",
                                                     "nvidia_passed")}
    alignment = parity_by_suite["alignment"].tolist()
    run = {c: parity_by_suite[c].tolist() if c in parity_by_suite else [None] * len(alignment)
           for c in ("amd_run_at", "amd_commit", "amd_url")}
    # a lane's run is its last suite's by the AMD run's time (no time last), as a stable sort
    when = np.empty(len(alignment), np.int64)
    when[parity_by_suite["amd_run_at"].sort_values(kind="stable").index.to_numpy()] = \
        np.arange(len(alignment))
    if not perf.empty:
        metric = perf["metric"].tolist()
        rank = {m: i for i, m in enumerate(PERF_METRICS)}
        q = {c: perf[c].tolist() for c in ("geomean", "lo", "hi")}
    if not acc.empty:
        diff = acc["diff"].to_numpy(dtype=float)
        cliff = acc["cliff"].fillna(False).to_numpy(dtype=bool)
    # open findings are counted, not looked at: a count per (framework, hardware)
    by_found = Counter(zip(*(found.loc[found["status"].isin(OPEN), c].tolist()
                             for c in ("framework", "hardware")))) if not found.empty else {}
    rows = []
    for fw, amd, ref in pairs:
        row: dict = {"framework": fw, "amd_hardware": amd, "nvidia_hardware": ref}
        reference = suites.get((fw, ref), set())
        tested = suites.get((fw, amd), set()) & reference
        row.update(suites_tested=len(tested), suites_reference=len(reference),
                   coverage=len(tested) / len(reference) if reference else None)
        notes = [] if reference else [f"coverage: {ref} ran no tests in the window"]
        at = by_suite.get((fw, amd, ref), [])
        den = p["denominator"][at].sum()
        if den > 0:
            passed = p["amd_passed"][at].sum()
            lo, hi = wilson(passed, den)
            row.update(same_denominator_rate=passed / den, rate_lo=lo, rate_hi=hi,
                       nvidia_rate=p["nvidia_passed"][at].sum() / den)
        elif not suites.get((fw, amd)):
            notes.append(f"pass rate: {amd} ran no tests in the window")
        elif all(alignment[i] == "none" for i in at):
            notes.append(f"pass rate: no {ref} run aligned with the AMD run")
        else:
            notes.append(f"pass rate: the aligned {ref} run ran no tests")
        if len(at):
            last = int(at[np.argmax(when[at])])
            row.update(run_at=run["amd_run_at"][last], commit=run["amd_commit"][last],
                       run_url=run["amd_url"][last])
        at = by_perf.get((fw, amd, ref), [])
        if len(at):
            best = min(at, key=lambda i: (rank.get(metric[i], len(PERF_METRICS)), metric[i]))
            row.update(perf_metric=metric[best], perf_ratio=q["geomean"][best],
                       perf_lo=q["lo"][best], perf_hi=q["hi"][best])
        else:
            notes.append(f"performance: no benchmark config run on both {amd} and {ref}")
        at = by_acc.get((fw, amd, ref), [])
        if len(at):
            diffs = diff[at][~np.isnan(diff[at])]
            row.update(accuracy_diff=diffs.mean() if len(diffs) else None,
                       accuracy_cells=int(len(diffs)), cliffs=int(cliff[at].sum()))
        if not len(at) or row.get("accuracy_diff") is None:
            notes.append(f"accuracy: no accuracy cell scored on both {amd} and {ref}")
        row["open_findings"] = int(by_found.get((fw, amd), 0))
        row["notes"] = "; ".join(notes)
        rows.append(row)
    out = pd.DataFrame(rows).reindex(columns=COLUMNS)
    for c in ("suites_tested", "suites_reference", "open_findings"):
        out[c] = out[c].fillna(0).astype(int)
    for c in ("accuracy_cells", "cliffs"):
        out[c] = out[c].fillna(0).astype(int)
    return out.sort_values(["framework", "amd_hardware"]).reset_index(drop=True)
