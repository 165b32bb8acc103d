"""A fake api.github.com on loopback, built from GitHub's documented behaviour
(`../shared/docs/github-api-and-runners.md`, sections 1 and 5), not from one client's habits.

Two real HTTP servers: the API on `127.0.0.1:PORT` (optionally under a GHES-style
`/api/v3` prefix) and a blob host on `localhost:OTHER_PORT` that serves artifact and log
downloads behind signed, expiring URLs, as GitHub's 302s do. The API
- authenticates `token X` / `Bearer X` (401 "Bad credentials" for an unknown token; a
  private repository is 404 without one) and checks `X-GitHub-Api-Version`;
- paginates (`per_page` 30 by default, at most 100) with `Link` next/last/first/prev that
  repeat every query parameter, and caps filtered run lists at 1,000 results;
- sends `x-ratelimit-*` headers counted per token, weak ETags over body and token, and a
  304 that costs nothing for a matching `If-None-Match`;
- answers 403 with GitHub's exact messages when the primary limit is spent, and can inject
  faults: 5xx, secondary rate limits (with `retry-after`), 202s, slow responses, truncated
  downloads, and a hold on chosen paths (to kill a client at a known point).
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import random
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlencode, urlsplit

from tests.fakegithub.world import World, dumps, iso, zip_bytes

VERSIONS = ("2022-11-28", "2026-03-10")
DOCS = "https://docs.github.com/rest"
PRIMARY = "API rate limit exceeded for user ID {uid}."
SECONDARY = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
CAPPED = ("actor", "branch", "check_suite_id", "created", "event", "head_sha", "status")


@dataclass
class Faults:
    """Faults injected at random (seeded), plus a queue of exact ones for the next requests."""

    error_rate: float = 0.0  # 500, 502 or 503
    secondary_rate: float = 0.0
    accepted_rate: float = 0.0  # 202 "still computing"
    truncate_rate: float = 0.0  # blob downloads cut short
    retry_after: int | None = 1  # on secondary limits; None sends none
    slow_s: float = 0.0
    primary_status: int = 403  # 403 or 429 when the primary limit is spent
    seed: int = 0
    queue: list[int] = field(default_factory=list)  # statuses for the next API requests


@dataclass
class Logged:
    method: str
    path: str
    status: int
    token: bool
    conditional: bool


class _Hold:
    def __init__(self, fragment: str):
        self.fragment = fragment
        self.reached = threading.Event()
        self.release = threading.Event()


class FakeGitHub:
    def __init__(self, world: World | None = None, tokens: dict[str, int] | None = None, *,
                 limit: int = 5000, anon_limit: int = 60, prefix: str = "",
                 faults: Faults | None = None, port: int = 0,
                 permissions: dict[str, set[str]] | None = None):
        self.world = world or World()
        self.tokens = dict(tokens or {})  # token -> user id
        self.limit, self.anon_limit = limit, anon_limit
        self.prefix = prefix.rstrip("/")
        self.faults = faults or Faults()
        self.port = port
        # token -> fine-grained permissions ("administration:write", ...); absent: all
        self.permissions = dict(permissions or {})
        self.issued: list[str] = []  # registration tokens and JIT configs handed out
        self.rng = random.Random(self.faults.seed)
        self.lock = threading.RLock()
        self.log: list[Logged] = []
        self.blob_log: list[Logged] = []
        self.used: dict[str, int] = {}
        self.reset_at = int(time.time()) + 3600
        self.secret = uuid.uuid4().bytes
        self.holds: list[_Hold] = []
        self.truncated = 0  # downloads cut short by the truncate fault
        self._api = self._blob = None

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> "FakeGitHub":
        self._api = _Server(("127.0.0.1", self.port), _handler(self, api=True))
        self._blob = _Server(("127.0.0.1", 0), _handler(self, api=False))
        for server in (self._api, self._blob):
            threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                             daemon=True).start()
        return self

    def stop(self) -> None:
        for hold in self.holds:
            hold.release.set()
        for server in (self._api, self._blob):
            if server is not None:
                server.shutdown()
                server.server_close()

    def __enter__(self) -> "FakeGitHub":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._api.server_address[1]}{self.prefix}"

    @property
    def blob_url(self) -> str:
        return f"http://localhost:{self._blob.server_address[1]}"

    # -- test hooks ---------------------------------------------------------------------------

    def hold(self, fragment: str) -> _Hold:
        """Make API requests whose path contains `fragment` wait until released."""
        hold = _Hold(fragment)
        self.holds.append(hold)
        return hold

    def points(self, token: str | None = None) -> int:
        """Primary rate-limit points spent by a token (or by anonymous callers)."""
        return self.used.get(token or "anon", 0)

    def remaining(self, token: str | None = None) -> int:
        limit = self.limit if token else self.anon_limit
        return max(0, limit - self.points(token))

    def spend(self, token: str | None, points: int) -> None:
        with self.lock:
            self.used[token or "anon"] = self.used.get(token or "anon", 0) + points

    # -- helpers for handlers -----------------------------------------------------------------

    def sign(self, kind: str, ident: int, ttl: int = 60) -> str:
        expires = int(time.time()) + ttl
        sig = hmac.new(self.secret, f"{kind}/{ident}/{expires}".encode(), "sha256").hexdigest()
        return f"{self.blob_url}/blob/{kind}/{ident}?expires={expires}&sig={sig}"

    def verify(self, kind: str, ident: str, query: dict) -> str | None:
        try:
            expires = int(query.get("expires", "0"))
        except ValueError:
            return "bad expiry"
        good = hmac.new(self.secret, f"{kind}/{ident}/{expires}".encode(), "sha256").hexdigest()
        if not hmac.compare_digest(good, query.get("sig", "")):
            return "signature mismatch"
        if time.time() > expires:
            return "URL expired"
        return None


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        import sys
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return  # a client hanging up (or killed) is part of the tests
        super().handle_error(request, client_address)


def _handler(fake: FakeGitHub, api: bool):
    class Handler(_ApiHandler if api else _BlobHandler):
        pass
    Handler.fake = fake
    return Handler


class _Base(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as GitHub
    disable_nagle_algorithm = True  # headers and body go out as separate writes
    fake: FakeGitHub

    def log_message(self, format, *args) -> None:  # keep test output clean
        pass

    def _send(self, status: int, body: bytes = b"", headers: dict | None = None,
              content_type: str = "application/json; charset=utf-8") -> None:
        self.send_response(status)
        if body or status not in (204, 304):
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)


class _BlobHandler(_Base):
    def do_GET(self) -> None:
        fake = self.fake
        parts = urlsplit(self.path)
        query = dict(parse_qsl(parts.query))
        bits = parts.path.strip("/").split("/")
        auth = "Authorization" in self.headers
        status, body, ctype = 404, b"<Error>BlobNotFound</Error>", "application/xml"
        if len(bits) == 3 and bits[0] == "blob":
            kind, ident = bits[1], bits[2]
            problem = fake.verify(kind, ident, query)
            if problem:
                status, body = 403, f"<Error>AuthenticationFailed: {problem}</Error>".encode()
            else:
                status, body, ctype = self._content(kind, int(ident))
        with fake.lock:
            fake.blob_log.append(Logged("GET", parts.path, status, auth, False))
            truncate = status == 200 and fake.rng.random() < fake.faults.truncate_rate
            fake.truncated += truncate
        if truncate:  # promise the whole body, send half, hang up
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self._send(status, body, content_type=ctype)

    def _content(self, kind: str, ident: int):
        w = self.fake.world
        with self.fake.lock:
            if kind == "artifact" and ident in w.artifacts:
                return 200, w.artifacts[ident].data, "application/zip"
            if kind == "log" and ident in w.jobs:
                return 200, w.jobs[ident].log, "text/plain; charset=utf-8"
            if kind == "runlogs" and ident in w.runs:
                files = {f"{j.name}.txt": j.log for j in w.run_jobs(ident)}
                return 200, zip_bytes(files), "application/zip"
        return 404, b"<Error>BlobNotFound</Error>", "application/xml"


class _ApiHandler(_Base):
    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def _body(self) -> dict:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            data = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            raise _Problem(400, "Problems parsing JSON")
        if not isinstance(data, dict):
            raise _Problem(400, "Problems parsing JSON")
        return data

    # -- the common path: auth, version, faults, limits, conditional answers --------------------

    def _handle(self, method: str) -> None:
        fake = self.fake
        self.token = None
        parts = urlsplit(self.path)
        path = parts.path
        if fake.prefix:
            if not path.startswith(fake.prefix + "/") and path != fake.prefix:
                return self._error(404, "Not Found")
            path = path[len(fake.prefix):] or "/"
        self.query = dict(parse_qsl(parts.query, keep_blank_values=True))
        self.query_order = parse_qsl(parts.query, keep_blank_values=True)
        self.route_path = path
        version = self.headers.get("X-GitHub-Api-Version") or VERSIONS[0]
        self.version = version
        if version not in VERSIONS:
            return self._finish(method, 400, {"message": f"Unsupported API version {version}",
                                              "documentation_url": f"{DOCS}/about-the-rest-api"})
        auth = self.headers.get("Authorization", "")
        token = None
        if auth:
            scheme, _, value = auth.partition(" ")
            if scheme.lower() not in ("token", "bearer") or value not in fake.tokens:
                return self._finish(method, 401, {"message": "Bad credentials",
                                                  "documentation_url": DOCS})
            token = value
        self.token = token
        for hold in fake.holds:
            if hold.fragment in path:
                hold.reached.set()
                hold.release.wait(60)
        if fake.faults.slow_s:
            time.sleep(fake.faults.slow_s)
        if path == "/rate_limit":
            return self._finish(method, 200, self._rate_limit_body(), counts=False)
        if self._injected():
            return
        if fake.remaining(token) <= 0:
            uid = fake.tokens.get(token, 0) if token else 0
            return self._finish(method, fake.faults.primary_status,
                                {"message": PRIMARY.format(uid=uid) if token else
                                 f"API rate limit exceeded for {self.client_address[0]}.",
                                 "documentation_url": f"{DOCS}/overview/rate-limits-for-the-rest-api"},
                                counts=False)
        try:
            status, body, headers = self._route(method, path)
        except _NotFound:
            status, body, headers = 404, {"message": "Not Found", "documentation_url": DOCS}, {}
        except _Problem as exc:
            status, body, headers = exc.status, {"message": exc.message,
                                                 "documentation_url": DOCS}, exc.headers
        self._finish(method, status, body, headers)

    def _injected(self) -> bool:
        """Answer with an injected fault, if one is due; True when it did."""
        fake = self.fake
        with fake.lock:
            queued = fake.faults.queue.pop(0) if fake.faults.queue else None
            roll = fake.rng.random()
        f = fake.faults
        if queued is None:
            if roll < f.error_rate:
                queued = (500, 502, 503)[int(roll * 1000) % 3]
            elif roll < f.error_rate + f.secondary_rate:
                queued = 403
            elif roll < f.error_rate + f.secondary_rate + f.accepted_rate:
                queued = 202
        if queued is None:
            return False
        if queued in (403, 429):
            headers = {"retry-after": str(f.retry_after)} if f.retry_after is not None else {}
            self._finish("GET", queued, {
                "message": SECONDARY,
                "documentation_url": f"{DOCS}/overview/rate-limits-for-the-rest-api"
                                     "#about-secondary-rate-limits"}, headers, counts=False)
        elif queued == 202:
            self._finish("GET", 202, {}, counts=False)
        else:
            self._finish("GET", queued, {"message": "Server Error"}, counts=False)
        return True

    def _finish(self, method: str, status: int, body, headers: dict | None = None,
                counts: bool = True) -> None:
        fake = self.fake
        headers = dict(headers or {})
        raw = body if isinstance(body, bytes) else (
            dumps(body) if body is not None and status != 302 else b"")
        conditional = "If-None-Match" in self.headers
        if status == 200:
            etag = 'W/"' + hashlib.sha1(raw + (self.token or "").encode()).hexdigest() + '"'
            headers["ETag"] = etag
            asked = [t.strip().removeprefix("W/") for t in self.headers.get("If-None-Match", "").split(",")]
            if etag.removeprefix("W/") in asked:
                status, raw = 304, b""
        if counts and status not in (304, 400, 401) and status < 500:
            fake.spend(self.token, 1)
        identity = self.token
        limit = fake.limit if identity else fake.anon_limit
        used = fake.points(identity)
        headers.update({
            "X-GitHub-Request-Id": uuid.uuid4().hex[:20].upper(),
            "x-github-api-version-selected": getattr(self, "version", VERSIONS[0]),
            "X-RateLimit-Limit": str(limit), "X-RateLimit-Remaining": str(max(0, limit - used)),
            "X-RateLimit-Used": str(used), "X-RateLimit-Reset": str(fake.reset_at),
            "X-RateLimit-Resource": "core",
            "Cache-Control": "private, max-age=60, s-maxage=60" if identity else
                             "public, max-age=60, s-maxage=60",
            "Vary": "Accept, Authorization, Cookie, X-GitHub-OTP,Accept-Encoding, Accept, X-Requested-With",
            "X-GitHub-Media-Type": headers.get("X-GitHub-Media-Type", "github.v3; format=json")})
        with fake.lock:
            fake.log.append(Logged(method, self.path, status, identity is not None, conditional))
        self._send(status, raw, headers)

    def _error(self, status: int, message: str) -> None:
        self._send(status, dumps({"message": message, "documentation_url": DOCS}))

    def _rate_limit_body(self) -> dict:
        fake = self.fake
        limit = fake.limit if self.token else fake.anon_limit
        used = fake.points(self.token)
        core = {"limit": limit, "used": used, "remaining": max(0, limit - used), "reset": fake.reset_at}
        body = {"resources": {"core": core,
                              "search": {"limit": 30, "used": 0, "remaining": 30, "reset": fake.reset_at},
                              "graphql": {"limit": 5000, "used": 0, "remaining": 5000, "reset": fake.reset_at},
                              "actions_runner_registration": {"limit": 10000, "used": 0,
                                                              "remaining": 10000, "reset": fake.reset_at}}}
        if self.version == "2022-11-28":
            body["rate"] = dict(core)
        return body

    # -- routes -------------------------------------------------------------------------------

    def _route(self, method: str, path: str):
        bits = path.strip("/").split("/")
        w = self.fake.world
        base = self.fake.base_url
        if bits[:1] == ["orgs"] and len(bits) >= 4 and bits[2:4] == ["actions", "runners"]:
            return self._runners(f"org:{bits[1]}", bits[4:], method)
        if bits[:1] == ["orgs"] and bits[2:4] == ["actions", "runner-groups"] and method == "GET":
            self._allowed("org:" + bits[1], write=False)
            return self._paged("runner_groups", [dict(g) for g in w.groups(bits[1])])
        if bits[:1] != ["repos"] or len(bits) < 3:
            raise _NotFound
        repo_name = f"{bits[1]}/{bits[2]}"
        repo = w.repos.get(repo_name)
        if repo is None or (repo.private and self.token is None):
            raise _NotFound
        rest = bits[3:]
        if not rest and method == "GET":
            return 200, w.repo_payload(repo, base), {}
        if rest[:2] == ["actions", "runners"]:
            return self._runners(repo_name, rest[2:], method)
        if rest[:1] == ["contents"] and method == "GET":
            found = w.contents_payload(repo, "/".join(rest[1:]), base)
            if found is None:
                raise _NotFound
            accept = self.headers.get("Accept", "")
            if isinstance(found, dict) and "application/vnd.github.raw" in accept:
                return 200, w.repos[repo_name].files["/".join(rest[1:]).strip("/")], \
                    {"X-GitHub-Media-Type": "github.v3; param=raw"}
            return 200, found, {}
        if rest[:1] in (["issues"], ["labels"]):
            return self._issues(repo_name, rest, method)
        if method == "POST":
            raise _NotFound
        if rest[:1] != ["actions"]:
            raise _NotFound
        rest = rest[1:]
        if rest == ["runs"]:
            return self._list_runs(repo_name, None)
        if len(rest) == 3 and rest[0] == "workflows" and rest[2] == "runs":
            wf = rest[1]
            wf_id = repo.workflows.get(wf) or (int(wf) if wf.isdigit() and int(wf) in
                                               repo.workflows.values() else None)
            if wf_id is None:
                raise _NotFound
            return self._list_runs(repo_name, wf_id)
        if rest[:1] == ["runs"] and len(rest) >= 2:
            run = w.runs.get(_int(rest[1]))
            if run is None or run.repo != repo_name:
                raise _NotFound
            tail = rest[2:]
            if not tail:
                return 200, w.run_payload(run, base), {}
            if tail == ["jobs"]:
                flt = self.query.get("filter", "latest")
                if flt not in ("latest", "all"):
                    return 422, {"message": "Invalid filter", "documentation_url": DOCS}, {}
                jobs = w.run_jobs(run.id, None if flt == "all" else run.attempt)
                return self._paged("jobs", [w.job_payload(j, base) for j in jobs])
            if tail == ["artifacts"]:
                arts = w.run_artifacts(run.id)
                if self.query.get("name"):
                    arts = [a for a in arts if a.name == self.query["name"]]
                if self.query.get("direction", "desc") == "desc":
                    arts = arts[::-1]
                return self._paged("artifacts", [w.artifact_payload(a, base) for a in arts])
            if tail == ["logs"]:
                return 302, None, {"Location": self.fake.sign("runlogs", run.id)}
            if len(tail) >= 2 and tail[0] == "attempts":
                n = _int(tail[1])
                if not 1 <= n <= run.attempt:
                    raise _NotFound
                if len(tail) == 2:
                    return 200, w.run_payload(run, base, n), {}
                if tail[2:] == ["jobs"]:
                    return self._paged("jobs", [w.job_payload(j, base) for j in w.run_jobs(run.id, n)])
            raise _NotFound
        if rest[:1] == ["jobs"] and len(rest) >= 2:
            job = w.jobs.get(_int(rest[1]))
            if job is None or w.runs[job.run_id].repo != repo_name:
                raise _NotFound
            if len(rest) == 2:
                return 200, w.job_payload(job, base), {}
            if rest[2:] == ["logs"]:
                return 302, None, {"Location": self.fake.sign("log", job.id)}
            raise _NotFound
        if rest == ["artifacts"]:
            arts = [a for a in w.artifacts.values() if w.runs[a.run_id].repo == repo_name]
            if self.query.get("name"):
                arts = [a for a in arts if a.name == self.query["name"]]
            arts.sort(key=lambda a: a.id, reverse=True)
            return self._paged("artifacts", [w.artifact_payload(a, base) for a in arts])
        if rest[:1] == ["artifacts"] and len(rest) >= 2:
            art = w.artifacts.get(_int(rest[1]))
            if art is None or w.runs[art.run_id].repo != repo_name:
                raise _NotFound
            if len(rest) == 2:
                return 200, w.artifact_payload(art, base), {}
            if len(rest) == 3 and rest[2] == "zip":
                if art.expired:
                    return 410, {"message": "Artifact has expired", "documentation_url": DOCS}, {}
                return 302, None, {"Location": self.fake.sign("artifact", art.id)}
            raise _NotFound
        if rest[:1] == ["runners"]:
            return self._runners(repo_name, rest[1:])
        raise _NotFound

    def _issues(self, repo: str, rest: list[str], method: str):
        """Issues, their comments and the repository's labels, as GitHub serves them."""
        w, base = self.fake.world, self.fake.base_url
        if method != "GET" and self.token is None:
            return 401, {"message": "Requires authentication", "documentation_url": DOCS}, {}
        if rest == ["labels"]:
            if method == "POST":
                data = self._body()
                if data.get("name") in w.labels.setdefault(repo, {}):
                    raise _Problem(422, "Validation Failed: already_exists")
                w.labels[repo][data["name"]] = {"name": data["name"],
                                                "color": data.get("color", "ededed")}
                return 201, w.labels[repo][data["name"]], {}
            return self._paged_list(list(w.labels.get(repo, {}).values()))
        issues = w.issues.setdefault(repo, {})
        if rest == ["issues"]:
            if method == "POST":
                data = self._body()
                if not data.get("title"):
                    raise _Problem(422, "Validation Failed: title is missing")
                n = len(issues) + 1
                for name in data.get("labels") or []:
                    w.labels.setdefault(repo, {}).setdefault(name, {"name": name, "color": "ededed"})
                issues[n] = {"number": n, "title": data["title"], "body": data.get("body", ""),
                             "state": "open", "state_reason": None,
                             "labels": [{"name": x} for x in data.get("labels") or []],
                             "html_url": f"{base}/web/{repo}/issues/{n}", "closed_by": None}
                return 201, issues[n], {}
            state = self.query.get("state", "open")
            wanted = set(filter(None, self.query.get("labels", "").split(",")))
            found = [i for i in sorted(issues.values(), key=lambda i: -i["number"])
                     if (state == "all" or i["state"] == state)
                     and wanted <= {x["name"] for x in i["labels"]}]
            return self._paged_list(found)
        number = _int(rest[1]) if len(rest) >= 2 else -1
        issue = issues.get(number)
        if issue is None:
            raise _NotFound
        if len(rest) == 2:
            if method == "PATCH":
                data = self._body()
                for key in ("title", "body", "state", "state_reason"):
                    if key in data:
                        issue[key] = data[key]
                if data.get("state") == "closed":
                    issue["closed_by"] = {"login": "parity-bot"}
                return 200, issue, {}
            return 200, issue, {}
        if rest[2:] == ["comments"] and method == "POST":
            data = self._body()
            comment = {"id": w.next_id(), "body": data.get("body", ""), "issue": number,
                       "repo": repo, "html_url": f"{base}/web/{repo}/issues/{number}"}
            w.comments.append(comment)
            return 201, comment, {}
        raise _NotFound

    def _paged_list(self, items: list):
        """A plain JSON list, paginated with Link like every GitHub list."""
        status, body, headers = self._paged("items", items)
        return status, body["items"] if isinstance(body, dict) and "items" in body else body, headers

    def _allowed(self, scope: str, write: bool) -> None:
        """Fine-grained permissions, when the fake was given some for this token."""
        if self.token is None:
            raise _Problem(401, "Requires authentication")
        granted = self.fake.permissions.get(self.token)
        if granted is None:
            return
        name = "organization_self_hosted_runners" if scope.startswith("org:") else "administration"
        need = f"{name}:{'write' if write else 'read'}"
        if need in granted or (not write and f"{name}:write" in granted):
            return
        raise _Problem(403, "Resource not accessible by personal access token",
                       {"X-Accepted-GitHub-Permissions": need.replace(":", "=")})

    def _runners(self, scope: str, rest: list[str], method: str = "GET"):
        w = self.fake.world
        self._allowed(scope, write=method != "GET")
        runners = sorted((r for r in w.runners.values() if r.scope == scope), key=lambda r: r.id)
        if method == "GET" and not rest:
            if self.query.get("name"):
                runners = [r for r in runners if r.name == self.query["name"]]
            return self._paged("runners", [w.runner_payload(r) for r in runners])
        if method == "POST" and rest in (["registration-token"], ["remove-token"]):
            expires = (datetime.now(timezone.utc) + timedelta(hours=1)).replace(microsecond=0)
            token = "A" + hashlib.sha1(uuid.uuid4().bytes).hexdigest()[:28].upper()
            self.fake.issued.append(token)
            return 201, {"token": token, "expires_at": expires.isoformat()}, {}
        if method == "POST" and rest == ["generate-jitconfig"]:
            return self._jit(scope, runners)
        runner = w.runners.get(_int(rest[0])) if rest else None
        if runner is None or runner.scope != scope or len(rest) > 1:
            raise _NotFound
        if method == "DELETE":
            if runner.busy:
                raise _Problem(422, f'Bad request - Runner "{runner.name}" is still running a job"')
            del w.runners[runner.id]
            return 204, None, {}
        if method == "GET":
            return 200, w.runner_payload(runner), {}
        raise _NotFound

    def _jit(self, scope: str, existing: list):
        w = self.fake.world
        data = self._body()
        for key in ("name", "runner_group_id", "labels"):
            if key not in data:
                raise _Problem(422, f"Invalid input: object is missing required key: {key}")
        labels = data["labels"]
        if not isinstance(data["name"], str) or not data["name"]:
            raise _Problem(422, "Invalid input: name must be a non-empty string")
        if not isinstance(labels, list) or not 1 <= len(labels) <= 100 or \
                not all(isinstance(x, str) and x for x in labels):
            raise _Problem(422, "Invalid input: labels must hold 1 to 100 strings")
        org = scope[4:] if scope.startswith("org:") else None
        groups = {g["id"] for g in w.groups(org)} if org else {1}
        if data["runner_group_id"] not in groups:
            raise _NotFound
        if any(r.name == data["name"] for r in existing):
            raise _Problem(409, f"Already exists - A runner with the name {data['name']} already exists.")
        runner = w.add_runner(scope, data["name"], labels, status="offline", os="unknown",
                              ephemeral=True)
        runner.group_id = data["runner_group_id"]
        runner.version = None
        config = {"runner_id": runner.id, "name": runner.name, "labels": labels,
                  "work_folder": data.get("work_folder", "_work"),
                  "secret": uuid.uuid4().hex}
        encoded = base64.b64encode(json.dumps(config).encode()).decode()
        self.fake.issued.append(encoded)
        return 201, {"runner": w.runner_payload(runner), "encoded_jit_config": encoded}, {}

    def _list_runs(self, repo: str, workflow_id: int | None):
        w = self.fake.world
        q = self.query
        runs = [r for r in w.runs.values() if r.repo == repo and
                (workflow_id is None or r.workflow_id == workflow_id)]
        if q.get("branch"):
            runs = [r for r in runs if r.branch == q["branch"]]
        if q.get("event"):
            runs = [r for r in runs if r.event == q["event"]]
        if q.get("actor"):
            runs = [r for r in runs if r.actor == q["actor"]]
        if q.get("head_sha"):
            runs = [r for r in runs if r.head_sha == q["head_sha"]]
        if q.get("check_suite_id"):
            runs = [r for r in runs if str(r.check_suite_id) == q["check_suite_id"]]
        if q.get("status"):
            runs = [r for r in runs if q["status"] in (r.status, r.conclusion)]
        if q.get("created"):
            test = _created(q["created"])
            if test is None:
                return 422, {"message": "Invalid created filter", "documentation_url": DOCS}, {}
            runs = [r for r in runs if test(r.created_at)]
        runs.sort(key=lambda r: (r.created_at, r.id), reverse=True)
        capped = any(q.get(k) for k in CAPPED)
        base = self.fake.base_url
        payloads = [w.run_payload(r, base) for r in runs]
        return self._paged("workflow_runs", payloads, visible=1000 if capped else None)

    def _paged(self, key: str, items: list, visible: int | None = None):
        try:
            per_page = min(100, max(1, int(self.query.get("per_page", 30))))
            page = max(1, int(self.query.get("page", 1)))
        except ValueError:
            return 422, {"message": "Invalid pagination", "documentation_url": DOCS}, {}
        shown = items if visible is None else items[:visible]
        chunk = shown[(page - 1) * per_page: page * per_page]
        last = max(1, -(-len(shown) // per_page))
        headers = {}
        if last > 1:
            rels = []
            if page < last:
                rels += [("next", page + 1), ("last", last)]
            if page > 1:
                rels += [("first", 1), ("prev", page - 1)]
            headers["Link"] = ", ".join(f'<{self._page_link(n)}>; rel="{rel}"' for rel, n in rels)
        return 200, {"total_count": len(items), key: chunk}, headers

    def _page_link(self, n: int) -> str:
        params = [(k, v) for k, v in self.query_order if k != "page"]
        if not any(k == "per_page" for k, _ in params):
            params.append(("per_page", self.query.get("per_page", "30")))
        params.append(("page", str(n)))
        return f"{self.fake.base_url}{self.route_path}?{urlencode(params)}"


class _NotFound(Exception):
    pass


class _Problem(Exception):
    def __init__(self, status: int, message: str, headers: dict | None = None):
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


def _int(text: str) -> int:
    return int(text) if text.isdigit() else -1


def _when(text: str, end: bool) -> datetime | None:
    text = text.strip()
    try:
        if "T" in text:
            dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
            if dt.tzinfo is not None:
                dt = dt.astimezone(timezone.utc).replace(tzinfo=None)
            return dt
        day = datetime.fromisoformat(text)
    except ValueError:
        return None
    return day + timedelta(days=1) - timedelta(microseconds=1) if end else day


def _created(spec: str):
    """GitHub's search date syntax: `>=X`, `>X`, `<=X`, `<X`, `X..Y`, `X..*`, `*..Y`, `X`."""
    if ".." in spec:
        lo, hi = spec.split("..", 1)
        a = None if lo == "*" else _when(lo, False)
        b = None if hi == "*" else _when(hi, True)
        if (lo != "*" and a is None) or (hi != "*" and b is None):
            return None
        return lambda t: (a is None or t >= a) and (b is None or t <= b)
    for op in (">=", "<=", ">", "<"):
        if spec.startswith(op):
            v = _when(spec[len(op):], op in ("<=", ">"))
            if v is None:
                return None
            return {">=": lambda t: t >= v, "<=": lambda t: t <= v,
                    ">": lambda t: t > v, "<": lambda t: t < v}[op]
    a, b = _when(spec, False), _when(spec, True)
    if a is None:
        return None
    return lambda t: a <= t <= b


__all__ = ["FakeGitHub", "Faults", "iso"]
