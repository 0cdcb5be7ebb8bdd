# Free helpers of the compiled isotonic block store (streamcal/core/_pav.pyx) over its
# tree (Node, Leaf): double-double sums, node allocation, hull vertices, vertex ranks,
# range sums of cells, the locate of a key in a node's hull and the steps of one side of
# the bridge descent. All inline: they are on
# the per-event path, and are compiled into the modules that cimport them (_pav.pyx for
# the updates, _pav_ops.pyx for the read-outs and checks).

from cpython.mem cimport PyMem_RawMalloc, PyMem_RawFree
from libc.math cimport INFINITY
from libc.string cimport memset

from streamcal.core._search cimport bisect_right
from streamcal.core._pav cimport LEAF_CAP, Leaf, Loc, Node, Pt, Sums


cdef inline void _dd_add(double* hi, double* lo, double bh, double bl) noexcept nogil:
    """(hi, lo) += (bh, bl) in double-double arithmetic (TwoSum, then renormalised, so
    that hi is the double nearest to hi + lo)."""
    cdef double s = hi[0] + bh
    cdef double bb = s - hi[0]
    cdef double err = (hi[0] - (s - bb)) + (bh - bb) + (lo[0] + bl)
    hi[0] = s + err
    lo[0] = err - (hi[0] - s)


cdef inline bint _weight_fits(double total, double a, double b, double limit) noexcept nogil:
    """Does a store holding weights of sum ``total`` (a double-double's high part) stay
    within ``limit`` (streamcal.core.pav.WEIGHT_LIMIT) after ``a`` then ``b`` are added?
    Decided on the rounded sums, far enough below DBL_MAX that their rounding does not
    matter, and from the high part alone, so that a restored copy (whose total is summed
    afresh) decides as the original."""
    return (total + a) + b <= limit


cdef inline void _dd_sum2(const double* a, const double* b, int j0, int j1, double* ahi,
                          double* alo, double* bhi, double* blo) noexcept nogil:
    """ahi + alo = the sum of a[j0:j1] in double-double, and bhi + blo that of b[j0:j1]:
    TwoSum at every step, its rounding errors summed apart and added at the end (Ogita,
    Rump and Oishi's Sum2: as accurate as summing in twice the precision, about
    (j1 - j0)**2 * 2**-106 relative for terms of one sign, far below the orientation
    tests' tie band), the chain of dependent additions one add per term instead of
    _dd_add's renormalisation. The two sums (a cell range's W and S) in one loop: two
    independent chains, each the same additions in the same order as alone."""
    cdef double s = 0.0, e = 0.0, u = 0.0, f = 0.0, t, bb
    cdef int j
    for j in range(j0, j1):
        t = s + a[j]
        bb = t - s
        e += (s - (t - bb)) + (a[j] - bb)
        s = t
        t = u + b[j]
        bb = t - u
        f += (u - (t - bb)) + (b[j] - bb)
        u = t
    ahi[0] = s + e
    alo[0] = e - (ahi[0] - s)
    bhi[0] = u + f
    blo[0] = f - (bhi[0] - u)


cdef inline Sums _sums_add(Sums a, Sums b) noexcept nogil:
    _dd_add(&a.W, &a.Wlo, b.W, b.Wlo)
    _dd_add(&a.S, &a.Slo, b.S, b.Slo)
    a.N += b.N
    a.C += b.C
    return a


cdef inline Sums _zero_sums() noexcept nogil:
    return Sums(W=0.0, Wlo=0.0, S=0.0, Slo=0.0, N=0, C=0)


cdef inline int _sign(double v) noexcept nogil:
    return (v > 0.0) - (v < 0.0)


cdef inline double _fdet(Pt a, Pt b, Pt c, Pt d) noexcept nogil:
    """(b - a) x (d - c) in double precision: exact when every coordinate is an integer
    multiple of one power of two below 2**26 of it."""
    return (b.x - a.x) * (d.y - c.y) - (b.y - a.y) * (d.x - c.x)


