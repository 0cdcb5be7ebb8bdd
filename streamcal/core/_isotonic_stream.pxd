# C-level declaration of the compiled isotonic stream (streamcal/core/_isotonic_stream.pyx):
# its fields and C methods, so that other modules (the calibrators' per-event entry
# points, streamcal/core/_isotonic_kernel.pyx) call it without a Python call.

from streamcal.core._pav cimport IsotonicBlockStore
from streamcal.core._grid_pav cimport GridIsotonicStore


cdef class IsotonicStream:
    # the block store; with a grid store (below) a copy rebuilt from it on demand
    cdef IsotonicBlockStore _st
    # plain grid mode (resolution alone): the events go to this store instead, as long
    # as its sums stay exact (else its cells move to _st and it is dropped); _st_stale:
    # _st lags behind it
    cdef GridIsotonicStore _grid
    cdef bint _st_stale
    cdef readonly double resolution, half_life
    cdef readonly Py_ssize_t window_size
    cdef readonly bint linear, venn_abers
    cdef readonly double prior_strength
    cdef readonly str owner
    cdef int mode
    # ring buffer of the window: key, label, stored weight, event index
    cdef double[::1] _wx, _wy, _ww
    cdef long long[::1] _wt
    cdef Py_ssize_t _head, _count
    cdef public long long n_events, t_ref
    cdef public double phase
    # sum of the stored weights in double-double (_total + _total_lo: the overflow checks)
    cdef double _total, _total_lo
    # what a renormalisation planned by _plan keeps (no window), until it runs
    cdef object _keep

    cdef _alloc(self, Py_ssize_t cap)
    cdef inline Py_ssize_t _slot(self, Py_ssize_t i) noexcept nogil
    cdef _grow(self)
    cdef int _push(self, double x, double y, double w, long long t) except -1 nogil
    cdef int _pop_oldest(self) except -1 nogil
    cdef int _readd(self, double x, long others) except -1 nogil
    cdef inline double key(self, double s)
    cdef double predict_c(self, double s) except? -1.0
    cdef double _exact_predict(self, double s, double x, double wh) except? -1.0 nogil
    cdef double prior_c(self, double x) except? -1.0
    cdef int interval_c(self, double x, double* p0, double* p1) except -1
    cdef double next_weight_c(self) noexcept
    cdef double _split(self, double w, double e, double* E) noexcept
    cdef double _plan(self, double w, double e, long long t, long long* shift) except? -1.0
    cdef int learn_c(self, double s, double y, double w) except -1
    # the per-event entry points with their argument checks (learn_one, predict_one; the
    # calibrators' IsotonicKernel calls them directly)
    cdef int learn_checked(self, object score, object label, object w) except -1
    cdef double predict_checked(self, object score) except? -1.0
    cdef int _store_event(self, double x, double y, double ws) except -1 nogil
    cdef _leave_grid(self)
    cdef inline double _leaving_weight(self)
    cdef check_batch(self, const signed char[::1] kinds, const double[::1] w, str method)
    cdef _renormalise(self, long long shift, double e, object keep)
    cdef _rescale_cells(self, int shift, double e, object keep)
    cdef object _run(self, const signed char[::1] kinds, const double[::1] scores,
                     const double[::1] labels, const double[::1] w, str method)
    cdef int _exact_run(self, const signed char[::1] kinds, signed char k,
                        const double[::1] scores, const double[::1] labels,
                        const double[::1] w, double[::1] o) except -1
    cdef Py_ssize_t _grid_run(self, const double[::1] scores, const double[::1] labels,
                              const double[::1] w, double[::1] o) noexcept
    cdef double _va_predict_learn_c(self, double s, double y) except? -1.0
    cdef object _save_if_refusable(self, const double[::1] w)
    cdef _refused(self, object saved, const double[::1] w, Py_ssize_t i, str method)
