"""Dashboard load time in a real browser (Debian's chromium through Playwright): every page,
from navigation to its first render being complete (its title, its first table, chart or
notice, its script run ended and no element left stale), on the demo store and on any
`--store` given (for example the 50M store `benchmarks/scale.py --keep DIR` builds). Each
page is opened first right after `parity serve` starts (cold: the views are computed) and
then again (warm: within the cache TTL), each time in a new browser context (nothing cached
in the browser, as a first visit), and again in one context that has loaded the app before
(its scripts in the browser's cache, as a returning visitor's tab). Last, in that tab, each
page is reached from the one before it by its link in the sidebar (`nav`: how a reader
moves between pages of an open app; Streamlit runs the page's script over the open
connection instead of loading the app again). Then the app process's peak resident memory
after all of that, its start-up included. Targets (issue 14): cold <= 2 s, warm <= 1 s, peak
RSS <= 1 GiB.

The end of a render is the app's own script state (`data-test-script-state` on `stApp`,
what Streamlit's own browser tests wait for), not the running indicator's absence (it
fades out over 200 ms after the run has ended, which a first measure counted), and every
element in view drawn (`DONE`): the script's end alone came while a first visit's tables
and charts were still skeletons, their code not loaded yet, which every figure measured
before 2026-12-05 counted as rendered (0.5-0.9 s too early).

The same run also measures a floor: a bare Streamlit page (a title and one ten-row table),
served as `parity serve` serves the app (the same Streamlit, flags, listening socket, page
preamble and static files) and loaded the same way, so that what the framework costs in this
browser on this machine is told apart from what the pages add.

    python benchmarks/app.py [--nights 60] [--keep DIR] [--repeat 3] [--store PATH ...]
"""
from __future__ import annotations

import argparse
import math
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.memory import peak_rss_mb  # noqa: E402
from benchmarks.stores import demo_store  # noqa: E402

PAGES = ["overview", "tests", "performance", "accuracy", "capabilities", "coverage",
         "regressions", "runners"]
CONTENT = ("[data-testid='stDataFrame'], [data-testid='stVegaLiteChart'], "
           "[data-testid='stAlert'], [data-testid='stCaptionContainer']")
CHROMIUM = os.environ.get("PARITY_CHROMIUM", "/usr/bin/chromium")
# Headless Chromium (156) builds, for every page Playwright opens, the omnibox popup of a
# window nobody sees: a "WebUI Top Renderer" process loading chrome://omnibox-popup.top-chrome,
# about 1 s of CPU alongside each load (a trace of one load, 2026-12-07), which on a 2-core
# machine slowed the page's own renderer by 0.2-0.3 s. A visitor's browser builds that popup
# once per window, not for every link opened, so it is turned off here.
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-features=WebUIOmniboxPopup,WebUIOmniboxFullPopup,"
                "WebUIOmniboxAimPopup,PreloadTopChromeWebUI"]
VIEWPORT = {"width": 1400, "height": 1000}


def serve(db: Path) -> tuple[subprocess.Popen, str, float]:
    """`parity serve` on the store; the process, its URL and the seconds until it answered
    its health check (it computes the overview's views before it accepts connections)."""
    start = time.perf_counter()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "parity", "--db", str(db), "serve", "--port",
                             str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc, *_answered(f"http://127.0.0.1:{port}", start)


FLOOR_APP = """import pandas as pd
import streamlit as st
st.title("Floor")
st.dataframe(pd.DataFrame({"a": range(10), "b": [str(i) for i in range(10)]}))
"""
FLOOR_SERVER = """from pathlib import Path

import streamlit as st

from parity.dashboard.app import hosting

app = st.App(Path(__file__).with_name("floor_app.py"), lifespan=hosting.lifespan(),
             middleware=hosting.middleware())
"""


