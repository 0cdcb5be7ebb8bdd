"""Windows that remove events by subtraction stay exact under weights that do not add
exactly (``streamcal/core/_pav_residue.pxd``).

A cell's sums are kept by adding each event and subtracting it when it leaves the
window; the subtraction does not undo the rounding of the addition. The store keeps a
bound on each cell's accumulated rounding residue and, when a removal would leave more
than ``2**-44`` of what is left, deletes the cell and the window puts back the
compensated sums of its events. Before, a chain of removals (each leaving more than
``2**-20`` of the event removed) kept the residue of the heaviest: a cell weighing
1279.8 for events of 3333.67, and a fit of 0.0 for 1e-4 (below), or 1.0 for 0.07 on a
random stream of log-normal weights. Each case is compared with an exact oracle
(textbook PAV on ``Fraction`` sums).
"""

import json
import math
import pickle
import random
from fractions import Fraction

import numpy as np
import pytest

from streamcal import OnlineIsotonic, VennAbers
from streamcal.core.pav import IsotonicBlockStore, check_residues, residue_entry
from streamcal._snapshot import StateChecks
from tests import references as ref


def _exact_fit(events):
    """Per key, the exact PAV value of ``events`` ``(key, label, weight)`` (Fractions)."""
    cells: dict = {}
    for x, y, w in events:
        if w > 0:
            W, S = cells.get(x, (Fraction(0), Fraction(0)))
            cells[x] = (W + Fraction(w), S + Fraction(w) * Fraction(y))
    blocks: list = []
    for x in sorted(cells):
        W, S = cells[x]
        block = [W, S, [x]]
        while blocks and blocks[-1][1] / blocks[-1][0] >= block[1] / block[0]:
            W0, S0, xs0 = blocks.pop()
            block = [W0 + block[0], S0 + block[1], xs0 + block[2]]
        blocks.append(block)
    return {x: float(S / W) for W, S, xs in blocks for x in xs}


def _log_normal_stream(seed, n, keys=(0.15, 0.35, 0.55, 0.75, 0.95), sigma=30.0):
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        x = rng.choice(keys)
        w = math.exp(rng.gauss(0.0, sigma))
        if 1e-300 < w < 1e300:
            out.append((x, float(rng.random() < x), w))
    return out


def test_a_chain_of_removals_keeps_no_residue():
    """Each removal leaves 1e-4 of what the cell held (more than 2**-20), and the
    residue of the first, heaviest event stayed: the cell weighed 1279.8 for events of
    3333.67, its label sum 0 for 1/3, and the fit at 0.5 was 0.0 instead of 1/10001."""
    cal = OnlineIsotonic(window_size=6)
    chain = [(1e20 / 3, 1), (1e16 / 3, 1), (1e12 / 3, 1), (1e8 / 3, 1), (1e4 / 3, 0), (1 / 3, 1)]
    for w, y in chain:
        cal.learn_one(0.5, y, w)
        cal._check()
    for _ in range(4):  # the four heaviest leave the window
        cal.learn_one(0.9, 1, 1.0)
        cal._check()
    expected = _exact_fit([(0.5, y, w) for w, y in chain[4:]] + [(0.9, 1, 1.0)] * 4)
    assert cal.predict_one(0.5) == pytest.approx(expected[0.5], rel=2**-44)
    xs, ws, ss, ns = cal._store.cells()
    assert ws[0] == pytest.approx(1e4 / 3 + 1 / 3, rel=2**-50)
    assert ss[0] == pytest.approx(1 / 3, rel=2**-50)
    assert ns.tolist() == [2, 4]


@pytest.mark.parametrize("seed", range(40))
def test_log_normal_weights_in_a_window_match_the_exact_fit(seed):
    """Weights exp(N(0, 30)) (spanning about 2**130 either way) at five tied scores;
    after every event the fit of the window matches the exact one to 2**-42 (the bound is
    relative to a cell's weight, so absolute on a probability), and every
    cell is within its residue bound of the window's sums (``_check``)."""
    rng = random.Random(1000 + seed)
    n = rng.choice([3, 5, 10, 30])
    cal = OnlineIsotonic(window_size=n)
    events = _log_normal_stream(seed, 250)
    for t, (x, y, w) in enumerate(events):
        cal.learn_one(x, y, w)
        cal._check()
        expected = _exact_fit(events[max(0, t + 1 - n): t + 1])
        for key, value in expected.items():
            assert cal.predict_one(key) == pytest.approx(value, abs=2**-42), (t, key)


