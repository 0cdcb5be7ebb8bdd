"""The read-outs, rebuild and checks of the compiled isotonic block store.

The bodies of the methods of :class:`streamcal.core._pav.IsotonicBlockStore` that are
not on the per-event path (cells and blocks as arrays, rebuild from cells, scaling,
the JSON-safe state, ``_check``); the class keeps them as thin methods calling these,
so its Python API is unchanged. Per-event C calls stay in ``_pav.pyx``.
"""

from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_RawFree
from libc.math cimport INFINITY, NAN, ldexp
from libc.string cimport memcpy

from streamcal.core._pav cimport NO_Q, QEXP_MIN, LEAF_CAP, IsotonicBlockStore, Leaf, Node, Sums
from streamcal.core._pav_tree cimport _free_tree, _new_leaf, _range, _rank_gt, _rank_le

from streamcal.core._pav_kernels cimport k_hypothetical
from streamcal.core._pav_leaf_chain cimport _leaf_cell, _leaf_pop, _leaf_push
from streamcal.core._pav_shape cimport k_build
from streamcal.core._pav_requalify cimport k_requalify
from streamcal.core._pav_residue cimport k_float_up, k_residue_after
from streamcal.core._pav_short cimport k_fill_short
from streamcal.core._pav_query cimport QLEAF_CAP, k_query

import numpy as np

if <int>QLEAF_CAP != <int>LEAF_CAP:  # the query's scan buffers hold one leaf
    raise ImportError("streamcal.core._pav_query: QLEAF_CAP must equal LEAF_CAP")


cdef list block_bounds(IsotonicBlockStore store):
    """``[(first key, last key), ...]`` of every block. O(b (log n + B)).

    A block is a maximal run of hull edges whose values are the same double: with
    non-dyadic weights spanning hundreds of binades, two edges whose slopes differ
    only below the rounding of their sums can both survive the geometric tests,
    yet PAV in floating point (whose comparisons are of those doubles) pools them,
    and so do the blocks reported here. Predictions are unaffected: such edges
    predict the same double."""
    cdef list out = []
    cdef double cur = -INFINITY, nk, ka, kb, v, prev = NAN
    if store.root.ncells <= 1:
        return out
    while True:
        nk = store._succ_key(cur)
        if nk == INFINITY:
            break
        store._edge_of(nk, &ka, &kb)
        v = store._block_value(cur, kb)
        if out and v == prev:
            out[len(out) - 1] = (out[len(out) - 1][0], kb)
        else:
            out.append((nk, kb))
        prev = v
        cur = kb
    return out


def canonical_blocks(IsotonicBlockStore store):
    """The body of :meth:`IsotonicBlockStore._canonical_blocks`."""
    xs, ws, ss, ns = cells(store)
    cdef Sums s
    cdef Py_ssize_t a = 0, b
    cdef double lo
    bounds = block_bounds(store)
    ends = np.searchsorted(xs, np.array([hi for _, hi in bounds], dtype=np.float64), side="right")
    out = []
    lo = -INFINITY
    for k, b in enumerate(ends.tolist()):
        hi = bounds[k][1]
        s = _range(store.root, lo, hi)
        out.append((xs[a:b], ws[a:b], ss[a:b], ns[a:b], s.W, s.S))
        a = b
        lo = hi
    return out


def arrays(IsotonicBlockStore store):
    """The body of :meth:`IsotonicBlockStore.arrays`."""
    bounds = block_bounds(store)
    cdef double prev_hi = -INFINITY
    vals = []
    for lo, hi in bounds:
        vals.append(store._block_value(prev_hi, hi))
        prev_hi = hi
    return (
        np.array([b[0] for b in bounds], dtype=np.float64),
        np.array([b[1] for b in bounds], dtype=np.float64),
        np.array(vals, dtype=np.float64),
    )


def blocks(IsotonicBlockStore store):
    """The body of :meth:`IsotonicBlockStore.blocks`."""
    from streamcal.core.pav import BlockView

    return tuple(
        BlockView(float(xs[0]), float(xs[len(xs) - 1]), S / W, W, int(ns.sum()), len(xs))
        for xs, ws, ss, ns, W, S in canonical_blocks(store)
    )


