# cython: language_level=3
"""The per-event helpers of :class:`streamcal.CalibratedClassifier`, compiled (private):
in Python, the loop over the feature values cost about as much as the classifier call
the reused prediction saves, and the binary split was a tenth of the wrapper's time.

``binary_split(proba)`` reads a binary classifier's prediction (the same Python
operations as the code it replaced: the values keep their own arithmetic).

``immutable_copy(x)`` is the copy of ``x`` kept with a prediction, or None when ``x``
may not be kept (not an exact dict, a key that is not a ``str`` or an ``int``, or a
value of a type whose objects can change in place); ``same_features(x, kept)`` is
whether ``x`` holds the very same feature values as ``kept``: equal and of the same
type, with the same sign of zero (a classifier may tell ``True`` from ``1`` or ``-0.0``
from ``0.0``, e.g. by one-hot encoding their text). Both O(d), d the number of features.
"""

import numpy as np

from cpython.dict cimport PyDict_Copy, PyDict_GetItem, PyDict_Next
from cpython.ref cimport PyObject
from libc.math cimport signbit

from river import compose as river_compose

from streamcal import _validation as V

__all__ = ["IMMUTABLE_VALUES", "binary_split", "immutable_copy", "predict_is_pure", "reusable",
           "same_features"]

_BINARY_CLASSES = (
    "a classifier of the classes {False, True} or {0, 1} when 'calibrator' is a "
    "BinaryCalibrator (ClassWise or TopLabel make a binary calibrator multiclass)"
)

#: feature value types whose objects cannot change in place
IMMUTABLE_VALUES = frozenset(
    {float, int, bool, str, bytes, type(None), np.float64, np.float32, np.int64, np.int32,
     np.bool_, np.str_}
)
cdef frozenset _IMMUTABLE = IMMUTABLE_VALUES


cpdef object immutable_copy(object x):
    """A shallow copy of ``x`` if it is a ``dict`` (not a subclass) whose keys are
    ``str`` or ``int`` and whose values are all of the types in ``IMMUTABLE_VALUES``,
    else None. O(d).

    >>> immutable_copy({"a": 1.0, "b": "x", "c": None})
    {'a': 1.0, 'b': 'x', 'c': None}
    >>> immutable_copy({"a": [1.0]}) is None  # a list can change in place
    True
    """
    # PyDict_Next: no (key, value) tuple per feature; only type checks run meanwhile
    cdef Py_ssize_t pos = 0
    cdef PyObject* pk
    cdef PyObject* pv
    cdef object t
    if type(x) is not dict:
        return None
    while PyDict_Next(x, &pos, &pk, &pv):
        t = type(<object> pk)
        if t is not str and t is not int:
            return None
        t = type(<object> pv)
        if t is float or t is int or t is str or t is bool:
            continue
        if t not in _IMMUTABLE:
            return None
    return PyDict_Copy(x)


cdef object _ABSENT = object()


cpdef bint same_features(object x, dict kept):
    """Whether ``x`` holds the same features as ``kept`` (a result of
    :func:`immutable_copy`): the same keys (``str`` or ``int``: equal keys are of one
    type), each value equal to the kept one and of the same type, a zero of the same
    sign. False when a comparison raises (a value whose ``==`` gives no bool). O(d).

    >>> same_features({"a": 1.0, "b": "x"}, {"a": 1.0, "b": "x"})
    True
    >>> same_features({"a": 1}, {"a": 1.0})  # equal, but a classifier may tell them apart
    False
    >>> same_features({"a": -0.0}, {"a": 0.0})
    False
    >>> same_features({"a": np.zeros(2)}, {"a": 0.0})
    False
    """
    # PyDict_Next and PyDict_GetItem (no tuple, no bound method per feature); the keys
    # are exact str or int (hashing them runs no Python code) and the values compared
    # with == are of the types of the kept ones (IMMUTABLE_VALUES: built-in ==)
    cdef Py_ssize_t pos = 0
    cdef PyObject* pk
    cdef PyObject* pv
    cdef PyObject* pkv
    cdef object k, v, kv, t
    cdef double a, b
    if type(x) is not dict or len(<dict>x) != len(kept):
        return False
    try:
        while PyDict_Next(x, &pos, &pk, &pv):
            k = <object> pk
            t = type(k)
            if t is not str and t is not int:  # 1.0 or True would find the kept key 1
                return False
            pkv = PyDict_GetItem(kept, k)
            if pkv == NULL:
                return False
            v = <object> pv
            kv = <object> pkv
            t = type(v)
            if t is not type(kv):
                return False
            if v is kv:
                continue
            if t is float or t is np.float64 or t is np.float32:
                a = v
                b = kv
                if a != b or signbit(a) != signbit(b):
                    return False
            elif not (v == kv):
                return False
    except Exception:
        return False
    return True


