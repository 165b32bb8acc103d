"""Entry point of the Parity app: `parity serve` runs `streamlit run` on this file.

Every page has its own URL (`/overview`, `/tests`, …) that opens it with its filters, so a
shared link works. Streamlit serves the default page at `/` only, so the default is a
hidden page that forwards `/` to `/overview` with the query string."""
import streamlit as st

st.set_page_config(page_title="Parity: AMD and NVIDIA on the same terms", layout="wide")
overview = st.Page("views/overview.py", title="Overview", url_path="overview")


def home() -> None:
    st.switch_page(overview, query_params=st.query_params.to_dict())


st.navigation([
    st.Page(home, title="Parity", url_path="home", default=True, visibility="hidden"),
    overview,
    st.Page("views/tests.py", title="Tests", url_path="tests"),
    st.Page("views/performance.py", title="Performance", url_path="performance"),
    st.Page("views/accuracy.py", title="Accuracy", url_path="accuracy"),
    st.Page("views/capabilities.py", title="Capabilities", url_path="capabilities"),
    st.Page("views/coverage.py", title="Coverage", url_path="coverage"),
    st.Page("views/regressions.py", title="Regressions & flaky tests", url_path="regressions"),
    st.Page("views/runners.py", title="Runners", url_path="runners"),
]).run()
