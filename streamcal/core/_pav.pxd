# C-level declarations of the compiled isotonic block store (streamcal/core/_pav.pyx).
#
# One balanced binary tree over ALL cells (distinct score keys) in key order, leaves
# bucketed (up to LEAF_CAP cells in contiguous C arrays). Every node keeps its subtree
# totals and the BRIDGE of its children's lower hulls of the cumulative-sum points, in
# the node's local frame; the global lower hull (the fitted isotonic regression) is the
# root's hull. See the module docstring of _pav.pyx for the algorithms and costs.

cimport cython

cdef enum:
    LEAF_CAP = 256                # the largest leaf capacity (hidx: unsigned char)
    LEAF_CAP_DEFAULT = 128
    SHORT_HULL = 6                # internal nodes keep hulls of at most this many vertices
    NO_Q = 1 << 20                # qexp of a store without exact coordinates
    QEXP_MIN = -1074              # the finest bit of any double
    # kinds of change of one cell (IsotonicBlockStore._ck): any; the points of the
    # cells before the key keep their place (a label-1 event added, a label-0 event
    # removed); those from the key on are all translated by one vector (a label-0 event
    # added, a label-1 event removed)
    CH_ANY = 0
    CH_PREFIX = 1
    CH_SUFFIX = 2

cdef struct Leaf:
    int cnt                       # cells held
    int nh                        # vertices of the leaf's own lower hull
    int hexact                    # 1: that hull was computed with exact coordinates
    # arrays of the store's leaf capacity (at most LEAF_CAP), in the same allocation
    # right after this header (_new_leaf_node, _pav_tree.pxd)
    double* x                     # keys, strictly increasing
    double* w                     # cell weights
    double* s                     # cell weighted label sums
    long long* n                  # cell event counts
    float* r                      # bound on the rounding residue of w and s, relative to
                                  # w (0: none; _pav_residue.pxd)
    unsigned char* hidx           # cell index of each hull vertex
    double* hx                    # hull vertex coordinates in the leaf's frame
    double* hy
    # per hull vertex, the key of the last cell at or before it (in this leaf) whose
    # label sum is not 0 (hz), not its weight (hf); -inf if none: see Pt.z
    double* hz
    double* hf

cdef struct Pt:
    double x
    double y
    double k
    # within the frame: key of the last cell at or before k whose label sum s is not 0
    # (z), not its weight (f); -inf if none. The cells of (a.k, b.k] all have s == 0
    # when b.z <= a.k, all s == w when b.f <= a.k: the slope of ab is then exactly 0, 1
    double z
    double f

# a range sum of cells (streamcal/core/_pav_tree.pxd)
cdef struct Sums:
    double W      # double-double totals: W + Wlo, S + Slo
    double Wlo
    double S
    double Slo
    long long N
    Py_ssize_t C


# the neighbourhood of a key in a node's hull (_pav_tree._locate)
cdef struct Loc:
    Pt pred
    Pt at
    Pt succ
    bint has_pred
    bint has_succ
    Py_ssize_t rle      # vertices of the hull with key <= K
    Py_ssize_t rge      # vertices of the hull with key >= K
    Py_ssize_t steps


cdef struct Node:
    # the fields a descent reads come first (one or two cache lines): the tree is far
    # larger than the caches at 1e6 cells, and a locate is a chain of such reads
    Leaf* leaf                    # NULL for an internal node
    Node* left
    Node* right
    double kmid                   # internal: right.kmin (a descent reads no sibling)
    double akey                   # keys of the bridge's cells (see ax, bx below)
    double bkey
    double kmin                   # smallest key of the subtree
    Py_ssize_t nvl                # vertices of this node's hull from the left child
    Py_ssize_t nvr                # ... and from the right child (leaf: nvl = nh, nvr = 0)
    double W                      # subtree totals (sums of children, never differences),
    double S                      # in double-double: W + Wlo, S + Slo, so that a range
    double zmax                   # largest key of a cell with s != 0 (-inf if none)
    double fmax                   # ... with s != w
    double Wlo                    # sum rounds the same whatever the tree's shape
    double Slo
    long long N
    Py_ssize_t ncells
    Node* parent
    Py_ssize_t nleaves
    # bridge (internal nodes): hull vertex a of the left child, b of the right child,
    # coordinates in this node's frame (keys akey, bkey above)
    double ax
    double ay
    double bx
    double by
    double az                     # Pt.z and Pt.f of the bridge's vertices in this frame
    double af
    double bz
    double bf
    int bvalid                    # internal node: the bridge above was computed (once)
    int nsh                       # internal: vertices kept in sh (0 none, -1 not computed)
    long long stamp               # a new value whenever the node's hull is recomputed
    long long ostamp              # the stamp before the last recomputation (0: none)
    Py_ssize_t onv                # nvl + nvr before the last recomputation
    # internal nodes only (a leaf's Node is allocated without these fields):
    # the last locate of the bridge keys in the children's hulls (exact coordinates),
    # in the child's frame, valid while the child's stamp is lcs / rcs (0: none), or
    # after one change of the child that provably keeps it (see _pav.pyx, "Cache"):
    # pred x, y; vertex x, y, z, f; succ x, y; pred key, succ key
    int lfl                       # 1: has a pred, 2: has a succ
    int rfl
    long long lcs
    long long rcs
    double cl[10]
    double cr[10]
    Py_ssize_t lrank              # rank of a (vertices <= a.k) in hull(left)
    Py_ssize_t rrank              # rank of b from the right (vertices >= b.k) in hull(right)
    # with exact coordinates, the node's hull when it has at most SHORT_HULL vertices
    # (in this frame; nsh above): see _pav_short.pxd
    Pt sh[SHORT_HULL]


