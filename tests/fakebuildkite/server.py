"""A fake api.buildkite.com on loopback, built from Buildkite's documented REST behaviour
(`../shared/docs/buildkite-alerts-scale.md` §1.1), not from one client's habits.

Two real HTTP servers: the API on `127.0.0.1:PORT` under `/v2`, and a blob host on
`localhost:OTHER_PORT` serving artifact downloads behind signed URLs that expire after 60
seconds, as Buildkite's 302s do. The API
- requires `Authorization: Bearer TOKEN` on every request (401 otherwise; 403 for a token
  without the scope an endpoint needs, or for another organisation);
- lists builds newest first, page-numbered (`page`, `per_page` 30 by default, at most 100)
  with a `Link` header (next, prev, first, last) that repeats every query parameter;
  filters `branch`, `created_from`, `created_to`, `finished_from`, `state`; embeds jobs and
  leaves retried jobs out unless `include_retried_jobs=true`; refuses deep unfiltered
  listings with Buildkite's 400;
- lists a build's jobs with cursor pagination (`{items, links}`, `after`), its artifacts
  page-numbered; serves job logs as JSON or as text, honouring suffix `Range` requests
  (206 with `Content-Range`, 416 for an empty log);
- counts requests per organisation in 60-second windows (`RateLimit-*` headers, 429 with
  `Retry-After` past the limit) on a clock the test can drive;
- injects faults: 5xx, slow responses, truncated pages, and a hold on chosen paths."""
from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlencode, urlsplit

from parity.collectors.formats.records import parse_time as _time
from tests.fakebuildkite.world import Build, World

DEEP = ("Listing builds this deep is not supported. Please narrow your query using filters "
        "such as branch or created_from.")
UNAUTHENTICATED = ("Authentication required. Please supply a valid API Access Token: "
                   "https://buildkite.com/docs/apis/rest-api#authentication")
ALL_SCOPES = frozenset({"read_builds", "read_build_logs", "read_artifacts"})


@dataclass
class Faults:
    error_rate: float = 0.0  # share of API requests answered 500/502/503 (seeded)
    slow_s: float = 0.0
    truncate_paths: tuple[str, ...] = ()  # list pages on these paths come back cut short
    queue: list[int] = field(default_factory=list)  # statuses for the next API requests
    seed: int = 0


@dataclass
class Logged:
    method: str
    path: str
    query: dict
    status: int
    range: str = ""
    bytes: int = 0


