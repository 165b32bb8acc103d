"""Alembic migrations, run from code: `upgrade(engine)` brings any store to the head revision.

Alembic is imported only when a migration actually has to run: a store already at `HEAD`
(every ingest after the first) pays one query, not Alembic's import time."""
from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, inspect, text

MIGRATIONS = Path(__file__).with_name("migrations")
HEAD = "0015"  # the newest revision under migrations/versions; a test keeps the two equal
VERSION_TABLE = "alembic_version"


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
    """Run the migrations up to `revision` (no-op when already there)."""
    if revision == "head" and current_revision(engine) == HEAD:
        return
    from alembic import command

    command.upgrade(alembic_config(engine), revision)
    if revision == "head":  # derived state the new revisions added, from the raw rows
        from parity.db import state

        state.complete(engine)
