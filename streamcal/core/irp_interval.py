"""Binary isotonic recursive partitioning (IRP) on the score line: :func:`fit_irp` and
the :class:`IntervalFit` it returns (the recursive binning baselines,
:mod:`streamcal.core.recursive_binning`, build the same fits without the monotony
constraint; the multiclass IRP is in :mod:`streamcal.core.irp_simplex`).

References: Luss, Rosset and Shahar (2012), "Efficient regularized isotonic regression
with application to gene-gene interaction search", Ann. Appl. Stat. 6(1) (IRP); Berta,
Bach and Jordan (2024), "Classifier calibration with ROC-regularized isotonic
regression", AISTATS (section 2.4: binary IRP against recursive binning).

Binary IRP (:func:`fit_irp`). Events are pooled by distinct score into *cells* (weight
``W``, weighted label sum ``S``; zero weights dropped). A *region* is a run of
consecutive cells with value ``S_R / W_R``. The best split of a region is the cut whose
upper part (a suffix of the region's cells) has the largest centred sum
``gain = sum over the suffix of w_i (y_i - ybar_R)``, a maximum suffix sum (the
Luss-Rosset-Shahar cut restricted to the upper sets of an interval). A region is split
only when that gain is positive and the two parts' means, as computed, satisfy
``mean(prefix) < mean(suffix)``. At each step the region with the largest gain is split
(ties: the leftmost region; within a region the longest suffix). Every intermediate fit
is non-decreasing, and when no region can be split each region's own isotonic
regression is constant, so the fit is the isotonic regression (PAV) of the events.
``gain`` is a quarter of Berta et al.'s ``M_R`` for two classes (one-hot labels, L1
norm), so the order of the splits is theirs.

*Smoothing.* With ``smoothing = lam`` a region's value is ``(ybar + lam) / (1 + K lam)``
(K = 2 for binary fits): the minimiser over the region of the regularised cross entropy
``sum_i w_i [H(p, y_i) - lam sum_k log p_k]`` of Berta et al., section 2.4 (``lam``
pseudo-observations of every class per unit of weight). It is an increasing affine map
of the mean, the same for every region, so splits, gains and monotony do not depend on
it; it only keeps the end regions away from 0 and 1.

*The prior* (``prior_strength = a``, :mod:`streamcal.core.prior`; not in the papers):
a region of weight ``W`` and label sum ``S`` is valued at
:func:`~streamcal.core.prior.posterior_mean` ``(S + a / 2) / (W + a)``, its mean once a
pseudo-event of weight ``a`` and label 1/2 has joined it (the prior of
:class:`streamcal.MulticlassIRP` for two classes, and of the isotonic blocks), then
smoothed. The pull depends on the region's weight, so it could undo monotony: a cut is
then allowed only when, under the prior, its lower part's value is below its upper
part's, at or above the value of the region to its left and its upper part's at or
below the value of the region to its right (the fit stays non-decreasing as read). The
best allowed cut of a region is the one of largest gain among the allowed ones (ties:
the longest suffix); the gains stay those of the plain means. A region whose best cut
is refused is looked at again when a neighbour is split. With ``a > 0`` every value lies
strictly inside (0, 1); ``a = 0`` is the fit above, bit for bit. Run to completion the
fit is then no longer PAV's: the prior stops the splits that would isolate a light
block against a heavy neighbour.

*Early stopping.* With ``max_bins`` the recursion stops as soon as the next split would
make the number of bins (regions holding events) exceed it; no smaller split is sought
instead. Every fit records the order of its splits: ``fit.prefix(t)`` is the fit after
the first ``t`` splits, which is what the same function returns with the matching
``max_bins``.

This module is pure: numpy, no river.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from streamcal import _validation as V
from streamcal.core.prior import ISOTONIC_PRIOR_MEAN, posterior_mean

__all__ = ["IntervalFit", "fit_irp"]


# ============================================================================ helpers
# (shared with the multiclass fits and the baselines)


def _check_options(owner: str, max_bins, smoothing) -> tuple:
    if max_bins is not None:
        V.check_int(max_bins, owner, "max_bins", minimum=1)
    return max_bins, V.check_weight(smoothing, owner, name="smoothing")


def _check_prior(owner: str, prior_strength) -> float:
    return V.check_weight(prior_strength, owner, name="prior_strength")


def _smooth(mean, lam: float, k: int):
    return mean if lam == 0.0 else (mean + lam) / (1.0 + k * lam)


# ============================================================================ one dimension


class _RecursiveFit:
    """What the fits of a recursion of splits share (:class:`IntervalFit`,
    :class:`~streamcal.core.irp_simplex.SimplexFit`): per node its value, weight and
    split step (-1: not split), the gains of the splits, the number of bins after each
    split, and the prefix of the first ``n_steps`` splits. A subclass's constructor
    takes its own node arrays (``tree``), then these."""

    def __init__(self, tree: tuple, values, weights, steps, gains, n_steps, empty):
        self._tree = tree
        self._val = values
        self._w = weights
        self._step = steps
        self.gains = np.asarray(gains, dtype=np.float64)
        total = len(self.gains)
        self.n_steps = total if n_steps is None else min(int(n_steps), total)
        self.empty = bool(empty)
        self._order = [i for _, i in sorted((s, i) for i, s in enumerate(steps) if s >= 0)]
        path = [0 if self.empty else 1]  # bins after t splits, t = 0 .. all splits
        for i in self._order:
            path.append(path[-1] + sum(weights[c] > 0 for c in self._children_of(i)) - 1)
        self.bins_path = np.array(path, dtype=np.int64)

    def _children_of(self, node: int) -> tuple:  # pragma: no cover - abstract
        raise NotImplementedError

    def prefix(self, n_steps: int):
        """The fit after its first ``n_steps`` splits (a new object). O(nodes)."""
        return type(self)(
            *self._tree, self._val, self._w, self._step, self.gains, n_steps, self.empty
        )

    def _check_splits(self) -> None:
        """Assert the invariants of the splits: steps numbered 0 .. n_splits - 1, a
        child split after its parent, a parent's weight the sum of its children's."""
        steps = sorted(s for s in self._step if s >= 0)
        assert steps == list(range(len(self.gains))), "steps must be 0 .. n_splits - 1"
        for i in self._order:
            kids = self._children_of(i)
            for c in kids:
                assert self._step[c] < 0 or self._step[c] > self._step[i]
            assert math.isclose(
                sum(self._w[c] for c in kids), self._w[i], rel_tol=1e-9, abs_tol=1e-300
            )
        assert self.bins_path[self.n_steps] == self.n_bins


class IntervalFit(_RecursiveFit):
    """A piecewise-constant map of the score line built by recursive cuts (binary IRP
    and the one-dimensional binning baselines).

    The fit is a binary tree: node ``i`` cut at step ``steps[i]`` sends a score
    ``s < thresholds[i]`` to its left child and ``s >= thresholds[i]`` to its right one.
    Flattened, the leaves are the bins ``[edges[b-1], edges[b])`` (the first from minus
    infinity, the last to plus infinity) with values ``values[b]``: a score on an edge
    goes to the bin above it. For IRP the edges are the smallest scores of the blocks,
    so a new score between two seen scores takes the value of the block below (the
    ``"step"`` rule of :class:`streamcal.OnlineIsotonic`).

    Attributes
    ----------
    edges, values, bin_weights
        The bins of the fit (numpy arrays; ``len(values) == len(edges) + 1``).
    n_bins
        Number of bins holding events (an empty bin, possible in the midpoint baseline,
        predicts the value of the interval it was cut from and is not counted).
    n_steps
        Number of splits in this fit; ``gains[:n_steps]`` their gains, ``bins_path[t]``
        the number of bins after ``t`` splits (all for the full recursion).
    empty
        True when no event had positive weight: :meth:`predict` is then the identity.

    Examples
    --------
    >>> fit = fit_irp([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1])
    >>> fit.edges.tolist(), fit.values.tolist()
    ([0.2, 0.4], [0.0, 0.5, 1.0])
    >>> fit.predict([0.15, 0.35, 0.4]).tolist()
    [0.0, 0.5, 1.0]
    >>> fit.gains.tolist(), fit.bins_path.tolist(), fit.prefix(1).values.tolist()
    ([0.5, 0.3333333333333333], [1, 2, 3], [0.0, 0.6666666666666666])

    """

    def __init__(
        self, thresholds, left, right, values, weights, steps, gains, n_steps=None, empty=False
    ):
        self._thr = thresholds
        self._left = left
        self._right = right
        super().__init__(
            (thresholds, left, right), values, weights, steps, gains, n_steps, empty
        )
        self._flatten()

    def _children_of(self, node: int) -> tuple:
        return self._left[node], self._right[node]

    def _flatten(self) -> None:
        edges, values, weights = [], [], []
        if not self.empty:
            stack = [0]
            t = self.n_steps
            while stack:  # in-order traversal, iterative: leaves and cuts left to right
                node = stack.pop()
                if node < 0:
                    edges.append(self._thr[-node - 1])
                    continue
                if 0 <= self._step[node] < t:
                    stack.extend((self._right[node], -node - 1, self._left[node]))
                else:
                    values.append(self._val[node])
                    weights.append(self._w[node])
        self.edges = np.array(edges, dtype=np.float64)
        self.values = np.array(values, dtype=np.float64)
        self.bin_weights = np.array(weights, dtype=np.float64)
        self.n_bins = int(np.count_nonzero(self.bin_weights > 0))

    def predict(self, scores) -> np.ndarray:
        """Fitted values at ``scores`` (an array); the scores themselves if empty.
        O(n log bins)."""
        s = np.asarray(scores, dtype=np.float64)
        if self.empty:
            return s.copy()
        return self.values[np.searchsorted(self.edges, s, side="right")]

    def _check(self) -> None:
        """Assert the invariants of the tree and of its flattened bins."""
        n = len(self._thr)
        columns = (self._left, self._right, self._val, self._w, self._step)
        assert all(len(c) == n for c in columns), "node columns of unequal length"
        assert len(self.values) == len(self.edges) + 1 or (
            self.empty and len(self.values) == 0
        )
        assert np.all(np.diff(self.edges) > 0), "edges must increase strictly"
        assert np.all((self.values >= 0) & (self.values <= 1)), "values outside [0, 1]"
        self._check_splits()
        assert np.all(self.gains >= 0), "gains are non-negative"


def _aggregate(owner, scores, labels, weights):
    s = V.check_scores_array(scores, owner, None, "scores")
    y = V.check_labels_array(labels, len(s), owner, None, "labels")
    w = V.check_weights_array(weights, len(s), owner, None, "weights")
    keep = w > 0
    s, y, w = s[keep], y[keep], w[keep]
    xs, inv = np.unique(s, return_inverse=True)
    W = np.bincount(inv, weights=w, minlength=len(xs))
    S = np.bincount(inv, weights=w * y, minlength=len(xs))
    return xs, W, S


class _Tree1D:
    """Nodes of an :class:`IntervalFit` under construction."""

    def __init__(self, lam: float, prior: float = 0.0):
        self.lam = lam
        self.prior = prior  # prior_strength a (the pseudo-event's label: 1/2)
        self.thr, self.left, self.right, self.val, self.w, self.step = (
            [],
            [],
            [],
            [],
            [],
            [],
        )
        self.gains: list = []

    def node(self, W: float, S: float, parent_value: float | None = None) -> int:
        self.thr.append(math.nan)
        self.left.append(-1)
        self.right.append(-1)
        if W > 0:
            r = S / W if self.prior == 0.0 else posterior_mean(S, W, self.prior, ISOTONIC_PRIOR_MEAN)
            self.val.append(_smooth(r, self.lam, 2))
        else:
            self.val.append(parent_value)
        self.w.append(W)
        self.step.append(-1)
        return len(self.thr) - 1

    def cut(
        self, i: int, threshold: float, gain: float, wl, sl, wr, sr
    ) -> tuple[int, int]:
        a = self.node(wl, sl, self.val[i])
        b = self.node(wr, sr, self.val[i])
        self.thr[i] = threshold
        self.left[i], self.right[i] = a, b
        self.step[i] = len(self.gains)
        self.gains.append(gain)
        return a, b

    def fit(self, empty: bool = False) -> IntervalFit:
        return IntervalFit(
            self.thr,
            self.left,
            self.right,
            self.val,
            self.w,
            self.step,
            self.gains,
            empty=empty,
        )


def _best_cut(W, S, a: int, b: int, monotone: bool):
    """Best cut of cells ``[a, b)``: ``(gain, j, sums)`` or None (see the module doc)."""
    if b - a < 2:
        return None
    w, s = W[a:b], S[a:b]
    WR, SR = w.sum(), s.sum()
    sw = np.cumsum(w[::-1])[::-1][1:]  # suffix sums from cell a + 1 + i
    ss = np.cumsum(s[::-1])[::-1][1:]
    c = WR * ss - SR * sw  # W_R times the centred suffix sum: exact for integer data
    if monotone:
        i = int(np.argmax(c))
        val = c[i]
    else:
        ac = np.abs(c)
        i = int(np.argmax(ac))
        val = ac[i]
    if not val > 0.0:
        return None
    j = a + 1 + i
    wl, sl, wr, sr = W[a:j].sum(), S[a:j].sum(), W[j:b].sum(), S[j:b].sum()
    ml, mr = sl / wl, sr / wr
    if (monotone and not ml < mr) or ml == mr:
        return None
    return float(val / WR), j, (float(wl), float(sl), float(wr), float(sr))


def fit_irp(
    scores, labels, weights=None, max_bins=None, smoothing=0.0, prior_strength=0.0
) -> IntervalFit:
    """Binary isotonic recursive partitioning (Luss, Rosset and Shahar, 2012).

    Repeatedly splits the region (run of distinct scores) with the largest gain at its
    best threshold, a maximum suffix sum of the centred labels (see
    the module docstring). Every intermediate fit is non-decreasing; run to
    completion the fit is the isotonic regression (PAV) of the events, ties in the
    scores pooled, weights honoured, zero weights dropped.

    Parameters
    ----------
    scores
        Scores in [0, 1].
    labels
        Binary labels (0/1), same length.
    weights
        Non-negative sample weights (default: all 1).
    max_bins
        Stop before the number of bins would exceed this (None: run to completion).
    smoothing
        Laplace smoothing ``lam >= 0``: a region with mean ``ybar`` predicts
        ``(ybar + lam) / (1 + 2 lam)``; does not change the partition.
    prior_strength
        Weight ``a >= 0`` of the prior's pseudo-event (label 1/2,
        :mod:`streamcal.core.prior`): a region of weight ``W`` and label sum ``S`` is
        valued ``(S + a / 2) / (W + a)`` (then smoothed), and a cut is allowed only
        when these values stay non-decreasing (see the module docstring). 0: the
        plain fit.

    Returns
    -------
    IntervalFit

    Notes
    -----
    Cost O(m log m) to pool ``m`` distinct scores, then O(size of the region) per region
    examined: O(m * depth) in all, O(m^2) at worst. Under the prior a step also
    re-examines the neighbours of the region it cut and scans every region: O(m) per
    step, O(m^2) at worst.

    Examples
    --------
    >>> fit = fit_irp([0.1, 0.2, 0.3, 0.4, 0.5], [0, 1, 0, 1, 1])
    >>> fit.values.tolist(), fit.n_bins
    ([0.0, 0.5, 1.0], 3)
    >>> fit_irp([0.1, 0.2, 0.3, 0.4, 0.5], [0, 1, 0, 1, 1], max_bins=2).values.tolist()
    [0.3333333333333333, 1.0]
    >>> fit_irp([0.1, 0.2, 0.3, 0.4, 0.5], [0, 1, 0, 1, 1], smoothing=0.05).values.round(4).tolist()
    [0.0455, 0.5, 0.9545]

    Under the prior no region says 0 or 1 (the lowest, one event labelled 0, says
    ``(0 + 1/2) / (1 + 1)``):

    >>> fit_irp([0.1, 0.2, 0.3, 0.4, 0.5], [0, 1, 0, 1, 1], prior_strength=1).values.tolist()
    [0.25, 0.5, 0.8333333333333334]

    """
    max_bins, lam = _check_options("fit_irp", max_bins, smoothing)
    a = _check_prior("fit_irp", prior_strength)
    xs, W, S = _aggregate("fit_irp", scores, labels, weights)
    if a == 0.0:
        return _fit_1d(xs, W, S, max_bins, lam, monotone=True)
    return _fit_1d_prior(xs, W, S, max_bins, lam, a)


def _start_1d(xs, W, S, lam: float):
    """A tree over the cells ``xs`` (weights ``W``, weighted label sums ``S``) holding
    its root only, and that root (None when there is no cell: the tree is then the
    empty fit's)."""
    tree = _Tree1D(lam)
    if len(xs) == 0:
        tree.node(0.0, 0.0, math.nan)
        return tree, None
    return tree, tree.node(float(W.sum()), float(S.sum()))


def _fit_1d(xs, W, S, max_bins, lam, monotone: bool) -> IntervalFit:
    """Split the region of largest gain at its best cut (:func:`_best_cut`) until no
    region can be split or the next split would pass ``max_bins``: IRP when
    ``monotone``, else the regression-tree baseline."""
    tree, root = _start_1d(xs, W, S, lam)
    if root is None:
        return tree.fit(empty=True)
    limit = math.inf if max_bins is None else max_bins
    bins = 1
    heap = []

    def push(node, a, b):
        cut = _best_cut(W, S, a, b, monotone)
        if cut is not None:
            gain, j, sums = cut
            heapq.heappush(heap, (-gain, a, node, b, j, sums))

    push(root, 0, len(xs))
    while heap and bins < limit:
        neg, a, node, b, j, sums = heapq.heappop(heap)
        left, right = tree.cut(node, float(xs[j]), -neg, *sums)
        bins += 1
        push(left, a, j)
        push(right, j, b)
    return tree.fit()


def _fit_1d_prior(xs, W, S, max_bins, lam, a: float) -> IntervalFit:
    """IRP under the prior of strength ``a > 0`` (see the module docstring): at each
    step the allowed cut of largest gain over all regions (ties: the leftmost region,
    then the longest suffix), a cut allowed when its gain is positive and the values
    under the prior stay non-decreasing across it and its two neighbours. A region's
    best allowed cut is cached until it or a neighbour changes: a step costs
    O(regions) plus O(size) for each of the at most four regions it re-examines,
    O(m) in all, so O(m * splits) = O(m^2) at worst."""
    tree = _Tree1D(lam, a)
    if len(xs) == 0:
        tree.node(0.0, 0.0, math.nan)
        return tree.fit(empty=True)
    half = a * ISOTONIC_PRIOR_MEAN
    root = tree.node(float(W.sum()), float(S.sum()))
    limit = math.inf if max_bins is None else max_bins
    # regions in score order: [lo, hi, node, W_R, S_R] (cells lo .. hi - 1); cache:
    # lo -> the best allowed cut of the region starting at lo, or None
    regions = [[0, len(xs), root, float(W.sum()), float(S.sum())]]
    cache: dict = {}

    def best(k):
        # the allowed cut of largest gain of region k, vectorised over its cuts: cut i
        # puts cells lo .. lo + i in the lower part, the rest in the upper part
        lo, hi, _, WR, SR = regions[k]
        if hi - lo < 2:
            return None
        w, s = W[lo:hi], S[lo:hi]
        sw = np.cumsum(w[::-1])[::-1][1:]  # upper parts' weights and label sums
        ss = np.cumsum(s[::-1])[::-1][1:]
        wl = np.cumsum(w)[:-1]  # lower parts'
        sl = np.cumsum(s)[:-1]
        c = WR * ss - SR * sw
        # values under the prior compared cross-multiplied: (s1 + a/2) / (w1 + a)
        ok = (c > 0.0) & ((sl + half) * (sw + a) < (ss + half) * (wl + a))
        if k > 0:  # the lower part at or above the region to the left
            lw, ls = regions[k - 1][3], regions[k - 1][4]
            ok &= (ls + half) * (wl + a) <= (sl + half) * (lw + a)
        if k + 1 < len(regions):  # the upper part at or below the region to the right
            rw, rs = regions[k + 1][3], regions[k + 1][4]
            ok &= (ss + half) * (rw + a) <= (rs + half) * (sw + a)
        idx = np.flatnonzero(ok)
        if idx.size == 0:
            return None
        i = int(idx[np.argmax(c[idx])])  # ties: the first, the longest upper part
        sums = (float(wl[i]), float(sl[i]), float(sw[i]), float(ss[i]))
        return float(c[i] / WR), lo + 1 + i, sums

    bins = 1
    while bins < limit:
        pick = None
        for k, reg in enumerate(regions):
            if reg[0] not in cache:
                cache[reg[0]] = best(k)
            cut = cache[reg[0]]
            if cut is not None and (pick is None or cut[0] > pick[1][0]):
                pick = (k, cut)
        if pick is None:
            break
        k, (gain, j, sums) = pick
        lo, hi, node = regions[k][:3]
        left, right = tree.cut(node, float(xs[j]), gain, *sums)
        wl, sl, wr, sr = sums
        regions[k : k + 1] = [[lo, j, left, wl, sl], [j, hi, right, wr, sr]]
        for kk in (k - 1, k, k + 1, k + 2):  # the new regions and their neighbours
            if 0 <= kk < len(regions):
                cache.pop(regions[kk][0], None)
        bins += 1
    return tree.fit()
