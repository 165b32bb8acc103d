"""Change points in a performance series: our own small, deterministic NumPy detector.

Narrowest-over-threshold selection over seeded intervals (Baranowski, Chen and Fryzlewicz
2019; Kovács, Li, Bühlmann and Munk 2023), with the fixes that
`../shared/docs/regression-and-flake-detection.md` calls for:

- **Every configuration of levels.** Binary segmentation looks for one best split of the
  whole series, and a regression that is reverted 30 runs later has none: the bump returns to
  its old level. Here every interval of a fixed, deterministic family (lengths shrinking by
  1/√2 down to `2 * MIN_SIZE + 2` points, each length at four shifts per interval length) is
  scanned for its best split, and the *narrowest* interval whose best split is significant
  wins; intervals containing it are dropped and the search repeats. A narrow interval holds
  one change, so both ends of a bump, and both steps of a staircase, are found.
- **One calibrated threshold for all scales.** Each interval's statistic (the two-sample z
  of its best split, with the noise from the first differences of the whole series) is
  penalised by `sqrt(2 log(e n / length))`, so that short intervals, of which there are
  many, need more evidence than the whole series. The threshold on the penalised maximum is
  the 1 % null quantile from simulated series (`calibrate()`, kept in `CALIBRATION`).
- **Robust to outliers.** Isolated spikes (up to three in a row) are found against a running
  median and replaced by it before anything else.
- **Minimum effect size.** A change smaller than `min_effect` (relative) is not reported.
- **Persistence.** A change needs `min_after` points after it; a candidate with fewer is
  returned as *pending*, never as a finding.
- **Recent changes.** The last `TAIL` positions after the last change are also tested on
  their own, against the calibrated null quantile of the best of those few splits
  (`TAIL_CALIBRATION`): a new regression is found about 5 points after it happens.
- **Drift reported separately.** A slow ramp is not a change point: a split that a straight
  line explains as well as a step is dropped, and a significant Theil-Sen slope over the
  series is reported as drift.
- **Located where a culprit can be found.** Within its segment a change's position has a
  likelihood profile; the reported index d most probably satisfies start - EARLY <= d <=
  start + LATE, the scoring rule of the study (section 5.3): naming a run before the change
  would send a bisection to commits that cannot hold the culprit, so when the start is
  uncertain the estimate errs late, not early; when it is clear, the likeliest start is
  named. `earliest` and `latest` bound the 90 % interval of the start.

Everything is a pure function of the input; the same series gives the same answer.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

MIN_SIZE = 3  # shortest segment on either side of a split
DECAY = 2 ** -0.5  # interval lengths shrink by this factor per layer
OVERLAP = 4  # shifts per interval length: consecutive intervals of a layer overlap by 3/4
ALPHA = 0.01
# The null quantile (1 - ALPHA) of the largest penalised interval statistic for series of
# length n: produced by `calibrate()` (Gaussian nulls, seed 0, 20,000 series per length).
# Lengths in between are interpolated on log n.
CALIBRATION = (  # (n, threshold): the output of calibrate(); tests/test_changepoint.py checks it
    (8, 4.271), (12, 4.121), (16, 3.593), (24, 3.172), (32, 2.993), (48, 2.791), (64, 2.778),
    (100, 2.694), (150, 2.648), (200, 2.651), (300, 2.613), (500, 2.668), (1000, 2.68),
    (2000, 2.712),
)
# The tail test: a change in the last TAIL points after the last change is judged on its
# own, against the null quantile of the best split among those few positions only
# (`calibrate_tail()`), which needs far less evidence than a split anywhere; it cuts the
# detection delay of a new change without loosening the test for the rest of the series.
TAIL = 8
TAIL_CALIBRATION = (  # (n, threshold): the output of calibrate_tail() (seed 0, 20,000 series)
    (16, 4.388), (24, 3.641), (32, 3.483), (48, 3.3), (64, 3.176), (100, 3.137), (200, 3.076),
    (500, 2.99), (1000, 3.029),
)
# Where a change is placed: the index d that most probably satisfies
# tau - EARLY <= d <= tau + LATE for the true start tau.
EARLY, LATE = 2, 5
SLACK = 0.01  # among placements this close to the best, the likeliest start is named
CLEAN_WIDTH, CLEAN_K = 7, 4.5  # running-median width, spike threshold in robust SDs


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
    earliest: int = -1  # the 90 % interval of the start (input indices)
    latest: int = -1

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


@lru_cache(maxsize=64)
def _windows(n: int, width: int) -> np.ndarray:
    """The positions of each point's running window, as an (n, width) index grid over the
    series reflected at both ends ("edge" would let a spike at either end stand). Cached by
    length: the views run the detector on hundreds of series of the same few lengths."""
    half = width // 2
    grid = np.lib.stride_tricks.sliding_window_view(
        np.pad(np.arange(n), half, mode="reflect"), width).copy()
    grid.flags.writeable = False
    return grid


def _median_filter(y: np.ndarray, width: int = CLEAN_WIDTH) -> np.ndarray:
    windows = y[_windows(len(y), width)]
    if width % 2:  # an odd window's median is its middle value: one sort, no mean
        return np.sort(windows, axis=-1)[:, width // 2]
    return np.median(windows, axis=-1)


def _median(x: np.ndarray):
    """`np.median` of a 1-D array of finite numbers, the same to the bit (the middle value,
    or the mean of the middle two), without its general machinery: the detector takes
    several medians of every short series."""
    if not len(x):
        return np.median(x)
    s = np.sort(x)
    half = len(s) // 2
    return s[half] if len(s) % 2 else (s[half - 1] + s[half]) / 2


def clean(y: np.ndarray, k: float = CLEAN_K) -> tuple[np.ndarray, np.ndarray]:
    """Replace isolated spikes by the running median. Returns (cleaned, outlier mask)."""
    if len(y) < 5:
        return y.copy(), np.zeros(len(y), bool)
    smooth = _median_filter(y)
    resid = y - smooth
    scale = 1.4826 * _median(np.abs(resid - _median(resid)))
    if scale <= 0:
        scale = np.std(resid) or 1.0
    mask = np.abs(resid) > k * scale
    out = y.copy()
    out[mask] = smooth[mask]
    return out, mask


def noise(y: np.ndarray) -> float:
    """The noise SD, from first differences: a step moves one difference, not the spread."""
    return float(np.std(np.diff(y)) / math.sqrt(2)) if len(y) > 2 else 0.0


@lru_cache(maxsize=512)
def intervals(n: int, min_size: int = MIN_SIZE) -> tuple[tuple[int, np.ndarray], ...]:
    """The seeded intervals of a series of n points: (length, start positions) per layer,
    from the whole series down to 2 * min_size + 2 points. Deterministic (and cached: the
    arrays are shared, never to be written)."""
    out, length = [], float(n)
    while round(length) >= 2 * min_size + 2:
        size = int(round(length))
        count = math.ceil(OVERLAP * (n - size) / size) + 1
        starts = np.unique(np.round(np.linspace(0, n - size, count)).astype(int))
        starts.flags.writeable = False
        out.append((size, starts))
        length *= DECAY
    return tuple(out)


def penalty(length: int, n: int) -> float:
    """What an interval's statistic must give up for its scale: sqrt(2 log(e n / length))."""
    return math.sqrt(2 * math.log(math.e * n / length))


