"""How `parity serve` hosts a Streamlit script: Nagle's algorithm off on its listening socket
(`listener`), its page told where its server is (`preamble`) and Streamlit's own static files
answered from memory (`assets`). The app (`server.py`) and the load benchmark's bare page
(`benchmarks/app.py`) both take these, so the two are served alike. Each still calls
`st.App` itself: `streamlit run` finds an app by reading the file for that call."""
from __future__ import annotations

import logging
from contextlib import asynccontextmanager

from starlette.middleware import Middleware

from parity.dashboard.app import assets, listener, preamble

LOG = logging.getLogger("parity.serve")


def middleware() -> list[Middleware]:
    """`st.App`'s middleware: the page's preamble, then the static files."""
    return [Middleware(preamble.Preamble), Middleware(assets.Assets)]


def lifespan(then=None):
    """`st.App`'s lifespan: Nagle's algorithm off on the listening socket, then `then` (a
    lifespan of its own, as `st.App` takes one) for the server's life."""

    @asynccontextmanager
    async def started(app):
        LOG.warning("parity: Nagle's algorithm off on %d listening socket(s)",
                    listener.no_delay())
        if then is None:
            yield
        else:
            async with then(app):
                yield

    return started
