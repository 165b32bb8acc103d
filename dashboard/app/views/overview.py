"""Overview: the headline per framework × AMD hardware against its NVIDIA reference."""
import pandas as pd
import streamlit as st

from parity.dashboard.app import common as c

kw = c.page("Parity overview", "AMD against its NVIDIA reference on the same terms: coverage of "
            "the reference's suites, pass rate on the same tests, performance at matched "
            "configs, accuracy, open findings and the fleet.")
calls = c.page_calls("overview", kw)
head = c.view("headline", **calls["headline"])
if head.empty:
    st.warning("No AMD lane with an NVIDIA reference ran in this window.")
else:
    newest = head["run_at"].max()
    head = head.assign(stale=(newest - head["run_at"]) > pd.Timedelta(days=2),
                       commit=head["commit"].fillna("").str[:10])
    st.subheader("Scorecard")
    shown = head[["framework", "amd_hardware", "nvidia_hardware", "coverage",
                  "same_denominator_rate", "nvidia_rate", "perf_ratio", "accuracy_diff", "cliffs",
                  "verdict_completeness", "open_findings", "run_at", "commit", "run_url", "stale",
                  "notes"]]
    # a missing figure shows as a dash, never as "None" or a zero, and `notes` says why; the
    # grid shows every null as "None", so the figures go to it as formatted text
    formats = {"coverage": "{:.0%}", "same_denominator_rate": "{:.1%}", "nvidia_rate": "{:.1%}",
               "perf_ratio": "{:.3f}", "accuracy_diff": "{:+.3f}", "verdict_completeness": "{:.0%}"}
    styled = shown.assign(**{col: [c.figure(fmt, v) for v in shown[col]]
                             for col, fmt in formats.items()})
    why = " — means no figure: the row's notes say why."
    st.container(key="scorecard").dataframe(
        styled, hide_index=True, key="scorecard_table",
        column_config={
            "coverage": st.column_config.Column(
                "coverage", help="Of the suites the NVIDIA reference ran tests in, the share "
                                 "the AMD lane ran tests in too." + why),
            "same_denominator_rate": st.column_config.Column(
                "pass rate (same tests)",
                help="Of the tests the NVIDIA reference ran, the share that passed on AMD." + why),
            "nvidia_rate": st.column_config.Column("NVIDIA", help="The reference's pass rate "
                                                                  "on the same tests." + why),
            "perf_ratio": st.column_config.Column(
                "perf ratio", help="AMD/NVIDIA throughput at matched configs." + why),
            "accuracy_diff": st.column_config.Column(
                "accuracy Δ", help="Mean AMD − NVIDIA score over matched cells." + why),
            "verdict_completeness": st.column_config.Column(
                "complete verdicts", help="Share of the AMD lane's nights on which every suite "
                "the reference ran that week executed tests on AMD, with the accuracy gate the "
                "reference has (frames.verdicts)." + why),
            "run_at": st.column_config.DatetimeColumn("from run", format="YYYY-MM-DD HH:mm"),
            "run_url": st.column_config.LinkColumn(
                "run", display_text="open", help="The AMD run the pass rate comes from; "
                "`parity explain FIGURE --hardware HW` lists every run, job and file (SHA-256) "
                "behind a figure."),
            "stale": st.column_config.CheckboxColumn("stale", help="older than the newest run by 2+ days"),
            "notes": st.column_config.Column("notes", help="Why a figure is missing"),
        })
    c.chart("headline", key="headline_chart", **calls["headline"])
    st.subheader("Drill down")
    cols = st.columns(3)
    for i, row in enumerate(head.itertuples()):
        params = {"framework": row.framework, "hardware": row.amd_hardware}
        if kw.get("week"):
            params["week"] = kw["week"]
        cols[i % 3].page_link(c.PAGES["tests"], query_params=params,
                              label=f"{row.framework} · {row.amd_hardware}: failing tests")
firing = c.view("alerts", **calls["alerts"])
st.subheader("Alerts")
if firing.empty:
    st.caption("Nothing fires now (`parity alerts` records and posts them).")
