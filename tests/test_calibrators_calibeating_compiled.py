"""The compiled calibeaters (``streamcal/core/_calibeating.pyx``, issue 11): snapshots
written by the pure-Python version still restore and continue identically; the batch
paths (``predict_learn_many``, ``learn_many``, ``predict_many``) give exactly the floats
of the one-event loop, with and without a base, with zero and extreme weights; bad
input is refused with the template message and changes nothing; snapshots that break
the stores' invariants are refused.

The exactness of the per-event paths against the slow oracles is in
``tests/test_calibrators_calibeating.py``.
"""

from __future__ import annotations

import copy
import json
import pickle
import random
import zlib

import numpy as np
import pytest

from streamcal import (
    EpsilonCalibratedForecaster,
    HedgingCalibeater,
    OnlineIsotonic,
    OnlinePlatt,
    TrackingCalibeater,
)
from streamcal.base import SNAPSHOT_FORMAT, BinaryCalibrator
from streamcal.core.calibeating import BinOutcomes, FosterGame

try:
    from tests import references_calibeating as ref
except ImportError:  # pragma: no cover
    import references_calibeating as ref


def _stream(seed=2024, n=60):
    rng = random.Random(seed)
    s = [round(rng.random(), 3) for _ in range(n)]
    y = [int(rng.random() < 0.5) for _ in s]
    w = [rng.choice([1.0, 0.5, 2.25, 0.0]) for _ in s]
    return s, y, w


# Written by ``to_dict()`` of the pure-Python calibeaters (commit 35af34d) after
# ``predict_one`` + ``learn_one`` on the first 40 events of ``_stream()``.
OLD_SNAPSHOTS = [
    {
        "class": "TrackingCalibeater",
        "format": 1,
        "params": {"base": None, "n_bins": 4, "prior_weight": 2.5},
        "state": {
            "bins": [[1, 16.0, 10.0], [2, 4.0, 1.0], [3, 6.5, 3.75], [0, 5.75, 3.75]],
            "n_events": 40,
        },
    },
    {
        "class": "HedgingCalibeater",
        "format": 1,
        "params": {"base": None, "n_bins": 3, "seed": 18446744073709551633},
        "state": {
            "seed": 18446744073709551633,
            "n_events": 40,
            "games": [
                [1, [[1.0, 4.75, 5.25], [1.0, 4.75, 2.0], 11.0, 7.75]],
                [2, [[3.75, 5.25, 1.0], [2.75, 1.5, 0.0], 10.0, 4.25]],
                [0, [[4.25, 2.25, 4.75], [1.5, 2.25, 2.75], 11.25, 6.5]],
            ],
        },
    },
    {
        "class": "EpsilonCalibratedForecaster",
        "format": 1,
        "params": {"n_bins": 4, "seed": 9},
        "state": {
            "seed": 9,
            "n_events": 40,
            "game": [[2.25, 13.25, 15.75, 1.0], [2.25, 8.5, 7.75, 0.0], 32.25, 18.5],
        },
    },
]


@pytest.mark.parametrize("snapshot", OLD_SNAPSHOTS, ids=lambda d: d["class"])
def test_snapshots_of_the_python_version_restore_and_continue(snapshot):
    s, y, w = _stream()
    restored = BinaryCalibrator.from_dict(copy.deepcopy(snapshot))
    snapshot = {**snapshot, "format": SNAPSHOT_FORMAT}  # written again in the current format
    assert restored.to_dict() == snapshot
    # the compiled version, fed the same 40 events, reaches the very same state
    fresh = type(restored)(**snapshot["params"])
    for a, b, c in zip(s[:40], y[:40], w[:40]):
        fresh.predict_one(a)
        fresh.learn_one(a, b, c)
    assert fresh.to_dict() == snapshot
    for a, b, c in zip(s[40:], y[40:], w[40:]):
        assert restored.predict_one(a) == fresh.predict_one(a)
        restored.learn_one(a, b, c)
        fresh.learn_one(a, b, c)
    assert restored.to_dict() == fresh.to_dict()


