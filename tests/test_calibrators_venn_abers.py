"""VennAbers: the streaming inductive Venn-ABERS calibrator (issue 13, item 1).

References checked against:

- the batch oracle :func:`tests.references.venn_abers` (textbook PAV refitted on the
  events held plus the hypothetical event labelled 0 and 1; Vovk, Petej and Fedorova
  2015, section 3), and scipy's ``optimize.isotonic_regression`` as a second, independent
  refit;
- the ``venn-abers`` package (PyPI, test-only dependency), ``VennAbers().fit(p_cal,
  y_cal).predict_proba(p_test)``, whose ``p0_p1`` columns are the pair and whose
  ``p_prime[:, 1]`` is the merged probability ``p1 / (1 - p0 + p1)``.
"""

from __future__ import annotations

import json
import math
import pickle
import random
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

try:
    from tests import references as ref
    from tests.event_streams import edge_stream
    from tests.test_calibrators_isotonic import make_stream
except ImportError:  # run from inside tests/
    import references as ref
    from event_streams import edge_stream
    from test_calibrators_isotonic import make_stream
from streamcal import OnlineIsotonic, VennAbers
from streamcal.checks import _common

PARAMS = [
    {},
    {"window_size": 1},
    {"window_size": 9},
    {"resolution": 0.05},
    {"half_life": 4.0},
    {"half_life": 0.3},
    {"half_life": 0.5, "window_size": 30, "resolution": 0.1},
]


def oracle_pair(cal, events, s):
    """The Venn-ABERS pair at ``s`` refitted from scratch on what ``cal`` documents it
    holds after ``events`` (window tail, decayed weights, grid keys)."""
    keys, labels, weights = ref.online_isotonic_sample(
        events, cal.window_size, cal.half_life, cal.resolution, next_event=True
    )
    k = s if cal.resolution is None else ref.grid_round(s, cal.resolution)
    return ref.venn_abers(keys, labels, weights, k)


def merged(p0, p1):
    return p1 / (1.0 - p0 + p1)


def close(a, b, tol=1e-12):
    return math.isclose(a, b, rel_tol=tol, abs_tol=tol)


# ---------------------------------------------------------------------- the batch oracle


