"""Online Newton steps for logistic regression on a small fixed feature vector.

The model is ``P(y = 1 | x) = sigmoid(theta . x)`` with ``x`` a vector of 2 or 3 real
features (the calibrators build them from a score: ``(logit s, 1)`` for Platt scaling,
``(ln s, -ln(1 - s), 1)`` for beta calibration). The store keeps the parameter
``theta`` and ``P = H^-1``, the inverse of a curvature matrix ``H``; each event
``(x, y, w)`` costs O(1).

The objective it tracks, after events ``i = 1..t`` with weights ``w_i`` and ages
``t - i`` (the newest has age 0), is the penalised, optionally discounted log loss::

    F_t(theta) = sum_i w_i * decay**(t - i) * logloss(theta; x_i, y_i)
                 + regularization / 2 * ||theta - theta0||**2

minimised subject to ``theta_j >= 0`` for the constrained coordinates. ``theta0`` is
where the store starts (the identity map, for the calibrators), so before any event
``theta = theta0`` minimises ``F_0`` exactly, with ``H = regularization * I``.

The update: a recursive (stochastic) Newton step, made implicit when it is large.
``F_{t-1}`` is replaced by its quadratic model around the current ``theta`` with Hessian
``H`` and the new event's log loss is added. Its curvature at the current point, ``p (1 -
p) x x'`` with ``p = sigmoid(x . theta)``, joins ``H``::

    H <- H + w p (1 - p) x x'        (P by Sherman-Morrison: P - b (P x)(P x)',
                                       b = w p (1 - p) / (1 + w p (1 - p) x'P x))

and ``theta`` moves to the minimiser of the quadratic model plus the event's exact log
loss. The gradient of one log loss is a multiple of ``x``, so the minimiser is ``theta +
k P_old x`` and only the scalar ``u = x . theta_new`` is unknown; it solves the monotone
equation::

    u = z + c (y - sigmoid(u)),     z = x . theta,  c = w x'P_old x.

Its first Newton iterate from ``z`` is the *explicit* step ``theta + P_new w (y - p) x``
(the stochastic Newton step of Bercu, Godichon-Baggioni and Portier, 2020, "An efficient stochastic Newton algorithm
for parameter estimation in logistic regressions", SIAM J. Control Optim. 58(1)). That
step is taken whenever Newton's error bound shows it within a relative 1e-6 of the
implicit solution, which is the case for most events once ``c`` is small (after the
first thousand or two events of unit weight; later only for surprising events at extreme
scores); otherwise the equation is solved by bracketed Newton iterations.
The implicit step cannot overshoot: a surprising event (``p`` near 0, ``y = 1``) under a
large ``c`` (early in a stream, or with a large weight) moves ``u`` at most to where the
event's loss balances the quadratic model, whereas the explicit step would move it by up
to ``|y - p| / (p (1 - p))``, far past that point.

If a constrained coordinate went negative, ``theta`` is then projected onto the
constraint set in the norm of ``H`` (the minimiser of the updated quadratic model on the
orthant; a tiny QP solved exactly by trying every active set). A Euclidean clip would not
do: along an active constraint it would leave the free coordinates away from the
constrained optimum, whereas with the ``H``-norm projection the step in the free
coordinates is exactly the Newton step of the problem with the active coordinates fixed
at zero.

With ``decay < 1`` (exponential forgetting) the data part of ``H`` is discounted before
each event and the penalty is kept whole, ``H <- decay H + (1 - decay) reg I`` (for
``P``: ``P (decay I + (1 - decay) reg P)^-1``); the penalty's gradient, which no longer
vanishes at ``theta``, then pulls ``theta`` towards ``theta0`` by a Newton step of size
``O(1 - decay)``.

Why this rule. On a stationary stream it is the recursive form of the maximum-likelihood
fit (as recursive least squares is for least squares, or the extended Kalman filter for
logistic regression): ``H / t`` tends to the Fisher information and ``theta`` converges to
the batch optimum at the optimal rate, with no learning rate to tune. Online Newton Step
(Hazan, Agarwal and Kale, 2007), used by Online Platt Scaling, preconditions with gradient
outer products ``g g'`` and steps by ``1 / gamma``; with the observed curvature instead,
the preconditioner is the Hessian of the log loss even when the model is misspecified,
and the natural step is 1.

Invariants (asserted by :meth:`OnlineNewtonLogistic._check`):

1. ``theta`` and ``P`` are finite; ``P`` is symmetric (only its upper triangle is
   stored) and positive definite, with eigenvalues <= ``1 / regularization`` (``H >=
   regularization * I``: data only add curvature, forgetting never removes the penalty's);
2. ``H``, inverted from ``P`` by cofactors for the projection, is consistent: ``H P = I``;
3. constrained coordinates of ``theta`` are >= 0.

Weights. An event's gradient and curvature are multiplied by ``w``. The rule is invariant
under scaling every weight and ``regularization`` by one factor (bit for bit when it is a
power of two). An event with ``w p (1 - p) x'P x > 1e12`` (a single event outweighing all
that was learnt by more than double precision can represent in ``P``) is refused with
OverflowError, the state unchanged.

Cost. An event costs O(1): ``P x`` and a rank-one update of ``P`` (a dozen products
each), one exponential (more in the implicit regime, a few iterations), and with forgetting
a 2x2 or 3x3 inverse by cofactors; the projection, only when a constraint is violated,
solves at most three systems of size <= 2.

The update is compiled (``streamcal/core/_newton.pyx``, operation for operation the
floating-point arithmetic of the pure-Python version it replaced): the store
:class:`OnlineNewtonLogistic` and the per-event state machine of the calibrators built
on it, :class:`LogisticKernel` (validation, clipping, the feature map, the batch loops).
This module keeps the documentation, the constructor's checks and ``_check`` (numpy,
only there). No river.
"""

