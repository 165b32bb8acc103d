"""Alerts, pure: which rules fire now, from the views' frames.

Rules are data (`alert_rules.toml`, overridable); each fires on an AMD subject (a test, a
lane, a series, a runner pool) with a priority and its evidence. An alert's fingerprint is a
stable hash of its rule and subject, so recomputing on the same store gives the same alerts
and an issue can be found again whatever its title became."""
from __future__ import annotations

import functools
import hashlib
import json
import tomllib
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from parity.db.models import TEST_ALERT_RULES as TEST_RULES  # one list, shared with the collectors

RULES_FILE = Path(__file__).with_name("alert_rules.toml")
PRIORITIES = ("P1", "P2", "P3")
COLUMNS = ["fingerprint", "rule", "priority", "framework", "hardware", "subject", "since",
           "evidence", "url"]


class RulesError(ValueError):
    """A rules file that cannot be used; the text names the file and the rule."""


def load_rules(path: str | Path | None = None) -> dict[str, dict]:
    p = Path(path) if path else RULES_FILE
    try:
        rules = tomllib.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise RulesError(f"{p}: {exc}") from None
    known = {"amd_only_failure", "both_vendors_failing", "no_tests", "missing_gate", "stale_lane",
             "perf_regression", "accuracy_cliff", "runners_offline", "queue_p90"}
    for name, rule in rules.items():
        if name not in known:
            raise RulesError(f"{p}: unknown rule {name!r} (known: {', '.join(sorted(known))})")
        if not isinstance(rule, dict) or rule.get("priority") not in PRIORITIES:
            raise RulesError(f"{p}: rule {name!r} needs priority = one of {', '.join(PRIORITIES)}")
        above = rule.get("group_above", 0)
        if type(above) is not int or above < 0:
            raise RulesError(f"{p}: rule {name!r}: group_above must be a whole number >= 0 "
                             f"(0: never group)")
    return rules


def fingerprint(rule: str, framework: str, hardware: str, subject: str) -> str:
    return hashlib.sha256(f"{rule}|{framework}|{hardware}|{subject}".encode()).hexdigest()[:20]


def _row(rule, rules, framework, hardware, subject, since, evidence: dict, url="") -> dict:
    """An alert row, its evidence as JSON text."""
    return dict(fingerprint=fingerprint(rule, framework, hardware, subject), rule=rule,
                priority=rules[rule]["priority"], framework=framework, hardware=hardware,
                subject=subject, since=since, evidence=_json(evidence), url=url or "")


# json.dumps(evidence, sort_keys=True, default=str), without making an encoder per row
_json = json.JSONEncoder(sort_keys=True, default=str).encode


def _evidence(row: dict) -> dict:
    ev = row["evidence"]
    return ev if isinstance(ev, dict) else json.loads(ev or "{}")


