"""Views of an earlier commit against the working tree, on the same store in the same run:
each side times every view warm (`--calls` calls after a first one, three by default) in
its own process, the two sides alternate `--rounds` times, and the table shows each side's
best and median and their ratios (the best hides the pauses that come every few calls, such
as the garbage collector's; the median shows them). What a change to the views gained,
measured on one machine at one moment. The `same` column says whether the two sides'
frames are equal (a digest of their columns and values): a speed-up must not change a
figure. `--cold` also times each view's first call,
each view in a process of its own (as `scale.py` measures cold), best of the rounds.
`test_history` is timed for the failing test `scale.py` times it for.

    python benchmarks/versus.py --base c6a9232 --store DIR/scale-50M.db [--views a,b] [--rounds 2]
        [--calls 3] [--cold] [--base-store DIR/copy-at-the-earlier-schema.db] [--instructions]

`--instructions` counts instead of timing: the instructions of one warm call of each view on
each side (valgrind's callgrind, with Python's hash seed fixed: a process of a first call
and two warm calls less one of the first call alone, halved), which repeat to a few parts
in ten thousand from run to run where the seconds of a noisy machine move by tens of
percent: a change of a few percent shows. An instruction is not a second (a read that waits
on the disk, a cache miss, costs more than it counts), so a change is timed too; a view
runs about 50 times slower under valgrind.

The earlier commit is checked out with `git worktree` into a temporary folder and imported
from there (its `parity` package laid out as the installed one maps it).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.scale import history_key  # noqa: E402
VIEWS = ["scorecard", "pass_rate_parity", "test_matrix", "amd_only_failures", "skip_parity",
         "coverage", "performance_summary", "regressions", "flaky_tests", "headline",
         "performance_history", "alerts", "provenance", "test_history"]
PACKAGES = {"db": "db", "dashboard": "dashboard", "collectors": "collectors",
            "runners": "runners"}  # parity.<name> -> folder, as pyproject maps them

CHILD = """
import hashlib, sys, time
import pandas as pd
if sys.argv[1]:
    sys.path.insert(0, sys.argv[1])
from parity.dashboard import frames, tables
tables.open_store(sys.argv[2])  # the driver's import is start-up, not a view's first call
out = []
for view in sys.argv[3].split(","):
    f = getattr(frames, view)
    kw = {"parity_key": sys.argv[4]} if view == "test_history" else {}  # one failing test
    try:
        t = time.perf_counter(); df = f(sys.argv[2], **kw); first = time.perf_counter() - t
    except Exception:  # a view the earlier commit does not have, or cannot run
        out.append(f"{view}=nan:-:nan")
        continue
    try:
        digest = hashlib.sha1(repr(list(df.columns)).encode() + pd.util.hash_pandas_object(
            df.astype(str), index=False).to_numpy().tobytes()).hexdigest()[:12]
    except Exception:  # a column the digest cannot read
        digest = "?"
    times = []
    for _ in range(int(sys.argv[5])):
        t = time.perf_counter(); f(sys.argv[2], **kw); times.append(time.perf_counter() - t)
    out.append(f"{view}={'/'.join(f'{x:.4f}' for x in times)}:{digest}:{first:.4f}")
print(" ".join(out))
"""


def layout(tree: Path, into: Path) -> Path:
    """A folder whose `parity` package is the checked-out tree's, mapped as installed."""
    pkg = into / "parity"
    pkg.mkdir(parents=True)
    for item in (tree / "parity").iterdir():
        (pkg / item.name).symlink_to(item)
    for name, folder in PACKAGES.items():
        (pkg / name).symlink_to(tree / folder)
    return into


def timings(path: str, store: str, views: list[str], key: str = "",
            calls: int = 3) -> dict[str, tuple[list[float], str, float]]:
    """Per view: (each warm call's seconds, digest of its frame, first call's seconds);
    `key`: the parity key `test_history` is timed for."""
    done = subprocess.run([sys.executable, "-c", CHILD, path, store, ",".join(views), key,
                           str(calls)],
                          capture_output=True, text=True, check=True, cwd=tempfile.gettempdir())
    out = {}
    for part in done.stdout.split():
        view, value = part.split("=")
        seconds, digest, first = value.split(":")
        out[view] = ([float(x) for x in seconds.split("/")], digest, float(first))
    return out


