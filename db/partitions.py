"""`test_result`'s time column and, on PostgreSQL, its partitions.

Every result row carries `run_day`, the UTC day of its run (YYYYMMDD as an integer; 0 for a
run without a time), and the key includes it, so the table can be partitioned and later
distributed by time. On PostgreSQL `test_result` is partitioned by range of `run_day`, one
partition per month (`test_result_p202611`) and one for undated runs; the writer makes the
month's partition before it writes into it (`ensure`). SQLite keeps one clustered table
with the same columns and key.
"""
from __future__ import annotations

import re
import zlib
from datetime import datetime
from typing import Iterable

from sqlalchemy import Connection

TABLE = "test_result"
UNDATED = "test_result_undated"  # run_day 0: runs without a time
_NAME = re.compile(r"test_result_(?:p\d{6}|undated)")
_LOCK = zlib.crc32(b"parity:test_result partitions")  # serialises concurrent creations


def day_of(when: datetime | None) -> int:
    """The run_day of a run's time (0 when it has none)."""
    return when.year * 10000 + when.month * 100 + when.day if when is not None else 0


def month(day: int) -> tuple[str, int, int]:
    """The partition holding a run_day: its name and its [start, end) range of days."""
    year, mon = divmod(day // 100, 100)
    nxt = (year + 1) * 100 + 1 if mon == 12 else year * 100 + mon + 1
    return f"{TABLE}_p{year:04d}{mon:02d}", (year * 100 + mon) * 100, nxt * 100


def is_partition(name: str) -> bool:
    """A partition of test_result (not a table of the models: schema comparisons skip it)."""
    return bool(_NAME.fullmatch(name))


def create_sql(day: int) -> str:
    """The DDL of the partition that holds `day` (the undated one for 0)."""
    if day <= 0:
        return (f"CREATE TABLE IF NOT EXISTS {UNDATED} PARTITION OF {TABLE} "
                f"FOR VALUES FROM (MINVALUE) TO (10000101)")
    name, start, end = month(day)
    return (f"CREATE TABLE IF NOT EXISTS {name} PARTITION OF {TABLE} "
            f"FOR VALUES FROM ({start}) TO ({end})")


def ensure(conn: Connection, days: Iterable[int]) -> None:
    """Make the partitions these run_days go to, where missing (PostgreSQL; nothing to do on
    SQLite). Within the caller's transaction: a rolled-back ingest leaves no partition it
    made. Concurrent writers wait for each other's creation instead of colliding."""
    if conn.dialect.name != "postgresql":
        return
    for day in sorted({max(int(d), 0) for d in days}):
        name = UNDATED if day == 0 else month(day)[0]
        if conn.exec_driver_sql("SELECT to_regclass(%s)", (name,)).scalar() is None:
            conn.exec_driver_sql("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
            conn.exec_driver_sql(create_sql(day))
