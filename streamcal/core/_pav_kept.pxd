# The kept bridge of a node without exact coordinates (the exact check is
# k_bridge_still_valid, _pav_kernels.pxd): inline, per event (half-life forgetting and
# real weights), compiled into _pav.pyx.

from libc.math cimport INFINITY

from streamcal.core._pav cimport IsotonicBlockStore, Loc, Node
from streamcal.core._pav_tree cimport _locate, _set_bridge
from streamcal.core._pav_orient cimport k_vsign_filter


cdef inline bint k_bridge_kept_inexact(IsotonicBlockStore st, Node* u) noexcept nogil:
    """Is the node's previous bridge (a, b) still its bridge, without exact coordinates?
    True only when the four tangency tests at its ends are decided by the pure slopes or
    the rigorous filter, never by the last resort: a's left neighbour strictly above the
    line ab and its right one strictly above, b's left neighbour strictly above and its
    right one strictly above. Then every point of the children's hulls near a and b is
    off that line by more than the coordinates' error, so the bridge is unique and the
    descent (whose decisions are the exact ones but for ties within the tie band, far
    below that margin) ends at a and b too. The ends are located by full descents
    (``_locate`` without its caches, which hold exact coordinates), from the frames the
    bridge descent starts from: the same sums in the same order, so the same doubles
    (``_check()`` compares every bridge with a fresh descent). Otherwise False, and the
    descent runs. O(depth + log B)."""
    cdef Loc la, lb
    if not u.bvalid:
        return False
    st._inexact = True
    if not _locate(u.left, u.akey, 0.0, 0.0, -INFINITY, -INFINITY, &la, False):
        st._op_hull += la.steps
        return False
    if not _locate(u.right, u.bkey, u.left.W, u.left.S, u.left.zmax, u.left.fmax, &lb,
                   False):
        st._op_hull += la.steps + lb.steps
        return False
    st._op_hull += la.steps + lb.steps + 1
    if la.has_pred and k_vsign_filter(u, la.pred, la.at, la.at, lb.at) != 1:
        return False
    if la.has_succ and k_vsign_filter(u, la.at, la.succ, la.succ, lb.at) != -1:
        return False
    if lb.has_pred and k_vsign_filter(u, la.at, lb.pred, lb.pred, lb.at) != -1:
        return False
    if lb.has_succ and k_vsign_filter(u, la.at, lb.at, lb.at, lb.succ) != 1:
        return False
    _set_bridge(u, la.at, lb.at)
    u.nvl = la.rle
    u.nvr = lb.rge
    st._op_kept_inexact += 1
    return True
