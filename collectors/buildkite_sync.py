"""`parity collect buildkite`: an incremental, rate-limit-frugal sync of Buildkite builds.

vLLM's CI, its AMD lanes included, runs on Buildkite (pipelines `ci` and `amd-ci` of the
`vllm` organisation). What one sync does, per pipeline:
1. Lists the builds finished since the pipeline's watermark minus an overlap (6 h: a
   soft-fail job finishes hours after its build), newest first, 100 a page, with their
   jobs embedded and retried jobs included. A first sync reaches back
   `PARITY_BUILDKITE_SINCE_DAYS` (or `--since`).
2. Skips builds already stored with the same jobs, and builds with a job still running
   (the watermark stays before them, so they are listed again until they finish). A build
   stored earlier that gained a job since (a retry) is stored again, whole.
3. For each other build: one list of its artifacts, a download of each result file a job
   uploaded (JUnit XML and the other known formats; archives through the zip limits), and
   for every job that ran and uploaded none, the tail of its log (a `Range` request; the
   whole log only when the tail holds no complete pytest summary), read by the pytest-log
   parser. A job without pytest output keeps its state as a job-level result and adds no
   test.
4. Writes the build, its jobs, their results and a `synced_run` marker in one transaction:
   killing the sync at any moment and running it again gives the same store.

Each step is one lane: the job's label without its hardware prefix (`mi325_4: `), its
shard number and its parenthesised hardware suffix (`(b200-mi355)`) is the suite, so the
AMD mirror of a step meets its NVIDIA original. Hardware comes from that prefix first, then
the agent queue (`queue=amd_mi355_8`), then a hardware name in the label. A retried job's
earlier attempts are kept as attempt 0 of the build; attempt 1 holds each step's final job.

Requests for B new builds with A result artifacts and L jobs read from their logs:
ceil(B/100) list pages + B artifact lists + A downloads + L log tails (+ whole logs where a
tail held no summary); a sync with nothing new: one list request per pipeline."""
from __future__ import annotations

import io
import re
import tempfile
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Callable

from sqlalchemy import Connection, Engine, delete, select

from parity.collectors.buildkite import BudgetSpent, BuildkiteError, Client, TooLarge, Unreachable
from parity.collectors.config import suite_for
from parity.collectors.formats.pytest_log import clean_text
from parity.collectors.identity import job_hardware_names, step_label, suite_of_job
from parity.collectors.ingest import FileRejected, Ingester, framework_in_name
from parity.collectors.settings import Settings
from parity.collectors.sources import Blob, expand
from parity.collectors.sync import Progress, Stopped, utcnow
from parity.collectors.writer import ArtifactInfo, Provenance, parse_time, paused_gc
from parity.db import store, streaks
from parity.db.models import CiRun, SyncedRun

CI = "buildkite"
PER_PAGE = 100
# job states after which nothing about the job changes (Buildkite's job state machine)
TERMINAL = frozenset({"passed", "failed", "canceled", "timed_out", "skipped", "broken",
                      "expired", "waiting_failed", "blocked_failed", "unblocked_failed",
                      "not_run"})
# steps that build or upload rather than test (vllm-ci-dashboard's rule): no log is read
INFRA = ("bootstrap", "docker", "build image", "upload", "pipeline upload")
RESULT_SUFFIXES = (".xml", ".json", ".jsonl", ".csv", ".zip")
_FINAL = re.compile(r"^=*\s*(?:\d+ [a-z][a-z ]*?(?:, )?)+ in [\d.]+(?:s| seconds)", re.M)
_PROBLEMS = re.compile(r"\d+ (?:failed|errors?)\b")
_SHARD = re.compile(r"^>>Shard \d+: ?", re.M)


@dataclass(frozen=True)
class BuildkiteOptions:
    org: str
    pipelines: tuple[str, ...]
    branch: str = ""
    since: datetime | None = None
    until: datetime | None = None
    framework: str | None = None
    suites: tuple[tuple[str, str], ...] = ()  # job-name pattern -> suite (parity.toml)