def cells(IsotonicBlockStore store):
    """The body of :meth:`IsotonicBlockStore.cells`."""
    return _cell_arrays(store, False)


def residue_bounds(IsotonicBlockStore store):
    """The body of :meth:`IsotonicBlockStore.residue_bounds`."""
    return _cell_arrays(store, True)


cdef object _cell_arrays(IsotonicBlockStore store, bint residues):
    """The cells in key order: ``(xs, ws, ss, ns)``, or with ``residues`` their
    residue bounds (float64). O(cells)."""
    cdef Py_ssize_t m = store.root.ncells - 1
    cdef Py_ssize_t mc = 0 if residues else m  # only the arrays asked for are filled
    xs = np.empty(mc, dtype=np.float64)
    ws = np.empty(mc, dtype=np.float64)
    ss = np.empty(mc, dtype=np.float64)
    ns = np.empty(mc, dtype=np.int64)
    rs = np.empty(m - mc, dtype=np.float64)
    cdef double[::1] X = xs, Wv = ws, Sv = ss, R = rs
    cdef long long[::1] Nv = ns
    cdef Py_ssize_t i = 0
    cdef Node* v = store.root
    cdef Leaf* L
    cdef int t
    # iterative in-order walk over the leaves
    cdef Node** st = <Node**> PyMem_Malloc((store.root.nleaves * 2 + 64) * sizeof(Node*))
    cdef Py_ssize_t top = 0
    st[top] = store.root
    top += 1
    while top > 0:
        top -= 1
        v = st[top]
        if v.leaf == NULL:
            st[top] = v.right
            st[top + 1] = v.left
            top += 2
            continue
        L = v.leaf
        for t in range(L.cnt):
            if L.n[t] == 0 and L.x[t] == -INFINITY:
                continue  # the sentinel
            if residues:
                R[i] = L.r[t]
            else:
                X[i] = L.x[t]
                Wv[i] = L.w[t]
                Sv[i] = L.s[t]
                Nv[i] = L.n[t]
            i += 1
    PyMem_Free(st)
    return rs if residues else (xs, ws, ss, ns)


def live_blocks(IsotonicBlockStore store):
    """The body of :meth:`IsotonicBlockStore.live_blocks`."""
    old = {} if store._live is None else store._live
    out = []
    new = {}
    for xs, ws, ss, ns, W, S in canonical_blocks(store):
        key = (float(xs[0]), float(xs[len(xs) - 1]))
        b = old.get(key)
        if b is None or b.W != W or b.S != S:
            b = _LiveBlock(key[0], key[1], W, S)
        new[key] = b
        out.append(b)
    store._live = new
    return out


def scale_by_power_of_two(IsotonicBlockStore store, int exponent):
    """The body of :meth:`IsotonicBlockStore.scale_by_power_of_two`."""
    cdef bint was_exact = store.qscale > 0.0
    cdef long long e = <long long> store.qexp + exponent
    scale_tree(store, store.root, exponent)
    if store.qexp != NO_Q:
        store._set_qexp(<int> max(min(e, 2000), -2000))  # _set_qexp: at least QEXP_MIN
        # the threshold of exact totals before, in the scaled coordinates: the
        # classification changes only where the new qexp leaves (or re-enters) the
        # range of exact scales
        store._qthr = ldexp(1.0, <int> max(min(53 + e, 2000), -2000)) if was_exact else 0.0
        k_requalify(store)


