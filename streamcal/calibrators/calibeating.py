"""Calibeating: beating an expert forecaster at its own game (Foster and Hart).

The expert's forecast (the score itself, or the output of another calibrator given as
``base``) sorts the events into ``n_bins`` equal-width bins; the calibeater learns, per
bin, what the outcomes actually were, and so keeps the expert's *refinement* (how well
its bins separate wet from dry) while removing its *miscalibration*. See
:func:`streamcal.metrics.calibration_refinement` for the yardstick, the decomposition
``Brier = calibration + refinement``.

- :class:`TrackingCalibeater`: the running mean of the outcomes in the expert's bin.
- :class:`HedgingCalibeater`: Foster's randomised epsilon-calibrated forecaster run
  inside each expert bin; calibrated even against adversarial outcomes.
- :class:`EpsilonCalibratedForecaster`: Foster's forecaster alone, with no expert.
- :class:`MultiCalibeater`: calibeats several experts at once.

The cores (per-bin statistics, Foster's game, exponential weights) are in
:mod:`streamcal.core.calibeating`.
"""

from __future__ import annotations

import contextlib
import math
import os
import typing

import numpy as np

from streamcal import _merge
from streamcal import _validation as V
from streamcal.base import BinaryCalibrator
from streamcal.core._calibeating import (
    FosterKernel,
    HedgingKernel,
    TrackingKernel,
    joint_bin,
)
from streamcal.core._calibeating import bin_index as _bin_index
from streamcal.core.calibeating import (
    BinOutcomes,
    ExponentialWeights,
    FosterGame,
    bin_index,
)

#: The capacity of the weight rule (:mod:`streamcal._validation`) for MultiCalibeater's
#: bin statistics, as the compiled calibeaters' bins: the tracking mean ``(ysum + prior)
#: / (weight + prior_weight)`` needs ``weight + prior_weight`` finite.
_BIN_CAPACITY = V.weight_capacity(2.0)

__all__ = [
    "EpsilonCalibratedForecaster",
    "HedgingCalibeater",
    "MixedForecast",
    "MultiCalibeater",
    "TrackingCalibeater",
]


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
    V.check_param(
        owner,
        "seed",
        seed,
        seed is None or (V.is_integer(seed) and seed >= 0),
        "an int >= 0 or None",
    )


def _check_prior_weight(owner, prior_weight):
    V.check_param(
        owner,
        "prior_weight",
        prior_weight,
        V.is_real(prior_weight) and 0.0 <= prior_weight < math.inf,
        "a finite real number >= 0",
    )


def _check_base(owner, base):
    ok = base is None or (
        isinstance(base, BinaryCalibrator) and not hasattr(base, "_check_inputs")
    )
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
        if math.fsum(w) <= self._kernel.headroom():
            return run(*args)
        base = getattr(self, "base", None)
        saved, saved_base = self._get_state(), None if base is None else base._get_state()
        try:
            return run(*args)
        except ValueError:
            self._set_state(saved)
            if base is not None:
                base._set_state(saved_base)
            raise

    def _predict_many_validated(self, scores: np.ndarray) -> np.ndarray:
        # one event at a time, with the base's predict_one: a base's vectorised
        # predictions may differ by rounding, which could move a forecast across a bin
        return self._kernel.predict_many(scores)

    def _predict_learn_many_validated(self, scores, labels, w) -> np.ndarray:
        return self._atomic(w, self._kernel.predict_learn_many, scores, labels, w)


class _ExpertBinned(_Compiled):
    """Shared plumbing: the parameters ``base`` and ``n_bins``."""

    def __init__(self, base: BinaryCalibrator | None, n_bins: int):
        name = type(self).__name__
        _check_base(name, base)
        _check_n_bins(name, n_bins)
        self.base = base
        self.n_bins = n_bins



