"""Slow, obviously correct oracles for flattened isotonic regression (FIR), one-vs-rest
isotonic regression and NA-FIR.

- :func:`fir_reference` / :func:`ovr_reference`: scikit-learn's ``IsotonicRegression``
  fitted on the flattened pairs (resp. on each class's column), weighted, zero-weight
  events dropped; read with ``"linear"`` interpolation it is scikit-learn's own
  ``predict`` (``out_of_bounds="clip"``), with ``"step"`` the value scikit-learn gives
  at the largest fitted score at or below the query (the lowest one below them all);
- :func:`probabilities`: ``max(g, epsilon)`` normalised, row by row in plain Python;
- :func:`normalised_log_likelihood`: the NA-FIR objective
  ``sum_i w_i log(g(p_{i, y_i}) / sum_c g(p_{i, c}))`` with ``g`` floored at
  ``epsilon``, summed event by event with ``math.fsum``;
- :func:`prior_fir_reference` / :func:`prior_ovr_reference`: the same fits under the
  prior of :mod:`streamcal.core.prior`: scikit-learn's level sets of the pairs, each
  pooled into one event (its weight, label its mean), and for the query's level set
  the pseudo-event added as one more weighted point at that level set's place, the
  whole refitted by scikit-learn (:func:`prior_piece_reference`);
- :func:`nafir_generic`: NA-FIR's problem handed to a generic optimiser: the values
  of ``g`` on the distinct flattened probabilities (from the first one holding a
  label; those below are held at ``epsilon``), parametrised by non-negative
  increments of ``log g`` above ``log lower`` (so that ``g`` is non-decreasing by
  construction), with the linear constraint ``log g <= 0`` at the top, solved by
  scipy's trust-constr (interior point) from several starting points; ``lower`` is
  ``epsilon`` by default, or with ``"fir"`` FIR's smallest positive value (from
  :func:`fir_reference`), as :func:`streamcal.core.fir.fit_nafir` documents.

References
----------
- Arad and Rosset, "Improving multi-class calibration through normalization-aware
  isotonic techniques", sections 3.3 and 4.1, appendix A.2.
- Zadrozny and Elkan (2002), "Transforming classifier scores into accurate multiclass
  probability estimates" (one-vs-rest).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, minimize
from sklearn.isotonic import IsotonicRegression

__all__ = [
    "fir_reference",
    "nafir_generic",
    "normalised_log_likelihood",
    "ovr_reference",
    "probabilities",
    "prior_piece_reference",
    "prior_fir_reference",
    "prior_ovr_reference",
]


def _kept(P, y, w):
    P = np.asarray(P, dtype=float)
    y = np.asarray(y)
    w = np.ones(len(P)) if w is None else np.asarray(w, dtype=float)
    keep = w > 0
    return P[keep], y[keep], w[keep]


def _isotonic(x, t, w, interpolation):
    """A function ``g(q)`` (array in, array out) from scikit-learn's isotonic fit."""
    iso = IsotonicRegression(increasing=True, out_of_bounds="clip")
    iso.fit(x, t, sample_weight=w)
    if interpolation == "linear":
        return lambda q: iso.predict(np.ravel(q)).reshape(np.shape(q))
    ux = np.unique(x)
    at = iso.predict(ux)

    def step(q):
        q = np.asarray(q, dtype=float)
        i = np.searchsorted(ux, q.ravel(), side="right") - 1
        return at[np.maximum(i, 0)].reshape(q.shape)

    return step


def fir_reference(P, y, w=None, interpolation="step"):
    """``g`` of FIR: scikit-learn's isotonic regression of ``1[y_i == c]`` on
    ``P[i, c]`` over all pairs, weight ``w_i``."""
    P, y, w = _kept(P, y, w)
    K = P.shape[1]
    t = (np.arange(K)[None, :] == y[:, None]).astype(float)
    return _isotonic(P.ravel(), t.ravel(), np.repeat(w, K), interpolation)


