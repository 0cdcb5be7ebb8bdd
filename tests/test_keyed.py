"""KeyedCalibrator: every case of ``_unit_test_params()`` against the keyed check suite
(whose oracle is a dict of independent calibrators with an LRU kept in a list), more
seeds and a small ``max_keys`` against the same oracle, the eviction order spelt out,
keys as dict keys, snapshots that continue identically, and checks that can fail."""

import copy
import json
import pickle

import numpy as np
import pytest

from streamcal import KeyedCalibrator, OnlineBeta, OnlineIsotonic, OnlinePlatt, TopLabel, VennAbers
from streamcal.checks import keyed as C
from streamcal.checks._common import yield_cases


@pytest.mark.parametrize(
    "keyed, check",
    [pytest.param(*case[1:], id=case[0]) for case in yield_cases([KeyedCalibrator], C.yield_keyed_checks)],
)
def test_check(keyed, check):
    check(keyed)


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("max_keys", [None, 1, 2, 5])
@pytest.mark.parametrize("fallback", [False, True])
def test_matches_oracle_many_seeds(seed, max_keys, fallback):
    keyed = KeyedCalibrator(VennAbers(), max_keys=max_keys, fallback=fallback)
    C.check_matches_independent_calibrators(keyed, seeds=[seed])


def test_multiclass_template():
    keyed = KeyedCalibrator(TopLabel(OnlineIsotonic()), max_keys=2)
    keyed.learn_one("x", {"a": 0.9, "b": 0.1}, "b")
    keyed.learn_one("y", {"a": 0.9, "b": 0.1}, "a")
    assert keyed.predict_one("x", {"a": 0.9, "b": 0.1}) == {"a": 0.0, "b": 1.0}
    assert keyed.predict_one("y", {"a": 0.9, "b": 0.1}) == {"a": 1.0, "b": 0.0}
    assert keyed.predict_one("z", {"a": 0.9, "b": 0.1}) == {"a": 0.9, "b": 0.1}


def test_eviction_order_spelt_out():
    keyed = KeyedCalibrator(OnlineIsotonic(), max_keys=3)
    for key in ["a", "b", "c"]:
        keyed.learn_one(key, 0.5, 1)
    keyed.learn_one("a", 0.5, 1)  # a is now the most recent: b is the oldest
    keyed.predict_one("b", 0.5)  # predictions do not refresh b
    keyed.learn_one("d", 0.5, 1)
    assert list(keyed.calibrators) == ["c", "a", "d"] and keyed.n_evicted == 1
    keyed.learn_one("b", 0.5, 0)  # b comes back fresh, evicting c
    assert list(keyed.calibrators) == ["a", "d", "b"] and keyed.n_evicted == 2
    assert keyed.calibrators["b"].n_events == 1
    assert keyed.predict_one("c", 0.3) == 0.3  # evicted: the score itself


def test_keys_compare_as_dict_keys():
    keyed = KeyedCalibrator(OnlineIsotonic())
    keyed.learn_one(True, 0.5, 1)
    keyed.learn_one(1, 0.5, 0)
    keyed.learn_one(1.0, 0.5, 0)
    keyed.learn_one(np.int64(1), 0.5, 0)
    assert list(keyed.calibrators) == [True] and keyed.calibrators[True].n_events == 4
    keyed.learn_one(np.str_("s"), 0.5, 1)
    keyed.learn_one(np.float32(0.5), 0.5, 1)
    assert [type(k) for k in keyed.calibrators] == [bool, str, float]
    restored = KeyedCalibrator.from_dict(json.loads(json.dumps(keyed.to_dict())))
    assert [type(k) for k in restored.calibrators] == [bool, str, float]


def test_bad_key_message():
    keyed = KeyedCalibrator(OnlineIsotonic())
    with pytest.raises(TypeError, match=r"The 'key' argument of KeyedCalibrator.learn_one must be a JSON scalar: a str, an int, a bool or a finite float. Got None instead."):
        keyed.learn_one(None, 0.5, 1)
    with pytest.raises(ValueError, match="Got inf instead"):
        keyed.predict_one(float("inf"), 0.5)


