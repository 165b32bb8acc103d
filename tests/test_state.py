"""The state ingest keeps beside the raw results (per-job outcome vectors) is exactly what a
rebuild derives from the raw rows: after a demo history, after reports that repeat a test in
one job, after an upgrade of a store that had results before the state existed, and after a
rolled-back write, on both backends."""
from __future__ import annotations

from datetime import date

import numpy as np
import pytest
from sqlalchemy import select, text

from parity.collectors import demo
from parity.collectors.formats import records
from parity.collectors.formats.records import ParseResult
from parity.collectors.writer import ArtifactInfo, Provenance, Writer
from parity.db import models, state, store, vectors
from parity.db.hardware import vocabulary
from parity.db.migrate import upgrade
from parity.db.models import JobOutcome


def snapshot(engine) -> dict:
    """Each job's vector as stored: its count, its set's test ids and its codes."""
    t, s = JobOutcome, models.TestSet
    with engine.connect() as conn:
        return {row[0]: tuple(row[1:]) for row in conn.execute(
            select(t.job_pk, t.tests, s.test_ids, t.outcomes, t.skips, t.reruns)
            .join(s, s.id == t.set_pk).order_by(t.job_pk))}


def bench_snapshot(engine) -> dict:
    """Each job's benchmark arrays as stored (`job_benchmark`)."""
    t = models.JobBenchmark.__table__
    with engine.connect() as conn:
        return {row[0]: tuple(row[1:]) for row in conn.execute(select(t).order_by(t.c.job_pk))}


def report(tests: dict[str, str], reasons=None, reruns=None) -> ParseResult:
    reasons, reruns = reasons or {}, reruns or {}
    return ParseResult(format="junit", tests=[
        records.TestRecord(classname="tests.kernels.test_attn", name=name, params=None,
                           outcome=out, skip_reason=reasons.get(name),
                           rerun_count=reruns.get(name, 0)) for name, out in tests.items()])


def write(engine, result: ParseResult, sha: str, job: str = "j1") -> None:
    prov = Provenance(run_id="r1", job_id=job, framework="vllm", runner_labels=["mi300_1"])
    art = ArtifactInfo(path=f"{sha}.xml", sha256=sha, size_bytes=0, format="junit",
                       parser_version="t")
    with store.bulk_transaction(engine) as conn:
        Writer(vocabulary()).write(conn, result, prov, art)


def test_repeated_tests_and_shards_reduce_to_the_worst_outcome(engine):
    upgrade(engine)
    write(engine, report({"a": "passed", "b": "skipped", "c": "passed", "e": "skipped"},
                         {"b": "requires 8 GPUs", "e": "not supported on ROCm"}), "s1")
    write(engine, report({"a": "failed", "b": "passed", "d": "error"}, reruns={"b": 2}),
          "s2")  # a second shard
    kept = snapshot(engine)
    (vector_bytes,) = [v[1:] for v in kept.values()]
    v = vectors.Vector.from_bytes(*vector_bytes)
    with engine.connect() as conn:
        ids = dict(conn.execute(text("SELECT name, id FROM test_case")).all())
    got = {name: vectors.OUTCOMES[v.outcomes[np.searchsorted(v.ids, i)]] for name, i in ids.items()}
    # worst first: error, failed, passed, xpassed, xfailed, skipped (a skip in one shard and
    # a pass in another is a pass)
    assert got == {"a": "failed", "b": "passed", "c": "passed", "d": "error", "e": "skipped"}
    skip = {n: vectors.SKIPS[v.skips[np.searchsorted(v.ids, i)]] for n, i in ids.items()}
    assert skip == {"a": None, "b": None, "c": None, "d": None, "e": "vendor_amd"}
    rerun = {n: int(v.reruns[np.searchsorted(v.ids, i)]) for n, i in ids.items()}
    assert rerun == {"a": 0, "b": 1, "c": 0, "d": 0, "e": 0}
    state.rebuild(engine)
    assert snapshot(engine) == kept


