"""Every headline figure is traceable: the runs, jobs and stored files (with SHA-256) it
was computed from, as `frames.provenance()` and `parity explain` list them."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from parity.dashboard import frames
from tests.builder import Builder

ROOT = Path(__file__).resolve().parent.parent


def test_the_pass_rate_comes_from_the_runs_the_headline_names(demo_db):
    head = frames.headline(demo_db, framework="vllm", hardware="mi355x").iloc[0]
    inputs = frames.provenance(demo_db, figure="same_denominator_rate", framework="vllm",
                               hardware="mi355x")
    assert set(inputs["role"]) == {"amd", "reference"}
    assert set(inputs["hardware"]) == {"mi355x", head["nvidia_hardware"]}
    amd = inputs[inputs["role"] == "amd"]
    assert set(amd["commit"]) == {head["commit"]} and set(amd["run_url"]) == {head["run_url"]}
    assert amd["sha256"].str.fullmatch(r"[0-9a-f]{64}").all()
    assert (amd["records"] > 0).all()


def test_the_pass_rate_lists_only_the_suites_of_the_headlines_window(sqlite_engine):
    """A suite whose last AMD run is older than the headline's window is not in its pass
    rate, so its runs are not among the rate's inputs. Runs up to three days older than the
    window (the reference's slack) used to be listed when they were a suite's latest."""
    b = Builder(sqlite_engine)
    for hw in ("mi355x", "b200"):
        b.tests(hw, {"t_old": "passed"}, suite="old", run="r0", commit="c0", day=14)
        b.tests(hw, {"t_new": "passed"}, suite="kernels", run="r1", commit="c1", day=30)
    head = frames.headline(sqlite_engine).iloc[0]
    assert (head["amd_hardware"], head["nvidia_hardware"], head["commit"]) == \
        ("mi355x", "b200", "c1")
    for figure in ("same_denominator_rate", "nvidia_rate"):
        inputs = frames.provenance(sqlite_engine, figure=figure)
        assert set(zip(inputs["role"], inputs["hardware"], inputs["commit"])) == \
            {("amd", "mi355x", "c1"), ("reference", "b200", "c1")}, figure
    # a window that holds both runs lists both
    both = frames.provenance(sqlite_engine, since="2026-11-01")
    assert set(both["commit"]) == {"c0", "c1"}


def test_performance_and_accuracy_figures_list_only_their_files(demo_db):
    perf = frames.provenance(demo_db, figure="perf_ratio", framework="vllm", hardware="mi355x")
    acc = frames.provenance(demo_db, figure="accuracy_diff", framework="vllm", hardware="mi355x")
    assert not perf.empty and set(perf["format"]) <= set(frames.PERF_FORMATS)
    assert not acc.empty and set(acc["format"]) <= set(frames.ACCURACY_FORMATS)
    with pytest.raises(ValueError, match="unknown figure"):
        frames.provenance(demo_db, figure="vibes")


def test_parity_explain(demo_db):
    out = subprocess.run([sys.executable, "-m", "parity", "--db", str(demo_db), "explain",
                          "accuracy_diff", "--framework", "vllm", "--hardware", "mi355x"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0]
    assert first.startswith("accuracy_diff: ") and " files)" in first
    assert "lm-eval" in out.stdout and "sha256" in out.stdout.splitlines()[1]
