"""Sorted cumulative isotonic regression (SCIR) refitted on a sliding window: the
river-style shell over :mod:`streamcal.core.scir`."""

from __future__ import annotations

import math

import numpy as np

from streamcal import _validation as V
from streamcal._classes import decode_label, encode_label
from streamcal.calibrators._refit import (
    DEFAULT_REFIT_EVERY,
    DEFAULT_WINDOW_SIZE,
    _RefitMulticlass,
    check_refit_params,
)
from streamcal.core.scir import SCIRMap, fit_scir

__all__ = ["SCIR"]


class SCIR(_RefitMulticlass):
    """Sorted cumulative isotonic regression (Arad and Rosset, section 4.2), refitted
    on the last ``window_size`` events every ``refit_every`` events.

    Each event ``(p, y)`` over ``K`` classes gives ``K - 1`` points: for each rank
    ``r``, the cumulative probability ``q_r`` of the ``r`` most probable classes and
    whether the label is among them. The calibration map ``g(q, r)`` is the isotonic
    regression of those outcomes in both coordinates at once (non-decreasing in the
    cumulative probability and in the rank), fitted exactly by recursive
    maximal-upper-set splitting with the paper's grid dynamic programme
    (:mod:`streamcal.core.scir`). To predict, the probabilities are sorted, the class
    at rank ``r`` gets ``g(q_r, r) - g(q_{r-1}, r - 1)`` (with ``g = 0`` at rank 0 and
    1 at rank ``K``), and the vector is floored at ``epsilon`` and renormalised.

    Parameters
    ----------
    window_size
        Number of most recent events the map is fitted on.
    refit_every
        The map is refitted after every ``refit_every``-th ``learn_one`` call
        (zero-weight events included: they take a place in the window but teach
        nothing).
    epsilon
        Floor of every calibrated probability before the renormalisation (the paper
        adds "a small epsilon" so that no probability is 0); 0 keeps exact zeros.

    Attributes
    ----------
    classes
        The classes seen so far (as labels or keys of ``scores``, whatever the
        weight), in order of first appearance.
    fitted_classes
        The classes of the latest fit, in the order of the map's columns: those
        with positive probability in, or the label of, an event of positive weight
        of the window. Empty before the first fit.
    calibration_map
        The :class:`~streamcal.core.scir.SCIRMap` of the latest fit (None before
        it, or when the window held no event of positive weight).

    Notes
    -----
    **Between fitted points** the map follows the paper's grid rule (appendix A.1):
    ``g(q, r)`` is the largest fitted value among the fitted points ``(q', r')`` with
    ``q' <= q`` and ``r' <= r``, and the smallest fitted value if there is none, a
    step rule that keeps the map monotone in both coordinates, so every difference is
    non-negative.

    **Ties.** Classes of equal probability share the mean of their differences, and
    an outcome at a rank inside a tie group counts as the fraction of the orders of
    the tied classes that put the label in the top ``r``: the fit and the prediction
    do not depend on the order of the classes.

    **Classes.** A class the latest fit has not seen (new in ``scores``, or with no
    positive probability and no label in the window's weighted events) keeps its raw
    probability; the fitted classes' probabilities, renormalised to sum to 1, are
    calibrated and share the rest
    (:meth:`~streamcal.base.MulticlassCalibrator._merge_unknown`). A fitted class
    absent from ``scores`` has probability 0 and may get calibrated mass. Before the
    first fit (and after a refit on a window without positive weight) ``predict_one``
    returns the scores themselves.

    **Cost.** ``learn_one`` O(K) for K classes in the event, plus the refit every
    ``refit_every`` events: O(n K^2 d) for the ``n`` events of the window and a split
    tree of depth ``d`` (see :mod:`streamcal.core.scir`), about 5 ms for 2,000 events
    and 0.05 s for 12,500 events over 5 classes (``benchmarks/bench_multiclass.py``).
    ``predict_one`` O(K log K + K log B) for a map of ``B`` steps per rank. Memory
    O(window_size K).

    Examples
    --------
    A forecaster over three classes, over-confident in its top class:

    >>> from streamcal import SCIR
    >>> cal = SCIR(window_size=100, refit_every=20)
    >>> cal.predict_one({"a": 0.8, "b": 0.15, "c": 0.05})   # before any fit
    {'a': 0.8, 'b': 0.15, 'c': 0.05}
    >>> for i in range(20):
    ...     cal.learn_one({"a": 0.8, "b": 0.15, "c": 0.05}, "abcaabacab"[i % 10])
    >>> cal.fitted_classes
    ('a', 'b', 'c')
    >>> {c: round(p, 3) for c, p in cal.predict_one({"a": 0.8, "b": 0.15, "c": 0.05}).items()}
    {'a': 0.5, 'b': 0.3, 'c': 0.2}

    A class the fit has never seen keeps its raw probability:

    >>> {c: round(p, 3) for c, p in cal.predict_one({"a": 0.4, "b": 0.1, "z": 0.5}).items()}
    {'a': 0.25, 'b': 0.15, 'c': 0.1, 'z': 0.5}

    """

    def __init__(
        self,
        window_size: int = DEFAULT_WINDOW_SIZE,
        refit_every: int = DEFAULT_REFIT_EVERY,
        epsilon: float = 1e-6,
    ):
        name = type(self).__name__
        check_refit_params(name, window_size, refit_every)
        V.check_real(
            epsilon,
            name,
            "epsilon",
            lambda x: 0.0 <= x < 1.0,
            "a real number in [0, 1)",
        )
        self.window_size = window_size
        self.refit_every = refit_every
        self.epsilon = epsilon
        self._reset()

    def _reset(self) -> None:
        # window events: (class indices, probabilities) of the positive probabilities
        # only (not every key, as _push stores), the label's index and the weight
        self._reset_window()
        self._map: SCIRMap | None = None
        self._fit_classes: tuple = ()
        self._fit_index: dict = {}

    @classmethod
    def _unit_test_params(cls):
        yield {"window_size": 60, "refit_every": 20}
        yield {"window_size": 45, "refit_every": 7, "epsilon": 0.0}
        yield {}

    # ------------------------------------------------------------------ properties

    @property
    def fitted_classes(self) -> tuple:
        """The classes of the latest fit, in the order of the map's columns."""
        return self._fit_classes

    @property
    def calibration_map(self) -> SCIRMap | None:
        """The fitted map of the latest refit (None before it)."""
        return self._map

    # ------------------------------------------------------------------ learning

    def learn_one(self, scores: dict, label, w: float = 1.0) -> None:
        """Add one event to the window; refit when due. O(K), plus the refit (see
        the class Notes).

        Parameters
        ----------
        scores
            Dict class -> probability, summing to 1 (within 1e-6); a class left out
            has probability 0.
        label
            The observed class (any hashable value but NaN).
        w
            Sample weight, a finite real number >= 0.
        """
        scores, label, w = self._check_event(scores, label, w)
        self._window.check_room(w, "SCIR", "learn_one")
        index = self._classes
        classes = self._class_list
        idx = []
        vals = []
        for c, p in scores.items():
            i = index.get(c)
            if i is None:
                i = index[c] = len(classes)
                classes.append(c)
            if p > 0.0:
                idx.append(i)
                vals.append(p)
        y = index.get(label)
        if y is None:
            y = index[label] = len(classes)
            classes.append(label)
        if self._window.push((tuple(idx), tuple(vals), y, w)):
            self._refit(self._window.events(), classes)

    def _refit(self, events: list, classes: list) -> None:
        """Fit the map on ``events``, ``(class indices, probabilities, label index,
        w)`` tuples with indices into ``classes``. O(n K) plus :func:`fit_scir`."""
        rows: list = []
        cols: list = []
        vals: list = []
        labels: list = []
        ws: list = []
        for idx, v, y, w in events:
            if w > 0.0:
                rows.extend([len(labels)] * len(idx))
                cols.extend(idx)
                vals.extend(v)
                labels.append(y)
                ws.append(w)
        if not labels:
            self._map = None
            self._fit_classes = ()
            self._fit_index = {}
            return
        fitted = sorted(set(cols).union(labels))
        col = np.zeros(len(classes), dtype=np.int64)
        col[fitted] = np.arange(len(fitted))
        P = np.zeros((len(labels), len(fitted)))
        P[rows, col[cols]] = vals
        self._map = fit_scir(P, col[labels], np.array(ws))
        self._fit_classes = tuple(classes[i] for i in fitted)
        self._fit_index = {c: j for j, c in enumerate(self._fit_classes)}

    def _fit_events(self, events: list) -> None:
        """Replace the fit by SCIR fitted on ``events``, a list of valid ``(scores,
        label, w)`` (the refit hook of :mod:`streamcal.checks.multiclass`). O(n K)
        plus :func:`~streamcal.core.scir.fit_scir`."""
        index: dict = {}
        classes: list = []
        encoded = []
        for scores, label, w in events:
            idx = []
            vals = []
            for c, p in scores.items():
                if c not in index:
                    index[c] = len(classes)
                    classes.append(c)
                if p > 0.0:
                    idx.append(index[c])
                    vals.append(p)
            if label not in index:
                index[label] = len(classes)
                classes.append(label)
            encoded.append((tuple(idx), tuple(vals), index[label], w))
        self._refit(encoded, classes)

    # ------------------------------------------------------------------ prediction

    def predict_one(self, scores: dict) -> dict:
        """The calibrated probability vector for ``scores`` (see the class Notes for
        unknown classes). O(K log K + K log B)."""
        scores = self._check_scores(scores)
        fit = self._map
        if fit is None:
            return dict(scores)
        index = self._fit_index
        K = len(index)
        p = [0.0] * K
        unknown = False
        for c, v in scores.items():
            i = index.get(c, -1)
            if i < 0:
                unknown = True
            else:
                p[i] = v
        if unknown:
            s = math.fsum(p)
            if s <= 0.0:
                return self._merge_unknown(
                    dict.fromkeys(self._fit_classes, 1.0), scores
                )
            p = [v / s for v in p]
        cal = dict(zip(self._fit_classes, fit.predict(p, self.epsilon)))
        return self._merge_unknown(cal, scores) if unknown else cal

    # ------------------------------------------------------------------ state

    def _get_state(self) -> dict:
        return {
            **self._window_state(),
            "map": None if self._map is None else self._map.to_list(),
            "fitted_classes": [encode_label(c) for c in self._fit_classes],
        }

    def _set_state(self, state: dict) -> None:
        memo: dict = {}
        self._load_window_state(state, memo)
        self._map = None if state["map"] is None else SCIRMap.from_list(state["map"])
        self._fit_classes = tuple(
            decode_label(c, memo) for c in state["fitted_classes"]
        )
        self._fit_index = {c: j for j, c in enumerate(self._fit_classes)}

    def _check(self) -> None:
        """Assert the invariants of the window and of the fitted map."""
        self._window._check()
        assert self._classes == {c: i for i, c in enumerate(self._class_list)}
        for idx, vals, y, w in self._window.events():
            assert len(idx) == len(vals) and all(
                0 <= i < len(self._class_list) for i in idx
            )
            assert (
                all(v > 0.0 for v in vals)
                and 0 <= y < len(self._class_list)
                and w >= 0.0
            )
        if self._map is None:
            assert self._fit_classes == () and self._fit_index == {}
        else:
            self._map._check()
            assert self._map.n_classes == len(self._fit_classes) == len(self._fit_index)
            assert self._fit_index == {c: j for j, c in enumerate(self._fit_classes)}
