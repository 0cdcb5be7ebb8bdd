# C-level declarations of the isotonic store of a fixed grid of cells
# (streamcal/core/_grid_pav.pyx): a static implicit tree in flat arrays over the K cells,
# leaves of B cells keeping their own lower hull, internal nodes the bridge of their
# children's hulls, every coordinate an exact integer. See the module docstring.

cimport cython


cdef enum:
    POLICY_AUTO = 0               # the block array while its checks stay short
    POLICY_TREE = 1               # the tree only
    POLICY_BLOCKS = 2             # the block array only (tests)


cdef struct GV:
    long long x                   # cumulative weight, in units of 2**q, in some frame
    long long y                   # cumulative label sum, same units
    int k                         # cell index (0: the sentinel, grid key k - 1)


# one side of a bridge descent (GridIsotonicStore._bridge): its node (a leaf when >= P),
# frame offset, and in a leaf the vertex range [lo, hi) (base: the leaf's first slot) and
# the middle index m of the edge tested
cdef struct GSide:
    int n
    long long ox
    long long oy
    int base
    int lo
    int hi
    int m


# one node of the implicit tree (64 bytes: one cache line)
cdef struct GNode:
    long long tw                  # totals of the subtree's cells
    long long ts
    long long ax                  # bridge (internal nodes): vertex a of the left child's
    long long ay                  # hull, b of the right child's, in the node's frame,
    long long bx                  # and their cells
    long long by
    int npres                     # present cells in the subtree (the sentinel counts)
    int ak
    int bk
    int bval                      # the bridge and its cached locates are current


@cython.final
cdef class GridIsotonicStore:
    cdef readonly int n_keys      # K: grid keys 0 .. K - 1
    cdef readonly int leaf_capacity
    cdef int nc                   # cells: K + 1 (cell 0 is the sentinel, weight 0)
    cdef int nleaf                # leaves holding cells
    cdef int P                    # leaves of the implicit tree (a power of two)
    cdef int q                    # every sum is an integer multiple of 2**q (NO_Q: empty)
    cdef double _uinv             # 2**-q (0: empty)
    # cells
    cdef long long* cw
    cdef long long* cs
    cdef long long* cn
    # present cells (weight > 0): bit set and its summary (one bit per non-zero word)
    cdef unsigned long long* bits
    cdef unsigned long long* summ
    cdef int nw
    cdef int ns
    # nodes 1 .. 2P - 1 (heap order; leaves P .. 2P - 1): totals, present cells, bridge
    cdef GNode* nd
    # internal nodes: the bridge's ends located in the children's hulls (own frames):
    # pred x, y, vertex x, y, succ x, y (6 per node), flags (1: a pred, 2: a succ);
    # bval: the bridge and both locates are current
    cdef long long* cl
    cdef long long* cr
    cdef int* lfl
    cdef int* rfl
    # and their neighbours' cells (pred, succ: 2 per node)
    cdef int* lks
    cdef int* rks
    # the event being added (see _grid_kernels.k_kept_locate): its cell, label
    # (0, 1; -1: neither, or a new cell) and weight in units
    cdef int _ec
    cdef int _ey
    cdef long long _edw
    cdef long long _eds           # its label sum, in units
    # the cells where the hull of the node being updated may have gained or lost
    # vertices (_dlo > _dhi: none), from the leaf's; see _grid_kernels.k_climb
    cdef int _dlo
    cdef int _dhi
    # leaf hulls: leaf j's vertices at j * B .. j * B + nh[j] - 1, in the leaf's frame
    cdef int* nh
    cdef int* hk
    cdef long long* hx
    cdef long long* hy
    cdef public long long _op_nodes
    cdef public long long _op_hull
    # the block array (streamcal/core/_grid_blocks.pxd): the ends of the blocks (the
    # global hull's vertices; cell 0 always one) as a bit set with its summary, and each
    # block's totals stored at its end cell (a re-hull's stack is the leaf-hull arrays
    # hk, hx, hy above: the block array changes only while the tree is stale, and the
    # tree is rebuilt from the cells alone)
    cdef unsigned long long* ebits
    cdef unsigned long long* esumm
    cdef long long* bw
    cdef long long* bs
    cdef bint tree_ok             # the tree (nodes, leaf hulls) describes the cells
    cdef bint arr_ok              # the block array describes the cells
    cdef int policy               # POLICY_AUTO, POLICY_TREE, POLICY_BLOCKS
    cdef long long _arr_wait      # adds left on the tree before the block array is tried
    cdef long long _arr_backoff   # the next such wait
    cdef long long _arr_events    # adds on the block array in the current window
    cdef long long _arr_window_len  # and that window's length
    cdef long long _arr_window_scan  # _op_scan at the start of that window
    cdef public long long _op_scan  # block array: cells scanned, blocks merged

    # the per-event C API
    cdef int add_c(self, double x, double w, double y) except -1 nogil
    cdef int _prepare(self, double x, double w, double y) noexcept nogil
    cdef void _ensure_tree(self) noexcept nogil
    cdef void _to_tree(self) noexcept nogil
    cdef bint empty_c(self) noexcept nogil
    cdef double predict_step_c(self, double x) noexcept nogil
    cdef double predict_linear_c(self, double x) noexcept nogil

    # private
    cdef void _clear(self) noexcept nogil
    cdef void _leaf_update(self, int j) noexcept nogil
    cdef void _leaf_add(self, int j, int c, bint new) noexcept nogil
    cdef void _internal_update(self, int u) noexcept nogil
    cdef bint _locate(self, int v, int K, long long* out, int* fl, int* ks) noexcept nogil
    cdef int _enter(self, int v) noexcept nogil
    cdef void _side_enter(self, GSide* s, int v) noexcept nogil
    cdef bint _side_points(self, GSide* s, GV* a, GV* b) noexcept nogil
    cdef void _side_go(self, GSide* s, bint right) noexcept nogil
    cdef void _bridge(self, int u) noexcept nogil
    cdef void _build_all(self) noexcept nogil
    cdef void _set_bit(self, int i) noexcept nogil
    cdef int _pred(self, int i) noexcept nogil
    cdef int _succ(self, int i) noexcept nogil
    cdef double _edge_value(self, int c, int* ka, int* kb) noexcept nogil
    cdef double _value_of(self, int c, int* kb) noexcept nogil
    cdef int _cell_of(self, double x) noexcept nogil
    cdef _collect(self, int v, long long ox, long long oy, int lo, int hi, list out)
