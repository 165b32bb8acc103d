"""Alerts, pure: which rules fire now, from the views' frames.

Rules are data (`alert_rules.toml`, overridable); each fires on an AMD subject (a test, a
lane, a series, a runner pool) with a priority and its evidence. An alert's fingerprint is a
stable hash of its rule and subject, so recomputing on the same store gives the same alerts
and an issue can be found again whatever its title became."""
from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path

import pandas as pd

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
    return rules


def fingerprint(rule: str, framework: str, hardware: str, subject: str) -> str:
    return hashlib.sha256(f"{rule}|{framework}|{hardware}|{subject}".encode()).hexdigest()[:20]


def _row(rule, rules, framework, hardware, subject, since, evidence: dict, url="") -> dict:
    return dict(fingerprint=fingerprint(rule, framework, hardware, subject), rule=rule,
                priority=rules[rule]["priority"], framework=framework, hardware=hardware,
                subject=subject, since=since,
                evidence=json.dumps(evidence, sort_keys=True, default=str), url=url or "")


def evaluate(rules: dict, *, failures: pd.DataFrame, matrix: pd.DataFrame,
             coverage: pd.DataFrame, findings: pd.DataFrame, fleet: pd.DataFrame) -> pd.DataFrame:
    """The alerts that fire, one row each: `failures` is amd_only_failures, `matrix`
    test_matrix (latest), `coverage` coverage, `findings` regressions, `fleet` fleet."""
    rows: list[dict] = []
    if "amd_only_failure" in rules and not failures.empty:
        r = rules["amd_only_failure"]
        for f in failures[failures["streak"] >= int(r.get("min_streak", 2))].itertuples():
            rows.append(_row("amd_only_failure", rules, f.framework, f.amd_hardware, f.parity_key,
                             f.first_failing, {"streak": int(f.streak), "runs": int(f.runs),
                                               "reference": f.nvidia_hardware,
                                               "last_message": f.last_message}))
    if "both_vendors_failing" in rules and not matrix.empty and "quadrant" in matrix:
        both = matrix[matrix["quadrant"].astype(str).str.contains("both fail")]
        for m in both.itertuples():
            rows.append(_row("both_vendors_failing", rules, m.framework, m.amd_hardware,
                             m.parity_key, None, {"reference": m.nvidia_hardware}))
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
    if not findings.empty:
        amd = findings[findings["vendor"] == "amd"]
        if "perf_regression" in rules:
            effect = float(rules["perf_regression"].get("min_effect", 0.0))
            perf = amd[(amd["status"] == "regression") & (amd["kind"] == "performance")
                       & (amd["size"].abs() >= effect)]
            for f in perf.itertuples():
                rows.append(_row("perf_regression", rules, f.framework, f.hardware, f.subject,
                                 f.when, {"size": f.size, "before": f.before, "after": f.after,
                                          "commit": f.commit}, f.url))
        if "accuracy_cliff" in rules:
            for f in amd[amd["status"].isin(("cliff", "drop"))].itertuples():
                rows.append(_row("accuracy_cliff", rules, f.framework, f.hardware, f.subject,
                                 f.when, {"status": f.status, "detail": f.detail}, f.url))
    if not fleet.empty:
        pools = fleet[fleet["vendor"] == "amd"]
        if "runners_offline" in rules:
            for p in pools[(pools["runners"] > 0) & (pools["online"] == 0)].itertuples():
                rows.append(_row("runners_offline", rules, "", p.hardware, "runner pool",
                                 p.last_seen, {"runners": int(p.runners), "offline": int(p.offline)}))
        if "queue_p90" in rules:
            limit = float(rules["queue_p90"].get("minutes", 60))
            for p in pools[pools["queue_p90_min"] > limit].itertuples():
                rows.append(_row("queue_p90", rules, "", p.hardware, "queue time", p.last_seen,
                                 {"queue_p90_min": p.queue_p90_min, "limit_min": limit}))
    out = pd.DataFrame(rows, columns=COLUMNS).drop_duplicates("fingerprint")
    order = {p: i for i, p in enumerate(PRIORITIES)}
    return out.assign(_o=out["priority"].map(order)).sort_values(
        ["_o", "rule", "framework", "hardware", "subject"]).drop(columns="_o").reset_index(drop=True)


TEST_RULES = ("amd_only_failure", "both_vendors_failing")


def passing(matrix: pd.DataFrame) -> set[tuple[str, str, str]]:
    """(framework, AMD hardware, test) that passed on AMD in the latest aligned runs: the
    explicit pass a test alert needs before it may resolve."""
    if matrix.empty or "amd_outcome" not in matrix:
        return set()
    ok = matrix[matrix["amd_outcome"] == "passed"]
    return set(zip(ok["framework"], ok["amd_hardware"], ok["parity_key"]))


def _stale_enough(detail: str, rule: dict) -> bool:
    """The coverage view says 'last run N days before the newest'."""
    import re

    m = re.search(r"last run (\d+) days", str(detail))
    return bool(m) and int(m.group(1)) * 24 >= float(rule.get("hours", 72))
