"""Settings of the store, read once from `PARITY_*` environment variables."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping


@dataclass(frozen=True)
class Settings:
    """Where the store lives and which hardware and capability vocabularies it uses."""

    db_url: str = "sqlite:///parity.db"
    hardware_file: Path | None = None
    capability_file: Path | None = None
    raw_retention_days: int | None = None  # `parity db prune` drops older plain rows

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "Settings":
        env = os.environ if env is None else env
        hw = env.get("PARITY_HARDWARE_FILE")
        caps = env.get("PARITY_CAPABILITY_FILE")
        days = (env.get("PARITY_RAW_RETENTION_DAYS") or "").strip()
        if days and not (days.isdigit() and int(days) > 0):
            raise ValueError(f"PARITY_RAW_RETENTION_DAYS must be a whole number of days above "
                             f"0, not {days!r}")
        return cls(
            db_url=env.get("PARITY_DB_URL") or cls.db_url,
            hardware_file=Path(hw) if hw else None,
            capability_file=Path(caps) if caps else None,
            raw_retention_days=int(days) if days else None,
        )