def evaluate(rules: dict, *, failures: pd.DataFrame, matrix: pd.DataFrame,
             coverage: pd.DataFrame, findings: pd.DataFrame, fleet: pd.DataFrame,
             groups: set[tuple[str, str, str, str]] = frozenset()) -> pd.DataFrame:
    """The alerts that fire, one row each: `failures` is amd_only_failures, `matrix`
    test_matrix (latest), `coverage` coverage, `findings` regressions, `fleet` fleet.
    `groups`: the (rule, framework, hardware, file) of file alerts on record, which keep
    gathering their file's failing tests whatever their number (see `group`)."""
    rows: list[dict] = []
    if "amd_only_failure" in rules and not failures.empty:
        f = failures[_fires(failures, rules["amd_only_failure"])]
        # thousands of failing tests at real volume: column lists, not a tuple per row, and
        # a row made only of a test alerted alone (`_by_file`); the times as the standard
        # library's, as numpy lists them (a pandas Timestamp each: 5.0 -> 0.4 ms for the
        # 50M store's 4,497 failing tests)
        fw, hw, key, since, streak, runs, ref, message = (
            f[c].to_numpy().tolist() if c == "first_failing" else f[c].tolist()
            for c in ("framework", "amd_hardware", "parity_key", "first_failing", "streak",
                      "runs", "nvidia_hardware", "last_message"))
        rows += _by_file(
            "amd_only_failure", rules, groups, fw, hw, key, since, reference=ref.__getitem__,
            streak=lambda i: int(streak[i]),
            alone=lambda i: _row("amd_only_failure", rules, fw[i], hw[i], key[i], since[i],
                                 {"streak": int(streak[i]), "runs": int(runs[i]),
                                  "reference": ref[i], "last_message": message[i]}))
    if "both_vendors_failing" in rules and not matrix.empty and "quadrant" in matrix:
        both = matrix[matrix["quadrant"].astype(str).str.contains("both fail")]
        fw, hw, key, ref = (both[c].tolist() for c in (
            "framework", "amd_hardware", "parity_key", "nvidia_hardware"))
        rows += _by_file(
            "both_vendors_failing", rules, groups, fw, hw, key, [None] * len(key),
            reference=ref.__getitem__, streak=None,
            alone=lambda i: _row("both_vendors_failing", rules, fw[i], hw[i], key[i], None,
                                 {"reference": ref[i]}))
    findings_map = {"builds but runs no tests": "no_tests", "no accuracy gate": "missing_gate",
                    "stale": "stale_lane"}
    if not coverage.empty:
        for c in coverage.itertuples():
            rule = findings_map.get(c.finding)
            if rule not in rules or not c.hardware:
                continue
            if rule == "stale_lane" and not _stale_enough(c.detail, rules[rule]):
                continue
            subject = c.suite or c.finding
            rows.append(_row(rule, rules, c.framework, c.hardware, subject, c.last_run,
                             {"finding": c.finding, "detail": c.detail}))
    # the findings and the pools are a few rows each: filtered as Python values (a pandas
    # filter of a few rows costs about half a millisecond, and these were ten of them)
    amd = [f for f in findings.to_dict("records") if f["vendor"] == "amd"]
    if "perf_regression" in rules:
        effect = float(rules["perf_regression"].get("min_effect", 0.0))
        for f in amd:
            if f["status"] == "regression" and f["kind"] == "performance" \
                    and abs(f["size"]) >= effect:
                rows.append(_row("perf_regression", rules, f["framework"], f["hardware"],
                                 f["subject"], f["when"],
                                 {"size": f["size"], "before": f["before"],
                                  "after": f["after"], "commit": f["commit"]}, f["url"]))
    if "accuracy_cliff" in rules:
        for f in amd:
            if f["status"] in ("cliff", "drop"):
                rows.append(_row("accuracy_cliff", rules, f["framework"], f["hardware"],
                                 f["subject"], f["when"],
                                 {"status": f["status"], "detail": f["detail"]}, f["url"]))
    pools = [p for p in fleet.to_dict("records") if p["vendor"] == "amd"]
    if "runners_offline" in rules:
        for p in pools:
            if p["runners"] > 0 and p["online"] == 0:
                rows.append(_row("runners_offline", rules, "", p["hardware"], "runner pool",
                                 p["last_seen"], {"runners": int(p["runners"]),
                                                  "offline": int(p["offline"])}))
    if "queue_p90" in rules:
        limit = float(rules["queue_p90"].get("minutes", 60))
        for p in pools:
            if p["queue_p90_min"] > limit:
                rows.append(_row("queue_p90", rules, "", p["hardware"], "queue time",
                                 p["last_seen"], {"queue_p90_min": p["queue_p90_min"],
                                                  "limit_min": limit}))
    # the first row of each fingerprint, by priority, rule, framework, hardware and subject
    # (a missing text last), sorted before the frame is made: no two rows left share them
    first: dict[str, dict] = {}
    for r in rows:
        first.setdefault(r["fingerprint"], r)
    rank = {p: i for i, p in enumerate(PRIORITIES)}
    texts = ("rule", "framework", "hardware", "subject")
    rows = list(first.values())
    if all(isinstance(r[c], str) for r in rows for c in texts):  # as ever: no text missing
        # the texts themselves as the key (thousands of alerts: 5.2 -> 2.1 ms)
        key = lambda r: (rank.get(r["priority"], len(rank)), r["rule"], r["framework"],
                         r["hardware"], r["subject"])
    else:
        key = lambda r: (rank.get(r["priority"], len(rank)), *(_text(r[c]) for c in texts))
    return pd.DataFrame(sorted(rows, key=key), columns=COLUMNS)


def _text(value) -> tuple[int, str]:
    """A sort key of a text that puts a missing one (NaN, None) last, as pandas sorts."""
    return (0, value) if isinstance(value, str) else (1, "")


GROUP_LISTED = 50  # tests named in a file alert's evidence, at most


@functools.lru_cache(maxsize=1 << 16)  # a test's key on every lane it fails on, every call
def test_file(parity_key: str) -> str:
    """The module of a test's parity key, without its classes:
    `tests.kernels.test_moe.TestFused::test_a[1]` -> `tests.kernels.test_moe` (a path-style
    id, `tests/x.py::T::test`, gives `tests/x.py`)."""
    head = str(parity_key).split("::", 1)[0]
    parts = head.split(".") if "/" not in head else [head]
    while len(parts) > 1 and parts[-1][:1].isupper():  # CamelCase: a class, not a module
        parts.pop()
    return ".".join(parts)


