"""KeyedCalibrationMonitor: against an oracle of independent monitors with an LRU kept in
a list, snapshots (pickle, to_dict/from_dict, also right at an alarm) that continue
identically, bad input that changes nothing, malformed snapshots, bounded memory, and
the stated false-alarm guarantee (per key and, by the union bound, for all keys
together) checked by simulation on calibrated streams."""

import copy
import json
import math
import pickle

import numpy as np
import pytest

from streamcal.checks import _common
from streamcal.checks.keyed import BAD_KEYS
from streamcal.checks.monitors import BAD_LABELS, BAD_SCORES, yield_monitor_events
from streamcal.monitor import (
    CalibrationMonitor,
    KeyedCalibrationMonitor,
    MulticlassCalibrationMonitor,
)
from streamcal.monitor.base import BaseMonitor

CASES = [KeyedCalibrationMonitor(**p) for p in KeyedCalibrationMonitor._unit_test_params()]
KEYS = ("a", "b", 7, 2.5, True)


def _template(keyed):
    return keyed.monitor if keyed.monitor is not None else CalibrationMonitor()


def _events(keyed, n=600, seed=0, keys=KEYS):
    """Events of several keys, each key's own stream from the monitor check suite
    (calibrated and miscalibrated blocks in turn), interleaved at random."""
    rng = np.random.default_rng(seed)
    freq = 1.0 / np.arange(1, len(keys) + 1)
    ks = rng.choice(len(keys), n, p=freq / freq.sum()).tolist()
    streams = {
        k: iter(yield_monitor_events(_template(keyed), n, seed=seed * 31 + i))
        for i, k in enumerate(keys)
    }
    return [(keys[i], *next(streams[keys[i]])) for i in ks]


class Oracle:
    def __init__(self, template, max_keys):
        self.template, self.max_keys = template, max_keys
        self.monitors, self.order, self.n_evicted = {}, [], 0

    def update(self, key, forecast, label):
        if key not in self.monitors:
            if self.max_keys is not None and len(self.order) == self.max_keys:
                del self.monitors[self.order.pop(0)]
                self.n_evicted += 1
            self.monitors[key] = self.template.clone()
        else:
            self.order.remove(key)
        self.order.append(key)
        self.monitors[key].update(forecast, label)
        return self.monitors[key].drift_detected


def _trace(keyed, events):
    out = []
    for e in events:
        keyed.update(*e)
        out.append((keyed.drift_detected, keyed.drift_key, keyed.log_e_value, keyed.n_alarms, keyed.n_events))
    return out


@pytest.mark.parametrize("keyed", CASES, ids=repr)
@pytest.mark.parametrize("seed", range(3))
def test_matches_independent_monitors(keyed, seed):
    k = keyed.clone()
    oracle = Oracle(_template(keyed), keyed.max_keys)
    n_alarms = 0
    for i, (key, f, y) in enumerate(_events(keyed, 800, seed, keys=KEYS[:3])):
        k.update(key, f, y)
        alarm = oracle.update(key, f, y)
        n_alarms += alarm
        assert (k.drift_detected, k.drift_key) == (alarm, key if alarm else None), f"event {i}"
        assert list(k.monitors) == oracle.order and k.n_evicted == oracle.n_evicted
        assert k.n_alarms == n_alarms and k.n_events == i + 1
        assert k.monitors[key].to_dict() == oracle.monitors[key].to_dict()
    if keyed.max_keys is None or keyed.max_keys >= 3:  # else evictions keep resetting
        assert n_alarms >= 1  # the streams are miscalibrated in every other block
    else:
        assert k.n_evicted > 0


def _states(keyed):
    events = _events(keyed, 600, seed=4, keys=KEYS[:2])
    fresh, some, at_alarm = keyed.clone(), keyed.clone(), keyed.clone()
    _trace(some, events[:37])
    for e in events:
        at_alarm.update(*e)
        if at_alarm.drift_detected:
            break
    assert at_alarm.drift_detected
    return [fresh, some, at_alarm]


def _same_behaviour(a, b):
    events = _events(a, 200, seed=5)
    assert _trace(a, events) == _trace(b, events)
    assert _common.snapshot(a) == _common.snapshot(b)


@pytest.mark.parametrize("keyed", CASES, ids=repr)
def test_pickle_and_dict_roundtrips_continue_identically(keyed):
    for m in _states(keyed):
        _same_behaviour(copy.deepcopy(m), pickle.loads(pickle.dumps(m)))
        restored = _common.restore_from_dict(m, BaseMonitor, fp=lambda o: _common.snapshot(o).encode())
        assert restored.drift_key == m.drift_key and list(restored.monitors) == list(m.monitors)
        _same_behaviour(m, restored)


