"""Runners: the fleet per vendor pool, online/offline/busy, queue-time percentiles."""
import streamlit as st

from parity.dashboard.app import common as c

kw = c.page("Runners", "Self-hosted runners per vendor pool from the latest snapshot, and how "
            "long jobs waited for one.", amd_only=False, framework=False)
calls = c.page_calls("runners", kw)
fleet = c.view("fleet", **calls["fleet"])
c.table(fleet, hide_index=True, key="fleet")
c.chart("fleet", key="fleet_chart", **calls["fleet"])
c.notebook(f"fleet = frames.fleet({c.kwargs_text(calls['fleet'])})",
           "charts.fleet(fleet)")
