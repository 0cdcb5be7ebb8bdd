"""Checks that every keyed calibrator must pass.

The binary and multiclass suites feed ``(score, label)`` events; a keyed calibrator
takes ``(key, score, label, w)``, so it has its own suite. Each check takes a *fresh*
:class:`streamcal.KeyedCalibrator`, works on clones, and raises AssertionError saying
what broke. The obviously correct oracle is :class:`LRUOracle`: a dict of independent
clones of the template fed by hand, the recency order kept in a plain list.

Examples
--------
>>> from streamcal import KeyedCalibrator, OnlineIsotonic
>>> from streamcal.checks.keyed import check_keyed_calibrator, yield_keyed_checks
>>> [check.__name__ for check in yield_keyed_checks(KeyedCalibrator(OnlineIsotonic()))][:2]
['check_docstring_has_example', 'check_learn_one_returns_none']
>>> check_keyed_calibrator(KeyedCalibrator(OnlineIsotonic(), max_keys=2))
"""

from __future__ import annotations

import json
import pickle
import typing

import numpy as np

from streamcal.checks import _common
from streamcal.checks._common import BAD_LABELS, BAD_SCORES, BAD_WEIGHTS, check_docstring_has_example

__all__ = [
    "BAD_KEYS",
    "KEYS",
    "LRUOracle",
    "check_bad_input_leaves_state_unchanged",
    "check_bounded_memory",
    "check_clone_is_independent",
    "check_dict_roundtrip",
    "check_docstring_has_example",
    "check_keyed_calibrator",
    "check_learn_one_returns_none",
    "check_malformed_snapshot_rejected",
    "check_matches_independent_calibrators",
    "check_pickle_roundtrip",
    "check_predict_one_is_pure",
    "yield_keyed_checks",
    "yield_keyed_stream",
]

#: Keys of the streams: JSON scalars of every kind, no two equal as dict keys.
KEYS = ("a", "b", 7, 2.5, -3, True, "", "tenant-9")
#: Bad keys: not JSON scalars, or not finite.
BAD_KEYS = [None, float("nan"), float("inf"), [1], (1,), {"a": 1}, b"a", 1 + 0j, object()]

_CLASSES = (0, 1, 2)


def _multiclass(keyed) -> bool:
    return bool(keyed._multiclass)


def keyed_is_multiclass(template) -> bool:
    from streamcal.base import MulticlassCalibrator

    return isinstance(template, MulticlassCalibrator)


def _inputs(keyed, rng, n):
    if not _multiclass(keyed):
        return _common.tied_scores(rng, n).tolist()
    out = []
    for _ in range(n):
        p = rng.dirichlet(np.ones(3))
        out.append({c: float(v) for c, v in zip(_CLASSES, p / p.sum())})
    return out


def _label(keyed, x, rng):
    if not _multiclass(keyed):
        return int(rng.random() < x**2)
    p = np.array([x[c] for c in _CLASSES]) ** 2
    return _CLASSES[int(rng.choice(3, p=p / p.sum()))]


def yield_keyed_stream(keyed, n: int = 300, seed: int = 0, keys=KEYS) -> list:
    """``(key, score, label, w)`` events for ``keyed``: keys drawn from ``keys`` with
    unequal frequencies, scores (or probability dicts for a multiclass template) tied
    and miscalibrated, weights mixing 1, fractions and zeros.

    Examples
    --------
    >>> from streamcal import KeyedCalibrator, OnlineIsotonic
    >>> events = yield_keyed_stream(KeyedCalibrator(OnlineIsotonic()), 4, seed=1)
    >>> [len(e) for e in events]
    [4, 4, 4, 4]

    """
    rng = np.random.default_rng(seed)
    freq = 1.0 / np.arange(1, len(keys) + 1)
    ks = rng.choice(len(keys), n, p=freq / freq.sum())
    xs = _inputs(keyed, rng, n)
    ws = rng.choice([1.0, 1.0, 1.0, 0.5, 2.25, 0.0], n).tolist()
    return [(keys[int(k)], x, _label(keyed, x, rng), w) for k, x, w in zip(ks, xs, ws)]


class LRUOracle:
    """The obviously correct keyed calibrator: a dict of ``template.clone()``s fed by
    hand and a list of keys, least recently learnt first."""

    def __init__(self, template, max_keys=None, fallback=False):
        self.template, self.max_keys = template, max_keys
        self.cals: dict = {}
        self.order: list = []
        self.fallback = template.clone() if fallback else None
        self.n_evicted = 0
        self._multiclass = keyed_is_multiclass(template)

    def learn_one(self, key, x, y, w):
        if key not in self.cals:
            if self.max_keys is not None and len(self.order) == self.max_keys:
                del self.cals[self.order.pop(0)]
                self.n_evicted += 1
            self.cals[key] = self.template.clone()
        else:
            self.order.remove(key)
        self.order.append(key)
        self.cals[key].learn_one(x, y, w)
        if self.fallback is not None:
            self.fallback.learn_one(x, y, w)

    def predict_one(self, key, x):
        if key in self.cals:
            return self.cals[key].predict_one(x)
        if self.fallback is not None:
            return self.fallback.predict_one(x)
        return self.template.clone().predict_one(x)


