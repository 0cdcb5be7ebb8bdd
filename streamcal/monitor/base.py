"""The monitor interface.

A *monitor* watches a stream of forecasts and their outcomes, one ``update(forecast,
label)`` at a time, and raises an alarm, like river's drift detectors: the
``drift_detected`` property is True right after the update that raised the alarm, and
the next update first resets the monitor so that it watches for the next drift. The
counters ``n_events`` and ``n_alarms`` survive those resets.

Monitors save and restore like calibrators: ``pickle``, ``clone()`` (a fresh copy with
the same parameters) and a JSON-safe ``to_dict()`` / ``from_dict()`` snapshot of the
whole state, which restores a monitor that continues exactly like the original.
"""

from __future__ import annotations

import abc
import inspect

from river import base as river_base

from streamcal import _validation as V
from streamcal.base import SNAPSHOT_FORMAT

__all__ = ["BaseMonitor"]

_REGISTRY: dict[str, type] = {}

# A parameter that is itself a monitor (the template of a multiclass monitor) is stored
# as its own full snapshot under this key.
_NESTED_KEY = "__monitor__"


class BaseMonitor(river_base.Base, abc.ABC):
    """Base class of the calibration monitors.

    Subclasses implement ``_reset`` (build the whole state, counters included),
    ``update``, ``_get_state`` and ``_set_state``, and keep ``_drift_detected``,
    ``_n_alarms`` and ``_n_events`` up to date.

    Examples
    --------
    Any concrete monitor, here :class:`streamcal.monitor.CalibrationMonitor`:

    >>> import json
    >>> from streamcal.monitor import CalibrationMonitor
    >>> from streamcal.monitor.base import BaseMonitor
    >>> monitor = CalibrationMonitor()
    >>> for score, label in [(0.2, 0), (0.9, 1), (0.4, 0)]:
    ...     monitor.update(score, label)
    >>> snapshot = json.loads(json.dumps(monitor.to_dict()))
    >>> BaseMonitor.from_dict(snapshot).e_value == monitor.e_value
    True

    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _REGISTRY[cls.__name__] = cls

    @abc.abstractmethod
    def _reset(self) -> None:
        """Build the whole state from scratch (called by the constructor)."""

    @abc.abstractmethod
    def update(self, forecast, label) -> None:
        """Watch one forecast and its outcome."""

    @abc.abstractmethod
    def _get_state(self) -> dict:
        """Return the whole state as JSON-safe data."""

    @abc.abstractmethod
    def _set_state(self, state: dict) -> None:
        """Restore the state written by ``_get_state``."""

    # ------------------------------------------------------------------ counters

    @property
    def drift_detected(self) -> bool:
        """Whether the last update raised an alarm."""
        return self._drift_detected

    @property
    def n_alarms(self) -> int:
        """Number of alarms raised so far."""
        return self._n_alarms

    @property
    def n_events(self) -> int:
        """Number of updates so far (across resets)."""
        return self._n_events

    # ------------------------------------------------------------------ snapshots

    def _param_values(self) -> dict:
        return {
            name: getattr(self, name)
            for name in inspect.signature(type(self).__init__).parameters
            if name != "self"
        }

    def to_dict(self) -> dict:
        """A JSON-serialisable snapshot of parameters and the whole state;
        ``from_dict`` restores a monitor that continues exactly like this one."""
        return {
            "class": type(self).__name__,
            "format": SNAPSHOT_FORMAT,
            "params": {
                name: _encode_param(v) for name, v in self._param_values().items()
            },
            "state": self._get_state(),
        }

    @classmethod
    def from_dict(cls, d: dict) -> BaseMonitor:
        """Rebuild a monitor from a snapshot written by :meth:`to_dict`.

        Called on :class:`BaseMonitor` itself, the class is looked up by the name in the
        snapshot; called on a subclass, the snapshot must be of that class.
        """
        if not isinstance(d, dict) or not {"class", "params", "state"} <= d.keys():
            raise ValueError(
                "The 'd' argument of from_dict must be a snapshot dict with keys "
                f"'class', 'params' and 'state'. Got {V.format_value(d)} instead."
            )
        if d.get("format", SNAPSHOT_FORMAT) != SNAPSHOT_FORMAT:
            raise ValueError(
                f"The snapshot format must be {SNAPSHOT_FORMAT}. Got {d.get('format')!r} instead."
            )
        klass = _REGISTRY.get(d["class"])
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
        obj = klass(**{name: _decode_param(v) for name, v in d["params"].items()})
        obj._set_state(d["state"])
        return obj


def _encode_param(value):
    if isinstance(value, BaseMonitor):
        return {_NESTED_KEY: value.to_dict()}
    if isinstance(value, tuple):
        return [_encode_param(v) for v in value]
    if isinstance(value, dict):
        return {k: _encode_param(v) for k, v in value.items()}
    return V.json_safe_scalar(value)


def _decode_param(value):
    if isinstance(value, dict):
        if set(value) == {_NESTED_KEY}:
            return BaseMonitor.from_dict(value[_NESTED_KEY])
        return {k: _decode_param(v) for k, v in value.items()}
    if isinstance(value, list):
        return tuple(_decode_param(v) for v in value)
    return value
