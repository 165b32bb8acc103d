"""Public AMD feeds: ROCm/Quartz's nightly status and the vLLM CI dashboard's published
results, read from the real samples and synced from the fake GitHub (contents API, ETags)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import text

from parity.collectors.feeds import FeedOptions, FeedSync
from parity.collectors.github import Client
from parity.collectors.ingest import IngestOptions, ingest
from parity.collectors.settings import Secret, Settings
from parity.dashboard import frames
from parity.db.engine import make_engine
from tests.fakegithub import FakeGitHub, World

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "ghp_fakeTOKENforFeedTests_0123456789abc"


def _status(real: Path) -> dict:
    return json.loads((real / "rocm-quartz" / "status_release-nightly_20260821.json").read_text())


def _night(doc: dict, day: datetime, *, gfx1250_build_only: bool = False, run_id: int = 0) -> dict:
    """The real status document moved to another night (and, for the MI455X case, with
    gfx125X-dcgpu requested and built but not tested)."""
    doc = json.loads(json.dumps(doc))
    stamp = day.strftime("%Y-%m-%dT21:16:58Z")
    doc.update(build_date=day.strftime("%Y%m%d"), created_at=stamp,
               trigger_workflow_run_id=run_id or int(day.strftime("%Y%m%d")))
    if gfx1250_build_only:
        doc["summary"]["linux"]["architectures"].append("gfx125X-dcgpu")
    return doc


def _rows(engine, sql: str) -> list[tuple]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(sql))]


# -- formats, from the real samples ------------------------------------------------------------

def test_a_quartz_status_becomes_per_architecture_lanes(real, sqlite_engine, tmp_path):
    path = real / "rocm-quartz" / "status_release-nightly_20260821.json"
    report = ingest(sqlite_engine, [path])
    assert [f.format for f in report.files] == ["quartz-status"]
    run = _rows(sqlite_engine, "SELECT ci_system, repository, run_id, workflow, conclusion, "
                               "created_at FROM ci_run")
    assert run == [("quartz", "ROCm/TheRock", "32527757091", "release-nightly", "success",
                    "2026-08-21 21:16:58.000000")]
    # the summary's counters are matrix entries: success 14, failure 26 for PyTorch on Linux
    counts = _rows(sqlite_engine, """
        SELECT f.name, sum(s.passed), sum(s.failed) FROM test_summary s
        JOIN ci_job j ON j.id = s.job_pk JOIN framework f ON f.id = j.framework_id
        WHERE j.job_id LIKE '%/test/linux/%' GROUP BY f.name ORDER BY 1""")
    doc = _status(real)
    linux = doc["summary"]["linux"]
    assert counts == [("jax", linux["jax"]["test"]["success"], linux["jax"]["test"]["failure"]),
                      ("pytorch", linux["pytorch"]["test"]["success"],
                       linux["pytorch"]["test"]["failure"]),
                      ("rocm", linux["rocm"]["test"]["success"], linux["rocm"]["test"]["failure"])]
    hw = dict(_rows(sqlite_engine, "SELECT j.job_id, h.arch FROM ci_job j "
                                   "JOIN hardware h ON h.id = j.hardware_id"))
    assert hw["pytorch/test/linux/gfx94X-dcgpu"] == "gfx942"
    assert hw["rocm/build/linux/gfx120X-all"] == "gfx120x"


def test_a_gfx1250_lane_that_only_builds_is_build_only_never_passing(real, sqlite_engine, tmp_path):
    doc = _night(_status(real), datetime(2026, 8, 22), gfx1250_build_only=True)
    path = tmp_path / "status.json"
    path.write_text(json.dumps(doc))
    ingest(sqlite_engine, [path])
    stack = frames.rocm_stack(sqlite_engine).set_index(["framework", "hardware"])
    assert stack.loc[("rocm", "mi455x"), "verdict"] == "build only"
    assert stack.loc[("pytorch", "mi455x"), "verdict"] == "build only"
    assert stack.loc[[("rocm", "mi455x"), ("pytorch", "mi455x")], "pass_rate"].isna().all()
    assert stack.loc[("jax", "gfx942"), "verdict"] == "passing"
    assert stack.loc[("pytorch", "gfx942"), "pass_rate"] == pytest.approx(7 / 20)
    gaps = frames.coverage(sqlite_engine)
    only = gaps[(gaps["finding"] == "builds but runs no tests") & (gaps["hardware"] == "mi455x")]
    assert set(only["framework"]) == {"rocm", "pytorch", "jax"}
    card = frames.scorecard(sqlite_engine).set_index(["framework", "hardware"])
    assert card.loc[("rocm", "mi455x"), "tests"] == 0
    assert pd_isna(card.loc[("rocm", "mi455x"), "pass_rate"])


def pd_isna(value) -> bool:
    import pandas as pd
    return bool(pd.isna(value))


def test_a_newer_status_of_the_same_night_replaces_the_older(real, sqlite_engine, tmp_path):
    doc = _status(real)
    first = tmp_path / "a" / "status.json"
    first.parent.mkdir()
    first.write_text(json.dumps(doc))
    ingest(sqlite_engine, [first])
    before = _rows(sqlite_engine, "SELECT sum(total), sum(passed) FROM test_summary")
    for v in doc["pipelines"]["pytorch"]["test"]["linux"]["gfx94X-dcgpu"]["variants"]:
        v["status"] = "success"  # the night's failures were fixed and re-run
    doc["status_json_last_updated"] = "2026-08-22T12:00:00Z"
    second = tmp_path / "b" / "status.json"
    second.parent.mkdir()
    second.write_text(json.dumps(doc))
    ingest(sqlite_engine, [second])
    after = _rows(sqlite_engine, "SELECT sum(total), sum(passed) FROM test_summary")
    assert after[0][0] == before[0][0]  # replaced, not added
    assert after[0][1] == before[0][1] + 13
    assert ingest(sqlite_engine, [second]).count("unchanged") == 1


def test_published_vllm_results_store_counts_never_invented_tests(real, sqlite_engine):
    folder = real / "vllm-ci"
    report = ingest(sqlite_engine, [folder / "dashboard_ci_health.json",
                                    folder / "dashboard_test_results_2026-05-18_amd.jsonl",
                                    folder / "dashboard_test_results_2026-05-18_upstream.jsonl"])
    assert [f.format for f in report.files] == ["vllm-ci-health", "vllm-ci-results",
                                                "vllm-ci-results"]
    totals = dict((r[0], r[1:]) for r in _rows(sqlite_engine, """
        SELECT r.repository, r.head_sha, sum(s.total), sum(s.passed), sum(s.failed),
               sum(s.skipped) FROM ci_run r JOIN ci_job j ON j.run_pk = r.id
        JOIN test_summary s ON s.job_pk = j.id GROUP BY r.id"""))
    rows = [json.loads(line) for line in
            (folder / "dashboard_test_results_2026-05-18_amd.jsonl").read_text().splitlines()]
    stated = sum(int(r["name"].split("(")[1].rstrip(")")) for r in rows if "(" in r["name"])
    assert totals["vllm/amd-ci"][0] == "c38bed4248e9"  # the commit from ci_health.json
    assert totals["vllm/amd-ci"][1] == stated  # the stand-ins' counts, exactly
    assert not _rows(sqlite_engine, "SELECT test_key FROM test_case WHERE test_key LIKE '%\\_\\_%' "
                                    "ESCAPE '\\'")  # no __passed__ (N) invented as a test
    # a job known only by its state is a job with that conclusion and no test
    level = [r for r in rows if r["name"] == "__job_level__"]
    job = _rows(sqlite_engine, f"SELECT j.conclusion, (SELECT count(*) FROM test_summary s "
                               f"WHERE s.job_pk = j.id) FROM ci_job j WHERE j.job_id = "
                               f"'{level[0]['job_id']}'")
    assert job == [(level[0]["status"], 0)]
    hw = dict(_rows(sqlite_engine, "SELECT j.name, h.sku FROM ci_job j JOIN hardware h "
                                   "ON h.id = j.hardware_id"))
    assert {"mi250x", "mi300x", "mi355x", "b200", "h100"} <= set(hw.values())
    assert hw["mi250_1: Engine"] == "mi250x"  # from the label's prefix


def test_bad_feed_files_name_the_file_and_line_and_keep_the_rest(real, tmp_path):
    good = (real / "vllm-ci" / "dashboard_test_results_2026-05-18_amd.jsonl").read_text()
    lines = good.splitlines()
    lines.insert(3, lines[3][: len(lines[3]) // 2])  # a truncated line
    lines.insert(7, json.dumps({"name": "test_x", "status": "passed", "build_number": 1,
                                "pipeline": "amd-ci"}))  # a row without a job name
    bad = tmp_path / "2026-05-18_amd.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    status = tmp_path / "status.json"
    status.write_text(json.dumps({"schema_version": "3.1", "trigger_workflow_run_id": 1}))
    db = tmp_path / "s.db"
    out = subprocess.run([sys.executable, "-m", "parity", "--db", str(db), "ingest", str(bad),
                          str(status)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 2  # a file rejected outright
    assert f"SKIPPED   {bad}: line 4: not valid JSON" in out.stdout
    assert f"SKIPPED   {bad}: line 8: no job_name" in out.stdout
    assert f"REJECTED {status}: status.json schema_version 3.1 is not one this parser knows" \
        in out.stdout
    engine = make_engine(db)
    kept = _rows(engine, "SELECT count(*) FROM ci_job")[0][0]
    assert kept == len({json.loads(x)["job_id"] for x in good.splitlines()})
    errors = dict(_rows(engine, "SELECT path, reason FROM ingest_error"))
    assert errors[f"{bad}:4"].startswith("line 4: not valid JSON")
    assert errors[f"{bad}:8"] == "line 8: no job_name"
    assert errors[str(status)].startswith("status.json schema_version 3.1")


# -- syncing the feeds from GitHub -------------------------------------------------------------

@pytest.fixture
def feeds(real):
    now = datetime.utcnow().replace(microsecond=0)
    world = World(now=now)
    doc = _status(real)
    days = [now - timedelta(days=3), now - timedelta(days=2), now - timedelta(days=40)]
    for i, day in enumerate(days):
        world.add_file("ROCm/Quartz", f"release-nightly/{day:%Y%m%d}/status.json",
                       json.dumps(_night(doc, day, gfx1250_build_only=i == 1)))
    world.add_file("ROCm/Quartz", "README.md", "# Quartz")
    data = real / "vllm-ci"
    repo = "AndreasKaratzas/vllm-ci-dashboard"
    yday = now - timedelta(days=1)
    for side in ("amd", "upstream"):
        world.add_file(repo, f"data/vllm/ci/test_results/{yday:%Y-%m-%d}_{side}.jsonl",
                       (data / f"dashboard_test_results_2026-05-18_{side}.jsonl").read_bytes())
    world.add_file(repo, "data/vllm/ci/ci_health.json", (data / "dashboard_ci_health.json").read_bytes())
    world.add_file(repo, "data/vllm/ci/failure_trends.json", "{}")
    with FakeGitHub(world, {TOKEN: 9}) as fake:
        yield fake, days


def _feed_sync(engine, fake, kind, repo, **kw):
    client = Client(Settings(backoff_s=0.01), api_url=fake.base_url, token=Secret(TOKEN))
    return FeedSync(engine, client).run(FeedOptions(kind=kind, repo=repo, **kw))


def test_feeds_sync_incrementally_and_an_unchanged_feed_costs_nothing(sqlite_engine, feeds):
    fake, days = feeds
    q = _feed_sync(sqlite_engine, fake, "quartz", "ROCm/Quartz")
    v = _feed_sync(sqlite_engine, fake, "published-vllm-ci", "AndreasKaratzas/vllm-ci-dashboard",
                   path="data/vllm/ci")
    assert (q.files_read, q.errors) == (2, [])  # the night 40 days back is before `since`
    assert (v.files_read, v.errors) == (3, [])  # ci_health.json and two result files
    runs = _rows(sqlite_engine, "SELECT ci_system, count(*) FROM ci_run GROUP BY 1 ORDER BY 1")
    assert runs[0] == ("quartz", 2)
    again_q = _feed_sync(sqlite_engine, fake, "quartz", "ROCm/Quartz")
    again_v = _feed_sync(sqlite_engine, fake, "published-vllm-ci",
                         "AndreasKaratzas/vllm-ci-dashboard", path="data/vllm/ci")
    for again in (again_q, again_v):
        assert again.files_read == 0 and again.cost["points"] == 0
        assert again.cost["requests"] == again.cost["not_modified"] == 1
    # a night's status updated: that file alone is read again, and replaces what it said
    day = days[0]
    path = f"release-nightly/{day:%Y%m%d}/status.json"
    doc = json.loads(fake.world.repos["ROCm/Quartz"].files[path])
    for v_ in doc["pipelines"]["pytorch"]["test"]["linux"]["gfx94X-dcgpu"]["variants"]:
        v_["status"] = "success"
    fake.world.add_file("ROCm/Quartz", path, json.dumps(doc))
    updated = _feed_sync(sqlite_engine, fake, "quartz", "ROCm/Quartz")
    assert updated.files_read == 1 and updated.files_known == 0
    assert all("/contents/" in r.path for r in fake.log)  # only the contents API is used
    # a backfill reaches the older night, and reads nothing twice
    back = _feed_sync(sqlite_engine, fake, "quartz", "ROCm/Quartz", since=days[2] - timedelta(days=1))
    assert back.files_read == 1 and back.files_known == 2


def test_parity_sync_follows_the_feeds_from_the_sources_file(tmp_path, feeds):
    fake, _ = feeds
    cfg = tmp_path / "parity.toml"
    cfg.write_text(f"""
[[source]]
name = "rocm-nightly"
kind = "quartz"
api_url = "{fake.base_url}"

[[source]]
name = "vllm-published"
kind = "published-vllm-ci"
api_url = "{fake.base_url}"
""")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PARITY_", "GITHUB"))}
    env["GITHUB_TOKEN"] = TOKEN
    db = tmp_path / "s.db"
    out = subprocess.run([sys.executable, "-m", "parity", "--db", str(db), "sync", "--config",
                          str(cfg)], env=env, capture_output=True, text=True, cwd=ROOT, timeout=180)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert " rocm-nightly (quartz ROCm/Quartz (nightly)): ok: 2 files read" in lines[0]
    assert " vllm-published (published-vllm-ci AndreasKaratzas/vllm-ci-dashboard/data/vllm/ci): " \
           "ok: 3 files read" in lines[1]
    stack = frames.rocm_stack(db)
    assert {"build only", "passing", "failing"} <= set(stack["verdict"])
