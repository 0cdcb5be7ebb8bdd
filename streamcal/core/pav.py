"""Pool-adjacent-violators: the batch function :func:`pav_blocks` and the exact,
incrementally updated isotonic regression :class:`IsotonicBlockStore`.

The store holds *cells* (one per distinct score ``x``: total weight ``W``, weighted
label sum ``S`` and event count ``n``). The fit is the slope of the greatest convex
minorant of their cumulative-sum diagram; its *blocks* are the maximal runs of cells
that share one fitted value ``S / W``.

Invariants (asserted by :meth:`IsotonicBlockStore._check`):

1. cells are sorted by ``x``, strictly; every cell has ``W > 0`` and ``n >= 1``;
2. every block's own isotonic regression is constant: each prefix of its cells has a
   weighted mean >= the block's mean; in the cumulative-sum diagram the block is one
   edge of the greatest convex minorant;
3. block values strictly increase from left to right (equal neighbours are pooled),
   so the block partition is the unique level-set partition of the fit;
4. block totals are sums of cells (subtree totals), never kept by subtraction, so
   removing a heavy event leaves no residue in what remains.

The store is compiled (:mod:`streamcal.core._pav`, built from Cython at install): a
weight-balanced tree over all cells, leaves bucketing up to B cells in C arrays (B = 128
by default, at most 256: the calibrators take 256 for large windows), every node
keeping the bridge of its children's lower hulls in its own local frame (Overmars and
van Leeuwen's dynamic hull). An event costs amortised O(log^2 n) orientation tests
and O(B) moved memory, whatever the shape of the fit (one block of a million cells
included); a prediction costs O(log n + B). Orientation tests are exact when the cell
sums are integers (or multiples of one power of two) below 2**53 of it, and otherwise
fall back, near a tie, to range sums of the cells involved, so a light block after
heavy cells (weights spanning 2**500 with forgetting) is resolved.

:func:`pav_blocks` is plain Python (textbook stack) for short inputs and scipy's C PAV
otherwise.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

__all__ = [
    "IsotonicBlockStore", "BlockView", "pav_blocks", "finest_bit", "finer_scale",
    "check_exactness_scale", "upgrade_exactness_scale", "EXACTNESS_SCALE_RANGE",
    "residue_entry", "check_residues", "upgrade_residues", "merged_residue_bounds",
    "RESIDUE_UNKNOWN", "observed_residues", "WEIGHT_LIMIT",
]

# Below this many cells, pav_blocks runs in plain Python; above it, scipy.
_SMALL = 48


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
    from scipy.optimize import isotonic_regression  # only for long inputs: scipy is slow to import

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


def finest_bit(values: np.ndarray) -> int | None:
    """The exponent of the lowest set bit among the finite ``values`` > 0: the ``e``
    such that all are multiples of ``2**e``, as the store notes a weight or label sum
    (:attr:`IsotonicBlockStore.exactness_scale`); None when there is none.

    Examples
    --------
    >>> finest_bit(np.array([3.0, 0.75, 0.0])), finest_bit(np.array([0.0]))
    (-2, None)

    """
    v = values[np.isfinite(values) & (values > 0)]
    if not len(v):
        return None
    m, e = np.frexp(v)
    mant = np.ldexp(m, 53).astype(np.uint64)
    low = mant & (~mant + np.uint64(1))  # the lowest set bit of each mantissa
    return int(np.min(e - 53 + np.frexp(low.astype(np.float64))[1] - 1))


def finer_scale(*scales) -> int | None:
    """The finest of the exactness scales given (None: a store that held nothing), the
    one a store fed everything the others held would have.

    Examples
    --------
    >>> finer_scale(-3, None, 0), finer_scale(None, None)
    (-3, None)

    """
    return min((q for q in scales if q is not None), default=None)


def check_exactness_scale(state: dict, check) -> None:
    """Check a snapshot ``state``'s ``exactness_scale`` entry (None, or an int in
    :data:`EXACTNESS_SCALE_RANGE`) with ``check`` (``streamcal._snapshot.StateChecks``).

    Examples
    --------
    >>> from streamcal._snapshot import StateChecks
    >>> check_exactness_scale({"exactness_scale": -3}, StateChecks("CORP"))
    >>> check_exactness_scale({"exactness_scale": 2000}, StateChecks("CORP"))
    Traceback (most recent call last):
    ...
    ValueError: The snapshot entry state['exactness_scale'] of CORP must be an int in [-1074, 1023]. Got 2000 instead.

    """
    scale = check.entry(state, "exactness_scale")
    if scale is not None:
        check.int(scale, "state['exactness_scale']", *EXACTNESS_SCALE_RANGE)


def upgrade_exactness_scale(state):
    """A snapshot ``state`` holding a store's ``blocks`` (:meth:`to_lists`) written
    before the store kept its ``exactness_scale``: with the scale its cells give (what
    every restore derived then). A malformed entry is left as it is, to the checks.

    Examples
    --------
    >>> upgrade_exactness_scale({"blocks": [[[0.5], [2.0], [1.0], [2], 2.0, 1.0]]})
    {'blocks': [[[0.5], [2.0], [1.0], [2], 2.0, 1.0]], 'exactness_scale': 0}

    """
    if isinstance(state, dict) and "exactness_scale" not in state:
        try:
            sums = [v for block in state["blocks"] for v in (*block[1], *block[2])]
            scale = finest_bit(np.array(sums, dtype=np.float64))
        except (KeyError, IndexError, TypeError, ValueError):
            scale = None
        state = {**state, "exactness_scale": scale}
    return state


#: the largest residue bound a cell holds (relative to its weight): what is left of
#: sums whose events are not known (``CORP.revert``)
RESIDUE_UNKNOWN = 2.0**100

#: the most weight an isotonic store holds: the sum of its stored weights stays at or
#: below DBL_MAX - 2**1004 (2**-20 of DBL_MAX below it), so that its own sums, rounded
#: in any order (a leaf's cells, a cell's events: up to about 2**33 roundings of 2**-53
#: each), stay finite. A weight that would take the total past it is refused.
WEIGHT_LIMIT = math.ldexp(1.0 - 2.0**-20, 1024)


def residue_entry(store) -> list:
    """The snapshot entry ``residues`` of a store that removes events: ``[key, bound]``
    for each cell whose residue bound (:meth:`IsotonicBlockStore.residue_bounds`) is
    not 0, in key order. Removals decide from these bounds whether a cell is put back,
    so a restored copy needs them to decide the same.

    Examples
    --------
    >>> store = IsotonicBlockStore()
    >>> store.add(0.5, 1e6, 0.0); store.add(0.5, 0.1, 1.0); store.add(0.7, 1.0, 1.0)
    >>> [(x, r > 0) for x, r in residue_entry(store)]  # 1e6 + 0.1 rounded
    [(0.5, True)]
    >>> store.remove(0.5, 1e6, 0.0)  # 0.1 left with 1e6's rounding: deleted, 1 event with it
    1

    """
    xs = store.cells()[0]
    rs = store.residue_bounds()
    nz = rs != 0.0
    return [[x, r] for x, r in zip(xs[nz].tolist(), rs[nz].tolist())]


def merged_residue_bounds(a, b, merged) -> np.ndarray:
    """The residue bounds of the cells ``merged`` (``streamcal._merge.merge_cells`` of
    stores ``a``'s and ``b``'s cells: each key's sums ``a``'s plus ``b``'s): each
    part's residue plus the rounding of that addition (found exactly, TwoSum),
    relative to the merged weight, as the store adds a cell to one it holds.

    Examples
    --------
    >>> from streamcal._merge import merge_cells
    >>> a, b = IsotonicBlockStore(), IsotonicBlockStore()
    >>> a.add(0.5, 1.0, 1.0); b.add(0.5, 2.0**-60, 0.0); b.add(0.7, 1.0, 0.0)
    >>> merged_residue_bounds(a, b, merge_cells(a.cells(), b.cells())) > 0
    array([ True, False])

    """
    xs, ws, ss, _ = merged
    parts = []
    for store in (a, b):
        px, pw, ps, _ = store.cells()
        at = np.searchsorted(xs, px)
        full = [np.zeros(len(xs)) for _ in range(3)]
        for arr, vals in zip(full, (pw, ps, store.residue_bounds())):
            arr[at] = vals
        parts.append(full)
    (wa, sa, ra), (wb, sb, rb) = parts
    with np.errstate(invalid="ignore", divide="ignore"):
        err = np.abs(_sum_error(wa, wb, ws)) + np.abs(_sum_error(sa, sb, ss))
        out = (ra * (wa / ws) + rb * (wb / ws) + err / ws) * (1.0 + 2.0**-20)
    return np.minimum(np.where(ws > 0, out, 0.0), RESIDUE_UNKNOWN)


def _sum_error(a, b, s):
    """The rounding error of ``s = a + b`` as computed (Knuth's TwoSum, elementwise)."""
    bb = s - a
    return (a - (s - bb)) + (b - bb)


def check_residues(state: dict, check) -> None:
    """Check a snapshot ``state``'s ``residues`` entry (:func:`residue_entry`): pairs
    ``[key, bound]``, keys strictly increasing and each a cell of ``state['blocks']``,
    bounds in (0, 2**100], with ``check`` (``streamcal._snapshot.StateChecks``).

    Examples
    --------
    >>> from streamcal._snapshot import StateChecks
    >>> blocks = [[[0.5], [2.0], [1.0], [2], 2.0, 1.0]]
    >>> check_residues({"blocks": blocks, "residues": [[0.5, 1e-15]]}, StateChecks("CORP"))
    >>> check_residues({"blocks": blocks, "residues": [[0.25, 1e-15]]}, StateChecks("CORP"))
    Traceback (most recent call last):
    ...
    ValueError: The snapshot entry state['residues'][0][0] of CORP must be the key of a stored cell. Got 0.25 instead.

    """
    pairs = check.list(check.entry(state, "residues"), "state['residues']")
    try:  # a malformed 'blocks' entry is the blocks' checks' to report
        keys = {x for block in state["blocks"] for x in block[0]}
    except (KeyError, IndexError, TypeError):
        keys = None
    prev = -math.inf
    for i, pair in enumerate(pairs):
        where = f"state['residues'][{i}]"
        x, r = check.list(pair, where, n=2)
        x = check.real(x, where + "[0]")
        if keys is not None and x not in keys:
            check.fail(where + "[0]", "the key of a stored cell", x)
        check.require(x > prev, where + "[0]", "above the key before it", x)
        check.real(r, where + "[1]", 0.0, RESIDUE_UNKNOWN)
        if not r > 0.0:
            check.fail(where + "[1]", "a bound in (0, 2**100]", r)
        prev = x


def upgrade_residues(state):
    """A snapshot ``state`` written before stores kept residue bounds. Without a
    window (``state['window']`` absent or None) no event was removed by subtraction:
    none. With one, a cell may hold a residue of the events that left: its bound is
    what it is off the sums of the window's events of its key (correctly rounded),
    relative to its weight; none where it is not off. A malformed entry is left to
    the checks.

    Examples
    --------
    >>> upgrade_residues({"blocks": []})
    {'blocks': [], 'residues': []}
    >>> window = [[0.5, 1.0, 1.5, 0], [0.5, 0.0, 0.1, 1]]
    >>> upgrade_residues({"blocks": [[[0.5], [1.6000000000000003], [1.5], [2], 1.6, 1.5]],
    ...                   "window": window})["residues"]
    [[0.5, 1.3877801042704258e-16]]

    """
    if isinstance(state, dict) and "residues" not in state:
        residues = []
        if state.get("window") is not None:
            try:
                residues = observed_residues(state["blocks"], state["window"])
            except (KeyError, IndexError, TypeError, ValueError):
                residues = []
        state = {**state, "residues": residues}
    return state


def observed_residues(blocks, window) -> list:
    """``[key, bound]`` for each cell of ``blocks`` (:meth:`IsotonicBlockStore.to_lists`)
    whose sums are off those of the ``window``'s events of its key (``[key, label,
    weight, index]``, as ``IsotonicStream.window_events`` gives them), correctly
    rounded: the bound relative to its weight, rounded up to a float32.

    Examples
    --------
    >>> observed_residues([[[0.5], [2.0], [1.0], [2], 2.0, 1.0]],
    ...                   [[0.5, 1.0, 1.0, 0], [0.5, 0.0, 1.0, 1]])
    []

    """
    events: dict = {}
    for x, y, w, _ in window:
        if w > 0:
            events.setdefault(x, []).append((w, w * y))
    out = []
    for block in blocks:
        for x, W, S in zip(block[0], block[1], block[2]):
            held = events.get(x, [])
            off = abs(W - math.fsum(e[0] for e in held)) + abs(S - math.fsum(e[1] for e in held))
            if off > 0 and W > 0:
                out.append([x, _float_up(min(off / W * (1.0 + 2.0**-20), RESIDUE_UNKNOWN))])
    return out


def _float_up(v: float) -> float:
    """``v`` rounded up to a float32 value: the bounds a store holds are float32."""
    f = np.float32(v)
    if float(f) < v:
        f = np.nextafter(f, np.float32(np.inf), dtype=np.float32)
    return float(f)


# The store is compiled; it imports BlockView from here lazily.
from streamcal.core._pav import IsotonicBlockStore  # noqa: E402
from streamcal.core._pav_ops import EXACTNESS_SCALE_RANGE  # noqa: E402,F401

