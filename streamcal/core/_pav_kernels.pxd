# The per-event kernels of the compiled isotonic block store (streamcal/core/_pav.pyx):
# the orientation tests (exact 128-bit integer, floating filter, double-double
# fallback), the leaf's own hull and the bridge of two hulls by simultaneous descent.
# Inline functions of the store (``st``), compiled into _pav.pyx, whose methods of the
# same names (without ``k``) call them and carry their docstrings; see that module's
# docstring for the algorithms, costs and exactness argument.

from libc.math cimport fabs, fma, frexp, ldexp, INFINITY

from streamcal.core._search cimport bisect_right
from streamcal.core._pav_requalify cimport k_exact_threshold, k_requalify_since

from streamcal.core._pav cimport (
    CH_PREFIX, CH_SUFFIX, IsotonicBlockStore, LEAF_CAP, Leaf, Loc, Node, Pt, Sums,
)
from streamcal.core._pav_leaf_chain cimport _leaf_cell, _leaf_pop, _leaf_push, k_leaf_stretch
from streamcal.core._pav_tree cimport (
    _bridge_vertex, _dd_add, _dd_sum2, _fdet, _fsign, _into_right, _leaf_vertex,
    _loc_from_cache, _loc_shift, _loc_to_cache, _locate, _pure_slope, _range, _range_from,
    _range_upto, _set_bridge, _sign, k_enter, k_rest_after, k_side_edge, k_side_local,
)

cdef extern from *:
    """
    static inline int sc_pav_ctzll(unsigned long long v) { return __builtin_ctzll(v); }
    static inline int sc_pav_det_sign(long long a, long long b, long long c, long long d) {
        __int128 p = (__int128)a * (__int128)b - (__int128)c * (__int128)d;
        return (p > 0) - (p < 0);
    }
    /* sign of cby*dx1*dx2 - dy2*dx1*f - dy1*dx2*e, every factor below 2**40 */
    static inline int sc_pav_triple_sign(long long cby, long long dx1, long long dx2,
                                         long long dy2, long long f, long long dy1,
                                         long long e) {
        __int128 g = (__int128)(cby * 1) * dx1 * dx2 - (__int128)dy2 * dx1 * f
                     - (__int128)dy1 * dx2 * e;
        return (g > 0) - (g < 0);
    }
    /* 2**53 */
    static const double SC_PAV_TWO53 = 9007199254740992.0;
    /* a slope below this goes to sc_pav_vsign_tiny */
    static const double SC_PAV_TINY_SLOPE = 0x1p-900;
    /* relative error bound of a coordinate (a sum of at most B + 3 * depth terms) x 2 */
    static const double SC_PAV_COORD_ERR = 4e-13;
    /* relative width of the tie band of the orientation fallback (8 units of roundoff) */
    static const double SC_PAV_TIE = 8.0 * 0x1p-53;
    /* relative error bound of a product of two edge sums of one leaf (sums of at most
       256 non-negative cells in any order: (255 + 255 + 1) units of roundoff), with a wide
       margin; and the smallest product trusted */
    static const double SC_PAV_EDGE_ERR = 0x1p-40;
    static const double SC_PAV_EDGE_TINY = 0x1p-900;
    /* relative tie band of k_meet_left_of_split's fallback: that of the orientation
       fallback (SC_PAV_TIE), whose ties it must agree with (see k_meet_left_of_split) */
    static const double SC_PAV_MEET_TIE = 8.0 * 0x1p-53;
    /* k_vsign_ranges for a slope S / W below 2**-900 (weights spanning more than the
       double range, e.g. 1e-300 and 1e300 mixed): S and W each scaled by their own
       power of two, as S scaled with W would underflow (a slope of 1e-450 read as 0,
       "equal" to a slope of 0 although its cells lie above that line: the tests would
       fit no point set, and the bridge descent could end outside the children's
       hulls). No tie of equal doubles here (their quotients underflow); read-outs
       pool edges of equal values anyway (block_bounds). Both S > 0; the same tie band
       as k_vsign_ranges. Out of line: rare, and k_vsign_ranges is inlined. */
    static __attribute__((noinline)) int sc_pav_vsign_tiny(
            double uW, double uWlo, double uS, double uSlo,
            double vW, double vWlo, double vS, double vSlo) {
        int ku, kv, ks, kt, dk;
        double p1, p2, e1, e2, det;
        frexp(uW, &ku);
        frexp(vW, &kv);
        frexp(uS, &ks);
        frexp(vS, &kt);
        /* slope(v) / slope(u) is within a factor 4 of 2**dk */
        dk = (kt - kv) - (ks - ku);
        if (dk > 2) return 1;
        if (dk < -2) return -1;
        uW = ldexp(uW, -ku); uWlo = ldexp(uWlo, -ku);
        uS = ldexp(uS, -ks); uSlo = ldexp(uSlo, -ks);
        vW = ldexp(vW, -kv); vWlo = ldexp(vWlo, -kv);
        /* times 2**dk: uW vS and uS vW keep their ratio */
        vS = ldexp(vS, dk - kt); vSlo = ldexp(vSlo, dk - kt);
        p1 = uW * vS;
        e1 = fma(uW, vS, -p1) + (uWlo * vS + uW * vSlo);
        p2 = uS * vW;
        e2 = fma(uS, vW, -p2) + (uSlo * vW + uS * vWlo);
        det = (p1 - p2) + (e1 - e2);
        if (fabs(det) <= SC_PAV_TIE * (fabs(p1) + fabs(p2))) return 0;
        return (det > 0) - (det < 0);
    }
    """
    int sc_pav_ctzll(unsigned long long v) nogil
    int sc_pav_triple_sign(long long cby, long long dx1, long long dx2, long long dy2,
                           long long f, long long dy1, long long e) nogil
    int sc_pav_det_sign(long long a, long long b, long long c, long long d) nogil
    const double _TWO53 "SC_PAV_TWO53"
    const double _TINY_SLOPE "SC_PAV_TINY_SLOPE"
    int sc_pav_vsign_tiny(double uW, double uWlo, double uS, double uSlo, double vW,
                          double vWlo, double vS, double vSlo) nogil
    const double _COORD_ERR "SC_PAV_COORD_ERR"
    const double _TIE "SC_PAV_TIE"
    const double _EDGE_ERR "SC_PAV_EDGE_ERR"
    const double _EDGE_TINY "SC_PAV_EDGE_TINY"
    const double _MEET_TIE "SC_PAV_MEET_TIE"


