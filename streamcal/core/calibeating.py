"""Cores of calibeating: per-bin outcome statistics, Foster's epsilon-calibrated game,
exponential weights, and a counter-based uniform generator. Plain Python, no river.

Calibeating (Foster and Hart, "Calibeating: beating forecasters at their own game",
Theoretical Economics 18, 2023; Gupta, thesis proposal 2022, section 3.1) keeps, for the
bins defined by an expert's forecast, statistics of the outcomes seen in each bin:

- :class:`BinOutcomes`: the weighted outcome sum and weight of every bin (the tracking
  forecast is the running mean of the outcomes in the expert's current bin);
- :class:`FosterGame`: Foster's (1999) epsilon-calibrated randomised forecaster on a
  grid of ``n`` cells, run once (no expert) or once per expert bin (hedging);
- :class:`ExponentialWeights`: the exponentially weighted average of several experts'
  forecasts under the Brier loss (the meta-expert of multi-calibeating);
- :func:`uniform`: the uniform draw of event ``t`` under a seed, a pure function of
  ``(seed, t)`` (SplitMix64), so that a randomised forecaster's prediction is a
  function of its state.

Bins and cells are the ``n`` equal-width intervals of [0, 1]: the index of ``x`` is
``floor(n * x)`` computed in floating point, so index ``i`` holds ``[i/n, (i+1)/n)`` and
1.0 falls in the last one (:func:`bin_index`, an alias of
:func:`streamcal.core.bins.floor_bin`).

The per-event code is compiled (``_calibeating.pyx``): the classes here are the
compiled ones, documented here, and :func:`uniform` calls them.
The per-event state machines of the calibeaters (``_calibeating_kernels.pyx``) are
re-exported here for the shells of :mod:`streamcal.calibrators`.
"""

from __future__ import annotations

from streamcal.core import _calibeating as _c
from streamcal.core.bins import floor_bin
# for the shells of streamcal.calibrators (not in __all__: no documented API)
from streamcal.core._calibeating import joint_bin  # noqa: F401
from streamcal.core._calibeating_kernels import (  # noqa: F401
    FosterKernel,
    HedgingKernel,
    TrackingKernel,
)

# floor_bin without a Python frame (the compiled twin, tests/test_core_bins.py),
# for per-event callers (MultiCalibeater)
bin_index_compiled = _c.bin_index

__all__ = [
    "BinOutcomes",
    "ExponentialWeights",
    "FosterGame",
    "bin_index",
    "uniform",
]

def uniform(seed: int, t: int) -> float:
    """The ``t``-th output (from 0) of SplitMix64 seeded with ``seed``, as a float in [0, 1).

    SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
    OOPSLA 2014) is counter-based: its ``t``-th output is a bijective mix of
    ``seed + (t + 1) * 0x9E3779B97F4A7C15`` (mod 2**64), so no generator state needs
    to be stored or advanced. The top 53 bits give the float. Cost O(1).

    Examples
    --------
    >>> uniform(0, 0)           # the first output of SplitMix64 seeded with 0
    0.8833108082136426
    >>> uniform(0, 0) == uniform(0, 0) != uniform(0, 1)
    True

    """
    return _c.uniform(seed, t)


#: the bin rule of calibeating, ``min(floor(n * x), n - 1)``: its home is
#: :func:`streamcal.core.bins.floor_bin` (this name is kept)
bin_index = floor_bin


