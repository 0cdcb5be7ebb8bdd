"""Exactness of OnlineIsotonic under extreme but valid weights (issue 11, part 5).

Each case was found by an outside check; each is compared with the batch oracle of
``tests/references.py`` (textbook PAV on fsum-aggregated cells). Isotonic regression does
not change when every weight is multiplied by one constant, so the oracle is given the
weights divided by a common power of two where the raw ones would leave the double range.
"""

import math

import pytest

from streamcal import OnlineIsotonic
from tests import references as ref


def _assert_matches(cal, keys, labels, weights, queries, tol=1e-12):
    cal._check()
    fit = ref.isotonic_fit(keys, labels, weights)
    for q in queries:
        assert cal.predict_one(q) == pytest.approx(ref.predict_step(fit, q), abs=tol), q


def test_window_eviction_does_not_add_the_new_event_twice():
    """window_size=2: the evicted heavy event's cell is rebuilt from the window, which
    must not yet hold the new event (it predicted 0.6667; the fit of the last two is 0.5)."""
    cal = OnlineIsotonic(window_size=2)
    events = [(0.5, 0, 1.0), (0.5, 0, 1e-7), (0.5, 1, 1e-7)]
    for e in events:
        cal.learn_one(*e)
    assert cal.predict_one(0.5) == 0.5
    _assert_matches(cal, [0.5, 0.5], [0, 1], [1e-7, 1e-7], [0.0, 0.5, 1.0])


def test_window_removal_of_a_heavy_event_leaves_no_residue():
    """window_size=4 after a 1e12 event: block totals kept by subtraction held its
    residue (0.6060516 at 0.25 instead of 2/3.3, and _check failed)."""
    cal = OnlineIsotonic(window_size=4)
    events = [(0.5, 0, 1e12), (0.25, 1, 1.0), (0.75, 0, 1.0), (0.75, 0, 0.3), (0.75, 1, 1.0)]
    for e in events:
        cal.learn_one(*e)
        cal._check()
    assert cal.predict_one(0.25) == pytest.approx(2 / 3.3, abs=1e-15)
    tail = events[1:]
    _assert_matches(cal, *zip(*[(s, y, w) for s, y, w in tail]), [0.0, 0.25, 0.5, 0.75, 1.0])


def test_half_life_with_a_weight_near_the_top_of_the_double_range():
    """half_life=1: 30 events, then one of weight 1e300 (it was scaled by up to 2**512
    before renormalising, overflowed, and every prediction was NaN)."""
    cal = OnlineIsotonic(half_life=1.0)
    events = [(0.5, t % 2, 1.0) for t in range(30)] + [(0.3, 0, 1e300)]
    for e in events:
        cal.learn_one(*e)
    n = len(events)
    weights = [w * 2.0 ** -(n - 1 - i) for i, (_, _, w) in enumerate(events)]
    keys, labels, _ = zip(*events)
    _assert_matches(cal, keys, labels, weights, [0.0, 0.3, 0.4, 0.5, 1.0])
    assert cal.predict_one(0.3) == 0.0
    # and the stream goes on, finite
    for t in range(600):
        cal.learn_one(0.5 + 0.001 * (t % 7), t % 3 == 0, 1e300 if t % 50 == 0 else 1.0)
    cal._check()
    assert all(math.isfinite(cal.predict_one(q)) for q in (0.0, 0.3, 0.5, 1.0))


def test_half_life_with_tiny_weights_in_a_window():
    """half_life=0.05, window 100, weights 1e-300: stored weights underflowed to 0 at the
    renormalisation (ZeroDivisionError). Relative weights are 2**(-20 age), down to 2**-540:
    representable once scaled with the data, so the fit equals the oracle's."""
    cal = OnlineIsotonic(half_life=0.05, window_size=100)
    events = [(t / 30, t % 2, 1e-300) for t in range(28)]
    for i, e in enumerate(events):
        cal.learn_one(*e)
        n = i + 1
        keys = [s for s, _, _ in events[:n]]
        labels = [y for _, y, _ in events[:n]]
        weights = [2.0 ** (-(n - 1 - j) / 0.05) for j in range(n)]  # the common 1e-300 divided out
        _assert_matches(cal, keys, labels, weights, [k for k in keys] + [0.0, 0.5, 1.0])
    # far beyond: thousands of renormalisations later everything is still finite and exact
    for t in range(28, 400):
        cal.learn_one((t % 30) / 30, t % 2, 1e-300)
    cal._check()
    recent = [((t % 30) / 30, t % 2) for t in range(380, 400)]
    weights = [2.0 ** (-(19 - j) / 0.05) for j in range(20)]
    _assert_matches(cal, [s for s, _ in recent], [y for _, y in recent], weights, [0.0, 0.5, 1.0], tol=1e-9)


@pytest.mark.parametrize("window_size", [None, 3])
def test_weights_whose_sum_overflows_are_refused_and_change_nothing(window_size):
    cal = OnlineIsotonic(window_size=window_size)
    cal.learn_one(0.5, 1, 1e308)
    cal.learn_one(0.2, 0, 1.0)
    before = cal.to_dict()
    with pytest.raises(ValueError, match=r"'w' argument of OnlineIsotonic.learn_one .* Got 1e\+308"):
        cal.learn_one(0.7, 1, 1e308)
    assert cal.to_dict() == before
    with pytest.raises(ValueError, match=r"'w' argument of OnlineIsotonic.learn_many .* at index 0"):
        cal.learn_many([0.7, 0.1], [1, 0], [1e308, 1.0])
    assert cal.to_dict() == before
    with pytest.raises(ValueError, match=r"'w' argument of OnlineIsotonic.predict_learn_many .* at index 0"):
        cal.predict_learn_many([0.7, 0.1], [1, 0], [1e308, 1.0])
    assert cal.to_dict() == before
    cal._check()


def test_a_full_window_makes_room_for_a_heavy_weight():
    cal = OnlineIsotonic(window_size=1)
    for t in range(5):
        cal.learn_one(0.5, t % 2, 1e308)
    cal.learn_many([0.2, 0.4], [0, 1], [1e308, 1e308])
    assert cal.predict_one(0.4) == 1.0 and cal.predict_one(0.2) == 1.0
    cal._check()
