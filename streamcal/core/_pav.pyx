"""The exact isotonic (PAV) block store, compiled: a balanced tree over all cells whose
nodes keep the bridge of their children's lower hulls (Overmars and van Leeuwen).

Cells and points. A *cell* is one distinct score key ``x`` with total weight ``w``,
weighted label sum ``s`` and event count ``n``. In key order the cells draw the
cumulative-sum diagram (CSD): cell ``t`` contributes the point ``P_t`` = (sum of the
weights, sum of the label sums) of cells ``0..t``. A sentinel cell (key ``-inf``, weight
0) always comes first, so its point is the origin. The isotonic regression is the
slope of the greatest convex minorant of the CSD: its *blocks* (maximal level sets) are
the edges of the lower hull, a block's value its weighted mean. Collinear hull points
are not vertices, so block values strictly increase (equal neighbours pooled).

The tree. Leaves hold up to ``leaf_capacity`` (128 by default, at most 256) cells in C arrays,
so a new key moves O(B) memory, never O(m). Every node keeps its subtree totals (sums of
its children's: nothing is ever kept by subtraction) and, for an internal node, the
*bridge* of its children's hulls: vertex ``a`` of the left child's hull and vertex ``b``
of the right child's such that every point of the node lies on or above the line ``ab``
(``a`` the leftmost, ``b`` the rightmost such vertex). Coordinates are in the node's
LOCAL frame (measured from the point before its first cell), so a change in one cell
translates every later point implicitly: only the nodes on that cell's path change.
The hull of a node is the left child's hull up to ``a``, then the right child's from
``b``: kept only when short (below). A leaf stores its own hull (indices, coordinates).

Algorithms.

- Bridge of a node: a simultaneous descent of the two children's hulls (Overmars and van
  Leeuwen's case analysis, with ties resolved so that hulls stay strictly convex): each
  step discards half of one side, O(depth + log B) steps.
- Update of a cell: O(B) in the leaf (hull recomputed), then the bridge of each of the
  O(log n) ancestors: O(log^2 n) orientation tests per event, amortised (the tree is
  weight-balanced by partial rebuilding, and a leaf is split or merged every Omega(B)
  updates). With exact coordinates a node first checks whether its previous bridge is
  still the bridge (its keys located in the children's hulls, O(depth + log B), the
  off-path child's locate cached; four exact tangency tests) and descends only if
  not: the same bridge, the same O(log^2 n) bound.
- Short hulls: with exact coordinates a node whose hull has at most 6 vertices keeps
  them; when its parent's kept bridge fails, the parent walks the two lists before any
  descent (a few exact tests, certified as above; ``_op_short`` counts them): nearly
  flat fits (no skill, scores in key order) have short hulls at every level.
- Cache: a node keeps its last locate of each bridge key in each child (child's frame).
  It stays right while the child is unchanged, and through one add to the child of a
  label-1 event after the vertex's right neighbour (the points before it keep their
  place, so does that stretch of hull) or of a label-0 event at or before its left
  neighbour (the points from it on move together, and so does their hull: coordinates
  translated, ranks from the kept end unchanged); a removal is the reverse
  translation, so the same holds for a label-0 event removed after the right
  neighbour and a label-1 event removed at or before the left one (unless the cell
  removed from is named by the kept locate); see ``_cache_survives``
  (``_op_reused`` counts them). A locate's descent stops at the first node (the child
  or below) whose bridge ends at the key with a current cache (``_locate_at_bridge``,
  O(1) from there: ``_op_hull`` counts the nodes visited). Together they cut
  the hull steps of an add on a random stream of 1e6 events by a third. Operation
  counters (``_op_nodes``, ``_op_hull``, ``_op_moved``) let tests check the bound.
- The block holding a key: descend by bridge keys, O(log n); its value: with exact
  coordinates the slope of that edge (exact sums), else the range sums of its cells
  from subtree totals, O(log n + B) -- never a difference of inexact cumulative sums,
  which would lose all digits of a light block after heavy cells.
- The number of blocks and a block's index: vertex ranks, O(log n).

Exactness. Orientation tests use a filter. When every cell sum is a multiple of a power
of two ``2**q`` and the total weight is below ``2**(q + 53)`` (integer or dyadic weights:
the calibrators' usual case), every coordinate is exact and the test is decided exactly
with 128-bit integers. Otherwise the floating-point determinant is trusted when it
exceeds a rigorous bound on the error of the coordinates (in the bridge descent, of
vectors summed in the children's own frames, the cells between them apart, so that
the bound is relative to each vector's own cells and not to the node's total: light
cells after heavy ones are decided there too); below it the two vectors are recomputed
as range sums of their own cells (resolving a light block after heavy cells; a leaf's
chain takes its edges' cells by index) and the determinant is evaluated from their
double-double values with FMA products: a geometric decision, the same in every frame
(each factor scaled by its own power of two, so that slopes below 2**-1022 are still
ordered). The descent's other test, where the lines of its two current edges meet, is
likewise filtered only when both edges are wider than the coordinates' error (an edge
of light cells after heavy ones may have a zero or negative computed width) and else
decided from range sums of the cells (a cubic in double-double); where c lies on the
left edge's line (b on the right one) by the orientation tests, ties included, they
decide it, so that all decisions fit one point set. Cells whose weights span far more
than the 106 bits of the sums (short half-lives, user weights across the double range)
are pooled as exact PAV pools them, up to the tie band (slopes within 8 units of
roundoff pool). Totals are kept in double-double, so a range sum rounds to the same
double whatever the tree's shape: a store restored from a snapshot (a differently
shaped tree) predicts bit for bit as the original. ``_op_fallback`` counts fallbacks.
"""

