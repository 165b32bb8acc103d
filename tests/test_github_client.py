"""The GitHub client's rules, one by one, against a scripted HTTP server on loopback: each
test queues the exact answers GitHub would give (5xx, 202, secondary and primary limits,
304s, 410s, redirects to a blob host, short and oversized downloads) and checks what the
client sent, how long it waited, what it counted, and that the token went nowhere else."""
from __future__ import annotations

import io
import json
import random
import socket
import threading
import time
from dataclasses import replace
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from parity.collectors.github import (Client, GitHubError, Gone, RateLimited, TooLarge,
                                      Unreachable, links, page_url)
from parity.collectors.settings import Secret, Settings

TOKEN = "ghp_scriptedClientTOKEN_0123456789abcdef"


class Script:
    """A loopback HTTP server answering from a queue of (status, headers, body) and keeping
    every request (method, path, headers, body)."""

    def __init__(self):
        self.answers: list[tuple[int, dict, bytes]] = []
        self.seen: list[tuple[str, str, dict, bytes]] = []
        self.sent = 0  # bytes of streamed bodies written
        script = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self):
                n = int(self.headers.get("content-length") or 0)
                script.seen.append((self.command, self.path, dict(self.headers),
                                    self.rfile.read(n) if n else b""))
                status, headers, body = script.answers.pop(0) if script.answers else (
                    599, {}, b"no answer queued")
                delay = float(headers.pop("x-test-delay", 0))
                if delay:
                    time.sleep(delay)  # longer than the client's timeout: a timeout
                endless = int(headers.pop("x-test-stream", 0))
                if endless:  # a body of that many bytes with no declared length
                    self.send_response(status)
                    self.send_header("connection", "close")
                    self.end_headers()
                    block = b"s" * 65536
                    try:
                        while script.sent < endless:
                            self.wfile.write(block)
                            script.sent += len(block)
                    except OSError:
                        pass  # the client hung up: what it did not read was never sent
                    return
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                if "content-length" not in {k.lower() for k in headers}:
                    self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PATCH = do_HEAD = _answer

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def add(self, status=200, body: object = b"", **headers) -> "Script":
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.answers.append((status, {k.replace("_", "-"): str(v) for k, v in headers.items()},
                             raw))
        return self

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def gh():
    s = Script()
    yield s
    s.close()


@pytest.fixture
def blob():
    """The host signed download URLs point at (the token must never reach it)."""
    s = Script()
    yield s
    s.close()


def _client(gh, **kw) -> tuple[Client, list[float], list[str]]:
    sleeps, lines = [], []
    settings = replace(Settings(), retries=kw.pop("retries", 3), backoff_s=kw.pop("backoff", 2.0),
                       secondary_wait_s=kw.pop("secondary", 10.0),
                       timeout_s=kw.pop("timeout", 5.0), max_download_bytes=kw.pop("limit", 100))
    c = Client(settings, api_url=gh.url + "/", token=kw.pop("token", Secret(TOKEN)),
               sleep=sleeps.append, echo=lines.append, rng=random.Random(7), **kw)
    return c, sleeps, lines


def test_requests_carry_github_s_headers_and_the_token_only_to_the_api(gh):
    c, _, _ = _client(gh)
    assert c.authenticated and c.api_url == gh.url
    gh.add(200, {"ok": 1})
    assert c.request("GET", "/repos/o/r").json() == {"ok": 1}
    _, path, headers, _ = gh.seen[0]
    assert path == "/repos/o/r"
    assert headers["Authorization"] == f"Bearer {TOKEN}"
    assert headers["Accept"] == "application/vnd.github+json"
    assert headers["X-GitHub-Api-Version"] == "2022-11-28"
    assert headers["User-Agent"] == "parity-ci-collector"
    with pytest.raises(GitHubError, match="refusing to send an API request to another host"):
        c.request("GET", "http://elsewhere.example/x")
    anonymous, _, _ = _client(gh, token=None)
    anonymous._token = None
    gh.add(200, {})
    anonymous.request("GET", "/x")
    assert "Authorization" not in gh.seen[-1][2] and not anonymous.authenticated
    assert c.url("https://api.github.com/a") == "https://api.github.com/a"
    assert c.redact(f"x {TOKEN} y") == "x *** y" and anonymous.redact("x") == "x"


