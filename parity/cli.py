"""`parity` subcommands. Each one parses its flags and calls into db, collectors or dashboard."""
from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import date

from collectors.formats.detect import FORMATS
from collectors.writer import FRAMEWORKS
from db.engine import make_engine
from db.migrate import upgrade


def _engine(args):
    return make_engine(args.db)


def cmd_ingest(args) -> int:
    from collectors.ingest import IngestOptions, ingest

    options = IngestOptions(framework=args.framework, hardware=args.hardware, repo=args.repo or "",
                            run_id=args.run_id, commit=args.commit or "", branch=args.branch or "",
                            job=args.job, suite=args.suite or "", format=args.format)
    echo = (lambda line: None) if args.quiet else print
    report = ingest(_engine(args), args.paths, options, echo=echo)
    for f in report.rejected if args.quiet else []:
        print(f"REJECTED {f.name}: {f.reason}", file=sys.stderr)
    print(f"ingested {report.count('ingested')} files ({report.records} records), "
          f"{report.count('unchanged')} unchanged, {report.count('skipped')} not result files, "
          f"{report.count('rejected')} rejected")
    return 2 if report.rejected else 0


def cmd_status(args) -> int:
    from db.inventory import inventory

    info = inventory(_engine(args))
    if args.json:
        print(json.dumps(info, indent=2, default=str))
        return 0
    if info.get("schema") is None:
        print("empty store: no schema yet (run `parity db upgrade`, `parity demo` or "
              "`parity ingest PATH`)")
        return 0
    for key in ("runs", "jobs", "artifacts", "tests", "test_results", "benchmark_rows",
                "accuracy_rows", "ingest_errors"):
        print(f"{key:15} {info[key]:>10,}")
    print(f"{'last ingest':15} {info['last_ingest'] or '-':>10}")
    print("hardware seen:")
    for hw in info["hardware"]:
        name = hw["sku"] or hw["arch"] or hw["raw_name"]
        flag = "" if hw["mapped"] else "  (unmapped)"
        print(f"  {hw['vendor']:8} {name:14} gpus={hw['gpu_count']:<3} jobs={hw['jobs']}{flag}")
    return 0


def cmd_db_upgrade(args) -> int:
    upgrade(_engine(args))
    print("store is at the latest schema")
    return 0


def cmd_demo(args) -> int:
    from collectors.demo import build

    end = date.fromisoformat(args.end) if args.end else None
    s = build(_engine(args), days=args.days, end=end, echo=print)
    print(f"demo history: {s.nights} nights, {s.jobs} jobs, {s.test_results} test results, "
          f"{s.benchmark_rows} benchmark rows, {s.accuracy_rows} accuracy rows")
    return 0


def cmd_summary(args) -> int:
    import pandas as pd

    from dashboard import frames

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
        open_ = found[found["status"].isin(["regression", "cliff", "drop"])]
        if not open_.empty:
            print("\nperformance regressions and accuracy cliffs")
            out = open_[["status", "framework", "hardware", "subject", "when", "size"]].copy()
            out["when"] = out["when"].dt.strftime("%Y-%m-%d")
            out["size"] = (out["size"] * 100).round(1).astype(str) + " %"
            print(out.head(10).to_string(index=False))
    return 0


def _date(text: str):
    from collectors.writer import parse_time

    value = parse_time(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"not a date or ISO date-time: {text!r}")
    return value


def _client(args, settings):
    from collectors.github import Client
    from collectors.settings import read_token

    token = read_token(token_file=args.token_file) if args.token_file else settings.token
    echo = (lambda line: print(line, file=sys.stderr)) if args.verbose else None
    return Client(settings, api_url=args.api_url, token=token,
                  wait=getattr(args, "wait", False), echo=echo)


