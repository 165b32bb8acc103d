"""One Altair chart per view, built from the frame of the same name in `frames`:

    charts.pass_rate_parity(frames.pass_rate_parity(framework="vllm"))

Charts take the DataFrame only (they never read the store), so a notebook can filter or
edit a frame before charting it. An empty frame gives an empty, valid chart."""
from __future__ import annotations

import math

import altair as alt
import numpy as np
import pandas as pd

VENDOR_COLOURS = alt.Scale(domain=["amd", "nvidia"], range=["#ed1c24", "#76b900"])
STATUS_COLOURS = alt.Scale(
    domain=["regression", "cliff", "drop", "new failure", "recovered", "drift", "improvement",
            "change"],
    range=["#d62728", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#bcbd22", "#2ca02c",
           "#7f7f7f"])
CHANGE_COLOURS = alt.Scale(domain=["regression", "recovery", "improvement", "change"],
                           range=["#d62728", "#2ca02c", "#1f77b4", "#7f7f7f"])


def _prep(df: pd.DataFrame, keep: list[str]) -> pd.DataFrame:
    """Only the columns a chart uses (JSON-safe), so that the spec stays small."""
    return df[[c for c in keep if c in df.columns]].copy()


MAX_SERIES = 12  # lines per history chart; filter the frame to see others


def _tips(df: pd.DataFrame) -> list[alt.Tooltip]:
    """A typed tooltip per column (types stated, so that an empty frame still charts)."""
    out = []
    for c in df.columns:
        kind = df[c].dtype.kind
        t = "T" if kind == "M" else "Q" if kind in "iuf" else "N"
        out.append(alt.Tooltip(f"{c}:{t}"))
    return out


def _title(text: str, df: pd.DataFrame) -> alt.TitleParams:
    return alt.TitleParams(text, subtitle="no data in this window" if df.empty else "")


TIME_TICKS = 10  # about this many dates on a time axis


def _dates(d: pd.DataFrame, *columns: str, title: str | None = None) -> alt.Axis:
    """A time axis labelled with dates ("Nov 16"), its ticks at midnights far enough apart
    that about `TIME_TICKS` fit the span of `columns` in `d`: every day or every few days,
    then every week or few weeks (on Sundays; days counted within a month put two ticks
    side by side at its end). Left to Vega, a span of one to two weeks had a tick every 12
    hours or every day, labelled "12 PM" or "Tue 17", and one run was labelled "02 AM":
    runs are nightly, and a date is what tells them apart. Runs of a single day are
    labelled with their date and time."""
    times = [pd.to_datetime(d[c], errors="coerce") for c in columns if c in d]
    times = pd.concat(times).dropna() if times else pd.Series(dtype="datetime64[ns]")
    span = (times.max() - times.min()) / pd.Timedelta(days=1) if len(times) else 0.0
    if span < 1:  # runs of one day: their hours tell them apart
        return alt.Axis(title=title, format="%b %d %H:%M", tickCount=3)
    days = max(1, math.ceil(span / TIME_TICKS))
    step = (alt.TimeIntervalStep(interval="day", step=days) if days <= 3 else
            alt.TimeIntervalStep(interval="week", step=max(1, round(days / 7))))
    return alt.Axis(title=title, format="%b %d", tickCount=step)


