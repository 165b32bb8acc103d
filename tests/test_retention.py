"""Retention: dropping the plain passed results of old runs changes no figure any view shows,
keeps failures and their messages, survives a state rebuild, and is idempotent."""
from __future__ import annotations

import shutil
import subprocess
import sys
from datetime import datetime

import pandas as pd
import pytest
from sqlalchemy import func, select, text

from parity.collectors import demo
from parity.dashboard import frames
from parity.db import retention, state
from parity.db.engine import make_engine
from parity.db import models
from parity.db.models import CiJob
from parity.db.settings import Settings

CUTOFF = datetime(2026, 11, 18)  # the demo's 30 nights end on 2026-11-28: 2/3 are pruned
FAILING = demo.test_key("vllm", "distributed", 11)  # fails only on MI355X


def every_view(db) -> dict[str, pd.DataFrame]:
    """Every frames view at its defaults, and the ones that read raw rows over windows that
    reach into the pruned runs."""
    out = {name: getattr(frames, name)(db) for name in (
        "scorecard", "pass_rate_parity", "test_matrix", "amd_only_failures", "skip_parity",
        "coverage", "regressions", "flaky_tests", "headline", "capability_parity")}
    old = dict(since="2026-11-01", until="2026-11-16")
    out["pass_rate_trend"] = frames.pass_rate_parity(db, latest=False, since="2026-11-01")
    out["old_matrix"] = frames.test_matrix(db, **old)
    out["old_failing_matrix"] = frames.test_matrix(db, quadrant="amd-only fail", **old)
    out["old_skips"] = frames.skip_parity(db, **old)
    out["old_regressions"] = frames.regressions(db, **old)
    out["old_flaky"] = frames.flaky_tests(db, **old)
    out["old_failures"] = frames.amd_only_failures(db, **old)
    matrix = out["test_matrix"]
    passing = matrix.loc[matrix["quadrant"] == "both pass", "parity_key"].iloc[0]
    for key in (FAILING, passing):
        out[f"history {key}"] = frames.test_history(db, parity_key=key, since="2026-10-01")
    return out


def _rows(engine) -> int:
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(models.TestResult)).scalar()


@pytest.fixture
def pruned(demo_db, tmp_path):
    """A writable copy of the demo store, its views before pruning, and the store pruned."""
    copy = tmp_path / "demo.db"
    shutil.copy(demo_db, copy)
    before = every_view(copy)
    engine = make_engine(copy)
    rows = _rows(engine)
    done = retention.prune(engine, CUTOFF)
    return copy, engine, before, rows, done


def test_no_view_changes_when_old_plain_rows_are_dropped(pruned):
    copy, engine, before, rows, done = pruned
    assert done.jobs > 0 and done.rows > 0.5 * rows  # most of the store was dropped
    assert _rows(engine) == rows - done.rows
    after = every_view(copy)
    for name, frame in before.items():
        assert not frame.empty or name.startswith("old_failing"), name  # a real comparison
        pd.testing.assert_frame_equal(after[name], frame, obj=name)


def test_failures_and_messages_stay_and_rebuild_keeps_pruned_vectors(pruned):
    copy, engine, before, rows, done = pruned
    with engine.connect() as conn:
        kinds = dict(conn.execute(text(
            "SELECT r.outcome, count(*) FROM test_result r JOIN ci_job j ON j.id = r.job_pk "
            "WHERE j.raw_pruned_at IS NOT NULL GROUP BY r.outcome")).all())
        marked = conn.execute(select(func.count()).select_from(CiJob)
                              .where(CiJob.raw_pruned_at.is_not(None))).scalar()
    assert kinds.get("failed", 0) > 0 and kinds.get("skipped", 0) > 0  # kept
    assert marked == done.jobs
    with engine.connect() as conn:
        jobs = conn.execute(select(CiJob.id)).scalars().all()
        vectors = state.read(conn, jobs)
    assert state.rebuild(engine) > 0
    with engine.connect() as conn:
        again_read = state.read(conn, jobs)
    assert again_read.keys() == vectors.keys()  # pruned ones kept, the others derived again
    assert all(again_read[j].to_bytes() == vectors[j].to_bytes() for j in jobs if j in vectors)
    again = retention.prune(engine, CUTOFF)  # idempotent
    assert (again.jobs, again.rows) == (0, 0)
    after = every_view(copy)
    for name in ("pass_rate_trend", "old_matrix", "old_skips", f"history {FAILING}"):
        pd.testing.assert_frame_equal(after[name], before[name], obj=name)


