"""Calibration metrics of multiclass probability forecasts.

A multiclass forecast is a dict ``class -> probability`` (river's ``predict_proba_one``
output); ``y_true`` is any hashable class label. Each metric reduces the forecasts to
binary ones, as the multiclass-to-binary (M2B) view of Gupta and Ramdas (2022) puts it,
and bins them:

- :class:`ConfidenceECE`: the ECE of the top probability against "the top class is
  right" (Guo et al., 2017; the conf-ECE of Arad and Rosset, section 2.2);
- :class:`TopLabelECE`: the same, conditioned on the predicted class as well
  (top-label calibration, Gupta and Ramdas, 2022; Gupta's thesis, section 4.1);
- :class:`ClasswiseECE`: the mean over classes of the binary ECE of each class's
  probability (the cw-ECE, or SCE, of Nixon et al., 2019);
- :class:`TECE`: the thresholded, equal-mass class-wise ECE of Nixon et al. (2019),
  their TACE, which Arad and Rosset evaluate with the threshold ``1 / k`` (in
  :mod:`streamcal.metrics._tece`).

Conventions shared by the four metrics (class labels, the top class and the class
counts come from :mod:`streamcal._classes`):

- classes are discovered as they appear, in ``y_true`` or as keys of ``y_pred``; a class
  missing from ``y_pred`` has probability 0;
- the top class of a forecast is the first key of ``y_pred``, in the dict's order, with
  the largest probability (what ``max(y_pred, key=y_pred.get)`` returns, as river's
  classifiers do), so ties are broken by the forecast itself, never by the history of
  the metric, and an update and its revert always agree;
- zero-weight events change nothing (they discover no class);
- equal-width bins are those of :func:`streamcal.metrics.expected_calibration_error`:
  bin ``k`` of ``n_bins`` holds the probabilities in ``[k / n_bins, (k + 1) / n_bins)``,
  the last bin also 1.
"""

from __future__ import annotations

import math
import operator
import typing

from river import base as river_base

from streamcal import _merge
from streamcal import _validation as V
from streamcal._kernel_pickle import SlotsPickle
from streamcal._classes import ClassCounts, decode_by_class, encode_by_class, top_class
from streamcal.core.bins import uniform_bin as _bin_of
from streamcal.core.bins import uniform_edges
from streamcal.metrics._binned import ReliabilityBin, _check_n_bins
from streamcal.metrics.base import StreamingMetric, registered_as_classification

__all__ = [
    "ClasswiseECE",
    "ConfidenceECE",
    "MulticlassCalibrationMetric",
    "TopLabelECE",
]


# ---------------------------------------------------------------------- helpers


def _check_bins(owner: str, n_bins, strategy) -> None:
    _check_n_bins(owner, n_bins)
    V.check_param(
        owner,
        "strategy",
        strategy,
        isinstance(strategy, str) and strategy == "uniform",
        "'uniform'",
    )




