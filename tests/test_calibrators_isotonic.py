"""``OnlineIsotonic`` against the batch oracles of ``tests/references.py``.

The pattern of river's ``stats/test_stats.py``: feed a random stream one event at a
time and, after every event, compare the streaming object with a from-scratch batch fit
of the sample its docstring describes (all events; the last ``window_size``; decayed
weights; rounded scores), across many seeds, with ties, zero / integer / float weights,
degenerate labels and sorted arrivals. ``_check()`` (the block invariants and the
window bookkeeping) runs after every ``learn_one``. The linear interpolation is also
compared with scikit-learn's ``IsotonicRegression``, the reference it cites.
"""

from __future__ import annotations

import bisect
import json
import math
import pickle
import random
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.isotonic import IsotonicRegression

import streamcal.core.pav as pav
from streamcal import OnlineIsotonic, VennAbers
from streamcal.core.pav import BlockView

try:  # tests/ as a package (tests/__init__.py) or as a plain directory on sys.path
    from tests import references as ref
except ImportError:  # pragma: no cover
    import references as ref

INTERPOLATIONS = ("step", "linear")
GRID41 = [i / 40 for i in range(41)]


# ---------------------------------------------------------------------- streams


def make_stream(rng, n, scores="uniform", weights="unit", labels="random", order="random"):
    """A list of ``(score, label, w)``. Labels are ints, bools or floats 0.0/1.0, all
    accepted by ``learn_one``; int weights are Python ints."""
    out = []
    for _ in range(n):
        if scores == "uniform":
            s = rng.random()
        elif scores == "grid1":
            s = round(rng.random(), 1)
        elif scores == "grid2":
            s = round(rng.random(), 2)
        elif scores == "endpoints":  # 0 and 1 exactly, often
            s = rng.choice([0.0, 1.0, 0.0, 1.0, round(rng.random(), 1), rng.random()])
        else:
            raise ValueError(scores)
        if labels == "random":
            y = int(rng.random() < 0.15 + 0.7 * s)
        elif labels == "all0":
            y = 0
        elif labels == "all1":
            y = 1
        else:
            raise ValueError(labels)
        y = rng.choice([y, bool(y), float(y)])
        if weights == "unit":
            w = 1.0
        elif weights == "int":
            w = rng.choice([0, 1, 1, 2, 3, 7])
        elif weights == "float":
            w = 0.0 if rng.random() < 0.15 else rng.uniform(0.05, 5.0)
        elif weights == "positive-float":
            w = rng.uniform(0.1, 10.0)
        else:
            raise ValueError(weights)
        out.append((s, y, w))
    if order == "increasing":
        out.sort(key=lambda e: e[0])
    elif order == "decreasing":
        out.sort(key=lambda e: -e[0])
    return out


