"""The Buildkite collector end to end, against the fake Buildkite (real HTTP on loopback):
what a sync stores and costs, and that retries, soft fails, rate limits, faults, hostile
input and kills lose nothing and leak no token."""
from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import zipfile
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import text

from parity.collectors.buildkite import BuildkiteError, Client
from parity.collectors.buildkite_sync import (BuildkiteOptions, BuildkiteSync, hardware_names,
                                              step_label, summary_complete)
from parity.collectors.formats.pytest_log import parse
from parity.collectors.settings import Secret, Settings
from parity.db.engine import make_engine
from tests.fakebuildkite.scenario import ORG, history, nightly, pytest_log
from tests.fakebuildkite.server import Faults, FakeBuildkite
from tests.fakebuildkite.world import World

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "bkua_fakeTOKENfor_tests_0123456789abcdef"
SCOPES = {"read_builds", "read_build_logs", "read_artifacts"}
START = datetime(2026, 11, 20)
SINCE = datetime(2026, 11, 1)
FAST = Settings(backoff_s=0.01, retries=6)
PIPELINES = ("ci", "amd-ci")


def world(nights: int = 3) -> World:
    w = World()
    history(w, START, nights)
    return w


def sync(engine, fake: FakeBuildkite, settings: Settings = FAST, token: str = TOKEN,
         sleep=None, **options):
    client = Client(settings, Secret(token), api_url=fake.url,
                    **({"sleep": sleep} if sleep else {}))
    opts = BuildkiteOptions(org=ORG, pipelines=options.pop("pipelines", PIPELINES),
                            since=options.pop("since", SINCE), **options)
    return BuildkiteSync(engine, client, settings).run(opts)


SNAPSHOT = {
    "runs": "SELECT repository, run_id, attempt, workflow, head_sha, branch, event, conclusion "
            "FROM ci_run ORDER BY 1, 2, 3",
    "jobs": "SELECT r.run_id, r.attempt, j.job_id, j.name, j.suite, j.runner_group, h.vendor, "
            "h.sku, h.raw_name, f.name, j.conclusion, j.exit_status, j.signal_reason, "
            "j.soft_failed, j.retried_in FROM ci_job j JOIN ci_run r ON r.id = j.run_pk "
            "LEFT JOIN hardware h ON h.id = j.hardware_id "
            "LEFT JOIN framework f ON f.id = j.framework_id ORDER BY 3",
    "results": "SELECT j.job_id, t.test_key, x.outcome, x.message FROM test_result x "
               "JOIN ci_job j ON j.id = x.job_pk JOIN test_case t ON t.id = x.test_pk ORDER BY 1, 2",
    "summaries": "SELECT j.job_id, s.group_name, s.total, s.passed, s.failed FROM test_summary s "
                 "JOIN ci_job j ON j.id = s.job_pk ORDER BY 1, 2",
    "synced": "SELECT repository, run_id, jobs, artifacts FROM synced_run ORDER BY 1, 2",
    "errors": "SELECT path, reason FROM ingest_error ORDER BY 1",
}


def snapshot(engine) -> dict:
    with engine.connect() as conn:
        return {k: [tuple(r) for r in conn.execute(text(q))] for k, q in SNAPSHOT.items()}


@pytest.fixture
def fake():
    with FakeBuildkite(world(), {TOKEN: SCOPES}) as server:
        yield server


# -- pure pieces -------------------------------------------------------------------------------

def test_steps_and_hardware_are_named_as_both_vendors_name_them():
    shard = {"name": "mi325_4: Kernels Core Operation Test 2", "parallel_group_index": 1,
             "parallel_group_total": 3, "agent_query_rules": ["queue=amd_mi355_8"]}
    assert step_label(shard) == "Kernels Core Operation Test"
    # a number that is part of the step's name stays when the step is not sharded
    assert step_label({"name": "mi355_1: LoRA 2"}) == "LoRA 2"
    assert hardware_names(shard)[:2] == ["mi325_4", "amd_mi355_8"]  # the label wins
    assert hardware_names({"name": "V1 attention (2xH100)",
                           "agent_query_rules": ["queue=gpu_4_queue"]}) == \
        ["gpu_4_queue", "H100"]


def test_a_tail_is_complete_only_with_the_failures_it_counts():
    assert summary_complete("== 3 passed in 1.0s ==")
    assert not summary_complete("FAILED t.py::x - boom\n== 1 failed, 2 passed in 1.0s ==")
    assert summary_complete("== short test summary info ==\nFAILED t.py::x\n"
                            "== 1 failed, 2 passed in 1.0s ==")
    assert not summary_complete("collecting ... 40%")