def test_costs_and_limits_are_counted_as_github_states_them(gh):
    c, _, _ = _client(gh)
    gh.add(200, {}, x_ratelimit_remaining="4998", x_ratelimit_limit="5000",
           x_ratelimit_reset="1764460800")
    gh.add(304, b"")
    gh.add(200, {"resources": {"core": {"remaining": 5}}})  # /rate_limit is free
    c.request("GET", "/a")
    assert c.request("GET", "/b", headers={"If-None-Match": '"e"'}).status_code == 304
    assert gh.seen[1][2]["If-None-Match"] == '"e"'
    assert c.rate_limit() == {"remaining": 5}
    assert (c.cost.requests, c.cost.not_modified, c.cost.points) == (2, 1, 1)
    assert (c.cost.rate_remaining, c.cost.rate_limit) == (4998, 5000)
    assert c.cost.rate_reset == "2025-11-30T00:00:00+00:00"
    assert c.cost.as_dict()["points"] == 1
    gh.add(200, {"rate": {"remaining": 9}})
    assert c.rate_limit() == {"remaining": 9}


def test_5xx_and_202_are_retried_with_full_jitter_backoff(gh):
    c, sleeps, lines = _client(gh, retries=3, backoff=2.0)
    gh.add(502).add(202).add(500).add(200, {"done": True})
    assert c.request("GET", "/r").json() == {"done": True}
    rng = random.Random(7)
    assert sleeps == [rng.uniform(0, 2.0), rng.uniform(0, 4.0), rng.uniform(0, 8.0)]
    assert c.cost.retries == 3 and c.cost.requests == 4
    assert lines[0].startswith(f"retry   HTTP 502 on {gh.url}/r; waiting ")
    assert all(TOKEN not in line for line in lines)
    # the backoff is capped at a minute
    big, sleeps, _ = _client(gh, retries=1, backoff=1000.0)
    gh.add(500).add(200, {})
    big.request("GET", "/r")
    assert sleeps == [random.Random(7).uniform(0, 60.0)]
    # and gives up after the configured retries
    gh.add(500).add(500).add(500).add(500)
    with pytest.raises(GitHubError, match=r"gave up after 4 tries \(HTTP 500\)") as e:
        c.request("GET", "/r")
    assert TOKEN not in str(e.value)


def test_a_failed_write_is_never_repeated(gh):
    c, sleeps, _ = _client(gh)
    gh.add(502, {"message": "bad gateway"})
    with pytest.raises(GitHubError) as e:
        c.request("POST", "/repos/o/r/issues", json={"title": "t"})
    assert e.value.status == 502 and sleeps == [] and len(gh.seen) == 1
    assert str(e.value) == f"POST {gh.url}/repos/o/r/issues: 502 bad gateway"
    assert json.loads(gh.seen[0][3]) == {"title": "t"}


def test_gone_and_other_refusals(gh):
    c, _, _ = _client(gh)
    gh.add(410, {"message": "expired"})
    with pytest.raises(Gone, match="410 expired") as e:
        c.request("GET", "/artifact")
    assert e.value.status == 410
    gh.add(410, b"not json")
    with pytest.raises(Gone, match="410 Gone$"):
        c.request("GET", "/artifact")
    gh.add(404, {"message": f"no such thing {TOKEN}"})
    with pytest.raises(GitHubError) as e:
        c.request("GET", "/missing")
    assert e.value.status == 404 and TOKEN not in str(e.value) and "***" in str(e.value)
    gh.add(400, {"message": "bad request"})
    with pytest.raises(GitHubError, match="400 bad request"):
        c.request("GET", "/bad")
    gh.add(499, {"message": "client closed"})  # a 4xx is not retried, only 5xx
    asked = len(gh.seen)
    with pytest.raises(GitHubError, match="499"):
        c.request("GET", "/closed")
    assert len(gh.seen) == asked + 1
    gh.add(399, {"odd": True})  # below 400: an answer, returned
    assert c.request("GET", "/odd").status_code == 399
    gh.add(422, ["a", "list"])
    with pytest.raises(GitHubError) as e:
        c.request("GET", "/odd")
    assert str(e.value) == f"GET {gh.url}/odd: 422"
    gh.add(403, {"message": "x" * 400})
    with pytest.raises(GitHubError) as e:
        c.request("GET", "/long")
    assert str(e.value).endswith(": 403 " + "x" * 300)
    gh.add(302, location="https://blob.example/x")
    assert c.request("GET", "/redirect").status_code == 302  # never followed


