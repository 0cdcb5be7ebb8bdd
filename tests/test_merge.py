"""``merge``: two objects that learnt two parts of a stream, merged, hold what one object
fed the whole stream holds (issue 15, item 3).

Every calibrator and metric, with each of its ``_unit_test_params()``, either merges
(then it is compared with one object fed the whole stream, on random streams split at
random by time, by key and by score range, with ties, zero, fractional and extreme
weights) or refuses with a TypeError giving its own reason. Counts are compared exactly;
values to 1e-12 relative, and bit for bit where the state keeps exact sums (integer
weights for the isotonic store and the calibeating tables; any weights for
HistogramBinning, ROCAUC and TECE).
"""

from __future__ import annotations

import inspect
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamcal.calibrators
import streamcal.metrics
from streamcal import (
    HistogramBinning,
    OnlineIsotonic,
    OnlinePlatt,
    TrackingCalibeater,
    VennAbers,
)
from streamcal._merge import Mergeable
from streamcal.base import BinaryCalibrator, MulticlassCalibrator
from streamcal.checks._common import concrete_classes
from streamcal.metrics import CORP, ECE, ROCAUC, TECE, ClasswiseECE, MulticlassCalibrationMetric
from streamcal.metrics.base import BinaryCalibrationMetric, StreamingMetric
from tests import references as ref

CALIBRATORS = concrete_classes(streamcal.calibrators, BinaryCalibrator)
MULTICLASS_CALIBRATORS = concrete_classes(streamcal.calibrators, MulticlassCalibrator)
METRICS = concrete_classes(
    streamcal.metrics,
    StreamingMetric,
    exclude={StreamingMetric, BinaryCalibrationMetric, MulticlassCalibrationMetric},
)

# the classes the issue names as mergeable (with parameters that keep the state a sum)
MERGEABLE = {
    "OnlineIsotonic", "VennAbers", "HistogramBinning", "TrackingCalibeater",
    "MultiCalibeater", "Brier", "LogLoss", "ECE", "Sharpness", "ROCAUC", "CORP",
    "MurphyDecomposition", "CalibrationRefinement", "ConfidenceECE", "TopLabelECE",
    "ClasswiseECE", "TECE", "MulticlassBrier", "CrossEntropy", "TopLabel",
}
# the ones the issue names as not mergeable
NOT_MERGEABLE = {  # TopLabel merges when its binary calibrator does
    "OnlinePlatt", "OnlineBeta", "TemperatureScaling", "SCIR", "FIR", "NAFIR",
    "OneVsRestIsotonic", "MulticlassIRP", "HedgingCalibeater", "EpsilonCalibratedForecaster",
}
# classes whose merged state equals the whole stream's bit for bit: with any weights, and
# with integer weights (TECE keeps the same entries per class, but adds the classes up
# in their order of first appearance, which a merge changes)
EXACT_ANY_WEIGHTS = {"HistogramBinning", "ROCAUC"}
EXACT_INTEGER_WEIGHTS = EXACT_ANY_WEIGHTS | {
    "TopLabel", "OnlineIsotonic", "VennAbers", "TrackingCalibeater", "MultiCalibeater",
}

CLASSES = ["a", "b", "c", 3]


def _cases():
    for klass in CALIBRATORS + MULTICLASS_CALIBRATORS + METRICS:
        for params in klass._unit_test_params():
            args = ", ".join(f"{k}={v!r}" for k, v in params.items())
            yield pytest.param(klass, params, id=f"{klass.__name__}({args})")


CASES = list(_cases())
MERGING = [c for c in CASES if c.values[0](**c.values[1])._merge_refusal is None]
REFUSING = [c for c in CASES if c not in MERGING]


# ---------------------------------------------------------------------- streams


def _weights(rng, n, kind):
    if kind == "unit":
        return np.ones(n)
    if kind == "int":
        return rng.integers(0, 4, n).astype(float)  # zeros included
    if kind == "float":
        w = rng.lognormal(0.0, 1.0, n)
        w[rng.random(n) < 0.1] = 0.0
        return w
    if kind == "extreme":
        return 10.0 ** rng.choice([-200.0, -5.0, 0.0, 5.0, 200.0], n)
    raise AssertionError(kind)