def test_buildkite_logs_are_cleaned_and_shards_read_apart():
    """Eight interleaved `>>Shard N:` pytest processes with Buildkite timestamps: each
    shard's summary is its own session, and no failure is attributed twice."""
    log = pytest_log("tests/kernels/test_x.py", 80, ["test_a", "test_b", "test_c"], shards=8)
    result = parse(log)
    assert len(result.sessions) == 8
    assert sum(s.counts.get("passed", 0) for s in result.sessions) == 80
    assert sorted(t.name for t in result.tests) == ["test_a", "test_b", "test_c"]
    assert all(t.outcome == "failed" and t.message == "AssertionError: mismatch"
               for t in result.tests)
    plain = parse(b"[2026-05-18T09:00:00Z] \x1b_bk;t=1\x07== 2 passed in 1.0s ==\n")
    assert plain.sessions[0].counts == {"passed": 2}


# -- a sync ------------------------------------------------------------------------------------

def test_sync_stores_builds_jobs_attempts_hardware_and_results(engine, fake):
    sqlite_engine = engine  # both stores
    report = sync(sqlite_engine, fake)
    assert (report.builds_synced, report.builds_open, report.builds_failed) == (5, 1, 0)
    snap = snapshot(sqlite_engine)
    jobs = {(r[0], r[1], r[3]): r for r in snap["jobs"]}
    # the same step on both vendors is one suite; hardware from the label prefix, the
    # queue, or the label's parentheses
    amd = jobs[("8560", 1, "mi325_1: V1 e2e")]
    nv = jobs[("66630", 1, "V1 e2e (H100)")]
    assert amd[4] == nv[4] == "v1-e2e"
    assert (amd[6], amd[7], nv[6], nv[7]) == ("amd", "mi325x", "nvidia", "h100")
    assert amd[9] == nv[9] == "vllm"
    # shards of a parallel step are one suite; an unmapped queue is kept raw
    shards = [r for k, r in jobs.items() if k[0] == "66630" and "Kernels" in k[2]]
    assert {r[4] for r in shards} == {"kernels-core-operation-test"} and len(shards) == 2
    assert {r[8] for r in shards} == {"gpu_1_queue"}
    # soft fail, infrastructure kill and retry: every attempt kept, the final one in attempt 1
    quant = jobs[("8560", 1, "mi355_1: Quantization Test")]
    assert (quant[10], quant[13]) == ("failed", True)
    lost = jobs[("8560", 0, "mi325_1: LoRA Test")]
    final = jobs[("8560", 1, "mi325_1: LoRA Test")]
    assert (lost[10], lost[11], lost[12], lost[14]) == ("failed", -1, "agent_stop", final[2])
    assert (final[10], final[14]) == ("passed", "")
    # results: JUnit where a job uploaded it, the log otherwise; none for a job without
    # pytest output, which keeps only its state
    sums = {}
    for job_id, group, total, passed, failed in snap["summaries"]:
        sums.setdefault(job_id, [0, 0, 0])
        sums[job_id] = [a + b for a, b in zip(sums[job_id], (total, passed, failed))]
    assert sums[amd[2]] == [121, 120, 1]
    assert sums[jobs[("8560", 1, "mi325_1: Entrypoints Integration Test (API Server)")][2]] == \
        [3, 2, 1]
    assert sums[shards[0][2]] == [80, 80, 0]
    bench = jobs[("8560", 1, "mi325_1: Benchmarks")]
    assert bench[2] not in sums and bench[10] == "passed"
    failed = [r for r in snap["results"] if r[0] == amd[2]]
    assert [(r[1].split("::")[-1], r[2]) for r in failed] == [
        ("test_ngram_correctness[llama]", "failed")]
    # costs: one page per pipeline, one artifact list per build, a tail per log job
    assert report.cost["requests"] == 2 + 5 + report.artifacts + report.logs
    assert report.whole_logs == 0 and report.errors == [] and report.rejected == []
    ranges = {r.range for r in fake.log if r.path.endswith("/log")}
    assert ranges == {f"bytes=-{FAST.buildkite_log_tail_bytes}"}
    # the token went to the API only, never to the blob host
    assert fake.blob_log and not any(auth for _, auth in fake.blob_log)


def test_a_resync_with_nothing_new_costs_one_list_request_per_pipeline(sqlite_engine, fake):
    sync(sqlite_engine, fake)
    before = snapshot(sqlite_engine)
    again = sync(sqlite_engine, fake, since=None)
    assert again.cost["requests"] == len(PIPELINES)
    assert again.builds_synced == 0 and again.builds_open == 1
    assert snapshot(sqlite_engine) == before


