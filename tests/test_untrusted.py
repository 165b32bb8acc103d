"""Runs that are not the project's own CI (a fork's pull request, a pull_request_target or
workflow_run chain, a branch the source does not follow) are marked at sync and left out of
every parity view unless asked for."""
from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import text

from parity.collectors.github import Client
from parity.collectors.settings import Secret, Settings
from parity.collectors.sync import GitHubSync, SyncOptions
from parity.dashboard import frames
from tests.fakegithub import FakeGitHub, World
from tests.fakegithub.scenario import nightly

REPO = "vllm-project/vllm"
TOKEN = "ghp_fakeTOKENforUntrustedTests_012345678"
END = datetime(2026, 11, 20, 1, 0)


def test_forks_and_chains_are_marked_and_left_out(sqlite_engine):
    w = World(now=END + timedelta(days=1))
    nightly(w, REPO, END - timedelta(days=1))
    fork = nightly(w, REPO, END - timedelta(hours=12))
    fork.event, fork.head_repo = "pull_request", "someone/vllm"
    chain = nightly(w, REPO, END - timedelta(hours=6))
    chain.event = "pull_request_target"
    with FakeGitHub(w, {TOKEN: 1}) as fake:
        client = Client(Settings(backoff_s=0.01), api_url=fake.base_url, token=Secret(TOKEN))
        GitHubSync(sqlite_engine, client).run(SyncOptions(repo=REPO, since=END - timedelta(days=3)))
    with sqlite_engine.connect() as conn:
        marks = {r[0]: r[1] for r in conn.execute(text(
            "SELECT run_id, untrusted FROM ci_run WHERE attempt = 1"))}
    assert marks[str(fork.id)] == "fork: someone/vllm"
    assert marks[str(chain.id)] == "pull_request_target chain"
    assert sum(1 for m in marks.values() if m == "") == 1
    left_out = frames.untrusted_runs(sqlite_engine)
    assert set(left_out["untrusted"]) == {"fork: someone/vllm", "pull_request_target chain"}
    # the views see the one trusted nightly; asked, they see all three
    card = frames.scorecard(sqlite_engine)
    everything = frames.scorecard(sqlite_engine, include_untrusted=True)
    assert card["run_at"].max() < everything["run_at"].max()
    assert card["run_at"].max() == END - timedelta(days=1)
    # a config's latest run is its latest trusted one: a newer untrusted run neither shows
    # nor hides the config (it once did: the latest was found over every run)
    front = frames.pareto(sqlite_engine)
    assert len(front) and set(front["run_at"]) == {END - timedelta(days=1)}
    assert set(frames.pareto(sqlite_engine, include_untrusted=True)["run_at"]) \
        == {END - timedelta(hours=6)}
    # nested views follow the caller's choice
    head_all = frames.headline(sqlite_engine, include_untrusted=True)
    head = frames.headline(sqlite_engine)
    assert len(head_all) >= len(head)
