"""Streamlit's own script, style and font files, answered from memory after their first answer.

A new visitor's browser fetches about 60 of these files before the page can start, and about
80 more as its first tables and charts appear. Streamlit's handler spent about 3 ms of the
server's one thread on each (path checks, a file read in a worker thread, headers): 0.2 s
for the first 61 alone, while the browser waited. What Streamlit marks immutable (its files
are named by their content's hash) is kept here as Streamlit answered it, headers and body,
and answered again from memory. Anything else goes to Streamlit: another path, a method
other than GET, a range or conditional request, an answer that is not a whole 200 or that
sets a cookie, varies or is compressed. What is kept is bounded by Streamlit's `static/`
folder (26 MB in all, of which a visit reads a few)."""
from __future__ import annotations

from typing import Any, Awaitable, Callable

Message = dict[str, Any]
ASGI = Callable[[Message, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
                Awaitable[None]]
# request headers that change the answer (a part, or "not modified")
PASS = {b"range", b"if-range", b"if-none-match", b"if-modified-since"}
# answer headers that make it unfit to give to everyone
UNFIT = {b"set-cookie", b"vary", b"content-encoding"}


class Assets:
    """ASGI middleware in front of Streamlit (`st.App(middleware=...)`) that keeps its
    immutable answers under `<base URL>/static/` and gives them again from memory."""

    def __init__(self, app: ASGI, base: str | None = None) -> None:
        self.app = app
        self.base = base  # Streamlit's `server.baseUrlPath`; read on first use when None
        self.kept: dict[str, tuple[Message, bytes]] = {}

    @property
    def prefix(self) -> str:
        if self.base is None:
            self.base = base_path()
        base = self.base.strip("/")
        return f"/{base}/static/" if base else "/static/"

    async def __call__(self, scope: Message, receive, send) -> None:
        if not (scope["type"] == "http" and scope["method"] == "GET"
                and scope["path"].startswith(self.prefix)
                and not any(name in PASS for name, _ in scope["headers"])):
            await self.app(scope, receive, send)
            return
        kept = self.kept.get(scope["path"])
        if kept is None:
            await self._keep(scope, receive, send)
            return
        start, body = kept
        await send(start)
        await send({"type": "http.response.body", "body": body, "more_body": False})

    async def _keep(self, scope: Message, receive, send) -> None:
        """Streamlit's answer, relayed as it comes and kept once it is whole and fit."""
        start: Message | None = None
        chunks: list[bytes] = []
        whole = False

        async def relay(message: Message) -> None:
            nonlocal start, whole
            if message["type"] == "http.response.start":
                start = message
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                whole = not message.get("more_body", False)
            await send(message)

        await self.app(scope, receive, relay)
        if whole and start is not None and _fit(start):
            self.kept[scope["path"]] = (dict(start, headers=list(start["headers"])),
                                        b"".join(chunks))


def base_path() -> str:
    """Streamlit's `server.baseUrlPath` ("" when it has none), which is set for the
    server's life."""
    import streamlit as st

    return st.get_option("server.baseUrlPath") or ""


def _fit(start: Message) -> bool:
    """A whole 200 that may be given to anyone and never changes."""
    headers = {name.lower(): value for name, value in start["headers"]}
    return (start["status"] == 200 and not UNFIT & headers.keys()
            and b"immutable" in headers.get(b"cache-control", b""))
