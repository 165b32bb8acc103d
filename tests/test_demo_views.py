"""Every situation the demo injects is found by the views, and the notebooks run on it."""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest
from nbclient import NotebookClient

from parity.dashboard import charts, frames, outcomes, tables
from tests.comparison import assert_same_frame

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def test_throughput_step_is_the_top_regression(demo_db):
    found = frames.regressions(demo_db, since="2026-11-01")
    regressions = found[found["status"] == "regression"]
    assert "mi355x" in set(regressions["hardware"])
    # beside the two injected changes (three metrics each move), the detector's false alarms
    # stay at its calibrated rate: at most 3 % of the demo's 390 series
    perf = found[found["kind"] == "performance"]
    injected = perf["hardware"].isin(["mi355x", "mi325x"]) & perf["metric"].isin(
        ["total_token_throughput", "output_throughput", "median_tpot_ms"]) & \
        perf["subject"].str.contains(" c64| c16")
    assert (~injected).sum() <= 0.03 * 390
    top = regressions[regressions["metric"] == "total_token_throughput"].iloc[0]
    assert "Llama-3.1-70B" in top["subject"] and "1024/1024 c64" in top["subject"]
    assert top["when"] == pd.Timestamp("2026-11-19 02:00")  # the first of the last 10 nights
    assert top["size"] == pytest.approx(-0.09, abs=0.02)
    history = frames.performance_history(demo_db, hardware="mi355x", model=top["model"],
                                         metric=top["metric"], match_key=top["match_key"])
    assert history.loc[history["change"], "run_at"].tolist() == [top["when"]]


def test_a_fixed_regression_shows_when_it_started_and_recovered(demo_db, capsys):
    """MI325X DeepSeek-R1 at concurrency 16 lost 8 % of its throughput for eight nights: the
    findings, the history and the weekly report show both ends of it."""
    from parity.dashboard import report

    found = frames.regressions(demo_db, since="2026-11-01", hardware="mi325x")
    back = found[(found["status"] == "recovered")
                 & (found["metric"] == "total_token_throughput")]
    assert len(back) == 1
    row = back.iloc[0]
    assert "DeepSeek-R1" in row["subject"] and "1024/1024 c16" in row["subject"]
    assert row["when"] == pd.Timestamp("2026-11-16 02:00")
    assert row["recovered"] == pd.Timestamp("2026-11-24 02:00")
    assert row["lasted_runs"] == 8 and row["size"] == pytest.approx(-0.08, abs=0.02)
    assert "recovered at run" in row["detail"]
    assert not ((found["status"] == "improvement")  # the recovery is not a second finding
                & (found["metric"] == "total_token_throughput")).any()
    history = frames.performance_history(demo_db, hardware="mi325x", model=row["model"],
                                         metric=row["metric"], match_key=row["match_key"])
    marks = history[history["change"]]
    assert marks[["run_at", "change_kind"]].values.tolist() == [
        [pd.Timestamp("2026-11-16 02:00"), "regression"],
        [pd.Timestamp("2026-11-24 02:00"), "recovery"]]
    assert charts.performance_history(history).to_dict()  # the chart draws both rules
    week = report.weekly(demo_db, week="2026-W48")  # it recovered in that week
    text = report.markdown(week)
    line = next(r for r in text.splitlines() if "recovered" in r and "DeepSeek-R1" in r
                and "total_token_throughput" in r)
    assert "2026-11-16" in line and "2026-11-24" in line and "| 8 |" in line
    _the_chart_gathers_each_lanes_new_failures_of_a_day(found)
    from parity.cli import main

    assert main(["--db", str(demo_db), "summary"]) == 0
    printed = [line for line in capsys.readouterr().out.splitlines()
               if line.lstrip().startswith("recovered") and "total_token_throughput" in line]
    assert len(printed) == 1 and "2026-11-16 2026-11-24" in printed[0]


@pytest.mark.parametrize("kinds", [("performance", "test", "accuracy"),
                                   ("performance", "accuracy")])
def test_amd_findings_alone_are_the_amd_rows_of_all_findings(demo_db, kinds):
    """The headline and the alerts ask only for AMD findings, which skips following the
    NVIDIA lanes and series: the rows are those of the full view on AMD hardware."""
    every = frames.regressions(demo_db, since="2026-11-01", kinds=kinds)
    amd = frames._regressions(demo_db, None, None, None, "2026-11-01", None, None, None,
                              0.02, kinds, amd_only=True)
    expect = every[(every["vendor"] == "amd") | (every["status"] == "cliff")]
    assert set(expect["kind"]) >= {"performance", "accuracy"}
    if "test" in kinds:  # the demo's NVIDIA lanes have new failures of their own
        assert (every["vendor"] != "amd").any()
    pd.testing.assert_frame_equal(amd.reset_index(drop=True), expect.reset_index(drop=True))


def test_the_headline_counts_findings_without_their_messages(demo_db):
    """The headline counts its open findings and reads no failure message for them: its
    findings are the full ones but for the new failures' messages, and the headline is
    the one it gives when handed the regressions view's frame."""
    args = (demo_db, None, None, None, "2026-11-01", None, None, None, 0.02,
            ("performance", "test", "accuracy"))
    full = frames._regressions(*args, amd_only=True)
    bare = frames._regressions(*args, amd_only=True, messages=False)
    new = full["status"] == "new failure"
    assert new.sum() > 0 and full.loc[new, "detail"].str.contains(r"in a row: .").all()
    assert (bare.loc[new, "detail"] == full.loc[new, "detail"].str.replace(
        r"(in a row: ).*", r"\1", regex=True)).all()
    pd.testing.assert_frame_equal(bare.drop(columns="detail"), full.drop(columns="detail"))
    pd.testing.assert_frame_equal(
        frames.headline(demo_db), frames.headline(demo_db, findings=frames.regressions(demo_db)))


