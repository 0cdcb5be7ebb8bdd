# The block array of the grid isotonic store (streamcal/core/_grid_pav.pyx): the fit
# kept as its blocks, without the tree. Inline functions of the store (``st``),
# compiled into _grid_pav.pyx.
#
# The blocks are the edges of the global lower hull (strictly convex: a point on a
# chord is not a vertex) of the cumulative-sum points of the present cells, the
# sentinel cell 0 at the origin. A block is stored at its end cell ``e`` (a hull
# vertex): bit ``e`` of ``ebits`` is set and ``bw[e]``, ``bs[e]`` are its totals in
# units; cell 0 is always an end (totals 0). The block holding a present cell ``c`` is
# ``(ka, kb]``, ``kb`` the first end >= c, ``ka`` the last end < c, and its value is
# ``bs[kb] / bw[kb]``: the same exact integers as the tree's bridge or leaf edge, so the
# same double.
#
# An add of ``(dw, ds)`` to cell ``c`` in block ``(ka, kb]`` translates the points from
# ``c`` on. The block keeps its interior (every interior point on or above the new
# chord) when one side of it holds, the other side holding by the old block's: if the
# block's mean went up, a prefix ending before ``c`` is unchanged and may now lie below
# (its mean below the new one), while a suffix after a point at or after ``c`` is
# unchanged and its mean was at most the old one; if it went down, the mirror image;
# if it is unchanged, both sides hold (the new point of a new cell included). So one
# side of the block is scanned (its present cells, through the present-cell bit set).
# When the scan finds a point below the chord, the block's cells are re-hulled (a
# monotone chain). Then adjacent blocks whose slopes are not increasing are pooled,
# from the changed blocks outwards (a pooled block of two valid blocks is valid: the
# usual pool-adjacent-violators argument, with ties pooled). Every test is an exact
# sign of integer products (128-bit when the totals reach 2**31 units).
#
# Costs: a read-out is two bit-set searches; an add is O(1) plus the cells of one side
# of its block plus O(cells of the block) when the block splits, plus one test per
# pooling. That is O(K) in the worst case, against the tree's O(log^2 K): the store
# moves to the tree when the block array's scans grow long (see ga_check_window).

from streamcal.core._grid_pav cimport GridIsotonicStore
from streamcal.core._grid_kernels cimport (
    k_bit_clear, k_bit_pred, k_bit_set, k_bit_succ, k_chain_pop, sc_grid_cross,
    sc_grid_ctz,
)

from libc.string cimport memset

cdef enum:
    GA_WINDOW = 1024             # adds per check of the scans' length
    GA_FIRST_WINDOW = 128        # the first window after the block array was built
    GA_SCAN_LIMIT = 192          # cells scanned per add, on average over a window, above
                                 # which the store moves to the tree
    GA_FIRST_WAIT = 1 << 14      # adds on the tree before the block array is tried again
    GA_MAX_WAIT = 1 << 22


cdef inline int ga_sign(long long ux, long long uy, long long vx, long long vy,
                        long long bound) noexcept nogil:
    """Sign of ux * vy - uy * vx, every factor in [0, bound] (bound below 2**41): 64-bit
    products below 2**31."""
    cdef long long p, q
    if bound < ((<long long> 1) << 31):
        p = ux * vy
        q = uy * vx
        return (p > q) - (p < q)
    return sc_grid_cross(ux, uy, vx, vy)


cdef inline int ga_end_after(GridIsotonicStore st, int c) noexcept nogil:
    """The first block end >= c (-1 if none)."""
    return k_bit_succ(st.ebits, st.esumm, st.nc, st.ns, c)


cdef inline int ga_end_before(GridIsotonicStore st, int c) noexcept nogil:
    """The last block end < c (c >= 1; cell 0 is always one)."""
    return k_bit_pred(st.ebits, st.esumm, c - 1)