class BinSums(SlotsPickle):
    """Per equal-width bin: number of events, total weight, weighted sums of the
    prediction and of the binary outcome. A bin whose count returns to 0 is zeroed
    exactly, so reverting every event leaves no rounding residue."""

    __slots__ = ("count", "n", "p", "w", "y")

    def __init__(self, n_bins: int):
        self.count = 0
        self.n = [0] * n_bins
        self.w = [0.0] * n_bins
        self.p = [0.0] * n_bins
        self.y = [0.0] * n_bins

    def add(self, k: int, w: float, p: float, y: float) -> None:
        self.count += 1
        self.n[k] += 1
        self.w[k] += w
        self.p[k] += w * p
        self.y[k] += w * y

    def remove(self, k: int, w: float, p: float, y: float) -> None:
        self.count -= 1
        left = self.n[k] - 1
        self.n[k] = left
        if left == 0:
            self.w[k] = self.p[k] = self.y[k] = 0.0
        else:
            self.w[k] -= w
            self.p[k] -= w * p
            self.y[k] -= w * y

    def gap(self) -> float:
        """``sum_b |sum w y - sum w p|``: the ECE times the total weight."""
        return sum(abs(y - p) for y, p in zip(self.y, self.p))

    def bins(
        self, edges: tuple, extra_weight: float = 0.0, extra_count: int = 0
    ) -> tuple:
        """The non-empty bins; ``extra_*`` events with prediction and outcome 0 join bin 0."""
        out = []
        for k, n in enumerate(self.n):
            w = self.w[k]
            if k == 0 and extra_count:
                n += extra_count
                w += extra_weight
            if n:
                out.append(
                    ReliabilityBin(
                        edges[k], edges[k + 1], w, self.p[k] / w, self.y[k] / w
                    )
                )
        return tuple(out)

    def merged(self, other: BinSums) -> BinSums:
        """A new ``BinSums`` with every count and sum of the two added. O(n_bins)."""
        out = BinSums(len(self.n))
        out.count = self.count + other.count
        out.n = _merge.add_lists(self.n, other.n)
        out.w = _merge.add_lists(self.w, other.w)
        out.p = _merge.add_lists(self.p, other.p)
        out.y = _merge.add_lists(self.y, other.y)
        return out

    def state(self) -> dict:
        return {
            "n": list(self.n),
            "w": list(self.w),
            "p": list(self.p),
            "y": list(self.y),
        }

    @classmethod
    def from_state(cls, state: dict) -> BinSums:
        obj = cls(len(state["n"]))
        obj.n = [int(v) for v in state["n"]]
        obj.w = [float(v) for v in state["w"]]
        obj.p = [float(v) for v in state["p"]]
        obj.y = [float(v) for v in state["y"]]
        obj.count = sum(obj.n)
        return obj

    def check_sizes(self, n_bins: int) -> None:
        """Assert one entry per bin in each list (a restored snapshot's lists may
        have any length)."""
        sizes = [len(self.n), len(self.w), len(self.p), len(self.y)]
        assert sizes == [n_bins] * 4, f"bin lists of lengths {sizes} for n_bins={n_bins}"

    def check(self, n_bins: int) -> None:
        """Assert the invariants of the sums of held events over ``n_bins`` bins."""
        self.check_sizes(n_bins)
        assert self.count == sum(self.n) > 0, (self.count, self.n)
        for k, n in enumerate(self.n):
            assert n >= 0, self.n
            if n == 0:
                assert self.w[k] == self.p[k] == self.y[k] == 0.0, (
                    k,
                    self.w,
                    self.p,
                    self.y,
                )
            else:
                w = self.w[k]
                assert w > 0.0, (k, self.w)
                # each event adds w * p and w * [y = c] with p and [y = c] in [0, 1]
                for name, v in (("forecast", self.p[k]), ("label", self.y[k])):
                    assert -1e-9 * w <= v <= w * (1 + 1e-9), (
                        f"bin {k}: the {name} sum {v} is not in [0, its weight {w}]"
                    )


# ---------------------------------------------------------------------- base class


