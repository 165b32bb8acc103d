"""Alerts: the rules fire on what the demo injects, recomputing opens nothing new, a quiet
alert resolves only after its rounds, and a recurrence is a new occurrence."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from sqlalchemy import text

from parity.collectors import alerting
from parity.dashboard import alerts as rules_mod
from parity.dashboard import frames
from parity.db.engine import make_engine

ROOT = Path(__file__).resolve().parent.parent


def _alert(fp: str, evidence: dict, rule="amd_only_failure") -> dict:
    return dict(fingerprint=fp, rule=rule, priority="P1", framework="vllm", hardware="mi355x",
                subject=f"tests/t.py::{fp}", evidence=json.dumps(evidence, sort_keys=True), url="")


def test_a_round_opens_updates_resolves_and_reopens(sqlite_engine):
    now = datetime(2026, 11, 30)
    a, b = _alert("a", {"streak": 2}), _alert("b", {"streak": 3})
    first = alerting.run(sqlite_engine, [a, b], now=now)
    assert sorted(x.kind for x in first) == ["open", "open"]
    assert alerting.run(sqlite_engine, [a, b], now=now) == []  # the same store: nothing new
    moved = alerting.run(sqlite_engine, [_alert("a", {"streak": 5}), b], now=now)
    assert [(x.kind, x.fingerprint, x.changed) for x in moved] == [("update", "a", ["streak"])]
    # b stops firing: one quiet round is not a fix, the second resolves it
    assert alerting.run(sqlite_engine, [_alert("a", {"streak": 5})], now=now) == []
    gone = alerting.run(sqlite_engine, [_alert("a", {"streak": 5})], now=now)
    assert [(x.kind, x.fingerprint) for x in gone] == [("resolve", "b")]
    alerting.set_issue(sqlite_engine, "b", "ROCm/parity-alerts", 41)
    back = alerting.run(sqlite_engine, [_alert("a", {"streak": 5}), b], now=now)
    assert [(x.kind, x.fingerprint, x.previous_issue) for x in back] == [("reopen", "b", 41)]
    with sqlite_engine.connect() as conn:
        rows = dict(conn.execute(text("SELECT fingerprint, state FROM alert")).all())
    assert rows == {"a": "open", "b": "open"}


def test_the_demo_fires_what_it_injects(demo_db):
    found = frames.alerts(demo_db)
    by_rule = found.groupby("rule").size()
    assert by_rule["accuracy_cliff"] >= 1 and by_rule["perf_regression"] >= 1
    assert by_rule["amd_only_failure"] >= 1 and by_rule["no_tests"] >= 1
    cliff = found[found["rule"] == "accuracy_cliff"].iloc[0]
    assert (cliff["hardware"], cliff["priority"]) == ("mi355x", "P1")
    assert "DeepSeek-R1" in cliff["subject"]
    assert set(found.loc[found["rule"] == "no_tests", "hardware"]) == {"mi455x"}
    assert found["fingerprint"].is_unique
    again = frames.alerts(demo_db)
    assert list(again["fingerprint"]) == list(found["fingerprint"])  # stable
    # a stricter rules file: fewer rules, fewer alerts
    only = frames.alerts(demo_db, rules={"accuracy_cliff": {"priority": "P1"}})
    assert set(only["rule"]) == {"accuracy_cliff"}


def test_parity_alerts_records_once_and_dry_run_records_nothing(demo_db, tmp_path):
    db = tmp_path / "alerts.db"
    shutil.copy(demo_db, db)

    def cli(*extra):
        return subprocess.run([sys.executable, "-m", "parity", "--db", str(db), "alerts", *extra],
                              capture_output=True, text=True, cwd=ROOT, timeout=300)

    dry = cli("--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    planned = json.loads(dry.stdout)
    assert planned["dry_run"] and planned["firing"] == len(planned["actions"]) > 0
    engine = make_engine(db)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM alert")).scalar() == 0
    first = cli()
    assert first.returncode == 0 and f"did open {planned['firing']}," in first.stdout
    second = cli()
    assert "did open 0, reopen 0, update 0, resolve 0" in second.stdout
    bad = tmp_path / "rules.toml"
    bad.write_text('[made_up]\npriority = "P1"\n')
    refused = cli("--rules", str(bad))
    assert refused.returncode == 2 and "unknown rule 'made_up'" in refused.stderr


def test_rules_files_are_checked(tmp_path):
    bad = tmp_path / "rules.toml"
    bad.write_text('[no_tests]\npriority = "urgent"\n')
    with pytest.raises(rules_mod.RulesError, match="needs priority"):
        rules_mod.load_rules(bad)
    assert set(rules_mod.load_rules()) >= {"amd_only_failure", "perf_regression", "no_tests"}
