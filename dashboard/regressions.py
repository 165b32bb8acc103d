"""Regressions, pure: change points in every performance series (`changepoint.detect`), new
test failures, accuracy drops and cliffs, as one list of findings that each say where, when,
how big and how sure."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from parity.dashboard import changepoint
from parity.dashboard.accuracy import CELL
from parity.dashboard.groups import key_codes, members
from parity.dashboard.intervals import two_proportion
from parity.dashboard.performance import SERIES, config_label, config_labels

COLUMNS = ["kind", "status", "framework", "vendor", "hardware", "subject", "when", "commit",
           "size", "before", "after", "confidence", "detail", "url", "model", "metric",
           "match_key", "recovered", "lasted_runs"]


@dataclass(frozen=True)
class Episode:
    """One change point of a series, classified: a `regression` (the metric moved the wrong
    way for its direction), an `improvement`, a `change` (no direction), or the `recovery`
    that brought an earlier regression back; a regression that was brought back carries the
    change that did it (`recovery`)."""

    change: changepoint.ChangePoint
    status: str
    recovery: changepoint.ChangePoint | None = None


def episodes(found: changepoint.Detection, direction: str | None, *,
             min_effect: float = 0.02) -> list[Episode]:
    """The changes of one series as episodes. A regression has recovered at the first later
    change after which the level is back within `min_effect` of where it was before the
    regression (or better); that change is its recovery, not a separate improvement."""
    sign = 1 if direction == "higher" else -1 if direction == "lower" else 0
    out: list[Episode] = []
    recoveries: set[int] = set()
    changes = found.changes
    for i, cp in enumerate(changes):
        if i in recoveries:
            out.append(Episode(cp, "recovery"))
            continue
        if not sign:
            out.append(Episode(cp, "change"))
            continue
        if sign * cp.rel_change >= 0:
            out.append(Episode(cp, "improvement"))
            continue
        back = None
        for j in range(i + 1, len(changes)):
            if sign * (changes[j].after - cp.before) >= -min_effect * abs(cp.before):
                back = j
                break
        if back is not None:
            recoveries.add(back)
        out.append(Episode(cp, "regression" if back is None else "recovered",
                           None if back is None else changes[back]))
    return out


# the values' columns `performance` reads: the series, the run, and the config's label
_READ = frozenset(SERIES + ["vendor", "hardware", "value", "run_at", "commit", "run_url",
                            "direction", "precision", "tp", "ep", "dp", "pp", "isl", "osl",
                            "concurrency"])


def performance(values: pd.DataFrame, *, since=None, min_effect: float = 0.02,
                min_after: int = 3) -> pd.DataFrame:
    """Change points and drifts of every series (one value per run). A change is a
    regression when it moves the metric the wrong way for its direction; a regression the
    series later came back from is `recovered`, with when (`recovered`) and after how many
    runs (`lasted_runs`). With `since`: what started from then on, and the regressions that
    recovered from then on."""
    rows = []
    if values.empty:
        return pd.DataFrame(columns=COLUMNS)
    # the columns a finding reads (a window's values carry every config column besides),
    # in time order: `run_values` gives them so, and a stable sort of sorted rows is a copy
    values = values[[c for c in values.columns if c in _READ]]
    if not values["run_at"].is_monotonic_increasing:
        values = values.sort_values("run_at", kind="stable")
    values = values.reset_index(drop=True)
    numbers = values["value"].to_numpy(dtype=float)
    # each column's values by position (a row of a few thousand series' rows is read only
    # where the detector finds something: a frame per series cost more than the detector)
    column = {c: values[c].array for c in values.columns}
    keys = SERIES + ["vendor", "hardware"]
    # each series' rows, oldest first, the series in order of first appearance
    for at_rows in members(key_codes(*(values[c] for c in keys))):
        if len(at_rows) < 2 * changepoint.MIN_SIZE:
            continue
        found = changepoint.detect(numbers[at_rows], min_effect=min_effect,
                                   min_after=min_after)
        if not found.changes and found.drift is None:
            continue  # most series: nothing to say, and no row to read
        key = [column[c][at_rows[0]] for c in keys]

        def row(i: int) -> dict:
            return {c: column[c][at_rows[i]] for c in column}
        last = row(-1)
        subject = f"{last['model']} {last['metric']} {config_label(last)}".strip()
        where = dict(kind="performance", framework=key[0], vendor=key[-2], hardware=key[-1],
                     subject=subject, model=key[2], metric=key[3], match_key=key[4])
        for ep in episodes(found, last["direction"], min_effect=min_effect):
            if ep.status == "recovery":
                continue  # shown on the regression it ended
            cp = ep.change
            at = row(cp.index)
            detail = (f"step at run {cp.index + 1} of {len(at_rows)} (started between runs "
                      f"{cp.earliest + 1} and {cp.latest + 1}); score {cp.score:.1f} against "
                      f"threshold {cp.threshold:.1f}")
            recovered, lasted = None, None
            if ep.recovery is not None:
                back = row(ep.recovery.index)
                recovered, lasted = back["run_at"], ep.recovery.index - cp.index
                days = (back["run_at"] - at["run_at"]) / pd.Timedelta(days=1)
                detail += (f"; recovered at run {ep.recovery.index + 1} (commit "
                           f"{str(back['commit'] or '')[:12]}) after {lasted} runs, "
                           f"{days:.0f} days")
            rows.append(dict(where, status=ep.status, when=at["run_at"], commit=at["commit"],
                             size=cp.rel_change, before=cp.before, after=cp.after,
                             confidence=cp.confidence, detail=detail, url=at.get("run_url"),
                             recovered=recovered, lasted_runs=lasted))
        if found.drift is not None:
            rows.append(dict(where, status="drift", when=last["run_at"], commit=last["commit"],
                             size=found.drift.total, before=None, after=None,
                             confidence=abs(found.drift.z) / 3.0,
                             detail=f"trend of {found.drift.slope:+.2%} per run over "
                             f"{len(at_rows)} runs (Theil-Sen); not attributed to one commit",
                             url=last.get("run_url")))
    out = pd.DataFrame(rows, columns=COLUMNS)
    out["recovered"] = pd.to_datetime(out["recovered"])
    if since is not None and not out.empty:
        out = out[(out["when"] >= since) | (out["recovered"] >= since)]
    return out


def history(values: pd.DataFrame, *, min_effect: float = 0.02) -> pd.DataFrame:
    """Each series' runs with the detector's verdict per run: `change` where a change point
    starts, `change_kind` what it is (regression, recovery, improvement, change) and
    `segment_median` the level of the run's segment."""
    cols = ["framework", "vendor", "hardware", "model", "metric", "config", "run_at", "commit",
            "value", "change", "change_kind", "segment_median", "match_key"]
    if values.empty:
        return pd.DataFrame(columns=cols)
    values = values.assign(config=config_labels(values))
    numbers = values["value"].to_numpy(dtype=float)
    run_at = values["run_at"].to_numpy()
    directions = values["direction"].to_numpy(dtype=object) if "direction" in values else None
    rows, change, kind, level = [], [], [], []
    for at_rows in values.groupby(SERIES + ["vendor", "hardware"], sort=False,
                                  dropna=False).indices.values():
        at_rows = at_rows[np.argsort(run_at[at_rows], kind="stable")]  # oldest first
        y = numbers[at_rows]
        found = changepoint.detect(y, min_effect=min_effect)
        direction = directions[at_rows[-1]] if directions is not None else None
        kinds = {ep.change.index: "regression" if ep.status == "recovered" else ep.status
                 for ep in episodes(found, direction, min_effect=min_effect)}
        bounds = [0] + sorted(kinds) + [len(y)]
        median = np.empty(len(y))
        for a, b in zip(bounds, bounds[1:]):
            median[a:b] = np.median(y[a:b])
        named = np.full(len(y), np.nan, dtype=object)
        for at, what in kinds.items():
            named[at] = what
        rows.append(at_rows)
        change.append(np.isin(np.arange(len(y)), list(kinds)))
        kind.append(named)
        level.append(median)
    out = values.iloc[np.concatenate(rows)].reset_index(drop=True)
    out["change"] = np.concatenate(change)
    kinds_all = np.concatenate(kind)
    # no change anywhere: a column of NaN, as the frame of one series without a change has
    out["change_kind"] = pd.Series(kinds_all, dtype=object) \
        if any(isinstance(k, str) for k in kinds_all) else kinds_all.astype(float)
    out["segment_median"] = np.concatenate(level)
    return out[cols]


