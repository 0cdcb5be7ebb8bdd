"""Compiled per-event state of the binary streaming metrics: what every store shares,
and the stores of the mean scores and the binned sums.

The binary family (Brier, LogLoss, ECE, Sharpness, MurphyDecomposition,
CalibrationRefinement, ROCAUC) shares the event preamble (the checks of
``streamcal._cvalidation``, one per argument, in the order ``y_true``, ``y_pred``,
``w``: ``check_event`` in ``_kernels.pxd``, inline), the weight rule and the snapshot
conventions. This module holds the mean scores (``MeanScore``: Brier, LogLoss) and the
binned sums (``Binned``: ECE, Sharpness, MurphyDecomposition, the equal-width bin rule);
the Foster-Hart groups of CalibrationRefinement are in ``_kernels_refinement.pyx`` and
the exact rank sums of ROCAUC in ``_kernels_ranking.pyx``. The Python classes in
``_scoring.py``, ``_binned.py``, ``_refinement.py`` and ``_ranking.py`` keep the
shells: parameters and their checks, snapshots' validation, repr, docs and the values
read in numpy.

Every store

- holds the state the shell used to hold, in the same snapshot format
  (``get_state()`` returns exactly what the shell's ``_get_state()`` wrote before the
  state moved here, ``set_state`` reads it back), and pickles through that state;
- adds a validated event with ``add(y, p, w)`` (labels 0.0 / 1.0, weights >= 0), in
  the same floating-point operations, in the same order, as the pure-Python update did,
  so a snapshot written by the pure-Python metrics continues bit for bit;
- runs ``update_many(y, p, w)`` over float64 arrays as one loop of ``add``, so a batch
  leaves exactly the state of a loop of ``update``.

The stores share the base :class:`Store` (``update_one``, ``update_many`` and the
weight rule); each is a final class, so its ``add`` is a direct call (inlined where it
is ``inline``) from the metric's ``update`` and from its own batch loop ``add_each``.

The per-event ``update`` of each metric is a module-level function next to its store,
bound as the shell class's ``update`` method (Cython functions bind like Python ones):
one call from Python, no Python frame.
"""

cimport cython
from libc.math cimport fabs, floor, ldexp, log, pow
from libc.string cimport memset
from cpython.mem cimport PyMem_Free

from streamcal.core._bins cimport uniform_bin  # the equal-width bin rule
from streamcal.core._pav_residue cimport k_compensated_add, k_sum_error

import math
from collections import deque

from streamcal._validation import weight_capacity, weight_overflow_error
from streamcal.core.decay import METRIC_RENORM_EXPONENT, renormalised_clock

# half-life clock of ECE: its one home is streamcal.core.decay
cdef double RENORM_EXPONENT = METRIC_RENORM_EXPONENT
cdef double FORGET = 2.0 ** -RENORM_EXPONENT
# ECE with a window: a bin (a forecast value, the total) whose sums' rounding residue
# could exceed this share of its weight is summed again from the window's events
# (Binned.resum); the bound grows by at most 3 * 2**-53 per inexact addition, so a
# bin is summed again (one pass over the window) at most once per about 2**11 of them
# (2**14 on average), and a value read stays within about 2**-40 of the window's own
cdef double WINDOW_RESIDUE_MAX = 2.0 ** -40


cdef inline double add_err(double* s, double t) noexcept:
    """``s += t``; returns the rounding error of that addition, as a magnitude."""
    cdef double a = s[0]
    s[0] = a + t
    return fabs(k_sum_error(a, t, s[0]))


cdef bint batch_fits(double held, const double[:] w, double scale, double capacity) noexcept:
    # whether no event of a batch can be refused by the weight rule: the held weight
    # only grows by the (scaled) weights added, so the sum bounds it at every event
    cdef Py_ssize_t i
    cdef double total = held
    for i in range(w.shape[0]):
        total += w[i] * scale
    return total <= capacity


