"""Parity views as tidy pandas DataFrames, one function per view.

Every view takes the store first (an Engine, a URL, a path, or None for `PARITY_DB_URL`,
opened read-only) and keyword-only filters: `framework`, `hardware` (AMD SKUs, or any SKU
for vendor-neutral views), `suite`, and a window given as `since`/`until` dates or an ISO
`week` such as "2026-W48". AMD hardware is compared with its NVIDIA reference from the
hardware vocabulary (MI300X↔H100, MI325X↔H200, MI355X↔B200, MI455X↔the newest NVIDIA part
present); `pairs={"mi355x": "h200"}` overrides it.

    from parity.dashboard import frames, charts
    df = frames.pass_rate_parity(framework="vllm")
    charts.pass_rate_parity(df)
"""
from __future__ import annotations

import functools
from datetime import timedelta
from typing import Iterable

import numpy as np
import pandas as pd

from parity.dashboard import accuracy as acc_rules
from parity.dashboard import capability as capability_rules
from parity.dashboard import coverage as coverage_rules
from parity.dashboard import fleet as fleet_rules
from parity.dashboard import headline as headline_rules
from parity.dashboard import outcomes, performance, regressions as findings, tables
from parity.dashboard import alerts as alert_rules
from parity.dashboard import compilers as compiler_rules
from parity.dashboard import stack as stack_rules
from parity.dashboard import verdicts as verdict_rules
from parity.dashboard.groups import first_rows, groups, key_codes, members
from parity.dashboard.period import Period, period
from parity.dashboard.tables import Store
from parity.db import vectors as vec
from parity.db.capabilities import capabilities
from parity.db.hardware import vocabulary
from parity.db.store import test_id

HISTORY_DAYS = 60  # how far before the window a failure streak or a series is followed
RECENT_DAYS = 14  # without a window, views over time look at the last two weeks of data
# how far before the window a new failure's earlier pass is looked for (a test failing from
# the window on passed in the runs just before it)
TEST_LOOKBACK_DAYS = 7
ALIGN_HOURS = 72  # how far apart an AMD run and its reference run may be, without one commit
MIN_EFFECT = 0.02  # the smallest relative change a finding reports


def _names(value: str | Iterable[str] | None) -> list[str] | None:
    if value is None or value == "":
        return None
    return [value] if isinstance(value, str) else list(value)


def _reference(pairs: dict[str, str] | None):
    vocab = vocabulary()

    def reference(hardware: str, nvidia_present: set[str]) -> str | None:
        if pairs and hardware in pairs:
            return pairs[hardware]
        return vocab.reference_for(hardware, nvidia_present)

    return reference


def _recent(store, since, until, week, days: int = RECENT_DAYS) -> Period:
    """The window asked for, else the last `days` days up to the newest run: a view over
    time reads what it shows, not the whole history in the store."""
    if since is None and until is None and week is None:
        newest = tables.newest_run(tables.open_store(store))
        if newest is not None:
            since = newest - timedelta(days=days)
    return period(since, until, week)


def _with_history(when: Period, days: int = HISTORY_DAYS) -> Period:
    start = when.start - timedelta(days=days) if when.start else None
    return Period(start, when.end)


def _jobs(store, framework, suite, when) -> pd.DataFrame:
    jobs = tables.jobs(tables.open_store(store), framework=_names(framework), when=when)
    if suite:
        jobs = jobs[jobs["suite"].isin(_names(suite))]
    return jobs


def _only_amd(df: pd.DataFrame, hardware, column: str = "amd_hardware") -> pd.DataFrame:
    names = _names(hardware)
    return df[df[column].isin(names)].reset_index(drop=True) if names else df


