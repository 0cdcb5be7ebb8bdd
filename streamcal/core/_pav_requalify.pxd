# The compiled isotonic block store's tree (streamcal/core/_pav.pyx) kept a function of
# its cells and its exactness scale ``qexp``, when ``qexp`` changes.
#
# Whether a node's coordinates are exact (``st._exact(v)``: its total below
# 2**(qexp + 53)) decides how its hull or bridge is found: exact tests, or the
# inexact filter whose tie band pools edges whose slopes agree to within a few units
# of roundoff. An update recomputes only its path, under the current ``qexp``. When an
# event lowers ``qexp`` (a weight finer than any before), a node off the path can go
# from exact to inexact; a hypothetical event's restore, a scaling out of (or back
# into) the range of exact scales, the other way round. Such a node would keep a hull
# found the other way, and the tree would depend on the order of the events (a
# restored copy, built afresh, could then differ from the original in the last bit).
#
# k_requalify recomputes, bottom up, every node whose classification changed and
# every ancestor of one: the tree is then what a rebuild under the same ``qexp``
# gives. Nodes exact both before and after are skipped with their subtree (their
# descendants' totals are smaller). Each change of ``qexp`` costs a walk over the
# nodes without exact coordinates afterwards; ``qexp`` stays in [-1074, 1023] and only
# falls between two scalings, about 2,000 times at most, and on a stream of weights
# drawn from one distribution it falls about log(n) times in n events. A hypothetical
# event (a read: Venn-ABERS, a prior) puts ``qexp`` back after it: only its paths
# follow the lowered one, then k_requalify_since revisits the nodes it recomputed.

from streamcal.core._pav cimport IsotonicBlockStore, Node
from streamcal.core._pav_pair cimport k_pair_flush
from libc.math cimport ldexp


# Node ``v``'s subtree: recompute, bottom up, each node whose classification changed
# (``thr``: the threshold of exact totals before the change, IsotonicBlockStore._qthr)
# and each ancestor of one; returns 1 if ``v`` was recomputed. With ``c0 >= 0`` only
# the nodes recomputed since stamp ``c0`` are visited: after a hypothetical event, the
# add's and the restore's paths, a split leaf's other half, a rebuilt subtree (every
# ancestor of such a node was recomputed after it, so they are found from the root);
# the rest of the tree never changed.
cdef inline int _requalify_node(IsotonicBlockStore st, Node* v, double thr,
                                long long c0) except -1 nogil:
    cdef bint was, now
    cdef int left, right
    if v.stamp <= c0:
        return 0
    was = v.W < thr
    now = st._exact(v)
    if was and now:
        return 0
    if v.leaf != NULL:
        if was == now:
            return 0
        st._dirty = 0  # the whole hull, from the cells
        st._leaf_update(v)
        return 1
    left = _requalify_node(st, v.left, thr, c0)
    right = _requalify_node(st, v.right, thr, c0)
    if left or right or was != now:
        st._internal_update(v, False)
        return 1
    return 0


# Carry a pending change of qexp (st._qpend, set by _set_qexp) to the tree; held
# (st._qhold) during a hypothetical event, which puts qexp back (k_requalify_since).
cdef inline int k_requalify(IsotonicBlockStore st) except -1 nogil:
    if not st._qpend or st._qhold:
        return 0
    st._qpend = 0
    if st._qthr == 0.0 and st.qscale == 0.0:
        return 0  # inexact before and after
    if st._stop != NULL:
        k_pair_flush(st)  # the walk below meets no node left for later
    _requalify_node(st, st.root, st._qthr, -1)
    return 0


# The exactness threshold under the current qexp (see IsotonicBlockStore._qthr).
cdef inline double k_exact_threshold(IsotonicBlockStore st) noexcept nogil:
    return ldexp(1.0, 53 + st.qexp) if st.qscale > 0.0 else 0.0


# After a hypothetical event lowered qexp (threshold ``thr``) and put it back: the
# nodes recomputed since stamp ``c0`` follow the scale put back. O(those nodes).
cdef inline int k_requalify_since(IsotonicBlockStore st, long long c0,
                                  double thr) except -1 nogil:
    _requalify_node(st, st.root, thr, c0)
    return 0
