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
from libc.math cimport floor, ldexp, log, pow
from libc.string cimport memmove, memset
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc

import math
from collections import deque

from streamcal._cvalidation cimport check_label, check_probability, check_weight

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

    def __init__(self, str owner, double eps=0.0):
        self.owner = owner
        self.eps = eps
        self.log_loss = eps > 0.0

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
        """Remove a validated event."""
        cdef double d
        if w > 0.0:
            self.n -= 1
            if self.n <= 0:
                self.weight = self.total = 0.0
                self.n = 0
                return
            self.weight -= w
            if self.log_loss:
                self.total -= w * -self.neg_log(y, p)
            else:
                d = p - y
                self.total -= w * (d * d)

    def update_one(self, double y, double p, double w):
        """Add a validated event."""
        self.add(y, p, w)

    def update_many(self, const double[:] y, const double[:] p, const double[:] w):
        """Add validated arrays of events, as a loop of ``update_one``."""
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

    def __cinit__(self, str owner, int kind, Py_ssize_t n_bins, bint uniform=True,
                  Py_ssize_t window_size=0, double half_life=0.0):
        cdef Py_ssize_t j
        self.owner = owner
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
        """Add validated arrays of events, as a loop of ``update_one``."""
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

    def __cinit__(self, str owner, double resolution=0.0):
        self.owner = owner
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
        """Add validated arrays of events, as a loop of ``update_one``."""
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
    s.add(e[0], e[1], e[2])


# ============================================================================ ROC AUC

# Superblocks: consecutive runs of SB blocks whose per-class totals are kept too, each
# recomputed from its blocks' totals whenever one changes (a pure function of the
# blocks' totals, so a restored snapshot continues bit for bit). A sum over the blocks
# before a score then costs at most about nb / (2 SB) + SB / 2 additions.
DEF SB = 64


cdef struct Block:
    Py_ssize_t size
    Py_ssize_t cap
    double* keys
    double* neg_w
    double* pos_w
    long long* neg_n
    long long* pos_n


cdef int block_alloc(Block* blk, Py_ssize_t cap) except -1:
    cdef double* d = <double*>PyMem_Malloc(3 * cap * sizeof(double))
    cdef long long* c = <long long*>PyMem_Malloc(2 * cap * sizeof(long long))
    if d == NULL or c == NULL:
        PyMem_Free(d)
        PyMem_Free(c)
        raise MemoryError()
    blk.size = 0
    blk.cap = cap
    blk.keys = d
    blk.neg_w = d + cap
    blk.pos_w = d + 2 * cap
    blk.neg_n = c
    blk.pos_n = c + cap
    return 0


cdef void block_free(Block* blk) noexcept:
    PyMem_Free(blk.keys)
    PyMem_Free(blk.neg_n)
    blk.keys = NULL
    blk.neg_n = NULL


