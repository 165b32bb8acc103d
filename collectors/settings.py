"""Collector settings from `PARITY_*` environment variables: the limits that keep a hostile
or absurd input from exhausting memory or disk."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping

MiB = 1024 * 1024


@dataclass(frozen=True)
class Settings:
    max_file_bytes: int = 2048 * MiB  # XML and logs stream; larger files are refused
    max_json_bytes: int = 256 * MiB  # JSON and CSV are read whole
    max_archive_members: int = 20_000
    max_archive_bytes: int = 8192 * MiB  # uncompressed total of one archive
    max_compression_ratio: int = 200  # a member expanding more than this is a zip bomb
    spool_bytes: int = 64 * MiB  # archive members larger than this go to a temp file

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "Settings":
        env = os.environ if env is None else env
        values = {}
        for field, var in (("max_file_bytes", "PARITY_MAX_FILE_BYTES"),
                           ("max_json_bytes", "PARITY_MAX_JSON_BYTES"),
                           ("max_archive_members", "PARITY_MAX_ARCHIVE_MEMBERS"),
                           ("max_archive_bytes", "PARITY_MAX_ARCHIVE_BYTES"),
                           ("max_compression_ratio", "PARITY_MAX_COMPRESSION_RATIO")):
            if env.get(var):
                values[field] = int(env[var])
        return cls(**values)