# The first test of k_vsign and k_vsign_local (one home): runs of cells whose labels
# are all 0, or all 1, have slopes exactly 0 or 1 (the forgetting clock's non-dyadic
# weights make them collinear within the rounding of their coordinates, which no filter
# can decide): u x v has the sign of slope(v) - slope(u), both x-extents being
# positive. Returns that sign, or 2 when a slope is not pure (then the callers filter).
# Inlined, the sentinel folds into the callers' branches.
cdef inline int k_pure_sign(Pt a, Pt b, Pt c, Pt d) noexcept nogil:
    cdef int pu = _pure_slope(a, b), pv
    if pu >= 0:
        pv = _pure_slope(c, d)
        if pv >= 0:
            return pv - pu
    return 2


# IsotonicBlockStore._vsign: sign of (b - a) x (d - c) in the frame of ``frame``.
cdef inline int k_vsign(IsotonicBlockStore st, Node* frame, Pt a, Pt b, Pt c, Pt d) noexcept nogil:
    cdef double ux = b.x - a.x, uy = b.y - a.y, vx = d.x - c.x, vy = d.y - c.y
    cdef double q, nu, nv, det, err
    cdef int s
    if st._exact(frame):
        if st._fast(frame):
            # coordinates below 2**26 units: both products and their difference
            # are exact in double precision
            return _sign(ux * vy - uy * vx)
        q = st.qscale
        return sc_pav_det_sign(<long long> (ux * q), <long long> (vy * q),
                               <long long> (uy * q), <long long> (vx * q))
    s = k_vsign_filter(frame, a, b, c, d)
    if s != 2:
        return s
    return k_vsign_ranges(st, frame, a, b, c, d)


# k_vsign without exact coordinates or its last resort: the sign when the pure slopes
# or the rigorous filter (coordinates within _COORD_ERR of frame.W) decide it, else 2
cdef inline int k_vsign_filter(Node* frame, Pt a, Pt b, Pt c, Pt d) noexcept nogil:
    cdef double ux = b.x - a.x, uy = b.y - a.y, vx = d.x - c.x, vy = d.y - c.y
    cdef double nu, nv, det, err
    cdef int s = k_pure_sign(a, b, c, d)
    if s != 2:
        return s
    nu = fabs(ux) + fabs(uy)
    nv = fabs(vx) + fabs(vy)
    if nu > 0.0 and nv > 0.0:
        det = (ux / nu) * (vy / nv) - (uy / nu) * (vx / nv)
        err = _COORD_ERR * frame.W * (1.0 / nu + 1.0 / nv) + 1e-15
        if det > err:
            return 1
        if det < -err:
            return -1
    return 2


# k_vsign_local: the same sign without exact coordinates, from the vectors u = b - a
# and v = d - c computed by the caller with each component within du, resp. dv, of
# the exact sums of their cells (k_bridge sums them in the children's own frames:
# far tighter than the frame-wide bound of k_vsign). Same decisions: the pure slopes
# and a rigorous filter give the exact sign, the rest goes to k_vsign (out of line).
cdef inline int k_vsign_local(IsotonicBlockStore st, Node* frame, double ux, double uy,
                              double du, double vx, double vy, double dv,
                              Pt a, Pt b, Pt c, Pt d) noexcept nogil:
    cdef double nu, nv, det, eu, ev
    cdef int s = k_pure_sign(a, b, c, d)
    if s != 2:
        return s
    nu = fabs(ux) + fabs(uy)
    nv = fabs(vx) + fabs(vy)
    if nu > 0.0 and nv > 0.0:
        # |u_true x v_true - u x v| <= du nv + dv nu + 2 du dv, normalised by nu nv;
        # 1e-15 covers the rounding of the normalised products (each at most 1)
        eu = du / nu
        ev = dv / nv
        det = (ux / nu) * (vy / nv) - (uy / nu) * (vx / nv)
        if eu < 1.0 and ev < 1.0:
            if det > eu + ev + 2.0 * eu * ev + 1e-15:
                return 1
            if det < -(eu + ev + 2.0 * eu * ev + 1e-15):
                return -1
    return st._vsign(frame, a, b, c, d)  # out of line: k_bridge's tests stay small


# the fallback of k_vsign: too close to call, so both vectors are recomputed as range
# sums of their own cells (double-double) and the sign taken with a tie band.
cdef inline int k_vsign_ranges(IsotonicBlockStore st, Node* frame, Pt a, Pt b, Pt c,
                               Pt d) noexcept nogil:
    st._op_fallback += 1
    return k_sums_sign(_range(frame, a.k, b.k), _range(frame, c.k, d.k))


# sums * 2**k as ldexp gives them (one rounding, as ldexp's), one ldexp for all parts
cdef inline void _scale_sums(Sums* r, int k) noexcept nogil:
    cdef double f
    if -1022 <= k <= 1023:
        f = ldexp(1.0, k)
        r.W = r.W * f
        r.Wlo = r.Wlo * f
        r.S = r.S * f
        r.Slo = r.Slo * f
    else:
        r.W = ldexp(r.W, k)
        r.Wlo = ldexp(r.Wlo, k)
        r.S = ldexp(r.S, k)
        r.Slo = ldexp(r.Slo, k)