def test_longdouble_key_refused_not_recursing():
    # np.longdouble has no Python twin (.item() returns a longdouble): it used to
    # recurse until RecursionError
    keyed = KeyedCalibrator(OnlineIsotonic())
    with pytest.raises(TypeError, match="must be a JSON scalar"):
        keyed.learn_one(np.longdouble(1), 0.5, 1)
    assert keyed.calibrators == {}


def test_bad_event_on_full_store_evicts_nothing():
    keyed = KeyedCalibrator(OnlineIsotonic(), max_keys=2, fallback=True)
    keyed.learn_one("a", 0.2, 1)
    keyed.learn_one("b", 0.3, 0)
    before = pickle.dumps(keyed)
    for args in [("c", 1.5, 1), ("c", 0.5, 2), ("c", 0.5, 1, -1.0), ("a", float("nan"), 1)]:
        with pytest.raises((ValueError, TypeError)):
            keyed.learn_one(*args)
    assert pickle.dumps(keyed) == before


@pytest.mark.parametrize("seed", range(5))
def test_from_dict_continues_identically_through_evictions(seed):
    keyed = KeyedCalibrator(OnlinePlatt(), max_keys=3, fallback=True)
    events = C.yield_keyed_stream(keyed, 400, seed)
    for e in events[:200]:
        keyed.learn_one(*e)
    restored = KeyedCalibrator.from_dict(json.loads(json.dumps(keyed.to_dict())))
    for key, x, y, w in events[200:]:
        assert restored.predict_one(key, x) == keyed.predict_one(key, x)
        keyed.learn_one(key, x, y, w)
        restored.learn_one(key, x, y, w)
        assert list(restored.calibrators) == list(keyed.calibrators)
    assert restored.n_evicted == keyed.n_evicted > 0


def test_parameters_validated():
    for kwargs, name in [
        ({"calibrator": "isotonic"}, "calibrator"),
        ({"calibrator": OnlineIsotonic(), "max_keys": 0}, "max_keys"),
        ({"calibrator": OnlineIsotonic(), "max_keys": 2.0}, "max_keys"),
        ({"calibrator": OnlineIsotonic(), "fallback": 1}, "fallback"),
    ]:
        with pytest.raises(ValueError, match=f"The '{name}' parameter of KeyedCalibrator must be"):
            KeyedCalibrator(**kwargs)


def test_template_never_learns():
    template = OnlineIsotonic()
    keyed = KeyedCalibrator(template, fallback=True)
    keyed.learn_one("a", 0.4, 1)
    assert template.n_events == 0


# ---------------------------------------------------------------------- the checks can fail


class _EvictsNewest(KeyedCalibrator):
    """Evicts the most recently used key instead of the least."""

    def learn_one(self, key, score, label, w=1.0):
        if key not in self._calibrators and self.max_keys and len(self._calibrators) >= self.max_keys:
            self._calibrators.popitem(last=True)
            self._n_evicted += 1
        cal = self._calibrators.get(key) or self._spawn()
        cal.learn_one(score, label, w)
        self._calibrators[key] = cal
        self._calibrators.move_to_end(key)


class _StoresBeforeValidating(KeyedCalibrator):
    """Creates the key's calibrator before the event is validated."""

    def learn_one(self, key, score, label, w=1.0):
        if key not in self._calibrators:
            self._calibrators[key] = self._spawn()
        super().learn_one(key, score, label, w)


class _RefreshesOnPredict(KeyedCalibrator):
    """Moves a key to the most recent end when it is predicted."""

    def predict_one(self, key, score):
        if key in self._calibrators:
            self._calibrators.move_to_end(key)
        return super().predict_one(key, score)


@pytest.mark.parametrize(
    "broken, check",
    [
        (_EvictsNewest(OnlineIsotonic(), max_keys=2), C.check_matches_independent_calibrators),
        (_StoresBeforeValidating(OnlineIsotonic()), C.check_bad_input_leaves_state_unchanged),
        (_RefreshesOnPredict(OnlineIsotonic(), max_keys=3), C.check_predict_one_is_pure),
    ],
)
def test_checks_catch_bugs(broken, check):
    with pytest.raises(AssertionError):
        check(broken)


