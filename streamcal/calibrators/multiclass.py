"""Multiclass calibration baselines: temperature scaling on a sliding window, and the
top-label and class-wise wrappers that make any binary calibrator multiclass.

All three are :class:`~streamcal.base.MulticlassCalibrator`: ``learn_one(scores,
label, w)`` with ``scores`` a dict class -> probability (river's ``predict_proba_one``
output) and ``predict_one(scores)`` a dict that sums to 1; classes are discovered as
they appear, as labels or as keys of ``scores`` (whatever the event's weight).
"""

from __future__ import annotations

import math

import numpy as np

from streamcal import _snapshot
from streamcal import _validation as V
from streamcal._classes import ClassIndex, decode_label, encode_label, top_class
from streamcal.base import BinaryCalibrator, MulticlassCalibrator, takes_float_score
from streamcal.calibrators._refit import (
    DEFAULT_REFIT_EVERY,
    DEFAULT_WINDOW_SIZE,
    _RefitMulticlass,
    check_refit_params,
)
from streamcal.core.temperature import T_MAX, T_MIN, fit_temperature

__all__ = ["ClassWise", "TemperatureScaling", "TopLabel"]

_exp = math.exp


def _softmax(z: dict) -> dict:
    """``softmax`` of a dict of finite logits. O(K)."""
    m = max(z.values())
    e = {c: _exp(v - m) for c, v in z.items()}
    total = sum(e.values())
    return {c: v / total for c, v in e.items()}


# ------------------------------------------------------------------ temperature

_INPUTS = ("probabilities", "logits")


class _RefitScaling(_RefitMulticlass):
    """What the scalings refitted on a window share (:class:`TemperatureScaling`; vector,
    matrix and Dirichlet scaling in :mod:`streamcal.calibrators.matrix_scaling`): the
    ``input`` they take, probabilities or logits, and their cold start, the scores read
    as probabilities."""

    input = "probabilities"

    def _init_window(self, window_size, refit_every, input) -> None:
        """Check ``window_size``, ``refit_every`` and ``input``; store the first two."""
        name = type(self).__name__
        check_refit_params(name, window_size, refit_every)
        V.check_param(
            name,
            "input",
            input,
            isinstance(input, str) and input in _INPUTS,
            "a str among {'probabilities', 'logits'}",
        )
        self.window_size = window_size
        self.refit_every = refit_every

    @property
    def _logits(self) -> bool:  # read by the base class's validation
        return self.input == "logits"

    def _cold_start_value(self, scores: dict) -> dict:
        return _softmax(scores) if self._logits else dict(scores)