cdef inline int _fsign(Pt a, Pt b, Pt c, Pt d) noexcept nogil:
    """The sign of :func:`_fdet`."""
    return _sign(_fdet(a, b, c, d))


cdef inline size_t _leaf_node_size() noexcept nogil:
    """A leaf's Node ends before the fields only internal nodes use (the locate cache)."""
    cdef Node proto
    return <size_t> (<char*> &proto.lfl - <char*> &proto)


# Nodes are allocated with the raw allocator (no GIL needed): the per-event paths run
# without the GIL (IsotonicStream's batch loops); a failed allocation takes the GIL to
# raise MemoryError.
cdef inline Node* _new_node_sized(size_t size) except NULL nogil:
    cdef Node* v = <Node*> PyMem_RawMalloc(size)
    if v == NULL:
        with gil:
            raise MemoryError()
    memset(v, 0, size)
    return v


cdef inline Node* _new_node() except NULL nogil:
    return _new_node_sized(sizeof(Node))


cdef inline Leaf* _new_leaf(int cap) noexcept nogil:
    """A leaf of ``cap`` cells, no cells yet (NULL out of memory): the header, then its
    arrays in the same allocation (the 8-byte ones first, so every array is aligned)."""
    cdef size_t c = <size_t> cap
    cdef size_t head = (sizeof(Leaf) + 15) & ~(<size_t> 15)
    cdef char* p = <char*> PyMem_RawMalloc(head + c * (8 * sizeof(double) + sizeof(float) + 1))
    if p == NULL:
        return NULL
    cdef Leaf* L = <Leaf*> p
    L.x = <double*> (p + head)
    L.w = L.x + c
    L.s = L.w + c
    L.n = <long long*> (L.s + c)
    L.hx = <double*> (L.n + c)
    L.hy = L.hx + c
    L.hz = L.hy + c
    L.hf = L.hz + c
    L.r = <float*> (L.hf + c)
    L.hidx = <unsigned char*> (L.r + c)
    L.cnt = 0
    L.nh = 0
    L.hexact = 0
    return L


cdef inline Node* _new_leaf_node(int cap) except NULL nogil:
    cdef Node* v = _new_node_sized(_leaf_node_size())
    v.leaf = _new_leaf(cap)
    if v.leaf == NULL:
        PyMem_RawFree(v)
        with gil:
            raise MemoryError()
    return v


cdef inline void _free_node(Node* v) noexcept nogil:
    if v.leaf != NULL:
        PyMem_RawFree(v.leaf)
    PyMem_RawFree(v)


cdef inline void _free_tree(Node* v) noexcept nogil:
    if v == NULL:
        return
    if v.leaf == NULL:
        _free_tree(v.left)
        _free_tree(v.right)
    _free_node(v)


cdef inline Pt _leaf_vertex(Leaf* L, int j, double ox, double oy, double z0,
                            double f0) noexcept nogil:
    """Hull vertex ``j`` of a leaf, translated by (ox, oy); z0 and f0 are the Pt.z and
    Pt.f of the frame's cells before the leaf."""
    cdef Pt p
    p.x = L.hx[j] + ox
    p.y = L.hy[j] + oy
    p.k = L.x[L.hidx[j]]
    p.z = L.hz[j] if L.hz[j] > z0 else z0
    p.f = L.hf[j] if L.hf[j] > f0 else f0
    return p


cdef inline void _set_bridge(Node* u, Pt a, Pt b) noexcept nogil:
    """The bridge of internal node ``u``: vertex ``a`` of its left child's hull, ``b`` of
    its right child's, in ``u``'s frame (every way of finding it ends here)."""
    u.ax = a.x
    u.ay = a.y
    u.akey = a.k
    u.az = a.z
    u.af = a.f
    u.bx = b.x
    u.by = b.y
    u.bkey = b.k
    u.bz = b.z
    u.bf = b.f


