"""Slow, obviously correct oracles for isotonic recursive partitioning (IRP) and its
recursive binning baselines.

Each function refits from scratch in plain Python, trying every region and every cut
(or grid point) at every step, so that it can be checked by reading it.

References
----------
- Luss, Rosset and Shahar (2012), "Efficient regularized isotonic regression with
  application to gene-gene interaction search", Ann. Appl. Stat. 6(1): IRP splits a
  region at the cut that maximises the centred sum of its upper part.
- Berta, Bach and Jordan (2024), "Classifier calibration with ROC-regularized isotonic
  regression", AISTATS: section 2.4 (binary IRP, Laplace smoothing, recursive binning at
  midpoints), Definition 3.2 (ROC monotony), section 3.3 and Algorithm 2 (multiclass
  IRP). The readings where the paper is vague are those documented in
  ``streamcal/core/irp.py``.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
from scipy.optimize import linprog

__all__ = [
    "argmax_first",
    "binary_recursion",
    "midpoint_binning",
    "multiclass_recursion",
    "predict_bins",
    "predict_leaves",
    "roc_monotone_cycles",
    "roc_monotone_lp",
]


def _cells(scores, labels, weights):
    """Distinct scores (sorted) with exact rational weight and label sums; zero weights
    dropped."""
    if weights is None:
        weights = [1.0] * len(scores)
    cells: dict = {}
    for x, y, w in zip(scores, labels, weights):
        if w == 0:
            continue
        W, S = cells.get(float(x), (Fraction(0), Fraction(0)))
        cells[float(x)] = (
            W + Fraction(float(w)),
            S + Fraction(float(w)) * Fraction(float(y)),
        )
    xs = sorted(cells)
    return xs, [cells[x][0] for x in xs], [cells[x][1] for x in xs]


def _smooth(mean, lam, k):
    return float(
        (Fraction(mean) + Fraction(float(lam))) / (1 + k * Fraction(float(lam)))
    )


def binary_recursion(
    scores, labels, weights=None, max_bins=None, smoothing=0.0, split="irp", prior=0.0
):
    """Binary IRP (``split="irp"``) or the non-monotone best-threshold binning
    (``split="best"``), in exact rational arithmetic.

    At each step every cut ``j`` of every region ``[a, b)`` is tried: its gain is the
    centred sum of the upper part ``sum_{i >= j} (S_i - ybar_R W_i)`` (its absolute value
    for ``"best"``); a cut is allowed when the gain is positive and the lower part's mean
    is below the upper part's (differs from it, for ``"best"``). The largest gain wins;
    ties go to the leftmost region, then the longest upper part. Stops when no cut is
    allowed or before the number of bins would exceed ``max_bins``.

    Returns ``(edges, values, gains)``: the smallest score of every bin but the first,
    the (smoothed) bin means and the gains of the splits in order, as floats.
    """
    xs, W, S = _cells(scores, labels, weights)
    if not xs:
        return [], [], []
    a_ = Fraction(float(prior))

    def value(a, b):  # the value of cells [a, b) under the prior, before smoothing
        return (sum(S[a:b]) + a_ / 2) / (sum(W[a:b]) + a_)

    regions = [(0, len(xs))]
    gains = []
    while max_bins is None or len(regions) < max_bins:
        best = None
        ordered = sorted(regions)
        for r, (a, b) in enumerate(ordered):
            WR, SR = sum(W[a:b]), sum(S[a:b])
            for j in range(a + 1, b):
                Wu, Su = sum(W[j:b]), sum(S[j:b])
                g = Su - SR / WR * Wu
                if split == "best":
                    g = abs(g)
                lower, upper = (SR - Su) / (WR - Wu), Su / Wu
                if prior:
                    lower, upper = value(a, j), value(j, b)
                allowed = g > 0 and (
                    lower < upper if split == "irp" else lower != upper
                )
                if allowed and prior:
                    allowed = (r == 0 or value(*ordered[r - 1]) <= lower) and (
                        r + 1 == len(ordered) or upper <= value(*ordered[r + 1])
                    )
                if allowed and (best is None or g > best[0]):
                    best = (g, a, b, j)
        if best is None:
            break
        g, a, b, j = best
        regions.remove((a, b))
        regions += [(a, j), (j, b)]
        gains.append(float(g))
    regions.sort()
    edges = [xs[a] for a, _ in regions[1:]]
    values = [_smooth(value(a, b), smoothing, 2) for a, b in regions]
    return edges, values, gains


def midpoint_binning(scores, labels, weights=None, max_bins=None, smoothing=0.0):
    """The paper's recursive binning at midpoints: cut [0, 1] at 1/2, then each interval
    at its middle, breadth first; an interval holding fewer than two distinct scores is
    not cut; an empty side keeps the value of the interval it was cut from and is not a
    bin. Stops before the number of bins would exceed ``max_bins``.

    Returns ``(edges, values)`` (a score ``s`` is in the bin ``bisect_right(edges, s)``).
    """
    xs, W, S = _cells(scores, labels, weights)
    if not xs:
        return [], []
    mean = sum(S) / sum(W)
    leaves = [[0.0, 1.0, _smooth(mean, smoothing, 2), list(range(len(xs)))]]
    queue = [leaves[0]]
    bins = 1
    while queue:
        leaf = queue.pop(0)
        lo, hi, value, cells = leaf
        if len(cells) < 2:
            continue
        mid = (lo + hi) / 2
        left = [i for i in cells if xs[i] < mid]
        right = [i for i in cells if xs[i] >= mid]
        added = (len(left) > 0) + (len(right) > 0) - 1
        if max_bins is not None and bins + added > max_bins:
            break
        bins += added
        children = []
        for a, b, part in ((lo, mid, left), (mid, hi, right)):
            v = (
                _smooth(sum(S[i] for i in part) / sum(W[i] for i in part), smoothing, 2)
                if part
                else value
            )
            children.append([a, b, v, part])
        k = leaves.index(leaf)
        leaves[k : k + 1] = children
        queue += [c for c in children if c[3]]
    return [leaf[0] for leaf in leaves[1:]], [leaf[2] for leaf in leaves]


def predict_bins(edges, values, s):
    """The value of the bin of ``s``: the number of edges ``<= s``."""
    return values[sum(1 for e in edges if e <= s)]


# ------------------------------------------------------------------ the simplex


def argmax_first(v):
    """Index of the largest entry of ``v``, the first one on ties."""
    best = 0
    for k in range(1, len(v)):
        if v[k] > v[best]:
            best = k
    return best


def _bounds(P, R, gamma):
    """``c[k][j] = min over events i with argmax(p_i - gamma) = k of r_ik - r_ij``."""
    K = len(gamma)
    c = [[math.inf] * K for _ in range(K)]
    for p, r in zip(P, R):
        k = argmax_first([p[j] - gamma[j] for j in range(K)])
        for j in range(K):
            c[k][j] = min(c[k][j], r[k] - r[j])
    return c


def roc_monotone_cycles(P, R, split_points, tol=1e-12) -> bool:
    """ROC monotony on ``split_points`` (Berta et al., Definition 3.2, at the split
    points only): for each split point, the difference constraints
    ``gamma'_k - gamma'_j <= c_kj`` are feasible, i.e. no cycle of classes has a
    negative total weight; every simple cycle is enumerated."""
    for gamma in split_points:
        c = _bounds(P, R, gamma)
        K = len(gamma)
        for size in range(2, K + 1):
            for cycle in itertools.permutations(range(K), size):
                if cycle[0] != min(cycle):
                    continue
                total = sum(c[cycle[t]][cycle[(t + 1) % size]] for t in range(size))
                if total < -tol:
                    return False
    return True


def roc_monotone_lp(P, R, split_points) -> bool:
    """The same property as a linear feasibility problem solved by scipy (HiGHS): for
    each split point, is there a ``gamma'`` with ``r_ik - gamma'_k >= r_ij - gamma'_j``
    for every event ``i`` of raw region ``k`` and every class ``j``?"""
    for gamma in split_points:
        K = len(gamma)
        rows, rhs = [], []
        for p, r in zip(P, R):
            k = argmax_first([p[j] - gamma[j] for j in range(K)])
            for j in range(K):
                if j != k:
                    row = [0.0] * K
                    row[k], row[j] = 1.0, -1.0  # gamma'_k - gamma'_j <= r_k - r_j
                    rows.append(row)
                    rhs.append(r[k] - r[j] + 1e-12)
        if not rows:
            continue
        res = linprog(
            np.zeros(K),
            A_ub=np.array(rows),
            b_ub=np.array(rhs),
            bounds=[(None, None)] * K,
            method="highs",
        )
        if res.status == 2:  # infeasible
            return False
        assert res.status == 0, res.message
    return True


def multiclass_recursion(
    P, labels, weights, grid, max_bins=None, smoothing=0.0, monotone=True, prior=0.0
):
    """Multiclass IRP (Algorithm 2 as read in ``streamcal.core.irp``) by brute force, or
    the best-gain binning without the monotony check (``monotone=False``).

    ``P`` (n, K) forecasts, ``labels`` class indices, ``weights`` (None: ones), ``grid``
    the candidate split points in order. A region is the set of points whose path of
    ``(gamma, k)`` choices it satisfies. At each step, for every region (in order of
    creation) and every grid point inside it (in grid order), the split into K
    sub-regions is tried: at least two sub-regions with events, gain
    ``sum_q W_q ||ybar_q - ybar_R||_1 > 1e-12 W_R``, and (if ``monotone``) the fit after
    the split ROC-monotone on all split points so far and the new one
    (:func:`roc_monotone_cycles`); the largest gain wins (ties: first region, then first
    grid point). Stops when nothing is allowed, or before the number of regions with
    events would exceed ``max_bins``.

    ``prior`` (``prior_strength`` a): a region's value is ``(S_k + a / K) / (W + a)``
    per class (a pseudo-event of weight ``a`` with label ``1/K`` per class joins it),
    then smoothed; the monotony checks read these values, the gains the plain means.

    Returns ``(leaves, gains, split_points)``: leaves as ``(path, value)`` (every
    sub-region, empty ones with the value of the region they were cut from).
    """
    P = [list(map(float, p)) for p in np.asarray(P)]
    K = len(P[0])
    weights = [1.0] * len(P) if weights is None else [float(w) for w in weights]
    events = [i for i in range(len(P)) if weights[i] > 0]
    grid = [list(map(float, g)) for g in np.asarray(grid)]

    def inside(x, path):
        return all(argmax_first([x[j] - g[j] for j in range(K)]) == k for g, k in path)

    def mean(ids):
        W = math.fsum(weights[i] for i in ids)
        return W, [
            math.fsum(weights[i] * (labels[i] == k) for i in ids) / W for k in range(K)
        ]

    def read(ids):  # the region's value under the prior, before smoothing
        W = math.fsum(weights[i] for i in ids)
        return [
            (math.fsum(weights[i] * (labels[i] == k) for i in ids) + prior / K) / (W + prior)
            for k in range(K)
        ]

    def smooth(m):
        return [(v + smoothing) / (1 + K * smoothing) for v in m]

    raw = {}  # event -> value of its region (under the prior)
    r0 = read(events)
    for i in events:
        raw[i] = r0
    regions = [(0, [], events)]  # (uid, path, events)
    leaves = [([], smooth(r0))]
    splits, gains = [], []
    uid = 1
    while True:
        best = None
        for reg_uid, path, ids in regions:
            W, m = mean(ids)
            r = read(ids)
            for g in grid:
                if not inside(g, path):
                    continue
                parts = [
                    [
                        i
                        for i in ids
                        if argmax_first([P[i][j] - g[j] for j in range(K)]) == q
                    ]
                    for q in range(K)
                ]
                if sum(1 for part in parts if part) < 2:
                    continue
                gain = 0.0
                means = []
                for part in parts:
                    if part:
                        Wq, mq = mean(part)
                        gain += Wq * math.fsum(abs(mq[k] - m[k]) for k in range(K))
                        means.append(read(part))
                    else:
                        means.append(None)
                if not gain > 1e-12 * W:
                    continue
                if best is not None and not gain > best[0]:
                    continue
                if monotone:
                    new = dict(raw)
                    for q, part in enumerate(parts):
                        for i in part:
                            new[i] = means[q]
                    if not roc_monotone_cycles(
                        [P[i] for i in events], [new[i] for i in events], [*splits, g]
                    ):
                        continue
                best = (gain, reg_uid, path, ids, g, parts, means, r)
        if best is None:
            break
        gain, reg_uid, path, ids, g, parts, means, m = best
        added = sum(1 for part in parts if part) - 1
        if max_bins is not None and len(regions) + added > max_bins:
            break
        regions = [r for r in regions if r[0] != reg_uid]
        leaves = [leaf for leaf in leaves if leaf[0] != path]
        for q, part in enumerate(parts):
            child = [*path, (g, q)]
            leaves.append((child, smooth(means[q] if part else m)))
            if part:
                regions.append((uid, child, part))
                uid += 1
                for i in part:
                    raw[i] = means[q]
        splits.append(g)
        gains.append(gain)
    return leaves, gains, splits


def predict_leaves(leaves, x):
    """The value of the leaf whose path ``x`` follows."""
    K = len(x)
    for path, value in leaves:
        if all(argmax_first([x[j] - g[j] for j in range(K)]) == k for g, k in path):
            return value
    raise AssertionError(f"no leaf for {x}")
