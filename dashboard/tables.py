"""The dashboard's only I/O: read the store into plain DataFrames the views analyse.

Every read is a `select()` on the typed models, filtered in SQL by framework and time window
so that a view's cost grows with the runs it looks at. The views never write.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import os
import threading
import warnings
from collections import OrderedDict
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Iterable, Iterator, Sequence

from pathlib import Path

import numpy as np
import pandas as pd
from sqlalchemy import (BigInteger, Boolean, Connection, Engine, and_, any_, bindparam, case,
                        create_engine, func, inspect, or_, select, text)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import make_url

from parity.dashboard import garbage
from parity.dashboard.period import Period
from parity.db import partitions, retention, state
from parity.db import vectors as vec
from parity.db.engine import make_engine, normalise_url
from parity.db.models import (
    NOTABLE,
    SERIES_DIMENSIONS,
    AccuracyMetric,
    Alert,
    Artifact,
    BenchmarkMetric,
    BenchmarkSeries,
    CiJob,
    CiRun,
    Framework,
    Hardware,
    JobBenchmark,
    JobCapability,
    JobOutcome,
    JobSummary,
    LaneStreak,
    RunnerSnapshot,
    SourceSync,
    StreakCutoff,
    TestCase,
    TestResult,
)
from parity.db.store import by_index, dbapi_cursor, rows_by_ids, run_days
from parity.db.streaks import arrays as streak_arrays

Store = Engine | str | Path | None
ABSENT = 255  # the outcome code of a test a side did not run (`pair_tests`)
# whether the views read untrusted runs too (forks, pull_request_target chains, branches no
# source follows); `frames` sets it for one call when asked with include_untrusted=True
INCLUDE_UNTRUSTED: ContextVar[bool] = ContextVar("parity_include_untrusted", default=False)


def _trusted(stmt, engine: Engine):
    """Only trusted runs, unless the caller asked for every run (or the store predates the
    mark: a store not yet upgraded is read as it is)."""
    if INCLUDE_UNTRUSTED.get() or not _marks_trust(engine):
        return stmt
    return stmt.where(CiRun.untrusted == "")


_TRUST_COLUMN: dict[tuple[int, str], bool] = {}


def _marks_trust(engine: Engine) -> bool:
    key = (id(engine), str(engine.url))
    found = _TRUST_COLUMN.get(key)
    if found is None:
        try:
            cols = {c["name"] for c in inspect(engine).get_columns(CiRun.__tablename__)}
        except Exception:  # no schema yet
            cols = set()
        found = _TRUST_COLUMN[key] = "untrusted" in cols
    return found
CHUNK = 900  # ids per IN list: well under every backend's parameter limit


def among(engine: Engine, column, ids: Sequence[int]):
    """`column IN ids`. On PostgreSQL one array parameter (`= ANY`) instead: SQLAlchemy
    renders, and the driver binds, an IN list's every id as a parameter of its own on every
    read (the alerts' messages of 863 failing tests in 14 jobs: 17 -> 12 ms, of which the
    read itself is 5 ms), where the server needs one value."""
    if engine.dialect.name == "postgresql":
        return column == any_(bindparam(None, [int(i) for i in ids], type_=ARRAY(BigInteger)))
    return column.in_(list(ids))


def chunks(engine: Engine, ids: Sequence[int]) -> list[Sequence[int]]:
    """`ids` in the parts one read's `among` takes: all at once on PostgreSQL (one array),
    else IN lists of `CHUNK` ids."""
    size = max(len(ids), 1) if engine.dialect.name == "postgresql" else CHUNK
    return [ids[i:i + size] for i in range(0, len(ids), size)]


ENGINES_KEPT = 16  # read-only engines kept open, the most recently asked for
_ENGINES: OrderedDict[str, Engine] = OrderedDict()
_ENGINES_LOCK = threading.Lock()


def _read_only_engine(url: str) -> Engine:
    """The cached read-only engine of a URL. The one asked for least recently goes when
    more than `ENGINES_KEPT` are open, disposed: its pooled connections are closed then,
    not left to the garbage collector (a notebook that opens many stores, the tests'
    scratch databases); a connection checked out from it is closed when it returns."""
    with _ENGINES_LOCK:
        engine = _ENGINES.get(url)
        if engine is not None:
            _ENGINES.move_to_end(url)
            return engine
        sa_url = make_url(url)
        if sa_url.get_backend_name() == "sqlite" and (
                not sa_url.database or not Path(sa_url.database).exists()):
            engine = create_engine("sqlite://")  # no store yet: an empty one, views return empty
        else:
            engine = make_engine(url, read_only=True)
        _ENGINES[url] = engine
        while len(_ENGINES) > ENGINES_KEPT:
            _ENGINES.popitem(last=False)[1].dispose()
        return engine


def open_store(store: Store = None) -> Engine:
    """The engine for a store: an Engine as given, else a cached read-only engine on the
    URL or path (default `PARITY_DB_URL`). The dashboard never writes."""
    if isinstance(store, Engine):
        return store
    return _read_only_engine(normalise_url(store))


def version(store: Store = None) -> str:
    """A token that changes whenever anything is written to the store, for a cache of views
    to hold their frames until then (`dashboard/app/common.py`). SQLite: the identity, size
    and modification time of the file and of its write-ahead log (every commit writes one of
    them; a new file renamed over the store is another file). PostgreSQL: the server's
    write-ahead log position, which any write moves (a write to another database of the
    server too: then a view is computed again for nothing, never kept past a change). The
    empty text elsewhere, and for a store that is not there."""
    url = make_url(str(store.url) if isinstance(store, Engine) else normalise_url(store))
    backend = url.get_backend_name()
    if backend == "sqlite":
        if not url.database or url.database == ":memory:":
            return ""
        marks = []
        for path in (url.database, url.database + "-wal"):
            try:
                st = os.stat(path)
            except OSError:
                st = None
            # an empty log is no log: a reader's first connection makes one
            marks.append(f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"
                         if st and st.st_size else "-")
        return " ".join(marks)
    if backend == "postgresql":
        with open_store(store).connect() as conn:
            return str(conn.exec_driver_sql(
                "SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() "
                "ELSE pg_current_wal_lsn() END::text").scalar())
    return ""


def newest_run(engine: Engine):
    """When the newest run in the store was created (None for an empty store); asked once
    per view call (`one_read`): every part of a composite view opens its window there."""
    if not has_data(engine):
        return None

    def read():
        with connection(engine) as conn:
            return conn.execute(_trusted(select(func.max(CiRun.created_at)), engine)).scalar()
    return _once(("newest run", INCLUDE_UNTRUSTED.get()), engine, read)


def has_data(engine: Engine) -> bool:
    """False for a store without a schema yet (views then return empty frames)."""
    return has_table(engine, CiJob.__tablename__)


def has_table(engine: Engine, name: str) -> bool:
    """Whether the store has this table. The store's tables are listed once per view call
    (`one_read`): a composite's parts each check the tables they read, and each check was a
    catalogue query on PostgreSQL (7 distinct tables in one `headline` call: 8.7 ms)."""
    return name in _once(("tables",), engine, lambda: _table_names(engine))


def _table_names(engine: Engine) -> frozenset[str]:
    with connection(engine) as conn:
        return frozenset(inspect(conn).get_table_names())


def _once(kind: tuple, engine: Engine, compute):
    """`compute()`, once per view call (`one_read`) for this kind and store, else every
    time."""
    memo = _READS.get()
    if memo is None:
        return compute()
    key = _once_key(kind, engine)
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def _once_key(kind: tuple, engine: Engine) -> tuple:
    return (*kind, id(engine), str(engine.url))


def _held(kind: tuple, engine: Engine):
    """What `_once` computed for this kind and store in this view call, or None."""
    memo = _READS.get()
    return None if memo is None else memo.get(_once_key(kind, engine))


def _hardware_label(df: pd.DataFrame) -> pd.Series:
    """Each hardware's label: its SKU, else its architecture, else its raw name. The streak
    state names lanes by it in SQL (`db.streaks.LANE`): the two must agree."""
    label = df["sku"].fillna("")
    label = label.where(label != "", df["arch"].fillna(""))
    return label.where(label != "", df["raw_name"].fillna("")).replace("", "unknown")


def _window(stmt, column, when: Period | None):
    if when is not None and when.start is not None:
        stmt = stmt.where(column >= when.start)
    if when is not None and when.end is not None:
        stmt = stmt.where(column < when.end)
    return stmt


def _runs_in(stmt, engine: Engine, framework, when: Period | None):
    """`stmt` (joined to ci_run and framework) limited to the frameworks, the run window
    and, unless asked otherwise, the trusted runs."""
    return _trusted(_window(_frameworks(stmt, framework), CiRun.created_at, when), engine)


def _frameworks(stmt, framework: str | Sequence[str] | None):
    """`stmt` (joined to ci_job) limited to the jobs of these frameworks. By the jobs'
    framework ids: a filter on the joined framework's name makes SQLite start from the
    framework and walk every job of the history instead of the window's runs."""
    if framework:
        names = [framework] if isinstance(framework, str) else list(framework)
        stmt = stmt.where(CiJob.framework_id.in_(
            select(Framework.id).where(Framework.name.in_(names)).scalar_subquery()))
    return stmt


def _window_job_ids(engine: Engine, framework, when: Period | None, trusted: bool = True):
    """The select of the ids of the jobs of the run window (and frameworks)."""
    stmt = _window(_frameworks(_of_jobs(select(CiJob.id)), framework), CiRun.created_at, when)
    return _trusted(stmt, engine) if trusted else stmt


def _window_jobs(engine: Engine, framework, when: Period | None, trusted: bool = True):
    """`_window_job_ids` as a subquery: rows keyed by job are read through their job index
    for these jobs only. Joined the other way, SQLite scans every row of the history and
    keeps the window's."""
    return _window_job_ids(engine, framework, when, trusted).scalar_subquery()


def _read(engine: Engine, stmt) -> pd.DataFrame:
    with connection(engine) as conn:
        return pd.read_sql(stmt, conn)