cdef void scale_tree(IsotonicBlockStore store, Node* v, int e) noexcept:
    cdef Leaf* L
    cdef int t
    cdef double s
    store._clock += 1
    v.stamp = store._clock
    if v.leaf == NULL:
        v.lcs = 0
        v.rcs = 0
    v.W = ldexp(v.W, e)
    v.S = ldexp(v.S, e)
    v.Wlo = ldexp(v.Wlo, e)
    v.Slo = ldexp(v.Slo, e)
    if v.leaf != NULL:
        L = v.leaf
        for t in range(L.cnt):
            L.w[t] = ldexp(L.w[t], e)
            s = ldexp(L.s[t], e)
            if store.track_residues and L.w[t] != 0.0 and ldexp(s, -e) != L.s[t]:  # subnormal
                L.r[t] = k_residue_after(L.r[t], L.w[t], L.w[t], ldexp(1.0, -1074))
            L.s[t] = s
        for t in range(L.nh):
            L.hx[t] = ldexp(L.hx[t], e)
            L.hy[t] = ldexp(L.hy[t], e)
        return
    v.ax = ldexp(v.ax, e)
    v.ay = ldexp(v.ay, e)
    v.bx = ldexp(v.bx, e)
    v.by = ldexp(v.by, e)
    for t in range(v.nsh):
        v.sh[t].x = ldexp(v.sh[t].x, e)
        v.sh[t].y = ldexp(v.sh[t].y, e)
    scale_tree(store, v.left, e)
    scale_tree(store, v.right, e)


def drop_light_cells(IsotonicBlockStore store, double threshold):
    """The body of :meth:`IsotonicBlockStore.drop_light_cells`."""
    xs, ws, ss, ns = cells(store)
    keep = ws >= threshold
    dropped = int((~keep).sum())
    if dropped:
        rebuild(store, xs[keep], ws[keep], ss[keep], ns[keep], None,
                residue_bounds(store)[keep])
    return dropped


#: the coarsest exactness scale a store can hold: the lowest set bit of a finite double
#: (2**1023 is its own)
QEXP_MAX = 1023
#: every value ``IsotonicBlockStore.exactness_scale`` can take (None aside)
EXACTNESS_SCALE_RANGE = (QEXP_MIN, QEXP_MAX)


def rebuild(IsotonicBlockStore store, xs, ws, ss, ns, qexp=None, residues=None):
    """The body of :meth:`IsotonicBlockStore.rebuild`."""
    cdef const double[::1] X = np.ascontiguousarray(xs, dtype=np.float64)
    cdef const double[::1] R = None if residues is None else np.ascontiguousarray(
        residues, dtype=np.float64)
    cdef const double[::1] Wv = np.ascontiguousarray(ws, dtype=np.float64)
    cdef const double[::1] Sv = np.ascontiguousarray(ss, dtype=np.float64)
    cdef const long long[::1] Nv = np.ascontiguousarray(ns, dtype=np.int64)
    cdef Py_ssize_t m = X.shape[0], i = 0, nl, k, got = 0, used = 0
    cdef int fill = (3 * store.cap) // 4
    cdef Node** nodes
    cdef Leaf* L
    if qexp is not None and not (isinstance(qexp, int) and not isinstance(qexp, bool)
                                 and QEXP_MIN <= qexp <= QEXP_MAX):
        raise ValueError(  # before anything changes
            f"The 'qexp' argument of IsotonicBlockStore.rebuild must be None or an int in "
            f"[{QEXP_MIN}, {QEXP_MAX}]. Got {qexp!r} instead."
        )
    if R is not None and not (R.shape[0] == m and (np.asarray(R) >= 0.0).all()
                              and (np.asarray(R) <= 2.0**100).all()):
        raise ValueError(  # before anything changes
            "The 'residues' argument of IsotonicBlockStore.rebuild must be None or one "
            f"bound in [0, 2**100] per cell. Got {np.asarray(R)!r} instead."
        )
    if fill < 2:
        fill = 2
    nl = (m + 1 + fill - 1) // fill
    # every node first (nl leaves, nl - 1 internal ones): out of memory, the store is
    # left as it was
    nodes = <Node**> PyMem_Malloc((2 * nl - 1) * sizeof(Node*))
    if nodes == NULL:
        raise MemoryError()
    try:
        while got < 2 * nl - 1:
            nodes[got] = store._alloc_node(got < nl)
            got += 1
    except MemoryError:
        for k in range(got):
            _free_tree(nodes[k])
        PyMem_Free(nodes)
        raise
    _free_tree(store.root)
    store.root = NULL
    store.qexp = NO_Q
    store.qscale = 0.0
    store.fscale = 0.0
    store._inexact = False  # every hull is computed afresh below
    # the scale of exact coordinates first, from every cell (and, restoring a store,
    # its own qexp, which may be finer than its cells need: its history's), so that
    # every leaf is computed under the same one (_pav_requalify.pxd)
    for i in range(m):
        store._note_value(Wv[i])
        store._note_value(Sv[i])
    if qexp is not None and qexp < store.qexp:
        store._set_qexp(qexp)
    store._qpend = False
    i = 0
    for k in range(nl):
        L = nodes[k].leaf
        if k == 0:
            L.x[0] = -INFINITY
            L.w[0] = 0.0
            L.s[0] = 0.0
            L.n[0] = 0
            L.r[0] = 0.0
            L.cnt = 1
        while L.cnt < fill and i < m:
            L.x[L.cnt] = X[i]
            L.w[L.cnt] = Wv[i]
            L.s[L.cnt] = Sv[i]
            L.n[L.cnt] = Nv[i]
            L.r[L.cnt] = 0.0 if R is None else k_float_up(R[i])
            L.cnt += 1
            i += 1
        store._leaf_update(nodes[k])
    store.root = k_build(store, nodes, 0, nl, nodes + nl, &used)
    PyMem_Free(nodes)