@lru_cache(maxsize=64)  # (at most 0.9 MB each: only series up to FLAT_SCAN points)
def _cells(n: int, min_size: int = MIN_SIZE) -> tuple[np.ndarray, ...]:
    """Every seeded interval of n points (`intervals`, layer by layer) and every split of
    each, flattened, with what depends on the positions only computed once: per interval
    its start, end, penalty, first cell and number of cells; per cell its interval, the
    position of its split (`pos`), the points left (`k`) and right (`rest`) of it and the
    z statistic's scale. Its size is the splits' count, O(n log n) (cached by length, never
    written)."""
    layers = intervals(n, min_size)
    if not layers:
        return ()
    start = np.concatenate([starts for _, starts in layers])
    size = np.concatenate([np.full(len(starts), size) for size, starts in layers])
    penalties = np.concatenate([np.full(len(starts), penalty(size, n))
                                for size, starts in layers])
    counts = size - 2 * min_size + 1  # splits per interval
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    row = np.repeat(np.arange(len(start)), counts)
    k = np.arange(len(row)) - first[row] + min_size
    rest = size[row] - k
    scale = np.sqrt(1.0 / k + 1.0 / rest)
    out = (start, start + size, penalties, first, counts, row, start[row] + k, k, rest, scale)
    for a in out:
        a.flags.writeable = False
    return out


