"""Verdict completeness, pure: for each AMD lane and night, could a verdict be complete?

A night of an AMD lane (framework × AMD hardware) is complete when every suite its NVIDIA
reference ran tests in over the week up to that night also executed at least one test on
AMD that night, and, where the reference has an accuracy gate in that week, the AMD lane
has accuracy results that night. A lane that builds but executes no test, or tests without
the accuracy gate its reference has, is never complete. The share of complete nights per
lane is the headline's `verdict_completeness`."""
from __future__ import annotations

import bisect

import numpy as np
import pandas as pd

from parity.dashboard.groups import distinct

WEEK = pd.Timedelta(days=6)  # the reference's expected suites: the week up to the night
EXECUTED = ["passed", "failed", "error", "xfailed", "xpassed"]
COLUMNS = ["framework", "amd_hardware", "nvidia_hardware", "night", "suites_reference",
           "suites_executed", "missing_suites", "reference_gate", "amd_gate", "complete", "why"]


def nightly(jobs: pd.DataFrame, accuracy: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """`jobs`: the window's jobs (framework, vendor, hardware, suite, run_at and outcome
    counts); `accuracy`: accuracy rows (framework, hardware, run_at); `pairs`: framework,
    amd_hardware, nvidia_hardware. One row per AMD lane and night it ran anything."""
    if jobs.empty or pairs.empty:
        return pd.DataFrame(columns=COLUMNS)
    every = pd.to_datetime(jobs["run_at"]).dt.normalize()
    ran = np.flatnonzero(jobs[EXECUTED].sum(axis=1).to_numpy() > 0)  # executed a test
    acc_nights = pd.to_datetime(accuracy["run_at"]).dt.normalize() \
        if not accuracy.empty else pd.Series([], dtype="datetime64[ns]")
    # per (framework, hardware): the nights it ran anything, the suites that executed tests
    # each night, the nights with accuracy results (sets, not a frame filtered per night)
    # (each distinct key once: thousands of jobs and accuracy rows, a few hundred nights)
    nights_of: dict[tuple, set] = {}
    for fw, hw, night in distinct(jobs["framework"], jobs["hardware"], every):
        nights_of.setdefault((fw, hw), set()).add(night)
    suites_of: dict[tuple, dict] = {}
    for fw, hw, night, suite in distinct(*(c.iloc[ran] for c in (
            jobs["framework"], jobs["hardware"], every, jobs["suite"]))):
        suites_of.setdefault((fw, hw), {}).setdefault(night, set()).add(suite)
    gates_of: dict[tuple, set] = {}
    if not accuracy.empty:
        for fw, hw, night in distinct(accuracy["framework"], accuracy["hardware"],
                                      acc_nights):
            gates_of.setdefault((fw, hw), set()).add(night)
    rows = []
    lanes = zip(*(pairs[c].tolist() for c in ("framework", "amd_hardware", "nvidia_hardware")))
    for fw, amd, ref in dict.fromkeys(k for k in lanes if not any(pd.isna(x) for x in k)):
        ref_suites, amd_suites = suites_of.get((fw, ref), {}), suites_of.get((fw, amd), {})
        ref_gates, amd_gates = gates_of.get((fw, ref), set()), gates_of.get((fw, amd), set())
        ref_nights = sorted(ref_suites)
        for night in sorted(nights_of.get((fw, amd), ())):
            week = ref_nights[bisect.bisect_left(ref_nights, night - WEEK):
                              bisect.bisect_right(ref_nights, night)]
            expected = set().union(*(ref_suites[n] for n in week))
            executed = amd_suites.get(night, set())
            missing = sorted(expected - executed)
            gate_ref = any(night - WEEK <= n <= night for n in ref_gates)
            gate_amd = night in amd_gates
            why = []
            if not executed:
                why.append("no test executed")
            elif missing:
                why.append(f"{len(missing)} of the reference's {len(expected)} suites not run")
            if gate_ref and not gate_amd:
                why.append("no accuracy gate (the reference has one)")
            if not expected:
                why.append(f"{ref} ran no tests that week: nothing to compare")
            rows.append(dict(framework=fw, amd_hardware=amd, nvidia_hardware=ref, night=night,
                             suites_reference=len(expected),
                             suites_executed=len(executed & expected) if expected else len(executed),
                             missing_suites=", ".join(missing), reference_gate=gate_ref,
                             amd_gate=gate_amd, complete=not why, why="; ".join(why)))
    out = pd.DataFrame(rows, columns=COLUMNS)
    return out.sort_values(["framework", "amd_hardware", "night"]).reset_index(drop=True)


def share(nights: pd.DataFrame) -> pd.DataFrame:
    """Per lane: nights, complete nights, and their share (NaN without nights)."""
    cols = ["framework", "amd_hardware", "nvidia_hardware", "verdict_nights",
            "complete_nights", "verdict_completeness"]
    if nights.empty:
        return pd.DataFrame(columns=cols)
    g = nights.groupby(["framework", "amd_hardware", "nvidia_hardware"])["complete"]
    out = pd.DataFrame({"verdict_nights": g.size(), "complete_nights": g.sum()}).reset_index()
    out["verdict_completeness"] = np.where(out["verdict_nights"] > 0,
                                           out["complete_nights"] / out["verdict_nights"], np.nan)
    return out[cols]
