"""Alembic migrations, run from code: `upgrade(engine)` brings any store to the head revision.

Alembic is imported only when a migration actually has to run: a store already at `HEAD`
(every ingest after the first) pays one query, not Alembic's import time. A new SQLite
store is created from `schema.sqlite.sql`, the schema the migration chain leaves, in one
transaction, instead of replaying every revision (Alembic's import and fifteen revisions
are a second, most of a first ingest's time); a test keeps the file equal, statement for
statement, to what the chain makes, and `parity db schema --write` writes it again."""
from __future__ import annotations

import tempfile
from pathlib import Path

from sqlalchemy import Engine, inspect, text

MIGRATIONS = Path(__file__).with_name("migrations")
HEAD = "0020"  # the newest revision under migrations/versions; a test keeps the two equal
VERSION_TABLE = "alembic_version"
SQLITE_SCHEMA = Path(__file__).with_name("schema.sqlite.sql")
_SEPARATOR = ";\n\n"  # between the file's statements (DDL never holds it)


def alembic_config(engine: Engine):
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["engine"] = engine
    return cfg


def head_revision() -> str:
    """The head as Alembic computes it from the revision files."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory(str(MIGRATIONS)).get_current_head()


def current_revision(engine: Engine) -> str | None:
    """The revision the store is at, or None for a store without a schema."""
    with engine.connect() as conn:
        if not inspect(conn).has_table(VERSION_TABLE):
            return None
        return conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar()


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Run the migrations up to `revision` (no-op when already there); a new SQLite store
    at head is created from the schema file instead."""
    if revision == "head":
        current = current_revision(engine)
        if current == HEAD or (current is None and _create_sqlite(engine)):
            return
    replay(engine, revision)
    if revision == "head":  # derived state the new revisions added, from the raw rows
        from parity.db import state, streaks

        state.complete(engine)
        streaks.complete(engine)  # from the vectors


def replay(engine: Engine, revision: str = "head") -> None:
    """Alembic's chain of revisions up to `revision`, whatever the store."""
    from alembic import command

    command.upgrade(alembic_config(engine), revision)


def sqlite_schema(engine: Engine) -> str:
    """A SQLite store's schema as the file holds it: its revision, then every CREATE
    statement SQLite keeps, tables first, each in the order it was made."""
    with engine.connect() as conn:
        rows = conn.exec_driver_sql(
            "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' "
            "ORDER BY type <> 'table', rowid").scalars().all()
    head = (f"{_first_line(current_revision(engine))} as the migration chain leaves it: a "
            "new store is made\n-- from this file (db/migrate.py). Written by `parity db "
            "schema --write`; do not edit by hand.\n")
    return head + _SEPARATOR.join(rows) + ";\n"


def _first_line(revision: str | None) -> str:
    """How the schema file's first line begins: it names the file's revision."""
    return f"-- Parity's SQLite schema at revision {revision},"


def chain_schema() -> str:
    """The SQLite schema the migration chain makes, from a store it builds in a temporary
    folder."""
    from parity.db.engine import make_engine

    with tempfile.TemporaryDirectory() as tmp:
        engine = make_engine(Path(tmp) / "chain.db")
        try:
            replay(engine)
            return sqlite_schema(engine)
        finally:
            engine.dispose()


def _create_sqlite(engine: Engine) -> bool:
    """Make a new SQLite store's schema from the file, at `HEAD`, in one transaction that
    first checks the store holds no table (a store being made by another process, or made
    by hand, is left to the chain). False where it did not."""
    if engine.dialect.name != "sqlite" or not SQLITE_SCHEMA.exists():
        return False
    body = SQLITE_SCHEMA.read_text(encoding="utf-8")
    if not body.startswith(_first_line(HEAD)):
        return False  # a file from another revision: the chain knows better
    statements = [s for s in ("\n".join(line for line in body.splitlines()
                                         if not line.startswith("-- "))
                              .rstrip().rstrip(";").split(_SEPARATOR)) if s.strip()]
    raw = engine.raw_connection()
    try:
        dbapi = raw.driver_connection
        level, dbapi.isolation_level = dbapi.isolation_level, None  # our BEGIN and COMMIT
        cur = dbapi.cursor()
        try:
            cur.execute("BEGIN IMMEDIATE")
            if cur.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                cur.execute("ROLLBACK")
                return False
            for statement in statements:
                cur.execute(statement)
            cur.execute(f"INSERT INTO {VERSION_TABLE} (version_num) VALUES (?)", (HEAD,))
            cur.execute("COMMIT")
            return True
        except BaseException:
            if dbapi.in_transaction:
                cur.execute("ROLLBACK")
            raise
        finally:
            cur.close()
            dbapi.isolation_level = level
    finally:
        raw.close()
