"""PathCalibrator (issue 17 item 2) against the batch procedure of Gupta's thesis,
section 4.3.2 (``tests/references_path.py``), at many prefixes and seeds, with ties,
fractional and zero weights, inner-node labels and windows; path monotonicity as an
invariant (``_check()`` after every event); the leaf as top-label histogram binning;
snapshots, merge, bad input and the synthetic stream of ``streamcal.datasets``."""

import json
import pickle

import numpy as np
import pytest

from streamcal import HistogramBinning, TopLabel
from streamcal.calibrators import PathCalibrator
from streamcal.datasets import hierarchical_stream
from streamcal.metrics import PathECE
from tests import references_path as R

#: depth 1 to 3, an inner node ("b") with a single child, int nodes
INT_TAX = {0: None, 1: 0, 2: 0, 3: 1, 4: 1, 5: 2, 6: 3, 7: 3, 8: 6, 9: 6}
STR_TAX = {"root": None, "a": "root", "b": "a", "c": "b", "d": "a", "e": "root"}


def _stream(tax: dict, n: int, seed: int, weights=True, grid=20):
    """Events ``(leaf_scores, label, w)``: scores on a grid of ``1 / grid`` (ties, top
    ties broken by the dict order), some leaves left out, labels drawn near the
    predicted path or anywhere (inner nodes too); weights 1, 0.5, 0.25, 3, 0.1, 0."""
    rng = np.random.default_rng(seed)
    leaves = [c for c in tax if c not in set(tax.values())]
    nodes = [c for c, p in tax.items() if p is not None]
    out = []
    for _ in range(n):
        k = int(rng.integers(1, len(leaves) + 1))
        chosen = list(rng.permutation(len(leaves))[:k])
        cuts = np.sort(rng.integers(0, grid + 1, k - 1))
        parts = np.diff(np.concatenate([[0], cuts, [grid]]))
        scores = {leaves[i]: float(v) / grid for i, v in zip(chosen, parts)}
        scores = {c: v for c, v in scores.items() if v > 0.0} or {leaves[chosen[0]]: 1.0}
        top = R.predicted_leaf(scores)
        pool = R.ancestors(tax, top) if rng.random() < 0.6 else nodes
        y = pool[int(rng.integers(len(pool)))]
        w = float(rng.choice([1.0, 1.0, 0.5, 0.25, 3.0, 0.1, 0.0])) if weights else 1.0
        out.append((scores, y, w))
    return out


def _probes(tax, seed):
    return [s for s, _, _ in _stream(tax, 12, seed + 1000, grid=40)]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(
    "tax, params",
    [
        (INT_TAX, {"n_bins": 4, "prior_strength": 0}),
        (INT_TAX, {"n_bins": 10}),
        (INT_TAX, {"n_bins": 1, "prior_strength": 0.5}),
        (STR_TAX, {"n_bins": 3, "window_size": 7}),
        (STR_TAX, {"n_bins": 5, "window_size": 1, "prior_strength": 0}),
    ],
)
def test_matches_batch_oracle_at_every_prefix(tax, params, seed):
    events = _stream(tax, 120, seed)
    probes = _probes(tax, seed)
    cal = PathCalibrator(tax, **params)
    oracle = {k: v for k, v in params.items() if k != "strategy"}
    oracle.setdefault("prior_strength", 2.0)
    for t, (s, y, w) in enumerate(events):
        cal.learn_one(s, y, w)
        cal._check()
        if t % 6 == 0 or t == len(events) - 1:
            for p in probes + [s]:
                assert cal.predict_one(p) == R.path_calibrate(tax, events[: t + 1], p, **oracle), (t, p)