class TemperatureScaling(_RefitScaling):
    """Temperature scaling refitted on a sliding window: ``softmax(z / T)`` with ``T``
    fitted by maximum likelihood on the last ``window_size`` events.

    With ``input="probabilities"`` (default) the logits are ``z = log p``, so the
    calibrated vector is ``p ** (1 / T)`` renormalised: a class of probability 0 keeps
    probability 0, and a dict that leaves a class out means the same as one that gives
    it 0. With ``input="logits"``, ``scores`` are logits (any finite reals, e.g. a
    network's outputs or log-probabilities; only their differences matter) and the
    output is ``softmax(scores / T)``.

    ``T`` minimises the weighted negative log-likelihood of the window's events,
    a convex function of ``1 / T``, by the safeguarded Newton method of
    :func:`streamcal.core.temperature.fit_temperature`, within ``[0.01, 100]``. Events
    whose label had probability 0 (or no logit) are left out of the fit: their loss is
    infinite at every temperature.

    Parameters
    ----------
    window_size
        Number of most recent events the temperature is fitted on.
    refit_every
        The temperature is refitted after every ``refit_every``-th ``learn_one`` call
        (zero-weight events included).
    input
        ``"probabilities"`` (``scores`` a probability vector) or ``"logits"``.

    Attributes
    ----------
    temperature
        The temperature of the latest fit; None before the first fit (or when no event
        of the window informed it).
    classes
        The classes seen so far, in order of first appearance.

    Notes
    -----
    Before the first fit, ``predict_one`` returns the scores themselves (with
    ``input="logits"``: their softmax, the temperature 1). A class the latest fit has
    not seen (it named no event of the window then) is not rescaled: its raw
    probability (with logits: its softmax probability at temperature 1) passes
    through, and the calibrated classes share the rest
    (:meth:`~streamcal.base.MulticlassCalibrator._merge_unknown`).

    Cost: ``learn_one`` O(K) for K classes in the event, plus the refit, O(window_size
    K) per Newton iteration (about 5 to 10 iterations), every ``refit_every`` events;
    ``predict_one`` O(K). Memory O(window_size K).

    Examples
    --------
    An over-confident forecaster whose top class, announced at 0.9, is right 70% of
    the time:

    >>> from streamcal import TemperatureScaling
    >>> cal = TemperatureScaling(window_size=100, refit_every=10)
    >>> cal.predict_one({"a": 0.9, "b": 0.1})   # before any fit: the scores
    {'a': 0.9, 'b': 0.1}
    >>> for i in range(10):
    ...     cal.learn_one({"a": 0.9, "b": 0.1}, "a" if i < 7 else "b")
    >>> round(cal.temperature, 3)
    2.593
    >>> {c: round(p, 3) for c, p in cal.predict_one({"a": 0.9, "b": 0.1}).items()}
    {'a': 0.7, 'b': 0.3}

    On logits:

    >>> cal = TemperatureScaling(window_size=100, refit_every=4, input="logits")
    >>> for y in ["x", "x", "y", "x"]:
    ...     cal.learn_one({"x": 4.0, "y": 0.0}, y)
    >>> {c: round(p, 3) for c, p in cal.predict_one({"x": 4.0, "y": 0.0}).items()}
    {'x': 0.75, 'y': 0.25}

    """

    def __init__(
        self,
        window_size: int = DEFAULT_WINDOW_SIZE,
        refit_every: int = DEFAULT_REFIT_EVERY,
        input: str = "probabilities",
    ):
        self._init_window(window_size, refit_every, input)
        self.input = input
        self._reset()

    def _reset(self) -> None:
        self._reset_window()
        self._beta = None  # 1 / temperature of the latest fit
        self._fit_classes: dict = {}  # the classes the latest fit saw (an ordered set)

    @classmethod
    def _unit_test_params(cls):
        yield {"window_size": 60, "refit_every": 20}
        yield {"window_size": 50, "refit_every": 7, "input": "logits"}
        yield {}

    @property
    def temperature(self) -> float | None:
        """The fitted temperature (None before the first fit)."""
        return None if self._beta is None else 1.0 / self._beta

    # ------------------------------------------------------------------ learning

    def _refit_window(self) -> None:
        """Fit on the window, read as flat lists of global class indices (the columns
        in order of first appearance in the window, as :meth:`_fit_events` orders
        them, so both give the same fit)."""
        events = self._window.events()
        order = dict.fromkeys(i for e in events for i in (*e[0], e[2]))
        remap = np.zeros(len(self._class_list), dtype=np.intp)
        remap[list(order)] = np.arange(len(order))
        self._fit_flat(
            [len(e[0]) for e in events],
            remap[np.fromiter((i for e in events for i in e[0]), dtype=np.intp)],
            [v for e in events for v in e[1]],
            remap[np.fromiter((e[2] for e in events), dtype=np.intp)],
            [e[3] for e in events],
            [self._class_list[i] for i in order],
        )

    def _fit_events(self, events: list) -> None:
        """Replace the fit by temperature scaling fitted on ``events``, a list of valid
        ``(scores, label, w)`` (the refit hook of :mod:`streamcal.checks.multiclass`).
        O(n K) plus the Newton iterations."""
        col: dict = {}
        cols, labels = [], []
        for s, y, _ in events:
            for k in s:
                cols.append(col.setdefault(k, len(col)))
            labels.append(col.setdefault(y, len(col)))
        self._fit_flat(
            [len(e[0]) for e in events],
            cols,
            [v for e in events for v in e[0].values()],
            labels,
            [e[2] for e in events],
            list(col),
        )

    def _fit_flat(self, lengths, cols, vals, labels, ws, classes) -> None:
        """Fit on events given as flat lists: the number of classes of each, their
        columns and values (concatenated), the label columns, the weights, and the
        class of each column."""
        n = len(lengths)
        Z = np.full((n, max(len(classes), 1)), -np.inf)
        v = np.asarray(vals, dtype=np.float64)
        if not self._logits:
            with np.errstate(divide="ignore"):
                v = np.log(v)  # probability 0 -> -inf: absent
        Z[np.repeat(np.arange(n), lengths), np.asarray(cols, dtype=np.intp)] = v
        t = fit_temperature(
            Z,
            np.asarray(labels, dtype=np.intp),
            np.asarray(ws, dtype=np.float64),
            T_MIN,
            T_MAX,
        )
        self._beta = None if t is None else 1.0 / t
        self._fit_classes = dict.fromkeys(classes)

    # ------------------------------------------------------------------ prediction

    def predict_one(self, scores: dict) -> dict:
        """The calibrated probability vector for ``scores``. O(K)."""
        scores = self._check_scores(scores)
        beta = self._beta
        if self.input == "logits":
            if beta is None:
                return _softmax(scores)
            known = self._fit_classes
            zk = {c: z for c, z in scores.items() if c in known}
            if not zk:
                return _softmax(scores)
            cal = _softmax({c: beta * z for c, z in zk.items()})
            if len(cal) == len(scores):
                return cal
            return self._merge_unknown(cal, _softmax(scores))
        if beta is None:
            return dict(scores)
        known = self._fit_classes
        m = 0.0
        for c, p in scores.items():
            if p > m and c in known:
                m = p
        cal = {}
        if m > 0.0:
            total = 0.0
            for c, p in scores.items():
                if c in known:
                    e = (p / m) ** beta if p > 0.0 else 0.0
                    cal[c] = e
                    total += e
            for c in cal:
                cal[c] /= total
        else:  # every calibrated class has probability 0
            cal = {c: 0.0 for c in scores if c in known}
        if len(cal) == len(scores):
            return cal
        return self._merge_unknown(cal, scores)

    # ------------------------------------------------------------------ state

    def _get_state(self) -> dict:
        return {
            **self._window_state(),
            "beta": self._beta,
            "fit_classes": [encode_label(c) for c in self._fit_classes],
        }

    def _validate_state(self, state: dict, check) -> None:
        super()._validate_state(state, check)
        known = set(map(repr, self._validate_classes(check.entry(state, "classes"), check)))
        fit = self._validate_classes(check.entry(state, "fit_classes"), check,
                                     "state['fit_classes']")
        for i, c in enumerate(fit):
            check.require(repr(c) in known, f"state['fit_classes'][{i}]",
                          "a class of state['classes']", c)
        beta = check.entry(state, "beta")
        if beta is not None:  # 1 / T, T fitted within [T_MIN, T_MAX]
            check.real(beta, "state['beta']", 1.0 / T_MAX, 1.0 / T_MIN,
                       f"None or a real in [{1.0 / T_MAX}, {1.0 / T_MIN}] (1 / temperature)")

    def _set_state(self, state: dict) -> None:
        memo: dict = {}
        self._load_window_state(state, memo)
        self._beta = state["beta"]
        self._fit_classes = dict.fromkeys(
            decode_label(c, memo) for c in state["fit_classes"]
        )