class TrackingCalibeater(_ExpertBinned):
    """Calibeating by tracking: the running mean of past outcomes in the expert's bin.

    The expert forecast ``x`` of an event is ``base.predict_one(score)``, or the score
    itself when ``base`` is None. Its bin is ``b = min(floor(n_bins * x), n_bins - 1)``
    (bin ``b`` holds ``[b/n_bins, (b+1)/n_bins)``, 1.0 the last bin). The prediction is
    the weighted mean of the outcomes of the past events of bin ``b``, with
    ``prior_weight`` pseudo-events at the expert's forecast::

        p = (S_b + prior_weight * x) / (W_b + prior_weight)

    (``W_b`` the total weight of the bin's past events, ``S_b`` their weighted outcome
    sum); before any positive weight in the bin (and always the first time with
    ``prior_weight=0``) this is ``x``. With ``base=OnlinePlatt()`` this is TOPS,
    "tracking online Platt scaling" (Gupta and Ramdas, "Online Platt scaling with
    calibeating", ICML 2023).

    Foster and Hart (2023, section 4) show that tracking keeps the expert's refinement
    and removes its calibration error. Precisely (the constants derived below), for
    any outcome sequence, the Brier score ``B``
    of the tracking forecasts over ``T`` unit-weight events and the refinement ``R``
    of the binned expert (the partition of the events by ``b``; see
    :func:`streamcal.metrics.calibration_refinement`) satisfy

        ``T * (B - R) <= sum_b [1 + ln n_b + 2 c * ln(1 + n_b / c)]
        <= n_bins * (1 + ln(T / n_bins) + 2 c * ln(1 + T / (c * n_bins)))``,

    ``n_b`` the number of events of bin ``b`` and ``c = prior_weight`` (the ``c``
    terms vanish at ``c = 0``, leaving ``n_bins * (1 + ln(T / n_bins)) / T``, the
    O(log T / T) rate). Derivation: in one bin, the running mean ``q_k`` of the first
    ``k - 1`` outcomes satisfies Welford's recursion
    ``SS_k = SS_{k-1} + (k-1)/k * (y_k - q_k)**2`` for the within-bin sum of squares, so
    ``sum_k (y_k - q_k)**2 = SS_n + sum_{k>=2} (y_k - q_k)**2 / k + (y_1 - q_1)**2
    <= SS_n + ln n + 1``, and ``SS_n / T`` summed over bins is ``R``; the prior moves
    the k-th forecast by at most ``c / (k - 1 + c)``, which costs at most twice that.

    Parameters
    ----------
    base
        The expert: a calibrator taking the score (trained in place, on each event
        predicting before learning, so an event's expert forecast never uses its own
        label), or None to bin the score itself.
    n_bins
        Number of equal-width bins of the expert forecast, an int >= 1.
    prior_weight
        Pseudo-count ``c >= 0`` of the expert's forecast in each bin's mean (shrinks
        the first forecasts of a bin towards the expert); 0 gives the plain running
        mean of Foster and Hart.

    Attributes
    ----------
    bins
        ``(bin, weight, mean outcome)`` of every bin seen with positive weight.
    n_events
        Number of ``learn_one`` calls so far.

    Notes
    -----
    Cost per event O(1) plus the base's ``predict_one`` and ``learn_one``; memory
    O(n_bins). The per-event state machine is compiled (with an OnlinePlatt or
    OnlineBeta base, the base is called through its C API too); ``learn_many``,
    ``predict_many`` and ``predict_learn_many`` run in one compiled pass and give
    exactly the floats of the loop of ``learn_one`` / ``predict_one``.
    Weights are honoured exactly (a weight-2 event counts as two); zero weights teach
    nothing. ``clone()`` gives a fresh, unfitted base too; pickles and ``to_dict()``
    carry the base's own learnt state (as a parameter: a full snapshot of it).

    Examples
    --------
    >>> from streamcal import TrackingCalibeater
    >>> cal = TrackingCalibeater(n_bins=4, prior_weight=0.0)
    >>> cal.predict_one(0.9)               # no data: the expert's forecast
    0.9
    >>> for s, y in [(0.9, 0), (0.8, 1), (0.95, 0), (0.1, 0)]:
    ...     cal.learn_one(s, y)
    >>> cal.predict_one(0.85)              # the over-confident bin [0.75, 1]: 1/3
    0.3333333333333333
    >>> cal.bins
    ((0, 1.0, 0.0), (3, 3.0, 0.3333333333333333))

    TOPS, tracking online Platt scaling, on a miscalibrated rain forecaster:

    >>> from streamcal import OnlinePlatt
    >>> from streamcal.datasets import miscalibrated_rain_forecasts
    >>> from streamcal.metrics import brier_score
    >>> scores, rain = miscalibrated_rain_forecasts(5000, seed=0)
    >>> tops, forecasts = TrackingCalibeater(base=OnlinePlatt()), []
    >>> for s, y in zip(scores.tolist(), rain.tolist()):
    ...     forecasts.append(tops.predict_one(s))
    ...     tops.learn_one(s, y)
    >>> round(brier_score(rain, scores), 3), round(brier_score(rain, forecasts), 3)
    (0.198, 0.184)

    Each event is binned by the base's forecast *before* the base learns it:

    >>> from streamcal import OnlineIsotonic
    >>> tops = TrackingCalibeater(base=OnlineIsotonic(), n_bins=10)
    >>> tops.learn_many([0.2, 0.4, 0.6, 0.8], [0, 1, 0, 1])
    >>> tops.bins         # each event binned by the isotonic fit of the events before it
    ((0, 1.0, 1.0), (2, 1.0, 0.0), (5, 1.0, 1.0), (9, 1.0, 0.0))
    >>> tops.predict_one(0.7)   # isotonic says 0.5; its bin [0.5, 0.6) saw rain once
    0.75

    """

    def __init__(
        self,
        base: BinaryCalibrator | None = None,
        n_bins: int = 10,
        prior_weight: float = 1.0,
    ):
        super().__init__(base, n_bins)
        _check_prior_weight(type(self).__name__, prior_weight)
        self.prior_weight = prior_weight
        self._reset()

    def _reset(self) -> None:
        self._kernel = TrackingKernel(
            self.base,
            self.n_bins,
            float(self.prior_weight),
            "TrackingCalibeater",
            BinOutcomes(self.n_bins),
        )

    @classmethod
    def _unit_test_params(cls):
        from streamcal.calibrators.isotonic import OnlineIsotonic
        from streamcal.calibrators.scaling import OnlinePlatt

        yield {}
        yield {"n_bins": 5, "prior_weight": 0.0}
        yield {"base": OnlineIsotonic(), "n_bins": 7, "prior_weight": 2.5}
        yield {"base": OnlinePlatt()}  # TOPS

    def learn_one(self, score: float, label: bool | int, w: float = 1.0) -> None:
        """Add the event to its bin's statistics (then train the base); O(1) + base."""
        self._kernel.learn_one(score, label, w)

    def predict_one(self, score: float) -> float:
        """The tracking forecast for ``score``; O(1) + the base's ``predict_one``."""
        return self._kernel.predict_one(score)

    @property
    def _stats(self) -> BinOutcomes:
        return self._kernel.stats

    @property
    def bins(self) -> tuple[tuple[int, float, float], ...]:
        """``(bin, weight, mean outcome)`` of the bins seen with positive weight."""
        return tuple((b, w, s / w) for b, w, s in self._kernel.stats.items())

    def _get_state(self) -> dict:
        return {
            "bins": self._kernel.stats.to_lists(),
            "n_events": self._kernel.n_events,
        }

    @property
    def _merge_refusal(self) -> str | None:
        if self.base is not None:
            return (
                "with a base, each event is binned by the base's forecast at its arrival, "
                "which depends on everything the base learnt before it, so on the order "
                "of the two streams (base=None bins the score itself and merges)"
            )
        return None

    def _merge(self, other):
        """The table of both streams (``base=None``): per bin, the weights and weighted
        outcome sums added, bins in order of first arrival (``self``'s, then those only
        ``other`` saw); event counts added. O(n_bins). Predictions equal one
        calibeater's fed both streams to rounding (bit for bit with integer weights).
        """
        a, b = self._get_state(), other._get_state()
        return self._from_state(
            {
                "bins": _merge.merge_keyed(a["bins"], b["bins"]),
                "n_events": a["n_events"] + b["n_events"],
            }
        )

    def _set_state(self, state: dict) -> None:
        stats = BinOutcomes.from_lists(state["bins"], self.n_bins)
        self._kernel = TrackingKernel(
            self.base,
            self.n_bins,
            float(self.prior_weight),
            "TrackingCalibeater",
            stats,
            int(state["n_events"]),
        )