# up to this length a series is scanned in one flat pass over all its splits; beyond it,
# layer by layer: a short series' scan is bound by the number of array operations (a few per
# layer), a long one's by memory (the flat pass reads five arrays per split)
FLAT_SCAN = 600


def scan(y: np.ndarray, sigma: float, min_size: int = MIN_SIZE) -> np.ndarray:
    """Every seeded interval's best split: rows of (start, end, split, penalised z), layer
    by layer as `intervals` gives them. Both ways of computing it apply the same operations
    to the same numbers and take the first largest split (np.argmax's rule), so they give
    the same result to the bit."""
    return (_scan_layers if len(y) > FLAT_SCAN else _scan_flat)(y, sigma, min_size)


def _scan_flat(y: np.ndarray, sigma: float, min_size: int) -> np.ndarray:
    """`scan`, every split of every interval in one pass (`_cells`)."""
    cells = _cells(len(y), min_size)
    if not cells:
        return np.empty((0, 4))
    start, end, penalties, first, counts, row, pos, k, rest, scale = cells
    c = np.concatenate([[0.0], np.cumsum(y)])
    base = c[start]
    left = c[pos] - base[row]
    total = (c[end] - base)[row]
    z = np.abs((total - left) / rest - left / k) / scale
    if np.isnan(z).any():  # (values near the float range's ends) np.argmax per interval
        best = np.array([f + int(np.argmax(z[f:f + m])) for f, m in zip(first, counts)])
    else:  # the first cell of each interval that holds its maximum
        hit = np.flatnonzero(z == np.maximum.reduceat(z, first)[row])
        best = hit[np.r_[True, row[hit][1:] != row[hit][:-1]]]
    return np.column_stack([start, end, pos[best], z[best] / sigma - penalties])


def _scan_layers(y: np.ndarray, sigma: float, min_size: int) -> np.ndarray:
    """`scan`, one layer of intervals at a time."""
    n = len(y)
    c = np.concatenate([[0.0], np.cumsum(y)])
    rows = []
    for size, starts in intervals(n, min_size):
        k = np.arange(min_size, size - min_size + 1)  # points left of the split
        left = c[starts[:, None] + k] - c[starts][:, None]
        total = (c[starts + size] - c[starts])[:, None]
        z = np.abs((total - left) / (size - k) - left / k) / np.sqrt(1.0 / k + 1.0 / (size - k))
        best = np.argmax(z, axis=1)
        rows.append(np.column_stack([starts, starts + size, starts + k[best],
                                     z[np.arange(len(starts)), best] / sigma
                                     - penalty(size, n)]))
    return np.vstack(rows) if rows else np.empty((0, 4))


def narrowest(candidates: np.ndarray, limit: float, most: int) -> list[tuple[int, float]]:
    """Narrowest-over-threshold: (split, statistic) of the narrowest interval whose statistic
    exceeds `limit`, then the same among the intervals not containing that split."""
    c = candidates[candidates[:, 3] > limit]
    found = []
    while len(c) and len(found) < most:
        i = int(np.lexsort((-c[:, 3], c[:, 1] - c[:, 0]))[0])
        split = int(c[i, 2])
        found.append((split, float(c[i, 3])))
        c = c[(c[:, 0] >= split) | (c[:, 1] <= split)]
    return sorted(found)


