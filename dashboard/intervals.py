"""Error bars and tests for the parity numbers: Wilson intervals for proportions, the
two-proportion z-test, Holm's adjustment, and Welch intervals for ratios of means.

Pure functions of plain numbers; scipy supplies only the distribution quantiles."""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy import special

Z95 = 1.959963984540054


def wilson(successes: float, n: float, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (NaNs when n is unknown or zero)."""
    lo, hi = wilson_bounds(np.array([successes], float), np.array([n], float), z)
    return float(lo[0]), float(hi[0])


def wilson_bounds(successes: np.ndarray, n: np.ndarray,
                  z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """`wilson` of each (successes, n) pair, as two arrays: a window's thousands of scores
    at once rather than a call each."""
    successes, n = np.asarray(successes, float), np.asarray(n, float)
    ok = np.isfinite(n) & (n > 0)
    n = np.where(ok, n, 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = successes / n
        denom = 1 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # fmax/fmin: a NaN bound gives the limit, as max(0.0, nan) does
    lo, hi = np.fmax(0.0, centre - half), np.fmin(1.0, centre + half)
    return np.where(ok, lo, np.nan), np.where(ok, hi, np.nan)


def two_proportion(p1: float, n1: float, p2: float, n2: float) -> tuple[float, float]:
    """(z, two-sided p) of the pooled two-proportion z-test of p1 against p2."""
    if not (n1 and n2) or n1 <= 0 or n2 <= 0:
        return math.nan, math.nan
    pooled = (p1 * n1 + p2 * n2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if se == 0:
        return 0.0, 1.0
    z = (p1 - p2) / se
    return z, math.erfc(abs(z) / math.sqrt(2))


def n_from_stderr(p: float, stderr: float | None) -> float:
    """The sample size a mean-of-0/1 score implies from its reported standard error
    (lm-eval reports sd/sqrt(n) with ddof 1): n = p(1-p)/se² + 1."""
    return float(n_from_stderrs(np.array([p], float),
                                np.array([np.nan if stderr is None else stderr], float))[0])


def n_from_stderrs(p: np.ndarray, stderr: np.ndarray) -> np.ndarray:
    """`n_from_stderr` of each (score, standard error) pair, as an array (NaN where the
    error is missing, not positive, or the score not strictly between 0 and 1)."""
    p, stderr = np.asarray(p, float), np.asarray(stderr, float)
    ok = np.isfinite(stderr) & (stderr > 0) & (p > 0) & (p < 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        n = np.round(p * (1 - p) / (stderr * stderr) + 1)
    return np.where(ok, n, np.nan)


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (NaNs stay NaN and do not count)."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = len(ok)
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def _t_quantile(q: float, df: float) -> float:
    """Student's t quantile: the function `scipy.stats.t.ppf` computes, called directly (the
    distribution object's checks cost 45 µs a call against 1 µs, and a performance view asks
    for one per matched config)."""
    return special.stdtrit(df, q)


def ratio_interval(a: Sequence[float], b: Sequence[float],
                   level: float = 0.95) -> tuple[float, float, float]:
    """mean(a)/mean(b) as a ratio of geometric means, with a Welch t-interval on the log
    scale from the repeated runs on each side. One run on a side gives no interval (NaN)."""
    la = np.log(np.asarray([x for x in a if x and x > 0], float))
    lb = np.log(np.asarray([x for x in b if x and x > 0], float))
    if len(la) == 0 or len(lb) == 0:
        return math.nan, math.nan, math.nan
    diff = la.mean() - lb.mean()
    ratio = math.exp(diff)
    if len(la) < 2 or len(lb) < 2:
        return ratio, math.nan, math.nan
    va, vb = la.var(ddof=1) / len(la), lb.var(ddof=1) / len(lb)
    se = math.sqrt(va + vb)
    if se == 0:
        return ratio, ratio, ratio
    df = (va + vb) ** 2 / (va ** 2 / (len(la) - 1) + vb ** 2 / (len(lb) - 1))
    t = _t_quantile(0.5 + level / 2, df)
    return ratio, math.exp(diff - t * se), math.exp(diff + t * se)


def geomean_interval(ratios: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """Geometric mean of ratios with a t-interval across them (configs as the replicates)."""
    lr = np.log(np.asarray([r for r in ratios if r and r > 0 and math.isfinite(r)], float))
    if len(lr) == 0:
        return math.nan, math.nan, math.nan
    g = math.exp(lr.mean())
    if len(lr) < 2:
        return g, math.nan, math.nan
    se = lr.std(ddof=1) / math.sqrt(len(lr))
    t = _t_quantile(0.5 + level / 2, len(lr) - 1)
    return g, math.exp(lr.mean() - t * se), math.exp(lr.mean() + t * se)
