# The shape of the compiled isotonic block store's tree (streamcal/core/_pav.pyx):
# building a balanced tree over leaves, and the scapegoat rebuild of a subtree. Inline
# functions of the store (``st``), compiled into the modules that cimport them.
#
# Neither can leave the tree broken when memory runs out: a rebuild reuses the
# subtree's own internal nodes (a subtree of k leaves has k - 1 of them) and needs one
# array of pointers, allocated before anything moves; without it the rebuild is put
# off (the tree stays valid, only less balanced, and the next change on that path
# finds the same scapegoat). A build from fresh leaves (_pav_ops.rebuild) takes its
# internal nodes from an array its caller allocated in full beforehand.

from cpython.mem cimport PyMem_RawMalloc, PyMem_RawFree
from libc.string cimport memset

from streamcal.core._pav cimport IsotonicBlockStore, Node


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
