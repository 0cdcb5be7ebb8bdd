"""Mean proper scores of probability forecasts: the Brier score and log loss of binary
forecasts, and their multiclass forms (:class:`MulticlassBrier`, :class:`CrossEntropy`)."""

from __future__ import annotations

import math

from streamcal import _validation as V
from streamcal.metrics._multiclass import MulticlassCalibrationMetric
from streamcal.metrics.base import BinaryCalibrationMetric

__all__ = ["Brier", "CrossEntropy", "LogLoss", "MulticlassBrier"]


class _MeanScore:
    """The weighted mean of a per-event score ``loss(y, p)``, revertible: a mixin placed
    before :class:`BinaryCalibrationMetric` or :class:`MulticlassCalibrationMetric`.

    State: the total weight, the weighted sum of losses, and the number of
    positive-weight events held, so that once every event has been reverted the sums
    return to exactly zero (float sums would otherwise keep a rounding residue).
    """

    def _reset(self) -> None:
        self._weight = 0.0
        self._total = 0.0
        self._n = 0

    def _loss(self, y: float, p: float) -> float:
        raise NotImplementedError

    def _update(self, y: float, p: float, w: float) -> None:
        if w > 0.0:
            self._weight += w
            self._total += w * self._loss(y, p)
            self._n += 1

    def _revert(self, y: float, p: float, w: float) -> None:
        if w > 0.0:
            self._n -= 1
            if self._n <= 0:
                self._reset()
                return
            self._weight -= w
            self._total -= w * self._loss(y, p)

    def get(self) -> float:
        """The weighted mean score of the events held (0.0 before any); O(1)."""
        return self._total / self._weight if self._weight > 0.0 else 0.0

    def _get_state(self) -> dict:
        return {"weight": self._weight, "total": self._total, "n": self._n}

    def _set_state(self, state: dict) -> None:
        self._weight = float(state["weight"])
        self._total = float(state["total"])
        self._n = int(state["n"])


class Brier(_MeanScore, BinaryCalibrationMetric):
    """Brier score: the weighted mean of ``(p - y) ** 2``.

    Revertible, so ``river.utils.Rolling(Brier, window_size=n)`` gives the score of the
    last ``n`` events (sums are floats: after many reverts the windowed value differs
    from a fresh computation on the window by rounding only, about 1e-12 relative).

    Examples
    --------
    >>> from streamcal.metrics import Brier
    >>> m = Brier()
    >>> for y, p in [(1, 0.8), (0, 0.4), (1, 0.6)]:
    ...     m.update(y, p)
    >>> round(m.get(), 4)                      # (0.04 + 0.16 + 0.16) / 3
    0.12
    >>> m.revert(0, 0.4)
    >>> round(m.get(), 4)
    0.1

    In a river rolling window:

    >>> from river import utils
    >>> rolling = utils.Rolling(Brier, window_size=2)
    >>> for y, p in [(1, 0.8), (0, 0.4), (1, 0.6)]:
    ...     rolling.update(y, p)
    >>> round(rolling.get(), 4)                # (0.16 + 0.16) / 2
    0.16

    """

    def __init__(self):
        super().__init__()

    def _loss(self, y: float, p: float) -> float:
        d = p - y
        return d * d

    def update(self, y_true, y_pred, w=1.0) -> None:
        """Add one event; O(1).

        The checks of :mod:`streamcal._validation` are inlined for the common exact types
        (an int or bool label, a float forecast and weight); anything else goes through
        them in full, so the values accepted and the errors raised are those of
        :meth:`BinaryCalibrationMetric.update`. A method of this class's own also keeps
        the interpreter's caches monomorphic when several metrics are updated together.
        """
        t = type(y_true)
        if (t is int or t is bool) and (y_true == 1 or y_true == 0):
            y = 1.0 if y_true else 0.0
        else:
            y = V.check_label(y_true, "Brier", "update", "y_true")
        if type(y_pred) is not float or not 0.0 <= y_pred <= 1.0:
            y_pred = V.check_probability(y_pred, "Brier", "update")
        if type(w) is not float or not 0.0 <= w < math.inf:
            w = V.check_weight(w, "Brier", "update")
        if w > 0.0:
            d = y_pred - y
            self._weight += w
            self._total += w * d * d
            self._n += 1


