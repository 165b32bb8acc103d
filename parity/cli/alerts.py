"""`parity alerts`: what fires now on AMD, recorded (and, with --dry-run, only shown)."""
from __future__ import annotations

import json
import os
import sys
from datetime import datetime, timezone

from parity.cli.options import engine, repo_arg


def cmd_alerts(args) -> int:
    from parity.collectors import alerting
    from parity.dashboard import alerts as rules_mod
    from parity.dashboard import frames

    try:
        rules = rules_mod.load_rules(args.rules or os.environ.get("PARITY_ALERT_RULES") or None)
    except rules_mod.RulesError as exc:
        print(f"ERROR {exc}", file=sys.stderr)
        return 2
    store = engine(args)
    firing = frames.alerts(args.db, rules=rules, framework=args.framework)
    now = datetime.now(timezone.utc).replace(tzinfo=None, microsecond=0)
    actions = alerting.run(store, firing.to_dict(orient="records"), now=now,
                           resolve_after=args.resolve_after, dry_run=args.dry_run)
    posted = None
    if args.post_issues and not args.dry_run:
        from parity.collectors.alert_issues import post
        from parity.collectors.github import Client
        from parity.collectors.settings import Settings

        settings = Settings.from_env()
        posted = post(store, Client(settings, api_url=args.api_url), args.post_issues, actions,
                      max_writes=args.max_writes)
    if args.json:
        print(json.dumps({"firing": len(firing), "dry_run": args.dry_run,
                          "actions": [a.as_dict() for a in actions],
                          "issues": posted.__dict__ if posted else None}, indent=2, default=str))
        return 1 if posted and posted.errors else 0
    counts = {k: sum(1 for a in actions if a.kind == k) for k in ("open", "reopen", "update",
                                                                  "resolve")}
    verb = "would" if args.dry_run else "did"
    print(f"{len(firing)} alerts firing; this round {verb} open {counts['open']}, reopen "
          f"{counts['reopen']}, update {counts['update']}, resolve {counts['resolve']}")
    for a in actions:
        where = " · ".join(x for x in (a.framework, a.hardware) if x)
        print(f"{a.kind:8} {a.priority} {a.rule:22} {where:20} {a.subject[:100]}")
    if posted is not None:
        print(f"issues in {args.post_issues}: {len(posted.opened)} opened, {len(posted.updated)} "
              f"updated, {len(posted.closed)} closed, {len(posted.acknowledged)} closed by a "
              f"person (left closed), {posted.deferred} left for the next round "
              f"({posted.writes} writes)")
        for line in posted.errors:
            print(f"ERROR {line}", file=sys.stderr)
        return 1 if posted.errors else 0
    return 0


def add(sub) -> None:
    """Register this command on the top-level subparsers."""
    al = sub.add_parser("alerts", help="the alerts that fire now on AMD (AMD-only failures, "
                                       "regressions, cliffs, lanes without tests, offline pools)")
    al.add_argument("--rules", help="a rules file (default: the shipped alert_rules.toml; "
                                    "$PARITY_ALERT_RULES)")
    al.add_argument("--framework", choices=("vllm", "sglang", "pytorch", "other"))
    al.add_argument("--resolve-after", type=int, default=2, metavar="ROUNDS",
                    help="rounds in a row without firing before an alert resolves (default 2)")
    al.add_argument("--dry-run", action="store_true",
                    help="print what this round would open, update and resolve; record nothing")
    al.add_argument("--post-issues", metavar="OWNER/NAME", type=repo_arg,
                    help="keep one GitHub issue per alert in this repository (GITHUB_TOKEN)")
    al.add_argument("--max-writes", type=int, default=10,
                    help="issue writes per round at most (default 10)")
    al.add_argument("--api-url", help="GitHub REST API base URL")
    al.add_argument("--json", action="store_true")
    al.set_defaults(func=cmd_alerts)
