"""pytest console output, for jobs that upload no report: the `short test summary info`
block (per-test FAILED/ERROR/XPASS/XFAIL/PASSED lines) and the final counts line of every
pytest session in the log. ANSI colours and CI timestamps (GitHub's leading ISO stamp,
Buildkite's `_bk;t=…` markers and `[…Z]` stamps) are stripped first. Lines that vLLM's AMD
runner prefixes with `>>Shard N: ` (eight pytest processes writing to one log at once) are
read as one log per shard, so interleaved summaries stay apart."""
from __future__ import annotations

import re
from typing import Iterable

from parity.collectors.formats.junit import split_name
from parity.collectors.formats.pytest_json import mangle
from parity.collectors.formats.records import (
    MESSAGE_CAP,
    NotRecognised,
    ParseResult,
    SessionTotals,
    TestRecord,
)

PARSER_VERSION = "2"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b?_bk;t=\d+\x07?")
# the same for a whole text, in passes a regex can search for by their literal start
_CSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_BK = re.compile(r"_bk;t=\d+\x07?")
_TIMESTAMP = re.compile(r"^(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z |"
                        r"\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z\] ?)")
_SHARD = re.compile(r"^>>Shard (\d+): ?")
_SUMMARY_HEADER = re.compile(r"^=+ short test summary info =+$")
_SECTION = re.compile(r"^=+ .* =+$")
_FINAL = re.compile(
    r"^=*\s*((?:\d+ [a-z][a-z ]*?(?:, )?)+|no tests ran) in ([\d.]+)(?:s| seconds)"
    r"(?: \(([\d:]+)\))?\s*=*$")
_PART = re.compile(r"(\d+) ([a-z][a-z ]*)")
_LINE = re.compile(r"^(PASSED|FAILED|ERROR|XFAIL|XPASS|SKIPPED|RERUN)\s+(.*)$")
_OUTCOME = {"PASSED": "passed", "FAILED": "failed", "ERROR": "error", "XFAIL": "xfailed",
            "XPASS": "xpassed"}
_COUNT_KEYS = {"failed": "failed", "passed": "passed", "skipped": "skipped",
               "deselected": "deselected", "xfailed": "xfailed", "xpassed": "xpassed",
               "error": "error", "errors": "error", "rerun": "rerun", "warning": "warnings",
               "warnings": "warnings"}
_COMMAND = re.compile(r"(?:^|\s)(?:python\d?(?:\.\d+)? -m )?pytest(?:\s|$)")


def clean(line: str) -> str:
    return _TIMESTAMP.sub("", _ANSI.sub("", line)).rstrip("\r\n")


_TIMESTAMPS = re.compile(_TIMESTAMP.pattern, re.M)


def clean_text(text: str) -> str:
    """`clean` for a whole log at once (a regex pass over the text is several times faster
    than one per line)."""
    if "\x1b" in text:
        text = _CSI.sub("", text)
    if "_bk;t=" in text:
        text = _BK.sub("", text)
    return _TIMESTAMPS.sub("", text.replace("\x1b", "")).replace("\r\n", "\n")


def looks_like(head: str) -> bool:
    return ("short test summary info" in head or "test session starts" in head
            or bool(re.search(r"\d+ (passed|failed)[^\n]* in [\d.]+s", head)))


def parse_lines(lines: Iterable[str], cleaned: bool = False) -> ParseResult:
    """Every pytest session of a log; a log of `>>Shard N: ` lines is read shard by shard."""
    plain: list[str] = []
    shards: dict[int, list[str]] = {}
    for raw in lines:
        line = raw if cleaned else clean(raw)
        m = _SHARD.match(line)
        if m:
            shards.setdefault(int(m.group(1)), []).append(line[m.end():])
        else:
            plain.append(line)
    if not shards:
        return _parse_clean(plain, "")
    result = ParseResult(format="pytest-log")
    for number, shard in sorted(shards.items()):
        try:
            part = _parse_clean(shard, f"shard {number} ")
        except NotRecognised:
            continue
        result.tests.extend(part.tests)
        result.sessions.extend(part.sessions)
    try:
        outside = _parse_clean(plain, "")
        result.tests.extend(outside.tests)
        result.sessions.extend(outside.sessions)
    except NotRecognised:
        pass
    if not result.sessions and not result.tests:
        raise NotRecognised("no pytest summary found in log")
    return result