# The sign of u x v from double-double sums of each vector's own cells: uW vS - uS vW,
# products with FMA, a geometric decision (the same in every frame), far finer than the
# filters'; slopes equal up to the rounding of their doubles are a tie (0).
cdef inline int k_sums_sign(Sums su, Sums sv) noexcept nogil:
    cdef double det, p1, p2, e1, e2
    cdef int ku, kv
    if su.W <= 0.0 or sv.W <= 0.0:
        return 0
    if su.S == 0.0 or sv.S == 0.0:
        # a slope exactly 0 (the sums of non-negative cells): the other decides
        return (sv.S > 0.0) - (su.S > 0.0)
    if su.S < _TINY_SLOPE * su.W or sv.S < _TINY_SLOPE * sv.W:
        # a slope below 2**-900: scaled with its W (below), S would underflow
        return sc_pav_vsign_tiny(su.W, su.Wlo, su.S, su.Slo, sv.W, sv.Wlo, sv.S, sv.Slo)
    # scale each vector by a power of two (exact) to about 1: products of weights
    # spanning 2**1000 would underflow or overflow
    frexp(su.W, &ku)
    frexp(sv.W, &kv)
    _scale_sums(&su, -ku)
    _scale_sums(&sv, -kv)
    p1 = su.W * sv.S
    e1 = fma(su.W, sv.S, -p1) + (su.Wlo * sv.S + su.W * sv.Slo)
    p2 = su.S * sv.W
    e2 = fma(su.S, sv.W, -p2) + (su.Slo * sv.W + su.S * sv.Wlo)
    det = (p1 - p2) + (e1 - e2)
    # slopes equal up to the rounding of their doubles: pool (a tie), so that the
    # blocks' values S / W strictly increase as doubles, as PAV's comparisons give
    if fabs(det) <= _TIE * (fabs(p1) + fabs(p2)) or sv.S / sv.W == su.S / su.W:
        return 0
    return _sign(det)


# IsotonicBlockStore._edge_sign: edges (i0, i1], (i1, i2] of a leaf's chain: a filter on
# the chain's sums (uw, us), (vw, vs), else k_sums_sign on Sum2 sums of the cells by
# index (the last resort's range sums, the same doubles, without the search).
cdef inline int k_edge_sign(IsotonicBlockStore st, Leaf* L, int i0, int i1, int i2, double uw,
                            double us, double vw, double vs) noexcept nogil:
    cdef double p1 = uw * vs, p2 = us * vw
    cdef double det = p1 - p2, m = p1 + p2
    cdef Sums su, sv
    if _EDGE_TINY < m < INFINITY:
        if det > _EDGE_ERR * m:
            return 1
        if det < -_EDGE_ERR * m:
            return -1
    if us == 0.0 or vs == 0.0:  # a slope exactly 0: k_sums_sign's first decision
        return (vs > 0.0) - (us > 0.0)
    st._op_edge_sums += 1
    su.N = su.C = sv.N = sv.C = 0
    _dd_sum2(L.w, L.s, i0 + 1, i1 + 1, &su.W, &su.Wlo, &su.S, &su.Slo)
    _dd_sum2(L.w, L.s, i1 + 1, i2 + 1, &sv.W, &sv.Wlo, &sv.S, &sv.Slo)
    return k_sums_sign(su, sv)


# A double-double product (ah + al) * (bh + bl), FMA for the error of the leading term;
# the result renormalised (rh the double nearest to rh + rl).
cdef inline void _dd_mul(double ah, double al, double bh, double bl, double* rh,
                         double* rl) noexcept nogil:
    cdef double p = ah * bh
    cdef double e = fma(ah, bh, -p) + (ah * bl + al * bh)
    rh[0] = p + e
    rl[0] = e - (rh[0] - p)


# sign of the double-double P - Q - R (all three non-negative), 0 within the band
# _MEET_TIE * (P + Q + R) (see k_meet_left_of_split)
cdef inline int _dd3_sign(double ph, double pl, double qh, double ql, double rh,
                          double rl) noexcept nogil:
    cdef double dh = 0.0, dl = 0.0
    _dd_add(&dh, &dl, ph, pl)
    _dd_add(&dh, &dl, -qh, -ql)
    _dd_add(&dh, &dl, -rh, -rl)
    if fabs(dh) <= _MEET_TIE * (ph + qh + rh):
        return 0
    return _sign(dh)


# sc_pav_triple_sign's test in Python integers, for coordinates of 2**40 units and more
# (products beyond 128 bits): cby dx1 dx2 - dy2 dx1 f - dy1 dx2 e >= 0
cdef inline bint _big_triple_sign(double cby, double dx1, double dx2, double dy2, double f,
                                  double dy1, double e):
    return (int(cby) * int(dx1) * int(dx2) - int(dy2) * int(dx1) * int(f)
            - int(dy1) * int(dx2) * int(e)) >= 0


