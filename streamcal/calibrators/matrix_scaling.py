"""Vector scaling, matrix scaling and Dirichlet calibration refitted on a sliding window
(the parametric multiclass baselines of Guo et al. 2017 and Kull et al. 2019), thin
shells over :mod:`streamcal.core.matrix_scaling`.

Each keeps its last ``window_size`` events and, every ``refit_every`` events, refits
``softmax(W x + b)`` on them by penalised maximum likelihood, starting from the previous
fit (a warm start: the penalised likelihood is strictly convex, so where the search
starts changes the number of Newton steps, not the fit).
"""

from __future__ import annotations

import math

import numpy as np

from streamcal import _validation as V
from streamcal._classes import decode_label, encode_label
from streamcal.calibrators._refit import (
    DEFAULT_REFIT_EVERY,
    DEFAULT_WINDOW_SIZE,
)
from streamcal.calibrators.multiclass import _RefitScaling, _softmax
from streamcal.core.matrix_scaling import (
    DEFAULT_L2,
    DEFAULT_REG_DIAGONAL,
    DEFAULT_REG_LAMBDA,
    DEFAULT_REG_MU,
    features,
    fit_dirichlet,
    fit_matrix_scaling,
    fit_vector_scaling,
)

__all__ = ["DirichletCalibration", "MatrixScaling", "VectorScaling"]

def _check_penalty(owner: str, name: str, value) -> None:
    V.check_param(
        owner,
        name,
        value,
        V.is_real(value) and 0.0 < float(value) < math.inf,
        "a finite real number > 0",
    )


