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

This module is pure: plain Python floats and :mod:`math` (numpy only inside ``_check``),
no river.
"""

from __future__ import annotations

import itertools
import math

__all__ = ["OnlineNewtonLogistic", "sigmoid"]

_exp = math.exp
_isfinite = math.isfinite

# The explicit step is taken when an a-priori bound shows it within a relative _RTOL of
# the implicit one; otherwise the implicit equation is solved to that accuracy. The
# error left is a millionth of the step, far below the step's own statistical noise.
_RTOL = 1e-6
# Newton's error bound for the first iterate: |u1 - u*| <= K c (c r)^2 / d with
# K = max|sigmoid''| / 2 = 1 / (12 sqrt 3); relative to |u1 - z| = |c r| / d this is
# K c |c r|, so the explicit step is accurate enough when c |c r| <= _RTOL / K.
_ACCEPT = _RTOL * 12.0 * math.sqrt(3.0)
# Safeguard of the bracketed Newton iterations (bisection halves the bracket each step).
_MAX_ITER = 200
# The Sherman-Morrison update of P loses a relative 1e-16 * w p (1 - p) v of the new,
# smallest, curvature direction: beyond _SM_MAX the event would outweigh everything
# learnt by more than double precision can carry, and the update is refused.
_SM_MAX = 1e12


def sigmoid(z: float) -> float:
    """The logistic function ``1 / (1 + exp(-z))``, without overflow for any float.

    Examples
    --------
    >>> sigmoid(0.0), sigmoid(-1000.0), sigmoid(1000.0)
    (0.5, 0.0, 1.0)

    """
    if z >= 0.0:
        return 1.0 / (1.0 + _exp(-z))
    e = _exp(z)
    return e / (1.0 + e)


def _implicit_step(z: float, c: float, y: float) -> float:
    """Solve ``u = z + c * (y - sigmoid(u))`` for ``u`` (``c > 0``, ``y`` 0 or 1).

    ``f(u) = u - z - c (y - sigmoid(u))`` is increasing (``f' = 1 + c p (1 - p) >= 1``,
    so ``|u - u*| <= |f(u)|``) and its root lies between ``z`` and ``z + c (y -
    sigmoid(z))``. Newton iterates from ``z`` are kept inside that bracket (bisecting when
    one leaves it) until ``|f(u)| <= _RTOL |u - z|`` (plus rounding).
    """
    if z >= 0.0:
        e = _exp(-z)
        p = 1.0 / (1.0 + e)
        om = e * p  # 1 - p, without cancellation
    else:
        e = _exp(z)
        om = 1.0 / (1.0 + e)
        p = e * om
    cr = c * (om if y else -p)
    lo, hi = (z, z + cr) if cr > 0.0 else (z + cr, z)
    u = z + cr / (1.0 + c * (p * om))
    for _ in range(_MAX_ITER):
        if u >= 0.0:
            e = _exp(-u)
            p = 1.0 / (1.0 + e)
            om = e * p
        else:
            e = _exp(u)
            om = 1.0 / (1.0 + e)
            p = e * om
        cr = c * (om if y else -p)
        f = u - z - cr
        if abs(f) <= _RTOL * abs(u - z) + 4e-16 * (abs(u) + abs(z) + abs(cr)):
            break
        if f < 0.0:
            lo = u
        else:
            hi = u
        un = u - f / (1.0 + c * (p * om))
        if not lo < un < hi:
            un = 0.5 * (lo + hi)
            if un == lo or un == hi:  # the bracket is down to adjacent doubles
                break
        u = un
    return u


class OnlineNewtonLogistic:
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

    __slots__ = ("_d", "_decay", "_nonneg", "_p", "_reg", "_theta0", "theta")

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
        self._d = d
        self._theta0 = tuple(float(t) for t in theta0)
        self._reg = float(regularization)
        self._decay = float(decay)
        self._nonneg = nonneg
        self.theta = list(self._theta0)
        r = 1.0 / self._reg
        # P = H^-1, upper triangle row by row: (p00, p01, p11) or (p00, p01, p02, p11, p12, p22)
        self._p = [r, 0.0, r] if d == 2 else [r, 0.0, 0.0, r, 0.0, r]

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
        (only for weights so large that ``w * x' H^-1 x`` overflows).
        """
        if self._d == 2:
            self.update2(x[0], x[1], y, w)
        else:
            self.update3(x[0], x[1], x[2], y, w)

    def update2(self, x0: float, x1: float, y: float, w: float) -> None:
        """:meth:`update` for 2 features, without building a tuple (the fast path)."""
        theta = self.theta
        t0, t1 = theta
        p00, p01, p11 = self._p
        lam = self._decay
        if lam != 1.0:
            # P <- (lam H + rho I)^-1 = P (lam I + rho P)^-1, then the penalty's pull
            rho = self._reg * (1.0 - lam)
            m00 = lam + rho * p00
            m01 = rho * p01
            m11 = lam + rho * p11
            inv = 1.0 / (m00 * m11 - m01 * m01)
            i00, i01, i11 = m11 * inv, -m01 * inv, m00 * inv
            p00, p01, p11 = (
                p00 * i00 + p01 * i01,
                p00 * i01 + p01 * i11,
                p01 * i01 + p11 * i11,
            )
            c0, c1 = self._theta0
            g0 = rho * (t0 - c0)
            g1 = rho * (t1 - c1)
            t0 -= p00 * g0 + p01 * g1
            t1 -= p01 * g0 + p11 * g1
        if w > 0.0:
            q0 = p00 * x0 + p01 * x1  # P x
            q1 = p01 * x0 + p11 * x1
            v = x0 * q0 + x1 * q1
            if v > 0.0:
                # as in update3, inlined: a shared helper measured 3% slower per event
                z = t0 * x0 + t1 * x1
                c = w * v
                if z >= 0.0:
                    e = _exp(-z)
                    p = 1.0 / (1.0 + e)
                    om = e * p
                else:
                    e = _exp(z)
                    om = 1.0 / (1.0 + e)
                    p = e * om
                r = om if y else -p
                h = p * om
                d = 1.0 + c * h
                cr = c * r
                if c * abs(cr) <= _ACCEPT:
                    k = w * r / d  # the explicit step, accurate to _RTOL
                else:
                    k = (_implicit_step(z, c, y) - z) / v
                t0 += k * q0
                t1 += k * q1
                wh = w * h
                if not wh * v <= _SM_MAX:
                    raise OverflowError(
                        "the weight is too large for the curvature update"
                    )
                b = wh / d  # Sherman-Morrison: P <- P - b (P x)(P x)'
                b0 = b * q0
                p00 -= b0 * q0
                p01 -= b0 * q1
                p11 -= b * q1 * q1
        # off-diagonal entries of a positive definite P are bounded by the diagonal ones
        if not _isfinite(t0 + t1 + p00 + p11):
            raise OverflowError("the update overflows")
        if self._nonneg and (t0 < 0.0 or t1 < 0.0):
            t0, t1 = self._project([t0, t1], [p00, p01, p11])
        theta[0] = t0
        theta[1] = t1
        self._p = [p00, p01, p11]

    def update3(self, x0: float, x1: float, x2: float, y: float, w: float) -> None:
        """:meth:`update` for 3 features, without building a tuple (the fast path)."""
        theta = self.theta
        t0, t1, t2 = theta
        p00, p01, p02, p11, p12, p22 = self._p
        lam = self._decay
        if lam != 1.0:
            # P <- (lam H + rho I)^-1 = P (lam I + rho P)^-1, then the penalty's pull
            rho = self._reg * (1.0 - lam)
            m00 = lam + rho * p00
            m01 = rho * p01
            m02 = rho * p02
            m11 = lam + rho * p11
            m12 = rho * p12
            m22 = lam + rho * p22
            a00 = m11 * m22 - m12 * m12
            a01 = m02 * m12 - m01 * m22
            a02 = m01 * m12 - m02 * m11
            inv = 1.0 / (m00 * a00 + m01 * a01 + m02 * a02)
            a00 *= inv
            a01 *= inv
            a02 *= inv
            a11 = (m00 * m22 - m02 * m02) * inv
            a12 = (m01 * m02 - m00 * m12) * inv
            a22 = (m00 * m11 - m01 * m01) * inv
            p00, p01, p02, p11, p12, p22 = (
                p00 * a00 + p01 * a01 + p02 * a02,
                p00 * a01 + p01 * a11 + p02 * a12,
                p00 * a02 + p01 * a12 + p02 * a22,
                p01 * a01 + p11 * a11 + p12 * a12,
                p01 * a02 + p11 * a12 + p12 * a22,
                p02 * a02 + p12 * a12 + p22 * a22,
            )
            c0, c1, c2 = self._theta0
            g0 = rho * (t0 - c0)
            g1 = rho * (t1 - c1)
            g2 = rho * (t2 - c2)
            t0 -= p00 * g0 + p01 * g1 + p02 * g2
            t1 -= p01 * g0 + p11 * g1 + p12 * g2
            t2 -= p02 * g0 + p12 * g1 + p22 * g2
        if w > 0.0:
            q0 = p00 * x0 + p01 * x1 + p02 * x2  # P x
            q1 = p01 * x0 + p11 * x1 + p12 * x2
            q2 = p02 * x0 + p12 * x1 + p22 * x2
            v = x0 * q0 + x1 * q1 + x2 * q2
            if v > 0.0:
                # as in update2, inlined: a shared helper measured 3% slower per event
                z = t0 * x0 + t1 * x1 + t2 * x2
                c = w * v
                if z >= 0.0:
                    e = _exp(-z)
                    p = 1.0 / (1.0 + e)
                    om = e * p
                else:
                    e = _exp(z)
                    om = 1.0 / (1.0 + e)
                    p = e * om
                r = om if y else -p
                h = p * om
                d = 1.0 + c * h
                cr = c * r
                if c * abs(cr) <= _ACCEPT:
                    k = w * r / d  # the explicit step, accurate to _RTOL
                else:
                    k = (_implicit_step(z, c, y) - z) / v
                t0 += k * q0
                t1 += k * q1
                t2 += k * q2
                wh = w * h
                if not wh * v <= _SM_MAX:
                    raise OverflowError(
                        "the weight is too large for the curvature update"
                    )
                b = wh / d  # Sherman-Morrison: P <- P - b (P x)(P x)'
                b0 = b * q0
                b1 = b * q1
                p00 -= b0 * q0
                p01 -= b0 * q1
                p02 -= b0 * q2
                p11 -= b1 * q1
                p12 -= b1 * q2
                p22 -= b * q2 * q2
        # off-diagonal entries of a positive definite P are bounded by the diagonal ones
        if not _isfinite(t0 + t1 + t2 + p00 + p11 + p22):
            raise OverflowError("the update overflows")
        if self._nonneg and (t0 < 0.0 or t1 < 0.0 or t2 < 0.0):
            t0, t1, t2 = self._project([t0, t1, t2], [p00, p01, p02, p11, p12, p22])
        theta[0] = t0
        theta[1] = t1
        theta[2] = t2
        self._p = [p00, p01, p02, p11, p12, p22]

    def _project(self, t: list, p: list) -> list:
        """The point of ``{theta_j >= 0 for j in nonnegative}`` nearest to ``t`` in the
        norm of ``H = P^-1``: each active set is tried (the active coordinates set to 0,
        the free ones minimising the quadratic given them) and the feasible candidate of
        least ``H``-distance is kept. The optimum is one of the candidates and every
        feasible candidate is at least as far, so this is exact. At most 3 active sets."""
        nonneg = self._nonneg
        if all(t[j] >= 0.0 for j in nonneg):
            return t
        d = self._d
        H = _inverse_sym(_full(p, d))
        best, best_dist = None, math.inf
        for k in range(1, len(nonneg) + 1):
            for active in itertools.combinations(nonneg, k):
                free = [j for j in range(d) if j not in active]
                # delta_active = -t_active; H_ff delta_f = -H_fa delta_a = H_fa t_a
                rhs = [sum(H[i][a] * t[a] for a in active) for i in free]
                delta_f = _solve_small([[H[i][j] for j in free] for i in free], rhs)
                cand = list(t)
                for a in active:
                    cand[a] = 0.0
                for i, dl in zip(free, delta_f):
                    cand[i] = t[i] + dl
                if any(cand[j] < 0.0 for j in nonneg):
                    continue
                delta = [cand[i] - t[i] for i in range(d)]
                dist = sum(
                    delta[i] * H[i][j] * delta[j] for i in range(d) for j in range(d)
                )
                if dist < best_dist:
                    best, best_dist = cand, dist
        return best

    # ------------------------------------------------------------------ state

    def to_lists(self) -> list:
        """JSON-safe state: ``[theta, upper triangle of P = H^-1]``."""
        return [list(self.theta), list(self._p)]

    def set_lists(self, data) -> None:
        """Restore the state written by :meth:`to_lists` (same parameters)."""
        theta, p = data
        if len(theta) != self._d or len(p) != len(self._p):
            raise ValueError("the state does not match the number of features")
        self.theta = [float(t) for t in theta]
        self._p = [float(x) for x in p]

    def __getstate__(self):
        return {name: getattr(self, name) for name in self.__slots__}

    def __setstate__(self, state):
        for name, value in state.items():
            setattr(self, name, value)

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
        for i in range(d):
            for j in range(d):
                hp = sum(H[i][k] * P[k][j] for k in range(d))
                assert abs(hp - (i == j)) <= 1e-6, (
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


def _solve_small(A, b):
    """Solve ``A x = b`` for a symmetric positive definite ``A`` of size 1 to 3 by
    Gaussian elimination without pivoting (fine for positive definite matrices)."""
    n = len(b)
    M = [list(A[i]) + [b[i]] for i in range(n)]
    for k in range(n):
        piv = M[k][k]
        for i in range(k + 1, n):
            f = M[i][k] / piv
            for j in range(k, n + 1):
                M[i][j] -= f * M[k][j]
    x = [0.0] * n
    for i in range(n - 1, -1, -1):
        x[i] = (M[i][n] - sum(M[i][j] * x[j] for j in range(i + 1, n))) / M[i][i]
    return x
