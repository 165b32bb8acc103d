"""Where the shared reference files live (../shared, beside the checkout), and how a test
asks for one."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


def shared(path: Path, what: str) -> Path:
    """A file or folder of ../shared: skipped where it is absent (a user's laptop), a failure
    when PARITY_REQUIRE_SHARED is set (CI), so a sample that disappears is noticed."""
    if not path.exists():
        where = path.relative_to(SHARED.parent) if path.is_relative_to(SHARED.parent) else path
        why = f"{where} is absent ({what})"
        if os.environ.get("PARITY_REQUIRE_SHARED"):
            pytest.fail(f"PARITY_REQUIRE_SHARED is set but {why}")
        pytest.skip(why)
    return path
