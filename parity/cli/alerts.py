"""`parity alerts`: what fires now on AMD, recorded, kept in GitHub issues and told to chat
(and, with --dry-run, only shown). `parity sync` runs the same round after each sync round
when `parity.toml` has an [alerts] table."""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from datetime import datetime, timezone

from parity.cli.options import engine, repo_arg


@dataclass
class Round:
    firing: int
    actions: list
    issues: object = None
    digest: object = None

    def errors(self) -> list[str]:
        return list(getattr(self.issues, "errors", []) or []) + \
            list(getattr(self.digest, "errors", []) or [])


def webhooks_from_env() -> list[str]:
    return [u.strip() for u in os.environ.get("PARITY_ALERT_WEBHOOKS", "").split(",") if u.strip()]


def alert_round(store, db, *, rules=None, framework=None, resolve_after: int = 2,
                dry_run: bool = False, post_issues: str | None = None, max_writes: int = 10,
                api_url: str | None = None, webhooks: list[str] | None = None,
                dashboard: str = "") -> Round:
    """One alerting round: compute, record, post issues, send digests."""
    from parity.collectors import alerting, webhooks as chat
    from parity.dashboard import alerts as rules_mod
    from parity.dashboard import frames

    rule_set = rules if isinstance(rules, dict) else rules_mod.load_rules(
        rules or os.environ.get("PARITY_ALERT_RULES") or None)
    firing = frames.alerts(db, rules=rule_set, framework=framework)
    now = datetime.now(timezone.utc).replace(tzinfo=None, microsecond=0)
    actions = alerting.run(store, firing.to_dict(orient="records"), now=now,
                           resolve_after=resolve_after, dry_run=dry_run,
                           passes=dict(firing.attrs.get("explicit_passes", {})))
    out = Round(len(firing), actions)
    if dry_run:
        return out
    if post_issues:
        from parity.collectors.alert_issues import post
        from parity.collectors.github import Client
        from parity.collectors.settings import Settings

        out.issues = post(store, Client(Settings.from_env(), api_url=api_url), post_issues,
                          actions, max_writes=max_writes, dashboard=dashboard)
    urls = list(webhooks or []) + webhooks_from_env()
    if urls:
        out.digest = chat.send(urls, actions, dashboard=dashboard)
    return out


def summary(r: Round, dry_run: bool, repo: str | None) -> list[str]:
    c = {k: sum(1 for a in r.actions if a.kind == k) for k in ("open", "reopen", "update",
                                                               "resolve")}
    verb = "would" if dry_run else "did"
    lines = [f"{r.firing} alerts firing; this round {verb} open {c['open']}, reopen "
             f"{c['reopen']}, update {c['update']}, resolve {c['resolve']}"]
    if r.issues is not None:
        p = r.issues
        lines.append(f"issues in {repo}: {len(p.opened)} opened, {len(p.updated)} updated, "
                     f"{len(p.closed)} closed, {len(p.acknowledged)} closed by a person (left "
                     f"closed), {p.deferred} left for the next round ({p.writes} writes)")
    if r.digest is not None:
        lines.append(f"chat digests sent: {r.digest.sent}")
    return lines


def cmd_alerts(args) -> int:
    from parity.dashboard import alerts as rules_mod

    try:
        rules = rules_mod.load_rules(args.rules or os.environ.get("PARITY_ALERT_RULES") or None)
    except rules_mod.RulesError as exc:
        print(f"ERROR {exc}", file=sys.stderr)
        return 2
    r = alert_round(engine(args), args.db, rules=rules, framework=args.framework,
                    resolve_after=args.resolve_after, dry_run=args.dry_run,
                    post_issues=args.post_issues, max_writes=args.max_writes,
                    api_url=args.api_url, webhooks=args.webhook, dashboard=args.dashboard_url or "")
    if args.json:
        print(json.dumps({"firing": r.firing, "dry_run": args.dry_run,
                          "actions": [a.as_dict() for a in r.actions],
                          "issues": r.issues.__dict__ if r.issues else None,
                          "digests_sent": r.digest.sent if r.digest else 0}, indent=2, default=str))
    else:
        for line in summary(r, args.dry_run, args.post_issues):
            print(line)
        for a in r.actions:
            where = " · ".join(x for x in (a.framework, a.hardware) if x)
            print(f"{a.kind:8} {a.priority} {a.rule:22} {where:20} {a.subject[:100]}")
    for line in r.errors():
        print(f"ERROR {line}", file=sys.stderr)
    return 1 if r.errors() else 0


def add(sub) -> None:
    """Register this command on the top-level subparsers."""
    al = sub.add_parser("alerts", help="the alerts that fire now on AMD (AMD-only failures, "
                                       "regressions, cliffs, lanes without tests, offline pools)")
    al.add_argument("--rules", help="a rules file (default: the shipped alert_rules.toml; "
                                    "$PARITY_ALERT_RULES)")
    al.add_argument("--framework", choices=("vllm", "sglang", "pytorch", "other"))
    al.add_argument("--resolve-after", type=int, default=2, metavar="ROUNDS",
                    help="healthy observations before an alert resolves: AMD runs in a row "
                         "that passed its test (test alerts), rounds without firing (others); "
                         "default 2")
    al.add_argument("--dry-run", action="store_true",
                    help="print what this round would open, update and resolve; record nothing")
    al.add_argument("--post-issues", metavar="OWNER/NAME", type=repo_arg,
                    help="keep one GitHub issue per alert in this repository (GITHUB_TOKEN)")
    al.add_argument("--max-writes", type=int, default=10,
                    help="issue writes per round at most (default 10)")
    al.add_argument("--webhook", action="append", metavar="URL",
                    help="a Slack or Teams webhook for the round's digest (repeatable; also "
                         "$PARITY_ALERT_WEBHOOKS, comma-separated; never printed)")
    al.add_argument("--dashboard-url", help="the dashboard's address, linked from issues and "
                                            "digests")
    al.add_argument("--api-url", help="GitHub REST API base URL")
    al.add_argument("--json", action="store_true")
    al.set_defaults(func=cmd_alerts)
