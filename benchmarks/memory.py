"""A process's peak resident memory, as the benchmarks report it (issue 14's target: every
view's process and the app's, at most 1 GiB on the 50M store)."""
from __future__ import annotations

import resource
from pathlib import Path


def peak_rss_mb(pid: int | None = None) -> float | None:
    """The peak resident set size of process `pid` (default this one), in MB: Linux's
    `VmHWM`, the high-water mark of the memory the process has held since it started or
    last replaced its program. Not `getrusage`'s `ru_maxrss`: Linux carries that across
    `execve` from the process that started it, so the views' probes that `scale.py` started
    after building the SQLite stores reported its 368 MB, whatever they used themselves
    (184 MB for the scorecard). Without /proc: this process's `ru_maxrss`, and None for
    another process."""
    try:
        text = Path(f"/proc/{pid or 'self'}/status").read_text()
    except OSError:
        if pid is not None:
            return None
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    kib = next(int(line.split()[1]) for line in text.splitlines() if line.startswith("VmHWM:"))
    return kib / 1024
