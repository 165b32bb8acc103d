"""A deterministic, realistic history (vLLM, SGLang, PyTorch on MI300X, MI325X, MI355X,
MI455X, H100, H200, B200), written through the same `Writer` as real ingests.

Test identities are the real suites' node ids and skip reasons (`testids`), at lane sizes
from a profile: `demo` (thousands of tests per lane, what `parity demo` builds) or `year`
(real size: about 30,000 tests per vLLM lane; 365 nights give over 50 million results);
`plan()` scales the demo profile to a requested number of results.

It contains every situation the parity views must show:
- AMD-only failures, tests skipped only on AMD (vendor-gated reasons), flaky tests;
- a suite that runs on NVIDIA but has no AMD lane (vLLM `spec_decode`);
- an MI455X lane that builds but runs no tests and has no accuracy gate;
- a throughput step regression on one AMD config (vLLM, MI355X, Llama-3.1-70B FP8, conc 64);
- a throughput regression that was fixed eight nights later (vLLM, MI325X, DeepSeek-R1,
  conc 16): both ends must show;
- a GSM8K accuracy cliff at one concurrency only (DeepSeek-R1 EP decode on MI355X, conc 64,
  about 80 % against about 94 % elsewhere).
Same `days` and `end` give the same database."""
from __future__ import annotations

import hashlib
import json
import math
import random
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta, timezone
from time import perf_counter

from sqlalchemy import Engine

from parity.collectors import testids
from parity.collectors.formats.records import (AccuracyRecord, BenchmarkRecord, ParseResult,
                                                   TestRecord)
from parity.collectors.writer import ArtifactInfo, Provenance, Writer
from parity.db import store
from parity.db.hardware import vocabulary
from parity.db.migrate import upgrade

REPO = {"vllm": "vllm-project/vllm", "sglang": "sgl-project/sglang", "pytorch": "pytorch/pytorch"}
LABELS = {  # runner labels as the real fleets spell them
    "mi300x": {"vllm": "mi300_1", "sglang": "linux-mi300-gpu-1", "pytorch": "linux.rocm.gpu.gfx942.1"},
    "mi325x": {"vllm": "mi325_1"},
    "mi355x": {"vllm": "mi355_1", "sglang": "linux-mi35x-gpu-1", "pytorch": "linux.rocm.gpu.gfx950.1"},
    "mi455x": {"vllm": "gfx1250-dcgpu-1"},
    "h100": {"vllm": "h100-1gpu", "sglang": "1-gpu-h100", "pytorch": "linux.aws.h100"},
    "h200": {"vllm": "h200-1gpu", "sglang": "8-gpu-h200"},
    "b200": {"vllm": "b200-1gpu", "sglang": "4-gpu-b200", "pytorch": "linux.dgx.b200"},
}
AMD = ("mi300x", "mi325x", "mi355x", "mi455x")
SUITES = {  # each framework's suites and their share of a lane's tests
    "vllm": {"kernels": 0.45, "entrypoints": 0.30, "distributed": 0.15, "spec_decode": 0.10},
    "sglang": {"srt-unit": 0.70, "srt-models": 0.30},
    "pytorch": {"inductor": 0.75, "distributed": 0.25},
}
PROFILES = {  # tests per lane and night
    "demo": {"vllm": 3000, "sglang": 1000, "pytorch": 4000},
    # real size: vLLM lanes run about 30,000 tests a night; PyTorch's hundreds of thousands
    # do not fit a 50M budget beside them, so its lanes stay at a few thousand
    "year": {"vllm": 32000, "sglang": 3500, "pytorch": 6000},
}
MIN_SUITE_TESTS = 64  # the injected situations need indexes up to 64 in every suite
NVIDIA_ONLY_SUITES = {("vllm", "spec_decode")}
PERF_MODELS = {"meta-llama/Llama-3.1-70B-Instruct": ("fp8", 8),
               "deepseek-ai/DeepSeek-R1": ("fp8", 8)}
