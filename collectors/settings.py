"""Collector settings from `PARITY_*` environment variables (and the GitHub token): the limits
that keep a hostile or absurd input from exhausting memory or disk, and how the GitHub
collector paces itself."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping

from parity.db.secret import Secret, read_file_secret, read_token

__all__ = ["Secret", "Settings", "read_file_secret", "read_token"]

MiB = 1024 * 1024


_INT = (("max_file_bytes", "PARITY_MAX_FILE_BYTES"),
        ("max_json_bytes", "PARITY_MAX_JSON_BYTES"),
        ("max_archive_members", "PARITY_MAX_ARCHIVE_MEMBERS"),
        ("max_archive_bytes", "PARITY_MAX_ARCHIVE_BYTES"),
        ("max_compression_ratio", "PARITY_MAX_COMPRESSION_RATIO"),
        ("max_download_bytes", "PARITY_GITHUB_MAX_DOWNLOAD_BYTES"),
        ("retries", "PARITY_GITHUB_RETRIES"),
        ("since_days", "PARITY_GITHUB_SINCE_DAYS"),
        ("tail_runs", "PARITY_GITHUB_TAIL_RUNS"),
        ("buildkite_since_days", "PARITY_BUILDKITE_SINCE_DAYS"),
        ("buildkite_log_tail_bytes", "PARITY_BUILDKITE_LOG_TAIL_BYTES"),
        ("buildkite_max_jobs", "PARITY_BUILDKITE_MAX_JOBS"),
        ("buildkite_max_log_bytes", "PARITY_BUILDKITE_MAX_LOG_BYTES"),
        ("buildkite_max_requests", "PARITY_BUILDKITE_MAX_REQUESTS"))
_FLOAT = (("backoff_s", "PARITY_GITHUB_BACKOFF_S"),
          ("secondary_wait_s", "PARITY_GITHUB_SECONDARY_WAIT_S"),
          ("timeout_s", "PARITY_GITHUB_TIMEOUT_S"),
          ("buildkite_overlap_h", "PARITY_BUILDKITE_OVERLAP_HOURS"),
          ("buildkite_rate_share", "PARITY_BUILDKITE_RATE_SHARE"))


@dataclass(frozen=True)
class Settings:
    max_file_bytes: int = 2048 * MiB  # XML and logs stream; larger files are refused
    max_json_bytes: int = 256 * MiB  # JSON and CSV are read whole
    max_archive_members: int = 20_000
    max_archive_bytes: int = 8192 * MiB  # uncompressed total of one archive
    max_compression_ratio: int = 200  # a member expanding more than this is a zip bomb
    spool_bytes: int = 64 * MiB  # archive members larger than this go to a temp file
    # GitHub collector
    api_url: str = "https://api.github.com"
    max_download_bytes: int = 2048 * MiB  # one artifact zip or job log
    retries: int = 6  # per request, on 5xx, secondary limits, timeouts and broken downloads
    backoff_s: float = 1.0  # first retry waits up to this (full jitter), doubling each time
    secondary_wait_s: float = 60.0  # a secondary limit without retry-after waits this long
    timeout_s: float = 30.0
    since_days: int = 7  # how far back a scope's first sync reaches without --since
    tail_runs: int = 300  # re-listed runs past which the checkpoint moves forward
    token: Secret | None = field(default=None, repr=False, compare=False)
    # Buildkite collector (the timeouts, retries and download limit above apply too)
    buildkite_api_url: str = "https://api.buildkite.com/v2"
    buildkite_since_days: int = 7  # how far back a pipeline's first sync reaches
    buildkite_overlap_h: float = 6.0  # re-list builds finished this long before the watermark
    buildkite_rate_share: float = 0.5  # of the organisation's rate limit, at most
    buildkite_log_tail_bytes: int = 256 * 1024  # the tail of a job log read for its summary
    buildkite_max_log_bytes: int = 64 * MiB  # a log read whole (no summary in its tail)
    buildkite_max_jobs: int = 5000  # jobs of one build past which the rest are left out
    buildkite_max_requests: int = 0  # per sync; 0: no budget (the rate share still holds)
    buildkite_token: Secret | None = field(default=None, repr=False, compare=False)
    # generated histories: the folder of real test ids (default ../shared/data/test-ids)
    test_ids_dir: str = ""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "Settings":
        env = os.environ if env is None else env
        values: dict = {}
        for name, var in _INT:
            if env.get(var):
                values[name] = int(env[var])
        for name, var in _FLOAT:
            if env.get(var):
                values[name] = float(env[var])
        if env.get("PARITY_TEST_IDS_DIR"):
            values["test_ids_dir"] = env["PARITY_TEST_IDS_DIR"]
        if env.get("PARITY_GITHUB_API_URL"):
            values["api_url"] = env["PARITY_GITHUB_API_URL"].rstrip("/")
        if env.get("PARITY_BUILDKITE_API_URL"):
            values["buildkite_api_url"] = env["PARITY_BUILDKITE_API_URL"].rstrip("/")
        bk = (env.get("BUILDKITE_API_TOKEN") or "").strip()
        return cls(token=read_token(env), buildkite_token=Secret(bk) if bk else None, **values)
