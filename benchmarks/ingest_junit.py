"""Ingest benchmark: a generated 200,000-testcase pytest JUnit XML file.

Prints (a) end-to-end `parity ingest` into a fresh SQLite store and (b) a floor measured in
the same run: a bare streaming parse of the same file (lxml iterparse, elements cleared)
plus a bare `executemany` of the same number of rows into a table of test_result's shape
with no index. Target (issue 2): end-to-end within 2x the floor.

    python benchmarks/ingest_junit.py [--tests N] [--repeat K]
"""
from __future__ import annotations

import argparse
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lxml import etree


def generate(path: Path, n: int) -> None:
    rnd = random.Random(1)
    with open(path, "w", encoding="utf-8") as f:
        f.write('<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests">'
                f'<testsuite name="pytest" tests="{n}" time="1" '
                'timestamp="2026-11-01T03:04:05.000000+00:00" hostname="ci-mi300x-07">')
        for i in range(n):
            r = rnd.random()
            body = ""
            if r < 0.02:
                body = f'<failure message="AssertionError: mismatch {i}">Traceback\nassert 1 == 2</failure>'
            elif r < 0.10:
                body = ('<skipped type="pytest.skip" message="not supported on ROCm">'
                        'tests/x.py:1: not supported on ROCm</skipped>')
            f.write(f'<testcase classname="tests.kernels.test_mod{i // 200}.TestOps" '
                    f'name="test_op_{i}[fp8-{i % 7}]" time="0.0{i % 10}">{body}</testcase>')
        f.write("</testsuite></testsuites>")


def floor(path: Path, db: Path) -> tuple[float, float]:
    t = time.perf_counter()
    rows = []
    for _, el in etree.iterparse(str(path), events=("end",), tag="testcase", huge_tree=True):
        rows.append((1, 1, len(rows), "passed", None, 0.01, 0, None, None))
        el.clear()
    parse = time.perf_counter() - t
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("CREATE TABLE bare (job_pk INT, artifact_pk INT, test_pk INT, outcome TEXT, "
                 "phase TEXT, duration_s REAL, rerun_count INT, message TEXT, skip_category TEXT)")
    t = time.perf_counter()
    conn.executemany("INSERT INTO bare VALUES (?,?,?,?,?,?,?,?,?)", rows)
    conn.commit()
    insert = time.perf_counter() - t
    conn.close()
    return parse, insert


def end_to_end(path: Path, db: Path) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "parity", "--db", str(db), "ingest", str(path),
                    "--framework", "vllm", "--hardware", "linux.rocm.gpu.gfx942.1", "-q"],
                   check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tests", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        xml = Path(tmp) / "junit.xml"
        generate(xml, args.tests)
        size = xml.stat().st_size / 1e6
        best_floor, best_e2e = None, None
        for k in range(args.repeat):
            p, i = floor(xml, Path(tmp) / f"floor{k}.db")
            e = end_to_end(xml, Path(tmp) / f"parity{k}.db")
            best_floor = min(best_floor or 1e9, p + i)
            best_e2e = min(best_e2e or 1e9, e)
            print(f"run {k + 1}: floor {p + i:.2f} s (parse {p:.2f} + executemany {i:.2f}), "
                  f"end-to-end {e:.2f} s")
        print(f"file: {args.tests:,} testcases, {size:.1f} MB")
        print(f"floor (best of {args.repeat}):      {best_floor:.2f} s  "
              f"({args.tests / best_floor:,.0f} testcases/s)")
        print(f"end-to-end (best of {args.repeat}): {best_e2e:.2f} s  "
              f"({args.tests / best_e2e:,.0f} testcases/s, includes interpreter start)")
        print(f"ratio end-to-end / floor: {best_e2e / best_floor:.2f}x  (target <= 2.0x)")


if __name__ == "__main__":
    main()
