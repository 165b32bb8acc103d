"""The torch.compile pass rate from TorchInductor CSVs, computed as PyTorch's compiler
dashboard computes it (torchci compilerUtils.ts), for both vendors side by side."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from parity.collectors.formats.inductor_csv import parse, status_outcome
from parity.collectors.ingest import IngestOptions, ingest
from parity.dashboard import charts, frames, tables
from parity.dashboard.compilers import pass_rate

ACC_HEADER = "dev,name,batch_size,accuracy,calls_captured,unique_graphs,graph_breaks,unique_graph_breaks"
PERF_HEADER = "dev,name,batch_size,speedup,abs_latency,compilation_latency,compression_ratio"


def _csvs(folder: Path, accuracy: dict[str, str], speedup: dict[str, float],
          config: str = "inductor_dynamic_torchbench_amp_inference_cuda") -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    acc = folder / f"{config}_accuracy.csv"
    acc.write_text("\n".join([ACC_HEADER] + [f"cuda,{m},8,{s},1,1,0,0"
                                             for m, s in accuracy.items()]) + "\n")
    perf = folder / f"{config}_performance.csv"
    perf.write_text("\n".join([PERF_HEADER] + [f"cuda,{m},8,{v},1.0,30.0,1.0"
                                               for m, v in speedup.items()]) + "\n")
    return [acc, perf]


AMD_ACC = {"m1": "pass", "m2": "pass_due_to_skip", "m3": "eager_variation", "m4": "fail_accuracy",
           "m5": "pass", "m6": "model_fail_to_load", "m7": "pass", "m8": "pass_due_to_skip"}
AMD_PERF = {"m1": 1.2, "m2": 0.0, "m3": 1.1, "m4": 0.9, "m5": 0.0, "m6": 0.0, "m8": 0.0}
NV_ACC = {m: ("fail_accuracy" if m == "m4" else "pass") for m in AMD_ACC}
NV_PERF = {m: 1.5 for m in AMD_ACC}


def test_statuses_are_read_as_the_dashboard_reads_them():
    assert [status_outcome(s) for s in ("pass", "pass_due_to_skip", "eager_variation")] == \
        ["passed"] * 3
    assert status_outcome("fail_accuracy") == "failed"
    assert status_outcome("model_fail_to_load") == "error"
    r = parse(b"dev,name,batch_size,accuracy\ncuda,a,1,eager_variation\ncuda,b,1,pass\n",
              source_name="inductor_with_cudagraphs_huggingface_bfloat16_training_cuda_accuracy.csv")
    assert [(t.classname, t.outcome, t.message) for t in r.tests] == [
        ("inductor.huggingface.inductor_with_cudagraphs.bfloat16.training", "passed",
         "eager_variation"),
        ("inductor.huggingface.inductor_with_cudagraphs.bfloat16.training", "passed", None)]


def test_the_pass_rate_rule_by_hand():
    """Hand count of the AMD case: m1, m2 (pass_due_to_skip, zero speedup allowed), m3
    (eager_variation), m7 (no performance row) and m8 pass; m4 fails accuracy, m5 passes
    accuracy but reports a zero speedup, m6 cannot load: 5 of 8."""
    keys = dict(framework="pytorch", vendor="amd", hardware="mi300x", run_pk=1,
                run_at=pd.Timestamp("2026-11-01"), suite="torchbench", compiler="inductor_dynamic",
                dtype="amp", mode="inference", shapes="dynamic")
    acc = pd.DataFrame([{**keys, "model": m, "status": s} for m, s in AMD_ACC.items()])
    sp = pd.DataFrame([{**keys, "model": m, "speedup": v} for m, v in AMD_PERF.items()])
    out = pass_rate(acc, sp.drop(columns="run_at"))
    assert out[["models", "passed", "zero_speedup"]].values.tolist() == [[8, 5, 1]]
    assert out["pass_rate"].iloc[0] == pytest.approx(5 / 8)


def test_both_vendors_side_by_side_from_ingested_csvs(sqlite_engine, tmp_path):
    for vendor, hw, acc, perf in (("amd", "mi300x", AMD_ACC, AMD_PERF),
                                  ("nvidia", "h100", NV_ACC, NV_PERF)):
        files = _csvs(tmp_path / vendor, acc, perf)
        # a second configuration in the same job stays its own set of tests
        files += _csvs(tmp_path / vendor, {m: "pass" for m in acc}, {m: 1.0 for m in acc},
                       config="inductor_with_cudagraphs_torchbench_float32_training_cuda")
        ingest(sqlite_engine, files, IngestOptions(framework="pytorch", hardware=hw,
                                                   repo="pytorch/pytorch", run_id="101"))
        # PyTorch's own unit tests of the compiler, in the same job: classes named
        # inductor.…, but no benchmark configuration of the compiler dashboard
        unit = tmp_path / vendor / "test-reports.xml"
        unit.write_text(
            '<testsuite><testcase classname="inductor.test_torchinductor.CpuTests" '
            'name="test_add"/><testcase classname="inductor.test_torchinductor.GPUTests.sub.x"'
            ' name="test_mul"><failure message="boom"/></testcase></testsuite>')
        ingest(sqlite_engine, [unit], IngestOptions(framework="pytorch", hardware=hw,
                                                    repo="pytorch/pytorch", run_id="101"))
    out = frames.compiler_pass_rate(sqlite_engine)
    assert set(out["suite"]) == {"torchbench"}, "a unit test counted as a benchmark model"
    dyn = out[out["compiler"] == "inductor_dynamic"].set_index("hardware")
    assert dyn.loc["mi300x", ["models", "passed"]].tolist() == [8, 5]
    assert dyn.loc["h100", ["models", "passed"]].tolist() == [8, 7]
    assert set(dyn["shapes"]) == {"dynamic"} and set(dyn["dtype"]) == {"amp"}
    static = out[out["compiler"] == "inductor_with_cudagraphs"]
    assert static["pass_rate"].tolist() == [1.0, 1.0] and set(static["mode"]) == {"training"}
    assert "$schema" in charts.compiler_pass_rate(out).to_dict()


@pytest.mark.parametrize("order", [(1, 2), (2, 1)])
def test_a_configurations_latest_run_is_the_last_attempt_of_its_time(sqlite_engine, order):
    """A re-run's attempts share their run's time: the latest pass rate is the later
    attempt's, whichever was ingested first (the runs were ordered by their time alone, with
    a sort that keeps no order among ties)."""
    from tests.builder import Builder

    b = Builder(sqlite_engine)
    name = "inductor_dynamic_torchbench_amp_inference_cuda_accuracy.csv"
    rates = {1: "fail_accuracy", 2: "pass"}  # attempt 1 failed every model, attempt 2 none
    for attempt in order:
        body = "\n".join([ACC_HEADER] + [f"cuda,m{i},8,{rates[attempt]},1,1,0,0"
                                         for i in range(4)]) + "\n"
        parsed = parse(body.encode(), source_name=name)
        prov = b._prov("mi300x", "pytorch", "inductor", "r1", "c1", 0, attempt=attempt)
        with sqlite_engine.begin() as conn:
            b.writer.write(conn, parsed, prov, b._art(tables.INDUCTOR_FORMAT))
    out = frames.compiler_pass_rate(sqlite_engine)
    assert out["pass_rate"].tolist() == [1.0] and out["models"].tolist() == [4]
    every = frames.compiler_pass_rate(sqlite_engine, latest=False)
    assert sorted(every["pass_rate"].tolist()) == [0.0, 1.0]


def test_only_the_csvs_rows_are_read_not_the_jobs_unit_tests(engine, tmp_path):
    """A PyTorch job's unit-test results are never read for the pass rate: its CSVs'
    artifacts are found first and only their rows read (a joined read had SQLite go
    through every result of the window's PyTorch jobs, hundreds of thousands a lane, to
    find each row's artifact). A job with no CSV reads no result at all."""
    from sqlalchemy import event

    unit = tmp_path / "test-reports.xml"
    unit.write_text('<testsuite>' + "".join(
        f'<testcase classname="inductor.test_torchinductor.GPUTests" name="test_{i}"/>'
        for i in range(50)) + '</testsuite>')
    ingest(engine, [unit], IngestOptions(framework="pytorch", hardware="mi300x",
                                         repo="pytorch/pytorch", run_id="7"))
    statements: list[str] = []
    event.listen(engine, "before_cursor_execute",
                 lambda conn, cursor, sql, *rest: statements.append(sql))
    assert frames.compiler_pass_rate(engine).empty
    assert statements and not any("test_result" in s for s in statements), statements
    ingest(engine, _csvs(tmp_path / "csv", AMD_ACC, AMD_PERF),
           IngestOptions(framework="pytorch", hardware="mi300x", repo="pytorch/pytorch",
                         run_id="8"))
    statements.clear()
    out = frames.compiler_pass_rate(engine)
    assert out[["models", "passed"]].values.tolist() == [[8, 5]]
    read = [s for s in statements if "test_result" in s]
    assert read and all("artifact_pk" in s for s in read), read
