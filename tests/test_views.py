"""Each parity view on a small hand-built store whose right answer is known by construction."""
from __future__ import annotations

import math
from datetime import timedelta

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from parity.dashboard import charts, frames, tables
from parity.dashboard.intervals import wilson
from parity.dashboard.period import Period
from parity.db.engine import make_engine
from tests.builder import DAY0, Builder
from tests.comparison import assert_same_frame


@pytest.fixture
def build(engine):
    return Builder(engine)


@pytest.fixture
def sbuild(sqlite_engine):
    return Builder(sqlite_engine)


def test_same_denominator_rule(build):
    # NVIDIA ran a, b, c, d and passed them all; AMD passed a, failed b, skipped c as
    # "not supported on ROCm", never ran d, and passed e that NVIDIA did not run.
    build.tests("h100", dict(a="passed", b="passed", c="passed", d="passed"))
    build.tests("mi300x", dict(a="passed", b="failed", c="skipped", e="passed"),
                reasons={"c": "not supported on ROCm"})
    df = frames.pass_rate_parity(build.engine)
    row = df.iloc[0]
    assert (row.amd_hardware, row.nvidia_hardware, row.alignment) == ("mi300x", "h100",
                                                                      "same-commit")
    assert row.denominator == 4
    assert (row.amd_passed, row.amd_failed, row.amd_skipped, row.amd_missing) == (1, 1, 1, 1)
    assert row.same_denominator_rate == pytest.approx(0.25)
    assert row.nvidia_rate == 1.0 and row.gap == pytest.approx(0.75)
    assert row.amd_plain_rate == pytest.approx(2 / 3)  # what a naive dashboard would show
    assert (row.rate_lo, row.rate_hi) == pytest.approx(wilson(1, 4))
    rolled = frames.pass_rate_parity(build.engine, by="hardware")
    assert rolled.iloc[0].same_denominator_rate == pytest.approx(0.25)


def test_headline_and_weekly_report_rate_is_the_hand_count(build):
    """The headline (Overview, weekly report) sums the suites' same-denominator counts: of
    the tests the reference ran, the share AMD passed. Counted by hand:
    kernels: NVIDIA ran a-d; AMD passed a (b failed, c skipped, d missing; e is extra).
    models: NVIDIA ran x and y (z skipped: not in the denominator); AMD passed both.
    Rate (1 + 2) / (4 + 2) = 0.5; NVIDIA's own (4 + 1) / 6."""
    from parity.dashboard import report

    build.tests("h100", dict(a="passed", b="passed", c="passed", d="passed"))
    build.tests("mi300x", dict(a="passed", b="failed", c="skipped", e="passed"),
                reasons={"c": "not supported on ROCm"})
    build.tests("h100", dict(x="passed", y="failed", z="skipped"), suite="models")
    build.tests("mi300x", dict(x="passed", y="passed", z="passed"), suite="models")
    head = frames.headline(build.engine)
    row = head.set_index(["framework", "amd_hardware"]).loc[("vllm", "mi300x")]
    assert row["nvidia_hardware"] == "h100"
    assert row["same_denominator_rate"] == pytest.approx(0.5)
    assert row["nvidia_rate"] == pytest.approx(5 / 6)
    assert (row["rate_lo"], row["rate_hi"]) == pytest.approx(wilson(3, 6))
    week = report.weekly(build.engine, since="2026-11-01", until="2026-11-07")
    weekly = week.tables["headline"].set_index(["framework", "amd_hardware"])
    assert weekly.loc[("vllm", "mi300x"), "same_denominator_rate"] == pytest.approx(0.5)
    assert "| 50.0 % |" in report.markdown(week)


def test_skip_only_on_amd(build):
    build.tests("h100", dict(a="passed", c="passed", g="skipped"), reasons={"g": "requires 8 GPUs"})
    build.tests("mi300x", dict(a="passed", c="skipped", g="skipped"),
                reasons={"c": "skipIfRocm: flaky on ROCm", "g": "requires 8 GPUs"})
    m = frames.test_matrix(build.engine).set_index("parity_key")
    assert m.loc["tests.kernels::c", "quadrant"] == "amd-only skip"
    assert m.loc["tests.kernels::a", "quadrant"] == "both pass"
    assert m.loc["tests.kernels::g", "quadrant"] == "other"  # skipped on both: not AMD's fault
    skips = frames.skip_parity(build.engine)
    amd = skips[(skips.vendor == "amd")].set_index("skip_category")
    assert amd.loc["vendor_amd", "skips"] == 1 and amd.loc["vendor_amd", "vendor_gated"]
    assert amd.loc["vendor_amd", "ran_on_reference"] == 1
    assert amd.loc["hardware", "ran_on_reference"] == 0


