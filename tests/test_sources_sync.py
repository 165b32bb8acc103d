"""`parity.toml` and `parity sync`: every source synced with its own checkpoint, a failing
source reported without stopping the others, rounds that never overlap, a clean stop on
SIGTERM, the state each sync leaves for the app, and systemd units that systemd accepts."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from parity.collectors import config as configs
from parity.collectors import schedule
from parity.collectors.settings import Settings
from parity.dashboard import frames
from parity.db.engine import make_engine
from tests.fakebuildkite.scenario import history as bk_history
from tests.fakebuildkite.server import FakeBuildkite
from tests.fakebuildkite.world import World as BkWorld
from tests.fakegithub import FakeGitHub, World
from tests.fakegithub.scenario import history as gh_history

ROOT = Path(__file__).resolve().parent.parent
GH_TOKEN = "ghp_fakeTOKENforSourcesTests_0123456789"
BK_TOKEN = "bkua_fakeTOKENforSourcesTests_0123456789"
NOW = datetime.utcnow().replace(microsecond=0, second=0, minute=0)


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def fakes():
    gw = World(now=NOW)
    gh_history(gw, "sgl-project/sglang", NOW - timedelta(days=1))
    bw = BkWorld()
    bk_history(bw, NOW - timedelta(days=3))
    with FakeGitHub(gw, {GH_TOKEN: 7}) as gh, \
            FakeBuildkite(bw, {BK_TOKEN: {"read_builds", "read_build_logs", "read_artifacts"}}) as bk:
        yield gh, bk


def _config(tmp_path: Path, gh, bk, broken: bool = True) -> Path:
    text = f"""
[[source]]
name = "sglang"
kind = "github"
repo = "sgl-project/sglang"
api_url = "{gh.base_url}"
framework = "sglang"

[[source]]
name = "vllm-buildkite"
kind = "buildkite"
org = "vllm"
pipelines = ["ci", "amd-ci"]
api_url = "{bk.url}"
framework = "vllm"
[source.suites]
"V1 e2e" = "v1-end-to-end"
"""
    if broken:
        text += f"""
