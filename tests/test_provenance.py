"""Every headline figure is traceable: the runs, jobs and stored files (with SHA-256) it
was computed from, as `frames.provenance()` and `parity explain` list them."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from parity.dashboard import frames

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
