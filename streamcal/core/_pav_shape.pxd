# The shape and memory of the compiled isotonic block store's tree
# (streamcal/core/_pav.pyx): splitting a leaf, building a balanced tree over leaves,
# the scapegoat rebuild of a subtree, and the spare nodes that make a leaf split unable
# to fail halfway.
# Inline functions of the store (``st``), compiled into the modules that cimport them.
#
# None can leave the tree broken when memory runs out: a rebuild reuses the subtree's
# own internal nodes (a subtree of k leaves has k - 1 of them) and needs one array of
# pointers, allocated before anything moves; without it the rebuild is put off (the
# tree stays valid, only less balanced, and the next change on that path finds the
# same scapegoat). A build from fresh leaves (_pav_ops.rebuild) takes its internal
# nodes from an array its caller allocated in full beforehand. A split takes its two
# nodes from the spares (k_reserve), allocated before the change that needs them; a
# window's eviction followed by an add reserves for both first (k_reserve_for).

from cpython.mem cimport PyMem_RawMalloc, PyMem_RawFree
from libc.string cimport memcpy, memset

from streamcal.core._pav cimport IsotonicBlockStore, Leaf, Node
from streamcal.core._pav_tree cimport _free_node


# The leaves of ``v``'s subtree in key order into ``leaves`` from index ``i``, and its
# internal nodes into ``inner`` from ``used[0]``; returns the next leaf index.
cdef inline Py_ssize_t k_collect_nodes(Node* v, Node** leaves, Py_ssize_t i, Node** inner,
                                       Py_ssize_t* used) noexcept nogil:
    if v.leaf != NULL:
        leaves[i] = v
        return i + 1
    inner[used[0]] = v
    used[0] += 1
    i = k_collect_nodes(v.left, leaves, i, inner, used)
    return k_collect_nodes(v.right, leaves, i, inner, used)


# A perfectly balanced tree over leaves[lo:hi], internal nodes taken (cleared) from
# ``inner`` from ``used[0]`` on (hi - lo - 1 of them); returns its root.
cdef inline Node* k_build(IsotonicBlockStore st, Node** leaves, Py_ssize_t lo, Py_ssize_t hi,
                          Node** inner, Py_ssize_t* used) except NULL nogil:
    cdef Py_ssize_t mid
    cdef Node* u
    if hi - lo == 1:
        leaves[lo].parent = NULL
        return leaves[lo]
    mid = (lo + hi) >> 1
    u = inner[used[0]]
    used[0] += 1
    memset(u, 0, sizeof(Node))
    u.left = k_build(st, leaves, lo, mid, inner, used)
    u.right = k_build(st, leaves, mid, hi, inner, used)
    u.left.parent = u
    u.right.parent = u
    st._internal_update(u)
    return u


# IsotonicBlockStore._fix_path's rebalancing: rebuild the subtree of ``v`` perfectly
# balanced from its own nodes; returns its new root (``v`` itself when the pointer
# array cannot be had: the rebuild is put off).
cdef inline Node* k_rebuild_subtree(IsotonicBlockStore st, Node* v) except NULL nogil:
    cdef Py_ssize_t k = v.nleaves, used = 0
    cdef Node* parent = v.parent
    cdef bint was_left = parent != NULL and parent.left == v
    cdef Node** buf = NULL
    cdef Node* r
    if st._alloc_budget != 0:  # a test's allowance of allocations (_limit_allocations)
        buf = <Node**> PyMem_RawMalloc((2 * k - 1) * sizeof(Node*))
    if buf == NULL:
        return v
    if st._alloc_budget > 0:
        st._alloc_budget -= 1
    k_collect_nodes(v, buf, 0, buf + k, &used)
    used = 0
    r = k_build(st, buf, 0, k, buf + k, &used)
    PyMem_RawFree(buf)
    r.parent = parent
    if parent == NULL:
        st.root = r
    elif was_left:
        parent.left = r
    else:
        parent.right = r
    return r