@dataclass
class BuildkiteReport:
    org: str
    pipelines: list[str] = field(default_factory=list)
    builds_listed: int = 0
    builds_synced: int = 0
    builds_already: int = 0
    builds_open: int = 0  # a job still running: listed again next time
    builds_failed: int = 0
    jobs: int = 0
    retried_jobs: int = 0
    artifacts: int = 0
    logs: int = 0
    whole_logs: int = 0
    job_level: int = 0  # jobs that showed no pytest output: stored with their state only
    files: int = 0
    records: int = 0
    rejected: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    failed_pipelines: list[str] = field(default_factory=list)
    stopped: str | None = None
    cost: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def hardware_names(job: dict) -> list[str]:
    """Names to identify a Buildkite job's hardware by, best first (`identity.job_hardware_names`)."""
    return job_hardware_names(str(job.get("name") or job.get("label") or ""), queue(job))


def queue(job: dict) -> str:
    """The `queue=` entry of a job's agent query rules."""
    for rule in job.get("agent_query_rules") or []:
        if isinstance(rule, str) and rule.startswith("queue="):
            return rule[len("queue="):]
    return ""


def summary_complete(text: str) -> bool:
    """Whether a log tail holds a whole pytest summary: a final counts line, and the short
    summary block that names the failures when the counts report any."""
    finals = list(_FINAL.finditer(text))
    if not finals:
        return False
    last = finals[-1].group(0)
    return not _PROBLEMS.search(last) or "short test summary info" in text[:finals[-1].start()]


def _infra(job: dict) -> bool:
    label = step_label(job).lower()
    return any(word in label for word in INFRA)


def _script_jobs(build: dict) -> list[dict]:
    return [j for j in build.get("jobs") or [] if isinstance(j, dict) and j.get("type") == "script"]


