"""ECE with a window under weights whose sums do not round exactly
(``streamcal/metrics/_kernels.pyx``, ``Binned``).

Events leave the window by subtraction, which does not undo the rounding of their
addition. Before the bins kept bounds on their rounding residue, a heavy event leaving
left its residue in the bins and the total: a total weight of 0.0 for the events of
1e12 (below), so an ECE of inf, or a value off by 0.6 on a random stream of log-normal
weights. Each case is compared with the batch reference of ``tests/references_metrics``
on the window's events.
"""

import json
import math
import pickle
import random

import pytest

from streamcal.metrics import ECE
from tests import references_metrics as R


def _log_normal_events(seed, n, sigma=30.0):
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        p = rng.choice([0.15, 0.35, 0.55, 0.75, 0.95, round(rng.random(), 3)])
        w = math.exp(rng.gauss(0.0, sigma))
        if 1e-300 < w < 1e300:
            out.append((float(rng.random() < p), p, w))
    return out


def _reference(events, n_bins, strategy):
    y, p, w = (list(c) for c in zip(*events))
    return R.ece(y, p, w, n_bins=n_bins, strategy=strategy)


def test_a_heavy_event_leaving_the_window_leaves_no_residue():
    """The total weight was kept by subtraction: 1e30 / 3 left and took the others
    with it (0.0 left for events of 3.3e11), and the ECE was inf."""
    m = ECE(n_bins=5, window_size=5)
    events = [(0, 0.75, 1e30 / 3), (1, 0.95, 1e12 / 3), (1, 0.55, 1e-5 / 3),
              (0, 0.15, 1e-13 / 3), (1, 0.75, 1e-13 / 3), (0, 0.35, 1e-8 / 3)]
    for e in events:
        m.update(*e)
        m._check()
    assert m.get() == pytest.approx(_reference(events[1:], 5, "uniform"), abs=2**-40)
    assert m._store.weight == pytest.approx(math.fsum(e[2] for e in events[1:]), rel=2**-50)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("seed", range(12))
def test_log_normal_weights_in_a_window_match_the_reference(strategy, seed):
    """Weights exp(N(0, 30)); after every event the value is within 2**-39 of the
    reference on the window, and every bin within its bound (``_check``)."""
    rng = random.Random(seed)
    n = rng.choice([3, 5, 10, 30])
    m = ECE(n_bins=5, strategy=strategy, window_size=n)
    events = _log_normal_events(seed, 200)
    for t, e in enumerate(events):
        m.update(*e)
        m._check()
        window = events[max(0, t + 1 - n): t + 1]
        assert m.get() == pytest.approx(_reference(window, 5, strategy), abs=2**-39), t


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_snapshots_keep_the_bounds_and_copies_continue_with_the_same_floats(strategy):
    m = ECE(n_bins=4, strategy=strategy, window_size=7)
    for e in _log_normal_events(5, 150):
        m.update(*e)
    state = m.to_dict()["state"]
    residues = state["residues"]
    assert residues["weight"] > 0.0 or any(residues.get("bins", [])) or residues.get("values")
    copies = [ECE.from_dict(json.loads(json.dumps(m.to_dict()))), pickle.loads(pickle.dumps(m))]
    for c in copies:
        assert c.to_dict() == m.to_dict()
    for e in _log_normal_events(6, 100):
        for x in [m, *copies]:
            x.update(*e)
        values = [x.get() for x in [m, *copies]]
        assert values == [values[0]] * len(values)
    for c in copies:
        assert c.to_dict() == m.to_dict()


def test_exact_weights_keep_no_bounds():
    """Unit weights and forecasts on a binary grid add exactly: every bound stays 0."""
    m = ECE(n_bins=4, window_size=10)
    rng = random.Random(0)
    for _ in range(500):
        m.update(rng.random() < 0.5, rng.choice([0.125, 0.5, 0.75]), rng.choice([1.0, 2.0, 0.5]))
    residues = m.to_dict()["state"]["residues"]
    assert residues == {"weight": 0.0, "bins": [0.0] * 4}


@pytest.mark.parametrize("strategy, residues, message", [
    ("uniform", {"weight": -1.0, "bins": [0.0] * 4}, r"state\['residues'\]\['weight'\]"),
    ("uniform", {"weight": 0.0, "bins": [0.0] * 3}, r"state\['residues'\]\['bins'\]"),
    ("uniform", {"weight": 0.0, "bins": [0.0] * 3 + [math.inf]}, r"state\['residues'\]\['bins'\]\[3\]"),
    ("uniform", [0.0], r"state\['residues'\]"),
    ("uniform", {"weight": 0.0}, r"state\['residues'\]\['bins'\]"),
    ("quantile", {"weight": 0.0, "values": [[1.5, 0.0]]}, r"state\['residues'\]\['values'\]\[0\]\[0\]"),
    ("quantile", {"weight": 0.0, "values": [[0.5]]}, r"state\['residues'\]\['values'\]\[0\]"),
])
def test_a_corrupted_residues_entry_is_refused(strategy, residues, message):
    m = ECE(n_bins=4, strategy=strategy, window_size=7)
    for e in _log_normal_events(1, 20):
        m.update(*e)
    snap = m.to_dict()
    snap["state"]["residues"] = residues
    with pytest.raises(ValueError, match=message):
        ECE.from_dict(snap)


def test_quantile_residues_name_held_values_in_order():
    m = ECE(n_bins=4, strategy="quantile", window_size=7)
    for e in _log_normal_events(1, 20):
        m.update(*e)
    snap = m.to_dict()
    held = sorted(v[0] for v in snap["state"]["values"])
    for entry, message in [([[0.123456, 1.0]], "a forecast value held"),
                           ([[held[0], 1.0], [held[0], 1.0]], "above the value before it")]:
        snap["state"]["residues"] = {"weight": 0.0, "values": entry}
        with pytest.raises(ValueError, match=message):
            ECE.from_dict(snap)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_a_snapshot_from_before_the_bounds_restores_with_the_residue_it_shows(strategy):
    """Older windowed snapshots may hold residues of events that left: they restore
    with each bound what its sums are off, each bin summed again at its next removal."""
    m = ECE(n_bins=4, strategy=strategy, window_size=6)
    for e in _log_normal_events(3, 30, sigma=2.0):
        m.update(*e)
    snap = json.loads(json.dumps(m.to_dict()))
    del snap["state"]["residues"]
    snap["state"]["weight"] *= 1.0 + 2.0**-40  # a residue an older version could have left
    restored = ECE.from_dict(snap)
    restored._check()
    later = _log_normal_events(4, 6, sigma=2.0)
    for e in later:
        restored.update(*e)
        restored._check()
    assert restored.get() == pytest.approx(_reference(later, 4, strategy), abs=2**-39)
    assert restored._store.weight == pytest.approx(math.fsum(e[2] for e in later), rel=2**-50)
