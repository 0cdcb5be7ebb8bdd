"""Mean proper scores of probability forecasts: the Brier score and log loss of binary
forecasts, and their multiclass forms (:class:`MulticlassBrier`, :class:`CrossEntropy`)."""

from __future__ import annotations

import math

from streamcal import _validation as V
from streamcal.metrics import _kernels
from streamcal.metrics._multiclass import MulticlassCalibrationMetric
from streamcal.metrics.base import BinaryCalibrationMetric

__all__ = ["Brier", "CrossEntropy", "LogLoss", "MulticlassBrier"]


def check_mean_score(weight: float, total: float, n: int, max_loss: float) -> None:
    """Assert the invariants of a weighted mean score's state (``_check()`` of
    :class:`_MeanScore` and :class:`_BinaryMeanScore`, hence of their snapshots): a
    count ``n >= 0``, a weight ``>= 0`` that is positive while events are held, and a
    loss sum between 0 and ``max_loss`` times the weight (up to rounding), all exactly 0
    with no event held.

    >>> check_mean_score(2.0, 0.5, 2, 1.0)
    >>> try:
    ...     check_mean_score(1.0, 5.0, 1, 1.0)
    ... except AssertionError as exc:
    ...     print(str(exc).splitlines()[0])
    the loss sum 5.0 is not in [0, 1.0 * the weight 1.0]
    """
    assert n >= 0, f"a negative count {n}"
    assert weight >= 0.0 and (weight > 0.0 or n == 0), f"the weight {weight} of {n} events"
    tol = 1e-9 * weight * max_loss
    assert -tol <= total <= weight * max_loss + tol, (
        f"the loss sum {total} is not in [0, {max_loss} * the weight {weight}]"
    )
    if n == 0:
        assert weight == total == 0.0, "no event held, but the sums are not 0"


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

    def _check(self) -> None:
        """Assert every invariant of the state (tests call it after each mutation)."""
        eps = getattr(self, "eps", None)
        check_mean_score(self._weight, self._total, self._n, 2.0 if eps is None else -math.log(eps))

    @property
    def _weight_capacity(self) -> float:
        """The capacity of the weight rule: the sum of losses is at most the largest
        loss (2, or ``-log(eps)``) times the weight."""
        eps = getattr(self, "eps", None)
        return V.weight_capacity(2.0 if eps is None else -math.log(eps))

    def _update(self, y: float, p: float, w: float) -> None:
        if w > 0.0:
            self._weight += w
            self._total += w * self._loss(y, p)
            self._n += 1

    def _revert(self, y: float, p: float, w: float) -> None:
        if w > 0.0:
            if self._n <= 0 or not w <= self._weight * (1.0 + 2.0**-30):
                raise self._not_held(y, p)  # nothing held, or less weight than w
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

    _merge_refusal = None

    def _merge(self, other):
        """The mean score of both streams: total weights, weighted score sums and
        counts added. O(1). The sums equal one metric's to rounding (1e-15 relative)."""
        a, b = self._get_state(), other._get_state()
        return self._from_state({key: a[key] + b[key] for key in ("weight", "total", "n")})


class _ClippedLogScore:
    """The ``eps`` parameter of the clipped log losses (:class:`LogLoss`,
    :class:`CrossEntropy`): a mixin placed first, whose constructor checks and stores
    ``eps`` before the metric's own."""

    # the catalogue entry's name (streamcal.metrics.catalogue): both are the log loss
    short_name = "log_loss"

    def __init__(self, eps: float = 1e-15):
        V.check_clip_level(eps, type(self).__name__)
        self.eps = eps
        super().__init__()


