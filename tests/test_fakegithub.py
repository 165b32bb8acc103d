"""The fake GitHub is only useful if it behaves like the real one: its payloads carry every
field of GitHub's official examples, and a client we did not write (PyGithub) works
against it unchanged: pagination, `totalCount`, followed payload URLs, retries."""
from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
import requests

from tests.fakegithub import FakeGitHub, Faults, World
from tests.fakegithub.scenario import history
from tests.samples import shared

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT.parent / "shared" / "fixtures" / "github-api"
REPO = "vllm-project/vllm"
TOKEN = "ghp_conformance"


@pytest.fixture
def fake():
    w = World()
    history(w, REPO, datetime(2026, 11, 20, 1))
    w.add_runner(REPO, "mi355-amds_06", ["mi355_1"])
    with FakeGitHub(w, {TOKEN: 7}) as server:
        yield server


@pytest.fixture
def examples() -> Path:
    return shared(EXAMPLES, "GitHub's examples live beside the checkout")


def _get(fake, path, **params):
    return requests.get(fake.base_url + path, params=params,
                        headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)


@pytest.mark.parametrize("example, path, key", [
    ("workflow-run.json", "/repos/{repo}/actions/runs", "workflow_runs"),
    ("job.json", "/repos/{repo}/actions/runs/{run}/jobs", "jobs"),
    ("artifact.json", "/repos/{repo}/actions/runs/{run}/artifacts", "artifacts"),
    ("runner.json", "/repos/{repo}/actions/runners", "runners"),
])
def test_payloads_carry_every_field_of_the_official_examples(fake, examples, example, path, key):
    official = json.loads((examples / example).read_text())
    run = min(fake.world.runs)
    item = _get(fake, path.format(repo=REPO, run=run)).json()[key][0]
    missing = set(official) - set(item)
    assert not missing, f"{example}: the fake leaves out {sorted(missing)}"
    for field, value in official.items():  # same JSON types (null aside)
        if value is not None and item[field] is not None:
            assert type(item[field]) is type(value) or {type(item[field]), type(value)} <= {int, float}, field
    urls = [v for k, v in item.items() if isinstance(v, str) and k.endswith("url")]
    assert all(u.startswith(fake.base_url) for u in urls) and (urls or key == "runners")


def test_list_envelopes_match_the_official_examples(fake, examples):
    for example, path, key in (("workflow-runs.json", "/repos/{repo}/actions/runs", "workflow_runs"),
                               ("jobs.json", "/repos/{repo}/actions/runs/{run}/jobs", "jobs"),
                               ("artifacts.json", "/repos/{repo}/actions/runs/{run}/artifacts", "artifacts"),
                               ("runners.json", "/repos/{repo}/actions/runners", "runners")):
        official = json.loads((examples / example).read_text())
        body = _get(fake, path.format(repo=REPO, run=min(fake.world.runs))).json()
        assert set(body) == set(official) == {"total_count", key}


def test_rate_limit_body_follows_the_api_version(fake, examples):
    official = json.loads((examples / "rate-limit.json").read_text())
    old = _get(fake, "/rate_limit").json()
    assert set(official["resources"]["core"]) == set(old["resources"]["core"]) and "rate" in old
    new = requests.get(fake.base_url + "/rate_limit", headers={
        "Authorization": f"Bearer {TOKEN}", "X-GitHub-Api-Version": "2026-03-10"}, timeout=10)
    assert "rate" not in new.json()
    bad = requests.get(fake.base_url + "/rate_limit", headers={"X-GitHub-Api-Version": "2021-01-01"},
                       timeout=10)
    assert bad.status_code == 400


def test_pagination_links_repeat_every_parameter(fake):
    r = _get(fake, f"/repos/{REPO}/actions/runs", per_page=1, status="completed")
    links = r.headers["Link"]
    assert 'rel="next"' in links and 'rel="last"' in links and 'rel="prev"' not in links
    assert "status=completed" in links and "per_page=1" in links and "page=3" in links
    last = _get(fake, f"/repos/{REPO}/actions/runs", per_page=1, status="completed", page=3)
    assert 'rel="prev"' in last.headers["Link"] and 'rel="next"' not in last.headers["Link"]
    assert _get(fake, f"/repos/{REPO}/actions/runs", per_page=1, page=99).json()["workflow_runs"] == []
    assert "Link" not in _get(fake, f"/repos/{REPO}/actions/runs").headers


