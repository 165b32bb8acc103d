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
    ran = jobs[jobs["total"] > 0]
    out: dict[tuple[str, str], set[str]] = {}
    # each distinct triple once (a window has thousands of jobs of a few hundred lanes)
    for fw, hw, suite in set(zip(*(ran[c].tolist() for c in ("framework", "hardware",
                                                              "suite")))):
        if not (pd.isna(fw) or pd.isna(hw)):
            out.setdefault((fw, hw), set()).add(suite)
    return out


def _groups(df: pd.DataFrame, keys: list[str]) -> dict[tuple, pd.DataFrame]:
    """`df`'s rows by their values of `keys` (in their order), grouped once: the headline
    looks each lane up in four frames, and a filter per lane cost more than the rest."""
    if df.empty:
        return {}
    return {k: g for k, g in df.groupby(keys, sort=False)}


def headline(parity_by_suite: pd.DataFrame, jobs: pd.DataFrame, perf: pd.DataFrame,
             acc: pd.DataFrame, found: pd.DataFrame) -> pd.DataFrame:
    """`parity_by_suite`: pass_rate_parity rows per suite; `jobs`: the window's jobs;
    `perf`: performance_summary; `acc`: accuracy_parity; `found`: regressions."""
    pairs = parity_by_suite[["framework", "amd_hardware", "nvidia_hardware"]].drop_duplicates()
    if not perf.empty:
        pairs = pd.concat([pairs, perf[["framework", "amd_hardware", "nvidia_hardware"]]])
    if not acc.empty:
        pairs = pd.concat([pairs, acc[["framework", "amd_hardware", "nvidia_hardware"]]])
    pairs = pairs.dropna().drop_duplicates()
    if pairs.empty:
        return pd.DataFrame(columns=COLUMNS)
    suites = _suites(jobs)
    keys = ["framework", "amd_hardware", "nvidia_hardware"]
    by_suite, by_perf, by_acc = (_groups(df, keys) for df in (parity_by_suite, perf, acc))
    # open findings are counted, not looked at: a count per (framework, hardware)
    by_found = Counter(zip(*(found.loc[found["status"].isin(OPEN), c].tolist()
                             for c in ("framework", "hardware")))) if not found.empty else {}
    rows = []
    for fw, amd, ref in pairs.itertuples(index=False):
        row: dict = {"framework": fw, "amd_hardware": amd, "nvidia_hardware": ref}
        reference = suites.get((fw, ref), set())
        tested = suites.get((fw, amd), set()) & reference
        row.update(suites_tested=len(tested), suites_reference=len(reference),
                   coverage=len(tested) / len(reference) if reference else None)
        notes = [] if reference else [f"coverage: {ref} ran no tests in the window"]
        p = by_suite.get((fw, amd, ref), parity_by_suite.iloc[0:0])
        den = p["denominator"].sum()
        if den > 0:
            passed = p["amd_passed"].sum()
            lo, hi = wilson(passed, den)
            row.update(same_denominator_rate=passed / den, rate_lo=lo, rate_hi=hi,
                       nvidia_rate=p["nvidia_passed"].sum() / den)
        elif not suites.get((fw, amd)):
            notes.append(f"pass rate: {amd} ran no tests in the window")
        elif p.empty or p["alignment"].eq("none").all():
            notes.append(f"pass rate: no {ref} run aligned with the AMD run")
        else:
            notes.append(f"pass rate: the aligned {ref} run ran no tests")
        if not p.empty:
            last = p.sort_values("amd_run_at").iloc[-1]
            row.update(run_at=last["amd_run_at"], commit=last.get("amd_commit"),
                       run_url=last.get("amd_url"))
        q = by_perf.get((fw, amd, ref), perf.iloc[0:0])
        if not q.empty:
            ranked = q.assign(_r=q["metric"].map({m: i for i, m in enumerate(PERF_METRICS)})
                              .fillna(len(PERF_METRICS))).sort_values(["_r", "metric"])
            best = ranked.iloc[0]
            row.update(perf_metric=best["metric"], perf_ratio=best["geomean"], perf_lo=best["lo"],
                       perf_hi=best["hi"])
        else:
            notes.append(f"performance: no benchmark config run on both {amd} and {ref}")
        a = by_acc.get((fw, amd, ref), acc.iloc[0:0])
        if not a.empty:
            diffs = a["diff"].dropna()
            row.update(accuracy_diff=diffs.mean() if len(diffs) else None,
                       accuracy_cells=int(len(diffs)), cliffs=int(a["cliff"].fillna(False).sum()))
        if a.empty or row.get("accuracy_diff") is None:
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
