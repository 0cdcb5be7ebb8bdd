"""Checks that every calibration monitor must pass.

:func:`yield_monitor_checks` yields the checks that apply to a monitor (each a function
of a *fresh* monitor, which it never mutates: it works on clones) and
:func:`check_monitor` runs them all. The test-suite parametrises every monitor exported
by :mod:`streamcal.monitor`, with each of its ``_unit_test_params()``, against every
check. A failed check raises AssertionError saying what broke.

Streams come from a local numpy Generator (:func:`yield_monitor_events`): blocks of 100
events, calibrated and miscalibrated in turn, so that change detectors see changes.
Binary monitors get scores rounded to two decimals, a few exactly 0 or 1 with agreeing
labels, and labels drawn with probability ``score`` or, in the miscalibrated blocks,
``score ** 2`` (an over-confident forecaster); multiclass monitors (class attribute
``_multiclass = True``) get dicts over their classes (or ``(0, 1, 2)``), some with a
class left out, equal to the true probabilities or, in the miscalibrated blocks, sharper
than them, and labels drawn from the true probabilities of the classes present. Every
monitor of the test-suite raises several alarms within a few hundred events.

The semantics the checks hold every monitor to:

- ``update`` returns None; a fresh monitor has ``drift_detected`` False, no events, no
  alarms, and an e-value of 1 (log 0), or None for monitors without one;
- ``drift_detected`` is True exactly on the updates that raised an alarm and
  ``n_alarms`` counts them; an e-process alarms exactly when its e-value reaches
  ``1 / alpha``; the update after an alarm starts from a fresh state: from there on
  the monitor behaves exactly like a fresh clone fed the same events (counters aside);
- ``clone()`` is fresh and independent; pickle and ``to_dict()`` / ``from_dict()``
  (JSON-safe, stable, no NaN or infinity) restore the whole state, also right at an
  alarm, and the restored monitor continues exactly like the original;
- bad input raises a ValueError or TypeError naming the argument, the expected domain
  ("must be") and the value ("Got"), and leaves the state byte-for-byte unchanged,
  also right after an alarm (the pending reset must not happen);
- malformed snapshots are rejected by ``from_dict``;
- with a bounded recalibrator (``resolution`` or ``window_size``) or a Page-Hinkley
  detector, the state stops growing with the stream.

Examples
--------
>>> from streamcal.monitor import CalibrationMonitor
>>> from streamcal.checks.monitors import check_monitor, yield_monitor_checks
>>> [check.__name__ for check in yield_monitor_checks(CalibrationMonitor())][:3]
['check_docstring_has_example', 'check_cold_state', 'check_alarm_semantics']
>>> check_monitor(CalibrationMonitor(resolution=0.05))
"""

from __future__ import annotations

import array
import collections
import inspect
import json
import math
import typing

import numpy as np

from streamcal._kernel_pickle import slot_names
from streamcal.checks import _common
from streamcal.checks._common import (
    BAD_LABELS,  # bad labels for binary monitors
    BAD_SCORES,  # bad scores for binary monitors
    check_docstring_has_example,
)

__all__ = [
    "BAD_LABELS",
    "BAD_MULTICLASS_LABELS",
    "BAD_MULTICLASS_PROBAS",
    "BAD_SCORES",
    "check_alarm_semantics",
    "check_bad_input_leaves_state_unchanged",
    "check_bounded_memory",
    "check_clone_is_independent",
    "check_cold_state",
    "check_dict_roundtrip",
    "check_docstring_has_example",
    "check_corrupted_snapshot_rejected",
    "check_malformed_snapshot_rejected",
    "check_monitor",
    "check_pickle_roundtrip",
    "yield_monitor_checks",
    "yield_monitor_events",
]

#: Bad forecasts for multiclass monitors (over the classes 0, 1, 2).
BAD_MULTICLASS_PROBAS = [
    {0: float("nan"), 1: 0.5, 2: 0.5},
    {0: 1.5, 1: -0.5},
    {0: 0.5, 1: 0.3},
    {0: "0.5", 1: 0.5},
    0.5,
    None,
    {},
]
#: Bad labels for multiclass monitors.
BAD_MULTICLASS_LABELS = [[1], {0: 1}, float("nan")]