# ------------------------------------------------------------------ wrappers


def _check_calibrator(owner: str, calibrator) -> None:
    V.check_instance_param(owner, "calibrator", calibrator, (BinaryCalibrator,))
    # each class's calibrator is fed one probability: not a tuple of forecasts
    V.check_param(owner, "calibrator", calibrator, takes_float_score(calibrator),
                  "a calibrator taking a float score")


def _wrapper_test_params():
    from streamcal.calibrators import HistogramBinning, OnlineIsotonic, OnlinePlatt

    yield {"calibrator": OnlineIsotonic()}
    yield {"calibrator": OnlinePlatt()}
    yield {"calibrator": HistogramBinning(n_bins=5, window_size=40)}


class _Wrapper(ClassIndex, MulticlassCalibrator):
    """Shared shell of the multiclass-to-binary wrappers: a BinaryCalibrator template,
    the class registry and one fitted clone per class index (None: none yet)."""

    def __init__(self, calibrator: BinaryCalibrator):
        _check_calibrator(type(self).__name__, calibrator)
        self.calibrator = calibrator
        self._reset()

    def _reset(self) -> None:
        self._reset_classes()
        self._calibrators: list = []  # by class index

    def _weights_surely_fit(self, w) -> bool:
        # an event reaches some of the class calibrators (or a new clone of the
        # template): all of them vouching is sufficient. O(classes)
        return self.calibrator._weights_surely_fit(w) and all(
            cal._weights_surely_fit(w) for cal in self._calibrators if cal is not None
        )

    @classmethod
    def _unit_test_params(cls):
        yield from _wrapper_test_params()

    def learn_one(self, scores: dict, label, w: float = 1.0) -> None:
        """Update the binary calibrators the event concerns: :class:`TopLabel` the top
        class's (O(K) plus one binary ``learn_one``), :class:`ClassWise` every known
        class's (O(K) binary ``learn_one`` calls).

        Parameters
        ----------
        scores
            Dict class -> probability, summing to 1.
        label
            The observed class (any hashable value but NaN).
        w
            Sample weight, a finite real number >= 0.
        """
        self._learn_events([self._check_event(scores, label, w)], "learn_one")

    def learn_many(self, scores, labels, w=None) -> None:
        """Learn from a batch, exactly as a loop of ``learn_one`` would; atomic: the
        whole batch is validated, and every binary calibrator asked whether it accepts
        the weights of its events (:meth:`~streamcal.base.BinaryCalibrator._weight_refusal`),
        before anything is learnt. A refused weight raises the ValueError naming ``w``
        and its index, with the state unchanged."""
        events = self._check_batch(scores, labels, w, "learn_many")
        if events:
            self._learn_events(events, "learn_many")

    def _learn_events(self, events: list, method: str) -> None:
        """Learn validated events ``(scores, label, w)`` in turn, or raise the weight
        rule's error for the first one a binary calibrator would refuse, before
        anything changes."""
        raise NotImplementedError

    def _refuse(self, events: list, i: int, method: str) -> ValueError:
        """The weight rule's error for event ``i`` of ``events`` (its index named in a
        batch method)."""
        where = f" at index {i}" if method != "learn_one" else ""
        return V.weight_overflow_error(type(self).__name__, method, events[i][2], where)

    def _get_state(self) -> dict:
        return {
            "classes": self._classes_state(),
            "calibrators": [
                None if c is None else c.to_dict() for c in self._calibrators
            ],
        }

    def _validate_state(self, state: dict, check) -> None:
        # one calibrator (or None) per class, each of the template's class and parameters
        K = len(self._validate_classes(check.entry(state, "classes"), check))
        cals = check.list(check.entry(state, "calibrators"), "state['calibrators']", n=K, what="calibrator snapshots")
        template = self.calibrator
        for i, c in enumerate(cals):
            if c is None:
                continue
            where = f"state['calibrators'][{i}]"
            ok = isinstance(c, dict) and c.get("class") == _snapshot.class_key(type(template))
            check.require(ok, where, f"None or a snapshot of a {type(template).__name__}", c)
            cal = type(template).from_dict(c)
            check.require(
                cal._get_params() == template._get_params(), where,
                "a snapshot with the parameters of the 'calibrator' parameter", c["params"],
            )

    def _set_state(self, state: dict) -> None:
        self._load_classes(state["classes"], {})
        self._calibrators = [
            None if c is None else BinaryCalibrator.from_dict(c)
            for c in state["calibrators"]
        ]


