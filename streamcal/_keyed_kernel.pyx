"""The per-event path of :class:`streamcal.KeyedCalibrator`, compiled (private).

:class:`KeyedKernel` is the C base class of ``KeyedCalibrator`` (as
``LogisticKernel`` is OnlinePlatt's): it holds the store, the fallback, the spawner and
the blank calibrator in C fields and runs ``learn_one`` / ``predict_one`` without a
Python frame of their own: the key check, the dict lookup, the LRU move and the
calibrators' calls. When the template is a compiled logistic calibrator (OnlinePlatt,
OnlineBeta: a few doubles of state), the calibrators' own compiled entry points are
called directly (``_newton.pxd``'s stable interface: ``c_learn`` / ``c_predict`` after
the same checks, with the same messages, as their ``learn_one`` / ``predict_one``), so
that a keyed event costs about one unkeyed event plus a dict lookup and a move.

Two references spare work in the common pattern (``predict_one(key, s)`` then
``learn_one(key, s, y)`` with the same key object, and runs of one key): the key object
of the latest lookup with its calibrator (a str or int object never changes, so the
same object needs no second lookup), and the most recently used calibrator (learning it
again needs no LRU move). They are a cache, not state: never pickled nor saved, reset
by a new store and by a new key (which may evict the cached one).

The semantics are those of the Python code this replaced, line for line: the
calibrator of a key validates the event before anything changes, a new key is stored
only after its first event was accepted, ``predict_one`` changes nothing.
"""

cimport cython
from cpython.dict cimport PyDict_GetItem
from cpython.ref cimport PyObject

from streamcal._cvalidation cimport check_label, check_score, check_weight
from streamcal.core._newton cimport LogisticKernel

import collections

from streamcal import _validation as V
from streamcal._snapshot import restored_on_error

__all__ = ["KeyedKernel", "compiled_logistic"]

cdef str _NAME = "KeyedCalibrator"
# the C method itself, called without looking it up on each event
cdef object _move_to_end = collections.OrderedDict.move_to_end


def compiled_logistic(calibrator) -> bool:
    """True if ``calibrator`` is a compiled logistic calibrator whose ``learn_one`` and
    ``predict_one`` are the kernel's own (not overridden by a subclass), so that
    :class:`KeyedKernel` may call the kernel's C entry points in their place.

    Examples
    --------
    >>> from streamcal import OnlineBeta, OnlineIsotonic, OnlinePlatt
    >>> [compiled_logistic(c) for c in (OnlinePlatt(), OnlineBeta(), OnlineIsotonic())]
    [True, True, False]

    """
    klass = type(calibrator)
    return (
        isinstance(calibrator, LogisticKernel)
        and klass.learn_one is LogisticKernel.learn_one
        and klass.predict_one is LogisticKernel.predict_one
    )