def test_conditional_requests_cost_nothing_and_etags_follow_changes(fake):
    first = _get(fake, f"/repos/{REPO}/actions/runs")
    etag, used = first.headers["ETag"], fake.points(TOKEN)
    assert etag.startswith('W/"')
    again = requests.get(fake.base_url + f"/repos/{REPO}/actions/runs", timeout=10,
                         headers={"Authorization": f"token {TOKEN}", "If-None-Match": etag})
    assert again.status_code == 304 and not again.content and fake.points(TOKEN) == used
    assert again.headers["X-RateLimit-Remaining"] == first.headers["X-RateLimit-Remaining"]
    pending = next(r for r in fake.world.runs.values() if r.status != "completed")
    fake.world.finish(pending)
    changed = requests.get(fake.base_url + f"/repos/{REPO}/actions/runs", timeout=10,
                           headers={"Authorization": f"token {TOKEN}", "If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["ETag"] != etag


def test_downloads_redirect_to_an_expiring_url_on_another_host(fake):
    run = min(fake.world.runs)
    arts = _get(fake, f"/repos/{REPO}/actions/runs/{run}/artifacts").json()["artifacts"]
    r = requests.get(arts[0]["archive_download_url"], headers={"Authorization": f"Bearer {TOKEN}"},
                     allow_redirects=False, timeout=10)
    assert r.status_code == 302 and r.headers["Location"].startswith(fake.blob_url)
    assert requests.get(r.headers["Location"], timeout=10).content[:2] == b"PK"
    tampered = r.headers["Location"].replace("expires=", "expires=9")
    assert requests.get(tampered, timeout=10).status_code == 403
    expired = next(a for a in fake.world.artifacts.values() if a.expired)
    gone = _get(fake, f"/repos/{REPO}/actions/artifacts/{expired.id}/zip")
    assert gone.status_code == 410 and gone.json()["message"] == "Artifact has expired"


def test_auth_errors_and_primary_limit_use_githubs_messages(fake):
    bad = requests.get(fake.base_url + f"/repos/{REPO}/actions/runs",
                       headers={"Authorization": "token nope"}, timeout=10)
    assert bad.status_code == 401 and bad.json()["message"] == "Bad credentials"
    fake.world.repos[REPO].private = True
    assert requests.get(fake.base_url + f"/repos/{REPO}/actions/runs", timeout=10).status_code == 404
    fake.limit = fake.points(TOKEN)
    spent = _get(fake, f"/repos/{REPO}/actions/runs")
    assert spent.status_code == 403 and spent.headers["X-RateLimit-Remaining"] == "0"
    assert spent.json()["message"].startswith("API rate limit exceeded")


def test_pygithub_works_against_the_fake(fake):
    github = pytest.importorskip("github")
    from github import Auth, Github, GithubRetry

    fake.faults = Faults(queue=[502])  # PyGithub's own retry must get past it
    g = Github(base_url=fake.base_url, auth=Auth.Token(TOKEN), per_page=2,
               retry=GithubRetry(total=3, backoff_factor=0), seconds_between_requests=0,
               seconds_between_writes=0)
    repo = g.get_repo(REPO)
    runs = repo.get_workflow_runs()
    assert runs.totalCount == len(fake.world.runs)  # reads rel="last" of a per_page=1 page
    listed = list(runs)
    assert [r.id for r in listed] == sorted(fake.world.runs, key=lambda i: (
        fake.world.runs[i].created_at, i), reverse=True)
    rerun = max(listed, key=lambda r: r.run_attempt)
    jobs = list(rerun.jobs("all"))
    assert {j.run_attempt for j in jobs} == {1, 2}
    assert all(j.created_at and j.labels for j in jobs)
    assert [a.name for a in rerun.get_artifacts()]
    assert [r.name for r in repo.get_self_hosted_runners()] == ["mi355-amds_06"]
    assert g.get_rate_limit().resources.core.remaining < 5000
    g.close()
