"""Compiled per-event state of the binary streaming metrics.

One module for the whole binary family (Brier, LogLoss, ECE, Sharpness,
MurphyDecomposition, CalibrationRefinement, ROCAUC): they share the event preamble (the
checks of ``streamcal._cvalidation``, one per argument, in the order ``y_true``,
``y_pred``, ``w``), the equal-width bin rule and the snapshot conventions, and each
store is small. The Python classes in ``_scoring.py``, ``_binned.py``,
``_refinement.py`` and ``_ranking.py`` keep the shells: parameters and their checks,
snapshots' validation, repr, docs and the values read in numpy.

Every store

- holds the state the shell used to hold, in the same snapshot format
  (``get_state()`` returns exactly what the shell's ``_get_state()`` wrote before the
  state moved here, ``set_state`` reads it back), and pickles through that state;
- adds a validated event with ``add(y, p, w)`` (labels 0.0 / 1.0, weights >= 0), in
  the same floating-point operations, in the same order, as the pure-Python update did,
  so a snapshot written by the pure-Python metrics continues bit for bit;
- runs ``update_many(y, p, w)`` over float64 arrays as one loop of ``add``, so a batch
  leaves exactly the state of a loop of ``update``.

Each store keeps its own ``update_one`` / ``update_many`` (four lines alike): the stores
are final classes, so each loop calls its own ``add`` directly (inlined where it is
``inline``), where a shared base would dispatch every event through a vtable.

The per-event ``update`` of each metric is a module-level function here, bound as the
shell class's ``update`` method (Cython functions bind like Python ones): one call from
Python, no Python frame.
"""

cimport cython
from libc.math cimport floor, frexp, ldexp, log, pow
from libc.stdint cimport uint32_t, uint64_t
from libc.string cimport memcpy, memmove, memset
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc

import math
from collections import deque

from streamcal._cvalidation cimport check_label, check_probability, check_weight
from streamcal._validation import weight_capacity, weight_overflow_error

# half-life clock of ECE (see streamcal/metrics/_binned.py)
DEF RENORM_EXPONENT = 64.0
cdef double FORGET = 2.0 ** -64

# CalibrationRefinement keeps a grid of at most this many cells in C arrays, a dict beyond
cdef Py_ssize_t DENSE_LIMIT = 1 << 16


cdef inline Py_ssize_t uniform_bin(double p, Py_ssize_t n, const double* edges) noexcept nogil:
    """Bin of ``p`` in [0, 1] among ``n`` equal-width bins, ``edges[i] <= p <
    edges[i + 1]`` (last bin closed): ``p * n`` rounds, so ``int(p * n)`` can be one
    off near an edge, and two comparisons correct it (streamcal.metrics._binned)."""
    cdef Py_ssize_t b = <Py_ssize_t>(p * n)
    if b >= n:
        return n - 1
    if p < edges[b]:
        return b - 1
    if b + 1 < n and p >= edges[b + 1]:
        return b + 1
    return b


cdef inline int check_event(object y_true, object y_pred, object w, str owner,
                            double* event) except -1:
    # the event preamble of every metric's update: label, probability, weight (in that
    # order, so the first bad argument is the one named), as C doubles in event[0..2]
    event[0] = check_label(y_true, owner, "update", "y_true")
    event[1] = check_probability(y_pred, owner, "update")
    event[2] = check_weight(w, owner, "update")
    return 0


cdef inline int check_room(double held, double w, double capacity, str owner) except -1:
    # the weight rule of streamcal._validation for one event of update
    if held + w <= capacity:
        return 0
    raise weight_overflow_error(owner, "update", w)


cdef bint batch_fits(double held, const double[:] w, double scale, double capacity) noexcept:
    # whether no event of a batch can be refused by the weight rule: the held weight
    # only grows by the (scaled) weights added, so the sum bounds it at every event
    cdef Py_ssize_t i
    cdef double total = held
    for i in range(w.shape[0]):
        total += w[i] * scale
    return total <= capacity


def update_many_atomic(store, const double[:] y, const double[:] p, const double[:] w,
                       double scale):
    """The loop of ``store.update_one`` over a validated batch under the weight rule:
    one compiled pass when no event can be refused, else event by event from a saved
    state, restored before the error (naming the index) of the first refused weight.
    ``scale`` bounds how much the store scales a weight (``2 ** 64`` under forgetting)."""
    cdef Py_ssize_t i
    if batch_fits(store.weight, w, scale, store.capacity):
        store.update_fast(y, p, w)
        return
    saved = store.get_state()
    for i in range(w.shape[0]):
        if w[i] > 0.0 and not store.weight + w[i] * scale <= store.capacity:
            store.set_state(saved)
            raise weight_overflow_error(store.owner, "update_many", w[i], f" at index {i}")
        store.update_one(y[i], p[i], w[i])


cdef double* new_doubles(Py_ssize_t n) except NULL:
    cdef double* x = <double*>PyMem_Malloc((n if n > 0 else 1) * sizeof(double))
    if x == NULL:
        raise MemoryError()
    memset(x, 0, (n if n > 0 else 1) * sizeof(double))
    return x


cdef long long* new_counts(Py_ssize_t n) except NULL:
    cdef long long* x = <long long*>PyMem_Malloc((n if n > 0 else 1) * sizeof(long long))
    if x == NULL:
        raise MemoryError()
    memset(x, 0, (n if n > 0 else 1) * sizeof(long long))
    return x


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


# ============================================================================ mean scores


@cython.final
cdef class MeanScore:
    """Weighted mean of a per-event loss: ``(p - y) ** 2`` (Brier) or the clipped log
    loss (LogLoss, ``eps > 0``). State: total weight, weighted loss sum and the count of
    positive-weight events (a revert of the last one resets the sums to exactly 0)."""

    cdef readonly str owner
    cdef readonly double eps
    cdef readonly bint log_loss
    cdef public double weight
    cdef public double total
    cdef public long long n
    cdef readonly double capacity  # of the weight rule: the loss sum is <= max loss * weight

    def __init__(self, str owner, double eps=0.0):
        self.owner = owner
        self.eps = eps
        self.log_loss = eps > 0.0
        self.capacity = weight_capacity(-log(eps) if eps > 0.0 else 1.0)

    cdef inline double neg_log(self, double y, double p) noexcept:
        cdef double eps = self.eps
        cdef double q = p if y == 1.0 else 1.0 - p
        return log(eps if q < eps else (1.0 - eps if q > 1.0 - eps else q))

    cdef inline void add(self, double y, double p, double w) noexcept:
        cdef double d
        if w > 0.0:
            self.weight += w
            if self.log_loss:
                self.total -= w * self.neg_log(y, p)
            else:
                d = p - y
                self.total += w * d * d
            self.n += 1

    def revert(self, double y, double p, double w):
        """Remove a validated event; False (nothing changed) if none is held."""
        cdef double d
        if w > 0.0:
            if self.n <= 0:
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

    def update_one(self, double y, double p, double w):
        """Add a validated event."""
        self.add(y, p, w)

    def update_many(self, const double[:] y, const double[:] p, const double[:] w):
        """Add validated arrays of events, as a loop of ``update_one``; atomic under the
        weight rule (:func:`update_many_atomic`)."""
        update_many_atomic(self, y, p, w, 1.0)

    def update_fast(self, const double[:] y, const double[:] p, const double[:] w):
        """The loop of ``update_one``, in one compiled pass (no weight check)."""
        cdef Py_ssize_t i
        for i in range(y.shape[0]):
            self.add(y[i], p[i], w[i])

    def get(self):
        return self.total / self.weight if self.weight > 0.0 else 0.0

    def get_state(self):
        return {"weight": self.weight, "total": self.total, "n": self.n}

    def set_state(self, dict state):
        self.weight = float(state["weight"])
        self.total = float(state["total"])
        self.n = int(state["n"])

    def __reduce__(self):
        return MeanScore, (self.owner, self.eps), self.get_state()

    def __setstate__(self, state):
        self.set_state(state)


