"""Migrations, ingest round trips and idempotency on real SQLite and real PostgreSQL."""
from __future__ import annotations

import json
import sys
import zipfile
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path

import pandas as pd
import pytest

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import func, inspect, select, text

from parity.collectors import demo
from parity.collectors.ingest import IngestOptions, ingest
from parity.db.hardware import vocabulary
from parity.db.inventory import inventory
from parity.db.migrate import (HEAD, SQLITE_SCHEMA, chain_schema, current_revision,
                                head_revision, replay, sqlite_schema, upgrade)
from parity.db.partitions import is_partition
import parity.db.models as m
from parity.db.models import Base, CiJob, CiRun, Hardware
from parity.cli import main

JUNIT = """<testsuites><testsuite name="pytest" timestamp="2026-11-20T02:00:00+00:00">
<testcase classname="tests.kernels.test_attn" name="test_decode_rocm[fp8]" time="0.5"/>
<testcase classname="tests.kernels.test_attn" name="test_prefill" time="1.0"><failure message="AssertionError: x"/></testcase>
<testcase classname="tests.kernels.test_attn" name="test_fp4" time="0"><skipped type="pytest.skip" message="not supported on ROCm"/></testcase>
<testcase classname="tests.kernels.test_attn" name="test_flaky"><rerun message="x"/></testcase>
</testsuite></testsuites>"""


def test_migrations_from_empty_match_the_models(engine):
    assert current_revision(engine) is None
    replay(engine)  # the chain itself (a new SQLite store is made from the schema file)
    assert current_revision(engine) == head_revision() == HEAD, \
        "db.migrate.HEAD must name the newest revision file"
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn, opts={
            "include_name": lambda name, kind, parent: not (kind == "table"
                                                            and is_partition(name))}),
            Base.metadata)
    assert diff == [], f"models and migrations disagree: {diff}"
    upgrade(engine)  # idempotent
    assert set(inspect(engine).get_table_names()) >= {t for t in Base.metadata.tables}


def _master(engine) -> list[tuple]:
    with engine.connect() as conn:
        return conn.exec_driver_sql("SELECT type, name, tbl_name, sql FROM sqlite_master "
                                    "ORDER BY type, name").all()


def test_a_new_sqlite_store_is_the_chains_schema_statement_for_statement(tmp_path):
    from parity.db.engine import make_engine

    assert SQLITE_SCHEMA.read_text(encoding="utf-8") == chain_schema(), \
        "db/schema.sqlite.sql is not what the migrations make: run `parity db schema --write`"
    chained, fresh = make_engine(tmp_path / "chain.db"), make_engine(tmp_path / "fresh.db")
    replay(chained)
    sys.modules.pop("alembic.command", None)
    upgrade(fresh)
    assert "alembic.command" not in sys.modules, "a new SQLite store replayed the chain"
    assert current_revision(fresh) == HEAD
    # every table, index and automatic index, with SQLite's own text of each
    assert _master(fresh) == _master(chained)
    assert sqlite_schema(fresh) == sqlite_schema(chained)
    with fresh.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA foreign_key_check").all() == []
    upgrade(fresh)  # at head: nothing to do
    assert current_revision(fresh) == HEAD
    fresh.dispose()
    chained.dispose()


def test_a_sqlite_store_with_tables_but_no_revision_is_left_to_the_chain(tmp_path):
    from parity.db.engine import make_engine

    eng = make_engine(tmp_path / "made-by-hand.db")
    with eng.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE notes (x INTEGER)")
    upgrade(eng)  # not from the file: its first statement would meet a store with tables
    assert current_revision(eng) == HEAD
    assert {"notes", "test_result"} <= set(inspect(eng).get_table_names())
    eng.dispose()


