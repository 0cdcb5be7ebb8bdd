"""The compiled ``HistogramBinning`` (issue 11): :class:`streamcal.core._binning.Int64Binner`.

``tests/test_calibrators_histogram.py`` holds the exactness tests against the oracle of
``tests/references_binning.py``; they run on the compiled binner. Here: the batch paths
(``learn_many``, ``predict_many``, ``predict_learn_many``) equal the loop exactly, with the
epoch boundaries inside batches cut at every offset; the hand-over to the general binner
(Python integers) when a sum would leave int64, in the middle of a batch too; bad
batches name the index and change nothing; snapshots written before the compiled
binner (pasted below, made by commit 35af34d's ``to_dict()``) restore and go on exactly
like a calibrator that saw the whole stream.
"""

from __future__ import annotations

import doctest
import json
import math
import pickle
import random

import numpy as np
import pytest

from streamcal import HistogramBinning
from streamcal.base import SNAPSHOT_FORMAT, BinaryCalibrator
from streamcal.core import _binning
from streamcal.core.binning import HistogramBinner

try:  # tests/ as a package (tests/__init__.py) or as a plain directory on sys.path
    from tests import references_binning as ref
except ImportError:  # pragma: no cover
    import references_binning as ref


CONFIGS = [
    {},
    {"n_bins": 1},
    {"n_bins": 7, "strategy": "quantile"},
    {"n_bins": 1, "strategy": "quantile"},
    {"n_bins": 5, "window_size": 13},
    {"n_bins": 4, "strategy": "quantile", "window_size": 1},
    {"n_bins": 6, "strategy": "quantile", "window_size": 37},
    {"n_bins": 8, "prior_strength": 2.0},
    {"n_bins": 5, "strategy": "quantile", "prior_strength": 0.3, "window_size": 20},
    # priors whose estimates take many bits: 0.1 (55 binary fraction digits), tiny
    {"n_bins": 10, "prior_strength": 0.1},
    {"n_bins": 3, "strategy": "quantile", "prior_strength": 1e-3},
]
IDS = [",".join(f"{k}={v}" for k, v in p.items()) or "default" for p in CONFIGS]


def stream(seed, n, weights="mixed"):
    rng = np.random.default_rng(seed)
    s = np.round(rng.random(n), 2)
    s[rng.random(n) < 0.05] = 0.0
    s[rng.random(n) < 0.05] = 1.0
    y = (rng.random(n) < s).astype(np.int64)
    if weights == "unit":
        w = np.ones(n)
    elif weights == "mixed":
        w = rng.choice([1.0, 1.0, 0.0, 0.5, 2.25, 3.0, 0.125], n)  # few fraction bits
    elif weights == "decimal":  # 0.1 = m / 2**55: int64 fills up after ~100 events
        w = rng.choice([1.0, 0.0, 0.1, 0.3, 2.0], n)
    else:  # extreme: forces the general binner at some event
        w = rng.choice([1.0, 0.0, 0.5, 1e-300, 1e300, 7.0], n, p=[0.6, 0.1, 0.1, 0.05, 0.05, 0.1])
    return s, y, w


def loop(params, s, y, w):
    cal = HistogramBinning(**params)
    preds = []
    for a, b, c in zip(s.tolist(), y.tolist(), w.tolist()):
        preds.append(cal.predict_one(a))
        cal.learn_one(a, b, c)
    return cal, preds


def dump(cal):
    return json.dumps(cal.to_dict())


# ---------------------------------------------------------------------- batch == loop


@pytest.mark.parametrize("params", CONFIGS, ids=IDS)
@pytest.mark.parametrize("weights", ["unit", "mixed", "decimal", "extreme"])
def test_batches_equal_the_loop_at_every_cut(params, weights):
    """Cut the stream into batches of sizes 1..9 and 97, 1000: every cut lands on epoch
    boundaries, merges and (with extreme weights) the hand-over at some point."""
    s, y, w = stream(len(IDS[CONFIGS.index(params)]) + len(weights), 1100, weights)
    want, preds = loop(params, s, y, w)
    for sizes in ([1000, 100], [1, 2, 3, 4, 5, 6, 7, 8, 9], [97]):
        plm, lm = HistogramBinning(**params), HistogramBinning(**params)
        got, i, j = [], 0, 0
        while i < len(s):
            n = sizes[j % len(sizes)]
            got.extend(plm.predict_learn_many(s[i : i + n], y[i : i + n], w[i : i + n]).tolist())
            lm.learn_many(s[i : i + n], y[i : i + n], w[i : i + n])
            i, j = i + n, j + 1
        assert got == preds, sizes
        assert dump(plm) == dump(lm) == dump(want), sizes
        plm._check()
        lm._check()
        assert plm.predict_many(s).tolist() == [want.predict_one(x) for x in s.tolist()]
    if weights in ("unit", "mixed"):
        assert want._compiled
    elif weights == "extreme" or params.get("window_size") is None:
        assert not want._compiled  # the switch is one way