PERF_BASE = {"mi300x": 0.62, "mi325x": 0.74, "mi355x": 0.95, "h100": 0.55, "h200": 0.70, "b200": 1.0}
CONCURRENCIES = (4, 16, 64, 128)
ISL_OSL = ((1024, 1024), (8192, 1024))
REGRESSION = {"hardware": "mi355x", "model": "meta-llama/Llama-3.1-70B-Instruct",
              "concurrency": 64, "isl": 1024, "drop": 0.09, "days_before_end": 10}
REVERTED = {"hardware": "mi325x", "model": "deepseek-ai/DeepSeek-R1", "concurrency": 16,
            "isl": 1024, "drop": 0.08, "days_before_end": (13, 5)}  # from, until (exclusive)
CLIFF = {"hardware": "mi355x", "model": "deepseek-ai/DeepSeek-R1", "concurrency": 64,
         "score": 0.80, "elsewhere": 0.94}
ACC_CONCURRENCIES = (1, 8, 16, 32, 64, 128)


@dataclass
class DemoSummary:
    nights: int
    jobs: int
    test_results: int
    benchmark_rows: int
    accuracy_rows: int
    runners: int = 0


def _sha(*parts) -> str:
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()


def suite_sizes(profile: dict[str, float]) -> dict[tuple[str, str], int]:
    """Tests per (framework, suite) in one lane-night for a profile of tests per lane."""
    return {(fw, suite): max(MIN_SUITE_TESTS, round(profile[fw] * share))
            for fw, suites in SUITES.items() for suite, share in suites.items()}


BUILD_ONLY = "mi455x"  # the lane builds an image and runs no test


def test_suites(fw: str, hw: str) -> list[str]:
    """The suites a framework's lane on this hardware runs tests in each night."""
    if hw == BUILD_ONLY:
        return []
    return [s for s in SUITES[fw] if not (hw in AMD and (fw, s) in NVIDIA_ONLY_SUITES)]


def results_per_night(sizes: dict[tuple[str, str], int]) -> int:
    """Test results one night writes with these suite sizes."""
    return sum(sizes[(fw, suite)] for hw, labels in LABELS.items() for fw in labels
               for suite in test_suites(fw, hw))


def plan(days: int, results: int | None = None, profile: str = "demo"
         ) -> dict[tuple[str, str], int]:
    """Suite sizes for `days` nights: the profile's, or the demo profile scaled so that the
    history holds about `results` test results."""
    base = PROFILES[profile]
    if results is None:
        return suite_sizes(base)
    per_night = results_per_night(suite_sizes(base))
    factor = results / max(1, days * per_night)
    return suite_sizes({fw: n * factor for fw, n in base.items()})


def test_key(fw: str, suite: str, i: int) -> str:
    """The test key of the suite's i-th test (tests use it to name a planted situation)."""
    t = testids.suite_tests(fw, suite, i + 1)[i]
    return TestRecord(classname=t.classname, name=t.name, params=t.params,
                      outcome="passed").test_key


