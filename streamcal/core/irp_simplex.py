"""Multiclass isotonic recursive partitioning on the probability simplex:
:func:`fit_multiclass_irp`, the :class:`SimplexFit` it returns, and its grid of
candidate split points (:func:`simplex_grid`). The binary IRP is in
:mod:`streamcal.core.irp_interval` (for K = 2 this is binary IRP with thresholds
restricted to the grid); the baselines without the monotony constraint are in
:mod:`streamcal.core.recursive_binning`.

Reference: Berta, Bach and Jordan (2024), "Classifier calibration with ROC-regularized
isotonic regression", AISTATS (section 3 and Algorithm 2: multiclass IRP).


Multiclass IRP (:func:`fit_multiclass_irp`), our reading of Berta et al., section 3.3
and Algorithm 2, where the paper is vague:

- *Splits.* A split point ``gamma`` (a vector summing to 1) cuts a region into the K
  sub-regions ``R_k = {p in R : argmax_j (p_j - gamma_j) = k}``, ties going to the
  lowest class index. Candidates are the points of a grid,
  :func:`simplex_grid` (``gamma = z / m``, ``z`` integer, ``sum z = m``,
  ``max z - min z <= m``; the paper's grid also reaches past the simplex), that lie in
  the region itself (the same argmax rule applied to ``gamma``), in the order of
  :func:`simplex_grid`. A candidate must leave at least two sub-regions with events.
- *Gain.* ``M_R(gamma) = sum_k W_k ||ybar_{R_k} - ybar_R||_1``, weighted, with the L1
  norm over the classes (the paper's ``#S_k |ybar_R - ybar_{R_k}|`` on one-hot labels).
- *ROC monotony on the splitting points.* After a split, for every split point ``gamma_s``
  accepted so far (and the new one), the partition of *all* the events by their raw
  forecasts ``p`` around ``gamma_s`` must be reproducible on the fitted values ``r`` by
  some ``gamma'``: for all events ``i`` in ``R_k(gamma_s)``,
  ``r_ik - gamma'_k >= r_ij - gamma'_j`` for every ``j`` (ties allowed, as isotonic
  regression allows equal values). These are difference constraints
  ``gamma'_k - gamma'_j <= c_kj = min_{i in R_k} (r_ik - r_ij)``; they are feasible iff
  the graph with edge weights ``c_kj`` has no negative cycle (checked by Floyd-Warshall,
  tolerance 1e-12). For two classes this is the pairwise test
  ``min_{R_k} (r_k - r_j) >= max_{R_j} (r_k - r_j)``; for K >= 3 the longer cycles
  matter as well.
- *Order.* At every step the fit is re-examined: among all regions, the split of largest
  gain that keeps the function ROC-monotone on the splitting points is made (ties: the
  region created first, then grid order); the algorithm stops when no region has such a
  split (or at ``max_bins``). A candidate refused once may be accepted later and the other
  way round, since validity depends on the whole fit.
- *Empty sub-regions* get no bin: they predict the value of the region they were cut
  from.

For K = 2 this is binary IRP with thresholds restricted to the grid.

*Smoothing* and *early stopping* (``smoothing``, ``max_bins``, ``fit.prefix(t)``) are
those of :mod:`streamcal.core.irp_interval`, with ``K`` classes.

*The prior* (``prior_strength = a``, :mod:`streamcal.core.prior`; not in the paper): a
region of weight ``W`` and label sums ``S`` is valued at
:func:`~streamcal.core.prior.posterior_mean` ``(S_k + a / K) / (W + a)`` per class, its
mean once a pseudo-event of weight ``a`` and label vector ``(1/K, ..., 1/K)`` (the
centre of the simplex; 1/2 and 1/2 for two classes, as for isotonic blocks) has joined
it, then smoothed. Unlike the smoothing this pull depends on the region's weight (a
light region moves more), so it could undo ROC monotony; the monotony checks therefore
test the values under the prior (of the regions and of each candidate's sub-regions),
and the fit returned is ROC-monotone on its splitting points as read. The gains, which
rank the candidates, stay those of the plain means. With ``a > 0`` every value lies
strictly inside (0, 1): no class is ever given probability 0 by the fit. ``a = 0`` is
the paper's fit, bit for bit.

This module is pure: numpy, no river.
"""

from __future__ import annotations

import math

import numpy as np