def test_prune_command_and_setting(demo_db, tmp_path):
    copy = tmp_path / "demo.db"
    shutil.copy(demo_db, copy)
    cmd = [sys.executable, "-m", "parity", "--db", str(copy), "db", "prune"]
    env = {"PATH": "/usr/bin:/bin"}
    none = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert none.returncode == 2 and "PARITY_RAW_RETENTION_DAYS" in none.stderr
    # the demo ends 2026-11-28 and today is later: 5 days keeps only the newest nights
    days = (datetime.now() - CUTOFF).days
    dry = subprocess.run(cmd + ["--dry-run"], capture_output=True, text=True,
                         env=env | {"PARITY_RAW_RETENTION_DAYS": str(days)})
    assert dry.returncode == 0 and "would prune" in dry.stdout
    run = subprocess.run(cmd + ["--days", str(days)], capture_output=True, text=True, env=env)
    assert run.returncode == 0 and "pruned" in run.stdout, run.stderr
    assert retention.count_pruned(make_engine(copy)) > 0
    with pytest.raises(ValueError, match="PARITY_RAW_RETENTION_DAYS"):
        Settings.from_env({"PARITY_RAW_RETENTION_DAYS": "soon"})


def test_prune_on_both_databases(engine):
    """The same on SQLite and PostgreSQL, on a hand-built store: the pruned day's rows come
    back from the vectors, its failure and its message stay in the store."""
    from tests.builder import DAY0, Builder

    build = Builder(engine)
    for day in (0, 1):
        build.tests("h100", dict(a="passed", b="passed", c="passed"), run=f"n{day}",
                    commit=f"c{day}", day=day)
        build.tests("mi300x", dict(a="passed", b="failed", c="skipped"), run=f"a{day}",
                    commit=f"c{day}", day=day, messages={"b": "HIP error"},
                    reasons={"c": "not supported on ROCm"})
    views = lambda: {  # noqa: E731
        "trend": frames.pass_rate_parity(engine, latest=False, since="2026-11-01"),
        "matrix": frames.test_matrix(engine, since="2026-11-02", until="2026-11-02"),
        "history": frames.test_history(engine, parity_key="tests.kernels::b",
                                       since="2026-11-01")}
    before = views()
    done = retention.prune(engine, DAY0 + pd.Timedelta(hours=12))  # day 0 only
    assert (done.jobs, done.rows) == (2, 4)  # h100 a, b, c and mi300x a
    after = views()
    for name, frame in before.items():
        assert not frame.empty, name
        pd.testing.assert_frame_equal(after[name], frame, obj=name)
    with engine.connect() as conn:
        left = conn.execute(text("SELECT outcome, message FROM test_result r JOIN ci_job j "
                                 "ON j.id = r.job_pk WHERE j.raw_pruned_at IS NOT NULL "
                                 "ORDER BY outcome")).all()
    assert [tuple(r) for r in left] == [("failed", "HIP error"), ("skipped", None)]


def test_a_pruned_store_refuses_to_downgrade(pruned):
    from alembic import command

    from parity.db.migrate import alembic_config

    _, engine, *_ = pruned
    with pytest.raises(RuntimeError, match="jobs have pruned results"):
        command.downgrade(alembic_config(engine), "0007")
    assert retention.count_pruned(engine) > 0
