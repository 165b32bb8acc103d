"""Parity's result store: typed SQLAlchemy models, engines, migrations and the bulk write path.

`db` imports nothing else of Parity's; every other package builds on it.
"""
from parity.db.engine import connect, make_engine
from parity.db.migrate import upgrade

__all__ = ["connect", "make_engine", "upgrade"]
