"""The snapshot machinery shared by calibrators, metrics and monitors (private).

The base class of each family (:class:`streamcal.base.BinaryCalibrator`,
:class:`streamcal.metrics.base.StreamingMetric`, :class:`streamcal.monitor.base.BaseMonitor`)
derives from :class:`Snapshot` and gives it a class registry of its own, which every
subclass joins when it is defined, so that ``Base.from_dict`` finds a subclass by the
name stored in the snapshot. A snapshot is::

    {"class": <class name>, "format": SNAPSHOT_FORMAT,
     "params": {<constructor argument>: <encoded value>}, "state": <_get_state()>}

Parameter values are encoded by :func:`encode_param`: numpy scalars become their Python
twins, tuples lists, dicts are encoded value by value, and an object of a family that
nests (a calibrator as a calibeater's ``base``, a monitor as a multiclass monitor's
template) becomes ``{<family key>: <its own full snapshot>}``, so that it comes back
with its learnt state. :func:`decode_param` undoes each step.
"""

from __future__ import annotations

import abc
import importlib
import inspect
import typing

from streamcal import _validation as V

__all__ = [
    "READABLE_FORMATS",
    "SNAPSHOT_FORMAT",
    "Snapshot",
    "decode_param",
    "encode_param",
    "from_dict",
    "nest",
    "to_dict",
]

#: Version tag written into every snapshot. Format 2 (from format 1): ``OnlineBeta``'s
#: ``"ab"`` and ``"am"`` follow betacal's names (format 1 had them swapped) and ``ROCAUC``
#: keeps its weight sums as exact integers (format 1: floats). A class
#: whose snapshot changed meaning translates an older one in its
#: ``_upgrade_snapshot``; every older format listed in :data:`READABLE_FORMATS` keeps
#: loading.
SNAPSHOT_FORMAT = 2

#: The formats :func:`from_dict` reads.
READABLE_FORMATS = (1, 2)

# family key -> the family's base class, for parameters that are themselves snapshots
_NESTED: dict[str, type] = {}


def nest(key: str, base: type) -> None:
    """Let a parameter that is an instance of ``base`` travel as its own snapshot,
    under ``key``."""
    _NESTED[key] = base


def encode_param(value):
    """A constructor argument as JSON-safe data (see the module docstring)."""
    for key, base in _NESTED.items():
        if isinstance(value, base):
            return {key: value.to_dict()}
    if isinstance(value, tuple):
        return [encode_param(v) for v in value]
    if isinstance(value, dict):
        return {k: encode_param(v) for k, v in value.items()}
    return V.json_safe_scalar(value)


def decode_param(value):
    """The constructor argument :func:`encode_param` wrote."""
    if isinstance(value, dict):
        if len(value) == 1:
            (key,) = value
            base = _NESTED.get(key)
            if base is not None:
                return base.from_dict(value[key])
        return {k: decode_param(v) for k, v in value.items()}
    if isinstance(value, list):
        return tuple(decode_param(v) for v in value)
    return value


def to_dict(obj) -> dict:
    """The snapshot of ``obj``: its constructor arguments, as stored under their own
    names, and its ``_get_state()``."""
    return {
        "class": type(obj).__name__,
        "format": SNAPSHOT_FORMAT,
        "params": {
            name: encode_param(getattr(obj, name))
            for name in inspect.signature(type(obj).__init__).parameters
            if name != "self"
        },
        "state": obj._get_state(),
    }


def from_dict(cls: type, d, registry: dict):
    """Rebuild an object from a snapshot written by :func:`to_dict`.

    The class is looked up by name in ``registry`` and must be a concrete subclass of
    ``cls`` (the class ``from_dict`` was called on); the ``params`` and ``state``
    entries must be dicts. Anything else raises before any object is built.
    """
    if not isinstance(d, dict) or not {"class", "params", "state"} <= d.keys():
        raise ValueError(
            "The 'd' argument of from_dict must be a snapshot dict with keys "
            f"'class', 'params' and 'state'. Got {V.format_value(d)} instead."
        )
    fmt = d.get("format", SNAPSHOT_FORMAT)
    if type(fmt) is not int or fmt not in READABLE_FORMATS:
        raise ValueError(
            f"The snapshot format must be an int among {set(READABLE_FORMATS)}. "
            f"Got {d.get('format')!r} instead."
        )
    klass = registry.get(d["class"])
    if klass is None and isinstance(d["class"], str):
        klass = _import_public(cls, d["class"], registry)
    if klass is None or not issubclass(klass, cls) or inspect.isabstract(klass):
        raise ValueError(
            f"The 'class' entry of the snapshot must name a subclass of {cls.__name__}. "
            f"Got {d['class']!r} instead."
        )
    if not isinstance(d["params"], dict) or not isinstance(d["state"], dict):
        raise TypeError(
            "The 'params' and 'state' entries of the snapshot must be dicts. "
            f"Got {V.format_value(d['params'])} and {V.format_value(d['state'])} instead."
        )
    params, state = d["params"], d["state"]
    if fmt != SNAPSHOT_FORMAT:
        params, state = klass._upgrade_snapshot(params, state, fmt)
    obj = klass(**{name: decode_param(v) for name, v in params.items()})
    obj._set_state(state)
    return obj


def _import_public(cls: type, name: str, registry: dict):
    """The class ``name`` of the public package of ``cls``'s family, imported (and so
    registered) now if it was not yet: the packages import their classes on first use,
    so in a fresh process a snapshot may name a class whose module nobody imported."""
    name_of_package = getattr(cls, "_package", None)
    if name_of_package is None:  # a family whose classes are all imported with it
        return registry.get(name)
    package = importlib.import_module(name_of_package)
    if name in getattr(package, "__all__", ()):
        getattr(package, name)
    return registry.get(name)


class Snapshot(abc.ABC):
    """Mixin of the families' base classes: ``to_dict`` / ``from_dict`` and the class
    registry.

    A family's base class sets ``_registry`` (a dict of its own) in its body; every
    class derived from it is registered under its name when it is defined. Subclasses
    implement ``_get_state`` and ``_set_state``.
    """

    _registry: typing.ClassVar[dict[str, type]]
    #: The public package that exports the family's classes (imported on first use).
    _package: typing.ClassVar[str]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "_registry" not in cls.__dict__:  # not a family's base class itself
            cls._registry[cls.__name__] = cls

    @classmethod
    def _upgrade_snapshot(cls, params: dict, state: dict, fmt: int):
        """The ``(params, state)`` of a snapshot of the older format ``fmt``, as the
        current format writes them (called by ``from_dict`` before the object is
        built). By default they are unchanged: override where the meaning changed."""
        return params, state

    @abc.abstractmethod
    def _get_state(self) -> dict:
        """Return the whole (learnt) state as JSON-safe data."""

    @abc.abstractmethod
    def _set_state(self, state: dict) -> None:
        """Restore the state written by ``_get_state``."""

    def to_dict(self) -> dict:
        """Return a JSON-serialisable snapshot of the parameters and the whole state.

        ``type(self).from_dict(self.to_dict())`` (or ``from_dict`` on the family's base
        class) restores an object that continues exactly like this one: a calibrator
        predicts and learns, a metric reports and updates, a monitor watches as this one
        would.
        """
        return to_dict(self)

    @classmethod
    def from_dict(cls, d: dict):
        """Rebuild an object from a snapshot written by :meth:`to_dict`.

        Called on the family's base class, the class is looked up by the name stored
        in the snapshot; called on a subclass, the snapshot must be of that class.
        """
        return from_dict(cls, d, cls._registry)
