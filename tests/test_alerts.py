"""Alerts: the rules fire on what the demo injects, recomputing opens nothing new, a quiet
alert resolves only after its rounds, and a recurrence is a new occurrence."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
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
    # more than four failing tests of one module on one lane: one alert for the module
    tests = found[found["rule"] == "amd_only_failure"]
    files = tests[tests["evidence"].str.contains('"tests_failing"')]
    assert len(files) >= 1
    for f in files.itertuples():
        ev = json.loads(f.evidence)
        assert ev["tests_failing"] > 4 and len(ev["tests"]) == ev["tests_failing"]
        assert all(rules_mod.test_file(t) == f.subject for t in ev["tests"])
        singles = tests[(tests["hardware"] == f.hardware) & tests["subject"].str.contains("::")]
        assert not any(rules_mod.test_file(t) == f.subject for t in singles["subject"])
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
    bad.write_text(rules_mod.RULES_FILE.read_text().replace("group_above = 4", "group_above = -1"))
    with pytest.raises(rules_mod.RulesError, match="rule 'amd_only_failure': group_above"):
        rules_mod.load_rules(bad)
    assert set(rules_mod.load_rules()) >= {"amd_only_failure", "perf_regression", "no_tests"}


# -- GitHub issues --------------------------------------------------------------------------------

REPO = "ROCm/parity-alerts"
TOKEN = "ghp_fakeTOKENforAlertIssues_0123456789ab"


def _post(engine, fake, actions, **kw):
    from parity.collectors.alert_issues import post
    from parity.collectors.github import Client
    from parity.collectors.settings import Secret, Settings

    client = Client(Settings(backoff_s=0.01), api_url=fake.base_url, token=Secret(TOKEN))
    return post(engine, client, REPO, actions, **kw)


def test_issues_one_per_alert_no_spam_closed_on_resolve_and_manual_close_kept(sqlite_engine):
    from tests.fakegithub import FakeGitHub, World

    w = World()
    w.add_repo(REPO)
    hostile = dict(_alert("h", {"last_message": "@vllm-project/amd-team fixes #1 <b>x</b>"}),
                   subject="test_x[<script>] @someone")
    now = datetime(2026, 11, 30)
    with FakeGitHub(w, {TOKEN: 3}) as fake:
        firing = [_alert("a", {"streak": 2}), _alert("b", {"streak": 3}), hostile]
        acts = alerting.run(sqlite_engine, firing, now=now)
        # the write cap: labels and issues count; what is left waits
        r1 = _post(sqlite_engine, fake, acts, max_writes=6)  # 4 labels, then 2 issues
        assert (r1.writes, len(r1.opened), r1.deferred) == (6, 2, 1)
        r2 = _post(sqlite_engine, fake, alerting.run(sqlite_engine, firing, now=now))
        issues = w.issues[REPO]
        assert len(issues) == 3 and len(r1.opened) + len(r2.opened) == 3
        assert {x["name"] for x in w.labels[REPO].values()} >= {"parity", "vendor:amd",
                                                                 "rule:amd_only_failure",
                                                                 "framework:vllm"}
        # nothing new: no write at all
        r3 = _post(sqlite_engine, fake, alerting.run(sqlite_engine, firing, now=now))
        assert r3.writes == 0 and len(issues) == 3
        # untrusted text went in as data
        text = next(i for i in issues.values() if "parity-alert:h" in i["body"])
        outside = re.sub(r"`[^`\n]*`", "", text["body"] + text["title"])
        assert "@vllm-project" not in outside and "<script>" not in outside
        assert not re.search(r"(?<![\w\u200b])@someone", text["title"])
        # the evidence of a changes: its body is edited and a comment says what changed
        firing[0] = _alert("a", {"streak": 4})
        r4 = _post(sqlite_engine, fake, alerting.run(sqlite_engine, firing, now=now))
        a_issue = next(n for n, i in issues.items() if "parity-alert:a" in i["body"])
        assert r4.updated == [a_issue] and w.comments[-1]["body"] == "Evidence changed: streak"
        # a person closes b's issue while it still fires: it stays closed
        b_issue = next(n for n, i in issues.items() if "parity-alert:b" in i["body"])
        issues[b_issue]["state"] = "closed"
        firing[1] = _alert("b", {"streak": 9})
        r5 = _post(sqlite_engine, fake, alerting.run(sqlite_engine, firing, now=now))
        assert r5.acknowledged == ["b"] and issues[b_issue]["state"] == "closed"
        # a stops firing for two rounds: resolved, commented and closed
        firing = [f for f in firing if f["fingerprint"] != "a"]
        _post(sqlite_engine, fake, alerting.run(sqlite_engine, firing, now=now))
        r7 = _post(sqlite_engine, fake, alerting.run(sqlite_engine, firing, now=now))
        assert r7.closed == [a_issue] and issues[a_issue]["state"] == "closed"
        assert issues[a_issue]["state_reason"] == "completed"
        # a comes back: a new issue that links the old one
        firing.append(_alert("a", {"streak": 2}))
        r8 = _post(sqlite_engine, fake, alerting.run(sqlite_engine, firing, now=now))
        assert len(r8.opened) == 1 and f"#{a_issue}" in issues[r8.opened[0]]["body"]


def test_an_issue_whose_record_was_lost_is_found_by_its_marker(sqlite_engine):
    """A round that created the issue and failed before recording it: the rerun finds the
    issue by its hidden marker (whatever its title became) instead of opening another."""
    from tests.fakegithub import FakeGitHub, World

    w = World()
    w.add_repo(REPO)
    now = datetime(2026, 11, 30)
    with FakeGitHub(w, {TOKEN: 3}) as fake:
        acts = alerting.run(sqlite_engine, [_alert("a", {"streak": 2})], now=now)
        _post(sqlite_engine, fake, acts)
        (number, issue), = w.issues[REPO].items()
        issue["title"] = "renamed by a person"
        with sqlite_engine.begin() as conn:
            conn.execute(text("UPDATE alert SET issue_number = NULL"))
        again = _post(sqlite_engine, fake, [])
        assert again.opened == [] and len(w.issues[REPO]) == 1
        with sqlite_engine.connect() as conn:
            assert conn.execute(text("SELECT issue_number FROM alert")).scalar() == number


# -- chat digests and parity sync -------------------------------------------------------------

class _Receiver:
    """A local webhook receiver: records every JSON body posted to it."""

    def __init__(self):
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        got = self.got = []

        class H(BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                got.append((self.path, json.loads(self.rfile.read(n) or b"{}")))
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/services/T0/B0/SECRETpart"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_digest_payloads_and_when_they_are_sent():
    from parity.collectors import webhooks

    acts = [alerting.Action("open", f"f{i}", "amd_only_failure", "P1", "vllm", "mi355x",
                            "t @team #3 <b>", {}) for i in range(7)]
    slack = webhooks.slack_payload(acts, "https://parity.example/")
    assert slack["blocks"][0]["text"]["text"] == "Parity alerts"
    assert "7 opened" in slack["text"] and "…and 2 more" in slack["blocks"][2]["text"]["text"]
    assert "`t @team #3 <b>`" in slack["blocks"][2]["text"]["text"]  # as code: nothing live
    teams = webhooks.teams_payload(acts)
    card = teams["attachments"][0]["content"]
    assert teams["type"] == "message" and card["type"] == "AdaptiveCard" and card["version"] == "1.4"
    assert webhooks.kind("https://hooks.slack.com/services/x") == "slack"
    assert webhooks.kind("https://prod-1.westus.logic.azure.com/workflows/x") == "teams"
    receiver = _Receiver()
    try:
        assert webhooks.send([receiver.url], []).sent == 0 and receiver.got == []  # nothing new
        assert webhooks.send([receiver.url], acts).sent == 1 and len(receiver.got) == 1
        bad = webhooks.send(["http://127.0.0.1:9/hook/SECRETpart"], acts)
        assert bad.errors and "SECRETpart" not in bad.errors[0]
    finally:
        receiver.close()


def test_parity_sync_runs_the_alert_round_of_the_sources_file(demo_db, tmp_path):
    import os
    import socket

    from tests.fakegithub import FakeGitHub, World

    db = tmp_path / "synced.db"
    shutil.copy(demo_db, db)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    w = World()
    w.add_repo(REPO)
    receiver = _Receiver()
    try:
        with FakeGitHub(w, {TOKEN: 3}) as fake:
            cfg = tmp_path / "parity.toml"
            cfg.write_text(f'''
[[source]]
name = "down"
kind = "buildkite"
org = "vllm"
pipelines = ["ci"]
api_url = "http://127.0.0.1:{dead}/v2"

[alerts]
post_issues = "{REPO}"
max_writes = 8
''')
            env = {k: v for k, v in os.environ.items()
                   if not k.startswith(("PARITY_", "GITHUB", "BUILDKITE"))}
            env.update(GITHUB_TOKEN=TOKEN, BUILDKITE_API_TOKEN="bk", PARITY_GITHUB_API_URL=fake.base_url,
                       PARITY_ALERT_WEBHOOKS=receiver.url)
            out = subprocess.run([sys.executable, "-m", "parity", "--db", str(db), "sync",
                                  "--config", str(cfg)], env=env, capture_output=True, text=True,
                                 cwd=ROOT, timeout=300)
        assert out.returncode == 1  # the source is down; the alert round ran anyway
        lines = [ln for ln in out.stdout.splitlines() if " alerts: " in ln]
        assert any("this round did open" in ln for ln in lines), out.stdout
        assert any("issues in ROCm/parity-alerts:" in ln and "(8 writes)" in ln for ln in lines)
        assert len(w.issues[REPO]) >= 1 and len(receiver.got) == 1
        assert "SECRETpart" not in out.stdout + out.stderr and TOKEN not in out.stdout + out.stderr
        assert b"SECRETpart" not in db.read_bytes()
    finally:
        receiver.close()


def test_the_weekly_report_lists_the_alerts_opened(demo_db, tmp_path):
    db = tmp_path / "r.db"
    shutil.copy(demo_db, db)
    started = datetime.utcnow() - timedelta(minutes=1)  # before the alerts are recorded
    done = subprocess.run([sys.executable, "-m", "parity", "--db", str(db), "alerts"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    today = datetime.utcnow()
    # (the window once began on the 1st of the month at the time of day: on the 1st it
    # began after the alerts it was to list)
    log = frames.alert_log(db, since=started, until=today + timedelta(days=1))
    assert (log["change"] == "opened").sum() == int(done.stdout.split(" alerts firing")[0])
    out = tmp_path / "rep"
    rep = subprocess.run([sys.executable, "-m", "parity", "--db", str(db), "report", "weekly",
                          "--since", "2026-11-20", "--until", f"{today:%Y-%m-%d}T23:59:59",
                          "--format", "md", "--out", str(out)], capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert rep.returncode == 0, rep.stderr
    md = (out / "report.md").read_text()
    assert "### Alerts opened and resolved" in md and "| opened | P1 |" in md


def test_a_5xx_mid_round_leaves_no_duplicate_after_the_rerun(sqlite_engine):
    from tests.fakegithub import FakeGitHub, Faults, World

    w = World()
    w.add_repo(REPO)
    now = datetime(2026, 11, 30)
    firing = [_alert(x, {"streak": 2}) for x in "abcd"]
    # list issues, list labels, 4 labels, 2 issues, then a 502 on the third issue
    faults = Faults(queue=[None] * 8 + [502])
    with FakeGitHub(w, {TOKEN: 3}, faults=faults) as fake:
        first = _post(sqlite_engine, fake, alerting.run(sqlite_engine, firing, now=now))
        assert first.errors and "502" in first.errors[0] and len(first.opened) == 2
        again = _post(sqlite_engine, fake, alerting.run(sqlite_engine, firing, now=now))
        assert again.errors == [] and len(again.opened) == 2
    bodies = [i["body"] for i in w.issues[REPO].values()]
    assert len(bodies) == 4 and len({b.splitlines()[0] for b in bodies}) == 4
    assert TOKEN not in " ".join(first.errors + again.errors)


def test_a_test_alert_resolves_only_on_explicit_passes(sqlite_engine):
    """A failing test that stops being reported (its lane did not run it) holds its alert;
    only runs in which it passed on AMD count towards resolving it, each run once however
    many rounds see it."""
    now = datetime(2026, 11, 30)
    a = _alert("a", {"streak": 2})
    alerting.run(sqlite_engine, [a], now=now, passes={})
    for _ in range(3):  # not firing, but not seen passing either: held
        assert alerting.run(sqlite_engine, [], now=now, passes={}) == []
    for _ in range(3):  # one passing run, seen by three rounds: still one pass
        assert alerting.run(sqlite_engine, [], now=now, passes={"a": 1}) == []
    done = alerting.run(sqlite_engine, [], now=now, passes={"a": 2})  # the second run
    assert [(x.kind, x.fingerprint) for x in done] == [("resolve", "a")]
    with sqlite_engine.connect() as conn:
        assert conn.execute(text("SELECT state, quiet_rounds FROM alert")).one() == ("resolved", 2)
    # a lane rule needs no test pass: quiet rounds are its observations
    lane = _alert("n", {"finding": "builds but runs no tests"}, rule="no_tests")
    alerting.run(sqlite_engine, [lane], now=now, passes={})
    alerting.run(sqlite_engine, [], now=now, passes={})
    assert [x.kind for x in alerting.run(sqlite_engine, [], now=now, passes={})] == ["resolve"]


def _failing(test: str, streak=2, rule="amd_only_failure") -> dict:
    return rules_mod._row(rule, rules_mod.load_rules(), "vllm", "mi355x", test,
                          datetime(2026, 11, 20 + streak),
                          {"streak": streak, "runs": 9, "reference": "h100",
                           "last_message": "boom"})


def test_evaluate_fires_each_rule_on_amd_once_per_subject_in_priority_order():
    """`evaluate` on small frames of each kind: every rule fires on AMD's rows alone, a
    subject found twice alerts once, and the alerts come by priority, then rule, framework,
    hardware and subject, a missing framework last."""
    rules = {"amd_only_failure": {"priority": "P2", "min_streak": 2},
             "both_vendors_failing": {"priority": "P3"}, "no_tests": {"priority": "P2"},
             "perf_regression": {"priority": "P1", "min_effect": 0.05},
             "accuracy_cliff": {"priority": "P1"}, "runners_offline": {"priority": "P1"},
             "queue_p90": {"priority": "P3", "minutes": 60}}
    t = pd.Timestamp("2026-11-01")
    failures = pd.DataFrame({
        "framework": ["vllm", "vllm", "sglang"], "amd_hardware": ["MI300X"] * 3,
        "nvidia_hardware": ["H100"] * 3,
        "parity_key": ["tests/a.py::test_x", "tests/b.py::test_y", "tests/c.py::test_z"],
        "streak": [3, 1, 2], "first_failing": [t] * 3, "runs": [5] * 3,
        "last_message": ["boom", None, "bang"]})
    matrix = pd.DataFrame({"framework": ["vllm", "vllm"], "amd_hardware": ["MI300X"] * 2,
                           "nvidia_hardware": ["H100"] * 2,
                           "parity_key": ["tests/d.py::test_w", "tests/a.py::test_x"],
                           "quadrant": ["both fail", "amd-only fail"]})
    coverage = pd.DataFrame({"framework": ["vllm"], "hardware": ["MI355X"],
                             "suite": ["kernels"], "finding": ["builds but runs no tests"],
                             "detail": [""], "last_run": [t]})
    findings = pd.DataFrame({
        "vendor": ["amd", "amd", "nvidia", "amd", "amd", "amd"],
        "kind": ["performance", "performance", "performance", "accuracy", "performance",
                 "accuracy"],
        "status": ["regression", "regression", "regression", "cliff", "regression", "drop"],
        "size": [-0.2, -0.01, -0.3, np.nan, -0.2, np.nan],
        "framework": ["vllm", "vllm", "vllm", "vllm", "vllm", np.nan],
        "hardware": ["MI300X"] * 6,
        "subject": ["llama tput", "small", "nvidia's", "gsm8k", "llama tput", "mmlu"],
        "when": [t] * 6, "before": [1.0] * 6, "after": [0.8] * 6, "commit": ["abc"] * 6,
        "url": [""] * 6, "detail": [""] * 6})
    fleet = pd.DataFrame({"vendor": ["amd", "amd", "nvidia"],
                          "hardware": ["MI300X", "MI355X", "H100"], "runners": [4, 2, 3],
                          "online": [0, 2, 0], "offline": [4, 0, 3],
                          "queue_p90_min": [10.0, 90.0, 500.0], "last_seen": [t] * 3})
    out = rules_mod.evaluate(rules, failures=failures, matrix=matrix, coverage=coverage,
                             findings=findings, fleet=fleet)
    # a missing framework as None, to compare
    got = [(r.priority, r.rule, r.framework if isinstance(r.framework, str) else None,
            r.hardware, r.subject) for r in out.itertuples()]
    assert got == [
        ("P1", "accuracy_cliff", "vllm", "MI300X", "gsm8k"),
        ("P1", "accuracy_cliff", None, "MI300X", "mmlu"),
        ("P1", "perf_regression", "vllm", "MI300X", "llama tput"),
        ("P1", "runners_offline", "", "MI300X", "runner pool"),
        ("P2", "amd_only_failure", "sglang", "MI300X", "tests/c.py::test_z"),
        ("P2", "amd_only_failure", "vllm", "MI300X", "tests/a.py::test_x"),
        ("P2", "no_tests", "vllm", "MI355X", "kernels"),
        ("P3", "both_vendors_failing", "vllm", "MI300X", "tests/d.py::test_w"),
        ("P3", "queue_p90", "", "MI355X", "queue time")]
    assert out["fingerprint"].is_unique
    alone = out[out["subject"] == "tests/a.py::test_x"].iloc[0]
    assert json.loads(alone["evidence"]) == {"last_message": "boom", "reference": "H100",
                                             "runs": 5, "streak": 3}
    offline = out[out["rule"] == "runners_offline"].iloc[0]
    assert json.loads(offline["evidence"]) == {"offline": 4, "runners": 4}


def test_more_than_four_tests_of_one_file_share_one_alert():
    rules = rules_mod.load_rules()
    # parity keys as the store holds them: dotted modules, classes joined to their module
    five = [_failing(f"tests.kernels.test_moe{'.TestFused' * (i % 2)}::test_fused[{i}]",
                     streak=2 + i) for i in range(5)]
    four = [_failing(f"tests.lora.test_lora::test_{i}") for i in range(4)]
    lane = rules_mod._row("no_tests", rules, "vllm", "mi455x", "v1-e2e", None, {})
    rows = rules_mod.group(five + four + [lane], rules)
    subjects = sorted(r["subject"] for r in rows)
    assert subjects == sorted(["tests.kernels.test_moe", "v1-e2e"]
                              + [f"tests.lora.test_lora::test_{i}" for i in range(4)])
    moe = next(r for r in rows if r["subject"] == "tests.kernels.test_moe")
    ev = json.loads(moe["evidence"])
    assert ev["tests_failing"] == 5 and ev["longest_streak"] == 6
    assert ev["tests"] == sorted(r["subject"] for r in five)
    assert moe["since"] == datetime(2026, 11, 22)  # the earliest of its tests
    assert moe["fingerprint"] == rules_mod.fingerprint("amd_only_failure", "vllm", "mi355x",
                                                       "tests.kernels.test_moe")
    # the file alert on record keeps gathering its file's tests when only two still fail,
    # instead of splitting into two new alerts
    key = ("amd_only_failure", "vllm", "mi355x", "tests.kernels.test_moe")
    kept = rules_mod.group(five[:2], rules, groups={key})
    assert [(r["subject"], json.loads(r["evidence"])["tests_failing"]) for r in kept] == [
        ("tests.kernels.test_moe", 2)]
    assert rules_mod.test_file("test.dynamo.test_functions.FunctionTests::test_a") == \
        "test.dynamo.test_functions"
    assert rules_mod.test_file("tests/x.py::T::test") == "tests/x.py"
    # the issue of a file alert lists its tests, each as data
    from parity.collectors.alert_issues import body

    hostile = [_failing(f"tests.x.test_h::test_{i}[@team #9 <b>]") for i in range(5)]
    (filed,) = rules_mod.group(hostile, rules)
    text = body(filed, json.loads(filed["evidence"]))
    outside = re.sub(r"`[^`\n]*`", "", text)
    assert "@team" not in outside and "<b>" not in outside and text.count("\n- `tests.x") == 5
    # group_above = 0: never grouped
    assert len(rules_mod.group(five, {**rules, "amd_only_failure": {
        **rules["amd_only_failure"], "group_above": 0}})) == 5


def test_the_demo_observes_passes_of_quiet_test_alerts(demo_db, tmp_path):
    db = tmp_path / "p.db"
    shutil.copy(demo_db, db)
    engine = make_engine(db)
    firing = frames.alerts(db)
    alerting.run(engine, firing.to_dict(orient="records"), now=datetime(2026, 11, 30))
    # tests that pass on AMD in the latest run, recorded as if they had been failing: one
    # alone, and two more of one lane as a file alert
    matrix = frames.test_matrix(db)
    passed = matrix[matrix["amd_outcome"] == "passed"]
    ok = passed.iloc[0]
    lane = passed[(passed["framework"] == ok["framework"])
                  & (passed["amd_hardware"] == ok["amd_hardware"])]
    members = list(lane["parity_key"].iloc[1:3])
    fp = rules_mod.fingerprint("amd_only_failure", ok["framework"], ok["amd_hardware"],
                               ok["parity_key"])
    group_fp = rules_mod.fingerprint("amd_only_failure", ok["framework"], ok["amd_hardware"],
                                     "a.file")
    with engine.begin() as conn:
        for key, subject, evidence in ((fp, ok["parity_key"], "{}"),
                                       (group_fp, "a.file", json.dumps({"tests": members}))):
            conn.execute(text(
                "INSERT INTO alert (fingerprint, rule, priority, framework, hardware, subject, "
                "state, first_seen, last_seen, quiet_rounds, evidence, evidence_hash, url, "
                "issue_repo) VALUES (:fp, 'amd_only_failure', 'P1', :fw, :hw, :s, 'open', :t, "
                ":t, 0, :ev, '', '', '')"),
                {"fp": key, "fw": ok["framework"], "hw": ok["amd_hardware"], "s": subject,
                 "ev": evidence, "t": datetime(2026, 11, 29)})
    again = frames.alerts(db)

    def passes(key: str) -> int:
        """A hand count: runs, newest first, in which the test passed, up to its last failure."""
        runs = frames.test_history(db, parity_key=key, framework=ok["framework"],
                                   hardware=ok["amd_hardware"])
        ran = [o for o in runs["outcome"] if o in ("passed", "failed", "error")]
        return next((i for i, o in enumerate(ran) if o != "passed"), len(ran))

    assert again.attrs["explicit_passes"][fp] == passes(ok["parity_key"]) >= 1
    # a file alert: the fewest passing runs over its tests
    assert again.attrs["explicit_passes"][group_fp] == min(passes(k) for k in members) >= 1


@pytest.mark.parametrize("above", [0, 1, 4])
def test_only_the_failures_alerted_alone_show_a_message(demo_db, above):
    """`alone` marks the AMD-only failures `evaluate` makes an alert of their own (the only
    ones whose last message an alert shows, which `frames.alerts` therefore reads alone):
    with every other row's message taken away, the alerts are the same; a row it marks is
    one alert, with its message; and a file gathered on record stays gathered."""
    import pandas as pd

    rules = rules_mod.load_rules()
    rules["amd_only_failure"]["group_above"] = above
    failures = frames.amd_only_failures(demo_db)
    first = failures.iloc[0]
    groups = {("amd_only_failure", first["framework"], first["amd_hardware"],
               rules_mod.test_file(first["parity_key"]))}
    mask = rules_mod.alone(failures, rules, groups)
    assert mask.any() and not mask.all() and not mask[0]
    empty = pd.DataFrame()
    kw = dict(matrix=empty, coverage=empty, findings=empty, fleet=empty, groups=groups)
    whole = rules_mod.evaluate(rules, failures=failures, **kw)
    cut = failures.assign(last_message=failures["last_message"].where(mask, None))
    pd.testing.assert_frame_equal(whole, rules_mod.evaluate(rules, failures=cut, **kw))
    keys = lambda df, hw, key: set(zip(df["framework"], df[hw], df[key]))  # noqa: E731
    alerted = keys(whole, "hardware", "subject")
    assert keys(failures[mask], "amd_hardware", "parity_key") <= alerted
    assert not keys(failures[~mask], "amd_hardware", "parity_key") & alerted
    single = whole[whole["subject"].isin(failures.loc[mask, "parity_key"])]
    assert all("last_message" in json.loads(e) for e in single["evidence"])