#: Length of the calibrated and miscalibrated blocks of :func:`yield_monitor_events`.
_BLOCK = 100


def _is_multiclass(monitor) -> bool:
    return bool(getattr(monitor, "_multiclass", False))


def _classes(monitor) -> tuple:
    return getattr(monitor, "classes", None) or (0, 1, 2)


def yield_monitor_events(
    monitor, n: int = 300, seed: int = 0, calibrated: bool = False
) -> list:
    """A stream of ``(forecast, label)`` pairs suited to ``monitor``: blocks of 100
    events, calibrated and miscalibrated in turn (see the module docstring), or, with
    ``calibrated``, calibrated throughout (distinct uniform scores for binary monitors).

    Examples
    --------
    >>> from streamcal.monitor import CalibrationMonitor
    >>> events = yield_monitor_events(CalibrationMonitor(), 5, seed=1)
    >>> len(events), all(0.0 <= s <= 1.0 and y in (0, 1) for s, y in events)
    (5, True)

    """
    rng = np.random.default_rng(seed)
    if not _is_multiclass(monitor):
        if calibrated:
            s = rng.random(n)
            return list(zip(s.tolist(), (rng.random(n) < s).astype(int).tolist()))
        s = _common.tied_scores(rng, n)
        bad = (np.arange(n) // _BLOCK) % 2 == 1
        truth = np.where(bad, s**4, s)  # over-confident in every other block
        y = (rng.random(n) < truth).astype(int)
        return list(zip(s.tolist(), y.tolist()))
    classes = list(_classes(monitor))
    k = len(classes)
    events = []
    for t in range(n):
        truth = rng.dirichlet(np.ones(k))
        sharp = not calibrated and (t // _BLOCK) % 2 == 1
        forecast = truth**4 / (truth**4).sum() if sharp else truth  # over-confident
        keep = np.ones(k, bool)
        if rng.random() < 0.2:
            keep[int(np.argmin(forecast))] = False  # a class left out: probability 0
        f = forecast * keep
        f = f / f.sum()
        t = truth * keep
        label = classes[int(rng.choice(k, p=t / t.sum()))]
        proba = {
            c: float(v)
            for c, v, kept in zip(classes, f.tolist(), keep.tolist())
            if kept
        }
        events.append((proba, label))
    return events


def _feed(monitor, events) -> list:
    """Update with every event; the list of ``drift_detected`` after each."""
    flags = []
    for forecast, label in events:
        monitor.update(forecast, label)
        flags.append(monitor.drift_detected)
    return flags


def _canonical(x, depth: int = 0):
    """A plain, identity-free description of ``x`` and everything it holds: objects by
    class name and attributes (``__dict__`` and ``__slots__``) or, when their class
    pickles a reduced state (a custom ``__getstate__``, as river's Rust ADWIN and the
    PAV store have), by that state; containers element by element, floats by their hex
    form, bound methods by name. Unlike a pickle, its ``repr`` does not depend on which
    equal strings or numbers happen to be one object."""
    assert depth < 60, "state nested too deeply"
    d = depth + 1
    if x is None or isinstance(x, (bool, int, str, bytes)):
        return x
    if isinstance(x, float):
        return ("float", x.hex())
    if isinstance(x, np.generic):
        return ("numpy", type(x).__name__, _canonical(x.item(), d))
    if isinstance(x, np.ndarray):
        return (
            "ndarray",
            str(x.dtype),
            x.shape,
            [_canonical(v, d) for v in x.ravel().tolist()],
        )
    if isinstance(x, array.array):
        return ("array", x.typecode, [_canonical(v, d) for v in x.tolist()])
    if isinstance(x, (list, tuple, collections.deque)):
        return (type(x).__name__, [_canonical(v, d) for v in x])
    if isinstance(x, (set, frozenset)):
        return (type(x).__name__, sorted(repr(_canonical(v, d)) for v in x))
    if isinstance(x, dict):
        return (
            "dict",
            sorted((repr(_canonical(k, d)), _canonical(v, d)) for k, v in x.items()),
        )
    if inspect.ismethod(x):
        return ("method", type(x.__self__).__name__, x.__func__.__name__)
    if inspect.isclass(x) or inspect.isfunction(x) or inspect.isbuiltin(x):
        return ("ref", getattr(x, "__qualname__", repr(x)))
    getstate = getattr(type(x), "__getstate__", None)
    if getstate is not None and getstate is not getattr(object, "__getstate__", None):
        # the class pickles a reduced state (derived bounds dropped, or an extension
        # object's bytes): that state is what must survive a round trip
        return ("state", type(x).__qualname__, _canonical(x.__getstate__(), d))
    attrs = {}
    if hasattr(x, "__dict__"):
        attrs.update(vars(x))
    for slot in slot_names(type(x)):
        if hasattr(x, slot):
            attrs[slot] = getattr(x, slot)
    return (
        "object",
        type(x).__qualname__,
        sorted((k, _canonical(v, d)) for k, v in attrs.items()),
    )


def _fingerprint(monitor) -> bytes:
    """Bytes of the whole internal state (see :func:`_canonical`): catches hidden state
    that a snapshot forgets, or that a failed update touched."""
    return repr(_canonical(monitor)).encode()


def _trace(monitor, events) -> list:
    """What an observer sees on each event: the alarm flag and the e-value."""
    out = []
    for forecast, label in events:
        monitor.update(forecast, label)
        out.append(
            (
                monitor.drift_detected,
                monitor.log_e_value,
                monitor.n_alarms,
                monitor.n_events,
            )
        )
    return out


def _first_alarm(monitor, events) -> int:
    """Index of the first alarm of a clone of ``monitor`` on ``events``."""
    flags = _feed(monitor.clone(), events)
    assert any(flags), f"{monitor!r} raised no alarm on a strongly miscalibrated stream"
    return flags.index(True)


def _further(monitor, seed: int = 5) -> list:
    """What an observer sees on further events (:func:`_trace`)."""
    return _trace(monitor, yield_monitor_events(monitor, 150, seed=seed))


def _observed(monitor) -> list:
    return [monitor.drift_detected, monitor.log_e_value, monitor.n_alarms, monitor.n_events]


def _round_trip(monitor, how, states) -> None:
    from streamcal.monitor.base import BaseMonitor

    _common.check_round_trip(
        how, states, _observed, _further, BaseMonitor, monitor.clone(), _fingerprint
    )


def check_cold_state(monitor) -> None:
    """``update`` returns None; a fresh monitor is quiet, counts nothing, and reports an
    e-value of 1 (log 0) or None for both."""
    m = monitor.clone()
    assert m.drift_detected is False and m.n_alarms == 0 and m.n_events == 0, (
        "a fresh monitor is not blank"
    )
    e, le = m.e_value, m.log_e_value
    assert (e, le) in ((1.0, 0.0), (None, None)), (
        f"fresh e-value {e!r} / log {le!r}: must be 1.0 / 0.0 or None / None"
    )
    forecast, label = yield_monitor_events(m, 1, seed=0)[0]
    assert m.update(forecast, label) is None, "update must return None"
    assert m.n_events == 1
    assert isinstance(m.drift_detected, bool)


def check_alarm_semantics(monitor) -> None:
    """``drift_detected`` marks exactly the alarms, ``n_alarms`` counts them, an
    e-process alarms exactly at ``e >= 1 / alpha``, and after an alarm the monitor
    continues exactly like a fresh clone fed the same events.

    The monitor must be sensitive enough to alarm at least twice in the 400 events of
    :func:`yield_monitor_events` (river's ADWIN with its default ``delta`` is not)."""
    events = yield_monitor_events(monitor, 400, seed=11)
    m = monitor.clone()
    trace = _trace(m, events)
    alarms = [i for i, (flag, _, _, _) in enumerate(trace) if flag]
    assert len(alarms) >= 2, (
        f"{monitor!r} raised {len(alarms)} alarm(s) on a strongly miscalibrated stream"
    )
    for i, (flag, le, n_alarms, n_events) in enumerate(trace):
        assert n_events == i + 1, "n_events must count every update"
        assert n_alarms == sum(1 for j in alarms if j <= i), (
            "n_alarms must count the alarms"
        )
        if le is not None:
            threshold = -math.log(_alpha(monitor))
            assert isinstance(le, float) and not math.isnan(le)
            assert flag == (le >= threshold), (
                f"event {i}: alarm {flag} with log e-value {le} (threshold {threshold})"
            )
    for start in alarms[:3]:
        fresh = monitor.clone()
        rest = events[start + 1 :]
        replay = [(flag, le) for flag, le, _, _ in _trace(fresh, rest)]
        original = [(flag, le) for flag, le, _, _ in trace[start + 1 :]]
        assert replay == original, (
            f"after the alarm at event {start} the monitor did not restart from scratch"
        )


def _alpha(monitor) -> float:
    template = getattr(monitor, "monitor", None)
    if _is_multiclass(monitor):
        return template.alpha if template is not None else 0.05
    return monitor.alpha


def check_clone_is_independent(monitor) -> None:
    """``clone()`` gives a fresh monitor with the same parameters; updating one leaves
    the other (and a deep copy's original) unchanged
    (:func:`~streamcal.checks._common.check_round_trip`)."""
    trained = monitor.clone()
    _feed(trained, yield_monitor_events(monitor, 200, seed=3))
    fresh = trained.clone()
    assert fresh.n_events == 0 and fresh.n_alarms == 0, "a clone must not carry state"
    _round_trip(monitor, "clone", [("", trained)])


def _states(monitor):
    """Monitors in several states: fresh, after some events, right at an alarm."""
    events = yield_monitor_events(monitor, 300, seed=4)
    fresh = monitor.clone()
    some = monitor.clone()
    _feed(some, events[:37])
    at_alarm = monitor.clone()
    _feed(at_alarm, events[: _first_alarm(monitor, events) + 1])
    assert at_alarm.drift_detected
    return [("fresh", fresh), ("after 37 events", some), ("at an alarm", at_alarm)]


def check_pickle_roundtrip(monitor) -> None:
    """A pickled monitor has the same state and continues exactly like the original
    (:func:`~streamcal.checks._common.check_round_trip`)."""
    _round_trip(monitor, "pickle", _states(monitor))


def check_dict_roundtrip(monitor) -> None:
    """``to_dict()`` is JSON-safe (no NaN or infinity) and stable; ``from_dict``, on the
    class or on the base class, restores the whole state, which continues exactly
    (:func:`~streamcal.checks._common.check_round_trip`)."""
    _round_trip(monitor, "dict", _states(monitor))


def check_bad_input_leaves_state_unchanged(monitor) -> None:
    """Bad forecasts and labels raise a clear error and change nothing, also right after
    an alarm (the reset it announces must wait for a valid event)."""
    for where, m in _states(monitor):
        before = _fingerprint(m)
        flag = m.drift_detected
        if _is_multiclass(m):
            classes = _classes(m)
            good = {c: 1.0 / len(classes) for c in classes}
            for bad in BAD_MULTICLASS_PROBAS:
                _common.expect_error(m.update, (bad, classes[0]), "proba", bad)
            for bad in BAD_MULTICLASS_LABELS:
                _common.expect_error(m.update, (good, bad), "label", bad)
            if getattr(m, "classes", None) is not None:
                _common.expect_error(
                    m.update, (good, "no such class"), "label", "no such class"
                )
                unknown = {**good, "no such class": 0.0}
                _common.expect_error(
                    m.update, (unknown, classes[0]), "proba", "an unknown class"
                )
        else:
            for bad in BAD_SCORES:
                _common.expect_error(m.update, (bad, 1), "score", bad)
            for bad in BAD_LABELS:
                _common.expect_error(m.update, (0.5, bad), "label", bad)
        assert m.drift_detected == flag, f"bad input {where} changed drift_detected"
        assert _fingerprint(m) == before, f"bad input {where} changed the state"


def check_malformed_snapshot_rejected(monitor) -> None:
    """``from_dict`` rejects malformed snapshots with a ValueError and leaves the
    monitor it was read from unchanged."""
    from streamcal.monitor.base import BaseMonitor

    m = monitor.clone()
    _feed(m, yield_monitor_events(m, 60, seed=8))
    before = _fingerprint(m)
    good = json.loads(json.dumps(m.to_dict()))
    state = good["state"]
    bad = [
        *_common.malformed_snapshots(good, "Monitor"),
        {**good, "class": "BaseMonitor"},
        {**good, "state": {}},
        {**good, "state": {**state, "n_alarms": -1}},
        {**good, "state": {**state, "n_events": 1.5}},
        {**good, "state": {**state, "drift_detected": "yes"}},
    ]
    for key in state:
        if key not in ("drift_detected", "n_alarms", "n_events"):
            bad.append({**good, "state": {**state, key: None}})
            bad.append({**good, "state": {**state, key: [None]}})
    errors = (ValueError,)
    for d in bad:
        for reader in (type(m).from_dict, BaseMonitor.from_dict):
            _common.expect_raises(reader, (d,), errors, f"from_dict({str(d)[:120]})")
    assert _fingerprint(m) == before, (
        "reading a snapshot changed the monitor it came from"
    )


def _sane(monitor) -> None:
    """A few more events update it, the flag a bool."""
    flags = _feed(monitor, yield_monitor_events(monitor, 20, seed=3))
    assert all(type(f) is bool for f in flags), "drift_detected is not a bool"


def check_corrupted_snapshot_rejected(monitor) -> None:
    """``from_dict`` refuses the snapshots of a fed monitor corrupted entry by entry
    with a ValueError, unless the corruption gives a valid state (see
    :func:`~streamcal.checks._common.check_corrupted_snapshots`)."""
    m = monitor.clone()
    _feed(m, yield_monitor_events(m, 60, seed=8))
    _common.check_corrupted_snapshots(m, _sane)


def _bounded(monitor) -> bool:
    template = getattr(monitor, "monitor", None) if _is_multiclass(monitor) else monitor
    if template is None:  # the multiclass default: CalibrationMonitor()
        from streamcal.monitor import CalibrationMonitor

        template = CalibrationMonitor()
    if template.method == "eprocess":
        return template.resolution is not None or template.window_size is not None
    return template.method == "page-hinkley"


def check_bounded_memory(monitor) -> None:
    """With a bounded recalibrator or a Page-Hinkley detector the state stops growing on
    a calibrated stream (where resets are rare)."""
    if not _bounded(monitor):
        return

    def learn_chunk(m, chunk):
        # calibrated (few resets), distinct scores: an unbounded store would grow
        _feed(m, yield_monitor_events(m, 1500, seed=20 + chunk, calibrated=True))

    _common.check_state_stops_growing(monitor, learn_chunk, 500)


def yield_monitor_checks(monitor) -> typing.Iterator[typing.Callable]:
    """Yield the checks that apply to ``monitor`` (a fresh instance)."""
    yield check_docstring_has_example
    yield check_cold_state
    yield check_alarm_semantics
    yield check_clone_is_independent
    yield check_pickle_roundtrip
    yield check_dict_roundtrip
    yield check_bad_input_leaves_state_unchanged
    yield check_malformed_snapshot_rejected
    yield check_corrupted_snapshot_rejected
    if _bounded(monitor):
        yield check_bounded_memory


def check_monitor(monitor) -> None:
    """Run every applicable check on ``monitor``; raise on the first failure."""
    for check in yield_monitor_checks(monitor):
        check(monitor)