@pytest.mark.parametrize("params", CONFIGS, ids=IDS)
def test_compiled_every_prefix_matches_the_oracle(params):
    s, y, w = stream(3, 160)
    cal = HistogramBinning(**params)
    events = list(zip(s.tolist(), y.tolist(), w.tolist()))
    for t, (a, b, c) in enumerate(events):
        p = cal.predict_learn_many([a], [b], [c])[0]
        fit = ref.histogram_binning(
            events[:t], cal.n_bins, cal.strategy, cal.window_size, cal.prior_strength
        )
        assert p == ref.predict(fit, a)
        assert cal._compiled
    cal._check()


def test_unit_weights_stay_compiled_and_give_numpy_mean():
    rng = np.random.default_rng(5)
    s = rng.random(200_000)
    y = (rng.random(200_000) < s).astype(np.int64)
    cal = HistogramBinning(n_bins=20, prior_strength=0)
    out = cal.predict_learn_many(s, y)
    assert cal._compiled and out.shape == (200_000,)
    k = np.searchsorted(np.asarray(cal.edges[1:-1]), s, side="right")
    for j, b in enumerate(cal.bins):
        assert b.value == np.mean(y[k == j]) and b.n_events == (k == j).sum()
    cal._check()


# ---------------------------------------------------------------------- int64 and the hand-over


@pytest.mark.parametrize(
    "weights, compiled",
    [
        ([2.0**60, 2.0**60, 2.0**60], True),  # total 3 * 2**60 < 2**62
        ([2.0**60] * 4, False),  # total would reach 2**62
        ([2.0**62], False),
        ([0.5**61, 1.0], True),  # E = 61: 1.0 is 2**61 units
        ([0.5**61, 1.0, 1.0], False),  # 2**62 units
        ([0.5**62], False),
        ([5e-324], False),
        ([1e300], False),
        ([0.1, 1.0, 2.0**5], True),  # 0.1 = m / 2**55, m < 2**53
        ([0.1, 1.0, 2.0**7], False),  # 2**62 units and more
    ],
)
def test_int64_bound_and_hand_over(weights, compiled):
    events = [(0.3 + 0.1 * (i % 4), i % 2, wi) for i, wi in enumerate(weights)]
    for params in ({"n_bins": 2}, {"n_bins": 2, "window_size": 2}, {"n_bins": 2, "strategy": "quantile"}):
        cal = HistogramBinning(**params)
        for a, b, c in events:
            cal.learn_one(a, b, c)
            cal._check()
        if "window_size" not in params:
            assert cal._compiled == compiled
        assert isinstance(cal._core, _binning.Int64Binner) == cal._compiled
        fit = ref.histogram_binning(events, 2, cal.strategy, cal.window_size, cal.prior_strength)
        assert [b.value for b in cal.bins] == fit["values"]
        assert [b.weight for b in cal.bins] == [float(x) for x in fit["weights"]]
        batch = HistogramBinning(**params)
        batch.learn_many(*zip(*events))
        assert dump(batch) == dump(cal)


def test_refused_event_changes_nothing():
    b = _binning.Int64Binner(3, "quantile", 4, 0.5)
    for t in range(9):
        assert b.learn(t / 9, float(t % 2), 1.0)
    before = b.to_state()
    assert not b.learn(0.5, 1.0, 1e-300)
    assert b.to_state() == before
    s = np.array([0.1, 0.2, 0.3])
    out = np.full(3, -1.0)
    g = b.to_general()
    want = [g.predict(0.1)]
    g.learn(0.1, 1.0, 1.0)
    want.append(g.predict(0.2))
    assert b.predict_learn_many(s, np.ones(3), np.array([1.0, 1e300, 1.0]), out) == 1
    assert out.tolist() == [*want, -1.0]  # event 1 predicted, not learnt; 2 untouched
    assert b.to_state() == g.to_state()
    b._check()


# ---------------------------------------------------------------------- bad input


