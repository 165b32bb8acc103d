"""The one module of `collectors` that talks to GitHub: a thin, frugal REST client.

It follows GitHub's documented rules rather than any one client's habits:
- the token goes only to the API host; downloads are 302s to a signed URL on another host,
  fetched without it;
- list pages are followed through `Link: rel="next"`, and can be asked for conditionally
  (`If-None-Match`), since a 304 costs no primary rate-limit point;
- 5xx, timeouts and broken downloads are retried with exponential backoff and full jitter;
  secondary rate limits wait `retry-after` (or a minute, doubling); an exhausted primary
  limit either waits for `x-ratelimit-reset` (`wait=True`) or raises `RateLimited`.
The token never appears in an exception, a log line or the cost report."""
from __future__ import annotations

import hashlib
import random
import re
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Any, BinaryIO, Callable, Iterator
from urllib.parse import urlencode, urlsplit

import requests

from parity.collectors.settings import Secret, Settings
from parity.db.network import CONNECT_TIMEOUT_S, unreachable

API_VERSION = "2022-11-28"
USER_AGENT = "parity-ci-collector"
SECONDARY = ("you have exceeded a secondary rate limit",)
SECONDARY_SUFFIXES = ("please retry your request again later.",
                      "please wait a few minutes before you try again.")
_LINK = re.compile(r'<([^>]+)>;\s*rel="([a-z]+)"')


