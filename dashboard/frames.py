"""Parity views as tidy pandas DataFrames, one function per view.

Every function takes the store first (an Engine, a URL, a path, or None for
`PARITY_DB_URL`) and keyword-only filters. Views read the per-(job, group) summaries rather
than raw test rows wherever the view allows."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
from sqlalchemy import Engine, func, inspect, select

from db.engine import connect
from db.models import CiJob, CiRun, Framework, Hardware, TestSummary

Store = Engine | str | Path | None


def _has_data(engine: Engine) -> bool:
    """False for a store with no schema yet (views then return empty frames)."""
    return inspect(engine).has_table(CiJob.__tablename__)


def _job_summaries(engine: Engine, framework: str | None) -> pd.DataFrame:
    stmt = (
        select(Framework.name.label("framework"), Hardware.vendor, Hardware.sku, Hardware.arch,
               Hardware.raw_name, CiRun.run_id, CiRun.head_sha.label("commit"),
               CiRun.created_at.label("run_at"), CiJob.id.label("job_pk"), CiJob.suite,
               func.coalesce(func.sum(TestSummary.total), 0).label("total"),
               func.coalesce(func.sum(TestSummary.passed), 0).label("passed"),
               func.coalesce(func.sum(TestSummary.failed), 0).label("failed"),
               func.coalesce(func.sum(TestSummary.error), 0).label("error"),
               func.coalesce(func.sum(TestSummary.skipped), 0).label("skipped"),
               func.coalesce(func.sum(TestSummary.vendor_skipped), 0).label("vendor_skipped"),
               func.coalesce(func.sum(TestSummary.flaky), 0).label("flaky"))
        .join(CiRun, CiRun.id == CiJob.run_pk)
        .join(Framework, Framework.id == CiJob.framework_id, isouter=True)
        .join(Hardware, Hardware.id == CiJob.hardware_id, isouter=True)
        .join(TestSummary, TestSummary.job_pk == CiJob.id, isouter=True)
        .group_by(CiJob.id, Framework.name, Hardware.vendor, Hardware.sku, Hardware.arch,
                  Hardware.raw_name, CiRun.run_id, CiRun.head_sha, CiRun.created_at, CiJob.suite)
    )
    if framework:
        stmt = stmt.where(Framework.name == framework)
    with engine.connect() as conn:
        df = pd.read_sql(stmt, conn)
    df["hardware"] = df["sku"].where(df["sku"].fillna("") != "", df["arch"]).fillna("")
    df["hardware"] = df["hardware"].where(df["hardware"] != "", df["raw_name"].fillna("unknown"))
    df["vendor"] = df["vendor"].fillna("unknown")
    return df


def scorecard(store: Store = None, *, framework: str | None = None) -> pd.DataFrame:
    """Per framework × hardware, the latest run: how many tests ran, passed, failed and were
    skipped (and how many skips were vendor-gated), and the plain pass rate
    passed / (passed + failed + error). A lane that ran no test shows 0 tests, not 100 %."""
    engine = connect(store)
    columns = ["framework", "vendor", "hardware", "run_at", "commit", "jobs", "tests", "passed",
               "failed", "error", "skipped", "vendor_skipped", "flaky", "pass_rate"]
    jobs = _job_summaries(engine, framework) if _has_data(engine) else None
    if jobs is None or jobs.empty:
        return pd.DataFrame(columns=columns)
    latest = jobs.groupby(["framework", "hardware"])["run_at"].transform("max")
    last = jobs[jobs["run_at"] == latest]
    out = (last.groupby(["framework", "vendor", "hardware", "run_at", "commit"], as_index=False)
           .agg(jobs=("job_pk", "count"), tests=("total", "sum"), passed=("passed", "sum"),
                failed=("failed", "sum"), error=("error", "sum"), skipped=("skipped", "sum"),
                vendor_skipped=("vendor_skipped", "sum"), flaky=("flaky", "sum")))
    ran = out["passed"] + out["failed"] + out["error"]
    out["pass_rate"] = (out["passed"] / ran.where(ran > 0)).round(4)
    return out.sort_values(["framework", "vendor", "hardware"]).reset_index(drop=True)[columns]
