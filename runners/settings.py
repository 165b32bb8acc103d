"""Runner tooling settings from `PARITY_*` environment variables and the GitHub token."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping

from parity.db.secret import Secret, read_token


@dataclass(frozen=True)
class Settings:
    api_url: str = "https://api.github.com"
    web_url: str = "https://github.com"  # what `config.sh --url` points at
    timeout_s: float = 30.0
    retries: int = 4
    runner_dir: str = "/opt/actions-runner"  # where the actions/runner release is unpacked
    token: Secret | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, token_file: str | None = None) -> "Settings":
        env = os.environ if env is None else env
        values: dict = {}
        if env.get("PARITY_GITHUB_API_URL"):
            values["api_url"] = env["PARITY_GITHUB_API_URL"].rstrip("/")
        if env.get("PARITY_GITHUB_WEB_URL"):
            values["web_url"] = env["PARITY_GITHUB_WEB_URL"].rstrip("/")
        if env.get("PARITY_RUNNER_DIR"):
            values["runner_dir"] = env["PARITY_RUNNER_DIR"]
        return cls(token=read_token(env, token_file), **values)
