# The per-event kernels of the grid isotonic store (streamcal/core/_grid_pav.pyx): the
# exact orientation tests, the leaf's hull scan, the check that an add keeps a leaf's
# vertices, and the climb that keeps or recomputes each ancestor's bridge. Inline
# functions of the store (``st``), compiled into _grid_pav.pyx; see that module's
# docstring for the algorithms, costs and exactness argument.

from libc.math cimport frexp

from streamcal.core._grid_pav cimport GNode, GridIsotonicStore

cdef extern from *:
    """
    static inline int sc_grid_ctz(unsigned long long v) { return __builtin_ctzll(v); }
    static inline int sc_grid_clz(unsigned long long v) { return __builtin_clzll(v); }
    /* sign of ux * vy - uy * vx, every factor below 2**41 in magnitude */
    static inline int sc_grid_cross(long long ux, long long uy, long long vx, long long vy) {
        __int128 p = (__int128)ux * vy - (__int128)uy * vx;
        return (p > 0) - (p < 0);
    }
    /* sign of cby*dx1*dx2 - dy2*dx1*f - dy1*dx2*e, every factor below 2**41 */
    static inline int sc_grid_triple(long long cby, long long dx1, long long dx2,
                                     long long dy2, long long f, long long dy1,
                                     long long e) {
        __int128 g = (__int128)cby * dx1 * dx2 - (__int128)dy2 * dx1 * f
                     - (__int128)dy1 * dx2 * e;
        return (g > 0) - (g < 0);
    }
    """
    int sc_grid_ctz(unsigned long long v) nogil
    int sc_grid_clz(unsigned long long v) nogil
    int sc_grid_cross(long long ux, long long uy, long long vx, long long vy) nogil
    int sc_grid_triple(long long cby, long long dx1, long long dx2, long long dy2,
                       long long f, long long dy1, long long e) nogil

cdef enum:
    K_NONE = 1 << 30   # _dlo of an empty changed interval


cdef inline int k_lsb_exponent(double v) noexcept nogil:
    """Exponent of the lowest set bit of ``v`` (> 0, finite)."""
    cdef int e
    cdef double m = frexp(v, &e)
    cdef unsigned long long mant = <unsigned long long> (m * 9007199254740992.0)  # 2**53
    return e - 53 + sc_grid_ctz(mant)


cdef inline void k_bit_set(unsigned long long* bits, unsigned long long* summ, int i) noexcept nogil:
    """Set bit ``i`` of a two-level bit set (``summ``: one bit per non-zero word)."""
    cdef int w = i >> 6
    bits[w] |= (<unsigned long long> 1) << (i & 63)
    summ[w >> 6] |= (<unsigned long long> 1) << (w & 63)


cdef inline void k_bit_clear(unsigned long long* bits, unsigned long long* summ, int i) noexcept nogil:
    """Clear bit ``i`` of a two-level bit set."""
    cdef int w = i >> 6
    bits[w] &= ~((<unsigned long long> 1) << (i & 63))
    if bits[w] == 0:
        summ[w >> 6] &= ~((<unsigned long long> 1) << (w & 63))


cdef inline int k_bit_pred(const unsigned long long* bits, const unsigned long long* summ,
                           int i) noexcept nogil:
    """The largest set bit <= i of a two-level bit set (-1 if none; i >= 0)."""
    cdef int w = i >> 6, sw
    cdef unsigned long long m = bits[w] & (((<unsigned long long> 2) << (i & 63)) - 1)
    if m:
        return (w << 6) + 63 - sc_grid_clz(m)
    sw = w >> 6
    m = summ[sw] & (((<unsigned long long> 1) << (w & 63)) - 1)
    while not m:
        sw -= 1
        if sw < 0:
            return -1
        m = summ[sw]
    w = (sw << 6) + 63 - sc_grid_clz(m)
    return (w << 6) + 63 - sc_grid_clz(bits[w])