def mean_score_update(self, y_true, y_pred, w=1.0):
    """Add one event; O(1). The checks of :mod:`streamcal._validation` run in compiled
    code (their messages unchanged): a bad event raises and changes nothing."""
    cdef MeanScore s = self._store
    cdef double e[3]
    check_event(y_true, y_pred, w, s.owner, e)
    check_room(s.weight, e[2], s.capacity, s.owner)
    s.add(e[0], e[1], e[2])


# ============================================================================ binned sums

DEF SHARPNESS = 0
DEF ECE_KIND = 1
DEF MURPHY = 2


@cython.final
cdef class Binned:
    """Sums per equal-width bin of the forecast, with the count of events behind each
    (a bin whose events are all reverted is exactly zero).

    ``kind`` 0 (Sharpness): weight and label sum per bin; 1 (ECE): and the forecast
    sum; 2 (MurphyDecomposition): and the sums of ``w p ** 2`` and ``w p y``, with the
    Brier sum. ECE alone may bin on equal mass (``uniform`` False: weight, label sum and
    count per distinct forecast, in the dict ``values``), keep a window of its last
    ``window_size`` positive-weight events (``window``, a deque of ``(y, p, w)``) or
    forget exponentially (``half_life``; the clock ``t``, ``t_ref``, ``phase``).
    """

    cdef readonly str owner
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
    cdef public long long n
    cdef public double weight
    cdef public double score
    cdef public dict values
    cdef public object window
    cdef public long long t
    cdef public long long t_ref
    cdef public double phase
    cdef readonly double capacity  # of the weight rule (streamcal._validation)

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
        self.values = {}
        self.window = deque() if window_size > 0 else None

    def __dealloc__(self):
        PyMem_Free(self.edges)
        PyMem_Free(self.bw)
        PyMem_Free(self.by)
        PyMem_Free(self.bp)
        PyMem_Free(self.bpp)
        PyMem_Free(self.bpy)
        PyMem_Free(self.bn)

    cdef void clear(self):
        """Back to exactly empty (the clock of half_life is kept)."""
        cdef size_t size = self.n_bins * sizeof(double)
        memset(self.bw, 0, size)
        memset(self.by, 0, size)
        memset(self.bp, 0, size)
        memset(self.bpp, 0, size)
        memset(self.bpy, 0, size)
        memset(self.bn, 0, self.n_bins * sizeof(long long))
        self.n = 0
        self.weight = 0.0
        self.score = 0.0
        self.values = {}

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
        cdef double e = <double>(self.t - self.t_ref) / self.half_life + self.phase
        if e >= RENORM_EXPONENT:
            self.renormalise(e)
            e = self.phase
        self.t += 1
        return pow(2.0, e)

    cdef int renormalise(self, double e) except -1:
        """Rescale the stored weights by an exact power of two (every 64 half-lives)
        and drop what weighs less than ``2 ** -64`` of the total."""
        cdef double shift = -floor(e)
        cdef int k = <int>shift if shift > -100000.0 else -100000  # ldexp saturates far before
        cdef double total, cut, w
        cdef Py_ssize_t b
        cdef dict kept
        self.phase = e + shift
        self.t_ref = self.t
        total = ldexp(self.weight, k)
        cut = total * FORGET
        if self.uniform:
            for b in range(self.n_bins):
                if self.bn[b] and ldexp(self.bw[b], k) < cut:
                    self.bw[b] = self.by[b] = self.bp[b] = 0.0
                    self.n -= self.bn[b]
                    self.bn[b] = 0
                self.bw[b] = ldexp(self.bw[b], k)
                self.by[b] = ldexp(self.by[b], k)
                self.bp[b] = ldexp(self.bp[b], k)
            self.weight = math.fsum([self.bw[b] for b in range(self.n_bins)])
        else:
            kept = {}
            for p, entry in self.values.items():
                w = ldexp(<double>entry[0], k)
                if w < cut:
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
            if self.uniform:
                self.add_bins(y, p, w)
            else:
                self.add_value(y, p, w)
            if self.window is not None:
                self.window.append((y, p, w))
                if len(self.window) > self.window_size:
                    y, p, w = self.window.popleft()
                    self.remove(y, p, w)
        return 0

    def revert(self, double y, double p, double w):
        """Remove a validated event; False (nothing changed) if it cannot be held."""
        if w > 0.0:
            if self.n == 0 or (not self.uniform and p not in self.values):
                return False
            self.remove(y, p, w)
        return True

    def update_one(self, double y, double p, double w):
        """Add a validated event."""
        self.add(y, p, w)

    def update_many(self, const double[:] y, const double[:] p, const double[:] w):
        """Add validated arrays of events, as a loop of ``update_one``; atomic under the
        weight rule (:func:`update_many_atomic`)."""
        update_many_atomic(self, y, p, w, self.scale())

    def update_fast(self, const double[:] y, const double[:] p, const double[:] w):
        """The loop of ``update_one``, in one compiled pass (no weight check)."""
        cdef Py_ssize_t i
        for i in range(y.shape[0]):
            self.add(y[i], p[i], w[i])

    # ------------------------------------------------------------------ values

    def sharpness(self):
        """``sum_b Y_b ** 2 / W_b / W`` over non-empty bins."""
        cdef double total = 0.0
        cdef Py_ssize_t b
        if self.n == 0:
            return 0.0
        for b in range(self.n_bins):
            if self.bn[b]:
                total += self.by[b] * self.by[b] / self.bw[b]
        return total / self.weight

    def ece(self):
        """``sum_b |Y_b - P_b| / W`` (equal-width bins)."""
        cdef double total = 0.0
        cdef Py_ssize_t b
        if self.n == 0:
            return 0.0
        for b in range(self.n_bins):
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
        return state

    def set_state(self, dict state):
        """Restore ``get_state()`` (the shell has checked the lengths)."""
        cdef Py_ssize_t b
        cdef list lists
        self.clear()
        self.n = int(state["n"])
        self.weight = float(state["weight"])
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

    def __reduce__(self):
        return (
            Binned,
            (self.owner, self.kind, self.n_bins, self.uniform, self.window_size,
             self.half_life),
            self.get_state(),
        )

    def __setstate__(self, state):
        self.set_state(state)


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


# ============================================================================ Foster-Hart


