"""`parity bundle`: inside a CI job on a GPU runner, gather the job's result files and a
`parity-manifest.json` into one directory for `actions/upload-artifact`.

The manifest ties the files to the job (job id, run id, commit) and says what they cannot:
framework, suite, the hardware as detected on this host, and the framework, ROCm or CUDA
versions. A job that produced no test result says so (`"status": "no-results"`), so a
job that ran nothing is never counted as a pass."""
from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from parity.db import manifest as manifests
from parity.runners.detect import Host

RESULT_SUFFIXES = (".xml", ".json", ".jsonl", ".csv", ".log", ".txt")
_TESTCASE = re.compile(rb"<testcase\b")


@dataclass
class Bundle:
    out: Path
    manifest: manifests.Manifest
    files: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def _candidates(paths: list[Path]) -> list[tuple[Path, str]]:
    """(file, name inside the bundle) for every result file under `paths`."""
    found = []
    for path in paths:
        if path.is_dir():
            for f in sorted(path.rglob("*")):
                if f.is_file() and not f.is_symlink() and f.suffix.lower() in RESULT_SUFFIXES:
                    found.append((f, str(Path(path.name) / f.relative_to(path))))
        elif path.is_file() and not path.is_symlink():
            found.append((path, path.name))
    return found


def _tests_in(path: Path) -> int:
    """Test cases in a JUnit file, streamed; the last bytes of each chunk are carried over
    so that a tag split between two chunks is counted once."""
    count, carry = 0, b""
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            data = carry + chunk
            count += len(_TESTCASE.findall(data))
            carry = data[-8:]  # shorter than "<testcase": never a whole match
    return count


def bundle(paths: list[Path], out: Path, *, framework: str = "", suite: str = "",
           host: Host | None = None, hardware: str = "", job_id: str = "", run_id: str = "",
           commit: str = "", repository: str = "", framework_version: str = "", image: str = "",
           capabilities: tuple[str, ...] = (), env: Mapping[str, str] | None = None) -> Bundle:
    """Copy the result files under `paths` into `out` and write the manifest beside them.
    Run and commit default to the job's `GITHUB_RUN_ID`, `GITHUB_SHA` and
    `GITHUB_REPOSITORY`; the job id to `PARITY_JOB_ID` (the workflow passes
    `${{ job.check_run_id }}`)."""
    env = os.environ if env is None else env
    out.mkdir(parents=True, exist_ok=True)
    result = Bundle(out, manifests.Manifest())
    tests = other = 0
    for src, name in _candidates(paths):
        if src.name == manifests.NAME or out.resolve() in src.resolve().parents:
            continue
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
        result.files.append(name)
        if src.suffix.lower() == ".xml":
            tests += _tests_in(src)
        else:
            other += 1
    status = "results" if tests or other else "no-results"
    m = manifests.Manifest(
        framework=framework, suite=suite,
        hardware=hardware or (host.sku or host.arch if host else ""),
        job_id=job_id or env.get("PARITY_JOB_ID", ""), run_id=run_id or env.get("GITHUB_RUN_ID", ""),
        commit=commit or env.get("GITHUB_SHA", ""), status=status, files=tuple(result.files),
        framework_version=framework_version, image=image,
        rocm_version=host.runtime if host and host.vendor == "amd" else "",
        cuda_version=host.runtime if host and host.vendor == "nvidia" else "",
        repository=repository or env.get("GITHUB_REPOSITORY", ""),
        capabilities=tuple(capabilities))
    (out / manifests.NAME).write_text(manifests.dump(m), encoding="utf-8")
    result.manifest = m
    return result