def test_a_vector_read_with_some_codes_has_those_and_reads_only_those(engine):
    """`state.read` with some of the code arrays gives exactly those (the others None) and
    selects only those columns; a view call's `tables.job_vectors` reads a job's other
    arrays when a later part asks for them, and ends with the arrays a full read gives."""
    from sqlalchemy import event

    from parity.dashboard import tables

    upgrade(engine)
    write(engine, report({"a": "failed", "b": "skipped", "c": "passed"},
                         {"b": "not supported on ROCm"}, reruns={"a": 1}), "s1")
    write(engine, report({"a": "passed", "d": "error"}), "s2", job="j2")
    with engine.connect() as conn:
        j1, j2 = conn.execute(text("SELECT job_pk FROM job_outcome ORDER BY job_pk")).scalars()
        full = state.read(conn, [j1, j2])
        part = state.read(conn, [j1, j2], ("reruns", "outcomes"))
        with pytest.raises(ValueError, match="unknown fields"):
            state.read(conn, [j1], ("outcomes", "passed"))
    assert sorted(full) == [j1, j2] and full[j1].skips.any() and full[j1].reruns.any()
    for j, v in part.items():
        assert v.skips is None and np.array_equal(v.ids, full[j].ids)
        assert np.array_equal(v.outcomes, full[j].outcomes)
        assert np.array_equal(v.reruns, full[j].reruns)
    seen: list[str] = []

    def hear(conn, cursor, statement, *rest):
        seen.append(statement)
    event.listen(engine, "before_cursor_execute", hear)
    try:
        with tables.one_read():
            first = tables.job_vectors(engine, [j1, j2], ("outcomes",))
            assert all(v.skips is None and v.reruns is None for v in first.values())
            again = tables.job_vectors(engine, [j2, j1])  # every array: the two missing read
            assert tables.job_vectors(engine, [j1], ("outcomes",))[j1] is again[j1]
    finally:
        event.remove(engine, "before_cursor_execute", hear)
    if engine.dialect.name != "postgresql":  # (PostgreSQL's reads go through psycopg itself)
        assert [s.split(" FROM")[0] for s in seen if "FROM job_outcome" in s] == [
            "SELECT job_pk, set_pk, outcomes", "SELECT job_pk, set_pk, skips, reruns"]
    for j in (j1, j2):
        for f in ("ids", *vectors.CODES):
            assert np.array_equal(getattr(again[j], f), getattr(full[j], f)), (j, f)


def test_a_rolled_back_write_leaves_neither_results_nor_state(engine):
    upgrade(engine)
    prov = Provenance(run_id="r1", job_id="j1", framework="vllm")
    art = ArtifactInfo(path="x.xml", sha256="x", size_bytes=0, format="junit", parser_version="t")
    with pytest.raises(RuntimeError):
        with store.bulk_transaction(engine) as conn:
            Writer(vocabulary()).write(conn, report({"a": "passed"}), prov, art)
            raise RuntimeError("killed mid-ingest")
    with engine.connect() as conn:
        assert conn.execute(text("SELECT COUNT(*) FROM test_result")).scalar() == 0
    assert snapshot(engine) == {}


def test_an_upgraded_store_gets_its_state_from_the_raw_rows(engine):
    demo.build(engine, days=2, end=date(2026, 11, 27), sizes=demo.plan(2, results=5_000))
    kept = snapshot(engine)
    from alembic import command

    from parity.db.migrate import alembic_config

    command.downgrade(alembic_config(engine), "0006")  # a store from before the state
    upgrade(engine)
    assert snapshot(engine) == kept


