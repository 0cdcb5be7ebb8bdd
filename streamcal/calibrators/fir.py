"""Isotonic multiclass calibrators refitted on a sliding window: flattened isotonic
regression (:class:`FIR`), its normalisation-aware version (:class:`NAFIR`) and
one-vs-rest isotonic regression (:class:`OneVsRestIsotonic`).

Each is a :class:`~streamcal.base.MulticlassCalibrator` that keeps the last
``window_size`` events in a :class:`~streamcal.calibrators._refit.RefitWindow` and, every
``refit_every`` events, replaces its fit by the pure batch fit of
:mod:`streamcal.core.fir` on the window. A fit is a non-decreasing map ``g`` of a
probability (shared by the classes, or one per class); a forecast is calibrated as
``max(g(p_c), epsilon)`` for each class ``c`` the fit knows, normalised to sum to 1.

No certain forecast by accident (issue 13): with ``prior_strength = a > 0`` (default 2)
a prediction reads ``g`` under the prior of :mod:`streamcal.core.prior`: at the query's
piece of ``g``, a pseudo-event of weight ``a`` and label 1/2 joins the piece and is
pooled with its neighbours where the order requires
(:func:`~streamcal.core.prior.prior_piece_value`, on each piece's weight and label
sum), so a piece that saw no label (or only labels) is pulled off 0 (or 1) by
``a / 2`` pseudo-labels and a heavy piece hardly moves; the read-out stays
non-decreasing in the probability. The fitted maps themselves stay the exact fits.
``prior_strength=0`` is the exact fit, as before the prior existed. The default 2 comes
from Covertype (``simulations/priors_multiclass.py``, table in ``simulations/README.md``).
The values under the prior are computed once per refit (and on restore): O(1) per piece
plus the neighbours its pseudo-event pools with, O(B ** 2) at worst for B pieces;
predictions cost what they did.

Snapshots written before ``prior_strength`` existed restore with ``prior_strength=0``,
the calibrator they were; their maps carry no piece statistics, so a prior set by hand
in such a snapshot's parameters takes effect from the next refit.
"""

from __future__ import annotations

import math
from bisect import bisect_right

from streamcal import _validation as V
from streamcal._classes import decode_label, encode_label
from streamcal.calibrators._refit import (
    DEFAULT_REFIT_EVERY,
    DEFAULT_WINDOW_SIZE,
    PriorAddedLater,
    _RefitMulticlass,
    check_refit_params,
)
from streamcal.core.fir import (
    DEFAULT_EPSILON,
    IsotonicMap,
    events_to_arrays,
    fit_fir,
    fit_nafir,
    fit_ovr,
)
from streamcal.core.prior import ISOTONIC_PRIOR_MEAN, prior_piece_values

__all__ = ["FIR", "NAFIR", "OneVsRestIsotonic"]

#: The default ``prior_strength`` of the three (``simulations/priors_multiclass.py``).
DEFAULT_PRIOR_STRENGTH = 2.0