from __future__ import annotations

import math
import sys

from streamcal.core._newton import (
    EPS,
    FEATURES_ABM,
    FEATURES_AM,
    FEATURES_LOGIT,
    OVERFLOW_DOMAIN,
    LogisticKernel,
    NewtonLogistic,
)
from streamcal.core._newton import implicit_step as _implicit_step
from streamcal.core._newton import sigmoid as _sigmoid

__all__ = [
    "EPS",
    "FEATURES_ABM",
    "FEATURES_AM",
    "FEATURES_LOGIT",
    "OVERFLOW_DOMAIN",
    "LogisticKernel",
    "OnlineNewtonLogistic",
    "sigmoid",
]

_isfinite = math.isfinite


def sigmoid(z: float) -> float:
    """The logistic function ``1 / (1 + exp(-z))``, without overflow for any float
    (the function the calibrators' predictions use).

    Examples
    --------
    >>> sigmoid(0.0), sigmoid(-1000.0), sigmoid(1000.0)
    (0.5, 0.0, 1.0)

    """
    return _sigmoid(z)


class OnlineNewtonLogistic(NewtonLogistic):
    """Weighted logistic regression on 2 or 3 features, kept by online Newton steps
    (see the module docstring for the update and its invariants).

    Parameters
    ----------
    theta0
        Starting point and centre of the penalty, a tuple of 2 or 3 floats.
    regularization
        ``lambda > 0``: the penalty ``lambda / 2 * ||theta - theta0||**2`` (a Gaussian
        prior of precision ``lambda``); also the initial curvature ``H = lambda * I``.
    decay
        Factor in [0, 1] applied to the weight of every past event at each update
        (1: no forgetting).
    nonnegative
        Indices of the coordinates constrained to be >= 0 (``theta0`` must satisfy them).

    Attributes
    ----------
    theta
        The current parameter, a list of floats (read it, do not modify it).

    Examples
    --------
    >>> core = OnlineNewtonLogistic((1.0, 0.0), regularization=1.0)
    >>> for x, y in [(-1.0, 0), (0.5, 1), (2.0, 1), (-0.5, 1)]:
    ...     core.update((x, 1.0), y, 1.0)
    ...     core._check()
    >>> [round(t, 4) for t in core.theta]
    [1.2632, 0.492]
    >>> round(core.decision((0.5, 1.0)), 4)
    1.1237

    """

    __slots__ = ()

    def __init__(
        self, theta0, regularization: float = 1.0, decay: float = 1.0, nonnegative=()
    ):
        d = len(theta0)
        if d not in (2, 3):
            raise ValueError(f"theta0 must have 2 or 3 coordinates. Got {d} instead.")
        if not (0.0 < regularization < math.inf):
            raise ValueError(
                f"regularization must be finite and > 0. Got {regularization!r} instead."
            )
        if not (0.0 <= decay <= 1.0):
            raise ValueError(f"decay must be in [0, 1]. Got {decay!r} instead.")
        nonneg = tuple(sorted({int(j) for j in nonnegative}))
        if any(not 0 <= j < d or theta0[j] < 0.0 for j in nonneg):
            raise ValueError(
                f"nonnegative must index coordinates of theta0 that are >= 0. Got {nonnegative!r}."
            )
        super().__init__(theta0, float(regularization), float(decay), nonneg)

    # ------------------------------------------------------------------ reading

    @property
    def n_features(self) -> int:
        """Number of features (2 or 3)."""
        return self._d

    def decision(self, x) -> float:
        """The linear predictor ``theta . x``; O(1)."""
        return sum(t * xi for t, xi in zip(self.theta, x))

    def inverse_hessian(self) -> list[list[float]]:
        """``P = H^-1`` as a full (symmetric) list of rows: the Laplace approximation of
        the posterior covariance of ``theta`` (when the model holds and no constraint is
        active)."""
        return _full(self._p, self._d)

    def hessian(self) -> list[list[float]]:
        """The curvature matrix ``H``, inverted from the stored ``P``."""
        return _inverse_sym(_full(self._p, self._d))

    # ------------------------------------------------------------------ update

    def update(self, x, y: float, w: float) -> None:
        """Learn one event: features ``x`` (2 or 3 finite floats), label ``y`` (0.0 or
        1.0), weight ``w >= 0``. O(1).

        With ``w == 0`` only the forgetting acts (the event ages the others). Raises
        OverflowError, leaving the state unchanged, if the update would not be finite
        (only for weights so large that ``w * x' H^-1 x`` overflows). ``update2`` and
        ``update3`` (compiled) take the features as separate arguments.
        """
        if self._d == 2:
            self.update2(x[0], x[1], y, w)
        else:
            self.update3(x[0], x[1], x[2], y, w)

    # ------------------------------------------------------------------ invariants

    def _check(self) -> None:
        """Assert the invariants listed in the module docstring."""
        d = self._d
        state = f"theta={self.theta!r}, P={self._p!r}"
        assert len(self.theta) == d and len(self._p) == d * (d + 1) // 2, state
        assert all(_isfinite(t) for t in self.theta), f"non-finite theta: {state}"
        assert all(_isfinite(x) for x in self._p), f"non-finite P: {state}"
        import numpy as np  # only here: the update itself is plain Python

        P = _full(self._p, d)
        eig = np.linalg.eigvalsh(np.array(P))
        assert eig[0] > 0.0, (
            f"P = H^-1 not positive definite (eigenvalues {eig}): {state}"
        )
        # H >= reg I, i.e. P <= I / reg
        assert eig[-1] <= (1.0 + 1e-9) / self._reg, (
            f"H not >= reg I (eigenvalues of P {eig}): {state}"
        )
        H = _inverse_sym(P)
        # P is symmetric (stored as a triangle) and positive definite (above), so H P = I
        # but for rounding, which grows as the square of P's condition number c: the
        # cofactors and the determinant carry a relative error ~ eps c, H an absolute one
        # ~ eps c |H|, and H P ~ eps c^2. Two events of weight 1e8 give c = 6e7 and
        # H P - I = 1e-5; events near the weight rule's limit, c = 2e9 and 24. The
        # largest ratio seen on such streams, (H P - I) / (eps c^2), is 1.0.
        cond = eig[-1] / eig[0]
        tol = 1e-6 + 16.0 * sys.float_info.epsilon * cond * cond
        for i in range(d):
            for j in range(d):
                hp = sum(H[i][k] * P[k][j] for k in range(d))
                assert abs(hp - (i == j)) <= tol, (
                    f"inverse inconsistent: H P = {hp} at ({i}, {j}): {state}"
                )
        for j in self._nonneg:
            assert self.theta[j] >= 0.0, f"constraint theta[{j}] >= 0 violated: {state}"