def _read_plain(engine: Engine, stmt, *, python_texts: bool = False) -> pd.DataFrame:
    """Like `_read` for statements whose columns are plain numbers and text (no dates or
    booleans to convert): rows straight from the driver's cursor, several times faster than
    SQLAlchemy's per-row result processing on the large result reads. `python_texts`: see
    `_frame`."""
    columns, rows = _fetch(engine, stmt)
    return _frame(rows, columns, python_texts)


_TEXTS_LOCK = threading.Lock()


def _frame(rows: list[tuple], columns: list[str], python_texts: bool = False) -> pd.DataFrame:
    """The frame of these rows. `python_texts`: its texts held as Python strings (pandas'
    "python" string storage), not Arrow's, for the jobs read. A composite view cuts that
    frame and takes its columns hundreds of times a call, and a take of an Arrow column
    costs tens of microseconds where NumPy's of a few thousand objects costs a few
    (`versus.py` on the 50M store: alerts 0.280 -> 0.269 s, headline 0.268 -> 0.251 s,
    every view the same or faster); converting the texts afterwards cost more than that.
    pandas' option is the process's: the lock keeps two frames from interleaving its
    setting and restoring it (the app's sessions run views in threads), and nothing but
    the frame is made under it (no read waits there). A frame another thread makes in
    that moment may hold Python strings too: the same values and dtype."""
    if not python_texts:
        return pd.DataFrame.from_records(rows, columns=columns)
    with _TEXTS_LOCK, pd.option_context("mode.string_storage", "python"):
        return pd.DataFrame.from_records(rows, columns=columns)


def _read_by_ids(engine: Engine, stmt, column: str, ids: Sequence[int], *,
                 python_texts: bool = False, key_at: int | None = None) -> pd.DataFrame:
    """`_read_plain` of `stmt` (a SELECT without WHERE or parameters) for the rows whose
    `column` is one of `ids`: compiled once and sent as `state.rows_by_key` sends it (one
    array on PostgreSQL, or a range, `key_at`), not compiled again for each IN list of ids
    (the 50M store's benchmark rows' 675 jobs: 10.7 -> 5.0 ms on PostgreSQL, 3.8 -> 3.3 ms
    on SQLite)."""
    with connection(engine) as conn:
        rows = state.rows_by_key(conn, str(stmt.compile(dialect=conn.dialect)), column,
                                 sorted(int(i) for i in ids), key_at=key_at)
    # as plain tuples: pandas takes SQLAlchemy's rows one value at a time (4 ms for 675)
    return _frame([tuple(r) for r in rows], [c.key for c in stmt.selected_columns],
                  python_texts)


def _fetch(engine: Engine, stmt) -> tuple[list[str], list[tuple]]:
    """`stmt`'s column names and rows as the driver's cursor gives them (`_read_plain`).
    Executed by SQLAlchemy, so that its events hear it (an echo, the query-plan test) and
    its cache of compiled statements serves it (compiling each read again, with its IN
    lists written out, was 3-5 ms of a jobs read), and fetched from the driver's cursor,
    past SQLAlchemy's processing of each row."""
    with connection(engine) as conn:
        result = conn.execute(stmt)
        try:
            cursor = result.cursor
            return [d[0] for d in cursor.description], cursor.fetchall()
        finally:
            result.close()


JOB_COLUMNS = ["job_pk", "run_pk", "framework", "vendor", "hardware", "gpu_count", "repository",
               "workflow", "run_id", "attempt", "commit", "run_at", "run_url", "job_id",
               "job_name", "suite", "job_url", "conclusion", "runner_name", "runner_labels",
               "job_created", "job_started", "total", "passed", "failed", "error", "skipped",
               "xfailed", "xpassed", "vendor_skipped", "flaky"]
JOB_SET = frozenset(JOB_COLUMNS)


# reads shared within one view call (`one_read`): (kind, engine, filters) -> (window, frame)
_READS: ContextVar[dict | None] = ContextVar("parity_reads", default=None)


@contextmanager
def one_read():
    """Within one view call, a kind of read (jobs, benchmark rows, accuracy rows) with the
    same filters happens once, for the widest window asked; a narrower window is cut from
    it. A page's composite views (the headline, the alerts) ask for the same rows several
    times over overlapping windows. Nested calls share the outermost call's reads; nothing
    outlives the call, so a view never sees rows older than its own start. The garbage
    collector waits for the call to end (`garbage.paused`)."""
    if _READS.get() is not None:
        yield
        return
    memo: dict = {}
    token = _READS.set(memo)
    try:
        with garbage.paused():
            yield
    finally:
        _READS.reset(token)
        for key, held in memo.items():
            if key[0] == "connection":
                held.close()


@contextmanager
def connection(engine: Engine) -> Iterator[Connection]:
    """A connection to read the store with. Within one view call (`one_read`) every read of
    a store goes through one connection, in one read transaction opened at the call's first
    read and ended with the call: the call's reads see one state of the store (an ingest
    that commits between two of them is seen by neither; PostgreSQL's reads are
    REPEATABLE READ for that), and PostgreSQL's pool does not ping and reset a connection
    once a read (21 in one `alerts` call, about 0.3 ms each). A read that fails ends that
    connection; the call's next read opens another."""
    memo = _READS.get()
    if memo is None:
        with engine.connect() as conn:
            yield conn
        return
    key = ("connection", id(engine), str(engine.url))
    conn = memo.get(key)
    if conn is None:
        conn = memo[key] = _snapshot(engine)
    try:
        yield conn
    except BaseException:
        if memo.get(key) is conn:  # a nested read may have ended it already
            del memo[key]
            conn.close()
        raise


def _snapshot(engine: Engine) -> Connection:
    """A connection whose reads share one snapshot until it is closed: SQLite's driver
    starts no transaction for a SELECT, so one is begun here (its snapshot is taken at the
    first read); PostgreSQL's default isolation gives each statement its own."""
    if engine.dialect.name == "postgresql":
        return engine.connect().execution_options(isolation_level="REPEATABLE READ")
    conn = engine.connect()
    if engine.dialect.name == "sqlite":
        conn.exec_driver_sql("BEGIN")
    return conn


def framework_key(framework) -> tuple | None:
    return None if not framework else tuple(
        sorted([framework] if isinstance(framework, str) else framework))


def metric_key(framework, hardware: Iterable[str] | None = None) -> tuple:
    """The filters a call's shared read of benchmark rows, and what is computed from them,
    is kept under (`shared`): its frameworks and, when only some hardware's rows are read
    (`benchmarks(hardware=...)`), their labels; a read of every row answers no read of some
    hardware, nor the other way round."""
    return (framework_key(framework),) + (() if hardware is None
                                          else (tuple(sorted(hardware)),))


def _covers(wide: Period | None, narrow: Period | None) -> bool:
    wide, narrow = wide or Period(), narrow or Period()
    return ((wide.start is None or (narrow.start is not None and narrow.start >= wide.start))
            and (wide.end is None or (narrow.end is not None and narrow.end <= wide.end)))


def shared(kind: str, engine: Engine, filters: tuple, when: Period | None, read) -> pd.DataFrame:
    """`read(when)`, or the rows of `when` cut from a wider read of this call (`one_read`).
    The window is on the run's time, `run_at`, as the SQL one is. Each caller gets its own
    frame object over the shared data: pandas copies on write (always, from 3.0), so a
    caller that changes its frame changes nobody else's, and nothing is copied until it
    does (a deep copy of each cut cost more than the cut)."""
    memo = _READS.get()
    if memo is None:
        return read(when)
    key = _shared_key(kind, engine, filters)
    held = memo.get(key)
    if held is not None and _covers(held[0], when):
        return _in_window(held[1], when)
    df = read(when)
    if held is None or _covers(when, held[0]):
        memo[key] = (when, df.copy(deep=False))
    return df


def _shared_key(kind: str, engine: Engine, filters: tuple) -> tuple:
    return (kind, id(engine), str(engine.url), filters, INCLUDE_UNTRUSTED.get())


def _cut(kind: str, engine: Engine, filters: tuple, when: Period | None) -> pd.DataFrame | None:
    """The rows of `when` cut from this call's read of this kind (`shared`), or None when
    the call has read none that covers `when`."""
    memo = _READS.get()
    held = None if memo is None else memo.get(_shared_key(kind, engine, filters))
    if held is None or not _covers(held[0], when):
        return None
    return _in_window(held[1], when)


def _in_window(df: pd.DataFrame, when: Period | None) -> pd.DataFrame:
    """The rows of a shared read (`shared`) whose run is in `when`."""
    if "run_at" not in df.columns:  # an empty store's frame
        return df.copy(deep=False)
    return in_period(df, when).reset_index(drop=True)


def in_period(df: pd.DataFrame, when: Period | None, column: str = "run_at") -> pd.DataFrame:
    """The rows of `df` whose `column` is in `when`, in their order (`where`)."""
    if when is None or (when.start is None and when.end is None):
        return df
    keep = np.ones(len(df), bool)
    if when.start is not None:
        keep &= (df[column] >= when.start).to_numpy(bool)
    if when.end is not None:
        keep &= (df[column] < when.end).to_numpy(bool)
    return where(df, keep)


def where(df: pd.DataFrame, keep: np.ndarray) -> pd.DataFrame:
    """The rows of `df` where `keep` (booleans) holds, in their order. When they are one run
    of consecutive rows, as a slice, which copies nothing: a window's jobs, in job order,
    usually are (a composite view cuts its jobs read a dozen times, and each mask copied
    every text column, 1.8 -> 0.3 ms a cut of the 50M store's 4,125 jobs)."""
    pos = np.flatnonzero(keep)
    if len(pos) == len(df):
        return df.copy(deep=False)
    if len(pos) and pos[-1] - pos[0] + 1 == len(pos):
        return df.iloc[pos[0]:pos[-1] + 1]
    return df[keep]


