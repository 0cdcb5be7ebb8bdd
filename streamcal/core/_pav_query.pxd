# The read-only hypothetical query of the compiled isotonic block store
# (streamcal/core/_pav.pyx): the step fit at key x had one event (x, w, y) been added,
# found WITHOUT changing the tree (no insertion, no restore), for the Venn-ABERS pair and
# the prior's pseudo-event.
#
# Why it is exact. Split the points of the cumulative-sum diagram at x: L, the points of
# the cells with key < x (the sentinel's origin included), and R, those of the cells
# with key >= x. Adding (x, w, y) translates every point of R by d = (w, w y) (and, if
# x is a new key, adds the point Q + d, Q the last point of L). The cell of x spans the
# gap between L and R + d, so the block holding x in the new fit is the hull edge that
# spans that gap: the BRIDGE of the lower hulls of L and of R + d, and the fitted value
# its slope. With exact coordinates (every cell sum a multiple of 2**qexp, the new
# total below 2**(qexp + 53): checked, else the caller inserts and restores) the
# bridge's ends are exact doubles, so the slope (B.y - A.y) / (B.x - A.x) is the
# correctly rounded quotient of the same rational as the block's sums S / W that the
# insert-read-restore path (k_hypothetical) reads: the same double, whichever of
# several collinear vertices end the bridge.
#
# How. Each side is a union of parts whose hulls the tree holds: the subtrees hanging
# off the path to x's leaf (left siblings wholly < x, right siblings wholly > x) and
# x's leaf itself, whose stored hull covers both sides: its vertices before x (resp.
# from x on) are vertices of the side's hull, and the points between the last vertex
# before x and the first one from x on are scanned one by one (a leaf holds at most
# B cells). A tangent from a point outside a part is found by one descent through its
# nodes' bridges (O(depth + log B)); from a point to a whole side, the best of its
# parts (O(depth^2 + B)). The bridge is found by alternating tangents: a = Q, b the
# tangent from a to R + d, a the tangent from b to L, ... until a stays: the line ab
# then supports both sides. Every step moves strictly; the rounds are capped
# (QMAX_ROUNDS: then the caller falls back), so a query costs O(log^2 n + B).
#
# Guards (else False, and the caller takes k_hypothetical): exact coordinates as above
# (qexp lowered to the lowest bit of w and w y, as the insertion would); no hull or bridge of
# the tree computed without exact coordinates since the last rebuild (st._inexact:
# such a hull may keep a vertex an exact test would drop); a tree no deeper than
# QMAX_DEPTH.

from libc.math cimport frexp, ldexp, INFINITY

from streamcal.core._search cimport bisect_right
from streamcal.core._pav cimport IsotonicBlockStore, Leaf, Node
from streamcal.core._pav_kernels cimport k_hypothetical
from streamcal.core._pav_orient cimport _TWO53, sc_pav_ctzll, sc_pav_det_sign

cdef enum:
    QANY = 0
    QUP = 1
    QDOWN = 2
    QMAX_DEPTH = 96
    QMAX_ROUNDS = 48
    # LEAF_CAP of _pav.pxd (a struct here cannot size its arrays with it: _pav.c would
    # declare this struct before that constant)
    QLEAF_CAP = 256


cdef struct QCtx:
    bint fast           # coordinates below 2**26 units: double products are exact
    double q            # 2**-qexp
    Leaf* L             # x's leaf, its origin (lox, loy) in the global frame
    double lox
    double loy
    int r               # vertices of the leaf's hull at cells before x
    bint existed        # x is a stored key
    bint block          # ka, kb: the keys ending the block (hull edge) of the current
    double ka           # fit that spans the gap at x (False: x is past every key)
    double kb
    double qlx          # Q, the last point of L (global frame)
    double qly
    int nel             # the leaf's points after its hull vertex r - 1 and before x
    double elx[QLEAF_CAP]
    double ely[QLEAF_CAP]
    int ner             # ... from x on and before its hull vertex r (without d)
    double erx[QLEAF_CAP]
    double ery[QLEAF_CAP]
    int nl              # left siblings of the path and their origins
    Node* ln[QMAX_DEPTH]
    double lx[QMAX_DEPTH]
    double ly[QMAX_DEPTH]
    int nr              # right siblings and their origins (without d)
    Node* rn[QMAX_DEPTH]
    double rx[QMAX_DEPTH]
    double ry[QMAX_DEPTH]


