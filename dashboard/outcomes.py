"""Test-outcome parity, pure: lane alignment across vendors, the same-denominator pass rate,
the per-test matrix, AMD-only failure streaks and vendor-aware flakiness.

Inputs are the plain frames `tables.jobs()` and `tables.results()` return; nothing here
touches the store. A *lane* is framework × suite × hardware; a *lane run* is the jobs of one
lane in one CI run.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
import pandas as pd

from parity.dashboard.groups import key_codes
from parity.dashboard.intervals import wilson_bounds
from parity.db.vectors import OUTCOMES, SKIPS, find, names

LANE = ["framework", "suite", "hardware"]
# worst first: a test that errored in one shard and passed in another errored (the order the
# per-job outcome vectors store as codes)
RANK = {o: i for i, o in enumerate(OUTCOMES)}
RAN = ("passed", "failed", "error")
FAILED = ("failed", "error")

Pairing = Callable[[str, set[str]], str | None]
# the jobs' columns `lane_runs` and `align` read
ALIGN_READS = LANE + ["vendor", "run_pk", "job_pk", "commit", "run_at", "total", "run_url",
                      "attempt"]
ALIGN_COLUMNS = ["framework", "suite", "amd_hardware", "nvidia_hardware", "amd_run_pk",
                 "amd_commit", "amd_run_at", "amd_jobs", "amd_url", "ref_run_pk", "ref_commit",
                 "ref_run_at", "ref_jobs", "alignment", "staleness_h"]


def lane_runs(jobs: pd.DataFrame) -> pd.DataFrame:
    """One row per lane run: its commit, time, jobs and summed counts, in order of time
    (then attempt, then run; lane runs of one run that tie, in order of lane and vendor).
    A lane run's commit and link are its first job's that has one, its time its earliest
    job's. Grouped as integer codes: a pandas grouping of a window's thousands of jobs cost
    more than the pairing that reads it."""
    columns = LANE + ["vendor", "run_pk", "commit", "run_at", "job_pks", "total", "run_url"]
    if jobs.empty:
        return pd.DataFrame(columns=columns)
    # each job's lane run, numbered in order of the keys' values (a missing value last)
    flat = np.zeros(len(jobs), np.int64)
    for c in LANE + ["vendor", "run_pk"]:
        codes, values = pd.factorize(jobs[c], sort=True, use_na_sentinel=False)
        flat = flat * max(len(values), 1) + codes
    _, first, group = np.unique(flat, return_index=True, return_inverse=True)
    group, n, rows = group.ravel(), len(first), np.arange(len(jobs))
    out = {c: jobs[c].array.take(first) for c in LANE + ["vendor", "run_pk"]}
    for c in ("commit", "run_url"):  # the first job's that has one
        has = jobs[c].notna().to_numpy(bool)
        at = np.full(n, len(jobs))
        np.minimum.at(at, group[has], rows[has])
        out[c] = jobs[c].array.take(np.where(at < len(jobs), at, -1), allow_fill=True)
    earliest = np.lexsort((rows, _order_times(jobs["run_at"]), group))  # by group, then time
    out["run_at"] = jobs["run_at"].array.take(earliest[np.r_[0, np.flatnonzero(
        np.diff(group[earliest])) + 1]])
    # each lane run's jobs, sorted: one sort of all jobs by (group, job), cut per group
    pk = jobs["job_pk"].to_numpy()
    by_group = np.lexsort((pk, group))
    cuts = np.flatnonzero(np.diff(group[by_group])) + 1
    out["job_pks"] = [tuple(part.tolist()) for part in np.split(pk[by_group], cuts)]
    total = jobs["total"]
    if np.issubdtype(total.dtype, np.integer):
        out["total"] = np.bincount(group, weights=total.to_numpy(), minlength=n).astype(np.int64)
    else:  # a missing count adds nothing
        out["total"] = np.bincount(group, weights=total.to_numpy(float, na_value=0.0),
                                   minlength=n)
    frame = pd.DataFrame({c: out[c] for c in columns})
    # attempts of one run start together: the later attempt is the later lane run (a
    # Buildkite build's retried job attempts are its attempt 0, its final jobs attempt 1)
    keys = [frame["run_pk"].to_numpy()]
    if "attempt" in jobs.columns:
        attempt = np.full(n, -np.inf)
        np.maximum.at(attempt, group, jobs["attempt"].to_numpy(float, na_value=-np.inf))
        keys.append(np.where(attempt == -np.inf, np.nan, attempt))  # none: last
    keys.append(_order_times(frame["run_at"]))
    return frame.take(np.lexsort(keys)).reset_index(drop=True)


def align(jobs: pd.DataFrame, reference: Pairing, *, latest: bool = True,
          window_hours: float = 72.0) -> pd.DataFrame:
    """Pair each AMD lane run with a reference (NVIDIA) lane run of the same framework and
    suite: the same commit when the reference ran it, else the reference run nearest in time
    within `window_hours` (its distance is the staleness), else none."""
    present: dict[str, set] = {}  # framework -> the NVIDIA hardware that ran it
    nvidia = (jobs["vendor"] == "nvidia").to_numpy(bool) & jobs["framework"].notna() \
        .to_numpy(bool)
    for fw, hw in set(zip(jobs["framework"].to_numpy(object)[nvidia].tolist(),
                          jobs["hardware"].to_numpy(object)[nvidia].tolist())):
        present.setdefault(fw, set()).add(hw)
    runs = lane_runs(_latest_candidates(jobs, window_hours) if latest else jobs)
    # the runs as plain tuples, in lane-run order: a few thousand lane runs are looked up
    # per AMD lane, which pandas row access makes cost far more than the pairing itself
    cols = ["framework", "suite", "hardware", "vendor", "run_pk", "commit", "run_at",
            "job_pks", "run_url"]
    amd_lanes: dict[tuple, list] = {}
    ref_lanes: dict[tuple, list] = {}
    # which runs name their whole lane, as a column (pd.isna per value of a few thousand
    # lane runs cost more than the pairing)
    whole = runs[["framework", "suite", "hardware"]].notna().all(axis=1).tolist()
    for r, has_lane in zip(zip(*(runs[c].tolist() for c in cols)), whole):
        vendor = r[3]
        if vendor in ("amd", "nvidia") and has_lane:
            fw, suite, hw = r[:3]
            lanes = amd_lanes if vendor == "amd" else ref_lanes
            lanes.setdefault((fw, suite, hw), []).append(r)
    rows = []
    window = pd.Timedelta(hours=window_hours)
    for (fw, suite, hw), lane in sorted(amd_lanes.items()):  # (the keys differ)
        ref_hw = reference(hw, present.get(fw, set()))
        refs = ref_lanes.get((fw, suite, ref_hw), [])
        for _, _, _, _, run_pk, commit, run_at, job_pks, run_url in \
                (lane[-1:] if latest else lane):
            row = dict(framework=fw, suite=suite, amd_hardware=hw, nvidia_hardware=ref_hw,
                       amd_run_pk=run_pk, amd_commit=commit, amd_run_at=run_at,
                       amd_jobs=job_pks, amd_url=run_url, ref_run_pk=None, ref_commit=None,
                       ref_run_at=pd.NaT, ref_jobs=(), alignment="none", staleness_h=math.nan)
            ref = _same_commit(refs, commit)
            if ref is not None:
                row["alignment"] = "same-commit"
            elif refs:
                ref = _nearest(refs, run_at, window)
                row["alignment"] = "nearest" if ref is not None else "none"
            if ref is not None:
                row.update(ref_run_pk=ref[4], ref_commit=ref[5], ref_run_at=ref[6],
                           ref_jobs=ref[7],
                           staleness_h=abs((run_at - ref[6]).total_seconds()) / 3600)
            rows.append(row)
    return pd.DataFrame(rows, columns=ALIGN_COLUMNS)


def _latest_candidates(jobs: pd.DataFrame, window_hours: float) -> pd.DataFrame:
    """The jobs `align(latest=True)` can pair, whole runs of them, with the columns
    `lane_runs` reads: each AMD lane's lane runs that start last (every one that ties, for
    `lane_runs`' order to choose among; an undated one starts after every dated one, as
    that order has it), and the other vendors' runs that share a commit with one of those
    or started within `window_hours` of one. A window's other runs are thousands of jobs
    that the pairing would group into lane runs only to pass them by."""
    col = {c: jobs[c].to_numpy(object) for c in ("framework", "suite", "hardware", "commit")}
    vendor, run_pk = jobs["vendor"].to_numpy(object), jobs["run_pk"].to_numpy()
    at = _order_times(jobs["run_at"])
    amd = np.flatnonzero((vendor == "amd") & ~pd.isna(col["framework"])
                         & ~pd.isna(col["suite"]) & ~pd.isna(col["hardware"]))
    if not len(amd):
        return jobs.iloc[0:0]
    lane = key_codes(*(col[c][amd] for c in ("framework", "suite", "hardware")))
    lane_run = key_codes(lane, run_pk[amd])
    # a lane run starts at its earliest job (an undated run after every dated one)
    start = np.full(lane_run.max() + 1, UNDATED, np.int64)
    np.minimum.at(start, lane_run, at[amd])
    last = np.full(lane.max() + 1, np.iinfo(np.int64).min, np.int64)
    np.maximum.at(last, lane, start[lane_run])
    keep = start[lane_run] == last[lane]
    commits = {c for c in col["commit"][amd[keep]].tolist() if isinstance(c, str) and c}
    times = start[lane_run][keep]
    times = times[times != UNDATED]
    other = vendor != "amd"
    near = jobs["commit"].isin(commits).to_numpy(bool, copy=True)
    if len(times):
        window = np.int64(pd.Timedelta(hours=window_hours).value // 1000)  # microseconds
        near |= (at != UNDATED) & (at >= times.min() - window) & (at <= times.max() + window)
    rows = other & np.isin(run_pk, run_pk[other & near])
    rows[amd[keep]] = True
    return jobs[[c for c in ALIGN_READS if c in jobs.columns]][rows]


UNDATED = np.iinfo(np.int64).max  # a missing time, as `_order_times` gives it


def _order_times(times: pd.Series) -> np.ndarray:
    """Times as integer microseconds to order by, a missing one (`UNDATED`) after every
    other, as pandas sorts a missing time last."""
    at = pd.DatetimeIndex(times).as_unit("us").asi8
    return np.where(at == np.iinfo(np.int64).min, UNDATED, at)


def _same_commit(refs: list[tuple], commit) -> tuple | None:
    """The latest reference run of this commit (a run without a commit matches none)."""
    if not isinstance(commit, str) or not commit:
        return None
    return next((r for r in reversed(refs) if r[5] == commit), None)


def _nearest(refs: list[tuple], at, window: pd.Timedelta) -> tuple | None:
    """The reference run nearest in time to `at` (the first of equals), if within `window`."""
    best, gap = None, None
    for r in refs:
        if pd.isna(r[6]) or pd.isna(at):
            continue
        g = abs(r[6] - at)
        if gap is None or g < gap:
            best, gap = r, g
    return best if gap is not None and gap <= window else None


def reduce_tests(results: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """One row per (`by` …, parity_id): the worst outcome, whether any rerun happened, and
    the last message."""
    if results.empty:
        return pd.DataFrame(columns=by + ["parity_id", "parity_key", "outcome", "reruns",
                                          "message", "skip_category"])
    keys = by + ["parity_id"]
    r = results.assign(rank=results["outcome"].map(RANK).fillna(6))
    r = r.sort_values("rank", kind="stable")
    # one row per test: the worst row's outcome and key, the most reruns, and the first
    # message and skip category that are there, worst row first (the rows are read once
    # and cut, not aggregated column by column: the texts are what costs)
    group = r.groupby(keys, sort=False, dropna=False).ngroup().to_numpy()
    first = ~pd.Series(group).duplicated().to_numpy()
    out = r.loc[first, keys + ["parity_key", "outcome"]].reset_index(drop=True)
    n = len(out)
    order = group[first]  # out's row i is group order[i]
    at = np.empty(n, np.int64)
    at[order] = np.arange(n)
    reruns = np.zeros(n)  # a missing rerun count is no rerun
    np.fmax.at(reruns, at[group], pd.to_numeric(r["rerun_count"]).to_numpy(dtype=float))
    out["reruns"] = reruns.astype(np.int64)
    for col in ("message", "skip_category"):
        has = r[col].notna().to_numpy()
        value = np.full(n, None, dtype=object)
        rows = np.flatnonzero(has)
        seen = at[group[rows]]
        once = ~pd.Series(seen).duplicated().to_numpy()
        value[seen[once]] = r[col].to_numpy(dtype=object)[rows[once]]
        out[col] = pd.Series(value, dtype=r[col].dtype)
    return out


def _side_outcomes(pairs: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """Per (pair, parity_id): the AMD and the reference outcome (NaN when absent)."""
    owner = []
    for i, p in enumerate(pairs.itertuples()):
        owner += [(j, i, "amd") for j in p.amd_jobs] + [(j, i, "ref") for j in p.ref_jobs]
    own = pd.DataFrame(owner, columns=["job_pk", "pair", "side"])
    tagged = results.merge(own, on="job_pk")
    reduced = reduce_tests(tagged, ["pair", "side"])
    wide = reduced.pivot_table(index=["pair", "parity_id"], columns="side",
                               values=["outcome", "message", "skip_category"], aggfunc="first")
    wide.columns = [f"{side}_{what}" for what, side in wide.columns]
    keys = reduced.groupby(["pair", "parity_id"])["parity_key"].first()
    wide = wide.join(keys).reset_index()
    for c in ("amd_outcome", "ref_outcome", "amd_message", "ref_message", "amd_skip_category",
              "ref_skip_category"):
        if c not in wide:
            wide[c] = None
    return wide


def contingency(pairs: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """Per aligned pair: how many tests had each (AMD outcome, reference outcome), each side
    reduced to its worst outcome per test (None where a side did not run the test). The
    store computes the same table from its per-job vectors (`tables.pair_outcomes`)."""
    cols = ["pair", "amd", "ref", "n"]
    if pairs.empty or results.empty:
        return pd.DataFrame(columns=cols)
    wide = _side_outcomes(pairs, results)
    amd = wide["amd_outcome"].astype(object).where(wide["amd_outcome"].notna(), None)
    ref = wide["ref_outcome"].astype(object).where(wide["ref_outcome"].notna(), None)
    t = pd.DataFrame({"pair": wide["pair"], "amd": amd, "ref": ref})
    return t.groupby(["pair", "amd", "ref"], dropna=False).size().rename("n").reset_index()


def pass_rate_parity(pairs: pd.DataFrame, results: pd.DataFrame | None = None, *,
                     counts: pd.DataFrame | None = None) -> pd.DataFrame:
    """Same-denominator pass rate per aligned pair: of the tests that ran on the reference
    side, the share that passed on AMD (skipped, missing or failing on AMD counts against
    AMD), beside the plain pass rate of each side. From the raw `results`, or from their
    `contingency()` table when the store has counted it."""
    cols = ["framework", "suite", "amd_hardware", "nvidia_hardware", "alignment",
            "staleness_h", "amd_commit", "ref_commit", "amd_run_at", "ref_run_at", "denominator",
            "amd_passed", "amd_failed", "amd_skipped", "amd_missing", "nvidia_passed",
            "same_denominator_rate",
            "rate_lo", "rate_hi", "nvidia_rate", "gap", "amd_plain_rate", "nvidia_plain_rate",
            "amd_ran", "nvidia_ran", "amd_url"]
    if pairs.empty:
        return pd.DataFrame(columns=cols)
    if counts is None:
        counts = contingency(pairs, results)
    # each pair's sums over its counts, by the pair's position (0 where it has none), with
    # NumPy: a pandas grouping and a lookup per pair cost more than the rest
    n = counts["n"].to_numpy(np.int64)
    at = counts["pair"].to_numpy(np.int64)
    amd, ref = counts["amd"], counts["ref"]
    ref_ran = ref.isin(RAN).to_numpy(bool)
    amd_ok, ref_ok = (amd == "passed").to_numpy(bool), (ref == "passed").to_numpy(bool)

    def total(where: np.ndarray) -> np.ndarray:
        return np.bincount(at, weights=n * where, minlength=len(pairs)).astype(np.int64)

    d = total(ref_ran)
    amd_passed, nv_passed = total(ref_ran & amd_ok), total(ref_ran & ref_ok)
    amd_ran, amd_plain, ref_plain = total(amd.isin(RAN).to_numpy(bool)), total(amd_ok), \
        total(ref_ok)
    lo, hi = wilson_bounds(amd_passed, d)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(d > 0, amd_passed / d, np.nan)
        nv_rate = np.where(d > 0, nv_passed / d, np.nan)
        amd_plain_rate = np.where(amd_ran > 0, amd_plain / amd_ran, np.nan)
        nv_plain_rate = np.where(d > 0, ref_plain / d, np.nan)
    out = {c: pairs[c].tolist() for c in (
        "framework", "suite", "amd_hardware", "nvidia_hardware", "alignment", "staleness_h",
        "amd_commit", "ref_commit", "amd_run_at", "ref_run_at")}
    out.update(
        denominator=d, amd_passed=amd_passed,
        amd_failed=total(ref_ran & amd.isin(FAILED).to_numpy(bool)),
        amd_skipped=total(ref_ran & (amd == "skipped").to_numpy(bool)),
        amd_missing=total(ref_ran & amd.isna().to_numpy(bool)), nvidia_passed=nv_passed,
        same_denominator_rate=rate, rate_lo=lo, rate_hi=hi, nvidia_rate=nv_rate,
        gap=nv_rate - rate, amd_plain_rate=amd_plain_rate, nvidia_plain_rate=nv_plain_rate,
        amd_ran=amd_ran, nvidia_ran=d, amd_url=pairs["amd_url"].tolist())
    return pd.DataFrame(out, columns=cols)


def rollup(parity: pd.DataFrame) -> pd.DataFrame:
    """Pass-rate parity per framework × AMD hardware, summing the suites' counts."""
    if parity.empty:
        return parity
    keys = ["framework", "amd_hardware", "nvidia_hardware"]
    g = parity.groupby(keys, as_index=False).agg(
        suites=("suite", "nunique"), denominator=("denominator", "sum"),
        amd_passed=("amd_passed", "sum"), amd_failed=("amd_failed", "sum"),
        amd_skipped=("amd_skipped", "sum"), amd_missing=("amd_missing", "sum"),
        nvidia_passed=("nvidia_passed", "sum"), amd_run_at=("amd_run_at", "max"),
        staleness_h=("staleness_h", "max"))
    d = g["denominator"].where(g["denominator"] > 0)
    g["same_denominator_rate"] = g["amd_passed"] / d
    g["nvidia_rate"] = g["nvidia_passed"] / d
    g["gap"] = g["nvidia_rate"] - g["same_denominator_rate"]
    return g