@pytest.mark.parametrize("params", [{}, {"strategy": "quantile", "window_size": 5}])
def test_bad_batch_element_names_index_and_changes_nothing(params):
    cal = HistogramBinning(**params)
    cal.learn_many([0.1, 0.5, 0.9], [0, 1, 1])
    before = dump(cal)
    for args, index in [
        (([0.1, 0.2, 1.5], [0, 1, 1]), 2),
        (([0.1, math.nan], [0, 1]), 1),
        (([0.1, 0.2], [0, 2]), 1),
        (([0.1, 0.2], [0, 1], [1.0, -1.0]), 1),
        (([0.1, 0.2], [0, 1], [math.inf, 1.0]), 0),
    ]:
        for method in (cal.predict_learn_many, cal.learn_many):
            with pytest.raises(ValueError, match=rf"index {index}\b"):
                method(*args)
            assert dump(cal) == before


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda c: c.learn_one(1.5, 1), "The 'score' argument of HistogramBinning.learn_one"),
        (lambda c: c.learn_one(0.5, 2), "The 'label' argument of HistogramBinning.learn_one"),
        (lambda c: c.learn_one(0.5, 1, -1.0), "The 'w' argument of HistogramBinning.learn_one"),
        (lambda c: c.learn_one(0.5, 1, math.nan), "The 'w' argument of HistogramBinning.learn_one"),
        (lambda c: c.predict_one(-0.1), "The 'score' argument of HistogramBinning.predict_one"),
        (lambda c: c.predict_one("0.5"), "The 'score' argument of HistogramBinning.predict_one"),
    ],
)
def test_compiled_per_event_messages(call, message):
    for cal in (HistogramBinning(), HistogramBinning(window_size=3)):
        cal.learn_one(0.5, 1)
        before = dump(cal)
        with pytest.raises((ValueError, TypeError), match=message):
            call(cal)
        assert dump(cal) == before
    # the same messages once widened to the general binner
    wide = HistogramBinning()
    wide.learn_one(0.5, 1, 1e-300)
    assert not wide._compiled
    with pytest.raises((ValueError, TypeError), match=message):
        call(wide)


def test_numpy_and_bool_inputs_go_through_the_slow_path():
    a, b = HistogramBinning(prior_strength=0), HistogramBinning(prior_strength=0)
    a.learn_one(np.float64(0.25), np.int64(1), np.float32(0.5))
    b.learn_one(0.25, True, 0.5)
    a.learn_one(1, False)
    b.learn_one(1.0, 0)
    assert dump(a) == dump(b)
    assert a.predict_one(np.float32(0.25)) == b.predict_one(0.25) == 1.0


# ---------------------------------------------------------------------- snapshots