@registered_as_classification
class MulticlassCalibrationMetric(StreamingMetric):
    """Base class of metrics of multiclass probability forecasts.

    ``y_true`` is a class label (any hashable value but NaN); ``y_pred`` is a non-empty
    dict ``class -> probability`` with values in [0, 1] summing to 1 within 1e-6, as
    river's ``predict_proba_one`` returns; a class absent from it has probability 0.
    ``w`` is a finite weight >= 0; zero-weight events change nothing.

    Subclasses implement ``_update(y, p, w)`` and ``_revert(y, p, w)``, called with a
    validated label, probability dict (float values) and a positive weight.
    :meth:`update` and :meth:`revert` validate everything first, so a bad event changes
    nothing. ``_revert`` must raise ValueError, before changing anything, when the
    event cannot be one the metric holds.

    Examples
    --------
    >>> from streamcal.metrics import ConfidenceECE
    >>> m = ConfidenceECE()
    >>> m.update("cat", {"cat": 0.8, "dog": 0.2})
    >>> m.update("cat", {"cat": 0.5, "dog": 0.6})
    Traceback (most recent call last):
    ...
    ValueError: The 'y_pred' argument of ConfidenceECE.update must be a non-empty dict mapping class labels to probabilities in [0, 1] that sum to 1 within 1e-06. Got {'cat': 0.5, 'dog': 0.6} (sum 1.1) instead.
    >>> round(m.get(), 4)                      # the bad event changed nothing
    0.2

    """

    #: the metric takes multiclass forecasts (dicts), not binary probabilities
    _multiclass: typing.ClassVar[bool] = True
    #: The forecasts the metric scores: dicts of class probabilities.
    task: typing.ClassVar[str] = "multiclass"

    #: The capacity of the weight rule (:mod:`streamcal._validation`): every number the
    #: metric stores or derives is at most twice the weight it holds (a gap sums a
    #: probability and a label).
    _weight_capacity: typing.ClassVar[float] = V.weight_capacity(2.0)

    @property
    def _held_weight(self) -> float:
        """The total weight held, for the weight rule."""
        return self._weight

    def update(self, y_true, y_pred, w=1.0) -> None:
        """Add one event; cost stated by each metric. A weight the state cannot hold
        (see :mod:`streamcal._validation`) raises ValueError and changes nothing."""
        name = type(self).__name__
        y = V.check_class_label(y_true, name, "update", "y_true")
        p = V.check_probability_vector(y_pred, name, "update", "y_pred")
        w = V.check_weight(w, name, "update")
        if w > 0.0:
            V.check_weight_room(w, self._held_weight, self._weight_capacity, name, "update")
            self._update(y, p, w)

    def revert(self, y_true, y_pred, w=1.0) -> None:
        """Remove one event previously added with the same arguments; an event the
        metric cannot hold raises ValueError and changes nothing."""
        self._check_revertible()
        name = type(self).__name__
        y = V.check_class_label(y_true, name, "revert", "y_true")
        p = V.check_probability_vector(y_pred, name, "revert", "y_pred")
        w = V.check_weight(w, name, "revert")
        if w > 0.0:
            self._revert(y, p, w)

    def _update(self, y, p: dict, w: float) -> None:
        raise NotImplementedError

    def _revert(self, y, p: dict, w: float) -> None:
        raise NotImplementedError

    def _not_held(self, y, p) -> ValueError:
        return ValueError(
            f"{type(self).__name__}.revert was given an event it does not hold "
            f"(y_true={V.format_value(y)}, y_pred={V.format_value(p)}); revert only "
            "events previously added with update."
        )

    def works_with(self, model) -> bool:
        """River classifiers and anything else with a ``predict_proba_one``."""
        return isinstance(model, river_base.Classifier) or callable(
            getattr(model, "predict_proba_one", None)
        )


