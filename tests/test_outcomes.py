"""The pure outcome-parity core on small frames counted by hand: lane runs, cross-vendor
alignment, the same-denominator pass rate, the test matrix's quadrants, failure and pass
streaks, and vendor-aware flakiness. No store: these are the figures every view publishes."""
from __future__ import annotations

import math
from datetime import datetime, timedelta

import numpy as np
import pandas as pd
import pytest

from parity.dashboard import outcomes
from parity.dashboard.groups import first_rows, key_codes, members
from parity.dashboard.intervals import wilson
from parity.db import vectors as vec

T0 = datetime(2026, 11, 1, 2, 0)


def _job(job_pk, run_pk, vendor, hardware, commit, hours, suite="kernels", total=10,
         framework="vllm", attempt=None):
    row = dict(job_pk=job_pk, run_pk=run_pk, vendor=vendor, hardware=hardware, commit=commit,
               run_at=T0 + timedelta(hours=hours), suite=suite, total=total,
               framework=framework, run_url=f"https://ci.example/{run_pk}")
    if attempt is not None:
        row["attempt"] = attempt
    return row


def _ref(hw: str, present: set[str]) -> str | None:
    return "h100" if "h100" in present else None


# -- lane runs and alignment --------------------------------------------------------------------

def test_lane_runs_fold_jobs_and_order_attempts():
    jobs = pd.DataFrame([
        _job(3, 10, "amd", "mi300x", "c1", 1, total=5, attempt=1),
        _job(1, 10, "amd", "mi300x", "c1", 0, total=7, attempt=1),
        # the retried attempt of the same build starts at the same time but comes first
        _job(9, 11, "amd", "mi300x", "c1", 0, total=4, attempt=0),
    ])
    runs = outcomes.lane_runs(jobs)
    assert list(runs["run_pk"]) == [11, 10]
    first = runs.iloc[1]
    assert first["job_pks"] == (1, 3) and first["total"] == 12
    assert first["run_at"] == T0 and first["commit"] == "c1"
    assert first["run_url"] == "https://ci.example/10"
    assert list(runs.columns) == outcomes.LANE + ["vendor", "run_pk", "commit", "run_at",
                                                  "job_pks", "total", "run_url"]
    # without attempts: time, then run
    plain = outcomes.lane_runs(jobs.drop(columns="attempt"))
    assert list(plain["run_pk"]) == [10, 11]
    assert list(outcomes.lane_runs(jobs.iloc[0:0]).columns)[-1] == "run_url"
    # a job without a suite is still a lane run
    blank = outcomes.lane_runs(pd.DataFrame([_job(1, 10, "amd", "mi300x", "c1", 0, suite=None)]))
    assert list(blank["run_pk"]) == [10] and blank.iloc[0]["job_pks"] == (1,)


def test_lane_runs_take_the_first_known_commit_and_link_and_the_earliest_time():
    jobs = pd.DataFrame([
        _job(2, 10, "amd", "mi300x", None, 5, total=3),
        _job(1, 10, "amd", "mi300x", "c1", 4, total=4),
        _job(3, 10, "amd", "mi300x", "c2", 6, total=5),
        _job(4, 11, "amd", "mi300x", "c3", 1),
    ])
    jobs.loc[0, "run_url"] = None
    jobs.loc[3, "run_at"] = pd.NaT  # an undated lane run comes last
    runs = outcomes.lane_runs(jobs)
    assert list(runs["run_pk"]) == [10, 11]
    first = runs.iloc[0]
    # the first job (in the frame's order) that has one; the earliest time of any job
    assert (first["commit"], first["run_url"], first["run_at"]) == (
        "c1", "https://ci.example/10", T0 + timedelta(hours=4))
    assert first["job_pks"] == (1, 2, 3) and first["total"] == 12
    assert pd.isna(runs.iloc[1]["run_at"])
    # a count that is missing adds nothing
    assert outcomes.lane_runs(jobs.assign(total=[1.0, None, 2.0, None]))["total"].tolist() == [
        3.0, 0.0]


def test_the_latest_alignment_is_the_last_run_of_each_lane_in_the_trend():
    """`align(latest=True)` pairs each AMD lane's latest run only, from the runs it can pair
    (`_latest_candidates`); whatever it leaves out, its rows are the trend's last of each
    lane, over lanes, attempts, repeated commits, commits and times that are missing, and
    reference runs near and far."""
    rng = np.random.default_rng(7)
    rows, job = [], 0
    for run in range(1, 160):
        vendor = ["amd", "nvidia", "intel"][rng.integers(0, 3)]
        hardware = {"amd": ["mi300x", "mi355x"], "nvidia": ["h100", "b200"],
                    "intel": ["gaudi3"]}[vendor][rng.integers(0, 1 + (vendor != "intel"))]
        commit = [None, "", f"c{rng.integers(0, 25)}"][rng.integers(0, 3) if run % 4 else 2]
        hours = float(rng.integers(0, 400)) + rng.integers(0, 2) / 2
        attempt = int(rng.integers(0, 2))
        for suite in rng.choice(["kernels", "models", "lora"], rng.integers(1, 3), False):
            job += 1
            rows.append(_job(job, run, vendor, hardware, commit, hours, suite=str(suite),
                             attempt=attempt))
    jobs = pd.DataFrame(rows)
    jobs.loc[jobs["run_pk"] % 17 == 0, "run_at"] = pd.NaT
    jobs.loc[jobs["run_pk"] % 23 == 0, "suite"] = None

    def ref(hw, present):
        return {"mi300x": "h100", "mi355x": "b200"}.get(hw) if len(present) else None
    seen = set()
    for hours in (1, 72, 1000):
        trend = outcomes.align(jobs, ref, latest=False, window_hours=hours)
        last = trend.groupby(["framework", "suite", "amd_hardware"], sort=False).tail(1)
        latest = outcomes.align(jobs, ref, window_hours=hours)
        assert len(latest) == 6  # two AMD hardware x three suites
        # (a column of missing times is typed by pandas' inference from the rows it holds)
        pd.testing.assert_frame_equal(latest, last.reset_index(drop=True), check_dtype=False)
        seen |= set(latest["alignment"])
    assert seen == {"same-commit", "nearest", "none"}


def _alignment_jobs() -> pd.DataFrame:
    return pd.DataFrame([
        _job(1, 1, "amd", "mi300x", "c1", 0),
        _job(2, 2, "amd", "mi300x", "c2", 24),
        _job(3, 3, "nvidia", "h100", "c1", 1),
        _job(4, 4, "nvidia", "h100", "c1", 2),     # a second run of c1: the later one counts
        _job(5, 5, "nvidia", "h100", "c3", 30),
        _job(6, 6, "nvidia", "h100", "c2", 0, suite="other"),  # same commit, other suite
        _job(7, 7, "nvidia", "b200", "c2", 24),    # not the reference hardware
    ])


