"""The write path: natural-key upserts for provenance rows and bulk inserts for results.

Everything here runs inside the caller's transaction (`engine.begin()`), so a file is
stored whole or not at all. Bulk inserts go straight to the DB-API `executemany`: an ORM
object per test result would cost several times the parse itself.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
from contextlib import contextmanager, nullcontext
from datetime import datetime, timezone
from typing import Any, Iterable, Iterator, Sequence

from sqlalchemy import Connection, Engine, Table, and_, delete, func, select, update

from parity.db import partitions
from parity.db.models import (
    AccuracyMetric,
    Artifact,
    SERIES_DIMENSIONS,
    BenchmarkMetric,
    BenchmarkSeries,
    CiArtifact,
    CiJob,
    CiRun,
    Framework,
    Hardware,
    HttpValidator,
    IngestError,
    JobCapability,
    JobOutcome,
    JobSummary,
    RunnerSnapshot,
    SourceSync,
    SyncCheckpoint,
    SyncedRun,
    TestCase,
    TestResult,
    TestSummary,
)

COUNT_COLUMNS = ("total", "passed", "failed", "error", "skipped", "xfailed", "xpassed", "flaky",
                 "vendor_skipped")


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


@contextmanager
def bulk_transaction(engine: Engine) -> Iterator[Connection]:
    """`engine.begin()` for the bulk write path. On SQLite, foreign-key enforcement is off
    inside it: the writer only references rows it created or read in the same transaction,
    and SQLite's three parent lookups per test result cost a fifth of the result insert.
    (The pragma cannot change inside a transaction, so it is set around one.) Enforcement is
    back on before the connection goes back to the pool; PostgreSQL is left as it is."""
    with engine.connect() as conn:
        if conn.dialect.name != "sqlite":
            with conn.begin():
                yield conn
            return
        conn.exec_driver_sql("PRAGMA foreign_keys=OFF")
        conn.commit()
        try:
            with conn.begin():
                yield conn
        finally:
            conn.exec_driver_sql("PRAGMA foreign_keys=ON")
            conn.commit()


def tidy(engine: Engine) -> None:
    """After a bulk write or delete, on PostgreSQL: `VACUUM (ANALYZE)`, what autovacuum
    would do in its own time, and a server may run without it. The planner plans the
    views' reads badly without statistics (measured: 8.7 s against 2.1 s for one view on
    a 50M store that autovacuum had not analysed yet); until a vacuum sets the visibility
    map, no read is index-only; and deleted rows stay in the tables and their indexes (the
    17M store after four measured ingests, each deleted again: 520,000 dead tests beside
    41,000 live ones; the vendor spellings' read, as the planner chose it, scanned 24,000
    pages in 66 ms, and after the vacuum read 16 pages of its index alone in 0.4 ms).
    4 s on the 17M store. SQLite's default plans serve and it reuses freed pages, so it
    is left alone (its ANALYZE would scan every index)."""
    if engine.dialect.name == "postgresql":
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("VACUUM (ANALYZE)")


def test_id(test_key: str) -> int:
    """The stable 63-bit id of a test key (its interned primary key)."""
    digest = hashlib.blake2b(test_key.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") & 0x7FFF_FFFF_FFFF_FFFF


def _insert(conn: Connection, table: Table):
    """The dialect's INSERT, which has ON CONFLICT (imported on use: the PostgreSQL dialect
    costs a SQLite-only command 25 ms of start-up)."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return insert(table)


def _get_or_create(conn: Connection, model, key: dict[str, Any], extra: dict | None = None) -> int:
    return _row_or_create(conn, model, key, extra).id


def _row_or_create(conn: Connection, model, key: dict[str, Any], extra: dict | None = None,
                   columns: Sequence[str] = ()):
    """The row of `model` with this natural key, created with `extra` as needed: its `id`
    and `columns` as stored (what an upsert compares with the fields it is given)."""
    table = model.__table__
    find = select(table.c.id, *(table.c[c] for c in columns)).where(
        and_(*(table.c[k] == v for k, v in key.items())))
    found = conn.execute(find).one_or_none()
    if found is not None:
        return found
    conn.execute(_insert(conn, table).values(**key, **(extra or {})).on_conflict_do_nothing())
    return conn.execute(find).one()


