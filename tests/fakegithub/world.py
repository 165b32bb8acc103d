"""The data behind the fake GitHub: repositories, workflow runs with attempts, jobs, artifacts,
logs and self-hosted runners, and their REST payloads.

Payloads carry every field of the official examples (`../shared/fixtures/github-api/`; a
conformance test checks that), with every URL written from the fake's own base URL, as
PyGithub and any careful client require."""
from __future__ import annotations

import base64
import hashlib
import io
import json
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from itertools import count


def iso(dt: datetime | None) -> str | None:
    return None if dt is None else dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def git_blob_sha(data: bytes) -> str:
    """The sha git gives a file's content (`git hash-object`)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def zip_bytes(files: dict[str, bytes | str]) -> bytes:
    """A zip archive of `files`; the same files give the same bytes."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data.encode() if isinstance(data, str) else data)
    return buf.getvalue()


@dataclass
class Job:
    id: int
    run_id: int
    attempt: int
    name: str
    labels: list[str]
    runner_name: str | None
    runner_group: str | None
    runner_id: int | None
    status: str
    conclusion: str | None
    created_at: datetime
    started_at: datetime | None
    completed_at: datetime | None
    log: bytes = b""


@dataclass
class Artifact:
    id: int
    run_id: int
    name: str
    data: bytes
    expired: bool
    created_at: datetime


@dataclass
class Run:
    id: int
    repo: str
    workflow: str  # file name, e.g. "rocm.yml"
    workflow_id: int
    name: str
    run_number: int
    head_sha: str
    branch: str
    event: str
    actor: str
    status: str
    conclusion: str | None
    created_at: datetime
    updated_at: datetime
    run_started_at: datetime
    attempt: int = 1
    check_suite_id: int = 0
    head_repo: str | None = None  # a fork's pull request: the repository its head lives in


@dataclass
class Runner:
    id: int
    scope: str  # "owner/name" or "org:NAME"
    name: str
    os: str
    status: str
    busy: bool
    labels: list[tuple[int, str, str]]  # (id, name, type)
    group_id: int = 1
    ephemeral: bool = False
    version: str | None = "2.321.0"


@dataclass
class Repo:
    full_name: str
    id: int
    private: bool = False
    workflows: dict[str, int] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)  # path -> content (default branch)