@pytest.mark.parametrize("seed", range(4))
def test_quantile_bins_are_the_top_label_bins_and_node_means_match_the_oracle(seed):
    tax = INT_TAX
    events = _stream(tax, 150, seed)
    probes = _probes(tax, seed)
    for window in (None, 25):
        cal = PathCalibrator(tax, n_bins=3, strategy="quantile", window_size=window, prior_strength=1.0)
        top = TopLabel(HistogramBinning(n_bins=3, strategy="quantile", window_size=window, prior_strength=1.0))
        for t, (s, y, w) in enumerate(events):
            cal.learn_one(s, y, w)
            top.learn_one(s, y, w)
            cal._check()
            if t % 10:
                continue
            for p in probes:
                leaf = R.predicted_leaf(p)
                cals = cal.calibrators.get(leaf)
                if cals is None:
                    continue
                # the leaf's bins are top-label histogram binning's bins
                assert cals[-1].edges == top.calibrators[leaf].edges
                want = R.path_calibrate(
                    tax, events[: t + 1], p, 3, 1.0, window, edges=list(cals[0].edges)
                )
                assert cal.predict_one(p) == want, (t, p)


@pytest.mark.parametrize("seed", range(3))
def test_leaf_probability_is_top_label_histogram_binning(seed):
    # "h exactly reduces to the top-label predictor for the leaf classes" (4.3.2)
    tax = STR_TAX
    events = _stream(tax, 200, seed, weights=False)
    cal = PathCalibrator(tax, n_bins=5)
    top = TopLabel(HistogramBinning(n_bins=5))
    for s, y, w in events:
        cal.learn_one(s, y, w)
        top.learn_one(s, y, w)
    for p in _probes(tax, seed):
        leaf = R.predicted_leaf(p)
        out = cal.predict_one(p)
        if leaf in top.calibrators:
            assert out[leaf] == top.calibrators[leaf].predict_one(p[leaf])


@pytest.mark.parametrize("seed", range(5))
def test_every_output_is_path_monotone_and_a_path(seed):
    for params in PathCalibrator._unit_test_params():
        tax = params["taxonomy"]
        cal = PathCalibrator(**params)
        for s, y, w in _stream(tax, 150, seed):
            cal.learn_one(s, y, w)
            for out in (cal.predict_one(s), cal.raw_path(s)):
                assert list(out) == R.path_of(tax, R.predicted_leaf(s))
                vals = list(out.values())
                assert all(0.0 <= v <= 1.0 for v in vals)
                assert vals == sorted(vals, reverse=True), out


def test_check_catches_a_broken_monotonicity():
    cal = PathCalibrator(STR_TAX, n_bins=2)
    for s, y, w in _stream(STR_TAX, 60, 3):
        cal.learn_one(s, y, w)
    leaf, cals = next((k, v) for k, v in cal._cals.items() if len(v) > 1)
    cals[0], cals[-1] = cals[-1], cals[0]  # the leaf's means above its ancestor's
    with pytest.raises(AssertionError, match="monotonicity"):
        cal._check()
    snap = cal.to_dict()
    with pytest.raises(ValueError):
        PathCalibrator.from_dict(snap)


def test_cold_start_is_the_raw_path_and_one_event_is_not_certain():
    cal = PathCalibrator(STR_TAX, n_bins=2)
    s = {"c": 0.6, "d": 0.3, "e": 0.1}
    assert cal.predict_one(s) == {"a": 0.6 + 0.3, "b": 0.6, "c": 0.6} == cal.raw_path(s)
    cal.learn_one(s, "c")
    out = cal.predict_one(s)
    assert all(0.0 < v < 1.0 for v in out.values()), out
    # an empty bin of a known leaf, and a leaf never predicted: the raw path
    low = {"c": 0.4, "d": 0.3, "e": 0.3}
    assert cal.predict_one(low) == R.raw_path(STR_TAX, low)
    other = {"e": 0.7, "c": 0.3}
    assert cal.predict_one(other) == {"e": 0.7}
    # a zero weight teaches nothing
    cal.learn_one(low, "c", 0.0)
    assert cal.predict_one(low) == R.raw_path(STR_TAX, low)


@pytest.mark.parametrize(
    "taxonomy, problem",
    [
        ({"a": None, "b": None, "c": "a"}, "2 roots"),
        ({"a": "b", "b": "a"}, "0 roots"),
        ({"r": None, "a": "b", "b": "a"}, "cycle"),
        ({"r": None, "a": "x"}, "not a node"),
        ({"r": None}, "besides the root"),
        ({"r": None, ("t", 1): "r"}, "not a dict of nodes"),
        ([("r", None), ("a", "r"), ("a", "r")], "given twice"),
        ("abc", "not a dict of nodes"),
        (None, "not a dict of nodes"),
    ],
)
def test_bad_taxonomy_is_refused_naming_the_problem(taxonomy, problem):
    for cls in (PathCalibrator, PathECE):
        with pytest.raises(ValueError, match=f"The 'taxonomy' parameter of {cls.__name__} must be .*{problem}"):
            cls(taxonomy)


