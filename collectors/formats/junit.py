"""JUnit XML: pytest (both roots, every version), PyTorch's `<rerun>` reports,
unittest-xml-reporting, Surefire-style flaky/rerun children.

Streaming (`lxml.etree.iterparse`, elements cleared as they are read) so that files of
hundreds of MB parse in bounded memory. DTDs are refused outright: JUnit never needs one,
and refusing them closes XXE and entity-expansion attacks before the parser sees them.
"""
from __future__ import annotations

import re
from typing import BinaryIO

from lxml import etree

from collectors.formats.records import MESSAGE_CAP, ParseError, ParseResult, TestRecord

PARSER_VERSION = "1"
PROLOG_LIMIT = 64 * 1024
_XMLRUNNER_SUFFIX = re.compile(r"-\d{14}$")
_RANK = {"passed": 0, "skipped": 1, "xfailed": 2, "xpassed": 3, "error": 4, "failed": 5}
_RERUN_TAGS = {"rerun", "rerunFailure", "rerunError", "flakyFailure", "flakyError"}


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


def _outcome(elem) -> tuple[str, str | None, str | None, str | None, int]:
    """(outcome, phase, message, skip_reason, reruns) from a testcase's children."""
    outcome, phase, message, reason, reruns = "passed", None, None, None, 0
    for child in elem:
        tag = child.tag
        if not isinstance(tag, str):
            continue
        if tag in _RERUN_TAGS:
            reruns += 1
            continue
        msg = child.get("message")
        if tag == "failure":
            new, new_phase = "failed", "call"
        elif tag == "error":
            kind = child.get("type") or ""
            if kind == "UnexpectedSuccess":
                new, new_phase = "xpassed", "call"
            else:
                new = "error"
                low = (msg or "").lower()
                new_phase = ("setup" if "on setup" in low else "teardown" if "on teardown" in low
                             else "collection" if "collection failure" in low else None)
        elif tag == "skipped":
            kind = (child.get("type") or "").lower()
            if kind in ("pytest.xfail", "xfail") or (msg or "").startswith("expected failure"):
                new, new_phase = "xfailed", "call"
            elif msg == "xfail-marked test passes unexpectedly":
                new, new_phase = "xpassed", "call"
            else:
                new = "skipped"
                new_phase = "collection" if msg == "collection skipped" else "setup"
                reason = msg or (child.text or "").strip() or None
        else:
            continue
        if _RANK[new] > _RANK[outcome]:
            # a failed call followed by a teardown error stays a failure (pytest folds both)
            outcome, phase = new, new_phase
            message = msg if msg is not None else (child.text or "")
    if outcome == "passed" and not reruns:
        status = (elem.get("status") or "").lower()
        if status in ("disabled", "skipped", "notrun"):
            outcome, phase, reason = "skipped", "setup", status
    if message is not None:
        message = message.strip()[:MESSAGE_CAP * 4] or None
    return outcome, phase, message, reason, reruns


def parse(stream: BinaryIO) -> ParseResult:
    """Parse a JUnit XML stream (seekable) into de-duplicated test records."""
    check_prolog(stream.read(PROLOG_LIMIT))
    stream.seek(0)
    result = ParseResult(format="junit")
    by_key: dict[str, TestRecord] = {}
    root_seen = False
    seen = 0
    # end events only: a testcase finds its suite through its parent, which the parser has
    # already built with its attributes; start events would double the callbacks
    context = etree.iterparse(
        stream,
        events=("end",),
        tag=("testsuite", "testsuites", "testcase"),
        huge_tree=True,
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        remove_comments=True,
        remove_pis=True,
    )
    parent, suite = None, ""
    try:
        for _, elem in context:
            if elem.tag == "testcase":
                up = elem.getparent()
                if up is not parent:  # the same proxy while we hold it: one lookup per suite
                    parent = up
                    suite, found = _suite_of(up, result.meta)
                    root_seen = root_seen or found
                _add_case(elem, suite, by_key)
                elem.clear(keep_tail=False)
                seen += 1
                if not seen & 1023:  # drop the cleared siblings read so far, in batches
                    _prune(elem, result.meta)
                continue
            root_seen = True
            if elem.tag == "testsuite":
                _suite_of(elem, result.meta)
                _suite_properties(elem, result.meta)
    except etree.XMLSyntaxError as exc:
        raise ParseError(f"malformed XML: {exc.msg or exc}") from None
    if not root_seen:
        raise ParseError("not a JUnit report: no <testsuite> or <testsuites> element")
    result.tests = list(by_key.values())
    return result


def _suite_of(elem, meta: dict) -> tuple[str, bool]:
    """The name of the innermost `<testsuite>` at or above `elem` (recording the first
    suite's timestamp and host), and whether any JUnit root encloses it."""
    root = False
    while elem is not None:
        tag = elem.tag
        if tag == "testsuite":
            for attr in ("timestamp", "hostname"):
                if attr not in meta and elem.get(attr):
                    meta[attr] = elem.get(attr)
            return _XMLRUNNER_SUFFIX.sub("", elem.get("name") or ""), True
        root = root or tag == "testsuites"
        elem = elem.getparent()
    return "", root


def _prune(elem, meta: dict) -> None:
    """Delete the siblings before `elem` (all processed and cleared), keeping suite
    properties, which come first."""
    parent = elem.getparent()
    if parent is None:
        return
    if len(parent) and parent[0].tag == "properties":
        _properties(parent[0], meta)
    del parent[: parent.index(elem)]


def _suite_properties(elem, meta: dict) -> None:
    props = elem.find("properties")
    if props is not None:
        _properties(props, meta)


def _properties(props, meta: dict) -> None:
    bag = meta.setdefault("properties", {})
    for p in props.iter("property"):
        name = p.get("name")
        if name and len(bag) < 200:
            bag[name] = (p.get("value") or "")[:500]


def _add_case(elem, suite: str, by_key: dict[str, TestRecord]) -> None:
    get = elem.get
    classname = get("classname") or ""
    full = get("name") or ""
    if not full and not classname:
        return
    if len(elem) or get("status"):
        outcome, phase, message, reason, reruns = _outcome(elem)
    else:  # the common case: a childless testcase passed
        outcome, phase, message, reason, reruns = "passed", None, None, None, 0
    t = get("time")
    try:
        duration = float(t) if t else None
    except ValueError:
        duration = None
    key = f"{classname}::{full}" if classname else full
    prev = by_key.get(key)
    if prev is not None:
        if prev.outcome == "failed" and outcome == "error" and phase == "teardown":
            prev.message = prev.message or message  # failed call + teardown error: one failure
            return
        if get("timestamp") is not None and _RANK[prev.outcome] > _RANK[outcome]:
            # unittest-xml-reporting repeats a method for its subtests: the worst one stands
            return
        # a repeated pytest testcase is another attempt (rerunfailures, merged reports): the
        # last one is the result, the earlier ones count as reruns
        reruns += prev.rerun_count + 1
        del by_key[key]
    if "[" in full:
        name, params = split_name(full)
    else:
        name, params = full, None
    by_key[key] = TestRecord(
        classname, name, params, outcome, suite, get("file") or "", phase, duration, reruns,
        message, reason,
    )