# IsotonicBlockStore.reserve_c: hold nodes for ``splits`` leaf splits (stacks linked
# through .parent), so that adds after it cannot fail to allocate halfway.
cdef inline int k_reserve(IsotonicBlockStore st, int splits) except -1 nogil:
    cdef Node* v
    while st._nspare_leaf < splits:
        v = st._alloc_node(True)
        v.parent = st._spare_leaf
        st._spare_leaf = v
        st._nspare_leaf += 1
    while st._nspare_inner < splits:
        v = st._alloc_node(False)
        v.parent = st._spare_inner
        st._spare_inner = v
        st._nspare_inner += 1
    return 0


# IsotonicBlockStore.reserve_for_c: before the removal of key k (which may re-add k's
# cell) and the add of key x. No split can follow unless x's leaf is (nearly) full,
# x's or k's leaf may be emptied, or k is the first key of its leaf (the leaf then
# starts later: k, and x just after it, go to the neighbour leaf); otherwise a removal
# leaves each leaf no fuller (a merged leaf holds <= 3/4 of the capacity), and the
# re-add puts back the one cell it took.
cdef inline int k_reserve_for(IsotonicBlockStore st, double x, double k) except -1 nogil:
    return k_reserve_for_leaves(st, st._leaf_for(x).leaf, st._leaf_for(k).leaf, k)


# ... with the leaves of x and k found (_pav_pair.pxd descends to them once for both)
cdef inline int k_reserve_for_leaves(IsotonicBlockStore st, Leaf* Lx, Leaf* Lk,
                                     double k) except -1 nogil:
    if Lx.cnt <= 1 or Lx.cnt >= st.cap - 1 or Lk.cnt <= 1 or Lk.x[0] == k:
        k_reserve(st, 2)
    return 0


# The two nodes of a leaf split (a leaf, an internal node), from the spares: reserved
# now if none are held (a MemoryError then changes nothing).
cdef inline int k_take_spares(IsotonicBlockStore st, Node** leaf, Node** inner) except -1 nogil:
    k_reserve(st, 1)
    leaf[0] = st._spare_leaf
    inner[0] = st._spare_inner
    st._spare_leaf = leaf[0].parent
    st._spare_inner = inner[0].parent
    st._nspare_leaf -= 1
    st._nspare_inner -= 1
    leaf[0].parent = inner[0].parent = NULL
    return 0


# IsotonicBlockStore.release_c: free the nodes held and not used.
cdef inline void k_release(IsotonicBlockStore st) noexcept nogil:
    cdef Node* v
    while st._spare_leaf != NULL:
        v = st._spare_leaf
        st._spare_leaf = v.parent
        _free_node(v)
    while st._spare_inner != NULL:
        v = st._spare_inner
        st._spare_inner = v.parent
        _free_node(v)
    st._nspare_leaf = st._nspare_inner = 0


# IsotonicBlockStore._add: split the full leaf ``v`` in two halves under a new internal
# node (both from the spares); returns the half whose key range holds ``x``.
cdef inline Node* k_split_leaf(IsotonicBlockStore st, Node* v, double x) except NULL nogil:
    cdef Leaf* L = v.leaf
    cdef Node* v2
    cdef Node* p
    cdef Leaf* L2
    k_take_spares(st, &v2, &p)  # or a MemoryError with nothing changed
    L2 = v2.leaf
    cdef int h = L.cnt >> 1, m = L.cnt - h
    memcpy(&L2.x[0], &L.x[h], m * sizeof(double))
    memcpy(&L2.w[0], &L.w[h], m * sizeof(double))
    memcpy(&L2.s[0], &L.s[h], m * sizeof(double))
    memcpy(&L2.n[0], &L.n[h], m * sizeof(long long))
    memcpy(&L2.r[0], &L.r[h], m * sizeof(float))
    st._op_moved += m
    L2.cnt = m
    L.cnt = h
    st._replace_child(v, p)
    p.left = v
    p.right = v2
    p.kmid = L2.x[0]  # before any descent reaches p (its update sets it again)
    v.parent = p
    v2.parent = p
    st._leaf_update(v)
    st._leaf_update(v2)
    return v2 if x >= L2.x[0] else v