def _stream(kind_of_obj, rng, n, weights, taxonomy=None):
    """Events ``(x, y, w)`` for an object of the given kind, with many tied scores (a
    path metric's over its ``taxonomy``)."""
    if kind_of_obj == "path":
        from streamcal.checks.metrics import yield_path_events

        events = yield_path_events(taxonomy, n, seed=int(rng.integers(2**31)))
        w = _weights(rng, n, weights)
        return [(p, y, float(wi)) for (y, p, _), wi in zip(events, w)], np.array(
            [next(iter(p.values())) for _, p, _ in events]
        )
    s = rng.random(n)
    ties = rng.random(n) < 0.5
    s[ties] = np.round(s[ties] * 20) / 20  # ties on a coarse grid, 0 and 1 included
    y = (rng.random(n) < s).astype(int)
    w = _weights(rng, n, weights)
    if kind_of_obj == "experts":
        s2 = np.clip(s + rng.normal(0, 0.2, n), 0.0, 1.0)
        return [((a, b), int(c), float(d)) for a, b, c, d in zip(s, s2, y, w)], s
    if kind_of_obj == "multiclass":
        events = []
        for i in range(n):
            k = int(rng.integers(2, len(CLASSES) + 1))
            classes = [CLASSES[j] for j in rng.permutation(len(CLASSES))[:k]]
            p = rng.dirichlet(np.ones(k))
            if rng.random() < 0.3:
                p = np.round(p * 4) / 4
                p = p / p.sum()
            probs = dict(zip(classes, p.tolist()))
            label = classes[int(rng.integers(k))] if rng.random() < 0.9 else CLASSES[0]
            events.append((probs, label, float(w[i])))
        return events, np.array([max(e[0].values()) for e in events])
    return [(float(a), int(b), float(c)) for a, b, c in zip(s, y, w)], s


def _kind(obj) -> str:
    if isinstance(obj, StreamingMetric):
        if getattr(obj, "_path", False):
            return "path"
        return "multiclass" if getattr(obj, "_multiclass", False) else "binary"
    if isinstance(obj, MulticlassCalibrator):
        return "multiclass"
    if type(obj).__name__ == "MultiCalibeater":
        return "experts"
    return "binary"


def _split(rng, keys, how):
    """A boolean mask: True for the events of part ``a``."""
    n = len(keys)
    if how == "time":
        return np.arange(n) < rng.integers(0, n + 1)
    if how == "key":
        return rng.integers(0, 7, n) < rng.integers(1, 7)  # hash-partitioned keys
    if how == "score":
        return keys < rng.choice([0.25, 0.5, 0.5 + 1e-9, 0.75])
    raise AssertionError(how)


def _feed(obj, events):
    if isinstance(obj, StreamingMetric):
        for x, y, w in events:
            obj.update(y, x, w)
    else:
        for x, y, w in events:
            obj.learn_one(x, y, w)


def _probe(obj, kind):
    """What an object says, as a flat dict of numbers: predictions at many inputs (or
    the metric's value and parts), and its event count."""
    out = {}
    if isinstance(obj, StreamingMetric):
        out["get"] = obj.get()
        out["n_events"] = obj.n_events
        for name, _ in obj.component_directions:
            out[name] = getattr(obj, name)
        for name in ("calibration", "refinement", "mcb", "dsc", "unc"):
            if hasattr(obj, name):
                out[name] = getattr(obj, name)
        for name in ("ece_by_class",):
            if hasattr(obj, name):
                for c, v in getattr(obj, name).items():
                    out[f"{name}[{c!r}]"] = v
        for i, b in enumerate(getattr(obj, "bins", ()) or ()):
            for field, v in zip(b._fields, b):
                out[f"bins[{i}].{field}"] = v
        return out
    out["n_events"] = obj.n_events if hasattr(obj, "n_events") else None
    if kind == "multiclass":
        out["classes"] = sorted(map(repr, obj.classes))
        events, _ = _stream("multiclass", np.random.default_rng(99), 60, "unit")
        for i, (scores, _, _) in enumerate(events):
            for c, v in obj.predict_one(scores).items():
                out[(i, repr(c))] = v
        return out
    grid = np.linspace(0.0, 1.0, 41).tolist() + [0.123456, 0.5 + 1e-12, 0.95]
    if kind == "experts":
        for a in grid[::4]:
            for b in grid[::8]:
                out[(a, b)] = obj.predict_one((a, b))
    else:
        for s in grid:
            out[s] = obj.predict_one(s)
        if hasattr(obj, "predict_interval_one"):
            for s in grid[::3]:
                p0, p1 = obj.predict_interval_one(s)
                out[("p0", s)], out[("p1", s)] = p0, p1
    return out