def test_rebuild_state_command(tmp_path, capsys):
    from parity.cli import main

    db = str(tmp_path / "s.db")
    assert main(["--db", db, "demo", "--days", "2", "--results", "4000"]) == 0
    from parity.db.engine import make_engine

    engine = make_engine(db)
    series = text("SELECT b.id, s.key FROM benchmark_metric b "
                  "JOIN benchmark_series s ON s.id = b.series_pk ORDER BY b.id")
    with engine.connect() as conn:
        named = conn.execute(series).all()
    benched = bench_snapshot(engine)
    with engine.begin() as conn:  # totals out of step with the groups: derived again
        conn.execute(text("UPDATE job_summary SET total = 0, failed = failed + 1"))
        conn.execute(text("DELETE FROM job_summary WHERE job_pk = (SELECT MIN(job_pk) "
                          "FROM job_summary)"))
        # benchmark rows that lost their series or name another one, and a series gone
        conn.execute(text("UPDATE benchmark_metric SET series_pk = NULL WHERE id % 3 = 0"))
        conn.execute(text("UPDATE benchmark_metric SET series_pk = (SELECT MAX(id) FROM "
                          "benchmark_series) WHERE id % 3 = 1"))
        conn.execute(text("DELETE FROM benchmark_series WHERE id = (SELECT MIN(id) "
                          "FROM benchmark_series)"))
    assert main(["--db", db, "db", "rebuild-state"]) == 0
    out = capsys.readouterr().out
    assert "rebuilt the outcome vectors of" in out
    assert f"the series of {len(named):,} benchmark rows and" in out
    assert "the failure streaks of 0 lanes" in out  # two nights: none before the cutoff
    kept, summed = totals(engine)
    assert kept and kept == summed
    with engine.connect() as conn:  # the same series as ingest named (by key)
        assert len(named) > 100 and conn.execute(series).all() == named
        ids = dict(conn.execute(text("SELECT b.id, b.series_pk FROM benchmark_metric b")).all())
    # the benchmark arrays were derived after the series were: they name them
    got = bench_snapshot(engine)
    assert got.keys() == benched.keys()
    for job, (rows, row_ids, series_pks, *_) in got.items():
        assert np.frombuffer(series_pks, "<i8").tolist() == [
            ids[i] for i in np.frombuffer(row_ids, "<i8").tolist()]
        assert rows == benched[job][0] and row_ids == benched[job][1]


@pytest.mark.parametrize("revision", ["0006", "0011"])  # before the vectors, the job totals
def test_views_on_an_older_store_say_to_upgrade(sqlite_engine, revision):
    from alembic import command

    from parity.dashboard import frames
    from parity.db.migrate import alembic_config

    demo.build(sqlite_engine, days=1, end=date(2026, 11, 27), sizes=demo.plan(1, results=2_000))
    command.downgrade(alembic_config(sqlite_engine), revision)
    with pytest.raises(RuntimeError, match="older schema: run `parity db upgrade`"):
        frames.pass_rate_parity(sqlite_engine)
    path = sqlite_engine.url.database  # opened read-only by path, as the app does: named
    with pytest.raises(RuntimeError, match=f"store sqlite:///{path} is at an older schema"):
        frames.scorecard(path)


def test_deriving_state_reports_progress_every_2000_jobs(sqlite_engine):
    """A rebuild of a big store says how far it got: one line per 50 chunks of 40 jobs."""
    upgrade(sqlite_engine)
    lines: list[str] = []
    assert state._fill(sqlite_engine, list(range(1, 4011)), lines.append) == 0  # no results
    assert lines == ["state: 2,000/4,010 jobs", "state: 4,000/4,010 jobs"]
    lines.clear()
    state._fill(sqlite_engine, list(range(1, 1961)), lines.append)  # 49 chunks
    assert lines == []


def test_a_rebuild_drops_vectors_of_deleted_results_but_keeps_pruned_ones(sqlite_engine):
    """A job whose results are gone loses its vector on rebuild, unless retention pruned
    it (then the vector is the record of its rows), whatever other jobs were pruned."""
    upgrade(sqlite_engine)
    write(sqlite_engine, report({"a": "passed"}), "s1", job="pruned")
    write(sqlite_engine, report({"b": "failed"}), "s2", job="deleted")
    write(sqlite_engine, report({"c": "passed"}), "s3", job="kept")
    with sqlite_engine.begin() as conn:
        jobs = dict(conn.execute(text("SELECT job_id, id FROM ci_job")).all())
        conn.execute(text("UPDATE ci_job SET raw_pruned_at = '2026-11-30' WHERE id = :j"),
                     {"j": jobs["pruned"]})
        conn.execute(text("DELETE FROM test_result WHERE job_pk IN (:a, :b)"),
                     {"a": jobs["pruned"], "b": jobs["deleted"]})
    state.rebuild(sqlite_engine)
    assert set(snapshot(sqlite_engine)) == {jobs["pruned"], jobs["kept"]}


def _sets(engine) -> list[bytes]:
    with engine.connect() as conn:
        return sorted(conn.execute(text("SELECT test_ids FROM test_set")).scalars())