def test_accuracy_cliff_at_one_concurrency_only(demo_db):
    acc = frames.accuracy_parity(demo_db)
    cliffs = acc[acc["cliff"]]
    assert cliffs[["amd_hardware", "concurrency"]].values.tolist() == [["mi355x", 64]]
    assert cliffs.iloc[0]["amd_value"] == pytest.approx(0.80, abs=0.03)


def test_coverage_gaps_and_vendor_gated_skips(demo_db):
    gaps = frames.coverage(demo_db, framework="vllm")
    got = set(zip(gaps["finding"], gaps["suite"], gaps["hardware"]))
    assert ("no AMD lane", "spec_decode", "") in got
    assert ("builds but runs no tests", "", "mi455x") in got
    assert ("no accuracy gate", "", "mi455x") in got
    skips = frames.skip_parity(demo_db)
    gated = skips[(skips["vendor"] == "amd") & skips["vendor_gated"]]
    assert gated["ran_on_reference"].sum() > 0
    assert not skips[(skips["vendor"] == "nvidia") & skips["vendor_gated"]]["skips"].any()


def test_amd_only_failures_and_pass_rate_gap(demo_db):
    parity = frames.pass_rate_parity(demo_db, by="hardware")
    ran = parity[parity["denominator"] > 0]
    assert len(ran) >= 3 and (ran["same_denominator_rate"] < ran["nvidia_rate"]).all()
    failures = frames.amd_only_failures(demo_db)
    assert failures.iloc[0]["last_message"].startswith("RuntimeError: HIP error")
    assert failures.iloc[0]["streak"] == 30


def test_flaky_labels_and_fleet(demo_db):
    flaky = frames.flaky_tests(demo_db)
    assert {"shared", "amd-only"} <= set(flaky["label"])
    fleet = frames.fleet(demo_db).set_index("hardware")
    assert fleet.loc["mi455x", "offline"] == 1
    assert fleet.loc["mi355x", "queue_p50_min"] > fleet.loc["b200", "queue_p50_min"]


@pytest.mark.parametrize("view", ["pass_rate_parity", "test_matrix", "amd_only_failures",
                                  "skip_parity", "coverage", "performance_parity",
                                  "performance_summary", "pareto", "accuracy_parity",
                                  "regressions", "flaky_tests", "fleet", "scorecard",
                                  "performance_history", "headline", "capability_parity"])
def test_every_chart_is_valid_vega_lite(view, demo_db):
    spec = getattr(charts, view)(getattr(frames, view)(demo_db)).to_dict()
    assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")


def _x_labels(chart) -> list[str]:
    """The x axis's tick labels of `chart` as Vega draws it (vl-convert's SVG)."""
    import vl_convert as vlc

    svg = vlc.vegalite_to_svg(chart.to_dict())
    axis = svg[svg.index('aria-label="X-axis'):]
    axis = axis[axis.index("role-axis-label"):axis.index("</g>", axis.index("role-axis-label"))]
    return re.findall(r">([^<]+)</text>", axis)


def test_time_axes_are_labelled_with_dates(demo_db):
    """Runs are nightly, and a date is what tells them apart: a time axis says "Nov 17",
    never "12 PM", "Tue 17" or "02 AM" (Vega's own choice for the regressions' two weeks
    and for runs of one day), with about ten ticks whatever the span."""
    date = r"[A-Z][a-z]{2} \d\d"
    found = frames.regressions(demo_db)
    key = frames.amd_only_failures(demo_db)["parity_key"].iloc[0]
    for chart in (charts.regressions(found),  # two weeks
                  charts.test_history(frames.test_history(demo_db, parity_key=key)),
                  charts.performance_history(frames.performance_history(demo_db))):
        labels = _x_labels(chart)
        assert 4 <= len(labels) <= 14 and all(re.fullmatch(date, t) for t in labels), labels
    one_night = found.assign(when=pd.Timestamp("2026-11-20 02:00"), recovered=pd.NaT)
    assert _x_labels(charts.regressions(one_night)) == ["Nov 20 02:00"]


@pytest.mark.parametrize("name", ["tour.ipynb", "regressions.ipynb"])
def test_notebook_executes(name, demo_db, monkeypatch):
    monkeypatch.setenv("PARITY_DB_URL", f"sqlite:///{demo_db}")
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3",  # raises on a cell's error
                   resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    charts_drawn = [o for o in outputs if "vega" in str(o.get("data", {}).get("text/html", ""))
                    or any("vegalite" in k for k in o.get("data", {}))]
    assert charts_drawn, "the notebook drew no chart"
    assert any("mi355x" in str(o.get("data", "")) for o in outputs), \
        "the notebook did not show the demo store's data"


def test_views_open_the_store_read_only(demo_db, tmp_path):
    """A path or URL is opened with SQLite mode=ro: the views work on a file nobody may
    write, and a write through their engine fails."""
    import shutil

    from sqlalchemy import text

    from parity.dashboard import tables

    copy = tmp_path / "ro.db"
    shutil.copy(demo_db, copy)
    copy.chmod(0o444)
    assert not frames.pass_rate_parity(copy, framework="vllm").empty
    with pytest.raises(Exception, match="readonly|read-only"):
        with tables.open_store(copy).begin() as conn:
            conn.execute(text("DELETE FROM ci_run"))
    # the connection itself refuses, not the file's permissions: a file anyone may write
    writable = tmp_path / "rw.db"
    shutil.copy(demo_db, writable)
    writable.chmod(0o666)
    before = writable.read_bytes()
    with pytest.raises(Exception, match="readonly|read-only"):
        with tables.open_store(writable).begin() as conn:
            conn.execute(text("DELETE FROM ci_run"))
    assert writable.read_bytes() == before


def test_a_read_only_postgresql_engine_refuses_writes(pg_engine):
    """PostgreSQL: the read-only engine's sessions are read-only transactions."""
    from sqlalchemy import text

    from parity.db.engine import make_engine

    ro = make_engine(pg_engine.url.render_as_string(hide_password=False), read_only=True)
    try:
        with ro.connect() as conn:
            assert conn.execute(text("SHOW default_transaction_read_only")).scalar() == "on"
        with pytest.raises(Exception, match="read-only transaction"):
            with ro.begin() as conn:
                conn.execute(text("CREATE TABLE parity_should_not_exist (x int)"))
    finally:
        ro.dispose()


