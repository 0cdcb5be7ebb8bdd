"""Running histogram binning: fixed or uniform-mass bins, with exact per-bin means.

The binner partitions [0, 1] into ``B`` bins by edges ``0 = e_0 <= e_1 <= ... <= e_B = 1``
and predicts, for a score in bin ``k``, the weighted mean label of the events learnt in
that bin (over the whole stream, or over the last ``window_size`` events).

Bin rule (the one rule shared by :meth:`HistogramBinner.predict`, learning and the
oracle of the tests). A score ``s`` lies in bin ``k`` = the number of inner edges
``e_1, ..., e_{B-1}`` that are ``<= s`` (``bisect_right``). So bins are left-closed,
``[e_k, e_{k+1})``, the last one is ``[e_{B-1}, 1]`` (``s = 1`` is in bin ``B - 1``), a
score exactly on an edge goes to the bin above it, and a bin between two equal edges
(duplicate quantiles, from ties) is empty and never receives a score. This is the
rule of :func:`streamcal.core.bins.edge_bins`; the per-event paths here keep their
``bisect_right`` on the inner edges.

Edges (their one home is :mod:`streamcal.core.bins`, re-exported here).

- ``"uniform"``: ``e_j = j / B`` (floating-point division, correctly rounded;
  :func:`~streamcal.core.bins.uniform_edges`).
- ``"quantile"`` (:func:`~streamcal.core.bins.quantile_edges`): the edges of Algorithm 1
  of Gupta and Ramdas (2021) (thesis of Gupta, 2022, section 1.3): from a calibration set of ``n`` scores with order statistics
  ``S_(1) <= ... <= S_(n)`` and ``S_(n+1) = 1``, ``e_j = S_(ceil(j (n+1) / B))`` for
  ``j = 1 .. B-1`` (integer arithmetic, so no rounding). Each bin then holds about ``n/B``
  of the calibration scores (uniform mass). Edges stay frozen within an *epoch* and are
  recomputed at its end; see :class:`HistogramBinner` for the epoch rule.

Exactness. Per bin the binner keeps the total weight ``W`` and the weighted label sum
``S`` as Python integers counting units of ``2**-E``, where ``E`` is the largest number of
binary fraction digits of any weight seen so far (0 for integer weights; it only grows,
and when it does every stored sum is shifted left, exactly). Adding and removing events
is therefore exact: there is no drift, with or without a window. Each bin's estimate is
``(S + a m) / (W + a)`` computed as the quotient of two exact integers, which Python
rounds correctly: the estimate is the exact rational value rounded once to the nearest
float. With unit weights and no prior this is ``count(y = 1) / count``, bit for bit the
value of ``numpy.mean`` of the bin's labels.

Storage of the stream (``"quantile"`` without a window). To re-bin the stream when the
edges move, :class:`ScoreCells` keeps it aggregated by distinct score: memory O(distinct
scores). New events are first appended to a short pending list and merged into the
sorted cells in numpy batches (when the list reaches the number of cells, at least 2048,
and at each epoch boundary), so the per-event cost is one append.

Cost per event: O(log B) (a ``bisect`` on the inner edges plus integer updates); at an
epoch boundary, re-binning the stored data costs O(d log d) with ``d`` distinct scores
(window: ``d <= window_size``), amortised O(log d) per event because epochs double (or,
with a window, last ``window_size`` events).

This module is pure: plain Python and numpy, no river.
"""

from __future__ import annotations

import collections
import itertools
import math
from bisect import bisect_right
from fractions import Fraction
from typing import NamedTuple

import numpy as np

# the edges' one home is streamcal.core.bins; re-exported here under their old names
from streamcal.core.bins import quantile_edges, uniform_edges

__all__ = [
    "BinView",
    "HistogramBinner",
    "ScoreCells",
    "calibration_epsilon",
    "next_epoch_boundary",
    "next_stop",
    "prior_terms",
    "quantile_edges",
    "uniform_edges",
]

# ScoreCells keeps its integer sums in int64 arrays while the grand total of the units
# stays below this bound (no partial sum can overflow), in object arrays of Python ints
# beyond it.
_INT64_SAFE = 2**62
# Pending events are merged into the cells once they are this many, or as many as the
# cells, whichever is larger: memory O(cells + _FLUSH_MIN), merging amortised O(log).
_FLUSH_MIN = 2048


