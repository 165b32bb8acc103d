"""`make mutate`: mutation testing of the modules where a silent bug would publish a wrong
figure or leak a secret (targets.toml), with cosmic-ray.

Each worker gets a scratch copy of the working tree (tracked and new files) under
`build/mutate/wN/src` with its own virtual environment, so mutating a file in place never
touches the checkout and two workers never see each other's mutants. Per target:

1. its tests run once on the unmutated code under `coverage` (they must pass; their time
   sets the per-mutant timeout, the lines they execute are recorded);
2. `cosmic-ray init` lists the mutants; the operators of operators.toml are kept, mutants
   inside type annotations are dropped (never evaluated here: `from __future__ import
   annotations`), and mutants on lines the tests never execute are counted as surviving
   without being run;
3. `cosmic-ray exec` runs the tests (pytest -x) against every remaining mutant.

The figures go to stdout and to RESULTS.md; a survivor is either killed by a new test or
explained in survivors.md (matched by module, operator and the mutated line's text). Exit
status 1 when a target kills less than --min percent or a survivor is unexplained."""
from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import tomllib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
NOT_RUN = "not run: the target's tests never execute this line"


@dataclass
class Outcome:
    module: str
    tests: list[str]
    baseline_s: float = 0.0
    mutants: int = 0
    killed: int = 0
    survived: list[dict] = field(default_factory=list)  # run and not noticed
    not_executed: list[dict] = field(default_factory=list)
    incompetent: int = 0
    wall_s: float = 0.0
    error: str = ""

    @property
    def counted(self) -> int:
        return self.killed + len(self.survived) + len(self.not_executed)

    @property
    def score(self) -> float:
        return 100.0 * self.killed / self.counted if self.counted else 0.0


def sh(cmd: list[str], cwd: Path | None = None, env: dict | None = None,
       check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed ({done.returncode}):\n"
                           f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return done


def prepare(base: Path) -> tuple[Path, Path]:
    """A fresh copy of the working tree in base/src, and base/venv with Parity installed
    from it (reinstalled only when pyproject.toml changed)."""
    src, venv = base / "src", base / "venv"
    if src.exists():
        shutil.rmtree(src)
    files = sh(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT).stdout
    for name in filter(None, files.split("\0")):
        if not (ROOT / name).is_file():
            continue  # deleted in the working tree
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, src / name)
    shared = ROOT.parent / "shared"
    if shared.is_dir() and not (base / "shared").exists():
        (base / "shared").symlink_to(shared)
    stamp = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    marker = venv / ".parity-pyproject"
    if not marker.exists() or marker.read_text() != stamp:
        shutil.rmtree(venv, ignore_errors=True)
        sh([sys.executable, "-m", "venv", str(venv)])
        sh([str(venv / "bin/pip"), "install", "--quiet", "-e", f"{src}[test]",
            "cosmic-ray>=8.3", "coverage>=7"])
        marker.write_text(stamp)
    return src, venv


def annotation_lines(path: Path) -> set[tuple[int, int, int, int]]:
    """(start row, start col, end row, end col) of every annotation in the module."""
    spans = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        found = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns:
            found.append(node.returns)
        if isinstance(node, ast.arg) and node.annotation:
            found.append(node.annotation)
        if isinstance(node, ast.AnnAssign):
            found.append(node.annotation)
        for a in found:
            spans.add((a.lineno, a.col_offset, a.end_lineno, a.end_col_offset))
    return spans


def multiplications(path: Path) -> set[tuple[int, int, int, int]]:
    """Spans of the real `*` operations: cosmic-ray also offers the bare `*` of a signature
    (keyword-only arguments) as a multiplication to replace, which is no operation at all."""
    return {(n.lineno, n.col_offset, n.end_lineno, n.end_col_offset)
            for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult)}


def _inside(pos: tuple[int, int], span: tuple[int, int, int, int]) -> bool:
    return (span[0], span[1]) <= tuple(pos) <= (span[2], span[3])


def statement_starts(path: Path) -> dict[int, int]:
    """Each line -> the first line of the innermost statement holding it (coverage reports
    a statement by its first line; a mutant may sit on a continuation line)."""
    starts: dict[int, int] = {}
    nodes = [n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(n, ast.stmt)]
    for node in sorted(nodes, key=lambda n: n.lineno):  # later starts are inner: they win
        for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
            if starts.get(line, 0) <= node.lineno:
                starts[line] = node.lineno
    return starts


