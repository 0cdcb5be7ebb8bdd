"""Batch calibration metrics on arrays of labels and predicted probabilities.

Each function validates its inputs with :mod:`streamcal._validation` (probabilities in
[0, 1], binary labels, same non-zero length) and returns a Python float. Errors name the
argument, the expected domain and the value received.
"""

from __future__ import annotations

import typing

import numpy as np

from streamcal import _validation as V
from streamcal.core.bins import edge_bins, linear_quantile_edges, uniform_bins

__all__ = [
    "BrierDecomposition",
    "brier_score",
    "calibration_refinement",
    "expected_calibration_error",
    "log_loss",
]

_STRATEGIES = ("uniform", "quantile")


def product_over(x: float, z: float, w: float) -> float:
    """``x * z / w`` (``w > 0``) as the metrics compute it: the product first, unless a
    factor is below ``2 ** -480`` (sums of weights of about 1e-145 and less, whose
    product would underflow), then ``x * (z / w)``, whose factors keep the scale of the
    weights. The compiled stores use the same rule (``_kernels.pxd``).

    Examples
    --------
    >>> product_over(0.5, 0.25, 2.0)
    0.0625
    >>> product_over(1e-300, 1e-300, 1e-300)  # x * z alone underflows to 0.0
    1e-300

    """
    if abs(x) >= 2.0**-480 and abs(z) >= 2.0**-480:
        return x * z / w
    return x * (z / w)


def _check_pair(labels, probs, owner):
    """Validate ``labels`` and ``probs``; return them as float64 arrays."""
    y = V.check_labels_array(labels, None, owner, None, name="labels")
    p = V.check_scores_array(probs, owner, None, name="probs", n=len(y), like="labels")
    if len(y) == 0:
        raise ValueError(
            f"The 'labels' argument of {owner} must be a non-empty sequence. "
            "Got an empty sequence instead."
        )
    return y, p


def brier_score(labels, probs) -> float:
    """Brier score: the mean squared difference between probability and outcome.

    ``mean((probs - labels) ** 2)``, in [0, 1]; lower is better. A strictly proper
    scoring rule; equals scikit-learn's ``brier_score_loss``. Cost O(n).

    Parameters
    ----------
    labels
        Binary outcomes (0, 1, False, True), a one-dimensional sequence.
    probs
        Predicted probabilities of the outcome 1, in [0, 1], same length.

    Examples
    --------
    >>> brier_score([0, 1, 1], [0.1, 0.8, 0.6])
    0.07
    >>> brier_score([0, 1], [0.5, 1.2])
    Traceback (most recent call last):
    ...
    ValueError: The 'probs' argument of brier_score must be a real number in [0, 1]. Got 1.2 at index 1 instead.

    """
    y, p = _check_pair(labels, probs, "brier_score")
    return float(np.mean((p - y) ** 2))


def log_loss(labels, probs, eps: float = 1e-15) -> float:
    """Logarithmic loss (negative mean log-likelihood, in nats) of binary outcomes.

    ``-mean(log(r))`` where ``r`` is the probability given to the observed outcome
    (``probs`` if the label is 1, ``1 - probs`` if it is 0) clipped to ``[eps, 1 - eps]``,
    exactly as the streaming :class:`streamcal.metrics.LogLoss` does; lower is better.
    Clipping keeps the loss finite when a forecast of 0 or 1 turns out wrong (it costs
    ``-log(eps)``); with ``eps=0`` such a forecast gives ``inf``. Cost O(n).

    Parameters
    ----------
    labels
        Binary outcomes (0, 1, False, True), a one-dimensional sequence.
    probs
        Predicted probabilities of the outcome 1, in [0, 1], same length.
    eps
        The probability of the observed outcome is clipped to ``[eps, 1 - eps]``, a real
        number in [0, 0.5).

    Examples
    --------
    >>> round(log_loss([0, 1], [0.5, 0.5]), 6)    # log(2)
    0.693147
    >>> log_loss([1], [0.0]) > 30                  # -log(1e-15), not inf
    True
    >>> log_loss([1], [0.0], eps=0.0)
    inf

    """
    owner = "log_loss"
    eps = V.check_real(eps, owner, "eps", lambda x: 0.0 <= x < 0.5, "a real number in [0, 0.5)")
    y, p = _check_pair(labels, probs, owner)
    r = np.clip(np.where(y == 1.0, p, 1.0 - p), eps, 1.0 - eps)
    with np.errstate(divide="ignore"):  # log(0) = -inf when eps = 0
        return float(-np.mean(np.log(r)))