# IsotonicBlockStore._meet_left_of_split: do lines ab and cd meet at or left of xs?
cdef inline bint k_meet_left_of_split(IsotonicBlockStore st, Node* frame, Pt a, Pt b, Pt c, Pt d,
                                     double xs, Node* left) noexcept nogil:
    cdef double dx1 = b.x - a.x, dy1 = b.y - a.y, dx2 = d.x - c.x, dy2 = d.y - c.y
    cdef double cbx = c.x - b.x, cby = c.y - b.y, e = xs - b.x
    cdef double F, t1, t2, t3, q, delta, err, g1, g2, m
    cdef bint big
    cdef Sums s1, s2, sb, se, sf
    cdef int k1, k2, k3
    cdef double ph, pl, qh, ql, rh, rl, th, tl
    if st._exact(frame):
        # every coordinate is an exact multiple of 2**qexp: decide exactly
        q = st.qscale
        if frame.W * q < 1099511627776.0:  # below 2**40 units: 128-bit products
            return sc_pav_triple_sign(
                <long long> (cby * q), <long long> (dx1 * q), <long long> (dx2 * q),
                <long long> (dy2 * q), <long long> ((cbx - e) * q),
                <long long> (dy1 * q), <long long> (e * q)) >= 0
        with gil:
            big = _big_triple_sign(cby * q, dx1 * q, dx2 * q, dy2 * q, (cbx - e) * q,
                                   dy1 * q, e * q)
        return big
    # a bound on the error of F from coordinate errors of at most delta each: each
    # slope dy / dx is then within 2 delta (1 + |slope|) / (dx - 2 delta) of the true
    # one, a bound only when dx exceeds 2 delta (an edge narrower than the coordinates'
    # resolution, whose computed dx may even be 0 or negative, has no usable slope)
    delta = _COORD_ERR * frame.W
    if dx1 > 4.0 * delta and dx2 > 4.0 * delta:
        # slopes first, so that a tie (equal slopes, or the lines meeting exactly at
        # xs) gives exactly 0 when the slopes are exact
        t1 = cby
        t2 = (dy2 / dx2) * (cbx - e)
        t3 = (dy1 / dx1) * e
        F = t1 - t2 - t3
        g1 = 2.0 * delta * (1.0 + fabs(dy1 / dx1)) / (dx1 - 2.0 * delta)
        g2 = 2.0 * delta * (1.0 + fabs(dy2 / dx2)) / (dx2 - 2.0 * delta)
        err = 1e-15 * (fabs(t1) + fabs(t2) + fabs(t3)) + delta * (
            2.0 + 3.0 * fabs(dy2 / dx2) + 2.0 * fabs(dy1 / dx1)
        ) + g2 * (fabs(cbx - e) + 2.0 * delta) + g1 * (fabs(e) + 2.0 * delta)
        if fabs(F) > err:
            return F >= 0.0
    st._op_fallback += 1
    # G = cby dx1 dx2 - dy2 dx1 f - dy1 dx2 e >= 0 (the same test times dx1 dx2 > 0),
    # every factor a range sum of its own cells (double-double, accurate relative to
    # itself whatever the weights of the other cells: no coordinate difference), the
    # products in double-double with FMA. Each term holds one factor of each group
    # (dx1, dy1), (dx2, dy2), (cby, f, e): each group is scaled by one power of two
    # (exact) so that no product overflows. The sign is exact unless |G| is within
    # _MEET_TIE of its terms (the resolution of the sums), then taken as a tie
    # (the lines meeting at xs: True, as the exact test).
    s1 = _range(frame, a.k, b.k)
    s2 = _range(frame, c.k, d.k)
    sb = _range(frame, b.k, c.k)
    se = _range_from(left, b.k)               # xs - b.x
    sf = _range_upto(frame.right, c.k)        # c.x - xs, without a difference
    if s1.W <= 0.0 or s2.W <= 0.0:
        return True
    frexp(s1.W, &k1)
    frexp(s2.W, &k2)
    m = sb.S
    if se.W > m:
        m = se.W
    if sf.W > m:
        m = sf.W
    if m <= 0.0:
        return True  # c.y == b.y and xs == b.x == c.x: G == 0
    frexp(m, &k3)
    _dd_mul(ldexp(s1.W, -k1), ldexp(s1.Wlo, -k1), ldexp(s2.W, -k2), ldexp(s2.Wlo, -k2),
            &th, &tl)
    _dd_mul(th, tl, ldexp(sb.S, -k3), ldexp(sb.Slo, -k3), &ph, &pl)
    _dd_mul(ldexp(s1.W, -k1), ldexp(s1.Wlo, -k1), ldexp(s2.S, -k2), ldexp(s2.Slo, -k2),
            &th, &tl)
    _dd_mul(th, tl, ldexp(sf.W, -k3), ldexp(sf.Wlo, -k3), &qh, &ql)
    _dd_mul(ldexp(s1.S, -k1), ldexp(s1.Slo, -k1), ldexp(s2.W, -k2), ldexp(s2.Wlo, -k2),
            &th, &tl)
    _dd_mul(th, tl, ldexp(se.W, -k3), ldexp(se.Wlo, -k3), &rh, &rl)
    return _dd3_sign(ph, pl, qh, ql, rh, rl) >= 0


# One cell of a leaf changed (add_c, remove_c, relabel_c, a hypothetical event's
# restore): the leaf's update may keep what came before it (see k_leaf_update).
# ``dw``, ``ds``, ``dn``: the cell's change; ``sh``: +1 inserted, -1 deleted, 0 in place.
cdef inline void k_note_cell(IsotonicBlockStore st, int j, double dw, double ds,
                             long long dn, int sh) noexcept nogil:
    st._dirty = j
    st._tdw = dw
    st._tds = ds
    st._tdn = dn
    st._tsh = sh


