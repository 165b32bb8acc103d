"""Failure streaks longer than any view's history: each lane's tests that were failing at a
cutoff kept `DAYS` days behind the newest trusted run (`lane_streak`, `streak_cutoff`).

A view follows a streak run by run from the cutoff on, through the per-job outcome vectors,
and adds what this state holds from before it: how many runs the test had been failing in
and since when. So a streak of a year shows as a year although the view reads two months.

A lane is what the views group by: a framework's name, a hardware's label and a suite; a
run's code for a test is its worst over the lane's jobs of that run and the test's vendor
spellings, as the views take it. Only trusted runs count, in order of their time, then id.

Kept in the transaction that writes what it counts: `follow` after a job's vector changed,
`watching` around a change to a run's time or trust, a job's lane, a job's vector dropped
or a run deleted. When the newest trusted run moves, the runs that fall behind the new
cutoff are folded in, each once; a change to a run before the cutoff derives its lanes
again from their vectors (a 50M store's every lane: 4 s). `rebuild` derives everything
from the vectors; a test keeps the two equal."""
from __future__ import annotations

from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Iterable

import numpy as np
from sqlalchemy import Connection, DateTime, Engine, bindparam, text

from parity.db import state
from parity.db.vectors import FAILING, OUTCOMES, Aliases, distinct

DAYS = 60  # the cutoff's distance behind the newest trusted run: the views' streak history
PASSED = OUTCOMES.index("passed")  # codes up to it ran (error, failed, passed)
NAT = np.datetime64("NaT", "us")
ROWS = 64  # runs per array when a lane is folded (a lane of 300,000 tests: 19 MB)
# a lane's parts, as the views name them (`dashboard.tables.jobs`): a job without a
# framework is `other`'s, a hardware is labelled by its SKU, else its architecture, else
# its raw name, and one without a hardware is `unknown`
LANE = ("COALESCE(f.name, 'other'), "
        "COALESCE(NULLIF(h.sku, ''), NULLIF(h.arch, ''), NULLIF(h.raw_name, ''), 'unknown'), "
        "COALESCE(j.suite, '')")
_JOBS = (f"SELECT j.id, j.run_pk, r.created_at, {LANE} FROM ci_job j "
         "JOIN ci_run r ON r.id = j.run_pk "
         "LEFT JOIN framework f ON f.id = j.framework_id "
         "LEFT JOIN hardware h ON h.id = j.hardware_id "
         "WHERE r.untrusted = '' AND r.created_at IS NOT NULL "
         "AND EXISTS (SELECT 1 FROM job_outcome o WHERE o.job_pk = j.id)")

Lane = tuple[str, str, str]


def _sql(sql: str, params: dict):
    """`sql` with its time parameters typed, so that each backend gets them as it stores
    its times (SQLite: SQLAlchemy's text form, which its comparisons need)."""
    return text(sql).bindparams(*(bindparam(k, type_=DateTime) for k, v in params.items()
                                  if isinstance(v, datetime)))


def fold(tail: np.ndarray, since: np.ndarray, codes: np.ndarray, when: np.ndarray
         ) -> tuple[np.ndarray, np.ndarray]:
    """Each test's failing tail after more runs: `tail` and `since` (datetime64[us], NaT
    where no tail) before them, `codes` runs x tests (in time order; a code past
    `PASSED` where the test did not run) and `when` each run's time. A run where the test
    passed ends its tail; one where it failed or errored lengthens it; one where it did not
    run leaves it."""
    if not len(codes):
        return tail, since
    row = np.arange(codes.shape[0])[:, None]
    bad = codes <= FAILING
    last_ok = np.where((codes <= PASSED) & ~bad, row, -1).max(axis=0, initial=-1)
    failing = bad & (row > last_ok)
    n = failing.sum(axis=0)
    first = when[np.minimum(np.where(failing, row, len(when)).min(axis=0), len(when) - 1)]
    first = np.where(n > 0, first, NAT)
    kept = last_ok < 0  # no pass among these runs: the tail before them goes on
    return (np.where(kept, tail + n, n),
            np.where(kept & (tail > 0), since, first))


def cutoff(conn: Connection) -> datetime | None:
    """The cutoff the state is kept at (None: not derived)."""
    at = conn.exec_driver_sql("SELECT cutoff FROM streak_cutoff WHERE id = 1").scalar()
    return None if at is None else _time(at)


def target(conn: Connection) -> datetime | None:
    """Where the cutoff belongs: `DAYS` days before the newest trusted run, where a view's
    default history starts (so that it reads no run more for the state)."""
    newest = conn.exec_driver_sql(
        "SELECT max(created_at) FROM ci_run WHERE untrusted = ''").scalar()
    return None if newest is None else _time(newest) - timedelta(days=DAYS)


def _time(value) -> datetime:
    return datetime.fromisoformat(value) if isinstance(value, str) else value


