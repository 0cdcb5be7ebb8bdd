"""The calibrator interface itself: snapshots of parameters given as numpy scalars or
nested calibrators."""

import json

import numpy as np

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
