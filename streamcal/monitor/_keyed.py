"""One calibration monitor per key, whose alarms name the key."""

from __future__ import annotations

import types

from streamcal import _validation as V
from streamcal._keyed_store import KeyedStore, Spawner, check_max_keys
from streamcal.monitor._calibration import CalibrationMonitor, MulticlassCalibrationMonitor
from streamcal.monitor.base import BaseMonitor

__all__ = ["KeyedCalibrationMonitor"]

_NAME = "KeyedCalibrationMonitor"


class KeyedCalibrationMonitor(BaseMonitor):
    """Watch each segment's calibration with its own monitor; an alarm names the key.

    ``update(key, forecast, label)`` updates the monitor of ``key`` (a fresh copy of
    ``monitor`` the first time the key is seen); then :attr:`drift_detected` is True
    if that monitor raised an alarm, and :attr:`drift_key` names the key. As with every
    monitor, the alarm lasts one update: the key's monitor restarts on its next event
    (its own reset), and the next update of any key clears :attr:`drift_detected`.

    Parameters
    ----------
    monitor
        The template, a :class:`CalibrationMonitor` (binary forecasts) or a
        :class:`MulticlassCalibrationMonitor` (dicts of class probabilities), or None
        for ``CalibrationMonitor()``. It is never updated.
    max_keys
        At most this many keys hold a monitor (an int >= 1), or None for no bound; the
        least recently updated key is evicted first (counted in :attr:`n_evicted`) and
        starts again from a fresh monitor if it comes back.

    Attributes
    ----------
    drift_detected
        Whether the last update raised an alarm.
    drift_key
        The key of the last update's alarm (None when it raised none).
    monitors
        A read-only view key -> monitor, least recently updated first.
    n_monitors
        The number of monitors created so far (keys, plus keys that came back after an
        eviction): the count the union bound is taken over.
    false_alarm_bound
        ``min(1, n_monitors * alpha)``, the bound on the probability of any false alarm
        so far (None for the river detectors, which have no guarantee).

    Notes
    -----
    **The guarantee, per key.** With the e-process (``method="eprocess"``, the
    default), each key's monitor is the anytime-valid test of
    :class:`CalibrationMonitor`, run on that key's events only: if the key's forecasts
    are calibrated given the past, the probability that its monitor *ever* raises an
    alarm (before its first reset) is at most the template's ``alpha``, however long
    the stream and whatever the other keys do. After an alarm (its reset) or an
    eviction, the key's next monitor is a new test with the same guarantee.

    **For all keys together: a union bound.** If the forecasts of every key are
    calibrated, the probability that at least one monitor raises a false alarm is at
    most the sum of their levels, ``n_monitors * alpha`` (Bonferroni), reported by
    :attr:`false_alarm_bound`. To hold all ``K`` keys of a stream together at level
    ``a``, give the template ``alpha = a / K``. The union bound, rather than one
    e-value averaged over the keys (also valid, at the same ``1 / K`` price of
    evidence), keeps the alarm with the key whose forecasts went wrong and lets each
    key restart on its own; it needs no assumption on how the keys' streams depend
    on each other. The river detectors (``method="adwin"`` or ``"page-hinkley"``) have
    no guarantee, per key or together.

    Bad input (a bad key, forecast or label) raises and changes nothing, also right
    after an alarm.

    Cost per event: one update of the key's monitor plus O(1); a new key costs one
    constructor call of the template's class.

    Examples
    --------
    Three airports' rain forecasts; LGA's turn over-confident after 300 events:

    >>> import random
    >>> from streamcal.monitor import CalibrationMonitor, KeyedCalibrationMonitor
    >>> rng = random.Random(3)
    >>> monitor = KeyedCalibrationMonitor(CalibrationMonitor(alpha=0.01 / 3))
    >>> for t in range(3000):
    ...     key = ("EWR", "JFK", "LGA")[t % 3]
    ...     p = rng.random()
    ...     truth = 0.5 + (p - 0.5) / 3 if key == "LGA" and t >= 900 else p
    ...     monitor.update(key, p, rng.random() < truth)
    ...     if monitor.drift_detected:
    ...         print(f"alarm for {monitor.drift_key} at event {t}")
    ...         break
    alarm for LGA at event 1859
    >>> round(monitor.false_alarm_bound, 4)
    0.01

    """

    def __init__(self, monitor: CalibrationMonitor | MulticlassCalibrationMonitor | None = None, max_keys: int | None = None):
        V.check_param(
            _NAME,
            "monitor",
            monitor,
            monitor is None or isinstance(monitor, (CalibrationMonitor, MulticlassCalibrationMonitor)),
            "a CalibrationMonitor, a MulticlassCalibrationMonitor or None",
        )
        check_max_keys(_NAME, max_keys)
        self.monitor = monitor
        self.max_keys = max_keys
        self._reset()

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"monitor": CalibrationMonitor(alpha=0.2, lam=0.5, half_life=None), "max_keys": 2}
        yield {
            "monitor": MulticlassCalibrationMonitor(CalibrationMonitor(alpha=0.2), classes=(0, 1, 2)),
            "max_keys": 3,
        }
        yield {"monitor": CalibrationMonitor(method="page-hinkley", detector_params={"threshold": 5.0})}

    def _template(self):
        return self.monitor if self.monitor is not None else CalibrationMonitor()

    def __setstate__(self, state: dict) -> None:
        KeyedStore.adopt(state, _NAME, "_monitors")  # pickles written before the store
        self.__dict__.update(state)

    def _reset(self) -> None:
        self._spawn = Spawner(self._template())
        self._store = KeyedStore(_NAME, self.max_keys)
        self._drift_detected = False
        self._drift_key = None
        self._n_events = 0
        self._n_alarms = 0
        self._n_monitors = 0

    # ------------------------------------------------------------------ views

    @property
    def _multiclass(self) -> bool:
        return isinstance(self.monitor, MulticlassCalibrationMonitor)

    @property
    def _alpha(self) -> float | None:
        t = self._template()
        inner = t.monitor if isinstance(t, MulticlassCalibrationMonitor) else t
        if inner is None:
            inner = CalibrationMonitor()
        return inner.alpha if inner.method == "eprocess" else None

    @property
    def drift_key(self):
        """The key whose monitor alarmed at the last update (None if none did)."""
        return self._drift_key

    @property
    def monitors(self) -> types.MappingProxyType:
        """Read-only view key -> monitor, least recently updated first."""
        return types.MappingProxyType(self._store.items)

    @property
    def n_monitors(self) -> int:
        """Monitors created so far (the union bound's count)."""
        return self._n_monitors

    @property
    def n_evicted(self) -> int:
        """Keys evicted so far (``max_keys``)."""
        return self._store.n_evicted

    @property
    def false_alarm_bound(self) -> float | None:
        """``min(1, n_monitors * alpha)`` (None for the river detectors)."""
        alpha = self._alpha
        return None if alpha is None else min(1.0, self._n_monitors * alpha)

    @property
    def e_value(self) -> float | None:
        """The e-value of the last updated key's monitor (None before any update or
        for the river detectors)."""
        m = self._store.last()
        return None if m is None else m.e_value

    @property
    def log_e_value(self) -> float | None:
        """Natural log of :attr:`e_value`."""
        m = self._store.last()
        return None if m is None else m.log_e_value

    # ------------------------------------------------------------------ updates

    def update(self, key, forecast, label) -> None:
        """Watch one event of ``key``; then read :attr:`drift_detected` and
        :attr:`drift_key`.

        Parameters
        ----------
        key
            The segment: a str, int, bool or finite float.
        forecast
            The score (a dict class -> probability for a multiclass template).
        label
            The outcome.
        """
        key = V.check_key(key, _NAME, "update")
        store = self._store
        m = store.items.get(key)
        if m is None:
            m = self._spawn()
            m.update(forecast, label)  # validates first: nothing stored on bad input
            store.add(key, m)
            self._n_monitors += 1
        else:
            m.update(forecast, label)
            store.items.move_to_end(key)
        self._n_events += 1
        alarm = m.drift_detected
        self._drift_detected = alarm
        self._drift_key = key if alarm else None
        if alarm:
            self._n_alarms += 1

    # ------------------------------------------------------------------ snapshots

    def _get_state(self) -> dict:
        return {
            "drift_detected": self._drift_detected,
            "drift_key": self._drift_key,
            "n_alarms": self._n_alarms,
            "n_events": self._n_events,
            "n_monitors": self._n_monitors,
            "n_evicted": self._store.n_evicted,
            "keys": self._store.entries(),
        }

    def _set_state(self, state: dict) -> None:
        counters = [state[c] for c in ("n_alarms", "n_events", "n_monitors", "n_evicted")]
        drift_detected, drift_key, entries = state["drift_detected"], state["drift_key"], state["keys"]
        if not (
            self._counters_valid(state)
            and all(V.is_integer(c) and c >= 0 for c in counters[2:])
            and isinstance(entries, list)
            and (self.max_keys is None or len(entries) <= self.max_keys)
            and len(entries) <= counters[2]
            and (drift_key is None) == (not drift_detected)
        ):
            raise ValueError(
                f"A {_NAME} snapshot must hold a bool drift_detected (with a drift_key "
                "exactly when it is True), int counters 0 <= n_alarms <= n_events, "
                "n_monitors, n_evicted, and a list of at most max_keys (and n_monitors) "
                f"[key, monitor] pairs. Got {V.format_value(state)} instead."
            )
        template = self._template()

        def restore(key, d):
            return self._store.check_like(BaseMonitor.from_dict(d), template, f"monitor of key {key!r}")

        monitors = self._store.read_entries(entries, restore, "monitor")
        if drift_key is not None:
            drift_key = V.check_key(drift_key, _NAME, "from_dict")
            last = next(reversed(monitors), None)
            if not monitors or last != drift_key or not monitors[last].drift_detected:
                raise ValueError(
                    f"The drift_key of a {_NAME} snapshot must be the last updated key, "
                    f"whose monitor alarmed. Got {drift_key!r} instead."
                )
        # the keyed flag is the last updated key's (which no eviction can remove); every
        # monitor created is held or evicted; the held monitors' events and alarms
        # are some of the keyed monitor's
        n_alarms, n_events, n_monitors, n_evicted = counters
        last = monitors[next(reversed(monitors))] if monitors else None
        broken = [
            (last is not None and last.drift_detected != drift_detected, "drift_detected",
             "the flag of the last updated key's monitor", drift_detected),
            (n_monitors != len(monitors) + n_evicted, "n_monitors",
             f"the number of keys held plus n_evicted ({len(monitors)} + {n_evicted})", n_monitors),
            ((n_events == 0) != (not monitors) or sum(m.n_events for m in monitors.values()) > n_events,
             "n_events", "0 exactly when no key is held, and at least the sum of the held monitors' n_events", n_events),
            (sum(m.n_alarms for m in monitors.values()) > n_alarms, "n_alarms",
             "at least the sum of the held monitors' n_alarms", n_alarms),
        ]
        for bad, entry, domain, value in broken:
            if bad:
                raise V.snapshot_error(_NAME, f"state[{entry!r}]", domain, value)
        self._store.items = monitors
        self._drift_detected = drift_detected
        self._drift_key = drift_key
        self._n_alarms, self._n_events, self._n_monitors, self._store.n_evicted = (int(c) for c in counters)

