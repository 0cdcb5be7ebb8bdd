"""Compiled per-event state machines of calibeating: the tracking and hedging
calibeaters (over an expert's bins) and Foster's epsilon-calibrated forecaster, each a
kernel that the Python shells of :mod:`streamcal.calibrators.calibeating` and
:mod:`streamcal.calibrators.foster` hold as ``self._kernel``.

They run over the stores of ``_calibeating.pyx`` (``BinOutcomes``, ``FosterGame``,
cimported: their cdef methods are C calls through the stores' vtables, as when both
lived in one module) and the inline helpers of ``_calibeating.pxd``. Every float is
computed as the pure-Python version computed it (same operations, same order); the
oracles of ``tests/references_calibeating.py`` check it. Per-event inputs are validated
once, here, by :mod:`streamcal._cvalidation`, before any state changes.
"""

cimport cython
from libc.stdint cimport uint64_t

from streamcal._cvalidation cimport check_label, check_score, check_weight
from streamcal.core._calibeating cimport (
    BinOutcomes,
    FosterGame,
    bin_of,
    clip01,
    splitmix_uniform,
)
from streamcal.core._newton cimport LogisticKernel

import numpy as np

from streamcal._validation import weight_capacity, weight_overflow_error

# The capacity (weight rule of streamcal._validation) of a bin's outcome statistics:
# the tracking mean (ysum + prior) / (weight + prior_weight) needs weight + prior_weight
# finite, and prior_weight is at most the other half
cdef double BIN_CAPACITY = weight_capacity(2.0)

_MASK64 = (1 << 64) - 1


def _seed64(seed):
    return <uint64_t>(seed & _MASK64)


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

    @cython.annotation_typing(False)
    def predict_one(self, score: float) -> float:
        cdef double s = check_score(score, self.owner, "predict_one")
        return self.c_predict(self.expert.c_expert(s))

    @cython.annotation_typing(False)  # annotations for readers (inspect), not C types
    def learn_one(self, score: float, label: bool | int, w: float = 1.0) -> None:
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

    @cython.annotation_typing(False)
    def predict_one(self, score: float) -> float:
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

    @cython.annotation_typing(False)  # annotations for readers (inspect), not C types
    def learn_one(self, score: float, label: bool | int, w: float = 1.0) -> None:
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