def _max_statistic(y: np.ndarray) -> float:
    sigma = noise(y)
    return float(scan(y, sigma)[:, 3].max()) if sigma > 0 else 0.0


def _null_quantiles(statistic, lengths, sims: int, alpha: float, seed: int):
    """Per length, the (1 - alpha) quantile of `statistic` on cleaned Gaussian null series."""
    out = []
    for n in lengths:
        rng = np.random.default_rng([seed, n])  # each length its own stream: reproducible alone
        best = np.empty(sims)
        for i in range(sims):
            best[i] = statistic(clean(rng.standard_normal(n))[0])
        out.append((n, round(float(np.quantile(best, 1 - alpha)), 3)))
    return tuple(out)


def calibrate(lengths=(8, 12, 16, 24, 32, 48, 64, 100, 150, 200, 300, 500, 1000, 2000),
              sims: int = 20000, alpha: float = ALPHA, seed: int = 0) -> tuple[tuple[int, float], ...]:
    """The null quantile of the largest penalised interval statistic per length: the table
    `CALIBRATION`."""
    return _null_quantiles(_max_statistic, lengths, sims, alpha, seed)


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


def calibrate_tail(lengths=(16, 24, 32, 48, 64, 100, 200, 500, 1000), sims: int = 20000,
                   alpha: float = ALPHA, min_after: int = 3, seed: int = 0):
    """The null quantile of the tail statistic per length: the table `TAIL_CALIBRATION`."""
    return _null_quantiles(lambda y: _tail_best(y, min_after)[1], lengths, sims, alpha, seed)


@lru_cache(maxsize=1024)
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


def locate(y: np.ndarray, sigma: float, min_size: int = MIN_SIZE) -> tuple[int, int, int]:
    """Where the one change in `y` starts: (index, earliest, latest) from the likelihood of
    each split; the index most probably within [start - EARLY, start + LATE] (within `SLACK`
    of that probability, the likeliest start itself), and the 90 % interval of the start."""
    n = len(y)
    k = np.arange(min_size, n - min_size + 1)
    c1, c2 = np.cumsum(y), np.cumsum(y * y)
    left = c1[k - 1]
    sse = c2[-1] - left ** 2 / k - (c1[-1] - left) ** 2 / (n - k)
    p = np.exp(-(sse - sse.min()) / (2 * sigma * sigma)) if sigma > 0 else \
        (sse == sse.min()).astype(float)
    p /= p.sum()
    mass = np.concatenate([[0.0], np.cumsum(p)])
    inside = mass[np.searchsorted(k, k + EARLY, side="right")] - mass[np.searchsorted(k, k - LATE)]
    best = np.flatnonzero(inside >= inside.max() - SLACK)  # near-ties: the likeliest start
    at = best[np.argmax(p[best])]
    lo, hi = np.searchsorted(mass[1:], [0.05, 0.95])
    return int(k[at]), int(k[min(lo, len(k) - 1)]), int(k[min(hi, len(k) - 1)])


# the pairs of a series up to this length are kept (2.9 MB at most, 16 lengths); a longer
# series' pairs are made for each call (5,000 points: 200 MB)
KEPT_PAIRS = 600