def test_headline_on_the_demo(demo_db):
    head = frames.headline(demo_db, week="2026-W47").set_index(["framework", "amd_hardware"])
    mi355 = head.loc[("vllm", "mi355x")]
    assert mi355["nvidia_hardware"] == "b200" and mi355["coverage"] == 0.75  # no spec_decode lane
    assert mi355["perf_ratio"] < 1 < head.loc[("vllm", "mi300x"), "perf_ratio"]
    assert mi355["cliffs"] == 1 and mi355["open_findings"] >= 2  # the regression and the cliff
    assert head.loc[("vllm", "mi455x"), "coverage"] == 0  # builds, runs no tests
    assert pd.isna(head.loc[("vllm", "mi455x"), "same_denominator_rate"])
    rated = head.dropna(subset=["same_denominator_rate"])
    assert len(rated) >= 3 and (rated["rate_lo"] <= rated["same_denominator_rate"]).all()


@pytest.mark.parametrize("quadrant", [None, "amd-only fail", ["amd-only skip", "both pass"]])
def test_matrix_from_vectors_is_the_matrix_of_the_raw_rows(demo_db, quadrant):
    """The matrix reads each side's outcomes from the per-job vectors and only the rows
    that carry a message: it equals the matrix reduced from every raw row of the pairs,
    test for test, messages included. The one difference by design: a test skipped in one
    job of a run and run in another has the skip category of the row its outcome came
    from (none), not that of the skipped row."""
    from parity.dashboard import outcomes, tables

    new = frames.test_matrix(demo_db, quadrant=quadrant)
    aligned = frames._aligned(demo_db, None, None, None, None, None, None, None, True, 72)
    engine = tables.open_store(demo_db)
    old = outcomes.test_matrix(aligned, tables.results(engine, frames._pair_jobs(aligned)))
    if quadrant:
        old = old[old["quadrant"].isin(frames._names(quadrant))].reset_index(drop=True)
    assert len(new) > 100 and (new["amd_message"].notna().any() or quadrant)
    skipped = old["amd_outcome"] == "skipped"
    old.loc[~skipped, "amd_skip_category"] = None
    plain = {c: object for c in old.columns if c not in ("amd_run_at", "parity_id")}
    pd.testing.assert_frame_equal(new.astype(plain).where(new.notna(), None),
                                  old.astype(plain).where(old.notna(), None),
                                  check_dtype=False)


def test_failing_tests_from_vectors_are_the_failed_and_rerun_rows(demo_db):
    """The history views find the tests to follow in the per-job vectors: per job, exactly
    the tests with a failed or errored row (and, with `reruns`, a rerun row) among the raw
    results, named by parity id."""
    from parity.dashboard import outcomes, tables

    engine = tables.open_store(demo_db)
    jobs = tables.jobs(engine)["job_pk"]
    raw = tables.results(engine, jobs)
    failed = raw[raw["outcome"].isin(outcomes.FAILED)]
    rerun = raw[pd.to_numeric(raw["rerun_count"]).fillna(0) > 0]
    pairs = lambda df: set(zip(df["job_pk"].astype(int), df["parity_id"].astype(int)))  # noqa: E731
    assert len(failed) > 100 and len(rerun) > 10
    assert pairs(tables.failing_tests(engine, jobs)) == pairs(failed)
    assert pairs(tables.failing_tests(engine, jobs, reruns=True)) == pairs(failed) | pairs(rerun)
    assert tables.failing_tests(engine, []).empty


def test_reads_shared_within_a_view_call_equal_direct_reads(demo_db):
    """Inside one view call the jobs, benchmark and accuracy rows are read once for the
    widest window and narrower windows are cut from that read: each cut equals a direct read
    of its window (the metric reads have no order: compared sorted), a caller changing its
    frame changes no other caller's, and nothing is held once the call returns."""
    from datetime import timedelta

    from parity.dashboard import tables
    from parity.dashboard.period import Period

    engine = tables.open_store(demo_db)
    newest = tables.newest_run(engine)
    windows = [Period(newest - timedelta(days=d), newest - timedelta(days=e))
               for d, e in ((20, 0), (9, 2), (3, 1))] + [Period(newest - timedelta(days=5)),
                                                         Period(None, newest)]
    reads = {"jobs": lambda w, fw=None: tables.jobs(engine, framework=fw, when=w),
             "benchmarks": lambda w, fw=None: tables.benchmarks(engine, framework=fw, when=w),
             "accuracy": lambda w, fw=None: tables.accuracy(engine, framework=fw, when=w)}
    for name, read in reads.items():
        direct = [read(w) for w in windows] + [read(windows[1], "vllm")]
        assert all(len(d) for d in direct[:3]), name
        with tables.one_read():
            read(Period())  # the widest window first: the others are cut from it
            shared = [read(w) for w in windows] + [read(windows[1], "vllm")]
            shared[0]["run_at"] = None  # a caller's change stays its own
            shared[0].iloc[0, 0] = shared[0].iloc[1, 0]  # in place too (copy on write)
            again = read(windows[0])
        def same(a, b):
            if name != "jobs":
                by = [c for c in ("job_pk", "artifact_pk", "record_no", "task", "metric",
                                  "statistic", "filter") if c in a.columns]
                a, b = (f.sort_values(by).reset_index(drop=True) for f in (a, b))
            pd.testing.assert_frame_equal(a, b, obj=name)
        for d, s in zip(direct[1:], shared[1:]):
            same(d, s)
        same(direct[0], again)
    outside = tables.aliases(engine)
    assert outside  # the demo names some tests with a vendor word
    with tables.one_read():
        held = tables.aliases(engine)
        held.clear()  # a caller's change stays its own
        assert tables.aliases(engine) == outside
    assert tables._READS.get() is None
    frames.headline(demo_db)
    assert tables._READS.get() is None


