"""streamcal._json: the one JSON codec (issue 14). Each writer keeps the output it has
always had: snapshot parameters, class labels, replay results (non-finite -> null),
report summaries (null, str keys, str for other objects), river detector states
('inf' / '-inf' text). The expected values below are those formats."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from streamcal import _json as J
from streamcal import _snapshot
from streamcal.monitor import _calibration as monitor_calibration
from streamcal.replay import _result
from streamcal import report

NON_FINITE = [math.nan, math.inf, -math.inf, np.float64("nan"), np.float64("inf")]


@pytest.mark.parametrize(
    "value, expected",
    [
        (np.int64(3), 3),
        (np.int8(-2), -2),
        (np.float64(0.25), 0.25),
        (np.float32(0.5), 0.5),
        (np.bool_(False), False),
        (np.str_("a"), "a"),
        ("a", "a"),
        (None, None),
    ],
    ids=repr,
)
def test_scalar_turns_numpy_scalars_into_python_twins(value, expected):
    out = J.scalar(value)
    assert out == expected and type(out) is type(expected)
    out = J.encode([value, (value,), {"k": value}])
    assert out == [expected, [expected], {"k": expected}]
    assert type(out[0]) is type(expected)


def test_number_null_is_what_replay_results_write():
    assert J.number(1) == 1 and J.number(True) is True and J.number(0.5) == 0.5
    assert J.number(np.float64(0.5)) == 0.5
    for x in NON_FINITE:
        assert J.number(x) is None
    for x in ("1", None, [1], np.int64(3)):  # not a Python number: null, as before
        assert J.number(x) is None
    assert _result._finite is J.number


def test_number_text_is_what_detector_states_write():
    assert J.number(math.inf, "text") == "inf"
    assert J.number(-math.inf, "text") == "-inf"
    assert J.number(np.float64("-inf"), "text") == "-inf"
    assert J.number(-1, "text") == -1 and type(J.number(-1, "text")) is int
    assert J.number(2.5, "text") == 2.5
    with pytest.raises(ValueError):
        J.number(math.nan, "text")
    for v in (-1, 2.5, math.inf, -math.inf):
        back = J.decode_number(json.loads(json.dumps(J.number(v, "text"))))
        assert back == v and type(back) is type(v)
    for bad in ("nan", "Infinity", None, [1], True):
        with pytest.raises(ValueError, match="A number in a state must be an int, a float, 'inf' or '-inf'"):
            J.decode_number(bad, "A number in a state")


def test_monitor_detector_numbers_keep_their_format():
    enc, dec = monitor_calibration._encode_number, monitor_calibration._decode_number
    assert [enc(x) for x in (-1, 0.5, math.inf, -math.inf)] == [-1, 0.5, "inf", "-inf"]
    with pytest.raises(ValueError, match="holds NaN"):
        enc(math.nan)
    assert dec("-inf") == -math.inf
    with pytest.raises(ValueError, match="A number in a detector state must be"):
        dec("NaN")


def test_encode_defaults_keep_non_finite_and_lists_tuples():
    value = {"a": (1, 2.5, math.inf), "b": [math.nan, None, "s"], 3: {"c": ()}}
    out = J.encode(value)
    assert out["a"] == [1, 2.5, math.inf] and math.isnan(out["b"][0])
    assert out["b"][1:] == [None, "s"] and out[3] == {"c": []}
    obj = object()
    assert J.encode(obj) is obj  # other="keep"


def test_encode_tag_is_the_label_form():
    assert J.encode(("a", (1, np.int64(2))), tuples="tag") == {"tuple": ["a", {"tuple": [1, 2]}]}
    assert J.encode([("a",)], tuples="tag") == [{"tuple": ["a"]}]


@pytest.mark.parametrize("x", NON_FINITE, ids=repr)
def test_encode_null_and_text_for_non_finite_floats(x):
    assert J.encode([x], non_finite="null") == [None]
    if math.isnan(x):
        with pytest.raises(ValueError):
            J.encode([x], non_finite="text")
    else:
        assert J.encode([x], non_finite="text") == [repr(float(x))]


def test_encode_refuses_an_unknown_non_finite_option():
    with pytest.raises(ValueError, match="non_finite"):
        J.encode(1.0, non_finite="NaN")


class _Odd:
    def __str__(self):
        return "odd!"


def test_report_json_safe_keeps_its_output():
    doc = {
        1: (np.float64(0.5), math.nan, np.int64(2)),
        "s": [None, True, "x", -math.inf, _Odd()],
        ("t", 1): {"n": np.bool_(True)},
    }
    out = report._json_safe(doc)
    assert out == {
        "1": [0.5, None, 2],
        "s": [None, True, "x", None, "odd!"],
        "('t', 1)": {"n": True},
    }
    assert json.loads(json.dumps(out, allow_nan=False)) == out


def test_snapshot_params_keep_their_output():
    from streamcal import OnlineIsotonic, TrackingCalibeater

    assert _snapshot.encode_param((1, np.float64(0.5), "a")) == [1, 0.5, "a"]
    assert _snapshot.encode_param({"k": (np.int64(1),)}) == {"k": [1]}
    assert _snapshot.encode_param(math.inf) == math.inf  # the snapshot checks refuse it
    base = OnlineIsotonic(resolution=0.01)
    nested = _snapshot.encode_param(base)
    assert nested == {next(iter(nested)): base.to_dict()}
    cal = TrackingCalibeater(base=base)
    back = TrackingCalibeater.from_dict(json.loads(json.dumps(cal.to_dict())))
    assert back.to_dict() == cal.to_dict()