from streamcal import _validation as V
from streamcal._kernel_pickle import SlotsPickle
from streamcal.core.irp_interval import _check_options, _check_prior, _RecursiveFit, _smooth
from streamcal.core.prior import posterior_mean

__all__ = [
    "GRID_BUDGET",
    "GRID_MAX",
    "SimplexFit",
    "capped_grid_size",
    "default_grid_size",
    "fit_multiclass_irp",
    "grid_count",
    "is_roc_monotone",
    "simplex_grid",
]

#: default grids hold at most this many candidate split points
GRID_BUDGET = 1200
#: no grid may hold more (a grid of ``G`` points costs O(G n K) memory and time)
GRID_MAX = 100_000
_CYCLE_TOL = 1e-12

# ============================================================================ the simplex


def simplex_grid(n_classes: int, grid_size: int) -> np.ndarray:
    """Candidate split points ``gamma = z / m`` for ``K = n_classes`` classes and
    ``m = grid_size``: every integer vector ``z`` with ``sum(z) = m`` and
    ``max(z) - min(z) <= m`` (differences ``gamma_k - gamma_j`` in [-1, 1], which reach
    every partition of the simplex), sorted by ``z_K``, then ``z_{K-1}``, and so on (for
    two classes: by increasing threshold ``gamma_2`` on the second class's probability,
    so that ties between equal gains go to the longest upper part, as in
    :func:`~streamcal.core.irp_interval.fit_irp`).

    Examples
    --------
    >>> simplex_grid(2, 2).tolist()
    [[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]]
    >>> simplex_grid(3, 4).shape
    (21, 3)

    """
    K = V.check_int(n_classes, "simplex_grid", "n_classes", minimum=1)
    m = V.check_int(grid_size, "simplex_grid", "grid_size", minimum=1)
    rows = np.zeros((1, 0), dtype=np.int64)
    lo = np.array([m], dtype=np.int64)  # running min (m: none yet)
    hi = np.array([-m], dtype=np.int64)  # running max
    tot = np.array([0], dtype=np.int64)
    values = np.arange(-m, 2 * m + 1, dtype=np.int64)
    for k in range(K):
        r = K - k - 1  # coordinates left after this one
        z = np.tile(values, len(rows))
        idx = np.repeat(np.arange(len(rows)), len(values))
        nlo, nhi, ntot = np.minimum(lo[idx], z), np.maximum(hi[idx], z), tot[idx] + z
        ok = nhi - nlo <= m
        # the remaining coordinates lie in [nhi - m, nlo + m]
        ok &= (m - ntot >= r * (nhi - m)) & (m - ntot <= r * (nlo + m))
        if r == 0:
            ok &= ntot == m
        rows = np.column_stack([rows[idx[ok]], z[ok]])
        lo, hi, tot = nlo[ok], nhi[ok], ntot[ok]
    rows = rows[np.lexsort(rows.T)]  # last coordinate first
    return rows / m


def _compositions(total: int, K: int, top: int) -> int:
    """Number of vectors of K integers in ``[0, top]`` summing to ``total``
    (inclusion-exclusion on the entries above ``top``)."""
    if total < 0 or total > K * top:
        return 0
    return sum(
        (-1) ** j * math.comb(K, j) * math.comb(total - j * (top + 1) + K - 1, K - 1)
        for j in range(K + 1)
        if total - j * (top + 1) >= 0
    )


def grid_count(n_classes: int, grid_size: int) -> int:
    """``len(simplex_grid(n_classes, grid_size))``, without building the grid: the
    vectors whose smallest entry is ``a``, summed over ``a``. O(m K).

    Examples
    --------
    >>> grid_count(3, 4), len(simplex_grid(3, 4))
    (21, 21)

    """
    K, m = n_classes, grid_size
    return sum(
        _compositions(m - K * a, K, m) - _compositions(m - K * (a + 1), K, m - 1)
        for a in range(-m, m + 1)
    )


def _finest(K: int, budget: int) -> int:
    """The largest ``m >= 1`` with ``grid_count(K, m) <= budget`` (1 if none)."""
    lo, hi = 1, 2
    while grid_count(K, hi) <= budget:
        lo, hi = hi, 2 * hi
    while hi - lo > 1:  # grid_count(K, lo) <= budget < grid_count(K, hi), or lo == 1
        mid = (lo + hi) // 2
        if grid_count(K, mid) <= budget:
            lo = mid
        else:
            hi = mid
    return lo


