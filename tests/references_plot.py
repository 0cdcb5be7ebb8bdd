"""Slow, obviously correct oracles for the data behind the reliability diagrams.

Each function recomputes from the events in plain Python (numpy's ``np.quantile`` for
the equal-mass edges, scikit-learn's ``IsotonicRegression`` for the CORP curve), so that
it can be checked by reading it.

References
----------
- Binned reliability diagrams and consistency bars: Broecker and Smith (2007),
  "Increasing the reliability of reliability diagrams", Weather and Forecasting 22(3).
- CORP reliability diagrams and their consistency bands (resampling outcomes from the
  forecasts): Dimitriadis, Gneiting and Jordan (2021), "Stable reliability diagrams for
  probabilistic classifiers", PNAS 118(8), e2016191118.
"""

from __future__ import annotations

import math
from bisect import bisect_right

import numpy as np
from sklearn.isotonic import IsotonicRegression

__all__ = ["binned_points", "corp_fit", "expand", "resampled_band"]


def expand(probs, labels, weights):
    """Repeat each event as many times as its (integer) weight."""
    P, Y = [], []
    for p, y, w in zip(probs, labels, weights):
        assert float(w) == int(w) >= 0
        P += [float(p)] * int(w)
        Y += [float(y)] * int(w)
    return P, Y


def binned_points(probs, labels, n_bins, strategy, weights=None):
    """Per non-empty bin: ``(lower, upper, weight, mean forecast, mean outcome)``.

    Edges: ``i / n_bins``, or ``np.quantile`` of the forecasts with each repeated as
    many times as its (integer) weight, made non-decreasing. A forecast lies in the bin
    whose index is the number of inner edges ``<=`` it.
    """
    probs = [float(p) for p in probs]
    labels = [float(y) for y in labels]
    weights = [1.0] * len(probs) if weights is None else [float(w) for w in weights]
    kept = [(p, y, w) for p, y, w in zip(probs, labels, weights) if w > 0]
    if strategy == "uniform":
        edges = [i / n_bins for i in range(n_bins + 1)]
    else:
        sample, _ = expand(
            [p for p, _, _ in kept], [y for _, y, _ in kept], [w for _, _, w in kept]
        )
        edges = list(np.quantile(sample, np.arange(n_bins + 1) / n_bins))
        for i in range(1, len(edges)):
            edges[i] = max(edges[i], edges[i - 1])
    inner = edges[1:-1]
    sums = [[[], [], []] for _ in range(n_bins)]  # weights, w * p, w * y
    for p, y, w in kept:
        b = bisect_right(inner, p)
        sums[b][0].append(w)
        sums[b][1].append(w * p)
        sums[b][2].append(w * y)
    out = []
    for b, (ws, wp, wy) in enumerate(sums):
        if ws:
            W = math.fsum(ws)
            out.append(
                (edges[b], edges[b + 1], W, math.fsum(wp) / W, math.fsum(wy) / W)
            )
    return out


def corp_fit(probs, labels, weights=None):
    """``{distinct forecast: fitted value}`` of scikit-learn's isotonic regression."""
    p = np.asarray(probs, dtype=float)
    y = np.asarray(labels, dtype=float)
    w = np.ones(len(p)) if weights is None else np.asarray(weights, dtype=float)
    keep = w > 0
    p, y, w = p[keep], y[keep], w[keep]
    fit = IsotonicRegression(y_min=0.0, y_max=1.0).fit(p, y, sample_weight=w)
    xs = np.unique(p)
    return dict(zip(xs.tolist(), fit.predict(xs).tolist()))


def resampled_band(
    probs, kind, level, n_resamples, seed, n_bins=10, strategy="uniform", weights=None
):
    """The band by brute force: per resample, ``u = rng.random(n)`` (one draw per
    positive-weight event, in input order) and ``y* = u < p``; refit with the oracles
    above; take ``np.quantile`` of each point's values over the resamples."""
    p = [float(v) for v in probs]
    w = [1.0] * len(p) if weights is None else [float(v) for v in weights]
    kept = [(a, b) for a, b in zip(p, w) if b > 0]
    p = [a for a, _ in kept]
    w = [b for _, b in kept]
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n_resamples):
        u = rng.random(len(p))
        ystar = [1.0 if ui < pi else 0.0 for ui, pi in zip(u.tolist(), p)]
        if kind == "binned":
            rows.append([pt[4] for pt in binned_points(p, ystar, n_bins, strategy, w)])
        else:
            fit = corp_fit(p, ystar, w)
            rows.append([fit[x] for x in sorted(fit)])
    if kind == "binned":
        x = [pt[3] for pt in binned_points(p, [0.0] * len(p), n_bins, strategy, w)]
    else:
        x = sorted(set(p))
    qs = ((1.0 - level) / 2.0, (1.0 + level) / 2.0)
    lo, hi = np.quantile(np.array(rows), qs, axis=0)
    return np.array(x), lo, hi
