"""The data behind the fake Buildkite: organisations, pipelines, builds with their jobs
(retries, soft fails, parallel shards, agent queues), job logs and artifacts, and their REST
payloads. Field names and shapes follow Buildkite's REST documentation (builds.md, jobs.md,
artifacts.md as summarised in `../shared/docs/buildkite-alerts-scale.md` §1.1)."""
from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta


def iso(dt: datetime | None) -> str | None:
    return None if dt is None else dt.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _uuid(*parts) -> str:
    return str(uuid.UUID(hashlib.md5("|".join(map(str, parts)).encode()).hexdigest()))


@dataclass
class Artifact:
    id: str
    job_id: str
    path: str
    data: bytes
    state: str = "finished"
    declared_size: int | None = None  # a size the listing states (None: the real one)


@dataclass
class Job:
    id: str
    name: str
    queue: str
    state: str = "passed"
    log: bytes = b""
    type: str = "script"
    soft_failed: bool = False
    exit_status: int | None = 0
    signal_reason: str | None = None
    retried_in_job_id: str | None = None
    retries_count: int | None = None
    parallel_group_index: int | None = None
    parallel_group_total: int | None = None
    agent: str = "agent-1"
    created_at: datetime | None = None
    runnable_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None


@dataclass
class Build:
    number: int
    pipeline: str
    org: str
    commit: str
    created_at: datetime
    branch: str = "main"
    message: str = "nightly"
    source: str = "schedule"
    state: str = "passed"
    finished_at: datetime | None = None
    jobs: list[Job] = field(default_factory=list)
    artifacts: list[Artifact] = field(default_factory=list)

    @property
    def id(self) -> str:
        return _uuid(self.org, self.pipeline, self.number)