def default_grid_size(n_classes: int) -> int:
    """The finest ``m`` whose :func:`simplex_grid` has at most ``GRID_BUDGET`` (1200)
    points (1199 for two classes, 34 for three, 10 for four, 5 for five), at least 1.

    Examples
    --------
    >>> [default_grid_size(k) for k in (2, 3, 4, 5, 6, 8)]
    [1199, 34, 10, 5, 3, 2]

    """
    K = V.check_int(n_classes, "default_grid_size", "n_classes", minimum=1)
    return GRID_BUDGET - 1 if K == 1 else _finest(K, GRID_BUDGET)


def capped_grid_size(n_classes: int, grid_size: int | None) -> int:
    """``grid_size`` (None: :func:`default_grid_size`), lowered if need be so that the
    grid holds at most ``GRID_MAX`` (100,000) points for ``n_classes`` classes.

    Examples
    --------
    >>> capped_grid_size(3, 50), capped_grid_size(8, 8), capped_grid_size(4, None)
    (50, 4, 10)

    """
    K = V.check_int(n_classes, "capped_grid_size", "n_classes", minimum=1)
    if grid_size is None:
        return default_grid_size(K)
    m = V.check_int(grid_size, "capped_grid_size", "grid_size", minimum=1)
    if K == 1 or grid_count(K, m) <= GRID_MAX:
        return m
    return _finest(K, GRID_MAX)


def _argmax_rows(X: np.ndarray, gammas: np.ndarray) -> np.ndarray:
    """``argmax_k (X[i, k] - gammas[c, k])`` for every candidate c and row i, as a
    (C, n) int array; ties to the lowest k."""
    return np.argmax(X[None, :, :] - gammas[:, None, :], axis=2)


class SimplexFit(_RecursiveFit):
    """A piecewise-constant map of the probability simplex built by recursive K-way
    splits around points ``gamma`` (multiclass IRP and its baselines).

    Node ``i`` split at step ``steps[i]`` sends ``p`` to its child
    ``argmax_k (p_k - gamma_k)`` (ties to the lowest class); a leaf predicts its
    region's (smoothed) mean label vector. See :mod:`streamcal.core.irp_simplex`.

    Attributes
    ----------
    n_classes
        K.
    n_bins
        Regions holding events (an empty sub-region predicts the value of the region it
        was cut from and is not counted).
    n_steps, gains, bins_path
        As for :class:`IntervalFit`.
    split_points
        The ``gamma`` of the first ``n_steps`` splits, in order, as a (n_steps, K) array.
    empty
        True when no event had positive weight: :meth:`predict` is then the identity.

    Examples
    --------
    >>> P = [[0.8, 0.1, 0.1], [0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]]
    >>> fit = fit_multiclass_irp(P, [0, 1, 1, 2], grid_size=10)
    >>> fit.n_bins, fit.n_steps, fit.split_points.tolist()
    (3, 1, [[0.8, 0.1, 0.1]])
    >>> fit.predict([[0.9, 0.05, 0.05], [0.3, 0.6, 0.1]]).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]

    """

    def __init__(
        self, n_classes, gammas, children, values, weights, steps, gains, n_steps=None, empty=False
    ):
        self.n_classes = int(n_classes)
        self._gamma = gammas
        self._children = children
        super().__init__(
            (n_classes, gammas, children), values, weights, steps, gains, n_steps, empty
        )
        self.n_bins = int(self.bins_path[self.n_steps])
        self.split_points = np.array(
            [gammas[i] for i in self._order[: self.n_steps]], dtype=np.float64
        ).reshape(-1, self.n_classes)

    def _children_of(self, node: int) -> tuple:
        return tuple(self._children[node])

    def _is_split(self, node: int) -> bool:
        return 0 <= self._step[node] < self.n_steps

    def to_lists(self) -> tuple[list, list, list]:
        """``(gammas, children, values)`` of the nodes reachable in this fit, renumbered
        from 0 (the root) in depth-first order; a leaf has gamma and children None.
        JSON-safe plain lists, for predicting one vector at a time without numpy."""
        gammas, children, values = [], [], []
        index = {}
        stack = [0]
        order = []
        while stack:
            node = stack.pop()
            index[node] = len(order)
            order.append(node)
            if self._is_split(node):
                stack.extend(reversed(self._children[node]))
        for node in order:
            values.append([float(v) for v in self._val[node]])
            if self._is_split(node):
                gammas.append([float(g) for g in self._gamma[node]])
                children.append([index[c] for c in self._children[node]])
            else:
                gammas.append(None)
                children.append(None)
        return gammas, children, values

    def predict(self, probs) -> np.ndarray:
        """Fitted probability vectors at the rows of ``probs`` (n, K); the rows
        themselves if empty. O(n * depth * K)."""
        X = np.asarray(probs, dtype=np.float64)
        if self.empty:
            return X.copy()
        out = np.empty((len(X), self.n_classes))
        stack = [(0, np.arange(len(X)))]
        while stack:
            node, rows = stack.pop()
            if not len(rows):
                continue
            if self._is_split(node):
                a = np.argmax(X[rows] - self._gamma[node], axis=1)
                for k, child in enumerate(self._children[node]):
                    stack.append((child, rows[a == k]))
            else:
                out[rows] = self._val[node]
        return out

    def _check(self) -> None:
        """Assert the invariants of the tree."""
        K = self.n_classes
        n = len(self._step)
        columns = (self._gamma, self._children, self._val, self._w)
        assert all(len(c) == n for c in columns), "node columns of unequal length"
        for i in range(n):
            v = np.asarray(self._val[i])
            if not self.empty:
                assert (
                    v.shape == (K,) and np.all(v >= 0) and abs(v.sum() - 1.0) < 1e-9
                ), f"node {i}: {v}"
            if self._step[i] >= 0:
                kids = self._children[i]
                assert (
                    len(kids) == K and abs(float(np.sum(self._gamma[i])) - 1.0) < 1e-9
                )
                assert sum(self._w[c] > 0 for c in kids) >= 1
        self._check_splits()


