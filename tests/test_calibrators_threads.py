"""Calibrators run side by side in threads (the replay's pool): the isotonic family's
compiled loops release the GIL, so these runs overlap; each calibrator must give, bit
for bit, what it gives alone."""

import threading

import numpy as np
import pytest

from streamcal import HistogramBinning, OnlineIsotonic, OnlinePlatt, VennAbers


def make():
    return [
        OnlineIsotonic(),
        OnlineIsotonic(interpolation="linear"),
        OnlineIsotonic(resolution=1e-3),
        VennAbers(),
        VennAbers(window_size=300),
        OnlineIsotonic(window_size=500),
        OnlineIsotonic(window_size=2, interpolation="linear"),
        HistogramBinning(),
        OnlinePlatt(),
    ]


def stream(seed, n):
    rng = np.random.default_rng(seed)
    s = rng.beta(2, 2, n)
    s[rng.random(n) < 0.2] = 0.5  # ties
    y = (rng.random(n) < s * s / (s * s + (1 - s) ** 2)).astype(float)
    w = np.where(rng.random(n) < 0.1, rng.choice([0.0, 0.25, 3.0, 2.0**40], n), 1.0)
    return s, y, w


@pytest.mark.parametrize("seed", range(3))
def test_side_by_side_in_threads_equals_one_after_another(seed):
    s, y, w = stream(seed, 6000)
    alone = []
    for cal in make():
        alone.append([cal.predict_learn_many(s[a:b], y[a:b], w[a:b]) for a, b in ((0, 2500), (2500, 6000))])
        cal.learn_many(s[:700], y[:700], w[:700])
        alone[-1].append(cal.predict_many(s[:900]))
        alone[-1].append(cal.to_dict())
    cals = make()
    got = [None] * len(cals)
    barrier = threading.Barrier(len(cals))

    def run(k):
        barrier.wait()
        out = [cals[k].predict_learn_many(s[a:b], y[a:b], w[a:b]) for a, b in ((0, 2500), (2500, 6000))]
        cals[k].learn_many(s[:700], y[:700], w[:700])
        got[k] = out + [cals[k].predict_many(s[:900]), cals[k].to_dict()]

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(cals))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k, cal in enumerate(cals):
        for a, b in zip(alone[k][:3], got[k][:3]):
            np.testing.assert_array_equal(a, b)
        assert alone[k][3] == got[k][3], type(cal).__name__
        if hasattr(cal, "_check"):
            cal._check()


@pytest.mark.parametrize(
    "cal",
    [
        OnlineIsotonic(),
        OnlineIsotonic(interpolation="linear"),
        OnlineIsotonic(half_life=40.0),
        OnlineIsotonic(half_life=40.0, window_size=100, interpolation="linear"),
        OnlineIsotonic(prior_strength=2.0),
        OnlineIsotonic(resolution=1e-2),
        VennAbers(),
        VennAbers(half_life=60.0),
    ],
    ids=repr,
)
def test_predict_many_is_predict_one_bit_for_bit(cal):
    """predict_many's loop without the GIL gives predict_one's floats, in every state:
    empty, after each chunk, with forgetting (one hypothetical weight per batch)."""
    s, y, w = stream(9, 1500)
    queries = np.concatenate([[0.0, 1.0, 0.5, 1e-300, 1 - 2**-53], s[:200], np.linspace(0, 1, 101)])
    for a in (0, 1, 300, 1500):
        if a:
            cal.learn_many(s[:a], y[:a], w[:a])
        np.testing.assert_array_equal(cal.predict_many(queries), [cal.predict_one(q) for q in queries])


@pytest.mark.parametrize(
    "make",
    [VennAbers, OnlineIsotonic, lambda: OnlineIsotonic(interpolation="linear"), lambda: VennAbers(window_size=500)],
    ids=["va", "iso", "iso-linear", "va-window"],
)
def test_threads_predicting_from_one_calibrator_at_once(make):
    """Predictions only read: threads may call predict_many on one calibrator at once
    (a server answering requests). Weights that are not powers of two make Venn-ABERS
    take its insert-and-remove path, which must then not run in two threads at once."""
    rng = np.random.default_rng(0)
    cal = make()
    s = rng.random(3000)
    cal.learn_many(s, (rng.random(3000) < s).astype(float), rng.choice([0.1, 0.3, 0.7], 3000))
    before = cal.to_dict()
    queries = rng.random(20000)
    expected = cal.predict_many(queries)
    bad, errors = [], []

    def work():
        try:
            for _ in range(6):
                if not np.array_equal(cal.predict_many(queries), expected):
                    bad.append(1)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(repr(exc))

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and not bad
    assert cal.to_dict() == before
    cal._check()
