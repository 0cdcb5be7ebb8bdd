"""Exactness of OnlineIsotonic under extreme but valid weights (issue 11, part 5).

Each case was found by an outside check; each is compared with the batch oracle of
``tests/references.py`` (textbook PAV on fsum-aggregated cells). Isotonic regression does
not change when every weight is multiplied by one constant, so the oracle is given the
weights divided by a common power of two where the raw ones would leave the double range.
"""

import math
import pickle
import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamcal import OnlineIsotonic
from streamcal.core.pav import WEIGHT_LIMIT
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


DBL_MAX = 1.7976931348623157e308


@pytest.mark.parametrize("cls", ["OnlineIsotonic", "VennAbers"])
@pytest.mark.parametrize("window_size", [None, 3])
def test_weights_whose_sum_passes_the_limit_are_refused_on_every_path(cls, window_size):
    """The stores hold weights summing to at most WEIGHT_LIMIT (2**-20 of DBL_MAX below
    it), so that their own sums, rounded in any order, stay finite. A running float
    total at DBL_MAX let in a weight below half its last unit (it rounded back), and the
    stores' sums then overflowed to NaN; cells whose exact sum is DBL_MAX overflowed when
    summed in key order. learn_one, the batch methods, a restored copy and a merge
    refuse alike, and leave the state as it was."""
    import streamcal

    make = getattr(streamcal, cls)
    cal = make(window_size=window_size)
    cal.learn_one(0.5, 0, WEIGHT_LIMIT)
    with pytest.raises(ValueError, match=rf"'w' argument of {cls}.learn_one"):
        make().learn_one(0.5, 0, DBL_MAX)
    before = cal.to_dict()
    for attempt in range(2):
        with pytest.raises(ValueError, match=rf"'w' argument of {cls}.learn_one .* Got 1e\+300"):
            cal.learn_one(0.25, 1, 1e300)
        with pytest.raises(ValueError, match=rf"'w' argument of {cls}.learn_many .* at index 1"):
            cal.learn_many([0.3, 0.25] * 10, [0, 1] * 10, [0.0, 1e300] * 10)
        with pytest.raises(ValueError, match=rf"'w' argument of {cls}.predict_learn_many .* at index 1"):
            cal.predict_learn_many([0.3, 0.25], [0, 1], [0.0, 1e300])
        assert cal.to_dict() == before
        cal._check()
        cal = pickle.loads(pickle.dumps(cal))
    cal.learn_one(0.25, 1, 0.0)  # a weight of 0 always fits
    if window_size is None and hasattr(cal, "merge"):
        other = make()
        other.learn_one(0.4, 1, 1e300)
        with pytest.raises(ValueError, match=r"total weight of the two"):
            cal.merge(other)
    # cells whose exact sum is DBL_MAX: their sum in key order rounds up past it
    c1, c2, c3 = 2.0**1023 + 2.0**971, 2.0**970, 2.0**1023 - 2.0**972 - 2.0**970
    for order in ([0.1, 0.2, 0.3], [0.2, 0.3, 0.1], [0.3, 0.1, 0.2]):
        cal = make(window_size=window_size)
        with pytest.raises(ValueError, match=r"'w' argument"):
            for k in order:
                cal.learn_one(k, 1, {0.1: c2, 0.2: c1, 0.3: c3}[k])
        cal._check()
        with pytest.raises(ValueError, match=r"'w' argument"):
            make(window_size=window_size).learn_many([0.1, 0.2, 0.3] + [0.5] * 13, [1, 0, 1] + [0] * 13,
                                                     [c2, c1, c3] + [0.0] * 13)


def test_window_totals_agree_between_a_running_object_and_its_restored_copy():
    """The weights held by a window, summed as events come and go, and summed afresh on
    restore (from the window's events) decide the same overflow (outside check: a copy
    refused what the original took, and the original's sums overflowed)."""
    events = [(0.5, 0, 1e300), (0.5, 1, 8e307), (0.5, 0, 2.0**1023), (0.5, 1, 1e300), (0.5, 1, 0.0),
              (0.5, 0, 2.0**1023)]
    cal = OnlineIsotonic(window_size=3)
    for e in events:
        try:
            cal.learn_one(*e)
        except ValueError:
            pass
    copy = pickle.loads(pickle.dumps(cal))
    assert copy._stream.total_weight_parts() == cal._stream.total_weight_parts()
    for c in (cal, copy):
        with pytest.raises(ValueError, match=r"'w' argument"):
            c.learn_one(0.5, 1, 2.0**1023)
        c._check()
        assert math.isfinite(c.predict_one(0.5))


def test_a_prior_beside_a_total_weight_past_half_the_double_range():
    """The prior's pseudo-event (weight prior_strength) is pooled into the fit whenever it
    fits beside the weights held: a total above DBL_MAX / 2 is no reason to return the
    prior's mean (it returned 0.5 at every score)."""
    cal = OnlineIsotonic(prior_strength=1.0)
    cal.learn_one(0.2, 0, 1.0)
    cal.learn_one(0.8, 1, 1e308)
    assert cal.predict_one(0.2) == 0.25  # (0 + 0.5) / (1 + 1)
    assert cal.predict_one(0.8) == 1.0
    assert list(cal.predict_many([0.2, 0.8])) == [0.25, 1.0]
    cal._check()


def test_a_full_window_makes_room_for_a_heavy_weight():
    cal = OnlineIsotonic(window_size=1)
    for t in range(5):
        cal.learn_one(0.5, t % 2, 1e308)
    cal.learn_many([0.2, 0.4], [0, 1], [1e308, 1e308])
    assert cal.predict_one(0.4) == 1.0 and cal.predict_one(0.2) == 1.0
    cal._check()


# ---------------------------------------------------------------- forgetting, the span of
# the stored weights (issue 11, part 5: the store failed _check() after a weight of 1e300)


def _relative(events, half_life, window_size=None, scale_exp=0):
    """The oracle's sample: each weight times 2**(-age / h) and divided by 2**scale_exp
    (an exact power of two: isotonic regression does not change)."""
    keys, labels, weights = ref.online_isotonic_sample(
        [(s, y, math.ldexp(w, -scale_exp)) for s, y, w in events], window_size=window_size, half_life=half_life
    )
    return keys, labels, weights


def test_half_life_weight_at_the_top_of_the_double_range_is_stored_finite():
    """h=50: the clock's exponent has a fractional part, and w * 2**frac(e) was computed
    before scaling: 1.7e308 overflowed to inf and the cell's totals became NaN."""
    cal = OnlineIsotonic(half_life=50.0)
    events = [(0.1 * (t % 5), t % 2, 1.0) for t in range(3)] + [(0.3, 1, 1.7e308), (0.5, 0, 1.0)]
    for i, e in enumerate(events):
        cal.learn_one(*e)
        _assert_matches(cal, *_relative(events[: i + 1], 50.0, scale_exp=1000), [0.0, 0.1, 0.2, 0.3, 0.5, 1.0])


@pytest.mark.parametrize("window_size", [None, 200])
def test_half_life_light_events_stay_beside_a_much_heavier_one(window_size):
    """h=1: 80 unit-weight events, then one of 1e300 (2**997). Landing that event in
    [1, 2) put the oldest below 2**-1074 (empty cells: _check() failed); they weigh at
    least 2**-80 of a new unit-weight event, so nothing may forget them: the shift stops
    where the lightest stays a normal double, and the fit equals the oracle's."""
    cal = OnlineIsotonic(half_life=1.0, window_size=window_size)
    events = [(t / 100, (t * 7) % 3 == 0, 1.0) for t in range(80)] + [(0.95, 0, 1e300)]
    events += [(0.005 + t / 10, t % 2, 1.0) for t in range(5)]
    for i, e in enumerate(events):
        cal.learn_one(*e)
        _assert_matches(cal, *_relative(events[: i + 1], 1.0, window_size, scale_exp=600),
                        [t / 100 for t in range(0, 100, 3)] + [0.95, 1.0])


