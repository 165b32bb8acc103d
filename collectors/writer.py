"""Turn parsed records plus their provenance into store rows, in one transaction per file.

Shared by `parity ingest`, the demo history and the GitHub collector, so that every path
into the store applies the same identity, hardware and idempotency rules."""
from __future__ import annotations

import gc
import hashlib
import json
import math
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from itertools import compress, repeat
from operator import itemgetter
from datetime import datetime
from typing import Any, Iterable

import numpy as np
from sqlalchemy import Connection

from parity.collectors.formats.records import (OUTCOMES, ParseResult, RunRef, TestRecord,
                                               config_value, merge_repeats, parse_time)
from parity.collectors.identity import ParityKeys, skip_category, step_label, suite_of_job
from parity.db import state, store, streaks
from parity.db.capabilities import capabilities
from parity.db.hardware import Vocabulary
from parity.db.models import VENDOR_GATED

FRAMEWORKS = ("vllm", "sglang", "pytorch", "other")


@dataclass
class Provenance:
    """Where a result file came from: the run, the job, the runner and the software."""

    run_id: str
    job_id: str
    ci_system: str = "local"
    repository: str = ""
    workflow: str = ""
    attempt: int = 1
    head_sha: str = ""
    branch: str = ""
    event: str = ""
    run_conclusion: str = ""
    run_url: str = ""
    run_created_at: datetime | None = None
    run_started_at: datetime | None = None
    run_completed_at: datetime | None = None
    job_name: str = ""
    suite: str = ""
    runner_labels: list[str] = field(default_factory=list)
    runner_name: str = ""
    runner_group: str = ""
    job_conclusion: str = ""
    job_url: str = ""
    job_created_at: datetime | None = None
    job_started_at: datetime | None = None
    job_completed_at: datetime | None = None
    framework: str = "other"
    framework_version: str = ""
    image: str = ""
    rocm_version: str = ""
    cuda_version: str = ""
    hardware: list[str] = field(default_factory=list)  # names to identify, best first
    capabilities: list[str] = field(default_factory=list)  # as a manifest states them
    exit_status: int | None = None  # Buildkite: the job's process exit status
    signal_reason: str = ""  # Buildkite: why the agent stopped the job (infrastructure)
    soft_failed: bool = False  # Buildkite: a failure the step allows
    retried_in: str = ""  # Buildkite: the job that retried this attempt
    untrusted: str = ""  # why the run is not the project's own CI ('' when it is)


@dataclass
class ArtifactInfo:
    path: str
    sha256: str
    size_bytes: int
    format: str
    parser_version: str
    name: str = ""


def config_key(config_json: str) -> str:
    """A short stable key of a config's canonical JSON text, for matching series."""
    return hashlib.sha1(config_json.encode()).hexdigest()[:16]


def _dim_int(cfg: dict, *names: str) -> int | None:
    for n in names:
        v = cfg.get(n)
        if v is None or isinstance(v, bool):
            continue
        try:
            f = float(v)
        except (TypeError, ValueError):
            continue
        if math.isfinite(f) and f == int(f):
            return int(f)
    return None


def _precision(cfg: dict) -> str:
    for n in ("precision", "dtype", "quantization", "quant"):
        v = cfg.get(n)
        if isinstance(v, str) and v:
            return v.lower()[:32]
    return ""


def _jsonable(cfg: dict) -> str:
    """A config's canonical JSON text; non-finite numbers (and their spellings) as text,
    the one rule for them (`records.config_value`)."""
    return json.dumps({k: config_value(v) for k, v in cfg.items()}, sort_keys=True, default=str)


def _run_provenance(prov: Provenance, run: RunRef) -> Provenance:
    """The provenance of a file, moved onto a run the file reports on."""
    return replace(prov, ci_system=run.ci_system, repository=run.repository[:200],
                   run_id=run.run_id[:64], attempt=run.attempt, workflow=run.workflow[:300],
                   head_sha=run.commit[:64], branch=run.branch[:200], event=run.event[:64],
                   run_conclusion=run.conclusion[:32], run_url=run.url[:500],
                   run_created_at=run.created_at, run_started_at=run.started_at,
                   run_completed_at=run.completed_at)


