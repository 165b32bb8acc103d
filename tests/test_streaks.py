"""Failure streaks longer than a view's history (`db.streaks`): the state ingest keeps at the
cutoff equals a rebuild from the vectors after a history, a run stored late, a run moved in
time, a run that loses trust, an older store's upgrade; the fold of runs is the same in any
number of steps; and `amd_only_failures` shows a streak as the whole history counts it,
its other figures as before, on both backends."""
from __future__ import annotations

from datetime import date, datetime, timedelta

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import text

from parity.collectors import demo
from parity.collectors.formats import records
from parity.collectors.formats.records import ParseResult
from parity.collectors.writer import ArtifactInfo, Provenance, Writer
from parity.dashboard import frames, tables
from parity.db import store, streaks
from parity.db.migrate import upgrade
from parity.db.vectors import OUTCOMES

CODE = {o[0]: OUTCOMES.index(o) for o in ("error", "failed", "passed", "skipped")}
NOT_RUN = 255
T0 = np.datetime64("2026-01-01T02:00", "us")


def kept(engine) -> tuple[list, list]:
    """The cutoff, and a row per lane's failing test: (lane, parity id, tail, since)."""
    with engine.connect() as conn:
        cutoff = conn.execute(text("SELECT cutoff FROM streak_cutoff")).scalars().all()
        lanes = conn.execute(text("SELECT framework, hardware, suite, tests, ids, tails, since "
                                  "FROM lane_streak ORDER BY framework, hardware, suite")).all()
    rows = []
    for fw, hw, suite, tests, *blobs in lanes:
        ids, tails, since = streaks.arrays(*(bytes(b) for b in blobs))
        assert tests == len(ids) > 0 and (tails > 0).all() and (np.diff(ids) > 0).all()
        rows += [(fw, hw, suite, int(i), int(t), w.item()) for i, t, w in zip(ids, tails, since)]
    return cutoff, rows


def codes(*rows: str) -> np.ndarray:
    """Runs x tests from letters: e error, f failed, p passed, s skipped, . did not run."""
    return np.array([[CODE.get(c, NOT_RUN) for c in row] for row in rows], np.uint8)


def start(n: int):
    return np.zeros(n, np.int64), np.full(n, streaks.NAT)


def test_a_tail_is_the_failures_since_the_last_pass_and_when_they_began():
    when = T0 + np.arange(5) * np.timedelta64(1, "D")
    tail, since = streaks.fold(*start(6), codes("fppf.e",
                                                 "ffps.f",
                                                 "f.fs.p",
                                                 "fppf.f",
                                                 "efpe.f"), when)
    assert tail.tolist() == [5, 1, 0, 3, 0, 2]
    # a run where the test was skipped or did not run neither ends nor lengthens a tail
    assert since.tolist() == [when[0].item(), when[4].item(), None, when[0].item(), None,
                              when[3].item()]


def test_folding_runs_in_steps_gives_what_folding_them_at_once_gives():
    rng = np.random.default_rng(7)
    for _ in range(50):
        runs, tests = rng.integers(1, 40), rng.integers(1, 30)
        c = rng.choice(np.array([CODE["e"], CODE["f"], CODE["p"], CODE["s"], NOT_RUN], np.uint8),
                       size=(runs, tests), p=[0.1, 0.3, 0.3, 0.1, 0.2])
        when = T0 + np.arange(runs) * np.timedelta64(1, "D")
        whole = streaks.fold(*start(tests), c, when)
        tail, since = start(tests)
        cuts = np.sort(rng.choice(np.arange(1, runs + 1), size=min(3, runs), replace=False))
        for a, b in zip(np.r_[0, cuts[:-1]], cuts):
            tail, since = streaks.fold(tail, since, c[a:b], when[a:b])
        tail, since = streaks.fold(tail, since, c[cuts[-1]:], when[cuts[-1]:])
        assert tail.tolist() == whole[0].tolist()
        assert since.tolist() == whole[1].tolist()


def test_a_history_longer_than_the_cutoff_keeps_state_equal_to_a_rebuild(engine):
    demo.build(engine, days=70, end=date(2026, 11, 27), sizes=demo.plan(70, results=20_000))
    cutoff, rows = kept(engine)
    # the newest nightly ran on 2026-11-27 at 02:00: the cutoff is 60 days before it
    assert [streaks._time(c) for c in cutoff] == [datetime(2026, 9, 28, 2)]
    # the AMD-only failures, and flaky tests' last failures on every vendor
    assert {r[1] for r in rows if r[4] > 3} == {"mi355x"}
    assert max(r[4] for r in rows) == 9  # failing since the first night, nine before it
    streaks.rebuild(engine)
    assert kept(engine) == (cutoff, rows)


