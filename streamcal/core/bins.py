"""Bins and edges of [0, 1]: the one home of every binning rule of streamcal.

Edges. ``n_bins`` bins are cut by ``n_bins + 1`` non-decreasing edges ``e_0 <= ... <=
e_B``; bin ``i`` holds ``[e_i, e_{i+1})`` and the last bin also its right edge (a score
exactly on an inner edge goes to the bin above it; a bin between two equal edges is
empty). Three kinds of edges:

- :func:`uniform_edges`: ``e_i = i / n_bins``, each the correctly rounded division (bit
  for bit ``np.arange(n_bins + 1) / n_bins``). ``np.linspace(0, 1, n_bins + 1)``
  (netcal's edges) rounds some differently: for ``n_bins = 10`` it gives
  ``0.30000000000000004`` where ``3 / 10 = 0.3``.
- :func:`quantile_edges`: uniform-mass edges of Gupta and Ramdas (2021), order
  statistics of a calibration set with ``S_(n+1) = 1``, never interpolated, first and
  last edges 0 and 1 (the edges of :class:`~streamcal.HistogramBinning`).
- :func:`linear_quantile_edges`: the ``i / n_bins`` quantiles of numpy's default
  "linear" rule (interpolated between order statistics), generalised to frequency
  weights; the first and last edges are the smallest and largest scores (the equal-mass
  edges of :class:`~streamcal.metrics.ECE` and
  :func:`~streamcal.metrics.expected_calibration_error`).

Bin of a score. :func:`uniform_bin` (one score) and :func:`edge_bins` (an array, any
edges) apply the rule above. :func:`floor_bin` is a different rule kept by calibeating
and Foster's game: ``min(floor(n * x), n - 1)`` with ``n * x`` rounded first. The two
differ only within a rounding of an edge ``i / n``: a score just below it whose product
rounds up to ``i`` (``0.8999999999999999`` for ``n = 10``: bin 9 here, 8 by
:func:`uniform_bin`), or the edge itself when its product rounds down (``15 / 22`` for
``n = 22``: bin 14 here, 15 by :func:`uniform_bin`).

The per-event compiled paths (``core/_binning.pyx``, ``core/_calibeating.pyx``,
``metrics/_kernels.pyx``) inline these rules for speed, each with a comment naming the
function here; ``tests/test_core_bins.py`` checks that they agree. Pure: numpy, no river.
"""

from __future__ import annotations

from bisect import bisect_right

import numpy as np

__all__ = [
    "edge_bins",
    "floor_bin",
    "linear_quantile_edges",
    "quantile_edges",
    "uniform_bin",
    "uniform_bins",
    "uniform_edges",
]


def uniform_edges(n_bins: int) -> list[float]:
    """Equal-width edges ``[0, 1/B, ..., 1]`` (``B + 1`` floats, each ``j / B``).

    Parameters
    ----------
    n_bins
        The number of bins ``B``, an int >= 1.

    Examples
    --------
    >>> uniform_edges(4)
    [0.0, 0.25, 0.5, 0.75, 1.0]
    >>> uniform_edges(10)[3]        # the division, not np.linspace's 0.30000000000000004
    0.3

    """
    return [j / n_bins for j in range(n_bins + 1)]


def uniform_bin(p: float, n_bins: int, edges=None) -> int:
    """Index of the equal-width bin holding ``p`` in [0, 1]: ``edges[i] <= p < edges[i +
    1]``, the last bin closed.

    ``edges`` are :func:`uniform_edges` ``(n_bins)`` (computed when not given; callers
    on a per-event path pass them once computed). O(log n_bins): a bisection of the
    inner edges, the rule as stated. The compiled kernels inline it in O(1) as
    ``int(p * n)`` corrected by two comparisons (``p * n`` rounds, so it can be one off
    near an edge): ``core/_bins.pxd``.

    Parameters
    ----------
    p
        A score in [0, 1].
    n_bins
        The number of bins, an int >= 1.
    edges
        ``uniform_edges(n_bins)``, or None.

    Examples
    --------
    >>> uniform_bin(0.3, 10), uniform_bin(0.29999999999999993, 10), uniform_bin(1.0, 10)
    (3, 2, 9)
    >>> uniform_bin(0.8999999999999999, 10), uniform_bin(15 / 22, 22)  # floor_bin: 9, 14
    (8, 15)

    """
    if edges is None:
        edges = uniform_edges(n_bins)
    # bisect rather than the kernels' O(1) form written in Python: no slower per event
    # for the Python callers (ConfidenceECE, TopLabelECE, ClasswiseECE, PathECE; 10 and
    # 100 bins: medians 0.95-1.01 of the old time, 15 interleaved rounds)
    return bisect_right(edges, p, 1, n_bins) - 1


def edge_bins(p: np.ndarray, edges) -> np.ndarray:
    """Bin index of every score of ``p`` among ``edges`` (sorted, ``B + 1`` of them):
    ``e_i <= p < e_{i+1}``, the last bin closed, scores outside clipped to the first or
    last bin. O(m log B) for ``m`` scores.

    Examples
    --------
    >>> edge_bins(np.array([0.0, 0.2, 0.25, 0.7, 1.0]), [0.0, 0.25, 0.5, 1.0]).tolist()
    [0, 0, 1, 2, 2]

    """
    edges = np.asarray(edges, dtype=np.float64)
    return np.clip(np.searchsorted(edges, p, side="right") - 1, 0, len(edges) - 2)


