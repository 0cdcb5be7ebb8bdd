"""A prior on a block or bin mean: how isotonic-type and binning calibrators keep their
forecasts off 0 and 1 until the data have earned it.

The one idea, shared by every calibrator with a ``prior_strength`` parameter: a block of
events (an isotonic block, a histogram bin) with weighted label sum ``S`` and total
weight ``W`` predicts not its mean ``S / W`` but the posterior mean of a Beta prior of
strength ``a`` and mean ``m``::

    (S + a m) / (W + a)

that is, the block's mean after one *pseudo-event* of weight ``a`` (in units of an
event's weight: ``a = 1`` weighs what one unit-weight event weighs) and label ``m`` has
joined it (:func:`posterior_mean`). With ``a > 0`` and ``0 < m < 1`` the forecast lies
strictly inside (0, 1) whatever the data, and it tends to ``S / W`` as the block's
weight grows: a block of 3 events with no rain says ``a m / (3 + a)``, one of 3,000
says ``a m / (3000 + a)``. ``a = 0`` is the plain mean. The fitted blocks and bins are
never changed; only what a prediction reads from them.

Where the pseudo-event goes, per calibrator:

- **Bins** (:class:`streamcal.HistogramBinning`): into the query's bin, with ``m`` the
  bin's midpoint (the score the bin stands for: a score-centred prior). The bins are
  fixed, so this is :func:`posterior_mean` of the bin, computed there as an exact
  rational and rounded once.
- **Isotonic blocks** (:class:`streamcal.OnlineIsotonic`, and :class:`streamcal.TopLabel`
  / :class:`streamcal.ClassWise` over it): into the cell the step read-out uses (the
  largest key at or below the query, the first key below all of them), with
  ``m = 1/2`` (:data:`ISOTONIC_PRIOR_MEAN`); the prediction is the isotonic fit there of
  the events held *plus* the pseudo-event, the store left exactly as it was. That is
  :func:`posterior_mean` of the block the pseudo-event ends up in once PAV has run with
  it: the query's block, or the part of it at and above the query's cell when the
  pseudo-event splits it, pooled further with neighbours where it would otherwise be
  out of order. Shrinking every block of the exact fit on its own would not be
  monotone (a light block of 0s shrunk towards 1/2 overtakes a heavy block of rate
  0.01 above it); pooling the pseudo-event is, by the min-max formula of isotonic
  regression: for queries ``s < t`` at cells ``c(s) <= c(t)``,
  ``g(t) = max_{u <= c(t)} min_{v >= c(t)} mean[u, v] >= max_{u <= c(s)} min_{v >=
  c(t)} mean[u, v]``, and every range ``[u, v]`` with ``u <= c(s)``, ``v >= c(t)``
  holds the pseudo-event in both fits, so the right side is at least ``g(s)``. (The
  same holds for any prior mean non-decreasing in the score.) Venn-ABERS's pair is the
  same construction with ``a = 1`` and ``m = 0`` and ``1``, placed at the query.
- **Pieces of a fitted map** (:class:`streamcal.FIR`, :class:`streamcal.NAFIR`,
  :class:`streamcal.OneVsRestIsotonic`, refitted on a window): into the query's piece
  (level set) of the map, ``m = 1/2``, pooled with neighbouring pieces where the order
  requires (:func:`prior_piece_value`, on each piece's weight and label sum, which
  :class:`streamcal.core.fir.IsotonicMap` records). The same construction as for
  isotonic blocks with the pieces as cells (the pseudo-event cannot split a piece: the
  map keeps no finer cells), and monotone by the same argument. NA-FIR's values are
  not means and its ``g`` is fixed only up to a common factor: the pseudo-event pools
  with each piece's value (weighted by its pairs) and ``m`` is read in the fit's units,
  ``1/2 * sum(v W) / sum(S)`` (1/2 for FIR), at most 1.
- **Regions of the simplex** (:class:`streamcal.MulticlassIRP`,
  :func:`streamcal.core.irp.fit_multiclass_irp`): into every region of the fit, with
  the label vector ``m = 1/K`` per class (the centre of the simplex; 1/2 and 1/2 for
  two classes, as for isotonic blocks), so a region is valued at
  :func:`posterior_mean` ``(S_k + a / K) / (W + a)`` for class ``k``. The pull depends
  on the region's weight, so it could undo the fit's ROC monotony: the fit checks
  monotony on these values (:mod:`streamcal.core.irp_simplex`), and the values are in
  the fit itself, not a read-out of it.
- **Regions of the score line** (:class:`streamcal.IRP`,
  :func:`streamcal.core.irp.fit_irp`): the same as for the simplex with two classes,
  ``m = 1/2``: a region is valued at :func:`posterior_mean` ``(S + a / 2) / (W + a)``
  in the fit, and a cut is allowed only while these values stay non-decreasing
  (:mod:`streamcal.core.irp_interval`).

Why ``m = 1/2`` for isotonic blocks, and the defaults (``simulations/priors.py``, table
in ``simulations/README.md``), on the bundled Newark log and the hourly rain logs of
Newark, JFK and LaGuardia (rain in about 7% of hours):

- at every strength from 0.5 to 2, centring the pseudo-event on 1/2 gave a lower log
  loss than centring it on the running base rate or on the query's score, on every
  log, and the lowest isotonic log loss of all on three logs of four (LaGuardia:
  score-centred with ``a = 8``, 0.1273 against 0.1281); Brier scores within 0.0007.
  The base rate gave a lower ECE on the airport logs (0.0045 to 0.0065 against 0.0072
  to 0.0112) but a higher log loss everywhere. The data are hourly weather, dependent in time and
  drifting, so the empirical zeros of a block overstate certainty, and the rare rain
  hour in a "never rains" block is what the log loss punishes; 1/2 hedges it most.
  A constant centre also keeps the guarantees simple: strictly inside (0, 1) always
  (a score-centred prior says 1.0 at a score of exactly 1), and monotone.
- ``OnlineIsotonic`` keeps ``a = 0`` by default (the exact fit: its contract with
  scikit-learn); ``a = 1`` or ``2`` cut its log loss on the bundled log from 0.196
  (worse than the raw model's 0.151) to 0.128 / 0.127.
- ``FIR``, ``NAFIR`` and ``OneVsRestIsotonic`` default to ``a = 2``: on Covertype
  (``simulations/priors_multiclass.py``; K = 2, 3, 4; one fit on 500 rows scored on
  1,000, and prequential with the defaults) it had the lowest or within 0.005 of the
  lowest negative log-likelihood of the strengths 0 to 8 for each of the three, and
  left at most one forecast per run giving the observed class less than 1e-3 (up to
  10 of 1,000 without a prior).
- ``MulticlassIRP`` defaults to ``a = 1``: the lowest mean negative log-likelihood of
  the strengths 0 to 8 on Covertype (as for FIR) and on the five streams of
  ``simulations/multiclass_compare.py``; the paper's fit (``a = 0``) gave the observed
  class probability exactly 0 on 7 to 16 scored events per stream, any ``a > 0`` on
  none. ``TopLabel`` / ``ClassWise`` add no prior of their own; their short names
  ``top_label`` and ``class_wise`` wrap ``OnlineIsotonic(prior_strength=2)`` and
  ``OnlineIsotonic(prior_strength=0.5)``, the lowest mean log loss on those streams
  (top-label: 2 within 0.0003 of 4's).
- ``IRP`` defaults to ``a = 4``: the plain windowed fit forecast 0 or 1 in 1,718 to
  3,632 hours per log (log loss 0.26 to 0.34); ``a = 4`` is within 0.0023 of the
  lowest log loss of the strengths 0 to 8 on every log, its Brier score within 0.0002
  and its ECE within 0.0036 of the best (``a = 8``, lowest mean log loss by 0.0004,
  had an ECE up to 0.0074 worse on the airport logs).
- ``HistogramBinning`` defaults to ``a = 2``: every strength from 0.5 to 8 cut its log
  loss from 0.164-0.169 to 0.129-0.135; at 2 it is within 0.0007 of the best strength
  on every log, its ECE within 0.002 and its Brier score within 0.0001.
"""

