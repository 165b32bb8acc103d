"""The time window a view looks at: `since`/`until` dates or an ISO week such as `2026-W48`."""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta


@dataclass(frozen=True)
class Period:
    """[start, end) in naive UTC; None on a side means unbounded."""

    start: datetime | None = None
    end: datetime | None = None

    def label(self) -> str:
        a = self.start.date().isoformat() if self.start else "…"
        b = (self.end - timedelta(microseconds=1)).date().isoformat() if self.end else "…"
        return f"{a} to {b}"

    def previous(self) -> "Period":
        """The period of the same length just before (for week-over-week deltas)."""
        if self.start is None or self.end is None:
            raise ValueError("an unbounded period has no previous period")
        span = self.end - self.start
        return Period(self.start - span, self.start)


def _as_datetime(value: date | datetime | str | None, end: bool = False) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value) if "T" in value or " " in value \
            else date.fromisoformat(value)
    if isinstance(value, datetime):
        return value.replace(tzinfo=None) if value.tzinfo is None else \
            (value - value.utcoffset()).replace(tzinfo=None)
    # a bare date: `until` includes the whole day
    return datetime.combine(value + timedelta(days=1) if end else value, time())


def week_period(week: str) -> Period:
    """`2026-W48` → Monday 00:00 to the next Monday 00:00."""
    m = re.fullmatch(r"(\d{4})-?W(\d{1,2})", week.strip(), re.I)
    if not m:
        raise ValueError(f"not an ISO week (expected e.g. 2026-W48): {week!r}")
    monday = date.fromisocalendar(int(m.group(1)), int(m.group(2)), 1)
    start = datetime.combine(monday, time())
    return Period(start, start + timedelta(days=7))


def period(since=None, until=None, week: str | None = None) -> Period:
    """The window from the filters every view accepts. `week` excludes since/until."""
    if week:
        if since or until:
            raise ValueError("give either week or since/until, not both")
        return week_period(week)
    return Period(_as_datetime(since), _as_datetime(until, end=True))


def iso_week(day: date | datetime) -> str:
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"
