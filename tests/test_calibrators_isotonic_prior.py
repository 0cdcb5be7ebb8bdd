"""OnlineIsotonic(prior_strength=a): the prior on block means of streamcal.core.prior.

The reference is ``references.isotonic_with_prior``: the isotonic fit refitted from
scratch with the pseudo-event (weight ``a`` relative to a new event, label 1/2) at the
cell the read-out uses (issue 13, item 2).
"""

from __future__ import annotations

import json
import math
import pickle
import random

import numpy as np
import pytest

try:
    from tests import references as ref
    from tests.test_calibrators_isotonic import make_stream
except ImportError:  # run from inside tests/
    import references as ref
    from test_calibrators_isotonic import make_stream
from streamcal import OnlineIsotonic
from streamcal.base import BinaryCalibrator
from streamcal.checks import _common
from streamcal.core.prior import ISOTONIC_PRIOR_MEAN, posterior_mean

PARAMS = [
    {},
    {"interpolation": "linear"},
    {"window_size": 9},
    {"resolution": 0.05},
    {"resolution": 0.1, "interpolation": "linear"},
    {"half_life": 4.0},
    {"half_life": 0.5, "window_size": 30, "resolution": 0.1},
]


def oracle(cal, events, s):
    keys, labels, weights = ref.online_isotonic_sample(
        events, cal.window_size, cal.half_life, cal.resolution, next_event=True
    )
    k = s if cal.resolution is None else ref.grid_round(s, cal.resolution)
    return ref.isotonic_with_prior(
        keys, labels, weights, k, cal.prior_strength, ISOTONIC_PRIOR_MEAN, cal.interpolation
    )


