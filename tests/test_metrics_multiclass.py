"""Multiclass calibration metrics: ConfidenceECE, TopLabelECE, ClasswiseECE, TECE.

Every metric is compared, at every prefix of random streams (2, 3 and 5 classes, ties,
weights, classes missing from forecasts, a class appearing late, a class never
predicted), with the numpy oracles of ``tests/references_multiclass.py``; the
equal-width metrics also with :func:`streamcal.metrics.expected_calibration_error` on
the binary problems they reduce to (Gupta and Ramdas's multiclass-to-binary view).
Rolling windows are compared with the oracle on the tail of the stream.
"""

from __future__ import annotations

import copy
import json
import math
import pickle
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from river import utils

from streamcal import _validation as V
from streamcal.metrics import (
    TECE,
    ClasswiseECE,
    ConfidenceECE,
    MulticlassCalibrationMetric,
    ReliabilityBin,
    StreamingMetric,
    TopLabelECE,
    expected_calibration_error,
)
from streamcal.core.bins import uniform_bin as _bin_of
from streamcal.core.bins import uniform_edges
from streamcal.metrics._functional import _bin_indices
from tests import references_multiclass as R

LABELS = ["a", "b", 3, 2.5, False, "f"]  # class labels are JSON scalars
WEIGHTS = [1.0, 1.0, 1.0, 0.5, 2.25, 0.0]  # dyadic: sums are exact, so are the bin cuts


def make_stream(
    n, n_classes, seed, weights=True, late=True, unpredicted=True, shuffle_keys=True
):
    """Events ``(y_true, y_pred, w)``.

    Probabilities are multiples of 1/20 (heavy ties, many on bin edges), keys in a
    random order, zero-probability keys dropped half the time. With ``late``, the last
    class has probability 0 and is never the outcome before event ``n // 2``; with
    ``unpredicted``, one more class is sometimes the outcome but never a key of a
    forecast. Outcomes follow the squared probabilities (an over-confident forecaster).
    """
    rng = np.random.default_rng(seed)
    classes = LABELS[:n_classes]
    extra = LABELS[n_classes]
    events = []
    for t in range(n):
        alpha = np.full(n_classes, 0.7)
        if late and t < n // 2:
            alpha[-1] = 1e-9
        counts = rng.multinomial(20, rng.dirichlet(alpha))
        if late and t < n // 2:
            counts[0] += counts[-1]
            counts[-1] = 0
        probs = counts / 20.0
        order = rng.permutation(n_classes) if shuffle_keys else range(n_classes)
        y_pred = {
            classes[j]: float(probs[j])
            for j in order
            if probs[j] > 0 or rng.random() < 0.5
        }
        q = probs**2 + 1e-12
        if late and t < n // 2:
            q[-1] = 0.0
        y = classes[int(rng.choice(n_classes, p=q / q.sum()))]
        if unpredicted and rng.random() < 0.1:
            y = extra
        w = float(rng.choice(WEIGHTS)) if weights else 1.0
        events.append((y, y_pred, w))
    return events


METRICS = {
    "ConfidenceECE": (ConfidenceECE, R.confidence_ece),
    "TopLabelECE": (TopLabelECE, R.top_label_ece),
    "ClasswiseECE": (ClasswiseECE, R.classwise_ece),
    "TECE": (TECE, R.tece),
}


def _oracle(name, events, n_bins, threshold=None):
    if name == "TECE":
        return R.tece(events, n_bins, threshold)
    return METRICS[name][1](events, n_bins)


def _make(name, n_bins, threshold=None):
    if name == "TECE":
        return TECE(n_bins=n_bins, threshold=threshold)
    return METRICS[name][0](n_bins=n_bins)


def _close(a, b):
    return math.isclose(a, b, rel_tol=1e-10, abs_tol=1e-12)


# ---------------------------------------------------------------------- the bins


@pytest.mark.parametrize("n_bins", [1, 2, 3, 5, 7, 10, 15, 20, 49])
def test_bin_of_matches_the_batch_ece_bins(n_bins):
    edges = tuple(uniform_edges(n_bins))  # as the multiclass metrics keep them
    values = [0.0, 1.0, 5e-324, 1.0 - 2**-53]
    for k in range(n_bins + 1):
        e = k / n_bins
        values += [e, math.nextafter(e, 0.0), math.nextafter(e, 1.0)]
        values += [j / 20 for j in range(21)] + [j / 100 for j in range(101)]
    values += list(np.random.default_rng(n_bins).random(2000))
    values = [min(max(v, 0.0), 1.0) for v in values]
    expected = _bin_indices(np.array(values), n_bins, "uniform")
    assert [_bin_of(v, n_bins, edges) for v in values] == expected.tolist()
    assert R.uniform_bins(values, n_bins).tolist() == expected.tolist()


