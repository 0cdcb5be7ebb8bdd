"""Tests of the PAV core, ``streamcal.core.pav``, against the textbook PAV oracle in
``tests/references.py``.

Like sortedcontainers' tests, the internal size threshold ``pav._SMALL`` (48 cells:
plain Python below, numpy / scipy above) is monkeypatched to a tiny value in some
parametrised tests so that the vectorised paths run on small inputs.
"""

from __future__ import annotations

import json
import math
import pickle
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

import streamcal.core.pav as pav
from streamcal.core.pav import BlockView, IsotonicBlockStore, pav_blocks

try:  # tests/ as a package (tests/__init__.py) or as a plain directory on sys.path
    from tests import references as ref
    from tests.event_streams import remove_event
except ImportError:  # pragma: no cover
    import references as ref
    from event_streams import remove_event

SMALL_VALUES = [pav._SMALL, 2]  # the real threshold, then forcing the numpy / scipy paths


@pytest.fixture(params=SMALL_VALUES, ids=lambda v: f"small={v}")
def small(request, monkeypatch):
    monkeypatch.setattr(pav, "_SMALL", request.param)
    return request.param


# ---------------------------------------------------------------------- helpers


def random_cells(rng, m, kind):
    """``m`` cells (weights, weighted label sums) of one of several flavours."""
    if kind == "unit-binary":
        ws = [1.0] * m
        ss = [float(rng.random() < 0.5) for _ in range(m)]
    elif kind == "int-weights":
        ws = [float(rng.randint(1, 5)) for _ in range(m)]
        ss = [float(rng.randint(0, int(w))) for w in ws]  # cells aggregating binary labels
    elif kind == "float":
        ws = [rng.uniform(0.05, 10.0) for _ in range(m)]
        ss = [w * rng.random() for w in ws]
    elif kind == "monotone-ish":  # long increasing runs with noise: few, long blocks
        ws = [float(rng.randint(1, 3)) for _ in range(m)]
        ss = [w * min(1.0, max(0.0, j / max(m, 1) + rng.uniform(-0.3, 0.3))) for j, w in enumerate(ws)]
    elif kind == "constant":  # every cell has the same mean: one block
        ws = [float(rng.randint(1, 4)) for _ in range(m)]
        ss = [w * 0.5 for w in ws]
    else:  # decreasing: everything pools into one block
        ws = [1.0] * m
        ss = [1.0 - j / max(m, 1) for j in range(m)]
    return ws, ss


def fitted_from_pieces(pieces, m):
    out = [None] * m
    for a, b, W, S in pieces:
        for j in range(a, b):
            out[j] = S / W
    return out


