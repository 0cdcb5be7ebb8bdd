"""The compiled paths of ``OnlinePlatt`` and ``OnlineBeta`` (issue 11): the per-event
methods and the batch loops of :class:`streamcal.core.newton.LogisticKernel`.

- the batch paths (``learn_many``, ``predict_many``, ``predict_learn_many``) give the
  floats of the ``learn_one`` / ``predict_one`` loop exactly, on messy streams (edge
  scores, ties, zero, tiny, huge and fractional weights), with and without forgetting,
  and are atomic when a weight is refused;
- bad input raises the messages of :mod:`streamcal._validation` and changes nothing;
- snapshots written by the pure-Python version (literal ones below) keep restoring,
  to the same predictions; pickle round-trips exactly.

The update rule itself is checked against the oracle of ``tests/references_scaling.py``
in ``tests/test_calibrators_scaling.py``.
"""

from __future__ import annotations

import json
import math
import pickle

import numpy as np
import pytest

from streamcal import OnlineBeta, OnlinePlatt, _validation
from streamcal.base import BinaryCalibrator
from streamcal.core.newton import OnlineNewtonLogistic

KINDS = ["platt", "platt_monotone", "abm", "ab", "am"]
QUERIES = [0.0, 5e-324, 1e-300, 2.0**-53, 1e-12, 0.3, 0.5, 0.7, 1 - 1e-12, 1 - 2.0**-53, 1.0]


def make(kind, **kw):
    if kind == "platt":
        return OnlinePlatt(**kw)
    if kind == "platt_monotone":
        return OnlinePlatt(monotone=True, **kw)
    return OnlineBeta(kind, **kw)


