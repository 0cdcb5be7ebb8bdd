"""The calibrator interface itself: snapshots of parameters given as numpy scalars or
nested calibrators; the checks of predict_reveal_many."""

import json
import re

import numpy as np
import pytest

import streamcal
from streamcal.base import BinaryCalibrator


def _json_roundtrip(cal):
    return BinaryCalibrator.from_dict(json.loads(json.dumps(cal.to_dict())))


def test_numpy_scalar_parameters_are_stored_json_safe():
    cals = [
        streamcal.OnlineIsotonic(window_size=np.int64(3), resolution=np.float64(0.1)),
        streamcal.HistogramBinning(n_bins=np.int32(4), prior_strength=np.float32(0.5)),
    ]
    for cal in cals:
        for s, y in [(0.2, 0), (0.4, 1), (0.9, 1)]:
            cal.learn_one(s, y)
        back = _json_roundtrip(cal)
        assert [back.predict_one(q) for q in (0.1, 0.5, 0.95)] == [cal.predict_one(q) for q in (0.1, 0.5, 0.95)]
        assert all(type(v) in (int, float, str, bool, type(None)) for v in back.to_dict()["params"].values())


def test_nested_calibrator_parameter_travels_with_its_state():
    tops = streamcal.TrackingCalibeater(base=streamcal.OnlinePlatt())
    rng = np.random.default_rng(0)
    for s in rng.random(200).tolist():
        tops.learn_one(s, int(rng.random() < s * s))
    back = _json_roundtrip(tops)
    assert back.base is not tops.base
    assert (back.base.a, back.base.b) == (tops.base.a, tops.base.b)
    assert [back.predict_one(q) for q in (0.1, 0.5, 0.9)] == [tops.predict_one(q) for q in (0.1, 0.5, 0.9)]
    # and the fresh clone of river has a fresh base
    assert tops.clone().base.predict_one(0.3) == 0.3


def test_prior_strength_is_stored_as_the_python_number_it_equals():
    # every constructor with a prior_strength stores it through
    # _validation.check_nonnegative_param: ints and floats as given, numpy numbers as
    # floats (so that to_dict() stays JSON-safe)
    classes = [
        streamcal.OnlineIsotonic,
        streamcal.HistogramBinning,
        streamcal.IRP,
        streamcal.MulticlassIRP,
        streamcal.FIR,
        streamcal.NAFIR,
        streamcal.OneVsRestIsotonic,
    ]
    for cls in classes:
        for given, stored in [(np.float32(0.5), 0.5), (np.int64(3), 3.0), (2, 2), (0.25, 0.25)]:
            value = cls(prior_strength=given).prior_strength
            assert type(value) is type(stored) and value == stored, (cls.__name__, given)


def test_predict_reveal_many_refuses_bad_kinds_and_lengths():
    """``kinds`` must be a sequence (not a set, a dict or a text) of 0, 1 or 2, bools
    and huge integers refused by name and index; its length must be that of the
    scores, labels and weights (said as such, not as a bad label); a bool weight
    array is refused as everywhere else; nothing is learnt."""
    from streamcal import OnlineIsotonic, OnlinePlatt

    for cal in (OnlinePlatt(), OnlineIsotonic()):
        cal.learn_one(0.3, 1)
        before = cal.to_dict()
        for kinds, match in (
            ({0, 1}, "Got {0, 1} instead"),
            ({0: 1}, "Got {0: 1} instead"),
            ("01", "Got '01' instead"),
            ([0, 2**70], "at index 1"),
            ([0, True], "Got True at index 1"),
            (np.array([0, 1], dtype=object), None),
            (np.array([[0, 1]]), "must be a sequence"),
        ):
            if match is None:  # integers in an object array are integers
                assert cal.clone().predict_reveal_many(kinds, [0.2, 0.4], [None, 1]).shape == (1,)
                continue
            with pytest.raises(ValueError, match=re.escape(match) if "{" in match else match) as info:
                cal.predict_reveal_many(kinds, [0.2, 0.4], [0, 1])
            assert "'kinds'" in str(info.value)
        with pytest.raises(ValueError, match="'scores' has 3. Got 2 elements"):
            cal.predict_reveal_many([0, 1], [0.2, 0.3, 0.4], [None, 1, 1])
        with pytest.raises(ValueError, match="'w' has 2. Got 3 elements"):
            cal.predict_reveal_many([0, 1, 1], [0.2, 0.3, 0.4], [None, 1, 1], [1.0, 1.0])
        with pytest.raises(TypeError, match="'w' argument"):
            cal.predict_reveal_many([1, 1], [0.2, 0.3], [0, 1], np.array([True, True]))
        assert cal.to_dict() == before