def _held_jobs(engine: Engine, job_pks: np.ndarray) -> pd.DataFrame | None:
    """A jobs read of this call (`jobs`, whatever its filters) that holds every one of these
    jobs, or None: their fields as that read gives them, from the call's one snapshot."""
    memo = _READS.get()
    prefix = _shared_key("jobs", engine, ())[:3]  # whatever the filters
    for key, held in (memo or {}).items():
        if key[:3] != prefix:
            continue
        df = held[1]
        if "job_pk" in df.columns and (pd.Index(df["job_pk"]).get_indexer(job_pks) >= 0).all():
            return df
    return None


def jobs(engine: Engine, *, framework=None, when: Period | None = None,
         repository: str | None = None) -> pd.DataFrame:
    """One row per job with its run, hardware, framework and summed test counts; with
    `repository`, only the jobs of that repository's runs (chosen in SQL: a view of one
    project's runs reads those, not the window's thousands of jobs)."""
    filters = (framework_key(framework),) + ((repository,) if repository else ())
    return shared("jobs", engine, filters, when,
                  lambda w: _jobs(engine, framework=framework, when=w, repository=repository))


def latest_jobs(engine: Engine, *, framework=None, when: Period | None = None) -> pd.DataFrame:
    """The jobs of the window (`jobs`' rows) whose run was created when the latest run of
    some framework and hardware in it was: every job of each lane's latest run, and a few
    more (another lane's run at one of those times), for a view of the latest runs to pick
    from. The latest times are found in SQL (one per framework and hardware id), then only
    the runs at those times are read: what the scorecard shows, not the window's thousands
    of jobs (the 50M store: 55 of 3,355)."""
    if not has_data(engine):
        return pd.DataFrame(columns=JOB_COLUMNS)
    # the window's jobs (`_window_jobs`), grouped by expressions, not the columns: by the
    # columns (or with a framework filter beside the run's time) SQLite walks every job of
    # the history in index order instead of the window's runs by time (50M store: 10.6 ->
    # 2.3 ms)
    latest = (select(func.max(CiRun.created_at)).select_from(CiJob)
              .join(CiRun, CiRun.id == CiJob.run_pk)
              .where(CiJob.id.in_(_window_jobs(engine, framework, when)))
              .group_by(CiJob.framework_id + 0, CiJob.hardware_id + 0))
    # each time as the driver gives it (SQLite's stored text), asked for again as it is
    times = {t for t, in _fetch(engine, latest)[1]}
    if not times or None in times:  # no job, or a run without its time: as `jobs` reads
        return _jobs(engine, framework=framework, when=when)
    return _jobs(engine, framework=framework, when=when, runs_at=sorted(times))


def jobs_of(engine: Engine, job_pks: Iterable[int], *, framework=None,
            when: Period | None = None) -> pd.DataFrame:
    """`jobs`' rows of these jobs only (those of them in the window and frameworks): the
    few hundred jobs a test's history found, not the window's thousands. More jobs than an
    IN list takes are cut from the window's read."""
    pks = sorted({int(j) for j in job_pks})
    if len(pks) <= CHUNK:
        return _jobs(engine, framework=framework, when=when, job_pks=pks)
    out = _jobs(engine, framework=framework, when=when)
    return where(out, np.isin(out["job_pk"].to_numpy(np.int64), pks)).reset_index(drop=True)


def _jobs(engine: Engine, *, framework=None, when: Period | None = None,
          runs_at: Sequence | None = None, job_pks: list[int] | None = None,
          repository: str | None = None) -> pd.DataFrame:
    """`jobs`' read: the window's jobs with their own fields and counts, then their runs'
    fields once a run and the hardware and framework tables whole, joined here by id (the
    50M store's default window: 3,520 jobs of 192 runs on a dozen hardware; the run's texts
    repeated on each of its jobs were a third of the read). `runs_at`: only the runs created
    at these times (as stored, `latest_jobs`); `job_pks`: only these jobs and their runs
    (`jobs_of`); `repository`: only that repository's runs."""
    if not has_data(engine):
        return pd.DataFrame(columns=JOB_COLUMNS)
    _require(engine, JobSummary)
    counts = [func.coalesce(getattr(JobSummary, c), 0).label(c)
              for c in ("total", "passed", "failed", "error", "skipped", "xfailed", "xpassed",
                        "vendor_skipped", "flaky")]
    stmt = (
        select(CiJob.id.label("job_pk"), CiJob.run_pk, CiJob.framework_id, CiJob.hardware_id,
               CiJob.job_id, CiJob.name.label("job_name"), CiJob.suite,
               CiJob.url.label("job_url"), CiJob.conclusion, CiJob.runner_name,
               CiJob.runner_labels, CiJob.created_at.label("job_created"),
               CiJob.started_at.label("job_started"), *counts)
        .join(CiRun, CiRun.id == CiJob.run_pk)
        .join(JobSummary, JobSummary.job_pk == CiJob.id, isouter=True)
    )
    runs = _trusted(_window(select(
        CiRun.id.label("run_pk"), CiRun.repository, CiRun.workflow, CiRun.run_id,
        CiRun.attempt, CiRun.head_sha.label("commit"), CiRun.created_at.label("run_at"),
        CiRun.url.label("run_url")), CiRun.created_at, when), engine)
    stmt = _runs_in(stmt, engine, framework, when)
    if runs_at is not None:
        stmt, runs = (s.where(CiRun.created_at.in_(list(runs_at))) for s in (stmt, runs))
    if repository is not None:
        stmt, runs = (s.where(CiRun.repository == repository) for s in (stmt, runs))
    if job_pks is not None:
        stmt = stmt.where(CiJob.id.in_(job_pks))
    # in job order, sorted here: an ORDER BY in SQL makes SQLite walk every job of the
    # history in id order instead of the window's runs by their time index (50M store's
    # 63 days: 78 -> 28 ms, and growing with the history)
    df = _read_plain(engine, stmt, python_texts=True)
    df = df.sort_values("job_pk", kind="stable", ignore_index=True)
    if job_pks is not None:
        runs = runs.where(CiRun.id.in_(sorted(set(df["run_pk"].tolist()))))
    runs = _read_plain(engine, runs, python_texts=True)
    hardware = _read_plain(engine, select(
        Hardware.id.label("hardware_id"), Hardware.vendor, Hardware.sku, Hardware.arch,
        Hardware.raw_name, Hardware.gpu_count), python_texts=True)
    names = _read_plain(engine, select(Framework.id.label("framework_id"),
                                       Framework.name.label("framework")), python_texts=True)
    runs["run_at"] = _times(runs["run_at"])  # parsed once a run, not once a job
    # labelled once a hardware, not once a job (`_hardware_label`)
    hardware = hardware.assign(hardware=_hardware_label(hardware))
    # a run deleted between the two reads (a Buildkite build dropped to be stored again)
    # takes its jobs with it
    df = where(df, pd.Index(runs["run_pk"]).get_indexer(df["run_pk"]) >= 0)
    # the frame is made once from its columns (a column set on a frame at a time cost more
    # than the reads)
    out = {c: df[c].array for c in df.columns if c in JOB_SET}
    for table, key in ((runs, "run_pk"), (hardware, "hardware_id"), (names, "framework_id")):
        # a job without hardware or framework finds none: its fields are missing (NaN)
        at = pd.Index(table[key]).get_indexer(df[key])
        for c in table.columns:
            if c in JOB_SET and c not in out:
                out[c] = table[c].array.take(at, allow_fill=True)
    out = pd.DataFrame({c: out[c] for c in JOB_COLUMNS})
    out["hardware"] = out["hardware"].fillna("unknown")
    out["vendor"] = out["vendor"].fillna("unknown")
    out["framework"] = out["framework"].fillna("other")
    out["gpu_count"] = out["gpu_count"].fillna(0).astype(int)
    out["job_created"], out["job_started"] = _times(out["job_created"]), _times(out["job_started"])
    return out


def _times(column: pd.Series) -> pd.Series:
    """Stored times as microsecond datetimes: SQLite gives the stored text, PostgreSQL
    datetimes. NumPy parses the ISO 8601 text SQLAlchemy stores at a quarter of pandas' cost
    (3,520 jobs' times: 1.3 -> 0.3 ms); what it would not take whole and exactly (an
    offset, text of another form) is pandas' to parse, as before."""
    if not isinstance(column.dtype, pd.StringDtype):  # PostgreSQL's: pandas' own
        return pd.to_datetime(column, format="ISO8601").astype("datetime64[us]")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # NumPy only warns of an offset it drops
            values = np.array(column.to_numpy(object, na_value=None), dtype="datetime64[us]")
    except (ValueError, TypeError, OverflowError, Warning):
        return pd.to_datetime(column, format="ISO8601").astype("datetime64[us]")
    return pd.Series(values, index=column.index, name=column.name, copy=False)


RESULT_COLUMNS = ["job_pk", "test_pk", "parity_id", "parity_key", "group_name", "outcome",
                  "rerun_count", "message", "skip_category"]


def test_pks(engine: Engine, parity_ids: Iterable[int]) -> list[int]:
    """The test ids (`test_case.id`) that carry these parity ids, sorted, for reads of their
    rows. When the view call has the vendor spellings' map already (`alias_map`), without
    a read: each parity id itself (a test whose key is its parity key has that id, both a
    hash of the key, `db.store.test_id`; one that only vendor spellings carry names no
    stored test and matches no row) and the spellings whose parity id it is (the alerts'
    863 failing tests: 3 ms on SQLite, 8 ms on PostgreSQL). Else the stored tests, read."""
    wanted = vec.distinct(np.fromiter((int(p) for p in parity_ids), np.int64))
    alias = _held(("alias map",), engine)
    if alias is not None:
        spellings = alias.keys[np.isin(alias.values, wanted)]
        return vec.distinct(np.concatenate([wanted, spellings])).tolist()
    out: list[int] = []
    with connection(engine) as conn:
        for i in range(0, len(wanted), CHUNK):
            out += conn.execute(select(TestCase.id).where(
                TestCase.parity_id.in_(wanted[i:i + CHUNK].tolist()))).scalars().all()
    return sorted(out)


