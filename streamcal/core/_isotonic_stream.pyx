"""The per-event state machine of online isotonic calibration, compiled.

:class:`IsotonicStream` owns what happens to one event before the PAV block store sees
it: the score's grid key (``resolution``), the sliding window (a ring buffer of the
events it holds), the forgetting clock (``half_life``: stored weights relative to a
moving reference, renormalised by exact powers of two) and the weight checks that keep
every stored sum finite. The store (:class:`streamcal.core.pav.IsotonicBlockStore`) keeps
the exact isotonic regression of what it is given. With ``resolution`` alone (no window,
forgetting, prior or Venn-ABERS) the events go to the grid store of
:mod:`streamcal.core._grid_pav` instead (the same fit, bit for bit), while its sums stay
exact; ``store`` is then rebuilt from it when read.

The Python shells :class:`streamcal.OnlineIsotonic` and :class:`streamcal.VennAbers`
validate parameters, own snapshots and documentation; their compiled base class
(``_isotonic_kernel.pyx``) checks each event and hands it here. They
differ only in what a prediction reads from the store (``mode``): the fitted value at the
score, or the Venn-ABERS merge of the two fits with a hypothetical event at the score
labelled 0 and 1 (:meth:`IsotonicBlockStore.hypothetical_value`, which leaves the store
as it was: a read-only query with exact coordinates, ``_pav_query.pxd``, else an
insertion and its removal). Every check a bad event can fail is made
before any state changes, so an error leaves the stream exactly as it was.
:meth:`IsotonicStream.predict_learn_many` in Venn-ABERS mode without a window learns an
event of unit weight with one hypothetical event instead of two (the fit after the real
learn is the hypothetical fit of the event's own label): the same floats as the loop.

Forgetting (``half_life = h``). A new event at index ``t`` is stored with weight
``w * 2 ** e``, ``e = (t - t_ref) / h + phase``; the weights already stored never change
between renormalisations, so the ratio of any two stored weights is exactly the ratio of
their decayed weights. When a new stored weight would reach ``2 ** 512``, everything is
rescaled by ``2 ** -k`` (exact: a power of two), ``k`` the binary exponent of that new
weight, so it lands in [1, 2); a new stored weight below ``2 ** -969`` (a light event
after a heavy one) renormalises the other way. The scale follows the data, not only the
clock, so user weights anywhere in the double range (1e-300 as well as 1e300) neither
overflow nor underflow. What weighs less than ``2 ** -1000`` of a new unit-weight event
may be forgotten at a renormalisation (without a window: whole scores; with a window:
events whose rescaled weight would not be a normal double; window events older than
1000 half-lives leave it in any case). Every other stored weight stays a normal double
below ``2 ** 512`` times the events held: the shift puts the new event in [1, 2) when it
can, else as near as the weights held allow; an event whose weight cannot be stored
beside them (its ratio to one of them beyond about ``2 ** 1480``) is refused with a
ValueError naming ``w``, the state unchanged.
"""

cimport cython
from libc.math cimport floor, ldexp, frexp, isfinite, INFINITY, NAN

from streamcal._cvalidation cimport check_score, check_label, check_weight
from streamcal.core._pav cimport IsotonicBlockStore
from streamcal.core._pav_residue cimport SC_READD_RESIDUE, k_compensated_add
from streamcal.core._pav_tree cimport _dd_add, _weight_fits
from streamcal.core._grid_pav cimport GridIsotonicStore
from streamcal._validation import argument_error, WEIGHT_DOMAIN
from streamcal.core.prior import ISOTONIC_PRIOR_MEAN
from streamcal.core.pav import WEIGHT_LIMIT
from streamcal.core.decay import (
    ISOTONIC_FORGET_EXPONENT, ISOTONIC_RENORM_EXPONENT, renormalised_clock, weight_scale)

import numpy as np
from math import fsum

# the forgetting clock's constants: their home is streamcal.core.decay
cdef double _RENORM_LIMIT = ldexp(1.0, ISOTONIC_RENORM_EXPONENT)  # a new stored weight at or above this renormalises
cdef double _FORGET = ldexp(1.0, -ISOTONIC_FORGET_EXPONENT)   # forgotten below this fraction of a new event
cdef double _FORGET_HALF_LIVES = ISOTONIC_FORGET_EXPONENT     # window events older than this leave it
cdef double _FORGET_EXP = ISOTONIC_FORGET_EXPONENT            # log2 of 1 / _FORGET
cdef double _DBL_MIN = 2.2250738585072014e-308
cdef double _LIMIT = WEIGHT_LIMIT  # the stored weights' sum stays at or below this
cdef int _TOP_EXP = ISOTONIC_RENORM_EXPONENT - 1  # a stored weight's binary exponent stays <= this after a shift
cdef int _MIN_EXP = -969       # ... and >= this: a normal double whose label sum, if it
                               # rounds to a subnormal, moves its mean by < 2**-52
cdef double _SAFE_W = ldexp(1.0, 400)  # batch weights in [1 / _SAFE_W, _SAFE_W] cannot be refused
cdef double _PRIOR_MEAN = ISOTONIC_PRIOR_MEAN
cdef double _GRID_MAX = 65536.0  # grids up to this many keys get the grid store
# prediction modes
cdef enum:
    MODE_STEP = 0
    MODE_LINEAR = 1
    MODE_VENN_ABERS = 2


cdef inline double _clip01(double v) noexcept nogil:
    return 1.0 if v > 1.0 else (0.0 if v < 0.0 else v)


