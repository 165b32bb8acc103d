"""The other parsers on hand-written inputs whose right answer is known."""
from __future__ import annotations

import io
import json

import pytest

from parity.collectors.formats import inductor_csv, inferencex, lm_eval, pytest_log, serving
from parity.collectors.formats.records import ParseError

LOG = """\
2026-01-02T03:04:05.1234567Z + pytest -v tests/kernels
2026-01-02T03:04:06.0000000Z ============================= test session starts ==============================
2026-01-02T03:04:07.0000000Z tests/kernels/test_attn.py::test_decode[fp8] PASSED [ 50%]
2026-01-02T03:04:08.0000000Z =========================== short test summary info ============================
2026-01-02T03:04:08.0000000Z \x1b[31mFAILED\x1b[0m tests/kernels/test_attn.py::test_prefill[x::y] - AssertionError: boom
2026-01-02T03:04:08.0000000Z assert 1 == 2
2026-01-02T03:04:08.0000000Z ERROR tests/kernels/test_attn.py::test_prefill[x::y] - RuntimeError: teardown
2026-01-02T03:04:08.0000000Z ERROR tests/kernels/test_cache.py::TestCache::test_alloc - failed on setup
2026-01-02T03:04:08.0000000Z XFAIL tests/kernels/test_attn.py::test_old - #123
2026-01-02T03:04:08.0000000Z SKIPPED [3] tests/kernels/test_fp4.py:88: requires sm100
2026-01-02T03:04:08.0000000Z \x1b[31m==== 1 failed, 8 passed, 3 skipped, 1 xfailed, 2 errors, 1 rerun in 12.34s ====\x1b[0m
+ pytest -q tests/models
3 passed, 1 warning in 0.50s
"""


def test_pytest_log_sessions_and_summary_lines():
    r = pytest_log.parse(LOG.encode())
    assert [s.counts for s in r.sessions] == [
        {"failed": 1, "passed": 8, "skipped": 3, "xfailed": 1, "error": 2, "rerun": 1},
        {"passed": 3, "warnings": 1}]
    assert r.sessions[0].duration_s == 12.34
    assert r.sessions[0].label.startswith("log:1") and "pytest -v tests/kernels" in r.sessions[0].label
    tests = {t.test_key: t for t in r.tests}
    failed = tests["tests.kernels.test_attn::test_prefill[x::y]"]
    assert (failed.outcome, failed.params, failed.message) == ("failed", "x::y", "AssertionError: boom")
    assert tests["tests.kernels.test_cache.TestCache::test_alloc"].outcome == "error"
    assert tests["tests.kernels.test_attn::test_old"].outcome == "xfailed"
    assert len(tests) == 3  # the FAILED + ERROR pair is one test; folded skips name no test


def test_pytest_log_without_summary_is_rejected():
    with pytest.raises(ParseError, match="no pytest summary"):
        pytest_log.parse(b"just some build output\nall good\n")


SGLANG = ('{"backend": "sglang", "dataset_name": "random", "request_rate": Infinity, '
          '"max_concurrency": 64, "random_input_len": 1024, "random_output_len": 1024, '
          '"duration": 30.5, "completed": 200, "total_input_tokens": 204800, '
          '"request_throughput": 6.5, "input_throughput": 6700.0, "output_throughput": 6650.0, '
          '"mean_e2e_latency_ms": 9000.0, "median_ttft_ms": 120.0, "p99_itl_ms": 80.0}\n')


def test_sglang_bench_serving_jsonl_with_infinity():
    r = serving.parse((SGLANG * 2).encode())
    assert {b.record_no for b in r.benchmarks} == {0, 1}
    b = next(b for b in r.benchmarks if b.metric == "mean_e2e_latency_ms")
    assert (b.benchmark, b.unit, b.direction, b.statistic) == ("sglang-bench-serving", "ms", "lower", "mean")
    assert b.config["request_rate"] == "inf" and b.config["isl"] == 1024 and b.config["concurrency"] == 64


