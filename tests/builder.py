"""Small hand-built stores for the view tests: each job is written through the real `Writer`,
so the views read exactly what an ingest would have stored."""
from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

from parity.collectors.formats.records import AccuracyRecord, BenchmarkRecord, ParseResult, TestRecord
from parity.collectors.writer import ArtifactInfo, Provenance, Writer
from parity.db import store
from parity.db.hardware import vocabulary
from parity.db.migrate import upgrade

DAY0 = datetime(2026, 11, 2, 2, 0)


class Builder:
    def __init__(self, engine):
        self.engine = engine
        upgrade(engine)
        self.writer = Writer(vocabulary())
        self.n = 0

    def _prov(self, hw, fw, suite, run, commit, day, queue_min=5.0, attempt=1):
        when = DAY0 + timedelta(days=day)
        return Provenance(
            run_id=run, job_id=f"{hw}/{suite}", ci_system="test", repository=f"org/{fw}",
            workflow="nightly", attempt=attempt, head_sha=commit, run_created_at=when,
            run_started_at=when, job_created_at=when,
            job_started_at=when + timedelta(minutes=queue_min), job_name=f"{hw}: {suite}",
            suite=suite, runner_labels=["self-hosted", hw], framework=fw,
            run_url=f"https://example.test/{fw}/{run}")

    def _art(self, fmt):
        self.n += 1
        return ArtifactInfo(path=f"t/{self.n}.{fmt}", sha256=hashlib.sha256(
            str(self.n).encode()).hexdigest(), size_bytes=0, format=fmt, parser_version="t")

    def tests(self, hw, outcomes: dict, *, fw="vllm", suite="kernels", run="r1", commit="c1",
              day=0, attempt=1, queue_min=5.0, reasons=None, reruns=None, messages=None):
        """outcomes: {test name: outcome}; reasons/reruns/messages: per test name."""
        reasons, reruns, messages = reasons or {}, reruns or {}, messages or {}
        recs = [TestRecord(classname=f"tests.{suite}", name=name, params=None, outcome=out,
                           suite=suite, file=f"tests/{suite}.py",
                           skip_reason=reasons.get(name) or ("skipped" if out == "skipped"
                                                            else None),
                           rerun_count=reruns.get(name, 0), message=messages.get(name))
                for name, out in outcomes.items()]
        prov = self._prov(hw, fw, suite, run, commit, day, queue_min, attempt)
        with self.engine.begin() as conn:
            if recs:
                self.writer.write(conn, ParseResult(format="junit", tests=recs), prov,
                                  self._art("junit"))
            else:
                self.writer.ensure_job(conn, prov)

    def bench(self, hw, value, *, metric="total_token_throughput", direction="higher",
              fw="vllm", run="r1", commit="c1", day=0, model="m", concurrency=8, repeats=None,
              also: dict | None = None):
        """`also`: more metrics of the same record, {metric: (value, direction)}."""
        values = repeats or [value]
        cfg = {"precision": "fp8", "tp": 8, "isl": 1024, "osl": 1024,
               "concurrency": concurrency, "hw": hw}
        recs = []
        for i, v in enumerate(values):
            for m, (x, d) in {metric: (v, direction), **(also or {})}.items():
                recs.append(BenchmarkRecord(benchmark="serving", metric=m, value=x, model=model,
                                            unit="tok/s", direction=d, config=cfg, record_no=i))
        prov = self._prov(hw, fw, "perf", run, commit, day)
        with self.engine.begin() as conn:
            self.writer.write(conn, ParseResult(format="serving-bench", benchmarks=recs), prov,
                              self._art("bench"))

    def accuracy(self, hw, scores: dict, *, n=1319, fw="vllm", run="r1", commit="c1", day=0,
                 model="m", task="gsm8k", attempt=1):
        """scores: {concurrency: value}."""
        recs = [AccuracyRecord(task=task, metric="exact_match", filter="strict-match",
                               value=v, model=model, n=n,
                               config={"precision": "fp8", "ep": 8, "concurrency": c},
                               record_no=i) for i, (c, v) in enumerate(scores.items())]
        prov = self._prov(hw, fw, "accuracy", run, commit, day, attempt=attempt)
        with self.engine.begin() as conn:
            self.writer.write(conn, ParseResult(format="lm-eval", accuracy=recs), prov,
                              self._art("acc"))

    def runners(self, rows: list[tuple[str, str, bool]], *, seen=DAY0, scope="org/x",
                first: int = 0):
        """One collection of `scope`: rows (runner label, status, busy), the runners
        numbered from `first`."""
        with self.engine.begin() as conn:
            store.add_runner_snapshots(conn, [dict(
                scope=scope, runner_id=f"{label}-{i}", name=f"{label}-{i}",
                labels=f'["self-hosted", "{label}"]', os="Linux", status=status, busy=busy,
                hardware_id=self.writer.hardware_pk(conn, [label]), seen_at=seen)
                for i, (label, status, busy) in enumerate(rows, first)])


def lane(builder: "Builder", hw: str, suite: str, config: dict, *, gate: float | None = None,
         fw: str = "vllm", run: str = "r1", day: int = 0, job_name: str | None = None):
    """One capability lane: a job `suite` on `hw` with one benchmark config and, when `gate`
    is given, a gated accuracy score (threshold 0.9) at the same config."""
    prov = builder._prov(hw, fw, suite, run, "c1", day)
    if job_name:
        prov.job_name = job_name
    result = ParseResult(format="serving-bench", benchmarks=[BenchmarkRecord(
        benchmark="serving", metric="output_throughput", value=100.0, model="m", unit="tok/s",
        direction="higher", config=config, record_no=0)])
    if gate is not None:
        result.accuracy.append(AccuracyRecord(task="gsm8k", metric="exact_match",
                                              filter="strict-match", value=gate, model="m",
                                              n=1319, threshold=0.9, config=config, record_no=0))
    with builder.engine.begin() as conn:
        builder.writer.write(conn, result, prov, builder._art("lane"))
