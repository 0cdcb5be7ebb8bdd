"""The compiled state of the binary streaming metrics (``streamcal/metrics/_kernels.pyx``):
snapshots written by the pure-Python metrics (commit 35af34d) restore and continue with
the same floats; ``update_many`` leaves exactly the state of a loop of ``update``
(zero, tiny and huge weights, every parameter set); the compiled per-event checks raise
the messages of :mod:`streamcal._validation` and change nothing; ROC AUC's blocks and
superblocks against the pairwise oracle through splits, deletions and reverts."""

import json
from fractions import Fraction
import pickle

import numpy as np
import pytest

from streamcal import _validation as V
from streamcal.checks import _common
from streamcal.metrics import (
    ECE,
    ROCAUC,
    Brier,
    CalibrationRefinement,
    LogLoss,
    MurphyDecomposition,
    Sharpness,
    StreamingMetric,
    _ranking,
    calibration_refinement,
    update_many_each,
)
from tests import references_metrics as R

# (snapshot, get(), get() after each of MORE): written by the pure-Python metrics of
# commit 35af34d fed EVENTS (then, when revertible, ``revert(0, 0.4, 0.5)``); the last
# ROCAUC was built with ``_ranking._LOAD = 2`` (blocks of at most 4 scores).
EVENTS = [
    (1, 0.8, 1.0), (0, 0.4, 0.5), (1, 0.6, 3.0), (0, 0.8, 1.0), (1, 1.0, 0.3),
    (0, 0.0, 1.0), (1, 0.35, 2.0), (0, 0.4, 0.0), (1, 0.55, 1.0), (0, 0.1, 0.7),
    (1, 0.9, 1.0), (0, 0.65, 1.0),
]  # fmt: skip
MORE = [(0, 0.8, 2.0), (1, 0.45, 1.0), (1, 0.8, 0.5), (0, 0.05, 1.0), (1, 0.999, 1.0)]
OLD_SNAPSHOTS = [
    (
        {'class': 'Brier', 'format': 1, 'params': {}, 'state': {'weight': 12.0, 'total': 2.6470000000000002, 'n': 10}},
        0.22058333333333335,
        [0.2805, 0.2819666666666667, 0.2741612903225807, 0.25769696969696976, 0.24297148571428576],
    ),
    (
        {'class': 'LogLoss', 'format': 1, 'params': {'eps': 1e-15}, 'state': {'weight': 12.0, 'total': 7.291474585916243, 'n': 10}},
        0.6076228821596869,
        [0.7507393150560316, 0.7539238738001477, 0.7368019279135045, 0.6952559501240527, 0.655584210136026],
    ),
    (
        {'class': 'ECE', 'format': 1, 'params': {'n_bins': 4, 'strategy': 'uniform', 'window_size': None, 'half_life': None}, 'state': {'n': 10, 'weight': 12.0, 't': 0, 't_ref': 0, 'phase': 0.0, 'bins': [[1.7, 2.0, 5.0, 3.3], [0.0, 2.0, 4.0, 2.3], [0.06999999999999999, 0.7, 2.9999999999999996, 2.8000000000000003], [2, 1, 3, 4]]}},
        0.23916666666666675,
        [0.31928571428571434, 0.3346666666666668, 0.3174193548387098, 0.3012121212121213, 0.2839428571428572],
    ),
    (
        {'class': 'ECE', 'format': 1, 'params': {'n_bins': 3, 'strategy': 'quantile', 'window_size': None, 'half_life': None}, 'state': {'n': 10, 'weight': 12.0, 't': 0, 't_ref': 0, 'phase': 0.0, 'values': [[0.8, 2.0, 1.0, 2], [0.6, 3.0, 3.0, 1], [1.0, 0.3, 0.3, 1], [0.0, 1.0, 0.0, 1], [0.35, 2.0, 2.0, 1], [0.55, 1.0, 1.0, 1], [0.1, 0.7, 0.0, 1], [0.9, 1.0, 1.0, 1], [0.65, 1.0, 0.0, 1]]}},
        0.3358333333333334,
        [0.30928571428571433, 0.32533333333333336, 0.30838709677419357, 0.2866666666666667, 0.27022857142857143],
    ),
    (
        {'class': 'ECE', 'format': 1, 'params': {'n_bins': 3, 'strategy': 'uniform', 'window_size': 5, 'half_life': None}, 'state': {'n': 5, 'weight': 5.700000000000001, 't': 0, 't_ref': 0, 'phase': 0.0, 'bins': [[0.7, 4.0, 0.9999999999999998], [0.0, 3.0, 1.0], [0.06999999999999999, 1.9, 0.9000000000000001], [1, 3, 1]], 'window': [[1.0, 0.35, 2.0], [1.0, 0.55, 1.0], [0.0, 0.1, 0.7], [1.0, 0.9, 1.0], [0.0, 0.65, 1.0]]}},
        0.22280701754385962,
        [0.31052631578947365, 0.2929824561403508, 0.27272727272727265, 0.29999999999999993, 0.3816363636363636],
    ),
    (
        {'class': 'ECE', 'format': 1, 'params': {'n_bins': 3, 'strategy': 'quantile', 'window_size': None, 'half_life': 2.0}, 'state': {'n': 11, 'weight': 110.5335136523794, 't': 11, 't_ref': 0, 'phase': 0.0, 'values': [[0.8, 3.8284271247461903, 1.0, 2], [0.4, 0.7071067811865476, 0.0, 1], [0.6, 6.0, 6.0, 1], [1.0, 1.2, 1.2, 1], [0.0, 5.656854249492381, 0.0, 1], [0.35, 16.0, 16.0, 1], [0.55, 11.313708498984761, 11.313708498984761, 1], [0.1, 11.2, 0.0, 1], [0.9, 22.627416997969522, 22.627416997969522, 1], [0.65, 32.0, 0.0, 1]]}},
        0.22025888491655807,
        [0.5446395128153236, 0.48940599811613805, 0.30307990694801085, 0.10007518741153582, 0.14122658462750026],
    ),
    (
        {'class': 'ECE', 'format': 1, 'params': {'n_bins': 2, 'strategy': 'uniform', 'window_size': None, 'half_life': 0.1}, 'state': {'n': 11, 'weight': 1074791117.801954, 't': 11, 't_ref': 7, 'phase': 0.0, 'bins': [[716.8019540786743, 1074790401.0], [0.001953125, 1048577.0000000002], [71.68068359374999, 698875904.5500001], [4, 7]]}},
        0.6492679253396244,
        [0.799926364420323, 0.550487423547244, 0.20067844978272636, 0.050072632864355926, 0.0010478991390903741],
    ),
    (
        {'class': 'Sharpness', 'format': 1, 'params': {'n_bins': 3}, 'state': {'n': 10, 'weight': 12.0, 'bins': [[1.7, 7.0, 3.3], [0.0, 6.0, 2.3], [2, 4, 4]]}},
        0.5621572871572872,
        [0.4386407393145938, 0.474874213836478, 0.4823692992213571, 0.45313479623824454, 0.47134453781512603],
    ),
    (
        {'class': 'MurphyDecomposition', 'format': 1, 'params': {'n_bins': 3}, 'state': {'n': 10, 'weight': 12.0, 'score': 2.6470000000000002, 'bins': [[1.7, 7.0, 3.3], [0.0, 6.0, 2.3], [0.06999999999999999, 3.6999999999999997, 2.8000000000000003], [0.006999999999999999, 2.05, 2.3900000000000006], [0.0, 3.05, 2.0], [2, 4, 4]]}},
        0.22058333333333335,
        [0.2805, 0.2819666666666667, 0.2741612903225807, 0.25769696969696976, 0.24297148571428576],
    ),
    (
        {'class': 'CalibrationRefinement', 'format': 1, 'params': {'resolution': None}, 'state': {'n': 10, 'weight': 12.0, 'score': 2.6470000000000002, 'calibration': 2.1470000000000002, 'refinement': 0.5, 'groups': [[0.8, 2.0, 1.0, 2], [0.6, 3.0, 3.0, 1], [1.0, 0.3, 0.3, 1], [0.0, 1.0, 0.0, 1], [0.35, 2.0, 2.0, 1], [0.55, 1.0, 1.0, 1], [0.1, 0.7, 0.0, 1], [0.9, 1.0, 1.0, 1], [0.65, 1.0, 0.0, 1]]}},
        0.22058333333333335,
        [0.2805, 0.2819666666666667, 0.2741612903225807, 0.25769696969696976, 0.24297148571428576],
    ),
    (
        {'class': 'CalibrationRefinement', 'format': 1, 'params': {'resolution': 0.25}, 'state': {'n': 10, 'weight': 12.0, 'score': 3.3125, 'calibration': 2.645833333333333, 'refinement': 0.666666666666667, 'groups': [[3, 3.0, 1.0, 3], [2, 4.0, 4.0, 2], [4, 1.3, 1.3, 2], [0, 1.7, 0.0, 2], [1, 2.0, 2.0, 1]]}},
        0.2760416666666667,
        [0.3169642857142857, 0.3125, 0.30443548387096775, 0.2859848484848485, 0.26964285714285713],
    ),
    (
        {'class': 'ROCAUC', 'format': 1, 'params': {}, 'state': {'u': 18.21, 'w_pos': 8.3, 'w_neg': 3.7, 'n_pos': 6, 'n_neg': 4, 'keys': [[0.0, 0.1, 0.35, 0.55, 0.6, 0.65, 0.8, 0.9, 1.0]], 'neg_w': [[1.0, 0.7, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0]], 'pos_w': [[0.0, 0.0, 2.0, 1.0, 3.0, 0.0, 1.0, 1.0, 0.3]], 'neg_n': [[1, 1, 0, 0, 0, 1, 1, 0, 0]], 'pos_n': [[0, 0, 1, 1, 1, 0, 1, 1, 1]], 'block_neg': [3.7], 'block_pos': [8.3]}},
        0.5929664604363399,
        [0.46100190234622707, 0.4435012261837389, 0.45846759756534194, 0.5392933292720072, 0.581951354339414],
    ),
    (
        {'class': 'ROCAUC', 'format': 1, 'params': {}, 'state': {'u': 21.36, 'w_pos': 8.3, 'w_neg': 4.2, 'n_pos': 6, 'n_neg': 5, 'keys': [[0.0, 0.1, 0.35, 0.4], [0.55, 0.6], [0.65, 0.8, 0.9, 1.0]], 'neg_w': [[1.0, 0.7, 0.0, 0.5], [0.0, 0.0], [1.0, 1.0, 0.0, 0.0]], 'pos_w': [[0.0, 0.0, 2.0, 0.0], [1.0, 3.0], [0.0, 1.0, 1.0, 0.3]], 'neg_n': [[1, 1, 0, 1], [0, 0], [1, 1, 0, 0]], 'pos_n': [[0, 0, 1, 0], [1, 1], [0, 1, 1, 1]], 'block_neg': [2.2, 0.0, 2.0], 'block_pos': [2.0, 4.0, 2.3]}},
        0.6127366609294319,
        [0.4850369218810726, 0.471037114117239, 0.4856813693219223, 0.5571145124716553, 0.5981224279835391],
    ),
]