@pytest.mark.parametrize("bad,reason", [
    ('{"request_throughput": "fast", "output_throughput": 1.0, "completed": 3}', "expected a number"),
    ('{"request_throughput": [1], "output_throughput": 1.0, "completed": 3}', "expected a number"),
    ('{"request_throughput": 1.0, "output_throughput": 1.0, "completed": 3', "malformed JSON"),
])
def test_serving_rejects_bad_values(bad, reason):
    with pytest.raises(ParseError, match=reason):
        serving.parse(bad.encode())


def test_lm_eval_rsplit_na_stderr_and_legacy():
    doc = {"results": {"gsm8k": {"alias": "gsm8k", "exact_match,strict,odd-filter": 0.75,
                                 "exact_match_stderr,strict,odd-filter": "N/A"}},
           "versions": {"gsm8k": 3}, "n-samples": {"gsm8k": {"original": 1319, "effective": 250}},
           "config": {"model": "vllm", "model_args": "pretrained=meta-llama/Llama-3-8B,tp=1"}}
    r = lm_eval.parse(json.dumps(doc).encode())
    (a,) = r.accuracy
    assert (a.metric, a.filter, a.stderr, a.n, a.model) == (
        "exact_match,strict", "odd-filter", None, 250, "meta-llama/Llama-3-8B")
    legacy = {"results": {"arc_challenge": {"acc": 0.266, "acc_stderr": 0.0129}},
              "versions": {"arc_challenge": "2.0"}}
    (b,) = lm_eval.parse(json.dumps(legacy).encode()).accuracy
    assert (b.metric, b.filter, b.stderr) == ("acc", "none", 0.0129)
    with pytest.raises(ParseError, match="expected a number"):
        lm_eval.parse(json.dumps({"results": {"t": {"acc,none": [1]}}, "versions": {}}).encode())


def test_inferencex_aggregated_row():
    row = {"hw": "mi355x", "conc": 64, "model": "deepseek-ai/DeepSeek-R1", "framework": "sglang",
           "precision": "fp8", "tp": 8, "ep": 8, "dp_attention": True, "isl": 1024, "osl": 1024,
           "disagg": False, "tput_per_gpu": 1234.5, "median_intvty": 45.0, "median_ttft": 0.25}
    r = inferencex.parse_agg(json.dumps([row, dict(row, hw="b200", tput_per_gpu=2000.0)]).encode())
    assert {b.hardware for b in r.benchmarks} == {"mi355x", "b200"}
    tput = next(b for b in r.benchmarks if b.metric == "tput_per_gpu" and b.hardware == "mi355x")
    assert (tput.value, tput.direction, tput.config["tp"], tput.config["concurrency"]) == (1234.5, "higher", 8, 64)
    ttft = next(b for b in r.benchmarks if b.metric == "median_ttft")
    assert (ttft.unit, ttft.direction) == ("s", "lower")


def test_inductor_performance_and_accuracy_csv():
    perf = ("dev,name,batch_size,speedup,abs_latency,compilation_latency,compression_ratio,"
            "eager_peak_mem,dynamo_peak_mem,calls_captured,unique_graphs,graph_breaks,"
            "unique_graph_breaks,autograd_captures,autograd_compiles,cudagraph_skips\n"
            "cuda,BERT_pytorch,2,2.014039,58.901280,38.538333,0.923878,250.866893,271.536947,545,1,0,0,0,0,1\n")
    r = inductor_csv.parse(perf.encode(), source_name="inductor_torchbench_amp_inference_cuda_performance.csv")
    m = {b.metric: b for b in r.benchmarks}
    assert (m["speedup"].value, m["speedup"].direction) == (2.014039, "higher")
    assert (m["abs_latency"].unit, m["abs_latency"].direction) == ("ms", "lower")
    assert m["speedup"].config["suite"] == "torchbench"
    acc = ("dev,name,batch_size,accuracy,calls_captured,unique_graphs,graph_breaks,"
           "unique_graph_breaks,autograd_captures,autograd_compiles,cudagraph_skips,compilation_latency\n"
           "cuda,BERT_pytorch,4,pass,1,1,0,0,0,0,0,10.0\ncuda,hf_T5,4,fail_accuracy,1,1,0,0,0,0,0,9.0\n"
           "cuda,llama,1,eager_fail_to_run,0,0,0,0,0,0,0,0\n")
    r = inductor_csv.parse(acc.encode(), source_name="inductor_huggingface_amp_inference_cuda_accuracy.csv")
    assert [(t.name, t.outcome) for t in r.tests] == [
        ("BERT_pytorch", "passed"), ("hf_T5", "failed"), ("llama", "error")]