# ---------------------------------------------------------------------- oracles


@pytest.mark.parametrize("name", list(METRICS))
@pytest.mark.parametrize("n_classes", [2, 3, 5])
@pytest.mark.parametrize("seed", range(4))
def test_matches_oracle_at_every_prefix(name, n_classes, seed):
    events = make_stream(60, n_classes, seed)
    n_bins = [10, 3, 5, 1][seed]
    m = _make(name, n_bins)
    for t, (y, p, w) in enumerate(events, 1):
        m.update(y, p, w)
        m._check()
        assert _close(m.get(), _oracle(name, events[:t], n_bins)), (t, m.get())


@pytest.mark.parametrize("threshold", [0.0, 0.1, 0.25, 0.5, 0.9])
@pytest.mark.parametrize("seed", range(3))
def test_tece_fixed_threshold(threshold, seed):
    events = make_stream(60, 4, seed)
    m = TECE(n_bins=4, threshold=threshold)
    for t, (y, p, w) in enumerate(events, 1):
        m.update(y, p, w)
        m._check()
        assert _close(m.get(), R.tece(events[:t], 4, threshold)), t


def test_unit_weight_binary_reductions_agree_with_expected_calibration_error():
    """On unit weights, each equal-width metric is expected_calibration_error applied to
    the binary problems it reduces to (top probability vs correctness; per predicted
    class; per class column)."""
    for seed in range(6):
        n_classes = [2, 3, 5][seed % 3]
        events = make_stream(150, n_classes, seed, weights=False)
        n_bins = 10
        classes, P, Y, _ = R.as_matrix(events)
        top = [max(p, key=p.get) for _, p, _ in events]
        h = np.array([p[c] for (_, p, _), c in zip(events, top)])
        correct = np.array([float(c == y) for (y, _, _), c in zip(events, top)])

        m = ConfidenceECE(n_bins=n_bins)
        for e in events:
            m.update(*e)
        assert _close(m.get(), expected_calibration_error(correct, h, n_bins))

        m = TopLabelECE(n_bins=n_bins)
        for e in events:
            m.update(*e)
        expected = 0.0
        for c in dict.fromkeys(top):
            sel = np.array([t == c for t in top])
            expected += sel.mean() * expected_calibration_error(
                correct[sel], h[sel], n_bins
            )
        assert _close(m.get(), expected)
        assert set(m.ece_by_class) == set(top)

        m = ClasswiseECE(n_bins=n_bins)
        for e in events:
            m.update(*e)
        per_class = [
            expected_calibration_error(Y[:, j], P[:, j], n_bins)
            for j in range(len(classes))
        ]
        assert _close(m.get(), float(np.mean(per_class)))
        assert list(m.ece_by_class) == classes
        assert all(_close(a, b) for a, b in zip(m.ece_by_class.values(), per_class))


def test_two_classes_classwise_equals_binary_ece():
    """With two classes and no probability on an inner bin edge, bin k of p is bin
    B - 1 - k of 1 - p and the gaps are opposite, so both classes have the binary ECE
    of (p, y) and the class-wise ECE equals it. (With probabilities on the edges the
    two class ECEs can differ; the class-wise ECE is always their mean.)"""
    rng = np.random.default_rng(7)
    for n_bins in (2, 5, 10):
        p = rng.random(300)
        p = p[np.abs(p * n_bins - np.round(p * n_bins)) > 1e-9]
        y = (rng.random(len(p)) < p**2).astype(int)
        m = ClasswiseECE(n_bins=n_bins)
        for pi, yi in zip(p, y):
            m.update(bool(yi), {False: 1.0 - float(pi), True: float(pi)})
        binary = expected_calibration_error(y, p, n_bins)
        assert _close(m.get(), binary)
        assert _close(m.ece_by_class[True], binary) and _close(
            m.ece_by_class[False], binary
        )
    # on an edge, the mean relation still holds
    m = ClasswiseECE(n_bins=2)
    events = [(1, {0: 0.5, 1: 0.5}), (0, {0: 0.25, 1: 0.75})]
    for y, p in events:
        m.update(y, p)
    e1 = expected_calibration_error([1, 0], [0.5, 0.75], 2)
    e0 = expected_calibration_error([0, 1], [0.5, 0.25], 2)
    assert e0 != e1
    assert _close(m.get(), (e0 + e1) / 2)