def pass_rate_parity(df: pd.DataFrame) -> alt.Chart:
    """Same-denominator AMD pass rate (with its Wilson interval) beside the NVIDIA rate on the
    same tests, per suite; one line per lane over time when the frame holds several runs."""
    d = _prep(df, ["framework", "suite", "amd_hardware", "nvidia_hardware", "amd_run_at",
                   "same_denominator_rate", "rate_lo", "rate_hi", "nvidia_rate",
                   "amd_plain_rate", "denominator", "alignment", "staleness_h"])
    if "suite" not in d:  # the by="hardware" roll-up
        d["suite"] = "all suites"
    d["lane"] = d["suite"].astype(str) + " · " + d["amd_hardware"].astype(str)
    trend = not d.empty and d.groupby("lane").size().max() > 1
    tip = _tips(d.drop(columns="lane"))
    if trend:
        return alt.Chart(d, title=_title("Same-denominator pass rate over time", d)).mark_line(
            point=True).encode(
            x=alt.X("amd_run_at:T", axis=_dates(d, "amd_run_at", title="AMD run")),
            y=alt.Y("same_denominator_rate:Q", title="AMD pass rate on NVIDIA's tests",
                    scale=alt.Scale(zero=False)),
            color="lane:N", tooltip=tip).properties(width=600, height=300)
    base = alt.Chart(d, title=_title("Same-denominator pass rate (AMD vs NVIDIA reference)", d))
    y = alt.Y("lane:N", title=None, sort="ascending")
    bars = base.mark_point(filled=True, size=80, color="#ed1c24").encode(
        x=alt.X("same_denominator_rate:Q", title="pass rate on the reference's tests",
                scale=alt.Scale(domain=[0, 1])), y=y, tooltip=tip)
    err = base.mark_rule(color="#ed1c24").encode(x="rate_lo:Q", x2="rate_hi:Q", y=y)
    ref = base.mark_tick(color="#76b900", thickness=3).encode(x="nvidia_rate:Q", y=y,
                                                               tooltip=tip)
    return (err + bars + ref).properties(width=500)


def test_matrix(df: pd.DataFrame) -> alt.Chart:
    """Tests per quadrant for each lane (stacked)."""
    d = _prep(df, ["framework", "suite", "amd_hardware", "quadrant"])
    d = d.groupby(["framework", "suite", "amd_hardware", "quadrant"], as_index=False).size() \
        if not d.empty else pd.DataFrame(columns=["framework", "suite", "amd_hardware",
                                                  "quadrant", "size"])
    d["lane"] = d["framework"].astype(str) + " " + d["suite"].astype(str) + " · " + \
        d["amd_hardware"].astype(str)
    return alt.Chart(d, title=_title("Test matrix: outcome quadrants per lane", d)).mark_bar() \
        .encode(y=alt.Y("lane:N", title=None), x=alt.X("size:Q", stack="normalize",
                                                        title="share of tests"),
                color=alt.Color("quadrant:N"),
                tooltip=["lane:N", "quadrant:N", alt.Tooltip("size:Q", title="tests")]) \
        .properties(width=500)


def amd_only_failures(df: pd.DataFrame, top: int = 25) -> alt.Chart:
    """The longest-running AMD-only failures (streak of consecutive failing runs)."""
    d = _prep(df.head(top), ["framework", "suite", "amd_hardware", "parity_key", "streak",
                             "first_failing", "last_message"])
    return alt.Chart(d, title=_title("AMD-only failures by streak", d)).mark_bar(
        color="#ed1c24").encode(
        y=alt.Y("parity_key:N", sort="-x", title=None), x=alt.X("streak:Q", title="failing runs"),
        tooltip=_tips(d)).properties(width=400)


def skip_parity(df: pd.DataFrame) -> alt.Chart:
    """Skips per hardware by reason category; vendor-gated categories stand out."""
    d = _prep(df, ["framework", "vendor", "hardware", "skip_category", "vendor_gated", "skips",
                   "ran_on_reference"])
    return alt.Chart(d, title=_title("Skips by reason", d)).mark_bar().encode(
        x=alt.X("skips:Q"), y=alt.Y("hardware:N", title=None),
        color=alt.Color("skip_category:N"), row=alt.Row("framework:N", title=None),
        tooltip=_tips(d)).properties(width=400)