def _assert_same(merged, whole, exact: bool, context):
    pm, pw = _probe(merged, _kind(merged)), _probe(whole, _kind(whole))
    assert pm.keys() == pw.keys(), context
    for key in pw:
        a, b = pm[key], pw[key]
        if exact or isinstance(b, (int, list)) or b is None:
            assert a == b, (context, key, a, b)
        else:
            assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-13), (context, key, a, b)


def _snapshot(obj) -> str:
    return json.dumps(obj.to_dict(), sort_keys=True, default=repr)


def _check_merge(klass, params, seed, weights, how, n=240, parts=2):
    """Split a random stream, learn each part, merge, compare with the whole; also
    check that the parts are unchanged and that the merged object goes on learning as
    the whole does."""
    rng = np.random.default_rng(seed)
    whole = klass(**params)
    kind = _kind(whole)
    tax = getattr(whole, "taxonomy", None)
    events, keys = _stream(kind, rng, n, weights, tax)
    later, _ = _stream(kind, rng, 40, weights, tax)
    if parts == 2:
        mask = _split(rng, keys, how)
        groups = [[e for e, m in zip(events, mask) if m], [e for e, m in zip(events, mask) if not m]]
    else:
        label = rng.integers(0, parts, n)
        groups = [[e for e, g in zip(events, label) if g == j] for j in range(parts)]
    objs = [klass(**params) for _ in groups]
    for obj, part in zip(objs, groups):
        _feed(obj, part)
    before = [_snapshot(o) for o in objs]
    merged = objs[0]
    for obj in objs[1:]:
        merged = merged.merge(obj)
    assert [_snapshot(o) for o in objs] == before, "merge changed an input"
    assert merged is not objs[0] and type(merged) is klass
    _feed(whole, events)
    name = klass.__name__
    exact = name in EXACT_ANY_WEIGHTS or (
        name in EXACT_INTEGER_WEIGHTS and weights in ("unit", "int")
    )
    context = (name, params, seed, weights, how)
    _assert_same(merged, whole, exact, context)
    if hasattr(merged, "_check"):
        merged._check()
    # the merged object is a working object: it learns on exactly as the whole does, and
    # snapshots and pickles like any other
    _feed(merged, later)
    _feed(whole, later)
    _assert_same(merged, whole, exact, context + ("after more events",))
    restored = type(merged).from_dict(json.loads(json.dumps(merged.to_dict())))
    _assert_same(restored, merged, True, context + ("restored",))


# ---------------------------------------------------------------------- every class


def test_the_issue_s_classes_are_all_covered():
    names = {k.__name__ for k in CALIBRATORS + MULTICLASS_CALIBRATORS + METRICS}
    assert MERGEABLE <= names and NOT_MERGEABLE <= names
    for klass in CALIBRATORS + MULTICLASS_CALIBRATORS + METRICS:
        assert issubclass(klass, Mergeable)
        params = list(klass._unit_test_params())
        mergeable = [klass(**p)._merge_refusal is None for p in params]
        if klass.__name__ in NOT_MERGEABLE:
            assert not any(mergeable), klass
        if klass.__name__ in MERGEABLE:
            assert any(mergeable), klass


@pytest.mark.parametrize("klass, params", MERGING)
def test_merge_equals_one_object_fed_the_whole_stream(klass, params):
    for seed, weights, how in [
        (0, "unit", "time"),
        (1, "int", "key"),
        (2, "float", "score"),
        (3, "unit", "score"),
        (4, "int", "time"),
        (5, "float", "key"),
    ]:
        _check_merge(klass, params, seed, weights, how)


