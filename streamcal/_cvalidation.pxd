# Per-event input checks for the compiled kernels (cimport this file).
#
# The fast path (an exact float, int or bool of the right domain) is inline C; anything
# else goes to streamcal._validation, the only home of the error messages, which either
# converts the value or raises the template error. So a compiled kernel validates each
# event once, in C, and says exactly what the pure-Python checks say.

from cpython.float cimport PyFloat_AS_DOUBLE
from libc.math cimport INFINITY

cdef double slow_score(object value, str owner, str method, str name) except? -1.0
cdef double slow_label(object value, str owner, str method, str name) except? -1.0
cdef double slow_weight(object value, str owner, str method, str name) except? -1.0
cdef double slow_probability(object value, str owner, str method, str name) except? -1.0


cdef inline bint unit_float(object value, double* x) noexcept:
    """The fast path of a score or a probability: True, with ``x[0]`` set, if
    ``value`` is a float in [0, 1]."""
    if type(value) is float:
        x[0] = PyFloat_AS_DOUBLE(value)
        return 0.0 <= x[0] <= 1.0
    return False


cdef inline double check_score(object value, str owner, str method, str name="score") except? -1.0:
    """A score in [0, 1] as a C double, or the template error."""
    cdef double x
    return x if unit_float(value, &x) else slow_score(value, owner, method, name)


cdef inline double check_label(object value, str owner, str method, str name="label") except? -1.0:
    """A binary label as 0.0 or 1.0, or the template error."""
    if value is True or value is False:
        return 1.0 if value is True else 0.0
    cdef double x
    if type(value) is float:  # a label column read as floats
        x = PyFloat_AS_DOUBLE(value)
        if x == 1.0 or x == 0.0:
            return x + 0.0  # -0.0 is 0.0, as the slow path says
    elif type(value) is int:
        if value == 1:
            return 1.0
        if value == 0:
            return 0.0
    return slow_label(value, owner, method, name)


cdef inline double check_weight(object value, str owner, str method, str name="w") except? -1.0:
    """A finite weight >= 0 as a C double, or the template error."""
    cdef double x
    if type(value) is float:
        x = PyFloat_AS_DOUBLE(value)
        if 0.0 <= x < INFINITY:
            return x
    return slow_weight(value, owner, method, name)


cdef inline double check_probability(object value, str owner, str method, str name="y_pred") except? -1.0:
    """A probability in [0, 1] (a float or river's predict_proba_one dict), or the error."""
    cdef double x
    return x if unit_float(value, &x) else slow_probability(value, owner, method, name)