def coverage(df: pd.DataFrame) -> alt.Chart:
    """Coverage gaps per framework and kind of finding."""
    d = _prep(df, ["framework", "finding", "suite", "hardware", "detail", "last_run"])
    d["what"] = (d["suite"].astype(str) + " " + d["hardware"].astype(str)).str.strip() \
        if not d.empty else pd.Series(dtype=str)
    return alt.Chart(d, title=_title("Coverage gaps", d)).mark_square(size=200).encode(
        x=alt.X("finding:N", title=None), y=alt.Y("what:N", title=None),
        color="framework:N", tooltip=_tips(d)).properties(width=300)


def performance_parity(df: pd.DataFrame) -> alt.Chart:
    """AMD performance relative to NVIDIA per matched config, with 95 % intervals; right of
    the line at 1 means AMD is better."""
    d = _prep(df, ["framework", "model", "metric", "config", "amd_hardware", "nvidia_hardware",
                   "perf_ratio", "perf_lo", "perf_hi", "amd_runs", "nvidia_runs"])
    d["pair"] = d["amd_hardware"].astype(str) + " vs " + d["nvidia_hardware"].astype(str)
    d["row"] = d["model"].astype(str).str.split("/").str[-1] + " " + d["metric"].astype(str) + \
        " " + d["config"].astype(str)
    base = alt.Chart(d)
    y = alt.Y("row:N", title=None)
    pts = base.mark_point(filled=True).encode(
        x=alt.X("perf_ratio:Q", title="AMD / NVIDIA (oriented: > 1 is AMD better)",
                scale=alt.Scale(zero=False)), y=y, color="pair:N", tooltip=_tips(d))
    err = base.mark_rule().encode(x="perf_lo:Q", x2="perf_hi:Q", y=y, color="pair:N")
    one = alt.Chart(pd.DataFrame({"x": [1.0]})).mark_rule(strokeDash=[4, 4]).encode(x="x:Q")
    return alt.layer(err, pts, one, title=_title("Performance ratio at matched configs", d)) \
        .properties(width=450)


def performance_summary(df: pd.DataFrame) -> alt.Chart:
    """Geometric mean of the oriented ratio per hardware pair and metric."""
    d = _prep(df, ["framework", "amd_hardware", "nvidia_hardware", "metric", "configs",
                   "geomean", "lo", "hi"])
    d["pair"] = d["amd_hardware"].astype(str) + " vs " + d["nvidia_hardware"].astype(str)
    base = alt.Chart(d)
    y = alt.Y("pair:N", title=None)
    bars = base.mark_bar().encode(x=alt.X("geomean:Q", title="geometric mean ratio"), y=y,
                                  color="metric:N", yOffset="metric:N",
                                  tooltip=_tips(d))
    err = base.mark_rule().encode(x="lo:Q", x2="hi:Q", y=y, yOffset="metric:N")
    return alt.layer(bars, err, title=_title("Performance per hardware pair", d)) \
        .properties(width=400)


def pareto(df: pd.DataFrame) -> alt.Chart:
    """Throughput per GPU against interactivity, one line per hardware and model; the
    frontier points are filled."""
    d = _prep(df, ["framework", "vendor", "hardware", "model", "precision", "isl", "osl",
                   "concurrency", "throughput_per_gpu", "interactivity", "frontier"])
    d["series"] = d["hardware"].astype(str) + " " + d["model"].astype(str).str.split("/").str[-1] \
        + " " + d["isl"].astype(str) + "/" + d["osl"].astype(str)
    return alt.Chart(d, title=_title("Throughput per GPU vs interactivity", d)).mark_line(
        point=True).encode(
        x=alt.X("interactivity:Q", title="interactivity (tok/s/user)"),
        y=alt.Y("throughput_per_gpu:Q", title="throughput per GPU (tok/s)"),
        color="series:N", strokeDash="vendor:N", order="concurrency:Q",
        tooltip=_tips(d)).properties(width=500, height=350)