def assert_store_matches(store, events, exact):
    """Compare a store with the oracle fit of ``events`` (a list of ``(x, w, y)``)."""
    store._check()
    xs = [e[0] for e in events]
    ws = [e[1] for e in events]
    ys = [e[2] for e in events]
    oxs, ows, oss, ons = ref.aggregate(xs, ys, ws)
    cxs, cws, css, cns = store.cells()
    assert cxs.tolist() == oxs
    assert cns.tolist() == ons
    np.testing.assert_allclose(cws, ows, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(css, oss, rtol=1e-9, atol=1e-12)
    assert store.n_cells == len(oxs)
    oblocks = ref.isotonic_blocks(xs, ys, ws)
    blocks = store.blocks()
    assert isinstance(blocks, tuple) and all(isinstance(b, BlockView) for b in blocks)
    assert len(store) == len(blocks)
    if exact:  # sums are exact, so the level sets are the same partition
        assert [(b.score_min, b.score_max, b.n_events, b.n_cells) for b in blocks] == [
            (b[0], b[1], b[4], b[5]) for b in oblocks
        ]
        for b, o in zip(blocks, oblocks):
            assert b.value == o[2] and b.weight == o[3]
    fit = ref.isotonic_fit(xs, ys, ws)
    if not oxs:
        assert store.predict_step(0.5) is None and store.predict_linear(0.5) is None
        return
    queries = sorted(set(oxs) | {oxs[0] - 1.0, oxs[-1] + 1.0} | {(a + b) / 2 for a, b in zip(oxs, oxs[1:])})
    for q in queries:
        assert math.isclose(store.predict_step(q), ref.predict_step(fit, q), rel_tol=1e-9, abs_tol=1e-12), q
        # the store does not clip; the fit of labels in [0, 1] lies in [0, 1] anyway
        assert math.isclose(store.predict_linear(q), ref.predict_linear(fit, q), rel_tol=1e-9, abs_tol=1e-12), q


def build(events):
    store = IsotonicBlockStore()
    for x, w, y in events:
        store.add(x, w, y)
    return store


def random_events(rng, n, grid=None, weights="unit"):
    events = []
    for _ in range(n):
        x = rng.randrange(grid) / grid if grid else rng.random()
        if weights == "unit":
            w = 1.0
        elif weights == "int":
            w = float(rng.randint(1, 4))
        else:
            w = rng.uniform(0.1, 10.0)
        y = float(rng.random() < 0.3 + 0.4 * x)
        events.append((x, w, y))
    return events


# ---------------------------------------------------------------------- pav_blocks


@pytest.mark.parametrize("kind", ["unit-binary", "int-weights", "float", "monotone-ish", "constant", "decreasing"])
@pytest.mark.parametrize("m", [0, 1, 2, 3, 5, 17, 47, 48, 49, 50, 120, 400])
def test_pav_blocks_matches_textbook_pav(kind, m):
    """Both sides of the 48-cell threshold (plain Python vs scipy) against the oracle."""
    rng = random.Random(1000 * m + len(kind))
    for _ in range(5):
        ws, ss = random_cells(rng, m, kind)
        got = pav_blocks(ws, ss)
        want = ref.pav_cells(ws, ss)
        # the pieces tile [0, m), carry their totals, and strictly increase
        assert [p[0] for p in got] == ([0] + [p[1] for p in got[:-1]] if got else [])
        assert (got[-1][1] if got else 0) == m
        for a, b, W, S in got:
            assert math.isclose(W, math.fsum(ws[a:b]), rel_tol=1e-12)
            assert math.isclose(S, math.fsum(ss[a:b]), rel_tol=1e-12, abs_tol=1e-12)
        vals = [S / W for _, _, W, S in got]
        assert all(u < v for u, v in zip(vals, vals[1:]))
        np.testing.assert_allclose(
            np.array(fitted_from_pieces(got, m), dtype=float),
            np.array(fitted_from_pieces(want, m), dtype=float),
            rtol=1e-12,
            atol=1e-12,
        )
        if kind in ("unit-binary", "int-weights", "constant"):  # exact sums: same partition
            assert [(a, b) for a, b, _, _ in got] == [(a, b) for a, b, _, _ in want]
        if kind in ("constant", "decreasing") and m:
            assert len(got) == 1


@pytest.mark.parametrize("seed", range(6))
def test_pav_blocks_small_path_forced_matches_scipy_path(seed, monkeypatch):
    rng = random.Random(seed)
    ws, ss = random_cells(rng, 30, "int-weights")
    monkeypatch.setattr(pav, "_SMALL", 1000)
    python_path = pav_blocks(ws, ss)
    monkeypatch.setattr(pav, "_SMALL", 0)
    scipy_path = pav_blocks(ws, ss)
    assert python_path == scipy_path == ref.pav_cells(ws, ss)


def test_pav_blocks_docstring_example_by_hand():
    # cells 0..3 with labels 1, 0, 1, 1: the first two pool to 1/2, the last two stay 1
    assert pav_blocks([1.0] * 4, [1.0, 0.0, 1.0, 1.0]) == [(0, 2, 2.0, 1.0), (2, 4, 2.0, 2.0)]


@given(
    st.lists(
        st.tuples(st.sampled_from([1.0, 2.0, 0.5, 3.0, 0.25]), st.sampled_from([0.0, 0.25, 0.5, 1.0])),
        max_size=70,
    ),
    st.sampled_from([48, 2, 0]),
)
@settings(max_examples=150, deadline=None)
def test_pav_blocks_hypothesis(cells, small):
    ws = [w for w, _ in cells]
    ss = [w * y for w, y in cells]
    old = pav._SMALL
    pav._SMALL = small
    try:
        got = pav_blocks(ws, ss)
    finally:
        pav._SMALL = old
    # dyadic weights and labels: every sum is exact, so the partition is the oracle's
    assert got == ref.pav_cells(ws, ss)


# ---------------------------------------------------------------------- the store


def test_empty_store():
    store = IsotonicBlockStore()
    store._check()
    assert len(store) == 0 and store.n_cells == 0
    assert store.blocks() == ()
    assert store.predict_step(0.3) is None and store.predict_linear(0.3) is None
    xs, ws, ss, ns = store.cells()
    assert len(xs) == len(ws) == len(ss) == len(ns) == 0
    assert store.hypothetical_value(0.3, 1.0, 1.0) == 1.0
    assert store.hypothetical_value(0.3, 1.0, 0.0) == 0.0
    assert store.drop_light_cells(1.0) == 0
    store.rebuild([], [], [], [])
    store.scale_by_power_of_two(-1)
    store._check()
    assert len(store) == 0


def test_remove_from_empty_store_raises_key_error():
    # remove() reports a key that is not stored with KeyError (next test); an empty
    # store holds no key either, so it must answer the same way.
    store = IsotonicBlockStore()
    with pytest.raises(KeyError):
        store.remove(0.3, 1.0, 1.0)
    store.add(0.3, 1.0, 1.0)
    store.remove(0.3, 1.0, 1.0)  # emptied again
    with pytest.raises(KeyError):
        store.remove(0.3, 1.0, 1.0)


def test_remove_unknown_key_raises_and_leaves_store_unchanged():
    store = build([(0.2, 1.0, 0.0), (0.6, 1.0, 1.0)])
    before = store.to_lists()
    for x in (0.1, 0.4, 0.7):
        with pytest.raises(KeyError):
            store.remove(x, 1.0, 0.0)
    assert store.to_lists() == before
    store._check()


@pytest.mark.parametrize("weights", ["unit", "int", "float"])
@pytest.mark.parametrize("grid", [None, 5, 40, 200])
@pytest.mark.parametrize("seed", range(3))
def test_store_add_remove_random_against_oracle(seed, grid, weights, small):
    """Random adds and removes of previously added events, every step checked."""
    rng = random.Random(seed * 7919 + (grid or 0))
    store = IsotonicBlockStore()
    live = []
    exact = weights != "float"
    for step in range(200):
        if live and rng.random() < 0.35:
            assert remove_event(store, live, rng.randrange(len(live))) == 0 or not exact
        else:
            (ev,) = random_events(rng, 1, grid, weights)
            live.append(ev)
            store.add(*ev)
        if step % 4 == 0 or grid == 5:
            assert_store_matches(store, live, exact)
        elif step % 2 == 0:
            store._check()
    assert_store_matches(store, live, exact)
    while live:  # empty it completely
        remove_event(store, live, rng.randrange(len(live)))
        store._check()
    assert len(store) == 0 and store.n_cells == 0


@pytest.mark.parametrize("order", ["increasing", "decreasing", "random"])
def test_store_long_blocks_split_and_merge(order, small):
    """Long blocks (hundreds of cells) then events that split them, in both directions."""
    rng = random.Random(len(order))
    xs = [j / 300 for j in range(300)]
    if order == "decreasing":
        xs.reverse()
    elif order == "random":
        rng.shuffle(xs)
    events = [(x, 1.0, 0.5) for x in xs]  # one constant block of 300 cells
    store = build(events)
    assert len(store) == 1
    assert_store_matches(store, events, True)
    for step in range(50):
        x = rng.choice(xs)
        y = rng.choice([0.0, 1.0])
        ev = (x, float(rng.randint(1, 30)), y)
        events.append(ev)
        store.add(*ev)
        if step % 4 == 0:
            assert_store_matches(store, events, True)
    assert_store_matches(store, events, True)
    for step in range(50):
        ev = events.pop(rng.randrange(len(events)))
        store.remove(*ev)
        if step % 4 == 0:
            assert_store_matches(store, events, True)
    assert_store_matches(store, events, True)


@pytest.mark.parametrize("seed", range(10))
def test_hypothetical_value_against_oracle(seed, small):
    rng = random.Random(seed)
    events = random_events(rng, rng.choice([3, 30, 150]), grid=rng.choice([None, 10, 60]), weights="int")
    store = build(events)
    before = store.to_lists()
    keys = sorted({e[0] for e in events})
    queries = keys + [0.0, 1.0, -0.5, 1.5] + [rng.random() for _ in range(20)]
    for x in queries:
        for w in (1.0, 7.0, 1e-6):
            for y in (0.0, 1.0):
                fit = ref.isotonic_fit(
                    [e[0] for e in events] + [x], [e[2] for e in events] + [y], [e[1] for e in events] + [w]
                )
                want = ref.predict_step(fit, x)
                got = store.hypothetical_value(x, w, y)
                assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12), (x, w, y, got, want)
    assert store.to_lists() == before  # nothing was changed
    store._check()


