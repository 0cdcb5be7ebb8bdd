"""Temperature scaling fitted by maximum likelihood (pure numpy, no river).

Temperature scaling (Guo, Pleiss, Sun and Weinberger, 2017) maps a vector of logits
``z`` to ``softmax(z / T)``. With ``beta = 1 / T`` the negative log-likelihood of a
batch of labelled logit vectors,

    NLL(beta) = sum_i w_i * (logsumexp(beta * z_i) - beta * z_{i, y_i}),

is convex in ``beta``: its derivative is ``g(beta) = sum_i w_i * (E[z_i] - z_{i, y_i})``
and its second derivative ``sum_i w_i * Var[z_i]``, mean and variance taken under
``softmax(beta * z_i)``. :func:`fit_temperature` finds the root of ``g`` in the bracket
``[1 / t_max, 1 / t_min]`` by Newton's method safeguarded by bisection (a step that
leaves the current bracket is replaced by the bracket's midpoint, and the bracket
shrinks around the sign change of ``g`` at every iteration), so it converges
quadratically near the optimum and never diverges. When ``g`` does not change sign in
the bracket, the optimum is the end where it is smallest.

Absent classes (probability 0, or a class missing from a vector) are written as
``-inf`` logits: they get probability 0 at every temperature and do not take part in
the sums.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["T_MAX", "T_MIN", "fit_temperature", "temperature_nll"]

#: Bounds of the fitted temperature.
T_MIN = 0.01
T_MAX = 100.0

_MAX_ITER = 200


def _prepare(logits, labels, w, informative: bool = True):
    """Validated float arrays: finite-masked logits, label logits, weights, of the rows
    of positive weight whose label has a finite logit; if ``informative``, only of
    those that can inform the temperature."""
    Z = np.asarray(logits, dtype=np.float64)
    if Z.ndim != 2:
        raise ValueError(
            "The 'logits' argument of fit_temperature must be a two-dimensional array. "
            f"Got an array of shape {Z.shape} instead."
        )
    n = Z.shape[0]
    y = np.asarray(labels)
    if y.shape != (n,) or (
        n and (y.dtype.kind not in "iu" or y.min() < 0 or y.max() >= Z.shape[1])
    ):
        raise ValueError(
            "The 'labels' argument of fit_temperature must be a sequence of column "
            f"indices of 'logits', one per row. Got {y!r} instead."
        )
    w = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
    if w.shape != (n,) or not np.all((w >= 0) & np.isfinite(w)):
        raise ValueError(
            "The 'w' argument of fit_temperature must be a sequence of finite weights "
            f">= 0, one per row. Got {w!r} instead."
        )
    if np.isnan(Z).any() or np.isposinf(Z).any():
        raise ValueError(
            "The 'logits' argument of fit_temperature must hold finite reals or -inf. "
            "Got NaN or +inf instead."
        )
    mask = np.isfinite(Z)
    zy = Z[np.arange(n), y.astype(np.intp)] if n else np.zeros(0)
    # a row informs the temperature if it weighs, its label has a finite logit and it
    # has two distinct finite logits (else its NLL does not depend on beta)
    filled = np.where(mask, Z, 0.0)
    hi = np.where(mask, Z, -np.inf).max(axis=1) if n else np.zeros(0)
    lo = np.where(mask, Z, np.inf).min(axis=1) if n else np.zeros(0)
    keep = (w > 0) & np.isfinite(zy)
    if informative:
        keep &= hi > lo
    return filled[keep], mask[keep], zy[keep], w[keep]


def _derivatives(beta, Z, M, zy, w):
    """First and second derivatives of the NLL at ``beta``."""
    A = np.where(M, beta * Z, -np.inf)
    E = np.exp(A - A.max(axis=1, keepdims=True))
    P = E / E.sum(axis=1, keepdims=True)
    mean = (P * Z).sum(axis=1)
    with np.errstate(over="ignore", invalid="ignore"):
        # a logit more than 1e154 from its row's mean squares to inf; its class then has
        # probability 0 (a gap that large leaves exp(-beta * gap) = 0 for beta >= 1e-2)
        # and adds nothing, where the product 0 * inf would be NaN
        var = np.where(P > 0.0, P * (Z - mean[:, None]) ** 2, 0.0).sum(axis=1)
    return float(np.dot(w, mean - zy)), float(np.dot(w, var))


def temperature_nll(temperature: float, logits, labels, w=None) -> float:
    """The weighted negative log-likelihood of ``softmax(logits / temperature)``,
    summed over the rows (``-inf`` logits: absent classes). O(n K).

    Rows whose label has a ``-inf`` logit (infinite loss at every temperature) and rows
    of weight 0 are left out, as in :func:`fit_temperature`.

    Examples
    --------
    >>> round(temperature_nll(1.0, [[0.0, 0.0]], [0]), 6)
    0.693147

    """
    Z, M, zy, w = _prepare(logits, labels, w, informative=False)
    beta = 1.0 / float(temperature)
    A = np.where(M, beta * Z, -np.inf)
    m = A.max(axis=1)
    lse = m + np.log(np.exp(A - m[:, None]).sum(axis=1))
    return float(np.dot(w, lse - beta * zy))


def fit_temperature(logits, labels, w=None, t_min: float = T_MIN, t_max: float = T_MAX):
    """The temperature in ``[t_min, t_max]`` that minimises the weighted NLL of
    ``softmax(logits / T)``, or None when no row informs it.

    Parameters
    ----------
    logits
        Array ``(n, K)`` of logits or log-probabilities; ``-inf`` marks a class of
        probability 0 (or absent from that row).
    labels
        Column index of each row's observed class.
    w
        Non-negative row weights (default: all 1).
    t_min, t_max
        Bounds of the temperature.

    Returns
    -------
    float or None
        The fitted temperature; None when the NLL does not depend on the temperature:
        no row of positive weight whose label has a finite logit and which has two
        distinct finite logits (other rows are left out of the fit).

    Notes
    -----
    Safeguarded Newton on ``beta = 1 / T`` (see the module docstring); each iteration
    costs O(n K), and it typically takes 5 to 10 iterations to reach the optimum to
    machine precision.

    Examples
    --------
    An over-confident forecaster (the right class gets 0.9 but is right 70% of the
    time) is cooled down:

    >>> import numpy as np
    >>> z = np.log([[0.9, 0.05, 0.05]] * 10)
    >>> y = [0] * 7 + [1] * 2 + [2]
    >>> t = fit_temperature(z, y)
    >>> round(t, 4), round(float(np.exp(z[0] / t)[0] / np.exp(z[0] / t).sum()), 4)
    (1.8763, 0.7)

    """
    Z, M, zy, w = _prepare(logits, labels, w)
    if len(w) == 0:
        return None
    a, b = 1.0 / t_max, 1.0 / t_min  # bracket on beta
    ga = _derivatives(a, Z, M, zy, w)[0]
    if ga >= 0.0:
        return t_max
    gb = _derivatives(b, Z, M, zy, w)[0]
    if gb <= 0.0:
        return t_min
    x = min(max(1.0, a), b)
    for _ in range(_MAX_ITER):
        g, h = _derivatives(x, Z, M, zy, w)
        if g < 0.0:
            a = x
        elif g > 0.0:
            b = x
        else:
            break
        step = g / h if 0.0 < h < math.inf else math.inf  # no usable curvature: bisect
        if abs(step) <= 1e-15 * x:  # Newton has converged
            x = min(max(x - step, a), b)
            break
        nxt = x - step
        if not a < nxt < b:  # outside the bracket: bisect
            nxt = 0.5 * (a + b)
        if b - a <= 4e-16 * b:
            break
        x = nxt
    return 1.0 / x