QUADRANTS = ("both pass", "amd-only fail", "nvidia-only fail", "both fail", "amd-only skip",
             "nvidia-only skip", "amd missing", "other")


def quadrant(amd: str | None, ref: str | None) -> str:
    a_ok, r_ok = amd == "passed", ref == "passed"
    a_bad, r_bad = amd in FAILED, ref in FAILED
    if a_ok and r_ok:
        return "both pass"
    if a_bad and r_ok:
        return "amd-only fail"
    if a_ok and r_bad:
        return "nvidia-only fail"
    if a_bad and r_bad:
        return "both fail"
    if amd == "skipped" and ref in RAN:
        return "amd-only skip"
    if ref == "skipped" and amd in RAN:
        return "nvidia-only skip"
    if (amd is None or (isinstance(amd, float) and math.isnan(amd))) and ref in RAN:
        return "amd missing"
    return "other"


# each (AMD, reference) pair of outcome codes' quadrant, as a number in `QUADRANTS`: codes
# past the vocabulary are "other", and the last row and column are a side that did not run;
# and each quadrant's place in the quadrants' sorted order
_VOCAB = list(OUTCOMES) + ["other", None]
_QUADRANT_AT = np.array([[QUADRANTS.index(quadrant(a, r)) for r in _VOCAB] for a in _VOCAB])
_QUADRANT_RANK = np.argsort(np.argsort(np.array(QUADRANTS)))