# Written by ``HistogramBinning.to_dict()`` at commit 35af34d (pure-Python binner), after
# learning EVENTS (``big``: BIG_EVENTS, whose 1e-300 weight gives sums beyond int64).
EVENTS = [
    (round((t * 0.37) % 1, 3), t % 3 == 0, [1.0, 0.5, 0.0, 2.0, 1.0][t % 5])
    for t in range(1, 14)
]
BIG_EVENTS = [(0.25, 1, 1e-300), (0.75, 0, 3.0), (0.5, 1, 1.0)]
OLD_SNAPSHOTS = {
    'uniform': json.loads(
        '{"class": "HistogramBinning", "format": 1, "params": {"n_bins": 4, "strategy": "'
        'uniform", "window_size": null, "prior_strength": 0.0}, "state": {"edges": [0.0, '
        '0.25, 0.5, 0.75, 1.0], "W": [6, 5, 2, 10], "S": [5, 2, 0, 0], "counts": [3, 3, 1'
        ', 3], "E": 1, "n_events": 13, "n_pos": 10, "n_cal": 0, "next_boundary": 0, "next'
        '_stop": 0, "window": null, "cells": null}}'
    ),
    'quantile': json.loads(
        '{"class": "HistogramBinning", "format": 1, "params": {"n_bins": 3, "strategy": "'
        'quantile", "window_size": null, "prior_strength": 0.0}, "state": {"edges": [0.0,'
        ' 0.33, 0.7, 1.0], "W": [6, 5, 12], "S": [5, 2, 0], "counts": [3, 3, 4], "E": 1, '
        '"n_events": 13, "n_pos": 10, "n_cal": 8, "next_boundary": 16, "next_stop": 16, "'
        'window": null, "cells": {"xs": [0.11, 0.22, 0.33, 0.37, 0.48, 0.7, 0.85, 0.96], '
        '"ns": [1, 1, 1, 1, 1, 1, 1, 1], "ws": [4, 1, 2, 1, 2, 2, 2, 4], "ss": [4, 1, 2, '
        '0, 0, 0, 0, 0], "big": false, "total": 18, "pending_scores": [0.07, 0.81], "pend'
        'ing_weights": [-1, -4]}}}'
    ),
    'window': json.loads(
        '{"class": "HistogramBinning", "format": 1, "params": {"n_bins": 3, "strategy": "'
        'quantile", "window_size": 5, "prior_strength": 0.5}, "state": {"edges": [0.0, 0.'
        '33, 0.81, 1.0], "W": [1, 4, 4], "S": [0, 2, 0], "counts": [1, 2, 1], "E": 1, "n_'
        'events": 13, "n_pos": 10, "n_cal": 4, "next_boundary": 15, "next_stop": 15, "win'
        'dow": [[0.33, 1.0, 1.0], [0.7, 0.0, 1.0], [0.07, 0.0, 0.5], [0.44, 1.0, 0.0], [0'
        '.81, 0.0, 2.0]], "cells": null}}'
    ),
    'big': json.loads(
        '{"class": "HistogramBinning", "format": 1, "params": {"n_bins": 2, "strategy": "'
        'uniform", "window_size": 4, "prior_strength": 0.0}, "state": {"edges": [0.0, 0.5'
        ', 1.0], "W": [6032057205060441, 241282288202417633953684981726309427082010090069'
        '94023127186460259846489377974909173483894312553062974832901700057603348659254161'
        '99991625271642367839106780408877342036683158413940273615623631672158715339642438'
        '23371603497843056550858757619089662026830125820704117248975696961181897199752965'
        '19556940632582457459891765248], "S": [6032057205060441, 603205720506044084884212'
        '45431577356770502522517485057817966150649616223444937272933709735781382657437082'
        '25425014400837164813540499979063179105919597766951022193355091707896034850684039'
        '05907918039678834910609558429008744607641377146894047724155067075314551760293122'
        '4392424029547429993824129889235158145614364972941312], "counts": [1, 2], "E": 10'
        '49, "n_events": 3, "n_pos": 3, "n_cal": 0, "next_boundary": 0, "next_stop": 0, "'
        'window": [[0.25, 1.0, 1e-300], [0.75, 0.0, 3.0], [0.5, 1.0, 1.0]], "cells": null'
        '}}'
    ),
}
MORE = [(0.07, 1, 1.0), (0.5, 0, 0.25), (0.81, 1, 1.0), (0.33, 0, 2.0), (0.99, 1, 1.0)] * 4


@pytest.mark.parametrize("name", list(OLD_SNAPSHOTS))
def test_snapshots_of_the_pure_python_binner_restore(name):
    snap = OLD_SNAPSHOTS[name]
    events = BIG_EVENTS if name == "big" else EVENTS
    restored = BinaryCalibrator.from_dict(snap)
    assert restored._compiled == (name != "big")
    restored._check()
    snap = {**snap, "format": SNAPSHOT_FORMAT}  # written again in the current format
    assert restored.to_dict() == snap
    fresh = HistogramBinning(**snap["params"])
    for a, b, c in events:
        fresh.learn_one(a, b, c)
    assert dump(fresh) == json.dumps(snap)
    for a, b, c in MORE:
        assert restored.predict_one(a) == fresh.predict_one(a)
        restored.learn_one(a, b, c)
        fresh.learn_one(a, b, c)
        restored._check()
    assert dump(restored) == dump(fresh)
    fit = ref.histogram_binning(
        events + MORE, fresh.n_bins, fresh.strategy, fresh.window_size, fresh.prior_strength
    )
    assert [b.value for b in restored.bins] == fit["values"]


@pytest.mark.parametrize("params", CONFIGS, ids=IDS)
def test_compiled_state_round_trips(params):
    s, y, w = stream(9, 300)
    cal = HistogramBinning(**params)
    cal.learn_many(s[:200], y[:200], w[:200])
    copies = [
        BinaryCalibrator.from_dict(json.loads(dump(cal))),
        pickle.loads(pickle.dumps(cal)),
        pickle.loads(pickle.dumps(cal._core)),
    ]
    assert all(type(c._core if hasattr(c, "_core") else c) is _binning.Int64Binner for c in copies)
    general = HistogramBinner.from_state(*cal._new_core(), cal._core.to_state())
    assert general.to_state() == cal._core.to_state()
    for c in copies[:2]:
        assert dump(c) == dump(cal)
        c.learn_many(s[200:], y[200:], w[200:])
    cal.learn_many(s[200:], y[200:], w[200:])
    assert dump(copies[0]) == dump(copies[1]) == dump(cal)
    assert copies[2].to_state() != cal._core.to_state()  # the copy is independent