def test_align_same_commit_then_nearest_within_the_window():
    pairs = outcomes.align(_alignment_jobs(), _ref, latest=False)
    assert list(pairs["amd_run_pk"]) == [1, 2]
    same, near = pairs.iloc[0], pairs.iloc[1]
    assert (same["alignment"], same["ref_run_pk"], same["ref_jobs"]) == ("same-commit", 4, (4,))
    assert same["staleness_h"] == 2.0 and same["nvidia_hardware"] == "h100"
    assert (near["alignment"], near["ref_run_pk"], near["staleness_h"]) == ("nearest", 5, 6.0)
    assert near["amd_jobs"] == (2,) and near["amd_url"] == "https://ci.example/2"
    asked = []
    latest = outcomes.align(_alignment_jobs(), lambda hw, present: asked.append(
        (hw, set(present))) or _ref(hw, present))
    assert list(latest["amd_run_pk"]) == [2]
    assert asked == [("mi300x", {"h100", "b200"})]  # the NVIDIA hardware that ran, only
    assert list(latest.columns) == outcomes.ALIGN_COLUMNS
    # the default window is 72 hours, inclusive
    far = pd.DataFrame([_job(1, 1, "amd", "mi300x", "c1", 72), _job(2, 2, "nvidia", "h100", "c0", 0)])
    assert outcomes.align(far, _ref).iloc[0]["alignment"] == "nearest"
    far.loc[0, "run_at"] += timedelta(minutes=30)
    assert outcomes.align(far, _ref).iloc[0]["alignment"] == "none"
    # lanes come out in order, whatever the order of the jobs
    two = pd.DataFrame([_job(5, 5, "amd", "mi355x", "c1", 0), _job(1, 1, "amd", "mi300x", "c1", 0),
                        _job(3, 3, "amd", "mi300x", "c1", 0, suite="a")])
    assert list(zip(*[outcomes.align(two, _ref)[c] for c in ("suite", "amd_hardware")])) == [
        ("a", "mi300x"), ("kernels", "mi300x"), ("kernels", "mi355x")]


def test_align_without_a_commit_or_a_time_and_between_equally_near_runs():
    jobs = pd.DataFrame([
        _job(1, 1, "amd", "mi300x", None, 10),
        _job(2, 2, "nvidia", "h100", None, 8),     # no commit: never the same commit
        _job(3, 3, "nvidia", "h100", "c9", 12),    # as near as run 2, later: run 2 wins
        _job(4, 4, "nvidia", "h100", "c9", 0),
    ])
    row = outcomes.align(jobs, _ref).iloc[0]
    assert (row["alignment"], row["ref_run_pk"], row["staleness_h"]) == ("nearest", 2, 2.0)
    assert (pd.isna(row["ref_commit"]), row["ref_run_at"], row["ref_jobs"]) == (
        True, T0 + timedelta(hours=8), (2,))
    # a reference run without a time is never the nearest
    undated = jobs.assign(run_at=[T0 + timedelta(hours=10), pd.NaT, pd.NaT, pd.NaT])
    row = outcomes.align(undated, _ref).iloc[0]
    assert (row["alignment"], row["ref_run_pk"]) == ("none", None)
    # ... and a dated one among undated ones is still the nearest
    some = jobs.assign(run_at=[T0 + timedelta(hours=10), pd.NaT, T0 + timedelta(hours=13),
                               pd.NaT])
    row = outcomes.align(some, _ref).iloc[0]
    assert (row["alignment"], row["ref_run_pk"], row["staleness_h"]) == ("nearest", 3, 3.0)
    # an AMD lane without a suite has no lane to pair (as grouping by lane drops it)
    assert outcomes.align(jobs.assign(suite=[None, "kernels", "kernels", "kernels"]),
                          _ref).empty


def test_a_lane_whose_reference_ran_other_suites_only_has_no_reference():
    """The reference hardware ran, on the same commit, but only other suites: the AMD lane
    is not paired with any of them."""
    jobs = pd.DataFrame([_job(1, 1, "amd", "mi300x", "c1", 0, suite="lora"),
                         _job(2, 2, "nvidia", "h100", "c1", 0, suite="kernels"),
                         _job(3, 3, "nvidia", "h100", "c1", 1, suite="models")])
    row = outcomes.align(jobs, _ref).iloc[0]
    assert (row["alignment"], row["nvidia_hardware"], row["ref_jobs"]) == ("none", "h100", ())


def test_align_window_is_inclusive_and_nothing_outside_it():
    on_edge = outcomes.align(_alignment_jobs(), _ref, window_hours=6.0).iloc[0]
    assert on_edge["alignment"] == "nearest" and on_edge["ref_run_pk"] == 5
    outside = outcomes.align(_alignment_jobs(), _ref, window_hours=5.99).iloc[0]
    assert outside["alignment"] == "none" and outside["ref_run_pk"] is None
    assert outside["ref_jobs"] == () and math.isnan(outside["staleness_h"])
    # a run without a commit never matches by commit, and no reference at all is "none"
    jobs = _alignment_jobs()
    jobs.loc[jobs["job_pk"] == 2, "commit"] = ""
    jobs.loc[jobs["job_pk"] == 5, "commit"] = ""
    blank = outcomes.align(jobs, _ref, window_hours=1).iloc[0]
    assert blank["alignment"] == "none"
    alone = outcomes.align(jobs[jobs["vendor"] == "amd"], _ref).iloc[0]
    assert (alone["alignment"], alone["nvidia_hardware"]) == ("none", None)


# -- the same-denominator pass rate -------------------------------------------------------------

def _results(rows) -> pd.DataFrame:
    return pd.DataFrame([dict(job_pk=j, parity_id=t, parity_key=f"tests.t::test_{t}",
                              outcome=o, rerun_count=r, message=m, skip_category=s)
                         for j, t, o, r, m, s in rows])


def _pairs() -> pd.DataFrame:
    return pd.DataFrame([
        dict(framework="vllm", suite="kernels", amd_hardware="mi300x", nvidia_hardware="h100",
             alignment="same-commit", staleness_h=1.0, amd_commit="c1", ref_commit="c1",
             amd_run_at=T0, ref_run_at=T0, amd_jobs=(1, 2), ref_jobs=(3,), amd_url="u1"),
        dict(framework="vllm", suite="lora", amd_hardware="mi300x", nvidia_hardware="h100",
             alignment="nearest", staleness_h=5.0, amd_commit="c1", ref_commit="c0",
             amd_run_at=T0 + timedelta(hours=3), ref_run_at=T0, amd_jobs=(5,), ref_jobs=(6,),
             amd_url="u2"),
    ])