def performance_history(df: pd.DataFrame) -> alt.Chart:
    """A series' value per run, its segment levels, and rules at the change points: red where
    a regression starts, green where one recovers."""
    d = _prep(df, ["hardware", "model", "metric", "config", "run_at", "commit", "value",
                   "change", "change_kind", "segment_median"])
    d["series"] = d["hardware"].astype(str) + " " + d["metric"].astype(str) + " " + \
        d["config"].astype(str)
    if d["series"].nunique() > MAX_SERIES:  # the series with changes first
        ranked = d.groupby("series")["change"].any().sort_values(ascending=False, kind="stable")
        d = d[d["series"].isin(ranked.index[:MAX_SERIES])]
    base = alt.Chart(d)
    line = base.mark_line(point=True).encode(
        x=alt.X("run_at:T", axis=_dates(d, "run_at", title="run")),
        y=alt.Y("value:Q", scale=alt.Scale(zero=False)),
        color="series:N", tooltip=_tips(d))
    level = base.mark_line(strokeDash=[4, 4], color="#555").encode(
        x="run_at:T", y="segment_median:Q", detail="series:N")
    rules = base.transform_filter(alt.datum.change).mark_rule(size=2).encode(
        x="run_at:T", color=alt.Color("change_kind:N", scale=CHANGE_COLOURS, title="change"))
    return alt.layer(line, level, rules, title=_title("Performance history", d)) \
        .properties(width=600, height=280)


def accuracy_parity(df: pd.DataFrame) -> alt.Chart:
    """Scores per concurrency with Wilson intervals, AMD beside NVIDIA; cliffs are marked."""
    cols = ["model", "task", "config", "concurrency", "amd_hardware", "nvidia_hardware",
            "cliff", "cliff_reason"]
    d = _prep(df, cols + ["amd_value", "amd_lo", "amd_hi", "nvidia_value", "nvidia_lo",
                          "nvidia_hi"])
    if d.empty:
        long = pd.DataFrame(columns=cols + ["vendor", "value", "lo", "hi", "panel"])
    else:
        amd = d[cols + ["amd_value", "amd_lo", "amd_hi"]].rename(
            columns={"amd_value": "value", "amd_lo": "lo", "amd_hi": "hi"}).assign(vendor="amd")
        nv = d[cols + ["nvidia_value", "nvidia_lo", "nvidia_hi"]].rename(
            columns={"nvidia_value": "value", "nvidia_lo": "lo", "nvidia_hi": "hi"}) \
            .assign(vendor="nvidia", cliff=False)
        long = pd.concat([amd, nv], ignore_index=True)
        long["panel"] = long["amd_hardware"] + " vs " + long["nvidia_hardware"].fillna("-") + \
            " · " + long["task"]
    base = alt.Chart(long)
    x = alt.X("concurrency:O")
    pts = base.mark_point(filled=True, size=60).encode(
        x=x, y=alt.Y("value:Q", scale=alt.Scale(zero=False), title="score"),
        color=alt.Color("vendor:N", scale=VENDOR_COLOURS),
        shape=alt.Shape("cliff:N", scale=alt.Scale(domain=[False, True],
                                                    range=["circle", "triangle-down"])),
        tooltip=_tips(long))
    err = base.mark_rule().encode(x=x, y="lo:Q", y2="hi:Q",
                                  color=alt.Color("vendor:N", scale=VENDOR_COLOURS))
    return alt.layer(err, pts).properties(width=260, height=200).facet(
        facet=alt.Facet("panel:N", title=None), columns=2,
        title=_title("Accuracy by concurrency (cliffs: ▼)", long))


FINDING_COLUMNS = ["kind", "status", "framework", "vendor", "hardware", "subject", "when",
                   "recovered", "lasted_runs", "size", "confidence", "detail"]