def uniform_bins(p: np.ndarray, n_bins: int) -> np.ndarray:
    """:func:`uniform_bin` of every score of ``p`` (in [0, 1]), vectorised.

    Examples
    --------
    >>> uniform_bins(np.array([0.0, 0.05, 0.1, 0.3, 0.75, 0.99, 1.0]), 10).tolist()
    [0, 0, 1, 3, 7, 9, 9]

    """
    return edge_bins(p, np.arange(n_bins + 1, dtype=np.float64) / n_bins)


def floor_bin(x: float, n: int) -> int:
    """Index of ``x`` in [0, 1] among ``n`` equal-width bins by the product rule
    ``min(floor(n * x), n - 1)``, ``n * x`` rounded to a float first.

    The rule of calibeating's bins and Foster's grid
    (:mod:`streamcal.core.calibeating`, which exports it as ``bin_index``). Index ``i``
    holds ``[i/n, (i+1)/n)`` up to the rounding of the product (see the module
    docstring for where it differs from :func:`uniform_bin`); 1.0 falls in the last bin.

    Examples
    --------
    >>> floor_bin(0.0, 10), floor_bin(0.35, 10), floor_bin(0.999, 10), floor_bin(1.0, 10)
    (0, 3, 9, 9)

    """
    i = int(x * n)
    return n - 1 if i >= n else i


def quantile_edges(sorted_scores, counts, n_bins: int) -> list[float]:
    """Uniform-mass edges of Algorithm 1 of Gupta and Ramdas (2021).

    ``sorted_scores`` are distinct scores in increasing order and ``counts`` how many
    times each occurs (``n`` in total, ``n >= 1``). Returns ``[0, e_1, ..., e_{B-1}, 1]``
    with ``e_j = S_(ceil(j (n+1) / B))``, the order statistics of the ``n`` scores, and
    ``S_(n+1) = 1`` (integer arithmetic: no rounding, no interpolation). Edges are never
    ``-0.0``. Cost O(d + B log d) for ``d`` distinct scores (numpy).

    Examples
    --------
    >>> quantile_edges([0.1, 0.2, 0.3, 0.4, 0.5], [1, 1, 1, 1, 1], 2)
    [0.0, 0.3, 1.0]
    >>> quantile_edges([0.5], [4], 3)   # ties: duplicate edges, an empty middle bin
    [0.0, 0.5, 0.5, 1.0]

    """
    xs = np.asarray(sorted_scores, dtype=np.float64)
    cum = np.cumsum(np.asarray(counts, dtype=np.int64))
    n = int(cum[-1])
    ranks = [-((-j * (n + 1)) // n_bins) for j in range(1, n_bins)]  # ceil, exactly
    idx = np.searchsorted(cum, ranks, side="left").tolist()
    d = len(xs)
    inner = [float(xs[i]) + 0.0 if i < d else 1.0 for i in idx]  # + 0.0: no -0.0
    return [0.0, *inner, 1.0]


def linear_quantile_edges(x: np.ndarray, cum: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-mass edges: the ``i / n_bins`` quantiles (numpy's default "linear" rule) of
    the forecasts ``x`` (increasing) repeated as often as their weights, ``cum`` being
    the cumulative weights (frequency weights). With unit weights (``cum = 1, 2, ...,
    n``) bit for bit ``np.quantile(x, np.arange(n_bins + 1) / n_bins)``. Made
    non-decreasing; ``n_bins + 1`` edges. O(n_bins log len(x)).

    Examples
    --------
    >>> linear_quantile_edges(np.array([0.1, 0.2, 0.9]), np.array([1.0, 2.0, 3.0]), 2).tolist()
    [0.1, 0.2, 0.9]
    >>> linear_quantile_edges(np.array([0.1, 0.2, 0.9]), np.array([1.0, 3.0, 4.0]), 2).tolist()
    [0.1, 0.2, 0.9]
    >>> linear_quantile_edges(np.array([0.0, 1.0]), np.array([1.0, 2.0]), 4).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]

    """
    # the expanded sample's index k holds the first value whose cumulative weight
    # exceeds k, and the quantile q sits at the virtual index (W - 1) q
    levels = np.arange(n_bins + 1, dtype=np.float64) / n_bins
    virtual = (cum[-1] - 1.0) * levels
    below = np.floor(virtual)
    last = len(x) - 1
    lo = np.minimum(np.searchsorted(cum, np.maximum(below, 0.0), side="right"), last)
    hi = np.minimum(
        np.searchsorted(cum, np.maximum(below + 1.0, 0.0), side="right"), last
    )
    a, b = x[lo], x[hi]
    gamma = virtual - below
    diff = b - a
    q = np.where(gamma >= 0.5, b - diff * (1.0 - gamma), a + diff * gamma)
    return np.maximum.accumulate(q)
