"""Recursive binning without the monotony constraint: the baselines that isotonic
recursive partitioning is compared with (Berta, Bach and Jordan, 2024, "Classifier
calibration with ROC-regularized isotonic regression", AISTATS, figures 2, 4 and 5).

The recursions are those of :mod:`streamcal.core.irp_interval` (on the score line) and
:mod:`streamcal.core.irp_simplex` (on the simplex), either ``split="best"`` (the best
threshold by the same gain, in absolute value in one dimension: a regression tree) or
the paper's ``split="midpoint"`` / ``"center"`` (cut each region at the middle of its
interval, or at the centroid of its grid points, breadth first). The fits they return
(:class:`~streamcal.core.irp_interval.IntervalFit`,
:class:`~streamcal.core.irp_simplex.SimplexFit`), their smoothing and their early
stopping are IRP's.

This module is pure: numpy, no river.
"""

from __future__ import annotations

import collections
import math

import numpy as np

from streamcal import _validation as V
from streamcal.core.irp_interval import (
    IntervalFit,
    _aggregate,
    _check_options,
    _fit_1d,
    _start_1d,
)
from streamcal.core.irp_simplex import (
    SimplexFit,
    _Region,
    _simplex_fit,
    _SimplexSplitter,
)

__all__ = ["fit_multiclass_recursive_binning", "fit_recursive_binning"]


def fit_recursive_binning(
    scores, labels, weights=None, max_bins=None, smoothing=0.0, split="best"
) -> IntervalFit:
    """Recursive binning without the monotony constraint: the baseline of Berta, Bach and
    Jordan (2024), figure 2.

    Parameters
    ----------
    scores, labels, weights, max_bins, smoothing
        As for :func:`~streamcal.core.irp_interval.fit_irp`.
    split
        - ``"best"``: split the region of largest gain at its best threshold, the cut
          maximising ``|centred suffix sum|`` (upper part above or below the lower): a
          regression tree on the score; runs until every region is constant.
        - ``"midpoint"``: the paper's regular binning: cut [0, 1] at 0.5, then each
          half at its middle, breadth first; a cut that leaves one side without events
          counts as a step but adds no bin; an interval holding a single distinct score
          is not cut.

    Returns
    -------
    IntervalFit

    Examples
    --------
    >>> fit = fit_recursive_binning([0.1, 0.2, 0.3, 0.4], [1, 0, 0, 1])
    >>> fit.values.tolist()
    [1.0, 0.0, 1.0]
    >>> fit_recursive_binning([0.1, 0.2, 0.3, 0.4], [1, 0, 0, 1], max_bins=2, split="midpoint").edges.tolist()
    [0.25, 0.5]

    """
    max_bins, lam = _check_options("fit_recursive_binning", max_bins, smoothing)
    V.check_param(
        "fit_recursive_binning",
        "split",
        split,
        split in ("best", "midpoint"),
        "a str among {'best', 'midpoint'}",
    )
    xs, W, S = _aggregate("fit_recursive_binning", scores, labels, weights)
    if split == "midpoint":
        return _fit_midpoint(xs, W, S, max_bins, lam)
    return _fit_1d(xs, W, S, max_bins, lam, monotone=False)


