"""Regressions & flaky tests: the findings list with filters."""
import streamlit as st

from parity.dashboard.app import common as c

kw = c.page("Regressions & flaky tests", "Change points in performance series, new test "
            "failures, accuracy drops and cliffs; tests that pass and fail on the same code.")
calls = c.page_calls("regressions", kw)
kinds_all = list(c.KINDS)
asked = [k for k in st.query_params.get("kinds", "").split(",") if k in kinds_all] or kinds_all
kinds = st.multiselect("Kinds", kinds_all, default=asked, key="f_kinds")
if sorted(kinds) != sorted(kinds_all):  # in any order: every kind is the default
    st.query_params["kinds"] = ",".join(kinds)
elif "kinds" in st.query_params:
    del st.query_params["kinds"]
found = c.view("regressions", kinds=tuple(kinds), **kw) if kinds else c.view(
    "regressions", kinds=(), **kw)
st.subheader(f"Findings ({len(found)})")
c.table(found, hide_index=True, key="findings",
        column_config={"url": st.column_config.LinkColumn("link")})
c.chart("regressions", key="findings_chart", kinds=tuple(kinds), **kw)
flaky = c.view("flaky_tests", **calls["flaky_tests"])
st.subheader(f"Flaky tests ({len(flaky)})")
c.table(flaky, hide_index=True, key="flaky")
c.notebook(f"found = frames.regressions({c.kwargs_text(kw)}, kinds={tuple(kinds)!r})",
           "charts.regressions(found)", f"frames.flaky_tests({c.kwargs_text(kw)})")