def test_top_label_refines_confidence():
    """The top-label bins refine the confidence bins, so by the triangle inequality
    TopLabelECE >= ConfidenceECE, with equality when one class is always predicted."""
    for seed in range(5):
        events = make_stream(120, 4, seed)
        conf, tl = ConfidenceECE(), TopLabelECE()
        for e in events:
            conf.update(*e)
            tl.update(*e)
            assert tl.get() >= conf.get() - 1e-12
    conf, tl = ConfidenceECE(), TopLabelECE()
    for y, p in [
        ("a", {"a": 0.6, "b": 0.4}),
        ("b", {"a": 0.9, "b": 0.1}),
        ("a", {"a": 0.55, "b": 0.45}),
    ]:
        conf.update(y, p)
        tl.update(y, p)
    assert _close(conf.get(), tl.get())


def test_tece_threshold_follows_the_number_of_classes():
    """With threshold=None, the threshold is 1/K for the K classes held: a class named
    for the first time (here only as an outcome) lowers it, keeping more events."""
    m = TECE(n_bins=1)
    m.update("a", {"a": 0.4, "b": 0.6})
    m.update("b", {"a": 0.45, "b": 0.55})
    # K = 2: kept a: none (0.4, 0.45 <= 0.5); b: 0.6 (y=0), 0.55 (y=1): gap |1 - 1.15| / 2
    assert _close(m.get(), (0.0 + 0.15 / 2) / 2)
    m.update("c", {"a": 0.5, "b": 0.5})
    # K = 3, threshold 1/3: a keeps 0.4 (1), 0.45 (0), 0.5 (0); b keeps 0.6, 0.55, 0.5
    events = [
        ("a", {"a": 0.4, "b": 0.6}, 1.0),
        ("b", {"a": 0.45, "b": 0.55}, 1.0),
        ("c", {"a": 0.5, "b": 0.5}, 1.0),
    ]
    assert _close(m.get(), R.tece(events, 1))
    assert m.classes == ("a", "b", "c")
    assert _close(m.get(), (abs(1 - 1.35) / 3 + abs(1 - 1.65) / 3 + 0.0) / 3)


def test_tece_equal_mass_bins():
    """Ten distinct probabilities in 3 equal-mass bins: 4, 3, 3 events (floor(3 i / 10));
    a tie group is never split."""
    m = TECE(n_bins=3, threshold=0.0)
    ps = [0.05 * (i + 1) for i in range(10)]
    for p in ps:
        m.update("x", {"x": p, "z": 1.0 - p})
    bins = m.bins_by_class["x"]
    assert [b.weight for b in bins] == [4.0, 3.0, 3.0]
    assert [(b.lower, b.upper) for b in bins] == [
        (ps[0], ps[3]),
        (ps[4], ps[6]),
        (ps[7], ps[9]),
    ]
    m = TECE(n_bins=2, threshold=0.0)
    for p in [0.1, 0.3, 0.3, 0.3, 0.9]:
        m.update("x", {"x": p, "z": 1.0 - p})
    assert [b.weight for b in m.bins_by_class["x"]] == [4.0, 1.0]


# ---------------------------------------------------------------------- conventions


def test_ties_broken_by_dict_order():
    """The top class is the first key with the largest probability."""
    a = ConfidenceECE(n_bins=2)
    a.update("x", {"x": 0.5, "y": 0.5})
    b = ConfidenceECE(n_bins=2)
    b.update("x", {"y": 0.5, "x": 0.5})
    assert a.get() == 0.5 and b.get() == 0.5  # |1 - 0.5| and |0 - 0.5|
    assert a.bins[0].mean_outcome == 1.0 and b.bins[0].mean_outcome == 0.0
    t = TopLabelECE()
    t.update("x", {"y": 0.4, "x": 0.4, "z": 0.2})
    assert list(t.bins_by_class) == ["y"]