def group(rows: list[dict], rules: dict, groups=frozenset()) -> list[dict]:
    """Tests of one file failing together share one alert, as PyTorch's bots file one issue
    for a file: when more than a rule's `group_above` tests of one file fire (0: never), or
    when that file already has an alert on record (so a group shrinking to a few tests stays
    one issue instead of splitting into new ones). The file alert's subject is the file;
    its evidence names the tests (`tests`, the first GROUP_LISTED) and counts them. A
    member's evidence may be JSON text or a dict; members not grouped are returned as
    given, and rows of other rules first."""
    out = [r for r in rows if r["rule"] not in TEST_RULES]
    for rule in dict.fromkeys(r["rule"] for r in rows if r["rule"] in TEST_RULES):
        given = [r for r in rows if r["rule"] == rule]
        out += _by_file(rule, rules, groups, *([r[c] for r in given] for c in (
            "framework", "hardware", "subject", "since")),
            reference=lambda i: _evidence(given[i]).get("reference", _NONE),
            streak=lambda i: _evidence(given[i])["streak"], alone=given.__getitem__)
    return out


_NONE = object()  # a member whose evidence names no reference


def _by_file(rule: str, rules: dict, groups, framework: list, hardware: list, subject: list,
             since: list, *, reference: Callable[[int], object],
             streak: Callable[[int], int] | None, alone: Callable[[int], dict]) -> list[dict]:
    """The alerts of one test rule's firing tests, given as columns (`group`): `alone(i)`
    for each test of a file not gathered, one file alert for each file gathered, in the
    order their files first come. Its evidence takes the reference of its first test by
    name (`reference(i)`, `_NONE` for none) and, for amd_only_failure, the longest of its
    tests' streaks (`streak(i)`). A gathered test is never made a row of its own: of the
    PyTorch-size store's 27,156 AMD-only failures, 24,191 are gathered in 245 file alerts
    (`evaluate` 73.6 -> 41.0 ms there)."""
    out = []
    for (fw, hw, path), members in _files(framework, hardware, subject).items():
        if not _gathered(rules[rule], len(members), (rule, fw, hw, path), groups):
            out += map(alone, members)
            continue
        members.sort(key=subject.__getitem__)
        ev = {"tests_failing": len(members),
              "tests": [subject[i] for i in members[:GROUP_LISTED]]}
        first = reference(members[0])
        if first is not _NONE:
            ev["reference"] = first
        if rule == "amd_only_failure":
            ev["longest_streak"] = max(map(streak, members))
        # a missing time is None, NaT or NaN, none of which equals itself
        times = [t for t in map(since.__getitem__, members) if t is not None and t == t]
        out.append(_row(rule, rules, fw, hw, path, min(times) if times else None, ev))
    return out


def _files(framework, hardware, subject) -> dict[tuple, list[int]]:
    """The positions of the tests (given as columns) of each (framework, hardware, file),
    the files in the order they first come."""
    by_file: dict[tuple, list[int]] = {}
    for i, key in enumerate(zip(framework, hardware, map(test_file, subject))):
        by_file.setdefault(key, []).append(i)
    return by_file


def alone(failures: pd.DataFrame, rules: dict, groups=frozenset()) -> np.ndarray:
    """Which rows of `failures` (amd_only_failures) `evaluate` makes an alert of their own,
    as `group` decides: streak long enough, and their file neither over the rule's
    `group_above` nor gathered on record. Only those show their test's last message (a file
    alert names its tests), so a caller reads the messages of those rows only."""
    rule = rules.get("amd_only_failure")
    if rule is None or failures.empty:
        return np.zeros(len(failures), bool)
    fires = np.flatnonzero(_fires(failures, rule).to_numpy())
    out = np.zeros(len(failures), bool)
    # the firing tests by file, as `_by_file` takes them, and decided once a file
    for key, members in _files(*(failures[c].to_numpy()[fires].tolist()
                                 for c in ("framework", "amd_hardware", "parity_key"))).items():
        if not _gathered(rule, len(members), ("amd_only_failure", *key), groups):
            out[fires[members]] = True
    return out


def _fires(failures: pd.DataFrame, rule: dict) -> pd.Series:
    """Which AMD-only failures fire the rule: a streak of at least its `min_streak` runs."""
    return failures["streak"] >= int(rule.get("min_streak", 2))


def _gathered(rule: dict, tests: int, key: tuple, groups) -> bool:
    """Whether `tests` firing tests of one file (`key`: rule, framework, hardware, file)
    share one alert: more than the rule's `group_above` (0: never), or a file alert of
    that key is on record (`groups`)."""
    above = int(rule.get("group_above", 0) or 0)
    return bool(above and tests > above) or key in groups


def group_tests(evidence: str | dict) -> list[str]:
    """The tests a file alert gathered (its evidence), or [] for a one-test alert."""
    ev = json.loads(evidence or "{}") if isinstance(evidence, str) else (evidence or {})
    return list(ev.get("tests") or [])


def _stale_enough(detail: str, rule: dict) -> bool:
    """The coverage view says 'last run N days before the newest'."""
    import re

    m = re.search(r"last run (\d+) days", str(detail))
    return bool(m) and int(m.group(1)) * 24 >= float(rule.get("hours", 72))
