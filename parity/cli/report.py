"""`parity report weekly` and `parity summary`: parity figures for people to read."""
from __future__ import annotations

import sys

from parity.cli import failure
from parity.collectors.writer import FRAMEWORKS


def cmd_report_weekly(args) -> int:
    import re
    from pathlib import Path

    from parity.dashboard import notebook, report, tables

    if args.post_issue and not re.fullmatch(r"[\w.-]+/[\w.-]+#\d+", args.post_issue):
        print("ERROR --post-issue takes OWNER/NAME#NUMBER", file=sys.stderr)
        return 2
    out = Path(args.out or f"report-{args.week or 'latest'}")
    db_url = args.db or None
    store = tables.open_store(db_url)
    if store.url.get_backend_name() != "sqlite":  # a server that is down: say so, here
        with store.connect():
            pass
    store.dispose()
    nb = notebook.weekly(out, db_url=db_url, week=args.week, since=args.since, until=args.until,
                         framework=args.framework, formats=args.format)
    print(f"wrote {out}/ ({args.format}) and the executed notebook {nb}")
    if args.post_issue:
        from parity.collectors.github import Client, GitHubError
        from parity.collectors.settings import Settings

        md = (out / "report.md")
        if not md.exists():
            print("ERROR --post-issue needs the md format", file=sys.stderr)
            return 2
        body = report.comment_body(md.read_text(encoding="utf-8"))
        repo, number = args.post_issue.split("#")
        settings = Settings.from_env()
        try:
            url = Client(settings, api_url=args.api_url).comment(repo, int(number), body)
        except GitHubError as exc:
            status, line = failure.describe(exc)
            print(f"ERROR posting the report: {failure.redact(line)}", file=sys.stderr)
            return status
        print(f"posted to {url or args.post_issue}")
    return 0


def cmd_summary(args) -> int:
    import pandas as pd

    from parity.dashboard import frames

    df = frames.scorecard(args.db, framework=args.framework)
    if df.empty:
        print("no data yet: load some with `parity demo`, `parity ingest PATH` or "
              "`parity collect github`")
        return 0
    df = df.assign(run_at=df["run_at"].dt.strftime("%Y-%m-%d"), commit=df["commit"].str[:10],
                   pass_rate=(df["pass_rate"] * 100).round(1))
    parity = frames.pass_rate_parity(args.db, framework=args.framework, by="hardware")
    found = frames.regressions(args.db, framework=args.framework,
                               kinds=("performance", "accuracy"))
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(df.to_string(index=False))
        if not parity.empty:
            print("\nsame-denominator pass rate (AMD on the tests its NVIDIA reference ran), %")
            cols = ["framework", "amd_hardware", "nvidia_hardware", "denominator",
                    "same_denominator_rate", "nvidia_rate"]
            out = parity[cols].copy()
            for c in ("same_denominator_rate", "nvidia_rate"):
                out[c] = (out[c] * 100).round(1)
            print(out.to_string(index=False))
        open_ = found[found["status"].isin(["regression", "cliff", "drop", "recovered"])]
        if not open_.empty:
            print("\nperformance regressions (open, or recovered) and accuracy cliffs")
            out = open_[["status", "framework", "hardware", "subject", "when", "recovered",
                         "size"]].copy()
            out["when"] = out["when"].dt.strftime("%Y-%m-%d")
            out["recovered"] = out["recovered"].dt.strftime("%Y-%m-%d").fillna("-")
            out["size"] = (out["size"] * 100).round(1).astype(str) + " %"
            print(out.head(12).to_string(index=False))
    return 0


def cmd_explain(args) -> int:
    import json

    import pandas as pd

    from parity.dashboard import frames

    out = frames.provenance(args.db, figure=args.figure, framework=args.framework,
                            hardware=args.hardware, week=args.week, since=args.since,
                            until=args.until)
    if out.empty:
        print(f"no {args.figure} for {args.framework or 'any framework'} on "
              f"{args.hardware or 'any AMD hardware'} in this window", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(out.assign(run_at=out["run_at"].astype(str))
                         .to_dict(orient="records"), indent=2, default=str))
        return 0
    shown = out.assign(run_at=out["run_at"].dt.strftime("%Y-%m-%d %H:%M"),
                       commit=out["commit"].fillna("").str[:10],
                       sha256=out["sha256"].fillna("").str[:16])
    cols = ["role", "framework", "hardware", "run_id", "run_at", "commit", "job_id", "path",
            "format", "records", "sha256"]
    with pd.option_context("display.width", 250, "display.max_columns", 20,
                           "display.max_colwidth", 60):
        print(f"{args.figure}: {len(out)} inputs ({out['run_id'].nunique()} runs, "
              f"{out['job_id'].nunique()} jobs, {out['sha256'].nunique()} files)")
        print(shown[cols].to_string(index=False))
    return 0


def add(sub) -> None:
    """Register this group's subcommands on the top-level subparsers."""
    rp = sub.add_parser("report", help="parity reports")
    rpsub = rp.add_subparsers(dest="report_command", required=True)
    wk = rpsub.add_parser("weekly", help="the weekly parity report: HTML, Markdown, CSV, JSON")
    wk.add_argument("--week", help="ISO week, e.g. 2026-W48 (default: the last whole week)")
    wk.add_argument("--since", help="start date of a custom window (instead of --week)")
    wk.add_argument("--until", help="end date of a custom window")
    wk.add_argument("--framework", nargs="+", choices=FRAMEWORKS)
    wk.add_argument("--out", help="output directory (default: report-WEEK)")
    wk.add_argument("--format", default="html,md,csv,json",
                    help="comma-separated: html, md, csv, json (default: all)")
    wk.add_argument("--post-issue", metavar="OWNER/NAME#N",
                    help="post the Markdown as a comment on that issue (needs GITHUB_TOKEN)")
    wk.add_argument("--api-url", help="REST API base URL for --post-issue")
    wk.set_defaults(func=cmd_report_weekly)

    ex = sub.add_parser("explain", help="list the runs, jobs and files (with their SHA-256) "
                                        "one headline figure comes from")
    ex.add_argument("figure", choices=("same_denominator_rate", "nvidia_rate", "coverage",
                                       "verdict_completeness", "perf_ratio", "accuracy_diff"))
    ex.add_argument("--framework", choices=FRAMEWORKS)
    ex.add_argument("--hardware", help="the AMD hardware, e.g. mi355x")
    ex.add_argument("--week", help="ISO week, e.g. 2026-W48")
    ex.add_argument("--since")
    ex.add_argument("--until")
    ex.add_argument("--json", action="store_true")
    ex.set_defaults(func=cmd_explain)

    sm = sub.add_parser("summary", help="print the parity scorecard")
    sm.add_argument("--framework", choices=FRAMEWORKS)
    sm.set_defaults(func=cmd_summary)
