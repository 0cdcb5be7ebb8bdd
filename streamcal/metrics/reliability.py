"""Reliability analysis: the data behind reliability diagrams, numpy and scipy only.

What :mod:`streamcal.plot` draws, computed here (the split of scikit-learn's
``calibration_curve`` and ``CalibrationDisplay``), so that it can be used and tested
without matplotlib:

- :func:`binned_reliability`: per bin, the mean forecast and the outcome rate (the
  records of the ``ECE`` metric's ``bins``);
- :func:`corp_reliability`: the CORP curve (Dimitriadis, Gneiting and Jordan, PNAS 118,
  2021), the PAV (isotonic) recalibration of the forecasts, as PAV blocks;
- :func:`consistency_band` and :func:`consistency_band_from_bins`: where the curve of a
  calibrated forecaster with the same forecasts would lie (resampled, or binomial from
  a metric's bins);
- :func:`multiclass_views`: binary views (confidence, top-label, class-wise) of
  multiclass forecasts.

scipy is imported inside the functions that use it (it is slow to import, and
importing :mod:`streamcal.metrics` must stay light: tests/test_startup.py).
"""

from __future__ import annotations

import math
import typing
import warnings

import numpy as np

from streamcal import _validation as V
from streamcal.core.pav import BlockView, pav_blocks
from streamcal.core.bins import edge_bins, linear_quantile_edges, uniform_edges
from streamcal.metrics._binned import ReliabilityBin

__all__ = [
    "ConsistencyBand",
    "binned_reliability",
    "consistency_band",
    "consistency_band_from_bins",
    "corp_reliability",
    "multiclass_views",
]

#: the reliability curves: ``"binned"`` (:func:`binned_reliability`) or ``"corp"``
#: (:func:`corp_reliability`)
KINDS = ("binned", "corp")
#: the bin strategies of the binned curve: equal width or equal mass
STRATEGIES = ("uniform", "quantile")
#: the binary views of multiclass forecasts (:func:`multiclass_views`)
VIEWS = ("confidence", "top-label", "classwise")
# The CORP band is evaluated at no more than this many distinct forecasts (spread evenly
# in rank), which bounds its memory to n_resamples * _MAX_BAND_POINTS floats.
_MAX_BAND_POINTS = 1000
# Resampled outcomes are drawn in chunks of about this many events x resamples.
_CHUNK = 2_000_000


class ConsistencyBand(typing.NamedTuple):
    """A pointwise consistency band: where a calibrated forecaster's curve would lie.

    At forecast value ``x[i]``, the curve of a calibrated forecaster with the same
    forecasts lies in ``[lower[i], upper[i]]`` with probability about ``level``.
    """

    #: forecast values (bin mean forecasts, or distinct forecasts), increasing
    x: np.ndarray
    #: lower end of the band at each ``x``
    lower: np.ndarray
    #: upper end of the band at each ``x``
    upper: np.ndarray
    #: the nominal pointwise coverage
    level: float



def _bin_edges(p: np.ndarray, w: np.ndarray, n_bins: int, strategy: str) -> np.ndarray:
    if strategy == "uniform":
        return np.asarray(uniform_edges(n_bins), dtype=np.float64)
    order = np.argsort(p, kind="stable")
    return linear_quantile_edges(p[order], np.cumsum(w[order]), n_bins)