def test_missing_class_has_probability_zero_and_never_predicted_class_counts():
    m = ClasswiseECE(n_bins=2)
    m.update("c", {"a": 0.75, "b": 0.25})
    # classes a, b, c; a: |0 - 0.75|, b: |0 - 0.25|, c (absent, outcome): |1 - 0|
    assert m.classes == ("a", "b", "c")
    assert _close(m.get(), (0.75 + 0.25 + 1.0) / 3)
    assert m.bins_by_class["c"] == (ReliabilityBin(0.0, 0.5, 1.0, 0.0, 1.0),)
    m.update("a", {"a": 1.0})
    # c is absent from the second forecast: bin 0 of c now holds both events
    assert m.bins_by_class["c"] == (ReliabilityBin(0.0, 0.5, 2.0, 0.0, 0.5),)
    assert m.bins_by_class["b"] == (ReliabilityBin(0.0, 0.5, 2.0, 0.125, 0.0),)


def test_zero_weight_changes_nothing():
    for name in METRICS:
        m = _make(name, 5)
        m.update("a", {"a": 0.75, "b": 0.25})
        before = m.to_dict()
        m.update("z", {"q": 1.0}, w=0.0)
        assert m.to_dict() == before
        m.revert("z", {"q": 1.0}, w=0)
        assert m.to_dict() == before


def test_views_are_consistent_with_get():
    events = make_stream(200, 3, 11)
    conf, tl, cw, te = ConfidenceECE(), TopLabelECE(), ClasswiseECE(), TECE(n_bins=4)
    for e in events:
        for m in (conf, tl, cw, te):
            m.update(*e)
    total = sum(w for _, _, w in events)
    assert _close(sum(b.weight for b in conf.bins), total)
    assert _close(
        sum(b.weight * abs(b.mean_outcome - b.mean_prediction) for b in conf.bins)
        / total,
        conf.get(),
    )
    for b in conf.bins:
        assert b.lower <= b.mean_prediction <= b.upper and 0 <= b.mean_outcome <= 1
    assert _close(
        sum(b.weight for bins in tl.bins_by_class.values() for b in bins), total
    )
    gaps = sum(
        b.weight * abs(b.mean_outcome - b.mean_prediction)
        for bins in tl.bins_by_class.values()
        for b in bins
    )
    assert _close(gaps / total, tl.get())
    for c, bins in cw.bins_by_class.items():
        assert _close(sum(b.weight for b in bins), total)
        gap = sum(b.weight * abs(b.mean_outcome - b.mean_prediction) for b in bins)
        assert _close(gap / total, cw.ece_by_class[c])
    for c, bins in te.bins_by_class.items():
        kept = sum(b.weight for b in bins)
        if bins:
            gap = sum(b.weight * abs(b.mean_outcome - b.mean_prediction) for b in bins)
            assert _close(gap / kept, te.ece_by_class[c])
            assert all(b.lower <= b.mean_prediction <= b.upper for b in bins)
    assert _close(sum(te.ece_by_class.values()) / len(te.classes), te.get())


def test_cold_start_and_protocol():
    for name in METRICS:
        m = _make(name, 10)
        assert m.get() == 0.0 and m.n_events == 0
        assert isinstance(m, MulticlassCalibrationMetric) and m._multiclass
        assert not m.bigger_is_better and not m.requires_labels
        assert repr(m) == f"{name}: 0.000000"


def test_works_with_river_classifiers():
    from river import linear_model, multiclass

    from streamcal.calibrators import OnlineIsotonic

    m = ConfidenceECE()
    assert m.works_with(
        multiclass.OneVsRestClassifier(linear_model.LogisticRegression())
    )
    assert not m.works_with(OnlineIsotonic())


def test_river_classifier_in_a_progressive_loop():
    from river import datasets, linear_model, multiclass, preprocessing

    model = preprocessing.StandardScaler() | multiclass.OneVsRestClassifier(
        linear_model.LogisticRegression()
    )
    metrics = [ConfidenceECE(), TopLabelECE(), ClasswiseECE(), TECE()]
    events = []
    for x, y in datasets.ImageSegments().take(150):
        p = model.predict_proba_one(x)
        if p:
            events.append((y, p, 1.0))
            for m in metrics:
                m.update(y, p)
        model.learn_one(x, y)
    for m, oracle in zip(
        metrics, [R.confidence_ece, R.top_label_ece, R.classwise_ece, R.tece]
    ):
        assert _close(m.get(), oracle(events, 10))
        assert 0.0 < m.get() < 1.0


# ---------------------------------------------------------------------- revert, windows


