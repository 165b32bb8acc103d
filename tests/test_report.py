"""The weekly report on the demo store: its content (the injected regression, the accuracy
cliff, the coverage gap), reproducibility, valid GitHub Markdown, an HTML page that renders
every chart in a real browser with no network, and posting to the fake GitHub."""
from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakegithub import FakeGitHub, World

ROOT = Path(__file__).resolve().parent.parent
WEEK = "2026-W47"  # the demo's throughput regression lands on 2026-11-18, in this week
TOKEN = "ghp_reportPOSTER_abcdef0123456789"


def run_report(db: Path, out: Path, *extra: str, env: dict | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PARITY_", "GITHUB_"))}
    base.update(PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.run([sys.executable, "-m", "parity", "--db", str(db), "report", "weekly",
                           "--out", str(out), *extra], env=base, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def report_dir(demo_db, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("weekly") / "r1"
    done = run_report(demo_db, out, "--week", WEEK)
    assert done.returncode == 0, done.stderr
    return out


def test_report_files_and_their_content(report_dir):
    names = {p.name for p in report_dir.iterdir()}
    assert {"report.html", "report.md", "report.json", "report.ipynb", "headline.csv",
            "capabilities.csv", "capability_grid.csv",
            "regressions.csv", "amd_only_failures.csv", "coverage_gaps.csv", "fleet.csv"} <= names
    md = (report_dir / "report.md").read_text()
    assert md.startswith(f"## Parity report, {WEEK}")
    assert re.search(r"\| regression \| vllm \| mi355x \| `meta-llama/Llama-3.1-70B-Instruct "
                     r"output_throughput .*c64", md)  # the injected throughput regression
    assert re.search(r"\| cliff \| vllm \| mi355x \| `deepseek-ai/DeepSeek-R1 gsm8k", md)
    assert "| vllm | no AMD lane | `spec_decode` |" in md  # the coverage gaps
    assert "| vllm | builds but runs no tests |  | mi455x |" in md
    # every headline row links the run its figures come from, and carries its completeness
    assert "| complete verdicts |" in md and "| from run |" in md
    assert re.search(r"\| vllm \| mi355x \| b200 \|.*\| \[[0-9a-f]{7}\]\(\S+\) \|", md)
    # capability parity: NVIDIA runs disaggregation with wide EP in one gated lane; MI355X
    # runs disaggregation alone, ungated, and its wide-EP gate fails at one concurrency
    assert re.search(r"\| vllm \| disaggregation \+ wide-ep \| — \| — \| — \| — \| ✅ \| — \| ✅ \|", md)
    assert re.search(r"\| vllm \| wide-ep \| ✅ \| ✅ \| ❌ \| — \|", md)
    assert len(md) < 20_000  # short enough for an issue comment
    data = json.loads((report_dir / "report.json").read_text())
    assert data["week"] == WEEK and data["has_data"]
    with open(report_dir / "headline.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(data["tables"]["headline"]) == 8  # 4 vLLM, 2 SGLang, 2 PyTorch lanes
    mi355 = next(r for r in data["tables"]["headline"]
                 if (r["framework"], r["amd_hardware"]) == ("vllm", "mi355x"))
    assert mi355["nvidia_hardware"] == "b200" and mi355["coverage"] == 0.75
    assert 0 < mi355["same_denominator_rate"] < mi355["nvidia_rate"]
    assert mi355["perf_ratio"] < 1 and mi355["cliffs"] == 1 and "rate_change" in mi355
    nb = json.loads((report_dir / "report.ipynb").read_text())
    injected = [c for c in nb["cells"] if "injected-parameters" in c["metadata"].get("tags", [])]
    assert injected and f"week = '{WEEK}'" in "".join(injected[0]["source"])


def _normalised(folder: Path) -> dict[str, str]:
    out = {}
    for p in sorted(folder.iterdir()):
        text = p.read_text()
        text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "<time>", text)
        out[p.name] = text
    return out


def test_two_runs_give_the_same_files(demo_db, report_dir, tmp_path):
    again = run_report(demo_db, tmp_path / "r2", "--week", WEEK)
    assert again.returncode == 0, again.stderr
    first, second = _normalised(report_dir), _normalised(tmp_path / "r2")
    assert first.keys() == second.keys()
    for name in first:
        assert first[name] == second[name], name


def test_markdown_is_valid_github_markdown_with_intact_tables(report_dir):
    MarkdownIt = pytest.importorskip(
        "markdown_it", reason="markdown-it-py is not installed (pip install -e '.[test]')"
    ).MarkdownIt

    md = (report_dir / "report.md").read_text()
    html = MarkdownIt("commonmark").enable("table").render(md)
    tables = re.findall(r"<table>.*?</table>", html, flags=re.S)
    headers = [line for line in md.splitlines() if re.fullmatch(r"\|(---:?\|)+", line)]
    assert len(tables) == len(headers) == 6
    for table in tables:  # every row has as many cells as the header
        rows = re.findall(r"<tr>(.*?)</tr>", table, flags=re.S)
        widths = {len(re.findall(r"<t[hd][ >]", r)) for r in rows}
        assert len(widths) == 1, widths


def test_a_week_without_data_says_so(demo_db, tmp_path):
    done = run_report(demo_db, tmp_path / "empty", "--week", "2025-W01", "--format", "md,json")
    assert done.returncode == 0, done.stderr
    assert "No data for this week" in (tmp_path / "empty" / "report.md").read_text()
    assert json.loads((tmp_path / "empty" / "report.json").read_text())["has_data"] is False


def test_html_renders_every_chart_offline_in_chromium(browser, report_dir):
    page = browser.new_page(viewport={"width": 390, "height": 844})  # a phone
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    requested: list[str] = []

    def no_network(route):
        requested.append(route.request.url)
        route.abort() if not route.request.url.startswith("file:") else route.continue_()

    page.route("**/*", no_network)
    page.goto((report_dir / "report.html").as_uri())
    charts = page.locator("div.chart")
    assert charts.count() >= 3
    page.wait_for_function("[...document.querySelectorAll('div.chart')].every("
                           "d => d.dataset.rendered === 'true')", timeout=30_000)
    for i in range(charts.count()):
        assert charts.nth(i).locator("svg").count() >= 1
    assert not problems, problems
    assert all(u.startswith("file:") for u in requested)
    # readable on a phone: the page itself does not scroll sideways (tables scroll inside)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390 + 1
    assert "print(" not in page.content() and "report.weekly(" not in page.content()
    page.close()


def test_post_issue_through_the_fake_github(demo_db, tmp_path):
    w = World()
    w.add_issue("ROCm/parity-tracking", 12)
    with FakeGitHub(w, {TOKEN: 9}) as fake:
        done = run_report(demo_db, tmp_path / "p", "--week", WEEK, "--format", "md",
                          "--post-issue", "ROCm/parity-tracking#12", "--api-url", fake.base_url,
                          env={"GITHUB_TOKEN": TOKEN})
        assert done.returncode == 0, done.stderr
        assert [c["issue"] for c in w.comments] == [12]
        assert w.comments[0]["body"] == (tmp_path / "p" / "report.md").read_text()
    assert TOKEN not in done.stdout + done.stderr


def test_a_long_report_is_cut_to_fit_a_comment():
    from parity.dashboard.report import comment_body

    assert comment_body("short") == "short"
    cut = comment_body("x" * 70_000)
    assert len(cut) <= 65_536 and cut.endswith("the full report is in report.md)\n")


HOSTILE = ("<script>alert(1)</script> @vllm-project/amd-team cc @someone fixes #123 "
           "[click](javascript:alert(1)) ![x](https://evil.example/p.png) `code` | pipe")


def _live(md: str) -> list[str]:
    """What GitHub would render live in `md` outside code spans: mentions, #references,
    HTML tags, links or images that are not Parity's own run links."""
    outside = re.sub(r"`[^`\n]*`", "", md)
    found = re.findall(r"(?<![\w\u200b])@[A-Za-z0-9][\w/-]*", outside)
    found += re.findall(r"(?<![\w\u200b&])#\d+", outside)
    found += re.findall(r"<\s*[A-Za-z/!]", outside)
    links = re.findall(r"(?<!\\)!?\[[^\]\n]*(?<!\\)\]\(([^)\s]*)\)", outside)
    found += [u for u in links if not re.match(r"^https?://", u) or "evil" in u]
    return found


def test_hostile_ci_text_is_posted_as_data(sqlite_engine, tmp_path):
    """A test name, failure message and suite written by anyone's pull request reach the
    posted Markdown as text: no live mention, reference, HTML or foreign link."""
    from tests.builder import Builder

    b = Builder(sqlite_engine)
    name = "test_x" + HOSTILE.replace(" ", "_")[:80]
    for day in (0, 1):
        b.tests("h100", {name: "passed", "test_ok": "passed"}, suite=HOSTILE, run=f"n{day}",
                commit=f"c{day}", day=day)
        b.tests("mi300x", {name: "failed", "test_ok": "passed"}, suite=HOSTILE, run=f"a{day}",
                commit=f"c{day}", day=day, messages={name: HOSTILE})
    db = Path(str(sqlite_engine.url.database))
    w = World()
    w.add_issue("ROCm/parity-tracking", 7)
    with FakeGitHub(w, {TOKEN: 9}) as fake:
        done = run_report(db, tmp_path / "h", "--week", "2026-W45", "--format", "md",
                          "--post-issue", "ROCm/parity-tracking#7", "--api-url", fake.base_url,
                          env={"GITHUB_TOKEN": TOKEN})
        assert done.returncode == 0, done.stderr
        body = w.comments[0]["body"]
    assert "alert(1)" in body  # the text is there, as data
    assert _live(body) == [], _live(body)
    assert _live("hi @team see #4 <b>x</b> [a](javascript:x)") == ["@team", "#4", "<b", "</",
                                                                  "javascript:x"]
