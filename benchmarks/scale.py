"""Scale benchmark: every `frames` view, with its default arguments, on stores of growing
history, each view in a fresh process.

Stores are demo histories at real lane size (`parity demo --size year` lanes: about 32,000
tests per vLLM lane and night), as many nights as the size asks: 1M results is about five
nights, 50M about 220. For each store and view it prints the first call in a fresh process
(cold, after the imports), the best of `--repeat` further calls (warm), and the process's
peak RSS; `test_history` of one failing test; and the next nightly ingest (a 130,000-test
JUnit file) into the store against the same ingest into an empty store. The ratio column is
the largest store's warm time over the smallest's. A store smaller than the views' reach
(`reach_nights()`: the furthest back any view looks with its default arguments) shows them
less than the largest one does, so that ratio mixes what a view shows with the history
behind it; when the sizes include a store of at least that many nights (17M: 76 nights) the
column `vs reach` is the largest store's warm time over that store's: the same windows, full,
with more history behind them, so a view whose cost follows what it shows stays near 1.
Each process also reads the machine's speed (`yardstick`, the log's `timeit` reading) just
before its view: `speed ms` gives the largest store's, and a line after the table the median
and range over every process, for a run on a shared machine whose speed moves.

    python benchmarks/scale.py [--sizes 1M,17M,50M] [--keep DIR] [--repeat 3] [--views a,b]

With PARITY_TEST_PG_URL set and `--pg`, the same stores are also built on PostgreSQL
(databases parity_scale_<size> on that server) and measured there.

`--pytorch-tests N` builds and measures stores whose PyTorch lanes run N tests a night
instead of the year profile's 6,000 (PyTorch's ROCm lanes run hundreds of thousands per
commit; a 50M history of lanes that size does not fit beside the others), named with it
(`scale-12M-pytorch-250k.db`): the latest-run views' cost follows a lane's tests.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

END = date(2026, 11, 28)
VIEWS = ["scorecard", "pass_rate_parity", "test_matrix", "amd_only_failures", "skip_parity",
         "coverage", "performance_parity", "performance_summary", "pareto",
         "accuracy_parity", "regressions", "flaky_tests", "fleet", "headline",
         "capability_parity", "performance_history", "verdicts", "sources", "rocm_stack",
         "compiler_pass_rate", "untrusted_runs", "alerts", "alert_log", "provenance"]
NIGHTLY_TESTS = 130_000


def reach_nights() -> int:
    """The furthest back, in nights, a view looks with its default arguments: a window of
    `RECENT_DAYS` and the `HISTORY_DAYS` before it (the performance findings' lookback)."""
    from parity.dashboard import frames

    return frames.RECENT_DAYS + frames.HISTORY_DAYS


def parse_size(text: str) -> int:
    text = text.strip().lower()
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text.rstrip("km")) * scale)


def label(n: int) -> str:
    return f"{n // 1_000_000}M" if n >= 1_000_000 else f"{n // 1_000}k"


def nights_for(results: int, pytorch: int | None = None) -> tuple[int, dict]:
    """Nights and tests per (framework, suite) of a store of about `results` results:
    real-size lanes (`parity demo --size year`), PyTorch's with `pytorch` tests each."""
    from parity.collectors import demo

    sizes = demo.plan(1, profile="year") if pytorch is None else \
        demo.suite_sizes({**demo.PROFILES["year"], "pytorch": pytorch})
    per_night = demo.results_per_night(sizes)
    if results < per_night:  # smaller than one real night (the CI run): one smaller night
        return 1, demo.plan(1, results=results)
    return math.ceil(results / per_night), sizes


