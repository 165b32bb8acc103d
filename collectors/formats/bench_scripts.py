"""Outputs of the frameworks' own benchmark and evaluation scripts:
- `vllm bench latency` / `benchmark_latency.py --output-json`: `avg_latency` (s), the
  `latencies` and `percentiles` keyed by text ("10", "50", "99");
- `vllm bench throughput` / `benchmark_throughput.py --output-json`: `elapsed_time`,
  `num_requests`, `total_num_tokens`, `requests_per_second`, `tokens_per_second`;
- vLLM's nightly-benchmark summary (`benchmark_results.json`): rows with human-readable
  columns ("Test name", "GPU", "Mean TTFT (ms)", "Tput (req/s)", ...), whose unit is in
  the column name and whose GPU names the hardware of each row;
- SGLang `bench_one_batch` (`run_name`, `batch_size`, `prefill_latency`,
  `median_decode_throughput`, ..., latencies in seconds, throughputs in tokens/s), one JSON
  object per line or objects written back to back;
- the SGLang and vLLM GSM8K/MMLU evaluation scripts' results (`task`, `accuracy`,
  `num_requests` or `num_questions`, `latency`): an accuracy score and the run's latency."""
from __future__ import annotations

import json
import re
from typing import Any

from parity.collectors.formats import jsontext
from parity.collectors.formats.records import (AccuracyRecord, BenchmarkRecord, ParseError,
                                               ParseResult, config_value, number, optional_int)

PARSER_VERSION = "1"

LATENCY_KEYS = ("avg_latency", "percentiles")
THROUGHPUT_KEYS = ("elapsed_time", "requests_per_second", "tokens_per_second")
ONE_BATCH_KEYS = ("run_name", "batch_size", "prefill_latency")
EVAL_KEYS = ("accuracy",)
# units and directions of SGLang bench_one_batch's keys
_ONE_BATCH = {"prefill_latency": ("s", "lower", ""), "prefill_throughput": ("tok/s", "higher", ""),
              "median_decode_latency": ("s", "lower", "median"),
              "median_decode_throughput": ("tok/s", "higher", "median"),
              "total_latency": ("s", "lower", ""), "overall_throughput": ("tok/s", "higher", "")}
_THROUGHPUT = {"elapsed_time": ("s", "lower"), "requests_per_second": ("req/s", "higher"),
               "tokens_per_second": ("tok/s", "higher")}
_UNIT = re.compile(r"\(([^)]*)\)\s*$")
_SUMMARY_CONFIG = {"Test name", "GPU", "Model", "Dataset Name", "Input Len", "Output Len",
                   "TP Size", "PP Size", "dtype", "qps", "# of max concurrency."}


def looks_like_latency(obj: Any) -> bool:
    return isinstance(obj, dict) and all(k in obj for k in LATENCY_KEYS) and \
        isinstance(obj.get("percentiles"), dict)


def looks_like_throughput(obj: Any) -> bool:
    return isinstance(obj, dict) and all(k in obj for k in THROUGHPUT_KEYS)


def looks_like_summary(obj: Any) -> bool:
    return isinstance(obj, dict) and "Test name" in obj and "GPU" in obj


def looks_like_one_batch(obj: Any) -> bool:
    return isinstance(obj, dict) and all(k in obj for k in ONE_BATCH_KEYS)


def looks_like_eval(obj: Any) -> bool:
    return isinstance(obj, dict) and "accuracy" in obj and not isinstance(obj["accuracy"], dict) \
        and ("task" in obj or "num_questions" in obj or "num_requests" in obj)


def objects(data: bytes) -> list[Any]:
    """JSON, JSON Lines, or JSON objects written back to back (`}{`)."""
    try:
        return jsontext.flatten_records(jsontext.load_document_or_lines(data))
    except ParseError:
        text = jsontext.decode(data)
        decoder, pos, out = json.JSONDecoder(), 0, []
        while pos < len(text):
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if pos >= len(text):
                break
            try:
                value, pos = decoder.raw_decode(text, pos)
            except json.JSONDecodeError as exc:
                raise ParseError(f"malformed JSON: {exc.msg} at character {exc.pos}") from None
            out.append(value)
        return jsontext.flatten_records(out)


def parse_latency(data: bytes) -> ParseResult:
    result = ParseResult(format="vllm-latency")
    warn = result.meta.setdefault("warnings", []).append
    for no, obj in enumerate(objects(data)):
        if not looks_like_latency(obj):
            raise ParseError(f"record {no + 1}: not a vLLM latency result (needs avg_latency, "
                             f"percentiles)")
        metrics = [("avg_latency", obj.get("avg_latency"), "mean")]
        metrics += [(f"p{k}_latency", v, f"p{k}") for k, v in sorted(
            obj["percentiles"].items(), key=lambda kv: float(kv[0]) if _num(kv[0]) else 0)]
        for metric, value, stat in metrics:
            result.benchmarks.append(BenchmarkRecord(
                benchmark="vllm-bench-latency", metric=metric, unit="s", direction="lower",
                statistic=stat, value=number(value, f"record {no + 1} '{metric}'", warn=warn),
                config=_config(obj, ("avg_latency", "latencies", "percentiles")), record_no=no))
    return _nonempty(result)


