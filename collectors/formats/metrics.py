"""What a metric name says about its unit, direction and statistic (result-formats §4)."""
from __future__ import annotations

import re

_STAT = re.compile(r"^(mean|median|std|max|min|avg|p\d+(?:\.\d+)?)_(.+)$")
_HIGHER = re.compile(
    r"throughput|_per_second|per_s$|tok/s|speedup|compression_ratio|accept_length|acceptance"
    r"|rtfx|goodput|intvty|interactivity|tput|^acc|exact_match|bleu|rouge|accuracy|score")
_LOWER = re.compile(
    r"ttft|tpot|itl|e2el|e2e_latency|latency|^duration$|elapsed_time|_peak_mem|"
    r"instruction_count|graph_breaks|^failed$|invalid|perplexity|bits_per_byte|^ter$|_time$")
_NONE = re.compile(r"^(completed|num_|total_.*tokens|max_concurrent_requests|calls_captured|"
                   r"unique_graphs)")


def describe(name: str) -> tuple[str, str, str]:
    """(unit, direction, statistic) for a metric key such as `p99_ttft_ms`."""
    key = name.lower().rstrip(":")
    m = _STAT.match(key)
    stat, base = (m.group(1), m.group(2)) if m else ("", key)
    if _NONE.search(key):
        direction = "none"
    elif base.endswith("_diff"):
        direction = "higher"
    elif _LOWER.search(base):
        direction = "lower"
    elif _HIGHER.search(base):
        direction = "higher"
    else:
        direction = "none"
    if _NONE.search(key):  # counts: tokens, requests
        unit = "count" if ("tokens" in key or key.startswith(("num_", "completed"))) else ""
    elif key.endswith("_ms"):
        unit = "ms"
    elif key.endswith("_s") or base in ("duration", "latency", "total_latency") or \
            "elapsed_time" in key:
        unit = "s"
    elif key.endswith("_mem") or key.endswith("_in_gb"):
        unit = "GB"
    elif "tok/s" in key or "token_throughput" in key or "output_throughput" in key or \
            "input_throughput" in key or "tokens_per_second" in key or \
            key in ("total_throughput", "last_gen_throughput") or re.search(r"(?:^|_)tput", key):
        unit = "tok/s"
    elif "request_throughput" in key or "requests_per_second" in key or "goodput" in key:
        unit = "req/s"
    elif "intvty" in key:
        unit = "tok/s/user"
    else:
        unit = ""
    return unit, direction, stat