def lane(engine, night: int, outcomes: dict[str, str], *, run: str | None = None,
         untrusted: str = "", hour: int = 2, sha: str | None = None) -> None:
    """One nightly run of a small MI300X vLLM lane, `night` days after 2026-01-01."""
    at = datetime(2026, 1, 1, hour) + timedelta(days=night)
    run = run or f"n{night}"
    prov = Provenance(run_id=run, job_id=f"{run}-kernels", framework="vllm", suite="kernels",
                      runner_labels=["mi300_1"], run_created_at=at, untrusted=untrusted)
    result = ParseResult(format="junit", tests=[
        records.TestRecord(classname="tests.kernels.test_attn", name=name, params=None,
                           outcome=out, suite="kernels") for name, out in outcomes.items()])
    art = ArtifactInfo(path=f"{run}.xml", sha256=sha or f"{run}-{untrusted}-{at}",
                       size_bytes=0, format="junit", parser_version="t")
    with store.bulk_transaction(engine) as conn:
        Writer(engine_vocabulary()).write(conn, result, prov, art)


def engine_vocabulary():
    from parity.db.hardware import vocabulary

    return vocabulary()


def tails(engine) -> dict[str, tuple[int, datetime]]:
    with engine.connect() as conn:
        names = dict(conn.execute(text("SELECT parity_id, name FROM test_case")).all())
    return {names[r[3]]: (r[4], r[5]) for r in kept(engine)[1]}


def night(n: int) -> datetime:
    return datetime(2026, 1, 1, 2) + timedelta(days=n)


def test_late_moved_and_untrusted_runs_keep_state_equal_to_a_rebuild(engine):
    upgrade(engine)
    for n in range(0, 80, 2):  # a nightly every other day; `a` fails from night 10 on
        lane(engine, n, {"a": "failed" if n >= 10 else "passed", "b": "failed",
                         "c": "passed" if n % 4 else "failed"})
    # newest night 78: the cutoff is 2026-01-19 (night 18)
    assert tails(engine) == {"a": (4, night(10)), "b": (9, night(0)), "c": (1, night(16))}
    state = kept(engine)
    streaks.rebuild(engine)
    assert kept(engine) == state

    lane(engine, 13, {"b": "passed"})  # stored late, before the cutoff
    assert tails(engine) == {"a": (4, night(10)), "b": (2, night(14)), "c": (1, night(16))}
    state = kept(engine)
    streaks.rebuild(engine)
    assert kept(engine) == state

    # the run of night 16 is later given another time, after the cutoff; one with the
    # same files again changes nothing
    lane(engine, 16, {"a": "failed", "b": "failed", "c": "failed"}, run="n16", hour=2)
    assert kept(engine) == state
    lane(engine, 40, {}, run="n16")  # the run's time moves to night 40
    assert tails(engine) == {"a": (3, night(10)), "b": (1, night(14))}
    state = kept(engine)
    streaks.rebuild(engine)
    assert kept(engine) == state

    lane(engine, 13, {}, run="n13", untrusted="fork")  # the late run was not the project's
    assert tails(engine) == {"a": (3, night(10)), "b": (8, night(0))}
    state = kept(engine)
    streaks.rebuild(engine)
    assert kept(engine) == state

    lane(engine, 120, {"a": "passed"})  # forty days on: the cutoff moves to night 60
    # night 16's run now counts at night 40
    assert tails(engine) == {"a": (25, night(10)), "b": (30, night(0))}
    state = kept(engine)
    streaks.rebuild(engine)
    assert kept(engine) == state


def test_an_upgraded_store_gets_its_streaks_from_the_vectors(engine):
    demo.build(engine, days=66, end=date(2026, 11, 27), sizes=demo.plan(66, results=12_000))
    state = kept(engine)
    assert state[1]
    from alembic import command

    from parity.db.migrate import alembic_config

    command.downgrade(alembic_config(engine), "0019")  # a store from before the streaks
    upgrade(engine)
    assert kept(engine) == state