def _rocauc_events(state):
    """Pseudo-events ``(labels, scores, weights)`` with a format-1 ROCAUC state's
    per-score class weights (the AUC depends on nothing else)."""
    y, p, w = [], [], []
    for keys, neg, pos in zip(state["keys"], state["neg_w"], state["pos_w"]):
        for key, nw, pw in zip(keys, neg, pos):
            y += [0, 1]
            p += [key, key]
            w += [nw, pw]
    return y, p, w


def _groups_as_set(state):
    return {**state, "groups": sorted(map(tuple, state["groups"]))}


@pytest.mark.parametrize("snapshot, value, continued", OLD_SNAPSHOTS)
def test_python_snapshots_restore_and_continue_with_the_same_floats(
    snapshot, value, continued
):
    m = StreamingMetric.from_dict(json.loads(json.dumps(snapshot)))
    if hasattr(m, "_check"):
        m._check()
    if isinstance(m, ROCAUC):  # format 2 is exact: the old floats up to their rounding
        held = _rocauc_events(snapshot["state"])
        assert m.get() == R.auc_exact(*held) == pytest.approx(value, rel=1e-15, abs=0)
        exact = []
        for y, p, w in MORE:
            held = [a + [b] for a, b in zip(held, (y, p, w))]
            exact.append(R.auc_exact(*held))
        assert exact == pytest.approx(continued, rel=1e-15, abs=0)
        continued, value = exact, m.get()
    assert m.get() == value
    state = m.to_dict()["state"]
    if isinstance(m, CalibrationRefinement):  # grid cells now listed in key order
        assert _groups_as_set(state) == _groups_as_set(snapshot["state"])
    elif isinstance(m, ROCAUC):  # format 2: the same weights as exact integers (issue 13)
        unit = Fraction(2) ** state["scale"]
        for name in ("neg_w", "pos_w"):
            assert [[v * unit for v in b] for b in state[name]] == snapshot["state"][name]
        for name in ("keys", "neg_n", "pos_n"):
            assert state[name] == snapshot["state"][name]
    else:
        if "residues" not in snapshot["state"] and "window" in state:
            # written before a window kept residue bounds: what its sums are off the
            # window's (rounding only here)
            residues = state.pop("residues")
            assert residues["weight"] <= 2.0**-50 * state["weight"]
            assert all(r <= 2.0**-50 * state["weight"] for r in residues.get("bins", []))
        assert state == snapshot["state"]
    got = []
    for y, p, w in MORE:
        m.update(y, p, w)
        got.append(m.get())
    assert got == continued


