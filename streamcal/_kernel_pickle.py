"""Pickling of the Python shells over compiled base classes (private).

``OnlinePlatt`` / ``OnlineBeta`` (over ``LogisticKernel``) and ``OnlineIsotonic`` /
``VennAbers`` (over ``IsotonicKernel``) keep part of their state in the C fields of
their compiled base class; their ``__getstate__`` gathers it with ``__dict__`` and
their ``__setstate__`` puts it back. The default reduction of pickle protocols 0 and 1
cannot rebuild an object whose class has such a base ("cannot pickle 'LogisticKernel'
object"); :class:`KernelShellPickle` gives every protocol the reduction of protocol 2:
a new object of the class, then ``__setstate__``. (Pickles of ``OnlineIsotonic`` and
``VennAbers`` written at protocols 0 and 1 before they had a compiled base rebuild the
object with ``object.__new__``, which such a class refuses: those do not load. Pickles
at protocol 2 or later, the default, do.)
"""

from __future__ import annotations

import copyreg

__all__ = ["KernelShellPickle"]


class KernelShellPickle:
    """Mixin: ``__reduce_ex__`` as ``copyreg.__newobj__`` of the class, then the state
    of ``__getstate__``, whatever the protocol (also what ``copy`` uses).

    Examples
    --------
    >>> import pickle
    >>> from streamcal import OnlinePlatt
    >>> cal = OnlinePlatt()
    >>> cal.learn_one(0.8, 1)
    >>> copy = pickle.loads(pickle.dumps(cal, protocol=0))
    >>> copy.predict_one(0.8) == cal.predict_one(0.8)
    True

    """

    __slots__ = ()

    def __reduce_ex__(self, protocol):
        return copyreg.__newobj__, (type(self),), self.__getstate__()
