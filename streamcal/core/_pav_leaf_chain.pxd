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


cdef inline int k_leaf_stretch(Leaf* L, int nh, int t0, int tend, double bx, double by,
                               double* cw, double* cs, double* lz,
                               double* lf) noexcept nogil:
    """The fast loop's chain over cells t0 .. tend, after the ``nh`` vertices kept (the
    running sums and label runs at the last of them in cw, cs, lz, lf; with nh = 0 the
    chain starts at cell t0); (bx, by): the point of cell tend, exactly. Returns the
    vertex count.

    Only points strictly below the segment from the chain's start A to B = (bx, by)
    enter the chain. A and B are points of the leaf, so its lower hull H lies on or
    below that segment over [A.x, B.x]: a point strictly above it is strictly above H;
    a point on it strictly between A and B is no vertex either (were H to touch the
    segment there, H, convex and on or below it, would follow it from A.x to B.x, and
    the point would lie inside that edge). The chain over the points left, which hold
    every vertex, gives the same vertex sequence (a function of H alone). The test is the
    chain's own, exact on the fast loop's coordinates (integer multiples of one power of
    two below 2**26 of it). After a change most of a stretch lies on or above that
    segment (all of it when the cells' labels are all 0, or all 1): there the test costs
    a multiply-add per cell (no pop test, no push, no running sums), and the running sums
    and label runs (``_leaf_runs``) are caught up only where a point enters the chain."""
    cdef int t = t0, lo
    cdef double ax, ay, dx, dy, g = 0.0, a0, a1, a2, a3
    cdef double sw, ss, zl, fl  # the running sums and label runs, in locals
    cdef bint dense = False
    if t > tend:
        return nh
    sw = cw[0]
    ss = cs[0]
    zl = lz[0]
    fl = lf[0]
    if nh == 0:
        _leaf_cell(L, t, &sw, &ss, &zl, &fl)
        nh = _leaf_push(L, 0, t, sw, ss, zl, fl)
        t += 1
    # g is the chain's test of the point P_t of the last cell looked at against the
    # segment AB: dx (P_t.y - A.y) - dy (P_t.x - A.x). Every term, product and partial
    # sum here is an integer multiple of the square of the coordinates' unit below
    # 2**52 of it: exact in any order. Where points stay on or above the segment, g grows by
    # dx s - dy w two cells at a time (one dependent addition per pair) and the running
    # sums (sw, ss: those after cell lo - 1) and label runs are caught up only where a
    # point enters; where points enter one after another (``dense``), the chain goes
    # cell by cell on the running sums.
    lo = t
    ax = sw
    ay = ss
    dx = bx - ax
    dy = by - ay
    while t < tend:
        if dense:
            _leaf_cell(L, t, &sw, &ss, &zl, &fl)
            g = dx * (ss - ay) - dy * (sw - ax)
            t += 1
            if g < 0.0:
                nh = _leaf_pop(L, nh, sw, ss)
                nh = _leaf_push(L, nh, t - 1, sw, ss, zl, fl)
            else:
                dense = False
                lo = t
            continue
        while t + 3 < tend:  # four cells on or above the segment at a time
            a0 = dx * L.s[t] - dy * L.w[t]
            a1 = a0 + (dx * L.s[t + 1] - dy * L.w[t + 1])
            a2 = dx * L.s[t + 2] - dy * L.w[t + 2]
            a3 = a2 + (dx * L.s[t + 3] - dy * L.w[t + 3])
            a2 = a1 + a2
            a3 = a1 + a3
            if not (g + (a0 if a0 < a1 else a1) >= 0.0 and g + (a2 if a2 < a3 else a3) >= 0.0):
                break
            g = g + a3
            t += 4
        while t + 1 < tend:  # then two
            a0 = dx * L.s[t] - dy * L.w[t]
            a1 = dx * L.s[t + 1] - dy * L.w[t + 1]
            if not (g + a0 >= 0.0 and g + (a0 + a1) >= 0.0):
                break
            g = g + (a0 + a1)
            t += 2
        if t == tend:
            break
        g = g + (dx * L.s[t] - dy * L.w[t])
        if g < 0.0:
            # P_t enters: catch the sums and label runs up over lo .. t
            _leaf_runs(L, lo, t, &zl, &fl)
            while lo <= t:
                sw += L.w[lo]
                ss += L.s[lo]
                lo += 1
            nh = _leaf_pop(L, nh, sw, ss)
            nh = _leaf_push(L, nh, t, sw, ss, zl, fl)
            dense = True
        t += 1
    if not dense:
        _leaf_runs(L, lo, t - 1, &zl, &fl)
    if t == tend:
        # B, the point of cell tend, is given exactly
        _leaf_cell(L, t, &sw, &ss, &zl, &fl)
        sw = bx
        ss = by
        nh = _leaf_pop(L, nh, bx, by)
        nh = _leaf_push(L, nh, t, bx, by, zl, fl)
    cw[0] = sw
    cs[0] = ss
    lz[0] = zl
    lf[0] = fl
    return nh