def binned_reliability(
    y_true=None,
    y_prob=None,
    n_bins: int = 10,
    strategy: str = "uniform",
    weights=None,
    *,
    probs=None,
    labels=None,
) -> tuple[ReliabilityBin, ...]:
    """The points of a binned reliability diagram: per bin, mean forecast and outcome rate.

    Bin ``i`` holds the forecasts in ``[e_i, e_{i+1})``, the last bin also its right
    edge; the edges are ``i / n_bins`` (``"uniform"``) or the ``i / n_bins`` quantiles
    of the forecasts (``"quantile"``, numpy's linear interpolation, so the outer edges
    are the smallest and largest forecast; ties are never split, so repeated quantiles
    give empty bins). This is the rule of
    :func:`streamcal.metrics.expected_calibration_error` and of the ``ECE`` metric,
    whose ``bins`` hold the same records for the same events, and
    ``sum(b.weight * abs(b.mean_outcome - b.mean_prediction)) / total weight`` is that
    ECE. Cost O(n) (``"uniform"``) or O(n log n) (``"quantile"``).

    The arguments are ``(y_true, y_prob)``, as in scikit-learn and river. The old order
    ``(probs, labels)`` still works for one release with a DeprecationWarning: it is
    recognised by the keywords ``probs=`` / ``labels=``, or when the second argument
    holds only 0 and 1 and the first does not; when both hold only 0 and 1, the new
    order is assumed.

    Parameters
    ----------
    y_true
        Binary outcomes (0, 1, False, True), a one-dimensional sequence.
    y_prob
        Forecast probabilities in [0, 1], same length.
    n_bins
        Number of bins, an int >= 1.
    strategy
        ``"uniform"`` (equal width) or ``"quantile"`` (equal mass).
    weights
        Optional non-negative event weights, same length (default: all 1), acting as
        frequency weights: an event of weight 2 counts as two events of weight 1,
        equal-mass edges included (as in the ``ECE`` metric). Events of zero weight
        are dropped first.
    probs, labels
        Deprecated names of ``y_prob`` and ``y_true``.

    Returns
    -------
    tuple of streamcal.metrics.ReliabilityBin
        The non-empty bins in increasing order, the records of the ``ECE`` metric's
        ``bins``.

    Examples
    --------
    >>> bins = binned_reliability([0, 1, 1, 1], [0.1, 0.2, 0.7, 0.9], n_bins=2)
    >>> [(b.lower, b.upper, b.weight) for b in bins]
    [(0.0, 0.5, 2.0), (0.5, 1.0, 2.0)]
    >>> [(round(b.mean_prediction, 3), b.mean_outcome) for b in bins]
    [(0.15, 0.5), (0.8, 1.0)]

    """
    owner = "binned_reliability"
    n_bins = V.check_int(n_bins, owner, "n_bins", minimum=1)
    strategy = V.check_choice(strategy, owner, "strategy", STRATEGIES)
    y_true, y_prob = V.labels_then_probs(y_true, y_prob, owner, probs, labels)
    p, y, w = V.check_forecast_events(y_true, y_prob, weights, owner)
    return _binned_points(p, y, w, n_bins, strategy)


def _binned_points(p, y, w, n_bins, strategy) -> tuple:
    """:func:`binned_reliability` on validated arrays."""
    edges = _bin_edges(p, w, n_bins, strategy)
    idx = edge_bins(p, edges)
    W = np.bincount(idx, weights=w, minlength=n_bins)
    SP = np.bincount(idx, weights=w * p, minlength=n_bins)
    SY = np.bincount(idx, weights=w * y, minlength=n_bins)
    return tuple(
        ReliabilityBin(
            float(edges[i]),
            float(edges[i + 1]),
            float(W[i]),
            min(1.0, float(SP[i] / W[i])),  # a mean of numbers <= 1 may round above 1
            float(SY[i] / W[i]),
        )
        for i in np.flatnonzero(W > 0).tolist()
    )


def _cells(p: np.ndarray, y: np.ndarray, w: np.ndarray):
    """Events sorted by forecast, and the distinct forecasts with their weights and sums."""
    order = np.argsort(p, kind="stable")
    p, y, w = p[order], y[order], w[order]
    starts = np.flatnonzero(np.r_[True, p[1:] != p[:-1]])
    xs = p[starts]
    W = np.add.reduceat(w, starts)
    S = np.add.reduceat(w * y, starts)
    return order, p, starts, xs, W, S


def _pav_blocks(xs, W, S) -> tuple[BlockView, ...]:
    """The PAV blocks of cells ``xs`` (sorted, distinct) of weights ``W`` and sums ``S``."""
    return tuple(
        BlockView(float(xs[a]), float(xs[b - 1]), float(s / w), float(w), 0, int(b - a))
        for a, b, w, s in pav_blocks(W, S)
    )