def test_jobs_that_ran_the_same_tests_share_one_stored_set(engine):
    """A set of test ids is stored once however many jobs ran exactly those tests, their
    vectors read it once (one array), and a set no vector points to any more is dropped
    by a rebuild."""
    upgrade(engine)
    write(engine, report({"a": "passed", "b": "failed"}), "s1", job="night1")
    write(engine, report({"a": "failed", "b": "skipped"}), "s2", job="night2")
    write(engine, report({"a": "passed", "c": "passed"}), "s3", job="other")
    assert len(_sets(engine)) == 2
    with engine.connect() as conn:
        jobs = dict(conn.execute(text("SELECT job_id, id FROM ci_job")).all())
        got = state.read(conn, jobs.values())
    assert got[jobs["night1"]].ids is got[jobs["night2"]].ids
    assert vectors.OUTCOMES[got[jobs["night2"]].outcomes[0]] == "failed"  # its own codes
    assert not np.array_equal(got[jobs["other"]].ids, got[jobs["night1"]].ids)
    with engine.begin() as conn:  # the only job that ran a, c loses its results
        conn.execute(text("DELETE FROM test_result WHERE job_pk = :j"), {"j": jobs["other"]})
    state.rebuild(engine)
    assert set(snapshot(engine)) == {jobs["night1"], jobs["night2"]}
    assert _sets(engine) == [got[jobs["night1"]].ids.astype("<i8").tobytes()]


def test_two_ingests_storing_one_new_set_at_once_share_it(pg_engine):
    """On PostgreSQL two ingests may run at once: when both store the same new set, the
    second waits for the first and takes its row instead of failing on the digest."""
    import threading

    upgrade(pg_engine)
    ids = np.arange(1, 6, dtype="<i8").tobytes()
    with pg_engine.connect() as first:
        with first.begin():
            mine = state._set(first, ids)  # stored, not committed yet
            theirs: list = []

            def second() -> None:
                with pg_engine.begin() as conn:
                    theirs.append(state._set(conn, ids))

            other = threading.Thread(target=second)
            other.start()
            other.join(timeout=1.0)
            assert other.is_alive(), "the second ingest should wait for the first one's set"
        other.join(timeout=30)
    assert theirs == [mine]
    assert _sets(pg_engine) == [ids]


def test_0018_stores_each_set_once_and_keeps_every_vector(engine):
    """A 0017 store with vectors upgrades in place: each job keeps its tests and codes, and
    the jobs that ran the same tests share one set; the downgrade gives the ids back."""
    from alembic import command

    from parity.db.migrate import alembic_config

    demo.build(engine, days=2, end=date(2026, 11, 27), sizes=demo.plan(2, results=5_000))
    kept = snapshot(engine)
    command.downgrade(alembic_config(engine), "0017")
    with engine.connect() as conn:
        old = {j: (n, bytes(i), bytes(o), bytes(k), bytes(r)) for j, n, i, o, k, r in
               conn.execute(text("SELECT job_pk, tests, test_ids, outcomes, skips, reruns "
                                 "FROM job_outcome")).all()}
    assert old == {j: tuple(bytes(x) if not isinstance(x, int) else x for x in v)
                   for j, v in kept.items()}
    upgrade(engine)
    assert snapshot(engine) == kept
    assert len(_sets(engine)) == len({v[1] for v in kept.values()}) < len(kept)


def test_only_jobs_that_hold_results_are_derived(sqlite_engine):
    """A rebuild visits the jobs that have result rows, not every job: a job whose results
    were deleted (or that never had any) is left out, and one retention pruned too."""
    upgrade(sqlite_engine)
    write(sqlite_engine, report({"a": "passed"}), "s1", job="empty")
    write(sqlite_engine, report({"b": "failed"}), "s2", job="full")
    write(sqlite_engine, report({"c": "passed"}), "s3", job="pruned")
    with sqlite_engine.begin() as conn:
        jobs = dict(conn.execute(text("SELECT job_id, id FROM ci_job")).all())
        conn.execute(text("DELETE FROM test_result WHERE job_pk = :j"), {"j": jobs["empty"]})
        conn.execute(text("UPDATE ci_job SET raw_pruned_at = '2026-11-30' WHERE id = :j"),
                     {"j": jobs["pruned"]})
        conn.execute(text("DELETE FROM job_outcome"))
    with sqlite_engine.connect() as conn:
        assert state._jobs_with_results(conn) == [jobs["full"]]
        assert state._jobs_with_results(conn, without_vector=True) == [jobs["full"]]


