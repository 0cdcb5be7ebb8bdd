"""Slow, obviously correct oracles for ``OnlinePlatt`` and ``OnlineBeta``.

- :func:`logistic_fit`: the batch fit the online calibrators converge to, the weighted,
  ridge-penalised (towards the identity map) logistic-regression maximum likelihood,
  minimised by scipy's L-BFGS-B with box constraints for beta calibration's ``a, b >=
  0``; it checks its own optimality conditions (KKT) before returning.
- :func:`online_newton_reference`: the update rule of :mod:`streamcal.core.newton` as its
  docstring states it, in numpy with full matrices: ``H`` itself rather than its inverse
  kept by Sherman-Morrison, the implicit equation always solved by bracketing (scipy's
  ``brentq``) rather than the explicit step when it is close enough, the projection
  as a box-constrained QP solved by L-BFGS-B rather than by active sets.
- :func:`beta_map`: Kull, Silva Filho and Flach's formula for the beta calibration map.

References
----------
- Platt, J. (1999), "Probabilistic outputs for support vector machines and comparisons to
  regularized likelihood methods", in *Advances in Large Margin Classifiers*, MIT Press.
- Kull, M., Silva Filho, T. and Flach, P. (2017), "Beta calibration: a well-founded and
  easily implemented improvement on logistic calibration for binary classifiers",
  AISTATS, Algorithms 1 and 2 (the features), section 3.1 (the map), 3.3 (``a, b >= 0``).
- Gupta, C. and Ramdas, A. (2023), "Online Platt Scaling with Calibeating", ICML.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq, minimize
from scipy.special import expit

__all__ = [
    "EPS",
    "MODELS",
    "beta_map",
    "decayed_weights",
    "features",
    "fisher_standard_errors",
    "log_loss",
    "logistic_fit",
    "online_newton_reference",
]

#: The clipping of scores before logarithms (machine epsilon, as in ``betacal``).
EPS = float(np.finfo(np.float64).eps)

#: kind -> (theta0 = the identity map, indices constrained to be >= 0)
MODELS = {
    "platt": ((1.0, 0.0), ()),
    "platt_monotone": ((1.0, 0.0), (0,)),
    "abm": ((1.0, 1.0, 0.0), (0, 1)),
    "am": ((1.0, 0.0), (0,)),
    "ab": ((1.0, 1.0), (0, 1)),
}


def features(scores, kind: str) -> np.ndarray:
    """The design matrix of a parametrisation, one row per score (clipped to [EPS, 1 - EPS]).

    - ``"platt"``, ``"platt_monotone"``, ``"am"``: ``(logit s, 1)``;
    - ``"abm"``: ``(ln s, -ln(1 - s), 1)``;
    - ``"ab"``: ``(ln 2s, -ln 2(1 - s))`` (``c = (a - b) ln 2`` folded in).
    """
    s = np.clip(np.asarray(scores, dtype=np.float64), EPS, 1.0 - EPS)
    one = np.ones_like(s)
    if kind in ("platt", "platt_monotone", "am"):
        return np.column_stack([np.log(s / (1.0 - s)), one])
    if kind == "abm":
        return np.column_stack([np.log(s), -np.log(1.0 - s), one])
    if kind == "ab":
        return np.column_stack([np.log(2.0 * s), -np.log(2.0 - 2.0 * s)])
    raise ValueError(kind)


def decayed_weights(weights, half_life):
    """Weights of an exponentially forgetting fit after the last event: ``w_i * 2 **
    (-(n - 1 - i) / half_life)`` (the newest event, age 0, keeps its weight)."""
    w = np.asarray(weights, dtype=np.float64)
    if half_life is None:
        return w
    age = np.arange(len(w))[::-1]
    return w * 2.0 ** (-age / half_life)


def _objective(theta, X, y, w, theta0, reg):
    z = X @ theta
    loss = np.sum(w * (np.logaddexp(0.0, z) - y * z)) + 0.5 * reg * np.sum(
        (theta - theta0) ** 2
    )
    grad = X.T @ (w * (expit(z) - y)) + reg * (theta - theta0)
    return loss, grad


def logistic_fit(X, y, w=None, theta0=None, reg=0.0, nonneg=()):
    """Minimise ``sum_i w_i logloss(theta; x_i, y_i) + reg / 2 ||theta - theta0||^2``
    subject to ``theta_j >= 0`` for ``j`` in ``nonneg``.

    L-BFGS-B from ``theta0`` with tight tolerances, then the KKT conditions are asserted:
    the gradient vanishes on free coordinates and points inwards (>= 0) on active ones,
    relative to the size of the problem.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=np.float64)
    d = X.shape[1]
    theta0 = np.zeros(d) if theta0 is None else np.asarray(theta0, dtype=np.float64)
    bounds = [(0.0, None) if j in nonneg else (None, None) for j in range(d)]
    res = minimize(
        _objective,
        theta0,
        args=(X, y, w, theta0, reg),
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        options={"maxiter": 100_000, "maxcor": 30, "ftol": 1e-16, "gtol": 1e-11},
    )
    theta = res.x
    _, g = _objective(theta, X, y, w, theta0, reg)
    scale = 1e-6 * (1.0 + np.sum(w * np.abs(X).max(axis=1)))
    for j in range(d):
        if j in nonneg and theta[j] <= 1e-12:
            assert g[j] >= -scale, (
                f"KKT: gradient {g[j]} pushes active coordinate {j} below 0"
            )
        else:
            assert abs(g[j]) <= scale, f"KKT: gradient {g} not zero at {theta}"
    return theta