# IsotonicBlockStore._leaf_update: totals and own lower hull of a leaf, O(B); after one
# changed cell (``_dirty`` > 0) with exact coordinates, O(the cells between the two
# kept hull vertices around it + the hull's vertices).
cdef inline void k_leaf_update(IsotonicBlockStore st, Node* v) noexcept nogil:
    cdef Leaf* L = v.leaf
    cdef int t, nh = 0
    cdef double cw = 0.0, cs = 0.0
    cdef long long cn = 0
    # the kept hull's vertices after the changed cell's stretch, translated (see below)
    cdef double tx[LEAF_CAP]
    cdef double ty[LEAF_CAP]
    cdef double tz[LEAF_CAP]
    cdef double tf[LEAF_CAP]
    cdef int ti[LEAF_CAP]
    cdef int k2, i, nt = 0, tend = L.cnt - 1
    cdef bint inc = False
    cdef double bx, by  # the point of cell tend (exact in the fast loop)
    cdef Pt p, h1, h2
    cdef bint fast, precise
    cdef double wlo = 0.0, slo = 0.0, lz = -INFINITY, lf = -INFINITY
    # without exact coordinates: sums of the cells of each hull edge (edge j joins
    # vertex j - 1 to vertex j), summed from the cells alone; ew, es: those of the cells
    # after the last vertex kept, up to the current one
    cdef double edw[LEAF_CAP]
    cdef double eds[LEAF_CAP]
    cdef double ew, es
    cdef int t0 = 0, k, dirty = st._dirty
    st._dirty = 0
    v.ostamp = v.stamp
    v.onv = v.nvl + v.nvr
    if dirty > 0 and L.hexact and st.qscale > 0.0:
        # the totals were exact sums (L.hexact: summed with exact coordinates), so is
        # the cell's change (multiples of 2**qexp): when the new total is below
        # 2**(qexp + 53) units, the old totals plus the change are the exact sums
        cw = v.W + st._tdw
        cs = v.S + st._tds
        cn = v.N + st._tdn
        inc = cw * st.qscale < _TWO53
    if not inc:
        cw = 0.0
        cs = 0.0
        cn = 0
        for t in range(L.cnt):
            cw += L.w[t]
            cs += L.s[t]
            cn += L.n[t]
    if not (st.qscale > 0.0 and cw * st.qscale < _TWO53):
        # every cell sum is a multiple of 2**qexp and so is every partial sum
        # (s <= w): below 2**(qexp + 53) the plain sums are exact, which is what
        # the double-double sums give (low parts 0); otherwise sum in double-double
        _dd_sum2(L.w, L.s, 0, L.cnt, &cw, &wlo, &cs, &slo)
    v.W = cw
    v.Wlo = wlo
    v.S = cs
    v.Slo = slo
    v.N = cn
    v.ncells = L.cnt
    v.nleaves = 1
    v.kmin = L.x[0]
    fast = st._fast(v)
    precise = not fast and not st._exact(v)
    cw = 0.0
    cs = 0.0
    if fast:
        # exact integer coordinates below 2**26 units: the orientation test of
        # _fsign on the arrays (the same expression, so the same signs)
        bx = v.W
        by = v.S
        if dirty > 0 and L.hexact:
            # Only the points from cell ``dirty`` on moved (add_c / remove_c), and the
            # kept hull was exact. The monotone chain after the cells before ``dirty``
            # is their lower hull, whose vertices up to the last vertex i0 of the kept
            # hull before ``dirty`` are that hull's (an extreme point of all the
            # points is one of a subset's, with the same edges before it): resume
            # the chain at i0, with the sums and label runs kept at that vertex. The
            # same exact tests on the same exact coordinates: the same hull.
            k = L.nh
            while k > 0 and L.hidx[k - 1] >= dirty:
                k -= 1
            if inc:
                # The points after the changed cell are the old ones translated by
                # (_tdw, _tds) (exactly). Between two of the kept hull's vertices
                # after it, every such point stays above the edge that joins them, so
                # it is no vertex of the new hull: past the first kept vertex after the
                # change (index tend now), only the kept vertices need the chain. Their
                # label runs: the kept ones if a cell after tend set them, else tend's.
                k2 = k
                if st._tsh < 0 and k2 < L.nh and L.hidx[k2] == dirty:
                    k2 += 1  # the deleted cell
                if k2 < L.nh:
                    tend = L.hidx[k2] + st._tsh
                    bx = L.hx[k2] + st._tdw
                    by = L.hy[k2] + st._tds
                    for i in range(k2 + 1, L.nh):
                        tx[nt] = L.hx[i] + st._tdw
                        ty[nt] = L.hy[i] + st._tds
                        tz[nt] = L.hz[i]
                        tf[nt] = L.hf[i]
                        ti[nt] = L.hidx[i] + st._tsh
                        nt += 1
            if k > 0:
                nh = k
                cw = L.hx[k - 1]
                cs = L.hy[k - 1]
                lz = L.hz[k - 1]
                lf = L.hf[k - 1]
                t0 = L.hidx[k - 1] + 1
        nh = k_leaf_stretch(L, nh, t0, tend, bx, by, &cw, &cs, &lz, &lf)
        for i in range(nt):
            cw = tx[i]
            cs = ty[i]
            if tz[i] > L.x[tend]:
                lz = tz[i]
            if tf[i] > L.x[tend]:
                lf = tf[i]
            nh = _leaf_pop(L, nh, cw, cs)
            nh = _leaf_push(L, nh, ti[i], cw, cs, lz, lf)
    for t in range(L.cnt if precise else 0):
        # without exact coordinates: the tests from the edges' own sums only
        _leaf_cell(L, t, &cw, &cs, &lz, &lf)
        ew = L.w[t]
        es = L.s[t]
        while nh >= 2 and st._edge_sign(L, L.hidx[nh - 2], L.hidx[nh - 1], t, edw[nh - 1],
                                        eds[nh - 1], ew, es) <= 0:
            ew = edw[nh - 1] + ew
            es = eds[nh - 1] + es
            nh -= 1
        edw[nh] = ew
        eds[nh] = es
        nh = _leaf_push(L, nh, t, cw, cs, lz, lf)
    for t in range(L.cnt if not (fast or precise) else 0):
        # exact coordinates beyond the fast test's range: the 128-bit integer test
        _leaf_cell(L, t, &cw, &cs, &lz, &lf)
        p.x = cw
        p.y = cs
        p.k = L.x[t]
        p.z = lz
        p.f = lf
        while nh >= 2:
            h1.x = L.hx[nh - 2]
            h1.y = L.hy[nh - 2]
            h1.k = L.x[L.hidx[nh - 2]]
            h1.z = L.hz[nh - 2]
            h1.f = L.hf[nh - 2]
            h2.x = L.hx[nh - 1]
            h2.y = L.hy[nh - 1]
            h2.k = L.x[L.hidx[nh - 1]]
            h2.z = L.hz[nh - 1]
            h2.f = L.hf[nh - 1]
            if st._vs(v, fast, h1, h2, h2, p) > 0:
                break
            nh -= 1
        nh = _leaf_push(L, nh, t, cw, cs, lz, lf)
    v.zmax = lz
    v.fmax = lf
    L.nh = nh
    L.hexact = not precise
    if precise and v.W > 0.0:
        st._inexact = True
    v.nvl = nh
    v.nvr = 0
    # the cells from the resume point on (the stretch the shortcut skips included): an
    # upper bound of the chain's steps, the count the operation tests were written for
    st._op_hull += L.cnt - t0
    st._clock += 1
    v.stamp = st._clock