cdef inline Pt _bridge_vertex(double x, double y, double k, double z, double f,
                              double ox, double oy, double z0, double f0) noexcept nogil:
    cdef Pt p
    p.x = x + ox
    p.y = y + oy
    p.k = k
    p.z = z if z > z0 else z0
    p.f = f if f > f0 else f0
    return p


cdef inline int _pure_slope(Pt a, Pt b) noexcept nogil:
    """0 or 1 when every cell of (a.k, b.k] has label sum 0, resp. equal to its weight
    (the slope of ab is then exactly that), else -1."""
    if b.z <= a.k:
        return 0
    if b.f <= a.k:
        return 1
    return -1


cdef inline Py_ssize_t _leaf_rank_le(Leaf* L, double K) noexcept nogil:
    """Hull vertices of the leaf with key <= K."""
    cdef int lo = 0, hi = L.nh, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if K < L.x[L.hidx[mid]]:
            hi = mid
        else:
            lo = mid + 1
    return lo


cdef inline Py_ssize_t _rank_le(Node* v, double K) noexcept nogil:
    """Vertices of the hull of ``v`` with key <= K. O(depth)."""
    cdef Py_ssize_t acc = 0
    while True:
        if v.leaf != NULL:
            return acc + _leaf_rank_le(v.leaf, K)
        if K < v.akey:
            v = v.left
        elif K < v.bkey:
            return acc + v.nvl
        else:
            # nv - (vertices > K), those all in the right part
            return acc + v.nvl + v.nvr - _rank_gt(v.right, K)


cdef inline Py_ssize_t _rank_gt(Node* v, double K) noexcept nogil:
    """Vertices of the hull of ``v`` with key > K. O(depth)."""
    while True:
        if v.leaf != NULL:
            return v.leaf.nh - _leaf_rank_le(v.leaf, K)
        if K >= v.bkey:
            v = v.right
        elif K >= v.akey:
            return v.nvr
        else:
            return v.nvl + v.nvr - _rank_le(v.left, K)


cdef inline bint _hull_prefix(Leaf* L, double k, double* w, double* s) noexcept nogil:
    """With exact coordinates (``L.hexact``): the sums of the leaf's cells with key <= k
    read from its hull, when k is below the first key, at or above the last (the last
    cell is a hull vertex) or the key of a hull vertex. False otherwise."""
    cdef int lo = 0, hi = L.nh - 1, m
    if not L.hexact:
        return False
    if k < L.x[0]:
        w[0] = s[0] = 0.0
        return True
    if k >= L.x[L.cnt - 1]:
        lo = hi
    while lo < hi:
        m = (lo + hi) >> 1
        if L.x[L.hidx[m]] < k:
            lo = m + 1
        else:
            hi = m
    if L.x[L.hidx[lo]] != k and k < L.x[L.cnt - 1]:
        return False
    w[0] = L.hx[lo]
    s[0] = L.hy[lo]
    return True


cdef extern from *:
    """
    #define sc_prefetch(p) __builtin_prefetch((const void*) (p))
    """
    void sc_prefetch(const void* p) noexcept nogil


# Prefetches. The tree is far larger than the caches at 1e6 cells, and a descent is a
# chain of reads each waiting for the one before: what is asked for ahead is fetched
# side by side instead (measured: a third off an exact event at 1e6 distinct scores).
cdef inline void _prefetch_keys(Leaf* L) noexcept nogil:
    """A leaf's keys: the bisection that follows then waits for memory once."""
    cdef int i
    for i in range(0, L.cnt, 8):
        sc_prefetch(&L.x[i])


cdef inline void _prefetch_node(Node* v) noexcept nogil:
    """The fields an update of ``v``'s parent reads (totals, bridge, stamps)."""
    cdef char* p = <char*> v
    sc_prefetch(p)
    sc_prefetch(p + 64)
    sc_prefetch(p + 128)
    sc_prefetch(p + 192)