# (job, test, outcome, reruns, message, skip category); jobs 1 and 2 are two AMD shards
RESULTS = [
    (3, 1, "passed", 0, None, None), (1, 1, "passed", 0, None, None),
    (3, 2, "passed", 0, None, None), (1, 2, "passed", 0, None, None),
    (2, 2, "failed", 1, "boom", None),                       # worst shard wins: failed
    (3, 3, "passed", 0, None, None), (1, 3, "skipped", 0, "no rocm", "vendor_amd"),
    (3, 4, "failed", 0, "cuda", None), (1, 4, "passed", 0, None, None),
    (3, 5, "passed", 0, None, None),                          # missing on AMD
    (3, 6, "skipped", 0, None, None), (1, 6, "passed", 0, None, None),  # not ran on reference
    (1, 7, "passed", 0, None, None),                          # AMD only
    (3, 8, "passed", 0, None, None), (2, 8, "error", 0, "segfault", None),
]


def test_same_denominator_rate_by_hand():
    parity = outcomes.pass_rate_parity(_pairs(), _results(RESULTS))
    p = parity.iloc[0]
    # the reference ran 1, 2, 3, 4, 5 and 8: the denominator
    assert p["denominator"] == 6
    assert (p["amd_passed"], p["amd_failed"], p["amd_skipped"], p["amd_missing"]) == (2, 2, 1, 1)
    assert p["nvidia_passed"] == 5
    assert p["same_denominator_rate"] == pytest.approx(2 / 6)
    assert p["nvidia_rate"] == pytest.approx(5 / 6)
    assert p["gap"] == pytest.approx(5 / 6 - 2 / 6)
    assert (p["rate_lo"], p["rate_hi"]) == pytest.approx(wilson(2, 6))
    # plain rates: each side's passes over what it ran (AMD ran 1, 2, 4, 6, 7, 8)
    assert p["amd_ran"] == 6 and p["nvidia_ran"] == 6
    assert p["amd_plain_rate"] == pytest.approx(4 / 6)
    assert p["nvidia_plain_rate"] == pytest.approx(5 / 6)
    assert (p["alignment"], p["amd_url"], p["staleness_h"]) == ("same-commit", "u1", 1.0)
    # a pair without results: zero counts, no rate
    empty = parity.iloc[1]
    assert empty["denominator"] == 0 and empty["amd_passed"] == 0
    assert math.isnan(empty["same_denominator_rate"]) and math.isnan(empty["gap"])
    assert math.isnan(empty["amd_plain_rate"]) and math.isnan(empty["nvidia_plain_rate"])
    # the same figures from the contingency table the store counts
    counts = outcomes.contingency(_pairs(), _results(RESULTS))
    again = outcomes.pass_rate_parity(_pairs(), counts=counts)
    pd.testing.assert_frame_equal(parity, again)
    assert outcomes.pass_rate_parity(_pairs().iloc[0:0], _results(RESULTS)).empty


def test_contingency_counts_each_pair_of_outcomes():
    c = outcomes.contingency(_pairs(), _results(RESULTS))
    side = lambda v: None if pd.isna(v) else v  # noqa: E731 - a side that did not run it
    got = {(side(a), side(r)): n for a, r, n in zip(c["amd"], c["ref"], c["n"])}
    assert got == {("passed", "passed"): 1, ("failed", "passed"): 1, ("skipped", "passed"): 1,
                   ("passed", "failed"): 1, (None, "passed"): 1, ("passed", "skipped"): 1,
                   ("passed", None): 1, ("error", "passed"): 1}
    assert set(c["pair"]) == {0}
    none = outcomes.contingency(_pairs(), _results(RESULTS).iloc[0:0])
    assert none.empty and list(none.columns) == ["pair", "amd", "ref", "n"]


def test_reduce_tests_keeps_the_worst_outcome_and_any_rerun():
    r = _results([(1, 1, "passed", 0, None, None), (2, 1, "error", 0, "e", None),
                  (1, 2, "skipped", 0, "s", "hardware"), (2, 2, "xfailed", 2, "x", None),
                  (1, 3, "weird", 0, "w", None), (2, 3, "skipped", 0, "s", None)])
    out = outcomes.reduce_tests(r, []).set_index("parity_id")
    assert out.loc[1, "outcome"] == "error" and out.loc[1, "message"] == "e"
    assert out.loc[2, "outcome"] == "xfailed" and out.loc[2, "reruns"] == 2
    assert out.loc[3, "outcome"] == "skipped"  # an unknown outcome ranks last
    assert outcomes.reduce_tests(r.iloc[0:0], ["pair"]).columns[0] == "pair"


def test_rollup_sums_suites():
    parity = outcomes.pass_rate_parity(_pairs(), _results(RESULTS + [
        (6, 1, "passed", 0, None, None), (5, 1, "failed", 0, None, None),
        (6, 2, "passed", 0, None, None), (5, 2, "passed", 0, None, None)]))
    rolled = outcomes.rollup(parity)
    assert list(rolled.columns[:3]) == ["framework", "amd_hardware", "nvidia_hardware"]
    assert list(rolled.index) == [0]
    g = rolled.iloc[0]
    assert (g["suites"], g["denominator"], g["amd_passed"], g["amd_failed"]) == (2, 8, 3, 3)
    assert g["same_denominator_rate"] == pytest.approx(3 / 8)
    assert g["nvidia_rate"] == pytest.approx(7 / 8)
    assert g["gap"] == pytest.approx(4 / 8)
    assert g["staleness_h"] == 5.0 and g["amd_run_at"] == T0 + timedelta(hours=3)
    none = outcomes.rollup(parity.assign(denominator=0))
    assert math.isnan(none.iloc[0]["same_denominator_rate"])
    one = outcomes.rollup(parity.iloc[:1].assign(denominator=1, amd_passed=1, nvidia_passed=1))
    assert one.iloc[0]["same_denominator_rate"] == 1.0  # one test is a rate
    assert outcomes.rollup(parity.iloc[0:0]).empty


@pytest.mark.parametrize("amd, ref, expected", [
    ("passed", "passed", "both pass"), ("failed", "passed", "amd-only fail"),
    ("error", "passed", "amd-only fail"), ("passed", "error", "nvidia-only fail"),
    ("failed", "failed", "both fail"), ("skipped", "passed", "amd-only skip"),
    ("skipped", "failed", "amd-only skip"), ("passed", "skipped", "nvidia-only skip"),
    ("error", "skipped", "nvidia-only skip"), (None, "passed", "amd missing"),
    (math.nan, "failed", "amd missing"), ("passed", None, "other"),
    ("skipped", "skipped", "other"), (None, "skipped", "other"), ("xfailed", "passed", "other"),
])
def test_quadrants(amd, ref, expected):
    assert outcomes.quadrant(amd, ref) == expected


