"""Foster's (1999) epsilon-calibrated forecaster alone, with no expert
(:class:`EpsilonCalibratedForecaster`); run inside each expert bin it is
:class:`streamcal.calibrators.HedgingCalibeater`. The game itself is
:class:`streamcal.core.calibeating.FosterGame`.
"""

from __future__ import annotations

import numpy as np

from streamcal import _validation as V
from streamcal.calibrators._calibeating_common import (
    MixedForecast,
    _check_n_bins,
    _check_seed,
    _Compiled,
    _draw_seed,
    _grid_forecast,
)
from streamcal.core.calibeating import FosterGame, FosterKernel, bin_index

__all__ = ["EpsilonCalibratedForecaster"]


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