def test_amd_only_failures_count_a_streak_over_the_whole_history(engine, monkeypatch):
    """Streaks and first failing dates as a history of every night gives them; the runs,
    failures and messages as the 60-day history gives them, as before."""
    demo.build(engine, days=75, end=date(2026, 11, 27), sizes=demo.plan(75, results=25_000))
    now = frames.amd_only_failures(engine)
    with monkeypatch.context() as m:
        m.setattr(tables, "streak_cutoff", lambda engine: None)
        capped = frames.amd_only_failures(engine)
        m.setattr(frames, "HISTORY_DAYS", 10_000)
        whole = frames.amd_only_failures(engine)
    keys = ["framework", "suite", "amd_hardware", "parity_key"]
    now, capped, whole = (f.sort_values(keys, ignore_index=True) for f in (now, capped, whole))
    shown = keys + ["streak", "first_failing"]
    pd.testing.assert_frame_equal(now[shown], whole[shown])
    pd.testing.assert_frame_equal(now.drop(columns=shown[4:]), capped.drop(columns=shown[4:]))
    longer = now["streak"] > capped["streak"]
    assert longer.sum() >= 3  # the failures of every night: 75 runs, not 61
    assert set(now.loc[longer, "streak"]) == {75}
    assert set(now.loc[longer, "first_failing"].dt.date) == {date(2026, 9, 14)}


def test_a_past_window_counts_a_streak_over_the_whole_history_up_to_its_end(engine,
                                                                             monkeypatch):
    """A window that ends before the newest run and whose history starts before the
    cutoff: the streaks as they stood at its end."""
    demo.build(engine, days=75, end=date(2026, 11, 27), sizes=demo.plan(75, results=25_000))
    # the history from 2026-09-21, the cutoff at 09-28, the first night on 09-14
    window = {"since": date(2026, 11, 20), "until": date(2026, 11, 25)}
    now = frames.amd_only_failures(engine, **window)
    with monkeypatch.context() as m:
        m.setattr(tables, "streak_cutoff", lambda engine: None)
        capped = frames.amd_only_failures(engine, **window)
        bounded = frames._with_history
        m.setattr(frames, "_with_history", lambda when, days=10_000: bounded(when, days))
        whole = frames.amd_only_failures(engine, **window)
    keys = ["framework", "suite", "amd_hardware", "parity_key"]
    now, capped, whole = (f.sort_values(keys, ignore_index=True) for f in (now, capped, whole))
    shown = keys + ["streak", "first_failing"]
    pd.testing.assert_frame_equal(now[shown], whole[shown])
    pd.testing.assert_frame_equal(now.drop(columns=shown[4:]), capped.drop(columns=shown[4:]))
    # every night from 09-14 to 11-25 (the last day of the window), where the history's
    # nights from 09-21 were 66
    assert set(now.loc[now["streak"] > capped["streak"], "streak"]) == {73}
    assert set(capped.loc[now["streak"] > capped["streak"], "streak"]) == {66}


def test_a_call_that_reads_untrusted_runs_follows_streaks_in_its_history_only(engine):
    demo.build(engine, days=75, end=date(2026, 11, 27), sizes=demo.plan(75, results=25_000))
    df = frames.amd_only_failures(engine, include_untrusted=True)
    assert not df.empty and df["streak"].max() == 61


def test_lanes_are_named_as_the_views_name_them(engine):
    """The state's lanes (SQL, `streaks.LANE`) and the views' (`tables.jobs`) name each
    job's framework and hardware alike: by SKU, else architecture, else raw name, else
    `unknown`; a job without a framework is `other`'s."""
    from parity.db import state

    upgrade(engine)
    with engine.begin() as conn:
        hardware = [store.upsert_hardware(conn, "amd", sku="mi300x"),
                    store.upsert_hardware(conn, "amd", arch="gfx950"),
                    store.upsert_hardware(conn, "unknown", raw_name="box-7", mapped=False),
                    None]
        run = store.upsert_run(conn, ci_system="local", repository="", run_id="r", attempt=1,
                               created_at=datetime(2026, 1, 1, 2))
        vllm = store.upsert_framework(conn, "vllm")
        for i, hw in enumerate(hardware):
            job = store.upsert_job(conn, run, f"j{i}", hardware_id=hw, suite=f"s{i % 2}",
                                   framework_id=vllm if i % 2 else None)
            state.add(conn, job, [i + 1], ["failed"], [None], [0])
    with engine.connect() as conn:
        named = {job: lane for lane, rows in streaks._jobs(conn).items() for job, _, _ in rows}
    jobs = tables.jobs(tables.open_store(engine))
    assert named == {int(j): (fw, hw, s) for j, fw, hw, s in zip(
        jobs["job_pk"], jobs["framework"], jobs["hardware"], jobs["suite"])}
    assert sorted(named.values()) == [("other", "box-7", "s0"), ("other", "mi300x", "s0"),
                                      ("vllm", "gfx950", "s1"), ("vllm", "unknown", "s1")]