def _fill_updates(conn: Connection, model, pk: int, values: dict[str, Any]) -> None:
    """Set the given non-empty fields (a later sync knows more: conclusion, times)."""
    values = {k: v for k, v in values.items() if v not in (None, "")}
    if values:
        table = model.__table__
        conn.execute(update(table).where(table.c.id == pk).values(**values))


def upsert_hardware(conn: Connection, vendor: str, sku: str = "", arch: str = "",
                    gpu_count: int = 0, raw_name: str = "", mapped: bool = True) -> int:
    key = dict(vendor=vendor, sku=sku, arch=arch, gpu_count=gpu_count,
               raw_name="" if mapped else raw_name)
    return _get_or_create(conn, Hardware, key, {"mapped": mapped})


def upsert_framework(conn: Connection, name: str, version: str = "", image: str = "",
                     rocm_version: str = "", cuda_version: str = "") -> int:
    return _get_or_create(conn, Framework, dict(
        name=name, version=version or "", image=image or "",
        rocm_version=rocm_version or "", cuda_version=cuda_version or ""))


RUN_KEY = ("ci_system", "repository", "run_id", "attempt")


def upsert_run(conn: Connection, **run: Any) -> int:
    """The run's primary key, created as needed; the fields given fill or update it. When a
    later sync moves the run's time to another day (or gives a time to a run stored without
    one), its results move with it, so that `test_result.run_day` is always the day of its
    run's time (`run_days`; on PostgreSQL, into that month's partition)."""
    key = {k: run.pop(k) for k in RUN_KEY}
    stored = _row_or_create(conn, CiRun, key, {k: v for k, v in run.items() if v is not None},
                            ("created_at", "untrusted"))
    pk = stored.id
    created, untrusted = run.get("created_at"), run.get("untrusted")
    # a run stored before that moves in time or is found untrusted takes the failure
    # streaks its jobs counted in with it (imported here: `streaks` reads the vectors
    # through `db.state`, which imports this module)
    from parity.db import streaks

    moves = (created is not None and created != stored.created_at) or \
        bool(untrusted and untrusted != stored.untrusted)
    with streaks.watching(conn, runs=[pk]) if moves else nullcontext():
        _fill_updates(conn, CiRun, pk, run)
        if created is not None:
            before, after = partitions.day_of(stored.created_at), _run_day(conn, pk)
            if after != before:
                partitions.ensure(conn, [after])
                jobs = select(CiJob.id).where(CiJob.run_pk == pk).scalar_subquery()
                conn.execute(update(TestResult.__table__)
                             .where(TestResult.__table__.c.job_pk.in_(jobs))
                             .values(run_day=after))
    return pk


def _run_day(conn: Connection, run_pk: int) -> int:
    return partitions.day_of(conn.execute(select(CiRun.created_at)
                                          .where(CiRun.id == run_pk)).scalar())


def run_days(conn: Connection, job_pks: Sequence[int]) -> list[int]:
    """The days (`test_result.run_day`) the results of these jobs are stored under: what a
    read by job names on PostgreSQL so that only those months' partitions are visited."""
    when = conn.execute(select(CiRun.created_at).distinct()
                        .join(CiJob, CiJob.run_pk == CiRun.id)
                        .where(CiJob.id.in_(list(job_pks)))).scalars()
    return sorted({partitions.day_of(w) for w in when})


def upsert_job(conn: Connection, run_pk: int, job_id: str, **job: Any) -> int:
    """The job's primary key, created as needed; the fields given fill or update it. A job
    stored before that moves to another lane (framework, hardware or suite) takes the
    failure streaks it counted in with it."""
    from parity.db import streaks  # see `upsert_run`

    lane = ("framework_id", "hardware_id", "suite")
    found = _row_or_create(conn, CiJob, {"run_pk": run_pk, "job_id": job_id},
                           {k: v for k, v in job.items() if v is not None}, lane)
    moves = any(job.get(k) not in (None, "") and job[k] != found._mapping[k] for k in lane)
    with streaks.watching(conn, jobs=[found.id]) if moves else nullcontext():
        _fill_updates(conn, CiJob, found.id, job)
    return found.id


def find_run(conn: Connection, ci_system: str, repository: str, run_id: str,
             attempt: int = 1) -> int | None:
    t = CiRun.__table__
    return conn.execute(select(t.c.id).where(
        t.c.ci_system == ci_system, t.c.repository == repository, t.c.run_id == run_id,
        t.c.attempt == attempt)).scalar()


