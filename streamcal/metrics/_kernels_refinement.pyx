"""Compiled per-event state of :class:`streamcal.metrics.CalibrationRefinement` (the
shell is in ``_refinement.py``): the groups of equal (pooled) forecasts and the running
sums of the Foster-Hart decomposition. The conventions of every metric store (snapshot
state, ``add``, ``update_many``, the module-level ``update``) are described in
``_kernels.pyx``.
"""

cimport cython
from libc.math cimport floor
from libc.string cimport memset
from cpython.mem cimport PyMem_Free


from streamcal._validation import weight_capacity
from streamcal.metrics._kernels cimport (
    Store, cell_holds, check_update, new_counts, new_doubles, product_over,
)

# CalibrationRefinement keeps a grid of at most this many cells in C arrays, a dict beyond
cdef Py_ssize_t DENSE_LIMIT = 1 << 16


@cython.final
cdef class Groups(Store):
    """Per distinct (pooled) forecast: weight, weighted label sum and count, with the
    running sums of the Foster-Hart decomposition (streamcal.metrics._refinement).

    Without a resolution the groups are a dict keyed by the forecast; with one, keyed
    by the grid index ``k = int(p / resolution + 0.5)``: C arrays over the grid when it
    has at most 65,536 cells, else a dict keyed by the int ``k``."""

    cdef readonly double resolution  # 0.0: none
    cdef readonly bint dense
    cdef Py_ssize_t cells
    cdef double* gw
    cdef double* gy
    cdef long long* gk
    cdef Py_ssize_t n_groups  # non-empty cells (dense)
    cdef public dict groups
    cdef public double score
    cdef public double cal
    cdef public double ref

    def __cinit__(self, str owner, double resolution=0.0):
        self.owner = owner
        # of the weight rule: the refinement sums square a group's label sum
        self.capacity = weight_capacity(2.0, quadratic=True)
        self.resolution = resolution
        self.cells = 0
        if resolution > 0.0:
            self.cells = <Py_ssize_t>floor(1.0 / resolution + 0.5) + 1
        self.dense = 0 < self.cells <= DENSE_LIMIT
        n = self.cells if self.dense else 0
        self.gw = new_doubles(n)
        self.gy = new_doubles(n)
        self.gk = new_counts(n)
        self.groups = {}

    def __dealloc__(self):
        PyMem_Free(self.gw)
        PyMem_Free(self.gy)
        PyMem_Free(self.gk)

    cdef void clear(self):
        if self.dense:
            memset(self.gw, 0, self.cells * sizeof(double))
            memset(self.gy, 0, self.cells * sizeof(double))
            memset(self.gk, 0, self.cells * sizeof(long long))
        self.n_groups = 0
        self.groups = {}
        self.n = 0
        self.weight = self.score = self.cal = self.ref = 0.0

    cdef inline double snap(self, double p, Py_ssize_t* key) noexcept:
        # the grid cell of p (resolution > 0) and its pooled forecast, capped at 1
        key[0] = <Py_ssize_t>(p / self.resolution + 0.5)  # floor: the argument is >= 0
        p = key[0] * self.resolution
        return p if p <= 1.0 else 1.0

    cdef int add(self, double y, double p, double w) except -1:
        cdef Py_ssize_t key = 0
        cdef object okey
        cdef double d, wd, wy, gw, gy, e, cal, ref
        cdef list g
        if not w > 0.0:
            return 0
        if self.resolution > 0.0:
            p = self.snap(p, &key)
        d = p - y
        wd = w * d
        self.score += wd * d
        self.weight += w
        self.n += 1
        if self.dense:
            if self.gk[key] == 0:
                wy = w * y
                self.gw[key] = w
                self.gy[key] = wy
                self.gk[key] = 1
                self.n_groups += 1
                self.cal += wd * d
                self.ref += wy - product_over(wy, wy, w)
                return 0
            gw = self.gw[key]
            gy = self.gy[key]
        else:
            okey = key if self.resolution > 0.0 else p
            g = self.groups.get(okey)
            if g is None:
                wy = w * y
                self.groups[okey] = [w, wy, 1]
                self.cal += wd * d
                self.ref += wy - product_over(wy, wy, w)
                return 0
            gw = g[0]
            gy = g[1]
        e = p * gw - gy
        cal = product_over(e, e, gw)
        ref = product_over(gy, gy, gw)  # Y (W - Y) / W = Y - Y ** 2 / W
        gw += w
        gy += w * y
        if self.dense:
            self.gw[key] = gw
            self.gy[key] = gy
            self.gk[key] += 1
        else:
            g[0] = gw
            g[1] = gy
            g[2] = g[2] + 1
        e += wd
        self.cal += product_over(e, e, gw) - cal
        self.ref += w * y + ref - product_over(gy, gy, gw)
        return 0

    cdef int add_each(self, const double[:] y, const double[:] p, const double[:] w) except -1:
        cdef Py_ssize_t i  # _kernels.Store.update_many's batch loop, here: each add is direct
        for i in range(y.shape[0]):
            self.add(y[i], p[i], w[i])

    def revert(self, double y, double p, double w):
        """Remove a validated event; False (nothing changed) if it is not held: no
        group at its forecast, or more weight, label-1 or label-0 weight than the group
        holds (``cell_holds``)."""
        cdef Py_ssize_t key = 0
        cdef object okey = None
        cdef list g = None
        cdef double d, gw, gy, e, cal, ref
        cdef long long k
        if not w > 0.0:
            return True
        if self.resolution > 0.0:
            p = self.snap(p, &key)
        if self.dense:
            if self.gk[key] == 0:
                return False
            gw, gy, k = self.gw[key], self.gy[key], self.gk[key]
        else:
            okey = key if self.resolution > 0.0 else p
            g = self.groups.get(okey)
            if g is None:
                return False
            gw, gy, k = g[0], g[1], g[2]
        if not cell_holds(gw, gy, y, w):  # more (label-1, label-0) weight than held
            return False
        self.n -= 1
        if self.n <= 0:  # back to exactly empty
            self.clear()
            return True
        d = p - y
        self.score -= w * d * d
        self.weight -= w
        e = p * gw - gy
        cal = product_over(e, e, gw)
        ref = product_over(gy, gw - gy, gw)
        if k == 1:
            if self.dense:
                self.gw[key] = self.gy[key] = 0.0
                self.gk[key] = 0
                self.n_groups -= 1
            else:
                del self.groups[okey]
            self.cal -= cal
            self.ref -= ref
            return True
        gw -= w
        gy -= w * y
        if self.dense:
            self.gw[key] = gw
            self.gy[key] = gy
            self.gk[key] = k - 1
        else:
            g[0] = gw
            g[1] = gy
            g[2] = k - 1
        e = p * gw - gy
        self.cal += product_over(e, e, gw) - cal
        self.ref += product_over(gy, gw - gy, gw) - ref
        return True


    def group_list(self):
        """``[[key, weight, label sum, count], ...]``: grid cells in increasing order,
        dict groups in insertion order."""
        cdef Py_ssize_t key
        if self.dense:
            return [
                [key, self.gw[key], self.gy[key], self.gk[key]]
                for key in range(self.cells)
                if self.gk[key]
            ]
        return [[k, g[0], g[1], g[2]] for k, g in self.groups.items()]

    def get_state(self):
        return {
            "n": self.n,
            "weight": self.weight,
            "score": self.score,
            "calibration": self.cal,
            "refinement": self.ref,
            "groups": self.group_list(),
        }

    def set_state(self, dict state):
        """Restore ``get_state()``; grid keys outside the grid raise ValueError."""
        cdef Py_ssize_t key
        cdef list groups = [list(g) for g in state["groups"]]
        self.clear()
        if self.dense:
            for g in groups:
                key = int(g[0])
                if not 0 <= key < self.cells or self.gk[key]:
                    self.clear()
                    raise ValueError(
                        f"The 'groups' state of {self.owner} must hold distinct grid "
                        f"keys in [0, {self.cells - 1}]. Got {g[0]!r} instead."
                    )
                self.gw[key] = float(g[1])
                self.gy[key] = float(g[2])
                self.gk[key] = int(g[3])
                self.n_groups += 1
        else:
            cast = int if self.resolution > 0.0 else float
            self.groups = {cast(g[0]): [float(g[1]), float(g[2]), int(g[3])] for g in groups}
        self.set_totals(state)
        self.score = float(state["score"])
        self.cal = float(state["calibration"])
        self.ref = float(state["refinement"])

    def __reduce__(self):
        return Groups, (self.owner, self.resolution), self.get_state()


# per-event path: the preamble is _kernels.pxd's check_update (one home); the store is
# a typed cdef class, so ``s.add`` is a direct call (no shared dispatch)
def groups_update(self, y_true, y_pred, w=1.0):
    """Add one event; O(1); a bad event raises and changes nothing."""
    cdef Groups s = self._store
    cdef double e[3]
    check_update(y_true, y_pred, w, s.owner, s.weight, s.capacity, e)
    s.add(e[0], e[1], e[2])