# ---------------------------------------------------------------------- the compiled path
# KeyedCalibrator's learn_one / predict_one are compiled (streamcal/_keyed_kernel.pyx); for
# OnlinePlatt and OnlineBeta templates they call the calibrators' C entry points directly


@pytest.mark.parametrize("template", [OnlinePlatt(), OnlineBeta(), OnlinePlatt(half_life=20.0)])
@pytest.mark.parametrize("max_keys", [None, 2])
@pytest.mark.parametrize("fallback", [False, True])
def test_compiled_logistic_path_matches_oracle(template, max_keys, fallback):
    keyed = KeyedCalibrator(template, max_keys=max_keys, fallback=fallback)
    assert keyed._logistic  # the C entry points are used
    C.check_matches_independent_calibrators(keyed, seeds=range(4))


@pytest.mark.parametrize("fallback", [False, True])
def test_compiled_logistic_path_bad_event_changes_nothing(fallback):
    keyed = KeyedCalibrator(OnlinePlatt(), max_keys=2, fallback=fallback)
    keyed.learn_one("a", 0.2, 1)
    keyed.learn_one("b", 0.3, 0)
    before = pickle.dumps(keyed)
    cases = [
        (("a", 1.5, 1), "The 'score' argument of OnlinePlatt.learn_one must be"),
        (("a", 0.5, 2), "The 'label' argument of OnlinePlatt.learn_one must be"),
        (("a", 0.5, 1, -1.0), "The 'w' argument of OnlinePlatt.learn_one must be"),
        (("a", 0.5, 1, 1e308), "The 'w' argument of OnlinePlatt.learn_one must be"),  # overflow
        (("c", 0.5, 1, float("nan")), "The 'w' argument of OnlinePlatt.learn_one must be"),
    ]
    for args, message in cases:
        with pytest.raises(ValueError, match=message):
            keyed.learn_one(*args)
        assert pickle.dumps(keyed) == before, args
    assert list(keyed.calibrators) == ["a", "b"]  # "a" was not moved, nothing evicted
    with pytest.raises(ValueError, match="The 'score' argument of OnlinePlatt.predict_one must be"):
        keyed.predict_one("a", -0.1)
    with pytest.raises(ValueError, match="The 'score' argument of OnlinePlatt.predict_one must be"):
        keyed.predict_one("unseen", 1.1)  # the fallback or the blank calibrator checks too


class _CountingPlatt(OnlinePlatt):
    """An OnlinePlatt whose learn_one and predict_one are overridden in Python."""

    calls = 0

    def learn_one(self, score, label, w=1.0):
        type(self).calls += 1
        super().learn_one(score, label, w)

    def predict_one(self, score):
        type(self).calls += 1
        return super().predict_one(score)


def test_overridden_logistic_methods_are_called():
    keyed = KeyedCalibrator(_CountingPlatt())
    assert not keyed._logistic
    _CountingPlatt.calls = 0
    for _ in range(3):
        keyed.learn_one("a", 0.4, 1)
        keyed.predict_one("a", 0.4)
    assert _CountingPlatt.calls == 6


@pytest.mark.parametrize("template", [OnlinePlatt(), OnlineIsotonic()])
def test_pickle_copy_and_restore_carry_the_compiled_fields(template):
    keyed = KeyedCalibrator(template, max_keys=3, fallback=True)
    events = C.yield_keyed_stream(keyed, 200, 0)
    for e in events[:100]:
        keyed.learn_one(*e)
    copies = [pickle.loads(pickle.dumps(keyed, protocol=p)) for p in range(pickle.HIGHEST_PROTOCOL + 1)]
    copies += [
        copy.deepcopy(keyed),
        KeyedCalibrator.from_dict(json.loads(json.dumps(keyed.to_dict()))),
    ]
    for c in copies:
        assert c._logistic == keyed._logistic
        assert c._store is not keyed._store and c._fallback is not keyed._fallback
    for key, x, y, w in events[100:]:
        expected = keyed.predict_one(key, x)
        keyed.learn_one(key, x, y, w)
        for c in copies:
            assert c.predict_one(key, x) == expected
            c.learn_one(key, x, y, w)
            assert list(c.calibrators) == list(keyed.calibrators)
            assert c.n_evicted == keyed.n_evicted