def _parse_clean(lines: Iterable[str], prefix: str) -> ParseResult:
    result = ParseResult(format="pytest-log")
    session = 0
    command = ""
    in_summary = False
    by_key: dict[str, TestRecord] = {}
    current: TestRecord | None = None
    for line in lines:
        stripped = line.strip()
        if "pytest" in stripped and _COMMAND.search(stripped) and \
                not stripped.startswith(("FAILED", "ERROR")) and "test session starts" not in stripped:
            command = stripped[:200]
        if stripped.startswith("=") and _SUMMARY_HEADER.match(stripped):
            in_summary, current = True, None
            continue
        # a counts line holds " in <seconds>": the cheap test spares the regex most lines
        final = _FINAL.match(stripped) if " in " in stripped else None
        if final:
            session += 1
            counts: dict[str, int] = {}
            if final.group(1) != "no tests ran":
                for n, word in _PART.findall(final.group(1)):
                    key = _COUNT_KEYS.get(word.strip())
                    if key:
                        counts[key] = counts.get(key, 0) + int(n)
            label = f"log:{prefix}{session}" + (f" {command}" if command else "")
            for rec in by_key.values():
                rec.suite = label
            result.tests.extend(by_key.values())
            by_key, current, in_summary = {}, None, False
            result.sessions.append(SessionTotals(label=label, counts=counts,
                                                 duration_s=float(final.group(2))))
            continue
        if not in_summary:
            continue
        if _SECTION.match(stripped):
            in_summary, current = False, None
            continue
        m = _LINE.match(stripped)
        if not m:
            if current is not None and stripped and current.message and \
                    len(current.message) < MESSAGE_CAP:
                pass  # CI=true prints untruncated multi-line messages; the first line is kept
            continue
        word, rest = m.groups()
        if word in ("SKIPPED", "RERUN"):
            current = None  # folded skips name no test; reruns show in the counts line
            continue
        nodeid, _, message = rest.partition(" - ")
        nodeid = nodeid.strip()
        if word == "XFAIL" and nodeid.startswith("at setup of "):
            nodeid = nodeid[len("at setup of "):]
        if not nodeid:
            continue
        file, classname, full = mangle(nodeid)
        name, params = split_name(full)
        outcome = _OUTCOME[word]
        key = f"{classname}::{full}"
        prev = by_key.get(key)
        if prev is not None:  # FAILED + ERROR (teardown) or PASSED + ERROR: one test
            if prev.outcome == "failed":
                continue
            if outcome == "error" and prev.outcome == "passed":
                prev.outcome, prev.phase, prev.message = "error", "teardown", message[:MESSAGE_CAP]
                continue
        current = TestRecord(classname=classname, name=name, params=params, outcome=outcome,
                             file=file, phase="call" if outcome == "failed" else None,
                             message=message.strip()[:MESSAGE_CAP] or None)
        by_key[key] = current
    if by_key:  # a summary block without a final line (log cut short)
        label = f"log:{prefix}{session + 1}" + (f" {command}" if command else "")
        for rec in by_key.values():
            rec.suite = label
        result.tests.extend(by_key.values())
    if not result.sessions and not result.tests:
        raise NotRecognised("no pytest summary found in log")
    return result


def parse(data: bytes) -> ParseResult:
    text = data.decode("utf-8", errors="replace")  # logs mix encodings; never reject for it
    return _separate_repeats(parse_lines(clean_text(text).splitlines(), cleaned=True))


def _separate_repeats(result: ParseResult) -> ParseResult:
    """A node id named again in a later session is a rerun only when it had failed (a retry
    of the failure, which the writer counts as a rerun); one that had passed was run again
    on purpose, so it is kept as another execution (`#2`) with a warning, never as flaky."""
    seen: dict[str, tuple[str, int]] = {}
    for t in result.tests:
        key = t.test_key
        if key not in seen:
            seen[key] = (t.outcome, 1)
            continue
        earlier, n = seen[key]
        if earlier in ("failed", "error"):
            seen[key] = (t.outcome, n)
            continue
        n += 1
        seen[key] = (earlier, n)
        t.params = f"{t.params}#{n}" if t.params is not None else None
        if t.params is None:
            t.name = f"{t.name}#{n}"
        result.meta.setdefault("warnings", []).append(
            f"{key} is reported again in a later session after it {earlier}; execution {n} "
            f"is kept apart, not counted as a rerun")
    return result
