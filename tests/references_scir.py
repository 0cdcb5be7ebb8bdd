"""Slow, obviously correct oracles for sorted cumulative isotonic regression (SCIR).

- :func:`isotonic_qp`: the isotonic regression under the product order as a quadratic
  programme, one constraint ``g_i <= g_j`` per comparable pair, solved by scipy's SLSQP
  (accurate to about 1e-8; identical points get both constraints, so they share a value);
- :func:`isotonic_minmax`: the exact max-min formula of Robertson, Wright and Dykstra
  (1988, theorem 1.4.4), ``g(x) = max over upper sets U containing x of min over lower
  sets L containing x of Avg(U & L)``, by enumerating every upper and lower set (nine
  points at most);
- :func:`maximal_upper_set_brute`: every subset, kept if it is an upper set;
- :func:`algorithm2_as_printed`: the pseudo-code of Arad and Rosset's Algorithm 2/3
  transcribed line by line (to show where it differs from lemma A.11);
- :func:`cumulative_points`: the sorted cumulative points of one event, its ties broken
  in every possible order and the outcomes averaged;
- :func:`predict`: the SCIR prediction from fitted points, by the paper's grid rule
  evaluated by scanning every fitted point, ties averaged over every order.

References
----------
- Arad and Rosset, "Improving multi-class calibration through normalization-aware
  isotonic techniques", section 4.2 and appendix A.1.
- Robertson, Wright and Dykstra (1988), "Order restricted statistical inference",
  theorem 1.4.4.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.optimize import minimize

__all__ = [
    "algorithm2_as_printed",
    "below",
    "cumulative_points",
    "isotonic_minmax",
    "isotonic_qp",
    "maximal_upper_set_brute",
    "predict",
]


def below(x, r):
    """``B[i, j]`` true iff point ``i`` is below point ``j`` (``i != j``)."""
    x = np.asarray(x, dtype=float)
    r = np.asarray(r)
    B = (x[:, None] <= x[None, :]) & (r[:, None] <= r[None, :])
    np.fill_diagonal(B, False)
    return B


def isotonic_qp(x, r, y, w=None):
    """``(g, objective)``: min ``sum w (g - y)^2`` s.t. ``g_i <= g_j`` whenever point
    ``i`` is below point ``j``, by SLSQP."""
    y = np.asarray(y, dtype=float)
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    i, j = np.nonzero(below(x, r))
    D = np.zeros((len(i), len(y)))
    D[np.arange(len(i)), i] = -1.0
    D[np.arange(len(i)), j] = 1.0
    constraints = (
        [{"type": "ineq", "fun": lambda g: D @ g, "jac": lambda g: D}] if len(i) else []
    )
    res = minimize(
        lambda g: float(np.sum(w * (g - y) ** 2)),
        np.full(len(y), np.average(y, weights=w)),
        jac=lambda g: 2.0 * w * (g - y),
        constraints=constraints,
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 2000},
    )
    g = res.x
    return g, float(np.sum(w * (g - y) ** 2))


def _upper_sets(B):
    """Every upper set (as a bool array) of the order ``B`` on ``n`` points."""
    n = len(B)
    out = []
    for bits in range(1 << n):
        s = np.array([(bits >> k) & 1 for k in range(n)], dtype=bool)
        # upper: i in s and i below j  =>  j in s
        if not (B[s][:, ~s]).any():
            out.append(s)
    return out


def isotonic_minmax(x, r, y, w=None):
    """The isotonic regression by the max-min formula (exact; ``n <= 9``)."""
    y = np.asarray(y, dtype=float)
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    U = np.array(_upper_sets(below(x, r)))  # (u, n)
    L = ~U  # the complements of the upper sets are the lower sets
    both = U[:, None, :] & L[None, :, :]  # (u, l, n): U & L
    with np.errstate(invalid="ignore", divide="ignore"):
        avg = (both @ (w * y)) / (both @ w)  # Avg(U & L), nan when empty
    g = np.empty(len(y))
    for k in range(len(y)):
        inner = np.where(L[None, :, k], avg, np.inf)[U[:, k]]  # U containing k
        g[k] = inner.min(axis=1).max()  # max over U of min over L containing k
    return g


def maximal_upper_set_brute(cols, v):
    """``max sum_U v`` over the upper sets ``U`` of points at positions ``0 .. m - 1``
    with ranks ``cols`` (point ``i`` below ``j`` iff ``i <= j`` and ``cols[i] <=
    cols[j]``); ``m <= 16``."""
    v = np.asarray(v, dtype=float)
    B = below(np.arange(len(v)), cols)
    return max(float(v[U].sum()) for U in _upper_sets(B))


def algorithm2_as_printed(cols, v):
    """The set ``S`` returned by Algorithm 2/3 of Arad and Rosset as printed (1-based
    ranks ``cols``, ``v[i] = w_i (y_i - b)``; ``c`` one more than the largest rank)."""
    N = len(v)
    c = max(cols) + 1
    M = [[0.0] * (c + 2) for _ in range(N + 2)]
    R = [[0] * (c + 2) for _ in range(N + 2)]
    for i in range(N, 0, -1):
        l = cols[i - 1]
        vi = v[i - 1]
        for j in range(1, c + 1):
            if j <= l:
                M[i][j] = M[i + 1][j] + vi
                R[i][j] = j
            elif vi < 0:
                M[i][j] = M[i + 1][j]
                R[i][j] = j
            else:
                M[i][j] = M[i + 1][l] + vi
                R[i][j] = l
    S = []
    j = c
    for i in range(1, N + 1):
        l = cols[i - 1]
        if R[i][j] <= l:
            S.append(i - 1)
        j = R[i][j]
    return S


def _orders(p):
    """Every order of the classes by decreasing probability (ties in every order)."""
    K = len(p)
    return [
        o
        for o in itertools.permutations(range(K))
        if all(p[o[a]] >= p[o[a + 1]] for a in range(K - 1))
    ]


def cumulative_points(p, label):
    """``(q, y)`` lists of length ``K - 1`` for one event: ``q[r - 1]`` the top-``r``
    cumulative probability (added from the largest down), ``y[r - 1]`` the fraction of
    the orders of the tied classes that put ``label`` in the top ``r``."""
    K = len(p)
    orders = _orders(p)
    q = []
    c = 0.0
    for a in range(K - 1):
        c += p[orders[0][a]]
        q.append(c)
    y = [sum(label in o[:r] for o in orders) / len(orders) for r in range(1, K)]
    return q, y


def predict(xs, rs, g, p, epsilon):
    """The SCIR prediction for ``p`` from fitted points ``(xs, rs, g)``: for each order
    of the tied classes, ``G_r = max{g_i : xs_i <= q_r, rs_i <= r}`` (``min g`` when
    empty), differences of ``G`` (``G_0 = 0``, ``G_K = 1``) to the classes in that
    order; averaged over the orders, floored at ``epsilon``, renormalised."""
    K = len(p)
    if K == 1:
        return [1.0]
    low = min(g)
    orders = _orders(p)
    acc = np.zeros(K)
    for o in orders:
        G = [0.0]
        c = 0.0
        for r in range(1, K):
            c += p[o[r - 1]]
            vals = [gi for xi, ri, gi in zip(xs, rs, g) if xi <= c and ri <= r]
            G.append(max(vals) if vals else low)
        G.append(1.0)
        for r in range(1, K + 1):
            acc[o[r - 1]] += G[r] - G[r - 1]
    acc /= len(orders)
    acc = np.maximum(acc, epsilon)
    return (acc / acc.sum()).tolist()