def split_by_hardware(result: ParseResult) -> dict[str | None, ParseResult]:
    """Records that name their own hardware (InferenceX rows, v3 runners) go to one job per
    hardware; everything else stays together under the key None."""
    hints = {r.hardware for r in (*result.tests, *result.benchmarks, *result.accuracy)}
    if hints <= {None}:
        return {None: result}
    parts: dict[str | None, ParseResult] = {}
    for attr in ("tests", "benchmarks", "accuracy"):
        for rec in getattr(result, attr):
            part = parts.setdefault(rec.hardware, ParseResult(format=result.format, meta=result.meta))
            getattr(part, attr).append(rec)
    if result.sessions:
        parts.setdefault(None, ParseResult(format=result.format, meta=result.meta)).sessions = \
            result.sessions
    return parts


@contextmanager
def paused_gc():
    """Pause the cyclic garbage collector while a file is parsed and written (a context
    manager, or a decorator of the method that does both). A
    200,000-test report allocates about a million container objects (records, rows) and
    none of them forms a cycle, yet each allocation burst makes the collector rescan them
    all (sorting 200,000 rows took 0.79 s with it running, 0.10 s without). Reference
    counting still frees everything; the collector resumes, as it was, on exit."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


SUMMARY_KEYS = ("total", *OUTCOMES, "flaky", "vendor_skipped", "duration_s")


def _in_order(order: list[int]):
    """A function that gives a sequence's items at the positions `order`, as one sequence
    (`operator.itemgetter`'s loop in C, not a comprehension's in Python)."""
    if len(order) > 1:
        return itemgetter(*order)
    return lambda seq: tuple(seq[i] for i in order)


def _group_counts(groups: list[str], outcomes: list[str], durations: list[float | None],
                  categories: list[str | None], reruns: list[int]) -> dict[str, dict]:
    """The per-group summary of one file's test rows (columns in the same order): the
    outcomes counted over zipped columns, the rare rerun passes and vendor-gated skips over
    their own rows only, and each group's durations summed by `bincount` (in row order, as a
    loop adds them)."""
    counts: dict[str, dict] = {}
    for (group, outcome), n in Counter(zip(groups, outcomes)).items():
        c = counts.get(group) or counts.setdefault(group, dict.fromkeys(SUMMARY_KEYS, 0))
        c[outcome] += n
        c["total"] += n
    if any(reruns):  # passed after a rerun
        flaky = Counter(g for g, r, o in zip(groups, reruns, outcomes) if r and o == "passed")
        for group, n in flaky.items():
            counts[group]["flaky"] += n
    skipped = zip(compress(groups, categories), filter(None, categories))  # skipped rows
    for group, n in Counter(g for g, c in skipped if c in VENDOR_GATED).items():
        counts[group]["vendor_skipped"] += n
    number = {g: i for i, g in enumerate(counts)}
    spent = np.array(durations, dtype=float)  # None: nan, which adds nothing
    spent[np.isnan(spent)] = 0.0
    sums = np.bincount(np.fromiter(map(number.__getitem__, groups), np.int64, len(groups)),
                       weights=spent, minlength=len(number))
    for c, total in zip(counts.values(), sums.tolist()):
        if total:
            c["duration_s"] += total
    return counts


KEPT = 10_000  # entries a writer's cache holds before it starts again


def _kept(cache: dict, key, make):
    """`cache[key]`, made by `make()` the first time it is asked for; past `KEPT` entries
    the cache starts again (a long sync meets many jobs and runners)."""
    if key in cache:
        return cache[key]
    if len(cache) > KEPT:
        cache.clear()
    cache[key] = value = make()
    return value


class Writer:
    """Writes parsed files for one store; holds the hardware vocabulary and id caches."""

    def __init__(self, vocab: Vocabulary):
        self.vocab = vocab
        self.parity_keys = ParityKeys(vocab)
        self.caps = capabilities()
        self._known_tests: set[int] = set()
        self._jobs: dict[tuple, int] = {}  # provenance -> job pk, for files of one job
        # hardware and framework rows are few and never change once made: a nightly's
        # hundred jobs name a dozen of them (each lookup is two queries)
        self._rows: dict[tuple, int | None] = {}
        self._named: dict[tuple, frozenset[str]] = {}  # names -> the capabilities they name

    def write(self, conn: Connection, result: ParseResult, prov: Provenance,
              art: ArtifactInfo) -> tuple[str, int]:
        """Store one parsed file. Returns ("ingested" | "unchanged", records written)."""
        if result.runs or result.jobs:
            return self._write_document(conn, result, prov, art)
        # an explicit hardware name (the --hardware flag, a job's labels) overrides hints
        parts = {None: result} if prov.hardware else split_by_hardware(result)
        status, written = "unchanged", 0
        for hint, part in parts.items():
            p = prov
            if hint is not None and not prov.hardware:
                p = replace(prov, job_id=f"{prov.job_id}/{hint}", hardware=[hint])
            s, n = self._write_part(conn, part, p, art)
            if s == "ingested":
                status = "ingested"
            written += n
        return status, written

    def _write_document(self, conn: Connection, result: ParseResult, prov: Provenance,
                        art: ArtifactInfo) -> tuple[str, int]:
        """A document that reports on runs and jobs of its own (a ROCm nightly's status, a
        published results feed): each run and job under its own identity, each job's results
        with it. A job without results is stored as its conclusion (a job-level result); a
        snapshot job's earlier results are replaced by a newer version of the document."""
        status, written = "unchanged", 0
        for run in result.runs:
            pk_before = store.find_run(conn, run.ci_system, run.repository, run.run_id, run.attempt)
            self.ensure_run(conn, _run_provenance(prov, run))
            if pk_before is None:
                status, written = "ingested", written + 1
        for job in result.jobs:
            p = replace(_run_provenance(prov, job.run), job_id=job.job_id[:100],
                        job_name=job.name[:500],
                        suite=(job.suite or suite_of_job(step_label({"name": job.name}),
                                                         self.vocab))[:200],
                        hardware=list(job.hardware), runner_labels=[],
                        job_conclusion=job.conclusion[:32], job_url=job.url[:500],
                        job_created_at=job.started_at, job_started_at=job.started_at,
                        job_completed_at=job.completed_at,
                        framework=job.framework or prov.framework,
                        framework_version=job.framework_version or prov.framework_version,
                        rocm_version=job.rocm_version or prov.rocm_version)
            job_pk = self.ensure_job(conn, p)
            if not job.result.record_count:
                continue
            if job.snapshot and store.find_artifact(conn, job_pk, art.sha256) is None:
                store.clear_job_results(conn, job_pk)
            s, n = self._write_part(conn, job.result, p, art)
            if s == "ingested":
                status = "ingested"
            written += n
        return status, written

    def hardware_pk(self, conn: Connection, labels: list[str], runner_name: str = "",
                    explicit: list[str] | tuple = ()) -> int | None:
        """The hardware row for a runner: explicit names first, then labels, then its name."""
        def make() -> int | None:
            hw = self.vocab.identify_any([*explicit, *labels, runner_name])
            if hw.vendor == "unknown" and not hw.raw_name:
                return None
            return store.upsert_hardware(conn, hw.vendor, hw.sku, hw.arch, hw.gpu_count,
                                         hw.raw_name, hw.mapped)
        # a fleet's snapshot names each of its runners: the bound keeps that small
        return _kept(self._rows, ("hardware", tuple(explicit), tuple(labels), runner_name),
                     make)

    def framework_pk(self, conn: Connection, prov: Provenance) -> int:
        """The framework row the provenance names (its name, version, image and stack)."""
        key = (prov.framework or "other", prov.framework_version, prov.image,
               prov.rocm_version, prov.cuda_version)
        return _kept(self._rows, ("framework", *key), lambda: store.upsert_framework(conn, *key))

    def capabilities_named(self, texts: Iterable[str | None]) -> frozenset[str]:
        """The capabilities these suite, job or test-file names name (`from_names`, kept per
        set of names: a nightly repeats its job and group names every night)."""
        key = tuple(texts)
        return _kept(self._named, key, lambda: frozenset(self.caps.from_names(key)))

    def ensure_job(self, conn: Connection, prov: Provenance) -> int:
        """The job's primary key, creating its run, hardware and framework rows as needed.
        The same provenance again (the next file of a job) costs no query."""
        key = tuple(tuple(v) if isinstance(v, list) else v for v in prov.__dict__.values())
        return _kept(self._jobs, key, lambda: self._new_job(conn, prov))

    def _new_job(self, conn: Connection, prov: Provenance) -> int:
        pk = self._ensure_job(conn, prov)
        tags = {n: "name" for n in self.capabilities_named((prov.suite, prov.job_name))}
        tags.update({n: "manifest" for n in prov.capabilities if n in self.caps.names})
        store.add_capabilities(conn, pk, tags)
        return pk

    @staticmethod
    def ensure_run(conn: Connection, prov: Provenance) -> int:
        """The primary key of the run (attempt) the provenance names, created as needed."""
        return store.upsert_run(
            conn, ci_system=prov.ci_system, repository=prov.repository, run_id=str(prov.run_id),
            attempt=prov.attempt, workflow=prov.workflow, head_sha=prov.head_sha,
            branch=prov.branch, event=prov.event, conclusion=prov.run_conclusion,
            url=prov.run_url, created_at=prov.run_created_at, started_at=prov.run_started_at,
            completed_at=prov.run_completed_at, untrusted=prov.untrusted[:64])

    def _ensure_job(self, conn: Connection, prov: Provenance) -> int:
        hw_pk = self.hardware_pk(conn, prov.runner_labels, prov.runner_name, prov.hardware)
        fw_pk = self.framework_pk(conn, prov)
        run_pk = self.ensure_run(conn, prov)
        return store.upsert_job(
            conn, run_pk, str(prov.job_id), name=prov.job_name, suite=prov.suite,
            runner_labels=json.dumps(prov.runner_labels), runner_name=prov.runner_name,
            runner_group=prov.runner_group, hardware_id=hw_pk, framework_id=fw_pk,
            conclusion=prov.job_conclusion, url=prov.job_url,
            created_at=prov.job_created_at or prov.run_created_at,
            started_at=prov.job_started_at or prov.run_started_at,
            completed_at=prov.job_completed_at or prov.run_completed_at,
            exit_status=prov.exit_status, signal_reason=prov.signal_reason[:32],
            soft_failed=prov.soft_failed, retried_in=prov.retried_in[:100])

    def _write_part(self, conn: Connection, result: ParseResult, prov: Provenance,
                    art: ArtifactInfo) -> tuple[str, int]:
        job_pk = self.ensure_job(conn, prov)
        if store.find_artifact(conn, job_pk, art.sha256) is not None:
            return "unchanged", 0
        art_pk = store.add_artifact(
            conn, job_pk, name=art.name, path=art.path, sha256=art.sha256,
            size_bytes=art.size_bytes, format=art.format, parser_version=art.parser_version,
            records=result.record_count)
        if result.tests or result.sessions:
            self._tests(conn, job_pk, art_pk, result)
        if result.benchmarks:
            store.add_benchmarks(conn, self._benchmark_rows(job_pk, art_pk, result))
            state.benchmarks(conn, [job_pk])  # the job's arrays, in step
        if result.accuracy:
            store.add_accuracy(conn, self._accuracy_rows(job_pk, art_pk, result))
        return "ingested", result.record_count

    def _tests(self, conn: Connection, job_pk: int, art_pk: int, result: ParseResult) -> None:
        # column by column: list comprehensions and zip() build 200,000 rows several times
        # faster than one Python loop that does everything per test
        tests = result.tests
        keys = [t.test_key for t in tests]
        if len(set(keys)) < len(keys):  # the same test twice in one file: one row, with reruns
            tests = merge_repeats(tests)
            keys = [t.test_key for t in tests]
        ids = list(map(store.test_id, keys))
        groups = [t.group for t in tests]
        outcomes = [t.outcome for t in tests]
        durations = [t.duration_s for t in tests]
        categories = [skip_category(t.skip_reason) if t.outcome == "skipped" else None
                      for t in tests]
        reruns = [t.rerun_count for t in tests]
        # ids are hashes: written in id order, both tables' rows append to their B-trees;
        # each column is put in that order at once (a C loop) and the rows zipped from them
        order = np.argsort(np.fromiter(ids, np.int64, len(ids)), kind="stable").tolist()
        take = _in_order(order)
        rows = zip(repeat(job_pk), repeat(art_pk), take(ids), repeat(store.run_day(conn, job_pk)),
                   take(outcomes), take([t.phase for t in tests]), take(durations),
                   take(reruns), take([t.message for t in tests]), take(categories))
        store.add_test_cases(conn, self._new_cases(conn, tests, keys, ids, groups, take))
        store.add_test_results(conn, list(rows))
        state.add(conn, job_pk, ids, outcomes, categories, reruns)  # the job's vector, in step
        streaks.follow(conn, [job_pk])  # and the failure streaks
        counts = {} if result.sessions else _group_counts(groups, outcomes, durations,
                                                           categories, reruns)
        for s in result.sessions:
            c = counts.setdefault(s.label, dict.fromkeys(SUMMARY_KEYS, 0))
            for k in OUTCOMES:
                c[k] += s.counts.get(k, 0)
                c["total"] += s.counts.get(k, 0)
            c["duration_s"] += s.duration_s or 0.0
        store.add_summaries(conn, job_pk, counts)
        named = self.capabilities_named(counts)  # test files such as test_disaggregation.py
        if named:
            store.add_capabilities(conn, job_pk, {n: "name" for n in named})

    def _new_cases(self, conn: Connection, tests: list[TestRecord], keys: list[str],
                   ids: list[int], groups: list[str], take) -> list[tuple]:
        """test_case rows, in id order, for the tests the store does not hold yet. Built in
        report order, which is memory order, and only then put in id order (`take`)."""
        known = self._known_tests
        unknown = [tid for tid in take(ids) if tid not in known] if known else list(take(ids))
        stored = store.stored_test_ids(conn, unknown)
        known.update(stored)
        every = len(unknown) == len(ids) and not stored  # the store holds none of them
        new = None if every else [i for i, tid in enumerate(ids) if tid not in known]
        known.update(ids)
        if new is not None:
            tests, keys, ids, groups = ([seq[i] for i in new] for seq in (tests, keys, ids, groups))
        # column by column, as `_tests` builds the result rows
        classes = [t.classname for t in tests]
        pkeys = self.parity_keys.many(classes, keys)
        test_id = store.test_id
        pids = [tid if pkey == key else test_id(pkey) for tid, pkey, key in zip(ids, pkeys, keys)]
        rows = list(zip(ids, keys, pids, pkeys, [t.file for t in tests], classes,
                        [t.name for t in tests], [t.params for t in tests], groups))
        return list(take(rows)) if every else sorted(rows, key=itemgetter(0))

    def forget_cache(self) -> None:
        """Drop the known-test and job caches (after a rolled-back transaction)."""
        self._known_tests.clear()
        self._jobs.clear()
        self._rows.clear()

    def _common(self, rec, job_pk: int, art_pk: int) -> dict[str, Any]:
        cfg = rec.config
        text = _jsonable(cfg)
        return dict(job_pk=job_pk, artifact_pk=art_pk, record_no=rec.record_no, model=rec.model[:300],
                    config=text, config_key=config_key(text), precision=_precision(cfg),
                    tp=_dim_int(cfg, "tp", "tensor_parallel_size"),
                    ep=_dim_int(cfg, "ep", "expert_parallel_size"),
                    dp=_dim_int(cfg, "dp", "data_parallel_size"),
                    concurrency=_dim_int(cfg, "concurrency", "max_concurrency", "conc"))

    def _benchmark_rows(self, job_pk: int, art_pk: int, result: ParseResult) -> list[dict]:
        rows = []
        for b in result.benchmarks:
            cfg = b.config
            row = self._common(b, job_pk, art_pk)
            rate = cfg.get("request_rate")
            try:
                rate = float(rate) if rate is not None else None
            except (TypeError, ValueError):
                rate = None
            row.update(
                benchmark=b.benchmark[:200], metric=b.metric[:200], statistic=b.statistic,
                unit=b.unit, direction=b.direction, value=b.value,
                samples=json.dumps(b.samples) if b.samples else None,
                status=b.status, pp=_dim_int(cfg, "pp", "pipeline_parallel_size"),
                isl=_dim_int(cfg, "isl", "input_len", "random_input_len"),
                osl=_dim_int(cfg, "osl", "output_len", "random_output_len"),
                request_rate=rate if rate is None or math.isfinite(rate) else None,
                batch_size=_dim_int(cfg, "batch_size"))
            rows.append(row)
        return rows

    def _accuracy_rows(self, job_pk: int, art_pk: int, result: ParseResult) -> list[dict]:
        rows = []
        for a in result.accuracy:
            row = self._common(a, job_pk, art_pk)
            gate = a.gate_passed
            if gate is None and a.threshold is not None and a.value is not None:
                gate = a.value >= a.threshold if a.higher_is_better else a.value <= a.threshold
            row.update(task=a.task[:200], metric=a.metric[:100], filter=a.filter[:100],
                       value=a.value, stderr=a.stderr, n=a.n,
                       higher_is_better=a.higher_is_better, is_group=a.is_group,
                       parent_group=a.parent_group, threshold=a.threshold, gate_passed=gate)
            rows.append(row)
        return rows