@pytest.mark.parametrize("keyed", CASES, ids=repr)
def test_clone_is_fresh_and_independent(keyed):
    trained = _states(keyed)[1]
    before = _common.snapshot(trained)
    fresh = trained.clone()
    assert fresh._get_params() == trained._get_params() and fresh.n_events == 0 and not fresh.monitors
    _trace(fresh, _events(keyed, 50, seed=9))
    assert _common.snapshot(trained) == before


@pytest.mark.parametrize("keyed", CASES, ids=repr)
def test_bad_input_changes_nothing_also_at_an_alarm(keyed):
    for m in _states(keyed):
        before, fp, flag = _common.snapshot(m), pickle.dumps(m), m.drift_detected
        key, f, y = _events(keyed, 1, seed=2)[0]
        for bad in BAD_KEYS:
            _common.expect_error(m.update, (bad, f, y), "key", bad)
        for target in (key, "new key"):
            if keyed._multiclass:
                for bad in ({0: 0.5}, None, 0.5):
                    _common.expect_error(m.update, (target, bad, y), "proba", bad)
                _common.expect_error(m.update, (target, f, [1]), "label", [1])
            else:
                for bad in BAD_SCORES:
                    _common.expect_error(m.update, (target, bad, y), "score", bad)
                for bad in BAD_LABELS:
                    _common.expect_error(m.update, (target, f, bad), "label", bad)
        assert m.drift_detected == flag
        assert _common.snapshot(m) == before and pickle.dumps(m) == fp


@pytest.mark.parametrize("keyed", CASES, ids=repr)
def test_malformed_snapshots_rejected(keyed):
    m = _states(keyed)[2]
    good = json.loads(json.dumps(m.to_dict()))
    state = good["state"]
    entry = state["keys"][0]
    other = CalibrationMonitor(alpha=0.123).to_dict()
    bad = [
        *_common.malformed_snapshots(good, "Monitor"),
        {**good, "state": {}},
        {**good, "state": {**state, "n_alarms": -1}},
        {**good, "state": {**state, "n_alarms": state["n_events"] + 1}},
        {**good, "state": {**state, "drift_detected": "yes"}},
        {**good, "state": {**state, "drift_key": None}},  # alarm without a key
        {**good, "state": {**state, "drift_key": "no such key"}},
        {**good, "state": {**state, "keys": None}},
        {**good, "state": {**state, "keys": [[None, entry[1]]]}},
        {**good, "state": {**state, "keys": [entry, entry]}},
        {**good, "state": {**state, "keys": [["x", other]]}},
        {**good, "state": {**state, "keys": [["x"]]}},
        {**good, "state": {**state, "n_monitors": 0}},
    ]
    if keyed.max_keys is not None:
        bad.append({**good, "state": {**state, "keys": [[f"k{i}", entry[1]] for i in range(keyed.max_keys + 1)]}})
    for d in bad:
        for reader in (KeyedCalibrationMonitor.from_dict, BaseMonitor.from_dict):
            _common.expect_raises(reader, (d,), (ValueError, TypeError, KeyError), str(d)[:100])


@pytest.mark.parametrize("keyed", CASES, ids=repr)
def test_snapshot_counters_and_flag_must_agree_with_the_monitors(keyed):
    # from_dict accepted a keyed flag cleared while the last updated key's monitor
    # was alarming (the alarm lost on restore), n_monitors other than the keys held
    # plus n_evicted (false_alarm_bound then under- or overstated), and n_events or
    # n_alarms below what the held monitors counted
    m = keyed.clone()
    m.update("x", *_events(keyed, 1, seed=9)[0][1:])  # evicted with max_keys=2
    for e in _events(keyed, 600, seed=4, keys=KEYS[:2]):
        m.update(*e)
        if m.drift_detected:
            break
    assert m.drift_detected
    good = json.loads(json.dumps(m.to_dict()))
    state = good["state"]
    held = [BaseMonitor.from_dict(d) for _, d in state["keys"]]
    bad = [
        {**state, "drift_detected": False, "drift_key": None},
        {**state, "n_monitors": state["n_monitors"] + 1},
        {**state, "n_monitors": len(state["keys"]) + state["n_evicted"] + 1, "n_evicted": state["n_evicted"]},
        {**state, "n_evicted": state["n_evicted"] + 1},
        {**state, "n_events": sum(h.n_events for h in held) - 1},
        {**state, "n_alarms": sum(h.n_alarms for h in held) - 1},
    ]
    if state["n_evicted"]:
        bad.append({**state, "n_evicted": 0})
    for s in bad:
        for reader in (KeyedCalibrationMonitor.from_dict, BaseMonitor.from_dict):
            with pytest.raises(ValueError):
                reader({**good, "state": s})
    assert KeyedCalibrationMonitor.from_dict(good).drift_key == m.drift_key
    fresh = keyed.clone().to_dict()
    fresh["state"]["n_events"] = 3  # events, but no monitor
    with pytest.raises(ValueError, match="n_events"):
        KeyedCalibrationMonitor.from_dict(fresh)