def to_lists(IsotonicBlockStore store):
    """The body of :meth:`IsotonicBlockStore.to_lists`."""
    return [
        [xs.tolist(), ws.tolist(), ss.tolist(), ns.tolist(), W, S]
        for xs, ws, ss, ns, W, S in canonical_blocks(store)
    ]


def from_lists(cls, data, qexp, residues, leaf_capacity):
    """The body of :meth:`IsotonicBlockStore.from_lists`."""
    store = cls(leaf_capacity)
    xs, ws, ss, ns = [], [], [], []
    for bx, bw, bs, bn, _W, _S in data:
        xs.extend(bx)
        ws.extend(bw)
        ss.extend(bs)
        ns.extend(bn)
    X = np.array(xs, dtype=np.float64)
    R = None
    if residues:  # [key, bound] pairs (streamcal.core.pav.residue_entry)
        keys = np.array([p[0] for p in residues], dtype=np.float64)
        at = np.searchsorted(X, keys)
        if not len(X) or not ((at < len(X)) & (X[np.minimum(at, len(X) - 1)] == keys)).all():
            raise ValueError("The 'residues' argument of IsotonicBlockStore.from_lists must "
                             f"name stored keys. Got {residues!r} instead.")
        R = np.zeros(len(X))
        R[at] = [p[1] for p in residues]
    if xs or qexp is not None:
        rebuild(store, X, np.array(ws, dtype=np.float64), np.array(ss, dtype=np.float64),
                np.array(ns, dtype=np.int64), qexp, R)
    return store


def check(IsotonicBlockStore store, double rtol=1e-9):
    """The body of :meth:`IsotonicBlockStore._check`."""
    check_node(store, store.root, NULL)
    assert store.root.leaf != NULL or store.root.nleaves >= 2
    xs, ws, ss, ns = cells(store)
    assert len(xs) == store.root.ncells - 1, "cell count"
    assert (np.diff(xs) > 0).all(), "keys not strictly increasing"
    assert (ws > 0).all() and (ns >= 1).all(), "empty cell"
    assert ((ss >= -rtol * ws) & (ss - ws <= rtol * ws)).all(), "label sum out of range"
    prev = -INFINITY
    nb = 0
    for bx, bw, bs, bn, W, S in canonical_blocks(store):
        nb += 1
        where = f"block {nb}: {[bx.tolist(), bw.tolist(), bs.tolist(), W, S]!r}"[:2000]
        assert W > 0, "non-positive block weight " + where
        v = S / W
        # strictly increasing as ratios of the stored sums; with non-dyadic sums two
        # neighbours whose ratios differ by rounding may print as the same double
        assert v > prev, f"values not strictly increasing ({prev} then {v}) " + where
        assert abs(store.predict_step(float(bx[0])) - v) <= rtol * max(abs(v), 1e-300) + 1e-15, (
            "stale value " + where
        )
        prev = v
        cw = np.cumsum(bw)[:len(bw) - 1]
        cs = np.cumsum(bs)[:len(bs) - 1]
        assert (cs >= v * cw - rtol * W).all(), "a prefix lies below the block mean " + where
    # hull edges with the same double value are reported as one block
    assert nb <= store.n_blocks_c(), "vertex count"
    if nb:
        bounds = block_bounds(store)
        assert bounds[len(bounds) - 1][1] == xs[len(xs) - 1], "blocks do not end at the last cell"