cdef class Store:
    """What the stores of the binary metrics share (MeanScore, Binned and
    ``_kernels_refinement.Groups``; declared in ``_kernels.pxd``): the owner's name, the
    count and total weight of the events held, the capacity of the weight rule, and
    the Python-facing ``update_one`` / ``update_many`` over the subclass's ``add``.

    The subclasses are final: the module-level ``update`` of each metric types its
    store as the subclass, so its ``add`` is a direct call (inlined where ``inline``),
    never a virtual one. Each subclass also writes the batch loop ``add_each`` (three
    lines) for the same reason: ``update_many`` makes one virtual call per batch, and
    the loop calls ``add`` directly for every event (a loop here would call it through
    the vtable, and not inline MeanScore's).
    """

    cdef int add(self, double y, double p, double w) except -1:
        raise NotImplementedError

    cdef int add_each(self, const double[:] y, const double[:] p, const double[:] w) except -1:
        raise NotImplementedError

    cpdef double scale(self):
        """How much a stored weight may exceed the weight given, for the weight rule
        (1; ``Binned`` under forgetting: ``2 ** 64``)."""
        return 1.0

    def update_one(self, double y, double p, double w):
        """Add a validated event."""
        self.add(y, p, w)

    def update_many(self, const double[:] y, const double[:] p, const double[:] w):
        """Add validated arrays of events, as a loop of ``update_one``; atomic under the
        weight rule: one compiled pass when no event can be refused, else event by
        event from a saved state, restored before the error (naming the index) of the
        first refused weight."""
        cdef Py_ssize_t i
        cdef double scale = self.scale()
        if batch_fits(self.weight, w, scale, self.capacity):
            self.add_each(y, p, w)
            return
        saved = self.get_state()
        for i in range(w.shape[0]):
            if w[i] > 0.0 and not self.weight + w[i] * scale <= self.capacity:
                self.set_state(saved)
                raise weight_overflow_error(self.owner, "update_many", w[i], f" at index {i}")
            self.add(y[i], p[i], w[i])

    cdef int set_totals(self, dict state) except -1:
        # the part of every set_state that restores the base's fields
        self.n = int(state["n"])
        self.weight = float(state["weight"])

    def __setstate__(self, state):
        self.set_state(state)  # the state of get_state(), from the subclass's __reduce__


def cell_holds_event(double cw, double cs, double y, double w):
    """Could events of weight sum ``cw`` and label sum ``cs`` include the event
    ``(y, w)``? (``cell_holds`` of ``_kernels.pxd``: what the revert of every binned
    metric asks.)

    >>> cell_holds_event(2.0, 1.0, 1.0, 1.0), cell_holds_event(2.0, 0.0, 1.0, 1.0)
    (True, False)
    """
    return cell_holds(cw, cs, y, w)


class StoreShell:
    """The shell's side of a compiled store: the hooks of
    :class:`streamcal.metrics.base.BinaryCalibrationMetric` that hand a validated event,
    a validated batch or the snapshot state to ``self._store`` unchanged. Listed first
    among a shell's bases (before the metric base, whose ``_update`` is abstract).

    Examples
    --------
    >>> from streamcal.metrics import Brier
    >>> from streamcal.metrics._kernels import StoreShell
    >>> isinstance(Brier(), StoreShell)
    True
    >>> m = Brier()
    >>> m._update(1.0, 0.75, 2.0)
    >>> m._get_state()
    {'weight': 2.0, 'total': 0.125, 'n': 1}
    """

    __slots__ = ()

    def _update(self, y, p, w):
        self._store.update_one(y, p, w)

    def _update_many_validated(self, y, p, w):
        self._store.update_many(y, p, w)

    def _get_state(self):
        return self._store.get_state()

    @property
    def _n(self) -> int:
        """Positive-weight events held (``n_events``), for the stores that count them
        (all but ROCAUC's, which counts per class)."""
        return self._store.n

    @property
    def _weight(self) -> float:
        """Total weight held, for the stores that keep it (all but ROCAUC's)."""
        return self._store.weight


# ============================================================================ mean scores


