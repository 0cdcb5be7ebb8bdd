# Short hulls of the compiled isotonic block store (streamcal/core/_pav.pyx): with exact
# coordinates, an internal node whose lower hull has at most SHORT_HULL vertices keeps
# them (Node.sh, in its frame; Node.nsh their count; 0: none kept, -1: not computed
# since the node's last update, done on demand by k_fill_short), so that its parent's
# bridge is found by walking two short vertex lists instead of descending both subtrees
# (k_bridge: O(depth) steps, each a cache miss at 1e6 cells). A fit that is nearly flat
# (a model with no skill, scores arriving in key order) has short hulls at every level:
# a new first cell of a zigzag of labels moves every bridge, and the walk finds each in
# a few tests. Inline, compiled into _pav.pyx (and _pav_ops.pyx for the checks).

from libc.math cimport INFINITY

from streamcal.core._pav cimport IsotonicBlockStore, Leaf, Node, Pt, SHORT_HULL
from streamcal.core._pav_tree cimport _bridge_vertex, _leaf_vertex, _set_bridge
from streamcal.core._pav_kernels cimport k_vs_pos


cdef inline int _hull_size(Node* c) noexcept nogil:
    if c.leaf != NULL:
        return c.leaf.nh
    return <int> (c.nvl + c.nvr)


# Vertices j0 .. j1 - 1 of the hull of ``c`` (its own frame) into ``out``, translated by
# (ox, oy) with ``z0``, ``f0`` the Pt.z, Pt.f of the cells before ``c`` (as
# _bridge_vertex): False when they are not known exactly (a leaf's hull computed
# without exact coordinates, an internal node keeping no short hull).
cdef inline bint _hull_vertices(IsotonicBlockStore st, Node* c, int j0, int j1, double ox,
                                double oy, double z0, double f0, Pt* out) noexcept nogil:
    cdef Leaf* L = c.leaf
    cdef int j
    if L != NULL:
        if not L.hexact:
            return False
        for j in range(j0, j1):
            out[j - j0] = _leaf_vertex(L, j, ox, oy, z0, f0)
        return True
    if c.nsh <= 0:  # none kept, or not computed (see k_fill_short)
        return False
    for j in range(j0, j1):
        out[j - j0] = _bridge_vertex(c.sh[j].x, c.sh[j].y, c.sh[j].k, c.sh[j].z, c.sh[j].f,
                                     ox, oy, z0, f0)
    return True


# The hull of internal node ``u`` kept when it has at most SHORT_HULL vertices (set
# after its bridge: nsh -1 marks it to compute), coordinates are exact and the
# children's vertices it takes are known (the left child's first nvl, the right child's
# last nvr; a child marked -1 is computed first); else none (nsh 0).
cdef inline void k_fill_short(IsotonicBlockStore st, Node* u) noexcept nogil:
    cdef int nl = <int> u.nvl, nr = <int> u.nvr, rn
    u.nsh = 0
    if nl + nr > SHORT_HULL or not st._exact(u):
        return
    _fill_children(st, u)
    rn = _hull_size(u.right)
    if (_hull_vertices(st, u.left, 0, nl, 0.0, 0.0, -INFINITY, -INFINITY, u.sh)
            and _hull_vertices(st, u.right, rn - nr, rn, u.left.W, u.left.S, u.left.zmax,
                               u.left.fmax, u.sh + nl)):
        u.nsh = nl + nr


cdef inline void _fill_children(IsotonicBlockStore st, Node* u) noexcept nogil:
    if u.left.leaf == NULL and u.left.nsh < 0:
        k_fill_short(st, u.left)
    if u.right.leaf == NULL and u.right.nsh < 0:
        k_fill_short(st, u.right)


# IsotonicBlockStore._short_bridge: the bridge of ``u`` from its children's short hulls
# (both at most SHORT_HULL vertices and known), with exact coordinates. From the left
# hull's last vertex and the right hull's first, the left end moves left while its left
# neighbour is on or below the line of the two ends, the right end right while its
# right neighbour is; the result is then certified by the four tangency tests of
# k_bridge_still_valid (the walk's two, and the left end's right neighbour and the right
# end's left one on or above the line), which with exact tests hold for the unique bridge
# alone (leftmost a, rightmost b): the same bridge as k_bridge's descent, bit for bit.
# O(SHORT_HULL) tests; False (nothing changed) when a hull is not short or not known.
cdef inline bint k_short_bridge(IsotonicBlockStore st, Node* u) noexcept nogil:
    cdef Node* l = u.left
    cdef Node* r = u.right
    cdef int nl = _hull_size(l), nr = _hull_size(r), i, j
    cdef Pt lh[SHORT_HULL]
    cdef Pt rh[SHORT_HULL]
    cdef bint fast, moved = True
    if nl > SHORT_HULL or nr > SHORT_HULL or st._short_off or not st._exact(u):
        return False
    _fill_children(st, u)
    if not (_hull_vertices(st, l, 0, nl, 0.0, 0.0, -INFINITY, -INFINITY, lh)
            and _hull_vertices(st, r, 0, nr, l.W, l.S, l.zmax, l.fmax, rh)):
        return False
    fast = st._fast(u)
    i = nl - 1
    j = 0
    while moved:  # _op_hull counts every test
        moved = False
        while i > 0:
            st._op_hull += 1
            if k_vs_pos(st, u, fast, lh[i - 1], lh[i], lh[i], rh[j]):
                break
            i -= 1
            moved = True
        while j < nr - 1:
            st._op_hull += 1
            if k_vs_pos(st, u, fast, lh[i], rh[j], rh[j], rh[j + 1]):
                break
            j += 1
            moved = True
    st._op_hull += 2
    if i < nl - 1 and k_vs_pos(st, u, fast, lh[i], lh[i + 1], lh[i + 1], rh[j]):
        return False
    if j > 0 and k_vs_pos(st, u, fast, lh[i], rh[j - 1], rh[j - 1], rh[j]):
        return False
    _set_bridge(u, lh[i], rh[j])
    u.nvl = i + 1
    u.nvr = nr - j
    u.bvalid = 1
    u.lcs = 0  # the locates cached for k_bridge_still_valid are of the old ends
    u.rcs = 0
    st._op_short += 1
    return True


