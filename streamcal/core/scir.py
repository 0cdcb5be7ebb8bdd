"""Sorted cumulative isotonic regression (SCIR) of Arad and Rosset (section 4.2 and
appendix A.1): a multiclass calibration map fitted as one two-dimensional isotonic
regression.

**Points.** An event with probability vector ``p`` over ``K`` classes and label ``y``
gives ``K - 1`` points, one per rank ``r = 1, ..., K - 1``: the cumulative probability
``q_r`` of its ``r`` most probable classes and the binary outcome "the label is among
them" (:func:`sorted_cumulative_points`). Rank ``K`` (cumulative probability 1, outcome
always 1) carries no information and is left out, as in the paper.

**Ties** among the probabilities of an event make "the top ``r`` classes" ambiguous.
The outcome at a rank inside a tie group is the probability that the label is in the
top ``r`` under a uniformly random order of the tied classes: if ``a`` classes are
strictly more probable than the label and ``t`` are exactly as probable (itself
included), the outcome at rank ``r`` is ``clip((r - a) / t, 0, 1)``. The cumulative
probabilities do not depend on the order of the tied classes. So the fit, like the
prediction below, does not depend on the order of the classes.

**Fit.** The isotonic (least-squares, equivalently maximum-likelihood, since the
outcomes lie in [0, 1]) regression of the outcomes under the product order
``(q, r) <= (q', r')`` iff ``q <= q'`` and ``r <= r'`` (:func:`isotonic_regression_2d`).
Identical points are pooled first (a weighted mean), so the fit is a function of the
point. It is solved as in the paper by recursive splitting at a maximal upper set
(Spouge, Wan and Wilbur 2003, theorem 3.2: ``X`` splits into the projection pair
``(X - U, U)`` where ``U`` maximises ``H(U) = sum_U w (y - mean(X))``; once the empty
set is maximal the block is constant), each maximal upper set being found by the grid
dynamic programme of appendix A.1.2 (:func:`maximal_upper_set`). Points sorted by
``(q, r)`` sit on a grid (position, rank); an upper set is a staircase: per rank ``c``
a threshold position ``T_c`` from which the rank's points are in the set, with
``T_1 >= T_2 >= ... >= T_{K-1}``. With ``S_c(T)`` the sum of ``w (y - mean)`` over the
rank-``c`` points at positions ``>= T``, the recursion

    ``A_1(T) = S_1(T)``,  ``A_c(T) = S_c(T) + max_{T' >= T} A_{c-1}(T')``

gives ``max H = max_T A_{K-1}(T)``; the thresholds are read back from the top rank
down. This is the recursion of the paper's lemma A.11 evaluated rank by rank instead of
position by position, so that each rank is one numpy cumulative sum and one running
maximum. (The pseudo-code of the paper's Algorithm 2/3 takes, when ``j > l`` and
``y_i >= mean``, the point ``x_i`` into the set without comparing with
``M[i + 1, j]``; lemma A.11 takes the maximum of both, which is what is done here; the
literal pseudo-code misses the maximal upper set on some inputs, see the tests.)

A block is declared constant when the largest ``H`` is at most ``1e-12`` times
``sum |w (y - mean)|`` (rounding). Every split is proper (both parts non-empty), so the
splitting ends on every input. A block whose weights span more than ``2**20``, or on
which the floating-point pass offers the whole block as the upper set (its ``H`` is 0 in
exact arithmetic, so that is rounding: ``w (y - mean)`` of a point of weight 1e70 is
off by about 1e54), is split exactly instead: the same programme on the integers
``W_X wy - WY_X w`` (the floats scaled by one power of two), so a split that only the
lightest points gain from is still found. That path costs Python-integer arithmetic
and is taken only for such blocks.

One pass costs O(``m`` (``K`` - 1)) time and memory for a set of ``m`` points; the
splitting makes one pass per node of the split tree, O(``N`` (``K`` - 1) ``d``) in all
for ``N = n (K - 1)`` points and a split tree of depth ``d``. Each split separates
the points whose fitted value is above the block's mean from those below, so ``d`` is
at most the number of distinct fitted values, and on calibration data far smaller
(about 200 passes in all for 12,500 events over 5 classes, 100 distinct values); the
worst case is ``d = N``, the paper's proposition 4.1.

**Prediction** (:meth:`SCIRMap.predict`): sort the probabilities, evaluate the fitted
map ``G_r = g(q_r, r)`` at the cumulative probabilities (with ``G_0 = 0`` and
``G_K = 1``), take differences ``G_r - G_{r-1}`` as the calibrated probability of the
class at rank ``r``, give the classes of a tie group the mean of their differences,
floor at ``epsilon`` and renormalise. Between fitted points the map is the paper's step
rule (appendix A.1, "Prediction on the grid"): ``g(q, r)`` is the largest fitted value
among the fitted points ``(q', r') <= (q, r)``, and the smallest fitted value when there
is none. This rule is monotone in both coordinates, so every difference is >= 0 and
``G_{K-1} <= 1``; it equals the fit at the fitted points.

References
----------
- Arad and Rosset, "Improving multi-class calibration through normalization-aware
  isotonic techniques", section 4.2, appendix A.1 (SCIR, Algorithm 2/3, the grid
  prediction rule).
- Spouge, Wan and Wilbur (2003), "Least squares isotonic regression in two dimensions",
  Journal of Optimization Theory and Applications 117 (projection pairs, maximal upper
  sets).

This module is pure: numpy and the standard library, no river.
"""

