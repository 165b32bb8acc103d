"""Every page of the Streamlit app under AppTest, on the demo store and on an empty one:
it renders without an exception, shows its tables and charts, filters change the data and
land in the URL, and the drill-down shows one test's history. The app's store connection
cannot write."""
from __future__ import annotations

import socket
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy import text

from parity.collectors import demo
from parity.db.engine import make_engine

ROOT = Path(__file__).resolve().parent.parent
MAIN = str(ROOT / "dashboard" / "app" / "main.py")
PAGES = ["overview", "tests", "performance", "accuracy", "capabilities", "coverage",
         "regressions", "runners"]
FAILING = demo.test_key("vllm", "distributed", 11)  # fails only on MI355X in the demo


def open_page(page: str, notebook: bool = True, **params):
    """`page` run under AppTest with `params` in its URL; `notebook`: with its "Use in a
    notebook" box open (its code is sent only then)."""
    from streamlit.testing.v1 import AppTest

    from parity.dashboard.app import common

    at = AppTest.from_file(MAIN, default_timeout=120)
    for k, v in params.items():
        at.query_params[k] = v
    if notebook:
        for key in common.NOTEBOOK_KEYS:
            at.session_state[key] = True
    at.switch_page(f"views/{page}.py")
    return at.run()


@pytest.fixture
def demo_store(demo_db, monkeypatch):
    monkeypatch.setenv("PARITY_DB_URL", f"sqlite:///{demo_db}")
    return demo_db


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_on_the_demo(page, demo_store):
    at = open_page(page, framework="vllm")
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.dataframe) >= 1 and len(at.get("vega_lite_chart")) >= 1
    code = "\n".join(c.value for c in at.code)
    assert "from parity.dashboard import frames, charts" in code
    assert ("framework='vllm'" in code) or (page == "runners" and "frames.fleet(" in code)
    closed = open_page(page, notebook=False, framework="vllm")  # a first visit's page
    assert not closed.exception and not closed.code  # the box's code waits for it to open
    assert len(closed.expander) == len(at.expander) >= 1


def test_no_table_shows_a_missing_value_as_none(demo_store):
    """A cell with nothing to say (a passing run's message, a config's unset parallelism, a
    capability's accuracy when it has no run, a finding that has not recovered) is blank:
    the grid draws a missing value as its placeholder, "None" unless one is given (seen in
    Chromium: the capabilities page's `last_run` and `accuracy` read "None" before). The
    demo has such cells of text, number and date on five pages, a test's history among
    them, and every table they are in blanks them."""
    missing = {"text": 0, "number": 0, "date": 0}
    for page, params in [(p, {}) for p in PAGES] + [("tests", {"test": FAILING})]:
        at = open_page(page, **params)
        for table in at.dataframe:
            df = table.value
            assert table.proto.placeholder == "", (page, list(df.columns))
            for c in df.columns:
                kind = ("number" if pd.api.types.is_numeric_dtype(df[c])
                        else "date" if pd.api.types.is_datetime64_any_dtype(df[c]) else "text")
                missing[kind] += int(df[c].isna().sum())
    assert min(missing.values()) > 100, missing


@pytest.mark.parametrize("page", PAGES)
def test_every_page_on_an_empty_store_says_how_to_load_data(page, tmp_path, monkeypatch):
    monkeypatch.setenv("PARITY_DB_URL", f"sqlite:///{tmp_path / 'nothing.db'}")
    at = open_page(page)
    assert not at.exception, [e.value for e in at.exception]
    assert "no results yet" in at.info[0].value
    assert "parity demo" in at.code[0].value and "parity collect github" in at.code[0].value


def test_overview_scorecard_and_filters(demo_store):
    at = open_page("overview")
    every = at.dataframe[0].value
    assert {"vllm", "sglang", "pytorch"} <= set(every["framework"])
    assert {"run_at", "commit", "stale", "coverage", "same_denominator_rate"} <= set(every.columns)
    at.selectbox(key="f_framework").set_value("sglang").run()
    assert set(at.dataframe[0].value["framework"]) == {"sglang"}
    assert at.query_params["framework"] == ["sglang"] or at.query_params["framework"] == "sglang"
    at.text_input(key="f_week").input("2026-W47").run()
    w47 = at.dataframe[0].value
    assert len(w47) > 0 and (w47["run_at"] < "2026-11-23").all()
    labels = [p.proto.label for p in at.get("page_link")]
    assert "sglang · mi355x: failing tests" in labels


