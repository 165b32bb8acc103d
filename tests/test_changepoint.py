"""The change-point detector and the interval helpers: pure functions, tested without a store."""
from __future__ import annotations

import math

import numpy as np
import pytest

from parity.dashboard import changepoint
from parity.dashboard.intervals import (geomean_interval, holm, n_from_stderr, n_from_stderrs,
                                         two_proportion, wilson, wilson_bounds)
from parity.dashboard.period import period, week_period


def series(seed, n=100, step=0.05, cv=0.03, at=50):
    rng = np.random.default_rng(seed)
    y = 100 + rng.normal(0, cv * 100, n)
    y[at:] += step * 100
    return y


def test_a_step_is_found_where_it_happened():
    found = changepoint.detect(series(1, step=-0.10)).changes
    assert len(found) == 1
    cp = found[0]
    assert 48 <= cp.index <= 52
    assert cp.rel_change == pytest.approx(-0.10, abs=0.02)
    assert cp.confidence > 1


def test_no_change_in_noise_most_of_the_time():
    alarms = sum(bool(changepoint.detect(series(s, step=0)).changes) for s in range(100))
    assert alarms <= 5


def test_outliers_do_not_raise_alarms():
    y = series(2, step=0)
    y[[10, 40, 77]] *= 1.4
    found = changepoint.detect(y)
    assert found.changes == []
    assert {10, 40, 77} <= set(found.outliers)


def test_drift_is_reported_separately():
    rng = np.random.default_rng(4)
    y = 100 + rng.normal(0, 1, 100) + np.linspace(0, 10, 100)
    found = changepoint.detect(y)
    assert found.changes == []
    assert found.drift is not None and found.drift.total == pytest.approx(0.10, abs=0.03)


def test_minimum_effect_and_persistence():
    y = series(5, step=0.10, cv=0.001)
    assert changepoint.detect(y, min_effect=0.2).changes == []
    short = series(6, step=0.3, cv=0.01, at=96)
    found = changepoint.detect(short, min_after=5)
    assert found.changes == [] and [c.index for c in found.pending] == [96]


def test_a_series_seen_again_gets_its_detection_back_and_new_settings_a_new_one():
    """The views ask for the same series' detection many times: the second ask returns the
    same answer without scanning again, and any change to the values or settings is a new
    question."""
    y = series(11, step=-0.10)
    first = changepoint.detect(y)
    assert changepoint.detect(y.copy()) is first and first.changes
    assert changepoint.detect(y, min_effect=0.5).changes == []  # the setting is in the key
    z = y.copy()
    z[60:] = 100.0
    assert changepoint.detect(z) is not first


def test_deterministic_and_nan_tolerant():
    y = series(7, step=0.08)
    y[[3, 60]] = np.nan
    a, b = changepoint.detect(y), changepoint.detect(y.copy())
    assert a == b and 48 <= a.changes[0].index <= 52
    assert changepoint.detect([1.0, 2.0]).changes == []


def test_calibration_table_is_reproducible():
    """The stored thresholds are what calibrate() gives (fewer simulations: looser match)."""
    table = dict(changepoint.CALIBRATION)
    fresh = dict(changepoint.calibrate(lengths=(32, 100), sims=800))
    for n, t in fresh.items():
        assert t == pytest.approx(table[n], rel=0.12)


def test_wilson_and_two_proportion():
    lo, hi = wilson(1240, 1319)  # 94 %
    assert (round(lo, 3), round(hi, 3)) == (0.926, 0.952)  # the study's figures
    z, p = two_proportion(0.94, 1319, 0.80, 1319)
    assert z == pytest.approx(10.7, abs=0.1) and p < 1e-20
    assert math.isnan(wilson(0, 0)[0])
    assert n_from_stderr(0.94, math.sqrt(0.94 * 0.06 / 1318)) == 1319


def test_interval_arrays_take_each_pair_as_the_scalar_form_does():
    """A window's scores get their intervals and sample sizes as arrays: each element is
    what the one-pair form gives, and every pair without a usable n is NaN, not an error."""
    k = np.array([1240, 0, 14, 3, 5, 2, float("nan")])
    n = np.array([1319, 14, 14, 0, -2, float("nan"), 10])
    lo, hi = wilson_bounds(k, n)
    assert lo[0] == pytest.approx(0.926, abs=5e-4) and hi[0] == pytest.approx(0.952, abs=5e-4)
    assert lo[1] == pytest.approx(0.0, abs=1e-12) and hi[2] <= 1.0  # none / all: within [0, 1]
    assert all(math.isnan(x) for x in (*lo[3:6], *hi[3:6]))  # n zero, negative, unknown
    for i in range(len(k)):
        assert (lo[i], hi[i]) == pytest.approx(wilson(k[i], n[i]), nan_ok=True)
    p = np.array([0.94, 0.94, 0.94, 0.0, 1.0, 0.5])
    se = np.array([math.sqrt(0.94 * 0.06 / 1318), 0.0, float("nan"), 0.01, 0.01, -0.1])
    found = n_from_stderrs(p, se)
    assert found[0] == 1319 and np.isnan(found[1:]).all()  # no usable error or score
    assert n_from_stderr(0.94, None) != n_from_stderr(0.94, None)  # NaN, as a missing error


