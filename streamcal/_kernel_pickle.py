"""Pickling of the Python shells over compiled base classes (private).

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
at protocol 2 or later, the default, do.)
"""

from __future__ import annotations

import copyreg

__all__ = ["KernelShellPickle"]


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