@pytest.mark.parametrize("seed", range(8))
def test_venn_abers_window_with_log_normal_weights_matches_the_batch_pair(seed):
    """The Venn-ABERS pair reads the same cells: within 2**-42 of the exact pair."""
    rng = random.Random(seed)
    n = rng.choice([4, 12])
    cal = VennAbers(window_size=n)
    events = _log_normal_stream(50 + seed, 120)
    for t, (x, y, w) in enumerate(events):
        cal.learn_one(x, y, w)
        cal._check()
    window = events[-n:]
    for key in (0.15, 0.55, 0.95):
        p0 = _exact_fit(window + [(key, 0.0, 1.0)])[key]
        p1 = _exact_fit(window + [(key, 1.0, 1.0)])[key]
        got0, got1 = cal.predict_interval_one(key)
        assert got0 == pytest.approx(p0, abs=2**-42)
        assert got1 == pytest.approx(p1, abs=2**-42)


@pytest.mark.parametrize("half_life", [3.0, 40.0])
def test_half_life_window_with_log_normal_weights_matches_the_oracle(half_life):
    """With forgetting the window's stored weights are rescaled by powers of two; the
    cells stay within their bounds (``_check``) and the fit matches the batch oracle."""
    cal = OnlineIsotonic(window_size=12, half_life=half_life)
    events = _log_normal_stream(7, 200, sigma=10.0)
    for t, e in enumerate(events):
        cal.learn_one(*e)
        cal._check()
    keys, labels, weights = ref.online_isotonic_sample(events, window_size=12, half_life=half_life)
    top = max(weights)
    fit = ref.isotonic_fit(keys, labels, [w / top for w in weights])
    for key in sorted(set(keys)):
        assert cal.predict_one(key) == pytest.approx(ref.predict_step(fit, key), abs=1e-12)


def test_exact_weights_never_hold_a_residue():
    """Integer and dyadic weights add and subtract exactly: every bound stays 0 and no
    cell is ever put back."""
    rng = random.Random(3)
    cal = OnlineIsotonic(window_size=20)
    for _ in range(2000):
        w = rng.choice([1.0, 2.0, 0.5, 2.0**-10, 2.0**10, 3.0])  # sums within 53 bits
        cal.learn_one(rng.choice([0.1, 0.5, 0.9]), rng.random() < 0.5, w)
    assert not cal._store.residue_bounds().any()
    assert cal.to_dict()["state"]["residues"] == []


def _fed(seed, n_events=120, window_size=7):
    cal = OnlineIsotonic(window_size=window_size)
    for e in _log_normal_stream(seed, n_events):
        cal.learn_one(*e)
    return cal


@pytest.mark.parametrize("seed", range(6))
def test_snapshots_keep_the_bounds_and_restored_copies_decide_the_same(seed):
    """to_dict / from_dict, pickle and clone keep every bound, so a restored copy puts
    back the same cells as the original: the same floats after more events."""
    cal = _fed(seed)
    if not cal._store.residue_bounds().any():
        pytest.skip("no residue in this stream")
    copies = [OnlineIsotonic.from_dict(cal.to_dict()), pickle.loads(pickle.dumps(cal))]
    bounds = cal._store.residue_bounds().tolist()
    for c in copies:
        assert c._store.residue_bounds().tolist() == bounds
    more = _log_normal_stream(seed + 100, 80)
    for e in more:
        for c in [cal, *copies]:
            c.learn_one(*e)
        values = [c.predict_one(e[0]) for c in [cal, *copies]]
        assert values[1:] == values[:1] * 2
    for c in copies:
        assert c.to_dict() == cal.to_dict()