def test_a_build_with_a_running_soft_fail_job_is_stored_once_it_finishes(sqlite_engine, fake):
    sync(sqlite_engine, fake)
    assert not [r for r in snapshot(sqlite_engine)["synced"] if r[1] == "8562"]
    build = fake.world.find(ORG, "amd-ci", 8562)
    slow = next(j for j in build.jobs if j.state == "running")
    slow.state, slow.finished_at = "failed", build.finished_at + timedelta(hours=3)
    slow.log = pytest_log("tests/slow/test_nightly.py", 5, ["test_slow"])
    report = sync(sqlite_engine, fake, since=None)
    assert report.builds_synced == 1
    snap = snapshot(sqlite_engine)
    assert [r[2] for r in snap["synced"] if r[1] == "8562"] == [len(
        [j for j in build.jobs if j.type == "script"])]
    assert any(r[3] == "mi355_1: Slow Nightly Soft Fail" and r[13] for r in snap["jobs"])


def test_a_job_retried_after_its_build_was_stored_is_stored_again_whole(engine, fake):
    sqlite_engine = engine  # both stores
    sync(sqlite_engine, fake)
    build = fake.world.find(ORG, "ci", 66632)
    job = next(j for j in build.jobs if j.name == "V1 e2e (H100)")
    fake.world.retry(build, job, log=pytest_log("tests/v1/e2e/test_spec_decode.py", 121, []))
    report = sync(sqlite_engine, fake, since=None)
    assert report.builds_synced == 1
    rows = [r for r in snapshot(sqlite_engine)["jobs"] if r[0] == "66632" and r[3] == job.name]
    assert sorted((r[1], r[14] != "") for r in rows) == [(0, True), (1, False)]
    # nothing doubled: the build's jobs appear once each
    ids = [r[2] for r in snapshot(sqlite_engine)["jobs"]]
    assert len(ids) == len(set(ids))


def test_a_tail_without_its_summary_reads_the_whole_log(sqlite_engine):
    w = World()
    b = nightly(w, "ci", 1, START, amd=False, commit="a" * 40)
    long = pytest_log("tests/t.py", 10, [f"test_{i}" for i in range(200)])
    w.job(b, "Long Failure List", "B200", state="failed", log=long)
    settings = Settings(backoff_s=0.01, buildkite_log_tail_bytes=2048)
    with FakeBuildkite(w, {TOKEN: SCOPES}) as fake:
        report = sync(sqlite_engine, fake, settings, pipelines=("ci",))
    assert report.whole_logs == 1
    failed = [r for r in snapshot(sqlite_engine)["results"] if r[2] == "failed"]
    assert len({r[1] for r in failed if r[1].startswith("tests.t::")}) == 200


# -- limits, faults, hostile input -------------------------------------------------------------

class Clock:
    """The fake's clock, advanced by the client's sleeps: waits cost no real time."""

    def __init__(self):
        self.now = 1_800_000_000.0
        self.slept = []

    def __call__(self):
        return self.now

    def sleep(self, s: float):
        self.slept.append(s)
        self.now += s


def test_the_sync_leaves_the_organisation_its_share_of_the_rate_limit(sqlite_engine):
    clock = Clock()
    with FakeBuildkite(world(), {TOKEN: SCOPES}, limit=20, clock=clock) as fake:
        report = sync(sqlite_engine, fake, sleep=clock.sleep)
        used = {}
        for r in fake.log:
            used.setdefault(r.status, 0)
            used[r.status] += 1
    assert report.builds_synced == 5 and report.cost["rate_waits"] >= 3
    assert 429 not in used  # it waited before spending the other half
    assert report.cost["requests"] > 20


def test_429_waits_for_the_reset_and_5xx_are_retried(sqlite_engine, tmp_path):
    reference = make_engine(tmp_path / "ref.db")
    with FakeBuildkite(world(), {TOKEN: SCOPES}) as fake:
        sync(reference, fake)
    clock = Clock()
    share = Settings(backoff_s=0.01, retries=8, buildkite_rate_share=1.0)
    with FakeBuildkite(world(), {TOKEN: SCOPES}, limit=15, clock=clock,
                       faults=Faults(error_rate=0.15, seed=3)) as fake:
        fake.windows[ORG] = (int(clock.now), 15)  # another tool spent this window
        report = sync(sqlite_engine, fake, share, sleep=clock.sleep)
        statuses = {r.status for r in fake.log}
    assert {429, 502} <= statuses
    assert report.cost["retries"] > 0 and report.cost["rate_waits"] > 0 and report.errors == []
    assert snapshot(sqlite_engine) == snapshot(reference)


