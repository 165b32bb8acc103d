"""ROCm/Quartz `status.json` (schema 2.0): TheRock's nightly (or rc, dev) release status.

One document is one release run (`trigger_workflow_run_id`) of ROCm itself, PyTorch, JAX
and the native packages, per platform and GPU architecture family. It becomes:
- a run (`ci_system = quartz`, `repository = ROCm/TheRock`, the release type as workflow,
  the orchestrator's conclusion, its times);
- per component (rocm, pytorch, jax) × platform × architecture family the platform requested:
  a build job (builds run once per platform for every architecture, so each architecture's
  lane carries the platform build's status) and, where that architecture was tested, a test
  job whose tests are the test matrix entries (`variants`: Python × torch or jax ref; the
  arch entry itself when there is no matrix) with their outcome: success passed, failure
  failed, skipped and cancelled skipped (with the reason), in progress not yet a result;
- native packages (rpm, deb): one job each, platform-wide, with its status.
An architecture that builds but has no test entry is a lane with jobs and no tests: the
coverage view calls it "builds but runs no tests", never passing. Every job is a snapshot:
a newer version of the same night's document replaces its results.

Hardware comes from the architecture family through the hardware vocabulary (`gfx125X-dcgpu`
MI455X, `gfx950-dcgpu` MI355X, `gfx94X-dcgpu` MI300X/MI325X); client families such as
`gfx120X-all` are kept raw."""
from __future__ import annotations

import json
from typing import Any

from parity.collectors.formats.records import (JobPart, ParseError, ParseResult, RunRef,
                                               TestRecord)
from parity.collectors.formats.records import parse_time as _time

PARSER_VERSION = "1"
SCHEMAS = ("2.0",)
STATUSES = ("success", "failure", "in_progress", "cancelled", "skipped")
COMPONENTS = {"rocm": "rocm", "pytorch": "pytorch", "jax": "jax"}
OUTCOME = {"success": "passed", "failure": "failed", "skipped": "skipped",
           "cancelled": "skipped"}
CONCLUSION = {"success": "success", "failure": "failure", "cancelled": "cancelled",
              "skipped": "skipped", "in_progress": "in_progress"}
REPOSITORY = "ROCm/TheRock"
# test phases: the smoke tests, and the full PyTorch suite where it ran (its own suite, so
# the two never overwrite each other)
PHASES = {"test": "therock-{comp}", "test_full": "therock-{comp}-full"}


def _entries(detail: dict, phase: str, platform: str) -> dict:
    by_platform = detail.get(phase) if isinstance(detail.get(phase), dict) else {}
    entries = by_platform.get(platform)
    return {a: e for a, e in entries.items() if isinstance(e, dict)} if isinstance(entries, dict) else {}


def looks_like(head: str) -> bool:
    return '"schema_version"' in head and ('"trigger_workflow_run_id"' in head
                                          or '"release_type"' in head)


def _status(entry: Any, where: str) -> str:
    status = entry.get("status") if isinstance(entry, dict) else None
    if status is None:
        return ""
    if status not in STATUSES:
        raise ParseError(f"{where}: unknown status {status!r} (known: {', '.join(STATUSES)})")
    return status


def _variant_name(v: dict) -> str:
    keys = [k for k in ("py", "torch", "jax_ref") if v.get(k)]
    return "-".join(f"{k}{v[k]}" if k == "py" else str(v[k]) for k in keys) or "default"