def _new_failures_by_day(d: pd.DataFrame) -> pd.DataFrame:
    """The findings with each lane's new test failures of one day as one point: a night
    that breaks a thousand tests is one mark saying how many (its first tests named in the
    tooltip, the table lists them all), not a thousand marks on one spot. At real volume a
    window holds thousands of new failures, and their marks were 1.1 MB of chart (2,570
    findings on the 50M store), drawn a third of a second after the page's tables."""
    new = (d["kind"] == "test") & (d["status"] == "new failure")
    if not new.any():
        return d.assign(tests=1)
    t = d[new].assign(day=pd.to_datetime(d.loc[new, "when"]).dt.floor("D"))
    keys = ["framework", "vendor", "hardware", "day"]
    day = t.sort_values("subject").groupby(keys, sort=False, dropna=False).agg(
        when=("when", "min"), tests=("subject", "size"), first=("subject", "first"),
        names=("subject", lambda s: ", ".join(s.head(3))), confidence=("confidence", "max"),
        size=("size", "max"), lasted_runs=("lasted_runs", "max")).reset_index()
    day = day.assign(
        kind="test", status="new failure", recovered=pd.NaT,
        subject=[f if n == 1 else f"{n} tests" for f, n in zip(day["first"], day["tests"])],
        detail=[f"failing since this day: {names}" + (", …" if n > 3 else "")
                for names, n in zip(day["names"], day["tests"])])
    return pd.concat([d[~new].assign(tests=1), day[FINDING_COLUMNS + ["tests"]]],
                     ignore_index=True)


def regressions(df: pd.DataFrame) -> alt.Chart:
    """Findings on a timeline per hardware, coloured by kind of finding; a regression that
    recovered is a bar from its start to its recovery. A lane's new test failures of one
    day are one point (`tests`: how many)."""
    d = _prep(df, FINDING_COLUMNS)
    if not d.empty:
        d = _new_failures_by_day(d)
    d["magnitude"] = d["size"].astype(float).abs() if not d.empty else pd.Series(dtype=float)
    base = alt.Chart(d)
    points = base.mark_point(filled=True).encode(
        x=alt.X("when:T", axis=_dates(d, "when", "recovered",
                                      title="when (a bar: until it recovered)")),
        y=alt.Y("hardware:N", title=None),
        color=alt.Color("status:N", scale=STATUS_COLOURS), shape="kind:N",
        size=alt.Size("confidence:Q", scale=alt.Scale(range=[40, 400])),
        tooltip=_tips(d))
    spans = base.transform_filter("datum.recovered").mark_rule(size=3).encode(  # not "" either
        x="when:T", x2="recovered:T", y=alt.Y("hardware:N", title=None),
        color=alt.Color("status:N", scale=STATUS_COLOURS), tooltip=_tips(d))
    return alt.layer(spans, points, title=_title("Regressions and other findings", d)) \
        .properties(width=600)


def flaky_tests(df: pd.DataFrame) -> alt.Chart:
    """Flip rate against failure rate per test and hardware, by vendor label."""
    d = _prep(df, ["framework", "parity_key", "vendor", "hardware", "label", "runs",
                   "failures", "rerun_passes", "flip_rate", "fail_rate"])
    return alt.Chart(d, title=_title("Flaky tests", d)).mark_point(filled=True).encode(
        x=alt.X("fail_rate:Q", title="failure rate"), y=alt.Y("flip_rate:Q", title="flip rate"),
        color="label:N", shape=alt.Shape("vendor:N"), tooltip=_tips(d)) \
        .properties(width=450)


