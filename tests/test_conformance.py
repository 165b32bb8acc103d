"""Every real sample in ../shared/fixtures/real parses, with its counts checked; every file
there that is not a CI result (configs, webhooks, dashboard exports) is recognised as such."""
from __future__ import annotations

import io
from collections import Counter

import pytest

from parity.collectors.formats.detect import FORMATS, NotRecognised, detect, run_parser
from parity.collectors.ingest import IngestOptions, ingest
from parity.db.inventory import inventory
from tests.samples import shared

# path, format, test outcomes, benchmark rows, accuracy rows
RESULTS = [
    ("formats/junit/pytest84_properties_binoptests.xml", "junit", {"passed": 21, "skipped": 12}, 0, 0),
    ("formats/junit/pytest_duplicate_testcase_mnist_custom_error_message.xml", "junit", {"skipped": 1}, 0, 0),
    ("formats/junit/pytest_tt-torch_report_torch_33706643326.xml", "junit", {"passed": 37, "skipped": 211, "xfailed": 2}, 0, 0),
    ("formats/junit/xmlrunner_multisuite_report_33467916002.xml", "junit", {"error": 1, "failed": 1, "passed": 224, "skipped": 17}, 0, 0),
    ("formats/lm-eval/lm-eval-0.4.2_PowerBot-8B_gsm8k.json", "lm-eval", {}, 0, 2),
    ("formats/lm-eval/lm-eval-0.4.2_PowerBot-8B_mmlu_groups.json", "lm-eval", {}, 0, 62),
    ("formats/lm-eval/lm-eval-0.4.2_PowerBot-8B_truthfulqa.json", "lm-eval", {}, 0, 27),
    ("formats/lm-eval/lm-eval-0.4.x-early_Meta-Llama-3-8B-Instruct_gsm8k.json", "lm-eval", {}, 0, 2),
    ("formats/pytest-json-report/sample_report.json", "pytest-json", {"error": 2, "failed": 3, "passed": 2, "skipped": 1, "xfailed": 1, "xpassed": 1}, 0, 0),
    ("formats/pytorch/ci_expected_accuracy_cuda_inductor_torchbench_inference.csv", "inductor-csv", {}, 148, 0),
    ("formats/pytorch/ci_expected_accuracy_rocm_inductor_torchbench_inference.csv", "inductor-csv", {}, 146, 0),
    ("formats/pytorch/oss-benchmark-v3_add_loop_inductor_dynamic_gpu.json", "pytorch-v3", {}, 1, 0),
    ("formats/pytorch/oss-benchmark-v3_do_not_overwrite_runners_info.json", "pytorch-v3", {}, 1, 0),
    ("formats/pytorch/oss-benchmark-v3_json-each-row.json", "pytorch-v3", {}, 3, 0),
    ("formats/vllm/benchmark_serving_appended_results.jsonl", "serving-bench", {}, 171, 0),
    ("pytorch/benchmark_v3_json/add_loop_eager_dynamic.json", "pytorch-v3", {}, 1, 0),
    ("pytorch/benchmark_v3_json/add_loop_inductor_dynamic_gpu.json", "pytorch-v3", {}, 1, 0),
    ("pytorch/benchmark_v3_json/do_not_overwrite_runners_info.json", "pytorch-v3", {}, 1, 0),
    ("pytorch/benchmark_v3_json/json-each-row.json", "pytorch-v3", {}, 3, 0),
    ("pytorch/ci_expected_accuracy/cuda/inductor_huggingface_training.csv", "inductor-csv", {}, 88, 0),
    ("pytorch/ci_expected_accuracy/cuda/inductor_torchbench_inference.csv", "inductor-csv", {}, 148, 0),
    ("pytorch/ci_expected_accuracy/cuda/inductor_torchbench_inference.legacy.csv", "inductor-csv", {}, 124, 0),
    ("pytorch/ci_expected_accuracy/rocm/inductor_huggingface_training.csv", "inductor-csv", {}, 64, 0),
    ("pytorch/ci_expected_accuracy/rocm/inductor_torchbench_inference.csv", "inductor-csv", {}, 188, 0),
    ("pytorch/expected_ci_perf/expected_ci_speedup_inductor_torchbench_cpu.csv", "inductor-csv", {}, 16, 0),
    ("pytorch/junit_xml/junit.multiresult.xml", "junit", {"failed": 2, "passed": 1, "skipped": 1}, 0, 0),
    ("pytorch/junit_xml/pytest_junit.fail.xml", "junit", {"failed": 1, "passed": 3, "skipped": 1}, 0, 0),
    ("pytorch/junit_xml/pytest_junit.gloo.elastic.spark.torch.xml", "junit", {"passed": 22}, 0, 0),
    ("pytorch/junit_xml/pytest_junit.gloo.standalone.xml", "junit", {"passed": 80, "skipped": 17}, 0, 0),
    ("pytorch/junit_xml/tst_disabled.xml", "junit", {"error": 1, "failed": 19, "passed": 6, "skipped": 5}, 0, 0),
    ("semianalysis-inferencex/bench-result_glm5_fp8_vllm_tp8_isl1024_osl128_conc8.json", "serving-bench", {}, 13, 0),
    ("semianalysis-inferencex/supplemental-evals.json", "inferencex-evals", {}, 0, 132),
    # documents that report on runs and jobs of their own (counts: the tests of their jobs)
    ("rocm-quartz/status_release-nightly_20260821.json", "quartz-status", {"passed": 30, "failed": 66}, 0, 0),
    ("vllm-ci/dashboard_ci_health.json", "vllm-ci-health", {}, 0, 0),
    ("vllm-ci/dashboard_test_results_2026-05-18_amd.jsonl", "vllm-ci-results", {}, 0, 0),
    ("vllm-ci/dashboard_test_results_2026-05-18_upstream.jsonl", "vllm-ci-results", {"failed": 6}, 0, 0),
]