cdef inline double _venn_abers_merge(double p0, double p1) noexcept nogil:
    # the merged probability of a Venn-ABERS pair p0 <= p1 in [0, 1]: the denominator
    # is >= 1 - p0 + p0 > 0 unless p0 = 1 = p1, where it is 1
    return p1 / (1.0 - p0 + p1)


cdef inline int _va_pair(IsotonicBlockStore st, double x, double w, double* p0,
                         double* p1) except -1 nogil:
    # the Venn-ABERS pair at key x from the exact store: the step fits with a
    # hypothetical event (x, w) of label 0, resp. 1 (read-only, or one insertion)
    cdef double b
    cdef double a = st.hypothetical_pair_c(x, w, &b)
    p0[0] = _clip01(a)
    p1[0] = _clip01(b)
    return 0


cdef inline double _va_after_learn(IsotonicBlockStore st, double x, double a,
                                   double y) noexcept nogil:
    # the shortcut's merge (IsotonicStream._va_predict_learn_c): ``a`` the fit at x
    # with label 1 - y, read before the event (x, 1, y) was learnt; now the fit with y
    cdef double b = st.predict_step_c(x)
    if y == 0.0:
        a, b = b, a
    return _venn_abers_merge(_clip01(a), _clip01(b))


cdef inline double _key(double s, double resolution) noexcept nogil:
    # the key a score is stored under: the score, or its grid cell with ``resolution``
    return s if resolution == 0.0 else floor(s / resolution + 0.5)


cdef inline double _grid_predict(GridIsotonicStore g, double s, double x, bint linear) noexcept nogil:
    # the prediction at score s (key x) from the grid store: the score itself while empty
    if g.empty_c():
        return s
    return _clip01(g.predict_linear_c(x) if linear else g.predict_step_c(x))