def new_failures(streaks: pd.DataFrame, *, flaky: pd.DataFrame | None = None, since=None,
                 min_streak: int = 3) -> pd.DataFrame:
    """The rows of `streaks` that are new failures (`tests`): a caller can read what only
    those need (their last messages) before it asks for the findings."""
    if streaks.empty:
        return streaks
    s = streaks[(streaks["streak"] >= min_streak) & (streaks["runs"] > streaks["streak"])]
    if flaky is not None and not flaky.empty:
        keys = ("framework", "hardware", "parity_id")
        known = set(zip(*(flaky[c].tolist() for c in keys)))
        s = s[np.array([k not in known for k in zip(*(s[c].tolist() for c in keys))], bool)]
    if since is not None:
        s = s[s["first_failing"] >= since]
    return s


def tests(streaks: pd.DataFrame, vendors: dict[str, str], *, flaky: pd.DataFrame | None = None,
          since=None, min_streak: int = 3) -> pd.DataFrame:
    """New failures: tests failing in at least `min_streak` consecutive latest runs that
    passed before (a test that never passed in the window is broken, not new). A test known
    to be flaky on that hardware (`flaky`, from `outcomes.flakiness`) is not a new failure."""
    s = new_failures(streaks, flaky=flaky, since=since, min_streak=min_streak)
    if s.empty:
        return pd.DataFrame(columns=COLUMNS)
    # column by column: a finding per failing test, thousands on a large store
    streak = s["streak"].to_numpy(dtype=float)
    hardware = s["hardware"].tolist()
    detail = [f"failing {n} runs in a row: {m or ''}"[:300]
              for n, m in zip(s["streak"].tolist(), s["last_message"].tolist())]
    n = len(s)
    given = {
        "kind": ["test"] * n, "status": ["new failure"] * n,
        "framework": s["framework"].tolist(),
        "vendor": [vendors.get(h, "unknown") for h in hardware], "hardware": hardware,
        "subject": s["parity_key"].tolist(), "when": s["first_failing"].tolist(),
        "commit": [None] * n, "size": streak.tolist(), "before": [None] * n,
        "after": [None] * n, "confidence": (streak / min_streak).tolist(), "detail": detail,
        "url": [None] * n}
    return pd.DataFrame({c: given[c] if c in given else np.full(n, np.nan) for c in COLUMNS})


