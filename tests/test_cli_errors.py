"""Every `parity` command ends a failure in one line that says what failed and where, with a
distinct exit status and no traceback: bad arguments (refused before any request), an API
host that cannot be reached (reported at once, not retried for a minute), and a store that
cannot be opened."""
from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from parity.cli import build_parser, failure

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "ghp_fakeTOKENforCliErrorTests_0123456789"


def _leaves(parser: argparse.ArgumentParser, prefix=()) -> list[tuple[str, ...]]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return [prefix]
    return [leaf for name, p in subs[0].choices.items() for leaf in _leaves(p, prefix + (name,))]


COMMANDS = _leaves(build_parser())


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PARITY_", "GITHUB", "GH_", "BUILDKITE"))}
    env.update(GITHUB_TOKEN=TOKEN, BUILDKITE_API_TOKEN=TOKEN)
    return subprocess.run([sys.executable, "-m", "parity", *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def _one_line(out: subprocess.CompletedProcess) -> str:
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ERROR "), out.stderr
    assert "Traceback" not in out.stderr + out.stdout and TOKEN not in out.stderr + out.stdout
    return lines[0]


def test_the_parser_knows_every_command():
    assert len(COMMANDS) >= 15
    assert ("collect", "buildkite") in COMMANDS and ("sync",) in COMMANDS


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_bad_argument_is_one_line_and_status_2(command):
    out = _run(*command, "--no-such-flag")
    assert out.returncode == failure.USAGE
    line = _one_line(out)
    # an unknown flag is named; a command with required arguments names those first
    assert "--no-such-flag" in line or "required" in line
    assert "--help" in line


UNREACHABLE = [
    ("collect", "github", "--repo", "vllm-project/vllm"),
    ("collect", "runners", "--org", "vllm-project"),
    ("collect", "buildkite", "--org", "vllm", "--pipeline", "amd-ci"),
    ("runner", "list", "--repo", "vllm-project/vllm"),
    ("runner", "remove", "mi355-1", "--repo", "vllm-project/vllm"),
    ("runner", "register", "--repo", "vllm-project/vllm", "--no-detect", "--labels", "mi355x"),
]


@pytest.mark.parametrize("command", UNREACHABLE, ids=" ".join)
def test_an_unreachable_api_is_one_line_at_once(command, tmp_path):
    url = f"http://127.0.0.1:{_dead_port()}" + ("/v2" if "buildkite" in command else "")
    started = time.monotonic()
    out = _run("--db", str(tmp_path / "s.db"), *command, "--api-url", url,
               *(("--work-dir", str(tmp_path)) if "register" in command else ()))
    assert time.monotonic() - started < 20  # not a minute of retries
    assert out.returncode == failure.UNREACHABLE, out.stderr
    line = _one_line(out)
    assert "cannot reach 127.0.0.1:" in line and "connection refused" in line


@pytest.mark.parametrize("command", [
    ("status",), ("summary",), ("db", "upgrade"), ("db", "rebuild-state"), ("db", "prune", "--days", "30"),
    ("report", "weekly", "--out", "OUT"), ("demo", "--days", "2"),
], ids=" ".join)
def test_a_store_that_cannot_be_opened_is_one_line_and_status_7(command, tmp_path):
    bad = f"postgresql+psycopg://postgres@127.0.0.1:{_dead_port()}/nothing"
    args = [str(tmp_path / "out") if a == "OUT" else a for a in command]
    out = _run("--db", bad, *args)
    assert out.returncode == failure.STORE, out.stderr
    line = _one_line(out)
    assert "the store could not be used" in line and "PARITY_DB_URL" in line


def test_debug_shows_the_traceback():
    bad = f"postgresql+psycopg://postgres@127.0.0.1:{_dead_port()}/nothing"
    out = _run("--debug", "--db", bad, "status")
    assert out.returncode != 0 and "Traceback" in out.stderr