cdef inline Node* _edge_at(Node* root, double c, int* j) noexcept nogil:
    """Where the hull edge bounding the block that holds key ``c`` (> -inf) is kept:
    an internal node whose bridge it is, or a leaf (``j``: the edge joins vertices
    j - 1 and j of the leaf's hull, j >= 1). O(depth + log B)."""
    cdef Node* v = root
    cdef Leaf* L
    cdef int k
    while v.leaf == NULL:
        if c <= v.akey:
            v = v.left
        elif c <= v.bkey:
            return v
        else:
            v = v.right
    L = v.leaf
    k = <int> _leaf_rank_le(L, c)  # vertices with key <= c
    if k > 0 and L.x[L.hidx[k - 1]] == c:
        k -= 1
    j[0] = k  # vertex k is the first with key >= c, k >= 1
    return v


cdef inline void _edge_keys(Node* v, int j, double* ka, double* kb) noexcept nogil:
    """The keys of the edge :func:`_edge_at` found (``v``, ``j``): its block is the
    cells with ka < key <= kb."""
    cdef Leaf* L = v.leaf
    if L == NULL:
        ka[0] = v.akey
        kb[0] = v.bkey
    else:
        ka[0] = L.x[L.hidx[j - 1]]
        kb[0] = L.x[L.hidx[j]]


cdef inline Sums _leaf_range(Leaf* L, double k1, double k2, bint plain=False) noexcept nogil:
    """Sums of the leaf's cells with k1 < key <= k2. ``plain``: the caller knows every
    partial sum is exact (exact mode, below 2**(qexp + 53)): plain sums then equal the
    double-double ones (low parts 0), and so does the difference of two exact prefix
    sums, read from the leaf's hull when k1 and k2 are keys of its vertices (the ends
    of the fit's blocks are); only W and S are summed (N and C stay 0)."""
    cdef Sums r = _zero_sums()
    cdef double w1, s1, w2, s2
    cdef int j, j1
    if plain:
        if _hull_prefix(L, k1, &w1, &s1) and _hull_prefix(L, k2, &w2, &s2):
            r.W = w2 - w1
            r.S = s2 - s1
            return r
        j = bisect_right(L.x, L.cnt, k1)
        while j < L.cnt and L.x[j] <= k2:
            r.W += L.w[j]
            r.S += L.s[j]
            j += 1
        return r
    j = bisect_right(L.x, L.cnt, k1)
    j1 = j
    while j1 < L.cnt and L.x[j1] <= k2:
        r.N += L.n[j1]
        j1 += 1
    r.C = j1 - j
    _dd_sum2(L.w, L.s, j, j1, &r.W, &r.Wlo, &r.S, &r.Slo)
    return r


cdef inline Sums _node_sums(Node* v) noexcept nogil:
    return Sums(W=v.W, Wlo=v.Wlo, S=v.S, Slo=v.Slo, N=v.N, C=v.ncells)


cdef inline Sums _range_from(Node* v, double k1, bint plain=False) noexcept nogil:
    """Sums of the cells of ``v`` with key > k1."""
    cdef Sums acc = _zero_sums()
    while v.leaf == NULL:
        if k1 >= v.kmid:
            v = v.right
        else:
            acc = _sums_add(acc, _node_sums(v.right))
            v = v.left
    return _sums_add(_leaf_range(v.leaf, k1, INFINITY, plain), acc)


cdef inline Sums _range_upto(Node* v, double k2, bint plain=False) noexcept nogil:
    """Sums of the cells of ``v`` with key <= k2."""
    cdef Sums acc = _zero_sums()
    while v.leaf == NULL:
        if k2 >= v.kmid:
            acc = _sums_add(acc, _node_sums(v.left))
            v = v.right
        else:
            v = v.left
    return _sums_add(acc, _leaf_range(v.leaf, -INFINITY, k2, plain))


