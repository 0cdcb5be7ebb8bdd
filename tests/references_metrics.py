"""Slow, obviously correct batch oracles for the binary streaming metrics.

Each works on whole arrays, straight from the definition (explicit loops where that is
clearer than vectorised code), and takes optional weights. Zero-weight events are
dropped first: they are not part of the sample.
"""

from __future__ import annotations

import importlib.util
import math
import os
from fractions import Fraction

import numpy as np

__all__ = [
    "auc_pairs",
    "bank_marketing_sharpness",
    "decayed_weights",
    "ece",
    "murphy",
    "quantile_edges",
    "sharpness",
    "uniform_bin",
]


def _arrays(labels, probs, w):
    y = np.asarray(labels, dtype=float)
    p = np.asarray(probs, dtype=float)
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    keep = w > 0
    return y[keep], p[keep], w[keep]


def uniform_bin(p: float, n_bins: int) -> int:
    """The bin ``i`` with ``i / n <= p < (i + 1) / n`` (the last one closed), the rule of
    ``expected_calibration_error``, by a linear scan of the edges."""
    edges = np.arange(n_bins + 1, dtype=np.float64) / n_bins
    for i in range(n_bins - 1, -1, -1):
        if p >= edges[i]:
            return i
    return 0


def decayed_weights(w, half_life: float) -> np.ndarray:
    """``w_t * 2 ** (-age_t / half_life)``, the age of an event counted in the
    positive-weight events that came after it (the newest has age 0)."""
    w = np.asarray(w, dtype=float)
    out = np.zeros(len(w))
    age = 0
    for t in range(len(w) - 1, -1, -1):
        if w[t] > 0:
            out[t] = w[t] * 2.0 ** (-age / half_life)
            age += 1
    return out


def quantile_edges(probs, w, n_bins: int) -> np.ndarray:
    """Equal-mass edges: numpy's "linear" quantiles at levels ``i / n_bins`` of the
    sample in which each forecast is held for as many index units as its weight.

    Sorted forecasts ``x_1 <= ... <= x_n`` with cumulative weights ``C_j``; index ``k``
    (a real number >= 0) holds the first ``x_j`` with ``C_j > k`` (the last one when
    ``k >= C_n``). The quantile at level ``q`` is the linear interpolation between the
    values at indices ``floor(h)`` and ``floor(h) + 1``, ``h = (C_n - 1) q``, computed
    with numpy's formula (``a + (b - a) g``, or ``b - (b - a)(1 - g)`` when ``g >= 1/2``).
    For unit weights this is ``np.quantile(probs, levels)``.
    """
    order = np.argsort(probs, kind="stable")
    x = np.asarray(probs, dtype=float)[order]
    cw = np.cumsum(np.asarray(w, dtype=float)[order])

    def at(k):
        k = max(k, 0.0)
        for j in range(len(x)):
            if cw[j] > k:
                return x[j]
        return x[-1]

    out = []
    for i in range(n_bins + 1):
        q = np.float64(i) / n_bins
        h = (cw[-1] - 1.0) * q
        lo = math.floor(h)
        a, b = at(lo), at(lo + 1.0)
        g = h - lo
        out.append(b - (b - a) * (1.0 - g) if g >= 0.5 else a + (b - a) * g)
    return np.maximum.accumulate(np.array(out))


def _bins_of(p, edges, n_bins):
    idx = np.searchsorted(edges, p, side="right") - 1
    return np.clip(idx, 0, n_bins - 1)


def ece(labels, probs, w=None, n_bins: int = 10, strategy: str = "uniform") -> float:
    """Weighted ECE: ``sum_b |sum_{t in b} w_t (y_t - p_t)| / sum_t w_t``, with the bins
    of ``expected_calibration_error`` (equal-mass edges from :func:`quantile_edges`)."""
    y, p, w = _arrays(labels, probs, w)
    if len(y) == 0:
        return 0.0
    if strategy == "uniform":
        idx = np.array([uniform_bin(v, n_bins) for v in p], dtype=int)
    else:
        idx = _bins_of(p, quantile_edges(p, w, n_bins), n_bins)
    total = 0.0
    for b in range(n_bins):
        inside = idx == b
        total += abs(np.sum(w[inside] * y[inside]) - np.sum(w[inside] * p[inside]))
    return float(total / np.sum(w))