else:
    now = pd.Timestamp.now("UTC").tz_localize(None)
    since = pd.to_datetime(firing["first_seen"]).fillna(pd.to_datetime(firing["since"]))
    # an alert `parity alerts` has not recorded yet has no state: said so (and no issue,
    # which the table leaves blank)
    shown = firing.assign(
        age_days=((now - since).dt.total_seconds() / 86400).round(1),
        state=firing["state"].fillna("not recorded"),
        issue=[f"https://github.com/{r}/issues/{int(n)}" if isinstance(r, str) and r and pd.notna(n)
               else None for r, n in zip(firing["issue_repo"], firing["issue_number"])])
    counts = shown["priority"].value_counts().sort_index()
    st.caption(" · ".join(f"{n} {p}" for p, n in counts.items()) + " firing; the oldest first "
               "within each priority.")
    c.table(shown.sort_values(["priority", "age_days"], ascending=[True, False])[
        ["priority", "rule", "framework", "hardware", "subject", "age_days", "state", "issue"]],
        hide_index=True, key="alerts",
        column_config={"age_days": st.column_config.NumberColumn("age (days)"),
                       "state": st.column_config.Column(
                           "state", help="As `parity alerts` recorded it; not recorded: "
                                         "`parity alerts` has not run since it began firing"),
                       "issue": st.column_config.LinkColumn("issue", display_text="open")})
stack = c.view("rocm_stack", **calls["rocm_stack"])
if not stack.empty:
    st.subheader("AMD software stack (TheRock nightly)")
    st.caption("Pass rate of ROCm, PyTorch and JAX per GPU architecture and night, from "
               "ROCm/Quartz's release status. A lane that built but ran no test says "
               "\"build only\" and has no pass rate.")
    latest = stack[stack["night"] == stack["night"].max()]
    c.table(latest[["night", "framework", "hardware", "build", "tested", "passed",
                    "failed", "pass_rate", "verdict"]], hide_index=True, key="rocm_stack",
            column_config={"night": st.column_config.DateColumn("night"),
                           "pass_rate": st.column_config.NumberColumn("pass rate",
                                                                      format="percent")})
    c.chart("rocm_stack", key="rocm_stack_chart", **calls["rocm_stack"])
left_out = c.view("untrusted_runs", **calls["untrusted_runs"])
if not left_out.empty:
    reasons = left_out["untrusted"].str.split(":").str[0].value_counts()
    st.caption("⚠ untrusted: " + ", ".join(f"{n} {r}" for r, n in reasons.items())
               + " runs are left out of every figure on this page "
               "(frames.untrusted_runs(); include_untrusted=True counts them in).")
syncs = c.view("sources", **calls["sources"])
if not syncs.empty:
    st.subheader("Sources")
    stale = syncs[syncs["stale"]]
    if not stale.empty:
        st.warning("Stale: " + ", ".join(f"{r.name} (last good sync "
                                         f"{'never' if pd.isna(r.last_success_at) else f'{r.hours_since_success:.0f} h ago'})"
                                         for r in stale.itertuples())
                   + ". Figures from these sources may be out of date.")
    c.table(syncs[["name", "kind", "target", "status", "last_success_at",
                   "last_attempt_at", "stale", "message"]], hide_index=True, key="sources",
            column_config={
                "last_success_at": st.column_config.DatetimeColumn(
                    "last good sync (UTC)", format="YYYY-MM-DD HH:mm"),
                "last_attempt_at": st.column_config.DatetimeColumn(
                    "last tried (UTC)", format="YYYY-MM-DD HH:mm"),
                "stale": st.column_config.CheckboxColumn(
                    "stale", help="no successful sync for 24 hours"),
                "message": st.column_config.Column("last sync said")})
fleet = c.view("fleet", **calls["fleet"])
st.subheader("Fleet")
if fleet.empty:
    st.caption("No runner snapshot yet (`parity collect runners`).")
else:
    c.table(fleet[["vendor", "hardware", "runners", "online", "busy", "idle", "offline",
                   "queue_p50_min", "queue_p90_min", "last_seen"]], hide_index=True,
            key="fleet")
c.notebook(f"head = frames.headline({c.kwargs_text(kw)})", "charts.headline(head)",
           f"frames.fleet({c.kwargs_text({'week': kw.get('week')})})", "frames.alerts()", "frames.rocm_stack()", "frames.sources()")