class World:
    """Everything the fake serves. Tests build it with the `add_*` methods."""

    def __init__(self, now: datetime | None = None):
        self.now = now or datetime.now(timezone.utc).replace(tzinfo=None, microsecond=0)
        self.repos: dict[str, Repo] = {}
        self.runs: dict[int, Run] = {}
        self.jobs: dict[int, Job] = {}
        self.artifacts: dict[int, Artifact] = {}
        self.runners: dict[int, Runner] = {}
        self.comments: list[dict] = []
        self.issues: dict[str, dict[int, dict]] = {}  # repo -> number -> issue
        self.labels: dict[str, dict[str, dict]] = {}  # repo -> name -> label
        self.runner_groups: dict[str, list[dict]] = {}
        self._ids = count(100_000_001)
        self._run_numbers: dict[str, count] = {}

    def next_id(self) -> int:
        return next(self._ids)

    # -- building -----------------------------------------------------------------------------

    def add_repo(self, full_name: str, private: bool = False) -> Repo:
        repo = self.repos.get(full_name)
        if repo is None:
            repo = self.repos[full_name] = Repo(full_name, self.next_id(), private)
        return repo

    def add_issue(self, repo: str, number: int, title: str = "Parity reports", body: str = "",
                  state: str = "open") -> dict:
        """An issue that already exists (reports are posted to it as comments)."""
        self.add_repo(repo)
        issue = {"number": number, "title": title, "body": body, "state": state,
                 "state_reason": None, "labels": [], "closed_by": None,
                 "html_url": f"https://github.com/{repo}/issues/{number}"}
        self.issues.setdefault(repo, {})[number] = issue
        return issue

    def add_file(self, repo: str, path: str, data: bytes | str) -> None:
        """Put a file in a repository's default branch (the contents API serves it)."""
        self.add_repo(repo).files[path.strip("/")] = data.encode() if isinstance(data, str) else data

    def contents_payload(self, repo: Repo, path: str, base: str) -> dict | list | None:
        """The contents API's answer for a file (with base64 content) or a directory (its
        entries, each with its git sha), or None when nothing is there."""
        path = path.strip("/")
        web = f"https://github.com/{repo.full_name}"

        def entry(p: str, kind: str, sha: str, size: int) -> dict:
            api = f"{base}/repos/{repo.full_name}/contents/{p}?ref=main"
            raw = f"https://raw.githubusercontent.com/{repo.full_name}/main/{p}"
            html = f"{web}/{'blob' if kind == 'file' else 'tree'}/main/{p}"
            git = f"{base}/repos/{repo.full_name}/git/{'blobs' if kind == 'file' else 'trees'}/{sha}"
            return {"name": p.rsplit("/", 1)[-1], "path": p, "sha": sha, "size": size,
                    "url": api, "html_url": html, "git_url": git,
                    "download_url": raw if kind == "file" else None, "type": kind,
                    "_links": {"self": api, "git": git, "html": html}}

        if path in repo.files:
            data = repo.files[path]
            out = entry(path, "file", git_blob_sha(data), len(data))
            out.update(content=base64.encodebytes(data).decode(), encoding="base64")
            return out
        prefix = f"{path}/" if path else ""
        children: dict[str, list[str]] = {}
        for p in repo.files:
            if p.startswith(prefix):
                head = p[len(prefix):].split("/", 1)[0]
                children.setdefault(head, []).append(p)
        if not children:
            return None
        out = []
        for name in sorted(children):
            full = prefix + name
            if full in repo.files:
                out.append(entry(full, "file", git_blob_sha(repo.files[full]), len(repo.files[full])))
            else:  # a tree's sha changes when anything under it does
                inner = "".join(f"{p}:{git_blob_sha(repo.files[p])}" for p in sorted(children[name]))
                out.append(entry(full, "dir", hashlib.sha1(inner.encode()).hexdigest(), 0))
        return out

    def add_run(self, repo: str, *, workflow: str = "ci.yml", created_at: datetime,
                head_sha: str | None = None, branch: str = "main", event: str = "schedule",
                status: str = "completed", conclusion: str | None = "success",
                name: str | None = None, actor: str = "octocat") -> Run:
        r = self.add_repo(repo)
        wf_id = r.workflows.setdefault(workflow, self.next_id())
        number = next(self._run_numbers.setdefault(repo, count(1)))
        run_id = self.next_id()
        sha = head_sha or hashlib.sha1(f"{repo}{run_id}".encode()).hexdigest()
        run = Run(id=run_id, repo=repo, workflow=workflow, workflow_id=wf_id,
                  name=name or workflow.rsplit(".", 1)[0], run_number=number, head_sha=sha,
                  branch=branch, event=event, actor=actor, status=status,
                  conclusion=conclusion if status == "completed" else None,
                  created_at=created_at, updated_at=created_at + timedelta(hours=1),
                  run_started_at=created_at, check_suite_id=self.next_id())
        self.runs[run_id] = run
        return run

    def add_job(self, run: Run, name: str, labels: list[str], *, runner_name: str | None = None,
                attempt: int | None = None, queue_s: int = 45, duration_s: int = 900,
                conclusion: str | None = "success", log: bytes | str = b"",
                status: str = "completed") -> Job:
        created = run.created_at + timedelta(seconds=5)
        assigned = status != "queued"
        started = created + timedelta(seconds=queue_s) if assigned else None
        done = status == "completed"
        job = Job(id=self.next_id(), run_id=run.id, attempt=attempt or run.attempt, name=name,
                  labels=list(labels), runner_name=(runner_name or f"{labels[-1]}-runner")
                  if assigned else None, runner_group="Default" if assigned else None,
                  runner_id=self.next_id() if assigned else None, status=status,
                  conclusion=conclusion if done else None, created_at=created, started_at=started,
                  completed_at=started + timedelta(seconds=duration_s) if done and started else None,
                  log=log.encode() if isinstance(log, str) else log)
        self.jobs[job.id] = job
        return job

    def add_artifact(self, run: Run, name: str, files: dict[str, bytes | str] | None = None, *,
                     data: bytes | None = None, expired: bool = False) -> Artifact:
        art = Artifact(id=self.next_id(), run_id=run.id, name=name,
                       data=data if data is not None else zip_bytes(files or {}),
                       expired=expired, created_at=run.created_at + timedelta(minutes=50))
        self.artifacts[art.id] = art
        return art

    def rerun(self, run: Run, at: datetime | None = None) -> Run:
        """Start the next attempt; its jobs are added with `add_job` afterwards."""
        run.attempt += 1
        run.run_started_at = at or run.updated_at + timedelta(minutes=5)
        run.updated_at = run.run_started_at + timedelta(hours=1)
        return run

    def finish(self, run: Run, conclusion: str = "success") -> None:
        run.status, run.conclusion = "completed", conclusion
        for job in self.jobs.values():
            if job.run_id == run.id and job.status != "completed":
                job.status, job.conclusion = "completed", conclusion
                job.started_at = job.started_at or job.created_at + timedelta(seconds=30)
                job.completed_at = job.started_at + timedelta(minutes=10)
                job.runner_name = job.runner_name or f"{job.labels[-1]}-runner"
                job.runner_group = "Default"
        run.updated_at = run.updated_at + timedelta(minutes=1)

    def add_runner(self, scope: str, name: str, labels: list[str], *, status: str = "online",
                   busy: bool = False, os: str = "linux", ephemeral: bool = False) -> Runner:
        read_only = ["self-hosted", "Linux", "X64"]
        all_labels = [(i + 1, n, "read-only") for i, n in enumerate(read_only)] + [
            (self.next_id(), n, "custom") for n in labels if n not in read_only]
        runner = Runner(self.next_id(), scope, name, os, status, busy, all_labels,
                        ephemeral=ephemeral)
        self.runners[runner.id] = runner
        return runner

    def add_runner_group(self, org: str, name: str, *, allows_public_repositories: bool = False,
                         visibility: str = "selected") -> dict:
        group = {"id": self.next_id() % 100_000, "name": name, "visibility": visibility,
                 "default": False, "allows_public_repositories": allows_public_repositories,
                 "restricted_to_workflows": False, "selected_workflows": [],
                 "workflow_restrictions_read_only": False, "inherited": False}
        self.groups(org).append(group)
        return group

    # -- queries ------------------------------------------------------------------------------

    def groups(self, org: str) -> list[dict]:
        """An organisation's runner groups; every organisation has the Default group (id 1)."""
        return self.runner_groups.setdefault(org, [{
            "id": 1, "name": "Default", "visibility": "all", "default": True,
            "allows_public_repositories": False, "restricted_to_workflows": False,
            "selected_workflows": [], "workflow_restrictions_read_only": False,
            "inherited": False}])

    def run_jobs(self, run_id: int, attempt: int | None = None) -> list[Job]:
        jobs = [j for j in self.jobs.values() if j.run_id == run_id]
        if attempt is not None:
            jobs = [j for j in jobs if j.attempt == attempt]
        return sorted(jobs, key=lambda j: (j.attempt, j.id))

    def run_artifacts(self, run_id: int) -> list[Artifact]:
        return sorted((a for a in self.artifacts.values() if a.run_id == run_id),
                      key=lambda a: a.id)

    # -- payloads -----------------------------------------------------------------------------

    def run_payload(self, run: Run, base: str, attempt: int | None = None) -> dict:
        repo = self.repos[run.repo]
        api = f"{base}/repos/{run.repo}"
        web = f"{base}/web/{run.repo}"
        owner = _user(run.repo.split("/")[0], base)
        repository = _repository(repo, base, owner)
        head = repository
        if run.head_repo and run.head_repo != run.repo:
            fork = self.add_repo(run.head_repo)
            head = _repository(fork, base, _user(run.head_repo.split("/")[0], base))
        n = attempt or run.attempt
        return {
            "id": run.id, "name": run.name, "node_id": _node("WFR", run.id),
            "check_suite_id": run.check_suite_id, "check_suite_node_id": _node("CS", run.check_suite_id),
            "head_branch": run.branch, "head_sha": run.head_sha,
            "path": f".github/workflows/{run.workflow}", "run_number": run.run_number,
            "event": run.event, "display_title": f"{run.name} #{run.run_number}",
            "status": run.status if n == run.attempt else "completed",
            "conclusion": run.conclusion if n == run.attempt else "failure",
            "workflow_id": run.workflow_id, "url": f"{api}/actions/runs/{run.id}",
            "html_url": f"{web}/actions/runs/{run.id}", "pull_requests": [],
            "created_at": iso(run.created_at), "updated_at": iso(run.updated_at),
            "actor": _user(run.actor, base), "run_attempt": n, "referenced_workflows": [],
            "run_started_at": iso(run.run_started_at), "triggering_actor": _user(run.actor, base),
            "jobs_url": f"{api}/actions/runs/{run.id}/jobs",
            "logs_url": f"{api}/actions/runs/{run.id}/logs",
            "check_suite_url": f"{api}/check-suites/{run.check_suite_id}",
            "artifacts_url": f"{api}/actions/runs/{run.id}/artifacts",
            "cancel_url": f"{api}/actions/runs/{run.id}/cancel",
            "rerun_url": f"{api}/actions/runs/{run.id}/rerun",
            "previous_attempt_url": f"{api}/actions/runs/{run.id}/attempts/{n - 1}" if n > 1 else None,
            "workflow_url": f"{api}/actions/workflows/{run.workflow_id}",
            "head_commit": {"id": run.head_sha, "tree_id": hashlib.sha1(run.head_sha.encode()).hexdigest(),
                            "message": "nightly", "timestamp": iso(run.created_at),
                            "author": {"name": "Octo Cat", "email": "octocat@github.com"},
                            "committer": {"name": "GitHub", "email": "noreply@github.com"}},
            "repository": repository, "head_repository": head,
            "head_repository_id": head["id"],
        }

    def job_payload(self, job: Job, base: str) -> dict:
        run = self.runs[job.run_id]
        api = f"{base}/repos/{run.repo}"
        steps = []
        if job.started_at:
            t = job.started_at
            for number, name in ((1, "Set up job"), (2, "Run tests"), (3, "Complete job")):
                end = job.completed_at if number == 3 else t + timedelta(seconds=1)
                steps.append({"name": name, "status": "completed" if job.completed_at else "in_progress",
                              "conclusion": job.conclusion, "number": number,
                              "started_at": iso(t).replace("Z", ".000Z"),
                              "completed_at": iso(end).replace("Z", ".000Z") if end else None})
                t = end or t
        return {
            "id": job.id, "run_id": run.id, "run_url": f"{api}/actions/runs/{run.id}",
            "run_attempt": job.attempt, "node_id": _node("CR", job.id), "head_sha": run.head_sha,
            "url": f"{api}/actions/jobs/{job.id}",
            "html_url": f"{base}/web/{run.repo}/actions/runs/{run.id}/job/{job.id}",
            "status": job.status, "conclusion": job.conclusion,
            "created_at": iso(job.created_at), "started_at": iso(job.started_at or job.created_at),
            "completed_at": iso(job.completed_at), "name": job.name, "steps": steps,
            "check_run_url": f"{api}/check-runs/{job.id}", "labels": job.labels,
            "runner_id": job.runner_id, "runner_name": job.runner_name,
            "runner_group_id": 1 if job.runner_group else None,
            "runner_group_name": job.runner_group, "workflow_name": run.name,
            "head_branch": run.branch,
        }

    def artifact_payload(self, art: Artifact, base: str) -> dict:
        run = self.runs[art.run_id]
        api = f"{base}/repos/{run.repo}"
        return {
            "id": art.id, "node_id": _node("AR", art.id), "name": art.name,
            "size_in_bytes": len(art.data), "url": f"{api}/actions/artifacts/{art.id}",
            "archive_download_url": f"{api}/actions/artifacts/{art.id}/zip",
            "expired": art.expired, "created_at": iso(art.created_at),
            "expires_at": iso(art.created_at + timedelta(days=90)),
            "updated_at": iso(art.created_at),
            "digest": "sha256:" + hashlib.sha256(art.data).hexdigest(),
            "workflow_run": {"id": run.id, "repository_id": self.repos[run.repo].id,
                             "head_repository_id": self.repos[run.repo].id,
                             "head_branch": run.branch, "head_sha": run.head_sha},
        }

    def repo_payload(self, repo: Repo, base: str) -> dict:
        return _repository(repo, base, _user(repo.full_name.split("/")[0], base))

    @staticmethod
    def runner_payload(runner: Runner) -> dict:
        return {"id": runner.id, "name": runner.name, "os": runner.os, "status": runner.status,
                "busy": runner.busy, "ephemeral": runner.ephemeral, "version": runner.version,
                "runner_group_id": runner.group_id,
                "labels": [{"id": i, "name": n, "type": t} for i, n, t in runner.labels]}