cdef inline int k_bit_succ(const unsigned long long* bits, const unsigned long long* summ,
                           int n, int ns, int i) noexcept nogil:
    """The smallest set bit >= i of a two-level bit set of ``n`` bits (``ns`` summary
    words); -1 if none."""
    cdef int w, sw
    cdef unsigned long long m
    if i >= n:
        return -1
    w = i >> 6
    m = bits[w] & ~(((<unsigned long long> 1) << (i & 63)) - 1)
    if m:
        return (w << 6) + sc_grid_ctz(m)
    sw = w >> 6
    m = summ[sw] & ~(((<unsigned long long> 2) << (w & 63)) - 1)
    while not m:
        sw += 1
        if sw >= ns:
            return -1
        m = summ[sw]
    w = (sw << 6) + sc_grid_ctz(m)
    return (w << 6) + sc_grid_ctz(bits[w])


cdef inline int k_chain_pop(const long long* hx, const long long* hy, int n, long long sw,
                            long long ss) noexcept nogil:
    """The monotone chain's pops (a strictly convex lower hull): the size of the stack of
    points ``(hx, hy)[0 .. n - 1]`` once every point not strictly below the segment from
    its predecessor to the new point ``(sw, ss)`` is popped. Every coordinate is in
    ``[0, sw]`` (labels <= weights): the cross products fit in 64 bits below 2**31."""
    if sw < ((<long long> 1) << 31):
        while n >= 2 and ((hx[n - 1] - hx[n - 2]) * (ss - hy[n - 1])
                          <= (hy[n - 1] - hy[n - 2]) * (sw - hx[n - 1])):
            n -= 1
    else:
        while n >= 2 and sc_grid_cross(hx[n - 1] - hx[n - 2], hy[n - 1] - hy[n - 2],
                                       sw - hx[n - 1], ss - hy[n - 1]) <= 0:
            n -= 1
    return n


cdef inline int k_scan(GridIsotonicStore st, int j, int n, int t, int* low) noexcept nogil:
    """Leaf ``j``'s monotone-chain scan (lower hull, strictly convex, in the leaf's
    frame), resumed with its first ``n`` vertices on the stack (the hull of the points
    up to vertex ``n - 1``, whose sums start the scan) at cell ``t``, to the leaf's end;
    writes the leaf's totals and vertex count, ``low``: the stack's lowest size (the
    vertices before it were kept). Returns the present cells scanned."""
    cdef int base = j * st.leaf_capacity, hi = base + st.leaf_capacity, cnt = 0
    cdef long long* hx = st.hx + base
    cdef long long* hy = st.hy + base
    cdef int* hk = st.hk + base
    cdef long long sw = hx[n - 1] if n > 0 else 0, ss = hy[n - 1] if n > 0 else 0
    low[0] = n
    if hi > st.nc:
        hi = st.nc
    st._op_hull += hi - t
    while t < hi:
        if st.cw[t] != 0 or t == 0:
            cnt += 1
            sw += st.cw[t]
            ss += st.cs[t]
            n = k_chain_pop(hx, hy, n, sw, ss)
            if n < low[0]:
                low[0] = n
            hx[n] = sw
            hy[n] = ss
            hk[n] = t
            n += 1
        t += 1
    st.nh[j] = n
    st.nd[st.P + j].tw = sw
    st.nd[st.P + j].ts = ss
    return cnt


