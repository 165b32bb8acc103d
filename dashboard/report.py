"""The weekly parity report: its figures (from the views, for one week and the week before),
and its renderings: GitHub-flavoured Markdown short enough for an issue comment, one CSV
per table, JSON for automation, and a self-contained HTML page (charts embedded as
Vega-Lite with the Vega libraries inlined, so it opens with no network, on a phone too).

`notebooks`-style use and the `parity report weekly` command both go through the shipped
notebook `dashboard/weekly_report.ipynb`, which calls `weekly()` and `write()`; the same
store and week give the same files, apart from the `generated_at` stamp."""
from __future__ import annotations

import html as htmlmod
import json
import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import altair as alt
import pandas as pd

from parity.dashboard import charts, frames
from parity.db import untrusted
from parity.dashboard.period import Period, iso_week, period, week_period

FORMATS = ("html", "md", "csv", "json")
TOP = 10
HEADLINE_MD = [("framework", "framework"), ("amd_hardware", "AMD"), ("nvidia_hardware", "vs"),
               ("coverage", "coverage"), ("same_denominator_rate", "pass rate*"),
               ("rate_change", "Δ week"), ("nvidia_rate", "NVIDIA"),
               ("perf_ratio", "perf ratio"), ("accuracy_diff", "accuracy Δ"),
               ("verdict_completeness", "complete verdicts"), ("open_findings", "open findings"),
               ("from_run", "from run")]


@dataclass
class WeeklyReport:
    title: str
    week: str  # "2026-W48", or "since..until" for a custom window
    since: datetime
    until: datetime
    frameworks: list[str]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    generated_at: str = ""

    @property
    def has_data(self) -> bool:
        return not self.tables["headline"].empty


def _window(week: str | None, since, until) -> tuple[Period, str]:
    if week:
        when = week_period(week)
        return when, week
    if since or until:
        when = period(since, until, None)
        return when, f"{when.start:%Y-%m-%d}..{when.end:%Y-%m-%d}"
    today = datetime.now(timezone.utc).replace(tzinfo=None)
    last = iso_week(today - pd.Timedelta(days=7))  # the last whole week
    return week_period(last), last


def weekly(store=None, *, week: str | None = None, since=None, until=None,
           framework=None, top: int = TOP) -> WeeklyReport:
    """The report's tables for a week (default: last whole ISO week) or a window."""
    when, label = _window(week, since, until)
    prev = when.previous()
    kw = dict(framework=framework, since=when.start, until=when.end)
    findings = frames.regressions(store, **kw)
    head = frames.headline(store, **kw, findings=findings)
    # last week's same-denominator rate: the per-hardware roll-up is the headline's rate
    before = frames.pass_rate_parity(store, framework=framework, since=prev.start,
                                     until=prev.end, by="hardware")
    if not head.empty:
        keys = ["framework", "amd_hardware", "nvidia_hardware"]
        last = before[keys + ["same_denominator_rate"]].rename(
            columns={"same_denominator_rate": "last_week_rate"}) if not before.empty else \
            pd.DataFrame(columns=keys + ["last_week_rate"])
        head = head.merge(last, on=keys, how="left")
        head["rate_change"] = head["same_denominator_rate"] - head["last_week_rate"]
        # every row says which run its figures come from (`parity explain` lists the files)
        head["from_run"] = [_run_link(c, u) for c, u in zip(head["commit"], head["run_url"])]
    found = findings
    if not found.empty:
        found = found[found["status"].isin(("regression", "cliff", "drop", "new failure",
                                            "recovered"))
                      & (found["vendor"] == "amd")].head(top * 3)
    failures = frames.amd_only_failures(store, **kw)
    gaps = frames.coverage(store, **kw)
    fleet = frames.fleet(store, since=when.start, until=when.end)
    caps = frames.capability_parity(store, **kw)
    alert_log = frames.alert_log(store, since=when.start, until=when.end)
    names = sorted(set(head["framework"])) if not head.empty else (
        [framework] if isinstance(framework, str) else list(framework or []))
    return WeeklyReport(
        title=f"Parity report, {label}", week=label, since=when.start, until=when.end,
        frameworks=names, generated_at=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        tables={"headline": head.reset_index(drop=True), "regressions": found.reset_index(drop=True),
                "amd_only_failures": failures.head(top).reset_index(drop=True),
                "coverage_gaps": gaps.reset_index(drop=True), "fleet": fleet.reset_index(drop=True),
                "capabilities": caps.reset_index(drop=True),
                "capability_grid": capability_grid(caps), "alerts": alert_log})


def notebook_renderer(spec: dict, **_meta) -> dict:
    """An Altair renderer for the report notebook: the spec under JupyterLab's Vega-Lite
    mimetype (a valid nbformat output, unlike Altair 6's `mimetype` renderer) plus text, and
    no random element ids, so that the same week gives the same notebook."""
    title = spec.get("title") or ""
    return {"application/vnd.vegalite.v5+json": spec,
            "text/plain": f"<chart {title if isinstance(title, str) else ''}>".strip()}