# IsotonicBlockStore._vs: the fast double test inline (a call with four Pt by value was
# 9% of a window event), the others out of line (_vsign), so that callers stay small
cdef inline int k_vs(IsotonicBlockStore st, Node* frame, bint fast, Pt a, Pt b, Pt c,
                     Pt d) noexcept nogil:
    if fast:
        return _fsign(a, b, c, d)
    return st._vsign(frame, a, b, c, d)


# k_vs(...) > 0 for callers that test one side (one comparison)
cdef inline bint k_vs_pos(IsotonicBlockStore st, Node* frame, bint fast, Pt a, Pt b, Pt c,
                          Pt d) noexcept nogil:
    if fast:
        return _fdet(a, b, c, d) > 0.0
    return st._vsign(frame, a, b, c, d) > 0


# IsotonicBlockStore._bridge: the bridge of the children's hulls, O(depth + log B).
# one test of k_bridge: with exact coordinates on the points, else on the vectors the
# descent summed in the children's frames (see k_vsign_local)
cdef inline int k_bt(IsotonicBlockStore st, Node* u, bint fast, bint loc, Pt a, Pt b,
                     Pt c, Pt d, double ux, double uy, double du, double vx, double vy,
                     double dv) noexcept nogil:
    if loc:
        return k_vsign_local(st, u, ux, uy, du, vx, vy, dv, a, b, c, d)
    return k_vs(st, u, fast, a, b, c, d)


cdef inline void k_bridge(IsotonicBlockStore st, Node* u) noexcept nogil:
    cdef Node* ln = u.left
    cdef Node* rn = u.right
    cdef double lox = 0.0, loy = 0.0, rox = u.left.W, roy = u.left.S
    cdef double xs = u.left.W
    # Pt.z / Pt.f of the cells of u before the current subtree of each side
    cdef double lz0 = -INFINITY, lf0 = -INFINITY, rz0 = u.left.zmax, rf0 = u.left.fmax
    cdef int llo = 0, lhi = 0, rlo = 0, rhi = 0, lm = 0, rm = 0
    cdef bint lpt, rpt, go_l_left, go_l_right, go_r_left, go_r_right
    cdef Pt a, b, c, d
    cdef bint fast = st._fast(u)
    cdef Py_ssize_t lcount = 0, rcount = 0
    # without exact coordinates, the tests take their vectors from the children's own
    # frames: a, b in the current left subtree's (alx ... bly), c, d in the right
    # one's, and the cells between the two subtrees summed apart (gx, gy: the right
    # siblings left behind on the left, the left siblings passed on the right), so
    # that each vector is accurate relative to its own cells' extent, not to u's
    cdef bint loc = not st._exact(u)
    if loc:
        st._inexact = True
    cdef double gx = 0.0, gy = 0.0
    cdef double alx = 0.0, aly = 0.0, blx = 0.0, bly = 0.0
    cdef double clx = 0.0, cly = 0.0, dlx = 0.0, dly = 0.0
    cdef double abx = 0.0, aby = 0.0, dab = 0.0, cdx = 0.0, cdy = 0.0, dcd = 0.0
    cdef double acx = 0.0, acy = 0.0, dac = 0.0, bcx = 0.0, bcy = 0.0, dbc = 0.0
    cdef double bdx = 0.0, bdy = 0.0, dbd = 0.0
    # the cells of the left subtree after a, resp. b (exactly 0 when the vertex is the
    # subtree's last), and the base of their error bound
    cdef double asx = 0.0, asy = 0.0, aeb = 0.0, bsx = 0.0, bsy = 0.0, beb = 0.0
    cdef int last, sbc = 0, sbcd = 0
    # b (d) is unread while its side is down to one point; set so the compiler sees it
    b.x = b.y = b.k = b.z = b.f = d.x = d.y = d.k = d.z = d.f = 0.0
    k_enter(ln, &llo, &lhi)
    k_enter(rn, &rlo, &rhi)
    while True:
        st._op_hull += 1
        lpt = ln.leaf != NULL and lhi - llo == 1
        rpt = rn.leaf != NULL and rhi - rlo == 1
        # the current edge (or point) of each side
        lm = k_side_edge(ln, llo, lhi, lpt, lox, loy, lz0, lf0, &a, &b)
        rm = k_side_edge(rn, rlo, rhi, rpt, rox, roy, rz0, rf0, &c, &d)
        if lpt and rpt:
            break
        if loc:
            last = k_side_local(ln, llo, lm, lpt, &alx, &aly, &blx, &bly)
            k_rest_after(ln, last == 1, alx, aly, &asx, &asy, &aeb)
            k_rest_after(ln, last == 2, blx, bly, &bsx, &bsy, &beb)
            k_side_local(rn, rlo, rm, rpt, &clx, &cly, &dlx, &dly)
            # every term a sum of non-negative cells within _COORD_ERR / 2 of its
            # value (y <= x); a cross vector p -> q is (the rest of the left subtree
            # after p) + (the gap) + (the right subtree up to q)
            abx = blx - alx
            aby = bly - aly
            dab = _COORD_ERR * (alx + blx)
            cdx = dlx - clx
            cdy = dly - cly
            dcd = _COORD_ERR * (clx + dlx)
            acx = (asx + gx) + clx
            acy = (asy + gy) + cly
            dac = _COORD_ERR * (aeb + gx + clx)
            bcx = (bsx + gx) + clx
            bcy = (bsy + gy) + cly
            dbc = _COORD_ERR * (beb + gx + clx)
            bdx = (bsx + gx) + dlx
            bdy = (bsy + gy) + dly
            dbd = _COORD_ERR * (beb + gx + dlx)
        go_l_left = go_l_right = go_r_left = go_r_right = False
        if lpt:
            # tangent from the point a to the right hull: the rightmost touching vertex
            if k_bt(st, u, fast, loc, a, c, c, d, acx, acy, dac, cdx, cdy, dcd) <= 0:
                go_r_right = True
            else:
                go_r_left = True
        elif rpt:
            # tangent from the point c to the left hull: the leftmost touching vertex
            if k_bt(st, u, fast, loc, a, b, b, c, abx, aby, dab, bcx, bcy, dbc) <= 0:
                go_l_left = True
            else:
                go_l_right = True
        else:
            sbc = k_bt(st, u, fast, loc, a, b, b, c, abx, aby, dab, bcx, bcy, dbc)
            if sbc < 0 or k_bt(st, u, fast, loc, a, b, b, d, abx, aby, dab, bdx, bdy, dbd) < 0:
                go_l_left = True  # a right point lies strictly below l1: q <= a
            elif k_bt(st, u, fast, loc, a, c, c, d, acx, acy, dac, cdx, cdy, dcd) < 0:
                go_r_right = True  # a left point lies strictly below l2: r >= d
            else:
                sbcd = k_bt(st, u, fast, loc, b, c, c, d, bcx, bcy, dbc, cdx, cdy, dcd)
                if sbcd < 0:
                    go_r_right = True
                elif k_bt(st, u, fast, loc, a, b, c, d, abx, aby, dab, cdx, cdy, dcd) <= 0:
                    go_l_left = True  # l1 == l2: the bridge line; leftmost q is <= a
                # slope(l1) < slope(l2): where the lines meet decides. When c lies on
                # l1 (b on l2) they meet at c, right of xs (at b, at or left of xs):
                # the orientation tests' own ties decide, as exact tests would, not
                # _meet_left_of_split, which without exact coordinates may call such a
                # near-tie (within the tie band of k_vsign_ranges) the other way: the
                # decisions would then fit no single point set, and the descent could
                # end outside the children's hulls (vertex counts disagreeing with
                # the ranks of the bridge keys)
                elif sbc == 0:
                    go_r_left = True  # r <= c
                elif sbcd == 0:
                    go_l_right = True  # q >= b
                elif st._meet_left_of_split(u, a, b, c, d, xs, u.left):
                    go_l_right = True  # q >= b
                else:
                    go_r_left = True  # r <= c
        if go_l_left:
            if ln.leaf != NULL:
                lhi = lm
            else:
                gx += ln.right.W
                gy += ln.right.S
                ln = k_enter(ln.left, &llo, &lhi)
        elif go_l_right:
            if ln.leaf != NULL:
                llo = lm
            else:
                # hull(ln) up to q: its left part, then hull(ln.right) from b on
                lcount += ln.nvl - (ln.right.nvl + ln.right.nvr - ln.nvr)
                ln = k_enter(_into_right(ln, &lox, &loy, &lz0, &lf0), &llo, &lhi)
        elif go_r_left:
            if rn.leaf != NULL:
                rhi = rm
            else:
                # hull(rn) from r on: hull(rn.left) up to a, then its right part
                rcount += rn.nvr - (rn.left.nvl + rn.left.nvr - rn.nvl)
                rn = k_enter(rn.left, &rlo, &rhi)
        else:
            if rn.leaf != NULL:
                rlo = rm
            else:
                gx += rn.left.W
                gy += rn.left.S
                rn = k_enter(_into_right(rn, &rox, &roy, &rz0, &rf0), &rlo, &rhi)
    _set_bridge(u, a, c)
    # vertices of this node's hull: those of the left child's up to q, of the right
    # child's from r (counted on the way down)
    u.nvl = lcount + llo + 1
    u.nvr = rcount + rn.leaf.nh - rlo

