"""The grid store's block array (streamcal/core/_grid_blocks.pxd): the fit kept as its
blocks, checked against the store's own tree (``blocks="never"``) bit for bit after every
add, against the hull recomputed by brute force (``_check``), on the adversarial
streams and with weights that rescale the units; and the automatic policy's moves
between the block array and the tree, with its cost bound checked by counting."""

import numpy as np
import pytest

from streamcal import OnlineIsotonic
from streamcal.core._grid_pav import GridIsotonicStore
from tests import references as ref

GA_WINDOW, GA_FIRST_WINDOW, GA_SCAN_LIMIT, GA_FIRST_WAIT = 1024, 128, 192, 1 << 14


def _streams(n, K, rng):
    s = rng.random(n)
    keys = np.floor(s * (K - 1) + 0.5)
    alt = (np.arange(n) % 2).astype(float)
    up = np.floor(np.arange(n) / n * (K - 1) + 0.5)
    return {
        "ascending": (up, alt),
        "descending": (K - 1 - up, alt),
        "all-zero": (keys, np.zeros(n)),
        "independent": (keys, (rng.random(n) < 0.5).astype(float)),
        "rare": (keys, (rng.random(n) < 0.01).astype(float)),
        "random": (keys, (rng.random(n) < s).astype(float)),
        "ties": (np.floor(s * 4) * (K - 1) // 4, (rng.random(n) < 0.5).astype(float)),
    }


def _reads(store, K, x):
    """The read-outs a prediction uses: step and linear, at the key, between keys, off
    the grid."""
    return [(store.predict_step(v), store.predict_linear(v))
            for v in (x, x + 0.5, x - 0.25, -1.0, float(K), 0.0, K - 1.0)]


@pytest.mark.parametrize("policy", ["always", "auto"])
@pytest.mark.parametrize("B", [2, 32])
def test_block_array_reads_as_the_tree_after_every_add(policy, B):
    """Every stream, weights 1 / 2 / 0.5 / 2**-10 (the last one rescales every cell) and
    labels 0 / 1 / 0.5 / 0.25: after each add the read-outs equal the tree-only store's
    bit for bit, and ``_check`` (the block array against the hull computed by brute
    force) holds every 50 adds and at the end."""
    rng = np.random.default_rng(B)
    K = 97
    for name, (keys, labels) in _streams(1500, K, rng).items():
        blocks = GridIsotonicStore(K, leaf_capacity=B, blocks=policy)
        tree = GridIsotonicStore(K, leaf_capacity=B, blocks="never")
        for i, (x, y) in enumerate(zip(keys.tolist(), labels.tolist())):
            w = [1.0, 2.0, 0.5, 1.0, 1.0][i % 5] if i != 700 else 2.0 ** -10
            y = {7: 0.5, 13: 0.25}.get(i % 17, y)
            assert blocks.add(x, w, y) == tree.add(x, w, y) == 0
            assert _reads(blocks, K, x) == _reads(tree, K, x), (name, i)
            if i % 50 == 0:
                blocks._check()
        blocks._check()
        assert blocks.n_cells == tree.n_cells
        assert [a.tolist() for a in blocks.cells()] == [a.tolist() for a in tree.cells()]
        assert blocks.hull() == tree.hull()


def test_block_array_matches_the_batch_oracle_with_heavy_cells():
    """Totals across 2**31 units (the scans' 64-bit products give way to 128-bit ones)
    with near-collinear points: the step read-out at every key is the batch PAV
    oracle's."""
    rng = np.random.default_rng(3)
    K = 24
    store = GridIsotonicStore(K, leaf_capacity=4, blocks="always")
    events = []
    for i in range(400):
        x = float(rng.integers(0, K))
        w = 2.0 ** 30 if i % 9 == 4 else float(rng.integers(1, 4))
        y = float(rng.choice([0.0, 1.0, 0.5]))
        assert store.add(x, w, y) == 0
        events.append((x, w, y))
        if i % 25 == 0 or i == 399:
            store._check()
            fit = ref.isotonic_fit([e[0] for e in events], [e[2] for e in events],
                                   [e[1] for e in events])
            for k in range(K):
                assert store.predict_step(float(k)) == ref.predict_step(fit, float(k))
    assert sum(e[1] for e in events) > 2.0 ** 31


def test_auto_moves_to_the_tree_on_long_scans_and_back():
    """On a stream whose blocks span the grid (labels independent of the key), the
    automatic policy leaves the block array within one window, its scans bounded by
    counting: at most GA_SCAN_LIMIT cells per add of the window plus one add's K; it
    tries the block array again after GA_FIRST_WAIT adds on the tree; on the random
    stream it stays on the block array. Read-outs equal the tree-only store's
    throughout."""
    K = 2001
    rng = np.random.default_rng(0)
    streams = _streams(60_000, K, rng)
    auto = GridIsotonicStore(K, blocks="auto")
    tree = GridIsotonicStore(K, blocks="never")
    keys, labels = streams["independent"]
    moves, on_blocks, scanned = [], 0, 0
    for i, (x, y) in enumerate(zip(keys.tolist(), labels.tolist())):
        before_scan, was = auto._op_scan, auto.on_blocks
        auto.add(x, 1.0, y)
        tree.add(x, 1.0, y)
        if was:
            on_blocks += 1
            scanned += auto._op_scan - before_scan
        if was != auto.on_blocks:
            moves.append((i, auto.on_blocks))
            if not auto.on_blocks:
                # each window of adds scanned at most its budget; the last one, cut
                # short, at most its budget plus its last add's (a scan, a re-hull and
                # the poolings of one block: 3 K)
                assert scanned <= (on_blocks + GA_WINDOW) * GA_SCAN_LIMIT + 3 * K
            on_blocks = scanned = 0
        if i % 997 == 0:
            assert _reads(auto, K, x) == _reads(tree, K, x), i
    assert moves and moves[0][1] is False, moves  # it left the block array...
    assert any(m[1] for m in moves), moves  # ...tried it again...
    gaps = [b[0] - a[0] for a, b in zip(moves, moves[1:]) if not a[1]]
    assert gaps and min(gaps) >= GA_FIRST_WAIT - 1, gaps  # ...after the wait
    auto._check()
    random = GridIsotonicStore(K, blocks="auto")
    keys, labels = streams["random"]
    left = 0
    for x, y in zip(keys.tolist(), labels.tolist()):
        was = random.on_blocks
        random.add(x, 1.0, y)
        left += was and not random.on_blocks
    assert random.on_blocks and left <= 1
    random._check()


def test_blocks_parameter_is_checked():
    with pytest.raises(ValueError, match="'blocks' parameter of GridIsotonicStore"):
        GridIsotonicStore(10, blocks="sometimes")


@pytest.mark.parametrize("blocks", ["never", "always"])
@pytest.mark.parametrize("w, y, match", [
    (float("inf"), 1.0, "w must be a finite float > 0"),
    (float("nan"), 1.0, "w must be a finite float > 0"),
    (0.0, 1.0, "w must be a finite float > 0"),
    (1.0, 1.5, r"y must be a float in \[0, 1\]"),
    (1.0, -0.5, r"y must be a float in \[0, 1\]"),
    (1.0, float("nan"), r"y must be a float in \[0, 1\]"),
])
def test_bad_events_are_refused_with_the_store_unchanged(blocks, w, y, match):
    store = GridIsotonicStore(10, leaf_capacity=2, blocks=blocks)
    for x, yy in [(1.0, 0.0), (4.0, 1.0), (7.0, 0.0)]:
        store.add(x, 1.0, yy)
    before = [a.tolist() for a in store.cells()], _reads(store, 10, 3.0)
    with pytest.raises(ValueError, match=match):
        store.add(3.0, w, y)
    assert ([a.tolist() for a in store.cells()], _reads(store, 10, 3.0)) == before
    store._check()


@pytest.mark.parametrize("interpolation", ["step", "linear"])
def test_online_isotonic_batch_on_the_block_array_equals_the_loop(interpolation):
    """OnlineIsotonic(resolution=...) fed in batches (the replay's path: the block array)
    and one event at a time give the same predictions, bit for bit, on a stream that
    makes the automatic policy move (random, then labels independent of the score)."""
    rng = np.random.default_rng(5)
    n = 30_000
    s = rng.random(n)
    y = np.where(np.arange(n) < n // 2, rng.random(n) < s, rng.random(n) < 0.5).astype(float)
    batch = OnlineIsotonic(resolution=1e-3, interpolation=interpolation)
    loop = OnlineIsotonic(resolution=1e-3, interpolation=interpolation)
    got = np.concatenate([batch.predict_learn_many(s[i:i + 4096], y[i:i + 4096])
                          for i in range(0, n, 4096)])
    want = []
    for si, yi in zip(s.tolist(), y.tolist()):
        want.append(loop.predict_one(si))
        loop.learn_one(si, yi)
    assert got.tolist() == want
    assert batch.predict_many(s[:500]).tolist() == loop.predict_many(s[:500]).tolist()


@pytest.mark.parametrize("seed", range(6))
def test_random_grids_streams_and_reloads_read_as_the_tree(seed):
    """Random grids (1 to 300 keys, leaves of 2 to 64 cells), streams (uniform keys,
    ascending, descending, a tenth of the grid, three keys), weights (dyadic, some
    the store refuses: 0.1, 2**45) and labels (0, 1, 0.25, 0.5, 0.75), with ``_check``,
    ``hull`` and a reload from the cells (both stores) between adds: the same refusals
    and the same read-outs after every add as the tree-only store."""
    rng = np.random.default_rng(seed)
    weights = [1.0, 2.0, 0.5, 2.0 ** -30, 2.0 ** 20, 3.0, 0.75, 0.1, 2.0 ** 45]
    for trial in range(60):
        K, B = int(rng.integers(1, 300)), int(rng.integers(2, 65))
        policy = ["always", "auto"][trial % 2]
        blocks = GridIsotonicStore(K, leaf_capacity=B, blocks=policy)
        tree = GridIsotonicStore(K, leaf_capacity=B, blocks="never")
        n, style = int(rng.integers(1, 300)), int(rng.integers(0, 5))
        for i in range(n):
            x = float([rng.integers(0, K), min(K - 1, i * K // n),
                       K - 1 - min(K - 1, i * K // n), rng.integers(0, max(1, K // 10)),
                       rng.choice([0, K - 1, K // 2])][style])
            w = float(rng.choice(weights)) if rng.random() < 0.3 else 1.0
            y = (float(rng.choice([0.0, 1.0, 0.5, 0.25, 0.75])) if rng.random() < 0.3
                 else float(rng.random() < 0.5))
            assert blocks.add(x, w, y) == tree.add(x, w, y), (trial, i)
            assert _reads(blocks, K, x) == _reads(tree, K, x), (trial, i)
            r = rng.random()
            if r < 0.03:
                blocks._check()
            elif r < 0.04:
                assert blocks.hull() == tree.hull()
            elif r < 0.045:
                cells = blocks.cells()
                blocks = GridIsotonicStore(K, leaf_capacity=B, blocks=policy)
                tree = GridIsotonicStore(K, leaf_capacity=B, blocks="never")
                assert blocks.load(*cells) and tree.load(*cells)
        blocks._check()
        assert blocks.n_cells == tree.n_cells