def test_commit_alignment(sbuild):
    # AMD ran commit X on day 2. NVIDIA ran X on day 1 and Y on day 2: same commit wins
    # even though Y is nearer in time.
    sbuild.tests("h100", dict(a="passed"), run="n1", commit="X", day=1)
    sbuild.tests("h100", dict(a="failed"), run="n2", commit="Y", day=2)
    sbuild.tests("mi300x", dict(a="passed"), run="a1", commit="X", day=2)
    # another suite: no same commit, nearest reference within the window
    sbuild.tests("h100", dict(b="passed"), suite="models", run="n3", commit="P", day=1)
    sbuild.tests("mi300x", dict(b="passed"), suite="models", run="a2", commit="Q", day=2)
    # a third: the only reference run is too old
    sbuild.tests("h100", dict(c="passed"), suite="old", run="n4", commit="R", day=-10)
    sbuild.tests("mi300x", dict(c="passed"), suite="old", run="a3", commit="S", day=2)
    df = frames.pass_rate_parity(sbuild.engine).set_index("suite")
    assert df.loc["kernels", "alignment"] == "same-commit"
    assert df.loc["kernels", "ref_commit"] == "X"
    assert df.loc["kernels", "staleness_h"] == pytest.approx(24)
    assert df.loc["kernels", "nvidia_rate"] == 1.0
    assert df.loc["models", "alignment"] == "nearest"
    assert df.loc["models", "staleness_h"] == pytest.approx(24)
    assert df.loc["old", "alignment"] == "none" and df.loc["old", "denominator"] == 0
    assert math.isnan(df.loc["old", "same_denominator_rate"])


def test_trend_has_one_row_per_amd_run(sbuild):
    for day in range(3):
        sbuild.tests("h100", dict(a="passed", b="passed"), run=f"r{day}", commit=f"c{day}",
                     day=day)
        sbuild.tests("mi300x", dict(a="passed", b="failed" if day else "passed"),
                     run=f"r{day}", commit=f"c{day}", day=day)
    df = frames.pass_rate_parity(sbuild.engine, latest=False)
    assert list(df["same_denominator_rate"]) == [1.0, 0.5, 0.5]
    week = frames.pass_rate_parity(sbuild.engine, latest=False, since="2026-11-03")
    assert len(week) == 2


def test_amd_only_failures_streak(sbuild):
    for day in range(5):
        sbuild.tests("h100", dict(a="passed", b="passed"), run=f"r{day}", commit=f"c{day}",
                     day=day)
        sbuild.tests("mi300x", dict(a="failed" if day >= 2 else "passed", b="passed"),
                     run=f"r{day}", commit=f"c{day}", day=day,
                     messages={"a": f"HIP error {day}"})
    df = frames.amd_only_failures(sbuild.engine)
    assert len(df) == 1
    row = df.iloc[0]
    assert row.parity_key == "tests.kernels::a" and row.streak == 3
    assert row.first_failing == pd.Timestamp("2026-11-04 02:00")
    assert row.last_message == "HIP error 4"


def test_test_history_is_the_tests_runs_in_the_window_whatever_its_jobs(build, monkeypatch):
    """One test's history: its rows in the window's trusted jobs with their jobs' fields,
    newest first, filtered by framework, suite and hardware; and the same when the jobs
    that ran it are more than an IN list takes (cut from the window's jobs then)."""
    for day in range(4):
        build.tests("h100", dict(a="passed", b="passed"), run=f"r{day}", commit=f"c{day}",
                    day=day)
        build.tests("mi300x", dict(a="failed" if day % 2 else "passed", b="skipped"),
                    run=f"r{day}", commit=f"c{day}", day=day, messages={"a": f"HIP {day}"})
        build.tests("mi300x", dict(a="passed"), suite="models", run=f"r{day}", commit=f"c{day}",
                    day=day)
        build.tests("mi300x", dict(a="failed"), fw="sglang", run=f"s{day}", day=day)
    key = "tests.kernels::a"
    full = frames.test_history(build.engine, parity_key=key)
    assert len(full) == 12 and list(full["run_at"]) == sorted(full["run_at"], reverse=True)
    vllm = frames.test_history(build.engine, parity_key=key, framework="vllm")
    assert len(vllm) == 8 and set(vllm["suite"]) == {"kernels"}
    newest = vllm.iloc[:2]
    assert list(newest["hardware"]) == ["mi300x", "h100"]
    assert list(newest["outcome"]) == ["failed", "passed"]
    assert newest.iloc[0]["message"] == "HIP 3" and newest.iloc[0]["commit"] == "c3"
    amd = frames.test_history(build.engine, parity_key=key, framework="vllm",
                              hardware="mi300x", since="2026-11-04")
    assert list(amd["outcome"]) == ["failed", "passed"]
    sglang = frames.test_history(build.engine, parity_key=key, framework="sglang")
    assert len(sglang) == 4 and set(sglang["outcome"]) == {"failed"}
    pd.testing.assert_frame_equal(
        frames.test_history(build.engine, parity_key=key, suite="kernels"), full)
    assert frames.test_history(build.engine, parity_key=key, suite="models").empty
    assert frames.test_history(build.engine, parity_key="tests.kernels::nope").empty
    monkeypatch.setattr(tables, "CHUNK", 3)  # more jobs than an IN list takes
    pd.testing.assert_frame_equal(frames.test_history(build.engine, parity_key=key), full)