@pytest.mark.parametrize("params", PARAMS, ids=repr)
@pytest.mark.parametrize("weights", ["unit", "int", "float"])
@pytest.mark.parametrize("seed", range(3))
def test_matches_batch_oracle_at_every_prefix(params, weights, seed):
    """(p0, p1) and the merged probability against refitting with the test event
    labelled 0 and 1, at seen and unseen scores and at 0 and 1, after every event of
    the first 60 and every fourth after; ties from the grid and edge scores."""
    rng = random.Random(f"va-oracle-{params}-{weights}-{seed}")
    kind = ["grid1", "uniform", "endpoints", "grid2"][(seed + len(params)) % 4]
    events = make_stream(rng, 150, kind, weights)
    cal = VennAbers(**params)
    for j, (s, y, w) in enumerate(events):
        cal.learn_one(s, y, w)
        if j >= 60 and j % 4:
            continue
        prefix = events[: j + 1]
        seen = sorted({e[0] for e in prefix})
        queries = [0.0, 1.0, rng.random(), rng.random()] + seen[:: max(1, len(seen) // 5)]
        for q in queries:
            p0, p1 = cal.predict_interval_one(q)
            if not any(e[2] > 0 for e in prefix[-(cal.window_size or len(prefix)) :]):
                assert (p0, p1) == (0.0, 1.0) and cal.predict_one(q) == q  # cold start
                continue
            w0, w1 = oracle_pair(cal, prefix, q)
            # weights decayed by forgetting are rounded differently by the oracle
            tol = 1e-12 if cal.half_life is None else 1e-10
            assert close(p0, w0, tol) and close(p1, w1, tol), (j, q, (p0, p1), (w0, w1))
            assert 0.0 <= p0 <= p1 <= 1.0
            p = cal.predict_one(q)
            assert p == merged(p0, p1)
            assert p0 - 1e-15 <= p <= p1 + 1e-15


@pytest.mark.parametrize("seed", range(4))
def test_matches_scipy_isotonic_refit(seed):
    """A second oracle: scipy's PAV on the events plus the hypothetical one (ties pooled
    by weighted mean first, as the definition of the isotonic fit at a repeated score)."""
    from scipy.optimize import isotonic_regression

    rng = random.Random(f"va-scipy-{seed}")
    events = make_stream(rng, 200, ["grid2", "uniform"][seed % 2], ["unit", "int"][seed // 2])
    cal = VennAbers()
    for j, (s, y, w) in enumerate(events):
        cal.learn_one(s, y, w)
        if j % 10 != 9:
            continue
        for q in [rng.random(), events[rng.randrange(j + 1)][0], 0.0, 1.0]:
            pair = []
            for label in (0, 1):
                xs, ws, ss, _ = ref.aggregate(
                    [e[0] for e in events[: j + 1]] + [q],
                    [e[1] for e in events[: j + 1]] + [label],
                    [e[2] for e in events[: j + 1]] + [1.0],
                )
                fit = isotonic_regression(np.divide(ss, ws), weights=np.array(ws)).x
                pair.append(float(fit[xs.index(q)]))
            got = cal.predict_interval_one(q)
            assert close(got[0], pair[0]) and close(got[1], pair[1]), (q, got, pair)


def test_by_hand():
    cal = VennAbers()
    cal.learn_many([0.2, 0.4, 0.6, 0.8], [0, 1, 0, 1])
    # at 0.5, label 0: {.2}=0, {.4,.5,.6}=1/3, {.8}=1; label 1: {.4,.5,.6}=2/3
    assert cal.predict_interval_one(0.5) == (1 / 3, 2 / 3)
    assert cal.predict_one(0.5) == (2 / 3) / (1 - 1 / 3 + 2 / 3)
    # below everything: label 0 gives 0, label 1 pools {0.0, .2} = 1/2
    assert cal.predict_interval_one(0.0) == (0.0, 0.5)
    assert cal.predict_one(0.0) == 0.5 / 1.5
    # the isotonic fit says 0 at 0.2; Venn-ABERS does not
    assert OnlineIsotonic().predict_one(0.2) == 0.2
    iso = OnlineIsotonic()
    iso.learn_many([0.2, 0.4, 0.6, 0.8], [0, 1, 0, 1])
    assert iso.predict_one(0.2) == 0.0 and cal.predict_one(0.2) > 0.0


# ---------------------------------------------------------------------- the venn-abers package


def _package_pair(scores, labels, test):
    va_pkg = pytest.importorskip("venn_abers")
    p_cal = np.column_stack([1 - np.asarray(scores), np.asarray(scores)])
    p_test = np.column_stack([1 - np.asarray(test), np.asarray(test)])
    va = va_pkg.VennAbers()
    va.fit(p_cal, np.asarray(labels))
    p_prime, p0_p1 = va.predict_proba(p_test)
    return p0_p1[:, 0], p0_p1[:, 1], p_prime[:, 1]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n", [2, 7, 40, 300])
@pytest.mark.parametrize("tied", [False, True])
def test_matches_venn_abers_package(seed, n, tied):
    """On distinct calibration scores (and on scores tied on a 0.05 grid, where the
    package pools ties as we do), the pair and the merged probability equal the
    package's, at test scores between, below and above the calibration scores and at
    the calibration scores themselves."""
    rng = np.random.default_rng(seed * 1000 + n)
    if tied:
        scores = np.round(rng.random(n) * 20) / 20
    else:
        scores = rng.permutation(np.unique(np.round(rng.random(3 * n + 10), 12)))[:n]
    labels = (rng.random(n) < scores**1.5).astype(int)
    if n >= 7 and labels.min() == labels.max():
        labels[0] = 1 - labels[0]
    test = np.concatenate([rng.random(60), scores[:20], [0.0, 1.0, scores.min() / 2]])
    p0, p1, p = _package_pair(scores, labels, test)
    cal = VennAbers()
    cal.learn_many(scores, labels)
    for q, a, b, c in zip(test.tolist(), p0.tolist(), p1.tolist(), p.tolist()):
        got = cal.predict_interval_one(q)
        assert close(got[0], a) and close(got[1], b), (q, got, (a, b))
        assert close(cal.predict_one(q), c), (q, cal.predict_one(q), c)
    assert np.allclose(cal.predict_many(test), p, rtol=1e-12, atol=1e-12)


def test_matches_venn_abers_package_along_a_stream():
    """The online predictor is the package's predictor refitted on each prefix."""
    rng = np.random.default_rng(7)
    n = 400
    scores = rng.permutation(np.unique(rng.random(n + 50)))[:n]
    labels = (rng.random(n) < scores).astype(int)
    cal = VennAbers()
    preds = cal.predict_learn_many(scores, labels)
    loop = VennAbers()
    for i in list(range(5, 40)) + list(range(40, n, 37)):
        loop.learn_many(scores[loop.n_events : i], labels[loop.n_events : i])
        _, _, p = _package_pair(scores[:i], labels[:i], scores[i : i + 1])
        assert close(preds[i], p[0]), (i, preds[i], p[0])
        assert loop.predict_one(float(scores[i])) == preds[i]


# ---------------------------------------------------------------------- no mutation


def _state(cal):
    return json.dumps(cal.to_dict()), _common.fingerprint(cal), pickle.dumps(cal)


@pytest.mark.parametrize("params", PARAMS, ids=repr)
def test_prediction_leaves_the_state_exactly_as_it_was(params):
    """A calibrator queried at every step (seen and new scores, tied scores, 0 and 1)
    and a twin never queried: identical snapshots, fingerprints and invariants at every
    step, and identical predictions (the same floats) for the rest of the stream."""
    rng = random.Random(f"va-nomut-{params}")
    events = make_stream(rng, 400, "grid2", "float")
    queried, twin = VennAbers(**params), VennAbers(**params)
    for j, (s, y, w) in enumerate(events):
        queried.learn_one(s, y, w)
        twin.learn_one(s, y, w)
        before = _state(queried)
        for q in (s, round(rng.random(), 2), rng.random(), 0.0, 1.0):
            queried.predict_interval_one(q)
            queried.predict_one(q)
        queried.predict_many(np.array([rng.random() for _ in range(5)]))
        if j % 25 == 0:
            queried._check()
        assert _state(queried) == before, f"a prediction changed the state at event {j}"
        assert _state(queried)[:2] == _state(twin)[:2]
    grid = np.linspace(0, 1, 201)
    assert queried.predict_many(grid).tolist() == twin.predict_many(grid).tolist()
    assert queried.blocks == twin.blocks
    rest = make_stream(rng, 200, "uniform", "int")
    s, y, w = (np.array(c, dtype=float) for c in zip(*rest))
    assert queried.predict_learn_many(s, y, w).tolist() == twin.predict_learn_many(s, y, w).tolist()


def test_prediction_leaves_the_state_with_small_leaves():
    """Hypothetical insertions that split a leaf, and removals that merge it back, on a
    store with 4-cell leaves (so that rebalancing runs in a short stream)."""
    from streamcal.core.pav import IsotonicBlockStore

    rng = random.Random("va-small-leaves")
    cal = VennAbers()
    cal._stream.store = IsotonicBlockStore(leaf_capacity=4)
    for j in range(300):
        cal.learn_one(rng.random(), int(rng.random() < 0.5))
        before = cal._store.to_lists()
        for q in [rng.random() for _ in range(4)]:
            cal.predict_one(q)
        assert cal._store.to_lists() == before
        cal._store._check()


# ---------------------------------------------------------------------- the rest of the API


def test_cold_start_and_zero_weights():
    cal = VennAbers()
    qs = [0.0, 0.3, 1.0]
    assert [cal.predict_one(q) for q in qs] == qs  # the project's convention: the score
    assert cal.predict_many(qs).tolist() == qs
    assert cal.predict_interval_one(0.3) == (0.0, 1.0)
    cal.learn_one(0.5, 1, w=0)
    assert [cal.predict_one(q) for q in qs] == qs and cal.n_events == 1
    cal.learn_one(0.5, 1)
    # one positive at 0.5: above it, p0 pools with it (1/2), p1 = 1; below, p0 = 0
    assert cal.predict_interval_one(0.7) == (0.5, 1.0)
    assert cal.predict_interval_one(0.3) == (0.0, 1.0)
    assert cal.predict_one(0.3) == 0.5


def test_window_forgets_back_to_the_cold_start():
    cal = VennAbers(window_size=2)
    cal.learn_many([0.2, 0.8], [0, 1])
    cal.learn_many([0.4, 0.6], [1, 1], [0.0, 0.0])
    assert cal.predict_one(0.3) == 0.3 and cal.blocks == ()


def test_merged_probability_between_the_pair_and_monotone():
    rng = np.random.default_rng(3)
    s = np.round(rng.random(500), 2)
    y = (rng.random(500) < s).astype(int)
    cal = VennAbers()
    cal.learn_many(s, y)
    grid = np.linspace(0, 1, 1001)
    pairs = np.array([cal.predict_interval_one(q) for q in grid.tolist()])
    p = cal.predict_many(grid)
    assert np.all(np.diff(pairs[:, 0]) >= 0) and np.all(np.diff(pairs[:, 1]) >= 0)
    assert np.all(np.diff(p) >= 0)
    assert np.all((pairs[:, 0] <= p) & (p <= pairs[:, 1]))
    assert 0.0 < p.min() and p.max() < 1.0  # never certain


def test_batch_methods_are_the_loop_exactly():
    rng = np.random.default_rng(11)
    s = np.round(rng.random(700), 2)
    y = (rng.random(700) < s**2).astype(int)
    w = rng.choice([1.0, 0.0, 0.5, 3.0], 700)
    for params in VennAbers._unit_test_params():
        loop, batch = VennAbers(**params), VennAbers(**params)
        expected = []
        for a, b, c in zip(s.tolist(), y.tolist(), w.tolist()):
            expected.append(loop.predict_one(a))
            loop.learn_one(a, b, c)
        assert batch.predict_learn_many(s, y, w).tolist() == expected
        queries = np.concatenate([s[:50], rng.random(50)])
        assert batch.predict_many(queries).tolist() == [loop.predict_one(q) for q in queries.tolist()]
        learnt = VennAbers(**params)
        learnt.learn_many(s, y, w)  # the refit path (a large batch)
        learnt._check()
        assert np.allclose(learnt.predict_many(queries), batch.predict_many(queries), rtol=1e-12, atol=1e-12)


def test_errors_name_the_class():
    cal = VennAbers()
    for method, args in (
        (cal.learn_one, (1.5, 1)),
        (cal.predict_one, (float("nan"),)),
        (cal.predict_interval_one, (-0.1,)),
        (cal.learn_one, (0.5, 2)),
        (cal.learn_one, (0.5, 1, -1.0)),
    ):
        with pytest.raises((ValueError, TypeError), match=r"of VennAbers\.\w+ must be"):
            method(*args)
    with pytest.raises(ValueError, match="'window_size' parameter of VennAbers"):
        VennAbers(window_size=0)
    with pytest.raises(TypeError):
        VennAbers(interpolation="linear")  # no interpolation: the pair is read at a seen score
    # OnlineIsotonic keeps its own name
    with pytest.raises(ValueError, match=r"OnlineIsotonic\.predict_interval_one"):
        OnlineIsotonic().predict_interval_one(2.0)


def test_snapshots_restore_exactly():
    from streamcal.base import BinaryCalibrator

    rng = np.random.default_rng(5)
    s = np.round(rng.random(300), 2)
    y = (rng.random(300) < s).astype(int)
    for params in VennAbers._unit_test_params():
        cal = VennAbers(**params)
        cal.learn_many(s, y)
        d = json.loads(json.dumps(cal.to_dict()))
        assert d["class"] == "VennAbers"
        for other in (BinaryCalibrator.from_dict(d), pickle.loads(pickle.dumps(cal))):
            assert type(other) is VennAbers and other._get_params() == cal._get_params()
            other._check()
            grid = np.linspace(0, 1, 101)
            assert other.predict_many(grid).tolist() == cal.predict_many(grid).tolist()
            assert [other.predict_interval_one(q) for q in grid.tolist()] == [
                cal.predict_interval_one(q) for q in grid.tolist()
            ]
        fresh = cal.clone()
        assert fresh.predict_one(0.3) == 0.3 and fresh._get_params() == cal._get_params()


# ---------------------------------------------------------------------- property-based

_EVENT = st.tuples(
    st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]) | st.floats(0, 1),
    st.integers(0, 1),
    st.sampled_from([0.0, 0.5, 1.0, 3.0]),
)


@given(
    st.lists(_EVENT, max_size=80),
    st.lists(st.floats(0, 1), min_size=1, max_size=6),
    st.sampled_from([{}, {"window_size": 5}, {"half_life": 3.0}, {"resolution": 0.1}]),
)
@settings(max_examples=60, deadline=None)
def test_property_pair_is_the_oracle_and_state_is_kept(events, queries, params):
    """Any stream, any queries: the pair equals the batch oracle, lies in order, and
    the store is bit-for-bit what it was before the queries, its invariants intact."""
    cal = VennAbers(**params)
    for s, y, w in events:
        cal.learn_one(s, y, w)
    before = json.dumps(cal.to_dict())
    held = any(e[2] > 0 for e in events[-(cal.window_size or len(events) or 1) :])
    for q in queries:
        p0, p1 = cal.predict_interval_one(q)
        assert 0.0 <= p0 <= p1 <= 1.0
        if held:
            w0, w1 = oracle_pair(cal, events, q)
            tol = 1e-12 if cal.half_life is None else 1e-10
            assert close(p0, w0, tol) and close(p1, w1, tol), (q, (p0, p1), (w0, w1))
            assert cal.predict_one(q) == merged(p0, p1)
        else:
            assert (p0, p1) == (0.0, 1.0) and cal.predict_one(q) == q
    assert json.dumps(cal.to_dict()) == before
    cal._check()


# ---------------------------------------------------------------------- the batch shortcut
# Without a window, an event of unit weight is learnt by predict_learn_many in three
# store operations instead of five: the hypothetical fit of the other label, the learn,
# one read at the event's key (which is the hypothetical fit of its own label).
# IsotonicStream._va_predict_learn_c; these tests hold it to the per-event loop.

SHORTCUT_PARAMS = [
    {},
    {"resolution": 0.01},
    {"resolution": 0.25},
    {"half_life": 500.0},
    {"half_life": 3.0},  # renormalises every ~1500 events: the general path there
    {"half_life": 0.3},  # ... every ~150
    {"half_life": 40.0, "resolution": 0.05},
    {"window_size": 7},  # the general path throughout
    {"window_size": 200, "half_life": 30.0},
]


def _loop(cal, s, y, w):
    out = []
    for a, b, c in zip(s.tolist(), y.tolist(), w.tolist()):
        out.append(cal.predict_one(a))
        cal.learn_one(a, b, c)
    return out


def _bits(values):
    return np.asarray(values, dtype=np.float64).view(np.int64).tolist()


def _same_state(a, b):
    assert json.dumps(a.to_dict()) == json.dumps(b.to_dict())
    assert a.blocks == b.blocks
    a._check()
    b._check()


@pytest.mark.parametrize("params", SHORTCUT_PARAMS, ids=repr)
@pytest.mark.parametrize("scores", ["uniform", "ties"])
@pytest.mark.parametrize("weights", ["unit", "mixed"])
@pytest.mark.parametrize("leaf_capacity", [None, 4])
def test_batch_shortcut_is_the_loop_bit_for_bit(params, scores, weights, leaf_capacity):
    """predict_learn_many (in chunks, as the replay calls it) against predict_one then
    learn_one per event: the same floats, bit for bit, and the same state after; with
    ties (the event's key already held), a grid, forgetting (renormalisations included),
    windows, weights other than 1 (0, 0.5, 3) among unit ones, and 4-cell leaves (so
    that hypothetical insertions split and merge leaves)."""
    from streamcal.core.pav import IsotonicBlockStore

    # a seed fixed by the parameters (``hash`` of a str varies with PYTHONHASHSEED)
    rng = np.random.default_rng(zlib.crc32(repr((params, scores, weights, leaf_capacity)).encode()))
    n = 2500
    s, y, w = edge_stream(rng, n, scores == "ties", weights == "mixed")
    batch, loop = VennAbers(**params), VennAbers(**params)
    if leaf_capacity is not None:
        batch._stream.store = IsotonicBlockStore(leaf_capacity=leaf_capacity)
        loop._stream.store = IsotonicBlockStore(leaf_capacity=leaf_capacity)
    got = []
    for a in range(0, n, 700):
        got.extend(batch.predict_learn_many(s[a : a + 700], y[a : a + 700], w[a : a + 700]).tolist())
    expected = _loop(loop, s, y, w)
    assert _bits(got) == _bits(expected)
    _same_state(batch, loop)
    if params.get("half_life") in (3.0, 0.3):
        assert batch._t_ref > 0  # renormalisations did happen (the general path there)


def test_batch_shortcut_does_three_store_operations_not_four():
    """The shortcut is taken exactly where it applies: without a window and with unit
    weights, the batch reads one hypothetical fit per event where a per-event loop of
    ``predict_interval_one`` and ``learn_one`` reads two. With exact coordinates (unit
    or dyadic weights) those are read-only queries (``_op_query``) and the tree's work
    (its operation counters: tree nodes updated, hull steps, cells moved) is the
    learns' alone, the same in both; with forgetting (non-dyadic weights) each is an
    insertion, relabelled, then restored, and the batch does about 3/4 of the loop's
    work. With a window, or with weights other than 1, the same work as the loop (the
    general path)."""
    rng = np.random.default_rng(7)
    n = 3000
    s = rng.random(n)
    y = (rng.random(n) < s).astype(np.float64)
    for params, w, lo, hi, queries in (
        ({}, np.ones(n), 1.0, 1.0, 0.5),
        ({"resolution": 0.01}, np.ones(n), 1.0, 1.0, 0.5),
        ({"half_life": 500.0}, np.ones(n), 0.65, 0.9, None),  # exact at the first events only
        ({"window_size": 50}, np.ones(n), 1.0, 1.0, 1.0),
        ({}, np.full(n, 2.0), 1.0, 1.0, 1.0),
    ):
        batch, loop = VennAbers(**params), VennAbers(**params)
        batch.predict_learn_many(s, y, w)
        for a, b, c in zip(s.tolist(), y.tolist(), w.tolist()):
            loop.predict_interval_one(a)  # both hypothetical events, always
            loop.learn_one(a, b, c)
        work = [st._op_nodes + st._op_hull + st._op_moved for st in (batch._store, loop._store)]
        ratio = work[0] / work[1]
        assert lo <= ratio <= hi, (params, ratio)
        if queries is not None:  # every hypothetical fit after the first event read-only
            assert loop._store._op_query == 2 * (n - 1), params
            assert batch._store._op_query == queries * loop._store._op_query, params


@pytest.mark.parametrize("params", [{}, {"window_size": 40}, {"half_life": 30.0}])
@pytest.mark.parametrize("ties", [False, True])
def test_pair_is_one_insertion_relabelled(params, ties):
    """The Venn-ABERS pair (the general path: windows, forgetting, other weights): the
    floats of two separate hypothetical fits (``hypothetical_value`` with labels 0 and
    1 on a copy of the store) bit for bit, the store as it was. Without exact
    coordinates (forgetting) it inserts the hypothetical event once and relabels it
    between the two fits, in less of the store's work (3 path updates instead of 4);
    with them, two read-only queries and no path update."""
    import copy

    rng = np.random.default_rng(11)
    s = rng.random(400)
    if ties:
        s = np.round(s, 1)
    y = (rng.random(400) < s).astype(int)
    w = rng.choice([1.0, 2.0, 0.5], 400)
    cal = VennAbers(**params)
    spent = [0, 0]
    for a, b, c in zip(s.tolist(), y.tolist(), w.tolist()):
        store = cal._store
        twin = copy.deepcopy(store)
        before = _snapshot(cal)
        wh = cal._stream.next_weight()  # the hypothetical event's weight (no grid: key a)
        counters = [store._op_nodes + store._op_hull + store._op_moved,
                    twin._op_nodes + twin._op_hull + twin._op_moved]
        queries = store._op_query
        pair = cal.predict_interval_one(a)
        if len(twin):
            expected = tuple(min(max(twin.hypothetical_value(a, wh, q), 0.0), 1.0) for q in (0.0, 1.0))
            assert _bits(pair) == _bits(expected)
            spent[0] += store._op_nodes + store._op_hull + store._op_moved - counters[0]
            spent[1] += twin._op_nodes + twin._op_hull + twin._op_moved - counters[1]
            if "half_life" not in params:  # exact coordinates: two read-only queries
                assert store._op_query - queries == 2
        assert _snapshot(cal) == before
        cal.learn_one(a, b, c)
    cal._check()
    if "half_life" in params:
        assert spent[1] > 0 and spent[0] < 0.9 * spent[1], spent
    else:  # no insertion at all
        assert spent == [0, 0]


def test_batch_shortcut_falls_back_where_weights_span_the_range():
    """With forgetting, after a light event the next unit-weight learn may renormalise
    or store a weight other than the hypothetical event's: those events take the
    general path, with the loop's floats; an error mid-batch leaves the state as it
    was, as in the loop."""
    rng = np.random.default_rng(3)
    n = 600
    s = np.round(rng.random(n), 3)
    y = (rng.random(n) < s).astype(np.float64)
    w = np.ones(n)
    w[100] = 1e-250
    w[101:103] = 1e-300
    w[300] = 1e100
    for params in ({"half_life": 5.0}, {"half_life": 200.0}):
        batch, loop = VennAbers(**params), VennAbers(**params)
        got = batch.predict_learn_many(s, y, w).tolist()
        assert _bits(got) == _bits(_loop(loop, s, y, w))
        _same_state(batch, loop)
    cal = VennAbers()
    cal.learn_many(s[:10], y[:10])
    before = _state(cal)
    bad = np.ones(20)
    bad[12] = bad[15] = 1e308  # the sums would overflow at index 15
    with pytest.raises(ValueError, match=r"'w' argument of VennAbers\.predict_learn_many"):
        cal.predict_learn_many(s[:20], y[:20], bad)
    assert _state(cal) == before


_SHORT_EVENT = st.tuples(
    st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]) | st.floats(0, 1),
    st.integers(0, 1),
    st.sampled_from([1.0, 1.0, 1.0, 0.0, 0.5, 3.0]),
)