def build(url: str, results: int, pytorch: int | None = None) -> None:
    """The store at `url`, built unless it already holds results (`--keep` reuses it, at
    the current schema and, on PostgreSQL, vacuumed: a store kept from before `store.tidy`
    vacuumed was analysed only, and on a server without autovacuum no read of it is
    index-only)."""
    from parity.collectors import demo
    from parity.db import store
    from parity.db.engine import make_engine
    from parity.db.inventory import inventory
    from parity.db.migrate import upgrade

    engine = make_engine(url)
    if (inventory(engine).get("test_results") or 0) > 0:
        upgrade(engine)  # a kept store from an older schema gets the current one
        store.tidy(engine)  # pages a vacuum has seen are skipped: seconds at most
        engine.dispose()
        return
    nights, sizes = nights_for(results, pytorch)
    start = time.perf_counter()
    print(f"building {label(results)}: {nights} nights ...", flush=True)
    s = demo.build(engine, days=nights, end=END, sizes=sizes,
                   echo=lambda line: print("  " + line, flush=True))
    engine.dispose()
    print(f"built {label(results)} ({s.test_results:,} results) in "
          f"{time.perf_counter() - start:.0f} s", flush=True)


def history_key(url: str) -> str:
    """The parity key `test_history` is timed for: a test that failed in the newest demo
    `distributed` job (empty when there is none)."""
    from sqlalchemy import text

    from parity.dashboard import tables

    with tables.open_store(url).connect() as conn:
        return conn.execute(text(
            "SELECT c.parity_key FROM test_result r JOIN test_case c ON c.id = r.test_pk "
            "WHERE r.job_pk = (SELECT MAX(j.id) FROM ci_job j JOIN ci_run n "
            "ON n.id = j.run_pk WHERE n.ci_system = 'demo' AND j.suite = 'distributed') "
            "AND r.outcome = 'failed' ORDER BY c.parity_key LIMIT 1")).scalar() or ""


# the machine's speed, as `benchmarks/LOG.md` reads it for each machine (`python -m timeit
# "sum(i*i for i in range(200000))"`): the same 2-core machine read 11 to 21 ms within an
# hour, and every view's time moves with it
YARDSTICK = "sum(i * i for i in range(200000))"


def yardstick() -> float:
    """Milliseconds per run of `YARDSTICK` in this process, the best of three runs of five."""
    import timeit

    return min(timeit.repeat(YARDSTICK, number=5, repeat=3)) / 5 * 1000


def probe(url: str, view: str, repeat: int) -> dict:
    """Run in a fresh process: one view, cold then warm, with the process's peak RSS and
    the machine's speed read just before (`yardstick`)."""
    from benchmarks.memory import peak_rss_mb
    from parity.dashboard import frames, tables

    speed = yardstick()
    kwargs = {"parity_key": history_key(url)} if view == "test_history" else {}
    fn = getattr(frames, view)
    # the store's engine first (it does not connect): its driver's import (psycopg's is
    # 0.14 s) is start-up like the other imports, not the view's first call
    tables.open_store(url)
    start = time.perf_counter()
    rows = len(fn(url, **kwargs))
    cold = time.perf_counter() - start
    warm = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn(url, **kwargs)
        warm = min(warm, time.perf_counter() - start)
    return {"cold": cold, "warm": warm, "rss_mb": peak_rss_mb(), "rows": rows,
            "yardstick_ms": speed}