def test_matrix_names_both_outcomes_and_the_quadrant():
    m = outcomes.test_matrix(_pairs(), _results(RESULTS))
    got = dict(zip(m["parity_id"], zip(m["amd_outcome"], m["nvidia_outcome"], m["quadrant"])))
    assert got[2] == ("failed", "passed", "amd-only fail")
    assert got[5][2] == "amd missing" and got[7][2] == "other"
    assert got[8] == ("error", "passed", "amd-only fail")
    row = m[m["parity_id"] == 3].iloc[0]
    assert (row["amd_skip_category"], row["amd_message"]) == ("vendor_amd", "no rocm")
    assert m[m["parity_id"] == 4].iloc[0]["nvidia_message"] == "cuda"
    assert list(m["quadrant"]) == sorted(m["quadrant"])  # one framework, hardware and suite
    assert list(m.index) == list(range(len(m))) and "index" not in m.columns
    assert outcomes.test_matrix(_pairs().iloc[0:0], _results(RESULTS)).empty


def test_matrix_names_each_outcome_pair_once_whatever_the_rows_order():
    """Tests 1 and 2 pass on both sides, test 3 fails on AMD only: the quadrant is named
    per distinct outcome pair, and the pair of the third row is not that of the second."""
    rows = [(3, 1, "passed", 0, None, None), (1, 1, "passed", 0, None, None),
            (3, 2, "passed", 0, None, None), (1, 2, "passed", 0, None, None),
            (3, 3, "passed", 0, None, None), (1, 3, "failed", 0, "boom", None)]
    m = outcomes.test_matrix(_pairs().iloc[:1], _results(rows))
    assert dict(zip(m["parity_id"], m["quadrant"])) == {
        1: "both pass", 2: "both pass", 3: "amd-only fail"}


def test_reduce_tests_keeps_the_worst_row_and_the_first_text_present():
    """Per (key, test): the worst outcome, the most reruns, and the message and skip
    category of the worst row that has one; a row whose key has a gap (a run without a
    commit) is reduced too, not dropped."""
    rows = pd.DataFrame([
        dict(run=1, commit="c1", parity_id=7, parity_key="k7", outcome="passed", rerun_count=2,
             message="flaked twice", skip_category=None),
        dict(run=1, commit="c1", parity_id=7, parity_key="k7", outcome="failed", rerun_count=0,
             message=None, skip_category=None),
        dict(run=1, commit="c1", parity_id=7, parity_key="k7", outcome="skipped",
             rerun_count=0, message="no rocm", skip_category="vendor_amd"),
        dict(run=2, commit=None, parity_id=7, parity_key="k7", outcome="error", rerun_count=1,
             message="segfault", skip_category=None),
        dict(run=2, commit=None, parity_id=8, parity_key="k8", outcome="passed", rerun_count=0,
             message=None, skip_category=None),
    ])
    out = outcomes.reduce_tests(rows, ["run", "commit"])
    got = {(r.run, r.parity_id): (r.outcome, r.reruns, *(None if pd.isna(x) else x for x in (
        r.message, r.skip_category))) for r in out.itertuples()}
    assert got == {(1, 7): ("failed", 2, "flaked twice", "vendor_amd"),
                   (2, 7): ("error", 1, "segfault", None), (2, 8): ("passed", 0, None, None)}
    assert list(out.columns) == ["run", "commit", "parity_id", "parity_key", "outcome",
                                 "reruns", "message", "skip_category"]


def test_matrix_of_rows_without_any_text_has_every_column():
    """Raw rows with no message and no skip category anywhere: the matrix still has both
    sides' message and skip columns, empty; a missing rerun count is no rerun."""
    rows = [(1, 1, "passed", None, None, None), (3, 1, "failed", 0, None, None)]
    m = outcomes.test_matrix(_pairs(), _results(rows))
    assert len(m) == 1 and m.iloc[0]["quadrant"] == "nvidia-only fail"
    assert m[["amd_message", "nvidia_message", "amd_skip_category"]].isna().all().all()
    reduced = outcomes.reduce_tests(_results(rows[:1]), ["job_pk"])
    assert reduced["reruns"].tolist() == [0]


def test_quadrants_of_codes_are_the_quadrants_of_names():
    """The vectorised quadrant (outcome codes, 255 where a side did not run the test) names
    every combination exactly as `quadrant` does, an unknown code included."""
    vocab = list(vec.OUTCOMES)
    codes = list(range(len(vocab) + 1)) + [255]
    name = {i: (vocab[i] if i < len(vocab) else "other") for i in range(len(vocab) + 1)}
    name[255] = None
    amd = np.array([a for a in codes for _ in codes])
    ref = np.array([r for _ in codes for r in codes])
    got = outcomes.quadrants(amd, ref, 255)
    assert list(got) == [outcomes.quadrant(name[a], name[r]) for a, r in zip(amd, ref)]
    assert outcomes.quadrants(np.array([2]), np.array([1]), 255)[0] == "nvidia-only fail"


def _codes(rows, pairs) -> pd.DataFrame:
    """What `tables.pair_tests` reads from the vectors, built from raw rows by hand."""
    out = []
    for i, p in enumerate(pairs.itertuples()):
        sides = {}
        for side, jobs in (("amd", p.amd_jobs), ("ref", p.ref_jobs)):
            mine = [r for r in rows if r[0] in jobs]
            o, k, rr = vec.codes([r[2] for r in mine], [r[5] for r in mine], [r[3] for r in mine])
            sides[side] = vec.reduce([r[1] for r in mine], o, k, rr)
        for t in sorted(set(sides["amd"].ids) | set(sides["ref"].ids)):
            row = dict(pair=i, parity_id=int(t))
            for side, v in sides.items():
                at = np.flatnonzero(v.ids == t)
                row[side] = int(v.outcomes[at[0]]) if len(at) else 255
                row[f"{side}_skip"] = int(v.skips[at[0]]) if len(at) else 0
            out.append(row)
    return pd.DataFrame(out)


