"""GitHub sync against the fake GitHub: runs × jobs × artifacts per job, each artifact a small
JUnit zip named with its job id. Prints requests per run against the target formula, wall
time, the ratio to a bare download of the same bytes measured in the same run (one
keep-alive session fetching every artifact from the blob host, nothing parsed or stored),
and what a no-op resync costs.

    python benchmarks/sync.py [--runs 500] [--jobs 8] [--artifacts 2] [--keep DIR]
"""
from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from parity.collectors.github import Client  # noqa: E402
from parity.collectors.settings import Secret, Settings  # noqa: E402
from parity.collectors.sync import GitHubSync, SyncOptions  # noqa: E402
from parity.db.engine import make_engine  # noqa: E402
from tests.fakegithub import FakeGitHub, World  # noqa: E402
from tests.fakegithub.scenario import bulk  # noqa: E402

REPO = "pytorch/pytorch"
TOKEN = "ghp_benchmark"
END = datetime(2026, 11, 20)


def bare_download(fake: FakeGitHub) -> tuple[float, int]:
    """Seconds to fetch every artifact's bytes straight from the blob host."""
    urls = [fake.sign("artifact", a) for a in sorted(fake.world.artifacts)]
    total = 0
    start = time.perf_counter()
    with requests.Session() as s:
        for url in urls:
            total += len(s.get(url, timeout=30).content)
    return time.perf_counter() - start, total


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=500)
    p.add_argument("--jobs", type=int, default=8)
    p.add_argument("--artifacts", type=int, default=2, help="per job")
    p.add_argument("--keep", type=Path, help="keep the store in this folder")
    args = p.parse_args()

    world = World(now=END)
    bulk(world, REPO, END, args.runs, args.jobs, args.artifacts)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="parity-sync-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "sync.db"
    db.unlink(missing_ok=True)
    engine = make_engine(db)
    settings = Settings(tail_runs=10 * args.runs)
    since = END - timedelta(days=30)
    with FakeGitHub(world, {TOKEN: 1}, limit=10 ** 9) as fake:
        bare_s, nbytes = bare_download(fake)
        client = Client(settings, api_url=fake.base_url, token=Secret(TOKEN))
        start = time.perf_counter()
        report = GitHubSync(engine, client, settings).run(SyncOptions(repo=REPO, since=since))
        wall = time.perf_counter() - start
        again = Client(settings, api_url=fake.base_url, token=Secret(TOKEN))
        start = time.perf_counter()
        noop = GitHubSync(engine, again, settings).run(SyncOptions(repo=REPO, since=since))
        noop_s = time.perf_counter() - start
    engine.dispose()

    runs, arts = args.runs, args.runs * args.jobs * args.artifacts
    target = math.ceil(runs / 100) + 2 * runs + arts
    c = report.cost
    print(f"sync: {runs} runs x {args.jobs} jobs x {args.artifacts} artifacts/job "
          f"({arts} artifacts, {nbytes / 1e6:.1f} MB), {report.files} files, {report.records} records")
    print(f"  requests {c['requests']} ({c['requests'] / runs:.2f} per run); target formula "
          f"ceil(R/100) + 2R + A = {target} ({target / runs:.2f} per run); "
          f"{'meets' if c['requests'] <= target else 'MISSES'} it")
    print(f"  wall {wall:.1f} s ({1000 * wall / runs:.0f} ms per run); bare download of the same "
          f"bytes {bare_s:.1f} s; ratio {wall / bare_s:.1f}x")
    print(f"  no-op resync: {noop.cost['requests']} requests, {noop.cost['points']} rate-limit "
          f"points, {noop_s:.2f} s")
    if report.runs_synced != runs or report.runs_failed:
        print(f"  INCOMPLETE: {report.runs_synced} of {runs} runs synced, {report.runs_failed} failed")
        return 1
    print(f"  store: {db}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