def test_bounded_memory_with_max_keys():
    keyed = KeyedCalibrationMonitor(CalibrationMonitor(resolution=0.05), max_keys=5)
    sizes = []
    for chunk in range(4):
        keys = tuple(f"c{chunk}-{i}" for i in range(100))
        _trace(keyed, _events(keyed, 300, seed=chunk, keys=keys))
        sizes.append(len(pickle.dumps(keyed)))
    assert len(keyed.monitors) == 5 and keyed.n_evicted == keyed.n_monitors - 5
    _common.assert_stops_growing(sizes, 2000)


def test_parameters_validated():
    for kwargs, name in [
        ({"monitor": "eprocess"}, "monitor"),
        ({"max_keys": 0}, "max_keys"),
        ({"max_keys": None, "monitor": KeyedCalibrationMonitor()}, "monitor"),
    ]:
        with pytest.raises(ValueError, match=f"The '{name}' parameter of KeyedCalibrationMonitor must be"):
            KeyedCalibrationMonitor(**kwargs)


def test_false_alarm_bound_property():
    keyed = KeyedCalibrationMonitor(CalibrationMonitor(alpha=0.05), max_keys=2)
    assert keyed.false_alarm_bound == 0.0
    for key in ["a", "b", "c", "a"]:  # "a" comes back after its eviction: a 4th test
        keyed.update(key, 0.5, 1)
    assert keyed.n_monitors == 4 and keyed.false_alarm_bound == pytest.approx(0.2)
    assert KeyedCalibrationMonitor(CalibrationMonitor(method="adwin")).false_alarm_bound is None
    mc = KeyedCalibrationMonitor(MulticlassCalibrationMonitor(CalibrationMonitor(alpha=0.3), classes=(0, 1)))
    mc.update("a", {0: 0.5, 1: 0.5}, 0)
    mc.update("b", {0: 0.5, 1: 0.5}, 0)
    mc.update("c", {0: 0.5, 1: 0.5}, 0)
    assert mc.false_alarm_bound == pytest.approx(0.9)


# ---------------------------------------------------------------------- the guarantee


def _alarm_rates(truth, alpha=0.1, n_keys=4, n_per_key=150, reps=300, seed=0):
    """Fraction of replications in which each key alarmed, and in which any did.
    ``truth(p)`` is the probability of the label given the score ``p``."""
    rng = np.random.default_rng(seed)
    template = CalibrationMonitor(alpha=alpha, lam=0.2, half_life=None, prior_weight=0.0, resolution=0.05)
    per_key = np.zeros(n_keys)
    any_alarm = 0
    for _ in range(reps):
        keyed = KeyedCalibrationMonitor(template)
        alarmed = set()
        order = np.repeat(np.arange(n_keys), n_per_key)
        rng.shuffle(order)
        p = rng.random(len(order))
        y = rng.random(len(order)) < truth(p)
        for k, pi, yi in zip(order.tolist(), p.tolist(), y.tolist()):
            keyed.update(f"key{k}", pi, yi)
            if keyed.drift_detected:
                alarmed.add(keyed.drift_key)
        assert keyed.false_alarm_bound == pytest.approx(min(1.0, n_keys * alpha))
        for k in alarmed:
            per_key[int(k[3:])] += 1
        any_alarm += bool(alarmed)
    return per_key / reps, any_alarm / reps


def _upper(rate, reps):
    """A one-sided 4-sigma binomial allowance above ``rate``."""
    return rate + 4 * math.sqrt(rate * (1 - rate) / reps)


def test_false_alarm_rates_respect_the_stated_bounds():
    alpha, n_keys, reps = 0.1, 4, 300
    per_key, any_alarm = _alarm_rates(lambda p: p, alpha, n_keys, reps=reps)
    assert (per_key <= _upper(alpha, reps)).all(), per_key  # per key: alpha
    assert any_alarm <= _upper(min(1.0, n_keys * alpha), reps), any_alarm  # union bound
    # and the same simulation sees a miscalibrated stream, so it could fail
    shifted, _ = _alarm_rates(lambda p: np.minimum(1.0, p + 0.25), alpha, n_keys, reps=50)
    assert (shifted > _upper(alpha, reps)).all(), shifted