class _WindowedIsotonic(PriorAddedLater, _RefitMulticlass):
    """Shared shell: parameters, window, class registry, prediction and state.

    Subclasses set ``_shared`` (one map for every class, or one per class) and
    implement ``_fit(P, y, w)`` returning the maps (a list) or None.

    The prior (``prior_strength``, :mod:`streamcal.core.prior`): at each fit the values
    a prediction reads (``_read``, one list per map) become the maps' values under the
    prior, :func:`~streamcal.core.prior.prior_piece_values` of each map's piece
    statistics; the maps themselves stay the exact fit.
    """

    _shared = True
    #: whether a piece's value is its label mean (FIR, one-vs-rest; not NA-FIR)
    _values_are_means = True

    def __init__(
        self,
        window_size: int = DEFAULT_WINDOW_SIZE,
        refit_every: int = DEFAULT_REFIT_EVERY,
        interpolation: str = "step",
        epsilon: float = DEFAULT_EPSILON,
        prior_strength: float = DEFAULT_PRIOR_STRENGTH,
    ):
        name = type(self).__name__
        check_refit_params(name, window_size, refit_every)
        V.check_param(
            name,
            "interpolation",
            interpolation,
            isinstance(interpolation, str) and interpolation in ("step", "linear"),
            "a str among {'step', 'linear'}",
        )
        V.check_param(
            name,
            "epsilon",
            epsilon,
            V.is_real(epsilon) and 0.0 < epsilon <= 0.01,
            "a real number in (0, 0.01]",
        )
        prior_strength = V.check_nonnegative_param(name, "prior_strength", prior_strength)
        self.window_size = window_size
        self.refit_every = refit_every
        self.interpolation = interpolation
        self.epsilon = epsilon
        self.prior_strength = prior_strength
        self._reset()

    def _reset(self) -> None:
        self._reset_window()
        self._maps: list | None = None  # the latest fit (None: no fit yet)
        self._read: list | None = None  # the values predictions read, per map
        self._fit_classes: dict = {}  # its classes (an ordered set)

    @classmethod
    def _unit_test_params(cls):
        yield {"window_size": 60, "refit_every": 20}
        yield {"window_size": 50, "refit_every": 7, "interpolation": "linear"}
        yield {}
        yield {"window_size": 50, "refit_every": 7, "interpolation": "linear", "prior_strength": 2.0}
        yield {"window_size": 60, "refit_every": 20, "prior_strength": 0}

    # ------------------------------------------------------------------ learning

    def _refit_window(self) -> None:
        """Refit on the window's arrays, read without building dicts."""
        self._refit(*self._window_arrays())

    def _fit_events(self, events: list) -> None:
        """Replace the fit by the batch fit on ``events``, a list of valid ``(scores,
        label, w)`` (the refit hook of :mod:`streamcal.checks.multiclass`). The fit's
        classes are those the positive-weight events name."""
        self._refit(*events_to_arrays(events))

    def _refit(self, classes, P, y, w) -> None:
        maps = self._fit(P, y, w) if len(y) else None
        self._maps = maps
        self._read = self._read_values(maps)
        self._fit_classes = dict.fromkeys(classes) if maps is not None else {}

    def _read_values(self, maps) -> list | None:
        """Per map, the values a prediction reads: the map's own values without a
        prior (or for a map without piece statistics: the prior is then off until the
        next fit), else its values under the prior. O(pieces) per map, typically."""
        if maps is None:
            return None
        a = self.prior_strength
        if a == 0:
            return [g.values for g in maps]
        return [
            g.values if g.weights is None else prior_piece_values(g.weights, *self._prior_terms(g, a))
            for g in maps
        ]

    @staticmethod
    def _prior_terms(g: IsotonicMap, a: float) -> tuple:
        """``(sums, prior_strength, prior_mean)`` the prior pools with: each piece's
        label sum, and the pseudo-event ``(a, 1/2)``."""
        return g.sums, a, ISOTONIC_PRIOR_MEAN

    def _fit(self, P, y, w) -> list | None:  # pragma: no cover - abstract
        raise NotImplementedError

    # ------------------------------------------------------------------ prediction

    def predict_one(self, scores: dict) -> dict:
        """The calibrated probability vector for ``scores``: every class of the latest
        fit (probability 0 when absent from ``scores``) and every key of ``scores``.
        O(K log B) for B pieces of the fitted map."""
        return self._predict(self._check_scores(scores))

    def predict_many(self, scores) -> list[dict]:
        """Calibrated probability vectors for a sequence of score dicts (no learning);
        the whole batch is validated first."""
        scores = [self._check_scores(s, "predict_many") for s in scores]
        return [self._predict(s) for s in scores]

    def _predict(self, scores: dict) -> dict:
        maps = self._maps
        if maps is None:
            return dict(scores)
        read = self._read
        get = scores.get
        eps = self.epsilon
        linear = self.interpolation == "linear"
        cal = {}
        total = 0.0
        g = maps[0]
        values = read[0]
        for j, c in enumerate(self._fit_classes):
            if not self._shared:
                g = maps[j]
                values = read[j]
            x = get(c, 0.0)
            lo = g.lo
            i = bisect_right(lo, x) - 1
            if i < 0:
                v = values[0]
            else:
                v = values[i]
                if linear and i + 1 < len(lo) and x > g.hi[i]:
                    last = g.hi[i]
                    v += (values[i + 1] - v) * ((x - last) / (lo[i + 1] - last))
            v = max(v, eps)
            cal[c] = v
            total += v
        for c in cal:
            cal[c] /= total
        if len(cal) == len(scores) and all(c in cal for c in scores):
            return cal
        return self._merge_unknown(cal, scores)

    # ------------------------------------------------------------------ state

    def _get_state(self) -> dict:
        return {
            **self._window_state(),
            "maps": None if self._maps is None else [g.to_lists() for g in self._maps],
            "fit_classes": [encode_label(c) for c in self._fit_classes],
        }

    def _check(self) -> None:
        """Assert the window's and the maps' invariants, one map for all the fit's
        classes (``_shared``) or one per class."""
        self._window._check()
        if self._maps is not None:
            n = 1 if self._shared else len(self._fit_classes)
            assert len(self._maps) == n, f"{len(self._maps)} maps for {n}"
            for g in self._maps:
                assert isinstance(g, IsotonicMap), f"not a map: {g!r}"
                g._check()
                if self._values_are_means and g.weights is not None:
                    assert g.values == [s / w for w, s in zip(g.weights, g.sums)], (
                        "piece values are not their label means"
                    )
        assert self._read == self._read_values(self._maps), "stale prior values"

    def _set_state(self, state: dict) -> None:
        memo: dict = {}
        self._load_window_state(state, memo)
        maps = state["maps"]
        self._maps = None if maps is None else [IsotonicMap.from_lists(g) for g in maps]
        self._read = self._read_values(self._maps)
        self._fit_classes = dict.fromkeys(
            decode_label(c, memo) for c in state["fit_classes"]
        )