from __future__ import annotations

import itertools
import math
from bisect import bisect_right

import numpy as np

from streamcal._kernel_pickle import SlotsPickle

__all__ = [
    "SCIRMap",
    "fit_scir",
    "isotonic_regression_2d",
    "maximal_upper_set",
    "sorted_cumulative_points",
]

# A block is constant once the largest H over upper sets is at most this fraction of
# sum |w (y - mean)|: H is a sum of such terms, so anything smaller is rounding.
_REL_TOL = 1e-12
# A block whose largest weight exceeds this many times its smallest is split in exact
# integer arithmetic: in floating point, w (y - mean) of its heaviest points carries a
# rounding error larger than the whole contribution of its lightest ones.
_EXACT_WEIGHT_RATIO = 2.0**20


# ---------------------------------------------------------------------------- points


def sorted_cumulative_points(P, labels, w=None):
    """The sorted cumulative points of a batch of events.

    Parameters
    ----------
    P
        ``(n, K)`` array of probability vectors (rows).
    labels
        ``n`` class indices in ``[0, K)``.
    w
        Optional ``n`` non-negative weights (default 1).

    Returns
    -------
    ``(q, y, w)``, three ``(n, K - 1)`` arrays: ``q[i, r - 1]`` the sum of the ``r``
    largest probabilities of row ``i`` (added from the largest down), ``y[i, r - 1]``
    the outcome "the label is among the top ``r``" (fractional inside a tie group, see
    the module docstring), ``w[i, r - 1]`` the weight of row ``i``. Cost O(n K log K).

    Examples
    --------
    The example of the paper (section 4.2):

    >>> q, y, w = sorted_cumulative_points([[0.2, 0.4, 0.3, 0.1]], [2])
    >>> [round(v, 12) for v in q[0].tolist()], y[0].tolist()
    ([0.4, 0.7, 0.9], [0.0, 1.0, 1.0])

    A label tied with another class is in the top 2 with probability one half:

    >>> sorted_cumulative_points([[0.5, 0.25, 0.25]], [1])[1].tolist()
    [[0.0, 0.5]]

    """
    P = np.asarray(P, dtype=np.float64)
    if P.ndim != 2:
        raise ValueError(
            f"P must be a 2-d array of probability vectors, got shape {P.shape}"
        )
    n, K = P.shape
    labels = np.asarray(labels, dtype=np.int64).reshape(-1)
    if len(labels) != n or (n and (labels.min() < 0 or labels.max() >= K)):
        raise ValueError(f"labels must be {n} class indices in [0, {K})")
    w = np.ones(n) if w is None else np.asarray(w, dtype=np.float64).reshape(-1)
    if len(w) != n:
        raise ValueError(f"w must have {n} entries, got {len(w)}")
    if K < 2:
        empty = np.empty((n, 0))
        return empty, empty.copy(), empty.copy()
    # np.cumsum adds left to right, as SCIRMap.predict does: identical floats.
    q = np.cumsum(-np.sort(-P, axis=1), axis=1)[:, : K - 1]
    p_label = P[np.arange(n), labels][:, None]
    above = (P > p_label).sum(axis=1)[:, None]
    tied = (P == p_label).sum(axis=1)[:, None]
    ranks = np.arange(1, K)[None, :]
    y = np.clip((ranks - above) / tied, 0.0, 1.0)
    return q, y, np.repeat(w[:, None], K - 1, axis=1)