def test_predict_reveal_many_takes_kinds_as_a_pandas_series():
    """``kinds`` may be a pandas Series or extension array, as the scores and labels
    may (regression: an int64 Series of valid kinds was refused as "not a sequence of
    0, 1 or 2"); its values decide, not its index."""
    pd = pytest.importorskip("pandas")
    from streamcal import OnlineIsotonic, OnlinePlatt

    for cal in (OnlinePlatt(), OnlineIsotonic()):
        scores, labels = [0.2, 0.2, 0.5, 0.7], [0, 1, 1, 0]
        want = cal.clone().predict_reveal_many([0, 1, 2, 2], scores, labels)
        for kinds in (pd.Series([0, 1, 2, 2], index=[9, 3, 5, 1]), pd.array([0, 1, 2, 2])):
            got = cal.clone().predict_reveal_many(kinds, pd.Series(scores), pd.Series(labels))
            assert got.tolist() == want.tolist()
        empty = pd.Series([], dtype="int64")
        assert cal.clone().predict_reveal_many(empty, empty, empty).shape == (0,)
        with pytest.raises(ValueError, match="'kinds' argument .* Got 3 at index 1"):
            cal.predict_reveal_many(pd.Series([0, 3]), scores[:2], labels[:2])


def test_predict_reveal_many_window_overflow_counts_only_the_learnt_events():
    """A full window's sums: the predictions take no window slot, so they push no held
    weight out of the dry run of the overflow rule (regression: a weight the loop
    refuses was accepted, leaving NaN block values, or refused halfway with a prior,
    one event learnt)."""
    from streamcal import OnlineIsotonic, VennAbers

    cases = [
        (OnlineIsotonic(window_size=2), [0, 0, 1], [0.3, 0.4, 0.6], [None, None, 1], [None, None, 1e308], 2),
        (VennAbers(window_size=2), [0, 0, 1], [0.3, 0.4, 0.6], [None, None, 1], [None, None, 1e308], 2),
        (OnlineIsotonic(window_size=2, resolution=0.05), [0, 0, 1], [0.3, 0.4, 0.6], [None, None, 1],
         [None, None, 1e308], 2),
        (OnlineIsotonic(window_size=3, prior_strength=1.0), [0, 1, 0, 1], [0.3, 0.2, 0.4, 0.6],
         [None, 0, None, 1], [None, 1.0, None, 1e308], 3),
    ]
    for cal, kinds, scores, labels, w, index in cases:
        cal.learn_one(0.5, 1, 1e308)
        loop = cal.clone()
        loop.learn_one(0.5, 1, 1e308)
        with pytest.raises(ValueError, match="'w' argument"):  # the loop refuses it too
            for k, s, y, wi in zip(kinds, scores, labels, w):
                if k != 0:
                    loop.learn_one(s, y, wi)
        before = cal.to_dict()
        with pytest.raises(ValueError, match=f"predict_reveal_many .* at index {index}"):
            cal.predict_reveal_many(kinds, scores, labels, w)
        assert cal.to_dict() == before
        cal._check()
        # a weight that fits: the same predictions and state as the loop
        light = [None if x is None else 1.0 for x in w]
        copy = BinaryCalibrator.from_dict(cal.to_dict())
        got = cal.predict_reveal_many(kinds, scores, labels, light)
        want = []
        for k, s, y, wi in zip(kinds, scores, labels, light):
            if k != 1:
                want.append(copy.predict_one(s))
            if k != 0:
                copy.learn_one(s, y, wi)
        assert got.tolist() == want and cal.to_dict() == copy.to_dict()
        cal._check()


def test_predict_reveal_many_unused_labels_and_weights_take_any_form():
    """A prediction's label and weight are unused whatever the container (object or
    text arrays included); labels or weights that are not one value per operation are
    refused by name, not with a bare TypeError."""
    from streamcal import OnlineIsotonic, OnlinePlatt

    for cal in (OnlinePlatt(), OnlineIsotonic()):
        expected = cal.clone().predict_reveal_many([0, 1], [0.3, 0.4], [0, 1])
        for labels, w in (
            (np.array([None, 1], dtype=object), None),
            ([0, 1], np.array([None, 1.0], dtype=object)),
            (np.array(["pending", True], dtype=object), None),
            ((None, 1), (float("nan"), 1.0)),
        ):
            got = cal.clone().predict_reveal_many([0, 1], [0.3, 0.4], labels, w)
            assert got.tolist() == expected.tolist()
        before = cal.to_dict()
        with pytest.raises(TypeError, match="'labels' argument .* at index 1"):
            cal.predict_reveal_many([0, 1], [0.3, 0.4], np.array(["pending", "1"]))
        for labels, w, name in ((None, None, "labels"), ([0, 1], 5, "w"), ({0, 1}, None, "labels")):
            with pytest.raises(ValueError, match=f"'{name}' argument .* one-dimensional sequence"):
                cal.predict_reveal_many([1, 1], [0.1, 0.2], labels, w)
        assert cal.to_dict() == before
