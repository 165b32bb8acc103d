"""The scale benchmark's path stays tested: a small run (two small stores, every view in a
fresh process, test_history and the next nightly ingest) finishes and reports every line.
The real sizes (1M, 10M, 50M) are measured by hand; see the README's "Scale"."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
        assert len(cells) == 6 and all(float(c) >= 0 for c in cells), line
    assert "next nightly ingest (130,000 tests): empty store" in out
    assert "worst view on the largest store" in out