cdef inline Sums _range(Node* v, double k1, double k2, bint plain=False) noexcept nogil:
    """Sums of the cells of ``v`` with k1 < key <= k2, from subtree totals: the result
    is accurate relative to the range itself. O(depth + B)."""
    while v.leaf == NULL:
        if k2 < v.kmid:
            v = v.left
        elif k1 >= v.kmid:
            v = v.right
        else:
            return _sums_add(_range_from(v.left, k1, plain), _range_upto(v.right, k2, plain))
    return _leaf_range(v.leaf, k1, k2, plain)


cdef inline Node* _into_right(Node* v, double* ox, double* oy, double* z0,
                              double* f0) noexcept nogil:
    # One step of a descent from v into its right child: the frame of the child's
    # vertices (origin ox, oy; Pt.z / Pt.f floors z0, f0) takes in the left child's
    # cells. The one home of that step (_locate, k_bridge); inlined, so the frame stays
    # in registers.
    ox[0] += v.left.W
    oy[0] += v.left.S
    if v.left.zmax > z0[0]:
        z0[0] = v.left.zmax
    if v.left.fmax > f0[0]:
        f0[0] = v.left.fmax
    return v.right


cdef inline void _loc_to_cache(Loc* r, double* c, int* fl) noexcept nogil:
    """Keep what verification needs of a locate (exact mode: Pt.z / Pt.f of the
    neighbours are not used)."""
    c[0] = r.pred.x
    c[1] = r.pred.y
    c[2] = r.at.x
    c[3] = r.at.y
    c[4] = r.at.z
    c[5] = r.at.f
    c[6] = r.succ.x
    c[7] = r.succ.y
    c[8] = r.pred.k
    c[9] = r.succ.k
    fl[0] = (1 if r.has_pred else 0) | (2 if r.has_succ else 0)


cdef inline void _loc_from_cache(Loc* r, double* c, int fl, Py_ssize_t rank,
                                 double K) noexcept nogil:
    r.pred.x = c[0]
    r.pred.y = c[1]
    r.pred.k = c[8]
    r.pred.z = -INFINITY
    r.pred.f = -INFINITY
    r.at.x = c[2]
    r.at.y = c[3]
    r.at.k = K
    r.at.z = c[4]
    r.at.f = c[5]
    r.succ.x = c[6]
    r.succ.y = c[7]
    r.succ.k = c[9]
    r.succ.z = -INFINITY
    r.succ.f = -INFINITY
    r.has_pred = (fl & 1) != 0
    r.has_succ = (fl & 2) != 0
    r.rle = rank
    r.rge = rank
    r.steps = 0


cdef inline void _at_shift(Pt* at, double ox, double oy, double z0, double f0) noexcept nogil:
    """Translate a located vertex from a child's frame into its parent's (``z0``,
    ``f0``: the parent's cells before the child, for the vertex's running maxima)."""
    at.x += ox
    at.y += oy
    if z0 > at.z:
        at.z = z0
    if f0 > at.f:
        at.f = f0


cdef inline void _loc_shift(Loc* r, double ox, double oy, double z0, double f0) noexcept nogil:
    """Translate a locate made in a child's frame (exact coordinates) into its parent's."""
    r.pred.x += ox
    r.pred.y += oy
    _at_shift(&r.at, ox, oy, z0, f0)
    r.succ.x += ox
    r.succ.y += oy