def measure(url: str, view: str, repeat: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--probe", url, view, str(repeat)],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def ingest_time(url: str, junit: Path, run_id: str) -> float:
    """One nightly file into the store, timed; its tests are new to the store (named after
    the run) and the run is deleted again afterwards, so a kept store stays as built."""
    from sqlalchemy import text

    from parity.db import store, streaks
    from parity.db.engine import make_engine

    night = junit.with_name(f"{run_id}.xml")
    night.write_text(junit.read_text(encoding="utf-8").replace(
        'classname="tests.kernels.', f'classname="tests.kernels_{run_id.replace("-", "_")}.'),
        encoding="utf-8")
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "parity", "--db", url, "ingest", str(night),
                    "--framework", "vllm", "--hardware", "mi300_1", "--run-id", run_id,
                    "--quiet"], check=True, capture_output=True)
    took = time.perf_counter() - start
    night.unlink()
    engine = make_engine(url)
    with engine.begin() as conn:  # the failure streaks' cutoff goes back where it was
        runs = conn.execute(text("SELECT id FROM ci_run WHERE run_id = :r"),
                            {"r": run_id}).scalars().all()
        with streaks.watching(conn, runs=runs):
            conn.execute(text("DELETE FROM ci_run WHERE run_id = :r"), {"r": run_id})
    # and its tests, which no other run has: kept, each measurement left 130,000 more tests
    # in the store (1.7M after 13 of them on SQLite), and the next ingest's new tests went
    # into an ever larger table (the 50M SQLite store's ratio 1.2 -> 1.9-2.3x). Deleted
    # without foreign-key checks, which would scan the results for each test (they have no
    # index by test alone): SQLite's `bulk_transaction`, PostgreSQL's replica role for the
    # transaction (a superuser's; without it they stay, and that is said)
    forget_tests(engine, f"tests.kernels_{run_id.replace('-', '_')}.%")
    # and their rows gone for good on PostgreSQL, as autovacuum would have them (a server
    # may run without it, as this project's machines do: each measurement left 130,000
    # dead tests and results behind for the next run's views to step over)
    store.tidy(engine)
    engine.dispose()
    return took


def forget_tests(engine, classnames: str) -> int:
    """Delete the tests whose classname is LIKE `classnames` (a measurement's own, no row
    refers to them any more) and the test sets left unused; how many tests."""
    from sqlalchemy import text
    from sqlalchemy.exc import DBAPIError

    from parity.db import state, store

    drop = text("DELETE FROM test_case WHERE classname LIKE :c")
    if engine.dialect.name == "sqlite":
        with store.bulk_transaction(engine) as conn:
            n = conn.execute(drop, {"c": classnames}).rowcount
            state.forget_unused_sets(conn)
        return n
    try:
        with engine.begin() as conn:
            conn.execute(text("SET LOCAL session_replication_role = replica"))
            n = conn.execute(drop, {"c": classnames}).rowcount
            state.forget_unused_sets(conn)
        return n
    except DBAPIError as exc:  # not a superuser: the tests stay
        print(f"  (the measurement's tests stay in the store: {type(exc.orig).__name__})")
        return 0