def test_store_remove_then_add_cell_puts_back_the_sums():
    """The store's own protocol: remove() says how many other events went with the
    cell; add_cell() puts back their sums with the bound of their rounding."""
    store = IsotonicBlockStore()
    store.add(0.5, 1e20 / 3, 0.0)
    store.add(0.5, 1 / 3, 1.0)
    store.add(0.7, 1.0, 1.0)
    assert store.residue_bounds()[0] > 0.0
    assert store.remove(0.5, 1e20 / 3, 0.0) == 1  # the residue would dwarf 1/3
    assert store.cells()[0].tolist() == [0.7]
    store.add_cell(0.5, 1 / 3, 1 / 3, 1, 2.0**-52)
    store._check()
    assert store.cells()[1].tolist() == [1 / 3, 1.0]
    assert store.residue_bounds().tolist() == [pytest.approx(2.0**-52, rel=1e-6), 0.0]
    before = store.cells()
    for bad in [(0.5, -1.0, 0.0, 1), (0.5, 1.0, 2.0, 1), (0.5, 1.0, 0.5, 0), (0.5, math.nan, 0.0, 1)]:
        with pytest.raises(ValueError, match="add_cell"):
            store.add_cell(*bad)
    with pytest.raises(ValueError, match="add_cell"):
        store.add_cell(0.5, 1.0, 0.5, 1, -1.0)
    assert all((a == b).all() for a, b in zip(store.cells(), before))


def test_rebuild_and_from_lists_check_the_bounds_before_changing_anything():
    store = IsotonicBlockStore()
    store.add(0.5, 1.0, 1.0)
    with pytest.raises(ValueError, match="'residues' argument"):
        store.rebuild(np.array([0.2]), np.array([1.0]), np.array([0.0]), np.array([1]), None,
                      np.array([-1.0]))
    assert store.cells()[0].tolist() == [0.5]
    with pytest.raises(ValueError, match="'residues' argument"):
        IsotonicBlockStore.from_lists(store.to_lists(), None, [[0.25, 1e-15]])
    restored = IsotonicBlockStore.from_lists(store.to_lists(), None, [[0.5, 1e-15]])
    assert restored.residue_bounds().tolist() == [pytest.approx(1e-15, rel=1e-7)]


@pytest.mark.parametrize("entry, message", [
    ([[0.3, 1e-15]], "the key of a stored cell"),
    ([[0.15, -1e-15]], r"\[0, 1.26765e\+30\]"),
    ([[0.15, 2.0**101]], r"\[0, 1.26765e\+30\]"),
    ([[0.15, 0.0]], r"a bound in \(0, 2\*\*100\]"),
    ([[0.15, 1e-15], [0.15, 1e-15]], "above the key before it"),
    ([[0.15]], "a list of 2"),
    ("no", "a list"),
])
def test_a_corrupted_residues_entry_is_refused(entry, message):
    cal = _fed(0)
    snap = cal.to_dict()
    snap["state"]["residues"] = entry
    with pytest.raises(ValueError, match=r"state\['residues'\]") as info:
        OnlineIsotonic.from_dict(snap)
    assert info.match(message)


def test_residue_entry_and_check_residues_agree():
    cal = _fed(2)
    state = cal.to_dict()["state"]
    assert state["residues"] == residue_entry(cal._store)
    check_residues(state, StateChecks("OnlineIsotonic"))


def test_corp_revert_after_a_heavy_event_round_trips():
    """CORP does not hold its events: a revert that would leave too large a residue
    puts back what is left as one cell whose bound is unknown (the largest), which
    snapshots keep like any other."""
    from streamcal.metrics import CORP
    from streamcal.core.pav import RESIDUE_UNKNOWN

    m = CORP()
    for y, p, w in [(0, 0.5, 1e20 / 3), (1, 0.5, 1 / 3), (1, 0.5, 1e-3 / 3), (1, 0.9, 1.0)]:
        m.update(y, p, w)
    m.revert(0, 0.5, 1e20 / 3)
    store = m._store
    store._check()
    assert store.cells()[3].tolist() == [2, 1]  # the cell put back holds both events
    assert store.residue_bounds()[0] == RESIDUE_UNKNOWN
    again = CORP.from_dict(json.loads(json.dumps(m.to_dict())))
    assert again.to_dict() == m.to_dict()
    assert pickle.loads(pickle.dumps(m)).to_dict() == m.to_dict()