alt.renderers.register("parity-report", notebook_renderer)


def figures(report: WeeklyReport) -> dict[str, alt.Chart]:
    """One chart per table that has one."""
    t = report.tables
    return {"headline": charts.headline(t["headline"]),
            "regressions": charts.regressions(t["regressions"]),
            "amd_only_failures": charts.amd_only_failures(t["amd_only_failures"]),
            "capabilities": charts.capability_parity(t["capabilities"]),
            "fleet": charts.fleet(t["fleet"])}


# -- Markdown -----------------------------------------------------------------------------------

def _fmt(value, kind: str = "") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NaT \
            or value is pd.NA:
        return "–"
    if kind == "pct":
        return f"{100 * value:.1f} %"
    if kind == "pp":
        return f"{100 * value:+.1f} pp"
    if kind == "ratio":
        return f"{value:.3f}"
    if isinstance(value, pd.Timestamp):
        return f"{value:%Y-%m-%d}"
    if isinstance(value, float):
        return f"{value:.4g}"
    if kind == "own":  # Markdown Parity wrote itself (its links to runs)
        return str(value)
    if kind == "literal":  # free text from CI runs: a code span renders nothing live
        return untrusted.literal(value, cap=90)
    return untrusted.plain(value, cap=90)


ALERTS_MD = [("change", "change"), ("priority", "priority"), ("rule", "rule"),
             ("framework", "framework"), ("hardware", "hardware"), ("subject", "what"),
             ("at", "when"), ("issue_number", "issue")]
# a regression that recovered shows both ends: when it started, when it came back, how long
REGRESSIONS_MD = [("status", "status"), ("framework", "framework"), ("hardware", "hardware"),
                  ("subject", "what"), ("when", "when"), ("recovered", "recovered"),
                  ("lasted_runs", "lasted (runs)"), ("size", "size")]
# free text that comes from CI runs (anyone's pull request can put it there)
LITERAL = ("parity_key", "last_message", "subject", "detail", "suite")  # + alert subjects
KINDS = {**dict.fromkeys(LITERAL, "literal"), "from_run": "own",
         "coverage": "pct", "same_denominator_rate": "pct", "nvidia_rate": "pct",
         "verdict_completeness": "pct",
         "rate_change": "pp", "accuracy_diff": "pp", "perf_ratio": "ratio", "size": "pct"}


def _numeric(df: pd.DataFrame, c: str) -> bool:
    return KINDS.get(c) not in (None, "literal", "own") or df[c].dtype.kind in "iuf"


_URL = re.compile(r"^https?://[A-Za-z0-9.-]+(?::\d+)?/[^\s()<>\[\]`|]*$")


def _run_link(commit, url) -> str:
    """A link to the run a row comes from: only a plain http(s) URL, labelled by the hex
    commit; anything else is a dash (the URL came from a CI API)."""
    if not isinstance(url, str) or not _URL.match(url):
        return "—"
    label = re.sub(r"[^0-9a-f]", "", str(commit or "").lower())[:7] or "run"
    return f"[{label}]({url})"


def _md_table(df: pd.DataFrame, columns: list[tuple[str, str]]) -> list[str]:
    cols = [(c, t) for c, t in columns if c in df.columns]
    lines = ["| " + " | ".join(t for _, t in cols) + " |",
             "|" + "|".join("---:" if _numeric(df, c) else "---" for c, _ in cols) + "|"]
    for _, row in df.iterrows():
        lines.append("| " + " | ".join(_fmt(row[c], KINDS.get(c, "")) for c, _ in cols) + " |")
    return lines


SYMBOL = {"gated and passing": "✅", "gated and failing": "❌",
          "tested without accuracy gate": "⚪", "not tested": "—"}


def capability_grid(caps: pd.DataFrame) -> pd.DataFrame:
    """Capability rows × hardware columns per framework, cells as status symbols (stale
    cells get a trailing `*`); only rows some hardware tests."""
    if caps.empty:
        return pd.DataFrame(columns=["framework", "capability"])
    tested = caps.groupby(["framework", "capability"])["status"].transform(
        lambda s: (s != "not tested").any())
    c = caps[tested].assign(cell=lambda d: d["status"].map(SYMBOL) + d["stale"].map(
        {True: "*", False: ""}))
    if c.empty:
        return pd.DataFrame(columns=["framework", "capability"])
    order = c.sort_values(["vendor", "hardware"])["hardware"].drop_duplicates().tolist()
    grid = c.pivot_table(index=["framework", "parts", "capability"], columns="hardware",
                         values="cell", aggfunc="first").reset_index()
    return grid[["framework", "capability"] + [h for h in order if h in grid.columns]] \
        .fillna("")