def test_half_life_light_event_after_a_heavy_one_renormalises_upwards():
    """h=1: events of weight 1e-10 just after one of 1.7e308 were stored as subnormals
    (about 18 bits: the mean of the block they pool into was off by 1e-8); the weights
    are scaled up instead."""
    cal = OnlineIsotonic(half_life=1.0)
    events = [(0.2, 1, 1.0), (0.1, 0, 1.7e308), (0.3, 1, 7e-11), (0.5, 0, 9e-11), (0.25, 1, 0.5)]
    for i, e in enumerate(events):
        cal.learn_one(*e)
        _assert_matches(cal, *_relative(events[: i + 1], 1.0, scale_exp=600), [0.0, 0.1, 0.2, 0.25, 0.3, 0.5, 0.8])


def test_half_life_heavy_event_leaving_a_full_window_is_not_rescaled():
    """Window of 2: the event a new one pushes out must leave before the renormalisation
    the new one needs (scaled up by 2**1000 with the others, it overflowed to inf)."""
    cal = OnlineIsotonic(half_life=0.3, window_size=2)
    events = [(0.1, 1, 1e308), (0.4, 0, 1.0), (0.7, 1, 1e-300), (0.2, 0, 1.0)]
    for i, e in enumerate(events):
        cal.learn_one(*e)
        _assert_matches(cal, *_relative(events[: i + 1], 0.3, 2), [0.0, 0.1, 0.4, 0.7, 1.0])


@pytest.mark.parametrize("window_size", [None, 50])
def test_half_life_weight_too_far_from_those_held_is_refused_and_changes_nothing(window_size):
    """1e-300 just after 1e300 (2**-1993 of it): no scale holds both as normal doubles.
    The new weight is refused naming 'w', on every path, and nothing changes; once the
    heavy event has decayed, the same weight is accepted."""
    cal = OnlineIsotonic(half_life=1.0, window_size=window_size)
    for t in range(5):
        cal.learn_one(0.1 * t, t % 2)
    cal.learn_one(0.9, 0, 1e300)
    before = cal.to_dict()
    with pytest.raises(ValueError, match=r"'w' argument of OnlineIsotonic.learn_one .* Got 1e-300 instead"):
        cal.learn_one(0.3, 1, 1e-300)
    assert cal.to_dict() == before
    with pytest.raises(ValueError, match=r"'w' argument of OnlineIsotonic.learn_many .* Got 1e-300 at index 2"):
        cal.learn_many([0.3, 0.4, 0.5], [1, 0, 1], [1.0, 2.0, 1e-300])
    assert cal.to_dict() == before
    with pytest.raises(ValueError, match=r"'w' argument of OnlineIsotonic.predict_learn_many .* at index 1"):
        cal.predict_learn_many([0.3, 0.4], [1, 0], [1.0, 1e-300])
    assert cal.to_dict() == before
    cal._check()
    # the other way round: 1e300 right after 1e-300 (the light one is not forgettable)
    light = OnlineIsotonic(half_life=1.0, window_size=window_size)
    light.learn_one(0.5, 1, 1e-300)
    light.learn_one(0.2, 0, 1e-250)
    before = light.to_dict()
    with pytest.raises(ValueError, match=r"'w' argument of OnlineIsotonic.learn_one"):
        light.learn_one(0.7, 1, 1e300)
    assert light.to_dict() == before
    # time passes (unit weights), the heavy event decays, 1e-300 fits
    for t in range(1100):
        cal.learn_one(0.05 * (t % 20), t % 2)
    cal.learn_one(0.3, 1, 1e-300)
    cal._check()