def test_a_tiny_bound_is_rounded_up_not_lost():
    """A bound below the smallest float rounded to 0 (round to nearest), and exact
    removals then shrank the cell without it growing: a store holding events of sums
    W = 2, S = 1 at 0.5 predicted 1.0. Bounds now round up."""
    from tests.event_streams import remove_event

    store = IsotonicBlockStore()
    store.add(0.9, 1.0, 1.0)
    live = []

    def add(w, y):
        store.add(0.5, w, y)
        live.append((0.5, w, y))

    def remove(w):
        i = next(i for i, e in enumerate(live) if e[1] == w)
        remove_event(store, live, i)
        store._check()

    add(2.0**200, 0.0)
    add(1.0, 1.0)
    add(2.0**148, 0.0)
    remove(2.0**200)
    add(2.0**96, 0.0)
    remove(2.0**148)
    add(2.0**44, 0.0)
    remove(2.0**96)
    add(1.0, 0.0)
    remove(2.0**44)
    assert store.predict_step(0.5) == 0.5
    assert store.cells()[1].tolist() == [2.0, 1.0]


def test_learn_many_with_a_window_after_fractional_weights_equals_the_loop():
    """The bulk path sums the window afresh: only right when the loop's subtractions
    are exact, which needs the weights held before the batch to be integers too."""
    head = [(0.9, 1, 1.0)] * 15 + [(0.5, 0, 0.1)]
    batch = [(0.5, t % 2, 1.0 + t % 3) for t in range(16)]
    loop, bulk = OnlineIsotonic(window_size=16), OnlineIsotonic(window_size=16)
    for c in (loop, bulk):
        for e in head:
            c.learn_one(*e)
    for e in batch:
        loop.learn_one(*e)
    s, y, w = (np.array(c) for c in zip(*batch))
    bulk.learn_many(s, y, w)
    assert bulk.to_dict() == loop.to_dict()


def test_from_lists_names_a_key_an_empty_store_does_not_hold():
    with pytest.raises(ValueError, match="'residues' argument"):
        IsotonicBlockStore.from_lists([], None, [[0.5, 1e-15]])


@pytest.mark.parametrize("cls", [OnlineIsotonic, VennAbers])
def test_a_snapshot_from_before_the_bounds_restores_with_the_residue_it_shows(cls):
    """A windowed snapshot written before the bounds were kept may hold residues of
    the events that left (here: a cell off the window's sums by 2**-40). It restores
    with each bound what its cell is off, so the cell is summed again at its next
    removal: after the window has turned over, the fit is the fresh one's."""
    cal = cls(window_size=6)
    events = _log_normal_stream(11, 40, sigma=2.0)
    for e in events:
        cal.learn_one(*e)
    snap = json.loads(json.dumps(cal.to_dict()))
    del snap["state"]["residues"]
    block = snap["state"]["blocks"][0]
    block[1][0] *= 1.0 + 2.0**-40  # a residue an older version could have left
    block[4] = math.fsum(block[1])
    restored = cls.from_dict(snap)
    restored._check()
    bounds = dict((x, r) for x, r in restored.to_dict()["state"]["residues"])
    assert 2.0**-41 <= bounds[block[0][0]] <= 2.0**-39
    fresh = cls(window_size=6)
    for e in _log_normal_stream(12, 6, sigma=2.0):
        restored.learn_one(*e)
        fresh.learn_one(*e)
        restored._check()
    for q in (0.15, 0.35, 0.55, 0.75, 0.95):
        assert restored.predict_one(q) == pytest.approx(fresh.predict_one(q), abs=2**-42)