class _LinearScaling(_RefitScaling):
    """Shared shell: the window, the fit ``(classes, W, b)`` and the prediction
    ``softmax(W x + b)`` over the fit's classes. Subclasses set ``_diagonal`` and
    define ``_fit_arrays(values, labels, w, init)``."""

    _diagonal = False

    def _reset(self) -> None:
        self._reset_window()
        self._fit_classes: dict = {}  # class -> column of the latest fit
        self._W = None  # (K, K) array of the latest fit; None before any
        self._b = None

    # ------------------------------------------------------------------ learning

    def _fit_events(self, events: list) -> None:
        """Replace the fit by the one on ``events``, a list of valid ``(scores, label,
        w)`` (the refit hook of :mod:`streamcal.checks.multiclass`), warm-started from
        the current fit. The fit's classes are those of the events of positive weight,
        in order of first appearance (each event's keys, then its label). O(n K) plus
        the Newton iterations."""
        events = [e for e in events if e[2] > 0.0]
        col: dict = {}
        for s, y, _ in events:
            for k in s:
                col.setdefault(k, len(col))
            col.setdefault(y, len(col))
        values = np.full((len(events), len(col)), np.nan)
        for i, (s, _, _) in enumerate(events):
            for k, v in s.items():
                values[i, col[k]] = v
        labels = np.fromiter((col[y] for _, y, _ in events), np.intp, len(events))
        w = np.fromiter((e[2] for e in events), np.float64, len(events))
        fit = self._fit_arrays(values, labels, w, self._warm_start(col))
        if fit is None:
            self._fit_classes, self._W, self._b = {}, None, None
        else:
            self._fit_classes, (self._W, self._b) = col, fit

    def _warm_start(self, col: dict):
        """The previous fit on the new columns ``col`` (identity rows and columns for
        a class it did not have), or None."""
        if self._W is None or len(col) < 2:
            return None
        K = len(col)
        W, b = np.eye(K), np.zeros(K)
        old = [(col[c], j) for c, j in self._fit_classes.items() if c in col]
        if old:
            new_idx, old_idx = (np.array(t, dtype=np.intp) for t in zip(*old))
            W[np.ix_(new_idx, new_idx)] = self._W[np.ix_(old_idx, old_idx)]
            b[new_idx] = self._b[old_idx]
        return W, b

    # ------------------------------------------------------------------ prediction

    def predict_one(self, scores: dict) -> dict:
        """The calibrated probability vector for ``scores``: every class of the fit
        (one missing from ``scores`` included) and the classes of ``scores`` the fit
        has not seen. O(K^2)."""
        scores = self._check_scores(scores)
        known = self._fit_classes
        raw = _softmax(scores) if self._logits else scores
        if self._W is None or not any(c in known for c in scores):
            return dict(raw)
        row = np.full(len(known), np.nan)
        for c, v in scores.items():
            j = known.get(c)
            if j is not None:
                row[j] = v
        with np.errstate(over="ignore", invalid="ignore"):
            s = self._W @ features(row, self._logits)[0] + self._b
        if not np.isfinite(s).all():  # logits near the float range: left uncalibrated
            return dict(raw)
        e = np.exp(s - s.max())
        cal = dict(zip(known, (e / e.sum()).tolist()))
        if all(c in known for c in scores):
            return cal
        return self._merge_unknown(cal, raw)

    # ------------------------------------------------------------------ state

    def _get_state(self) -> dict:
        fitted = self._W is not None
        if not fitted:
            W = None
        elif self._diagonal:
            W = np.diag(self._W).tolist()
        else:
            W = self._W.tolist()
        return {
            **self._window_state(),
            "fit_classes": [encode_label(c) for c in self._fit_classes],
            "weights": W,
            "bias": self._b.tolist() if fitted else None,
        }

    def _validate_state(self, state: dict, check) -> None:
        super()._validate_state(state, check)
        classes = check.entry(state, "classes")
        fit = self._validate_classes(check.entry(state, "fit_classes"), check, "state['fit_classes']")
        W, b = check.entry(state, "weights"), check.entry(state, "bias")
        if b is None:
            check.require(W is None and not fit, "state['bias']", "a list of reals when there is a fit", b)
            return
        K = len(fit)
        known = set(map(repr, self._validate_classes(classes, check)))
        for i, c in enumerate(fit):
            check.require(repr(c) in known, f"state['fit_classes'][{i}]", "a class of state['classes']", c)
        check.require(K >= 2, "state['fit_classes']", "at least two classes when there is a fit", K)
        for j, v in enumerate(check.list(b, "state['bias']", n=K, what="reals")):
            check.real(v, f"state['bias'][{j}]")
        rows = [W] if self._diagonal else check.list(W, "state['weights']", n=K, what="rows")
        for i, r in enumerate(rows):
            at = "state['weights']" + ("" if self._diagonal else f"[{i}]")
            for j, v in enumerate(check.list(r, at, n=K, what="reals")):
                check.real(v, f"{at}[{j}]")

    def _set_state(self, state: dict) -> None:
        memo: dict = {}
        self._load_window_state(state, memo)
        self._fit_classes = {
            decode_label(c, memo): j for j, c in enumerate(state["fit_classes"])
        }
        if state["bias"] is None:
            self._W = self._b = None
            return
        W = np.array(state["weights"], dtype=np.float64)
        self._W = np.diag(W) if self._diagonal else W
        self._b = np.array(state["bias"], dtype=np.float64)

    def _check(self) -> None:
        """Assert the window's invariants and the fit's shapes."""
        self._window._check()
        if self._W is None:
            assert self._b is None and not self._fit_classes
            return
        K = len(self._fit_classes)
        assert K >= 2 and self._W.shape == (K, K) and self._b.shape == (K,)
        assert np.isfinite(self._W).all() and np.isfinite(self._b).all()
        assert all(c in self._classes for c in self._fit_classes)
        if self._diagonal:
            assert np.count_nonzero(self._W - np.diag(np.diag(self._W))) == 0

    @property
    def weights(self) -> dict | None:
        """The fitted ``W`` as a dict class -> dict class -> weight (row: the output
        class); None before the first fit."""
        if self._W is None:
            return None
        cs = list(self._fit_classes)
        return {c: dict(zip(cs, row)) for c, row in zip(cs, self._W.tolist())}

    @property
    def bias(self) -> dict | None:
        """The fitted ``b`` as a dict class -> intercept; None before the first fit."""
        if self._b is None:
            return None
        return dict(zip(self._fit_classes, self._b.tolist()))


_NOTES = """
    Before the first fit (and while the latest fit had fewer than two classes of
    positive weight), ``predict_one`` returns the scores themselves (with
    ``input="logits"``: their softmax). A class of ``scores`` the latest fit has not
    seen keeps its raw probability and the fit's classes share the rest
    (:meth:`~streamcal.base.MulticlassCalibrator._merge_unknown`); a class of the fit
    missing from ``scores`` is read as probability ``P_FLOOR = 1e-12`` and gets its
    calibrated probability in the output.

    Cost: ``learn_one`` O(K) plus, every ``refit_every`` events, the refit: Newton
    iterations of O(window_size {cost}) each (a handful from the warm start);
    ``predict_one`` O(K^2). Memory O(window_size K + K^2).
"""