class FIR(_WindowedIsotonic):
    """Flattened isotonic regression refitted on a sliding window, normalised
    (Arad and Rosset, section 3.3).

    Every (event, class) pair of the window, ``(p_c, 1[label == c])`` weighted by the
    event's weight, goes into one isotonic regression (PAV, ties pooled): a single
    non-decreasing map ``g`` shared by every class (permutation invariant, and order
    preserving: a larger probability never gets a smaller calibrated one). A forecast
    becomes ``max(g(p_c), epsilon)`` for each class, normalised to sum to 1.

    Parameters
    ----------
    window_size
        Number of most recent events the map is fitted on.
    refit_every
        The map is refitted after every ``refit_every``-th ``learn_one`` call
        (zero-weight events included).
    interpolation
        How ``g`` is read between the probabilities it was fitted on: ``"step"`` (the
        value of the last fitted probability at or below; below them all, the lowest
        value) or ``"linear"`` (linear between the last probability of a level set and
        the first of the next, constant beyond the ends, as scikit-learn's
        ``IsotonicRegression(out_of_bounds="clip")``).
    epsilon
        Floor of ``g`` before normalising, in (0, 0.01]: a class whose probability
        falls where the window never saw its label would otherwise get 0.
    prior_strength
        Weight ``a >= 0`` of the pseudo-event pooled into the query's piece (in units
        of an event's weight: each of the event's K pairs weighs ``w``), label 1/2:
        predictions stay off 0 and 1 where few events stand behind them (see the module
        docstring). 0 is the exact fit; default 2.

    Attributes
    ----------
    fitted_map
        The map ``g`` of the latest fit (:class:`~streamcal.core.fir.IsotonicMap`),
        None before the first fit.
    classes
        The classes seen so far, in order of first appearance.

    Notes
    -----
    The fit is :func:`streamcal.core.fir.fit_fir` on the window's events of positive
    weight; its classes are those these events name (as keys of ``scores`` or as
    labels), a class left out of a forecast counting as probability 0. Before the
    first fit (or while the window holds no event of positive weight), ``predict_one``
    returns the scores themselves. A class the latest fit has not seen keeps its raw
    probability and the calibrated classes share the rest
    (:meth:`~streamcal.base.MulticlassCalibrator._merge_unknown`).

    Cost: ``learn_one`` O(K) for K classes in the event, plus the refit, O(nK log(nK))
    for ``n = window_size``, every ``refit_every`` events; ``predict_one`` O(K log B)
    for B pieces of ``g``. Memory O(window_size K).

    Examples
    --------
    An over-confident forecaster: its top class, announced at 0.9, is right 60% of the
    time.

    >>> from streamcal import FIR
    >>> cal = FIR(window_size=100, refit_every=10, prior_strength=0)   # the exact fit
    >>> cal.predict_one({"a": 0.9, "b": 0.1})   # before any fit: the scores
    {'a': 0.9, 'b': 0.1}
    >>> for i in range(10):
    ...     cal.learn_one({"a": 0.9, "b": 0.1} if i % 2 else {"a": 0.1, "b": 0.9},
    ...                   ("a" if i % 2 else "b") if i < 6 else ("b" if i % 2 else "a"))
    >>> cal.fitted_map.values
    [0.4, 0.6]
    >>> cal.predict_one({"a": 0.9, "b": 0.1})
    {'a': 0.6, 'b': 0.4}
    >>> cal.predict_one({"a": 0.9, "b": 0.1, "c": 0.0})   # "c": never seen, kept
    {'a': 0.6, 'b': 0.4, 'c': 0.0}

    A window where the forecast at 0.9 was always right: the exact fit says 0 for
    the other class (1e-6 after the floor); the default prior, ``(0 + 2 / 2) / (10 + 2)``
    for the 10 pairs at 0.1 that never held the label, keeps a share:

    >>> exact, cal = FIR(10, 10, prior_strength=0), FIR(10, 10)
    >>> for i in range(10):
    ...     for c in (exact, cal):
    ...         c.learn_one({"a": 0.9, "b": 0.1} if i % 2 else {"a": 0.1, "b": 0.9},
    ...                     "a" if i % 2 else "b")
    >>> exact.predict_one({"a": 0.9, "b": 0.1})["b"] < 1e-5
    True
    >>> {c: round(p, 4) for c, p in cal.predict_one({"a": 0.9, "b": 0.1}).items()}
    {'a': 0.9167, 'b': 0.0833}

    """

    @property
    def fitted_map(self) -> IsotonicMap | None:
        """The map ``g`` of the latest fit (None before the first fit)."""
        return None if self._maps is None else self._maps[0]

    def _fit(self, P, y, w):
        return [fit_fir(P, y, w)]