def _fit_midpoint(xs, W, S, max_bins, lam) -> IntervalFit:
    """The paper's regular binning of [0, 1]: cut each interval at its middle, breadth
    first (see :func:`fit_recursive_binning`)."""
    tree, root = _start_1d(xs, W, S, lam)
    if root is None:
        return tree.fit(empty=True)
    limit = math.inf if max_bins is None else max_bins
    bins = 1
    queue = collections.deque([(root, 0.0, 1.0, 0, len(xs))])
    while queue:
        node, lo, hi, a, b = queue.popleft()
        if b - a < 2:
            continue
        mid = (lo + hi) / 2.0
        j = a + int(np.searchsorted(xs[a:b], mid, side="left"))
        wl, sl, wr, sr = W[a:j].sum(), S[a:j].sum(), W[j:b].sum(), S[j:b].sum()
        added = (j > a) + (j < b) - 1
        if bins + added > limit:
            break
        ml = sl / wl if j > a else None
        mr = sr / wr if j < b else None
        gain = float(wr * abs(mr - (sl + sr) / (wl + wr))) if added else 0.0
        left, right = tree.cut(node, mid, gain, float(wl), float(sl), float(wr), float(sr))
        bins += added
        if ml is not None:
            queue.append((left, lo, mid, a, j))
        if mr is not None:
            queue.append((right, mid, hi, j, b))
    return tree.fit()


def fit_multiclass_recursive_binning(
    probs,
    labels,
    weights=None,
    max_bins=None,
    smoothing=0.0,
    grid_size=None,
    split="best",
) -> SimplexFit:
    """Recursive binning of the simplex without the monotony constraint: the baseline
    of Berta, Bach and Jordan (2024), figures 4 and 5.

    Parameters
    ----------
    probs, labels, weights, max_bins, smoothing, grid_size
        As for :func:`~streamcal.core.irp_simplex.fit_multiclass_irp`.
    split
        - ``"best"``: split the region of largest gain at its best grid point
          (no monotony check), until no split has a positive gain;
        - ``"center"``: the paper's regular binning: split each region around the
          centroid of the grid points it contains, breadth first (a split that leaves
          one sub-region with all the events adds no bin; the sub-region is split again
          if it holds fewer grid points).

    Returns
    -------
    SimplexFit

    Examples
    --------
    >>> P = [[0.6, 0.3, 0.1], [0.5, 0.3, 0.2], [0.2, 0.7, 0.1], [0.3, 0.5, 0.2], [0.1, 0.1, 0.8]]
    >>> fit_multiclass_recursive_binning(P, [0, 0, 1, 0, 2], grid_size=10, split="center", max_bins=3).n_bins
    3

    """
    V.check_param(
        "fit_multiclass_recursive_binning",
        "split",
        split,
        split in ("best", "center"),
        "a str among {'best', 'center'}",
    )
    splitter = _CenterSplitter if split == "center" else None
    args = (probs, labels, weights, max_bins, smoothing, grid_size)
    return _simplex_fit("fit_multiclass_recursive_binning", *args, split, splitter)


class _CenterSplitter(_SimplexSplitter):
    """The ``"center"`` recursion of :func:`fit_multiclass_recursive_binning`: each
    region split around the centroid of its grid points, breadth first (no candidate
    is ranked)."""

    def _region(self, node, idx, gidx, uid=0):
        return _Region(node, uid, idx, gidx)

    def run(self) -> SimplexFit:
        queue = collections.deque(self.regions)
        while queue and self.bins < self.limit:
            reg = queue.popleft()
            if len(reg.gidx) == 0 or len(np.unique(self.P[reg.idx], axis=0)) < 2:
                continue
            gamma = self.grid[reg.gidx].mean(axis=0)
            a = np.argmax(self.P[reg.idx] - gamma, axis=1)
            ne = np.bincount(a, minlength=self.K) > 0
            added = int(ne.sum()) - 1
            if self.bins + added > self.limit:
                break
            W = self.w[reg.idx].sum()
            mean = self.WY[reg.idx].sum(axis=0) / W
            gain = 0.0
            for q in np.flatnonzero(ne):
                rows = reg.idx[a == q]
                Wq = self.w[rows].sum()
                gain += Wq * np.abs(self.WY[rows].sum(axis=0) / Wq - mean).sum()
            new = self._apply(reg, gamma, float(gain))
            for child, _rows, gidx in new:
                r = next(r for r in self.regions if r.node == child)
                if added or len(gidx) < len(reg.gidx):
                    queue.append(r)
        return self._fit()