cdef void check_leaf_chain(IsotonicBlockStore store, Node* v) except *:
    """With the fast loop's exact coordinates, the leaf's hull against the plain
    monotone chain over every cell, on a copy: no resume and no filter (the reference
    of k_leaf_update's shortcut and of k_leaf_stretch)."""
    cdef Leaf* L = v.leaf
    cdef Leaf* T
    cdef double cw = 0.0, cs = 0.0, lz = -INFINITY, lf = -INFINITY
    cdef int t, nh = 0
    if not store._fast(v):
        return
    T = _new_leaf(store.cap)
    if T == NULL:
        raise MemoryError()
    try:
        T.cnt = L.cnt
        memcpy(T.x, L.x, L.cnt * sizeof(double))
        memcpy(T.w, L.w, L.cnt * sizeof(double))
        memcpy(T.s, L.s, L.cnt * sizeof(double))
        for t in range(L.cnt):
            _leaf_cell(T, t, &cw, &cs, &lz, &lf)
            nh = _leaf_pop(T, nh, cw, cs)
            nh = _leaf_push(T, nh, t, cw, cs, lz, lf)
        assert L.nh == nh, "leaf hull size (plain chain)"
        for t in range(nh):
            assert (L.hx[t] == T.hx[t] and L.hy[t] == T.hy[t] and L.hidx[t] == T.hidx[t]
                    and L.hz[t] == T.hz[t] and L.hf[t] == T.hf[t]), "leaf hull (plain chain)"
    finally:
        PyMem_RawFree(T)


