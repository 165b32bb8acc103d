"""Serve the fake GitHub by hand: `python -m tests.fakegithub [--port N] [--token T]`.

It holds a small vLLM-like repository (three nightly runs with AMD and NVIDIA jobs, an
expired artifact, a re-run and a run in progress) and a few self-hosted runners, so that
`parity collect github|runners --api-url http://127.0.0.1:N` can be tried without GitHub."""
from __future__ import annotations

import argparse
import time
from datetime import datetime, timedelta, timezone

from tests.fakegithub.scenario import AMD_LABEL, NV_LABEL, history
from tests.fakegithub.server import FakeGitHub
from tests.fakegithub.world import World

REPO = "vllm-project/vllm"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--token", default="ghp_fake", help="the token the fake accepts")
    args = p.parse_args()
    now = datetime.now(timezone.utc).replace(tzinfo=None, microsecond=0, second=0, minute=0)
    world = World(now=now)
    history(world, REPO, now - timedelta(days=1))
    world.add_runner(REPO, "mi355-amds_06", [AMD_LABEL], busy=True)
    world.add_runner(REPO, "mi355-amds_07", [AMD_LABEL], status="offline")
    world.add_runner(REPO, "h200-node-3", [NV_LABEL])
    fake = FakeGitHub(world, {args.token: 1}, port=args.port).start()
    print(f"fake GitHub API at {fake.base_url} (blobs at {fake.blob_url}); token {args.token!r}; "
          f"repository {REPO}. Ctrl-C stops it.", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        fake.stop()


if __name__ == "__main__":
    main()