class _BinaryMeanScore(_kernels.StoreShell, BinaryCalibrationMetric):
    """The weighted mean of a per-event score of binary forecasts, revertible; the state
    (total weight, weighted score sum, count of positive-weight events, as in
    :class:`_MeanScore`) lives in a compiled store, which also runs ``update`` (its
    checks in compiled code, their messages those of :mod:`streamcal._validation`) and
    ``update_many`` in one pass. Brier squares ``p - y``; a subclass with an ``eps``
    attribute (> 0) scores the clipped log loss instead."""

    update = _kernels.mean_score_update

    def _reset(self) -> None:
        self._store = _kernels.MeanScore(type(self).__name__, getattr(self, "eps", 0.0))

    def _revert(self, y: float, p: float, w: float) -> None:
        if not self._store.revert(y, p, w):
            raise self._not_held(y, p)

    def _check(self) -> None:
        """Assert every invariant of the state (tests call it after each mutation)."""
        store = self._store
        check_mean_score(store.weight, store.total, store.n,
                         -math.log(store.eps) if store.log_loss else 1.0)

    def get(self) -> float:
        """The weighted mean score of the events held (0.0 before any); O(1)."""
        return self._store.get()

    def _set_state(self, state: dict) -> None:
        self._store.set_state(state)

    _merge_refusal = None

    def _merge(self, other):
        """The mean score of both streams: total weights, weighted score sums and
        counts added. O(1). The sums equal one metric's to rounding (1e-15 relative)."""
        a, b = self._get_state(), other._get_state()
        return self._from_state({key: a[key] + b[key] for key in ("weight", "total", "n")})


class Brier(_BinaryMeanScore):
    """Brier score: the weighted mean of ``(p - y) ** 2``.

    Revertible, so ``river.utils.Rolling(Brier, window_size=n)`` gives the score of the
    last ``n`` events (sums are floats: after many reverts the windowed value differs
    from a fresh computation on the window by rounding only, about 1e-12 relative, as
    long as no event outweighs the rest of the window by more than about 1e4: see
    :meth:`~streamcal.metrics.base.BinaryCalibrationMetric.revert`).

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

    # the catalogue entry (streamcal.metrics.catalogue)
    short_name = "brier"
    description = (
        "Brier score: mean squared difference between the forecast probability and the "
        "0/1 outcome, in [0, 1]."
    )

    def __init__(self):
        super().__init__()


class LogLoss(_ClippedLogScore, _BinaryMeanScore):
    """Log loss: the weighted mean of ``-log(p)`` if ``y = 1`` else ``-log(1 - p)``, with
    ``p`` clipped to ``[eps, 1 - eps]`` so that a confident miss costs ``-log(eps)``
    (34.5 for the default) rather than infinity.

    The clipping is a difference from the plain definition and from scikit-learn,
    whose ``log_loss`` (1.9) clips at the machine epsilon of the input's dtype, about
    ``2.2e-16`` for float64: forecasts within ``1e-15`` of 0 or 1 score differently (a
    confident miss costs 34.5 here, 36.0 there).

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

    # the catalogue entry (streamcal.metrics.catalogue; short_name from _ClippedLogScore)
    description = (
        "Log loss: mean negative log-likelihood of the outcomes, the forecast clipped to "
        "[eps, 1 - eps], in [0, -log(eps)]."
    )


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

    # the catalogue entry (streamcal.metrics.catalogue)
    short_name = "brier"
    description = (
        "Multiclass Brier score: squared distance between the probability vector and the "
        "one-hot outcome, summed over the classes and averaged over the events, in [0, 2] "
        "(twice the binary Brier score for two classes)."
    )

    def __init__(self):
        super().__init__()

    def _loss(self, y, p: dict) -> float:
        total = 0.0 if y in p else 1.0
        for c, pc in p.items():
            d = pc - 1.0 if c == y else pc
            total += d * d
        return total


class CrossEntropy(_ClippedLogScore, _MeanScore, MulticlassCalibrationMetric):
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

    # the catalogue entry (streamcal.metrics.catalogue)
    description = (
        "Cross-entropy (multiclass log loss): mean negative log of the probability given "
        "to the outcome's class, clipped to [eps, 1 - eps], in [0, -log(eps)]."
    )

    def _loss(self, y, p: dict) -> float:
        eps = self.eps
        q = p.get(y, 0.0)
        return -math.log(eps if q < eps else (1.0 - eps if q > 1.0 - eps else q))  # noqa: FURB136
