"""Which calibrators of a replay share state.

Two calibrators share state when they are, or hold, the same mutable object: the same
calibrator under two names, one calibrator as another's base, a base held by two
wrappers, or a user's object holding either through any attribute, container, bound
method or ``functools.partial``. The replay runs such calibrators event by event, in
one loop where every one predicts an event before any learns it (the per-event
protocol: a prediction uses only the labels known before it), and never in two threads
at once; the others keep their batch passes (:mod:`streamcal.replay._engine`).

The walk is conservative: an object shared by two calibrators counts even if neither
changes it (that only costs the batch passes). Text, numbers, types, modules, functions
and read-only arrays are not state; containers of more than ``LARGE`` items are taken as
data (their own identity counts, their items are not walked).
"""

from __future__ import annotations

import functools
import types

import numpy as np

__all__ = ["sharing_names"]

#: Containers with more items than this are data: not walked into.
LARGE = 1000

_NOT_STATE = (
    str, bytes, int, float, complex, bool, type(None), range, slice, np.generic, type,
    types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
    types.MethodDescriptorType, types.WrapperDescriptorType,
)


def _children(obj) -> list:
    """What ``obj`` holds (attributes, items, a bound method's object, a partial's
    parts)."""
    if isinstance(obj, (list, tuple, set, frozenset)):
        return list(obj) if len(obj) <= LARGE else []
    if isinstance(obj, dict):
        return [*obj.keys(), *obj.values()] if len(obj) <= LARGE else []
    if isinstance(obj, types.MethodType):
        return [obj.__self__]
    if isinstance(obj, functools.partial):
        return [obj.func, *obj.args, *obj.keywords.values()]
    out = list(getattr(obj, "__dict__", {}).values())
    for cls in type(obj).__mro__:
        for slot in cls.__dict__.get("__slots__", ()):
            if slot not in ("__dict__", "__weakref__") and hasattr(obj, slot):
                out.append(getattr(obj, slot))
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
        stack = [cal]
        while stack:
            obj = stack.pop()
            if isinstance(obj, _NOT_STATE) or (
                isinstance(obj, np.ndarray) and not obj.flags.writeable
            ):
                continue
            if not isinstance(obj, tuple):  # a tuple is state only through its items
                seen = owner.get(id(obj))
                if seen == name:
                    continue  # walked already from this calibrator (a cycle, a second path)
                if seen is not None:
                    shared.update((seen, name))
                    continue
                owner[id(obj)] = name
            stack.extend(_children(obj))
    return shared