def _jobs(conn: Connection, where: str = "", params: dict | None = None
          ) -> dict[Lane, list[tuple[int, int, datetime]]]:
    """The trusted jobs with a vector that `where` keeps, by lane: (job, run, run time)."""
    out: dict[Lane, list[tuple[int, int, datetime]]] = {}
    params = params or {}
    for job, run, at, fw, hw, suite in conn.execute(_sql(_JOBS + where, params), params):
        out.setdefault((fw, hw, suite), []).append((int(job), int(run), _time(at)))
    return out


def _derive(conn: Connection, jobs: list[tuple[int, int, datetime]], aliases: Aliases,
            ids: np.ndarray, tail: np.ndarray, since: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A lane's tails (over test ids `ids`, sorted) after these jobs' runs, `ROWS` runs at
    a time; the ids grow by the tests the jobs ran."""
    jobs = sorted(jobs, key=lambda j: (j[2], j[1], j[0]))  # runs by time, then id
    runs = list(dict.fromkeys(j[1] for j in jobs))
    for a in range(0, len(runs), ROWS):
        part = set(runs[a:a + ROWS])
        chunk = [j for j in jobs if j[1] in part]
        found = state.read(conn, [j[0] for j in chunk], ("outcomes",))
        vectors = {job: _by_parity(v, aliases) for job, v in found.items()}
        grown = distinct(np.concatenate([ids, *(v[0] for v in vectors.values())]))
        if len(grown) > len(ids):
            at = np.searchsorted(grown, ids)
            tail, since = (np.zeros(len(grown), np.int64), np.full(len(grown), NAT)) \
                if not len(ids) else _spread(tail, since, at, len(grown))
            ids = grown
        row_of = {run: i for i, run in enumerate(runs[a:a + ROWS])}
        codes = np.full((len(row_of), len(ids)), 255, np.uint8)
        when = np.empty(len(row_of), "datetime64[us]")
        for job, run, at in chunk:
            r = row_of[run]
            when[r] = np.datetime64(at, "us")
            if job in vectors:
                tests, outcomes = vectors[job]
                col = np.searchsorted(ids, tests)
                codes[r, col] = np.minimum(codes[r, col], outcomes)
        tail, since = fold(tail, since, codes, when)
    return ids, tail, since


def _by_parity(v, aliases: Aliases) -> tuple[np.ndarray, np.ndarray]:
    """A job's tests by parity id, each with its worst outcome over its spellings."""
    ids = aliases.parity_ids(v.ids)
    if ids is v.ids:
        return ids, v.outcomes
    order = np.lexsort((v.outcomes, ids))  # by parity id, the worst code first
    ids, outcomes = ids[order], v.outcomes[order]
    first = np.r_[True, ids[1:] != ids[:-1]]
    return ids[first], outcomes[first]


def _spread(tail, since, at, size):
    t, s = np.zeros(size, np.int64), np.full(size, NAT)
    t[at], s[at] = tail, since
    return t, s


def _read_lane(conn: Connection, lane: Lane) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    row = conn.execute(text(
        "SELECT ids, tails, since FROM lane_streak WHERE framework = :f AND hardware = :h "
        "AND suite = :s"), {"f": lane[0], "h": lane[1], "s": lane[2]}).one_or_none()
    return arrays(*row) if row else (np.empty(0, np.int64), np.empty(0, np.int64),
                                     np.empty(0, "datetime64[us]"))


def arrays(ids: bytes, tails: bytes, since: bytes
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A `lane_streak` row's arrays as stored: parity ids, tails, since (datetime64[us])."""
    return (np.frombuffer(ids, "<i8").astype(np.int64), np.frombuffer(tails, "<i8")
            .astype(np.int64), np.frombuffer(since, "<i8").astype("datetime64[us]"))


def _write_lane(conn: Connection, lane: Lane, ids, tail, since) -> None:
    params = {"f": lane[0], "h": lane[1], "s": lane[2]}
    conn.execute(text("DELETE FROM lane_streak WHERE framework = :f AND hardware = :h "
                      "AND suite = :s"), params)
    keep = tail > 0
    if keep.any():
        conn.execute(text("INSERT INTO lane_streak (framework, hardware, suite, tests, ids, "
                          "tails, since) VALUES (:f, :h, :s, :n, :i, :t, :w)"),
                     {**params, "n": int(keep.sum()),
                      "i": ids[keep].astype("<i8").tobytes(),
                      "t": tail[keep].astype("<i8").tobytes(),
                      "w": since[keep].astype("datetime64[us]").astype("<i8").tobytes()})


def _set_cutoff(conn: Connection, at: datetime) -> None:
    conn.execute(text("DELETE FROM streak_cutoff"))
    conn.execute(_sql("INSERT INTO streak_cutoff (id, cutoff) VALUES (1, :c)", {"c": at}),
                 {"c": at})


def _aliases(conn: Connection) -> Aliases:
    return Aliases(state.alias_rows(conn))


def derive(conn: Connection, lanes: Iterable[Lane] | None = None) -> int:
    """Derive these lanes' state (every lane's: None) again from their vectors, at the
    cutoff the store holds (for every lane, at the one the newest run gives when there is
    none); the number of lanes. In the caller's transaction."""
    at = cutoff(conn)
    if lanes is None:
        at = target(conn)
        conn.execute(text("DELETE FROM lane_streak"))
        if at is None:
            conn.execute(text("DELETE FROM streak_cutoff"))
            return 0
        _set_cutoff(conn, at)
    elif at is None:
        return 0
    wanted = None if lanes is None else set(lanes)
    found = _jobs(conn, " AND r.created_at < :c", {"c": at})
    aliases = _aliases(conn)
    done = 0
    for lane in (wanted if wanted is not None else found):
        ids, tail, since = _derive(conn, found.get(lane, []), aliases,
                                   np.empty(0, np.int64), np.empty(0, np.int64),
                                   np.empty(0, "datetime64[us]"))
        _write_lane(conn, lane, ids, tail, since)
        done += 1
    return done


def advance(conn: Connection, at: datetime | None = None) -> None:
    """Move the cutoff (`at`, when the caller has read it) to where the newest trusted run
    puts it, folding the runs it passes into their lanes' state. When it belongs earlier
    (the newest runs were deleted), every lane is derived again there: a fold cannot be
    undone. A store whose state is not derived is left as it is."""
    at, to = at or cutoff(conn), target(conn)
    if at is None or to == at:
        return
    if to is None or to < at:
        derive(conn)
        return
    found = _jobs(conn, " AND r.created_at >= :a AND r.created_at < :b", {"a": at, "b": to})
    aliases = _aliases(conn) if found else None
    for lane, jobs in found.items():
        _write_lane(conn, lane, *_derive(conn, jobs, aliases, *_read_lane(conn, lane)))
    _set_cutoff(conn, to)


def positions(conn: Connection, *, jobs: Iterable[int] = (), runs: Iterable[int] = ()
              ) -> set[tuple]:
    """Where these jobs and the jobs of these runs count, as far as the state is concerned:
    (job, lane, run time) of each trusted one with a vector. Taken before and after a
    change to runs or jobs, for `moved`; empty where the state is not derived."""
    jobs, runs = sorted({int(j) for j in jobs}), sorted({int(r) for r in runs})
    if (not jobs and not runs) or cutoff(conn) is None:
        return set()
    found = _jobs(conn, " AND (j.id IN ({}) OR j.run_pk IN ({}))".format(
        ", ".join(map(str, jobs)) or "NULL", ", ".join(map(str, runs)) or "NULL"))
    return {(job, lane, at) for lane, rows in found.items() for job, _, at in rows}


def moved(conn: Connection, before: set[tuple], after: set[tuple]) -> None:
    """After a change that moved jobs between lanes, times or trust (`positions` before
    and after it): the lanes it touched before the cutoff are derived again, and the cutoff
    follows the newest trusted run."""
    at = cutoff(conn)
    if at is not None and before != after:
        touched = {lane for _, lane, when in before ^ after if when < at}
        if touched:
            derive(conn, touched)
    advance(conn, at)


@contextmanager
def watching(conn: Connection, *, jobs: Iterable[int] = (), runs: Iterable[int] = ()):
    """Keep the state in step with a change to these jobs or runs made inside the block
    (`positions` before and after it, `moved`): a run that moves in time or loses trust, a
    job that moves to another lane or loses its vector, a run deleted."""
    jobs, runs = list(jobs), list(runs)
    before = positions(conn, jobs=jobs, runs=runs)
    yield
    moved(conn, before, positions(conn, jobs=jobs, runs=runs))


def follow(conn: Connection, job_pks: Iterable[int]) -> None:
    """After these jobs' vectors changed: their lanes are derived again where the jobs'
    runs are before the cutoff (a run stored late), and the cutoff follows the newest run.
    A store whose state was never derived (a new one) is derived whole."""
    jobs = ", ".join(str(int(j)) for j in sorted(set(job_pks))) or "NULL"
    # the cutoff, where it belongs and the jobs' earliest run, in one round trip (once a
    # report): the usual job is a new run's, after the cutoff, which moves it or not
    at, newest, earliest = conn.exec_driver_sql(
        "SELECT (SELECT cutoff FROM streak_cutoff WHERE id = 1), "
        "(SELECT max(created_at) FROM ci_run WHERE untrusted = ''), "
        "(SELECT min(r.created_at) FROM ci_job j JOIN ci_run r ON r.id = j.run_pk "
        f"WHERE j.id IN ({jobs}) AND r.untrusted = '')").one()
    if at is None:
        derive(conn)
        return
    at = _time(at)
    if earliest is not None and _time(earliest) < at:
        touched = {lane for _, lane, when in positions(conn, jobs=job_pks) if when < at}
        if touched:
            derive(conn, touched)
    if newest is None or _time(newest) - timedelta(days=DAYS) != at:
        advance(conn, at)


def complete(engine: Engine) -> bool:
    """Derive the state of a store that has none (upgraded from before it); whether it did."""
    with engine.begin() as conn:
        if cutoff(conn) is not None:
            return False
        derive(conn)
        return True


def rebuild(engine: Engine) -> int:
    """Derive every lane's state again from the vectors; the number of lanes."""
    with engine.begin() as conn:
        return derive(conn)
