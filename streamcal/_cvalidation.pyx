"""Slow paths of the compiled per-event checks: defer to :mod:`streamcal._validation`.

See ``_cvalidation.pxd`` for the inline fast paths the kernels use.
"""

from streamcal import _validation as V


cdef double slow_score(object value, str owner, str method, str name) except? -1.0:
    return V.check_score(value, owner, method, name)


cdef double slow_label(object value, str owner, str method, str name) except? -1.0:
    return V.check_label(value, owner, method, name)


cdef double slow_weight(object value, str owner, str method, str name) except? -1.0:
    return V.check_weight(value, owner, method, name)


cdef double slow_probability(object value, str owner, str method, str name) except? -1.0:
    return V.check_probability(value, owner, method, name)
