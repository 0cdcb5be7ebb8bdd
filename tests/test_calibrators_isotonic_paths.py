"""Every internal path of the PAV store, forced on small streams: leaves of 4 and 5
cells (so that leaf splits, merges, subtree rebuilds and bridges between many leaves run
within 250 events) as well as 128 and 256 (the stores' default, and a window's without
forgetting), compared with the batch oracle after every event. Shrinking the node sizes is how sortedcontainers tests its split/merge paths.

(Before the compiled store, the paths were the plain-Python and numpy scans, shrunk with
``_SMALL`` and ``_REFRESH_MAX``; the tree has no such thresholds, its leaf capacity is
what shapes it.)"""

import numpy as np
import pytest

import streamcal.calibrators.isotonic as isotonic_module
from streamcal import OnlineIsotonic, VennAbers
from tests import references as ref


@pytest.fixture(params=[4, 5, 128, 256], ids=lambda c: f"leaf={c}")
def thresholds(request, monkeypatch):
    capacity = request.param
    monkeypatch.setattr(isotonic_module._IsotonicStoreCalibrator, "_leaf_capacity", lambda self: capacity)
    return capacity


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(
    "params",
    [{}, {"window_size": 25}, {"half_life": 0.3}, {"half_life": 4.0, "window_size": 30}, {"resolution": 0.05}],
    ids=repr,
)
def test_paths_match_oracle_after_every_event(thresholds, params, seed):
    # (leaf=4, half_life=0.3, seed 2, weights spanning 2**340, was a known defect of
    # the compiled store, issue 11 note: a block of value 5e-78 left before one of
    # value 0; fixed with the bridge's meet test, tests/test_core_pav_wide_weights.py)
    rng = np.random.default_rng(seed)
    n = 250
    s = np.round(rng.random(n), 2 if seed % 2 else 3)
    y = (rng.random(n) < s**2).astype(int)
    w = rng.choice([1.0, 2.0, 0.5, 0.0], n) if seed >= 2 else np.ones(n)
    if "half_life" in params:
        w = np.ones(n)
    cal = OnlineIsotonic(**params)
    r = params.get("resolution")
    for i in range(n):
        cal.learn_one(float(s[i]), int(y[i]), float(w[i]))
        cal._check()
        lo = max(0, i + 1 - params.get("window_size", n + 1))
        # (no truncation with half_life: what matters is weight relative to the
        # neighbours, and 250 events at half-life 0.3 still weigh > 2**-1000)
        keys = s[lo : i + 1] if r is None else np.floor(s[lo : i + 1] / r + 0.5)
        ww = w[lo : i + 1]
        if "half_life" in params:
            ww = 2.0 ** (-np.arange(i - lo, -1, -1) / params["half_life"])
        if ww.sum() == 0:
            continue
        fit = ref.isotonic_fit(keys.tolist(), y[lo : i + 1].tolist(), ww.tolist())
        for q in np.unique(keys).tolist():
            score = q if r is None else min(1.0, q * r)
            assert cal.predict_one(score) == pytest.approx(ref.predict_step(fit, q), abs=1e-9), (i, q)


@pytest.mark.parametrize("seed", range(3))
def test_a_window_fills_leaves_of_256_and_matches_the_oracle(seed):
    """A window of 4,096 events or more without forgetting keeps leaves of up to 256
    cells (its default capacity, not forced): about 3,000 distinct keys in the window
    (rounded to 0.001) or 4,000 (to 0.0001), so leaves of 256 fill, split, empty and
    merge as it slides; integer, halved and zero weights, ties."""
    import pickle

    rng = np.random.default_rng(seed)
    n, window = 6000, 4096
    s = np.round(rng.random(n), 4 if seed else 3)
    y = (rng.random(n) < s).astype(int)
    w = rng.choice([1.0, 3.0, 0.5, 0.0], n)
    cal = OnlineIsotonic(window_size=window)
    assert cal._store.leaf_capacity == 256
    assert OnlineIsotonic(window_size=window, half_life=50.0)._store.leaf_capacity == 128
    assert OnlineIsotonic(window_size=window - 1)._store.leaf_capacity == 128
    assert OnlineIsotonic()._store.leaf_capacity == 128
    assert VennAbers(window_size=window)._store.leaf_capacity == 256
    for i in range(n):
        cal.learn_one(float(s[i]), int(y[i]), float(w[i]))
        if i % 31 == 0 or i > n - 20:
            cal._check()
        if i % 400 == 399:
            lo = max(0, i + 1 - window)
            fit = ref.isotonic_fit(s[lo : i + 1].tolist(), y[lo : i + 1].tolist(), w[lo : i + 1].tolist())
            qs = np.unique(s[lo : i + 1]).tolist()
            got = cal.predict_many(np.array(qs))
            assert got == pytest.approx([ref.predict_step(fit, q) for q in qs], abs=1e-12), i
    restored = OnlineIsotonic.from_dict(cal.to_dict())
    for copy in (pickle.loads(pickle.dumps(cal)), restored, cal.clone()):
        assert copy._store.leaf_capacity == 256
    for i in range(200):
        x, lab = float(rng.random()), int(rng.random() < 0.5)
        assert restored.predict_one(x) == cal.predict_one(x)
        restored.learn_one(x, lab)
        cal.learn_one(x, lab)
    restored._check()


@pytest.mark.parametrize("interpolation", ["step", "linear"])
def test_grid_batch_pass_equals_the_loop(interpolation):
    """``predict_learn_many`` on the grid store runs its loop without the GIL
    (``IsotonicStream._grid_run``): the same floats as ``predict_one`` / ``learn_one``,
    zero weights included, and an event the grid refuses (a weight that is not a whole
    number of the store's units) hands the rest of the batch to the general store."""
    rng = np.random.default_rng(3)
    n = 600
    s = rng.random(n)
    y = (rng.random(n) < s).astype(np.float64)
    w = np.ones(n)
    w[::7] = 0.0
    w[::11] = 2.0
    w[400] = 0.1  # not a dyadic weight: the grid store refuses it
    kw = dict(interpolation=interpolation, resolution=1e-2)
    batch, loop = OnlineIsotonic(**kw), OnlineIsotonic(**kw)
    first = batch.predict_learn_many(s[:300], y[:300], w[:300])
    assert batch._stream.grid_store is not None
    second = batch.predict_learn_many(s[300:], y[300:], w[300:])
    assert batch._stream.grid_store is None  # left at event 400
    expected = []
    for si, yi, wi in zip(s, y, w):
        expected.append(loop.predict_one(si))
        loop.learn_one(si, int(yi), wi)
    np.testing.assert_array_equal(np.concatenate([first, second]), expected)
    assert batch._stream.n_events == loop._stream.n_events == n
    assert batch._stream.total_weight_parts() == loop._stream.total_weight_parts()
    np.testing.assert_array_equal(batch.predict_many(s), loop.predict_many(s))
