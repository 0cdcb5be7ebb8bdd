"""Multi-calibeating: calibeating several experts at once (:class:`MultiCalibeater`),
by their joint bins or by an exponentially weighted meta-expert (Foster and Hart 2023,
section 7). The single-expert shells are in :mod:`streamcal.calibrators.calibeating`.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np

from streamcal import _merge
from streamcal import _validation as V
from streamcal._snapshot import restored_on_error
from streamcal.base import PREDICT, REVEAL
from streamcal.calibrators._calibeating_common import (
    _Calibeating,
    _check_n_bins,
    _check_prior_weight,
    sums_within,
)
from streamcal.core.calibeating import (
    BinOutcomes,
    ExponentialWeights,
    bin_index_compiled,
    joint_bin,
)

__all__ = ["MultiCalibeater"]

#: The capacity of the weight rule (:mod:`streamcal._validation`) for MultiCalibeater's
#: bin statistics, as the compiled calibeaters' bins: the tracking mean ``(ysum + prior)
#: / (weight + prior_weight)`` needs ``weight + prior_weight`` finite.
_BIN_CAPACITY = V.weight_capacity(2.0)


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
        prior_weight = _check_prior_weight(name, prior_weight)
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
            return bin_index_compiled(a, self.n_bins), a
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
        x, y, ws = self._check_batch(scores, labels, w, "learn_many")
        with self._atomic_batch(ws):
            for i, (row, yi, wi) in enumerate(zip(x.tolist(), y.tolist(), ws.tolist())):
                self._learn(tuple(row), yi, wi, "learn_many", f" at index {i}")

    def _weights_surely_fit(self, w) -> bool:
        # the largest sum any event adds its weight to, plus all of them, within the
        # capacity. O(bins held + experts)
        held = max((wt for _, wt, _ in self._stats.items()), default=0.0)
        if self._weights is not None:
            held = max([held, *self._weights.losses])
        return sums_within(w, _BIN_CAPACITY, held)

    @contextlib.contextmanager
    def _atomic_batch(self, ws):
        """Run a batch so that a weight the rule refuses part-way leaves the state as it
        was: when the batch's total could reach the capacity (never with ordinary
        weights, so then free), the state is saved first and restored on the error.
        (The bin of a meta event depends on the weights the events before it set, so
        the refused index is only known by running the batch.)"""
        if self._weights_surely_fit(ws):
            yield
            return
        with restored_on_error(self, errors=ValueError):
            yield

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
        x, y, ws = self._check_batch(scores, labels, w, "predict_learn_many")
        out = np.empty(len(x), dtype=np.float64)
        with self._atomic_batch(ws):
            for i, (row, yi, wi) in enumerate(zip(x.tolist(), y.tolist(), ws.tolist())):
                row = tuple(row)
                out[i] = self._predict(row)
                self._learn(row, yi, wi, "predict_learn_many", f" at index {i}")
        return out

    def _check_batch(self, scores, labels, w, method: str):
        """Validate a batch of the experts' forecasts (a sequence of tuples), labels and
        weights for ``method``."""
        x = self._check_forecasts_array(scores, method)
        name = "MultiCalibeater"
        return x, V.check_labels_array(labels, len(x), name, method), V.check_weights_array(w, len(x), name, method)

    def _predict_reveal_many_validated(self, kinds, x, y, ws) -> np.ndarray:
        out = np.empty(int(np.count_nonzero(kinds != REVEAL)), dtype=np.float64)
        j = 0
        with self._atomic_batch(ws):
            for i, (k, row, yi, wi) in enumerate(zip(kinds.tolist(), x.tolist(), y.tolist(), ws.tolist())):
                row = tuple(row)
                if k != REVEAL:
                    out[j] = self._predict(row)
                    j += 1
                if k != PREDICT:
                    self._learn(row, yi, wi, "predict_reveal_many", f" at index {i}")
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