def test_holm():
    adj = holm([0.01, 0.04, 0.03, float("nan")])
    assert list(np.round(adj[:3], 4)) == [0.03, 0.06, 0.06] and math.isnan(adj[3])


def test_geomean_interval():
    g, lo, hi = geomean_interval([0.5, 2.0])
    assert g == pytest.approx(1.0) and lo < 1 < hi


def test_period():
    w = week_period("2026-W48")
    assert (w.start.isoformat(), w.end.isoformat()) == ("2026-11-23T00:00:00",
                                                        "2026-11-30T00:00:00")
    assert w.previous().start.isoformat() == "2026-11-16T00:00:00"
    p = period(since="2026-11-01", until="2026-11-02")
    assert p.end.isoformat() == "2026-11-03T00:00:00"  # until includes its whole day
    with pytest.raises(ValueError):
        period(since="2026-11-01", week="2026-W48")


def test_tail_calibration_table_is_reproducible():
    table = dict(changepoint.TAIL_CALIBRATION)
    fresh = dict(changepoint.calibrate_tail(lengths=(32, 100), sims=800))
    for n, t in fresh.items():
        assert t == pytest.approx(table[n], rel=0.12)


def test_a_recent_change_is_found_early_and_null_tails_stay_quiet():
    """A 5 % step in 3 % noise is reported a median of at most 5 points after it happens
    (streaming: the series is re-read as it grows), and the tail test alone raises at most
    2.5 % alarms on no-change series."""
    found_at = []
    for seed in range(20):
        r = np.random.default_rng(seed)
        y = 100 + r.normal(0, 3, 60)
        y[50:] += 5 if seed % 2 else -5  # a 5 % step in 3 % noise, 10 points before the end
        for t in range(53, 61):
            if any(48 <= c.index <= 55 for c in changepoint.detect(y[:t], min_effect=0.01).changes):
                found_at.append(t - 50)
                break
    assert len(found_at) >= 16 and float(np.median(found_at)) <= 5
    alarms = 0
    for seed in range(300):
        y = 100 + np.random.default_rng(1000 + seed).normal(0, 3, 100)
        alarms += any(c.index >= 92 for c in changepoint.detect(y, min_effect=0.01).changes)
    assert alarms / 300 <= 0.025


def bump(seed, n=100, size=0.08, start=35, length=30, cv=0.03):
    """A regression that is reverted `length` points later: the shape binary segmentation
    misses, since the whole series has no single best split."""
    y = 100 + np.random.default_rng(seed).normal(0, cv * 100, n)
    y[start:start + length] += (size if seed % 2 else -size) * 100
    return y


def test_a_reverted_regression_shows_both_ends():
    both = 0
    for seed in range(40):
        found = [c.index for c in changepoint.detect(bump(seed)).changes]
        both += any(33 <= i <= 40 for i in found) and any(63 <= i <= 70 for i in found)
    assert both >= 38
    cps = changepoint.detect(bump(3, start=30, length=40)).changes
    assert len(cps) == 2
    assert cps[0].rel_change == pytest.approx(0.08, abs=0.02)
    assert cps[1].rel_change == pytest.approx(-0.08 / 1.08, abs=0.02)
    for cp in cps:  # the reported start lies inside its 90 % interval
        assert cp.earliest <= cp.index <= cp.latest


def test_a_staircase_and_a_step_at_either_end():
    y = 100 + np.random.default_rng(11).normal(0, 1, 100)
    y[30:] += 5
    y[65:] += 5  # two steps the same way: not a drift
    found = changepoint.detect(y)
    assert [c.index for c in found.changes] in ([30, 65], [31, 65], [30, 66], [31, 66])
    assert found.drift is None
    early = 100 + np.random.default_rng(12).normal(0, 1, 100)
    early[6:] -= 6
    assert [c.index for c in changepoint.detect(early).changes] in ([6], [7], [8])
    late = 100 + np.random.default_rng(13).normal(0, 1, 100)
    late[92:] += 6
    assert [c.index for c in changepoint.detect(late).changes] in ([92], [93], [94])