def test_rows_kept_by_a_mask_are_a_slice_when_consecutive_and_the_masks_rows_always():
    """`tables.where` gives `df[keep]` (rows, order, index and types), as a slice of `df`
    when the kept rows are consecutive (no column copied), and a caller's change to what
    it gave stays its own."""
    df = pd.DataFrame({"n": np.arange(8, dtype=np.int64),
                       "s": pd.array(list("abcdefgh"), dtype="str"),
                       "t": pd.date_range("2026-01-01", periods=8, unit="us")},
                      index=np.arange(10, 18))
    patterns = {"all": np.ones(8, bool), "none": np.zeros(8, bool),
                "one run": np.r_[[False] * 2, [True] * 4, [False] * 2],
                "one row": np.eye(1, 8, 5, dtype=bool).ravel(),
                "gaps": np.array([1, 0, 1, 1, 0, 0, 1, 0], bool)}
    for name, keep in patterns.items():
        got = tables.where(df, keep)
        pd.testing.assert_frame_equal(got, df[keep], obj=name)
        if name in ("all", "one run", "one row"):
            assert np.shares_memory(got["n"].to_numpy(), df["n"].to_numpy()), name
        if len(got):
            got.iloc[0, 0] = -1
            got["s"] = "z"
    pd.testing.assert_frame_equal(df["n"].to_frame(), pd.DataFrame(
        {"n": np.arange(8, dtype=np.int64)}, index=np.arange(10, 18)))
    assert list(df["s"]) == list("abcdefgh")


def test_stored_times_parse_as_pandas_parses_them():
    """`tables._times` (NumPy's parse of SQLite's text) gives what pandas' ISO 8601 parse
    gives, index, name and missing times included, on the forms a store may hold, and
    refuses an offset as pandas does."""
    import datetime as dt

    def pandas_parse(column):
        return pd.to_datetime(column, format="ISO8601").astype("datetime64[us]")
    cases = {
        "stored": pd.Series(["2026-09-15 02:04:00.000000", "2026-09-15 02:04:00.123456",
                             None], dtype="str", name="job_started", index=[4, 2, 9]),
        "other forms": pd.Series(["2026-09-15 02:04:00", "2026-09-15T02:04:01",
                                  "2026-09-16", "2026-09-15 02:04:00.5",
                                  "2026-09-15 02:04:00.123456789"], dtype="str"),
        "none at all": pd.Series([None, None], dtype="str"),
        "empty": pd.Series([], dtype="str"),
        "objects": pd.Series([None, None], dtype=object),
        "postgresql": pd.Series([dt.datetime(2026, 9, 15, 2, 4, 0, 123456), None]),
    }
    for name, column in cases.items():
        pd.testing.assert_series_equal(tables._times(column), pandas_parse(column), obj=name)
    offset = pd.Series(["2026-09-15 02:04:00+00:00"], dtype="str")
    with pytest.raises(TypeError):
        pandas_parse(offset)
    with pytest.raises(TypeError):
        tables._times(offset)


@pytest.mark.parametrize("days, framework", [(60, None), (10, "vllm"), (3, ["sglang"]),
                                             (0, "nothing")])
def test_latest_jobs_hold_each_lanes_latest_run_and_only_the_windows_jobs(demo_db, days,
                                                                          framework):
    """`tables.latest_jobs` gives rows of the window's jobs, every job of each lane's
    (framework, hardware) latest run among them, and no job of a time no lane's latest
    run has."""
    from datetime import timedelta

    from parity.dashboard.period import Period

    engine = tables.open_store(demo_db)
    newest = tables.newest_run(engine)
    when = Period(newest - timedelta(days=days), None) if days else Period(newest, None)
    window = tables.jobs(engine, framework=framework, when=when)
    got = tables.latest_jobs(engine, framework=framework, when=when)
    assert list(got.columns) == list(window.columns)
    latest = window.groupby(["framework", "hardware"])["run_at"].transform("max")
    must = window[window["run_at"] == latest]
    by_pk = window.set_index("job_pk")
    pd.testing.assert_frame_equal(got.set_index("job_pk"), by_pk.loc[got["job_pk"]])
    assert set(must["job_pk"]) <= set(got["job_pk"])
    assert set(got["run_at"]) <= set(must["run_at"])
    if framework != "nothing":
        assert len(must) and len(got) < len(window) or days == 0
    else:
        assert got.empty


def test_metric_rows_take_their_jobs_from_the_calls_jobs_read(demo_db, monkeypatch):
    """Inside a view call that has read the jobs of a window, the benchmark and accuracy rows
    of that window (or a narrower one) take their jobs' ids and fields from that read
    rather than reading them again: the same frames as reads outside any call, row for row
    (the accuracy rows have no order of their own: compared sorted), and no job is read by
    id. A call that has not read a covering window reads them itself."""
    from datetime import timedelta

    from parity.dashboard import tables
    from parity.dashboard.period import Period

    engine = tables.open_store(demo_db)
    newest = tables.newest_run(engine)
    windows = [Period(newest - timedelta(days=d), newest - timedelta(days=e))
               for d, e in ((20, 0), (9, 2))] + [Period(None, newest)]
    asks = [(fw, w) for fw in (None, "vllm") for w in windows]
    reads = {"benchmarks": tables.benchmarks, "accuracy": tables.accuracy}
    direct = {(name, fw, w): read(engine, framework=fw, when=w)
              for name, read in reads.items() for fw, w in asks}
    assert all(len(d) for d in direct.values())
    by_id = []
    read_by_ids = tables._read_by_ids
    monkeypatch.setattr(tables, "_read_by_ids", lambda engine, stmt, column, ids, **kw: (
        by_id.append(column), read_by_ids(engine, stmt, column, ids, **kw))[1])
    shared = {}
    for fw, w in asks:
        with tables.one_read():
            tables.jobs(engine, framework=fw, when=Period())  # the widest window
            for name, read in reads.items():
                shared[(name, fw, w)] = read(engine, framework=fw, when=w)
    assert by_id and not [c for c in by_id if c.startswith("ci_job")]
    for key, d in direct.items():
        got = shared[key]
        if key[0] == "accuracy":
            order = ["job_pk", "model", "task", "metric", "filter", "concurrency", "value"]
            d, got = (f.sort_values(order, ignore_index=True) for f in (d, got))
        pd.testing.assert_frame_equal(d, got, obj=str(key))
    by_id.clear()
    with tables.one_read():  # a narrower jobs read covers neither: read by id as before
        tables.jobs(engine, when=windows[1])
        pd.testing.assert_frame_equal(tables.benchmarks(engine, when=windows[0]),
                                      direct[("benchmarks", None, windows[0])])
    assert [c for c in by_id if c.startswith("ci_job")]