# ------------------------------------------------------------- isotonic regression


def maximal_upper_set(cols, v, n_cols=None):
    """A maximal upper set of points on a grid, by the grid dynamic programme.

    The points are given in grid order (their position is their index; sorted by the
    first coordinate, then by rank), ``cols[i]`` the rank (column) of point ``i`` in
    ``[0, n_cols)`` and ``v[i]`` its value ``w_i (y_i - mean)``. Point ``i`` is below
    point ``j`` iff ``i <= j`` and ``cols[i] <= cols[j]``. An upper set contains every
    point above any of its points.

    Returns ``(mask, h)``: a boolean mask of an upper set ``U`` maximising
    ``h = sum_U v`` (the empty set, ``h = 0``, when nothing is positive; among several
    maximisers, the one with the smallest thresholds). Cost O(m n_cols) time and memory
    for ``m`` points (see the module docstring).

    Examples
    --------
    Rank 0 at positions 0 and 1, rank 1 at position 2: the upper sets are the
    staircases; the best one is {2} (taking position 0 would force position 1):

    >>> mask, h = maximal_upper_set([0, 0, 1], [0.48, -5.24, 4.76])
    >>> mask.tolist(), round(h, 2)
    ([False, False, True], 4.76)

    """
    cols = np.asarray(cols, dtype=np.int64)
    v = np.asarray(v)
    exact = v.dtype == object  # Python ints (or Fractions): exact sums and maxima
    if not exact:
        v = v.astype(np.float64)
    m = len(v)
    if n_cols is None:
        n_cols = int(cols.max()) + 1 if m else 0
    if m == 0:
        return np.zeros(0, dtype=bool), 0.0
    # keep the columns present only (an empty column passes the maximum through)
    present = np.bincount(cols, minlength=n_cols) > 0
    if not present.all():
        remap = np.cumsum(present) - 1
        cols = remap[cols]
        n_cols = int(present.sum())
    # S[c, T] = sum of v over the points of column c at positions >= T (S[:, m] = 0)
    S = np.zeros((n_cols, m + 1), dtype=object if exact else np.float64)
    if exact:
        S[:] = 0
    S[cols, np.arange(m)] = v
    S = np.cumsum(S[:, ::-1], axis=1)[:, ::-1]
    A = S  # reuse: A[c] = S[c] + suffix max of A[c - 1]
    for c in range(1, n_cols):
        A[c] += np.maximum.accumulate(A[c - 1][::-1])[::-1]
    # read the thresholds back from the top column down
    thresholds = np.empty(n_cols, dtype=np.int64)
    t = 0
    for c in range(n_cols - 1, -1, -1):
        t += int(np.argmax(A[c, t:]))
        thresholds[c] = t
    h = A[n_cols - 1, thresholds[n_cols - 1]]
    h = h if exact else float(h)
    if h <= 0:
        return np.zeros(m, dtype=bool), (0 if exact else 0.0)
    return np.arange(m) >= thresholds[cols], h