@pytest.mark.parametrize("seed", range(5))
def test_scale_by_powers_of_two_leaves_predictions_unchanged(seed):
    rng = random.Random(seed)
    events = random_events(rng, 200, grid=rng.choice([None, 25]), weights="float")
    store = build(events)
    queries = [rng.random() for _ in range(50)] + sorted({e[0] for e in events})
    step = [store.predict_step(q) for q in queries]
    lin = [store.predict_linear(q) for q in queries]
    blocks = store.blocks()
    for k in (-1, 3, -300, 500, -202):
        store.scale_by_power_of_two(k)
        store._check()
        # multiplying by a power of two is exact: values bit for bit equal
        assert [store.predict_step(q) for q in queries] == step
        assert [store.predict_linear(q) for q in queries] == lin
    for k in (7, -1000, 993):  # ldexp: 2**-1000 * weights stays in the normal range
        store.scale_by_power_of_two(k)
        store._check()
        assert [store.predict_step(q) for q in queries] == step
        assert [store.predict_linear(q) for q in queries] == lin
    assert [b._replace(weight=0) for b in store.blocks()] == [b._replace(weight=0) for b in blocks]
    assert [b.weight for b in store.blocks()] == [b.weight for b in blocks]  # net factor 1


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("grid", [None, 20])
def test_rebuild_equals_adding_one_by_one(seed, grid, small):
    rng = random.Random(seed)
    events = random_events(rng, rng.choice([10, 60, 300]), grid=grid, weights="int")
    one_by_one = build(events)
    xs, ws, ss, ns = ref.aggregate([e[0] for e in events], [e[2] for e in events], [e[1] for e in events])
    rebuilt = IsotonicBlockStore()
    rebuilt.add(0.5, 1.0, 1.0)  # rebuild replaces whatever was there
    rebuilt.rebuild(xs, ws, ss, ns)
    rebuilt._check()
    assert rebuilt.blocks() == one_by_one.blocks()
    assert rebuilt.to_lists() == one_by_one.to_lists()
    # and the rebuilt store keeps working like the other one
    more = random_events(rng, 40, grid=grid, weights="int")
    for ev in more:
        rebuilt.add(*ev)
        one_by_one.add(*ev)
    rebuilt._check()
    assert rebuilt.blocks() == one_by_one.blocks()
    assert_store_matches(rebuilt, events + more, True)
    # rebuilding from nothing empties the store
    rebuilt.rebuild([], [], [], [])
    rebuilt._check()
    assert len(rebuilt) == 0