def test_a_spent_budget_stops_cleanly_and_the_next_sync_resumes(sqlite_engine, tmp_path):
    reference = make_engine(tmp_path / "ref.db")
    with FakeBuildkite(world(), {TOKEN: SCOPES}) as fake:
        sync(reference, fake)
        rounds = 0
        while True:
            rounds += 1
            report = sync(sqlite_engine, fake, Settings(backoff_s=0.01, buildkite_max_requests=12))
            if not report.stopped:
                break
            assert "resumes" in report.stopped
            assert rounds < 10
    assert rounds > 1
    assert snapshot(sqlite_engine) == snapshot(reference)


def test_a_truncated_page_fails_its_pipeline_and_the_others_go_on(sqlite_engine):
    faults = Faults(truncate_paths=("/v2/organizations/vllm/pipelines/ci/builds",))
    with FakeBuildkite(world(), {TOKEN: SCOPES}, faults=faults) as fake:
        report = sync(sqlite_engine, fake)
    assert report.failed_pipelines == ["ci"]
    assert any("not JSON" in e for e in report.errors)
    assert report.builds_synced == 2  # amd-ci's finished nightlies


def test_hostile_builds_are_bounded_and_recorded(sqlite_engine):
    w = World()
    b = nightly(w, "ci", 1, START, amd=False, commit="b" * 40)
    w.job(b, "Binary Log", "B200", log=b"\xff\xfe\x00garbage\n== 2 passed in 1.0s ==\n")
    w.job(b, "Huge Log", "B200", log=b"x" * 300_000 + b"\n")
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("junit.xml", b"<" + b" " * 50_000_000)
    w.artifact(b, w.job(b, "Bomb", "B200"), "results.zip", bomb.getvalue())
    w.job(b, "One Job Too Many", "B200", log="== 1 passed in 1.0s ==\n")
    settings = Settings(backoff_s=0.01, buildkite_max_jobs=10, buildkite_max_log_bytes=100_000,
                        buildkite_log_tail_bytes=4096)
    with FakeBuildkite(w, {TOKEN: SCOPES}) as fake:
        report = sync(sqlite_engine, fake, settings, pipelines=("ci",))
    assert report.builds_synced == 1
    reasons = " | ".join(report.rejected)
    assert "build has 11 jobs; only the first 10 are stored" in reasons
    assert "zip bomb" in reasons
    assert "log is 300001 bytes, over the 100000-byte limit" in reasons
    errors = snapshot(sqlite_engine)["errors"]
    assert len(errors) == len(report.rejected)
    assert all(path.startswith("vllm/ci/builds/1") for path, _ in errors)


def test_the_token_reaches_no_output_store_or_error(tmp_path, fake):
    db = tmp_path / "s.db"
    engine = make_engine(db)
    report = sync(engine, fake)
    engine.dispose()
    assert TOKEN not in json.dumps(report.as_dict())
    for f in tmp_path.iterdir():
        assert TOKEN.encode() not in f.read_bytes()
    with FakeBuildkite(world(), {TOKEN: {"read_builds"}}) as narrow:
        client = Client(FAST, Secret(TOKEN), api_url=narrow.url)
        with pytest.raises(BuildkiteError) as exc:
            list(client.pages(f"/organizations/{ORG}/pipelines/ci/builds/66630/artifacts"))
    assert "403" in str(exc.value) and "read_artifacts" in str(exc.value)
    assert TOKEN not in str(exc.value)


# -- the command -------------------------------------------------------------------------------

def _env(token: str | None = TOKEN) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PARITY_", "BUILDKITE"))}
    if token:
        env["BUILDKITE_API_TOKEN"] = token
    env["PARITY_GITHUB_BACKOFF_S"] = "0.01"
    return env


def _cli(fake_url: str, db: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "parity", "--db", str(db), "collect", "buildkite", "--org", ORG,
            "--pipeline", "ci", "--pipeline", "amd-ci", "--since", "2026-11-01",
            "--api-url", fake_url, *extra]


