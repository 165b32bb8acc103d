"""Capability parity, pure: per framework × capability (or combination) × hardware, whether
any lane exercised it, whether an accuracy gate covered it, and how that gate went.

A *unit* is one job's one result config (or the job itself when it has no benchmark or
accuracy config): its capabilities are the job's tags (names, manifest) plus what its config
says. A combination counts only units that exercised all of its parts together, so two lanes
that each cover half of it leave the cell "not tested"."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from parity.db.capabilities import Capabilities

STATUSES = ("gated and passing", "gated and failing", "tested without accuracy gate",
            "not tested")
COLUMNS = ["framework", "capability", "parts", "vendor", "hardware", "status", "last_run",
           "url", "accuracy", "task", "stale"]


def units(jobs: pd.DataFrame, tags: pd.DataFrame, configs: pd.DataFrame,
          caps: Capabilities) -> pd.DataFrame:
    """One row per (job, config) with its capability set."""
    # (thousands of jobs and configs in a window: plain lists, not a pandas grouping that
    # makes a set per group or a tuple per row)
    named: dict = {}
    for job_pk, name in zip(tags["job_pk"].tolist(), tags["name"].tolist()):
        named.setdefault(job_pk, set()).add(name)
    by_job = {job_pk: frozenset(names) for job_pk, names in named.items()}
    none = frozenset()
    rows = []
    seen_jobs = set()
    said: dict = {}  # config text -> its capabilities: a window repeats a few configs
    columns = ("job_pk", "kind", "config", "gated", "gate_passed", "value", "task")
    for job_pk, kind, config, gated, gate_passed, value, task in zip(
            *(configs[c].tolist() for c in columns)):
        text = config if isinstance(config, str) else None
        if text not in said:
            try:
                cfg = json.loads(text) if text is not None else {}
            except ValueError:
                cfg = {}
            said[text] = frozenset(caps.from_config(cfg))
        rows.append((job_pk, kind, said[text] | by_job.get(job_pk, none), gated, gate_passed,
                     value, task))
        seen_jobs.add(job_pk)
    for job_pk in jobs["job_pk"].tolist():
        if job_pk not in seen_jobs:
            rows.append((job_pk, "tests", by_job.get(job_pk, none), 0, None, None, None))
    out = pd.DataFrame(rows, columns=["job_pk", "kind", "caps", "gated", "gate_passed", "value",
                                      "task"])
    meta = jobs[["job_pk", "framework", "vendor", "hardware", "run_at", "run_pk", "job_url",
                 "run_url"]]
    return out.merge(meta, on="job_pk")


def matrix(u: pd.DataFrame, rows: list[tuple[str, ...]], *, stale_days: float = 14,
           newest=None) -> pd.DataFrame:
    """The cells for every capability set in `rows`, per framework and hardware seen."""
    if u.empty:
        return pd.DataFrame(columns=COLUMNS)
    newest = newest if newest is not None else u["run_at"].max()
    lanes = u[["framework", "vendor", "hardware"]].drop_duplicates()
    # thousands of units share a few capability sets and lanes: each set is tested once per
    # combination, and each lane's units are found by position, not by comparing texts
    which, sets = pd.factorize(u["caps"])
    lane_of = u.groupby(["framework", "hardware"], sort=False).indices  # (missing: no lane)
    empty = np.empty(0, np.int64)
    run_at, run_pk = u["run_at"].to_numpy(), u["run_pk"].to_numpy()
    gated = (u["gated"].fillna(0) > 0).to_numpy()
    failed = (u["gate_passed"] == False).to_numpy()  # noqa: E712 (a missing gate is no fail)
    urls = (u["job_url"].tolist(), u["run_url"].tolist())
    # each cell's latest run and worst gate from plain arrays (a pandas cut per cell cost
    # more than the rest of the cell)
    values, tasks = u["value"].to_numpy(dtype=object), u["task"].to_numpy(dtype=object)
    scores = pd.to_numeric(u["value"]).to_numpy(dtype=float)
    cells = []
    for combo in rows:
        need = frozenset(combo)
        hit = np.array([need <= s for s in sets], bool)[which]
        for lane in lanes.itertuples(index=False):
            at = lane_of.get((lane.framework, lane.hardware), empty)
            h = at[hit[at]]  # the lane's units that exercised the whole combination
            cell = {"framework": lane.framework, "capability": " + ".join(combo),
                    "parts": len(combo), "vendor": lane.vendor, "hardware": lane.hardware}
            if not len(h):
                cells.append({**cell, "status": "not tested"})
                continue
            times = run_at[h]
            times = times[~np.isnat(times)]  # as pandas' max, a missing time left out
            last = pd.Timestamp(times.max()) if len(times) else pd.NaT
            # the units of the run that ran last (the first such unit's run)
            latest = h[run_pk[h] == run_pk[h[run_at[h] == last.to_datetime64()][0]]]
            gate = latest[gated[latest]]
            if not len(gate):  # the latest run has no gate: was it ever gated? not for status
                status, acc, task = "tested without accuracy gate", None, None
            else:
                status = "gated and failing" if failed[gate].any() else "gated and passing"
                worst = gate[np.argsort(scores[gate], kind="stable")[0]]  # a missing one last
                acc, task = values[worst], tasks[worst]
            url = next((x for x in [urls[0][i] for i in latest] + [urls[1][i] for i in latest]
                        if x), "")
            cells.append({**cell, "status": status, "last_run": last, "url": url,
                          "accuracy": acc, "task": task,
                          "stale": bool((newest - last) > pd.Timedelta(days=stale_days))})
    out = pd.DataFrame(cells).reindex(columns=COLUMNS)
    out["stale"] = out["stale"].eq(True)  # no cell at all: a float column of NaN
    return out.sort_values(["framework", "parts", "capability", "vendor", "hardware"]) \
        .reset_index(drop=True)
