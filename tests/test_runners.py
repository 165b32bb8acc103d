"""Runner registration, listing and removal against the fake GitHub; `parity bundle` round
trips through `parity ingest` and the collector; the workflow templates validate."""
from __future__ import annotations

import base64
import json
import os
import shutil
import stat
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
import yaml
from sqlalchemy import text

from parity.cli import failure
from parity.db.engine import make_engine
from tests.fakegithub import FakeGitHub, World, zip_bytes
from tests.fakegithub.scenario import junit, serving

ROOT = Path(__file__).resolve().parent.parent
HAND = ROOT / "tests" / "data" / "gpu-detect"
TOKEN = "ghp_runnerADMINtoken_0123456789"
REPO, PUBLIC, ORG = "amd/private-ci", "vllm-project/vllm", "ROCm"


@pytest.fixture
def fake():
    w = World()
    w.add_repo(REPO, private=True)
    w.add_repo(PUBLIC)
    w.add_runner_group(ORG, "gpu-private")
    w.add_runner_group(ORG, "gpu-public", allows_public_repositories=True)
    with FakeGitHub(w, {TOKEN: 1, "ghp_readonly": 2},
                    permissions={"ghp_readonly": {"administration:read"}}) as server:
        yield server


def parity(fake, *args, token=TOKEN, cwd=None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PARITY_", "GITHUB_", "GH_"))}
    env.update(GITHUB_TOKEN=token, PYTHONPATH=str(ROOT), PARITY_GITHUB_API_URL=fake.base_url)
    return subprocess.run([sys.executable, "-m", "parity", *args], env=env, capture_output=True,
                          text=True, timeout=120, cwd=cwd)


def secrets(fake) -> list[str]:
    return [TOKEN, *fake.issued]


def assert_no_secret(fake, texts: list[str], folder: Path, allowed: set[Path] = frozenset()):
    for s in secrets(fake):
        assert not [t for t in texts if s in t], "a secret reached the output"
        for f in folder.rglob("*"):
            if f.is_file() and f not in allowed:
                assert s.encode() not in f.read_bytes(), f"a secret reached {f}"


def test_jit_registration_for_a_private_repository(fake, tmp_path):
    work = tmp_path / "runner"
    out = parity(fake, "runner", "register", "--repo", REPO, "--name", "mi355-01",
                 "--work-dir", str(work), "--from", str(HAND / "amd-smi-static-mi355x-x8.json"),
                 "--labels", "vllm-nightly")
    assert out.returncode == 0, out.stderr
    runner = next(r for r in fake.world.runners.values() if r.name == "mi355-01")
    names = [n for _, n, _ in runner.labels]
    assert {"self-hosted", "amd", "mi355x", "gfx950", "gpu-8", "vllm-nightly"} <= set(names)
    assert runner.ephemeral and runner.status == "offline"
    secret = work / ".jitconfig"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert stat.S_IMODE(work.stat().st_mode) == 0o700
    config = json.loads(base64.b64decode(secret.read_text()))
    assert config["runner_id"] == runner.id
    script = (work / "start.sh").read_text()
    assert "ACTIONS_RUNNER_INPUT_JITCONFIG" in script and "exec ./run.sh" in script
    assert os.access(work / "start.sh", os.X_OK)
    unit = (work / "parity-runner-mi355-01.service").read_text()
    assert "SupplementaryGroups=video render" in unit and "Restart=no" in unit
    assert "/dev/kfd" in (work / "container-options").read_text()
    assert_no_secret(fake, [out.stdout, out.stderr], tmp_path, allowed={secret})


def test_the_start_script_hands_the_jit_config_over_in_the_environment(fake, tmp_path):
    """Run the generated start script against a stand-in `run.sh`: the configuration
    arrives in ACTIONS_RUNNER_INPUT_JITCONFIG, not in argv, and the secret file is gone."""
    work, runner_dir = tmp_path / "runner", tmp_path / "actions-runner"
    runner_dir.mkdir()
    (runner_dir / "run.sh").write_text('#!/bin/sh\nprintf "%s" "$ACTIONS_RUNNER_INPUT_JITCONFIG" '
                                       '> got-config\necho "$@" > got-args\n')
    os.chmod(runner_dir / "run.sh", 0o755)
    assert parity(fake, "runner", "register", "--repo", REPO, "--name", "b200-01", "--work-dir",
                  str(work), "--from", str(HAND / "nvidia-smi-csv-b200-x8.txt")).returncode == 0
    issued = (work / ".jitconfig").read_text()
    subprocess.run([str(work / "start.sh")], env={"PARITY_RUNNER_DIR": str(runner_dir),
                                                  "PATH": os.environ["PATH"]}, check=True)
    assert (runner_dir / "got-config").read_text() == issued
    assert (runner_dir / "got-args").read_text().strip() == ""
    assert not (work / ".jitconfig").exists()
    unit = (work / "parity-runner-b200-01.service").read_text()
    assert "SupplementaryGroups" not in unit and "--gpus all" in (work / "container-options").read_text()


def test_persistent_registration_for_an_org_group(fake, tmp_path):
    work = tmp_path / "p"
    group = next(g for g in fake.world.groups(ORG) if g["name"] == "gpu-private")
    out = parity(fake, "runner", "register", "--org", ORG, "--group", str(group["id"]),
                 "--persistent", "--name", "mi300-01", "--work-dir", str(work),
                 "--from", str(ROOT / "tests" / "data" / "gpu-detect" / "amd-smi-static-legacy-mi300x-x2.json"))
    assert out.returncode == 0, out.stderr
    token_file = work / ".registration-token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600 and token_file.read_text() in fake.issued
    script = (work / "start.sh").read_text()
    assert "config.sh --unattended" in script and f"--runnergroup {group['id']}" in script
    assert "Restart=always" in (work / "parity-runner-mi300-01.service").read_text()
    assert_no_secret(fake, [out.stdout, out.stderr], tmp_path, allowed={token_file})


def test_public_repositories_and_public_groups_are_refused_unless_allowed(fake, tmp_path):
    hw = ["--from", str(HAND / "nvidia-smi-csv-b200-x8.txt")]
    refused = parity(fake, "runner", "register", "--repo", PUBLIC, "--work-dir",
                     str(tmp_path / "a"), *hw)
    assert refused.returncode == failure.USAGE and "public repository" in refused.stderr
    assert not fake.world.runners and not (tmp_path / "a").exists()
    public_group = next(g for g in fake.world.groups(ORG) if g["allows_public_repositories"])
    grp = parity(fake, "runner", "register", "--org", ORG, "--group", str(public_group["id"]),
                 "--work-dir", str(tmp_path / "b"), *hw)
    assert grp.returncode == failure.USAGE and "admits public repositories" in grp.stderr
    allowed = parity(fake, "runner", "register", "--repo", PUBLIC, "--allow-public-repo",
                     "--work-dir", str(tmp_path / "c"), *hw)
    assert allowed.returncode == 0 and "WARNING" in allowed.stderr
    assert len(fake.world.runners) == 1


def test_a_403_names_the_permission_needed(fake, tmp_path):
    out = parity(fake, "runner", "register", "--repo", REPO, "--work-dir", str(tmp_path / "x"),
                 "--from", str(HAND / "nvidia-smi-csv-b200-x8.txt"), token="ghp_readonly")
    assert out.returncode == failure.REFUSED
    assert "403" in out.stderr and "Administration: write" in out.stderr
    assert "administration=write" in out.stderr and "ghp_readonly" not in out.stderr


def test_jit_rules_duplicate_names_and_unknown_groups(fake, tmp_path):
    hw = ["--from", str(HAND / "nvidia-smi-csv-b200-x8.txt")]
    first = parity(fake, "runner", "register", "--repo", REPO, "--name", "same",
                   "--work-dir", str(tmp_path / "1"), *hw)
    assert first.returncode == 0
    dup = parity(fake, "runner", "register", "--repo", REPO, "--name", "same",
                 "--work-dir", str(tmp_path / "2"), *hw)
    assert dup.returncode == failure.REFUSED and "409" in dup.stderr
    missing = parity(fake, "runner", "register", "--org", ORG, "--group", "999",
                     "--work-dir", str(tmp_path / "3"), *hw)
    assert missing.returncode == failure.USAGE and "does not exist" in missing.stderr


def test_list_and_remove(fake, tmp_path):
    fake.world.add_runner(REPO, "mi355-busy", ["mi355_1"], busy=True)
    fake.world.add_runner(REPO, "h200-idle", ["h200-1gpu"])
    listed = parity(fake, "runner", "list", "--repo", REPO, "--json")
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert rows["mi355-busy"]["state"] == "busy" and rows["mi355-busy"]["hardware"] == "mi355x"
    assert rows["h200-idle"]["state"] == "idle" and rows["h200-idle"]["hardware"] == "h200"
    busy = parity(fake, "runner", "remove", "mi355-busy", "--repo", REPO)
    assert busy.returncode == failure.REFUSED and "422" in busy.stderr
    gone = parity(fake, "runner", "remove", "h200-idle", "--repo", REPO)
    assert gone.returncode == 0 and "h200-idle" not in json.dumps(
        parity(fake, "runner", "list", "--repo", REPO, "--json").stdout)
    assert parity(fake, "runner", "remove", "nobody", "--repo", REPO).returncode == failure.REFUSED


def test_print_only_asks_nothing_and_writes_nothing(fake, tmp_path):
    out = parity(fake, "runner", "register", "--repo", REPO, "--print-only", "--work-dir",
                 str(tmp_path / "w"), "--from", str(HAND / "rocminfo-mi455x-x8.txt"))
    assert out.returncode == 0 and "mi455x" in out.stdout and "gfx1250" in out.stdout
    assert not fake.log and not (tmp_path / "w").exists()


# -- parity bundle ---------------------------------------------------------------------------

def _results(folder: Path) -> Path:
    (folder / "junit").mkdir(parents=True)
    (folder / "junit" / "kernels.xml").write_text(junit("kernels", 12, failed={2}))
    (folder / "bench.json").write_text(serving(2500.0))
    (folder / "notes.md").write_text("not a result")
    return folder


def test_bundle_round_trips_through_ingest(tmp_path):
    results = _results(tmp_path / "results")
    out = tmp_path / "bundle"
    env = {"GITHUB_RUN_ID": "777", "GITHUB_SHA": "abc123", "GITHUB_REPOSITORY": PUBLIC,
           "PARITY_JOB_ID": "4242", "PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    made = subprocess.run([sys.executable, "-m", "parity", "bundle", str(results), "--out", str(out),
                           "--framework", "vllm", "--suite", "kernels",
                           "--from", str(HAND / "amd-smi-static-mi355x-x8.json"), "--json"],
                          env=env, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    manifest = json.loads((out / "parity-manifest.json").read_text())
    assert (manifest["hardware"], manifest["job_id"], manifest["run_id"], manifest["status"]) == (
        "mi355x", "4242", "777", "results")
    assert sorted(manifest["files"]) == ["results/bench.json", "results/junit/kernels.xml"]
    db = tmp_path / "s.db"
    ing = subprocess.run([sys.executable, "-m", "parity", "--db", str(db), "ingest", str(out)],
                         env=env, capture_output=True, text=True)
    assert ing.returncode == 0, ing.stderr + ing.stdout
    engine = make_engine(db)
    with engine.connect() as conn:
        rows = conn.execute(text(
            "SELECT r.run_id, r.repository, r.head_sha, j.job_id, j.suite, h.sku, f.name "
            "FROM ci_job j JOIN ci_run r ON r.id = j.run_pk JOIN hardware h ON h.id = j.hardware_id "
            "JOIN framework f ON f.id = j.framework_id")).all()
    engine.dispose()
    assert set(rows) == {("777", PUBLIC, "abc123", "4242", "kernels", "mi355x", "vllm")}


def test_a_job_that_ran_nothing_says_so(tmp_path):
    from parity.runners.bundle import bundle

    empty = tmp_path / "results"
    empty.mkdir()
    (empty / "junit.xml").write_text('<testsuite name="pytest" tests="0"></testsuite>')
    b = bundle([empty], tmp_path / "out", framework="vllm", suite="kernels", env={})
    assert b.manifest.status == "no-results"


def test_bundle_round_trips_through_the_collector(tmp_path):
    from parity.collectors.github import Client
    from parity.collectors.settings import Secret, Settings
    from parity.collectors.sync import GitHubSync, SyncOptions
    from parity.runners.bundle import bundle

    w = World()
    run = w.add_run(PUBLIC, created_at=datetime(2026, 11, 20, 1))
    job = w.add_job(run, "kernels (shard 1)", ["linux-mi35x-gpu-8"])
    b = bundle([_results(tmp_path / "results")], tmp_path / "bundle", framework="vllm",
               suite="kernels", hardware="mi355x", job_id=str(job.id), run_id=str(run.id), env={})
    files = {str(p.relative_to(b.out)): p.read_bytes() for p in b.out.rglob("*") if p.is_file()}
    w.add_artifact(run, "parity-kernels", files)
    engine = make_engine(tmp_path / "c.db")
    with FakeGitHub(w, {TOKEN: 1}) as fake:
        report = GitHubSync(engine, Client(Settings(), api_url=fake.base_url, token=Secret(TOKEN))).run(
            SyncOptions(repo=PUBLIC, since=datetime(2026, 11, 1)))
    assert report.runs_synced == 1 and report.files == 2 and report.logs == 0
    with engine.connect() as conn:
        mapped = conn.execute(text("SELECT mapped_by, status FROM ci_artifact")).all()
        jobs = conn.execute(text("SELECT j.job_id, j.suite, h.sku FROM ci_job j "
                                 "JOIN hardware h ON h.id = j.hardware_id")).all()
    engine.dispose()
    assert mapped == [("manifest", "ingested")] and jobs == [(str(job.id), "kernels", "mi355x")]


# -- workflow templates ----------------------------------------------------------------------

WORKFLOWS = sorted((ROOT / "runners" / "workflows").glob("*.yml"))


def test_there_is_a_template_per_framework():
    assert [p.stem for p in WORKFLOWS] == ["parity-pytorch", "parity-sglang", "parity-vllm"]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_templates_validate_against_github_schema(path):
    checker = shutil.which("check-jsonschema") or str(Path(sys.executable).parent / "check-jsonschema")
    if not Path(checker).exists():
        pytest.skip("check-jsonschema is not installed (pip install -e '.[test]')")
    out = subprocess.run([checker, "--builtin-schema", "vendor.github-workflows", str(path)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_templates_keep_least_privilege(path):
    """Needs only PyYAML: runs even where the schema checker is not installed."""
    doc = yaml.safe_load(path.read_text())
    triggers = doc[True]  # YAML 1.1 reads the key `on` as true
    assert set(triggers) == {"workflow_call"} and "pull_request_target" not in json.dumps(doc, default=str)
    assert doc["permissions"] == {"contents": "read"}
    steps = doc["jobs"]["suite"]["steps"]
    assert any("parity bundle" in s.get("run", "") for s in steps)
    assert any(s.get("uses", "").startswith("actions/upload-artifact") for s in steps)
    for step in steps:  # inputs reach shell scripts through env, never spliced into them
        assert "${{" not in step.get("run", "")