cdef inline int _qsign(QCtx* c, double ux, double uy, double vx, double vy) noexcept nogil:
    # sign of u x v for vectors of exact coordinates (below 2**53 units)
    cdef double d
    if c.fast:
        d = ux * vy - uy * vx
        return (d > 0.0) - (d < 0.0)
    return sc_pav_det_sign(<long long> (ux * c.q), <long long> (vy * c.q),
                           <long long> (uy * c.q), <long long> (vx * c.q))


cdef inline bint _onward(QCtx* c, double ex, double ey, double hx, double hy, double px,
                         double py, bint left) noexcept nogil:
    # does the tangent from p move past the hull edge of vector e starting at h?
    # left (p right of the chain, largest slope to p): p strictly above the edge's
    # line; else (p left of it, smallest slope from p): p strictly below
    cdef int s = _qsign(c, ex, ey, px - hx, py - hy)
    return s > 0 if left else s < 0


cdef inline int _chain_tan(QCtx* c, Leaf* L, int lo, int hi, double ox, double oy,
                           double px, double py, bint left) noexcept nogil:
    # the vertex of the leaf's hull lo .. hi - 1 (origin ox, oy) touched by the tangent
    # from p: the first whose next edge the tangent does not move past (binary search)
    cdef int a = lo, b = hi - 1, m
    while a < b:
        m = (a + b) >> 1
        if _onward(c, L.hx[m + 1] - L.hx[m], L.hy[m + 1] - L.hy[m], ox + L.hx[m],
                   oy + L.hy[m], px, py, left):
            a = m + 1
        else:
            b = m
    return a


cdef inline void _tree_tan(QCtx* c, Node* n, double ox, double oy, double px, double py,
                           bint left, double* tx, double* ty) noexcept nogil:
    # the vertex of hull(n) (origin ox, oy) touched by the tangent from p: hull(n) is
    # hull(n.left) up to the bridge, then hull(n.right); the tangent lies past the
    # bridge edge or not, and that child's whole hull has the same tangent
    cdef int i
    while n.leaf == NULL:
        if _onward(c, n.bx - n.ax, n.by - n.ay, ox + n.ax, oy + n.ay, px, py, left):
            ox += n.left.W
            oy += n.left.S
            n = n.right
        else:
            n = n.left
    i = _chain_tan(c, n.leaf, 0, n.leaf.nh, ox, oy, px, py, left)
    tx[0] = ox + n.leaf.hx[i]
    ty[0] = oy + n.leaf.hy[i]


cdef inline bint _better(QCtx* c, double px, double py, double bx, double by, double nx,
                         double ny, bint left) noexcept nogil:
    # is n strictly better than b as the tangent point from p: below the line pb
    if left:
        return _qsign(c, px - bx, py - by, nx - bx, ny - by) < 0
    return _qsign(c, bx - px, by - py, nx - px, ny - py) < 0


cdef inline void _keep_better(QCtx* c, double px, double py, double* bx, double* by,
                              double nx, double ny, bint left) noexcept nogil:
    # b becomes n when n is the better tangent point from p (_better)
    if _better(c, px, py, bx[0], by[0], nx, ny, left):
        bx[0] = nx
        by[0] = ny