def pg_url(base: str, name: str, fresh: bool = False) -> str:
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        if fresh:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        if not conn.execute(text("SELECT 1 FROM pg_database WHERE datname = :n"),
                            {"n": name}).scalar():
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return make_url(base).set(database=name).render_as_string(hide_password=False)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--probe", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--sizes", default="1M,17M,50M")
    ap.add_argument("--keep", type=Path, help="folder to keep (and reuse) the SQLite stores in")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--views", help="comma-separated subset of the views")
    ap.add_argument("--pg", action="store_true", help="also on PostgreSQL (PARITY_TEST_PG_URL)")
    ap.add_argument("--pg-only", action="store_true", help="only on PostgreSQL")
    ap.add_argument("--pytorch-tests", type=parse_size, metavar="N",
                    help="tests per PyTorch lane and night (default: the year profile's "
                         "6,000; PyTorch's ROCm lanes run hundreds of thousands): stores of "
                         "their own, named with it")
    args = ap.parse_args(argv)
    if args.probe:
        url, view, repeat = args.probe
        print(json.dumps(probe(url, view, int(repeat))))
        return 0
    sizes = sorted(parse_size(s) for s in args.sizes.split(","))
    views = args.views.split(",") if args.views else VIEWS
    folder = args.keep or Path(tempfile.mkdtemp(prefix="parity-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    pytorch = args.pytorch_tests
    name = (lambda n: f"scale-{label(n)}") if pytorch is None else \
        (lambda n: f"scale-{label(n)}-pytorch-{label(pytorch)}")
    backends = [("sqlite", lambda n: f"sqlite:///{folder / f'{name(n)}.db'}")]
    if args.pg_only:
        backends = []
    if (args.pg or args.pg_only) and os.environ.get("PARITY_TEST_PG_URL"):
        base = os.environ["PARITY_TEST_PG_URL"]
        backends.append(("postgresql", lambda n: pg_url(
            base, name(n).replace("scale-", "parity_scale_").replace("-", "_").lower())))
    junit = folder / "nightly.xml"
    if not junit.exists():
        from benchmarks.ingest_junit import generate

        generate(junit, NIGHTLY_TESTS)
    worst_ratio, worst_warm, worst_cold, worst_rss = 0.0, 0.0, 0.0, 0.0
    # the smallest store that holds every view's reach, when it is not the largest
    full = next((n for n in sizes[:-1] if nights_for(n, pytorch)[0] >= reach_nights()), None)
    worst_reach = 0.0
    for backend, url_for in backends:
        urls = {n: url_for(n) for n in sizes}
        for n, url in urls.items():
            build(url, n, pytorch)
        print(f"\n{backend}: default arguments, seconds (cold = first call in a fresh process)")
        head = "".join(f"{label(n) + ' cold':>11}{label(n) + ' warm':>11}" for n in sizes)
        reach_head = f"{'vs reach':>10}" if full else ""
        print(f"{'view':<20}{head}{'ratio warm':>12}{reach_head}{'peak RSS MB':>13}"
              f"{'speed ms':>10}")
        speeds = []
        for view in views + ["test_history"]:
            got = {n: measure(url, view, args.repeat) for n, url in urls.items()}
            speeds += [g["yardstick_ms"] for g in got.values() if "yardstick_ms" in g]
            bad = [f"{label(n)}: {g['error']}" for n, g in got.items() if "error" in g]
            if bad:
                print(f"{view:<20}ERROR {'; '.join(bad)}")
                continue
            small, large = got[sizes[0]], got[sizes[-1]]
            ratio = large["warm"] / max(small["warm"], 1e-6)
            rss = max(g["rss_mb"] for g in got.values())
            worst_ratio, worst_rss = max(worst_ratio, ratio), max(worst_rss, rss)
            worst_warm = max(worst_warm, large["warm"])
            worst_cold = max(worst_cold, large["cold"])
            cells = "".join(f"{got[n]['cold']:>11.3f}{got[n]['warm']:>11.3f}" for n in sizes)
            reach = ""
            if full:
                r = large["warm"] / max(got[full]["warm"], 1e-6)
                worst_reach, reach = max(worst_reach, r), f"{r:>10.2f}"
            # the machine's speed in the largest store's process (`yardstick`)
            speed = f"{large['yardstick_ms']:>10.1f}" if "yardstick_ms" in large else ""
            print(f"{view:<20}{cells}{ratio:>12.2f}{reach}{rss:>13.0f}{speed}", flush=True)
        if speeds:
            speeds.sort()
            print(f"the machine's speed in these processes (ms per `{YARDSTICK}`, lower is "
                  f"faster): median {speeds[len(speeds) // 2]:.1f}, {speeds[0]:.1f} to "
                  f"{speeds[-1]:.1f}")
        if backend == "postgresql":
            empty = pg_url(os.environ["PARITY_TEST_PG_URL"], "parity_scale_empty", fresh=True)
        else:
            Path(folder / "empty.db").unlink(missing_ok=True)
            empty = f"sqlite:///{folder / 'empty.db'}"
        stamp = str(int(time.time()))
        base_t = ingest_time(empty, junit, f"scale-empty-{stamp}")
        line = f"next nightly ingest ({NIGHTLY_TESTS:,} tests): empty store {base_t:.2f} s"
        for n, url in urls.items():
            t = ingest_time(url, junit, f"scale-{label(n)}-{stamp}")
            line += f"; {label(n)} store {t:.2f} s ({t / base_t:.2f}x)"
        print(line)
    print(f"\nworst view on the largest store: {worst_warm:.3f} s warm (target 0.3), "
          f"{worst_cold:.3f} s cold (target 1.0); worst ratio {worst_ratio:.2f} (target 1.5); "
          + (f"worst ratio to the {label(full)} store, which holds every view's reach "
             f"({reach_nights()} nights): {worst_reach:.2f}; " if full else "")
          + f"peak RSS {worst_rss:.0f} MB (target 1024)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