class _L2Scaling(_LinearScaling):
    """Vector and matrix scaling: the same parameters (``input`` and one L2 penalty
    ``l2``); a subclass names its batch fit ``_batch_fit(x, labels, w, l2, init)``."""

    def __init__(
        self,
        window_size: int = DEFAULT_WINDOW_SIZE,
        refit_every: int = DEFAULT_REFIT_EVERY,
        input: str = "probabilities",
        l2: float = DEFAULT_L2,
    ):
        self._init_window(window_size, refit_every, input)
        _check_penalty(type(self).__name__, "l2", l2)
        self.input = input
        self.l2 = l2
        self._reset()

    @classmethod
    def _unit_test_params(cls):
        yield {"window_size": 60, "refit_every": 20}
        yield {"window_size": 50, "refit_every": 7, "input": "logits", "l2": 0.01}
        yield {}

    def _fit_arrays(self, values, labels, w, init):
        return self._batch_fit(features(values, self._logits), labels, w, self.l2, init)


class VectorScaling(_L2Scaling):
    """Vector scaling refitted on a sliding window: ``softmax(a * x + b)``, a scale
    ``a_c`` and a bias ``b_c`` per class (Guo, Pleiss, Sun and Weinberger, 2017),
    fitted by penalised maximum likelihood on the last ``window_size`` events.

    ``x`` is ``log p`` (``input="probabilities"``, the default) or the logits
    (``input="logits"``). The fit minimises the window's weighted mean negative
    log-likelihood plus ``l2 / K`` times the squared distance of the scales to 1 and of
    the biases to 0 (:func:`streamcal.core.matrix_scaling.fit_vector_scaling`).

    Parameters
    ----------
    window_size
        Number of most recent events the fit is on.
    refit_every
        The fit is redone after every ``refit_every``-th ``learn_one`` call
        (zero-weight events included).
    input
        ``"probabilities"`` (``scores`` a probability vector) or ``"logits"``.
    l2
        Penalty (> 0) towards the identity map. Guo et al. fit vector scaling
        unpenalised; a small penalty keeps the fit unique and finite on windows whose
        classes are separable, and changes others little.

    Attributes
    ----------
    weights, bias
        The latest fit (dicts by class), None before it.
    classes
        The classes seen so far, in order of first appearance.

    Notes
    -----{notes}
    Examples
    --------
    An over-confident forecaster whose top class, announced at 0.9, is right 70% of
    the time:

    >>> from streamcal import VectorScaling
    >>> cal = VectorScaling(window_size=100, refit_every=10)
    >>> cal.predict_one({{"a": 0.9, "b": 0.1}})   # before any fit: the scores
    {{'a': 0.9, 'b': 0.1}}
    >>> for i in range(10):
    ...     cal.learn_one({{"a": 0.9, "b": 0.1}}, "a" if i < 7 else "b")
    >>> {{c: round(p, 3) for c, p in cal.predict_one({{"a": 0.9, "b": 0.1}}).items()}}
    {{'a': 0.7, 'b': 0.3}}

    """

    __doc__ = __doc__.format(notes=_NOTES.format(cost="K^2"))
    _diagonal = True
    _batch_fit = staticmethod(fit_vector_scaling)


class MatrixScaling(_L2Scaling):
    """Matrix scaling refitted on a sliding window: ``softmax(W x + b)``, multinomial
    logistic regression on ``x`` (Guo, Pleiss, Sun and Weinberger, 2017), fitted by
    penalised maximum likelihood on the last ``window_size`` events.

    ``x`` is ``log p`` (``input="probabilities"``, the default: then the model is
    Dirichlet calibration's, with a plain L2 penalty) or the logits
    (``input="logits"``). The fit minimises the window's weighted mean negative
    log-likelihood plus ``l2`` times the mean squared off-diagonal weight, the mean
    squared distance of the diagonal to 1 and the mean squared bias
    (:func:`streamcal.core.matrix_scaling.fit_matrix_scaling`).

    Parameters
    ----------
    window_size
        Number of most recent events the fit is on.
    refit_every
        The fit is redone after every ``refit_every``-th ``learn_one`` call
        (zero-weight events included).
    input
        ``"probabilities"`` (``scores`` a probability vector) or ``"logits"``.
    l2
        Penalty (> 0) towards the identity map (Guo et al. fit matrix scaling
        unpenalised and note that it over-fits with many classes).

    Attributes
    ----------
    weights, bias
        The latest fit (dicts by class), None before it.
    classes
        The classes seen so far, in order of first appearance.

    Notes
    -----{notes}
    Examples
    --------
    >>> from streamcal import MatrixScaling
    >>> cal = MatrixScaling(window_size=100, refit_every=4, input="logits")
    >>> for y in ["x", "x", "y", "x"]:
    ...     cal.learn_one({{"x": 4.0, "y": 0.0}}, y)
    >>> {{c: round(p, 3) for c, p in cal.predict_one({{"x": 4.0, "y": 0.0}}).items()}}
    {{'x': 0.75, 'y': 0.25}}

    """

    __doc__ = __doc__.format(notes=_NOTES.format(cost="K^4"))
    _batch_fit = staticmethod(fit_matrix_scaling)


