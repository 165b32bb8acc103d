"""`parity collect github`: an incremental, rate-limit-frugal sync of GitHub Actions runs.

What one sync does, per scope (repository × workflow × branch × event):
1. Lists runs created in the windows it has not finished: a backfill window when `--since`
   reaches further back than before, and the *tail* (`created>=tail_start`), which is listed
   on every sync. Every list page is asked for with the ETag stored for it, so a page that
   has not changed answers 304 and costs no rate-limit point: a sync with nothing new costs
   nothing. A window holding more than 1,000 runs (the cap of filtered run lists) is halved
   by creation time until each half fits.
2. Skips runs that are still in progress (their page's ETag changes when they finish) and
   runs already stored. For each other run: one list of every job of every attempt
   (`filter=all`), one list of artifacts, one download per artifact, and a log download for
   each job that left no results in any artifact.
3. Writes the run, its attempts, jobs, artifacts, results, rejections and a `synced_run`
   marker in one transaction, so killing the collector at any moment and running it again
   yields the database an uninterrupted sync would have.
4. Moves the tail forward once it holds more than `tail_runs` runs, and lists the new tail
   once right away so that the next sync's requests are conditional again.

Request count for R new runs with A artifacts and L result-less jobs in all:
ceil(R/100) list pages + 2R list calls + A downloads + L log downloads (+1 per tail move);
a sync with nothing new: zero points (every page answers 304)."""
from __future__ import annotations

import re
import sys
import tempfile
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable, TextIO

from sqlalchemy import Connection, Engine

from parity.db import manifest as manifests
from parity.collectors.github import Client, Gone, GitHubError, RateLimited, TooLarge, page_url
from parity.collectors.config import suite_for
from parity.collectors.identity import suite_of_job
from parity.collectors.ingest import FileRejected, Ingester, framework_in_name, infer_framework
from parity.collectors.settings import Settings
from parity.collectors.sources import Blob, expand
from parity.collectors.writer import ArtifactInfo, Provenance, parse_time, paused_gc
from parity.db import store

CAP = 1000  # results a filtered run list returns at most
PER_PAGE = 100
CI = "github"


@dataclass(frozen=True)
class SyncOptions:
    repo: str
    workflows: tuple[str, ...] = ()
    branch: str = ""
    event: str = ""
    since: datetime | None = None
    until: datetime | None = None
    framework: str | None = None
    suites: tuple[tuple[str, str], ...] = ()  # job-name pattern -> suite (parity.toml)


@dataclass
class SyncReport:
    repo: str
    runs_listed: int = 0
    runs_synced: int = 0
    runs_already: int = 0
    runs_in_progress: int = 0
    runs_failed: int = 0
    jobs: int = 0
    artifacts: int = 0
    artifacts_expired: int = 0
    artifacts_too_large: int = 0
    logs: int = 0
    files: int = 0
    records: int = 0
    rejected: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    stopped: str | None = None  # why the sync stopped early, with where to resume
    cost: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class _Fetched:
    """An artifact archive after download: its file on disk or why there is none."""

    meta: dict
    path: Path | None = None
    sha256: str = ""
    status: str = "ingested"
    reason: str = ""
    manifest: manifests.Manifest | None = None


def _iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def created_filter(start: datetime, end: datetime | None) -> str:
    """GitHub's `created` search syntax for [start, end) (end None: open-ended)."""
    if end is None:
        return f">={_iso(start)}"
    return f"{_iso(start)}..{_iso(end - timedelta(seconds=1))}"


class Stopped(Exception):
    """A sync asked to stop (SIGTERM to `parity sync --every`) between two runs or builds."""


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


