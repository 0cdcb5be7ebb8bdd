"""What the calibeating shells share: the randomised forecast type, the parameter
checks, the seed draw and the compiled-kernel plumbing (:class:`_Compiled`).

The shells are in :mod:`streamcal.calibrators.calibeating` (tracking and hedging),
:mod:`streamcal.calibrators.foster` (Foster's forecaster alone) and
:mod:`streamcal.calibrators.multi_calibeating` (several experts).
"""

from __future__ import annotations

import math
import os
import typing

import numpy as np

from streamcal import _validation as V
from streamcal._snapshot import restored_on_error
from streamcal.base import BinaryCalibrator, takes_float_score

__all__ = ["MixedForecast", "sums_within"]


def sums_within(w, room: float, held: float = 0.0) -> bool:
    """Whether ``held`` plus the weights ``w`` stays within ``room``, summed exactly (a
    sum past the largest double does not: ``math.fsum`` raises OverflowError there)."""
    try:
        return held + math.fsum(w) <= room
    except OverflowError:
        return False


class MixedForecast(typing.NamedTuple):
    """A randomised forecast: ``low`` with probability ``p_low``, ``high`` with ``p_high``.

    A deterministic forecast has ``low == high``, ``p_low == 1.0`` and ``p_high == 0.0``.

    Examples
    --------
    >>> m = MixedForecast(0.55, 0.6, 0.65, 0.4)
    >>> round(m.mean, 10)
    0.59

    """

    low: float
    p_low: float
    high: float
    p_high: float

    @property
    def mean(self) -> float:
        """The expected forecast ``p_low * low + p_high * high``."""
        return self.p_low * self.low + self.p_high * self.high


def _check_n_bins(owner, n_bins):
    V.check_param(
        owner, "n_bins", n_bins, V.is_integer(n_bins) and n_bins >= 1, "an int >= 1"
    )


def _check_seed(owner, seed):
    V.check_optional_int_param(owner, "seed", seed, 0)


def _check_prior_weight(owner, prior_weight):
    """The checked ``prior_weight`` in the form a constructor stores."""
    return V.check_nonnegative_param(owner, "prior_weight", prior_weight)


def _check_base(owner, base):
    ok = base is None or takes_float_score(base)
    V.check_param(owner, "base", base, ok, "a calibrator taking a float score, or None")


def _draw_seed(seed):
    return int.from_bytes(os.urandom(8), "little") if seed is None else int(seed)


def _grid_forecast(low: int, high: int, p_low: float, n: int) -> MixedForecast:
    """A mixed strategy over the cells of width ``1 / n`` as one of their midpoints."""
    return MixedForecast((low + 0.5) / n, p_low, (high + 0.5) / n, 1.0 - p_low)


class _Calibeating(BinaryCalibrator):
    """Shared by the shells of this module: the count of ``learn_one`` calls."""

    @property
    def n_events(self) -> int:
        """Number of ``learn_one`` calls so far (zero weights included)."""
        return self._n_events


class _Compiled(_Calibeating):
    """Shared by the shells of a compiled state machine (``self._kernel``, built by
    ``_reset`` and ``_set_state``): the event count and the batch paths, one compiled
    pass each, equal to the loops of ``learn_one`` / ``predict_one`` float for float."""

    @property
    def _n_events(self) -> int:
        return self._kernel.n_events

    def _learn_many_validated(self, scores, labels, w) -> None:
        self._atomic(w, self._kernel.learn_many, scores, labels, w)

    def _atomic(self, w, run, *args):
        """``run(*args)``, a compiled batch loop, atomic under the weight rule
        (:mod:`streamcal._validation`): when the batch may hold an event the state
        cannot take (its weights exceed the kernel's headroom), the state, and the
        base's, are saved first and restored before the error propagates."""
        if self._within_headroom(w):
            return run(*args)
        base = getattr(self, "base", None)
        with restored_on_error(self, *([] if base is None else [base]), errors=ValueError):
            return run(*args)

    def _within_headroom(self, w) -> bool:
        return sums_within(w, self._kernel.headroom())

    def _weights_surely_fit(self, w) -> bool:
        # the kernel's headroom, as _atomic trusts it, and the base's own rule
        base = getattr(self, "base", None)
        return self._within_headroom(w) and (base is None or base._weights_surely_fit(w))

    def _predict_many_validated(self, scores: np.ndarray) -> np.ndarray:
        # one event at a time, with the base's predict_one: a base's vectorised
        # predictions may differ by rounding, which could move a forecast across a bin
        return self._kernel.predict_many(scores)

    def _predict_learn_many_validated(self, scores, labels, w) -> np.ndarray:
        return self._atomic(w, self._kernel.predict_learn_many, scores, labels, w)
