"""Compiled kernels of :mod:`streamcal.core.newton`: the online Newton store and the
per-event state machine of the logistic calibrators (``OnlinePlatt``, ``OnlineBeta``).

The update rule, its invariants and the reasons for it are stated in the docstring of
:mod:`streamcal.core.newton`; this file is its transcription in C, operation for
operation the same floating-point arithmetic as the pure-Python version it replaced
(libm's ``log`` and ``exp``, which Python's :mod:`math` also calls), so that the
trajectories are bit for bit those of that version. Only the per-event methods and the
batch loops live here; the Python shells keep parameters, snapshots, repr and docs.
"""

cimport cython
from libc.math cimport INFINITY, exp, fabs, isfinite, log, sqrt

from streamcal._cvalidation cimport check_label, check_score, check_weight

import numpy as np

from streamcal import _validation as V

# see streamcal/core/newton.py for the meaning of each constant
cdef double RTOL = 1e-6
cdef double ACCEPT = RTOL * 12.0 * sqrt(3.0)
cdef int MAX_ITER = 200
cdef double SM_MAX = 1e12

#: Scores are clipped to ``[EPS, 1 - EPS]`` before logarithms (machine epsilon 2**-52).
EPS = 2.0 ** -52
cdef double C_EPS = 2.0 ** -52
cdef double C_HI = 1.0 - 2.0 ** -52

#: Feature maps of :class:`LogisticKernel`: ``(logit s, 1)``, ``(ln s, -ln(1 - s), 1)``,
#: ``(ln 2s, -ln(2 (1 - s)))``.
FEATURES_LOGIT = 0
FEATURES_ABM = 1
FEATURES_AM = 2

#: The domain stated when a weight is refused because the update cannot be represented.
OVERFLOW_DOMAIN = (
    "a finite real number >= 0 small enough for the update to be represented in double "
    "precision (an event may outweigh all that was learnt by a factor up to about 1e12)"
)


cdef inline void sigmoid_pair(double z, double* p, double* om) noexcept:
    # p = sigmoid(z) and om = 1 - p, each without cancellation
    cdef double e
    if z >= 0.0:
        e = exp(-z)
        p[0] = 1.0 / (1.0 + e)
        om[0] = e * p[0]
    else:
        e = exp(z)
        om[0] = 1.0 / (1.0 + e)
        p[0] = e * om[0]


cdef inline double implicit_root(double z, double c, double y) noexcept:
    # the bracketed Newton iterations of newton.implicit_step (see its docstring)
    cdef double p, om, cr, lo, hi, u, f, un
    cdef int it
    sigmoid_pair(z, &p, &om)
    cr = c * (om if y != 0.0 else -p)
    if cr > 0.0:
        lo = z
        hi = z + cr
    else:
        lo = z + cr
        hi = z
    u = z + cr / (1.0 + c * (p * om))
    for it in range(MAX_ITER):
        sigmoid_pair(u, &p, &om)
        cr = c * (om if y != 0.0 else -p)
        f = u - z - cr
        if fabs(f) <= RTOL * fabs(u - z) + 4e-16 * (fabs(u) + fabs(z) + fabs(cr)):
            break
        if f < 0.0:
            lo = u
        else:
            hi = u
        un = u - f / (1.0 + c * (p * om))
        if not (lo < un < hi):
            un = 0.5 * (lo + hi)
            if un == lo or un == hi:  # the bracket is down to adjacent doubles
                break
        u = un
    return u


cdef inline bint event_gains(double z, double v, double y, double w, double* k,
                             double* b) noexcept:
    # One event's step of the store (c_update2 and c_update3): z = theta'x, v = x'Px > 0.
    # Sets k, the step along P x, and b, the Sherman-Morrison coefficient
    # (P <- P - b (P x)(P x)'); 1 (nothing set) if the update cannot be represented.
    cdef double c = w * v, p, om, r, h, dd, cr, wh
    sigmoid_pair(z, &p, &om)
    r = om if y != 0.0 else -p
    h = p * om
    dd = 1.0 + c * h
    cr = c * r
    wh = w * h
    if not (wh * v <= SM_MAX):
        return 1
    if c * fabs(cr) <= ACCEPT:
        k[0] = w * r / dd  # the explicit step, accurate to RTOL
    else:
        k[0] = (implicit_root(z, c, y) - z) / v
    b[0] = wh / dd
    return 0