def test_matrix_from_codes_equals_the_matrix_of_the_raw_rows():
    """The matrix from per-pair outcome codes, the keys and only the rows with a message
    is the matrix reduced from every raw row: the worst outcome, the message of the worst
    row that has one (test 8: the error's, not the pass's), each side's own message."""
    rows = RESULTS + [(1, 8, "passed", 1, "passed on rerun", None)]
    pairs = _pairs()
    keys = pd.DataFrame({"parity_id": range(1, 9),
                         "parity_key": [f"tests.t::test_{t}" for t in range(1, 9)]})
    messages = pd.DataFrame([dict(job_pk=j, parity_id=t, outcome=o, message=m)
                             for j, t, o, _, m, _ in rows if m is not None])
    new = outcomes.matrix(pairs, _codes(rows, pairs), keys, messages, 255)
    old = outcomes.test_matrix(pairs, _results(rows))
    assert len(new) == len(old) == 8
    for c in old.columns:
        assert [None if pd.isna(x) else x for x in new[c]] == \
            [None if pd.isna(x) else x for x in old[c]], c
    # with the store's ranks of the keys (any integers in the keys' order), the same frame;
    # the order within a lane's quadrant is the ranks' (reversed, the tests come reversed)
    codes = _codes(rows, pairs)
    ranked = keys.assign(key_rank=[10 * t + 3 for t in range(1, 9)])
    pd.testing.assert_frame_equal(outcomes.matrix(pairs, codes, ranked, messages, 255), new)
    back = outcomes.matrix(pairs, codes, keys.assign(key_rank=[-t for t in range(1, 9)]),
                           messages, 255)
    lane = ["framework", "amd_hardware", "suite", "quadrant"]
    assert back[lane].drop_duplicates().equals(new[lane].drop_duplicates())
    for _, part in back.groupby(lane, sort=False):
        assert part["parity_id"].tolist() == sorted(part["parity_id"], reverse=True)
    row = new[new["parity_id"] == 8].iloc[0]
    assert (row["amd_outcome"], row["amd_message"]) == ("error", "segfault")
    assert new[new["parity_id"] == 4].iloc[0]["nvidia_message"] == "cuda"



def test_matrix_with_63_bit_parity_ids_and_a_test_without_a_key():
    """Parity ids are 63-bit hashes: each (pair, test) finds its own message however large
    the ids (arithmetic on them would wrap: pair 4's test 5 and pair 0's test 405 would meet
    when the largest id is 2**62 + 99). A test without a parity key keeps a missing key and
    comes after the keyed tests of its pair and quadrant."""
    big = 2 ** 62 + 99
    pairs = pd.DataFrame([dict(framework="vllm", suite=f"s{i}", amd_hardware="mi300x",
                               nvidia_hardware="h100", amd_commit="c1", amd_run_at=T0,
                               amd_jobs=(100 + i,), ref_jobs=(200 + i,)) for i in range(5)])
    codes = pd.DataFrame({"pair": [0, 4, 4], "parity_id": [405, big, 5], "amd": [1, 2, 2],
                          "ref": [2, 2, 2], "amd_skip": [0, 0, 0], "ref_skip": [0, 0, 0]})
    keys = pd.DataFrame({"parity_id": [5, 405], "parity_key": ["t::b", "t::a"]})
    messages = pd.DataFrame([dict(job_pk=100, parity_id=405, outcome="failed", message="boom")])
    m = outcomes.matrix(pairs, codes, keys, messages, 255)
    got = {(s, t): x for s, t, x in zip(m["suite"], m["parity_id"], m["amd_message"])}
    assert got[("s0", 405)] == "boom" and pd.isna(got[("s4", 5)]) and pd.isna(got[("s4", big)])
    assert pd.isna(m.loc[m["parity_id"] == big, "parity_key"].iloc[0])
    assert m["parity_id"].tolist() == [405, 5, big]
    assert m["quadrant"].tolist() == ["amd-only fail", "both pass", "both pass"]


def test_matrix_without_messages_equals_that_of_messages_of_other_jobs():
    """A caller that shows no message passes none (`frames._matrix`, messages=False): the
    matrix is that of messages that name none of the pairs' jobs, message columns and
    their type included."""
    pairs = _pairs()
    keys = pd.DataFrame({"parity_id": range(1, 8),
                         "parity_key": [f"tests.t::test_{t}" for t in range(1, 8)]})
    codes = _codes(RESULTS, pairs)
    none = pd.DataFrame(columns=["job_pk", "parity_id", "outcome", "message"])
    elsewhere = pd.DataFrame([dict(job_pk=999, parity_id=1, outcome="failed", message="x")])
    got = outcomes.matrix(pairs, codes, keys, none, 255)
    pd.testing.assert_frame_equal(got, outcomes.matrix(pairs, codes, keys,
                                                       elsewhere.astype(none.dtypes), 255))
    assert got["amd_message"].isna().all() and len(got) == len(codes)


# -- streaks and flakiness ----------------------------------------------------------------------

def _history(rows, vendor="amd") -> pd.DataFrame:
    return pd.DataFrame([dict(framework="vllm", vendor=vendor, hardware="mi300x", parity_id=t,
                              parity_key=f"tests.t::test_{t}", commit=c, outcome=o, reruns=r,
                              message=f"m{h}", run_at=T0 + timedelta(hours=h))
                         for t, h, o, c, r in rows])


def test_streaks_count_the_current_failures_and_passes():
    h = _history([(1, 4, "error", "c4", 0), (1, 0, "passed", "c0", 0), (1, 1, "failed", "c1", 0),
                  (1, 2, "skipped", "c2", 0), (1, 3, "failed", "c3", 0),
                  (2, 0, "failed", "c0", 0), (2, 1, "passed", "c1", 0), (2, 2, "passed", "c2", 0),
                  (3, 0, "failed", "c0", 0), (3, 1, "failed", "c1", 0),
                  (4, 0, "skipped", "c0", 0),
                  (5, 0, "passed", "c0", 0), (5, 1, "passed", "c1", 0), (5, 2, "passed", "c2", 0),
                  (6, 0, "passed", "c0", 0), (6, 1, "failed", "c1", 0)])
    s = outcomes.streaks(h).set_index("parity_id")
    one = s.loc[1]
    assert (one["streak"], one["runs"], one["failures"], one["passing"]) == (3, 4, 3, 0)
    assert one["first_failing"] == T0 + timedelta(hours=1)
    assert one["last_run_at"] == T0 + timedelta(hours=4) and one["last_message"] == "m4"
    two = s.loc[2]
    assert (two["streak"], two["passing"], two["failures"]) == (0, 2, 1)
    assert pd.isna(two["first_failing"])
    three = s.loc[3]
    assert (three["streak"], three["passing"], three["first_failing"]) == (2, 0, T0)
    assert 4 not in s.index  # never ran
    five = s.loc[5]  # never failed: every run is a pass in a row
    assert (five["streak"], five["passing"], five["runs"]) == (0, 3, 3)
    six = s.loc[6]  # failing since the last run
    assert (six["streak"], six["first_failing"]) == (1, T0 + timedelta(hours=1))
    assert outcomes.streaks(h.iloc[0:0]).empty
    assert outcomes.streaks(h[h["parity_id"] == 4]).empty