cdef inline double sum_of(const double* x, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """``x[lo] + ... + x[hi - 1]``, left to right (as Python's ``sum``)."""
    cdef double total = 0.0
    cdef Py_ssize_t k
    for k in range(lo, hi):
        total += x[k]
    return total


@cython.final
cdef class Ranks:
    """The distinct scores held, in sorted blocks of at most ``2 * load`` (split in two
    beyond, dropped when emptied, as sortedcontainers does), each score with its
    per-class weight and count, each block with its per-class totals, and the weighted
    Mann-Whitney numerator ``u`` with the class totals (streamcal.metrics._ranking)."""

    cdef readonly str owner
    cdef readonly Py_ssize_t load
    cdef Block* blocks
    cdef double* block_neg
    cdef double* block_pos
    cdef double* maxes
    cdef double* sup_neg
    cdef double* sup_pos
    cdef Py_ssize_t nb
    cdef Py_ssize_t nb_cap
    cdef public double u
    cdef public double w_pos
    cdef public double w_neg
    cdef public long long n_pos
    cdef public long long n_neg

    def __cinit__(self, str owner, Py_ssize_t load):
        self.owner = owner
        self.load = load
        self.nb = 0
        self.nb_cap = 0
        self.grow(8)

    def __dealloc__(self):
        cdef Py_ssize_t b
        if self.blocks != NULL:
            for b in range(self.nb):
                block_free(&self.blocks[b])
        PyMem_Free(self.blocks)
        PyMem_Free(self.block_neg)
        PyMem_Free(self.block_pos)
        PyMem_Free(self.maxes)
        PyMem_Free(self.sup_neg)
        PyMem_Free(self.sup_pos)

    cdef int grow(self, Py_ssize_t cap) except -1:
        """Room for ``cap`` blocks (and as many superblocks)."""
        cdef void* x
        cdef int name
        if cap <= self.nb_cap:
            return 0
        x = PyMem_Realloc(self.blocks, cap * sizeof(Block))
        if x == NULL:
            raise MemoryError()
        self.blocks = <Block*>x
        for name in range(5):
            x = PyMem_Realloc(self.array(name), cap * sizeof(double))
            if x == NULL:
                raise MemoryError()
            self.set_array(name, <double*>x)
        self.nb_cap = cap
        return 0

    cdef void* array(self, int name) noexcept:
        if name == 0:
            return self.block_neg
        if name == 1:
            return self.block_pos
        if name == 2:
            return self.maxes
        if name == 3:
            return self.sup_neg
        return self.sup_pos

    cdef void set_array(self, int name, double* x) noexcept:
        if name == 0:
            self.block_neg = x
        elif name == 1:
            self.block_pos = x
        elif name == 2:
            self.maxes = x
        elif name == 3:
            self.sup_neg = x
        else:
            self.sup_pos = x

    cdef void clear(self) noexcept:
        cdef Py_ssize_t b
        for b in range(self.nb):
            block_free(&self.blocks[b])
        self.nb = 0
        self.u = self.w_pos = self.w_neg = 0.0
        self.n_pos = self.n_neg = 0

    # ------------------------------------------------------------------ blocks

    cdef void resum(self, Py_ssize_t j) noexcept:
        """Recompute the totals of superblock ``j`` from its blocks."""
        cdef Py_ssize_t lo = j * SB
        cdef Py_ssize_t hi = lo + SB if lo + SB < self.nb else self.nb
        self.sup_neg[j] = sum_of(self.block_neg, lo, hi)
        self.sup_pos[j] = sum_of(self.block_pos, lo, hi)

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
            self.sup_pos[j] = sum_of(self.block_pos, lo, hi)
        else:
            self.sup_neg[j] = sum_of(self.block_neg, lo, hi)

    cdef double prefix(self, const double* blocks, const double* sup, Py_ssize_t b,
                       double grand) noexcept:
        """Total of ``blocks[:b]``, each sum taken over its shorter side."""
        cdef Py_ssize_t ns = (self.nb + SB - 1) // SB
        cdef Py_ssize_t j = b // SB
        cdef Py_ssize_t lo = j * SB
        cdef Py_ssize_t hi = lo + SB if lo + SB < self.nb else self.nb
        cdef double total
        if 2 * j <= ns:
            total = sum_of(sup, 0, j)
        else:
            total = grand - sum_of(sup, j, ns)
        if b - lo <= hi - b:
            total += sum_of(blocks, lo, b)
        else:
            total += sup[j] - sum_of(blocks, b, hi)
        return total

    cdef double suffix(self, const double* blocks, const double* sup, Py_ssize_t b,
                       double grand) noexcept:
        """Total of ``blocks[b:]``, each sum taken over its shorter side."""
        cdef Py_ssize_t ns = (self.nb + SB - 1) // SB
        cdef Py_ssize_t j = b // SB
        cdef Py_ssize_t lo = j * SB
        cdef Py_ssize_t hi = lo + SB if lo + SB < self.nb else self.nb
        cdef double total
        if 2 * (j + 1) >= ns:
            total = sum_of(sup, j + 1, ns)
        else:
            total = grand - sum_of(sup, 0, j + 1)
        if hi - b <= b - lo:
            total += sum_of(blocks, b, hi)
        else:
            total += sup[j] - sum_of(blocks, lo, b)
        return total

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
        if size + 1 > cap:
            cap = size + 1
        if self.nb == self.nb_cap:
            self.grow(2 * self.nb_cap)
        memmove(&self.blocks[b + 1], &self.blocks[b], tail * sizeof(Block))
        memmove(&self.block_neg[b + 1], &self.block_neg[b], tail * sizeof(double))
        memmove(&self.block_pos[b + 1], &self.block_pos[b], tail * sizeof(double))
        memmove(&self.maxes[b + 1], &self.maxes[b], tail * sizeof(double))
        self.blocks[b].keys = NULL
        self.blocks[b].neg_n = NULL
        self.nb += 1
        try:
            block_alloc(&self.blocks[b], cap)
        except MemoryError:
            self.drop_block(b)
            raise
        self.block_neg[b] = self.block_pos[b] = 0.0
        return 0

    cdef void drop_block(self, Py_ssize_t b) noexcept:
        cdef Py_ssize_t tail = self.nb - b - 1
        block_free(&self.blocks[b])
        memmove(&self.blocks[b], &self.blocks[b + 1], tail * sizeof(Block))
        memmove(&self.block_neg[b], &self.block_neg[b + 1], tail * sizeof(double))
        memmove(&self.block_pos[b], &self.block_pos[b + 1], tail * sizeof(double))
        memmove(&self.maxes[b], &self.maxes[b + 1], tail * sizeof(double))
        self.nb -= 1

    cdef int insert(self, Py_ssize_t b, Py_ssize_t i, double p) except -1:
        """Insert the new score ``p`` at position ``i`` of block ``b``."""
        cdef Block* blk
        cdef Py_ssize_t tail
        if self.nb == 0:
            self.new_block(0, 1)
            self.resum_from(0)
        blk = &self.blocks[b]
        tail = blk.size - i
        memmove(&blk.keys[i + 1], &blk.keys[i], tail * sizeof(double))
        memmove(&blk.neg_w[i + 1], &blk.neg_w[i], tail * sizeof(double))
        memmove(&blk.pos_w[i + 1], &blk.pos_w[i], tail * sizeof(double))
        memmove(&blk.neg_n[i + 1], &blk.neg_n[i], tail * sizeof(long long))
        memmove(&blk.pos_n[i + 1], &blk.pos_n[i], tail * sizeof(long long))
        blk.keys[i] = p
        blk.neg_w[i] = blk.pos_w[i] = 0.0
        blk.neg_n[i] = blk.pos_n[i] = 0
        blk.size += 1
        self.maxes[b] = blk.keys[blk.size - 1]
        return 0

    cdef int split_if_full(self, Py_ssize_t b) except -1:
        cdef Block* blk = &self.blocks[b]
        cdef Block* new
        cdef Py_ssize_t load = self.load, m
        if blk.size <= 2 * load:
            return 0
        m = blk.size - load
        self.new_block(b + 1, m)
        blk = &self.blocks[b]  # the array may have moved
        new = &self.blocks[b + 1]
        memmove(new.keys, &blk.keys[load], m * sizeof(double))
        memmove(new.neg_w, &blk.neg_w[load], m * sizeof(double))
        memmove(new.pos_w, &blk.pos_w[load], m * sizeof(double))
        memmove(new.neg_n, &blk.neg_n[load], m * sizeof(long long))
        memmove(new.pos_n, &blk.pos_n[load], m * sizeof(long long))
        new.size = m
        blk.size = load
        self.maxes[b] = blk.keys[load - 1]
        self.maxes[b + 1] = new.keys[m - 1]
        self.block_neg[b] = sum_of(blk.neg_w, 0, load)
        self.block_pos[b] = sum_of(blk.pos_w, 0, load)
        self.block_neg[b + 1] = sum_of(new.neg_w, 0, m)
        self.block_pos[b + 1] = sum_of(new.pos_w, 0, m)
        self.resum_from(b)
        return 0

    cdef void delete(self, Py_ssize_t b, Py_ssize_t i) noexcept:
        """Delete the score at position ``i`` of block ``b`` (it holds no event)."""
        cdef Block* blk = &self.blocks[b]
        cdef Py_ssize_t tail = blk.size - i - 1
        if blk.size == 1:
            self.drop_block(b)
            self.resum_from(b)
            return
        memmove(&blk.keys[i], &blk.keys[i + 1], tail * sizeof(double))
        memmove(&blk.neg_w[i], &blk.neg_w[i + 1], tail * sizeof(double))
        memmove(&blk.pos_w[i], &blk.pos_w[i + 1], tail * sizeof(double))
        memmove(&blk.neg_n[i], &blk.neg_n[i + 1], tail * sizeof(long long))
        memmove(&blk.pos_n[i], &blk.pos_n[i + 1], tail * sizeof(long long))
        blk.size -= 1
        self.maxes[b] = blk.keys[blk.size - 1]

    # ------------------------------------------------------------------ events

    cdef double pairs(self, bint positive, Py_ssize_t b, Py_ssize_t i, bint found) noexcept:
        """Weight of the other class below (``positive``) or above the score at
        ``(b, i)``, plus half the weight at it; each partial sum over its shorter side
        (the other side being a known total minus it)."""
        cdef Block* blk
        cdef double total
        cdef const double* other
        cdef Py_ssize_t j
        if self.nb == 0:
            return 0.0
        blk = &self.blocks[b]
        if positive:  # negative weight below the score
            other = blk.neg_w
            total = self.prefix(self.block_neg, self.sup_neg, b, self.w_neg)
            if 2 * i <= blk.size:
                total += sum_of(other, 0, i)
            else:
                total += self.block_neg[b] - sum_of(other, i, blk.size)
        else:  # positive weight above the score
            other = blk.pos_w
            total = self.suffix(self.block_pos, self.sup_pos, b + 1, self.w_pos)
            j = i + found
            if 2 * j >= blk.size:
                total += sum_of(other, j, blk.size)
            else:
                total += self.block_pos[b] - sum_of(other, 0, j)
        if found:
            total += 0.5 * other[i]
        return total

    cdef int add(self, double y, double p, double w) except -1:
        cdef Py_ssize_t b, i
        cdef bint found
        cdef bint positive
        cdef Block* blk
        if not w > 0.0:
            return 0
        b = self.locate(p, &i, &found)
        positive = y == 1.0
        self.u += w * self.pairs(positive, b, i, found)
        if not found:
            self.insert(b, i, p)
        blk = &self.blocks[b]
        if positive:
            blk.pos_w[i] += w
            blk.pos_n[i] += 1
            self.block_pos[b] += w
            self.w_pos += w
            self.n_pos += 1
        else:
            blk.neg_w[i] += w
            blk.neg_n[i] += 1
            self.block_neg[b] += w
            self.w_neg += w
            self.n_neg += 1
        if blk.size > 2 * self.load:
            self.split_if_full(b)
        else:
            self.resum_class(b, positive)
        return 0

    def revert(self, double y, double p, double w):
        """Remove a validated event; False (nothing changed) if it is not held."""
        cdef Py_ssize_t b, i
        cdef bint found
        cdef bint positive = y == 1.0
        cdef Block* blk
        cdef double* weights
        cdef long long* counts
        if not w > 0.0:
            return True
        b = self.locate(p, &i, &found)
        if not found:
            return False
        blk = &self.blocks[b]
        if (blk.pos_n if positive else blk.neg_n)[i] == 0:
            return False
        if self.n_pos + self.n_neg == 1:  # back to exactly empty
            self.clear()
            return True
        self.u -= w * self.pairs(positive, b, i, found)
        if positive:
            weights, counts = blk.pos_w, blk.pos_n
            self.n_pos -= 1
            self.w_pos = self.w_pos - w if self.n_pos else 0.0
        else:
            weights, counts = blk.neg_w, blk.neg_n
            self.n_neg -= 1
            self.w_neg = self.w_neg - w if self.n_neg else 0.0
        counts[i] -= 1
        weights[i] = weights[i] - w if counts[i] else 0.0
        if positive:
            self.block_pos[b] -= w
        else:
            self.block_neg[b] -= w
        self.resum_class(b, positive)
        if not (self.n_pos and self.n_neg):
            self.u = 0.0  # no pair left
        if blk.pos_n[i] + blk.neg_n[i] == 0:
            self.delete(b, i)
        return True

    def update_one(self, double y, double p, double w):
        """Add a validated event."""
        self.add(y, p, w)

    def update_many(self, const double[:] y, const double[:] p, const double[:] w):
        """Add validated arrays of events, as a loop of ``update_one``."""
        cdef Py_ssize_t i
        for i in range(y.shape[0]):
            self.add(y[i], p[i], w[i])

    # ------------------------------------------------------------------ state

    @property
    def n_blocks(self):
        return self.nb

    def superblock_totals(self):
        """``(negative, positive)`` lists of the superblocks' totals (for ``_check``)."""
        cdef Py_ssize_t j, ns = (self.nb + SB - 1) // SB
        return [self.sup_neg[j] for j in range(ns)], [self.sup_pos[j] for j in range(ns)]

    def block_lists(self):
        """``(keys, neg_w, pos_w, neg_n, pos_n)``, each a list of per-block lists."""
        cdef Py_ssize_t b, k
        cdef Block* blk
        out = ([], [], [], [], [])
        for b in range(self.nb):
            blk = &self.blocks[b]
            out[0].append([blk.keys[k] for k in range(blk.size)])
            out[1].append([blk.neg_w[k] for k in range(blk.size)])
            out[2].append([blk.pos_w[k] for k in range(blk.size)])
            out[3].append([blk.neg_n[k] for k in range(blk.size)])
            out[4].append([blk.pos_n[k] for k in range(blk.size)])
        return out

    def get_state(self):
        cdef Py_ssize_t b
        keys, neg_w, pos_w, neg_n, pos_n = self.block_lists()
        return {
            "u": self.u,
            "w_pos": self.w_pos,
            "w_neg": self.w_neg,
            "n_pos": self.n_pos,
            "n_neg": self.n_neg,
            "keys": keys,
            "neg_w": neg_w,
            "pos_w": pos_w,
            "neg_n": neg_n,
            "pos_n": pos_n,
            "block_neg": [self.block_neg[b] for b in range(self.nb)],
            "block_pos": [self.block_pos[b] for b in range(self.nb)],
        }

    def set_state(self, dict state):
        """Restore ``get_state()``; blocks of unequal or zero lengths raise ValueError
        (the shell has checked that the lists hold one entry per block)."""
        cdef Py_ssize_t b, k, size
        cdef Block* blk
        keys = [[float(v) for v in x] for x in state["keys"]]
        rows = [
            [[float(v) for v in x] for x in state["neg_w"]],
            [[float(v) for v in x] for x in state["pos_w"]],
            [[int(v) for v in x] for x in state["neg_n"]],
            [[int(v) for v in x] for x in state["pos_n"]],
        ]
        totals = [float(v) for v in state["block_neg"]], [float(v) for v in state["block_pos"]]
        for b in range(len(keys)):
            if len(keys[b]) == 0 or any(len(r[b]) != len(keys[b]) for r in rows):
                raise ValueError(
                    f"The blocks of the {self.owner} state must be non-empty, with one "
                    f"weight and count per score. Got block {b} of {len(keys[b])} scores instead."
                )
        self.clear()
        self.u = float(state["u"])
        self.w_pos = float(state["w_pos"])
        self.w_neg = float(state["w_neg"])
        self.n_pos = int(state["n_pos"])
        self.n_neg = int(state["n_neg"])
        for b in range(len(keys)):
            size = len(keys[b])
            self.new_block(b, size)
            blk = &self.blocks[b]
            for k in range(size):
                blk.keys[k] = keys[b][k]
                blk.neg_w[k] = rows[0][b][k]
                blk.pos_w[k] = rows[1][b][k]
                blk.neg_n[k] = rows[2][b][k]
                blk.pos_n[k] = rows[3][b][k]
            blk.size = size
            self.maxes[b] = blk.keys[size - 1]
            self.block_neg[b] = totals[0][b]
            self.block_pos[b] = totals[1][b]
        self.resum_from(0)

    def __reduce__(self):
        return Ranks, (self.owner, self.load), self.get_state()

    def __setstate__(self, state):
        self.set_state(state)


def ranks_update(self, y_true, y_pred, w=1.0):
    """Add one event; O(log m) comparisons plus at most about ``m / (2 SB load) + SB +
    load`` additions and a move of at most ``2 load`` entries, for ``m`` distinct scores
    held. The checks of :mod:`streamcal._validation` run in compiled code (their
    messages unchanged): a bad event raises and changes nothing."""
    cdef Ranks s = self._store
    cdef double e[3]
    check_event(y_true, y_pred, w, s.owner, e)
    s.add(e[0], e[1], e[2])


#: Blocks per superblock of :class:`Ranks` (for the shell's ``_check``).
SUPERBLOCK = SB