# parity id -> parity key: the id is a hash of the key (`db.store.test_id`), so the pair
# holds in every store and a process keeps the keys it has read (up to a bound), as a sorted
# id array and a text array, from which a view's tens of thousands are taken at once, and,
# once a caller asks for them, each kept key's place in the kept keys' sorted order
_KEYS: list = [np.empty(0, np.int64), pd.array([], dtype="str"), None]  # [ids, keys, ranks]
_KEYS_LOCK = threading.Lock()  # the app's sessions run views in threads of one process
KEYS_KEPT = 400_000


def parity_keys(engine: Engine, parity_ids: Iterable[int], *,
                ranked: bool = False) -> pd.DataFrame:
    """parity_id -> parity_key for these tests, in parity id order (a parity id no stored
    test has is left out). `ranked`: with `key_rank`, integers in the order of the keys (as
    texts sort): a view that orders hundreds of thousands of tests by key sorts integers
    (sorting the 282,000 keys of PyTorch-size lanes took 0.2-0.4 s a call; the ranks of the
    kept keys are sorted once, until more keys are kept)."""
    if isinstance(parity_ids, (np.ndarray, pd.Series, pd.Index)):
        asked = np.asarray(parity_ids, np.int64)  # (not an int at a time: 282,000 of them)
    else:
        asked = np.fromiter((int(p) for p in parity_ids), np.int64)
    wanted = vec.distinct(asked)
    with _KEYS_LOCK:
        ids, keys, ranks = _KEYS
        pos, held = vec.find(ids, wanted)
        if not held.all():
            missing = wanted[~held]
            if len(ids) + len(missing) > KEYS_KEPT:  # start again with these
                ids, keys, missing = ids[:0], keys[:0], wanted
            got = _keys_of(engine, missing)
            ids = np.concatenate([ids, np.fromiter(got, np.int64, len(got))])
            keys = pd.concat([pd.Series(keys), pd.Series(list(got.values()), dtype="str")],
                             ignore_index=True).array
            order = np.argsort(ids)
            ids, keys, ranks = ids[order], keys.take(order), None
            _KEYS[:] = [ids, keys, ranks]
            pos, held = vec.find(ids, wanted)
        if ranked and ranks is None:
            ranks = np.empty(len(keys), np.int64)
            ranks[keys.argsort(kind="stable")] = np.arange(len(keys))
            _KEYS[2] = ranks
    out = pd.DataFrame({"parity_id": wanted[held], "parity_key": keys.take(pos[held])})
    if ranked:
        out["key_rank"] = ranks[pos[held]]
    return out


# parity ids asked at once from which the tests are counted, to choose how to read their
# keys (`_keys_of`): below it the count would cost more than it can save
SCAN_FROM = 50_000


def _keys_of(engine: Engine, parity_ids: np.ndarray) -> dict[int, str]:
    """parity id -> parity key of these tests (sorted parity ids), from the store. A few
    through the parity-id index (`by_index`); when they are half the stored tests or more
    (a matrix of lanes of PyTorch's size: 282,000 of 285,478), every test in one pass over
    the table, which reads each page once where a lookup per id visits the index and a
    page for each (SQLite 0.66 -> 0.30 s). A parity id's spellings give its key once
    each, the same key, which the dict keeps once."""
    read = "SELECT parity_id, parity_key FROM test_case"
    with connection(engine) as conn:
        if len(parity_ids) >= SCAN_FROM and 2 * len(parity_ids) >= conn.execute(
                select(func.count()).select_from(TestCase)).scalar_one():
            with dbapi_cursor(conn) as (cursor, _):
                cursor.execute(read)
                rows = cursor.fetchall()
            ids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
            return dict(rows[i] for i in np.flatnonzero(vec.find(parity_ids, ids)[1]).tolist())
        with by_index(conn):
            return dict(rows_by_ids(conn, read, "parity_id", parity_ids.tolist()))


def _result_rows():
    """The select of test rows with their test's identity (`RESULT_COLUMNS`)."""
    return (select(TestResult.job_pk, TestResult.test_pk, TestCase.parity_id,
                   TestCase.parity_key, TestCase.group_name, TestResult.outcome,
                   TestResult.rerun_count, TestResult.message, TestResult.skip_category)
            .join(TestCase, TestCase.id == TestResult.test_pk))


def _with_rebuilt(engine: Engine, frames: list[pd.DataFrame], job_pks: list[int],
                  tests: list[int] | None) -> pd.DataFrame:
    """The rows read (`frames`), together, and the plain passed rows that retention
    dropped from the pruned jobs among `job_pks`, rebuilt from their vectors."""
    frames = [f for f in frames if not f.empty]  # an empty read would turn columns to object
    raw = pd.concat(frames, ignore_index=True)[RESULT_COLUMNS] if frames else None
    rebuilt = _pruned_rows(engine, job_pks, tests, raw) if job_pks else None
    if rebuilt is not None:
        return rebuilt if raw is None else pd.concat([raw, rebuilt], ignore_index=True)
    return pd.DataFrame(columns=RESULT_COLUMNS) if raw is None else raw


def results(engine: Engine, job_pks: Iterable[int], parity_ids: Iterable[int] | None = None
            ) -> pd.DataFrame:
    """Raw test rows of the given jobs with their identity: all of them, or only those of
    some tests (`parity_ids`, looked up by key, job by job). For a job whose plain passed
    rows retention dropped, those rows come back from its vector, exactly."""
    job_pks = sorted({int(j) for j in job_pks})
    tests = None if parity_ids is None else test_pks(engine, parity_ids)
    if not job_pks or tests == []:
        return pd.DataFrame(columns=RESULT_COLUMNS)
    frames = []
    for part in chunks(engine, job_pks):
        stmt = by_jobs(engine, _result_rows(), part)
        if tests is not None:
            frames += [_read_plain(engine, stmt.where(among(engine, TestResult.test_pk, some)))
                       for some in chunks(engine, tests)]
        else:
            frames.append(_read_plain(engine, stmt))
    return _with_rebuilt(engine, frames, job_pks, tests)


def window_results(engine: Engine, parity_ids: Iterable[int], *, framework=None,
                   when: Period | None = None) -> pd.DataFrame:
    """`results`' rows of some tests (`parity_ids`) in every trusted job of the run window
    (and frameworks), found in SQL through the window's job ids: what a test's history
    shows, without reading the window's jobs first (the 50M store's 60 days: 3,355 jobs,
    their ids sent back in IN lists, for a test that ran in a few hundred of them)."""
    if not has_data(engine):  # a store without a schema yet
        return pd.DataFrame(columns=RESULT_COLUMNS)
    tests = test_pks(engine, parity_ids)
    if not tests:
        return pd.DataFrame(columns=RESULT_COLUMNS)
    window = _window_jobs(engine, framework, when)
    stmt = _result_rows().where(TestResult.job_pk.in_(window))
    if engine.dialect.name == "postgresql" and when is not None:  # its months' partitions
        if when.start is not None:
            stmt = stmt.where(TestResult.run_day >= partitions.day_of(when.start))
        if when.end is not None:
            stmt = stmt.where(TestResult.run_day <= partitions.day_of(when.end))
    frames = [_read_plain(engine, stmt.where(TestResult.test_pk.in_(tests[k:k + CHUNK])))
              for k in range(0, len(tests), CHUNK)]
    with connection(engine) as conn:
        pruned = conn.execute(select(CiJob.id).where(
            CiJob.id.in_(window), CiJob.raw_pruned_at.is_not(None))).scalars().all()
    return _with_rebuilt(engine, frames, sorted(pruned), tests)


def failure_messages(engine: Engine, job_pks: Iterable[int],
                     parity_ids: Iterable[int] | None = None) -> pd.DataFrame:
    """(job_pk, parity_id, message): per job and test among its notable rows (failed,
    errored or rerun; of some tests only, with `parity_ids`), the message of its worst row
    that has one (`outcomes.reduce_tests` of those rows per job). Read through the notable
    rows' partial index, without the test identities' texts, which the history views that
    want the message do not need (retention never drops a notable row)."""
    job_pks = sorted({int(j) for j in job_pks})
    tests = None if parity_ids is None else test_pks(engine, parity_ids)
    frames = []
    if job_pks and (tests is None or tests):
        base = _notable_rows(select(TestResult.job_pk, TestResult.test_pk, TestResult.outcome,
                                    TestResult.message))
        for part in chunks(engine, job_pks):
            stmt = by_jobs(engine, base, part)
            for some in chunks(engine, tests) if tests is not None else [None]:
                frames.append(_read_plain(engine, stmt if some is None else stmt.where(
                    among(engine, TestResult.test_pk, some))))
    rows = pd.concat([f for f in frames if not f.empty] or [pd.DataFrame(
        columns=["job_pk", "test_pk", "outcome", "message"])], ignore_index=True)
    rows = rows[rows["message"].notna()]
    if rows.empty:
        return pd.DataFrame({"job_pk": np.empty(0, np.int64),
                             "parity_id": np.empty(0, np.int64), "message": []})
    job = rows["job_pk"].to_numpy(np.int64)
    parity = alias_map(engine).parity_ids(rows["test_pk"].to_numpy(np.int64))
    rank = rows["outcome"].map({o: i for i, o in enumerate(vec.OUTCOMES)}) \
        .fillna(len(vec.OUTCOMES)).to_numpy()
    # the worst row first, then the order read, as the reduction of every row does
    order = np.lexsort((np.arange(len(rows)), rank, parity, job))
    first = np.r_[True, (job[order][1:] != job[order][:-1])
                  | (parity[order][1:] != parity[order][:-1])]
    keep = order[first]
    return pd.DataFrame({"job_pk": job[keep], "parity_id": parity[keep],
                         "message": rows["message"].to_numpy(dtype=object)[keep]})


def by_jobs(engine: Engine, stmt, job_pks: Sequence[int]):
    """`stmt` (a read of test_result) limited to these jobs. On PostgreSQL it also names
    the days their results are stored under, so that the planner visits only those months'
    partitions, not every month's index."""
    stmt = stmt.where(among(engine, TestResult.job_pk, job_pks))
    if engine.dialect.name != "postgresql":
        return stmt
    with connection(engine) as conn:
        return stmt.where(among(engine, TestResult.run_day, run_days(conn, job_pks)))