def messy_stream(n, seed):
    """Edge scores and ties, labels that turn against the scores half-way (constraints
    bind), weights 0, tiny, fractional and large (the implicit step runs)."""
    rng = np.random.default_rng(seed)
    s = rng.random(n)
    s = np.where(rng.random(n) < 0.05, rng.integers(0, 2, n).astype(float), s)
    s = np.where(rng.random(n) < 0.03, 1e-200, s)
    s = np.where(rng.random(n) < 0.1, np.round(s, 1), s)
    p = np.where(np.arange(n) < n // 2, s, 1.0 - s)
    y = (rng.random(n) < p).astype(int)
    w = rng.choice([1.0, 1.0, 0.5, 2.25, 0.0, 10.0, 1e4, 3e7, 5e-324, 1e-300], n)
    return s, y, w


def loop(cal, s, y, w):
    preds = []
    for a, b, c in zip(s.tolist(), y.tolist(), w.tolist()):
        preds.append(cal.predict_one(a))
        cal.learn_one(a, b, c)
    return preds


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("half_life", [None, 7.0])
@pytest.mark.parametrize("kind", KINDS)
def test_batch_paths_are_the_loop_exactly(kind, half_life, seed):
    s, y, w = messy_stream(700, seed)
    ref = make(kind, half_life=half_life)
    cold = make(kind, half_life=half_life)
    assert cold.predict_many(QUERIES).tolist() == [ref.predict_one(q) for q in QUERIES]
    want = loop(ref, s, y, w)
    batch = make(kind, half_life=half_life)
    got = batch.predict_learn_many(s, y, w)
    assert got.dtype == np.float64 and got.tolist() == want
    learnt = make(kind, half_life=half_life)
    for k in range(0, len(s), 97):  # in uneven pieces: the state carries over
        learnt.learn_many(s[k : k + 97], y[k : k + 97], w[k : k + 97])
    for cal in (batch, learnt):
        assert cal.to_dict() == ref.to_dict()
        cal._check()
    grid = np.concatenate([QUERIES, np.linspace(0.0, 1.0, 1001)])
    assert ref.predict_many(grid).tolist() == [ref.predict_one(q) for q in grid.tolist()]
    # non-contiguous input
    assert ref.predict_many(grid[::3]).tolist() == [ref.predict_one(q) for q in grid[::3]]


@pytest.mark.parametrize("kind", KINDS)
def test_predict_learn_many_on_strided_input_and_default_weights(kind):
    s, y, _ = messy_stream(400, 3)
    ref = make(kind)
    want = loop(ref, s[::2], y[::2], np.ones(200))
    cal = make(kind)
    assert cal.predict_learn_many(s[::2], y[::2]).tolist() == want
    assert cal.to_dict() == ref.to_dict()


@pytest.mark.parametrize("method", ["learn_many", "predict_learn_many"])
@pytest.mark.parametrize("kind", KINDS)
def test_refused_weight_in_a_batch_changes_nothing(kind, method):
    s, y, w = messy_stream(200, 4)
    for half_life in (None, 5.0):
        cal = make(kind, half_life=half_life)
        cal.learn_many(s, y, w)
        snapshot = json.dumps(cal.to_dict())
        preds = [cal.predict_one(q) for q in QUERIES]
        ws = np.ones(50)
        ws[30] = 1e300  # refused after 30 events were learnt
        # the batch method and the index are named (an outside check: "learn_one", no index)
        with pytest.raises(ValueError, match=rf"The 'w' argument of \w+\.{method} .*Got 1e\+300 at index 30 instead"):
            getattr(cal, method)(s[:50], y[:50], ws)
        assert json.dumps(cal.to_dict()) == snapshot
        assert [cal.predict_one(q) for q in QUERIES] == preds
    fresh = make(kind)
    with pytest.raises(ValueError, match="'w'"):
        getattr(fresh, method)([0.2, 0.4], [1, 0], [1.0, 1e300])
    assert not fresh._fitted and fresh.predict_many(QUERIES).tolist() == QUERIES


BAD_EVENTS = [
    ((1.5, 1, 1.0), "check_score", 1.5),
    ((math.nan, 1, 1.0), "check_score", math.nan),
    (("0.3", 1, 1.0), "check_score", "0.3"),
    ((0.3, 2, 1.0), "check_label", 2),
    ((0.3, 0.5, 1.0), "check_label", 0.5),
    ((0.3, 1, -1.0), "check_weight", -1.0),
    ((0.3, 1, math.inf), "check_weight", math.inf),
    ((0.3, 1, None), "check_weight", None),
]


@pytest.mark.parametrize("event, check, value", BAD_EVENTS)
@pytest.mark.parametrize("kind", ["platt", "abm"])
def test_bad_input_gets_the_validation_message_and_changes_nothing(kind, event, check, value):
    cal = make(kind)
    cal.learn_many([0.2, 0.7, 0.9], [0, 1, 1])
    snapshot = json.dumps(cal.to_dict())
    name = type(cal).__name__
    with pytest.raises((ValueError, TypeError)) as want:
        getattr(_validation, check)(value, name, "learn_one")
    with pytest.raises(want.type) as got:
        cal.learn_one(*event)
    assert str(got.value) == str(want.value)
    assert json.dumps(cal.to_dict()) == snapshot
    if check == "check_score":
        with pytest.raises(want.type, match="predict_one"):
            cal.predict_one(event[0])


def test_int_and_bool_inputs_take_the_slow_path_to_the_same_values():
    a, b = OnlineBeta(), OnlineBeta()
    for s, y, w in [(0, True, 1), (1, False, 2), (0.25, 1, 1.0), (1, 0, 0)]:
        a.learn_one(s, y, w)
        b.learn_one(float(s), int(y), float(w))
    assert a.to_dict() == b.to_dict()
    assert a.predict_one(0) == b.predict_one(0.0) and a.predict_one(np.float64(0.4)) == b.predict_one(0.4)


# Written by the pure-Python OnlinePlatt / OnlineBeta (commit 35af34d), with the
# predictions that version gave at 0.3, then 0.0 or 1.0, then 0.95.
OLD_SNAPSHOTS = [
    (
        '{"class": "OnlinePlatt", "format": 1, "params": {"regularization": 1.0, '
        '"half_life": 50.0, "monotone": false}, "state": {"core": [[1.085685859055407, '
        "0.1559530442676143], [0.48578598199057105, -0.024334570315386647, "
        '0.6269654143538793]], "fitted": true}}',
        [(0.3, 0.3177901040411975), (0.0, 1.1827175888105027e-17), (0.95, 0.9661927740036819)],
    ),
    (
        '{"class": "OnlineBeta", "format": 1, "params": {"parameters": "abm", '
        '"regularization": 1.0, "half_life": null}, "state": {"core": '
        "[[0.017716935472848916, 0.7200380163627742, -0.0003211209227574202], "
        "[0.5616687192473715, 0.007910994667094589, 0.21306494192189204, "
        '0.5906305605473144, -0.21431616220812993, 0.7472120647337103]], "fitted": true}}',
        [(0.3, 0.5585224609549355), (1.0, 0.9999999999946423), (0.95, 0.8962105682766571)],
    ),
    (
        '{"class": "OnlineBeta", "format": 1, "params": {"parameters": "am", '
        '"regularization": 1.0, "half_life": null}, "state": {"core": [[1.0, 1.0], '
        '[1.0, 0.0, 1.0]], "fitted": false}}',
        [(0.3, 0.3), (0.0, 0.0), (0.95, 0.95)],
    ),
]


@pytest.mark.parametrize("text, predictions", OLD_SNAPSHOTS)
def test_snapshots_of_the_pure_python_version_restore(text, predictions):
    snapshot = json.loads(text)
    cal = BinaryCalibrator.from_dict(snapshot)
    cal._check()
    # written again in the current format; a format-1 OnlineBeta's "ab" / "am" under
    # betacal's names (issue 13), with the same state
    params = dict(snapshot["params"])
    if "parameters" in params:
        params["parameters"] = {"abm": "abm", "ab": "am", "am": "ab"}[params["parameters"]]
    assert cal.to_dict() == {**snapshot, "format": 2, "params": params}
    for score, want in predictions:
        assert cal.predict_one(score) == want
    assert cal.predict_many([q for q, _ in predictions]).tolist() == [p for _, p in predictions]
    # and it keeps learning as a fresh object fed the same events would from that state
    twin = BinaryCalibrator.from_dict(snapshot)
    cal.learn_one(0.6, 1)
    twin.learn_many([0.6], [1])
    assert cal.to_dict() == twin.to_dict()


@pytest.mark.parametrize("half_life", [None, 9.0])
@pytest.mark.parametrize("kind", KINDS)
def test_pickle_round_trips_exactly(kind, half_life):
    s, y, w = messy_stream(150, 5)
    cal = make(kind, half_life=half_life)
    cal.learn_many(s, y, w)
    copy = pickle.loads(pickle.dumps(cal))
    assert type(copy) is type(cal) and copy.to_dict() == cal.to_dict()
    assert repr(copy) == repr(cal)
    grid = np.linspace(0.0, 1.0, 101)
    assert copy.predict_many(grid).tolist() == cal.predict_many(grid).tolist()
    copy.learn_many(s, y, w)
    cal.learn_many(s, y, w)
    assert copy.to_dict() == cal.to_dict()
    clone = cal.clone()
    assert clone.predict_many(QUERIES).tolist() == QUERIES  # a fresh, independent copy


def test_core_pickles_and_rejects_wrong_feature_count():
    core = OnlineNewtonLogistic((1.0, 1.0, 0.0), 2.0, 0.99, (0, 1))
    core.update3(-0.5, 0.7, 1.0, 1.0, 3.0)
    copy = pickle.loads(pickle.dumps(core))
    assert type(copy) is OnlineNewtonLogistic
    assert copy.to_lists() == core.to_lists() and copy._nonneg == (0, 1)
    copy.update3(0.1, 0.2, 1.0, 0.0, 1.0)
    core.update3(0.1, 0.2, 1.0, 0.0, 1.0)
    assert copy.to_lists() == core.to_lists()
    with pytest.raises(ValueError, match="2 features"):
        core.update2(0.1, 1.0, 1.0, 1.0)
    before = core.to_lists()
    with pytest.raises(OverflowError):
        core.update3(30.0, 30.0, 1.0, 0.0, 1e300)
    assert core.to_lists() == before