def _pool(x, r, y, w):
    """Sort points by ``(x, r)`` and pool identical ones: ``(order, group, xs, rs, W,
    WY)`` with ``order`` the sorting permutation, ``group[k]`` the pooled point of the
    ``k``-th sorted point, and per pooled point its coordinates, total weight and
    weighted outcome sum."""
    order = np.lexsort((r, x))
    xs, rs, ys, ws = x[order], r[order], y[order], w[order]
    n = len(xs)
    new = np.ones(n, dtype=bool)
    new[1:] = (xs[1:] != xs[:-1]) | (rs[1:] != rs[:-1])
    starts = np.flatnonzero(new)
    group = np.cumsum(new) - 1
    W = np.add.reduceat(ws, starts)
    WY = np.add.reduceat(ws * ys, starts)
    return order, group, xs[starts], rs[starts], W, WY


def _exact_ints(a):
    """The floats ``a`` (finite) as Python ints in an object array, all scaled by one
    power of two, so that sums, products and comparisons of them are exact."""
    ratios = [float(x).as_integer_ratio() for x in a]
    shift = max((d.bit_length() - 1 for _, d in ratios), default=0)
    out = np.empty(len(ratios), dtype=object)
    out[:] = [n << (shift - (d.bit_length() - 1)) for n, d in ratios]
    return out


def _split_fit(cols, W, WY, n_cols):
    """Fitted values of pooled points in grid order, by recursive maximal-upper-set
    splitting (see the module docstring).

    Each split is proper (both parts non-empty), so there are at most ``len(W) - 1`` of
    them and the loop ends on every input. A block is split in floating point unless
    its weights span more than ``_EXACT_WEIGHT_RATIO``, or the floating-point pass
    offers the whole block as the upper set (``H`` of the whole block is 0 in exact
    arithmetic, so that ``h`` is rounding); then the upper set is found exactly, on
    ``v = W_X wy - WY_X w`` (``W_X`` times ``w (y - mean)``) in integers."""
    g = np.empty(len(W))
    exact_W = exact_WY = None
    stack = [np.arange(len(W))]
    while stack:
        idx = stack.pop()
        w = W[idx]
        wy = WY[idx]
        mean = wy.sum() / w.sum()
        if len(idx) > 1:
            mask = None
            if w.max() <= _EXACT_WEIGHT_RATIO * w.min():
                v = wy - w * mean
                scale = np.abs(v).sum()
                if scale > 0.0:
                    mask, h = maximal_upper_set(cols[idx], v, n_cols)
                    if not h > _REL_TOL * scale:
                        mask = None  # constant, up to rounding
                    elif mask.all():
                        mask = False  # rounding: decide exactly
            else:
                mask = False
            if mask is False:
                if exact_W is None:
                    exact_W = _exact_ints(np.concatenate([W, WY]))
                    exact_W, exact_WY = exact_W[: len(W)], exact_W[len(W) :]
                ew, ewy = exact_W[idx], exact_WY[idx]
                v = ewy * sum(ew) - ew * sum(ewy)
                mask, h = maximal_upper_set(cols[idx], v, n_cols)
                if not h > 0:
                    mask = None
            if mask is not None and mask.any() and not mask.all():
                stack.append(idx[mask])
                stack.append(idx[~mask])
                continue
        g[idx] = mean
    return g


def _fit_pooled(x, r, y, w):
    """``(order, group, xs, rs, W, g)``: :func:`_pool` and the fitted values ``g`` of
    the pooled points."""
    order, group, xs, rs, W, WY = _pool(x, r, y, w)
    if len(W) == 0:
        return order, group, xs, rs, W, np.empty(0)
    ranks, cols = np.unique(rs, return_inverse=True)
    g = _split_fit(cols.reshape(-1), W, WY, len(ranks))
    return order, group, xs, rs, W, g


