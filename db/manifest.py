"""`parity-manifest.json`: what a runner says about the results it uploads.

A CI artifact may carry this file anywhere inside it (`parity bundle` writes it at the
root). It ties the artifact's result files to a job and says what the files alone cannot:

    {
      "schema": 1,
      "framework": "vllm",              # vllm | sglang | pytorch | other
      "suite": "kernels",               # the test or benchmark suite the job ran
      "hardware": "mi355x",             # a SKU, architecture or runner label
      "job_id": 51234567890,            # the GitHub Actions job id ($ job.check_run_id)
      "run_id": 12345678901,            # the workflow run id ($ github.run_id)
      "repository": "vllm-project/vllm",  # $ github.repository
      "commit": "0123abcd...",          # the commit under test (may differ from the run's)
      "status": "results",              # or "no-results": the job ran no test at all
      "files": ["junit/kernels.xml"],   # the result files beside the manifest
      "capabilities": ["disaggregation", "wide-ep"],  # what the job exercised together
      "versions": {"framework": "0.11.0", "image": "rocm/vllm-dev:nightly",
                   "rocm": "7.0.2", "cuda": ""}
    }

Every field is optional; unknown fields are ignored so that later versions stay readable.
A manifest that is not valid JSON or has wrongly typed fields is rejected with a reason.
It lives in `db` because both sides of the contract use it: `runners` writes it and
`collectors` reads it."""
from __future__ import annotations

import json
from dataclasses import dataclass

NAME = "parity-manifest.json"
MAX_BYTES = 1024 * 1024
STATUSES = ("results", "no-results")


class ManifestError(ValueError):
    """A manifest that cannot be used; the message is the one-line reason."""


@dataclass(frozen=True)
class Manifest:
    framework: str = ""
    suite: str = ""
    hardware: str = ""
    job_id: str = ""
    run_id: str = ""
    repository: str = ""
    commit: str = ""
    status: str = "results"  # results | no-results
    files: tuple[str, ...] = ()
    capabilities: tuple[str, ...] = ()
    framework_version: str = ""
    image: str = ""
    rocm_version: str = ""
    cuda_version: str = ""


def _text(data: dict, key: str, limit: int = 200) -> str:
    value = data.get(key)
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ManifestError(f"'{key}' must be a string, not {type(value).__name__}")
    return str(value).strip()[:limit]


def parse(raw: bytes) -> Manifest:
    """A `Manifest` from the file's bytes."""
    if len(raw) > MAX_BYTES:
        raise ManifestError(f"{NAME} is {len(raw)} bytes, over the {MAX_BYTES}-byte limit")
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ManifestError(f"{NAME} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ManifestError(f"{NAME} must hold a JSON object")
    schema = data.get("schema", 1)
    if schema != 1:
        raise ManifestError(f"{NAME} schema {schema!r} is not supported (expected 1)")
    versions = data.get("versions") or {}
    if not isinstance(versions, dict):
        raise ManifestError("'versions' must be an object")
    status = _text(data, "status", 16) or "results"
    if status not in STATUSES:
        raise ManifestError(f"'status' must be one of {', '.join(STATUSES)}, not {status!r}")
    files = data.get("files") or []
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise ManifestError("'files' must be a list of paths")
    caps = data.get("capabilities") or []
    if not isinstance(caps, list) or not all(isinstance(c, str) for c in caps):
        raise ManifestError("'capabilities' must be a list of names")
    return Manifest(
        framework=_text(data, "framework", 32).lower(), suite=_text(data, "suite"),
        hardware=_text(data, "hardware"), job_id=_text(data, "job_id", 64),
        run_id=_text(data, "run_id", 64), repository=_text(data, "repository"),
        commit=_text(data, "commit", 64), status=status,
        files=tuple(f[:500] for f in files[:10_000]),
        capabilities=tuple(c.strip().lower()[:64] for c in caps[:100]),
        framework_version=_text(versions, "framework", 100),
        image=_text(versions, "image", 300), rocm_version=_text(versions, "rocm", 32),
        cuda_version=_text(versions, "cuda", 32))


def find(path) -> Manifest | None:
    """The manifest at the root of a directory or anywhere in a zip archive, if any.
    A broken one raises `ManifestError`."""
    import zipfile
    from pathlib import Path

    path = Path(path)
    if path.is_dir():
        f = path / NAME
        if f.is_file() and not f.is_symlink():
            if f.stat().st_size > MAX_BYTES:
                raise ManifestError(f"{NAME} is over {MAX_BYTES} bytes")
            return parse(f.read_bytes())
        return None
    try:
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                if Path(info.filename).name == NAME and not info.is_dir():
                    if info.file_size > MAX_BYTES:
                        raise ManifestError(f"{NAME} is over {MAX_BYTES} bytes")
                    with zf.open(info) as fh:
                        return parse(fh.read(MAX_BYTES + 1))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        if isinstance(exc, ManifestError):
            raise
        return None  # not an archive, or a broken one: its own reading reports that
    return None


def dump(manifest: Manifest) -> str:
    """The JSON text of a manifest (what the runner tooling writes)."""
    data = {"schema": 1, "framework": manifest.framework, "suite": manifest.suite,
            "hardware": manifest.hardware, "job_id": manifest.job_id, "run_id": manifest.run_id,
            "repository": manifest.repository,
            "commit": manifest.commit, "status": manifest.status, "files": list(manifest.files),
            "capabilities": list(manifest.capabilities),
            "versions": {"framework": manifest.framework_version, "image": manifest.image,
                         "rocm": manifest.rocm_version, "cuda": manifest.cuda_version}}
    return json.dumps(data, indent=2) + "\n"