class BuildkiteSync:
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
        self.stop = None  # a threading.Event: set, the sync stops after the build in hand

    def run(self, options: BuildkiteOptions) -> BuildkiteReport:
        report = BuildkiteReport(org=options.org, pipelines=list(options.pipelines))
        self.suites = options.suites
        try:
            for pipeline in options.pipelines:
                try:
                    self._pipeline(options, pipeline, report)
                except (BudgetSpent, Unreachable):
                    raise
                except BuildkiteError as exc:
                    report.failed_pipelines.append(pipeline)
                    report.errors.append(self.client.redact(f"{options.org}/{pipeline}: {exc}"))
        except BudgetSpent as exc:
            report.stopped = (f"{exc}; everything before this point is stored, and running the "
                              f"same command again resumes where it stopped")
        except Stopped as exc:
            report.stopped = f"{exc}; everything before this point is stored"
        finally:
            self.progress.close()
            report.cost = self.client.cost.as_dict()
        return report

    # -- one pipeline -------------------------------------------------------------------------

    def _pipeline(self, options: BuildkiteOptions, pipeline: str, report: BuildkiteReport) -> None:
        path = f"/organizations/{options.org}/pipelines/{pipeline}/builds"
        params = {"branch": options.branch, "include_retried_jobs": "true",
                  "per_page": PER_PAGE}
        if options.until is not None:  # a bounded sync: one window, no watermark
            since = options.since or options.until - timedelta(days=self.settings.buildkite_since_days)
            self._list(path, {**params, "created_from": _iso(since),
                              "created_to": _iso(options.until)}, options, pipeline, report, {})
            return
        scope = "|".join((CI, self.client.api_url, options.org, pipeline, options.branch))
        with self.engine.begin() as conn:
            cp = store.get_checkpoint(conn, scope)
            if cp is None:
                start = options.since or utcnow() - timedelta(days=self.settings.buildkite_since_days)
                cp = (start, start)
                store.set_checkpoint(conn, scope, *cp)
        covered_from, watermark = cp
        if options.since is not None and options.since < covered_from:
            covered_from = watermark = options.since
        overlap = timedelta(hours=self.settings.buildkite_overlap_h)
        tally: dict = {}
        self._list(path, {**params, "finished_from": _iso(watermark - overlap)}, options,
                   pipeline, report, tally)
        newest = tally.get("newest") or watermark
        new_mark = min(tally["oldest_open"], newest) if tally.get("oldest_open") else newest
        with self.engine.begin() as conn:
            store.set_checkpoint(conn, scope, covered_from, max(watermark, new_mark))

    def _list(self, path: str, params: dict, options: BuildkiteOptions, pipeline: str,
              report: BuildkiteReport, tally: dict) -> None:
        for builds in self.client.pages(path, params):
            self.progress.add_total(len(builds))
            for build in builds:
                self._build(build, options, pipeline, report, tally)

    def _build(self, build: dict, options: BuildkiteOptions, pipeline: str,
               report: BuildkiteReport, tally: dict) -> None:
        if self.stop is not None and self.stop.is_set():
            raise Stopped("stopped on request (SIGTERM)")
        report.builds_listed += 1
        number = str(build.get("number", ""))
        repository = f"{options.org}/{pipeline}"
        finished = parse_time(build.get("finished_at"))
        if finished is not None:
            tally["newest"] = max(tally.get("newest") or finished, finished)
        jobs = _script_jobs(build)
        if not number or not all(str(j.get("state")) in TERMINAL for j in jobs) \
                or finished is None:
            report.builds_open += 1
            _open(tally, finished or parse_time(build.get("created_at")))
            self.progress.step(f"open    {repository} build {number}")
            return
        with self.engine.connect() as conn:
            stored = conn.execute(select(SyncedRun.jobs).where(
                SyncedRun.ci_system == CI, SyncedRun.repository == repository,
                SyncedRun.run_id == number)).scalar()
        if stored == len(jobs):
            report.builds_already += 1
            self.progress.step(f"stored  {repository} build {number}")
            return
        try:
            self._sync_build(build, jobs, options, pipeline, report, resync=stored is not None)
        except (BudgetSpent, Unreachable):
            raise
        except BuildkiteError as exc:
            report.builds_failed += 1
            report.errors.append(self.client.redact(f"{repository} build {number}: {exc}"))
            self.echo(self.client.redact(f"FAILED  {repository} build {number}: {exc}"))
            _open(tally, finished)
            return
        report.builds_synced += 1
        self.progress.step(f"synced  {repository} build {number}")

    # -- one build ----------------------------------------------------------------------------

    def _sync_build(self, build: dict, jobs: list[dict], options: BuildkiteOptions,
                    pipeline: str, report: BuildkiteReport, resync: bool) -> None:
        org, number = options.org, build["number"]
        label = f"{org}/{pipeline}/builds/{number}"
        limit = self.settings.buildkite_max_jobs
        problems: list[tuple[str, str]] = []
        if len(jobs) > limit:
            problems.append((label, f"build has {len(jobs)} jobs; only the first {limit} are "
                                    f"stored (PARITY_BUILDKITE_MAX_JOBS)"))
        kept = jobs[:limit]
        base = f"/organizations/{org}/pipelines/{pipeline}/builds/{number}"
        artifacts = [a for page in self.client.pages(f"{base}/artifacts", {"per_page": PER_PAGE})
                     for a in page]
        by_job: dict[str, list[dict]] = {}
        for a in artifacts:
            name = str(a.get("filename") or a.get("path") or "").lower()
            if a.get("state", "finished") == "finished" and name.endswith(RESULT_SUFFIXES):
                by_job.setdefault(str(a.get("job_id")), []).append(a)
        with tempfile.TemporaryDirectory(prefix="parity-buildkite-") as tmp:
            files: dict[str, list[tuple[dict, Path | None, str]]] = {}
            for job in kept:
                for a in by_job.get(str(job.get("id")), []):
                    files.setdefault(str(job["id"]), []).append(self._fetch(a, base, Path(tmp)))
            logs = {}
            for job in kept:
                if str(job["id"]) not in files and job.get("started_at") and not _infra(job):
                    logs[str(job["id"])] = self._log(job, base, report, problems, label)
            with paused_gc(), store.bulk_transaction(self.engine) as conn:
                try:
                    if resync:
                        _forget_build(conn, f"{org}/{pipeline}", str(number))
                        self.writer.forget_cache()
                    self._write(conn, build, kept, files, logs, options, pipeline, report,
                                problems)
                    store.mark_synced(conn, CI, f"{org}/{pipeline}", str(number), 1,
                                      len(jobs), len(artifacts))
                except Exception:
                    self.writer.forget_cache()
                    raise
        report.jobs += len(kept)
        report.artifacts += sum(len(v) for v in files.values())

    def _fetch(self, meta: dict, base: str, tmp: Path) -> tuple[dict, Path | None, str]:
        size = int(meta.get("file_size") or 0)
        if size > self.settings.max_download_bytes:
            return meta, None, f"{size} bytes, over the {self.settings.max_download_bytes}-byte limit"
        name = Path(str(meta.get("filename") or meta.get("path") or "artifact")).name
        target = tmp / f"{meta.get('id')}-{name}"
        try:
            with open(target, "wb") as out:
                self.client.download(f"{base}/jobs/{meta.get('job_id')}/artifacts/"
                                     f"{meta.get('id')}/download", out)
        except TooLarge as exc:
            return meta, None, str(exc)
        return meta, target, ""

    def _log(self, job: dict, base: str, report: BuildkiteReport,
             problems: list[tuple[str, str]], label: str) -> bytes:
        path = f"{base}/jobs/{job['id']}/log"
        tail = self.client.log_tail(path, self.settings.buildkite_log_tail_bytes)
        report.logs += 1
        data = tail.text
        if not tail.whole:
            data = data.split(b"\n", 1)[1] if b"\n" in data else b""  # a cut first line
            text = data.decode("utf-8", errors="replace")
            if not summary_complete(_SHARD.sub("", clean_text(text))):
                cap = self.settings.buildkite_max_log_bytes
                if tail.size > cap:
                    problems.append((f"{label}/jobs/{job['id']}/log",
                                     f"log is {tail.size} bytes, over the {cap}-byte limit for "
                                     f"reading it whole; only its last {len(tail.text)} bytes "
                                     f"were read"))
                else:
                    data = self.client.log_whole(path).text
                    report.whole_logs += 1
        return data

    def _write(self, conn: Connection, build: dict, jobs: list[dict], files: dict, logs: dict,
               options: BuildkiteOptions, pipeline: str, report: BuildkiteReport,
               problems: list[tuple[str, str]]) -> None:
        repository = f"{options.org}/{pipeline}"
        framework = options.framework or framework_in_name(repository) or \
            framework_in_name(options.org) or "other"
        base = Provenance(
            run_id=str(build["number"]), job_id="", ci_system=CI, repository=repository,
            workflow=pipeline, head_sha=str(build.get("commit") or "")[:64],
            branch=str(build.get("branch") or "")[:200], event=str(build.get("source") or ""),
            run_created_at=parse_time(build.get("created_at")), framework=framework)
        final = replace(base, run_conclusion=str(build.get("state") or ""),
                        run_url=str(build.get("web_url") or ""),
                        run_started_at=parse_time(build.get("started_at")),
                        run_completed_at=parse_time(build.get("finished_at")))
        self.writer.ensure_run(conn, final)
        for where, reason in problems:
            self._reject(conn, report, where, reason)
        for job in jobs:
            retried_in = str(job.get("retried_in_job_id") or "")
            superseded = bool(retried_in) or bool(job.get("retried"))
            prov = replace(base if superseded else final, attempt=0 if superseded else 1)
            prov = self._job_prov(prov, job, build)
            report.retried_jobs += superseded
            self.writer.ensure_job(conn, prov)
            jid = str(job["id"])
            wrote = False
            for meta, path, reason in files.get(jid, []):
                wrote |= self._ingest_artifact(conn, meta, path, reason, prov, report)
            if jid in logs and not wrote:
                wrote = self._ingest_log(conn, logs[jid], prov, report)
            if not wrote:
                report.job_level += 1

    def _job_prov(self, prov: Provenance, job: dict, build: dict) -> Provenance:
        name = str(job.get("name") or job.get("label") or job.get("step_key") or "")[:500]
        agent = job.get("agent") if isinstance(job.get("agent"), dict) else {}
        state = str(job.get("state") or "")
        exit_status = job.get("exit_status")
        return replace(
            prov, job_id=str(job["id"]), job_name=name,
            suite=suite_for(name, self.suites) or suite_of_job(step_label(job), self.writer.vocab),
            runner_labels=[str(r) for r in job.get("agent_query_rules") or []],
            runner_name=str(agent.get("name") or "")[:200], runner_group=queue(job)[:200],
            hardware=hardware_names(job), job_conclusion=state,
            job_url=str(job.get("web_url") or f"{build.get('web_url', '')}#{job['id']}"),
            job_created_at=parse_time(job.get("runnable_at") or job.get("scheduled_at")
                                      or job.get("created_at")),
            job_started_at=parse_time(job.get("started_at")),
            job_completed_at=parse_time(job.get("finished_at")),
            exit_status=exit_status if isinstance(exit_status, int) else None,
            signal_reason=str(job.get("signal_reason") or ""),
            soft_failed=bool(job.get("soft_failed")),
            retried_in=str(job.get("retried_in_job_id") or ""))

    def _reject(self, conn: Connection, report: BuildkiteReport, where: str, reason: str,
                sha: str = "", fmt: str = "") -> None:
        reason = " ".join(reason.split())[:1000]
        report.rejected.append(f"{where}: {reason}")
        self.echo(f"REJECTED {where}: {reason}")
        store.record_ingest_error(conn, where, reason, sha, fmt)

    def _ingest_artifact(self, conn: Connection, meta: dict, path: Path | None, reason: str,
                         prov: Provenance, report: BuildkiteReport) -> bool:
        shown = f"{prov.repository}/builds/{prov.run_id}/jobs/{prov.job_id}/artifacts/" \
                f"{meta.get('path') or meta.get('filename')}"
        if path is None:
            self._reject(conn, report, shown, reason)
            return False
        wrote = False

        def reject(where: str, why: str, sha: str = "", fmt: str = "") -> None:
            self._reject(conn, report, where.replace(str(path), shown), why, sha, fmt)

        for blob in expand([path], self.settings, reject):
            member = blob.name.replace(str(path), shown)
            blob.explicit = False  # a file of no known format is left alone, not an error
            try:
                parsed = self.ingester.parse(blob)
                if isinstance(parsed, str):
                    continue
                result, fmt = parsed
                art = ArtifactInfo(path=member[-500:], sha256=blob.sha256, size_bytes=blob.size,
                                   format=fmt.name, parser_version=fmt.version,
                                   name=str(meta.get("filename") or "")[:300])
                _, written = self.writer.write(conn, result, prov, art)
                report.files += 1
                report.records += written
                wrote = True
            except FileRejected as exc:
                reject(member, exc.reason, blob.sha256, exc.format)
            finally:
                blob.close()
        return wrote

    def _ingest_log(self, conn: Connection, data: bytes, prov: Provenance,
                    report: BuildkiteReport) -> bool:
        if not data:
            return False
        name = f"{prov.repository}/builds/{prov.run_id}/jobs/{prov.job_id}/log"
        blob = Blob(name=name, opener=lambda: io.BytesIO(data), size=len(data), mtime=None,
                    explicit=False)
        try:
            parsed = self.ingester.parse(blob, "pytest-log")
        except FileRejected:
            return False  # no pytest output: the job's state is its result
        result, fmt = parsed
        if not result.record_count and not result.sessions:
            return False
        art = ArtifactInfo(path=name, sha256=blob.sha256, size_bytes=len(data), format=fmt.name,
                           parser_version=fmt.version, name="job-log")
        _, written = self.writer.write(conn, result, prov, art)
        report.files += 1
        report.records += written
        return True


def _open(tally: dict, when: datetime | None) -> None:
    if when is not None:
        tally["oldest_open"] = min(tally.get("oldest_open") or when, when)


def _iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def _forget_build(conn: Connection, repository: str, number: str) -> None:
    """Drop a build's stored rows (its jobs and results go with them) before storing it
    again with the jobs it has gained; the failure streaks it counted in go with it."""
    runs = conn.execute(select(CiRun.id).where(
        CiRun.ci_system == CI, CiRun.repository == repository, CiRun.run_id == number)).scalars()
    with streaks.watching(conn, runs=list(runs)):
        conn.execute(delete(CiRun).where(CiRun.ci_system == CI,
                                         CiRun.repository == repository,
                                         CiRun.run_id == number))
    conn.execute(delete(SyncedRun).where(SyncedRun.ci_system == CI,
                                         SyncedRun.repository == repository,
                                         SyncedRun.run_id == number))