def serve_floor(folder: Path) -> tuple[subprocess.Popen, str, float]:
    """The bare Streamlit page, served as `parity serve` serves the app: the same command and
    flags, and `dashboard/app/hosting.py`'s listening socket, page and static files."""
    from parity.dashboard.serve import command

    (folder / "floor_app.py").write_text(FLOOR_APP)
    server = folder / "floor_server.py"
    server.write_text(FLOOR_SERVER)
    start = time.perf_counter()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = command(port, "127.0.0.1")
    cmd[cmd.index("run") + 1] = str(server)
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc, *_answered(f"http://127.0.0.1:{port}", start)


def _answered(base: str, start: float) -> tuple[str, float]:
    for _ in range(300):
        try:
            urllib.request.urlopen(f"{base}/_stcore/health", timeout=120)
            return base, time.perf_counter() - start
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{base} did not start")


def floor(browser, folder: Path, repeat: int) -> tuple[float, float, float]:
    """(first, warm median, warm median in a tab that loaded it before) seconds for the bare
    page."""
    proc, base, _ = serve_floor(folder)
    tab = browser.new_context(viewport=VIEWPORT)
    try:
        first = load(browser, base)
        warm = statistics.median(load(browser, base) for _ in range(repeat))
        load(tab, base)
        cached = statistics.median(load(tab, base) for _ in range(repeat))
    finally:
        tab.close()
        proc.terminate()
        proc.wait(30)
    return first, warm, cached


# the script has run to its end, nothing of an earlier run is left on the page, and every
# element it sent that can be seen is drawn: no skeleton is left in view (Streamlit shows
# one for an element whose code, loaded on first use, has not arrived: tables, charts, page
# links), and each table and chart in view has drawn its canvas or marks. Without the last
# two, a first visit's pages counted as rendered while every table and chart on them was
# still a skeleton (0.5-0.9 s before they were drawn). An element out of view (the
# notebook box's code, in a closed expander) is not waited for.
DONE = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  if (app?.dataset.testScriptState !== 'notRunning') return false;
  if (document.querySelector("[data-stale='true']")) return false;
  const seen = sel => Array.from(document.querySelectorAll(sel)).filter(e => e.checkVisibility());
  if (seen("[data-testid='stSkeleton']").length) return false;
  const drawn = (sel, inner) => seen(sel).every(e => e.querySelector(inner));
  return drawn("[data-testid='stDataFrame']", "canvas")
    && drawn("[data-testid='stVegaLiteChart']", "canvas, svg .mark-group, svg g.role-mark");
}"""


def rendered(page, title: str | None = None) -> str:
    """Wait for `page`'s render to be complete (with `title` as its heading, when given);
    its heading."""
    if title is None:
        page.wait_for_selector("h1", timeout=300_000)
    else:
        page.wait_for_function("t => document.querySelector('h1')?.innerText === t", arg=title,
                               timeout=300_000)
    page.wait_for_selector(CONTENT, timeout=300_000)
    page.wait_for_function(DONE, timeout=300_000)
    return page.inner_text("h1")


def load(browser, url: str, titles: dict | None = None) -> float:
    """Seconds to `url`'s complete first render, in a new page of `browser` (a Playwright
    browser: a new context each time; or a context: its cache is shared). `titles`: where
    to note the page's heading, by URL."""
    page = browser.new_page(**({"viewport": VIEWPORT} if hasattr(browser, "new_context")
                               else {}))  # (a context has its viewport)
    start = time.perf_counter()
    page.goto(url)
    title = rendered(page)
    took = time.perf_counter() - start
    if titles is not None:
        titles[url] = title
    page.close()
    return took


def navigate(tab, base: str, titles: dict[str, str], repeat: int) -> dict[str, float]:
    """Per page: the median seconds from clicking its sidebar link, on the page before it
    in `PAGES` (the last page's link on the first), to its complete render, in one page of
    `tab` that opened the first page, `repeat` times round."""
    page = tab.new_page()
    page.goto(f"{base}/{PAGES[-1]}")
    rendered(page)
    times: dict[str, list[float]] = {name: [] for name in PAGES}
    try:
        for _ in range(repeat):
            for name in PAGES:
                start = time.perf_counter()
                page.click(f"[data-testid='stSidebarNav'] a[href$='/{name}']")
                rendered(page, titles[f"{base}/{name}"])
                times[name].append(time.perf_counter() - start)
    finally:
        page.close()
    return {name: statistics.median(t) for name, t in times.items()}