class Progress:
    """A bar on a terminal, plain lines otherwise (CI logs, pipes)."""

    def __init__(self, stream: TextIO | None = None, enabled: bool = True):
        self.stream = stream or sys.stderr
        self.tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.enabled = enabled
        self.total = 0
        self.done = 0

    def add_total(self, n: int) -> None:
        self.total += n

    def step(self, text: str) -> None:
        self.done += 1
        if not self.enabled:
            return
        if self.tty:
            total = max(self.total, self.done)
            filled = int(30 * self.done / total) if total else 30
            self.stream.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {self.done}/{total} runs")
            self.stream.flush()
        else:
            self.stream.write(f"{text}\n")

    def close(self) -> None:
        if self.enabled and self.tty and self.done:
            self.stream.write("\n")


class GitHubSync:
    def __init__(self, engine: Engine, client: Client, settings: Settings | None = None,
                 echo: Callable[[str], None] | None = None, progress: Progress | None = None):
        self.engine = engine
        self.client = client
        self.settings = settings or client.settings
        self.echo = echo or (lambda line: None)
        self.progress = progress or Progress(enabled=False)
        self.ingester = Ingester(engine, self.settings)  # also brings the schema up to date
        self.writer = self.ingester.writer
        self.suites: tuple[tuple[str, str], ...] = ()
        self.stop = None  # a threading.Event: set, the sync stops after the run in hand

    # -- scopes and windows -------------------------------------------------------------------

    def run(self, options: SyncOptions) -> SyncReport:
        report = SyncReport(repo=options.repo)
        self.suites = options.suites
        try:
            for workflow in options.workflows or ("",):
                self._scope(options, workflow, report)
        except RateLimited as exc:
            report.stopped = (f"{exc}; everything before this point is stored, and running the "
                              f"same command again (or with --wait) resumes where it stopped")
        except Stopped as exc:
            report.stopped = f"{exc}; everything before this point is stored"
        finally:
            self.progress.close()
            report.cost = self.client.cost.as_dict()
        return report

    def _scope(self, options: SyncOptions, workflow: str, report: SyncReport) -> None:
        repo = options.repo
        path = (f"/repos/{repo}/actions/workflows/{workflow}/runs" if workflow
                else f"/repos/{repo}/actions/runs")
        params = {"branch": options.branch, "event": options.event,
                  "exclude_pull_requests": "true"}
        if options.until is not None:  # a bounded sync: one window, no checkpoint
            since = options.since or options.until - timedelta(days=self.settings.since_days)
            self._window(path, params, since, options.until, options, report, {})
            return
        scope = "|".join((self.client.api_url, repo, workflow or "*", options.branch, options.event))
        with self.engine.begin() as conn:
            cp = store.get_checkpoint(conn, scope)
            if cp is None:  # fixed before listing, so a restarted first sync lists the same
                start = options.since or utcnow() - timedelta(days=self.settings.since_days)
                cp = (start, start)
                store.set_checkpoint(conn, scope, *cp)
        covered_from, tail_start = cp
        if options.since is not None and options.since < covered_from:
            self._window(path, params, options.since, covered_from, options, report, {})
            covered_from = options.since
            with self.engine.begin() as conn:
                store.set_checkpoint(conn, scope, covered_from, tail_start)
        tail: dict = {}
        self._window(path, params, tail_start, None, options, report, tail)
        if tail.get("listed", 0) > self.settings.tail_runs and tail.get("newest"):
            new_start = min(tail.get("oldest_open") or tail["newest"], tail["newest"])
            if new_start > tail_start:
                self._window(path, params, new_start, None, options, report, {})
                tail_start = new_start
        with self.engine.begin() as conn:
            store.set_checkpoint(conn, scope, covered_from, tail_start)

    def _window(self, path: str, params: dict, start: datetime, end: datetime | None,
                options: SyncOptions, report: SyncReport, tally: dict) -> None:
        """List and sync the runs created in [start, end), halving past the 1,000 cap.
        `tally` collects the newest creation time, the oldest unfinished one and a count."""
        url = page_url(self.client.url(path), {**params, "created": created_filter(start, end),
                                               "per_page": PER_PAGE})
        first = True
        while url:
            with self.engine.connect() as conn:
                stored = store.get_validator(conn, url)
            page = self.client.page(url, "workflow_runs", stored[0] if stored else None)
            if page.items is None:  # 304: everything on this page is already handled
                url = stored[1] if stored else ""
                first = False
                continue
            if first and (page.total_count or 0) > CAP:
                mid = start + ((end or utcnow()) - start) / 2
                mid = mid.replace(microsecond=0)
                if mid <= start:
                    raise GitHubError(f"more than {CAP} runs created in one second at {_iso(start)}")
                self.echo(f"split   {created_filter(start, end)}: {page.total_count} runs is past "
                          f"the {CAP}-result cap")
                self._window(path, params, start, mid, options, report, tally)
                self._window(path, params, mid, end, options, report, tally)
                return
            if first:
                self.progress.add_total(page.total_count or len(page.items))
                tally["listed"] = tally.get("listed", 0) + (page.total_count or 0)
            first = False
            complete = True
            for run in page.items:
                complete &= self._run(run, options, report, tally)
            if complete and page.etag:
                with self.engine.begin() as conn:
                    store.set_validator(conn, url, page.etag, page.next_url)
            url = page.next_url

    # -- one run ------------------------------------------------------------------------------

    def _run(self, run: dict, options: SyncOptions, report: SyncReport, tally: dict) -> bool:
        """Sync one listed run; False when it failed (so its page is listed again)."""
        if self.stop is not None and self.stop.is_set():
            raise Stopped("stopped on request (SIGTERM)")
        report.runs_listed += 1
        created = parse_time(run.get("created_at"))
        if created is not None:
            tally["newest"] = max(tally.get("newest") or created, created)
        rid, attempt = str(run["id"]), int(run.get("run_attempt") or 1)
        if run.get("status") != "completed":
            report.runs_in_progress += 1
            self._open(tally, created)
            self.progress.step(f"pending {options.repo} run {rid} ({run.get('status')})")
            return True
        with self.engine.connect() as conn:
            done = store.is_synced(conn, CI, options.repo, rid, attempt)
        if done:
            report.runs_already += 1
            self.progress.step(f"stored  {options.repo} run {rid} attempt {attempt}")
            return True
        try:
            self._sync_run(run, options, report)
        except RateLimited:
            raise
        except GitHubError as exc:
            report.runs_failed += 1
            report.errors.append(self.client.redact(f"run {rid}: {exc}"))
            self.echo(self.client.redact(f"FAILED  run {rid}: {exc}"))
            self._open(tally, created)
            return False
        report.runs_synced += 1
        self.progress.step(f"synced  {options.repo} run {rid} attempt {attempt}")
        return True

    @staticmethod
    def _open(tally: dict, created: datetime | None) -> None:
        if created is not None:
            tally["oldest_open"] = min(tally.get("oldest_open") or created, created)

    def _sync_run(self, run: dict, options: SyncOptions, report: SyncReport) -> None:
        repo, rid = options.repo, run["id"]
        jobs = self.client.all(f"/repos/{repo}/actions/runs/{rid}/jobs", "jobs", {"filter": "all"})
        artifacts = self.client.all(f"/repos/{repo}/actions/runs/{rid}/artifacts", "artifacts")
        with tempfile.TemporaryDirectory(prefix="parity-sync-") as tmp:
            fetched = [self._fetch(a, repo, Path(tmp)) for a in artifacts]
            with paused_gc(), store.bulk_transaction(self.engine) as conn:
                try:
                    self._write_run(conn, run, jobs, fetched, options, report, Path(tmp))
                except Exception:
                    self.writer.forget_cache()
                    raise
        report.jobs += len(jobs)
        report.artifacts += len(artifacts)

    def _fetch(self, meta: dict, repo: str, tmp: Path) -> _Fetched:
        item = _Fetched(meta)
        size = int(meta.get("size_in_bytes") or 0)
        if meta.get("expired"):
            item.status, item.reason = "expired", "artifact has expired"
            return item
        if size > self.settings.max_download_bytes:
            item.status = "too_large"
            item.reason = f"{size} bytes, over the {self.settings.max_download_bytes}-byte limit"
            return item
        target = tmp / f"artifact-{meta['id']}.zip"
        try:
            with open(target, "wb") as out:
                item.sha256, _ = self.client.download(
                    f"/repos/{repo}/actions/artifacts/{meta['id']}/zip", out)
        except Gone:
            item.status, item.reason = "expired", "410 Gone: artifact has expired"
            return item
        except TooLarge as exc:
            item.status, item.reason = "too_large", str(exc)
            return item
        item.path = target
        item.manifest, problem = _read_manifest(target)
        if problem:
            item.reason = problem
        return item

    def _write_run(self, conn: Connection, run: dict, jobs: list[dict], fetched: list[_Fetched],
                   options: SyncOptions, report: SyncReport, tmp: Path) -> None:
        repo = options.repo
        latest = int(run.get("run_attempt") or 1)
        repo_fw = options.framework or framework_in_name(repo)
        base = Provenance(
            run_id=str(run["id"]), job_id="", ci_system=CI, repository=repo,
            workflow=str(run.get("path") or run.get("name") or ""), head_sha=run.get("head_sha") or "",
            branch=run.get("head_branch") or "", event=run.get("event") or "",
            run_created_at=parse_time(run.get("created_at")), framework=repo_fw or "other",
            untrusted=untrusted(run, options))
        by_id = {str(j["id"]): j for j in jobs}
        provs: dict[str, Provenance] = {}
        for job in jobs:
            prov = self._job_prov(base, run, job, latest)
            self.writer.ensure_job(conn, prov)
            provs[str(job["id"])] = prov
        run_prov = self._attempt_prov(base, run, latest, latest)
        run_pk = self.writer.ensure_run(conn, run_prov)
        with_results: set[str] = set()
        for item in fetched:
            job_id, how, label = _map_artifact(item, by_id, self.writer.vocab)
            if job_id is not None:
                prov = provs[job_id]
            else:  # the run's own pseudo-job for this artifact
                prov = self._attempt_prov(base, run, latest, latest)
                prov.job_id = f"artifact:{item.meta.get('name', '')}"[:100]
                prov.job_name = str(item.meta.get("name", ""))
                prov.suite = suite_of_job(prov.job_name, self.writer.vocab)
                prov.hardware = [label] if label else []
            if item.manifest is not None:
                prov = _apply_manifest(prov, item.manifest)
            files = records = 0
            if item.path is not None:
                files, records = self._ingest_archive(conn, item, prov, options, report)
                if files and job_id is not None:
                    with_results.add(job_id)
                if not files and item.status == "ingested":
                    item.status = "empty"
                    ran_nothing = item.manifest is not None and item.manifest.status == "no-results"
                    item.reason = item.reason or ("the job ran no test (its manifest says so)"
                                                  if ran_nothing else "no result files of a known format")
            elif item.status == "expired":
                report.artifacts_expired += 1
            elif item.status == "too_large":
                report.artifacts_too_large += 1
            job_pk = self.writer.ensure_job(conn, prov) if (job_id is not None or files) else None
            store.add_ci_artifact(
                conn, run_pk, str(item.meta["id"]), job_pk=job_pk,
                name=str(item.meta.get("name", ""))[:300],
                size_bytes=int(item.meta.get("size_in_bytes") or 0),
                digest=str(item.meta.get("digest") or "")[:100], sha256=item.sha256,
                status=item.status, reason=item.reason[:1000], mapped_by=how, files=files,
                created_at=parse_time(item.meta.get("created_at")))
            report.records += records
        for job_id, job in by_id.items():
            if job_id not in with_results and _worth_a_log(job):
                self._ingest_log(conn, job, provs[job_id], repo, report, tmp)
        store.mark_synced(conn, CI, repo, str(run["id"]), latest, len(jobs), len(fetched))

    def _attempt_prov(self, base: Provenance, run: dict, attempt: int, latest: int) -> Provenance:
        prov = replace(base, runner_labels=[], hardware=[], attempt=attempt)
        if attempt == latest:
            prov.run_conclusion = run.get("conclusion") or ""
            prov.run_url = run.get("html_url") or ""
            prov.run_started_at = parse_time(run.get("run_started_at"))
            prov.run_completed_at = parse_time(run.get("updated_at"))
        return prov

    def _job_prov(self, base: Provenance, run: dict, job: dict, latest: int) -> Provenance:
        attempt = int(job.get("run_attempt") or latest)
        prov = self._attempt_prov(base, run, attempt, latest)
        labels = [str(x) for x in job.get("labels") or []]
        prov.job_id = str(job["id"])
        prov.job_name = str(job.get("name") or "")[:500]
        prov.suite = suite_for(prov.job_name, self.suites) or \
            suite_of_job(prov.job_name, self.writer.vocab)
        prov.runner_labels = labels
        prov.runner_name = str(job.get("runner_name") or "")
        prov.runner_group = str(job.get("runner_group_name") or "")
        prov.job_conclusion = str(job.get("conclusion") or "")
        prov.job_url = str(job.get("html_url") or "")
        prov.job_created_at = parse_time(job.get("created_at"))
        prov.job_started_at = parse_time(job.get("started_at"))
        prov.job_completed_at = parse_time(job.get("completed_at"))
        return prov

    def _ingest_archive(self, conn: Connection, item: _Fetched, prov: Provenance,
                        options: SyncOptions, report: SyncReport) -> tuple[int, int]:
        name = str(item.meta.get("name", ""))
        label = f"{options.repo}/runs/{prov.run_id}/artifacts/{name}"
        files = records = 0

        def reject(where: str, reason: str, sha: str = "", fmt: str = "") -> None:
            if where == str(item.path):  # the archive itself cannot be opened
                item.status, item.reason = "rejected", reason
            shown = where.replace(str(item.path), label)
            reason = " ".join(reason.split())[:1000]
            report.rejected.append(f"{shown}: {reason}")
            self.echo(f"REJECTED {shown}: {reason}")
            store.record_ingest_error(conn, shown, reason, sha, fmt)

        if item.reason and item.manifest is None and "manifest" in item.reason:
            reject(f"{label}!{manifests.NAME}", item.reason)
        for blob in expand([item.path], self.settings, reject):
            member = blob.name.split("!", 1)[-1]
            try:
                if Path(member).name == manifests.NAME:
                    continue
                parsed = self.ingester.parse(blob)
                if isinstance(parsed, str):
                    continue
                result, fmt = parsed
                p = prov
                if not item.manifest or not item.manifest.framework:
                    if not options.framework and prov.framework in ("", "other"):
                        p = replace(prov, framework=infer_framework(result, f"{name}/{member}"))
                art = ArtifactInfo(path=f"{name}!{member}", sha256=blob.sha256, size_bytes=blob.size,
                                   format=fmt.name, parser_version=fmt.version, name=name)
                _, written = self.writer.write(conn, result, p, art)
                files += 1
                records += written
            except FileRejected as exc:
                reject(f"{label}!{member}", exc.reason, blob.sha256, exc.format)
            finally:
                blob.close()
        report.files += files
        return files, records

    def _ingest_log(self, conn: Connection, job: dict, prov: Provenance, repo: str,
                    report: SyncReport, tmp: Path) -> None:
        target = tmp / f"job-{job['id']}.log"
        try:
            with open(target, "wb") as out:
                sha, size = self.client.download(f"/repos/{repo}/actions/jobs/{job['id']}/logs", out)
        except (Gone, TooLarge) as exc:
            self.echo(f"no log  job {job['id']}: {exc}")
            return
        except GitHubError as exc:
            if exc.status == 404:  # logs are deleted with the run's retention
                return
            raise
        report.logs += 1
        if size == 0:
            return
        blob = Blob(name=f"{repo}/actions/jobs/{job['id']}/logs", opener=lambda: open(target, "rb"),
                    size=size, mtime=None, explicit=False, sha256=sha)
        try:
            parsed = self.ingester.parse(blob, "pytest-log")
        except FileRejected:
            return  # a log without pytest output is not a result, and not an error
        result, fmt = parsed
        if not result.record_count and not result.sessions:
            return
        art = ArtifactInfo(path=blob.name, sha256=sha, size_bytes=size, format=fmt.name,
                           parser_version=fmt.version, name="job-log")
        _, written = self.writer.write(conn, result, prov, art)
        report.files += 1
        report.records += written


