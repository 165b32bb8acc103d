"""`parity collect github` and `parity collect runners`: sync from GitHub."""
from __future__ import annotations

import json
import sys

from parity.cli import failure
from parity.cli.options import date_arg, engine, repo_arg, slug_arg
from parity.collectors.writer import FRAMEWORKS


def _client(args, settings):
    from parity.collectors.github import Client
    from parity.collectors.settings import read_token

    token = read_token(token_file=args.token_file) if args.token_file else settings.token
    echo = (lambda line: print(line, file=sys.stderr)) if args.verbose else None
    return Client(settings, api_url=args.api_url, token=token,
                  wait=getattr(args, "wait", False), echo=echo)


def cmd_collect_github(args) -> int:
    from parity.collectors.settings import Settings
    from parity.collectors.sync import GitHubSync, Progress, SyncOptions

    settings = Settings.from_env()
    client = _client(args, settings)
    options = SyncOptions(repo=args.repo, workflows=tuple(args.workflow or ()),
                          branch=args.branch or "", event=args.event or "", since=args.since,
                          until=args.until, framework=args.framework)
    echo = (lambda line: print(line, file=sys.stderr))
    sync = GitHubSync(engine(args), client, settings, echo=echo,
                      progress=Progress(enabled=not args.json))
    report = sync.run(options)
    if args.json:
        print(json.dumps(report.as_dict(), indent=2, default=str))
    else:
        c = report.cost
        print(f"{args.repo}: {report.runs_synced} runs synced, {report.runs_already} already "
              f"stored, {report.runs_in_progress} in progress, {report.runs_failed} failed; "
              f"{report.jobs} jobs, {report.artifacts} artifacts ({report.artifacts_expired} "
              f"expired), {report.logs} logs, {report.files} result files, {report.records} records")
        print(f"cost: {c['requests']} requests, {c['not_modified']} answered 304, "
              f"{c['points']} rate-limit points, {c['retries']} retries, {c['downloads']} "
              f"downloads ({c['download_bytes']:,} bytes); rate limit remaining "
              f"{c['rate_remaining'] if c['rate_remaining'] is not None else '?'}"
              f"/{c['rate_limit'] or '?'}")
        for line in report.errors:
            print(f"ERROR {line}", file=sys.stderr)
    if report.stopped:
        print(f"STOPPED {report.stopped}", file=sys.stderr)
        return 3
    return 1 if report.runs_failed else 0


def cmd_collect_buildkite(args) -> int:
    from parity.collectors.buildkite import Client
    from parity.collectors.buildkite_sync import BuildkiteOptions, BuildkiteSync
    from parity.collectors.settings import Secret, Settings, read_file_secret
    from parity.collectors.sync import Progress

    settings = Settings.from_env()
    token = read_file_secret(args.token_file) if args.token_file else settings.buildkite_token
    if token is None:
        print("ERROR no Buildkite API token: set BUILDKITE_API_TOKEN or pass --token-file "
              "(read_builds, read_build_logs and read_artifacts scopes are enough)",
              file=sys.stderr)
        return 2
    assert isinstance(token, Secret)
    echo = (lambda line: print(line, file=sys.stderr))
    client = Client(settings, token, api_url=args.api_url,
                    echo=echo if args.verbose else None)
    options = BuildkiteOptions(org=args.org, pipelines=tuple(args.pipeline),
                               branch=args.branch or "", since=args.since, until=args.until,
                               framework=args.framework)
    sync = BuildkiteSync(engine(args), client, settings, echo=echo,
                         progress=Progress(enabled=not args.json))
    report = sync.run(options)
    if args.json:
        print(json.dumps(report.as_dict(), indent=2, default=str))
    else:
        c = report.cost
        print(f"{args.org}/{','.join(args.pipeline)}: {report.builds_synced} builds synced, "
              f"{report.builds_already} already stored, {report.builds_open} still running, "
              f"{report.builds_failed} failed; {report.jobs} jobs ({report.retried_jobs} retried "
              f"attempts, {report.job_level} with no test output), {report.artifacts} result "
              f"artifacts, {report.logs} log tails ({report.whole_logs} read whole), "
              f"{report.files} result files, {report.records} records")
        print(f"cost: {c['requests']} requests, {c['retries']} retries, {c['rate_waits']} "
              f"rate-limit waits, {c['log_bytes']:,} log bytes, {c['downloads']} downloads "
              f"({c['download_bytes']:,} bytes); rate limit remaining "
              f"{c['rate_remaining'] if c['rate_remaining'] is not None else '?'}"
              f"/{c['rate_limit'] or '?'}")
        for line in report.errors:
            print(f"ERROR {line}", file=sys.stderr)
    if report.stopped:
        print(f"STOPPED {report.stopped}", file=sys.stderr)
        return 3
    return 1 if report.builds_failed or report.failed_pipelines else 0


