"""Serve the fake Buildkite by hand: `python -m tests.fakebuildkite [--port N] [--token T]`.

It holds three vLLM nightly pairs (`vllm/ci` and `vllm/amd-ci`: retries, a soft fail, an
agent lost, shards, JUnit, a build with a job still running), so that
`parity collect buildkite --org vllm --pipeline ci --pipeline amd-ci --api-url
http://127.0.0.1:N/v2` can be tried without Buildkite."""
from __future__ import annotations

import argparse
import time
from datetime import datetime, timedelta, timezone

from tests.fakebuildkite.scenario import history
from tests.fakebuildkite.server import FakeBuildkite
from tests.fakebuildkite.world import World


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=8766)
    p.add_argument("--token", default="bkua_fake", help="the token the fake accepts")
    args = p.parse_args()
    world = World()
    now = datetime.now(timezone.utc).replace(tzinfo=None, microsecond=0, second=0, minute=0)
    history(world, now - timedelta(days=3))
    fake = FakeBuildkite(world, {args.token: {"read_builds", "read_build_logs",
                                              "read_artifacts"}}, port=args.port).start()
    print(f"fake Buildkite at {fake.url} (token {args.token}); Ctrl-C stops it", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        fake.stop()


if __name__ == "__main__":
    main()