def test_complete_derives_only_the_missing_vectors(sqlite_engine):
    upgrade(sqlite_engine)
    write(sqlite_engine, report({"a": "passed"}), "s1", job="one")
    write(sqlite_engine, report({"b": "failed"}), "s2", job="two")
    kept = snapshot(sqlite_engine)
    first = min(kept)
    with sqlite_engine.begin() as conn:
        conn.execute(text("DELETE FROM job_outcome WHERE job_pk = :j"), {"j": first})
    assert state.complete(sqlite_engine) == 1
    assert snapshot(sqlite_engine) == kept
    assert state.complete(sqlite_engine) == 0  # nothing missing: nothing derived

def totals(engine) -> tuple[list, list]:
    """Each job's kept totals, and the same summed from its group counts."""
    cols = "total, passed, failed, error, skipped, xfailed, xpassed, flaky, vendor_skipped"
    sums = ", ".join(f"SUM({c})" for c in cols.split(", "))
    with engine.connect() as conn:
        kept = conn.execute(text(f"SELECT job_pk, {cols} FROM job_summary ORDER BY job_pk")).all()
        summed = conn.execute(text(f"SELECT job_pk, {sums} FROM test_summary GROUP BY job_pk "
                                   "ORDER BY job_pk")).all()
    return [tuple(r) for r in kept], [tuple(r) for r in summed]


def test_demo_history_state_equals_a_rebuild(engine):
    demo.build(engine, days=4, end=date(2026, 11, 27), sizes=demo.plan(4, results=12_000))
    kept, summed = totals(engine)
    assert len(kept) > 10 and kept == summed  # each job's totals, kept at ingest
    with engine.begin() as conn:
        store.sum_summaries(conn)
    assert totals(engine) == (kept, kept)
    kept = snapshot(engine)
    with engine.connect() as conn:
        jobs_with_tests = conn.execute(text(
            "SELECT COUNT(DISTINCT job_pk) FROM test_result")).scalar()
        results = conn.execute(text("SELECT COUNT(*) FROM test_result")).scalar()
    assert len(kept) == jobs_with_tests and sum(v[0] for v in kept.values()) == results
    benched = bench_snapshot(engine)
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT COUNT(*) FROM benchmark_metric")).scalar()
    assert rows > 100 and sum(v[0] for v in benched.values()) == rows
    with engine.begin() as conn:  # arrays lost or out of step: derived again
        conn.execute(text("DELETE FROM job_benchmark WHERE job_pk = (SELECT MIN(job_pk) "
                          "FROM job_benchmark)"))
        conn.execute(text("UPDATE job_benchmark SET rows = 0 WHERE job_pk = (SELECT MAX("
                          "job_pk) FROM job_benchmark)"))
    assert state.rebuild(engine) == jobs_with_tests
    assert snapshot(engine) == kept
    assert bench_snapshot(engine) == benched


