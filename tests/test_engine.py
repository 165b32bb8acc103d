"""The store's engines: what a URL or path becomes, the SQLite pragmas every write relies on
(WAL, foreign keys, busy timeout), and read-only stores refused writes by the connection
itself, on SQLite and PostgreSQL."""
from __future__ import annotations

import sqlite3
import threading

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from parity.db.engine import connect, make_engine, normalise_url


def test_urls_and_paths(tmp_path, monkeypatch):
    assert normalise_url(tmp_path / "a.db") == f"sqlite:///{tmp_path}/a.db"
    assert normalise_url("~/x.db").startswith("sqlite:////") and "~" not in normalise_url("~/x.db")
    assert normalise_url("postgresql://u@h:5432/d") == "postgresql+psycopg://u@h:5432/d"
    assert normalise_url("postgresql+psycopg://u@h/d") == "postgresql+psycopg://u@h/d"
    assert normalise_url("sqlite:///rel.db") == "sqlite:///rel.db"
    monkeypatch.setenv("PARITY_DB_URL", f"sqlite:///{tmp_path}/env.db")
    assert normalise_url(None) == f"sqlite:///{tmp_path}/env.db"
    monkeypatch.delenv("PARITY_DB_URL")
    assert normalise_url(None) == "sqlite:///parity.db"


def test_sqlite_pragmas_on_a_file(tmp_path):
    engine = make_engine(tmp_path / "deep" / "er" / "p.db")  # parent folders are created
    with engine.connect() as conn:
        pragma = lambda name: conn.exec_driver_sql(f"PRAGMA {name}").scalar()  # noqa: E731
        assert pragma("journal_mode") == "wal"
        assert pragma("synchronous") == 1  # NORMAL
        assert pragma("foreign_keys") == 1
        assert pragma("busy_timeout") == 30000
    assert (tmp_path / "deep" / "er" / "p.db").exists()
    engine.dispose()


def test_sqlite_in_memory_keeps_its_journal(tmp_path):
    engine = make_engine("sqlite://")
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "memory"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000
    with pytest.raises(ValueError, match="read-only store needs a database file"):
        make_engine("sqlite://", read_only=True)


def test_a_locked_writer_waits_for_the_busy_timeout_not_at_once(tmp_path):
    """The connection's own timeout (30 s) lets a second writer wait for the first."""
    path = tmp_path / "busy.db"
    engine = make_engine(path)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE t (x INTEGER)"))
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    release = threading.Timer(0.5, lambda: holder.execute("COMMIT"))
    release.start()
    try:
        with engine.begin() as conn:  # waits for the holder instead of "database is locked"
            conn.execute(text("INSERT INTO t VALUES (1)"))
    finally:
        release.join()
        holder.close()
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM t")).scalar() == 1
    engine.dispose()


def _store(path, *values) -> None:
    """A SQLite file with one table `t` of these values (the engine made for it disposed)."""
    rw = make_engine(path)
    with rw.begin() as conn:
        conn.execute(text("CREATE TABLE t (x INTEGER)"))
        for x in values:
            conn.execute(text("INSERT INTO t VALUES (:x)"), {"x": x})
    rw.dispose()


def test_a_read_only_sqlite_store_refuses_writes_by_the_connection(tmp_path):
    path = tmp_path / "ro.db"
    _store(path, 1)
    ro = make_engine(path, read_only=True)
    with ro.connect() as conn:
        assert conn.execute(text("SELECT x FROM t")).scalar() == 1
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        # the journal mode of the file is WAL (set by the writer); a read-only connection
        # does not try to set it
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    with pytest.raises(OperationalError, match="readonly"):
        with ro.begin() as conn:
            conn.execute(text("INSERT INTO t VALUES (2)"))
    # a missing file (nor its folder) is not created by a read-only engine
    with pytest.raises(OperationalError):
        with make_engine(tmp_path / "nowhere" / "absent.db", read_only=True).connect() as conn:
            conn.execute(text("SELECT 1"))
    assert not (tmp_path / "nowhere").exists()
    ro.dispose()
    with pytest.raises(TypeError):  # read_only is keyword-only: a stray positional is an error
        make_engine(path, True)


def test_a_read_only_engine_leaves_the_file_s_journal_alone(tmp_path):
    """A store written by another tool in rollback-journal mode opens read-only as it is:
    switching it to WAL would be a write."""
    path = tmp_path / "plain.db"
    plain = sqlite3.connect(path)
    plain.execute("CREATE TABLE t (x INTEGER)")
    plain.commit()
    plain.close()
    ro = make_engine(path, read_only=True)
    with ro.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "delete"
        assert conn.execute(text("SELECT count(*) FROM t")).scalar() == 0
    ro.dispose()


def test_a_read_only_engine_can_be_shared_across_threads(tmp_path):
    path = tmp_path / "t.db"
    rw = make_engine(path)
    with rw.connect():
        pass  # creates the file
    rw.dispose()
    ro = make_engine(path, read_only=True)
    conn = ro.raw_connection()
    got = []
    th = threading.Thread(target=lambda: got.append(conn.cursor().execute("SELECT 7").fetchone()))
    th.start()
    th.join()
    conn.close()
    assert got == [(7,)]


def test_a_read_only_engine_serves_many_threads_at_once(tmp_path):
    """The app runs each page run in a new thread: a read-only engine used by more threads
    than any pool size, all at once and over and over, never hands out or closes a
    connection another thread is using."""
    path = tmp_path / "t.db"
    _store(path, 1, 2, 3)
    ro = make_engine(path, read_only=True)
    start, errors, sums = threading.Barrier(12), [], []

    def reader():
        start.wait()
        try:
            for _ in range(50):
                with ro.connect() as conn:
                    sums.append(conn.execute(text("SELECT sum(x) FROM t")).scalar())
        except Exception as e:  # noqa: BLE001 - collected for the assertion
            errors.append(repr(e))

    threads = [threading.Thread(target=reader) for _ in range(12)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == [] and sums == [6] * 600


def test_a_read_only_engine_follows_its_path_when_the_file_is_replaced_or_gone(tmp_path):
    """A store published by renaming a new file over the old one is read at once, not
    through the pooled connections to the old file; a store taken away is an error, not
    the old file's rows."""
    path = tmp_path / "t.db"
    _store(path, 1)
    ro = make_engine(path, read_only=True)

    def read():
        with ro.connect() as conn:
            return conn.execute(text("SELECT x FROM t")).scalar()

    assert read() == 1 and read() == 1  # the second read reuses the pooled connection
    _store(tmp_path / "new.db", 2)
    (tmp_path / "new.db").replace(path)
    assert read() == 2
    path.rename(tmp_path / "gone.db")
    with pytest.raises(OperationalError, match="unable to open"):
        read()


def test_connect_takes_what_a_caller_holds(tmp_path):
    engine = make_engine(tmp_path / "c.db")
    assert connect(engine) is engine
    other = connect(tmp_path / "c.db")
    assert other is not engine and str(other.url) == f"sqlite:///{tmp_path}/c.db"


@pytest.mark.postgres
def test_postgresql_engines(pg_engine):
    url = pg_engine.url.render_as_string(hide_password=False)
    rw = make_engine(url)
    assert rw.url.drivername == "postgresql+psycopg" and rw.pool._pre_ping
    with rw.connect() as conn:
        assert conn.execute(text("SHOW default_transaction_read_only")).scalar() == "off"
    ro = make_engine(url, read_only=True)
    with ro.connect() as conn:
        assert conn.execute(text("SHOW default_transaction_read_only")).scalar() == "on"
    rw.dispose()
    ro.dispose()