@cython.final
cdef class Groups:
    """Per distinct (pooled) forecast: weight, weighted label sum and count, with the
    running sums of the Foster-Hart decomposition (streamcal.metrics._refinement).

    Without a resolution the groups are a dict keyed by the forecast; with one, keyed
    by the grid index ``k = int(p / resolution + 0.5)``: C arrays over the grid when it
    has at most 65,536 cells, else a dict keyed by the int ``k``."""

    cdef readonly str owner
    cdef readonly double resolution  # 0.0: none
    cdef readonly bint dense
    cdef Py_ssize_t cells
    cdef double* gw
    cdef double* gy
    cdef long long* gk
    cdef Py_ssize_t n_groups  # non-empty cells (dense)
    cdef public dict groups
    cdef public long long n
    cdef public double weight
    cdef public double score
    cdef public double cal
    cdef public double ref
    cdef readonly double capacity

    def __cinit__(self, str owner, double resolution=0.0):
        self.owner = owner
        # of the weight rule: the refinement sums square a group's label sum
        self.capacity = weight_capacity(2.0, quadratic=True)
        self.resolution = resolution
        self.cells = 0
        if resolution > 0.0:
            self.cells = <Py_ssize_t>floor(1.0 / resolution + 0.5) + 1
        self.dense = 0 < self.cells <= DENSE_LIMIT
        n = self.cells if self.dense else 0
        self.gw = new_doubles(n)
        self.gy = new_doubles(n)
        self.gk = new_counts(n)
        self.groups = {}

    def __dealloc__(self):
        PyMem_Free(self.gw)
        PyMem_Free(self.gy)
        PyMem_Free(self.gk)

    cdef void clear(self):
        if self.dense:
            memset(self.gw, 0, self.cells * sizeof(double))
            memset(self.gy, 0, self.cells * sizeof(double))
            memset(self.gk, 0, self.cells * sizeof(long long))
        self.n_groups = 0
        self.groups = {}
        self.n = 0
        self.weight = self.score = self.cal = self.ref = 0.0

    cdef inline double snap(self, double p, Py_ssize_t* key) noexcept:
        # the grid cell of p (resolution > 0) and its pooled forecast, capped at 1
        key[0] = <Py_ssize_t>(p / self.resolution + 0.5)  # floor: the argument is >= 0
        p = key[0] * self.resolution
        return p if p <= 1.0 else 1.0

    cdef int add(self, double y, double p, double w) except -1:
        cdef Py_ssize_t key = 0
        cdef object okey
        cdef double d, wd, wy, gw, gy, e, cal, ref
        cdef list g
        if not w > 0.0:
            return 0
        if self.resolution > 0.0:
            p = self.snap(p, &key)
        d = p - y
        wd = w * d
        self.score += wd * d
        self.weight += w
        self.n += 1
        if self.dense:
            if self.gk[key] == 0:
                wy = w * y
                self.gw[key] = w
                self.gy[key] = wy
                self.gk[key] = 1
                self.n_groups += 1
                self.cal += wd * d
                self.ref += wy - wy * wy / w
                return 0
            gw = self.gw[key]
            gy = self.gy[key]
        else:
            okey = key if self.resolution > 0.0 else p
            g = self.groups.get(okey)
            if g is None:
                wy = w * y
                self.groups[okey] = [w, wy, 1]
                self.cal += wd * d
                self.ref += wy - wy * wy / w
                return 0
            gw = g[0]
            gy = g[1]
        e = p * gw - gy
        cal = e * e / gw
        ref = gy * gy / gw  # Y (W - Y) / W = Y - Y ** 2 / W
        gw += w
        gy += w * y
        if self.dense:
            self.gw[key] = gw
            self.gy[key] = gy
            self.gk[key] += 1
        else:
            g[0] = gw
            g[1] = gy
            g[2] = g[2] + 1
        e += wd
        self.cal += e * e / gw - cal
        self.ref += w * y + ref - gy * gy / gw
        return 0

    def revert(self, double y, double p, double w):
        """Remove a validated event; False (nothing changed) if it is not held."""
        cdef Py_ssize_t key = 0
        cdef object okey = None
        cdef list g = None
        cdef double d, gw, gy, e, cal, ref
        cdef long long k
        if not w > 0.0:
            return True
        if self.resolution > 0.0:
            p = self.snap(p, &key)
        if self.dense:
            if self.gk[key] == 0:
                return False
            gw, gy, k = self.gw[key], self.gy[key], self.gk[key]
        else:
            okey = key if self.resolution > 0.0 else p
            g = self.groups.get(okey)
            if g is None:
                return False
            gw, gy, k = g[0], g[1], g[2]
        self.n -= 1
        if self.n <= 0:  # back to exactly empty
            self.clear()
            return True
        d = p - y
        self.score -= w * d * d
        self.weight -= w
        e = p * gw - gy
        cal = e * e / gw
        ref = gy * (gw - gy) / gw
        if k == 1:
            if self.dense:
                self.gw[key] = self.gy[key] = 0.0
                self.gk[key] = 0
                self.n_groups -= 1
            else:
                del self.groups[okey]
            self.cal -= cal
            self.ref -= ref
            return True
        gw -= w
        gy -= w * y
        if self.dense:
            self.gw[key] = gw
            self.gy[key] = gy
            self.gk[key] = k - 1
        else:
            g[0] = gw
            g[1] = gy
            g[2] = k - 1
        e = p * gw - gy
        self.cal += e * e / gw - cal
        self.ref += gy * (gw - gy) / gw - ref
        return True

    def update_one(self, double y, double p, double w):
        """Add a validated event."""
        self.add(y, p, w)

    def update_many(self, const double[:] y, const double[:] p, const double[:] w):
        """Add validated arrays of events, as a loop of ``update_one``; atomic under the
        weight rule (:func:`update_many_atomic`)."""
        update_many_atomic(self, y, p, w, 1.0)

    def update_fast(self, const double[:] y, const double[:] p, const double[:] w):
        """The loop of ``update_one``, in one compiled pass (no weight check)."""
        cdef Py_ssize_t i
        for i in range(y.shape[0]):
            self.add(y[i], p[i], w[i])

    def group_list(self):
        """``[[key, weight, label sum, count], ...]``: grid cells in increasing order,
        dict groups in insertion order."""
        cdef Py_ssize_t key
        if self.dense:
            return [
                [key, self.gw[key], self.gy[key], self.gk[key]]
                for key in range(self.cells)
                if self.gk[key]
            ]
        return [[k, g[0], g[1], g[2]] for k, g in self.groups.items()]

    def get_state(self):
        return {
            "n": self.n,
            "weight": self.weight,
            "score": self.score,
            "calibration": self.cal,
            "refinement": self.ref,
            "groups": self.group_list(),
        }

    def set_state(self, dict state):
        """Restore ``get_state()``; grid keys outside the grid raise ValueError."""
        cdef Py_ssize_t key
        cdef list groups = [list(g) for g in state["groups"]]
        self.clear()
        if self.dense:
            for g in groups:
                key = int(g[0])
                if not 0 <= key < self.cells or self.gk[key]:
                    self.clear()
                    raise ValueError(
                        f"The 'groups' state of {self.owner} must hold distinct grid "
                        f"keys in [0, {self.cells - 1}]. Got {g[0]!r} instead."
                    )
                self.gw[key] = float(g[1])
                self.gy[key] = float(g[2])
                self.gk[key] = int(g[3])
                self.n_groups += 1
        else:
            cast = int if self.resolution > 0.0 else float
            self.groups = {cast(g[0]): [float(g[1]), float(g[2]), int(g[3])] for g in groups}
        self.n = int(state["n"])
        self.weight = float(state["weight"])
        self.score = float(state["score"])
        self.cal = float(state["calibration"])
        self.ref = float(state["refinement"])

    def __reduce__(self):
        return Groups, (self.owner, self.resolution), self.get_state()

    def __setstate__(self, state):
        self.set_state(state)


def groups_update(self, y_true, y_pred, w=1.0):
    """Add one event; O(1). The checks of :mod:`streamcal._validation` run in compiled
    code (their messages unchanged): a bad event raises and changes nothing."""
    cdef Groups s = self._store
    cdef double e[3]
    check_event(y_true, y_pred, w, s.owner, e)
    check_room(s.weight, e[2], s.capacity, s.owner)
    s.add(e[0], e[1], e[2])


# ============================================================================ ROC AUC

# Exact weights. Every finite double is an integer multiple of 2**-1074, so a weight
# ``w = M 2**e`` (``M`` an integer < 2**53) is, at the store's scale ``2**s`` (``s`` a
# multiple of 32, ``s <= e``), the integer ``M 2**(e - s)``. The store keeps every sum
# of weights (per score, per block, per superblock, per class) as such an integer of
# ``L`` 32-bit limbs, and the Mann-Whitney numerator doubled, ``U2 = sum w_i (2 W_below
# + W_at)``, at scale ``2**(2 s)`` in ``2 L + 1`` limbs: additions, subtractions and
# products are exact, so the state after any sequence of updates and reverts is the
# state of the events held, whatever their order or history (reverts are exact), and
# nothing underflows or overflows. ``s`` and ``L`` adapt to the weights held: a weight
# below the scale or a class total near ``2**(32 L - 1)`` widens the store (a rebuild,
# O(m L), at most once per 32 bits of range gained); an emptied store starts afresh
# at the range of its next weight. Limbs are 32 bits with 64-bit products, so the code
# is plain C (no 128-bit integers).
ctypedef uint32_t limb

