"""`parity runner detect|register|list|remove` and `parity bundle`: the runner side."""
from __future__ import annotations

import argparse
import json
import sys

from parity.cli import failure
from parity.cli.options import repo_arg, slug_arg
from parity.collectors.writer import FRAMEWORKS


def _probe(args):
    from parity.runners.detect import Probe, Recorded

    if getattr(args, "from_file", None):
        with open(args.from_file, encoding="utf-8", errors="replace") as f:
            return Recorded.from_output(f.read())
    return Probe()


def _host(args):
    """The detected host, or None with the reason on stderr."""
    from parity.runners.detect import NoGpu, detect

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
    from parity.runners.github import RunnerApi
    from parity.runners.settings import Settings

    settings = Settings.from_env(token_file=args.token_file)
    return RunnerApi(settings, api_url=args.api_url), settings


def _scope(args) -> tuple[str, str]:
    return ("repo", args.repo) if args.repo else ("org", args.org)


def cmd_runner_register(args) -> int:
    from pathlib import Path

    from parity.runners.github import ApiError
    from parity.runners.register import Refused, Request, default_name, labels_for, register

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
        from parity.runners.register import container_options
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
    except Refused as exc:
        print(f"ERROR {exc}", file=sys.stderr)
        return failure.USAGE
    except ApiError as exc:
        return failure.report(exc)
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
    from parity.runners.github import ApiError
    from parity.runners.register import describe

    api, _ = _runner_api(args)
    try:
        runners = api.runners(_scope(args))
    except ApiError as exc:
        return failure.report(exc)
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
    from parity.runners.github import ApiError
    from parity.runners.register import find_runner

    api, _ = _runner_api(args)
    try:
        runner = find_runner(api, _scope(args), args.name)
        api.remove(_scope(args), runner["id"])
    except ApiError as exc:
        return failure.report(exc)
    print(f"removed {args.name} (id {runner['id']})")
    return 0


def cmd_bundle(args) -> int:
    from pathlib import Path

    from parity.runners.bundle import bundle

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


def add(sub) -> None:
    """Register this group's subcommands on the top-level subparsers."""
    rn_p = sub.add_parser("runner", help="self-hosted GPU runners: detect, register, list, remove")
    rsub = rn_p.add_subparsers(dest="runner_command", required=True)
    det = rsub.add_parser("detect", help="find this host's GPUs and the labels Parity proposes")
    det.add_argument("--json", action="store_true")
    det.add_argument("--from", dest="from_file", metavar="FILE",
                     help="read a saved tool output (rocminfo, amd-smi, rocm-smi, nvidia-smi)")
    det.set_defaults(func=cmd_runner_detect)

    def scope_flags(c, required=True):
        where = c.add_mutually_exclusive_group(required=required)
        where.add_argument("--repo", metavar="OWNER/NAME", type=repo_arg)
        where.add_argument("--org", type=slug_arg)
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