@pytest.mark.parametrize("klass, params", REFUSING)
def test_refusals_say_why(klass, params):
    a, b = klass(**params), klass(**params)
    reason = a._merge_refusal
    # each class gives its own reason, not the generic default
    assert reason != Mergeable._merge_refusal
    with pytest.raises(TypeError) as info:
        a.merge(b)
    assert str(info.value) == f"{klass.__name__} cannot be merged exactly: {reason}."


@pytest.mark.parametrize(
    "klass, params, what",
    [
        (OnlineIsotonic, {"window_size": 10}, "window_size"),
        (OnlineIsotonic, {"half_life": 5.0}, "half_life"),
        (VennAbers, {"window_size": 10}, "window_size"),
        (VennAbers, {"half_life": 5.0}, "half_life"),
        (ECE, {"window_size": 10}, "window_size"),
        (ECE, {"strategy": "quantile", "half_life": 5.0}, "half_life"),
        (HistogramBinning, {"window_size": 10}, "window_size"),
        (HistogramBinning, {"strategy": "quantile", "window_size": 10}, "window_size"),
    ],
)
def test_window_and_forgetting_refusals_come_from_the_one_helper(klass, params, what):
    """The refusal of a window or a forgetting clock is ``ORDER_REFUSAL`` naming the
    parameter set, written once (``_merge.order_refusal``), for every class that forgets."""
    from streamcal import _merge

    obj = klass(**params)
    assert obj._merge_refusal == _merge.ORDER_REFUSAL.format(what=what)
    assert _merge.order_refusal(obj, "window_size", "half_life") == obj._merge_refusal
    assert _merge.order_refusal(klass(), "window_size") is None


@pytest.mark.parametrize(
    "klass, params",
    [
        (OnlineIsotonic, {}),
        (OnlineIsotonic, {"resolution": 0.05, "interpolation": "linear"}),
        (VennAbers, {}),
        (HistogramBinning, {"n_bins": 7}),
        (TrackingCalibeater, {"n_bins": 5, "prior_weight": 0.5}),
        (ROCAUC, {}),
        (ECE, {"n_bins": 6, "strategy": "quantile"}),
        (CORP, {"score": "log"}),
        (ClasswiseECE, {"n_bins": 4}),
        (TECE, {"n_bins": 3}),
    ],
)
@pytest.mark.parametrize("weights", ["unit", "int", "float", "extreme"])
@pytest.mark.parametrize("how", ["time", "key", "score"])
def test_merge_with_every_kind_of_split_and_weight(klass, params, weights, how):
    if weights == "extreme" and klass in (CORP,):
        # CORP's log score fails on such weights without any merge (a block mean of
        # 1e-200 / 2e200 is 0.0, then log(0)): left to a fix of CORP
        pytest.skip("CORP(score='log') cannot hold weights 1e-200 next to 1e200")
    for seed in range(3):
        _check_merge(klass, params, 100 + seed, weights, how)


@pytest.mark.parametrize("klass, params", [
    (OnlineIsotonic, {}), (HistogramBinning, {}), (ECE, {}), (ROCAUC, {}), (TECE, {}),
    (CORP, {}), (TrackingCalibeater, {}),
])
def test_merge_of_many_parts(klass, params):
    for seed in range(3):
        _check_merge(klass, params, 200 + seed, "int", "key", parts=5)


# ---------------------------------------------------------------------- edge cases


@pytest.mark.parametrize("klass, params", MERGING)
def test_merge_with_empty_objects(klass, params):
    a, b = klass(**params), klass(**params)
    whole = klass(**params)
    events, _ = _stream(_kind(a), np.random.default_rng(7), 30, "unit", getattr(a, "taxonomy", None))
    _feed(a, events)
    _feed(whole, events)
    for merged in (a.merge(b), b.merge(a)):
        _assert_same(merged, whole, True, (klass, params))
    empty = b.merge(klass(**params))
    _assert_same(empty, klass(**params), True, (klass, params, "empty"))


