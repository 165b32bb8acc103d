"""`parity-manifest.json`: what a runner says about the results it uploads.

A CI artifact may carry this file anywhere inside it (the runner tooling writes it at the
root). It ties the artifact's result files to a job and says what the files alone cannot:

    {
      "schema": 1,
      "framework": "vllm",              # vllm | sglang | pytorch | other
      "suite": "kernels",               # the test or benchmark suite the job ran
      "hardware": "mi355x",             # a SKU, architecture or runner label
      "job_id": 51234567890,            # the GitHub Actions job id ($ job.check_run_id)
      "commit": "0123abcd...",          # the commit under test (may differ from the run's)
      "versions": {"framework": "0.11.0", "image": "rocm/vllm-dev:nightly",
                   "rocm": "7.0.2", "cuda": ""}
    }

Every field is optional; unknown fields are ignored so that later versions stay readable.
A manifest that is not valid JSON or has wrongly typed fields is rejected with a reason."""
from __future__ import annotations

import json
from dataclasses import dataclass

NAME = "parity-manifest.json"
MAX_BYTES = 64 * 1024


class ManifestError(ValueError):
    """A manifest that cannot be used; the message is the one-line reason."""


@dataclass(frozen=True)
class Manifest:
    framework: str = ""
    suite: str = ""
    hardware: str = ""
    job_id: str = ""
    commit: str = ""
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
    return Manifest(
        framework=_text(data, "framework", 32).lower(), suite=_text(data, "suite"),
        hardware=_text(data, "hardware"), job_id=_text(data, "job_id", 64),
        commit=_text(data, "commit", 64), framework_version=_text(versions, "framework", 100),
        image=_text(versions, "image", 300), rocm_version=_text(versions, "rocm", 32),
        cuda_version=_text(versions, "cuda", 32))


def dump(manifest: Manifest) -> str:
    """The JSON text of a manifest (what the runner tooling writes)."""
    data = {"schema": 1, "framework": manifest.framework, "suite": manifest.suite,
            "hardware": manifest.hardware, "job_id": manifest.job_id, "commit": manifest.commit,
            "versions": {"framework": manifest.framework_version, "image": manifest.image,
                         "rocm": manifest.rocm_version, "cuda": manifest.cuda_version}}
    return json.dumps(data, indent=2) + "\n"