def test_a_week_in_the_url_and_a_bad_one(demo_store):
    at = open_page("overview", week="2026-W47", framework="vllm")
    w47 = at.dataframe[0].value
    assert len(w47) > 0 and (w47["run_at"] < "2026-11-23").all()
    bad = open_page("overview", week="last week")
    assert not bad.exception and "looks like" in bad.sidebar.error[0].value


def test_tests_page_drills_down_to_one_tests_history(demo_store):
    at = open_page("tests", framework="vllm", hardware="mi355x", test=FAILING)
    assert not at.exception
    assert any(FAILING in s.value for s in at.subheader)
    hist = at.dataframe[0].value
    assert {"mi355x", "b200", "h100"} <= set(hist["hardware"])
    assert set(hist.loc[hist["hardware"] == "mi355x", "outcome"]) == {"failed"}
    runs = "https://github.com/vllm-project/vllm/actions/runs/"
    assert hist["job_url"].str.startswith(runs).all()
    links = [p.proto.label for p in at.get("page_link")]
    assert any(FAILING in label for label in links)


def test_performance_page_sends_one_configs_history_once_its_box_is_opened(demo_store):
    """The performance page's per-config history is a drill-down: a first visit draws the
    summary and the Pareto chart only; the box opened, or a link that names a config, shows
    that config's history chart, and the config picked lands in the URL."""
    from streamlit.testing.v1 import AppTest

    from parity.dashboard import frames
    from parity.dashboard.app import common

    first = open_page("performance", notebook=False, framework="vllm")
    assert not first.exception and len(first.get("vega_lite_chart")) == 2
    assert "f_config" not in [s.key for s in first.selectbox]
    configs = common.configs(frames.performance_parity(f"sqlite:///{demo_store}",
                                                        framework="vllm"))
    linked = open_page("performance", notebook=False, framework="vllm", config=configs[-1])
    assert not linked.exception and len(linked.get("vega_lite_chart")) == 3
    assert linked.selectbox(key="f_config").value == configs[-1]
    at = AppTest.from_file(MAIN, default_timeout=120)
    at.query_params["framework"] = "vllm"
    at.session_state["history"] = True  # the box opened, as a visitor's click opens it
    at.switch_page("views/performance.py")
    at.run()
    assert not at.exception and len(at.get("vega_lite_chart")) == 3
    assert at.query_params["config"] == configs[0]


def test_regressions_kinds_filter(demo_store):
    at = open_page("regressions", framework="vllm", kinds="performance")
    found = at.dataframe[0].value
    assert set(found["kind"]) == {"performance"}
    assert at.query_params["kinds"] == "performance"
    # every kind, the default, leaves the URL as it was: a shared link carries no default
    at = open_page("regressions", framework="vllm")
    assert "kinds" not in at.query_params
    assert set(at.dataframe[0].value["kind"]) == {"performance", "test", "accuracy"}


def test_the_warm_up_computes_what_each_page_reads(demo_store, monkeypatch):
    """`common.warm` computes each page's views with the default filters (what `parity serve`
    does at start-up), under the very keys the pages read: a first visit of any page after
    it computes no view at all, and one with another filter computes its own."""
    import streamlit as st

    from parity.dashboard import charts, frames
    from parity.dashboard.app import common

    st.cache_data.clear()
    done = common.warm(list(common.PAGES))
    assert {"headline", "alerts", "test_matrix", "performance_history", "capability_parity",
            "regressions", "flaky_tests", "fleet"} <= set(done)
    computed: list[str] = []
    for name in set(done):
        view = getattr(frames, name)
        monkeypatch.setattr(frames, name, lambda *a, _v=view, _n=name, **kw: (
            computed.append(_n), _v(*a, **kw))[1])
    drawn: list[str] = []  # the charts built (their specs are cached too)
    for name in {n for names in common.CHARTED.values() for n in names}:
        build = getattr(charts, name)
        monkeypatch.setattr(charts, name, lambda *a, _b=build, _n=name, **kw: (
            drawn.append(_n), _b(*a, **kw))[1])
    for page in PAGES:
        at = open_page(page)
        assert not at.exception, [e.value for e in at.exception]
        assert len(at.dataframe) >= 1
    assert computed == [] and drawn == []
    open_page("tests", framework="vllm")
    assert sorted(computed) == ["amd_only_failures", "skip_parity", "test_matrix"]
    assert sorted(drawn) == ["amd_only_failures", "test_matrix"]
    st.cache_data.clear()