[[source]]
name = "unreachable"
kind = "buildkite"
org = "vllm"
pipelines = ["ci"]
api_url = "http://127.0.0.1:{_dead_port()}/v2"
"""
    path = tmp_path / "parity.toml"
    path.write_text(text)
    return path


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PARITY_", "GITHUB", "GH_", "BUILDKITE"))}
    env.update(GITHUB_TOKEN=GH_TOKEN, BUILDKITE_API_TOKEN=BK_TOKEN, PARITY_GITHUB_BACKOFF_S="0.01",
               PARITY_GITHUB_SINCE_DAYS="30", PARITY_BUILDKITE_SINCE_DAYS="30", **extra)
    return env


def _parity(*args, env=None, timeout=180):
    return subprocess.run([sys.executable, "-m", "parity", *args], env=env or _env(),
                          capture_output=True, text=True, cwd=ROOT, timeout=timeout)


# -- the sources file --------------------------------------------------------------------------

def test_the_shipped_example_is_a_valid_sources_file():
    cfg = configs.load(ROOT / "parity.example.toml")
    kinds = {s.name: (s.kind, s.target) for s in cfg.sources}
    assert kinds == {"vllm-buildkite": ("buildkite", "vllm/ci,amd-ci"),
                     "sglang-nightly": ("github", "sgl-project/sglang"),
                     "rocm-nightly": ("quartz", "ROCm/Quartz (nightly)"),
                     "vllm-published": ("published-vllm-ci",
                                        "AndreasKaratzas/vllm-ci-dashboard/data/vllm/ci")}


@pytest.mark.parametrize("body, message", [
    ('[[source]]\nname="a"\nkind="gitlab"\n', "source 1 (a): `kind` must be one of"),
    ('[[source]]\nname="a"\nkind="github"\nrepo="foo"\n', "`repo` must be OWNER/NAME (got 'foo')"),
    ('[[source]]\nname="a"\nkind="buildkite"\norg="vllm"\n', "`pipelines` is required"),
    ('[[source]]\nname="a"\nkind="github"\nrepo="a/b"\norg="x"\n',
     "`org` is not a key of a github source"),
    ('[[source]]\nkind="github"\nrepo="a/b"\n', "source 1: `name` is required"),
    ('[[source]]\nname="a"\nkind="github"\nrepo="a/b"\n[[source]]\nname="a"\nkind="github"\n'
     'repo="c/d"\n', "source names must be unique; repeated: a"),
    ('[[source]]\nname="a"\nkind="github"\nrepo="a/b"\nsuites={"(" = "x"}\n',
     "`suites` has an invalid pattern"),
    ('[[source]\n', "not valid TOML"),
])
def test_a_bad_sources_file_is_one_line_naming_file_source_and_key(tmp_path, body, message):
    path = tmp_path / "parity.toml"
    path.write_text(body)
    with pytest.raises(configs.ConfigError) as exc:
        configs.load(path)
    text = str(exc.value)
    assert text.startswith(str(path)) and message in text and "\n" not in text
    out = _parity("--db", str(tmp_path / "s.db"), "sync", "--config", str(path))
    assert out.returncode == 2 and out.stderr.strip() == f"ERROR {text}"


# -- parity sync -------------------------------------------------------------------------------

def test_sync_runs_every_source_and_a_failing_one_stops_none(tmp_path, fakes):
    gh, bk = fakes
    db = tmp_path / "s.db"
    cfg = _config(tmp_path, gh, bk)
    out = _parity("--db", str(db), "sync", "--config", str(cfg))
    assert out.returncode == 1, out.stderr
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 3  # one line per source
    assert " sglang (github sgl-project/sglang): ok: " in lines[0]
    assert " vllm-buildkite (buildkite vllm/ci,amd-ci): ok: 5 builds synced" in lines[1]
    assert " unreachable (buildkite vllm/ci): failed: cannot reach 127.0.0.1:" in lines[2]
    assert out.stderr.strip().splitlines()[-1] == "ERROR sources that failed: unreachable"
    assert "Traceback" not in out.stderr and GH_TOKEN not in out.stdout + out.stderr
    state = frames.sources(db).set_index("name")
    assert state.loc[["sglang", "vllm-buildkite", "unreachable"], "status"].tolist() == \
        ["ok", "ok", "failed"]
    assert state.loc[["sglang", "vllm-buildkite", "unreachable"], "stale"].tolist() == \
        [False, False, True]  # never synced successfully
    # the source's suite mapping applied
    engine = make_engine(db)
    from sqlalchemy import text
    with engine.connect() as conn:
        suites = {r[0] for r in conn.execute(text(
            "SELECT suite FROM ci_job WHERE name LIKE '%V1 e2e%'"))}
    assert suites == {"v1-end-to-end"}
    # a second round costs nothing new and stores nothing twice
    again = _parity("--db", str(db), "sync", "--config", str(cfg), "--source", "vllm-buildkite")
    assert again.returncode == 0, again.stderr
    assert "0 builds synced" in again.stdout and "; 2 requests" in again.stdout


def test_a_source_goes_stale_after_a_day_without_a_good_sync(tmp_path, fakes):
    gh, bk = fakes
    engine = make_engine(tmp_path / "s.db")
    cfg = configs.load(_config(tmp_path, gh, bk, broken=False))
    outcomes = schedule.sync_round(engine, cfg, Settings.from_env(_env()),
                                   log=lambda line: None)
    assert [o.status for o in outcomes] == ["ok", "ok"]
    later = datetime.utcnow() + timedelta(hours=25)
    assert frames.sources(engine, now=later)["stale"].all()
    assert not frames.sources(engine)["stale"].any()


def test_two_syncs_never_overlap(tmp_path, fakes):
    gh, bk = fakes
    db = tmp_path / "s.db"
    cfg = _config(tmp_path, gh, bk, broken=False)
    with schedule.round_lock(schedule.lock_path(make_engine(db))):
        out = _parity("--db", str(db), "sync", "--config", str(cfg))
    assert out.returncode == schedule_busy() and "another parity sync holds" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def schedule_busy() -> int:
    from parity.cli.sync import BUSY
    return BUSY


def test_sync_every_keeps_syncing_and_stops_cleanly_on_sigterm(tmp_path, fakes):
    gh, bk = fakes
    db = tmp_path / "s.db"
    cfg = _config(tmp_path, gh, bk, broken=False)
    proc = subprocess.Popen([sys.executable, "-m", "parity", "--db", str(db), "sync", "--config",
                             str(cfg), "--every", "1m"], env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)
    lines = []
    deadline = time.monotonic() + 120
    while len(lines) < 2 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line:
            lines.append(line)
    proc.send_signal(signal.SIGTERM)
    rest, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert [line.split(" ")[1] for line in lines] == ["sglang", "vllm-buildkite"]
    assert rest.strip().endswith("stopped") and "Traceback" not in err


def test_an_interval_under_a_minute_is_refused(tmp_path, fakes):
    gh, bk = fakes
    out = _parity("--db", str(tmp_path / "s.db"), "sync", "--config",
                  str(_config(tmp_path, gh, bk)), "--every", "5s")
    assert out.returncode == 2 and "under a minute" in out.stderr


# -- systemd -----------------------------------------------------------------------------------

def test_the_systemd_units_pass_systemd_analyze_verify(tmp_path):
    tool = shutil.which("systemd-analyze")
    if tool is None:
        if os.environ.get("PARITY_REQUIRE_SYSTEMD"):
            pytest.fail("systemd-analyze is missing (PARITY_REQUIRE_SYSTEMD=1)")
        pytest.skip("systemd-analyze is not installed (Debian package systemd)")
    parity = str(Path(sys.executable).parent / "parity")
    units = sorted((ROOT / "deploy" / "systemd").glob("parity-*"))
    assert {u.name for u in units} == {"parity-sync.service", "parity-sync.timer",
                                       "parity-serve.service"}
    for unit in units:  # the units name /opt/parity; verify against this checkout's command
        (tmp_path / unit.name).write_text(unit.read_text().replace(
            "/opt/parity/.venv/bin/parity", parity))
    ok = subprocess.run([tool, "verify", *[str(tmp_path / u.name) for u in units]],
                        capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and not ok.stderr.strip(), ok.stderr
    # and the check is not vacuous: a broken unit fails it
    bad = tmp_path / "parity-broken.service"
    bad.write_text((tmp_path / "parity-sync.service").read_text().replace(
        "Type=oneshot", "Type=oneshoot").replace(parity, "/nonexistent/parity"))
    broken = subprocess.run([tool, "verify", str(bad)], capture_output=True, text=True, timeout=60)
    assert broken.returncode != 0 and "oneshoot" in broken.stderr