def isotonic_regression_2d(x, r, y, w=None):
    """Weighted least-squares isotonic regression of ``y`` under the product order.

    Point ``i`` is below point ``j`` iff ``x[i] <= x[j]`` and ``r[i] <= r[j]``; the fit
    ``g`` minimises ``sum w (g - y)^2`` over the ``g`` non-decreasing in that order (and
    is a function of the point: identical points share a value). Solved by recursive
    maximal-upper-set splitting with the grid dynamic programme (module docstring).

    Parameters
    ----------
    x
        First coordinates (real).
    r
        Second coordinates (integers: the ranks).
    y
        Values to fit.
    w
        Weights, all > 0 (default 1).

    Returns
    -------
    The fitted value of every point, in the input order.

    Examples
    --------
    ``(0.1, 1)`` lies below the three others, ``(0.2, 2)`` and ``(0.3, 1)`` are not
    comparable, and both lie below ``(0.4, 2)``:

    >>> isotonic_regression_2d([0.1, 0.2, 0.3, 0.4], [1, 2, 1, 2], [1.0, 0.0, 0.0, 1.0]).round(4).tolist()
    [0.3333, 0.3333, 0.3333, 1.0]

    Incomparable points need not be in order (a one-dimensional fit would pool these):

    >>> isotonic_regression_2d([0.1, 0.2, 0.3, 0.4], [1, 2, 1, 2], [0.0, 1.0, 0.0, 1.0]).tolist()
    [0.0, 1.0, 0.0, 1.0]

    """
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    r = np.asarray(r, dtype=np.int64).reshape(-1)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    w = np.ones(len(x)) if w is None else np.asarray(w, dtype=np.float64).reshape(-1)
    if not len(x) == len(r) == len(y) == len(w):
        raise ValueError("x, r, y and w must have the same length")
    if len(w) and not (w > 0).all():
        raise ValueError("the weights must all be > 0")
    order, group, _, _, _, g = _fit_pooled(x, r, y, w)
    out = np.empty(len(x))
    out[order] = g[group]
    return out


# ------------------------------------------------------------------------ the map