def reliability_bins(
    labels, probs, w=None, n_bins: int = 10, strategy: str = "uniform"
):
    """The non-empty bins as ``(lower, upper, weight, mean forecast, mean outcome)``."""
    y, p, w = _arrays(labels, probs, w)
    if strategy == "uniform":
        edges = np.arange(n_bins + 1, dtype=np.float64) / n_bins
        idx = np.array([uniform_bin(v, n_bins) for v in p], dtype=int)
    else:
        edges = quantile_edges(p, w, n_bins)
        idx = _bins_of(p, edges, n_bins)
    out = []
    for b in range(n_bins):
        inside = idx == b
        if inside.any():
            wb = np.sum(w[inside])
            out.append(
                (
                    edges[b],
                    edges[b + 1],
                    wb,
                    np.sum(w[inside] * p[inside]) / wb,
                    np.sum(w[inside] * y[inside]) / wb,
                )
            )
    return out


def sharpness(labels, probs, w=None, n_bins: int = 10) -> float:
    """``sum_b (W_b / W) ybar_b ** 2`` over the equal-width bins."""
    y, p, w = _arrays(labels, probs, w)
    if len(y) == 0:
        return 0.0
    idx = np.array([uniform_bin(v, n_bins) for v in p], dtype=int)
    total = 0.0
    for b in range(n_bins):
        inside = idx == b
        if inside.any():
            wb = np.sum(w[inside])
            total += wb * (np.sum(w[inside] * y[inside]) / wb) ** 2
    return float(total / np.sum(w))


def bank_marketing_sharpness():
    """The ``sharpness`` function of ``simulations/bank_marketing_ops.py`` itself (the
    script is loaded from its file; it imports only numpy and streamcal at top level)."""
    path = os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        "simulations",
        "bank_marketing_ops.py",
    )
    spec = importlib.util.spec_from_file_location("_bank_marketing_ops", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.sharpness


def auc_pairs(labels, probs, w=None) -> float:
    """``sum over (positive i, negative j) of w_i w_j ([p_i > p_j] + [p_i = p_j] / 2)``
    over ``W+ W-``, by a double loop; 0.0 unless both classes have positive weight."""
    y, p, w = _arrays(labels, probs, w)
    pos = [(pi, wi) for yi, pi, wi in zip(y, p, w) if yi == 1]
    neg = [(pj, wj) for yj, pj, wj in zip(y, p, w) if yj == 0]
    if not pos or not neg:
        return 0.0
    num = 0.0
    for pi, wi in pos:
        for pj, wj in neg:
            num += wi * wj * (1.0 if pi > pj else 0.5 if pi == pj else 0.0)
    return num / (sum(wi for _, wi in pos) * sum(wj for _, wj in neg))


def auc_exact(labels, probs, w=None) -> float:
    """:func:`auc_pairs` in exact rational arithmetic (every float weight is a
    ``Fraction``), rounded once: the correctly rounded AUC, for any positive finite
    weights (no underflow of ``w_i w_j``, no overflow of ``W+ W-``). Events of zero
    weight are skipped; 0.0 unless both classes have positive weight."""
    y, p, w = _arrays(labels, probs, w)
    pos = [(pi, Fraction(wi)) for yi, pi, wi in zip(y, p, w) if yi == 1 and wi > 0]
    neg = [(pj, Fraction(wj)) for yj, pj, wj in zip(y, p, w) if yj == 0 and wj > 0]
    if not pos or not neg:
        return 0.0
    num = Fraction(0)
    for pi, wi in pos:
        for pj, wj in neg:
            if pi >= pj:
                num += wi * wj if pi > pj else wi * wj / 2
    return float(num / (sum(wi for _, wi in pos) * sum(wj for _, wj in neg)))


def murphy(labels, probs, w=None, n_bins: int = 10) -> dict:
    """Brier score and its five Stephenson-Coelho-Jolliffe terms on equal-width bins,
    from the definitions (deviations from bin means, not differences of sums)."""
    y, p, w = _arrays(labels, probs, w)
    W = np.sum(w)
    ybar = np.sum(w * y) / W
    idx = np.array([uniform_bin(v, n_bins) for v in p], dtype=int)
    rel = res = wbv = wbc = 0.0
    for b in range(n_bins):
        inside = idx == b
        if not inside.any():
            continue
        wb, yb, pb = w[inside], y[inside], p[inside]
        Wb = np.sum(wb)
        pbar = np.sum(wb * pb) / Wb
        obar = np.sum(wb * yb) / Wb
        rel += Wb * (pbar - obar) ** 2
        res += Wb * (obar - ybar) ** 2
        wbv += np.sum(wb * (pb - pbar) ** 2)
        wbc += 2.0 * np.sum(wb * (pb - pbar) * (yb - obar))
    return {
        "brier": float(np.sum(w * (p - y) ** 2) / W),
        "reliability": float(rel / W),
        "resolution": float(res / W),
        "uncertainty": float(ybar * (1.0 - ybar)),
        "within_bin_variance": float(wbv / W),
        "within_bin_covariance": float(wbc / W),
    }
