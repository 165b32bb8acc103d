"""One alerting round: the alerts that fire now (computed by `dashboard.alerts`, handed in
as rows) reconciled with the alerts on record.

- a new fingerprint opens an alert; one on record and still firing is updated only when
  its evidence changed (so an issue is edited only then);
- an open alert that stops firing resolves after `resolve_after` rounds in a row that
  observed it healthy (one quiet round is not a fix). A test alert needs explicit passes:
  `resolve_after` AMD runs in a row in which its test passed (`passes` counts them per
  alert, from the runs, so two rounds over the same run are one pass); a test that did not
  run since holds the alert as it is;
- a resolved alert that fires again is a new occurrence: reopened, with the earlier issue
  kept as `previous_issue` so a new issue can link it.
Recomputing on the same store gives the same alerts and no action. `plan` is pure; `run`
applies the plan in one transaction (or, for a dry run, only returns it)."""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Iterable

from sqlalchemy import Engine, select

from parity.db.migrate import upgrade
from parity.db.models import TEST_ALERT_RULES, Alert

OPEN, RESOLVED, ACKNOWLEDGED = "open", "resolved", "acknowledged"


@dataclass
class Action:
    kind: str  # open | update | resolve | reopen
    fingerprint: str
    rule: str
    priority: str
    framework: str
    hardware: str
    subject: str
    evidence: dict = field(default_factory=dict)
    url: str = ""
    issue_number: int | None = None
    previous_issue: int | None = None
    changed: list[str] = field(default_factory=list)  # evidence keys that changed

    def as_dict(self) -> dict:
        return asdict(self)


def evidence_hash(evidence: str) -> str:
    return hashlib.sha256(evidence.encode()).hexdigest()


def _healthy(old: dict, passes: dict[str, int] | None) -> int | None:
    """How many observations of `old` being healthy this quiet round makes: its quiet
    rounds plus this one, or for a test alert the runs its test passed in a row; None when
    this round observed nothing (the alert holds)."""
    if old["rule"] not in TEST_ALERT_RULES or passes is None:
        return old["quiet_rounds"] + 1
    return passes.get(old["fingerprint"]) or None


def plan(stored: dict[str, dict], firing: Iterable[dict], resolve_after: int = 2,
         passes: dict[str, int] | None = None) -> list[Action]:
    """What this round does: `stored` maps fingerprints to their records, `firing` holds the
    alerts that fire now (rows of `dashboard.alerts.evaluate`), `passes` the quiet test
    alerts whose test passed in the latest AMD runs, with how many runs in a row (None:
    count every quiet round)."""
    actions, seen = [], set()
    for a in firing:
        fp = a["fingerprint"]
        seen.add(fp)
        ev = json.loads(a["evidence"] or "{}")
        base = dict(fingerprint=fp, rule=a["rule"], priority=a["priority"],
                    framework=a["framework"] or "", hardware=a["hardware"] or "",
                    subject=a["subject"], evidence=ev, url=a.get("url") or "")
        old = stored.get(fp)
        if old is None:
            actions.append(Action("open", **base))
        elif old["state"] == RESOLVED:
            actions.append(Action("reopen", **base, previous_issue=old["issue_number"]))
        elif old["evidence_hash"] != evidence_hash(a["evidence"] or "{}"):
            before = json.loads(old["evidence"] or "{}")
            changed = sorted(k for k in set(ev) | set(before) if ev.get(k) != before.get(k))
            actions.append(Action("update", **base, issue_number=old["issue_number"],
                                  changed=changed))
    for fp, old in stored.items():
        if fp in seen or old["state"] == RESOLVED:
            continue
        healthy = _healthy(old, passes)
        if healthy is not None and healthy >= resolve_after:
            actions.append(Action("resolve", fp, old["rule"], old["priority"], old["framework"],
                                  old["hardware"], old["subject"],
                                  json.loads(old["evidence"] or "{}"), old["url"],
                                  issue_number=old["issue_number"]))
    return actions


def stored_alerts(engine: Engine) -> dict[str, dict]:
    with engine.connect() as conn:
        return {r.fingerprint: dict(r._mapping) for r in conn.execute(select(Alert.__table__))}


def run(engine: Engine, firing: list[dict], *, now: datetime, resolve_after: int = 2,
        dry_run: bool = False, passes: dict[str, int] | None = None) -> list[Action]:
    """Plan the round and, unless `dry_run`, record it: new and reopened alerts, refreshed
    evidence and last-seen times, quiet rounds counted, resolutions."""
    upgrade(engine)  # the alert table may be new to this store
    stored = stored_alerts(engine)
    actions = plan(stored, firing, resolve_after, passes)
    if dry_run:
        return actions
    by_fp = {a["fingerprint"]: a for a in firing}
    kinds = {a.fingerprint: a for a in actions}
    t = Alert.__table__
    with engine.begin() as conn:
        for fp, a in by_fp.items():
            values = dict(rule=a["rule"], priority=a["priority"], framework=a["framework"] or "",
                          hardware=a["hardware"] or "", subject=a["subject"], last_seen=now,
                          quiet_rounds=0, evidence=a["evidence"] or "{}",
                          evidence_hash=evidence_hash(a["evidence"] or "{}"), url=a.get("url") or "")
            act = kinds.get(fp)
            old = stored.get(fp)
            if old is None:
                conn.execute(t.insert().values(fingerprint=fp, state=OPEN, first_seen=now,
                                               **values))
            elif act is not None and act.kind == "reopen":
                conn.execute(t.update().where(t.c.fingerprint == fp).values(
                    state=OPEN, first_seen=now, resolved_at=None, issue_number=None,
                    previous_issue=old["issue_number"], **values))
            else:
                conn.execute(t.update().where(t.c.fingerprint == fp).values(**values))
        for fp, old in stored.items():
            healthy = None if fp in by_fp or old["state"] == RESOLVED else _healthy(old, passes)
            if healthy is None:
                continue  # no observation this round: the alert holds as it is
            act = kinds.get(fp)
            if act is not None and act.kind == "resolve":
                conn.execute(t.update().where(t.c.fingerprint == fp).values(
                    state=RESOLVED, resolved_at=now, quiet_rounds=healthy))
            else:
                conn.execute(t.update().where(t.c.fingerprint == fp).values(
                    quiet_rounds=healthy))
    return actions


def set_issue(engine: Engine, fingerprint: str, repo: str, number: int | None) -> None:
    """Remember the issue an alert lives in."""
    t = Alert.__table__
    with engine.begin() as conn:
        conn.execute(t.update().where(t.c.fingerprint == fingerprint).values(
            issue_repo=repo, issue_number=number))
