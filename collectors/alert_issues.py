"""Alerts as GitHub issues, without spam, through the collector's GitHub client.

- One issue per alert fingerprint, found again by a hidden marker in its body
  (`<!-- parity-alert:FINGERPRINT -->`), never by title: a renamed issue is still found, and
  an issue created in a round that then failed is found instead of opened twice.
- Labels (`parity`, `vendor:amd`, `framework:X`, `rule:Y`) are created when missing.
- An update edits the body only when the evidence changed, with a comment saying what
  changed; a resolution comments and closes (`state_reason: completed`).
- An issue a person closed while the alert still fires stays closed: the alert becomes
  acknowledged. A later recurrence opens a new issue that links the old one.
- At most `max_writes` writes (create, edit, comment, close, label) a round; what is left
  waits for the next round. Everything from CI runs is posted as data (`db.untrusted`)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from sqlalchemy import Engine, select

from parity.collectors.alerting import ACKNOWLEDGED, OPEN, Action, set_issue
from parity.collectors.github import Client, GitHubError
from parity.db.models import Alert
from parity.db.untrusted import literal, plain

MARKER = "<!-- parity-alert:{} -->"


@dataclass
class IssueReport:
    repo: str
    opened: list[int] = field(default_factory=list)
    updated: list[int] = field(default_factory=list)
    closed: list[int] = field(default_factory=list)
    acknowledged: list[str] = field(default_factory=list)  # closed by a person
    deferred: int = 0  # left for the next round (write cap)
    writes: int = 0
    errors: list[str] = field(default_factory=list)


class _Cap(Exception):
    pass


def title(a: dict) -> str:
    where = " ".join(x for x in (a.get("framework"), a.get("hardware")) if x)
    return plain(f"[Parity {a['priority']}] {a['rule'].replace('_', ' ')}: {where}: "
                 f"{a['subject']}", cap=200, table=False)


def body(a: dict, evidence: dict, previous: int | None = None, dashboard: str = "") -> str:
    lines = [MARKER.format(a["fingerprint"]),
             f"**{a['priority']} · {a['rule'].replace('_', ' ')}** on "
             f"{plain(a.get('framework') or 'any framework', table=False)} · "
             f"{plain(a.get('hardware') or '', table=False)}", "",
             f"Subject: {literal(a['subject'], cap=300, table=False)}", "", "| evidence | value |",
             "|---|---|"]
    lines += [f"| {plain(k)} | {literal(v)} |" for k, v in sorted(evidence.items())
              if k != "tests"]
    if evidence.get("tests"):  # a file alert: the tests it gathers, one per line
        lines += ["", "Failing tests of this file:"]
        lines += [f"- {literal(t, cap=300, table=False)}" for t in evidence["tests"]]
    if previous:
        lines += ["", f"This came back; the earlier occurrence was #{int(previous)}."]
    if dashboard:
        lines += ["", f"Dashboard: {dashboard}"]
    lines += ["", "_Opened by Parity; it is updated when the evidence changes and closed "
                  "when the alert resolves. Closing it by hand silences this occurrence._"]
    return "\n".join(lines)


def post(engine: Engine, client: Client, repo: str, actions: list[Action], *,
         max_writes: int = 10, dashboard: str = "") -> IssueReport:
    """Open, update and close the issues of this round's alerts (and of open alerts that
    have no issue yet), within the write cap."""
    report = IssueReport(repo=repo)
    with engine.connect() as conn:
        records = {r.fingerprint: dict(r._mapping) for r in conn.execute(select(Alert.__table__))}
    known = _marked_issues(client, repo)
    labels = _labels(client, repo)

    def write(method: str, path: str, payload: dict):
        if report.writes >= max_writes:
            raise _Cap()
        report.writes += 1
        return client.request(method, path, json=payload).json()

    todo = {a.fingerprint: a for a in actions}
    for fp, rec in records.items():  # open alerts without an issue (e.g. deferred before)
        if rec["state"] == OPEN and not rec["issue_number"] and fp not in todo:
            todo[fp] = Action("open", fp, rec["rule"], rec["priority"], rec["framework"],
                              rec["hardware"], rec["subject"], json.loads(rec["evidence"] or "{}"),
                              rec["url"])
    try:
        for fp, act in todo.items():
            rec = records.get(fp) or {}
            a = dict(fingerprint=fp, rule=act.rule, priority=act.priority,
                     framework=act.framework, hardware=act.hardware, subject=act.subject)
            number = rec.get("issue_number") or (known.get(fp, {}).get("number")
                                                 if act.kind != "reopen" else None)
            if act.kind in ("open", "reopen"):
                if number:  # created in an earlier round whose record was lost
                    set_issue(engine, fp, repo, number)
                    continue
                wanted = ["parity", "vendor:amd", f"rule:{act.rule}"] + (
                    [f"framework:{act.framework}"] if act.framework else [])
                for name in wanted:
                    if name not in labels:
                        write("POST", f"/repos/{repo}/labels", {"name": name, "color": "d93f0b"})
                        labels.add(name)
                made = write("POST", f"/repos/{repo}/issues", {
                    "title": title(a), "labels": wanted,
                    "body": body(a, act.evidence, act.previous_issue or rec.get("previous_issue"),
                                 dashboard)})
                set_issue(engine, fp, repo, int(made["number"]))
                report.opened.append(int(made["number"]))
            elif act.kind == "update" and number:
                issue = client.request("GET", f"/repos/{repo}/issues/{number}").json()
                if issue.get("state") == "closed":  # a person closed it: respect that
                    _acknowledge(engine, fp)
                    report.acknowledged.append(fp)
                    continue
                write("PATCH", f"/repos/{repo}/issues/{number}",
                      {"body": body(a, act.evidence, rec.get("previous_issue"), dashboard)})
                write("POST", f"/repos/{repo}/issues/{number}/comments", {
                    "body": "Evidence changed: " + ", ".join(plain(k, table=False)
                                                             for k in act.changed)})
                report.updated.append(int(number))
            elif act.kind == "resolve" and number:
                issue = client.request("GET", f"/repos/{repo}/issues/{number}").json()
                if issue.get("state") == "closed":
                    continue
                write("POST", f"/repos/{repo}/issues/{number}/comments",
                      {"body": "Resolved: this alert has not fired for the rounds its rule "
                               "asks. Closing."})
                write("PATCH", f"/repos/{repo}/issues/{number}",
                      {"state": "closed", "state_reason": "completed"})
                report.closed.append(int(number))
    except _Cap:
        done = len(report.opened) + len(report.updated) + len(report.closed)
        report.deferred = max(0, len(todo) - done - len(report.acknowledged))
    except GitHubError as exc:
        report.errors.append(client.redact(str(exc)))
    return report


def _marked_issues(client: Client, repo: str) -> dict[str, dict]:
    """Every Parity issue of the repository by the fingerprint in its marker."""
    found = {}
    for page in client.pages(f"/repos/{repo}/issues", "items",
                             {"state": "all", "labels": "parity"}):
        for issue in page.items or []:
            text = issue.get("body") or ""
            start = text.find("<!-- parity-alert:")
            if start >= 0:
                fp = text[start + len("<!-- parity-alert:"):].split(" ", 1)[0]
                found.setdefault(fp, issue)
    return found


def _labels(client: Client, repo: str) -> set[str]:
    return {x.get("name") for page in client.pages(f"/repos/{repo}/labels", "items")
            for x in page.items or []}


def _acknowledge(engine: Engine, fingerprint: str) -> None:
    t = Alert.__table__
    with engine.begin() as conn:
        conn.execute(t.update().where(t.c.fingerprint == fingerprint).values(state=ACKNOWLEDGED))
