"""Isotonic recursive partitioning refitted on a sliding window: :class:`IRP` (binary
scores) and :class:`MulticlassIRP` (probability vectors), thin shells over the pure batch
functions of :mod:`streamcal.core.irp`.

Two classes rather than one: a calibrator is either a
:class:`~streamcal.base.BinaryCalibrator` (a float score in, a float out) or a
:class:`~streamcal.base.MulticlassCalibrator` (a dict in, a dict out), and the two
interfaces, checks and cold starts differ.

No certain forecast by accident (issue 13): both value their regions under the prior of
:mod:`streamcal.core.prior` (``prior_strength``; defaults
:data:`DEFAULT_BINARY_PRIOR_STRENGTH`, from ``simulations/priors.py``, and
:data:`DEFAULT_PRIOR_STRENGTH`, from ``simulations/priors_multiclass.py``), so that no
forecast is 0 or 1 (no class gets probability 0) from a region that never saw the
other label. Snapshots written before ``prior_strength`` existed restore with
``prior_strength=0``, the calibrator they were.
"""

from __future__ import annotations

import math
from bisect import bisect_right

import numpy as np

from streamcal import _validation as V
from streamcal._classes import decode_label, encode_label
from streamcal.base import BinaryCalibrator
from streamcal.calibrators._refit import (
    DEFAULT_REFIT_EVERY,
    DEFAULT_WINDOW_SIZE,
    REFIT_WEIGHT_CAPACITY,
    PriorAddedLater,
    RefitWindow,
    _RefitMulticlass,
    check_refit_params,
)
from streamcal.core.fir import events_to_arrays
from streamcal.core.irp import capped_grid_size, fit_irp, fit_multiclass_irp

__all__ = ["IRP", "MulticlassIRP"]

#: The default ``prior_strength`` of :class:`MulticlassIRP`
#: (``simulations/priors_multiclass.py``, table in ``simulations/README.md``).
DEFAULT_PRIOR_STRENGTH = 1.0

#: The default ``prior_strength`` of :class:`IRP`
#: (``simulations/priors.py``, table in ``simulations/README.md``).
DEFAULT_BINARY_PRIOR_STRENGTH = 4.0


def _check_irp_params(name, max_bins, smoothing, window_size, refit_every):
    """Check the parameters both IRP classes share; return ``smoothing`` as stored."""
    V.check_optional_int_param(name, "max_bins", max_bins, 1)
    smoothing = V.check_nonnegative_param(name, "smoothing", smoothing)
    check_refit_params(name, window_size, refit_every)
    return smoothing