cdef inline int ga_rehull(GridIsotonicStore st, int ka, int kb) noexcept nogil:
    """Split the cells of ``(ka, kb]`` (no end inside, ``kb`` a present cell) into the
    blocks of their lower hull from end ``ka``: set their ends and totals. Returns the
    first block's end. O(present cells in the range)."""
    cdef int n = 1, k, w, whi = kb >> 6, i
    cdef long long pw = 0, ps = 0
    cdef unsigned long long m
    # the stack: the tree's leaf-hull arrays (nleaf * B >= nc entries), free while
    # the tree is stale (every caller runs after add_c set tree_ok to False)
    cdef int* sk = st.hk
    cdef long long* sx = st.hx
    cdef long long* sy = st.hy
    sk[0] = ka
    sx[0] = 0
    sy[0] = 0
    w = (ka + 1) >> 6
    m = st.bits[w] & ~(((<unsigned long long> 1) << ((ka + 1) & 63)) - 1)
    while True:
        while m:
            k = (w << 6) + sc_grid_ctz(m)
            m &= m - 1
            if k > kb:
                break
            pw += st.cw[k]
            ps += st.cs[k]
            st._op_scan += 1
            n = k_chain_pop(sx, sy, n, pw, ps)
            sk[n] = k
            sx[n] = pw
            sy[n] = ps
            n += 1
        w += 1
        if w > whi:
            break
        m = st.bits[w]
    for i in range(1, n):
        k = sk[i]
        k_bit_set(st.ebits, st.esumm, k)
        st.bw[k] = sx[i] - sx[i - 1]
        st.bs[k] = sy[i] - sy[i - 1]
    return sk[1]


cdef inline bint ga_steeper_or_equal(GridIsotonicStore st, int a, int b) noexcept nogil:
    """Is the mean of block ``a`` >= that of block ``b``?"""
    return ga_sign(st.bw[b], st.bs[b], st.bw[a], st.bs[a],
                   st.bw[a] if st.bw[a] > st.bw[b] else st.bw[b]) >= 0


cdef inline int ga_settle(GridIsotonicStore st, int e, int sides) noexcept nogil:
    """Pool block ``e`` with its neighbours while their means are not increasing; the
    resulting block's end. ``sides``: which neighbour can break the order before any
    pooling (1: the right one, the block's mean having gone up; 2: the left one; 3:
    either); after a pooling, both."""
    cdef int r, l
    while True:
        if sides & 1:
            r = ga_end_after(st, e + 1)
            if r >= 0 and ga_steeper_or_equal(st, e, r):
                k_bit_clear(st.ebits, st.esumm, e)
                st.bw[r] += st.bw[e]
                st.bs[r] += st.bs[e]
                st._op_scan += 1
                e = r
                sides = 3
                continue
        if sides & 2:
            l = ga_end_before(st, e)
            if l > 0 and ga_steeper_or_equal(st, l, e):
                k_bit_clear(st.ebits, st.esumm, l)
                st.bw[e] += st.bw[l]
                st.bs[e] += st.bs[l]
                st._op_scan += 1
                sides = 3
                continue
        return e


cdef inline bint ga_prefixes_hold(GridIsotonicStore st, int ka, int c, long long W,
                                  long long S) noexcept nogil:
    """Do the points of the cells in ``(ka, c)`` lie on or above the chord of the block
    ``(W, S)`` from ``ka`` (each prefix's mean >= the block's)? An empty cell's point is
    its predecessor's (or ``ka``'s, on the chord), so a word of the present-cell bit set
    that is full or empty is scanned cell by cell, without its bits. 64-bit products
    while ``W`` is below 2**31 units."""
    cdef int k, w, whi, hi
    cdef long long pw = 0, ps = 0
    cdef unsigned long long m
    cdef bint small = W < ((<long long> 1) << 31)
    if c - 1 <= ka:
        return True
    k = ka + 1
    st._op_scan += c - 1 - ka
    while k < c:
        w = k >> 6
        hi = (w << 6) + 64
        if hi > c:
            hi = c
        m = st.bits[w]
        if m == 0:
            k = hi
            continue
        if small:
            while k < hi:
                pw += st.cw[k]
                ps += st.cs[k]
                if W * ps < S * pw:
                    return False
                k += 1
        else:
            while k < hi:
                pw += st.cw[k]
                ps += st.cs[k]
                if sc_grid_cross(W, S, pw, ps) < 0:
                    return False
                k += 1
    return True


