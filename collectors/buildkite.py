"""The one module of `collectors` that talks to Buildkite: a thin, frugal REST client.

It follows Buildkite's documented rules (`../shared/docs/buildkite-alerts-scale.md` §1.1):
- every request carries `Authorization: Bearer TOKEN` (the REST API has no anonymous
  access); artifact downloads are 302s to a short-lived signed URL on another host, fetched
  without the token;
- lists are followed through the `Link` header (`rel="next"`), whatever their pagination
  (page numbers for builds and artifacts, cursors for jobs);
- the rate limit (200 requests a minute, shared by the whole organisation) is read from
  `RateLimit-Remaining`/`RateLimit-Limit`/`RateLimit-Reset` on every response. The client
  uses at most `share` of each window: once the remaining points fall to what the rest of
  the organisation is owed, it waits for the reset. A 429 waits `Retry-After` (or the
  reset); 5xx and timeouts are retried with exponential backoff and full jitter. A
  connection that cannot be opened at all fails after one short try: an unreachable host
  is not a busy one.
- a request budget (`max_requests`) stops the sync with `BudgetSpent`, which the sync turns
  into a clean stop that the next run resumes.
The token never appears in an exception, a log line or the cost report."""
from __future__ import annotations

import hashlib
import random
import time
from dataclasses import asdict, dataclass
from typing import Any, BinaryIO, Callable, Iterator
from urllib.parse import urlsplit

import requests

from parity.collectors.github import links, page_url
from parity.collectors.settings import Secret, Settings
from parity.db.network import CONNECT_TIMEOUT_S, unreachable

USER_AGENT = "parity-ci-collector"


class BuildkiteError(Exception):
    """A request Buildkite refused or that kept failing; the text names the URL and why."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class Unreachable(BuildkiteError):
    """The API host could not be reached at all (DNS, refused connection, no route)."""


class BudgetSpent(BuildkiteError):
    """The sync's request budget, or the patience for a rate-limit wait, is spent."""


class TooLarge(BuildkiteError):
    """A download larger than the configured limit."""


@dataclass
class Cost:
    """What a sync spent: API requests, retries, waits for the rate limit, downloads from
    the blob host, log bytes, and the rate limit as the last response stated it."""

    requests: int = 0
    retries: int = 0
    rate_waits: int = 0
    downloads: int = 0
    download_bytes: int = 0
    log_requests: int = 0
    log_bytes: int = 0
    rate_limit: int | None = None
    rate_remaining: int | None = None
    rate_reset_s: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class LogTail:
    """The last bytes of a job log: `text`, how many bytes that is, the whole log's size,
    and whether `text` is the whole log."""

    text: bytes
    size: int
    whole: bool