cdef object _Pipeline = river_compose.Pipeline


cpdef bint predict_is_pure():
    """False while river's ``compose.learn_during_predict()`` is on: a pipeline's
    ``predict_proba_one`` then teaches its unsupervised steps, so a second call is not
    the same as reusing the first. O(1).

    >>> from river import compose
    >>> predict_is_pure()
    True
    >>> with compose.learn_during_predict():
    ...     predict_is_pure()
    False
    """
    return not getattr(_Pipeline, "_LEARN_UNSUPERVISED_DURING_PREDICT", False)


cpdef bint reusable(object last, object classifier, object x):
    """Whether the prediction kept in ``last`` (``(classifier, immutable copy of the
    features, prediction)``, or None) is the one ``classifier`` would give on ``x``
    now: the same classifier object made it, on the same features
    (:func:`same_features`), and a prediction teaches no pipeline
    (:func:`predict_is_pure`). One call for the three checks of
    ``CalibratedClassifier.learn_one``. O(d).

    >>> reusable(("clf", {"a": 1.0}, 0.5), "clf", {"a": 1.0})
    True
    >>> reusable(("clf", {"a": 1.0}, 0.5), "other", {"a": 1.0})
    False
    >>> reusable(None, "clf", {"a": 1.0})
    False
    """
    cdef tuple t
    if last is None:
        return False
    t = last
    return t[0] is classifier and predict_is_pure() and same_features(x, t[1])


cpdef object binary_split(object proba):
    """``(p, negative class, positive class)`` of a binary ``predict_proba_one`` output:
    ``p`` the probability of the positive class (the key equal to 1: ``True``, ``1`` or
    ``1.0``), normalised by the two classes' total and clipped to [0, 1]; a class the
    classifier has not seen yet is named after the one it has (``False`` for ``True``,
    ``0`` for ``1``, ...). None for an empty dict (a classifier that knows no class).
    Raises a ValueError for any other class. O(1).

    >>> binary_split({False: 0.25, True: 0.75})
    (0.75, False, True)
    >>> binary_split({1: 1.0})
    (1.0, 0, 1)
    >>> binary_split({False: 0.2, True: 0.6})[0]
    0.7499999999999999
    """
    cdef object pos = None, neg = None, pp = 0.0, pn = 0.0, p, total
    for k, v in proba.items():
        if k == 1:  # True, 1 or 1.0
            pos, pp = k, v
        elif k == 0:
            neg, pn = k, v
        else:
            raise ValueError(
                f"The 'classifier' parameter of CalibratedClassifier must be {_BINARY_CLASSES}. "
                f"Got a prediction {V.format_value(proba)} instead."
            )
    if pos is None:
        if neg is None:
            return None
        pos, p = type(neg)(1), 1.0 - pn
    elif neg is None:
        neg, p = type(pos)(0), pp
    else:
        total = pp + pn
        p = pp / total if total > 0.0 else 0.5
    if not 0.0 <= p <= 1.0:  # rounding, or a classifier's sloppy output; NaN -> 0.5
        if p == p:
            p = 0.0 if p < 0.0 else 1.0
        else:
            p = 0.5
    return p, neg, pos
