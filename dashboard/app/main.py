"""Entry point of the Parity app: `parity serve` runs `streamlit run` on this file."""
import streamlit as st

st.set_page_config(page_title="Parity: AMD and NVIDIA on the same terms", layout="wide")
st.navigation([
    st.Page("views/overview.py", title="Overview", url_path="overview", default=True),
    st.Page("views/tests.py", title="Tests", url_path="tests"),
    st.Page("views/performance.py", title="Performance", url_path="performance"),
    st.Page("views/accuracy.py", title="Accuracy", url_path="accuracy"),
    st.Page("views/capabilities.py", title="Capabilities", url_path="capabilities"),
    st.Page("views/coverage.py", title="Coverage", url_path="coverage"),
    st.Page("views/regressions.py", title="Regressions & flaky tests", url_path="regressions"),
    st.Page("views/runners.py", title="Runners", url_path="runners"),
]).run()