def test_isotonic_merge_matches_the_batch_oracle():
    rng = np.random.default_rng(11)
    events, keys = _stream("binary", rng, 500, "float")
    mask = _split(rng, keys, "key")
    a, b = OnlineIsotonic(), OnlineIsotonic()
    _feed(a, [e for e, m in zip(events, mask) if m])
    _feed(b, [e for e, m in zip(events, mask) if not m])
    merged = a.merge(b)
    s, y, w = zip(*events)
    fit = ref.isotonic_fit(s, y, w)
    for x in np.linspace(0, 1, 201).tolist():
        assert merged.predict_one(x) == pytest.approx(ref.predict_step(fit, x), rel=1e-12, abs=1e-15)
    expected = ref.isotonic_blocks(s, y, w)
    assert len(merged.blocks) == len(expected)
    for got, want in zip(merged.blocks, expected):
        assert tuple(got) == pytest.approx(want, rel=1e-12)


def test_merge_takes_zero_weight_events_into_the_counts_only():
    a, b, whole = OnlineIsotonic(), OnlineIsotonic(), OnlineIsotonic()
    a.learn_many([0.2, 0.7], [0, 1], [1.0, 0.0])
    b.learn_many([0.7, 0.9], [0, 1], [0.0, 0.0])
    whole.learn_many([0.2, 0.7, 0.7, 0.9], [0, 1, 0, 1], [1.0, 0.0, 0.0, 0.0])
    merged = a.merge(b)
    assert merged.n_events == 4 and merged.blocks == whole.blocks
    assert merged.predict_one(0.8) == whole.predict_one(0.8) == 0.0


def test_histogram_merge_takes_the_finer_weight_unit():
    a, b, whole = HistogramBinning(n_bins=2), HistogramBinning(n_bins=2), HistogramBinning(n_bins=2)
    a.learn_many([0.1, 0.6], [1, 0], [0.75, 3.0])          # units of 2**-2
    b.learn_many([0.2, 0.9], [0, 1], [2.0**-40, 1e300])     # 2**-40, and a huge weight
    whole.learn_many([0.1, 0.6, 0.2, 0.9], [1, 0, 0, 1], [0.75, 3.0, 2.0**-40, 1e300])
    merged = a.merge(b)
    assert merged.to_dict() == whole.to_dict()
    merged._check()


def test_rocauc_merge_with_weights_at_both_ends_of_the_range():
    a, b, whole = ROCAUC(), ROCAUC(), ROCAUC()
    events = [(1, 0.3, 1e-300), (0, 0.3, 1.0), (0, 0.8, 1e250), (1, 0.9, 1e-320), (1, 0.3, 7.0)]
    for i, (y, p, w) in enumerate(events):
        (a if i % 2 else b).update(y, p, w)
        whole.update(y, p, w)
    merged = b.merge(a)
    assert merged.get() == whole.get()
    assert merged._u == whole._u
    merged._check()


def test_merge_of_an_overflowing_total_is_refused():
    a, b = OnlineIsotonic(), OnlineIsotonic()
    a.learn_one(0.3, 1, 1e308)
    b.learn_one(0.6, 0, 1e308)
    before = _snapshot(a), _snapshot(b)
    with pytest.raises(ValueError, match="total weight of the two OnlineIsotonic"):
        a.merge(b)
    assert (_snapshot(a), _snapshot(b)) == before


# ---------------------------------------------------------------------- refusals and errors


@pytest.mark.parametrize(
    "a, b, name",
    [
        (OnlineIsotonic(resolution=0.1), OnlineIsotonic(resolution=0.05), "resolution"),
        (OnlineIsotonic(), OnlineIsotonic(interpolation="linear"), "interpolation"),
        (HistogramBinning(n_bins=5), HistogramBinning(n_bins=6), "n_bins"),
        (HistogramBinning(prior_strength=1.0), HistogramBinning(prior_strength=2.0), "prior_strength"),
        (TrackingCalibeater(prior_weight=1.0), TrackingCalibeater(prior_weight=0.0), "prior_weight"),
        (ECE(n_bins=5), ECE(n_bins=10), "n_bins"),
        (ECE(), ECE(strategy="quantile"), "strategy"),
        (CORP(score="brier"), CORP(score="log"), "score"),
        (ClasswiseECE(n_bins=3), ClasswiseECE(n_bins=4), "n_bins"),
        (TECE(threshold=None), TECE(threshold=0.1), "threshold"),
    ],
)
def test_different_parameters_are_named(a, b, name):
    with pytest.raises(ValueError, match=rf"^The '{name}' parameter of the two {type(a).__name__} objects to merge must be equal\. Got "):
        a.merge(b)