def clear_job_results(conn: Connection, job_pk: int) -> None:
    """Drop a job's results (its files, their rows, its summaries and outcome vector) before
    a newer version of the one document that holds them is stored, and what the failure
    streaks counted of them."""
    from parity.db import streaks  # see `upsert_run`

    with streaks.watching(conn, jobs=[job_pk]):
        conn.execute(delete(Artifact.__table__).where(Artifact.__table__.c.job_pk == job_pk))
        for model in (TestSummary, JobSummary, JobOutcome):
            conn.execute(delete(model.__table__).where(model.__table__.c.job_pk == job_pk))


def find_artifact(conn: Connection, job_pk: int, sha256: str) -> int | None:
    t = Artifact.__table__
    return conn.execute(
        select(t.c.id).where(t.c.job_pk == job_pk, t.c.sha256 == sha256)).scalar()


def add_artifact(conn: Connection, job_pk: int, **art: Any) -> int:
    art.setdefault("ingested_at", utcnow())
    return conn.execute(
        Artifact.__table__.insert().values(job_pk=job_pk, **art).returning(Artifact.__table__.c.id)
    ).scalar_one()


@contextmanager
def dbapi_cursor(conn: Connection, binary: bool = False) -> Iterator[tuple[Any, str]]:
    """The DB-API cursor of the connection's own transaction, and the driver's parameter
    mark. The bulk paths and the dashboard's reads by id use it directly: SQLAlchemy's
    per-row parameter handling, or a statement compiled per chunk, would cost more than
    the work itself. `binary`: on psycopg, results as their bytes, not text to decode."""
    dbapi = conn.connection.dbapi_connection
    cursor = dbapi.cursor(binary=True) if binary and conn.dialect.driver == "psycopg" \
        else dbapi.cursor()
    try:
        yield cursor, "?" if conn.dialect.paramstyle == "qmark" else "%s"
    finally:
        cursor.close()


@contextmanager
def by_index(conn: Connection) -> Iterator[None]:
    """On PostgreSQL, the reads of this block planned without sequential scans, and the
    caller's setting put back after (`SET LOCAL`, in its transaction); elsewhere nothing.
    For reads of a small part of a large table by its index (a list of ids, the rows of a
    partial index), which the planner, estimating from the list's size or the condition
    alone, would scan whole: the 17M store's 38,000 parity keys of a matrix among 561,000
    tests, 140 -> 65 ms (a scan of every page against 2,144 of them); its 3,000 vendor
    spellings, 50 -> 8 ms."""
    if conn.dialect.name != "postgresql":
        yield
        return
    with dbapi_cursor(conn) as (cursor, _):
        cursor.execute("SHOW enable_seqscan")
        was = cursor.fetchone()[0]
        cursor.execute("SET LOCAL enable_seqscan = off")
        try:
            yield
        finally:
            cursor.execute(f"SET LOCAL enable_seqscan = {'on' if was == 'on' else 'off'}")


def _executemany(conn: Connection, table: str, columns: Sequence[str], rows: list[tuple],
                 on_conflict: str = "") -> None:
    if not rows:
        return
    with dbapi_cursor(conn) as (cursor, mark):
        cursor.executemany(f"INSERT INTO {table} ({', '.join(columns)}) "
                           f"VALUES ({', '.join([mark] * len(columns))}) {on_conflict}", rows)


TEST_CASE_COLUMNS = ("id", "test_key", "parity_id", "parity_key", "file", "classname", "name", "params",
                     "group_name")
TEST_RESULT_COLUMNS = ("job_pk", "artifact_pk", "test_pk", "run_day", "outcome", "phase",
                       "duration_s", "rerun_count", "message", "skip_category")


def stored_test_ids(conn: Connection, ids: list[int]) -> set[int]:
    """Which of `ids` (sorted, for an ordered walk of the index) are interned already. A
    night's report mostly repeats known tests; finding them costs a quarter of inserting
    them again with ON CONFLICT DO NOTHING."""
    return {row[0] for row in rows_by_ids(
        conn, f"SELECT id FROM {TestCase.__tablename__}", "id", ids)}