def parse_throughput(data: bytes) -> ParseResult:
    result = ParseResult(format="vllm-throughput")
    warn = result.meta.setdefault("warnings", []).append
    for no, obj in enumerate(objects(data)):
        if not looks_like_throughput(obj):
            raise ParseError(f"record {no + 1}: not a vLLM throughput result")
        cfg = _config(obj, tuple(_THROUGHPUT))
        for metric, (unit, direction) in _THROUGHPUT.items():
            result.benchmarks.append(BenchmarkRecord(
                benchmark="vllm-bench-throughput", metric=metric, unit=unit, direction=direction,
                value=number(obj.get(metric), f"record {no + 1} '{metric}'", warn=warn),
                config=cfg, record_no=no, model=str(obj.get("model") or "")))
    return _nonempty(result)


def parse_summary(data: bytes) -> ParseResult:
    """vLLM's nightly-benchmark summary rows; each row names its GPU (`8xNVIDIA H100 ...`)."""
    result = ParseResult(format="vllm-benchmark-summary")
    warn = result.meta.setdefault("warnings", []).append
    for no, row in enumerate(objects(data)):
        if not looks_like_summary(row):
            raise ParseError(f"record {no + 1}: not a benchmark summary row (needs 'Test name', 'GPU')")
        gpu = str(row.get("GPU") or "")
        count = re.match(r"^(\d+)x", gpu)
        cfg = {k: config_value(v) for k, v in row.items() if k in _SUMMARY_CONFIG}
        if count:
            cfg["gpu_count"] = int(count.group(1))
        for col, value in row.items():
            if col in _SUMMARY_CONFIG or isinstance(value, (str, bool, dict, list)) or value is None:
                continue
            unit, direction, stat = _column(col)
            result.benchmarks.append(BenchmarkRecord(
                benchmark="vllm-nightly-benchmark", metric=col, unit=unit, direction=direction,
                statistic=stat, value=number(value, f"row {no + 1} '{col}'", warn=warn),
                model=str(row.get("Model") or ""), config=cfg, record_no=no,
                hardware=re.sub(r"^\d+x", "", gpu).strip() or None))
    return _nonempty(result)


def parse_one_batch(data: bytes) -> ParseResult:
    result = ParseResult(format="sglang-one-batch")
    warn = result.meta.setdefault("warnings", []).append
    for no, obj in enumerate(objects(data)):
        if not looks_like_one_batch(obj):
            raise ParseError(f"record {no + 1}: not an SGLang bench_one_batch result")
        cfg = {"run_name": obj.get("run_name"), "batch_size": optional_int(obj.get("batch_size")),
               "isl": optional_int(obj.get("input_len")), "osl": optional_int(obj.get("output_len"))}
        for metric, (unit, direction, stat) in _ONE_BATCH.items():
            if obj.get(metric) is None:
                continue  # a one-token output has no decode step
            result.benchmarks.append(BenchmarkRecord(
                benchmark="sglang-bench-one-batch", metric=metric, unit=unit,
                direction=direction, statistic=stat,
                value=number(obj[metric], f"record {no + 1} '{metric}'", warn=warn),
                config=cfg, record_no=no))
    return _nonempty(result)


def parse_eval(data: bytes, source_name: str = "") -> ParseResult:
    result = ParseResult(format="eval-result")
    warn = result.meta.setdefault("warnings", []).append
    for no, obj in enumerate(objects(data)):
        if not looks_like_eval(obj):
            raise ParseError(f"record {no + 1}: not an evaluation result (needs accuracy and "
                             f"task or num_questions)")
        task = str(obj.get("task") or _task_from(source_name) or "eval")
        n = optional_int(obj.get("num_requests") or obj.get("num_questions"))
        cfg = {k: config_value(v) for k, v in obj.items()
               if k in ("backend", "num_gpus", "num_shots", "parallel") and not isinstance(v, (dict, list))}
        other = obj.get("other")
        if isinstance(other, dict):
            cfg.update({k: config_value(v) for k, v in other.items()
                        if not isinstance(v, (dict, list))})
        result.accuracy.append(AccuracyRecord(
            task=task, metric="accuracy", value=number(obj["accuracy"], f"record {no + 1} 'accuracy'",
                                                       warn=warn),
            n=n, model=str(obj.get("model") or ""), config=cfg, record_no=no))
        if obj.get("latency") is not None:
            result.benchmarks.append(BenchmarkRecord(
                benchmark=f"{task}-eval", metric="latency", unit="s", direction="lower",
                value=number(obj["latency"], f"record {no + 1} 'latency'", warn=warn),
                config=cfg, record_no=no, model=str(obj.get("model") or "")))
    if not result.accuracy:
        raise ParseError("no evaluation result in file")
    return result


def _task_from(name: str) -> str:
    low = name.lower()
    for task in ("gsm8k", "mmlu", "gpqa", "hellaswag"):
        if task in low:
            return task
    return ""


def _column(col: str) -> tuple[str, str, str]:
    m = _UNIT.search(col)
    unit = m.group(1) if m else ""
    low = col.lower()
    stat = next((s for s in ("mean", "median", "p99", "p90", "std") if low.startswith(s)), "")
    if "tput" in low or unit.endswith("/s"):
        return unit, "higher", stat
    if unit in ("ms", "s"):
        return unit, "lower", stat
    return unit, "none", stat


def _config(obj: dict, metrics: tuple[str, ...]) -> dict:
    return {k: config_value(v) for k, v in obj.items()
            if k not in metrics and not isinstance(v, (dict, list))}


def _num(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _nonempty(result: ParseResult) -> ParseResult:
    if not result.benchmarks:
        raise ParseError("no benchmark results in file")
    return result
