"""Compiled cores of calibeating: per-bin outcome statistics, Foster's game, the
counter-based uniform draw and exponential weights. The per-event state machines of
the tracking and hedging calibeaters and of Foster's forecaster that run over them are
in ``_calibeating_kernels.pyx``; the inline helpers both use (SplitMix64, the bin rule,
the clip) are in ``_calibeating.pxd``.

The definitions, guarantees and examples are in :mod:`streamcal.core.calibeating`
(which re-exports the public names with their documentation); the Python shells in
:mod:`streamcal.calibrators.calibeating` own the parameters, snapshots and docs. Every
float computed here is computed as the pure-Python version computed it (same
operations, same order), so the results are the same to the last bit; the oracles of
``tests/references_calibeating.py`` check it.

Per-event inputs are validated once, here, by :mod:`streamcal._cvalidation` (messages
from :mod:`streamcal._validation`), before any state changes. The batch methods take
arrays already validated by the shells' base class.
"""

from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from libc.math cimport INFINITY, exp, fabs
from libc.stdint cimport uint64_t

import math

from streamcal._validation import weight_capacity

_MASK64 = (1 << 64) - 1


# ---------------------------------------------------------------------- draws, bins


def uniform(seed, t):
    """``uniform(seed, t)`` of :mod:`streamcal.core.calibeating` (documented there)."""
    return splitmix_uniform(<uint64_t>(seed & _MASK64), <uint64_t>(t & _MASK64))


def bin_index(double x, Py_ssize_t n):
    """``bin_index(x, n)`` of :mod:`streamcal.core.calibeating` (documented there)."""
    return bin_of(x, n)


def joint_bin(tuple x, Py_ssize_t n):
    """The joint bin of the experts' forecasts ``x``: ``sum_j bin_index(x[j], n) * n**j``
    (a Python int, however many experts)."""
    cdef Py_ssize_t j, k = len(x)
    cdef long long key = 0
    for j in range(k - 1, -1, -1):
        if key > (9223372036854775807 - n) // n:  # would overflow: Python ints
            return _joint_bin_big(x, n)
        key = key * n + bin_of(<double>x[j], n)
    return key


def _joint_bin_big(tuple x, Py_ssize_t n):
    key = 0
    for v in reversed(x):
        key = key * n + bin_of(<double>v, n)
    return key


# ---------------------------------------------------------------------- BinOutcomes


def _rebuild_bins(cls, dense, rows):
    return cls.from_lists(rows, dense)