def test_a_cached_view_is_computed_again_once_the_store_changes(demo_db, tmp_path,
                                                               monkeypatch):
    """The app reuses a view's frame until the store changes, not for a fixed time: a write
    (here a new nightly's results) is shown on the next render."""
    import shutil

    import streamlit as st

    from parity.dashboard import frames
    from parity.dashboard.app import common
    from tests.builder import Builder

    db = tmp_path / "store.db"
    shutil.copy(demo_db, db)
    monkeypatch.setenv("PARITY_DB_URL", f"sqlite:///{db}")
    st.cache_data.clear()
    calls = []
    scorecard = frames.scorecard
    monkeypatch.setattr(frames, "scorecard", lambda *a, **kw: (calls.append(1),
                                                                 scorecard(*a, **kw))[1])
    before = common.view("scorecard")
    assert common.view("scorecard").equals(before) and len(calls) == 1
    Builder(make_engine(db)).tests("mi999x", {"test_new": "passed"}, fw="vllm", day=400)
    after = common.view("scorecard")
    assert len(calls) == 2 and "mi999x" in set(after["hardware"]) - set(before["hardware"])
    st.cache_data.clear()


def test_the_apps_connection_cannot_write_on_postgres(pg_engine):
    from parity.dashboard import tables
    from tests.builder import Builder

    Builder(pg_engine).tests("mi300x", {"a": "passed"})
    url = pg_engine.url.render_as_string(hide_password=False)
    with pytest.raises(Exception, match="read-only"):
        with tables.open_store(url).begin() as conn:
            conn.execute(text("DELETE FROM ci_run"))


def test_serve_passes_no_secret_and_locks_the_app_down():
    from parity.dashboard import serve

    env = serve.environment("sqlite:///x.db", {"GITHUB_TOKEN": "t", "GH_TOKEN": "t",
                                               "AWS_SECRET_ACCESS_KEY": "s", "PGPASSWORD": "p",
                                               "HOME": "/root", "PARITY_DB_URL": "other"})
    assert env == {"HOME": "/root", "PARITY_DB_URL": "sqlite:///x.db"}
    cmd = " ".join(serve.command(8555, "127.0.0.1"))
    assert "--client.toolbarMode viewer" in cmd and "--client.showErrorDetails none" in cmd
    assert "--server.address 127.0.0.1" in cmd and "--browser.gatherUsageStats false" in cmd


def test_the_listening_socket_sends_without_delay_and_its_connections_inherit_it():
    """`listener.no_delay` on a socket bound as Streamlit binds it (protocol number 0, which
    asyncio's own TCP_NODELAY passes over): the listening socket and the connection it then
    accepts send without Nagle's delay; a connected socket of the process is left alone."""
    from parity.dashboard.app import listener

    option = (socket.IPPROTO_TCP, socket.TCP_NODELAY)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, 0) as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname()) as before:
            assert not server.getsockopt(*option)
            assert listener.no_delay() >= 1
            assert server.getsockopt(*option)
            with socket.create_connection(server.getsockname()) as client:
                accepted, _ = server.accept()  # the connection made before the call
                accepted.close()
                accepted, _ = server.accept()
                with accepted:
                    assert accepted.proto == 0 and accepted.getsockopt(*option)
                assert not client.getsockopt(*option) and not before.getsockopt(*option)


class Downstream:
    """An ASGI app standing for Streamlit: a hashed script (immutable, sent in two parts),
    the page (no-cache), a part of the script for a range request, and a script that sets
    a cookie. `calls` counts the requests that reached it."""

    def __init__(self):
        self.calls = 0

    async def __call__(self, scope, receive, send):
        self.calls += 1
        headers = {k: v for k, v in scope.get("headers", [])}
        path = scope["path"]
        cache = b"no-cache" if path.endswith(".html") else b"public, immutable, max-age=9"
        status, parts = (206, [b"im"]) if b"range" in headers else (200, [b"import", b" x"])
        extra = [(b"set-cookie", b"s=1")] if "cookie" in path else []
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"text/javascript"),
                                (b"cache-control", cache), *extra]})
        for i, part in enumerate(parts):
            await send({"type": "http.response.body", "body": part,
                        "more_body": i < len(parts) - 1})


