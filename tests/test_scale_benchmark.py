"""The scale benchmark's path stays tested: a small run (two small stores, every view in a
fresh process, test_history and the next nightly ingest) finishes and reports every line.
The real sizes (1M, 10M, 50M) are measured by hand; see the README's "Scale"."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_scale_benchmark_small_run(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "scale.py"), "--sizes",
                           "5k,20k", "--repeat", "1", "--keep", str(tmp_path)],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "ERROR" not in out, out
    for view in ("scorecard", "pass_rate_parity", "headline", "flaky_tests", "test_history"):
        line = next(ln for ln in out.splitlines() if ln.startswith(view + " "))
        cells = line.split()[1:]
        # cold and warm on each store, the ratio, peak RSS and the machine's speed
        assert len(cells) == 7 and all(float(c) >= 0 for c in cells), line
    assert "next nightly ingest (130,000 tests): empty store" in out
    # the machine's speed, read in each view's process: median, fastest and slowest
    speed = re.search(r"the machine's speed .*: median ([\d.]+), ([\d.]+) to ([\d.]+)", out)
    assert speed, out
    median, low, high = (float(x) for x in speed.groups())
    assert 0 < low <= median <= high, speed.group(0)
    assert "worst view on the largest store" in out


def test_scale_stores_can_have_pytorch_lanes_of_real_size():
    """`--pytorch-tests N`: PyTorch's lanes run N tests a night, split over its suites as the
    year profile splits them; the other lanes keep their year size, and the nights are as
    many as the results asked need."""
    sys.path.insert(0, str(ROOT))
    from benchmarks import scale
    from parity.collectors import demo

    year_nights, year = scale.nights_for(12_000_000)
    nights, sizes = scale.nights_for(12_000_000, pytorch=250_000)
    assert sum(n for (fw, _), n in sizes.items() if fw == "pytorch") == 250_000
    assert {k: n for k, n in sizes.items() if k[0] != "pytorch"} == \
        {k: n for k, n in year.items() if k[0] != "pytorch"}
    per_night = demo.results_per_night(sizes)
    assert per_night > 1_000_000 and nights == -(-12_000_000 // per_night) < year_nights


def test_versus_times_an_earlier_commit_against_the_working_tree(tmp_path):
    """`benchmarks/versus.py` checks out the commit, imports it from there, and prints one
    line per view with both sides' best and median warm time (of `--calls` calls), the ratios
    and whether their frames are the same (they are: the views did not change), with `--cold`
    each view's first call in a process of its own too, and with `--base-store` the earlier
    commit on its own copy of the store; the worktree is gone afterwards."""
    from parity.collectors import demo
    from parity.db.engine import make_engine

    def worktrees() -> str:
        return subprocess.run(["git", "-C", str(ROOT), "worktree", "list"],
                              capture_output=True, text=True).stdout

    if not (ROOT / ".git").exists():
        pytest.skip("versus.py compares commits: this is not a git checkout")
    before = worktrees()
    engine = make_engine(tmp_path / "s.db")
    demo.build(engine, days=1, sizes=demo.plan(1, results=3_000))
    engine.dispose()
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "versus.py"), "--base",
                           "HEAD", "--store", str(tmp_path / "s.db"), "--views",
                           "scorecard,pass_rate_parity,test_history", "--rounds", "1",
                           "--calls", "2", "--cold"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {ln.split()[0]: ln.split()[1:] for ln in done.stdout.splitlines()[2:]}
    # test_history: of the failing test scale.py times it for
    assert set(rows) == {"scorecard", "pass_rate_parity", "test_history"}
    # best warm: base, tree, ratio; median warm: the same; cold: the same; same
    assert all(len(cells) == 10 for cells in rows.values()), done.stdout
    assert all(float(c) > 0 for cells in rows.values() for c in cells[:9]), done.stdout
    assert all(float(c[3]) >= float(c[0]) and float(c[4]) >= float(c[1])
               for c in rows.values()), done.stdout  # a median is no less than the best
    assert all(cells[9] == "yes" for cells in rows.values()), done.stdout
    # --base-store: the earlier commit reads its own copy (here one of other data, so the
    # two sides' frames differ)
    other = make_engine(tmp_path / "other.db")
    demo.build(other, days=1, sizes=demo.plan(1, results=1_000))
    other.dispose()
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "versus.py"), "--base",
                           "HEAD", "--store", str(tmp_path / "s.db"), "--base-store",
                           str(tmp_path / "other.db"), "--views", "scorecard", "--rounds", "1"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[2].split()[-1] == "NO", done.stdout
    assert worktrees() == before


def test_the_next_nightly_measurement_leaves_the_store_as_it_was(engine, tmp_path):
    """`scale.py`'s next-nightly measurement ingests a file of tests new to the store, then
    deletes its run and those tests (on PostgreSQL too, without the foreign-key checks that
    would scan the results for each test): a kept store does not grow with every run."""
    from sqlalchemy import text

    from benchmarks.ingest_junit import generate
    from benchmarks.scale import ingest_time
    from parity.collectors import demo

    demo.build(engine, days=2, sizes=demo.plan(2, results=2_000))
    count = ("SELECT (SELECT count(*) FROM test_case), (SELECT count(*) FROM test_result), "
             "(SELECT count(*) FROM ci_run), (SELECT count(*) FROM test_set)")
    with engine.connect() as conn:
        before = tuple(conn.execute(text(count)).one())
    url = engine.url.render_as_string(hide_password=False)
    generate(tmp_path / "nightly.xml", 500)
    assert ingest_time(url, tmp_path / "nightly.xml", "check-1") > 0
    with engine.connect() as conn:
        assert tuple(conn.execute(text(count)).one()) == before


def test_the_load_benchmarks_bare_page_is_served_as_the_app_is(tmp_path):
    """`benchmarks/app.py`'s floor, the bare page it measures the app's pages against, is
    served through the app's own hosting (`dashboard/app/hosting.py`): its page carries the
    preamble that says where its server is, at the root and at a page's own address.
    (`streamlit run` finds an app by reading the file for an `st.App` call: a floor that
    built its app in a function of ours was served as a plain script, without it.)"""
    import urllib.request

    sys.path.insert(0, str(ROOT))
    from benchmarks.app import serve_floor

    proc, base, _ = serve_floor(tmp_path)
    try:
        for path in ("/", "/floor_app"):
            page = urllib.request.urlopen(base + path, timeout=30).read().decode()
            assert "window.__streamlit = {BACKEND_BASE_URL" in page, path
    finally:
        proc.terminate()
        proc.wait(30)


@pytest.mark.skipif(not Path("/proc/self/status").exists(),
                    reason="a process's own peak memory is read from Linux's /proc")
def test_peak_rss_is_the_processs_own_not_its_starters():
    """The peak RSS the benchmarks report (`benchmarks/memory.py`) is the process's own: a
    probe started by a process that holds 300 MB reports what it used itself, where
    `getrusage`'s `ru_maxrss` reports the starter's 300 MB (Linux carries it across
    `execve`). Another process's is read by its pid, as the load benchmark reads the app's."""
    starter = (
        "import os, resource, subprocess, sys\n"
        "held = bytearray(300 * 1024 * 1024)\n"
        "held[::4096] = b'x' * len(held[::4096])\n"  # every page touched: resident
        "probe = ('import resource; from benchmarks.memory import peak_rss_mb; '\n"
        "         'print(peak_rss_mb(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)')\n"
        "print(subprocess.run([sys.executable, '-c', probe], capture_output=True, text=True,\n"
        "                     check=True).stdout.strip())\n"
        "from benchmarks.memory import peak_rss_mb\n"
        "print(peak_rss_mb(), peak_rss_mb(os.getpid()))\n")
    done = subprocess.run([sys.executable, "-c", starter], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    probe, starter_line = done.stdout.splitlines()
    own, inherited_kib = (float(x) for x in probe.split())
    assert 0 < own < 100, probe  # an interpreter that imported one small module
    assert inherited_kib / 1024 >= 300, probe  # what the column reported before
    mine, by_pid = (float(x) for x in starter_line.split())
    # the same process read twice: its high-water mark may rise by a page between the reads
    assert mine >= 300 and abs(by_pid - mine) < 1, starter_line
