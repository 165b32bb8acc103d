"""Runner fleet, pure: runners online, offline and busy per vendor pool, and queue time
(job started minus created) percentiles per pool."""
from __future__ import annotations

import json

import pandas as pd

from parity.dashboard.groups import distinct
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
        g = r.groupby(POOL)  # one sum of the four states, not an aggregate per column
        pools = g[["online", "busy", "idle", "offline"]].sum()
        pools.insert(0, "runners", g["runner_id"].count())
        pools["last_seen"] = g["seen_at"].max()
        parts.append(pools)
    if not jobs.empty:
        # queue time means something only for a job a runner picked up (not a local
        # ingest or an artifact the collector could tie to the run alone)
        on_runner = (jobs["runner_name"].fillna("") != "") | \
            ~jobs["runner_labels"].fillna("[]").isin(["", "[]"])
        j = jobs[on_runner].dropna(subset=["job_created", "job_started"])
        wait = (j["job_started"] - j["job_created"]).dt.total_seconds() / 60
        j = j.assign(wait=wait.clip(lower=0))
        q = j.groupby(POOL)["wait"]
        labels = _pool_labels(jobs)
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


def _pool_labels(jobs: pd.DataFrame) -> pd.Series:
    """Each pool's runner labels (`_labels`), from the distinct (pool, label text) pairs of
    its jobs: a pool's jobs repeat a few texts thousands of times over a window."""
    texts: dict[tuple, list] = {}
    for vendor, hardware, text in distinct(*(jobs[c] for c in POOL + ["runner_labels"])):
        if not (pd.isna(vendor) or pd.isna(hardware)):
            texts.setdefault((vendor, hardware), []).append(text)
    index = pd.MultiIndex.from_tuples(sorted(texts), names=POOL)
    return pd.Series([_labels(texts[k]) for k in index], index=index, dtype="str")


def _labels(texts) -> str:
    """The pool's runner labels, less the generic ones, from its jobs' label texts (JSON
    lists; a missing or broken one is left out)."""
    seen: set[str] = set()
    for text in {t for t in texts if isinstance(t, str)}:
        try:
            seen.update(json.loads(text))
        except ValueError:
            continue
    generic = vocabulary().generic  # the labels that say nothing about the hardware
    return ", ".join(sorted(label for label in seen if label.lower() not in generic))