def query_points(events, resolution=None):
    """0, 1, a regular grid, (a subsample of) the seen scores and the midpoints between
    consecutive seen scores; with a resolution, also the rounding boundaries."""
    seen = sorted({e[0] for e in events})
    mids = [(a + b) / 2 for a, b in zip(seen, seen[1:])]
    qs = GRID41 + seen[:: max(1, len(seen) // 40)] + mids[:: max(1, len(mids) // 25)] + [0.0, 1.0]
    if resolution is not None:
        k_max = int(1 / resolution) + 1
        for k in range(0, k_max + 1, max(1, k_max // 15)):
            b = (k + 0.5) * resolution
            for q in (b, math.nextafter(b, 0.0), math.nextafter(b, 2.0)):
                if 0.0 <= q <= 1.0:
                    qs.append(q)
    return qs


# ---------------------------------------------------------------------- comparison


def oracle_prediction(fit, interpolation, q, resolution):
    if not fit[0]:
        return q  # documented cold start: the score itself
    k = q if resolution is None else ref.grid_round(q, resolution)
    return ref.predict_step(fit, k) if interpolation == "step" else ref.predict_linear(fit, k)


def assert_predictions(cal, fit, queries, tol):
    got = [cal.predict_one(q) for q in queries]
    for q, g in zip(queries, got):
        want = oracle_prediction(fit, cal.interpolation, q, cal.resolution)
        assert math.isfinite(g) and 0.0 <= g <= 1.0
        assert math.isclose(g, want, rel_tol=tol, abs_tol=tol), (cal, q, g, want)
    many = cal.predict_many(queries)
    assert isinstance(many, np.ndarray) and many.shape == (len(queries),)
    assert many.tolist() == got  # predict_many is predict_one, exactly


def assert_blocks(cal, sample, exact, tol):
    """``cal.blocks`` against the oracle's level sets of ``sample``."""
    keys, labels, weights = sample
    blocks = cal.blocks
    assert isinstance(blocks, tuple) and all(isinstance(b, BlockView) for b in blocks)
    scale = 1.0 if cal.resolution is None else cal.resolution
    oblocks = [
        (lo * scale if cal.resolution else lo, hi * scale if cal.resolution else hi, v, W, n, m)
        for lo, hi, v, W, n, m in ref.isotonic_blocks(keys, labels, weights)
    ]
    xs, fitted, ws = ref.isotonic_fit(keys, labels, weights)
    assert sum(b.n_cells for b in blocks) == len(xs)
    assert sum(b.n_events for b in blocks) == sum(1 for w in weights if w > 0)
    assert all(b.score_min <= b.score_max and b.n_cells >= 1 and b.n_events >= b.n_cells for b in blocks)
    assert all(a.score_max < b.score_min and a.value < b.value for a, b in zip(blocks, blocks[1:]))
    if exact:  # exact sums: the very same partition
        assert [(b.score_min, b.score_max, b.n_events, b.n_cells) for b in blocks] == [
            (o[0], o[1], o[4], o[5]) for o in oblocks
        ]
        for b, o in zip(blocks, oblocks):
            assert math.isclose(b.value, o[2], rel_tol=tol, abs_tol=tol)
            assert math.isclose(b.weight, o[3], rel_tol=tol)
        return
    # rounding may split or pool blocks whose values tie to within rounding: compare the
    # value at every distinct score, and every oracle block that is clearly separated
    starts = [b.score_min for b in blocks]
    for x, v in zip(xs, fitted):
        xv = x * scale if cal.resolution else x
        b = blocks[bisect.bisect_right(starts, xv) - 1]
        assert b.score_min <= xv <= b.score_max
        assert math.isclose(b.value, v, rel_tol=tol, abs_tol=tol), (x, b, v)
    # an oracle level set clearly apart from its neighbours is a run of calibrator blocks
    # (one, unless rounding left ties unpooled) with the same range and totals
    for j, o in enumerate(oblocks):
        lo_gap = j == 0 or o[2] - oblocks[j - 1][2] > 1e-6
        hi_gap = j == len(oblocks) - 1 or oblocks[j + 1][2] - o[2] > 1e-6
        if lo_gap and hi_gap:
            run = [b for b in blocks if o[0] <= b.score_min and b.score_max <= o[1]]
            assert run and run[0].score_min == o[0] and run[-1].score_max == o[1], (o, blocks)
            assert math.isclose(math.fsum(b.weight for b in run), o[3], rel_tol=1e-9), (o, run)
            assert sum(b.n_events for b in run) == o[4] and sum(b.n_cells for b in run) == o[5]


def check(cal, events, queries=None, exact=False, tol=1e-12):
    """Full comparison of a calibrator with the oracle after learning ``events``."""
    if cal.half_life is not None and cal.window_size is None:
        return check_half_life_no_window(cal, events)
    sample = ref.online_isotonic_sample(events, cal.window_size, cal.half_life, cal.resolution)
    fit = ref.isotonic_fit(*sample)
    assert_predictions(cal, fit, queries if queries is not None else query_points(events, cal.resolution), tol)
    assert_blocks(cal, sample, exact, tol)
    assert cal.n_events == len(events)


def check_half_life_no_window(cal, events, tol=1e-9):
    """Exponential forgetting without a window.

    The calibrator holds every event of the last 1000 half-lives and forgets older ones
    (a whole score, once its total weight is below 2**-1000 of a new event) at its
    renormalisations, every 512 half-lives: which of the old events it still holds is
    an implementation detail. So:

    - a score whose total weight is >= 2**-999 must be stored (what was forgotten
      weighed < 2**-1000 when forgotten, and has decayed since);
    - no score may be stored whose newest event is older than the forgetting horizon
      plus one renormalisation period (memory is bounded);
    - the fitted value at every score weighing >= 1e-250 equals the oracle's to 1e-9.
      Why that tolerance is safe: the two samples differ only by events of weight
      delta < n * 10 * 2**-1000 in total, and isotonic regression is the projection onto
      a convex cone, so the fitted vector moves by at most sqrt(delta) in the weighted
      norm, i.e. by at most sqrt(delta / w) ~ 1e-24 at a score of weight w >= 1e-250
      (~2**-830). The 1e-9 is for rounding.
    """
    h = cal.half_life
    n = len(events)
    keys, labels, weights = ref.online_isotonic_sample(events, None, h, cal.resolution)
    fit = ref.isotonic_fit(keys, labels, weights)
    xs, fitted, ws = fit
    stored = set(cal._store.cells()[0].tolist())
    newest_age: dict = {}
    user_weight: dict = {}
    for i, (s, _, w) in enumerate(events):
        if w > 0:
            k = s if cal.resolution is None else ref.grid_round(s, cal.resolution)
            newest_age[k] = n - 1 - i
            user_weight[k] = user_weight.get(k, 0.0) + w
    assert stored <= set(newest_age)
    for k in stored:  # forgotten at the latest one renormalisation period after the horizon
        bound = ref.FORGET_HALF_LIVES + 512 + 1 / h + 2 + math.log2(max(user_weight[k], 1e-300))
        assert newest_age[k] / h <= bound, (k, newest_age[k], user_weight[k])
    scale = 1.0 if cal.resolution is None else cal.resolution
    n_heavy = 0
    for x, v, w in zip(xs, fitted, ws):
        if w >= 2.0**-999:
            assert x in stored, (x, w)
        if w >= 1e-250:
            n_heavy += 1
            q = min(1.0, x * scale)  # a score whose key is x (keys of scores in [0, 1])
            if cal.resolution is not None:
                assert ref.grid_round(q, cal.resolution) == x
            got = cal.predict_one(q)
            assert math.isclose(got, v, rel_tol=tol, abs_tol=tol), (q, got, v)
    if xs and max(ws) > 0.5:  # the newest positive-weight event is always heavy
        assert n_heavy >= 1
    qs = query_points(events, cal.resolution)
    got = [cal.predict_one(q) for q in qs]
    assert all(math.isfinite(g) and 0.0 <= g <= 1.0 for g in got)
    srt = sorted(qs)
    vals = [cal.predict_one(q) for q in srt]
    assert all(a <= b for a, b in zip(vals, vals[1:]))  # monotone
    assert cal.predict_many(qs).tolist() == got
    assert cal.n_events == n


def learn(cals, s, y, w):
    for cal in cals:
        cal.learn_one(s, y, w)
        cal._check()


def twins(**params):
    """The step and the linear calibrator with the same other parameters."""
    return [OnlineIsotonic(interpolation=i, **params) for i in INTERPOLATIONS]


# ---------------------------------------------------------------------- cold start


@pytest.mark.parametrize(
    "params", [{}, {"window_size": 3}, {"half_life": 2.0}, {"resolution": 0.1}, {"interpolation": "linear"}]
)
def test_cold_start_and_zero_weight_events(params):
    cal = OnlineIsotonic(**params)
    qs = [0.0, 0.26, 0.5, 0.74, 1.0]
    assert [cal.predict_one(q) for q in qs] == qs  # the score itself
    assert cal.predict_many(qs).tolist() == qs
    assert cal.predict_interval_one(0.3) == (0.0, 1.0)
    assert cal.blocks == ()
    for s in (0.2, 0.9):  # zero weight: only counts as an event
        cal.learn_one(s, 1, w=0)
        cal._check()
    assert [cal.predict_one(q) for q in qs] == qs
    assert cal.blocks == () and cal.n_events == 2
    cal.learn_one(0.5, 1, w=0.5)
    cal._check()
    assert [cal.predict_one(q) for q in qs] == [1.0] * 5


# ---------------------------------------------------------------------- all events


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("weights", ["unit", "int", "float"])
@pytest.mark.parametrize("scores", ["uniform", "grid1", "grid2", "endpoints"])
def test_matches_oracle_after_every_event(scores, weights, seed):
    """Step and linear, every event, with ties, weights and all three arrival orders."""
    rng = random.Random(f"all-{scores}-{weights}-{seed}")
    order = ("random", "increasing", "decreasing")[seed]
    events = make_stream(rng, 90, scores=scores, weights=weights, order=order)
    cals = twins()
    for j, (s, y, w) in enumerate(events):
        learn(cals, s, y, w)
        for cal in cals:
            check(cal, events[: j + 1], exact=weights != "float", tol=1e-12 if weights != "float" else 1e-9)


@pytest.mark.parametrize("labels", ["all0", "all1"])
@pytest.mark.parametrize("scores", ["uniform", "endpoints"])
@pytest.mark.parametrize("order", ["random", "increasing", "decreasing"])
def test_degenerate_labels(labels, scores, order):
    rng = random.Random(f"{labels}-{scores}-{order}")
    events = make_stream(rng, 60, scores=scores, weights="int", labels=labels, order=order)
    cals = twins() + twins(window_size=7) + twins(resolution=0.1)
    for j, (s, y, w) in enumerate(events):
        learn(cals, s, y, w)
        for cal in cals:
            check(cal, events[: j + 1], exact=True)
        if any(e[2] > 0 for e in events[: j + 1]):
            for cal in cals[:2]:  # one block, constant: the fit is the label everywhere
                assert len(cal.blocks) == 1
                assert cal.predict_one(0.37) == float(labels == "all1")


def test_scores_exactly_zero_and_one():
    cal, lin = twins()
    for s, y in [(1.0, 0), (0.0, 1), (1.0, 1), (0.0, 0), (0.0, 1)]:
        learn([cal, lin], s, y, 1)
    # by hand: cells 0 -> 2/3 (3 events), 1 -> 1/2 (2 events) violate: one block 3/5
    assert cal.predict_one(0.0) == cal.predict_one(1.0) == 0.6
    assert lin.predict_one(0.5) == 0.6
    assert cal.blocks == (BlockView(0.0, 1.0, 0.6, 5.0, 5, 2),)


def test_against_scikit_learn():
    """Linear interpolation is scikit-learn's IsotonicRegression(out_of_bounds="clip",
    y_min=0, y_max=1). scikit-learn pools scores closer than ~1e-15, so scores are on
    a grid of 1/500 here."""
    for seed in range(6):
        rng = random.Random(seed)
        weights = ("unit", "int", "float")[seed % 3]
        events = make_stream(rng, 160, scores="uniform", weights=weights)
        events = [(round(s * 500) / 500, y, w) for s, y, w in events]
        cal = OnlineIsotonic(interpolation="linear")
        for j, (s, y, w) in enumerate(events):
            cal.learn_one(s, y, w)
            if j % 8 != 7:
                continue
            cal._check()
            prefix = events[: j + 1]
            ws = np.array([e[2] for e in prefix], dtype=float)
            if not (ws > 0).any():
                continue
            ir = IsotonicRegression(increasing=True, out_of_bounds="clip", y_min=0.0, y_max=1.0)
            ir.fit(np.array([e[0] for e in prefix]), np.array([float(e[1]) for e in prefix]), sample_weight=ws)
            qs = np.array(sorted(query_points(prefix)))
            np.testing.assert_allclose(cal.predict_many(qs), ir.predict(qs), rtol=0, atol=1e-9)


# ---------------------------------------------------------------------- window


@pytest.mark.parametrize("weights", ["unit", "int", "float"])
@pytest.mark.parametrize(
    "window_size, small", [(1, 48), (2, 48), (3, 48), (3, 2), (8, 48), (30, 48), (30, 2), (200, 48), (200, 2)]
)
def test_window_matches_oracle_on_the_tail(window_size, small, weights, monkeypatch):
    """After every event, the oracle on the last window_size events (zero-weight events
    take slots). small=2 runs the numpy scans of the store on short streams."""
    monkeypatch.setattr(pav, "_SMALL", small)
    for seed in range(2):
        rng = random.Random(f"win-{window_size}-{weights}-{seed}")
        scores = ("grid1", "uniform")[seed]
        order = "random" if seed == 0 else rng.choice(["increasing", "decreasing"])
        events = make_stream(rng, 110, scores=scores, weights=weights, order=order)
        cals = twins(window_size=window_size)
        for j, (s, y, w) in enumerate(events):
            learn(cals, s, y, w)
            for cal in cals:
                check(cal, events[: j + 1], exact=weights != "float", tol=1e-12 if weights != "float" else 1e-9)


def test_window_eviction_when_rounding_absorbed_a_light_event():
    """1 + 1e-17 rounds to 1: evicting the weight-1 event must not leave the cell empty
    (or divide 0 by 0). By hand, the window holds (0.5, 0, 1e-17) and (0.9, 1, 1)."""
    cal = OnlineIsotonic(window_size=2)
    for e in [(0.5, 1, 1.0), (0.5, 0, 1e-17), (0.9, 1, 1.0)]:
        cal.learn_one(*e)
        cal._check()
    assert cal.predict_one(0.5) == 0.0 and cal.predict_one(0.9) == 1.0


def test_window_eviction_keeps_the_digits_of_light_events():
    """The class Notes promise a fit equal to the batch fit "to rounding (about 1e-12)"
    with non-integer weights. Weights 1 and 1e-10 in one cell: evicting the weight-1
    event by subtraction leaves 1e-10 with only ~7 correct digits. By hand, the window
    then holds (0.5, 1, 1e-10) and (0.9, 1, 1): the fit is 1 everywhere."""
    cal = OnlineIsotonic(window_size=2)
    for e in [(0.5, 0, 1.0), (0.5, 1, 1e-10), (0.9, 1, 1.0)]:
        cal.learn_one(*e)
        cal._check()
    assert cal.predict_one(0.5) == pytest.approx(1.0, abs=1e-12)
    assert cal.blocks[0].weight == pytest.approx(1.0 + 1e-10, rel=1e-12)


def test_window_of_one_is_the_last_event():
    cal = OnlineIsotonic(window_size=1)
    for s, y in [(0.3, 1), (0.8, 0), (0.1, 1)]:
        cal.learn_one(s, y)
        cal._check()
        assert [cal.predict_one(q) for q in (0.0, 0.5, 1.0)] == [float(y)] * 3
    cal.learn_one(0.5, 0, w=0)  # a zero-weight event evicts the last positive one
    cal._check()
    assert cal.blocks == () and cal.predict_one(0.42) == 0.42


# ---------------------------------------------------------------------- half-life


@pytest.mark.parametrize("window_size", [None, 12, 200])
@pytest.mark.parametrize("half_life", [0.05, 0.3, 7.0])
def test_half_life_matches_decayed_oracle(half_life, window_size):
    """After every event, the oracle with weights w * 2**(-age/h). h=0.05 renormalises
    every ~25 events and forgets after 50; h=0.3 every ~150, forgets after 300."""
    # h=0.3 needs ~400 events to pass the horizon: there, check every 3rd event until 270
    n = 420 if half_life == 0.3 else 180
    for seed in range(2):
        rng = random.Random(f"hl-{half_life}-{window_size}-{seed}")
        scores = ("grid1", "grid2")[seed]
        events = make_stream(rng, n, scores=scores, weights=("int", "positive-float")[seed])
        cals = twins(half_life=half_life, window_size=window_size)
        for j, (s, y, w) in enumerate(events):
            learn(cals, s, y, w)
            if half_life != 0.3 or j >= 270 or j % 3 == 0:
                for cal in cals:
                    check(cal, events[: j + 1], tol=1e-9)
        assert cals[0]._t_ref > 0 or half_life == 7.0  # renormalised


@pytest.mark.parametrize("window_size", [None, 600])
def test_half_life_one_over_many_renormalisations(window_size):
    """h=1.0: renormalisation every 512 events, the horizon at 1000 events; 1300
    events with ties on a grid, checked around those points after every event."""
    rng = random.Random(f"hl1-{window_size}")
    events = make_stream(rng, 1300, scores="grid1", weights="int")
    cals = twins(half_life=1.0, window_size=window_size)
    for j, (s, y, w) in enumerate(events):
        near = any(abs(j - t) <= 6 for t in (512, 1000, 1024, 1299))
        for cal in cals:
            cal.learn_one(s, y, w)
            if j % 10 == 0 or near:
                cal._check()
        if near or j % 15 == 0:
            for cal in cals:
                check(cal, events[: j + 1], tol=1e-9)
    assert cals[0]._t_ref > 0


def test_half_life_split_when_weights_span_more_than_double_precision():
    """half_life=0.05: each event weighs 2**20 times the previous one. By hand: score
    0.5 has one event, label 1; score 0.2 has labels 1, 1, 1, 0 with weights 2**-60,
    2**-40, 2**-20 and 1 (relative to the newest), mean ~9.5e-7 < 1. So the fit is
    two blocks and the value at 0.5 is exactly 1.0."""
    cal = OnlineIsotonic(half_life=0.05)
    for s, y in [(0.5, 1), (0.2, 1), (0.2, 1), (0.2, 1), (0.2, 0)]:
        cal.learn_one(s, y)
        cal._check()
    assert cal.predict_one(0.5) == 1.0
    assert len(cal.blocks) == 2
    w = [2.0**-60, 2.0**-40, 2.0**-20]
    assert math.isclose(cal.predict_one(0.2), math.fsum(w) / (1 + math.fsum(w)), rel_tol=1e-12)


def test_check_tolerates_rounding_residue_at_any_weight_scale():
    """Window removals subtract weights: 0.1 + 0.2 - 0.1 - 0.2 leaves ~2.8e-17, not 0,
    in the label sum of a cell whose remaining event has label 0. That is rounding (the
    fit is 2.8e-17 instead of 0), at any scale of the weights: multiplying all weights
    by 2**60 (exact) must neither change the fit nor make _check() fail, as it would
    with half_life, whose stored weights reach 2**512."""
    for scale in (1.0, 2.0**60):
        cal = OnlineIsotonic(window_size=3)
        for s, y, w in [(0.5, 1, 0.1), (0.5, 1, 0.2), (0.5, 0, 1.0), (0.9, 1, 1.0), (0.9, 1, 1.0)]:
            cal.learn_one(s, y, w * scale)
        assert cal.predict_one(0.5) == pytest.approx(0.0, abs=1e-12)
        cal._check()


def test_half_life_blocks_weights_are_relative_to_the_newest_event():
    cal = OnlineIsotonic(half_life=2.0)
    cal.learn_one(0.2, 0, w=3.0)
    cal.learn_one(0.4, 1, w=1.0)
    cal.learn_one(0.6, 1, w=0)  # ages the others, weighs nothing
    # by hand: weights 3 * 2**-1 and 1 * 2**-0.5 of a new event; two blocks, 0 and 1
    b0, b1 = cal.blocks
    assert (b0.value, b1.value) == (0.0, 1.0)
    assert math.isclose(b0.weight, 3.0 * 2**-1.0) and math.isclose(b1.weight, 2**-0.5)


@pytest.mark.parametrize("half_life", [0.5, 3.0])
def test_half_life_long_run(half_life):
    """20,000 events: outputs finite in [0, 1], _check() periodically, and the fit equal
    to the oracle on the recent events.

    Scores are mostly on a grid of 41 values (each seen every ~40 events, so its weight
    never falls anywhere near 2**-1000) plus a few distinct scores (which get forgotten).
    The oracle is computed on the last 1000 half-lives only: everything older weighs
    less than 2**-1000 of the newest event, and the comparison (values at scores
    weighing >= 1e-250, tolerance 1e-9, as in ``check_half_life_no_window``) is
    insensitive to such weights: see that docstring for the bound (~1e-24).
    """
    rng = random.Random(f"long-{half_life}")
    n = 20_000
    events = []
    for _ in range(n):
        s = rng.randrange(41) / 40 if rng.random() < 0.97 else rng.random()
        events.append((s, int(rng.random() < 0.1 + 0.8 * s), rng.choice([1.0, 1.0, 2.0, 0.5])))
    cal = OnlineIsotonic(half_life=half_life)
    lin = OnlineIsotonic(half_life=half_life, interpolation="linear")
    horizon = int(ref.FORGET_HALF_LIVES * half_life) + 1
    checkpoints = set(range(999, n, 1500)) | set(range(n - 40, n))
    for j, (s, y, w) in enumerate(events):
        cal.learn_one(s, y, w)
        lin.learn_one(s, y, w)
        if j % 500 == 0:
            cal._check()
            lin._check()
            for q in (0.0, 0.3, 1.0):
                for c in (cal, lin):
                    p = c.predict_one(q)
                    assert math.isfinite(p) and 0.0 <= p <= 1.0
            p0, p1 = cal.predict_interval_one(s)
            assert math.isfinite(p0) and math.isfinite(p1)
        if j in checkpoints:
            recent = events[max(0, j + 1 - horizon) : j + 1]
            # the recent events see the same ages as in the full stream; the calibrator
            # must hold nothing much older than the horizon (checked on the recent
            # stream, whose keys are those it may still hold, up to the forgotten ones)
            check_recent(cal, recent, events[: j + 1])
            check_recent(lin, recent, events[: j + 1])
    assert cal._t_ref > 0  # renormalised many times
    assert cal._store.n_cells <= 41 + (ref.FORGET_HALF_LIVES + 520 + 1 / half_life) * half_life * 0.1


def check_recent(cal, recent, full):
    """``check_half_life_no_window`` with the oracle fitted on ``recent`` (the tail of
    ``full`` within the forgetting horizon) instead of the whole stream."""
    h = cal.half_life
    keys, labels, weights = ref.online_isotonic_sample(recent, None, h, None)
    xs, fitted, ws = ref.isotonic_fit(keys, labels, weights)
    stored = set(cal._store.cells()[0].tolist())
    for x, v, w in zip(xs, fitted, ws):
        if w >= 2.0**-999:
            assert x in stored
        if w >= 1e-250:
            assert math.isclose(cal.predict_one(x), v, rel_tol=1e-9, abs_tol=1e-9), (x, v)
    # nothing stored beyond the horizon plus one renormalisation period (+ margin)
    n = len(full)
    last_seen = {}
    for i, (s, _, w) in enumerate(full):
        if w > 0:
            last_seen[s] = i
    for x in stored:
        assert (n - 1 - last_seen[x]) / h <= ref.FORGET_HALF_LIVES + 512 + 1 / h + 4, x


@pytest.mark.parametrize("window_size", [None, 50])
@pytest.mark.parametrize("half_life", [0.01, 0.0015, 0.0009])
def test_tiny_half_life(half_life, window_size):
    """Any finite half_life >= 1e-18 is accepted. Below 1/1000 of an event the weights of a
    new and the previous event are more than 2**1000 apart: nothing may overflow,
    underflow into a stored zero weight or divide by zero, and the fit is that of the
    newest events (equal to the oracle, in the sense of ``check``)."""
    rng = random.Random(f"tiny-{half_life}-{window_size}")
    events = make_stream(rng, 200, scores="grid1", weights="int")
    cals = twins(half_life=half_life, window_size=window_size)
    for j, (s, y, w) in enumerate(events):
        learn(cals, s, y, w)
        for cal in cals:
            check(cal, events[: j + 1], tol=1e-9)
            p0, p1 = cal.predict_interval_one(s)
            assert 0.0 <= p0 <= p1 <= 1.0


# ---------------------------------------------------------------------- resolution


@pytest.mark.parametrize("window_size", [None, 25])
@pytest.mark.parametrize("resolution", [1.0, 0.4, 0.1, 0.05, 0.013, 0.001])
def test_resolution_matches_oracle_on_rounded_keys(resolution, window_size):
    for seed in range(2):
        rng = random.Random(f"res-{resolution}-{window_size}-{seed}")
        events = make_stream(rng, 110, scores=("uniform", "endpoints")[seed], weights=("int", "float")[seed])
        cals = twins(resolution=resolution, window_size=window_size)
        for j, (s, y, w) in enumerate(events):
            learn(cals, s, y, w)
            for cal in cals:
                check(cal, events[: j + 1], exact=seed == 0, tol=1e-12 if seed == 0 else 1e-9)


@pytest.mark.parametrize("half_life", [0.05, 2.0])
def test_resolution_with_half_life_and_window(half_life):
    rng = random.Random(f"res-hl-{half_life}")
    events = make_stream(rng, 300, scores="uniform", weights="int")
    cals = twins(resolution=0.05, half_life=half_life, window_size=40) + twins(resolution=0.05, half_life=half_life)
    for j, (s, y, w) in enumerate(events):
        learn(cals, s, y, w)
        for cal in cals:
            check(cal, events[: j + 1], tol=1e-9)


@pytest.mark.parametrize("resolution", [0.1, 0.07, 0.3, 0.013, 1.0])
def test_resolution_memory_is_bounded(resolution):
    """A long stream of distinct scores: at most floor(1/r + 1/2) + 1 cells (the keys
    of scores in [0, 1]), whatever the stream length."""
    rng = random.Random(f"mem-{resolution}")
    cal = OnlineIsotonic(resolution=resolution)
    n_keys = math.floor(1 / resolution + 0.5) + 1
    for j in range(6000):
        cal.learn_one(rng.random() if j % 50 else float(j % 100 == 0), int(rng.random() < 0.5))
    cal._check()
    cells = sum(b.n_cells for b in cal.blocks)
    assert len(cal.blocks) <= cells <= n_keys
    assert all(-1e-12 <= b.score_min and b.score_max <= 1 + resolution / 2 + 1e-12 for b in cal.blocks)


@pytest.mark.parametrize("resolution", [0.1, 0.4, 0.15, 0.3])
def test_resolution_memory_bound_as_documented(resolution):
    """The class Notes promise ``m <= floor(1/r + 1/2) + 1`` distinct scores with
    resolution=r (an earlier ``1/r + 1`` was false: for r = 0.4 the keys of [0, 1] are
    floor(s / 0.4 + 1/2) in {0, 1, 2, 3}, four cells, more than 3.5)."""
    assert "floor(1/r + 1/2) + 1" in OnlineIsotonic.__doc__
    cal = OnlineIsotonic(resolution=resolution)
    for j in range(1001):
        cal.learn_one(j / 1000, j % 2)
    assert sum(b.n_cells for b in cal.blocks) <= math.floor(1 / resolution + 0.5) + 1


# ---------------------------------------------------------------------- Venn-ABERS


def venn_abers_oracle(cal, events, s):
    keys, labels, weights = ref.online_isotonic_sample(
        events, cal.window_size, cal.half_life, cal.resolution, next_event=True
    )
    k = s if cal.resolution is None else ref.grid_round(s, cal.resolution)
    return ref.venn_abers(keys, labels, weights, k)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"window_size": 9},
        {"window_size": 1},
        {"resolution": 0.05},
        {"half_life": 4.0},
        {"half_life": 0.05},
        {"half_life": 0.5, "window_size": 30, "resolution": 0.1},
    ],
    ids=repr,
)
@pytest.mark.parametrize("weights", ["unit", "int", "float"])
def test_predict_interval_matches_venn_abers_oracle(params, weights):
    """(p0, p1) against refitting with the test event labelled 0 and 1, at seen and
    unseen scores, 0 and 1, after every few events; the state is left unchanged."""
    rng = random.Random(f"va-{params}-{weights}")
    events = make_stream(rng, 140, scores=rng.choice(["uniform", "grid1", "endpoints"]), weights=weights)
    cal = OnlineIsotonic(**params)
    for j, (s, y, w) in enumerate(events):
        cal.learn_one(s, y, w)
        if j % 3 and j < 100:
            continue
        cal._check()
        prefix = events[: j + 1]
        seen = sorted({e[0] for e in prefix})
        qs = [0.0, 1.0, 0.5, rng.random(), rng.random()] + seen[:: max(1, len(seen) // 6)]
        before = json.dumps(cal.to_dict())
        for q in qs:
            p0, p1 = cal.predict_interval_one(q)
            w0, w1 = venn_abers_oracle(cal, prefix, q)
            assert 0.0 <= p0 <= p1 <= 1.0
            assert math.isclose(p0, w0, rel_tol=1e-9, abs_tol=1e-9), (q, p0, w0)
            assert math.isclose(p1, w1, rel_tol=1e-9, abs_tol=1e-9), (q, p1, w1)
        assert json.dumps(cal.to_dict()) == before  # nothing changed


def test_predict_interval_by_hand():
    cal = OnlineIsotonic()
    cal.learn_many([0.2, 0.4, 0.6, 0.8], [0, 1, 0, 1])
    # at 0.5 with label 0: cells .2:0 .4:1 .5:0 .6:0 .8:1 -> {.2}=0, {.4,.5,.6}=1/3, {.8}=1
    # with label 1: {.2}=0, {.4}=1, {.5,.6}=1/2 violates -> {.4,.5,.6}=2/3, {.8}=1
    assert cal.predict_interval_one(0.5) == (1 / 3, 2 / 3)
    # below everything with label 1: {0.0, .2} pooled = 1/2 ; with label 0: 0
    assert cal.predict_interval_one(0.0) == (0.0, 0.5)


# ---------------------------------------------------------------------- learn_many


LEARN_MANY_PARAMS = [
    {},
    {"interpolation": "linear"},
    {"window_size": 1},
    {"window_size": 7},
    {"window_size": 64},
    {"window_size": 150},
    {"window_size": 2500},
    {"resolution": 0.01},
    {"resolution": 0.2, "window_size": 40},
    {"half_life": 30.0},
    {"half_life": 0.2, "window_size": 50},
    {"window_size": 40, "half_life": 15.0, "resolution": 0.05, "interpolation": "linear"},
]


def grouped_blocks(blocks, tol):
    """Pool adjacent blocks whose values differ by less than ``tol`` (ties that
    rounding may or may not pool): ``(score_min, score_max, value, weight, n_events,
    n_cells)`` per group."""
    groups = []
    for b in blocks:
        if groups and b.value - groups[-1][-1] < tol:
            g = groups[-1]
            groups[-1] = [g[0], b.score_max, g[2], g[3] + b.weight, g[4] + b.n_events, g[5] + b.n_cells, b.value]
        else:
            groups.append([b.score_min, b.score_max, b.value, b.weight, b.n_events, b.n_cells, b.value])
    return [tuple(g[:6]) for g in groups]


def assert_same_state(a, b, queries, tol=1e-12):
    assert a.n_events == b.n_events
    pa, pb = a.predict_many(queries), b.predict_many(queries)
    np.testing.assert_allclose(pa, pb, rtol=tol, atol=tol)
    ga, gb = grouped_blocks(a.blocks, tol), grouped_blocks(b.blocks, tol)
    assert [g[:2] + g[4:] for g in ga] == [g[:2] + g[4:] for g in gb]
    for x, y in zip(ga, gb):
        assert math.isclose(x[2], y[2], rel_tol=tol, abs_tol=tol)
        assert math.isclose(x[3], y[3], rel_tol=1e-9)


@pytest.mark.parametrize("params", LEARN_MANY_PARAMS, ids=repr)
@pytest.mark.parametrize("batch", [5, 30, 3000])  # the loop, and the refit with and without old events
@pytest.mark.parametrize("pretrained", [0, 40, 700])
def test_learn_many_equals_learn_one_loop(params, batch, pretrained):
    rng = random.Random(f"many-{params}-{batch}-{pretrained}")
    weights = rng.choice(["unit", "int", "positive-float", "float"])
    pre = make_stream(rng, pretrained, scores="uniform", weights=weights)
    events = make_stream(rng, batch, scores=rng.choice(["uniform", "grid2"]), weights=weights)
    after = make_stream(rng, 12, scores="uniform", weights=weights)
    a, b = OnlineIsotonic(**params), OnlineIsotonic(**params)
    for s, y, w in pre:
        a.learn_one(s, y, w)
        b.learn_one(s, y, w)
    for s, y, w in events:
        a.learn_one(s, y, w)
    use_w = weights != "unit" or rng.random() < 0.5
    b.learn_many(
        np.array([e[0] for e in events]),
        [int(e[1]) for e in events],
        [e[2] for e in events] if use_w else None,
    )
    b._check()
    queries = np.array(sorted(query_points(pre + events, a.resolution)))
    assert_same_state(a, b, queries)
    for s, y, w in after:  # and they go on alike (same window, same decay)
        a.learn_one(s, y, w)
        b.learn_one(s, y, w)
        assert_same_state(a, b, queries)
    b._check()
    # the batch path agrees with the oracle too
    check(b, pre + events + after, tol=1e-9)


def test_learn_many_empty_batch_changes_nothing():
    cal = OnlineIsotonic(window_size=5)
    cal.learn_many([0.1, 0.9], [0, 1])
    before = cal.to_dict()
    cal.learn_many([], [])
    assert cal.to_dict() == before


# ---------------------------------------------------------------------- blocks view


def test_blocks_is_an_immutable_tuple():
    cal = OnlineIsotonic()
    for s, y in [(0.1, 0), (0.3, 1), (0.5, 0), (0.7, 1), (0.9, 1)]:
        cal.learn_one(s, y)
    blocks = cal.blocks
    assert isinstance(blocks, tuple)
    with pytest.raises(TypeError):
        blocks[0] = blocks[1]
    with pytest.raises(AttributeError):
        blocks[0].value = 0.9
    with pytest.raises(AttributeError):
        cal.blocks = ()
    # by hand: {0.1}=0, {0.3, 0.5}=1/2, {0.7, 0.9}=1
    assert blocks == (
        BlockView(0.1, 0.1, 0.0, 1.0, 1, 1),
        BlockView(0.3, 0.5, 0.5, 2.0, 2, 2),
        BlockView(0.7, 0.9, 1.0, 2.0, 2, 2),
    )
    assert cal.blocks == blocks and cal.blocks is not blocks  # a fresh tuple


# ---------------------------------------------------------------------- state


@pytest.mark.parametrize("params", LEARN_MANY_PARAMS, ids=repr)
def test_snapshots_continue_identically(params):
    rng = random.Random(f"snap-{params}")
    events = make_stream(rng, 400, scores="grid2", weights="float")
    more = make_stream(rng, 50, scores="uniform", weights="float")
    cal = OnlineIsotonic(**params)
    for s, y, w in events:
        cal.learn_one(s, y, w)
    copies = [
        OnlineIsotonic.from_dict(json.loads(json.dumps(cal.to_dict()))),
        pickle.loads(pickle.dumps(cal)),
    ]
    fresh = cal.clone()
    assert fresh.n_events == 0 and fresh.blocks == ()
    qs = query_points(events + more, cal.resolution)
    for s, y, w in more:
        cal.learn_one(s, y, w)
        for c in copies:
            c.learn_one(s, y, w)
            c._check()
            assert [c.predict_one(q) for q in qs] == [cal.predict_one(q) for q in qs]
            assert c.to_dict() == cal.to_dict()


# ---------------------------------------------------------------------- hypothesis

events_strategy = st.lists(
    st.tuples(
        st.one_of(
            st.sampled_from([0.0, 1.0]),
            st.floats(0.0, 1.0),
            st.sampled_from([0.1, 0.2, 0.25, 0.5, 0.7, 0.75]),
        ),
        st.sampled_from([0, 1]),
        st.one_of(
            st.just(0.0),
            st.integers(0, 5),
            st.floats(0.01, 100.0),
        ),
    ),
    max_size=60,
)


def _run_hypothesis(params, events):
    cals = twins(**params)
    for j, (s, y, w) in enumerate(events):
        learn(cals, s, y, w)
        for cal in cals:
            check(cal, events[: j + 1], tol=1e-9)


_hyp_settings = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@given(events_strategy)
@_hyp_settings
def test_hypothesis_default(events):
    _run_hypothesis({}, events)


@given(events_strategy, st.integers(1, 12))
@_hyp_settings
def test_hypothesis_window(events, window_size):
    _run_hypothesis({"window_size": window_size}, events)


@given(events_strategy, st.sampled_from([1.0, 0.5, 0.3, 0.1, 0.05, 0.01]))
@_hyp_settings
def test_hypothesis_resolution(events, resolution):
    _run_hypothesis({"resolution": resolution}, events)


@given(events_strategy, st.integers(1, 12), st.sampled_from([0.05, 0.5, 3.0]))
@_hyp_settings
def test_hypothesis_half_life_window(events, window_size, half_life):
    _run_hypothesis({"window_size": window_size, "half_life": half_life}, events)


@pytest.mark.parametrize("cls", [OnlineIsotonic, VennAbers])
@pytest.mark.parametrize("window_size", [None, 10])
def test_half_life_below_the_clock_step_is_refused(cls, window_size):
    """half_life=1e-310 was accepted, then the clock's phase was inf after two events
    (a snapshot that is not JSON, predictions that ignored every event), and below about
    1e-19 the phase grew by 1 / half_life per event; 1e-18 is the smallest accepted, and
    there the newest event alone is fitted, the snapshot JSON-safe."""
    for bad in (5e-324, 1e-310, 1e-300, 1e-19):
        with pytest.raises(ValueError, match=r"'half_life' parameter .* >= 1e-18 or None. Got"):
            cls(half_life=bad, window_size=window_size)
    cal = cls(half_life=1e-18, window_size=window_size)
    for s, y in [(0.2, 0), (0.5, 1), (0.7, 1), (0.2, 1)] * 3:
        cal.learn_one(s, y)
    text = json.dumps(cal.to_dict(), allow_nan=False)
    assert abs(cal.to_dict()["state"]["phase"]) < 1.0
    restored = cls.from_dict(json.loads(text))
    assert restored.predict_one(0.9) == cal.predict_one(0.9)
    if cls is OnlineIsotonic:
        assert [cal.predict_one(q) for q in (0.1, 0.5, 0.9)] == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("cls", [OnlineIsotonic, VennAbers])
def test_subnormal_resolution_is_refused(cls):
    """resolution=1e-310 was accepted, then s / resolution overflowed: no block was
    kept (every event lost, a constant prediction, a failing _check) or the snapshot
    held inf; the smallest normal float is now the smallest resolution, and fits as
    the exact calibrator does."""
    for bad in (5e-324, 1e-310, 5e-309):
        with pytest.raises(ValueError, match=r"'resolution' parameter .* Got"):
            cls(resolution=bad)
    events = [(0.2, 0), (0.5, 1), (0.7, 1), (0.2, 1), (0.0, 0), (1.0, 1)]
    cal, exact = cls(resolution=sys.float_info.min), cls()
    for s, y in events:
        cal.learn_one(s, y)
        exact.learn_one(s, y)
    cal._check()
    json.dumps(cal.to_dict(), allow_nan=False)
    queries = (0.0, 0.1, 0.2, 0.5, 0.7, 1.0)
    assert [cal.predict_one(q) for q in queries] == [exact.predict_one(q) for q in queries]
