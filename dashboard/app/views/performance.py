"""Performance: ratios at matched configs with intervals, the Pareto frontier, and one
config's history with its change points."""
import streamlit as st

from parity.dashboard.app import common as c

kw = c.page("Performance", "AMD/NVIDIA at matched configs (model, precision, parallelism, "
            "ISL/OSL, concurrency); > 1 means AMD is better.")
calls = c.page_calls("performance", kw)
summary = c.view("performance_summary", **calls["performance_summary"])
st.subheader("Summary")
c.table(summary, hide_index=True, key="summary")
c.chart("performance_summary", key="summary_chart", **calls["performance_summary"])
ratios = c.view("performance_parity", **calls["performance_parity"])
st.subheader("Ratios per config")
c.table(ratios.drop(columns=["match_key"], errors="ignore"), hide_index=True, key="ratios")
st.subheader("Throughput per GPU against interactivity")
front = c.view("pareto", **calls["pareto"])
c.chart("pareto", key="pareto_chart", **calls["pareto"])
# one config's history, a drill-down: its box sends its picker and chart once opened (a
# third Vega chart drawn with the page's first render cost it 0.3-0.6 s in Chromium); a
# link that names a config opens it
wanted = st.query_params.get("config", "")
box = st.expander("One config's history", expanded=bool(wanted), key="history",
                  on_change="rerun")
if box.open and not ratios.empty:
    configs = c.configs(ratios)
    pick = box.selectbox("Config", configs,
                         index=configs.index(wanted) if wanted in configs else 0,
                         key="f_config")
    if wanted != pick:
        st.query_params["config"] = pick
    picked = c.history_call(ratios, pick, kw)
    with box:
        c.chart("performance_history", key="history_chart", **picked)
elif box.open:
    box.caption("No config ran on both vendors in this window.")
elif "config" in st.query_params:  # closed: the page shows no config
    del st.query_params["config"]
c.notebook(f"frames.performance_summary({c.kwargs_text(kw)})",
           f"ratios = frames.performance_parity({c.kwargs_text(kw)})",
           "charts.performance_parity(ratios)",
           "frames.performance_history(framework=..., model=..., metric=..., match_key=...)")