class HedgingCalibeater(_ExpertBinned):
    """Calibeating by hedging: Foster's epsilon-calibrated forecaster inside each
    expert bin, calibrated even when the outcomes are chosen adversarially.

    The expert forecast ``x`` (``base.predict_one(score)``, or the score) falls in bin
    ``b = min(floor(n_bins * x), n_bins - 1)``. Each bin runs its own
    :class:`~streamcal.core.calibeating.FosterGame` on the grid of the ``n_bins``
    midpoints ``(i + 1/2) / n_bins`` (``epsilon = 1 / n_bins``): it plays the
    calibrated grid cell whose midpoint is nearest to the running mean of the bin's
    outcomes (the tracking forecast), and when no cell of the bin is calibrated it
    randomises between two adjacent midpoints; this is
    :class:`EpsilonCalibratedForecaster` run separately in each expert bin. Before any
    positive-weight event in a bin it forecasts ``x`` itself (played, for the bin's
    game, as the cell holding ``x``). With ``base=OnlinePlatt()`` this is HOPS,
    "hedging online Platt scaling" (Gupta and Ramdas, ICML 2023; Foster and Hart
    2023, section 6).

    Guarantees (for any outcome sequence, nature seeing the mixed strategy but not the
    draw; ``T`` unit-weight events): in expectation, the epsilon-calibration error of
    each bin's game (see :class:`~streamcal.core.calibeating.FosterGame`) summed over
    the bins with their frequencies is at most ``sqrt(2 * n_bins**2 / T)``; so the
    calibration score of the forecasts is at most ``epsilon**2 / 4 + (1 + epsilon) *
    sqrt(2 * n_bins**2 / T)`` (plus ``n_bins / T`` for the first event of each bin),
    and the Brier score at most the binned expert's refinement plus that.

    The draw for event ``t`` (the number of ``learn_one`` calls before it) is
    :func:`~streamcal.core.calibeating.uniform` of ``(seed, t)``, so ``predict_one`` is
    a pure function of the state: calling it twice gives the same forecast, and the
    following ``learn_one`` records the cell that forecast came from.

    Parameters
    ----------
    base
        The expert: a calibrator taking the score (trained in place, predicting
        before learning on each event), or None to bin the score itself.
    n_bins
        Number of expert bins and of grid cells inside each, an int >= 1.
    seed
        Seed of the draws, an int >= 0. None draws one from ``os.urandom`` when the
        calibrator is built; it is kept in pickles and snapshots, but ``clone()``
        draws a new one (as river does with ``seed=None``).

    Attributes
    ----------
    n_events
        Number of ``learn_one`` calls so far.

    Notes
    -----
    Cost per event O(n_bins) plus the base's ``predict_one`` and ``learn_one``;
    memory O(n_bins ** 2). Compiled, as :class:`TrackingCalibeater` is: the batch
    methods give exactly the forecasts, and draw exactly the cells, of the loop.
    A weight scales an event's contribution to its cell's
    statistics (zero teaches nothing, but the draw counter still advances).

    Examples
    --------
    >>> from streamcal import HedgingCalibeater
    >>> cal = HedgingCalibeater(n_bins=10, seed=0)
    >>> cal.predict_one(0.33)          # no data in the bin: the expert's forecast
    0.33
    >>> for _ in range(5):
    ...     cal.learn_one(0.33, 1)     # it rains every time the expert says 33%
    >>> cal.predict_distribution_one(0.33)
    MixedForecast(low=0.95, p_low=1.0, high=0.95, p_high=0.0)
    >>> cal.predict_one(0.33) == cal.predict_one(0.33) == 0.95
    True

    HOPS, hedging online Platt scaling, on a miscalibrated rain forecaster:

    >>> from streamcal import OnlinePlatt
    >>> from streamcal.datasets import miscalibrated_rain_forecasts
    >>> from streamcal.metrics import brier_score
    >>> scores, rain = miscalibrated_rain_forecasts(5000, seed=0)
    >>> hops, forecasts = HedgingCalibeater(base=OnlinePlatt(), seed=0), []
    >>> for s, y in zip(scores.tolist(), rain.tolist()):
    ...     forecasts.append(hops.predict_one(s))
    ...     hops.learn_one(s, y)
    >>> round(brier_score(rain, scores), 3), round(brier_score(rain, forecasts), 3)
    (0.198, 0.186)

    """

    _merge_refusal = (
        "each bin plays Foster's forecasting game, whose randomised forecasts, and "
        "hence the outcome statistics of the game's cells, depend on the order of the "
        "events"
    )

    def __init__(
        self,
        base: BinaryCalibrator | None = None,
        n_bins: int = 10,
        seed: int | None = None,
    ):
        super().__init__(base, n_bins)
        _check_seed(type(self).__name__, seed)
        self.seed = seed
        self._reset()

    def _reset(self) -> None:
        self._kernel = HedgingKernel(
            self.base, self.n_bins, _draw_seed(self.seed), FosterGame, "HedgingCalibeater"
        )

    @classmethod
    def _unit_test_params(cls):
        from streamcal.calibrators.isotonic import OnlineIsotonic
        from streamcal.calibrators.scaling import OnlinePlatt

        yield {"seed": 1}
        yield {"n_bins": 3, "seed": 7}
        yield {"base": OnlineIsotonic(resolution=0.05), "n_bins": 5, "seed": 2}
        yield {"base": OnlinePlatt(), "seed": 3}  # HOPS

    @property
    def _seed(self) -> int:
        return self._kernel.seed

    @property
    def _games(self) -> dict[int, FosterGame]:
        """The game of every expert bin seen with a positive weight, in order of first
        arrival."""
        return self._kernel.games

    def learn_one(self, score: float, label: bool | int, w: float = 1.0) -> None:
        """Record the event on the cell its forecast came from; O(n_bins) + base."""
        self._kernel.learn_one(score, label, w)

    def predict_one(self, score: float) -> float:
        """The forecast for ``score`` (the draw of the next event); O(n_bins) + base."""
        return self._kernel.predict_one(score)


    def predict_distribution_one(self, score: float) -> MixedForecast:
        """The mixed strategy for ``score``, without drawing; O(n_bins) + base.

        Examples
        --------
        >>> cal = HedgingCalibeater(n_bins=2, seed=0)
        >>> for y in (1, 1, 0, 0):
        ...     cal.learn_one(0.2, y)
        >>> cal.predict_distribution_one(0.2)     # neither 0.25 nor 0.75 is calibrated
        MixedForecast(low=0.25, p_low=0.5, high=0.75, p_high=0.5)

        """
        s = V.check_score(score, "HedgingCalibeater", "predict_distribution_one")
        x, low, high, p = self._kernel.distribution(s)
        if low < 0:  # no data in the bin yet: the expert's forecast
            return MixedForecast(x, 1.0, x, 0.0)
        return _grid_forecast(low, high, p, self.n_bins)


    def _get_state(self) -> dict:
        k = self._kernel
        return {
            "seed": k.seed,
            "n_events": k.n_events,
            "games": [[b, g.to_lists()] for b, g in k.games.items()],
        }

    def _set_state(self, state: dict) -> None:
        games = {int(b): FosterGame.from_lists(g) for b, g in state["games"]}
        self._kernel = HedgingKernel(
            self.base,
            self.n_bins,
            int(state["seed"]),
            FosterGame,
            "HedgingCalibeater",
            games,
            int(state["n_events"]),
        )