class BinOutcomes(_c.BinOutcomes):
    """Weighted outcome statistics of bins identified by integer keys (sparse).

    For each key seen with a positive weight the store holds ``(weight, ysum)``: the
    total weight of the events of the bin and their weighted outcome sum. Zero weights
    are not stored. Memory is O(bins seen); every operation is O(1).

    Methods: ``add(key, y, w)`` (an outcome ``y`` in [0, 1] of weight ``w >= 0``),
    ``add_sums(key, weight, ysum)`` (a batch's sums), ``get(key)`` (``(weight, ysum)``,
    zeros for a bin never seen), ``mean(key, prior, prior_weight)`` (``(ysum +
    prior_weight * prior) / (weight + prior_weight)``, or ``prior`` for a bin never
    seen), ``items()`` (``(key, weight, ysum)``, keys increasing), ``to_lists()`` /
    ``from_lists(rows, dense=0)`` (JSON-safe rows in order of first arrival, so that a
    restored store is identical), ``len()``.

    Parameters
    ----------
    dense
        Keys in ``[0, dense)`` are found through an array (the ``n_bins`` bins of one
        forecast), others through a dict (the joint bins of several); 0 by default.

    Invariants (:meth:`_check`): for every stored bin, ``weight > 0`` is finite and
    ``0 <= ysum <= weight`` (outcomes are in [0, 1]), up to rounding; every key has
    one slot.

    Examples
    --------
    >>> st = BinOutcomes()
    >>> st.add(3, 1.0, 1.0)
    >>> st.add(3, 0.0, 3.0)
    >>> st.get(3), st.get(4)
    ((4.0, 1.0), (0.0, 0.0))
    >>> st.mean(3, prior=0.5, prior_weight=0.0), st.mean(3, prior=0.5, prior_weight=1.0)
    (0.25, 0.3)
    >>> st.mean(4, prior=0.7, prior_weight=0.0)      # an empty bin: the prior point
    0.7
    >>> st.add(1, 1.0, 0.5)
    >>> st.to_lists(), st.items()
    ([[3, 4.0, 1.0], [1, 0.5, 0.5]], [(1, 0.5, 0.5), (3, 4.0, 1.0)])

    """

    __slots__ = ()


class FosterGame(_c.FosterGame):
    """Foster's (1999) epsilon-calibrated forecaster on ``n`` cells of width ``1/n``.

    Cell ``i`` is the interval ``[i/n, (i+1)/n]`` and the forecaster announces its
    midpoint ``m_i = (i + 1/2) / n``; ``epsilon = 1/n``. After the events so far, let
    ``N_i`` be the total weight of the events on which cell ``i`` was played and
    ``S_i`` their weighted outcome sum, so that ``ybar_i = S_i / N_i`` is the frequency
    of the outcome when ``m_i`` was forecast. Cell ``i`` is *calibrated* when
    ``N_i = 0`` or ``ybar_i`` lies in the cell, ``|ybar_i - m_i| <= epsilon / 2``.
    Its violations, scaled by ``n`` so that they are exact with integer weights, are

    - ``up_i = n * S_i - (i + 1) * N_i`` (outcomes too frequent: positive when
      ``ybar_i > (i+1)/n``),
    - ``down_i = i * N_i - n * S_i`` (too rare: positive when ``ybar_i < i/n``);

    ``(up_i)+ / (n * W)`` and ``(down_i)+ / (n * W)`` (``W`` the total weight) are the
    frequency-weighted distances ``(N_i / W) * dist(ybar_i, cell i)``; their sum over
    the cells is the *epsilon-calibration error* (:meth:`calibration_error`).

    The strategy for the next event (:meth:`strategy`), given a preferred point
    ``prefer`` in [0, 1]:

    1. if some cell is calibrated, play the calibrated cell whose midpoint is nearest
       to ``prefer``: the smallest ``|i + 1/2 - n * prefer|``, with ``n * prefer``
       rounded to floating point as in :func:`bin_index`, ties to the higher index (so
       the cell holding ``prefer`` by the edge rule of :func:`bin_index` comes first);
    2. otherwise cell 0 has ``up > 0`` and cell ``n - 1`` has ``down > 0`` (every
       uncalibrated cell has exactly one positive violation, as ``up + down = -N < 0``),
       so some adjacent pair has ``up_i > 0`` and ``down_{i+1} > 0``; take the pair
       whose common edge is nearest, the smallest ``|i + 1 - n * prefer|`` (ties to
       the lower), and
       play ``m_i`` with probability ``down_{i+1} / (up_i + down_{i+1})``, ``m_{i+1}``
       with probability ``up_i / (up_i + down_{i+1})``: each point with the other
       point's violation.

    Why it is calibrated (Blackwell approachability; Foster 1999): with the potential
    ``Phi = sum_i (up_i)+ ** 2 + (down_i)+ ** 2``, an event ``(y, w)`` played on cell
    ``j`` changes ``up_j`` by ``w * (n y - (j+1))`` and ``down_j`` by
    ``w * (j - n y)``. In case 1 the played cell has no positive violation, and in
    case 2 the expected first-order change is ``w * (n y - (i+1)) * (p_i up_i -
    p_{i+1} down_{i+1}) = 0`` for *either* outcome, so whatever nature does, even
    knowing the mixed strategy, ``E[Phi] <= sum_t w_t**2 * max_y((n y - j - 1)**2 +
    (j - n y)**2) <= 2 n**2 sum_t w_t**2``. By Cauchy-Schwarz (at most one violation
    per cell is positive) the epsilon-calibration error is at most
    ``sqrt(n * Phi) / (n * W)``, so in expectation at most
    ``sqrt(2 n sum_t w_t**2) / W`` (``sqrt(2 n / T)`` with ``T`` unit weights). Foster
    and Hart's calibration score of the midpoints, ``K = sum_i (N_i/W) (m_i -
    ybar_i)**2``, is then at most ``epsilon**2 / 4 + (1 + epsilon) * error``.

    Cost: :meth:`strategy` O(n), :meth:`play` O(1).

    Examples
    --------
    >>> g = FosterGame(10)
    >>> g.strategy(prefer=0.3)       # nothing played: every cell is calibrated
    (3, 3, 1.0)
    >>> g.play(3, 1.0)               # cell 3 saw rain: ybar_3 = 1 > 0.4
    >>> g.strategy(prefer=0.3)       # the nearest calibrated cell
    (2, 2, 1.0)
    >>> for i in range(10):          # every cell played once, rain on cells 0-5 only
    ...     g.play(i, 1.0 if i < 6 else 0.0)
    >>> g.calibrated(3), g.calibrated(5), g.calibrated(6)
    (False, False, False)
    >>> g.violations(5), g.violations(6)
    ((4.0, -5.0), (-7.0, 6.0))
    >>> g.strategy(prefer=0.3)       # hedge: 0.55 with probability 6 / (4 + 6)
    (5, 6, 0.6)

    """

    __slots__ = ()


