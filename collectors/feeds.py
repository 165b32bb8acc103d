"""Public result feeds kept in GitHub repositories, read with the GitHub collector's client:
- `quartz`: ROCm/Quartz, TheRock's release status (`release-<type>/<YYYYMMDD>/status.json`);
- `published-vllm-ci`: the vLLM CI dashboard's data repository (`<path>/ci_health.json` and
  `<path>/test_results/<YYYY-MM-DD>_{amd,upstream}.jsonl`).

Every directory listing goes through the contents API with the ETag stored for it, so an
unchanged feed answers 304 and costs no rate-limit point; a listing's ETag is stored only
once everything it listed is handled, so a failure is listed again next time. A file is
fetched (raw) only when its git sha is one not read before: no file is downloaded twice, and
a status file updated during its night is read again and replaces what it said before.
`since` limits both feeds to files dated from that day (a backfill reaches further back)."""
from __future__ import annotations

import hashlib
import io
import re
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Callable

from sqlalchemy import Engine

from parity.collectors.github import Client, GitHubError, RateLimited
from parity.collectors.ingest import FileRejected, IngestOptions, Ingester
from parity.collectors.settings import Settings
from parity.collectors.sources import Blob
from parity.collectors.sync import utcnow
from parity.db import store

QUARTZ, PUBLISHED = "quartz", "published-vllm-ci"
KINDS = (QUARTZ, PUBLISHED)
DEFAULT_REPO = {QUARTZ: "ROCm/Quartz", PUBLISHED: "AndreasKaratzas/vllm-ci-dashboard"}
DEFAULT_PATH = {QUARTZ: "", PUBLISHED: "data/vllm/ci"}
_NIGHT = re.compile(r"^(\d{8})$")
_RESULTS = re.compile(r"^(\d{4}-\d{2}-\d{2})_(amd|upstream)\.jsonl$")


@dataclass(frozen=True)
class FeedOptions:
    kind: str
    repo: str
    releases: tuple[str, ...] = ("nightly",)  # quartz: release-<type> folders
    path: str = ""  # published-vllm-ci: the data folder
    since: datetime | None = None


@dataclass
class FeedReport:
    kind: str
    repo: str
    listings: int = 0
    unchanged_listings: int = 0  # answered 304
    files_read: int = 0
    files_known: int = 0  # listed with a sha read before: not fetched
    records: int = 0
    rejected: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    stopped: str | None = None
    cost: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