@given(
    st.lists(_SHORT_EVENT, max_size=120),
    st.integers(1, 40),
    st.sampled_from(
        [{}, {"resolution": 0.1}, {"half_life": 3.0}, {"half_life": 0.5, "resolution": 0.2},
         {"window_size": 5}, {"window_size": 30, "half_life": 2.0}]
    ),
    st.sampled_from([None, 4]),
)
@settings(max_examples=150, deadline=None)
def test_property_batch_is_the_per_event_loop(events, chunk, params, leaf_capacity):
    """Any stream cut into chunks of any size: predict_learn_many gives the floats of
    the per-event loop, bit for bit, and leaves the same state, invariants intact."""
    from streamcal.core.pav import IsotonicBlockStore

    batch, loop = VennAbers(**params), VennAbers(**params)
    if leaf_capacity is not None:
        batch._stream.store = IsotonicBlockStore(leaf_capacity=leaf_capacity)
        loop._stream.store = IsotonicBlockStore(leaf_capacity=leaf_capacity)
    s, y, w = (np.array(c, dtype=np.float64) for c in zip(*events)) if events else (np.empty(0),) * 3
    got = []
    for a in range(0, len(events), chunk):
        got.extend(batch.predict_learn_many(s[a : a + chunk], y[a : a + chunk], w[a : a + chunk]).tolist())
    assert _bits(got) == _bits(_loop(loop, s, y, w))
    _same_state(batch, loop)


