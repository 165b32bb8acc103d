"""vLLM-shaped Buildkite nightlies for the fake: the upstream `ci` pipeline (NVIDIA) and the
`amd-ci` mirror (MI325/MI355), with the situations a collector must get right: logs with
Buildkite's timestamps and colours, eight interleaved `>>Shard N:` pytest processes, a job
without pytest output, a soft fail, an infrastructure kill, a retried job, parallel shards,
a JUnit artifact, and a nightly whose soft-fail job is still running."""
from __future__ import annotations

from datetime import datetime, timedelta

from tests.fakebuildkite.world import Build, World

ORG = "vllm"
STEPS = ("V1 e2e", "Kernels Core Operation Test", "Entrypoints Integration Test (API Server)")


def stamp(line: str, t: int = 1747526400000) -> str:
    """A log line as Buildkite's agent writes it: an APC timestamp marker, with colours."""
    return f"\x1b_bk;t={t}\x07{line}"


def pytest_log(node_prefix: str, passed: int, failed: list[str], skipped: int = 0,
               shards: int = 0) -> bytes:
    """A job log ending in pytest's short summary and counts line(s)."""
    lines = [stamp("--- :docker: pulling image"), "\x1b[32mcollecting ...\x1b[0m"]
    if shards:
        per = passed // shards
        body = []
        for s in range(shards):
            fails = [f for i, f in enumerate(failed) if i % shards == s]
            body.append([f"=== short test summary info ==="]
                        + [f"FAILED {node_prefix}::{f} - AssertionError: mismatch" for f in fails]
                        + [f"==== {len(fails)} failed, {per} passed in 12.5s ====" if fails
                           else f"==== {per} passed in 12.5s ===="])
        for i in range(max(len(b) for b in body)):  # interleaved, as eight processes write
            for s, b in enumerate(body):
                if i < len(b):
                    lines.append(stamp(f">>Shard {s}: {b[i]}"))
    else:
        lines += [stamp("============================= test session starts =============")]
        lines += [f"tests/x.py::test_{i} PASSED" for i in range(3)]
        lines += [stamp("=========================== short test summary info ============")]
        lines += [stamp(f"FAILED {node_prefix}::{f} - AssertionError: mismatch") for f in failed]
        counts = ", ".join(x for x in (f"{len(failed)} failed" if failed else "",
                                       f"{passed} passed", f"{skipped} skipped" if skipped else "")
                           if x)
        lines += [stamp(f"================= {counts} in 301.52s (0:05:01) =================")]
    lines.append("--- :end: done")
    return ("\n".join(lines) + "\n").encode()


JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="3" failures="1" errors="0" skipped="0">
<testcase classname="tests.entrypoints.test_api_server" name="test_health" time="0.1"/>
<testcase classname="tests.entrypoints.test_api_server" name="test_models" time="0.1"/>
<testcase classname="tests.entrypoints.test_api_server" name="test_chat" time="0.3">
<failure message="assert 500 == 200">assert 500 == 200</failure></testcase>
</testsuite></testsuites>"""


def nightly(world: World, pipeline: str, number: int, at: datetime, amd: bool, *,
            commit: str, running_soft_fail: bool = False) -> Build:
    """One nightly of `ci` (amd False) or `amd-ci` (amd True)."""
    b = world.build(ORG, pipeline, number, at, commit=commit,
                    message="AMD Full CI Run - nightly" if amd else "Full CI run - nightly",
                    state="failed")
    prefix = "mi325_1: " if amd else ""
    q1 = "amd_mi325_1" if amd else "gpu_1_queue"
    world.job(b, "bootstrap", "cpu_queue_premerge", log="--- bootstrap\nok\n")
    world.job(b, f"{'mi325_1: ' if amd else ''}Docker build image", "cpu_queue_premerge",
              log="--- docker build\n" * 50)
    # V1 e2e: one job, a failure on AMD only
    world.job(b, f"{prefix}V1 e2e" + ("" if amd else " (H100)"),
              "amd_mi325_1" if amd else "mithril-h100-pool",
              state="failed" if amd else "passed", exit_status=1 if amd else 0,
              log=pytest_log("tests/v1/e2e/test_spec_decode.py",
                             120, ["test_ngram_correctness[llama]"] if amd else []))
    # Kernels: two parallel shards; the AMD log is eight interleaved pytest processes
    for i in range(2):
        world.job(b, f"{prefix}Kernels Core Operation Test {i + 1}", q1,
                  parallel_group_index=i, parallel_group_total=2,
                  log=pytest_log("tests/kernels/core/test_layernorm.py", 80,
                                 [], shards=8 if amd else 0))
    # Entrypoints: uploads JUnit instead of relying on its log
    ep = world.job(b, f"{prefix}Entrypoints Integration Test (API Server)" +
                   ("" if amd else " (B200)"), "amd_mi355_1" if amd else "B200",
                   state="failed", exit_status=1, log="--- uploading junit\n")
    world.artifact(b, ep, "test-results/junit.xml", JUNIT)
    # a benchmark step: no pytest output at all
    world.job(b, f"{prefix}Benchmarks", q1, log="--- running benchmark\nthroughput 4.2 req/s\n")
    if amd:
        # soft fail, and an agent lost mid-way (infrastructure, not a test failure)
        world.job(b, "mi355_1: Quantization Test", "amd_mi355_1", state="failed", soft_failed=True,
                  exit_status=1, log=pytest_log("tests/quantization/test_fp8.py", 40,
                                                ["test_fp8_gemm"]))
        lost = world.job(b, "mi325_1: LoRA Test", "amd_mi325_1", state="failed", exit_status=-1,
                         signal_reason="agent_stop", log="--- lora\nagent lost\n")
        world.retry(b, lost, state="passed", log=pytest_log("tests/lora/test_lora.py", 30, []))
        if running_soft_fail:
            world.job(b, "mi355_1: Slow Nightly Soft Fail", "amd_mi355_1", state="running",
                      soft_failed=True, log="--- still going\n")
    return b


def history(world: World, start: datetime, nights: int = 3) -> None:
    """`nights` nightly pairs from `start`, a day apart; the last AMD one still has a
    soft-fail job running."""
    for n in range(nights):
        at = start + timedelta(days=n)
        commit = f"{n + 1:040x}"
        nightly(world, "ci", 66630 + n, at + timedelta(hours=6), amd=False, commit=commit)
        nightly(world, "amd-ci", 8560 + n, at + timedelta(hours=9), amd=True, commit=commit,
                running_soft_fail=n == nights - 1)
