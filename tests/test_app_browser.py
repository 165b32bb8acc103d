"""The dashboard in a real browser: Debian's chromium driven by Playwright against
`parity serve` on a free loopback port. Overview, drill-down from a failing AMD test to its
history, a permalink reloaded to the same view, and no page carrying a planted token."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PLANTED = "ghp_PLANTEDtokenNEVERshown_0123456789"
SCORECARD = ".st-key-scorecard [data-testid='stDataFrame']"
# a page's script has run to its end and nothing of an earlier run is left on it
DONE = ("() => document.querySelector(\"[data-testid='stApp']\")?.dataset.testScriptState"
        " === 'notRunning' && !document.querySelector(\"[data-stale='true']\")")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(db: Path) -> tuple[subprocess.Popen, str]:
    """`parity serve` on the demo store, with a token planted in its environment."""
    port = free_port()
    env = {**os.environ, **{name: PLANTED for name in PLANTED_IN}, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "parity", "--db", str(db), "serve",
                             "--port", str(port)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{base}/_stcore/health", timeout=2).status == 200:
                return proc, base
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"parity serve did not start: {proc.communicate()[0][-2000:]!r}")


PLANTED_IN = ("GITHUB_TOKEN", "GH_TOKEN", "BUILDKITE_API_TOKEN", "MY_SERVICE_SECRET",
              "PARITY_ALERT_WEBHOOK_URL")
RUNNING: dict[str, subprocess.Popen] = {}  # base URL -> the serving process


@pytest.fixture(scope="module")
def app(browser, demo_db):
    proc, base = serve(demo_db)
    RUNNING[base] = proc
    yield base
    proc.terminate()
    proc.wait(30)


def test_the_running_app_holds_no_secret(app):
    """The serving process's own environment (Streamlit took over `parity serve`'s process),
    read from /proc: none of the planted secret variables, nor their value."""
    environ = Path(f"/proc/{RUNNING[app].pid}/environ").read_bytes()
    names = {e.split(b"=", 1)[0].decode() for e in environ.split(b"\0") if e}
    assert "PARITY_DB_URL" in names and "PYTHONPATH" in names  # it is the app's environment
    assert not names & set(PLANTED_IN)
    assert PLANTED.encode() not in environ


def test_streamlits_script_files_come_as_streamlit_sends_them(app):
    """A script file of the page, fetched twice from `parity serve` (the second time from
    `dashboard/app/assets.py`'s memory): both times the file Streamlit ships, with the same
    headers, cached for a year as immutable."""
    import re

    import streamlit

    page = urllib.request.urlopen(f"{app}/overview", timeout=30).read().decode()
    script = re.search(r'src="\./(static/js/[^"]+\.js)"', page).group(1)
    shipped = (Path(streamlit.__file__).parent / "static" / script).read_bytes()
    answers = [urllib.request.urlopen(f"{app}/{script}", timeout=30) for _ in range(2)]
    bodies = [a.read() for a in answers]
    assert bodies == [shipped, shipped]
    headers = [{k.lower(): v for k, v in a.getheaders() if k.lower() != "date"}
               for a in answers]
    assert headers[0] == headers[1]
    assert "immutable" in headers[0]["cache-control"]
    assert headers[0]["content-type"] in ("application/javascript", "text/javascript")


def test_overview_drill_down_and_permalink(browser, app):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{app}/?framework=vllm")
    page.wait_for_selector(SCORECARD, timeout=60_000)
    assert page.get_by_text("Parity overview").is_visible()
    # 1: from the overview to MI355X's failing tests
    page.locator("a[data-testid='stPageLink-NavLink']", has_text="vllm · mi355x").first.click()
    page.wait_for_url("**/tests?**hardware=mi355x**", timeout=30_000)
    page.wait_for_selector("text=AMD-only failures", timeout=60_000)
    # 2: from the list to one test's history on every hardware
    page.locator("a[data-testid='stPageLink-NavLink']", has_text="failing").first.click()
    page.wait_for_selector("text=History of", timeout=60_000)
    assert "test=" in page.url
    permalink = page.url
    shown = page.locator("h3", has_text="History of").inner_text()
    # 3: the permalink, reloaded and opened afresh, gives the same view
    page.reload()
    page.wait_for_selector("text=History of", timeout=60_000)
    assert page.locator("h3", has_text="History of").inner_text() == shown
    fresh = browser.new_page()
    fresh.goto(permalink)
    fresh.wait_for_selector("text=History of", timeout=60_000)
    assert fresh.locator("h3", has_text="History of").inner_text() == shown
    fresh.close()
    assert not errors, errors
    page.close()


@pytest.mark.parametrize("path", ["", "tests", "performance", "accuracy", "capabilities",
                                  "coverage", "regressions", "runners"])
def test_no_page_shows_a_planted_token(browser, app, path):
    page = browser.new_page()
    page.goto(f"{app}/{path}")
    page.wait_for_selector("h1", timeout=60_000)
    page.wait_for_load_state("networkidle")
    assert PLANTED not in page.content()
    page.close()


@pytest.mark.parametrize("path", ["overview", "tests", "coverage", "runners"])
def test_a_shared_link_opens_its_own_page_with_its_filters(browser, app, path):
    """Opening `/<page>?framework=vllm` directly (a link someone shared) renders that page
    with the filter, with no "Page not found" dialog on the way."""
    page = browser.new_page()
    page.goto(f"{app}/{path}?framework=vllm")
    page.wait_for_selector("h1", timeout=60_000)
    page.wait_for_load_state("networkidle")
    assert "not found" not in page.content().lower()
    assert page.url.split("?")[0].endswith(f"/{path}") and "framework=vllm" in page.url
    page.close()


def test_a_pages_own_address_reaches_its_server_at_once(browser, app):
    """Opened at `/tests`, the page asks the server at the app's root and nowhere else: not
    `/tests/_stcore/health` first, which Streamlit alone asks (404, then 100 ms of waiting
    before it asks the root), and it connects to the root's stream."""
    page = browser.new_page()
    asked, sockets = [], []
    page.on("request", lambda request: asked.append(request.url))
    page.on("websocket", lambda socket: sockets.append(socket.url))
    page.goto(f"{app}/tests?framework=vllm")
    page.wait_for_selector("[data-testid='stDataFrame']", timeout=60_000)
    page.wait_for_function(DONE, timeout=60_000)
    settings = page.evaluate("window.__streamlit")
    page.close()
    assert settings["BACKEND_BASE_URL"] == f"{app}/"
    assert settings["HOST_CONFIG"]["useExternalAuthToken"] is False
    assert not [url for url in asked if "/tests/" in url], asked
    assert sockets == [app.replace("http://", "ws://") + "/_stcore/stream"]


@pytest.mark.parametrize("asked, base, at, server", [
    ("/tests", "", "/tests", "/"),
    ("/tests", "", "/proxy/parity/tests", "/proxy/parity/"),  # a proxy's own prefix
    ("/parity/tests", "/parity", "/parity/tests", "/parity/"),  # server.baseUrlPath
    ("/", "", "/proxy/", "/proxy/"),
    ("/tests", "", "/elsewhere", None),  # not where it was asked for: Streamlit looks
])
def test_the_page_works_out_where_its_server_is(browser, asked, base, at, server):
    """The preamble's address in a browser, at addresses a proxy may give the page: what
    comes before the path the server was asked for is the proxy's prefix."""
    from parity.dashboard.app.preamble import written

    body = written(b"<html><head></head><body></body></html>", asked.encode(), base, ["x"])
    page = browser.new_page()
    page.route("http://parity.test/**", lambda route: route.fulfill(
        body=body, content_type="text/html"))
    page.goto(f"http://parity.test{at}")
    got = page.evaluate("window.__streamlit?.BACKEND_BASE_URL ?? null")
    page.close()
    assert got == (server and f"http://parity.test{server}")


def test_the_root_forwards_to_the_overview_with_its_query(browser, app):
    page = browser.new_page()
    page.goto(f"{app}/?framework=sglang")
    page.wait_for_url("**/overview?**framework=sglang**", timeout=60_000)
    page.wait_for_selector(SCORECARD, timeout=60_000)
    assert "not found" not in page.content().lower()
    page.close()



def test_every_page_is_computed_before_the_server_answers(browser, demo_db):
    """`parity serve` computes every page's views, with the default filters, into the cache
    its visitors read before it answers, and says which; then each page renders whole.
    (`test_app.test_the_warm_up_computes_what_each_page_reads` shows that a first visit
    then computes nothing.)"""
    proc, base = serve(demo_db)
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        for path in ("overview", "tests", "performance", "accuracy", "capabilities",
                     "coverage", "regressions", "runners"):
            page.goto(f"{base}/{path}")
            page.wait_for_selector(SCORECARD if path == "overview"
                                   else "[data-testid='stDataFrame']", timeout=60_000)
            page.wait_for_function(DONE, timeout=60_000)
            assert not page.locator("[data-testid='stException']").count(), path
        page.close()
    finally:
        proc.terminate()
        out = proc.communicate(timeout=30)[0].decode()
    assert "parity: Nagle's algorithm off on 1 listening socket(s)" in out.splitlines()
    frozen = next(line for line in out.splitlines() if "kept out of garbage collection" in line)
    assert int(frozen.split("parity: ", 1)[1].split()[0]) > 50_000  # the imports alone
    said = next(line for line in out.splitlines() if "before accepting connections" in line)
    assert said.split("computed ", 1)[1].startswith(
        "headline, alerts, rocm_stack, untrusted_runs, sources, fleet, amd_only_failures, "
        "test_matrix, skip_parity, performance_summary, performance_parity, pareto, "
        "performance_history, accuracy_parity, coverage, capability_parity, regressions, "
        "flaky_tests in ")


@pytest.mark.parametrize("path", ["overview", "regressions"])
def test_the_load_benchmark_counts_a_page_rendered_once_it_is_drawn(browser, app, path):
    """`benchmarks/app.py`'s end of a render (`rendered`), on a first visit: every table and
    chart in view is drawn and no skeleton is left in view. (Its first criterion, the
    script's end, came while every table and chart of a first visit was still a skeleton,
    their code not yet loaded: 0.5-0.9 s too early.)"""
    sys.path.insert(0, str(ROOT))
    from benchmarks.app import rendered

    context = browser.new_context(viewport={"width": 1400, "height": 1000})  # nothing cached
    page = context.new_page()
    page.goto(f"{app}/{path}")
    rendered(page)
    state = page.evaluate("""() => {
      const seen = sel => Array.from(document.querySelectorAll(sel))
        .filter(e => e.checkVisibility());
      return {skeletons: seen("[data-testid='stSkeleton']").length,
              tables: seen("[data-testid='stDataFrame']").map(e => !!e.querySelector('canvas')),
              charts: seen("[data-testid='stVegaLiteChart']").map(
                e => !!e.querySelector('canvas, svg .mark-group, svg g.role-mark'))}
    }""")
    context.close()
    assert state["skeletons"] == 0, state
    assert state["tables"] and all(state["tables"]), state
    assert state["charts"] and all(state["charts"]), state


def test_the_notebook_box_shows_its_code_when_opened(browser, app):
    """A page's "Use in a notebook" box sends its code once it is opened (the page reruns):
    closed on a first visit, with the page's calls after a click."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{app}/coverage?framework=vllm")
    page.wait_for_selector("[data-testid='stDataFrame']", timeout=60_000)
    page.wait_for_function(DONE, timeout=60_000)
    assert page.locator("[data-testid='stCode']").count() == 0
    page.get_by_text("Use in a notebook").click()
    code = page.locator("[data-testid='stCode']")
    code.wait_for(timeout=60_000)
    assert "frames.coverage(framework='vllm')" in code.inner_text()
    assert "framework=vllm" in page.url  # the rerun kept the page's filters
    page.close()