def test_a_narrowed_matrix_is_the_full_matrix_cut(build):
    """What alerts and amd_only_failures read (some quadrants, some tests, no messages) is
    the full test_matrix's rows for those quadrants and tests, the messages aside."""
    build.tests("h100", dict(a="passed", b="failed", c="passed", d="passed", e="failed"),
                messages={"b": "CUDA error", "e": "boom"})
    build.tests("mi300x", dict(a="failed", b="failed", c="passed", d="skipped", e="passed"),
                messages={"a": "HIP error", "b": "HIP error too", "d": "not supported on ROCm"})
    full = frames.test_matrix(build.engine)
    wanted = full["parity_key"].isin(["tests.kernels::c"])
    tests = set(full.loc[wanted, "parity_id"])
    cut = frames._matrix(build.engine, None, None, None, None, None, None, None,
                         ["amd-only fail", "both fail"], tests, 72, messages=False)
    expect = full[full["quadrant"].isin(["amd-only fail", "both fail"]) | wanted]
    assert sorted(cut["parity_key"]) == ["tests.kernels::a", "tests.kernels::b",
                                         "tests.kernels::c"]
    same = [c for c in full.columns if not c.endswith("_message")]
    pd.testing.assert_frame_equal(cut[same].reset_index(drop=True),
                                  expect[same].reset_index(drop=True))
    assert cut["amd_message"].isna().all() and cut["nvidia_message"].isna().all()
    assert set(full.loc[full["quadrant"] == "amd-only fail", "amd_message"]) == {"HIP error"}


def test_performance_ratio_with_known_interval(sbuild):
    amd = [90.0, 100.0, 110.0, 95.0]
    nv = [50.0, 52.0, 48.0]
    for i, v in enumerate(amd):
        sbuild.bench("mi300x", v, run=f"a{i}", day=i)
    for i, v in enumerate(nv):
        sbuild.bench("h100", v, run=f"n{i}", day=i)
    # a lower-is-better metric is oriented so that above 1 still means AMD is better
    for i in range(3):
        sbuild.bench("mi300x", 20.0, metric="median_tpot_ms", direction="lower", run=f"a{i}",
                     day=i)
        sbuild.bench("h100", 10.0, metric="median_tpot_ms", direction="lower", run=f"n{i}",
                     day=i)
    df = frames.performance_parity(sbuild.engine).set_index("metric")
    row = df.loc["total_token_throughput"]
    la, lb = np.log(amd), np.log(nv)
    va, vb = la.var(ddof=1) / len(la), lb.var(ddof=1) / len(lb)
    dof = (va + vb) ** 2 / (va ** 2 / (len(la) - 1) + vb ** 2 / (len(lb) - 1))
    half = stats.t.ppf(0.975, dof) * math.sqrt(va + vb)
    centre = la.mean() - lb.mean()
    assert row.ratio == pytest.approx(math.exp(centre))
    assert (row.ratio_lo, row.ratio_hi) == pytest.approx((math.exp(centre - half),
                                                          math.exp(centre + half)))
    assert (row.amd_runs, row.nvidia_runs) == (4, 3)
    assert row.config == "fp8 tp8 1024/1024 c8"  # matched although the configs name their hw
    tpot = df.loc["median_tpot_ms"]
    assert tpot.ratio == pytest.approx(2.0) and tpot.perf_ratio == pytest.approx(0.5)
    summary = frames.performance_summary(sbuild.engine).set_index("metric")
    assert summary.loc["median_tpot_ms", "geomean"] == pytest.approx(0.5)


def test_pareto_frontier(build):
    sbuild = build  # both backends: the latest-run filter is SQL
    # an older run that must not be charted
    sbuild.bench("mi300x", 5000.0, concurrency=4, run="old", day=-3,
                 also={"median_tpot_ms": (1.0, "lower")})
    # (concurrency, throughput, tpot ms): c16 is dominated by c8 (less throughput, slower)
    for conc, tput, tpot in ((4, 800.0, 10.0), (8, 1600.0, 20.0), (16, 1500.0, 25.0)):
        sbuild.bench("mi300x", tput, concurrency=conc,
                     also={"median_tpot_ms": (tpot, "lower")})
    df = frames.pareto(sbuild.engine).set_index("concurrency")
    assert df.loc[4, "throughput_per_gpu"] == pytest.approx(100.0)  # tp8
    assert df.loc[4, "interactivity"] == pytest.approx(100.0)
    assert list(df["frontier"]) == [True, True, False]


def test_accuracy_cliff_and_ordinary_noise(sbuild):
    amd = {1: 0.94, 8: 0.935, 16: 0.925, 32: 0.94, 64: 0.80, 128: 0.938}
    nv = {c: 0.94 for c in amd}
    sbuild.accuracy("mi355x", amd)
    sbuild.accuracy("b200", nv)
    df = frames.accuracy_parity(sbuild.engine).set_index("concurrency")
    assert list(df.index[df["cliff"]]) == [64]
    assert df.loc[64, "cliff_reason"] == "below other concurrencies and below NVIDIA"
    assert not df.loc[16, "cliff"]  # 1.5 points at n=1,319 is noise
    assert df.loc[64, "amd_hi"] < df.loc[64, "nvidia_lo"]
    assert df.loc[64, "amd_n"] == 1319
    found = frames.regressions(sbuild.engine)
    cliffs = found[found["status"] == "cliff"]
    assert len(cliffs) == 1 and cliffs.iloc[0]["hardware"] == "mi355x"