# pickled by the Python shell (KeyedCalibrator.__getstate__ / __setstate__)
@cython.auto_pickle(False)
cdef class KeyedKernel:
    """C fields and per-event methods of :class:`streamcal.KeyedCalibrator` (whose
    ``_reset`` sets the fields)."""

    cdef object _store_obj         # the KeyedStore (the property _store)
    cdef object _items             # its items (key -> calibrator, LRU first), read once
    cdef public object _fallback   # the shared calibrator, or None
    cdef public object _spawn      # makes a fresh copy of the template
    cdef public object _blank      # predicts for keys without a calibrator
    cdef public bint _logistic     # compiled_logistic(template): call the C entry points
    # the lookup cache: the key object (an exact str or int) of the latest lookup that
    # found a calibrator, and that calibrator; and the most recently used calibrator
    # (the last of the items). A key that *is* _last_key (the same object: a str or an
    # int never changes) needs no lookup; a calibrator that is _mru needs no LRU move.
    # Valid while the items change only here: cleared by a new store, reset by a new key
    cdef object _last_key
    cdef object _last_cal
    cdef object _mru
    cdef object _vouching          # the fallback whose _weights_surely_fit is in _vouches
    cdef object _vouches

    @property
    def _store(self):
        """The :class:`~streamcal._keyed_store.KeyedStore` of the keys; set it as a whole
        (never rebind its ``items``): the kernel reads the items from a C field."""
        return self._store_obj

    @_store.setter
    def _store(self, store):
        self._store_obj = store
        self._items = None if store is None else store.items
        self._last_key = self._last_cal = self._mru = None

    def _check_cache(self):
        """Assert that the lookup cache agrees with the store: the cached key's entry is
        the cached calibrator, and the most recently used one is the last entry."""
        items = self._items
        assert items is (None if self._store_obj is None else self._store_obj.items), "items"
        if self._last_key is not None:
            assert items.get(self._last_key) is self._last_cal, "cached calibrator"
        if self._mru is not None:
            assert len(items) and next(reversed(items.values())) is self._mru, "most recent"

    @cython.annotation_typing(False)  # annotations for readers (inspect), not C types
    def learn_one(self, key, score, label, w: float = 1.0) -> None:
        """Update the calibrator of ``key`` (created on its first event), and the
        fallback. O(1) plus the calibrators' ``learn_one``.

        Parameters
        ----------
        key
            The segment: a str, int, bool or finite float.
        score
            The score (a dict class -> probability for a multiclass template).
        label
            The outcome.
        w
            Sample weight, a finite real number >= 0.
        """
        cdef object t = type(key)
        cdef object items = self._items
        cdef PyObject* found
        cdef LogisticKernel k
        cdef double s, y, ww
        cdef double saved[9]  # the key's Newton state (NewtonLogistic.c_save)
        cdef bint fitted
        # The key check is written again in predict_one, on purpose: a shared
        # ``cdef inline`` helper is not inlined by gcc (its error path is too big) and
        # cost ~47 more instructions per predict_one + learn_one pair (callgrind, issue 14).
        cdef bint exact = t is str or t is int  # the common keys skip a call (check_key's fast path)
        if exact and key is self._last_key:  # predict_one(key, ...) then learn_one(key, ...)
            cal = self._last_cal
        else:
            if not exact:
                key = V.check_key(key, _NAME, "learn_one")
            found = PyDict_GetItem(items, key)  # an OrderedDict is a dict: a plain lookup
            if found is NULL:
                self._learn_new(key, score, label, w, exact)
                return
            cal = <object>found
        if self._logistic:
            k = <LogisticKernel?>cal
            s = check_score(score, k._name, "learn_one")
            y = check_label(label, k._name, "learn_one")
            ww = check_weight(w, k._name, "learn_one")
            if self._fallback is None:
                k.c_learn(s, y, ww)  # raises before any change: a bad event changes nothing
            else:  # the fallback may refuse a weight the key's calibrator took: undo it
                k._core.c_save(saved)
                fitted = k._fitted
                k.c_learn(s, y, ww)
                try:
                    (<LogisticKernel?>self._fallback).c_learn(s, y, ww)
                except BaseException:
                    k._core.c_restore(saved)
                    k._fitted = fitted
                    raise
        elif self._fallback is None:
            cal.learn_one(score, label, w)  # validates first: a bad event changes nothing
        else:
            if self._vouching is not self._fallback:  # restored, reset: ask it again
                self._vouching = self._fallback
                self._vouches = getattr(self._fallback, "_weights_surely_fit", None)
            if (type(w) is float or type(w) is int) and self._vouches is not None and self._vouches((w,)):
                cal.learn_one(score, label, w)
                self._fallback.learn_one(score, label, w)
            else:
                _learn_both(cal, self._fallback, score, label, w)
        if cal is not self._mru:  # already the last: moving it would change nothing
            _move_to_end(items, key)
            self._mru = cal
        if exact:
            self._last_key, self._last_cal = key, cal

    cdef _learn_new(self, key, score, label, w, bint exact):
        # atomic without a guard: the new calibrator is stored only once both have learnt
        cal = self._spawn()
        cal.learn_one(score, label, w)  # raises before the new key is stored
        if self._fallback is not None:
            self._fallback.learn_one(score, label, w)
        self._store.add(key, cal)  # may evict the cached key: the cache is reset
        self._mru = cal
        if exact:
            self._last_key, self._last_cal = key, cal
        else:
            self._last_key = self._last_cal = None

    def predict_one(self, key, score):
        """The calibrated probability of ``score`` for ``key`` (a dict for a
        multiclass template). Changes no state. O(1) plus one ``predict_one``.

        Parameters
        ----------
        key
            The segment: a str, int, bool or finite float.
        score
            The score (a dict class -> probability for a multiclass template).
        """
        cdef object t = type(key)
        cdef PyObject* found
        cdef LogisticKernel k
        # the key check of learn_one, written again on purpose (see there)
        cdef bint exact = t is str or t is int
        if exact and key is self._last_key:
            cal = self._last_cal
        else:
            if not exact:
                key = V.check_key(key, _NAME, "predict_one")
            found = PyDict_GetItem(self._items, key)
            if found is NULL:
                cal = None
            else:
                cal = <object>found
                if exact:  # the learn_one that usually follows needs no lookup
                    self._last_key, self._last_cal = key, cal
        if cal is None:
            cal = self._fallback if self._fallback is not None else self._blank
        if self._logistic:
            k = <LogisticKernel?>cal
            return k.c_predict(check_score(score, k._name, "predict_one"))
        return cal.predict_one(score)


def _learn_both(cal, fallback, score, label, w):
    """``cal.learn_one`` then ``fallback.learn_one``, or neither, when the fallback's
    cheap sufficient condition (``_weights_surely_fit``, asked first by
    ``KeyedKernel.learn_one``) cannot vouch for ``w``: each validates and applies its
    weight rule before changing anything, but the fallback, which learns every key's
    events, may refuse a weight the key's calibrator took, so the key's state is saved
    first and restored if the fallback raises."""
    with restored_on_error(cal, errors=BaseException):
        cal.learn_one(score, label, w)
        fallback.learn_one(score, label, w)
