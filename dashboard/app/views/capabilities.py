"""Capabilities: which distributed-inference features each vendor tests, gates on accuracy
and passes, alone and combined in one lane."""
import streamlit as st

from parity.dashboard.app import common as c

kw = c.page("Capabilities", "Per framework × capability × hardware: not tested, tested without "
            "an accuracy gate, gated and failing, gated and passing. A combination counts only "
            "when one lane exercised all of it.")
calls = c.page_calls("capabilities", kw)
caps = c.view("capability_parity", **calls["capability_parity"])
c.chart("capability_parity", key="capability_chart", **calls["capability_parity"])
c.table(caps, hide_index=True, key="capabilities",
        column_config={"url": st.column_config.LinkColumn("run", display_text="open")})
c.notebook(f"caps = frames.capability_parity({c.kwargs_text(kw)})",
           "charts.capability_parity(caps)")