class NAFIR(_WindowedIsotonic):
    """Normalisation-aware flattened isotonic regression refitted on a sliding window
    (NA-FIR, Arad and Rosset, section 4.1).

    Like :class:`FIR`, one non-decreasing map ``g`` shared by every class, a forecast
    becoming ``max(g(p_c), epsilon)`` normalised; but ``g`` maximises the likelihood of
    the *normalised* forecasts on the window,
    ``sum_i w_i log(g(p_{i, y_i}) / sum_c g(p_{i, c}))``, instead of fitting each class
    probability on its own and normalising afterwards. The fit starts from FIR's and
    only takes steps that increase that likelihood, so on its window it is never worse
    than FIR's.

    The paper fits by simulated annealing (about 15 minutes on 12,500 events of 1,000
    classes); here the problem, concave in ``log g``, is solved by Newton steps on the
    level sets of ``g`` alternated with PAV-projected scaled gradient steps on the
    distinct probabilities (:class:`streamcal.core.fir.NAFIROptimizer`), in seconds
    at that size. Over all positive ``g`` the likelihood has no maximiser in general
    (it keeps growing as the values below the window's most confident, always-right
    forecasts shrink towards 0), so ``g`` takes values in ``[epsilon, 1]``, the range
    of FIR's floored fit.

    Parameters
    ----------
    window_size
        Number of most recent events the map is fitted on.
    refit_every
        The map is refitted after every ``refit_every``-th ``learn_one`` call
        (zero-weight events included).
    interpolation
        ``"step"`` or ``"linear"``, as for :class:`FIR`.
    epsilon
        Floor of ``g`` before normalising, in (0, 0.01].
    lower
        Smallest value of ``g`` above the probabilities where the window never saw a
        label: None (default) for ``epsilon``; ``"fir"`` for FIR's smallest positive
        value, so that the fit spans no wider range than FIR's (more conservative on
        small windows, at a lower likelihood on the window); or a number in (0, 1]
        (floored at ``epsilon``; above FIR's smallest positive value, the fit may
        fall below FIR's likelihood).
    max_iter
        Maximum number of outer iterations of the optimiser per refit.
    tol
        The optimiser stops when its stationarity measure (the directional derivative
        of its projected step) is at most ``tol`` times the window's total weight.
    prior_strength
        Weight ``a >= 0`` of the pseudo-event, as for :class:`FIR`; NA-FIR's values
        are not label means and ``g`` is fixed only up to a common factor, so the
        pseudo-event pools with each piece's value (weighted by the piece's pairs) and
        its label 1/2 is read in the fit's units: times ``sum_j v_j W_j / sum_j S_j``
        (the fit's weighted mean value over the window's label rate; 1 for FIR), at
        most 1. This is a read-out of the NA-FIR fit, not the maximum of NA-FIR's
        likelihood under a prior. Default 2.

    Attributes
    ----------
    fitted_map
        The map ``g`` of the latest fit, None before the first fit.
    converged
        Whether the latest fit met the stopping rule within ``max_iter`` iterations
        (None before the first fit).
    classes
        The classes seen so far, in order of first appearance.

    Notes
    -----
    The fit is :func:`streamcal.core.fir.fit_nafir` on the window's events of positive
    weight; classes, cold start and unseen classes as for :class:`FIR`.

    Cost: ``learn_one`` O(K), plus the refit every ``refit_every`` events: FIR's
    O(nK log(nK)) (``n = window_size``), then a few outer iterations, each O(nK) plus
    PAV on the distinct probabilities and Newton steps O(n B^2 + B^3) for B level
    sets (typically 1 to 4 iterations). ``predict_one`` O(K log B). Memory
    O(window_size K).

    Examples
    --------
    Two kinds of forecast, whose classes turn out with frequencies (0.6, 0.2, 0.2)
    and (0.5, 0.4, 0.1):

    >>> from streamcal import FIR, NAFIR
    >>> A, B = {"a": 0.8, "b": 0.1, "c": 0.1}, {"a": 0.5, "b": 0.4, "c": 0.1}
    >>> nafir = NAFIR(window_size=100, refit_every=100, prior_strength=0)
    >>> fir = FIR(window_size=100, refit_every=100, prior_strength=0)
    >>> for i in range(50):
    ...     for cal in (nafir, fir):
    ...         cal.learn_one(A, "aaabc"[i % 5])
    ...         cal.learn_one(B, "aaaaabbbbc"[i % 10])
    >>> nafir.converged
    True
    >>> [round(p, 3) for p in nafir.predict_one(B).values()]
    [0.466, 0.4, 0.134]
    >>> [round(p, 3) for p in fir.predict_one(B).values()]
    [0.469, 0.375, 0.156]

    """

    def __init__(
        self,
        window_size: int = DEFAULT_WINDOW_SIZE,
        refit_every: int = DEFAULT_REFIT_EVERY,
        interpolation: str = "step",
        epsilon: float = DEFAULT_EPSILON,
        lower: float | str | None = None,
        max_iter: int = 100,
        tol: float = 1e-10,
        prior_strength: float = DEFAULT_PRIOR_STRENGTH,
    ):
        name = type(self).__name__
        V.check_param(
            name,
            "lower",
            lower,
            lower is None
            or lower == "fir"
            or (not isinstance(lower, str) and V.is_real(lower) and 0.0 < lower <= 1.0),
            "None, 'fir' or a real number in (0, 1]",
        )
        V.check_int(max_iter, name, "max_iter", minimum=1)
        V.check_param(
            name,
            "tol",
            tol,
            V.is_real(tol) and 0.0 <= tol < 1.0,
            "a real number in [0, 1)",
        )
        self.lower = lower
        self.max_iter = max_iter
        self.tol = tol
        super().__init__(window_size, refit_every, interpolation, epsilon, prior_strength)

    _values_are_means = False

    def _reset(self) -> None:
        super()._reset()
        self._converged = None

    @staticmethod
    def _prior_terms(g: IsotonicMap, a: float) -> tuple:
        """NA-FIR's pieces hold values, not label means, and ``g`` is fixed only up to
        a common factor: the prior pools with ``value x weight`` per piece, and 1/2 is
        read in the fit's own units, times ``sum(v W) / sum(S)`` (1 for FIR's means),
        at most 1."""
        sums = [v * w for v, w in zip(g.values, g.weights)]
        labels = math.fsum(g.sums)
        scale = math.fsum(sums) / labels if labels > 0 else 1.0
        return sums, a, min(ISOTONIC_PRIOR_MEAN * scale, 1.0)

    @classmethod
    def _unit_test_params(cls):
        yield from super()._unit_test_params()
        yield {"window_size": 40, "refit_every": 13, "lower": "fir", "epsilon": 1e-4}

    @property
    def fitted_map(self) -> IsotonicMap | None:
        """The map ``g`` of the latest fit (None before the first fit)."""
        return None if self._maps is None else self._maps[0]

    @property
    def converged(self) -> bool | None:
        """Whether the latest fit met the stopping rule (None before the first fit)."""
        return self._converged

    def _fit(self, P, y, w):
        fit = fit_nafir(
            P,
            y,
            w,
            epsilon=self.epsilon,
            lower=self.lower,
            max_iter=self.max_iter,
            tol=self.tol,
        )
        self._converged = fit.converged
        return [fit.map]

    def _refit(self, classes, P, y, w) -> None:
        self._converged = None
        super()._refit(classes, P, y, w)

    def _get_state(self) -> dict:
        return {**super()._get_state(), "converged": self._converged}

    def _set_state(self, state: dict) -> None:
        super()._set_state(state)
        self._converged = state["converged"]