class GitHubError(Exception):
    """A request GitHub refused or that kept failing; the text names the URL and the reason."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class Unreachable(GitHubError):
    """The API host could not be reached at all (refused, no route, unknown name)."""


class Gone(GitHubError):
    """410: the artifact (or log) has expired."""


class TooLarge(GitHubError):
    """A download larger than the configured limit."""


class RateLimited(GitHubError):
    """The primary rate limit is spent; `reset_at` says when it refills."""

    def __init__(self, message: str, reset_at: datetime):
        super().__init__(message, 403)
        self.reset_at = reset_at


@dataclass
class Cost:
    """What a sync spent: every request to the API host, how many were free 304s, retries,
    downloads from the blob host, and the rate limit as the last response stated it."""

    requests: int = 0
    not_modified: int = 0
    retries: int = 0
    downloads: int = 0
    download_bytes: int = 0
    rate_limit: int | None = None
    rate_remaining: int | None = None
    rate_reset: str | None = None

    @property
    def points(self) -> int:
        """Primary rate-limit points spent: every API request except 304s and /rate_limit."""
        return self.requests - self.not_modified

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "points": self.points}


@dataclass
class Page:
    """One page of a list endpoint. `items` is None when the server said 304 (unchanged)."""

    url: str
    items: list[dict] | None
    total_count: int | None
    next_url: str
    etag: str


def links(header: str | None) -> dict[str, str]:
    """The `Link` header as {rel: url}."""
    return {rel: url for url, rel in _LINK.findall(header or "")}


def page_url(url: str, params: dict[str, Any] | None) -> str:
    """A URL with its query in a stable order, so that stored validators find it again."""
    if not params:
        return url
    query = urlencode(sorted((k, str(v)) for k, v in params.items() if v not in (None, "")))
    return f"{url}?{query}" if query else url


class Client:
    def __init__(self, settings: Settings, api_url: str | None = None,
                 token: Secret | None = None, *, wait: bool = False,
                 sleep: Callable[[float], None] = time.sleep,
                 echo: Callable[[str], None] | None = None,
                 rng: random.Random | None = None):
        self.settings = settings
        self.api_url = (api_url or settings.api_url).rstrip("/")
        self._api_netloc = urlsplit(self.api_url).netloc
        self._token = token if token is not None else settings.token
        self.wait = wait
        self.sleep = sleep
        self.echo = echo or (lambda line: None)
        self.rng = rng or random.Random()
        self.cost = Cost()
        self.session = requests.Session()
        self.session.trust_env = False  # no proxies or .netrc credentials slipping in
        self.session.headers.update({"Accept": "application/vnd.github+json",
                                     "X-GitHub-Api-Version": API_VERSION,
                                     "User-Agent": USER_AGENT})
        self.blobs = requests.Session()  # never carries the token
        self.blobs.trust_env = False
        self.blobs.headers.update({"User-Agent": USER_AGENT})

    @property
    def authenticated(self) -> bool:
        return self._token is not None

    def url(self, path: str) -> str:
        return path if path.startswith(("http://", "https://")) else f"{self.api_url}{path}"

    def redact(self, text: str) -> str:
        if self._token is not None and self._token.reveal():
            text = text.replace(self._token.reveal(), "***")
        return text

    # -- the request loop -------------------------------------------------------------------

    def request(self, method: str, path: str, params: dict | None = None,
                headers: dict | None = None, json: Any = None) -> requests.Response:
        """One API request with the retry rules of the module docstring. Redirects are not
        followed (a 302 is returned); statuses >= 400 other than 410 raise."""
        url = self.url(path)
        if urlsplit(url).netloc != self._api_netloc:
            raise GitHubError(f"refusing to send an API request to another host: {url}")
        send = dict(headers or {})
        if self._token is not None:
            send["Authorization"] = f"Bearer {self._token.reveal()}"
        attempt = 0
        while True:
            try:
                resp = self.session.request(method, url, params=params, headers=send, json=json,
                                            allow_redirects=False,
                                            timeout=(CONNECT_TIMEOUT_S, self.settings.timeout_s))
            except (requests.ConnectionError, requests.Timeout) as exc:
                why = unreachable(exc)
                if why:  # not a busy host: retrying for a minute would only hide that
                    raise Unreachable(f"cannot reach {self._api_netloc} ({why}); check the "
                                      f"network or --api-url") from None
                attempt = self._retry(attempt, url, f"{type(exc).__name__}", None)
                continue
            if not url.endswith("/rate_limit"):
                self.cost.requests += 1
            self._note_limits(resp)
            if resp.status_code == 304:
                self.cost.not_modified += 1
                return resp
            if resp.status_code < 400 and resp.status_code != 202:
                return resp
            if resp.status_code == 410:
                raise Gone(f"{url}: 410 {self._message(resp) or 'Gone'}", 410)
            if (resp.status_code == 202 or resp.status_code >= 500) and method in ("GET", "HEAD"):
                attempt = self._retry(attempt, url, f"HTTP {resp.status_code}", None)
                continue  # a POST that failed may still have taken effect: never repeat it
            if resp.status_code in (403, 429):
                wait = self._rate_limit_wait(resp, url, attempt)
                if wait is not None:
                    attempt = self._retry(attempt, url, f"HTTP {resp.status_code} secondary rate limit",
                                          wait)
                    continue
            raise GitHubError(self.redact(
                f"{method} {url}: {resp.status_code} {self._message(resp)}".rstrip()),
                resp.status_code)

    def _retry(self, attempt: int, url: str, why: str, wait: float | None) -> int:
        if attempt >= self.settings.retries:
            raise GitHubError(f"{url}: gave up after {attempt + 1} tries ({why})")
        if wait is None:  # exponential backoff with full jitter
            wait = self.rng.uniform(0, min(60.0, self.settings.backoff_s * 2 ** attempt))
        self.cost.retries += 1
        self.echo(f"retry   {why} on {url}; waiting {wait:.1f} s")
        self.sleep(wait)
        return attempt + 1

    def _rate_limit_wait(self, resp: requests.Response, url: str, attempt: int) -> float | None:
        """Seconds to wait before retrying a 403/429, None when it is no rate limit, or
        `RateLimited` when the primary limit is spent and we are not to wait."""
        message = self._message(resp).lower()
        retry_after = resp.headers.get("retry-after")
        secondary = message.startswith(SECONDARY) or message.endswith(SECONDARY_SUFFIXES)
        if retry_after and retry_after.strip().isdigit():
            return float(retry_after)
        if secondary:
            return self.settings.secondary_wait_s * 2 ** attempt
        if resp.headers.get("x-ratelimit-remaining") == "0" or \
                message.startswith("api rate limit exceeded"):
            reset = int(resp.headers.get("x-ratelimit-reset") or time.time() + 60)
            reset_at = datetime.fromtimestamp(reset, timezone.utc)
            if not self.wait:
                raise RateLimited(f"primary rate limit exhausted; it resets at "
                                  f"{reset_at:%Y-%m-%d %H:%M:%S} UTC", reset_at)
            self.echo(f"primary rate limit exhausted; waiting for its reset at {reset_at:%H:%M:%S} UTC")
            self.sleep(max(0.0, reset - time.time()) + 1)
            return 0.0
        return None

    def _note_limits(self, resp: requests.Response) -> None:
        h = resp.headers
        if h.get("x-ratelimit-remaining", "").isdigit():
            self.cost.rate_remaining = int(h["x-ratelimit-remaining"])
        if h.get("x-ratelimit-limit", "").isdigit():
            self.cost.rate_limit = int(h["x-ratelimit-limit"])
        if h.get("x-ratelimit-reset", "").isdigit():
            self.cost.rate_reset = datetime.fromtimestamp(
                int(h["x-ratelimit-reset"]), timezone.utc).isoformat(timespec="seconds")

    @staticmethod
    def _message(resp: requests.Response) -> str:
        try:
            body = resp.json()
        except ValueError:
            return ""
        return str(body.get("message", ""))[:300] if isinstance(body, dict) else ""

    # -- lists --------------------------------------------------------------------------------

    def page(self, url: str, key: str, etag: str | None = None) -> Page:
        """One list page; with `etag`, a conditional request whose 304 costs nothing."""
        resp = self.request("GET", url, headers={"If-None-Match": etag} if etag else None)
        nxt = links(resp.headers.get("link")).get("next", "")
        if resp.status_code == 304:
            return Page(url, None, None, nxt, resp.headers.get("etag") or etag or "")
        body = resp.json()
        # most lists are an object holding the list under `key`; issues and labels are a
        # bare JSON list
        items = body if isinstance(body, list) else (body.get(key) if isinstance(body, dict)
                                                     else None)
        if not isinstance(items, list):
            raise GitHubError(f"{url}: response has no '{key}' list")
        total = body.get("total_count") if isinstance(body, dict) else None
        return Page(url, items, total, nxt, resp.headers.get("etag", ""))

    def pages(self, path: str, key: str, params: dict | None = None) -> Iterator[Page]:
        """Every page of a list, unconditionally, following `Link` (whose URLs carry the
        filters and `per_page` already)."""
        url = page_url(self.url(path), {"per_page": 100, **(params or {})})
        while url:
            page = self.page(url, key)
            yield page
            url = page.next_url

    def all(self, path: str, key: str, params: dict | None = None) -> list[dict]:
        return [item for page in self.pages(path, key, params) for item in page.items or []]

    def comment(self, repo: str, number: int, body: str) -> str:
        """Post `body` as a comment on issue or pull request `number`; its URL."""
        resp = self.request("POST", f"/repos/{repo}/issues/{number}/comments", json={"body": body})
        return str(resp.json().get("html_url", ""))

    def rate_limit(self) -> dict:
        """`GET /rate_limit` (free): the `core` bucket."""
        body = self.request("GET", "/rate_limit").json()
        return (body.get("resources") or {}).get("core") or body.get("rate") or {}

    # -- downloads ----------------------------------------------------------------------------

    def download(self, path: str, out: BinaryIO, limit: int | None = None) -> tuple[str, int]:
        """Fetch an artifact zip or a log through GitHub's 302 into `out`, streaming and
        hashing, at most `limit` bytes. A broken transfer is retried from a fresh redirect
        (the signed URL lives a minute). Returns (sha256, size)."""
        limit = limit or self.settings.max_download_bytes
        attempt = 0
        while True:
            resp = self.request("GET", path)
            if resp.status_code not in (301, 302, 303, 307, 308) or "location" not in resp.headers:
                if resp.status_code == 200:  # some servers answer directly
                    return self._stream(resp, out, limit, path)
                raise GitHubError(f"{self.url(path)}: expected a redirect, got {resp.status_code}",
                                  resp.status_code)
            target = resp.headers["location"]
            try:
                blob = self.blobs.get(target, stream=True, timeout=self.settings.timeout_s,
                                      allow_redirects=True)
                if blob.status_code >= 400:
                    raise _Broken(f"blob host answered {blob.status_code}")
                return self._stream(blob, out, limit, path)
            except TooLarge:
                raise
            except (_Broken, requests.RequestException) as exc:
                why = str(exc) if isinstance(exc, _Broken) else type(exc).__name__
                out.seek(0)
                out.truncate()
                attempt = self._retry(attempt, self.url(path), f"download: {why}", None)

    def _stream(self, resp: requests.Response, out: BinaryIO, limit: int, path: str):
        declared = resp.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > limit:
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
        if declared and declared.isdigit() and size != int(declared):
            raise _Broken(f"truncated: {size} of {declared} bytes")
        self.cost.downloads += 1
        self.cost.download_bytes += size
        return h.hexdigest(), size


class _Broken(Exception):
    """A download that ended early or was refused by the blob host (retryable)."""