def quadrants(amd: np.ndarray, ref: np.ndarray, absent: int) -> np.ndarray:
    """`quadrant` of each pair of outcome codes (`OUTCOMES` order, `absent` where a side did
    not run the test), through the table of every combination."""
    return np.array(QUADRANTS, dtype=object)[_quadrant_places(amd, ref, absent)]


def in_quadrants(amd: np.ndarray, ref: np.ndarray, absent: int, names) -> np.ndarray:
    """Whether each pair of outcome codes is in one of the quadrants named (`quadrants`'
    names tested as their places: a pair's tests by the hundred thousand)."""
    names = set(names)
    wanted = [i for i, q in enumerate(QUADRANTS) if q in names]
    return np.isin(_quadrant_places(amd, ref, absent), wanted)


def _quadrant_places(amd: np.ndarray, ref: np.ndarray, absent: int) -> np.ndarray:
    """Each pair of outcome codes' quadrant, as its place in `QUADRANTS`."""
    return _QUADRANT_AT[_vocab_at(amd, absent), _vocab_at(ref, absent)]


def _vocab_at(codes: np.ndarray, absent: int) -> np.ndarray:
    """Outcome codes as places in `_VOCAB`: past the vocabulary "other", `absent` last."""
    codes = np.asarray(codes, dtype=np.int64)
    return np.where(codes == absent, len(_VOCAB) - 1, np.minimum(codes, len(OUTCOMES)))