class TopLabel(_Wrapper):
    """Top-label calibration: any binary calibrator made multiclass by the top-label
    reduction (Gupta and Ramdas, 2022; Gupta's thesis, chapter 4).

    For each class ``c`` that has been the predicted (top) class, a clone of
    ``calibrator`` learns ``(top probability, 1[label == c])`` from the events whose
    top class is ``c``, so the top probability becomes calibrated conditionally on the
    predicted class. The top class of a vector is its first key with the largest
    probability (ties broken by the dict's order, as river does).

    Prediction: the top class ``t`` gets ``h' = g_t(h)``, the calibrated top
    probability; the other classes share ``1 - h'`` in proportion to their scores (the
    ranking is kept whenever ``h' >= `` the second probability). If the other classes
    have no mass at all, ``1 - h'`` is spread evenly over the other known classes
    (or, when there is none, ``t`` keeps all the mass).

    Parameters
    ----------
    calibrator
        A :class:`~streamcal.base.BinaryCalibrator`; each class gets an unfitted clone.
        The wrapper adds no prior of its own: the top probability is what the clone
        says, so ``TopLabel(OnlineIsotonic())`` inherits the exact isotonic fit's 0 and
        1 (a pure block makes the top class certain, or certainly wrong). To keep
        forecasts off 0 and 1, give the binary calibrator a prior,
        ``TopLabel(OnlineIsotonic(prior_strength=2))`` (what the short name
        ``top_label`` builds, :mod:`streamcal.registry`), or wrap a calibrator that
        never says 0 or 1 (``VennAbers()``, ``HistogramBinning()`` with its default
        prior).

    Attributes
    ----------
    classes
        The classes seen so far, in order of first appearance.
    calibrators
        Dict class -> the fitted binary calibrator of the events where that class was
        on top.

    Notes
    -----
    A vector whose top class has never been on top of a learnt event (in particular
    before any learning) is returned unchanged. A class never seen keeps its raw
    probability, the others share the rest
    (:meth:`~streamcal.base.MulticlassCalibrator._merge_unknown`).

    Learning is atomic: a weight the top class's calibrator refuses raises its
    ValueError naming ``w`` with the state unchanged; ``learn_many`` asks every
    calibrator about the weights of its events
    (:meth:`~streamcal.base.BinaryCalibrator._weight_refusal`) before any learns, and
    names the index of the first refused one.

    Cost: ``learn_one`` and ``predict_one`` are O(K) plus one call of the binary
    calibrator's ``learn_one`` / ``predict_one``; ``learn_many`` adds one weight check
    per class on top in the batch (O(its events) for OnlineIsotonic without
    ``half_life`` and for IRP, else a dry run on a copy, O(state)). Memory: one binary
    calibrator per class that has been on top.

    Examples
    --------
    >>> from streamcal import OnlineIsotonic, TopLabel
    >>> cal = TopLabel(OnlineIsotonic())
    >>> for s, y in [({"a": 0.8, "b": 0.2}, "a"), ({"a": 0.8, "b": 0.2}, "b"),
    ...              ({"a": 0.3, "b": 0.7}, "b"), ({"a": 0.9, "b": 0.1}, "a")]:
    ...     cal.learn_one(s, y)
    >>> cal.predict_one({"a": 0.8, "c": 0.1, "b": 0.1})  # "c": never seen, kept
    {'a': 0.45, 'b': 0.45, 'c': 0.1}
    >>> sorted(cal.calibrators)
    ['a', 'b']

    Over the exact fit, "a" on top at 0.9 is certain (one event, right); under the
    prior, ``(1 + 2 * 1/2) / (1 + 2)``:

    >>> cal.predict_one({"a": 0.9, "b": 0.1})
    {'a': 1.0, 'b': 0.0}
    >>> hedged = TopLabel(OnlineIsotonic(prior_strength=2))
    >>> for s, y in [({"a": 0.8, "b": 0.2}, "a"), ({"a": 0.8, "b": 0.2}, "b"),
    ...              ({"a": 0.3, "b": 0.7}, "b"), ({"a": 0.9, "b": 0.1}, "a")]:
    ...     hedged.learn_one(s, y)
    >>> {c: round(p, 4) for c, p in hedged.predict_one({"a": 0.9, "b": 0.1}).items()}
    {'a': 0.6667, 'b': 0.3333}

    """

    @property
    def _merge_refusal(self) -> str | None:
        reason = self.calibrator._merge_refusal
        if reason is None:
            return None
        return f"its per-class {type(self.calibrator).__name__} calibrators cannot ({reason})"

    def _merge(self, other):
        """Each event trains the calibrator of its top class only, so the merge is the
        per-class merge of the two sides' calibrators (a class only one side saw keeps
        a copy of its calibrator); classes in order of first appearance (``self``'s,
        then ``other``'s new ones). Cost: the per-class merges, O(K) of them; exact as
        the binary calibrator's merge is."""
        new = self.clone()
        for c in (*self._class_list, *other._class_list):
            if c not in new._classes:
                new._classes[c] = len(new._class_list)
                new._class_list.append(c)
        mine, theirs = self.calibrators, other.calibrators
        cals = [None] * len(new._class_list)
        for c, i in new._classes.items():
            a, b = mine.get(c), theirs.get(c)
            if a is not None and b is not None:
                cals[i] = a.merge(b)
            elif a is not None or b is not None:
                one = a if a is not None else b
                cals[i] = one.merge(one.clone())  # a new calibrator equal to ``one``
        new._calibrators = cals
        return new

    @property
    def calibrators(self) -> dict:
        """Dict class -> its fitted binary calibrator (those that exist)."""
        return {
            self._class_list[i]: c
            for i, c in enumerate(self._calibrators)
            if c is not None
        }

    def _learn_events(self, events: list, method: str) -> None:
        # the events of each top class, and its calibrator (a new clone for a class
        # without one): each is asked about its own events before any learns
        classes, cals = self._classes, self._calibrators
        if len(events) == 1:  # one calibrator learns: its own refusal is atomic
            (s, y, w), = events
            top, h = top_class(s)
            i = classes.get(top)
            cal = cals[i] if i is not None and i < len(cals) else None
            new = cal is None
            if new:
                cal = self.calibrator.clone()
            # first the binary calibrator, which may refuse the weight (its own error)
            # unchanged: then nothing has changed here either
            cal.learn_one(h, y == top, w)
            self._discover(s, y)
            if new:
                i = classes[top]
                if len(cals) <= i:
                    cals.extend([None] * (i + 1 - len(cals)))
                cals[i] = cal
            return
        plan: dict = {}  # top class -> (its calibrator, a new clone if none, [event indices])
        tops = []
        for j, (s, y, _) in enumerate(events):
            top, h = top_class(s)
            tops.append((top, h))
            entry = plan.get(top)
            if entry is None:
                i = classes.get(top)
                cal = cals[i] if i is not None and i < len(cals) else None
                entry = plan[top] = (cal if cal is not None else self.calibrator.clone(), [])
            entry[1].append(j)
        first = len(events)
        for top, (cal, idx) in plan.items():
            r = cal._weight_refusal(
                [tops[j][1] for j in idx], [events[j][1] == top for j in idx], [events[j][2] for j in idx]
            )
            if r >= 0 and idx[r] < first:
                first = idx[r]
        if first < len(events):
            raise self._refuse(events, first, method)
        for (s, y, w), (top, h) in zip(events, tops):
            cal = plan[top][0]
            cal.learn_one(h, y == top, w)
            self._discover(s, y)
            i = classes[top]
            if len(cals) <= i:
                cals.extend([None] * (i + 1 - len(cals)))
            cals[i] = cal

    def predict_one(self, scores: dict) -> dict:
        """The calibrated probability vector for ``scores``. O(K) plus one binary
        ``predict_one``."""
        scores = self._check_scores(scores)
        top, h = top_class(scores)
        i = self._classes.get(top)
        cals = self._calibrators
        if i is None or i >= len(cals) or cals[i] is None:
            return dict(scores)
        hc = cals[i].predict_one(h)
        known = self._classes
        others = [(c, p) for c, p in scores.items() if c in known and c != top]
        mass = sum(p for _, p in others)
        cal = {top: hc}
        if mass > 0.0:
            f = (1.0 - hc) / mass
            for c, p in others:
                cal[c] = p * f
        else:
            rest = [c for c in self._class_list if c != top]
            if rest:
                v = (1.0 - hc) / len(rest)
                for c in rest:
                    cal[c] = v
            else:
                cal[top] = 1.0
        if all(c in cal for c in scores):
            return cal
        return self._merge_unknown(cal, scores)