@pytest.mark.parametrize("name", list(METRICS))
@pytest.mark.parametrize("seed", range(3))
def test_revert_in_random_order_returns_to_empty(name, seed):
    events = make_stream(80, 3 + seed, seed)
    m = _make(name, 4)
    for e in events:
        m.update(*e)
    rng = random.Random(seed)
    order = list(range(len(events)))
    rng.shuffle(order)
    held = set(range(len(events)))
    for k, i in enumerate(order):
        m.revert(*events[i])
        m._check()
        held.discard(i)
        if k % 7 == 0 or len(held) < 3:
            assert _close(
                m.get(), _oracle(name, [events[j] for j in sorted(held)], 4)
            ), k
    assert m.to_dict() == _make(name, 4).to_dict()
    assert m.get() == 0.0


@pytest.mark.parametrize("name", list(METRICS))
@pytest.mark.parametrize("window", [1, 7, 40])
def test_rolling_matches_oracle_on_the_tail(name, window):
    events = make_stream(120, 4, window)
    rolling = utils.Rolling(METRICS[name][0], window_size=window, n_bins=5)
    for t, (y, p, w) in enumerate(events, 1):
        rolling.update(y, p, w)
        rolling.obj._check()
        tail = events[max(0, t - window) : t]
        assert _close(rolling.get(), _oracle(name, tail, 5)), t
    # the classes held are those of the window: a class seen only long ago is forgotten
    if name in ("ClasswiseECE", "TECE") and window == 1:
        y, p, w = events[-1]
        assert set(rolling.obj.classes) == ({y, *p} if w > 0 else set())


def test_revert_of_an_event_not_held_raises_and_changes_nothing():
    for name in METRICS:
        m = _make(name, 10)
        m.update("a", {"a": 0.75, "b": 0.25})
        before = m.to_dict()
        for y, p in [
            ("a", {"a": 0.25, "b": 0.75}),
            ("q", {"q": 1.0}),
            ("a", {"a": 0.05, "c": 0.95}),
        ]:
            if name == "ConfidenceECE" and y == "a" and "b" in p:
                continue  # same confidence bin: indistinguishable from the event held
            with pytest.raises(ValueError, match="does not hold"):
                m.revert(y, p)
            assert m.to_dict() == before
        empty = _make(name, 10)
        with pytest.raises(ValueError, match="does not hold"):
            empty.revert("a", {"a": 1.0})
        assert empty.to_dict() == _make(name, 10).to_dict()