def test_secondary_limits_wait_as_github_asks(gh):
    c, sleeps, lines = _client(gh, secondary=10.0)
    gh.add(403, {"message": "You have exceeded a secondary rate limit. Please wait."})
    gh.add(429, {"message": "Something. Please retry your request again later."})
    gh.add(403, {"message": "whatever"}, retry_after="7")
    gh.add(200, {})
    c.request("GET", "/r")
    assert sleeps == [10.0, 20.0, 7.0]
    assert "secondary rate limit" in lines[0]
    # a retry-after that is no number is ignored in favour of the message
    gh.add(403, {"message": "Please wait a few minutes before you try again."},
           retry_after="soon")
    gh.add(200, {})
    c.request("GET", "/r")
    assert sleeps[-1] == 10.0


def test_an_exhausted_primary_limit_raises_or_waits_for_its_reset(gh):
    c, sleeps, _ = _client(gh)
    gh.add(403, {"message": "API rate limit exceeded for user"}, x_ratelimit_remaining="0",
           x_ratelimit_reset="1764460800")
    with pytest.raises(RateLimited) as e:
        c.request("GET", "/r")
    assert e.value.reset_at == datetime(2025, 11, 30, tzinfo=timezone.utc)
    assert e.value.status == 403 and "2025-11-30 00:00:00 UTC" in str(e.value)
    assert sleeps == []
    waiting, sleeps, lines = _client(gh, wait=True)
    gh.add(403, {"message": "API rate limit exceeded"}, x_ratelimit_reset="1")
    gh.add(200, {"after": "reset"})
    assert waiting.request("GET", "/r").json() == {"after": "reset"}
    assert sleeps == [1.0, 0.0]  # a reset in the past: one second, then the retry itself
    assert lines[0].startswith("primary rate limit exhausted; waiting for its reset")
    # no reset header: a minute from now
    gh.add(403, {"message": "API rate limit exceeded"})
    before = time.time()
    with pytest.raises(RateLimited) as e:
        c.request("GET", "/r")
    after = time.time()
    assert int(before + 60) <= e.value.reset_at.timestamp() <= int(after + 60)
    gh.add(403, {"message": "Resource not accessible by integration"})
    with pytest.raises(GitHubError, match="403 Resource not accessible"):
        c.request("GET", "/r")


def test_pages_follow_links_and_read_both_list_shapes(gh):
    c, _, _ = _client(gh)
    nxt = f'<{gh.url}/repos/o/r/actions/runs?page=2>; rel="next", <{gh.url}/x>; rel="last"'
    gh.add(200, {"total_count": 3, "workflow_runs": [{"id": 1}, {"id": 2}]}, link=nxt, etag='"a"')
    gh.add(200, {"total_count": 3, "workflow_runs": [{"id": 3}]})
    pages = list(c.pages("/repos/o/r/actions/runs", "workflow_runs", {"status": "completed",
                                                                     "branch": None}))
    assert [len(p.items) for p in pages] == [2, 1]
    assert pages[0].total_count == 3 and pages[0].etag == '"a"' and pages[1].next_url == ""
    assert gh.seen[0][1] == "/repos/o/r/actions/runs?per_page=100&status=completed"
    assert gh.seen[1][1] == "/repos/o/r/actions/runs?page=2"
    gh.add(200, [{"name": "bug"}])  # labels and issues are bare lists
    assert c.all("/repos/o/r/labels", "items") == [{"name": "bug"}]
    gh.add(304, b"", etag='"b"')
    p = c.page(f"{gh.url}/l", "items", etag='"old"')
    assert (p.items, p.etag, p.total_count) == (None, '"b"', None)
    gh.add(304, b"")
    assert c.page(f"{gh.url}/l", "items", etag='"old"').etag == '"old"'
    gh.add(200, {"other": []})
    with pytest.raises(GitHubError, match="response has no 'items' list"):
        c.page(f"{gh.url}/l", "items")
    gh.add(200, "a string")
    with pytest.raises(GitHubError):
        c.page(f"{gh.url}/l", "items")
    gh.add(201, {"html_url": "https://github.com/o/r/issues/1#c"})
    assert c.comment("o/r", 1, "hi") == "https://github.com/o/r/issues/1#c"
    assert gh.seen[-1][:2] == ("POST", "/repos/o/r/issues/1/comments")