class _EqualWidthMetric(MulticlassCalibrationMetric):
    #: The state entry of the bin sums (ConfidenceECE), or None for sums per class
    #: under ``state['classes']`` (``[[label, sums], ...]``).
    _bins_entry: str | None = None

    def _validate_state(self, state: dict, check) -> None:
        # the bin lists' sizes first: _reset allocates n_bins + 1 edges, so a snapshot of
        # 3 bins with n_bins=10**18 would exhaust the memory before any other check
        if self._bins_entry is not None:
            entries = [(check.at("state", self._bins_entry), check.entry(state, self._bins_entry))]
        else:
            classes = check.list(check.entry(state, "classes"), "state['classes']")
            entries = [
                (f"state['classes'][{i}][1]", check.list(pair, f"state['classes'][{i}]", n=2, what="(label, bin sums)")[1])
                for i, pair in enumerate(classes)
            ]
        for where, sums in entries:
            check.require(isinstance(sums, dict), where, "a dict of bin sums", sums)
            for key in ("n", "w", "p", "y"):
                check.list(check.entry(sums, key, where), check.at(where, key), n=self.n_bins, what="bin sums")

    def __init__(self, n_bins: int = 10, strategy: str = "uniform"):
        _check_bins(type(self).__name__, n_bins, strategy)
        self.n_bins = n_bins
        self.strategy = strategy
        super().__init__()

    # what the three equal-width metrics share: the edges, the held weight and count;
    # each keeps its sums (_reset_sums, _merge_sums, _set_sums)

    def _reset(self) -> None:
        self._edges = tuple(uniform_edges(self.n_bins))
        self._reset_sums()
        self._weight = 0.0
        self._n = 0

    _merge_refusal = None

    def _merge(self, other):
        """Both streams' held weights and counts added, and their sums merged by the
        class's ``_merge_sums``: O(n_bins) (ConfidenceECE), O(classes x n_bins)
        (TopLabelECE, ClasswiseECE)."""
        new = self.clone()
        self._merge_sums(new, other)
        new._weight = self._weight + other._weight
        new._n = self._n + other._n
        return new

    def _set_state(self, state: dict) -> None:
        self._weight = float(state["weight"])
        self._n = int(state["n"])
        self._set_sums(state)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"n_bins": 3}


# ---------------------------------------------------------------------- confidence ECE


class ConfidenceECE(_EqualWidthMetric):
    """Confidence ECE: the ECE of the top probability against "the top class is right".

    With ``h`` the largest probability of a forecast and ``c`` its class (the first such
    key in the dict's order), the events are binned by ``h`` into ``n_bins`` equal-width
    bins, and::

        ConfidenceECE = sum_b |sum_{t in b} w_t (1[y_t = c_t] - h_t)| / sum_t w_t

    the weighted mean, over bins, of the gap between accuracy and mean confidence. It
    measures confidence calibration, ``P(Y = c(X) | h(X)) = h(X)`` (Guo et al., 2017;
    Arad and Rosset, definition 2.3 and section 2.2), and equals
    :func:`streamcal.metrics.expected_calibration_error` on the binary problem
    ``(h_t, 1[y_t = c_t])``.

    The state is per-bin sums, so ``revert`` is exact (up to float rounding; a bin
    emptied by reverts is exactly zero) and ``river.utils.Rolling`` windows it.

    Parameters
    ----------
    n_bins
        Number of equal-width bins of the top probability, an int >= 1.
    strategy
        ``"uniform"`` (equal-width bins, the only choice: equal-mass bins need the
        events themselves, which :class:`TECE` keeps).

    Attributes
    ----------
    bins
        The non-empty bins, a tuple of :class:`ReliabilityBin`, for a confidence
        reliability diagram.

    Notes
    -----
    ``update`` and ``revert`` cost O(number of classes in ``y_pred``); ``get`` and
    ``bins`` cost O(``n_bins``); memory O(``n_bins``).

    Examples
    --------
    Two forecasts with top probability 0.7, one right, one wrong: accuracy 1/2 against
    confidence 0.7.

    >>> from streamcal.metrics import ConfidenceECE
    >>> m = ConfidenceECE(n_bins=5)
    >>> m.update("cat", {"cat": 0.7, "dog": 0.2, "fox": 0.1})
    >>> m.update("cat", {"cat": 0.2, "dog": 0.7, "fox": 0.1})
    >>> round(m.get(), 6)
    0.2
    >>> m.bins
    (ReliabilityBin(lower=0.6, upper=0.8, weight=2.0, mean_prediction=0.7, mean_outcome=0.5),)

    In a river rolling window of the last event:

    >>> from river import utils
    >>> rolling = utils.Rolling(ConfidenceECE, window_size=1, n_bins=5)
    >>> rolling.update("cat", {"cat": 0.7, "dog": 0.2, "fox": 0.1})
    >>> rolling.update("cat", {"cat": 0.2, "dog": 0.7, "fox": 0.1})
    >>> round(rolling.get(), 6)
    0.7

    """

    # the catalogue entry (streamcal.metrics.catalogue)
    short_name = "ece"
    aliases = ("confidence_ece",)
    description = (
        "Confidence ECE (top-class view): the ECE of each forecast's top probability "
        "against whether its top class was the outcome, in [0, 1]."
    )

    _bins_entry = "bins"

    def _reset_sums(self) -> None:
        self._sums = BinSums(self.n_bins)

    def _update(self, y, p: dict, w: float) -> None:
        top, h = top_class(p)
        self._sums.add(
            _bin_of(h, self.n_bins, self._edges), w, h, 1.0 if top == y else 0.0
        )
        self._weight += w
        self._n += 1

    def _revert(self, y, p: dict, w: float) -> None:
        top, h = top_class(p)
        k = _bin_of(h, self.n_bins, self._edges)
        if self._sums.n[k] == 0:
            raise self._not_held(y, p)
        self._n -= 1
        if self._n == 0:
            self._reset()
            return
        self._sums.remove(k, w, h, 1.0 if top == y else 0.0)
        self._weight -= w

    def get(self) -> float:
        """The confidence ECE of the events held (0.0 before any); O(n_bins)."""
        return self._sums.gap() / self._weight if self._n else 0.0

    @property
    def bins(self) -> tuple:
        """The non-empty confidence bins, a tuple of :class:`ReliabilityBin`; O(n_bins)."""
        return self._sums.bins(self._edges)

    def _get_state(self) -> dict:
        return {"weight": self._weight, "n": self._n, "bins": self._sums.state()}

    def _merge_sums(self, new, other) -> None:
        """The bins of both streams, every count and sum added. O(n_bins)."""
        new._sums = self._sums.merged(other._sums)

    def _set_sums(self, state: dict) -> None:
        self._sums = BinSums.from_state(state["bins"])

    def _check(self) -> None:
        """Assert every invariant of the state."""
        if self._n == 0:
            assert self._weight == 0.0 and self._sums.count == 0
            self._sums.check_sizes(self.n_bins)
            return
        self._sums.check(self.n_bins)
        assert self._sums.count == self._n
        assert math.isclose(self._weight, sum(self._sums.w), rel_tol=1e-9)