def untrusted(run: dict, options: SyncOptions) -> str:
    """Why a run is not the repository's own CI: a pull request from a fork (its head
    repository is another), a `pull_request_target` or `workflow_run` chain (code a fork
    controls can reach it), or a branch the source does not follow. '' when it is."""
    head = (run.get("head_repository") or {}).get("full_name") if isinstance(
        run.get("head_repository"), dict) else None
    base = (run.get("repository") or {}).get("full_name") if isinstance(
        run.get("repository"), dict) else options.repo
    if head and base and head.lower() != base.lower():
        return f"fork: {head}"[:64]
    if run.get("event") in ("pull_request_target", "workflow_run"):
        return f"{run['event']} chain"
    if options.branch and run.get("head_branch") and run["head_branch"] != options.branch:
        return f"branch {run['head_branch']} not followed"[:64]
    return ""


def _worth_a_log(job: dict) -> bool:
    """Jobs that ran (not skipped or cancelled before starting) may have pytest output."""
    return job.get("status") == "completed" and job.get("conclusion") in (
        "success", "failure", "timed_out") and bool(job.get("started_at"))


def _read_manifest(path: Path) -> tuple[manifests.Manifest | None, str]:
    """The artifact's `parity-manifest.json`, if any, and a problem with it."""
    try:
        return manifests.find(path), ""
    except manifests.ManifestError as exc:
        return None, str(exc)