cimport cython
from cpython.mem cimport PyMem_RawMalloc, PyMem_RawFree
from libc.string cimport memmove, memcpy
from libc.math cimport fabs, ldexp, frexp, INFINITY, NAN, isfinite

from streamcal.core._search cimport bisect_right
from streamcal.core._pav_tree cimport (
    _dd_add, _edge_at, _edge_keys, _free_node, _free_tree, _leaf_rank_le, _new_leaf_node, _new_node,
    _prefetch_keys, _prefetch_node, _range, _rank_le,
)

import numpy as np
from streamcal.core._pav_kernels cimport (  # per-event kernels, inline (see those files)
    k_bridge, k_bridge_still_valid, k_cache_survives, k_leaf_update, k_note_cell, k_vs,
)
from streamcal.core._pav_orient cimport _TWO53, k_edge_sign, k_meet_left_of_split, k_vsign, sc_pav_ctzll
from streamcal.core._pav_query cimport k_hyp  # the read-only hypothetical query
from streamcal.core._pav_short cimport k_short_bridge  # nearly flat fits
from streamcal.core._pav_kept cimport k_bridge_kept_inexact  # forgetting, real weights
from streamcal.core._pav_shape cimport (  # rebalancing and spare nodes, memory-safe
    k_rebuild_subtree, k_release, k_reserve, k_reserve_for, k_split_leaf, k_take_spares)
from streamcal.core._pav_requalify cimport k_exact_threshold, k_requalify  # qexp moves
from streamcal.core._pav_residue cimport k_cell_add, k_cell_remove, k_float_up  # windows
from streamcal.core._pav_pair cimport k_pair_begin, k_pair_flush  # a window's event

from streamcal.core import _pav_ops  # read-outs, rebuild, checks: off the per-event path

__all__ = ["IsotonicBlockStore"]

# weight balance: a child may hold at most this fraction of its parent's leaves (+1)
cdef double _ALPHA = 0.75

cdef int _lsb_exponent(double v) noexcept nogil:
    """Exponent of the lowest set bit of ``v`` (> 0, finite)."""
    cdef int e
    cdef double m = frexp(v, &e)
    cdef unsigned long long mant = <unsigned long long> (m * _TWO53)
    return e - 53 + sc_pav_ctzll(mant)