PARAMS = [
    (Brier, {}),
    (LogLoss, {}),
    (LogLoss, {"eps": 0.01}),
    (ECE, {}),
    (ECE, {"n_bins": 7, "strategy": "quantile"}),
    (ECE, {"n_bins": 5, "window_size": 40}),
    (ECE, {"n_bins": 4, "strategy": "quantile", "window_size": 33}),
    (ECE, {"n_bins": 3, "half_life": 2.0}),
    (ECE, {"strategy": "quantile", "half_life": 0.5}),
    (Sharpness, {"n_bins": 13}),
    (MurphyDecomposition, {"n_bins": 6}),
    (CalibrationRefinement, {}),
    (CalibrationRefinement, {"resolution": 0.01}),
    (CalibrationRefinement, {"resolution": 1e-5}),  # grid too fine for arrays: a dict
    (ROCAUC, {}),
]


def _events(seed, n, extreme=False):
    rng = np.random.default_rng(seed)
    p = np.round(rng.beta(1.2, 1.2, n), 3 if seed % 2 else 12)
    p[rng.random(n) < 0.04] = 1.0
    p[rng.random(n) < 0.04] = 0.0
    y = (rng.random(n) < p).astype(float)
    choices = [1.0, 0.5, 0.3, 2.0, 0.0]
    if extreme:
        choices += [1e-300, 5e-324, 1e150, 1e-12]
    w = rng.choice(choices, n)
    return y, p, w