# ---------------------------------------------------------------------- top-label ECE


class TopLabelECE(_EqualWidthMetric):
    """Top-label ECE (Gupta and Ramdas, 2022): the confidence ECE computed separately
    for each predicted class, averaged with the weight of each class's predictions.

    With ``c`` the predicted (top) class and ``h`` its probability, the events
    predicted ``c`` are binned by ``h`` into ``n_bins`` equal-width bins, and::

        TopLabelECE = sum_c P(pred = c) * ECE_c
                    = sum_c sum_b |sum_{t in (c, b)} w_t (1[y_t = c] - h_t)| / sum_t w_t

    with ``ECE_c`` the binary ECE of ``(h, 1[y = c])`` over the events predicted ``c``
    and ``P(pred = c)`` their share of the total weight. It measures top-label
    calibration, ``P(Y = c(X) | c(X), h(X)) = h(X)`` (Gupta's thesis, definition 6):
    unlike :class:`ConfidenceECE` it conditions on the predicted class as well, so the
    errors of an over-confident class and an under-confident one cannot cancel. Since
    its bins refine those of the confidence ECE, ``TopLabelECE >= ConfidenceECE`` with
    the same ``n_bins``.

    Revertible exactly (per-bin sums; up to float rounding), so ``river.utils.Rolling``
    windows it.

    Parameters
    ----------
    n_bins
        Number of equal-width bins of the top probability, per predicted class.
    strategy
        ``"uniform"`` (equal-width bins, the only choice).

    Attributes
    ----------
    bins_by_class
        Dict ``predicted class -> tuple of ReliabilityBin`` (the non-empty bins), one
        reliability diagram per predicted class.
    ece_by_class
        Dict ``predicted class -> ECE_c``.

    Notes
    -----
    ``update`` and ``revert`` cost O(number of classes in ``y_pred``); ``get`` costs
    O(``n_bins`` x classes predicted); memory O(``n_bins`` x classes predicted).

    Examples
    --------
    The two forecasts of :class:`ConfidenceECE`'s example: "cat" at 0.7 is right once
    (gap 0.3), "dog" at 0.7 is wrong once (gap 0.7); the confidence ECE pools them
    (0.2), the top-label ECE does not.

    >>> from streamcal.metrics import TopLabelECE
    >>> m = TopLabelECE(n_bins=5)
    >>> m.update("cat", {"cat": 0.7, "dog": 0.2, "fox": 0.1})
    >>> m.update("cat", {"cat": 0.2, "dog": 0.7, "fox": 0.1})
    >>> round(m.get(), 6)                      # (0.3 + 0.7) / 2
    0.5
    >>> {c: round(e, 6) for c, e in m.ece_by_class.items()}
    {'cat': 0.3, 'dog': 0.7}

    """

    # the catalogue entry (streamcal.metrics.catalogue)
    short_name = "top_label_ece"
    description = (
        "Top-label ECE: the confidence ECE computed separately for each predicted (top) "
        "class and averaged with the weight of its predictions, in [0, 1]."
    )

    def _reset_sums(self) -> None:
        self._by_class: dict = {}

    def _update(self, y, p: dict, w: float) -> None:
        top, h = top_class(p)
        sums = self._by_class.get(top)
        if sums is None:
            sums = self._by_class[top] = BinSums(self.n_bins)
        sums.add(_bin_of(h, self.n_bins, self._edges), w, h, 1.0 if top == y else 0.0)
        self._weight += w
        self._n += 1

    def _revert(self, y, p: dict, w: float) -> None:
        top, h = top_class(p)
        k = _bin_of(h, self.n_bins, self._edges)
        sums = self._by_class.get(top)
        if sums is None or sums.n[k] == 0:
            raise self._not_held(y, p)
        self._n -= 1
        if self._n == 0:
            self._reset()
            return
        if sums.count == 1:
            del self._by_class[top]
        else:
            sums.remove(k, w, h, 1.0 if top == y else 0.0)
        self._weight -= w

    def get(self) -> float:
        """The top-label ECE of the events held (0.0 before any)."""
        if not self._n:
            return 0.0
        return sum(s.gap() for s in self._by_class.values()) / self._weight

    @property
    def bins_by_class(self) -> dict:
        """Dict ``predicted class -> tuple of ReliabilityBin`` (non-empty bins), the
        classes in order of first prediction."""
        return {c: s.bins(self._edges) for c, s in self._by_class.items()}

    @property
    def ece_by_class(self) -> dict:
        """Dict ``predicted class -> ECE`` of the events predicted that class."""
        return {c: s.gap() / sum(s.w) for c, s in self._by_class.items()}

    def _get_state(self) -> dict:
        return {
            "weight": self._weight,
            "n": self._n,
            "classes": encode_by_class(self._by_class, BinSums.state),
        }

    def _merge_sums(self, new, other) -> None:
        """The bins of each predicted class over both streams (classes in order of
        first prediction: ``self``'s, then ``other``'s new ones). O(classes x
        n_bins)."""
        new._by_class = _merge.merge_by_key(self._by_class, other._by_class, BinSums.merged)

    def _set_sums(self, state: dict) -> None:
        self._by_class = decode_by_class(state["classes"], BinSums.from_state, {})

    def _check(self) -> None:
        """Assert every invariant of the state."""
        if self._n == 0:
            assert self._weight == 0.0 and not self._by_class
            return
        for s in self._by_class.values():
            s.check(self.n_bins)
        assert sum(s.count for s in self._by_class.values()) == self._n
        assert math.isclose(
            self._weight, sum(sum(s.w) for s in self._by_class.values()), rel_tol=1e-9
        )


