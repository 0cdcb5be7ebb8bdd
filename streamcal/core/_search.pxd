# Binary searches of a sorted C array: the compiled kernels' one home of the
# ``bisect`` module's rules (Python home: ``bisect.bisect_right`` / ``bisect_left``).
# ``cdef inline``: each call compiles to the loop itself (no call on the per-event paths).


cdef inline int bisect_right(const double* a, int n, double x) noexcept nogil:
    """The number of values of the sorted ``a[:n]`` that are ``<= x``."""
    cdef int lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if x < a[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


ctypedef fused sorted_key:
    int
    double


cdef inline Py_ssize_t bisect_left(const sorted_key* a, Py_ssize_t n, sorted_key x) noexcept nogil:
    """The first index of the sorted ``a[:n]`` whose value is >= ``x`` (``n`` if none)."""
    cdef Py_ssize_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo
