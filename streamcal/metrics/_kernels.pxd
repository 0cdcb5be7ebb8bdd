# Per-event helpers shared by the compiled metric stores (_kernels.pyx,
# _kernels_refinement.pyx, _kernels_ranking.pyx), defined here as inline functions so
# that each module compiles them in: the event preamble of every metric's update and
# the weight rule, and the zeroed C arrays of the stores.

from cpython.mem cimport PyMem_Malloc
from libc.math cimport fabs
from libc.string cimport memset

from streamcal._cvalidation cimport check_label, check_probability, check_weight


cdef inline int check_event(object y_true, object y_pred, object w, str owner,
                            double* event) except -1:
    # the event preamble of every metric's update: label, probability, weight (in that
    # order, so the first bad argument is the one named), as C doubles in event[0..2]
    event[0] = check_label(y_true, owner, "update", "y_true")
    event[1] = check_probability(y_pred, owner, "update")
    event[2] = check_weight(w, owner, "update")
    return 0


cdef inline int check_room(double held, double w, double capacity, str owner) except -1:
    # the weight rule of streamcal._validation for one event of update
    if held + w <= capacity:
        return 0
    from streamcal._validation import weight_overflow_error
    raise weight_overflow_error(owner, "update", w)


cdef inline int check_update(object y_true, object y_pred, object w, str owner,
                             double held, double capacity, double* event) except -1:
    # the whole preamble of an update whose store holds weight ``held`` of at most
    # ``capacity``: check_event, then the weight rule (a bad event changes nothing)
    check_event(y_true, y_pred, w, owner, event)
    return check_room(held, event[2], capacity, owner)


cdef inline double product_over(double x, double z, double w) noexcept:
    # x * z / w (w > 0) as the metrics always computed it, unless the product x * z
    # could leave the normal range (a factor below 2**-480: weights of about 1e-145
    # and less, whose squared sums underflowed), then x * (z / w), whose factors keep
    # the scale of the weights; streamcal.metrics._functional.product_over in Python
    if fabs(x) >= 2.0**-480 and fabs(z) >= 2.0**-480:
        return x * z / w
    return x * (z / w)


cdef inline bint cell_holds(double cw, double cs, double y, double w) noexcept:
    # could the events whose weight and label sums are cw and cs (a bin, a forecast
    # value, a group) include the event (y, w)? Each sum must hold its share of it, up
    # to rounding (2**-30 of cw): a revert of anything else is refused (it would leave a
    # negative weight or label sum); _kernels.cell_holds_event in Python
    cdef double tol = cw * 2.0**-30
    return w <= cw + tol and w * y <= cs + tol and w * (1.0 - y) <= (cw - cs) + tol


cdef inline double* new_doubles(Py_ssize_t n) except NULL:
    cdef double* x = <double*>PyMem_Malloc((n if n > 0 else 1) * sizeof(double))
    if x == NULL:
        raise MemoryError()
    memset(x, 0, (n if n > 0 else 1) * sizeof(double))
    return x


cdef inline long long* new_counts(Py_ssize_t n) except NULL:
    cdef long long* x = <long long*>PyMem_Malloc((n if n > 0 else 1) * sizeof(long long))
    if x == NULL:
        raise MemoryError()
    memset(x, 0, (n if n > 0 else 1) * sizeof(long long))
    return x


cdef class Store:
    # the base of the binary metric stores (_kernels.pyx: MeanScore, Binned;
    # _kernels_refinement.pyx: Groups), defined in _kernels.pyx
    cdef readonly str owner
    cdef public long long n
    cdef public double weight
    cdef readonly double capacity  # of the weight rule (streamcal._validation)
    cdef int add(self, double y, double p, double w) except -1
    cdef int add_each(self, const double[:] y, const double[:] p, const double[:] w) except -1
    cpdef double scale(self)
    cdef int set_totals(self, dict state) except -1