cdef inline bint ga_suffixes_hold(GridIsotonicStore st, int c, int kb, long long W,
                                  long long S) noexcept nogil:
    """Do the points of the cells in ``[c, kb)`` lie on or above the chord of the block
    ``(W, S)`` ending at ``kb`` (the mean of the cells after each <= the block's)? As
    :func:`ga_prefixes_hold`, from ``kb`` down."""
    cdef int k = kb - 1, lo
    cdef long long sw = st.cw[kb], ss = st.cs[kb]
    cdef bint small = W < ((<long long> 1) << 31)
    if k < c:
        return True
    st._op_scan += kb - c
    while k >= c:
        lo = (k >> 6) << 6
        if lo < c:
            lo = c
        if st.bits[k >> 6] == 0:
            k = lo - 1
            continue
        if small:
            while k >= lo:
                if W * ss > S * sw:
                    return False
                sw += st.cw[k]
                ss += st.cs[k]
                k -= 1
        else:
            while k >= lo:
                if sc_grid_cross(W, S, sw, ss) > 0:
                    return False
                sw += st.cw[k]
                ss += st.cs[k]
                k -= 1
    return True


cdef inline void ga_add(GridIsotonicStore st, int c) noexcept nogil:
    """The blocks after the event ``(st._edw, st._eds)`` was added to cell ``c`` (its
    sums already updated)."""
    cdef long long dw = st._edw, ds = st._eds, W0, S0, W, S
    cdef int kb = ga_end_after(st, c), ka, sgn, first
    cdef bint holds
    if kb < 0:
        # after the last end: a block of its own
        k_bit_set(st.ebits, st.esumm, c)
        st.bw[c] = dw
        st.bs[c] = ds
        ga_settle(st, c, 2)
        return
    ka = ga_end_before(st, c)
    W0 = st.bw[kb]
    S0 = st.bs[kb]
    W = W0 + dw
    S = S0 + ds
    st.bw[kb] = W
    st.bs[kb] = S
    sgn = ga_sign(W0, S0, dw, ds, W)   # the sign of the change of the block's mean
    if sgn > 0:
        holds = ga_prefixes_hold(st, ka, c, W, S)
    elif sgn < 0:
        holds = ga_suffixes_hold(st, c, kb, W, S)
    else:
        return   # same mean: every point keeps its side of the chord, no neighbour moves
    if holds:
        # the mean went up: the left neighbour's is below the old one; down: the mirror
        ga_settle(st, kb, 1 if sgn > 0 else 2)
        return
    first = ga_rehull(st, ka, kb)
    ga_settle(st, first, 3)
    ga_settle(st, ga_end_after(st, kb), 3)


cdef inline void ga_build(GridIsotonicStore st) noexcept nogil:
    """The block array from the cells, and the root's totals. O(K)."""
    cdef int last
    memset(st.ebits, 0, st.nw * sizeof(unsigned long long))
    memset(st.esumm, 0, st.ns * sizeof(unsigned long long))
    k_bit_set(st.ebits, st.esumm, 0)
    st.bw[0] = 0
    st.bs[0] = 0
    last = k_bit_pred(st.bits, st.summ, st.nc - 1)
    if last > 0:
        ga_rehull(st, 0, last)
    st.arr_ok = True


cdef inline double ga_value(GridIsotonicStore st, int c, int* kb) noexcept nogil:
    """The value of the block holding present cell ``c``, and its end."""
    kb[0] = ga_end_after(st, c)
    return (<double> st.bs[kb[0]]) / (<double> st.bw[kb[0]])


cdef inline void ga_start(GridIsotonicStore st) noexcept nogil:
    """Build the block array and open a first, short window of adds."""
    ga_build(st)
    st._arr_events = 0
    st._arr_window_len = GA_FIRST_WINDOW
    st._arr_window_scan = st._op_scan


cdef inline bint ga_check_window(GridIsotonicStore st) noexcept nogil:
    """After an add on the block array under the automatic policy: True (the caller
    moves to the tree) as soon as the window of adds it is in has scanned more than
    ``GA_SCAN_LIMIT`` cells per add of the window's length; a window is
    ``GA_FIRST_WINDOW`` adds after a build, then ``GA_WINDOW``. So the adds on the
    block array cost at most ``GA_SCAN_LIMIT`` cells each on average, plus one add's
    O(K) per move to the tree."""
    if st._op_scan - st._arr_window_scan > st._arr_window_len * GA_SCAN_LIMIT:
        return True
    st._arr_events += 1
    if st._arr_events == st._arr_window_len:
        if st._arr_window_len == GA_WINDOW:
            st._arr_backoff = GA_FIRST_WAIT   # a full window passed: the next wait is short
        st._arr_events = 0
        st._arr_window_len = GA_WINDOW
        st._arr_window_scan = st._op_scan
    return False