@cython.final
cdef class MeanScore(Store):
    """Weighted mean of a per-event loss: ``(p - y) ** 2`` (Brier) or the clipped log
    loss (LogLoss, ``eps > 0``). State: total weight, weighted loss sum and the count of
    positive-weight events (a revert of the last one resets the sums to exactly 0)."""

    cdef readonly double eps
    cdef readonly bint log_loss
    cdef public double total

    def __init__(self, str owner, double eps=0.0):
        self.owner = owner
        self.eps = eps
        self.log_loss = eps > 0.0
        # of the weight rule: the loss sum is <= max loss * weight
        self.capacity = weight_capacity(-log(eps) if eps > 0.0 else 1.0)

    cdef inline double neg_log(self, double y, double p) noexcept:
        cdef double eps = self.eps
        cdef double q = p if y == 1.0 else 1.0 - p
        return log(eps if q < eps else (1.0 - eps if q > 1.0 - eps else q))

    cdef inline void add_event(self, double y, double p, double w) noexcept:
        # the body of add: gcc inlines it (it does not inline add, a vtable entry, into
        # mean_score_update: 6 more instructions per event, callgrind)
        cdef double d
        if w > 0.0:
            self.weight += w
            if self.log_loss:
                self.total -= w * self.neg_log(y, p)
            else:
                d = p - y
                self.total += w * d * d
            self.n += 1

    cdef int add(self, double y, double p, double w) except -1:
        self.add_event(y, p, w)

    cdef int add_each(self, const double[:] y, const double[:] p, const double[:] w) except -1:
        # Store.update_many's batch loop: add_event's body with the three sums in locals
        # (the same additions in the same order: the same floats), since through
        # ``self`` each event's sum waits on the store of the one before
        cdef Py_ssize_t i
        cdef double weight = self.weight, total = self.total, d, wi
        cdef long long n = self.n
        for i in range(y.shape[0]):
            wi = w[i]
            if wi > 0.0:
                weight += wi
                if self.log_loss:
                    total -= wi * self.neg_log(y[i], p[i])
                else:
                    d = p[i] - y[i]
                    total += wi * d * d
                n += 1
        self.weight, self.total, self.n = weight, total, n

    def revert(self, double y, double p, double w):
        """Remove a validated event; False (nothing changed) if none is held, or it
        weighs more than all the events held (up to rounding: 2**-30 of them)."""
        cdef double d
        if w > 0.0:
            if self.n <= 0 or not w <= self.weight * (1.0 + 2.0**-30):
                return False
            self.n -= 1
            if self.n <= 0:
                self.weight = self.total = 0.0
                self.n = 0
                return True
            self.weight -= w
            if self.log_loss:
                self.total -= w * -self.neg_log(y, p)
            else:
                d = p - y
                self.total -= w * (d * d)
        return True

    def get(self):
        return self.total / self.weight if self.weight > 0.0 else 0.0

    def get_state(self):
        return {"weight": self.weight, "total": self.total, "n": self.n}

    def set_state(self, dict state):
        self.set_totals(state)
        self.total = float(state["total"])

    def __reduce__(self):
        return MeanScore, (self.owner, self.eps), self.get_state()


def mean_score_update(self, y_true, y_pred, w=1.0):
    """Add one event; O(1). The checks of :mod:`streamcal._validation` run in compiled
    code (their messages unchanged): a bad event raises and changes nothing."""
    cdef MeanScore s = self._store
    cdef double e[3]
    check_update(y_true, y_pred, w, s.owner, s.weight, s.capacity, e)
    s.add_event(e[0], e[1], e[2])


# ============================================================================ binned sums

DEF SHARPNESS = 0
DEF ECE_KIND = 1
DEF MURPHY = 2