# ---------------------------------------------------------------------- predict then learn
# predict_one reads the Venn-ABERS pair by two read-only queries of the store whenever
# its coordinates are exact (always, with unit weights; _pav_query.pxd); the query
# itself is compared with the insert-and-restore fallback in tests/test_core_pav_query.py.

def _snapshot(cal):
    return (cal._stream.n_cells, cal.n_events, cal._stream.total_weight_parts(), json.dumps(cal.to_dict()),
            pickle.dumps(cal), _common.fingerprint(cal), cal.blocks)


def _beta_events(n, seed, ties):
    """``n`` Beta(2, 2) scores (rounded to two decimals if ``ties``) with labels
    Bernoulli(score)."""
    rng = np.random.default_rng(seed)
    s = rng.beta(2, 2, n)
    if ties:
        s = np.round(s, 2)
    return s, (rng.random(n) < s).astype(int)



@pytest.mark.parametrize("scores", ["uniform", "ties"])
@pytest.mark.parametrize("leaf_capacity", [None, 4])
def test_readonly_predict_then_learn_matches_the_oracle_and_inserts_nothing(scores, leaf_capacity):
    """The CalibratedClassifier path (predict_one then learn_one of each event): every
    prediction is two read-only queries (``_op_query``), leaves the store's work
    counters and snapshot as they were, and equals the batch oracle (PAV refitted with
    each hypothetical label) at every 100th event."""
    from streamcal.core.pav import IsotonicBlockStore

    n = 1500
    s, y = _beta_events(n, 19, ties=scores == "ties")
    cal = VennAbers()
    if leaf_capacity is not None:
        cal._stream.store = IsotonicBlockStore(leaf_capacity=leaf_capacity)
    for j, (a, b) in enumerate(zip(s.tolist(), y.tolist())):
        store = cal._store
        work = (store._op_nodes, store._op_hull, store._op_moved)
        before = json.dumps(cal.to_dict()) if j % 250 == 0 else None
        p = cal.predict_one(a)
        assert (store._op_nodes, store._op_hull, store._op_moved) == work
        if before is not None:
            assert json.dumps(cal.to_dict()) == before
            cal._check()
        if j % 100 == 0 and j > 0:
            p0, p1 = ref.venn_abers(s[:j].tolist(), y[:j].tolist(), None, a)
            assert p == pytest.approx(p1 / (1.0 - p0 + p1), abs=1e-12)
        cal.learn_one(a, b)
    assert cal._store._op_query == 2 * (n - 1)