class DirichletCalibration(_LinearScaling):
    """Dirichlet calibration refitted on a sliding window: ``softmax(W log p + b)``
    with the ODIR penalty (Kull, Perello-Nieto, Kaengsepp, Silva Filho, Song and
    Flach, 2019), fitted on the last ``window_size`` events: the multiclass
    counterpart of beta calibration.

    The fit minimises the window's weighted mean negative log-likelihood plus
    ``reg_lambda / (K (K - 1))`` times the sum of the squared off-diagonal weights,
    ``reg_mu / K`` times the sum of the squared intercepts (ODIR) and
    ``reg_diagonal / K`` times the sum of the squared distances of the diagonal to 1
    (:func:`streamcal.core.matrix_scaling.fit_dirichlet`).

    Parameters
    ----------
    window_size
        Number of most recent events the fit is on.
    refit_every
        The fit is redone after every ``refit_every``-th ``learn_one`` call
        (zero-weight events included).
    reg_lambda, reg_mu
        ODIR's ``lambda`` and ``mu`` (> 0). Kull et al. choose both by
        cross-validation over a logarithmic grid and fix no default; a window cannot
        be cross-validated at every refit, so the defaults, 1e-3, are a light penalty
        from the low end of their grids that a user with held-out data should tune.
    reg_diagonal
        The pull (> 0) of the diagonal towards 1, which ODIR leaves free: without it a
        window whose classes are separable has no finite fit. Default 1e-4.

    Attributes
    ----------
    weights, bias
        The latest fit (dicts by class), None before it.
    classes
        The classes seen so far, in order of first appearance.

    Notes
    -----{notes}
    Examples
    --------
    >>> from streamcal import DirichletCalibration
    >>> cal = DirichletCalibration(window_size=100, refit_every=10)
    >>> for i in range(10):
    ...     cal.learn_one({{"a": 0.9, "b": 0.1}}, "a" if i < 7 else "b")
    >>> {{c: round(p, 3) for c, p in cal.predict_one({{"a": 0.9, "b": 0.1}}).items()}}
    {{'a': 0.7, 'b': 0.3}}

    """

    __doc__ = __doc__.format(notes=_NOTES.format(cost="K^4"))

    def __init__(
        self,
        window_size: int = DEFAULT_WINDOW_SIZE,
        refit_every: int = DEFAULT_REFIT_EVERY,
        reg_lambda: float = DEFAULT_REG_LAMBDA,
        reg_mu: float = DEFAULT_REG_MU,
        reg_diagonal: float = DEFAULT_REG_DIAGONAL,
    ):
        self._init_window(window_size, refit_every, "probabilities")
        name = type(self).__name__
        for key, value in (("reg_lambda", reg_lambda), ("reg_mu", reg_mu), ("reg_diagonal", reg_diagonal)):
            _check_penalty(name, key, value)
        self.reg_lambda = reg_lambda
        self.reg_mu = reg_mu
        self.reg_diagonal = reg_diagonal
        self._reset()

    @classmethod
    def _unit_test_params(cls):
        yield {"window_size": 60, "refit_every": 20}
        yield {"window_size": 50, "refit_every": 7, "reg_lambda": 0.1, "reg_mu": 0.01}
        yield {}

    def _fit_arrays(self, values, labels, w, init):
        return fit_dirichlet(
            values, labels, w, self.reg_lambda, self.reg_mu, self.reg_diagonal, init
        )
