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

from streamcal import _merge
from streamcal import _validation as V
from streamcal.base import BinaryCalibrator
from streamcal.calibrators._calibeating_common import (
    MixedForecast,
    _check_base,
    _check_n_bins,
    _check_prior_weight,
    _check_seed,
    _Compiled,
    _draw_seed,
    _grid_forecast,
)
from streamcal.calibrators.foster import EpsilonCalibratedForecaster
from streamcal.calibrators.multi_calibeating import MultiCalibeater
from streamcal.core.calibeating import (
    BinOutcomes,
    FosterGame,
    HedgingKernel,
    TrackingKernel,
)

__all__ = [
    "EpsilonCalibratedForecaster",
    "HedgingCalibeater",
    "MixedForecast",
    "MultiCalibeater",
    "TrackingCalibeater",
]


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
        prior_weight = _check_prior_weight(type(self).__name__, prior_weight)
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