def parse(data: bytes) -> ParseResult:
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ParseError(f"not valid JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise ParseError("a status document is a JSON object")
    schema = str(doc.get("schema_version", ""))
    if schema not in SCHEMAS:
        raise ParseError(f"status.json schema_version {schema or '(missing)'} is not one this "
                         f"parser knows ({', '.join(SCHEMAS)})")
    run_id = doc.get("trigger_workflow_run_id")
    if not isinstance(run_id, (int, str)) or isinstance(run_id, bool) or not str(run_id):
        raise ParseError("trigger_workflow_run_id is missing")
    summary = doc.get("summary") if isinstance(doc.get("summary"), dict) else {}
    pipelines = doc.get("pipelines") if isinstance(doc.get("pipelines"), dict) else {}
    release = str(doc.get("release_type") or "")
    version = str(doc.get("rocm_version") or "")
    overall = summary.get("overall_status") if isinstance(summary.get("overall_status"), str) else ""
    run = RunRef(ci_system="quartz", repository=REPOSITORY, run_id=str(run_id),
                 attempt=int(doc.get("trigger_run_attempt") or 1)
                 if str(doc.get("trigger_run_attempt") or "1").isdigit() else 1,
                 workflow=f"release-{release}" if release else "release",
                 event=release,
                 conclusion=CONCLUSION.get(str(doc.get("orchestrator_conclusion") or overall), ""),
                 url=f"https://github.com/{REPOSITORY}/actions/runs/{run_id}",
                 created_at=_time(doc.get("created_at")), started_at=_time(doc.get("created_at")),
                 completed_at=_time(doc.get("completed_at")))
    result = ParseResult(format="quartz-status", runs=[run],
                         meta={"rocm_version": version, "release_type": release,
                               "build_date": doc.get("build_date"),
                               "last_updated": doc.get("status_json_last_updated")})
    for platform, plat in summary.items():
        if platform == "overall_status" or not isinstance(plat, dict):
            continue
        arches = [a for a in plat.get("architectures") or [] if isinstance(a, str) and a]
        for comp, framework in COMPONENTS.items():
            detail = pipelines.get(comp) if isinstance(pipelines.get(comp), dict) else {}
            build = (detail.get("build") or {}).get(platform) if isinstance(detail.get("build"), dict) else None
            roll = plat.get(comp) if isinstance(plat.get(comp), dict) else {}
            build_status = _status(build, f"pipelines.{comp}.build.{platform}") or \
                _status(roll.get("build"), f"summary.{platform}.{comp}.build")
            phases = {phase: _entries(detail, phase, platform) for phase in PHASES}
            if not build_status and not any(phases.values()):
                continue  # the component did not run on this platform
            tested = [a for entries in phases.values() for a in entries]
            for arch in arches + sorted({a for a in tested if a not in arches}):
                if build_status:
                    result.jobs.append(JobPart(
                        run=run, job_id=f"{comp}/build/{platform}/{arch}",
                        name=f"TheRock {comp} build ({platform}, {arch})", suite=f"therock-{comp}",
                        hardware=[arch], framework=framework, rocm_version=version[:32],
                        conclusion=CONCLUSION[build_status],
                        url=_run_url(build), started_at=_time((build or {}).get("started_at")),
                        completed_at=_time((build or {}).get("completed_at")), snapshot=True,
                        result=ParseResult(format="quartz-status")))
                for phase, suite in PHASES.items():
                    entry = phases[phase].get(arch)
                    if isinstance(entry, dict):
                        result.jobs.append(_test_job(run, comp, framework, platform, arch, entry,
                                                     version, suite.format(comp=comp), phase))
    natives = pipelines.get("native_packages") if isinstance(pipelines.get("native_packages"), dict) else {}
    for kind, entry in natives.items():
        status = _status(entry, f"pipelines.native_packages.{kind}")
        if status:
            result.jobs.append(JobPart(
                run=run, job_id=f"native_packages/{kind}", name=f"TheRock {kind} packages",
                suite="therock-native-packages", framework="rocm", rocm_version=version[:32],
                conclusion=CONCLUSION[status], url=_run_url(entry),
                started_at=_time(entry.get("started_at")), completed_at=_time(entry.get("completed_at")),
                snapshot=True, result=ParseResult(format="quartz-status")))
    return result


def _run_url(entry: Any) -> str:
    rid = entry.get("run_id") if isinstance(entry, dict) else None
    return f"https://github.com/{REPOSITORY}/actions/runs/{rid}" if rid else ""


def _test_job(run: RunRef, comp: str, framework: str, platform: str, arch: str, entry: dict,
              version: str, suite: str, phase: str) -> JobPart:
    where = f"pipelines.{comp}.{phase}.{platform}.{arch}"
    status = _status(entry, where)
    variants = [v for v in entry.get("variants") or [] if isinstance(v, dict)]
    cells = variants or [entry]
    tests = []
    for i, cell in enumerate(cells):
        s = _status(cell, f"{where}.variants[{i}]" if variants else where)
        if s not in OUTCOME:
            continue  # still running: not a result yet
        name = _variant_name(cell) if variants else "all"
        tests.append(TestRecord(
            classname=f"therock.{comp}.{platform}", name=f"test_{comp}", params=name,
            outcome=OUTCOME[s], suite=suite,
            message=f"{s} (TheRock run {cell.get('run_id') or entry.get('run_id')})"
            if s != "success" else None,
            skip_reason="cancelled" if s == "cancelled" else ("skipped by TheRock" if s == "skipped" else None)))
    return JobPart(run=run, job_id=f"{comp}/{phase}/{platform}/{arch}",
                   name=f"TheRock {comp} {phase.replace('_', ' ')} ({platform}, {arch})", suite=suite, hardware=[arch],
                   framework=framework, rocm_version=version[:32],
                   conclusion=CONCLUSION.get(status, ""), url=_run_url(entry),
                   started_at=_time(entry.get("started_at")),
                   completed_at=_time(entry.get("completed_at")), snapshot=True,
                   result=ParseResult(format="quartz-status", tests=tests))