def _with_parity_ids(engine: Engine, frames: list[pd.DataFrame], cols: list[str]) -> pd.DataFrame:
    """The rows read, together, with each test's parity id: its own id unless it has a
    vendor word."""
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame(columns=cols)
    out = pd.concat(frames, ignore_index=True)
    out["parity_id"] = alias_map(engine).parity_ids(
        out["test_pk"].to_numpy(dtype=np.int64))
    return out[cols]


def _notable_rows(stmt):
    """Only the notable rows, read through their partial index (SQLite's planner, without
    statistics, would rather scan each job's rows by the key: 0.39 s against 0.16 s for
    the 108,000 notable rows of a 10M store's fortnight)."""
    return stmt.where(text(f"({NOTABLE})")).with_hint(
        TestResult, "INDEXED BY ix_test_result_notable", "sqlite")


def _pruned_rows(engine: Engine, job_pks: list[int], tests: list[int] | None,
                 raw: pd.DataFrame | None) -> pd.DataFrame | None:
    """The plain passed rows (`db.retention.PLAIN`) of the pruned jobs among `job_pks`,
    rebuilt from their vectors: passed, not rerun, no skip, and no row left in the store
    (`raw`, the rows read). None when there are none."""
    with connection(engine) as conn:
        pruned = sorted(retention.pruned_jobs(conn, job_pks))
        if not pruned:
            return None
        vectors = state.read(conn, pruned)
    passed = vec.OUTCOMES.index("passed")
    jobs, ids = [], []
    for job_pk, v in vectors.items():
        mine = v.ids[(v.outcomes == passed) & (v.skips == 0) & (v.reruns == 0)]
        if tests is not None:
            mine = mine[np.isin(mine, tests, assume_unique=True)]
        jobs.append(np.full(len(mine), job_pk, np.int64))
        ids.append(mine)
    if not ids or not sum(len(i) for i in ids):
        return None
    rows = pd.DataFrame({"job_pk": np.concatenate(jobs), "test_pk": np.concatenate(ids)})
    if raw is not None:  # a test with a row left in its job (a message, say) is not rebuilt
        kept = raw[["job_pk", "test_pk"]].astype(np.int64).drop_duplicates().assign(_kept=True)
        rows = rows.merge(kept, on=["job_pk", "test_pk"], how="left")
        rows = rows.loc[rows["_kept"].isna(), ["job_pk", "test_pk"]]
        if rows.empty:
            return None
    wanted = np.unique(rows["test_pk"]).tolist()
    names = []
    with connection(engine) as conn:
        for i in range(0, len(wanted), CHUNK):
            names += conn.execute(select(TestCase.id, TestCase.parity_id, TestCase.parity_key,
                                         TestCase.group_name)
                                  .where(TestCase.id.in_(wanted[i:i + CHUNK]))).all()
    identity = pd.DataFrame(names, columns=["test_pk", "parity_id", "parity_key", "group_name"])
    rows = rows.merge(identity, on="test_pk", how="left").assign(
        outcome="passed", rerun_count=0, message=None, skip_category=None)[RESULT_COLUMNS]
    if raw is not None:  # the dtypes the rows would have had, read with the others
        rows = rows.astype(raw.dtypes.to_dict())
    return rows


def streak_cutoff(engine: Engine):
    """The time before which `lane_streaks` holds the failure streaks (`db.streaks`), or
    None where it cannot be used: the call reads untrusted runs too (the state counts the
    trusted ones), or the store has no state (not upgraded, or nothing derived yet)."""
    if INCLUDE_UNTRUSTED.get() or not has_table(engine, StreakCutoff.__tablename__):
        return None
    with connection(engine) as conn:
        at = conn.execute(select(StreakCutoff.cutoff)).scalar()
    return None if at is None else pd.Timestamp(at).to_datetime64().astype("datetime64[us]")