def fleet(df: pd.DataFrame) -> alt.Chart:
    """Runners by state per pool, beside queue-time percentiles."""
    d = _prep(df, ["vendor", "hardware", "busy", "idle", "offline", "queue_p50_min",
                   "queue_p90_min", "queue_p99_min"])
    states = d.melt(id_vars=["vendor", "hardware"], value_vars=["busy", "idle", "offline"],
                    var_name="state", value_name="runners") if not d.empty else \
        pd.DataFrame(columns=["vendor", "hardware", "state", "runners"])
    runners = alt.Chart(states, title="Runners").mark_bar().encode(
        y=alt.Y("hardware:N", title=None), x="runners:Q",
        color=alt.Color("state:N", scale=alt.Scale(domain=["busy", "idle", "offline"],
                                                    range=["#1f77b4", "#2ca02c", "#7f7f7f"])),
        tooltip=["vendor:N", "hardware:N", "state:N", "runners:Q"])
    waits = d.melt(id_vars=["vendor", "hardware"],
                   value_vars=["queue_p50_min", "queue_p90_min", "queue_p99_min"],
                   var_name="percentile", value_name="minutes") if not d.empty else \
        pd.DataFrame(columns=["vendor", "hardware", "percentile", "minutes"])
    queue = alt.Chart(waits, title="Queue time (minutes)").mark_point(filled=True).encode(
        y=alt.Y("hardware:N", title=None), x="minutes:Q", color="percentile:N",
        tooltip=["vendor:N", "hardware:N", "percentile:N", "minutes:Q"])
    return alt.hconcat(runners, queue)


def scorecard(df: pd.DataFrame) -> alt.Chart:
    """Plain pass rate of each lane's latest run, per framework and hardware."""
    d = _prep(df, ["framework", "vendor", "hardware", "tests", "pass_rate", "run_at"])
    return alt.Chart(d, title=_title("Plain pass rate of the latest run", d)).mark_bar().encode(
        x=alt.X("pass_rate:Q", scale=alt.Scale(domain=[0, 1])), y=alt.Y("hardware:N", title=None),
        color=alt.Color("vendor:N", scale=VENDOR_COLOURS), row=alt.Row("framework:N", title=None),
        tooltip=_tips(d))


def headline(df: pd.DataFrame) -> alt.Chart:
    """Per framework × AMD hardware: coverage of the reference's suites, the same-denominator
    pass rate (with its interval) against the NVIDIA rate, and the performance ratio (with
    its interval; 1 is parity)."""
    d = _prep(df, ["framework", "amd_hardware", "nvidia_hardware", "coverage",
                   "same_denominator_rate", "rate_lo", "rate_hi", "nvidia_rate", "perf_ratio",
                   "perf_lo", "perf_hi", "accuracy_diff", "open_findings"])
    d["lane"] = d["framework"].astype(str) + " · " + d["amd_hardware"].astype(str) + " vs " + \
        d["nvidia_hardware"].astype(str)
    tip = _tips(d.drop(columns="lane"))
    base = alt.Chart(d)
    y = alt.Y("lane:N", title=None, sort="ascending")
    cover = base.mark_bar(color="#ed1c24", opacity=0.7).encode(
        x=alt.X("coverage:Q", title="coverage of the reference's suites",
                scale=alt.Scale(domain=[0, 1])), y=y, tooltip=tip).properties(
        width=160, title=_title("Coverage", d))
    rate = (base.mark_rule(color="#ed1c24").encode(x="rate_lo:Q", x2="rate_hi:Q", y=y)
            + base.mark_point(filled=True, size=70, color="#ed1c24").encode(
                x=alt.X("same_denominator_rate:Q", title="AMD pass rate on the reference's tests",
                        scale=alt.Scale(domain=[0, 1])), y=y, tooltip=tip)
            + base.mark_tick(color="#76b900", thickness=3).encode(x="nvidia_rate:Q", y=y,
                                                                   tooltip=tip)).properties(
        width=220, title=_title("Pass rate (red AMD, green NVIDIA)", d))
    perf = (base.mark_rule(color="#555").encode(x="perf_lo:Q", x2="perf_hi:Q", y=y)
            + base.mark_point(filled=True, size=70, color="#555").encode(
                x=alt.X("perf_ratio:Q", title="AMD / NVIDIA throughput", scale=alt.Scale(zero=False)),
                y=y, tooltip=tip)).properties(width=160, title=_title("Performance", d))
    return alt.hconcat(cover, rate.encode(y=alt.Y("lane:N", axis=None, sort="ascending")),
                       perf.encode(y=alt.Y("lane:N", axis=None, sort="ascending")))