def test_a_killed_demo_build_leaves_whole_nights_and_state_equal_to_a_rebuild(tmp_path):
    """SIGKILL a `parity demo` mid-build: the store holds whole nights only, its state equals
    a rebuild from the raw rows, and building again completes the same history."""
    import signal
    import subprocess
    import sys
    import time

    from parity.db.engine import make_engine

    db = tmp_path / "killed.db"
    cmd = [sys.executable, "-m", "parity", "--db", str(db), "demo", "--days", "40",
           "--end", "2026-11-27", "--results", "400000"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and not (db.exists() and db.stat().st_size > 2_000_000):
        time.sleep(0.1)
    time.sleep(1.0)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    engine = make_engine(db)
    with engine.connect() as conn:
        nights = conn.execute(text("SELECT COUNT(DISTINCT run_id) FROM ci_run")).scalar()
        per_run = conn.execute(text(
            "SELECT COUNT(*) FROM ci_job GROUP BY run_pk")).scalars().all()
    assert 0 < nights < 3 * 40, "the build was not interrupted mid-way"
    assert len(set(per_run)) <= 3  # one size per framework's nightly run: no half run
    job_totals, summed = totals(engine)
    assert job_totals and job_totals == summed
    kept, benched = snapshot(engine), bench_snapshot(engine)
    state.rebuild(engine)
    assert snapshot(engine) == kept and bench_snapshot(engine) == benched
    engine.dispose()
    assert subprocess.run(cmd, capture_output=True).returncode == 0
    engine = make_engine(db)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT COUNT(DISTINCT run_id) FROM ci_run")).scalar() == 3 * 40
    kept, benched = snapshot(engine), bench_snapshot(engine)
    state.rebuild(engine)
    assert snapshot(engine) == kept and bench_snapshot(engine) == benched and benched
    engine.dispose()


def test_a_demo_build_leaves_planner_statistics_on_postgresql(pg_engine):
    """PostgreSQL plans the views' reads badly on tables it has never analysed, and reads
    no index alone before a vacuum: a bulk build vacuums and analyses them when it is
    done, whether autovacuum runs or not."""
    demo.build(pg_engine, days=1, end=date(2026, 11, 27), sizes=demo.plan(1, results=2_000))
    with pg_engine.connect() as conn:
        analysed = conn.execute(text(
            "SELECT last_analyze IS NOT NULL FROM pg_stat_user_tables "
            "WHERE relname = 'test_result'")).scalar()
        # the results' months' partitions hold them (the parent holds none to vacuum)
        vacuumed = conn.execute(text(
            "SELECT relname, last_vacuum IS NOT NULL FROM pg_stat_user_tables "
            "WHERE relname = 'test_case' OR relname LIKE 'test_result_p%' "
            "ORDER BY relname")).all()
    assert analysed
    assert len(vacuumed) >= 2 and all(done for _, done in vacuumed), vacuumed


def test_a_writer_keeps_its_hardware_and_framework_rows_and_forgets_them_after_a_rollback(
        engine):
    """One writer for many jobs looks each runner's hardware and each framework up once; a
    rolled-back write took the rows it made with it, so the writer forgets what it kept and
    the next write makes them again instead of naming rows that are not there."""
    upgrade(engine)
    writer = Writer(vocabulary())

    def prov(job: str, label: str = "mi300_1", version: str = "0.12.0") -> Provenance:
        return Provenance(run_id="r1", job_id=job, framework="vllm", framework_version=version,
                          runner_labels=[label])

    def art(sha: str) -> ArtifactInfo:
        return ArtifactInfo(path=f"{sha}.xml", sha256=sha, size_bytes=0, format="junit",
                            parser_version="t")

    def jobs() -> dict:
        with engine.connect() as conn:
            return {j: (sku, version) for j, sku, version in conn.execute(text(
                "SELECT j.job_id, h.sku, f.version FROM ci_job j "
                "JOIN hardware h ON h.id = j.hardware_id "
                "JOIN framework f ON f.id = j.framework_id"))}

    with store.bulk_transaction(engine) as conn:
        writer.write(conn, report({"a": "passed"}), prov("j1"), art("s1"))
        writer.write(conn, report({"a": "failed"}), prov("j2"), art("s2"))
    assert jobs() == {"j1": ("mi300x", "0.12.0"), "j2": ("mi300x", "0.12.0")}
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM hardware")).scalar() == 1
    with pytest.raises(RuntimeError):
        with store.bulk_transaction(engine) as conn:
            writer.write(conn, report({"a": "passed"}), prov("j3", "mi355_1", "0.13.0"),
                         art("s3"))
            raise RuntimeError("killed mid-write")
    writer.forget_cache()  # as ingest and sync do after a rolled-back file
    with store.bulk_transaction(engine) as conn:
        writer.write(conn, report({"a": "passed"}), prov("j3", "mi355_1", "0.13.0"), art("s3"))
    assert jobs()["j3"] == ("mi355x", "0.13.0")


def test_rows_of_ids_that_fill_their_range_are_the_rows_of_those_ids(engine):
    """Ids that fill at least half of their span are read as a range on PostgreSQL, the
    rows of other ids in it left out: the same rows as asked one by one, whether the ids
    are dense, sparse, gapped or name no row, on both backends."""
    demo.build(engine, days=2, end=date(2026, 11, 27), sizes=demo.plan(2, results=4_000))
    with engine.connect() as conn:
        jobs = conn.execute(text("SELECT DISTINCT job_pk FROM accuracy_metric "
                                 "ORDER BY job_pk")).scalars().all()
        top = conn.execute(text("SELECT max(id) FROM ci_job")).scalar()
        sql = "SELECT job_pk, id, task FROM accuracy_metric"
        every = list(range(min(jobs), top + 3))  # every job, and ids past the last
        cases = {"dense": every, "sparse": every[::3], "gapped": every[:2] + every[4:],
                 "one": [jobs[-1]], "none": [top + 1, top + 2]}
        for name, ids in cases.items():
            want = sorted(r for i in ids for r in conn.exec_driver_sql(
                f"{sql} WHERE job_pk = {int(i)}").all())
            got = store.rows_by_ids(conn, sql, "job_pk", ids, key_at=0)
            assert sorted(tuple(r) for r in got) == [tuple(r) for r in want], name
            assert sorted(map(tuple, state.rows_by_key(conn, sql, "job_pk", ids, key_at=0))) \
                == [tuple(r) for r in want], name
        assert len(jobs) > 1 and len(every) > len(jobs)  # the range holds ids of no row


@pytest.mark.parametrize("most", [False, True], ids=["some", "most"])
def test_parity_keys_read_through_the_index_leave_the_planner_as_it_was(engine, most,
                                                                       monkeypatch):
    """The dashboard reads the parity keys of a view's tests through the parity-id index
    (on PostgreSQL the planner is told to, in the view call's transaction, for that read
    only), or, asked for most of the stored tests, in one pass over them: either way each
    asked id's key once, vendor spellings sharing it, and an id no test has left out; the
    call's later reads are planned as before."""
    import pandas as pd

    from parity.dashboard import tables

    demo.build(engine, days=1, end=date(2026, 11, 27), sizes=demo.plan(1, results=4_000))
    with engine.connect() as conn:
        keys = dict(conn.execute(text("SELECT DISTINCT parity_id, parity_key FROM test_case"))
                    .all())
        shared = conn.execute(text("SELECT parity_id FROM test_case WHERE parity_id <> id"))\
            .scalars().all()
    # most: all but a few of the tests, from a count the demo's small store reaches
    asked = sorted(set(list(keys)[:len(keys) - 5 if most else 300]) | set(shared[:20])
                   | {12345})
    monkeypatch.setattr(tables, "SCAN_FROM", 100 if most else 10**9)
    tables._KEYS[:] = [np.empty(0, np.int64), pd.array([], dtype="str"), None]  # nothing held
    with tables.one_read():
        got = tables.parity_keys(engine, asked)
        with tables.connection(engine) as conn:
            if engine.dialect.name == "postgresql":
                assert conn.exec_driver_sql("SHOW enable_seqscan").scalar() == "on"
    assert shared and dict(zip(got["parity_id"], got["parity_key"])) == \
        {i: keys[i] for i in asked if i in keys}
    assert got["parity_id"].is_unique and 12345 not in set(got["parity_id"])


def test_aliases_are_the_vendor_named_tests_and_leave_the_planner_as_it_was(engine):
    """The tests whose parity key differs from their key, read through the partial index
    (on PostgreSQL the planner is told to for that read only): the same map as a plain
    query, and the caller's transaction keeps its planner settings."""
    demo.build(engine, days=1, end=date(2026, 11, 27), sizes=demo.plan(1, results=4_000))
    with engine.connect() as conn:
        plain = dict(conn.execute(text("SELECT id, parity_id FROM test_case "
                                       "WHERE parity_id <> id")).all())
        found = dict(state.alias_rows(conn))
        if engine.dialect.name == "postgresql":
            assert conn.exec_driver_sql("SHOW enable_seqscan").scalar() == "on"
            conn.exec_driver_sql("SET LOCAL enable_seqscan = off")
            state.alias_rows(conn)
            assert conn.exec_driver_sql("SHOW enable_seqscan").scalar() == "off"
    assert plain and found == plain