cdef inline void _root_tan(QCtx* c, IsotonicBlockStore st, double k, double ox,
                           double oy, double px, double py, bint left, double* tx,
                           double* ty) noexcept nogil:
    # the vertex touched by the tangent from p among the vertices of the current fit's
    # hull (the root's; origin ox, oy) with key <= k (left: p right of them) or >= k
    # (else: p left of them). k is a hull vertex's key (or -inf, the sentinel's), so it
    # is a vertex of every node holding it and never strictly inside a bridge: the
    # vertices kept are a prefix (suffix) of each hull the descent enters
    cdef Node* n = st.root
    cdef Leaf* L
    cdef int a, b, m
    while n.leaf == NULL:
        if left:
            if n.akey >= k or not _onward(c, n.bx - n.ax, n.by - n.ay, ox + n.ax,
                                          oy + n.ay, px, py, True):
                n = n.left
                continue
        elif n.bkey > k and not _onward(c, n.bx - n.ax, n.by - n.ay, ox + n.ax,
                                        oy + n.ay, px, py, False):
            n = n.left
            continue
        ox += n.left.W
        oy += n.left.S
        n = n.right
    L = n.leaf
    # the leaf's vertices kept: a .. b - 1
    a = 0
    b = L.nh
    if left:
        while a < b:  # b: the first vertex with key > k
            m = (a + b) >> 1
            if L.x[L.hidx[m]] <= k:
                a = m + 1
            else:
                b = m
        a = 0
    else:
        while a < b:  # a: the first vertex with key >= k
            m = (a + b) >> 1
            if L.x[L.hidx[m]] < k:
                a = m + 1
            else:
                b = m
        b = L.nh
    a = _chain_tan(c, L, a, b, ox, oy, px, py, left)
    tx[0] = ox + L.hx[a]
    ty[0] = oy + L.hy[a]


cdef inline void _tan_left(QCtx* c, IsotonicBlockStore st, int mode, double px, double py,
                           double* ax, double* ay) noexcept nogil:
    # the point of L with the largest slope to p (p right of L), among the parts that
    # can hold the bridge's left end (mode, see k_query_value); any point of L may be
    # looked at (a superset gives the same bridge)
    cdef double bx = c.qlx, by = c.qly, tx, ty
    cdef int k, i
    if mode == QDOWN:
        _root_tan(c, st, c.ka, 0.0, 0.0, px, py, True, &tx, &ty)
        _keep_better(c, px, py, &bx, &by, tx, ty, True)
        ax[0] = bx
        ay[0] = by
        return
    for k in range(c.nel):
        _keep_better(c, px, py, &bx, &by, c.elx[k], c.ely[k], True)
    if c.r > 0:
        i = _chain_tan(c, c.L, 0, c.r, c.lox, c.loy, px, py, True)
        tx = c.lox + c.L.hx[i]
        ty = c.loy + c.L.hy[i]
        _keep_better(c, px, py, &bx, &by, tx, ty, True)
    for k in range(c.nl - 1, -1, -1):
        # QUP: the left end is at or after ka; this sibling's keys are all below the
        # next part's first key, and so are those of the siblings before it
        if mode == QUP and (c.L.x[0] if k == c.nl - 1 else c.ln[k + 1].kmin) <= c.ka:
            break
        _tree_tan(c, c.ln[k], c.lx[k], c.ly[k], px, py, True, &tx, &ty)
        _keep_better(c, px, py, &bx, &by, tx, ty, True)
    ax[0] = bx
    ay[0] = by


cdef inline void _tan_right(QCtx* c, IsotonicBlockStore st, int mode, double dx, double dy,
                            double px, double py, double* bx, double* by) noexcept nogil:
    # the point of R + d (and Q + d for a new key) with the smallest slope from p
    # (p left of them), among the parts that can hold the bridge's right end
    cdef double sx, sy, tx, ty
    cdef int k, i
    cdef Leaf* L = c.L
    if not c.existed:
        sx = c.qlx + dx
        sy = c.qly + dy
    elif c.ner > 0:
        sx = c.erx[0] + dx
        sy = c.ery[0] + dy
    else:
        sx = c.lox + L.hx[c.r] + dx
        sy = c.loy + L.hy[c.r] + dy
    if mode == QUP:
        _root_tan(c, st, c.kb, dx, dy, px, py, False, &tx, &ty)
        _keep_better(c, px, py, &sx, &sy, tx, ty, False)
        bx[0] = sx
        by[0] = sy
        return
    for k in range(c.ner):
        tx = c.erx[k] + dx
        ty = c.ery[k] + dy
        _keep_better(c, px, py, &sx, &sy, tx, ty, False)
    if c.r < L.nh:
        i = _chain_tan(c, L, c.r, L.nh, c.lox + dx, c.loy + dy, px, py, False)
        tx = c.lox + dx + L.hx[i]
        ty = c.loy + dy + L.hy[i]
        _keep_better(c, px, py, &sx, &sy, tx, ty, False)
    for k in range(c.nr - 1, -1, -1):
        # QDOWN: the right end is at or before kb
        if mode == QDOWN and c.rn[k].kmin > c.kb:
            break
        _tree_tan(c, c.rn[k], c.rx[k] + dx, c.ry[k] + dy, px, py, False, &tx, &ty)
        _keep_better(c, px, py, &sx, &sy, tx, ty, False)
    bx[0] = sx
    by[0] = sy