cdef class IsotonicStream:
    """Window, forgetting clock and grid of :class:`streamcal.OnlineIsotonic` and
    :class:`streamcal.VennAbers`.

    ``resolution``, ``half_life`` and ``window_size`` are 0 when not set. ``store`` is
    the block store the events go to. ``linear`` selects linear interpolation, and
    ``venn_abers`` the Venn-ABERS merged probability, for :meth:`predict_one`; error
    messages name ``owner``, the class of that mode (``OnlineIsotonic`` or
    ``VennAbers``; derived from the mode, so that a pickle holds no string of its own).

    Examples
    --------
    >>> from streamcal.core.pav import IsotonicBlockStore
    >>> from streamcal.core._isotonic_stream import IsotonicStream
    >>> stream = IsotonicStream(IsotonicBlockStore(), window_size=2)
    >>> for s, y in [(0.2, 1), (0.8, 0), (0.5, 1)]:
    ...     stream.learn_one(s, y)
    >>> stream.predict_one(0.5), stream.n_events
    (0.5, 3)

    """

    def __init__(self, IsotonicBlockStore store, double resolution=0.0, double half_life=0.0,
                 Py_ssize_t window_size=0, bint linear=False, bint venn_abers=False,
                 double prior_strength=0.0):
        if linear and venn_abers:
            raise ValueError("IsotonicStream: 'linear' and 'venn_abers' exclude each other.")
        if prior_strength != 0.0 and venn_abers:
            raise ValueError("IsotonicStream: 'prior_strength' and 'venn_abers' exclude each other.")
        self.prior_strength = prior_strength
        self._st = store
        store.track_residues = window_size > 0  # only a window removes events
        self._grid, self._st_stale = None, False
        if (0.0 < resolution and half_life == 0.0 and window_size == 0 and not venn_abers
                and prior_strength == 0.0 and floor(1.0 / resolution + 0.5) < _GRID_MAX):
            self._grid = GridIsotonicStore(<int> floor(1.0 / resolution + 0.5) + 1)
            if not self._grid.load(*store.cells()):
                self._grid = None
        self.resolution = resolution
        self.half_life = half_life
        self.window_size = window_size
        self.linear = linear
        self.venn_abers = venn_abers
        self.mode = MODE_VENN_ABERS if venn_abers else (MODE_LINEAR if linear else MODE_STEP)
        self.owner = "VennAbers" if venn_abers else "OnlineIsotonic"
        self.n_events = 0
        self.t_ref = 0
        self.phase = 0.0
        self._total = self._total_lo = 0.0
        self._head = 0
        self._count = 0
        cdef Py_ssize_t cap = min(window_size, 1024) if window_size > 0 else 0
        self._alloc(cap)

    cdef _alloc(self, Py_ssize_t cap):
        self._wx = np.empty(cap, dtype=np.float64)
        self._wy = np.empty(cap, dtype=np.float64)
        self._ww = np.empty(cap, dtype=np.float64)
        self._wt = np.empty(cap, dtype=np.int64)

    # ------------------------------------------------------------------ window buffer

    cdef inline Py_ssize_t _slot(self, Py_ssize_t i) noexcept nogil:
        """Index in the ring buffer of the i-th oldest event of the window."""
        cdef Py_ssize_t j = self._head + i
        cdef Py_ssize_t cap = self._wx.shape[0]
        return j - cap if j >= cap else j

    cdef _grow(self):
        cdef Py_ssize_t i, k
        cdef double[::1] ox = self._wx, oy = self._wy, ow = self._ww
        cdef long long[::1] ot = self._wt
        slots = [self._slot(i) for i in range(self._count)]  # oldest first, in the old buffer
        self._alloc(min(self.window_size, max(2 * ox.shape[0], 16)))
        for i in range(self._count):
            k = slots[i]
            self._wx[i] = ox[k]
            self._wy[i] = oy[k]
            self._ww[i] = ow[k]
            self._wt[i] = ot[k]
        self._head = 0

    cdef int _push(self, double x, double y, double w, long long t) except -1 nogil:
        if self._count == self._wx.shape[0]:
            with gil:
                self._grow()
        cdef Py_ssize_t k = self._slot(self._count)
        self._wx[k] = x
        self._wy[k] = y
        self._ww[k] = w
        self._wt[k] = t
        self._count += 1
        return 0

    cdef int _pop_oldest(self) except -1 nogil:
        """Remove the oldest window event from the window and from the store."""
        cdef Py_ssize_t k = self._head
        cdef double x = self._wx[k], y = self._wy[k], w = self._ww[k]
        self._head = k + 1 if k + 1 < self._wx.shape[0] else 0
        self._count -= 1
        if w > 0.0:
            _dd_add(&self._total, &self._total_lo, -w, 0.0)
            self._readd(x, self._st.remove_c(x, w, y))
        return 0

    cdef int _readd(self, double x, long others) except -1 nogil:
        """The store deleted the cell of key ``x`` and ``others`` events with it
        (``_pav_residue.pxd``): put back their compensated sums (oldest first, found)."""
        cdef Py_ssize_t i, k, n = 0
        cdef double W = 0.0, Wc = 0.0, S = 0.0, Sc = 0.0
        for i in range(self._count if others > 0 else 0):
            k = self._slot(i)
            if self._wx[k] == x and self._ww[k] > 0.0:
                k_compensated_add(&W, &Wc, self._ww[k])
                k_compensated_add(&S, &Sc, self._ww[k] * self._wy[k])
                n += 1
                if n == others:
                    break
        if n:  # each sum within SC_READD_RESIDUE of it; clipping S: 4x bounds both
            self._st.add_cell_c(x, W + Wc, min(max(S + Sc, 0.0), W + Wc), n,
                                4.0 * SC_READD_RESIDUE)
        return 0

    # ------------------------------------------------------------------ per event

    cdef inline double key(self, double s):
        return _key(s, self.resolution)

    cdef double predict_c(self, double s) except? -1.0:
        if self._grid is not None:
            return _grid_predict(self._grid, s, self.key(s), self.mode == MODE_LINEAR)
        if self.prior_strength > 0.0 and self._st.n_blocks_c() != 0:
            return self.prior_c(self.key(s))
        return self._exact_predict(s, self.key(s), self.next_weight_c())

    cdef double _exact_predict(self, double s, double x, double wh) except? -1.0 nogil:
        """:meth:`predict_c` from the exact store, without a prior: ``s`` while nothing
        is stored, else the fit at key ``x`` (Venn-ABERS: the merged pair, with a
        hypothetical event of weight ``wh``), clipped to [0, 1]."""
        cdef double p0, p1
        if self._st.n_blocks_c() == 0:
            return s
        if self.mode == MODE_VENN_ABERS:
            _va_pair(self._st, x, wh, &p0, &p1)  # p0 <= p1: the fit at x rises with the label added
            return _venn_abers_merge(p0, p1)
        if self.mode == MODE_LINEAR:
            return _clip01(self._st.predict_linear_c(x))
        return _clip01(self._st.predict_step_c(x))

    cdef double prior_c(self, double x) except? -1.0:
        """The read-out at key ``x`` with the prior's pseudo-event (weight ``prior_strength``
        times a new unit-weight event's, label ISOTONIC_PRIOR_MEAN) pooled into the fit
        (:mod:`streamcal.core.prior`); the store unchanged. A pseudo-event too heavy to
        add to the sums (a strength near the double range) outweighs every event."""
        cdef double w = self.prior_strength * self.next_weight_c()
        cdef double v
        if not _weight_fits(self._total, w, 0.0, _LIMIT):
            return _PRIOR_MEAN
        if self.mode == MODE_LINEAR:
            v = self._st.prior_linear_c(x, w, _PRIOR_MEAN)
        else:
            v = self._st.prior_step_c(x, w, _PRIOR_MEAN)
        return _clip01(v)

    cdef int interval_c(self, double x, double* p0, double* p1) except -1:
        """The Venn-ABERS pair at key ``x``: the step fit at ``x`` with the events held
        plus ``(x, label 0)``, resp. ``(x, label 1)``, of a new unit-weight event's weight
        (the window not shifted), clipped to [0, 1]; the store unchanged. Empty: (0, 1)."""
        return _va_pair(self.store, x, self.next_weight_c(), p0, p1)  # .store: from a grid

    cdef double next_weight_c(self) noexcept:
        if self.half_life == 0.0:
            return 1.0
        # streamcal.core.decay.clock_exponent, inlined (also in learn_c)
        cdef double e = (self.n_events - self.t_ref) / self.half_life + self.phase
        return 2.0 ** min(e, 1000.0)

    cdef double _split(self, double w, double e, double* E) noexcept:
        """``w * 2 ** e`` as ``m * 2 ** E`` with ``m`` in [1, 2), returning ``m``: no
        intermediate overflow or underflow (``w`` near the top of the double range, or
        subnormal). ``w * 2 ** e`` rounds as the product ``w * 2 ** frac(e)`` does when
        that is a normal double: the same stored weights as before this split."""
        cdef int kw, k
        cdef double whole = floor(e)
        cdef double mw = frexp(w, &kw)                 # w = mw * 2 ** kw, mw in [0.5, 1)
        cdef double m = frexp(mw * (2.0 ** (e - whole)), &k)
        E[0] = kw + k + whole - 1.0
        return 2.0 * m

    cdef double _plan(self, double w, double e, long long t, long long* shift) except? -1.0:
        """The stored weight of a new event of weight ``w > 0`` at clock exponent ``e``,
        and the renormalisation it needs (``shift``, 0 for none): the new event lands in
        [1, 2) when the weights kept can follow it, else as near as they allow, every
        stored weight a normal double of exponent <= 511. Without a window, ``_keep`` is
        set to the cells and the mask of those kept (see :meth:`_rescale_cells`). Raises the
        ValueError of :func:`_span_error` when no shift fits, before any state changes."""
        cdef double E, m, lo, hi, sigma, emin = INFINITY, emax = -INFINITY, kept_total = 0.0
        cdef double forget = e - _FORGET_EXP  # log2 of 2**-1000 of a new unit-weight event
        cdef Py_ssize_t i, k
        cdef int ke
        cdef double ww
        m = self._split(w, e, &E)
        if _MIN_EXP <= E and E <= _TOP_EXP:
            shift[0] = 0
            return ldexp(m, <int> E)
        if E > _TOP_EXP and w <= 4194304.0:
            # a weight <= 2**22 at [1, 2) leaves everything not forgettable (>= 2**-1000
            # of a unit-weight event) normal, and what was stored (< 2**512) below it
            shift[0] = <long long> E
            self._keep = None
            return m
        lo = E - _TOP_EXP
        hi = E - _MIN_EXP
        if self.window_size > 0:
            for i in range(self._count):
                k = self._slot(i)
                ww = self._ww[k]
                if ww <= 0.0 or t - self._wt[k] > _FORGET_HALF_LIVES * self.half_life:
                    continue
                if i == 0 and self._count == self.window_size:
                    continue  # leaves for the new event
                kept_total += ww
                frexp(ww, &ke)
                if ke - 1 < forget:
                    continue  # forgettable: removed if it would leave the normal range
                if ke - 1 < emin:
                    emin = ke - 1
        else:
            xs, ws, ss, ns = self._st.cells()
            mask = _kept(ws, e)
            self._keep = (xs, ws, ss, ns, mask)
            if mask.any():
                kept = ws[mask]
                kept_total = float(np.sum(kept))
                frexp(float(kept.min()), &ke)
                emin = ke - 1
        if kept_total > 0.0:
            frexp(kept_total, &ke)
            emax = ke - 1
            if emax - _TOP_EXP > lo:
                lo = emax - _TOP_EXP
        if emin - _MIN_EXP < hi:
            hi = emin - _MIN_EXP
        if lo > hi:
            raise _span_error(self.owner, "learn_one", w, "")
        # heavy: the new event in [1, 2) if it can be; light: just inside the normal
        # range, with 64 binades of room below it for the next light events
        sigma = E if E > _TOP_EXP else hi - 64.0
        if sigma > hi:
            sigma = hi
        if sigma < lo:
            sigma = lo
        shift[0] = <long long> sigma
        return ldexp(m, <int> (E - sigma))

    cdef int learn_c(self, double s, double y, double w) except -1:
        cdef double x = self.key(s)
        cdef long long t = self.n_events
        cdef double e = 0.0, ws = w  # e: set and used only with forgetting
        cdef long long shift = 0
        if self.half_life > 0.0:
            if w > 0.0:
                e = (t - self.t_ref) / self.half_life + self.phase  # decay.clock_exponent
                ws = self._plan(w, e, t, &shift)   # may refuse w: nothing changed yet
            # evictions or a renormalisation before the add: the nodes the add (and an
            # evicted cell's re-add) could need first (released by _store_event)
            if shift or (self.window_size > 0 and self._count and t - self._wt[self._head]
                         > _FORGET_HALF_LIVES * self.half_life):
                self._st.reserve_c(2 if self.window_size > 0 else 1)
            elif self.window_size > 0 and self._count == self.window_size:
                self._st.reserve_for_c(x, self._wx[self._head])
            if self.window_size > 0:
                # events beyond the forgetting horizon leave first, then the one the new
                # event pushes out (the plan kept neither: they must not be rescaled)
                while self._count and t - self._wt[self._head] > _FORGET_HALF_LIVES * self.half_life:
                    self._pop_oldest()
                if self._count == self.window_size:
                    self._pop_oldest()
            if shift:
                keep, self._keep = self._keep, None
                self._renormalise(shift, e, keep)
        elif w > 0.0 and not _weight_fits(self._total, -self._leaving_weight(), w, _LIMIT):
            raise _overflow_error(self.owner, "learn_one", w, "")
        if self._grid is None:
            return self._store_event(x, y, ws)
        if ws > 0.0:  # the grid store (no window)
            if self._grid.add_c(x, ws, y):
                self._leave_grid()  # its sums would not stay exact: the general store
                self._st.add_c(x, ws, y)
            else:
                self._st_stale = True
            _dd_add(&self._total, &self._total_lo, ws, 0.0)
        self.n_events = t + 1
        return 0

    cdef int _store_event(self, double x, double y, double ws) except -1 nogil:
        """The end of :meth:`learn_c` on the exact store: the event (key ``x``, stored
        weight ``ws``, planned by the forgetting clock) joins the window and the store."""
        cdef bint full = self.window_size > 0 and self._count == self.window_size
        if full:  # the eviction and the add cannot then run out of memory halfway
            self._st.reserve_for_c(x, self._wx[self._head], True)
        try:
            if full:
                self._pop_oldest()  # before the new event joins: it is not re-added twice
            if ws > 0.0:
                self._st.add_c(x, ws, y)
                _dd_add(&self._total, &self._total_lo, ws, 0.0)
        finally:  # the nodes both paths share, once after both (_pav_pair.pxd)
            self._st.pair_end_c()
        if self.window_size > 0:
            self._push(x, y, ws, self.n_events)  # after the add, which alone can fail
        self._st.release_c()  # what a reservation (here or in learn_c) did not use
        self.n_events += 1
        return 0

    cdef _leave_grid(self):
        """Move the grid store's cells to the general store and drop the grid store."""
        self._st = self.store
        self._grid = None

    cdef inline double _leaving_weight(self):
        """The stored weight of the event a new one would push out of a full window."""
        if self.window_size > 0 and self._count == self.window_size:
            return self._ww[self._head]
        return 0.0

    cdef check_batch(self, const signed char[::1] kinds, const double[::1] w, str method):
        """Raise learn_c's error for the first event of a batch whose weight would not fit
        (no forgetting), before anything is learnt; ``kinds``: see :meth:`_run`."""
        cdef Py_ssize_t i, n = w.shape[0]
        cdef double total = self._total, lo = self._total_lo, leaving
        if self.half_life > 0.0:
            return
        for i in range(n):
            _dd_add(&total, &lo, w[i], 0.0)
        if total <= _LIMIT * (1.0 - 2.0**-30):  # surely: every event's test below holds
            return
        # replay learn_c's tests and sums without touching the window (window[first:])
        window = [] if self.window_size == 0 else [e[2] for e in self.window_events()]
        total, lo, first = self._total, self._total_lo, 0
        for i in range(n):
            if kinds is not None and kinds[i] == 0:
                continue
            full = 0 < self.window_size == len(window) - first
            leaving = window[first] if full else 0.0
            if w[i] > 0.0 and not _weight_fits(total, -leaving, w[i], _LIMIT):
                raise _overflow_error(self.owner, method, w[i], f" at index {i}")
            if full:
                _dd_add(&total, &lo, -leaving, 0.0)
                first += 1
            _dd_add(&total, &lo, w[i], 0.0)
            if self.window_size > 0:
                window.append(w[i])

    cdef _renormalise(self, long long shift, double e, object keep):
        """Divide every stored weight by ``2 ** shift`` (exact; ``shift`` < 0 multiplies)
        and move the clock's reference to now; forget what falls out of the normal range
        (only what :meth:`_plan` found forgettable can)."""
        cdef Py_ssize_t i, k
        cdef double w
        cdef int sh = <int> (shift if -4000 < shift < 4000 else (4000 if shift > 0 else -4000))
        if self.window_size > 0:
            # an event whose weight would leave the normal range is forgotten first
            for i in range(self._count):
                k = self._slot(i)
                w = self._ww[k]
                if w > 0.0 and ldexp(w, -sh) < _DBL_MIN:
                    self._ww[k] = 0.0
                    self._readd(self._wx[k], self._st.remove_c(self._wx[k], w, self._wy[k]))
            for i in range(self._count):
                k = self._slot(i)
                self._ww[k] = ldexp(self._ww[k], -sh)
            self._st.scale_by_power_of_two(-sh)
        else:
            self._rescale_cells(sh, e, keep)
        self.reset_total()
        self.t_ref, self.phase = renormalised_clock(self.n_events, e, shift)

    cdef _rescale_cells(self, int shift, double e, object keep):
        """Without a window: rescale every cell, forget the scores lighter than ``2 **
        -1000`` of a new unit-weight event (``keep``: the cells and the mask of those
        kept, from :meth:`_plan`, or None: found here), and refit if a weighted
        label sum left the normal range (a light positive label in a heavy cell: the sum
        would round to a subnormal or to 0 and the block values could fall out of
        order)."""
        store = self.store
        if keep is None:
            xs, ws, ss, ns = store.cells()
            mask = _kept(ws, e)
        else:
            xs, ws, ss, ns, mask = keep
        ws2 = np.ldexp(ws, -shift)
        ss2 = np.ldexp(ss, -shift)
        lost = (ss > 0.0) & (ss2 < _DBL_MIN)
        if mask.all() and not lost.any():
            store.scale_by_power_of_two(-shift)
            return
        ss2[lost] = 0.0
        store.rebuild(xs[mask], ws2[mask], ss2[mask], ns[mask])

    # ------------------------------------------------------------------ Python API

    cdef int learn_checked(self, object score, object label, object w) except -1:
        cdef double s = check_score(score, self.owner, "learn_one")
        cdef double y = check_label(label, self.owner, "learn_one")
        return self.learn_c(s, y, check_weight(w, self.owner, "learn_one"))

    cdef double predict_checked(self, object score) except? -1.0:
        return self.predict_c(check_score(score, self.owner, "predict_one"))

    @cython.annotation_typing(False)  # annotations for readers (inspect), not C types
    def learn_one(self, score: float, label: bool | int, w: float = 1.0) -> None:
        """Validate and learn one event (see :meth:`streamcal.OnlineIsotonic.learn_one`)."""
        self.learn_checked(score, label, w)

    @cython.annotation_typing(False)
    def predict_one(self, score: float) -> float:
        """Validate ``score`` and return its calibrated probability. Venn-ABERS:
        the two fits are read-only queries of the store when its coordinates are
        exact (``_pav_query.pxd``), else two hypothetical
        insertions, each removed again."""
        return self.predict_checked(score)

    def predict_interval_one(self, score):
        """Validate ``score`` and return its Venn-ABERS pair ``(p0, p1)``
        (:meth:`streamcal.VennAbers.predict_interval_one`); ``(0.0, 1.0)`` with
        nothing stored. The state is not changed."""
        cdef double s = check_score(score, self.owner, "predict_interval_one")
        cdef double p0, p1
        self.interval_c(self.key(s), &p0, &p1)
        return (p0, p1)

    def predict_many(self, const double[::1] scores):
        """Predictions for validated scores, one :meth:`predict_one` each, in C; the
        step and linear read-outs of the exact store without a prior release the GIL
        (they only read the store, so threads may predict from one calibrator at once;
        a Venn-ABERS pair may insert and remove a hypothetical event, so it keeps the
        GIL; a prediction does not move the forgetting clock)."""
        cdef Py_ssize_t i, n = scores.shape[0]
        cdef double wh, res = self.resolution
        out = np.empty(n, dtype=np.float64)
        cdef double[::1] o = out
        if (self._grid is None and self.mode != MODE_VENN_ABERS
                and not (self.prior_strength > 0.0 and self._st.n_blocks_c() != 0)):
            wh = self.next_weight_c()
            with nogil:
                for i in range(n):
                    o[i] = self._exact_predict(scores[i], _key(scores[i], res), wh)
            return out
        for i in range(n):
            o[i] = self.predict_c(scores[i])
        return out

    def learn_many(self, const double[::1] scores, const double[::1] labels, const double[::1] w):
        """Learn validated arrays, event by event (a weight that would overflow the
        sums raises first, naming its index, and nothing is learnt)."""
        self._run(None, scores, labels, w, "learn_many")

    def predict_learn_many(self, const double[::1] scores, const double[::1] labels, const double[::1] w):
        """The prequential loop over validated arrays: the predictions before each event."""
        return self._run(None, scores, labels, w, "predict_learn_many")

    def predict_reveal_many(self, const signed char[::1] kinds, const double[::1] scores,
                            const double[::1] labels, const double[::1] w):
        """Validated operations (:meth:`streamcal.base.BinaryCalibrator.predict_reveal_many`:
        ``kinds[i]`` 0 predicts ``scores[i]``, 1 learns event ``i``, 2 does both; the
        weights of predictions are 0): the predictions, in order."""
        return self._run(kinds, scores, labels, w, "predict_reveal_many")

    cdef object _run(self, const signed char[::1] kinds, const double[::1] scores,
                     const double[::1] labels, const double[::1] w, str method):
        """The loop of the batch methods: for each event, predict (kind 0 or 2; without
        ``kinds``: every event with ``predict_learn_many``) then learn (kind 1 or 2;
        every event without ``kinds``), each as :meth:`predict_c` / :meth:`learn_c`
        would. Returns the predictions (None for ``learn_many``)."""
        cdef bint learning_only = method == "learn_many"
        cdef signed char k = 1 if learning_only else 2
        cdef Py_ssize_t i, j = 0, n = scores.shape[0], n_out = 0 if learning_only else n
        if kinds is not None:
            n_out = 0
            for i in range(n):
                n_out += kinds[i] != 1
        out = np.empty(n_out, dtype=np.float64)
        cdef double[::1] o = out
        self.check_batch(kinds, w, method)
        saved = self._save_if_refusable(w)
        # Venn-ABERS without a window: an event of unit weight and label 0 or 1 takes
        # the shortcut of _va_predict_learn_c (the same floats, three store operations
        # instead of four); a window, another weight or label takes both hypotheticals
        cdef bint shortcut = self.mode == MODE_VENN_ABERS and self.window_size == 0
        i = 0
        if (kinds is None and k == 2 and self._grid is not None and self.half_life == 0.0
                and self.window_size == 0 and self.mode != MODE_VENN_ABERS):
            i = j = self._grid_run(scores, labels, w, o)  # without the GIL
        if self._grid is None and self.half_life == 0.0 and self.prior_strength == 0.0:
            self._exact_run(kinds, k, scores, labels, w, o)  # without the GIL
            return None if learning_only else out
        try:
            for i in range(i, n):
                if kinds is not None:
                    k = kinds[i]
                if k == 2 and shortcut and w[i] == 1.0 and (labels[i] == 0.0 or labels[i] == 1.0):
                    o[j] = self._va_predict_learn_c(scores[i], labels[i])
                    j += 1
                    continue
                if k != 1:
                    o[j] = self.predict_c(scores[i])
                    j += 1
                if k != 0:
                    self.learn_c(scores[i], labels[i], w[i])
        except ValueError:
            self._refused(saved, w, i, method)
        return None if learning_only else out

    cdef int _exact_run(self, const signed char[::1] kinds, signed char k,
                        const double[::1] scores, const double[::1] labels,
                        const double[::1] w, double[::1] o) except -1:
        """The loop of :meth:`_run` on the exact store, with or without a window, but no
        grid, forgetting or prior (the caller checks), releasing the GIL, so that
        calibrators replayed side by side run on several cores: per event what
        :meth:`predict_c` then :meth:`learn_c` do (Venn-ABERS without a window:
        :meth:`_va_predict_learn_c` for a unit weight and label 0 or 1), through the
        same helpers, so the same floats. Without forgetting a new event weighs 1, and
        :meth:`check_batch` has already ruled out an overflow of the total, so no event
        is refused; the store raises only MemoryError."""
        cdef IsotonicBlockStore st = self._st
        cdef Py_ssize_t i, j = 0
        cdef double s, x, y, ws, a, res = self.resolution
        cdef bint shortcut = self.mode == MODE_VENN_ABERS and self.window_size == 0
        cdef const signed char* kp = NULL
        if kinds is not None and kinds.shape[0] != 0:
            kp = &kinds[0]
        with nogil:
            for i in range(scores.shape[0]):
                if kp != NULL:
                    k = kp[i]
                s = scores[i]
                y = labels[i]
                ws = w[i]
                x = _key(s, res)
                if (k == 2 and shortcut and ws == 1.0 and (y == 0.0 or y == 1.0)
                        and st.n_blocks_c() != 0):
                    a = st.hypothetical_c(x, 1.0, 1.0 - y)
                    self._store_event(x, y, 1.0)
                    o[j] = _va_after_learn(st, x, a, y)
                    j += 1
                    continue
                if k != 1:
                    o[j] = self._exact_predict(s, x, 1.0)
                    j += 1
                if k != 0:
                    self._store_event(x, y, ws)
        return 0

    cdef Py_ssize_t _grid_run(self, const double[::1] scores, const double[::1] labels,
                              const double[::1] w, double[::1] o) noexcept:
        """:meth:`predict_c` then :meth:`learn_c` of each event, on the grid store without
        a window or forgetting (the caller checks), in a loop that releases the GIL (a
        reader thread can parse the next chunk meanwhile): the same operations in the
        same order, so the same floats. :meth:`check_batch` has already ruled out an
        overflow of the total. Returns how many events were done: ``n``, or the index of
        the first event the grid store refuses (its sums would not stay exact; the store
        unchanged), which the caller's general loop then redoes and moves to the general
        store."""
        cdef GridIsotonicStore g = self._grid
        cdef Py_ssize_t i = 0, n = scores.shape[0]
        cdef double s, x, ws, res = self.resolution
        cdef bint linear = self.mode == MODE_LINEAR, added = False
        with nogil:
            while i < n:
                s = scores[i]
                x = _key(s, res)
                o[i] = _grid_predict(g, s, x, linear)
                ws = w[i]
                if ws > 0.0:
                    if g.add_c(x, ws, labels[i]):
                        break
                    added = True
                    _dd_add(&self._total, &self._total_lo, ws, 0.0)
                i += 1
        self.n_events += i
        if added:
            self._st_stale = True
        return i

    cdef double _va_predict_learn_c(self, double s, double y) except? -1.0:
        """:meth:`predict_c` then :meth:`learn_c` of ``(s, y, w=1)``, for Venn-ABERS
        without a window, in three store operations instead of four. The hypothetical
        event labelled ``y`` is the event itself: when the real learn adds it to the
        store with the weight a hypothetical event gets (``next_weight_c``; always so
        without forgetting, and with it unless the learn renormalises), the step fit at
        its key after the learn is, bit for bit, the hypothetical fit of label ``y``
        (:meth:`IsotonicBlockStore.hypothetical_c` is add, read, restore). So: the
        hypothetical fit of label ``1 - y`` (add, read, restore), the learn, one read.
        Otherwise (an empty store, or a learn that renormalises) the general path."""
        cdef double x, wh, e, E, m, a
        if self._st.n_blocks_c() == 0:
            self.learn_c(s, y, 1.0)
            return s
        x = self.key(s)
        wh = self.next_weight_c()
        if self.half_life > 0.0:
            # what learn_c -> _plan would store for w = 1, without renormalising
            e = (self.n_events - self.t_ref) / self.half_life + self.phase
            m = self._split(1.0, e, &E)
            if not (_MIN_EXP <= E and E <= _TOP_EXP) or ldexp(m, <int> E) != wh:
                p0 = self.predict_c(s)
                self.learn_c(s, y, 1.0)
                return p0
        a = self._st.hypothetical_c(x, wh, 1.0 - y)
        self.learn_c(s, y, 1.0)
        return _va_after_learn(self._st, x, a, y)

    cdef object _save_if_refusable(self, const double[::1] w):
        """With forgetting, a weight can be refused only when it, or one held, is far
        from 1 (see :meth:`_plan`): a batch whose positive weights are all within
        [2**-400, 2**400] never is. Otherwise save the state, to restore it if an event
        is refused (O(cells)); None when nothing needs saving."""
        cdef Py_ssize_t i
        if self.half_life == 0.0:
            return None
        for i in range(w.shape[0]):
            if w[i] > 0.0 and not (1.0 / _SAFE_W <= w[i] <= _SAFE_W):
                st = self._st
                return ((st.cells(), st.exactness_scale, st.residue_bounds()),
                        self.window_events(), self.n_events, self.t_ref, self.phase)
        return None

    cdef _refused(self, object saved, const double[::1] w, Py_ssize_t i, str method):
        """Event ``i`` of a batch was refused: restore the state saved before the batch
        and raise the error naming the index."""
        if saved is None:
            raise  # cannot happen (see _save_if_refusable): not silently
        (cells, qexp, residues), window, n_events, t_ref, phase = saved
        self._st.rebuild(*cells, qexp, residues)
        self.restore_counters(window, n_events, t_ref, phase)
        raise _span_error(self.owner, method, w[i], f" at index {i}")

    def plan_surely_fits(self, double w):
        """With forgetting: True when an event of weight ``w`` (>= 0) learnt now is
        surely stored, because the forgetting clock's plan for it needs no search for a
        shift (the only refusal under forgetting); False when unknown."""
        cdef double E
        if w == 0.0:
            return True
        if not w > 0.0 or self.half_life == 0.0:
            return False
        self._split(w, (self.n_events - self.t_ref) / self.half_life + self.phase, &E)
        return (_MIN_EXP <= E and E <= _TOP_EXP) or (E > _TOP_EXP and w <= 4194304.0)

    def next_weight(self):
        """The stored weight a new unit-weight event would get now (1.0 without
        forgetting), capped at ``2 ** 1000``."""
        return self.next_weight_c()

    def weight_scale(self):
        """The factor turning stored weights into weights relative to the newest event."""
        return 1.0 if self.half_life == 0.0 else weight_scale(
            self.n_events, self.t_ref, self.half_life, self.phase)

    # ------------------------------------------------------------------ state

    def window_events(self):
        """The window as a list of ``[key, label, stored weight, event index]``, oldest
        first (None without a window)."""
        if self.window_size == 0:
            return None
        cdef Py_ssize_t i, k
        out = []
        for i in range(self._count):
            k = self._slot(i)
            out.append([self._wx[k], self._wy[k], self._ww[k], int(self._wt[k])])
        return out

    def restore_counters(self, window, n_events, t_ref, phase):
        """Put back the window events (unless None), the event count and the clock
        (``t_ref``, ``phase``), then recompute the total: the tail shared by restoring
        a refused batch and rebuilding from a pickle."""
        if window is not None:
            self.set_window_events(window)
        self.n_events = n_events
        self.t_ref = t_ref
        self.phase = phase
        self.reset_total()

    def set_window_events(self, events):
        """Replace the window by ``events`` (as :meth:`window_events` gives them)."""
        self._alloc(max(len(events), min(self.window_size, 1024)))
        self._head = 0
        self._count = 0
        for x, y, w, t in events:
            self._push(float(x), float(y), float(w), int(t))

    def total_weight_parts(self):  # the sum of the stored weights, a double-double pair
        return self._total, self._total_lo

    def reset_total(self):
        """Recompute the sum of stored weights (after a restore) from the window's events,
        else the cells; a grid store (:attr:`store` read, replaced, rebuilt) reloads."""
        if self._grid is not None:
            if not self._st_stale and not self._grid.load(*self._st.cells()):
                self._grid = None
        ws = ([e[2] for e in self.window_events()] if self.window_size > 0 else
              (self._grid.cells() if self._grid is not None else self._st.cells())[1].tolist())
        try:  # correctly rounded, and what is left of the exact sum; else none fits
            self._total = fsum(ws)
            self._total_lo = fsum(ws + [-self._total])
        except OverflowError:
            self._total, self._total_lo = INFINITY, 0.0

    @property
    def store(self):
        """The block store (:class:`streamcal.core.pav.IsotonicBlockStore`). With a
        grid store (``resolution`` alone) a copy of its content, rebuilt when it changed
        (O(cells)); code that changes this copy or assigns another store calls
        :meth:`reset_total` after, as restoring does."""
        if self._grid is not None and self._st_stale:
            st = IsotonicBlockStore(self._st.leaf_capacity, False)  # no window
            xs, ws, ss, ns = self._grid.cells()
            if len(xs):
                st.rebuild(xs, ws, ss, ns)
            self._st = st
            self._st_stale = False
        return self._st

    @store.setter
    def store(self, IsotonicBlockStore value):
        self._st, self._st_stale = value, False
        value.track_residues = self.window_size > 0
        if self._grid is not None and not self._grid.load(*value.cells()):
            self._grid = None

    @property
    def grid_store(self):
        """The grid store the events go to (:mod:`streamcal.core._grid_pav`), or None
        (without ``resolution``, with a window, forgetting, a prior or Venn-ABERS, or
        once sums left its exact regime)."""
        return self._grid

    @property
    def n_cells(self):
        """Number of distinct keys held. O(1)."""
        return self._grid.n_cells if self._grid is not None else self._st.n_cells

    def __reduce__(self):
        return (_rebuild, (type(self), self.store, self.resolution, self.half_life,
                           self.window_size, self.linear, self.window_events(),
                           self.n_events, self.t_ref, self.phase, self.venn_abers,
                           self.prior_strength))


def _overflow_error(owner, method, w, where):
    return argument_error(ValueError, "w", owner, method, WEIGHT_DOMAIN + " whose sum with "
                          "the weights held stays finite", w, suffix=where)


def _kept(ws, e):
    """Mask of the stored weights (at clock exponent ``e``) not lighter than ``2 **
    -1000`` of a new unit-weight event: those a renormalisation keeps."""
    return np.log2(ws) >= e - _FORGET_EXP


def _span_error(owner, method, w, where):
    return argument_error(ValueError, "w", owner, method, WEIGHT_DOMAIN + " that can be "
                          "stored beside the decayed weights held (their ratio within about "
                          "2**1480)", w, suffix=where)


def _rebuild(cls, store, resolution, half_life, window_size, linear, window, n_events, t_ref, phase,
             venn_abers=False, prior_strength=0.0):
    stream = cls(store, resolution, half_life, window_size, linear, venn_abers, prior_strength)
    stream.restore_counters(window, n_events, t_ref, phase)
    return stream
