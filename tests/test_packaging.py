"""Installing Parity adds one name to site-packages: `parity` (and its .dist-info).

Builds the wheel from this checkout, installs it without dependencies into a fresh virtual
environment (the dependencies come from the running environment through PYTHONPATH, which
holds no `parity`), and runs the installed command and imports from outside the checkout."""
from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                            str(tmp / "dist"), str(ROOT)], capture_output=True, text=True)
    if built.returncode != 0 and "No matching distribution found for setuptools" in built.stderr:
        pytest.skip("building the wheel needs setuptools from the package index")
    assert built.returncode == 0, built.stderr
    wheel, = (tmp / "dist").glob("parity_ci-*.whl")
    env_dir = tmp / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    site = Path(subprocess.check_output([str(py), "-c", "import sysconfig; "
                                         "print(sysconfig.get_paths()['purelib'])"], text=True)
                .strip())
    before = set(os.listdir(site))
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps",
                    "-q", str(wheel)], check=True, capture_output=True)
    added = set(os.listdir(site)) - before
    env = dict(os.environ, PYTHONPATH=sysconfig.get_paths()["purelib"])
    env.pop("PARITY_DB_URL", None)
    return {"added": added, "py": py, "bin": env_dir / "bin", "env": env, "cwd": tmp,
            "site": site}


def _run(inst, *cmd):
    return subprocess.run(list(cmd), cwd=inst["cwd"], env=inst["env"], capture_output=True,
                          text=True, timeout=300)


def test_only_parity_is_added(installed):
    names = {n for n in installed["added"] if not n.startswith("__pycache__")}
    assert {n for n in names if not n.endswith(".dist-info")} == {"parity"}
    assert len([n for n in names if n.endswith(".dist-info")]) == 1


def test_command_and_imports_come_from_the_wheel(installed):
    helped = _run(installed, str(installed["bin"] / "parity"), "--help")
    assert helped.returncode == 0 and "ingest" in helped.stdout and "serve" in helped.stdout
    version = _run(installed, str(installed["bin"] / "parity"), "--version")
    assert version.stdout.strip() == "parity 0.1.0"
    probe = _run(installed, str(installed["py"]), "-c",
                 "from parity.dashboard import frames, charts; import parity.db.models as m; "
                 "print(frames.__file__); print(charts.__file__); print(m.__file__)")
    assert probe.returncode == 0, probe.stderr
    files = probe.stdout.split()
    assert len(files) == 3 and all(f.startswith(str(installed["site"] / "parity")) for f in files)


def test_the_wheel_carries_its_data(installed):
    """Migrations, vocabularies, app pages, workflow templates and the report notebook."""
    pkg = installed["site"] / "parity"
    for rel in ("db/hardware.toml", "db/capabilities.toml", "collectors/formats/junit.py",
                "dashboard/weekly_report.ipynb", "dashboard/app/main.py", "dashboard/app/server.py",
                "dashboard/app/views/overview.py", "runners/workflows/parity-vllm.yml",
                "db/migrations/env.py", "cli/__init__.py", "dashboard/alert_rules.toml",
                "db/migrations/versions/0011_alerts.py", "db/schema.sqlite.sql"):
        assert (pkg / rel).is_file(), rel
    store = installed["cwd"] / "store.db"
    up = _run(installed, str(installed["bin"] / "parity"), "--db", str(store), "db", "upgrade")
    assert up.returncode == 0, up.stderr
    # the store the wheel made (from its schema file) is the one this checkout makes
    import sqlite3

    from parity.db.engine import make_engine
    from parity.db.migrate import HEAD, upgrade

    here = make_engine(installed["cwd"] / "here.db")
    upgrade(here)
    here.dispose()
    master = "SELECT type, name, sql FROM sqlite_master ORDER BY type, name"
    made, ours = (sqlite3.connect(f) for f in (store, installed["cwd"] / "here.db"))
    assert made.execute(master).fetchall() == ours.execute(master).fetchall()
    assert made.execute("SELECT version_num FROM alembic_version").fetchone() == (HEAD,)
    made.close()
    ours.close()
    status = _run(installed, str(installed["bin"] / "parity"), "--db", str(store), "status")
    assert status.returncode == 0 and "test_results" in status.stdout, status.stderr
