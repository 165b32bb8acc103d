"""Python's cyclic garbage collector, paused for the length of a view call.

A view call holds tens of thousands of container objects for a few hundred milliseconds
(the rows of its reads, the tuples of its keys). They count towards the collector's
thresholds, so a call sets off dozens of young collections, and every few calls a full
one, which walks every object of the process (pandas, SQLAlchemy, NumPy and the rest:
about 130,000 objects and 20 ms on its own, 50 ms with a call's rows alive). Paused, a call
frees what it made by reference counting as before; the cycles it leaves (a few hundred
objects) are collected after it, with the young objects, once the collector runs again.

The collector is one per process: calls in several threads (the app's sessions) share one
pause, which ends when the last of them does. Should calls overlap without end, the young
objects are still collected every `YOUNG_LIMIT` of them, so garbage cannot pile up."""
from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

YOUNG_LIMIT = 200_000  # young objects that may wait for the pause to end
_lock = threading.Lock()
_calls = 0  # calls within the pause
_resume = False  # whether the pause found the collector running, to run it again after


@contextmanager
def paused() -> Iterator[None]:
    """No automatic collection while the block runs (nor while another thread's does)."""
    global _calls, _resume
    with _lock:
        if _calls == 0:
            _resume = gc.isenabled()
            gc.disable()
        _calls += 1
    try:
        yield
    finally:
        with _lock:
            _calls -= 1
            if _calls == 0:
                if _resume:
                    gc.enable()
            elif _resume and gc.get_count()[0] > YOUNG_LIMIT:
                gc.collect(1)  # the young generations only: a pause that never ends
