"""Streamlit's page, with where its server is written into it.

Opened at a page's own address (`/tests`, a shared link, a bookmark), Streamlit's page does
not know where its server is: it asks `/tests/_stcore/health`, is answered 404, waits 100 ms
and asks `/_stcore/health`, and only once both that and `/_stcore/host-config` have answered
does it open its connection and ask for the page. That cost every page but the main one
0.1-0.2 s before its script could start. Streamlit reads a preamble that a host may set
before its scripts run, `window.__streamlit`: given the server's address
(`BACKEND_BASE_URL`) it asks there only, and given also the two host settings that decide
how to connect (`HOST_CONFIG`: `allowedOrigins`, `useExternalAuthToken`) it opens the
connection at once and checks health in the background ("bypass mode" in Streamlit's
frontend). Both are written here into every page Streamlit answers, with the values
Streamlit's own `/_stcore/host-config` answers for them.

The address is worked out in the browser, from the path the server was asked for: behind
a proxy that serves the app under a prefix of its own (and strips it), the page's address
ends with that path and what comes before it is the proxy's prefix. Where it does not end
so, nothing is set and Streamlit looks for its server as before."""
from __future__ import annotations

import gzip
import json
from typing import Any

from parity.dashboard.app.assets import base_path

Message = dict[str, Any]
# Streamlit's routes for files other than its page (a component's or a media file may be
# HTML too), under its base path
OTHERS = ("_stcore/", "static/", "media/", "component/", "app/static/")
# headers of Streamlit's file that the page written here no longer matches: its validators,
# length and encoding
STALE = {b"etag", b"last-modified", b"accept-ranges", b"content-length", b"content-encoding"}
SCRIPT = """<script>(() => {{
  const asked = {asked}, path = location.pathname;
  if (!path.endsWith(asked)) return;
  const base = new URL(path.slice(0, path.length - asked.length) + {root}, location.href);
  window.__streamlit = {{BACKEND_BASE_URL: base.href, HOST_CONFIG: {host},
                        ...window.__streamlit}};
}})()</script>"""


class Preamble:
    """ASGI middleware in front of Streamlit (`st.App(middleware=...)`) that writes
    `window.__streamlit` into Streamlit's page (a whole 200 of `text/html` for a path of
    none of its other routes) wherever it answers it."""

    def __init__(self, app, base: str | None = None,
                 origins: list[str] | None = None) -> None:
        self.app = app
        self.base = base  # Streamlit's `server.baseUrlPath`; read on first use when None
        self.origins = origins  # its `client.allowedOrigins`; read on each page when None

    async def __call__(self, scope: Message, receive, send) -> None:
        if not (scope["type"] == "http" and scope["method"] == "GET"
                and self._page_path(scope["path"])):
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        encoding: bytes | None = None
        chunks: list[bytes] = []

        async def hold(message: Message) -> None:
            nonlocal start, encoding
            if message["type"] == "http.response.start":
                encoding = _page_encoding(message)
                if encoding is not None:
                    start = message
                    return
            if start is not None and message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    await self._send(scope, start, encoding, b"".join(chunks), send)
            else:
                await send(message)

        await self.app(scope, receive, hold)

    async def _send(self, scope: Message, start: Message, encoding: bytes, body: bytes,
                    send) -> None:
        if encoding == b"gzip":
            body = gzip.decompress(body)
        body = written(body, scope.get("raw_path") or scope["path"].encode(), self._base(),
                       self._origins())
        kept = [(name, value) for name, value in start["headers"]
                if name.lower() not in STALE]
        await send(dict(start, headers=kept + [(b"content-length", str(len(body)).encode())]))
        await send({"type": "http.response.body", "body": body, "more_body": False})

    def _page_path(self, path: str) -> bool:
        base = self._base().strip("/")
        under = path[len(base) + 1:] if base and path.startswith(f"/{base}/") else path
        return not under.lstrip("/").startswith(OTHERS)

    def _base(self) -> str:
        if self.base is None:
            self.base = base_path()
        return self.base

    def _origins(self) -> list[str]:
        """The allowed origins Streamlit's `/_stcore/host-config` answers."""
        if self.origins is not None:
            return self.origins
        import streamlit as st

        origins = list(st.get_option("client.allowedOrigins"))
        if st.get_option("global.developmentMode") and "http://localhost" not in origins:
            origins.append("http://localhost")
        return origins


def _page_encoding(start: Message) -> bytes | None:
    """The content encoding of a page this writes into (a whole 200 of `text/html`, plain or
    gzip), or None for any other answer."""
    headers = {name.lower(): value for name, value in start["headers"]}
    encoding = headers.get(b"content-encoding", b"identity")
    page = (start["status"] == 200 and headers.get(b"content-type", b"").startswith(b"text/html")
            and encoding in (b"identity", b"gzip"))
    return encoding if page else None


def written(page: bytes, asked: bytes, base: str, origins: list[str]) -> bytes:
    """`page` with the preamble as the first thing in its head (unchanged without a head);
    `asked`: the path the server was asked for, as sent; `base`: Streamlit's base path."""
    at = page.lower().find(b"<head>")
    if at < 0:
        return page
    base = base.strip("/")
    script = SCRIPT.format(asked=_js(asked.decode("latin-1")),
                           root=_js(f"/{base}/" if base else "/"),
                           host=_js({"allowedOrigins": origins, "useExternalAuthToken": False}))
    at += len(b"<head>")
    return page[:at] + script.encode() + page[at:]


def _js(value) -> str:
    """`value` as a JavaScript literal that cannot end the script it is in."""
    return (json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("&", "\\u0026"))