cdef class BinOutcomes:
    """Weighted outcome statistics of bins identified by integer keys (documented in
    :class:`streamcal.core.calibeating.BinOutcomes`).

    Storage: one slot per bin seen with a positive weight, in order of first arrival
    (arrays ``weight`` and ``ysum``, list ``keys``); a key in ``[0, dense)`` finds its
    slot in a C array, any other key in a dict. So the tracking calibeater (keys the
    ``n_bins`` bins, ``dense = n_bins``) never touches a Python object per event, and
    the joint bins of the multi-calibeater (keys up to ``n_bins ** n_experts``) stay
    sparse.
    """

    def __cinit__(self, Py_ssize_t dense=0):
        cdef Py_ssize_t i
        if dense < 0:
            raise ValueError(f"dense must be >= 0, got {dense}")
        self.dense = dense
        self.slot_of = <Py_ssize_t*>PyMem_Malloc((dense if dense > 0 else 1) * sizeof(Py_ssize_t))
        if self.slot_of == NULL:
            raise MemoryError()
        for i in range(dense):
            self.slot_of[i] = -1
        self.sparse = {}
        self.keys = []
        self.size = 0
        self.cap = 0
        self.weight = NULL
        self.ysum = NULL

    def __dealloc__(self):
        PyMem_Free(self.slot_of)
        PyMem_Free(self.weight)
        PyMem_Free(self.ysum)

    def __reduce__(self):
        return _rebuild_bins, (type(self), self.dense, self.to_lists())

    cdef Py_ssize_t c_slot(self, object key) except -2:
        cdef Py_ssize_t k
        if type(key) is int and 0 <= key < self.dense:
            k = key
            return self.slot_of[k]
        return self.sparse.get(key, -1)

    cdef Py_ssize_t c_new_slot(self, object key, double weight, double ysum) except -1:
        cdef Py_ssize_t j = self.size, k, cap
        cdef double* nw
        cdef double* ns
        if j == self.cap:
            cap = 8 if self.cap == 0 else 2 * self.cap
            nw = <double*>PyMem_Realloc(self.weight, cap * sizeof(double))
            if nw == NULL:
                raise MemoryError()
            self.weight = nw
            ns = <double*>PyMem_Realloc(self.ysum, cap * sizeof(double))
            if ns == NULL:
                raise MemoryError()
            self.ysum = ns
            self.cap = cap
        self.keys.append(key)
        if type(key) is int and 0 <= key < self.dense:
            k = key
            self.slot_of[k] = j
        else:
            self.sparse[key] = j
        self.weight[j] = weight
        self.ysum[j] = ysum
        self.size = j + 1
        return j

    cdef int c_add_dense(self, Py_ssize_t key, double y, double w) except -1:
        cdef Py_ssize_t j
        if w > 0.0:
            j = self.slot_of[key]
            if j < 0:
                self.c_new_slot(key, w, w * y)
            else:
                self.weight[j] += w
                self.ysum[j] += w * y
        return 0

    cdef double c_mean_dense(self, Py_ssize_t key, double prior, double prior_weight) noexcept:
        cdef Py_ssize_t j = self.slot_of[key]
        if j < 0:
            return prior
        return (self.ysum[j] + prior_weight * prior) / (self.weight[j] + prior_weight)

    # ------------------------------------------------------------------ Python API

    def add(self, key, double y, double w):
        """Add an outcome ``y`` in [0, 1] of weight ``w >= 0`` to bin ``key``; O(1)."""
        cdef Py_ssize_t j
        if w > 0.0:
            key = int(key)
            j = self.c_slot(key)
            if j < 0:
                self.c_new_slot(key, w, w * y)
            else:
                self.weight[j] += w
                self.ysum[j] += w * y

    def add_sums(self, key, double weight, double ysum):
        """Add a batch of events to bin ``key``: their total weight ``weight > 0`` and
        weighted outcome sum ``ysum``; O(1)."""
        key = int(key)
        cdef Py_ssize_t j = self.c_slot(key)
        if j < 0:
            self.c_new_slot(key, weight, ysum)
        else:
            self.weight[j] += weight
            self.ysum[j] += ysum

    def get(self, key):
        """``(weight, ysum)`` of bin ``key`` (zeros for a bin never seen); O(1)."""
        cdef Py_ssize_t j = self.c_slot(key)
        if j < 0:
            return (0.0, 0.0)
        return (self.weight[j], self.ysum[j])

    def mean(self, key, double prior, double prior_weight):
        """``(ysum + prior_weight * prior) / (weight + prior_weight)`` for bin ``key``,
        or ``prior`` for a bin never seen; O(1)."""
        cdef Py_ssize_t j = self.c_slot(key)
        if j < 0:
            return prior
        return (self.ysum[j] + prior_weight * prior) / (self.weight[j] + prior_weight)

    def __len__(self):
        return self.size

    def items(self):
        """``(key, weight, ysum)`` of every stored bin, keys increasing."""
        cdef Py_ssize_t j
        return sorted([(self.keys[j], self.weight[j], self.ysum[j]) for j in range(self.size)])

    def to_lists(self):
        """JSON-safe ``[[key, weight, ysum], ...]`` in the order the bins were first
        seen (so that a restored store is identical, order included)."""
        cdef Py_ssize_t j
        return [[self.keys[j], self.weight[j], self.ysum[j]] for j in range(self.size)]

    @classmethod
    def from_lists(cls, rows, dense=0):
        """Inverse of :meth:`to_lists` (``dense`` as in the constructor); raises a
        ValueError for a row that is not ``[int key, weight > 0, ysum in [0, weight]]``
        or a repeated key."""
        cdef BinOutcomes st = cls(dense)
        for row in rows:
            k, w, s = row
            if isinstance(k, bool) or int(k) != k:
                raise ValueError(f"bin key {k!r} is not an int")
            k = int(k)
            w = float(w)
            s = float(s)
            if not (0.0 < w < math.inf) or not (-1e-9 * w <= s <= w + 1e-9 * w):
                raise ValueError(
                    f"bin {k}: weight {w} and outcome sum {s} are not a weight > 0 "
                    "and a sum in [0, weight]"
                )
            if st.c_slot(k) >= 0:
                raise ValueError(f"bin {k} is listed twice")
            st.c_new_slot(k, w, s)
        return st

    @property
    def _bins(self):
        """``{key: [weight, ysum]}`` in order of first arrival (for inspection)."""
        cdef Py_ssize_t j
        return {self.keys[j]: [self.weight[j], self.ysum[j]] for j in range(self.size)}

    def _check(self):
        """Assert every invariant (slots, keys, weights, sums)."""
        cdef Py_ssize_t j, k
        assert len(self.keys) == self.size <= self.cap
        assert len(set(self.keys)) == self.size, "a key has two slots"
        for j in range(self.size):
            key = self.keys[j]
            w, s = self.weight[j], self.ysum[j]
            assert isinstance(key, int), f"bin key {key!r} is not an int"
            assert self.c_slot(key) == j, f"bin {key}: slot map"
            assert 0.0 < w < math.inf, f"bin {key}: weight {w}"
            tol = 1e-9 * w
            assert -tol <= s <= w + tol, f"bin {key}: ysum {s} outside [0, weight={w}]"
        for k in range(self.dense):
            j = self.slot_of[k]
            assert j == -1 or (0 <= j < self.size and self.keys[j] == k), (k, j)
        for key, j in self.sparse.items():
            assert self.keys[j] == key and not (0 <= key < self.dense), (key, j)


