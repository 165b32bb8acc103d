"""Format detection by content (with the file name as a tie-breaker) and the parser registry.

Detection looks at the first bytes; for JSON it looks at the first record, since the JSON
formats are told apart only by their keys."""
from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO, Callable

from parity.collectors.formats import (
    bench_scripts,
    inductor_csv,
    inferencex,
    jsontext,
    junit,
    lm_eval,
    pytest_json,
    pytest_log,
    pytorch_bench,
    quartz,
    serving,
    vllm_ci,
)
from parity.collectors.formats.records import NotRecognised, ParseError, ParseResult

HEAD_BYTES = 64 * 1024


@dataclass(frozen=True)
class Format:
    name: str
    version: str
    streaming: bool  # True: parse(stream); False: parse(bytes)
    parse: Callable[..., ParseResult]


FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("junit", junit.PARSER_VERSION, True, junit.parse),
    Format("pytest-json", pytest_json.PARSER_VERSION, False, pytest_json.parse),
    Format("pytest-log", pytest_log.PARSER_VERSION, False, pytest_log.parse),
    Format("serving-bench", serving.PARSER_VERSION, False, serving.parse),
    Format("inferencex-agg", inferencex.PARSER_VERSION, False, inferencex.parse_agg),
    Format("inferencex-evals", inferencex.PARSER_VERSION, False, inferencex.parse_evals),
    Format("pytorch-v3", pytorch_bench.PARSER_VERSION, False, pytorch_bench.parse),
    Format("inductor-csv", inductor_csv.PARSER_VERSION, False, inductor_csv.parse),
    Format("lm-eval", lm_eval.PARSER_VERSION, False, lm_eval.parse),
    Format("quartz-status", quartz.PARSER_VERSION, False, quartz.parse),
    Format("vllm-latency", bench_scripts.PARSER_VERSION, False, bench_scripts.parse_latency),
    Format("vllm-throughput", bench_scripts.PARSER_VERSION, False, bench_scripts.parse_throughput),
    Format("vllm-benchmark-summary", bench_scripts.PARSER_VERSION, False,
           bench_scripts.parse_summary),
    Format("sglang-one-batch", bench_scripts.PARSER_VERSION, False, bench_scripts.parse_one_batch),
    Format("eval-result", bench_scripts.PARSER_VERSION, False, bench_scripts.parse_eval),
    Format("vllm-ci-results", vllm_ci.PARSER_VERSION, False, vllm_ci.parse_rows),
    Format("vllm-ci-health", vllm_ci.PARSER_VERSION, False, vllm_ci.parse_health),
)}


# the keys each JSON format is recognised by, to name the closest one when none matches
SIGNATURES = {
    "lm-eval": ("results", "versions"), "pytest-json": ("tests", "summary"),
    "pytorch-v3": ("benchmark", "metric"), "inferencex-agg": ("hw", "conc", "tput_per_gpu"),
    "inferencex-evals": ("hw", "task", "em_strict"),
    "serving-bench": serving.SIGNATURE, "vllm-latency": bench_scripts.LATENCY_KEYS,
    "vllm-throughput": bench_scripts.THROUGHPUT_KEYS,
    "vllm-benchmark-summary": ("Test name", "GPU"),
    "sglang-one-batch": bench_scripts.ONE_BATCH_KEYS, "eval-result": ("accuracy", "task"),
}


def closest(first) -> str:
    """The known JSON format whose keys `first` comes closest to, and what it lacks."""
    if not isinstance(first, dict):
        return "the first record is not a JSON object"
    keys = set(first)
    name, sig = max(SIGNATURES.items(), key=lambda kv: (len(keys & set(kv[1])), -len(kv[1])))
    missing = [k for k in sig if k not in keys]
    if len(missing) == len(sig):
        return "no key of any known format"
    return f"closest: {name}, which also needs {', '.join(repr(k) for k in missing)}"


def detect_json(data: bytes) -> str:
    try:
        values = jsontext.flatten_records(jsontext.load_document_or_lines(data))
    except ParseError:
        values = bench_scripts.objects(data)  # objects written back to back
    first = values[0] if values else None
    if lm_eval.looks_like(first):
        return "lm-eval"
    if pytest_json.looks_like(first):
        return "pytest-json"
    if pytorch_bench.looks_like(first):
        return "pytorch-v3"
    if inferencex.looks_like_agg(first):
        return "inferencex-agg"
    if inferencex.looks_like_evals(first):
        return "inferencex-evals"
    if serving.looks_like(first):
        return "serving-bench"
    if bench_scripts.looks_like_latency(first):
        return "vllm-latency"
    if bench_scripts.looks_like_throughput(first):
        return "vllm-throughput"
    if bench_scripts.looks_like_summary(first):
        return "vllm-benchmark-summary"
    if bench_scripts.looks_like_one_batch(first):
        return "sglang-one-batch"
    if bench_scripts.looks_like_eval(first):
        return "eval-result"
    raise NotRecognised(f"JSON file of no known result format ({closest(first)})")


def detect(head: bytes, name: str, read_all: Callable[[], bytes]) -> str:
    """The format name of a file, from its first bytes, its name, and (for JSON) its content."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    lower = name.lower()
    if text.startswith(b"<"):
        return "junit"
    if text[:1] in (b"{", b"["):
        start = text[:HEAD_BYTES].decode("utf-8", errors="replace")
        # documents told apart by their top-level keys, before the record-based formats
        if quartz.looks_like(start):
            return "quartz-status"
        if vllm_ci.looks_like_rows(start):
            return "vllm-ci-results"
        if vllm_ci.looks_like_health(start):
            return "vllm-ci-health"
        return detect_json(read_all())
    try:
        head_text = head.decode("utf-8", errors="replace")
    except Exception:  # pragma: no cover - decode with replace does not raise
        head_text = ""
    if lower.endswith(".csv") and inductor_csv.looks_like(head_text):
        return "inductor-csv"
    if pytest_log.looks_like(head_text) or lower.endswith((".log", ".txt")):
        return "pytest-log"
    raise NotRecognised("not a result file of any known format")


def run_parser(fmt: Format, stream: BinaryIO, name: str) -> ParseResult:
    if fmt.streaming:
        return fmt.parse(stream)
    data = stream.read()
    if fmt.name == "inductor-csv":
        return fmt.parse(data, source_name=name)
    if fmt.name == "eval-result":
        return fmt.parse(data, source_name=name)
    return fmt.parse(data)