# One end of the bridge of k_bridge_still_valid: locate key ``K`` in the hull of
# ``child`` (u.left with u's left-end cache ``cs``, ``c``, ``fl``, ``rank``, or u.right
# with its right-end one). k_end_cached: from the cache, when it is current or
# survives the change (_cache_survives); k_end_descend: else by a descent, whose
# result is then cached (False when ``K`` is no longer a vertex).
cdef inline bint k_end_cached(IsotonicBlockStore st, Node* child, double K, long long* cs,
                              double* c, int fl, Py_ssize_t* rank, bint from_left,
                              Loc* r) noexcept nogil:
    if cs[0] != 0 and (cs[0] == child.stamp or (
            cs[0] == child.ostamp and st._cnode == child
            and st._cache_survives(child, c, fl, rank, from_left))):
        _loc_from_cache(r, c, fl, rank[0], K)
        cs[0] = child.stamp
        return True
    return False


cdef inline bint k_end_descend(IsotonicBlockStore st, Node* child, double K, long long* cs,
                               double* c, int* fl, Py_ssize_t* rank, bint from_left,
                               Loc* r) noexcept nogil:
    cdef bint found = _locate(child, K, 0.0, 0.0, -INFINITY, -INFINITY, r, True)
    st._op_hull += r.steps
    if not found:
        return False
    _loc_to_cache(r, c, fl)
    rank[0] = r.rle if from_left else r.rge
    cs[0] = child.stamp
    return True


# IsotonicBlockStore._bridge_still_valid, exact coordinates (the caller checks them)
cdef inline bint k_bridge_still_valid(IsotonicBlockStore st, Node* u) noexcept nogil:
    cdef Loc la, lb
    cdef bint fast
    if not u.bvalid:
        return False
    if not (k_end_cached(st, u.left, u.akey, &u.lcs, u.cl, u.lfl, &u.lrank, True, &la)
            or k_end_descend(st, u.left, u.akey, &u.lcs, u.cl, &u.lfl, &u.lrank, True, &la)):
        return False
    if not (k_end_cached(st, u.right, u.bkey, &u.rcs, u.cr, u.rfl, &u.rrank, False, &lb)
            or k_end_descend(st, u.right, u.bkey, &u.rcs, u.cr, &u.rfl, &u.rrank, False, &lb)):
        return False
    _loc_shift(&lb, u.left.W, u.left.S, u.left.zmax, u.left.fmax)
    fast = st._fast(u)
    st._op_hull += 1
    if la.has_pred and not k_vs_pos(st, u, fast, la.pred, la.at, la.at, lb.at):
        return False
    if la.has_succ and k_vs_pos(st, u, fast, la.at, la.succ, la.succ, lb.at):
        return False
    if lb.has_pred and k_vs_pos(st, u, fast, la.at, lb.pred, lb.pred, lb.at):
        return False
    if lb.has_succ and not k_vs_pos(st, u, fast, la.at, lb.at, lb.at, lb.succ):
        return False
    _set_bridge(u, la.at, lb.at)
    u.nvl = u.lrank
    u.nvr = u.rrank
    return True