MATRIX_COLUMNS = ["framework", "suite", "amd_hardware", "nvidia_hardware", "parity_key",
                  "parity_id", "amd_outcome", "nvidia_outcome", "quadrant", "amd_message",
                  "nvidia_message", "amd_skip_category", "amd_commit", "amd_run_at"]


def matrix(pairs: pd.DataFrame, codes: pd.DataFrame, keys: pd.DataFrame,
           messages: pd.DataFrame, absent: int) -> pd.DataFrame:
    """`test_matrix` from the per-pair outcome codes (`tables.pair_tests`: pair, parity_id,
    amd, ref, amd_skip, ref_skip; `absent` where a side did not run the test), the tests'
    keys (parity_id, parity_key, and `key_rank` where the store ranked them) and the rows
    that carry a message (job_pk, parity_id, outcome, message): each side's message is that
    of its worst row with one, as `reduce_tests` picks it; the skip category is that of the
    row the outcome came from. The frame `test_matrix` makes of the raw rows, worked out on
    integers, each column taken once and in the final order: lanes of PyTorch's size give it
    600,000 rows, where each sort of texts or take of a text column costs tens to hundreds
    of milliseconds."""
    if pairs.empty or codes.empty:
        return pd.DataFrame(columns=MATRIX_COLUMNS)
    pairs = pairs.reset_index(drop=True)
    pair, pid = codes["pair"].to_numpy(np.int64), codes["parity_id"].to_numpy(np.int64)
    amd, ref = codes["amd"].to_numpy(np.int64), codes["ref"].to_numpy(np.int64)
    quad = _QUADRANT_AT[_vocab_at(amd, absent), _vocab_at(ref, absent)]
    if not keys["parity_id"].is_monotonic_increasing:
        keys = keys.sort_values("parity_id", kind="stable")
    at, hit = find(keys["parity_id"].to_numpy(np.int64), pid)
    key_at = np.where(hit, at, -1)
    if "key_rank" in keys:  # the store's ranks (of more keys than these), from 0
        rank = keys["key_rank"].to_numpy(np.int64)
        rank = rank - rank.min(initial=0)
    else:
        rank = np.empty(len(keys), np.int64)
        rank[keys["parity_key"].array.argsort(kind="stable")] = np.arange(len(keys))
    span = rank.max(initial=-1) + 2  # the ranks, and last a test without a key
    # by framework, AMD hardware, suite, quadrant and parity key (missing last), as
    # `sort_values` orders them, ties in the codes' order: one integer per row, sorted
    # stably (a sort by five keys cost several times more)
    lane = np.zeros(len(pairs), np.int64)  # each pair's place by the three, ties equal
    for c in ("framework", "amd_hardware", "suite"):
        lane = lane * (len(pairs) + 1) + _ranks(pairs[c])
    lane = np.unique(lane, return_inverse=True)[1].ravel()
    order = np.argsort((lane[pair] * len(QUADRANTS) + _QUADRANT_RANK[quad]) * span
                       + np.where(hit, rank[at] if len(rank) else 0, span - 1), kind="stable")
    said = _message_rows(pairs, messages, pair, pid)
    pair, pid, key_at, amd, ref = (x[order] for x in (pair, pid, key_at, amd, ref))
    out = {c: pairs[c].array.take(pair) for c in ("framework", "suite", "amd_hardware",
                                                  "nvidia_hardware")}
    out["parity_key"] = keys["parity_key"].array.take(key_at, allow_fill=True)
    out["parity_id"] = pid
    out["amd_outcome"] = _named(amd, amd, OUTCOMES, absent)
    out["nvidia_outcome"] = _named(ref, ref, OUTCOMES, absent)
    out["quadrant"] = pd.array(list(QUADRANTS), dtype="str").take(quad[order])
    for side, name in (("amd", "amd_message"), ("ref", "nvidia_message")):
        out[name] = messages["message"].array.take(said[side][order], allow_fill=True)
    out["amd_skip_category"] = _named(codes["amd_skip"].to_numpy()[order], amd, SKIPS, absent)
    for c in ("amd_commit", "amd_run_at"):
        out[c] = pairs[c].array.take(pair)
    return pd.DataFrame(out, columns=MATRIX_COLUMNS)


