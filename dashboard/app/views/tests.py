"""Tests: the parity matrix, AMD-only failures and skips, and one test's history on every
hardware with its messages and the links to the CI jobs."""
import streamlit as st

from parity.dashboard.app import common as c

kw = c.page("Tests", "Which tests fail or are skipped only on AMD, and a test's history on "
            "every hardware.")
calls = c.page_calls("tests", kw)
test = st.query_params.get("test", "")
if test:  # keep it in the URL (a link to this same page may not put it there)
    st.query_params["test"] = test

if test:
    st.subheader(f"History of `{test}`")
    hist = c.view("test_history", parity_key=test, framework=kw["framework"])
    if hist.empty:
        st.warning("No run of this test in the window.")
    else:
        c.chart("test_history", key="history_chart", parity_key=test,
                framework=kw["framework"])
        c.table(hist[["run_at", "hardware", "vendor", "outcome", "reruns", "message",
                      "commit", "job_url"]], hide_index=True, key="history",
                column_config={"job_url": st.column_config.LinkColumn(
                    "CI job", display_text="open job")})
    c.notebook(f"hist = frames.test_history(parity_key={test!r}, "
               f"framework={kw['framework']!r})", "charts.test_history(hist)",
               key="notebook_history")
    st.divider()

failures = c.view("amd_only_failures", **calls["amd_only_failures"])
st.subheader(f"AMD-only failures ({len(failures)})")
if failures.empty:
    st.caption("None: every test failing on AMD fails on NVIDIA too, or passes.")
else:
    for row in failures.head(15).itertuples():
        params = {k: v for k, v in {"framework": row.framework, "hardware": kw["hardware"] or "",
                                    "week": kw.get("week") or "", "test": row.parity_key}.items() if v}
        st.page_link(c.PAGES["tests"], query_params=params,
                     label=f"{row.parity_key} on {row.amd_hardware}: failing {row.streak} runs "
                           f"since {row.first_failing:%Y-%m-%d}")
    c.table(failures, hide_index=True, key="failures")
    c.chart("amd_only_failures", key="failures_chart", **calls["amd_only_failures"])

# the matrix is charted from its cached spec; its frame (a row per test of every pair:
# 593,000 with PyTorch-size lanes) is not taken out of the cache for nothing (152 ms)
st.subheader("Parity matrix")
c.chart("test_matrix", key="matrix_chart", **calls["test_matrix"])
skips = c.view("skip_parity", **calls["skip_parity"])
st.subheader("Skips")
c.table(skips, hide_index=True, key="skips")
c.notebook(f"frames.amd_only_failures({c.kwargs_text(kw)})",
           f"charts.test_matrix(frames.test_matrix({c.kwargs_text(kw)}))",
           f"frames.skip_parity({c.kwargs_text(kw)})")