def _events(seed, n, weights):
    rng = np.random.default_rng(seed)
    s = rng.choice([0.0, 1.0, 0.3, 0.5, 0.7, 0.999], n)
    s = np.where(rng.random(n) < 0.5, rng.random(n), s)
    y = (rng.random(n) < np.where(rng.random(n) < 0.3, 0.5, s**2)).astype(int)
    if weights == "unit":
        w = np.ones(n)
    elif weights == "dyadic":
        w = rng.choice([1.0, 0.0, 0.5, 2.25, 3.0], n)
    else:  # extreme: tiny, huge and zero weights
        w = rng.choice([1e-300, 1e300, 0.0, 1.0, 5e-324], n)
    return s, y, w


FACTORIES = [
    ("tracking", lambda: TrackingCalibeater(n_bins=7, prior_weight=2.5)),
    ("tracking0", lambda: TrackingCalibeater(n_bins=1, prior_weight=0.0)),
    ("tops", lambda: TrackingCalibeater(base=OnlinePlatt(), n_bins=10)),
    ("tracking_iso", lambda: TrackingCalibeater(base=OnlineIsotonic(), n_bins=5)),
    ("hedging", lambda: HedgingCalibeater(n_bins=4, seed=3)),
    ("hops", lambda: HedgingCalibeater(base=OnlinePlatt(), seed=1)),
    ("hedging_iso", lambda: HedgingCalibeater(base=OnlineIsotonic(), n_bins=3, seed=2**64 + 5)),
    ("foster", lambda: EpsilonCalibratedForecaster(n_bins=10, seed=0)),
    ("foster3", lambda: EpsilonCalibratedForecaster(n_bins=3, seed=12345)),
]


@pytest.mark.parametrize("name, make", FACTORIES, ids=[f[0] for f in FACTORIES])
@pytest.mark.parametrize("weights", ["unit", "dyadic", "extreme"])
def test_batch_paths_equal_the_loop_exactly(name, make, weights):
    if weights == "extreme" and name in ("tops", "hops"):
        pytest.skip("a weight of 1e300 overflows the Newton steps of OnlinePlatt")
    s, y, w = _events(zlib.crc32(f"{name}{weights}".encode()), 600, weights)
    loop, batch, mixed = make(), make(), make()
    expected = []
    for a, b, c in zip(s.tolist(), y.tolist(), w.tolist()):
        expected.append(loop.predict_one(a))
        loop.learn_one(a, b, c)
    got = batch.predict_learn_many(s, y, w)
    assert got.dtype == np.float64 and got.tolist() == expected
    assert batch.to_dict() == loop.to_dict()
    # learn_many in chunks, predict_many on the scores: the loop's floats too
    mixed.learn_many(s[:250], y[:250], w[:250])
    mixed.learn_many(s[250:].tolist(), y[250:].tolist(), w[250:].tolist())
    assert mixed.to_dict() == loop.to_dict()
    grid = np.concatenate([np.linspace(0.0, 1.0, 41), s[:50]])
    assert loop.predict_many(grid).tolist() == [loop.predict_one(v) for v in grid.tolist()]
    # an empty batch is a no-op
    assert batch.predict_learn_many([], []).shape == (0,)
    assert batch.to_dict() == loop.to_dict()


def test_batch_matches_the_oracles_on_long_streams():
    """The compiled one-pass batch against the literal oracles (exact fractions)."""
    rng = random.Random(17)
    y = [int(rng.random() < 0.37) for _ in range(400)]
    w = [rng.choice([1.0, 0.5, 2.25, 0.0]) for _ in y]
    s = [rng.random() for _ in y]
    fc = EpsilonCalibratedForecaster(n_bins=5, seed=77)
    expected, _ = ref.epsilon_calibrated_forecasts(y, w, 5, 77)
    assert fc.predict_learn_many(s, y, w).tolist() == expected
    hc = HedgingCalibeater(n_bins=4, seed=78)
    expected, _ = ref.hedging_forecasts(s, y, w, 4, 78)
    assert hc.predict_learn_many(s, y, w).tolist() == expected
    tc = TrackingCalibeater(n_bins=6, prior_weight=1.5)
    expected = ref.tracking_forecasts(s, y, w, 6, 1.5)
    assert tc.predict_learn_many(s, y, w) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("name, make", FACTORIES, ids=[f[0] for f in FACTORIES])
