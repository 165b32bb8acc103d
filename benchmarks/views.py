"""Time of each parity view on the demo store and on one `--scale` times larger (more
nights), with the ratio between them: a view that reads per-(job, group) summaries grows with
the runs it looks at, not with the tests.

    python benchmarks/views.py [--scale 10] [--repeat 3] [--keep DIR]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.stores import demo_store  # noqa: E402
from parity.dashboard import frames  # noqa: E402

VIEWS = [("pass_rate_parity", {}), ("pass_rate_parity", {"latest": False, "since": "2026-11-01"}),
         ("test_matrix", {}), ("amd_only_failures", {}), ("skip_parity", {}), ("coverage", {}),
         ("performance_parity", {}), ("performance_summary", {}), ("pareto", {}),
         ("accuracy_parity", {}), ("regressions", {"since": "2026-11-01"}),
         ("flaky_tests", {"since": "2026-11-01"}), ("fleet", {}), ("scorecard", {})]


def timed(path: Path, name: str, kw: dict, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        getattr(frames, name)(path, **kw)
        best = min(best, time.perf_counter() - start)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nights", type=int, default=60)
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="folder to keep (and reuse) the stores in")
    args = ap.parse_args(argv)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="parity-views-"))
    folder.mkdir(parents=True, exist_ok=True)
    small = demo_store(folder, args.nights)
    large = demo_store(folder, args.nights * args.scale)
    print(f"{'view':<44}{'demo s':>9}{f'{args.scale}x s':>9}{'ratio':>8}")
    total_small = total_large = 0.0
    for name, kw in VIEWS:
        a, b = timed(small, name, kw, args.repeat), timed(large, name, kw, args.repeat)
        total_small, total_large = total_small + a, total_large + b
        label = name + (f" {kw}" if kw else "")
        print(f"{label:<44}{a:>9.2f}{b:>9.2f}{b / a:>8.1f}")
    print(f"{'all views':<44}{total_small:>9.2f}{total_large:>9.2f}"
          f"{total_large / total_small:>8.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