def _ranks(column: pd.Series) -> np.ndarray:
    """Each value's place among the column's values in sorted order, missing last."""
    codes = pd.factorize(column, sort=True)[0]
    return np.where(codes < 0, codes.max(initial=0) + 1, codes)


def _message_rows(pairs: pd.DataFrame, messages: pd.DataFrame, pair: np.ndarray,
                  pid: np.ndarray) -> dict[str, np.ndarray]:
    """Per side ("amd", "ref") and matrix row (its `pair` and parity id `pid`): the row of
    `messages` that gives its message, the worst row with one among the pair's jobs of that
    side (ties: the first read), else -1. Each pair's tests are found by a sorted search."""
    out = {side: np.full(len(pair), -1, np.int64) for side in ("amd", "ref")}
    if not len(messages) or not len(pair):
        return out
    job = messages["job_pk"].to_numpy(np.int64)
    tests = messages["parity_id"].to_numpy(np.int64)
    worst = np.argsort(messages["outcome"].map(RANK).fillna(len(OUTCOMES)).to_numpy(np.int64),
                       kind="stable")  # the worst first, ties in the order read
    job, tests = job[worst], tests[worst]
    # the rows by pair, then parity id (as `tables.pair_tests` gives them, else sorted so)
    step = np.diff(pair)
    in_order = (step >= 0).all() and (np.diff(pid)[step == 0] > 0).all()
    by_test = np.arange(len(pair)) if in_order else np.lexsort((pid, pair))
    for rows in np.split(by_test, np.flatnonzero(np.diff(pair[by_test])) + 1):
        for side, where in out.items():  # (`rows`: one pair's, by parity id)
            jobs = np.asarray(pairs[f"{side}_jobs"].iloc[pair[rows[0]]], np.int64)
            mine = np.flatnonzero(np.isin(job, jobs))
            at, hit = find(pid[rows], tests[mine])
            row, mine = rows[at[hit]], mine[hit]
            first = np.unique(row, return_index=True)[1]  # each row's worst message
            where[row[first]] = worst[mine[first]]
    return out