def ovr_reference(P, y, w=None, interpolation="step"):
    """One ``g_c`` per class: scikit-learn's isotonic regression of ``1[y == c]`` on
    ``P[:, c]``."""
    P, y, w = _kept(P, y, w)
    return [
        _isotonic(P[:, c], (y == c).astype(float), w, interpolation)
        for c in range(P.shape[1])
    ]


def probabilities(G, epsilon):
    """Rows of ``max(G, epsilon)`` divided by their sums, in plain Python."""
    out = []
    for row in np.asarray(G, dtype=float).tolist():
        f = [max(v, epsilon) for v in row]
        total = math.fsum(f)
        out.append([v / total for v in f])
    return np.array(out)


def normalised_log_likelihood(P, y, w, g, epsilon):
    """``sum_i w_i log(max(g(p_iy), eps) / sum_c max(g(p_ic), eps))``, zero weights
    dropped; ``g`` maps an array of probabilities to values."""
    P, y, w = _kept(P, y, w)
    terms = []
    for p, label, wi in zip(P, y, w):
        f = [max(float(v), epsilon) for v in g(p)]
        terms.append(wi * math.log(f[label] / math.fsum(f)))
    return math.fsum(terms)


def nafir_generic(P, y, w=None, epsilon=1e-6, lower=None, starts=3, seed=0):
    """NA-FIR by trust-constr on non-negative increments of ``log g`` (see the module
    docstring). Returns ``(objective, g)``: the best objective found and ``g`` as a
    function of an array of probabilities (step interpolation)."""
    P, y, w = _kept(P, y, w)
    m, K = P.shape
    x = P.ravel()
    t = (np.arange(K)[None, :] == y[:, None]).ravel()
    ux = np.unique(x)
    cell = np.searchsorted(ux, x).reshape(m, K)
    has_label = np.zeros(len(ux), bool)
    has_label[np.searchsorted(ux, x[t])] = True
    j0 = int(np.argmax(has_label))
    fir = fir_reference(P, y, w)
    fir_cells = fir(ux)
    if lower == "fir":
        lower = float(fir_cells[fir_cells > 0].min())
    lower = epsilon if lower is None else max(epsilon, lower)
    lo = math.log(lower)
    n = len(ux) - j0
    active = cell >= j0
    rel = np.where(active, cell - j0, 0)
    label_cell = rel[np.arange(m), y]

    def unpack(d):
        return lo + np.cumsum(d)  # log g on cells j0, j0 + 1, ...

    def negative_likelihood(d):
        u = unpack(d)
        g = np.exp(u)
        G = np.where(active, g[rel], epsilon)
        T = G.sum(axis=1)
        value = -(w @ (u[label_cell] - np.log(T)))
        # d(-L)/du_j = -b_j + sum_i w_i * (sum of G over event i's pairs in cell j) / T_i
        du = -np.bincount(label_cell, weights=w, minlength=n)
        du += np.bincount(
            rel[active], weights=((G / T[:, None]) * w[:, None])[active], minlength=n
        )
        # u_j = lo + sum_{l <= j} d_l
        return value, np.cumsum(du[::-1])[::-1]

    total = LinearConstraint(np.ones((1, n)), -np.inf, -lo)  # log g <= 0 at the top
    rng = np.random.default_rng(seed)
    u0 = np.log(np.clip(np.maximum(fir_cells[j0:], epsilon), lower, 1.0))
    candidates = [np.diff(u0, prepend=lo), np.r_[-lo, np.zeros(n - 1)]]
    for _ in range(starts - 2):
        d = rng.random(n)
        candidates.append(d * (-lo) / d.sum() * rng.random())
    best = (math.inf, None)
    for d0 in candidates:
        with warnings.catch_warnings():  # trust-constr's quasi-Newton notes
            warnings.simplefilter("ignore")
            res = minimize(
                negative_likelihood,
                0.999 * d0 + 1e-6,  # strictly inside
                jac=True,
                method="trust-constr",
                bounds=Bounds(np.zeros(n), np.full(n, np.inf)),
                constraints=[total],
                options={"maxiter": 5000, "gtol": 1e-12, "xtol": 1e-14},
            )
        d = np.maximum(res.x, 0.0)
        if d.sum() > -lo:
            d *= -lo / d.sum()
        value = negative_likelihood(d)[0]
        if value < best[0]:
            best = (value, d)
    values = np.r_[np.zeros(j0), np.exp(unpack(best[1]))]

    def g(q):
        q = np.asarray(q, dtype=float)
        i = np.searchsorted(ux, q.ravel(), side="right") - 1
        return values[np.maximum(i, 0)].reshape(q.shape)

    return -best[0], g