def test_the_estimate_never_names_a_run_before_a_clear_change():
    """With the start uncertain, the placement errs late (a bisection from the named run
    backwards still reaches the culprit), never more than EARLY runs early."""
    errors = []
    for seed in range(200):
        y = 100 + np.random.default_rng(500 + seed).normal(0, 3, 100)
        y[50:] += 5
        errors += [c.index - 50 for c in changepoint.detect(y).changes if abs(c.index - 50) < 15]
    errors = np.array(errors)
    assert len(errors) >= 180
    assert np.mean(errors < -changepoint.EARLY) <= 0.04
    assert np.mean((errors >= -changepoint.EARLY) & (errors <= changepoint.LATE)) >= 0.94


def test_seeded_intervals_cover_every_scale_deterministically():
    layers = changepoint.intervals(100)
    sizes = [size for size, _ in layers]
    assert sizes[0] == 100 and sizes[-1] >= 2 * changepoint.MIN_SIZE + 2
    assert all(b < a for a, b in zip(sizes, sizes[1:]))
    for size, starts in layers:  # consecutive intervals overlap: a change is never on an edge
        assert starts[0] == 0 and starts[-1] + size == 100
        assert np.all(np.diff(starts) <= size / 2)
    again = changepoint.intervals(100)
    assert all(a[0] == b[0] and np.array_equal(a[1], b[1]) for a, b in zip(layers, again))


def test_episodes_fold_a_recovery_into_its_regression():
    from parity.dashboard import regressions

    found = changepoint.detect(bump(4, start=30, length=25))  # throughput down, then back
    eps = regressions.episodes(found, "higher")
    assert [e.status for e in eps] == ["recovered", "recovery"]
    assert eps[0].recovery is eps[1].change
    up = changepoint.detect(bump(5, start=30, length=25))  # latency up, then back
    assert [e.status for e in regressions.episodes(up, "lower")] == ["recovered", "recovery"]
    assert [e.status for e in regressions.episodes(up, "higher")] == ["improvement",
                                                                      "regression"]
    assert [e.status for e in regressions.episodes(up, None)] == ["change", "change"]
    step = changepoint.detect(series(1, step=-0.10))  # still open
    assert [e.status for e in regressions.episodes(step, "higher")] == ["regression"]


def _series_of_every_kind():
    rng = np.random.default_rng(7)
    for n in [*range(0, 90), 100, 150, 333, 1000]:
        y = 100 + rng.standard_normal(n)
        yield y
        if n > 12:
            yield np.r_[y[: n // 2], y[n // 2:] * 1.1]  # a step
            spiky = y.copy()
            spiky[n // 3] = 1e6
            yield spiky
        yield np.round(y)  # ties: argmax and medians over equal values
    yield np.full(40, 5.0)  # no noise at all
    yield np.r_[np.full(10, 1e308), np.full(10, -1e308), np.full(10, 1e308)]  # sums overflow


def test_the_detector_shortcuts_give_the_same_numbers_to_the_bit():
    """The scan in one flat pass over every split (short series), the running median by
    sorting an index grid and the short-array medians replace a loop over the layers of
    intervals and np.median for speed: every statistic, filtered value and median must be
    the same float, not merely close."""
    with np.errstate(over="ignore", invalid="ignore"):  # (the overflowing series: NaN both ways)
        for y in _series_of_every_kind():
            if len(y):
                assert changepoint._median(y).tobytes() == np.median(y).tobytes()
            if len(y) < 5:
                continue
            sigma = changepoint.noise(y) or 1.0
            flat = changepoint._scan_flat(y, sigma, changepoint.MIN_SIZE)
            layers = changepoint._scan_layers(y, sigma, changepoint.MIN_SIZE)
            assert flat.tobytes() == layers.tobytes()
            assert changepoint.scan(y, sigma).tobytes() == flat.tobytes()
            half = changepoint.CLEAN_WIDTH // 2
            windows = np.lib.stride_tricks.sliding_window_view(
                np.pad(y, half, mode="reflect"), changepoint.CLEAN_WIDTH)
            assert changepoint._median_filter(y).tobytes() == np.median(windows, axis=-1).tobytes()


def test_t_quantile_is_scipys_t_ppf():
    """The intervals call the t quantile's function directly; it must be what
    `scipy.stats.t.ppf` gives, to the bit, for whole and Welch (fractional) degrees."""
    from scipy import stats

    from parity.dashboard.intervals import _t_quantile
    for q in (0.9, 0.975, 0.995):
        for df in (1, 2, 3.5, 7.25, 30, 1e6):
            assert _t_quantile(q, df) == stats.t.ppf(q, df)