OUTCOME_COLOURS = alt.Scale(domain=["passed", "failed", "error", "skipped", "xfailed", "xpassed"],
                            range=["#2ca02c", "#d62728", "#8c564b", "#bbbbbb", "#9edae5", "#ff7f0e"])


def test_history(df: pd.DataFrame) -> alt.Chart:
    """One test's outcome run by run on every hardware (a row per hardware)."""
    d = _prep(df, ["run_at", "framework", "vendor", "hardware", "suite", "outcome", "reruns",
                   "commit", "message"])
    return alt.Chart(d, title=_title("Test history on every hardware", d)).mark_square(
        size=90).encode(
        x=alt.X("run_at:T", axis=_dates(d, "run_at", title="run")),
        y=alt.Y("hardware:N", title=None),
        color=alt.Color("outcome:N", scale=OUTCOME_COLOURS),
        shape=alt.Shape("vendor:N"), tooltip=_tips(d)).properties(width=600)


CAPABILITY_COLOURS = alt.Scale(
    domain=["gated and passing", "gated and failing", "tested without accuracy gate", "not tested"],
    range=["#2ca02c", "#d62728", "#f2c14e", "#e6e6e6"])


def capability_parity(df: pd.DataFrame) -> alt.Chart:
    """Capability × hardware per framework, coloured by status; stale cells outlined."""
    d = _prep(df, ["framework", "capability", "parts", "vendor", "hardware", "status",
                   "last_run", "accuracy", "task", "stale"])
    return alt.Chart(d, title=_title("Capability parity", d)).mark_rect(
        stroke="#333").encode(
        x=alt.X("hardware:N", title=None, sort=alt.SortField("vendor")),
        y=alt.Y("capability:N", title=None, sort=alt.SortField("parts")),
        color=alt.Color("status:N", scale=CAPABILITY_COLOURS),
        strokeWidth=alt.condition("datum.stale", alt.value(2), alt.value(0)),
        row=alt.Row("framework:N", title=None), tooltip=_tips(d))


def sources(df: pd.DataFrame) -> alt.Chart:
    """Hours since each source last synced successfully, coloured by its last outcome; the
    rule marks the 24-hour line past which a source is stale."""
    d = _prep(df, ["name", "kind", "target", "status", "hours_since_success", "last_attempt_at",
                   "stale"])
    bars = alt.Chart(d, title="Hours since the last successful sync").mark_bar().encode(
        y=alt.Y("name:N", title=None), x=alt.X("hours_since_success:Q", title="hours"),
        color=alt.Color("status:N", scale=alt.Scale(domain=["ok", "stopped", "failed"],
                                                    range=["#2ca02c", "#ff7f0e", "#d62728"])),
        tooltip=_tips(d))
    rule = alt.Chart(pd.DataFrame({"hours": [24.0]})).mark_rule(strokeDash=[4, 4]).encode(
        x="hours:Q")
    return alt.layer(bars, rule)


