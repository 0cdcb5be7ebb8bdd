"""Flattened isotonic regression (FIR), its normalisation-aware version (NA-FIR) and
one-vs-rest isotonic regression: pure batch fits for multiclass calibration.

Notation: ``m`` events, ``K`` classes, ``P`` the ``m x K`` matrix of forecast
probabilities (a class absent from a forecast has probability 0), ``y`` the observed
class indices and ``w`` the event weights (events of weight 0 are dropped first). The
*flattened* data are the ``m K`` pairs ``(P[i, c], 1[y_i == c])``, each with weight
``w_i``; a *cell* is one distinct probability among them. Every fit is a non-decreasing
function ``g`` of a probability (one shared ``g``, or one per class for one-vs-rest),
returned as an :class:`IsotonicMap`; a forecast ``p`` is calibrated as ``max(g(p_c),
epsilon)`` for each class ``c``, normalised to sum to 1 (:func:`predict_proba`).

- **FIR** (Arad and Rosset, section 3.3: the shared class-wise training of Patel et
  al. with every class pooled): ``g`` is the isotonic regression of the flattened indicators on
  the flattened probabilities (PAV, :func:`streamcal.core.pav.pav_blocks`).
- **One-vs-rest** (Zadrozny and Elkan, 2002): one isotonic regression per class, of
  ``1[y == c]`` on ``P[:, c]``.
- **NA-FIR** (Arad and Rosset, section 4.1 and appendix A.2): ``g`` maximises the
  likelihood of the *normalised* forecasts,
  ``L(g) = sum_i w_i log(g(p_{i, y_i}) / sum_c g(p_{i, c}))``, over non-decreasing
  ``g``, starting from FIR. See :func:`fit_nafir` and :class:`NAFIROptimizer` for the
  optimiser (the paper used simulated annealing).

References
----------
- Arad and Rosset, "Improving multi-class calibration through normalization-aware
  isotonic techniques" (sections 3.3, 4.1, appendix A.2).
- Patel et al. (2021), "Multi-class uncertainty calibration via mutual information
  maximization-based binning", ICLR (shared class-wise binning).
- Zadrozny and Elkan (2002), "Transforming classifier scores into accurate multiclass
  probability estimates".

This module is pure: numpy and scipy, no river.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from streamcal.core._deprecated import deprecated_alias
from streamcal.core.isotonic_map import IsotonicMap, _map_from_cells
from streamcal.core.pav import pav_blocks

__all__ = [
    "DEFAULT_EPSILON",
    "IsotonicMap",
    "NAFIRFit",
    "NAFIROptimizer",
    "events_to_arrays",
    "fit_fir",
    "log_likelihood",
    "fit_nafir",
    "fit_ovr",
    "predict_proba",
]

#: Default floor of ``g`` before normalising (as in :mod:`streamcal.core.scir`).
DEFAULT_EPSILON = 1e-6

# The inner Newton steps of NA-FIR solve G x G systems; with more groups than this they
# are skipped (the diagonally scaled cell steps still converge, more slowly).
_NEWTON_MAX_GROUPS = 1500
# ... and they read an m x G matrix of bin counts, kept while it has at most this many
# entries (otherwise the sums over each event's classes are taken over its pairs).
_DENSE_MAX = 2 * 10**7
# Armijo's sufficient-increase fraction and the number of step halvings tried.
_ARMIJO = 1e-4
_HALVINGS = 60


# ------------------------------------------------------------------ inputs


def events_to_arrays(events):
    """``(classes, P, y, w)`` from a list of ``(scores, label, w)`` events.

    Events of weight 0 are dropped (they teach nothing, not even a class). The classes
    are those the remaining events name, as keys of ``scores`` or as labels, in order
    of first appearance (the keys of an event before its label); ``P[i, c]`` is 0 when
    class ``c`` is absent from event ``i``'s scores. O(n K).

    Examples
    --------
    >>> classes, P, y, w = events_to_arrays([({"a": 0.7, "b": 0.3}, "b", 1.0),
    ...                                      ({"c": 1.0}, "c", 0.0),
    ...                                      ({"b": 1.0}, "z", 2.0)])
    >>> classes, P.tolist(), y.tolist(), w.tolist()
    (['a', 'b', 'z'], [[0.7, 0.3, 0.0], [0.0, 1.0, 0.0]], [1, 2], [1.0, 2.0])

    """
    index: dict = {}
    kept = [e for e in events if e[2] > 0]
    for s, label, _ in kept:
        for c in s:
            if c not in index:
                index[c] = len(index)
        if label not in index:
            index[label] = len(index)
    P = np.zeros((len(kept), len(index)))
    y = np.empty(len(kept), dtype=np.intp)
    w = np.empty(len(kept))
    for i, (s, label, wi) in enumerate(kept):
        row = P[i]
        for c, p in s.items():
            row[index[c]] = p
        y[i] = index[label]
        w[i] = wi
    return list(index), P, y, w


def _prepare(P, y, w):
    """Arrays as float / intp, zero-weight rows dropped."""
    P = np.asarray(P, dtype=np.float64)
    if P.ndim != 2:
        raise ValueError(
            f"P must be a 2-d array of probabilities; got shape {P.shape}."
        )
    y = np.asarray(y, dtype=np.intp)
    w = np.ones(len(P)) if w is None else np.asarray(w, dtype=np.float64)
    if y.shape != (len(P),) or w.shape != (len(P),):
        raise ValueError(
            f"y and w must have one entry per row of P ({len(P)}); got {y.shape} and {w.shape}."
        )
    keep = w > 0
    if not keep.all():
        P, y, w = P[keep], y[keep], w[keep]
    return P, y, w


def _flat_cells(P, y, w):
    """The flattened cells: sorted distinct probabilities ``ux``, per cell the total
    weight ``W`` and the weight ``S`` of its pairs whose class is the label; and the
    pairs sorted by probability: the event of each (``events``) and where each cell's
    pairs start (``starts``, ``len(ux) + 1`` offsets) and the cell of each
    (``cells``). O(mK log(mK))."""
    m, K = P.shape
    order = np.argsort(P.ravel())
    xs = P.ravel()[order]
    new = np.empty(len(xs), dtype=bool)
    new[0] = True
    np.not_equal(xs[1:], xs[:-1], out=new[1:])
    starts = np.append(np.flatnonzero(new), len(xs))
    ux = xs[starts[:-1]]
    del xs
    index = np.int32 if m * K < 2**31 else np.intp
    cells = np.cumsum(new, dtype=index)
    cells -= 1
    del new
    events, classes = np.divmod(order, K)
    del order
    events = events.astype(index)
    wp = w[events]
    M = len(ux)
    W = np.bincount(cells, weights=wp, minlength=M)
    wp[classes != y[events]] = 0.0
    del classes
    S = np.bincount(cells, weights=wp, minlength=M)
    return ux, W, S, events, starts, cells


def _isotonic_cells(ux, W, S) -> IsotonicMap:
    pieces = pav_blocks(W, S)
    return _map_from_cells(
        ux,
        [a for a, _, _, _ in pieces],
        [b for _, b, _, _ in pieces],
        [s / ww for _, _, ww, s in pieces],
        [ww for _, _, ww, _ in pieces],
        [s for _, _, _, s in pieces],
    )


# ------------------------------------------------------------------ FIR and OvR


def fit_fir(P, y, w=None) -> IsotonicMap | None:
    """Flattened isotonic regression: one isotonic regression of ``1[y_i == c]`` on
    ``P[i, c]`` over every (event, class) pair, each pair weighted by its event's
    weight. Ties are pooled by weighted mean (PAV).

    Returns the fitted map (values in [0, 1], the pieces being PAV's level sets), or
    None when no event has a positive weight. O(mK log(mK)) (the sort of the pairs).

    Parameters
    ----------
    P
        ``m x K`` probabilities.
    y
        ``m`` class indices in ``0 .. K - 1``.
    w
        ``m`` non-negative weights (default: all 1).

    Examples
    --------
    >>> P = [[0.9, 0.1], [0.6, 0.4], [0.8, 0.2]]
    >>> g = fit_fir(P, [0, 1, 0])
    >>> g.values, [round(v, 3) for v in g.values]
    ([0.0, 0.5, 1.0], [0.0, 0.5, 1.0])
    >>> predict_proba([[0.6, 0.4]], g).round(3).tolist()
    [[0.5, 0.5]]

    """
    P, y, w = _prepare(P, y, w)
    if len(P) == 0:
        return None
    ux, W, S, _, _, _ = _flat_cells(P, y, w)
    return _isotonic_cells(ux, W, S)


def fit_ovr(P, y, w=None) -> tuple[IsotonicMap, ...] | None:
    """One-vs-rest isotonic regression: for each class ``c``, the isotonic regression
    of ``1[y == c]`` on ``P[:, c]`` (weighted, ties pooled).

    Returns one map per class (None when no event has a positive weight).
    O(K m log m).

    Examples
    --------
    >>> maps = fit_ovr([[0.9, 0.1], [0.6, 0.4], [0.8, 0.2]], [0, 1, 0])
    >>> [g.values for g in maps]
    [[0.0, 1.0], [0.0, 1.0]]

    """
    P, y, w = _prepare(P, y, w)
    if len(P) == 0:
        return None
    maps = []
    for c in range(P.shape[1]):
        ux, cell = np.unique(P[:, c], return_inverse=True)
        cell = cell.reshape(-1)
        W = np.bincount(cell, weights=w, minlength=len(ux))
        S = np.bincount(cell, weights=w * (y == c), minlength=len(ux))
        maps.append(_isotonic_cells(ux, W, S))
    return tuple(maps)


# ------------------------------------------------------------------ predictions


def _floored(P, g, epsilon: float, interpolation: str) -> np.ndarray:
    P = np.asarray(P, dtype=np.float64)
    if isinstance(g, IsotonicMap):
        G = g.predict_array(P, interpolation)
    else:
        G = np.empty_like(P)
        for c, gc in enumerate(g):
            G[:, c] = gc.predict_array(P[:, c], interpolation)
    return np.maximum(G, epsilon)


def predict_proba(
    P, g, epsilon: float = DEFAULT_EPSILON, interpolation: str = "step"
) -> np.ndarray:
    """Calibrated probabilities: ``max(g(P[i, c]), epsilon)`` normalised over ``c``.

    ``g`` is one :class:`IsotonicMap` shared by the classes (FIR, NA-FIR) or a sequence
    of one map per column of ``P`` (one-vs-rest). O(mK log pieces).

    Examples
    --------
    >>> g = IsotonicMap([0.0, 0.5], [0.25, 1.0], [0.0, 0.5])
    >>> predict_proba([[0.2, 0.8], [0.5, 0.5]], g).round(6).tolist()
    [[2e-06, 0.999998], [0.5, 0.5]]

    """
    G = _floored(P, g, epsilon, interpolation)
    return G / G.sum(axis=1, keepdims=True)


def _log_likelihood_of(G: np.ndarray, y, w) -> float:
    """``sum_i w_i log(G[i, y_i] / sum_c G[i, c])`` for floored values ``G``."""
    m = len(G)
    Q = G / G.sum(axis=1, keepdims=True)
    return float(np.dot(w, np.log(Q[np.arange(m), y])))


def log_likelihood(
    P, y, w, g, epsilon: float = DEFAULT_EPSILON, interpolation: str = "step"
) -> float:
    """Weighted log-likelihood ``sum_i w_i log q_i[y_i]`` of the calibrated forecasts
    ``q = predict_proba(P, g, epsilon, interpolation)``: the objective NA-FIR maximises
    (on its own window the interpolation does not matter). Zero-weight events are
    ignored. O(mK log pieces).

    Examples
    --------
    >>> g = IsotonicMap([0.0, 0.5], [0.25, 1.0], [0.0, 0.5])
    >>> round(log_likelihood([[0.2, 0.8], [0.5, 0.5]], [1, 0], None, g), 6)
    -0.693149

    """
    P, y, w = _prepare(P, y, w)
    return _log_likelihood_of(_floored(P, g, epsilon, interpolation), y, w)


# ------------------------------------------------------------------ NA-FIR


class NAFIRFit(NamedTuple):
    """The result of :func:`fit_nafir`."""

    #: the fitted map ``g`` (values in [0, 1]; predictions floor it at ``epsilon``)
    map: IsotonicMap
    #: the objective ``L(g)`` of the fit (:func:`log_likelihood` on the data)
    log_likelihood: float
    #: the objective of FIR's fit, the starting point (NA-FIR's is never lower)
    fir_log_likelihood: float
    #: number of outer iterations run
    n_iter: int
    #: whether the stopping rule was met before ``max_iter`` iterations
    converged: bool


class NAFIROptimizer:
    """The NA-FIR optimiser: maximises the normalised log-likelihood over
    non-decreasing ``g``, by monotone ascent from FIR's fit.

    **The problem.** With ``u = log g``,
    ``L = sum_j b_j u_j - sum_i w_i log sum_c exp(u(P[i, c]))`` (``b_j`` the weight of
    the pairs of cell ``j`` whose class is the label): a log-sum-exp subtracted from a
    linear function, so ``L`` is *concave in u* and the constraint (``u``
    non-decreasing over the cells) is convex. The problem is convex in ``log g``
    (the "no longer convex" of the paper is about ``g`` itself): every local maximum
    is global, and a monotone ascent method reaches it.

    **Bounds, and why.** ``L`` is unchanged when ``g`` is scaled, and over all
    positive ``g`` it has no maximiser in general: whenever the window's most
    confident pairs are all right (FIR's top level set has value 1, which happens as
    soon as the single most confident forecast is right), shrinking every other value
    of ``g`` towards 0 relative to the top one increases ``L`` for ever (those events'
    other classes tend to probability 0; no other event's likelihood changes). The
    fit is therefore made over the values a floored prediction can use:

    - the cells below the first cell holding a label (FIR's level set of value 0) are
      held at ``epsilon`` (the prediction floor; their value only lowers ``L``, so
      this is optimal for them);
    - every other cell takes a value in ``[lower, 1]``, with ``lower = epsilon`` by
      default: ``g`` ranges over ``[epsilon, 1]``, as FIR's floored fit does, and the
      floor the predictions apply anyway is what stops the shrinking above. With
      ``lower="fir"`` (FIR's smallest positive value), NA-FIR spans no wider range of
      values than FIR.

    FIR's floored fit lies in the box and the optimiser starts there. Within the box
    the problem is convex and its maximum exists (when no cell is held at
    ``epsilon`` and no bound is reached, ``L`` is exactly scale-invariant: ``g`` is
    then determined up to a constant factor, which the normalised predictions do not
    see).

    **Parametrisation.** Log-values of ``g`` on the sorted distinct flattened
    probabilities (the cells), held as *groups*: maximal runs of cells sharing one
    value, values strictly increasing from group to group. FIR's level sets are the
    first groups.

    **Steps** (each accepted only if it increases ``L``, with Armijo's sufficient
    increase along the step, halving the step up to 60 times; a step that does not
    increase ``L`` is never taken):

    1. *A diagonally scaled projected-gradient step on the cells*
       (:meth:`cell_step`): ``u + grad / h`` (``h`` the diagonal of the negated
       Hessian), projected back onto the non-decreasing sequences by weighted PAV
       (weights ``h``) and clipped to the box. It changes the groups: it pools those
       whose order the step would reverse and splits those where that increases
       ``L``, many at once.
    2. *Newton steps on the groups* (:meth:`newton`): the gradient and the full
       Hessian of ``L`` over the group values, from the bin-count formulation of
       appendix A.2 (``C[i, G]`` = number of event ``i``'s classes in group ``G``,
       ``T = eps n0 + C exp(x)`` the normalising sums); groups at a bound whose
       gradient points out of the box are held there; a step stops where two groups
       meet or a group reaches a bound, and such groups are then pooled (the
       isotonic constraint, active-set style).

    An outer iteration is step 1, then step 2 until its predicted increase
    ``grad . d`` is below the tolerance. From FIR's level sets, two to four outer
    iterations reach the stopping rule on the problems tried (up to 12,500 events
    of 1,000 classes).

    **Stopping rule.** The directional derivative of step 1,
    ``grad . (u_projected - u)``, is zero exactly at the constrained maximum (it
    bounds the squared ``h``-norm of the step from above); the optimiser stops when
    it is at most ``tol`` times the total weight, or after ``max_iter`` outer
    iterations. The last point is always one that step 1 has examined.

    **Cost.** Per outer iteration: O(mK) for the cell passes and PAV on the cells;
    per Newton step O(m G^2 + G^3) for G groups (skipped when G > 1500). Memory O(mK
    + mG); the set-up sorts the mK pairs, O(mK log(mK)).

    Invariants (:meth:`_check`): the groups partition the active cells; their values
    strictly increase within ``[log lower, 0]``; ``v = exp(x)``; the bin counts and
    the objective agree with a recomputation.

    Examples
    --------
    Two kinds of forecast, their classes observed with frequencies (0.6, 0.2, 0.2)
    and (0.5, 0.4, 0.1):

    >>> P = np.array([[0.8, 0.1, 0.1]] * 10 + [[0.5, 0.4, 0.1]] * 10)
    >>> y = np.array([0, 0, 0, 1, 2] * 2 + [0, 0, 0, 0, 0, 1, 1, 1, 1, 2])
    >>> opt = NAFIROptimizer(P, y, np.ones(20))
    >>> [round(v, 4) for v in opt.fir.values]
    [0.1667, 0.4, 0.5, 0.6]
    >>> before = opt.F
    >>> opt.run(), opt.F > before
    (True, True)
    >>> predict_proba([[0.8, 0.1, 0.1], [0.5, 0.4, 0.1]], opt.to_map()).round(3).tolist()
    [[0.634, 0.183, 0.183], [0.466, 0.4, 0.134]]
    >>> predict_proba([[0.8, 0.1, 0.1], [0.5, 0.4, 0.1]], opt.fir).round(3).tolist()
    [[0.643, 0.179, 0.179], [0.469, 0.375, 0.156]]

    """

    def __init__(
        self,
        P,
        y,
        w,
        epsilon: float = DEFAULT_EPSILON,
        lower: float | str | None = None,
    ):
        P, y, w = _prepare(P, y, w)
        if len(P) == 0:
            raise ValueError("NA-FIR needs at least one event of positive weight.")
        m, K = P.shape
        self.m, self.K = m, K
        self.w = w
        self.y = y
        self.epsilon = float(epsilon)
        ux, W, S, events, starts, cells = _flat_cells(P, y, w)
        self.ux = ux
        self.fir = _isotonic_cells(ux, W, S)
        j0 = int(np.argmax(S > 0))  # first cell holding a label
        self.j0 = j0
        # the cells' weights, for the pieces' statistics (:meth:`to_map`)
        self._W, self._W_zero = W[j0:], float(W[:j0].sum())
        del W
        #: FIR's smallest positive value
        self.fir_min = (
            self.fir.values[1] if self.fir.values[0] == 0.0 else self.fir.values[0]
        )
        if lower is None:
            lower = self.epsilon
        elif lower == "fir":
            lower = self.fir_min
        elif isinstance(lower, str) or not 0.0 < lower <= 1.0:
            raise ValueError(
                f"lower must be None, 'fir' or a number in (0, 1]; got {lower!r}."
            )
        self.lower = max(self.epsilon, float(lower))
        self.log_lower = math.log(self.lower)
        # the active pairs (cells j0 on), sorted by probability: their events and the
        # offsets of each cell's run of pairs
        a0 = int(starts[j0])
        self._pe = events[a0:]
        self._pcell = cells[a0:] - j0  # the cell of each active pair, from j0
        self._offsets = (starts[j0:] - a0).astype(events.dtype)
        self._sizes = np.diff(self._offsets)
        del starts, cells
        self._eps_n0 = self.epsilon * np.bincount(events[:a0], minlength=m).astype(
            np.float64
        )
        self.S = S[j0:]
        self.n_cells = len(self.S)
        # start: FIR floored at epsilon, clipped to the box, as groups
        first = np.searchsorted(ux, self.fir.lo)  # the cell each FIR piece starts at
        fir_cells = np.repeat(self.fir.values, np.diff(np.append(first, len(ux))))[j0:]
        v0 = np.clip(np.maximum(fir_cells, self.epsilon), self.lower, 1.0)
        self._set_cells(v0, np.log(v0))
        self.F = self._objective(self.x, self.v, self.C, self.bG, self.bounds)
        self.n_iter = 0
        self.n_newton = 0

    # -------------------------------------------------------------- structure

    def _set_cells(self, v_cells: np.ndarray, u_cells: np.ndarray) -> None:
        """Groups from per-cell values (runs of equal log-values)."""
        starts = np.concatenate(([0], np.nonzero(np.diff(u_cells))[0] + 1))
        self.bounds = np.append(starts, self.n_cells).astype(np.intp)
        self.x = u_cells[starts].copy()
        self.v = v_cells[starts].copy()
        self.C = (
            self._counts(self.bounds) if self.m * len(self.x) <= _DENSE_MAX else None
        )
        self.bG = np.add.reduceat(self.S, self.bounds[:-1])

    def _counts(self, bounds) -> np.ndarray:
        """The m x G matrix: number of each event's classes in each group."""
        cuts = self._offsets[bounds].tolist()
        C = np.empty((self.m, len(bounds) - 1), order="F")
        pe, m = self._pe, self.m
        for g in range(len(bounds) - 1):
            C[:, g] = np.bincount(pe[cuts[g] : cuts[g + 1]], minlength=m)
        return C

    def _cells(self, a: np.ndarray, bounds=None) -> np.ndarray:
        return np.repeat(a, np.diff(self.bounds if bounds is None else bounds))

    def _pair_sums(self, per_cell: np.ndarray) -> np.ndarray:
        """Per event, the sum over its active pairs of a per-cell quantity."""
        return np.bincount(
            self._pe, weights=np.repeat(per_cell, self._sizes), minlength=self.m
        )

    def _T(self, v, C, bounds) -> np.ndarray:
        """Per event, the sum of ``g`` over its classes."""
        if C is not None:
            return self._eps_n0 + C @ v
        return self._eps_n0 + self._pair_sums(self._cells(v, bounds))

    def _objective(self, x, v, C, bG, bounds) -> float:
        return float(bG @ x - self.w @ np.log(self._T(v, C, bounds)))

    def _candidate(self, xn: np.ndarray):
        """The state with group values ``xn`` (feasible up to rounding): values within
        1e-13 of a bound are put on it, groups that meet (closer than 1e-13) are
        pooled; unchanged groups keep their exact ``v``. Returns ``(bounds, x, v, C,
        bG)``."""
        lo = self.log_lower
        tol = 1e-13
        xn = np.maximum.accumulate(np.minimum(np.maximum(xn, lo), 0.0))
        xn[xn <= lo + tol] = lo
        xn[xn >= -tol] = 0.0
        vn = np.where(xn == self.x, self.v, np.exp(xn))
        vn[xn == lo] = self.lower
        vn[xn == 0.0] = 1.0
        new = np.concatenate(([True], np.diff(xn) > tol * (1.0 + np.abs(xn[1:]))))
        if new.all():
            return self.bounds, xn, vn, self.C, self.bG
        starts = np.nonzero(new)[0]
        # a pooled run takes its first group's value, or the bound one of its groups is on
        ends = np.append(starts[1:], len(xn)) - 1
        xr, vr = xn[starts].copy(), vn[starts].copy()
        top = xn[ends] == 0.0
        xr[top], vr[top] = 0.0, 1.0
        bottom = xn[starts] == lo
        xr[bottom], vr[bottom] = lo, self.lower
        bounds = np.append(self.bounds[:-1][starts], self.n_cells)
        C = None if self.C is None else np.add.reduceat(self.C, starts, axis=1)
        return bounds, xr, vr, C, np.add.reduceat(self.bG, starts)

    # -------------------------------------------------------------- steps

    def newton(self, max_steps: int = 50, tol_abs: float = 0.0) -> int:
        """Newton steps on the current groups (step 2 of the class docstring), until
        the predicted increase ``grad . d`` is at most ``tol_abs``, no step increases
        ``L``, or ``max_steps``. Returns the number of steps taken."""
        taken = 0
        w = self.w
        for _ in range(max_steps):
            x, v, C = self.x, self.v, self.C
            G = len(x)
            if C is None or G > _NEWTON_MAX_GROUPS:
                break
            T = self._eps_n0 + C @ v
            A = C.T @ (w / T)
            grad = self.bG - v * A
            Q = C * (v / T[:, None])
            H = np.diag(v * A) - Q.T @ (Q * w[:, None])
            at_lo = x == self.log_lower
            at_hi = x == 0.0
            fixed = (at_lo & (grad <= 0.0)) | (at_hi & (grad >= 0.0))
            d = np.zeros(G)
            for _ in range(G + 1):
                free = ~fixed
                if not free.any():
                    break
                Hf = H[np.ix_(free, free)]
                ridge = 1e-12 * max(float(Hf.diagonal().max()), 1e-300)
                try:
                    df = np.linalg.solve(Hf + ridge * np.eye(len(Hf)), grad[free])
                except np.linalg.LinAlgError:
                    df = np.linalg.lstsq(Hf, grad[free], rcond=None)[0]
                d = np.zeros(G)
                d[free] = df
                out = (at_lo & (d < 0.0)) | (at_hi & (d > 0.0))
                if not out.any():
                    break
                fixed |= out
            dec = float(grad @ d)
            if not (dec > tol_abs and np.all(np.isfinite(d))):
                break
            # the longest step keeping the order of the groups and the box
            t_max = math.inf
            diff = d[:-1] - d[1:]
            meet = diff > 0.0
            if meet.any():
                t_max = min(t_max, float(((x[1:] - x[:-1])[meet] / diff[meet]).min()))
            down = d < 0.0
            if down.any():
                t_max = min(t_max, float(((self.log_lower - x)[down] / d[down]).min()))
            up = d > 0.0
            if up.any():
                t_max = min(t_max, float((-x[up] / d[up]).min()))
            t = min(1.0, t_max)
            for _ in range(_HALVINGS):
                cand = self._candidate(x + t * d)
                Fn = self._objective(cand[1], cand[2], cand[3], cand[4], cand[0])
                if Fn > self.F and Fn >= self.F + _ARMIJO * t * dec:
                    break
                t *= 0.5
            else:
                break
            self.bounds, self.x, self.v, self.C, self.bG = cand
            self.F = Fn
            taken += 1
            self.n_newton += 1
        return taken

    def cell_step(self, tol_abs: float = 0.0) -> float:
        """One diagonally scaled projected-gradient step on the cells (step 1 of the
        class docstring). Returns its directional derivative (the stationarity
        measure); the state changes only if the step increases ``L``."""
        w = self.w
        v_cells = self._cells(self.v)
        u_cells = self._cells(self.x)
        T = self._T(self.v, self.C, self.bounds)
        pe, pcell, n = self._pe, self._pcell, self.n_cells
        r = w / T
        a = np.bincount(pcell, weights=r[pe], minlength=n)
        a2 = np.bincount(pcell, weights=(r / T)[pe], minlength=n)
        grad = self.S - v_cells * a
        h = v_cells * a - v_cells * v_cells * a2
        h = np.maximum(h, 1e-12 * max(float(h.max()), 1e-300))
        from scipy.optimize import isotonic_regression  # scipy is slow to import

        proj = isotonic_regression(u_cells + grad / h, weights=h).x
        proj = np.minimum(np.maximum(proj, self.log_lower), 0.0)
        d = proj - u_cells
        slope = float(grad @ d)
        if not slope > tol_abs:
            return max(slope, 0.0)
        t = 1.0
        S = self.S
        for _ in range(_HALVINGS):
            un = proj if t == 1.0 else u_cells + t * d
            Tn = self._eps_n0 + self._pair_sums(np.exp(un))
            Fn = float(S @ un - w @ np.log(Tn))
            if Fn > self.F and Fn >= self.F + _ARMIJO * t * slope:
                break
            t *= 0.5
        else:
            return slope
        vn = np.where(un == u_cells, v_cells, np.exp(un))
        vn[un == self.log_lower] = self.lower
        vn[un == 0.0] = 1.0
        old = (self.bounds.copy(), self.x, self.v, self.C, self.bG, self.F)
        self._set_cells(vn, un)
        Fn = self._objective(self.x, self.v, self.C, self.bG, self.bounds)
        if Fn > self.F:
            self.F = Fn
        else:  # lost to rounding in the other evaluation: keep the old point
            self.bounds, self.x, self.v, self.C, self.bG, self.F = old
        return slope

    def run(self, max_iter: int = 100, tol: float = 1e-10) -> bool:
        """Outer iterations (a cell step, then Newton steps) until the stopping rule;
        returns True when it was met within ``max_iter`` iterations."""
        tol_abs = tol * float(self.w.sum())
        for _ in range(max_iter):
            self.n_iter += 1
            if self.cell_step(tol_abs) <= tol_abs:
                return True
            self.newton(tol_abs=tol_abs)
        return False

    # -------------------------------------------------------------- results

    def to_map(self) -> IsotonicMap:
        """The current ``g``: FIR's zero level set (value 0, floored at ``epsilon`` by
        the predictions), then one piece per group; each piece with the total weight
        and the label weight of its pairs (its values are not their ratios)."""
        ux, j0, b = self.ux, self.j0, self.bounds
        starts = (b[:-1] + j0).tolist()
        stops = (b[1:] + j0).tolist()
        values = self.v.tolist()
        weights = np.add.reduceat(self._W, b[:-1]).tolist()
        sums = self.bG.tolist()
        if j0 > 0:
            starts, stops, values = [0, *starts], [j0, *stops], [0.0, *values]
            weights, sums = [self._W_zero, *weights], [0.0, *sums]
        return _map_from_cells(ux, starts, stops, values, weights, sums)

    def _check(self) -> None:
        b, x, v = self.bounds, self.x, self.v
        G = len(x)
        assert b[0] == 0 and b[-1] == self.n_cells and len(b) == G + 1, (
            "bounds do not partition the cells"
        )
        assert np.all(np.diff(b) > 0), "an empty group"
        assert np.all(np.diff(x) > 0), f"group values not strictly increasing: {x}"
        assert x[0] >= self.log_lower and x[-1] <= 0.0, "a value outside the box"
        assert np.allclose(v, np.exp(x), rtol=1e-13, atol=0), "v != exp(x)"
        assert np.all((v >= self.lower) & (v <= 1.0)), "a value outside [lower, 1]"
        if self.C is not None:
            assert np.array_equal(self._counts(b), self.C), "stale bin counts"
        assert np.allclose(
            self.bG, np.add.reduceat(self.S, b[:-1]), rtol=1e-12, atol=0
        ), "stale label weights"
        F = self._objective(x, v, None, self.bG, b)
        assert math.isclose(F, self.F, rel_tol=1e-12, abs_tol=1e-12), (
            f"objective {self.F} != {F}"
        )


def fit_nafir(
    P,
    y,
    w=None,
    *,
    epsilon: float = DEFAULT_EPSILON,
    lower: float | str | None = None,
    max_iter: int = 100,
    tol: float = 1e-10,
) -> NAFIRFit | None:
    """Normalisation-aware flattened isotonic regression (NA-FIR, Arad and Rosset
    section 4.1): the non-decreasing ``g`` maximising the log-likelihood of the
    normalised forecasts ``max(g(P[i, c]), epsilon) / sum_c max(g(P[i, c]), epsilon)``,
    by monotone ascent from FIR (see :class:`NAFIROptimizer` for the problem, the
    bounds that make it well posed, the steps, the stopping rule and the cost).

    The returned objective is never below FIR's (with the same ``epsilon``): the
    optimiser only takes steps that increase it, and the final value is compared with
    FIR's by :func:`log_likelihood`'s own arithmetic, FIR being returned if rounding
    ever made it better.

    Parameters
    ----------
    P, y, w
        As for :func:`fit_fir`.
    epsilon
        The floor of ``g`` in the predictions (also the value of FIR's zero level set).
    lower
        Smallest value of ``g`` above FIR's zero level set: None (default) for
        ``epsilon``, ``"fir"`` for FIR's smallest positive value (the fit then spans
        no wider range than FIR's), or a number (floored at ``epsilon``; one above
        FIR's smallest positive value moves the start away from FIR and voids the
        guarantee above). See the unboundedness in :class:`NAFIROptimizer`.
    max_iter
        Maximum number of outer iterations.
    tol
        Stopping threshold on the stationarity measure, per unit of weight.

    Returns None when no event has a positive weight.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet(np.ones(3) * 0.5, size=200)
    >>> y = np.array([rng.choice(3, p=np.sqrt(p) / np.sqrt(p).sum()) for p in P])
    >>> fit = fit_nafir(P, y)
    >>> fit.converged, fit.log_likelihood >= fit.fir_log_likelihood
    (True, True)
    >>> fit.log_likelihood == log_likelihood(P, y, None, fit.map)
    True

    """
    P, y, w = _prepare(P, y, w)
    if len(P) == 0:
        return None
    opt = NAFIROptimizer(P, y, w, epsilon, lower)
    converged = opt.run(max_iter, tol)
    g = opt.to_map()
    ll = log_likelihood(P, y, w, g, epsilon)
    ll_fir = log_likelihood(P, y, w, opt.fir, epsilon)
    if ll < ll_fir and opt.lower <= max(opt.fir_min, epsilon):
        g, ll = opt.fir, ll_fir
    return NAFIRFit(g, ll, ll_fir, opt.n_iter, converged)


# deprecated names, kept for one release (not in __all__)
fir_fit = deprecated_alias(fit_fir, "fir_fit")
ovr_fit = deprecated_alias(fit_ovr, "ovr_fit")
nafir_fit = deprecated_alias(fit_nafir, "nafir_fit")