# ---------------------------------------------------------------------- class-wise ECE


class ClasswiseECE(ClassCounts, _EqualWidthMetric):
    """Class-wise ECE: the mean, over classes, of the binary ECE of each class's
    probability.

    For each class ``c`` held (named by an event, as ``y_true`` or as a key of
    ``y_pred``), the binary problem ``(p_c, 1[y = c])`` over *all* events (``p_c = 0``
    when ``c`` is absent from ``y_pred``) is binned into ``n_bins`` equal-width bins,
    and::

        ClasswiseECE = (1 / K) sum_c ECE_c,
        ECE_c        = sum_b |sum_{t in b} w_t (1[y_t = c] - p_{t,c})| / sum_t w_t

    with ``K`` the number of classes held. This is the cw-ECE of Arad and Rosset
    (section 2.2, definition 2.2's class-wise calibration; Nixon et al.'s static
    calibration error, SCE, and Kull et al.'s class-wise ECE).

    With two classes whose probabilities never fall on an inner bin edge,
    ``ECE_c`` is the same for both classes (bin ``k`` of ``p`` is bin ``n_bins - 1 -
    k`` of ``1 - p``, and the gaps are opposite), so the class-wise ECE equals the
    binary :func:`~streamcal.metrics.expected_calibration_error` of either class.

    Revertible exactly (per-class, per-bin sums; up to float rounding), so
    ``river.utils.Rolling`` windows it; a class no event of the window names is
    dropped from the mean.

    Parameters
    ----------
    n_bins
        Number of equal-width bins of each class's probability.
    strategy
        ``"uniform"`` (equal-width bins, the only choice).

    Attributes
    ----------
    classes
        The classes held, in order of first appearance.
    bins_by_class
        Dict ``class -> tuple of ReliabilityBin`` (non-empty bins): one reliability
        diagram per class, events where the class is absent counted at probability 0.
    ece_by_class
        Dict ``class -> ECE_c``.

    Notes
    -----
    Only the classes in ``y_pred`` with a positive probability, and ``y_true``, touch
    the bins: ``update`` and ``revert`` cost O(number of classes in ``y_pred``), ``get``
    O(``n_bins`` x classes), memory O(``n_bins`` x classes).

    Examples
    --------
    >>> from streamcal.metrics import ClasswiseECE
    >>> m = ClasswiseECE(n_bins=5)
    >>> m.update("cat", {"cat": 0.7, "dog": 0.2, "fox": 0.1})
    >>> m.update("cat", {"cat": 0.2, "dog": 0.7, "fox": 0.1})
    >>> {c: round(e, 6) for c, e in m.ece_by_class.items()}
    {'cat': 0.55, 'dog': 0.45, 'fox': 0.1}
    >>> round(m.get(), 6)                      # (0.55 + 0.45 + 0.1) / 3
    0.366667

    """

    # the catalogue entry (streamcal.metrics.catalogue)
    short_name = "classwise_ece"
    description = (
        "Class-wise ECE (every class's view): the mean over the classes of the binary ECE "
        "of each class's probability over equal-width bins, in [0, 1]."
    )

    def _reset_sums(self) -> None:
        self._refs: dict = {}
        self._by_class: dict = {}

    def _touches(self, y, p: dict):
        """The (class, probability, outcome) entries of an event that enter the bins:
        every class with a positive probability, and ``y_true``."""
        for c, pc in p.items():
            if c == y:
                yield c, pc, 1.0
            elif pc > 0.0:
                yield c, pc, 0.0
        if y not in p:
            yield y, 0.0, 1.0

    def _update(self, y, p: dict, w: float) -> None:
        self._mention(y, p)
        n_bins, edges, by_class = self.n_bins, self._edges, self._by_class
        for c, pc, yc in self._touches(y, p):
            sums = by_class.get(c)
            if sums is None:
                sums = by_class[c] = BinSums(n_bins)
            sums.add(_bin_of(pc, n_bins, edges), w, pc, yc)
        self._weight += w
        self._n += 1

    def _revert(self, y, p: dict, w: float) -> None:
        n_bins, edges, by_class = self.n_bins, self._edges, self._by_class
        entries = [
            (c, pc, yc, _bin_of(pc, n_bins, edges)) for c, pc, yc in self._touches(y, p)
        ]
        if not self._held(y, p) or any(
            c not in by_class or by_class[c].n[k] == 0 for c, _, _, k in entries
        ):
            raise self._not_held(y, p)
        self._n -= 1
        if self._n == 0:
            self._reset()
            return
        for c, pc, yc, k in entries:
            by_class[c].remove(k, w, pc, yc)
        for c in self._unmention(y, p):
            by_class.pop(c, None)
        for c, _, _, _ in entries:
            if c in by_class and by_class[c].count == 0:
                del by_class[c]
        self._weight -= w

    def get(self) -> float:
        """The class-wise ECE of the events held (0.0 before any); O(n_bins x classes)."""
        if not self._n:
            return 0.0
        return sum(s.gap() for s in self._by_class.values()) / (
            self._weight * len(self._refs)
        )

    @property
    def ece_by_class(self) -> dict:
        """Dict ``class -> ECE_c`` (the binary ECE of that class's probability)."""
        weight = self._weight
        by_class = self._by_class
        return {
            c: (by_class[c].gap() / weight if c in by_class else 0.0)
            for c in self._refs
        }

    @property
    def bins_by_class(self) -> dict:
        """Dict ``class -> tuple of ReliabilityBin`` (non-empty bins); the events in
        which the class is absent (or has probability 0 and is not the outcome) count
        in bin 0 at prediction 0 and outcome 0."""
        out = {}
        for c in self._refs:
            s = self._by_class.get(c)
            if s is None:
                out[c] = (
                    ReliabilityBin(
                        self._edges[0], self._edges[1], self._weight, 0.0, 0.0
                    ),
                )
                continue
            missing = self._n - s.count
            extra = max(self._weight - sum(s.w), 0.0) if missing else 0.0
            out[c] = s.bins(self._edges, extra, missing)
        return out

    def _get_state(self) -> dict:
        return {
            "weight": self._weight,
            "n": self._n,
            "refs": encode_by_class(self._refs, int),
            "classes": encode_by_class(self._by_class, BinSums.state),
        }

    def _merge_sums(self, new, other) -> None:
        """The classes (their event counts added) and the bins of each class over both
        streams, classes in order of first appearance (``self``'s, then ``other``'s
        new ones). O(classes x n_bins)."""
        new._refs = _merge.merge_by_key(self._refs, other._refs, operator.add)
        new._by_class = _merge.merge_by_key(self._by_class, other._by_class, BinSums.merged)

    def _set_sums(self, state: dict) -> None:
        memo: dict = {}
        self._refs = decode_by_class(state["refs"], int, memo)
        self._by_class = decode_by_class(state["classes"], BinSums.from_state, memo)

    def _check(self) -> None:
        """Assert every invariant of the state."""
        if self._n == 0:
            assert self._weight == 0.0 and not self._refs and not self._by_class
            return
        assert all(k >= 1 for k in self._refs.values())
        assert set(self._by_class) <= set(self._refs)
        for s in self._by_class.values():
            s.check(self.n_bins)
            assert s.count <= self._n
            assert sum(s.w) <= self._weight * (1 + 1e-9)


def __getattr__(name):
    # TECE moved to _tece.py; pickles written before name it here (PEP 562)
    if name == "TECE":
        from streamcal.metrics._tece import TECE

        return TECE
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