def accuracy(history: pd.DataFrame, *, since=None, alpha: float = 0.01,
             min_drop: float = 0.02) -> pd.DataFrame:
    """Accuracy drops over time: a cell's latest score against its earlier runs pooled,
    flagged when the drop is at least max(`min_drop`, 3 run-to-run SDs) and significant.
    Cells are walked as positions in plain arrays: a window holds hundreds of cells and a
    pandas group per cell cost more than the test itself."""
    if history.empty:
        return pd.DataFrame(columns=COLUMNS)
    keys = CELL + ["vendor", "hardware"]
    run_at = history["run_at"].to_numpy()
    value = history["value"].to_numpy(dtype=float)
    n = history["n"].to_numpy(dtype=float)
    rows = []
    # each cell's rows in the history's order, cells in order of first appearance
    for rows_g in members(key_codes(*(history[k] for k in keys))):
        if len(rows_g) < 3:
            continue
        rows_g = rows_g[np.argsort(run_at[rows_g], kind="quicksort")]  # as sort_values
        prev, last = rows_g[:-1], rows_g[-1]
        n_prev = np.nan_to_num(n[prev], nan=0.0)
        n_last = n[last]
        if n_prev.sum() <= 0 or not n_last or n_last != n_last:
            continue
        base = float(np.nan_to_num(value[prev] * n_prev, nan=0.0).sum() / n_prev.sum())
        drop = base - float(value[last])
        spread = _sd(value[prev]) if len(prev) > 1 else 0.0
        z, p = two_proportion(float(value[last]), float(n_last), base, float(n_prev.sum()))
        if drop >= max(min_drop, 3 * spread) and p < alpha:
            key = history.iloc[rows_g[0]][keys].tolist()
            r = history.iloc[last]
            rows.append(dict(kind="accuracy", status="drop", framework=key[0], vendor=key[-2],
                             hardware=key[-1], subject=f"{key[1]} {key[2]} {key[5]} "
                             f"c{key[6]}".strip(), when=r["run_at"], commit=r["commit"],
                             size=-drop, before=base, after=float(value[last]),
                             confidence=-math.log10(max(p, 1e-300)) / 2,
                             detail=f"p={p:.1e} against {len(prev)} earlier runs",
                             url=r.get("job_url")))
    out = pd.DataFrame(rows, columns=COLUMNS)
    if since is not None and not out.empty:
        out = out[out["when"] >= since]
    return out


def _sd(values: np.ndarray) -> float:
    """The sample standard deviation, NaNs left out, computed as pandas' `std` does."""
    v = values[~np.isnan(values)]
    if len(v) <= 1:
        return math.nan
    avg = v.sum() / len(v)
    return float(np.sqrt(((avg - v) ** 2).sum() / (len(v) - 1)))


def cliffs(parity: pd.DataFrame) -> pd.DataFrame:
    """The cliffs of an accuracy parity frame as findings."""
    if parity.empty:
        return pd.DataFrame(columns=COLUMNS)
    c = parity[parity["cliff"]]
    rows = []
    for r in c.itertuples():
        ref = r.others_value if "concurrencies" in r.cliff_reason else r.nvidia_value
        p = r.p_others_holm if "concurrencies" in r.cliff_reason else r.p_vendor_holm
        rows.append(dict(kind="accuracy", status="cliff", framework=r.framework, vendor="amd",
                         hardware=r.amd_hardware,
                         subject=f"{r.model} {r.task} {r.config} c{int(r.concurrency)}"
                         if r.concurrency == r.concurrency else f"{r.model} {r.task} {r.config}",
                         when=r.run_at, commit=None, size=r.amd_value - ref, before=ref,
                         after=r.amd_value, confidence=-math.log10(max(p, 1e-300)) / 2,
                         detail=f"{r.cliff_reason}; Holm p={p:.1e}", url=r.job_url))
    return pd.DataFrame(rows, columns=COLUMNS)
