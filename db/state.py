"""State derived from the raw results and kept with them: the per-job outcome vectors
(`job_outcome`, `db.vectors`), whose sets of test ids are stored once each (`test_set`),
and each job's benchmark rows as arrays (`job_benchmark`, `benchmarks`).

The writer adds a report's tests to its job's vector in the transaction that stores the
report's results, so the two never disagree and a killed ingest leaves neither. `complete()`
fills the vectors of jobs that have results but no vector (a store upgraded from before the
table existed); `rebuild()` derives every vector again from the raw rows, which must give
exactly what ingest maintained (a test checks it), except for jobs whose plain rows
retention dropped (`db.retention`): their vectors are kept as they are.
"""
from __future__ import annotations

import hashlib
from typing import Callable, Iterable

import numpy as np
from sqlalchemy import Connection, Engine, delete, exists, select, text

from parity.db import store
from parity.db.models import (ALIAS, BenchmarkMetric, CiJob, JobBenchmark, JobOutcome,
                               TestCase, TestResult, TestSet)
from parity.db.vectors import CODES, EMPTY, Vector, codes, ids_from_bytes, merge, reduce

CHUNK = 500  # jobs per read of vectors
DERIVE_CHUNK = 40  # jobs per read of raw rows when deriving vectors (a few hundred MB at most)


def read(conn: Connection, job_pks: Iterable[int],
         fields: Iterable[str] = CODES) -> dict[int, Vector]:
    """The vectors of these jobs (a job without tests has none). Each distinct set of test
    ids among them is read and decoded once, and their vectors share it (the same array).
    `fields`: which code arrays to read (`db.vectors.CODES`), the others left None. A
    history that follows outcomes alone reads a third of the bytes: the 1,020 jobs of one
    `alerts` call's streaks, the rows alone: 11 -> 5.5 ms on SQLite, 40 -> 17 ms on
    PostgreSQL."""
    fields = set(fields)
    columns = [c for c in CODES if c in fields]  # as stored: SQLite reads a row in order
    if len(columns) != len(fields):
        raise ValueError(f"unknown fields {sorted(fields - set(CODES))} (known: {CODES})")
    wanted = sorted({int(j) for j in job_pks})
    rows = rows_by_key(conn, f"SELECT {', '.join(['job_pk', 'set_pk', *columns])} FROM "
                             "job_outcome", "job_pk", wanted)
    sets = {int(pk): ids_from_bytes(ids) for pk, ids in rows_by_key(
        conn, "SELECT id, test_ids FROM test_set", "id", sorted({int(r[1]) for r in rows}))}
    return {int(job_pk): Vector.from_codes(sets[int(set_pk)], **dict(zip(columns, arrays)),
                                           **{c: None for c in CODES if c not in columns})
            for job_pk, set_pk, *arrays in rows}


def rows_by_key(conn: Connection, sql: str, key: str, values: list[int],
                key_at: int | None = None) -> list[tuple]:
    """The rows of `sql` whose `key` is one of `values`, as the driver gives them (arrays as
    bytes), in the caller's transaction. On PostgreSQL through psycopg's binary results
    (`store.rows_by_ids`, which reads ids that fill their span as a range when `key_at`
    says where the key is in a row): the arrays arrive as their bytes rather than as hex
    text to decode, which was most of a history view's read there (1,000 vectors on the
    50M store: 0.3-0.4 s -> 0.1 s). Elsewhere through SQLAlchemy's driver-level execution,
    so that the query-plan test hears these reads."""
    if conn.dialect.name == "postgresql":
        return store.rows_by_ids(conn, sql, key, values, binary=True, key_at=key_at)
    out: list[tuple] = []
    mark = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    for i in range(0, len(values), CHUNK):  # the driver's values: bytes, no processing
        part = tuple(values[i:i + CHUNK])
        out += conn.exec_driver_sql(
            f"{sql} WHERE {key} IN ({', '.join([mark] * len(part))})", part).all()
    return out


def alias_rows(conn: Connection) -> list[tuple[int, int]]:
    """The (test id, parity id) rows of the tests whose parity key differs from their key,
    as the driver's cursor gives them: they are looked up as arrays (`vectors.Aliases`),
    and a dict of them made a Python int of every id first."""
    read = f"SELECT id, parity_id FROM {TestCase.__tablename__}"
    if conn.dialect.name == "postgresql":
        # PostgreSQL's planner takes `parity_id <> id` for most rows and scans every test,
        # where the partial index holds the few (`store.by_index`). Through the driver's
        # cursor: SQLAlchemy's statements and rows were half of it (5.1 -> 3.1 ms on the
        # 17M store)
        with store.by_index(conn), store.dbapi_cursor(conn) as (cursor, _):
            cursor.execute(f"{read} WHERE {ALIAS}")
            return cursor.fetchall()
    # SQLite walks the whole parity-id index rather than the partial one that holds the few
    # (171,000 tests, 3,000 aliases: 20 -> 8 ms); SQLAlchemy renders no SQLite hint
    hint = " INDEXED BY ix_test_case_alias" if conn.dialect.name == "sqlite" else ""
    result = conn.exec_driver_sql(f"{read}{hint} WHERE {ALIAS}")
    try:
        return result.cursor.fetchall()
    finally:
        result.close()