def lane_streaks(engine: Engine, lanes: Iterable[tuple[str, str, str]]
                 ) -> dict[tuple, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Each lane's (framework, hardware, suite) tests that were failing at the streak
    cutoff: their parity ids (sorted), how many runs before it they had been failing in,
    and since when (datetime64[us]). A lane without such tests is not in it."""
    lanes = sorted(set(lanes))
    if not lanes:
        return {}
    t = LaneStreak
    _, rows = _fetch(engine, select(t.framework, t.hardware, t.suite, t.ids, t.tails, t.since)
                     .where(or_(*(and_(t.framework == f, t.hardware == h, t.suite == s)
                                  for f, h, s in lanes))))
    return {(f, h, s): streak_arrays(*(bytes(b) for b in blobs)) for f, h, s, *blobs in rows}


def _require(engine: Engine, *models) -> None:
    """A store from before these tables existed is named, with what to run."""
    if not all(has_table(engine, m.__tablename__) for m in models):
        raise RuntimeError(f"the store {engine.url.render_as_string()} is at an older schema: "
                           "run `parity db upgrade` on it")


def aliases(engine: Engine) -> dict[int, int]:
    """Test id -> parity id for the tests named with a vendor word, from `alias_map` (read
    once per view call, `one_read`); a new dict each call: a caller's change stays its
    own."""
    found = alias_map(engine)
    return dict(zip(found.keys.tolist(), found.values.tolist()))


def alias_map(engine: Engine) -> vec.Aliases:
    """The vendor-named tests' aliases as the sorted arrays vectorised lookups take
    (`vec.Aliases`), read once per view call (`one_read`): a composite maps test ids to
    parity ids in several of its reads."""
    if not has_data(engine):
        return vec.Aliases({})

    def read() -> vec.Aliases:
        with connection(engine) as conn:
            return vec.Aliases(state.alias_rows(conn))
    return _once(("alias map",), engine, read)


def job_vectors(engine: Engine, job_pks: Iterable[int], fields=vec.CODES) -> dict:
    """Each job's outcome vector as stored, keyed by test id (`db.vectors`), with the code
    arrays in `fields` (the others may be None: a history that follows outcomes alone need
    not read the skip and rerun codes, two thirds of the bytes). Within one view call
    (`one_read`) a job's arrays are read once: a composite follows the same lanes' jobs for
    several of its parts (the alerts' failing and passing tests, the flaky tests'
    candidates and their histories); a part that asks for arrays not read yet reads those."""
    job_pks = list(job_pks)
    if not job_pks or not has_data(engine):
        return {}
    _require(engine, JobOutcome)
    memo = _READS.get()
    if memo is None:
        with connection(engine) as conn:
            return state.read(conn, job_pks, fields)
    held = memo.setdefault(("vectors", id(engine), str(engine.url)), {})
    wanted = {int(j) for j in job_pks}
    lacking: dict[tuple[str, ...], list[int]] = {}  # the arrays to read -> the jobs lacking them
    for j in sorted(wanted):
        if j not in held:
            lacking.setdefault(tuple(fields), []).append(j)
        elif held[j] is not None:  # (None: a job without tests)
            need = tuple(f for f in fields if getattr(held[j], f) is None)
            if need:
                lacking.setdefault(need, []).append(j)
    for need, jobs in lacking.items():
        with connection(engine) as conn:
            found = state.read(conn, jobs, need)
        for j in jobs:
            got, had = found.get(j), held.get(j)
            held[j] = got if had is None else dataclasses.replace(
                had, **{f: getattr(got, f) for f in need})
    return {j: held[j] for j in sorted(wanted) if held[j] is not None}


def failing_tests(engine: Engine, job_pks: Iterable[int], *,
                  reruns: bool = False) -> pd.DataFrame:
    """(job_pk, parity_id) of the tests that failed or errored in each of these jobs (and,
    with `reruns`, of those rerun there), from the per-job vectors: which tests the history
    views follow, without reading the failed rows themselves (tens of thousands a fortnight,
    with their texts)."""
    by_job = job_vectors(engine, job_pks, ("outcomes", "reruns") if reruns else ("outcomes",))
    alias = alias_map(engine) if by_job else None
    jobs, ids = [np.empty(0, np.int64)], [np.empty(0, np.int64)]
    for job, v in by_job.items():  # arrays joined once: a frame per job cost more
        hit = v.outcomes <= vec.FAILING
        if reruns:
            hit |= v.reruns > 0
        found = alias.parity_ids(v.ids[hit])
        jobs.append(np.full(len(found), job, np.int64))
        ids.append(found)
    return pd.DataFrame({"job_pk": np.concatenate(jobs), "parity_id": np.concatenate(ids)})


def vectors(engine: Engine, groups: dict) -> dict:
    """Per group (any key -> job pks): the tests of its jobs together, keyed by parity id,
    each with its worst outcome, skip and rerun codes (`db.vectors`), from the per-job
    vectors ingest keeps; a job without tests adds nothing."""
    by_job = job_vectors(engine, {j for jobs in groups.values() for j in jobs})
    alias = alias_map(engine) if by_job else None
    return {key: vec.remap(vec.merge(*(by_job[j] for j in jobs if j in by_job)), alias)
            for key, jobs in groups.items()}


def pair_tests(engine: Engine, sides: dict[tuple[int, str], Sequence[int]],
               keep: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None = None
               ) -> pd.DataFrame:
    """Every test of each aligned pair from the per-job vectors, one row per (pair,
    parity_id): each side's worst outcome and that row's skip category as codes
    (`vec.OUTCOMES`, `vec.SKIPS`; `ABSENT` where the side did not run the test). No raw
    result is read. `keep`: which of a pair's tests are rows, given their parity ids and
    the two sides' outcome codes, for a caller that wants a few of every pair's
    thousands (the others are not made rows to be dropped)."""
    cols = ["pair", "parity_id", "amd", "ref", "amd_skip", "ref_skip"]
    parts: dict[str, list[np.ndarray]] = {c: [] for c in cols}
    for pair, union, codes in _pair_codes(engine, sides):
        if keep is not None:
            rows = keep(union, codes["amd"], codes["ref"])
            union, codes = union[rows], {c: v[rows] for c, v in codes.items()}
        parts["pair"].append(np.full(len(union), pair, np.int64))
        parts["parity_id"].append(union)
        for c, values in codes.items():
            parts[c].append(values)
    if not parts["pair"]:
        return pd.DataFrame({c: np.empty(0, np.int64) for c in cols})
    # the pairs' arrays joined, one frame: a frame per pair and their concatenation cost more
    return pd.DataFrame({c: np.concatenate(v) for c, v in parts.items()})


def _pair_codes(engine: Engine, sides: dict[tuple[int, str], Sequence[int]], skips: bool = True):
    """Per aligned pair that ran tests, in pair order: (pair, the parity ids either side ran,
    sorted, each side's outcome codes of them and, with `skips`, skip codes), as
    `pair_tests` gives them."""
    found = vectors(engine, sides)
    for pair in sorted({p for p, _ in sides}):
        amd, ref = found.get((pair, "amd"), vec.EMPTY), found.get((pair, "ref"), vec.EMPTY)
        union = vec.union(amd.ids, ref.ids)
        if not len(union):
            continue
        codes = {}
        for side, v in (("amd", amd), ("ref", ref)):
            at = np.searchsorted(union, v.ids)
            codes[side] = np.full(len(union), ABSENT, np.int32)
            codes[side][at] = v.outcomes
            if skips:
                codes[f"{side}_skip"] = np.zeros(len(union), np.int32)
                codes[f"{side}_skip"][at] = v.skips
        yield pair, union, codes


def messages(engine: Engine, job_pks: Iterable[int],
             parity_ids: Iterable[int] | None = None) -> pd.DataFrame:
    """The rows of these jobs that carry a message (failures, errors, skip reasons), with
    their outcome: only those rows leave the database, not the passed ones around them.
    `parity_ids` narrows them to some tests."""
    job_pks = sorted({int(j) for j in job_pks})
    cols = ["job_pk", "parity_id", "outcome", "message"]
    if not job_pks:
        return pd.DataFrame(columns=cols)
    tests = None if parity_ids is None else test_pks(engine, parity_ids)
    if tests == []:
        return pd.DataFrame(columns=cols)
    base = select(TestResult.job_pk, TestResult.test_pk, TestResult.outcome,
                  TestResult.message).where(TestResult.message.is_not(None))
    frames = []
    for part in chunks(engine, job_pks):
        stmt = by_jobs(engine, base, part)
        if tests is None:
            frames.append(_read_plain(engine, stmt))
        else:
            frames += [_read_plain(engine, stmt.where(among(engine, TestResult.test_pk, some)))
                       for some in chunks(engine, tests)]
    return _with_parity_ids(engine, frames, cols)


def pair_outcomes(engine: Engine, sides: dict[tuple[int, str], Sequence[int]]) -> pd.DataFrame:
    """`outcomes.contingency` from the per-job vectors: `sides` maps (pair, "amd" or "ref")
    to that side's jobs; per pair, how many tests had each (AMD outcome, reference outcome),
    each side reduced to its worst outcome per test (None where a side did not run it). No
    raw result is read."""
    cols = ["pair", "amd", "ref", "n"]
    parts: dict[str, list[np.ndarray]] = {c: [] for c in cols}
    # each pair's (AMD, reference) codes counted as one number each, in their order (a frame
    # of every test and a pandas grouping of it cost three times as much)
    for pair, _, codes in _pair_codes(engine, sides, skips=False):
        both, n = np.unique(codes["amd"].astype(np.int64) * (ABSENT + 1) + codes["ref"],
                            return_counts=True)
        parts["pair"].append(np.full(len(both), pair, np.int64))
        parts["amd"].append(both // (ABSENT + 1))
        parts["ref"].append(both % (ABSENT + 1))
        parts["n"].append(n.astype(np.int64))
    if not parts["pair"]:
        return pd.DataFrame(columns=cols)
    out = {c: np.concatenate(v) for c, v in parts.items()}
    for side in ("amd", "ref"):
        out[side] = np.where(out[side] == ABSENT, None, vec.names(out[side], vec.OUTCOMES))
    return pd.DataFrame(out, columns=cols)


def _latest_runs(stmt, m, framework, when, engine: Engine):
    """Keep only each (framework, hardware, model, precision, ISL, OSL) group's latest run,
    decided in SQL so that a long history is not read to keep one run of it: over the rows
    of the window's jobs (`_window_jobs`, trusted ones unless asked), read through their job
    index (filtered by the run's time alone, SQLite read every row of the history, and a
    newer untrusted run was a group's latest that no row kept matched, dropping it)."""
    key = [func.coalesce(Framework.name, "other"), func.coalesce(CiJob.hardware_id, -1),
           m.model, m.precision, func.coalesce(m.isl, -1), func.coalesce(m.osl, -1)]
    sub = (select(*[k.label(f"k{i}") for i, k in enumerate(key)],
                  func.max(CiRun.created_at).label("latest"))
           .select_from(m).join(CiJob, CiJob.id == m.job_pk)
           .join(CiRun, CiRun.id == CiJob.run_pk)
           .join(Framework, Framework.id == CiJob.framework_id, isouter=True)
           .group_by(*key))
    sub = sub.where(m.job_pk.in_(_window_jobs(engine, framework, when))).subquery()
    return stmt.join(sub, and_(*(k == sub.c[f"k{i}"] for i, k in enumerate(key)),
                               CiRun.created_at == sub.c.latest))


# each metric row's job, run, framework and hardware
_JOB_FIELDS = [Framework.name.label("framework"), Hardware.vendor, Hardware.sku, Hardware.arch,
               Hardware.raw_name, Hardware.gpu_count, CiRun.id.label("run_pk"),
               CiRun.head_sha.label("commit"), CiRun.created_at.label("run_at"),
               CiRun.url.label("run_url"), CiJob.url.label("job_url")]


# the job fields an accuracy row is read with (`accuracy`): not its run's id or link, but
# its run's attempt, which orders the scores of one run's attempts (`accuracy.history`)
_ACCURACY_JOB_FIELDS = tuple(c for c in _JOB_FIELDS if c.key not in ("run_pk", "run_url")) \
    + (CiRun.attempt,)


def _of_jobs(stmt, job_pk=None):
    """`stmt` joined to its rows' jobs (by `job_pk`; from ci_job itself without one) and
    their runs, frameworks and hardware."""
    stmt = stmt.join(CiJob, CiJob.id == job_pk) if job_pk is not None else stmt.select_from(CiJob)
    return (stmt.join(CiRun, CiRun.id == CiJob.run_pk)
            .join(Framework, Framework.id == CiJob.framework_id, isouter=True)
            .join(Hardware, Hardware.id == CiJob.hardware_id, isouter=True))


def _metric_frame(engine: Engine, model, columns, framework, when,
                  latest: bool = False, job_fields=tuple(_JOB_FIELDS),
                  hardware: frozenset | None = None) -> pd.DataFrame:
    """The window's rows of `model` (benchmark or accuracy rows), `columns` and their job's
    id and fields (`job_fields`, labelled as `_labelled` says). The window's rows are read
    apart from their jobs' fields, which are read once a job (`_by_job`); `latest`
    benchmark rows, a few, in one joined read. `hardware`: the window's benchmark rows of
    jobs on these hardware labels only (`benchmarks`)."""
    if model is BenchmarkMetric and not latest:
        df = _benchmark_rows(engine, columns, framework, when, hardware)
    elif model is AccuracyMetric and not latest:
        df = _accuracy_rows(engine, columns, framework, when, job_fields)
    else:
        stmt = _of_jobs(select(*columns, model.job_pk, *job_fields), model.job_pk) \
            .where(model.job_pk.in_(_window_jobs(engine, framework, when)))
        if latest:
            stmt = _latest_runs(stmt, model, framework, when, engine)
        # benchmark rows are plain numbers and text: straight from the cursor
        df = _read_plain(engine, stmt) if model is BenchmarkMetric else _read(engine, stmt)
        if not df.empty:
            return _labelled(df)
    if df.empty:  # the columns of a joined read, whichever read found nothing
        return _labelled(pd.DataFrame(columns=[c.key for c in columns] + ["job_pk"]
                                      + [c.key for c in job_fields]))
    return df


# the hardware's fields a job's label is made of (`_hardware_label`), which `_labelled` drops
_HARDWARE_PARTS = ("sku", "arch", "raw_name")


def _labelled(df: pd.DataFrame) -> pd.DataFrame:
    """Rows with their job's fields (`_JOB_FIELDS`) as the views read them: the hardware's
    label (`hardware`, last) instead of its SKU, arch and raw name, a vendor and framework
    where none is known, and the run's time parsed."""
    df["hardware"] = _hardware_label(df)
    df["vendor"] = df["vendor"].fillna("unknown")
    df["framework"] = df["framework"].fillna("other")
    df["gpu_count"] = df["gpu_count"].fillna(0).astype(int)
    df["run_at"] = pd.to_datetime(df["run_at"], format="ISO8601")
    return df.drop(columns=list(_HARDWARE_PARTS))


def _by_job(rows: pd.DataFrame, engine: Engine, fields, out: dict) -> pd.DataFrame:
    """`out` (a row's columns by name, `rows`' order) with `rows`' job ids and each row's
    job's `fields`, labelled (`_labelled`): the fields are read and labelled once a job,
    not once a row (a window holds a few hundred jobs' thousands of rows), or taken from
    the call's jobs read when it holds every one of the jobs (`_held_jobs`: a composite
    reads its widest window's jobs first, 4,125 on the 50M store, and the 675 jobs of its
    benchmark rows were read again)."""
    job_pk = rows["job_pk"].to_numpy(np.int64)
    out["job_pk"] = rows["job_pk"]
    held = _held_jobs(engine, np.unique(job_pk))
    if held is not None:  # the call's jobs read has them, labelled as `_labelled` does
        at = pd.Index(held["job_pk"]).get_indexer(job_pk)
        for c in [f.key for f in fields if f.key not in _HARDWARE_PARTS] + ["hardware"]:
            out[c] = held[c].array.take(at)
        return pd.DataFrame(out)
    jobs = _labelled(_read_by_ids(engine, _of_jobs(select(CiJob.id.label("_job"), *fields)),
                                  f"{CiJob.__tablename__}.id", np.unique(job_pk).tolist(),
                                  python_texts=True))  # texts as `_jobs` holds them
    at = pd.Index(jobs["_job"]).get_indexer(job_pk)
    for c in jobs.columns.drop("_job"):
        out[c] = jobs[c].array.take(at)
    return pd.DataFrame(out)


def _accuracy_rows(engine: Engine, columns, framework, when, job_fields) -> pd.DataFrame:
    """The accuracy rows of the window with their job's fields, as one joined read gives
    them, from two reads: the rows with their job's id, straight from the cursor, and each
    job's fields once (`_by_job`). The joined read repeated a job's texts on each of its
    rows and made SQLAlchemy convert every value. The booleans are converted here as that
    read converts them (a column with a NULL stays objects)."""
    stmt = select(*columns, AccuracyMetric.job_pk)
    held = _cut("jobs", engine, (framework_key(framework),), when)  # the window's jobs
    rows = _read_plain(engine, stmt.where(AccuracyMetric.job_pk.in_(
        _window_jobs(engine, framework, when)))) if held is None else _read_by_ids(
        engine, stmt, f"{AccuracyMetric.__tablename__}.job_pk", held["job_pk"].tolist(),
        key_at=len(columns))
    if rows.empty:
        return rows
    for c in columns:
        if isinstance(c.type, Boolean):
            values = np.array(rows[c.key], dtype=object)  # a copy to convert in place
            known = pd.notna(values)
            values[known] = values[known].astype(bool)
            values[~known] = None  # SQLite's NULL among integers arrives as NaN
            rows[c.key] = values.astype(bool) if known.all() else pd.Series(values, dtype=object)
    return _by_job(rows, engine, job_fields, {c.key: rows[c.key] for c in columns})


_b = BenchmarkMetric
BENCHMARK_COLUMNS = [_b.artifact_pk, _b.record_no, _b.benchmark, _b.model, _b.metric,
                     _b.statistic, _b.unit, _b.direction, _b.value, _b.config, _b.config_key,
                     _b.precision, _b.tp, _b.ep, _b.dp, _b.pp, _b.isl, _b.osl, _b.concurrency,
                     _b.request_rate, _b.batch_size]


def _benchmark_rows(engine: Engine, columns, framework, when,
                    hardware: frozenset | None = None) -> pd.DataFrame:
    """The benchmark rows of the window with their job's fields, as one joined read gives
    them, from four reads: the rows' numbers with their series, as each job's arrays
    (`job_benchmark`), each series' dimensions once (`benchmark_series`), each job's fields
    once (`_by_job`: labelled and its run's time parsed once a job, not once a row), and
    each config's text once (a config's key is a hash of its text). A window of a long
    history holds tens of thousands of rows but a few thousand jobs and a few dozen series;
    the repeated texts were most of the read. A row stored without a series (none are,
    since 0014) has its own dimensions read. `hardware`: only the jobs on hardware of these
    labels, chosen from the window's jobs read (`jobs`)."""
    m, series = BenchmarkMetric, BenchmarkSeries
    _require(engine, series, JobBenchmark)
    dimensions = set(SERIES_DIMENSIONS)
    own = [c for c in columns if c.key != "config" and c.key not in dimensions]
    # the numbers of the window's jobs' rows, from each job's arrays: a read of the rows
    # themselves made a Python object of every value (the 50M store's default lookback,
    # 29,250 rows: `benchmarks` 70 -> 39 ms)
    held = _cut("jobs", engine, (framework_key(framework),), when)
    if hardware is not None:
        held = held if held is not None else jobs(engine, framework=framework, when=when)
        held = where(held, held["hardware"].isin(hardware).to_numpy(bool))
    with connection(engine) as conn:
        window = held["job_pk"].tolist() if held is not None else \
            conn.execute(_window_job_ids(engine, framework, when)).scalars().all()
        found = state.read_benchmarks(conn, window)
    if not len(found["ids"]):
        return pd.DataFrame(columns=[c.key for c in own] + ["_id", "job_pk"])
    order = np.argsort(found["ids"], kind="stable")  # as stored
    arrays = {"artifact_pk": "artifacts", "record_no": "records", "value": "values"}
    rows = pd.DataFrame({**{c.key: found[arrays[c.key]][order] for c in own},
                         "_id": found["ids"][order], "job_pk": found["job_pk"][order]})
    # each row's dimensions: its series' (by id), or its own (by minus its id)
    pointer = np.where(found["series"][order] > 0, found["series"][order], -rows["_id"])
    found: list[tuple] = []
    for table, key, by, ids in (
            (series, series.id, series.id, np.unique(pointer[pointer > 0]).tolist()),
            (m, -m.id, m.id, np.unique(-pointer[pointer < 0]).tolist())):
        read = select(key.label("_key"), *(getattr(table, c) for c in SERIES_DIMENSIONS))
        for i in range(0, len(ids), CHUNK):
            found += _fetch(engine, read.where(by.in_(ids[i:i + CHUNK])))[1]
    # one frame of all of them, so each column's type is inferred over their values as a
    # read of the rows themselves infers it
    table = pd.DataFrame.from_records(found, columns=["_key", *SERIES_DIMENSIONS])
    at = pd.Index(table["_key"]).get_indexer(pointer)
    # each row's config key, as the number of its series' key (a series has one config; the
    # texts of 30,000 rows were hashed again to look them up)
    key_code, key_value = pd.factorize(table["config_key"].to_numpy(dtype=object),
                                       use_na_sentinel=False)
    row_key = key_code[at]
    # each config's first row
    first = rows["_id"].to_numpy()[np.unique(row_key, return_index=True)[1]]
    config = _read_plain(engine, select(m.config_key, m.config).where(
        m.id.in_([int(i) for i in first])))
    out = {}
    for c in columns:
        if c.key == "config":
            out[c.key] = config["config"].array.take(
                pd.Index(config["config_key"]).get_indexer(key_value)).take(row_key)
        elif c.key in dimensions:
            out[c.key] = table[c.key].array.take(at)
        else:
            out[c.key] = rows[c.key]
    return _by_job(rows, engine, _JOB_FIELDS, out)


def benchmarks(engine: Engine, *, framework=None, when: Period | None = None,
               latest: bool = False, hardware: Iterable[str] | None = None) -> pd.DataFrame:
    """Numeric benchmark values with their config columns, hardware and run. `latest` keeps
    only each framework × hardware × model × precision × ISL/OSL group's latest run.
    `hardware`: only the rows of jobs on hardware of these labels, not read for the others
    (a caller that follows AMD's series alone, the alerts, reads half the rows)."""
    m, cols = BenchmarkMetric, BENCHMARK_COLUMNS
    if not has_data(engine):
        return pd.DataFrame(columns=[c.key for c in cols])
    labels = None if hardware is None else frozenset(hardware)

    def read(w: Period | None) -> pd.DataFrame:
        df = _metric_frame(engine, m, cols, framework, w, latest,
                           hardware=None if latest else labels)
        if latest and labels is not None:
            df = df[df["hardware"].isin(labels)]
        return df[df["value"].notna()].reset_index(drop=True)
    return read(when) if latest else shared("benchmarks", engine,
                                            metric_key(framework, labels), when, read)


def accuracy(engine: Engine, *, framework=None, when: Period | None = None) -> pd.DataFrame:
    """Accuracy scores with n, stderr, gate, config and concurrency, hardware, commit, time
    and job link: the columns the accuracy views read (an accuracy row's other fields, its
    run's id and link and its parallelism columns, were a third of the read, 24 -> 18 ms
    for the 50M store's default lookback)."""
    m = AccuracyMetric
    cols = [m.model, m.task, m.metric, m.filter, m.value, m.stderr, m.n, m.is_group,
            m.threshold, m.gate_passed, m.config, m.concurrency, m.id.label("accuracy_pk")]
    if not has_data(engine):
        return pd.DataFrame(columns=[c.key for c in cols])

    def read(w: Period | None) -> pd.DataFrame:
        df = _metric_frame(engine, m, cols, framework, w, job_fields=_ACCURACY_JOB_FIELDS)
        return df[df["value"].notna()].reset_index(drop=True)
    return shared("accuracy", engine, (framework_key(framework),), when, read)


def _read_by_job(engine: Engine, stmt, job_pk, framework, when, plain: bool = False
                 ) -> pd.DataFrame:
    """Read rows keyed by `job_pk`, limited to the frameworks and the run window (trusted
    or not: the callers match them to their jobs); `plain`: by `_read_plain`."""
    stmt = stmt.where(job_pk.in_(_window_jobs(engine, framework, when, trusted=False)))
    return _read_plain(engine, stmt) if plain else _read(engine, stmt)


def job_capabilities(engine: Engine, *, framework=None,
                     when: Period | None = None) -> pd.DataFrame:
    """Capabilities jobs were tagged with at ingest (names and manifests)."""
    columns = ["job_pk", "name", "source"]
    if not has_data(engine) or not has_table(engine, JobCapability.__tablename__):
        return pd.DataFrame(columns=columns)
    c = JobCapability
    return _read_by_job(engine, select(c.job_pk, c.name, c.source), c.job_pk, framework, when)


def result_configs(engine: Engine, *, framework=None, when: Period | None = None) -> pd.DataFrame:
    """Each job's distinct result configs: benchmark configs, and accuracy configs with
    their gate (all passed / any failed / none) and worst score; for capability tagging."""
    columns = ["job_pk", "kind", "config_key", "config", "gated", "gate_passed", "value", "task"]
    if not has_data(engine):
        return pd.DataFrame(columns=columns)
    parts = []
    b = BenchmarkMetric
    stmt = (select(b.job_pk, b.config_key, func.min(b.config).label("config"))
            .group_by(b.job_pk, b.config_key))
    # plain numbers and text, a few thousand rows of JSON: straight from the cursor
    bench = _read_by_job(engine, stmt, b.job_pk, framework, when, plain=True)
    parts.append(bench.assign(kind="benchmark", gated=0, gate_passed=None, value=None, task=None))
    a = AccuracyMetric
    gated = func.sum(case((a.gate_passed.is_not(None), 1), else_=0))
    failed = func.sum(case((a.gate_passed.is_(False), 1), else_=0))
    stmt = (select(a.job_pk, a.config_key, func.min(a.config).label("config"),
                   gated.label("gated"), failed.label("failed"), func.min(a.value).label("value"),
                   func.min(a.task).label("task"))
            .where(a.is_group.is_(False)).group_by(a.job_pk, a.config_key))
    acc = _read_by_job(engine, stmt, a.job_pk, framework, when, plain=True)
    acc["gate_passed"] = (acc["failed"] == 0).where(acc["gated"] > 0)
    parts.append(acc.drop(columns="failed").assign(kind="accuracy"))
    parts = [p for p in parts if not p.empty]
    if not parts:
        return pd.DataFrame(columns=columns)
    return pd.concat(parts, ignore_index=True)[columns]


def runners(engine: Engine, *, when: Period | None = None) -> pd.DataFrame:
    """The runners of each scope's latest collection (within the window when one is
    given): the fleet as it is now. A runner missing from its scope's latest collection is
    gone (GitHub removes an ephemeral runner after its job, and any runner offline for
    14 days), so it is not counted from an older snapshot. Read through the scopes'
    (scope, seen_at) index: snapshots pile up with every collection, and none of the
    older ones is read."""
    columns = ["scope", "runner_id", "name", "labels", "os", "status", "busy", "vendor",
               "hardware", "seen_at"]
    if not has_data(engine) or not has_table(engine, RunnerSnapshot.__tablename__):
        return pd.DataFrame(columns=columns)
    rows = _fetch(engine, _runners_read(when))[1]
    if not rows:
        return pd.DataFrame(columns=columns)
    # a fleet's few hundred runners made from Python values, by scope and runner: pandas'
    # read and sort of 67 runners, and its conversions column by column, cost 8 ms
    (scope, runner_id, name, labels, os_, status, busy, vendor, sku, arch, raw_name,
     seen_at) = zip(*sorted(rows, key=lambda r: (r[0], r[1])))
    listed = np.empty(len(labels), dtype=object)
    listed[:] = [json.loads(s or "[]") for s in labels]
    hardware = _hardware_label(pd.DataFrame({"sku": _texts(sku), "arch": _texts(arch),
                                             "raw_name": _texts(raw_name)}))
    return pd.DataFrame({
        "scope": _texts(scope), "runner_id": _texts(runner_id), "name": _texts(name),
        "labels": listed, "os": _texts(os_), "status": _texts(status),
        "busy": np.array(busy, dtype=bool),
        "vendor": _texts(v if v is not None else "unknown" for v in vendor),
        "hardware": hardware.array,
        "seen_at": _times(pd.Series(seen_at))}, columns=columns)


def _texts(values: Iterable) -> pd.api.extensions.ExtensionArray:
    """Texts (None where missing) as the frames hold them."""
    return pd.array(list(values), dtype="str")


@functools.lru_cache(maxsize=32)
def _runners_read(when: Period | None):
    """`runners`' statement, made once a window (its recursive query's objects cost a
    millisecond to build each call)."""
    r = RunnerSnapshot
    latest = _latest_collections(when)
    return (select(r.scope, r.runner_id, r.name, r.labels, r.os, r.status, r.busy,
                   Hardware.vendor, Hardware.sku, Hardware.arch, Hardware.raw_name, r.seen_at)
            .join(latest, and_(r.scope == latest.c.scope, r.seen_at == latest.c.seen_at))
            .join(Hardware, Hardware.id == r.hardware_id, isouter=True))


def _latest_collections(when: Period | None):
    """(scope, seen_at) of each scope's latest collection in the window, as a subquery:
    the scopes are found one index step each (the next scope after the last, a recursive
    query: neither SQLite nor PostgreSQL skips through an index by itself), then each
    one's latest time by the (scope, seen_at) index."""
    r, s = RunnerSnapshot, RunnerSnapshot.__table__.alias("later")
    scopes = select(func.min(r.scope).label("scope")).cte("scopes", recursive=True)
    scopes = scopes.union_all(
        select(select(func.min(s.c.scope)).where(s.c.scope > scopes.c.scope)
               .scalar_subquery()).where(scopes.c.scope.is_not(None)))
    seen = _window(select(func.max(s.c.seen_at)).where(s.c.scope == scopes.c.scope),
                   s.c.seen_at, when)
    return (select(scopes.c.scope, seen.scalar_subquery().label("seen_at"))
            .where(scopes.c.scope.is_not(None)).subquery("latest"))


SOURCE_COLUMNS = ["name", "kind", "target", "status", "last_attempt_at", "last_success_at",
                  "message"]


def source_syncs(engine: Engine) -> pd.DataFrame:
    """The last sync of every source `parity sync` follows."""
    try:
        present = has_table(engine, SourceSync.__tablename__)
    except Exception:  # a missing SQLite file opened read-only
        present = False
    if not present:
        return pd.DataFrame(columns=SOURCE_COLUMNS)
    t = SourceSync
    df = _read(engine, select(t.name, t.kind, t.target, t.status, t.last_attempt_at,
                              t.last_success_at, t.message).order_by(t.name))
    for c in ("last_attempt_at", "last_success_at"):
        df[c] = pd.to_datetime(df[c])
    return df[SOURCE_COLUMNS]


INDUCTOR_COLUMNS = ["job_pk", "classname", "model", "outcome", "status"]


INDUCTOR_FORMAT = "inductor-csv"  # the TorchInductor benchmark CSVs (`collectors.formats`)


def inductor_accuracy(engine: Engine, job_pks: Iterable[int]) -> pd.DataFrame:
    """The TorchInductor accuracy rows of these jobs: the model, its outcome and its status
    (the test's message; a plain `pass` has none). Only the rows of the benchmark CSVs:
    PyTorch's own unit tests of the compiler have classes named `inductor.…` too, and a
    job's unit-test rows are not read at all. The CSVs' artifacts are found first and their
    rows read by artifact: joined in one read, SQLite went through every result of the jobs
    to find the artifact of each (14 nights of PyTorch lanes of 250,000 tests: 1.7 s for no
    CSV at all)."""
    wanted = sorted({int(j) for j in job_pks})
    frames = [pd.DataFrame(columns=INDUCTOR_COLUMNS)]
    csvs: list[tuple[int, int]] = []  # (job, artifact) of each CSV
    for i in range(0, len(wanted), CHUNK):
        csvs += _fetch(engine, select(Artifact.job_pk, Artifact.id).where(
            Artifact.job_pk.in_(wanted[i:i + CHUNK]), Artifact.format == INDUCTOR_FORMAT))[1]
    for i in range(0, len(csvs), CHUNK):
        part = csvs[i:i + CHUNK]
        stmt = (select(TestResult.job_pk, TestCase.classname, TestCase.name.label("model"),
                       TestResult.outcome, TestResult.message.label("status"))
                .join(TestCase, TestCase.id == TestResult.test_pk)
                .where(TestResult.job_pk.in_(sorted({j for j, _ in part})),
                       TestResult.artifact_pk.in_(sorted({a for _, a in part})),
                       TestCase.classname.like("inductor.%")))
        frames.append(_read_plain(engine, stmt))
    out = pd.concat([f for f in frames if not f.empty] or frames[:1], ignore_index=True)
    out["status"] = out["status"].fillna("pass")
    return out


UNTRUSTED_COLUMNS = ["repository", "workflow", "run_id", "attempt", "branch", "event",
                     "untrusted", "run_at", "run_url"]


def untrusted_runs(engine: Engine, when: Period | None = None) -> pd.DataFrame:
    """The runs the views leave out, with why."""
    if not has_data(engine) or not _marks_trust(engine):
        return pd.DataFrame(columns=UNTRUSTED_COLUMNS)
    stmt = select(CiRun.repository, CiRun.workflow, CiRun.run_id, CiRun.attempt, CiRun.branch,
                  CiRun.event, CiRun.untrusted, CiRun.created_at.label("run_at"),
                  CiRun.url.label("run_url")).where(CiRun.untrusted != "")
    df = _read(engine, _window(stmt, CiRun.created_at, when))
    df["run_at"] = pd.to_datetime(df["run_at"])
    return df[UNTRUSTED_COLUMNS].sort_values("run_at", ascending=False).reset_index(drop=True)


ARTIFACT_COLUMNS = ["job_pk", "artifact_pk", "artifact", "path", "sha256", "format", "records",
                    "size_bytes"]


def artifacts(engine: Engine, job_pks: Iterable[int]) -> pd.DataFrame:
    """The result files stored for these jobs, with their SHA-256 and format."""
    wanted = sorted({int(j) for j in job_pks})
    frames = [pd.DataFrame(columns=ARTIFACT_COLUMNS)]
    for i in range(0, len(wanted), CHUNK):
        a = Artifact
        frames.append(_read_plain(engine, select(
            a.job_pk, a.id.label("artifact_pk"), a.name.label("artifact"), a.path, a.sha256,
            a.format, a.records, a.size_bytes).where(a.job_pk.in_(wanted[i:i + CHUNK]))))
    return pd.concat([f for f in frames if not f.empty] or frames[:1], ignore_index=True)


ALERT_COLUMNS = ["fingerprint", "rule", "priority", "framework", "hardware", "subject", "state",
                 "first_seen", "last_seen", "resolved_at", "issue_repo", "issue_number",
                 "evidence"]


def alert_records(engine: Engine) -> pd.DataFrame:
    """Alerts on record (`parity alerts` keeps them): state, when, their issue and their
    evidence (JSON)."""
    try:
        present = has_table(engine, Alert.__tablename__)
    except Exception:
        present = False
    if not present:
        return pd.DataFrame(columns=ALERT_COLUMNS)
    a = Alert
    df = _read(engine, select(a.fingerprint, a.rule, a.priority, a.framework, a.hardware,
                              a.subject, a.state, a.first_seen, a.last_seen, a.resolved_at,
                              a.issue_repo, a.issue_number, a.evidence))
    for c in ("first_seen", "last_seen", "resolved_at"):
        df[c] = pd.to_datetime(df[c])
    return df[ALERT_COLUMNS]