def is_roc_monotone(probs, fitted, split_points, tol: float = _CYCLE_TOL) -> bool:
    """Whether ``fitted`` is ROC-monotone on ``split_points``: for each split point, the
    partition of the events by their forecasts ``probs`` around it can be reproduced on
    the fitted values by some ``gamma'`` (ties allowed; see :mod:`streamcal.core.irp_simplex`).
    ``probs`` and ``fitted`` are (n, K) arrays, ``split_points`` (S, K). O(S n K^2 + S K^3).

    Examples
    --------
    >>> P = np.array([[0.9, 0.1], [0.6, 0.4], [0.2, 0.8]])
    >>> is_roc_monotone(P, np.array([[0.8, 0.2], [0.8, 0.2], [0.3, 0.7]]), [[0.5, 0.5]])
    True
    >>> is_roc_monotone(P, np.array([[0.3, 0.7], [0.3, 0.7], [0.8, 0.2]]), [[0.5, 0.5]])
    False

    """
    P = np.asarray(probs, dtype=np.float64)
    R = np.asarray(fitted, dtype=np.float64)
    G = np.asarray(split_points, dtype=np.float64).reshape(-1, P.shape[1])
    if not len(G):
        return True
    D = R[:, :, None] - R[:, None, :]
    A = _argmax_rows(P, G)
    C = np.full((len(G), P.shape[1], P.shape[1]), np.inf)
    for k in range(P.shape[1]):
        mask = A == k
        C[:, k, :] = np.where(mask[:, :, None], D[None, :, k, :], np.inf).min(axis=1)
    return bool(np.all(_most_negative_cycle(C) >= -tol))


def _most_negative_cycle(C: np.ndarray) -> np.ndarray:
    """For each (K, K) matrix of edge weights ``C[c]`` (``c_kj`` bounds
    ``gamma_k - gamma_j``), the smallest diagonal entry after Floyd-Warshall: negative iff
    the constraints are infeasible."""
    d = C.copy()
    diag = np.arange(C.shape[1])
    d[:, diag, diag] = np.minimum(d[:, diag, diag], 0.0)
    for k in range(C.shape[1]):
        d = np.minimum(d, d[:, :, k : k + 1] + d[:, k : k + 1, :])
    return np.diagonal(d, axis1=1, axis2=2).min(axis=1)


class _Region(SlotsPickle):
    __slots__ = (
        "cand_gain",
        "cand_grid",
        "cand_means",
        "cand_nonempty",
        "gidx",
        "idx",
        "node",
        "uid",
    )

    def __init__(self, node, uid, idx, gidx):
        self.node = node
        self.uid = uid
        self.idx = idx
        self.gidx = gidx


