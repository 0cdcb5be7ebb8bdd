"""Slow paths of the compiled per-event checks: defer to :mod:`streamcal._validation`.

See ``_cvalidation.pxd`` for the inline fast paths the kernels use. Before deferring,
each slow path accepts the numpy scalars a loop over numpy arrays hands over
(``numpy.float64``, ``numpy.int64``, ``numpy.bool_``) when their value is in the
domain: what :mod:`streamcal._validation` returns for them, without its abstract-base
isinstance tests. Anything else, and every error, is :mod:`streamcal._validation`'s.
"""

from cpython.float cimport PyFloat_AS_DOUBLE
from libc.math cimport INFINITY

import numpy as np

from streamcal import _validation as V

cdef object _F64 = np.float64  # a float subclass: its value is a C double
cdef object _I64 = np.int64
cdef object _BOOL = np.bool_


cdef double slow_score(object value, str owner, str method, str name) except? -1.0:
    cdef double x
    if type(value) is _F64:
        x = PyFloat_AS_DOUBLE(value)
        if 0.0 <= x <= 1.0:
            return x
    return V.check_score(value, owner, method, name)


cdef double slow_label(object value, str owner, str method, str name) except? -1.0:
    cdef double x
    cdef object t = type(value)
    if t is _F64:
        x = PyFloat_AS_DOUBLE(value)
        if x == 1.0 or x == 0.0:
            return x + 0.0  # -0.0 is 0.0
    elif t is _I64 or t is _BOOL:
        if value == 1:
            return 1.0
        if value == 0:
            return 0.0
    return V.check_label(value, owner, method, name)


cdef double slow_weight(object value, str owner, str method, str name) except? -1.0:
    cdef double x
    if type(value) is _F64:
        x = PyFloat_AS_DOUBLE(value)
        if 0.0 <= x < INFINITY:
            return x
    return V.check_weight(value, owner, method, name)


cdef double slow_probability(object value, str owner, str method, str name) except? -1.0:
    cdef double x
    if type(value) is _F64:
        x = PyFloat_AS_DOUBLE(value)
        if 0.0 <= x <= 1.0:
            return x
    return V.check_probability(value, owner, method, name)