class Client:
    def __init__(self, settings: Settings, token: Secret | None, api_url: str | None = None, *,
                 sleep: Callable[[float], None] = time.sleep,
                 echo: Callable[[str], None] | None = None, rng: random.Random | None = None,
                 max_wait_s: float = 300.0):
        self.settings = settings
        self.api_url = (api_url or settings.buildkite_api_url).rstrip("/")
        self._netloc = urlsplit(self.api_url).netloc
        self._token = token
        self.sleep = sleep
        self.echo = echo or (lambda line: None)
        self.rng = rng or random.Random()
        self.max_wait_s = max_wait_s
        self.cost = Cost()
        self.session = requests.Session()
        self.session.trust_env = False  # no proxies or .netrc credentials slipping in
        self.session.headers.update({"Accept": "application/json", "User-Agent": USER_AGENT})
        self.blobs = requests.Session()  # never carries the token
        self.blobs.trust_env = False
        self.blobs.headers.update({"User-Agent": USER_AGENT})

    def url(self, path: str) -> str:
        return path if path.startswith(("http://", "https://")) else f"{self.api_url}{path}"

    def redact(self, text: str) -> str:
        if self._token is not None and self._token.reveal():
            text = text.replace(self._token.reveal(), "***")
        return text

    # -- the request loop -------------------------------------------------------------------

    def request(self, path: str, params: dict | None = None, headers: dict | None = None,
                method: str = "GET") -> requests.Response:
        """One API request under the rules of the module docstring. Redirects are returned,
        not followed; a 4xx other than 429 raises `BuildkiteError` at once."""
        if self._token is None:
            raise BuildkiteError("no Buildkite API token: set BUILDKITE_API_TOKEN or pass "
                                 "--token-file (an API access token with read_builds, "
                                 "read_build_logs and read_artifacts scopes)")
        url = self.url(path)
        if urlsplit(url).netloc != self._netloc:
            raise BuildkiteError(f"refusing to send an API request to another host: {url}")
        limit = self.settings.buildkite_max_requests
        if limit and self.cost.requests >= limit:
            raise BudgetSpent(f"the request budget of {limit} is spent")
        send = {**(headers or {}), "Authorization": f"Bearer {self._token.reveal()}"}
        attempt = 0
        while True:
            self._pace()
            try:
                resp = self.session.request(method, url, params=params, headers=send,
                                            allow_redirects=False,
                                            timeout=(CONNECT_TIMEOUT_S, self.settings.timeout_s))
            except requests.ConnectionError as exc:
                why = unreachable(exc)
                if why:
                    raise Unreachable(f"cannot reach {self._netloc} ({why}); check the network "
                                      f"or --api-url") from None
                attempt = self._retry(attempt, url, type(exc).__name__)
                continue
            except requests.Timeout:
                attempt = self._retry(attempt, url, "timeout")
                continue
            self.cost.requests += 1
            self._note_limits(resp)
            if resp.status_code < 400:
                return resp
            if resp.status_code == 429:
                self._wait_for_window(resp, url)
                continue
            if resp.status_code >= 500:
                attempt = self._retry(attempt, url, f"HTTP {resp.status_code}")
                continue
            raise BuildkiteError(self.redact(self._refusal(resp, url)), resp.status_code)

    def _refusal(self, resp: requests.Response, url: str) -> str:
        message = _message(resp)
        if resp.status_code == 401:
            return (f"{url}: 401 the Buildkite token was refused ({message or 'unauthorized'}); "
                    f"check BUILDKITE_API_TOKEN")
        if resp.status_code == 403:
            return (f"{url}: 403 the token lacks access ({message or 'forbidden'}); it needs "
                    f"read_builds, read_build_logs and read_artifacts on this organisation")
        return f"{url}: {resp.status_code} {message}".rstrip()

    def _retry(self, attempt: int, url: str, why: str) -> int:
        if attempt >= self.settings.retries:
            raise BuildkiteError(f"{url}: gave up after {attempt + 1} tries ({why})")
        wait = self.rng.uniform(0, min(60.0, self.settings.backoff_s * 2 ** attempt))
        self.cost.retries += 1
        self.echo(f"retry   {why} on {url}; waiting {wait:.1f} s")
        self.sleep(wait)
        return attempt + 1

    def _wait_for_window(self, resp: requests.Response, url: str) -> None:
        """A 429: wait for the window to reset, unless that is longer than we may wait."""
        wait = _seconds(resp.headers.get("retry-after"))
        if wait is None:
            wait = _seconds(resp.headers.get("ratelimit-reset"))
        wait = 60.0 if wait is None else wait
        self._wait(wait + self.rng.uniform(0, 1), f"429 on {url}")

    def _pace(self) -> None:
        """Leave the rest of the organisation its share of the current window."""
        c = self.cost
        if c.rate_limit is None or c.rate_remaining is None:
            return
        reserve = c.rate_limit * (1.0 - self.settings.buildkite_rate_share)
        if c.rate_remaining > reserve:
            return
        self._wait((c.rate_reset_s if c.rate_reset_s is not None else 60) + 1,
                   f"{c.rate_remaining} of {c.rate_limit} requests left in this window")
        c.rate_remaining = None  # unknown until the next response states it

    def _wait(self, seconds: float, why: str) -> None:
        if seconds > self.max_wait_s:
            raise BudgetSpent(f"the rate limit needs a {seconds:.0f} s wait ({why})")
        self.cost.rate_waits += 1
        self.echo(f"wait    {why}; {seconds:.1f} s")
        self.sleep(seconds)

    def _note_limits(self, resp: requests.Response) -> None:
        h = resp.headers
        for attr, name in (("rate_remaining", "ratelimit-remaining"),
                           ("rate_limit", "ratelimit-limit"), ("rate_reset_s", "ratelimit-reset")):
            value = h.get(name, "")
            if value.isdigit():
                setattr(self.cost, attr, int(value))

    # -- lists --------------------------------------------------------------------------------

    def pages(self, path: str, params: dict | None = None,
              key: str | None = None) -> Iterator[list[dict]]:
        """Every page of a list, following `Link: rel="next"`. A page is a JSON list, or
        (cursor-paginated endpoints) an object whose `key` holds the list."""
        url = page_url(self.url(path), params)
        while url:
            resp = self.request(url)
            try:
                body = resp.json()
            except ValueError:
                raise BuildkiteError(f"{url}: the response is not JSON (truncated page?)") from None
            items = body.get(key) if key and isinstance(body, dict) else body
            if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
                raise BuildkiteError(f"{url}: the response is not a list of objects")
            yield items
            url = links(resp.headers.get("link")).get("next", "")

    # -- logs and artifacts -------------------------------------------------------------------

    def log_tail(self, path: str, tail_bytes: int) -> LogTail:
        """The last `tail_bytes` of a job log through a suffix `Range` request (206), or the
        whole log when it is shorter (200). An empty log is 416."""
        resp = self.request(path, headers={"Accept": "text/plain",
                                           "Range": f"bytes=-{tail_bytes}"})
        return self._log(resp, path, tail_bytes)

    def log_whole(self, path: str) -> LogTail:
        resp = self.request(path, headers={"Accept": "text/plain"})
        return self._log(resp, path, None)

    def _log(self, resp: requests.Response, path: str, tail: int | None) -> LogTail:
        self.cost.log_requests += 1
        if resp.status_code == 416:
            return LogTail(b"", 0, True)
        data = resp.content
        if len(data) > self.settings.max_download_bytes:
            raise TooLarge(f"{self.url(path)}: {len(data)} bytes, over the "
                           f"{self.settings.max_download_bytes}-byte limit")
        self.cost.log_bytes += len(data)
        total = len(data)
        content_range = resp.headers.get("content-range", "")
        if resp.status_code == 206 and "/" in content_range:
            size = content_range.rsplit("/", 1)[1]
            total = int(size) if size.isdigit() else total
        return LogTail(data, total, resp.status_code == 200 or total <= len(data))

    def download(self, path: str, out: BinaryIO, limit: int | None = None) -> tuple[str, int]:
        """An artifact through Buildkite's 302 into `out` (the signed URL is fetched without
        the token), at most `limit` bytes. Returns (sha256, size)."""
        limit = limit or self.settings.max_download_bytes
        attempt = 0
        while True:
            resp = self.request(path)
            target = resp.headers.get("location")
            if resp.status_code not in (301, 302, 303, 307, 308) or not target:
                raise BuildkiteError(f"{self.url(path)}: expected a redirect, got "
                                     f"{resp.status_code}", resp.status_code)
            try:
                blob = self.blobs.get(target, stream=True, timeout=self.settings.timeout_s)
                if blob.status_code >= 400:
                    raise _Broken(f"blob host answered {blob.status_code}")
                return self._stream(blob, out, limit, path)
            except TooLarge:
                raise
            except (_Broken, requests.RequestException) as exc:
                out.seek(0)
                out.truncate()
                why = str(exc) if isinstance(exc, _Broken) else type(exc).__name__
                attempt = self._retry(attempt, self.url(path), f"download: {why}")

    def _stream(self, resp: requests.Response, out: BinaryIO, limit: int, path: str):
        declared = resp.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            resp.close()
            raise TooLarge(f"{self.url(path)}: {declared} bytes, over the {limit}-byte limit")
        h = hashlib.sha256()
        size = 0
        with resp:
            for chunk in resp.iter_content(1024 * 1024):
                size += len(chunk)
                if size > limit:
                    raise TooLarge(f"{self.url(path)}: more than the {limit}-byte limit")
                h.update(chunk)
                out.write(chunk)
        if declared.isdigit() and size != int(declared):
            raise _Broken(f"truncated: {size} of {declared} bytes")
        self.cost.downloads += 1
        self.cost.download_bytes += size
        return h.hexdigest(), size


class _Broken(Exception):
    """A download that ended early or was refused by the blob host (retryable)."""


def _seconds(value: str | None) -> float | None:
    value = (value or "").strip()
    return float(value) if value.isdigit() else None


def _message(resp: requests.Response) -> str:
    try:
        body = resp.json()
    except ValueError:
        return ""
    return str(body.get("message", ""))[:300] if isinstance(body, dict) else ""
