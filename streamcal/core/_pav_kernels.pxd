# The per-event kernels of the compiled isotonic block store (streamcal/core/_pav.pyx):
# the leaf's own hull and the bridge of two hulls by simultaneous descent, on the
# orientation tests of _pav_orient.pxd. Inline functions of the store (``st``),
# compiled into _pav.pyx, whose methods of the same names (without ``k``) call them and
# carry their docstrings; see that module's docstring for the algorithms, costs and
# exactness argument.

from libc.math cimport INFINITY

from streamcal.core._search cimport bisect_right
from streamcal.core._pav_requalify cimport k_exact_threshold, k_requalify_since

from streamcal.core._pav cimport (
    CH_PREFIX, CH_SUFFIX, IsotonicBlockStore, LEAF_CAP, Leaf, Loc, Node, Pt, Sums,
)
from streamcal.core._pav_leaf_chain cimport _leaf_cell, _leaf_pop, _leaf_push, k_leaf_stretch
from streamcal.core._pav_orient cimport _COORD_ERR, _TWO53, k_vsign_local, k_vsign_ranges
from streamcal.core._pav_tree cimport (
    _dd_sum2, _fdet, _fsign, _into_right, _loc_from_cache, _loc_shift, _loc_to_cache,
    _locate, _set_bridge, k_enter, k_rest_after, k_side_edge, k_side_local,
)


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
    cdef int last, sbc = 0, sbcd = 0, sabcd = 0
    # b (d) is unread while its side is down to one point; set so the compiler sees it
    b.x = b.y = b.k = b.z = b.f = d.x = d.y = d.k = d.z = d.f = 0.0
    # the keys each side's hull keeps of its current subtree's (see k_enter); without
    # exact coordinates a test may call a near-tie either way, and an end must still
    # be a vertex of both its subtree's hull and u's child's (the vertex counts)
    cdef double lkmin = -INFINITY, lkmax = INFINITY, rkmin = -INFINITY, rkmax = INFINITY
    k_enter(ln, &llo, &lhi, lkmin, lkmax)
    k_enter(rn, &rlo, &rhi, rkmin, rkmax)
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
        if ln.leaf == NULL and (ln.bkey > lkmax or ln.akey < lkmin):
            go_l_left = ln.bkey > lkmax  # the bridge leaves the kept keys: no test
            go_l_right = not go_l_left
        elif rn.leaf == NULL and (rn.bkey > rkmax or rn.akey < rkmin):
            go_r_left = rn.bkey > rkmax
            go_r_right = not go_r_left
        elif lpt:
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
                sabcd = 1 if sbcd < 0 else k_bt(st, u, fast, loc, a, b, c, d, abx, aby, dab,
                                                 cdx, cdy, dcd)
                if sbcd < 0:
                    go_r_right = True
                elif sabcd < 0 or (sabcd == 0 and sbc == 0):
                    go_l_left = True  # l1 == l2: the bridge line; leftmost q is <= a
                elif sabcd == 0:
                    # l1 and l2 parallel, c strictly above l1: exact tests rule this out
                    # (a would lie below l2, sent right above), ties within the tie band
                    # of k_vsign_ranges do not (points spanning 2**-70 of the weights
                    # beside near-equal slopes). The bridge is then steeper than l1:
                    # q >= b (going left lost a light steep stretch right of b)
                    go_l_right = True
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
                lkmax = min(lkmax, ln.akey)
                ln = k_enter(ln.left, &llo, &lhi, lkmin, lkmax)
        elif go_l_right:
            if ln.leaf != NULL:
                llo = lm
            else:
                # hull(ln) up to q: its left part, then hull(ln.right) from b on
                lcount += ln.nvl - (ln.right.nvl + ln.right.nvr - ln.nvr)
                lkmin = max(lkmin, ln.bkey)
                ln = k_enter(_into_right(ln, &lox, &loy, &lz0, &lf0), &llo, &lhi, lkmin, lkmax)
        elif go_r_left:
            if rn.leaf != NULL:
                rhi = rm
            else:
                # hull(rn) from r on: hull(rn.left) up to a, then its right part
                rcount += rn.nvr - (rn.left.nvl + rn.left.nvr - rn.nvl)
                rkmax = min(rkmax, rn.akey)
                rn = k_enter(rn.left, &rlo, &rhi, rkmin, rkmax)
        else:
            if rn.leaf != NULL:
                rlo = rm
            else:
                gx += rn.left.W
                gy += rn.left.S
                rkmin = max(rkmin, rn.bkey)
                rn = k_enter(_into_right(rn, &rox, &roy, &rz0, &rf0), &rlo, &rhi, rkmin, rkmax)
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