@pytest.mark.parametrize("seed", range(5))
def test_drop_light_cells_refits_the_remaining_cells(seed, small):
    rng = random.Random(seed)
    events = random_events(rng, 120, grid=30, weights="float")
    store = build(events)
    xs, ws, ss, ns = ref.aggregate([e[0] for e in events], [e[2] for e in events], [e[1] for e in events])
    threshold = sorted(ws)[len(ws) // 3]
    light = {x for x, w in zip(xs, ws) if w < threshold}
    assert store.drop_light_cells(threshold) == len(light) > 0
    kept = [e for e in events if e[0] not in light]
    assert_store_matches(store, kept, exact=False)
    assert store.drop_light_cells(threshold) == 0


@pytest.mark.parametrize("seed", range(5))
def test_state_round_trips(seed):
    rng = random.Random(seed)
    events = random_events(rng, 150, grid=rng.choice([None, 30]), weights="float")
    store = build(events)
    more = random_events(rng, 30, grid=30, weights="float")
    copies = [
        IsotonicBlockStore.from_lists(store.to_lists()),
        IsotonicBlockStore.from_lists(json.loads(json.dumps(store.to_lists()))),
        pickle.loads(pickle.dumps(store)),
    ]
    for c in copies:
        c._check()
        assert c.to_lists() == store.to_lists()
        assert c.blocks() == store.blocks()
        # independent of the original, and continue identically
        for ev in more:
            c.add(*ev)
    for ev in more:
        store.add(*ev)
    for c in copies:
        assert c.to_lists() == store.to_lists()
        c.remove(*more[0])
        assert c.to_lists() != store.to_lists()


def test_blocks_are_immutable():
    store = build([(0.1, 1.0, 0.0), (0.5, 1.0, 1.0)])
    blocks = store.blocks()
    with pytest.raises(TypeError):
        blocks[0] = blocks[1]
    with pytest.raises(AttributeError):
        blocks[0].value = 0.3
    assert store.blocks() == blocks


# ---------------------------------------------------------------------- stateful


class StoreMachine(RuleBasedStateMachine):
    """Random adds, removes (of events added before), scalings, rebuilds and
    hypothetical updates, with ``_check()`` and a comparison with the oracle after
    every step.

    Weights are dyadic and labels binary (the calibrators' case) or, in a subclass, in
    {0, 1/4, 1/2, 1}: every sum is exact, so the store must reproduce the oracle's
    partition exactly; scaling is by powers of two, which is also exact.
    """

    small = pav._SMALL
    labels = (0.0, 1.0)

    def __init__(self):
        super().__init__()
        self._old_small = pav._SMALL
        pav._SMALL = self.small
        self.store = IsotonicBlockStore()
        self.events: list[tuple[float, float, float]] = []
        self.exponent = 0

    def teardown(self):
        pav._SMALL = self._old_small

    @rule(
        x=st.one_of(st.sampled_from([0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0]), st.floats(0.0, 1.0)),
        w=st.sampled_from([1.0, 2.0, 3.0, 0.5, 0.25, 8.0]),
        data=st.data(),
    )
    def add(self, x, w, data):
        y = data.draw(st.sampled_from(self.labels), label="y")
        w = w * 2.0**self.exponent
        self.store.add(x, w, y)
        self.events.append((x, w, y))

    @precondition(lambda self: self.events)
    @rule(data=st.data())
    def remove(self, data):
        i = data.draw(st.integers(0, len(self.events) - 1), label="index")
        self.store.remove(*self.events.pop(i))

    @rule(k=st.integers(-3, 3))
    def scale(self, k):
        if abs(self.exponent + k) > 60:
            return
        self.exponent += k
        self.store.scale_by_power_of_two(k)
        self.events = [(x, w * 2.0**k, y) for x, w, y in self.events]

    @rule()
    def rebuild_from_own_cells(self):
        before = self.store.blocks()
        self.store.rebuild(*self.store.cells())
        assert self.store.blocks() == before

    @rule(
        x=st.one_of(st.sampled_from([0.0, 0.1, 0.3, 1.0]), st.floats(0.0, 1.0)),
        y=st.sampled_from([0.0, 1.0]),
    )
    def hypothetical(self, x, y):
        w = 2.0**self.exponent
        before = self.store.to_lists()
        got = self.store.hypothetical_value(x, w, y)
        assert self.store.to_lists() == before
        fit = ref.isotonic_fit(
            [e[0] for e in self.events] + [x], [e[2] for e in self.events] + [y], [e[1] for e in self.events] + [w]
        )
        assert got == ref.predict_step(fit, x)

    @invariant()
    def matches_oracle(self):
        assert_store_matches(self.store, self.events, exact=True)


class StoreMachineVectorised(StoreMachine):
    small = 2


class StoreMachineRealLabels(StoreMachine):
    """The store documents labels in [0, 1], not only binary ones."""

    labels = (0.0, 1.0, 0.5, 0.25)


class StoreMachineRealLabelsVectorised(StoreMachineRealLabels):
    small = 2


_machine_settings = settings(
    max_examples=40, stateful_step_count=30, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
TestStoreMachine = StoreMachine.TestCase
TestStoreMachine.settings = _machine_settings
TestStoreMachineVectorised = StoreMachineVectorised.TestCase
TestStoreMachineVectorised.settings = _machine_settings
# No shrinking for the real-label machines: they fail on a known bug (minimal case pinned
# in test_real_valued_labels_split_when_a_prefix_falls_below_the_mean) and shrinking a
# stateful failure takes over a minute.
_no_shrink = settings(_machine_settings, phases=[Phase.explicit, Phase.reuse, Phase.generate])
TestStoreMachineRealLabels = StoreMachineRealLabels.TestCase
TestStoreMachineRealLabels.settings = _no_shrink
TestStoreMachineRealLabelsVectorised = StoreMachineRealLabelsVectorised.TestCase
TestStoreMachineRealLabelsVectorised.settings = _no_shrink


def test_real_valued_labels_split_when_a_prefix_falls_below_the_mean():
    """Labels in [0, 1] (documented for the store): adding (0.0, w=1, y=0.5) to a block
    whose first cell has mean 1 lowers that cell's mean although it raises the block's.
    Then (0.1, w=7, y=1) puts cell 0.0 (mean 3/4) below cell 0.1 (mean 7/9): the fit
    has two blocks, 0.75 and 0.777..., by hand."""
    store = build([(0.1, 2.0, 0.0), (0.0, 1.0, 1.0), (0.0, 1.0, 0.5), (0.1, 7.0, 1.0)])
    assert store.predict_step(0.0) == 0.75
    assert store.predict_step(0.1) == 7.0 / 9.0
    store._check()


# ---------------------------------------------------------------------- precision


def test_remove_after_weight_absorbed_by_rounding():
    """A cell holding a weight-1 event and a weight-1e-17 event: 1 + 1e-17 rounds to 1,
    so after removing the weight-1 event the cell's sums are noise. ``remove`` then
    deletes the cell and returns how many other events went with it, for the caller
    to re-add (documented). Done so, the store is the fit of the remaining events: 0 at
    0.5 (label 0), by hand."""
    store = IsotonicBlockStore()
    store.add(0.2, 1.0, 0.0)
    store.add(0.5, 1.0, 1.0)
    store.add(0.5, 1e-17, 0.0)
    dropped = store.remove(0.5, 1.0, 1.0)
    assert dropped in (0, 1)
    if dropped:
        store.add(0.5, 1e-17, 0.0)
    store._check()
    assert store.predict_step(0.5) == 0.0
    assert_store_matches(store, [(0.2, 1.0, 0.0), (0.5, 1e-17, 0.0)], exact=True)


def test_split_detected_when_weights_span_more_than_double_precision():
    """Cell 0.3: label 1 with weight 2**60; cell 0.5: labels 1 and 0 with weight 1
    (mean 1/2): one block, 0.3's mean is higher. Adding label 0 with weight 2**120 at 0.3
    drops its mean to ~2**-60, below 0.5's 1/2: by hand the fit is two blocks and the
    value at 0.5 is exactly 1/2. (The violation is a suffix of weight 2 against a
    prefix of weight 2**120: it only shows when compared on the suffix side.)"""
    store = IsotonicBlockStore()
    store.add(0.3, 2.0**60, 1.0)
    store.add(0.5, 1.0, 1.0)
    store.add(0.5, 1.0, 0.0)
    assert len(store) == 1
    store.add(0.3, 2.0**120, 0.0)
    store._check()
    assert store.predict_step(0.5) == 0.5
    assert len(store) == 2


def test_public_block_accessors_for_incremental_consumers():
    store = IsotonicBlockStore()
    assert store.block_index(0.5) == -1 and store.cell(0.5) is None and store.live_blocks == []
    for x, y in [(0.1, 0.0), (0.2, 1.0), (0.5, 0.0), (0.7, 1.0), (0.9, 1.0)]:
        store.add(x, 1.0, y)
    store._check()
    assert store.cell(0.2) == (1.0, 1.0) and store.cell(0.3) is None
    views = store.blocks()
    live = store.live_blocks
    assert [(b.W, b.S) for b in live] == [(v.weight, v.value * v.weight) for v in views]
    assert store.block_index(0.0) == -1
    for i, v in enumerate(views):
        assert store.block_index(v.score_min) == i and store.block_index(v.score_max) == i
    # an update away from the first block leaves that block object in place
    first = live[0]
    store.add(0.95, 1.0, 1.0)
    assert store.live_blocks[0] is first


@pytest.mark.parametrize("exponent", [-1000, -700, -560, 500, 520])
def test_store_exact_tests_with_dyadic_weights_far_from_one(exponent):
    """Weights that are exact multiples of 2**exponent: the fast orientation test took the
    difference of two double products, which underflow to 0 below about 2**-537 (two
    cells of weights 2**-657 and 2**-656, labels 0 then 1, were pooled into one block
    and _check() failed) or overflow far above 1. Compared with the oracle on the same
    cells scaled by 2**-exponent (exact)."""
    rng = random.Random(exponent)
    store = IsotonicBlockStore(leaf_capacity=4)
    events = []
    for _ in range(60):
        x, w, y = rng.choice([0.1, 0.2, 0.3, 0.5, 0.7, 0.9]), rng.choice([1, 2, 3, 5]), rng.random() < 0.5
        store.add(x, math.ldexp(w, exponent), float(y))
        events.append((x, y, w))
        store._check()
        xs, ws, ss, _ = ref.aggregate(*zip(*events))
        blocks = ref.pav_cells(ws, ss)
        assert len(store.blocks()) == len(blocks)
        for b, (a, c, W, S) in zip(store.blocks(), blocks):
            assert (b.score_min, b.score_max) == (xs[a], xs[c - 1])
            assert b.value == S / W
