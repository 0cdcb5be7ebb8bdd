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
import typing

from river import base as river_base

from streamcal import _snapshot
from streamcal import _validation as V

__all__ = ["BaseMonitor"]


class BaseMonitor(_snapshot.Snapshot, river_base.Base):
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

    _registry: typing.ClassVar[dict[str, type]] = {}
    _package = "streamcal.monitor"

    def __reduce_ex__(self, protocol):
        # river's ADWIN holds a compiled helper that pickle protocols 0 and 1 cannot
        # rebuild ("cannot pickle 'AdaptiveWindowing' object"): at those protocols a
        # monitor travels as its snapshot, which restores the whole state (the check
        # suites' "dict" round trip); protocols 2 and later pickle the object itself
        if protocol < 2:
            return _from_snapshot, (type(self), self.to_dict())
        return super().__reduce_ex__(protocol)

    @abc.abstractmethod
    def _reset(self) -> None:
        """Build the whole state from scratch (called by the constructor)."""

    @abc.abstractmethod
    def update(self, forecast, label) -> None:
        """Watch one forecast and its outcome."""

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

    @staticmethod
    def _counters_valid(state: dict) -> bool:
        """Whether a snapshot's counters, which every monitor's holds, are a bool
        ``drift_detected`` and two ints ``0 <= n_alarms <= n_events``, with
        ``n_alarms >= 1`` when ``drift_detected`` (the alarm it reports is counted)."""
        drift_detected, n_alarms, n_events = (
            state["drift_detected"],
            state["n_alarms"],
            state["n_events"],
        )
        return (
            isinstance(drift_detected, bool)
            and V.is_integer(n_alarms)
            and V.is_integer(n_events)
            and 0 <= n_alarms <= n_events
            and (n_alarms >= 1 or not drift_detected)
        )

    def _set_counters(self, state: dict) -> None:
        """Restore the counters of a snapshot that passed :meth:`_counters_valid`."""
        self._drift_detected = state["drift_detected"]
        self._n_alarms = int(state["n_alarms"])
        self._n_events = int(state["n_events"])


def _from_snapshot(cls, snapshot: dict):
    """A monitor pickled at protocol 0 or 1 (``BaseMonitor.__reduce_ex__``)."""
    return cls.from_dict(snapshot)


# A parameter that is itself a monitor (the template of a multiclass monitor) is stored
# as its own full snapshot under this key.
_snapshot.nest("__monitor__", BaseMonitor)