def _named(codes: np.ndarray, outcome: np.ndarray, vocabulary: tuple, absent: int):
    """Codes as names (`names`), missing where the side did not run the test (`outcome` is
    `absent`), as a text array taken from the vocabulary: converting 100,000 Python strings
    costs more."""
    table = pd.array(list(vocabulary) + ["other", None], dtype="str")
    at = np.minimum(np.asarray(codes, np.int64), len(vocabulary))
    return table.take(np.where(np.asarray(outcome) == absent, len(vocabulary) + 1, at))


def outcome_categories(codes: np.ndarray) -> pd.Categorical:
    """Outcome codes (`vectors.OUTCOMES`) as a categorical of their names, "other" past the
    vocabulary, as `vectors.names` gives them but without a Python string per row (a
    history has hundreds of thousands)."""
    names = pd.Index(list(OUTCOMES) + ["other"], dtype="str")
    return pd.Categorical.from_codes(np.minimum(np.asarray(codes, np.int64), len(OUTCOMES)),
                                     names)


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with its categorical columns (a history's texts, `frames._history`) as plain
    columns of their categories' type, as the views show them."""
    for c in frame.columns:
        if isinstance(frame[c].dtype, pd.CategoricalDtype):
            frame[c] = frame[c].astype(frame[c].cat.categories.dtype)
    return frame


def test_matrix(pairs: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """Each test of each aligned pair with both outcomes and its quadrant, from the raw
    `results` of the pairs' jobs: what `matrix` gives from the store's per-job vectors (the
    views' way) must equal it."""
    if pairs.empty:
        return pd.DataFrame(columns=MATRIX_COLUMNS)
    wide = _side_outcomes(pairs, results)
    meta = pairs[["framework", "suite", "amd_hardware", "nvidia_hardware", "amd_commit",
                  "amd_run_at"]].reset_index(drop=True)
    wide = wide.merge(meta, left_on="pair", right_index=True)
    wide["quadrant"] = [quadrant(None if pd.isna(a) else a, None if pd.isna(r) else r)
                        for a, r in zip(wide["amd_outcome"], wide["ref_outcome"])]
    wide = wide.rename(columns={"ref_outcome": "nvidia_outcome", "ref_message": "nvidia_message"})
    order = np.lexsort([_ranks(wide[c]) for c in ("parity_key", "quadrant", "suite",
                                                  "amd_hardware", "framework")])
    return wide[MATRIX_COLUMNS].take(order).reset_index(drop=True)


class _Ran:
    """The rows of an outcome history where the test ran, as arrays grouped by `keys` (groups
    numbered in the order of their first run) and time-ordered within each group (stable):
    `rows` (positions in the history), `group`, `f` (it failed), `starts` (where each group
    begins), `sizes` and `pos` (each row's place in its group). Integer work instead of
    grouping the text columns: a 60-day history of thousands of failing tests is hundreds of
    thousands of rows."""

    def __init__(self, history: pd.DataFrame, keys: list[str]):
        ran = np.flatnonzero(history["outcome"].isin(RAN).to_numpy())
        ran = ran[np.argsort(history["run_at"].to_numpy()[ran], kind="stable")]
        group = pd.factorize(key_codes(*(history[k] for k in keys))[ran])[0]  # by first run
        order = np.argsort(group, kind="stable")
        self.rows, self.group = ran[order], group[order]
        self.f = history["outcome"].isin(FAILED).to_numpy()[self.rows]
        self.starts = np.flatnonzero(np.r_[True, self.group[1:] != self.group[:-1]]) \
            if len(self.rows) else np.empty(0, np.int64)
        self.sizes = np.diff(np.r_[self.starts, len(self.rows)])
        self.ends = self.starts + self.sizes - 1
        self.pos = np.arange(len(self.rows)) - np.repeat(self.starts, self.sizes)

    def __len__(self) -> int:
        return len(self.starts)

    def last(self, where: np.ndarray) -> np.ndarray:
        """Per group, the position (in the arrays) of its last row where `where` holds, or
        -1."""
        at = np.where(where, np.arange(len(where)), -1)
        return np.maximum.reduceat(at, self.starts)  # (the callers have groups)

    def last_value(self, history: pd.DataFrame, name: str) -> pd.Series:
        """Per group, the last value of a column that is there (as pandas' `last`), else
        missing; read for those rows only (the texts are what costs)."""
        col = history[name]
        at = self.last(col.notna().to_numpy()[self.rows])
        values = col.iloc[self.rows[np.maximum(at, 0)]].reset_index(drop=True)
        return values.where(pd.Series(at >= 0), None) if (at < 0).any() else values

    def firsts(self, history: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
        """Each group's key values."""
        return history[keys].iloc[self.rows[self.starts]].reset_index(drop=True)


def streaks(history: pd.DataFrame) -> pd.DataFrame:
    """Per (framework, hardware, parity_id) from a time-ordered outcome history (columns
    framework, hardware, parity_id, parity_key, run_at, outcome, message): the current run of
    consecutive failures, when it started, and the last message; `passing` is the current run
    of consecutive passes (the explicit passes an alert needs before it resolves)."""
    cols = ["framework", "hardware", "parity_id", "parity_key", "streak", "first_failing",
            "last_run_at", "last_message", "runs", "failures", "passing"]
    keys = ["framework", "hardware", "parity_id"]
    if history.empty:
        return pd.DataFrame(columns=cols)
    r = _Ran(history, keys)
    if not len(r):
        return pd.DataFrame(columns=cols)
    last_ok, last_bad = r.last(~r.f), r.last(r.f)
    streak = r.ends - np.where(last_ok >= 0, last_ok, r.starts - 1)
    run_at = history["run_at"].to_numpy()[r.rows]
    out = r.firsts(history, keys)
    out["parity_key"] = r.last_value(history, "parity_key")
    out["streak"] = streak.astype(int)
    out["first_failing"] = pd.Series(run_at[np.minimum(r.ends + 1 - streak, r.ends)]) \
        .where(pd.Series(streak > 0))
    out["last_run_at"] = run_at[r.ends]
    out["last_message"] = r.last_value(history, "message")
    out["runs"] = r.sizes.astype(int)
    out["failures"] = np.add.reduceat(r.f.astype(np.int64), r.starts).astype(int)
    out["passing"] = (r.ends - np.where(last_bad >= 0, last_bad, r.starts - 1)).astype(int)
    return _plain(out[cols])


def run_streaks(codes: np.ndarray) -> dict[str, np.ndarray]:
    """What `streaks` counts, for many tests of one lane at once: `codes` is runs × tests,
    the rows in time order, each cell the test's worst outcome code in that run
    (`vectors.OUTCOMES`; any code past them where it did not run). Per test (column):
    `runs` and `failures` among the runs where it ran (passed, failed or errored),
    `streak` and `passing` (the trailing failures and passes among them), and the rows of
    the streak's first run (`first`, the number of runs where there is no streak), of the
    last run it ran in (`last`), of its last failure (`last_bad`) and of its last pass
    (`last_ok`), -1 where none."""
    ran = codes <= RANK["passed"]  # error, failed, passed: `RAN`
    bad = codes <= RANK["failed"]  # error, failed: `FAILED`
    row = np.arange(codes.shape[0])[:, None]
    last_ok = np.where(ran & ~bad, row, -1).max(axis=0, initial=-1)
    last_bad = np.where(bad, row, -1).max(axis=0, initial=-1)
    streak = ran & (row > last_ok)
    return {"runs": ran.sum(axis=0), "failures": bad.sum(axis=0),
            "streak": streak.sum(axis=0), "passing": (ran & (row > last_bad)).sum(axis=0),
            "first": np.where(streak, row, codes.shape[0]).min(axis=0, initial=codes.shape[0]),
            "last": np.where(ran, row, -1).max(axis=0, initial=-1), "last_bad": last_bad,
            "last_ok": last_ok}


def run_counts(codes: np.ndarray) -> np.ndarray:
    """`run_streaks`' `runs` alone, per column of `codes`."""
    return (codes <= RANK["passed"]).sum(axis=0)


def run_flaky(codes: np.ndarray, reruns: np.ndarray, commit: np.ndarray) -> np.ndarray:
    """Per column of `codes` (as `run_streaks` takes them), whether `flakiness` finds the
    test flaky: it passed in a run where one of its rows was rerun (`reruns`, runs × tests,
    non-zero there), or it both passed and failed on one commit (`commit`: each run's
    commit as an integer, -1 where the run has none)."""
    ran, bad = codes <= RANK["passed"], codes <= RANK["failed"]
    return _rerun_passes(codes, reruns).any(axis=0) | (_run_mixed(ran, bad, commit) > 0)


def run_flakiness(codes: np.ndarray, reruns: np.ndarray, commit: np.ndarray
                  ) -> dict[str, np.ndarray]:
    """What `flakiness` counts, for many tests of one lane at once (`codes`, `reruns` and
    `commit` as `run_flaky` takes them). Per test (column): `runs` and `failures` among the
    runs it ran in, `rerun_passes` (runs it passed in with a row rerun), `mixed` (commits
    it both passed and failed on), `flips` (changes between failing and passing from one
    run it ran in to the next) and the rows of its first and last run (`first`, the number
    of runs where it never ran; `last`, -1 there)."""
    ran, bad = codes <= RANK["passed"], codes <= RANK["failed"]
    row = np.arange(codes.shape[0])[:, None]
    seen = np.maximum.accumulate(np.where(ran, row, -1), axis=0)  # its last run up to here
    before = np.vstack([np.full((1, codes.shape[1]), -1), seen[:-1]])  # ... before this row
    was_bad = np.take_along_axis(bad, np.maximum(before, 0), axis=0)
    return {"runs": ran.sum(axis=0), "failures": bad.sum(axis=0),
            "rerun_passes": _rerun_passes(codes, reruns).sum(axis=0),
            "mixed": _run_mixed(ran, bad, commit),
            "flips": (ran & (before >= 0) & (was_bad != bad)).sum(axis=0),
            "first": np.where(ran, row, codes.shape[0]).min(axis=0, initial=codes.shape[0]),
            "last": seen[-1] if len(seen) else np.full(codes.shape[1], -1)}


def _rerun_passes(codes: np.ndarray, reruns: np.ndarray) -> np.ndarray:
    """The runs × tests cells where the test passed with one of its rows rerun."""
    return (codes == RANK["passed"]) & (reruns > 0)


def _run_mixed(ran: np.ndarray, bad: np.ndarray, commit: np.ndarray) -> np.ndarray:
    """Per column of runs × tests cells, how many commits (`commit`: each row's, as an
    integer, -1 where none) it both failed (`bad`) and passed (`ran` and not `bad`) on."""
    # one run holds one outcome per test: only the runs of a commit that ran more than once
    which, runs = np.unique(commit, return_inverse=True, return_counts=True)[1:]
    again = (runs[which] > 1) & (commit >= 0)
    if not again.any():
        return np.zeros(ran.shape[1], np.int64)
    number = pd.factorize(commit[again])[0]
    on = (number[None, :] == np.arange(number.max() + 1)[:, None]).astype(np.float32)
    failed_on = on @ bad[again].astype(np.float32) > 0
    passed_on = on @ (ran & ~bad)[again].astype(np.float32) > 0
    return (failed_on & passed_on).sum(axis=0)


def mixed_commits(group: np.ndarray, commit: np.ndarray, failed: np.ndarray,
                  groups: int) -> np.ndarray:
    """Per group (0 to `groups` - 1), how many commits it both passed and failed on, from one
    row per run: its group, its commit's number (-1: none, which counts for none) and
    whether it failed. (`flakiness` of a history; the views count from runs × tests arrays,
    `_run_mixed`.)"""
    known = commit >= 0
    group, commit, failed = group[known], commit[known], failed[known]
    place = key_codes(group, commit)  # each (group, commit) pair's number
    size = int(place.max(initial=-1)) + 1
    failed_on, passed_on = np.zeros(size, bool), np.zeros(size, bool)
    failed_on[place[failed]] = True
    passed_on[place[~failed]] = True
    group_of = np.zeros(size, np.int64)
    group_of[place] = group
    return np.bincount(group_of[failed_on & passed_on], minlength=groups)


FLAKY_COLUMNS = ["framework", "parity_key", "parity_id", "vendor", "hardware", "label", "runs",
                 "failures", "rerun_passes", "same_commit_mixed", "flip_rate", "fail_rate",
                 "fail_lo", "fail_hi", "last_seen"]


def flakiness(history: pd.DataFrame) -> pd.DataFrame:
    """Vendor-aware flaky tests from outcome histories (columns framework, vendor, hardware,
    parity_id, parity_key, commit, run_at, outcome, reruns): per test and hardware, what
    `flaky_table` makes of its counts."""
    keys = ["framework", "vendor", "hardware", "parity_id"]
    if history.empty:
        return pd.DataFrame(columns=FLAKY_COLUMNS)
    r = _Ran(history, keys)
    if not len(r):
        return pd.DataFrame(columns=FLAKY_COLUMNS)
    f = r.f
    flip = np.r_[False, f[1:] != f[:-1]] & (r.pos > 0)
    reruns = pd.to_numeric(history["reruns"]).fillna(0).to_numpy()[r.rows]
    rp = (history["outcome"] == "passed").to_numpy()[r.rows] & (reruns > 0)
    total = lambda v: np.add.reduceat(v.astype(np.int64), r.starts)  # noqa: E731
    out = r.firsts(history, keys)
    out["parity_key"] = r.last_value(history, "parity_key")
    out["runs"], out["failures"] = r.sizes, total(f)
    out["rerun_passes"], out["flips"] = total(rp), total(flip)
    run_at = history["run_at"].to_numpy()
    out["first_seen"], out["last_seen"] = run_at[r.rows[r.starts]], run_at[r.rows[r.ends]]
    commit = np.asarray(history["commit"].factorize()[0])[r.rows]  # a missing commit is -1
    out["same_commit_mixed"] = mixed_commits(r.group, commit, f, len(r)).astype(int)
    return flaky_table(_plain(out))


def flaky_table(counts: pd.DataFrame) -> pd.DataFrame:
    """The flaky tests among per-test counts (columns framework, vendor, hardware, parity_id,
    parity_key, runs, failures, rerun_passes, flips, same_commit_mixed, first_seen,
    last_seen; one row per test and hardware).

    Flaky means both outcomes on the same code: failed then passed on a rerun, or passed and
    failed on the same commit. The flip rate (outcome changes / (runs - 1)) ranks them, then
    rerun passes and runs; among equals, the test seen first, then by framework, hardware
    and key. A test flaky on both vendors is `shared`, else `amd-only` or `nvidia-only`."""
    out = counts[(counts["rerun_passes"] > 0) | (counts["same_commit_mixed"] > 0)] \
        .reset_index(drop=True)
    if out.empty:
        return pd.DataFrame(columns=FLAKY_COLUMNS)
    runs = out["runs"].astype(int)
    out["flip_rate"] = (out["flips"] / (runs - 1).where(runs > 1)).fillna(0.0)
    out["fail_rate"] = out["failures"] / runs
    out["fail_lo"], out["fail_hi"] = wilson_bounds(out["failures"].to_numpy(dtype=float),
                                                   runs.to_numpy(dtype=float))
    for c in ("runs", "failures", "rerun_passes", "same_commit_mixed"):
        out[c] = out[c].astype(int)
    # which vendors a test is flaky on, per (framework, test), counted as integers
    test = key_codes(out["framework"], out["parity_id"])
    vendor = out["vendor"].to_numpy(dtype=object)
    has = {v: np.bincount(test, weights=vendor == v)[test] > 0 for v in ("amd", "nvidia")}
    other = np.bincount(test, weights=~np.isin(vendor, ["amd", "nvidia"]))[test] > 0
    out["label"] = np.select(
        [has["amd"] & has["nvidia"], has["amd"] & ~other, has["nvidia"] & ~other],
        ["shared", "amd-only", "nvidia-only"], "other")
    out = out.sort_values(["flip_rate", "rerun_passes", "runs", "first_seen", "framework",
                           "hardware", "vendor", "parity_key"],
                          ascending=[False, False, False, True, True, True, True, True],
                          kind="stable")
    return out[FLAKY_COLUMNS].reset_index(drop=True)
