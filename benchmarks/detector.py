"""Change-point detector benchmark: synthetic series with known change points, scored by
precision, recall, F1, false alarms per series, median delay, streaming delay and cost, side by
side with baselines run in the same process (a PyTorch-HUD-style ratio rule, and ruptures'
Binseg when `ruptures` is installed). Every detector runs at its defaults.

Design from ../shared/docs/regression-and-flake-detection.md section 5: a detection d matches a
true change at tau when tau-2 <= d <= tau+5 (one-to-one); every other detection is a false alarm;
drift series are reported in their own column. Cases: one step (plain, with outliers, bimodal
noise, 10 % and 2 %), a temporary step that reverts (+-5 % and +-8 %, 10-40 points long), two
steps the same way, a step near the start and near the end, a one-point dip, a slow drift.

    python benchmarks/detector.py [--series 500] [--streams 40]
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from parity.dashboard import changepoint  # noqa: E402

TAU = 50
EARLY, LATE = 2, 5
N = 100
FIRST_SEED = 0  # --seed: another, independent set of series (a held-out check)


def make_series(kind: str, n: int, seed: int, step: float = 0.05, cv: float = 0.03,
                change: bool = True, span: tuple[int, int] = (25, 40)) -> tuple[np.ndarray, list[int]]:
    """A positive latency-like series around 100 and the true change indices.

    Kinds: gaussian, outliers, bimodal (one step at n // 2); revert (a step of `step` for a
    length drawn from `span`, then back); same (two steps of `step` the same way, `span`
    apart); early / late (a step 5-11 points from the start / end); dip (one point 30 % low,
    no change); drift (a linear +5 %, no change). `change=False`: the same noise, no step."""
    rng = np.random.default_rng(seed)
    base = 100.0
    sigma = cv * base
    tau = n // 2
    if kind == "bimodal":
        y = base + rng.normal(0, sigma / 2, n) + (rng.random(n) < 0.25) * 2 * sigma
    else:
        y = base + rng.normal(0, sigma, n)
    sign = 1 if seed % 2 == 0 else -1
    truth: list[int] = []
    where = np.random.default_rng(10_000_000 + seed)  # positions: independent of the noise
    if kind == "drift":
        y += base * 0.05 * np.arange(n) / n
    elif kind == "dip":
        y[int(where.integers(5, n - 5))] *= 0.7
    elif not change:
        pass
    elif kind in ("revert", "same"):
        length = int(where.integers(span[0], span[1] + 1))
        a = int(where.integers(15, n - length - 15 + 1))
        y[a:] += sign * step * base
        y[a + length:] += (sign if kind == "same" else -sign) * step * base
        truth = [a, a + length]
    elif kind in ("early", "late"):
        k = int(where.integers(5, 12))
        tau = k if kind == "early" else n - k
        y[tau:] += sign * step * base
        truth = [tau]
    else:
        y[tau:] += sign * step * base
        truth = [tau]
    if kind == "outliers":
        spikes = rng.random(n) < 0.03
        y[spikes] *= 1.20
    return y, truth


def ours(y: np.ndarray) -> list[int]:
    return [c.index for c in changepoint.detect(y).changes]


def hud_style(y: np.ndarray, window: int = 20, ratio: float = 1.05, run: int = 2) -> list[int]:
    """Median of the previous `window` points as baseline; a violation is a point beyond
    `ratio` x baseline either way; `run` violations in a row raise one alarm."""
    out, streak, last = [], 0, -100
    for i in range(window, len(y)):
        base = np.median(y[i - window:i])
        bad = y[i] > base * ratio or y[i] < base / ratio
        streak = streak + 1 if bad else 0
        if streak == run and i - last > window:
            out.append(i - run + 1)
            last = i
    return out


def binseg(y: np.ndarray) -> list[int]:
    import ruptures

    sigma = np.std(np.diff(y)) / math.sqrt(2)
    algo = ruptures.Binseg(model="l2", min_size=2, jump=1).fit(y)
    return [b for b in algo.predict(pen=2 * math.log(len(y)) * sigma ** 2) if b < len(y)]


def match(detections: list[int], truth: list[int]) -> tuple[int, int, int]:
    """(true positives, false positives, false negatives) with the asymmetric window."""
    tp, _ = matched(detections, truth)
    return tp, len(detections) - tp, len(truth) - tp


def matched(detections: list[int], truth: list[int]) -> tuple[int, list[int]]:
    """True positives, and the delay (detection - true change) of each."""
    used, delays = set(), []
    for d in sorted(detections):
        for j, tau in enumerate(truth):
            if j not in used and tau - EARLY <= d <= tau + LATE:
                used.add(j)
                delays.append(d - tau)
                break
    return len(delays), delays


def offline(detector, kind: str, series: int, **kw) -> dict:
    """F1 and friends over `series` labelled series of one kind, and the alarm rate on the
    same noise without the change."""
    tp = fp = fn = 0
    null_alarmed = all_found = 0
    delays: list[int] = []
    for seed in range(FIRST_SEED, FIRST_SEED + series):
        y, truth = make_series(kind, N, seed, **kw)
        found = detector(y)
        a, d = matched(found, truth)
        tp, fp, fn = tp + a, fp + len(found) - a, fn + len(truth) - a
        all_found += a == len(truth)
        delays += d
        y0, _ = make_series(kind, N, seed, change=False, **kw)
        null_alarmed += bool(detector(y0))
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": p, "recall": r, "f1": f1, "null_alarm": null_alarmed / series,
            "all_found": all_found / series, "fp_per_series": fp / series,
            "median_delay": float(np.median(delays)) if delays else math.nan}


def alarms(detector, kind: str, series: int) -> float:
    """The share of change-free series of a kind (dip, drift) that raise any alarm."""
    seeds = range(FIRST_SEED, FIRST_SEED + series)
    return sum(bool(detector(make_series(kind, N, s)[0])) for s in seeds) / series


def drift_reported(series: int) -> float:
    """The share of drift series our detector reports as drift (and not as a change)."""
    found = [changepoint.detect(make_series("drift", N, s)[0])
             for s in range(FIRST_SEED, FIRST_SEED + series)]
    return sum(d.drift is not None and not d.changes for d in found) / series


def streaming(detector, streams: int) -> dict:
    delays, fp_events, null_events = [], 0, 0
    for seed in range(streams):
        y, truth = make_series("gaussian", 100, 10_000 + seed)
        seen: list[int] = []
        hit = False
        for t in range(20, 101):
            for loc in detector(y[:t]):
                if any(abs(loc - s) <= 3 for s in seen):
                    continue
                seen.append(loc)
                if not hit and TAU - EARLY <= loc <= TAU + LATE:
                    hit = True
                    delays.append(t - TAU)
                else:
                    fp_events += 1
        y0, _ = make_series("gaussian", 100, 10_000 + seed, change=False)
        seen = []
        for t in range(20, 101):
            for loc in detector(y0[:t]):
                if not any(abs(loc - s) <= 3 for s in seen):
                    seen.append(loc)
                    null_events += 1
    return {"detected": len(delays) / streams,
            "median_delay": float(np.median(delays)) if delays else math.nan,
            "p90_delay": float(np.percentile(delays, 90)) if delays else math.nan,
            "fp_per_null_stream": null_events / streams}


def cost_ms(detector, n: int = 1000, calls: int = 20) -> float:
    ys = [make_series("gaussian", n, s)[0] for s in range(calls)]
    detector(ys[0])  # warm
    start = time.perf_counter()
    for y in ys:
        detector(y)
    return (time.perf_counter() - start) / calls * 1000


CELLS = [  # (label, kind, make_series arguments)
    ("5% step / 3% CV", "gaussian", {}),
    ("5% + 3% outliers", "outliers", {}),
    ("5% bimodal", "bimodal", {}),
    ("10% step", "gaussian", {"step": 0.10}),
    ("2% step", "gaussian", {"step": 0.02}),
    ("revert +-8%, 25-40 long", "revert", {"step": 0.08}),
    ("revert +-8%, 10-40 long", "revert", {"step": 0.08, "span": (10, 40)}),
    ("revert +-5%, 10-40 long", "revert", {"step": 0.05, "span": (10, 40)}),
    ("two 5% steps, same way", "same", {}),
    ("5% step near start", "early", {}),
    ("5% step near end", "late", {}),
]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=500)
    ap.add_argument("--streams", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0, help="first seed of the offline series")
    args = ap.parse_args(argv)
    global FIRST_SEED
    FIRST_SEED = args.seed
    detectors = {"parity": ours, "hud-style": hud_style}
    try:
        import ruptures  # noqa: F401
        detectors["ruptures-binseg"] = binseg
    except ImportError:
        print("(ruptures not installed: its baseline is left out; pip install ruptures)")
    print(f"offline, n={N}, {args.series} series per case, every detector at its defaults")
    print("F1 (P/R) | all changes found | false alarms per series | median delay "
          "| alarm rate on the same noise without the change")
    results = {}
    for label, kind, kw in CELLS:
        print(f"  {label}")
        for name, det in detectors.items():
            r = results[(label, name)] = offline(det, kind, args.series, **kw)
            print(f"    {name:<16} F1 {r['f1']:.3f} ({r['precision']:.2f}/{r['recall']:.2f}) | "
                  f"all {r['all_found']:.2f} | FP {r['fp_per_series']:.3f} | delay "
                  f"{r['median_delay']:.0f} | null {r['null_alarm']:.3f}")
    print("  change-free series: share with any alarm (dip: one point 30 % low; drift: +5 %)")
    side = {}
    for name, det in detectors.items():
        side[name] = (alarms(det, "dip", args.series), alarms(det, "drift", args.series))
        print(f"    {name:<16} dip {side[name][0]:.3f}  drift {side[name][1]:.3f}")
    reported = drift_reported(args.series)
    print(f"    parity reports drift as drift in {reported:.3f} of drift series")
    print(f"\nstreaming, {args.streams} step + {args.streams} null streams, re-run at t=20..100")
    streams = {}
    for name, det in detectors.items():
        s = streams[name] = streaming(det, args.streams)
        print(f"  {name:<16} detected {s['detected']:.2f}  median delay {s['median_delay']:.1f}"
              f"  p90 {s['p90_delay']:.1f}  FP events per null stream {s['fp_per_null_stream']:.2f}")
    print("\ncost per 1,000-point series")
    costs = {name: cost_ms(det) for name, det in detectors.items()}
    for name, ms in costs.items():
        print(f"  {name:<16} {ms:.1f} ms")
    a = changepoint.detect(make_series("gaussian", N, 7)[0])
    b = changepoint.detect(make_series("gaussian", N, 7)[0])
    print(f"\ndeterministic: {a == b}")
    ours_ = {label: results[(label, "parity")] for label, _, _ in CELLS}
    revert = ours_["revert +-8%, 25-40 long"]
    checks = [
        ("revert +-8% F1", revert["f1"], ">=", 0.95),
        ("revert +-8% both found", revert["all_found"], ">=", 0.90),
        ("5% step F1", ours_["5% step / 3% CV"]["f1"], ">=", 0.92),
        ("outliers F1", ours_["5% + 3% outliers"]["f1"], ">=", 0.90),
        ("no-change alarms", ours_["5% step / 3% CV"]["null_alarm"], "<=", 0.03),
        ("dip alarms", side["parity"][0], "<=", 0.03),
        ("streaming median delay", streams["parity"]["median_delay"], "<=", 5),
        ("cost ms", costs["parity"], "<", 5),
    ]
    print("targets:")
    for name, value, op, goal in checks:
        ok = value >= goal if op == ">=" else value <= goal if op == "<=" else value < goal
        print(f"  {'ok  ' if ok else 'MISS'} {name} {value:.3f} {op} {goal}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