class ExponentialWeights(_c.ExponentialWeights):
    """Exponentially weighted average of ``n`` experts' forecasts under the Brier loss.

    Expert ``k`` has cumulative loss ``L_k = sum_t w_t (x_{k,t} - y_t) ** 2`` and weight
    ``exp(-eta * L_k)`` (computed as ``exp(-eta * (L_k - min L))`` so it never
    underflows to all zeros); the aggregate forecast is the weighted mean of the
    experts' forecasts. The squared loss on [0, 1] is ``eta``-exp-concave for
    ``eta <= 1/2``, so with ``eta = 1/2`` and weights ``w_t <= 1`` the aggregate's
    cumulative Brier loss exceeds the best expert's by at most ``ln(n) / eta = 2 ln n``
    (Kivinen and Warmuth 1999; Cesa-Bianchi and Lugosi 2006, section 3.3). Cost O(n)
    per call.

    Methods: ``aggregate(forecasts)`` (the weighted mean of the experts' forecasts,
    clipped to [0, 1]), ``update(forecasts, y, w=1.0)`` (add each expert's weighted
    Brier loss), ``weights()`` (normalised, summing to 1); ``losses`` is the list of
    the cumulative losses (assignable, to restore a state).

    Examples
    --------
    >>> ew = ExponentialWeights(2, learning_rate=0.5)
    >>> ew.aggregate((0.2, 0.8))
    0.5
    >>> for _ in range(20):
    ...     ew.update((0.2, 0.8), 1.0)
    >>> [round(v, 4) for v in ew.weights()]       # the second expert is better
    [0.0025, 0.9975]

    """

    __slots__ = ()
