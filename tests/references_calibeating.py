"""Slow, obviously correct oracles for calibeating, Foster's forecaster and the
Foster-Hart decomposition of the Brier score.

Everything is recomputed from the whole prefix of the stream at every step, with exact
rational arithmetic (:class:`fractions.Fraction`) where a comparison decides what is
played, so each function can be checked by reading it against its definition.

References
----------
- Foster and Hart (2023), "Calibeating: beating forecasters at their own game",
  Theoretical Economics 18(4): the Brier score ``B = K + R`` by forecast value
  (section 2), the tracking forecast (section 4), calibeating by a calibrated
  procedure inside each bin (section 6), multi-calibeating (section 7).
- Foster (1999), "A proof of calibration via Blackwell's approachability theorem",
  Games and Economic Behavior 29; Gupta (2022), thesis proposal, chapter 3: the
  epsilon-calibrated forecaster on the midpoints of an epsilon-grid.
- Steele, Lea and Flood (2014), "Fast splittable pseudorandom number generators":
  SplitMix64.
- Cesa-Bianchi and Lugosi (2006), *Prediction, learning, and games*, section 2.1: the
  exponentially weighted average forecaster.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

__all__ = [
    "bin_of",
    "brier_decomposition",
    "epsilon_calibrated_forecasts",
    "exponential_weights_aggregates",
    "foster_strategy",
    "hedging_forecasts",
    "joint_tracking_forecasts",
    "splitmix64",
    "tracking_forecasts",
]


def splitmix64(seed: int, t: int) -> float:
    """The ``t``-th output (from 0) of a SplitMix64 generator seeded with ``seed``, run
    forward step by step, as a float in [0, 1) from its top 53 bits."""
    mask = (1 << 64) - 1
    state = seed & mask
    for _ in range(t + 1):
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z = z ^ (z >> 31)
    return (z >> 11) / 2.0**53


def bin_of(x: float, n: int) -> int:
    """The equal-width bin of ``x``: ``floor(n x)``, 1.0 in the last bin."""
    return min(int(np.floor(np.float64(x) * n)), n - 1)


# ---------------------------------------------------------------------- Brier score


def brier_decomposition(labels, forecasts, weights=None):
    """``(B, K, R)`` by grouping the events by exact forecast value, in plain Python.

    ``B`` the weighted mean of ``(p - y)**2``; for each group ``p``, ``ybar`` its
    weighted mean outcome and ``W_p`` its weight: ``K = sum W_p (p - ybar)**2 / W`` and
    ``R = sum W_p ybar (1 - ybar) / W``. Zero-weight events are skipped.
    """
    if weights is None:
        weights = [1.0] * len(labels)
    groups: dict[float, list[tuple[float, float]]] = {}
    for y, p, w in zip(labels, forecasts, weights):
        if w > 0:
            groups.setdefault(float(p), []).append((float(y), float(w)))
    total = math.fsum(w for g in groups.values() for _, w in g)
    brier = math.fsum(w * (p - y) ** 2 for p, g in groups.items() for y, w in g) / total
    cal = []
    ref = []
    for p, g in groups.items():
        Wp = math.fsum(w for _, w in g)
        ybar = math.fsum(w * y for y, w in g) / Wp
        cal.append(Wp * (p - ybar) ** 2)
        ref.append(Wp * ybar * (1.0 - ybar))
    return brier, math.fsum(cal) / total, math.fsum(ref) / total


# ---------------------------------------------------------------------- tracking


def tracking_forecasts(expert, labels, weights, n_bins, prior_weight):
    """The tracking forecast of every event, from the events before it.

    Event ``t`` with expert forecast ``x`` in bin ``b``: with ``W`` and ``S`` the total
    weight and weighted outcome sum of the earlier events of bin ``b`` (numpy sums over
    the prefix), the forecast is ``(S + c x) / (W + c)``, or ``x`` when ``W + c = 0``.
    """
    x = np.asarray(expert, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    bins = np.array([bin_of(v, n_bins) for v in x])
    out = []
    for t in range(len(x)):
        same = bins[:t] == bins[t]
        W = w[:t][same].sum()
        S = (w[:t] * y[:t])[same].sum()
        den = W + prior_weight
        out.append(float(x[t]) if den == 0 else float((S + prior_weight * x[t]) / den))
    return out


def joint_tracking_forecasts(experts, labels, weights, n_bins, prior_weight):
    """Tracking on the joint bins: the bin of an event is the tuple of its experts'
    bins; the prior point is the experts' mean forecast."""
    experts = [tuple(float(v) for v in row) for row in experts]
    out = []
    for t, row in enumerate(experts):
        key = tuple(bin_of(v, n_bins) for v in row)
        prior = sum(row) / len(row)
        W = S = 0.0
        for s in range(t):
            if tuple(bin_of(v, n_bins) for v in experts[s]) == key:
                W += weights[s]
                S += weights[s] * labels[s]
        den = W + prior_weight
        out.append(prior if den == 0 else (S + prior_weight * prior) / den)
    return out