def fisher_standard_errors(X, theta, w=None) -> np.ndarray:
    """Standard errors of a logistic fit: square roots of the diagonal of the inverse
    (weighted) Fisher information ``sum_i w_i p_i (1 - p_i) x_i x_i'`` at ``theta``."""
    X = np.asarray(X, dtype=np.float64)
    w = np.ones(len(X)) if w is None else np.asarray(w, dtype=np.float64)
    p = expit(X @ theta)
    info = (X * (w * p * (1.0 - p))[:, None]).T @ X
    return np.sqrt(np.diag(np.linalg.inv(info)))


def log_loss(p, y) -> np.ndarray:
    """Per-event log loss of probabilities ``p`` (clipped to [1e-300, 1])."""
    p = np.asarray(p, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    return -(
        y * np.log(np.maximum(p, 1e-300))
        + (1.0 - y) * np.log(np.maximum(1.0 - p, 1e-300))
    )


def beta_map(s, a, b, c):
    """Kull et al.'s beta calibration map ``1 / (1 + 1 / (e^c s^a / (1 - s)^b))`` at the
    clipped score, evaluated as written (in logs, to stay finite)."""
    s = np.clip(np.asarray(s, dtype=np.float64), EPS, 1.0 - EPS)
    return 1.0 / (1.0 + np.exp(-(c + a * np.log(s) - b * np.log(1.0 - s))))


def _residual(y, u):
    """``y - sigmoid(u)`` without cancellation (``1 - sigmoid(u) = sigmoid(-u)``)."""
    return expit(-u) if y else -expit(u)


def _implicit_root(z, c, y):
    """The root ``u`` of ``u = z + c (y - sigmoid(u))``, bracketed between ``z`` and
    ``z + c (y - sigmoid(z))``, by Brent's method to full precision."""
    end = z + c * _residual(y, z)
    if end == z:
        return z
    lo, hi = min(z, end), max(z, end)

    def f(u):
        return u - z - c * _residual(y, u)

    if f(lo) >= 0.0:  # the step is below rounding of its ends
        return lo
    if f(hi) <= 0.0:
        return hi
    return brentq(f, lo, hi, xtol=1e-15, rtol=1e-15, maxiter=500)


def _project(theta, H, nonneg):
    """``argmin_t (t - theta)' H (t - theta)`` subject to ``t_j >= 0`` for ``j`` in
    ``nonneg``, by L-BFGS-B on the quadratic."""
    d = len(theta)
    bounds = [(0.0, None) if j in nonneg else (None, None) for j in range(d)]

    def f(t):
        r = t - theta
        return r @ H @ r, 2.0 * H @ r

    start = np.where([j in nonneg for j in range(d)], np.maximum(theta, 0.0), theta)
    res = minimize(
        f,
        start,
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        options={"ftol": 1e-20, "gtol": 1e-14, "maxiter": 10_000},
    )
    return res.x


def online_newton_reference(X, y, w, theta0, reg, decay=1.0, nonneg=()):
    """The online update rule of :mod:`streamcal.core.newton`, in numpy with full
    matrices. Returns the parameters and the matrix ``H`` after every event, as lists.

    For each event: forgetting (``H <- decay H + (1 - decay) reg I``, then ``theta <-
    theta - H^-1 (1 - decay) reg (theta - theta0)``); then, for a positive weight, with
    ``p = sigmoid(x . theta)``, ``v = x' H^-1 x`` before the curvature is added: the
    implicit step ``theta <- theta + (u - z) / v H^-1 x``, ``u`` the root of ``u = z + w v
    (y - sigmoid(u))``, and ``H <- H + w p (1 - p) x x'``; finally the ``H``-norm
    projection onto the constraints when one is violated.
    """
    X = np.asarray(X, dtype=np.float64)
    d = X.shape[1]
    theta0 = np.asarray(theta0, dtype=np.float64)
    theta = theta0.copy()
    H = reg * np.eye(d)
    thetas, hs = [], []
    for x, yi, wi in zip(X, y, w):
        if decay != 1.0:
            H = decay * H + (1.0 - decay) * reg * np.eye(d)
            theta = theta - np.linalg.solve(H, (1.0 - decay) * reg * (theta - theta0))
        if wi > 0.0:
            z = float(x @ theta)
            q = float(expit(z) * expit(-z))  # p (1 - p)
            Px = np.linalg.solve(H, x)
            v = float(x @ Px)
            if v > 0.0:
                u = _implicit_root(z, wi * v, yi)
                theta = theta + (u - z) / v * Px
                H = H + wi * q * np.outer(x, x)
        if any(theta[j] < 0.0 for j in nonneg):
            theta = _project(theta, H, nonneg)
            for j in nonneg:
                theta[j] = max(theta[j], 0.0)
        thetas.append(theta.copy())
        hs.append(H.copy())
    return thetas, hs
