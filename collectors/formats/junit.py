"""JUnit XML: pytest (both roots, every version), PyTorch's `<rerun>` reports,
unittest-xml-reporting, Surefire-style flaky/rerun children.

Identity: `classname::name`; a testcase without a classname is named by the path of the
testsuites around it (`chrome/login::test_submit`), so the same name in sibling suites (a
browser or device matrix, one suite per data set) stays distinct tests. Repeated executions
are reruns only where the format says so: `<rerun>`, `<flakyFailure>`, `<rerunFailure>`,
`<flakyError>`, `<rerunError>` children, and pytest-rerunfailures' repeated testcases in a
pytest report. Any other identity seen twice keeps both executions (the second as `#2`) and
is reported as a warning, never as flakiness.

Streaming: the file is fed to lxml in chunks and read through a parser target, so that
files of hundreds of MB parse in bounded memory and no element tree is built. DTDs are
refused outright: JUnit never needs one, and refusing them closes XXE and entity-expansion
attacks before the parser sees them.
"""
from __future__ import annotations

import re
from typing import BinaryIO

from lxml import etree

from parity.collectors.formats.records import MESSAGE_CAP, ParseError, ParseResult, TestRecord

PARSER_VERSION = "2"
PROLOG_LIMIT = 64 * 1024
_XMLRUNNER_SUFFIX = re.compile(r"-\d{14}$")
_RANK = {"passed": 0, "skipped": 1, "xfailed": 2, "xpassed": 3, "error": 4, "failed": 5}
_RERUN_TAGS = {"rerun", "rerunFailure", "rerunError", "flakyFailure", "flakyError"}
_RESULT_TAGS = {"failure", "error", "skipped"}
CHUNK = 256 * 1024  # bytes fed to the parser at a time
TEXT_CAP = 64 * 1024  # characters of a result child's text kept (a message is cut far shorter)


def check_prolog(head: bytes) -> None:
    """Refuse a DOCTYPE or ENTITY declaration, and a document whose root element does not
    start within the first 64 KiB (where a declaration could otherwise hide)."""
    text = head.decode("latin-1")
    m = re.search(r"<(?![?!])", text)
    prolog = text[: m.start()] if m else text
    if re.search(r"<!DOCTYPE|<!ENTITY", prolog, re.I):
        raise ParseError("XML with a DTD or entity declarations is not accepted")
    if not m:
        raise ParseError("no XML root element in the first 64 KiB")


def split_name(full: str) -> tuple[str, str | None]:
    """pytest's rule: params are everything after the first `[`, minus one trailing `]`."""
    name, bracket, rest = full.partition("[")
    if not bracket:
        return full, None
    return name, rest[:-1] if rest.endswith("]") else rest


def _outcome(children: list[tuple[str, dict, str]], status: str | None, reruns: int
             ) -> tuple[str, str | None, str | None, str | None]:
    """(outcome, phase, message, skip_reason) from a testcase's result children, given as
    (tag, attributes, text) in document order, and its `status` attribute."""
    outcome, phase, message, reason = "passed", None, None, None
    for tag, attrib, text in children:
        msg = attrib.get("message")
        if tag == "failure":
            new, new_phase = "failed", "call"
        elif tag == "error":
            kind = attrib.get("type") or ""
            if kind == "UnexpectedSuccess":
                new, new_phase = "xpassed", "call"
            else:
                new = "error"
                low = (msg or "").lower()
                new_phase = ("setup" if "on setup" in low else "teardown" if "on teardown" in low
                             else "collection" if "collection failure" in low else None)
        else:  # skipped
            kind = (attrib.get("type") or "").lower()
            if kind in ("pytest.xfail", "xfail") or (msg or "").startswith("expected failure"):
                new, new_phase = "xfailed", "call"
            elif msg == "xfail-marked test passes unexpectedly":
                new, new_phase = "xpassed", "call"
            else:
                new = "skipped"
                new_phase = "collection" if msg == "collection skipped" else "setup"
                reason = msg or text.strip() or None
        if _RANK[new] > _RANK[outcome]:
            # a failed call followed by a teardown error stays a failure (pytest folds both)
            outcome, phase = new, new_phase
            message = msg if msg is not None else text
    if outcome == "passed" and not reruns:
        status = (status or "").lower()
        if status in ("disabled", "skipped", "notrun"):
            outcome, phase, reason = "skipped", "setup", status
    if message is not None:
        message = message.strip()[:MESSAGE_CAP * 4] or None
    return outcome, phase, message, reason


def parse(stream: BinaryIO) -> ParseResult:
    """Parse a JUnit XML stream (seekable) into de-duplicated test records."""
    check_prolog(stream.read(PROLOG_LIMIT))
    stream.seek(0)
    result = ParseResult(format="junit")
    reader = _Reader(result.meta)
    parser = etree.XMLParser(target=reader, huge_tree=True, resolve_entities=False,
                             no_network=True, load_dtd=False, remove_comments=True,
                             remove_pis=True)
    try:
        while chunk := stream.read(CHUNK):
            parser.feed(chunk)
        parser.close()
    except etree.XMLSyntaxError as exc:
        raise ParseError(f"malformed XML: {exc.msg or exc}") from None
    if not reader.root_seen:
        raise ParseError("not a JUnit report: no <testsuite> or <testsuites> element")
    result.tests = list(reader.by_key.values())
    return result