def exponential_weights_aggregates(experts, labels, weights, eta):
    """The exponentially weighted average forecast of every event and the final
    normalised weights; cumulative Brier losses recomputed from scratch each time."""
    experts = [tuple(float(v) for v in row) for row in experts]
    k = len(experts[0])
    aggregates = []

    def normalised(t):
        losses = [
            math.fsum(weights[s] * (experts[s][j] - labels[s]) ** 2 for s in range(t))
            for j in range(k)
        ]
        e = [math.exp(-eta * (v - min(losses))) for v in losses]
        return [v / math.fsum(e) for v in e]

    for t, row in enumerate(experts):
        ws = normalised(t)
        aggregates.append(min(1.0, max(0.0, math.fsum(a * b for a, b in zip(ws, row)))))
    return aggregates, normalised(len(experts))


# ---------------------------------------------------------------------- Foster


def foster_strategy(history, n, prefer):
    """Foster's mixed strategy ``(low, high, p_low)`` after ``history``, a list of
    ``(cell, y, w)`` of the events played so far (positive weights only).

    Everything in exact fractions. Cell ``i`` is ``[i/n, (i+1)/n]`` with midpoint
    ``m_i``; ``N_i`` the weight played on it, ``ybar_i`` the mean outcome there. It is
    calibrated when ``N_i = 0`` or ``i/n <= ybar_i <= (i+1)/n``. Distances are in
    cell widths from ``nx``, the float ``n * prefer`` (the product rounded once, as
    the binning rule does; ``prefer`` itself rounded to a float first). If some cell
    is calibrated: the calibrated cell with the smallest ``|i + 1/2 - nx|``, ties to
    the higher index. Otherwise: among the adjacent pairs ``(i, i+1)`` with
    ``ybar_i > (i+1)/n`` and ``ybar_{i+1} < (i+1)/n``, the one with the smallest
    ``|i + 1 - nx|`` (ties to the lower), playing ``m_i`` with probability
    ``d / (u + d)`` where ``u = N_i (ybar_i - (i+1)/n)`` and
    ``d = N_{i+1} ((i+1)/n - ybar_{i+1})`` (each point gets the other's violation).
    """
    nx = Fraction(float(n) * float(prefer))
    N = [Fraction(0)] * n
    S = [Fraction(0)] * n
    for cell, y, w in history:
        N[cell] += Fraction(w)
        S[cell] += Fraction(w) * Fraction(y)
    lo_edge = [Fraction(i, n) for i in range(n)]
    hi_edge = [Fraction(i + 1, n) for i in range(n)]
    ybar = [S[i] / N[i] if N[i] > 0 else None for i in range(n)]
    calibrated = [
        ybar[i] is None or lo_edge[i] <= ybar[i] <= hi_edge[i] for i in range(n)
    ]
    if any(calibrated):
        best = None
        half = Fraction(1, 2)
        for i in range(n):
            if calibrated[i] and (
                best is None or abs(i + half - nx) <= abs(best + half - nx)
            ):
                best = i
        return best, best, 1.0
    pairs = [
        i for i in range(n - 1) if ybar[i] > hi_edge[i] and ybar[i + 1] < lo_edge[i + 1]
    ]
    assert pairs, "an uncalibrated grid always has a crossing pair"
    i = min(pairs, key=lambda j: (abs(j + 1 - nx), j))
    u = N[i] * (ybar[i] - hi_edge[i])
    d = N[i + 1] * (lo_edge[i + 1] - ybar[i + 1])
    return i, i + 1, float(d / (u + d))


def _draw(low, high, p_low, seed, t):
    if low == high:
        return low
    return low if splitmix64(seed, t) < p_low else high


def epsilon_calibrated_forecasts(labels, weights, n, seed):
    """Foster's forecaster with no expert: the forecast of every event and the final
    history ``[(cell, y, w)]``. The preferred point is the weighted mean of all
    outcomes so far (1/2 before any weight); the draw of event ``t`` is the ``t``-th
    SplitMix64 output."""
    history = []
    forecasts = []
    for t, (y, w) in enumerate(zip(labels, weights)):
        W = sum(Fraction(h[2]) for h in history)
        prefer = (
            sum(Fraction(h[2]) * h[1] for h in history) / W if W > 0 else Fraction(1, 2)
        )
        low, high, p = foster_strategy(history, n, prefer)
        cell = _draw(low, high, p, seed, t)
        forecasts.append((cell + 0.5) / n)
        if w > 0:
            history.append((cell, y, w))
    return forecasts, history


def hedging_forecasts(expert, labels, weights, n, seed):
    """Foster's forecaster run separately in each bin of the expert forecast.

    In bin ``b`` with no earlier positive-weight event the forecast is the expert's
    ``x`` itself, recorded as a play of cell ``b``; otherwise the bin's own Foster
    strategy with the bin's mean outcome as preferred point. The draw of event ``t``
    (counting every event, whatever its bin or weight) is the ``t``-th SplitMix64
    output."""
    histories: dict[int, list] = {}
    forecasts = []
    for t, (x, y, w) in enumerate(zip(expert, labels, weights)):
        b = bin_of(x, n)
        hist = histories.get(b, [])
        if not hist:
            forecasts.append(float(x))
            cell = b
        else:
            W = sum(Fraction(h[2]) for h in hist)
            prefer = sum(Fraction(h[2]) * h[1] for h in hist) / W
            low, high, p = foster_strategy(hist, n, prefer)
            cell = _draw(low, high, p, seed, t)
            forecasts.append((cell + 0.5) / n)
        if w > 0:
            histories.setdefault(b, []).append((cell, y, w))
    return forecasts, histories
