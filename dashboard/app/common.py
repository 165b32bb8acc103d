"""What every page shares: cached views, filters kept in the URL, the "use in a notebook"
box, and the page shown for a store with no data yet."""
from __future__ import annotations

import os
import re

import pandas as pd
import streamlit as st

from parity.dashboard import charts, frames, tables

# A view's result is reused until the store changes (`tables.version`, part of its key), at
# most TTL seconds; at most ENTRIES results per function are kept, the least recent dropped
TTL = 15 * 60
ENTRIES = 48
WEEK = re.compile(r"^\d{4}-W\d{2}$")
PAGES = {"overview": "views/overview.py", "tests": "views/tests.py",
         "performance": "views/performance.py", "accuracy": "views/accuracy.py",
         "coverage": "views/coverage.py", "capabilities": "views/capabilities.py", "regressions": "views/regressions.py",
         "runners": "views/runners.py"}


def store_url() -> str:
    """The store the app reads (`PARITY_DB_URL`, else ./parity.db); opened read-only."""
    return os.environ.get("PARITY_DB_URL", "")


@st.cache_data(ttl=TTL, max_entries=ENTRIES, show_spinner=False)
def _view(name: str, url: str, kw: tuple, version: str) -> pd.DataFrame:
    return getattr(frames, name)(url or None, **dict(kw))


def view(name: str, **kw) -> pd.DataFrame:
    """`frames.<name>(**kw)` on the configured store, cached until the store changes."""
    url = store_url()
    return _view(name, url, tuple(sorted(kw.items())), tables.version(url or None))


KINDS = ("performance", "test", "accuracy")  # the regressions page's kinds, all by default


def page_calls(page: str, kw: dict) -> dict[str, dict]:
    """The views `page` shows whatever is picked on it, each with the filters it takes, from
    the page's filters: the one list the page and the start-up warm-up (`warm`) both read,
    so the two compute the same cache entries. (A view of one picked config or test is
    not in it: `history_call` gives the performance page's default one.)"""
    pick = lambda *names: {k: v for k, v in kw.items() if k in names}  # noqa: E731
    week = {"week": kw.get("week")}
    return {
        "overview": {"headline": dict(kw), "alerts": pick("framework", "week"),
                     "rocm_stack": pick("framework", "week"), "untrusted_runs": week,
                     "sources": {}, "fleet": week},
        "tests": {"amd_only_failures": dict(kw), "test_matrix": dict(kw),
                  "skip_parity": dict(kw)},
        "performance": {"performance_summary": dict(kw), "performance_parity": dict(kw),
                        "pareto": pick("framework", "week")},
        "accuracy": {"accuracy_parity": dict(kw)},
        "capabilities": {"capability_parity": dict(kw)},
        "coverage": {"coverage": dict(kw), "skip_parity": dict(kw)},
        "regressions": {"regressions": dict(kw, kinds=KINDS), "flaky_tests": dict(kw)},
        "runners": {"fleet": {"hardware": kw.get("hardware"), **week}},
    }[page]


def table(df: pd.DataFrame, **kw) -> None:
    """`st.dataframe(df, **kw)` with its missing values left blank: the grid shows a missing
    value as "None", which reads as a value where a cell has nothing to say (a passing
    run's message, a test finding's model, a config's unset parallelism, a finding that has
    not recovered). The grid's placeholder blanks them and keeps a column's type, so numbers
    and dates still sort as numbers and dates."""
    st.dataframe(df, **{"placeholder": "", **kw})


def configs(ratios: pd.DataFrame) -> list[str]:
    """The performance page's configs to pick from (`performance_parity` rows), in order."""
    return sorted(set(ratios["model"] + " · " + ratios["metric"] + " · " + ratios["config"]))


def history_call(ratios: pd.DataFrame, pick: str, kw: dict) -> dict:
    """The `performance_history` filters of the config `pick` (one of `configs`)."""
    model, metric, config = pick.split(" · ", 2)
    row = ratios[(ratios["model"] == model) & (ratios["metric"] == metric)
                 & (ratios["config"] == config)].iloc[0]
    return dict(framework=row["framework"], model=model, metric=metric,
                match_key=row["match_key"], week=kw.get("week"))


DEFAULT_FILTERS = {"framework": None, "hardware": None, "week": None}  # what `filters` gives
# a visitor who opens a page without query parameters


def warm(pages=tuple(PAGES)) -> list[str]:
    """Compute `pages`' views with their default filters into the cache that visitors read
    (what `parity serve` does before it accepts connections); the views computed, the
    performance page's default config history among them."""
    if not has_data():
        return []
    done = []
    for page in pages:
        calls = page_calls(page, DEFAULT_FILTERS)
        got = {name: view(name, **kw) for name, kw in calls.items()}
        done += got
        if page == "performance":
            ratios = got["performance_parity"]
            if not ratios.empty:
                calls["performance_history"] = history_call(ratios, configs(ratios)[0],
                                                            DEFAULT_FILTERS)
                view("performance_history", **calls["performance_history"])
                done.append("performance_history")
        for name in CHARTED[page]:  # and the charts' specs, as the page asks for them
            if name in calls:
                spec(name, **calls[name])
    return list(dict.fromkeys(done))


# the views each page charts with its filters (`chart`), whose specs `warm` makes too
CHARTED = {"overview": ("headline", "rocm_stack"), "tests": ("amd_only_failures", "test_matrix"),
           "performance": ("performance_summary", "pareto", "performance_history"),
           "accuracy": ("accuracy_parity",), "capabilities": ("capability_parity",),
           "coverage": ("coverage",), "regressions": ("regressions",), "runners": ("fleet",)}