def _aligned(store, framework, suite, hardware, since, until, week, pairs, latest,
             align_hours) -> pd.DataFrame:
    """The AMD lane runs in the window, each paired with its reference lane run."""
    when = _recent(store, since, until, week, HISTORY_DAYS)
    # the reference may have run a little before the window opened
    jobs = _jobs(store, framework, suite, _with_history(when, days=max(1, align_hours // 24)))
    jobs = jobs[[c for c in outcomes.ALIGN_READS if c in jobs.columns]]  # (no copy)
    amd_in_window = _in(jobs[jobs["vendor"] == "amd"], when)
    aligned = outcomes.align(pd.concat([amd_in_window, jobs[jobs["vendor"] != "amd"]]),
                             _reference(pairs), latest=latest, window_hours=align_hours)
    return _only_amd(aligned, hardware)


def _sides(aligned: pd.DataFrame) -> dict[tuple[int, str], tuple[int, ...]]:
    """(pair number, "amd" or "ref") -> that side's jobs, for each aligned pair."""
    return {(i, side): jobs for i, p in enumerate(aligned.itertuples())
            for side, jobs in (("amd", p.amd_jobs), ("ref", p.ref_jobs))}


def _pair_jobs(aligned: pd.DataFrame) -> list[int]:
    return [j for col in ("amd_jobs", "ref_jobs") for js in aligned[col] for j in js]


def _in(df: pd.DataFrame, when: Period, column: str = "run_at") -> pd.DataFrame:
    return tables.in_period(df, when, column)


def pass_rate_parity(store: Store = None, *, framework=None, hardware=None, suite=None,
                     since=None, until=None, week=None, pairs=None, latest: bool = True,
                     by: str = "suite", align_hours: int = ALIGN_HOURS) -> pd.DataFrame:
    """Same-denominator pass rate per framework × suite × AMD hardware against its NVIDIA
    reference, on the aligned commit (same commit, else the nearest reference run within
    `align_hours`, with the staleness shown). `latest=False` gives one row per AMD run (the
    trend); `by="hardware"` sums the suites per framework × hardware."""
    aligned = _aligned(store, framework, suite, hardware, since, until, week, pairs, latest,
                       align_hours)
    counts = tables.pair_outcomes(tables.open_store(store), _sides(aligned))
    out = outcomes.pass_rate_parity(aligned, counts=counts)
    return outcomes.rollup(out) if by == "hardware" else out


# a quadrant narrower than this reads its tests' messages by key, else all of the jobs'
FEW_TESTS = 5_000


def test_matrix(store: Store = None, *, framework=None, hardware=None, suite=None, since=None,
                until=None, week=None, pairs=None, quadrant=None,
                align_hours: int = ALIGN_HOURS) -> pd.DataFrame:
    """Every test of each lane's latest aligned run pair with both outcomes and its quadrant
    (both pass, amd-only fail, nvidia-only fail, both fail, amd-only skip, …)."""
    return _matrix(store, framework, hardware, suite, since, until, week, pairs,
                   _names(quadrant), None, align_hours)


def _matrix(store, framework, hardware, suite, since, until, week, pairs, quadrants,
            tests, align_hours, messages: bool = True) -> pd.DataFrame:
    """`test_matrix`'s rows in `quadrants` (every row when None), and with `tests` (parity
    ids) every row of those tests too, whatever their quadrant: a caller that needs a few
    quadrants and a few tests does not name the outcomes of every test. `messages=False`
    leaves the two sides' messages empty, for callers that show a history's last message
    instead (the raw rows that carry messages are most of the matrix's read)."""
    aligned = _aligned(store, framework, suite, hardware, since, until, week, pairs, True,
                       align_hours)
    engine = tables.open_store(store)
    also = np.asarray(list(tests), np.int64) if tests is not None and len(tests) else None

    def keep(ids: np.ndarray, amd: np.ndarray, ref: np.ndarray) -> np.ndarray:
        rows = outcomes.in_quadrants(amd, ref, tables.ABSENT, quadrants)
        return rows if also is None else rows | np.isin(ids, also)
    codes = tables.pair_tests(engine, _sides(aligned), keep if quadrants else None)
    few = None  # the tests whose messages to read, when a quadrant narrows them enough
    if quadrants and codes["parity_id"].nunique() <= FEW_TESTS:
        few = codes["parity_id"].unique()
    keys = tables.parity_keys(engine, codes["parity_id"].unique(), ranked=True)
    found = tables.messages(engine, _pair_jobs(aligned) if messages else [], few)
    return outcomes.matrix(aligned, codes, keys, found, tables.ABSENT)


def _spellings(engine, wanted: pd.DataFrame, lanes) -> dict[tuple, tuple]:
    """Per lane (`outcomes.LANE`) of the `wanted` tests that `lanes` holds, in the lanes'
    sorted order: the test ids to find in its jobs' vectors (each wanted parity id and its
    vendor-named spellings, sorted) and the parity id of each. The lanes' tests are found
    by integer group numbers, and each lane's aliases by a sorted search of the aliases'
    parity ids, taken once (a pandas grouping of the texts and a set test of every alias
    per lane were a fifth of `flaky_tests` with PyTorch lanes of 250,000 tests, 28,762
    aliases)."""
    alias = tables.alias_map(engine)  # the vendor-named tests, as arrays
    by_value = np.argsort(alias.values, kind="stable")
    values = alias.values[by_value]
    if "job_pk" in wanted:  # a job is in one lane: its jobs' lanes, numbered, say the rows'
        job, first = first_rows(wanted["job_pk"].to_numpy(np.int64))
        number, keys = groups(*(wanted[c].take(first) for c in outcomes.LANE))
        number = number[job]
    else:
        number, keys = groups(*(wanted[c] for c in outcomes.LANE))
    parity_ids = wanted["parity_id"].to_numpy(np.int64)
    out = {}
    for key, rows in sorted(((k, r) for k, r in zip(keys, members(number)) if k in lanes),
                            key=lambda kr: kr[0]):
        parity = vec.distinct(parity_ids[rows])
        named = by_value[vec.find(parity, values)[1]]  # each parity id's spellings
        ids = np.concatenate([parity, alias.keys[named]])
        parity = np.concatenate([parity, alias.values[named]])
        order = np.lexsort((parity, ids))  # by test id (then parity id), each pair once
        ids, parity = ids[order], parity[order]
        once = np.r_[True, (ids[1:] != ids[:-1]) | (parity[1:] != parity[:-1])]
        out[key] = (ids[once], parity[once])
    return out


def _history(store, jobs: pd.DataFrame, wanted: pd.DataFrame) -> pd.DataFrame:
    """Run-by-run outcomes of the `wanted` tests (framework, suite, hardware, parity_id), each
    followed only in the lane it was found in: one row per (run, hardware, test), the worst
    of its jobs' outcomes. The views count from runs × tests arrays instead (`_streaks`,
    `_flakiness`); this history is what the tests hold them to (`outcomes.streaks` and
    `outcomes.flakiness` of it). Outcomes and reruns come from the per-job
    outcome vectors, and the rows are assembled as integer arrays (a 60-day history of
    thousands of failing tests is hundreds of thousands of rows); no raw result is read, so
    `message` is empty (the streaks and their last messages: `_streaks`)."""
    engine = tables.open_store(store)
    lanes = jobs.groupby(outcomes.LANE)["job_pk"]
    lookups: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # job -> (test ids, parity ids)
    for key, tests in _spellings(engine, wanted, lanes.groups).items():
        for job in lanes.get_group(key):
            lookups[int(job)] = tests
    found = tables.job_vectors(engine, lookups, ("outcomes", "reruns"))
    cols: dict[str, list[np.ndarray]] = {"job": [], "parity_id": [], "code": [], "rerun": []}
    # where a lane's tests sit in a job's ids, found once per set of ids (the jobs that ran
    # the same tests share one array, `db.state.read`) and lane
    places: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
    for job, (ids, parity) in lookups.items():
        v = found.get(job, vec.EMPTY)
        if not len(v):
            continue
        place = places.get((id(v.ids), id(ids)))
        if place is None:
            pos, hit = vec.find(v.ids, ids)
            place = places[(id(v.ids), id(ids))] = (pos[hit], parity[hit])
        at, tests = place
        cols["job"].append(np.full(len(at), job, np.int64))
        cols["parity_id"].append(tests)
        cols["code"].append(v.outcomes[at].astype(np.int64))
        cols["rerun"].append(v.reruns[at].astype(np.int64))
    a = {k: np.concatenate(v) if v else np.empty(0, np.int64) for k, v in cols.items()}
    keys = tables.parity_keys(engine, pd.unique(a["parity_id"]))
    key_at = pd.Index(keys["parity_id"]).get_indexer(a["parity_id"])
    a = {k: v[key_at >= 0] for k, v in a.items()}  # a test without a key is not followed
    key_at = key_at[key_at >= 0]
    by = ["framework", "vendor", "hardware", "run_pk", "commit", "run_at"]
    job_at = pd.Index(jobs["job_pk"]).get_indexer(a["job"])
    # one row per (run, hardware, test): the worst outcome first, then the order read
    key = key_codes(key_codes(*(jobs[c] for c in by))[job_at],
                             a["parity_id"])
    if key.max(initial=-1) + 1 == len(key):  # one job per run and hardware: nothing to reduce
        keep, reruns = np.arange(len(key)), a["rerun"]
    else:
        order = np.lexsort((np.arange(len(key)), a["code"]))  # worst first, stable
        seen = key[order]
        first = ~pd.Series(seen).duplicated().to_numpy()
        keep = order[first]
        at = np.empty(len(key), np.int64)
        at[seen[first]] = np.arange(int(first.sum()))  # key -> its row in the output
        reruns = np.zeros(len(keep), np.int64)
        np.maximum.at(reruns, at[key], a["rerun"])
    # the texts as categories of the jobs' (or the tests') few values: taking hundreds of
    # thousands of rows of a text column costs more than the streaks computed from them
    rows = job_at[keep]
    out = pd.DataFrame({c: _categories(jobs[c], rows) if c in TEXTS else
                        jobs[c].to_numpy()[rows] for c in by})
    out["parity_id"] = a["parity_id"][keep]
    out["parity_key"] = _categories(keys["parity_key"], key_at[keep])
    out["outcome"] = outcomes.outcome_categories(a["code"][keep])
    out["reruns"] = reruns
    out["message"] = None
    out["skip_category"] = None
    return out


TEXTS = ("framework", "vendor", "hardware", "commit")  # a history's text columns of jobs


def _categories(column: pd.Series, at: np.ndarray) -> pd.Categorical:
    """`column`'s values at the positions `at`, as a categorical of its distinct values."""
    codes, values = pd.factorize(column)
    return pd.Categorical.from_codes(codes[at], pd.Index(values, dtype=column.dtype))


def _messages(engine, jobs: pd.DataFrame, job_pks: np.ndarray,
              parity_ids: np.ndarray) -> list[str | None]:
    """The failure message of each (job, test) pair given (`tables.failure_messages`). The
    notable rows of those jobs are read whole when they are not many more than the pairs
    (one read by job beats looking thousands of tests up), else only those tests' rows."""
    if not len(job_pks):
        return []
    wanted = pd.unique(job_pks)
    notable = int(jobs.loc[jobs["job_pk"].isin(wanted), ["failed", "error", "flaky"]]
                  .to_numpy().sum())
    res = tables.failure_messages(engine, wanted, None if notable <= 2 * len(job_pks)
                                  else pd.unique(parity_ids))
    message = dict(zip(zip(res["job_pk"].tolist(), res["parity_id"].tolist()),
                       res["message"].tolist()))
    return [message.get(k) for k in zip(job_pks.tolist(), parity_ids.tolist())]


STREAK_COLUMNS = ["framework", "hardware", "parity_id", "parity_key", "streak", "first_failing",
                  "last_run_at", "last_message", "runs", "failures", "passing"]


# the jobs' columns `_streaks` and `_messages` read
STREAK_JOB_COLUMNS = ["job_pk", "run_pk", "run_at", "commit", *outcomes.LANE, "failed", "error",
                      "flaky"]


def _streaks(store, jobs: pd.DataFrame, wanted: pd.DataFrame, messages: bool = True,
             culprits: bool = False, flaky: bool = False, ordered: bool = True,
             cutoff: np.datetime64 | None = None) -> pd.DataFrame:
    """`outcomes.streaks` of the `wanted` tests' run-by-run history, its rows in order of
    framework, hardware and test. Each (framework, hardware)'s wanted tests are the columns
    of one runs × tests array of their worst codes in each run, filled from the per-job
    vectors, and each test's streak is counted down its column (`outcomes.run_streaks`),
    instead of a row per run and test grouped again by test: the AMD-only failures'
    histories are hundreds of thousands of rows. Runs of one lane that started at the same
    time are in run order. The last message is its lane's last failure's, read for those
    (job, test) pairs only; `culprits` adds the job of that failure (`last_failure_job`,
    0 where none), for a caller that reads the messages of a few of the tests itself.
    `flaky` adds whether `outcomes.flakiness` finds the test flaky there (a pass after a
    rerun, or a pass and a failure on one commit), from the same arrays. `ordered=False`
    leaves the rows in the order the lanes gave them, for a caller that joins them to its
    own rows (an inner join keeps the caller's order). `cutoff`: the streak cutoff
    (`tables.streak_cutoff`), which the jobs' history must reach over: a streak with no
    pass in it goes on with its lane's state (`tables.lane_streaks`, `_carry`)."""
    engine = tables.open_store(store)
    arrays = _job_arrays(jobs)
    lanes, plan, found = _plan(engine, jobs, arrays["job_pk"], wanted, flaky)
    before = tables.lane_streaks(engine, [(fw, hw, s) for (fw, hw), suites in plan.items()
                                          for s in suites]) if cutoff is not None else {}
    parts = []
    for (fw, hw), suites in plan.items():
        lane = _lane_arrays(arrays, {s: (lanes[(fw, s, hw)], *tests)
                                     for s, tests in suites.items()}, found, flaky)
        st = outcomes.run_streaks(lane["codes"])
        when = lane["when"]
        if cutoff is not None:  # how many runs before the cutoff the state counts too
            st["ran_before"] = outcomes.run_counts(lane["codes"][when < cutoff])
        keep = np.flatnonzero(st["runs"] > 0)
        part = {k: v[keep] for k, v in st.items()}
        part["parity_id"] = lane["columns"][keep]
        part["first_failing"] = np.where(part["streak"] > 0,
                                         when[np.minimum(part["first"], len(when) - 1)],
                                         np.datetime64("NaT"))
        if cutoff is not None:
            _carry(part, {s: before[(fw, hw, s)] for s in suites if (fw, hw, s) in before},
                   {s: tests[1] for s, tests in suites.items()})
        part["last_run_at"] = when[part["last"]]
        part["culprit"] = lane["culprit"][np.maximum(part["last_bad"], 0), keep]
        if flaky:
            part["flaky"] = outcomes.run_flaky(lane["codes"], lane["reruns"],
                                               lane["commit"])[keep]
        part["framework"], part["hardware"] = np.full(len(keep), fw, object), \
            np.full(len(keep), hw, object)
        parts.append(part)
    return _streak_frame(engine, jobs, parts, messages, culprits, flaky, ordered)


def _plan(engine, jobs: pd.DataFrame, job_pk: np.ndarray, wanted: pd.DataFrame, reruns: bool
          ) -> tuple[dict, dict, dict]:
    """What `_lane_arrays` is made from, for the `wanted` tests (framework, suite, hardware,
    parity_id) in `jobs` (`job_pk`: their ids, as `_job_arrays` takes them): each lane's
    jobs' positions, per (framework, hardware) each suite's test ids to find and their
    parity ids (`_spellings`), and the vectors of the jobs of those lanes (with their
    reruns, with `reruns`)."""
    # lane -> its jobs' positions, ascending (a lane with a missing part is none, as pandas
    # groups); numbered by `groups`, at about half a pandas grouping's cost
    number, keys = groups(*(jobs[c] for c in outcomes.LANE))
    lanes = {k: rows for k, rows in zip(keys, members(number)) if not any(pd.isna(x) for x in k)}
    plan: dict[tuple, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
    for (fw, suite, hw), tests in _spellings(engine, wanted, lanes).items():
        plan.setdefault((fw, hw), {})[suite] = tests
    found = tables.job_vectors(engine, [int(job_pk[i]) for (fw, hw), suites in plan.items()
                                        for s in suites for i in lanes[(fw, s, hw)]],
                               ("outcomes", "reruns") if reruns else ("outcomes",))
    return lanes, plan, found


def _flakiness(store, jobs: pd.DataFrame, wanted: pd.DataFrame) -> pd.DataFrame:
    """`outcomes.flakiness` of the `wanted` tests' run-by-run history (`_history`), counted
    down the columns of each (framework, hardware)'s runs × tests arrays
    (`outcomes.run_flakiness`) as `_streaks` counts streaks, instead of a row per run and
    test grouped again by test (the flaky tests of PyTorch lanes of 250,000 tests are a
    history of 875,000 rows)."""
    engine = tables.open_store(store)
    arrays = _job_arrays(jobs)
    lanes, plan, found = _plan(engine, jobs, arrays["job_pk"], wanted, True)
    parts = []
    for (fw, hw), suites in plan.items():
        lane = _lane_arrays(arrays, {s: (lanes[(fw, s, hw)], *tests)
                                     for s, tests in suites.items()}, found, True)
        f = outcomes.run_flakiness(lane["codes"], lane["reruns"], lane["commit"])
        keep = np.flatnonzero((f["rerun_passes"] > 0) | (f["mixed"] > 0))
        part = {k: f[k][keep] for k in ("runs", "failures", "rerun_passes", "flips", "mixed")}
        part["parity_id"] = lane["columns"][keep]
        part["first_seen"] = lane["when"][f["first"][keep]]
        part["last_seen"] = lane["when"][f["last"][keep]]
        part["framework"], part["hardware"] = np.full(len(keep), fw, object), \
            np.full(len(keep), hw, object)
        parts.append(part)
    if not parts:
        return pd.DataFrame(columns=outcomes.FLAKY_COLUMNS)
    a, keys, at = _keyed(engine, parts)
    hardware = pd.Series(pd.array(a["hardware"], dtype=jobs["hardware"].dtype))
    vendor = dict(zip(jobs["hardware"], jobs["vendor"]))
    counts = pd.DataFrame({
        "framework": pd.array(a["framework"], dtype=jobs["framework"].dtype),
        "vendor": hardware.map(vendor).astype(jobs["vendor"].dtype), "hardware": hardware,
        "parity_id": a["parity_id"], "parity_key": keys["parity_key"].array.take(at),
        "same_commit_mixed": a["mixed"], "first_seen": a["first_seen"],
        "last_seen": a["last_seen"]})
    for c in ("runs", "failures", "rerun_passes", "flips"):
        counts[c] = a[c]
    return outcomes.flaky_table(counts)


def _keyed(engine, parts: list[dict[str, np.ndarray]]
           ) -> tuple[dict[str, np.ndarray], pd.DataFrame, np.ndarray]:
    """The lanes' arrays (`_streaks`, `_flakiness`) joined, less the tests without a parity
    key (not followed, as in `_history`), with the keys (`tables.parity_keys`) and each
    row's place in them."""
    a = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    keys = tables.parity_keys(engine, pd.unique(a["parity_id"]))
    at = pd.Index(keys["parity_id"]).get_indexer(a["parity_id"])
    keep = at >= 0
    return {k: v[keep] for k, v in a.items()}, keys, at[keep]


def _carry(part: dict[str, np.ndarray], before: dict[str, tuple], planned: dict[str, np.ndarray]
           ) -> None:
    """Lengthen the streaks of `part` (one framework and hardware's `_streaks` arrays) that
    have no pass in the history with their lanes' state at the cutoff (`before`: suite ->
    parity ids, runs, since). The history starts at the cutoff or before it: its runs
    before the cutoff (`ran_before`, all failures where there is no pass) are in the
    state's count too, and a state that counts more began before the history. A test that
    the plan (`planned`: suite -> parity ids) follows in two suites at once has its runs
    merged across them, which no one lane's state counts: its streak stays as the history
    shows it."""
    pid = part["parity_id"]
    # the whole history failed: no pass among the runs it ran in (`run_streaks`)
    open_ = np.flatnonzero((part["streak"] > 0) & (part["last_ok"] < 0))
    if not before or not len(open_):
        return
    if len(planned) > 1:
        ids, seen = np.unique(np.concatenate([vec.distinct(p) for p in planned.values()]),
                              return_counts=True)
        if (seen > 1).any():
            open_ = open_[~np.isin(pid[open_], ids[seen > 1])]
    for suite, (ids, tail, since) in before.items():
        at = open_ if len(planned) == 1 else open_[np.isin(pid[open_], planned[suite])]
        pos, hit = vec.find(ids, pid[at])
        at, pos = at[hit], pos[hit]
        more = tail[pos] - part["ran_before"][at]
        later = more > 0  # the state's tail began before the history
        part["streak"][at[later]] += more[later]
        part["first_failing"][at[later]] = since[pos[later]]


def _job_arrays(jobs: pd.DataFrame) -> dict[str, np.ndarray]:
    """The jobs' columns `_lane_arrays` reads, as arrays taken once a call, not once a lane
    (a pandas column costs tens of microseconds to take, and a call has dozens of lanes)."""
    return {"job_pk": jobs["job_pk"].to_numpy(np.int64),
            "run_pk": jobs["run_pk"].to_numpy(np.int64),
            "run_at": jobs["run_at"].to_numpy(), "commit": jobs["commit"].to_numpy()}


def _lane_arrays(jobs: dict[str, np.ndarray], suites: dict, found: dict, flaky: bool) -> dict:
    """One (framework, hardware)'s runs × tests arrays for `_streaks`: `jobs` are the jobs'
    columns (`_job_arrays`), `suites` maps each suite to (its jobs' positions in `jobs`, the
    test ids to find, their parity ids); the columns are the parity ids, the rows the runs
    by time (then run id). `codes` holds each test's worst outcome in the run (255 where it
    did not run), `culprit` the last job (by id) in which it failed there, `reruns` (with
    `flaky`) whether any row was rerun, and `commit` each run's commit as an integer (-1
    where none)."""
    job_pk, run_pk, run_at = jobs["job_pk"], jobs["run_pk"], jobs["run_at"]
    columns = vec.distinct(np.concatenate([parity for _, _, parity in suites.values()]))
    rows = np.concatenate([at for at, _, _ in suites.values()])
    runs, first = np.unique(run_pk[rows], return_index=True)
    first = rows[first]
    order = np.lexsort((runs, run_at[first]))  # by time, then run
    runs, first = runs[order], first[order]
    row_of = dict(zip(runs.tolist(), range(len(runs))))  # run -> its row
    codes = np.full((len(runs), len(columns)), 255, np.uint8)
    culprit = np.zeros(codes.shape, np.int64)
    reruns = np.zeros(codes.shape if flaky else (0, 0), np.uint8)
    for at_jobs, ids, parity in suites.values():
        col = np.searchsorted(columns, parity)
        # the suite's jobs by their vector's set of test ids, each set's jobs filled at
        # once: a job at a time was a dozen NumPy calls for each of the thousand jobs of a
        # two-month history (the 50M store's `alerts`: 1,037 jobs of 34 sets)
        by_set: dict[int, list] = {}
        for i in at_jobs:
            v = found.get(int(job_pk[i]), vec.EMPTY)
            if len(v):
                by_set.setdefault(id(v.ids), []).append((i, v))
        for held in by_set.values():
            pos, hit = vec.find(held[0][1].ids, ids)
            if not hit.any():
                continue
            pos, at = pos[hit], col[hit]
            # each job's cells (its run's row, those tests' columns) in the arrays as one
            # flat index, and its codes of those tests: a run's jobs, and a test's spellings
            # in one job, meet in one cell, which keeps the worst code, any rerun, and the
            # last job (by id) in which it failed
            place = np.array([i for i, _ in held])  # the jobs' positions in `jobs`
            runs_of = np.array([row_of[r] for r in run_pk[place].tolist()])
            cell = (runs_of[:, None] * codes.shape[1] + at[None, :]).ravel()
            got = np.concatenate([v.outcomes[pos] for _, v in held])
            np.minimum.at(codes.reshape(-1), cell, got)
            if flaky:
                np.maximum.at(reruns.reshape(-1), cell,
                              np.concatenate([v.reruns[pos] for _, v in held]))
            bad = np.flatnonzero(got <= vec.FAILING)  # each one's job: its place // len(at)
            np.maximum.at(culprit.reshape(-1), cell[bad], job_pk[place][bad // len(at)])
    return {"columns": columns, "when": run_at[first], "codes": codes,
            "culprit": culprit, "reruns": reruns,
            "commit": pd.factorize(jobs["commit"][first])[0]}


def _streak_frame(engine, jobs: pd.DataFrame, parts: list[dict[str, np.ndarray]],
                  messages: bool, culprits: bool, flaky: bool,
                  ordered: bool = True) -> pd.DataFrame:
    """`_streaks`' frame from each lane's arrays: the tests that have a parity key (one
    without is not followed, as in `_history`), with the texts typed as the jobs' and the
    last messages read for the tests that failed."""
    columns = STREAK_COLUMNS + (["last_failure_job"] if culprits else []) + \
        (["flaky"] if flaky else [])
    if not parts:
        return pd.DataFrame(columns=columns)
    a, keys, at = _keyed(engine, parts)
    out = pd.DataFrame({"framework": pd.array(a["framework"], dtype=jobs["framework"].dtype),
                        "hardware": pd.array(a["hardware"], dtype=jobs["hardware"].dtype),
                        "parity_id": a["parity_id"],
                        "parity_key": keys["parity_key"].array.take(at)})
    for c in ("streak", "runs", "failures", "passing"):
        out[c] = a[c].astype(int)
    out["first_failing"], out["last_run_at"] = a["first_failing"], a["last_run_at"]
    text = np.full(len(out), None, dtype=object)
    failed = np.flatnonzero(a["last_bad"] >= 0) if messages else np.empty(0, np.int64)
    text[failed] = _messages(engine, jobs, a["culprit"][failed], a["parity_id"][failed])
    out["last_message"] = pd.Series(text, dtype=object)
    out["last_failure_job"] = np.where(a["last_bad"] >= 0, a["culprit"], 0)
    if flaky:
        out["flaky"] = a["flaky"]
    if not ordered:
        return out[columns]
    return out[columns].sort_values(["framework", "hardware", "parity_key"], kind="stable",
                                    ignore_index=True)


TEST_HISTORY_COLUMNS = ["run_at", "framework", "vendor", "hardware", "suite", "outcome",
                        "reruns", "message", "skip_category", "commit", "job_name", "job_url",
                        "run_url", "parity_key"]


def test_history(store: Store = None, *, parity_key: str, framework=None, hardware=None,
                 suite=None, since=None, until=None, week=None) -> pd.DataFrame:
    """One test (by parity key) on every hardware, run by run, newest first: its outcome,
    reruns, message, commit and the link to the CI job. Without a window, the last
    `HISTORY_DAYS` days up to the newest run in the store."""
    when = _recent(store, since, until, week, HISTORY_DAYS)
    engine = tables.open_store(store)
    # the test's rows first, then the jobs that ran it: not the window's thousands of jobs
    res = tables.window_results(engine, [test_id(parity_key)], framework=_names(framework),
                                when=when)
    if res.empty:
        return pd.DataFrame(columns=TEST_HISTORY_COLUMNS)
    jobs = _in(tables.jobs_of(engine, res["job_pk"], framework=_names(framework), when=when),
               when)
    if suite:
        jobs = jobs[jobs["suite"].isin(_names(suite))]
    if hardware:
        jobs = jobs[jobs["hardware"].isin(_names(hardware))]
    if jobs.empty:
        return pd.DataFrame(columns=TEST_HISTORY_COLUMNS)
    meta = jobs[["job_pk", "framework", "vendor", "hardware", "suite", "commit", "run_at",
                 "job_name", "job_url", "run_url"]]
    red = outcomes.reduce_tests(res.merge(meta, on="job_pk"),
                                ["framework", "vendor", "hardware", "suite", "commit", "run_at",
                                 "job_name", "job_url", "run_url"])
    return red.sort_values(["run_at", "vendor", "hardware"], ascending=[False, True, True]) \
        .reset_index(drop=True)[TEST_HISTORY_COLUMNS]


def amd_only_failures(store: Store = None, *, framework=None, hardware=None, suite=None,
                      since=None, until=None, week=None, pairs=None) -> pd.DataFrame:
    """Tests failing on AMD and passing on the NVIDIA reference in the latest aligned runs,
    ranked by how long they have been failing (streak of consecutive failing runs), with the
    first failing date and the last message."""
    # the matrix's messages are not shown: each test's last message comes from its history
    matrix = _matrix(store, framework, hardware, suite, since, until, week, pairs,
                     ["amd-only fail"], None, ALIGN_HOURS, messages=False)
    return _failing_since(store, matrix, framework, suite, since, until, week)


def _failing_since(store, matrix: pd.DataFrame, framework, suite, since, until,
                   week, shown=None) -> pd.DataFrame:
    """`amd_only_failures` from the matrix's AMD-only failures: each test's streak in its
    lane's history. `shown`: which rows of that frame a caller shows the last message of,
    given its rows before their messages (with more columns than it: the columns are not
    cut for it); the others' is not read (None). Default: every row's."""
    cols = ["framework", "suite", "amd_hardware", "nvidia_hardware", "parity_key", "streak",
            "first_failing", "last_run_at", "runs", "failures", "last_message"]
    if matrix.empty:
        return pd.DataFrame(columns=cols)
    asked = period(since, until, week)
    history = _with_history(asked) if asked.start else _recent(store, since, until, week,
                                                                 HISTORY_DAYS)
    # what came before the history is the lanes' state at the streak cutoff (`db.streaks`),
    # which a history that starts at it or before and ends after it can go on from
    cutoff = tables.streak_cutoff(tables.open_store(store))
    if cutoff is not None and not (
            history.start is not None and np.datetime64(history.start, "us") <= cutoff
            and (history.end is None or cutoff < np.datetime64(history.end, "us"))):
        cutoff = None
    jobs = _jobs(store, framework, suite, history)
    # the columns the streaks and the messages read, of the AMD hardware's jobs (a cut of
    # every column of thousands of jobs copies each of their texts)
    # (the hardware's distinct labels: a set of the column iterates its thousands of texts)
    jobs = jobs.loc[jobs["hardware"].isin(matrix["amd_hardware"].unique()), STREAK_JOB_COLUMNS]
    st = _streaks(store, jobs, matrix.rename(columns={"amd_hardware": "hardware"}),
                  messages=shown is None, culprits=shown is not None, ordered=False,
                  cutoff=cutoff)
    out = matrix.merge(st.rename(columns={"hardware": "amd_hardware"}),
                       on=["framework", "amd_hardware", "parity_id"], suffixes=("", "_h"))
    out = out.sort_values(["streak", "first_failing", "parity_key"],
                          ascending=[False, True, True], ignore_index=True)
    if shown is not None:
        want = np.flatnonzero(shown(out) & (out["last_failure_job"] > 0).to_numpy())
        text = np.full(len(out), None, dtype=object)
        text[want] = _messages(tables.open_store(store), jobs,
                               out["last_failure_job"].to_numpy(np.int64)[want],
                               out["parity_id"].to_numpy(np.int64)[want])
        out["last_message"] = pd.Series(text, dtype=object)
    return out[cols]


def skip_parity(store: Store = None, *, framework=None, hardware=None, suite=None,
                since=None, until=None, week=None, pairs=None) -> pd.DataFrame:
    """Skips per framework × vendor × hardware × reason category (vendor-gated reasons such as
    skipIfRocm, "not supported on ROCm", "requires CUDA" classified) in each lane's latest run,
    with how many of the AMD skips ran on the NVIDIA reference. Counted from the per-job
    outcome vectors, not the raw results."""
    when = _recent(store, since, until, week, HISTORY_DAYS)
    engine = tables.open_store(store)
    jobs = _in(_jobs(store, framework, suite, when), when)
    runs = outcomes.lane_runs(jobs)
    latest = runs.groupby(outcomes.LANE + ["vendor"]).tail(1)
    lane_jobs = {tuple(r[:4]): r[4] for r in latest[
        outcomes.LANE + ["vendor", "job_pks"]].itertuples(index=False)}
    aligned = _aligned(store, framework, suite, None, since, until, week, pairs, True,
                       ALIGN_HOURS)
    # one read of the vectors for both: lanes are keyed by 4-tuples, pair sides by 2-tuples
    sides = tables.vectors(engine, {**lane_jobs, **_sides(aligned)})
    skipped = vec.OUTCOMES.index("skipped")
    ran = [vec.OUTCOMES.index(o) for o in outcomes.RAN]
    # counted per reason in the vectors' codes (a row per skipped test was most of the view
    # with PyTorch-size lanes); an AMD skip ran on the reference when the reference's tests
    # that ran hold it, found by a sorted search (the vectors' ids are sorted)

    def by_reason(codes: np.ndarray) -> list[tuple[str | None, int]]:
        n = np.bincount(np.minimum(codes, len(vec.SKIPS)), minlength=len(vec.SKIPS) + 1)
        found = np.flatnonzero(n)  # named as `vec.names` names them (past it: "other")
        return list(zip(vec.names(found, vec.SKIPS).tolist(), n[found].tolist()))

    lanes = pd.DataFrame(
        [(fw, vendor, hw, reason, n) for (fw, _suite, hw, vendor), v in
         ((key, sides[key]) for key in lane_jobs)
         for reason, n in by_reason(v.skips[v.outcomes == skipped])],
        columns=["framework", "vendor", "hardware", "skip_category", "skips"])
    amd_only = []
    for i, p in enumerate(aligned.itertuples()):
        amd, ref = sides[(i, "amd")], sides[(i, "ref")]
        mine = amd.outcomes == skipped
        on_ref = vec.find(ref.ids[np.isin(ref.outcomes, ran)], amd.ids[mine])[1]
        amd_only += [(p.framework, p.amd_hardware, reason, n)
                     for reason, n in by_reason(amd.skips[mine][on_ref])]
    out = coverage_rules.skip_parity(lanes, pd.DataFrame(amd_only, columns=[
        "framework", "hardware", "skip_category", "ran_on_reference"]))
    names = _names(hardware)
    return out[out["hardware"].isin(names)].reset_index(drop=True) if names else out


STALE_DAYS = 7.0  # coverage: a lane this many days behind its framework's newest run is stale


def coverage(store: Store = None, *, framework=None, hardware=None, suite=None, since=None,
             until=None, week=None, stale_days: float = STALE_DAYS) -> pd.DataFrame:
    """Coverage gaps: suites and benchmark configs NVIDIA runs with no AMD lane, AMD lanes that
    build but run no tests, AMD hardware without an accuracy gate, and stale lanes."""
    return _coverage(store, framework, hardware, suite, since, until, week, stale_days)


def _coverage(store, framework=None, hardware=None, suite=None, since=None, until=None,
              week=None, stale_days: float = STALE_DAYS,
              amd: frozenset | None = None) -> pd.DataFrame:
    """`coverage`; `amd`: labels of every AMD hardware of the window (more do no harm),
    for a caller that wants no `config without AMD run` row (the alerts): only their
    benchmark rows are read, which is all the other findings look at."""
    when = _recent(store, since, until, week, HISTORY_DAYS)
    engine = tables.open_store(store)
    jobs = _in(_jobs(store, framework, suite, when), when)
    values = _run_values(store, framework, when, hardware=amd)
    acc = tables.accuracy(engine, framework=_names(framework), when=when)
    out = coverage_rules.coverage(jobs, values, acc, stale_days=stale_days,
                                  configs=amd is None)
    names = _names(hardware)
    if names:
        out = out[out["hardware"].isin(names) | (out["hardware"] == "")].reset_index(drop=True)
    return out


def _run_values(store, framework, when: Period, model=None, metric=None,
                hardware: frozenset | None = None) -> pd.DataFrame:
    """`performance.run_values` of the window's benchmark rows. Within a composite view
    (`tables.one_read`) the values of every model and metric are computed once, for the
    widest window asked, and a narrower window's are cut from them (a run's values depend
    on its own rows only): the headline and the alerts ask for two windows. `hardware`:
    the values of jobs on hardware of these labels only (`tables.benchmarks`)."""
    if model or metric:
        return performance.run_values(_bench_values(store, framework, model, metric, when))
    engine = tables.open_store(store)
    out = tables.shared("run_values", engine, tables.metric_key(framework, hardware), when,
                        lambda w: performance.run_values(tables.benchmarks(
                            engine, framework=_names(framework), when=w, hardware=hardware)))
    return out if len(out) else performance.run_values(out.iloc[0:0])  # its empty frame


def _bench_values(store, framework, model, metric, when, latest=False) -> pd.DataFrame:
    bench = tables.benchmarks(tables.open_store(store), framework=_names(framework), when=when,
                              latest=latest)
    if model:
        bench = bench[bench["model"].isin(_names(model))]
    if metric:
        bench = bench[bench["metric"].isin(_names(metric))]
    return bench


def performance_parity(store: Store = None, *, framework=None, hardware=None, model=None,
                       metric=None, since=None, until=None, week=None, pairs=None,
                       runs: int = 7) -> pd.DataFrame:
    """AMD/NVIDIA ratio per matched config (model, precision, parallelism, ISL/OSL,
    concurrency) over the last `runs` runs of each side, with a 95 % interval; `perf_ratio`
    is oriented so that above 1 means AMD is better."""
    when = _recent(store, since, until, week, HISTORY_DAYS)
    values = _run_values(store, framework, when, model, metric)
    return _only_amd(performance.parity(values, _reference(pairs), runs=runs), hardware)


def performance_summary(store: Store = None, *, framework=None, hardware=None, model=None,
                        metric=None, since=None, until=None, week=None, pairs=None,
                        runs: int = 7) -> pd.DataFrame:
    """Geometric mean of the oriented performance ratio per hardware pair and metric."""
    ratios = performance_parity(store, framework=framework, hardware=hardware, model=model,
                                metric=metric, since=since, until=until, week=week,
                                pairs=pairs, runs=runs)
    return performance.summary(ratios)


def pareto(store: Store = None, *, framework=None, hardware=None, model=None, since=None,
           until=None, week=None) -> pd.DataFrame:
    """Throughput per GPU against interactivity (tok/s/user) per hardware, framework and
    precision, from each group's latest run, with the Pareto frontier marked."""
    when = _recent(store, since, until, week, HISTORY_DAYS)
    out = performance.pareto(_bench_values(store, framework, model, None, when, latest=True))
    names = _names(hardware)
    return out[out["hardware"].isin(names)].reset_index(drop=True) if names else out


def performance_history(store: Store = None, *, framework=None, hardware=None, model=None,
                        metric=None, match_key=None, since=None, until=None, week=None,
                        min_effect: float = MIN_EFFECT) -> pd.DataFrame:
    """One value per run of the matching performance series (a finding's `model`, `metric`
    and `match_key` select one), with `change` marking the runs where the detector places a
    change point and `segment_median` the level of the segment each run belongs to."""
    when = _recent(store, since, until, week, HISTORY_DAYS)
    values = _run_values(store, framework, when, model, metric)
    if match_key:
        values = values[values["match_key"].isin(_names(match_key))]
    names = _names(hardware)
    if names:
        values = values[values["hardware"].isin(names)]
    return findings.history(values, min_effect=min_effect)


def accuracy_parity(store: Store = None, *, framework=None, hardware=None, model=None,
                    task=None, since=None, until=None, week=None, pairs=None,
                    min_drop: float = 0.05, alpha: float = 0.01) -> pd.DataFrame:
    """Per model, task, config and concurrency: both vendors' latest scores with Wilson
    intervals, the difference with a two-proportion test, and cliffs flagged (a score at least
    `min_drop` below the same config's other concurrencies or below NVIDIA, with
    non-overlapping intervals and Holm-adjusted p < `alpha`)."""
    when = _recent(store, since, until, week, HISTORY_DAYS)
    acc = tables.accuracy(tables.open_store(store), framework=_names(framework), when=when)
    if model:
        acc = acc[acc["model"].isin(_names(model))]
    if task:
        acc = acc[acc["task"].isin(_names(task))]
    cells = acc_rules.cells(acc_rules.history(acc))
    out = acc_rules.parity(cells, _reference(pairs), min_drop=min_drop, alpha=alpha)
    return _only_amd(out, hardware)


def regressions(store: Store = None, *, framework=None, hardware=None, suite=None,
                since=None, until=None, week=None, pairs=None, min_effect: float = MIN_EFFECT,
                kinds=("performance", "test", "accuracy")) -> pd.DataFrame:
    """Findings in the window, each saying where, when, how big and how sure: change points
    and drifts in every performance series (a regression that came back is `recovered`,
    with when and after how many runs, and is listed when it started or recovered in the
    window), new test failures (a failing streak of two or more
    runs after passing in the `TEST_LOOKBACK_DAYS` before), accuracy drops over time and
    accuracy cliffs. Without a window: the last `RECENT_DAYS` days up to the newest run."""
    return _regressions(store, framework, hardware, suite, since, until, week, pairs,
                        min_effect, kinds)


def _regressions(store, framework, hardware, suite, since, until, week, pairs, min_effect,
                 kinds, amd_only: bool = False, amd: frozenset | None = None,
                 messages: bool = True) -> pd.DataFrame:
    """`regressions`; `amd_only`: only the findings on AMD hardware (accuracy cliffs, which
    compare both vendors, are found as ever), for callers that show no other (the
    headline's open findings, the alerts): the NVIDIA lanes' histories and series are
    not followed at all. `amd` (with `amd_only`): labels of every AMD hardware of the
    lookback, whose benchmark rows alone are read, for a caller none of whose later parts
    wants another's (the alerts; the headline's performance summary wants both vendors').
    `messages=False`: new failures' details without their test's last message, for a
    caller that only counts the findings (the headline)."""
    when = _recent(store, since, until, week)
    lookback = _with_history(when)
    engine = tables.open_store(store)
    parts = []
    kinds = set(_names(kinds) or ())
    if kinds & {"performance", "accuracy"}:
        # the lookback's jobs first: the benchmark and accuracy rows take their jobs' fields
        # from them, and the test findings' jobs are cut from them (`tables.one_read`)
        _jobs(store, framework, None, lookback)
    if "performance" in kinds:
        values = _run_values(store, framework, lookback, hardware=amd if amd_only else None)
        if amd_only and not values.empty:
            values = values[values["vendor"] == "amd"]
        parts.append(findings.performance(values, since=when.start, min_effect=min_effect))
    if "test" in kinds:
        jobs = _jobs(store, framework, suite, _with_history(when, TEST_LOOKBACK_DAYS))
        # a new failure's streak reaches its lane's latest run: only tests failing there
        # are candidates (the others have no streak)
        latest = _in(jobs, when).groupby(outcomes.LANE)["run_at"].transform("max")
        last = _in(jobs, when)
        last = last[last["run_at"] == latest]
        failing = last[(last["failed"] + last["error"]) > 0]
        if amd_only:
            failing = failing[failing["vendor"] == "amd"]
        if not failing.empty:
            res = tables.failing_tests(engine, failing["job_pk"]).merge(
                failing[["job_pk"] + outcomes.LANE], on="job_pk")
            keys = ["framework", "hardware", "parity_id"]
            st = _streaks(store, jobs, res, messages=False, culprits=messages, flaky=True)
            flaky = st.loc[st["flaky"], keys]  # flaky tests are not new failures
            # a finding shows its test's last message: read for the few failing tests that
            # are new failures, not for every failing test's last failure (thousands of
            # rows with their texts)
            if messages:
                new = findings.new_failures(st, flaky=flaky, since=when.start).index
                st.loc[new, "last_message"] = _messages(
                    engine, jobs, st.loc[new, "last_failure_job"].to_numpy(np.int64),
                    st.loc[new, "parity_id"].to_numpy(np.int64))
            st = st.drop(columns=["last_failure_job", "flaky"] if messages else ["flaky"])
            vendors = dict(zip(jobs["hardware"], jobs["vendor"]))
            parts.append(findings.tests(st, vendors, flaky=flaky, since=when.start))
    if "accuracy" in kinds:
        acc = tables.accuracy(engine, framework=_names(framework), when=lookback)
        hist = acc_rules.history(acc)
        drops = hist[hist["vendor"] == "amd"] if amd_only and not hist.empty else hist
        parts.append(findings.accuracy(drops, since=when.start))
        in_window = acc_rules.cells(_in(hist, when)) if not hist.empty else hist
        parts.append(findings.cliffs(acc_rules.parity(in_window, _reference(pairs))))
    parts = [p for p in parts if not p.empty]
    if not parts:
        return pd.DataFrame(columns=findings.COLUMNS)
    out = pd.concat(parts, ignore_index=True)
    out["recovered"] = pd.to_datetime(out["recovered"])
    out["lasted_runs"] = pd.to_numeric(out["lasted_runs"]).astype("Int64")
    names = _names(hardware)
    if names:
        out = out[out["hardware"].isin(names)]
    order = {"regression": 0, "cliff": 1, "drop": 2, "new failure": 3, "recovered": 4,
             "drift": 5, "improvement": 6, "change": 7}
    out = out.assign(_o=out["status"].map(order).fillna(9))
    return out.sort_values(["_o", "when"], ascending=[True, False], kind="stable") \
        .drop(columns="_o") \
        .reset_index(drop=True)


def flaky_tests(store: Store = None, *, framework=None, hardware=None, suite=None,
                since=None, until=None, week=None) -> pd.DataFrame:
    """Tests that passed and failed on the same code (failed then passed on a rerun, or both
    outcomes on one commit), per test and hardware, with the flip rate and a Wilson interval
    on the failure rate, labelled shared, amd-only or nvidia-only. Without a window: the
    last `RECENT_DAYS` days up to the newest run."""
    when = _recent(store, since, until, week)
    jobs = _in(_jobs(store, framework, suite, when), when)
    suspect = jobs[(jobs["flaky"] + jobs["failed"] + jobs["error"]) > 0]
    if suspect.empty:
        return pd.DataFrame(columns=outcomes.FLAKY_COLUMNS)
    res = tables.failing_tests(tables.open_store(store), suspect["job_pk"], reruns=True)
    out = _flakiness(store, jobs, res.merge(suspect[["job_pk"] + outcomes.LANE], on="job_pk"))
    names = _names(hardware)
    return out[out["hardware"].isin(names)].reset_index(drop=True) if names else out


def fleet(store: Store = None, *, hardware=None, since=None, until=None,
          week=None) -> pd.DataFrame:
    """Runners online, busy, idle and offline per vendor pool from the latest runner
    snapshots, with queue-time percentiles (job started − created) over the window."""
    when = _recent(store, since, until, week, HISTORY_DAYS)
    engine = tables.open_store(store)
    out = fleet_rules.fleet(tables.runners(engine), _in(tables.jobs(engine, when=when), when))
    names = _names(hardware)
    return out[out["hardware"].isin(names)].reset_index(drop=True) if names else out


def scorecard(store: Store = None, *, framework=None, since=None, until=None,
              week=None) -> pd.DataFrame:
    """Per framework × hardware, the latest run: tests ran, passed, failed and skipped (and
    how many skips were vendor-gated), and the plain pass rate passed / (passed + failed +
    error). A lane that ran no test shows 0 tests, not 100 %."""
    when = _recent(store, since, until, week, HISTORY_DAYS)
    columns = ["framework", "vendor", "hardware", "run_at", "commit", "jobs", "tests", "passed",
               "failed", "error", "skipped", "vendor_skipped", "flaky", "pass_rate"]
    # each lane's latest run's jobs (and a few others at those times), not the window's
    jobs = _in(tables.latest_jobs(tables.open_store(store), framework=_names(framework),
                                  when=when), when)
    if jobs.empty:
        return pd.DataFrame(columns=columns)
    latest = jobs.groupby(["framework", "hardware"])["run_at"].transform("max")
    last = jobs[jobs["run_at"] == latest]
    out = (last.groupby(["framework", "vendor", "hardware", "run_at", "commit"], as_index=False)
           .agg(jobs=("job_pk", "count"), tests=("total", "sum"), passed=("passed", "sum"),
                failed=("failed", "sum"), error=("error", "sum"), skipped=("skipped", "sum"),
                vendor_skipped=("vendor_skipped", "sum"), flaky=("flaky", "sum")))
    ran = out["passed"] + out["failed"] + out["error"]
    out["pass_rate"] = (out["passed"] / ran.where(ran > 0)).round(4)
    return out.sort_values(["framework", "vendor", "hardware"]).reset_index(drop=True)[columns]


HEADLINE_DAYS = 14  # without a window, the headline looks at the last two weeks of data


def headline(store: Store = None, *, framework=None, hardware=None, since=None, until=None,
             week=None, pairs=None, findings: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per framework × AMD hardware against its NVIDIA reference: coverage (suites tested of
    the reference's), same-denominator pass rate, performance ratio, accuracy difference and
    cliffs, open findings, and the run and commit the pass rate comes from (`headline.py`).
    Without a window: the last `HEADLINE_DAYS` days up to the newest run. `findings`: the
    `regressions()` frame for the same filters, when the caller already has it."""
    when = _recent(store, since, until, week, HEADLINE_DAYS)
    if since is None and until is None and week is None:
        since = when.start
    kw = dict(framework=framework, hardware=hardware, since=since, until=until, week=week,
              pairs=pairs)
    # the findings look furthest back (their test lookback): read first, the pass rate's
    # jobs are cut from their jobs (`tables.one_read`) instead of read again
    found = _regressions(store, framework, hardware, None, since, until, week, pairs,
                         MIN_EFFECT, ("performance", "test", "accuracy"), amd_only=True,
                         messages=False) if findings is None else findings
    by_suite = pass_rate_parity(store, **kw)
    jobs = _in(_jobs(store, framework, None, when), when)
    out = headline_rules.headline(by_suite, jobs, performance_summary(store, **kw),
                                  accuracy_parity(store, **kw), found)
    if not out.empty:
        acc = tables.accuracy(tables.open_store(store), framework=_names(framework), when=when)
        nights = verdict_rules.nightly(jobs, acc, out)
        keys = ["framework", "amd_hardware", "nvidia_hardware"]
        share = verdict_rules.share(nights)
        out = out.drop(columns=["verdict_nights", "complete_nights", "verdict_completeness"]) \
            .merge(share, on=keys, how="left")
        out["verdict_nights"] = out["verdict_nights"].fillna(0).astype(int)
        out["complete_nights"] = out["complete_nights"].fillna(0).astype(int)
        for i, r in out.iterrows():
            if r["verdict_nights"] and r["complete_nights"] < r["verdict_nights"]:
                last = nights[(nights["framework"] == r["framework"])
                              & (nights["amd_hardware"] == r["amd_hardware"])].iloc[-1]
                note = (f"verdicts complete on {r['complete_nights']} of {r['verdict_nights']} "
                        f"nights (last: {last['why'] or 'complete'})")
                out.at[i, "notes"] = "; ".join(x for x in (r["notes"], note) if x)
        out = out[headline_rules.COLUMNS]
    return _only_amd(out, hardware)


def verdicts(store: Store = None, *, framework=None, hardware=None, since=None, until=None,
             week=None, pairs=None) -> pd.DataFrame:
    """Verdict completeness per AMD lane and night (`dashboard.verdicts`): did every suite
    the NVIDIA reference ran that week execute tests on AMD that night, and does the lane
    have the accuracy gate its reference has? `complete` and `why` say so per night."""
    when = _recent(store, since, until, week, RECENT_DAYS)
    engine = tables.open_store(store)
    jobs = _in(_jobs(store, framework, None, _with_history(when, 7)), _with_history(when, 7))
    if jobs.empty:
        return pd.DataFrame(columns=verdict_rules.COLUMNS)
    reference = _reference(pairs)
    lanes = []
    for fw, g in jobs.groupby("framework"):
        present = set(g.loc[g["vendor"] == "nvidia", "hardware"])
        for hw in sorted(set(g.loc[g["vendor"] == "amd", "hardware"])):
            ref = reference(hw, present)
            if ref:
                lanes.append((fw, hw, ref))
    lanes = pd.DataFrame(lanes, columns=["framework", "amd_hardware", "nvidia_hardware"])
    acc = tables.accuracy(engine, framework=_names(framework), when=_with_history(when, 7))
    out = verdict_rules.nightly(jobs, acc, lanes)
    if when.start is not None:
        out = out[out["night"] >= pd.Timestamp(when.start).normalize()]
    return _only_amd(out.reset_index(drop=True), hardware)


def capability_parity(store: Store = None, *, framework=None, hardware=None, since=None,
                      until=None, week=None, combinations=None, stale_days: float = 14,
                      vocabulary_file=None) -> pd.DataFrame:
    """Per framework × capability × hardware: "not tested", "tested without accuracy gate",
    "gated and failing" or "gated and passing", with the last run, a link to it, the
    accuracy figure when there is one, and stale cells marked. Rows are every capability
    of the vocabulary plus its combinations (or `combinations=[("disaggregation",
    "wide-ep"), ...]`); a combination is covered only by a lane that exercised all of it."""
    caps = capabilities(vocabulary_file)
    when = _recent(store, since, until, week, HISTORY_DAYS)
    engine = tables.open_store(store)
    jobs = _in(_jobs(store, framework, None, when), when)
    if jobs.empty:
        return pd.DataFrame(columns=capability_rules.COLUMNS)
    names = _names(framework)
    tags = tables.job_capabilities(engine, framework=names, when=when)
    configs = tables.result_configs(engine, framework=names, when=when)
    units = capability_rules.units(jobs, tags, configs, caps)
    rows = [(n,) for n in caps.names] + list(combinations or caps.combinations)
    out = capability_rules.matrix(units, rows, stale_days=stale_days,
                                  newest=tables.newest_run(engine))
    hw = _names(hardware)
    return out[out["hardware"].isin(hw)].reset_index(drop=True) if hw else out


SOURCE_STALE_HOURS = 24.0


def sources(store: Store = None, *, now=None, stale_hours: float = SOURCE_STALE_HOURS) -> pd.DataFrame:
    """Each source of `parity.toml` with its last sync: when it was tried, when it last
    succeeded, how it went, and whether it is stale (no successful sync for `stale_hours`;
    the dashboard's figures from it may be out of date). `now` defaults to the clock (UTC)."""
    df = tables.source_syncs(tables.open_store(store))
    now = pd.Timestamp.now("UTC").tz_localize(None) if now is None else pd.Timestamp(now)
    success = pd.to_datetime(df["last_success_at"])
    since = (now - success).dt.total_seconds() / 3600.0 if len(df) else \
        pd.Series(dtype=float)
    out = df.assign(hours_since_success=since.round(1),
                    stale=since.isna() | (since > stale_hours))
    out["stale"] = out["stale"].astype(bool)
    return out.reset_index(drop=True)


def rocm_stack(store: Store = None, *, framework=None, hardware=None, since=None, until=None,
               week=None) -> pd.DataFrame:
    """AMD's software across ROCm libraries, per architecture and night: the pass rate of
    ROCm, PyTorch and JAX in TheRock's release runs (ROCm/Quartz status), with each night's
    build status and a verdict (`build only` where nothing was tested, never passing)."""
    when = _recent(store, since, until, week, HISTORY_DAYS)
    jobs = tables.jobs(tables.open_store(store), framework=_names(framework), when=when,
                       repository=stack_rules.REPOSITORY)
    out = stack_rules.nightly(_in(jobs, when))
    names = _names(hardware)
    return out[out["hardware"].isin(names)].reset_index(drop=True) if names else out


def compiler_pass_rate(store: Store = None, *, hardware=None, suite=None, since=None,
                       until=None, week=None, latest: bool = True) -> pd.DataFrame:
    """torch.compile pass rate per run, hardware and configuration (suite, compiler, dtype,
    mode, static or dynamic shapes), computed from the TorchInductor accuracy and
    performance CSVs exactly as PyTorch's compiler dashboard computes it
    (`dashboard.compilers`), both vendors side by side. `latest` keeps each hardware's
    newest run of each configuration."""
    import json as _json

    when = _recent(store, since, until, week, RECENT_DAYS)
    engine = tables.open_store(store)
    jobs = _in(tables.jobs(engine, framework=["pytorch"], when=when), when)
    if jobs.empty:
        return pd.DataFrame(columns=compiler_rules.COLUMNS)
    acc = tables.inductor_accuracy(engine, jobs["job_pk"])
    parts = acc["classname"].str.split(".", n=4, expand=True) if not acc.empty else None
    if parts is None or parts.shape[1] < 5:
        return pd.DataFrame(columns=compiler_rules.COLUMNS)
    acc = acc.assign(suite=parts[1], compiler=parts[2], dtype=parts[3], mode=parts[4])
    acc["shapes"] = np.where(acc["compiler"].str.contains("dynamic"), "dynamic", "static")
    acc = acc.merge(jobs[["job_pk", "framework", "vendor", "hardware", "run_pk", "run_at"]],
                    on="job_pk")
    bench = tables.benchmarks(engine, framework=["pytorch"], when=when)
    bench = bench[(bench["benchmark"] == "TorchInductor") & (bench["metric"] == "speedup")]
    if not bench.empty:
        cfg = pd.DataFrame([_json.loads(c or "{}") for c in bench["config"]], index=bench.index)
        bench = bench.assign(**{k: cfg.get(k) for k in compiler_rules.CONFIG})
        bench = bench.rename(columns={"value": "speedup"})
    else:
        bench = pd.DataFrame(columns=["framework", "vendor", "hardware", "run_pk", "model",
                                      "speedup"] + compiler_rules.CONFIG)
    out = compiler_rules.pass_rate(acc, bench)
    if suite:
        out = out[out["suite"].isin(_names(suite))]
    names = _names(hardware)
    if names:
        out = out[out["hardware"].isin(names)]
    if latest and not out.empty:  # runs of one time (a re-run's attempts): the later attempt
        attempt = out["run_pk"].map(dict(zip(jobs["run_pk"], jobs["attempt"])))
        out = out.assign(_attempt=attempt).sort_values(
            ["run_at", "_attempt", "run_pk"], kind="stable").groupby(
            ["framework", "vendor", "hardware"] + compiler_rules.CONFIG, dropna=False).tail(1) \
            .drop(columns="_attempt")
    return out.sort_values(["suite", "compiler", "dtype", "mode", "vendor", "hardware"]) \
        .reset_index(drop=True)


def untrusted_runs(store: Store = None, *, since=None, until=None, week=None) -> pd.DataFrame:
    """The runs every other view leaves out, with why: a fork's pull request, a
    `pull_request_target` or `workflow_run` chain, a branch the source does not follow.
    Any view takes `include_untrusted=True` to count them in."""
    when = _recent(store, since, until, week, HISTORY_DAYS)
    return tables.untrusted_runs(tables.open_store(store), when)


def alerts(store: Store = None, *, rules=None, framework=None, hardware=None, since=None,
           until=None, week=None) -> pd.DataFrame:
    """The alerts that fire now on AMD (`dashboard.alerts`): AMD-only failures that
    persisted, tests failing on both vendors, lanes that run no test or lack their
    reference's gate or went stale, confirmed performance regressions, accuracy cliffs and
    drops, offline runner pools and long queues, with priority, evidence and a stable
    fingerprint. `rules`: a rules dict or file (default the shipped alert_rules.toml)."""
    rule_set = rules if isinstance(rules, dict) else alert_rules.load_rules(rules)
    records = tables.alert_records(tables.open_store(store))
    tests = records[records["rule"].isin(alert_rules.TEST_RULES)
                    & (records["state"] != "resolved")]
    # the latest outcomes of the tests alerts are about: the AMD-only failures, the tests
    # failing on both vendors (a rule) and the tests of test alerts on record (their explicit
    # passes), not the whole matrix (hundreds of thousands of tests at real volume)
    both = "both_vendors_failing" in rule_set
    # the findings look furthest back: read first, every later part's jobs are cut from
    # their jobs (`tables.one_read`) instead of read again. Only AMD's benchmark rows are
    # read: no part below looks at another's series (coverage without its configs NVIDIA
    # alone runs, which no rule alerts on)
    lookback = _jobs(store, framework, None, _with_history(_recent(store, since, until, week)))
    amd = frozenset(lookback.loc[lookback["vendor"] == "amd", "hardware"].unique())
    found = _regressions(store, framework, hardware, None, since, until, week, None,
                         MIN_EFFECT, ("performance", "accuracy"), amd_only=True, amd=amd)
    on_record = {test_id(t) for subject, ev in zip(tests["subject"], tests["evidence"])
                 for t in alert_rules.group_tests(ev) or [subject]}
    matrix = _matrix(store, framework, hardware, None, since, until, week, None,
                     ["amd-only fail"] + (["both fail"] if both else []), on_record,
                     ALIGN_HOURS, messages=False)
    failing = matrix[matrix["quadrant"] == "amd-only fail"].reset_index(drop=True)
    groups = {(r.rule, r.framework, r.hardware, r.subject) for r in tests.itertuples()
              if alert_rules.group_tests(r.evidence)}
    # the last message is shown by a failing test's own alert only, not by a file's
    failures = _failing_since(store, failing, framework, None, since, until, week,
                              shown=lambda f: alert_rules.alone(f, rule_set, groups))
    out = alert_rules.evaluate(
        rule_set, failures=failures,
        matrix=matrix if both else pd.DataFrame(),
        coverage=_coverage(store, framework, hardware, since=since, until=until, week=week,
                           amd=amd),
        findings=found,
        fleet=fleet(store, hardware=hardware, since=since, until=until, week=week),
        groups=groups)
    out = out.merge(records[["fingerprint", "state", "first_seen", "issue_repo", "issue_number"]],
                    on="fingerprint", how="left")
    # test alerts on record that no longer fire: how many runs in a row their test (a file
    # alert: each of its tests) has passed on AMD since, the explicit passes their resolution
    # needs (`attrs`, not rows: they do not fire)
    quiet = tests[~tests["fingerprint"].isin(out["fingerprint"])]
    out.attrs["explicit_passes"] = _explicit_passes(store, matrix, quiet, framework, since,
                                                    until, week)
    names = _names(hardware)
    return out[out["hardware"].isin(names)].reset_index(drop=True) if names else out


def _explicit_passes(store, matrix: pd.DataFrame, quiet: pd.DataFrame, framework, since, until,
                     week) -> dict[str, int]:
    """Fingerprint -> consecutive AMD runs, up to the latest, in which its test passed (for a
    file alert, the fewest over its tests); alerts whose test did not pass in the latest run
    are left out."""
    if quiet.empty or matrix.empty or "amd_outcome" not in matrix:
        return {}
    members = {fp: (fw, hw, alert_rules.group_tests(ev) or [subject]) for fp, fw, hw, subject, ev
               in zip(quiet["fingerprint"], quiet["framework"], quiet["hardware"],
                      quiet["subject"], quiet["evidence"])}
    wanted = {(fw, hw, t) for fw, hw, tests in members.values() for t in tests}
    ok = matrix[matrix["amd_outcome"] == "passed"]
    ok = ok[[k in wanted for k in zip(ok["framework"], ok["amd_hardware"], ok["parity_key"])]]
    if ok.empty:
        return {}
    asked = period(since, until, week)
    when = _with_history(asked) if asked.start else _recent(store, since, until, week,
                                                            HISTORY_DAYS)
    jobs = _jobs(store, framework, None, when)
    jobs = jobs[jobs["hardware"].isin(ok["amd_hardware"].unique())]
    st = _streaks(store, jobs, ok.rename(columns={"amd_hardware": "hardware"}), messages=False)
    runs = {(fw, hw, key): int(n) for fw, hw, key, n in zip(
        st["framework"], st["hardware"], st["parity_key"], st["passing"])}
    found = {fp: min(runs.get((fw, hw, t), 0) for t in tests)
             for fp, (fw, hw, tests) in members.items()}
    return {fp: n for fp, n in sorted(found.items()) if n > 0}


ALERT_LOG_COLUMNS = ["change", "priority", "rule", "framework", "hardware", "subject", "at",
                     "issue_repo", "issue_number"]


def alert_log(store: Store = None, *, since=None, until=None, week=None) -> pd.DataFrame:
    """Alerts opened and resolved in the window, as `parity alerts` recorded them (for the
    weekly report): which, when, and their issue."""
    when = _recent(store, since, until, week, RECENT_DAYS)
    rec = tables.alert_records(tables.open_store(store))
    if rec.empty:
        return pd.DataFrame(columns=ALERT_LOG_COLUMNS)
    opened = _in(rec.assign(change="opened", at=rec["first_seen"]), when, "at")
    resolved = rec[rec["resolved_at"].notna()]
    resolved = _in(resolved.assign(change="resolved", at=resolved["resolved_at"]), when, "at")
    out = pd.concat([opened, resolved], ignore_index=True)
    return out[ALERT_LOG_COLUMNS].sort_values(["change", "priority", "at"]).reset_index(drop=True)


FIGURES = ("same_denominator_rate", "nvidia_rate", "coverage", "verdict_completeness",
           "perf_ratio", "accuracy_diff")
PROVENANCE_COLUMNS = ["figure", "role", "framework", "hardware", "run_id", "run_at", "commit",
                      "run_url", "job_id", "job_name", "job_url", "artifact", "path", "sha256",
                      "format", "records"]


def provenance(store: Store = None, *, figure: str = "same_denominator_rate", framework=None,
               hardware=None, since=None, until=None, week=None, pairs=None) -> pd.DataFrame:
    """The inputs behind one headline figure of one AMD lane: each run, job and stored file
    (with its SHA-256) it was computed from, on the AMD side and the reference side.
    `figure`: same_denominator_rate or nvidia_rate (the aligned latest runs), coverage or
    verdict_completeness (every run of both sides in the window), perf_ratio or
    accuracy_diff (the files that gave the benchmark or accuracy rows)."""
    if figure not in FIGURES:
        raise ValueError(f"unknown figure {figure!r} (known: {', '.join(FIGURES)})")
    engine = tables.open_store(store)
    when = _recent(store, since, until, week, HEADLINE_DAYS)
    jobs = _in(_jobs(store, framework, None, _with_history(when, 3)), _with_history(when, 3))
    if figure in ("same_denominator_rate", "nvidia_rate"):
        picked = _rate_inputs(store, framework, hardware, since, until, week, pairs, when)
    else:
        picked = _lane_inputs(store, jobs, framework, hardware, since, until, week, pairs, when)
    if not picked or jobs.empty:
        return pd.DataFrame(columns=PROVENANCE_COLUMNS)
    chosen = pd.DataFrame(picked, columns=["role", "job_pk"]).drop_duplicates()
    files = tables.artifacts(engine, chosen["job_pk"])
    if figure == "perf_ratio":
        files = files[files["format"].isin(PERF_FORMATS)]
    elif figure == "accuracy_diff":
        files = files[files["format"].isin(ACCURACY_FORMATS)]
    out = chosen.merge(jobs, on="job_pk").merge(files, on="job_pk",
                                                how="inner" if figure in (
                                                    "perf_ratio", "accuracy_diff") else "left")
    out = out.assign(figure=figure)
    out["records"] = out["records"].fillna(0).astype(int)
    return out[PROVENANCE_COLUMNS].sort_values(["role", "hardware", "run_at", "job_id"]) \
        .reset_index(drop=True)


def _rate_inputs(store, framework, hardware, since, until, week, pairs,
                 when: Period) -> list[tuple[str, int]]:
    """(role, job) of the runs the headline's pass rates come from: the aligned latest runs
    of its window (`pass_rate_parity` with the headline's window), in lanes that have a
    reference. Found without the headline itself, whose findings and performance the rates
    do not need."""
    if since is None and until is None and week is None:
        since = when.start
    aligned = _aligned(store, framework, None, hardware, since, until, week, pairs, True,
                       ALIGN_HOURS)
    aligned = aligned[aligned["nvidia_hardware"].notna()]
    return [(role, j) for r in aligned.itertuples()
            for role, js in (("amd", r.amd_jobs), ("reference", r.ref_jobs)) for j in js]


def _lane_inputs(store, jobs: pd.DataFrame, framework, hardware, since, until, week, pairs,
                 when: Period) -> list[tuple[str, int]]:
    """(role, job) of every run in the window of both sides of each lane the headline
    shows (its rows do not depend on the findings: none are asked)."""
    head = headline(store, framework=framework, hardware=hardware, since=since, until=until,
                    week=week, pairs=pairs, findings=pd.DataFrame(columns=findings.COLUMNS))
    picked = []
    for r in head.itertuples():
        for role, hw in (("amd", r.amd_hardware), ("reference", r.nvidia_hardware)):
            lane = _in(jobs[(jobs["framework"] == r.framework) & (jobs["hardware"] == hw)], when)
            picked += [(role, j) for j in lane["job_pk"]]
    return picked


# the formats whose rows the performance and accuracy figures are computed from
PERF_FORMATS = ("serving-bench", "inferencex-agg", "pytorch-v3", "inductor-csv", "vllm-latency",
                "vllm-throughput", "vllm-benchmark-summary", "sglang-one-batch")
ACCURACY_FORMATS = ("lm-eval", "inferencex-evals", "eval-result")


def _trust(view):
    """Let a view take `include_untrusted=True` (untrusted runs are left out by default).
    Nested views inherit the caller's choice, and share its reads (`tables.one_read`)."""
    @functools.wraps(view)
    def call(*args, include_untrusted: bool | None = None, **kw):
        with tables.one_read():  # a composite view reads each kind of row once
            if include_untrusted is None:
                return view(*args, **kw)
            token = tables.INCLUDE_UNTRUSTED.set(bool(include_untrusted))
            try:
                return view(*args, **kw)
            finally:
                tables.INCLUDE_UNTRUSTED.reset(token)
    return call


VIEWS = tuple(name for name, obj in list(globals().items())
              if callable(obj) and not name.startswith("_") and getattr(obj, "__module__", "")
              == __name__ and name not in ("period", "test_id", "capabilities", "vocabulary"))
for _name in VIEWS:
    globals()[_name] = _trust(globals()[_name])
