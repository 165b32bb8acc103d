"""TorchInductor benchmark CSVs (`benchmarks/dynamo/common.py`): performance rows
(`dev,name,batch_size,speedup,abs_latency,…`), accuracy rows (`…,accuracy,…`), the
`ci_expected_accuracy` baselines (`name,accuracy,graph_breaks`, blank lines between rows),
and the expected-speedup targets. Accuracy statuses become test results: one test per model.

Statuses are read as PyTorch's compiler dashboard reads them (torchci `PASSING_ACCURACY`):
`pass`, `pass_due_to_skip` and `eager_variation` pass; a model that cannot be loaded or
run in eager mode, or an infrastructure error, is an error; every other status fails. The
status itself is kept as the test's message (none for a plain `pass`), so the dashboard's
pass rate, which also fails a passing model whose performance run reports a zero speedup
(except `pass_due_to_skip`), can be computed from the stored rows.

A CI result file is named `{compiler}_{suite}_{dtype}_{mode}_{device}_{accuracy|performance}.csv`
(`inductor_dynamic_torchbench_amp_inference_cuda_accuracy.csv`); those parts become the
rows' configuration and the tests' identity, so the accuracy of two compilers, dtypes or
modes in one job stay distinct tests."""
from __future__ import annotations

import csv
import io
import math
import re

from parity.collectors.formats.jsontext import decode
from parity.collectors.formats.records import BenchmarkRecord, ParseError, ParseResult, TestRecord

PARSER_VERSION = "2"
_UNITS = {"abs_latency": ("ms", "lower"), "compilation_latency": ("s", "lower"),
          "speedup": ("x", "higher"), "compression_ratio": ("x", "higher"),
          "eager_peak_mem": ("GB", "lower"), "dynamo_peak_mem": ("GB", "lower"),
          "graph_breaks": ("count", "lower"), "unique_graph_breaks": ("count", "lower")}
_PASS = {"pass", "pass_due_to_skip", "eager_variation"}  # torchci PASSING_ACCURACY
_ERROR = {"model_fail_to_load", "eager_fail_to_run", "infra_error"}


_FILE = re.compile(r"^(?P<compiler>[a-z0-9_]+?)_(?P<suite>torchbench|huggingface|timm_models)_"
                   r"(?P<dtype>amp|float32|float16|bfloat16|bf16|fp32|fp16)_(?P<mode>training|inference)_"
                   r"(?P<device>cuda|cpu|rocm|xpu|mps|hpu)_(?P<kind>accuracy|performance)\.csv$")


def file_config(name: str) -> dict[str, str]:
    """compiler, suite, dtype, mode, device and shapes (dynamic or static) from a CI result
    file's name; {} for a name of another shape."""
    m = _FILE.match(name.rsplit("/", 1)[-1].rsplit("!", 1)[-1].lower())
    if not m:
        return {}
    cfg = {k: m.group(k) for k in ("compiler", "suite", "dtype", "mode", "device")}
    cfg["shapes"] = "dynamic" if "dynamic" in cfg["compiler"] else "static"
    return cfg


def status_outcome(status: str) -> str:
    """PASSING_ACCURACY -> passed; eager failures, model load, infra -> error; else failed."""
    if status in _PASS:
        return "passed"
    if status in _ERROR or status.startswith("eager_"):
        return "error"
    return "failed"


def looks_like(head: str) -> bool:
    first = head.lstrip("\ufeff").split("\n", 1)[0].lstrip("#").strip()
    return first.startswith("dev,name,batch_size") or first.startswith("name,accuracy") or \
        first.startswith("name,data_type,shape")


def _float(value: str, where: str) -> float | None:
    if value is None or value.strip() == "":
        return None
    try:
        f = float(value)
    except ValueError:
        raise ParseError(f"{where}: '{value[:40]}' is not a number") from None
    if not math.isfinite(f):
        raise ParseError(f"{where}: value is not finite")
    return f


def parse(data: bytes, *, source_name: str = "") -> ParseResult:
    text = decode(data)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise ParseError("empty CSV")
    header_line = lines[0].lstrip("#")
    rows = list(csv.reader(io.StringIO("\n".join([header_line] + [
        ln for ln in lines[1:] if not ln.startswith("#")]))))
    header = [h.strip() for h in rows[0]]
    body = rows[1:]
    result = ParseResult(format="inductor-csv")
    suite = _suite_from_name(source_name)
    if header[:3] == ["name", "accuracy", "graph_breaks"]:
        for no, row in enumerate(body):
            if len(row) < 2:
                raise ParseError(f"row {no + 2}: expected name,accuracy,graph_breaks")
            cfg = {"kind": "expected_accuracy", "suite": suite}
            result.benchmarks.append(BenchmarkRecord(
                benchmark="TorchInductor expected accuracy", metric="accuracy", value=None,
                model=row[0], status=row[1].strip(), config=cfg, record_no=no))
            if len(row) > 2 and row[2].strip():
                result.benchmarks.append(BenchmarkRecord(
                    benchmark="TorchInductor expected accuracy", metric="graph_breaks",
                    value=_float(row[2], f"row {no + 2} graph_breaks"), model=row[0],
                    unit="count", direction="lower", config=cfg, record_no=no))
        return result
    if header[:2] == ["name", "data_type"]:
        target_col = next((h for h in header if h.startswith("perf_speedup_target")), None)
        if target_col is None:
            raise ParseError("expected-speedup CSV without a perf_speedup_target column")
        idx = header.index(target_col)
        for no, row in enumerate(body):
            cfg = {"kind": "speedup_target", "data_type": row[1], "shape": row[2],
                   "wrapper": row[3] if len(row) > 3 else "", "target": target_col}
            result.benchmarks.append(BenchmarkRecord(
                benchmark="TorchInductor speedup target", metric="speedup", value=_float(
                    row[idx], f"row {no + 2} {target_col}"), model=row[0], unit="x",
                direction="higher", config=cfg, record_no=no))
        return result
    if header[:3] != ["dev", "name", "batch_size"]:
        raise ParseError("unrecognised TorchInductor CSV header")
    is_accuracy = "accuracy" in header
    named = file_config(source_name)
    identity = ".".join(named[k] for k in ("compiler", "dtype", "mode")) if named else ""
    for no, row in enumerate(body):
        if len(row) < 3:
            raise ParseError(f"row {no + 2}: too few columns")
        values = dict(zip(header, row))
        model = values["name"]
        cfg = {"device": values["dev"], "suite": suite, "batch_size": values["batch_size"],
               **{k: v for k, v in named.items() if k not in ("device", "kind")}}
        if is_accuracy:
            status = values.get("accuracy", "").strip()
            result.tests.append(TestRecord(
                classname=f"inductor.{suite or 'models'}" + (f".{identity}" if identity else ""),
                name=model, params=None, outcome=status_outcome(status),
                suite=f"inductor_{suite}" if suite else "inductor",
                message=None if status == "pass" else status))
        for col, raw in values.items():
            if col in ("dev", "name", "batch_size", "accuracy", "tag"):
                continue
            unit, direction = _UNITS.get(col, ("", "none"))
            result.benchmarks.append(BenchmarkRecord(
                benchmark="TorchInductor", metric=col,
                value=_float(raw, f"row {no + 2} {col}"), model=model, unit=unit,
                direction=direction, config=cfg, record_no=no))
    return result


def _suite_from_name(name: str) -> str:
    base = name.rsplit("/", 1)[-1].lower()
    for suite in ("torchbench", "huggingface", "timm_models"):
        if suite in base:
            return suite
    return ""