_EXTREME = [1.0, 1.0, 1.0, 0.5, 3.0, 0.0, 1e300, 1e-300, 1e200, 1e-200, 1.7e308, 2.2e-308, 5e-324, 1e100]


@settings(max_examples=60, deadline=None)
@given(
    half_life=st.sampled_from([0.05, 0.25, 1.0]),  # 1 / h an integer: exact rational decay
    window_size=st.sampled_from([None, 2, 7]),
    events=st.lists(
        st.tuples(st.sampled_from([0.1, 0.3, 0.5, 0.7, 0.9]), st.booleans(), st.sampled_from(_EXTREME)),
        min_size=1, max_size=40,
    ),
)
def test_half_life_extreme_weights_hypothesis(half_life, window_size, events):
    """Any stream of extreme weights: every event is accepted, or refused with the state
    unchanged; after each, every invariant holds and the fit equals the oracle's (exact
    rational relative weights), unless an event weighing less than 2**-1000 of a new
    unit-weight one is held, which forgetting may have dropped."""
    cal = OnlineIsotonic(half_life=half_life, window_size=window_size)
    held = []
    for s, y, w in events:
        before = cal.to_dict()
        try:
            cal.learn_one(s, y, w)
        except ValueError:
            assert cal.to_dict() == before
            continue
        held.append((s, y, w))
        cal._check()
        n = len(held)
        first = 0 if window_size is None else max(0, n - window_size)
        per_event = round(1 / half_life)
        rel = [Fraction(w) / Fraction(2) ** ((n - 1 - i) * per_event) for i, (_, _, w) in enumerate(held)]
        sample = [(held[i][0], held[i][1], rel[i]) for i in range(first, n) if rel[i] > 0]
        if not sample or min(r for _, _, r in sample) < Fraction(1, 2**1000):
            continue
        top = max(r for _, _, r in sample)
        weights = [float(r / top) for _, _, r in sample]
        if min(weights) < 2.0**-1000:
            continue
        _assert_matches(cal, [k for k, _, _ in sample], [float(y) for _, y, _ in sample], weights,
                        [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0], tol=1e-9)


def test_a_removal_leaving_finer_bits_than_any_sum_keeps_the_store_exact():
    """Found by an outside review: a restore rebuilds the store with its exactness scale
    (``qexp``) taken from the cell sums alone, so two events ``b + d`` and ``b - d`` in
    one cell leave it coarser than ``d``; evicting ``b + d`` from the window then left a
    sum finer than the scale, the store still called its coordinates exact, ``_check()``
    failed and ``predict_one`` (which reads exact coordinates) differed from
    ``predict_many``. The residue of a removal now refines the scale."""
    rng = random.Random(0)
    d, n = 2.0 ** -45, 400
    first = []
    for _ in range(n // 2):
        x, b = round(rng.random(), 2), rng.randint(2**25, 2**27) * 2.0**-25
        first.append((x, int(rng.random() < x), b + d))
    events = first + [(x, y, w - 2 * d) for x, y, w in first]
    events += [(round(rng.random(), 2), int(rng.random() < 0.5), 1.0) for _ in range(20)]
    cal = OnlineIsotonic(window_size=n)
    for e in events[:n]:
        cal.learn_one(*e)
    cal = pickle.loads(pickle.dumps(cal))  # rebuilt from its cells
    for k, e in enumerate(events[n:], n):
        cal.learn_one(*e)  # evicts events[k - n], a b + d
        cal._check()
        window = events[k - n + 1 : k + 1]
        keys = [x for x, _, _ in window]
        _assert_matches(cal, keys, [y for _, y, _ in window], [w for _, _, w in window],
                        sorted(set(keys)))
        xs = np.array(sorted(set(keys)))
        assert [cal.predict_one(float(x)) for x in xs] == list(cal.predict_many(xs))