def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair i < j of n points (`np.triu_indices`), kept for short series."""
    return _kept_pairs(n) if n <= KEPT_PAIRS else np.triu_indices(n, 1)


@lru_cache(maxsize=16)
def _kept_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    i, j = np.triu_indices(n, 1)
    i.flags.writeable = j.flags.writeable = False
    return i, j


def _drift(y: np.ndarray, level: float, alpha_z: float = 3.0) -> Drift | None:
    """Theil-Sen slope with a Mann-Kendall test; reported when |z| > alpha_z."""
    n = len(y)
    if n < 10 or level == 0:
        return None
    i, j = _pairs(n)
    diff = y[j] - y[i]
    s = float(np.sign(diff).sum())
    var = n * (n - 1) * (2 * n + 5) / 18.0
    z = (s - math.copysign(1, s)) / math.sqrt(var) if s else 0.0
    if abs(z) <= alpha_z:
        return None
    slope = float(_median(diff / (j - i))) / abs(level)
    return Drift(slope=slope, total=slope * (n - 1), z=z)


def _without_drift(y: np.ndarray, splits: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """The splits a step explains better than a line, each judged between its neighbours."""
    splits = list(splits)
    i = 0
    while i < len(splits):
        lo = splits[i - 1][0] if i else 0
        hi = splits[i + 1][0] if i + 1 < len(splits) else len(y)
        if _step_beats_line(y[lo:hi], splits[i][0] - lo):
            i += 1
        else:  # its neighbours' segments grow: judge them again
            splits.pop(i)
            i = max(i - 1, 0)
    return splits


# detect() is a pure function of a series and its settings, and the views run it on the
# same few hundred series again and again (the headline, regressions and alerts of one page,
# each reload): a process keeps the detections of the series it has seen, up to a bound
_SEEN: dict[tuple, Detection] = {}
SEEN_KEPT = 20_000


def detect(values, *, min_effect: float = 0.02, min_after: int = 3,
           min_size: int = MIN_SIZE, max_changes: int = 10) -> Detection:
    """Change points of a series (oldest first). NaNs are ignored (indices refer to the input).

    `min_effect` is the smallest relative change reported; `min_after` the number of points a
    change needs after it before it is a finding (fewer: pending). The result is shared
    between calls on the same series: read it, do not change it."""
    raw = np.asarray(values, dtype=float)
    key = (raw.tobytes(), min_effect, min_after, min_size, max_changes)
    found = _SEEN.get(key)
    if found is None:
        found = _detect(raw, min_effect, min_after, min_size, max_changes)
        if len(_SEEN) >= SEEN_KEPT:
            _SEEN.clear()
        _SEEN[key] = found
    return found


def _detect(raw: np.ndarray, min_effect: float, min_after: int, min_size: int,
            max_changes: int) -> Detection:
    keep = np.flatnonzero(np.isfinite(raw))
    y = raw[keep]
    if len(y) < 2 * min_size:
        return Detection()
    y, mask = clean(y)
    n = len(y)
    sigma = noise(y)
    limit = threshold(n)
    found = []
    if sigma > 0:
        found = _without_drift(y, narrowest(scan(y, sigma, min_size), limit, max_changes))
    scored = [(k, score, limit) for k, score in found]
    lo = found[-1][0] if found else 0
    if n - lo >= 2 * TAIL and len(scored) < max_changes:  # a change too recent for the scan
        seg = y[lo:]
        k, score = _tail_best(seg, min_after)
        limit_tail = tail_threshold(len(seg))
        if k > min_size and score > limit_tail and _step_beats_line(seg, k):
            scored.append((lo + k, score, limit_tail))
    # each change placed within the segment between its neighbours
    starts = [s[0] for s in scored]
    bounds = [0] + starts + [n]
    placed = []
    for i in range(len(starts)):
        at, first, last = locate(y[bounds[i]:bounds[i + 2]], sigma, min_size)
        placed.append((bounds[i] + at, bounds[i] + first, bounds[i] + last))
    bounds = [0] + [p[0] for p in placed] + [n]
    changes, pending = [], []
    for i, ((k, first, last), (_, score, limit_k)) in enumerate(zip(placed, scored)):
        before = float(_median(y[bounds[i]:k]))
        after = float(_median(y[k:bounds[i + 2]]))
        rel = (after - before) / abs(before) if before else math.inf
        if abs(rel) < min_effect:
            continue
        cp = ChangePoint(index=int(keep[k]), before=before, after=after, rel_change=rel,
                         score=score, threshold=limit_k, points_after=n - k,
                         earliest=int(keep[first]), latest=int(keep[last]))
        (changes if cp.points_after >= min_after else pending).append(cp)
    drift = None if changes else _drift(y, float(_median(y)))
    if drift is not None and abs(drift.total) < min_effect:
        drift = None
    return Detection(changes=changes, pending=pending, drift=drift,
                     outliers=[int(keep[i]) for i in np.flatnonzero(mask)])