@st.cache_data(ttl=TTL, max_entries=ENTRIES, show_spinner=False)
def _spec(name: str, url: str, kw: tuple, version: str) -> dict:
    """`charts.<name>` of the cached `frames.<name>` frame, as its Vega-Lite spec: made once
    per frame, not at every render (Altair's build and serialisation of a view's rows took
    40-80 ms a render for the findings' timeline, the headline and the fleet)."""
    return getattr(charts, name)(_view(name, url, kw, version)).to_dict()


def spec(name: str, **kw) -> dict:
    """The Vega-Lite spec of `charts.<name>(frames.<name>(**kw))`, cached as the view is."""
    url = store_url()
    return _spec(name, url, tuple(sorted(kw.items())), tables.version(url or None))


def chart(name: str, key: str | None = None, **kw) -> None:
    """`charts.<name>(frames.<name>(**kw))` on the page, from its cached spec (`spec`)."""
    st.vega_lite_chart(spec=spec(name, **kw), key=key)


@st.cache_data(ttl=TTL, max_entries=ENTRIES, show_spinner=False)
def _choices(url: str, version: str) -> dict:
    card = frames.scorecard(url or None)
    return {"frameworks": sorted(set(card["framework"])),
            "amd": sorted(set(card.loc[card["vendor"] == "amd", "hardware"])),
            "hardware": sorted(set(card["hardware"])),
            "latest": str(card["run_at"].max()) if not card.empty else ""}


def choices() -> dict:
    url = store_url()
    return _choices(url, tables.version(url or None))


def has_data() -> bool:
    return bool(choices()["frameworks"])


def empty_store() -> None:
    """The page for a store without results: how to load some, not an exception."""
    st.info("This store holds no results yet. Load some, then reload this page:")
    st.code("parity demo                                   # a demo history\n"
            "parity ingest test-reports/ --framework vllm  # result files\n"
            "parity collect github --repo OWNER/NAME       # GitHub Actions runs\n"
            "parity collect buildkite --org vllm --pipeline amd-ci  # Buildkite builds\n"
            "parity sync                                   # every source of parity.toml",
            language="sh")


def _param(name: str, allowed: list[str] | None = None) -> str:
    value = st.query_params.get(name, "")
    if allowed is not None and value not in allowed:
        return ""
    return value


def _sync(values: dict[str, str]) -> None:
    """Write the filters back into the URL (empty ones removed), so the view is shareable."""
    for key, value in values.items():
        if value:
            if st.query_params.get(key) != value:
                st.query_params[key] = value
        elif key in st.query_params:
            del st.query_params[key]


def filters(*, amd_only: bool = True, week: bool = True, framework: bool = True) -> dict:
    """Sidebar filters initialised from the URL: framework, hardware, ISO week. Returns the
    keyword arguments for `frames` (and keeps the URL in step)."""
    opts = choices()
    fws = [""] + opts["frameworks"]
    hws = [""] + (opts["amd"] if amd_only else opts["hardware"])
    side = st.sidebar
    fw = side.selectbox("Framework", fws, index=fws.index(_param("framework", fws)),
                        format_func=lambda v: v or "all", key="f_framework") if framework \
        else _param("framework", fws)  # not a filter here, but kept in the URL for other pages
    hw = side.selectbox("AMD hardware" if amd_only else "Hardware", hws,
                        index=hws.index(_param("hardware", hws)),
                        format_func=lambda v: v or "all", key="f_hardware")
    wk = ""
    if week:
        wk = side.text_input("ISO week (e.g. 2026-W47); empty: the latest runs",
                             value=_param("week"), key="f_week").strip()
        if wk and not WEEK.match(wk):
            side.error("A week looks like 2026-W47.")
            wk = ""
    _sync({"framework": fw, "hardware": hw, "week": wk})
    kw = {"framework": fw or None, "hardware": hw or None}
    if week:
        kw["week"] = wk or None
    side.caption(f"Newest run in the store: {opts['latest'][:16] or '–'}")
    return kw


NOTEBOOK_KEYS = ("notebook", "notebook_history")  # the boxes' keys: a page's, a test's


def notebook(*calls: str, key: str = "notebook") -> None:
    """The exact calls that reproduce this page in a notebook, in a box whose code is sent
    once it is opened (the page reruns then): a code block's highlighter is loaded and run
    in the browser with the page, before its tables were drawn in a tab that had loaded the
    app (0.2-0.35 s of the overview's 1.24-1.43 s there), for a box most visits leave
    closed. `key`: the box's, one per box of a page (`NOTEBOOK_KEYS`)."""
    box = st.expander("Use in a notebook", key=key, on_change="rerun")
    if box.open:
        box.code("from parity.dashboard import frames, charts\n\n" + "\n".join(calls),
                 language="python")


def figure(fmt: str, value) -> str:
    """`value` in `fmt` (a `str.format` pattern), or a dash when it is missing. A figure that
    shows as zero carries no sign of the float noise under it: a mean difference of -2e-17
    shows as "+0.000", never "-0.000"."""
    if pd.isna(value):
        return "—"
    text = fmt.format(value)
    return fmt.format(0.0) if re.fullmatch(r"-0[.0]*%?", text) else text


def kwargs_text(kw: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kw.items() if v)


def page(title: str, caption: str, **filter_options) -> dict:
    """Every page's start: its title, the empty-store page (and stop) when there is no data,
    else the sidebar filters; returns the filters as `frames` keyword arguments."""
    st.title(title)
    st.caption(caption)
    if not has_data():
        empty_store()
        st.stop()
    return filters(**filter_options)