cdef void check_node(IsotonicBlockStore store, Node* v, Node* parent) except *:
    cdef double W, S, ax, ay, bx, by, akey, bkey, zmax, fmax
    cdef Py_ssize_t nvl, nvr
    cdef int t, nh
    cdef double hx[LEAF_CAP]
    cdef double hy[LEAF_CAP]
    cdef double hz[LEAF_CAP]
    cdef double hf[LEAF_CAP]
    cdef unsigned char hidx[LEAF_CAP]
    cdef Leaf* L
    assert v.parent == parent, "parent pointer"
    if v.leaf != NULL:
        L = v.leaf
        assert 1 <= L.cnt <= store.cap, f"leaf size {L.cnt}"
        for t in range(1, L.cnt):
            assert L.x[t - 1] < L.x[t], "leaf keys"
        W, S, nh = v.W, v.S, L.nh
        memcpy(hx, L.hx, nh * sizeof(double))
        memcpy(hy, L.hy, nh * sizeof(double))
        memcpy(hidx, L.hidx, nh)
        memcpy(hz, L.hz, nh * sizeof(double))
        memcpy(hf, L.hf, nh * sizeof(double))
        zmax, fmax = v.zmax, v.fmax
        store._leaf_update(v)
        assert v.W == W and v.S == S, "leaf totals"
        assert L.nh == nh, "leaf hull size"
        for t in range(nh):
            assert L.hx[t] == hx[t] and L.hy[t] == hy[t] and L.hidx[t] == hidx[t], "leaf hull"
            assert L.hz[t] == hz[t] and L.hf[t] == hf[t], "leaf hull label runs"
        assert (v.zmax, v.fmax) == (zmax, fmax), "leaf label runs"
        check_leaf_chain(store, v)
        return
    assert v.left != NULL and v.right != NULL, "internal node with one child"
    check_node(store, v.left, v)
    check_node(store, v.right, v)
    assert v.left.ncells > 0 and v.right.ncells > 0
    big = max(v.left.nleaves, v.right.nleaves)
    W, S = v.W, v.S
    ax, ay, bx, by, akey, bkey, nvl, nvr = v.ax, v.ay, v.bx, v.by, v.akey, v.bkey, v.nvl, v.nvr
    runs = (v.zmax, v.fmax, v.az, v.af, v.bz, v.bf)
    nsh = v.nsh
    short = [(v.sh[t].x, v.sh[t].y, v.sh[t].k, v.sh[t].z, v.sh[t].f) for t in range(nsh)]
    store._internal_update(v, False)
    assert v.W == W and v.S == S, "node totals"
    assert (v.ax, v.ay, v.bx, v.by, v.akey, v.bkey) == (ax, ay, bx, by, akey, bkey), "bridge"
    assert (v.zmax, v.fmax, v.az, v.af, v.bz, v.bf) == runs, "label runs"
    assert (v.nvl, v.nvr) == (nvl, nvr), "vertex counts"
    assert (nvl, nvr) == (_rank_le(v.left, akey), _rank_gt(v.right, bkey) + 1), (
        f"vertex counts {(nvl, nvr)} != ranks "
        f"{(_rank_le(v.left, akey), _rank_gt(v.right, bkey) + 1)}"
    )
    # a kept short hull is the one its (checked) children give; none kept, or none
    # computed yet, is allowed (a node last updated without exact coordinates, or not
    # asked for since its update): the check leaves it as it was
    if nsh > 0:
        assert nsh == nvl + nvr, "short hull size"
        k_fill_short(store, v)
        assert not store._exact(v) or (v.nsh == nsh and short == [
            (v.sh[t].x, v.sh[t].y, v.sh[t].k, v.sh[t].z, v.sh[t].f) for t in range(nsh)]), (
            "short hull")
    v.nsh = nsh
    assert v.kmin == v.left.kmin and v.left.kmin < v.right.kmin, "key order"
    assert v.kmid == v.right.kmin, "the right child's first key kept in its parent"


class _LiveBlock:
    """A block's totals, as returned by :attr:`IsotonicBlockStore.live_blocks`."""

    __slots__ = ("score_min", "score_max", "W", "S")

    def __init__(self, score_min, score_max, W, S):
        self.score_min = score_min
        self.score_max = score_max
        self.W = W
        self.S = S




cdef object _dump_node(Node* v):
    if v.leaf != NULL:
        return ("leaf", [v.leaf.x[t] for t in range(v.leaf.cnt)], [v.leaf.w[t] for t in range(v.leaf.cnt)],
                [v.leaf.s[t] for t in range(v.leaf.cnt)], [v.leaf.x[v.leaf.hidx[t]] for t in range(v.leaf.nh)])
    return ("node", (v.W, v.S), (v.akey, v.ax, v.ay), (v.bkey, v.bx, v.by), v.nvl, v.nvr,
            _dump_node(v.left), _dump_node(v.right))


def _dump(IsotonicBlockStore store):
    """The tree as nested tuples (debugging)."""
    return _dump_node(store.root)


def hypothetical_paths(IsotonicBlockStore store, double x, double w, double y, bint pair=False):
    """The hypothetical fit at ``x`` both ways, for tests: ``(read-only, inserted)``,
    the read-only query's value (``_pav_query.k_query``; None when its guards send it to
    the other path) and that of inserting, reading and restoring (``k_hypothetical``).
    With ``pair`` (``y`` ignored): each a pair, the fits with ``(x, w, 0)`` and with
    ``(x, w, 1)``. Empty store: None both ways."""
    cdef double v0, v1, u0, u1
    cdef bint ok
    if store.root.ncells <= 1:
        return None, None
    if pair:
        ok = k_query(store, x, w, 0.0, &v1, &v0)
        u0 = k_hypothetical(store, x, w, 0.0, &u1)
        return ((v0, v1) if ok else None), (u0, u1)
    ok = k_query(store, x, w, y, NULL, &v0)
    u0 = k_hypothetical(store, x, w, y, NULL)
    return (v0 if ok else None), u0
