"""TECE, the thresholded equal-mass class-wise ECE of multiclass forecasts (Nixon et
al., 2019, their TACE; the TECE of Arad and Rosset, section 2.2).

It shares the conventions of the other multiclass calibration metrics (see
:mod:`streamcal.metrics._multiclass`): classes discovered as they appear, a class
missing from ``y_pred`` has probability 0, zero-weight events change nothing. Its state
is the events themselves, per class and sorted, so its bins are equal-mass rather than
equal-width.
"""

from __future__ import annotations

import bisect
import heapq
import math
import operator

from streamcal import _validation as V
from streamcal._classes import ClassCounts, decode_by_class, encode_by_class
from streamcal._merge import merge_by_key
from streamcal.metrics._binned import ReliabilityBin, _check_n_bins
from streamcal.metrics._multiclass import MulticlassCalibrationMetric

__all__ = ["TECE"]


class TECE(ClassCounts, MulticlassCalibrationMetric):
    """Thresholded equal-mass class-wise ECE (Nixon et al., 2019, "TACE"; the TECE of
    Arad and Rosset, section 2.2).

    For each class ``c`` held, keep the events whose probability of ``c`` exceeds the
    threshold, ``p_c > threshold``; sort them by ``p_c`` and cut them into ``n_bins``
    equal-mass bins; the class's ECE is the weighted gap over those bins, and TECE is
    their mean over the ``K`` classes held::

        TECE  = (1 / K) sum_c ECE_c,
        ECE_c = sum_b |sum_{t in b} w_t (1[y_t = c] - p_{t,c})| / sum_{t kept for c} w_t

    with ``ECE_c = 0`` when no event is kept for ``c``. Two things set it apart from
    :class:`ClasswiseECE`: the threshold drops the mass of tiny probabilities that
    would otherwise fill the lowest bin and dilute every class's error, and equal-mass
    bins do not leave a few events alone in a sparse bin, where the gap is mostly noise
    ("this approach can overemphasize observations in small bins", Arad and Rosset).
    It also differs from :class:`TopLabelECE`, which looks only at the top class of
    each forecast: TECE looks at every class's probability above the threshold.

    Equal-mass bins, with weights and ties: among the kept events sorted by ``p_c``, a
    group of equal probabilities whose predecessors weigh ``W_below`` (of a total
    ``W_c``) goes to bin ``min(n_bins - 1, floor(n_bins * W_below / W_c))``. Ties are
    never split; with unit weights and distinct probabilities the bins hold
    ``floor(n_c / n_bins)`` or ``ceil(n_c / n_bins)`` events.

    The state is the events themselves (per class, sorted), so ``revert`` is exact and
    ``river.utils.Rolling`` windows the metric; without a window the memory grows with
    the stream.

    Parameters
    ----------
    n_bins
        Number of equal-mass bins per class, an int >= 1 (Arad and Rosset use 15).
    threshold
        Probabilities ``<= threshold`` are left out (strictly above is kept, as in
        Nixon et al.'s reference code), a real number in [0, 1), or None (default) for
        ``1 / K`` with ``K`` the number of classes held, the threshold Arad and Rosset
        use (Nixon et al. suggest a small fixed value such as 0.01). With a fixed
        threshold only the probabilities above it are stored; with None, every
        positive one, since ``1 / K`` falls as classes appear.

    Attributes
    ----------
    classes
        The classes held, in order of first appearance.
    bins_by_class
        Dict ``class -> tuple of ReliabilityBin`` over the kept events, each bin
        spanning its smallest to its largest probability.
    ece_by_class
        Dict ``class -> ECE_c``.

    Notes
    -----
    ``update`` costs O(log n_c + n_c) per class with a stored probability (a bisection
    and a list insertion, a fast memory move), ``revert`` the same; ``get`` costs
    O(total stored entries); memory O(total stored entries), at most the number of
    events times the number of classes per forecast.

    Examples
    --------
    Threshold ``1/3`` for three classes: only the two probabilities 0.7 are kept, one
    for "cat" (right, gap 0.3), one for "dog" (wrong, gap 0.7); "fox" keeps nothing.

    >>> from streamcal.metrics import TECE
    >>> m = TECE(n_bins=5)
    >>> m.update("cat", {"cat": 0.7, "dog": 0.2, "fox": 0.1})
    >>> m.update("cat", {"cat": 0.2, "dog": 0.7, "fox": 0.1})
    >>> round(m.get(), 6)                      # (0.3 + 0.7 + 0) / 3
    0.333333
    >>> m.bins_by_class["cat"]
    (ReliabilityBin(lower=0.7, upper=0.7, weight=1.0, mean_prediction=0.7, mean_outcome=1.0),)

    """

    # the catalogue entry (streamcal.metrics.catalogue)
    short_name = "tece"
    description = (
        "Thresholded equal-mass class-wise ECE (every class's view): the mean over the "
        "classes of the ECE of each class's probabilities above a threshold, over "
        "equal-mass bins, in [0, 1]."
    )

    def __init__(self, n_bins: int = 10, threshold: float | None = None):
        _check_n_bins("TECE", n_bins)
        if threshold is not None:
            V.check_real(
                threshold,
                "TECE",
                "threshold",
                lambda x: 0.0 <= x < 1.0,
                "a real number in [0, 1) or None",
            )
        self.n_bins = n_bins
        self.threshold = threshold
        super().__init__()

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"n_bins": 3, "threshold": 0.0}

    def _reset(self) -> None:
        self._refs: dict = {}
        # class -> sorted list of (p_c, 1[y = c], w) with p_c above the storage floor
        self._events: dict = {}
        self._floor = 0.0 if self.threshold is None else float(self.threshold)
        self._n = 0
        self._weight_held = 0.0  # the weight held: a bound on every class's stored weight

    @property
    def _weight_capacity(self) -> float:
        return V.weight_capacity(self.n_bins)  # the equal-mass cuts multiply a weight by n_bins

    @property
    def _held_weight(self) -> float:
        return self._weight_held

    def _update(self, y, p: dict, w: float) -> None:
        self._weight_held += w
        self._mention(y, p)
        floor, events = self._floor, self._events
        for c, pc in p.items():
            if pc > floor:
                store = events.get(c)
                if store is None:
                    events[c] = [(pc, 1.0 if c == y else 0.0, w)]
                else:
                    bisect.insort(store, (pc, 1.0 if c == y else 0.0, w))
        self._n += 1

    def _revert(self, y, p: dict, w: float) -> None:
        floor, events = self._floor, self._events
        where = []
        for c, pc in p.items():
            if pc > floor:
                entry = (pc, 1.0 if c == y else 0.0, w)
                store = events.get(c)
                i = -1 if store is None else bisect.bisect_left(store, entry)
                if i < 0 or i == len(store) or store[i] != entry:
                    raise self._not_held(y, p)
                where.append((c, store, i))
        if not self._held(y, p):
            raise self._not_held(y, p)
        self._n -= 1
        if self._n == 0:
            self._reset()
            return
        self._weight_held -= w
        for c, store, i in where:
            del store[i]
            if not store:
                del events[c]
        self._unmention(y, p)

    def _threshold(self) -> float:
        return (
            1.0 / len(self._refs) if self.threshold is None else float(self.threshold)
        )

    def _class_bins(self, store: list, threshold: float):
        """Equal-mass bins of the entries above ``threshold``: a list of per-bin
        ``[weight, sum w p, sum w y, lowest p, highest p]`` (None when empty) and the
        kept weight."""
        start = bisect.bisect_right(store, (threshold, math.inf))
        n_bins = self.n_bins
        total = 0.0
        for i in range(start, len(store)):
            total += store[i][2]
        bins = [None] * n_bins
        below = 0.0
        i, n = start, len(store)
        while i < n:
            p0 = store[i][0]
            k = int(n_bins * below / total)
            if k >= n_bins:
                k = n_bins - 1
            b = bins[k]
            if b is None:
                b = bins[k] = [0.0, 0.0, 0.0, p0, p0]
            group = 0.0
            while i < n and store[i][0] == p0:
                _, yi, wi = store[i]
                group += wi
                b[1] += wi * p0
                b[2] += wi * yi
                i += 1
            b[0] += group
            b[4] = p0
            below += group
        return bins, total

    def _ece_of(self, store: list, threshold: float) -> float:
        bins, total = self._class_bins(store, threshold)
        if total <= 0.0:
            return 0.0
        return sum(abs(b[2] - b[1]) for b in bins if b is not None) / total

    def get(self) -> float:
        """The TECE of the events held (0.0 before any); O(total stored entries)."""
        if not self._n:
            return 0.0
        t = self._threshold()
        return sum(self._ece_of(s, t) for s in self._events.values()) / len(self._refs)

    @property
    def ece_by_class(self) -> dict:
        """Dict ``class -> ECE_c`` over the events kept for it (0.0 when none)."""
        t = self._threshold() if self._refs else 0.0
        return {
            c: (self._ece_of(self._events[c], t) if c in self._events else 0.0)
            for c in self._refs
        }

    @property
    def bins_by_class(self) -> dict:
        """Dict ``class -> tuple of ReliabilityBin`` (non-empty equal-mass bins of the
        kept events; a class with none has an empty tuple)."""
        t = self._threshold() if self._refs else 0.0
        out = {}
        for c in self._refs:
            store = self._events.get(c)
            if store is None:
                out[c] = ()
                continue
            bins, _ = self._class_bins(store, t)
            out[c] = tuple(
                ReliabilityBin(b[3], b[4], b[0], b[1] / b[0], b[2] / b[0])
                for b in bins
                if b is not None
            )
        return out

    def _get_state(self) -> dict:
        return {
            "n": self._n,
            "refs": encode_by_class(self._refs, int),
            "events": encode_by_class(self._events, _encode_events),
            "weight_held": self._weight_held,
        }

    _merge_refusal = None

    def _merge(self, other):
        """The classes (their event counts added) and, per class, the sorted entries
        of both streams merged in order. O(entries held) per class; the state is that
        of one metric fed both streams, entry for entry, so ``get()`` is equal bit for
        bit."""
        new = self.clone()
        new._refs = merge_by_key(self._refs, other._refs, operator.add)
        new._events = merge_by_key(
            self._events, other._events, lambda x, y: list(heapq.merge(x, y))
        )
        new._n = self._n + other._n
        new._weight_held = self._weight_held + other._weight_held
        return new

    def _set_state(self, state: dict) -> None:
        self._n = int(state["n"])
        memo: dict = {}
        self._refs = decode_by_class(state["refs"], int, memo)
        self._events = decode_by_class(state["events"], _decode_events, memo)
        self._weight_held = float(state["weight_held"])

    @classmethod
    def _upgrade_snapshot(cls, params: dict, state: dict, fmt: int):
        """A snapshot written before the weight rule (no ``weight_held``) gets the
        bound from its stores: the largest per-class weight held."""
        if not isinstance(state, dict) or "weight_held" in state:
            return params, state
        try:
            held = max(
                (math.fsum(e[2] for e in events) for _, events in state["events"]),
                default=0.0,
            )
        except (AttributeError, IndexError, KeyError, TypeError, ValueError):
            return params, state  # malformed: the checks name the entry
        return params, {**state, "weight_held": held}

    def _check(self) -> None:
        """Assert every invariant of the state."""
        if self._n == 0:
            assert not self._refs and not self._events
            return
        assert all(k >= 1 for k in self._refs.values())
        assert set(self._events) <= set(self._refs)
        for store in self._events.values():
            assert store, "empty store kept"
            assert store == sorted(store), store
            assert len(store) <= self._n
            for p, y, w in store:
                assert self._floor < p <= 1.0 and y in (0.0, 1.0) and w > 0.0, (p, y, w)
            assert math.fsum(e[2] for e in store) <= self._weight_held * (1 + 1e-12), "weight held below a class's weight"


def _encode_events(store: list) -> list:
    return [list(e) for e in store]


def _decode_events(data: list) -> list:
    return [(float(p), float(y), float(w)) for p, y, w in data]