@pytest.mark.parametrize("order", [(1, 2), (2, 1)])
def test_a_cells_latest_score_is_its_runs_last_attempt_whatever_was_ingested_first(
        build, order):
    """A re-run's attempts share their run's time: the later attempt's score is the cell's,
    on every store and whichever attempt was ingested first (the scores were ordered by the
    run's time alone, and a tie was left in the order the store returned the rows)."""
    scores = {1: {8: 0.50}, 2: {8: 0.93}}
    build.accuracy("b200", {8: 0.94})
    for attempt in order:
        build.accuracy("mi355x", scores[attempt], attempt=attempt)
    df = frames.accuracy_parity(build.engine)
    assert df["amd_value"].tolist() == [0.93] and not df["cliff"].any()
    found = frames.regressions(build.engine)
    assert found[found["status"] == "cliff"].empty
    # a Buildkite build's retried job is its attempt 0, the job that retried it attempt 1
    build.accuracy("mi355x", {8: 0.40}, attempt=0)
    assert frames.accuracy_parity(build.engine)["amd_value"].tolist() == [0.93]


def test_the_store_version_moves_with_every_write_and_with_no_read(build, tmp_path):
    """`tables.version` (what the app keys its cached views on) changes with each write to
    the store, whatever is written, and stays put while views only read it; a SQLite file
    renamed over the store is another store."""
    engine = build.engine
    url = engine.url.render_as_string(hide_password=False)
    build.tests("mi355x", {"test_a": "passed"})
    first = tables.version(url)
    assert first and tables.version(engine) == first
    # PostgreSQL's version is the server's log position, which the server's own work
    # (autovacuum, a checkpoint) moves too: views that wrote would move it every time, so a
    # move is asked again, a few times, before it is taken for theirs
    for attempt in range(3 if engine.dialect.name == "postgresql" else 1):
        before = tables.version(url)
        for view in ("scorecard", "alerts", "test_matrix", "regressions"):
            getattr(frames, view)(url)
        if tables.version(url) == before:
            break
    assert tables.version(url) == before
    first = before
    build.tests("mi355x", {"test_a": "failed"}, run="r2", day=1)
    second = tables.version(url)
    assert second != first
    build.runners([("mi355x", "online", False)])  # not a result: a runner snapshot
    assert tables.version(url) != second
    if engine.dialect.name == "sqlite":
        other = tmp_path / "other.db"
        Builder(make_engine(other)).tests("mi355x", {"test_a": "passed"})
        before = tables.version(url)
        engine.dispose()
        other.replace(engine.url.database)
        assert tables.version(url) != before
        assert tables.version(tmp_path / "absent.db") == "- -"


def test_regressions_find_a_step_and_a_new_failure(sbuild):
    rng = np.random.default_rng(3)
    for day in range(30):
        level = 100.0 if day < 20 else 90.0
        sbuild.bench("mi300x", level * (1 + rng.normal(0, 0.01)), run=f"r{day}", day=day)
        sbuild.bench("h100", 80 * (1 + rng.normal(0, 0.01)), run=f"r{day}", day=day)
        sbuild.tests("mi300x", dict(a="failed" if day >= 26 else "passed", b="passed"),
                     run=f"r{day}", commit=f"c{day}", day=day)
    df = frames.regressions(sbuild.engine)
    perf = df[df["kind"] == "performance"]
    assert len(perf) == 1
    row = perf.iloc[0]
    assert row.status == "regression" and row.hardware == "mi300x"
    assert row.when == pd.Timestamp("2026-11-22 02:00")  # day 20
    assert row["size"] == pytest.approx(-0.10, abs=0.02)
    tests = df[df["kind"] == "test"]
    assert list(tests["subject"]) == ["tests.kernels::a"]
    assert tests.iloc[0]["when"] == pd.Timestamp("2026-11-28 02:00")
    # the window filters findings by when they happened
    assert frames.regressions(sbuild.engine, since="2026-11-25")["kind"].tolist() == ["test"]


def test_flaky_tests_are_vendor_aware(sbuild):
    for day in range(6):
        # "r" fails then passes on rerun on AMD only; "s" is flaky on both; "t" broke for good
        sbuild.tests("mi300x", dict(r="passed", s="failed" if day % 2 else "passed",
                                    t="failed" if day >= 3 else "passed"),
                     run=f"r{day}", commit=f"c{day}", day=day, reruns={"r": 1})
        sbuild.tests("h100", dict(r="passed", s="passed" if day % 2 else "failed",
                                  t="passed"), run=f"r{day}", commit=f"c{day}", day=day)
        # a second attempt of the same commit on NVIDIA flips "s"
        sbuild.tests("h100", dict(s="passed" if day % 2 == 0 else "failed"), run=f"r{day}",
                     commit=f"c{day}", day=day, attempt=2)
        sbuild.tests("mi300x", dict(s="passed" if day % 2 else "failed"), run=f"r{day}",
                     commit=f"c{day}", day=day, attempt=2)
    df = frames.flaky_tests(sbuild.engine)
    labels = df.groupby("parity_key")["label"].first()
    assert labels["tests.kernels::r"] == "amd-only"
    assert labels["tests.kernels::s"] == "shared"
    assert "tests.kernels::t" not in labels  # a deterministic break is not flaky
    s = df[(df.parity_key == "tests.kernels::s") & (df.vendor == "amd")].iloc[0]
    assert s.same_commit_mixed == 6