def _write(conn: Connection, job_pk: int, vector: Vector) -> None:
    ids, outcomes, skips, reruns = vector.to_bytes()
    t = JobOutcome.__table__
    conn.execute(delete(t).where(t.c.job_pk == job_pk))
    conn.execute(t.insert().values(job_pk=job_pk, tests=len(vector), set_pk=_set(conn, ids),
                                   outcomes=outcomes, skips=skips, reruns=reruns))


def _set(conn: Connection, ids: bytes) -> int:
    """The id of the stored set of these test ids, stored now if it is new (or by an
    ingest beside this one, which a store on PostgreSQL allows: then that one's)."""
    t = TestSet.__table__
    digest = hashlib.blake2b(ids, digest_size=16).digest()
    find = select(t.c.id).where(t.c.digest == digest)
    found = conn.execute(find).scalar()
    if found is None:
        conn.execute(text(f"INSERT INTO {t.name} (digest, tests, test_ids) VALUES "
                          "(:digest, :tests, :ids) ON CONFLICT (digest) DO NOTHING"),
                     {"digest": digest, "tests": len(ids) // 8, "ids": ids})
        found = conn.execute(find).scalar_one()
    return int(found)


def forget_unused_sets(conn: Connection) -> int:
    """Drop the test sets no job's vector points to any more (their jobs were deleted or
    derived again with other tests); how many."""
    t = TestSet.__table__
    return max(conn.execute(delete(t).where(
        ~exists().where(JobOutcome.set_pk == t.c.id))).rowcount or 0, 0)


def add(conn: Connection, job_pk: int, test_ids: list[int], outcomes: list[str],
        skip_categories: list[str | None], rerun_counts: list[int]) -> None:
    """Merge one report's tests into its job's vector (in the caller's transaction)."""
    new = reduce(test_ids, *codes(outcomes, skip_categories, rerun_counts))
    old = read(conn, [job_pk]).get(job_pk, EMPTY)
    _write(conn, job_pk, merge(old, new))


def _derive(conn: Connection, job_pks: list[int]) -> dict[int, Vector]:
    """Vectors of these jobs from their raw rows."""
    r = TestResult
    rows = conn.execute(select(r.job_pk, r.test_pk, r.outcome, r.skip_category, r.rerun_count)
                        .where(r.job_pk.in_(job_pks)).order_by(r.job_pk)).all()
    if not rows:
        return {}
    jobs = np.fromiter((row[0] for row in rows), np.int64, len(rows))
    out, skip, rerun = codes([row[2] for row in rows], [row[3] for row in rows],
                             [row[4] for row in rows])
    ids = np.fromiter((row[1] for row in rows), np.int64, len(rows))
    cuts = np.flatnonzero(np.diff(jobs)) + 1
    return {int(jobs[a]): reduce(ids[a:b], out[a:b], skip[a:b], rerun[a:b])
            for a, b in zip(np.r_[0, cuts], np.r_[cuts, len(rows)])}


def _fill(engine: Engine, job_pks: list[int], echo: Callable[[str], None]) -> int:
    done = 0
    for i in range(0, len(job_pks), DERIVE_CHUNK):
        with engine.begin() as conn:
            for job_pk, vector in _derive(conn, job_pks[i:i + DERIVE_CHUNK]).items():
                _write(conn, job_pk, vector)
                done += 1
        if (i // DERIVE_CHUNK) % 50 == 49:
            echo(f"state: {min(i + DERIVE_CHUNK, len(job_pks)):,}/{len(job_pks):,} jobs")
    return done


def _jobs_with_results(conn: Connection, without_vector: bool = False) -> list[int]:
    """Jobs that have results (one key lookup per job, not a scan of the results), except
    pruned ones: their vector is the record of the rows retention dropped."""
    stmt = select(CiJob.id).where(exists().where(TestResult.job_pk == CiJob.id),
                                  CiJob.raw_pruned_at.is_(None))
    if without_vector:
        stmt = stmt.where(~exists().where(JobOutcome.job_pk == CiJob.id))
    return list(conn.execute(stmt.order_by(CiJob.id)).scalars())


def complete(engine: Engine, echo: Callable[[str], None] = lambda line: None) -> int:
    """Derive the vectors of the jobs that lack one, and the benchmark arrays
    (`complete_benchmarks`); the number of vectors derived."""
    with engine.connect() as conn:
        todo = _jobs_with_results(conn, without_vector=True)
    complete_benchmarks(engine)
    return _fill(engine, todo, echo) if todo else 0


def rebuild(engine: Engine, echo: Callable[[str], None] = lambda line: None) -> int:
    """Derive every job's vector and benchmark arrays (`rebuild_benchmarks`) again from the
    raw rows; the number of vectors. Each chunk of jobs is replaced in its own transaction,
    so an interrupted rebuild leaves every vector either the old one or the new one, both
    derived from the same rows."""
    echo(f"state: the benchmark arrays of {rebuild_benchmarks(engine):,} jobs")
    with engine.connect() as conn:
        jobs = _jobs_with_results(conn)
    done = _fill(engine, jobs, echo)
    with engine.begin() as conn:  # jobs whose results are gone keep no vector (unless pruned)
        t = JobOutcome.__table__
        conn.execute(delete(t).where(~exists().where(TestResult.job_pk == t.c.job_pk),
                                     ~exists().where(CiJob.id == t.c.job_pk,
                                                     CiJob.raw_pruned_at.is_not(None))))
        forget_unused_sets(conn)
    return done


# each array's stored type, little-endian as the vectors' ids (`db.vectors`)
BENCHMARK_ARRAYS = {"ids": "<i8", "series": "<i8", "artifacts": "<i8", "records": "<i8",
                    "values": "<f8"}


def benchmarks(conn: Connection, job_pks: Iterable[int]) -> None:
    """Derive these jobs' `job_benchmark` rows from their benchmark rows (in the caller's
    transaction: the writer's, right after it stored them); a job without any has none."""
    wanted = sorted({int(j) for j in job_pks})
    if not wanted:
        return
    m, t = BenchmarkMetric, JobBenchmark.__table__
    rows = conn.execute(select(m.job_pk, m.id, m.series_pk, m.artifact_pk, m.record_no, m.value)
                        .where(m.job_pk.in_(wanted)).order_by(m.job_pk, m.id)).all()
    conn.execute(delete(t).where(t.c.job_pk.in_(wanted)))
    if not rows:
        return
    jobs, ids, series, artifacts, records, values = zip(*rows)
    jobs = np.array(jobs, np.int64)
    columns = {"ids": ids, "series": [s or 0 for s in series],  # 0: a row without a series
               "artifacts": artifacts, "records": records,
               "values": values}  # None becomes NaN as a float
    columns = {name: np.array(c, BENCHMARK_ARRAYS[name]) for name, c in columns.items()}
    cuts = np.flatnonzero(np.diff(jobs)) + 1
    conn.execute(t.insert(), [
        {"job_pk": int(jobs[a]), "rows": int(b - a),
         **{name: c[a:b].tobytes() for name, c in columns.items()}}
        for a, b in zip(np.r_[0, cuts], np.r_[cuts, len(rows)])])


def read_benchmarks(conn: Connection, job_pks: Iterable[int]) -> dict[str, np.ndarray]:
    """The `job_benchmark` arrays of these jobs joined, with each row's `job_pk`, in job and
    then row id order."""
    wanted = sorted({int(j) for j in job_pks})
    found = rows_by_key(conn, "SELECT job_pk, ids, series, artifacts, records, \"values\" "
                        "FROM job_benchmark", "job_pk", wanted, key_at=0)
    found.sort(key=lambda r: r[0])
    out = {name: np.frombuffer(b"".join(bytes(r[i]) for r in found), stored)
           .astype(stored[1:], copy=False)  # native order, as the vectors' ids
           for i, (name, stored) in enumerate(BENCHMARK_ARRAYS.items(), 1)}
    out["job_pk"] = np.repeat(np.array([r[0] for r in found], np.int64),
                              [len(r[1]) // 8 for r in found])
    return out


def _jobs_with_benchmarks(conn: Connection, without_arrays: bool = False) -> list[int]:
    stmt = select(CiJob.id).where(exists().where(BenchmarkMetric.job_pk == CiJob.id))
    if without_arrays:
        stmt = stmt.where(~exists().where(JobBenchmark.job_pk == CiJob.id))
    return list(conn.execute(stmt.order_by(CiJob.id)).scalars())


def _fill_benchmarks(engine: Engine, job_pks: list[int]) -> int:
    for i in range(0, len(job_pks), CHUNK):
        with engine.begin() as conn:
            benchmarks(conn, job_pks[i:i + CHUNK])
    return len(job_pks)


def complete_benchmarks(engine: Engine) -> int:
    """Derive the arrays of the jobs that have benchmark rows but none; how many."""
    with engine.connect() as conn:
        todo = _jobs_with_benchmarks(conn, without_arrays=True)
    return _fill_benchmarks(engine, todo)


def rebuild_benchmarks(engine: Engine) -> int:
    """Derive every job's benchmark arrays again from its rows; the number of jobs. Each
    chunk is replaced in its own transaction; arrays of jobs whose rows are gone go."""
    with engine.connect() as conn:
        jobs = _jobs_with_benchmarks(conn)
    done = _fill_benchmarks(engine, jobs)
    with engine.begin() as conn:
        t = JobBenchmark.__table__
        conn.execute(delete(t).where(~exists().where(BenchmarkMetric.job_pk == t.c.job_pk)))
    return done
