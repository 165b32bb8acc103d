"""Which GPUs this host has, from the vendor tools' own output, and the runner labels that
follow: `self-hosted`, `linux`, `x64`, the vendor, the SKU, the architecture and `gpu-N`.

Parsers are pure (text in, `Gpu` rows out) and accept every shape the tools print:
`amd-smi static --json` (a bare list before ROCm 6.4, `{"gpu_data": [...]}` after, numbers
as `{"value", "unit"}` since 6.3), `rocminfo` (GPU agents only; CPU agents come first),
`rocm-smi` (`--showproductname --json`, the concise table and `--showall`; older releases
print gfx90a as `gfx9010`), and `nvidia-smi` (the query CSV, `-q` and the default table).
`detect()` runs the tools through a `Probe`, the seam tests replace with recorded output.
The SKU comes from the hardware vocabulary in `db`, so runner labels and stored hardware
use one set of names."""
from __future__ import annotations

import json
import platform
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from parity.db.hardware import vocabulary


@dataclass(frozen=True)
class Gpu:
    vendor: str  # amd | nvidia
    name: str  # the marketing name as the tool prints it
    arch: str = ""  # gfx942, gfx950, gfx1250, sm90, sm100
    memory_mib: int | None = None
    uuid: str = ""


@dataclass
class Host:
    vendor: str
    sku: str
    arch: str
    count: int
    name: str
    memory_mib: int | None
    driver: str = ""
    runtime: str = ""  # ROCm or CUDA version
    sources: list[str] = field(default_factory=list)
    mixed: bool = False  # more than one kind of GPU

    @property
    def labels(self) -> list[str]:
        """The runner labels Parity proposes for this host."""
        out = ["self-hosted", "linux", _machine(), self.vendor]
        out += [x for x in (self.sku, self.arch) if x]
        out.append(f"gpu-{self.count}")
        return list(dict.fromkeys(out))

    def as_dict(self) -> dict:
        return {"vendor": self.vendor, "sku": self.sku, "arch": self.arch, "count": self.count,
                "name": self.name, "memory_mib": self.memory_mib, "driver": self.driver,
                "runtime": self.runtime, "mixed": self.mixed, "sources": self.sources,
                "labels": self.labels}


