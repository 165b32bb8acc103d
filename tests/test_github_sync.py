"""The GitHub collector end to end, against the fake GitHub (a real HTTP server on loopback):
what a sync stores, what it costs, and that faults, kills and rate limits lose nothing."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import text

from parity.collectors.github import Client, GitHubError
from parity.collectors.settings import Settings
from parity.collectors.sync import GitHubSync, SyncOptions
from parity.db.engine import make_engine
from tests.fakegithub import FakeGitHub, Faults, World
from tests.fakegithub.scenario import AMD_LABEL, bulk, history, nightly

ROOT = Path(__file__).resolve().parent.parent
REPO = "vllm-project/vllm"
TOKEN = "ghp_fakeTOKENfor_tests_0123456789abcdef"
END = datetime(2026, 11, 20, 1, 0)
SINCE = datetime(2026, 11, 1)
FAST = Settings(backoff_s=0.01, secondary_wait_s=0.05, retries=8)


def world() -> World:
    """Three nightly runs (one with an expired artifact, one re-run) and one in progress.
    Ids are deterministic, so two worlds built here are the same."""
    w = World(now=END)
    history(w, REPO, END)
    return w


def sync(engine, fake: FakeGitHub, settings: Settings = FAST, token: str | None = TOKEN,
         **options):
    client = Client(settings, api_url=fake.base_url,
                    token=None if token is None else Settings.from_env({"GITHUB_TOKEN": token}).token)
    opts = SyncOptions(repo=options.pop("repo", REPO), since=options.pop("since", SINCE), **options)
    return GitHubSync(engine, client, settings).run(opts)


SNAPSHOT = {
    "runs": "SELECT run_id, attempt, workflow, head_sha, branch, event, conclusion, created_at, "
            "started_at, completed_at FROM ci_run ORDER BY 1, 2",  # urls name the server's port
    "jobs": "SELECT r.run_id, r.attempt, j.job_id, j.name, j.suite, j.runner_labels, j.runner_name, "
            "j.runner_group, h.vendor, h.sku, f.name, f.version, f.rocm_version, j.conclusion, "
            "j.created_at, j.started_at, j.completed_at FROM ci_job j JOIN ci_run r ON r.id = j.run_pk "
            "LEFT JOIN hardware h ON h.id = j.hardware_id LEFT JOIN framework f ON f.id = j.framework_id "
            "ORDER BY 3",
    "files": "SELECT j.job_id, a.name, a.path, a.sha256, a.size_bytes, a.format, a.records "
             "FROM artifact a JOIN ci_job j ON j.id = a.job_pk ORDER BY 1, 3",
    "archives": "SELECT r.run_id, c.artifact_id, c.name, c.status, c.mapped_by, c.files, c.sha256, "
                "c.digest, j.job_id FROM ci_artifact c JOIN ci_run r ON r.id = c.run_pk "
                "LEFT JOIN ci_job j ON j.id = c.job_pk ORDER BY 2",
    "results": "SELECT j.job_id, t.test_key, t.parity_key, x.outcome, x.message, x.skip_category "
               "FROM test_result x JOIN ci_job j ON j.id = x.job_pk JOIN test_case t ON t.id = x.test_pk "
               "ORDER BY 1, 2",
    "summaries": "SELECT j.job_id, s.group_name, s.total, s.passed, s.failed, s.skipped, s.vendor_skipped "
                 "FROM test_summary s JOIN ci_job j ON j.id = s.job_pk ORDER BY 1, 2",
    "benchmarks": "SELECT j.job_id, b.metric, b.value, b.concurrency FROM benchmark_metric b "
                  "JOIN ci_job j ON j.id = b.job_pk ORDER BY 1, 2",
    "accuracy": "SELECT j.job_id, a.task, a.metric, a.value, a.n FROM accuracy_metric a "
                "JOIN ci_job j ON j.id = a.job_pk ORDER BY 1, 2, 3",
    "synced": "SELECT repository, run_id, attempt, jobs, artifacts FROM synced_run ORDER BY 2",
    "errors": "SELECT path, reason FROM ingest_error ORDER BY 1",
}


def snapshot(engine) -> dict[str, list[tuple]]:
    """The store by natural keys: surrogate ids and ingest times left out."""
    with engine.connect() as conn:
        return {name: [tuple(str(v) if isinstance(v, datetime) else v for v in row)
                       for row in conn.execute(text(sql))] for name, sql in SNAPSHOT.items()}


@pytest.fixture
def fake():
    with FakeGitHub(world(), {TOKEN: 4242}) as server:
        yield server


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict:
    """The store an uninterrupted, fault-free sync of `world()` gives."""
    engine = make_engine(tmp_path_factory.mktemp("ref") / "ref.db")
    with FakeGitHub(world(), {TOKEN: 4242}) as server:
        sync(engine, server)
    snap = snapshot(engine)
    engine.dispose()
    return snap


def test_sync_stores_runs_attempts_jobs_hardware_artifacts_and_logs(engine):
    with FakeGitHub(world(), {TOKEN: 4242}) as fake:
        report = sync(engine, fake)
        blob_log = list(fake.blob_log)
    assert (report.runs_synced, report.runs_in_progress, report.runs_failed) == (3, 1, 0)
    assert report.artifacts_expired == 1 and not report.rejected and not report.errors
    snap = snapshot(engine)
    # the re-run is two attempts of one run; only the latest carries the run's conclusion
    attempts = [(r[0], r[1], r[6]) for r in snap["runs"]]
    rerun = max(r[0] for r in attempts)
    assert (rerun, 1, "") in attempts and (rerun, 2, "success") in attempts
    jobs = {r[2]: r for r in snap["jobs"]}
    kernels_amd = [r for r in jobs.values() if r[3] == "Kernels Test (mi355_1)"]
    assert {r[9] for r in kernels_amd} == {"mi355x"}  # from the runner label
    assert {r[9] for r in jobs.values() if "(h200)" in r[3]} == {"h200"}
    assert all(r[10] == "vllm" for r in jobs.values())  # manifest, else the repository name
    # queue time = started - created, from the job payload
    first = min(kernels_amd, key=lambda r: r[2])
    queue = datetime.fromisoformat(first[15]) - datetime.fromisoformat(first[14])
    assert queue == timedelta(seconds=300)
    # the manifest's versions reach the framework row
    assert (first[11], first[12]) == ("0.11.1", "7.0.2")
    # every result format arrived, with the artifact name as provenance
    formats = {r[5] for r in snap["files"]}
    assert formats == {"junit", "serving-bench", "lm-eval", "pytest-log"}
    archives = snap["archives"]
    assert {r[4] for r in archives} == {"manifest", "job-id", "label"}
    expired = [r for r in archives if r[3] == "expired"]
    assert len(expired) == 1 and expired[0][2] == "benchmark-mi355_1"
    assert all(r[6] and r[7].startswith("sha256:") for r in archives if r[3] == "ingested")
    # the job that uploaded nothing has its pytest summary from the log
    logs = [r for r in snap["files"] if r[5] == "pytest-log"]
    assert logs and all(jobs[r[0]][3] == "Entrypoints Test (mi355_1)" for r in logs)
    log_fails = [r for r in snap["results"] if r[0] == logs[0][0] and r[3] == "failed"]
    assert len(log_fails) == 2
    # the benchmark artifact named a label three jobs share: its files go to the run, on
    # the hardware the label names
    bench = [r for r in snap["jobs"] if r[2].startswith("artifact:benchmark")]
    assert bench and {r[9] for r in bench} == {"mi355x"}
    assert {r[1] for r in snap["benchmarks"]} >= {"output_throughput", "median_ttft_ms"}
    assert [r[3] for r in snap["accuracy"]] == [0.94] * 3
    # a vendor-gated skip is classified
    assert any(r[5] == "vendor_amd" for r in snap["results"])
    # downloads came from the blob host, never with the token
    assert blob_log and not [x for x in blob_log if x.token]


def test_second_sync_costs_zero_points_and_a_finished_run_is_picked_up(sqlite_engine, fake):
    sync(sqlite_engine, fake)
    before = fake.points(TOKEN)
    again = sync(sqlite_engine, fake)
    assert fake.points(TOKEN) == before  # every list page answered 304
    assert again.cost["points"] == 0 and again.cost["not_modified"] >= 1
    assert again.runs_synced == 0
    # the run that was in progress finishes: its page changes, and only it is fetched
    pending = next(r for r in fake.world.runs.values() if r.status != "completed")
    fake.world.finish(pending)
    third = sync(sqlite_engine, fake)
    assert third.runs_synced == 1 and third.runs_in_progress == 0
    arts = len(fake.world.run_artifacts(pending.id))
    # one list page, the jobs and artifacts lists, one download per artifact, logs for
    # the jobs without results
    assert third.cost["points"] == 1 + 2 + arts + third.logs
    assert sync(sqlite_engine, fake).cost["points"] == 0


def test_a_sync_killed_midway_and_restarted_gives_the_same_store(tmp_path, reference):
    db = tmp_path / "killed.db"
    with FakeGitHub(world(), {TOKEN: 4242}) as fake:
        second = sorted(fake.world.runs)[1]
        art = [a for a in fake.world.run_artifacts(second) if not a.expired][1]
        hold = fake.hold(f"/artifacts/{art.id}/zip")  # the middle of the second run
        proc = subprocess.Popen(_cli(fake, db), env=_env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        assert hold.reached.wait(60), proc.communicate(timeout=5)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        hold.release.set()
        fake.holds.clear()
        engine = make_engine(db)
        partial = snapshot(engine)
        assert 0 < len(partial["synced"]) < len(reference["synced"])
        rerun = subprocess.run(_cli(fake, db), env=_env(), capture_output=True, text=True,
                               timeout=120)
        assert rerun.returncode == 0, rerun.stderr
        assert snapshot(engine) == reference
        engine.dispose()


def test_injected_5xx_secondary_limits_and_truncated_downloads_still_end_complete(
        sqlite_engine, reference):
    faults = Faults(error_rate=0.05, secondary_rate=0.05, accepted_rate=0.02,
                    truncate_rate=0.05, retry_after=0, seed=5)  # a seed that hits every kind
    with FakeGitHub(world(), {TOKEN: 4242}, faults=faults) as fake:
        report = sync(sqlite_engine, fake)
        statuses = {x.status for x in fake.log}
        truncated = fake.truncated
    assert report.runs_failed == 0 and report.cost["retries"] >= 4
    assert {500, 502} <= statuses and {403, 202} <= statuses and truncated
    assert snapshot(sqlite_engine) == reference


def test_secondary_limit_without_retry_after_backs_off_then_succeeds(sqlite_engine, reference):
    waits: list[float] = []
    with FakeGitHub(world(), {TOKEN: 4242}, faults=Faults(retry_after=None, queue=[403, 429])) as fake:
        client = Client(FAST, api_url=fake.base_url, token=Settings.from_env(
            {"GITHUB_TOKEN": TOKEN}).token, sleep=waits.append)
        GitHubSync(sqlite_engine, client).run(SyncOptions(repo=REPO, since=SINCE))
    assert waits[:2] == [FAST.secondary_wait_s, FAST.secondary_wait_s * 2]
    assert snapshot(sqlite_engine) == reference


def test_primary_limit_stops_cleanly_and_the_next_sync_resumes(sqlite_engine, reference):
    with FakeGitHub(world(), {TOKEN: 4242}, limit=12) as fake:
        report = sync(sqlite_engine, fake)
        assert report.stopped and "resets at" in report.stopped
        assert 0 < len(snapshot(sqlite_engine)["synced"]) < len(reference["synced"])
        fake.limit = 5000  # the hour turned
        assert sync(sqlite_engine, fake).stopped is None
    assert snapshot(sqlite_engine) == reference


def test_wait_flag_sleeps_until_the_reset(sqlite_engine, reference):
    with FakeGitHub(world(), {TOKEN: 4242}, limit=12) as fake:
        def sleep(seconds: float) -> None:  # the reset arrives while we wait
            fake.used.clear()
        client = Client(FAST, api_url=fake.base_url, wait=True, sleep=sleep,
                        token=Settings.from_env({"GITHUB_TOKEN": TOKEN}).token)
        report = GitHubSync(sqlite_engine, client).run(SyncOptions(repo=REPO, since=SINCE))
    assert report.stopped is None
    assert snapshot(sqlite_engine) == reference


def test_planted_token_is_found_nowhere(tmp_path, fake):
    db = tmp_path / "t.db"
    out = subprocess.run(_cli(fake, db) + ["--json", "--verbose"], env=_env(), capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["runs_synced"] == 3
    bad = subprocess.run(_cli(fake, db, repo="nobody/nothing"), env=_env(), capture_output=True,
                         text=True, timeout=60)  # an error path, with a message
    assert bad.returncode != 0 and "404" in bad.stderr + bad.stdout
    wrong = subprocess.run(_cli(fake, db), env=_env(TOKEN + "x"), capture_output=True,
                           text=True, timeout=60)  # bad credentials
    assert "401" in wrong.stderr + wrong.stdout
    texts = [out.stdout, out.stderr, bad.stdout, bad.stderr, wrong.stdout, wrong.stderr]
    assert not [t for t in texts if TOKEN in t]
    for f in tmp_path.iterdir():
        assert TOKEN.encode() not in f.read_bytes(), f
    assert TOKEN not in repr(Settings.from_env({"GITHUB_TOKEN": TOKEN}))


def test_the_token_stays_out_of_retry_and_error_lines(tmp_path):
    """The retry and failure lines are only written under faults: 5xx answers, secondary
    limits and timeouts are injected, the lines are checked to be there, and the token is
    in none of them (nor in the store)."""
    db = tmp_path / "t.db"
    faults = Faults(error_rate=0.3, secondary_rate=0.1, retry_after=0, seed=7, queue=[502])
    with FakeGitHub(world(), {TOKEN: 4242}, faults=faults) as fake:
        flaky = subprocess.run(_cli(fake, db) + ["--verbose"], env=_env(), capture_output=True,
                               text=True, timeout=120)
    with FakeGitHub(world(), {TOKEN: 4242}, faults=Faults(slow_s=0.5)) as fake:
        env = _env() | {"PARITY_GITHUB_TIMEOUT_S": "0.1", "PARITY_GITHUB_RETRIES": "1"}
        slow = subprocess.run(_cli(fake, tmp_path / "slow.db") + ["--verbose"], env=env,
                              capture_output=True, text=True, timeout=120)
    logs = flaky.stdout + flaky.stderr
    assert flaky.returncode == 0, logs
    assert "retry   HTTP 50" in logs and "secondary rate limit" in logs
    timed_out = slow.stdout + slow.stderr
    assert slow.returncode != 0 and "Timeout" in timed_out
    assert TOKEN not in logs and TOKEN not in timed_out
    assert "Authorization" not in logs + timed_out  # no request headers at all
    for f in tmp_path.iterdir():
        assert TOKEN.encode() not in f.read_bytes(), f


def test_a_run_that_failed_is_synced_on_the_next_round(sqlite_engine, reference):
    """A run whose sync fails keeps its list page from being marked as handled, so the next
    sync lists the page again (no 304) and stores the run."""
    once = replace(FAST, retries=0)
    # the list page passes; the first run's next request answers 500, with no retry left
    with FakeGitHub(world(), {TOKEN: 4242}, faults=Faults(queue=[None, 500])) as fake:
        first = sync(sqlite_engine, fake, settings=once)
        assert (first.runs_synced, first.runs_failed) == (2, 1)
        assert first.errors and "500" in first.errors[0]
        fake.faults.queue.clear()
        second = sync(sqlite_engine, fake)
    assert (second.runs_synced, second.runs_already, second.runs_failed) == (1, 2, 0)
    got = snapshot(sqlite_engine)  # as if nothing had failed (stored in another order)
    assert {k: sorted(v, key=repr) for k, v in got.items()} == \
        {k: sorted(v, key=repr) for k, v in reference.items()}


def test_run_lists_past_the_1000_cap_are_split_by_date(sqlite_engine):
    w = World(now=END)
    for i in range(1050):
        w.add_run("pytorch/pytorch", created_at=END - timedelta(minutes=10 * i))
    with FakeGitHub(w, {TOKEN: 1}) as fake:
        report = sync(sqlite_engine, fake, repo="pytorch/pytorch",
                      since=END - timedelta(days=8), settings=replace(FAST, tail_runs=5000))
    assert report.runs_synced == 1050 and report.runs_listed == 1050
    # two lists per run, and the list pages: 11 at least, plus the first page of each
    # window that had to be halved
    pages = report.cost["points"] - 2 * 1050
    assert 11 <= pages <= 11 + 6


def test_workflow_branch_filters_and_an_enterprise_prefix(sqlite_engine):
    w = World(now=END)
    nightly(w, REPO, END, workflow="amd.yml")
    nightly(w, REPO, END + timedelta(hours=1), workflow="other.yml")
    feature = nightly(w, REPO, END + timedelta(hours=2), workflow="amd.yml")
    feature.branch = "feature"
    with FakeGitHub(w, {TOKEN: 1}, prefix="/api/v3") as fake:
        report = sync(sqlite_engine, fake, workflows=("amd.yml",), branch="main")
    assert report.runs_synced == 1
    with sqlite_engine.connect() as conn:
        assert conn.execute(text("SELECT workflow, branch FROM ci_run")).all() == [
            (".github/workflows/amd.yml", "main")]


def test_public_repository_without_a_token(sqlite_engine, fake):
    report = sync(sqlite_engine, fake, token=None)
    assert report.runs_synced == 3
    assert fake.points(None) == report.cost["points"] and report.cost["rate_limit"] == 60


def test_client_refuses_other_hosts_and_names_the_reason(fake):
    client = Client(FAST, api_url=fake.base_url)
    with pytest.raises(GitHubError, match="another host"):
        client.request("GET", "http://example.invalid/repos")
    with pytest.raises(GitHubError, match="404"):
        client.request("GET", "/repos/nobody/nothing/actions/runs")


def test_collect_runners_snapshots_the_self_hosted_fleet(sqlite_engine, fake):
    from parity.collectors.fleet import collect_runners

    w = fake.world
    w.add_runner(REPO, "mi355-amds_06", [AMD_LABEL], busy=True)
    w.add_runner(REPO, "mi355-amds_07", [AMD_LABEL], status="offline")
    w.add_runner(REPO, "h200-node-3", ["h200-1gpu"])
    w.add_runner("org:ROCm", "gfx942-runner-1", ["linux.rocm.gpu.gfx942.1"])
    hosted = w.add_runner("org:ROCm", "ubuntu-22.04-16core_abc", [])
    hosted.labels = []  # GitHub-hosted larger runners carry no self-hosted label
    client = Client(FAST, api_url=fake.base_url, token=Settings.from_env({"GITHUB_TOKEN": TOKEN}).token)
    at = datetime(2026, 11, 20, 12)
    rep = collect_runners(sqlite_engine, client, repo=REPO, seen_at=at)
    assert (rep.runners, rep.online, rep.busy, rep.offline) == (3, 1, 1, 1)
    assert rep.by_hardware == {"mi355x": 2, "h200": 1}
    collect_runners(sqlite_engine, client, repo=REPO, seen_at=at)  # the same moment again
    org = collect_runners(sqlite_engine, client, org="ROCm", seen_at=at)
    assert (org.runners, org.hosted_skipped, org.by_hardware) == (1, 1, {"mi300x": 1})
    with sqlite_engine.connect() as conn:
        rows = conn.execute(text("SELECT scope, name, status, busy FROM runner_snapshot ORDER BY 2")).all()
    assert len(rows) == 4 and ("vllm-project/vllm", "mi355-amds_06", "online", 1) in rows


def _cli(fake: FakeGitHub, db: Path, repo: str = REPO) -> list[str]:
    return [sys.executable, "-m", "parity", "--db", str(db), "collect", "github", "--repo", repo,
            "--api-url", fake.base_url, "--since", SINCE.date().isoformat()]


def _env(token: str = TOKEN) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PARITY_", "GITHUB_", "GH_"))}
    env.update(GITHUB_TOKEN=token, PARITY_GITHUB_BACKOFF_S="0.01", PYTHONPATH=str(ROOT))
    return env


def test_hostile_and_oversized_artifacts_are_recorded_and_the_run_still_lands(sqlite_engine):
    from tests.fakegithub import zip_bytes

    w = World(now=END)
    run = nightly(w, REPO, END)
    w.add_artifact(run, "evil", {"../../etc/passwd.xml": "<testsuite/>",
                                 "results/broken.xml": "<testsuite><testcase name='x'>",
                                 "results/ok.xml": "<testsuite><testcase classname='t' name='ok'/></testsuite>"})
    w.add_artifact(run, "not-a-zip", data=b"PK\x03\x04 this is not really a zip archive")
    w.add_artifact(run, "bad-manifest", {"parity-manifest.json": "{not json",
                                         "junit.xml": "<testsuite><testcase classname='t' name='m'/></testsuite>"})
    import random
    big = w.add_artifact(run, "huge", data=zip_bytes({"x.bin": random.Random(0).randbytes(200_000)}))
    settings = replace(FAST, max_download_bytes=len(big.data) - 1)
    with FakeGitHub(w, {TOKEN: 1}) as fake:
        report = sync(sqlite_engine, fake, settings=settings)
    assert report.runs_synced == 1 and not report.errors
    reasons = "\n".join(report.rejected)
    assert "path traversal" in reasons and "broken.xml" in reasons
    assert "unreadable zip archive" in reasons and "not valid JSON" in reasons
    assert all("\n" not in line for line in report.rejected)
    snap = snapshot(sqlite_engine)
    status = {r[2]: r[3] for r in snap["archives"]}
    assert status["not-a-zip"] == "rejected" and status["huge"] == "too_large"
    assert status["evil"] == "ingested"  # ok.xml still landed
    assert len(snap["errors"]) == 4 and all(REPO in path for path, _ in snap["errors"])


def test_the_tail_moves_forward_and_stays_free_to_resync(sqlite_engine, fake):
    settings = replace(FAST, tail_runs=2)
    first = sync(sqlite_engine, fake, settings=settings)
    assert first.runs_synced == 3
    with sqlite_engine.connect() as conn:
        (start,) = conn.execute(text("SELECT tail_start FROM sync_checkpoint")).one()
    pending = next(r for r in fake.world.runs.values() if r.status != "completed")
    assert str(start).startswith(str(pending.created_at)[:10])  # held back by the open run
    assert sync(sqlite_engine, fake, settings=settings).cost["points"] == 0
    fake.world.finish(pending)
    later = nightly(fake.world, REPO, END + timedelta(days=1))
    third = sync(sqlite_engine, fake, settings=settings)
    assert third.runs_synced == 2 and {later.id, pending.id} <= {
        int(r[1]) for r in snapshot(sqlite_engine)["synced"]}


def test_an_earlier_since_backfills_and_until_bounds_a_one_off_sync(sqlite_engine, fake):
    runs = sorted(fake.world.runs.values(), key=lambda r: r.created_at)
    mid = runs[1].created_at
    first = sync(sqlite_engine, fake, since=mid)
    assert first.runs_synced == 2  # the second and the re-run; the fourth is in progress
    back = sync(sqlite_engine, fake, since=SINCE)
    assert back.runs_synced == 1 and back.runs_already == 0
    bounded = sync(sqlite_engine, fake, since=SINCE, until=mid)
    # the same window as the backfill: its page answers 304
    assert bounded.runs_synced == 0 and bounded.cost["points"] == 0
    other = sync(sqlite_engine, fake, since=SINCE, until=mid + timedelta(seconds=1))
    assert other.runs_listed == 2 and other.runs_already == 2 and other.runs_synced == 0
    with sqlite_engine.connect() as conn:
        (covered,) = conn.execute(text("SELECT covered_from FROM sync_checkpoint")).one()
    assert str(covered).startswith("2026-11-01")


def test_progress_is_a_bar_on_a_terminal_and_lines_otherwise():
    import io

    from parity.collectors.sync import Progress

    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty, plain = Tty(), io.StringIO()
    for stream in (tty, plain):
        p = Progress(stream)
        p.add_total(4)
        p.step("synced run 1")
        p.step("synced run 2")
        p.close()
    assert "\r[" in tty.getvalue() and "2/4 runs" in tty.getvalue()
    assert plain.getvalue() == "synced run 1\nsynced run 2\n"


def test_token_sources(tmp_path):
    from parity.collectors.settings import read_token

    f = tmp_path / "token"
    f.write_text(TOKEN + "\n")
    assert read_token({}, str(f)).reveal() == TOKEN
    assert read_token({"GH_TOKEN": "b"}).reveal() == "b"
    assert read_token({"GITHUB_TOKEN": "a", "GH_TOKEN": "b"}).reveal() == "a"
    assert read_token({}) is None
    assert TOKEN not in f"{read_token({}, str(f))!r} {read_token({}, str(f))}"