def test_compiled_module_doctests():
    result = doctest.testmod(_binning)
    assert result.attempted >= 5 and result.failed == 0


@pytest.mark.parametrize("first_weight", [None, 0.1, 2.0**-40])
def test_learn_many_without_weights_equals_the_loop(first_weight):
    """``learn_many`` without ``w`` runs a lane that reads no weights; it must learn what
    the loop of ``learn_one`` learns, also when the int64 room runs out inside the batch
    (after a first weight of 0.1 the unit is 2**-56: room for 64 unit events, then the
    batch goes on in the general representation; 2**-40 leaves room for 2**22)."""
    rng = np.random.default_rng(7)
    s = rng.random(5000)
    y = (rng.random(5000) < s).astype(int)
    cals = [HistogramBinning(n_bins=7) for _ in range(3)]
    if first_weight is not None:
        for cal in cals:
            cal.learn_one(0.5, 1, first_weight)
    cals[0].learn_many(s, y)
    cals[1].learn_many(s, y, np.ones(len(s)))
    for a, b in zip(s.tolist(), y.tolist()):
        cals[2].learn_one(a, b)
    assert cals[0].to_dict() == cals[1].to_dict() == cals[2].to_dict()
    q = np.linspace(0, 1, 23)
    assert cals[0].predict_many(q).tolist() == cals[2].predict_many(q).tolist()


# ---------------------------------------------------------------------- the prior in C


def _prior_estimate(S, W, a, m, E):
    """The estimate as the Python integers of ``prior_terms`` give it (one rounding)."""
    from streamcal.core.binning import prior_terms

    [(sh, num, den)] = prior_terms([0.0, m + m], a, E)  # one bin, midpoint m
    return ((S << sh) + num) / ((W << sh) + den)


def test_prior_estimate_in_c_rounds_as_the_python_integers():
    """``Int64Binner`` computes ``(S + a m 2**E) / (W + a 2**E)`` in double-double
    arithmetic (before: Python integers, about 1 us of each learn_one with the default
    prior); it must round as the integers do, and answer None (fall back to them) when
    the exact ratio may be a midpoint between two doubles."""
    rng = random.Random(11)
    answered = 0
    for _ in range(20_000):
        E = rng.choice([0, 0, 0, 1, 3, 10, 55, 200])
        W = rng.choice([rng.randrange(1, 50), rng.randrange(1, 2**40), rng.randrange(1, 2**53)])
        S = rng.choice([0, W, rng.randrange(0, W + 1), rng.randrange(0, W + 1)])
        a = rng.choice([2.0, 0.5, 0.1, 3.7, 1e-3, rng.random() * 10, 1e10, 1e-200, 1e200])
        m = rng.choice([rng.random() / 2, 0.05, 0.15, 0.25, 0.5, 0.0])  # m + m in [0, 1]
        got = _binning._prior_ratio(S, W, a, m, E)
        if got is not None:
            answered += 1
            assert got == _prior_estimate(S, W, a, m, E), (S, W, a, m, E)
    assert answered > 15_000  # the fast path is the usual one
    # (1 + 2 m) / 4 with m = 1/2 + 2**-53: exactly the midpoint 1/2 + 2**-54
    assert _binning._prior_ratio(1, 2, 2.0, 0.5 + 2**-53, 0) is None


def test_prior_estimate_on_a_midpoint_falls_back_and_rounds_to_even():
    """Uniform-mass edges (0, 2**-52, 1) after 4 events put the midpoint of bin 1 at
    1/2 + 2**-53; with a = 2 and the events 2**-52 (label 1) and 0.7 (label 0) in it, the
    exact estimate (1 + 2 m) / (2 + 2) is the midpoint 1/2 + 2**-54: ties to even, 0.5."""
    cal = HistogramBinning(n_bins=2, strategy="quantile", prior_strength=2.0)
    events = [(0.0, 0), (0.0, 0), (2.0**-52, 1), (0.7, 0)]
    for s, y in events:
        cal.learn_one(s, y)
    assert cal.edges == (0.0, 2.0**-52, 1.0)
    fit = ref.histogram_binning(
        [(s, y, 1.0) for s, y in events], 2, "quantile", None, 2.0
    )
    assert cal.predict_one(0.8) == ref.predict(fit, 0.8) == 0.5
    assert cal._compiled
    cal._check()
