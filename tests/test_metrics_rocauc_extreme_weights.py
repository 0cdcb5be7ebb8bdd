"""Regression tests for issue 13: ``ROCAUC`` is exact with any positive finite weights.

The references: scikit-learn's ``roc_auc_score(y, p, sample_weight=w)`` (floats,
normalised curves, so it neither underflows nor overflows on these streams) and
``tests.references_metrics.auc_exact``, the pairwise sum in ``Fraction``s rounded once,
which ``ROCAUC.get()`` must equal exactly (it computes the same rational and rounds it
correctly). Reverts must be exact: after any history the state is the state of the
events held, so ``river.utils.Rolling`` equals a fresh metric fed its window, bit for bit.
"""

from __future__ import annotations

import collections
import json
import pickle

import numpy as np
import pytest
from river import utils
from sklearn.metrics import roc_auc_score

from streamcal.metrics import ROCAUC, _ranking
from streamcal.metrics.base import StreamingMetric
from tests import references_metrics as R


def extreme_stream(seed, n, decimals=2):
    """Labels, scores with ties (rounded) and weights 10**U(-300, 300)."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.4).astype(int)
    p = np.round(rng.random(n), decimals)
    w = 10.0 ** rng.uniform(-300, 300, n)
    return y, p, w


def test_rocauc_tiny_weights_do_not_divide_by_zero():
    m = ROCAUC()
    m.update(1, 0.3, 1e-200)
    m.update(0, 0.2, 1e-200)
    assert m.get() == 1.0 == roc_auc_score([1, 0], [0.3, 0.2], sample_weight=[1e-200] * 2)
    m._check()


def test_rocauc_huge_weights_do_not_overflow():
    m = ROCAUC()
    m.update(1, 0.3, 1e200)
    m.update(0, 0.2, 1e200)
    assert m.get() == 1.0
    big = 1.7976931348623157e308  # the largest double, and the smallest subnormal
    for w in (big, 5e-324, big, 5e-324):
        m.update(0, 0.3, w)
        m.update(1, 0.3, w)
        m._check()
    assert m.get() == R.auc_exact(
        [1, 0] + [0, 1] * 4, [0.3, 0.2] + [0.3] * 8, [1e200] * 2 + [big, big, 5e-324, 5e-324] * 2
    )


ISSUE_ROLLING = [(1, 0.5, 1e12), (1, 0.0, 0.3), (0, 0.0, 1e12), (0, 0.5, 0.3), (1, 0.25, 0.3), (0, 0.25, 0.3)]


def test_rocauc_rolling_reverts_are_exact():
    rolling = utils.Rolling(ROCAUC, window_size=3)
    for y, p, w in ISSUE_ROLLING:
        rolling.update(y, p, w)
    tail = list(zip(*ISSUE_ROLLING[-3:]))
    assert rolling.get() == 0.25 == roc_auc_score(tail[0], tail[1], sample_weight=tail[2])
    fresh = ROCAUC()
    for y, p, w in ISSUE_ROLLING[-3:]:
        fresh.update(y, p, w)
    assert rolling.obj.to_dict() == fresh.to_dict()


@pytest.mark.parametrize("seed", range(6))
def test_rocauc_extreme_weights_match_sklearn_and_the_exact_oracle_at_every_prefix(seed):
    y, p, w = extreme_stream(seed, 120, decimals=1 + seed % 3)
    m = ROCAUC()
    for t in range(len(y)):
        m.update(int(y[t]), float(p[t]), float(w[t]))
        if t % 7 == 0 or t == len(y) - 1:
            m._check()
        want = R.auc_exact(y[: t + 1], p[: t + 1], w[: t + 1])
        assert m.get() == want, (seed, t)
        if len(set(y[: t + 1])) == 2:
            sk = roc_auc_score(y[: t + 1], p[: t + 1], sample_weight=w[: t + 1])
            assert m.get() == pytest.approx(sk, abs=1e-12), (seed, t)
    batch = ROCAUC()
    batch.update_many(y, p, w)
    assert batch.to_dict() == m.to_dict()


@pytest.mark.parametrize("seed", range(3))
def test_rocauc_random_updates_and_reverts_are_exact(seed, monkeypatch):
    monkeypatch.setattr(_ranking, "_LOAD", 2)  # blocks of at most 4: splits and deletions
    y, p, w = extreme_stream(100 + seed, 300, decimals=2)
    rng = np.random.default_rng(seed)
    m = ROCAUC()
    held = []
    for t in range(len(y)):
        m.update(int(y[t]), float(p[t]), float(w[t]))
        held.append(t)
        if rng.random() < 0.45:
            j = held.pop(int(rng.integers(len(held))))
            m.revert(int(y[j]), float(p[j]), float(w[j]))
        if t % 10 == 0:
            m._check()
            idx = np.array(held, dtype=int)
            assert m.get() == R.auc_exact(y[idx], p[idx], w[idx])
            fresh = ROCAUC()
            fresh.update_many(y[idx], p[idx], w[idx])
            assert fresh.get() == m.get() and fresh._u == m._u
    for j in held:
        m.revert(int(y[j]), float(p[j]), float(w[j]))
    m._check()
    assert m.get() == 0.0 and m._keys == [] and m._u == 0


@pytest.mark.parametrize("window_size", [3, 20])
def test_rocauc_rolling_matches_sklearn_on_the_window_tail(window_size):
    y, p, w = extreme_stream(7, 250)
    w[::5] = 0.3  # ordinary weights next to extreme ones
    rolling = utils.Rolling(ROCAUC, window_size=window_size)
    window = collections.deque(maxlen=window_size)
    for t in range(len(y)):
        event = (int(y[t]), float(p[t]), float(w[t]))
        rolling.update(*event)
        window.append(event)
        ys, ps, ws = (list(c) for c in zip(*window))
        assert rolling.get() == R.auc_exact(ys, ps, ws), t
        if len(set(ys)) == 2:
            assert rolling.get() == pytest.approx(
                roc_auc_score(ys, ps, sample_weight=ws), abs=1e-12
            ), t


def test_rocauc_revert_of_an_event_not_held_raises_and_changes_nothing():
    m = ROCAUC()
    m.update(1, 0.5, 2.0)
    m.update(0, 0.25, 1e-300)
    before = m.to_dict()
    for y, p, w in [(1, 0.5, 3.0), (1, 0.5, 1.0), (0, 0.5, 1.0), (0, 0.25, 1e-299), (1, 0.1, 1.0)]:
        with pytest.raises(ValueError, match="must be one previously added"):
            m.revert(y, p, w)
        assert m.to_dict() == before


def test_rocauc_snapshot_and_pickle_of_extreme_weights_continue_exactly():
    y, p, w = extreme_stream(9, 200)
    m = ROCAUC()
    m.update_many(y[:150], p[:150], w[:150])
    restored = StreamingMetric.from_dict(json.loads(json.dumps(m.to_dict())))
    unpickled = pickle.loads(pickle.dumps(m))
    for other in (restored, unpickled):
        other._check()
        assert other.get() == m.get()
    for t in range(150, 200):
        for metric in (m, restored, unpickled):
            metric.update(int(y[t]), float(p[t]), float(w[t]))
        assert restored.to_dict() == unpickled.to_dict() == m.to_dict()
    assert m.get() == R.auc_exact(y, p, w)


@pytest.mark.parametrize("bad", [float("inf"), float("nan"), -1.0])
def test_rocauc_non_finite_or_negative_weight_is_refused_naming_w(bad):
    m = ROCAUC()
    m.update(1, 0.5, 1e300)
    before = m.to_dict()
    with pytest.raises(ValueError, match="'w'"):
        m.update(0, 0.4, bad)
    assert m.to_dict() == before


def test_rocauc_weight_too_wide_for_the_sums_is_refused_naming_w(monkeypatch):
    """The default width holds any finite weights; a lower cap reaches the refusal."""
    monkeypatch.setattr(_ranking, "_MAX_LIMBS", 4)
    m = ROCAUC()
    m.update(1, 0.5, 1.0)
    m.update(0, 0.4, 2.0)
    before = m.to_dict()
    for w in (1e30, 1e-30):
        with pytest.raises(ValueError, match=r"The 'w' argument of ROCAUC\.update must"):
            m.update(0, 0.4, w)
        assert m.to_dict() == before
        m._check()
        with pytest.raises(ValueError, match=r"The 'w' argument of ROCAUC\.update_many"):
            m.update_many([1, 0], [0.1, 0.2], [1.0, w])
        assert m.to_dict() == before
    assert m.get() == 1.0


@pytest.mark.parametrize("weights", [
    [5e-324],
    [5e-324, 5e-324],
    [5e-324, 1e-310, 2.2250738585072014e-308],
    [1e-320, 1.0, 1e300],
    [5e-324, 1.7976931348623157e308],
])
def test_rocauc_snapshot_with_subnormal_weights_round_trips(weights):
    # issue 13: a subnormal weight (frexp gives its mantissa normalised, exponent down
    # to -1126) set the scale to -1152, below the range _set_state accepts, so ROCAUC
    # wrote a snapshot its own from_dict rejected
    m = ROCAUC()
    ys = [1, 0] * len(weights)
    ps = [0.3, 0.2, 0.25, 0.3, 0.1, 0.6, 0.4, 0.3, 0.7, 0.2][: len(ys)]
    ws = [w for w in weights for _ in (0, 1)]
    for y, p, w in zip(ys, ps, ws):
        m.update(y, p, w)
        m._check()
        d = json.loads(json.dumps(m.to_dict()))
        back = StreamingMetric.from_dict(d)
        back._check()
        assert back.to_dict() == m.to_dict() and back.get() == m.get()
        assert pickle.loads(pickle.dumps(m)).to_dict() == m.to_dict()
    assert m.get() == R.auc_exact(ys, ps, ws)
    batch = ROCAUC()
    batch.update_many(ys, ps, ws)
    assert StreamingMetric.from_dict(batch.to_dict()).to_dict() == batch.to_dict() == m.to_dict()
    for y, p, w in zip(ys, ps, ws):  # reverts are exact down to the empty store
        m.revert(y, p, w)
        m._check()
        assert StreamingMetric.from_dict(m.to_dict()).to_dict() == m.to_dict()
