"""Capability parity: tagging from names, configs, manifests and real InferenceX configs; the
matrix on hand-built stores with known cells (a combination split across two lanes is not
green); the demo's injected gaps."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from sqlalchemy import text

from parity.dashboard import charts, frames
from parity.db.capabilities import capabilities, parse_capabilities
from tests.builder import Builder, lane
from tests.samples import shared

ROOT = Path(__file__).resolve().parent.parent
INFX = ROOT.parent / "shared" / "fixtures" / "real" / "semianalysis-inferencex"


def test_tags_from_configs_and_names():
    caps = capabilities()
    assert caps.from_config({"disagg": True, "prefill_workers": 1, "ep": 16,
                             "precision": "nvfp4", "kv_transfer_backend": "nixl"}) == {
        "disaggregation", "wide-ep", "fp4", "kv-transfer"}
    assert caps.from_config({"ep": 4, "disagg": "false", "precision": "fp8",
                             "dp_attention": False, "offload_mode": "none"}) == set()
    assert caps.from_config({"spec_decoding": "mtp", "is_multinode": True,
                             "enable_dp_attention": "true"}) == {"mtp", "multi-node", "dp-attention"}
    assert caps.from_names(["test/srt/test_disaggregation_basic.py", "unit-test-ep-moe",
                            "test_ep", "Accuracy (EAGLE3)", "kernels"]) == {
        "disaggregation", "wide-ep", "eagle"}
    assert caps.from_names(["test_step_size", "deepep_kernels_amd"]) == set()


def test_the_rule_file_is_extensible_and_checked(tmp_path):
    extra = (tmp_path / "caps.toml")
    extra.write_text('[[capability]]\nname = "cp"\nnames = ["context[-_]parallel"]\n'
                     'values = { cp = 2 }\n[combinations]\ndefault = [["cp"]]\n')
    caps = capabilities(extra)
    assert caps.names == ["cp"] and caps.from_config({"cp": 4}) == {"cp"}
    with pytest.raises(ValueError, match="unknown capabilities"):
        parse_capabilities('[[capability]]\nname = "a"\n[combinations]\ndefault = [["a", "b"]]\n')


@pytest.fixture
def infx() -> Path:
    return shared(INFX, "real InferenceX configs")


def test_tags_from_real_inferencex_configs(infx):
    caps = capabilities()
    master = yaml.safe_load((infx / "amd-master.yaml").read_text())
    tagged = {}
    for name, entry in master.items():
        found = set()
        for scenario, runs in (entry.get("scenarios") or {}).items():
            for run in runs or []:
                for space in run.get("search-space") or []:
                    cfg = {"precision": entry.get("precision"), "multinode": entry.get("multinode"),
                           "scenario": scenario, **space}
                    found |= caps.from_config(cfg) | caps.from_names([name])
        tagged[name] = found
    assert {"fp4", "mtp"} <= tagged["dsr1-fp4-mi355x-sglang-mtp"]
    assert "mtp" not in tagged["dsr1-fp4-mi355x-sglang"]
    assert any("wide-ep" in t for t in tagged.values())  # some entries search EP >= 8
    runners = yaml.safe_load((infx / "runners.yaml").read_text())
    labels = runners["labels"]
    disagg_pools = [k for k in labels if caps.from_names([k]) >= {"disaggregation"}]
    multinode_pools = [k for k in labels if "multi-node" in caps.from_names([k])]
    assert "mi355x-disagg" in disagg_pools and "h200-multinode" in multinode_pools


def cells(df):
    return {(r.capability, r.hardware): r.status for r in df.itertuples()}


def test_matrix_on_a_hand_built_store(sqlite_engine):
    b = Builder(sqlite_engine)
    # NVIDIA: one lane does disaggregation with wide EP and FP4, under a passing gate
    lane(b, "b200", "disagg-wide-ep", {"disagg": True, "ep": 16, "precision": "fp4"}, gate=0.94)
    # AMD: disaggregation and wide EP, but on two separate lanes; the wide-EP gate fails
    lane(b, "mi355x", "disagg", {"disagg": True, "ep": 1, "precision": "fp8"})
    lane(b, "mi355x", "ep-decode", {"ep": 8, "precision": "fp8"}, gate=0.80)
    # a lane whose only tag is its name, and a stale one
    lane(b, "mi300x", "test_dp_attention", {"tp": 8}, job_name="dp attention (mi300)")
    lane(b, "mi300x", "mtp", {"spec_decoding": "mtp"}, day=-40, run="old")
    df = frames.capability_parity(sqlite_engine)
    c = cells(df)
    assert c[("disaggregation + wide-ep", "b200")] == "gated and passing"
    assert c[("disaggregation + wide-ep + fp4", "b200")] == "gated and passing"
    assert c[("disaggregation", "mi355x")] == "tested without accuracy gate"
    assert c[("wide-ep", "mi355x")] == "gated and failing"
    assert c[("disaggregation + wide-ep", "mi355x")] == "not tested"  # split across lanes
    assert c[("dp-attention", "mi300x")] == "tested without accuracy gate"
    assert c[("mtp", "mi300x")] == "tested without accuracy gate"
    stale = df[(df["capability"] == "mtp") & (df["hardware"] == "mi300x")].iloc[0]
    assert bool(stale["stale"]) and stale["url"].startswith("https://example.test/")
    failing = df[(df["capability"] == "wide-ep") & (df["hardware"] == "mi355x")].iloc[0]
    assert failing["accuracy"] == pytest.approx(0.80) and failing["task"] == "gsm8k"
    assert set(df["status"]) <= {"gated and passing", "gated and failing",
                                 "tested without accuracy gate", "not tested"}
    assert charts.capability_parity(df).to_dict()["$schema"]
    only = frames.capability_parity(sqlite_engine, combinations=[("fp4", "wide-ep")],
                                    hardware="b200")
    assert cells(only)[("fp4 + wide-ep", "b200")] == "gated and passing"


def test_a_manifest_states_capabilities(tmp_path, sqlite_engine):
    from parity.collectors.ingest import ingest
    from parity.runners.bundle import bundle
    from tests.fakegithub.scenario import junit

    results = tmp_path / "results"
    results.mkdir()
    (results / "junit.xml").write_text(junit("kernels", 4))
    bundle([results], tmp_path / "out", framework="vllm", suite="kernels", hardware="mi355x",
           run_id="9", job_id="77", capabilities=("disaggregation", "wide-ep", "nonsense"), env={})
    ingest(sqlite_engine, [tmp_path / "out"])
    with sqlite_engine.connect() as conn:
        rows = conn.execute(text("SELECT name, source FROM job_capability ORDER BY 1")).all()
    assert rows == [("disaggregation", "manifest"), ("wide-ep", "manifest")]
    c = cells(frames.capability_parity(sqlite_engine))
    assert c[("disaggregation + wide-ep", "mi355x")] == "tested without accuracy gate"


def test_the_demo_shows_the_injected_gaps(demo_db):
    c = cells(frames.capability_parity(demo_db, framework="vllm"))
    for nv in ("b200", "h200"):
        assert c[("disaggregation + wide-ep", nv)] == "gated and passing"
    assert c[("disaggregation", "mi355x")] == "tested without accuracy gate"
    assert c[("disaggregation + wide-ep", "mi355x")] == "not tested"
    assert c[("wide-ep", "mi355x")] == "gated and failing"  # the one-concurrency cliff
    assert {s for (cap, hw), s in c.items() if hw == "mi455x"} == {"not tested"}
