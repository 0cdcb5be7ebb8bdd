"""Every internal path of the PAV store, forced on small streams: plain-Python vs numpy
scans (``_SMALL``), full refreshing scans vs one-sided tests on large blocks
(``_REFRESH_MAX``), compared with the batch oracle after every event. Shrinking the
thresholds is how sortedcontainers tests its split/merge paths."""

import numpy as np
import pytest

import streamcal.core.pav as pav
from streamcal import OnlineIsotonic
from tests import references as ref


@pytest.fixture(params=[(0, 1), (0, 10**9), (48, 1), (3, 4)], ids=lambda p: f"small={p[0]}-refresh={p[1]}")
def thresholds(request, monkeypatch):
    small, refresh = request.param
    monkeypatch.setattr(pav, "_SMALL", small)
    monkeypatch.setattr(pav, "_REFRESH_MAX", refresh)
    return request.param


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(
    "params",
    [{}, {"window_size": 25}, {"half_life": 0.3}, {"half_life": 4.0, "window_size": 30}, {"resolution": 0.05}],
    ids=repr,
)
def test_paths_match_oracle_after_every_event(thresholds, params, seed):
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
