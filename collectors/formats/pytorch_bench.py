"""PyTorch OSS benchmark database v3 records (a JSON list, one object, or JSONEachRow that
mixes object and list lines). One record per metric; `benchmark_values` may hold several
repetitions, or a non-numeric status such as TorchInductor's `pass`."""
from __future__ import annotations

import json
import statistics
from typing import Any

from parity.collectors.formats import jsontext
from parity.collectors.formats.metrics import describe
from parity.collectors.formats.records import BenchmarkRecord, ParseError, ParseResult, number, optional_int

PARSER_VERSION = "1"


def looks_like(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("benchmark"), dict) and \
        isinstance(obj.get("metric"), dict)


def _flat(prefix: str, info: Any, cfg: dict) -> None:
    if not isinstance(info, dict):
        return
    for k, v in info.items():
        if isinstance(v, str) and v[:1] in "{[":
            try:
                v = json.loads(v)  # extra_info values are often JSON encoded strings
            except ValueError:
                pass
        if isinstance(v, (str, int, float, bool)) or v is None:
            cfg[f"{prefix}{k}"] = v
        elif isinstance(v, dict) and len(v) <= 50:
            for k2, v2 in v.items():
                if isinstance(v2, (str, int, float, bool)):
                    cfg[f"{prefix}{k}.{k2}"] = v2


def parse(data: bytes) -> ParseResult:
    values = jsontext.flatten_records(jsontext.load_document_or_lines(data))
    result = ParseResult(format="pytorch-v3")
    warn = result.meta.setdefault("warnings", []).append
    for no, rec in enumerate(values):
        if not isinstance(rec, dict) or "metric" not in rec:
            continue  # the uploader skips records without a metric, and so do we
        if not looks_like(rec):
            raise ParseError(f"record {no + 1}: 'benchmark' and 'metric' must be objects")
        bench, model, metric = rec["benchmark"], rec.get("model") or {}, rec["metric"]
        if not isinstance(model, dict):
            raise ParseError(f"record {no + 1}: 'model' must be an object")
        name = metric.get("name")
        if not isinstance(name, str) or not name:
            raise ParseError(f"record {no + 1}: metric has no name")
        cfg: dict[str, Any] = {}
        for k in ("mode", "dtype"):
            if bench.get(k):
                cfg[k] = bench[k]
        for k in ("type", "backend"):
            if model.get(k):
                cfg[f"model_{k}"] = model[k]
        _flat("", bench.get("extra_info"), cfg)
        raw = metric.get("benchmark_values")
        samples: list[float] | None = None
        status = None
        value = None
        if isinstance(raw, list) and raw:
            kept = [number(v, f"record {no + 1} benchmark_values", warn=warn) for v in raw]
            samples = [v for v in kept if v is not None] or None
            value = statistics.fmean(samples) if samples else None
        elif raw not in (None, []):
            raise ParseError(f"record {no + 1}: benchmark_values must be a list")
        else:
            extra = metric.get("extra_info") or {}
            vals = extra.get("benchmark_values") if isinstance(extra, dict) else None
            if isinstance(vals, list) and vals:
                status = str(vals[0])[:64]
        target = metric.get("target_value")
        if target is not None:
            cfg["target_value"] = number(target, f"record {no + 1} target_value", warn=warn)
        unit, direction, stat = describe(name)
        hardware = None
        runners = rec.get("runners")
        if isinstance(runners, list) and runners and isinstance(runners[0], dict):
            hardware = runners[0].get("gpu_info") or runners[0].get("name") or None
            if runners[0].get("gpu_count"):
                cfg["gpu_count"] = runners[0]["gpu_count"]
        batch = optional_int(cfg.get("batch_size"))
        if batch is not None:
            cfg["batch_size"] = batch
        result.benchmarks.append(BenchmarkRecord(
            benchmark=str(bench.get("name") or "pytorch"), metric=name, value=value,
            model=str(model.get("name") or ""), unit=unit, direction=direction, statistic=stat,
            samples=samples if samples and len(samples) > 1 else None, status=status,
            config=cfg, record_no=no, hardware=hardware))
    if not result.benchmarks:
        raise ParseError("no v3 benchmark records with a metric")
    return result