class EpsilonCalibratedForecaster(_Compiled):
    """Foster's (1999) epsilon-calibrated forecaster, with no expert: the score is ignored.

    The forecasts are the midpoints ``(i + 1/2) / n_bins`` of the grid cells
    ``[i/n_bins, (i+1)/n_bins]`` (``epsilon = 1 / n_bins``). A cell is calibrated when
    it was never played or the frequency of the outcome when it was played lies in the
    cell. If some cell is calibrated, the forecaster plays the calibrated cell whose
    midpoint is nearest to the running mean of all outcomes so far (1/2 before any
    data; ties to the cell holding that mean); otherwise it randomises between two
    adjacent cells ``i`` (outcomes too frequent) and ``i + 1`` (too rare), each with
    probability proportional to the *other* cell's violation. The exact definitions,
    and the proof that the epsilon-calibration error is at most ``sqrt(2 n_bins / T)``
    in expectation after ``T`` unit-weight events, whatever nature does (seeing the
    mixed strategy, not the draw), are in
    :class:`~streamcal.core.calibeating.FosterGame`; see also Gupta (thesis proposal,
    2022), chapter 3 and figure 3.1.

    On a long sequence with a stable base rate it settles on the grid point whose cell
    holds the base rate: on the hourly rain at Newark in 2013 (6.7% of hours) it
    forecasts 0.05 in the end.

    Parameters
    ----------
    n_bins
        Number of grid cells, an int >= 1.
    seed
        Seed of the draws, an int >= 0; None draws one when the forecaster is built
        (kept in pickles and snapshots; ``clone()`` draws a new one).

    Attributes
    ----------
    n_events
        Number of ``learn_one`` calls so far.

    Notes
    -----
    Cold start: the midpoint of the cell holding 1/2, ``(floor(n_bins / 2) + 1/2) /
    n_bins`` (0.55 for 10 cells), whatever the score. Cost per event O(n_bins); memory
    O(n_bins). Compiled; ``predict_learn_many`` gives exactly the forecasts (the same
    draws) of the loop of ``predict_one`` / ``learn_one``. The draw for event ``t`` is a pure function of ``(seed, t)``, so
    ``predict_one`` does not change the state.

    Examples
    --------
    >>> from streamcal import EpsilonCalibratedForecaster
    >>> fc = EpsilonCalibratedForecaster(n_bins=10, seed=0)
    >>> fc.predict_one(0.9)                  # the score is ignored
    0.55
    >>> forecasts = []
    >>> for y in [0, 0, 1, 0, 0, 0, 0, 0, 0, 1]:
    ...     forecasts.append(fc.predict_one(0.0))
    ...     fc.learn_one(0.0, y)
    >>> forecasts          # a point never played is vacuously calibrated, so it is tried
    [0.55, 0.05, 0.05, 0.35, 0.25, 0.15, 0.45, 0.65, 0.75, 0.85]
    >>> fc.predict_distribution_one(0.0)
    MixedForecast(low=0.95, p_low=1.0, high=0.95, p_high=0.0)

    """

    _merge_refusal = (
        "it plays Foster's forecasting game, whose randomised forecasts, and hence "
        "the outcome statistics of the game's cells, depend on the order of the events"
    )

    def __init__(self, n_bins: int = 10, seed: int | None = None):
        name = type(self).__name__
        _check_n_bins(name, n_bins)
        _check_seed(name, seed)
        self.n_bins = n_bins
        self.seed = seed
        self._reset()

    def _reset(self) -> None:
        self._kernel = FosterKernel(
            FosterGame(self.n_bins), _draw_seed(self.seed), "EpsilonCalibratedForecaster"
        )

    @classmethod
    def _unit_test_params(cls):
        yield {"seed": 0}
        yield {"n_bins": 3, "seed": 11}

    def _cold_start_value(self, score) -> float:
        """The forecast before any data, whatever the score (read by the shared checks)."""
        n = self.n_bins
        return (bin_index(0.5, n) + 0.5) / n

    @property
    def _seed(self) -> int:
        return self._kernel.seed

    @property
    def _game(self) -> FosterGame:
        return self._kernel.game

    def learn_one(self, score: float, label: bool | int, w: float = 1.0) -> None:
        """Record the outcome on the cell just forecast; O(n_bins)."""
        self._kernel.learn_one(score, label, w)

    def _learn_many_validated(self, scores, labels, w) -> None:
        self._kernel.learn_many(labels, w)

    def _predict_learn_many_validated(self, scores, labels, w) -> np.ndarray:
        return self._kernel.predict_learn_many(labels, w)

    def predict_one(self, score: float) -> float:
        """The forecast for the next event (``score`` is validated, then ignored); O(n_bins)."""
        return self._kernel.predict_one(score)

    def _predict_many_validated(self, scores: np.ndarray) -> np.ndarray:
        return np.full(len(scores), self._kernel.forecast())

    def predict_distribution_one(self, score: float) -> MixedForecast:
        """The mixed strategy for the next event, without drawing; O(n_bins)."""
        V.check_score(score, "EpsilonCalibratedForecaster", "predict_distribution_one")
        return _grid_forecast(*self._kernel.strategy(), self.n_bins)

    def calibration_error(self) -> float:
        """The epsilon-calibration error so far (see
        :meth:`~streamcal.core.calibeating.FosterGame.calibration_error`); O(n_bins)."""
        return self._kernel.game.calibration_error()

    def _get_state(self) -> dict:
        k = self._kernel
        return {"seed": k.seed, "n_events": k.n_events, "game": k.game.to_lists()}

    def _set_state(self, state: dict) -> None:
        game = FosterGame.from_lists(state["game"])
        if game.n != self.n_bins:
            raise ValueError(
                f"The 'game' entry of the snapshot state must have {self.n_bins} cells. "
                f"Got {game.n} instead."
            )
        self._kernel = FosterKernel(
            game, int(state["seed"]), "EpsilonCalibratedForecaster", int(state["n_events"])
        )



