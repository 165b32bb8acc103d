"""What `parity serve` runs: the app (`main.py`) as a Streamlit `st.App` whose start-up
computes every page's views, with the default filters, into the cache visitors read before
the server accepts connections, the overview's first. The first visitor of any page after a
restart then sees it as fast as the next one; the server reports ready (`/_stcore/health`)
once that is done. (Computed in a thread while serving, they slowed the first visitor's
page: the two share the interpreter.) It is served as `hosting` serves a script: Nagle's
algorithm off, every page told where its server is, Streamlit's static files from memory."""
from __future__ import annotations

import asyncio
import gc
import logging
import time
from contextlib import asynccontextmanager
from pathlib import Path

import streamlit as st

from parity.dashboard.app import hosting

LOG = logging.getLogger("parity.serve")


@asynccontextmanager
async def _warm(_app):
    from parity.dashboard.app import common  # here: its caches check the running runtime

    start = time.perf_counter()
    try:
        done = await asyncio.to_thread(common.warm)
        LOG.warning("parity: computed %s in %.1f s before accepting connections",
                    ", ".join(done) or "nothing (the store holds no results)",
                    time.perf_counter() - start)
    except Exception as exc:  # noqa: BLE001 - the page shows the error to its visitor
        # the exception's type only: its text may carry the store's URL
        LOG.warning("parity: warming the pages failed (%s); their first visitors compute them",
                    type(exc).__name__)
    LOG.warning("parity: %d objects of start-up kept out of garbage collection", _freeze())
    yield


def _freeze() -> int:
    """Move every object alive after start-up (modules, the warmed cache) out of the
    garbage collector's reach, and return how many. A full collection walked them all
    (130,000 after the imports), 38-48 ms a pause; it now walks what pages made since.
    Measured over 28 view calls on the 50M store: 7 full collections in 268-337 ms before,
    10 in 11-12 ms after."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


app = st.App(Path(__file__).resolve().with_name("main.py"), lifespan=hosting.lifespan(_warm),
             middleware=hosting.middleware())
