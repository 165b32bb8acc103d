"""Change-point detector benchmark: synthetic series with known change points, scored by
precision, recall, F1, false alarms on no-change series, streaming delay and cost, side by side
with baselines run in the same process (a PyTorch-HUD-style ratio rule, and ruptures' Binseg
when `ruptures` is installed).

Design from ../shared/docs/regression-and-flake-detection.md section 5: a detection d matches a
true change at tau when tau-2 <= d <= tau+5 (one-to-one); every other detection is a false alarm;
drift series are reported in their own column.

    python benchmarks/detector.py [--series 200] [--streams 40]
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


def make_series(kind: str, n: int, seed: int, step: float = 0.05, cv: float = 0.03,
                change: bool = True) -> tuple[np.ndarray, list[int]]:
    """A positive latency-like series around 100 and the true change indices."""
    rng = np.random.default_rng(seed)
    base = 100.0
    sigma = cv * base
    tau = n // 2
    if kind == "bimodal":
        y = base + rng.normal(0, sigma / 2, n) + (rng.random(n) < 0.25) * 2 * sigma
    else:
        y = base + rng.normal(0, sigma, n)
    truth: list[int] = []
    if kind == "drift":
        y += base * 0.05 * np.arange(n) / n
    elif change:
        sign = 1 if seed % 2 == 0 else -1
        y[tau:] += sign * step * base
        truth = [tau]
    if kind == "outliers":
        spikes = rng.random(n) < 0.03
        y[spikes] *= 1.20
    return y, truth


def ours(y: np.ndarray) -> list[int]:
    return [c.index for c in changepoint.detect(y, min_effect=0.01).changes]


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
    used, tp = set(), 0
    for d in sorted(detections):
        for j, tau in enumerate(truth):
            if j not in used and tau - EARLY <= d <= tau + LATE:
                used.add(j)
                tp += 1
                break
    return tp, len(detections) - tp, len(truth) - tp


def offline(detector, kind: str, series: int, **kw) -> dict:
    tp = fp = fn = 0
    null_alarmed = 0
    for seed in range(series):
        y, truth = make_series(kind, 100, seed, **kw)
        a, b, c = match(detector(y), truth)
        tp, fp, fn = tp + a, fp + b, fn + c
        y0, _ = make_series(kind, 100, seed, change=False, **kw)
        null_alarmed += bool(detector(y0))
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": p, "recall": r, "f1": f1, "null_alarm": null_alarmed / series}


def drift_alarms(detector, series: int) -> float:
    return sum(bool(detector(make_series("drift", 100, s)[0])) for s in range(series)) / series


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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=200)
    ap.add_argument("--streams", type=int, default=40)
    args = ap.parse_args(argv)
    detectors = {"parity": ours, "hud-style": hud_style}
    try:
        import ruptures  # noqa: F401
        detectors["ruptures-binseg"] = binseg
    except ImportError:
        print("(ruptures not installed: its baseline is left out; pip install ruptures)")
    cells = [("5% step / 3% CV", "gaussian", {}),
             ("5% / 3% + 3% outliers", "outliers", {}),
             ("5% / 3% bimodal", "bimodal", {}),
             ("10% / 3%", "gaussian", {"step": 0.10}),
             ("2% / 3%", "gaussian", {"step": 0.02})]
    print(f"offline, n=100, {args.series} series per cell (F1 | null alarm rate)")
    print(f"{'cell':<24}" + "".join(f"{d:>26}" for d in detectors))
    results = {}
    for label, kind, kw in cells:
        row = f"{label:<24}"
        for name, det in detectors.items():
            r = offline(det, kind, args.series, **kw)
            results[(label, name)] = r
            row += f"{'F1 %.2f P %.2f R %.2f | %.3f' % (r['f1'], r['precision'], r['recall'], r['null_alarm']):>26}"
        print(row)
    print(f"{'drift 5% (alarmed)':<24}" + "".join(
        f"{drift_alarms(d, args.series):>26.3f}" for d in detectors.values()))
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
    a = changepoint.detect(make_series("gaussian", 100, 7)[0])
    b = changepoint.detect(make_series("gaussian", 100, 7)[0])
    print(f"\ndeterministic: {a == b}")
    head = results[("5% step / 3% CV", "parity")]
    out = results[("5% / 3% + 3% outliers", "parity")]
    print(f"targets: F1 {head['f1']:.2f} >= 0.90, outliers F1 {out['f1']:.2f} >= 0.85, "
          f"null alarms {head['null_alarm']:.3f} <= 0.05, median delay "
          f"{streams['parity']['median_delay']:.1f} <= 5, cost {costs['parity']:.1f} ms < 50")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