def test_mixed_commits_count_each_groups_commits_with_both_outcomes():
    """Per group, the commits it both passed and failed on, counted as a plain loop counts
    them; rows without a commit count for none, and a group with no row counts 0."""
    rng = np.random.default_rng(7)
    for n, groups, commits in ((0, 3, 1), (1, 1, 1), (500, 40, 9), (5000, 300, 60)):
        group = rng.integers(0, groups, n)
        commit = rng.integers(-1, commits, n)
        failed = rng.random(n) < 0.3
        seen: dict[tuple, set] = {}
        for g, c, x in zip(group.tolist(), commit.tolist(), failed.tolist()):
            if c >= 0:
                seen.setdefault((g, c), set()).add(x)
        want = [sum(1 for (g2, _), v in seen.items() if g2 == g and len(v) == 2)
                for g in range(groups)]
        assert outcomes.mixed_commits(group, commit, failed, groups).tolist() == want


def test_flakiness_same_commit_mixes_reruns_and_vendors():
    amd = _history([(1, 0, "failed", "c1", 0), (1, 1, "passed", "c1", 0),
                    (1, 2, "passed", "c2", 0), (1, 3, "failed", "c3", 0),
                    (2, 0, "passed", "c1", 1), (2, 1, "passed", "c2", 0),
                    (3, 0, "failed", "c1", 0), (3, 1, "failed", "c2", 0),
                    (4, 0, "passed", "c1", 0)])
    nvidia = _history([(1, 0, "passed", "c1", 0), (1, 1, "failed", "c1", 0)], vendor="nvidia")
    f = outcomes.flakiness(pd.concat([amd, nvidia], ignore_index=True))
    rows = {(r.parity_id, r.vendor): r for r in f.itertuples()}
    assert set(rows) == {(1, "amd"), (2, "amd"), (1, "nvidia")}  # 3 and 4 are steady
    a = rows[(1, "amd")]
    assert (a.runs, a.failures, a.rerun_passes, a.same_commit_mixed) == (4, 2, 0, 1)
    assert a.flip_rate == pytest.approx(2 / 3) and a.fail_rate == pytest.approx(0.5)
    assert (a.fail_lo, a.fail_hi) == pytest.approx(wilson(2, 4))
    assert a.label == "shared" and a.last_seen == T0 + timedelta(hours=3)
    b = rows[(2, "amd")]
    assert (b.rerun_passes, b.same_commit_mixed, b.flip_rate, b.label) == (1, 0, 0.0, "amd-only")
    n = rows[(1, "nvidia")]
    assert n.flip_rate == 1.0 and n.label == "shared"
    assert list(f["flip_rate"]) == sorted(f["flip_rate"], reverse=True)
    # ties on flip rate and rerun passes: the test seen in more runs first
    tie = _history([(6, 0, "passed", "c1", 1), (7, 0, "passed", "c1", 1), (7, 1, "passed", "c2", 0),
                    (8, 0, "passed", "c1", 1), (8, 1, "passed", "c2", 1)])
    tied = outcomes.flakiness(tie)
    assert list(tied["parity_id"]) == [8, 7, 6] and list(tied["flip_rate"]) == [0.0] * 3
    assert list(tied.columns) == [
        "framework", "parity_key", "parity_id", "vendor", "hardware", "label", "runs",
        "failures", "rerun_passes", "same_commit_mixed", "flip_rate", "fail_rate", "fail_lo",
        "fail_hi", "last_seen"] and list(tied.index) == [0, 1, 2]
    # a missing rerun count is no rerun; a run without a commit mixes nothing
    odd = _history([(9, 0, "passed", None, 1), (9, 1, "passed", None, None)])
    got = outcomes.flakiness(odd).iloc[0]
    assert (got["rerun_passes"], got["same_commit_mixed"]) == (1, 0)
    only_nv = outcomes.flakiness(nvidia)
    assert list(only_nv["label"]) == ["nvidia-only"]
    # flaky on AMD and on a vendor that is neither (one history of each): "other"
    third = _history([(1, 0, "passed", "c1", 0), (1, 1, "failed", "c1", 0)], vendor="intel")
    both = outcomes.flakiness(pd.concat([amd[amd["parity_id"] == 2], third.assign(parity_id=2)],
                                        ignore_index=True))
    assert sorted(both["vendor"]) == ["amd", "intel"] and set(both["label"]) == {"other"}
    single = outcomes.flakiness(_history([(5, 0, "passed", "c1", 2)]))
    assert single.iloc[0]["flip_rate"] == 0.0 and single.iloc[0]["runs"] == 1
    assert outcomes.flakiness(amd[amd["parity_id"] >= 3]).empty
    assert outcomes.flakiness(amd.iloc[0:0]).empty


def _reference(history: pd.DataFrame, keys: list[str]) -> dict:
    """Streak and flakiness figures per group, counted in plain Python run by run: what the
    array code in `outcomes` must give."""
    out: dict = {}
    ran = history[history["outcome"].isin(outcomes.RAN)]
    ran = ran.iloc[sorted(range(len(ran)), key=lambda i: ran["run_at"].iloc[i])]  # stable
    for row in ran.itertuples():
        out.setdefault(tuple(getattr(row, k) for k in keys), []).append(row)
    figures = {}
    for key, rows in out.items():
        f = [r.outcome in outcomes.FAILED for r in rows]
        streak = len(f) - (max(i for i, x in enumerate(f) if not x) + 1 if not all(f) else 0)
        passing = len(f) - (max(i for i, x in enumerate(f) if x) + 1 if any(f) else 0)
        messages = [r.message for r in rows if r.message is not None and r.message == r.message]
        commits: dict = {}
        for r, x in zip(rows, f):
            if pd.notna(r.commit):
                commits.setdefault(r.commit, set()).add(x)
        figures[key] = dict(
            runs=len(f), failures=sum(f), streak=streak, passing=passing,
            first_failing=rows[len(f) - streak].run_at if streak else None,
            last_run_at=rows[-1].run_at, last_message=messages[-1] if messages else None,
            flips=sum(a != b for a, b in zip(f, f[1:])),
            rerun_passes=sum(r.outcome == "passed" and (r.reruns or 0) > 0 for r in rows),
            mixed=sum(len(v) == 2 for v in commits.values()))
    return figures