def test_links_and_page_urls():
    assert links('<https://a/x?page=2>; rel="next", <https://a/x?page=9>; rel="last"') == {
        "next": "https://a/x?page=2", "last": "https://a/x?page=9"}
    assert links(None) == {} and links("") == {}
    assert page_url("https://a/x", {"b": 2, "a": "1", "c": None, "d": ""}) == \
        "https://a/x?a=1&b=2"
    assert page_url("https://a/x", {"c": None}) == "https://a/x"
    assert page_url("https://a/x", None) == "https://a/x"


def test_downloads_follow_the_redirect_without_the_token(gh, blob):
    c, sleeps, _ = _client(gh, limit=100)
    gh.add(302, location=f"{blob.url}/signed?sig=1")
    blob.add(200, b"z" * 40)
    out = io.BytesIO()
    sha, size = c.download("/repos/o/r/actions/artifacts/1/zip", out)
    assert size == 40 and out.getvalue() == b"z" * 40
    assert "Authorization" not in blob.seen[0][2] and blob.seen[0][1] == "/signed?sig=1"
    assert (c.cost.downloads, c.cost.download_bytes) == (1, 40)
    # a broken transfer is retried from a fresh redirect, the partial bytes dropped
    gh.add(302, location=f"{blob.url}/a").add(302, location=f"{blob.url}/b")
    blob.add(200, b"short", content_length="10")
    blob.add(200, b"0123456789")
    out = io.BytesIO()
    assert c.download("/logs", out)[1] == 10 and out.getvalue() == b"0123456789"
    assert len(sleeps) == 1
    gh.add(302, location=f"{blob.url}/c").add(302, location=f"{blob.url}/d")
    blob.add(503).add(200, b"ok")
    assert c.download("/logs", io.BytesIO())[1] == 2
    gh.add(302, location=f"{blob.url}/e").add(302, location=f"{blob.url}/f")
    blob.add(400).add(200, b"ok")  # a refused signed URL (expired): fetched again
    assert c.download("/logs", io.BytesIO())[1] == 2 and len(sleeps) == 3
    # a server that answers directly
    gh.add(200, b"direct")
    assert c.download("/direct", io.BytesIO())[1] == 6
    gh.add(404, {"message": "nope"})
    with pytest.raises(GitHubError, match="404"):
        c.download("/missing", io.BytesIO())
    gh.add(204)
    with pytest.raises(GitHubError, match="expected a redirect, got 204"):
        c.download("/odd", io.BytesIO())


def test_downloads_stop_at_the_limit(gh, blob):
    c, _, _ = _client(gh, limit=100)
    gh.add(302, location=f"{blob.url}/big")
    blob.add(200, b"x" * 101)
    with pytest.raises(TooLarge, match="101 bytes, over the 100-byte limit"):
        c.download("/big", io.BytesIO())
    gh.add(302, location=f"{blob.url}/edge")
    blob.add(200, b"x" * 100)
    assert c.download("/edge", io.BytesIO())[1] == 100
    # a blob that does not declare its length is cut at the limit as it streams
    with pytest.raises(TooLarge, match="more than the 100-byte limit"):
        c._stream(_Raw(b"y" * 150), io.BytesIO(), 100, "/stream")
    assert c._stream(_Raw(b"y" * 100), io.BytesIO(), 100, "/stream")[1] == 100
    gh.add(302, location=f"{blob.url}/big2")
    blob.add(200, b"x" * 10)
    assert c.download("/big2", io.BytesIO(), limit=10)[1] == 10