cdef inline int _lsb(double v) noexcept nogil:
    # exponent of the lowest set bit of v > 0 (finite)
    cdef int e
    cdef double m = frexp(v, &e)
    return e - 53 + sc_pav_ctzll(<unsigned long long> (m * _TWO53))


cdef inline bint k_query_scale(IsotonicBlockStore st, double w, double wy, double* q,
                               bint* fast) noexcept nogil:
    """The guards of the read-only query for an event of weight ``w`` and label sum
    ``wy`` (see the top of this file): True, with ``q`` the scale 2**-e of the
    coordinates once the event is added (``e`` the store's qexp, lowered to the
    lowest set bit of ``w`` or ``wy`` as adding would lower it) and ``fast`` whether
    they are below 2**26 units (double products exact), if they are all exact. O(1)."""
    cdef int e = st.qexp, k
    if st.qscale <= 0.0 or st._inexact or st.root.ncells <= 1 or not (w > 0.0 and wy >= 0.0):
        return False
    k = _lsb(w)
    if k < e:
        e = k
    if wy > 0.0:
        k = _lsb(wy)
        if k < e:
            e = k
    if e < -1000:
        return False
    q[0] = ldexp(1.0, -e)
    fast[0] = -500 <= e <= 480 and (st.root.W + w) * q[0] < 67108864.0
    return (st.root.W + w) * q[0] < _TWO53


cdef inline bint k_query_ready(IsotonicBlockStore st, double w) noexcept nogil:
    """Do the guards of the read-only query hold for an event of weight ``w`` and label
    0 or 1? O(1)."""
    cdef double q
    cdef bint fast
    return k_query_scale(st, w, w, &q, &fast)


cdef inline int _cell_points(Leaf* L, int k, int end, double ox, double oy, double* cx,
                             double* cy, double* xs, double* ys) noexcept nogil:
    # the points after cells k .. end - 1 of L, running sums (cx, cy) carried on and
    # shifted by (ox, oy), into xs, ys; returns how many
    cdef int n = 0
    while k < end:
        cx[0] += L.w[k]
        cy[0] += L.s[k]
        xs[n] = ox + cx[0]
        ys[n] = oy + cy[0]
        n += 1
        k += 1
    return n


cdef inline bint k_query_prepare(IsotonicBlockStore st, double x, double w, double wy,
                                 QCtx* c) noexcept nogil:
    """Fill ``c`` for queries at key ``x`` with events of weight ``w`` and label sums
    ``0 .. wy``; False when a guard fails (see the top of this file)."""
    cdef double ox = 0.0, oy = 0.0, cx = 0.0, cy = 0.0
    cdef Node* v = st.root
    cdef Leaf* L
    cdef int jp, a, b, m, k, end
    if not k_query_scale(st, w, wy, &c.q, &c.fast):
        return False
    c.nl = 0
    c.nr = 0
    while v.leaf == NULL:
        if c.nl == QMAX_DEPTH or c.nr == QMAX_DEPTH:
            return False
        if x >= v.kmid:
            c.ln[c.nl] = v.left
            c.lx[c.nl] = ox
            c.ly[c.nl] = oy
            c.nl += 1
            ox += v.left.W
            oy += v.left.S
            v = v.right
        else:
            c.rn[c.nr] = v.right
            c.rx[c.nr] = ox + v.left.W
            c.ry[c.nr] = oy + v.left.S
            c.nr += 1
            v = v.left
    L = v.leaf
    c.L = L
    c.lox = ox
    c.loy = oy
    jp = bisect_right(L.x, L.cnt, x)
    c.existed = jp > 0 and L.x[jp - 1] == x
    if c.existed:
        jp -= 1
    # r: hull vertices at cells before jp (vertex 0 is cell 0, the last is cell cnt - 1)
    a = 0
    b = L.nh
    while a < b:
        m = (a + b) >> 1
        if L.hidx[m] < jp:
            a = m + 1
        else:
            b = m
    c.r = a
    k = 0
    if a > 0:
        cx = L.hx[a - 1]
        cy = L.hy[a - 1]
        k = L.hidx[a - 1] + 1
    c.nel = _cell_points(L, k, jp, ox, oy, &cx, &cy, c.elx, c.ely)
    if k < jp:
        k = jp
    c.qlx = ox + cx
    c.qly = oy + cy
    end = L.hidx[a] if a < L.nh else jp
    c.ner = _cell_points(L, k, end, ox, oy, &cx, &cy, c.erx, c.ery)
    # the current block spanning the gap at x: that of x's cell, else of the next key
    c.block = True
    c.ka = x if c.existed else st._succ_key(x)
    if c.ka == INFINITY:
        c.block = False
    else:
        st._edge_of(c.ka, &c.ka, &c.kb)
    return True