def _pure_cells_stream(seed, n):
    """Events at seven tied scores whose cells are often all label 0 or all label 1
    (labels drawn with probability 0.02 at the low scores, 0.98 at the high ones),
    weights that do not add exactly (0.1, 0.2, 0.3, 0.7, uniform)."""
    rng = random.Random(seed)
    keys = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
    out = []
    for _ in range(n):
        x = rng.choice(keys)
        p = 0.02 if x < 0.35 else (0.98 if x > 0.45 else 0.5)
        w = rng.choice([0.1, 0.2, 0.3, 0.7, rng.random() + 1e-3])
        out.append((x, float(rng.random() < p), w))
    return out


def test_a_cell_left_with_label_0_events_only_holds_a_label_sum_of_exactly_0():
    """Two label-1 events of 0.1 and 0.2 leave a cell by subtraction: 0.1 + 0.2 - 0.1 -
    0.2 is 5.6e-17, not 0. The exact fit pools that cell of mean 0 with its neighbour
    of mean 0; a residue left them two level sets, and the prior's read-out at 0.3 then
    saw one cell where the batch fit has two (0.3333 against 0.2). The mirror case,
    label-0 events leaving a cell of label-1 events, must hold a label sum equal to the
    weight."""
    for pure, other in ((0.0, 1.0), (1.0, 0.0)):
        events = [(0.5, other, 0.1), (0.5, other, 0.2), (0.5, pure, 0.3)]
        events += [(0.3, 0.0, 1.0), (0.7, 1.0, 1.0)]
        cal = OnlineIsotonic(window_size=3, prior_strength=1.0)
        for e in events:
            cal.learn_one(*e)
            cal._check()
        xs, ws, ss, _ = cal._stream.store.cells()
        j = list(xs).index(0.5)
        assert ss[j] == pure * ws[j]
        sample = ref.online_isotonic_sample(events, window_size=3)
        assert [b[:2] + b[4:] for b in cal.blocks] == [
            b[:2] + b[4:] for b in ref.isotonic_blocks(*sample)]
        for s in (0.3, 0.4, 0.5, 0.6, 0.7):
            assert cal.predict_one(s) == pytest.approx(
                ref.isotonic_with_prior(*sample, s, 1.0), abs=1e-12), (pure, s)


@pytest.mark.parametrize("half_life", [None, 6.0])
@pytest.mark.parametrize("seed", range(16))
def test_pure_cells_stay_exact_in_a_window_and_the_prior_matches_the_oracle(seed, half_life):
    """After every event of a window over cells that turn pure and mixed again: every
    cell whose events in the window all have label 0 (1) holds a label sum of exactly 0
    (its weight), the level sets are the batch fit's, and the prior's read-outs, step
    and linear, match the oracle's (a residue there moved them by up to 0.05). With
    forgetting the weights never add exactly, even unit ones."""
    rng = random.Random(seed)
    n = rng.choice([3, 5, 8, 20])
    interpolation = rng.choice(["step", "linear"])
    cal = OnlineIsotonic(window_size=n, half_life=half_life, interpolation=interpolation,
                         prior_strength=2.5)
    events = _pure_cells_stream(seed, 80)
    for t, (x, y, w) in enumerate(events):
        cal.learn_one(x, y, w)
        cal._check()
        window = events[max(0, t + 1 - n): t + 1]
        labels = {}
        for key, label, _ in window:
            labels.setdefault(key, set()).add(label)
        xs, ws, ss, _ = cal._stream.store.cells()
        for key, wk, sk in zip(xs, ws, ss):
            if labels[key] == {0.0}:
                assert sk == 0.0, (t, key)
            elif labels[key] == {1.0}:
                assert sk == wk, (t, key)
        sample = ref.online_isotonic_sample(events[: t + 1], window_size=n, half_life=half_life)
        assert [b[:2] + b[4:] for b in cal.blocks] == [
            b[:2] + b[4:] for b in ref.isotonic_blocks(*sample)], t
        sample = ref.online_isotonic_sample(events[: t + 1], window_size=n, half_life=half_life,
                                            next_event=True)
        for s in (0.1, 0.25, 0.3, 0.45, 0.5, 0.65, 0.7):
            want = ref.isotonic_with_prior(*sample, s, 2.5, interpolation=interpolation)
            tol = 1e-12 if half_life is None else 1e-10
            assert cal.predict_one(s) == pytest.approx(want, abs=tol), (t, s)