class _Raw:
    """A response without a declared length, streaming `data` in small chunks."""

    def __init__(self, data: bytes):
        self.data, self.headers = data, {}

    def iter_content(self, n):
        for i in range(0, len(self.data), 7):
            yield self.data[i:i + 7]

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def close(self):
        pass


def test_an_unreachable_host_fails_at_once():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sleeps = []
    c = Client(Settings(), api_url=f"http://127.0.0.1:{port}", token=Secret(TOKEN),
               sleep=sleeps.append)
    with pytest.raises(Unreachable, match=f"cannot reach 127.0.0.1:{port}"):
        c.request("GET", "/x")
    assert sleeps == [] and c.cost.requests == 0


def test_a_timeout_is_retried(gh):
    c, sleeps, lines = _client(gh, timeout=0.3)
    gh.add(200, {"late": True}, x_test_delay=1.0)
    gh.add(200, {"in": "time"})
    assert c.request("GET", "/slow").json() == {"in": "time"}
    assert len(sleeps) == 1 and "ReadTimeout" in lines[0] and c.cost.retries == 1


def test_proxies_and_netrc_from_the_environment_are_ignored(gh, blob, monkeypatch):
    """A proxy variable or a .netrc must not redirect the token elsewhere."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, f"http://127.0.0.1:{dead}")
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    c, _, _ = _client(gh)
    gh.add(200, {"direct": True})
    assert c.request("GET", "/x").json() == {"direct": True}
    gh.add(302, location=f"{blob.url}/b")
    blob.add(200, b"ok")
    assert c.download("/a", io.BytesIO())[1] == 2


def test_a_download_is_retried_as_often_as_configured(gh, blob):
    c, sleeps, _ = _client(gh, retries=2)
    for _ in range(3):
        gh.add(302, location=f"{blob.url}/x")
    blob.add(500).add(500).add(200, b"third")
    assert c.download("/a", io.BytesIO())[1] == 5 and len(sleeps) == 2
    for _ in range(3):
        gh.add(302, location=f"{blob.url}/x")
    blob.add(500).add(500).add(500)
    with pytest.raises(GitHubError, match=r"gave up after 3 tries \(download: blob host "
                                          r"answered 500\)"):
        c.download("/a", io.BytesIO())


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_every_redirect_status_leads_to_the_blob(gh, status, blob):
    c, _, _ = _client(gh)
    gh.add(status, location=f"{blob.url}/x")
    blob.add(200, b"blob")
    assert c.download("/a", io.BytesIO())[1] == 4
    gh.add(status)  # no location: no redirect to follow
    with pytest.raises(GitHubError, match=f"expected a redirect, got {status}"):
        c.download("/a", io.BytesIO())


def test_a_download_never_buffers_more_than_it_may_keep(gh, blob):
    """The blob is streamed: past the limit the client hangs up, so a huge body without a
    declared length is never read (or held in memory) whole."""
    c, _, _ = _client(gh, limit=100)
    huge = 256 * 1024 * 1024
    gh.add(302, location=f"{blob.url}/huge")
    blob.add(200, x_test_stream=huge)
    with pytest.raises(TooLarge, match="more than the 100-byte limit"):
        c.download("/huge", io.BytesIO())
    assert blob.sent < huge // 4


def test_the_blob_host_may_redirect_again(gh, blob):
    c, _, _ = _client(gh)
    gh.add(302, location=f"{blob.url}/first")
    blob.add(307, location=f"{blob.url}/second").add(200, b"moved")
    assert c.download("/a", io.BytesIO())[1] == 5
    assert [p for _, p, _, _ in blob.seen] == ["/first", "/second"]