class FeedSync:
    def __init__(self, engine: Engine, client: Client, settings: Settings | None = None,
                 echo: Callable[[str], None] | None = None):
        self.engine = engine
        self.client = client
        self.settings = settings or client.settings
        self.echo = echo or (lambda line: None)
        self.ingester = Ingester(engine, self.settings)
        self._fresh = False

    def run(self, options: FeedOptions) -> FeedReport:
        report = FeedReport(kind=options.kind, repo=options.repo)
        scope = f"feed|{self.client.api_url}|{options.kind}|{options.repo}|{options.path}"
        with self.engine.connect() as conn:
            cp = store.get_checkpoint(conn, scope)
        since = options.since or (cp[0] if cp else utcnow() - timedelta(days=self.settings.since_days))
        # reaching further back than before: list again, even what answers 304
        self._fresh = cp is None or since < cp[0]
        try:
            if options.kind == QUARTZ:
                for release in options.releases:
                    self._quartz(options.repo, f"release-{release}", since, report)
            else:
                self._published(options.repo, options.path.strip("/"), since, report)
        except RateLimited as exc:
            report.stopped = f"{exc}; the next sync resumes"
        finally:
            report.cost = self.client.cost.as_dict()
        if not report.stopped and not report.errors:
            with self.engine.begin() as conn:
                store.set_checkpoint(conn, scope, min(since, cp[0]) if cp else since, utcnow())
        return report

    # -- the two layouts ----------------------------------------------------------------------

    def _quartz(self, repo: str, folder: str, since: datetime, report: FeedReport) -> None:
        def nights(entries: list[dict]) -> bool:
            ok = True
            for e in sorted(entries, key=lambda e: e.get("name", "")):
                m = _NIGHT.match(str(e.get("name", "")))
                if e.get("type") != "dir" or not m or _day(m.group(1), "%Y%m%d") < since.date():
                    continue
                if self._known(repo, e) and not self._fresh:
                    continue  # this night's folder is as it was
                inner_ok = self._listing(repo, e["path"], report, lambda files: self._files(
                    repo, [f for f in files if f.get("name") == "status.json"], report))
                if inner_ok:
                    self._remember(repo, e)
                ok &= inner_ok
            return ok
        self._listing(repo, folder, report, nights)

    def _published(self, repo: str, path: str, since: datetime, report: FeedReport) -> None:
        def top(entries: list[dict]) -> bool:
            health = [e for e in entries if e.get("name") == "ci_health.json"]
            ok = self._files(repo, health, report)  # builds first: their commits and times
            results = next((e for e in entries if e.get("name") == "test_results"
                            and e.get("type") == "dir"), None)
            if results is not None and (self._fresh or not self._known(repo, results)):
                inner = self._listing(repo, results["path"], report, lambda files: self._files(
                    repo, [f for f in files if _dated(f, since)], report))
                if inner:
                    self._remember(repo, results)
                ok &= inner
            return ok
        self._listing(repo, path, report, top)

    # -- listings and files -------------------------------------------------------------------

    def _listing(self, repo: str, path: str, report: FeedReport,
                 handle: Callable[[list[dict]], bool]) -> bool:
        """List a folder conditionally; hand its entries to `handle`; store the ETag when
        `handle` says everything was handled. True when nothing is left to do."""
        url = self.client.url(f"/repos/{repo}/contents/{path}".rstrip("/"))
        with self.engine.connect() as conn:
            stored = None if self._fresh else store.get_validator(conn, url)
        report.listings += 1
        try:
            resp = self.client.request("GET", url, headers={"If-None-Match": stored[0]}
                                       if stored else None)
        except GitHubError as exc:
            if exc.status == 404:
                report.errors.append(f"{repo}/{path}: not found (is this the feed's layout?)")
                return False
            raise
        if resp.status_code == 304:
            report.unchanged_listings += 1
            return True
        try:
            entries = resp.json()
        except ValueError:
            report.errors.append(f"{repo}/{path}: the listing is not JSON")
            return False
        if not isinstance(entries, list):
            report.errors.append(f"{repo}/{path}: not a folder")
            return False
        ok = handle([e for e in entries if isinstance(e, dict)])
        if ok and resp.headers.get("etag"):
            with self.engine.begin() as conn:
                store.set_validator(conn, url, resp.headers["etag"])
        return ok

    def _files(self, repo: str, entries: list[dict], report: FeedReport) -> bool:
        ok = True
        for e in entries:
            if e.get("type") != "file":
                continue
            if self._known(repo, e):
                report.files_known += 1
                continue
            try:
                self._read(repo, e, report)
            except GitHubError as exc:
                if isinstance(exc, RateLimited):
                    raise
                report.errors.append(self.client.redact(f"{repo}/{e.get('path')}: {exc}"))
                ok = False
                continue
            self._remember(repo, e)
        return ok

    def _read(self, repo: str, entry: dict, report: FeedReport) -> None:
        path = str(entry["path"])
        size = int(entry.get("size") or 0)
        name = f"{repo}/{path}"
        if size > self.settings.max_json_bytes:
            self._reject(report, name, f"{size} bytes, over the {self.settings.max_json_bytes}-byte "
                                       f"limit for whole-file formats")
            return
        resp = self.client.request("GET", f"/repos/{repo}/contents/{path}",
                                   headers={"Accept": "application/vnd.github.raw"})
        data = resp.content
        report.files_read += 1
        blob = Blob(name=name, opener=lambda: io.BytesIO(data), size=len(data), mtime=None,
                    explicit=True, sha256=hashlib.sha256(data).hexdigest())
        try:
            outcome = self.ingester.ingest_blob(blob, IngestOptions(repo=repo))
        except FileRejected as exc:
            self._reject(report, name, exc.reason)
            return
        report.records += outcome.records
        if outcome.reason:
            report.rejected.append(f"{name}: {outcome.reason}")
        self.echo(f"{outcome.status:9} {name} ({outcome.format}, {outcome.records} records)")

    def _reject(self, report: FeedReport, name: str, reason: str) -> None:
        reason = " ".join(reason.split())[:1000]
        report.rejected.append(f"{name}: {reason}")
        self.echo(f"REJECTED {name}: {reason}")
        with self.engine.begin() as conn:
            store.record_ingest_error(conn, name, reason)

    # -- what has been read -------------------------------------------------------------------

    def _key(self, repo: str, entry: dict) -> str:
        return f"{self.client.api_url}/repos/{repo}/contents/{entry.get('path')}#sha"

    def _known(self, repo: str, entry: dict) -> bool:
        with self.engine.connect() as conn:
            stored = store.get_validator(conn, self._key(repo, entry))
        return stored is not None and stored[0] == str(entry.get("sha") or "")

    def _remember(self, repo: str, entry: dict) -> None:
        if entry.get("sha"):
            with self.engine.begin() as conn:
                store.set_validator(conn, self._key(repo, entry), str(entry["sha"]))


def _day(text: str, fmt: str):
    return datetime.strptime(text, fmt).date()


def _dated(entry: dict, since: datetime) -> bool:
    m = _RESULTS.match(str(entry.get("name", "")))
    return bool(m) and _day(m.group(1), "%Y-%m-%d") >= since.date()
