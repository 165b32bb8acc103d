"""No view reads the whole history: every statement a view sends to SQLite is planned
through an index on the tables that grow with every night.

SQLite plans without table statistics (the store never runs ANALYZE), so a plan on the
demo store is the plan on a year of nightlies: a `SCAN` of a history table here would read
every row of it there, and the view's time would grow with the store instead of with
what it shows."""
from __future__ import annotations

import pytest
from sqlalchemy import event

from parity.dashboard import frames
from parity.db.engine import make_engine

# tables that grow with every run, job, result file or collection
HISTORY = {"ci_run", "ci_job", "job_summary", "test_summary", "job_outcome", "test_result",
           "artifact", "ci_artifact", "benchmark_metric", "accuracy_metric", "job_capability",
           "runner_snapshot", "test_case", "synced_run", "ingest_error"}
# scans that read only what they keep: the partial index of the few vendor-named tests,
# which holds what is read from it (0017)
ALLOWED = {"SCAN test_case USING COVERING INDEX ix_test_case_alias"}


@pytest.fixture(scope="module")
def planned(demo_db):
    """(view, statement, parameters) of every SELECT the views send, with a view's own
    filters too (a framework filter once made SQLite walk every job)."""
    engine = make_engine(demo_db)
    sent: list[tuple[str, str, object]] = []
    current = [""]

    @event.listens_for(engine, "before_cursor_execute")
    def record(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith(("SELECT", "WITH")):
            sent.append((current[0], statement, parameters))

    key = frames.test_matrix(engine, quadrant="amd-only fail")["parity_key"].iloc[0]
    calls = [(v, {}) for v in frames.VIEWS if v != "test_history"]
    calls += [("test_history", {"parity_key": key}),
              ("test_matrix", {"framework": "vllm", "hardware": "mi300x"}),
              ("coverage", {"framework": "sglang"}),
              ("regressions", {"framework": "vllm", "since": "2026-11-10"}),
              ("capability_parity", {"framework": "vllm"})]
    for view, kw in calls:
        current[0] = view
        getattr(frames, view)(engine, **kw)
    event.remove(engine, "before_cursor_execute", record)
    yield engine, sent
    engine.dispose()


def _scans(engine, statement, parameters) -> list[str]:
    with engine.connect() as conn:
        plan = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters).all()
    return [row[3] for row in plan
            if row[3].startswith("SCAN ") and row[3].split()[1] in HISTORY
            and row[3] not in ALLOWED]


def test_the_views_were_heard(planned):
    engine, sent = planned
    heard = {view for view, _, _ in sent}
    assert {"scorecard", "fleet", "capability_parity", "alerts", "test_history"} <= heard
    assert len(sent) > 100


def test_no_view_scans_a_history_table(planned):
    engine, sent = planned
    found = {}
    for view, statement, parameters in sent:
        for scan in _scans(engine, statement, parameters):
            found.setdefault((view, scan), statement[:300])
    assert not found, "\n".join(f"{v}: {s}\n    {q}" for (v, s), q in found.items())


def test_the_check_sees_a_scan(planned):
    """The check itself: a read of every result of the history is caught."""
    engine, _ = planned
    assert _scans(engine, "SELECT outcome FROM test_result WHERE duration_s > ?", (1.0,)) \
        == ["SCAN test_result"]


def test_a_read_that_names_its_index_is_planned_through_it(planned):
    """The notable rows' reads name their partial index (`INDEXED BY`, a table hint that
    SQLAlchemy's SQLite dialect would drop): the statements the views send say so, and
    SQLite plans them through it rather than through every row of each job."""
    engine, sent = planned
    hinted = [(s, p) for _, s, p in sent if "INDEXED BY ix_test_result_notable" in s]
    assert hinted, "no view read the notable rows by their index"
    for statement, parameters in hinted:
        with engine.connect() as conn:
            plan = [row[3] for row in conn.exec_driver_sql(
                f"EXPLAIN QUERY PLAN {statement}", parameters).all()]
        assert any("USING INDEX ix_test_result_notable" in step for step in plan), plan