def asgi_get(app, path, method="GET", headers=()):
    """The messages `app` sends for one request, and the request's answer body. (Run in a
    thread of its own: the browser tests' Playwright holds an event loop in this one.)"""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    sent = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    scope = {"type": "http", "method": method, "path": path, "headers": list(headers)}
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, app(scope, receive, send)).result()
    return sent, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


def test_streamlits_immutable_static_files_are_answered_again_from_memory():
    from parity.dashboard.app.assets import Assets

    streamlit = Downstream()
    app = Assets(streamlit, base="")
    first, body = asgi_get(app, "/static/js/index.abc.js")
    assert body == b"import x" and streamlit.calls == 1
    again, body = asgi_get(app, "/static/js/index.abc.js")
    assert body == b"import x" and streamlit.calls == 1  # from memory
    assert again[0] == first[0]  # the same status and headers
    # these go to Streamlit every time: not kept, or a request whose answer differs
    for path, method, headers in [
            ("/static/index.html", "GET", ()), ("/static/js/cookie.js", "GET", ()),
            ("/media/a.js", "GET", ()), ("/static/js/index.abc.js", "HEAD", ()),
            ("/static/js/index.abc.js", "GET", [(b"range", b"bytes=0-1")]),
            ("/static/js/index.abc.js", "GET", [(b"if-none-match", b'"e"')])]:
        before = streamlit.calls
        asgi_get(app, path, method, headers)
        asgi_get(app, path, method, headers)
        assert streamlit.calls == before + 2, (path, method, headers)
    assert set(app.kept) == {"/static/js/index.abc.js"}
    under = Assets(Downstream(), base="/parity/")  # Streamlit's server.baseUrlPath
    asgi_get(under, "/parity/static/js/a.js")
    asgi_get(under, "/static/js/a.js")
    assert set(under.kept) == {"/parity/static/js/a.js"}


