"""Buildkite sync against the fake Buildkite: builds × jobs of vLLM's shape (half `ci`, half
`amd-ci`), each job's log a few MB ending in a pytest summary (some with eight
`>>Shard N:` processes, some with no pytest output), a few jobs uploading JUnit. Prints
requests per build against the target formula, log bytes fetched per job against the whole
logs, wall time and its ratio to a bare fetch of the same bytes measured in the same run
(one keep-alive session asking for every log tail, nothing parsed or stored), and what a
resync with nothing new costs (target: one list request per pipeline).

    python benchmarks/sync_buildkite.py [--builds 200] [--jobs 150] [--keep DIR]
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
from parity.collectors.buildkite import Client  # noqa: E402
from parity.collectors.buildkite_sync import BuildkiteOptions, BuildkiteSync  # noqa: E402
from parity.collectors.settings import Secret, Settings  # noqa: E402
from parity.db.engine import make_engine  # noqa: E402
from tests.fakebuildkite.scenario import JUNIT, ORG, pytest_log  # noqa: E402
from tests.fakebuildkite.server import FakeBuildkite  # noqa: E402
from tests.fakebuildkite.world import World  # noqa: E402

TOKEN = "bkua_benchmark"
START = datetime(2026, 11, 1)
SCOPES = {"read_builds", "read_build_logs", "read_artifacts"}


def logs() -> list[bytes]:
    """A few log bodies, each a few MB of output before its summary (shared by all jobs, so
    the fake holds them once)."""
    noise = b"".join(b"\x1b_bk;t=1747526400000\x07INFO worker step %06d ok\n" % i
                     for i in range(60_000))
    return [noise + pytest_log("tests/kernels/test_attention.py", 400,
                               [f"test_case[{i}]" for i in range(3)]),
            noise + pytest_log("tests/v1/e2e/test_spec_decode.py", 800, [], shards=8),
            noise + pytest_log("tests/models/test_registry.py", 1200, ["test_load"], skipped=40),
            b"--- benchmark\nthroughput 4.2 req/s\n" * 200]  # no pytest output


def build_world(builds: int, jobs: int) -> World:
    w = World()
    bodies = logs()
    for n in range(builds):
        amd = n % 2 == 1
        b = w.build(ORG, "amd-ci" if amd else "ci", 1000 + n, START + timedelta(hours=6 * n),
                    state="passed")
        for j in range(jobs):
            name = (f"mi355_1: Step {j}" if amd else f"Step {j} (B200)")
            job = w.job(b, name, "amd_mi355_1" if amd else "B200", log=bodies[j % len(bodies)])
            if j % 25 == 0:  # a few jobs upload JUnit instead
                w.artifact(b, job, "test-results/junit.xml", JUNIT)
    return w


def bare_fetch(fake: FakeBuildkite, world: World, tail: int) -> tuple[float, int]:
    """Seconds to fetch every log tail and artifact with one session, nothing parsed."""
    urls = []
    for (org, pipeline), builds in world.builds.items():
        for b in builds:
            for j in b.jobs:
                urls.append(f"{fake.url}/organizations/{org}/pipelines/{pipeline}/builds/"
                            f"{b.number}/jobs/{j.id}/log")
    total = 0
    start = time.perf_counter()
    with requests.Session() as s:
        s.headers.update({"Authorization": f"Bearer {TOKEN}", "Accept": "text/plain",
                          "Range": f"bytes=-{tail}"})
        for url in urls:
            total += len(s.get(url, timeout=30).content)
    return time.perf_counter() - start, total


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--builds", type=int, default=200)
    p.add_argument("--jobs", type=int, default=150)
    p.add_argument("--keep", type=Path, help="keep the store in this folder")
    args = p.parse_args()

    world = build_world(args.builds, args.jobs)
    whole = sum(len(j.log) for bs in world.builds.values() for b in bs for j in b.jobs)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="parity-bk-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "buildkite.db"
    db.unlink(missing_ok=True)
    engine = make_engine(db)
    settings = Settings()
    options = BuildkiteOptions(org=ORG, pipelines=("ci", "amd-ci"), since=START - timedelta(days=1))
    with FakeBuildkite(world, {TOKEN: SCOPES}, limit=10 ** 9) as fake:
        bare_s, bare_bytes = bare_fetch(fake, world, settings.buildkite_log_tail_bytes)
        client = Client(settings, Secret(TOKEN), api_url=fake.url)
        start = time.perf_counter()
        report = BuildkiteSync(engine, client, settings).run(options)
        wall = time.perf_counter() - start
        again = Client(settings, Secret(TOKEN), api_url=fake.url)
        start = time.perf_counter()
        noop = BuildkiteSync(engine, again, settings).run(
            BuildkiteOptions(org=ORG, pipelines=("ci", "amd-ci")))
        noop_s = time.perf_counter() - start
    engine.dispose()

    b, jobs = args.builds, args.builds * args.jobs
    arts = report.artifacts
    logs_read = report.logs
    target = 2 * math.ceil(b / 2 / 100) + b + arts + logs_read + report.whole_logs
    c = report.cost
    print(f"buildkite sync: {b} builds x {args.jobs} jobs ({jobs} jobs), {arts} JUnit "
          f"artifacts, {logs_read} log tails, {report.whole_logs} logs read whole; "
          f"{report.files} result files, {report.records} records, {report.job_level} jobs "
          f"with no test output")
    print(f"  requests {c['requests']} ({c['requests'] / b:.1f} per build); target formula "
          f"pages + B + A + L (+ whole logs) = {target} ({target / b:.1f} per build); "
          f"{'meets' if c['requests'] <= target else 'MISSES'} it")
    print(f"  log bytes fetched {c['log_bytes'] / 1e6:.0f} MB ({c['log_bytes'] / jobs / 1024:.0f} KiB "
          f"per job) against {whole / 1e6:.0f} MB of whole logs ({whole / jobs / 1024:.0f} KiB per "
          f"job): {whole / max(c['log_bytes'], 1):.1f}x less")
    print(f"  wall {wall:.1f} s ({1000 * wall / b:.0f} ms per build); bare fetch of the same "
          f"tails {bare_s:.1f} s ({bare_bytes / 1e6:.0f} MB); ratio {wall / bare_s:.1f}x")
    print(f"  resync with nothing new: {noop.cost['requests']} requests (target 2: one list per "
          f"pipeline), {noop_s:.2f} s")
    if report.builds_synced != b or report.builds_failed:
        print(f"  INCOMPLETE: {report.builds_synced} of {b} builds synced, "
              f"{report.builds_failed} failed")
        return 1
    print(f"  store: {db}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