class SCIRMap(SlotsPickle):
    """A fitted SCIR calibration map over ``n_classes`` classes.

    For each rank ``r`` in ``1 .. K - 1`` the map ``q -> g(q, r)`` is a non-decreasing
    step function: ``thresholds[r - 1]`` (strictly increasing) and ``values[r - 1]``
    (strictly increasing), ``g(q, r)`` the value at the last threshold ``<= q``, and
    ``low`` (the smallest fitted value) below the first threshold. Built by
    :func:`fit_scir`; see the module docstring for the rule.

    Invariants (:meth:`_check`): thresholds finite and strictly increasing; values
    strictly increasing, in ``[low, 1]``, ``0 <= low``; ``g(q, r) <= g(q, r + 1)`` for
    every ``q`` (monotone in the rank).

    Examples
    --------
    Two classes: the map of rank 1 is the isotonic regression of "the top class is
    right" on the top probability.

    >>> m = fit_scir([[0.9, 0.1], [0.6, 0.4], [0.7, 0.3]], [0, 1, 0])
    >>> m.n_classes, m.thresholds, m.values, m.low
    (2, [[0.6, 0.7]], [[0.0, 1.0]], 0.0)
    >>> m.value(0.65, 1), m.value(0.5, 1)
    (0.0, 0.0)
    >>> [round(v, 6) for v in m.predict([0.3, 0.7])]
    [1e-06, 0.999999]
    >>> m._check()

    """

    __slots__ = ("low", "n_classes", "thresholds", "values")

    def __init__(self, n_classes: int, thresholds: list, values: list, low: float):
        self.n_classes = n_classes
        self.thresholds = thresholds
        self.values = values
        self.low = low

    def __eq__(self, other) -> bool:
        return isinstance(other, SCIRMap) and self.to_list() == other.to_list()

    def __repr__(self) -> str:
        steps = sum(len(t) for t in self.thresholds)
        return f"SCIRMap(n_classes={self.n_classes}, steps={steps})"

    def value(self, q: float, rank: int) -> float:
        """``g(q, rank)`` for ``rank`` in ``1 .. K - 1``. O(log B) for B steps."""
        i = bisect_right(self.thresholds[rank - 1], q) - 1
        return self.values[rank - 1][i] if i >= 0 else self.low

    def predict(self, p, epsilon: float = 1e-6) -> list:
        """The calibrated probability vector of ``p`` (a sequence of ``K`` floats that
        sums to 1), floored at ``epsilon`` and renormalised. O(K log K + K log B)."""
        K = self.n_classes
        if K == 1:
            return [1.0]
        order = sorted(range(K), key=p.__getitem__, reverse=True)
        thresholds = self.thresholds
        values = self.values
        low = self.low
        # G[r] = g(q_r, r) for r = 1 .. K - 1; G[0] = 0, G[K] = 1
        G = [0.0] * (K + 1)
        G[K] = 1.0
        c = 0.0
        for r in range(1, K):
            c += p[order[r - 1]]
            i = bisect_right(thresholds[r - 1], c) - 1
            G[r] = values[r - 1][i] if i >= 0 else low
        out = [0.0] * K
        total = 0.0
        a = 0  # the tie group holds sorted positions a .. b - 1 (ranks a + 1 .. b)
        while a < K:
            pa = p[order[a]]
            b = a + 1
            while b < K and p[order[b]] == pa:
                b += 1
            d = (G[b] - G[a]) / (b - a)
            d = max(d, epsilon)
            for j in range(a, b):
                out[order[j]] = d
                total += d
            a = b
        return [v / total for v in out]

    def predict_many(self, P, epsilon: float = 1e-6) -> np.ndarray:
        """:meth:`predict` on each row of the ``(n, K)`` array ``P``, vectorised.
        O(n K log K + n K log B)."""
        P = np.asarray(P, dtype=np.float64)
        n, K = P.shape
        if K == 1:
            return np.ones((n, 1))
        order = np.argsort(-P, axis=1, kind="stable")
        s = np.take_along_axis(P, order, axis=1)
        q = np.cumsum(s, axis=1)
        G = np.zeros((n, K + 1))
        G[:, K] = 1.0
        for r in range(1, K):
            t = np.asarray(self.thresholds[r - 1])
            vals = np.asarray(self.values[r - 1])
            i = np.searchsorted(t, q[:, r - 1], side="right") - 1
            G[:, r] = np.where(i >= 0, vals[np.maximum(i, 0)], self.low)
        # tie groups of the sorted rows: start a and end b of each position's group
        pos = np.broadcast_to(np.arange(K), (n, K))
        starts = np.ones((n, K), dtype=bool)
        starts[:, 1:] = s[:, 1:] != s[:, :-1]
        a = np.maximum.accumulate(np.where(starts, pos, 0), axis=1)
        ends = np.ones((n, K), dtype=bool)
        ends[:, :-1] = starts[:, 1:]
        b = np.minimum.accumulate(np.where(ends, pos + 1, K)[:, ::-1], axis=1)[:, ::-1]
        rows = np.arange(n)[:, None]
        d = (G[rows, b] - G[rows, a]) / (b - a)
        d = np.maximum(d, epsilon)
        total = np.zeros(n)
        for j in range(K):  # left to right, as predict adds group by group
            total += d[:, j]
        out = np.empty((n, K))
        np.put_along_axis(out, order, d / total[:, None], axis=1)
        return out

    # ---------------------------------------------------------------- state

    def to_list(self) -> list:
        """JSON-safe state ``[n_classes, thresholds, values, low]``."""
        return [
            self.n_classes,
            [list(t) for t in self.thresholds],
            [list(v) for v in self.values],
            self.low,
        ]

    @classmethod
    def from_list(cls, data) -> SCIRMap:
        """The map :meth:`to_list` wrote."""
        n_classes, thresholds, values, low = data
        return cls(
            int(n_classes),
            [[float(x) for x in t] for t in thresholds],
            [[float(x) for x in v] for v in values],
            float(low),
        )

    def _check(self) -> None:
        K = self.n_classes
        assert isinstance(K, int) and K >= 1, K
        assert len(self.thresholds) == len(self.values) == K - 1, self.to_list()
        assert 0.0 <= self.low <= 1.0, self.low
        for t, v in zip(self.thresholds, self.values):
            assert len(t) == len(v), (t, v)
            assert all(math.isfinite(x) for x in t), t
            assert all(a < b for a, b in itertools.pairwise(t)), t
            assert all(a < b for a, b in itertools.pairwise(v)), v
            assert all(self.low <= x <= 1.0 for x in v), (self.low, v)
        for r in range(1, K - 1):
            for q in self.thresholds[r - 1] + self.thresholds[r]:
                assert self.value(q, r) <= self.value(q, r + 1), (q, r, self.to_list())


