"""Capability parity, pure: per framework × capability (or combination) × hardware, whether
any lane exercised it, whether an accuracy gate covered it, and how that gate went.

A *unit* is one job's one result config (or the job itself when it has no benchmark or
accuracy config): its capabilities are the job's tags (names, manifest) plus what its config
says. A combination counts only units that exercised all of its parts together, so two lanes
that each cover half of it leave the cell "not tested"."""
from __future__ import annotations

import json

import pandas as pd

from parity.db.capabilities import Capabilities

STATUSES = ("gated and passing", "gated and failing", "tested without accuracy gate",
            "not tested")
COLUMNS = ["framework", "capability", "parts", "vendor", "hardware", "status", "last_run",
           "url", "accuracy", "task", "stale"]


def units(jobs: pd.DataFrame, tags: pd.DataFrame, configs: pd.DataFrame,
          caps: Capabilities) -> pd.DataFrame:
    """One row per (job, config) with its capability set."""
    by_job = tags.groupby("job_pk")["name"].agg(frozenset).to_dict() if not tags.empty else {}
    rows = []
    seen_jobs = set()
    for r in configs.itertuples(index=False):
        try:
            cfg = json.loads(r.config) if isinstance(r.config, str) else {}
        except ValueError:
            cfg = {}
        found = frozenset(caps.from_config(cfg)) | by_job.get(r.job_pk, frozenset())
        rows.append((r.job_pk, r.kind, found, r.gated, r.gate_passed, r.value, r.task))
        seen_jobs.add(r.job_pk)
    for job_pk in jobs["job_pk"]:
        if job_pk not in seen_jobs:
            rows.append((job_pk, "tests", by_job.get(job_pk, frozenset()), 0, None, None, None))
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
    cells = []
    for combo in rows:
        need = frozenset(combo)
        hits = u[u["caps"].map(lambda s, need=need: need <= s)]
        for lane in lanes.itertuples(index=False):
            h = hits[(hits["framework"] == lane.framework) & (hits["hardware"] == lane.hardware)]
            cell = {"framework": lane.framework, "capability": " + ".join(combo),
                    "parts": len(combo), "vendor": lane.vendor, "hardware": lane.hardware}
            if h.empty:
                cells.append({**cell, "status": "not tested"})
                continue
            last = h["run_at"].max()
            latest = h[h["run_pk"] == h.loc[h["run_at"] == last, "run_pk"].iloc[0]]
            gated = latest[latest["gated"].fillna(0) > 0]
            if gated.empty:  # the latest run has no gate: was it ever gated? not for status
                status, acc, task = "tested without accuracy gate", None, None
            else:
                failing = (gated["gate_passed"] == False).any()  # noqa: E712
                status = "gated and failing" if failing else "gated and passing"
                worst = gated.sort_values("value").iloc[0]
                acc, task = worst["value"], worst["task"]
            url = next((x for x in latest["job_url"].tolist() + latest["run_url"].tolist() if x), "")
            cells.append({**cell, "status": status, "last_run": last, "url": url,
                          "accuracy": acc, "task": task,
                          "stale": bool((newest - last) > pd.Timedelta(days=stale_days))})
    out = pd.DataFrame(cells).reindex(columns=COLUMNS)
    out["stale"] = out["stale"].eq(True)  # no cell at all: a float column of NaN
    return out.sort_values(["framework", "parts", "capability", "vendor", "hardware"]) \
        .reset_index(drop=True)