def instructions(path: str, store: str, view: str, key: str = "") -> tuple[int, str]:
    """One warm call of `view`'s instructions (see the module's text), and its frame's
    digest."""
    counts, digest = [], "?"
    for calls in (0, 2):
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
             "-c", CHILD, path, store, view, key, str(calls)], capture_output=True, text=True,
            check=True, cwd=tempfile.gettempdir(), env={**os.environ, "PYTHONHASHSEED": "0"})
        counts.append(int(re.search(r"Collected\s*:\s*(\d+)", done.stderr).group(1)))
        digest = done.stdout.split("=", 1)[1].split(":")[1]
    return (counts[1] - counts[0]) // 2, digest


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the earlier commit")
    ap.add_argument("--store", required=True)
    ap.add_argument("--base-store", help="the earlier commit's copy of the store, when the "
                    "change upgrades its schema (default: --store)")
    ap.add_argument("--views", default=",".join(VIEWS))
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--calls", type=int, default=3, help="warm calls per view and round")
    ap.add_argument("--cold", action="store_true",
                    help="also the first call, each view in a fresh process")
    ap.add_argument("--instructions", action="store_true",
                    help="count each view's instructions of a warm call instead (valgrind)")
    args = ap.parse_args(argv)
    views = args.views.split(",")
    if args.instructions and not shutil.which("valgrind"):
        ap.error("--instructions needs valgrind (Debian's package valgrind)")
    # the test `scale.py` times `test_history` for, found once in the working tree's store
    key = history_key(args.store) if "test_history" in views else ""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(tree),
                        args.base], check=True)
        try:
            base_path = str(layout(tree, Path(tmp) / "path"))
            if args.instructions:
                return _count(views, base_path, args, key)
            warm: dict[str, dict[str, list[float]]] = {"base": {}, "head": {}}
            cold: dict[str, dict[str, float]] = {"base": {}, "head": {}}
            digests: dict[str, dict[str, str]] = {"base": {}, "head": {}}
            # one process for all views, or with --cold one per view (its first call cold)
            batches = [[v] for v in views] if args.cold else [views]
            for _ in range(args.rounds):
                for batch in batches:
                    for side, path, store in (("base", base_path, args.base_store or args.store),
                                              ("head", "", args.store)):
                        for view, (t, digest, c) in timings(path, store, batch, key,
                                                            args.calls).items():
                            warm[side][view] = warm[side].get(view, []) + t
                            cold[side][view] = min(cold[side].get(view, c), c)
                            digests[side][view] = digest
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                           check=False)
    best = {side: {v: min(t) for v, t in w.items()} for side, w in warm.items()}
    middle = {side: {v: statistics.median(t) for v, t in w.items()} for side, w in warm.items()}
    print(f"warm seconds, best and median of {args.calls} calls x {args.rounds} alternating "
          f"rounds, {args.store}")
    cold_head = f"{'cold base':>11}{'cold tree':>11}{'ratio':>8}" if args.cold else ""
    print(f"{'view':<22}{args.base[:10]:>12}{'working tree':>14}{'ratio':>8}"
          f"{'median base':>13}{'tree':>8}{'ratio':>8}{cold_head}{'same':>6}")
    for view in views:
        cells = ""
        for table, widths in ((best, (12, 14, 8)), (middle, (13, 8, 8)), (cold, (11, 11, 8))):
            if table is cold and not args.cold:
                continue
            b, h = table["base"].get(view), table["head"].get(view)
            ratio = b / h if b and h and b == b and h == h else float("nan")
            cells += f"{b:>{widths[0]}.3f}{h:>{widths[1]}.3f}{ratio:>{widths[2]}.2f}"
        db, dh = digests["base"].get(view), digests["head"].get(view)
        same = "?" if "?" in (db, dh) or "-" in (db, dh) else ("yes" if db == dh else "NO")
        print(f"{view:<22}{cells}{same:>6}")
    return 0


def _count(views: list[str], base_path: str, args, key: str) -> int:
    """`--instructions`' table: millions of instructions of a warm call, each side."""
    print(f"millions of instructions of one warm call (callgrind), {args.store}")
    print(f"{'view':<22}{args.base[:10]:>12}{'working tree':>14}{'ratio':>8}{'same':>6}")
    for view in views:
        b, db = instructions(base_path, args.base_store or args.store, view, key)
        h, dh = instructions("", args.store, view, key)
        same = "?" if "?" in (db, dh) or "-" in (db, dh) else ("yes" if db == dh else "NO")
        print(f"{view:<22}{b / 1e6:>12.1f}{h / 1e6:>14.1f}{b / h if h else float('nan'):>8.3f}"
              f"{same:>6}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
