"""AMD's software stack night by night, pure: the pass rate of ROCm itself, PyTorch and JAX
as TheRock's release runs (ROCm/Quartz) report them, per GPU architecture and night, with the
status of the builds that night. A lane whose build succeeded and whose tests did not run has
no pass rate (NaN) and says "build only", never 100 %."""
from __future__ import annotations

import numpy as np
import pandas as pd

REPOSITORY = "ROCm/TheRock"  # the runs the Quartz status documents describe
COLUMNS = ["night", "framework", "hardware", "build", "tested", "passed", "failed", "skipped",
           "pass_rate", "verdict", "run_url"]


def nightly(jobs: pd.DataFrame) -> pd.DataFrame:
    """One row per night × component × architecture: the build's status (worst of the
    night's build jobs), how many test-matrix entries ran and passed, and the verdict:
    `passing`, `failing`, `build only` (built, nothing tested), `tests running` (built, tests
    dispatched but not finished when the status was written) or `build failed`."""
    j = jobs[jobs["repository"] == REPOSITORY] if not jobs.empty else jobs
    if j.empty:
        return pd.DataFrame(columns=COLUMNS)
    j = j[j["suite"] != "therock-native-packages"]  # platform-wide, no architecture
    if j.empty:
        return pd.DataFrame(columns=COLUMNS)
    j = j.assign(night=pd.to_datetime(j["run_at"]).dt.normalize(),
                 is_build=j["job_id"].astype(str).str.contains("/build/"))
    rows = []
    for (night, fw, hw), g in j.groupby(["night", "framework", "hardware"], sort=True):
        builds = g.loc[g["is_build"], "conclusion"]
        build = ("failure" if (builds == "failure").any() else
                 "success" if (builds == "success").any() else
                 (builds.iloc[0] if len(builds) else ""))
        t = g[~g["is_build"]]
        passed, failed = int(t["passed"].sum()), int(t["failed"].sum() + t["error"].sum())
        skipped = int(t["skipped"].sum())
        tested = passed + failed
        rate = passed / tested if tested else np.nan
        running = (t["conclusion"] == "in_progress").any()
        verdict = ("build failed" if build == "failure" else
                   "tests running" if not tested and running else
                   "build only" if not tested else
                   "failing" if failed else "passing")
        rows.append(dict(night=night, framework=fw, hardware=hw, build=build, tested=tested,
                         passed=passed, failed=failed, skipped=skipped, pass_rate=rate,
                         verdict=verdict, run_url=g["run_url"].iloc[0]))
    return pd.DataFrame(rows, columns=COLUMNS).sort_values(
        ["night", "framework", "hardware"], ascending=[False, True, True]).reset_index(drop=True)