def test_bad_input_names_the_argument_and_changes_nothing(name, make):
    cal = make()
    owner = type(cal).__name__
    cal.learn_many([0.2, 0.7, 0.7], [0, 1, 1])
    before = cal.to_dict()
    bad = [
        (lambda: cal.learn_one(1.5, 1), ValueError, rf"'score' argument of {owner}.learn_one"),
        (lambda: cal.learn_one("0.5", 1), TypeError, r"'score' argument"),
        (lambda: cal.learn_one(0.5, 2), ValueError, rf"'label' argument of {owner}.learn_one"),
        (lambda: cal.learn_one(0.5, 1, -1.0), ValueError, r"'w' argument"),
        (lambda: cal.learn_one(0.5, 1, float("inf")), ValueError, r"'w' argument"),
        (lambda: cal.predict_one(float("nan")), ValueError, rf"{owner}.predict_one"),
        (
            lambda: cal.predict_learn_many([0.2, 0.3, 1.2], [0, 1, 1]),
            ValueError,
            r"'scores' argument.*index 2",
        ),
        (
            lambda: cal.predict_learn_many([0.2, 0.3], [0, 1], [1.0, -2.0]),
            ValueError,
            r"'w' argument.*index 1",
        ),
    ]
    for fn, exc, pattern in bad:
        with pytest.raises(exc, match=pattern):
            fn()
        assert cal.to_dict() == before
    # numpy scalars and bools take the slow path of the checks, to the same values
    other = make()
    other.learn_many([0.2, 0.7, 0.7], [0, 1, 1])
    cal.learn_one(np.float64(0.4), np.int64(1), np.float32(0.5))
    other.learn_one(0.4, 1, 0.5)
    cal.learn_one(0.4, True)
    other.learn_one(0.4, 1)
    assert cal.to_dict() == other.to_dict()


@pytest.mark.parametrize("name, make", FACTORIES, ids=[f[0] for f in FACTORIES])
def test_copies_are_independent_and_keep_the_base_shared_with_the_shell(name, make):
    s, y, w = _events(5, 200, "dyadic")
    cal = make()
    cal.learn_many(s[:100], y[:100], w[:100])
    for other in (pickle.loads(pickle.dumps(cal)), copy.deepcopy(cal)):
        if getattr(cal, "base", None) is not None:
            assert other.base is not cal.base
            assert other._kernel.base is other.base  # one base, not two
        other.learn_many(s[100:], y[100:], w[100:])
        assert other.n_events == 200 and cal.n_events == 100
    cal.learn_many(s[100:], y[100:], w[100:])
    assert cal.to_dict() == other.to_dict()


def test_bin_outcomes_dense_and_sparse_keys_share_one_order():
    st = BinOutcomes(4)
    for key, y, w in [(2, 1.0, 1.0), (10**30, 0.0, 2.0), (0, 1.0, 0.5), (7, 1.0, 1.0),
                      (2, 0.0, 1.0), (1, 1.0, 0.0)]:
        st.add(key, y, w)
        st._check()
    assert st.to_lists() == [[2, 2.0, 1.0], [10**30, 2.0, 0.0], [0, 0.5, 0.5], [7, 1.0, 1.0]]
    assert len(st) == 4 and st.get(1) == (0.0, 0.0) and st.mean(1, 0.3, 9.0) == 0.3
    again = pickle.loads(pickle.dumps(st))
    assert type(again) is BinOutcomes and again.dense == 4
    assert again.to_lists() == st.to_lists()
    again._check()
    for rows, pattern in [
        ([[1, 0.0, 0.0]], "weight"),
        ([[1, 1.0, 1.5]], "weight"),
        ([[1, float("nan"), 0.0]], "weight"),
        ([[1.5, 1.0, 0.5]], "not an int"),
        ([[1, 1.0, 0.5], [1, 2.0, 0.0]], "twice"),
    ]:
        with pytest.raises(ValueError, match=pattern):
            BinOutcomes.from_lists(rows, 4)


def test_foster_game_refuses_broken_lists_and_cells():
    with pytest.raises(ValueError, match="one length"):
        FosterGame.from_lists([[1.0, 2.0], [0.0], 3.0, 0.0])
    with pytest.raises(ValueError, match="finite and >= 0"):
        FosterGame.from_lists([[1.0, -2.0], [0.0, 0.0], 3.0, 0.0])
    g = FosterGame(3)
    with pytest.raises(IndexError, match="cell 3"):
        g.play(3, 1.0)
    with pytest.raises(IndexError, match="cell -1"):
        g.violations(-1)
    assert g.to_lists() == [[0.0] * 3, [0.0] * 3, 0.0, 0.0]