@settings(max_examples=40, deadline=None)
@given(
    ops=st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c", 7]),
            st.lists(st.integers(0, 4), min_size=1, max_size=4),
            st.sampled_from([1.0, 0.5, 2.0, 0.0]),
            st.booleans(),
        ),
        max_size=40,
    )
)
def test_random_updates_and_reverts_match_oracle(ops):
    """Random interleavings of updates and reverts of held events, with _check() after
    each mutation, against the oracle on the multiset held."""
    metrics = {name: _make(name, 3) for name in METRICS}
    held = []
    for y, units, w, undo in ops:
        keys = ["a", "b", "c", 7][: len(units)]
        total = sum(units)
        if total == 0:
            p = {keys[0]: 1.0}
        else:
            p = {k: u / total for k, u in zip(keys, units)}
            p[keys[0]] = 1.0 - sum(v for k, v in p.items() if k != keys[0])
        if undo and held:
            event = held.pop(len(held) // 2)
            for m in metrics.values():
                m.revert(*event)
        else:
            event = (y, p, w)
            held.append(event)
            for m in metrics.values():
                m.update(*event)
        for name, m in metrics.items():
            m._check()
            assert _close(m.get(), _oracle(name, held, 3)), name


# ---------------------------------------------------------------------- bad input


BAD = [
    ("a", {"a": 0.5, "b": 0.6}, 1.0, ValueError, "sum 1.1"),
    ("a", {"a": -0.25, "b": 1.25}, 1.0, ValueError, "probability -0.25 for class 'a'"),
    ("a", {"a": float("nan"), "b": 1.0}, 1.0, ValueError, "probability nan"),
    ("a", {"a": 1.0, "b": float("inf")}, 1.0, ValueError, "probability inf"),
    ("a", {"a": True}, 1.0, TypeError, "probability True"),
    ("a", {"a": "1.0"}, 1.0, TypeError, "probability '1.0'"),
    ("a", {}, 1.0, ValueError, "non-empty dict"),
    ("a", 0.7, 1.0, TypeError, "non-empty dict"),
    ("a", [0.3, 0.7], 1.0, TypeError, "non-empty dict"),
    ("a", {float("nan"): 1.0}, 1.0, ValueError, "class label nan is not"),
    (["a"], {"a": 1.0}, 1.0, TypeError, "'y_true' argument"),
    ({"a": 1}, {"a": 1.0}, 1.0, TypeError, "must be a class label: a str"),
    (float("nan"), {"a": 1.0}, 1.0, ValueError, "must be a class label: a str"),
    ("a", {"a": 1.0}, -1.0, ValueError, "'w' argument"),
    ("a", {"a": 1.0}, float("nan"), ValueError, "'w' argument"),
    ("a", {"a": 1.0}, "1", TypeError, "'w' argument"),
]


@pytest.mark.parametrize("name", list(METRICS))
def test_bad_input_raises_and_leaves_state_unchanged(name):
    m = _make(name, 4)
    for e in make_stream(30, 3, 0):
        m.update(*e)
    before = m.to_dict()
    value = m.get()
    for y, p, w, exc, text in BAD:
        for method in ("update", "revert"):
            with pytest.raises(exc, match=None) as info:
                getattr(m, method)(y, p, w)
            message = str(info.value)
            assert text in message, message
            assert f"of {name}.{method} must be" in message
            assert m.to_dict() == before and m.get() == value


def test_probability_vector_validation():
    check = V.check_probability_vector
    p = {"a": 0.25, "b": 0.75}
    assert check(p, "X", "m") is p  # floats: no copy
    q = check({"a": 1, "b": np.float32(0.0)}, "X", "m")
    assert q == {"a": 1.0, "b": 0.0} and all(type(v) is float for v in q.values())
    assert list(check({"b": 0.5, "a": 0.5}, "X", "m")) == ["b", "a"]  # order kept
    assert check({"a": 0.5, "b": 0.5 + 5e-7}, "X", "m")  # within tol
    with pytest.raises(ValueError, match="within 1e-09"):
        check({"a": 0.5, "b": 0.5 + 5e-7}, "X", "m", tol=1e-9)
    with pytest.raises(
        ValueError,
        match=r"^The 'scores' argument of Cal.predict_one must be a non-empty dict",
    ):
        check({"a": 0.5}, "Cal", "predict_one", name="scores")
    assert V.check_class_label(2.5, "X", "m") == 2.5
    assert type(V.check_class_label(np.int64(3), "X", "m")) is int
    for bad in (("t", 1), None, b"x", frozenset({1})):
        with pytest.raises(TypeError, match="must be a class label: a str, an int, a bool or a finite float"):
            V.check_class_label(bad, "X", "m")
    for bad in (float("nan"), float("inf"), np.float64("nan")):
        with pytest.raises(ValueError, match="must be a class label"):
            V.check_class_label(bad, "X", "m")


# ---------------------------------------------------------------------- parameters, snapshots


def test_parameters_are_validated():
    for klass in (ConfidenceECE, TopLabelECE, ClasswiseECE):
        with pytest.raises(
            ValueError,
            match=f"The 'n_bins' parameter of {klass.__name__} must be an int >= 1",
        ):
            klass(n_bins=0)
        with pytest.raises(ValueError, match="n_bins"):
            klass(n_bins=2.5)
        with pytest.raises(
            ValueError,
            match=f"The 'strategy' parameter of {klass.__name__} must be 'uniform'",
        ):
            klass(strategy="quantile")
    with pytest.raises(
        ValueError,
        match=r"The 'threshold' argument of TECE must be a real number in \[0, 1\) or None",
    ):
        TECE(threshold=1.0)
    with pytest.raises(TypeError, match="threshold"):
        TECE(threshold="0.1")


@pytest.mark.parametrize("name", list(METRICS))
def test_snapshots_restore_and_continue_identically(name):
    events = make_stream(90, 4, 3)
    m = _make(name, 6)
    for e in events[:50]:
        m.update(*e)
    d = json.loads(json.dumps(m.to_dict()))
    restored = [
        StreamingMetric.from_dict(d),
        pickle.loads(pickle.dumps(m)),
        copy.deepcopy(m),
    ]
    for r in restored:
        assert type(r) is type(m) and r.get() == m.get()
        assert r.to_dict() == m.to_dict()
    # the float label 2.5 and the bool False survive JSON
    assert type(restored[0]).from_dict(d).to_dict() == m.to_dict()
    for e in events[50:]:
        m.update(*e)
        for r in restored:
            r.update(*e)
    for e in events[10:30]:
        m.revert(*e)
        for r in restored:
            r.revert(*e)
    for r in restored:
        r._check()
        assert r.get() == m.get() and r.to_dict() == m.to_dict()
    clone = m.clone()
    assert clone.get() == 0.0 and clone.to_dict()["params"] == m.to_dict()["params"]
