"""Runner fleet, pure: runners online, offline and busy per vendor pool, and queue time
(job started minus created) percentiles per pool."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from parity.dashboard.groups import distinct, groups, members
from parity.db.hardware import vocabulary

POOL = ["vendor", "hardware"]
STATES = ("online", "busy", "idle", "offline")
QUANTILES = {"queue_p50_min": 0.5, "queue_p90_min": 0.9, "queue_p99_min": 0.99}


def fleet(runners: pd.DataFrame, jobs: pd.DataFrame) -> pd.DataFrame:
    """One row per vendor pool (hardware): runner counts by state and queue percentiles
    in minutes over the jobs given. A pool is a (vendor, hardware) pair; rows missing
    either belong to none. Counted by pool numbers over the columns' arrays: a window's
    few pools and thousands of jobs cost a pandas grouping per figure otherwise
    (the 50M store's 67 runners and 3,355 jobs: 15.7 -> 7.3 ms)."""
    cols = POOL + ["runners", *STATES, "jobs", *QUANTILES, "labels", "last_seen"]
    if runners.empty and jobs.empty:
        return pd.DataFrame(columns=cols)
    rows: dict[tuple, dict] = {}
    if not runners.empty:
        online = (runners["status"] == "online").to_numpy(bool)
        busy = (runners["busy"] & (runners["status"] == "online")).to_numpy(bool)
        state = {"online": online, "busy": busy, "idle": online & ~busy, "offline": ~online}
        named = runners["runner_id"].notna().to_numpy()
        seen = runners["seen_at"].to_numpy()
        for _, key, at in _pools(runners)[1]:
            row = rows.setdefault(key, {})
            row.update({s: int(v[at].sum()) for s, v in state.items()})
            row["runners"] = int(named[at].sum())
            times = seen[at][~pd.isna(seen[at])]
            row["last_seen"] = times.max() if len(times) else None
    if not jobs.empty:
        # queue time means something only for a job a runner picked up (not a local
        # ingest or an artifact the collector could tie to the run alone)
        on_runner = (jobs["runner_name"].fillna("") != "") | \
            ~jobs["runner_labels"].fillna("[]").isin(["", "[]"])
        j = jobs[on_runner].dropna(subset=["job_created", "job_started"])
        wait = ((j["job_started"] - j["job_created"]).dt.total_seconds() / 60).clip(lower=0)
        number, pools = _pools(j)
        # pandas' grouped quantiles, as ever (NumPy's differ from them in the last bit at
        # times), of all groups at once: a row per group number
        q = pd.Series(wait.to_numpy(float)).groupby(number).quantile(list(QUANTILES.values()))
        q = q.to_numpy().reshape(-1, len(QUANTILES))
        for i, key, at in pools:
            rows.setdefault(key, {}).update(jobs=len(at), **dict(zip(QUANTILES, q[i].tolist())))
        for key, text in _pool_labels(jobs).items():
            rows.setdefault(key, {})["labels"] = text
    keys = sorted(rows)
    out = {"vendor": pd.array([k[0] for k in keys], dtype="str"),
           "hardware": pd.array([k[1] for k in keys], dtype="str")}
    for c in ("runners", *STATES, "jobs"):
        out[c] = np.array([rows[k].get(c, 0) for k in keys], np.int64)
    for c in QUANTILES:
        out[c] = (np.array([rows[k].get(c, np.nan) for k in keys], float)
                  if not jobs.empty else [None] * len(keys))
    out["labels"] = (pd.array([rows[k].get("labels") for k in keys], dtype="str")
                     if not jobs.empty else [None] * len(keys))
    out["last_seen"] = (pd.Series([rows[k].get("last_seen") for k in keys],
                                  dtype=runners["seen_at"].dtype)
                        if not runners.empty else [None] * len(keys))
    return pd.DataFrame(out, columns=cols)


def _pools(df: pd.DataFrame) -> tuple[np.ndarray, list[tuple[int, tuple, np.ndarray]]]:
    """Each row's group number over (vendor, hardware), and the pools among the groups:
    (number, pool, the rows' positions in it), a group missing its vendor or hardware
    being no pool."""
    if df.empty:
        return np.empty(0, np.int64), []
    number, keys = groups(df["vendor"], df["hardware"])
    return number, [(i, key, at) for i, (key, at) in enumerate(zip(keys, members(number)))
                    if not (pd.isna(key[0]) or pd.isna(key[1]))]


def _pool_labels(jobs: pd.DataFrame) -> dict[tuple, str]:
    """Each pool's runner labels (`_labels`), from the distinct (pool, label text) pairs of
    its jobs: a pool's jobs repeat a few texts thousands of times over a window."""
    texts: dict[tuple, list] = {}
    for vendor, hardware, text in distinct(*(jobs[c] for c in POOL + ["runner_labels"])):
        if not (pd.isna(vendor) or pd.isna(hardware)):
            texts.setdefault((vendor, hardware), []).append(text)
    return {k: _labels(v) for k, v in texts.items()}


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