def test_a_pytest_log_counts_a_repeat_as_a_rerun_only_after_a_failure():
    from parity.collectors.formats.pytest_log import parse as parse_log

    r = parse_log(b"=== short test summary info ===\nFAILED t.py::a - x\nPASSED t.py::b\n"
                  b"== 1 failed, 1 passed in 1.0s ==\n"
                  b"=== short test summary info ===\nPASSED t.py::a\nPASSED t.py::b\n"
                  b"== 2 passed in 1.0s ==\n")
    keys = [(t.test_key, t.outcome) for t in r.tests]
    # a: failed, then passed again (a retry of the failure: the writer counts a rerun);
    # b: passed, then run again on purpose: a second execution, kept apart, with a warning
    assert keys == [("t::a", "failed"), ("t::b", "passed"), ("t::a", "passed"),
                    ("t::b#2", "passed")]
    assert len(r.meta["warnings"]) == 1 and "t::b is reported again" in r.meta["warnings"][0]


def test_the_rule_for_non_standard_json_numbers():
    """Configuration may be infinite (a request rate of inf), a metric may not: a NaN or
    infinite metric, literal or spelled as text, is stored as missing with a warning that
    names the record and key; numeric text is a number; other text is an error."""
    from parity.collectors.formats.records import config_value, number

    line = ('{"backend": "vllm", "request_rate": "Infinity", "max_concurrency": 8, '
            '"completed": 3, "request_throughput": NaN, "output_throughput": "12.5", '
            '"mean_ttft_ms": "-inf", "median_ttft_ms": 40.0}')
    r = serving.parse(line.encode())
    got = {b.metric: b.value for b in r.benchmarks}
    assert got["request_throughput"] is None and got["mean_ttft_ms"] is None
    assert got["output_throughput"] == 12.5 and got["median_ttft_ms"] == 40.0
    assert r.benchmarks[0].config["request_rate"] == "inf"
    assert r.meta["warnings"] == [
        "record 1 metric 'request_throughput': nan is not a finite number; stored as missing",
        "record 1 metric 'mean_ttft_ms': -inf is not a finite number; stored as missing"]
    assert [config_value(v) for v in (float("inf"), "-Infinity", float("nan"), "fast", 3)] == \
        ["inf", "-inf", "nan", "fast", 3]
    with pytest.raises(ParseError, match="not finite"):
        number(float("nan"), "x")  # without a place to warn, the caller's rule is strict
    lm = lm_eval.parse(b'{"results": {"t": {"acc,none": Infinity, "acc_norm,none": 0.5}}, '
                       b'"versions": {}}')
    assert {a.metric: a.value for a in lm.accuracy} == {"acc": None, "acc_norm": 0.5}