class World:
    def __init__(self):
        self.builds: dict[tuple[str, str], list[Build]] = {}
        self._jobs = 0

    def build(self, org: str, pipeline: str, number: int, created_at: datetime, *,
              commit: str | None = None, state: str = "passed", finished: bool = True,
              **kw) -> Build:
        b = Build(number=number, pipeline=pipeline, org=org,
                  commit=commit or hashlib.sha1(f"{number}".encode()).hexdigest(),
                  created_at=created_at, state=state,
                  finished_at=created_at + timedelta(hours=2) if finished else None, **kw)
        self.builds.setdefault((org, pipeline), []).append(b)
        return b

    def job(self, build: Build, name: str, queue: str, *, state: str = "passed",
            log: bytes | str = b"", **kw) -> Job:
        self._jobs += 1
        start = build.created_at + timedelta(minutes=5 + self._jobs % 7)
        done = state not in ("running", "scheduled", "waiting")
        j = Job(id=_uuid(build.org, build.pipeline, build.number, self._jobs), name=name,
                queue=queue, state=state, log=log.encode() if isinstance(log, str) else log,
                created_at=build.created_at, runnable_at=build.created_at + timedelta(minutes=1),
                started_at=start if state not in ("scheduled", "waiting", "skipped") else None,
                finished_at=start + timedelta(minutes=30) if done else None, **kw)
        build.jobs.append(j)
        return j

    def retry(self, build: Build, job: Job, *, state: str = "passed", log: bytes | str = b"") -> Job:
        """Retry `job`: it is marked retried and a new job takes its place."""
        new = self.job(build, job.name, job.queue, state=state, log=log,
                       retries_count=(job.retries_count or 0) + 1,
                       parallel_group_index=job.parallel_group_index,
                       parallel_group_total=job.parallel_group_total)
        job.retried_in_job_id = new.id
        return new

    def artifact(self, build: Build, job: Job, path: str, data: bytes | str, **kw) -> Artifact:
        a = Artifact(id=_uuid(job.id, path), job_id=job.id, path=path,
                     data=data.encode() if isinstance(data, str) else data, **kw)
        build.artifacts.append(a)
        return a

    def find(self, org: str, pipeline: str, number: int) -> Build | None:
        for b in self.builds.get((org, pipeline), []):
            if b.number == number:
                return b
        return None

    # -- payloads -----------------------------------------------------------------------------

    def build_payload(self, b: Build, api: str, web: str, retried: bool = True) -> dict:
        base = f"{api}/organizations/{b.org}/pipelines/{b.pipeline}/builds/{b.number}"
        return {
            "id": b.id, "graphql_id": "", "url": base,
            "web_url": f"{web}/{b.org}/{b.pipeline}/builds/{b.number}",
            "number": b.number, "state": b.state, "blocked": False, "cancel_reason": None,
            "message": b.message, "commit": b.commit, "branch": b.branch, "tag": None,
            "env": {}, "source": b.source,
            "creator": {"id": _uuid("creator"), "name": "Nightly", "email": "ci@example.com"},
            "jobs": [self.job_payload(b, j, api, web) for j in b.jobs
                     if retried or not j.retried_in_job_id],
            "created_at": iso(b.created_at), "scheduled_at": iso(b.created_at),
            "started_at": iso(b.created_at + timedelta(minutes=1)),
            "failing_at": iso(b.finished_at) if b.state == "failed" else None,
            "finished_at": iso(b.finished_at), "meta_data": {}, "pull_request": None,
            "rebuilt_from": None,
            "pipeline": {"id": _uuid(b.org, b.pipeline), "slug": b.pipeline, "name": b.pipeline,
                         "url": f"{api}/organizations/{b.org}/pipelines/{b.pipeline}"},
        }

    def job_payload(self, b: Build, j: Job, api: str, web: str) -> dict:
        base = f"{api}/organizations/{b.org}/pipelines/{b.pipeline}/builds/{b.number}/jobs/{j.id}"
        return {
            "id": j.id, "graphql_id": "", "type": j.type, "name": j.name,
            "step_key": None, "group_key": None,
            "step": {"id": _uuid("step", b.org, b.pipeline, j.name)},
            "priority": {"number": 0},
            "agent_query_rules": [f"queue={j.queue}"] if j.queue else [],
            "state": j.state, "build_url": base.rsplit("/jobs/", 1)[0],
            "web_url": f"{web}/{b.org}/{b.pipeline}/builds/{b.number}#{j.id}",
            "log_url": f"{base}/log", "raw_log_url": f"{base}/log.txt",
            "artifacts_url": f"{base}/artifacts", "command": "pytest -v tests",
            "soft_failed": j.soft_failed, "exit_status": j.exit_status,
            "signal": None, "signal_reason": j.signal_reason,
            "artifact_paths": "", "agent": {"id": _uuid("agent", j.agent), "name": j.agent,
                                            "hostname": j.agent} if j.started_at else None,
            "created_at": iso(j.created_at), "scheduled_at": iso(j.created_at),
            "runnable_at": iso(j.runnable_at), "started_at": iso(j.started_at),
            "finished_at": iso(j.finished_at), "retried": bool(j.retried_in_job_id),
            "retried_in_job_id": j.retried_in_job_id, "retries_count": j.retries_count,
            "retry_source": None, "retry_type": None,
            "parallel_group_index": j.parallel_group_index,
            "parallel_group_total": j.parallel_group_total, "matrix": None,
            "cluster_id": None, "cluster_queue_id": None,
        }

    @staticmethod
    def artifact_payload(b: Build, a: Artifact, api: str) -> dict:
        base = (f"{api}/organizations/{b.org}/pipelines/{b.pipeline}/builds/{b.number}"
                f"/jobs/{a.job_id}/artifacts/{a.id}")
        name = a.path.rsplit("/", 1)[-1]
        return {"id": a.id, "job_id": a.job_id, "url": base, "download_url": f"{base}/download",
                "state": a.state, "path": a.path,
                "dirname": a.path.rsplit("/", 1)[0] if "/" in a.path else ".",
                "filename": name, "mime_type": "application/xml" if name.endswith(".xml")
                else "application/octet-stream",
                "file_size": a.declared_size if a.declared_size is not None else len(a.data),
                "glob_path": "**/*", "original_path": a.path,
                "sha1sum": hashlib.sha1(a.data).hexdigest(), "uploaded_at": None}