# IsotonicBlockStore._cache_survives: is a locate cached in ``child``'s frame (``c``,
# ``fl``, ``rank``: see Node) still right after the change ``_ck`` just made to
# ``child``? If so, bring it up to date (coordinates, Pt.f, the rank) and return True.
# Exact coordinates only.
#
# A label-1 event added at key x (CH_PREFIX) translates the points from x on by
# (w, w), of slope 1, which no hull edge exceeds: relative to a supporting line of
# slope m < 1 at a vertex before x, every later point (and the new one, if the
# cell is new) rises; so the hull's vertices before x, and their order, are
# unchanged. A label-0 event (CH_SUFFIX) moves the points before x by (-w, 0)
# relative to the later ones: relative to a supporting line of slope m >= 0 they
# rise, so the vertices from x on keep their place relative to each other; the
# new cell's point (if any) lands on its predecessor's old place, above such a
# line, unless it is the child's new first cell. A cached vertex and its two
# neighbours entirely on the kept side are still consecutive vertices.
#
# A removal (``_crem``, :meth:`_note_removal`) translates the points from x on by
# the cell's change (dw, ds), dw < 0. With ds == 0 (label 0) they move left
# along slope 0, which no hull edge undercuts: the vertices before x stay, as for
# CH_PREFIX. With ds == dw (label 1) the points before x move by (-dw, -dw)
# relative to the later ones, along slope 1: the vertices after x stay, as for
# CH_SUFFIX, if the cell at x (possibly deleted, or left with s == 0) is neither
# the cached predecessor nor the vertex's Pt.z or Pt.f.
cdef inline bint k_cache_survives(IsotonicBlockStore st, Node* child, double* c, int fl,
                                 Py_ssize_t* rank, bint rank_from_left) noexcept nogil:
    cdef double x = st._cx
    cdef Py_ssize_t dnv = (child.nvl + child.nvr) - child.onv
    if st._ck == CH_PREFIX:
        if not (fl & 2) or not c[9] < x:
            return False
        if not rank_from_left:
            rank[0] += dnv
        st._op_reused += 1
        return True
    if st._ck == CH_SUFFIX:
        if not (fl & 1) or not c[8] >= x or (st._cnew and child.kmin == x):
            return False
        if st._crem and (c[8] == x or c[4] == x or c[5] == x):
            # a removal may have deleted the cell at x, or left it with s == 0: the
            # pred key or the vertex's Pt.z / Pt.f could name it
            return False
        c[0] += st._cdw
        c[1] += st._cds
        c[2] += st._cdw
        c[3] += st._cds
        c[6] += st._cdw
        c[7] += st._cds
        # added: the cell at x now has s != w (s unchanged, w grew); s != 0 unchanged.
        # removed (label 1): s - w unchanged, so is Pt.f; Pt.z is not x (above)
        if not st._crem and c[5] < x:
            c[5] = x
        if rank_from_left:
            rank[0] += dnv
        st._op_reused += 1
        return True
    return False

# IsotonicBlockStore.hypothetical_c (the Venn-ABERS fits, the prior's pseudo-event): add
# the event, read the step fit at x, then restore the cell (an existing cell gets its
# exact sums and count back; a new one is removed) and the exactness scale. Both leaf
# updates keep the leaf's hull before the cell (``_dirty``). With ``then1`` (y = 0, as
# hypothetical_pair_c): between the read and the restore, the event is relabelled 1
# (relabel_c: the cell sums of adding (x, w, 1) instead, exactly: os + 0.0 + w is
# os + w * 1) and the fit read again into then1[0]: three path updates, not four.
cdef inline double k_hypothetical(IsotonicBlockStore st, double x, double w, double y,
                                  double* then1) except? -1.0 nogil:
    if st.root.ncells <= 1:
        if then1 != NULL:
            then1[0] = 1.0
        return y
    cdef Node* v = st._leaf_for(x)
    cdef Leaf* L = v.leaf
    cdef int j = bisect_right(L.x, L.cnt, x) - 1
    cdef bint existed = L.x[j] == x
    cdef double ow = 0.0, os = 0.0
    cdef long long on = 0
    cdef float orr = 0.0
    cdef int oq = st.qexp
    cdef double value
    if existed:
        ow = L.w[j]
        os = L.s[j]
        on = L.n[j]
        orr = L.r[j]
    # an event finer than the cells lowers qexp until the restore puts it back: only
    # the paths follow it (off them the coordinates stay exact); no tree-wide
    # requalification (_pav_requalify.pxd) for a read
    cdef long long c0 = st._clock
    cdef double thr = 0.0
    st._qhold = True
    try:
        st.add_c(x, w, y)
        value = st.predict_step_c(x)
        if then1 != NULL:
            st.relabel_c(x, w)
            then1[0] = st.predict_step_c(x)
            y = 1.0
        v = st._leaf_for(x)
        L = v.leaf
        j = bisect_right(L.x, L.cnt, x) - 1
        if oq != st.qexp:
            thr = k_exact_threshold(st)  # the lowered qexp's
            st._set_qexp(oq)  # before the restore: its path update carries it to the tree
        if existed:
            # only cell j changed: the leaf's hull before it is kept
            k_note_cell(st, j, ow - L.w[j], os - L.s[j], on - L.n[j], 0)
            L.w[j] = ow
            L.s[j] = os
            L.n[j] = on
            L.r[j] = orr
            st._fix_path(v)
        else:
            L.n[j] = 1
            st.remove_c(x, w, y)
    finally:
        st._qhold = False
    if st._qpend:  # qexp is back: what was recomputed under the lowered one follows it
        st._qpend = False
        k_requalify_since(st, c0, thr)
    return value