def test_broken_snapshots_are_refused():
    hedging = copy.deepcopy(OLD_SNAPSHOTS[1])
    hedging["state"]["games"][0][0] = 5  # a bin outside [0, n_bins)
    with pytest.raises(ValueError, match="bin 5"):
        BinaryCalibrator.from_dict(hedging)
    foster = copy.deepcopy(OLD_SNAPSHOTS[2])
    foster["state"]["game"] = [[0.0] * 3, [0.0] * 3, 0.0, 0.0]
    with pytest.raises(ValueError, match="4 cells"):
        BinaryCalibrator.from_dict(foster)
    tracking = copy.deepcopy(OLD_SNAPSHOTS[0])
    tracking["state"]["bins"][0][1] = -1.0
    with pytest.raises(ValueError, match="weight"):
        BinaryCalibrator.from_dict(json.loads(json.dumps(tracking)))


class _PlattThroughPython(OnlinePlatt):
    """OnlinePlatt with its methods overridden: the calibeaters must call them (the
    C API of the compiled base is used only when nothing is overridden)."""

    calls = 0

    def predict_one(self, score):
        type(self).calls += 1
        return super().predict_one(score)

    def learn_one(self, score, label, w=1.0):
        type(self).calls += 1
        super().learn_one(score, label, w)


@pytest.mark.parametrize("klass", [TrackingCalibeater, HedgingCalibeater])
def test_online_platt_base_through_c_equals_through_python(klass):
    """TOPS / HOPS call OnlinePlatt through its C API; the forecasts are those of the
    oracle on the expert forecasts of a shadow OnlinePlatt fed predict-then-learn."""
    s, y, w = _events(9, 500, "dyadic")
    s, y, w = s.tolist(), y.tolist(), w.tolist()
    kw = {"seed": 4} if klass is HedgingCalibeater else {}
    fast = klass(base=OnlinePlatt(), **kw)
    slow = klass(base=_PlattThroughPython(), **kw)
    shadow, expert = OnlinePlatt(), []
    for a, b, c in zip(s, y, w):
        expert.append(shadow.predict_one(a))
        shadow.learn_one(a, b, c)
    _PlattThroughPython.calls = 0
    got_fast = fast.predict_learn_many(s, y, w).tolist()
    assert _PlattThroughPython.calls == 0
    got_slow = []
    for a, b, c in zip(s, y, w):
        got_slow.append(slow.predict_one(a))
        slow.learn_one(a, b, c)
    assert _PlattThroughPython.calls >= 3 * len(s)  # the overrides were called
    assert got_fast == got_slow
    if klass is TrackingCalibeater:
        assert got_fast == pytest.approx(ref.tracking_forecasts(expert, y, w, 10, 1.0), abs=1e-12)
    else:
        assert got_fast == ref.hedging_forecasts(expert, y, w, 10, 4)[0]
    assert fast.base.to_dict() == shadow.to_dict()
    assert fast.to_dict()["state"] == slow.to_dict()["state"]


@pytest.mark.parametrize("klass", [TrackingCalibeater, HedgingCalibeater])
def test_an_event_the_base_refuses_changes_nothing(klass):
    cal = klass(base=OnlinePlatt())
    cal.learn_many([0.2, 0.8, 0.6], [0, 1, 1])
    before = cal.to_dict()
    for fn in (
        lambda: cal.learn_one(0.5, 1, 1e300),
        lambda: cal.predict_learn_many([0.5], [1], [1e300]),
    ):
        with pytest.raises(ValueError, match="'w' argument of OnlinePlatt.learn_one"):
            fn()
        assert cal.to_dict() == before