def rocm_stack(df: pd.DataFrame) -> alt.Chart:
    """Pass rate of each component per architecture, night by night; nights that only
    built (no pass rate) show as hollow points on the axis."""
    d = _prep(df, ["night", "framework", "hardware", "build", "tested", "passed", "failed",
                   "pass_rate", "verdict"])
    lines = alt.Chart(d, title=_title("AMD software stack: pass rate per architecture", d)) \
        .mark_line(point=True).encode(
            x=alt.X("night:T", axis=_dates(d, "night")),
            y=alt.Y("pass_rate:Q", title="pass rate", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("hardware:N"), strokeDash=alt.StrokeDash("framework:N"),
            tooltip=_tips(d))
    idle = alt.Chart(d).transform_filter("datum.tested == 0").mark_point(
        shape="circle", filled=False, size=60).encode(
            x="night:T", y=alt.datum(0), color="hardware:N", tooltip=_tips(d))
    return alt.layer(lines, idle)


def compiler_pass_rate(df: pd.DataFrame) -> alt.Chart:
    """torch.compile pass rate per configuration, AMD beside NVIDIA."""
    d = _prep(df, ["suite", "compiler", "dtype", "mode", "shapes", "vendor", "hardware",
                   "models", "passed", "pass_rate"])
    if not d.empty:
        d["config"] = d["suite"] + " · " + d["compiler"] + " · " + d["dtype"] + " · " + d["mode"]
    else:
        d["config"] = pd.Series(dtype=str)
    return alt.Chart(d, title=_title("torch.compile pass rate (PyTorch dashboard's rule)", d)) \
        .mark_bar().encode(
            y=alt.Y("config:N", title=None), x=alt.X("pass_rate:Q", title="pass rate",
                                                     scale=alt.Scale(domain=[0, 1])),
            yOffset="hardware:N", color=alt.Color("vendor:N", scale=alt.Scale(
                domain=["amd", "nvidia"], range=["#ed1c24", "#76b900"])),
            tooltip=_tips(d))


def verdicts(df: pd.DataFrame) -> alt.Chart:
    """Each AMD lane's nights: complete verdicts in green, incomplete ones in red with why."""
    d = _prep(df, ["framework", "amd_hardware", "nvidia_hardware", "night", "complete",
                   "suites_reference", "suites_executed", "missing_suites", "why"])
    if not d.empty:
        d["lane"] = d["framework"] + " · " + d["amd_hardware"] + " vs " + d["nvidia_hardware"]
        d["verdict"] = np.where(d["complete"].astype(bool), "complete", "incomplete")
    else:
        d["lane"] = pd.Series(dtype=str)
        d["verdict"] = pd.Series(dtype=str)
    return alt.Chart(d, title=_title("Verdict completeness per night", d)).mark_rect().encode(
        x=alt.X("night:T", axis=_dates(d, "night")), y=alt.Y("lane:N", title=None),
        color=alt.Color("verdict:N", scale=alt.Scale(domain=["complete", "incomplete"],
                                                     range=["#2ca02c", "#d62728"])),
        tooltip=_tips(d))


def untrusted_runs(df: pd.DataFrame) -> alt.Chart:
    """Runs left out of the parity views, by reason."""
    d = _prep(df, ["repository", "untrusted", "run_id", "run_at"])
    if not d.empty:
        d["reason"] = d["untrusted"].str.split(":").str[0]
    else:
        d["reason"] = pd.Series(dtype=str)
    return alt.Chart(d, title=_title("Runs left out of the parity views", d)).mark_bar().encode(
        y=alt.Y("reason:N", title=None), x=alt.X("count():Q", title="runs"),
        color="repository:N", tooltip=["reason:N", "repository:N", "count():Q"])


def alerts(df: pd.DataFrame) -> alt.Chart:
    """Alerts firing now, by rule and priority."""
    d = _prep(df, ["rule", "priority", "framework", "hardware", "subject"])
    return alt.Chart(d, title=_title("Alerts firing now", d)).mark_bar().encode(
        y=alt.Y("rule:N", title=None), x=alt.X("count():Q", title="alerts"),
        color=alt.Color("priority:N", scale=alt.Scale(domain=["P1", "P2", "P3"],
                                                      range=["#d62728", "#ff7f0e", "#7f7f7f"])),
        tooltip=["rule:N", "priority:N", "count():Q"])


def alert_log(df: pd.DataFrame) -> alt.Chart:
    """Alerts opened and resolved, by priority."""
    d = _prep(df, ["change", "priority", "rule"])
    return alt.Chart(d, title=_title("Alerts opened and resolved", d)).mark_bar().encode(
        x=alt.X("count():Q", title="alerts"), y=alt.Y("change:N", title=None),
        color=alt.Color("priority:N", scale=alt.Scale(domain=["P1", "P2", "P3"],
                                                      range=["#d62728", "#ff7f0e", "#7f7f7f"])),
        tooltip=["change:N", "priority:N", "count():Q"])