# ---------------------------------------------------------------------- FosterGame


def _rebuild_game(cls, data):
    return cls.from_lists(data)


cdef class FosterGame:
    """Foster's (1999) epsilon-calibrated forecaster on ``n`` cells (documented in
    :class:`streamcal.core.calibeating.FosterGame`)."""

    def __cinit__(self, Py_ssize_t n):
        cdef Py_ssize_t i
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        self.n = n
        self.w = <double*>PyMem_Malloc(n * sizeof(double))
        self.s = <double*>PyMem_Malloc(n * sizeof(double))
        if self.w == NULL or self.s == NULL:
            raise MemoryError()
        for i in range(n):
            self.w[i] = 0.0
            self.s[i] = 0.0
        self.total_weight = 0.0
        self.total_ysum = 0.0
        # the strategy scales a cell's sums by n and adds two of them: |terms| <= 4 n W
        self.capacity = weight_capacity(4.0 * n)

    def __dealloc__(self):
        PyMem_Free(self.w)
        PyMem_Free(self.s)

    def __reduce__(self):
        return _rebuild_game, (type(self), self.to_lists())

    cdef void c_strategy(self, double prefer, Py_ssize_t* low, Py_ssize_t* high,
                         double* p_low) noexcept:
        # the loop of the pure-Python version, operation for operation
        cdef Py_ssize_t n = self.n, i, best = -1, pair = -1
        cdef double nx = n * prefer  # distances in units of the cell width
        cdef double best_d = INFINITY, pair_d = INFINITY, prev_up = 0.0
        cdef double N, nS, up, down, d, up_i, down_j
        for i in range(n):
            N = self.w[i]
            nS = n * self.s[i]
            up = nS - (i + 1) * N
            down = i * N - nS
            if up <= 0.0 and down <= 0.0:
                d = fabs(i + 0.5 - nx)
                if d <= best_d:  # ties to the higher cell: the one holding prefer
                    best = i
                    best_d = d
            elif best < 0 and down > 0.0 and prev_up > 0.0:
                d = fabs(nx - i)
                if d < pair_d:
                    pair = i - 1
                    pair_d = d
            prev_up = up
        if best >= 0 or pair < 0:  # (pair < 0 only in a state that breaks the invariants)
            low[0] = best if best >= 0 else 0
            high[0] = low[0]
            p_low[0] = 1.0
            return
        i = pair
        up_i = n * self.s[i] - (i + 1) * self.w[i]
        down_j = (i + 1) * self.w[i + 1] - n * self.s[i + 1]
        low[0] = i
        high[0] = i + 1
        p_low[0] = down_j / (up_i + down_j)

    cdef void c_play(self, Py_ssize_t i, double y, double w) noexcept:
        cdef double wy
        if w > 0.0:
            self.w[i] += w
            wy = w * y
            self.s[i] += wy
            self.total_weight += w
            self.total_ysum += wy

    def _cell(self, i):
        """``i`` as a cell index, or an IndexError."""
        if not (0 <= i < self.n):
            raise IndexError(f"cell {i!r} outside [0, {self.n})")
        return i

    # ------------------------------------------------------------------ Python API

    def violations(self, i):
        """``(up_i, down_i)``, both scaled by ``n``; O(1)."""
        cdef Py_ssize_t j = self._cell(i), n = self.n
        cdef double N = self.w[j], S = self.s[j]
        return n * S - (j + 1) * N, j * N - n * S

    def calibrated(self, i):
        """Whether cell ``i`` is calibrated (never played, or ``ybar_i`` in the cell)."""
        up, down = self.violations(i)
        return up <= 0.0 and down <= 0.0

    def strategy(self, double prefer):
        """The mixed strategy for the next event: ``(low, high, p_low)``; O(n)."""
        cdef Py_ssize_t low, high
        cdef double p
        self.c_strategy(prefer, &low, &high, &p)
        return low, high, p

    def play(self, i, double y, double w=1.0):
        """Record an event (outcome ``y`` in [0, 1], weight ``w``) played on cell ``i``; O(1)."""
        self.c_play(self._cell(i), y, w)

    def midpoint(self, i):
        """``(i + 1/2) / n``."""
        return (self._cell(i) + 0.5) / self.n

    def calibration_error(self):
        """Epsilon-calibration error ``sum_i (N_i / W) * dist(ybar_i, cell i)``; O(n)."""
        cdef Py_ssize_t i, n = self.n
        cdef double total = 0.0, up, down, m
        if self.total_weight <= 0.0:
            return 0.0
        for i in range(n):
            up = n * self.s[i] - (i + 1) * self.w[i]
            down = i * self.w[i] - n * self.s[i]
            m = up
            if down > m:
                m = down
            if 0.0 > m:
                m = 0.0
            total += m
        return total / (n * self.total_weight)

    @property
    def weight(self):
        """``[N_0, ..., N_{n-1}]`` (a copy)."""
        cdef Py_ssize_t i
        return [self.w[i] for i in range(self.n)]

    @property
    def ysum(self):
        """``[S_0, ..., S_{n-1}]`` (a copy)."""
        cdef Py_ssize_t i
        return [self.s[i] for i in range(self.n)]

    def to_lists(self):
        """JSON-safe ``[weights, ysums, total_weight, total_ysum]``."""
        return [self.weight, self.ysum, self.total_weight, self.total_ysum]

    @classmethod
    def from_lists(cls, data):
        """Inverse of :meth:`to_lists`; raises a ValueError for lists of different or
        zero lengths, or a weight or sum that is not finite and >= 0."""
        cdef FosterGame g
        cdef Py_ssize_t i
        weight, ysum, tw, ts = data
        if len(weight) != len(ysum) or len(weight) < 1:
            raise ValueError(
                f"a game needs weights and sums of one length >= 1, got {len(weight)} "
                f"and {len(ysum)}"
            )
        g = cls(len(weight))
        for i in range(g.n):
            g.w[i] = float(weight[i])
            g.s[i] = float(ysum[i])
        g.total_weight = float(tw)
        g.total_ysum = float(ts)
        for v in (*g.weight, *g.ysum, g.total_weight, g.total_ysum):
            if not (0.0 <= v < math.inf):
                raise ValueError(f"a game's weights and sums must be finite and >= 0, got {v}")
        return g

    def _check(self):
        """Assert every invariant (sums, totals, the strategy's promises)."""
        n = self.n
        weight, ysum = self.weight, self.ysum
        assert n >= 1 and len(weight) == len(ysum) == n
        for i in range(n):
            N, S = weight[i], ysum[i]
            assert 0.0 <= N < math.inf, f"cell {i}: weight {N}"
            tol = 1e-9 * N
            assert -tol <= S <= N + tol, f"cell {i}: ysum {S} outside [0, {N}]"
        tw, ts = math.fsum(weight), math.fsum(ysum)
        assert abs(self.total_weight - tw) <= 1e-9 * max(1.0, tw), (self.total_weight, tw)
        assert abs(self.total_ysum - ts) <= 1e-9 * max(1.0, ts), (self.total_ysum, ts)
        low, high, p = self.strategy(0.5)
        assert 0 <= low <= high <= min(low + 1, n - 1) and 0.0 <= p <= 1.0
        if low == high:
            assert p == 1.0 and self.calibrated(low)
        else:
            assert not any(self.calibrated(i) for i in range(n)), (
                "hedged with a calibrated cell"
            )
            assert self.violations(low)[0] > 0.0 and self.violations(high)[1] > 0.0