@pytest.mark.parametrize("other", [VennAbers(), None, 0.5, ECE()])
def test_other_must_be_of_the_same_class(other):
    with pytest.raises(TypeError, match=r"^The 'other' argument of OnlineIsotonic.merge must be a OnlineIsotonic\. Got "):
        OnlineIsotonic().merge(other)


@pytest.mark.parametrize(
    "obj, fragment",
    [
        (OnlineIsotonic(window_size=10), "with window_size, the state depends on how the two streams interleave"),
        (VennAbers(half_life=5.0), "with half_life"),
        (HistogramBinning(strategy="quantile"), "order statistics"),
        (HistogramBinning(window_size=5), "with window_size"),
        (ECE(half_life=3.0), "with half_life"),
        (TrackingCalibeater(base=OnlineIsotonic()), "binned by the base's forecast"),
        (OnlinePlatt(), "online Newton steps"),
    ],
)
def test_order_dependent_states_are_refused(obj, fragment):
    with pytest.raises(TypeError, match=f"^{type(obj).__name__} cannot be merged exactly: .*{fragment}"):
        obj.merge(obj.clone())


def test_a_class_that_merges_says_so_in_its_merge_docstring():
    for klass in CALIBRATORS + MULTICLASS_CALIBRATORS + METRICS:
        if "_merge" in {n for k in klass.__mro__ if k is not Mergeable for n in vars(k)}:
            doc = inspect.getdoc(klass._merge)
            assert doc and ("O(" in doc), f"{klass.__name__}._merge states no cost"


# ---------------------------------------------------------------------- property-based


_GRID = [0.0, 0.1, 0.25, 0.5, 0.5000000001, 0.75, 0.9, 1.0]
_event = st.tuples(
    st.one_of(st.sampled_from(_GRID), st.floats(0.0, 1.0)),
    st.booleans(),
    st.one_of(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]), st.floats(1e-3, 1e3)),
)


@pytest.mark.parametrize(
    "klass, params",
    [
        (OnlineIsotonic, {}),
        (OnlineIsotonic, {"resolution": 0.1, "interpolation": "linear"}),
        (VennAbers, {"resolution": 0.25}),
        (HistogramBinning, {"n_bins": 4, "prior_strength": 1.0}),
        (TrackingCalibeater, {"n_bins": 3}),
        (ECE, {"n_bins": 3, "strategy": "quantile"}),
        (ROCAUC, {}),
        (CORP, {}),
        (streamcal.metrics.CalibrationRefinement, {}),
        (streamcal.metrics.MurphyDecomposition, {"n_bins": 4}),
    ],
)
@settings(max_examples=40, deadline=None)
@given(events=st.lists(_event, max_size=60), data=st.data())
def test_merge_property(klass, params, events, data):
    mask = data.draw(st.lists(st.booleans(), min_size=len(events), max_size=len(events)))
    a, b, whole = klass(**params), klass(**params), klass(**params)
    _feed(a, [e for e, m in zip(events, mask) if m])
    _feed(b, [e for e, m in zip(events, mask) if not m])
    _feed(whole, events)
    merged = a.merge(b)
    exact = klass.__name__ in EXACT_ANY_WEIGHTS
    _assert_same(merged, whole, exact, (klass, params))
    if hasattr(merged, "_check"):
        merged._check()


def test_plus_on_metrics_is_rivers_collection_not_a_merge():
    # as on river's metrics, `+` builds a collection (Accuracy() + F1()); merge is a
    # method: a + b holds both metrics as they were, a.merge(b) one metric of all events
    from river.metrics.base import Metrics

    from streamcal.metrics import Brier

    a, b = Brier(), Brier()
    a.update(1, 0.9)
    b.update(0, 0.5)
    both = a + b
    assert isinstance(both, Metrics) and list(both) == [a, b]
    assert both.get() == [a.get(), b.get()] == [pytest.approx(0.01), 0.25]
    assert a.merge(b).get() == pytest.approx((0.01 + 0.25) / 2)