class OneVsRestIsotonic(_WindowedIsotonic):
    """One-vs-rest isotonic regression refitted on a sliding window, normalised
    (Zadrozny and Elkan, 2002; "IR OvR" in Arad and Rosset).

    Each class ``c`` of the window gets its own isotonic regression ``g_c`` of
    ``1[label == c]`` on ``p_c`` over the window's events (a class left out of a
    forecast counting as probability 0); a forecast becomes ``max(g_c(p_c),
    epsilon)`` for each class, normalised to sum to 1.

    Parameters
    ----------
    window_size
        Number of most recent events the maps are fitted on.
    refit_every
        The maps are refitted after every ``refit_every``-th ``learn_one`` call
        (zero-weight events included).
    interpolation
        ``"step"`` or ``"linear"``, as for :class:`FIR`.
    epsilon
        Floor of each ``g_c`` before normalising, in (0, 0.01].
    prior_strength
        Weight ``a >= 0`` of the pseudo-event pooled into the query's piece of each
        ``g_c``, as for :class:`FIR`. Default 2.

    Attributes
    ----------
    fitted_maps
        Dict class -> its map of the latest fit (empty before the first fit).
    classes
        The classes seen so far, in order of first appearance.

    Notes
    -----
    The fit is :func:`streamcal.core.fir.fit_ovr` on the window's events of positive
    weight; classes, cold start and unseen classes as for :class:`FIR`.

    Cost: ``learn_one`` O(K), plus the refit, O(K n log n) for ``n = window_size``,
    every ``refit_every`` events; ``predict_one`` O(K log B). Memory O(window_size K).

    Examples
    --------
    >>> from streamcal import OneVsRestIsotonic
    >>> cal = OneVsRestIsotonic(window_size=100, refit_every=4, prior_strength=0)
    >>> for s, y in [({"a": 0.8, "b": 0.2}, "a"), ({"a": 0.6, "b": 0.4}, "b"),
    ...              ({"a": 0.3, "b": 0.7}, "b"), ({"a": 0.9, "b": 0.1}, "a")]:
    ...     cal.learn_one(s, y)
    >>> cal.fitted_maps["a"].values
    [0.0, 1.0]
    >>> {c: round(p, 6) for c, p in cal.predict_one({"a": 0.8, "b": 0.2}).items()}
    {'a': 0.999999, 'b': 1e-06}
    >>> shrunk = OneVsRestIsotonic(window_size=100, refit_every=4)   # prior_strength=2
    >>> for s, y in [({"a": 0.8, "b": 0.2}, "a"), ({"a": 0.6, "b": 0.4}, "b"),
    ...              ({"a": 0.3, "b": 0.7}, "b"), ({"a": 0.9, "b": 0.1}, "a")]:
    ...     shrunk.learn_one(s, y)
    >>> {c: round(p, 4) for c, p in shrunk.predict_one({"a": 0.8, "b": 0.2}).items()}
    {'a': 0.75, 'b': 0.25}

    """

    _shared = False

    @property
    def fitted_maps(self) -> dict:
        """Dict class -> its map of the latest fit (empty before the first fit)."""
        return {} if self._maps is None else dict(zip(self._fit_classes, self._maps))

    def _fit(self, P, y, w):
        return list(fit_ovr(P, y, w))
