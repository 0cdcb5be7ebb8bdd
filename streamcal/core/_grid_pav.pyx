"""The exact isotonic (PAV) store of a fixed grid of cells, compiled: a static implicit
tree in flat arrays whose nodes keep the bridge of their children's lower hulls.

:class:`streamcal.OnlineIsotonic` with ``resolution`` snaps every score to one of the
``K`` keys ``0 .. K - 1`` of its grid. The cells are known at construction, never
inserted nor removed; only their sums change. This store specialises the general one
(:mod:`streamcal.core._pav`, whose docstring defines cells, the cumulative-sum diagram
and blocks) to that case:

- Cell ``i`` (``1 <= i <= K``) holds grid key ``i - 1``; cell 0 is the sentinel whose
  point is the origin. Leaves hold ``B`` consecutive cells each (leaf ``j``: cells
  ``jB .. jB + B - 1``), ``P`` (a power of two) leaves form a complete binary tree in
  heap order (node 1 the root, node ``v``'s children ``2v``, ``2v + 1``, leaves at
  ``P .. 2P - 1``): no pointers, no rebalancing, no insertion, no memory moved.
- A leaf keeps the lower hull of the points of its present cells (weight > 0) in its
  local frame; an internal node keeps its totals and the bridge of its children's hulls
  (the general store's definition and descent: Overmars and van Leeuwen), its hull being
  the left child's up to the bridge, then the right child's. A node without present cells
  has an empty hull and its parent's hull is its sibling's.
- Every coordinate is an exact integer: all cell sums are multiples of ``2**q`` and the
  total weight stays below ``2**40`` units, so orientation tests are exact with 128-bit
  products. This is the general store's exact mode (sums below ``2**(q + 53)``) with room
  for the three-factor test of the bridge descent; the geometry decided is the same, and
  so are the blocks, and a block value ``dS / dW`` (an exact ratio of integers scaled by
  the same power of two, ``-500 <= q``) is the same double the general store computes.
  :meth:`add` refuses (returns 1, the store unchanged) an event that would leave that
  regime; the caller then moves the cells to the general store.

Costs, ``n`` the ``K + 1`` cells, ``B`` the leaf capacity, ``h = log2(P)`` the height:
:meth:`add` updates one leaf hull (at most ``2B`` cells scanned: the check below of
one side of an edge, then, when it fails, the scan) and the bridges of the ``h``
ancestors, each at worst a locate, the tangency tests and a simultaneous descent of
at most ``2 (h + log2 B) + 2`` steps with two locates: worst case
``O(B + h (h + log B))`` = O(log^2 n) for a fixed ``B``, whatever the stream (no
amortisation is needed: the tree never changes shape). The usual add is much cheaper
(the per-event kernels of ``streamcal/core/_grid_kernels.pxd``): the leaf keeps its
vertices when a check of the hull edge over the event's cell proves it (one side of
that edge scanned, ``k_leaf_same``), else its scan resumes at the last vertex
before the cell; the cells where a hull may have gained or lost vertices go up the
tree as an interval, and an ancestor's bridge end keeps its cached locate without a
descent when that interval misses it and its neighbours (or when the event provably
moved none of them, ``k_kept_locate``), its tangency tests skipped when the six
points tested moved together (``k_climb``). A read-out is a bit-set search and
one or two descents, ``O(h + log B)``. Memory ``O(n)``: about 62 bytes per cell. The
counters ``_op_hull`` (leaf cells scanned plus descent and tangency steps) and
``_op_nodes`` (ancestors updated) let tests check the bound by counting.

The block array. The tree redoes, on every add, work whose outcome (the blocks) changes
on about 1% of adds. Beside it the store can keep the fit as its blocks alone (the
hull's vertices as a bit set, each block's totals at its end cell;
``streamcal/core/_grid_blocks.pxd`` has the algorithm and its exactness argument): a
read-out is then two bit-set searches, and an add O(1) plus a scan of the cells of one
side of its block (about 50 cells on a random stream at ``K = 10,001``), the block
re-hulled only when the scan finds a point below its new chord. On a flat fit (labels
independent of the score, rare positives) the blocks span thousands of cells, so under
the default policy the store moves to the tree (rebuilt from the cells, O(K)) as soon
as a window of adds has scanned more than ``GA_SCAN_LIMIT`` cells per add, and tries the
block array again (rebuilt, O(K)) after a wait that doubles on each failure. Only one
representation is kept up to date at a time; the other is rebuilt when needed
(``_check`` and :meth:`hull` rebuild the tree). The counter ``_op_scan`` counts the
block array's cells scanned and poolings.

Examples
--------
>>> store = GridIsotonicStore(11)
>>> for x, y in [(1, 0.0), (5, 1.0), (3, 1.0), (7, 0.0)]:
...     store.add(x, 1.0, y)
0
0
0
0
>>> store.predict_step(2), store.predict_step(6), store.predict_linear(2)
(0.0, 0.6666666666666666, 0.3333333333333333)
>>> store.cells()[0].tolist()
[1.0, 3.0, 5.0, 7.0]
"""

