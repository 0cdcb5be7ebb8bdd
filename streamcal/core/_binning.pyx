"""Compiled histogram binner: the state machine of
:class:`streamcal.core.binning.HistogramBinner` with its per-bin sums in int64.

:class:`Int64Binner` follows the rules of ``binning.py`` to the letter (bin rule,
uniform or uniform-mass edges, epochs at 1, 2, 4, ... positive-weight events or the
window's schedule, exact sums in units of ``2**-E``, estimates rounded once) and writes
the same state (:meth:`Int64Binner.to_state` is :meth:`HistogramBinner.to_state`'s
format). What differs is the storage: the sums are C ``int64`` while every one of them,
and their grand total, stays below ``2**62``, which covers unit and integer weights, and
weights with few binary fraction digits (0.5, 0.125), for any realistic stream. An event that would take a sum past that
bound (a weight like ``1e-300`` or ``1e300``, or the hundredth weight of ``0.1``, whose
55 binary fraction digits make the unit ``2**-55``) is refused *before anything changes*: the
learning methods report it, and the caller carries on with the general binner,
:meth:`Int64Binner.to_general` (Python integers, no bound), from the same state.

The edges (:func:`~streamcal.core.binning.quantile_edges`), the epoch schedule
(:func:`~streamcal.core.binning.next_epoch_boundary`), the prior's integer terms
(:func:`~streamcal.core.binning.prior_terms`) and the aggregated stream
(:class:`~streamcal.core.binning.ScoreCells`) come from ``binning.py``: they run at epoch
boundaries and merges only, so the per-event path is C (a bin search, integer adds and
one division; with a prior, a double-double quotient, :func:`prior_ratio`, which leaves
the division of Python integers to the rare ratio it cannot round with certainty).
"""

from libc.math cimport INFINITY, NAN, fabs, fma, frexp, isnan, ldexp, nextafter
from libc.stdint cimport int64_t

import numpy as np

from streamcal._cvalidation cimport check_label, check_score, check_weight
from streamcal.core._bins cimport uniform_bin
from streamcal.core._search cimport bisect_right

from streamcal.core.binning import (
    BinView,
    HistogramBinner,
    ScoreCells,
    next_epoch_boundary,
    next_stop,
    prior_terms,
)
from streamcal.core.bins import quantile_edges, uniform_edges

__all__ = ["Int64Binner"]

cdef extern from *:
    int __builtin_ctzll(unsigned long long x) nogil

# every sum and the grand total of the units stay below this bound
cdef int64_t SAFE = (<int64_t>1) << 62
# below this, an int64 converts to a double exactly
cdef int64_t EXACT = (<int64_t>1) << 53
cdef str OWNER = "HistogramBinning"


cdef inline bint weight_bits(double w, int64_t* num, int* d) noexcept nogil:
    """``w > 0`` (finite) as ``num / 2**d`` with ``num`` odd or ``d == 0``; False when
    ``num`` would be ``>= 2**62`` (an integer weight that large)."""
    cdef int e, tz
    cdef double m = frexp(w, &e)  # w = m 2**e, 0.5 <= m < 1 (subnormals too)
    cdef int64_t mant = <int64_t>ldexp(m, 53)  # exact: w = mant 2**(e - 53)
    cdef int ex = e - 53
    tz = __builtin_ctzll(<unsigned long long>mant)
    mant >>= tz
    ex += tz
    if ex >= 0:
        if ex >= 62 or mant >= (SAFE >> ex):
            return False
        num[0] = mant << ex
        d[0] = 0
    else:
        num[0] = mant
        d[0] = -ex
    return True