class IRP(PriorAddedLater, BinaryCalibrator):
    """Isotonic recursive partitioning of the last ``window_size`` events, refitted
    every ``refit_every`` events.

    At each refit the calibrator is :func:`streamcal.core.irp.fit_irp` applied to the
    window: regions of the score line are split, the one of largest gain first, at the
    threshold that maximises the centred sum of the labels above it (Luss, Rosset and
    Shahar, 2012; Berta, Bach and Jordan, 2024, section 2.4). Every intermediate fit is
    non-decreasing; run to completion (``max_bins=None``) the fit is the isotonic
    regression (PAV) of the window.

    Parameters
    ----------
    max_bins
        Stop splitting before the number of bins would exceed this (early stopping;
        None: the full isotonic regression).
    smoothing
        Laplace smoothing ``lam >= 0`` of the bin means: a bin of mean ``ybar``
        predicts ``(ybar + lam) / (1 + 2 lam)``, the minimiser of the cross entropy
        regularised by ``-lam log p`` per class and event used by Berta et al.; keeps
        the end bins away from 0 and 1. It does not move the bins.
    prior_strength
        Weight ``a >= 0`` of the prior's pseudo-event (:mod:`streamcal.core.prior`, in
        units of an event's weight, label 1/2): a bin of weight ``W`` and label sum
        ``S`` predicts ``(S + a / 2) / (W + a)`` (then smoothed), strictly inside (0, 1)
        when ``a > 0``, and a split is kept only while these values stay
        non-decreasing (:func:`streamcal.core.irp.fit_irp`). 0 is the plain fit, which
        says 0 or 1 in a bin that saw one label only; default 4 (of the strengths 0
        to 8 on the four rain logs of ``simulations/priors.py``: within 0.0023 of the
        lowest log loss on every log, Brier score within 0.0002 and ECE within
        0.0036 of the best; the plain fit forecast 0 or 1 in 1,718 to 3,632 hours
        per log, log loss 0.26 to 0.34; with ``a > 0`` no fitted value is 0 or 1,
        log loss 0.14 to 0.16).
    window_size
        Number of most recent events the fit uses.
    refit_every
        Refit after every ``refit_every``-th event (whatever its weight).

    Attributes
    ----------
    edges, values
        The bins of the latest fit: a score ``s`` gets ``values[bisect_right(edges, s)]``
        (edges are the smallest scores of the bins; a score between two seen scores
        takes the value of the bin below). Empty before the first fit.
    n_bins
        Number of bins of the latest fit (0 before it).
    n_events
        Number of ``learn_one`` calls so far.

    Notes
    -----
    Before the first refit (or after a refit on a window without positive weight)
    ``predict_one`` returns the score itself. Zero-weight events take a window slot and
    count for the refit schedule but teach nothing.

    Cost: ``learn_one`` O(1), plus every ``refit_every`` events a refit, O(n log n +
    n * depth) for ``n = window_size`` (``depth`` of the split tree; O(n^2) at worst).
    ``learn_many`` makes only the last refit of the batch that a loop would make (the
    earlier ones would be overwritten). ``predict_one`` O(log bins). Memory
    O(window_size).

    Examples
    --------
    >>> from streamcal import IRP
    >>> cal = IRP(prior_strength=0, window_size=100, refit_every=6)
    >>> cal.predict_one(0.35)                   # before the first refit: the score
    0.35
    >>> for s, y in [(0.1, 0), (0.2, 0), (0.3, 1), (0.4, 0), (0.6, 1), (0.9, 1)]:
    ...     cal.learn_one(s, y)
    >>> cal.edges, cal.values
    ((0.3, 0.6), (0.0, 0.5, 1.0))
    >>> cal.predict_one(0.35), cal.predict_one(0.95)
    (0.5, 1.0)

    Early stopping and smoothing:

    >>> cal = IRP(max_bins=2, smoothing=0.05, prior_strength=0, window_size=100, refit_every=6)
    >>> cal.learn_many([0.1, 0.2, 0.3, 0.4, 0.6, 0.9], [0, 0, 1, 0, 1, 1])
    >>> [round(v, 4) for v in cal.values]
    [0.0455, 0.7273]

    The default prior, a pseudo-event of weight 4 and label 1/2, keeps the end bins
    off 0 and 1 (the lowest bin, two events labelled 0, says ``(0 + 2) / (2 + 4)``):

    >>> cal = IRP(window_size=100, refit_every=6)
    >>> cal.learn_many([0.1, 0.2, 0.3, 0.4, 0.6, 0.9], [0, 0, 1, 0, 1, 1])
    >>> [round(v, 4) for v in cal.values]
    [0.3333, 0.5, 0.6667]

    """

    _monotone = True
    _bounded_memory_params = ("window_size",)

    _merge_refusal = (
        "it is refitted on its last window_size events every refit_every events; that "
        "window, and the schedule of refits, depend on how the two streams interleave"
    )

    def __init__(
        self,
        max_bins: int | None = None,
        smoothing: float = 0.0,
        window_size: int = DEFAULT_WINDOW_SIZE,
        refit_every: int = DEFAULT_REFIT_EVERY,
        prior_strength: float = DEFAULT_BINARY_PRIOR_STRENGTH,
    ):
        name = type(self).__name__
        smoothing = _check_irp_params(name, max_bins, smoothing, window_size, refit_every)
        prior_strength = V.check_nonnegative_param(name, "prior_strength", prior_strength)
        self.max_bins = max_bins
        self.smoothing = smoothing
        self.prior_strength = prior_strength
        self.window_size = window_size
        self.refit_every = refit_every
        self._reset()

    def _reset(self) -> None:
        self._window = RefitWindow(self.window_size, self.refit_every)
        self._edges: list = []
        self._values: list = []  # empty: no fit, predict the score

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"window_size": 50, "refit_every": 10}
        yield {"max_bins": 3, "smoothing": 0.05, "window_size": 80, "refit_every": 25}
        yield {"window_size": 50, "refit_every": 10, "prior_strength": 0}
        yield {"max_bins": 4, "window_size": 60, "refit_every": 7, "prior_strength": 0.5}

    # ------------------------------------------------------------------ learning

    def learn_one(self, score: float, label: bool | int, w: float = 1.0) -> None:
        """Add one event to the window; refit when due. O(1) plus the refit.

        Parameters
        ----------
        score
            The model's score, a real number in [0, 1].
        label
            The observed outcome: 0, 1, False or True.
        w
            Sample weight, a finite real number >= 0.
        """
        s = V.check_score(score, "IRP", "learn_one")
        y = V.check_label(label, "IRP", "learn_one")
        w = V.check_weight(w, "IRP", "learn_one")
        self._window.check_room(w, "IRP", "learn_one")
        if self._window.push((s, y, w)):
            self._fit_events(self._window.events())

    def _weights_surely_fit(self, w) -> bool:
        return self._window.surely_fits(w)

    def _learn_many_validated(self, scores, labels, w) -> None:
        n = len(scores)
        window = self._window
        window.check_batch(w.tolist(), "IRP", "learn_many")
        before = window.n_pushed
        last = (
            (before + n) // self.refit_every * self.refit_every
        )  # pushes at the last refit
        events = list(zip(scores.tolist(), labels.tolist(), w.tolist()))
        cut = last - before if last > before else 0
        for event in events[max(0, cut - self.window_size) : cut]:
            window.push(event)
        window.n_pushed = (
            before + cut
        )  # the events skipped above left the window anyway
        if cut:
            self._fit_events(window.events())
        for event in events[cut:]:
            window.push(event)

    def _predict_learn_many_validated(self, scores, labels, w):
        self._window.check_batch(w.tolist(), "IRP", "predict_learn_many")  # atomic
        return super()._predict_learn_many_validated(scores, labels, w)

    def _fit_events(self, events: list) -> None:
        """Replace the fit by :func:`~streamcal.core.irp.fit_irp` on ``events``, a list
        of ``(score, label, w)``."""
        if events:
            s, y, w = (np.array(col, dtype=np.float64) for col in zip(*events))
        else:
            s = y = w = np.zeros(0)
        fit = fit_irp(
            s,
            y,
            w,
            max_bins=self.max_bins,
            smoothing=self.smoothing,
            prior_strength=self.prior_strength,
        )
        self._edges = fit.edges.tolist()
        self._values = [] if fit.empty else fit.values.tolist()

    # ------------------------------------------------------------------ prediction

    def predict_one(self, score: float) -> float:
        """The calibrated probability for ``score``; O(log bins)."""
        s = V.check_score(score, "IRP", "predict_one")
        values = self._values
        if not values:
            return s
        return values[bisect_right(self._edges, s)]

    def _predict_many_validated(self, scores: np.ndarray) -> np.ndarray:
        if not self._values:
            return scores.astype(np.float64, copy=True)
        return np.asarray(self._values)[
            np.searchsorted(np.asarray(self._edges), scores, side="right")
        ]

    # ------------------------------------------------------------------ views

    @property
    def edges(self) -> tuple:
        """Inner edges of the latest fit's bins (a tuple)."""
        return tuple(self._edges)

    @property
    def values(self) -> tuple:
        """Values of the latest fit's bins (a tuple, one more than :attr:`edges`)."""
        return tuple(self._values)

    @property
    def n_bins(self) -> int:
        """Number of bins of the latest fit (0 before any fit)."""
        return len(self._values)

    @property
    def n_events(self) -> int:
        """Number of events learnt."""
        return self._window.n_pushed

    # ------------------------------------------------------------------ state

    def _get_state(self) -> dict:
        return {
            "window": self._window.to_list(),
            "edges": list(self._edges),
            "values": list(self._values),
        }

    def _validate_state(self, state: dict, check) -> None:
        n_pushed, events = check.list(check.entry(state, "window"), "state['window']", n=2, what="(n_pushed, events)")
        events = check.binary_events(events, "state['window'][1]", self.window_size)
        check.int(n_pushed, "state['window'][0]", len(events))
        check.weight_total((e[2] for e in events), "state['window'][1]", REFIT_WEIGHT_CAPACITY)
        check.require(
            len(events) == min(n_pushed, self.window_size), "state['window'][1]",
            f"a list of min(n_pushed, window_size) = {min(n_pushed, self.window_size)} events",
            events,
        )
        edges = check.list(check.entry(state, "edges"), "state['edges']")
        values = check.list(check.entry(state, "values"), "state['values']")
        check.require(
            len(values) in (0, len(edges) + 1), "state['values']",
            f"an empty list or a list of len(edges) + 1 = {len(edges) + 1} values", values,
        )
        for i, x in enumerate(edges):
            check.real(x, f"state['edges'][{i}]", edges[i - 1] if i else 0.0, 1.0)
        for i, v in enumerate(values):
            check.real(v, f"state['values'][{i}]", 0.0, 1.0)

    def _set_state(self, state: dict) -> None:
        self._window = RefitWindow(self.window_size, self.refit_every)
        self._window.load(state["window"])
        self._edges = [float(x) for x in state["edges"]]
        self._values = [float(x) for x in state["values"]]