from __future__ import annotations

__all__ = ["ISOTONIC_PRIOR_MEAN", "posterior_mean", "prior_piece_value", "prior_piece_values"]

#: The prior mean of an isotonic block (the label of the pseudo-event).
ISOTONIC_PRIOR_MEAN = 0.5


def posterior_mean(
    label_sum: float, weight: float, prior_strength: float, prior_mean: float
) -> float:
    """The mean of a block (or bin) of weighted label sum ``label_sum`` and total weight
    ``weight`` under a Beta prior of strength ``prior_strength`` and mean
    ``prior_mean``: ``(S + a m) / (W + a)``. O(1).

    Equivalently, the block's mean once a pseudo-event of weight ``a`` and label ``m``
    has joined it; the Beta(``a m``, ``a (1 - m)``) prior's posterior mean given ``S``
    successes in ``W`` trials. With ``a > 0`` and ``0 < m < 1`` it lies strictly
    inside (0, 1); with ``a = 0`` it is ``S / W`` (``W > 0`` then).

    Parameters
    ----------
    label_sum
        ``S``, the weighted label sum, ``0 <= S <= W``.
    weight
        ``W >= 0``, the block's total weight.
    prior_strength
        ``a >= 0``, in units of an event's weight.
    prior_mean
        ``m`` in [0, 1].

    Examples
    --------
    >>> posterior_mean(0.0, 3.0, 1.0, 0.5)      # 3 dry hours: 0.5 / 4, not 0
    0.125
    >>> posterior_mean(0.0, 3000.0, 1.0, 0.5) < 1e-3
    True
    >>> posterior_mean(2.0, 4.0, 0.0, 0.5)      # no prior: the mean
    0.5

    """
    return (label_sum + prior_strength * prior_mean) / (weight + prior_strength)