def cmd_collect_runners(args) -> int:
    from parity.collectors.fleet import collect_runners
    from parity.collectors.github import GitHubError
    from parity.collectors.settings import Settings

    settings = Settings.from_env()
    client = _client(args, settings)
    try:
        report = collect_runners(engine(args), client, repo=args.repo, org=args.org)
    except GitHubError as exc:
        return failure.report(exc)
    if args.json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        pools = ", ".join(f"{k} {v}" for k, v in sorted(report.by_hardware.items())) or "none"
        print(f"{report.scope}: {report.runners} self-hosted runners ({report.online} idle, "
              f"{report.busy} busy, {report.offline} offline; by hardware: {pools}); "
              f"{report.hosted_skipped} GitHub-hosted left out")
    return 0


def add(sub) -> None:
    """Register this group's subcommands on the top-level subparsers."""
    col = sub.add_parser("collect", help="collect CI results from GitHub Actions or Buildkite, and runner state")
    colsub = col.add_subparsers(dest="collect_command", required=True)

    def github_flags(c):
        c.add_argument("--api-url", help="REST API base URL (GitHub Enterprise Server: "
                                         "https://HOST/api/v3; default: $PARITY_GITHUB_API_URL "
                                         "or https://api.github.com)")
        c.add_argument("--token-file", help="read the token from this file instead of "
                                            "$GITHUB_TOKEN / $GH_TOKEN")
        c.add_argument("--json", action="store_true", help="print the report as JSON")
        c.add_argument("--verbose", "-v", action="store_true", help="log retries and waits")

    gh = colsub.add_parser("github", help="sync GitHub Actions runs, jobs, artifacts and logs")
    gh.add_argument("--repo", required=True, metavar="OWNER/NAME", type=repo_arg)
    gh.add_argument("--workflow", action="append", metavar="FILE_OR_ID",
                    help="only this workflow (repeatable); each has its own checkpoint")
    gh.add_argument("--branch")
    gh.add_argument("--event", help="push, schedule, pull_request, workflow_dispatch, ...")
    gh.add_argument("--since", type=date_arg, help="runs created from this date (default: the "
                    "checkpoint, or $PARITY_GITHUB_SINCE_DAYS days back on a first sync)")
    gh.add_argument("--until", type=date_arg, help="runs created before this date (a bounded "
                    "sync that leaves the checkpoint alone)")
    gh.add_argument("--framework", choices=FRAMEWORKS,
                    help="framework of the results (default: manifest, repository name, files)")
    gh.add_argument("--wait", action="store_true", help="when the primary rate limit is "
                    "spent, wait for its reset instead of stopping with a resume point")
    github_flags(gh)
    gh.set_defaults(func=cmd_collect_github)

    bk = colsub.add_parser("buildkite", help="sync Buildkite builds, jobs, artifacts and log "
                                             "tails (vLLM's CI: org vllm, pipelines ci, amd-ci)")
    bk.add_argument("--org", required=True, type=slug_arg, help="organisation slug, e.g. vllm")
    bk.add_argument("--pipeline", action="append", required=True, metavar="SLUG", type=slug_arg,
                    help="pipeline slug (repeatable; each has its own watermark)")
    bk.add_argument("--branch", help="only builds of this branch")
    bk.add_argument("--since", type=date_arg, help="builds finished from this date (default: "
                    "the watermark, or $PARITY_BUILDKITE_SINCE_DAYS days back on a first sync)")
    bk.add_argument("--until", type=date_arg, help="builds created before this date (a bounded "
                    "sync that leaves the watermark alone)")
    bk.add_argument("--framework", choices=FRAMEWORKS,
                    help="framework of the results (default: from the organisation or pipeline)")
    bk.add_argument("--api-url", help="REST API base URL (default: $PARITY_BUILDKITE_API_URL "
                                      "or https://api.buildkite.com/v2)")
    bk.add_argument("--token-file", help="read the API token from this file instead of "
                                         "$BUILDKITE_API_TOKEN")
    bk.add_argument("--json", action="store_true", help="print the report as JSON")
    bk.add_argument("--verbose", "-v", action="store_true", help="log retries and waits")
    bk.set_defaults(func=cmd_collect_buildkite)

    rn = colsub.add_parser("runners", help="snapshot the self-hosted runner fleet")
    where = rn.add_mutually_exclusive_group(required=True)
    where.add_argument("--repo", metavar="OWNER/NAME", type=repo_arg)
    where.add_argument("--org", type=slug_arg)
    github_flags(rn)
    rn.set_defaults(func=cmd_collect_runners)