def rows_by_ids(conn: Connection, sql: str, column: str, ids: Sequence[int], *,
                binary: bool = False, key_at: int | None = None) -> list[tuple]:
    """The rows of `sql` (a SELECT without WHERE) whose `column` is one of these ids,
    through the driver's cursor (`binary`: see `dbapi_cursor`): no statement is compiled
    per chunk. On PostgreSQL the ids are one array parameter (`= ANY`): an IN list of
    30,000 parameters cost more to bind and plan (30,000 parity keys: 0.17-0.20 -> 0.11 s);
    elsewhere an IN list, in chunks as large as the bound-parameter limit allows.
    `key_at`: where `column` is in a row. Given, ids that fill at least half of their span
    (a window's jobs: ids grow with time) are read on PostgreSQL as that range, and the
    rows of other ids in it left out here: the index walked once instead of probed for
    each id (the 17M store's 4,125 jobs of a lookback: their 3,000 accuracy rows 18 -> 8
    ms, their 675 jobs' benchmark arrays 10 -> 4 ms; SQLite gains nothing measurable)."""
    rows: list[tuple] = []
    if not ids:
        return rows
    postgres = conn.dialect.name == "postgresql"
    if postgres and key_at is not None and len(ids) > 1 \
            and 2 * len(ids) >= max(ids) - min(ids) + 1:
        wanted = set(ids)
        with dbapi_cursor(conn, binary) as (cursor, mark):
            cursor.execute(f"{sql} WHERE {column} BETWEEN {mark} AND {mark}",
                           (min(ids), max(ids)))
            return [r for r in cursor.fetchall() if r[key_at] in wanted]
    chunk = 30_000 if conn.dialect.name != "sqlite" or sqlite3.sqlite_version_info >= (3, 32) \
        else 999  # SQLite's bound-parameter limit
    # psycopg sends the array in binary (`%b`) rather than as text for the server to parse:
    # 105,000 parity keys of the 17M store 255 -> 175 ms
    array = "%b" if conn.dialect.driver == "psycopg" else None
    with dbapi_cursor(conn, binary) as (cursor, mark):
        for i in range(0, len(ids), chunk):
            part = list(ids[i:i + chunk])
            if postgres:
                cursor.execute(f"{sql} WHERE {column} = ANY({array or mark}::bigint[])",
                               (part,))
            else:
                cursor.execute(f"{sql} WHERE {column} IN ({', '.join([mark] * len(part))})",
                               part)
            rows += cursor.fetchall()
    return rows


def add_test_cases(conn: Connection, rows: list[tuple]) -> None:
    """Intern test identities (rows in TEST_CASE_COLUMNS order); known ones are left as is."""
    _executemany(conn, TestCase.__tablename__, TEST_CASE_COLUMNS, rows,
                 "ON CONFLICT (id) DO NOTHING")


def run_day(conn: Connection, job_pk: int) -> int:
    """The day of the job's run, test_result's time column (`db.partitions`)."""
    return (run_days(conn, [job_pk]) or [0])[0]


def add_test_results(conn: Connection, rows: list[tuple]) -> None:
    """Rows in TEST_RESULT_COLUMNS order (on PostgreSQL, their months' partitions are made
    first)."""
    partitions.ensure(conn, {r[3] for r in rows})
    _executemany(conn, TestResult.__tablename__, TEST_RESULT_COLUMNS, rows)


def add_summaries(conn: Connection, job_pk: int, groups: dict[str, dict[str, float]]) -> None:
    """Add one artifact's counts to the job's per-group summary (an artifact is added once,
    so adding is idempotent at the level that matters)."""
    if not groups:
        return
    cols = COUNT_COLUMNS + ("duration_s",)
    rows = [(job_pk, g, *(c.get(k, 0) for k in cols)) for g, c in groups.items()]
    adds = ", ".join(f"{k} = test_summary.{k} + excluded.{k}" for k in cols)
    _executemany(conn, TestSummary.__tablename__, ("job_pk", "group_name") + cols, rows,
                 f"ON CONFLICT (job_pk, group_name) DO UPDATE SET {adds}")
    # and the job's own total, which the views read
    total = [(job_pk, *(sum(c.get(k, 0) for c in groups.values()) for k in cols))]
    adds = ", ".join(f"{k} = job_summary.{k} + excluded.{k}" for k in cols)
    _executemany(conn, JobSummary.__tablename__, ("job_pk",) + cols, total,
                 f"ON CONFLICT (job_pk) DO UPDATE SET {adds}")