def test_a_calls_test_ids_from_its_alias_map_read_the_same_rows(demo_db):
    """Inside a view call that holds the vendor spellings' map, the test ids of some parity
    ids are found from it without a read: every stored test with those parity ids, and
    beyond them only parity ids no stored test has; the messages read through them are
    the same rows."""
    from parity.dashboard import tables

    engine = tables.open_store(demo_db)
    aliases = tables.aliases(engine)
    assert aliases
    jobs = tables.jobs(engine)["job_pk"].tolist()
    failing = tables.failing_tests(engine, jobs)["parity_id"].unique().tolist()
    wanted = sorted(set(failing[:300]) | set(list(aliases.values())[:50]) | {12345})
    read = tables.test_pks(engine, wanted)
    with tables.one_read():
        tables.alias_map(engine)
        found = tables.test_pks(engine, wanted)
        messages = tables.messages(engine, jobs, wanted)
        worst = tables.failure_messages(engine, jobs, wanted)
    assert set(read) <= set(found) and len(read) > 100
    stored = set(tables.aliases(engine)) | set(read)
    assert not (set(found) - set(read)) & stored and 12345 in set(found) - set(read)
    pd.testing.assert_frame_equal(messages, tables.messages(engine, jobs, wanted))
    pd.testing.assert_frame_equal(worst, tables.failure_messages(engine, jobs, wanted))
    assert len(messages) > 100 and len(worst) > 100


def test_run_values_cut_from_a_wider_window_equal_the_windows_own(demo_db):
    """Inside one view call the performance values (`frames._run_values`) are computed once,
    for the widest window, and a narrower window's are cut from them: row for row, in the
    same order, the values computed from that window's rows alone, with or without a
    framework filter, and an empty window gives the empty frame."""
    from datetime import timedelta

    from parity.dashboard import tables
    from parity.dashboard.period import Period

    newest = tables.newest_run(tables.open_store(demo_db))
    windows = [Period(newest - timedelta(days=d), newest - timedelta(days=e))
               for d, e in ((74, 0), (60, 0), (14, 0), (9, 2))] + [
        Period(newest - timedelta(days=1000), newest - timedelta(days=999))]
    asks = [(fw, w) for fw in (None, "vllm", ["sglang", "vllm"]) for w in windows]
    direct = [frames._run_values(demo_db, fw, w) for fw, w in asks]
    assert all(len(d) for d in direct[:4]) and direct[4].empty
    with tables.one_read():
        for fw in (None, "vllm", ["sglang", "vllm"]):
            frames._run_values(demo_db, fw, Period())  # the widest first
        shared = [frames._run_values(demo_db, fw, w) for fw, w in asks]
    for (fw, w), d, s in zip(asks, direct, shared):
        pd.testing.assert_frame_equal(d, s, obj=f"{fw} {w}")


def test_benchmark_rows_of_some_hardware_are_the_full_reads_rows_on_it(demo_db):
    """`tables.benchmarks(hardware=...)` reads only the rows of jobs on those labels: the
    full read's rows on them, in its order, inside a view call or not and with or without
    a framework; the values of AMD's hardware alone (`frames._run_values(hardware=...)`)
    are the full values' AMD rows, and the alerts' findings and coverage, which read those
    alone, are the ones read from every row (less the configs only NVIDIA runs)."""
    from datetime import timedelta

    from parity.dashboard import tables
    from parity.dashboard.period import Period

    engine = tables.open_store(demo_db)
    newest = tables.newest_run(engine)
    when = Period(newest - timedelta(days=20), newest)
    jobs = tables.jobs(engine)
    amd = frozenset(jobs.loc[jobs["vendor"] == "amd", "hardware"])
    labels = sorted(amd)[:2] + ["no such hardware"]
    # a read's column types are inferred from its own rows, as any narrower read's are: a
    # dimension these rows never have is objects (None) where the full read's is NaN
    def same(got, want):
        loose = [f.astype(object).where(f.notna(), np.nan) for f in (got, want)]
        pd.testing.assert_frame_equal(*loose)
    for fw in (None, "vllm"):
        full = tables.benchmarks(engine, framework=fw, when=when)
        want = full[full["hardware"].isin(labels)].reset_index(drop=True)
        assert len(want) and len(want) < len(full)
        same(tables.benchmarks(engine, framework=fw, when=when, hardware=labels), want)
        with tables.one_read():
            tables.jobs(engine, framework=fw, when=Period())  # cut from the call's jobs
            same(tables.benchmarks(engine, framework=fw, when=when, hardware=labels), want)
        latest = tables.benchmarks(engine, framework=fw, when=when, latest=True)
        same(tables.benchmarks(engine, framework=fw, when=when, latest=True, hardware=labels),
             latest[latest["hardware"].isin(labels)].reset_index(drop=True))
    values = frames._run_values(demo_db, None, when)
    with tables.one_read():
        frames._run_values(demo_db, None, when)  # a full read held does not answer it
        mine = frames._run_values(demo_db, None, when, hardware=amd)
    same(mine, values[values["vendor"] == "amd"].reset_index(drop=True))
    args = (None,) * 7  # framework, hardware, suite, since, until, week, pairs
    found = frames._regressions(demo_db, *args, frames.MIN_EFFECT, ("performance", "accuracy"),
                                amd_only=True)
    assert (found["kind"] == "performance").any()
    pd.testing.assert_frame_equal(frames._regressions(
        demo_db, *args, frames.MIN_EFFECT, ("performance", "accuracy"), amd_only=True,
        amd=amd), found)
    gaps = frames.coverage(demo_db)
    assert (gaps["finding"] == "config without AMD run").any()
    pd.testing.assert_frame_equal(
        frames._coverage(demo_db, amd=amd),
        gaps[gaps["finding"] != "config without AMD run"].reset_index(drop=True))


