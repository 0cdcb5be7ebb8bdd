# A full window's event in the compiled isotonic block store (streamcal/core/_pav.pyx):
# the removal of the oldest event (key k, which may put back the cell of k's other
# events: IsotonicStream._readd) and the add of the new one (key x). Each change
# recomputes its leaf and the leaf's ancestors; the two paths share the nodes from
# their lowest common ancestor up, on average about two of them. When neither change
# can alter the tree's shape, those shared nodes are recomputed once, after both
# (``_stop``: IsotonicBlockStore._fix_path stops below it), not twice.
#
# Why the result is the same, bit for bit: a node is recomputed from its children
# alone. Its previous bridge only speeds the search up: it is kept when exact tests
# show it is the bridge (which is unique), or, without exact coordinates, when every
# tangency test is certified (k_bridge_kept_inexact), and else found by descent; a
# locate cached from before is reused only while the child has not changed
# (``_cnode`` NULL), so none of it depends on the order of the updates. The nodes
# below the shared ones see one change at a time, as before. A requalification after
# a change of ``qexp`` (_pav_requalify.pxd), which walks the whole tree, first flushes
# the deferred nodes (k_pair_flush), so it never meets a stale one.
#
# The shape cannot change when: x and k are in different leaves; k is not the first key
# of its leaf (whose deletion would move where later keys go); k's leaf keeps at least
# a quarter of the capacity after a deletion (no merge, no empty leaf); and x's leaf
# has room for a new cell (no split; the put-back cell returns to k's leaf, which
# holds one cell fewer than before by then). No rebalancing follows: the leaf counts
# do not change.

from streamcal.core._pav cimport CH_ANY, IsotonicBlockStore, Leaf, Node
from streamcal.core._pav_shape cimport k_reserve_for_leaves


# IsotonicBlockStore.reserve_for_c(x, k, pair=True): the reservation of k_reserve_for
# (_pav_shape.pxd) from the same two descents, then the deferral when it is safe.
cdef inline int k_pair_begin(IsotonicBlockStore st, double x, double k) except -1 nogil:
    # one descent while k and x go the same way (as _leaf_for goes), to the lowest
    # common ancestor of their leaves, then one for each
    cdef Node* u = st.root
    cdef Node* a
    cdef Node* b
    cdef Leaf* Lk
    cdef Leaf* Lx
    while u.leaf == NULL and (k >= u.kmid) == (x >= u.kmid):
        u = u.right if x >= u.kmid else u.left
    a = b = u
    while a.leaf == NULL:
        a = a.right if k >= a.kmid else a.left
    while b.leaf == NULL:
        b = b.right if x >= b.kmid else b.left
    Lk = a.leaf
    Lx = b.leaf
    k_reserve_for_leaves(st, Lx, Lk, k)
    st._stop = NULL
    if a == b or Lk.x[0] == k or 4 * (Lk.cnt - 1) < st.cap or Lx.cnt >= st.cap:
        return 0
    st._stop = u
    return 0


# Recompute the deferred nodes (IsotonicBlockStore.pair_end_c; before a
# requalification), bottom up, each from its children alone.
cdef inline int k_pair_flush(IsotonicBlockStore st) except -1 nogil:
    cdef Node* u = st._stop
    st._stop = NULL
    st._cnode = NULL
    st._ck = CH_ANY
    while u != NULL:
        st._internal_update(u)
        u = u.parent
    return 0