def sum_summaries(conn: Connection) -> None:
    """Derive every job's totals (`job_summary`) again from its groups."""
    t = JobSummary.__table__
    cols = COUNT_COLUMNS + ("duration_s",)
    conn.execute(delete(t))
    conn.execute(t.insert().from_select(["job_pk", *cols], select(
        TestSummary.job_pk, *(func.sum(getattr(TestSummary, c)) for c in cols))
        .group_by(TestSummary.job_pk)))


SERIES_CHUNK = 900  # series keys per IN list, well under every backend's parameter limit


def series_key(dimensions: Sequence) -> str:
    """The key of a benchmark series: a hash of its `SERIES_DIMENSIONS` values in order."""
    return hashlib.sha1(json.dumps(list(dimensions), default=str).encode()).hexdigest()


def series_pks(conn: Connection, dimensions: Iterable[tuple]) -> dict[tuple, int]:
    """Each distinct tuple of `SERIES_DIMENSIONS` values -> its series' id, making the
    series that are new (concurrent writers making the same one agree on it)."""
    wanted = {series_key(d): d for d in set(dimensions)}
    t = BenchmarkSeries.__table__

    def ids(keys: list[str]) -> dict[str, int]:  # in parts: a store may hold many series
        return {k: i for part in range(0, len(keys), SERIES_CHUNK) for k, i in conn.execute(
            select(t.c.key, t.c.id).where(t.c.key.in_(keys[part:part + SERIES_CHUNK])))}

    found = ids(list(wanted))
    new = [dict(zip(SERIES_DIMENSIONS, d), key=k) for k, d in wanted.items() if k not in found]
    if new:
        conn.execute(_insert(conn, t).on_conflict_do_nothing(index_elements=["key"]), new)
        found.update(ids([r["key"] for r in new]))
    return {d: found[k] for k, d in wanted.items()}


def name_series(conn: Connection) -> int:
    """Name every benchmark row's series again from its own dimensions, making the series
    that are missing (`parity db rebuild-state`); the number of rows. A row matches the
    series whose every dimension equals its own (a missing number equals a missing one; the
    texts, never missing, are found through the series' index)."""
    m, t = BenchmarkMetric.__table__, BenchmarkSeries.__table__
    found = conn.execute(select(*(m.c[c] for c in SERIES_DIMENSIONS)).distinct()).all()
    series_pks(conn, [tuple(d) for d in found])
    same = and_(*(t.c[c].is_not_distinct_from(m.c[c]) if m.c[c].nullable else t.c[c] == m.c[c]
                  for c in SERIES_DIMENSIONS))
    return conn.execute(update(m).values(
        series_pk=select(func.min(t.c.id)).where(same).scalar_subquery())).rowcount


_DIMENSION_DEFAULTS = {c.name: c.default.arg for c in BenchmarkMetric.__table__.columns
                       if c.name in SERIES_DIMENSIONS and c.default is not None}


def add_benchmarks(conn: Connection, rows: Iterable[dict]) -> int:
    """Store benchmark rows (a row already stored is kept), each naming its series."""
    rows = list(rows)
    if rows:
        # a dimension a row leaves out is stored as the column's default: so is its series'
        defaults = _DIMENSION_DEFAULTS
        dims = [tuple(r.get(c, defaults.get(c)) for c in SERIES_DIMENSIONS) for r in rows]
        pks = series_pks(conn, dims)
        rows = [{**r, "series_pk": pks[d]} for r, d in zip(rows, dims)]
        conn.execute(_insert(conn, BenchmarkMetric.__table__).on_conflict_do_nothing(), rows)
    return len(rows)


def add_accuracy(conn: Connection, rows: Iterable[dict]) -> int:
    rows = list(rows)
    if rows:
        conn.execute(_insert(conn, AccuracyMetric.__table__).on_conflict_do_nothing(), rows)
    return len(rows)


def record_ingest_error(conn: Connection, path: str, reason: str, sha256: str = "",
                        format: str = "") -> None:
    """Keep a rejected input on record; the same file rejected again updates its row."""
    table = IngestError.__table__
    stmt = _insert(conn, table).values(path=path, sha256=sha256, reason=reason, format=format,
                                       at=utcnow())
    conn.execute(stmt.on_conflict_do_update(
        index_elements=["path", "sha256"],
        set_={"reason": stmt.excluded.reason, "format": stmt.excluded.format,
              "at": stmt.excluded.at}))