cimport cython
from cpython.mem cimport PyMem_Malloc, PyMem_Free
from libc.string cimport memset
from libc.math cimport INFINITY, frexp, ldexp
from streamcal.core._search cimport bisect_left
from streamcal.core._grid_kernels cimport (
    K_NONE, k_bit_pred, k_bit_set, k_bit_succ, k_climb, k_leaf_same, k_lsb_exponent,
    k_scan, sc_grid_cross, sc_grid_triple,
)
from streamcal.core._grid_blocks cimport (
    GA_FIRST_WAIT, GA_MAX_WAIT, ga_add, ga_check_window, ga_start, ga_value,
)

import numpy as np

__all__ = ["GridIsotonicStore"]

cdef int NO_Q = 1 << 20
_POLICIES = {"auto": POLICY_AUTO, "never": POLICY_TREE, "always": POLICY_BLOCKS}
cdef double _LIMIT = 1099511627776.0  # 2**40: the total weight stays below, in units
cdef int _MIN_Q = -500                # the unit stays >= 2**-500: block sums normal


cdef inline int _vs(GV a, GV b, GV c, GV d) noexcept nogil:
    """Sign of the cross product (b - a) x (d - c)."""
    return sc_grid_cross(b.x - a.x, b.y - a.y, d.x - c.x, d.y - c.y)


cdef inline bint _meet_left_of_split(GV a, GV b, GV c, GV d, long long xs) noexcept nogil:
    """For lines l1 = ab and l2 = cd with slope(l1) < slope(l2): do they meet at an
    abscissa <= xs (l2(xs) >= l1(xs))? The general store's exact test."""
    cdef long long e = xs - b.x
    return sc_grid_triple(c.y - b.y, b.x - a.x, d.x - c.x, d.y - c.y,
                          (c.x - b.x) - e, b.y - a.y, e) >= 0


cdef inline void _alloc(void** p, size_t size):
    p[0] = PyMem_Malloc(size if size > 0 else 1)
    if p[0] == NULL:
        raise MemoryError()
    memset(p[0], 0, size)