cdef inline bint k_leaf_same(GridIsotonicStore st, int j, int v, int c) noexcept nogil:
    """After an add of ``d = (dw, ds)`` to cell ``c``, held before, of leaf ``j`` (``v``:
    its first hull vertex at a cell >= c): are the hull's vertices the same cells? The
    points at cells >= c moved by ``d``: the hull keeps its vertices if the edge from A
    (vertex ``v - 1``) to the moved V (vertex ``v``) turns strictly left at both ends
    and no point between A and V falls below it. A point that did not move (before c)
    can only fall below if ``d`` turns left from the edge AV (then the edge is steeper;
    the moved points, whose slope to V is below the edge's and so below ``d``'s, rise
    above it), and a moved one only if ``d`` turns right (symmetrically); only that
    side is scanned. ``v == 0``: every point moved. O(B)."""
    cdef int base = j * st.leaf_capacity, q, o
    cdef long long* hx = st.hx + base
    cdef long long* hy = st.hy + base
    cdef long long ex, ey, px = 0, py = 0
    if v == 0:
        return True
    ex = hx[v] + st._edw - hx[v - 1]
    ey = hy[v] + st._eds - hy[v - 1]
    if v >= 2 and sc_grid_cross(hx[v - 1] - hx[v - 2], hy[v - 1] - hy[v - 2], ex, ey) <= 0:
        return False
    if v + 1 < st.nh[j] and sc_grid_cross(ex, ey, hx[v + 1] - hx[v], hy[v + 1] - hy[v]) <= 0:
        return False
    o = sc_grid_cross(hx[v] - hx[v - 1], hy[v] - hy[v - 1], st._edw, st._eds)
    if o > 0:   # the unmoved points in (A, c), from A
        for q in range(st.hk[base + v - 1] + 1, c):
            px += st.cw[q]
            py += st.cs[q]
            if st.cw[q] and sc_grid_cross(ex, ey, px, py) < 0:
                return False
        st._op_hull += c - st.hk[base + v - 1]
    elif o < 0:   # the moved points in [c, V), from V
        for q in range(st.hk[base + v], c, -1):
            px -= st.cw[q]
            py -= st.cs[q]
            if st.cw[q - 1] and sc_grid_cross(ex, ey, ex + px, ey + py) < 0:
                return False
        st._op_hull += st.hk[base + v] - c + 1
    return True


cdef inline bint k_kept_locate(GridIsotonicStore st, int fl, int* ks) noexcept nogil:
    """Does the cached locate (flags ``fl``, neighbour cells ``ks``) of a bridge end K
    in the child the current event went through still hold, whatever the changed
    interval?

    The event added weight ``dw`` units with label 0 or 1 to cell ``c`` that was
    already present (:meth:`add_c` sets ``_ec``, ``_ey``, ``_edw``); the points at
    cells >= c moved by ``dw (1, y)`` in the child's frame. With label 1 and ``c``
    after K's successor S: the points before ``c`` (P, K, S among them) did not move,
    and every moved point rose above the lines PK and KS by ``dw (1 - slope) >= 0``
    (every slope is a label mean, <= 1); they were strictly above, so they still are,
    and P, K, S stay consecutive hull vertices. With label 0 and ``c`` at or before
    K's predecessor P: P, K, S and everything after moved by ``(dw, 0)``, and, seen
    from them, each earlier point moved by ``(-dw, 0)``, rising above those lines by
    ``dw slope >= 0``. (A new cell is excluded: its point need not have been above
    them.)"""
    if st._ey == 1:
        return (fl & 2) and st._ec > ks[1]
    return st._ey == 0 and (fl & 1) and st._ec <= ks[0]


cdef inline bint k_tangent(const long long* L, const long long* R, int lf, int rf,
                           long long dx, long long dy) noexcept nogil:
    """The general store's four exact tangency tests of the bridge from the left
    child's vertex L[2:4] to the right child's R[2:4] (their neighbours before and
    after, when ``lf``, ``rf`` say they exist; the right side offset by ``dx, dy``):
    predecessors strictly above, successors on or above (left end), resp. on or above
    and strictly above (right end)."""
    cdef long long ax = L[2], ay = L[3], bx = R[2] + dx, by = R[3] + dy
    if (lf & 1) and sc_grid_cross(ax - L[0], ay - L[1], bx - ax, by - ay) <= 0:
        return False
    if (lf & 2) and sc_grid_cross(L[4] - ax, L[5] - ay, bx - L[4], by - L[5]) > 0:
        return False
    if (rf & 1) and sc_grid_cross(R[0] + dx - ax, R[1] + dy - ay, R[2] - R[0], R[3] - R[1]) > 0:
        return False
    if (rf & 2) and sc_grid_cross(bx - ax, by - ay, R[4] - R[2], R[5] - R[3]) <= 0:
        return False
    return True