@pytest.mark.parametrize("params", PARAMS, ids=repr)
@pytest.mark.parametrize("weights", ["unit", "int", "float"])
@pytest.mark.parametrize("seed", range(3))
def test_matches_batch_oracle_at_every_prefix(params, weights, seed):
    """Against refitting with the pseudo-event, after every event of the first 60 and
    every fourth after, at seen and unseen scores, 0 and 1; ties from grids."""
    rng = random.Random(f"prior-oracle-{params}-{weights}-{seed}")
    kind = ["grid1", "uniform", "endpoints", "grid2"][(seed + len(params)) % 4]
    events = make_stream(rng, 150, kind, weights)
    a = [0.5, 1.0, 3.0][seed]
    cal = OnlineIsotonic(prior_strength=a, **params)
    for j, (s, y, w) in enumerate(events):
        cal.learn_one(s, y, w)
        if j >= 60 and j % 4:
            continue
        prefix = events[: j + 1]
        seen = sorted({e[0] for e in prefix})
        queries = [0.0, 1.0, rng.random(), rng.random()] + seen[:: max(1, len(seen) // 5)]
        for q in queries:
            p = cal.predict_one(q)
            if not any(e[2] > 0 for e in prefix[-(cal.window_size or len(prefix)) :]):
                assert p == q  # cold start: the score
                continue
            want = oracle(cal, prefix, q)
            tol = 1e-12 if cal.half_life is None else 1e-10
            assert math.isclose(p, want, rel_tol=tol, abs_tol=tol), (j, q, p, want)
            assert 0.0 < p < 1.0


def test_by_hand():
    """Three dry hours then a wet one: the exact fit says 0.0 below 0.8; the pseudo-event
    (weight 1, label 1/2) pools with the zeros at and above its cell."""
    cal = OnlineIsotonic(prior_strength=1.0)
    cal.learn_many([0.1, 0.2, 0.3, 0.8], [0, 0, 0, 1])
    assert OnlineIsotonic().predict_one(0.25) == 0.25
    assert [cal.predict_one(s) for s in (0.05, 0.1, 0.25, 0.3, 0.9)] == [
        posterior_mean(0.0, 3.0, 1.0, 0.5),  # at 0.1: pooled with 0.2 and 0.3
        posterior_mean(0.0, 3.0, 1.0, 0.5),
        posterior_mean(0.0, 2.0, 1.0, 0.5),  # at 0.2: with 0.3
        posterior_mean(0.0, 1.0, 1.0, 0.5),  # at 0.3 alone
        posterior_mean(1.0, 1.0, 1.0, 0.5),  # the last block: 1.5 / 2
    ]
    assert [b.value for b in cal.blocks] == [0.0, 1.0]  # the fit itself is unchanged


@pytest.mark.parametrize("interpolation", ["step", "linear"])
@pytest.mark.parametrize("kind", ["zeros", "ones", "mixed"])
def test_strictly_inside_and_monotone(interpolation, kind):
    """With a prior, every prediction is strictly inside (0, 1), also where every label
    is 0 or 1 and at scores 0 and 1, and non-decreasing in the score on a fine grid
    (exactly so with dyadic strengths and weights, whose sums do not round)
    (shrinking each block towards 1/2 alone would not be: a light block of zeros below a
    heavy block of rate 0.01 would overtake it)."""
    rng = random.Random(f"prior-bounds-{interpolation}-{kind}")
    for a in (1e-3, 0.5, 2.0, 50.0):
        cal = OnlineIsotonic(interpolation=interpolation, prior_strength=a)
        grid = np.linspace(0.0, 1.0, 401)
        for j in range(300):
            s = rng.choice([0.0, 1.0, round(rng.random(), 2), rng.random()])
            y = {"zeros": 0, "ones": 1}.get(kind, int(rng.random() < s**2))
            cal.learn_one(s, y, rng.choice([1.0, 1.0, 3.0, 0.25]))
            if j % 10 == 0:
                p = cal.predict_many(grid)
                assert np.all((p > 0.0) & (p < 1.0)), (a, j, p.min(), p.max())
                # non-decreasing up to the rounding of the pseudo-event's addition to
                # different cells of one final block (an ulp or two)
                assert np.all(np.diff(p) >= -4e-16 * p[1:]), (a, j, np.diff(p).min())


def test_exactly_monotone_with_dyadic_weights():
    rng = random.Random("prior-dyadic")
    for interpolation in ("step", "linear"):
        cal = OnlineIsotonic(interpolation=interpolation, prior_strength=0.5)
        grid = np.linspace(0.0, 1.0, 1001)
        for j in range(400):
            s = round(rng.random(), 2)
            cal.learn_one(s, int(rng.random() < s), rng.choice([1.0, 2.0, 0.25]))
            if j % 20 == 0:
                assert np.all(np.diff(cal.predict_many(grid)) >= 0.0)


def test_monotone_where_shrinking_blocks_alone_is_not():
    """One event at 0.1 labelled 0 below 1,000 events at 0.5 with rate 0.01: shrinking
    each block towards 1/2 on its own would give 0.25 at 0.1 and about 0.0105 at 0.5."""
    cal = OnlineIsotonic(prior_strength=1.0)
    cal.learn_one(0.1, 0)
    cal.learn_many([0.5] * 1000, [1] * 10 + [0] * 990)
    assert [round(b.value, 4) for b in cal.blocks] == [0.0, 0.01]
    assert posterior_mean(0.0, 1.0, 1.0, 0.5) > posterior_mean(10.0, 1000.0, 1.0, 0.5)
    lo, hi = cal.predict_one(0.1), cal.predict_one(0.5)
    assert 0.0 < lo <= hi
    assert lo == posterior_mean(10.0, 1001.0, 1.0, 0.5)  # pooled with the block above


@pytest.mark.parametrize("params", PARAMS, ids=repr)
def test_batch_methods_are_the_loop_and_predictions_keep_the_state(params):
    rng = random.Random(f"prior-batch-{params}")
    events = make_stream(rng, 300, "grid2", "float")
    s, y, w = (np.array(c, dtype=float) for c in zip(*events))
    loop, batch = OnlineIsotonic(prior_strength=0.7, **params), OnlineIsotonic(prior_strength=0.7, **params)
    want = []
    for si, yi, wi in zip(s.tolist(), y.tolist(), w.tolist()):
        want.append(loop.predict_one(si))
        before = json.dumps(loop.to_dict()), _common.fingerprint(loop)
        loop.predict_many(np.array([0.0, si, 1.0, rng.random()]))
        assert (json.dumps(loop.to_dict()), _common.fingerprint(loop)) == before
        loop.learn_one(si, yi, wi)
    assert batch.predict_learn_many(s, y, w).tolist() == want
    grid = np.linspace(0, 1, 301)
    assert batch.predict_many(grid).tolist() == [loop.predict_one(q) for q in grid.tolist()]
    loop._check()


def test_no_prior_is_the_exact_fit():
    """prior_strength=0 (the default) predicts the same floats as before: the exact fit,
    with its zeros."""
    rng = random.Random("prior-zero")
    events = make_stream(rng, 300, "grid1", "unit")
    s, y, w = (np.array(c, dtype=float) for c in zip(*events))
    p = OnlineIsotonic().predict_learn_many(s, y, w)
    assert OnlineIsotonic(prior_strength=0.0).predict_learn_many(s, y, w).tolist() == p.tolist()
    assert OnlineIsotonic().prior_strength == 0.0
    assert (p == 0.0).any()


def test_a_tiny_prior_tends_to_the_exact_fit():
    rng = random.Random("prior-tiny")
    events = make_stream(rng, 200, "uniform", "unit")
    s, y, w = (np.array(c, dtype=float) for c in zip(*events))
    for interpolation in ("step", "linear"):
        exact = OnlineIsotonic(interpolation=interpolation).predict_learn_many(s, y, w)
        tiny = OnlineIsotonic(interpolation=interpolation, prior_strength=1e-9).predict_learn_many(s, y, w)
        assert np.allclose(tiny, exact, atol=1e-8)


def test_snapshots_round_trip_and_old_ones_keep_their_meaning():
    rng = random.Random("prior-snap")
    events = make_stream(rng, 200, "grid2", "float")
    cal = OnlineIsotonic(prior_strength=1.5, window_size=50)
    for e in events:
        cal.learn_one(*e)
    d = json.loads(json.dumps(cal.to_dict()))
    assert d["params"]["prior_strength"] == 1.5
    grid = np.linspace(0, 1, 101)
    for twin in (BinaryCalibrator.from_dict(d), pickle.loads(pickle.dumps(cal)), cal.clone()):
        assert twin.prior_strength == 1.5
    for twin in (BinaryCalibrator.from_dict(d), pickle.loads(pickle.dumps(cal))):
        assert twin.predict_many(grid).tolist() == cal.predict_many(grid).tolist()
    # a snapshot written before the parameter existed: the exact fit, as it meant then
    del d["params"]["prior_strength"]
    old = BinaryCalibrator.from_dict(d)
    exact = OnlineIsotonic(window_size=50)
    for e in events:
        exact.learn_one(*e)
    assert old.prior_strength == 0.0
    assert old.predict_many(grid).tolist() == exact.predict_many(grid).tolist()


@pytest.mark.parametrize("bad", [-1.0, math.inf, math.nan, "1", None, True])
def test_bad_prior_strength(bad):
    with pytest.raises((ValueError, TypeError), match="The 'prior_strength' parameter of OnlineIsotonic must be"):
        OnlineIsotonic(prior_strength=bad)


def test_a_huge_prior_is_pooled_while_it_fits_and_else_is_its_mean():
    """A pseudo-event that fits beside the weights held (their exact sum at most
    DBL_MAX) is pooled as any weight is: 1e308 beside two events of 1e307 reads
    (0.5 * 1e308) / (1e307 + 1e308) at 0.5, the oracle's value. One that does not fit
    (a strength of DBL_MAX) outweighs every event: the prior's mean."""
    cal = OnlineIsotonic(prior_strength=1e308)
    cal.learn_many([0.2, 0.9], [0, 1], w=[1e307, 1e307])
    want = ref.isotonic_with_prior([0.2, 0.9], [0, 1], [1e307, 1e307], 0.5, 1e308, ISOTONIC_PRIOR_MEAN)
    assert cal.predict_one(0.5) == pytest.approx(want, rel=1e-12) and want == pytest.approx(5 / 11)
    cal = OnlineIsotonic(prior_strength=1.7976931348623157e308)
    cal.learn_many([0.2, 0.9], [0, 1], w=[1e307, 1e307])
    assert cal.predict_one(0.5) == ISOTONIC_PRIOR_MEAN
    cal = OnlineIsotonic(prior_strength=1e12)
    cal.learn_many([0.2, 0.9], [0, 1])
    assert abs(cal.predict_one(0.5) - ISOTONIC_PRIOR_MEAN) < 1e-11


def test_top_label_and_class_wise_carry_the_prior():
    """TopLabel and ClassWise clone their binary calibrator, prior included: where the
    exact fits say 0 for a class, the prior keeps it above 0, and snapshots keep it."""
    from streamcal import ClassWise, TopLabel
    from streamcal.base import MulticlassCalibrator

    rng = np.random.default_rng(3)
    events = []
    for _ in range(300):
        q = rng.dirichlet([1.0, 1.0, 1.0])
        events.append((dict(zip("abc", q.tolist())), "abc"[int(rng.choice(3, p=q))]))
    for wrapper in (TopLabel, ClassWise):
        exact, shrunk = wrapper(OnlineIsotonic()), wrapper(OnlineIsotonic(prior_strength=1.0))
        saw_zero = False
        for x, label in events:
            pe, ps = exact.predict_one(x), shrunk.predict_one(x)
            saw_zero = saw_zero or min(pe.values()) == 0.0
            assert all(0.0 < v < 1.0 for v in ps.values()), ps
            exact.learn_one(x, label)
            shrunk.learn_one(x, label)
        assert saw_zero
        assert all(c.prior_strength == 1.0 for c in shrunk.calibrators.values())
        twin = MulticlassCalibrator.from_dict(json.loads(json.dumps(shrunk.to_dict())))
        x = events[0][0]
        assert twin.predict_one(x) == shrunk.predict_one(x)