def test_0005_keys_results_by_job_test_and_artifact_and_keeps_the_last_repeat(engine):
    from alembic import command

    from parity.db.migrate import alembic_config

    upgrade(engine, "0004")
    rows = [  # (id, job_pk, artifact_pk, test_pk, outcome): test 7 stored twice by artifact 1
        (1, 1, 1, 7, "failed"), (2, 1, 1, 8, "passed"), (3, 1, 1, 7, "passed"),
        (4, 1, 2, 7, "skipped")]
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO ci_run (id, ci_system, repository, workflow, run_id, attempt,"
                          " head_sha, branch, event, conclusion, url) "
                          "VALUES (1, 'local', '', '', '1', 1, '', '', '', '', '')"))
        conn.execute(text("INSERT INTO ci_job (id, run_pk, job_id, name, suite, runner_labels, "
                          "runner_name, runner_group, conclusion, url) "
                          "VALUES (1, 1, 'j', '', '', '[]', '', '', '', '')"))
        for a in (1, 2):
            conn.execute(text(
                "INSERT INTO artifact (id, job_pk, name, path, sha256, size_bytes, format, "
                "parser_version, records, ingested_at) "
                f"VALUES ({a}, 1, '', 'p{a}', 's{a}', 0, 'junit', '1', 0, '2026-11-01')"))
        for t in (7, 8):
            conn.execute(text("INSERT INTO test_case (id, test_key, parity_id, parity_key, file, "
                              f"classname, name, group_name) VALUES ({t}, 'k{t}', {t}, 'k{t}', "
                              "'', '', 'k', '')"))
        for r in rows:
            conn.execute(text("INSERT INTO test_result (id, job_pk, artifact_pk, test_pk, "
                              "outcome, rerun_count) VALUES (:i, :j, :a, :t, :o, 0)"),
                         dict(zip("ijato", r)))
    upgrade(engine, "0005")
    query = text("SELECT job_pk, artifact_pk, test_pk, outcome FROM test_result "
                 "ORDER BY artifact_pk, test_pk")
    with engine.connect() as conn:
        assert [tuple(r) for r in conn.execute(query)] == [
            (1, 1, 7, "passed"), (1, 1, 8, "passed"), (1, 2, 7, "skipped")]
    assert inspect(engine).get_pk_constraint("test_result")["constrained_columns"] == [
        "job_pk", "test_pk", "artifact_pk"]
    assert inspect(engine).get_indexes("test_result") == []
    command.downgrade(alembic_config(engine), "0004")
    with engine.connect() as conn:
        assert len(conn.execute(query).all()) == 3
    assert {i["name"] for i in inspect(engine).get_indexes("test_result")} == {
        "ix_test_result_job", "ix_test_result_test"}
    upgrade(engine)
    assert current_revision(engine) == HEAD


def test_0006_adds_the_window_indexes_to_a_store_with_data(engine, tmp_path):
    """A 0005 store with results upgrades in place: runs get their time index, the notable
    results (failed, errored, rerun) their partial index, and nothing else changes."""
    from alembic import command

    from parity.db.migrate import alembic_config

    (tmp_path / "junit.xml").write_text(JUNIT)
    assert ingest(engine, [tmp_path / "junit.xml"], IngestOptions(framework="vllm")).rejected == []
    command.downgrade(alembic_config(engine), "0005")  # the data, at the schema before
    assert current_revision(engine) == "0005"
    assert inspect(engine).get_indexes("test_result") == []
    count = text("SELECT outcome, rerun_count FROM test_result ORDER BY outcome, rerun_count")
    with engine.connect() as conn:
        before = conn.execute(count).all()
    upgrade(engine, "0006")
    assert current_revision(engine) == "0006"
    indexes = {i["name"]: i for i in inspect(engine).get_indexes("test_result")}
    assert indexes["ix_test_result_notable"]["column_names"] == ["job_pk", "test_pk"]
    assert "ix_ci_run_created" in {i["name"] for i in inspect(engine).get_indexes("ci_run")}
    notable = text(f"SELECT outcome, rerun_count FROM test_result WHERE ({m.NOTABLE}) "
                   "ORDER BY outcome, rerun_count")
    with engine.connect() as conn:
        assert conn.execute(count).all() == before
        assert conn.execute(notable).all() == [("failed", 0), ("passed", 1)]
        if engine.dialect.name == "sqlite":  # the index holds only the notable rows
            plan = conn.exec_driver_sql(
                f"EXPLAIN QUERY PLAN SELECT job_pk, test_pk FROM test_result "
                f"INDEXED BY ix_test_result_notable WHERE job_pk = 1 AND ({m.NOTABLE})").all()
            assert "ix_test_result_notable" in str(plan)
    command.downgrade(alembic_config(engine), "0005")
    assert inspect(engine).get_indexes("test_result") == []
    upgrade(engine)
    assert current_revision(engine) == HEAD


def test_0012_fills_each_jobs_totals_from_its_groups(engine, tmp_path):
    """A 0011 store with results upgrades in place: each job's totals are its groups'
    sums, the same totals ingest keeps from then on."""
    from alembic import command

    from parity.db.migrate import alembic_config

    (tmp_path / "junit.xml").write_text(JUNIT)
    (tmp_path / "other.xml").write_text(JUNIT.replace("test_attn", "test_ops"))
    opts = IngestOptions(framework="vllm", run_id="1", suite="kernels")
    assert ingest(engine, [tmp_path / "junit.xml", tmp_path / "other.xml"], opts).rejected == []
    query = text("SELECT job_pk, total, passed, failed, error, skipped, flaky, duration_s "
                 "FROM job_summary ORDER BY job_pk")
    with engine.connect() as conn:
        written = conn.execute(query).all()
    assert len(written) == 1 and written[0][1] == 2 * 4  # one job, both files' tests
    command.downgrade(alembic_config(engine), "0011")
    assert "job_summary" not in inspect(engine).get_table_names()
    upgrade(engine)
    assert current_revision(engine) == HEAD
    with engine.connect() as conn:
        assert conn.execute(query).all() == written


def test_0013_keys_results_by_run_day_and_partitions_postgresql_by_month(engine, tmp_path):
    """Every result carries its run's day in the key. A 0012 store with results upgrades in
    place to the same rows, a run without a time getting day 0; on PostgreSQL the table is
    then partitioned by month (one partition per month of the stored runs, one for undated
    runs), and a result of a new month makes its partition as it is written."""
    from alembic import command

    from parity.db.migrate import alembic_config

    def night(run: str, stamp: str) -> Path:
        path = tmp_path / f"{run}.xml"
        path.write_text(JUNIT.replace("2026-11-20T02:00:00+00:00", stamp))
        assert ingest(engine, [path], IngestOptions(framework="vllm", run_id=run)).rejected == []
        return path

    def placed() -> dict:
        if engine.dialect.name != "postgresql":
            return {}
        with engine.connect() as conn:
            return dict(conn.exec_driver_sql(
                "SELECT tableoid::regclass::text, count(*) FROM test_result GROUP BY 1").all())

    night("1", "2026-10-31T23:30:00+00:00")
    night("2", "2026-11-20T02:00:00+00:00")
    night("3", "2026-11-21T02:00:00+00:00")
    rows = text("SELECT r.job_pk, r.test_pk, r.artifact_pk, r.run_day, r.outcome, r.message "
                "FROM test_result r ORDER BY r.job_pk, r.test_pk")
    with engine.connect() as conn:
        written = conn.execute(rows).all()
        days = dict(conn.execute(text(
            "SELECT c.run_id, r.run_day FROM test_result r JOIN ci_job j ON j.id = r.job_pk "
            "JOIN ci_run c ON c.id = j.run_pk GROUP BY c.run_id, r.run_day")).all())
    assert days == {"1": 20261031, "2": 20261120, "3": 20261121} and len(written) == 12
    if engine.dialect.name == "postgresql":
        assert placed() == {"test_result_p202610": 4, "test_result_p202611": 8}
    with engine.begin() as conn:  # a run without a time
        conn.execute(text("UPDATE ci_run SET created_at = NULL WHERE run_id = '3'"))
    command.downgrade(alembic_config(engine), "0012")
    assert "run_day" not in {c["name"] for c in inspect(engine).get_columns("test_result")}
    upgrade(engine)
    assert current_revision(engine) == HEAD
    with engine.connect() as conn:
        again = conn.execute(rows).all()
    undated = {r[0] for r in written if r[3] == 20261121}
    assert again == [r if r[0] not in undated else (*r[:3], 0, *r[4:]) for r in written]
    indexes = {i["name"] for i in inspect(engine).get_indexes("test_result")}
    assert "ix_test_result_notable" in indexes
    if engine.dialect.name == "postgresql":
        with engine.connect() as conn:
            assert conn.exec_driver_sql(
                "SELECT count(*) FROM pg_partitioned_table "
                "WHERE partrelid = 'test_result'::regclass").scalar() == 1
        assert placed() == {"test_result_p202610": 4, "test_result_p202611": 4,
                            "test_result_undated": 4}
    night("4", "2027-01-05T02:00:00+00:00")  # a new month
    if engine.dialect.name == "postgresql":
        assert placed()["test_result_p202701"] == 4


