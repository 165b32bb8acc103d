"""The vLLM CI dashboard's published results (AndreasKaratzas/vllm-ci-dashboard, refreshed
every 30 minutes): per-test rows parsed from vLLM's Buildkite `ci` and `amd-ci` nightlies
(`data/vllm/ci/test_results/<date>_{amd,upstream}.jsonl`) and per-build totals
(`data/vllm/ci/ci_health.json`).

Rows are stored under `ci_system = vllm-ci-dashboard` (its parse of the build, kept apart
from a direct Buildkite sync of the same build), one job per Buildkite job, with the
dashboard's aggregate stand-ins stored as what they are:
- `__job_level__`: the job's state, a job-level result with no test;
- `__passed__ (N)`, `__skipped__ (N)`, `__xfailed__ (N)`, `__unidentified_failures__ (N)`,
  `__unidentified_errors__ (N)`: counts of tests the log did not name, added to the job's
  session totals, never N invented tests.
Named tests are tests; every job's totals are its named tests plus its counts. Hardware
and suite come from the job name (`mi325_1: …` prefix, `(H100)` suffix) as for a direct
Buildkite sync. `ci_health.json` gives each build its commit, branch, state, link and time.
A row that cannot be read (bad JSON, no job name) is reported with its line number and the
rest are kept, unless no row at all can be read."""
from __future__ import annotations

import json
import re
from typing import Any

from parity.collectors.formats.junit import split_name
from parity.collectors.formats.records import (MESSAGE_CAP, OUTCOMES, JobPart, NotRecognised,
                                               ParseError, ParseResult, RunRef, SessionTotals,
                                               TestRecord)
from parity.collectors.formats.records import parse_time as _time
from parity.collectors.identity import job_hardware_names

PARSER_VERSION = "1"
CI = "vllm-ci-dashboard"
ORG = "vllm"
_AGGREGATE = re.compile(r"^__(passed|skipped|xfailed|xpassed|unidentified_failures|"
                        r"unidentified_errors|failed|errors?)__(?:\s*\((\d+)\))?$")
_COUNT = {"passed": "passed", "skipped": "skipped", "xfailed": "xfailed", "xpassed": "xpassed",
          "unidentified_failures": "failed", "failed": "failed", "unidentified_errors": "error",
          "error": "error", "errors": "error"}
_BUILD_URL = re.compile(r"buildkite\.com/([^/]+)/([^/]+)/builds/(\d+)")
PIPELINES = {"amd": "amd-ci", "upstream": "ci"}  # ci_health's names for the two pipelines


def looks_like_rows(head: str) -> bool:
    first = head.lstrip().split("\n", 1)[0]
    return first.startswith("{") and '"build_number"' in first and '"job_name"' in first \
        and '"status"' in first


def looks_like_health(head: str) -> bool:
    return '"latest_build"' in head and '"builds"' in head and ('"amd"' in head or
                                                                 '"upstream"' in head)


def _run(pipeline: str, number: str, **fields) -> RunRef:
    return RunRef(ci_system=CI, repository=f"{ORG}/{pipeline}", run_id=number, workflow=pipeline,
                  url=f"https://buildkite.com/{ORG}/{pipeline}/builds/{number}", **fields)


def parse_rows(data: bytes) -> ParseResult:
    """The per-test JSONL of one pipeline's nightly."""
    result = ParseResult(format="vllm-ci-results")
    jobs: dict[tuple[str, str], dict] = {}
    problems: list[str] = []
    read = 0
    for no, raw in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except ValueError as exc:
            problems.append(f"line {no}: not valid JSON ({exc.msg})")
            continue
        if not isinstance(row, dict):
            problems.append(f"line {no}: not a JSON object")
            continue
        name = row.get("job_name")
        pipeline, number = row.get("pipeline"), row.get("build_number")
        if not isinstance(name, str) or not name.strip():
            problems.append(f"line {no}: no job_name")
            continue
        if not isinstance(pipeline, str) or not pipeline or not isinstance(number, (int, str)):
            problems.append(f"line {no}: no pipeline or build_number")
            continue
        read += 1
        key = (pipeline, str(number))
        job_id = str(row.get("job_id") or name)
        job = jobs.setdefault((*key, job_id), {"name": name, "tests": [], "counts": {},
                                               "state": "", "date": row.get("date")})
        test = str(row.get("name") or "")
        status = str(row.get("status") or "")
        message = str(row.get("failure_message") or "")[:MESSAGE_CAP] or None
        if test == "__job_level__":
            job["state"] = status
            continue
        agg = _AGGREGATE.match(test)
        if agg:
            n = int(agg.group(2) or 1)
            outcome = _COUNT.get(agg.group(1), "failed")
            job["counts"][outcome] = job["counts"].get(outcome, 0) + n
            continue
        if status not in OUTCOMES:
            problems.append(f"line {no}: unknown status {status!r}")
            continue
        classname = str(row.get("classname") or "")
        base, params = split_name(test)
        job["tests"].append(TestRecord(
            classname="" if classname == name else classname, name=base, params=params,
            outcome=status, duration_s=row.get("duration_secs")
            if isinstance(row.get("duration_secs"), (int, float)) else None,
            message=message if status != "skipped" else None,
            skip_reason=message if status == "skipped" else None))
        job["counts"][status] = job["counts"].get(status, 0) + 1
    if not read:
        raise NotRecognised("no row with a job name and build number" +
                            (f" ({problems[0]})" if problems else ""))
    runs = {}
    for (pipeline, number, job_id), job in jobs.items():
        run = runs.setdefault((pipeline, number), _run(pipeline, number))
        part = ParseResult(format="vllm-ci-results", tests=job["tests"])
        if job["counts"]:
            part.sessions.append(SessionTotals(label="log:published", counts=job["counts"]))
        result.jobs.append(JobPart(
            run=run, job_id=job_id, name=job["name"], hardware=job_hardware_names(
                job["name"], ""), framework="vllm", conclusion=job["state"] or
            ("failed" if job["counts"].get("failed") or job["counts"].get("error") else ""),
            url=f"{run.url}#{job_id}", result=part))
    result.meta["problems"] = problems
    return result


def parse_health(data: bytes) -> ParseResult:
    """`ci_health.json`: every build it lists, with its commit, branch, state, link, time."""
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ParseError(f"not valid JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise ParseError("ci_health.json is a JSON object")
    result = ParseResult(format="vllm-ci-health")
    seen = set()
    for side in ("amd", "upstream"):
        section = doc.get(side) if isinstance(doc.get(side), dict) else {}
        builds = [b for b in section.get("builds") or [] if isinstance(b, dict)]
        if isinstance(section.get("latest_build"), dict):
            builds.append(section["latest_build"])
        for b in builds:
            number = b.get("build_number")
            if not isinstance(number, (int, str)) or isinstance(number, bool):
                continue
            m = _BUILD_URL.search(str(b.get("build_url") or ""))
            pipeline = m.group(2) if m else PIPELINES.get(str(b.get("pipeline")), str(b.get("pipeline") or side))
            key = (pipeline, str(number))
            if key in seen:
                continue
            seen.add(key)
            run = _run(pipeline, str(number), commit=str(b.get("commit") or "")[:64],
                       branch=str(b.get("branch") or ""), conclusion=str(b.get("state") or ""),
                       created_at=_time(b.get("created_at")))
            if m:
                run.url = f"https://{m.group(0)}"
            result.runs.append(run)
    if not result.runs:
        raise ParseError("ci_health.json lists no build")
    result.meta["generated_at"] = doc.get("generated_at")
    return result
