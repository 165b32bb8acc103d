"""`parity ingest`, `status`, `db` and `demo`: fill the store and say what it holds."""
from __future__ import annotations

import json
import sys
from datetime import date

from parity.cli.options import engine
from parity.collectors.formats.detect import FORMATS
from parity.collectors.writer import FRAMEWORKS
from parity.db.migrate import upgrade


def cmd_ingest(args) -> int:
    from parity.collectors.ingest import IngestOptions, ingest

    options = IngestOptions(framework=args.framework, hardware=args.hardware, repo=args.repo or "",
                            run_id=args.run_id, commit=args.commit or "", branch=args.branch or "",
                            job=args.job, suite=args.suite or "", format=args.format)
    echo = (lambda line: None) if args.quiet else print
    report = ingest(engine(args), args.paths, options, echo=echo)
    for f in report.rejected if args.quiet else []:
        print(f"REJECTED {f.name}: {f.reason}", file=sys.stderr)
    print(f"ingested {report.count('ingested')} files ({report.records} records), "
          f"{report.count('unchanged')} unchanged, {report.count('skipped')} not result files, "
          f"{report.count('rejected')} rejected")
    partial = [f for f in report.files if f.status in ("ingested", "unchanged") and f.reason]
    if partial:
        print(f"{len(partial)} files had lines left out (see above, and `ingest_error`)",
              file=sys.stderr)
    return 2 if report.rejected else (1 if partial else 0)


def cmd_status(args) -> int:
    from parity.db.inventory import inventory

    info = inventory(engine(args))
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
    upgrade(engine(args))
    print("store is at the latest schema")
    return 0


def cmd_db_schema(args) -> int:
    from parity.db.migrate import SQLITE_SCHEMA, chain_schema

    schema = chain_schema()
    if args.write:
        SQLITE_SCHEMA.write_text(schema, encoding="utf-8")
        print(f"wrote {SQLITE_SCHEMA}")
    else:
        print(schema, end="")
    return 0


def cmd_db_rebuild_state(args) -> int:
    from parity.db import state, store, streaks

    eng = engine(args)
    upgrade(eng)
    with eng.begin() as conn:
        store.sum_summaries(conn)
        rows = store.name_series(conn)
    jobs = state.rebuild(eng, echo=print)  # after the series: the benchmark arrays carry them
    lanes = streaks.rebuild(eng)  # from the vectors
    store.tidy(eng)
    print(f"rebuilt the outcome vectors of {jobs:,} jobs from their raw results, every "
          f"job's totals from its group counts, the series of {rows:,} benchmark rows and "
          f"the failure streaks of {lanes:,} lanes")
    return 0


def cmd_db_prune(args) -> int:
    from datetime import datetime, timedelta, timezone

    from parity.db import retention, store
    from parity.db.settings import Settings

    days = args.days or Settings.from_env().raw_retention_days
    if not days:
        print("nothing to do: give --days N or set PARITY_RAW_RETENTION_DAYS", file=sys.stderr)
        return 2
    eng = engine(args)
    upgrade(eng)
    before = datetime.now(timezone.utc).replace(tzinfo=None) - timedelta(days=days)
    if args.dry_run:
        print(f"would prune {len(retention.prunable(eng, before)):,} jobs of runs created "
              f"before {before:%Y-%m-%d %H:%M} UTC")
        return 0
    done = retention.prune(eng, before, echo=print)
    store.tidy(eng)
    print(f"pruned {done.rows:,} plain passed results of {done.jobs:,} jobs of runs created "
          f"before {before:%Y-%m-%d %H:%M} UTC (their outcome vectors keep them)")
    return 0


def cmd_demo(args) -> int:
    from parity.collectors.demo import build, plan

    end = date.fromisoformat(args.end) if args.end else None
    days = args.days or (365 if args.size == "year" else 60)
    sizes = plan(days, results=args.results, profile=args.size)
    s = build(engine(args), days=days, end=end, sizes=sizes, echo=print)
    print(f"demo history: {s.nights} nights, {s.jobs} jobs, {s.test_results} test results, "
          f"{s.benchmark_rows} benchmark rows, {s.accuracy_rows} accuracy rows")
    return 0


def add(sub) -> None:
    """Register this group's subcommands on the top-level subparsers."""
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
    sch = dbsub.add_parser("schema", help="print the SQLite schema the migrations make (a new "
                           "SQLite store is created from it)")
    sch.add_argument("--write", action="store_true", help="write it to the file new stores "
                     "are made from (after adding a revision)")
    sch.set_defaults(func=cmd_db_schema)
    dbsub.add_parser("rebuild-state", help="derive the state kept with the results (per-job "
                     "outcome vectors, job totals, benchmark rows' series, lanes' failure "
                     "streaks) again from the raw rows").set_defaults(
        func=cmd_db_rebuild_state)
    prune = dbsub.add_parser("prune", help="drop the plain passed results of old runs; their "
                             "outcome vectors keep what every view shows")
    prune.add_argument("--days", type=int, help="runs older than this many days (default: "
                       "PARITY_RAW_RETENTION_DAYS)")
    prune.add_argument("--dry-run", action="store_true", help="only say how many jobs")
    prune.set_defaults(func=cmd_db_prune)

    demo = sub.add_parser("demo", help="fill the store with a deterministic demo history")
    demo.add_argument("--days", type=int, help="nights (default 60; 365 with --size year)")
    demo.add_argument("--size", choices=("demo", "year"), default="demo",
                      help="tests per lane: demo (thousands) or year (real size, with 365 "
                           "nights over 50 million results)")
    demo.add_argument("--results", type=int, metavar="N",
                      help="scale the demo lanes so the history holds about N test results")
    demo.add_argument("--end", help="last night, YYYY-MM-DD (default: yesterday, UTC)")
    demo.set_defaults(func=cmd_demo)