def add_runner_snapshots(conn: Connection, rows: Iterable[dict]) -> int:
    """Store runners as seen at one moment; the same (scope, runner, time) twice is one row."""
    rows = list(rows)
    if rows:
        conn.execute(_insert(conn, RunnerSnapshot.__table__).on_conflict_do_nothing(), rows)
    return len(rows)


def add_ci_artifact(conn: Connection, run_pk: int, artifact_id: str, **values: Any) -> None:
    """Record an artifact archive and its outcome; seen again, its row is updated."""
    table = CiArtifact.__table__
    stmt = _insert(conn, table).values(run_pk=run_pk, artifact_id=artifact_id, **values)
    conn.execute(stmt.on_conflict_do_update(
        index_elements=["run_pk", "artifact_id"],
        set_={k: stmt.excluded[k] for k in values}))


def is_synced(conn: Connection, ci_system: str, repository: str, run_id: str,
              attempt: int) -> bool:
    t = SyncedRun.__table__
    return conn.execute(select(t.c.id).where(
        t.c.ci_system == ci_system, t.c.repository == repository, t.c.run_id == run_id,
        t.c.attempt == attempt)).first() is not None


def mark_synced(conn: Connection, ci_system: str, repository: str, run_id: str, attempt: int,
                jobs: int, artifacts: int) -> None:
    conn.execute(_insert(conn, SyncedRun.__table__).values(
        ci_system=ci_system, repository=repository, run_id=run_id, attempt=attempt,
        jobs=jobs, artifacts=artifacts, synced_at=utcnow()).on_conflict_do_nothing())


def get_checkpoint(conn: Connection, scope: str) -> tuple[datetime, datetime] | None:
    """(covered_from, tail_start) of a sync scope, or None before its first sync."""
    t = SyncCheckpoint.__table__
    row = conn.execute(select(t.c.covered_from, t.c.tail_start).where(t.c.scope == scope)).first()
    return (row.covered_from, row.tail_start) if row else None


def set_checkpoint(conn: Connection, scope: str, covered_from: datetime,
                   tail_start: datetime) -> None:
    table = SyncCheckpoint.__table__
    stmt = _insert(conn, table).values(scope=scope, covered_from=covered_from,
                                       tail_start=tail_start, updated_at=utcnow())
    conn.execute(stmt.on_conflict_do_update(
        index_elements=["scope"],
        set_={k: stmt.excluded[k] for k in ("covered_from", "tail_start", "updated_at")}))


def get_validator(conn: Connection, url: str) -> tuple[str, str] | None:
    """(etag, next page url) last stored for a list page URL."""
    t = HttpValidator.__table__
    row = conn.execute(select(t.c.etag, t.c.next_url).where(t.c.url == url)).first()
    return (row.etag, row.next_url) if row else None


def set_validator(conn: Connection, url: str, etag: str, next_url: str = "") -> None:
    table = HttpValidator.__table__
    stmt = _insert(conn, table).values(url=url, etag=etag, next_url=next_url, updated_at=utcnow())
    conn.execute(stmt.on_conflict_do_update(
        index_elements=["url"], set_={k: stmt.excluded[k]
                                      for k in ("etag", "next_url", "updated_at")}))


def add_capabilities(conn: Connection, job_pk: int, names: dict[str, str]) -> None:
    """Tag a job with capabilities ({name: source}); tagging again changes nothing."""
    if names:
        conn.execute(_insert(conn, JobCapability.__table__).on_conflict_do_nothing(),
                     [{"job_pk": job_pk, "name": n, "source": src} for n, src in sorted(names.items())])


def record_source_sync(conn: Connection, name: str, kind: str, target: str, status: str,
                       message: str = "") -> None:
    """Note one sync of a source: its outcome now, and when it last succeeded."""
    table = SourceSync.__table__
    now = utcnow()
    values = dict(name=name[:200], kind=kind[:32], target=target[:500], last_attempt_at=now,
                  status=status[:16], message=message[:2000])
    if status == "ok":
        values["last_success_at"] = now
    stmt = _insert(conn, table).values(**values)
    conn.execute(stmt.on_conflict_do_update(
        index_elements=["name"], set_={k: stmt.excluded[k] for k in values if k != "name"}))


def source_syncs(conn: Connection) -> list[dict]:
    t = SourceSync.__table__
    return [dict(r._mapping) for r in conn.execute(select(t).order_by(t.c.name))]