def cmd_collect_github(args) -> int:
    from collectors.settings import Settings
    from collectors.sync import GitHubSync, Progress, SyncOptions

    settings = Settings.from_env()
    client = _client(args, settings)
    options = SyncOptions(repo=args.repo, workflows=tuple(args.workflow or ()),
                          branch=args.branch or "", event=args.event or "", since=args.since,
                          until=args.until, framework=args.framework)
    echo = (lambda line: print(line, file=sys.stderr))
    sync = GitHubSync(_engine(args), client, settings, echo=echo,
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


def cmd_collect_runners(args) -> int:
    from collectors.fleet import collect_runners
    from collectors.github import GitHubError
    from collectors.settings import Settings

    settings = Settings.from_env()
    client = _client(args, settings)
    try:
        report = collect_runners(_engine(args), client, repo=args.repo, org=args.org)
    except GitHubError as exc:
        print(f"ERROR {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        pools = ", ".join(f"{k} {v}" for k, v in sorted(report.by_hardware.items())) or "none"
        print(f"{report.scope}: {report.runners} self-hosted runners ({report.online} idle, "
              f"{report.busy} busy, {report.offline} offline; by hardware: {pools}); "
              f"{report.hosted_skipped} GitHub-hosted left out")
    return 0


def _probe(args):
    from runners.detect import Probe, Recorded

    if getattr(args, "from_file", None):
        with open(args.from_file, encoding="utf-8", errors="replace") as f:
            return Recorded.from_output(f.read())
    return Probe()


def _host(args):
    """The detected host, or None with the reason on stderr."""
    from runners.detect import NoGpu, detect

    try:
        return detect(_probe(args))
    except NoGpu as exc:
        print(f"ERROR {exc}", file=sys.stderr)
        return None


def cmd_runner_detect(args) -> int:
    host = _host(args)
    if host is None:
        return 1
    if args.json:
        print(json.dumps(host.as_dict(), indent=2))
        return 0
    mem = f", {host.memory_mib // 1024} GiB each" if host.memory_mib else ""
    print(f"{host.count}x {host.name} ({host.vendor} {host.sku or '?'} {host.arch}{mem})"
          + (" and other GPUs" if host.mixed else ""))
    print(f"driver {host.driver or '?'}, {'ROCm' if host.vendor == 'amd' else 'CUDA'} "
          f"{host.runtime or '?'}; from {', '.join(host.sources)}")
    print(f"labels: {','.join(host.labels)}")
    return 0


def _runner_api(args):
    from runners.github import RunnerApi
    from runners.settings import Settings

    settings = Settings.from_env(token_file=args.token_file)
    return RunnerApi(settings, api_url=args.api_url), settings


def _scope(args) -> tuple[str, str]:
    return ("repo", args.repo) if args.repo else ("org", args.org)


def cmd_runner_register(args) -> int:
    from pathlib import Path

    from runners.github import ApiError
    from runners.register import Refused, Request, default_name, labels_for, register

    host = None if args.no_detect else _host(args)
    if host is None and not args.no_detect:
        print("       (pass --no-detect with --labels to register without GPU detection)",
              file=sys.stderr)
        return 1
    name = args.name or default_name(host)
    req = Request(scope=_scope(args), name=name, labels=labels_for(host, args.labels or []),
                  group=args.group, persistent=args.persistent,
                  work_dir=Path(args.work_dir or f"parity-runner-{name}"),
                  allow_public=args.allow_public_repo, user=args.user or "")
    if args.print_only:
        from runners.register import container_options
        print(f"would register {req.name} for {req.scope[0]} {req.scope[1]} as a "
              f"{'persistent' if req.persistent else 'just-in-time'} runner in group {req.group}")
        print(f"labels: {','.join(req.labels)}")
        print(f"files: {req.work_dir}/{{start.sh, parity-runner-{req.name}.service, "
              f"container-options, {'.registration-token' if req.persistent else '.jitconfig'}}}")
        print(f"job containers need: {container_options(host) or '(no GPU detected)'}")
        return 0
    api, settings = _runner_api(args)
    try:
        reg = register(api, req, host, settings)
    except (Refused, ApiError) as exc:
        print(f"ERROR {exc}", file=sys.stderr)
        return 1
    for w in reg.warnings:
        print(w, file=sys.stderr)
    if args.json:
        print(json.dumps(reg.as_dict(), indent=2))
        return 0
    print(f"registered {req.name} ({'persistent' if req.persistent else 'just-in-time'}"
          f"{f', runner id {reg.runner_id}' if reg.runner_id else ''}) with labels "
          f"{','.join(req.labels)}")
    for f in reg.files:
        print(f"  wrote {f}")
    print(f"start it with {reg.files[1]} or: sudo cp {reg.files[2]} /etc/systemd/system/ && "
          f"sudo systemctl start {reg.files[2].stem}")
    return 0


def cmd_runner_list(args) -> int:
    from runners.github import ApiError
    from runners.register import describe

    api, _ = _runner_api(args)
    try:
        runners = api.runners(_scope(args))
    except ApiError as exc:
        print(f"ERROR {exc}", file=sys.stderr)
        return 1
    rows = describe(runners)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        print(f"{row['name']:32} {row['state']:8} {row['hardware'] or '-':8} "
              f"{'jit ' if row['ephemeral'] else ''}{','.join(row['labels'])}")
    print(f"{len(rows)} runners")
    return 0


def cmd_runner_remove(args) -> int:
    from runners.github import ApiError
    from runners.register import find_runner

    api, _ = _runner_api(args)
    try:
        runner = find_runner(api, _scope(args), args.name)
        api.remove(_scope(args), runner["id"])
    except ApiError as exc:
        print(f"ERROR {exc}", file=sys.stderr)
        return 1
    print(f"removed {args.name} (id {runner['id']})")
    return 0


def cmd_bundle(args) -> int:
    from pathlib import Path

    from runners.bundle import bundle

    host = None
    if args.hardware in (None, "auto"):
        host = _host(args)  # no GPU: the bundle says nothing about hardware
    b = bundle([Path(p) for p in args.paths], Path(args.out), framework=args.framework or "",
               suite=args.suite or "", host=host,
               hardware="" if args.hardware in (None, "auto") else args.hardware,
               job_id=args.job_id or "", run_id=args.run_id or "", commit=args.commit or "",
               framework_version=args.framework_version or "", image=args.image or "",
               capabilities=tuple(args.capabilities or ()))
    m = b.manifest
    if args.json:
        print(json.dumps({"out": str(b.out), "files": b.files, "status": m.status,
                          "hardware": m.hardware, "job_id": m.job_id, "run_id": m.run_id}, indent=2))
    else:
        print(f"bundled {len(b.files)} result files into {b.out} ({m.status}; hardware "
              f"{m.hardware or '?'}, job {m.job_id or '?'}, run {m.run_id or '?'})")
    return 0


def cmd_report_weekly(args) -> int:
    import re
    from pathlib import Path

    from dashboard import notebook, report

    if args.post_issue and not re.fullmatch(r"[\w.-]+/[\w.-]+#\d+", args.post_issue):
        print("ERROR --post-issue takes OWNER/NAME#NUMBER", file=sys.stderr)
        return 2
    out = Path(args.out or f"report-{args.week or 'latest'}")
    db_url = args.db or None
    nb = notebook.weekly(out, db_url=db_url, week=args.week, since=args.since, until=args.until,
                         framework=args.framework, formats=args.format)
    print(f"wrote {out}/ ({args.format}) and the executed notebook {nb}")
    if args.post_issue:
        from collectors.github import Client, GitHubError
        from collectors.settings import Settings

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
            print(f"ERROR posting the report: {exc}", file=sys.stderr)
            return 1
        print(f"posted to {url or args.post_issue}")
    return 0


def cmd_serve(args) -> int:
    from dashboard import serve

    print(f"Parity at http://{args.address}:{args.port} (read-only; Ctrl-C stops it)", flush=True)
    cmd = serve.command(args.port, args.address)
    os.execve(cmd[0], cmd, serve.environment(args.db))  # Streamlit takes over this process


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="parity", description="Cross-vendor CI parity: "
                                "ingest results and compare AMD and NVIDIA on the same terms.")
    p.add_argument("--db", help="store URL or SQLite path (default: $PARITY_DB_URL, else "
                                "./parity.db)")
    sub = p.add_subparsers(dest="command", required=True)

    ing = sub.add_parser("ingest", help="ingest result files, directories and zip archives")
    ing.add_argument("paths", nargs="+")
    ing.add_argument("--framework", choices=FRAMEWORKS)
    ing.add_argument("--hardware", help="runner label or GPU name, e.g. linux-mi35x-gpu-8")
    ing.add_argument("--repo", help="OWNER/NAME the results belong to")
    ing.add_argument("--run-id", help="CI run id; files of one run and hardware share a job")
    ing.add_argument("--commit", help="head commit SHA")
    ing.add_argument("--branch")
    ing.add_argument("--job", help="job id or name (with --run-id)")
    ing.add_argument("--suite", help="suite name, e.g. kernels")
    ing.add_argument("--format", choices=sorted(FORMATS), help="skip detection")
    ing.add_argument("--quiet", "-q", action="store_true", help="print only the totals and rejects")
    ing.set_defaults(func=cmd_ingest)

    st = sub.add_parser("status", help="what the store holds")
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=cmd_status)

    dbp = sub.add_parser("db", help="store maintenance")
    dbsub = dbp.add_subparsers(dest="db_command", required=True)
    dbsub.add_parser("upgrade", help="run migrations").set_defaults(func=cmd_db_upgrade)

    demo = sub.add_parser("demo", help="fill the store with a deterministic demo history")
    demo.add_argument("--days", type=int, default=60)
    demo.add_argument("--end", help="last night, YYYY-MM-DD (default: yesterday, UTC)")
    demo.set_defaults(func=cmd_demo)

    col = sub.add_parser("collect", help="collect CI results and runner state from GitHub")
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
    gh.add_argument("--repo", required=True, metavar="OWNER/NAME")
    gh.add_argument("--workflow", action="append", metavar="FILE_OR_ID",
                    help="only this workflow (repeatable); each has its own checkpoint")
    gh.add_argument("--branch")
    gh.add_argument("--event", help="push, schedule, pull_request, workflow_dispatch, ...")
    gh.add_argument("--since", type=_date, help="runs created from this date (default: the "
                    "checkpoint, or $PARITY_GITHUB_SINCE_DAYS days back on a first sync)")
    gh.add_argument("--until", type=_date, help="runs created before this date (a bounded "
                    "sync that leaves the checkpoint alone)")
    gh.add_argument("--framework", choices=FRAMEWORKS,
                    help="framework of the results (default: manifest, repository name, files)")
    gh.add_argument("--wait", action="store_true", help="when the primary rate limit is "
                    "spent, wait for its reset instead of stopping with a resume point")
    github_flags(gh)
    gh.set_defaults(func=cmd_collect_github)

    rn = colsub.add_parser("runners", help="snapshot the self-hosted runner fleet")
    where = rn.add_mutually_exclusive_group(required=True)
    where.add_argument("--repo", metavar="OWNER/NAME")
    where.add_argument("--org")
    github_flags(rn)
    rn.set_defaults(func=cmd_collect_runners)

    rn_p = sub.add_parser("runner", help="self-hosted GPU runners: detect, register, list, remove")
    rsub = rn_p.add_subparsers(dest="runner_command", required=True)
    det = rsub.add_parser("detect", help="find this host's GPUs and the labels Parity proposes")
    det.add_argument("--json", action="store_true")
    det.add_argument("--from", dest="from_file", metavar="FILE",
                     help="read a saved tool output (rocminfo, amd-smi, rocm-smi, nvidia-smi)")
    det.set_defaults(func=cmd_runner_detect)

    def scope_flags(c, required=True):
        where = c.add_mutually_exclusive_group(required=required)
        where.add_argument("--repo", metavar="OWNER/NAME")
        where.add_argument("--org")
        c.add_argument("--api-url", help="REST API base URL (default: $PARITY_GITHUB_API_URL "
                                         "or https://api.github.com)")
        c.add_argument("--token-file", help="read the token from this file instead of "
                                            "$GITHUB_TOKEN / $GH_TOKEN")

    reg = rsub.add_parser("register", help="register this host (just-in-time by default)")
    scope_flags(reg)
    reg.add_argument("--labels", nargs="+", metavar="LABEL", help="labels besides the detected ones")
    reg.add_argument("--group", type=int, default=1, help="runner group id (default 1, Default)")
    reg.add_argument("--name", help="runner name (default: host-sku-xN)")
    mode = reg.add_mutually_exclusive_group()
    mode.add_argument("--ephemeral", action="store_true", default=True,
                      help="just-in-time: one job, no token left on the host (default)")
    mode.add_argument("--persistent", action="store_true",
                      help="a long-lived runner configured with a registration token")
    reg.add_argument("--work-dir", help="where to write the start script, unit and secret file")
    reg.add_argument("--user", help="the user the systemd unit runs as (default: you)")
    reg.add_argument("--print-only", action="store_true", help="say what would be done; "
                     "ask GitHub for nothing and write nothing")
    reg.add_argument("--allow-public-repo", action="store_true",
                     help="register for a public repository anyway (unsafe; warned)")
    reg.add_argument("--no-detect", action="store_true", help="skip GPU detection")
    reg.add_argument("--from", dest="from_file", metavar="FILE", help=argparse.SUPPRESS)
    reg.add_argument("--json", action="store_true")
    reg.set_defaults(func=cmd_runner_register)

    ls = rsub.add_parser("list", help="the repository's or organisation's runners")
    scope_flags(ls)
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=cmd_runner_list)

    rm = rsub.add_parser("remove", help="remove a runner by name")
    rm.add_argument("name")
    scope_flags(rm)
    rm.set_defaults(func=cmd_runner_remove)

    bd = sub.add_parser("bundle", help="in a CI job: gather result files and parity-manifest.json "
                                       "for upload-artifact")
    bd.add_argument("paths", nargs="+", help="result files or directories")
    bd.add_argument("--out", required=True, help="the directory to upload")
    bd.add_argument("--framework", choices=FRAMEWORKS)
    bd.add_argument("--suite")
    bd.add_argument("--hardware", help="SKU or label (default: auto, detected on this host)")
    bd.add_argument("--job-id", help="default $PARITY_JOB_ID (pass ${{ job.check_run_id }})")
    bd.add_argument("--run-id", help="default $GITHUB_RUN_ID")
    bd.add_argument("--commit", help="default $GITHUB_SHA")
    bd.add_argument("--framework-version")
    bd.add_argument("--image", help="the container image the job ran in")
    bd.add_argument("--capabilities", nargs="+", metavar="NAME",
                    help="what the job exercised together: disaggregation, wide-ep, fp4, ... "
                         "(see db/capabilities.toml)")
    bd.add_argument("--from", dest="from_file", metavar="FILE", help=argparse.SUPPRESS)
    bd.add_argument("--json", action="store_true")
    bd.set_defaults(func=cmd_bundle)

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

    sv = sub.add_parser("serve", help="the read-only web dashboard (Streamlit)")
    sv.add_argument("--port", type=int, default=8501)
    sv.add_argument("--address", default="127.0.0.1",
                    help="address to listen on (default 127.0.0.1; 0.0.0.0 for everyone)")
    sv.set_defaults(func=cmd_serve)

    sm = sub.add_parser("summary", help="print the parity scorecard")
    sm.add_argument("--framework", choices=FRAMEWORKS)
    sm.set_defaults(func=cmd_summary)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        status = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return status
    except BrokenPipeError:  # `parity summary | head`: the reader left; stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