class BinView(NamedTuple):
    """One bin of a histogram binner, as seen from outside."""

    #: left edge (included)
    lower: float
    #: right edge (excluded, except 1.0 for the last bin)
    upper: float
    #: predicted value for scores in the bin; None when the bin holds no positive weight
    #: (scores in it are then predicted unchanged)
    value: float | None
    #: total weight of the bin's events (correctly rounded)
    weight: float
    #: number of positive-weight events in the bin
    n_events: int


def _fraction_bits(x: float) -> tuple[int, int]:
    """``(num, d)`` with ``x == num / 2**d`` exactly."""
    num, den = x.as_integer_ratio()
    return num, den.bit_length() - 1


def next_epoch_boundary(c: int, window_size: int | None) -> int:
    """The epoch boundary after the one at ``c`` positive-weight events (``c >= 1``):
    ``2 c`` without a window; with ``window_size = N``, ``2 c`` while that is below
    ``N``, then ``N``, then every multiple of ``N``. O(1).

    Examples
    --------
    >>> [next_epoch_boundary(c, None) for c in (1, 2, 4)]
    [2, 4, 8]
    >>> [next_epoch_boundary(c, 6) for c in (1, 2, 4, 6, 12)]
    [2, 4, 6, 12, 18]

    """
    N = window_size
    if N is None:
        return 2 * c
    return 2 * c if 2 * c < N else (N if c < N else c + N)


def next_stop(c: int, next_boundary: int, cells: ScoreCells | None) -> int:
    """The event count of a binner's next stop after its ``c``-th positive-weight event:
    its next epoch boundary, or sooner the :meth:`ScoreCells.flush` of its pending cells
    (``cells`` None: a binner without cells). O(1).

    Examples
    --------
    >>> next_stop(4, 8, None), next_stop(4, 10**6, ScoreCells())
    (8, 2052)

    """
    if cells is None:
        return next_boundary
    return min(next_boundary, c + cells.merge_threshold())


def prior_terms(edges, prior_strength: float, E: int) -> list[tuple[int, int, int]] | None:
    """Per bin the exact integer terms ``(sh, num, den)`` of the prior's estimate, so
    that ``(S + a m) / (W + a)`` over sums ``S, W`` in units of ``2**-E`` is the quotient
    of integers ``((S << sh) + num) / ((W << sh) + den)``; None without a prior. O(B).

    With ``a = A / 2**p`` and the midpoint ``m = M / 2**q``, multiply above and below by
    ``2**(E + p + q)``: ``sh = p + q``, ``num = A M 2**E``, ``den = A 2**(E + q)``.

    Examples
    --------
    >>> prior_terms([0.0, 0.5, 1.0], 2.0, 0)   # m = 1/4 and 3/4, a = 2
    [(2, 2, 8), (2, 6, 8)]
    >>> prior_terms([0.0, 1.0], 0.0, 3) is None
    True

    """
    if prior_strength == 0.0:
        return None
    A, p = _fraction_bits(float(prior_strength))
    terms = []
    for k in range(len(edges) - 1):
        M, q = _fraction_bits((edges[k] + edges[k + 1]) / 2)
        terms.append((p + q, (A * M) << E, A << (E + q)))
    return terms


def calibration_epsilon(n: int, n_bins: int, alpha: float, prior_strength: float) -> float:
    """Theorem 2 of Gupta (2022) for ``n`` calibration events in ``n_bins`` uniform-mass
    bins: ``sqrt(log(2 / alpha) / (2 (floor(n / B) - 1))) + a / (floor(n / B) - 1 + a)``
    (``a`` the prior strength), ``inf`` when ``n < 2 B``. O(1).

    Examples
    --------
    >>> round(calibration_epsilon(1024, 10, 0.1, 0.0), 4)
    0.1218
    >>> calibration_epsilon(5, 3, 0.1, 0.0)
    inf

    """
    if n < 2 * n_bins:
        return math.inf
    m = n // n_bins - 1
    eps = math.sqrt(math.log(2.0 / alpha) / (2 * m))
    if prior_strength > 0.0:
        eps += prior_strength / (m + prior_strength)
    return eps