@pytest.mark.parametrize("cls, params", PARAMS)
@pytest.mark.parametrize("extreme", [False, True])
def test_update_many_is_the_loop_of_update_exactly(cls, params, extreme):
    y, p, w = _events(3 + extreme, 700, extreme)
    loop = cls(**params)
    for a, b, c in zip(y.tolist(), p.tolist(), w.tolist()):
        loop.update(int(a), b, c)
    batch = cls(**params)
    for lo, hi in ((0, 1), (1, 250), (250, 251), (251, 700)):
        batch.update_many(y[lo:hi], p[lo:hi], w[lo:hi])
    assert batch.get() == loop.get() or (np.isnan(batch.get()) and np.isnan(loop.get()))
    assert batch.to_dict() == loop.to_dict()
    assert _common.fingerprint(batch) == _common.fingerprint(loop)
    batch.update_many(y[:0], p[:0], w[:0])  # an empty batch changes nothing
    assert _common.fingerprint(batch) == _common.fingerprint(loop)


def test_update_many_each_is_the_loop_of_update_many():
    # every metric of PARAMS, two prediction columns shared between them (as the
    # replay hands them over), weights given or not, batches of several sizes
    y, p, w = _events(7, 600, extreme=True)
    q = np.clip(p[::-1] * 0.9 + 0.05, 0.0, 1.0)
    for weights in (w, None):
        loop = [cls(**params) for cls, params in PARAMS for _ in (p, q)]
        each = [cls(**params) for cls, params in PARAMS for _ in (p, q)]
        columns = [p, q] * len(PARAMS)
        for lo, hi in ((0, 1), (1, 300), (300, 300), (300, 600)):
            wb = None if weights is None else weights[lo:hi]
            for m, c in zip(loop, columns):
                m.update_many(y[lo:hi], c[lo:hi], wb)
            update_many_each([(m, c[lo:hi]) for m, c in zip(each, columns)], y[lo:hi], wb)
        for a, b in zip(loop, each):
            assert _common.fingerprint(a) == _common.fingerprint(b)


