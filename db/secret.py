"""Secrets (GitHub tokens, JIT runner configurations) as a type that cannot leak by accident,
and where the token comes from. In `db` because both `collectors` and `runners` use them
and `db` is the one package both may import."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping


class Secret:
    """A secret value: repr and str are masked; `reveal()` is the only way to the text."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__


def read_token(env: Mapping[str, str] | None = None, token_file: str | None = None) -> Secret | None:
    """The GitHub token: `--token-file`, else `GITHUB_TOKEN`, else `GH_TOKEN`; None when unset."""
    env = os.environ if env is None else env
    if token_file:
        value = Path(token_file).read_text(encoding="utf-8").strip()
    else:
        value = (env.get("GITHUB_TOKEN") or env.get("GH_TOKEN") or "").strip()
    return Secret(value) if value else None


def read_file_secret(path: str) -> Secret | None:
    """A token kept in a file (`--token-file`); None when the file is empty."""
    value = Path(path).read_text(encoding="utf-8").strip()
    return Secret(value) if value else None