# Limbs per sum at most: 2**-1088 ... 2**(1024 + 63 + 32) spans 2,207 bits, 69 limbs, so
# any finite weights and up to 2**63 events fit; the shell may set a lower cap.
DEF MAXL = 72


cdef inline Py_ssize_t floor32(Py_ssize_t e) noexcept nogil:
    cdef Py_ssize_t r = e % 32
    if r < 0:
        r += 32
    return e - r


cdef inline uint64_t weight_parts(double w, Py_ssize_t* e, int* x) noexcept nogil:
    """``w = m 2**e`` with ``m`` an integer < 2**53 and ``e >= -1074`` (the exponent of
    the smallest subnormal: a subnormal's mantissa is shifted down to it, exactly, since
    its low bits are 0), and ``w < 2**x``; returns ``m``. Without the floor a subnormal
    ``w`` would give ``e`` down to ``-1126`` and a scale below the snapshot's range."""
    cdef uint64_t m = <uint64_t>ldexp(frexp(w, x), 53)
    cdef Py_ssize_t ee = x[0] - 53
    if ee < -1074:
        m >>= (-1074 - ee)
        ee = -1074
    e[0] = ee
    return m


cdef inline void big_add(limb* dst, const limb* src, Py_ssize_t n) noexcept nogil:
    """``dst += src`` (``n`` limbs each, modulo ``2**(32 n)``)."""
    cdef uint64_t c = 0
    cdef Py_ssize_t k
    for k in range(n):
        c += <uint64_t>dst[k] + src[k]
        dst[k] = <limb>c
        c >>= 32


cdef inline void big_sub(limb* dst, const limb* src, Py_ssize_t n) noexcept nogil:
    """``dst -= src`` (``n`` limbs each, modulo ``2**(32 n)``)."""
    cdef uint64_t b = 0, x
    cdef Py_ssize_t k
    for k in range(n):
        x = <uint64_t>dst[k] - src[k] - b
        dst[k] = <limb>x
        b = x >> 63


