"""Time to produce the weekly report (the notebook run with nbclient, every format) on the
demo store and on one `--scale` times larger (more nights), with the ratio between them.
Target: under 30 s on the larger one.

    python benchmarks/report.py [--nights 60] [--scale 10] [--keep DIR]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.stores import demo_store  # noqa: E402
from parity.dashboard import notebook  # noqa: E402

WEEK = "2026-W47"


def timed(db: Path, out: Path) -> float:
    start = time.perf_counter()
    notebook.weekly(out, db_url=str(db), week=WEEK)
    return time.perf_counter() - start


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nights", type=int, default=60)
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--keep", type=Path, help="folder to keep (and reuse) the stores in")
    args = ap.parse_args(argv)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="parity-report-"))
    folder.mkdir(parents=True, exist_ok=True)
    small = demo_store(folder, args.nights)
    large = demo_store(folder, args.nights * args.scale)
    timed(small, folder / "warm")  # the first kernel start pays for imports from a cold disk
    a = timed(small, folder / "report-demo")
    b = timed(large, folder / f"report-{args.scale}x")
    print(f"weekly report {WEEK}: demo ({args.nights} nights) {a:.1f} s, {args.scale}x "
          f"({args.nights * args.scale} nights) {b:.1f} s, ratio {b / a:.2f}; target < 30 s on "
          f"the larger: {'met' if b < 30 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
