"""Compiled cores of calibeating: per-bin outcome statistics, Foster's game, the
counter-based uniform draw, and the per-event state machines of the tracking and
hedging calibeaters and of Foster's forecaster.

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

from streamcal._cvalidation cimport check_label, check_score, check_weight
from streamcal.core._newton cimport LogisticKernel

import math

import numpy as np

from streamcal._validation import weight_capacity, weight_overflow_error

# The capacity (weight rule of streamcal._validation) of a bin's outcome statistics:
# the tracking mean (ysum + prior) / (weight + prior_weight) needs weight + prior_weight
# finite, and prior_weight is at most the other half
cdef double BIN_CAPACITY = weight_capacity(2.0)

cdef uint64_t _GAMMA = 0x9E3779B97F4A7C15ULL
cdef uint64_t _MIX1 = 0xBF58476D1CE4E5B9ULL
cdef uint64_t _MIX2 = 0x94D049BB133111EBULL
_MASK64 = (1 << 64) - 1


# ---------------------------------------------------------------------- draws, bins


cdef double splitmix_uniform(uint64_t seed, uint64_t t) noexcept nogil:
    """The t-th output of SplitMix64 seeded with seed (mod 2**64), top 53 bits."""
    cdef uint64_t z = seed + (t + 1) * _GAMMA
    z = (z ^ (z >> 30)) * _MIX1
    z = (z ^ (z >> 27)) * _MIX2
    z = z ^ (z >> 31)
    return <double>(z >> 11) * 1.1102230246251565e-16  # 2 ** -53


cdef inline Py_ssize_t bin_of(double x, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i = <Py_ssize_t>(x * n)
    return n - 1 if i >= n else i


cdef inline double clip01(double p) noexcept nogil:
    # min(1.0, max(0.0, p)) as Python evaluates it
    if not (p > 0.0):
        p = 0.0
    if not (p < 1.0):
        p = 1.0
    return p


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


def _seed64(seed):
    return <uint64_t>(seed & _MASK64)


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


# ---------------------------------------------------------------------- kernels


cdef class _Expert:
    """The expert of a calibeater: the score itself (no base), a base calibrator called
    through its Python methods, or, for OnlinePlatt / OnlineBeta (a LogisticKernel
    whose ``predict_one`` / ``learn_one`` are not overridden), through its C API."""

    cdef readonly object base
    cdef LogisticKernel fast

    def __init__(self, base):
        self.base = base
        self.fast = None
        if (
            isinstance(base, LogisticKernel)
            and type(base).predict_one is LogisticKernel.predict_one
            and type(base).learn_one is LogisticKernel.learn_one
        ):
            self.fast = base

    cdef inline double c_expert(self, double s) except? -1.0:
        # the expert forecast of a validated score
        if self.fast is not None:
            return self.fast.c_predict(s)
        if self.base is None:
            return s
        return self.base.predict_one(s)

    cdef inline int c_learn(self, double s, double y, double w) except -1:
        # train the base on a validated event (raises, unchanged, if it refuses it)
        if self.fast is not None:
            return self.fast.c_learn(s, y, w)
        if self.base is not None:
            self.base.learn_one(s, y, w)
        return 0


cdef class _BinnedExpertKernel:
    """What the kernels of a calibeater over an expert's bins share: the expert (the base
    calibrator), the number of bins, the count of events, the owner's name for the
    messages, and the per-event methods over the subclass's ``c_predict`` (of the expert
    forecast) and ``c_learn``. Those are cdef methods of a non-final class, dispatched
    through the vtable as they were before this base existed; the subclasses keep their
    own ``predict_learn_many``, whose loop is not the sum of these two."""

    cdef readonly object base
    cdef _Expert expert
    cdef readonly Py_ssize_t n_bins
    cdef readonly long long n_events
    cdef str owner

    cdef double c_predict(self, double x) noexcept:
        return x

    cdef int c_learn(self, double s, double x, double y, double w) except -1:
        raise NotImplementedError

    cdef double c_held(self, double x) noexcept:
        # the weight held by the statistics an event of expert forecast x joins
        return 0.0

    cdef double c_capacity(self) noexcept:
        return BIN_CAPACITY

    cdef int c_room(self, double x, double w, str method, Py_ssize_t i) except -1:
        # the weight rule: raise (nothing changed) if the statistics cannot hold w
        if w > 0.0 and not self.c_held(x) + w <= self.c_capacity():
            raise weight_overflow_error(self.owner, method, w, f" at index {i}" if i >= 0 else "")
        return 0

    def headroom(self):
        """The weight a batch may add without any event being refused by the weight
        rule (the capacity less the heaviest statistics held); O(n_bins)."""
        cdef Py_ssize_t b
        cdef double held = 0.0
        for b in range(self.n_bins):
            held = max(held, self.c_held((b + 0.5) / self.n_bins))
        return self.c_capacity() - held

    def predict_one(self, score):
        cdef double s = check_score(score, self.owner, "predict_one")
        return self.c_predict(self.expert.c_expert(s))

    def learn_one(self, score, label, w=1.0):
        cdef double s = check_score(score, self.owner, "learn_one")
        cdef double y = check_label(label, self.owner, "learn_one")
        cdef double ww = check_weight(w, self.owner, "learn_one")
        cdef double x = self.expert.c_expert(s)
        self.c_room(x, ww, "learn_one", -1)
        self.c_learn(s, x, y, ww)

    def predict_many(self, const double[:] scores):
        cdef Py_ssize_t i, m = scores.shape[0]
        out = np.empty(m, dtype=np.float64)
        cdef double[::1] o = out
        for i in range(m):
            o[i] = self.c_predict(self.expert.c_expert(scores[i]))
        return out

    def learn_many(self, const double[:] scores, const double[:] labels, const double[:] w):
        # not atomic by itself: the shell restores its state if an event is refused
        cdef Py_ssize_t i
        cdef double x
        for i in range(scores.shape[0]):
            x = self.expert.c_expert(scores[i])
            self.c_room(x, w[i], "learn_many", i)
            self.c_learn(scores[i], x, labels[i], w[i])


cdef class TrackingKernel(_BinnedExpertKernel):
    """The per-event state machine of :class:`streamcal.TrackingCalibeater`: the
    statistics of the expert's bins (a dense :class:`BinOutcomes`), the base, the count
    of events. Built and snapshotted by the shell."""

    cdef readonly BinOutcomes stats
    cdef readonly double prior_weight

    def __init__(self, base, Py_ssize_t n_bins, double prior_weight, str owner,
                 stats=None, long long n_events=0):
        self.base = base
        self.expert = _Expert(base)
        self.n_bins = n_bins
        self.prior_weight = prior_weight
        self.owner = owner
        self.stats = BinOutcomes(n_bins) if stats is None else stats
        self.n_events = n_events

    def __reduce__(self):
        return type(self), (self.base, self.n_bins, self.prior_weight, self.owner,
                            self.stats, self.n_events)

    cdef double c_predict(self, double x) noexcept:
        return clip01(self.stats.c_mean_dense(bin_of(x, self.n_bins), x, self.prior_weight))

    cdef double c_held(self, double x) noexcept:
        cdef Py_ssize_t j = self.stats.slot_of[bin_of(x, self.n_bins)]
        return self.stats.weight[j] if j >= 0 else 0.0

    cdef int c_learn(self, double s, double x, double y, double w) except -1:
        # the base first: if it refuses the event, nothing has changed
        self.expert.c_learn(s, y, w)
        self.stats.c_add_dense(bin_of(x, self.n_bins), y, w)
        self.n_events += 1
        return 0

    def predict_learn_many(self, const double[:] scores, const double[:] labels,
                           const double[:] w):
        # the expert forecast is computed once per event: the loop's predict_one and
        # learn_one ask the unchanged base the same question
        cdef Py_ssize_t i, m = scores.shape[0]
        cdef double x
        out = np.empty(m, dtype=np.float64)
        cdef double[::1] o = out
        for i in range(m):
            x = self.expert.c_expert(scores[i])
            o[i] = self.c_predict(x)
            self.c_room(x, w[i], "predict_learn_many", i)
            self.c_learn(scores[i], x, labels[i], w[i])
        return out


cdef class HedgingKernel(_BinnedExpertKernel):
    """The per-event state machine of :class:`streamcal.HedgingCalibeater`: one
    :class:`FosterGame` per expert bin seen with a positive weight (``games``, in order
    of first arrival), the seed and count of the draws, the base."""

    cdef readonly dict games
    cdef list slots                 # slots[b]: the game of bin b, or None
    cdef readonly object seed
    cdef uint64_t seed64
    cdef object game_type
    cdef double capacity            # of the weight rule, as each game's (computed once)

    def __init__(self, base, Py_ssize_t n_bins, seed, game_type, str owner,
                 games=None, long long n_events=0):
        self.base = base
        self.expert = _Expert(base)
        self.n_bins = n_bins
        self.capacity = weight_capacity(4.0 * n_bins)
        self.seed = seed
        self.seed64 = _seed64(seed)
        self.game_type = game_type
        self.owner = owner
        self.n_events = n_events
        self.games = {}
        self.slots = [None] * n_bins
        for b, g in ({} if games is None else games).items():
            if not (0 <= b < n_bins) or not isinstance(g, FosterGame) or g.n != n_bins:
                raise ValueError(f"bin {b!r}: not a game of {n_bins} cells in a bin of [0, {n_bins})")
            if g.total_weight <= 0.0:
                raise ValueError(f"bin {b}: a game with no weight")
            self.games[b] = g
            self.slots[b] = g

    def __reduce__(self):
        return type(self), (self.base, self.n_bins, self.seed, self.game_type, self.owner,
                            self.games, self.n_events)

    cdef Py_ssize_t c_draw(self, FosterGame g) noexcept:
        cdef Py_ssize_t low, high
        cdef double p
        g.c_strategy(g.total_ysum / g.total_weight, &low, &high, &p)
        if low == high:
            return low
        return low if splitmix_uniform(self.seed64, <uint64_t>self.n_events) < p else high

    cdef double c_predict(self, double x) noexcept:
        cdef object g = self.slots[bin_of(x, self.n_bins)]
        if g is None:
            return x
        return (self.c_draw(<FosterGame>g) + 0.5) / self.n_bins

    cdef double c_held(self, double x) noexcept:
        cdef object g = self.slots[bin_of(x, self.n_bins)]
        return 0.0 if g is None else (<FosterGame>g).total_weight

    cdef double c_capacity(self) noexcept:
        # cached: calling weight_capacity (a Python function) here cost most of learn_one
        return self.capacity

    cdef int c_learn(self, double s, double x, double y, double w) except -1:
        cdef Py_ssize_t b = bin_of(x, self.n_bins), cell
        cdef object g
        self.expert.c_learn(s, y, w)  # the base first: if it refuses, nothing changed
        if w > 0.0:
            g = self.slots[b]
            if g is None:
                g = self.game_type(self.n_bins)
                self.slots[b] = g
                self.games[b] = g
                cell = b  # the first forecast of a bin was x itself, in cell b
            else:
                cell = self.c_draw(<FosterGame>g)
            (<FosterGame>g).c_play(cell, y, w)
        self.n_events += 1
        return 0

    def distribution(self, double s):
        """``(x, low, high, p_low)`` for a validated score: the expert forecast and the
        strategy of its bin's game (``low = high = -1`` when the bin has none)."""
        cdef double x = self.expert.c_expert(s)
        cdef object g = self.slots[bin_of(x, self.n_bins)]
        cdef Py_ssize_t low, high
        cdef double p
        if g is None:
            return x, -1, -1, 1.0
        (<FosterGame>g).c_strategy(
            (<FosterGame>g).total_ysum / (<FosterGame>g).total_weight, &low, &high, &p
        )
        return x, low, high, p

    def predict_learn_many(self, const double[:] scores, const double[:] labels,
                           const double[:] w):
        # predict_one and learn_one of one event draw the same cell (same state, same
        # counter): here it is drawn once
        cdef Py_ssize_t i, m = scores.shape[0], b, n = self.n_bins, cell
        cdef double x, wi
        cdef object g
        out = np.empty(m, dtype=np.float64)
        cdef double[::1] o = out
        for i in range(m):
            x = self.expert.c_expert(scores[i])
            wi = w[i]
            self.c_room(x, wi, "predict_learn_many", i)
            self.expert.c_learn(scores[i], labels[i], wi)
            b = bin_of(x, n)
            g = self.slots[b]
            if g is None:
                o[i] = x
                if wi > 0.0:
                    g = self.game_type(n)
                    self.slots[b] = g
                    self.games[b] = g
                    (<FosterGame>g).c_play(b, labels[i], wi)
            else:
                cell = self.c_draw(<FosterGame>g)
                o[i] = (cell + 0.5) / n
                (<FosterGame>g).c_play(cell, labels[i], wi)
            self.n_events += 1
        return out