cdef inline bint big_is_zero(const limb* x, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(n):
        if x[k]:
            return False
    return True


cdef inline int big_cmp(const limb* a, const limb* b, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(n - 1, -1, -1):
        if a[k] != b[k]:
            return 1 if a[k] > b[k] else -1
    return 0


cdef inline void big_mul(limb* out, const limb* a, Py_ssize_t na, const limb* b,
                         Py_ssize_t nb) noexcept nogil:
    """``out = a * b`` (``na + nb`` limbs), schoolbook; zero limbs of ``a`` skipped."""
    cdef Py_ssize_t i, j
    cdef uint64_t c
    memset(out, 0, (na + nb) * sizeof(limb))
    for i in range(na):
        if a[i] == 0:
            continue
        c = 0
        for j in range(nb):
            c += <uint64_t>a[i] * b[j] + out[i + j]
            out[i + j] = <limb>c
            c >>= 32
        out[i + nb] = <limb>c


cdef inline void rows_sum(limb* out, const limb* rows, Py_ssize_t lo, Py_ssize_t hi,
                          Py_ssize_t n) noexcept nogil:
    """``out = rows[lo] + ... + rows[hi - 1]`` (rows of ``n`` limbs, modulo): each limb
    position summed in 64 bits, carries resolved once (fewer than 2**32 rows)."""
    cdef uint64_t acc[MAXL]
    cdef uint64_t c = 0
    cdef Py_ssize_t k, j
    cdef const limb* row
    for j in range(n):
        acc[j] = 0
    for k in range(lo, hi):
        row = rows + k * n
        for j in range(n):
            acc[j] += row[j]
    for j in range(n):
        c += acc[j]
        out[j] = <limb>c
        c >>= 32


cdef inline void weight_units(limb* out, Py_ssize_t n, uint64_t m, Py_ssize_t shift) noexcept nogil:
    """``out = m * 2**shift`` in ``n`` limbs (``m < 2**53``, the caller checked it fits)."""
    cdef Py_ssize_t k = shift >> 5
    cdef int b = shift & 31
    cdef uint64_t x0, x1
    memset(out, 0, n * sizeof(limb))
    x0 = (m & 0xFFFFFFFFULL) << b
    x1 = ((m >> 32) << b) + (x0 >> 32)
    out[k] = <limb>x0
    if k + 1 < n:
        out[k + 1] = <limb>x1
    if k + 2 < n:
        out[k + 2] = <limb>(x1 >> 32)


cdef object big_to_int(const limb* x, Py_ssize_t n):
    """The non-negative Python int of ``n`` limbs."""
    cdef bytearray buf = bytearray(4 * n)
    cdef unsigned char* out = buf
    cdef Py_ssize_t k
    for k in range(n):
        out[4 * k] = x[k] & 0xFF
        out[4 * k + 1] = (x[k] >> 8) & 0xFF
        out[4 * k + 2] = (x[k] >> 16) & 0xFF
        out[4 * k + 3] = x[k] >> 24
    return int.from_bytes(buf, "little")


cdef int int_to_big(object v, limb* x, Py_ssize_t n) except -1:
    """Write the Python int ``0 <= v < 2**(32 n)`` into ``n`` limbs."""
    cdef bytes data = v.to_bytes(4 * n, "little")
    cdef const unsigned char* src = data
    cdef Py_ssize_t k
    for k in range(n):
        x[k] = (<limb>src[4 * k] | (<limb>src[4 * k + 1] << 8)
                | (<limb>src[4 * k + 2] << 16) | (<limb>src[4 * k + 3] << 24))
    return 0


# Superblocks: consecutive runs of SB blocks whose per-class totals are kept too, each
# recomputed from its blocks' totals whenever one changes. A sum over the blocks before
# a score then costs at most about nb / (2 SB) + SB / 2 row additions.
DEF SB = 64


cdef struct Block:
    Py_ssize_t size
    Py_ssize_t cap
    double* keys
    limb* neg_w
    limb* pos_w
    long long* neg_n
    long long* pos_n


cdef int block_alloc(Block* blk, Py_ssize_t cap, Py_ssize_t nl) except -1:
    cdef double* d = <double*>PyMem_Malloc(cap * sizeof(double))
    cdef limb* w = <limb*>PyMem_Malloc(2 * cap * nl * sizeof(limb))
    cdef long long* c = <long long*>PyMem_Malloc(2 * cap * sizeof(long long))
    if d == NULL or w == NULL or c == NULL:
        PyMem_Free(d)
        PyMem_Free(w)
        PyMem_Free(c)
        raise MemoryError()
    blk.size = 0
    blk.cap = cap
    blk.keys = d
    blk.neg_w = w
    blk.pos_w = w + cap * nl
    blk.neg_n = c
    blk.pos_n = c + cap
    return 0


cdef void block_free(Block* blk) noexcept:
    PyMem_Free(blk.keys)
    PyMem_Free(blk.neg_w)
    PyMem_Free(blk.neg_n)
    blk.keys = NULL
    blk.neg_w = NULL
    blk.neg_n = NULL


@cython.final
cdef class Ranks:
    """The distinct scores held, in sorted blocks of at most ``2 * load`` (split in two
    beyond, dropped when emptied, as sortedcontainers does), each score with its
    per-class weight and count, each block and superblock with its per-class totals,
    the class totals and the doubled Mann-Whitney numerator ``U2``
    (streamcal.metrics._ranking); every weight sum an exact integer at scale ``2**s``
    (see the comment above ``limb``)."""

    cdef readonly str owner
    cdef readonly Py_ssize_t load
    cdef readonly Py_ssize_t max_limbs
    cdef readonly Py_ssize_t scale   # s: a sum's value is its integer times 2**s
    cdef readonly Py_ssize_t limbs   # L: limbs per sum
    cdef Block* blocks
    cdef limb* block_neg
    cdef limb* block_pos
    cdef limb* sup_neg
    cdef limb* sup_pos
    cdef double* maxes
    cdef limb* w_neg_
    cdef limb* w_pos_
    cdef limb* u2
    cdef Py_ssize_t nb
    cdef Py_ssize_t nb_cap
    cdef readonly long long n_pos
    cdef readonly long long n_neg

    def __cinit__(self, str owner, Py_ssize_t load, Py_ssize_t max_limbs=MAXL):
        if not 2 <= max_limbs <= MAXL:
            raise ValueError(f"max_limbs must be in [2, {MAXL}]. Got {max_limbs} instead.")
        self.owner = owner
        self.load = load
        self.max_limbs = max_limbs
        self.nb = 0
        self.nb_cap = 0
        self.scale = 0
        self.limbs = 2
        self.alloc_totals()
        self.grow(8)

    def __dealloc__(self):
        cdef Py_ssize_t b
        if self.blocks != NULL:
            for b in range(self.nb):
                block_free(&self.blocks[b])
        PyMem_Free(self.blocks)
        PyMem_Free(self.block_neg)
        PyMem_Free(self.block_pos)
        PyMem_Free(self.sup_neg)
        PyMem_Free(self.sup_pos)
        PyMem_Free(self.maxes)
        PyMem_Free(self.w_neg_)

    cdef int alloc_totals(self) except -1:
        """The class totals and ``U2`` for the current ``limbs``, zeroed."""
        cdef Py_ssize_t nl = self.limbs
        cdef limb* x = <limb*>PyMem_Realloc(self.w_neg_, (4 * nl + 1) * sizeof(limb))
        if x == NULL:
            raise MemoryError()
        memset(x, 0, (4 * nl + 1) * sizeof(limb))
        self.w_neg_ = x
        self.w_pos_ = x + nl
        self.u2 = x + 2 * nl
        return 0

    cdef int grow(self, Py_ssize_t cap) except -1:
        """Room for ``cap`` blocks (and as many superblocks) at the current ``limbs``."""
        cdef void* x
        cdef int name
        if cap <= self.nb_cap:
            return 0
        x = PyMem_Realloc(self.blocks, cap * sizeof(Block))
        if x == NULL:
            raise MemoryError()
        self.blocks = <Block*>x
        x = PyMem_Realloc(self.maxes, cap * sizeof(double))
        if x == NULL:
            raise MemoryError()
        self.maxes = <double*>x
        for name in range(4):
            x = PyMem_Realloc(self.array(name), cap * self.limbs * sizeof(limb))
            if x == NULL:
                raise MemoryError()
            self.set_array(name, <limb*>x)
        self.nb_cap = cap
        return 0

    cdef limb* array(self, int name) noexcept:
        if name == 0:
            return self.block_neg
        if name == 1:
            return self.block_pos
        if name == 2:
            return self.sup_neg
        return self.sup_pos

    cdef void set_array(self, int name, limb* x) noexcept:
        if name == 0:
            self.block_neg = x
        elif name == 1:
            self.block_pos = x
        elif name == 2:
            self.sup_neg = x
        else:
            self.sup_pos = x

    cdef int clear(self, Py_ssize_t scale=0, Py_ssize_t limbs=2) except -1:
        """Empty the store and set its range (reallocating the per-block totals when
        ``limbs`` changes)."""
        cdef Py_ssize_t b, cap = self.nb_cap
        for b in range(self.nb):
            block_free(&self.blocks[b])
        self.nb = 0
        self.n_pos = self.n_neg = 0
        self.scale = scale
        if limbs != self.limbs:
            self.limbs = limbs
            self.nb_cap = 0
            self.grow(cap)
        self.alloc_totals()
        return 0

    # ------------------------------------------------------------------ blocks

    cdef inline limb* row(self, limb* rows, Py_ssize_t k) noexcept:
        return rows + k * self.limbs

    cdef void resum(self, Py_ssize_t j) noexcept:
        """Recompute the totals of superblock ``j`` from its blocks."""
        cdef Py_ssize_t lo = j * SB
        cdef Py_ssize_t hi = lo + SB if lo + SB < self.nb else self.nb
        rows_sum(self.row(self.sup_neg, j), self.block_neg, lo, hi, self.limbs)
        rows_sum(self.row(self.sup_pos, j), self.block_pos, lo, hi, self.limbs)

    cdef void resum_from(self, Py_ssize_t b) noexcept:
        """Recompute every superblock from the one holding block ``b`` on."""
        cdef Py_ssize_t j
        for j in range(b // SB, (self.nb + SB - 1) // SB):
            self.resum(j)

    cdef inline void resum_class(self, Py_ssize_t b, bint positive) noexcept:
        cdef Py_ssize_t j = b // SB
        cdef Py_ssize_t lo = j * SB
        cdef Py_ssize_t hi = lo + SB if lo + SB < self.nb else self.nb
        if positive:
            rows_sum(self.row(self.sup_pos, j), self.block_pos, lo, hi, self.limbs)
        else:
            rows_sum(self.row(self.sup_neg, j), self.block_neg, lo, hi, self.limbs)

    cdef void prefix(self, limb* out, const limb* blocks, const limb* sup, Py_ssize_t b,
                     const limb* grand) noexcept:
        """``out`` = total of ``blocks[:b]``, each sum taken over its shorter side (the
        other side being a known total minus it: exact, the sums are integers)."""
        cdef Py_ssize_t nl = self.limbs
        cdef Py_ssize_t ns = (self.nb + SB - 1) // SB
        cdef Py_ssize_t j = b // SB
        cdef Py_ssize_t lo = j * SB
        cdef Py_ssize_t hi = lo + SB if lo + SB < self.nb else self.nb
        cdef limb part[MAXL]
        if 2 * j <= ns:
            rows_sum(out, sup, 0, j, nl)
        else:
            rows_sum(part, sup, j, ns, nl)
            memcpy(out, grand, nl * sizeof(limb))
            big_sub(out, part, nl)
        if b - lo <= hi - b:
            rows_sum(part, blocks, lo, b, nl)
            big_add(out, part, nl)
        elif j < ns:
            big_add(out, sup + j * nl, nl)
            rows_sum(part, blocks, b, hi, nl)
            big_sub(out, part, nl)

    cdef void suffix(self, limb* out, const limb* blocks, const limb* sup, Py_ssize_t b,
                     const limb* grand) noexcept:
        """``out`` = total of ``blocks[b:]``, each sum over its shorter side."""
        cdef Py_ssize_t nl = self.limbs
        cdef Py_ssize_t ns = (self.nb + SB - 1) // SB
        cdef Py_ssize_t j = b // SB
        cdef Py_ssize_t lo = j * SB
        cdef Py_ssize_t hi = lo + SB if lo + SB < self.nb else self.nb
        cdef limb part[MAXL]
        if 2 * (j + 1) >= ns:
            rows_sum(out, sup, j + 1, ns, nl)
        else:
            rows_sum(part, sup, 0, j + 1, nl)
            memcpy(out, grand, nl * sizeof(limb))
            big_sub(out, part, nl)
        if j >= ns:
            return
        if hi - b <= b - lo:
            rows_sum(part, blocks, b, hi, nl)
            big_add(out, part, nl)
        else:
            big_add(out, sup + j * nl, nl)
            rows_sum(part, blocks, lo, b, nl)
            big_sub(out, part, nl)

    cdef inline Py_ssize_t locate(self, double p, Py_ssize_t* i, bint* found) noexcept:
        """Block ``b`` and position ``i`` of score ``p`` (or where it would go)."""
        cdef Py_ssize_t lo = 0, hi = self.nb, mid, b
        cdef Block* blk
        while lo < hi:
            mid = (lo + hi) >> 1
            if self.maxes[mid] < p:
                lo = mid + 1
            else:
                hi = mid
        b = lo
        if b == self.nb:
            found[0] = False
            if b == 0:
                i[0] = 0
                return 0
            i[0] = self.blocks[b - 1].size
            return b - 1
        blk = &self.blocks[b]
        lo = 0
        hi = blk.size
        while lo < hi:
            mid = (lo + hi) >> 1
            if blk.keys[mid] < p:
                lo = mid + 1
            else:
                hi = mid
        i[0] = lo
        found[0] = blk.keys[lo] == p  # lo < size since p <= maxes[b]
        return b

    cdef int new_block(self, Py_ssize_t b, Py_ssize_t size) except -1:
        """Insert an empty block (room for ``size`` keys and more) at position ``b``."""
        cdef Py_ssize_t cap = 2 * self.load + 1
        cdef Py_ssize_t tail = self.nb - b
        cdef Py_ssize_t nl = self.limbs
        if size + 1 > cap:
            cap = size + 1
        if self.nb == self.nb_cap:
            self.grow(2 * self.nb_cap)
        memmove(&self.blocks[b + 1], &self.blocks[b], tail * sizeof(Block))
        memmove(self.block_neg + (b + 1) * nl, self.block_neg + b * nl, tail * nl * sizeof(limb))
        memmove(self.block_pos + (b + 1) * nl, self.block_pos + b * nl, tail * nl * sizeof(limb))
        memmove(&self.maxes[b + 1], &self.maxes[b], tail * sizeof(double))
        self.blocks[b].keys = NULL
        self.blocks[b].neg_w = NULL
        self.blocks[b].neg_n = NULL
        self.nb += 1
        try:
            block_alloc(&self.blocks[b], cap, nl)
        except MemoryError:
            self.drop_block(b)
            raise
        memset(self.block_neg + b * nl, 0, nl * sizeof(limb))
        memset(self.block_pos + b * nl, 0, nl * sizeof(limb))
        return 0

    cdef void drop_block(self, Py_ssize_t b) noexcept:
        cdef Py_ssize_t tail = self.nb - b - 1
        cdef Py_ssize_t nl = self.limbs
        block_free(&self.blocks[b])
        memmove(&self.blocks[b], &self.blocks[b + 1], tail * sizeof(Block))
        memmove(self.block_neg + b * nl, self.block_neg + (b + 1) * nl, tail * nl * sizeof(limb))
        memmove(self.block_pos + b * nl, self.block_pos + (b + 1) * nl, tail * nl * sizeof(limb))
        memmove(&self.maxes[b], &self.maxes[b + 1], tail * sizeof(double))
        self.nb -= 1

    cdef int insert(self, Py_ssize_t b, Py_ssize_t i, double p) except -1:
        """Insert the new score ``p`` at position ``i`` of block ``b``."""
        cdef Block* blk
        cdef Py_ssize_t tail
        cdef Py_ssize_t nl = self.limbs
        if self.nb == 0:
            self.new_block(0, 1)
            self.resum_from(0)
        blk = &self.blocks[b]
        tail = blk.size - i
        memmove(&blk.keys[i + 1], &blk.keys[i], tail * sizeof(double))
        memmove(blk.neg_w + (i + 1) * nl, blk.neg_w + i * nl, tail * nl * sizeof(limb))
        memmove(blk.pos_w + (i + 1) * nl, blk.pos_w + i * nl, tail * nl * sizeof(limb))
        memmove(&blk.neg_n[i + 1], &blk.neg_n[i], tail * sizeof(long long))
        memmove(&blk.pos_n[i + 1], &blk.pos_n[i], tail * sizeof(long long))
        blk.keys[i] = p
        memset(blk.neg_w + i * nl, 0, nl * sizeof(limb))
        memset(blk.pos_w + i * nl, 0, nl * sizeof(limb))
        blk.neg_n[i] = blk.pos_n[i] = 0
        blk.size += 1
        self.maxes[b] = blk.keys[blk.size - 1]
        return 0

    cdef int split_if_full(self, Py_ssize_t b) except -1:
        cdef Block* blk = &self.blocks[b]
        cdef Block* new
        cdef Py_ssize_t load = self.load, m
        cdef Py_ssize_t nl = self.limbs
        if blk.size <= 2 * load:
            return 0
        m = blk.size - load
        self.new_block(b + 1, m)
        blk = &self.blocks[b]  # the array may have moved
        new = &self.blocks[b + 1]
        memmove(new.keys, &blk.keys[load], m * sizeof(double))
        memmove(new.neg_w, blk.neg_w + load * nl, m * nl * sizeof(limb))
        memmove(new.pos_w, blk.pos_w + load * nl, m * nl * sizeof(limb))
        memmove(new.neg_n, &blk.neg_n[load], m * sizeof(long long))
        memmove(new.pos_n, &blk.pos_n[load], m * sizeof(long long))
        new.size = m
        blk.size = load
        self.maxes[b] = blk.keys[load - 1]
        self.maxes[b + 1] = new.keys[m - 1]
        rows_sum(self.row(self.block_neg, b), blk.neg_w, 0, load, nl)
        rows_sum(self.row(self.block_pos, b), blk.pos_w, 0, load, nl)
        rows_sum(self.row(self.block_neg, b + 1), new.neg_w, 0, m, nl)
        rows_sum(self.row(self.block_pos, b + 1), new.pos_w, 0, m, nl)
        self.resum_from(b)
        return 0

    cdef void delete(self, Py_ssize_t b, Py_ssize_t i) noexcept:
        """Delete the score at position ``i`` of block ``b`` (it holds no event)."""
        cdef Block* blk = &self.blocks[b]
        cdef Py_ssize_t tail = blk.size - i - 1
        cdef Py_ssize_t nl = self.limbs
        if blk.size == 1:
            self.drop_block(b)
            self.resum_from(b)
            return
        memmove(&blk.keys[i], &blk.keys[i + 1], tail * sizeof(double))
        memmove(blk.neg_w + i * nl, blk.neg_w + (i + 1) * nl, tail * nl * sizeof(limb))
        memmove(blk.pos_w + i * nl, blk.pos_w + (i + 1) * nl, tail * nl * sizeof(limb))
        memmove(&blk.neg_n[i], &blk.neg_n[i + 1], tail * sizeof(long long))
        memmove(&blk.pos_n[i], &blk.pos_n[i + 1], tail * sizeof(long long))
        blk.size -= 1
        self.maxes[b] = blk.keys[blk.size - 1]

    # ------------------------------------------------------------------ events

    cdef void pairs(self, limb* out, bint positive, Py_ssize_t b, Py_ssize_t i,
                    bint found) noexcept:
        """``out`` (``L + 1`` limbs) = twice the weight of the other class below
        (``positive``) or above the score at ``(b, i)``, plus the weight at it."""
        cdef Py_ssize_t nl = self.limbs
        cdef Block* blk
        cdef limb total[MAXL]
        cdef limb part[MAXL + 1]
        cdef const limb* other
        cdef Py_ssize_t j
        memset(out, 0, (nl + 1) * sizeof(limb))
        if self.nb == 0:
            return
        blk = &self.blocks[b]
        if positive:  # negative weight below the score
            other = blk.neg_w
            self.prefix(total, self.block_neg, self.sup_neg, b, self.w_neg_)
            if 2 * i <= blk.size:
                rows_sum(part, other, 0, i, nl)
                big_add(total, part, nl)
            else:
                big_add(total, self.row(self.block_neg, b), nl)
                rows_sum(part, other, i, blk.size, nl)
                big_sub(total, part, nl)
        else:  # positive weight above the score
            other = blk.pos_w
            self.suffix(total, self.block_pos, self.sup_pos, b + 1, self.w_pos_)
            j = i + found
            if 2 * j >= blk.size:
                rows_sum(part, other, j, blk.size, nl)
                big_add(total, part, nl)
            else:
                big_add(total, self.row(self.block_pos, b), nl)
                rows_sum(part, other, 0, j, nl)
                big_sub(total, part, nl)
        memcpy(out, total, nl * sizeof(limb))
        big_add(out, out, nl + 1)  # twice (the top limb absorbs the carry)
        if found:
            memcpy(part, other + i * nl, nl * sizeof(limb))
            part[nl] = 0
            big_add(out, part, nl + 1)

    cdef void move_u2(self, uint64_t m, Py_ssize_t shift, const limb* t, bint add) noexcept:
        """``U2 += (or -=) w * t``, ``w = m 2**shift`` at scale ``2**s``, exactly."""
        cdef Py_ssize_t nl = self.limbs
        cdef limb wu[MAXL]
        cdef limb prod[2 * MAXL + 2]
        weight_units(wu, nl, m, shift)
        big_mul(prod, wu, nl, t, nl + 1)  # 2 L + 1 limbs
        if add:
            big_add(self.u2, prod, 2 * nl + 1)
        else:
            big_sub(self.u2, prod, 2 * nl + 1)

    cdef bint fits(self, uint64_t m, Py_ssize_t e, int x, bint positive) noexcept:
        """Whether a weight ``m 2**e < 2**x`` can be added at the current range: at or
        above the scale, and its class total stays below ``2**(32 L - 1)`` (then every
        partial sum, and twice it, fits in ``L + 1`` limbs)."""
        cdef Py_ssize_t nl = self.limbs
        cdef limb tmp[MAXL]
        cdef limb wu[MAXL]
        if e < self.scale or x - self.scale > 32 * nl - 2:
            return False
        weight_units(wu, nl, m, e - self.scale)
        memcpy(tmp, self.w_pos_ if positive else self.w_neg_, nl * sizeof(limb))
        big_add(tmp, wu, nl)
        return tmp[nl - 1] < 0x80000000U and big_cmp(tmp, wu, nl) >= 0

    cdef int widen(self, Py_ssize_t e, int x, double w) except -1:
        """Rebuild at a range that admits the weight ``w = m 2**e < 2**x`` (scale at
        most ``e``, 32 bits of headroom above the class total with it); ValueError
        naming ``w`` (nothing changed) beyond ``max_limbs``."""
        cdef Py_ssize_t scale = self.scale if self.n_pos + self.n_neg else e
        cdef Py_ssize_t new_scale = floor32(scale if scale < e else e)
        state = self.get_state()
        shift = self.scale - new_scale if self.n_pos + self.n_neg else 0
        big_total = max(big_to_int(self.w_pos_, self.limbs), big_to_int(self.w_neg_, self.limbs))
        bits = max((big_total << shift).bit_length(), x - new_scale) + 1 + 32
        limbs = max(2, -(-bits // 32))
        if limbs > self.max_limbs:
            raise ValueError(
                f"The 'w' argument of {self.owner}.update must be a finite weight >= 0 "
                f"whose sums with the weights held the metric can represent exactly (at "
                f"most {32 * self.max_limbs} bits from the smallest to the largest). Got "
                f"{w!r} instead."
            )
        if shift:
            for name in ("neg_w", "pos_w"):
                state[name] = [[v << shift for v in blk] for blk in state[name]]
        state["scale"] = new_scale
        self.restore(state, limbs)
        return 0

    cdef int add(self, double y, double p, double w) except -1:
        cdef Py_ssize_t b, i, e
        cdef int x
        cdef uint64_t m
        cdef bint found
        cdef bint positive
        cdef Block* blk
        cdef Py_ssize_t nl
        cdef limb t[MAXL + 1]
        cdef limb wu[MAXL]
        if not w > 0.0:
            return 0
        m = weight_parts(w, &e, &x)
        positive = y == 1.0
        if self.n_pos + self.n_neg == 0 and not self.fits(m, e, x, positive):
            # an empty store takes the range of its weight, with 32 bits of headroom
            self.clear(floor32(e), (x - floor32(e) + 33 + 31) // 32)
        while not self.fits(m, e, x, positive):
            self.widen(e, x, w)
        nl = self.limbs
        b = self.locate(p, &i, &found)
        self.pairs(t, positive, b, i, found)
        self.move_u2(m, e - self.scale, t, True)
        if not found:
            self.insert(b, i, p)
        blk = &self.blocks[b]
        weight_units(wu, nl, m, e - self.scale)
        if positive:
            big_add(blk.pos_w + i * nl, wu, nl)
            blk.pos_n[i] += 1
            big_add(self.row(self.block_pos, b), wu, nl)
            big_add(self.w_pos_, wu, nl)
            self.n_pos += 1
        else:
            big_add(blk.neg_w + i * nl, wu, nl)
            blk.neg_n[i] += 1
            big_add(self.row(self.block_neg, b), wu, nl)
            big_add(self.w_neg_, wu, nl)
            self.n_neg += 1
        if blk.size > 2 * self.load:
            self.split_if_full(b)
        else:
            self.resum_class(b, positive)
        return 0

    def revert(self, double y, double p, double w):
        """Remove a validated event; False (nothing changed) if it is not held: no event
        of that class at that score, or less weight there than ``w`` (or exactly ``w``
        with other events of that class at that score, whose weights are positive)."""
        cdef Py_ssize_t b, i, e
        cdef int x
        cdef uint64_t m
        cdef bint found
        cdef bint positive = y == 1.0
        cdef Block* blk
        cdef limb* weights
        cdef long long* counts
        cdef Py_ssize_t nl = self.limbs
        cdef limb t[MAXL + 1]
        cdef limb wu[MAXL]
        cdef int c
        if not w > 0.0:
            return True
        b = self.locate(p, &i, &found)
        if not found:
            return False
        m = weight_parts(w, &e, &x)
        if e < self.scale or x - self.scale > 32 * nl - 2:
            return False  # not a weight the sums can hold
        blk = &self.blocks[b]
        weights, counts = (blk.pos_w, blk.pos_n) if positive else (blk.neg_w, blk.neg_n)
        if counts[i] == 0:
            return False
        weight_units(wu, nl, m, e - self.scale)
        c = big_cmp(weights + i * nl, wu, nl)
        if c < 0 or (c == 0) != (counts[i] == 1):
            return False
        if self.n_pos + self.n_neg == 1:  # back to exactly empty
            self.clear(self.scale, self.limbs)
            return True
        self.pairs(t, positive, b, i, found)
        self.move_u2(m, e - self.scale, t, False)
        counts[i] -= 1
        big_sub(weights + i * nl, wu, nl)
        if positive:
            self.n_pos -= 1
            big_sub(self.row(self.block_pos, b), wu, nl)
            big_sub(self.w_pos_, wu, nl)
        else:
            self.n_neg -= 1
            big_sub(self.row(self.block_neg, b), wu, nl)
            big_sub(self.w_neg_, wu, nl)
        self.resum_class(b, positive)
        if blk.pos_n[i] + blk.neg_n[i] == 0:
            self.delete(b, i)
        return True

    def update_one(self, double y, double p, double w):
        """Add a validated event."""
        self.add(y, p, w)

    def update_many(self, const double[:] y, const double[:] p, const double[:] w):
        """Add validated arrays of events, as a loop of ``update_one``. Atomic: the
        range the whole batch needs is checked first (a bound: the batch's extreme
        weights and its length; never reached at the default ``max_limbs``), and a
        batch too wide raises ValueError naming ``w`` before anything is added."""
        cdef Py_ssize_t i, n = y.shape[0], emin = 0, imax = -1, imin = -1
        cdef int x, xmax = 0
        for i in range(n):
            if w[i] > 0.0:
                frexp(w[i], &x)
                if imax < 0 or x > xmax:
                    xmax, imax = x, i
                if imin < 0 or max(x - 53, -1074) < emin:
                    emin, imin = max(x - 53, -1074), i
        if imax >= 0:
            held = self.n_pos + self.n_neg > 0
            scale = floor32(emin if not held or emin < self.scale else self.scale)
            shift = self.scale - scale if held else 0
            total = max(self.w_pos_units, self.w_neg_units) << shift
            bits = max(total.bit_length(), xmax - scale) + n.bit_length() + 1 + 33
            if -(-bits // 32) > self.max_limbs:
                raise ValueError(
                    f"The 'w' argument of {self.owner}.update_many must hold finite "
                    f"weights >= 0 whose sums the metric can represent exactly (at most "
                    f"{32 * self.max_limbs} bits from the smallest to the largest). Got "
                    f"{w[imax]!r} and {w[imin]!r} at indices {imax} and {imin} instead."
                )
        for i in range(n):
            self.add(y[i], p[i], w[i])

    def auc(self):
        """``U2 / (2 W+ W-)`` correctly rounded (Python's int division), or 0.0 until
        both classes have positive weight."""
        if not (self.n_pos and self.n_neg):
            return 0.0
        return big_to_int(self.u2, 2 * self.limbs + 1) / (
            2 * big_to_int(self.w_pos_, self.limbs) * big_to_int(self.w_neg_, self.limbs)
        )

    # ------------------------------------------------------------------ state

    @property
    def n_blocks(self):
        return self.nb

    @property
    def u2_units(self):
        """``U2`` as an int at scale ``2**(2 s)``."""
        return big_to_int(self.u2, 2 * self.limbs + 1)

    @property
    def w_pos_units(self):
        return big_to_int(self.w_pos_, self.limbs)

    @property
    def w_neg_units(self):
        return big_to_int(self.w_neg_, self.limbs)

    def totals(self):
        """``(block_neg, block_pos, sup_neg, sup_pos)`` as lists of ints (``_check``)."""
        cdef Py_ssize_t k, nl = self.limbs, ns = (self.nb + SB - 1) // SB
        return (
            [big_to_int(self.block_neg + k * nl, nl) for k in range(self.nb)],
            [big_to_int(self.block_pos + k * nl, nl) for k in range(self.nb)],
            [big_to_int(self.sup_neg + k * nl, nl) for k in range(ns)],
            [big_to_int(self.sup_pos + k * nl, nl) for k in range(ns)],
        )

    def block_lists(self):
        """``(keys, neg_w, pos_w, neg_n, pos_n)``, each a list of per-block lists (the
        weights as ints at scale ``2**s``)."""
        cdef Py_ssize_t b, k, nl = self.limbs
        cdef Block* blk
        out = ([], [], [], [], [])
        for b in range(self.nb):
            blk = &self.blocks[b]
            out[0].append([blk.keys[k] for k in range(blk.size)])
            out[1].append([big_to_int(blk.neg_w + k * nl, nl) for k in range(blk.size)])
            out[2].append([big_to_int(blk.pos_w + k * nl, nl) for k in range(blk.size)])
            out[3].append([blk.neg_n[k] for k in range(blk.size)])
            out[4].append([blk.pos_n[k] for k in range(blk.size)])
        return out

    def get_state(self):
        keys, neg_w, pos_w, neg_n, pos_n = self.block_lists()
        return {
            "scale": self.scale,
            "keys": keys,
            "neg_w": neg_w,
            "pos_w": pos_w,
            "neg_n": neg_n,
            "pos_n": pos_n,
        }

    def set_state(self, dict state):
        """Restore ``get_state()``: the per-score weights and counts (the shell has
        checked their types and invariants); every total and ``U2`` is recomputed from
        them, exactly."""
        self.restore(state, 2)

    cdef int restore(self, dict state, Py_ssize_t min_limbs) except -1:
        cdef Py_ssize_t b, k, size, nl, j
        cdef Block* blk
        cdef limb t[MAXL + 1]
        cdef limb below[MAXL]
        cdef limb prod[2 * MAXL + 2]
        keys = state["keys"]
        neg_w, pos_w = state["neg_w"], state["pos_w"]
        neg_n, pos_n = state["neg_n"], state["pos_n"]
        totals = [sum(sum(x) for x in rows) for rows in (neg_w, pos_w)]
        bits = max(max(totals).bit_length() + 1 + 32, 64)
        nl = max(min_limbs, -(-bits // 32))
        if nl > self.max_limbs:
            raise ValueError(
                f"The weights of the {self.owner} state must span at most "
                f"{32 * self.max_limbs - 33} bits. Got {bits - 33} instead."
            )
        self.clear(int(state["scale"]), nl)
        for b in range(len(keys)):
            size = len(keys[b])
            self.new_block(b, size)
            blk = &self.blocks[b]
            for k in range(size):
                blk.keys[k] = keys[b][k]
                int_to_big(neg_w[b][k], blk.neg_w + k * nl, nl)
                int_to_big(pos_w[b][k], blk.pos_w + k * nl, nl)
                blk.neg_n[k] = neg_n[b][k]
                blk.pos_n[k] = pos_n[b][k]
                self.n_neg += blk.neg_n[k]
                self.n_pos += blk.pos_n[k]
            blk.size = size
            self.maxes[b] = blk.keys[size - 1]
            rows_sum(self.row(self.block_neg, b), blk.neg_w, 0, size, nl)
            rows_sum(self.row(self.block_pos, b), blk.pos_w, 0, size, nl)
            big_add(self.w_neg_, self.row(self.block_neg, b), nl)
            big_add(self.w_pos_, self.row(self.block_pos, b), nl)
        self.resum_from(0)
        # U2 = sum over scores of (positive weight) * (2 * negative below + negative at)
        memset(below, 0, nl * sizeof(limb))
        for b in range(self.nb):
            blk = &self.blocks[b]
            for k in range(blk.size):
                memcpy(t, below, nl * sizeof(limb))
                t[nl] = 0
                big_add(t, t, nl + 1)
                for j in range(nl):
                    prod[j] = blk.neg_w[k * nl + j]
                prod[nl] = 0
                big_add(t, prod, nl + 1)
                big_mul(prod, blk.pos_w + k * nl, nl, t, nl + 1)
                big_add(self.u2, prod, 2 * nl + 1)
                big_add(below, blk.neg_w + k * nl, nl)
        return 0

    def __reduce__(self):
        return Ranks, (self.owner, self.load, self.max_limbs), self.get_state()

    def __setstate__(self, state):
        self.set_state(state)


def ranks_update(self, y_true, y_pred, w=1.0):
    """Add one event; O(log m) comparisons plus at most about ``m / (2 SB load) + SB +
    load`` row additions of ``L`` limbs and a move of at most ``2 load`` entries, for
    ``m`` distinct scores held. The checks of :mod:`streamcal._validation` run in
    compiled code (their messages unchanged): a bad event raises and changes nothing."""
    cdef Ranks s = self._store
    cdef double e[3]
    check_event(y_true, y_pred, w, s.owner, e)
    s.add(e[0], e[1], e[2])


#: Blocks per superblock of :class:`Ranks` (for the shell's ``_check``).
SUPERBLOCK = SB
#: The most limbs a :class:`Ranks` sum may take (its ``max_limbs`` by default).
MAX_LIMBS = MAXL
