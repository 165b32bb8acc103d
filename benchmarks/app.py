"""Dashboard load time in a real browser (Debian's chromium through Playwright): every page,
from navigation to its first render being complete (its title, its first table, chart or
notice, and no script still running), on the demo store and on any `--store` given (for
example the 50M store `benchmarks/scale.py --keep DIR` builds). Each page is opened first
right after `parity serve` starts (cold: the views are computed) and then again (warm:
within the cache TTL), each time in a new browser context (nothing cached in the browser,
as a first visit), and again in one context that has loaded the app before (its scripts in
the browser's cache, as a returning visitor's tab). Targets (issue 14): cold <= 2 s, warm
<= 1 s.

The same run also measures a floor: a bare Streamlit page (a title and one ten-row table),
served by the same Streamlit with the same flags and loaded the same way, so that what the
framework costs in this browser on this machine is told apart from what the pages add.

    python benchmarks/app.py [--nights 60] [--keep DIR] [--repeat 3] [--store PATH ...]
"""
from __future__ import annotations

import argparse
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
from benchmarks.stores import demo_store  # noqa: E402

PAGES = ["overview", "tests", "performance", "accuracy", "capabilities", "coverage",
         "regressions", "runners"]
CONTENT = ("[data-testid='stDataFrame'], [data-testid='stVegaLiteChart'], "
           "[data-testid='stAlert'], [data-testid='stCaptionContainer']")
CHROMIUM = os.environ.get("PARITY_CHROMIUM", "/usr/bin/chromium")
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


def serve_floor(folder: Path) -> tuple[subprocess.Popen, str, float]:
    """The bare Streamlit page, served as `parity serve` serves the app."""
    from parity.dashboard.serve import command

    app = folder / "floor_app.py"
    app.write_text(FLOOR_APP)
    start = time.perf_counter()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = command(port, "127.0.0.1")
    cmd[cmd.index("run") + 1] = str(app)
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


def load(browser, url: str) -> float:
    """Seconds to `url`'s complete first render, in a new page of `browser` (a Playwright
    browser: a new context each time; or a context: its cache is shared)."""
    page = browser.new_page(**({"viewport": VIEWPORT} if hasattr(browser, "new_context")
                               else {}))  # (a context has its viewport)
    start = time.perf_counter()
    page.goto(url)
    page.wait_for_selector("h1", timeout=300_000)
    page.wait_for_selector(CONTENT, timeout=300_000)
    page.wait_for_function("() => !document.querySelector(\"[data-testid='stStatusWidget']\")",
                           timeout=300_000)
    took = time.perf_counter() - start
    page.close()
    return took


def measure(browser, db: Path, repeat: int) -> dict[str, tuple[float, float, float]]:
    """Per page: (cold, warm median, warm median in a context that loaded the app before)
    seconds; "ready": (seconds from starting `parity serve` to its first answer, 0, 0)."""
    proc, base, ready = serve(db)
    out = {"ready": (ready, 0.0, 0.0)}
    tab = browser.new_context(viewport=VIEWPORT)
    try:
        for name in PAGES:
            cold = load(browser, f"{base}/{name}")
            warm = statistics.median(load(browser, f"{base}/{name}") for _ in range(repeat))
            load(tab, f"{base}/{name}")  # the first visit of this tab fills its cache
            cached = statistics.median(load(tab, f"{base}/{name}") for _ in range(repeat))
            out[name] = (cold, warm, cached)
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
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        bare = floor(browser, folder, args.repeat)
        results = {db: measure(browser, db, args.repeat) for db in stores}
        browser.close()
    print(f"{'page':<14}" + "".join(f"{db.name[:22] + ' cold':>28}{'warm':>8}{'cached':>8}"
                                    for db in stores))
    print(f"{'(ready)':<14}" + "".join(f"{results[db]['ready'][0]:>28.2f}{'':>16}"
                                       for db in stores))
    worst = [0.0, 0.0, 0.0]
    for name in PAGES:
        cells = ""
        for db in stores:
            got = results[db][name]
            worst = [max(w, g) for w, g in zip(worst, got)]
            cells += f"{got[0]:>28.2f}{got[1]:>8.2f}{got[2]:>8.2f}"
        print(f"{name:<14}{cells}")
    print(f"{'(floor)':<14}{bare[0]:>28.2f}{bare[1]:>8.2f}{bare[2]:>8.2f}   a bare Streamlit "
          f"page: a title and a ten-row table")
    print(f"worst first render {worst[0]:.2f} s cold (target 2), {worst[1]:.2f} s warm in a new "
          f"browser context, {worst[2]:.2f} s warm in a tab that loaded the app before "
          f"(target 1); the bare page: {bare[1]:.2f} s warm, {bare[2]:.2f} s in a tab that "
          f"loaded it before")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