_METHODS = ("joint", "meta")


class MultiCalibeater(_Calibeating):
    """Calibeating several experts at once: the input of an event is the tuple of the
    ``n_experts`` experts' forecasts.

    - ``method="joint"`` (Foster and Hart 2023, section 7): the bin of an event is the
      tuple of the experts' bins (``n_bins`` equal-width bins each), and the forecast
      is the running mean of the outcomes in that joint bin, as in
      :class:`TrackingCalibeater`. The joint partition refines every expert's, so its
      refinement is at most each expert's; the Brier score approaches it at the
      tracking rate with ``n_bins ** n_experts`` bins.
    - ``method="meta"`` (Foster and Hart 2023, appendix A.7; Gupta 2022, section 3.1):
      the experts are first aggregated by exponential weights on their cumulative
      Brier losses (:class:`~streamcal.core.calibeating.ExponentialWeights`), and the
      aggregate, a meta-expert as good as the best expert up to ``ln(n_experts) /
      learning_rate`` in cumulative Brier loss, is calibeaten by tracking on
      ``n_bins`` bins.

    Both use ``prior_weight`` pseudo-events at the mean forecast (the experts' mean,
    or the aggregate), as :class:`TrackingCalibeater` does.

    Parameters
    ----------
    n_experts
        Number of experts, an int >= 1: the length of every input tuple.
    n_bins
        Number of equal-width bins per forecast, an int >= 1.
    method
        ``"joint"`` (default) or ``"meta"``.
    prior_weight
        Pseudo-count of the mean forecast in each bin, a finite real number >= 0.
    learning_rate
        ``eta`` of the exponential weights (``"meta"`` only), a finite real > 0; the
        default 0.5 is the largest for which the Brier loss is exp-concave.

    Attributes
    ----------
    expert_weights
        The normalised exponential weights of the experts (``"meta"``), else None.
    n_events
        Number of ``learn_one`` calls so far.

    Notes
    -----
    ``learn_one(score, label, w)`` and ``predict_one(score)`` take ``score`` as a tuple
    (or list) of ``n_experts`` forecasts in [0, 1]; ``learn_many`` / ``predict_many``
    take a sequence of such tuples (an array of shape ``(n, n_experts)``). Cold start:
    the mean of the experts' forecasts. Cost per event O(n_experts); memory
    O(min(n_bins ** n_experts, events)) for ``"joint"``, O(n_bins + n_experts) for
    ``"meta"``.

    Examples
    --------
    >>> from streamcal import MultiCalibeater
    >>> cal = MultiCalibeater(n_experts=2, n_bins=2, prior_weight=0.0)
    >>> cal.predict_one((0.2, 0.6))                 # no data: the experts' mean
    0.4
    >>> for x, y in [((0.2, 0.6), 1), ((0.2, 0.6), 1), ((0.2, 0.1), 0), ((0.7, 0.6), 0)]:
    ...     cal.learn_one(x, y)
    >>> cal.predict_one((0.3, 0.9)), cal.predict_one((0.3, 0.3))
    (1.0, 0.0)

    The meta-expert learns whom to trust:

    >>> meta = MultiCalibeater(n_experts=2, method="meta")
    >>> meta.learn_many([(0.9, 0.1)] * 30, [1] * 30)
    >>> [round(v, 3) for v in meta.expert_weights]
    [1.0, 0.0]

    """

    def __init__(
        self,
        n_experts: int,
        n_bins: int = 10,
        method: str = "joint",
        prior_weight: float = 1.0,
        learning_rate: float = 0.5,
    ):
        name = type(self).__name__
        V.check_param(
            name,
            "n_experts",
            n_experts,
            V.is_integer(n_experts) and n_experts >= 1,
            "an int >= 1",
        )
        _check_n_bins(name, n_bins)
        V.check_param(
            name,
            "method",
            method,
            isinstance(method, str) and method in _METHODS,
            "a str among {'joint', 'meta'}",
        )
        _check_prior_weight(name, prior_weight)
        V.check_param(
            name,
            "learning_rate",
            learning_rate,
            V.is_real(learning_rate) and 0.0 < learning_rate < math.inf,
            "a finite real number > 0",
        )
        self.n_experts = n_experts
        self.n_bins = n_bins
        self.method = method
        self.prior_weight = prior_weight
        self.learning_rate = learning_rate
        self._reset()

    def _reset(self) -> None:
        self._stats = BinOutcomes(self._dense_bins())
        self._weights = (
            ExponentialWeights(self.n_experts, float(self.learning_rate))
            if self.method == "meta"
            else None
        )
        self._n_events = 0

    @classmethod
    def _unit_test_params(cls):
        yield {"n_experts": 2}
        yield {"n_experts": 3, "n_bins": 4, "method": "meta"}
        yield {
            "n_experts": 2,
            "n_bins": 5,
            "prior_weight": 0.0,
            "learning_rate": 2.0,
            "method": "meta",
        }

    def _dense_bins(self) -> int:
        """Bins kept in an array rather than a dict: all of them when there are at
        most 4096 (meta: ``n_bins``; joint: ``n_bins ** n_experts``), else none."""
        if self.method == "meta":
            return self.n_bins
        return self.n_bins**self.n_experts if self.n_experts * math.log2(self.n_bins) <= 12 else 0

    # ------------------------------------------------------------ hooks of the checks

    def _check_inputs(self, scores) -> list:
        """The inputs that stand for float ``scores`` in the shared checks: expert ``k``
        forecasts ``s ** (k + 1)``; a value that is not a score is repeated."""
        k = self.n_experts
        return [
            tuple(s ** (j + 1) for j in range(k))
            if V.is_real(s) and 0.0 <= s <= 1.0
            else (s,) * k
            for s in scores
        ]

    def _cold_start_value(self, forecasts) -> float:
        """The forecast before any data: the mean of the experts' forecasts."""
        return sum(forecasts) / len(forecasts)

    # ------------------------------------------------------------ validation

    def _check_forecasts(self, value, method: str) -> tuple[float, ...]:
        """Return the experts' forecasts as a tuple of floats, or raise naming the
        argument (and the position of a bad forecast)."""
        k = self.n_experts
        if isinstance(value, np.ndarray) and value.ndim == 1:
            value = value.tolist()
        if not isinstance(value, (tuple, list)) or len(value) != k:
            exc = (
                ValueError
                if isinstance(value, (tuple, list, np.ndarray))
                else TypeError
            )
            raise V.argument_error(
                exc,
                "score",
                "MultiCalibeater",
                method,
                f"a tuple of {k} real numbers in [0, 1] (one forecast per expert)",
                value,
            )
        for v in value:
            if not (type(v) is float and 0.0 <= v <= 1.0):
                return tuple(_check_forecast(v, i, method) for i, v in enumerate(value))
        return tuple(value)

    def _check_forecasts_array(self, values, method: str) -> np.ndarray:
        """Return a batch of tuples as a float array of shape ``(n, n_experts)``, or
        raise naming the index and position of the first bad forecast."""
        k = self.n_experts
        name = "MultiCalibeater"
        domain = f"a sequence of tuples of {k} real numbers in [0, 1]"
        try:
            arr = np.asarray(values)
        except ValueError:  # ragged
            arr = np.asarray(values, dtype=object)
        if arr.ndim == 1 and arr.size == 0:
            return np.zeros((0, k))
        if arr.ndim != 2 or arr.shape[1] != k:
            raise ValueError(
                f"The 'scores' argument of {name}.{method} must be {domain}. "
                f"Got {V.format_value(values)} (shape {arr.shape}) instead."
            )
        if arr.dtype.kind not in "iuf":  # bool, str or object entries
            cells = np.asarray(values, dtype=object)
            for i, row in enumerate(cells.tolist()):
                for j, v in enumerate(row):
                    if not V.is_real(v):
                        raise V.argument_error(
                            TypeError,
                            "scores",
                            name,
                            method,
                            V.SCORE_DOMAIN,
                            v,
                            suffix=f" at index {i}, position {j}",
                        )
            arr = cells.astype(np.float64)
        arr = arr.astype(np.float64, copy=False)
        bad = ~((arr >= 0.0) & (arr <= 1.0))
        if bad.any():
            i, j = (int(v) for v in np.argwhere(bad)[0])
            raise V.argument_error(
                ValueError,
                "scores",
                name,
                method,
                V.SCORE_DOMAIN,
                arr[i, j].item(),
                suffix=f" at index {i}, position {j}",
            )
        return arr

    # ------------------------------------------------------------ learning

    def _key_and_prior(self, x: tuple[float, ...]) -> tuple[int, float]:
        if self._weights is not None:
            a = self._weights.aggregate(x)
            return _bin_index(a, self.n_bins), a
        return joint_bin(x, self.n_bins), sum(x) / len(x)

    def _held(self, key: int) -> float:
        """The largest sum the event of joint (or meta) bin ``key`` adds its weight to:
        the bin's weight, and with ``method="meta"`` the experts' cumulative losses
        (each grows by at most the weight: a Brier loss is at most 1). O(n_experts)."""
        held = self._stats.get(key)[0]
        if self._weights is not None:
            held = max(held, max(self._weights.losses))
        return held

    def _learn(self, x: tuple[float, ...], y: float, w: float, method: str = "learn_one", where: str = "") -> None:
        """Learn one validated event; the weight rule (:mod:`streamcal._validation`,
        the capacity of the tracking mean's sums, as the compiled calibeaters') refuses,
        naming ``w``, a weight the statistics cannot hold, before anything changes."""
        key, _ = self._key_and_prior(x)
        if w > 0.0:
            V.check_weight_room(w, self._held(key), _BIN_CAPACITY, "MultiCalibeater", method, where)
        self._stats.add(key, y, w)
        if self._weights is not None:
            self._weights.update(x, y, w)
        self._n_events += 1

    def learn_one(self, score, label: bool | int, w: float = 1.0) -> None:
        """Learn from the experts' forecasts ``score`` (a tuple) and the outcome; O(n_experts)."""
        x = self._check_forecasts(score, "learn_one")
        y = V.check_label(label, "MultiCalibeater", "learn_one")
        w = V.check_weight(w, "MultiCalibeater", "learn_one")
        self._learn(x, y, w)

    def learn_many(self, scores, labels, w=None) -> None:
        """Learn from a batch (``scores`` a sequence of tuples), as a loop of
        ``learn_one`` would; the whole batch is validated first."""
        name = "MultiCalibeater"
        x = self._check_forecasts_array(scores, "learn_many")
        y = V.check_labels_array(labels, len(x), name, "learn_many")
        ws = V.check_weights_array(w, len(x), name, "learn_many")
        with self._atomic_batch(ws):
            for i, (row, yi, wi) in enumerate(zip(x.tolist(), y.tolist(), ws.tolist())):
                self._learn(tuple(row), yi, wi, "learn_many", f" at index {i}")

    @contextlib.contextmanager
    def _atomic_batch(self, ws):
        """Run a batch so that a weight the rule refuses part-way leaves the state as it
        was: when the batch's total could reach the capacity (never with ordinary
        weights, so then free), the state is saved first and restored on the error.
        (The bin of a meta event depends on the weights the events before it set, so
        the refused index is only known by running the batch.)"""
        held = max((wt for _, wt, _ in self._stats.items()), default=0.0)
        if self._weights is not None:
            held = max([held, *self._weights.losses])
        if held + math.fsum(ws) <= _BIN_CAPACITY:
            yield
            return
        saved = self._get_state()
        try:
            yield
        except ValueError:
            self._set_state(saved)
            raise

    def predict_learn_many(self, scores, labels, w=None) -> np.ndarray:
        """Predict then learn each event in turn (``scores`` a sequence of tuples),
        exactly as the loop of ``predict_one`` / ``learn_one`` would; the whole batch is
        validated first (see :meth:`streamcal.base.BinaryCalibrator.predict_learn_many`).

        Examples
        --------
        >>> from streamcal import MultiCalibeater
        >>> cal = MultiCalibeater(n_experts=2, n_bins=2)
        >>> cal.predict_learn_many([(0.2, 0.4), (0.2, 0.4)], [1, 1]).tolist()
        [0.30000000000000004, 0.65]

        """
        name = "MultiCalibeater"
        x = self._check_forecasts_array(scores, "predict_learn_many")
        y = V.check_labels_array(labels, len(x), name, "predict_learn_many")
        ws = V.check_weights_array(w, len(x), name, "predict_learn_many")
        out = np.empty(len(x), dtype=np.float64)
        with self._atomic_batch(ws):
            for i, (row, yi, wi) in enumerate(zip(x.tolist(), y.tolist(), ws.tolist())):
                row = tuple(row)
                out[i] = self._predict(row)
                self._learn(row, yi, wi, "predict_learn_many", f" at index {i}")
        return out

    def _predict(self, x: tuple[float, ...]) -> float:
        key, prior = self._key_and_prior(x)
        p = self._stats.mean(key, prior, self.prior_weight)
        return min(1.0, max(0.0, p))

    def predict_one(self, score) -> float:
        """The calibeaten forecast for the experts' forecasts ``score``; O(n_experts)."""
        return self._predict(self._check_forecasts(score, "predict_one"))

    def predict_many(self, scores) -> np.ndarray:
        """Forecasts for a sequence of tuples of the experts' forecasts (no learning)."""
        x = self._check_forecasts_array(scores, "predict_many")
        return np.array(
            [self._predict(tuple(row)) for row in x.tolist()], dtype=np.float64
        )

    @property
    def expert_weights(self) -> tuple[float, ...] | None:
        """Normalised exponential weights of the experts (``method="meta"``), else None."""
        return None if self._weights is None else tuple(self._weights.weights())

    def _get_state(self) -> dict:
        return {
            "bins": self._stats.to_lists(),
            "losses": None if self._weights is None else list(self._weights.losses),
            "n_events": self._n_events,
        }

    @property
    def _merge_refusal(self) -> str | None:
        if self.method == "meta":
            return (
                "with method='meta', each event is binned by the aggregate forecast at "
                "its arrival, whose exponential weights depend on the losses of the "
                "events before it, so on the order of the two streams (method='joint' "
                "merges)"
            )
        return None

    def _merge(self, other):
        """The joint-bin table of both streams (``method="joint"``): per joint bin, the
        weights and weighted outcome sums added, bins in order of first arrival
        (``self``'s, then those only ``other`` saw); event counts added. O(bins
        held)."""
        a, b = self._get_state(), other._get_state()
        return self._from_state(
            {
                "bins": _merge.merge_keyed(a["bins"], b["bins"]),
                "losses": None,
                "n_events": a["n_events"] + b["n_events"],
            }
        )

    def _set_state(self, state: dict) -> None:
        self._stats = BinOutcomes.from_lists(state["bins"], self._dense_bins())
        if self._weights is not None:
            self._weights.losses = [float(v) for v in state["losses"]]
        self._n_events = int(state["n_events"])


def _check_forecast(v, i: int, method: str) -> float:
    """Validate the ``i``-th expert's forecast, naming its position when it is bad."""
    try:
        return V.check_score(v, "MultiCalibeater", method)
    except (TypeError, ValueError) as exc:
        raise V.argument_error(
            type(exc),
            "score",
            "MultiCalibeater",
            method,
            V.SCORE_DOMAIN,
            v,
            suffix=f" at position {i}",
        ) from None