cdef inline bint k_query_value(QCtx* c, IsotonicBlockStore st, double dx, double dy,
                               double* out) noexcept nogil:
    """The step fit at ``x`` with the points of R translated by ``(dx, dy)``: the
    slope of the bridge of hull(L) and hull(R + d), by alternating tangents. False if
    the rounds run out (the caller falls back).

    Where the bridge's ends can be: let A0, B0 (keys ka, kb) end the current fit's
    block spanning the gap at x, of slope s0, and l the line through A0 and B0: it
    supports L and R. A label-1 event (d of slope 1 >= s0, QUP) raises every point of
    R + d relative to l: l still supports everything and touches A0, so the new bridge
    is at least as steep, its left end a vertex of hull(L) at or after A0 (a point of
    the block before x) and its right end at or after B0, where hull(R + d) is the
    current hull translated: one restricted descent of the root (_root_tan). A label-0
    event (QDOWN) is the mirror image. Otherwise (QANY) every part is searched."""
    cdef double ax = c.qlx, ay = c.qly, bx, by, nx, ny
    cdef int it
    cdef int mode = QANY
    if c.block:
        if dy == 0.0:
            mode = QDOWN
        elif dy == dx:
            mode = QUP
    for it in range(QMAX_ROUNDS):
        _tan_right(c, st, mode, dx, dy, ax, ay, &bx, &by)
        _tan_left(c, st, mode, bx, by, &nx, &ny)
        if not _better(c, bx, by, ax, ay, nx, ny, True):
            out[0] = (by - ay) / (bx - ax)
            return True
        ax = nx
        ay = ny
    return False


cdef inline bint k_query(IsotonicBlockStore st, double x, double w, double y,
                         double* then1, double* out) noexcept nogil:
    """The read-only :func:`k_hypothetical`: ``out`` the fit at ``x`` with ``(x, w,
    y)`` added (with ``then1``: ``y`` is 0, and ``then1`` gets the fit with ``(x, w,
    1)``); False when a guard fails (nothing written)."""
    cdef QCtx c
    cdef double v0, v1
    cdef double wy = w * y if then1 == NULL else w
    if not k_query_prepare(st, x, w, wy, &c):
        return False
    if then1 == NULL:
        if not k_query_value(&c, st, w, wy, &v0):
            return False
        out[0] = v0
        st._op_query += 1
        return True
    if not (k_query_value(&c, st, w, 0.0, &v0) and k_query_value(&c, st, w, w, &v1)):
        return False
    out[0] = v0
    then1[0] = v1
    st._op_query += 2
    return True


cdef inline double k_hyp(IsotonicBlockStore st, double x, double w, double y,
                         double* then1) except? -1.0 nogil:
    """IsotonicBlockStore.hypothetical_c / hypothetical_pair_c: the read-only query
    when its guards hold, else insert, read and restore (k_hypothetical): the same
    floats either way."""
    cdef double v
    if st.root.ncells > 1 and k_query(st, x, w, y, then1, &v):
        return v
    return k_hypothetical(st, x, w, y, then1)