class MulticlassIRP(PriorAddedLater, _RefitMulticlass):
    """Multiclass isotonic recursive partitioning (Berta, Bach and Jordan, 2024,
    Algorithm 2) of the last ``window_size`` events, refitted every ``refit_every``
    events.

    At each refit the calibrator is :func:`streamcal.core.irp.fit_multiclass_irp`
    applied to the window: the simplex of the window's classes is split recursively into
    K regions around points ``gamma`` of a grid, the split of largest gain first, and a
    split is kept only while the fitted function stays ROC-monotone on the splitting
    points; each region predicts its mean label vector. The paper's setting is K = 3 or
    4 classes; more classes work, on a coarser default grid.

    Parameters
    ----------
    max_bins
        Stop before the number of regions would exceed this (None: until no split keeps
        ROC monotony).
    smoothing
        Laplace smoothing ``lam >= 0``: a region of mean label vector ``ybar``
        predicts ``(ybar + lam) / (1 + K lam)``.
    prior_strength
        Weight ``a >= 0`` of the prior's pseudo-event (:mod:`streamcal.core.prior`,
        in units of an event's weight), whose label vector is the centre of the
        simplex, ``1/K`` per class: a region of weight ``W`` and label sums ``S``
        predicts ``(S_k + a / K) / (W + a)`` for class ``k`` (then smoothed), so a
        region where a class never occurred still gives it a share, which shrinks as
        the region's weight grows. The fit checks ROC monotony on these values
        (:mod:`streamcal.core.irp_simplex`). 0 is the paper's fit, which gives
        probability exactly 0 to every class a region never saw; default 1 (the
        lowest mean negative log-likelihood of the strengths 0 to 8 on Covertype and
        on the streams of ``simulations/multiclass_compare.py``, where the paper's fit
        gave the observed class probability 0 on 7 to 16 events per stream;
        ``simulations/priors_multiclass.py``).
    grid_size
        ``m`` of the candidate split points ``z / m`` (see
        :func:`streamcal.core.irp.simplex_grid`); None: the finest grid of at most 1200
        points for the window's number of classes. Lowered, for a window with many
        classes, so that the grid holds at most 100,000 points.
    window_size
        Number of most recent events the fit uses.
    refit_every
        Refit after every ``refit_every``-th event (whatever its weight).

    Attributes
    ----------
    classes
        The classes seen so far, in order of first appearance.
    fit_classes
        The classes of the latest fit: those named (as a label or a key of the scores)
        by an event of positive weight in the window, in order of first appearance in
        the window.
    n_bins
        Number of regions of the latest fit (0 before it).

    Notes
    -----
    Before the first refit (or after a refit on a window without positive weight)
    ``predict_one`` returns the scores themselves. At prediction, the scores of the fit's
    classes (0 if absent) are the point of the simplex that is looked up; if the scores
    also give probability to classes the fit does not know, those keep their raw
    probability, the known part is renormalised before the look-up and its calibrated
    vector is rescaled to fill the rest
    (:meth:`~streamcal.base.MulticlassCalibrator._merge_unknown`).

    Cost: ``learn_one`` O(K) plus every ``refit_every`` events a refit (see
    :func:`~streamcal.core.irp.fit_multiclass_irp`: about 0.1 to 1 s for 500 events
    and K = 3 or 4); ``predict_one`` O(depth K). Memory O(window_size K).

    Examples
    --------
    >>> from streamcal import MulticlassIRP
    >>> cal = MulticlassIRP(smoothing=0.1, prior_strength=0, grid_size=10,
    ...                     window_size=100, refit_every=6)
    >>> events = [
    ...     ({"a": 0.7, "b": 0.2, "c": 0.1}, "a"),
    ...     ({"a": 0.6, "b": 0.3, "c": 0.1}, "b"),
    ...     ({"a": 0.5, "b": 0.4, "c": 0.1}, "a"),
    ...     ({"a": 0.2, "b": 0.7, "c": 0.1}, "b"),
    ...     ({"a": 0.1, "b": 0.2, "c": 0.7}, "c"),
    ...     ({"a": 0.2, "b": 0.1, "c": 0.7}, "b"),
    ... ]
    >>> cal.predict_one(events[0][0])   # before the first refit: the scores
    {'a': 0.7, 'b': 0.2, 'c': 0.1}
    >>> for scores, label in events:
    ...     cal.learn_one(scores, label)
    >>> cal.fit_classes, cal.n_bins
    (('a', 'b', 'c'), 4)
    >>> out = cal.predict_one({"a": 0.8, "b": 0.1, "c": 0.1})
    >>> {c: round(p, 3) for c, p in out.items()}
    {'a': 0.59, 'b': 0.333, 'c': 0.077}

    A class the fit has never seen keeps its raw probability:

    >>> out = cal.predict_one({"a": 0.4, "b": 0.05, "c": 0.05, "z": 0.5})
    >>> {c: round(p, 3) for c, p in out.items()}
    {'a': 0.295, 'b': 0.167, 'c': 0.038, 'z': 0.5}

    Without smoothing, the paper's fit gives a class that a region never saw
    probability 0; the default prior, a pseudo-event of weight 1 spread evenly over the
    classes, keeps a share for it (here ``(0 + 1/3) / (1 + 1)`` in the region of the
    one event labelled "c"):

    >>> exact = MulticlassIRP(prior_strength=0, grid_size=10, window_size=100, refit_every=6)
    >>> prior = MulticlassIRP(grid_size=10, window_size=100, refit_every=6)
    >>> for scores, label in events:
    ...     exact.learn_one(scores, label)
    ...     prior.learn_one(scores, label)
    >>> exact.predict_one({"a": 0.1, "b": 0.1, "c": 0.8})
    {'a': 0.0, 'b': 0.0, 'c': 1.0}
    >>> {c: round(p, 3) for c, p in prior.predict_one({"a": 0.1, "b": 0.1, "c": 0.8}).items()}
    {'a': 0.167, 'b': 0.167, 'c': 0.667}

    """

    def __init__(
        self,
        max_bins: int | None = None,
        smoothing: float = 0.0,
        grid_size: int | None = None,
        window_size: int = DEFAULT_WINDOW_SIZE,
        refit_every: int = DEFAULT_REFIT_EVERY,
        prior_strength: float = DEFAULT_PRIOR_STRENGTH,
    ):
        name = type(self).__name__
        smoothing = _check_irp_params(name, max_bins, smoothing, window_size, refit_every)
        V.check_optional_int_param(name, "grid_size", grid_size, 1)
        prior_strength = V.check_nonnegative_param(name, "prior_strength", prior_strength)
        self.max_bins = max_bins
        self.smoothing = smoothing
        self.grid_size = grid_size
        self.prior_strength = prior_strength
        self.window_size = window_size
        self.refit_every = refit_every
        self._reset()

    def _reset(self) -> None:
        self._reset_window()
        self._fit_classes: dict = {}  # class -> column of the latest fit
        self._gammas: list = []  # the fitted tree (empty: no fit)
        self._children: list = []
        self._values: list = []
        self._n_bins = 0
        self._batch_refit_at = None  # set by learn_many only, for its duration

    @classmethod
    def _unit_test_params(cls):
        yield {"window_size": 60, "refit_every": 30}
        yield {
            "max_bins": 4,
            "smoothing": 0.05,
            "grid_size": 2,
            "window_size": 100,
            "refit_every": 40,
        }
        yield {"window_size": 60, "refit_every": 30, "prior_strength": 0}
        yield {"grid_size": 4, "window_size": 50, "refit_every": 7, "prior_strength": 0.5}

    @property
    def fit_classes(self) -> tuple:
        """The classes of the latest fit (empty before it)."""
        return tuple(self._fit_classes)

    @property
    def n_bins(self) -> int:
        """Number of regions of the latest fit holding events (0 before any fit)."""
        return self._n_bins

    # ------------------------------------------------------------------ learning

    def _refit_window(self) -> None:
        """Refit on the window's arrays, unless inside a batch whose last refit (the
        one that counts) is still to come."""
        if self._batch_refit_at is None or self._window.n_pushed == self._batch_refit_at:
            self._fit_arrays(*self._window_arrays())

    def learn_many(self, scores, labels, w=None) -> None:
        """Learn from a batch exactly as a loop of ``learn_one`` would (the whole batch
        is validated first), making only the last refit of the batch, which overwrites
        the others."""
        scores = list(scores)
        before = self._window.n_pushed
        last = (before + len(scores)) // self.refit_every * self.refit_every
        self._batch_refit_at = last if last > before else -1
        try:
            super().learn_many(scores, labels, w)
        finally:
            self._batch_refit_at = None

    def _fit_events(self, events: list) -> None:
        """Replace the fit by :func:`~streamcal.core.irp.fit_multiclass_irp` on
        ``events``, a list of valid ``(scores, label, w)`` (the refit hook of
        :mod:`streamcal.checks.multiclass`)."""
        self._fit_arrays(*events_to_arrays(events))

    def _fit_arrays(self, classes, P, labels, weights) -> None:
        """Replace the fit by the fit on the arrays of
        :func:`~streamcal.core.fir.events_to_arrays`."""
        if not classes:
            self._fit_classes = {}
            self._gammas, self._children, self._values = [], [], []
            self._n_bins = 0
            return
        m = capped_grid_size(len(classes), self.grid_size)
        fit = fit_multiclass_irp(
            P,
            labels,
            weights,
            max_bins=self.max_bins,
            smoothing=self.smoothing,
            grid_size=m,
            prior_strength=self.prior_strength,
        )
        self._fit_classes = {c: i for i, c in enumerate(classes)}
        self._gammas, self._children, self._values = fit.to_lists()
        self._n_bins = fit.n_bins

    # ------------------------------------------------------------------ prediction

    def predict_one(self, scores: dict) -> dict:
        """The calibrated probability vector for ``scores``. O(depth K)."""
        scores = self._check_scores(scores)
        values = self._values
        if not values:
            return dict(scores)
        fit = self._fit_classes
        x = [0.0] * len(fit)
        unknown = False
        for c, p in scores.items():
            i = fit.get(c)
            if i is None:
                unknown = True
            else:
                x[i] = p
        if unknown:
            total = math.fsum(x)
            if total <= 0.0:  # every calibrated class has probability 0
                out = dict(scores)
                for c in fit:
                    out.setdefault(c, 0.0)
                return out
            x = [v / total for v in x]
        gammas, children = self._gammas, self._children
        node = 0
        kids = children[0]
        while kids is not None:
            g = gammas[node]
            best, k = x[0] - g[0], 0
            for j in range(1, len(x)):
                d = x[j] - g[j]
                if d > best:
                    best, k = d, j
            node = kids[k]
            kids = children[node]
        cal = dict(zip(fit, values[node]))
        return self._merge_unknown(cal, scores) if unknown else cal

    # ------------------------------------------------------------------ state

    def _get_state(self) -> dict:
        return {
            **self._window_state(),
            "fit_classes": [encode_label(c) for c in self._fit_classes],
            # copies: the snapshot must not share the lists the fit reads
            "gammas": [None if g is None else list(g) for g in self._gammas],
            "children": [None if c is None else list(c) for c in self._children],
            "values": [list(v) for v in self._values],
            "n_bins": self._n_bins,
        }

    def _validate_state(self, state: dict, check) -> None:
        """The window (see the base class) and the fitted tree: ``fit_classes`` distinct
        labels (K of them); ``values``, ``gammas`` and ``children`` one entry per node
        (none without a fit), a node's values K reals in [0, 1]; a leaf has gamma and
        children None, a split K finite gammas and K children, each a later node, every
        node but the root the child of exactly one split (so a prediction walks a tree
        and stops); ``n_bins`` (the leaves holding weight) at most the number of
        leaves."""
        super()._validate_state(state, check)
        K = len(self._validate_classes(check.entry(state, "fit_classes"), check, "state['fit_classes']"))
        values = check.list(check.entry(state, "values"), "state['values']")
        n = len(values)
        check.require((n == 0) == (K == 0), "state['values']", f"a list of node values, empty iff fit_classes is (K = {K})", values)
        gammas = check.list(check.entry(state, "gammas"), "state['gammas']", n=n, what="node gammas (one per node)")
        children = check.list(check.entry(state, "children"), "state['children']", n=n, what="node children (one per node)")
        parent = [False] * n
        leaves = 0
        for i in range(n):
            for j, x in enumerate(check.list(values[i], f"state['values'][{i}]", n=K, what="values (one per fit class)")):
                check.real(x, f"state['values'][{i}][{j}]", 0.0, 1.0)
            g, kids = gammas[i], children[i]
            check.require((g is None) == (kids is None), f"state['gammas'][{i}]", "None exactly where children is None (a leaf)", g)
            if kids is None:
                leaves += 1
                continue
            for j, x in enumerate(check.list(g, f"state['gammas'][{i}]", n=K, what="gammas (one per fit class)")):
                check.real(x, f"state['gammas'][{i}][{j}]")
            for j, k in enumerate(check.list(kids, f"state['children'][{i}]", n=K, what="child nodes (one per fit class)")):
                at = f"state['children'][{i}][{j}]"
                check.int(k, at, i + 1, n - 1)
                check.require(not parent[k], at, "a node not the child of an earlier split", k)
                parent[k] = True
        for k in range(1, n):
            check.require(parent[k], "state['children']", f"a tree reaching every node (node {k} is the child of no split)", children)
        check.int(check.entry(state, "n_bins"), "state['n_bins']", 0, leaves)

    def _check(self) -> None:
        """Assert the window's invariants and the fitted tree's shape: node ``i`` is a
        leaf (children None) or has one child per fit class, each a later node, and
        every node has a value per fit class in [0, 1]."""
        self._window._check()
        n, K = len(self._values), len(self._fit_classes)
        assert len(self._gammas) == len(self._children) == n, "tree arrays differ in length"
        for i, (g, kids, v) in enumerate(zip(self._gammas, self._children, self._values)):
            assert len(v) == K and all(0.0 <= x <= 1.0 for x in v), f"node {i}: values {v}"
            if kids is not None:
                assert g is not None and len(g) == K and len(kids) == K, f"node {i}: split {g}, {kids}"
                assert all(i < k < n for k in kids), f"node {i}: children {kids}"

    def _set_state(self, state: dict) -> None:
        memo: dict = {}
        self._load_window_state(state, memo)
        self._fit_classes = {
            decode_label(c, memo): i for i, c in enumerate(state["fit_classes"])
        }
        self._gammas = [
            None if g is None else [float(x) for x in g] for g in state["gammas"]
        ]
        self._children = [
            None if c is None else [int(x) for x in c] for c in state["children"]
        ]
        self._values = [[float(x) for x in v] for v in state["values"]]
        self._n_bins = int(state["n_bins"])