def _probes(keyed):
    rng = np.random.default_rng(99)
    return _inputs(keyed, rng, 6)


def _predictions(keyed, keys=KEYS + ("never seen",)):
    return [keyed.predict_one(k, x) for k in keys for x in _probes(keyed)]


def _feed(keyed, events):
    for k, x, y, w in events:
        keyed.learn_one(k, x, y, w)


def _trained(keyed, n=200, seed=0):
    k = keyed.clone()
    _feed(k, yield_keyed_stream(k, n, seed))
    return k


def check_learn_one_returns_none(keyed) -> None:
    """``learn_one`` returns None, as in river."""
    k = keyed.clone()
    key, x, y, w = yield_keyed_stream(k, 1)[0]
    assert k.learn_one(key, x, y, w) is None, "learn_one must return None"


def check_matches_independent_calibrators(keyed, seeds=range(3)) -> None:
    """After every event, the predictions for every key (seen, evicted or never seen)
    equal those of :class:`LRUOracle`, and so do the keys, their recency order and
    ``n_evicted``; ``_check()`` holds after every event and every read."""
    for seed in seeds:
        k = keyed.clone()
        oracle = LRUOracle(keyed.calibrator, keyed.max_keys, keyed.fallback)
        for i, (key, x, y, w) in enumerate(yield_keyed_stream(k, 150, seed)):
            k.learn_one(key, x, y, w)
            oracle.learn_one(key, x, y, w)
            k._check()
            assert list(k.calibrators) == oracle.order, (
                f"seed {seed}, event {i}: keys {list(k.calibrators)}, expected {oracle.order}"
            )
            assert k.n_evicted == oracle.n_evicted, f"seed {seed}, event {i}: n_evicted"
            if i % 10 == 0:
                assert _predictions(k) == _predictions(oracle), (
                    f"seed {seed}, event {i}: predictions differ from independent calibrators"
                )
                k._check()  # the lookups of predict_one moved the cache
        assert _predictions(k) == _predictions(oracle)


def check_predict_one_is_pure(keyed) -> None:
    """``predict_one`` changes no state (no recency update, no key created)."""
    k = _trained(keyed)
    before = _common.snapshot(k)
    _predictions(k)
    assert _common.snapshot(k) == before, "predict_one changed the state"


def _further(keyed) -> list:
    """Learn a further stretch of stream; the prediction after each event, then the
    keys in recency order."""
    out = []
    for key, x, y, w in yield_keyed_stream(keyed, 120, seed=5):
        keyed.learn_one(key, x, y, w)
        out.append(keyed.predict_one(key, x))
    return out + [list(keyed.calibrators)]


def _round_trip(keyed, how, states) -> None:
    from streamcal.keyed import KeyedCalibrator

    def outputs(k):
        return [list(k.calibrators)] + _predictions(k)

    def fp(k):
        return _common.snapshot(k).encode()

    _common.check_round_trip(how, states, outputs, _further, KeyedCalibrator, keyed.clone(), fp)


def check_clone_is_independent(keyed) -> None:
    """``clone()`` is fresh, has the same parameters, and learning in it (or in a deep
    copy) leaves the original unchanged
    (:func:`~streamcal.checks._common.check_round_trip`)."""
    trained = _trained(keyed)
    fresh = trained.clone()
    assert len(fresh.calibrators) == 0 and fresh.n_evicted == 0, "a clone must be fresh"
    _round_trip(keyed, "clone", [("", trained)])


def check_pickle_roundtrip(keyed) -> None:
    """A pickled keyed calibrator has the same state and continues identically
    (:func:`~streamcal.checks._common.check_round_trip`)."""
    _round_trip(keyed, "pickle", [("fresh", keyed.clone()), ("trained", _trained(keyed))])


def check_dict_roundtrip(keyed) -> None:
    """``to_dict()`` is JSON-safe and stable; ``from_dict`` restores every key, its
    calibrator and the recency order, and the copy continues identically (evicting the
    same keys) (:func:`~streamcal.checks._common.check_round_trip`)."""
    _round_trip(keyed, "dict", [("fresh", keyed.clone()), ("trained", _trained(keyed))])