def test_coverage_gaps(sbuild):
    sbuild.tests("h100", dict(a="passed"), suite="kernels")
    sbuild.tests("h100", dict(b="passed"), suite="spec_decode")
    sbuild.tests("mi300x", dict(a="passed"), suite="kernels")
    sbuild.tests("gfx1250-dcgpu-1", {}, suite="build")
    sbuild.accuracy("h100", {8: 0.94})
    sbuild.tests("h100", dict(a="passed"), suite="kernels", run="r0", day=-20)
    sbuild.tests("mi300x", dict(z="passed"), suite="legacy", run="r0", day=-20)
    df = frames.coverage(sbuild.engine)
    got = set(zip(df["finding"], df["suite"], df["hardware"]))
    assert ("no AMD lane", "spec_decode", "") in got
    assert ("builds but runs no tests", "", "mi455x") in got
    assert ("no accuracy gate", "", "mi300x") in got
    assert ("stale", "legacy", "mi300x") in got
    assert ("no AMD lane", "kernels", "") not in got


def test_fleet(sbuild):
    for i, q in enumerate((10.0, 20.0, 30.0)):
        sbuild.tests("mi300x", dict(a="passed"), suite=f"s{i}", queue_min=q)
    sbuild.runners([("mi300x", "online", True), ("mi300x", "online", False),
                    ("mi300x", "offline", False), ("h100", "online", False)])
    df = frames.fleet(sbuild.engine).set_index("hardware")
    assert df.loc["mi300x", ["runners", "online", "busy", "idle", "offline", "jobs"]].tolist() \
        == [3, 2, 1, 1, 1, 3]
    assert df.loc["mi300x", "queue_p50_min"] == pytest.approx(20.0)
    assert df.loc["h100", "jobs"] == 0


def test_fleet_pools_from_plain_frames_edges_included():
    """`fleet.fleet` on frames made by hand: a pool is a (vendor, hardware) pair and a row
    missing either is in none; a pool with runners and no job, or jobs and no runner, has
    its missing figures as 0 and missing values; queue time counts only jobs a runner
    picked up with both times, a start before creation as 0 minutes; quantiles are
    pandas' grouped ones; no runners or no jobs at all leave their columns empty."""
    from parity.dashboard import fleet as fleet_rules

    t0 = pd.Timestamp("2026-11-01 00:00")
    runners = pd.DataFrame({
        "vendor": ["amd", "amd", "amd", None, "nvidia"],
        "hardware": ["mi300x", "mi300x", "mi300x", "mi300x", "h100"],
        "runner_id": ["r1", "r2", None, "r4", "r5"],
        "status": ["online", "online", "offline", "online", None],
        "busy": [True, False, True, False, False],
        "seen_at": pd.Series([t0, t0 + pd.Timedelta(hours=1), pd.NaT, t0, pd.NaT],
                             dtype="datetime64[us]")})
    minutes = [10, 20, 40, -5, 30, 50, 60]
    jobs = pd.DataFrame({
        "vendor": ["amd"] * 4 + ["amd", "amd", None],
        "hardware": ["mi300x"] * 4 + ["mi355x", "mi355x", "mi355x"],
        "runner_name": ["a", "b", "", "c", None, "d", "e"],
        "runner_labels": ['["self-hosted", "mi300"]', None, "[]", None, '["mi355"]', None,
                          None],
        "job_created": pd.Series([t0] * 7, dtype="datetime64[us]"),
        "job_started": pd.Series([t0 + pd.Timedelta(minutes=m) for m in minutes],
                                 dtype="datetime64[us]")})
    jobs.loc[5, "job_started"] = pd.NaT
    df = fleet_rules.fleet(runners, jobs).set_index(["vendor", "hardware"])
    assert df.index.tolist() == [("amd", "mi300x"), ("amd", "mi355x"), ("nvidia", "h100")]
    counts = ["runners", "online", "busy", "idle", "offline", "jobs"]
    assert df.loc[("amd", "mi300x"), counts].tolist() == [2, 2, 1, 1, 1, 3]
    assert df.loc[("amd", "mi355x"), counts].tolist() == [0, 0, 0, 0, 0, 1]
    assert df.loc[("nvidia", "h100"), counts].tolist() == [1, 0, 0, 0, 1, 0]
    waits = pd.Series([10.0, 20.0, 0.0])  # the third job ran on no runner; -5 counts as 0
    for column, q in (("queue_p50_min", 0.5), ("queue_p90_min", 0.9), ("queue_p99_min", 0.99)):
        assert df.loc[("amd", "mi300x"), column] == waits.groupby([0, 0, 0]).quantile(q)[0]
        assert df.loc[("amd", "mi355x"), column] == 30.0
        assert math.isnan(df.loc[("nvidia", "h100"), column])
    assert df.loc[("amd", "mi300x"), "labels"] == "mi300"
    assert df.loc[("amd", "mi355x"), "labels"] == "mi355"
    assert pd.isna(df.loc[("nvidia", "h100"), "labels"])
    assert df.loc[("amd", "mi300x"), "last_seen"] == t0 + pd.Timedelta(hours=1)
    assert pd.isna(df.loc[("amd", "mi355x"), "last_seen"])
    assert pd.isna(df.loc[("nvidia", "h100"), "last_seen"])
    assert str(df["last_seen"].dtype) == "datetime64[us]"
    no_jobs = fleet_rules.fleet(runners, jobs.iloc[0:0])
    assert no_jobs["jobs"].tolist() == [0, 0]
    assert no_jobs[["queue_p50_min", "labels"]].isna().all().all()
    no_runners = fleet_rules.fleet(runners.iloc[0:0], jobs)
    assert no_runners["runners"].tolist() == [0, 0] and no_runners["last_seen"].isna().all()
    assert fleet_rules.fleet(runners.iloc[0:0], jobs.iloc[0:0]).empty


