"""The `parity` command: one module per command group, each wiring its flags to db,
collectors, runners or dashboard. This module only assembles them and runs one."""
from __future__ import annotations

import argparse
import os
import sys

from parity.cli import alerts, collect, failure, report, runner, serve, store, sync

GROUPS = (store, collect, sync, runner, report, alerts, serve)


def version() -> str:
    """The installed distribution's version (the source tree's when not installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("parity-ci")
    except PackageNotFoundError:
        return "0+unknown"


def build_parser() -> argparse.ArgumentParser:
    p = failure.Parser(prog="parity", description="Cross-vendor CI parity: ingest results and "
                       "compare AMD and NVIDIA on the same terms.")
    p.add_argument("--version", action="version", version=f"parity {version()}")
    p.add_argument("--debug", action="store_true", help="on failure, show the traceback")
    p.add_argument("--db", help="store URL or SQLite path (default: $PARITY_DB_URL, else "
                                "./parity.db)")
    sub = p.add_subparsers(dest="command", required=True)
    for group in GROUPS:
        group.add(sub)
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
    except KeyboardInterrupt:
        print("ERROR interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # one line, not a traceback (unless --debug)
        if args.debug:
            raise
        return failure.report(exc)
