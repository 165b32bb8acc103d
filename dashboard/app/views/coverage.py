"""Coverage: suites and configs without an AMD lane, lanes without tests or accuracy gate."""
import streamlit as st

from parity.dashboard.app import common as c

kw = c.page("Coverage", "What runs on NVIDIA but not on AMD, and AMD lanes that build but run "
            "nothing, have no accuracy gate, or are stale.")
calls = c.page_calls("coverage", kw)
gaps = c.view("coverage", **calls["coverage"])
c.table(gaps, hide_index=True, key="gaps")
c.chart("coverage", key="coverage_chart", **calls["coverage"])
skips = c.view("skip_parity", **calls["skip_parity"])
st.subheader("Vendor-gated skips")
c.table(skips[skips["vendor_gated"]] if not skips.empty else skips, hide_index=True,
        key="gated")
c.notebook(f"gaps = frames.coverage({c.kwargs_text(kw)})", "charts.coverage(gaps)",
           f"frames.skip_parity({c.kwargs_text(kw)})")
