"""pytest-json-report output (`--json-report`): per-test stage outcomes recover what the
top-level outcome hides (a failed call plus a teardown error is reported as `error`)."""
from __future__ import annotations

from typing import Any

from parity.collectors.formats import jsontext
from parity.collectors.formats.junit import split_name
from parity.collectors.formats.records import ParseError, ParseResult, TestRecord, first_line

PARSER_VERSION = "1"
_KNOWN = {"passed", "failed", "error", "skipped", "xfailed", "xpassed"}


def looks_like(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("tests"), list) and "summary" in obj


def mangle(nodeid: str) -> tuple[str, str, str]:
    """pytest's `mangle_test_address`: nodeid -> (file, classname, name-with-params)."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    file = names[0]
    names[0] = file.replace("/", ".")
    if names[0].endswith(".py"):
        names[0] = names[0][:-3]
    names[-1] += bracket + params
    return file, ".".join(names[:-1]), names[-1]


def _stage(test: dict, name: str) -> dict:
    stage = test.get(name)
    return stage if isinstance(stage, dict) else {}


def parse(data: bytes) -> ParseResult:
    obj = jsontext.loads(jsontext.decode(data))
    if not looks_like(obj):
        raise ParseError("not a pytest-json-report file: no 'tests' list and 'summary'")
    result = ParseResult(format="pytest-json")
    if isinstance(obj.get("created"), (int, float)):
        result.meta["timestamp"] = float(obj["created"])
    for i, test in enumerate(obj["tests"]):
        if not isinstance(test, dict) or not isinstance(test.get("nodeid"), str):
            raise ParseError(f"tests[{i}]: expected an object with a string 'nodeid'")
        file, classname, full = mangle(test["nodeid"])
        name, params = split_name(full)
        outcome = test.get("outcome")
        setup, call, teardown = (_stage(test, s) for s in ("setup", "call", "teardown"))
        phase, reruns = None, 0
        if outcome == "rerun":
            outcome, reruns = "passed", 1  # final attempt passed; the exact count is not kept
        if outcome == "error":
            if call.get("outcome") == "failed":
                outcome, phase = "failed", "call"
            elif setup.get("outcome") == "failed":
                phase = "setup"
            elif teardown.get("outcome") == "failed":
                phase = "teardown"
        elif outcome == "failed":
            phase = "call"
        if outcome not in _KNOWN:
            outcome = "error"
        crash = next((s.get("crash") for s in (call, setup, teardown)
                      if isinstance(s.get("crash"), dict)), None)
        message = first_line(crash.get("message")) if crash else None
        reason = None
        if outcome == "skipped":
            longrepr = setup.get("longrepr") or call.get("longrepr")
            if isinstance(longrepr, str):
                reason = longrepr.rsplit("Skipped: ", 1)[-1].strip("')\" ") or longrepr
            reason = reason or message
        duration = sum(float(s.get("duration") or 0) for s in (setup, call, teardown)
                       if isinstance(s.get("duration"), (int, float)))
        result.tests.append(TestRecord(
            classname=classname, name=name, params=params, outcome=outcome, suite="pytest",
            file=file, phase=phase, duration_s=duration, rerun_count=reruns, message=message,
            skip_reason=reason))
    return result