def _step_functions(xs, rs, g, n_classes):
    """The per-rank step functions of the prediction rule from pooled fitted points
    sorted by ``(x, r)``: ``g(q, j) = max{g_i : x_i <= q, r_i <= j}``."""
    thresholds = []
    values = []
    for j in range(1, n_classes):
        m = rs <= j
        xj = xs[m]
        gj = np.maximum.accumulate(g[m])
        last = np.ones(len(xj), dtype=bool)  # the last point of each distinct x
        last[:-1] = xj[1:] != xj[:-1]
        xj = xj[last]
        gj = gj[last]
        keep = np.ones(len(gj), dtype=bool)
        keep[1:] = gj[1:] > gj[:-1]
        thresholds.append(xj[keep].tolist())
        values.append(gj[keep].tolist())
    return thresholds, values


def fit_scir(P, labels, w=None) -> SCIRMap:
    """Fit the SCIR calibration map to a batch of events.

    Parameters
    ----------
    P
        ``(n, K)`` array of probability vectors (rows), ``K >= 1``.
    labels
        ``n`` class indices in ``[0, K)``.
    w
        Optional ``n`` non-negative weights (default 1); rows of weight 0 are ignored.
        At least one weight must be positive.

    Returns
    -------
    The fitted :class:`SCIRMap`. Cost: :func:`sorted_cumulative_points` then
    :func:`isotonic_regression_2d` on the ``n (K - 1)`` points (module docstring).

    Examples
    --------
    The outcome at rank 2 of the third event is 1, that of the fourth 0; both sit at
    ``(0.8, 2)`` and pool to 0.5, which pulls the rank-1 points below them down to 0.75:

    >>> P = [[0.8, 0.1, 0.1], [0.5, 0.3, 0.2], [0.6, 0.3, 0.1], [0.4, 0.4, 0.2]]
    >>> m = fit_scir(P, [0, 1, 0, 2])
    >>> [[round(t, 6) for t in ts] for ts in m.thresholds], m.values
    ([[0.4, 0.6], [0.4, 0.6, 0.9]], [[0.0, 0.75], [0.0, 0.75, 1.0]])
    >>> [round(v, 4) for v in m.predict([0.7, 0.2, 0.1])]
    [0.75, 0.25, 0.0]

    Tied classes share their mass:

    >>> [round(v, 4) for v in m.predict([0.45, 0.45, 0.1])]
    [0.5, 0.5, 0.0]

    """
    P = np.asarray(P, dtype=np.float64)
    if P.ndim != 2 or P.shape[1] < 1:
        raise ValueError(
            f"P must be a 2-d array with at least one column, got shape {P.shape}"
        )
    n, K = P.shape
    w = np.ones(n) if w is None else np.asarray(w, dtype=np.float64).reshape(-1)
    if len(w) != n:
        raise ValueError(f"w must have {n} entries, got {len(w)}")
    keep = w > 0
    if not keep.any():
        raise ValueError("fit_scir needs at least one event of positive weight")
    if K == 1:
        return SCIRMap(1, [], [], 0.0)
    labels = np.asarray(labels, dtype=np.int64).reshape(-1)
    if len(labels) != n:
        raise ValueError(f"labels must have {n} entries, got {len(labels)}")
    if not keep.all():
        P, labels, w = P[keep], labels[keep], w[keep]
    q, y, ww = sorted_cumulative_points(P, labels, w)
    ranks = np.broadcast_to(np.arange(1, K), q.shape)
    _, _, xs, rs, _, g = _fit_pooled(q.ravel(), ranks.ravel(), y.ravel(), ww.ravel())
    thresholds, values = _step_functions(xs, rs, g, K)
    return SCIRMap(K, thresholds, values, float(g.min()))