@pytest.mark.parametrize("seed", range(6))
def test_streaks_and_flakiness_agree_with_counting_run_by_run(seed):
    """Random histories over two frameworks, vendors and hardware, with ties in time, tests
    that never ran, runs without a commit or a message and reruns: every streak, first
    failing date, last message, flip and same-commit mix equals a plain count."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(400):
        fw = rng.choice(["vllm", "sglang"])
        vendor, hw = [("amd", "mi300x"), ("amd", "mi355x"), ("nvidia", "h100")][rng.integers(3)]
        test = int(rng.integers(12))
        outcome = rng.choice(["passed", "failed", "error", "skipped", "xfailed"],
                             p=[0.45, 0.25, 0.1, 0.15, 0.05])
        rows.append(dict(framework=fw, vendor=vendor, hardware=hw, parity_id=test,
                         parity_key=f"t::test_{test}", run_at=T0 + timedelta(hours=int(rng.integers(30))),
                         outcome=outcome, reruns=[0, 1, None][rng.integers(3)],
                         commit=[None, "c1", "c2", "c3"][rng.integers(4)],
                         message=None if rng.random() < 0.4 else f"m{len(rows)}"))
    history = pd.DataFrame(rows)
    want = _reference(history, ["framework", "hardware", "parity_id"])
    got = outcomes.streaks(history)
    assert len(got) == len(want)
    for r in got.itertuples():
        w = want[(r.framework, r.hardware, r.parity_id)]
        assert (r.runs, r.failures, r.streak, r.passing) == \
            (w["runs"], w["failures"], w["streak"], w["passing"])
        assert (None if pd.isna(r.first_failing) else r.first_failing) == w["first_failing"]
        assert r.last_run_at == w["last_run_at"]
        assert (None if pd.isna(r.last_message) else r.last_message) == w["last_message"]
    want = _reference(history, ["framework", "vendor", "hardware", "parity_id"])
    flaky = outcomes.flakiness(history)
    expected = {k for k, w in want.items() if w["rerun_passes"] or w["mixed"]}
    assert {(r.framework, r.vendor, r.hardware, r.parity_id) for r in flaky.itertuples()} \
        == expected
    for r in flaky.itertuples():
        w = want[(r.framework, r.vendor, r.hardware, r.parity_id)]
        assert (r.runs, r.failures, r.rerun_passes, r.same_commit_mixed) == \
            (w["runs"], w["failures"], w["rerun_passes"], w["mixed"])
        assert r.flip_rate == pytest.approx(w["flips"] / (w["runs"] - 1) if w["runs"] > 1 else 0)
        assert r.last_seen == w["last_run_at"]


@pytest.mark.parametrize("seed", range(6))
def test_run_streaks_of_a_runs_by_tests_array_are_the_streaks_of_its_history(seed):
    """A lane's runs × tests array of worst codes, with cells where a test did not run (255),
    skipped or xfailed: each test's counts, streak, passes since and the rows of its
    streak's start, last run and last failure are what `streaks` finds in the same cells
    written as a history, one row per run and test."""
    rng = np.random.default_rng(seed)
    codes = rng.choice([0, 1, 2, 2, 2, 4, 5, 255], size=(int(rng.integers(1, 30)), 40)) \
        .astype(np.uint8)
    got = outcomes.run_streaks(codes)
    rows = [dict(framework="vllm", vendor="amd", hardware="mi300x", parity_id=t,
                 parity_key=f"t::test_{t}", outcome=vec.OUTCOMES[c], message=None,
                 run_at=T0 + timedelta(hours=r))
            for r in range(codes.shape[0]) for t in range(codes.shape[1])
            if (c := int(codes[r, t])) < len(vec.OUTCOMES)]
    want = outcomes.streaks(pd.DataFrame(rows)).set_index("parity_id")
    assert set(np.flatnonzero(got["runs"] > 0)) == set(want.index)
    for t, w in want.iterrows():
        assert (got["runs"][t], got["failures"][t], got["streak"][t], got["passing"][t]) == \
            (w["runs"], w["failures"], w["streak"], w["passing"])
        assert T0 + timedelta(hours=int(got["last"][t])) == w["last_run_at"]
        if w["streak"]:
            assert T0 + timedelta(hours=int(got["first"][t])) == w["first_failing"]
        else:
            assert got["first"][t] == codes.shape[0] and pd.isna(w["first_failing"])
        failed = np.flatnonzero(codes[:, t] <= 1)
        assert got["last_bad"][t] == (failed[-1] if len(failed) else -1)


@pytest.mark.parametrize("seed", range(6))
def test_run_flaky_is_the_flakiness_of_the_same_cells(seed):
    """Runs × tests codes with reruns here and there and runs of a few commits (some
    without one): a test is flaky by `run_flaky` exactly when `flakiness` lists it for the
    same cells written as a history."""
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(2, 25)), 60)
    codes = rng.choice([0, 1, 2, 2, 2, 2, 2, 2, 4, 5, 255], size=shape).astype(np.uint8)
    reruns = (rng.random(shape) < 0.04).astype(np.uint8)
    commit = rng.integers(0, 3 * shape[0], size=shape[0])  # a few commits run twice
    commit[rng.random(shape[0]) < 0.15] = -1
    rows = [dict(framework="vllm", vendor="amd", hardware="mi300x", parity_id=t,
                 parity_key=f"t::test_{t}", outcome=vec.OUTCOMES[c], reruns=int(reruns[r, t]),
                 commit=None if commit[r] < 0 else f"c{commit[r]}",
                 run_at=T0 + timedelta(hours=r))
            for r in range(shape[0]) for t in range(shape[1])
            if (c := int(codes[r, t])) < len(vec.OUTCOMES)]
    want = set(outcomes.flakiness(pd.DataFrame(rows))["parity_id"])
    assert 0 < len(want) < shape[1] - 5
    assert set(np.flatnonzero(outcomes.run_flaky(codes, reruns, commit))) == want


@pytest.mark.parametrize("seed", range(6))
def test_run_flakiness_counts_what_a_run_by_run_count_finds(seed):
    """Runs × tests codes (cells where a test did not run, skipped or xfailed among them),
    reruns here and there and runs of a few commits, some without one: every test's runs,
    failures, rerun passes, flips, same-commit mixes and first and last run are what a
    plain count finds in the same cells written as a history; `run_flaky` is those with a
    rerun pass or a mix."""
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(1, 25)), 50)
    codes = rng.choice([0, 1, 2, 2, 2, 2, 4, 5, 255, 255], size=shape).astype(np.uint8)
    reruns = (rng.random(shape) < 0.05).astype(np.uint8)
    commit = rng.integers(0, 2 * shape[0], size=shape[0])
    commit[rng.random(shape[0]) < 0.2] = -1
    rows = [dict(framework="vllm", vendor="amd", hardware="mi300x", parity_id=t,
                 parity_key=f"t::test_{t}", outcome=vec.OUTCOMES[c], reruns=int(reruns[r, t]),
                 commit=None if commit[r] < 0 else f"c{commit[r]}", message=None,
                 run_at=T0 + timedelta(hours=r))
            for r in range(shape[0]) for t in range(shape[1])
            if (c := int(codes[r, t])) < len(vec.OUTCOMES)]
    want = _reference(pd.DataFrame(rows), ["parity_id"])
    got = outcomes.run_flakiness(codes, reruns, commit)
    for t in range(shape[1]):
        w = want.get((t,))
        if w is None:  # it never ran
            assert (got["runs"][t], got["first"][t], got["last"][t]) == (0, shape[0], -1)
            continue
        assert (got["runs"][t], got["failures"][t], got["rerun_passes"][t], got["flips"][t],
                got["mixed"][t]) == (w["runs"], w["failures"], w["rerun_passes"], w["flips"],
                                     w["mixed"])
        ran = np.flatnonzero(codes[:, t] <= outcomes.RANK["passed"])
        assert (got["first"][t], got["last"][t]) == (ran[0], ran[-1])
    flaky = outcomes.run_flaky(codes, reruns, commit)
    assert flaky.tolist() == ((got["rerun_passes"] > 0) | (got["mixed"] > 0)).tolist()
    assert flaky.any() and not flaky.all()


def test_the_first_row_of_a_history_counts_like_any_other():
    """The earliest row of the whole history (array position 0) is a test's only failure and
    only message, and another test has neither: its message and passes since are still
    found, and the other's message is missing, not borrowed."""
    h = _history([(1, 0, "failed", "c0", 0), (1, 1, "passed", "c1", 0), (1, 2, "passed", "c2", 0),
                  (2, 1, "passed", "c1", 0), (2, 2, "passed", "c2", 0)])
    h["message"] = ["m0", None, None, None, None]
    s = outcomes.streaks(h).set_index("parity_id")
    assert (s.loc[1, "runs"], s.loc[1, "failures"], s.loc[1, "streak"], s.loc[1, "passing"]) \
        == (3, 1, 0, 2)
    assert s.loc[1, "last_message"] == "m0" and pd.isna(s.loc[2, "last_message"])
    assert s.loc[2, "passing"] == 2 and s.loc[2, "failures"] == 0


