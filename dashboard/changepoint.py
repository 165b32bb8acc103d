"""Change points in a performance series: our own small, deterministic NumPy detector.

In the E-Divisive / Hunter family (binary segmentation on the best split), with the fixes the
study in `../shared/docs/regression-and-flake-detection.md` calls for:

- **Robust to outliers.** Isolated spikes are found against a running median (a median filter
  keeps steps and removes spikes) and replaced by it before the split search.
- **Calibrated threshold.** The best-split statistic's nominal p-value is anti-conservative, so
  its threshold comes from simulated null series (`calibrate()`), kept in `THRESHOLDS`.
- **Minimum effect size.** A change smaller than `min_effect` (relative) is not reported.
- **Persistence.** A change needs `min_after` points after it; a candidate with fewer is
  returned as *pending*, never as a finding.
- **Recent changes.** A split anywhere in n points needs strong evidence (the maximum of n
  statistics), so a change a few points from the end would wait for more data. The last
  `TAIL` positions are therefore also tested on their own, against the calibrated null
  quantile of the best of those few splits (`TAIL_CALIBRATION`): a new regression is found
  about 5 points after it happens instead of 8, at the same 1 % level per test.
- **Drift reported separately.** A slow ramp is not a change point: a split that a straight
  line explains as well as a step is dropped, and a significant Theil-Sen slope over the series
  is reported as drift.

Everything is a pure function of the input; the same series gives the same answer.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

# Null quantiles of the best-split statistic (after outlier replacement) for series of
# length n, at one-sided tail 1 %: produced by `calibrate()` (Gaussian nulls, seed 0,
# 4,000 series per length). Lengths in between are interpolated on log n.
CALIBRATION = (  # (n, threshold): the output of calibrate(); tests/test_changepoint.py checks it
    (8, 9.071), (12, 7.506), (16, 6.04), (24, 5.528), (32, 5.005), (48, 4.402), (64, 4.29),
    (100, 4.007), (150, 4.112), (200, 4.118), (300, 3.989), (500, 3.988), (1000, 3.992),
    (2000, 3.994),
)
MIN_SIZE = 3  # shortest segment on either side of a split
# The tail test: a change in the last TAIL points of a series is judged on its own, against
# the null quantile of the best split among those few positions only (`calibrate_tail()`),
# which needs far less evidence than a split anywhere; it cuts the detection delay of a new
# change without loosening the test for the rest of the series.
TAIL = 8
TAIL_CALIBRATION = (  # (n, threshold): the output of calibrate_tail() (seed 0, 4,000 series)
    (16, 5.559), (24, 4.499), (32, 4.061), (48, 3.601), (64, 3.417), (100, 3.313), (200, 3.228),
    (500, 3.247), (1000, 3.088),
)
ALPHA = 0.01


@dataclass(frozen=True)
class ChangePoint:
    """A shift in level: `index` is the first point of the new regime."""

    index: int
    before: float  # median of the segment before
    after: float  # median of the segment after
    rel_change: float  # (after - before) / |before|
    score: float  # the split statistic
    threshold: float  # what it had to exceed
    points_after: int

    @property
    def confidence(self) -> float:
        """How far past the threshold, as a ratio (1.0 = just significant)."""
        return self.score / self.threshold if self.threshold else float("inf")


@dataclass(frozen=True)
class Drift:
    slope: float  # per point, relative to the series median
    total: float  # relative change over the series
    z: float  # Mann-Kendall statistic


@dataclass(frozen=True)
class Detection:
    changes: list[ChangePoint] = field(default_factory=list)
    pending: list[ChangePoint] = field(default_factory=list)
    drift: Drift | None = None
    outliers: list[int] = field(default_factory=list)


def _median_filter(y: np.ndarray, width: int = 5) -> np.ndarray:
    half = width // 2
    padded = np.pad(y, half, mode="edge")
    windows = np.lib.stride_tricks.sliding_window_view(padded, width)
    return np.median(windows, axis=-1)


def clean(y: np.ndarray, k: float = 4.0) -> tuple[np.ndarray, np.ndarray]:
    """Replace isolated spikes by the running median. Returns (cleaned, outlier mask)."""
    if len(y) < 5:
        return y.copy(), np.zeros(len(y), bool)
    smooth = _median_filter(y)
    resid = y - smooth
    scale = 1.4826 * np.median(np.abs(resid - np.median(resid)))
    if scale <= 0:
        scale = np.std(resid) or 1.0
    mask = np.abs(resid) > k * scale
    out = y.copy()
    out[mask] = smooth[mask]
    return out, mask


def split_scores(y: np.ndarray, min_size: int = MIN_SIZE) -> np.ndarray:
    """For each split k (segments y[:k], y[k:]), the two-sample t statistic with the pooled
    within-segment deviation; NaN where a side is shorter than `min_size`. O(n)."""
    n = len(y)
    scores = np.full(n, np.nan)
    if n < 2 * min_size:
        return scores
    y = y - y.mean()
    c1 = np.cumsum(y)
    c2 = np.cumsum(y * y)
    k = np.arange(min_size, n - min_size + 1)
    s_left, q_left = c1[k - 1], c2[k - 1]
    s_right, q_right = c1[-1] - s_left, c2[-1] - q_left
    m_left, m_right = s_left / k, s_right / (n - k)
    sse = (q_left - s_left * m_left) + (q_right - s_right * m_right)
    sd = np.sqrt(np.maximum(sse, 0) / max(n - 2, 1))
    se = sd * np.sqrt(1.0 / k + 1.0 / (n - k))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(m_right - m_left) / se
    t[~np.isfinite(t)] = 0.0
    scores[k] = t
    return scores


def _best(y: np.ndarray, min_size: int) -> tuple[int, float]:
    scores = split_scores(y, min_size)
    if np.all(np.isnan(scores)):
        return -1, 0.0
    k = int(np.nanargmax(scores))
    return k, float(scores[k])


def _null_quantiles(statistic, lengths, sims: int, alpha: float, seed: int):
    """Per length, the (1 - alpha) quantile of `statistic` on cleaned Gaussian null series."""
    rng = np.random.default_rng(seed)
    out = []
    for n in lengths:
        best = np.empty(sims)
        for i in range(sims):
            best[i] = statistic(clean(rng.standard_normal(n))[0])
        out.append((n, round(float(np.quantile(best, 1 - alpha)), 3)))
    return tuple(out)


def calibrate(lengths=(8, 12, 16, 24, 32, 48, 64, 100, 150, 200, 300, 500, 1000, 2000),
              sims: int = 4000, alpha: float = ALPHA, seed: int = 0) -> tuple[tuple[int, float], ...]:
    """The null quantile of the best-split statistic per length: the table `CALIBRATION`."""
    return _null_quantiles(lambda y: _best(y, MIN_SIZE)[1], lengths, sims, alpha, seed)


def _tail_best(y: np.ndarray, min_after: int) -> tuple[int, float]:
    """The best split among the last TAIL positions (at least `min_after` points after)."""
    n = len(y)
    scores = split_scores(y, MIN_SIZE)
    lo, hi = max(MIN_SIZE, n - TAIL), n - min_after
    if hi < lo:
        return -1, 0.0
    window = scores[lo:hi + 1]
    if not np.isfinite(window).any():
        return -1, 0.0
    i = int(np.nanargmax(window))
    return lo + i, float(window[i])


def calibrate_tail(lengths=(16, 24, 32, 48, 64, 100, 200, 500, 1000), sims: int = 4000,
                   alpha: float = ALPHA, min_after: int = 3, seed: int = 0):
    """The null quantile of the tail statistic per length: the table `TAIL_CALIBRATION`."""
    return _null_quantiles(lambda y: _tail_best(y, min_after)[1], lengths, sims, alpha, seed)


def _lookup(table, n: int) -> float:
    ns = np.array([c[0] for c in table], float)
    ts = np.array([c[1] for c in table], float)
    n = min(max(n, ns[0]), ns[-1])
    return float(np.interp(math.log(n), np.log(ns), ts))


def threshold(n: int) -> float:
    """The calibrated threshold for a series of length n (log-interpolated)."""
    return _lookup(CALIBRATION, n)


def tail_threshold(n: int) -> float:
    """The calibrated threshold of the tail test for a segment of length n."""
    return _lookup(TAIL_CALIBRATION, n)


def _step_beats_line(y: np.ndarray, k: int) -> bool:
    """Whether a step at k explains y better than a straight line (else it is drift)."""
    x = np.arange(len(y), dtype=float)
    slope, intercept = np.polyfit(x, y, 1)
    sse_line = float(np.sum((y - (slope * x + intercept)) ** 2))
    left, right = y[:k], y[k:]
    sse_step = float(np.sum((left - left.mean()) ** 2) + np.sum((right - right.mean()) ** 2))
    n = len(y)
    if sse_step <= 0:
        return sse_line > 0
    # BIC-style: the step must beat the line by more than the price of its location
    return n * math.log(sse_line / sse_step) > math.log(n)


def _drift(y: np.ndarray, level: float, alpha_z: float = 3.0) -> Drift | None:
    """Theil-Sen slope with a Mann-Kendall test; reported when |z| > alpha_z."""
    n = len(y)
    if n < 10 or level == 0:
        return None
    i, j = np.triu_indices(n, 1)
    diff = y[j] - y[i]
    s = float(np.sign(diff).sum())
    var = n * (n - 1) * (2 * n + 5) / 18.0
    z = (s - math.copysign(1, s)) / math.sqrt(var) if s else 0.0
    if abs(z) <= alpha_z:
        return None
    slope = float(np.median(diff / (j - i))) / abs(level)
    return Drift(slope=slope, total=slope * (n - 1), z=z)


def detect(values, *, min_effect: float = 0.02, min_after: int = 3,
           min_size: int = MIN_SIZE, max_changes: int = 10) -> Detection:
    """Change points of a series (oldest first). NaNs are ignored (indices refer to the input).

    `min_effect` is the smallest relative change reported; `min_after` the number of points a
    change needs after it before it is a finding (fewer: pending)."""
    raw = np.asarray(values, dtype=float)
    keep = np.flatnonzero(np.isfinite(raw))
    y = raw[keep]
    if len(y) < 2 * min_size:
        return Detection()
    y, mask = clean(y)
    level = float(np.median(y))
    found: list[tuple[int, float, float]] = []  # (index in y, score, threshold)
    segments = [(0, len(y))]
    while segments and len(found) < max_changes:
        lo, hi = segments.pop()
        seg = y[lo:hi]
        k, score = _best(seg, min_size)
        limit = threshold(len(seg))
        if k < 0 or score <= limit or not _step_beats_line(seg, k):
            continue
        found.append((lo + k, score, limit))
        segments += [(lo, lo + k), (lo + k, hi)]
    found.sort()
    lo = found[-1][0] if found else 0
    if TAIL_CALIBRATION and len(y) - lo >= 2 * TAIL:  # a change too recent for the scan
        seg = y[lo:]
        k, score = _tail_best(seg, min_after)
        limit = tail_threshold(len(seg))
        if k > 0 and score > limit and _step_beats_line(seg, k):
            found.append((lo + k, score, limit))
    bounds = [0] + [f[0] for f in found] + [len(y)]
    changes, pending = [], []
    for i, (k, score, limit) in enumerate(found):
        before = float(np.median(y[bounds[i]:k]))
        after = float(np.median(y[k:bounds[i + 2]]))
        rel = (after - before) / abs(before) if before else math.inf
        if abs(rel) < min_effect:
            continue
        cp = ChangePoint(index=int(keep[k]), before=before, after=after, rel_change=rel,
                         score=score, threshold=limit, points_after=len(y) - k)
        (changes if cp.points_after >= min_after else pending).append(cp)
    drift = None if changes else _drift(y, level)
    if drift is not None and abs(drift.total) < min_effect:
        drift = None
    return Detection(changes=changes, pending=pending, drift=drift,
                     outliers=[int(keep[i]) for i in np.flatnonzero(mask)])