class ScoreCells:
    """Weighted binary-labelled scores aggregated by distinct score, exactly.

    Each cell is a distinct score ``x`` with the number of events ``n``, their integer
    total weight ``w`` and integer weighted label sum ``s`` (the caller's units). Cells are
    kept in numpy arrays sorted by score; new events wait in a pending list until
    :meth:`flush` merges them (sort of the pending events, then one merge). Integer sums
    are int64 while the grand total is below ``2**62`` and Python ints (object arrays)
    beyond, so no sum ever overflows or rounds.

    Invariants (:meth:`_check`): scores strictly increasing; ``n >= 1`` and
    ``0 <= s <= w``, ``w > 0`` in every cell; ``total`` is the sum of the cells' weights;
    while the sum arrays are int64, ``total < 2**62`` (the switch to Python ints is
    one-way).

    Examples
    --------
    >>> cells = ScoreCells()
    >>> for x, w, y in [(0.5, 1, 1), (0.2, 2, 0), (0.5, 3, 0)]:
    ...     cells.add(x, w, y)
    >>> cells.flush()
    >>> cells.xs.tolist(), cells.ns.tolist(), cells.ws.tolist(), cells.ss.tolist()
    ([0.2, 0.5], [1, 2], [2, 4], [0, 1])
    >>> cells.bin_sums([0.3], 2)
    ([2, 4], [0, 1], [1, 2])
    >>> cells._check()

    """

    def __init__(self):
        self.xs = np.empty(0, dtype=np.float64)  # distinct scores, increasing
        self.ns = np.empty(0, dtype=np.int64)  # events per score
        self.ws = np.empty(0, dtype=np.int64)  # integer weight sums
        self.ss = np.empty(0, dtype=np.int64)  # integer weighted label sums
        self.total = 0  # sum of the cells' weights (a Python int)
        self.pending_scores: list[float] = []
        self.pending_weights: list[int] = []  # signed: +w for label 1, -w for label 0

    def add(self, x: float, w: int, y: float) -> None:
        """Queue one event (``w > 0`` integer weight, ``y`` 0 or 1). O(1)."""
        self.pending_scores.append(x)
        self.pending_weights.append(w if y else -w)

    def __len__(self) -> int:
        """Number of cells (pending events not counted). O(1)."""
        return len(self.xs)

    def merge_threshold(self) -> int:
        """How many pending events trigger a :meth:`flush`: as many as the cells, and at
        least 2048, so that memory is O(cells) and merging amortised O(log cells). O(1)."""
        return max(len(self.xs), _FLUSH_MIN)

    def n_events(self) -> int:
        """Number of events held, cells and pending. O(cells)."""
        return int(self.ns.sum()) + len(self.pending_scores)

    def _dtype(self):
        return np.int64 if self.ws.dtype == np.int64 else object

    def _make_big(self) -> None:
        """Switch the integer sums to Python ints (object arrays), for good."""
        self.ws = self.ws.astype(object)
        self.ss = self.ss.astype(object)

    def flush(self) -> None:
        """Merge the pending events into the cells. O(p log p + cells) in numpy."""
        ps, pw = self.pending_scores, self.pending_weights
        p = len(ps)
        if not p:
            return
        self.total += sum(map(abs, pw))
        if self.total >= _INT64_SAFE and self.ws.dtype == np.int64:
            self._make_big()
        x = np.array(ps, dtype=np.float64)
        sw = np.array(pw, dtype=self._dtype())
        order = np.argsort(x, kind="stable")
        x = x[order]
        sw = sw[order]
        w = np.abs(sw)
        s = np.where(sw > 0, sw, 0).astype(sw.dtype)
        starts = np.flatnonzero(np.concatenate(([True], x[1:] != x[:-1])))
        ux = x[starts]
        gn = np.diff(np.concatenate((starts, [p]))).astype(np.int64)
        gw = np.add.reduceat(w, starts)
        gs = np.add.reduceat(s, starts)
        pos = np.searchsorted(self.xs, ux, side="left")
        hit = pos < len(self.xs)
        hit[hit] = self.xs[pos[hit]] == ux[hit]
        if hit.any():
            at = pos[hit]
            self.ns[at] += gn[hit]
            self.ws[at] += gw[hit]
            self.ss[at] += gs[hit]
        new = ~hit
        if new.any():
            at = pos[new]
            self.xs = np.insert(self.xs, at, ux[new])
            self.ns = np.insert(self.ns, at, gn[new])
            self.ws = np.insert(self.ws, at, gw[new])
            self.ss = np.insert(self.ss, at, gs[new])
        ps.clear()
        pw.clear()

    def shift(self, sh: int) -> None:
        """Multiply every weight by ``2**sh`` (a change of unit), exactly. O(cells)."""
        self.total <<= sh
        if self.total >= _INT64_SAFE and self.ws.dtype == np.int64:
            self._make_big()
        self.ws = self.ws << sh
        self.ss = self.ss << sh
        self.pending_weights[:] = [v << sh for v in self.pending_weights]

    def bin_sums(self, inner, n_bins: int) -> tuple[list[int], list[int], list[int]]:
        """Per-bin ``(weight sums, label sums, counts)`` of the flushed cells, bin ``k``
        holding the scores ``x`` with ``k`` inner edges ``<= x``. O(cells) in numpy."""
        assert not self.pending_scores, "flush before re-binning"
        m = len(self.xs)
        idx = np.searchsorted(
            self.xs, np.asarray(inner, dtype=np.float64), side="left"
        ).tolist()
        lo, hi = [0, *idx], [*idx, m]
        out = []
        for arr in (self.ws, self.ss, self.ns):
            P = np.concatenate((np.zeros(1, dtype=arr.dtype), np.cumsum(arr)))
            out.append([int(P[b] - P[a]) for a, b in zip(lo, hi)])
        return out[0], out[1], out[2]

    def to_state(self) -> dict:
        """JSON-safe state (Python ints may be large). O(cells + pending)."""
        return {
            "xs": self.xs.tolist(),
            "ns": self.ns.tolist(),
            "ws": [int(v) for v in self.ws.tolist()],
            "ss": [int(v) for v in self.ss.tolist()],
            "big": self.ws.dtype != np.int64,
            "total": self.total,
            "pending_scores": list(self.pending_scores),
            "pending_weights": list(self.pending_weights),
        }

    @classmethod
    def from_state(cls, state: dict) -> ScoreCells:
        """Rebuild cells written by :meth:`to_state`. O(cells + pending)."""
        c = cls()
        dt = object if state["big"] else np.int64
        c.xs = np.array(state["xs"], dtype=np.float64)
        c.ns = np.array(state["ns"], dtype=np.int64)
        c.ws = np.array([int(v) for v in state["ws"]], dtype=dt)
        c.ss = np.array([int(v) for v in state["ss"]], dtype=dt)
        c.total = int(state["total"])
        c.pending_scores = [float(v) for v in state["pending_scores"]]
        c.pending_weights = [int(v) for v in state["pending_weights"]]
        return c

    def _check(self) -> None:
        """Assert the invariants listed in the class docstring."""
        m = len(self.xs)
        assert len(self.ns) == len(self.ws) == len(self.ss) == m
        assert self.xs.dtype == np.float64 and self.ns.dtype == np.int64
        assert self.ws.dtype == self.ss.dtype and self.ws.dtype in (np.int64, object)
        assert bool(np.all(self.xs[1:] > self.xs[:-1])), (
            "scores not strictly increasing"
        )
        assert bool(np.all(self.ns >= 1)), "empty cell"
        ws, ss = [int(v) for v in self.ws.tolist()], [int(v) for v in self.ss.tolist()]
        assert all(0 <= b <= a and a > 0 for a, b in zip(ws, ss)), (
            "cell sums out of order"
        )
        assert len(self.pending_scores) == len(self.pending_weights)
        assert all(type(v) is int and v != 0 for v in self.pending_weights)
        assert self.total == sum(ws), "total is stale"
        if self.ws.dtype == np.int64:
            assert self.total < _INT64_SAFE, "int64 sums near overflow"