def implicit_step(double z, double c, double y):
    """Solve ``u = z + c * (y - sigmoid(u))`` for ``u`` (``c > 0``, ``y`` 0 or 1); see
    :func:`streamcal.core.newton.implicit_step`."""
    return implicit_root(z, c, y)


cdef inline double sigmoid_c(double z) noexcept:
    cdef double e
    if z >= 0.0:
        return 1.0 / (1.0 + exp(-z))
    e = exp(z)
    return e / (1.0 + e)


def sigmoid(double z):
    """The logistic function; see :func:`streamcal.core.newton.sigmoid`."""
    return sigmoid_c(z)


cdef inline double predict_at(int features, const double* t, double s) noexcept:
    # the fitted map at score s (the calibrators' predict_one after the cold start)
    cdef double z
    if s < C_EPS:  # clip, so that the logarithms stay finite
        s = C_EPS
    elif s > C_HI:
        s = C_HI
    if features == 0:
        z = t[0] * log(s / (1.0 - s)) + t[1]
    elif features == 1:
        z = t[0] * log(s) + t[1] * -log(1.0 - s) + t[2]
    else:
        z = t[0] * log(s + s) + t[1] * -log(2.0 - (s + s))
    return sigmoid_c(z)


cdef class NewtonLogistic:
    """The compiled store of :class:`streamcal.core.newton.OnlineNewtonLogistic` (which
    documents it, checks the constructor's arguments and asserts the invariants)."""

    def __init__(self, theta0, double regularization=1.0, double decay=1.0, nonnegative=()):
        import itertools

        cdef int j, k, mask
        d = len(theta0)
        if d not in (2, 3):
            raise ValueError(f"theta0 must have 2 or 3 coordinates. Got {d} instead.")
        self.d = d
        for j in range(d):
            self.t0[j] = float(theta0[j])
            self.t[j] = self.t0[j]
        self.reg = regularization
        self.decay = decay
        nonneg = sorted({int(j) for j in nonnegative})
        self.nonneg_mask = 0
        for j in nonneg:
            self.nonneg_mask |= 1 << j
        # the active sets tried by the projection, in the order of the pure version
        self.n_active_sets = 0
        for k in range(1, len(nonneg) + 1):
            for active in itertools.combinations(nonneg, k):
                mask = 0
                for j in active:
                    mask |= 1 << j
                self.active_sets[self.n_active_sets] = mask
                self.n_active_sets += 1
        r = 1.0 / regularization
        if d == 2:
            self.p[0], self.p[1], self.p[2] = r, 0.0, r
        else:
            self.p[0], self.p[1], self.p[2], self.p[3], self.p[4], self.p[5] = (
                r, 0.0, 0.0, r, 0.0, r
            )

    # ------------------------------------------------------------------ reading

    @property
    def theta(self):
        """The current parameter, a new list of floats."""
        return [self.t[j] for j in range(self.d)]

    def theta_within(self, double bound):
        """Whether every coordinate of the parameter lies in ``[-bound, bound]``
        (``theta`` without building its list: the fallback guard's question)."""
        cdef int j
        for j in range(self.d):
            if not -bound <= self.t[j] <= bound:
                return False
        return True

    @property
    def _p(self):
        """The upper triangle of ``P = H^-1``, a new list."""
        return [self.p[j] for j in range(self.d * (self.d + 1) // 2)]

    @property
    def _d(self):
        return self.d

    @property
    def _reg(self):
        return self.reg

    @property
    def _decay(self):
        return self.decay

    @property
    def _theta0(self):
        return tuple(self.t0[j] for j in range(self.d))

    @property
    def _nonneg(self):
        return tuple(j for j in range(self.d) if self.nonneg_mask >> j & 1)

    # ------------------------------------------------------------------ update

    # Kept apart from c_update3 (the same step for three features) on purpose: each is
    # written out in scalar locals (no loop over d, no arrays) for the per-event path
    # of Platt and beta scaling; a d-generic version was not measured against it
    # (issue 14 leaves this pair).
    cdef int c_update2(self, double x0, double x1, double y, double w) noexcept:
        # 0 on success, 1 (state unchanged) if the update cannot be represented
        cdef double t0 = self.t[0], t1 = self.t[1]
        cdef double p00 = self.p[0], p01 = self.p[1], p11 = self.p[2]
        cdef double lam = self.decay
        cdef double rho, m00, m01, m11, inv, i00, i01, i11, n00, n01, n11, g0, g1
        cdef double q0, q1, v, k, b, b0
        if lam != 1.0:
            # P <- (lam H + rho I)^-1 = P (lam I + rho P)^-1, then the penalty's pull
            rho = self.reg * (1.0 - lam)
            m00 = lam + rho * p00
            m01 = rho * p01
            m11 = lam + rho * p11
            inv = 1.0 / (m00 * m11 - m01 * m01)
            i00 = m11 * inv
            i01 = -m01 * inv
            i11 = m00 * inv
            n00 = p00 * i00 + p01 * i01
            n01 = p00 * i01 + p01 * i11
            n11 = p01 * i01 + p11 * i11
            p00 = n00
            p01 = n01
            p11 = n11
            g0 = rho * (t0 - self.t0[0])
            g1 = rho * (t1 - self.t0[1])
            t0 -= p00 * g0 + p01 * g1
            t1 -= p01 * g0 + p11 * g1
        if w > 0.0:
            q0 = p00 * x0 + p01 * x1  # P x
            q1 = p01 * x0 + p11 * x1
            v = x0 * q0 + x1 * q1
            if v > 0.0:
                if event_gains(t0 * x0 + t1 * x1, v, y, w, &k, &b):
                    return 1
                t0 += k * q0
                t1 += k * q1
                # Sherman-Morrison: P <- P - b (P x)(P x)'
                b0 = b * q0
                p00 -= b0 * q0
                p01 -= b0 * q1
                p11 -= b * q1 * q1
        # off-diagonal entries of a positive definite P are bounded by the diagonal ones
        if isfinite(t0 + t1 + p00 + p11):
            self.t[0] = t0
            self.t[1] = t1
            self.p[0] = p00
            self.p[1] = p01
            self.p[2] = p11
            # feasible: return at once (this order saves the common path a jump,
            # benchmarks/instructions_per_event.py platt)
            if not self.nonneg_mask or (t0 >= 0.0 and t1 >= 0.0):
                return 0
            self.c_project(self.t, self.p)  # in place: it reads P, moves theta
            return 0
        return 1

    # the Newton / Sherman-Morrison step of c_update2, unrolled for three features on
    # purpose (per-event path; see c_update2 for why the two are not one loop)
    cdef int c_update3(self, double x0, double x1, double x2, double y, double w) noexcept:
        # 0 on success, 1 (state unchanged) if the update cannot be represented
        cdef double t0 = self.t[0], t1 = self.t[1], t2 = self.t[2]
        cdef double p00 = self.p[0], p01 = self.p[1], p02 = self.p[2]
        cdef double p11 = self.p[3], p12 = self.p[4], p22 = self.p[5]
        cdef double lam = self.decay
        cdef double rho, m00, m01, m02, m11, m12, m22, a00, a01, a02, a11, a12, a22, inv
        cdef double n00, n01, n02, n11, n12, n22, g0, g1, g2
        cdef double q0, q1, q2, v, k, b, b0, b1
        if lam != 1.0:
            rho = self.reg * (1.0 - lam)
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
            n00 = p00 * a00 + p01 * a01 + p02 * a02
            n01 = p00 * a01 + p01 * a11 + p02 * a12
            n02 = p00 * a02 + p01 * a12 + p02 * a22
            n11 = p01 * a01 + p11 * a11 + p12 * a12
            n12 = p01 * a02 + p11 * a12 + p12 * a22
            n22 = p02 * a02 + p12 * a12 + p22 * a22
            p00 = n00
            p01 = n01
            p02 = n02
            p11 = n11
            p12 = n12
            p22 = n22
            g0 = rho * (t0 - self.t0[0])
            g1 = rho * (t1 - self.t0[1])
            g2 = rho * (t2 - self.t0[2])
            t0 -= p00 * g0 + p01 * g1 + p02 * g2
            t1 -= p01 * g0 + p11 * g1 + p12 * g2
            t2 -= p02 * g0 + p12 * g1 + p22 * g2
        if w > 0.0:
            q0 = p00 * x0 + p01 * x1 + p02 * x2  # P x
            q1 = p01 * x0 + p11 * x1 + p12 * x2
            q2 = p02 * x0 + p12 * x1 + p22 * x2
            v = x0 * q0 + x1 * q1 + x2 * q2
            if v > 0.0:
                if event_gains(t0 * x0 + t1 * x1 + t2 * x2, v, y, w, &k, &b):
                    return 1
                t0 += k * q0
                t1 += k * q1
                t2 += k * q2
                # Sherman-Morrison: P <- P - b (P x)(P x)'
                b0 = b * q0
                b1 = b * q1
                p00 -= b0 * q0
                p01 -= b0 * q1
                p02 -= b0 * q2
                p11 -= b1 * q1
                p12 -= b1 * q2
                p22 -= b * q2 * q2
        if isfinite(t0 + t1 + t2 + p00 + p11 + p22):
            self.t[0] = t0
            self.t[1] = t1
            self.t[2] = t2
            self.p[0] = p00
            self.p[1] = p01
            self.p[2] = p02
            self.p[3] = p11
            self.p[4] = p12
            self.p[5] = p22
            if not self.nonneg_mask or (t0 >= 0.0 and t1 >= 0.0 and t2 >= 0.0):
                return 0
            self.c_project(self.t, self.p)
            return 0
        return 1

    cdef void c_project(self, double* t, const double* p) noexcept:
        # The H-norm nearest point of the orthant {t_j >= 0, j constrained}: every
        # active set is tried (active coordinates set to 0, the free ones minimising the
        # quadratic given them), the feasible candidate of least H-distance is kept.
        cdef int d = self.d
        cdef int mask = self.nonneg_mask
        cdef double H[3][3]
        cdef double M[3][4]
        cdef double cand[3]
        cdef double best[3]
        cdef double delta[3]
        cdef double xs[3]
        cdef int free[3]
        cdef double a, b, c, inv, acc, piv, f, dist
        cdef double a00, a01, a02, a11, a12, a22
        cdef double best_dist = INFINITY
        cdef int i, j, kk, n, s, active, found = 0
        for j in range(d):
            if mask >> j & 1 and not (t[j] >= 0.0):
                break
        else:
            return
        # H = P^-1 by cofactors
        if d == 2:
            a = p[0]
            b = p[1]
            c = p[2]
            inv = 1.0 / (a * c - b * b)
            H[0][0] = c * inv
            H[0][1] = -b * inv
            H[1][0] = -b * inv
            H[1][1] = a * inv
        else:
            a00 = p[3] * p[5] - p[4] * p[4]
            a01 = p[2] * p[4] - p[1] * p[5]
            a02 = p[1] * p[4] - p[2] * p[3]
            a11 = p[0] * p[5] - p[2] * p[2]
            a12 = p[1] * p[2] - p[0] * p[4]
            a22 = p[0] * p[3] - p[1] * p[1]
            inv = 1.0 / (p[0] * a00 + p[1] * a01 + p[2] * a02)
            H[0][0] = a00 * inv
            H[0][1] = a01 * inv
            H[0][2] = a02 * inv
            H[1][0] = a01 * inv
            H[1][1] = a11 * inv
            H[1][2] = a12 * inv
            H[2][0] = a02 * inv
            H[2][1] = a12 * inv
            H[2][2] = a22 * inv
        for s in range(self.n_active_sets):
            active = self.active_sets[s]
            n = 0
            for j in range(d):
                if not (active >> j & 1):
                    free[n] = j
                    n += 1
            # H_ff delta_f = H_fa t_a, by Gaussian elimination without pivoting
            for i in range(n):
                for j in range(n):
                    M[i][j] = H[free[i]][free[j]]
                acc = 0.0
                for j in range(d):
                    if active >> j & 1:
                        acc += H[free[i]][j] * t[j]
                M[i][n] = acc
            for kk in range(n):
                piv = M[kk][kk]
                for i in range(kk + 1, n):
                    f = M[i][kk] / piv
                    for j in range(kk, n + 1):
                        M[i][j] -= f * M[kk][j]
            for i in range(n - 1, -1, -1):
                acc = 0.0
                for j in range(i + 1, n):
                    acc += M[i][j] * xs[j]
                xs[i] = (M[i][n] - acc) / M[i][i]
            for j in range(d):
                cand[j] = 0.0 if active >> j & 1 else t[j]
            for i in range(n):
                cand[free[i]] = t[free[i]] + xs[i]
            for j in range(d):
                if mask >> j & 1 and cand[j] < 0.0:
                    break
            else:
                for j in range(d):
                    delta[j] = cand[j] - t[j]
                dist = 0.0
                for i in range(d):
                    for j in range(d):
                        dist += delta[i] * H[i][j] * delta[j]
                if dist < best_dist:
                    best_dist = dist
                    found = 1
                    for j in range(d):
                        best[j] = cand[j]
        if found:
            for j in range(d):
                t[j] = best[j]

    def update2(self, double x0, double x1, double y, double w):
        """Learn one event of 2 features; OverflowError (state unchanged) if the update
        cannot be represented. See :meth:`OnlineNewtonLogistic.update`."""
        if self.d != 2:
            raise ValueError("update2 needs a store of 2 features")
        if self.c_update2(x0, x1, y, w):
            raise OverflowError("the update overflows")

    def update3(self, double x0, double x1, double x2, double y, double w):
        """Learn one event of 3 features; OverflowError (state unchanged) if the update
        cannot be represented. See :meth:`OnlineNewtonLogistic.update`."""
        if self.d != 3:
            raise ValueError("update3 needs a store of 3 features")
        if self.c_update3(x0, x1, x2, y, w):
            raise OverflowError("the update overflows")

    def _project(self, t, p):
        """The projection of ``t`` (a list) in the norm of ``H = P^-1`` (``p`` the upper
        triangle of ``P``): a new list."""
        cdef double tt[3]
        cdef double pp[6]
        cdef int j
        for j in range(self.d):
            tt[j] = t[j]
        for j in range(self.d * (self.d + 1) // 2):
            pp[j] = p[j]
        self.c_project(tt, pp)
        return [tt[j] for j in range(self.d)]

    # ------------------------------------------------------------------ state

    cdef void c_save(self, double* buf) noexcept:
        cdef int j
        for j in range(3):
            buf[j] = self.t[j]
        for j in range(6):
            buf[3 + j] = self.p[j]

    cdef void c_restore(self, const double* buf) noexcept:
        cdef int j
        for j in range(3):
            self.t[j] = buf[j]
        for j in range(6):
            self.p[j] = buf[3 + j]

    def to_lists(self):
        """JSON-safe state: ``[theta, upper triangle of P = H^-1]``."""
        return [self.theta, self._p]

    def set_lists(self, data):
        """Restore the state written by :meth:`to_lists` (same parameters)."""
        cdef int j
        theta, p = data
        if len(theta) != self.d or len(p) != self.d * (self.d + 1) // 2:
            raise ValueError("the state does not match the number of features")
        theta = [float(x) for x in theta]
        p = [float(x) for x in p]
        for j in range(self.d):
            self.t[j] = theta[j]
        for j in range(len(p)):
            self.p[j] = p[j]

    def __reduce__(self):
        return (
            type(self),
            (self._theta0, self.reg, self.decay, self._nonneg),
            self.to_lists(),
        )

    def __setstate__(self, state):
        self.set_lists(state)


# pickled by the Python shells (__getstate__ / __setstate__ over the snapshot state)
@cython.auto_pickle(False)
cdef class LogisticKernel:
    """The per-event state machine of the logistic calibrators: validation, clipping, the
    feature map, the Newton store and the batch loops, in C. ``OnlinePlatt`` and
    ``OnlineBeta`` (:mod:`streamcal.calibrators.scaling`) are its Python subclasses and
    set ``_core``, ``_features``, ``_ages`` and ``_fitted`` in their ``_reset``."""

    def __cinit__(self):
        self._name = type(self).__name__
        self._features = FEATURES_LOGIT
        self._fitted = False
        self._ages = False

    cdef double c_predict(self, double s) noexcept:
        if not self._fitted:
            return s
        return predict_at(self._features, self._core.t, s)

    cdef int c_learn_unchecked(self, double s, double y, double w) noexcept:
        # 0 on success, 1 (state unchanged) if the weight cannot be represented
        cdef int err
        if w == 0.0 and not self._ages:
            return 0  # teaches nothing, ages nothing
        if s < C_EPS:  # clip, so that the logarithms stay finite
            s = C_EPS
        elif s > C_HI:
            s = C_HI
        if self._features == 0:
            err = self._core.c_update2(log(s / (1.0 - s)), 1.0, y, w)
        elif self._features == 1:
            err = self._core.c_update3(log(s), -log(1.0 - s), 1.0, y, w)
        else:
            err = self._core.c_update2(log(s + s), -log(2.0 - (s + s)), y, w)
        if err:
            return 1
        if w > 0.0:
            self._fitted = True
        return 0

    cdef int c_learn(self, double s, double y, double w) except -1:
        if self._core is None:
            raise RuntimeError(f"{self._name} was not initialised (its __init__ did not run)")
        if self.c_learn_unchecked(s, y, w):
            self._refuse(w)
        return 0

    cdef int _refuse(self, double w, str method="learn_one", Py_ssize_t index=-1) except -1:
        # the error of a weight the state cannot take; a batch's names its index
        raise V.argument_error(
            ValueError, "w", self._name, method, OVERFLOW_DOMAIN, w,
            f" at index {index}" if index >= 0 else "",
        )

    @cython.annotation_typing(False)  # annotations for readers (inspect), not C types
    def learn_one(self, score: float, label: bool | int, w: float = 1.0) -> None:
        """Update the fit with one event; O(1).

        Parameters
        ----------
        score
            The model's score, a real number in [0, 1].
        label
            The observed outcome: 0, 1, False or True.
        w
            Sample weight, a finite real number >= 0 (ValueError, state unchanged, if
            the update it asks for cannot be represented in double precision).
        """
        cdef double s = check_score(score, self._name, "learn_one")
        cdef double y = check_label(label, self._name, "learn_one")
        self.c_learn(s, y, check_weight(w, self._name, "learn_one"))

    @cython.annotation_typing(False)
    def predict_one(self, score: float) -> float:
        """Return the calibrated probability of ``score``, the fitted map at the clipped
        score; O(1). Before any event of positive weight, ``score`` itself."""
        return self.c_predict(check_score(score, self._name, "predict_one"))

    def _predict_many_validated(self, const double[:] scores):
        """``predict_one`` of each (validated) score, in one compiled pass."""
        cdef Py_ssize_t i, n = scores.shape[0]
        cdef int features = self._features
        cdef double t[3]
        out = np.empty(n, dtype=np.float64)
        cdef double[::1] o = out
        if not self._fitted:  # the cold start: the scores themselves
            for i in range(n):
                o[i] = scores[i]
            return out
        t[0], t[1], t[2] = self._core.t[0], self._core.t[1], self._core.t[2]
        # one loop per feature map, so that the compiler specialises predict_at
        if features == 0:
            for i in range(n):
                o[i] = predict_at(0, t, scores[i])
        elif features == 1:
            for i in range(n):
                o[i] = predict_at(1, t, scores[i])
        else:
            for i in range(n):
                o[i] = predict_at(2, t, scores[i])
        return out

    def _learn_many_validated(self, const double[:] scores, const double[:] labels,
                              const double[:] w):
        """The loop of ``learn_one`` on a validated batch, in one compiled pass; atomic:
        if a weight is refused, nothing is learnt."""
        cdef Py_ssize_t i, n = scores.shape[0]
        cdef double saved[9]
        cdef bint fitted = self._fitted
        if self._core is None:
            raise RuntimeError(f"{self._name} was not initialised (its __init__ did not run)")
        self._core.c_save(saved)
        for i in range(n):
            if self.c_learn_unchecked(scores[i], labels[i], w[i]):
                self._core.c_restore(saved)
                self._fitted = fitted
                self._refuse(w[i], "learn_many", i)

    def _predict_learn_many_validated(self, const double[:] scores,
                                      const double[:] labels, const double[:] w):
        """The prequential loop ``p[i] = predict_one(s[i]); learn_one(s[i], y[i],
        w[i])`` on a validated batch, in one compiled pass; atomic like
        :meth:`_learn_many_validated`."""
        cdef Py_ssize_t i, n = scores.shape[0]
        cdef double saved[9]
        cdef bint fitted = self._fitted
        out = np.empty(n, dtype=np.float64)
        cdef double[::1] o = out
        if self._core is None:
            raise RuntimeError(f"{self._name} was not initialised (its __init__ did not run)")
        self._core.c_save(saved)
        for i in range(n):
            o[i] = self.c_predict(scores[i])
            if self.c_learn_unchecked(scores[i], labels[i], w[i]):
                self._core.c_restore(saved)
                self._fitted = fitted
                self._refuse(w[i], "predict_learn_many", i)
        return out