class _SimplexSplitter:
    """The recursion of :func:`fit_multiclass_irp` (``kind="irp"``) and of the
    ``"best"`` baseline of :mod:`streamcal.core.recursive_binning`, which also
    subclasses it (state of one run)."""

    def __init__(self, P, Y, w, grid, lam, kind, max_bins, prior=0.0):
        self.P, self.Y, self.w = P, Y, w
        self.prior = prior  # prior_strength a (the pseudo-event's label: 1/K per class)
        self.WY = w[:, None] * Y
        self.n, self.K = P.shape
        self.grid = grid
        self.lam = lam
        self.kind = kind  # "irp" or "best" ("center": a subclass)
        self.limit = math.inf if max_bins is None else max_bins
        self.gamma, self.children, self.val, self.wt, self.step, self.gains = (
            [],
            [],
            [],
            [],
            [],
            [],
        )
        W, S = float(w.sum()), self.WY.sum(axis=0)
        self.raw = []  # raw (unsmoothed) mean of each node, under the prior
        root = self._node(W, S, None)
        self.leaf = np.zeros(self.n, dtype=np.int64)  # the leaf (node) of each event
        self.splits = []  # (gamma, raw partition of all events)
        self.regions = [self._region(root, np.arange(self.n), np.arange(len(grid)))]
        self.uid = 1
        self.bins = 1

    def _read(self, S, W):
        """The value of a region (or of arrays of them) of label sums ``S`` and weight
        ``W`` under the prior, before smoothing: the plain mean without one."""
        if self.prior == 0.0:
            return S / W
        return posterior_mean(S, W, self.prior, 1.0 / self.K)

    def _node(self, W, S, parent):
        if W > 0:
            r = self._read(S, W)
            self.raw.append(r)
            self.val.append(_smooth(r, self.lam, self.K))
        else:  # an empty sub-region: the value of the region it was cut from
            self.raw.append(self.raw[parent])
            self.val.append(self.val[parent])
        self.gamma.append(None)
        self.children.append(None)
        self.wt.append(float(W))
        self.step.append(-1)
        return len(self.val) - 1

    def _region(self, node, idx, gidx, uid=0):
        reg = _Region(node, uid, idx, gidx)
        self._candidates(reg)
        return reg

    def _split_sums(self, idx, gammas):
        """Per candidate and sub-region: weight (C, K) and label sums (C, K, K), and the
        assignment of the region's events (C, n_R)."""
        a = _argmax_rows(self.P[idx], gammas)
        Wq = np.empty((len(gammas), self.K))
        Sq = np.empty((len(gammas), self.K, self.K))
        w, WY = self.w[idx], self.WY[idx]
        for q in range(self.K):
            mask = (a == q).astype(np.float64)
            Wq[:, q] = mask @ w
            Sq[:, q, :] = mask @ WY
        return Wq, Sq, a

    def _candidates(self, reg):
        """Sort the grid points inside the region by gain (ties: grid order)."""
        K, idx, gidx = self.K, reg.idx, reg.gidx
        W = self.w[idx].sum()
        mean = self.WY[idx].sum(axis=0) / W
        gains, means, nonempty = [], [], []
        step = max(1, 2_000_000 // max(1, len(idx) * K))  # bound the temporary arrays
        for start in range(0, len(gidx), step):
            Wq, Sq, _ = self._split_sums(idx, self.grid[gidx[start : start + step]])
            ne = Wq > 0
            with np.errstate(invalid="ignore", divide="ignore"):
                mq = np.where(ne[:, :, None], Sq / Wq[:, :, None], 0.0)
            g = np.where(ne, Wq * np.abs(mq - mean).sum(axis=2), 0.0).sum(axis=1)
            gains.append(g)
            if self.prior != 0.0:  # the monotony checks read the values under the prior
                mq = np.where(ne[:, :, None], self._read(Sq, Wq[:, :, None]), 0.0)
            means.append(mq)
            nonempty.append(ne)
        if gidx.size:
            g, mq, ne = (
                np.concatenate(gains),
                np.concatenate(means),
                np.concatenate(nonempty),
            )
        else:
            g, mq, ne = np.zeros(0), np.zeros((0, K, K)), np.zeros((0, K), bool)
        ok = (ne.sum(axis=1) >= 2) & (g > 1e-12 * W)
        order = np.flatnonzero(ok)
        order = order[np.argsort(-g[order], kind="stable")]
        reg.cand_gain = g[order]
        reg.cand_grid = gidx[order]
        reg.cand_means = mq[order]  # the sub-regions' values (under the prior)
        reg.cand_nonempty = ne[order]

    # ------------------------------------------------------------------ monotony

    def _context(self, reg):
        """What the monotony checks of ``reg``'s candidates share: for each split point so
        far, the raw partition of the region's events and the bounds ``c_kj`` set by the
        events outside the region (whose values, their leaf's means, do not change)."""
        K = self.K
        N = len(self.raw)
        raw = np.array(self.raw)  # (nodes, K) raw means (leaves only are used)
        Dn = raw[:, :, None] - raw[:, None, :]  # (nodes, k, j)
        mine = np.zeros(N, dtype=bool)
        mine[reg.node] = True
        outside = []
        for _, A in self.splits:
            pres = np.bincount(self.leaf * K + A, minlength=N * K).reshape(N, K) > 0
            pres[mine] = False
            outside.append(np.where(pres[:, :, None], Dn, np.inf).min(axis=0))
        out = self.leaf != reg.node
        return {
            "Dn": Dn,
            "mine": mine,
            "outside": np.array(outside).reshape(-1, K, K),  # (S, k, j)
            "A_in": np.array([A[reg.idx] for _, A in self.splits]).reshape(
                -1, len(reg.idx)
            ),  # (S, n_R)
            "P_in": self.P[reg.idx],
            "P_out": self.P[out],
            "leaf_out": self.leaf[out],
        }

    def _valid(self, reg, sel, ctx) -> np.ndarray:
        """ROC monotony on the splitting points after each candidate ``sel`` of ``reg``
        (indices into its sorted candidates): a bool array."""
        K = self.K
        gammas = self.grid[reg.cand_grid[sel]]
        M = reg.cand_means[sel]  # (C, q, k)
        ne = reg.cand_nonempty[sel]
        C = len(sel)
        # differences of the candidate's sub-region values: Mq[c, q, k, j] = M[c,q,k] - M[c,q,j]
        Mq = M[:, :, :, None] - M[:, :, None, :]
        ok = np.ones(C, dtype=bool)
        S = len(ctx["outside"])
        if S:
            # the split points so far: which (sub-region q, raw region k) pairs hold events
            a_in = _argmax_rows(ctx["P_in"], gammas)  # (C, n_R)
            codes = (
                (np.arange(C * S) * K * K).reshape(C, S, 1)
                + a_in[:, None, :] * K
                + ctx["A_in"][None, :, :]
            )
            present = (
                np.bincount(codes.ravel(), minlength=C * S * K * K).reshape(C, S, K, K)
                > 0
            )
            ins = np.where(present[:, :, :, :, None], Mq[:, None], np.inf).min(
                axis=2
            )  # (C, S, k, j)
            cyc = _most_negative_cycle(
                np.minimum(ins, ctx["outside"][None]).reshape(C * S, K, K)
            )
            ok &= (cyc.reshape(C, S) >= -_CYCLE_TOL).all(axis=1)
        # the candidate's own split point, over all events
        N = len(ctx["Dn"])
        A_out = _argmax_rows(ctx["P_out"], gammas)  # (C, n_out)
        codes = (np.arange(C) * N * K)[:, None] + ctx["leaf_out"][None, :] * K + A_out
        pres = np.bincount(codes.ravel(), minlength=C * N * K).reshape(C, N, K) > 0
        Cm = np.where(pres[:, :, :, None], ctx["Dn"][None], np.inf).min(
            axis=1
        )  # (C, k, j)
        own = np.where(
            ne[:, :, None], np.diagonal(Mq, axis1=1, axis2=2).transpose(0, 2, 1), np.inf
        )
        ok &= _most_negative_cycle(np.minimum(Cm, own)) >= -_CYCLE_TOL
        return ok

    def _best_valid(self, reg, bound):
        """First candidate of ``reg`` (in gain order) keeping ROC monotony, among those
        that beat ``bound`` = (gain, uid) of the best so far; None if none."""
        n = len(reg.cand_gain)
        if bound is not None:
            g0, uid0 = bound
            better = (reg.cand_gain > g0) | ((reg.cand_gain == g0) & (reg.uid < uid0))
            n = int(np.count_nonzero(better))  # a prefix: gains are sorted
        start, size = 0, 32
        ctx = self._context(reg) if n else None
        while start < n:
            sel = np.arange(start, min(n, start + size))
            ok = self._valid(reg, sel, ctx)
            if ok.any():
                return int(sel[int(np.argmax(ok))])
            start += size
            size *= 4
        return None

    # ------------------------------------------------------------------ the recursion

    def run(self) -> SimplexFit:
        while self.bins < self.limit:
            pick = self._pick()
            if pick is None:
                break
            reg, c = pick
            added = int(reg.cand_nonempty[c].sum()) - 1
            if self.bins + added > self.limit:
                break
            self._apply(reg, self.grid[reg.cand_grid[c]], float(reg.cand_gain[c]))
        return self._fit()

    def _pick(self):
        regs = [r for r in self.regions if len(r.cand_gain)]
        if self.kind == "best":
            if not regs:
                return None
            r = min(regs, key=lambda r: (-r.cand_gain[0], r.uid))
            return r, 0
        regs.sort(key=lambda r: (-r.cand_gain[0], r.uid))
        best = None  # (gain, uid, region, candidate)
        for r in regs:
            if best is not None and (
                r.cand_gain[0] < best[0]
                or (r.cand_gain[0] == best[0] and r.uid > best[1])
            ):
                break
            c = self._best_valid(r, None if best is None else (best[0], best[1]))
            if c is not None:
                best = (float(r.cand_gain[c]), r.uid, r, c)
        return None if best is None else (best[2], best[3])

    def _apply(self, reg, gamma, gain):
        node = reg.node
        idx = reg.idx
        a = np.argmax(self.P[idx] - gamma, axis=1)
        ag = (
            np.argmax(self.grid[reg.gidx] - gamma, axis=1)
            if len(reg.gidx)
            else np.zeros(0, dtype=np.int64)
        )
        kids = []
        new_regions = []
        for q in range(self.K):
            rows = idx[a == q]
            W = float(self.w[rows].sum())
            S = self.WY[rows].sum(axis=0)
            child = self._node(W, S, node)
            kids.append(child)
            if len(rows):
                self.leaf[rows] = child
                new_regions.append((child, rows, reg.gidx[ag == q]))
        self.gamma[node] = np.asarray(gamma, dtype=np.float64)
        self.children[node] = kids
        self.step[node] = len(self.gains)
        self.gains.append(gain)
        self.splits.append((gamma, np.argmax(self.P - gamma, axis=1)))
        self.regions.remove(reg)
        for child, rows, gidx in new_regions:
            self.regions.append(self._region(child, rows, gidx, self.uid))
            self.uid += 1
        self.bins += len(new_regions) - 1
        return new_regions

    def _fit(self) -> SimplexFit:
        return SimplexFit(
            self.K, self.gamma, self.children, self.val, self.wt, self.step, self.gains
        )


def _check_simplex_inputs(owner, probs, labels, weights):
    P = (
        np.asarray(probs, dtype=np.float64)
        if not isinstance(probs, np.ndarray)
        else probs.astype(np.float64)
    )
    domain = (
        "a 2-D array of probability vectors (rows in [0, 1] summing to 1 within 1e-6)"
    )
    if P.ndim != 2 or P.shape[1] < 1:
        raise V.argument_error(
            ValueError, "probs", owner, None, domain, f"an array of shape {P.shape}"
        )
    bad = (
        ~np.isfinite(P).all(axis=1)
        | (P < 0).any(axis=1)
        | (P > 1).any(axis=1)
        | (np.abs(P.sum(axis=1) - 1.0) > 1e-6)
    )
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise V.argument_error(
            ValueError,
            "probs",
            owner,
            None,
            domain,
            P[i].tolist(),
            suffix=f" at row {i}",
        )
    n, K = P.shape
    L = np.asarray(labels)
    if L.ndim == 1:
        ldomain = f"a sequence of {n} class indices in [0, {K})"
        if len(L) != n or (
            n and L.dtype.kind not in "iu" and not np.all(np.mod(L, 1) == 0)
        ):
            raise V.argument_error(ValueError, "labels", owner, None, ldomain, labels)
        L = L.astype(np.int64)
        if n and (L.min() < 0 or L.max() >= K):
            raise V.argument_error(ValueError, "labels", owner, None, ldomain, labels)
        Y = np.zeros((n, K))
        Y[np.arange(n), L] = 1.0
    else:
        ldomain = f"class indices or a ({n}, {K}) array of label vectors (one-hot)"
        Y = L.astype(np.float64)
        if (
            Y.shape != (n, K)
            or not np.isfinite(Y).all()
            or (Y < 0).any()
            or (np.abs(Y.sum(axis=1) - 1) > 1e-6).any()
        ):
            raise V.argument_error(
                ValueError,
                "labels",
                owner,
                None,
                ldomain,
                f"an array of shape {Y.shape}",
            )
    w = V.check_weights_array(weights, n, owner, None, "weights")
    keep = w > 0
    return P[keep], Y[keep], w[keep], K


def _simplex_fit(
    owner, probs, labels, weights, max_bins, smoothing, grid_size, kind, splitter=None,
    prior_strength=0.0,
) -> SimplexFit:
    max_bins, lam = _check_options(owner, max_bins, smoothing)
    a = _check_prior(owner, prior_strength)
    if grid_size is not None:
        V.check_int(grid_size, owner, "grid_size", minimum=1)
    P, Y, w, K = _check_simplex_inputs(owner, probs, labels, weights)
    if len(P) == 0:
        return SimplexFit(
            K, [None], [None], [np.full(K, np.nan)], [0.0], [-1], [], empty=True
        )
    m = default_grid_size(K) if grid_size is None else grid_size
    if K > 1 and grid_count(K, m) > GRID_MAX:
        raise V.argument_error(
            ValueError,
            "grid_size",
            owner,
            None,
            f"an int >= 1 giving at most {GRID_MAX} grid points for {K} classes",
            m,
            suffix=f" ({grid_count(K, m)} points)",
        )
    grid = simplex_grid(K, m)
    splitter = _SimplexSplitter if splitter is None else splitter
    return splitter(P, Y, w, grid, lam, kind, max_bins, a).run()


def fit_multiclass_irp(
    probs, labels, weights=None, max_bins=None, smoothing=0.0, grid_size=None,
    prior_strength=0.0,
) -> SimplexFit:
    """Multiclass isotonic recursive partitioning (Berta, Bach and Jordan, 2024,
    Algorithm 2), as read in :mod:`streamcal.core.irp_simplex`.

    Parameters
    ----------
    probs
        (n, K) forecasts, rows probability vectors.
    labels
        n class indices in ``0 .. K-1``, or an (n, K) array of one-hot label vectors.
    weights
        Non-negative sample weights (default: all 1); zero weights are dropped.
    max_bins
        Stop before the number of regions would exceed this (None: run until no split
        keeps the function ROC-monotone).
    smoothing
        Laplace smoothing ``lam``: a region predicts ``(ybar + lam) / (1 + K lam)``.
    grid_size
        ``m`` of the candidate split points :func:`simplex_grid` (None:
        :func:`default_grid_size`, at most 1200 points).
    prior_strength
        Weight ``a >= 0`` of the prior's pseudo-event (label vector ``1/K`` per class,
        :mod:`streamcal.core.prior`): a region of weight ``W`` and label sums ``S``
        is valued ``(S_k + a / K) / (W + a)`` (then smoothed), and ROC monotony is
        checked on these values (see the module docstring). 0: the paper's fit.

    Returns
    -------
    SimplexFit

    Notes
    -----
    Cost: O(G n K) to rank the candidates of the ``G`` grid points over the regions'
    ``n`` events, plus, per step, a check of ROC monotony of O(S n K^2 + K^3) per
    candidate examined (``S`` splits so far), most candidates being skipped because
    their gain cannot beat the best valid split found. A few seconds for n = 500,
    K = 3 and m = 100.

    Examples
    --------
    >>> P = [[0.6, 0.3, 0.1], [0.5, 0.3, 0.2], [0.2, 0.7, 0.1], [0.3, 0.5, 0.2], [0.1, 0.1, 0.8]]
    >>> fit = fit_multiclass_irp(P, [0, 0, 1, 0, 2], grid_size=10)
    >>> fit.n_bins, fit.predict([[0.1, 0.2, 0.7]]).round(3).tolist()
    (3, [[0.0, 0.0, 1.0]])

    Under the prior, the region of the one event of class 2 is valued
    ``(S + 1/3) / (1 + 1)``, not certain:

    >>> fit = fit_multiclass_irp(P, [0, 0, 1, 0, 2], grid_size=10, prior_strength=1)
    >>> fit.n_bins, fit.predict([[0.1, 0.2, 0.7]]).round(3).tolist()
    (3, [[0.167, 0.167, 0.667]])

    """
    args = (probs, labels, weights, max_bins, smoothing, grid_size)
    return _simplex_fit(
        "fit_multiclass_irp", *args, "irp", prior_strength=prior_strength
    )