cdef inline void k_climb(GridIsotonicStore st, int v, int new) noexcept nogil:
    """The ancestors of leaf node ``v`` after an add (``new``: to an empty cell): totals,
    and each bridge kept or recomputed, from the leaf's changed interval up.

    At a node ``u`` whose bridge holds from before, its end K in the child the event
    went through keeps its cached locate (neighbours P, S: :meth:`_locate`) without a
    descent when no vertex of that child's hull changed in [P, S] (the changed
    interval ``dlo``, ``dhi``), or by :func:`k_kept_locate`; the points at cells >= c
    then moved by the event's ``(dw, ds)``, and when the six points tested all moved
    (left side, c <= P) or none did (right side, S < c) the tangency tests are not
    redone. Else one locate, the tests, and when they fail the bridge by descent.
    ``u``'s hull is the left child's up to the bridge, then the right child's: with
    the same bridge the interval is clipped to that part, with another one widened to
    both bridges' ends, with a first bridge every cell."""
    cdef GNode* nd = st.nd
    cdef int u, side, K, f, lo, hi, c = st._ec, ak0, bk0, dlo = st._dlo, dhi = st._dhi
    cdef long long dw = st._edw, ds = st._eds, dx = 0, dy = 0
    cdef long long* L
    cdef long long* R
    cdef long long* C
    cdef int* ks
    cdef int* fp
    cdef bint ok, same
    while v > 1:
        side = v & 1
        u = v >> 1
        v = u
        nd[u].tw += dw
        nd[u].ts += ds
        nd[u].npres += new
        st._op_nodes += 1
        if not (nd[2 * u].npres and nd[2 * u + 1].npres):
            nd[u].bval = 0
            continue   # u's hull is the event child's: so are its changes
        ak0 = nd[u].ak
        bk0 = nd[u].bk
        L = st.cl + 6 * u
        R = st.cr + 6 * u
        ok = False
        if nd[u].bval:
            C = R if side else L
            ks = (st.rks if side else st.lks) + 2 * u
            fp = (st.rfl if side else st.lfl) + u
            K = bk0 if side else ak0
            f = fp[0]
            lo = ks[0] if f & 1 else 0
            hi = ks[1] if f & 2 else st.nc
            same = False
            if dlo > dhi or dhi < lo or dlo > hi or k_kept_locate(st, f, ks):
                if (f & 1) and lo >= c:
                    C[0] += dw
                    C[1] += ds
                if K >= c:
                    C[2] += dw
                    C[3] += ds
                if (f & 2) and hi >= c:
                    C[4] += dw
                    C[5] += ds
                same = c <= (lo if f & 1 else K) if side == 0 else c > (hi if f & 2 else K)
                ok = True
            else:
                ok = st._locate(2 * u + side, K, C, fp, ks)
            dx = nd[2 * u].tw
            dy = nd[2 * u].ts
            if ok and not same:
                st._op_hull += 1
                ok = k_tangent(L, R, st.lfl[u], st.rfl[u], dx, dy)
        if ok:
            nd[u].ax = L[2]
            nd[u].ay = L[3]
            nd[u].bx = R[2] + dx
            nd[u].by = R[3] + dy
            if side:
                dlo = max(dlo, bk0)
            else:
                dhi = min(dhi, ak0)
            continue
        if nd[u].bval:
            dlo = min(dlo, ak0)
            dhi = max(dhi, bk0)
        else:
            dlo = 0
            dhi = st.nc
        st._bridge(u)
        st._locate(2 * u, nd[u].ak, L, st.lfl + u, st.lks + 2 * u)
        st._locate(2 * u + 1, nd[u].bk, R, st.rfl + u, st.rks + 2 * u)
        nd[u].bval = 1
        dlo = min(dlo, nd[u].ak)
        dhi = max(dhi, nd[u].bk)