@pytest.mark.parametrize("template", [OnlinePlatt(), OnlineIsotonic()])
def test_shallow_copy_is_independent_of_the_original(template):
    """copy.copy shares nothing: each copy's lookup cache refers to its own store, so
    an eviction in one never leaves the other learning on an evicted calibrator."""
    keyed = KeyedCalibrator(template, max_keys=1)
    key = "a"
    keyed.predict_one(key, 0.3)
    keyed.learn_one(key, 0.3, 1)  # the cache now holds "a"
    twin = copy.copy(keyed)
    reference = copy.deepcopy(keyed)
    assert twin._store is not keyed._store
    twin.learn_one("b", 0.6, 0)  # evicts "a" from the twin only
    keyed.learn_one(key, 0.8, 0)
    reference.learn_one(key, 0.8, 0)
    for obj in (keyed, twin, reference):
        obj._check()
    assert list(keyed.calibrators) == ["a"] and list(twin.calibrators) == ["b"]
    assert keyed.to_dict() == reference.to_dict()
    assert keyed.calibrators[key].predict_one(0.5) == reference.calibrators[key].predict_one(0.5)


def test_unpickles_a_state_written_before_the_compiled_path():
    # pickles of the pure-Python KeyedCalibrator held every field in __dict__
    keyed = KeyedCalibrator(OnlinePlatt(), max_keys=2, fallback=True)
    keyed.learn_one("a", 0.2, 1)
    keyed.learn_one("b", 0.7, 1)
    old = {
        "calibrator": keyed.calibrator, "max_keys": 2, "fallback": True,
        "_spawn": keyed._spawn, "_store": keyed._store, "_fallback": keyed._fallback,
        "_blank": keyed._blank,
    }
    restored = KeyedCalibrator.__new__(KeyedCalibrator)
    restored.__setstate__(pickle.loads(pickle.dumps(old)))
    assert restored._logistic and list(restored.calibrators) == ["a", "b"]
    restored.learn_one("c", 0.6, 0)  # evicts "a" through the restored store
    assert list(restored.calibrators) == ["b", "c"] and restored.n_evicted == 1
    assert restored.predict_one("b", 0.7) == keyed.predict_one("b", 0.7)


# ---------------------------------------------------------------------- the lookup cache
# The kernel remembers the key object (an exact str or int) of its latest lookup and that
# key's calibrator, so that learn_one(key, ...) after predict_one(key, ...) with the same
# object needs no second lookup, and the most recently used calibrator, so that learning
# it again needs no LRU move. Any event that could make these stale (a new key, an
# eviction, a restore) must reset them.


@pytest.mark.parametrize("template", [OnlinePlatt(), OnlineIsotonic()])
def test_cached_key_evicted_then_learnt_starts_fresh(template):
    keyed = KeyedCalibrator(template, max_keys=1)
    a = "".join(["a", "1"])  # one object, used for every call on key "a1"
    keyed.learn_one(a, 0.9, 1)
    keyed.predict_one(a, 0.9)  # the cache now holds a's calibrator
    keyed.learn_one("b", 0.2, 0)  # evicts a
    keyed.learn_one(a, 0.9, 0)  # must not reach the evicted calibrator
    assert list(keyed.calibrators) == ["a1"] and keyed.n_evicted == 2
    fresh = template.clone()
    fresh.learn_one(0.9, 0)
    assert keyed.predict_one(a, 0.9) == fresh.predict_one(0.9)
    assert keyed.calibrators[a].to_dict() == fresh.to_dict()


def test_most_recent_calibrator_reset_by_eviction():
    # max_keys=2: learning "a" twice skips the move; a new key must reset what is "last"
    keyed = KeyedCalibrator(OnlinePlatt(), max_keys=2)
    for key in ["a", "a", "b", "a", "c", "a", "a", "d", "c"]:
        keyed.learn_one(key, 0.6, 1)
    assert list(keyed.calibrators) == ["d", "c"] and keyed.n_evicted == 3