@pytest.mark.parametrize("framework,since,until", [
    (None, None, None), (None, "2026-11-20", None), ("vllm", "2026-11-01", "2026-11-15"),
    (["sglang", "vllm"], None, "2026-11-10"), ("nothing", None, None)])
def test_benchmark_rows_read_in_parts_equal_one_joined_read(demo_db, framework, since, until):
    """`tables.benchmarks` reads the rows, their jobs' fields and the config texts apart;
    together they are exactly the rows of one read joining them, in the order they were
    stored (SQL gives no order of its own: the plan decides it)."""
    from sqlalchemy import select

    from parity.dashboard import tables
    from parity.dashboard.period import period
    from parity.db.models import BenchmarkMetric, CiRun

    engine, when = tables.open_store(demo_db), period(since, until, None)
    joined = tables._of_jobs(select(*tables.BENCHMARK_COLUMNS, BenchmarkMetric.job_pk,
                                    *tables._JOB_FIELDS), BenchmarkMetric.job_pk)
    joined = tables._trusted(tables._window(tables._frameworks(joined, framework),
                                            CiRun.created_at, when), engine) \
        .order_by(BenchmarkMetric.id)
    expected = tables._read_plain(engine, joined)
    got = tables._benchmark_rows(engine, tables.BENCHMARK_COLUMNS, framework, when)
    if framework == "nothing":
        assert expected.empty and got.empty
        return
    assert len(got) > 100 and got["config"].nunique() > 1
    # labelled once a job, as `_metric_frame` labels a joined read's rows
    assert_same_frame(got, tables._labelled(expected))


@pytest.mark.parametrize("framework,since,until", [
    (None, None, None), ("vllm", "2026-11-01", "2026-11-15"), ("nothing", None, None)])
def test_accuracy_rows_read_in_parts_equal_one_joined_read(demo_db, framework, since, until):
    """`tables.accuracy` reads the rows and their jobs' fields apart and converts the
    booleans itself; together they are the rows of one joined read through SQLAlchemy, with
    the same types (SQL gives no order of its own: both are put in one)."""
    from sqlalchemy import select

    from parity.dashboard import tables
    from parity.dashboard.period import period
    from parity.db.models import AccuracyMetric, CiRun

    engine, when = tables.open_store(demo_db), period(since, until, None)
    m = AccuracyMetric
    cols = [m.model, m.task, m.metric, m.filter, m.value, m.stderr, m.n, m.is_group,
            m.threshold, m.gate_passed, m.config, m.concurrency]
    joined = tables._of_jobs(select(*cols, m.job_pk, *tables._ACCURACY_JOB_FIELDS), m.job_pk)
    joined = tables._trusted(tables._window(tables._frameworks(joined, framework),
                                            CiRun.created_at, when), engine)
    expected = tables._labelled(tables._read(engine, joined))
    got = tables._metric_frame(engine, m, cols, framework, when,
                               job_fields=tables._ACCURACY_JOB_FIELDS)
    if framework == "nothing":
        assert expected.empty and got.empty and list(got.columns) == list(expected.columns)
        return
    assert len(got) > 50 and got["gate_passed"].nunique() == 2
    order = ["job_pk", "model", "task", "metric", "filter", "concurrency", "value"]
    assert_same_frame(got.sort_values(order, ignore_index=True),
                      expected.sort_values(order, ignore_index=True))


def test_last_failure_messages_read_by_job_or_by_test_are_the_same(demo_db):
    """The streaks' last-failure messages come from every notable row of the failing jobs
    when those rows are few, else from the wanted tests' rows only: both reads give every
    (hardware, test) the same message."""
    matrix = frames.test_matrix(demo_db, quadrant="amd-only fail")
    when = frames._recent(demo_db, None, None, None, frames.HISTORY_DAYS)
    jobs = frames._jobs(demo_db, None, None, when)
    wanted = matrix.rename(columns={"amd_hardware": "hardware"})
    by_job = frames._streaks(demo_db, jobs.assign(failed=0, error=0, flaky=0), wanted)
    by_test = frames._streaks(demo_db, jobs.assign(failed=10**9), wanted)
    pd.testing.assert_frame_equal(by_job, by_test)
    assert by_job["last_message"].str.startswith("RuntimeError: HIP error").sum() >= 30