# Configuration, webhook payloads and other dashboards' exports: not CI result files.
NOT_RESULTS = [
    "formats/vllm/lm-eval-config_Meta-Llama-3-8B-Instruct-FP8.yaml",
    "formats/vllm/lm-eval-config_Meta-Llama-4-Maverick-17B-128E-Instruct-FP8-ROCm.yaml",
    "formats/vllm/perf-benchmarks_serving-tests-rocm.json",
    "pytorch/github_webhooks/workflow_job.queued.json",
    "pytorch/github_webhooks/workflow_jobs.json",
    "pytorch/github_webhooks/workflow_run.completed.json",
    "rocm-quartz/status_json_reference.jsonc",
    "semianalysis-inferencex/amd-master.yaml",
    "semianalysis-inferencex/eval-thresholds.yaml",
    "semianalysis-inferencex/inference-chart-config.json",
    "semianalysis-inferencex/run_stats.mock.json",
    "semianalysis-inferencex/runners.yaml",
    "sglang-ci/pr-test-amd.yml",
    "vllm-ci/dashboard_config_parity.json",
    "vllm-ci/dashboard_failure_trends.json",
    "vllm-ci/dashboard_parity_key_overrides.json",
    "vllm-ci/gsm8k_DeepSeek-R1-TP.yaml",
    "vllm-ci/gsm8k_DeepSeek-R1-TP_MI355.yaml",
    "vllm-ci/perf-benchmarks_serving-tests-rocm.json",
]


def _parse(path):
    data = path.read_bytes()
    fmt = detect(data[:65536], str(path), lambda: data)
    return fmt, run_parser(FORMATS[fmt], io.BytesIO(data), str(path))


def test_every_real_file_is_accounted_for(real):
    listed = {p for p, *_ in RESULTS} | set(NOT_RESULTS)
    present = {str(p.relative_to(real)) for p in real.rglob("*")
               if p.is_file() and p.name != "README.md"}
    assert present - listed == set(), "new real samples need an entry in this test"


@pytest.mark.parametrize("rel,fmt,outcomes,benchmarks,accuracy", RESULTS,
                         ids=[r[0].rsplit("/", 1)[-1] for r in RESULTS])
