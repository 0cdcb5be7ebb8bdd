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
        alone[-1].append(cal.to_dict())
    cals = make()
    got = [None] * len(cals)
    barrier = threading.Barrier(len(cals))

    def run(k):
        barrier.wait()
        out = [cals[k].predict_learn_many(s[a:b], y[a:b], w[a:b]) for a, b in ((0, 2500), (2500, 6000))]
        cals[k].learn_many(s[:700], y[:700], w[:700])
        got[k] = out + [cals[k].to_dict()]

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(cals))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k, cal in enumerate(cals):
        for a, b in zip(alone[k][:2], got[k][:2]):
            np.testing.assert_array_equal(a, b)
        assert alone[k][2] == got[k][2], type(cal).__name__
        if hasattr(cal, "_check"):
            cal._check()