def test_fleet_counts_the_runners_of_each_scopes_latest_collection(build):
    """Snapshots pile up with every collection: a runner missing from its scope's latest
    one is gone (an ephemeral runner after its job) and is not counted from an older
    snapshot, and each scope counts from its own latest collection."""
    day1 = DAY0 + timedelta(hours=1)
    build.runners([("mi300x", "online", True), ("mi300x", "online", True),
                   ("mi300x", "online", False)], seen=DAY0)
    # an hour later the two busy ephemeral runners are gone, a new one is busy and the
    # idle one went offline
    build.runners([("mi300x", "offline", False)], seen=day1, first=2)
    build.runners([("mi300x", "online", True)], seen=day1, first=3)
    # another scope's latest collection is older, and still its fleet
    build.runners([("h100", "online", False), ("h100", "online", True)], seen=DAY0,
                  scope="org:nv")
    df = frames.fleet(build.engine).set_index("hardware")
    cols = ["runners", "online", "busy", "idle", "offline"]
    assert df.loc["mi300x", cols].tolist() == [2, 1, 1, 0, 1]
    assert df.loc["mi300x", "last_seen"] == pd.Timestamp(day1)
    assert df.loc["h100", cols].tolist() == [2, 2, 1, 1, 0]
    got = tables.runners(build.engine)
    assert got[["scope", "runner_id"]].values.tolist() == [
        ["org/x", "mi300x-2"], ["org/x", "mi300x-3"], ["org:nv", "h100-0"], ["org:nv", "h100-1"]]
    # within a window: each scope's latest collection in it
    early = tables.runners(build.engine, when=Period(DAY0, DAY0 + timedelta(minutes=30)))
    assert early.groupby("scope").size().to_dict() == {"org/x": 3, "org:nv": 2}


VIEWS = ["pass_rate_parity", "test_matrix", "amd_only_failures", "skip_parity", "coverage",
         "performance_parity", "performance_summary", "pareto", "accuracy_parity",
         "regressions", "flaky_tests", "fleet", "scorecard", "headline", "capability_parity",
         "sources", "rocm_stack", "compiler_pass_rate", "verdicts", "untrusted_runs", "alerts",
         "alert_log"]


@pytest.mark.parametrize("view", VIEWS)
def test_every_view_on_an_empty_or_missing_store(view, tmp_path, sqlite_engine):
    missing = getattr(frames, view)(tmp_path / "nothing-here.db")
    assert missing.empty and len(missing.columns) > 0
    chart = getattr(charts, view)(missing).to_dict()  # validated against the Vega-Lite schema
    assert "$schema" in chart
    assert getattr(frames, view)(sqlite_engine).empty


def test_the_dashboard_keeps_a_few_read_only_engines_and_disposes_the_others(tmp_path):
    """A store opened by its path has one read-only engine, kept for the next view; past
    `ENGINES_KEPT` the one asked for least recently is disposed, its pooled connections
    closed then rather than by the garbage collector (which warned of each, and the test
    it happened to run in failed on the warning)."""
    import sqlite3

    paths = [tmp_path / f"store{i}.db" for i in range(tables.ENGINES_KEPT + 1)]
    for path in paths:
        with sqlite3.connect(path) as made:
            made.execute("CREATE TABLE t (x INTEGER)")
        made.close()
    first = tables.open_store(paths[0])
    assert tables.open_store(str(paths[0])) is first
    with first.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM t").scalar() == 0
    pool = first.pool
    assert pool.checkedin() == 1
    for path in paths[1:]:
        tables.open_store(path)
    assert first.pool is not pool and pool.checkedin() == 0  # disposed: closed
    assert tables.open_store(paths[-1]) is tables.open_store(paths[-1])
    assert tables.open_store(paths[0]) is not first  # asked for again: opened again


def test_test_history_on_an_empty_or_missing_store(tmp_path, sqlite_engine):
    for store in (tmp_path / "nothing-here.db", sqlite_engine):
        history = frames.test_history(store, parity_key="tests.kernels::a")
        assert history.empty and list(history.columns) == frames.TEST_HISTORY_COLUMNS


def test_jobs_of_an_empty_window_are_typed_as_a_full_one(build):
    """The jobs' read joins each run's and hardware's fields to the jobs by id; a window
    without jobs gives the same columns, its times as datetimes, on both backends."""
    build.tests("h100", dict(a="passed"))
    build.tests("mi300x", dict(a="failed"), run="r2")
    full = tables.jobs(build.engine)
    assert full[["hardware", "vendor", "framework", "run_id"]].values.tolist() == [
        ["h100", "nvidia", "vllm", "r1"], ["mi300x", "amd", "vllm", "r2"]]
    assert full["run_url"].tolist() == ["https://example.test/vllm/r1",
                                        "https://example.test/vllm/r2"]
    empty = tables.jobs(build.engine, when=Period(DAY0 + timedelta(days=400), None))
    assert empty.empty and list(empty.columns) == list(full.columns)
    for c in ("run_at", "job_created", "job_started"):
        assert str(empty[c].dtype) == str(full[c].dtype) == "datetime64[us]", c