@cython.final
cdef class GridIsotonicStore:
    """Exact isotonic regression (non-decreasing) of weighted labels in [0, 1] on the
    integer keys ``0 .. n_keys - 1`` of a grid, kept up to date as events are added.

    Parameters
    ----------
    n_keys
        Number of grid keys ``K`` (1 to 2**24).
    leaf_capacity
        Cells per leaf, 2 to 256 (small values exercise deep trees in tests).
    blocks
        Which representation the adds go to: ``"auto"`` (the default) the block array
        (``streamcal/core/_grid_blocks.pxd``: the fit's blocks, no tree; an add costs
        O(1) plus a scan of one side of its block) while its scans stay short, else the
        tree; ``"never"`` the tree only (its worst-case bound per add); ``"always"``
        the block array only (tests). The fit, and every read-out, is the same
        whichever holds it.

    Examples
    --------
    >>> store = GridIsotonicStore(4, leaf_capacity=2)
    >>> store.predict_step(1) is None
    True
    >>> store.add(3, 1.0, 1.0), store.add(0, 2.0, 0.5), store.add(2, 1.0, 0.0)
    (0, 0, 0)
    >>> store.predict_step(1), store.predict_step(2), store.predict_step(3)
    (0.3333333333333333, 0.3333333333333333, 1.0)

    """

    def __cinit__(self, int n_keys, int leaf_capacity=32, str blocks="auto"):
        if not 1 <= n_keys <= (1 << 24):
            raise ValueError(
                f"The 'n_keys' parameter of GridIsotonicStore must be an int in [1, 2**24]. "
                f"Got {n_keys!r} instead."
            )
        if not 2 <= leaf_capacity <= 256:
            raise ValueError(
                f"The 'leaf_capacity' parameter of GridIsotonicStore must be an int in "
                f"[2, 256]. Got {leaf_capacity!r} instead."
            )
        if blocks not in _POLICIES:
            raise ValueError(
                f"The 'blocks' parameter of GridIsotonicStore must be a str among "
                f"{sorted(_POLICIES)}. Got {blocks!r} instead."
            )
        self.policy = _POLICIES[blocks]
        self._arr_backoff = GA_FIRST_WAIT
        self.n_keys = n_keys
        self.leaf_capacity = leaf_capacity
        self.nc = n_keys + 1
        self.nleaf = (self.nc + leaf_capacity - 1) // leaf_capacity
        self.P = 1
        while self.P < self.nleaf:
            self.P <<= 1
        self.nw = (self.nc + 63) >> 6
        self.ns = (self.nw + 63) >> 6
        cdef size_t nc = self.nc, nn = 2 * self.P, nhv = self.nleaf * leaf_capacity
        _alloc(<void**> &self.cw, nc * sizeof(long long))
        _alloc(<void**> &self.cs, nc * sizeof(long long))
        _alloc(<void**> &self.cn, nc * sizeof(long long))
        _alloc(<void**> &self.bits, self.nw * sizeof(unsigned long long))
        _alloc(<void**> &self.summ, self.ns * sizeof(unsigned long long))
        _alloc(<void**> &self.nd, nn * sizeof(GNode))
        _alloc(<void**> &self.cl, 6 * nn * sizeof(long long))
        _alloc(<void**> &self.cr, 6 * nn * sizeof(long long))
        _alloc(<void**> &self.lfl, nn * sizeof(int))
        _alloc(<void**> &self.rfl, nn * sizeof(int))
        _alloc(<void**> &self.lks, 2 * nn * sizeof(int))
        _alloc(<void**> &self.rks, 2 * nn * sizeof(int))
        _alloc(<void**> &self.nh, self.nleaf * sizeof(int))
        _alloc(<void**> &self.hk, nhv * sizeof(int))
        _alloc(<void**> &self.hx, nhv * sizeof(long long))
        _alloc(<void**> &self.hy, nhv * sizeof(long long))
        _alloc(<void**> &self.ebits, self.nw * sizeof(unsigned long long))
        _alloc(<void**> &self.esumm, self.ns * sizeof(unsigned long long))
        _alloc(<void**> &self.bw, nc * sizeof(long long))
        _alloc(<void**> &self.bs, nc * sizeof(long long))
        self._clear()

    def __dealloc__(self):
        PyMem_Free(self.cw)
        PyMem_Free(self.cs)
        PyMem_Free(self.cn)
        PyMem_Free(self.bits)
        PyMem_Free(self.summ)
        PyMem_Free(self.nd)
        PyMem_Free(self.cl)
        PyMem_Free(self.cr)
        PyMem_Free(self.lfl)
        PyMem_Free(self.rfl)
        PyMem_Free(self.lks)
        PyMem_Free(self.rks)
        PyMem_Free(self.nh)
        PyMem_Free(self.hk)
        PyMem_Free(self.hx)
        PyMem_Free(self.hy)
        PyMem_Free(self.ebits)
        PyMem_Free(self.esumm)
        PyMem_Free(self.bw)
        PyMem_Free(self.bs)

    cdef void _clear(self) noexcept nogil:
        """Empty every cell (the sentinel alone) and rebuild the tree."""
        memset(self.cw, 0, self.nc * sizeof(long long))
        memset(self.cs, 0, self.nc * sizeof(long long))
        memset(self.cn, 0, self.nc * sizeof(long long))
        memset(self.bits, 0, self.nw * sizeof(unsigned long long))
        memset(self.summ, 0, self.ns * sizeof(unsigned long long))
        self.q = NO_Q
        self._uinv = 0.0
        self.arr_ok = False
        self._build_all()

    # ------------------------------------------------------------------ tree upkeep

    cdef void _leaf_update(self, int j) noexcept nogil:
        """Totals and own lower hull (strictly convex) of leaf ``j``. O(B)."""
        cdef int low
        self.nd[self.P + j].npres = k_scan(self, j, 0, j * self.leaf_capacity, &low)

    cdef void _leaf_add(self, int j, int c, bint new) noexcept nogil:
        """Leaf ``j``'s hull after an add to its cell ``c`` (``new``: it was empty), and
        the interval ``_dlo``, ``_dhi`` of the cells that may have gained or lost a
        vertex (``k_climb``). The vertices are kept when
        ``k_leaf_same`` proves it (those at cells >= c move by the event's sums);
        else the scan resumes at the last vertex before ``c`` (the scan's stack there
        is the hull's vertices up to it: a vertex of the hull is one of the hull of the
        points up to it). O(B)."""
        cdef int base = j * self.leaf_capacity, n0 = self.nh[j], n, a, b, m
        cdef int* hk = self.hk + base
        cdef int old[256]
        n = <int> bisect_left(hk, n0, c)   # the vertices at cells < c
        self._dlo = K_NONE
        self._dhi = -1
        if not new and n < n0 and k_leaf_same(self, j, n, c):
            for a in range(n, n0):
                self.hx[base + a] += self._edw
                self.hy[base + a] += self._eds
            self.nd[self.P + j].tw += self._edw
            self.nd[self.P + j].ts += self._eds
            return
        for a in range(n0):
            old[a] = hk[a]
        if n > 0:
            k_scan(self, j, n, hk[n - 1] + 1, &m)
        else:
            k_scan(self, j, 0, base, &m)
        self.nd[self.P + j].npres += new
        # the vertices that may differ: after the kept ones, before the common tail
        a = n0 - 1
        b = self.nh[j] - 1
        while a >= m and b >= m and old[a] == hk[b]:
            a -= 1
            b -= 1
        if a >= m:
            self._dlo = old[m]
            self._dhi = old[a]
        if b >= m:
            self._dlo = min(self._dlo, hk[m])
            self._dhi = max(self._dhi, hk[b])

    cdef void _internal_update(self, int u) noexcept nogil:
        """Totals and bridge (by :meth:`_bridge`) of node ``u`` from its children's
        (after an add, ``k_climb`` keeps the bridge when it still holds)."""
        cdef int l = 2 * u, r = 2 * u + 1
        self.nd[u].tw = self.nd[l].tw + self.nd[r].tw
        self.nd[u].ts = self.nd[l].ts + self.nd[r].ts
        self.nd[u].npres = self.nd[l].npres + self.nd[r].npres
        self._op_nodes += 1
        self.nd[u].bval = 0
        if not (self.nd[l].npres and self.nd[r].npres):
            return
        self._bridge(u)
        self._locate(l, self.nd[u].ak, self.cl + 6 * u, self.lfl + u, self.lks + 2 * u)
        self._locate(r, self.nd[u].bk, self.cr + 6 * u, self.rfl + u, self.rks + 2 * u)
        self.nd[u].bval = 1

    cdef bint _locate(self, int v, int K, long long* out, int* fl, int* ks) noexcept nogil:
        """Is cell ``K`` a vertex of the hull of node ``v``? If so, write it and its
        neighbours on that hull (``v``'s frame) to ``out`` (pred x, y, vertex x, y, succ
        x, y), which neighbours exist to ``fl`` and their cells to ``ks`` (pred, succ).
        One descent, O(h + log B)."""
        cdef long long ox = 0, oy = 0
        cdef int f = 0, lo, base, n
        while True:
            v = self._enter(v)
            self._op_hull += 1
            if v >= self.P:
                break
            if K <= self.nd[v].ak:
                if K == self.nd[v].ak and not (f & 2):
                    out[4] = self.nd[v].bx + ox
                    out[5] = self.nd[v].by + oy
                    ks[1] = self.nd[v].bk
                    f |= 2
                v = 2 * v
            elif K < self.nd[v].bk:
                return False
            else:
                if K == self.nd[v].bk and not (f & 1):
                    out[0] = self.nd[v].ax + ox
                    out[1] = self.nd[v].ay + oy
                    ks[0] = self.nd[v].ak
                    f |= 1
                ox += self.nd[2 * v].tw
                oy += self.nd[2 * v].ts
                v = 2 * v + 1
        base = (v - self.P) * self.leaf_capacity
        n = self.nh[v - self.P]
        lo = bisect_left(self.hk + base, n, K)
        if lo == n or self.hk[base + lo] != K:
            return False
        base += lo
        out[2] = self.hx[base] + ox
        out[3] = self.hy[base] + oy
        if not (f & 1) and lo > 0:
            out[0] = self.hx[base - 1] + ox
            out[1] = self.hy[base - 1] + oy
            ks[0] = self.hk[base - 1]
            f |= 1
        if not (f & 2) and lo + 1 < n:
            out[4] = self.hx[base + 1] + ox
            out[5] = self.hy[base + 1] + oy
            ks[1] = self.hk[base + 1]
            f |= 2
        fl[0] = f
        return True

    cdef inline int _enter(self, int v) noexcept nogil:
        """The node whose hull is the hull of ``v`` (skipping children without cells,
        whose weight is 0: no translation)."""
        while v < self.P:
            if self.nd[2 * v].npres == 0:
                v = 2 * v + 1
            elif self.nd[2 * v + 1].npres == 0:
                v = 2 * v
            else:
                break
        return v

    cdef inline void _side_enter(self, GSide* s, int v) noexcept nogil:
        """Point side ``s`` of a bridge descent at the hull of node ``v`` (its frame
        offset already in ``s``): the node whose hull it is, and a leaf's vertex range."""
        s.n = self._enter(v)
        if s.n >= self.P:
            s.base = (s.n - self.P) * self.leaf_capacity
            s.lo = 0
            s.hi = self.nh[s.n - self.P]

    cdef inline bint _side_points(self, GSide* s, GV* a, GV* b) noexcept nogil:
        """The edge ``a b`` that side ``s`` of a bridge descent tests next: its node's
        bridge, or the middle edge of its leaf's vertex range. True when that range is
        down to one vertex (``a`` alone; ``b`` not written)."""
        cdef int i
        if s.n >= self.P:
            if s.hi - s.lo == 1:
                s.m = s.lo + 1
                i = s.base + s.lo
                a.x = self.hx[i] + s.ox
                a.y = self.hy[i] + s.oy
                a.k = self.hk[i]
                return True
            s.m = (s.lo + s.hi) >> 1
            i = s.base + s.m
            a.x = self.hx[i - 1] + s.ox
            a.y = self.hy[i - 1] + s.oy
            a.k = self.hk[i - 1]
            b.x = self.hx[i] + s.ox
            b.y = self.hy[i] + s.oy
            b.k = self.hk[i]
            return False
        a.x = self.nd[s.n].ax + s.ox
        a.y = self.nd[s.n].ay + s.oy
        a.k = self.nd[s.n].ak
        b.x = self.nd[s.n].bx + s.ox
        b.y = self.nd[s.n].by + s.oy
        b.k = self.nd[s.n].bk
        return False

    cdef inline void _side_go(self, GSide* s, bint right) noexcept nogil:
        """Move side ``s`` of a bridge descent to the part of its hull left of the edge
        it tested (its first end kept) or right of it (its second end kept)."""
        if s.n >= self.P:
            if right:
                s.lo = s.m
            else:
                s.hi = s.m
        elif right:
            s.ox += self.nd[2 * s.n].tw
            s.oy += self.nd[2 * s.n].ts
            self._side_enter(s, 2 * s.n + 1)
        else:
            self._side_enter(s, 2 * s.n)

    cdef void _bridge(self, int u) noexcept nogil:
        """Bridge of the children's hulls by simultaneous descent (the general store's
        case analysis, exact). At most 2 (h + log2 B) + 2 steps."""
        cdef GSide L, R
        cdef long long xs = self.nd[2 * u].tw
        cdef bint lpt, rpt
        cdef int go   # 0: left side left, 1: left side right, 2: right side left, 3: right side right
        cdef GV a, b, c, d
        L.ox = 0
        L.oy = 0
        R.ox = xs
        R.oy = self.nd[2 * u].ts
        self._side_enter(&L, 2 * u)
        self._side_enter(&R, 2 * u + 1)
        while True:
            self._op_hull += 1
            lpt = self._side_points(&L, &a, &b)
            rpt = self._side_points(&R, &c, &d)
            if lpt and rpt:
                break
            if lpt:
                # tangent from the point a to the right hull: the rightmost touching vertex
                go = 3 if _vs(a, c, c, d) <= 0 else 2
            elif rpt:
                # tangent from the point c to the left hull: the leftmost touching vertex
                go = 0 if _vs(a, b, b, c) <= 0 else 1
            elif _vs(a, b, b, c) < 0 or _vs(a, b, b, d) < 0:
                go = 0   # a right point lies strictly below l1: the bridge's left end <= a
            elif _vs(a, c, c, d) < 0 or _vs(b, c, c, d) < 0:
                go = 3   # a left point lies strictly below l2: its right end >= d
            elif _vs(a, b, c, d) <= 0:
                go = 0   # l1 == l2: the bridge line; its leftmost left end is <= a
            elif _meet_left_of_split(a, b, c, d, xs):
                go = 1   # the left end >= b
            else:
                go = 2   # the right end <= c
            if go < 2:
                self._side_go(&L, go == 1)
            else:
                self._side_go(&R, go == 3)
        self.nd[u].ax = a.x
        self.nd[u].ay = a.y
        self.nd[u].ak = a.k
        self.nd[u].bx = c.x
        self.nd[u].by = c.y
        self.nd[u].bk = c.k

    cdef void _build_all(self) noexcept nogil:
        cdef int j, u
        for j in range(self.P):
            if j < self.nleaf:
                self._leaf_update(j)
            else:
                self.nd[self.P + j].tw = 0
                self.nd[self.P + j].ts = 0
                self.nd[self.P + j].npres = 0
        for u in range(self.P - 1, 0, -1):
            self._internal_update(u)
        self.tree_ok = True

    cdef void _ensure_tree(self) noexcept nogil:
        """Bring the tree up to date with the cells (after adds on the block array)."""
        if not self.tree_ok:
            self._build_all()

    cdef void _to_tree(self) noexcept nogil:
        """Leave the block array for the tree (its scans grew long): the next
        ``_arr_backoff`` adds go to the tree, and the wait after a next failure doubles."""
        self._ensure_tree()
        self.arr_ok = False
        self._arr_wait = self._arr_backoff
        self._arr_backoff = min(2 * self._arr_backoff, <long long> GA_MAX_WAIT)

    # ------------------------------------------------------------------ present cells

    cdef inline void _set_bit(self, int i) noexcept nogil:
        k_bit_set(self.bits, self.summ, i)

    cdef int _pred(self, int i) noexcept nogil:
        """The largest present cell <= i (0, the sentinel, if none)."""
        cdef int p = k_bit_pred(self.bits, self.summ, i)
        return 0 if p < 0 else p

    cdef int _succ(self, int i) noexcept nogil:
        """The smallest present cell >= i (-1 if none)."""
        return k_bit_succ(self.bits, self.summ, self.nc, self.ns, i)

    # ------------------------------------------------------------------ read-outs

    cdef double _edge_value(self, int c, int* ka, int* kb) noexcept nogil:
        """The block holding present cell ``c`` (> 0): its bounding hull vertices
        ``ka < c <= kb`` and its value. O(h + log B)."""
        cdef int v = 1, P = self.P, lo, base
        while v < P:
            if self.nd[2 * v].npres == 0:
                v = 2 * v + 1
            elif self.nd[2 * v + 1].npres == 0:
                v = 2 * v
            elif c <= self.nd[v].ak:
                v = 2 * v
            elif c <= self.nd[v].bk:
                ka[0] = self.nd[v].ak
                kb[0] = self.nd[v].bk
                return (<double> (self.nd[v].by - self.nd[v].ay)) / (<double> (self.nd[v].bx - self.nd[v].ax))
            else:
                v = 2 * v + 1
        base = (v - P) * self.leaf_capacity
        # the first hull vertex with key >= c (index >= 1)
        lo = bisect_left(self.hk + base, self.nh[v - P], c)
        ka[0] = self.hk[base + lo - 1]
        kb[0] = self.hk[base + lo]
        return ((<double> (self.hy[base + lo] - self.hy[base + lo - 1]))
                / (<double> (self.hx[base + lo] - self.hx[base + lo - 1])))

    cdef bint empty_c(self) noexcept nogil:
        return self.nd[1].tw == 0

    cdef double _value_of(self, int c, int* kb) noexcept nogil:
        """The value of the block holding present cell ``c`` (> 0) and its last cell
        ``kb``: from the block array when it is current, else from the tree (the same
        integer totals, so the same double)."""
        cdef int ka
        if self.arr_ok:
            return ga_value(self, c, kb)
        return self._edge_value(c, &ka, kb)

    cdef double predict_step_c(self, double x) noexcept nogil:
        """Fitted value at the largest key <= x (the first block's below every key), as
        :meth:`streamcal.core._pav.IsotonicBlockStore.predict_step`. Not empty."""
        cdef int kb
        cdef int c = self._pred(self._cell_of(x))
        if c == 0:
            c = self._succ(1)
        return self._value_of(c, &kb)

    cdef double predict_linear_c(self, double x) noexcept nogil:
        """:meth:`streamcal.core._pav.IsotonicBlockStore.predict_linear`, the same
        arithmetic on the same keys. Not empty."""
        cdef int kb, kb1, c1
        cdef double v0, v1, fkb
        cdef int c = self._pred(self._cell_of(x))
        if c == 0:
            return self._value_of(self._succ(1), &kb)
        v0 = self._value_of(c, &kb)
        fkb = <double> (kb - 1)
        if x <= fkb:
            return v0
        c1 = self._succ(kb + 1)
        if c1 < 0:
            return v0
        v1 = self._value_of(c1, &kb1)
        return v0 + (v1 - v0) * ((x - fkb) / (<double> (c1 - 1) - fkb))

    cdef inline int _cell_of(self, double x) noexcept nogil:
        """The cell of key ``x`` clipped to the grid (``x`` below 0: the sentinel)."""
        if not x >= 0.0:
            return 0
        if x >= self.n_keys - 1:
            return self.nc - 1
        return <int> x + 1

    # ------------------------------------------------------------------ update

    cdef int _prepare(self, double x, double w, double y) noexcept nogil:
        """The units of an event (integer key ``x`` in [0, K), weight ``w > 0``, label
        ``y`` in [0, 1]): 0, its sums in ``_edw``, ``_eds``; 2, the same after every
        cell and the root's totals were rescaled to a finer unit; 1 if its sums would
        leave the exact regime (the store unchanged)."""
        cdef double wy = w * y
        cdef double a = w * self._uinv, b = wy * self._uinv   # exact: powers of two
        cdef int e, nq = self.q, d = 0, i
        cdef double tot
        if not (0.0 <= x < self.n_keys) or x != <double> (<int> x):
            return 1
        if (a > 0.0 and a + <double> self.nd[1].tw < _LIMIT and a == <double> (<long long> a)
                and b == <double> (<long long> b) and (b != 0.0 or wy == 0.0)):
            # whole units of 2**q already (the usual case): no rescaling, exact sums
            self._edw = <long long> a
            self._eds = <long long> b
            return 0
        e = k_lsb_exponent(w)
        if e < nq:
            nq = e
        if wy != 0.0:
            e = k_lsb_exponent(wy)
            if e < nq:
                nq = e
        if nq < _MIN_Q:
            return 1
        if self.q != NO_Q:
            d = self.q - nq
        tot = ldexp(<double> self.nd[1].tw, d) + ldexp(w, -nq)
        if not tot < _LIMIT:
            return 1
        if d > 0:
            for i in range(self.nc):
                self.cw[i] <<= d
                self.cs[i] <<= d
            self.nd[1].tw <<= d
            self.nd[1].ts <<= d
        self.q = nq
        self._uinv = ldexp(1.0, -nq)
        self._edw = <long long> ldexp(w, -nq)
        self._eds = <long long> ldexp(wy, -nq)
        return 2 if d > 0 else 0

    cdef int add_c(self, double x, double w, double y) except -1 nogil:
        """Add one event (integer key ``x`` in [0, K), weight ``w > 0``, label ``y`` in
        [0, 1]) and return 0; or return 1, the store unchanged, if its sums would leave
        the exact regime (see the module docstring). On the tree O(B + h (h + log B));
        on the block array see ``_grid_blocks.pxd``."""
        cdef int r = self._prepare(x, w, y), c, j
        cdef bint new
        if r == 1:
            return 1
        c = <int> x + 1
        new = self.cw[c] == 0
        if new:
            self._set_bit(c)
        self.cw[c] += self._edw
        self.cs[c] += self._eds
        self.cn[c] += 1
        if self.policy == POLICY_BLOCKS or (self.policy == POLICY_AUTO and self._arr_wait <= 0):
            self.tree_ok = False
            self.nd[1].tw += self._edw
            self.nd[1].ts += self._eds
            self.nd[1].npres += new
            if r == 2 or not self.arr_ok:
                ga_start(self)
            else:
                ga_add(self, c)
            if self.policy == POLICY_AUTO and ga_check_window(self):
                self._to_tree()
            return 0
        self.arr_ok = False
        if self.policy == POLICY_AUTO:
            self._arr_wait -= 1
        self._ec = c
        self._ey = -1
        if not new and (y == 1.0 or y == 0.0):
            self._ey = <int> y   # kept locates may apply (k_kept_locate)
        if r == 2 or not self.tree_ok:
            self._build_all()
            return 0
        j = c // self.leaf_capacity
        self._leaf_add(j, c, new)
        k_climb(self, self.P + j, new)
        return 0

    # ------------------------------------------------------------------ Python API

    def add(self, double x, double w, double y):
        """Add one event; 0, or 1 if refused (the store unchanged): see :meth:`add_c`."""
        if not 0.0 < w < INFINITY:
            raise ValueError(f"GridIsotonicStore.add: w must be a finite float > 0. Got {w!r} instead.")
        if not 0.0 <= y <= 1.0:
            raise ValueError(f"GridIsotonicStore.add: y must be a float in [0, 1]. Got {y!r} instead.")
        return self.add_c(x, w, y)

    def predict_step(self, double x):
        """Fitted value at the largest key <= x; None when empty. O(h + log B)."""
        return None if self.empty_c() else self.predict_step_c(x)

    def predict_linear(self, double x):
        """Fit interpolated between blocks, as the general store's; None when empty."""
        return None if self.empty_c() else self.predict_linear_c(x)

    @property
    def n_cells(self):
        """Number of keys holding weight. O(1)."""
        return self.nd[1].npres - 1

    @property
    def on_blocks(self):
        """Whether the next add goes to the block array (else to the tree)."""
        return self.policy == POLICY_BLOCKS or (self.policy == POLICY_AUTO and self._arr_wait <= 0)

    @property
    def height(self):
        """Height ``h`` of the tree (levels of bridges above the leaves)."""
        cdef int h = 0, p = self.P
        while p > 1:
            p >>= 1
            h += 1
        return h

    def cells(self):
        """The present cells as numpy arrays ``(xs, ws, ss, ns)`` in key order, keys and
        sums as the general store holds them (exact). O(K)."""
        cdef int i, m = 0
        cdef double[::1] X, W, S
        cdef long long[::1] N
        n = self.nd[1].npres - 1
        xs = np.empty(n, dtype=np.float64)
        ws = np.empty(n, dtype=np.float64)
        ss = np.empty(n, dtype=np.float64)
        ns = np.empty(n, dtype=np.int64)
        X, W, S, N = xs, ws, ss, ns
        for i in range(1, self.nc):
            if self.cw[i] != 0:
                X[m] = i - 1
                W[m] = ldexp(<double> self.cw[i], self.q)
                S[m] = ldexp(<double> self.cs[i], self.q)
                N[m] = self.cn[i]
                m += 1
        return xs, ws, ss, ns

    def load(self, xs, ws, ss, ns):
        """Replace the content by the given cells (keys of the grid, positive weights,
        as :meth:`cells` gives them). Returns True, or False (the store left empty) if
        a key is off the grid or the sums would leave the exact regime. O(K)."""
        cdef double[::1] X = np.ascontiguousarray(xs, dtype=np.float64)
        cdef double[::1] W = np.ascontiguousarray(ws, dtype=np.float64)
        cdef double[::1] S = np.ascontiguousarray(ss, dtype=np.float64)
        cdef long long[::1] N = np.ascontiguousarray(ns, dtype=np.int64)
        cdef Py_ssize_t i, n = X.shape[0]
        cdef int q = NO_Q, e, c
        cdef double tot = 0.0
        self._clear()
        for i in range(n):
            if not (0.0 <= X[i] < self.n_keys and X[i] == <double> (<int> X[i])
                    and W[i] > 0.0 and 0.0 <= S[i] <= W[i]):
                return False
            if i > 0 and not X[i] > X[i - 1]:
                return False
            e = k_lsb_exponent(W[i])
            q = e if e < q else q
            if S[i] != 0.0:
                e = k_lsb_exponent(S[i])
                q = e if e < q else q
        if n == 0:
            return True
        if q < _MIN_Q:
            return False
        for i in range(n):
            tot += ldexp(W[i], -q)
        if not tot < _LIMIT:
            return False
        self.q = q
        self._uinv = ldexp(1.0, -q)
        for i in range(n):
            c = <int> X[i] + 1
            self.cw[c] = <long long> ldexp(W[i], -q)
            self.cs[c] = <long long> ldexp(S[i], -q)
            self.cn[c] = N[i]
            self._set_bit(c)
        self._build_all()
        return True

    def hull(self):
        """The vertices of the global lower hull as ``(cell, W, S)`` in units of 2**q:
        the blocks are its edges. O(vertices (h + log B)); tests."""
        out = []
        self._ensure_tree()
        self._collect(1, 0, 0, -1, 1 << 30, out)
        return out

    cdef _collect(self, int v, long long ox, long long oy, int lo, int hi, list out):
        """Append the vertices of node ``v``'s hull with cell in [lo, hi]."""
        cdef int j, base
        v = self._enter(v)
        if self.nd[v].npres == 0:
            return
        if v >= self.P:
            base = (v - self.P) * self.leaf_capacity
            for j in range(self.nh[v - self.P]):
                if lo <= self.hk[base + j] <= hi:
                    out.append((self.hk[base + j], self.hx[base + j] + ox, self.hy[base + j] + oy))
            return
        self._collect(2 * v, ox, oy, lo, min(hi, self.nd[v].ak), out)
        self._collect(2 * v + 1, ox + self.nd[2 * v].tw, oy + self.nd[2 * v].ts, max(lo, self.nd[v].bk), hi, out)

    @cython.wraparound(True)
    def _check(self):
        """Assert every invariant: present bits, totals as sums of children, each leaf
        hull and each node's hull (from its bridge) equal to the lower hull of its
        points recomputed by brute force, and the exact regime. O(K log K)."""
        cdef int v, i, lo, hi, j
        self._ensure_tree()
        assert self.q == NO_Q or self.q >= _MIN_Q, f"unit 2**{self.q} too small"
        assert self.nd[1].tw < _LIMIT, "total weight beyond the exact regime"
        for i in range(1, self.nc):
            present = bool(self.bits[i >> 6] >> (i & 63) & 1)
            assert present == (self.cw[i] > 0), f"cell {i}: present bit {present}"
            assert 0 <= self.cs[i] <= self.cw[i], f"cell {i}: label sum out of [0, w]"
            assert (self.cw[i] > 0) == (self.cn[i] > 0), f"cell {i}: count {self.cn[i]}"
        for i in range(self.nw):
            assert bool(self.summ[i >> 6] >> (i & 63) & 1) == (self.bits[i] != 0), "summary"
        for v in range(2 * self.P - 1, 0, -1):
            lo = v
            hi = v + 1
            while lo < self.P:
                lo *= 2
                hi *= 2
            lo = (lo - self.P) * self.leaf_capacity
            hi = min((hi - self.P) * self.leaf_capacity, self.nc)
            pts = []
            W = S = 0
            for i in range(lo, max(lo, hi)):
                if self.cw[i] > 0 or i == 0:
                    W += self.cw[i]
                    S += self.cs[i]
                    while len(pts) >= 2 and (
                        (pts[-1][1] - pts[-2][1]) * (S - pts[-1][2])
                        - (pts[-1][2] - pts[-2][2]) * (W - pts[-1][1])
                    ) <= 0:
                        pts.pop()
                    pts.append((i, W, S))
            assert self.nd[v].tw == W and self.nd[v].ts == S, f"node {v}: totals"
            got = []
            self._collect(v, 0, 0, -1, 1 << 30, got)
            assert got == pts, f"node {v}: hull {got} != {pts}"
        if self.arr_ok:
            # the block array: its ends are the global hull's vertices, its totals the
            # differences of their points
            hull = self.hull()
            ends = [i for i in range(self.nc) if self.ebits[i >> 6] >> (i & 63) & 1]
            assert ends == [k for k, _, _ in hull], f"block ends {ends} != hull {hull}"
            for i in range(self.nw):
                assert bool(self.esumm[i >> 6] >> (i & 63) & 1) == (self.ebits[i] != 0), "ends"
            for (_, w0, s0), (k, w1, s1) in zip(hull, hull[1:]):
                assert (self.bw[k], self.bs[k]) == (w1 - w0, s1 - s0), f"block {k}: totals"