def prior_piece_reference(weights, sums, i, prior_strength, prior_mean):
    """The batch procedure behind :func:`streamcal.core.prior.prior_piece_value`: each
    piece as one event (its weight, label its mean) at score ``j``, plus the
    pseudo-event (weight ``prior_strength``, label ``prior_mean``) at piece ``i``'s
    score, fitted by scikit-learn's ``IsotonicRegression`` and read at score ``i``."""
    x = [float(j) for j in range(len(weights))]
    t = [s / w for w, s in zip(weights, sums)]
    ws = list(map(float, weights))
    if prior_strength > 0:
        x.append(float(i))
        t.append(prior_mean)
        ws.append(prior_strength)
    iso = IsotonicRegression(increasing=True).fit(x, t, sample_weight=ws)
    return float(iso.predict([float(i)])[0])


def _prior_isotonic(x, t, w, prior_strength, prior_mean, interpolation):
    """``g(q)`` under the prior: scikit-learn's fit of ``(x, t, w)``; its level sets
    (runs of equal fitted values over the distinct scores) as pieces with their
    weights and label sums; each piece's value :func:`prior_piece_reference`; read
    by step or linear interpolation between pieces."""
    x, t, w = (np.asarray(v, dtype=float) for v in (x, t, w))
    iso = IsotonicRegression(increasing=True).fit(x, t, sample_weight=w)
    ux = np.unique(x)
    fitted = iso.predict(ux)
    lo, hi, weights, sums = [], [], [], []
    for j, u in enumerate(ux):
        at = x == u
        if j and fitted[j] == fitted[j - 1]:
            hi[-1] = u
            weights[-1] += math.fsum(w[at])
            sums[-1] += math.fsum(w[at] * t[at])
        else:
            lo.append(u)
            hi.append(u)
            weights.append(math.fsum(w[at]))
            sums.append(math.fsum(w[at] * t[at]))
    values = [
        prior_piece_reference(weights, sums, i, prior_strength, prior_mean)
        for i in range(len(lo))
    ]

    def g(q):
        out = []
        for v in np.ravel(q).tolist():
            i = int(np.searchsorted(lo, v, side="right")) - 1
            if i < 0:
                out.append(values[0])
            elif interpolation == "linear" and i + 1 < len(lo) and v > hi[i]:
                f = (v - hi[i]) / (lo[i + 1] - hi[i])
                out.append(values[i] + (values[i + 1] - values[i]) * f)
            else:
                out.append(values[i])
        return np.array(out).reshape(np.shape(q))

    return g


def prior_fir_reference(P, y, w, prior_strength, prior_mean=0.5, interpolation="step"):
    """FIR's ``g`` under the prior (see the module docstring)."""
    P, y, w = _kept(P, y, w)
    K = P.shape[1]
    t = (np.arange(K)[None, :] == y[:, None]).astype(float)
    return _prior_isotonic(
        P.ravel(), t.ravel(), np.repeat(w, K), prior_strength, prior_mean, interpolation
    )


def prior_ovr_reference(P, y, w, prior_strength, prior_mean=0.5, interpolation="step"):
    """One-vs-rest's ``g_c`` under the prior, one per class."""
    P, y, w = _kept(P, y, w)
    return [
        _prior_isotonic(
            P[:, c], (y == c).astype(float), w, prior_strength, prior_mean, interpolation
        )
        for c in range(P.shape[1])
    ]