cdef class FosterKernel:
    """The per-event state machine of :class:`streamcal.EpsilonCalibratedForecaster`:
    one :class:`FosterGame`, the seed and count of the draws."""

    cdef readonly FosterGame game
    cdef readonly object seed
    cdef uint64_t seed64
    cdef readonly long long n_events
    cdef str owner

    def __init__(self, FosterGame game, seed, str owner, long long n_events=0):
        self.game = game
        self.seed = seed
        self.seed64 = _seed64(seed)
        self.owner = owner
        self.n_events = n_events

    def __reduce__(self):
        return type(self), (self.game, self.seed, self.owner, self.n_events)

    cdef void c_strategy(self, Py_ssize_t* low, Py_ssize_t* high, double* p) noexcept:
        cdef FosterGame g = self.game
        cdef double prefer = g.total_ysum / g.total_weight if g.total_weight > 0.0 else 0.5
        g.c_strategy(prefer, low, high, p)

    cdef Py_ssize_t c_cell(self) noexcept:
        cdef Py_ssize_t low, high
        cdef double p
        self.c_strategy(&low, &high, &p)
        if low == high:
            return low
        return low if splitmix_uniform(self.seed64, <uint64_t>self.n_events) < p else high

    def strategy(self):
        """``(low, high, p_low)`` of the next event."""
        cdef Py_ssize_t low, high
        cdef double p
        self.c_strategy(&low, &high, &p)
        return low, high, p

    def forecast(self):
        """The forecast of the next event (the drawn cell's midpoint)."""
        return (self.c_cell() + 0.5) / self.game.n

    def predict_one(self, score):
        check_score(score, self.owner, "predict_one")
        return (self.c_cell() + 0.5) / self.game.n

    cdef int c_check_batch(self, const double[:] w, str method) except -1:
        # the weight rule over a batch, before anything changes (weights only add up)
        cdef Py_ssize_t i
        cdef double total = self.game.total_weight
        for i in range(w.shape[0]):
            total += w[i]
            if not total <= self.game.capacity:
                raise weight_overflow_error(self.owner, method, w[i], f" at index {i}")
        return 0

    def headroom(self):
        """The weight a batch may add without any event being refused (weight rule)."""
        return self.game.capacity - self.game.total_weight

    def learn_one(self, score, label, w=1.0):
        check_score(score, self.owner, "learn_one")
        cdef double y = check_label(label, self.owner, "learn_one")
        cdef double ww = check_weight(w, self.owner, "learn_one")
        if ww > 0.0:
            if not self.game.total_weight + ww <= self.game.capacity:
                raise weight_overflow_error(self.owner, "learn_one", ww)
            self.game.c_play(self.c_cell(), y, ww)
        self.n_events += 1

    def learn_many(self, const double[:] labels, const double[:] w):
        cdef Py_ssize_t i
        self.c_check_batch(w, "learn_many")
        for i in range(labels.shape[0]):
            if w[i] > 0.0:
                self.game.c_play(self.c_cell(), labels[i], w[i])
            self.n_events += 1

    def predict_learn_many(self, const double[:] labels, const double[:] w):
        cdef Py_ssize_t i, m = labels.shape[0], cell
        self.c_check_batch(w, "predict_learn_many")
        out = np.empty(m, dtype=np.float64)
        cdef double[::1] o = out
        for i in range(m):
            cell = self.c_cell()
            o[i] = (cell + 0.5) / self.game.n
            self.game.c_play(cell, labels[i], w[i])
            self.n_events += 1
        return out