cdef inline double prior_ratio(int64_t S, int64_t W, double a, double m, int E) noexcept nogil:
    """The prior's estimate ``(S + a m 2**E) / (W + a 2**E)`` (sums ``S <= W`` in units
    of ``2**-E``, prior strength ``a > 0``, bin midpoint ``m`` in [0, 1]) correctly
    rounded, as the quotient of Python integers over :func:`prior_terms` rounds it; NaN
    when this fast path cannot tell (then the caller divides the integers).

    The quotient is taken in double-double arithmetic: ``a m`` is split exactly by a
    fused multiply-add, the numerator is summed with error-free transformations (all
    terms >= 0, so no cancellation), the denominator exactly, and the quotient ``q1 +
    q2`` is within about ``2**-100`` (relative) of the exact ratio ``t``; ``B =
    q1 2**-95`` bounds that error with room to spare. The rounding of ``q1 + q2`` is the
    rounding of ``t`` unless ``t`` may lie near a midpoint between two doubles (within
    ``B``): only then, or out of the safe range (sums past ``2**53``, tiny or huge
    terms), NaN."""
    cdef double am, am_lo, sa, s1, bb, e1, xt, x_hi, x_lo, y_hi, y_lo
    cdef double q1, q2, p, p_lo, r, up, dn, bound
    if S >= EXACT or W >= EXACT or E > 900:
        return NAN
    am = a * m
    if am != 0.0 and not (ldexp(1.0, -800) < am < ldexp(1.0, 100)):
        return NAN
    am_lo = fma(a, m, -am)  # a m == am + am_lo exactly
    sa = ldexp(a, E)
    am = ldexp(am, E)
    am_lo = ldexp(am_lo, E)
    if not sa < ldexp(1.0, 1000):
        return NAN
    # numerator x_hi + x_lo = S + am + am_lo (TwoSum, then a fast two-sum)
    s1 = <double>S + am
    bb = s1 - <double>S
    e1 = (<double>S - (s1 - bb)) + (am - bb)
    xt = e1 + am_lo
    x_hi = s1 + xt
    x_lo = xt - (x_hi - s1)
    if x_hi == 0.0:
        return 0.0  # S == 0 and a m == 0: exactly zero
    # denominator y_hi + y_lo = W + sa exactly (TwoSum)
    y_hi = <double>W + sa
    bb = y_hi - <double>W
    y_lo = (<double>W - (y_hi - bb)) + (sa - bb)
    q1 = x_hi / y_hi
    if not q1 > ldexp(1.0, -900):
        return NAN
    p = q1 * y_hi
    p_lo = fma(q1, y_hi, -p)  # q1 y_hi == p + p_lo exactly
    r = ((x_hi - p) - p_lo) + x_lo - q1 * y_lo  # x - q1 y (x_hi - p exact: Sterbenz)
    q2 = r / y_hi
    up = nextafter(q1, INFINITY) - q1
    dn = q1 - nextafter(q1, 0.0)
    bound = ldexp(q1, -95)
    if q2 >= 0.0:
        if q2 > 0.75 * dn or fabs(q2 - 0.5 * up) <= bound:
            return NAN
    elif -q2 > 0.75 * dn or fabs(-q2 - 0.5 * dn) <= bound:
        return NAN
    return q1 + q2


def _prior_ratio(int64_t S, int64_t W, double a, double m, int E):
    """:func:`prior_ratio` from Python (for the tests): a float, or None for NaN."""
    cdef double v = prior_ratio(S, W, a, m, E)
    return None if isnan(v) else v