def corp_reliability(
    y_true=None, y_prob=None, weights=None, *, probs=None, labels=None
) -> tuple[BlockView, ...]:
    """The CORP reliability curve: the PAV (isotonic) recalibration of the forecasts.

    The non-decreasing function of the forecast that best fits the outcomes in the
    (weighted) least-squares sense, ties pooled by weighted mean, as scikit-learn's
    ``IsotonicRegression`` fits it. Returned as its level sets, the PAV blocks, in the
    format of :attr:`streamcal.OnlineIsotonic.blocks` (and of the ``CORP`` metric's
    ``recalibration``), so that a batch fit and a streaming state draw alike. Cost
    O(n log n).

    The arguments are ``(y_true, y_prob)``; the old order ``(probs, labels)`` still works
    for one release with a DeprecationWarning, recognised as by
    :func:`binned_reliability`.

    Parameters
    ----------
    y_true
        Binary outcomes (0, 1, False, True), a one-dimensional sequence.
    y_prob
        Forecast probabilities in [0, 1], same length.
    weights
        Optional non-negative event weights, same length (default: all 1); events of
        zero weight are dropped.
    probs, labels
        Deprecated names of ``y_prob`` and ``y_true``.

    Returns
    -------
    tuple of streamcal.core.pav.BlockView
        ``(score_min, score_max, value, weight, n_events, n_cells)`` per block, with
        strictly increasing values; ``n_events`` counts the events of positive weight.

    Examples
    --------
    >>> corp_reliability([0, 1, 0, 1, 1], [0.1, 0.3, 0.5, 0.7, 0.9])[1]
    BlockView(score_min=0.3, score_max=0.5, value=0.5, weight=2.0, n_events=2, n_cells=2)

    """
    owner = "corp_reliability"
    y_true, y_prob = V.labels_then_probs(y_true, y_prob, owner, probs, labels)
    p, y, w = V.check_forecast_events(y_true, y_prob, weights, owner)
    return _corp_blocks(p, y, w)


def _corp_blocks(p, y, w) -> tuple:
    """:func:`corp_reliability` on validated arrays."""
    _, p, starts, xs, W, S = _cells(p, y, w)
    counts = np.diff(np.r_[starts, len(p)])
    blocks = _pav_blocks(xs, W, S)
    out, i = [], 0
    for b in blocks:  # fill in n_events from the per-cell event counts
        out.append(b._replace(n_events=int(counts[i : i + b.n_cells].sum())))
        i += b.n_cells
    return tuple(out)


