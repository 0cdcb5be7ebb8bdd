"""Which calibrators of a replay share state.

Two calibrators share state when they are, or hold, the same mutable object: the same
calibrator under two names, one calibrator as another's base, a base held by two
wrappers, or a user's object holding either through any attribute, container, bound
method or ``functools.partial``. The replay runs such calibrators event by event, in
one loop where every one predicts an event before any learns it (the per-event
protocol: a prediction uses only the labels known before it), and never in two threads
at once; the others keep their batch passes (:mod:`streamcal.replay._engine`).

The walk is conservative: an object shared by two calibrators counts even if neither
changes it (that only costs the batch passes). Text, numbers, types, modules, enum
members, loggers, compiled patterns and read-only arrays are not state; a function is
walked through its closure; containers of more than ``LARGE`` items are taken as data
(their own identity counts, their items are not walked). Attributes (``__dict__``,
slots, and the fields that streamcal's compiled base classes expose, such as an
isotonic calibrator's stream) are read without the objects' own ``__getattr__``.
"""

from __future__ import annotations

import decimal
import enum
import functools
import logging
import re
import types

import numpy as np

from streamcal._kernel_pickle import slot_names

__all__ = ["sharing_names"]

#: Containers with more items than this are data: not walked into.
LARGE = 100_000

# values that are not state: immutable, or shared by design (types, modules, loggers)
_NOT_STATE = (
    str, bytes, int, float, complex, bool, type(None), range, slice, np.generic, np.dtype,
    type, types.ModuleType, types.MethodDescriptorType, types.WrapperDescriptorType,
    type(Ellipsis), type(NotImplemented), enum.Enum, re.Pattern, logging.Logger,
    decimal.Decimal,
)
# state only through what they hold (walked, never owned): immutable containers,
# functions (their closures), methods (their objects)
_THROUGH = (
    tuple, frozenset, types.FunctionType, types.MethodType, types.BuiltinFunctionType,
    functools.partial,
)


_MISSING = object()


def _attribute(obj, name: str):
    """``obj.name`` without the object's own ``__getattr__`` (which may answer anything
    or raise anything); ``_MISSING`` if there is none."""
    try:
        return object.__getattribute__(obj, name)
    except Exception:
        return _MISSING


_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class defined in Python


def _compiled_fields(obj) -> list:
    """The values of the fields that streamcal's compiled base classes of ``obj``'s
    class expose (``cdef public`` attributes and properties: their state lives in C,
    not in ``__dict__``, e.g. the stream of an isotonic calibrator)."""
    out = []
    for cls in type(obj).__mro__:
        if cls.__flags__ & _HEAPTYPE or not cls.__module__.startswith("streamcal."):
            continue
        for name, member in vars(cls).items():
            if isinstance(member, (types.GetSetDescriptorType, types.MemberDescriptorType)) and (
                not name.startswith("__")
            ):
                value = _attribute(obj, name)
                if value is not _MISSING:
                    out.append(value)
    return out


def _children(obj) -> list:
    """What ``obj`` holds: items, attributes (``__dict__`` and slots), a bound method's
    object, a partial's parts, a closure's cells."""
    if isinstance(obj, (list, tuple, set, frozenset)):
        return list(obj) if len(obj) <= LARGE else []
    if isinstance(obj, dict):
        return [*obj.keys(), *obj.values()] if len(obj) <= LARGE else []
    if isinstance(obj, (types.MethodType, types.BuiltinMethodType)):
        owner = getattr(obj, "__self__", None)
        return [] if isinstance(owner, types.ModuleType) else [owner]
    if isinstance(obj, types.FunctionType):
        out = []
        for cell in obj.__closure__ or ():
            try:
                out.append(cell.cell_contents)
            except ValueError:  # an empty cell
                pass
        return out
    if isinstance(obj, functools.partial):
        return [obj.func, *obj.args, *obj.keywords.values()]
    attributes = _attribute(obj, "__dict__")
    out = list(attributes.values()) if isinstance(attributes, dict) else []
    if type(obj).__flags__ & _HEAPTYPE:  # a Python class: also the C fields of its
        out.extend(_compiled_fields(obj))  # compiled bases (the calibrators' kernels)
    for slot in slot_names(type(obj)):
        value = _attribute(obj, slot)
        if value is not _MISSING:
            out.append(value)
    return out


def sharing_names(calibrators: dict) -> set:
    """The names of the calibrators that share state with another one (see the module
    docstring).

    Examples
    --------
    >>> from streamcal import OnlineIsotonic, TrackingCalibeater
    >>> iso = OnlineIsotonic()
    >>> sorted(sharing_names({"a": iso, "b": iso, "c": OnlineIsotonic()}))
    ['a', 'b']
    >>> sorted(sharing_names({"base": iso, "beater": TrackingCalibeater(base=iso)}))
    ['base', 'beater']
    """
    owner: dict[int, str] = {}
    shared: set = set()
    alive: list = []  # every object walked, so that no id is reused during the walk (a
    # compiled base's property may return a new object each time it is read)
    for name, cal in calibrators.items():
        visited: set = set()  # ids walked from this calibrator (cycles, shared paths)
        stack = [cal]
        while stack:
            obj = stack.pop()
            if isinstance(obj, _NOT_STATE) or id(obj) in visited or (
                isinstance(obj, np.ndarray) and not obj.flags.writeable
            ):
                continue
            visited.add(id(obj))
            alive.append(obj)
            if not isinstance(obj, _THROUGH):
                seen = owner.setdefault(id(obj), name)
                if seen != name:
                    shared.update((seen, name))
                    continue
            stack.extend(_children(obj))
    return shared