cdef class Int64Binner:
    """Histogram binning of weighted binary labels with int64 sums (see the module
    docstring): the compiled twin of :class:`~streamcal.core.binning.HistogramBinner`,
    same parameters, same results, same state.

    The learning methods return whether they learnt: an event that would take the
    integer sums past ``2**62`` is not learnt and leaves the state unchanged, and the
    caller goes on with :meth:`to_general`.

    Examples
    --------
    >>> b = Int64Binner(2, "uniform", None, 0.0)
    >>> for s, y in [(0.1, 0.0), (0.2, 1.0), (0.3, 1.0), (0.8, 1.0)]:
    ...     _ = b.learn(s, y, 1.0)
    >>> b.predict(0.25), b.predict(0.5), b.predict(0.9)
    (0.6666666666666666, 1.0, 1.0)
    >>> b.learn(0.5, 1.0, 1e-300)     # beyond int64: refused, nothing changes
    False
    >>> g = b.to_general()
    >>> g.learn(0.5, 1.0, 1e-300)
    >>> g.predict(0.9)
    1.0
    >>> b._check()

    """

    cdef readonly int n_bins
    cdef readonly str strategy
    cdef readonly object window_size
    cdef readonly double prior_strength
    cdef int N  # window size, 0 without a window
    cdef bint uniform
    cdef double[::1] e  # the B + 1 edges
    cdef int64_t[::1] W  # total weight per bin, units of 2**-E
    cdef int64_t[::1] S  # weighted label sum per bin, units of 2**-E
    cdef int64_t[::1] cnt  # positive-weight events per bin
    cdef double[::1] est  # derived: the estimate of each bin, NaN when empty
    cdef int E
    cdef int64_t one  # 2**E
    cdef int64_t total  # sum of W: every unit held
    cdef int64_t n_ev, n_pos, n_cal, next_boundary, next_stop
    cdef double[::1] rs, ry, rw  # the window, a ring: scores, labels, weights
    cdef Py_ssize_t head, size
    cdef public object _cells  # ScoreCells ("quantile" without a window) or None
    cdef object prior  # prior_terms(...) or None
    cdef bint lazy  # estimates not kept up to date (inside learn_many)
    # raw views of the arrays above (allocated once, changed in place only)
    cdef double* ep
    cdef int64_t* Wp
    cdef int64_t* Sp
    cdef int64_t* cp
    cdef double* estp

    def __init__(self, int n_bins, str strategy, window_size, double prior_strength):
        self.n_bins = n_bins
        self.strategy = strategy
        self.window_size = window_size
        self.prior_strength = prior_strength
        self.N = 0 if window_size is None else window_size
        self.uniform = strategy == "uniform"
        self.e = np.array(uniform_edges(n_bins), dtype=np.float64)
        self.W = np.zeros(n_bins, dtype=np.int64)
        self.S = np.zeros(n_bins, dtype=np.int64)
        self.cnt = np.zeros(n_bins, dtype=np.int64)
        self.est = np.full(n_bins, NAN, dtype=np.float64)
        self.E = 0
        self.one = 1
        self.total = 0
        self.n_ev = self.n_pos = self.n_cal = 0
        self.next_boundary = 0 if self.uniform else 1
        self.next_stop = self.next_boundary
        self.rs = np.empty(self.N, dtype=np.float64)
        self.ry = np.empty(self.N, dtype=np.float64)
        self.rw = np.empty(self.N, dtype=np.float64)
        self.head = self.size = 0
        self._cells = ScoreCells() if not self.uniform and self.N == 0 else None
        self.prior = prior_terms(self.edge_list(), prior_strength, 0)
        self.lazy = False
        self.ep = &self.e[0]
        self.Wp = &self.W[0]
        self.Sp = &self.S[0]
        self.cp = &self.cnt[0]
        self.estp = &self.est[0]

    # ------------------------------------------------------------------ bins

    cdef inline int bin_of(self, double s) noexcept nogil:
        """The number of inner edges ``<= s`` (``bisect_right``)."""
        cdef int B = self.n_bins
        cdef double* e = self.ep
        if self.uniform:
            return <int>uniform_bin(s, B, e)
        return bisect_right(e + 1, B - 1, s)  # among edges[1 : B]

    cdef int refresh(self, int k) except -1:
        """Recompute the cached estimate of bin ``k``, correctly rounded."""
        cdef object sh, num, den
        cdef double v
        if self.cnt[k] == 0:
            self.est[k] = NAN
        elif self.prior is None:
            if self.W[k] < EXACT:  # both exact doubles: IEEE division rounds once
                self.est[k] = <double>self.S[k] / <double>self.W[k]
            else:
                self.est[k] = int(self.S[k]) / int(self.W[k])
        else:
            # in C when it can tell the rounding (nearly always): the Python integers
            # below cost most of a learn_one with the default prior
            v = prior_ratio(self.S[k], self.W[k], self.prior_strength,
                            (self.ep[k] + self.ep[k + 1]) / 2, self.E)
            if not isnan(v):
                self.est[k] = v
                return 0
            sh, num, den = self.prior[k]
            self.est[k] = ((int(self.S[k]) << sh) + num) / ((int(self.W[k]) << sh) + den)
        return 0

    cdef int refresh_all(self) except -1:
        cdef int k
        for k in range(self.n_bins):
            self.refresh(k)
        return 0

    cdef inline int64_t units(self, double w) noexcept nogil:
        """A held weight ``w > 0`` in units of ``2**-E`` (it fitted when learnt)."""
        cdef int64_t num = 0
        cdef int d = 0
        if w == 1.0:
            return self.one
        weight_bits(w, &num, &d)
        return num << (self.E - d)

    cdef list edge_list(self):
        return [self.e[j] for j in range(self.n_bins + 1)]

    cdef int set_edges(self, list edges) except -1:
        cdef int j
        for j in range(self.n_bins + 1):
            self.e[j] = edges[j]
        self.prior = prior_terms(edges, self.prior_strength, self.E)
        return 0

    # ------------------------------------------------------------------ learning

    cdef int _learn(self, double s, double y, double w) except -1:
        """Learn one valid event: 0, or 1 (nothing done) when it does not fit int64."""
        cdef int64_t num = 0, wi = 0
        cdef int d = 0, sh = 0, k
        cdef Py_ssize_t at
        cdef double os, oy, ow
        if w > 0.0:  # does it fit? decide before changing anything
            if w == 1.0:
                wi = self.one
            else:
                if not weight_bits(w, &num, &d):
                    return 1
                if d > self.E:
                    sh = d - self.E
                    if d > 61 or self.total >= (SAFE >> sh):
                        return 1
                d = self.E + sh - d  # now the shift from the weight's unit to ours
                if d >= 62 or num >= (SAFE >> d):
                    return 1
                wi = num << d
            if wi >= SAFE - (self.total << sh):
                return 1
        self.n_ev += 1
        if self.N:
            if self.size < self.N:
                at = self.head + self.size
                if at >= self.N:
                    at -= self.N
                self.size += 1
            else:  # the oldest event leaves the window
                at = self.head
                self.head += 1
                if self.head == self.N:
                    self.head = 0
                ow = self.rw[at]
                if ow > 0.0:
                    self.remove(self.rs[at], self.ry[at], ow)
            self.rs[at] = s
            self.ry[at] = y
            self.rw[at] = w
        if not w > 0.0:
            return 0
        if sh:
            self.rescale(sh)
        cells = self._cells
        if cells is not None:
            cells.pending_scores.append(s)
            cells.pending_weights.append(wi if y != 0.0 else -wi)
        self.total += wi
        self.n_pos += 1
        if self.n_pos == self.next_stop and self.stop(self.n_pos):
            return 0
        k = self.bin_of(s)
        self.W[k] += wi
        if y != 0.0:
            self.S[k] += wi
        self.cnt[k] += 1
        if not self.lazy:
            self.refresh(k)
        return 0

    cdef int remove(self, double s, double y, double w) except -1:
        """Take a positive-weight event that left the window out of its bin."""
        cdef int64_t wi = self.units(w)
        cdef int k = self.bin_of(s)
        self.W[k] -= wi
        if y != 0.0:
            self.S[k] -= wi
        self.cnt[k] -= 1
        self.total -= wi
        if not self.lazy:
            self.refresh(k)
        return 0

    cdef int rescale(self, int sh) except -1:
        """Change the unit to ``2**-(E + sh)``: shift every integer sum left (the caller
        checked that the total stays below ``2**62``)."""
        cdef int k
        for k in range(self.n_bins):
            self.W[k] <<= sh
            self.S[k] <<= sh
        self.total <<= sh
        if self._cells is not None:
            self._cells.shift(sh)
        self.E += sh
        self.one = (<int64_t>1) << self.E
        if self.prior is not None:
            self.prior = prior_terms(self.edge_list(), self.prior_strength, self.E)
        return 0

    cdef bint stop(self, int64_t c) except -1:
        """:meth:`HistogramBinner._stop`: merge pending cells, a new epoch at a boundary
        (True: the event just learnt is already binned)."""
        cdef bint boundary = c == self.next_boundary
        if self._cells is not None:
            self._cells.flush()
        if boundary:
            self.new_epoch(c)
        self.next_stop = next_stop(c, self.next_boundary, self._cells)
        return boundary

    cdef int new_epoch(self, int64_t c) except -1:
        """Recompute the edges from the held events and re-bin them all."""
        cdef int B = self.n_bins
        cdef int k
        cdef Py_ssize_t i, j, m, at
        cdef int64_t wi
        cdef double[::1] hs, hy, hw
        if self.N == 0:
            cells = self._cells  # flushed by the caller
            self.next_boundary = next_epoch_boundary(c, None)
            self.set_edges(quantile_edges(cells.xs, cells.ns, B))
            self.n_cal = c
            Wl, Sl, nl = cells.bin_sums(self.edge_list()[1:B], B)
            for k in range(B):
                self.W[k] = Wl[k]
                self.S[k] = Sl[k]
                self.cnt[k] = nl[k]
        else:
            self.next_boundary = next_epoch_boundary(c, self.N)
            hs = np.empty(self.size, dtype=np.float64)
            hy = np.empty(self.size, dtype=np.float64)
            hw = np.empty(self.size, dtype=np.float64)
            m = 0
            for i in range(self.size):
                at = self.head + i
                if at >= self.N:
                    at -= self.N
                if self.rw[at] > 0.0:
                    hs[m] = self.rs[at]
                    hy[m] = self.ry[at]
                    hw[m] = self.rw[at]
                    m += 1
            scores = np.sort(np.asarray(hs[:m]))
            self.set_edges(quantile_edges(scores, np.ones(m, dtype=np.int64), B))
            self.n_cal = m
            for k in range(B):
                self.W[k] = self.S[k] = self.cnt[k] = 0
            for j in range(m):
                wi = self.units(hw[j])
                k = self.bin_of(hs[j])
                self.W[k] += wi
                if hy[j] != 0.0:
                    self.S[k] += wi
                self.cnt[k] += 1
        self.refresh_all()
        return 0

    cpdef bint learn(self, double s, double y, double w) except -1:
        """Learn one valid event (``s`` in [0, 1], ``y`` 0.0 or 1.0, ``w >= 0``
        finite); False, with nothing changed, when it does not fit int64. O(log B),
        plus the amortised merges and re-binning of ``"quantile"``."""
        return self._learn(s, y, w) == 0

    cpdef bint learn_one(self, score, label, w) except -1:
        """:meth:`learn` after validating the event, with ``HistogramBinning``'s error
        messages (nothing changes on a bad event)."""
        cdef double s = check_score(score, OWNER, "learn_one")
        cdef double y = check_label(label, OWNER, "learn_one")
        cdef double ww = check_weight(w, OWNER, "learn_one")
        return self._learn(s, y, ww) == 0

    cdef Py_ssize_t unit_run(
        self,
        const double[::1] s,
        const double[::1] y,
        const double[::1] w,
        double* out,
        Py_ssize_t i,
        int64_t* tc,
        int64_t* ty,
        bint unit=False,
    ) noexcept nogil:
        """The fast lane of ``"uniform"`` without a window (no epochs, no window, no
        cells): learn events ``i, i+1, ...`` of unit or zero weight, in order, while
        their sums fit (and, with ``out``, while the estimates are plain divisions),
        predicting each first into ``out`` unless it is NULL (then ``tc`` and ``ty``,
        ``4 B`` zeros each, are scratch space for the counts of events and labels). Exactly
        what :meth:`_learn` does with them; returns the index of the first event not
        taken. ``unit``: every weight is 1 (``w`` is not read)."""
        cdef Py_ssize_t n = s.shape[0], i0 = i
        cdef int B = self.n_bins
        cdef const double* e = self.ep
        cdef int64_t one = self.one
        cdef int64_t room = (SAFE - 1 - self.total) // one  # unit events that fit
        cdef int64_t taken = 0, Wk, c
        cdef int64_t* W = self.Wp
        cdef int64_t* S = self.Sp
        cdef int64_t* cnt = self.cp
        cdef double* est = self.estp
        cdef const double* sp = &s[0]
        cdef const double* yp = &y[0]
        cdef const double* wp = NULL
        cdef double x, wi, v
        cdef int k
        cdef Py_ssize_t stop
        if not unit:
            wp = &w[0]
        if out == NULL and unit:
            # learning unit weights: no weight to read, a run as long as the room
            stop = n if n - i <= room else i + room
            while i < stop:
                k = <int>uniform_bin(sp[i], B, e) + (i & 3) * B
                tc[k] += 1
                ty[k] += <int64_t>yp[i]
                i += 1
            taken = i - i0
        elif out != NULL:
            while i < n:
                wi = wp[i]
                x = sp[i]
                k = <int>uniform_bin(x, B, e)
                if wi == 1.0:
                    Wk = W[k] + one
                    if taken == room or Wk >= EXACT:
                        break
                    v = est[k]
                    out[i] = x if isnan(v) else v
                    W[k] = Wk
                    S[k] += <int64_t>yp[i] * one
                    cnt[k] += 1
                    est[k] = <double>S[k] / <double>Wk
                    taken += 1
                elif wi == 0.0:
                    v = est[k]
                    out[i] = x if isnan(v) else v
                else:
                    break
                i += 1
        else:  # learning only: count events and labels per bin, add `one` each after;
            # four copies of the counts, taken in turn, so that consecutive events in
            # the same bin do not wait for each other's stores
            while i < n:
                wi = wp[i]
                if wi == 1.0:
                    if taken == room:
                        break
                    k = <int>uniform_bin(sp[i], B, e) + (i & 3) * B
                    tc[k] += 1
                    ty[k] += <int64_t>yp[i]
                    taken += 1
                elif wi != 0.0:
                    break
                i += 1
        if out == NULL:
            for k in range(B):
                c = tc[k] + tc[k + B] + tc[k + 2 * B] + tc[k + 3 * B]
                W[k] += c * one
                S[k] += (ty[k] + ty[k + B] + ty[k + 2 * B] + ty[k + 3 * B]) * one
                cnt[k] += c
            for k in range(4 * B):
                tc[k] = ty[k] = 0
        self.total += taken * one
        self.n_pos += taken
        self.n_ev += i - i0
        return i

    def learn_many(self, const double[::1] s, const double[::1] y, const double[::1] w):
        """Learn valid events in order; return how many were learnt (all of them, or
        up to the first that does not fit int64, which is not learnt). ``w`` None: unit
        weights. Estimates are computed once, at the end. O(n log B) plus the epochs."""
        cdef Py_ssize_t i = 0, n = s.shape[0]
        cdef bint unit = w is None
        cdef bint lane = self.uniform and self.N == 0 and n > 0
        cdef int64_t[::1] scratch = np.zeros(8 * self.n_bins, dtype=np.int64)
        self.lazy = True
        try:
            while i < n:
                if lane:
                    i = self.unit_run(s, y, w, NULL, i, &scratch[0], &scratch[4 * self.n_bins], unit)
                    if i == n:
                        break
                if self._learn(s[i], y[i], 1.0 if unit else w[i]):
                    return i
                i += 1
            return n
        finally:
            self.lazy = False
            self.refresh_all()

    def predict_learn_many(
        self,
        const double[::1] s,
        const double[::1] y,
        const double[::1] w,
        double[::1] out,
    ):
        """For each valid event in turn, write :meth:`predict` to ``out`` then learn
        it; return how many were learnt (as :meth:`learn_many`). O(n log B) plus the
        epochs."""
        cdef Py_ssize_t i = 0, n = s.shape[0]
        cdef double v, x
        cdef bint lane = self.uniform and self.N == 0 and self.prior is None
        if n == 0:
            return 0
        while i < n:
            if lane:
                i = self.unit_run(s, y, w, &out[0], i, NULL, NULL)
                if i == n:
                    break
            x = s[i]
            v = self.est[self.bin_of(x)]
            out[i] = x if isnan(v) else v
            if self._learn(x, y[i], w[i]):
                return i
            i += 1
        return n

    # ------------------------------------------------------------------ prediction

    cpdef double predict(self, double s):
        """The estimate of the bin of ``s``, or ``s`` if that bin is empty. O(log B)."""
        cdef double v = self.est[self.bin_of(s)]
        return s if isnan(v) else v

    cpdef double predict_one(self, score) except? -1.0:
        """:meth:`predict` after validating the score (``HistogramBinning``'s messages)."""
        cdef double s = check_score(score, OWNER, "predict_one")
        cdef double v = self.est[self.bin_of(s)]
        return s if isnan(v) else v

    def predict_many(self, const double[::1] scores):
        """:meth:`predict` on each score of a float64 array. O(n log B)."""
        cdef Py_ssize_t i, n = scores.shape[0]
        out = np.empty(n, dtype=np.float64)
        cdef double[::1] o = out
        cdef double v, x
        for i in range(n):
            x = scores[i]
            v = self.est[self.bin_of(x)]
            o[i] = x if isnan(v) else v
        return out

    # ------------------------------------------------------------------ views

    @property
    def edges(self):
        """The ``B + 1`` current edges. O(B)."""
        return tuple(self.edge_list())

    @property
    def bins(self):
        """The bins with their values, weights and counts. O(B)."""
        e = self.edge_list()
        one = int(self.one)
        return tuple(
            BinView(
                e[k],
                e[k + 1],
                None if self.cnt[k] == 0 else self.est[k],
                int(self.W[k]) / one,
                int(self.cnt[k]),
            )
            for k in range(self.n_bins)
        )

    @property
    def n_events(self):
        """Number of :meth:`learn` calls, zero weights included. O(1)."""
        return int(self.n_ev)

    @property
    def n_calibration(self):
        """Size of the calibration set of the current edges (0 with ``"uniform"``)."""
        return int(self.n_cal)

    # ------------------------------------------------------------------ state

    def window_events(self):
        """The events in the window, oldest first, as ``[s, y, w]`` lists. O(N)."""
        cdef Py_ssize_t i, at
        out = []
        for i in range(self.size):
            at = self.head + i
            if at >= self.N:
                at -= self.N
            out.append([self.rs[at], self.ry[at], self.rw[at]])
        return out

    def to_state(self):
        """The whole state, in :meth:`HistogramBinner.to_state`'s format. O(size)."""
        B = self.n_bins
        return {
            "edges": self.edge_list(),
            "W": [int(self.W[k]) for k in range(B)],
            "S": [int(self.S[k]) for k in range(B)],
            "counts": [int(self.cnt[k]) for k in range(B)],
            "E": self.E,
            "n_events": int(self.n_ev),
            "n_pos": int(self.n_pos),
            "n_cal": int(self.n_cal),
            "next_boundary": int(self.next_boundary),
            "next_stop": int(self.next_stop),
            "window": None if self.N == 0 else self.window_events(),
            "cells": None if self._cells is None else self._cells.to_state(),
        }

    @staticmethod
    def fits(state):
        """Can a state written by ``to_state`` be held in int64 sums? O(B)."""
        E = int(state["E"])
        W = [int(x) for x in state["W"]]
        cells = state["cells"]
        return (
            0 <= E <= 61
            and all(x >= 0 for x in W)
            and sum(W) < SAFE
            and (cells is None or not cells["big"])
        )

    @classmethod
    def from_state(cls, n_bins, strategy, window_size, prior_strength, state):
        """Rebuild a binner from a state written by :meth:`to_state` (or by
        :meth:`HistogramBinner.to_state`) that :meth:`fits`. O(size)."""
        cdef Int64Binner b = cls(n_bins, strategy, window_size, prior_strength)
        cdef int k
        cdef Py_ssize_t i
        if not cls.fits(state):
            raise ValueError("this state does not fit int64 sums: use HistogramBinner")
        B = n_bins
        b.E = int(state["E"])
        b.one = (<int64_t>1) << b.E
        b.set_edges([float(x) for x in state["edges"]])
        for k in range(B):
            b.W[k] = int(state["W"][k])
            b.S[k] = int(state["S"][k])
            b.cnt[k] = int(state["counts"][k])
            b.total += b.W[k]
        b.n_ev = int(state["n_events"])
        b.n_pos = int(state["n_pos"])
        b.n_cal = int(state["n_cal"])
        b.next_boundary = int(state["next_boundary"])
        b.next_stop = int(state["next_stop"])
        if state["window"] is not None:
            window = list(state["window"])
            window = window[max(0, len(window) - b.N) :]
            for i, (s, y, w) in enumerate(window):
                b.rs[i] = float(s)
                b.ry[i] = float(y)
                b.rw[i] = float(w)
            b.size = len(window)
        if state["cells"] is not None:
            b._cells = ScoreCells.from_state(state["cells"])
        b.refresh_all()
        return b

    def to_general(self):
        """The same binner as a :class:`HistogramBinner` (Python integer sums, no
        bound), to carry on with events that do not fit int64. O(size)."""
        return HistogramBinner.from_state(
            self.n_bins, self.strategy, self.window_size, self.prior_strength,
            self.to_state(),
        )

    def __reduce__(self):
        return (
            _restore,
            ((self.n_bins, self.strategy, self.window_size, self.prior_strength),
             self.to_state()),
        )

    def _check(self):
        """Assert every invariant: those of the general binner on the same state (bins
        recounted from the held events), plus the int64 bounds and cached estimates."""
        general = self.to_general()
        general._check()
        cdef int k
        for k in range(self.n_bins):
            v = general._est[k]
            if v is None:
                assert isnan(self.est[k]), f"empty bin {k} has value {self.est[k]}"
            else:
                assert self.est[k] == v, f"bin {k}: value {self.est[k]} != {v}"
            assert 0 <= self.S[k] <= self.W[k] < SAFE
        assert 0 <= self.E <= 61 and self.one == (<int64_t>1) << self.E
        assert self.total == sum(int(self.W[k]) for k in range(self.n_bins)) < SAFE
        assert not self.lazy
        if self.N:
            assert 0 <= self.head < self.N and 0 <= self.size <= self.N
            assert self.size == self.N or self.head == 0, "window ring out of shape"
        if self._cells is not None:
            assert self._cells.ws.dtype == np.int64


def _restore(params, state):
    return Int64Binner.from_state(*params, state)
