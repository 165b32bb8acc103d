"""Runner fleet, pure: runners online, offline and busy per vendor pool, and queue time
(job started minus created) percentiles per pool."""
from __future__ import annotations

import json

import pandas as pd

from parity.db.hardware import vocabulary

POOL = ["vendor", "hardware"]


def fleet(runners: pd.DataFrame, jobs: pd.DataFrame) -> pd.DataFrame:
    """One row per vendor pool (hardware): runner counts by state and queue percentiles
    in minutes over the jobs given."""
    cols = POOL + ["runners", "online", "busy", "idle", "offline", "jobs", "queue_p50_min",
                   "queue_p90_min", "queue_p99_min", "labels", "last_seen"]
    parts = []
    if not runners.empty:
        r = runners.assign(online=runners["status"] == "online",
                           offline=runners["status"] != "online",
                           busy=runners["busy"] & (runners["status"] == "online"))
        r["idle"] = r["online"] & ~r["busy"]
        parts.append(r.groupby(POOL).agg(runners=("runner_id", "count"),
                                          online=("online", "sum"), busy=("busy", "sum"),
                                          idle=("idle", "sum"), offline=("offline", "sum"),
                                          last_seen=("seen_at", "max")))
    if not jobs.empty:
        # queue time means something only for a job a runner picked up (not a local
        # ingest or an artifact the collector could tie to the run alone)
        on_runner = (jobs["runner_name"].fillna("") != "") | \
            ~jobs["runner_labels"].fillna("[]").isin(["", "[]"])
        j = jobs[on_runner].dropna(subset=["job_created", "job_started"])
        wait = (j["job_started"] - j["job_created"]).dt.total_seconds() / 60
        j = j.assign(wait=wait.clip(lower=0))
        q = j.groupby(POOL)["wait"]
        labels = jobs.groupby(POOL)["runner_labels"].agg(_labels)
        parts.append(pd.DataFrame({"jobs": q.size(), "queue_p50_min": q.quantile(0.5),
                                   "queue_p90_min": q.quantile(0.9),
                                   "queue_p99_min": q.quantile(0.99), "labels": labels}))
    if not parts:
        return pd.DataFrame(columns=cols)
    out = pd.concat(parts, axis=1).reset_index()
    for c in ("runners", "online", "busy", "idle", "offline", "jobs"):
        out[c] = out[c].fillna(0).astype(int) if c in out else 0
    for c in cols:
        if c not in out:
            out[c] = None
    return out[cols].sort_values(POOL).reset_index(drop=True)


def _labels(values: pd.Series) -> str:
    """The pool's runner labels, less the generic ones. Each distinct label text is decoded
    once: a pool's jobs repeat a few texts thousands of times over a window."""
    seen: set[str] = set()
    for text in set(values.dropna()):
        try:
            seen.update(json.loads(text))
        except ValueError:
            continue
    generic = vocabulary().generic  # the labels that say nothing about the hardware
    return ", ".join(sorted(label for label in seen if label.lower() not in generic))