BENCH_SCRIPT_FILES = {
    # vllm bench latency --output-json (seconds; percentiles keyed by text)
    "latency.json": ('{"avg_latency": 1.5, "latencies": [1.4, 1.6], "percentiles": '
                     '{"10": 1.41, "50": 1.5, "99": 1.7}}',
                     "vllm-latency", {"avg_latency": (1.5, "s", "lower"),
                                      "p99_latency": (1.7, "s", "lower")}),
    # vllm bench throughput --output-json
    "throughput.json": ('{"elapsed_time": 12.3, "num_requests": 1000, "total_num_tokens": 123456, '
                        '"requests_per_second": 81.3, "tokens_per_second": 10037.1}',
                        "vllm-throughput", {"requests_per_second": (81.3, "req/s", "higher"),
                                            "tokens_per_second": (10037.1, "tok/s", "higher"),
                                            "elapsed_time": (12.3, "s", "lower")}),
    # vLLM's nightly-benchmark summary table, human-readable columns, one GPU per row
    "benchmark_results.json": (
        '[{"Test name": "serving_llama8B_tp1_qps_1", "Model": "meta-llama/Llama-3.1-8B", '
        '"GPU": "8xAMD Instinct MI300X", "qps": "inf", "Tput (req/s)": 10.2, '
        '"Mean TTFT (ms)": 30.1, "P99 ITL (ms)": 12.0}]', "vllm-benchmark-summary",
        {"Tput (req/s)": (10.2, "req/s", "higher"), "Mean TTFT (ms)": (30.1, "ms", "lower")}),
    # SGLang bench_one_batch, objects written back to back (no decode step at output_len 1)
    "benchmark.log": ('{"run_name": "t", "batch_size": 4, "input_len": 1024, "output_len": 1, '
                      '"prefill_latency": 3.7, "prefill_throughput": 1096.2, "total_latency": 3.7, '
                      '"overall_throughput": 1097.3}{"run_name": "t", "batch_size": 4, '
                      '"input_len": 1024, "output_len": 1024, "prefill_latency": 3.5, '
                      '"prefill_throughput": 1143.3, "median_decode_latency": 0.0188, '
                      '"median_decode_throughput": 211.7, "total_latency": 22.9, '
                      '"overall_throughput": 356.6}', "sglang-one-batch",
                      {"median_decode_throughput": (211.7, "tok/s", "higher"),
                       "prefill_latency": (3.5, "s", "lower")}),
    # SGLang bench_offline_throughput
    "offline.json": ('{"backend": "engine", "successful_requests": 1000, "total_latency": 20.1, '
                     '"total_input_tokens": 300000, "total_output_tokens": 200000, '
                     '"request_throughput": 49.7, "input_throughput": 14925.3, '
                     '"output_throughput": 9950.2, "total_throughput": 24875.5}', "serving-bench",
                     {"total_throughput": (24875.5, "tok/s", "higher"),
                      "total_output_tokens": (200000.0, "count", "none"),
                      "total_latency": (20.1, "s", "lower")}),
}


@pytest.mark.parametrize("name", sorted(BENCH_SCRIPT_FILES))
def test_framework_benchmark_script_outputs(name):
    from parity.collectors.formats.detect import FORMATS, detect, run_parser

    text, fmt, expected = BENCH_SCRIPT_FILES[name]
    data = text.encode()
    assert detect(data[:65536], name, lambda: data) == fmt
    r = run_parser(FORMATS[fmt], io.BytesIO(data), name)
    got = {b.metric: (b.value, b.unit, b.direction) for b in r.benchmarks}
    for metric, want in expected.items():
        assert got[metric] == want, metric
    if fmt == "vllm-benchmark-summary":
        assert {b.hardware for b in r.benchmarks} == {"AMD Instinct MI300X"}
        assert r.benchmarks[0].config["qps"] == "inf" and r.benchmarks[0].config["gpu_count"] == 8


def test_eval_script_results_are_accuracy_with_n():
    from parity.collectors.formats.detect import FORMATS, detect, run_parser

    line = ('{"task": "gsm8k", "backend": "srt", "num_gpus": 1, "latency": 45.1, '
            '"accuracy": 0.951, "num_requests": 200, "other": {"num_questions": 200, "parallel": 128}}\n'
            '{"num_questions": 1319, "accuracy": 0.93, "latency": 80.0}\n')
    data = line.encode()
    fmt = detect(data[:65536], "mmlu_result.jsonl", lambda: data)
    r = run_parser(FORMATS[fmt], io.BytesIO(data), "mmlu_result.jsonl")
    assert fmt == "eval-result"
    assert [(a.task, a.metric, a.value, a.n) for a in r.accuracy] == [
        ("gsm8k", "accuracy", 0.951, 200), ("mmlu", "accuracy", 0.93, 1319)]
    assert [b.metric for b in r.benchmarks] == ["latency", "latency"]


def test_an_unknown_json_names_the_closest_format_and_what_it_lacks():
    from parity.collectors.formats.detect import NotRecognised, detect

    data = b'{"request_throughput": 1.0, "mean_ttft_ms": 2.0}'
    with pytest.raises(NotRecognised, match=r"closest: serving-bench, which also needs "
                                            r"'output_throughput', 'completed'"):
        detect(data, "x.json", lambda: data)