@pytest.mark.parametrize("template", [OnlinePlatt(), OnlineIsotonic()])
def test_restoring_state_in_place_drops_the_cache(template):
    # _set_state (what from_dict runs) on a live object: the cached calibrator of "a"
    # is no longer the store's, so learn_one("a") must reach the restored one
    keyed = KeyedCalibrator(template, max_keys=2)
    other = keyed.clone()
    other.learn_one("a", 0.3, 0)
    other.learn_one("b", 0.3, 1)
    keyed.learn_one("a", 0.8, 1)
    keyed.predict_one("a", 0.8)  # caches the calibrator of "a" (and it is the last used)
    keyed._set_state(json.loads(json.dumps(other.to_dict()))["state"])
    keyed.learn_one("a", 0.8, 1)
    other.learn_one("a", 0.8, 1)
    assert list(keyed.calibrators) == list(other.calibrators) == ["b", "a"]
    assert keyed.to_dict() == other.to_dict()


def _key_pool():
    """Factories of keys: the same object each call, or a new object equal to it
    (str and large int built at run time), or another type equal as a dict key."""
    same = ["a", "b", 7, 10**12]
    return [
        *[(lambda k=k: k) for k in same],
        lambda: "".join(["a"]),
        lambda: "".join(["b", ""]),
        lambda: int("1000000000000"),
        lambda: 7.0,
        lambda: np.int64(7),
        lambda: True,
        lambda: 1,
        lambda: "".join(["n", "ew"]),
    ]


