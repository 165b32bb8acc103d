"""Realistic repositories for the fake: AMD and NVIDIA jobs with the runner labels the real
fleets use, artifacts holding JUnit XML, serving-benchmark JSON and lm-eval results (with or
without a `parity-manifest.json`), a job whose results exist only in its log, an expired
artifact, a re-run, and a run still in progress."""
from __future__ import annotations

import json
import random
from datetime import datetime, timedelta

from tests.fakegithub.world import Run, World

AMD_LABEL, NV_LABEL = "mi355_1", "h200-1gpu"  # vLLM's runner labels for MI355X and H200


def junit(suite: str, n: int, failed: set[int] = frozenset(), skipped: dict[int, str] | None = None) -> str:
    skipped = skipped or {}
    cases = []
    for i in range(n):
        body = ""
        if i in failed:
            body = f'<failure message="assert {i}">AssertionError: case {i}</failure>'
        elif i in skipped:
            body = f'<skipped message="{skipped[i]}"/>'
        cases.append(f'<testcase classname="tests.{suite}.test_ops" name="test_case_{i}" '
                     f'file="tests/{suite}/test_ops.py" time="0.5">{body}</testcase>')
    return (f'<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" '
            f'tests="{n}" failures="{len(failed)}" skipped="{len(skipped)}">'
            + "".join(cases) + "</testsuite></testsuites>")


def serving(throughput: float, concurrency: int = 64) -> str:
    return json.dumps({
        "date": "20261120-010203", "backend": "vllm", "model_id": "meta-llama/Llama-3.1-70B-Instruct",
        "tokenizer_id": "meta-llama/Llama-3.1-70B-Instruct", "num_prompts": 640,
        "request_rate": "inf", "max_concurrency": concurrency, "random_input_len": 1024,
        "random_output_len": 1024, "duration": 120.0, "completed": 640,
        "total_input_tokens": 655360, "total_output_tokens": 655360,
        "request_throughput": throughput / 1024, "output_throughput": throughput,
        "total_token_throughput": throughput * 2, "mean_ttft_ms": 180.0, "median_ttft_ms": 150.0,
        "p99_ttft_ms": 900.0, "mean_tpot_ms": 30.0, "median_tpot_ms": 29.0, "p99_tpot_ms": 45.0})


def lm_eval(score: float) -> str:
    return json.dumps({
        "results": {"gsm8k": {"alias": "gsm8k", "exact_match,strict-match": score,
                              "exact_match_stderr,strict-match": 0.01}},
        "versions": {"gsm8k": 3}, "n-samples": {"gsm8k": {"original": 1319, "effective": 1319}},
        "config": {"model": "vllm", "model_args": "pretrained=deepseek-ai/DeepSeek-R1"}})


def pytest_log(passed: int, failed: int) -> str:
    lines = ["2026-11-20T01:00:00.0000000Z + pytest -v tests/entrypoints",
             "2026-11-20T01:00:01.0000000Z ============================= test session starts ====",
             "2026-11-20T01:09:00.0000000Z =========================== short test summary info ==="]
    lines += [f"2026-11-20T01:09:00.0000000Z FAILED tests/entrypoints/test_api.py::test_route_{i} - "
              f"AssertionError" for i in range(failed)]
    lines.append(f"2026-11-20T01:09:00.0000000Z ===== {failed} failed, {passed} passed in 540.00s =====")
    return "\n".join(lines) + "\n"


def manifest(job_id: int, suite: str, hardware: str, framework: str = "vllm") -> str:
    return json.dumps({"schema": 1, "framework": framework, "suite": suite, "hardware": hardware,
                       "job_id": job_id, "versions": {"framework": "0.11.1", "rocm": "7.0.2"}})


def nightly(world: World, repo: str, day: datetime, *, expired: bool = False,
            rerun: bool = False, status: str = "completed", workflow: str = "nightly.yml") -> Run:
    """One nightly run of a vLLM-like repository: five jobs, four artifacts, one log-only job."""
    run = world.add_run(repo, workflow=workflow, created_at=day, status=status,
                        conclusion="success" if status == "completed" else None)
    state = "completed" if status == "completed" else "in_progress"
    amd = world.add_job(run, "Kernels Test (mi355_1)", [AMD_LABEL], runner_name="mi355-amds_06",
                        queue_s=300, status=state)
    nv = world.add_job(run, "Kernels Test (h200)", [NV_LABEL], runner_name="h200-node-3",
                       queue_s=20, status=state)
    bench = world.add_job(run, "Benchmarks (mi355_1)", [AMD_LABEL], runner_name="mi355-amds_07",
                          status=state)
    ev = world.add_job(run, "Accuracy GSM8K (h200)", [NV_LABEL], runner_name="h200-node-4",
                       status=state)
    world.add_job(run, "Entrypoints Test (mi355_1)", [AMD_LABEL], runner_name="mi355-amds_08",
                  log=pytest_log(passed=40, failed=2), status=state)
    world.add_artifact(run, "test-results-amd", {
        "parity-manifest.json": manifest(amd.id, "kernels-test", "mi355x"),
        "results/junit.xml": junit("kernels", 30, failed={3, 7}, skipped={9: "not supported on ROCm"})})
    world.add_artifact(run, f"test-reports-kernels_{nv.id}",
                       {"junit.xml": junit("kernels", 30, failed={7})})
    world.add_artifact(run, "benchmark-mi355_1", {"serving.json": serving(2400.0)}, expired=expired)
    world.add_artifact(run, "accuracy", {
        "parity-manifest.json": manifest(ev.id, "accuracy", "h200"),
        "lm_eval/results.json": lm_eval(0.94)})
    if rerun:
        world.rerun(run)
        world.add_job(run, "Kernels Test (mi355_1)", [AMD_LABEL], runner_name="mi355-amds_02",
                      queue_s=60)
    return run


def history(world: World, repo: str, end: datetime, nights: int = 3) -> list[Run]:
    """`nights` nightly runs ending at `end`: the middle one has an expired artifact, the
    last one a re-run; plus one run still in progress after the last."""
    runs = []
    for i in range(nights):
        day = end - timedelta(days=nights - 1 - i)
        runs.append(nightly(world, repo, day, expired=(i == nights // 2), rerun=(i == nights - 1)))
    runs.append(nightly(world, repo, end + timedelta(hours=6), status="in_progress"))
    return runs


def bulk(world: World, repo: str, end: datetime, runs: int, jobs: int = 8, artifacts: int = 2,
         seed: int = 0) -> None:
    """`runs` runs of `jobs` jobs, each job uploading `artifacts` small JUnit artifacts named
    with its job id (the sync benchmark's shape)."""
    rng = random.Random(seed)
    for r in range(runs):
        run = world.add_run(repo, created_at=end - timedelta(minutes=30 * (runs - r)))
        for j in range(jobs):
            label = AMD_LABEL if j % 2 == 0 else NV_LABEL
            job = world.add_job(run, f"shard {j} ({label})", [label])
            for a in range(artifacts):
                world.add_artifact(run, f"test-reports-shard{a}_{job.id}", {
                    "junit.xml": junit(f"shard{j}", 20, failed={rng.randrange(40)})})
