"""Online serving benchmarks: `vllm bench serve` / `benchmark_serving.py --save-result`
(JSON or appended JSON Lines), SGLang `bench_serving --output-file` (JSONL), and the
InferenceX raw result (vLLM key style, seconds without `_ms`).

Each top-level object is one benchmark run: its numeric result keys become metrics and
everything else becomes configuration.
"""
from __future__ import annotations

import math
import re
from typing import Any

from parity.collectors.formats import jsontext
from parity.collectors.formats.metrics import describe
from parity.collectors.formats.records import (
    BenchmarkRecord,
    config_value,
    ParseError,
    ParseResult,
    number,
    optional_int,
)

PARSER_VERSION = "1"
_LATENCY = re.compile(r"^(mean|median|std|max|min|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2el|e2e_latency)"
                      r"(_ms)?$")
_RESULT_KEYS = {
    "duration", "completed", "failed", "total_input_tokens", "total_output_tokens",
    "total_output_tokens_retokenized", "request_throughput", "request_goodput",
    "request_goodput:", "input_throughput", "output_throughput", "total_token_throughput",
    "max_output_tokens_per_s", "max_concurrent_requests", "rtfx", "accept_length",
    "good_completed", "concurrency", "spec_decode_acceptance_rate",
    "spec_decode_acceptance_length", "total_input_sequences", "input_sequence_throughput",
    # SGLang bench_offline_throughput
    "successful_requests", "total_latency", "total_throughput", "last_gen_throughput",
}
_ARRAYS = {"input_lens", "output_lens", "ttfts", "itls", "latencies", "start_times",
           "queue_times", "generated_texts", "errors"}
SIGNATURE = ("request_throughput", "output_throughput", "completed")


def looks_like(obj: Any) -> bool:
    return isinstance(obj, dict) and sum(k in obj for k in SIGNATURE) >= 2 and "metric" not in obj


def _is_metric(key: str) -> bool:
    return key in _RESULT_KEYS or bool(_LATENCY.match(key))


def parse(data: bytes) -> ParseResult:
    values = jsontext.flatten_records(jsontext.load_document_or_lines(data))
    result = ParseResult(format="serving-bench")
    for no, obj in enumerate(values):
        if not looks_like(obj):
            raise ParseError(f"record {no + 1}: not a serving benchmark result object")
        result.benchmarks.extend(_records(obj, no, result.meta.setdefault("warnings", []).append))
    if not result.benchmarks:
        raise ParseError("no benchmark results in file")
    date = values[0].get("date") if isinstance(values[0], dict) else None
    if isinstance(date, str):
        result.meta["timestamp"] = date
    return result


def _config(obj: dict) -> dict[str, Any]:
    cfg: dict[str, Any] = {}
    for k, v in obj.items():
        if _is_metric(k) or k in _ARRAYS or k == "date":
            continue
        if isinstance(v, (dict, list)):
            continue
        cfg[k] = config_value(v)
    return cfg


def _rate(value: Any) -> float | None:
    if value in ("inf", "Infinity") or (isinstance(value, float) and math.isinf(value)):
        return math.inf
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _records(obj: dict, no: int, warn) -> list[BenchmarkRecord]:
    cfg = _config(obj)
    model = str(obj.get("model_id") or obj.get("model") or obj.get("tokenizer_id") or "")
    benchmark = "sglang-bench-serving" if ("input_throughput" in obj and
                                          "mean_e2e_latency_ms" in obj) else "serving"
    backend = obj.get("backend") or obj.get("endpoint_type")
    if backend:
        cfg.setdefault("backend", backend)
    dims = {
        "isl": optional_int(obj.get("random_input_len") or obj.get("input_len")
                            or obj.get("isl")),
        "osl": optional_int(obj.get("random_output_len") or obj.get("output_len")
                            or obj.get("fixed_output_len") or obj.get("osl")),
        "concurrency": optional_int(obj.get("max_concurrency")),
        "request_rate": _rate(obj.get("request_rate")),
        "tp": optional_int(obj.get("tp") or obj.get("tensor_parallel_size")),
    }
    cfg.update({k: v for k, v in dims.items() if v is not None and k not in cfg})
    if cfg.get("request_rate") == math.inf:
        cfg["request_rate"] = "inf"
    out = []
    for key, value in obj.items():
        if not _is_metric(key) or value is None:
            continue
        val = number(value, f"record {no + 1} metric '{key}'", warn=warn)
        unit, direction, stat = describe(key)
        m = _LATENCY.match(key)
        if m and not m.group(3):
            unit = "s"  # InferenceX raw results store latencies in seconds, without _ms
        out.append(BenchmarkRecord(
            benchmark=benchmark, metric=key.rstrip(":"), value=val, model=model, unit=unit,
            direction=direction, statistic=stat, config=cfg, record_no=no))
    return out
