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