def test_jobs_texts_are_python_strings_and_pandas_option_is_left_as_it_was(build):
    """The jobs read holds its texts as Python strings (a composite view cuts that frame
    hundreds of times a call) without leaving pandas' process-wide option changed, also
    when the app's sessions read jobs in several threads at once; frames made outside it
    keep pandas' default."""
    import sys
    from concurrent.futures import ThreadPoolExecutor

    build.tests("h100", dict(a="passed"))
    build.tests("mi300x", dict(a="failed"), run="r2")
    before = pd.get_option("mode.string_storage")
    jobs = tables.jobs(build.engine)
    assert all(jobs[c].dtype == pd.StringDtype("python", na_value=np.nan)
               for c in ("hardware", "vendor", "framework", "run_id", "job_name", "suite"))
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch often: without the lock, the option is left
    try:  # changed nearly every time
        with ThreadPoolExecutor(8) as pool:
            frames_ = list(pool.map(lambda _: tables.jobs(build.engine), range(64)))
    finally:
        sys.setswitchinterval(switch)
    after = pd.get_option("mode.string_storage")
    pd.set_option("mode.string_storage", before)  # the tests after this one keep pandas' own
    assert after == before
    assert all(f.equals(jobs) for f in frames_)
    assert pd.Series(["x"]).dtype == pd.StringDtype(na_value=np.nan)


def test_jobs_of_a_run_replaced_during_the_read_are_left_out(build, monkeypatch):
    """The jobs' read reads the jobs, then their runs' fields. A run deleted in between (a
    Buildkite build dropped to be stored again with the jobs it gained) takes its jobs out
    of the frame instead of leaving them without a run, a commit or a time."""
    from sqlalchemy import delete

    from parity.db.models import CiRun

    build.tests("h100", dict(a="passed"))
    build.tests("mi300x", dict(a="failed"), run="r2")
    read = tables._read_plain

    def racing(engine, stmt, **kwargs):
        if "ci_run.repository" in str(stmt) and "ci_job" not in str(stmt):  # the runs' read
            with build.engine.begin() as conn:
                conn.execute(delete(CiRun).where(CiRun.run_id == "r2"))
        return read(engine, stmt, **kwargs)
    monkeypatch.setattr(tables, "_read_plain", racing)
    got = tables.jobs(build.engine)
    assert got["hardware"].tolist() == ["h100"]
    assert got["run_at"].notna().all() and got["commit"].notna().all()


def test_a_view_calls_reads_see_one_state_of_the_store(build):
    """Within one view call (`tables.one_read`) every read goes through one connection in
    one read transaction: a run stored between two of the call's reads is seen by neither,
    the next call sees it, and the connection is back in the pool when the call ends."""
    build.tests("h100", dict(a="passed"))
    build.tests("mi300x", dict(a="failed"), run="r2")
    with tables.one_read():
        assert len(tables.jobs(build.engine)) == 2
        build.tests("mi300x", dict(a="passed"), run="r3")  # another connection commits
        assert len(tables.jobs(build.engine, framework="vllm")) == 2  # not a cut: a read
        assert build.engine.pool.checkedout() == 1
    assert build.engine.pool.checkedout() == 0
    assert len(tables.jobs(build.engine, framework="vllm")) == 3


def test_a_failed_read_ends_the_view_calls_connection(build):
    """A statement that fails inside a view call (on PostgreSQL it aborts the transaction)
    ends that connection: the call's next read opens another and succeeds."""
    from sqlalchemy.exc import DBAPIError

    build.tests("h100", dict(a="passed"))
    with tables.one_read():
        with pytest.raises(DBAPIError):
            with tables.connection(build.engine) as conn:
                conn.exec_driver_sql("SELECT no_such_column FROM ci_job")
        assert build.engine.pool.checkedout() == 0
        assert len(tables.jobs(build.engine)) == 1
        with pytest.raises(DBAPIError):  # nested: the inner read ends it, the outer lets go
            with tables.connection(build.engine) as outer:
                with tables.connection(build.engine) as inner:
                    assert inner is outer
                    inner.exec_driver_sql("SELECT no_such_column FROM ci_job")
        assert build.engine.pool.checkedout() == 0
        assert len(tables.jobs(build.engine, framework="vllm")) == 1


def test_accuracy_rows_keep_the_joined_reads_types_with_and_without_a_gate(build):
    """The accuracy rows are read apart from their jobs and their booleans converted by
    Parity: a gate column with a NULL (a score without a threshold) stays objects (True,
    False, None) as SQLAlchemy's joined read gives it, on both backends."""
    from sqlalchemy import select

    from parity.db.models import AccuracyMetric as m
    from tests.builder import lane

    build.accuracy("mi300x", {1: 0.8, 8: 0.7})
    lane(build, "h100", "accuracy-gated", {"precision": "fp8"}, gate=0.95, run="r2")
    lane(build, "mi355x", "accuracy-gated", {"precision": "fp8"}, gate=0.5, run="r3")
    cols = [m.model, m.task, m.value, m.n, m.is_group, m.threshold, m.gate_passed, m.config]
    joined = tables._of_jobs(select(*cols, m.job_pk, *tables._ACCURACY_JOB_FIELDS), m.job_pk)
    expected = tables._labelled(tables._read(build.engine, joined))
    got = tables._metric_frame(build.engine, m, cols, None, None,
                               job_fields=tables._ACCURACY_JOB_FIELDS)
    assert sorted(map(str, got["gate_passed"])) == ["False", "None", "None", "True"]
    order = ["job_pk", "value"]
    assert_same_frame(got.sort_values(order, ignore_index=True),
                      expected.sort_values(order, ignore_index=True))
    with tables.one_read():  # the rows by the ids of the call's jobs, and their fields
        tables.jobs(build.engine)
        held = tables._metric_frame(build.engine, m, cols, None, None,
                                    job_fields=tables._ACCURACY_JOB_FIELDS)
    assert_same_frame(held.sort_values(order, ignore_index=True),
                      expected.sort_values(order, ignore_index=True))


