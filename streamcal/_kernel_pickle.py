"""Pickling at every protocol (private): the Python shells over compiled base classes,
and the small helpers with ``__slots__``.

``OnlineIsotonic`` / ``VennAbers`` (over ``IsotonicKernel``), ``KeyedCalibrator`` (over
``KeyedKernel``) and ``OnlinePlatt`` / ``OnlineBeta`` (over ``LogisticKernel``) keep
part of their state in the C fields of their compiled base class, not in ``__dict__``.
:class:`KernelShellPickle` carries the fields a class names in ``_kernel_fields`` with
``__dict__`` (a class may instead write its own ``__getstate__`` / ``__setstate__``, as
the logistic shells do with their snapshot state). The default reduction of pickle
protocols 0 and 1 cannot rebuild an object whose class has such a base ("cannot pickle
'LogisticKernel' object"); the mixin gives every protocol the reduction of protocol 2:
a new object of the class, then ``__setstate__``. (Pickles of ``OnlineIsotonic`` and
``VennAbers`` written at protocols 0 and 1 before they had a compiled base rebuild the
object with ``object.__new__``, which such a class refuses: those do not load. Pickles
at protocol 2 or later, the default, do.) The same state makes river's
``clone(include_attributes=True)`` a fitted copy: river copies ``__dict__`` only, which
would leave such a shell unfitted.

:class:`SlotsPickle` gives a class with ``__slots__`` (the per-key store, the sliding
windows and fitted maps inside the multiclass calibrators, the binned sums of the
multiclass metrics) a state dict of its slots: without one, protocols 0 and 1 refuse
such a class ("a class that defines __slots__ without defining __getstate__ cannot be
pickled"). Protocols 2 and later wrote ``(None, slots)``, which still restores.
"""

from __future__ import annotations

import copy
import copyreg

from streamcal._validation import format_value

__all__ = ["KernelShellPickle", "SlotsPickle", "slot_names"]


class KernelShellPickle:
    """Mixin: ``__getstate__`` is ``__dict__`` plus the C fields named in
    ``_kernel_fields``, ``__setstate__`` puts them back (a field missing from an older
    pickle comes back as None), and ``__reduce_ex__`` is ``copyreg.__newobj__`` of the
    class, then that state, whatever the protocol (also what ``copy`` uses).

    Examples
    --------
    >>> import pickle
    >>> from streamcal import OnlineIsotonic, OnlinePlatt
    >>> OnlineIsotonic._kernel_fields
    ('_stream',)
    >>> cal = OnlinePlatt()
    >>> cal.learn_one(0.8, 1)
    >>> copy = pickle.loads(pickle.dumps(cal, protocol=0))
    >>> copy.predict_one(0.8) == cal.predict_one(0.8)
    True

    """

    __slots__ = ()
    _kernel_fields: tuple = ()

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        for name in self._kernel_fields:
            state[name] = getattr(self, name)
        return state

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        for name in self._kernel_fields:
            setattr(self, name, state.pop(name, None))
        self.__dict__.update(state)

    def __reduce_ex__(self, protocol):
        return copyreg.__newobj__, (type(self),), self.__getstate__()

    def clone(self, new_params=None, include_attributes: bool = False):
        """river's ``clone``; with ``include_attributes=True``, a deep copy: the learnt
        state comes along, C fields included (river copies ``__dict__`` only, which
        would return an unfitted shell). The state was built for the current
        parameters, so ``new_params`` cannot go with ``include_attributes=True``.

        Examples
        --------
        >>> from streamcal import OnlinePlatt
        >>> cal = OnlinePlatt()
        >>> cal.learn_many([0.2, 0.8, 0.8], [0, 1, 1])
        >>> cal.clone(include_attributes=True).predict_one(0.8) == cal.predict_one(0.8)
        True
        >>> cal.clone().predict_one(0.8)  # a fresh clone has learnt nothing
        0.8

        """
        if not include_attributes:
            return super().clone(new_params)
        if new_params:
            raise ValueError(
                f"The 'new_params' argument of {type(self).__name__}.clone must be None or "
                "empty with include_attributes=True (the learnt state was built for the "
                f"current parameters). Got {format_value(new_params)} instead."
            )
        return copy.deepcopy(self)


def slot_names(cls) -> list[str]:
    """The attribute names of the slots of ``cls`` and its bases, private ones mangled
    as Python stores them, ``__dict__`` and ``__weakref__`` left out (the one home of
    that walk: pickling here, the replay's sharing walk, the monitors' fingerprint).

    Examples
    --------
    >>> from streamcal._keyed_store import KeyedStore
    >>> slot_names(KeyedStore)
    ['items', 'max_keys', 'n_evicted', 'owner']

    """
    names = []
    for klass in reversed(cls.__mro__):
        slots = klass.__dict__.get("__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            if slot in ("__dict__", "__weakref__"):
                continue
            if slot.startswith("__") and not slot.endswith("__"):  # name-mangled
                slot = f"_{klass.__name__.lstrip('_')}{slot}"
            names.append(slot)
    return names


class SlotsPickle:
    """Mixin for a class with ``__slots__``: ``__getstate__`` is a dict of the slots that
    are set, ``__setstate__`` sets them back, also from the ``(None, slots)`` pair that
    protocols 2 and later wrote before (old pickles keep loading).

    Examples
    --------
    >>> import pickle
    >>> from streamcal._keyed_store import KeyedStore
    >>> store = KeyedStore("Owner", max_keys=2)
    >>> store.add("a", [1])
    >>> twin = pickle.loads(pickle.dumps(store, protocol=0))
    >>> list(twin.items.items()), twin.max_keys, twin.owner
    ([('a', [1])], 2, 'Owner')

    """

    __slots__ = ()

    def __getstate__(self) -> dict:
        return {n: getattr(self, n) for n in slot_names(type(self)) if hasattr(self, n)}

    def __setstate__(self, state) -> None:
        if isinstance(state, tuple):  # (__dict__ or None, slots or None), protocols 2+
            merged = dict(state[0] or {})
            merged.update(state[1] or {})
            state = merged
        for name, value in state.items():
            object.__setattr__(self, name, value)