@pytest.mark.parametrize("k, n_bins", [(2, 10), (3, 16), (5, 10), (25, 10)])
def test_multi_joint_bins_dense_sparse_and_beyond_64_bits(k, n_bins):
    """Joint bins in an array (n_bins ** k <= 4096), in a dict, and with keys past
    2 ** 63 (Python ints): the oracle's forecasts, and the keys it implies."""
    from streamcal import MultiCalibeater

    rng = random.Random(k)
    experts = [
        tuple(rng.choice([rng.random(), 0.0, 1.0, round(rng.random(), 1)]) for _ in range(k))
        for _ in range(150)
    ]
    experts += experts[:50]  # repeated joint bins
    labels = [int(rng.random() < e[0]) for e in experts]
    weights = [rng.choice([1.0, 0.0, 0.5, 2.25]) for _ in experts]
    expected = ref.joint_tracking_forecasts(experts, labels, weights, n_bins, 1.0)
    cal = MultiCalibeater(k, n_bins=n_bins)
    got = cal.predict_learn_many(experts, labels, weights)
    assert got == pytest.approx(expected, abs=1e-12)
    cal._stats._check()
    keys = {
        sum(ref.bin_of(v, n_bins) * n_bins**j for j, v in enumerate(row))
        for row, w in zip(experts, weights)
        if w > 0
    }
    assert {key for key, _, _ in cal._stats.items()} == keys
    restored = MultiCalibeater.from_dict(json.loads(json.dumps(cal.to_dict())))
    assert restored.to_dict() == cal.to_dict()
    assert restored.predict_many(experts[:20]).tolist() == cal.predict_many(experts[:20]).tolist()


def test_exponential_weights_give_the_floats_of_the_python_version():
    """The compiled aggregate / update against the pure-Python code they replace
    (commit 35af34d), float for float; copies keep the losses."""
    import math

    from streamcal.core.calibeating import ExponentialWeights

    def aggregate(losses, eta, forecasts):
        lo = min(losses)
        num = den = 0.0
        for v, x in zip(losses, forecasts):
            e = math.exp(-eta * (v - lo))
            num += e * x
            den += e
        return min(1.0, max(0.0, num / den))

    rng = random.Random(3)
    for eta in (0.5, 3.0, 1e-3):
        ew = ExponentialWeights(3, eta)
        losses = [0.0, 0.0, 0.0]
        for _ in range(300):
            x = (rng.random(), rng.choice([0.0, 1.0]), round(rng.random(), 2))
            y = float(rng.random() < 0.4)
            w = rng.choice([1.0, 0.0, 0.5, 2.25])
            assert ew.aggregate(x) == aggregate(losses, eta, x)
            ew.update(x, y, w)
            if w > 0.0:
                for k, v in enumerate(x):
                    d = v - y
                    losses[k] += w * d * d
            assert ew.losses == losses
        ew._check()
        for other in (pickle.loads(pickle.dumps(ew)), copy.deepcopy(ew)):
            assert type(other) is ExponentialWeights and other.losses == ew.losses
            assert other.learning_rate == eta and other.weights() == ew.weights()
    with pytest.raises(ValueError, match="3 numbers"):
        ew.losses = [0.0, 1.0]


# ---------------------------------------------------------------------- per-event cost


def _python_calls(cal, events):
    """The qualified names of the Python functions entered during the ``predict_one``
    / ``learn_one`` loop over ``events`` (the compiled code enters none of its own)."""
    import sys

    names = []

    def hook(frame, event, arg):
        if event == "call":
            names.append(frame.f_code.co_qualname)

    predict, learn = cal.predict_one, cal.learn_one
    sys.setprofile(hook)
    try:
        for s, y in events:
            predict(s)
            learn(s, y)
    finally:
        sys.setprofile(None)
    return names


@pytest.mark.parametrize(
    "make",
    [
        lambda: TrackingCalibeater(),
        lambda: HedgingCalibeater(seed=0),
        lambda: EpsilonCalibratedForecaster(seed=0),
    ],
    ids=["TrackingCalibeater", "HedgingCalibeater", "EpsilonCalibratedForecaster"],
)
def test_per_event_path_enters_no_python_function_but_the_shell(make):
    """Issue 11's per-event targets (<= 0.2x / 0.5x river LR): each event costs the
    shell's two methods and compiled code only. HedgingKernel's weight rule called
    ``_validation.weight_capacity`` (Python) on every ``learn_one``, two thirds of the
    event; it is now computed once per kernel."""
    cal = make()
    s, y, _ = _stream(7, 200)
    events = list(zip(s, y))
    cal.learn_many(s, y)
    name = type(cal).__name__
    calls = _python_calls(cal, events)
    assert set(calls) == {f"{name}.predict_one", f"{name}.learn_one"}
    assert len(calls) == 2 * len(events)