def test_the_command_reports_costs_and_refuses_clearly(tmp_path, fake):
    db = tmp_path / "c.db"
    out = subprocess.run(_cli(fake.url, db, "--json"), env=_env(), capture_output=True,
                         text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["builds_synced"] == 5 and report["cost"]["requests"] > 0
    missing = subprocess.run(_cli(fake.url, db), env=_env(None), capture_output=True, text=True,
                             cwd=ROOT, timeout=60)
    assert missing.returncode == 2 and "BUILDKITE_API_TOKEN" in missing.stderr
    wrong = subprocess.run(_cli(fake.url, db), env=_env("bkua_wrong"), capture_output=True,
                           text=True, cwd=ROOT, timeout=60)
    assert wrong.returncode == 1 and "401" in wrong.stderr and "Traceback" not in wrong.stderr
    assert "bkua_wrong" not in wrong.stderr + wrong.stdout


def test_a_sync_killed_midway_and_restarted_gives_the_same_store(tmp_path, fake):
    reference = make_engine(tmp_path / "ref.db")
    sync(reference, fake)
    db = tmp_path / "killed.db"
    make_engine(db).dispose()
    release = fake.hold("/builds/8561/jobs/")
    proc = subprocess.Popen(_cli(fake.url, db), env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT)
    assert fake.held.wait(60), "the sync never reached the held build"
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    release.set()
    fake.holds.clear()
    rerun = subprocess.run(_cli(fake.url, db), env=_env(), capture_output=True, text=True,
                           cwd=ROOT, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    engine = make_engine(db)
    assert snapshot(engine) == snapshot(reference)


# -- the fake itself ---------------------------------------------------------------------------

# fields Buildkite's REST documentation gives builds, jobs and artifacts (builds.md, jobs.md,
# artifacts.md; summarised in ../shared/docs/buildkite-alerts-scale.md §1.1)
BUILD_FIELDS = {"id", "number", "state", "blocked", "commit", "branch", "message", "source",
                "created_at", "scheduled_at", "started_at", "failing_at", "finished_at",
                "pull_request", "rebuilt_from", "meta_data", "web_url", "jobs"}
JOB_FIELDS = {"id", "type", "name", "step_key", "group_key", "step", "agent_query_rules",
              "cluster_queue_id", "agent", "state", "soft_failed", "exit_status", "signal",
              "signal_reason", "created_at", "runnable_at", "started_at", "finished_at",
              "retried", "retried_in_job_id", "retries_count", "retry_source", "retry_type",
              "parallel_group_index", "parallel_group_total", "matrix", "log_url",
              "raw_log_url", "artifacts_url", "web_url"}
ARTIFACT_FIELDS = {"id", "job_id", "url", "download_url", "state", "path", "dirname",
                   "filename", "mime_type", "file_size", "sha1sum"}


def test_the_fake_answers_with_buildkites_documented_shapes(fake):
    import requests

    s = requests.Session()
    s.headers["Authorization"] = f"Bearer {TOKEN}"
    base = f"{fake.url}/organizations/{ORG}/pipelines/amd-ci/builds"
    first = s.get(base, params={"per_page": 1, "include_retried_jobs": "true"})
    assert first.status_code == 200 and 'rel="next"' in first.headers["Link"]
    assert "include_retried_jobs=true" in first.headers["Link"]  # filters repeated
    build = first.json()[0]
    assert BUILD_FIELDS <= set(build) and all(JOB_FIELDS <= set(j) for j in build["jobs"])
    # retried jobs only when asked for; the jobs endpoint is cursor-paginated
    plain = s.get(base, params={"per_page": 1}).json()[0]
    assert len(plain["jobs"]) == len(build["jobs"]) - 1
    jobs = s.get(f"{base}/{build['number']}/jobs", params={"per_page": 4}).json()
    assert len(jobs["items"]) == 4 and "after=" in jobs["links"]["next"]
    arts = s.get(f"{base}/{build['number']}/artifacts").json()
    assert arts and ARTIFACT_FIELDS <= set(arts[0])
    # logs: a suffix range is 206 with Content-Range; the download is a 302 to another host
    job = next(j for j in build["jobs"] if "V1 e2e" in j["name"])
    tail = s.get(job["log_url"], headers={"Accept": "text/plain", "Range": "bytes=-100"})
    assert tail.status_code == 206 and len(tail.content) == 100
    assert tail.headers["Content-Range"].startswith("bytes ")
    moved = s.get(arts[0]["download_url"], allow_redirects=False)
    assert moved.status_code == 302 and moved.headers["Location"].startswith(fake.blob_url)
    # deep unfiltered listings are refused as Buildkite refuses them; no token is a 401
    assert s.get(base, params={"page": 51}).status_code == 400
    assert requests.get(base).status_code == 401
    assert {"RateLimit-Remaining", "RateLimit-Limit", "RateLimit-Reset"} <= set(first.headers)