@cython.final
cdef class IsotonicBlockStore:
    """Exact isotonic regression (non-decreasing) of weighted labels in [0, 1] on float
    keys, kept up to date under insertions and deletions of single events.

    Keys ``x`` are floats (the caller may pre-round them onto a grid). Weights must be
    positive and finite; labels are in [0, 1]. See the module docstring of
    :mod:`streamcal.core._pav` for the data structure; the per-event costs are
    amortised O(log^2 n) for :meth:`add` and :meth:`remove` and O(log n + B) for
    :meth:`predict_step` and :meth:`predict_linear` (``n`` distinct keys, ``B`` the
    leaf capacity), whatever the shape of the fit.

    Parameters
    ----------
    leaf_capacity
        Cells per leaf bucket, 4 to 256 (small values exercise splits and merges).

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

    def __cinit__(self, int leaf_capacity=LEAF_CAP_DEFAULT, bint track_residues=True):
        if not 4 <= leaf_capacity <= LEAF_CAP:
            raise ValueError(
                f"The 'leaf_capacity' parameter of IsotonicBlockStore must be an int in "
                f"[4, {LEAF_CAP}]. Got {leaf_capacity!r} instead."
            )
        self.cap = leaf_capacity
        self.track_residues = track_residues
        self.root = NULL
        self._ck = CH_ANY
        self._cnode = self._stop = NULL
        self._dirty = 0
        self._alloc_budget = -1
        self._reset_empty()

    def __dealloc__(self):
        _free_tree(self.root)
        self.release_c()
        self.root = NULL

    cdef void _reset_empty(self) except *:
        cdef Node* v = self._alloc_node(True)  # before the old tree goes
        cdef Leaf* L = v.leaf
        _free_tree(self.root)
        L.cnt = 1
        L.x[0] = -INFINITY
        L.w[0] = 0.0
        L.s[0] = 0.0
        L.n[0] = 0
        L.r[0] = 0.0
        self.root = v
        self.qexp = NO_Q
        self.qscale = self.fscale = 0.0
        self._qpend = False
        self._stop = NULL  # no deferred update (_pav_pair.pxd) outlives the old tree
        self._leaf_update(v)

    # ------------------------------------------------------------------ exactness

    cdef inline void _note_value(self, double v) noexcept nogil:
        cdef int e
        if v != 0.0:
            e = _lsb_exponent(fabs(v))
            if e < self.qexp:
                self._set_qexp(e)

    cdef void _set_qexp(self, int e) noexcept nogil:
        if not self._qpend:  # the first change since the tree last matched qexp
            self._qpend = True
            self._qthr = k_exact_threshold(self)
        self.qexp = e = max(e, QEXP_MIN)  # every double is a multiple of 2**-1074
        if -1000 <= e <= 1000:
            self.qscale = ldexp(1.0, -e)
        else:
            self.qscale = 0.0  # never exact
        # the double products of the fast tests (coordinates below 2**(e + 26)) would
        # underflow below 2**-1022, or overflow, outside this range: exact 128-bit
        # integers decide there
        self.fscale = self.qscale if -500 <= e <= 480 else 0.0

    cdef inline bint _exact(self, Node* frame) noexcept nogil:
        return self.qscale > 0.0 and frame.W * self.qscale < _TWO53

    cdef int _vsign(self, Node* frame, Pt a, Pt b, Pt c, Pt d) noexcept nogil:
        """Sign of the cross product (b - a) x (d - c), for points with a.k < b.k and
        c.k < d.k in ``frame``'s coordinates (orientation of a, b, d when b == c)."""
        return k_vsign(self, frame, a, b, c, d)

    cdef inline int _orient(self, Node* frame, Pt a, Pt b, Pt c) noexcept nogil:
        """> 0 when a, b, c (keys increasing) turn strictly upwards (b strictly below
        the line ac), 0 when collinear."""
        return self._vsign(frame, a, b, b, c)

    cdef inline int _edge_sign(self, Leaf* L, int i0, int i1, int i2, double uw, double us,
                               double vw, double vs) noexcept nogil:
        """Sign of u x v for the edges (i0, i1], (i1, i2] of a leaf's chain without exact
        coordinates, from sums of their own cells (accurate relative to each edge, not to
        the frame's totals as coordinates are), :meth:`_vsign`'s decisions bit for bit."""
        return k_edge_sign(self, L, i0, i1, i2, uw, us, vw, vs)

    cdef inline int _vs(self, Node* frame, bint fast, Pt a, Pt b, Pt c, Pt d) noexcept nogil:
        return k_vs(self, frame, fast, a, b, c, d)

    cdef inline bint _fast(self, Node* frame) noexcept nogil:
        """Coordinates of ``frame`` are exact integers (in units of 2**qexp) < 2**26,
        and their products exact doubles (see ``fscale``)."""
        return self.fscale > 0.0 and frame.W * self.fscale < 67108864.0

    cdef bint _meet_left_of_split(self, Node* frame, Pt a, Pt b, Pt c, Pt d, double xs,
                                  Node* left) noexcept nogil:
        """For lines l1 = ab and l2 = cd with slope(l1) < slope(l2): do they meet at an
        abscissa <= xs (i.e. l2(xs) >= l1(xs))?"""
        return k_meet_left_of_split(self, frame, a, b, c, d, xs, left)

    # ------------------------------------------------------------------ node upkeep

    cdef void _leaf_update(self, Node* v) noexcept nogil:
        """Totals and own lower hull of a leaf. O(B)."""
        k_leaf_update(self, v)

    cdef int _internal_update(self, Node* u, bint reuse=True) except -1 nogil:
        """Totals, bridge and vertex counts of an internal node from its children. With
        ``reuse``, the node's previous bridge is kept when it is still the bridge (see
        :meth:`_bridge_still_valid`), else taken from the children's short hulls
        (``_pav_short.pxd``) or found by descent."""
        cdef Node* l = u.left
        cdef Node* r = u.right
        u.ostamp = u.stamp
        u.onv = u.nvl + u.nvr
        u.W = l.W
        u.Wlo = l.Wlo
        u.S = l.S
        u.Slo = l.Slo
        _dd_add(&u.W, &u.Wlo, r.W, r.Wlo)
        _dd_add(&u.S, &u.Slo, r.S, r.Slo)
        u.N = l.N + r.N
        u.ncells = l.ncells + r.ncells
        u.nleaves = l.nleaves + r.nleaves
        u.kmin = l.kmin
        u.kmid = r.kmin
        u.zmax = r.zmax if r.zmax > l.zmax else l.zmax
        u.fmax = r.fmax if r.fmax > l.fmax else l.fmax
        # the kept bridge, else the one of the children's short hulls, else by descent
        if not reuse or not (self._bridge_still_valid(u) or k_short_bridge(self, u)):
            self._bridge(u)
        u.nsh = -(u.nvl + u.nvr <= SHORT_HULL)  # computed when asked (k_fill_short)
        self._clock += 1
        u.stamp = self._clock
        self._op_nodes += 1

    cdef bint _bridge_still_valid(self, Node* u) noexcept nogil:
        """Is the bridge kept from before the last change of a child still the bridge?
        Its keys must still be hull vertices of the children (found with their hull
        neighbours by one descent each, O(depth + log B), or with exact coordinates
        taken from the node's cache of that descent when the child did not change
        since), and the tangency tests at its ends must hold: the left neighbour of a
        strictly above the line ab, the right one on or above, the left neighbour of b
        on or above, the right one strictly above. Exact tests decide the unique bridge
        (leftmost a, rightmost b), so the result is the descent's, bit for bit; without
        exact coordinates, see ``k_bridge_kept_inexact``. If so, the coordinates and
        vertex counts are refreshed."""
        return k_bridge_still_valid(self, u) if self._exact(u) else k_bridge_kept_inexact(self, u)

    cdef bint _cache_survives(self, Node* child, double* c, int fl, Py_ssize_t* rank,
                              bint rank_from_left) noexcept nogil:
        """Is a locate cached in ``child``'s frame (``c``, ``fl``, ``rank``: see Node)
        still right after the change ``_ck`` just made to ``child``? If so, bring it up
        to date and return True. Exact coordinates only (why it holds: the comment of
        ``k_cache_survives``, ``_pav_kernels.pxd``)."""
        return k_cache_survives(self, child, c, fl, rank, rank_from_left)

    cdef int _bridge(self, Node* u) except -1 nogil:
        """Bridge of the children's hulls by simultaneous descent. O(depth + log B)."""
        k_bridge(self, u)
        u.bvalid = 1
        u.lcs = 0
        u.rcs = 0

    cdef int _fix_path(self, Node* v) except -1 nogil:
        """Recompute ``v`` and its ancestors; rebuild the highest unbalanced one. The
        path's siblings, which their updates read, are prefetched all at once first."""
        cdef Node* scape = NULL
        cdef Node* w = v
        cdef Node* u = v.parent
        cdef Py_ssize_t big
        while u != NULL:
            _prefetch_node(u.right if u.left == w else u.left)
            w = u
            u = u.parent
        if v.leaf != NULL:
            self._leaf_update(v)
        else:
            self._cnode = NULL
            self._internal_update(v)
        u = v.parent
        while u != NULL and u != self._stop:  # _stop: see _pav_pair.pxd
            self._cnode = v
            self._internal_update(u)
            v = u
            big = u.left.nleaves if u.left.nleaves > u.right.nleaves else u.right.nleaves
            if big > _ALPHA * u.nleaves + 1:
                scape = u
            u = u.parent
        self._ck = CH_ANY
        self._cnode = NULL
        self._dirty = 0
        if scape != NULL:
            u = k_rebuild_subtree(self, scape)
            u = u.parent
            while u != NULL:
                self._internal_update(u)
                u = u.parent
        k_requalify(self)  # after a change of qexp, the nodes off the path

    cdef void _replace_child(self, Node* old, Node* new) noexcept nogil:
        cdef Node* p = old.parent
        new.parent = p
        if p == NULL:
            self.root = new
        elif p.left == old:
            p.left = new
        else:
            p.right = new

    # ------------------------------------------------------------------ navigation

    cdef inline Node* _leaf_for(self, double x) noexcept nogil:
        """The leaf whose key range holds ``x``, its keys prefetched (_prefetch_keys)."""
        cdef Node* v = self.root
        while v.leaf == NULL:
            v = v.right if x >= v.kmid else v.left
        _prefetch_keys(v.leaf)
        return v

    cdef double _pred_key(self, double x) noexcept nogil:
        """The largest key <= x (the sentinel's -inf if none)."""
        cdef Node* v = self._leaf_for(x)
        cdef int j = bisect_right(v.leaf.x, v.leaf.cnt, x)
        return v.leaf.x[j - 1]

    cdef double _succ_key(self, double k) noexcept nogil:
        """The smallest key > k (+inf if none)."""
        cdef Node* v = self.root
        cdef double best = INFINITY
        cdef int j
        while v.leaf == NULL:
            if k < v.kmid:
                best = v.kmid
                v = v.left
            else:
                v = v.right
        j = bisect_right(v.leaf.x, v.leaf.cnt, k)
        return v.leaf.x[j] if j < v.leaf.cnt else best

    cdef void _edge_of(self, double c, double* ka, double* kb) noexcept nogil:
        """Keys of the block holding key ``c`` > -inf: cells ka < key <= kb."""
        cdef int j
        cdef Node* v = _edge_at(self.root, c, &j)
        _edge_keys(v, j, ka, kb)

    cdef inline double _block_value(self, double ka, double kb) noexcept nogil:
        cdef Sums s = _range(self.root, ka, kb, self._exact(self.root))
        return s.S / s.W

    # ------------------------------------------------------------------ C API

    cdef int check_add_c(self, double w, str owner, str method) except -1:
        if not (w > 0.0 and isfinite(w) and isfinite(self.root.W + w)):
            from streamcal._validation import argument_error

            raise argument_error(
                ValueError, "w", owner, method,
                "a finite real number > 0 that keeps the total weight finite", w,
            )
        return 0

    cdef int reserve_c(self, int splits) except -1 nogil:
        return k_reserve(self, splits)

    cdef int reserve_for_c(self, double x, double k, bint pair=False) except -1 nogil:
        return k_pair_begin(self, x, k) if pair else k_reserve_for(self, x, k)

    cdef int pair_end_c(self) except -1 nogil:  # after reserve_for_c(x, k, True)
        return k_pair_flush(self) if self._stop != NULL else 0

    cdef void release_c(self) noexcept nogil:
        k_release(self)

    cdef Node* _alloc_node(self, bint leaf) except NULL nogil:
        """A new node; MemoryError (nothing changed) out of memory or of test allowance."""
        if self._alloc_budget == 0:
            with gil:
                raise MemoryError()
        if self._alloc_budget > 0:
            self._alloc_budget -= 1
        return _new_leaf_node(self.cap) if leaf else _new_node()

    def _limit_allocations(self, long long n=-1):
        """Tests: ``n`` more nodes may be allocated, then MemoryError (-1: no limit)."""
        self._alloc_budget = n

    cdef int add_c(self, double x, double w, double y) except -1 nogil:
        return self._add(x, w, w * y, 1, 0.0,
                         CH_PREFIX if y == 1.0 else (CH_SUFFIX if y == 0.0 else CH_ANY))

    cdef int add_cell_c(self, double x, double w, double s, long long n, float r) except -1 nogil:
        return self._add(x, w, s, n, r, CH_PREFIX if s == w else (CH_SUFFIX if s == 0.0 else CH_ANY))

    cdef int _add(self, double x, double w, double wy, long long n, float r, int kind) except -1 nogil:
        """Add sums ``(w, wy)`` of ``n`` events (residue bound ``r``, relative to ``w``)
        to the cell of key ``x``, new if none; ``kind``: the shape of the change."""
        cdef Node* v = self._leaf_for(x)
        cdef Leaf* L = v.leaf
        cdef int j = bisect_right(L.x, L.cnt, x) - 1
        cdef int m
        if L.x[j] == x:
            k_cell_add(self.track_residues, &L.r[j], &L.w[j], &L.s[j], w, wy, r)
            L.n[j] += n
        else:
            if L.cnt >= self.cap:
                v = k_split_leaf(self, v, x)
                L = v.leaf
                j = bisect_right(L.x, L.cnt, x) - 1
            j += 1
            m = L.cnt - j
            if m > 0:
                memmove(&L.x[j + 1], &L.x[j], m * sizeof(double))
                memmove(&L.w[j + 1], &L.w[j], m * sizeof(double))
                memmove(&L.s[j + 1], &L.s[j], m * sizeof(double))
                memmove(&L.n[j + 1], &L.n[j], m * sizeof(long long))
                memmove(&L.r[j + 1], &L.r[j], m * sizeof(float))
                self._op_moved += m
            L.x[j] = x
            L.w[j] = w
            L.s[j] = wy
            L.n[j] = n
            L.r[j] = r if self.track_residues else 0.0
            L.cnt += 1
        self._note_value(w)
        self._note_value(wy)
        # the shape of the change, for the locate caches of the path (_cache_survives)
        self._ck = kind
        self._cx = x
        self._cdw = w
        self._cds = wy
        self._cnew = L.n[j] == n
        self._crem = False
        k_note_cell(self, j, w, wy, n, 1 if self._cnew else 0)  # the hull before cell j is kept
        self._fix_path(v)
        return 0

    cdef long remove_c(self, double x, double w, double y) except -1 nogil:
        cdef Node* v = self._leaf_for(x)
        cdef Leaf* L = v.leaf
        cdef int j = bisect_right(L.x, L.cnt, x) - 1
        cdef double cw_left, cs_left
        cdef float r_left
        cdef long long count
        cdef long dropped = 0
        cdef int m
        if j < 0 or L.x[j] != x or L.n[j] == 0:
            with gil:
                raise KeyError(x)
        count = L.n[j]
        if count == 1 or not k_cell_remove(L.r[j], L.w[j], L.s[j], w, w * y,
                                           &cw_left, &cs_left, &r_left):
            dropped = <long> (count - 1)
            self._note_removal(x, -L.w[j], -L.s[j])
            m = L.cnt - j - 1
            if m > 0:
                memmove(&L.x[j], &L.x[j + 1], m * sizeof(double))
                memmove(&L.w[j], &L.w[j + 1], m * sizeof(double))
                memmove(&L.s[j], &L.s[j + 1], m * sizeof(double))
                memmove(&L.n[j], &L.n[j + 1], m * sizeof(long long))
                memmove(&L.r[j], &L.r[j + 1], m * sizeof(float))
                self._op_moved += m
            L.cnt -= 1
            k_note_cell(self, j, self._cdw, self._cds, -count, -1)
            self._after_delete(v)
        else:
            self._note_removal(x, cw_left - L.w[j], cs_left - L.s[j])
            # what is left may be finer than any sum was (after a rebuild's qexp)
            self._note_value(cw_left)
            self._note_value(cs_left)
            L.w[j] = cw_left
            L.s[j] = cs_left
            L.r[j] = r_left
            L.n[j] = count - 1
            k_note_cell(self, j, self._cdw, self._cds, -1, 0)
            self._fix_path(v)
        k_requalify(self)  # _after_delete may end without a path to fix
        return dropped

    cdef inline void _note_removal(self, double x, double dw, double ds) noexcept nogil:
        """The shape of a removal from the cell of key ``x``, for the locate caches of
        the path (:meth:`_cache_survives`): the cell's sums change by ``(dw, ds)``
        (``dw < 0``; the whole cell when it is deleted), so the points from ``x`` on are
        translated by that vector. With ``ds == 0`` (label-0 events left) the points
        before ``x`` keep their place relative to the hull's edges before it; with ``ds
        == dw`` (label-1 events left) the points from ``x`` on keep theirs."""
        self._ck = CH_PREFIX if ds == 0.0 else (CH_SUFFIX if ds == dw else CH_ANY)
        self._cx = x
        self._cdw = dw
        self._cds = ds
        self._cnew = False
        self._crem = True

    cdef int _after_delete(self, Node* v) except -1 nogil:
        """Restore the tree after a cell left leaf ``v``: drop an empty leaf, merge a
        small one into its sibling leaf, then recompute the path."""
        cdef Node* p = v.parent
        cdef Node* sib
        cdef Node* lft
        cdef Node* rgt
        cdef Leaf* A
        cdef Leaf* B
        if p == NULL:
            self._fix_path(v)
            return 0
        sib = p.right if p.left == v else p.left
        if v.leaf.cnt == 0:
            self._dirty = 0  # no leaf update follows
            self._replace_child(p, sib)
            _free_node(v)
            _free_node(p)
            if sib.parent != NULL:
                self._fix_path(sib.parent)
            return 0
        if sib.leaf != NULL and 4 * v.leaf.cnt < self.cap and 4 * (v.leaf.cnt + sib.leaf.cnt) <= 3 * self.cap:
            lft = p.left
            rgt = p.right
            A = lft.leaf
            B = rgt.leaf
            memcpy(&A.x[A.cnt], &B.x[0], B.cnt * sizeof(double))
            memcpy(&A.w[A.cnt], &B.w[0], B.cnt * sizeof(double))
            memcpy(&A.s[A.cnt], &B.s[0], B.cnt * sizeof(double))
            memcpy(&A.n[A.cnt], &B.n[0], B.cnt * sizeof(long long))
            memcpy(&A.r[A.cnt], &B.r[0], B.cnt * sizeof(float))
            self._op_moved += B.cnt
            A.cnt += B.cnt
            self._dirty = 0  # a merged leaf's hull is computed afresh
            self._replace_child(p, lft)
            _free_node(rgt)
            _free_node(p)
            self._fix_path(lft)
            return 0
        self._fix_path(v)
        return 0

    cdef double _value_at(self, double c) noexcept nogil:
        # the value of the block holding key c (one home of the step read-out); with
        # exact coordinates the slope of its edge where _edge_at finds it: the block's
        # exact sums, so the range sums' double, without the leaves at its ends
        cdef double ka, kb
        cdef int j
        cdef Node* v = _edge_at(self.root, c, &j)
        cdef Leaf* L = v.leaf
        if self._exact(self.root):
            if L == NULL:
                return (v.by - v.ay) / (v.bx - v.ax)
            if L.hexact:
                return (L.hy[j] - L.hy[j - 1]) / (L.hx[j] - L.hx[j - 1])
        _edge_keys(v, j, &ka, &kb)  # one descent either way
        return self._block_value(ka, kb)

    cdef double _step_key(self, double x) noexcept nogil:
        # the key the step read-out at x uses: the largest key <= x, else the first key
        cdef double c = self._pred_key(x)
        return self._succ_key(c) if c == -INFINITY else c

    cdef double predict_step_c(self, double x) noexcept nogil:
        if self.root.ncells <= 1:
            return NAN
        return self._value_at(self._step_key(x))

    cdef double predict_linear_c(self, double x) noexcept nogil:
        cdef double c, ka, kb, v0, v1, x1, ka1, kb1
        if self.root.ncells <= 1:
            return NAN
        c = self._pred_key(x)
        if c == -INFINITY:
            return self._value_at(self._succ_key(c))
        self._edge_of(c, &ka, &kb)
        v0 = self._block_value(ka, kb)
        if x <= kb:
            return v0
        x1 = self._succ_key(kb)
        if x1 == INFINITY:
            return v0
        self._edge_of(x1, &ka1, &kb1)
        v1 = self._block_value(ka1, kb1)
        return v0 + (v1 - v0) * ((x - kb) / (x1 - kb))

    cdef double prior_step_c(self, double x, double w, double m) except? -1.0 nogil:
        """The step read-out at ``x`` under a prior (:mod:`streamcal.core.prior`): the
        fit, at the cell ``c`` the step read-out uses (the largest key <= ``x``, else the
        first key), of the cells plus one pseudo-event ``(c, w, m)``; the store is left
        as it was. Non-decreasing in ``x``. O(log^2 n) amortised."""
        if self.root.ncells <= 1:
            return NAN
        return self.hypothetical_c(self._step_key(x), w, m)

    cdef double prior_linear_c(self, double x, double w, double m) except? -1.0 nogil:
        """:meth:`prior_step_c` read as ``predict_linear_c`` reads the fit: in the gap
        between the last key ``kb`` of a block and the first key ``x1`` of the next,
        linear between the prior read-outs at ``kb`` and ``x1``; elsewhere the step
        read-out. Non-decreasing in ``x``. O(log^2 n) amortised."""
        cdef double c, ka, kb, v0, v1, x1
        if self.root.ncells <= 1:
            return NAN
        c = self._pred_key(x)
        if c == -INFINITY:
            return self.prior_step_c(x, w, m)
        self._edge_of(c, &ka, &kb)
        if x <= kb:
            return self.hypothetical_c(c, w, m)
        x1 = self._succ_key(kb)
        if x1 == INFINITY:
            return self.hypothetical_c(c, w, m)
        v0 = self.hypothetical_c(kb, w, m)
        v1 = self.hypothetical_c(x1, w, m)
        return v0 + (v1 - v0) * ((x - kb) / (x1 - kb))

    cdef Py_ssize_t n_blocks_c(self) noexcept nogil:
        return self.root.nvl + self.root.nvr - 1

    # ------------------------------------------------------------------ Python API

    def __len__(self):
        """Number of blocks. O(1)."""
        return self.n_blocks_c()

    @property
    def n_cells(self):
        """Number of distinct keys stored. O(1)."""
        return self.root.ncells - 1

    @property
    def leaf_capacity(self):
        """Cells per leaf bucket."""
        return self.cap

    def add(self, double x, double w, double y):
        """Add one event (key ``x``, weight ``w > 0``, label ``y`` in [0, 1]). Amortised
        O(log^2 n). Raises ValueError naming ``w`` (the store unchanged) if ``w`` is not
        a finite positive number or would make the total weight overflow."""
        self.check_add_c(w, "IsotonicBlockStore", "add")
        self.add_c(x, w, y)

    def remove(self, double x, double w, double y):
        """Remove one event previously added with the same ``(x, w, y)``; KeyError if
        no cell has key ``x``. The cell is deleted when its last event goes. Amortised
        O(log^2 n).

        Returns the number of *other* events deleted with the cell: 0, unless the
        rounding residue of what is left could exceed ``2**-44`` of it, or hides a label
        sum of 0 or of the weight (a bound kept per cell: ``_pav_residue.pxd``; never
        with integer or dyadic weights). The caller puts their sums back (add_cell)."""
        return self.remove_c(x, w, y)

    def predict_step(self, double x):
        """Fitted value at the largest key <= x (the first block's below all keys).
        None when empty. O(log n + B)."""
        if self.root.ncells <= 1:
            return None
        return self.predict_step_c(x)

    def predict_linear(self, double x):
        """Fit interpolated linearly between the last key of a block and the first key
        of the next one, constant within blocks and clipped at both ends (scikit-learn's
        ``IsotonicRegression(out_of_bounds="clip")``). None when empty. O(log n + B)."""
        if self.root.ncells <= 1:
            return None
        return self.predict_linear_c(x)

    def _canonical_blocks(self):
        """Per block ``(xs, ws, ss, ns, W, S)``: numpy slices of the cells, and the
        block's totals as range sums (double-double, rounded once: the same doubles
        whatever the tree's shape, and the ones predictions use). O(cells)."""
        return _pav_ops.canonical_blocks(self)

    @property
    def _values(self):
        """The blocks' fitted values, in score order (a list; tests). O(b log n)."""
        return [S / W for _, _, _, _, W, S in self._canonical_blocks()]

    def arrays(self):
        """Return ``(starts, ends, values)`` numpy arrays, one entry per block. O(b log n)."""
        return _pav_ops.arrays(self)

    def blocks(self):
        """Read-only views of the blocks, in score order (totals summed cell by cell, so
        they do not depend on the tree's shape). O(cells)."""
        return _pav_ops.blocks(self)

    def cells(self):
        """All cells as numpy arrays ``(xs, ws, ss, ns)`` in key order. O(cells)."""
        return _pav_ops.cells(self)

    def residue_bounds(self):
        """Per cell in key order (float64), a bound on the rounding residue of its sums
        relative to its weight (0 unless their weights do not add exactly:
        ``_pav_residue.pxd``). Snapshots of stores that remove events keep them."""
        return _pav_ops.residue_bounds(self)

    def add_cell(self, double x, double w, double s, long long n, double residue=0.0):
        """Put back a cell :meth:`remove` deleted: key ``x``, weight ``w`` and label
        sum ``s`` of its ``n`` events, ``residue`` the bound on their rounding relative
        to ``w`` (added to the cell's sums if the key is held)."""
        if not (w > 0.0 and 0.0 <= s <= w and n >= 1 and 0.0 <= residue <= 2.0**100):
            raise ValueError(f"add_cell needs w > 0, 0 <= s <= w, n >= 1, 0 <= residue <= 2**100. "
                             f"Got w={w!r}, s={s!r}, n={n!r}, residue={residue!r}.")
        self.check_add_c(w, "IsotonicBlockStore", "add_cell")
        self.add_cell_c(x, w, s, n, k_float_up(residue))

    @property
    def live_blocks(self):
        """The blocks in score order as objects with ``W`` and ``S`` (total weight and
        weighted label sum, summed cell by cell), read-only. A block whose cells and
        totals did not change since the previous call is the same object, so a caller
        can find what changed by identity. O(cells)."""
        return _pav_ops.live_blocks(self)

    def block_index(self, double x):
        """Index in :meth:`blocks` of the last block starting at or below ``x`` (-1 if
        ``x`` is below every stored score); O(log n)."""
        cdef double c, ka, kb
        if self.root.ncells <= 1:
            return -1
        c = self._pred_key(x)
        if c == -INFINITY:
            return -1
        self._edge_of(c, &ka, &kb)
        return _rank_le(self.root, ka) - 1

    def cell(self, double x):
        """``(weight, weighted label sum)`` of the cell at score ``x``, None if there is
        none; O(log n)."""
        cdef Node* v = self._leaf_for(x)
        cdef Leaf* L = v.leaf
        cdef int j = bisect_right(L.x, L.cnt, x) - 1
        if j < 0 or L.x[j] != x or L.n[j] == 0:
            return None
        return L.w[j], L.s[j]

    def prior_value(self, double x, double w, double m, bint linear=False):
        """The step (``linear``: linear) read-out at ``x`` with a prior pseudo-event
        of weight ``w`` and label ``m`` pooled into the fit at the cell the read-out
        uses (:mod:`streamcal.core.prior`); the content is left exactly as it was.
        None when empty. O(log^2 n).

        Examples
        --------
        >>> from streamcal.core.pav import IsotonicBlockStore
        >>> store = IsotonicBlockStore()
        >>> for x, y in [(0.1, 0), (0.2, 0), (0.3, 0), (0.8, 1)]:
        ...     store.add(x, 1.0, y)
        >>> store.predict_step(0.25)
        0.0
        >>> store.prior_value(0.25, 1.0, 0.5)    # at 0.2, pooled with 0.3: 0.5 / (2 + 1)
        0.16666666666666666
        >>> store.prior_value(0.05, 1.0, 0.5)    # at 0.1, pooled with 0.2, 0.3: 0.5 / 4
        0.125

        """
        if self.root.ncells <= 1:
            return None
        return self.prior_linear_c(x, w, m) if linear else self.prior_step_c(x, w, m)

    def hypothetical_value(self, double x, double w, double y):
        """Fitted value at ``x`` if one event ``(x, w, y)`` were added; the content is
        left exactly as it was. O(log^2 n)."""
        return self.hypothetical_c(x, w, y)

    cdef double hypothetical_c(self, double x, double w, double y) except? -1.0 nogil:
        """:meth:`hypothetical_value` from C (read-only, ``_pav_query.pxd``)."""
        return k_hyp(self, x, w, y, NULL)

    cdef double hypothetical_pair_c(self, double x, double w, double* p1) except? -1.0 nogil:
        """The fit at ``x`` with ``(x, w, 0)`` added (returned) and with ``(x, w, 1)``
        (``p1``): two read-only queries, or one insertion relabelled, then the restore."""
        return k_hyp(self, x, w, 0.0, p1)

    cdef int relabel_c(self, double x, double ds) except -1 nogil:
        """Add ``ds`` to the label sum of the stored cell of key ``x``, its weight and
        count unchanged: an event's label changed in place (Venn-ABERS: the second
        hypothetical label), the cell sums
        of a remove and an add when they are exact. ``ds > 0`` moves the points from
        ``x`` on straight up: the locate caches before ``x`` survive (CH_PREFIX)."""
        cdef Node* v = self._leaf_for(x)
        cdef Leaf* L = v.leaf
        cdef int j = bisect_right(L.x, L.cnt, x) - 1
        L.s[j] += ds
        self._note_value(L.s[j])
        self._ck = CH_PREFIX if ds > 0.0 else CH_ANY
        self._cx = x
        self._cnew = False
        self._crem = False
        k_note_cell(self, j, 0.0, ds, 0, 0)  # only cell j changed: the hull before it is kept
        self._fix_path(v)
        return 0

    def scale_by_power_of_two(self, int exponent):
        """Multiply every weight by ``2 ** exponent`` with ``ldexp``: exact, and without
        the intermediate underflow of computing the factor first. O(cells)."""
        return _pav_ops.scale_by_power_of_two(self, exponent)

    def drop_light_cells(self, double threshold):
        """Forget cells whose weight is below ``threshold`` and refit if any went.
        Returns the number of cells dropped. O(cells)."""
        return _pav_ops.drop_light_cells(self, threshold)

    def rebuild(self, xs, ws, ss, ns, qexp=None, residues=None):
        """Replace the whole content by the given cells (sorted, distinct keys, positive
        weights) and build the tree from scratch. O(cells + (cells / B) log n). ``qexp``:
        a finer :attr:`exactness_scale` to keep than the cells' own; ``residues``: the
        cells' residue bounds (:meth:`residue_bounds`; default 0)."""
        return _pav_ops.rebuild(self, xs, ws, ss, ns, qexp, residues)

    @property
    def exactness_scale(self):
        """The ``e`` such that every weight and label sum held since the last rebuild is
        a multiple of ``2**e`` (None before any): coordinates below ``2**(e + 53)`` are
        exact. Snapshots keep it: the tree depends on it (``_pav_requalify.pxd``)."""
        return None if self.qexp == NO_Q else self.qexp

    # ------------------------------------------------------------------ state

    def to_lists(self):
        """JSON-safe content: one ``[xs, ws, ss, ns, W, S]`` entry per block."""
        return _pav_ops.to_lists(self)

    @classmethod
    def from_lists(cls, data, qexp=None, residues=None, leaf_capacity=LEAF_CAP_DEFAULT):
        """Inverse of :meth:`to_lists`, in a store of ``leaf_capacity``: the same cells,
        hence the same fit (``qexp``: see :meth:`rebuild`; ``residues``: ``[key, bound]``
        pairs, as :func:`streamcal.core.pav.residue_entry` gives them)."""
        return _pav_ops.from_lists(cls, data, qexp, residues, leaf_capacity)

    def __reduce__(self):
        xs, ws, ss, ns = self.cells()
        rs = self.residue_bounds().astype(np.float32)  # as held: exact; None when all 0
        return _restore, (self.cap, xs.tobytes(), ws.tobytes(), ss.tobytes(), ns.tobytes(),
                          self.exactness_scale, rs.tobytes() if rs.any() else None,
                          self.track_residues)

    # ------------------------------------------------------------------ checks

    def _check(self, double rtol=1e-9):
        """Assert every invariant: tree structure, totals as sums of children, leaf
        hulls and bridges as recomputed, vertex counts, and the fit: strictly increasing
        block values, each block pooled. On failure the message dumps the block."""
        return _pav_ops.check(self, rtol)


def _restore(cap, xs, ws, ss, ns, qexp=None, rs=None, track=True):
    store = IsotonicBlockStore(cap, track)
    xs = np.frombuffer(xs, dtype=np.float64)
    if len(xs) or qexp is not None:
        store.rebuild(xs, np.frombuffer(ws, dtype=np.float64),
                      np.frombuffer(ss, dtype=np.float64), np.frombuffer(ns, dtype=np.int64),
                      qexp, None if rs is None else np.frombuffer(rs, dtype=np.float32))
    return store