def test_filters(sbuild):
    sbuild.tests("h100", dict(a="passed"), fw="sglang")
    sbuild.tests("mi300x", dict(a="passed"), fw="sglang")
    sbuild.tests("h100", dict(a="passed"))
    sbuild.tests("mi355x", dict(a="passed"))
    sbuild.tests("b200", dict(a="passed"))
    assert set(frames.pass_rate_parity(sbuild.engine, framework="sglang")["framework"]) == \
        {"sglang"}
    assert set(frames.pass_rate_parity(sbuild.engine, hardware="mi355x")["amd_hardware"]) == \
        {"mi355x"}
    pinned = frames.pass_rate_parity(sbuild.engine, framework="vllm", pairs={"mi355x": "h100"})
    assert pinned.iloc[0]["nvidia_hardware"] == "h100"
    assert frames.pass_rate_parity(sbuild.engine, week="2026-W40").empty
    assert len(frames.pass_rate_parity(sbuild.engine, week="2026-W45")) == 2
    with pytest.raises(ValueError, match="ISO week"):
        frames.pass_rate_parity(sbuild.engine, week="last week")


def test_new_failure_rules_with_no_streak_left_after_the_flaky_filter():
    from parity.dashboard import regressions as rules

    streaks = pd.DataFrame({"framework": ["vllm"], "hardware": ["mi300x"], "parity_id": [1],
                            "parity_key": ["t::a"], "streak": [1], "runs": [5],
                            "first_failing": [pd.Timestamp("2026-11-20")], "last_message": [""]})
    flaky = pd.DataFrame({"framework": ["vllm"], "hardware": ["mi300x"], "parity_id": [2]})
    out = rules.tests(streaks, {"mi300x": "amd"}, flaky=flaky, since=pd.Timestamp("2026-11-01"))
    assert out.empty and list(out.columns) == rules.COLUMNS


def test_sql_counts_equal_the_raw_results_count(build):
    """The store counts each pair's (AMD outcome, reference outcome) table in SQL; it equals
    the table counted from the raw results, shards (a test in two jobs of one run, worst
    outcome wins) and one-sided tests included, on both backends."""
    from parity.dashboard import outcomes, tables

    build.tests("h100", dict(a="passed", b="passed", c="passed", d="passed", f="skipped",
                             test_g_cuda="passed"))
    build.tests("h100", dict(a="failed"))  # a second report of the same job
    build.tests("mi300x", dict(a="passed", b="failed", c="skipped", e="passed", f="error",
                               test_g_rocm="failed"),  # one test under two vendor spellings
                reasons={"c": "not supported on ROCm"})
    aligned = frames._aligned(build.engine, None, None, None, None, None, None, None, True, 72)
    raw = tables.results(build.engine, frames._pair_jobs(aligned))
    key = ["pair", "amd", "ref"]
    in_sql = tables.pair_outcomes(build.engine, frames._sides(aligned)).sort_values(key, na_position="first")
    counted = outcomes.contingency(aligned, raw).sort_values(key, na_position="first")
    assert in_sql.reset_index(drop=True).astype(object).where(in_sql.notna().values, None) \
        .to_dict("records") == counted.reset_index(drop=True).astype(object) \
        .where(counted.notna().values, None).to_dict("records")
    assert int(in_sql["n"].sum()) == 7  # a b c d e f g
    failing = in_sql[(in_sql["amd"] == "failed") & (in_sql["ref"] == "passed")]
    assert int(failing["n"].sum()) == 2  # b, and g under its two spellings


def test_amd_only_failure_streak_of_a_vendor_named_test(build):
    """A test named with a vendor word (test_attn_rocm on AMD, test_attn_cuda on NVIDIA) is
    one test: its AMD-only failure streak is followed under its AMD spelling, on both
    backends, and the new-failure rule sees it."""
    for day in range(6):
        build.tests("h100", dict(test_attn_cuda="passed", b="passed"), run=f"r{day}",
                    commit=f"c{day}", day=day)
        build.tests("mi300x", dict(test_attn_rocm="failed" if day >= 2 else "passed",
                                   b="passed"), run=f"r{day}", commit=f"c{day}", day=day,
                    messages={"test_attn_rocm": f"HIP error {day}"})
    df = frames.amd_only_failures(build.engine)
    assert len(df) == 1
    row = df.iloc[0]
    assert row.parity_key == "tests.kernels::test_attn_{gpu}" and row.streak == 4
    assert row.runs == 6 and row.failures == 4 and row.last_message == "HIP error 5"
    found = frames.regressions(build.engine, kinds="test", since="2026-11-01")
    assert list(found["subject"]) == ["tests.kernels::test_attn_{gpu}"]
    assert found.iloc[0]["size"] == 4