def _bernoulli_sums(p, w, rng, n_resamples, reduce, counts=None):
    """Yield ``reduce(sums)`` per chunk of resamples, ``sums[r, i]`` the weighted outcome
    drawn for entry ``i``: ``w * Bernoulli(p)`` (one uniform draw per entry), or with
    ``counts``, ``(w / counts) * Binomial(counts, p)`` (``counts`` events of equal weight
    behind the entry). Draws fill the ``(n_resamples, n)`` array row by row, so the
    chunking does not change them."""
    n = len(p)
    chunk = max(1, _CHUNK // max(n, 1))
    done = 0
    while done < n_resamples:
        r = min(chunk, n_resamples - done)
        if counts is None:
            draws = rng.random((r, n)) < p  # P(u < p) = p for u ~ U[0, 1)
            yield reduce(draws * w)
        else:
            yield reduce(rng.binomial(counts, p, size=(r, n)) * (w / counts))
        done += r


def consistency_band(
    probs,
    kind: str = "binned",
    *,
    n_bins: int = 10,
    strategy: str = "uniform",
    weights=None,
    level: float = 0.9,
    n_resamples: int = 500,
    seed: int | None = 0,
    counts=None,
) -> ConsistencyBand:
    """Pointwise band of the reliability curve of a calibrated forecaster with these forecasts.

    Resampling under the hypothesis of calibration: ``n_resamples`` times, draw outcomes
    ``y* ~ Bernoulli(x)`` for the same forecasts ``x`` (and weights), recompute the
    binned outcome rates (``"binned"``, with the bins of :func:`binned_reliability`) or
    the PAV recalibration (``"corp"``, evaluated at the distinct forecasts), and take
    the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles at each point (numpy's
    linear interpolation). Only the forecasts are needed, not the outcomes. Cost
    O(n_resamples * n) for the draws, plus one PAV fit per resample for ``"corp"``
    (O(n_resamples * n log n) in all).

    With ``counts``, entry ``i`` stands for ``counts[i]`` events forecast ``probs[i]``
    of total weight ``weights[i]`` (e.g. the cells of a ``CORP`` metric: one per
    distinct forecast): its resampled outcome sum is ``weights[i] / counts[i]`` times a
    ``Binomial(counts[i], probs[i])`` draw. With unit event weights this is the same
    distribution as resampling every event (exact); with unequal weights inside an
    entry it treats them as equal. The draws then differ from those without
    ``counts`` (binomial rather than uniform draws), for the same ``seed``.

    Parameters
    ----------
    probs
        Forecast probabilities in [0, 1], a one-dimensional sequence.
    kind
        ``"binned"`` or ``"corp"``.
    n_bins, strategy
        The bins, for ``"binned"`` (see :func:`binned_reliability`).
    weights
        Optional non-negative event weights (default: all 1); zero weights are dropped.
    level
        Nominal pointwise coverage, a real number in (0, 1).
    n_resamples
        Number of resamples, an int >= 1.
    seed
        Seed of the resampling (an int >= 0, or None for fresh entropy).
    counts
        Optional number of events behind each entry, ints >= 1, same length (default:
        one each); see above.

    Returns
    -------
    ConsistencyBand
        For ``"binned"``, ``x`` are the non-empty bins' mean forecasts (the points of
        :func:`binned_reliability`); for ``"corp"``, the distinct forecasts (at most
        1000 of them, spread evenly in rank, when there are more).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).uniform(size=500)
    >>> band = consistency_band(x, "binned", n_bins=5, n_resamples=200)
    >>> band.x.shape, band.level
    ((5,), 0.9)
    >>> bool(np.all((band.lower <= band.x) & (band.x <= band.upper)))
    True

    Distinct forecasts with their event counts (e.g. a metric's cells):

    >>> band = consistency_band([0.1, 0.5, 0.9], "corp", counts=[40, 20, 40], seed=1)
    >>> band.x.tolist(), bool(np.all(band.lower <= band.upper))
    ([0.1, 0.5, 0.9], True)

    """
    owner = "consistency_band"
    kind = V.check_choice(kind, owner, "kind", KINDS)
    n_bins = V.check_int(n_bins, owner, "n_bins", minimum=1)
    strategy = V.check_choice(strategy, owner, "strategy", STRATEGIES)
    level = V.check_level(level, owner)
    n_resamples = V.check_int(n_resamples, owner, "n_resamples", minimum=1)
    seed = V.check_int(seed, owner, "seed", minimum=0, allow_none=True)
    if counts is None:
        p, _, w = V.check_forecasts(probs, weights, owner)
        return _band(p, w, kind, n_bins, strategy, level, n_resamples, seed)
    p = V.check_scores_array(probs, owner, None, name="probs")
    c = _check_counts(counts, len(p), owner)
    w = c.astype(np.float64) if weights is None else None
    if w is None:
        w = V.check_weights_array(weights, len(p), owner, None, name="weights")
        bad = np.flatnonzero(w <= 0)
        if len(bad):
            raise ValueError(
                f"The 'weights' argument of {owner} must hold positive weights when "
                f"'counts' is given. Got {V.format_value(w[bad[0]].item())} at index "
                f"{bad[0]} instead."
            )
    return _band(p, w, kind, n_bins, strategy, level, n_resamples, seed, c)


def _check_counts(counts, n, owner) -> np.ndarray:
    """``counts`` as an int64 array of ``n`` entries >= 1."""
    domain = f"a sequence of {n} integers >= 1"
    if n == 0:
        raise ValueError(
            f"The 'probs' argument of {owner} must hold at least one forecast. Got an "
            "empty sequence instead."
        )
    try:
        a = np.asarray(counts)
    except (TypeError, ValueError):
        a = None
    if (
        a is None
        or a.ndim != 1
        or len(a) != n
        or not (a.dtype.kind in "iu" or (a.dtype.kind == "f" and np.all(a == np.round(a))))
    ):
        raise V.argument_error(TypeError, "counts", owner, None, domain, counts)
    bad = np.flatnonzero(~(a >= 1))
    if len(bad):
        raise V.argument_error(ValueError, "counts", owner, None, domain, a[bad[0]].item())
    return a.astype(np.int64)


def _band(
    p, w, kind, n_bins, strategy, level, n_resamples, seed, counts=None
) -> ConsistencyBand:
    """:func:`consistency_band` on validated arguments (``counts``: see there)."""
    rng = np.random.default_rng(seed)
    qs = ((1.0 - level) / 2.0, (1.0 + level) / 2.0)

    if kind == "binned":
        edges = _bin_edges(p, w, n_bins, strategy)
        idx = edge_bins(p, edges)
        W = np.bincount(idx, weights=w, minlength=n_bins)
        used = np.flatnonzero(W > 0)
        # events sorted by bin: each resample's bin sums are sums of runs
        order = np.argsort(idx, kind="stable")
        starts = np.searchsorted(idx[order], used)

        def rates_of(draws):  # draws in input order, one per event
            return np.add.reduceat(draws[:, order], starts, axis=1) / W[used]

        rates = np.concatenate(
            list(_bernoulli_sums(p, w, rng, n_resamples, rates_of, counts))
        )
        SP = np.bincount(idx, weights=w * p, minlength=n_bins)
        x = np.minimum(1.0, SP[used] / W[used])
        lo, hi = np.quantile(rates, qs, axis=0)
        return ConsistencyBand(x, lo, hi, level)

    from scipy.optimize import isotonic_regression  # slow to import: only when used

    order, _, starts, xs, W, _ = _cells(p, np.zeros(len(p)), w)
    m = len(xs)
    keep = (
        np.arange(m)
        if m <= _MAX_BAND_POINTS
        else np.unique(np.linspace(0, m - 1, _MAX_BAND_POINTS).round().astype(np.int64))
    )

    distinct = len(xs) == len(p) and bool(np.all(order == np.arange(len(p))))

    def fits(draws):  # draws in input order, one per event, as for "binned"
        # (forecasts already distinct and sorted, e.g. a metric's cells: no pooling)
        S = draws if distinct else np.add.reduceat(draws[:, order], starts, axis=1)
        return np.stack([isotonic_regression(s / W, weights=W).x[keep] for s in S])

    curves = np.concatenate(
        list(_bernoulli_sums(p, w, rng, n_resamples, fits, counts))
    )
    lo, hi = np.quantile(curves, qs, axis=0)
    return ConsistencyBand(xs[keep], lo, hi, level)


def consistency_band_from_bins(bins, level: float = 0.9) -> ConsistencyBand:
    """Binomial consistency band for binned points when only the bins are known.

    For a metric's state (per bin: weight and mean forecast, the forecasts themselves
    gone), the band at bin ``b`` is the central ``level`` interval of
    ``Binomial(n_b, pbar_b) / n_b`` with ``n_b = max(1, round(weight_b))`` events and
    ``pbar_b`` the bin's mean forecast. Among independent Bernoulli outcomes with mean
    forecast ``pbar_b``, equal forecasts spread the outcome rate the most (Hoeffding,
    1956), so this band is exact when the forecasts in a bin are equal and otherwise
    somewhat wider than the resampled band of :func:`consistency_band`. It assumes unit
    weights (the weight is the number of events); with decayed or other weights it is
    only indicative. Cost O(sum over bins of sqrt(n_b)): each quantile sums the
    binomial probabilities near the bin's mode (no scipy).

    Parameters
    ----------
    bins
        Records with fields ``weight`` and ``mean_prediction``
        (:class:`streamcal.metrics.ReliabilityBin`, or a binned metric's ``bins``);
        bins of zero weight are skipped.
    level
        Nominal coverage, a real number in (0, 1).

    Examples
    --------
    >>> band = consistency_band_from_bins([ReliabilityBin(0.0, 0.5, 100.0, 0.3, 0.28)])
    >>> band.x.tolist(), band.lower.tolist(), band.upper.tolist()
    ([0.3], [0.23], [0.38])

    """
    level = V.check_level(level, "consistency_band_from_bins")
    rows = [(b.mean_prediction, b.weight) for b in bins if b.weight > 0]
    x = np.array([r[0] for r in rows], dtype=np.float64)
    n = np.maximum(1.0, np.round([r[1] for r in rows]))
    lo = _binomial_quantile((1.0 - level) / 2.0, n, x) / n
    hi = _binomial_quantile((1.0 + level) / 2.0, n, x) / n
    return ConsistencyBand(x, lo, hi, level)


def _binomial_quantile(q: float, n: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The smallest integer k with P(Binomial(n, p) <= k) >= q, for q in (0, 1), counts
    n >= 1 (integers) and probabilities p in [0, 1]: ``scipy.stats.binom.ppf``, without
    scipy (whose import costs a third of a second of a report's start-up)."""
    n = np.asarray(n, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    n, p = np.broadcast_arrays(n, p)
    out = np.empty(n.shape)
    for i, (m, x) in enumerate(zip(n.ravel().tolist(), p.ravel().tolist())):
        out.flat[i] = _binomial_quantile_one(q, int(m), x)
    return out


def _binomial_quantile_one(q: float, n: int, p: float) -> float:
    """:func:`_binomial_quantile` of one count and probability. The probabilities of
    the counts within 14 standard deviations (plus 40) of the mode, relative to the
    mode's, are built by the ratio recurrence P(k + 1) / P(k) = (n - k) p / ((k + 1)
    (1 - p)) in log space, so that no factorial overflows; the mass left outside is
    below 1e-30, and a distribution function within 1e-12 of ``q`` counts as reaching
    it (the ties of exact arithmetic, e.g. n = 2, p = 1/2, q = 3/4). Cost O(window),
    at most about 28 sqrt(n p (1 - p)) + 80."""
    if p <= 0.0:
        return 0.0
    if p >= 1.0:
        return float(n)
    sd = math.sqrt(n * p * (1.0 - p))
    mode = min(n, max(0, math.floor((n + 1) * p)))
    lo = max(0, int(mode - 14.0 * sd - 40.0))
    hi = min(n, int(mode + 14.0 * sd + 40.0))
    r = math.log(p) - math.log1p(-p)
    up = np.arange(mode + 1, hi + 1, dtype=np.float64)  # log P(k) - log P(k - 1)
    down = np.arange(mode, lo, -1, dtype=np.float64)  # log P(k) - log P(k - 1)
    log_up = np.cumsum(np.log(n - up + 1.0) - np.log(up) + r)
    log_down = -np.cumsum(np.log(n - down + 1.0) - np.log(down) + r)  # k - 1 = mode - 1, ...
    rel = np.exp(np.concatenate([log_down[::-1], [0.0], log_up]))
    cdf = np.cumsum(rel) / rel.sum()
    k = int(np.searchsorted(cdf, q - 1e-12, side="left"))
    return float(lo + min(k, len(cdf) - 1))


def multiclass_views(
    y_true=None, y_prob=None, view: str = "confidence", classes=None, *, probs=None,
    labels=None,
) -> dict:
    """Binary views of multiclass forecasts, to draw with :func:`reliability_diagrams`.

    With ``P`` the ``(n, K)`` array of class probabilities and ``top`` the predicted
    class of each row (``argmax``, the first column on ties):

    - ``"confidence"``: one view, ``{"confidence": (y_true == top, P.max(1))}``: is
      the top probability the rate at which the top class is right?
    - ``"top-label"``: one view per predicted class ``k``, on the rows where ``k`` is
      predicted: ``(y_true == k, P[:, k])`` (top-label calibration, Gupta and Ramdas,
      2022); classes never predicted are left out;
    - ``"classwise"``: one view per class ``k``, on all rows: ``(y_true == k, P[:, k])``.

    Cost O(n K).

    The arguments are ``(y_true, y_prob)``, and so are the views. The old order
    ``(probs, labels)`` still works for one release with a DeprecationWarning: it is
    recognised by the keywords ``probs=`` / ``labels=``, or positionally when the first
    argument is two-dimensional (the probabilities) and the second is not. The views
    were ``(probs, labels)`` pairs before; :func:`reliability_diagrams` reads both.

    Parameters
    ----------
    y_true
        The ``n`` observed classes: indices ``0 .. K-1``, or the entries of ``classes``.
    y_prob
        Array-like of shape ``(n, K)``: probabilities in [0, 1] (rows are not required
        to sum to 1).
    view
        ``"confidence"``, ``"top-label"`` or ``"classwise"``.
    classes
        The class of each column (default ``range(K)``); also names the views.
    probs, labels
        Deprecated names of ``y_prob`` and ``y_true``.

    Returns
    -------
    dict
        View name (``"confidence"``, or ``"class <c>"`` / ``"predicted <c>"``) ->
        ``(y_true, y_prob)``, float arrays (``y_true`` 0 or 1).

    Examples
    --------
    >>> P = [[0.7, 0.2, 0.1], [0.1, 0.6, 0.3], [0.5, 0.1, 0.4]]
    >>> views = multiclass_views(["a", "b", "c"], P, "top-label", classes=["a", "b", "c"])
    >>> {k: (v[0].tolist(), v[1].tolist()) for k, v in views.items()}
    {'predicted a': ([1.0, 0.0], [0.7, 0.5]), 'predicted b': ([1.0], [0.6])}
    >>> conf = multiclass_views(["a", "b", "c"], P, classes=["a", "b", "c"])["confidence"]
    >>> conf[0].tolist(), conf[1].tolist()
    ([1.0, 1.0, 0.0], [0.7, 0.6, 0.5])

    """
    owner = "multiclass_views"
    view = V.check_choice(view, owner, "view", VIEWS)
    if probs is not None or labels is not None:
        y_true, y_prob = V.labels_then_probs(y_true, y_prob, owner, probs, labels)
    elif _is_2d(y_true) and not _is_2d(y_prob):
        warnings.warn(
            f"{owner} takes (y_true, y_prob): the first argument is two-dimensional (the "
            "probabilities), so they are read in the old order (probs, labels), which "
            "is deprecated and will stop working in the next release.",
            DeprecationWarning,
            stacklevel=2,
        )
        y_true, y_prob = y_prob, y_true
    labels = y_true
    P = np.asarray(y_prob, dtype=np.float64)
    if P.ndim != 2 or P.shape[0] == 0 or P.shape[1] < 2:
        raise ValueError(
            f"The 'y_prob' argument of {owner} must be an array of shape (n, K) with n >= 1 "
            f"and K >= 2. Got an array of shape {P.shape} instead."
        )
    V.check_scores_array(P.ravel(), owner, None, name="y_prob")
    n, K = P.shape
    classes = list(range(K)) if classes is None else list(classes)
    if len(classes) != K or len(set(classes)) != K:
        raise ValueError(
            f"The 'classes' argument of {owner} must list {K} distinct classes, one per "
            f"column of 'y_prob'. Got {V.format_value(classes)} instead."
        )
    position = {c: k for k, c in enumerate(classes)}
    labels = list(labels)
    if len(labels) != n:
        raise ValueError(
            f"The 'y_true' argument of {owner} must be a sequence of the same length as "
            f"'y_prob' ({n}). Got length {len(labels)} instead."
        )
    try:
        y = np.array([position[c] for c in labels], dtype=np.int64)
    except (KeyError, TypeError):
        bad = next(c for c in labels if not _hashable_in(c, position))
        raise V.argument_error(
            ValueError,
            "y_true",
            owner,
            None,
            f"a sequence of classes among {classes}",
            bad,
        ) from None
    top = P.argmax(axis=1)
    if view == "confidence":
        return {"confidence": ((y == top).astype(np.float64), P[np.arange(n), top])}
    out = {}
    for k, c in enumerate(classes):
        if view == "classwise":
            out[f"class {c}"] = ((y == k).astype(np.float64), P[:, k].copy())
        else:
            rows = top == k
            if rows.any():
                out[f"predicted {c}"] = ((y[rows] == k).astype(np.float64), P[rows, k])
    return out


def _is_2d(values) -> bool:
    try:
        return np.ndim(values) == 2
    except (TypeError, ValueError):
        return False


def _hashable_in(c, mapping) -> bool:
    try:
        return c in mapping
    except TypeError:
        return False