@cython.final
cdef class Binned(Store):
    """Sums per equal-width bin of the forecast, with the count of events behind each
    (a bin whose events are all reverted is exactly zero).

    ``kind`` 0 (Sharpness): weight and label sum per bin; 1 (ECE): and the forecast
    sum; 2 (MurphyDecomposition): and the sums of ``w p ** 2`` and ``w p y``, with the
    Brier sum. ECE alone may bin on equal mass (``uniform`` False: weight, label sum and
    count per distinct forecast, in the dict ``values``), keep a window of its last
    ``window_size`` positive-weight events (``window``, a deque of ``(y, p, w)``) or
    forget exponentially (``half_life``; the clock ``t``, ``t_ref``, ``phase``).

    With a window, events leave by subtraction, which does not undo the rounding of
    their addition: after a heavy event left, a bin's sums could hold its residue
    (a total weight of 0.0 for events of 1e12, and an ECE of inf). Each bin (each
    forecast value with ``"quantile"``) and the total then carry a bound on their
    rounding residue (``br``, ``vres``, ``wres``: the rounding error of every addition
    and subtraction, found exactly); a removal after which a bound exceeds 2**-40 of
    the weight left sums that bin again from the window's events (:meth:`resum`).
    """

    cdef readonly int kind
    cdef readonly Py_ssize_t n_bins
    cdef readonly bint uniform
    cdef readonly bint plain
    cdef readonly Py_ssize_t window_size  # 0: none
    cdef readonly double half_life  # 0.0: none
    cdef double* edges
    cdef double* bw
    cdef double* by
    cdef double* bp
    cdef double* bpp
    cdef double* bpy
    cdef long long* bn
    cdef double* br             # window: per bin, bound on |residue| of bw + by + bp
    cdef public double wres     # window: the same for the total weight
    cdef public dict vres       # window, "quantile": per forecast value held, the same
    cdef public double score
    cdef public dict values
    cdef public object window
    cdef public long long t
    cdef public long long t_ref
    cdef public double phase

    def __cinit__(self, str owner, int kind, Py_ssize_t n_bins, bint uniform=True,
                  Py_ssize_t window_size=0, double half_life=0.0):
        cdef Py_ssize_t j
        self.owner = owner
        # Sharpness and Murphy square a bin's sums; ECE's gaps are at most 2 W, its
        # equal-mass cuts multiply a weight by n_bins
        if kind == ECE_KIND:
            self.capacity = weight_capacity(2.0 * (1 if uniform else n_bins))
        else:
            self.capacity = weight_capacity(2.0, quadratic=True)
        self.kind = kind
        self.n_bins = n_bins
        self.uniform = uniform
        self.window_size = window_size
        self.half_life = half_life
        self.plain = uniform and window_size == 0 and half_life == 0.0
        self.edges = new_doubles(n_bins + 1)
        for j in range(n_bins + 1):
            self.edges[j] = <double>j / <double>n_bins
        self.bw = new_doubles(n_bins)
        self.by = new_doubles(n_bins)
        self.bp = new_doubles(n_bins)
        self.bpp = new_doubles(n_bins)
        self.bpy = new_doubles(n_bins)
        self.bn = new_counts(n_bins)
        self.br = new_doubles(n_bins)
        self.values = {}
        self.vres = {}
        self.window = deque() if window_size > 0 else None

    def __dealloc__(self):
        PyMem_Free(self.edges)
        PyMem_Free(self.bw)
        PyMem_Free(self.by)
        PyMem_Free(self.bp)
        PyMem_Free(self.bpp)
        PyMem_Free(self.bpy)
        PyMem_Free(self.bn)
        PyMem_Free(self.br)

    cdef void clear(self):
        """Back to exactly empty (the clock of half_life is kept)."""
        cdef size_t size = self.n_bins * sizeof(double)
        memset(self.bw, 0, size)
        memset(self.by, 0, size)
        memset(self.bp, 0, size)
        memset(self.bpp, 0, size)
        memset(self.bpy, 0, size)
        memset(self.bn, 0, self.n_bins * sizeof(long long))
        memset(self.br, 0, size)
        self.n = 0
        self.weight = 0.0
        self.wres = 0.0
        self.score = 0.0
        self.values = {}
        self.vres = {}

    # ------------------------------------------------------------------ events

    cdef inline void add_bins(self, double y, double p, double w) noexcept:
        cdef Py_ssize_t b = uniform_bin(p, self.n_bins, self.edges)
        cdef double wp, d
        self.bw[b] += w
        self.by[b] += w * y
        if self.kind == ECE_KIND:
            self.bp[b] += w * p
        elif self.kind == MURPHY:
            wp = w * p
            d = p - y
            self.bp[b] += wp
            self.bpp[b] += wp * p
            self.bpy[b] += wp * y
            self.score += w * d * d
        self.bn[b] += 1
        self.weight += w
        self.n += 1

    cdef int add_value(self, double y, double p, double w) except -1:
        cdef list entry = self.values.get(p)
        self.n += 1
        self.weight += w
        if entry is None:
            self.values[p] = [w, w * y, 1]
        else:
            entry[0] = <double>entry[0] + w
            entry[1] = <double>entry[1] + w * y
            entry[2] = entry[2] + 1
        return 0

    cdef int remove(self, double y, double p, double w) except -1:
        """Remove an event held (as stored: its weight after forgetting)."""
        cdef Py_ssize_t b
        cdef double wp, d
        cdef list entry
        self.n -= 1
        if self.n <= 0:  # back to exactly empty (no float residue)
            self.clear()
            return 0
        if self.window is not None:
            return self.remove_tracked(y, p, w)
        if self.kind == MURPHY:
            d = p - y
            self.weight -= w
            self.score -= w * d * d
        else:
            self.weight -= w
        if self.uniform:
            b = uniform_bin(p, self.n_bins, self.edges)
            self.bn[b] -= 1
            if self.bn[b] == 0:
                self.bw[b] = self.by[b] = self.bp[b] = self.bpp[b] = self.bpy[b] = 0.0
            else:
                self.bw[b] -= w
                self.by[b] -= w * y
                if self.kind == ECE_KIND:
                    self.bp[b] -= w * p
                elif self.kind == MURPHY:
                    wp = w * p
                    self.bp[b] -= wp
                    self.bpp[b] -= wp * p
                    self.bpy[b] -= wp * y
        else:
            entry = self.values[p]
            entry[2] = entry[2] - 1
            if entry[2] == 0:
                del self.values[p]
            else:
                entry[0] = <double>entry[0] - w
                entry[1] = <double>entry[1] - w * y
        return 0

    cdef double weight_factor(self) except -1.0:
        """Factor applied to the weight of the next event (half_life only)."""
        # streamcal.core.decay.clock_exponent, inlined for the per-event path
        cdef double e = <double>(self.t - self.t_ref) / self.half_life + self.phase
        if e >= RENORM_EXPONENT:
            self.renormalise(e)
            e = self.phase
        self.t += 1
        return pow(2.0, e)

    cdef int renormalise(self, double e) except -1:
        """Rescale the stored weights by an exact power of two (every 64 half-lives,
        ``METRIC_RENORM_EXPONENT`` of :mod:`streamcal.core.decay`) and drop what weighs
        less than ``2 ** -64`` of the total."""
        cdef double shift = -floor(e)
        cdef int k = <int>shift if shift > -100000.0 else -100000  # ldexp saturates far before
        cdef double total, cut, w
        cdef Py_ssize_t b
        cdef dict kept
        self.t_ref, self.phase = renormalised_clock(self.t, e, -shift)
        total = ldexp(self.weight, k)
        cut = total * FORGET
        # a weight rescaled to 0.0 (it underflowed: a light event before a heavy one,
        # the cut itself 0.0 when the total underflows) leaves too: a held event
        # weighs > 0
        if self.uniform:
            for b in range(self.n_bins):
                w = ldexp(self.bw[b], k)
                if self.bn[b] and not (w >= cut and w > 0.0):
                    self.bw[b] = self.by[b] = self.bp[b] = 0.0
                    self.n -= self.bn[b]
                    self.bn[b] = 0
                self.bw[b] = w if self.bn[b] else 0.0
                self.by[b] = ldexp(self.by[b], k)
                self.bp[b] = ldexp(self.bp[b], k)
            self.weight = math.fsum([self.bw[b] for b in range(self.n_bins)])
        else:
            kept = {}
            for p, entry in self.values.items():
                w = ldexp(<double>entry[0], k)
                if not (w >= cut and w > 0.0):
                    self.n -= <long long>entry[2]
                else:
                    kept[p] = [w, ldexp(<double>entry[1], k), entry[2]]
            self.values = kept
            self.weight = math.fsum([v[0] for v in kept.values()])
        return 0

    cpdef double scale(self):
        """How much a stored weight may exceed the weight given (forgetting: ``2 **
        64``, the renormalisation threshold), for the weight rule."""
        return 2.0 ** RENORM_EXPONENT if self.half_life > 0.0 else 1.0

    cdef int add(self, double y, double p, double w) except -1:
        if w > 0.0:
            if self.plain:
                self.add_bins(y, p, w)
                return 0
            if self.half_life > 0.0:
                w *= self.weight_factor()
            if self.window is not None:
                self.add_tracked(y, p, w)
                self.window.append((y, p, w))
                if len(self.window) > self.window_size:
                    y, p, w = self.window.popleft()
                    self.remove(y, p, w)
            elif self.uniform:
                self.add_bins(y, p, w)
            else:
                self.add_value(y, p, w)
        return 0

    cdef int add_tracked(self, double y, double p, double w) except -1:
        """ECE with a window: :meth:`add_bins` / :meth:`add_value` (the same sums, in
        the same operations), with the bounds on their residues."""
        cdef Py_ssize_t b
        cdef list entry
        cdef double e
        self.wres += add_err(&self.weight, w)
        self.n += 1
        if self.uniform:
            b = uniform_bin(p, self.n_bins, self.edges)
            self.br[b] += (add_err(&self.bw[b], w) + add_err(&self.by[b], w * y)
                           + add_err(&self.bp[b], w * p))
            self.bn[b] += 1
            return 0
        entry = self.values.get(p)
        if entry is None:
            self.values[p] = [w, w * y, 1]
            return 0
        e = self.track_entry(entry, w, w * y)
        entry[2] = entry[2] + 1
        if e != 0.0:
            self.vres[p] = self.vres.get(p, 0.0) + e
        return 0

    cdef double track_entry(self, list entry, double w, double wy) except -1.0:
        """Add ``(w, wy)`` to a value's ``[weight, label sum, count]``; the rounding error."""
        cdef double a = entry[0], b = entry[1], e
        e = add_err(&a, w) + add_err(&b, wy)
        entry[0] = a
        entry[1] = b
        return e

    cdef int remove_tracked(self, double y, double p, double w) except -1:
        """:meth:`remove` of a window's event (``n`` left > 0): the same subtractions,
        the bounds following; a bin, value or total whose bound passes
        WINDOW_RESIDUE_MAX of its weight is summed again (:meth:`resum`)."""
        cdef Py_ssize_t b
        cdef list entry
        cdef double r
        self.wres += add_err(&self.weight, -w)
        if self.uniform:
            b = uniform_bin(p, self.n_bins, self.edges)
            self.bn[b] -= 1
            if self.bn[b] == 0:
                self.bw[b] = self.by[b] = self.bp[b] = self.br[b] = 0.0
            else:
                self.br[b] += (add_err(&self.bw[b], -w) + add_err(&self.by[b], -(w * y))
                               + add_err(&self.bp[b], -(w * p)))
                if not self.br[b] <= WINDOW_RESIDUE_MAX * self.bw[b]:
                    self.resum(b, 0.0)
        else:
            entry = self.values[p]
            entry[2] = entry[2] - 1
            if entry[2] == 0:
                del self.values[p]
                self.vres.pop(p, None)
            else:
                r = self.vres.get(p, 0.0) + self.track_entry(entry, -w, -(w * y))
                if r != 0.0:
                    self.vres[p] = r
                if not r <= WINDOW_RESIDUE_MAX * <double> entry[0]:
                    self.resum(-1, p)
        if not self.wres <= WINDOW_RESIDUE_MAX * self.weight:
            self.resum(-2, 0.0)
        return 0

    cdef int resum(self, Py_ssize_t b, double p) except -1:
        """Sum again, from the window's events (compensated, within 2**-52 each), bin
        ``b`` (``b >= 0``), forecast value ``p`` (``b == -1``) or the total weight
        (``b == -2``), and reset its bound to what that summation leaves. The window is
        read oldest first until the events counted there are all found."""
        cdef double W = 0.0, Wc = 0.0, Y = 0.0, Yc = 0.0, P = 0.0, Pc = 0.0
        cdef double ye, pe, we
        cdef long long need = self.n if b == -2 else (
            self.bn[b] if b >= 0 else <long long> self.values[p][2])
        for ye, pe, we in self.window:
            if need == 0:
                break
            if b == -2 or (b == -1 and pe == p) or (
                    b >= 0 and uniform_bin(pe, self.n_bins, self.edges) == b):
                need -= 1
                k_compensated_add(&W, &Wc, we)
                k_compensated_add(&Y, &Yc, we * ye)
                k_compensated_add(&P, &Pc, we * pe)
        W, Y, P = W + Wc, min(Y + Yc, W + Wc), min(P + Pc, W + Wc)
        if b == -2:
            self.weight, self.wres = W, W * 2.0 ** -52
        elif b == -1:
            self.values[p][0] = W
            self.values[p][1] = Y
            self.vres[p] = (W + Y) * 2.0 ** -51
        else:
            self.bw[b], self.by[b], self.bp[b] = W, Y, P
            self.br[b] = (W + Y + P) * 2.0 ** -51
        return 0

    cdef int add_each(self, const double[:] y, const double[:] p, const double[:] w) except -1:
        # Store.update_many's batch loop, here so that each add is direct; plain ECE
        # (uniform bins, no window or forgetting): add_bins's body with the total
        # weight and count in locals (the same additions in the same order)
        cdef Py_ssize_t i, b
        cdef double weight, wi, pi, yi
        cdef long long n
        if not (self.plain and self.kind == ECE_KIND):
            for i in range(y.shape[0]):
                self.add(y[i], p[i], w[i])
            return 0
        weight, n = self.weight, self.n
        for i in range(y.shape[0]):
            wi = w[i]
            if wi > 0.0:
                pi, yi = p[i], y[i]
                b = uniform_bin(pi, self.n_bins, self.edges)
                self.bw[b] += wi
                self.by[b] += wi * yi
                self.bp[b] += wi * pi
                self.bn[b] += 1
                weight += wi
                n += 1
        self.weight, self.n = weight, n

    def revert(self, double y, double p, double w):
        """Remove a validated event; False (nothing changed) if it cannot be held: no
        event in its bin (at its forecast value), or more weight, label-1 or label-0
        weight than the bin holds (:func:`cell_holds`)."""
        cdef Py_ssize_t b
        cdef list entry
        if w > 0.0:
            if self.n == 0:
                return False
            if self.uniform:
                b = uniform_bin(p, self.n_bins, self.edges)
                if self.bn[b] == 0 or not cell_holds(self.bw[b], self.by[b], y, w):
                    return False
            else:
                entry = self.values.get(p)
                if entry is None or not cell_holds(<double>entry[0], <double>entry[1], y, w):
                    return False
            self.remove(y, p, w)
        return True

    # ------------------------------------------------------------------ values

    def get(self):
        """Sharpness: ``sum_b Y_b ** 2 / W_b / W`` over non-empty bins; ECE: ``sum_b |Y_b
        - P_b| / W`` (equal-width bins); 0.0 with no event (MurphyDecomposition reads
        ``bin_lists``)."""
        cdef double total = 0.0
        cdef Py_ssize_t b
        if self.n == 0:
            return 0.0
        for b in range(self.n_bins):
            if self.kind == SHARPNESS:
                if self.bn[b]:
                    total += product_over(self.by[b], self.by[b], self.bw[b])
            else:
                total += abs(self.by[b] - self.bp[b])
        return total / self.weight

    def bin_lists(self):
        """``[weights, label sums, forecast sums, sums of w p**2, sums of w p y, counts]``."""
        cdef Py_ssize_t n = self.n_bins, b
        return [
            [self.bw[b] for b in range(n)],
            [self.by[b] for b in range(n)],
            [self.bp[b] for b in range(n)],
            [self.bpp[b] for b in range(n)],
            [self.bpy[b] for b in range(n)],
            [self.bn[b] for b in range(n)],
        ]

    def get_state(self):
        w, y, p, pp, py, k = self.bin_lists()
        if self.kind == SHARPNESS:
            return {"n": self.n, "weight": self.weight, "bins": [w, y, k]}
        if self.kind == MURPHY:
            return {"n": self.n, "weight": self.weight, "score": self.score,
                    "bins": [w, y, p, pp, py, k]}
        state = {"n": self.n, "weight": self.weight, "t": self.t, "t_ref": self.t_ref,
                 "phase": self.phase}
        if self.uniform:
            state["bins"] = [w, y, p, k]
        else:
            state["values"] = [[v, e[0], e[1], e[2]] for v, e in self.values.items()]
        if self.window is not None:
            state["window"] = [list(e) for e in self.window]
            state["residues"] = {"weight": self.wres}
            if self.uniform:
                state["residues"]["bins"] = [self.br[b] for b in range(self.n_bins)]
            else:
                state["residues"]["values"] = [[v, r] for v, r in sorted(self.vres.items())]
        return state

    def set_state(self, dict state):
        """Restore ``get_state()`` (the shell has checked the lengths)."""
        cdef Py_ssize_t b
        cdef list lists
        self.clear()
        self.set_totals(state)
        if self.kind == MURPHY:
            self.score = float(state["score"])
        if self.kind == ECE_KIND:
            self.t = int(state["t"])
            self.t_ref = int(state["t_ref"])
            self.phase = float(state["phase"])
        if self.kind != ECE_KIND or self.uniform:
            lists = list(state["bins"])
            if self.kind == SHARPNESS:
                lists = [lists[0], lists[1], None, None, None, lists[2]]
            elif self.kind == ECE_KIND:
                lists = [lists[0], lists[1], lists[2], None, None, lists[3]]
            for b in range(self.n_bins):
                self.bw[b] = float(lists[0][b])
                self.by[b] = float(lists[1][b])
                if lists[2] is not None:
                    self.bp[b] = float(lists[2][b])
                if lists[3] is not None:
                    self.bpp[b] = float(lists[3][b])
                    self.bpy[b] = float(lists[4][b])
                self.bn[b] = int(lists[5][b])
        else:
            self.values = {
                float(p): [float(w), float(y), int(k)] for p, w, y, k in state["values"]
            }
        if self.window is not None:
            self.window = deque(
                (float(y), float(p), float(w)) for y, p, w in state["window"]
            )
            # written before the bounds were kept: none (what every restore held)
            residues = state.get("residues", {})
            self.wres = float(residues.get("weight", 0.0))
            for b, r in enumerate(residues.get("bins", [])):
                self.br[b] = float(r)
            self.vres = {float(v): float(r) for v, r in residues.get("values", [])}

    def __reduce__(self):
        return (
            Binned,
            (self.owner, self.kind, self.n_bins, self.uniform, self.window_size,
             self.half_life),
            self.get_state(),
        )