@cython.final
cdef class IsotonicBlockStore:
    cdef Node* root
    cdef int cap
    # exact mode: every cell sum is a multiple of 2**qexp and the total weight is below
    # 2**(qexp + 53), so every coordinate is an exact integer multiple of 2**qexp
    cdef int qexp
    # adds keep each cell's residue bound (Leaf.r, _pav_residue.pxd): a store that
    # removes events (a window, a metric's revert); off, the bounds stay 0
    cdef public bint track_residues
    cdef double qscale
    # qscale when products of two coordinates below 2**(qexp + 26) are exact doubles
    # (qexp in [-500, 480]: no underflow, no overflow), else 0: the fast double tests
    cdef double fscale
    # a change of qexp not yet carried to the tree (_set_qexp; _pav_requalify.pxd), and
    # the exactness threshold before it: a node of total W had exact coordinates when
    # W < _qthr (2**(qexp + 53), 0 without exact coordinates)
    cdef bint _qpend
    cdef double _qthr
    cdef bint _qhold   # a hypothetical event runs: only its paths follow qexp
    # operation counters (always on, integer increments)
    cdef public long long _op_nodes
    cdef public long long _op_hull
    cdef public long long _op_moved
    cdef public long long _op_fallback
    cdef public long long _op_edge_sums  # leaf chain tests its filter left to edge Sum2 sums
    cdef public long long _op_kept_inexact  # bridges kept without exact coordinates (_pav_kept)
    cdef public long long _op_reused   # cached locates kept through a change of a child
    cdef public long long _op_short    # bridges found from short hulls (_pav_short.pxd)
    cdef public bint _short_off        # tests: no short hulls (the other paths run)
    # a hull or bridge was computed without exact coordinates since the last rebuild
    # (k_leaf_update, k_bridge): the read-only hypothetical query (_pav_query.pxd) is off
    cdef readonly bint _inexact
    cdef public long long _op_query    # fits read by the read-only query (_pav_query.pxd)
    cdef object _live
    cdef long long _clock         # the last node stamp given
    # the change being propagated by _fix_path (see _pav.pyx, "Cache"): its kind
    # (CH_*), key, translation of the later points, whether the cell is new, whether
    # it is a removal, and the child of the node being updated that it went through
    cdef int _ck
    cdef double _cx
    cdef double _cdw
    cdef double _cds
    cdef bint _cnew
    cdef bint _crem
    # the first cell of the leaf being updated whose point may have moved (add_c,
    # remove_c; 0: all), read and reset by the leaf's update (k_leaf_update)
    cdef int _dirty
    # with _dirty > 0 (set together by k_note_cell): that cell's change of weight,
    # label sum and count, and the shift of the later cells' indices (+1: the cell is
    # new, -1: deleted, 0: changed in place); the later points move by (_tdw, _tds)
    cdef double _tdw
    cdef double _tds
    cdef long long _tdn
    cdef int _tsh
    cdef Node* _cnode
    # a full window's event: the lowest node the removal's and the add's paths share,
    # its update and its ancestors' put off until both are done (_pav_pair.pxd); NULL
    cdef Node* _stop
    # nodes held for the next leaf splits (reserve_c: stacks linked through .parent,
    # and their sizes), so that adds after a reservation cannot fail to allocate; and,
    # for tests, the allocations allowed before a MemoryError (-1: no limit; see
    # _limit_allocations)
    cdef Node* _spare_leaf
    cdef Node* _spare_inner
    cdef int _nspare_leaf
    cdef int _nspare_inner
    cdef long long _alloc_budget

    # the per-event C API (stable)
    cdef int add_c(self, double x, double w, double y) except -1 nogil
    cdef long remove_c(self, double x, double w, double y) except -1 nogil
    # put back the cell a removal deleted (remove_c returned > 0): key x, sums w, s of
    # its n events, their residue bound r (_pav_residue.pxd); added to the cell's sums
    # if one holds the key
    cdef int add_cell_c(self, double x, double w, double s, long long n, float r) except -1 nogil
    cdef double predict_step_c(self, double x) noexcept nogil
    # predict_step_c at a key the store holds (the read skips finding that key)
    cdef double predict_linear_c(self, double x) noexcept nogil
    cdef Py_ssize_t n_blocks_c(self) noexcept nogil
    # the step fit at x had one event (x, w, y) been added; the store is left as it was
    cdef double hypothetical_c(self, double x, double w, double y) except? -1.0 nogil
    cdef int relabel_c(self, double x, double ds) except -1 nogil
    cdef double hypothetical_pair_c(self, double x, double w, double* p1) except? -1.0 nogil
    # the step (linear) read-out at x with a prior pseudo-event (weight w, label m)
    # pooled into the fit at the cell the read-out uses; the store is left as it was
    cdef double prior_step_c(self, double x, double w, double m) except? -1.0 nogil
    cdef double prior_linear_c(self, double x, double w, double m) except? -1.0 nogil
    # raise the template ValueError naming 'w' of owner.method if adding an event of
    # weight w would make a sum overflow; call before mutating anything
    cdef int check_add_c(self, double w, str owner, str method) except -1
    # hold the nodes of ``splits`` leaf splits, so that the adds after it cannot fail
    # to allocate; call before mutating anything when an add must follow another
    # change (a window's eviction, a renormalisation); release_c() after them
    cdef int reserve_c(self, int splits) except -1 nogil
    # reserve_c(2) when the removal of key k then the add of key x could split leaves
    # (a window's eviction: the removal may re-add k's cell, see IsotonicStream._readd);
    # release_c() after them frees what they did not use
    # With ``pair``, also the nodes both changes' paths share are recomputed once, at
    # pair_end_c() after both, when neither can change the tree's shape (_pav_pair.pxd)
    cdef int reserve_for_c(self, double x, double k, bint pair=*) except -1 nogil
    cdef int pair_end_c(self) except -1 nogil
    cdef void release_c(self) noexcept nogil

    # private (may change)
    cdef void _reset_empty(self) except *
    cdef int _add(self, double x, double w, double wy, long long n, float r, int kind) except -1 nogil
    cdef void _note_value(self, double v) noexcept nogil
    cdef void _set_qexp(self, int e) noexcept nogil
    cdef bint _exact(self, Node* frame) noexcept nogil
    cdef int _vsign(self, Node* frame, Pt a, Pt b, Pt c, Pt d) noexcept nogil
    cdef int _orient(self, Node* frame, Pt a, Pt b, Pt c) noexcept nogil
    cdef int _vs(self, Node* frame, bint fast, Pt a, Pt b, Pt c, Pt d) noexcept nogil
    cdef bint _fast(self, Node* frame) noexcept nogil
    cdef bint _meet_left_of_split(self, Node* frame, Pt a, Pt b, Pt c, Pt d, double xs, Node* left) noexcept nogil
    cdef void _leaf_update(self, Node* v) noexcept nogil
    cdef int _internal_update(self, Node* u, bint reuse=*) except -1 nogil
    cdef bint _bridge_still_valid(self, Node* u) noexcept nogil
    cdef bint _cache_survives(self, Node* child, double* c, int fl, Py_ssize_t* rank,
                              bint rank_from_left) noexcept nogil
    cdef int _bridge(self, Node* u) except -1 nogil
    cdef int _fix_path(self, Node* v) except -1 nogil
    cdef void _replace_child(self, Node* old, Node* new) noexcept nogil
    cdef Node* _alloc_node(self, bint leaf) except NULL nogil
    cdef Node* _leaf_for(self, double x) noexcept nogil
    cdef double _pred_key(self, double x) noexcept nogil
    cdef double _succ_key(self, double k) noexcept nogil
    cdef void _edge_of(self, double c, double* ka, double* kb) noexcept nogil
    cdef double _block_value(self, double ka, double kb) noexcept nogil
    cdef double _value_at(self, double c) noexcept nogil
    cdef double _step_key(self, double x) noexcept nogil
    cdef void _note_removal(self, double x, double dw, double ds) noexcept nogil
    cdef int _after_delete(self, Node* v) except -1 nogil
    cdef int _edge_sign(self, Leaf* L, int i0, int i1, int i2, double uw, double us,
                        double vw, double vs) noexcept nogil
