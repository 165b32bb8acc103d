"""lm-evaluation-harness results JSON (0.3 legacy, early 0.4, 0.4.2+ with n-samples/groups)."""
from __future__ import annotations

from typing import Any

from parity.collectors.formats import jsontext
from parity.collectors.formats.records import AccuracyRecord, ParseError, ParseResult, number

PARSER_VERSION = "1"
_SKIP = {"alias", "name", "sample_len", "sample_count", " ", ""}
_LOWER_BETTER = {"perplexity", "word_perplexity", "byte_perplexity", "bits_per_byte", "ter"}


def looks_like(obj: Any) -> bool:
    return (isinstance(obj, dict) and isinstance(obj.get("results"), dict)
            and any(k in obj for k in ("versions", "configs", "n-shot", "config", "group_subtasks")))


def _model(obj: dict) -> str:
    if obj.get("model_name"):
        return str(obj["model_name"])
    cfg = obj.get("config") or {}
    args = cfg.get("model_args")
    if isinstance(args, dict):
        return str(args.get("pretrained") or args.get("model") or "")
    if isinstance(args, str):
        for part in args.split(","):
            k, _, v = part.partition("=")
            if k.strip() in ("pretrained", "model"):
                return v.strip()
    return ""


def parse(data: bytes) -> ParseResult:
    obj = jsontext.loads(jsontext.decode(data))
    if not looks_like(obj):
        raise ParseError("not an lm-eval results file: no 'results' with versions/configs")
    model = _model(obj)
    groups = set((obj.get("groups") or {}).keys())
    parent: dict[str, str] = {}
    for group, subtasks in (obj.get("group_subtasks") or {}).items():
        if subtasks:
            groups.add(group)
        for sub in subtasks or []:
            parent[sub] = group
    n_samples = obj.get("n-samples") or {}
    hib = obj.get("higher_is_better") or {}
    limit = (obj.get("config") or {}).get("limit")
    cfg = {k: v for k, v in (obj.get("config") or {}).items()
           if k in ("model", "batch_size", "limit", "num_fewshot") and not isinstance(v, (dict, list))}
    result = ParseResult(format="lm-eval")
    warn = result.meta.setdefault("warnings", []).append
    for task, metrics in obj["results"].items():
        if not isinstance(metrics, dict):
            raise ParseError(f"results.{task}: expected an object, got {type(metrics).__name__}")
        n = None
        ns = n_samples.get(task)
        if isinstance(ns, dict) and isinstance(ns.get("effective"), int):
            n = ns["effective"]
        elif isinstance(limit, int):
            n = limit
        for key, value in metrics.items():
            if key in _SKIP or "_stderr" in key:
                continue
            metric, _, flt = key.rpartition(",") if "," in key else (key, "", "none")
            if not metric:
                metric, flt = key, "none"
            if isinstance(value, str):
                continue  # descriptive strings (e.g. alias-like fields) carry no score
            val = number(value, f"results.{task}['{key}']", warn=warn)
            se_key = f"{metric}_stderr,{flt}" if "," in key else f"{metric}_stderr"
            se_raw = metrics.get(se_key)
            stderr = None if se_raw in (None, "N/A") else number(
                se_raw, f"results.{task}['{se_key}']", warn=warn)
            direction = (hib.get(task) or {}).get(metric)
            if direction is None:
                direction = metric not in _LOWER_BETTER
            result.accuracy.append(AccuracyRecord(
                task=task, metric=metric, value=val, filter=flt, model=model, stderr=stderr, n=n,
                higher_is_better=bool(direction), is_group=task in groups,
                parent_group=parent.get(task, ""), config=cfg))
    if not result.accuracy:
        raise ParseError("lm-eval results file holds no numeric metric")
    date = obj.get("date")
    if isinstance(date, (int, float)):
        result.meta["timestamp"] = float(date)
    return result