cdef inline bint _locate_at_bridge(Node* c, double K, Loc* r) noexcept nogil:
    """:func:`_locate` of ``K`` in the hull of ``c`` in O(1) when ``K`` is an end of
    ``c``'s bridge and ``c`` holds a current locate of that end in its child (exact
    coordinates: see Node): hull(c) is hull(c.left) up to a, then hull(c.right) from b,
    so the neighbours are the bridge's other end and the cached one. False otherwise
    (``r`` then undefined)."""
    cdef Py_ssize_t nv
    cdef double* q
    if c.leaf != NULL or not c.bvalid:
        return False
    nv = c.nvl + c.nvr
    if K == c.akey and c.lcs != 0 and c.lcs == c.left.stamp:
        q = c.cl
        r.pred.x = q[0]
        r.pred.y = q[1]
        r.pred.k = q[8]
        r.has_pred = (c.lfl & 1) != 0
        r.at.x = q[2]
        r.at.y = q[3]
        r.at.k = K
        r.at.z = q[4]
        r.at.f = q[5]
        r.succ.x = c.bx
        r.succ.y = c.by
        r.succ.k = c.bkey
        r.has_succ = True
        r.rle = c.lrank
        r.rge = nv - c.lrank + 1
    elif K == c.bkey and c.rcs != 0 and c.rcs == c.right.stamp:
        q = c.cr
        r.pred.x = c.ax
        r.pred.y = c.ay
        r.pred.k = c.akey
        r.has_pred = True
        r.at.x = c.bx
        r.at.y = c.by
        r.at.k = K
        r.at.z = c.bz
        r.at.f = c.bf
        r.succ.x = q[6] + c.left.W
        r.succ.y = q[7] + c.left.S
        r.succ.k = q[9]
        r.has_succ = (c.rfl & 2) != 0
        r.rge = c.rrank
        r.rle = nv - c.rrank + 1
    else:
        return False
    r.pred.z = -INFINITY
    r.pred.f = -INFINITY
    r.succ.z = -INFINITY
    r.succ.f = -INFINITY
    r.steps = 1
    return True


cdef inline bint _locate(Node* v, double K, double ox, double oy, double z0, double f0,
                  Loc* r, bint kept) noexcept nogil:
    """Is key ``K`` a vertex of the hull of ``v``? If so, fill ``r``: the vertex and its
    neighbours on that hull (coordinates translated by (ox, oy), Pt.z / Pt.f floored by
    z0 / f0, summed top-down as :meth:`IsotonicBlockStore._bridge` sums them) and its
    ranks. One descent, O(depth + log B), finished in O(1) at the first node that holds
    a current locate of ``K`` as an end of its own bridge (:func:`_locate_at_bridge`):
    hull(v) around a vertex of a descendant's hull is that descendant's hull there, but
    for the neighbours the nodes above already set (the caches are kept with exact
    coordinates only: the same result as the full descent, bit for bit). ``r.steps``
    counts the nodes visited. ``kept``: use those caches (without exact coordinates a
    cached vertex plus the offset above it may round otherwise than the descent's sum:
    callers that need the descent's coordinates bit for bit pass False)."""
    cdef Leaf* L
    cdef Loc t
    cdef int j
    r.has_pred = False
    r.has_succ = False
    r.rle = 0
    r.rge = 0
    r.steps = 0
    while v.leaf == NULL:
        r.steps += 1
        if kept and (K == v.akey or K == v.bkey) and _locate_at_bridge(v, K, &t):
            r.at = t.at
            _at_shift(&r.at, ox, oy, z0, f0)
            if not r.has_pred and t.has_pred:
                r.pred = t.pred
                r.pred.x += ox
                r.pred.y += oy
                r.has_pred = True
            if not r.has_succ and t.has_succ:
                r.succ = t.succ
                r.succ.x += ox
                r.succ.y += oy
                r.has_succ = True
            r.rle += t.rle
            r.rge += t.rge
            return True
        if K <= v.akey:
            if K == v.akey and not r.has_succ:
                r.succ = _bridge_vertex(v.bx, v.by, v.bkey, v.bz, v.bf, ox, oy, z0, f0)
                r.has_succ = True
            r.rge += v.nvr - (v.left.nvl + v.left.nvr - v.nvl)
            v = v.left
        elif K < v.bkey:
            return False
        else:
            if K == v.bkey and not r.has_pred:
                r.pred = _bridge_vertex(v.ax, v.ay, v.akey, v.az, v.af, ox, oy, z0, f0)
                r.has_pred = True
            r.rle += v.nvl - (v.right.nvl + v.right.nvr - v.nvr)
            v = _into_right(v, &ox, &oy, &z0, &f0)
    L = v.leaf
    r.steps += 1
    j = <int> _leaf_rank_le(L, K) - 1
    if j < 0 or L.x[L.hidx[j]] != K:
        return False
    r.at = _leaf_vertex(L, j, ox, oy, z0, f0)
    if not r.has_pred and j > 0:
        r.pred = _leaf_vertex(L, j - 1, ox, oy, z0, f0)
        r.has_pred = True
    if not r.has_succ and j + 1 < L.nh:
        r.succ = _leaf_vertex(L, j + 1, ox, oy, z0, f0)
        r.has_succ = True
    r.rle += j + 1
    r.rge += L.nh - j
    return True


