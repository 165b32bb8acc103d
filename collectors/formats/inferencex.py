"""InferenceX results: the aggregated benchmark row (`agg_<RESULT_FILENAME>.json`, one
object or a merged list) and eval rows (`em_strict`/`em_flexible` with standard errors).
Both carry their own hardware (`hw`), so records keep it as a per-record hint."""
from __future__ import annotations

from typing import Any

from parity.collectors.formats import jsontext
from parity.collectors.formats.metrics import describe
from parity.collectors.formats.records import (
    AccuracyRecord,
    BenchmarkRecord,
    ParseError,
    ParseResult,
    number,
    optional_int,
)

PARSER_VERSION = "1"
_CONFIG = {"hw", "conc", "image", "model", "infmax_model_prefix", "framework", "precision",
           "spec_decoding", "disagg", "recipe_fingerprint", "isl", "osl", "router",
           "kv_p2p_transfer", "is_multinode", "tp", "pp", "dcp_size", "pcp_size", "ep",
           "dp_attention", "num_prefill_gpu", "num_decode_gpu", "prefill_hw", "decode_hw",
           "power_valid", "schema_version", "date", "scenario_type", "offload_mode"}


def looks_like_agg(obj: Any) -> bool:
    return isinstance(obj, dict) and "hw" in obj and "conc" in obj and \
        any(k in obj for k in ("tput_per_gpu", "median_intvty", "output_tput_per_gpu"))


def looks_like_evals(obj: Any) -> bool:
    return isinstance(obj, dict) and "hw" in obj and "task" in obj and \
        any(k in obj for k in ("em_strict", "score"))


def _dims(obj: dict) -> dict[str, Any]:
    cfg = {k: v for k, v in obj.items() if k in _CONFIG or k.startswith(("prefill_", "decode_"))}
    cfg = {k: v for k, v in cfg.items() if isinstance(v, (str, int, float, bool)) or v is None}
    return cfg


def parse_agg(data: bytes) -> ParseResult:
    values = jsontext.flatten_records(jsontext.load_document_or_lines(data))
    result = ParseResult(format="inferencex-agg")
    warn = result.meta.setdefault("warnings", []).append
    for no, obj in enumerate(values):
        if not looks_like_agg(obj):
            raise ParseError(f"record {no + 1}: not an InferenceX aggregated result")
        cfg = _dims(obj)
        cfg.setdefault("concurrency", optional_int(obj.get("conc")))
        for key, value in obj.items():
            if key in cfg or key in _CONFIG or isinstance(value, (str, bool)) or value is None \
                    or key.startswith(("prefill_", "decode_")):
                continue
            if isinstance(value, (list, dict)):
                continue
            unit, direction, stat = describe(key)
            if stat and not key.endswith("_ms") and "intvty" not in key:
                unit = "s"
            result.benchmarks.append(BenchmarkRecord(
                benchmark="inferencex", metric=key,
                value=number(value, f"record {no + 1} '{key}'", warn=warn),
                model=str(obj.get("model") or ""), unit=unit, direction=direction,
                statistic=stat, config=cfg, record_no=no, hardware=str(obj.get("hw") or "") or None))
    if not result.benchmarks:
        raise ParseError("no InferenceX metrics in file")
    return result


def parse_evals(data: bytes) -> ParseResult:
    values = jsontext.flatten_records(jsontext.load_document_or_lines(data))
    result = ParseResult(format="inferencex-evals")
    warn = result.meta.setdefault("warnings", []).append
    for no, obj in enumerate(values):
        if not looks_like_evals(obj):
            raise ParseError(f"record {no + 1}: not an InferenceX eval row")
        cfg = {k: obj[k] for k in ("framework", "precision", "spec_decoding", "tp", "ep", "conc",
                                   "dp_attention", "source") if k in obj}
        n = optional_int(obj.get("n_eff"))
        for metric, flt in (("em_strict", "strict-match"), ("em_flexible", "flexible-extract")):
            if obj.get(metric) is None:
                continue
            result.accuracy.append(AccuracyRecord(
                task=str(obj["task"]), metric="exact_match", filter=flt,
                value=number(obj[metric], f"record {no + 1} '{metric}'", warn=warn),
                stderr=number(obj.get(f"{metric}_se"), f"record {no + 1} '{metric}_se'", warn=warn),
                n=n, model=str(obj.get("model") or ""), config=cfg, record_no=no,
                hardware=str(obj.get("hw") or "") or None))
    if not result.accuracy:
        raise ParseError("no InferenceX eval scores in file")
    result.meta["timestamp"] = values[0].get("timestamp") if isinstance(values[0], dict) else None
    return result