def markdown(report: WeeklyReport) -> str:
    """GitHub-flavoured Markdown for an issue comment."""
    t = report.tables
    out = [f"## {report.title}", "",
           f"Window {report.since:%Y-%m-%d} to {report.until:%Y-%m-%d} (UTC). "
           f"Generated by Parity at {report.generated_at}.", ""]
    if not report.has_data:
        out += ["**No data for this week**: no AMD lane with a matching NVIDIA reference ran in "
                "this window. Load data with `parity collect github` or `parity ingest`.", ""]
        return "\n".join(out) + "\n"
    out += ["### Headline", ""] + _md_table(t["headline"], HEADLINE_MD) + [
        "", "\\* same-denominator pass rate: of the tests the NVIDIA reference ran, the share that "
        "passed on AMD (skipped, missing or failing on AMD counts against AMD). Δ week: change "
        "from the week before. Perf ratio: geometric mean AMD/NVIDIA throughput at matched "
        "configs (1 is parity). Accuracy Δ: mean AMD − NVIDIA score, percentage points.", ""]
    out += ["### Regressions and cliffs (new, or recovered this week)", ""]
    if t["regressions"].empty:
        out += ["None this week.", ""]
    else:
        out += _md_table(t["regressions"], REGRESSIONS_MD) + [""]
    out += [f"### Top AMD-only failures", ""]
    if t["amd_only_failures"].empty:
        out += ["None.", ""]
    else:
        out += _md_table(t["amd_only_failures"], [
            ("framework", "framework"), ("amd_hardware", "AMD"), ("parity_key", "test"),
            ("streak", "streak"), ("first_failing", "failing since"),
            ("last_message", "last message")]) + [""]
    out += ["### Coverage gaps", ""]
    if t["coverage_gaps"].empty:
        out += ["None.", ""]
    else:
        out += _md_table(t["coverage_gaps"], [("framework", "framework"), ("finding", "finding"),
                                              ("suite", "suite"), ("hardware", "hardware"),
                                              ("detail", "detail")]) + [""]
    out += ["### Capability parity", ""]
    grid = t["capability_grid"]
    if grid.empty:
        out += ["No distributed-inference capability was exercised this week.", ""]
    else:
        out += _md_table(grid, [(c, c) for c in grid.columns]) + [
            "", "✅ gated and passing · ❌ gated and failing · ⚪ tested without accuracy gate · "
            "— not tested · \\* stale. A combination counts only when one lane ran all of it.", ""]
    out += ["### Alerts opened and resolved", ""]
    if t["alerts"].empty:
        out += ["None recorded this week (`parity alerts`).", ""]
    else:
        out += _md_table(t["alerts"], ALERTS_MD) + [""]
    out += ["### Fleet", ""]
    if t["fleet"].empty:
        out += ["No runner snapshot in this window (`parity collect runners`).", ""]
    else:
        out += _md_table(t["fleet"], [("vendor", "vendor"), ("hardware", "hardware"),
                                      ("runners", "runners"), ("online", "online"),
                                      ("busy", "busy"), ("offline", "offline"),
                                      ("queue_p50_min", "queue p50 (min)"),
                                      ("queue_p90_min", "queue p90 (min)")]) + [""]
    return "\n".join(out) + "\n"


COMMENT_LIMIT = 65_536  # characters GitHub accepts in one comment


def comment_body(md: str, limit: int = COMMENT_LIMIT) -> str:
    """The Markdown as an issue comment: cut, with a note, if GitHub would refuse it."""
    if len(md) <= limit:
        return md
    return md[: limit - 200] + "\n\n(cut to fit a GitHub comment; the full report is in report.md)\n"


# -- JSON and CSV -------------------------------------------------------------------------------

def _records(df: pd.DataFrame) -> list[dict]:
    return json.loads(df.to_json(orient="records", date_format="iso", double_precision=6))


def as_json(report: WeeklyReport) -> dict:
    return {"title": report.title, "week": report.week,
            "since": report.since.isoformat(), "until": report.until.isoformat(),
            "frameworks": report.frameworks, "has_data": report.has_data,
            "generated_at": report.generated_at,
            "tables": {k: _records(v) for k, v in report.tables.items()}}


# -- HTML ---------------------------------------------------------------------------------------

_CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;
max-width:1100px;padding:12px;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;font-size:.9em}td,th{padding:4px 8px;border-bottom:1px solid #eee;
text-align:left;white-space:nowrap}td.n{text-align:right}.chart{margin:8px 0}
.note{color:#666;font-size:.85em}
"""


def _html_table(df: pd.DataFrame, columns: list[tuple[str, str]]) -> str:
    cols = [(c, t) for c, t in columns if c in df.columns]
    head = "".join(f"<th>{htmlmod.escape(t)}</th>" for _, t in cols)
    body = []
    for _, row in df.iterrows():
        cells = "".join(
            f'<td class="{"n" if _numeric(df, c) else ""}">'
            f'{htmlmod.escape(_fmt(row[c], KINDS.get(c, "")).replace(chr(92) + "|", "|"))}</td>'
            for c, _ in cols)
        body.append(f"<tr>{cells}</tr>")
    return f'<div class="scroll"><table><tr>{head}</tr>{"".join(body)}</table></div>'


def _bundle() -> str:
    import vl_convert as vlc

    return vlc.javascript_bundle(
        "for (const [id, spec] of Object.entries(window.PARITY_CHARTS || {})) {\n"
        "  vegaEmbed('#' + id, spec, {actions: false, renderer: 'svg'})\n"
        "    .then(() => document.getElementById(id).setAttribute('data-rendered', 'true'))\n"
        "    .catch((e) => console.error(e));\n}\n")


def html(report: WeeklyReport) -> str:
    """A self-contained page: no request leaves it."""
    t = report.tables
    specs = {f"chart-{k}": c.to_dict() for k, c in figures(report).items()} if report.has_data else {}
    e = htmlmod.escape
    parts = [f"<h1>{e(report.title)}</h1>",
             f'<p class="note">Window {report.since:%Y-%m-%d} to {report.until:%Y-%m-%d} (UTC).</p>']
    if not report.has_data:
        parts.append("<p><strong>No data for this week.</strong> No AMD lane with a matching "
                     "NVIDIA reference ran in this window.</p>")
    else:
        sections = [
            ("Headline", "headline", HEADLINE_MD),
            ("Regressions and cliffs (new, or recovered this week)", "regressions", REGRESSIONS_MD),
            ("Top AMD-only failures", "amd_only_failures",
             [("framework", "framework"), ("amd_hardware", "AMD"), ("parity_key", "test"),
              ("streak", "streak"), ("first_failing", "failing since"),
              ("last_message", "last message")]),
            ("Coverage gaps", "coverage_gaps",
             [("framework", "framework"), ("finding", "finding"), ("suite", "suite"),
              ("hardware", "hardware"), ("detail", "detail")]),
            ("Capability parity", "capability_grid",
             [(c, c) for c in t["capability_grid"].columns]),
            ("Alerts opened and resolved", "alerts", ALERTS_MD),
            ("Fleet", "fleet",
             [("vendor", "vendor"), ("hardware", "hardware"), ("runners", "runners"),
              ("online", "online"), ("busy", "busy"), ("offline", "offline"),
              ("queue_p50_min", "queue p50 (min)"), ("queue_p90_min", "queue p90 (min)")]),
        ]
        for title, key, cols in sections:
            parts.append(f"<h2>{e(title)}</h2>")
            chart_key = "capabilities" if key == "capability_grid" else key
            if f"chart-{chart_key}" in specs and not t[key].empty:
                key_html = chart_key
                parts.append(f'<div class="scroll"><div class="chart" id="chart-{key_html}"></div></div>')
            parts.append(_html_table(t[key], cols) if not t[key].empty else "<p>None.</p>")
    parts.append(f'<p class="note">Generated by Parity at {e(report.generated_at)}.</p>')
    specs = {k: v for k, v in specs.items() if f'id="{k}"' in "".join(parts)}
    data = json.dumps(specs).replace("</", "<\\/")
    script = (f"<script>window.PARITY_CHARTS = {data};</script>\n"
              f'<script type="module">{_bundle()}</script>') if specs else ""
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{e(report.title)}</title><style>{_CSS}</style></head><body>"
            + "\n".join(parts) + script + "</body></html>\n")


# -- files --------------------------------------------------------------------------------------

def write(report: WeeklyReport, out: str | Path, formats=FORMATS) -> list[Path]:
    """Write the report's files into `out`; returns their paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    fmts = [f.strip() for f in (formats.split(",") if isinstance(formats, str) else formats)]
    unknown = set(fmts) - set(FORMATS)
    if unknown:
        raise ValueError(f"unknown report formats {sorted(unknown)} (known: {', '.join(FORMATS)})")
    written = []
    if "md" in fmts:
        written.append(out / "report.md")
        written[-1].write_text(markdown(report), encoding="utf-8")
    if "json" in fmts:
        written.append(out / "report.json")
        written[-1].write_text(json.dumps(as_json(report), indent=2) + "\n", encoding="utf-8")
    if "csv" in fmts:
        for name, df in report.tables.items():
            written.append(out / f"{name}.csv")
            df.to_csv(written[-1], index=False)
    if "html" in fmts:
        written.append(out / "report.html")
        written[-1].write_text(html(report), encoding="utf-8")
    return written
