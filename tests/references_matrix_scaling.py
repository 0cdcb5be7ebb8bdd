"""Slow, obviously correct batch oracles for vector scaling, matrix scaling and
Dirichlet calibration (:mod:`streamcal.calibrators.matrix_scaling`).

Each function refits from scratch on a list of events ``(scores, label, w)`` (``scores``
a dict class -> probability, or -> logit), writing the penalised negative
log-likelihood with plain loops and handing it to ``scipy.optimize.minimize``, so that
it can be checked by reading it.

References
----------
- Vector and matrix scaling: Guo, Pleiss, Sun and Weinberger (2017), "On calibration of
  modern neural networks", ICML, section 4.2 (``softmax(W z + b)``, ``W`` diagonal or
  full, fitted by NLL on held-out data).
- Dirichlet calibration: Kull, Perello-Nieto, Kaengsepp, Silva Filho, Song and Flach
  (2019), "Beyond temperature scaling: obtaining well-calibrated multiclass
  probabilities with Dirichlet calibration", NeurIPS: ``softmax(W log p + b)`` with the
  ODIR penalty ``lambda / (K (K - 1)) sum_{i != j} W_ij^2 + mu / K sum_j b_j^2``
  added to the mean NLL.

streamcal adds ``nu / K sum_j (W_jj - 1)^2`` (the diagonal towards 1; in vector scaling
the scales) so that every window has one finite minimiser; probabilities 0 and missing
classes stand for ``1e-12``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize

FLOOR = 1e-12


def fit_classes(events) -> list:
    """The classes of the events of positive weight, in order of first appearance
    (each event's keys, then its label)."""
    out = []
    for s, y, w in events:
        if w > 0:
            for c in [*s, y]:
                if c not in out:
                    out.append(c)
    return out


def feature_vector(scores: dict, classes: list, logits: bool) -> list:
    """``x`` of one event over ``classes``: ``log max(p, 1e-12)`` (a missing class:
    ``log 1e-12``); with logits, a missing class gets the logit of probability 1e-12
    relative to the present ones."""
    if not logits:
        return [math.log(max(scores.get(c, 0.0), FLOOR)) for c in classes]
    present = [scores[c] for c in classes if c in scores]
    m = max(present)
    lse = m + math.log(sum(math.exp(z - m) for z in present))
    return [scores[c] if c in scores else lse + math.log(FLOOR) for c in classes]


def _unpack(theta, K, diagonal):
    if diagonal:
        W = [[theta[j] if j == k else 0.0 for k in range(K)] for j in range(K)]
        return W, list(theta[K:])
    W = [list(theta[j * K:(j + 1) * K]) for j in range(K)]
    return W, list(theta[K * K:])


def _softmax(s):
    m = max(s)
    e = [math.exp(v - m) for v in s]
    t = sum(e)
    return [v / t for v in e]


def penalised_nll(theta, X, ys, ws, K, diagonal, lam, mu, nu) -> float:
    """Mean weighted NLL of ``softmax(W x + b)`` plus the penalties, and its gradient."""
    W, b = _unpack(theta, K, diagonal)
    total = sum(ws)
    f = 0.0
    gW = [[0.0] * K for _ in range(K)]
    gb = [0.0] * K
    for x, y, w in zip(X, ys, ws):
        s = [sum(W[j][k] * x[k] for k in range(K)) + b[j] for j in range(K)]
        m = max(s)
        f += w / total * (m + math.log(sum(math.exp(v - m) for v in s)) - s[y])
        p = _softmax(s)
        for j in range(K):
            r = w / total * (p[j] - (1.0 if j == y else 0.0))
            gb[j] += r
            for k in range(K):
                gW[j][k] += r * x[k]
    for j in range(K):
        for k in range(K):
            if j == k:
                f += nu / K * (W[j][j] - 1.0) ** 2
                gW[j][j] += 2 * nu / K * (W[j][j] - 1.0)
            elif not diagonal:
                f += lam / (K * (K - 1)) * W[j][k] ** 2
                gW[j][k] += 2 * lam / (K * (K - 1)) * W[j][k]
        f += mu / K * b[j] ** 2
        gb[j] += 2 * mu / K * b[j]
    if diagonal:
        g = [gW[j][j] for j in range(K)] + gb
    else:
        g = [v for row in gW for v in row] + gb
    return f, np.array(g)


def fit(events, diagonal: bool, lam: float, mu: float, nu: float, logits: bool = False):
    """``(classes, W, b)`` minimising the penalised NLL on ``events`` (None when fewer
    than two classes weigh)."""
    classes = fit_classes(events)
    K = len(classes)
    kept = [(s, y, w) for s, y, w in events if w > 0]
    if K < 2:
        return None
    X = [feature_vector(s, classes, logits) for s, _, _ in kept]
    ys = [classes.index(y) for _, y, _ in kept]
    ws = [w for _, _, w in kept]
    theta0 = [1.0] * K + [0.0] * K if diagonal else [
        1.0 if j == k else 0.0 for j in range(K) for k in range(K)
    ] + [0.0] * K
    res = minimize(
        penalised_nll, np.array(theta0), args=(X, ys, ws, K, diagonal, lam, mu, nu),
        jac=True, method="BFGS", options={"gtol": 1e-11, "maxiter": 10_000},
    )
    W, b = _unpack(list(res.x), K, diagonal)
    return classes, W, b


def predict(fitted, scores: dict, logits: bool = False) -> dict:
    """The calibrated vector over the fit's classes for ``scores`` whose classes the
    fit all knows."""
    classes, W, b = fitted
    x = feature_vector(scores, classes, logits)
    K = len(classes)
    s = [sum(W[j][k] * x[k] for k in range(K)) + b[j] for j in range(K)]
    return dict(zip(classes, _softmax(s)))