class Page:
    """Stands in for Streamlit behind `Preamble`: its page (`text/html`, gzip-compressed when
    the request accepts it, with validators, in two parts), a script, and "not modified"
    for a conditional request."""

    HTML = b"<!DOCTYPE html><html><head><title>S</title></head><body></body></html>"

    async def __call__(self, scope, receive, send):
        headers = dict(scope.get("headers", []))
        if b"if-none-match" in headers:
            await send({"type": "http.response.start", "status": 304, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        html = not scope["path"].startswith("/static/")
        body, start = (self.HTML, [(b"content-type", b"text/html; charset=utf-8"),
                                   (b"cache-control", b"no-cache"), (b"etag", b'"e"'),
                                   (b"last-modified", b"Mon, 07 Dec 2026 10:19:17 GMT"),
                                   (b"accept-ranges", b"bytes")]) if html else \
            (b"import x", [(b"content-type", b"text/javascript")])
        if html and b"gzip" in headers.get(b"accept-encoding", b""):
            import gzip
            body = gzip.compress(body)
            start.append((b"content-encoding", b"gzip"))
        start.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": 200, "headers": start})
        await send({"type": "http.response.body", "body": body[:10], "more_body": True})
        await send({"type": "http.response.body", "body": body[10:], "more_body": False})


def test_streamlits_page_is_given_the_address_of_its_server():
    """`Preamble` writes `window.__streamlit` (the server's address, worked out in the
    browser from the path asked for, and the host settings Streamlit's host-config endpoint
    answers) first in the page's head; everything else passes as Streamlit sent it."""
    from parity.dashboard.app.preamble import Preamble

    app = Preamble(Page(), base="", origins=["https://*.example.org"])
    sent, body = asgi_get(app, "/tests")
    head = dict(sent[0]["headers"])
    script = body[body.index(b"<head>") + 6:body.index(b"<title>")]
    assert body.replace(script, b"") == Page.HTML
    assert script.startswith(b"<script>") and script.endswith(b"</script>")
    assert b'const asked = "/tests"' in script and b'+ "/", location.href' in script
    assert (b'HOST_CONFIG: {"allowedOrigins": ["https://*.example.org"], '
            b'"useExternalAuthToken": false}') in script
    # Streamlit's validators were for its file, not this page; the length is the page's
    assert head[b"content-length"] == str(len(body)).encode()
    assert not {b"etag", b"last-modified", b"accept-ranges"} & head.keys()
    assert head[b"cache-control"] == b"no-cache"
    # a compressed page is given whole, uncompressed (it is 8 kB)
    zipped, unzipped = asgi_get(app, "/tests", headers=[(b"accept-encoding", b"gzip, br")])
    assert unzipped == body and b"content-encoding" not in dict(zipped[0]["headers"])
    # a path that tries to end the script stays inside its string
    _, hostile = asgi_get(app, "/x</script><script>alert(1)//")
    assert hostile.count(b"</script>") == 1 and b"<script>alert" not in hostile
    assert b'"/x\\u003c/script\\u003e\\u003cscript\\u003ealert(1)//"' in hostile
    # under Streamlit's server.baseUrlPath, the server's address ends with it
    _, under = asgi_get(Preamble(Page(), base="/parity/", origins=["x"]), "/parity/tests")
    assert b'const asked = "/parity/tests"' in under and b'+ "/parity/", location' in under
    # these pass untouched: a script, HTML of another route, a HEAD, "not modified"
    for path, method, headers in [("/static/js/a.js", "GET", ()), ("/media/a.html", "GET", ()),
                                  ("/component/c/index.html", "GET", ()), ("/tests", "HEAD", ()),
                                  ("/tests", "GET", [(b"if-none-match", b'"e"')])]:
        assert asgi_get(app, path, method, headers) == asgi_get(Page(), path, method, headers)


def test_missing_scorecard_figures_show_a_dash_and_why(demo_store):
    """The MI455X lane builds but runs nothing: its pass rate, performance and accuracy are
    shown as a dash (never "None" or a zero) and its notes say why."""
    at = open_page("overview", framework="vllm")
    table = at.dataframe[0].value.set_index("amd_hardware")
    figures = ["same_denominator_rate", "nvidia_rate", "perf_ratio", "accuracy_diff"]
    assert list(table.loc["mi455x", figures]) == ["—"] * 4
    assert table.loc["mi455x", "coverage"] == "0%"
    assert table.loc["mi355x", "same_denominator_rate"].endswith("%")
    assert not table[figures].isna().any().any()
    notes = table.loc["mi455x", "notes"]
    assert "mi455x ran no tests" in notes and "no benchmark config" in notes
    # MI355X has every figure; its note says only that some nights lacked a suite the
    # reference ran (the demo's vLLM suite with no AMD lane)
    assert table.loc["mi355x", "notes"].startswith("verdicts complete on 0 of")
    assert table.loc["mi455x", "verdict_completeness"] == "0%"


def test_a_figure_that_shows_as_zero_shows_no_sign():
    """The scorecard's figures: a mean difference of float noise below zero showed as
    "-0.000"; a missing one is a dash; everything else as its format says."""
    from parity.dashboard.app.common import figure

    assert [figure("{:+.3f}", v) for v in (-1.85e-17, 1.85e-17, -0.0, -0.0004, -0.0031)] == \
        ["+0.000", "+0.000", "+0.000", "+0.000", "-0.003"]
    assert [figure("{:.1%}", v) for v in (-1e-9, 0.25, None, float("nan"))] == \
        ["0.0%", "25.0%", "—", "—"]
    assert figure("{:.0%}", -0.004) == "0%" and figure("{:.3f}", float("-inf")) == "-inf"


def test_overview_lists_the_sources_and_marks_a_stale_one(demo_db, tmp_path, monkeypatch):
    """Per source, when it last synced and whether that worked; a source without a good
    sync for 24 hours is called out as stale."""
    import shutil
    from datetime import datetime, timedelta

    from parity.db import store
    from parity.db.engine import make_engine

    db = tmp_path / "synced.db"
    shutil.copy(demo_db, db)
    engine = make_engine(db)
    with engine.begin() as conn:
        store.record_source_sync(conn, "vllm-buildkite", "buildkite", "vllm/ci,amd-ci", "ok",
                                 "5 builds synced")
        store.record_source_sync(conn, "sglang-nightly", "github", "sgl-project/sglang", "ok")
        conn.execute(text("UPDATE source_sync SET last_success_at = :t, last_attempt_at = :t "
                          "WHERE name = 'sglang-nightly'"),
                     {"t": datetime.utcnow() - timedelta(hours=30)})
        store.record_source_sync(conn, "sglang-nightly", "github", "sgl-project/sglang",
                                 "failed", "cannot reach api.github.com")
    engine.dispose()
    monkeypatch.setenv("PARITY_DB_URL", f"sqlite:///{db}")
    at = open_page("overview")
    assert not at.exception, [e.value for e in at.exception]
    table = next(d.value for d in at.dataframe if "last_success_at" in d.value.columns)
    rows = table.set_index("name")
    assert rows.loc["vllm-buildkite", "status"] == "ok" and not rows.loc["vllm-buildkite", "stale"]
    assert rows.loc["sglang-nightly", "status"] == "failed" and rows.loc["sglang-nightly", "stale"]
    warning = " ".join(w.value for w in at.warning)
    assert "sglang-nightly (last good sync 30 h ago)" in warning and "vllm-buildkite" not in warning


def test_overview_alerts_say_which_are_not_recorded_and_show_no_none(demo_db, tmp_path,
                                                                     monkeypatch):
    """An alert `parity alerts` has recorded shows its state and its issue's link; one it
    has not recorded yet says so, its issue cell left blank (missing, which the table draws
    as its empty placeholder): no cell reads "None"."""
    import shutil
    from datetime import datetime

    from parity.collectors import alerting
    from parity.dashboard import frames
    from parity.db.engine import make_engine

    db = tmp_path / "alerted.db"
    shutil.copy(demo_db, db)
    engine = make_engine(db)
    firing = frames.alerts(engine)
    recorded = firing.head(2).to_dict("records")
    alerting.run(engine, recorded, now=datetime.utcnow())
    alerting.set_issue(engine, recorded[0]["fingerprint"], "ROCm/parity-alerts", 42)
    engine.dispose()
    monkeypatch.setenv("PARITY_DB_URL", f"sqlite:///{db}")
    at = open_page("overview")
    assert not at.exception, [e.value for e in at.exception]
    grid = next(d for d in at.dataframe if "rule" in d.value.columns)
    table = grid.value
    assert len(table) == len(firing) and grid.proto.placeholder == ""
    assert not table["state"].isna().any()
    assert "None" not in set(table["state"]) | set(table["issue"])
    where = ["rule", "framework", "hardware", "subject"]
    rows = table.set_index(where)
    first, second = (rows.loc[tuple(a[c] for c in where)] for a in recorded)
    assert first["state"] == "open"
    assert first["issue"] == "https://github.com/ROCm/parity-alerts/issues/42"
    assert second["state"] == "open" and pd.isna(second["issue"])
    rest = rows.drop(index=[tuple(a[c] for c in where) for a in recorded])
    assert len(rest) == len(table) - 2
    assert set(rest["state"]) == {"not recorded"} and rest["issue"].isna().all()


def test_overview_shows_the_rocm_stack_per_architecture(real, tmp_path, monkeypatch):
    """TheRock's nightly status on the overview: a pass rate per component and architecture,
    and an architecture that only built says so instead of passing."""
    import json

    from parity.collectors.ingest import ingest
    from parity.db.engine import make_engine

    doc = json.loads((real / "rocm-quartz" / "status_release-nightly_20260821.json").read_text())
    doc["summary"]["linux"]["architectures"].append("gfx125X-dcgpu")
    status = tmp_path / "status.json"
    status.write_text(json.dumps(doc))
    db = tmp_path / "stack.db"
    engine = make_engine(db)
    ingest(engine, [status])
    engine.dispose()
    monkeypatch.setenv("PARITY_DB_URL", f"sqlite:///{db}")
    at = open_page("overview")
    assert not at.exception, [e.value for e in at.exception]
    table = next(d.value for d in at.dataframe if "verdict" in d.value.columns)
    rows = table.set_index(["framework", "hardware"])
    assert rows.loc[("rocm", "mi455x"), "verdict"] == "build only"
    assert rows.loc[("jax", "gfx942"), "verdict"] == "passing"
    assert "frames.rocm_stack()" in "\n".join(c.value for c in at.code)
