"""The power-of-two forgetting clock of every object that forgets by half-life.

With ``half_life = h``, an event of weight ``w`` weighs ``w * 2 ** (-age / h)``, its age
counted in the events that came after it. Rather than decaying every stored weight at
each event, an object stores the event at count ``t`` (from 0) with the *growing* weight
``w * 2 ** e``, ``e = clock_exponent(t, t_ref, h, phase) = (t - t_ref) / h + phase``:
the weights already stored never change, and the ratio of two stored weights is exactly
the ratio of their decayed weights. :func:`weight_scale` turns stored weights back into
weights relative to the newest event. Before the stored weights grow too large, a
*renormalisation* divides all of them by ``2 ** shift`` (exact: a power of two) and moves
the clock's reference to now (:func:`renormalised_clock`: ``t_ref = t``, ``phase = e -
shift``), which keeps ``e`` small; ``(t_ref, phase)`` is what a snapshot records.

The objects that forget this way are :class:`streamcal.metrics.ECE` (the compiled store
``streamcal.metrics._kernels.Binned``) and :class:`streamcal.OnlineIsotonic` /
:class:`streamcal.VennAbers` (``streamcal.core._isotonic_stream.IsotonicStream``). Their
per-event paths are compiled and inline ``clock_exponent`` with a comment naming it;
the renormalisation and the weight scale call the functions here.

When to renormalise, and what to forget then, differ between the two (two constants):

- :data:`METRIC_RENORM_EXPONENT` (64): the metrics renormalise on the clock alone, once
  ``e`` reaches 64 (every 64 half-lives), by ``shift = floor(e)``, and drop what weighs
  less than ``2 ** -64`` of the total, below the resolution of any float sum over the
  state: that bounds the memory of equal-mass ECE to the distinct forecasts of roughly
  the last 130 half-lives.
- :data:`ISOTONIC_RENORM_EXPONENT` (512): the isotonic stream keeps every block sum a
  normal double for user weights anywhere in the double range (1e-300 as well as
  1e300), so it renormalises on the data, when a new stored weight's binary exponent
  would leave ``[-969, 511]`` (below ``2 ** 512``), and forgets only what weighs less
  than ``2 ** -ISOTONIC_FORGET_EXPONENT`` (``2 ** -1000``) of a new unit-weight event
  (window events older than that many half-lives leave the window).

Pure Python, no river.
"""

from __future__ import annotations

__all__ = [
    "ISOTONIC_FORGET_EXPONENT",
    "ISOTONIC_RENORM_EXPONENT",
    "METRIC_RENORM_EXPONENT",
    "MIN_HALF_LIFE",
    "clock_exponent",
    "renormalised_clock",
    "weight_scale",
]

#: metrics renormalise when the clock exponent reaches this (and forget below 2 ** -it)
METRIC_RENORM_EXPONENT = 64
#: the isotonic stream renormalises when a new stored weight would reach 2 ** this
ISOTONIC_RENORM_EXPONENT = 512
#: the isotonic stream may forget what weighs less than 2 ** -this of a new event
ISOTONIC_FORGET_EXPONENT = 1000
#: the smallest half-life a clock takes: it advances ``1 / half_life`` binary exponents
#: per event, renormalised by an integer shift (the isotonic stream's an int64), which
#: must absorb one step (below about 1.1e-19 the isotonic clock's phase grew by ``1 /
#: half_life`` per event, up to infinity below 1e-308, where ECE's sums were NaN); at
#: 1e-18 an event already weighs ``2 ** -1e18`` of the next: only the newest counts
MIN_HALF_LIFE = 1e-18


def clock_exponent(t: int, t_ref: int, half_life: float, phase: float) -> float:
    """The exponent ``e = (t - t_ref) / half_life + phase``: the event at count ``t``
    is stored with weight ``w * 2 ** e``. O(1).

    Examples
    --------
    >>> clock_exponent(10, 0, 5.0, 0.0)
    2.0
    >>> clock_exponent(70, 64, 1.0, 0.0)      # after a renormalisation at t = 64
    6.0

    """
    return (t - t_ref) / half_life + phase


def weight_scale(t: int, t_ref: int, half_life: float, phase: float) -> float:
    """The factor turning stored weights into weights relative to the newest event,
    ``t`` events having been counted: ``2 ** -clock_exponent(t - 1, ...)``. O(1).

    Examples
    --------
    >>> weight_scale(11, 0, 5.0, 0.0)         # the newest event was stored at 2 ** 2
    0.25

    """
    return 2.0 ** -clock_exponent(t - 1, t_ref, half_life, phase)


def renormalised_clock(t: int, e: float, shift) -> tuple[int, float]:
    """The clock ``(t_ref, phase)`` after every stored weight is divided by ``2 **
    shift`` at count ``t``, when the clock exponent was ``e``: ``(t, e - shift)``, so
    that :func:`clock_exponent` at ``t`` is ``e - shift``. O(1).

    Examples
    --------
    >>> renormalised_clock(64, 64.25, 64)
    (64, 0.25)

    """
    return t, e - shift