# ---------------------------------------------------------------------- ExponentialWeights


def _rebuild_weights(cls, n, learning_rate, losses):
    ew = cls(n, learning_rate)
    ew.losses = losses
    return ew


cdef class ExponentialWeights:
    """Exponentially weighted average of ``n`` experts' forecasts under the Brier loss
    (documented in :class:`streamcal.core.calibeating.ExponentialWeights`)."""

    cdef readonly Py_ssize_t n
    cdef readonly double learning_rate
    cdef double* L

    def __cinit__(self, Py_ssize_t n, double learning_rate):
        cdef Py_ssize_t i
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        self.n = n
        self.learning_rate = learning_rate
        self.L = <double*>PyMem_Malloc(n * sizeof(double))
        if self.L == NULL:
            raise MemoryError()
        for i in range(n):
            self.L[i] = 0.0

    def __dealloc__(self):
        PyMem_Free(self.L)

    def __reduce__(self):
        return _rebuild_weights, (type(self), self.n, self.learning_rate, self.losses)

    @property
    def losses(self):
        """The cumulative losses ``[L_0, ..., L_{n-1}]`` (a copy; assign a list to set)."""
        cdef Py_ssize_t i
        return [self.L[i] for i in range(self.n)]

    @losses.setter
    def losses(self, values):
        cdef Py_ssize_t i
        values = [float(v) for v in values]
        if len(values) != self.n:
            raise ValueError(f"losses must be {self.n} numbers, got {len(values)}")
        for i in range(self.n):
            self.L[i] = values[i]

    cdef inline double c_min(self) noexcept:
        cdef Py_ssize_t i
        cdef double lo = self.L[0]
        for i in range(1, self.n):
            if self.L[i] < lo:
                lo = self.L[i]
        return lo

    def weights(self):
        """Normalised weights of the experts (summing to 1); O(n)."""
        cdef double eta = self.learning_rate, lo = self.c_min()
        cdef Py_ssize_t i
        e = [exp(-eta * (self.L[i] - lo)) for i in range(self.n)]
        tot = math.fsum(e)
        return [v / tot for v in e]

    def aggregate(self, forecasts):
        """The weighted mean of ``forecasts`` (one per expert), clipped to [0, 1]; O(n)."""
        cdef double eta = self.learning_rate, lo = self.c_min()
        cdef double num = 0.0, den = 0.0, e
        cdef Py_ssize_t i, m = min(self.n, len(forecasts))
        for i in range(m):
            e = exp(-eta * (self.L[i] - lo))
            num += e * <double>forecasts[i]
            den += e
        return clip01(num / den)

    def update(self, forecasts, double y, double w=1.0):
        """Add each expert's weighted Brier loss on outcome ``y``; O(n)."""
        cdef Py_ssize_t i, m = min(self.n, len(forecasts))
        cdef double d
        if w > 0.0:
            for i in range(m):
                d = <double>forecasts[i] - y
                self.L[i] += w * d * d

    def _check(self):
        """Assert the invariants (finite non-negative losses, weights summing to 1)."""
        assert self.n >= 1
        for v in self.losses:
            assert 0.0 <= v < math.inf, f"loss {v}"
        ws = self.weights()
        assert abs(math.fsum(ws) - 1.0) <= 1e-12 and max(ws) > 0.0


# The per-event kernels live in _calibeating_kernels.pyx; pickles written before they
# moved name them here (PEP 562).
_MOVED = ("FosterKernel", "HedgingKernel", "TrackingKernel")


def __getattr__(name):
    if name in _MOVED:
        from streamcal.core import _calibeating_kernels

        return getattr(_calibeating_kernels, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