def _machine() -> str:
    m = platform.machine().lower()
    return {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64"}.get(m, m or "x64")


# -- AMD -----------------------------------------------------------------------------------

_GFX_QUIRK = re.compile(r"^gfx(9)(\d)(\d{2})$")  # gfx9 only: gfx1250 is major 12, not a quirk


def normalise_gfx(value: str) -> str:
    """`gfx942` stays; older rocm-smi's decimal stepping (`gfx9010`) becomes `gfx90a`;
    feature suffixes (`gfx942:sramecc+:xnack-`) and ISA prefixes are dropped."""
    text = value.strip().lower().split(":")[0]
    text = text.rsplit("--", 1)[-1]
    m = _GFX_QUIRK.match(text)
    if m and int(m.group(3)) >= 10:
        return f"gfx{m.group(1)}{m.group(2)}{int(m.group(3)):x}"
    return text


def parse_rocminfo(text: str) -> list[Gpu]:
    """GPU agents of `rocminfo`: gfx id from `Name:`, product from `Marketing Name:`,
    memory from the first GLOBAL pool."""
    gpus = []
    for block in re.split(r"^\*{5,}\s*$", text, flags=re.M):
        fields: dict[str, str] = {}
        pool_kb = None
        for line in block.splitlines():
            key, sep, value = line.strip().partition(":")
            if not sep:
                continue
            key, value = key.strip(), value.strip()
            if key in ("Name", "Marketing Name", "Device Type", "Uuid") and key not in fields:
                fields[key] = value
            elif key == "Size" and pool_kb is None:
                m = re.match(r"(\d+)", value)
                pool_kb = int(m.group(1)) if m else None
        if fields.get("Device Type") != "GPU":
            continue
        gpus.append(Gpu("amd", fields.get("Marketing Name") or fields.get("Name", ""),
                        normalise_gfx(fields.get("Name", "")),
                        pool_kb // 1024 if pool_kb else None, fields.get("Uuid", "")))
    return gpus


def _json_from(text: str):
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        raise ValueError("no JSON in the output")
    return json.loads(text[start:])


def _lower(d: dict) -> dict:
    return {str(k).lower(): v for k, v in d.items()}


def parse_rocm_smi_json(text: str) -> tuple[list[Gpu], str]:
    """`rocm-smi --showproductname [--showdriverversion] --json`: cards and the driver."""
    data = _json_from(text)
    gpus, driver = [], ""
    for key, card in data.items():
        if not isinstance(card, dict):
            continue
        c = _lower(card)
        if key.lower() == "system":
            driver = str(c.get("driver version", ""))
            continue
        name = str(c.get("device name") or c.get("card series") or "").strip()
        gpus.append(Gpu("amd", name, normalise_gfx(str(c.get("gfx version", "")))))
    return gpus, driver


def parse_rocm_smi_text(text: str) -> tuple[list[Gpu], str]:
    """`rocm-smi` concise table or `--showall` report: one GPU per device row (or per
    `Card series` line) and the `Driver version` line."""
    driver = ""
    m = re.search(r"Driver version:\s*(\S+)", text)
    if m:
        driver = m.group(1)
    series = dict(re.findall(r"GPU\[(\d+)\]\s*:\s*Card series:\s*(.+?)\s*$", text, flags=re.M))
    if series:
        return [Gpu("amd", series[k]) for k in sorted(series, key=int)], driver
    lines = text.splitlines()
    gpus = []
    for i, line in enumerate(lines):
        if re.match(r"^\d+\s+\[0x[0-9a-f]+\s*:\s*0x[0-9a-f]+\]", line) and i + 1 < len(lines):
            gpus.append(Gpu("amd", lines[i + 1].strip()))
    return gpus, driver


def _value(v) -> float | None:
    if isinstance(v, dict):
        v = v.get("value")
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def parse_amd_smi_static(text: str) -> tuple[list[Gpu], str]:
    """`amd-smi static --json`, either layout; exit status is ignored by the caller, since
    amd-smi may fail and still print valid JSON."""
    data = _json_from(text)
    items = data.get("gpu_data", []) if isinstance(data, dict) else data
    gpus, driver = [], ""
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        asic = _lower(item.get("asic") or {})
        vram = _lower(item.get("vram") or {})
        size = _value(vram.get("size"))
        unit = str((vram.get("size") or {}).get("unit", "MB")) if isinstance(vram.get("size"), dict) else "MB"
        mib = None if size is None else int(size * 1024 if unit.upper().startswith("G") else size)
        drv = item.get("driver") or {}
        if isinstance(drv, dict) and drv.get("version"):
            driver = str(drv["version"])
        gpus.append(Gpu("amd", str(asic.get("market_name", "")).strip(),
                        normalise_gfx(str(asic.get("target_graphics_version", ""))), mib,
                        str(_lower(item.get("board") or {}).get("product_serial", "") or "")))
    return gpus, driver


# -- NVIDIA --------------------------------------------------------------------------------

def _cc_arch(cc: str) -> str:
    m = re.match(r"^\s*(\d+)\.(\d+)\s*$", cc or "")
    return f"sm{m.group(1)}{m.group(2)}" if m else ""


def parse_nvidia_csv(text: str) -> tuple[list[Gpu], str]:
    """`nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total,uuid
    --format=csv[,noheader][,nounits]`."""
    gpus, driver = [], ""
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 4 or parts[0].lower() == "name":
            continue
        name, cc, drv, mem = parts[:4]
        uuid = parts[4] if len(parts) > 4 else ""
        m = re.match(r"(\d+)", mem)
        driver = drv if not drv.startswith("[") else driver
        gpus.append(Gpu("nvidia", name, _cc_arch(cc), int(m.group(1)) if m else None, uuid))
    return gpus, driver


def parse_nvidia_q(text: str) -> tuple[list[Gpu], str, str]:
    """`nvidia-smi -q`: per GPU the product name and FB memory total; driver and CUDA."""
    driver = (re.search(r"^Driver Version\s*:\s*(\S+)", text, re.M) or [None, ""])[1]
    cuda = (re.search(r"^CUDA Version\s*:\s*(\S+)", text, re.M) or [None, ""])[1]
    gpus = []
    for block in re.split(r"^GPU [0-9A-Fa-f:.]+\s*$", text, flags=re.M)[1:]:
        name = (re.search(r"Product Name\s*:\s*(.+?)\s*$", block, re.M) or [None, ""])[1]
        mem = re.search(r"FB Memory Usage\s*\n\s*Total\s*:\s*(\d+)", block)
        uuid = (re.search(r"GPU UUID\s*:\s*(\S+)", block) or [None, ""])[1]
        gpus.append(Gpu("nvidia", name, "", int(mem.group(1)) if mem else None, uuid))
    return gpus, driver, cuda


def parse_nvidia_table(text: str) -> tuple[list[Gpu], str, str]:
    """The default `nvidia-smi` table: GPU rows, their memory, driver and CUDA versions."""
    driver = (re.search(r"Driver Version:\s*(\S+)", text) or [None, ""])[1]
    cuda = (re.search(r"CUDA Version:\s*(\S+)", text) or [None, ""])[1]
    names = re.findall(r"^\|\s+\d+\s+(.+?)\s+(?:On|Off)\s+\|", text, flags=re.M)
    mems = re.findall(r"\d+MiB\s*/\s*(\d+)MiB", text)
    gpus = [Gpu("nvidia", n, "", int(mems[i]) if i < len(mems) else None)
            for i, n in enumerate(names)]
    return gpus, driver, cuda


# -- running the tools ---------------------------------------------------------------------

class Probe:
    """The seam between detection and the host: runs a tool, reads a file. Tests replace it
    with recorded outputs."""

    def run(self, cmd: list[str]) -> str | None:
        if shutil.which(cmd[0]) is None:
            return None
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout or None  # amd-smi may exit non-zero with valid JSON on stdout

    def read(self, path: str) -> str | None:
        try:
            return Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None


class Recorded(Probe):
    """A probe that answers from recorded outputs: {"rocminfo": text, "nvidia-smi -q": text}."""

    def __init__(self, outputs: dict[str, str], files: dict[str, str] | None = None):
        self.outputs, self.files = outputs, files or {}

    def run(self, cmd: list[str]) -> str | None:
        return self.outputs.get(" ".join(cmd))

    def read(self, path: str) -> str | None:
        return self.files.get(path)

    @classmethod
    def from_output(cls, text: str) -> "Recorded":
        """A probe holding one saved tool output, the tool told by the output's shape
        (for `parity runner detect --from FILE`, e.g. output collected from another host)."""
        head = text.lstrip()[:4000]
        first = head.split("\n", 1)[0]
        if "HSA Agents" in head or "HSA System Attributes" in head:
            tool = ROCMINFO
        elif "NVSMI LOG" in head:
            tool = NVIDIA_Q
        elif "NVIDIA-SMI" in head:
            tool = NVIDIA_TABLE
        elif "ROCm System Management" in head or "GPU[" in head:
            tool = ROCM_SMI
        elif first.count(",") >= 3 and "{" not in first:
            tool = NVIDIA_CSV
        elif '"card' in head or '"system"' in head:
            tool = ROCM_SMI_JSON
        else:
            tool = AMD_SMI
        return cls({" ".join(tool): text})


AMD_SMI = ["amd-smi", "static", "--json"]
ROCMINFO = ["rocminfo"]
ROCM_SMI_JSON = ["rocm-smi", "--showproductname", "--showdriverversion", "--json"]
ROCM_SMI = ["rocm-smi"]
NVIDIA_CSV = ["nvidia-smi", "--query-gpu=name,compute_cap,driver_version,memory.total,uuid",
              "--format=csv,noheader,nounits"]
NVIDIA_Q = ["nvidia-smi", "-q"]
NVIDIA_TABLE = ["nvidia-smi"]
ROCM_VERSION_FILES = ("/opt/rocm/.info/version", "/opt/rocm/.info/version-dev")


class NoGpu(Exception):
    """No GPU was found; the message says which tools were tried."""


def _try(parse: Callable, text: str | None):
    if not text:
        return None
    try:
        return parse(text)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def detect(probe: Probe | None = None) -> Host:
    """The host's GPUs as one `Host`, or `NoGpu`."""
    probe = probe or Probe()
    vocab = vocabulary()
    amd, nvidia, sources = [], [], []
    driver = runtime = ""

    found = _try(parse_amd_smi_static, probe.run(AMD_SMI))
    if found and found[0]:
        amd, driver = found
        sources.append("amd-smi")
    rocminfo = _try(parse_rocminfo, probe.run(ROCMINFO)) or []
    if rocminfo:
        sources.append("rocminfo")
        if not amd:
            amd = rocminfo
        else:  # amd-smi before 6.3 has no gfx id: take it from rocminfo
            amd = [g if g.arch else Gpu(g.vendor, g.name, rocminfo[min(i, len(rocminfo) - 1)].arch,
                                        g.memory_mib, g.uuid) for i, g in enumerate(amd)]
    smi = _try(parse_rocm_smi_json, probe.run(ROCM_SMI_JSON)) or \
        _try(parse_rocm_smi_text, probe.run(ROCM_SMI))
    if smi and smi[0]:
        sources.append("rocm-smi")
        driver = driver or smi[1]
        if not amd:
            amd = smi[0]
        elif not any(g.name for g in amd):
            amd = [Gpu(g.vendor, smi[0][min(i, len(smi[0]) - 1)].name, g.arch, g.memory_mib, g.uuid)
                   for i, g in enumerate(amd)]
    if amd:
        for path in ROCM_VERSION_FILES:
            text = probe.read(path)
            if text and text.strip():
                runtime = text.strip().split("-")[0]
                break
    else:
        csv = _try(parse_nvidia_csv, probe.run(NVIDIA_CSV))
        if csv and csv[0]:
            nvidia, driver = csv
            sources.append("nvidia-smi --query-gpu")
        table = _try(parse_nvidia_q, probe.run(NVIDIA_Q)) or _try(parse_nvidia_table, probe.run(NVIDIA_TABLE))
        if table and table[0]:
            sources.append("nvidia-smi")
            nvidia = nvidia or table[0]
            driver = driver or table[1]
            runtime = table[2]
    gpus = amd or nvidia
    if not gpus:
        raise NoGpu("no GPU found: none of amd-smi, rocminfo, rocm-smi or nvidia-smi reported one "
                    "(are the drivers and tools installed, and is this user in the video/render "
                    "groups?)")
    kinds = {(g.name, g.arch) for g in gpus}
    first = gpus[0]
    hw = vocab.identify_any([first.name, first.arch])
    arch = first.arch or hw.arch
    return Host(vendor=first.vendor, sku=hw.sku if hw.mapped else "", arch=arch, count=len(gpus),
                name=first.name, memory_mib=first.memory_mib, driver=driver, runtime=runtime,
                sources=sources, mixed=len(kinds) > 1)