_NUMBER = re.compile(r"\d{5,}")


def _map_artifact(item: _Fetched, jobs: dict[str, dict], vocab) -> tuple[str | None, str, str]:
    """Which job an artifact's files belong to, by which rule, and a runner label to take the
    hardware from: the manifest's job id; a job id in the artifact name (PyTorch's
    `test-reports-…_<jobid>`); a runner label or runner name in the artifact name that names
    exactly one job; else the run (None), still with the label when the name carried one
    that several jobs share."""
    m = item.manifest
    if m is not None and m.job_id in jobs:
        return m.job_id, "manifest", ""
    name = str(item.meta.get("name", ""))
    for number in _NUMBER.findall(name):
        if number in jobs:
            return number, "job-id", ""
    lowered = name.lower()
    hits: dict[str, str] = {}
    for job_id, job in jobs.items():
        tokens = [str(x).lower() for x in job.get("labels") or []] + [str(job.get("runner_name") or "").lower()]
        for t in tokens:
            if len(t) >= 4 and t not in vocab.generic and t in lowered:
                hits[job_id] = t
                break
    if len(hits) == 1:
        return next(iter(hits)), "label", ""
    labels = set(hits.values())
    hint = labels.pop() if len(labels) == 1 else ""
    return None, "manifest" if m is not None else ("label" if hint else "run"), hint


def _apply_manifest(prov: Provenance, m: manifests.Manifest) -> Provenance:
    values: dict = {}
    if m.framework:
        values["framework"] = m.framework if m.framework in ("vllm", "sglang", "pytorch") else "other"
    if m.commit and not prov.head_sha:  # the run's own commit wins: it names the run row
        values["head_sha"] = m.commit
    for attr, value in (("suite", m.suite), ("framework_version", m.framework_version), ("image", m.image),
                        ("rocm_version", m.rocm_version), ("cuda_version", m.cuda_version)):
        if value:
            values[attr] = value
    if m.hardware:
        values["hardware"] = [m.hardware]
    if m.capabilities:
        values["capabilities"] = list(m.capabilities)
    return replace(prov, **values)