def test_streaks_from_runs_by_tests_arrays_are_the_streaks_of_the_history(demo_db):
    """`frames._streaks` (each lane's tests as columns of a runs × tests array) gives every
    test the streak, times and counts that `outcomes.streaks` finds in its run-by-run
    history, and as last message that of its lane's latest failing raw row: for the
    AMD-only failures (a few lanes, one suite each) and for every failing test of every
    lane's latest run, both vendors, all suites."""
    engine = tables.open_store(demo_db)
    when = frames._recent(demo_db, None, None, None, frames.HISTORY_DAYS)
    jobs = frames._jobs(demo_db, None, None, when)
    amd_only = frames.test_matrix(demo_db, quadrant="amd-only fail") \
        .rename(columns={"amd_hardware": "hardware"})
    latest = jobs[jobs["run_at"] == jobs.groupby(outcomes.LANE)["run_at"].transform("max")]
    failing = tables.failing_tests(engine, latest["job_pk"]).merge(
        latest[["job_pk"] + outcomes.LANE], on="job_pk")
    keys = ["framework", "hardware", "parity_id"]
    for wanted in (amd_only, failing):
        want = outcomes.streaks(frames._history(demo_db, jobs, wanted))
        got = frames._streaks(demo_db, jobs, wanted)
        assert len(got) > 20
        assert got.equals(got.sort_values(["framework", "hardware", "parity_key"],
                                          ignore_index=True))
        got = got.sort_values(keys, ignore_index=True)
        pd.testing.assert_frame_equal(got.drop(columns="last_message"),
                                      want.sort_values(keys, ignore_index=True)
                                      .drop(columns="last_message"))
        assert frames._streaks(demo_db, jobs, wanted, messages=False)["last_message"] \
            .isna().all()
        # the message of each test's latest failing row in its lanes' jobs (later run,
        # then later job), from the raw rows
        lane_jobs = jobs.merge(wanted[outcomes.LANE].drop_duplicates(), on=outcomes.LANE)
        raw = tables.results(engine, lane_jobs["job_pk"], wanted["parity_id"].unique())
        raw = raw[raw["outcome"].isin(["failed", "error"])].merge(
            lane_jobs[["job_pk", "run_pk", "run_at"] + outcomes.LANE], on="job_pk") \
            .merge(wanted[outcomes.LANE + ["parity_id"]].drop_duplicates(),
                   on=outcomes.LANE + ["parity_id"])
        last = raw.sort_values(["run_at", "run_pk", "job_pk"], kind="stable") \
            .drop_duplicates(keys, keep="last")
        expected = got[keys].merge(last[keys + ["message"]], on=keys, how="left")["message"]
        assert got["last_message"].tolist() == \
            [None if pd.isna(m) else m for m in expected.tolist()]
        assert got["last_message"].notna().sum() >= 20
    # and whether each test is flaky there, as `outcomes.flakiness` finds it
    flaky = outcomes.flakiness(frames._history(demo_db, jobs, failing))
    got = frames._streaks(demo_db, jobs, failing, messages=False, flaky=True)
    assert got["flaky"].sum() >= 5
    assert set(map(tuple, got.loc[got["flaky"], keys].to_numpy().tolist())) == \
        set(map(tuple, flaky[keys].to_numpy().tolist()))


def test_a_lanes_arrays_keep_each_runs_worst_code_and_its_last_failing_job():
    """`frames._lane_arrays` fills a cell from every job of its run that ran the test, in
    any suite and under any spelling: the worst code, any rerun, and the last job (by id)
    in which the test failed, whatever order the suites and jobs come in."""
    from parity.db.vectors import OUTCOMES, Vector

    error, failed, passed = (OUTCOMES.index(o) for o in ("error", "failed", "passed"))
    at = np.array(["2026-01-01T00", "2026-01-02T00"], "datetime64[us]")
    # jobs 31-34: 31 and 33 of run 1, 32 and 34 of run 2; two sets of test ids
    jobs = {"job_pk": np.array([33, 31, 34, 32]), "run_pk": np.array([1, 1, 2, 2]),
            "run_at": at[[0, 0, 1, 1]], "commit": np.array(["a", "a", "b", "b"], object)}
    first, second = np.array([10, 11, 12]), np.array([11, 20])
    found = {31: Vector(first, np.array([failed, failed, failed], np.uint8), None,
                        np.array([0, 1, 0], np.uint8)),
             33: Vector(second, np.array([error, failed], np.uint8), None,
                        np.array([0, 0], np.uint8)),
             32: Vector(first, np.array([passed, passed, passed], np.uint8), None,
                        np.array([0, 0, 0], np.uint8)),
             34: Vector(second, np.array([passed, failed], np.uint8), None,
                        np.array([1, 0], np.uint8))}
    # suite "a" follows tests 10, 11 and 12 (12 a spelling of 10) in jobs 31 and 32; suite
    # "b" follows 11 and 20 in jobs 33 and 34: test 11 is one column of both, and failed in
    # run 1 in a job of each
    a = (np.array([1, 3]), np.array([10, 11, 12]), np.array([10, 11, 10]))
    b = (np.array([0, 2]), np.array([11, 20]), np.array([11, 20]))
    for suites in ({"a": a, "b": b}, {"b": b, "a": a}):
        got = frames._lane_arrays(jobs, suites, found, True)
        assert got["columns"].tolist() == [10, 11, 20]
        assert got["codes"].tolist() == [[failed, error, failed], [passed, passed, failed]]
        assert got["culprit"].tolist() == [[31, 33, 33], [0, 0, 34]]
        assert got["reruns"].tolist() == [[0, 1, 0], [0, 1, 0]]
        assert got["when"].tolist() == at.tolist()


def test_flaky_tests_from_runs_by_tests_arrays_are_the_flakiness_of_the_history(demo_db):
    """`frames._flakiness` (each lane's tests as columns of runs × tests arrays) gives the
    very frame `outcomes.flakiness` makes of the same tests' run-by-run history, rows and
    order alike: for the tests `flaky_tests` follows (every test that failed or was rerun
    in the window) and for every failing test of every lane's latest run."""
    engine = tables.open_store(demo_db)
    when = frames._recent(demo_db, None, None, None)
    jobs = frames._in(frames._jobs(demo_db, None, None, when), when)
    suspect = jobs[(jobs["flaky"] + jobs["failed"] + jobs["error"]) > 0]
    followed = tables.failing_tests(engine, suspect["job_pk"], reruns=True).merge(
        suspect[["job_pk"] + outcomes.LANE], on="job_pk")
    latest = jobs[jobs["run_at"] == jobs.groupby(outcomes.LANE)["run_at"].transform("max")]
    failing = tables.failing_tests(engine, latest["job_pk"]).merge(
        latest[["job_pk"] + outcomes.LANE], on="job_pk")
    for wanted in (followed, failing):
        got = frames._flakiness(demo_db, jobs, wanted)
        want = outcomes.flakiness(frames._history(demo_db, jobs, wanted))
        assert len(got) >= 10 and {"shared", "amd-only"} <= set(got["label"])
        pd.testing.assert_frame_equal(got, want)
    pd.testing.assert_frame_equal(frames.flaky_tests(demo_db), frames._flakiness(
        demo_db, jobs, followed))
    assert frames._flakiness(demo_db, jobs, followed.iloc[0:0]).empty