def binned_update(self, y_true, y_pred, w=1.0):
    """Add one event; O(1) (plus the eviction of one event with a window). The checks
    of :mod:`streamcal._validation` run in compiled code (their messages unchanged): a
    bad event raises and changes nothing."""
    cdef Binned s = self._store
    cdef double e[3]
    check_event(y_true, y_pred, w, s.owner, e)
    if not s.weight + e[2] * s.scale() <= s.capacity:
        raise weight_overflow_error(s.owner, "update", e[2])
    s.add(e[0], e[1], e[2])


# The stores of CalibrationRefinement and ROCAUC live in _kernels_refinement.pyx and
# _kernels_ranking.pyx; pickles written before they moved name them here (PEP 562).
_MOVED = {
    "Groups": "streamcal.metrics._kernels_refinement",
    "groups_update": "streamcal.metrics._kernels_refinement",
    "Ranks": "streamcal.metrics._kernels_ranking",
    "ranks_update": "streamcal.metrics._kernels_ranking",
    "MAX_LIMBS": "streamcal.metrics._kernels_ranking",
    "SUPERBLOCK": "streamcal.metrics._kernels_ranking",
}


def __getattr__(name):
    if name in _MOVED:
        import importlib

        return getattr(importlib.import_module(_MOVED[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