def test_a_run_moved_to_another_day_takes_its_results_and_reads_visit_only_their_months(
        engine, tmp_path):
    """A later sync that moves a run's time to another day, or dates a run stored without a
    time, moves its results too: `run_day` stays the day of the run's time. That is what
    lets a read by job name the jobs' days, and on PostgreSQL visit only those months'
    partitions, and still find every row."""
    from parity.dashboard import tables
    from parity.db import store

    for run, stamp in (("1", "2026-11-20T02:00:00+00:00"), ("2", "2026-10-05T02:00:00+00:00")):
        path = tmp_path / f"{run}.xml"
        path.write_text(JUNIT.replace("2026-11-20T02:00:00+00:00", stamp))
        assert ingest(engine, [path], IngestOptions(framework="vllm", run_id=run)).rejected == []
    with engine.connect() as conn:
        runs = {r.run_id: r for r in conn.execute(select(CiRun)).all()}
        jobs = dict(conn.execute(select(CiRun.run_id, CiJob.id)
                                 .join(CiJob, CiJob.run_pk == CiRun.id)).all())

    def days(run: str) -> set:
        with engine.connect() as conn:
            return set(conn.execute(select(m.TestResult.run_day).distinct()
                                    .where(m.TestResult.job_pk == jobs[run])).scalars())

    def move(run: str, when) -> None:
        r = runs[run]
        with engine.begin() as conn:
            store.upsert_run(conn, ci_system=r.ci_system, repository=r.repository,
                             run_id=r.run_id, attempt=r.attempt, created_at=when)

    rows = tables.results(engine, [jobs["1"]]).sort_values("test_pk").reset_index(drop=True)
    assert len(rows) == 4 and days("1") == {20261120}
    move("1", datetime(2027, 1, 3, 4, 0))  # corrected to another month
    assert days("1") == {20270103} and days("2") == {20261005}
    again = tables.results(engine, [jobs["1"]]).sort_values("test_pk").reset_index(drop=True)
    pd.testing.assert_frame_equal(again, rows)
    with engine.begin() as conn:  # a run stored without a time, as 0013 leaves it
        conn.execute(text(f"UPDATE ci_run SET created_at = NULL WHERE id = {runs['2'].id}"))
        conn.execute(text(f"UPDATE test_result SET run_day = 0 WHERE job_pk = {jobs['2']}"))
    move("2", datetime(2026, 10, 6, 2, 0))
    assert days("2") == {20261006} and len(tables.results(engine, [jobs["2"]])) == 4
    move("2", datetime(2026, 10, 6, 23, 0))  # the same day: nothing to move
    assert days("2") == {20261006}
    if engine.dialect.name == "postgresql":
        with engine.connect() as conn:
            placed = dict(conn.exec_driver_sql(
                "SELECT tableoid::regclass::text, count(*) FROM test_result GROUP BY 1").all())
            assert placed == {"test_result_p202701": 4, "test_result_p202610": 4}
            read = tables.by_jobs(engine, select(m.TestResult.test_pk), [jobs["2"]])
            plan = "\n".join(conn.exec_driver_sql("EXPLAIN " + str(read.compile(
                dialect=conn.dialect, compile_kwargs={"literal_binds": True}))).scalars())
        assert "test_result_p202610" in plan and "test_result_p202701" not in plan, plan


def test_round_trip_and_idempotency(engine, tmp_path):
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "junit.xml").write_text(JUNIT)
    (tmp_path / "reports" / "README.txt").write_text("not a result")
    with zipfile.ZipFile(tmp_path / "test-reports-default-1-1-linux.rocm.gpu.gfx942.1_123.zip", "w") as zf:
        zf.writestr("python-pytest/test_ops/test_ops-0123456789abcdef.xml",
                    JUNIT.replace("test_attn", "test_ops"))
    opts = IngestOptions(framework="vllm", hardware="linux-mi35x-gpu-8", repo="vllm-project/vllm",
                         run_id="987", commit="0a2c1ed", suite="kernels")
    paths = [tmp_path / "reports", next(tmp_path.glob("*.zip"))]
    first = ingest(engine, paths, opts)
    assert (first.count("ingested"), first.count("skipped"), first.rejected) == (2, 1, [])
    before = inventory(engine)
    with engine.connect() as conn:
        job = conn.execute(select(CiJob)).one()
        hw = conn.execute(select(Hardware).where(Hardware.id == job.hardware_id)).one()
        run = conn.execute(select(CiRun)).one()
        summary = conn.execute(select(func.sum(m.TestSummary.total), func.sum(m.TestSummary.failed),
                                      func.sum(m.TestSummary.vendor_skipped),
                                      func.sum(m.TestSummary.flaky))).one()
        keys = dict(conn.execute(select(m.TestCase.test_key, m.TestCase.parity_key)).all())
    assert (hw.vendor, hw.sku, hw.arch, hw.gpu_count) == ("amd", "mi355x", "gfx950", 8)
    assert (run.run_id, run.head_sha, run.repository, run.ci_system) == (
        "987", "0a2c1ed", "vllm-project/vllm", "github")
    assert json.loads(job.runner_labels) == [] and job.suite == "kernels"
    assert tuple(summary) == (8, 2, 2, 2)
    assert keys["tests.kernels.test_attn::test_decode_rocm[fp8]"] == \
        "tests.kernels.test_attn::test_decode_{gpu}[fp8]"
    second = ingest(engine, paths, opts)
    assert second.count("ingested") == 0 and second.count("unchanged") == 2
    after = inventory(engine)
    assert after == before
    if engine.dialect.name == "sqlite":  # the bulk path skips SQLite's per-row FK lookups
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA foreign_key_check").all() == []
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1


def test_a_test_reported_twice_in_one_file_is_one_row_with_reruns(engine, tmp_path):
    log = tmp_path / "pytest.log"
    log.write_text("""============================= test session starts ==============================
collected 2 items
=========================== short test summary info ============================
FAILED tests/test_a.py::test_x - AssertionError: first
========================= 1 failed, 1 passed in 1.00s ==========================
============================= test session starts ==============================
collected 2 items
=========================== short test summary info ============================
FAILED tests/test_a.py::test_x - AssertionError: again
========================= 1 failed, 1 passed in 1.00s ==========================
""")
    report = ingest(engine, [log], IngestOptions(framework="vllm", hardware="mi300x",
                                                 format="pytest-log"))
    assert report.rejected == [] and report.count("ingested") == 1
    with engine.connect() as conn:
        rows = conn.execute(select(m.TestResult.outcome, m.TestResult.rerun_count,
                                   m.TestResult.message)).all()
    assert [tuple(r) for r in rows] == [("failed", 1, "AssertionError: again")]


def test_same_tests_on_two_vendors_share_parity_keys(engine, tmp_path):
    amd = tmp_path / "amd.xml"
    amd.write_text(JUNIT)
    nv = tmp_path / "nv.xml"
    nv.write_text(JUNIT.replace("test_decode_rocm", "test_decode_cuda").replace(
        "2026-11-20", "2026-11-21"))
    ingest(engine, [amd], IngestOptions(framework="vllm", hardware="mi355x"))
    ingest(engine, [nv], IngestOptions(framework="vllm", hardware="b200"))
    with engine.connect() as conn:
        per_key = conn.execute(select(m.TestCase.parity_id, func.count()).group_by(
            m.TestCase.parity_id)).all()
        vendors = conn.execute(
            select(func.count(func.distinct(Hardware.vendor)))
            .select_from(m.TestResult).join(CiJob, CiJob.id == m.TestResult.job_pk)
            .join(Hardware, Hardware.id == CiJob.hardware_id)).scalar()
    assert sorted(n for _, n in per_key) == [1, 1, 1, 2]  # decode_rocm and decode_cuda meet
    assert vendors == 2


def test_test_identities_are_interned_once_whoever_knew_them(engine, tmp_path):
    """A report's new tests get their test_case rows, with their parity keys, whether its
    other tests were known to the writer (an earlier file of the same batch) or to the store
    only (an earlier batch), and the known ones are not written again."""
    from parity.db.store import test_id

    def report(name: str, tests: list[str]) -> Path:
        cases = "".join(f'<testcase classname="tests.kernels.test_attn" name="{t}"/>'
                        for t in tests)
        path = tmp_path / name
        path.write_text(f'<testsuites><testsuite name="pytest">{cases}</testsuite></testsuites>')
        return path

    first = report("a.xml", ["test_a", "test_b_rocm", "test_c"])
    same_batch = report("b.xml", ["test_c", "test_b_rocm", "test_d_rocm[fp8]", "test_e"])
    next_batch = report("c.xml", ["test_e", "test_f_cuda", "test_a"])
    opts = IngestOptions(framework="vllm", hardware="mi355x", run_id="1")
    assert ingest(engine, [first, same_batch], opts).count("ingested") == 2
    assert ingest(engine, [next_batch], replace(opts, run_id="2")).count("ingested") == 1
    with engine.connect() as conn:
        rows = conn.execute(select(m.TestCase.id, m.TestCase.test_key, m.TestCase.parity_id,
                                   m.TestCase.parity_key)).all()
    assert sorted(r.test_key.split("::")[1] for r in rows) == [
        "test_a", "test_b_rocm", "test_c", "test_d_rocm[fp8]", "test_e", "test_f_cuda"]
    for r in rows:
        assert r.id == test_id(r.test_key) and r.parity_id == test_id(r.parity_key)
        assert r.parity_key == r.test_key.replace("_rocm", "_{gpu}").replace("_cuda", "_{gpu}")


