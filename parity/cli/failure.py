"""How a `parity` command ends when something fails: one line on stderr that says what
failed, where, and what to do, and a distinct exit status. A traceback only with --debug.

Exit statuses (README, "Exit statuses"): 0 done; 1 done, but some items failed; 2 bad
arguments, configuration or input; 3 stopped early, resumable (rate limit, budget, SIGTERM);
4 another sync holds the lock; 5 a host could not be reached; 6 a service refused the
request (token, permission, not found); 7 the store could not be opened or written."""
from __future__ import annotations

import argparse
import os
import sys

FAILED, USAGE, STOPPED, BUSY, UNREACHABLE, REFUSED, STORE = 1, 2, 3, 4, 5, 6, 7
SECRET_VARS = ("GITHUB_TOKEN", "GH_TOKEN", "BUILDKITE_API_TOKEN")


class Parser(argparse.ArgumentParser):
    """argparse with a one-line refusal instead of the usage block (sub-commands inherit it)."""

    def error(self, message: str):
        self.exit(USAGE, f"ERROR {self.prog}: {message} (see `{self.prog} --help`)\n")


def describe(exc: BaseException) -> tuple[int, str]:
    """(exit status, one line) for an exception a command let through."""
    from sqlalchemy.exc import SQLAlchemyError

    from parity.collectors import buildkite, github
    from parity.collectors.config import ConfigError
    from parity.runners.github import ApiError

    text = _one_line(str(exc))
    if isinstance(exc, (github.Unreachable, buildkite.Unreachable)):
        return UNREACHABLE, text
    if isinstance(exc, (github.GitHubError, buildkite.BuildkiteError, ApiError)):
        if "cannot reach" in text:
            return UNREACHABLE, text
        status = getattr(exc, "status", None)
        return (REFUSED if status in (401, 403, 404, 409, 422) else FAILED), text
    if isinstance(exc, ConfigError):
        return USAGE, text
    if isinstance(exc, SQLAlchemyError):
        first = _one_line(str(getattr(exc, "orig", None) or exc).splitlines()[0] if str(exc) else "")
        return STORE, (f"the store could not be used ({first}); check --db / PARITY_DB_URL "
                       f"and that the database is reachable")
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        return FAILED, f"{where}{exc.strerror or text}"
    if isinstance(exc, MemoryError):
        return FAILED, "out of memory"
    return FAILED, f"{type(exc).__name__}: {text} (run with --debug for the traceback)"


def report(exc: BaseException) -> int:
    status, line = describe(exc)
    print(f"ERROR {redact(line)}", file=sys.stderr)
    return status


def redact(text: str) -> str:
    """No token from the environment in what a failure prints."""
    for name in SECRET_VARS:
        value = (os.environ.get(name) or "").strip()
        if len(value) >= 8:
            text = text.replace(value, "***")
    return text


def _one_line(text: str) -> str:
    return " ".join(str(text).split())[:500]