def _full(h, d):
    """The full symmetric matrix (list of rows) from its upper triangle."""
    if d == 2:
        h00, h01, h11 = h
        return [[h00, h01], [h01, h11]]
    h00, h01, h02, h11, h12, h22 = h
    return [[h00, h01, h02], [h01, h11, h12], [h02, h12, h22]]


def _inverse_sym(A):
    """Inverse of a symmetric 2x2 or 3x3 matrix by cofactors (symmetric result)."""
    if len(A) == 2:
        a, b, c = A[0][0], A[0][1], A[1][1]
        inv = 1.0 / (a * c - b * b)
        return [[c * inv, -b * inv], [-b * inv, a * inv]]
    (h00, h01, h02), (_, h11, h12), (_, _, h22) = A
    a00 = h11 * h22 - h12 * h12
    a01 = h02 * h12 - h01 * h22
    a02 = h01 * h12 - h02 * h11
    a11 = h00 * h22 - h02 * h02
    a12 = h01 * h02 - h00 * h12
    a22 = h00 * h11 - h01 * h01
    inv = 1.0 / (h00 * a00 + h01 * a01 + h02 * a02)
    return [
        [a00 * inv, a01 * inv, a02 * inv],
        [a01 * inv, a11 * inv, a12 * inv],
        [a02 * inv, a12 * inv, a22 * inv],
    ]