def test_real_sample_parses_with_known_counts(real, rel, fmt, outcomes, benchmarks, accuracy):
    got_fmt, result = _parse(shared(real / rel, "a listed real sample"))
    assert got_fmt == fmt
    tests = result.tests + [t for job in result.jobs for t in job.result.tests]
    assert dict(Counter(t.outcome for t in tests)) == outcomes
    assert (len(result.benchmarks), len(result.accuracy)) == (benchmarks, accuracy)


@pytest.mark.parametrize("rel", NOT_RESULTS, ids=[r.rsplit("/", 1)[-1] for r in NOT_RESULTS])
def test_non_result_files_are_recognised_as_such(real, rel):
    data = shared(real / rel, "a listed real file").read_bytes()
    with pytest.raises(NotRecognised):
        detect(data[:65536], rel, lambda: data)


def test_real_details(real):
    _, lm = _parse(real / "formats/lm-eval/lm-eval-0.4.2_PowerBot-8B_mmlu_groups.json")
    rows = {(a.task, a.metric, a.filter): a for a in lm.accuracy}
    mmlu = rows[("mmlu", "acc", "none")]
    assert mmlu.is_group and mmlu.stderr is not None
    sub = next(a for a in lm.accuracy if a.parent_group == "mmlu_humanities")
    assert not sub.is_group and sub.n is not None
    _, tq = _parse(real / "formats/lm-eval/lm-eval-0.4.2_PowerBot-8B_truthfulqa.json")
    assert any(a.metric.endswith("_diff") and a.value < 0 for a in tq.accuracy)
    _, v = _parse(real / "formats/vllm/benchmark_serving_appended_results.jsonl")
    assert {b.record_no for b in v.benchmarks} == set(range(9))
    # the "request_goodput:" typo key is a (null) metric, not configuration
    assert not any("request_goodput:" in b.config or b.metric.endswith(":") for b in v.benchmarks)
    assert any(b.config.get("request_rate") == "inf" for b in v.benchmarks)
    p99 = next(b for b in v.benchmarks if b.metric == "p99_ttft_ms")
    assert (p99.unit, p99.direction, p99.statistic) == ("ms", "lower", "p99")
    _, ix = _parse(real / "semianalysis-inferencex/bench-result_glm5_fp8_vllm_tp8_isl1024_osl128_conc8.json")
    ttft = next(b for b in ix.benchmarks if b.metric == "median_ttft")
    assert ttft.unit == "s" and ttft.config["max_concurrency"] == 8


def test_ingest_every_real_sample(real, engine):
    report = ingest(engine, [real])
    assert report.rejected == []
    info = inventory(engine)
    tests = sum(sum(o.values()) for _, _, o, _, _ in RESULTS)
    # files that are byte-identical copies (formats/pytorch vs pytorch/benchmark_v3_json) dedupe
    assert report.count("ingested") + report.count("unchanged") == len(RESULTS)
    assert info["test_results"] == tests
    assert info["accuracy_rows"] == sum(r[4] for r in RESULTS)
    assert info["benchmark_rows"] <= sum(r[3] for r in RESULTS)
    again = ingest(engine, [real])
    assert again.count("ingested") == 0
    assert inventory(engine) | {"last_ingest": None} == info | {"last_ingest": None}


def test_a_missing_shared_file_fails_when_required(monkeypatch, tmp_path):
    """In CI (PARITY_REQUIRE_SHARED) a listed sample that disappeared is a failure, not a
    skip; elsewhere it is a skip that names the file."""
    gone = tmp_path / "removed-sample.xml"
    monkeypatch.setenv("PARITY_REQUIRE_SHARED", "1")
    with pytest.raises(pytest.fail.Exception, match="removed-sample.xml is absent"):
        shared(gone, "a listed real sample")
    monkeypatch.delenv("PARITY_REQUIRE_SHARED")
    with pytest.raises(pytest.skip.Exception, match="removed-sample.xml is absent"):
        shared(gone, "a listed real sample")
    assert shared(tmp_path, "a folder that is there") == tmp_path