class _OwnBatch:
    """An object with its own ``update_many`` (a river metric, say): records its calls
    and feeds a Brier."""

    def __init__(self):
        self.calls, self.inner = [], Brier()

    def update_many(self, y_true, y_pred, w=None):
        self.calls.append((y_true, y_pred, w))
        self.inner.update_many(y_true, y_pred, w)


def test_update_many_each_checks_every_input_first_and_calls_own_update_many():
    y, p, _ = _events(8, 50)
    bad = p.copy()
    bad[17] = 1.5
    for batches, labels, expected in [
        # the second column is bad: the first metric is not updated either
        (lambda a, b: [(a, p), (b, bad)], y,
         lambda: ECE().update_many(y, bad)),
        # a bad label, named by the first metric
        (lambda a, b: [(a, p), (b, p)], np.where(np.arange(50) == 3, 2.0, y),
         lambda: Brier().update_many(np.where(np.arange(50) == 3, 2.0, y), p)),
        # columns of another length than the labels
        (lambda a, b: [(a, p), (b, p[:40])], y,
         lambda: ECE().update_many(y, p[:40])),
    ]:
        a, b = Brier(), ECE()
        before = (pickle.dumps(a), pickle.dumps(b))
        with pytest.raises(ValueError) as want:
            expected()
        with pytest.raises(ValueError) as got:
            update_many_each(batches(a, b), labels)
        assert str(got.value) == str(want.value)
        assert (pickle.dumps(a), pickle.dumps(b)) == before
    own, plain = _OwnBatch(), Brier()
    update_many_each([(own, p), (plain, p)], y)
    assert len(own.calls) == 1 and own.calls[0][0] is y and own.calls[0][1] is p
    assert own.inner.to_dict() == plain.to_dict()


@pytest.mark.parametrize("cls, params", PARAMS)
def test_compiled_checks_raise_the_validation_messages_and_change_nothing(cls, params):
    m = cls(**params)
    y, p, w = _events(5, 80)
    m.update_many(y, p, w)
    before = pickle.dumps(m)
    name = cls.__name__
    cases = [
        ((2, 0.5, 1.0), lambda: V.check_label(2, name, "update", "y_true")),
        ((1.5, 0.5, 1.0), lambda: V.check_label(1.5, name, "update", "y_true")),
        ((1, float("nan"), 1.0), lambda: V.check_probability(float("nan"), name, "update")),
        ((1, 1.0000001, 1.0), lambda: V.check_probability(1.0000001, name, "update")),
        ((1, "0.5", 1.0), lambda: V.check_probability("0.5", name, "update")),
        ((1, {False: 0.5}, 1.0), lambda: V.check_probability({False: 0.5}, name, "update")),
        ((1, 0.5, -1.0), lambda: V.check_weight(-1.0, name, "update")),
        ((1, 0.5, float("inf")), lambda: V.check_weight(float("inf"), name, "update")),
        ((None, 2.0, -1.0), lambda: V.check_label(None, name, "update", "y_true")),
    ]
    for args, expected in cases:
        with pytest.raises((ValueError, TypeError)) as want:
            expected()
        with pytest.raises(type(want.value)) as got:
            m.update(*args)
        assert str(got.value) == str(want.value)
        assert pickle.dumps(m) == before
    # the accepted non-float forms go through the same slow path as before
    a, b = cls(**params), cls(**params)
    a.update(np.True_, {True: 0.25, False: 0.75}, 2)
    b.update(1, 0.25, 2.0)
    assert a.to_dict() == b.to_dict()