class LogLoss(_MeanScore, BinaryCalibrationMetric):
    """Log loss: the weighted mean of ``-log(p)`` if ``y = 1`` else ``-log(1 - p)``, with
    ``p`` clipped to ``[eps, 1 - eps]`` so that a confident miss costs ``-log(eps)``
    (34.5 for the default) rather than infinity.

    Parameters
    ----------
    eps
        Clipping level, a real number in (0, 0.5).

    Examples
    --------
    >>> from streamcal.metrics import LogLoss
    >>> m = LogLoss()
    >>> for y, p in [(1, 0.8), (0, 0.4), (1, 0.6)]:
    ...     m.update(y, p)
    >>> round(m.get(), 4)
    0.4149
    >>> m.update(1, 0.0)                       # a confident miss: clipped, not infinite
    >>> round(m.get(), 2)
    8.95

    """

    def __init__(self, eps: float = 1e-15):
        V.check_real(
            eps, "LogLoss", "eps", lambda x: 0.0 < x < 0.5, "a real number in (0, 0.5)"
        )
        self.eps = eps
        super().__init__()

    def _loss(self, y: float, p: float) -> float:
        eps = self.eps
        q = p if y == 1.0 else 1.0 - p
        # conditional expressions: calls to min and max cost more per event
        return -math.log(eps if q < eps else (1.0 - eps if q > 1.0 - eps else q))  # noqa: FURB136

    def update(self, y_true, y_pred, w=1.0) -> None:
        """Add one event; O(1). Validation inlined as in :meth:`Brier.update`."""
        t = type(y_true)
        if (t is int or t is bool) and (y_true == 1 or y_true == 0):
            y = 1.0 if y_true else 0.0
        else:
            y = V.check_label(y_true, "LogLoss", "update", "y_true")
        if type(y_pred) is not float or not 0.0 <= y_pred <= 1.0:
            y_pred = V.check_probability(y_pred, "LogLoss", "update")
        if type(w) is not float or not 0.0 <= w < math.inf:
            w = V.check_weight(w, "LogLoss", "update")
        if w > 0.0:
            eps = self.eps
            q = y_pred if y == 1.0 else 1.0 - y_pred
            self._weight += w
            self._total -= w * math.log(
                eps if q < eps else (1.0 - eps if q > 1.0 - eps else q)  # noqa: FURB136
            )
            self._n += 1


class MulticlassBrier(_MeanScore, MulticlassCalibrationMetric):
    """Multiclass Brier score: the weighted mean of ``sum_c (p_c - [y = c]) ** 2`` over
    the classes of the forecast and the outcome (a class absent from the forecast has
    probability 0); between 0 and 2. Revertible, like :class:`Brier`.

    ``update`` and ``revert`` cost O(classes) per event.

    Examples
    --------
    >>> from streamcal.metrics import MulticlassBrier
    >>> m = MulticlassBrier()
    >>> m.update("b", {"a": 0.5, "b": 0.5})
    >>> m.get()                                # 0.5 ** 2 + 0.5 ** 2
    0.5
    >>> m.update("c", {"a": 0.5, "b": 0.5})    # c absent: 0.25 + 0.25 + 1
    >>> m.get()
    1.0

    """

    def __init__(self):
        super().__init__()

    def _loss(self, y, p: dict) -> float:
        total = 0.0 if y in p else 1.0
        for c, pc in p.items():
            d = pc - 1.0 if c == y else pc
            total += d * d
        return total


class CrossEntropy(_MeanScore, MulticlassCalibrationMetric):
    """Multiclass log loss (cross-entropy): the weighted mean of ``-log p_y``, with
    ``p_y`` clipped to ``[eps, 1 - eps]`` as in :class:`LogLoss` (a class absent from the
    forecast has probability 0, so costs ``-log(eps)``). Revertible, like :class:`LogLoss`.

    ``update`` and ``revert`` cost O(classes) per event (the validation of the dict).

    Parameters
    ----------
    eps
        Clipping level, a real number in (0, 0.5).

    Examples
    --------
    >>> from streamcal.metrics import CrossEntropy
    >>> m = CrossEntropy()
    >>> m.update("b", {"a": 0.5, "b": 0.5})
    >>> round(m.get(), 6)                      # log 2
    0.693147

    """

    def __init__(self, eps: float = 1e-15):
        V.check_real(
            eps,
            "CrossEntropy",
            "eps",
            lambda x: 0.0 < x < 0.5,
            "a real number in (0, 0.5)",
        )
        self.eps = eps
        super().__init__()

    def _loss(self, y, p: dict) -> float:
        eps = self.eps
        q = p.get(y, 0.0)
        return -math.log(eps if q < eps else (1.0 - eps if q > 1.0 - eps else q))  # noqa: FURB136