# The steps of one side of the bridge descent (_pav_kernels.k_bridge).
cdef inline Node* k_enter(Node* n, int* lo, int* hi, double kmin, double kmax) noexcept nogil:
    # one side of k_bridge's descent enters node n: a leaf's hull vertices with keys in
    # [kmin, kmax] (the part of its hull that its ancestors' hulls keep) are its range
    cdef Leaf* L = n.leaf
    if L != NULL:
        lo[0] = 0
        hi[0] = L.nh
        if kmax < L.x[L.hidx[L.nh - 1]]:
            hi[0] = <int> _leaf_rank_le(L, kmax)
        if kmin > L.x[L.hidx[0]]:  # the vertices with key < kmin
            lo[0] = <int> _leaf_rank_le(L, kmin)
            if L.x[L.hidx[lo[0] - 1]] == kmin:
                lo[0] -= 1
    return n


cdef inline int k_side_edge(Node* n, int lo, int hi, bint pt, double ox, double oy,
                            double z0, double f0, Pt* a, Pt* b) noexcept nogil:
    # one side of k_bridge's descent: its current point (a; pt: one vertex left in the
    # leaf's range lo .. hi) or edge (a, b), in the frame (ox, oy, z0, f0); returns the
    # middle index of a leaf's range (0 when unused)
    cdef int m = 0
    if n.leaf != NULL:
        if pt:
            a[0] = _leaf_vertex(n.leaf, lo, ox, oy, z0, f0)
        else:
            m = (lo + hi) >> 1
            a[0] = _leaf_vertex(n.leaf, m - 1, ox, oy, z0, f0)
            b[0] = _leaf_vertex(n.leaf, m, ox, oy, z0, f0)
    else:
        a[0] = _bridge_vertex(n.ax, n.ay, n.akey, n.az, n.af, ox, oy, z0, f0)
        b[0] = _bridge_vertex(n.bx, n.by, n.bkey, n.bz, n.bf, ox, oy, z0, f0)
    return m


cdef inline int k_side_local(Node* n, int lo, int m, bint pt, double* ax, double* ay,
                             double* bx, double* by) noexcept nogil:
    # the same point a or edge a, b as k_side_edge, in n's own frame (the vectors of
    # k_vsign_local); returns 1 if a is the last vertex of n's hull, 2 if b is, else 0
    cdef Leaf* L = n.leaf
    if L != NULL:
        if pt:
            ax[0] = L.hx[lo]
            ay[0] = L.hy[lo]
            return 1 if lo == L.nh - 1 else 0
        ax[0] = L.hx[m - 1]
        ay[0] = L.hy[m - 1]
        bx[0] = L.hx[m]
        by[0] = L.hy[m]
        return 2 if m == L.nh - 1 else 0
    ax[0] = n.ax
    ay[0] = n.ay
    bx[0] = n.bx
    by[0] = n.by
    return 2 if n.nvr == 1 else 0


cdef inline void k_rest_after(Node* n, bint last, double x, double y, double* sx,
                              double* sy, double* eb) noexcept nogil:
    # the cells of n after its hull vertex at (x, y) in n's own frame (k_side_local):
    # exactly 0 when the vertex is n's last, and the base of their error bound
    if last:
        sx[0] = sy[0] = eb[0] = 0.0
    else:
        sx[0] = n.W - x
        sy[0] = n.S - y
        eb[0] = n.W + x
