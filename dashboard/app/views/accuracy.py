"""Accuracy: per model and task, config × concurrency with Wilson intervals, cliffs marked."""
import streamlit as st

from parity.dashboard.app import common as c

kw = c.page("Accuracy", "Scores with Wilson intervals, AMD against NVIDIA per config and "
            "concurrency; a cliff is a concurrency where AMD falls well below its other "
            "concurrencies or below NVIDIA.")
calls = c.page_calls("accuracy", kw)
acc = c.view("accuracy_parity", **calls["accuracy_parity"])
c.chart("accuracy_parity", key="accuracy_chart", **calls["accuracy_parity"])
cliffs = acc[acc["cliff"].fillna(False).astype(bool)] if not acc.empty else acc
st.subheader(f"Cliffs ({len(cliffs)})")
c.table(cliffs, hide_index=True, key="cliffs")
st.subheader("Every cell")
c.table(acc, hide_index=True, key="cells")
c.notebook(f"acc = frames.accuracy_parity({c.kwargs_text(kw)})", "charts.accuracy_parity(acc)",
           'acc[acc["cliff"]]')
