"""Performance: ratios at matched configs with intervals, the Pareto frontier, and one
config's history with its change points."""
import streamlit as st

from parity.dashboard.app import common as c

kw = c.page("Performance", "AMD/NVIDIA at matched configs (model, precision, parallelism, "
            "ISL/OSL, concurrency); > 1 means AMD is better.")
calls = c.page_calls("performance", kw)
summary = c.view("performance_summary", **calls["performance_summary"])
st.subheader("Summary")
st.dataframe(summary, hide_index=True, key="summary")
c.chart("performance_summary", key="summary_chart", **calls["performance_summary"])
ratios = c.view("performance_parity", **calls["performance_parity"])
st.subheader("Ratios per config")
st.dataframe(ratios.drop(columns=["match_key"], errors="ignore"), hide_index=True, key="ratios")
st.subheader("Throughput per GPU against interactivity")
front = c.view("pareto", **calls["pareto"])
c.chart("pareto", key="pareto_chart", **calls["pareto"])
st.subheader("One config's history")
if not ratios.empty:
    configs = c.configs(ratios)
    wanted = st.query_params.get("config", "")
    pick = st.selectbox("Config", configs, index=configs.index(wanted) if wanted in configs else 0,
                        key="f_config")
    if st.query_params.get("config") != pick:
        st.query_params["config"] = pick
    picked = c.history_call(ratios, pick, kw)
    hist = c.view("performance_history", **picked)
    c.chart("performance_history", key="history_chart", **picked)
c.notebook(f"frames.performance_summary({c.kwargs_text(kw)})",
           f"ratios = frames.performance_parity({c.kwargs_text(kw)})",
           "charts.performance_parity(ratios)",
           "frames.performance_history(framework=..., model=..., metric=..., match_key=...)")
