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
(their own identity counts, their items are not walked). Attributes are read without
the objects' own ``__getattr__``.
"""

from __future__ import annotations

import decimal
import enum
import functools
import logging
import re
import types

import numpy as np

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
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            if slot in ("__dict__", "__weakref__"):
                continue
            if slot.startswith("__") and not slot.endswith("__"):  # name-mangled
                slot = f"_{cls.__name__.lstrip('_')}{slot}"
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
            if not isinstance(obj, _THROUGH):
                seen = owner.setdefault(id(obj), name)
                if seen != name:
                    shared.update((seen, name))
                    continue
            stack.extend(_children(obj))
    return shared