class HistogramBinner:
    """Histogram binning of weighted binary labels, updated one event at a time.

    Inputs are assumed valid (the calibrator shell validates): scores are floats in
    [0, 1], labels 0.0 or 1.0, weights finite floats >= 0. Zero-weight events teach
    nothing; with a window they still take a slot (they push the oldest event out).

    Epochs (``"quantile"``). Let ``c`` be the number of positive-weight events learnt so
    far (zero weights do not count). Epoch boundaries are at ``c = 1, 2, 4, 8, ...``
    without a window; with ``window_size = N``, at the powers of two below ``N`` and then
    at every multiple of ``N``. At a boundary, the edges are recomputed by
    :func:`quantile_edges` from the scores of the positive-weight events held (the whole
    stream, or the window's content: the *calibration set*, of size
    :attr:`n_calibration`), and every held event is re-binned. Before the first boundary
    the edges are uniform. Between boundaries the edges do not move and each new event
    only updates its bin.

    Storage. Without a window the ``"quantile"`` binner keeps the stream in
    :class:`ScoreCells` (memory O(distinct scores)) so that it can re-bin it with new
    edges; ``"uniform"`` keeps only the ``B`` bins. With a window, the last
    ``window_size`` events are kept, memory O(window_size + B).

    Invariants (:meth:`_check`): edges sorted from 0 to 1 (uniform: ``j / B``); per bin
    ``0 <= S <= W``, ``W == 0`` iff no event, and the cached estimate equal to the exact
    formula; the bins equal the held events (window or cells) re-binned from scratch;
    the next epoch boundary follows the rule above.

    Parameters
    ----------
    n_bins
        Number of bins ``B >= 1``.
    strategy
        ``"uniform"`` or ``"quantile"``.
    window_size
        None (the whole stream) or the number of most recent events to use.
    prior_strength
        ``a >= 0``: each bin's estimate is ``(S + a m) / (W + a)`` with ``m`` the bin's
        midpoint ``(e_k + e_{k+1}) / 2``. Bins without positive weight predict the score.

    Examples
    --------
    >>> b = HistogramBinner(n_bins=2, strategy="uniform")
    >>> for s, y in [(0.1, 0.0), (0.2, 1.0), (0.3, 1.0), (0.8, 1.0)]:
    ...     b.learn(s, y, 1.0)
    >>> b.predict(0.25), b.predict(0.5), b.predict(0.9)
    (0.6666666666666666, 1.0, 1.0)
    >>> b.bins[0]
    BinView(lower=0.0, upper=0.5, value=0.6666666666666666, weight=3.0, n_events=3)
    >>> b._check()

    """

    def __init__(
        self,
        n_bins: int,
        strategy: str = "uniform",
        window_size: int | None = None,
        prior_strength: float = 0.0,
    ):
        self.n_bins = n_bins
        self.strategy = strategy
        self.window_size = window_size
        self.prior_strength = float(prior_strength)
        B = n_bins
        self._edges = uniform_edges(B)
        self._inner = self._edges[1:-1]
        self._W = [0] * B  # total weight per bin, in units of 2**-E
        self._S = [0] * B  # weighted label sum per bin, in units of 2**-E
        self._counts = [0] * B  # positive-weight events per bin
        self._est = [None] * B  # derived: the estimate of each bin, None when empty
        self._E = 0
        self._one = 1  # 2**E: the integer weight of a unit-weight event
        self._n_events = 0  # learn calls
        self._n_pos = 0  # positive-weight events learnt
        self._n_cal = 0  # size of the calibration set of the current edges
        quantile = strategy == "quantile"
        self._next_boundary = 1 if quantile else 0  # 0: never
        self._next_stop = self._next_boundary  # next boundary or merge of pending cells
        self._window = collections.deque() if window_size is not None else None
        self._cells = ScoreCells() if quantile and window_size is None else None
        # derived (prior only): per bin (shift, numerator term, denominator term)
        self._prior = None
        self._refresh_prior()

    # ------------------------------------------------------------------ learning

    def learn(self, s: float, y: float, w: float) -> None:
        """Learn one event. O(log B), plus the amortised merges and re-binning of the
        ``"quantile"`` strategy (see the module docstring)."""
        self._n_events += 1
        window = self._window
        if window is not None:
            window.append((s, y, w))
            if len(window) > self.window_size:
                old = window.popleft()
                if old[2] > 0.0:
                    self._remove(old[0], old[1], old[2])
        if not w > 0.0:
            return
        wi = self._one if w == 1.0 else self._weight_int(w)
        cells = self._cells
        if cells is not None:
            cells.pending_scores.append(s)
            cells.pending_weights.append(wi if y else -wi)
        c = self._n_pos = self._n_pos + 1
        if c == self._next_stop and self._stop(c):
            return
        k = bisect_right(self._inner, s)
        W = self._W
        Wk = W[k] = W[k] + wi
        S = self._S
        if y:
            S[k] += wi
        self._counts[k] += 1
        if self._prior is None:
            self._est[k] = S[k] / Wk  # exact integers: correctly rounded
        else:
            self._est[k] = self._value(k)

    def _stop(self, c: int) -> bool:
        """Merge pending cells and, at an epoch boundary, start a new epoch (then the
        event just learnt is already binned: return True)."""
        if self._cells is not None:
            self._cells.flush()
        boundary = c == self._next_boundary
        if boundary:
            self._new_epoch(c)
        self._next_stop = next_stop(c, self._next_boundary, self._cells)
        return boundary

    def _remove(self, s: float, y: float, w: float) -> None:
        """Take a positive-weight event that left the window out of its bin."""
        wi = self._one if w == 1.0 else self._weight_int(w)
        k = bisect_right(self._inner, s)
        self._W[k] -= wi
        if y:
            self._S[k] -= wi
        self._counts[k] -= 1
        self._refresh(k)

    def _weight_int(self, w: float) -> int:
        """The weight ``w > 0`` in units of ``2**-E``, raising ``E`` first if needed."""
        num, d = _fraction_bits(w)
        if d > self._E:
            self._rescale(d)
        return num << (self._E - d)

    def _rescale(self, E: int) -> None:
        """Change the unit to ``2**-E`` (``E`` larger): shift every integer sum left."""
        sh = E - self._E
        self._W = [x << sh for x in self._W]
        self._S = [x << sh for x in self._S]
        if self._cells is not None:
            self._cells.shift(sh)
        self._E = E
        self._one = 1 << E
        self._refresh_prior()

    def _refresh(self, k: int) -> None:
        if self._counts[k] == 0:
            self._est[k] = None
        elif self._prior is None:
            self._est[k] = self._S[k] / self._W[k]
        else:
            self._est[k] = self._value(k)

    def _value(self, k: int) -> float:
        # (S/2^E + a m) / (W/2^E + a) with a = A/2^p, m = M/2^q, times 2^(E+p+q) above
        # and below: (S 2^(p+q) + A M 2^E) / (W 2^(p+q) + A 2^(E+q)), all integers.
        sh, num, den = self._prior[k]
        return ((self._S[k] << sh) + num) / ((self._W[k] << sh) + den)

    def _refresh_prior(self) -> None:
        """Rebuild the per-bin integer terms of the prior (after edges or E change)."""
        self._prior = prior_terms(self._edges, self.prior_strength, self._E)

    # ------------------------------------------------------------------ epochs

    def _new_epoch(self, c: int) -> None:
        """Recompute the edges from the held events and re-bin them all."""
        B = self.n_bins
        N = self.window_size
        if N is None:
            cells = self._cells  # flushed by the caller
            self._next_boundary = next_epoch_boundary(c, None)
            self._set_edges(quantile_edges(cells.xs, cells.ns, B))
            self._n_cal = c
            self._W, self._S, self._counts = cells.bin_sums(self._inner, B)
        else:
            self._next_boundary = next_epoch_boundary(c, N)
            held = [e for e in self._window if e[2] > 0.0]
            scores = sorted(e[0] for e in held)
            self._set_edges(quantile_edges(scores, [1] * len(scores), B))
            self._n_cal = len(held)
            W, S, n = [0] * B, [0] * B, [0] * B
            inner = self._inner
            one = self._one
            for s, y, w in held:
                wi = one if w == 1.0 else self._weight_int(w)
                k = bisect_right(inner, s)
                W[k] += wi
                if y:
                    S[k] += wi
                n[k] += 1
            self._W, self._S, self._counts = W, S, n
        for k in range(B):
            self._refresh(k)

    def _set_edges(self, edges: list[float]) -> None:
        self._edges = edges
        self._inner = edges[1:-1]
        self._refresh_prior()

    # ------------------------------------------------------------------ prediction

    def predict(self, s: float) -> float:
        """The estimate of the bin of ``s``, or ``s`` if that bin is empty. O(log B)."""
        v = self._est[bisect_right(self._inner, s)]
        return s if v is None else v

    def predict_many(self, scores: np.ndarray) -> np.ndarray:
        """:meth:`predict` on each score of a float64 array (numpy, same comparisons).
        O(n log B)."""
        k = np.searchsorted(
            np.asarray(self._inner, dtype=np.float64), scores, side="right"
        )
        values = np.array(
            [math.nan if v is None else v for v in self._est], dtype=np.float64
        )
        out = values[k]
        empty = np.isnan(out)
        out[empty] = scores[empty]
        return out

    def epsilon(self, alpha: float) -> float:
        """Theorem 2 of Gupta (2022) for the current edges (``alpha`` in (0, 1)).

        ``sqrt(log(2 / alpha) / (2 (floor(n / B) - 1))) + a / (floor(n / B) - 1 + a)``
        with ``n`` = :attr:`n_calibration` and ``a`` the prior strength; ``inf`` when
        ``n < 2 B``. O(1).
        """
        return calibration_epsilon(self._n_cal, self.n_bins, alpha, self.prior_strength)

    # ------------------------------------------------------------------ views

    @property
    def edges(self) -> tuple[float, ...]:
        """The ``B + 1`` current edges. O(B)."""
        return tuple(self._edges)

    @property
    def bins(self) -> tuple[BinView, ...]:
        """The bins with their values, weights and counts. O(B). A bin weight above
        the largest float (valid weights can add up to more) reads as ``inf``."""
        e, one = self._edges, self._one

        def weight(W: int) -> float:
            try:
                return W / one
            except OverflowError:  # the exact integer total is beyond float range
                return math.inf

        return tuple(
            BinView(e[k], e[k + 1], self._est[k], weight(self._W[k]), self._counts[k])
            for k in range(self.n_bins)
        )

    @property
    def n_events(self) -> int:
        """Number of :meth:`learn` calls, zero weights included. O(1)."""
        return self._n_events

    @property
    def n_calibration(self) -> int:
        """Size of the calibration set the current edges come from (``"quantile"``; 0
        before the first epoch boundary and always 0 with ``"uniform"``). O(1)."""
        return self._n_cal

    # ------------------------------------------------------------------ state

    def to_state(self) -> dict:
        """The whole learnt state as JSON-safe data (integers may be large). O(size)."""
        return {
            "edges": list(self._edges),
            "W": list(self._W),
            "S": list(self._S),
            "counts": list(self._counts),
            "E": self._E,
            "n_events": self._n_events,
            "n_pos": self._n_pos,
            "n_cal": self._n_cal,
            "next_boundary": self._next_boundary,
            "next_stop": self._next_stop,
            "window": None if self._window is None else [list(e) for e in self._window],
            "cells": None if self._cells is None else self._cells.to_state(),
        }

    @classmethod
    def from_state(
        cls, n_bins, strategy, window_size, prior_strength, state: dict
    ) -> HistogramBinner:
        """Rebuild a binner from :meth:`to_state`'s output. O(size)."""
        b = cls(n_bins, strategy, window_size, prior_strength)
        b._load(state)
        return b

    def _load(self, state: dict) -> None:
        self._edges = [float(x) for x in state["edges"]]
        self._inner = self._edges[1:-1]
        self._W = [int(x) for x in state["W"]]
        self._S = [int(x) for x in state["S"]]
        self._counts = [int(x) for x in state["counts"]]
        self._E = int(state["E"])
        self._one = 1 << self._E
        self._n_events = int(state["n_events"])
        self._n_pos = int(state["n_pos"])
        self._n_cal = int(state["n_cal"])
        self._next_boundary = int(state["next_boundary"])
        self._next_stop = int(state["next_stop"])
        if state["window"] is not None:
            self._window = collections.deque(
                (float(s), float(y), float(w)) for s, y, w in state["window"]
            )
        if state["cells"] is not None:
            self._cells = ScoreCells.from_state(state["cells"])
        self._refresh_prior()
        for k in range(self.n_bins):
            self._refresh(k)

    # Pickling goes through the JSON-safe state: derived caches are rebuilt.
    def __getstate__(self):
        return (
            self.n_bins,
            self.strategy,
            self.window_size,
            self.prior_strength,
        ), self.to_state()

    def __setstate__(self, st):
        params, state = st
        self.__init__(*params)
        self._load(state)

    def _check(self) -> None:
        """Assert every invariant; recount the bins from the held events when possible."""
        B = self.n_bins
        e = self._edges
        assert len(e) == B + 1 and e[0] == 0.0 and e[-1] == 1.0, f"bad edges {e}"
        assert all(a <= b for a, b in itertools.pairwise(e)), f"edges not sorted: {e}"
        assert self._inner == e[1:-1], "inner edges out of date"
        c, nb, N = self._n_pos, self._next_boundary, self.window_size
        if self.strategy == "uniform":
            assert e == uniform_edges(B), "uniform edges moved"
            assert nb == 0 and self._next_stop == 0 and self._n_cal == 0
        else:
            assert nb > c, f"boundary {nb} missed at {c} events"
            assert c < self._next_stop <= nb, "next stop out of range"
            if c == 0:
                assert nb == 1 and self._n_cal == 0 and e == uniform_edges(B)
            assert self._n_cal <= c and (N is None or self._n_cal <= N)
            if N is None:
                assert nb & (nb - 1) == 0 and nb // 2 <= c, "epochs must double"
                assert self._n_cal == (nb // 2 if c else 0), (
                    "calibration set is not the last boundary's"
                )
            else:
                assert self._next_stop == nb
                assert nb % N == 0 or (nb & (nb - 1) == 0 and nb < N), (
                    f"{nb} is no boundary"
                )
        assert self._one == 1 << self._E
        assert len(self._W) == len(self._S) == len(self._counts) == len(self._est) == B
        for k in range(B):
            W, S, n, v = self._W[k], self._S[k], self._counts[k], self._est[k]
            assert type(W) is int and type(S) is int and type(n) is int
            assert 0 <= S <= W and n >= 0 and (W == 0) == (n == 0), (
                f"bin {k}: W={W} S={S} n={n}"
            )
            if n == 0:
                assert v is None, f"empty bin {k} has value {v}"
            else:
                a = Fraction(self.prior_strength) * self._one
                exact = (S + a * Fraction((e[k] + e[k + 1]) / 2)) / (W + a)
                assert v == float(exact), f"bin {k}: value {v} != {float(exact)}"
                assert e[k] < e[k + 1] or (k == B - 1 and e[k] == 1.0), (
                    f"bin {k} is empty by its edges but holds events"
                )
        assert sum(self._counts) <= self._n_pos <= self._n_events
        W, S, n = [0] * B, [0] * B, [0] * B
        inner = self._inner
        if self._window is not None:
            assert len(self._window) <= self.window_size, "window too long"
            for s, y, w in self._window:
                if w > 0.0:
                    k = bisect_right(inner, s)
                    W[k] += self._units(w)
                    S[k] += self._units(w) if y else 0
                    n[k] += 1
        elif self._cells is not None:
            cells = self._cells
            cells._check()
            assert cells.n_events() == c, "cells do not hold every event"
            assert len(cells.pending_scores) < cells.merge_threshold(), (
                "pending list too long"
            )
            for x, ni, wi, si in zip(
                cells.xs.tolist(),
                cells.ns.tolist(),
                cells.ws.tolist(),
                cells.ss.tolist(),
            ):
                k = bisect_right(inner, x)
                W[k] += int(wi)
                S[k] += int(si)
                n[k] += ni
            for x, v in zip(cells.pending_scores, cells.pending_weights):
                k = bisect_right(inner, x)
                W[k] += abs(v)
                S[k] += max(v, 0)
                n[k] += 1
        else:
            assert sum(self._counts) == c, "an event is missing from the bins"
            return
        assert (W, S, n) == (self._W, self._S, self._counts), (
            "bins differ from the held events"
        )

    def _units(self, w: float) -> int:
        num, d = _fraction_bits(w)
        assert d <= self._E, f"weight {w} finer than the unit 2**-{self._E}"
        return num << (self._E - d)
