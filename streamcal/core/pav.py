"""Pool-adjacent-violators with block maintenance: an exact, incrementally updated
isotonic regression.

The store holds *cells* (one per distinct score ``x``: total weight ``W``, weighted
label sum ``S`` and event count ``n``) grouped into *blocks*, the maximal runs of cells
that share one fitted value. The fitted value of a block is ``S / W``.

Invariants (asserted by :meth:`IsotonicBlockStore._check`):

1. cells are sorted by ``x``, strictly, within and across blocks; every cell has
   ``W > 0`` and ``n >= 1``;
2. every block's own isotonic regression is constant: each prefix of its cells has a
   weighted mean >= the block's mean (equivalently each suffix has a mean <=); in the
   cumulative-sum diagram the block is one edge of the greatest convex minorant;
3. block values strictly increase from left to right (equal neighbours are pooled),
   so the block partition is the unique level-set partition of the fit.

Why an update is local. PAV's result does not depend on the order in which adjacent
violators are pooled, and a run of cells whose own isotonic regression is constant lies
inside one level set of the isotonic regression of any larger sequence containing it.
So when an event is added to (or removed from) cell ``x``, every block that does not
contain ``x`` can stay pooled; only the block holding ``x`` may split, into the pieces of
its own isotonic regression, and the pieces then merge with neighbours in a cascade, as
PAV's stack would. More precisely, if the event raises the block's mean (adding a
positive label, removing a negative one) only the cells *before* ``x`` can split off
(the tail from ``x`` on stays one piece); if it lowers the mean only cells *after* ``x``
can split off.

Checking for a split, in order of cost:

1. each block carries lower bounds on its smallest prefix and suffix gaps (how far the
   means of its proper prefixes lie above, and of its suffixes below, the block mean),
   updated in O(1) per event; while one stays clearly positive no split is possible;
2. otherwise a block of up to ``_REFRESH_MAX`` cells is scanned whole (prefix and
   suffix sums, so that weights spanning many orders of magnitude lose no digits), which
   also refreshes its bounds;
3. a larger block is scanned on the one side that can split off only, with one
   cumulative sum of ``s - v * w``.

Scans run in plain Python up to ``_SMALL`` cells and in numpy above.

Cost. Locating the block and the cell is O(log b + log m) (``b`` blocks, ``m`` cells in
the block); inserting a new distinct score moves O(m) machine words; the split check is
O(m) in C. A split into ``p`` pieces costs O(m) (scipy's C PAV above a few dozen cells),
and each merge in the cascade copies the right-hand block's cells, O(m): every merge
removes one block and blocks are only created by splits, so merges are amortised O(1)
per piece created. With scores on a grid of ``G`` cells, ``m <= G``.

This module is pure: plain Python, ``array`` and numpy, no river.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right
from typing import NamedTuple

import numpy as np
from scipy.optimize import isotonic_regression

__all__ = ["IsotonicBlockStore", "BlockView", "pav_blocks"]

# Below this many cells, scans and PAV run in plain Python; above it, numpy / scipy.
_SMALL = 48
# Blocks of more cells than this are checked one-sided, without refreshing the bounds.
_REFRESH_MAX = 256
# A block whose gap bound exceeds this is pooled for sure: no scan (see _Block).
_GAP_MARGIN = 1e-9
# Split points whose suffix weighs less than this fraction of the block are checked
# with suffix sums (W - prefix would have lost digits there).
_LIGHT_SUFFIX = 1e-6
# A cell left with less than this fraction of the weight just removed from it keeps a
# rounding residue of relative size up to 2**-52 / _ABSORBED in its sums: it is dropped
# and its remaining events re-added exactly by the caller (see IsotonicBlockStore.remove).
_ABSORBED = 2.0**-20


class BlockView(NamedTuple):
    """One block of the fitted isotonic regression, as seen from outside."""

    #: smallest score (cell key) in the block
    score_min: float
    #: largest score (cell key) in the block
    score_max: float
    #: fitted value, the weighted mean label of the block
    value: float
    #: total weight of the block's events
    weight: float
    #: number of events in the block
    n_events: int
    #: number of distinct scores (cells) in the block
    n_cells: int


class _Block:
    """A run of cells with its totals. Arrays are ``array.array`` so that numpy can view
    them without a copy and Python can index them without boxing overhead."""

    __slots__ = ("xs", "ws", "ss", "ns", "W", "S", "gap_pre", "gap_suf")

    def __init__(self, xs, ws, ss, ns, W, S):
        self.xs = xs
        self.ws = ws
        self.ss = ss
        self.ns = ns
        self.W = W
        self.S = S
        # Lower bounds on min over proper prefixes of (prefix mean - block mean) and on
        # min over proper suffixes of (block mean - suffix mean); -inf when unknown.
        # The block is pooled iff either minimum is >= 0, so a bound that stays
        # clearly positive lets an update skip the O(m) scan. Derived, never saved.
        self.gap_pre = -math.inf
        self.gap_suf = -math.inf

    def __getstate__(self):
        return (self.xs, self.ws, self.ss, self.ns, self.W, self.S)

    def __setstate__(self, state):
        self.xs, self.ws, self.ss, self.ns, self.W, self.S = state
        self.gap_pre = self.gap_suf = -math.inf

    def slice(self, a, b, W, S):
        return _Block(self.xs[a:b], self.ws[a:b], self.ss[a:b], self.ns[a:b], W, S)


class _Piece:
    """A block stand-in with totals only, used for hypothetical updates."""

    __slots__ = ("W", "S", "marked")

    def __init__(self, W, S, marked=False):
        self.W = W
        self.S = S
        self.marked = marked


def _weight_sum(ws, a, b):
    """Sum of ``ws[a:b]``: plain Python for short runs, numpy without a copy otherwise."""
    if b - a <= 64:
        return sum(ws[a:b])
    return float(np.frombuffer(ws, dtype=np.float64, count=b - a, offset=8 * a).sum())


def _merge_pieces(a, b):
    return _Piece(a.W + b.W, a.S + b.S, getattr(a, "marked", False) or getattr(b, "marked", False))


def _merge_blocks(a, b):
    """Pool block ``b`` into block ``a`` (``a`` left of ``b``); ``a`` is reused."""
    a.xs.extend(b.xs)
    a.ws.extend(b.ws)
    a.ss.extend(b.ss)
    a.ns.extend(b.ns)
    a.W += b.W
    a.S += b.S
    a.gap_pre = a.gap_suf = -math.inf
    return a


def pav_blocks(ws, ss):
    """Isotonic regression of cells, as a list of ``(start, stop, W, S)`` pieces.

    ``ws`` and ``ss`` are per-cell weights (> 0) and weighted label sums, in score
    order. The pieces are the maximal level sets (strictly increasing values; equal
    neighbours pooled). O(m): plain Python for short inputs, scipy's C PAV otherwise.

    Examples
    --------
    >>> pav_blocks([1.0, 1.0, 1.0, 1.0], [1.0, 0.0, 1.0, 1.0])
    [(0, 2, 2.0, 1.0), (2, 4, 2.0, 2.0)]

    """
    m = len(ws)
    if m <= _SMALL:
        starts, W_, S_ = [], [], []
        for j in range(m):
            w, s, a = ws[j], ss[j], j
            while W_ and S_[-1] / W_[-1] >= s / w:
                w += W_.pop()
                s += S_.pop()
                a = starts.pop()
            starts.append(a)
            W_.append(w)
            S_.append(s)
        stops = starts[1:] + [m]
        return list(zip(starts, stops, W_, S_))
    w = np.asarray(ws, dtype=np.float64)
    s = np.asarray(ss, dtype=np.float64)
    res = isotonic_regression(s / w, weights=w)
    starts = res.blocks[:-1]
    Wb = np.add.reduceat(w, starts).tolist()
    Sb = np.add.reduceat(s, starts).tolist()
    bounds = res.blocks.tolist()
    # scipy's pieces are a valid PAV result; pool any neighbours our own comparison
    # (S/W, in floating point) sees as tied or reversed, so the invariant holds exactly.
    out = []
    for j in range(len(Wb)):
        a, b, W, S = bounds[j], bounds[j + 1], Wb[j], Sb[j]
        while out and out[-1][3] / out[-1][2] >= S / W:
            a0, _, W0, S0 = out.pop()
            a, W, S = a0, W + W0, S + S0
        out.append((a, b, W, S))
    return out


class IsotonicBlockStore:
    """Exact isotonic regression (non-decreasing) of weighted binary-or-real labels on
    scores, kept up to date under insertions and deletions of single events.

    Keys ``x`` are floats (the caller may pre-round them onto a grid). Weights must be
    positive; labels are in [0, 1].

    Examples
    --------
    >>> store = IsotonicBlockStore()
    >>> for x, y in [(0.1, 0.0), (0.5, 1.0), (0.3, 1.0), (0.7, 0.0)]:
    ...     store.add(x, 1.0, y)
    >>> [(b.score_min, b.score_max, b.value) for b in store.blocks()]
    [(0.1, 0.1, 0.0), (0.3, 0.7, 0.6666666666666666)]
    >>> store.predict_step(0.2), store.predict_linear(0.2)
    (0.0, 0.33333333333333337)
    >>> store.remove(0.7, 1.0, 0.0)
    0
    >>> store.predict_step(0.6)
    1.0

    """

    def __init__(self):
        self._blocks: list[_Block] = []
        self._starts: list[float] = []  # derived: first key of each block
        self._values: list[float] = []  # derived: S / W of each block

    # ------------------------------------------------------------------ queries

    def __len__(self) -> int:
        """Number of blocks. O(1)."""
        return len(self._blocks)

    @property
    def n_cells(self) -> int:
        """Number of distinct keys stored. O(b)."""
        return sum(len(b.xs) for b in self._blocks)

    def predict_step(self, x: float) -> float | None:
        """Fitted value at the largest key <= x (the first block's below all keys).
        None when empty. O(log b)."""
        if not self._blocks:
            return None
        i = bisect_right(self._starts, x) - 1
        return self._values[i if i > 0 else 0]

    def predict_linear(self, x: float) -> float | None:
        """Fit interpolated linearly between the last key of a block and the first key
        of the next one, constant within blocks and clipped at both ends (scikit-learn's
        ``IsotonicRegression(out_of_bounds="clip")``). None when empty. O(log b)."""
        if not self._blocks:
            return None
        i = bisect_right(self._starts, x) - 1
        if i < 0:
            return self._values[0]
        last = self._blocks[i].xs[-1]
        if x <= last or i + 1 == len(self._blocks):
            return self._values[i]
        x1 = self._starts[i + 1]
        v0 = self._values[i]
        v1 = self._values[i + 1]
        return v0 + (v1 - v0) * ((x - last) / (x1 - last))

    def arrays(self):
        """Return ``(starts, ends, values)`` numpy arrays, one entry per block. O(b)."""
        return (
            np.array(self._starts, dtype=np.float64),
            np.array([b.xs[-1] for b in self._blocks], dtype=np.float64),
            np.array(self._values, dtype=np.float64),
        )

    def blocks(self) -> tuple[BlockView, ...]:
        """Read-only views of the blocks, in score order. O(b + cells)."""
        return tuple(
            BlockView(b.xs[0], b.xs[-1], v, b.W, int(sum(b.ns)), len(b.xs))
            for b, v in zip(self._blocks, self._values)
        )

    def cells(self):
        """All cells as numpy arrays ``(xs, ws, ss, ns)`` in key order. O(cells)."""
        if not self._blocks:
            e = np.empty(0)
            return e, e.copy(), e.copy(), np.empty(0, dtype=np.int64)
        return (
            np.concatenate([np.frombuffer(b.xs, dtype=np.float64) for b in self._blocks]),
            np.concatenate([np.frombuffer(b.ws, dtype=np.float64) for b in self._blocks]),
            np.concatenate([np.frombuffer(b.ss, dtype=np.float64) for b in self._blocks]),
            np.concatenate([np.frombuffer(b.ns, dtype=np.int64) for b in self._blocks]),
        )

    @property
    def live_blocks(self) -> list:
        """The store's block objects in score order, live and read-only; O(1).

        Each has ``W`` and ``S`` (total weight and weighted label sum). An update
        replaces a contiguous run of blocks and leaves every other block object in place
        (same identity, same totals), so a caller can find what changed by identity.
        Never mutate them; use :meth:`blocks` for a snapshot.
        """
        return self._blocks

    def block_index(self, x: float) -> int:
        """Index in :attr:`live_blocks` of the last block starting at or below ``x``
        (-1 if ``x`` is below every stored score); O(log b)."""
        return bisect_right(self._starts, x) - 1

    def cell(self, x: float) -> tuple[float, float] | None:
        """``(weight, weighted label sum)`` of the cell at score ``x``, None if there is
        none; O(log b + log m)."""
        i = bisect_right(self._starts, x) - 1
        if i < 0:
            return None
        b = self._blocks[i]
        k = bisect_left(b.xs, x)
        if k == len(b.xs) or b.xs[k] != x:
            return None
        return b.ws[k], b.ss[k]

    # ------------------------------------------------------------------ updates

    def _locate(self, x):
        i = bisect_right(self._starts, x) - 1
        if i < 0:
            i = 0
        b = self._blocks[i]
        return i, b, bisect_left(b.xs, x)

    def add(self, x: float, w: float, y: float) -> None:
        """Add one event (key ``x``, weight ``w > 0``, label ``y``). Amortised
        O(log b + m) with the O(m) part in C; see the module docstring."""
        wy = w * y
        if not self._blocks:
            self._blocks.append(
                _Block(array("d", (x,)), array("d", (w,)), array("d", (wy,)), array("q", (1,)), w, wy)
            )
            self._starts.append(x)
            self._values.append(wy / w)
            return
        i, b, k = self._locate(x)
        xs = b.xs
        if k < len(xs) and xs[k] == x:
            b.ws[k] += w
            b.ss[k] += wy
            b.ns[k] += 1
        else:
            xs.insert(k, x)
            b.ws.insert(k, w)
            b.ss.insert(k, wy)
            b.ns.insert(k, 1)
            if k == 0:
                self._starts[i] = x
                # the old block becomes a proper suffix, whose gap was 0
                b.gap_suf = min(b.gap_suf, 0.0)
            if k == len(xs) - 1:
                b.gap_pre = min(b.gap_pre, 0.0)  # ... or a proper prefix
        b.W += w
        b.S += wy
        # adding a 1 raises the mean of every run holding the cell, a 0 lowers it
        self._after_change(i, b, k, k + 1, w, 1 if y == 1.0 else (-1 if y == 0.0 else 0), b.ws[k])

    def remove(self, x: float, w: float, y: float) -> int:
        """Remove one event previously added with the same ``(x, w, y)``. The cell is
        deleted when its last event goes. Same cost as :meth:`add`.

        Returns the number of *other* events deleted with the cell: 0, unless what is
        left weighs less than 2**-20 of what was removed, when the subtraction would
        leave a rounding residue above 2**-32 of the remaining sums. The caller, who knows
        the events, re-adds them (see ``OnlineIsotonic``)."""
        if not self._blocks:
            raise KeyError(x)
        i, b, k = self._locate(x)
        if k >= len(b.xs) or b.xs[k] != x:
            raise KeyError(x)
        wy = w * y
        direction = -1 if y == 1.0 else (1 if y == 0.0 else 0)  # removing a 1 lowers means
        count = b.ns[k]
        cw_left = b.ws[k] - w
        cs_left = b.ss[k] - wy
        if count == 1 or cw_left <= w * _ABSORBED:
            dropped = count - 1
            if dropped:
                direction = 0
            cw, cs = b.ws[k], b.ss[k]
            del b.xs[k], b.ws[k], b.ss[k], b.ns[k]
            if not b.xs:
                del self._blocks[i], self._starts[i], self._values[i]
                return dropped
            b.W -= cw
            b.S -= cs
            if k == 0:
                self._starts[i] = b.xs[0]
            hi = k
            cell_w = 0.0
        else:
            dropped = 0
            cs_left = 0.0 if cs_left < 0.0 else (cw_left if cs_left > cw_left else cs_left)
            b.ws[k] = cw_left
            b.ss[k] = cs_left
            b.ns[k] = count - 1
            b.W -= w
            b.S -= wy
            hi = k + 1
            cell_w = cw_left
        if b.W <= 0.0 or b.S < 0.0 or b.S > b.W:  # rounding drift: recompute exactly
            b.W = math.fsum(b.ws)
            b.S = math.fsum(b.ss)
        self._after_change(i, b, k, hi, w, direction, cell_w)
        return dropped

    def _after_change(self, i, b, lo, hi, w, direction, cell_w):
        """Block ``i`` changed in cells ``[lo, hi)`` by an event of weight ``w`` that
        raised (``direction`` 1), lowered (-1) or moved either way (0, a label strictly
        between 0 and 1) the means of the runs of cells holding it; the cell now weighs
        ``cell_w`` (0 if deleted). Restore the invariants."""
        old = self._values[i]
        v = b.S / b.W
        dv = v - old
        # Update the gap bounds. Means of prefixes (suffixes) not holding the changed
        # cell are unchanged, so their gaps move by exactly -dv (+dv). The means of those
        # holding it move toward the event's label, by at most w / W' where W' is their
        # new weight, at least that of the one ending (starting) at the change.
        ws = b.ws
        m = len(ws)
        b.gap_pre -= dv
        b.gap_suf += dv
        if direction <= 0 and b.gap_pre > -math.inf:
            W_pre = _weight_sum(ws, 0, hi)
            b.gap_pre -= w / W_pre if W_pre > 0.0 else math.inf
        if direction >= 0 and b.gap_suf > -math.inf:
            W_suf = _weight_sum(ws, lo, m)
            b.gap_suf -= w / W_suf if W_suf > 0.0 else math.inf
        if m == 1 or b.gap_pre > _GAP_MARGIN or b.gap_suf > _GAP_MARGIN:
            split = False
        elif m > _REFRESH_MAX and direction:
            # a large block: check only the side that can split off; the bounds are
            # not refreshed (a full scan costs more than it saves at this size)
            split = self._side_violates(b, v, lo, hi, direction)
        else:
            split = self._scan(b, v)
        if split:
            pieces = [b.slice(a, e, W, S) for a, e, W, S in pav_blocks(b.ws, b.ss)]
            self._cascade(i, i + 1, pieces, _merge_blocks, commit=True)
            return
        self._values[i] = v
        n = len(self._values)
        if (i + 1 < n and self._values[i + 1] <= v) or (i > 0 and self._values[i - 1] >= v):
            self._cascade(i, i + 1, [b], _merge_blocks, commit=True)

    @staticmethod
    def _scan(b, v):
        """Does some proper prefix of the block have a mean below ``v``, or some proper
        suffix a mean above it? If not, store the exact minimal gaps in the block. O(m).

        Mathematically the two tests are one; numerically, prefix sums resolve light
        prefixes and suffix sums light suffixes (weights may span 2**500 with
        forgetting), so both are made.
        """
        m = len(b.xs)
        if m <= _SMALL:
            ws, ss = b.ws, b.ss
            cw = cs = 0.0
            gp = gs = math.inf
            for j in range(m - 1):
                cw += ws[j]
                cs += ss[j]
                e = cs - v * cw
                if e < 0.0:
                    return True
                g = e / cw
                if g < gp:
                    gp = g
            cw = cs = 0.0
            for j in range(m - 1, 0, -1):
                cw += ws[j]
                cs += ss[j]
                e = v * cw - cs
                if e < 0.0:
                    return True
                g = e / cw
                if g < gs:
                    gs = g
        else:
            # Prefix sums serve every split point except those whose suffix is so light
            # that W - prefix has lost its digits: those (a tail, as prefix weights
            # increase) are checked again with suffix sums taken from the end.
            w = np.frombuffer(b.ws, dtype=np.float64)
            s = np.frombuffer(b.ss, dtype=np.float64)
            cw = np.cumsum(w[:-1])
            e = np.cumsum(s[:-1]) - v * cw
            W = b.W
            t = int(np.searchsorted(cw, W * (1.0 - _LIGHT_SUFFIX)))
            head = e[:t]
            if (head < 0.0).any():
                return True
            gp = float((e / cw).min())
            gs = float((head / (W - cw[:t])).min()) if t else math.inf
            if t < m - 1:
                sw = np.cumsum(w[:t:-1])
                es = v * sw - np.cumsum(s[:t:-1])
                if (es < 0.0).any():
                    return True
                gs = min(gs, float((es / sw).min()))
        b.gap_pre = gp
        b.gap_suf = gs
        return False

    @staticmethod
    def _side_violates(b, v, lo, hi, direction):
        """One-sided split test for a binary event: after a raise (``direction`` 1)
        only split points ``p <= lo`` can fail (a prefix before the change falls below
        ``v``); after a lowering, only ``p >= hi`` (a suffix after it rises above).

        The running excess is one cumulative sum of ``s - v * w`` taken from the far
        end of the side, which loses no digits as long as the other part of the block is
        not lighter than 2**-20 of it; otherwise (weights spanning a huge range, as
        with forgetting) the test falls back to :meth:`_scan`. O(side) in C."""
        m = len(b.xs)
        w = np.frombuffer(b.ws, dtype=np.float64)
        s = np.frombuffer(b.ss, dtype=np.float64)
        if direction > 0:
            P = min(lo, m - 1)  # split points 1..P: prefixes [0, p)
            if P < 1:
                return False
            if w[P:].sum() < _LIGHT_SUFFIX * b.W:
                return IsotonicBlockStore._scan(b, v)
            return bool(((s[:P] - v * w[:P]).cumsum() < 0.0).any())
        Q = max(hi, 1)  # split points Q..m-1: suffixes [p, m)
        if Q > m - 1:
            return False
        if w[:Q].sum() < _LIGHT_SUFFIX * b.W:
            return IsotonicBlockStore._scan(b, v)
        return bool(((v * w[:Q - 1:-1] - s[:Q - 1:-1]).cumsum() < 0.0).any())

    def _cascade(self, lo, hi, pieces, merge, commit):
        """Replace blocks ``[lo, hi)`` by ``pieces`` (increasing among themselves) and
        pool adjacent violators outwards, exactly as PAV's stack would.

        Returns the new run of blocks and the range it replaces. With ``commit`` the
        store is updated; otherwise nothing is touched (``merge`` must then not mutate).
        """
        blocks = self._blocks
        values = self._values
        out: list = []

        def push(p):
            nonlocal lo
            pv = p.S / p.W
            while True:
                if out:
                    top = out[-1]
                    tv = top.S / top.W
                elif lo > 0:
                    top = blocks[lo - 1]
                    tv = values[lo - 1]
                else:
                    break
                if tv < pv:
                    break
                if out:
                    out.pop()
                else:
                    lo -= 1
                p = merge(top, p)
                pv = p.S / p.W
            out.append(p)

        for p in pieces:
            push(p)
        n = len(blocks)
        while hi < n and values[hi] <= out[-1].S / out[-1].W:
            top = out.pop()
            p = merge(top, blocks[hi])
            hi += 1
            push(p)
        if commit:
            blocks[lo:hi] = out
            self._starts[lo:hi] = [b.xs[0] for b in out]
            self._values[lo:hi] = [b.S / b.W for b in out]
        return out

    def hypothetical_value(self, x: float, w: float, y: float) -> float:
        """Fitted value at ``x`` if one event ``(x, w, y)`` were added; the store is not
        changed. O(m + cascade)."""
        if not self._blocks:
            return float(y)
        i, b, k = self._locate(x)
        ws = np.frombuffer(b.ws, dtype=np.float64).tolist()
        ss = np.frombuffer(b.ss, dtype=np.float64).tolist()
        if k < len(b.xs) and b.xs[k] == x:
            ws[k] += w
            ss[k] += w * y
        else:
            ws.insert(k, w)
            ss.insert(k, w * y)
        pieces = [_Piece(W, S, a <= k < e) for a, e, W, S in pav_blocks(ws, ss)]
        out = self._cascade(i, i + 1, pieces, _merge_pieces, commit=False)
        for p in out:
            if getattr(p, "marked", False):
                return p.S / p.W
        raise AssertionError("the new event's piece was lost")  # pragma: no cover

    def scale_by_power_of_two(self, exponent: int) -> None:
        """Multiply every weight by ``2 ** exponent`` with ``ldexp``: exact, and without
        the intermediate underflow of computing the factor first. O(cells)."""
        for b in self._blocks:
            for arr in (b.ws, b.ss):
                view = np.frombuffer(arr, dtype=np.float64)
                np.ldexp(view, exponent, out=view)
            b.W = math.ldexp(b.W, exponent)
            b.S = math.ldexp(b.S, exponent)
        self._values = [b.S / b.W if b.W > 0 else 0.0 for b in self._blocks]

    def drop_light_cells(self, threshold: float) -> int:
        """Forget cells whose weight is below ``threshold`` and refit if any went.
        Returns the number of cells dropped. O(cells)."""
        if not any(min(b.ws) < threshold for b in self._blocks):
            return 0
        xs, ws, ss, ns = self.cells()
        keep = ws >= threshold
        self.rebuild(xs[keep], ws[keep], ss[keep], ns[keep])
        return int((~keep).sum())

    def rebuild(self, xs, ws, ss, ns) -> None:
        """Replace the whole content by the given cells (sorted, distinct keys, positive
        weights) and fit them from scratch with PAV. O(cells)."""
        xs = np.ascontiguousarray(xs, dtype=np.float64)
        ws = np.ascontiguousarray(ws, dtype=np.float64)
        ss = np.ascontiguousarray(ss, dtype=np.float64)
        ns = np.ascontiguousarray(ns, dtype=np.int64)
        blocks = []
        if len(xs):
            for a, e, W, S in pav_blocks(ws, ss):
                blocks.append(
                    _Block(
                        array("d", xs[a:e].tobytes()),
                        array("d", ws[a:e].tobytes()),
                        array("d", ss[a:e].tobytes()),
                        array("q", ns[a:e].tobytes()),
                        W,
                        S,
                    )
                )
        self._set_blocks(blocks)

    def _set_blocks(self, blocks):
        self._blocks = blocks
        self._starts = [b.xs[0] for b in blocks]
        self._values = [b.S / b.W for b in blocks]

    # ------------------------------------------------------------------ state

    def to_lists(self) -> list:
        """JSON-safe content: one ``[xs, ws, ss, ns, W, S]`` entry per block."""
        return [[b.xs.tolist(), b.ws.tolist(), b.ss.tolist(), b.ns.tolist(), b.W, b.S] for b in self._blocks]

    @classmethod
    def from_lists(cls, data) -> IsotonicBlockStore:
        """Inverse of :meth:`to_lists`; restores the exact same store."""
        store = cls()
        store._set_blocks(
            [
                _Block(array("d", xs), array("d", ws), array("d", ss), array("q", ns), float(W), float(S))
                for xs, ws, ss, ns, W, S in data
            ]
        )
        return store

    def __getstate__(self):
        return {"blocks": self._blocks}  # starts and values are derived

    def __setstate__(self, state):
        self._set_blocks(state["blocks"])

    @staticmethod
    def _min_gap(b, v, side):
        """Exact minimal prefix (or suffix) gap of a block, slowly, for ``_check``."""
        gaps = [math.inf]
        m = len(b.xs)
        for p in range(1, m):
            pre_w, pre_s = math.fsum(b.ws[:p]), math.fsum(b.ss[:p])
            suf_w, suf_s = math.fsum(b.ws[p:]), math.fsum(b.ss[p:])
            gaps.append(pre_s / pre_w - v if side == "pre" else v - suf_s / suf_w)
        return min(gaps)

    def _check(self, rtol: float = 1e-9) -> None:
        """Assert every invariant; on failure the message dumps the offending block."""
        assert len(self._starts) == len(self._blocks) == len(self._values), "derived lists out of sync"
        prev_x = -math.inf
        prev_v = -math.inf
        for i, b in enumerate(self._blocks):
            where = f"block {i} of {len(self._blocks)}: {b.__getstate__()!r}"[:2000]
            m = len(b.xs)
            assert m >= 1 and len(b.ws) == len(b.ss) == len(b.ns) == m, "ragged block " + where
            assert self._starts[i] == b.xs[0], "stale start " + where
            assert b.W > 0, "non-positive block weight " + where
            v = b.S / b.W
            assert self._values[i] == v, "stale value " + where
            assert v > prev_v, f"values not strictly increasing ({prev_v} then {v}) " + where
            prev_v = v
            scale = max(b.W, 1e-300)
            assert abs(math.fsum(b.ws) - b.W) <= rtol * scale, "block weight != sum of cells " + where
            assert abs(math.fsum(b.ss) - b.S) <= rtol * scale, "block label sum != sum of cells " + where
            assert b.gap_pre <= self._min_gap(b, v, "pre") + rtol, "prefix gap bound too high " + where
            assert b.gap_suf <= self._min_gap(b, v, "suf") + rtol, "suffix gap bound too high " + where
            cw = cs = 0.0
            for j in range(m):
                assert b.xs[j] > prev_x, "keys not strictly increasing " + where
                prev_x = b.xs[j]
                assert b.ws[j] > 0 and b.ns[j] >= 1, "empty cell " + where
                assert -rtol * b.ws[j] <= b.ss[j] <= b.ws[j] * (1 + rtol), "label sum out of range " + where
                cw += b.ws[j]
                cs += b.ss[j]
                if j < m - 1:
                    assert cs >= v * cw - rtol * scale, f"prefix {j + 1} below the block mean " + where