def measure(browser, db: Path, repeat: int) -> dict[str, tuple[float, ...]]:
    """Per page: (cold, warm median, warm median in a context that loaded the app before,
    median reached by its link in that context) seconds; "ready": (seconds from starting
    `parity serve` to its first answer, 0, 0, 0); "rss": (the app process's peak resident
    memory in MB after every load, its start-up's views included, or NaN where it cannot be
    read, 0, 0, 0)."""
    proc, base, ready = serve(db)
    out = {"ready": (ready, 0.0, 0.0, 0.0)}
    tab = browser.new_context(viewport=VIEWPORT)
    titles: dict[str, str] = {}
    try:
        for name in PAGES:
            cold = load(browser, f"{base}/{name}", titles)
            warm = statistics.median(load(browser, f"{base}/{name}") for _ in range(repeat))
            load(tab, f"{base}/{name}")  # the first visit of this tab fills its cache
            cached = statistics.median(load(tab, f"{base}/{name}") for _ in range(repeat))
            out[name] = (cold, warm, cached)
        by_link = navigate(tab, base, titles, repeat)
        out.update({name: (*out[name], by_link[name]) for name in PAGES})
        rss = peak_rss_mb(proc.pid)  # `parity serve` became the Streamlit server (execve)
        out["rss"] = (math.nan if rss is None else rss, 0.0, 0.0, 0.0)
    finally:
        tab.close()
        proc.terminate()
        proc.wait(30)
    return out


def main(argv=None) -> int:
    from playwright.sync_api import sync_playwright

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nights", type=int, default=60)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="folder to keep (and reuse) the demo store in")
    ap.add_argument("--store", type=Path, action="append", default=[],
                    help="another store to measure (repeatable)")
    args = ap.parse_args(argv)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="parity-app-"))
    folder.mkdir(parents=True, exist_ok=True)
    stores = [demo_store(folder, args.nights)] + args.store
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        bare = floor(browser, folder, args.repeat)
        results = {db: measure(browser, db, args.repeat) for db in stores}
        browser.close()
    print(f"{'page':<14}" + "".join(f"{db.name[:22] + ' cold':>28}{'warm':>8}{'cached':>8}"
                                    f"{'nav':>8}" for db in stores))
    print(f"{'(ready)':<14}" + "".join(f"{results[db]['ready'][0]:>28.2f}{'':>24}"
                                       for db in stores))
    worst = [0.0, 0.0, 0.0, 0.0]
    for name in PAGES:
        cells = ""
        for db in stores:
            got = results[db][name]
            worst = [max(w, g) for w, g in zip(worst, got)]
            cells += f"{got[0]:>28.2f}{got[1]:>8.2f}{got[2]:>8.2f}{got[3]:>8.2f}"
        print(f"{name:<14}{cells}")
    print(f"{'(floor)':<14}{bare[0]:>28.2f}{bare[1]:>8.2f}{bare[2]:>8.2f}{'':>8}   a bare "
          f"Streamlit page: a title and a ten-row table")
    print(f"{'(peak RSS MB)':<14}" + "".join(f"{results[db]['rss'][0]:>28.0f}{'':>24}"
                                             for db in stores)
          + "   the app's process, after every load above")
    rss = max((r for db in stores if not math.isnan(r := results[db]["rss"][0])),
              default=math.nan)
    print(f"worst first render {worst[0]:.2f} s cold (target 2), {worst[1]:.2f} s warm in a new "
          f"browser context, {worst[2]:.2f} s warm in a tab that loaded the app before, "
          f"{worst[3]:.2f} s reached by its link in an open app (target 1); the bare page: "
          f"{bare[1]:.2f} s warm, {bare[2]:.2f} s in a tab that loaded it before; the app "
          f"process's peak RSS {rss:.0f} MB (target 1024)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
