"""Chat digests of an alerting round: the one module of `collectors` that posts to chat.

A round that opened, changed, reopened or resolved something sends one digest to each
webhook: Slack incoming webhooks get Block Kit, Microsoft Teams Workflows webhooks an
Adaptive Card (v1.4); a round with nothing to say sends nothing. Webhook URLs are secrets:
they are never printed, logged or stored; a failure names only the host. Text from CI runs
goes in as data (`db.untrusted`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

import requests

from parity.db.network import CONNECT_TIMEOUT_S
from parity.db.untrusted import literal

TOP = 5  # items listed in a digest; the rest are counted


@dataclass
class DigestReport:
    sent: int = 0
    errors: list[str] = field(default_factory=list)


def kind(url: str) -> str:
    host = urlsplit(url).netloc.lower()
    if "slack" in host:
        return "slack"
    if any(h in host for h in ("logic.azure.com", "powerautomate", "office.com", "teams")):
        return "teams"
    return "slack"  # the Slack shape is the common incoming-webhook shape


def _counts(actions) -> dict[str, int]:
    return {k: sum(1 for a in actions if a.kind == k) for k in ("open", "reopen", "update",
                                                               "resolve")}


def _line(a) -> str:
    where = " · ".join(x for x in (a.framework, a.hardware) if x)
    return f"{a.kind} {a.priority} {a.rule.replace('_', ' ')} {where}: {literal(a.subject, 80, False)}"


def slack_payload(actions, dashboard: str = "") -> dict:
    c = _counts(actions)
    summary = (f"*{c['open'] + c['reopen']} opened*, {c['update']} changed, "
               f"{c['resolve']} resolved on AMD")
    blocks = [{"type": "header", "text": {"type": "plain_text", "text": "Parity alerts"}},
              {"type": "section", "text": {"type": "mrkdwn", "text": summary}}]
    items = "\n".join(f"• {_line(a)}" for a in actions[:TOP])
    if len(actions) > TOP:
        items += f"\n_…and {len(actions) - TOP} more_"
    blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": items}})
    if dashboard:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn",
                                                         "text": f"<{dashboard}|Open Parity>"}]})
    return {"text": summary.replace("*", ""), "blocks": blocks}


def teams_payload(actions, dashboard: str = "") -> dict:
    c = _counts(actions)
    body = [{"type": "TextBlock", "size": "Medium", "weight": "Bolder", "text": "Parity alerts"},
            {"type": "TextBlock", "wrap": True,
             "text": f"{c['open'] + c['reopen']} opened, {c['update']} changed, "
                     f"{c['resolve']} resolved on AMD"}]
    body += [{"type": "TextBlock", "wrap": True, "text": _line(a)} for a in actions[:TOP]]
    if len(actions) > TOP:
        body.append({"type": "TextBlock", "isSubtle": True,
                     "text": f"…and {len(actions) - TOP} more"})
    card = {"type": "AdaptiveCard", "version": "1.4",
            "$schema": "http://adaptivecards.io/schemas/adaptive-card.json", "body": body}
    if dashboard:
        card["actions"] = [{"type": "Action.OpenUrl", "title": "Open Parity", "url": dashboard}]
    return {"type": "message", "attachments": [
        {"contentType": "application/vnd.microsoft.card.adaptive", "content": card}]}


def send(urls: list[str], actions, *, dashboard: str = "", timeout_s: float = 15.0) -> DigestReport:
    """One digest per webhook, only when the round has something to say."""
    report = DigestReport()
    if not actions or not urls:
        return report
    session = requests.Session()
    session.trust_env = False
    for url in urls:
        host = urlsplit(url).netloc or "the webhook"
        payload = teams_payload(actions, dashboard) if kind(url) == "teams" else \
            slack_payload(actions, dashboard)
        try:
            resp = session.post(url, json=payload, timeout=(CONNECT_TIMEOUT_S, timeout_s))
        except requests.RequestException as exc:
            report.errors.append(f"webhook on {host}: {type(exc).__name__}")
            continue
        if resp.status_code >= 300:
            report.errors.append(f"webhook on {host}: HTTP {resp.status_code}")
            continue
        report.sent += 1
    return report