class ClassWise(_Wrapper):
    """Class-wise calibration: any binary calibrator made multiclass by the one-vs-rest
    (class-wise) reduction (Zadrozny and Elkan, 2002; Gupta's thesis, chapter 4).

    Each class ``c`` has its own clone of ``calibrator``, which learns ``(p_c, 1[label
    == c])`` from every event from the class's discovery on (``p_c = 0`` when ``c`` is
    missing from ``scores``). Prediction: ``g_c(p_c)`` for every known class,
    normalised to sum to 1 (evenly spread if they are all 0) unless ``normalize=False``.

    Parameters
    ----------
    calibrator
        A :class:`~streamcal.base.BinaryCalibrator`; each class gets an unfitted clone.
        The wrapper adds no prior of its own: ``ClassWise(OnlineIsotonic())`` inherits
        the exact isotonic fit's 0 and 1, so a class whose block never held its label
        gets probability 0 (and after the normalisation another may get 1). To keep
        forecasts off 0 and 1, give the binary calibrator a prior,
        ``ClassWise(OnlineIsotonic(prior_strength=0.5))`` (what the short name
        ``class_wise`` builds, :mod:`streamcal.registry`), or wrap a calibrator that
        never says 0 or 1 (``VennAbers()``, ``HistogramBinning()`` with its default
        prior).
    normalize
        Divide the calibrated values by their sum, so that the output is a probability
        vector (the default, as in netcal and in Zadrozny and Elkan). The division
        changes every class's value by the same factor, which can break the class-wise
        guarantee that ``g_c(p_c)`` is calibrated for class ``c``: with
        ``normalize=False`` each value is its class's own calibrated probability
        ``g_c(p_c)`` and the vector need not sum to 1 (a class never seen keeps its raw
        probability).

    Attributes
    ----------
    classes
        The classes seen so far, in order of first appearance.
    calibrators
        Dict class -> its fitted binary calibrator.

    Notes
    -----
    Every known class appears in the output, including one missing from ``scores``
    (raw probability 0, which its calibrator may map above 0). Before any learning,
    ``predict_one`` returns the scores themselves; a class never seen keeps its raw
    probability and the known classes share the rest
    (:meth:`~streamcal.base.MulticlassCalibrator._merge_unknown`).

    Learning is atomic: before any calibrator learns, every class's calibrator is asked
    whether it accepts the weights of the events it would learn
    (:meth:`~streamcal.base.BinaryCalibrator._weight_refusal`); a weight one of them
    would refuse raises the ValueError naming ``w`` (and, in ``learn_many``, its index)
    with every calibrator and the classes as they were.

    Cost: ``learn_one`` and ``predict_one`` are O(K) calls of the binary calibrator's
    ``learn_one`` / ``predict_one``, K the number of known classes, plus the K weight
    checks: O(1) each for OnlineIsotonic without ``half_life`` and for IRP, else a dry
    run on a copy of the calibrator (O(its state)). Memory: K binary calibrators.

    Examples
    --------
    >>> from streamcal import ClassWise, OnlineIsotonic
    >>> cal = ClassWise(OnlineIsotonic())
    >>> for s, y in [({"a": 0.8, "b": 0.2}, "a"), ({"a": 0.6, "b": 0.4}, "b"),
    ...              ({"a": 0.3, "b": 0.7}, "b"), ({"a": 0.9, "b": 0.1}, "a")]:
    ...     cal.learn_one(s, y)
    >>> cal.predict_one({"a": 0.8, "b": 0.2})
    {'a': 1.0, 'b': 0.0}
    >>> cal.predict_one({"a": 0.6, "b": 0.4})
    {'a': 0.0, 'b': 1.0}

    The same events under the prior of the short name ``class_wise``: no class is
    certain any more ("a" at 0.8: ``(1 + 0.5 / 2) / (1 + 0.5)``; "b" at 0.2:
    ``(0 + 0.5 / 2) / (1 + 0.5)``; they sum to 1 here):

    >>> hedged = ClassWise(OnlineIsotonic(prior_strength=0.5))
    >>> for s, y in [({"a": 0.8, "b": 0.2}, "a"), ({"a": 0.6, "b": 0.4}, "b"),
    ...              ({"a": 0.3, "b": 0.7}, "b"), ({"a": 0.9, "b": 0.1}, "a")]:
    ...     hedged.learn_one(s, y)
    >>> {c: round(p, 4) for c, p in hedged.predict_one({"a": 0.8, "b": 0.2}).items()}
    {'a': 0.8333, 'b': 0.1667}

    Without the normalisation each class keeps its own fit (here the vector sums to
    0.5, where the normalised one turns the 0.5 into a certain 1.0):

    >>> events = [({"a": 0.6, "b": 0.3, "c": 0.1}, "a"),
    ...           ({"a": 0.5, "b": 0.1, "c": 0.4}, "c"),
    ...           ({"a": 0.2, "b": 0.5, "c": 0.3}, "a")]
    >>> raw, normalised = ClassWise(OnlineIsotonic(), normalize=False), ClassWise(OnlineIsotonic())
    >>> for s, y in events:
    ...     raw.learn_one(s, y)
    ...     normalised.learn_one(s, y)
    >>> raw.predict_one({"a": 0.5, "b": 0.3, "c": 0.2})
    {'a': 0.5, 'b': 0.0, 'c': 0.0}
    >>> normalised.predict_one({"a": 0.5, "b": 0.3, "c": 0.2})
    {'a': 1.0, 'b': 0.0, 'c': 0.0}

    """

    _merge_refusal = (
        "each event trains the calibrators of the classes known at its arrival, so "
        "which events a class's calibrator learnt depends on how the two streams "
        "interleave"
    )

    def __init__(self, calibrator: BinaryCalibrator, normalize: bool = True):
        V.check_param(
            type(self).__name__, "normalize", normalize, isinstance(normalize, bool), "a bool"
        )
        self.normalize = normalize
        super().__init__(calibrator)

    @classmethod
    def _unit_test_params(cls):
        from streamcal.calibrators import OnlineIsotonic

        yield from _wrapper_test_params()
        yield {"calibrator": OnlineIsotonic(), "normalize": False}

    def _more_tags(self) -> set[str]:
        tags = super()._more_tags()
        return tags if self.normalize else tags | {"unnormalised"}

    @property
    def calibrators(self) -> dict:
        """Dict class -> its fitted binary calibrator."""
        return dict(zip(self._class_list, self._calibrators))

    def _validate_state(self, state: dict, check) -> None:
        # every known class has its calibrator from its discovery on (unlike TopLabel's,
        # none is missing): a None would fail the first predict_one
        super()._validate_state(state, check)
        for i, c in enumerate(state["calibrators"]):
            check.require(
                c is not None, f"state['calibrators'][{i}]",
                f"a snapshot of a {type(self.calibrator).__name__} (every class has one)", c,
            )

    def _learn_events(self, events: list, method: str) -> None:
        # the classes the events will discover (without discovering them yet), each
        # with its calibrator (a new clone for a new class) and its first event: every
        # calibrator is asked about the events it would learn before any learns
        index, cals = self._classes, self._calibrators
        new: dict = {}  # class -> index of the event that discovers it
        for j, (s, y, _) in enumerate(events):
            for k in (*s, y):
                if k not in index and k not in new:
                    new[k] = j
        # (a class registered without a calibrator, by a subclass, gets one now too)
        pending = self._class_list[len(cals):]
        clones = [self.calibrator.clone() for _ in range(len(pending) + len(new))]
        pairs = [(c, cal, 0) for c, cal in zip(self._class_list, cals)]
        pairs += [(c, cal, 0) for c, cal in zip(pending, clones)]
        pairs += [(c, cal, j) for (c, j), cal in zip(new.items(), clones[len(pending):])]
        first = len(events)
        for c, cal, j0 in pairs:
            if j0 >= first:
                continue
            part = events[j0:first]
            r = cal._weight_refusal(
                [s.get(c, 0.0) for s, _, _ in part], [y == c for _, y, _ in part], [w for _, _, w in part]
            )
            if r >= 0:
                first = j0 + r
        if first < len(events):
            raise self._refuse(events, first, method)
        classes, n0 = self._class_list, len(cals)
        for s, y, w in events:
            self._discover(s, y)  # the classes of ``new``, in its order (after ``pending``)
            while len(cals) < len(classes):
                cals.append(clones[len(cals) - n0])
            get = s.get
            for c, cal in zip(classes, cals):
                cal.learn_one(get(c, 0.0), y == c, w)

    def predict_one(self, scores: dict) -> dict:
        """The calibrated probability vector for ``scores``. O(K) binary
        ``predict_one`` calls."""
        scores = self._check_scores(scores)
        classes = self._class_list
        if not classes:
            return dict(scores)
        get = scores.get
        cal = {
            c: g.predict_one(get(c, 0.0)) for c, g in zip(classes, self._calibrators)
        }
        if not self.normalize:
            for c, p in scores.items():
                cal.setdefault(c, p)
            return cal
        total = sum(cal.values())
        if total > 0.0:
            for c in cal:
                cal[c] /= total
        else:
            v = 1.0 / len(cal)
            for c in cal:
                cal[c] = v
        if all(c in cal for c in scores):
            return cal
        return self._merge_unknown(cal, scores)
