"""Retention of raw results: drop the plain passed rows of old jobs, whose outcome vectors
(`db.state`) already hold everything a view reads of them.

A row is *plain* when it passed, was not rerun, and carries no message and no skip
category: the vector records exactly that (test id, outcome passed, no skip, no rerun), so
`dashboard.tables.results` gives the same rows for the job afterwards and no count, rate or
streak changes. Failures, errors, reruns, skips and anything with a message stay: they
carry the texts the views show, and they are a few per cent of a store. A job is marked
(`ci_job.raw_pruned_at`) in the transaction that deletes its rows, so a state rebuild
keeps its vector instead of deriving it from what is left. Pruning again is a no-op.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable

from sqlalchemy import Engine, and_, delete, exists, func, select, text, update

from parity.db import state
from parity.db.models import CiJob, CiRun, JobOutcome, TestResult

PLAIN = "outcome = 'passed' AND rerun_count = 0 AND message IS NULL AND skip_category IS NULL"
CHUNK = 50  # jobs per transaction


@dataclass
class Pruned:
    jobs: int = 0
    rows: int = 0


def prunable(engine: Engine, before: datetime) -> list[int]:
    """Jobs of runs created before `before`, with a vector, not pruned yet."""
    stmt = (select(CiJob.id).join(CiRun, CiRun.id == CiJob.run_pk)
            .where(CiRun.created_at < before, CiJob.raw_pruned_at.is_(None),
                   exists().where(JobOutcome.job_pk == CiJob.id))
            .order_by(CiJob.id))
    with engine.connect() as conn:
        return list(conn.execute(stmt).scalars())


def prune(engine: Engine, before: datetime,
          echo: Callable[[str], None] = lambda line: None) -> Pruned:
    """Delete the plain rows of every job of a run created before `before`; what was done.
    Vectors are completed first (a store upgraded from before they existed), and only jobs
    with a vector lose rows. Each chunk of jobs is one transaction: an interrupted prune
    leaves every job either untouched or pruned and marked."""
    state.complete(engine, echo)
    jobs = prunable(engine, before)
    done = Pruned()
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    for i in range(0, len(jobs), CHUNK):
        chunk = jobs[i:i + CHUNK]
        with engine.begin() as conn:
            gone = conn.execute(delete(TestResult).where(
                and_(TestResult.job_pk.in_(chunk), text(f"({PLAIN})"))))
            conn.execute(update(CiJob).where(CiJob.id.in_(chunk)).values(raw_pruned_at=now))
        done.jobs += len(chunk)
        done.rows += max(gone.rowcount or 0, 0)
        if (i // CHUNK) % 20 == 19:
            echo(f"prune: {done.jobs:,}/{len(jobs):,} jobs, {done.rows:,} rows")
    return done


def pruned_jobs(conn, job_pks: list[int]) -> set[int]:
    """Which of these jobs have been pruned."""
    out: set[int] = set()
    for i in range(0, len(job_pks), state.CHUNK):
        out.update(conn.execute(select(CiJob.id).where(
            CiJob.id.in_(job_pks[i:i + state.CHUNK]), CiJob.raw_pruned_at.is_not(None)))
            .scalars())
    return out


def count_pruned(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(CiJob)
                                .where(CiJob.raw_pruned_at.is_not(None))).scalar() or 0)
