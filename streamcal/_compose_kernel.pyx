# cython: language_level=3
"""The per-event checks of :class:`streamcal.CalibratedClassifier`'s reused prediction,
compiled (private): a Python loop over the feature values cost more than the classifier
call it saves.

``immutable_copy(x)`` is the copy of ``x`` kept with a prediction, or None when ``x``
may not be kept (not an exact dict, or a value of a type whose objects can change in
place); ``same_features(x, kept)`` is ``x == kept``, False when the comparison raises
or is not a bool. Both O(d), d the number of features.
"""

import numpy as np

from cpython.dict cimport PyDict_Copy

__all__ = ["IMMUTABLE_VALUES", "immutable_copy", "same_features"]

#: feature value types whose objects cannot change in place
IMMUTABLE_VALUES = frozenset(
    {float, int, bool, str, bytes, type(None), np.float64, np.float32, np.int64, np.int32,
     np.bool_, np.str_}
)
cdef frozenset _IMMUTABLE = IMMUTABLE_VALUES


cpdef object immutable_copy(object x):
    """A shallow copy of ``x`` if it is a ``dict`` (not a subclass) whose values are
    all of the types in ``IMMUTABLE_VALUES``, else None. O(d).

    >>> immutable_copy({"a": 1.0, "b": "x", "c": None})
    {'a': 1.0, 'b': 'x', 'c': None}
    >>> immutable_copy({"a": [1.0]}) is None  # a list can change in place
    True
    """
    cdef object t
    if type(x) is not dict:
        return None
    for v in (<dict>x).values():
        t = type(v)
        if t is float or t is int or t is str or t is bool:
            continue
        if t not in _IMMUTABLE:
            return None
    return PyDict_Copy(x)


cpdef bint same_features(object x, dict kept):
    """``x == kept``; False when the comparison raises (a value whose ``==`` gives no
    bool, such as an array against a number). O(d).

    >>> same_features({"a": 1, "b": 2.5}, {"a": 1.0, "b": 2.5})
    True
    >>> same_features({"a": np.zeros(2)}, {"a": 0.0})
    False
    """
    try:
        return bool(x == kept)
    except Exception:
        return False