def _bin_indices(probs: np.ndarray, n_bins: int, strategy: str) -> np.ndarray:
    """Bin index of every probability, in ``0 .. n_bins - 1``.

    Bin ``i`` holds the probabilities in ``[e_i, e_{i+1})``, the last bin also its
    right edge. Edges are ``i / n_bins`` ("uniform", so 0.3 falls in bin 3 of 10) or the
    ``i / n_bins`` quantiles of ``probs`` (numpy's default linear interpolation,
    "quantile"); repeated quantile edges give empty bins.
    """
    if strategy == "uniform":
        return uniform_bins(probs, n_bins)
    # unit weights: bit for bit np.quantile(probs, levels), made non-decreasing
    edges = linear_quantile_edges(
        np.sort(probs), np.arange(1.0, len(probs) + 1.0), n_bins
    )
    return edge_bins(probs, edges)


def _binned(labels: np.ndarray, probs: np.ndarray, n_bins: int, strategy: str):
    """Per-bin event count, label sum and probability sum (validated inputs)."""
    idx = _bin_indices(probs, n_bins, strategy)
    counts = np.bincount(idx, minlength=n_bins)
    sum_y = np.bincount(idx, weights=labels, minlength=n_bins)
    sum_p = np.bincount(idx, weights=probs, minlength=n_bins)
    return counts, sum_y, sum_p


def expected_calibration_error(labels, probs, n_bins: int = 10, strategy: str = "uniform") -> float:
    """Expected calibration error (ECE) over bins of the predicted probability.

    ``sum over non-empty bins b of (n_b / n) * |mean label in b - mean prob in b|``, in
    [0, 1]; 0 when, in every bin, the forecasts average the observed frequency. The
    value depends on the binning, and even a calibrated forecaster scores above 0 on a
    finite sample: about ``0.4 * sqrt(n_bins / n)`` when the probabilities are near 1/2
and the bins equally filled.
    Cost O(n) ("uniform") or O(n log n) ("quantile").

    Parameters
    ----------
    labels
        Binary outcomes (0, 1, False, True), a one-dimensional sequence.
    probs
        Predicted probabilities of the outcome 1, in [0, 1], same length.
    n_bins
        Number of bins, an int >= 1.
    strategy
        How the bins are cut; bin ``i`` holds the probabilities in
        ``[e_i, e_{i+1})`` and the last bin is closed on the right.

        - ``"uniform"`` (default): equal widths, ``e_i = i / n_bins``.
        - ``"quantile"``: equal mass, ``e_i`` the ``i / n_bins`` quantile of ``probs``
          (numpy's default, linear interpolation); ties are never split across bins, so
          bins hold about ``n / n_bins`` events when the probabilities are distinct.

    Examples
    --------
    >>> labels = [0, 0, 1, 1, 1, 0]
    >>> probs = [0.1, 0.2, 0.7, 0.9, 0.8, 0.3]

    Two equal-width bins, {0.1, 0.2, 0.3} and {0.7, 0.8, 0.9}: ``(3 * 0.2 + 3 * 0.2) / 6``

    >>> round(expected_calibration_error(labels, probs, n_bins=2), 6)
    0.2

    Three equal-mass bins, {0.1, 0.2}, {0.3, 0.7} and {0.8, 0.9}: ``(2 * 0.15 + 0 + 2 * 0.15) / 6``

    >>> round(expected_calibration_error(labels, probs, n_bins=3, strategy="quantile"), 6)
    0.1

    >>> expected_calibration_error(labels, probs, n_bins=0)
    Traceback (most recent call last):
    ...
    ValueError: The 'n_bins' argument of expected_calibration_error must be an int >= 1. Got 0 instead.

    """
    owner = "expected_calibration_error"
    n_bins = V.check_int(n_bins, owner, "n_bins", minimum=1)
    if not isinstance(strategy, str) or strategy not in _STRATEGIES:
        raise V.argument_error(
            ValueError if isinstance(strategy, str) else TypeError, "strategy", owner, None,
            "a str among {'uniform', 'quantile'}", strategy,
        )
    y, p = _check_pair(labels, probs, owner)
    _, sum_y, sum_p = _binned(y, p, n_bins, strategy)
    # (n_b / n) * |sum_y / n_b - sum_p / n_b| = |sum_y - sum_p| / n; empty bins add 0.
    return float(np.sum(np.abs(sum_y - sum_p)) / len(y))


