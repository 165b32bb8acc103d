"""One alerting round: the alerts that fire now (computed by `dashboard.alerts`, handed in
as rows) reconciled with the alerts on record.

- a new fingerprint opens an alert; one on record and still firing is updated only when
  its evidence changed (so an issue is edited only then);
- an open alert that stops firing resolves after `resolve_after` rounds in a row that
  observed it healthy (one quiet round is not a fix). A test alert needs an explicit pass:
  a round counts only when its test passed on AMD in the latest runs (`passes`); a round in
  which the test did not run holds the alert as it is;
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
from parity.db.models import Alert

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


TEST_RULES = ("amd_only_failure", "both_vendors_failing")


def _observed(old: dict, passes: set[str] | None) -> bool:
    """Whether this quiet round counts towards resolving `old`."""
    if old["rule"] not in TEST_RULES or passes is None:
        return True
    return old["fingerprint"] in passes


def plan(stored: dict[str, dict], firing: Iterable[dict], resolve_after: int = 2,
         passes: set[str] | None = None) -> list[Action]:
    """What this round does: `stored` maps fingerprints to their records, `firing` holds the
    alerts that fire now (rows of `dashboard.alerts.evaluate`), `passes` the test alerts
    whose test passed this round (None: count every quiet round)."""
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
        if fp in seen or old["state"] == RESOLVED or not _observed(old, passes):
            continue
        if old["quiet_rounds"] + 1 >= resolve_after:
            actions.append(Action("resolve", fp, old["rule"], old["priority"], old["framework"],
                                  old["hardware"], old["subject"],
                                  json.loads(old["evidence"] or "{}"), old["url"],
                                  issue_number=old["issue_number"]))
    return actions


def stored_alerts(engine: Engine) -> dict[str, dict]:
    with engine.connect() as conn:
        return {r.fingerprint: dict(r._mapping) for r in conn.execute(select(Alert.__table__))}


def run(engine: Engine, firing: list[dict], *, now: datetime, resolve_after: int = 2,
        dry_run: bool = False, passes: set[str] | None = None) -> list[Action]:
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
            if fp in by_fp or old["state"] == RESOLVED or not _observed(old, passes):
                continue  # no observation this round: the alert holds as it is
            act = kinds.get(fp)
            if act is not None and act.kind == "resolve":
                conn.execute(t.update().where(t.c.fingerprint == fp).values(
                    state=RESOLVED, resolved_at=now, quiet_rounds=old["quiet_rounds"] + 1))
            else:
                conn.execute(t.update().where(t.c.fingerprint == fp).values(
                    quiet_rounds=old["quiet_rounds"] + 1))
    return actions


def set_issue(engine: Engine, fingerprint: str, repo: str, number: int | None) -> None:
    """Remember the issue an alert lives in."""
    t = Alert.__table__
    with engine.begin() as conn:
        conn.execute(t.update().where(t.c.fingerprint == fingerprint).values(
            issue_repo=repo, issue_number=number))
