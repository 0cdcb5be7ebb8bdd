# The orientation tests of the compiled isotonic block store (streamcal/core/_pav.pyx):
# exact 128-bit integer determinants, the floating filters, the pure slopes of runs of
# one label, and the double-double fallback with its tie band; the meet test of two
# lines. Inline functions of the store (``st``), compiled into _pav.pyx, whose methods
# of the same names (without ``k``) call them and carry their docstrings; the kernels
# that use them (the leaf's own hull, the bridge descent) are in _pav_kernels.pxd.

from libc.math cimport fabs, fma, frexp, ldexp, INFINITY

from streamcal.core._pav cimport IsotonicBlockStore, Leaf, Node, Pt, Sums
from streamcal.core._pav_tree cimport (
    _dd_add, _dd_sum2, _pure_slope, _range, _range_from, _range_upto, _sign,
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


# u x v / (|u|_1 |v|_1) of the filters below, with the two norms (det 0 when one is 0)
cdef inline double _unit_det(double ux, double uy, double vx, double vy, double* nu,
                             double* nv) noexcept nogil:
    nu[0] = fabs(ux) + fabs(uy)
    nv[0] = fabs(vx) + fabs(vy)
    if nu[0] > 0.0 and nv[0] > 0.0:
        return (ux / nu[0]) * (vy / nv[0]) - (uy / nu[0]) * (vx / nv[0])
    return 0.0


# k_vsign without exact coordinates or its last resort: the sign when the pure slopes
# or the rigorous filter (coordinates within _COORD_ERR of frame.W) decide it, else 2
cdef inline int k_vsign_filter(Node* frame, Pt a, Pt b, Pt c, Pt d) noexcept nogil:
    cdef double ux = b.x - a.x, uy = b.y - a.y, vx = d.x - c.x, vy = d.y - c.y
    cdef double nu, nv, det, err
    cdef int s = k_pure_sign(a, b, c, d)
    if s != 2:
        return s
    det = _unit_det(ux, uy, vx, vy, &nu, &nv)
    if nu > 0.0 and nv > 0.0:
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
    det = _unit_det(ux, uy, vx, vy, &nu, &nv)
    if nu > 0.0 and nv > 0.0:
        # |u_true x v_true - u x v| <= du nv + dv nu + 2 du dv, normalised by nu nv;
        # 1e-15 covers the rounding of the normalised products (each at most 1)
        eu = du / nu
        ev = dv / nv
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
