"""`parity sync`: every source of the sources file, once or on a schedule."""
from __future__ import annotations

import json
import signal
import sys
import threading

from parity.cli.options import date_arg, engine

BUSY = 4  # another sync holds the lock


def cmd_sync(args) -> int:
    from parity.collectors import config as configs
    from parity.collectors import schedule
    from parity.collectors.settings import Settings

    path = args.config or configs.path_from_env()
    try:
        config = configs.load(path)
        names = tuple(args.source or ())
        for name in names:
            config.source(name)
        interval = schedule.parse_interval(args.every) if args.every else None
    except (configs.ConfigError, ValueError) as exc:
        print(f"ERROR {exc}", file=sys.stderr)
        return 2
    if not config.sources:
        print(f"ERROR {path}: lists no [[source]]; see parity.example.toml", file=sys.stderr)
        return 2
    settings = Settings.from_env()
    store = engine(args)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    log = (lambda line: print(line, file=sys.stderr, flush=True)) if args.json else \
        (lambda line: print(line, flush=True))
    if interval is not None and args.since:
        print("ERROR --since backfills once; run it without --every", file=sys.stderr)
        return 2
    def alerts(cfg) -> None:
        if cfg.alerts is not None:
            _alerts_round(store, args.db, cfg.alerts, log)

    if interval is not None:
        return schedule.every(store, path, settings, interval, stop, names=names, log=log,
                              after_round=alerts)
    try:
        with schedule.round_lock(schedule.lock_path(store)):
            outcomes = schedule.sync_round(store, config, settings, names=names, stop=stop,
                                           log=log, since=args.since)
            alerts(config)
    except schedule.Busy as exc:
        print(f"ERROR {exc}; this round is skipped", file=sys.stderr)
        return BUSY
    if args.json:
        print(json.dumps([o.__dict__ for o in outcomes], indent=2, default=str))
    failed = [o.name for o in outcomes if o.status == schedule.FAILED]
    if failed:
        print(f"ERROR sources that failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 3 if any(o.status == schedule.STOPPED for o in outcomes) else 0


def _alerts_round(store, db, cfg, log) -> None:
    """The alerting round `[alerts]` asks for; its failure is logged, never fatal to sync."""
    from datetime import datetime, timezone

    from parity.cli.alerts import alert_round, summary

    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        r = alert_round(store, db, rules=cfg.rules, resolve_after=cfg.resolve_after,
                        post_issues=cfg.post_issues, max_writes=cfg.max_writes,
                        dashboard=cfg.dashboard_url)
    except Exception as exc:  # noqa: BLE001 - one line, and the next round tries again
        log(f"{stamp} alerts: failed: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
        return
    for line in summary(r, False, cfg.post_issues):
        log(f"{stamp} alerts: {line}")
    for line in r.errors():
        log(f"{stamp} alerts: error: {line}")


def add(sub) -> None:
    """Register this command on the top-level subparsers."""
    sy = sub.add_parser("sync", help="sync every source of parity.toml (GitHub Actions, "
                                     "Buildkite), once or --every INTERVAL")
    sy.add_argument("--config", help="the sources file (default: $PARITY_CONFIG, else "
                                     "./parity.toml)")
    sy.add_argument("--source", action="append", metavar="NAME",
                    help="only this source (repeatable)")
    sy.add_argument("--every", metavar="INTERVAL", help="keep syncing, a round every INTERVAL "
                    "(30m, 1h, ...), until SIGTERM; rounds never overlap")
    sy.add_argument("--since", type=date_arg, help="backfill every source from this date "
                    "(default: each source's checkpoint)")
    sy.add_argument("--json", action="store_true", help="print each source's report as JSON")
    sy.set_defaults(func=cmd_sync)