def _tests(rng: random.Random, fw: str, suite: str, n: int, hw: str, night: int,
           nights: int) -> list[TestRecord]:
    amd = hw in AMD
    reasons = testids.skip_reasons(fw)
    vendor, hardware = reasons["vendor"], reasons["hardware"]
    out = []
    for i, t in enumerate(testids.suite_tests(fw, suite, n)):
        outcome, message, reason, reruns = "passed", None, None, 0
        if amd and i % 17 == 3:
            outcome, reason = "skipped", vendor[(i // 17) % len(vendor)]
        elif i % 23 == 5:
            outcome, reason = "skipped", hardware[(i // 23) % len(hardware)]
        elif amd and i % 29 == 7 and night >= nights // 3:
            outcome, message = "failed", "AssertionError: Tensor-likes are not close! (ROCm)"
        elif hw == "mi355x" and i % 31 == 11:
            outcome, message = "failed", "RuntimeError: HIP error: invalid device function"
        elif i % 37 == 13 and rng.random() < 0.25:  # flaky on every vendor
            if rng.random() < 0.5:
                reruns = 1
            else:
                outcome, message = "failed", "TimeoutError: server did not start in 600 s"
        elif amd and i % 41 == 17 and rng.random() < 0.3:  # flaky on AMD only
            reruns = 1
        elif not amd and i % 43 == 21 and night > nights - 5:  # a fresh NVIDIA-only failure
            outcome, message = "failed", "AssertionError: expected 3 tokens, got 2"
        out.append(TestRecord(classname=t.classname, name=t.name, params=t.params,
                              outcome=outcome, suite=suite, file=t.file,
                              phase="call" if outcome == "failed" else None,
                              duration_s=round(0.2 + rng.random() * 3, 3), rerun_count=reruns,
                              message=message, skip_reason=reason))
    return out


def _benchmarks(rng: random.Random, hw: str, night: int, nights: int) -> list[BenchmarkRecord]:
    out: list[BenchmarkRecord] = []
    no = 0
    for model, (precision, tp) in PERF_MODELS.items():
        for isl, osl in ISL_OSL:
            for conc in CONCURRENCIES:
                base = 2600.0 * PERF_BASE[hw] * math.sqrt(conc) * (1024 / isl) ** 0.3
                if (hw == REGRESSION["hardware"] and model == REGRESSION["model"]
                        and conc == REGRESSION["concurrency"] and isl == REGRESSION["isl"]
                        and night >= nights - REGRESSION["days_before_end"]):
                    base *= 1 - REGRESSION["drop"]
                start, end = REVERTED["days_before_end"]
                if (hw == REVERTED["hardware"] and model == REVERTED["model"]
                        and conc == REVERTED["concurrency"] and isl == REVERTED["isl"]
                        and nights - start <= night < nights - end):
                    base *= 1 - REVERTED["drop"]
                tput = base * (1 + rng.gauss(0, 0.015))
                tpot = 1000.0 * conc / (tput / tp * 1.0) / 4.0
                ttft = 40.0 + isl / (20.0 * PERF_BASE[hw]) * (1 + rng.gauss(0, 0.04))
                cfg = {"backend": "vllm", "precision": precision, "tp": tp, "isl": isl,
                       "osl": osl, "concurrency": conc, "request_rate": "inf",
                       "dataset_name": "random"}
                for metric, value, unit, direction, stat in (
                        ("total_token_throughput", tput, "tok/s", "higher", ""),
                        ("output_throughput", tput * osl / (isl + osl), "tok/s", "higher", ""),
                        ("median_ttft_ms", ttft, "ms", "lower", "median"),
                        ("median_tpot_ms", tpot, "ms", "lower", "median")):
                    out.append(BenchmarkRecord(
                        benchmark="serving", metric=metric, value=round(value, 3), model=model,
                        unit=unit, direction=direction, statistic=stat, config=cfg,
                        record_no=no))
                no += 1
    return out


def _accuracy(rng: random.Random, hw: str) -> list[AccuracyRecord]:
    out = []
    n = 1319
    for no, conc in enumerate(ACC_CONCURRENCIES):
        p = CLIFF["elsewhere"] - (0.005 if hw in AMD else 0.0)
        if hw == CLIFF["hardware"] and conc == CLIFF["concurrency"]:
            p = CLIFF["score"]
        hits = sum(rng.random() < p for _ in range(n))
        value = hits / n
        cfg = {"precision": "fp8", "tp": 8, "ep": 8, "dp": 1, "concurrency": conc,
               "scenario": "ep-decode", "num_fewshot": 5}
        out.append(AccuracyRecord(
            task="gsm8k", metric="exact_match", filter="strict-match", value=value,
            model=CLIFF["model"], stderr=math.sqrt(value * (1 - value) / (n - 1)), n=n,
            threshold=0.90, config=cfg, record_no=no))
    return out


DISAGG = {  # disaggregated serving lanes: NVIDIA runs it with wide EP and FP4 under an
    # accuracy gate; MI355X runs disaggregation alone (EP 1, FP8) with no gate; others none
    "b200": {"ep": 16, "precision": "fp4", "gated": True},
    "h200": {"ep": 16, "precision": "fp4", "gated": True},
    "mi355x": {"ep": 1, "precision": "fp8", "gated": False},
}


def _disaggregated(rng: random.Random, hw: str) -> ParseResult | None:
    spec = DISAGG.get(hw)
    if spec is None:
        return None
    model = "deepseek-ai/DeepSeek-R1"
    result = ParseResult(format="serving-bench")
    for no, conc in enumerate((64, 256)):
        cfg = {"backend": "vllm", "disagg": True, "prefill_workers": 1, "decode_workers": 2,
               "kv_transfer_backend": "nixl", "tp": 8 if spec["ep"] == 1 else 1, "ep": spec["ep"],
               "dp": spec["ep"] if spec["ep"] > 1 else 1, "precision": spec["precision"],
               "isl": 8192, "osl": 1024, "concurrency": conc}
        tput = 9000.0 * PERF_BASE[hw] * math.sqrt(conc / 64) * (1 + rng.gauss(0, 0.02))
        result.benchmarks.append(BenchmarkRecord(
            benchmark="serving", metric="output_throughput", value=round(tput, 2), model=model,
            unit="tok/s", direction="higher", statistic="", config=cfg, record_no=no))
        if spec["gated"]:
            n = 1319
            value = sum(rng.random() < 0.94 for _ in range(n)) / n
            result.accuracy.append(AccuracyRecord(
                task="gsm8k", metric="exact_match", filter="strict-match", value=value,
                model=model, stderr=math.sqrt(value * (1 - value) / (n - 1)), n=n,
                threshold=0.90, config=cfg, record_no=no))
    return result


def build(engine: Engine, days: int = 60, end: date | None = None,
          sizes: dict[tuple[str, str], int] | None = None,
          echo=lambda line: None) -> DemoSummary:
    """Write `days` nightly runs ending on `end` (default: yesterday, UTC), with `sizes`
    tests per (framework, suite) and lane-night (default: the demo profile). Each night is
    one transaction, so an interrupted build keeps whole nights; building again writes
    only what is missing and gives the same store."""
    sizes = sizes or plan(days)
    upgrade(engine)
    end = end or (datetime.now(timezone.utc).date() - timedelta(days=1))
    writer = Writer(vocabulary())
    summary = DemoSummary(days, 0, 0, 0, 0)
    start = end - timedelta(days=days - 1)
    began = perf_counter()
    for night in range(days):
        day = start + timedelta(days=night)
        created = datetime.combine(day, time(2, 0))
        with store.bulk_transaction(engine) as conn:
            for fw in SUITES:
                commit = _sha(fw, day)[:40]
                for hw, labels in LABELS.items():
                    label = labels.get(fw)
                    if label is None:
                        continue
                    rng = random.Random(f"{fw}|{hw}|{day.isoformat()}")
                    queue = timedelta(minutes=rng.randint(1, 90 if hw in AMD else 20))
                    base = Provenance(
                        run_id=f"demo-{fw}-{day:%Y%m%d}", job_id="", ci_system="demo",
                        repository=REPO[fw], workflow="nightly", head_sha=commit,
                        branch="main", event="schedule", run_conclusion="completed",
                        run_url=f"https://github.com/{REPO[fw]}/actions/runs/{_number(fw, day)}",
                        run_created_at=created, run_started_at=created,
                        run_completed_at=created + timedelta(hours=3),
                        runner_labels=["self-hosted", label], runner_name=f"{label}-{night % 4:02d}",
                        job_conclusion="success", framework=fw,
                        framework_version={"vllm": "0.12.0", "sglang": "0.5.6",
                                           "pytorch": "2.10.0"}[fw],
                        rocm_version="7.0" if hw in AMD else "",
                        cuda_version="" if hw in AMD else "12.9",
                        job_created_at=created, job_started_at=created + queue,
                        job_completed_at=created + queue + timedelta(minutes=50))
                    if hw == BUILD_ONLY:
                        prov = _with(base, f"{hw}/build", f"{label}: build image", "build")
                        writer.ensure_job(conn, prov)
                        summary.jobs += 1
                        continue
                    for suite in test_suites(fw, hw):
                        prov = _with(base, f"{hw}/{suite}", f"{label}: {suite}", suite)
                        result = ParseResult(format="junit", tests=_tests(
                            rng, fw, suite, sizes[(fw, suite)], hw, night, days))
                        _, written = writer.write(conn, result, prov, _art(prov, "junit"))
                        summary.jobs += 1
                        summary.test_results += written
                    if fw == "vllm":  # its own stream: lane sizes do not move the noise
                        rng = random.Random(f"{fw}|{hw}|{day.isoformat()}|perf")
                        prov = _with(base, f"{hw}/perf", f"{label}: serving benchmarks",
                                     "performance")
                        result = ParseResult(format="serving-bench",
                                             benchmarks=_benchmarks(rng, hw, night, days))
                        _, written = writer.write(conn, result, prov, _art(prov, "serving-bench"))
                        summary.benchmark_rows += written
                        prov = _with(base, f"{hw}/gsm8k", f"{label}: gsm8k accuracy", "accuracy")
                        result = ParseResult(format="lm-eval", accuracy=_accuracy(rng, hw))
                        _, written = writer.write(conn, result, prov, _art(prov, "lm-eval"))
                        summary.accuracy_rows += written
                        summary.jobs += 2
                        disagg = _disaggregated(rng, hw)
                        if disagg is not None:  # capability lanes (see DISAGG)
                            prov = _with(base, f"{hw}/disagg", f"{label}: disaggregated serving",
                                         "disaggregated")
                            _, written = writer.write(conn, disagg, prov, _art(prov, "disagg"))
                            summary.benchmark_rows += len(disagg.benchmarks)
                            summary.accuracy_rows += len(disagg.accuracy)
                            summary.jobs += 1
        if (night + 1) % 10 == 0 or night + 1 == days:
            rate = summary.test_results / max(1e-9, perf_counter() - began)
            echo(f"demo: {night + 1}/{days} nights written, {summary.test_results:,} test "
                 f"results ({rate:,.0f}/s)")
    with engine.begin() as conn:
        summary.runners = store.add_runner_snapshots(conn, _runners(writer, conn, end, days))
    store.tidy(engine)
    return summary


COLLECTION_HOURS = 2  # `parity collect runners` every two hours, as a scheduled sync would


def _runners(writer: Writer, conn, end: date, days: int) -> list[dict]:
    """Each fleet's runners as every collection of the history saw them (one every
    `COLLECTION_HOURS`): four per label, one MI455X runner offline and one MI300X runner
    offline, busy ones at night, and on MI355X a just-in-time runner that exists for one
    job, so in one collection only (a fleet view that counted every runner ever seen would
    count thousands of them)."""
    rows = []
    first = datetime.combine(end - timedelta(days=days - 1), time(0, 0))
    moments = [first + timedelta(hours=h) for h in range(0, 24 * days, COLLECTION_HOURS)]
    for hw, labels in LABELS.items():
        for fw, label in labels.items():
            hw_pk = writer.hardware_pk(conn, ["self-hosted", label], "")
            names = json.dumps(["self-hosted", "linux", "x64", label])
            for seen in moments:
                night = seen.hour < 6
                for i in range(4):
                    offline = (hw == "mi455x" and i == 3) or (hw == "mi300x" and i == 0)
                    rows.append(dict(
                        scope=REPO[fw], runner_id=f"{label}-{i:02d}", name=f"{label}-{i:02d}",
                        labels=names, os="Linux", status="offline" if offline else "online",
                        busy=not offline and (i < 3 if night else i < 1), hardware_id=hw_pk,
                        seen_at=seen))
                if hw == "mi355x":
                    jit = f"{label}-jit-{seen:%Y%m%d%H}"
                    rows.append(dict(scope=REPO[fw], runner_id=jit, name=jit, labels=names,
                                     os="Linux", status="online", busy=True, hardware_id=hw_pk,
                                     seen_at=seen))
    return rows


def _number(*parts) -> int:
    """A stable GitHub-like id for demo runs and jobs."""
    return 10_000_000_000 + int(_sha(*parts)[:8], 16)


def _with(base: Provenance, job_id: str, name: str, suite: str) -> Provenance:
    url = f"{base.run_url}/job/{_number(base.run_id, job_id)}" if base.run_url else ""
    return replace(base, job_id=job_id, job_name=name, suite=suite, job_url=url)


def _art(prov: Provenance, fmt: str) -> ArtifactInfo:
    sha = _sha(prov.run_id, prov.job_id, fmt)
    return ArtifactInfo(path=f"demo/{prov.run_id}/{prov.job_id}.{fmt}", sha256=sha,
                        size_bytes=0, format=fmt, parser_version="demo", name="demo")