class _Reader:
    """An lxml parser target: records are built from start, data and end events, so no
    tree is ever built and memory stays bounded however large the file. Only the direct
    children of a testcase that carry a result are kept, with their leading text (capped);
    `system-out` and the like are skipped unread."""

    def __init__(self, meta: dict):
        self.meta = meta
        self.by_key: dict[str, TestRecord] = {}
        self.root_seen = False
        self.open: list[str] = []  # tags of the open elements outside a testcase
        self.suites: list[str] = []  # names of the open testsuites
        self.case: dict | None = None  # attributes of the open testcase
        self.children: list[list] = []  # [tag, attributes, text] of its result children
        self.reruns = 0
        self.pytest = False  # a pytest report: repeated testcases are rerunfailures' attempts
        self.repeats: dict[str, int] = {}  # identity -> executions kept apart
        self.depth = 0  # depth below the open testcase (1: a direct child)
        self.text: list[str] | None = None  # the open result child's text, while collected
        self.text_size = 0

    def start(self, tag: str, attrib) -> None:
        if self.case is not None:
            self.depth += 1
            self._keep_text()  # a child's text ends at its first sub-element
            if self.depth == 1:
                if tag in _RESULT_TAGS:
                    self.children.append([tag, attrib, ""])
                    self.text, self.text_size = [], 0
                elif tag in _RERUN_TAGS:
                    self.reruns += 1
            return
        if tag == "testcase":
            self.case, self.children, self.reruns, self.depth = attrib, [], 0, 0
            return
        if tag == "testsuite":
            self.root_seen = True
            self.suites.append(_XMLRUNNER_SUFFIX.sub("", attrib.get("name") or ""))
            if attrib.get("name") == "pytest":
                self.pytest = True
            for key in ("timestamp", "hostname"):
                if key not in self.meta and attrib.get(key):
                    self.meta[key] = attrib[key]
        elif tag == "testsuites":
            self.root_seen = True
        elif tag == "property" and self.open[-2:] == ["testsuite", "properties"]:
            bag = self.meta.setdefault("properties", {})
            name = attrib.get("name")
            if name and len(bag) < 200:
                bag[name] = (attrib.get("value") or "")[:500]
        self.open.append(tag)

    def data(self, text: str) -> None:
        if self.text is not None and self.text_size < TEXT_CAP:
            piece = text[:TEXT_CAP - self.text_size]  # the parser may hand over any length
            self.text.append(piece)
            self.text_size += len(piece)

    def end(self, tag: str) -> None:
        if self.case is not None:
            if self.depth == 0:
                self._add_case()
                self.case = None
                return
            self._keep_text()
            self.depth -= 1
            return
        if self.open:
            self.open.pop()
        if tag == "testsuite" and self.suites:
            self.suites.pop()

    def close(self) -> None:  # lxml requires it; the records are read from `by_key`
        return None

    def _keep_text(self) -> None:
        """Store the text collected for the open result child, and stop collecting."""
        if self.text is not None:
            self.children[-1][2] = "".join(self.text)
            self.text = None

    def _add_case(self) -> None:
        get = self.case.get
        classname = get("classname") or ""
        full = get("name") or ""
        if not full and not classname:
            return
        if not classname:  # the enclosing suites name it: a matrix keeps its cells apart
            classname = "/".join(s for s in self.suites if s)
        status, reruns = get("status"), self.reruns
        if self.children or reruns or status:
            outcome, phase, message, reason = _outcome(self.children, status, reruns)
        else:  # the common case: a testcase with no result child passed
            outcome, phase, message, reason = "passed", None, None, None
        t = get("time")
        try:
            duration = float(t) if t else None
        except ValueError:
            duration = None
        key = f"{classname}::{full}" if classname else full
        by_key = self.by_key
        prev = by_key.get(key)
        if prev is not None:
            if prev.outcome == "failed" and outcome == "error" and phase == "teardown":
                prev.message = prev.message or message  # failed call + teardown error: one
                return
            if get("timestamp") is not None and _RANK[prev.outcome] > _RANK[outcome]:
                # unittest-xml-reporting repeats a method for its subtests: the worst stands
                return
            if get("timestamp") is not None:
                del by_key[key]  # ... and a later, worse subtest replaces the earlier
            elif self.pytest and prev.classname == (get("classname") or ""):
                # pytest-rerunfailures writes each attempt as a testcase: the last one is
                # the result, the earlier ones count as its reruns
                reruns += prev.rerun_count + 1
                del by_key[key]
            else:  # the same identity twice with no rerun marker: two executions, a warning
                n = self.repeats[key] = self.repeats.get(key, 1) + 1
                self.meta.setdefault("warnings", []).append(
                    f"testcase {key} appears more than once with no rerun marker; "
                    f"execution {n} is kept as {key}#{n}, not counted as a rerun")
                full = f"{full}#{n}"
                key = f"{key}#{n}"
        if "[" in full:
            name, params = split_name(full)
        else:
            name, params = full, None
        suite = self.suites[-1] if self.suites else ""
        by_key[key] = TestRecord(
            classname, name, params, outcome, suite, get("file") or "", phase, duration, reruns,
            message, reason,
        )