@pytest.mark.parametrize("seed", range(4))
def test_group_summaries_are_what_a_row_by_row_count_gives(seed):
    """A file's per-group summary (outcomes, rerun passes, vendor-gated skips, durations
    with missing and zero ones) equals adding each row up in a loop, sums to the bit."""
    import random

    from parity.collectors.writer import SUMMARY_KEYS, _group_counts
    from parity.db.models import VENDOR_GATED

    rng = random.Random(seed)
    n = rng.randint(0, 300)
    groups = [rng.choice(["tests/a.py", "tests/b.py", "TestC", "suite"]) for _ in range(n)]
    outcomes = [rng.choice(["passed", "passed", "failed", "skipped", "error", "xfailed"])
                for _ in range(n)]
    durations = [rng.choice([None, 0.0, round(rng.random() * 9, 3), 1e-9]) for _ in range(n)]
    categories = [rng.choice(["vendor_amd", "hardware", "other"]) if o == "skipped" else None
                  for o in outcomes]
    reruns = [rng.choice([0, 0, 0, 1, 2]) for _ in range(n)]
    want: dict = {}
    for g, o, d, c, r in zip(groups, outcomes, durations, categories, reruns):
        w = want.setdefault(g, dict.fromkeys(SUMMARY_KEYS, 0))
        w[o] += 1
        w["total"] += 1
        w["flaky"] += bool(r and o == "passed")
        w["vendor_skipped"] += c in VENDOR_GATED
        if d:
            w["duration_s"] += d
    assert _group_counts(groups, outcomes, durations, categories, reruns) == want


def test_cli_output_into_a_closed_pipe_stops_quietly(tmp_path):
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)  # `parity status | head` after head has gone
    try:
        done = subprocess.run([sys.executable, "-m", "parity", "--db", str(tmp_path / "p.db"),
                               "status"], stdout=write, stderr=subprocess.PIPE, text=True,
                              timeout=60)
    finally:
        os.close(write)
    assert done.returncode == 1 and done.stderr == ""