@pytest.mark.parametrize("template", [OnlinePlatt(), OnlineIsotonic()])
@pytest.mark.parametrize("max_keys", [None, 1, 2, 3])
@pytest.mark.parametrize("fallback", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_lookup_cache_matches_oracle_on_random_operations(template, max_keys, fallback, seed):
    """Random predict / learn / bad learn / restore operations, the key objects reused
    or rebuilt at random, against the dict of independent calibrators: every key order,
    n_evicted and prediction equal."""
    rng = np.random.default_rng(seed)
    pool = _key_pool()
    keyed = KeyedCalibrator(template, max_keys=max_keys, fallback=fallback)
    oracle = C.LRUOracle(template, max_keys, fallback)
    key = pool[0]()
    for i in range(600):
        if rng.random() < 0.4:  # otherwise the previous operation's key object again
            key = pool[rng.integers(len(pool))]()
        x = float(np.round(rng.random(), 1))
        op = rng.random()
        if op < 0.4:
            assert keyed.predict_one(key, x) == oracle.predict_one(key, x), i
        elif op < 0.85:
            y, w = int(rng.random() < x), float(rng.choice([1.0, 0.5, 0.0]))
            keyed.learn_one(key, x, y, w)
            oracle.learn_one(key, x, y, w)
        elif op < 0.95:
            with pytest.raises(ValueError):
                keyed.learn_one(key, 1.5, 1)
        elif op < 0.975:
            keyed = pickle.loads(pickle.dumps(keyed))
        else:
            keyed = KeyedCalibrator.from_dict(json.loads(json.dumps(keyed.to_dict())))
        assert list(keyed.calibrators) == oracle.order, i
        assert keyed.n_evicted == oracle.n_evicted, i
    for make in pool:
        for x in (0.1, 0.5, 0.9):
            assert keyed.predict_one(make(), x) == oracle.predict_one(make(), x)


def test_a_store_pickled_as_slots_restores():
    """KeyedStore's state is a dict of its slots (pickle protocols 0 and 1 refused it
    before); pickles written before that carry ``(None, slots)`` and still restore."""
    from streamcal._keyed_store import KeyedStore

    store = KeyedStore("Owner", max_keys=2)
    store.add("a", 1)
    store.add("b", 2)
    store.add("c", 3)
    old_state = (None, {name: getattr(store, name) for name in KeyedStore.__slots__})
    restored = KeyedStore.__new__(KeyedStore)
    restored.__setstate__(old_state)
    for twin in [restored] + [pickle.loads(pickle.dumps(store, protocol=p)) for p in range(pickle.HIGHEST_PROTOCOL + 1)]:
        assert (list(twin.items.items()), twin.max_keys, twin.n_evicted, twin.owner) == (
            [("b", 2), ("c", 3)], 2, 1, "Owner")


@pytest.mark.parametrize("case", ["tracking", "platt_half_life", "isotonic", "temperature", "class_wise"])
def test_a_weight_only_the_fallback_refuses_changes_nothing(case):
    """An outside check: the key's calibrator learnt first, then the fallback (which
    holds every key's events) refused the weight: the ValueError came after the key's
    state had changed ("a" predicted 2.5e-308 instead of 1.0). Now the key's learning
    is undone, or the fallback is asked first; the snapshot is byte for byte the same."""
    from streamcal import TrackingCalibeater
    if case == "tracking":
        keyed = KeyedCalibrator(TrackingCalibeater(), fallback=True)
        keyed.learn_one("a", 0.5, 1)
        keyed.learn_one("b", 0.5, 1, 6e307)
        bad = ("a", 0.5, 0, 6e307)
    elif case == "platt_half_life":
        keyed = KeyedCalibrator(OnlinePlatt(half_life=10.0), fallback=True)
        for _ in range(200):
            keyed.learn_one("a", 0.5, 1, 1e6)
        for _ in range(300):
            keyed.learn_one("b", 0.5, 1)
        bad = ("a", 0.5, 0, 1e15)
    elif case == "isotonic":
        keyed = KeyedCalibrator(OnlineIsotonic(), fallback=True)
        keyed.learn_one("a", 0.5, 1)
        keyed.learn_one("b", 0.5, 1, 1.5e308)
        bad = ("a", 0.5, 0, 1e308)
    else:  # multiclass templates: a refit window's room, a class calibrator's sums
        from streamcal import ClassWise, TemperatureScaling
        from streamcal.calibrators._refit import REFIT_WEIGHT_CAPACITY as room
        template, heavy, light = ((TemperatureScaling(), 0.75 * room, 0.5 * room)
                                  if case == "temperature"
                                  else (ClassWise(OnlineIsotonic()), 1.5e308, 1e308))
        keyed = KeyedCalibrator(template, fallback=True)
        s = {"x": 0.7, "z": 0.3}
        keyed.learn_one("a", s, "x")
        keyed.learn_one("b", s, "x", heavy)
        bad = ("a", s, "z", light)
    key_alone = copy.deepcopy(keyed.calibrators["a"])
    try:
        key_alone.learn_one(*bad[1:])
    except ValueError:
        pytest.skip("the key's calibrator refuses the weight too: not this case")
    before = json.dumps(keyed.to_dict(), sort_keys=True)
    p_before = keyed.predict_one("a", bad[1])
    with pytest.raises(ValueError, match="The 'w' argument of"):
        keyed.learn_one(*bad)
    assert json.dumps(keyed.to_dict(), sort_keys=True) == before
    assert keyed.predict_one("a", bad[1]) == p_before
    keyed._check()


@pytest.mark.parametrize("seed", range(6))
def test_isotonic_forgetting_vouches_for_one_weight_only_when_it_fits(seed):
    """KeyedCalibrator's fallback skips the guard (a copy of the key's state) when
    ``_weights_surely_fit((w,))`` vouches for the weight; under forgetting that is the
    clock's plan needing no search for a shift. Sound: every weight it vouches for is
    learnt, from states holding weights across the whole double range."""
    rng = np.random.default_rng(seed)
    cal = OnlineIsotonic(half_life=float(rng.choice([0.5, 3.0, 40.0])),
                         window_size=None if seed % 2 else 30)
    vouched = 0
    for _ in range(300):
        w = float(10.0 ** rng.uniform(-320, 308)) if rng.random() < 0.5 else float(rng.random())
        trial = copy.deepcopy(cal)
        if cal._weights_surely_fit((w,)):
            vouched += 1
            trial.learn_one(float(rng.random()), int(rng.random() < 0.5), w)  # must not raise
        try:
            cal.learn_one(float(rng.random()), int(rng.random() < 0.5), w)
        except ValueError:
            pass
    assert vouched > 100