def test_failure_messages_are_the_reduced_notable_rows_messages(demo_db, tmp_path):
    """`tables.failure_messages` gives, per job and test, the message the reduction of its
    notable rows gives (the worst row with a message), with vendor spellings of a test
    folded into one parity id, and asked by test or by job alike."""
    from sqlalchemy import create_engine

    from parity.dashboard import outcomes, tables
    from tests.builder import Builder

    def expected(engine, job_pks):
        rows = tables.results(engine, job_pks)
        rows = rows[rows["outcome"].isin(["failed", "error"]) | (rows["rerun_count"] > 0)]
        red = outcomes.reduce_tests(rows, ["job_pk"])
        red = red[red["message"].notna()]
        return red[["job_pk", "parity_id", "message"]].sort_values(["job_pk", "parity_id"]) \
            .reset_index(drop=True).astype({"job_pk": np.int64, "parity_id": np.int64})

    def got(engine, job_pks, parity_ids=None):
        return tables.failure_messages(engine, job_pks, parity_ids).sort_values(
            ["job_pk", "parity_id"]).reset_index(drop=True)

    engine = tables.open_store(demo_db)
    jobs = frames._jobs(demo_db, None, None, frames._recent(demo_db, None, None, None))
    failing = jobs.loc[(jobs["failed"] + jobs["error"]) > 0, "job_pk"].tolist()[:60]
    want = expected(engine, failing)
    assert len(want) > 100 and want["message"].str.startswith("RuntimeError: HIP error").any()
    pd.testing.assert_frame_equal(got(engine, failing), want)
    some = want["parity_id"].unique()[:20]
    pd.testing.assert_frame_equal(got(engine, failing, some),
                                  want[want["parity_id"].isin(some)].reset_index(drop=True))
    # two vendor spellings of one test in one job: the worse row's message stands
    small = create_engine(f"sqlite:///{tmp_path / 'aliases.db'}")
    Builder(small).tests("mi300x", {"test_a[mi300x]": "failed", "test_a[h100]": "error",
                                    "test_b": "passed", "test_c": "failed"},
                         messages={"test_a[mi300x]": "AssertionError: off by one",
                                   "test_a[h100]": "RuntimeError: HIP error", "test_c": None},
                         reruns={"test_b": 1})
    with small.connect() as conn:
        job = conn.exec_driver_sql("SELECT id FROM ci_job").scalar()
    mine = got(small, [job])
    assert mine["message"].tolist() == ["RuntimeError: HIP error"]
    pd.testing.assert_frame_equal(mine, expected(small, [job]))
    assert got(small, []).empty and got(small, [job], [12345]).empty


def test_parity_keys_kept_in_a_process_are_what_the_store_says(demo_db, monkeypatch):
    """`tables.parity_keys` keeps the keys it has read; whatever it held before, and when
    the keys asked overflow what it keeps, it returns every asked id a test has, with its
    key, in id order, and leaves out ids no test has."""
    from parity.dashboard import tables

    engine = tables.open_store(demo_db)
    with engine.connect() as conn:
        truth = dict(conn.exec_driver_sql(
            "SELECT DISTINCT parity_id, parity_key FROM test_case").all())
    ids = sorted(truth)
    monkeypatch.setattr(tables, "_KEYS", [np.empty(0, np.int64), pd.array([], dtype="str"),
                                          None])
    monkeypatch.setattr(tables, "KEYS_KEPT", len(ids) // 2)

    def check(asked):
        got = tables.parity_keys(engine, asked)
        want = sorted({p for p in asked if p in truth})
        assert got["parity_id"].tolist() == want
        assert got["parity_key"].tolist() == [truth[p] for p in want]
        assert str(got["parity_key"].dtype) == "str" and got["parity_id"].dtype == np.int64
        # ranked: the same, with ranks that order the keys as texts sort (held keys change
        # between calls, so the ranks are those of whatever is held then)
        ranked = tables.parity_keys(engine, asked, ranked=True)
        pd.testing.assert_frame_equal(ranked[["parity_id", "parity_key"]], got)
        by_rank = ranked.sort_values("key_rank")["parity_key"].tolist()
        assert by_rank == sorted(truth[p] for p in want) and ranked["key_rank"].is_unique

    check(ids[: len(ids) // 3])  # read
    check(ids[: len(ids) // 4])  # held
    check(ids[len(ids) // 3: len(ids) // 2] + ids[:10])  # some read, some held
    check(ids[len(ids) // 2:] + ids[:5])  # overflows: starts again with these
    check([1, 2, 3] + ids[-3:])  # ids no test has are left out
    check([])
    # the app's sessions ask from several threads at once, overflowing the bound often
    import random
    from concurrent.futures import ThreadPoolExecutor

    def ask(seed):
        rng = random.Random(seed)
        for _ in range(40):
            check(rng.sample(ids, rng.randint(1, len(ids) // 2)))

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(ask, range(8)))


def _the_chart_gathers_each_lanes_new_failures_of_a_day(found: pd.DataFrame) -> None:
    """`charts.regressions` draws a lane's new test failures of one day as one mark that
    says how many, and every other finding as its own mark, a recovered regression's span
    among them."""
    spec = charts.regressions(found).to_dict()
    marks = pd.DataFrame(next(iter(spec["datasets"].values())))
    new = found[found["status"] == "new failure"]
    days = new.assign(day=new["when"].dt.floor("D")).groupby(
        ["framework", "hardware", "day"]).size()
    assert len(new) > len(days) > 0  # the demo breaks several tests of a lane at once
    drawn = marks[marks["status"] == "new failure"]
    assert len(drawn) == len(days) and drawn["tests"].sum() == len(new)
    assert sorted(drawn["tests"]) == sorted(days)
    several = drawn[drawn["tests"] > 1].iloc[0]
    assert several["subject"] == f"{several['tests']} tests"
    others = marks[marks["status"] != "new failure"]
    assert len(others) == (found["status"] != "new failure").sum()
    assert (others["tests"] == 1).all() and (others["recovered"] != "").sum() == \
        found["recovered"].notna().sum() >= 1