def test_cli_ingest_status_and_exit_codes(tmp_path, capsys):
    db = str(tmp_path / "cli.db")
    good = tmp_path / "good.xml"
    good.write_text(JUNIT)
    bad = tmp_path / "bad.xml"
    bad.write_text("<testsuite><testcase")
    assert main(["--db", db, "ingest", str(good), "--framework", "vllm", "-q"]) == 0
    assert main(["--db", db, "ingest", str(good), str(bad)]) == 2
    out = capsys.readouterr().out
    assert f"REJECTED {bad}: malformed XML" in out and "1 unchanged" in out
    assert main(["--db", db, "status", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert (status["test_results"], status["ingest_errors"]) == (4, 1)
    assert main(["--db", str(tmp_path / "empty.db"), "summary"]) == 0
    assert "no data yet" in capsys.readouterr().out


def test_demo_history_has_every_situation(engine):
    sizes = demo.plan(12, results=40_000)
    s = demo.build(engine, days=12, end=date(2026, 11, 27), sizes=sizes)
    assert s.nights == 12 and s.test_results > 0
    again = inventory(engine)
    demo.build(engine, days=12, end=date(2026, 11, 27), sizes=sizes)  # deterministic, idempotent
    assert inventory(engine) | {"last_ingest": None} == again | {"last_ingest": None}
    with engine.connect() as conn:
        def one(sql):
            return conn.execute(text(sql)).all()
        lanes = one("""SELECT h.sku, f.name, COUNT(DISTINCT j.id), COALESCE(SUM(s.total), 0)
                       FROM ci_job j JOIN hardware h ON h.id = j.hardware_id
                       JOIN framework f ON f.id = j.framework_id
                       LEFT JOIN test_summary s ON s.job_pk = j.id
                       GROUP BY h.sku, f.name""")
        by_lane = {(sku, fw): (jobs, tests) for sku, fw, jobs, tests in lanes}
        assert by_lane[("mi455x", "vllm")][1] == 0 and by_lane[("mi455x", "vllm")][0] == 12
        spec = one("""SELECT DISTINCT h.vendor FROM ci_job j JOIN hardware h ON h.id = j.hardware_id
                      WHERE j.suite = 'spec_decode'""")
        assert spec == [("nvidia",)]
        amd_only_skips = one("""SELECT DISTINCT h.vendor FROM test_result r
                                JOIN ci_job j ON j.id = r.job_pk
                                JOIN hardware h ON h.id = j.hardware_id
                                WHERE r.skip_category = 'vendor_amd'""")
        assert amd_only_skips == [("amd",)]
        flaky = one("SELECT COUNT(*) FROM test_result WHERE rerun_count > 0 AND outcome = 'passed'")
        assert flaky[0][0] > 0
        cliff = one("""SELECT a.concurrency, AVG(a.value) FROM accuracy_metric a
                       JOIN ci_job j ON j.id = a.job_pk JOIN hardware h ON h.id = j.hardware_id
                       WHERE h.sku = 'mi355x' GROUP BY a.concurrency ORDER BY a.concurrency""")
        scores = dict(cliff)
        assert 0.77 < scores[64] < 0.83 and all(0.91 < v < 0.96 for c, v in scores.items() if c != 64)
        series = one("""SELECT r.created_at, b.value FROM benchmark_metric b
                        JOIN ci_job j ON j.id = b.job_pk JOIN ci_run r ON r.id = j.run_pk
                        JOIN hardware h ON h.id = j.hardware_id
                        WHERE h.sku = 'mi355x' AND b.metric = 'total_token_throughput'
                          AND b.concurrency = 64 AND b.isl = 1024
                          AND b.model = 'meta-llama/Llama-3.1-70B-Instruct' ORDER BY r.created_at""")
        values = [v for _, v in series]
        early, late = sum(values[:2]) / 2, sum(values[-5:]) / 5
        assert late / early < 0.95  # the injected step regression


def test_hardware_vocabulary_covers_demo_labels():
    v = vocabulary()
    for labels in demo.LABELS.values():
        for label in labels.values():
            assert v.identify(label).mapped, label


def test_0014_gives_every_benchmark_row_its_series_and_the_reads_stay_the_same(engine):
    """Every benchmark row names a series whose dimensions are the row's own. A 0013 store
    with benchmark rows upgrades in place to the same series (missing dimensions equal
    missing ones); the window's benchmark frame is the same read through the series, read
    from rows stored without one, and after the upgrade. Writing the same rows again makes
    no second series."""
    from alembic import command

    from parity.dashboard import frames, tables
    from parity.db import state, store
    from parity.db.migrate import alembic_config

    sizes = demo.plan(3, results=3_000)
    demo.build(engine, days=3, end=date(2026, 11, 27), sizes=sizes)
    with engine.begin() as conn:  # a dimension missing, as a file that does not give it
        conn.execute(text("UPDATE benchmark_metric SET tp = NULL, request_rate = NULL "
                          "WHERE concurrency = 16"))
        conn.execute(text("UPDATE benchmark_metric SET series_pk = NULL WHERE concurrency = 16"))
    state.rebuild_benchmarks(engine)  # the jobs' arrays, as a store with such rows has them
    dims = ", ".join(m.SERIES_DIMENSIONS)
    same = " AND ".join(f"s.{c} IS NOT DISTINCT FROM b.{c}" if engine.dialect.name != "sqlite"
                        else f"s.{c} IS b.{c}" for c in m.SERIES_DIMENSIONS)

    def read() -> pd.DataFrame:
        return tables.benchmarks(engine).sort_values(["job_pk", "record_no", "metric"]) \
            .reset_index(drop=True)

    def series() -> tuple[int, int, int]:
        with engine.connect() as conn:
            return conn.execute(text(
                f"SELECT COUNT(*), COUNT(b.series_pk), COUNT(s.id) FROM benchmark_metric b "
                f"LEFT JOIN benchmark_series s ON s.id = b.series_pk AND {same}")).one()

    rows, named, matched = series()
    assert rows > 0 and named == matched < rows  # the rows set apart have no series now
    without = read()
    command.downgrade(alembic_config(engine), "0013")
    assert "series_pk" not in {c["name"] for c in inspect(engine).get_columns("benchmark_metric")}
    with pytest.raises(RuntimeError, match="older schema: run `parity db upgrade`"):
        frames.performance_summary(engine)
    upgrade(engine)
    assert series() == (rows, rows, rows)
    with engine.connect() as conn:
        kept = conn.execute(text("SELECT COUNT(*) FROM benchmark_series")).scalar()
    after = read()
    pd.testing.assert_frame_equal(after, without)

    def distinct_and_kept() -> tuple[int, int]:
        with engine.connect() as conn:
            return (conn.execute(text(f"SELECT COUNT(*) FROM (SELECT DISTINCT {dims} "
                                      "FROM benchmark_metric) d")).scalar(),
                    conn.execute(text("SELECT COUNT(*) FROM benchmark_series")).scalar())

    assert distinct_and_kept() == (kept, kept)
    demo.build(engine, days=4, end=date(2026, 11, 28), sizes=sizes)  # a new night
    grown = distinct_and_kept()
    assert grown[0] == grown[1] > kept  # its rows with tp again made the series they need
    demo.build(engine, days=4, end=date(2026, 11, 28), sizes=sizes)  # the same again
    assert distinct_and_kept() == grown
    total = series()
    assert total[0] == total[1] == total[2] > rows
    with engine.begin() as conn:  # lost series are named again (`parity db rebuild-state`)
        conn.execute(text("UPDATE benchmark_metric SET series_pk = NULL WHERE id % 2 = 0"))
        assert store.name_series(conn) == total[0]
    assert series() == total and distinct_and_kept() == grown


def test_series_of_more_dimensions_than_one_in_list_holds_are_made_once(engine):
    """More distinct series than one IN list of keys takes: each is made once, and asking
    again names the same ones."""
    from parity.db import store

    upgrade(engine)
    dims = [("serving", "m", "total_token_throughput", "", "tok/s", "higher", f"k{i}", "fp8",
             8, None, None, None, 1024, 1024, i, None, None)
            for i in range(store.SERIES_CHUNK * 2 + 5)]
    with engine.begin() as conn:
        first = store.series_pks(conn, dims)
    with engine.begin() as conn:
        again = store.series_pks(conn, dims + dims[:3])
        kept = conn.execute(text("SELECT COUNT(*) FROM benchmark_series")).scalar()
    assert len(set(first.values())) == len(dims) == kept and again == first


def test_0019_gives_a_store_with_benchmark_rows_their_arrays(engine):
    """A 0018 store with benchmark rows upgrades in place: each job with rows gets its
    arrays (`job_benchmark`), equal to what ingest writes, and the views read the same."""
    from alembic import command

    from parity.dashboard import frames
    from parity.db import state
    from parity.db.migrate import alembic_config
    from tests.builder import Builder

    build = Builder(engine)
    for day, (amd, nv) in enumerate([(90.0, 100.0), (91.0, 101.0), (60.0, 100.0)]):
        build.bench("mi355x", amd, run=f"r{day}", day=day, repeats=[amd, amd + 1])
        build.bench("b200", nv, run=f"r{day}", day=day)
    arrays = text("SELECT job_pk, rows, ids, series, artifacts, records, \"values\" "
                  "FROM job_benchmark ORDER BY job_pk")
    with engine.connect() as conn:
        written = [tuple(bytes(v) if isinstance(v, memoryview) else v for v in r)
                   for r in conn.execute(arrays).all()]
    ratios = frames.performance_parity(engine)
    assert len(written) == 6 and sum(r[1] for r in written) == 9 and len(ratios) == 1
    command.downgrade(alembic_config(engine), "0018")
    assert "job_benchmark" not in inspect(engine).get_table_names()
    upgrade(engine)
    assert current_revision(engine) == HEAD
    with engine.connect() as conn:
        assert [tuple(bytes(v) if isinstance(v, memoryview) else v for v in r)
                for r in conn.execute(arrays).all()] == written
    pd.testing.assert_frame_equal(frames.performance_parity(engine), ratios)
    with engine.connect() as conn:
        got = state.read_benchmarks(conn, [r[0] for r in written])
    assert sorted(got["values"].tolist()) == sorted([90.0, 91.0, 91.0, 92.0, 60.0, 61.0,
                                                     100.0, 101.0, 100.0])
