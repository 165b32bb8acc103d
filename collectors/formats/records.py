"""The plain records every parser returns; `collectors.ingest` turns them into rows."""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Callable

OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
MESSAGE_CAP = 500  # characters of the first message line kept per result


class ParseError(ValueError):
    """The input is not a valid file of the format being read; the text says why."""


class NotRecognised(ParseError):
    """No parser claims the file: in a directory or an archive it is skipped, not an error."""


@dataclass(slots=True)
class TestRecord:
    classname: str
    name: str  # without params
    params: str | None
    outcome: str
    suite: str = ""
    file: str = ""
    phase: str | None = None
    duration_s: float | None = None
    rerun_count: int = 0
    message: str | None = None
    skip_reason: str | None = None
    hardware: str | None = None  # a per-record hardware hint (rare: dashboard exports)

    @property
    def test_key(self) -> str:
        full = self.name if self.params is None else f"{self.name}[{self.params}]"
        return f"{self.classname}::{full}" if self.classname else full

    @property
    def group(self) -> str:
        return self.file or self.classname or self.suite


@dataclass(slots=True)
class SessionTotals:
    """Counts from a pytest console summary line, for logs that name only some tests."""

    label: str
    counts: dict[str, int]
    duration_s: float | None = None


@dataclass(slots=True)
class BenchmarkRecord:
    benchmark: str
    metric: str
    value: float | None
    model: str = ""
    unit: str = ""
    direction: str = "none"
    statistic: str = ""
    samples: list[float] | None = None
    status: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    record_no: int = 0
    hardware: str | None = None


@dataclass(slots=True)
class AccuracyRecord:
    task: str
    metric: str
    value: float | None
    filter: str = "none"
    model: str = ""
    stderr: float | None = None
    n: int | None = None
    higher_is_better: bool = True
    is_group: bool = False
    parent_group: str = ""
    threshold: float | None = None
    gate_passed: bool | None = None
    config: dict[str, Any] = field(default_factory=dict)
    record_no: int = 0
    hardware: str | None = None


@dataclass
class RunRef:
    """A CI run a document reports on (a Buildkite build another tool parsed, a ROCm
    nightly): it becomes a run of the store under its own CI system and id."""

    ci_system: str
    repository: str
    run_id: str
    attempt: int = 1
    workflow: str = ""
    commit: str = ""
    branch: str = ""
    event: str = ""
    conclusion: str = ""
    url: str = ""
    created_at: datetime | None = None
    started_at: datetime | None = None
    completed_at: datetime | None = None


@dataclass
class JobPart:
    """One job of a document that covers many (a whole nightly in one file): its run, its
    identity, hardware and outcome, and its results. A job with no results is a job-level
    result: its conclusion is all there is. `snapshot` jobs are replaced, not added to,
    when a newer version of the document arrives (a status file updated through the night)."""

    run: RunRef
    job_id: str
    name: str
    result: "ParseResult"
    suite: str = ""
    hardware: list[str] = field(default_factory=list)
    framework: str | None = None
    framework_version: str = ""
    rocm_version: str = ""
    conclusion: str = ""
    url: str = ""
    started_at: datetime | None = None
    completed_at: datetime | None = None
    snapshot: bool = False


@dataclass
class ParseResult:
    format: str
    tests: list[TestRecord] = field(default_factory=list)
    sessions: list[SessionTotals] = field(default_factory=list)
    benchmarks: list[BenchmarkRecord] = field(default_factory=list)
    accuracy: list[AccuracyRecord] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)  # timestamp, hostname, commit, …
    runs: list[RunRef] = field(default_factory=list)  # runs a multi-job document describes
    jobs: list[JobPart] = field(default_factory=list)  # that document's jobs

    @property
    def record_count(self) -> int:
        return (len(self.tests) + len(self.benchmarks) + len(self.accuracy) + len(self.sessions)
                + len(self.runs) + sum(max(j.result.record_count, 1) for j in self.jobs))


def parse_time(value: Any) -> datetime | None:
    """A naive-UTC datetime from ISO text, unix seconds, or vLLM's `YYYYmmdd-HHMMSS`."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value) or not 0 < value < 32503680000:
            return None
        dt = datetime.fromtimestamp(float(value), timezone.utc)
    elif isinstance(value, str):
        text = value.strip().replace("Z", "+00:00")
        try:
            dt = datetime.fromisoformat(text)
        except ValueError:
            try:
                dt = datetime.strptime(text, "%Y%m%d-%H%M%S")
            except ValueError:
                return None
    else:
        return None
    if dt.tzinfo is not None:
        dt = dt.astimezone(timezone.utc).replace(tzinfo=None)
    return dt


def merge_repeats(tests: list[TestRecord]) -> list[TestRecord]:
    """One record per test key. A test reported again is another attempt (a console log's
    later session, merged reports): the last one is the result and the earlier ones count
    as its reruns, the rule the JUnit parser applies to repeated testcases."""
    by_key: dict[str, TestRecord] = {}
    for t in tests:
        prev = by_key.pop(t.test_key, None)
        if prev is not None:
            t = replace(t, rerun_count=t.rerun_count + prev.rerun_count + 1)
        by_key[t.test_key] = t
    return list(by_key.values())


def first_line(text: str | None) -> str | None:
    """The first non-empty line of a message, capped; None when there is none."""
    if not text:
        return None
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line[:MESSAGE_CAP]
    return None


_NON_FINITE = {"nan": math.nan, "inf": math.inf, "+inf": math.inf, "-inf": -math.inf,
               "infinity": math.inf, "+infinity": math.inf, "-infinity": -math.inf}


def number(value: Any, where: str, *, allow_none: bool = True,
           warn: Callable[[str], None] | None = None) -> float | None:
    """A metric value: a finite float, from a JSON number or a numeric string.

    The rule for non-standard numbers, everywhere: a *configuration* value may be infinite
    (a request rate of `inf` sends everything at once; `config_value` keeps it as "inf"),
    a *metric* may not. A metric that is `NaN`, `Infinity` or such a string is stored as
    missing, with a warning naming the record and key (`warn`), and the rest of the file is
    kept; without `warn` it is a ParseError. Text that is no number at all, lists and
    booleans are a ParseError naming `where`."""
    if value is None and allow_none:
        return None
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _NON_FINITE:
            value = _NON_FINITE[text]
        else:
            try:
                value = float(text)
            except ValueError:
                raise ParseError(f"{where}: expected a number, got text {value[:40]!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParseError(f"{where}: expected a number, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value):
        if warn is not None:
            warn(f"{where}: {value} is not a finite number; stored as missing")
            return None
        raise ParseError(f"{where}: value is not finite ({value})")
    return value


def config_value(value: Any) -> Any:
    """A configuration value as stored: non-finite floats (and their spellings) as text
    ("inf", "-inf", "nan"), everything else as it is."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, str) and value.strip().lower() in _NON_FINITE:
        v = _NON_FINITE[value.strip().lower()]
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return value


def optional_int(value: Any) -> int | None:
    """An int from a config value that may be a number or a numeric string."""
    if value is None or isinstance(value, bool):
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return int(f) if math.isfinite(f) and f == int(f) else None