def check_bad_input_leaves_state_unchanged(keyed) -> None:
    """A bad key, score, label or weight raises naming the argument and changes
    nothing, for a known key and for a new one (no calibrator created, no eviction)."""
    for k in (keyed.clone(), _trained(keyed)):
        before = _common.snapshot(k)
        fp = _common.fingerprint(k)
        key, x, y, _ = yield_keyed_stream(k, 1, seed=7)[0]
        for bad in BAD_KEYS:
            _common.expect_error(k.learn_one, (bad, x, y), "key", bad)
            _common.expect_error(k.predict_one, (bad, x), "key", bad)
        for target in (key, "a brand new key"):
            if _multiclass(k):
                for bad in ({0: float("nan"), 1: 0.5, 2: 0.5}, {0: 0.5}, 0.5, None):
                    _common.expect_error(k.learn_one, (target, bad, y), "scores", bad)
                    _common.expect_error(k.predict_one, (target, bad), "scores", bad)
                for bad in ([1], float("nan")):
                    _common.expect_error(k.learn_one, (target, x, bad), "label", bad)
            else:
                for bad in BAD_SCORES:
                    _common.expect_error(k.learn_one, (target, bad, y), "score", bad)
                    _common.expect_error(k.predict_one, (target, bad), "score", bad)
                for bad in BAD_LABELS:
                    _common.expect_error(k.learn_one, (target, x, bad), "label", bad)
            for bad in BAD_WEIGHTS:
                _common.expect_error(k.learn_one, (target, x, y, bad), "w", bad)
        assert _common.snapshot(k) == before, "bad input changed the state"
        assert _common.fingerprint(k) == fp, "bad input changed the whole state"


def check_malformed_snapshot_rejected(keyed) -> None:
    """``from_dict`` rejects malformed snapshots (ValueError, TypeError or KeyError)."""
    from streamcal.keyed import KeyedCalibrator

    k = _trained(keyed)
    good = json.loads(json.dumps(k.to_dict()))
    state = good["state"]
    entries = state["keys"]
    bad = [
        *_common.malformed_snapshots(good, "KeyedCalibrator"),
        {**good, "state": {}},
        {**good, "state": {**state, "keys": None}},
        {**good, "state": {**state, "keys": [[None, entries[0][1]]]}},
        {**good, "state": {**state, "keys": [["x"]]}},
        {**good, "state": {**state, "keys": [["x", None]]}},
        {**good, "state": {**state, "keys": [["x", entries[0][1]], ["x", entries[0][1]]]}},
        {**good, "state": {**state, "keys": [[[1], entries[0][1]]]}},
        {**good, "state": {**state, "n_evicted": -1}},
        {**good, "state": {**state, "n_evicted": True}},
        {**good, "state": {**state, "fallback": None if state["fallback"] else entries[0][1]}},
    ]
    if keyed.max_keys is not None:
        too_many = [[f"k{i}", entries[0][1]] for i in range(keyed.max_keys + 1)]
        bad.append({**good, "state": {**state, "keys": too_many}})
    foreign = json.loads(json.dumps(_other_calibrator(keyed).to_dict()))
    bad.append({**good, "state": {**state, "keys": [["x", foreign]]}})
    for d in bad:
        for reader in (type(k).from_dict, KeyedCalibrator.from_dict):
            _common.expect_raises(reader, (d,), (ValueError, TypeError, KeyError), f"from_dict({str(d)[:100]})")


def _other_calibrator(keyed):
    """A calibrator of the template's family but another class or parameters."""
    from streamcal.calibrators import OnlineIsotonic, OnlinePlatt, TemperatureScaling

    if _multiclass(keyed):
        return TemperatureScaling(window_size=17)
    if type(keyed.calibrator) is OnlineIsotonic:
        return OnlinePlatt()
    return OnlineIsotonic(resolution=0.5)


def check_bounded_memory(keyed) -> None:
    """With ``max_keys``, the per-key calibrators stop growing however many new keys
    arrive (the fallback, which learns every event, is bounded only if the template
    is)."""
    if keyed.max_keys is None:
        return

    def learn_chunk(k, chunk):
        keys = tuple(f"c{chunk}-{i}" for i in range(200))
        _feed(k, yield_keyed_stream(k, 400, seed=30 + chunk, keys=keys))
        assert len(k.calibrators) <= k.max_keys

    def size(k):  # the per-key calibrators only
        return len(pickle.dumps(dict(k.calibrators)))

    _common.check_state_stops_growing(keyed, learn_chunk, 2000, size)


def yield_keyed_checks(keyed) -> typing.Iterator[typing.Callable]:
    """Yield the checks that apply to ``keyed`` (a fresh instance)."""
    yield check_docstring_has_example
    yield check_learn_one_returns_none
    yield check_matches_independent_calibrators
    yield check_predict_one_is_pure
    yield check_clone_is_independent
    yield check_pickle_roundtrip
    yield check_dict_roundtrip
    yield check_bad_input_leaves_state_unchanged
    yield check_malformed_snapshot_rejected
    if keyed.max_keys is not None:
        yield check_bounded_memory


def check_keyed_calibrator(keyed) -> None:
    """Run every applicable check on ``keyed``; raise on the first failure."""
    for check in yield_keyed_checks(keyed):
        check(keyed)
