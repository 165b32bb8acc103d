"""Demo stores the benchmarks share: `demo-N.db` (N nights ending 2026-11-28) in a folder,
built once and reused through each script's `--keep DIR`."""
from __future__ import annotations

import time
from datetime import date
from pathlib import Path

from parity.collectors import demo
from parity.db.engine import make_engine

END = date(2026, 11, 28)


def demo_store(folder: Path, nights: int, echo=print) -> Path:
    path = folder / f"demo-{nights}.db"
    if not path.exists():
        start = time.perf_counter()
        engine = make_engine(path)
        demo.build(engine, days=nights, end=END)
        engine.dispose()
        echo(f"built {path.name} ({nights} nights) in {time.perf_counter() - start:.0f} s")
    return path