def test_pairs_and_dict_taxonomies_are_the_same():
    pairs = list(STR_TAX.items())
    a, b = PathCalibrator(STR_TAX), PathCalibrator(pairs)
    for s, y, w in _stream(STR_TAX, 80, 4):
        a.learn_one(s, y, w)
        b.learn_one(s, y, w)
    assert a._get_state() == b._get_state()
    assert a.taxonomy_leaves == b.taxonomy_leaves == ("c", "d", "e")


@pytest.mark.parametrize(
    "args, argument",
    [
        (({"a": 1.0}, "c"), "leaf_scores"),  # an inner node is not a leaf
        (({"zz": 1.0}, "c"), "leaf_scores"),
        (({"c": 0.5, "d": 0.2}, "c"), "leaf_scores"),  # sum 0.7
        (({"c": float("nan"), "d": 1.0}, "c"), "leaf_scores"),
        ((0.5, "c"), "leaf_scores"),
        (({}, "c"), "leaf_scores"),
        (({"c": 1.0}, "root"), "label"),
        (({"c": 1.0}, "zz"), "label"),
        (({"c": 1.0}, float("nan")), "label"),
        (({"c": 1.0}, ["c"]), "label"),
        (({"c": 1.0}, "c", -1.0), "w"),
        (({"c": 1.0}, "c", float("inf")), "w"),
        (({"c": 1.0}, "c", "1"), "w"),
    ],
)
def test_bad_input_names_the_argument_and_leaves_state_unchanged(args, argument):
    for params in ({"n_bins": 3}, {"n_bins": 2, "strategy": "quantile", "window_size": 5}):
        cal = PathCalibrator(STR_TAX, **params)
        for s, y, w in _stream(STR_TAX, 40, 1):
            cal.learn_one(s, y, w)
        before = pickle.dumps(cal._get_state())
        with pytest.raises((TypeError, ValueError), match=f"The '{argument}' argument of PathCalibrator.learn_one must be"):
            cal.learn_one(*args)
        assert pickle.dumps(cal._get_state()) == before
        if argument == "leaf_scores":
            with pytest.raises((TypeError, ValueError), match="The 'leaf_scores' argument of PathCalibrator.predict_one"):
                cal.predict_one(args[0])
        cal._check()


@pytest.mark.parametrize("tax", [INT_TAX, STR_TAX])
@pytest.mark.parametrize("params", [{}, {"n_bins": 3, "window_size": 9}, {"strategy": "quantile", "n_bins": 4}])
def test_snapshot_and_pickle_round_trip_then_continue_identically(tax, params):
    events = _stream(tax, 160, 11)
    cal = PathCalibrator(tax, **params)
    for s, y, w in events[:100]:
        cal.learn_one(s, y, w)
    text = json.dumps(cal.to_dict(), allow_nan=False)
    restored = [PathCalibrator.from_dict(json.loads(text)), pickle.loads(pickle.dumps(cal))]
    assert restored[0].taxonomy == tax
    for r in restored:
        assert json.dumps(r.to_dict(), allow_nan=False) == text
        assert r._get_state() == cal._get_state()
    for s, y, w in events[100:]:
        outs = [c.predict_one(s) for c in (cal, *restored)]
        assert outs[0] == outs[1] == outs[2]
        for c in (cal, *restored):
            c.learn_one(s, y, w)
    clone = cal.clone()
    assert clone.calibrators == {} and clone.taxonomy == cal.taxonomy
    clone.learn_one(*events[0][:2])
    assert cal.to_dict() != clone.to_dict()


