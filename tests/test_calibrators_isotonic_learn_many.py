"""``learn_many`` of the isotonic store calibrators is the loop of ``learn_one``: the same
state (``to_dict``), hence the same floats, on every path it takes (the compiled loop,
and the bulk rebuild from cells of a batch much larger than the state or the window),
the same refusals, and nothing changed when it fails.

Regression tests of an outside check: with a window, the bulk path summed the last
``window_size`` events afresh, which differs from the loop's additions and subtractions
in the last bit for weights that are not integers, and accepted a weight whose window
sum overflows, which the loop refuses; out of memory, it had replaced the window but not
the store."""

import json

import numpy as np
import pytest

import streamcal.calibrators.isotonic as isotonic_module
from streamcal import OnlineIsotonic, VennAbers

MAKERS = {
    "window": lambda: OnlineIsotonic(window_size=50),
    "window-linear": lambda: OnlineIsotonic(window_size=50, interpolation="linear"),
    "va-window": lambda: VennAbers(window_size=50),
    "window-grid": lambda: OnlineIsotonic(window_size=50, resolution=0.05),
    "exact": lambda: OnlineIsotonic(),
    "va": lambda: VennAbers(),
}

WEIGHTS = {
    "unit": lambda rng, n: np.ones(n),
    "integer": lambda rng, n: rng.integers(0, 5, n).astype(float),
    "float": lambda rng, n: rng.random(n) * 3,
    "tiny": lambda rng, n: rng.integers(1, 4, n) * 1e-300,
    "mixed": lambda rng, n: np.where(rng.random(n) < 0.3, 0.0, rng.choice([0.25, 1.0, 3.0, 2.0**40, 0.1], n)),
    "heavy-integer": lambda rng, n: rng.choice([1.0, 2.0**21], n),
}


def _stream(seed, n, weights):
    rng = np.random.default_rng(seed)
    s = rng.choice(np.round(rng.random(12), 3), n)  # ties: cells that come and go
    y = (rng.random(n) < s).astype(int)
    return s, y, WEIGHTS[weights](rng, n)


@pytest.mark.parametrize("weights", list(WEIGHTS))
@pytest.mark.parametrize("name", list(MAKERS))
@pytest.mark.parametrize("split", [(30, 400), (400, 30), (0, 2000)], ids=["warm-big", "warm-small", "cold"])
def test_learn_many_is_the_loop(name, weights, split):
    a, b = split
    s, y, w = _stream(len(name) * 7 + len(weights), a + b, weights)
    loop, many = MAKERS[name](), MAKERS[name]()
    for i in range(a + b):
        loop.learn_one(float(s[i]), int(y[i]), float(w[i]))
    if a:
        many.learn_many(s[:a], y[:a], w[:a])
    many.learn_many(s[a:], y[a:], w[a:])
    assert many.to_dict() == loop.to_dict()
    q = np.linspace(0.0, 1.0, 41)
    np.testing.assert_array_equal(many.predict_many(q), loop.predict_many(q))
    many._check()


@pytest.mark.parametrize("name", ["window", "va-window"])
def test_window_overflow_refused_as_the_loop_refuses(name):
    n, k = 200, 117
    rng = np.random.default_rng(3)
    s, y = rng.random(n), (rng.random(n) < 0.5).astype(int)
    w = np.ones(n)
    w[k - 10] = w[k] = 1.7e308  # ten events apart in a window of 50: their sum overflows
    loop = MAKERS[name]()
    with pytest.raises(ValueError, match="'w'"):
        for i in range(n):
            loop.learn_one(s[i], int(y[i]), w[i])
    assert i == k
    cal = MAKERS[name]()
    cal.learn_many(s[:20], y[:20])
    before = json.dumps(cal.to_dict())
    with pytest.raises(ValueError, match=r"'w'.*at index 117"):
        cal.learn_many(s, y, w)
    assert json.dumps(cal.to_dict()) == before


@pytest.mark.parametrize("name", ["window", "va-window", "exact"])
@pytest.mark.parametrize("allowed", [0, 1, 2])
def test_bulk_path_out_of_memory_changes_nothing(name, allowed, monkeypatch):
    # leaves of 8 cells: the batch needs new nodes whatever the default capacity (a
    # window of 50 fits in one leaf of 128)
    monkeypatch.setattr(isotonic_module._IsotonicStoreCalibrator, "_leaf_capacity", lambda self: 8)
    rng = np.random.default_rng(2)
    cal, twin = MAKERS[name](), MAKERS[name]()
    s0 = rng.random(300)
    y0 = (rng.random(300) < s0).astype(int)
    cal.learn_many(s0, y0)
    twin.learn_many(s0, y0)
    before = json.dumps(cal.to_dict())
    s = rng.random(3000)
    y = (rng.random(3000) < s).astype(int)
    cal._store._limit_allocations(allowed)
    with pytest.raises(MemoryError):
        cal.learn_many(s, y)
    cal._store._limit_allocations(-1)
    assert json.dumps(cal.to_dict()) == before
    cal._check()
    cal.learn_many(s, y)
    twin.learn_many(s, y)
    for x in rng.random(50):
        cal.learn_one(x, 1)
        twin.learn_one(x, 1)
    assert cal.to_dict() == twin.to_dict()


@pytest.mark.parametrize("name", list(MAKERS))
def test_strided_arrays_are_taken_as_their_copies(name):
    """Views (reversed, every other element) of float64 arrays reach the compiled loops,
    which take contiguous arrays, as contiguous copies: no 'ndarray is not
    C-contiguous' error, the floats of the copies."""
    rng = np.random.default_rng(5)
    s, y, w = rng.random(400), (rng.random(400) < 0.5).astype(float), rng.random(800) * 2
    views, copies = MAKERS[name](), MAKERS[name]()
    a = views.predict_learn_many(s[::-1], y[::-1], w[::2])
    b = copies.predict_learn_many(s[::-1].copy(), y[::-1].copy(), w[::2].copy())
    np.testing.assert_array_equal(a, b)
    views.learn_many(s[::2], y[::2], w[::4])
    copies.learn_many(s[::2].copy(), y[::2].copy(), w[::4].copy())
    np.testing.assert_array_equal(views.predict_many(s[::3]), copies.predict_many(s[::3].copy()))
    assert views.to_dict() == copies.to_dict()
