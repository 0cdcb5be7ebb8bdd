# The monotone chain of a leaf's own lower hull (k_leaf_update in _pav_kernels.pxd), one
# home for its fast and general loops: the point of a cell, the pops and the push, and
# the stretch of cells the fast loop must chain after a change. Inline (per event).

from streamcal.core._pav cimport Leaf


# Cell t's point (running sums) and its Pt.z, Pt.f (the last key so far of a cell with
# s != 0, of one with s != w) ...
cdef inline void _leaf_cell(Leaf* L, int t, double* cw, double* cs, double* lz,
                            double* lf) noexcept nogil:
    cw[0] += L.w[t]
    cs[0] += L.s[t]
    if L.s[t] != 0.0:
        lz[0] = L.x[t]
    if L.s[t] != L.w[t]:
        lf[0] = L.x[t]


# ... the pops before it: the last vertices that the point (cw, cs) leaves off the lower
# hull, by the fast loop's orientation test (exact coordinates; returns the count kept) ...
cdef inline int _leaf_pop(Leaf* L, int nh, double cw, double cs) noexcept nogil:
    cdef double det
    while nh >= 2:
        det = ((L.hx[nh - 1] - L.hx[nh - 2]) * (cs - L.hy[nh - 1])
               - (L.hy[nh - 1] - L.hy[nh - 2]) * (cw - L.hx[nh - 1]))
        if det > 0.0:
            break
        nh -= 1
    return nh


# ... and the push of that point as hull vertex nh (returns the new vertex count)
cdef inline int _leaf_push(Leaf* L, int nh, int t, double cw, double cs, double lz,
                           double lf) noexcept nogil:
    L.hx[nh] = cw
    L.hy[nh] = cs
    L.hz[nh] = lz
    L.hf[nh] = lf
    L.hidx[nh] = <unsigned char> t
    return nh + 1


# The label runs after cell t (Pt.z, Pt.f: see _leaf_cell) given those after cell lo - 1,
# found by scanning back from t and stopping at the first cell of each kind: over disjoint
# stretches (lo, t], so a chain's scans add up to one pass at most, and far less when
# labels mix (the stretch's own loop then need not follow the runs cell by cell).
cdef inline void _leaf_runs(Leaf* L, int lo, int t, double* lz, double* lf) noexcept nogil:
    cdef bint fz = False, ff = False
    while t >= lo:
        if not fz and L.s[t] != 0.0:
            lz[0] = L.x[t]
            fz = True
        if not ff and L.s[t] != L.w[t]:
            lf[0] = L.x[t]
            ff = True
        if fz and ff:
            return
        t -= 1


# The point of cell t entering a chain whose running sums and label runs are those after
# cell lo - 1: they are caught up over lo .. t, then the pops and the push.
cdef inline int _leaf_enter(Leaf* L, int nh, int lo, int t, double* cw, double* cs,
                            double* lz, double* lf) noexcept nogil:
    cdef int i
    for i in range(lo, t + 1):
        cw[0] += L.w[i]
        cs[0] += L.s[i]
    _leaf_runs(L, lo, t, lz, lf)
    nh = _leaf_pop(L, nh, cw[0], cs[0])
    return _leaf_push(L, nh, t, cw[0], cs[0], lz[0], lf[0])


cdef inline int k_leaf_stretch(Leaf* L, int nh, int t0, int tend, double bx, double by,
                               double* cw, double* cs, double* lz,
                               double* lf) noexcept nogil:
    """The fast loop's chain over cells t0 .. tend, after the ``nh`` vertices kept (the
    running sums and label runs at the last of them in cw, cs, lz, lf; with nh = 0 the
    chain starts at cell t0); (bx, by): the point of cell tend, exactly. Returns the
    vertex count.

    Only points on or below the segment from the chain's start A to B = (bx, by) enter
    the chain: A and B are points of the leaf, so its lower hull lies on or below that
    segment over [A.x, B.x], and a point strictly above it is strictly above the hull,
    no vertex, and never decides a pop of one that is (the chain's output is the hull's
    vertex sequence, a function of the points on it). The test is the chain's own, exact
    on the fast loop's coordinates (integer multiples of one power of two below 2**26 of
    it). After a change most of a stretch lies above that segment: a multiply-add per
    cell instead of a pop test and a push, the running sums and label runs caught up
    (``_leaf_enter``) only where a point enters the chain."""
    cdef int t = t0, lo
    cdef double dx, dy, g = 0.0, a0, a1
    if t > tend:
        return nh
    if nh == 0:
        _leaf_cell(L, t, cw, cs, lz, lf)
        nh = _leaf_push(L, 0, t, cw[0], cs[0], lz[0], lf[0])
        t += 1
    # The chain's test of the point P_t of cell t against the segment AB is the sign of
    # dx (P_t.y - A.y) - dy (P_t.x - A.x), and (cw, cs) is A: so it is the sign of g, the
    # sum over the cells lo .. t of dx s - dy w. Every term, partial sum and product is
    # an integer multiple of the square of the coordinates' unit below 2**52 of it: g is
    # the test's value exactly, in any order (two cells at a time: one dependent
    # addition per pair). The running sums are caught up only where a point enters.
    lo = t
    dx = bx - L.hx[nh - 1]
    dy = by - L.hy[nh - 1]
    while t < tend:
        a0 = dx * L.s[t] - dy * L.w[t]
        if t + 1 < tend:
            a1 = dx * L.s[t + 1] - dy * L.w[t + 1]
            if g + a0 > 0.0 and g + (a0 + a1) > 0.0:
                g = g + (a0 + a1)
                t += 2
                continue
        g = g + a0
        if g <= 0.0:
            nh = _leaf_enter(L, nh, lo, t, cw, cs, lz, lf)
            lo = t + 1
        t += 1
    if t == tend:
        # B, the point of cell tend, is given exactly
        _leaf_runs(L, lo, t, lz, lf)
        cw[0] = bx
        cs[0] = by
        nh = _leaf_pop(L, nh, bx, by)
        nh = _leaf_push(L, nh, t, bx, by, lz[0], lf[0])
    return nh
