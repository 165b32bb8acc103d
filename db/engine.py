"""Engines for SQLite (embedded default) and PostgreSQL, with the pragmas Parity relies on."""
from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import Engine, create_engine, event, exc
from sqlalchemy.dialects.sqlite.base import SQLiteCompiler
from sqlalchemy.engine import make_url
from sqlalchemy.pool import QueuePool

from parity.db.settings import Settings


def normalise_url(url: str | Path | None) -> str:
    """Accept a SQLAlchemy URL, a bare file path, or None (the `PARITY_DB_URL` setting)."""
    if url is None:
        url = Settings.from_env().db_url
    url = str(url)
    if "://" not in url:
        return f"sqlite:///{Path(url).expanduser()}"
    if url.startswith("postgresql://"):
        return "postgresql+psycopg://" + url[len("postgresql://"):]
    return url


def make_engine(url: str | Path | None = None, *, read_only: bool = False) -> Engine:
    """Create an engine. SQLite gets WAL, foreign keys and a busy timeout; `read_only`
    opens SQLite with `mode=ro` and PostgreSQL with `default_transaction_read_only`."""
    sa_url = make_url(normalise_url(url))
    if sa_url.get_backend_name() == "sqlite":
        return _sqlite_engine(sa_url, read_only)
    connect_args = {}
    if read_only:
        connect_args["options"] = "-c default_transaction_read_only=on"
    return create_engine(sa_url, connect_args=connect_args, pool_pre_ping=True)


def _sqlite_engine(sa_url, read_only: bool) -> Engine:
    path = sa_url.database or ":memory:"
    if path != ":memory:" and not read_only:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    if read_only:
        if path == ":memory:":
            raise ValueError("a read-only store needs a database file")
        uri = f"file:{Path(path).resolve()}?mode=ro"
        # the URL names the file (for messages); the creator opens it read-only. A queue
        # of connections, checked out per use, as for a writable file: a pool of one
        # connection per thread closes connections still in use once more than its size of
        # threads have asked (the app runs each page run in a thread of its own)
        engine = create_engine(sa_url.set(database=str(Path(path).resolve())),
                               creator=lambda: _sqlite3_connect(uri), poolclass=QueuePool,
                               pool_use_lifo=True)  # the last used: its page cache is warm
        _follow_the_file(engine, Path(path).resolve())
    else:
        engine = create_engine(sa_url)  # the busy timeout is the pragma below
    engine.dialect.statement_compiler = _HintingCompiler

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn, _record):  # pragma: no branch
        cur = dbapi_conn.cursor()
        if not read_only and path != ":memory:":
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA busy_timeout=30000")
        cur.close()

    return engine


class _HintingCompiler(SQLiteCompiler):
    """SQLite's statement compiler, writing a table's `with_hint` text after its name
    (`FROM test_result INDEXED BY ix_test_result_notable`). SQLAlchemy's SQLite dialect
    drops table hints, so without this a read that names the index it must use gets the
    planner's own choice."""

    def get_from_hint_text(self, table, text):
        return text


def _follow_the_file(engine: Engine, path: Path) -> None:
    """A pooled connection reads the file it opened, even once another file has taken its
    path (a store replaced by a rename, as snapshots are published) or the path is gone.
    Each connection remembers its file; one whose path now names another file, or
    nothing, is dropped at checkout and a new one opened on the path."""
    def identity():
        st = os.stat(path)
        return st.st_dev, st.st_ino

    @event.listens_for(engine, "connect")
    def _remember(_dbapi_conn, record):
        record.info["file"] = identity()

    @event.listens_for(engine, "checkout")
    def _same_file(_dbapi_conn, record, _proxy):
        try:
            same = record.info.get("file") == identity()
        except OSError:
            same = False
        if not same:
            raise exc.DisconnectionError(f"{path} is no longer the file this connection read")


def _sqlite3_connect(uri: str):
    import sqlite3

    return sqlite3.connect(uri, uri=True, check_same_thread=False)


def connect(url: str | Path | Engine | None = None) -> Engine:
    """An engine from whatever a caller holds: an Engine, a URL, a path or nothing."""
    if isinstance(url, Engine):
        return url
    return make_engine(url)