def prior_piece_value(
    weights, sums, i: int, prior_strength: float, prior_mean: float
) -> float:
    """The isotonic value at piece ``i`` once a pseudo-event of weight
    ``prior_strength`` and label ``prior_mean`` has joined that piece: the prior of
    :mod:`streamcal.core.prior` pooled into a fitted map's pieces, as
    :class:`streamcal.calibrators.OnlineIsotonic` pools it into its cells.

    ``weights`` and ``sums`` are the pieces' total weights (> 0) and weighted label
    sums, in score order, with strictly increasing means (an isotonic fit's level
    sets). The pseudo-event only moves piece ``i``'s mean towards ``prior_mean``, so the
    fit with it pools piece ``i`` with its left neighbours while they lie above it (its
    mean fell) or with its right neighbours while they lie below it (its mean rose);
    the value is the pooled block's :func:`posterior_mean`. By the
    min-max formula of isotonic regression the value is non-decreasing in ``i`` (see
    the module docstring), and strictly inside (0, 1) when ``prior_strength > 0``
    and ``0 < prior_mean < 1``; ``prior_strength = 0`` gives piece ``i``'s mean.
    O(pieces) at worst.

    Examples
    --------
    >>> prior_piece_value([3.0, 5.0], [0.0, 5.0], 0, 1.0, 0.5)   # 3 zeros: 0.5 / 4
    0.125
    >>> round(prior_piece_value([1.0, 1.0], [0.4, 0.5], 1, 2.0, 0.0), 12)  # 0.5/3 < 0.4: pooled
    0.225

    """
    W = weights[i] + prior_strength
    S = sums[i] + prior_strength * prior_mean
    lo = hi = i
    n = len(weights)
    while True:
        if lo > 0 and sums[lo - 1] * W > S * weights[lo - 1]:
            lo -= 1
            W += weights[lo]
            S += sums[lo]
        elif hi + 1 < n and sums[hi + 1] * W < S * weights[hi + 1]:
            hi += 1
            W += weights[hi]
            S += sums[hi]
        else:
            return S / W


def prior_piece_values(
    weights, sums, prior_strength: float, prior_mean: float
) -> list[float]:
    """:func:`prior_piece_value` at every piece, in score order: a fitted map's values
    under the prior (non-decreasing; ties where the pseudo-event pools pieces). Each
    piece costs O(1) plus the neighbours it pools with, O(pieces ** 2) at worst.

    Examples
    --------
    >>> prior_piece_values([3.0, 5.0], [0.0, 5.0], 1.0, 0.5)
    [0.125, 0.9166666666666666]
    >>> prior_piece_values([3.0, 5.0], [0.0, 5.0], 0.0, 0.5)   # no prior: the means
    [0.0, 1.0]

    """
    return [
        prior_piece_value(weights, sums, i, prior_strength, prior_mean)
        for i in range(len(weights))
    ]