def test_corrupted_snapshots_are_refused():
    cal = PathCalibrator(STR_TAX, n_bins=3)
    for s, y, w in _stream(STR_TAX, 60, 2):
        cal.learn_one(s, y, w)
    good = cal.to_dict()
    bad = []
    d = json.loads(json.dumps(good))
    d["state"]["leaves"][0][0] = "a"  # an inner node
    bad.append(d)
    d = json.loads(json.dumps(good))
    d["state"]["leaves"][0][1] = d["state"]["leaves"][0][1][:-1]  # one binner short
    bad.append(d)
    d = json.loads(json.dumps(good))
    d["state"]["leaves"][0][1][0]["params"]["n_bins"] = 4  # binners of other parameters
    bad.append(d)
    d = json.loads(json.dumps(good))
    d["state"]["leaves"].append(d["state"]["leaves"][0])  # a leaf twice
    bad.append(d)
    d = json.loads(json.dumps(good))
    d["params"]["taxonomy"] = [["r", None], ["x", "y"]]
    bad.append(d)
    for d in bad:
        with pytest.raises(ValueError):
            PathCalibrator.from_dict(d)


def test_merge_is_one_calibrator_fed_both_streams_and_refused_with_a_window():
    events = _stream(INT_TAX, 200, 5)
    a, b, both = PathCalibrator(INT_TAX), PathCalibrator(INT_TAX), PathCalibrator(INT_TAX)
    for s, y, w in events[:120]:
        a.learn_one(s, y, w)
        both.learn_one(s, y, w)
    for s, y, w in events[120:]:
        b.learn_one(s, y, w)
        both.learn_one(s, y, w)
    m = a.merge(b)
    m._check()
    assert {k: [c.to_dict() for c in v] for k, v in m.calibrators.items()} == {
        k: [c.to_dict() for c in v] for k, v in both.calibrators.items()
    }
    for p in _probes(INT_TAX, 5):
        assert m.predict_one(p) == both.predict_one(p)
    for params in ({"window_size": 10}, {"strategy": "quantile"}):
        with pytest.raises(TypeError, match="cannot be merged exactly"):
            PathCalibrator(INT_TAX, **params).merge(PathCalibrator(INT_TAX, **params))


def test_path_ece_of_calibrated_output_falls_towards_zero_on_the_synthetic_stream():
    train = hierarchical_stream(12000, seed=0)
    test = hierarchical_stream(8000, seed=1)
    cal = PathCalibrator(train.taxonomy)
    raw_m, true_m = PathECE(train.taxonomy), PathECE(train.taxonomy)
    for s, y, tp in zip(test.leaf_scores, test.labels, test.true_paths):
        raw_m.update(y, cal.raw_path(s))
        true_m.update(y, tp)
    errors = {}
    done = 0
    for n in (300, 3000, 12000):
        for s, y in zip(train.leaf_scores[done:n], train.labels[done:n]):
            cal.learn_one(s, y)
        done = n
        m = PathECE(train.taxonomy)
        for s, y in zip(test.leaf_scores, test.labels):
            m.update(y, cal.predict_one(s))
        errors[n] = m.get()
    # the raw scores stay miscalibrated; the calibrated ones approach the error of the
    # true probabilities (the test set's own sampling noise)
    assert raw_m.get() > 0.15
    assert errors[300] > errors[3000] > errors[12000]
    assert errors[12000] < 0.03 and errors[12000] < 1.5 * true_m.get() + 0.005


@pytest.mark.parametrize("bad", [{}, {"tuples": [1]}])
def test_snapshot_with_a_dict_in_place_of_a_node_is_refused(bad):
    # a node (a leaf) is a label or {"tuple": [...]}; a dict without "tuple" made
    # decode_label raise KeyError, which PathECE's and PathCalibrator's snapshot checks
    # let through from_dict (only TypeError and ValueError were caught)
    taxonomy = {0: None, 1: 0, 2: 0, 3: 1, 4: 1}
    metric, cal = PathECE(taxonomy), PathCalibrator(taxonomy)
    for y, s in [(3, {3: 0.6, 4: 0.4}), (4, {3: 0.2, 4: 0.3, 2: 0.5})]:
        cal.learn_one(s, y)
        metric.update(y, cal.predict_one(s))
    for obj, key in ((metric, "nodes"), (cal, "leaves")):
        d = json.loads(json.dumps(obj.to_dict()))
        d["state"][key][0][0] = bad
        with pytest.raises(ValueError, match=rf"state\['{key}'\]\[0\]\[0\] of {type(obj).__name__} must be"):
            type(obj).from_dict(d)