def filter_session(session: Path, module: Path, executed: set[int]) -> None:
    """Drop annotation mutants; count mutants on never-executed statements as surviving
    (a line outside any statement, such as a decorator, is always run)."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

    spans = annotation_lines(module)
    products = multiplications(module)
    starts = statement_starts(module)
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item in list(db.pending_work_items):
            m = item.mutations[0]
            start = (m.start_pos[0], m.start_pos[1])
            if any(_inside(start, s) for s in spans):
                db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED,
                                                      output="type annotation"))
            elif "ReplaceBinaryOperator_Mul_" in m.operator_name and not any(
                    _inside(start, s) for s in products):
                db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED,
                                                      output="keyword-only marker"))
            elif m.start_pos[0] in starts and starts[m.start_pos[0]] not in executed:
                db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.NORMAL,
                                                      test_outcome=TestOutcome.SURVIVED,
                                                      output=NOT_RUN))


def _forget_survivors(session: Path) -> None:
    """Make the session's survivors pending again."""
    import sqlite3

    db = sqlite3.connect(session)
    db.execute("DELETE FROM work_results WHERE test_outcome = 'SURVIVED'")
    db.commit()
    db.close()


def run_target(target: dict, src: Path, venv: Path, base: Path, ops: dict,
               resume: bool = False) -> Outcome:
    module, tests = target["module"], list(target["tests"])
    out = Outcome(module, tests)
    started = time.monotonic()
    missing = [t for t in tests if not (src / t).exists()]
    if missing:
        out.error = f"missing test files: {', '.join(missing)}"
        return out
    name = Path(module).stem
    work = base / name
    keep = base.parent / "sessions" / name  # outlives the worker's scratch folder
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    session = work / "session.sqlite"
    py = str(venv / "bin/python")
    pytest = [py, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    t0 = time.monotonic()
    base_run = sh([py, "-m", "coverage", "run", f"--data-file={work / 'cov'}",
                   f"--include={src / module}", "-m", "pytest", "-x", "-q", "-p",
                   "no:cacheprovider", *tests], cwd=src, env=env, check=False)
    out.baseline_s = time.monotonic() - t0
    if base_run.returncode != 0:
        out.error = "the tests fail on the unmutated code:\n" + base_run.stdout[-1500:]
        return out
    sh([py, "-m", "coverage", "json", f"--data-file={work / 'cov'}", "-o", str(work / "cov.json")],
       cwd=src, env=env)
    files = json.loads((work / "cov.json").read_text())["files"]
    executed = set()
    for data in files.values():
        executed |= set(data["executed_lines"])
    config = work / "config.toml"
    config.write_text(
        "[cosmic-ray]\n"
        f"module-path = {json.dumps(module)}\n"
        f"timeout = {max(30.0, 3 * out.baseline_s):.0f}\n"
        "excluded-modules = []\n"
        f"test-command = {json.dumps(' '.join(pytest))}\n"
        "[cosmic-ray.distributor]\nname = \"local\"\n"
        "[cosmic-ray.filters.operators-filter]\n"
        f"exclude-operators = {json.dumps(ops['exclude-operators'])}\n")
    cr = venv / "bin"
    stamp = hashlib.sha256((src / module).read_bytes() + (HERE / "operators.toml").read_bytes()
                           ).hexdigest()
    if resume and (keep / "session.sqlite").exists() and (keep / "stamp").exists() and \
            (keep / "stamp").read_text() == stamp:
        # the same module and operators: keep the killed mutants (tests were only added),
        # run the survivors again against the tests as they are now
        shutil.copy(keep / "session.sqlite", session)
        _forget_survivors(session)
    else:
        sh([str(cr / "cosmic-ray"), "init", str(config), str(session)], cwd=src, env=env)
        sh([str(cr / "cr-filter-operators"), str(session), str(config)], cwd=src, env=env)
    sh([py, str(HERE / "run.py"), "--filter-session", str(session), str(src / module),
        ",".join(map(str, sorted(executed)))], cwd=src, env=env)
    sh([str(cr / "cosmic-ray"), "exec", str(config), str(session)], cwd=src, env=env)
    keep.mkdir(parents=True, exist_ok=True)
    shutil.copy(session, keep / "session.sqlite")
    (keep / "stamp").write_text(stamp)
    collect(session, src / module, out)
    out.wall_s = time.monotonic() - started
    (keep / "times.json").write_text(json.dumps({"baseline_s": out.baseline_s,
                                                 "wall_s": out.wall_s, "resumed": resume}))
    return out


def from_sessions(targets: list[dict], workdir: Path) -> list[Outcome]:
    """The outcomes the kept sessions hold (`--report`), for modules still as they were."""
    outcomes = []
    for t in targets:
        keep = workdir / "sessions" / Path(t["module"]).stem
        o = Outcome(t["module"], t["tests"])
        if not (keep / "session.sqlite").exists():
            o.error = "no session kept; run it first"
        else:
            stamp = hashlib.sha256((ROOT / t["module"]).read_bytes()
                                   + (HERE / "operators.toml").read_bytes()).hexdigest()
            if (keep / "stamp").read_text() != stamp:
                o.error = "the module changed since its session; run it again"
            else:
                collect(keep / "session.sqlite", ROOT / t["module"], o)
                times = json.loads((keep / "times.json").read_text()) if (
                    keep / "times.json").exists() else {}
                o.baseline_s = times.get("baseline_s", 0.0)
        outcomes.append(o)
    return outcomes


def collect(session: Path, module_file: Path, out: Outcome) -> None:
    import sqlite3

    lines = module_file.read_text(encoding="utf-8").splitlines()
    db = sqlite3.connect(session)
    rows = db.execute(
        "SELECT s.operator_name, s.start_pos_row, s.start_pos_col, r.worker_outcome, "
        "r.test_outcome, r.output, r.diff FROM mutation_specs s JOIN work_results r "
        "ON r.job_id = s.job_id").fetchall()
    for op, row, col, worker, test, output, diff in rows:
        worker, test = (worker or "").lower(), (test or "").lower()
        if worker == "skipped":
            continue
        out.mutants += 1
        if test == "incompetent":
            out.incompetent += 1
            out.mutants -= 1
        elif test == "killed" or worker in ("abnormal", "exception"):
            out.killed += 1
        else:
            item = dict(module=out.module, operator=op.split("/", 1)[-1], line=row, col=col,
                        source=lines[row - 1].strip() if 0 < row <= len(lines) else "",
                        diff=diff or "")
            (out.not_executed if output == NOT_RUN else out.survived).append(item)
    db.close()


EXPLAINED = re.compile(r"^- `(?P<module>[^`]+)` `(?P<operator>[^`]+)` ``(?P<source>.*?)``: ")


def explanations() -> set[tuple[str, str, str]]:
    """(module, operator, stripped source line) of every survivor survivors.md explains."""
    text = (HERE / "survivors.md").read_text(encoding="utf-8") if (
        HERE / "survivors.md").exists() else ""
    return {(m["module"], m["operator"], m["source"].strip())
            for m in map(EXPLAINED.match, text.splitlines()) if m}


def report(outcomes: list[Outcome], minimum: float, wall: float, how: str = ""
           ) -> tuple[str, bool]:
    known = explanations()
    ok = True
    commit = sh(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=False).stdout.strip()
    dirty = bool(sh(["git", "status", "--porcelain"], cwd=ROOT, check=False).stdout.strip())
    source = how or f"`make mutate`, {wall / 60:.0f} min"
    lines = ["# Mutation testing: last run", "",
             f"{source}; {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, commit "
             f"{commit}{' with uncommitted changes' if dirty else ''}. "
             f"Operators: tests/mutation/operators.toml; tests per module: "
             f"tests/mutation/targets.toml; survivors' explanations: survivors.md.", "",
             "| module | mutants | killed | survived (run) | survived (line never run) | "
             "killed % | explained | unexplained | test time s |",
             "|---|---|---|---|---|---|---|---|---|"]
    unexplained_all = []
    for o in outcomes:
        if o.error:
            ok = False
            lines.append(f"| `{o.module}` | error: {o.error.splitlines()[0]} | | | | | | | |")
            continue
        survivors = o.survived + o.not_executed
        unexplained = [s for s in survivors
                       if (s["module"], s["operator"], s["source"]) not in known]
        unexplained_all += unexplained
        ok &= o.score >= minimum and not unexplained
        lines.append(f"| `{o.module}` | {o.counted} | {o.killed} | {len(o.survived)} | "
                     f"{len(o.not_executed)} | {o.score:.1f} | "
                     f"{len(survivors) - len(unexplained)} | {len(unexplained)} | "
                     f"{f'{o.baseline_s:.1f}' if o.baseline_s else ''} |")
    total = [o for o in outcomes if not o.error]
    killed, counted = sum(o.killed for o in total), sum(o.counted for o in total)
    lines += ["", f"All: {killed} of {counted} mutants killed "
                  f"({100.0 * killed / max(counted, 1):.1f} %)."]
    if unexplained_all:
        lines += ["", "## Unexplained survivors", ""]
        for s in unexplained_all:
            lines.append(f"- `{s['module']}` `{s['operator']}` ``{s['source']}`` (line "
                         f"{s['line']})")
    return "\n".join(lines) + "\n", ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", action="append", help="a module of targets.toml (repeatable; "
                                                      "default all), e.g. db/engine.py")
    ap.add_argument("--jobs", type=int, default=max(1, min(2, os.cpu_count() or 1)))
    ap.add_argument("--workdir", default=str(ROOT / "build" / "mutate"))
    ap.add_argument("--min", type=float, default=90.0, help="killed percent each target needs")
    ap.add_argument("--results", default=str(HERE / "RESULTS.md"),
                    help="where the figures go (only when every target ran)")
    ap.add_argument("--resume", action="store_true",
                    help="reuse a target's last session when its module is unchanged: "
                         "killed mutants stay killed, survivors run again (for iterating "
                         "on tests; a fresh run gives the figures)")
    ap.add_argument("--report", action="store_true",
                    help="run nothing: report the kept sessions (of modules unchanged since) "
                         "and write --results")
    ap.add_argument("--filter-session", nargs=3, metavar=("SESSION", "MODULE", "LINES"),
                    help=argparse.SUPPRESS)  # internal: runs inside the scratch environment
    args = ap.parse_args(argv)
    if args.filter_session:
        session, module, executed = args.filter_session
        filter_session(Path(session), Path(module),
                       {int(x) for x in executed.split(",") if x})
        return 0
    targets = tomllib.loads((HERE / "targets.toml").read_text())["target"]
    if args.target:
        wanted = set(args.target)
        targets = [t for t in targets if t["module"] in wanted]
        unknown = wanted - {t["module"] for t in targets}
        if unknown:
            print(f"ERROR unknown target(s): {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
    ops = tomllib.loads((HERE / "operators.toml").read_text())
    workdir = Path(args.workdir).resolve()
    if args.report:
        text, ok = report(from_sessions(targets, workdir), args.min, 0.0,
                          how="the kept sessions (`--report`): killed mutants from their full "
                              "run, survivors re-run with `--resume` against the tests as "
                              "committed")
        print(text)
        Path(args.results).write_text(text, encoding="utf-8")
        return 0 if ok else 1
    jobs = max(1, min(args.jobs, len(targets)))
    # the largest modules first, each to the worker with the least work so far
    queues: list[list[dict]] = [[] for _ in range(jobs)]
    load = [0] * jobs
    for t in sorted(targets, key=lambda t: -(ROOT / t["module"]).stat().st_size):
        i = load.index(min(load))
        queues[i].append(t)
        load[i] += (ROOT / t["module"]).stat().st_size
    results: dict[str, Outcome] = {}
    started = time.monotonic()

    def worker(i: int) -> None:
        base = workdir / f"w{i}"
        base.mkdir(parents=True, exist_ok=True)
        try:
            src, venv = prepare(base)
        except Exception as exc:  # noqa: BLE001 - reported per target
            for t in queues[i]:
                results[t["module"]] = Outcome(t["module"], t["tests"], error=str(exc))
            return
        for t in queues[i]:
            print(f"[w{i}] {t['module']} ...", flush=True)
            try:
                o = run_target(t, src, venv, base, ops, resume=args.resume)
            except Exception as exc:  # noqa: BLE001
                o = Outcome(t["module"], t["tests"], error=str(exc))
            results[t["module"]] = o
            print(f"[w{i}] {t['module']}: {o.killed}/{o.counted} killed ({o.score:.1f} %), "
                  f"{o.wall_s / 60:.1f} min{' ERROR ' + o.error if o.error else ''}", flush=True)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(jobs)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    ordered = [results[t["module"]] for t in targets if t["module"] in results]
    text, ok = report(ordered, args.min, time.monotonic() - started)
    print(text)
    if not args.target and not args.resume:
        Path(args.results).write_text(text, encoding="utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
