"""Slow, obviously correct batch oracles for histogram binning (``HistogramBinning``).

Everything refits from the full list of events, in plain Python with exact rational
arithmetic (:class:`fractions.Fraction`), so each function can be checked by reading it.
The streaming calibrator is compared to :func:`histogram_binning` after every event.

References
----------
- Zadrozny and Elkan (2001), "Obtaining calibrated probability estimates from decision
  trees and naive Bayesian classifiers", ICML (histogram binning).
- Gupta and Ramdas (2021), "Distribution-free calibration guarantees for histogram
  binning without sample splitting", ICML: Algorithm 1 (uniform-mass bins from order
  statistics, ``S_(0) = 0``, ``S_(n+1) = 1``, edges ``S_(ceil(j (n+1) / B))``) and
  Theorem 4, restated as Theorem 2 in Gupta (2022), thesis proposal, section 2.2:
  ``epsilon = sqrt(log(2 / alpha) / (2 (floor(n / B) - 1)))`` for ``n >= 2 B``.
"""

from __future__ import annotations

import math
from fractions import Fraction

__all__ = [
    "bin_of",
    "epsilon",
    "histogram_binning",
    "is_epoch_boundary",
    "predict",
    "quantile_edges",
    "uniform_edges",
]


def uniform_edges(n_bins):
    """``[0, 1/B, ..., 1]``: ``j / B`` by floating-point division."""
    return [j / n_bins for j in range(n_bins + 1)]


def quantile_edges(scores, n_bins):
    """Algorithm 1's edges from the list of calibration scores (``n >= 1`` of them):
    ``e_j`` is the ``ceil(j (n+1) / B)``-th smallest score, or 1 when that rank is
    ``n + 1``."""
    xs = sorted(scores)
    n = len(xs)
    assert n >= 1
    inner = []
    for j in range(1, n_bins):
        r = math.ceil(Fraction(j * (n + 1), n_bins))
        inner.append(xs[r - 1] if r <= n else 1.0)
    return [0.0, *inner, 1.0]


def bin_of(edges, s):
    """The bin of score ``s``: how many inner edges are ``<= s`` (bins ``[e_k, e_k+1)``,
    the last one closed at 1)."""
    return sum(1 for e in edges[1:-1] if e <= s)


def is_epoch_boundary(c, window_size):
    """Is the ``c``-th positive-weight event (``c >= 1``) an epoch boundary? Powers of
    two without a window; with ``window_size = N``, powers of two below ``N`` and the
    multiples of ``N``."""
    power_of_two = (c & (c - 1)) == 0
    if window_size is None:
        return power_of_two
    return (power_of_two and c < window_size) or c % window_size == 0


def histogram_binning(
    events, n_bins, strategy="uniform", window_size=None, prior_strength=0.0
):
    """What ``HistogramBinning`` documents after learning ``events`` (a list of
    ``(score, label, w)`` in arrival order), recomputed from scratch.

    Returns a dict with ``edges`` (list), ``values`` (per bin, a float or None when the
    bin holds no positive weight), ``weights`` and ``label_sums`` (per bin, exact
    Fractions), ``counts`` (positive-weight events per bin), ``n_calibration`` and
    ``held`` (the events the bins are made of).
    """
    N = window_size
    edges = uniform_edges(n_bins)
    n_cal = 0
    if strategy == "quantile":
        c = 0
        for t, (_, _, w) in enumerate(events):
            if w > 0:
                c += 1
                if is_epoch_boundary(c, N):
                    held_then = (
                        events[: t + 1]
                        if N is None
                        else events[max(0, t + 1 - N) : t + 1]
                    )
                    cal = [s for s, _, w2 in held_then if w2 > 0]
                    edges = quantile_edges(cal, n_bins)
                    n_cal = len(cal)
    held = events if N is None else events[max(0, len(events) - N) :]
    W = [Fraction(0)] * n_bins
    S = [Fraction(0)] * n_bins
    n = [0] * n_bins
    for s, y, w in held:
        if w > 0:
            k = bin_of(edges, s)
            W[k] += Fraction(w)
            S[k] += Fraction(w) * int(y)
            n[k] += 1
    a = Fraction(prior_strength)
    values = []
    for k in range(n_bins):
        if n[k] == 0:
            values.append(None)
        else:
            m = Fraction((edges[k] + edges[k + 1]) / 2)
            values.append(float((S[k] + a * m) / (W[k] + a)))
    return {
        "edges": edges,
        "values": values,
        "weights": W,
        "label_sums": S,
        "counts": n,
        "n_calibration": n_cal,
        "held": [e for e in held if e[2] > 0],
    }


def predict(fit, s):
    """The prediction of a fit from :func:`histogram_binning` at ``s``: its bin's value,
    or ``s`` itself when the bin is empty."""
    v = fit["values"][bin_of(fit["edges"], s)]
    return s if v is None else v


def epsilon(n, n_bins, alpha, prior_strength=0.0):
    """Theorem 2 (Gupta 2022) with the prior's shift: ``inf`` when ``n < 2 B``, else
    ``sqrt(log(2/alpha) / (2 (n//B - 1))) + a / (n//B - 1 + a)``."""
    if n < 2 * n_bins:
        return math.inf
    m = n // n_bins - 1
    return math.sqrt(math.log(2 / alpha) / (2 * m)) + prior_strength / (
        m + prior_strength
    )