class FakeBuildkite:
    def __init__(self, world: World | None = None, tokens: dict[str, set[str]] | None = None, *,
                 orgs: set[str] | None = None, limit: int = 200, faults: Faults | None = None,
                 clock=time.time, port: int = 0):
        self.world = world or World()
        self.tokens = {t: set(s) for t, s in (tokens or {}).items()}  # token -> scopes
        self.orgs = orgs  # None: every token sees every organisation
        self.limit = limit
        self.faults = faults or Faults()
        self.clock = clock
        self.log: list[Logged] = []
        self.blob_log: list[tuple[str, bool]] = []  # (path, Authorization header seen)
        self.windows: dict[str, tuple[int, int]] = {}  # org -> (window start, used)
        self.holds: dict[str, threading.Event] = {}
        self.held = threading.Event()
        self._rng_state = self.faults.seed
        self._lock = threading.Lock()
        self._key = b"fake-blob-signing-key"
        self.api = ThreadingHTTPServer(("127.0.0.1", port), self._handler(self._api))
        self.blobs = ThreadingHTTPServer(("127.0.0.1", 0), self._handler(self._blob))
        self.api.daemon_threads = self.blobs.daemon_threads = True

    # -- lifecycle ----------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.api.server_address[1]}/v2"

    @property
    def blob_url(self) -> str:
        return f"http://localhost:{self.blobs.server_address[1]}"

    def start(self) -> "FakeBuildkite":
        for srv in (self.api, self.blobs):
            threading.Thread(target=srv.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        for ev in self.holds.values():
            ev.set()
        for srv in (self.api, self.blobs):
            srv.shutdown()
            srv.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def hold(self, fragment: str) -> threading.Event:
        """Requests whose path contains `fragment` wait until the returned event is set."""
        ev = threading.Event()
        self.holds[fragment] = ev
        return ev

    def requests_to(self, fragment: str) -> list[Logged]:
        return [r for r in self.log if fragment in r.path]

    # -- plumbing -----------------------------------------------------------------------------

    def _handler(self, route):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as Buildkite
            disable_nagle_algorithm = True  # headers and body go out as separate writes

            def do_GET(self):
                route(self)

            do_HEAD = do_GET

            def log_message(self, *args):
                pass

        return Handler

    @staticmethod
    def _send(h, status: int, body: bytes = b"", headers: dict | None = None,
              content_type: str = "application/json; charset=utf-8") -> None:
        h.send_response(status)
        h.send_header("Content-Type", content_type)
        h.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(body)

    def _json(self, h, status: int, payload, headers: dict | None = None) -> int:
        body = json.dumps(payload).encode()
        if urlsplit(h.path).path in self.faults.truncate_paths and status == 200:
            body = body[: len(body) // 2]
        self._send(h, status, body, headers)
        return len(body)

    def _rand(self) -> float:
        with self._lock:  # a tiny seeded LCG, so fault sequences repeat
            self._rng_state = (self._rng_state * 1103515245 + 12345) % 2 ** 31
            return self._rng_state / 2 ** 31

    # -- the API ------------------------------------------------------------------------------

    def _api(self, h) -> None:
        parts = urlsplit(h.path)
        path, query = parts.path, dict(parse_qsl(parts.query))
        entry = Logged(h.command, path, query, 0, h.headers.get("Range", ""))
        self.log.append(entry)
        for fragment, ev in list(self.holds.items()):
            if fragment in path:
                self.held.set()
                ev.wait(30)
        if self.faults.slow_s:
            time.sleep(self.faults.slow_s)
        auth = h.headers.get("Authorization", "")
        token = auth[len("Bearer "):] if auth.startswith("Bearer ") else None
        if token not in self.tokens:
            entry.status = 401
            self._json(h, 401, {"message": UNAUTHENTICATED})
            return
        if not path.startswith("/v2/organizations/"):
            entry.status = 404
            self._json(h, 404, {"message": "No route matches that path"})
            return
        bits = path[len("/v2/organizations/"):].split("/")
        org = bits[0]
        if self.orgs is not None and org not in self.orgs:
            entry.status = 404
            self._json(h, 404, {"message": "No organization found"})
            return
        limits = self._limits(org)
        if limits is None:
            now = int(self.clock())
            start, _ = self.windows[org]
            reset = max(0, start + 60 - now)
            entry.status = 429
            self._json(h, 429, {"message": "You have hit the rate limit for this organization"},
                       {"RateLimit-Remaining": "0", "RateLimit-Limit": str(self.limit),
                        "RateLimit-Reset": str(reset), "Retry-After": str(reset)})
            return
        if self.faults.queue:
            status = self.faults.queue.pop(0)
            entry.status = status
            self._json(h, status, {"message": "Injected"}, limits)
            return
        if self.faults.error_rate and self._rand() < self.faults.error_rate:
            entry.status = 502
            self._json(h, 502, {"message": "Bad Gateway"}, limits)
            return
        entry.status, entry.bytes = self._route(h, org, bits[1:], query, self.tokens[token], limits)

    def _limits(self, org: str) -> dict | None:
        with self._lock:
            now = int(self.clock())
            start, used = self.windows.get(org, (now, 0))
            if now >= start + 60:
                start, used = now, 0
            if used >= self.limit:
                self.windows[org] = (start, used)
                return None
            used += 1
            self.windows[org] = (start, used)
            return {"RateLimit-Remaining": str(self.limit - used),
                    "RateLimit-Limit": str(self.limit),
                    "RateLimit-Reset": str(max(0, start + 60 - now))}

    def _route(self, h, org: str, rest: list[str], q: dict, scopes: set[str], limits: dict):
        def need(scope: str) -> bool:
            if scope in scopes:
                return True
            self._json(h, 403, {"message": f"Your access token doesn't have the {scope} scope"},
                       limits)
            return False

        if rest == ["rate_limit"]:
            _, used = self.windows[org]
            return 200, self._json(h, 200, {"scopes": {"rest": {
                "limit": self.limit, "current": used, "enforced": True}}}, limits)
        if len(rest) < 3 or rest[0] != "pipelines" or rest[2] != "builds":
            return 404, self._json(h, 404, {"message": "No route matches that path"}, limits)
        pipeline = rest[1]
        if not need("read_builds"):
            return 403, 0
        if len(rest) == 3:
            return self._builds(h, org, pipeline, q, limits)
        build = self.world.find(org, pipeline, int(rest[3])) if rest[3].isdigit() else None
        if build is None:
            return 404, self._json(h, 404, {"message": "No build found"}, limits)
        tail = rest[4:]
        if not tail:
            return 200, self._json(h, 200, self.world.build_payload(
                build, self.url, self.blob_url, q.get("include_retried_jobs") == "true"), limits)
        if tail == ["artifacts"]:
            if not need("read_artifacts"):
                return 403, 0
            items = [self.world.artifact_payload(build, a, self.url) for a in build.artifacts]
            return self._paged(h, items, q, limits)
        if tail == ["jobs"]:
            return self._cursor(h, build, q, limits)
        if len(tail) >= 3 and tail[0] == "jobs":
            job = next((j for j in build.jobs if j.id == tail[1]), None)
            if job is None:
                return 404, self._json(h, 404, {"message": "No job found"}, limits)
            if tail[2:] in (["log"], ["log.txt"]):
                if not need("read_build_logs"):
                    return 403, 0
                return self._log(h, build, job, tail[2] == "log.txt", limits)
            if len(tail) == 5 and tail[2] == "artifacts" and tail[4] == "download":
                if not need("read_artifacts"):
                    return 403, 0
                art = next((a for a in build.artifacts if a.id == tail[3]), None)
                if art is None:
                    return 404, self._json(h, 404, {"message": "No artifact found"}, limits)
                target = self._sign(art.id)
                return 302, self._json(h, 302, {"url": target}, {**limits, "Location": target})
        return 404, self._json(h, 404, {"message": "No route matches that path"}, limits)

    def _builds(self, h, org: str, pipeline: str, q: dict, limits: dict):
        builds = sorted(self.world.builds.get((org, pipeline), []), key=lambda b: -b.number)
        filters = {k for k in ("branch", "created_from", "created_to", "finished_from", "commit",
                               "state") if q.get(k)}
        if q.get("branch"):
            builds = [b for b in builds if b.branch == q["branch"]]
        for key, test in (("created_from", lambda b, t: b.created_at >= t),
                          ("created_to", lambda b, t: b.created_at < t),
                          ("finished_from", lambda b, t: b.finished_at is not None
                           and b.finished_at >= t)):
            if q.get(key):
                t = _time(q[key])
                if t is None:
                    return 422, self._json(h, 422, {"message": f"{key} is not a valid date"},
                                           limits)
                builds = [b for b in builds if test(b, t)]
        if q.get("state"):
            builds = [b for b in builds if b.state == q["state"]]
        page = int(q.get("page") or 1)
        if page > 50 and not filters:
            return 400, self._json(h, 400, {"message": DEEP}, limits)
        retried = q.get("include_retried_jobs") == "true"
        return self._paged(h, [self.world.build_payload(b, self.url, self.blob_url, retried)
                               for b in builds], q, limits)

    def _paged(self, h, items: list, q: dict, limits: dict):
        per_page = min(100, max(1, int(q.get("per_page") or 30)))
        page = max(1, int(q.get("page") or 1))
        last = max(1, -(-len(items) // per_page))
        body = items[(page - 1) * per_page: page * per_page]
        base = f"http://{h.headers.get('Host')}{urlsplit(h.path).path}"

        def link(n: int) -> str:
            return f"{base}?{urlencode({**q, 'page': n, 'per_page': per_page})}"
        rels = []
        if page < last:
            rels += [f'<{link(page + 1)}>; rel="next"', f'<{link(last)}>; rel="last"']
        if page > 1:
            rels += [f'<{link(1)}>; rel="first"', f'<{link(page - 1)}>; rel="prev"']
        headers = {**limits, **({"Link": ", ".join(rels)} if rels else {})}
        return 200, self._json(h, 200, body, headers)

    def _cursor(self, h, build: Build, q: dict, limits: dict):
        retried = q.get("include_retried_jobs", "true") == "true"  # true by default here
        jobs = [self.world.job_payload(build, j, self.url, self.blob_url) for j in build.jobs
                if retried or not j.retried_in_job_id]
        per_page = min(100, max(1, int(q.get("per_page") or 30)))
        start = 0
        if q.get("after"):
            ids = [j["id"] for j in jobs]
            start = ids.index(q["after"]) + 1 if q["after"] in ids else len(ids)
        items = jobs[start:start + per_page]
        base = f"http://{h.headers.get('Host')}{urlsplit(h.path).path}"
        nxt = (f"{base}?{urlencode({**q, 'after': items[-1]['id'], 'per_page': per_page})}"
               if start + per_page < len(jobs) and items else None)
        headers = {**limits, **({"Link": f'<{nxt}>; rel="next"'} if nxt else {})}
        return 200, self._json(h, 200, {"items": items, "links": {"self": h.path, "next": nxt}},
                               headers)

    def _log(self, h, build: Build, job, text_ext: bool, limits: dict):
        data = job.log
        as_text = text_ext or "text/plain" in h.headers.get("Accept", "")
        if not as_text:
            return 200, self._json(h, 200, {"url": f"{self.url}/log", "content":
                                            data.decode("utf-8", "replace"), "size": len(data),
                                            "header_times": []}, limits)
        rng = h.headers.get("Range", "")
        if rng:
            if not data:
                self._send(h, 416, b"", {**limits, "Content-Range": "bytes */0"}, "text/plain")
                return 416, 0
            n = int(rng.split("=-", 1)[1]) if "=-" in rng else 0
            if n <= 0:
                self._send(h, 416, b"", limits, "text/plain")
                return 416, 0
            part = data[-n:]
            first = len(data) - len(part)
            self._send(h, 206, part, {**limits, "Content-Range":
                                      f"bytes {first}-{len(data) - 1}/{len(data)}"}, "text/plain")
            return 206, len(part)
        self._send(h, 200, data, limits, "text/plain")
        return 200, len(data)

    # -- the blob host ------------------------------------------------------------------------

    def _sign(self, art_id: str) -> str:
        expires = int(self.clock()) + 60
        sig = hmac.new(self._key, f"{art_id}:{expires}".encode(), hashlib.sha256).hexdigest()
        return f"{self.blob_url}/artifacts/{art_id}?expires={expires}&signature={sig}"

    def _blob(self, h) -> None:
        parts = urlsplit(h.path)
        q = dict(parse_qsl(parts.query))
        self.blob_log.append((parts.path, "Authorization" in h.headers))
        art_id = parts.path.rsplit("/", 1)[-1]
        want = hmac.new(self._key, f"{art_id}:{q.get('expires')}".encode(),
                        hashlib.sha256).hexdigest()
        if not hmac.compare_digest(want, q.get("signature", "")) or \
                int(q.get("expires") or 0) < self.clock():
            self._send(h, 403, b"<Error>AccessDenied</Error>", content_type="application/xml")
            return
        for builds in self.world.builds.values():
            for b in builds:
                for a in b.artifacts:
                    if a.id == art_id:
                        self._send(h, 200, a.data, content_type="application/octet-stream")
                        return
        self._send(h, 404, b"<Error>NoSuchKey</Error>", content_type="application/xml")
