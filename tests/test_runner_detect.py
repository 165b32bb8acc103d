"""GPU detection against every real tool output in ../shared/fixtures/gpu-detect/ and the
hand-written ones in tests/data/gpu-detect/ (MI355X, MI455X, B200, legacy amd-smi)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from parity.runners.detect import (AMD_SMI, NVIDIA_CSV, NVIDIA_Q, NVIDIA_TABLE, ROCM_SMI, ROCM_SMI_JSON,
                            ROCMINFO, NoGpu, Recorded, detect, normalise_gfx, parse_nvidia_q,
                            parse_nvidia_table, parse_rocm_smi_json, parse_rocm_smi_text,
                            parse_rocminfo)
from tests.samples import shared

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT.parent / "shared" / "fixtures" / "gpu-detect"
HAND = ROOT / "tests" / "data" / "gpu-detect"


def cmd(c: list[str]) -> str:
    return " ".join(c)


@pytest.fixture
def real() -> Path:
    return shared(REAL, "real tool outputs live beside the checkout")


def test_rocminfo_mi300x_keeps_gpu_agents_only(real):
    gpus = parse_rocminfo((real / "rocminfo-mi300x-x4.txt").read_text())
    assert len(gpus) == 4 and {g.arch for g in gpus} == {"gfx942"}
    assert {g.name for g in gpus} == {"AMD Instinct MI300X"}
    assert gpus[0].memory_mib == 201310208 // 1024  # 192 GiB of HBM


def test_rocm_smi_outputs(real):
    concise, _ = parse_rocm_smi_text((real / "rocm-smi-concise-mi300x-x4.txt").read_text())
    assert [g.name for g in concise] == ["AMD Instinct MI300X"] * 4
    showall, driver = parse_rocm_smi_text((real / "rocm-smi-showall-mi300x-x4.txt").read_text())
    assert len(showall) == 4 and driver == "6.7.0" and "MI300X" in showall[0].name
    mi300a, drv = parse_rocm_smi_json((real / "rocm-smi-showproductname-json-mi300a-x4.json").read_text())
    assert (len(mi300a), mi300a[0].arch, drv) == (4, "gfx942", "6.16.13")
    quirk, _ = parse_rocm_smi_json((real / "rocm-smi-json-mi250-gfx9010-quirk.json").read_text())
    assert {g.arch for g in quirk} == {"gfx90a"}


def test_nvidia_smi_outputs(real):
    gpus, driver, cuda = parse_nvidia_q((real / "nvidia-smi-q-h100-sxm-x8.txt").read_text())
    assert (len(gpus), gpus[0].name, gpus[0].memory_mib, driver, cuda) == (
        8, "NVIDIA H100 80GB HBM3", 81559, "565.57.01", "12.7")
    sxm, d2, c2 = parse_nvidia_table((real / "nvidia-smi-table-h100-sxm-x8.txt").read_text())
    assert (len(sxm), d2, c2) == (8, "565.57.01", "12.7")
    nvl, _, cuda_nvl = parse_nvidia_table((real / "nvidia-smi-table-h100-nvl-x2.txt").read_text())
    assert [g.name for g in nvl] == ["NVIDIA H100 NVL"] * 2 and nvl[0].memory_mib == 95830
    assert cuda_nvl == "12.4"


@pytest.mark.parametrize("outputs, files, expect", [
    ({cmd(ROCMINFO): "rocminfo-mi300x-x4.txt", cmd(ROCM_SMI): "rocm-smi-showall-mi300x-x4.txt"},
     {"/opt/rocm/.info/version": "6.2.1-112\n"},
     ("amd", "mi300x", "gfx942", 4, "6.7.0", "6.2.1",
      ["self-hosted", "linux", "x64", "amd", "mi300x", "gfx942", "gpu-4"])),
    ({cmd(ROCM_SMI_JSON): "rocm-smi-showproductname-json-mi300a-x4.json"}, {},
     ("amd", "mi300a", "gfx942", 4, "6.16.13", "", None)),
    ({cmd(ROCM_SMI_JSON): "rocm-smi-json-mi250-gfx9010-quirk.json"}, {},
     ("amd", "mi250x", "gfx90a", 2, "", "", None)),
    ({cmd(NVIDIA_Q): "nvidia-smi-q-h100-sxm-x8.txt"}, {},
     ("nvidia", "h100", "sm90", 8, "565.57.01", "12.7",
      ["self-hosted", "linux", "x64", "nvidia", "h100", "sm90", "gpu-8"])),
    ({cmd(NVIDIA_TABLE): "nvidia-smi-table-h100-nvl-x2.txt"}, {},
     ("nvidia", "h100", "sm90", 2, "550.54.14", "12.4", None)),
])
def test_detect_on_real_outputs(real, outputs, files, expect, monkeypatch):
    monkeypatch.setattr("parity.runners.detect._machine", lambda: "x64")
    host = detect(Recorded({k: (real / v).read_text() for k, v in outputs.items()}, files))
    got = (host.vendor, host.sku, host.arch, host.count, host.driver, host.runtime)
    assert got == expect[:6]
    if expect[6]:
        assert host.labels == expect[6]


@pytest.mark.parametrize("outputs, expect", [
    ({cmd(AMD_SMI): "amd-smi-static-mi355x-x8.json"},
     ("amd", "mi355x", "gfx950", 8, 294896, "6.14.14")),
    ({cmd(AMD_SMI): "amd-smi-static-legacy-mi300x-x2.json"},
     ("amd", "mi300x", "gfx942", 2, 196592, "6.7.0")),
    ({cmd(ROCMINFO): "rocminfo-mi455x-x8.txt"},
     ("amd", "mi455x", "gfx1250", 8, 442368, "")),
    ({cmd(NVIDIA_CSV): "nvidia-smi-csv-b200-x8.txt"},
     ("nvidia", "b200", "sm100", 8, 183359, "570.133.20")),
])
def test_detect_on_hand_written_outputs(outputs, expect):
    host = detect(Recorded({k: (HAND / v).read_text() for k, v in outputs.items()}))
    assert (host.vendor, host.sku, host.arch, host.count, host.memory_mib, host.driver) == expect
    assert f"gpu-{expect[3]}" in host.labels and expect[1] in host.labels


def test_amd_smi_without_a_gfx_id_takes_it_from_rocminfo():
    host = detect(Recorded({cmd(AMD_SMI): (HAND / "amd-smi-static-legacy-mi300x-x2.json").read_text(),
                            cmd(ROCMINFO): (HAND / "rocminfo-mi455x-x8.txt").read_text()}))
    assert host.sources == ["amd-smi", "rocminfo"] and host.name == "AMD Instinct MI300X"


def test_gfx_normalisation():
    assert normalise_gfx("gfx9010") == "gfx90a"
    assert normalise_gfx("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-") == "gfx942"
    assert normalise_gfx("gfx1250") == "gfx1250" and normalise_gfx("gfx950") == "gfx950"


def test_no_gpu_is_a_clear_message():
    with pytest.raises(NoGpu, match="no GPU found"):
        detect(Recorded({cmd(ROCMINFO): "ROCk module is NOT loaded, possibly no GPU devices"}))
    out = subprocess.run([sys.executable, "-m", "parity", "runner", "detect"], capture_output=True,
                         text=True, env={"PATH": "/nonexistent", "PYTHONPATH": str(ROOT)})
    assert out.returncode == 1 and "no GPU found" in out.stderr and "Traceback" not in out.stderr


def test_detect_json_output(tmp_path):
    out = subprocess.run([sys.executable, "-m", "parity", "runner", "detect", "--json",
                          "--from", str(HAND / "nvidia-smi-csv-b200-x8.txt")],
                         capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["sku"] == "b200" and data["count"] == 8 and "gpu-8" in data["labels"]