def _node(prefix: str, ident: int) -> str:
    import base64
    return base64.b64encode(f"{prefix}_{ident}".encode()).decode()


def _user(login: str, base: str) -> dict:
    uid = int(hashlib.sha1(login.encode()).hexdigest()[:6], 16)
    api = f"{base}/users/{login}"
    return {"login": login, "id": uid, "node_id": _node("U", uid),
            "avatar_url": f"{base}/avatars/{login}", "gravatar_id": "", "url": api,
            "html_url": f"{base}/web/{login}", "followers_url": f"{api}/followers",
            "following_url": f"{api}/following{{/other_user}}", "gists_url": f"{api}/gists{{/gist_id}}",
            "starred_url": f"{api}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{api}/subscriptions", "organizations_url": f"{api}/orgs",
            "repos_url": f"{api}/repos", "events_url": f"{api}/events{{/privacy}}",
            "received_events_url": f"{api}/received_events", "type": "User", "site_admin": False}


def _repository(repo: Repo, base: str, owner: dict) -> dict:
    api = f"{base}/repos/{repo.full_name}"
    return {"id": repo.id, "node_id": _node("R", repo.id), "name": repo.full_name.split("/")[1],
            "full_name": repo.full_name, "owner": owner, "private": repo.private,
            "html_url": f"{base}/web/{repo.full_name}", "description": None, "fork": False,
            "url": api, "hooks_url": f"{api}/hooks", "issues_url": f"{api}/issues{{/number}}",
            "pulls_url": f"{api}/pulls{{/number}}", "commits_url": f"{api}/commits{{/sha}}"}


def dumps(payload) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode()