class BrierDecomposition(typing.NamedTuple):
    """The Brier score and its Foster-Hart parts: ``brier = calibration + refinement``."""

    brier: float
    calibration: float
    refinement: float


def calibration_refinement(labels, forecasts, w=None) -> BrierDecomposition:
    """Foster and Hart's decomposition of the Brier score by forecast value.

    Group the events by distinct forecast value ``p``; let ``W_p`` be the weight of the
    group and ``ybar_p`` its weighted mean outcome. With ``W`` the total weight::

        brier       = sum_t w_t (p_t - y_t) ** 2 / W
        calibration = sum_p W_p (p - ybar_p) ** 2 / W          (K)
        refinement  = sum_p W_p ybar_p (1 - ybar_p) / W        (R)

    and ``brier = calibration + refinement`` exactly (up to rounding), since within a
    group ``sum w (p - y)**2 = W_p (p - ybar_p)**2 + sum w (y - ybar_p)**2`` and, for
    binary outcomes, the last sum is ``W_p ybar_p (1 - ybar_p)``. The calibration score
    ``K`` is what recalibrating each forecast value to its outcome frequency would
    remove; the refinement ``R`` depends only on how the forecasts partition the events
    (any finer partition has a smaller or equal refinement), and measures expertise
    (Foster and Hart, "Calibeating: beating forecasters at their own game",
    Theoretical Economics 18, 2023, section 2; also Murphy's reliability and
    resolution + uncertainty). Zero-weight events are ignored. Cost O(n log n).

    Parameters
    ----------
    labels
        Binary outcomes (0, 1, False, True), a one-dimensional sequence.
    forecasts
        Forecast probabilities in [0, 1], same length; events are grouped by exactly
        equal values (round or bin them first to group nearby forecasts).
    w
        Optional non-negative weights, same length (default: all 1); they must not
        all be zero.

    Returns
    -------
    BrierDecomposition
        The named tuple ``(brier, calibration, refinement)`` of floats.

    Examples
    --------
    Forecast 0.8 twice (one rain) and 0.2 twice (no rain):

    >>> d = calibration_refinement([1, 0, 0, 0], [0.8, 0.8, 0.2, 0.2])
    >>> [round(v, 6) for v in d]
    [0.19, 0.065, 0.125]
    >>> d.brier == brier_score([1, 0, 0, 0], [0.8, 0.8, 0.2, 0.2])
    True

    """
    owner = "calibration_refinement"
    y = V.check_labels_array(labels, None, owner, None, name="labels")
    p = V.check_scores_array(forecasts, owner, None, name="forecasts", n=len(y), like="labels")
    ws = V.check_weights_array(w, len(y), owner, None)
    keep = ws > 0
    if not keep.any():
        raise ValueError(
            f"The 'w' argument of {owner} must have a positive total weight over a "
            f"non-empty sequence. Got {V.format_value(w if w is not None else list(ws))} instead."
        )
    y, p, ws = y[keep], p[keep], ws[keep]
    total = ws.sum()
    values, inv = np.unique(p, return_inverse=True)
    W = np.bincount(inv, weights=ws, minlength=len(values))
    ybar = np.bincount(inv, weights=ws * y, minlength=len(values)) / W
    brier = float(np.sum(ws * (p - y) ** 2) / total)
    calibration = float(np.sum(W * (values - ybar) ** 2) / total)
    refinement = float(np.sum(W * ybar * (1.0 - ybar)) / total)
    return BrierDecomposition(brier, calibration, refinement)