@pytest.mark.parametrize("load", [1, 2])
def test_roc_auc_blocks_and_superblocks_against_the_oracle(monkeypatch, load):
    """Blocks of at most 2 or 4 scores: hundreds of blocks, several superblocks, splits
    and deletions on every path; _check after each step compares the superblock totals
    with the blocks' and the numerator with a pairwise sum."""
    monkeypatch.setattr(_ranking, "_LOAD", load)
    rng = np.random.default_rng(21 + load)
    y, p, w = _events(7, 1500)
    p = np.round(p, 4)
    m = ROCAUC()
    held = []
    for t in range(len(y)):
        if held and rng.random() < 0.3:
            j = held.pop(int(rng.integers(len(held))))
            m.revert(int(y[j]), float(p[j]), float(w[j]))
        else:
            m.update(int(y[t]), float(p[t]), float(w[t]))
            held.append(t)
        if t % 7 == 0:
            m._check()
        if t % 50 == 0:
            idx = np.array(held, dtype=int)
            assert m.get() == pytest.approx(R.auc_pairs(y[idx], p[idx], w[idx]), abs=1e-10)
    m._check()
    assert m._store.n_blocks > 2 * 64, "too few blocks for several superblocks"
    restored = StreamingMetric.from_dict(json.loads(json.dumps(m.to_dict())))
    copy = pickle.loads(pickle.dumps(m))
    more = [(int(y[t]), float(p[-t]), float(w[t])) for t in range(300)]
    for metric in (m, restored, copy):
        for event in more:
            metric.update(*event)
    assert m.get() == restored.get() == copy.get()
    assert m.to_dict() == restored.to_dict() == copy.to_dict()


def test_calibration_refinement_fine_grid_uses_int_keys_and_matches_the_batch():
    y, p, w = _events(9, 400)
    for resolution in (1e-5, 0.01):
        m = CalibrationRefinement(resolution=resolution)
        m.update_many(y, p, w)
        m._check()
        pooled = np.minimum(1.0, np.floor(p / resolution + 0.5) * resolution)
        want = calibration_refinement(y, pooled, w)
        assert (m.get(), m.calibration, m.refinement) == pytest.approx(tuple(want), abs=1e-12)
        assert all(isinstance(k, int) for k in m._groups)
        restored = StreamingMetric.from_dict(json.loads(json.dumps(m.to_dict())))
        assert restored._groups == m._groups


def test_calibration_refinement_snapshot_keys_outside_the_grid_are_refused():
    m = CalibrationRefinement(resolution=0.25)
    m.update(1, 0.5)
    d = m.to_dict()
    for key in (5, -1):
        bad = {**d, "state": {**d["state"], "groups": [[key, 1.0, 1.0, 1]]}}
        with pytest.raises(ValueError, match=r"state\[.groups.\]\[0\]\[0\] of CalibrationRefinement must be an int in \[0, 4\]"):
            CalibrationRefinement.from_dict(bad)


@pytest.mark.parametrize(
    "cls, params",
    [
        (Brier, {}), (LogLoss, {}), (ECE, {}), (ECE, {"half_life": 40.0}),
        (ECE, {"strategy": "quantile"}), (Sharpness, {}), (MurphyDecomposition, {}),
        (CalibrationRefinement, {}), (CalibrationRefinement, {"resolution": 0.01}),
    ],
)
def test_store_update_many_refuses_the_first_weight_past_the_rule_and_changes_nothing(cls, params):
    # Store.update_many (metrics/_kernels.pyx), the one batch path of the binary stores:
    # the batch does not fit, so it runs event by event and restores the saved state
    from streamcal.metrics._kernels import Store

    m = cls(**params)
    y, p, w = _events(11, 60)
    m.update_many(y, p, w)
    assert isinstance(m._store, Store)
    before = _common.fingerprint(m)
    scale = m._store.scale()  # 2 ** 64 under forgetting: a stored weight may grow so
    big = 0.6 * m._store.capacity / scale  # fits alone (and twice, unless it is scaled)
    bad = np.array([1.0, big, big if scale == 1.0 else 2 * big, 1.0])
    batch_y, batch_p = np.array([1.0, 0.0, 1.0, 0.0]), np.array([0.2, 0.4, 0.6, 0.8])
    with pytest.raises(ValueError, match=rf"'w' argument of {cls.__name__}.update_many .* at index 2"):
        m.update_many(batch_y, batch_p, bad)
    assert _common.fingerprint(m) == before
    loop = pickle.loads(pickle.dumps(m))
    m.update_many(batch_y, batch_p, np.array([1.0, 2.0, 3.0, 1.0]))  # fits: one pass
    for a, b, c in zip(batch_y, batch_p, (1.0, 2.0, 3.0, 1.0)):
        loop.update(int(a), float(b), c)
    assert _common.fingerprint(m) == _common.fingerprint(loop)