def test_key_codes_number_each_combination_by_first_appearance():
    """One integer per distinct combination, numbered by first appearance; a missing value is
    a value of its own and meets no other combination."""
    codes = key_codes(np.array([0, 1, 0, 1, 0]), pd.Series(["z", None, "y", None, "z"]))
    assert list(codes) == [0, 1, 2, 1, 0]
    assert list(key_codes(np.array([7, 7, 3]))) == [0, 0, 1]


def test_members_are_each_groups_rows_in_order_of_group_number():
    number = np.array([2, 0, 2, 1, 0, 2])
    assert [m.tolist() for m in members(number)] == [[1, 4], [3], [0, 2, 5]]
    assert members(np.empty(0, np.int64)) == []
    rng = np.random.default_rng(5)
    number = rng.integers(0, 40, 1_000)
    got = members(number)
    assert [m.tolist() for m in got] == [np.flatnonzero(number == g).tolist()
                                         for g in np.unique(number)]


def test_first_rows_number_values_by_first_appearance_and_find_each_first_row():
    number, first = first_rows(np.array([30, 10, 30, 20, 10, 40]))
    assert number.tolist() == [0, 1, 0, 2, 1, 3]
    assert first.tolist() == [0, 1, 3, 5]
    number, first = first_rows(np.empty(0, np.int64))
    assert len(number) == 0 and len(first) == 0


def test_outcome_categories_are_the_vocabularys_with_other_past_it():
    """A history's outcome column: each code's name, "other" for a code past the vocabulary,
    categories of the text dtype the views' other text columns have."""
    codes = np.array([0, 1, 2, 5, 3, 4, vec.OTHER, 2, 9], np.int64)
    got = outcomes.outcome_categories(codes)
    assert list(got) == ["error", "failed", "passed", "skipped", "xpassed", "xfailed",
                         "other", "passed", "other"]
    assert list(got) == list(vec.names(codes, vec.OUTCOMES))
    assert got.categories.dtype == pd.Series(["passed"]).dtype
    assert len(outcomes.outcome_categories(np.empty(0, np.int64))) == 0


def test_streaks_and_flakiness_of_a_categorical_history_equal_those_of_a_plain_one():
    """The history views build their history with categorical text columns; the streaks and
    flaky tests from it are the same frames, plain text columns included, as from the same
    history with plain columns."""
    t0 = pd.Timestamp("2026-11-01")
    rows = []
    for night in range(8):
        for hw, vendor in (("mi300x", "amd"), ("h100", "nvidia")):
            for pid, key in ((1, "tests/a.py::test_x"), (2, "tests/b.py::test_y")):
                bad = (pid == 1 and hw == "mi300x" and night >= 5) or (pid == 2 and night % 3 == 0)
                rows.append(dict(framework="vllm", vendor=vendor, hardware=hw, run_pk=night,
                                 commit=None if night == 2 else f"c{night // 2}",
                                 run_at=t0 + pd.Timedelta(days=night), parity_id=pid,
                                 parity_key=key, outcome="failed" if bad else "passed",
                                 reruns=int(pid == 2 and night == 4),
                                 message="boom" if bad else None, skip_category=None))
    plain = pd.DataFrame(rows)
    for c in ("framework", "vendor", "hardware", "commit", "parity_key"):
        plain[c] = plain[c].astype("str")
    categorical = plain.copy()
    for c in ("framework", "vendor", "hardware", "commit", "parity_key", "outcome"):
        categorical[c] = pd.Categorical(plain[c])
    for reduce in (outcomes.streaks, outcomes.flakiness):
        want, got = reduce(plain), reduce(categorical)
        assert not want.empty
        pd.testing.assert_frame_equal(got, want)
        assert not any(isinstance(t, pd.CategoricalDtype) for t in got.dtypes)


def test_vectors_read_from_bytes_are_the_stored_values_and_read_only():
    """Read back without copying: the same ids and codes, and no caller can change the
    stored bytes' view in place."""
    v = vec.reduce([30, 10, 20, 10], *vec.codes(["passed", "failed", "skipped", "passed"],
                                                [None, None, "hardware", None], [0, 1, 0, 0]))
    back = vec.Vector.from_bytes(*v.to_bytes())
    assert back.ids.dtype == np.int64 and back.ids.tolist() == [10, 20, 30]
    assert back.outcomes.tolist() == v.outcomes.tolist()
    assert back.reruns.tolist() == [1, 0, 0] and back.skips.tolist() == v.skips.tolist()
    with pytest.raises(ValueError):
        back.ids[0] = 1
