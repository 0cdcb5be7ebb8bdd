"""Checks that every binary calibrator must pass.

Each check takes a *fresh* (unfitted) calibrator, works on clones of it, and raises
AssertionError with a message saying what broke. Streams are generated from a local
numpy Generator: miscalibrated scores with heavy ties, the edge values 0 and 1, and a mix
of unit, fractional and zero weights.

Two optional hooks let a calibrator whose input or cold start differs from the usual
(a float score; the score itself before any data) run through the same checks:

- ``_check_inputs(scores) -> list``: maps a list of float scores (and the bad values of
  the input checks) to the inputs the calibrator takes, one per score; every score the
  checks feed (learning, prediction, batches) goes through it. Example:
  :class:`streamcal.MultiCalibeater`, whose input is a tuple of experts' forecasts.
- ``_cold_start_value(input) -> float``: the documented prediction before any data for
  that input, instead of the score itself. Example:
  :class:`streamcal.EpsilonCalibratedForecaster`, which ignores the score.
"""

from __future__ import annotations

import math

import numpy as np

from streamcal.base import PREDICT, REVEAL, BinaryCalibrator
from streamcal.checks import _common
from streamcal.checks._common import (
    BAD_LABELS,
    BAD_SCORES,
    BAD_WEIGHTS,
    check_docstring_has_example,
)

__all__ = [
    "check_bad_input_leaves_state_unchanged",
    "check_bounded_memory",
    "check_clone_is_independent",
    "check_corrupted_snapshot_rejected",
    "check_cold_start",
    "check_dict_roundtrip",
    "check_docstring_has_example",
    "check_huge_weights",
    "check_learn_many_matches_learn_one",
    "check_input_forms_agree",
    "check_learn_one_returns_none",
    "check_monotone",
    "check_outputs_finite_in_unit_interval",
    "check_pickle_roundtrip",
    "check_predict_learn_many_matches_loop",
    "check_predict_reveal_many_matches_loop",
    "check_predict_many_matches_predict_one",
    "yield_stream",
]

QUERY = np.concatenate([[0.0, 1e-12, 0.5, 1.0 - 1e-12, 1.0], np.linspace(0, 1, 41)])


def yield_stream(
    n: int = 300, seed: int = 0, weights: bool = True, distinct: bool = False
):
    """A miscalibrated stream ``(scores, labels, weights)`` as numpy arrays.

    Scores are rounded to two decimals (heavy ties) unless ``distinct``; about 3% are
    exactly 0 or 1. Labels are Bernoulli(score**2) (an over-confident forecaster).
    Weights mix 1, fractional values and zeros when ``weights`` is true.

    Examples
    --------
    >>> s, y, w = yield_stream(10, seed=1)
    >>> s.shape, set(y.tolist()) <= {0, 1}, bool((w >= 0).all())
    ((10,), True, True)

    """
    rng = np.random.default_rng(seed)
    s = _common.tied_scores(rng, n, distinct)
    y = (rng.random(n) < s**2).astype(int)
    if weights:
        w = rng.choice([1.0, 1.0, 1.0, 0.5, 2.25, 0.0], n)
    else:
        w = np.ones(n)
    return s, y, w


def _inputs(cal, scores):
    """The calibrator's inputs standing for ``scores`` (a sequence or an array): the
    scores themselves, or their images under the ``_check_inputs`` hook."""
    hook = getattr(cal, "_check_inputs", None)
    if hook is None:
        return scores
    return hook(scores.tolist() if isinstance(scores, np.ndarray) else list(scores))


def _input(cal, score):
    """The calibrator's input standing for one score."""
    hook = getattr(cal, "_check_inputs", None)
    return score if hook is None else hook([score])[0]


def _cold_start(cal, x):
    """The documented prediction before any data for input ``x``: ``x`` itself unless
    the calibrator defines the ``_cold_start_value`` hook."""
    hook = getattr(cal, "_cold_start_value", None)
    return x if hook is None else hook(x)


def _learn(cal, s, y, w):
    for a, b, c in zip(_inputs(cal, s.tolist()), y.tolist(), w.tolist()):
        cal.learn_one(a, b, c)


def _trained(cal, n=300, seed=0, **kw):
    c = cal.clone()
    _learn(c, *yield_stream(n, seed, **kw))
    return c


def _predictions(cal):
    return [cal.predict_one(q) for q in _inputs(cal, QUERY.tolist())]


def check_huge_weights(cal: BinaryCalibrator) -> None:
    """The weight rule (:mod:`streamcal._validation`): weights of 1e308 and 1.7e308,
    fed to a fresh and a trained calibrator by ``learn_one``, ``learn_many`` and
    ``predict_reveal_many``, are accepted with a finite state and finite predictions,
    or refused with a ValueError naming ``w`` and the state unchanged (through a refit
    when there is one)."""
    n = 2 + (getattr(cal, "refit_every", 0) or 0)
    x, z = _inputs(cal, [0.5, 0.8])

    def one(c, w):
        c.learn_one(x, 1, w)

    def batch(c, w):
        c.learn_many([x, z], [1, 0], [1.0, w])

    def operations(c, w):  # a prediction between the two learns
        c.predict_reveal_many([1, 0, 2], [x, z, z], [1, None, 0], [1.0, None, w])

    for step in (one, batch, operations):
        for c in (cal.clone(), _trained(cal, 100, seed=21)):
            _common.assert_huge_weights_refused_or_finite(c, step, _predictions, n)


def check_learn_one_returns_none(cal: BinaryCalibrator) -> None:
    """``learn_one`` returns None, as in river."""
    c = cal.clone()
    assert c.learn_one(_input(c, 0.3), 1) is None, "learn_one must return None"
    assert c.learn_many(_inputs(c, [0.1, 0.9]), [0, 1]) is None, (
        "learn_many must return None"
    )


def check_cold_start(cal: BinaryCalibrator) -> None:
    """Before any label, ``predict_one`` returns the score itself (or the documented
    ``_cold_start_value``) and never raises."""
    c = cal.clone()
    inputs = _inputs(c, QUERY)
    expected = [_cold_start(c, x) for x in _inputs(c, QUERY.tolist())]
    for x, e in zip(_inputs(c, QUERY.tolist()), expected):
        assert c.predict_one(x) == e, f"predict_one({x}) before learning must be {e}"
    assert np.array_equal(c.predict_many(inputs), expected), (
        "predict_many before learning"
    )
    c.learn_one(_input(c, 0.4), 1, 0.0)  # a zero weight teaches nothing
    for x in _inputs(c, QUERY.tolist()):
        assert math.isfinite(c.predict_one(x))


def check_outputs_finite_in_unit_interval(cal: BinaryCalibrator) -> None:
    """Predictions are finite and in [0, 1] after every event, edge scores included."""
    c = cal.clone()
    s, y, w = yield_stream(200, seed=1)
    probe = _inputs(c, [0.0, 0.005, 0.5, 0.995, 1.0])
    for a, b, d in zip(_inputs(c, s.tolist()), y.tolist(), w.tolist()):
        c.learn_one(a, b, d)
        for q in probe:
            p = c.predict_one(q)
            assert isinstance(p, float) and 0.0 <= p <= 1.0, f"predict_one({q}) = {p!r}"
    out = c.predict_many(_inputs(c, QUERY))
    assert (
        out.dtype == np.float64
        and np.all(np.isfinite(out))
        and np.all((out >= 0) & (out <= 1))
    )


def check_monotone(cal: BinaryCalibrator) -> None:
    """Where the calibrator promises it, predictions are non-decreasing in the score."""
    if not cal._monotone:
        return
    grid = np.linspace(0.0, 1.0, 401)
    c = cal.clone()
    s, y, w = yield_stream(400, seed=2)
    for start in range(0, 400, 50):
        _learn(c, s[start : start + 50], y[start : start + 50], w[start : start + 50])
        p = c.predict_many(grid)
        assert np.all(np.diff(p) >= -1e-12), "predict_many not monotone in the score"
        p1 = np.array([c.predict_one(q) for q in grid.tolist()])
        assert np.all(np.diff(p1) >= -1e-12), "predict_one not monotone in the score"


def _further(cal) -> list:
    """Learn a further stretch of stream; the prediction after each event, then at the
    probes."""
    out = []
    s, y, w = yield_stream(120, seed=5)
    for x, t, v in zip(_inputs(cal, s.tolist()), y.tolist(), w.tolist()):
        cal.learn_one(x, t, v)
        out.append(cal.predict_one(x))
    return out + _predictions(cal)


def _round_trip(cal, how, states) -> None:
    _common.check_round_trip(how, states, _predictions, _further, BinaryCalibrator, cal.clone())


def check_clone_is_independent(cal: BinaryCalibrator) -> None:
    """``clone()`` gives a fresh copy with the same parameters (predicting its
    documented cold start); learning in it, or in a deep copy, does not affect the
    original (:func:`~streamcal.checks._common.check_round_trip`)."""
    trained = _trained(cal)
    fresh = trained.clone()
    for x in _inputs(fresh, QUERY.tolist()):
        assert fresh.predict_one(x) == _cold_start(fresh, x), (
            "a clone must not carry learnt state"
        )
    _round_trip(cal, "clone", [("", trained)])


def check_pickle_roundtrip(cal: BinaryCalibrator) -> None:
    """A pickled calibrator predicts and keeps learning exactly like the original
    (:func:`~streamcal.checks._common.check_round_trip`)."""
    _round_trip(cal, "pickle", [("", _trained(cal))])


def check_dict_roundtrip(cal: BinaryCalibrator) -> None:
    """``to_dict()`` is JSON-safe and ``from_dict`` restores the exact state, fresh or
    trained (:func:`~streamcal.checks._common.check_round_trip`)."""
    _round_trip(cal, "dict", [("fresh", cal.clone()), ("trained", _trained(cal))])


def _assert_predictions_in_unit_interval(cal: BinaryCalibrator) -> None:
    for p in _predictions(cal):
        assert isinstance(p, float) and 0.0 <= p <= 1.0, f"a prediction is {p!r}"


def check_corrupted_snapshot_rejected(cal: BinaryCalibrator) -> None:
    """``from_dict`` refuses the snapshots of a trained calibrator corrupted entry by
    entry with a ValueError, unless the corruption gives a valid state: one whose
    predictions are floats in [0, 1] before and after it learns a short stream (see
    :func:`~streamcal.checks._common.check_corrupted_snapshots`)."""
    sane = _common.sane_while_learning(
        _assert_predictions_in_unit_interval, lambda c: _learn(c, *yield_stream(20, seed=3))
    )
    _common.check_corrupted_snapshots(_trained(cal, 120), sane)


def check_learn_many_matches_learn_one(cal: BinaryCalibrator) -> None:
    """``learn_many`` gives what a loop of ``learn_one`` gives (to rounding, 1e-12),
    whatever the batch sizes and the state it starts from."""
    s, y, w = yield_stream(3000, seed=6)
    loop = cal.clone()
    _learn(loop, s, y, w)
    for cuts in ([3000], [7, 1993, 1000], [2, 2, 2996], [2500, 500]):
        batch = cal.clone()
        start = 0
        for n in cuts:
            batch.learn_many(
                _inputs(batch, s[start : start + n]),
                y[start : start + n].tolist(),
                w[start : start + n],
            )
            start += n
        a = np.array(_predictions(loop))
        b = np.array(_predictions(batch))
        assert np.allclose(a, b, rtol=1e-12, atol=1e-12), (
            f"learn_many {cuts} differs from the loop by {np.abs(a - b).max()}"
        )
        assert batch.predict_many(_inputs(batch, QUERY)).tolist() == b.tolist()
    unweighted = cal.clone()
    unweighted.learn_many(_inputs(unweighted, s[:500]), y[:500])
    ref = cal.clone()
    _learn(ref, s[:500], y[:500], np.ones(500))
    assert np.allclose(
        _predictions(unweighted), _predictions(ref), rtol=1e-12, atol=1e-12
    ), "w=None is not unit weights"


def check_input_forms_agree(cal: BinaryCalibrator) -> None:
    """Every accepted form of an event teaches exactly what Python floats and ints do
    (the same snapshot): labels as bools, floats (``-0.0`` included) and numpy ints,
    bools and floats; scores and weights as numpy floats, as a loop over numpy arrays
    hands them over; integral weights as ints."""
    s, y, w = yield_stream(120, seed=4)
    scores = _inputs(cal, s.tolist())
    numpy_scores = list(s) if getattr(cal, "_check_inputs", None) is None else scores
    weights = w.tolist()
    forms = {
        "bool labels": (scores, [bool(v) for v in y.tolist()], weights),
        "float labels": (scores, [float(v) for v in y.tolist()], weights),
        "signed float labels": (scores, [1.0 if v else -0.0 for v in y.tolist()], weights),
        "numpy int labels": (scores, list(y.astype(np.int64)), weights),
        "numpy bool labels": (scores, list(y.astype(bool)), weights),
        "numpy float labels": (scores, list(y.astype(np.float64)), weights),
        "numpy scores and weights": (numpy_scores, y.tolist(), list(w)),
        "int weights": (scores, y.tolist(), [int(v) if v == int(v) else v for v in weights]),
    }
    reference = cal.clone()
    _learn(reference, s, y, w)
    expected = _common.snapshot(reference)
    for form, events in forms.items():
        c = cal.clone()
        for a, b, v in zip(*events):
            c.learn_one(a, b, v)
        assert _common.snapshot(c) == expected, f"{form} teach another state"


def check_predict_many_matches_predict_one(cal: BinaryCalibrator) -> None:
    """``predict_many`` equals ``predict_one`` element by element."""
    c = cal.clone()
    s, y, w = yield_stream(500, seed=7)
    queries = np.concatenate([QUERY, s[:100], np.random.default_rng(0).random(100)])
    for start in range(0, 500, 125):
        _learn(
            c, s[start : start + 125], y[start : start + 125], w[start : start + 125]
        )
        one = np.array([c.predict_one(q) for q in _inputs(c, queries.tolist())])
        many = c.predict_many(_inputs(c, queries))
        assert np.allclose(one, many, rtol=1e-12, atol=1e-15), (
            f"max diff {np.abs(one - many).max()}"
        )
    assert c.predict_many(_inputs(c, [])).shape == (0,)


def _batches_equal_loop(cal, loop, expected: list, method: str, run, splits) -> None:
    """For each way of cutting the stream (``splits``: the batch sizes), ``run(batch,
    part)`` on a clone of ``cal``, batch after batch (``part`` a slice), returns float64
    arrays whose concatenation is ``expected``, the loop's predictions, bit for bit, and
    leaves the state of ``loop``."""
    for cuts in splits:
        batch = cal.clone()
        got = []
        start = 0
        for n in cuts:
            out = run(batch, slice(start, start + n))
            assert isinstance(out, np.ndarray) and out.dtype == np.float64
            got.extend(out.tolist())
            start += n
        assert got == expected, (
            f"{method} {cuts} differs from the loop at prediction "
            f"{next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), len(got))}"
        )
        assert _predictions(batch) == _predictions(loop), f"state after {cuts} differs from the loop's"


def check_predict_learn_many_matches_loop(cal: BinaryCalibrator) -> None:
    """``predict_learn_many`` returns exactly the floats of the prequential loop
    ``predict_one`` then ``learn_one``, and leaves the same state, whatever the batch
    sizes and the state it starts from; a bad element names its index and changes
    nothing."""
    s, y, w = yield_stream(2000, seed=8)
    loop = cal.clone()
    expected = []
    for a, b, c in zip(_inputs(loop, s.tolist()), y.tolist(), w.tolist()):
        expected.append(loop.predict_one(a))
        loop.learn_one(a, b, c)
    def run(batch, part):
        out = batch.predict_learn_many(_inputs(batch, s[part]), y[part].tolist(), w[part])
        assert out.shape == (part.stop - part.start,)
        return out

    _batches_equal_loop(cal, loop, expected, "predict_learn_many", run,
                        ([2000], [1, 999, 1000], [3, 3, 1994], [1500, 500]))
    fresh = cal.clone()
    assert fresh.predict_learn_many(_inputs(fresh, []), []).shape == (0,)
    unweighted = cal.clone()
    ref = cal.clone()
    a = unweighted.predict_learn_many(_inputs(unweighted, s[:300]), y[:300])
    b = ref.predict_learn_many(_inputs(ref, s[:300]), y[:300], np.ones(300))
    assert a.tolist() == b.tolist(), "w=None is not unit weights"
    good = _inputs(loop, [0.1, 0.5, 0.9])
    _common.expect_bad_batches_rejected(
        loop,
        loop.predict_learn_many,
        (
            ((good, [0, 2, 1]), "labels", 1),
            ((good, [0, 1, 1], [1.0, 1.0, -1.0]), "w", 2),
            ((_inputs(loop, [0.1, 0.5, float("nan")]), [0, 1, 1]), "scores", 2),
        ),
    )


def check_predict_reveal_many_matches_loop(cal: BinaryCalibrator) -> None:
    """``predict_reveal_many`` returns exactly the floats of the loop of ``predict_one``
    and ``learn_one`` doing the same operations (labels arriving late), and leaves the
    same state, whatever the batch sizes; the labels and weights of predictions are
    not used; a bad element names its index and changes nothing."""
    s, y, w = yield_stream(2000, seed=9)
    kinds = np.random.default_rng(9).integers(0, 3, 2000)
    loop = cal.clone()
    expected = []
    for k, a, b, c in zip(kinds.tolist(), _inputs(loop, s.tolist()), y.tolist(), w.tolist()):
        if k != REVEAL:
            expected.append(loop.predict_one(a))
        if k != PREDICT:
            loop.learn_one(a, b, c)
    unused = kinds == PREDICT

    def run(batch, part):
        labels = np.where(unused[part], np.nan, y[part])  # not used: NaN will do
        weights = np.where(unused[part], -1.0, w[part])
        return batch.predict_reveal_many(kinds[part].tolist(), _inputs(batch, s[part]), labels, weights)

    _batches_equal_loop(cal, loop, expected, "predict_reveal_many", run, ([2000], [1, 999, 1000], [1500, 500]))
    unweighted, ref = cal.clone(), cal.clone()
    a = unweighted.predict_reveal_many(kinds[:300], _inputs(unweighted, s[:300]), y[:300])
    b = ref.predict_reveal_many(kinds[:300], _inputs(ref, s[:300]), y[:300], np.ones(300))
    assert a.tolist() == b.tolist(), "w=None is not unit weights"
    good = _inputs(loop, [0.1, 0.5, 0.9])
    _common.expect_bad_batches_rejected(
        loop,
        loop.predict_reveal_many,
        (
            (([1, 3, 1], good, [0, 1, 1]), "kinds", 1),
            (([1, 2, True], good, [0, 1, 1]), "kinds", 2),
            (([2, 1, 2], good, [0, 2, 1]), "labels", 1),
            (([0, 1, 1], good, [0, 1, 1], [1.0, 1.0, -1.0]), "w", 2),
            (([0, 0, 0], _inputs(loop, [0.1, 0.5, float("nan")]), [0, 1, 1]), "scores", 2),
        ),
    )


def check_bad_input_leaves_state_unchanged(cal: BinaryCalibrator) -> None:
    """Bad scores, labels and weights raise a clear ValueError/TypeError and leave the
    state exactly as it was, for single events and for batches (validated whole)."""
    for c in (cal.clone(), _trained(cal)):
        before = _common.snapshot(c)
        preds = _predictions(c)
        half = _input(c, 0.5)
        for bad in BAD_SCORES:
            _common.expect_error(c.learn_one, (_input(c, bad), 1), "score", bad)
            _common.expect_error(c.predict_one, (_input(c, bad),), "score", bad)
        for bad in BAD_LABELS:
            _common.expect_error(c.learn_one, (half, bad), "label", bad)
        for bad in BAD_WEIGHTS:
            _common.expect_error(c.learn_one, (half, 1, bad), "w", bad)
        good_s, good_y, good_w = _inputs(c, [0.1, 0.5, 0.9]), [0, 1, 1], [1.0, 1.0, 1.0]
        for bad in BAD_SCORES:
            if bad is None or isinstance(bad, (str, complex, bool)):
                continue  # numpy coerces these with the column; learn_one covers them
            _common.expect_error(
                c.learn_many, (_inputs(c, [0.1, bad, 0.9]), good_y), "scores", bad
            )
        for bad in (2, 0.5, -1):
            _common.expect_error(c.learn_many, (good_s, [0, bad, 1]), "labels", bad)
        for bad in (-1.0, float("nan"), float("inf")):
            _common.expect_error(
                c.learn_many, (good_s, good_y, [1.0, bad, 1.0]), "w", bad
            )
        _common.expect_error(c.learn_many, (good_s, [0, 1]), "labels", "a short batch")
        _common.expect_error(
            c.learn_many, (good_s, good_y, [1.0]), "w", "a short batch"
        )
        _common.expect_error(
            c.predict_many, (_inputs(c, [0.2, float("nan")]),), "scores", "nan"
        )
        assert _common.snapshot(c) == before, "bad input changed the state"
        assert _predictions(c) == preds, "bad input changed the predictions"
        c.learn_many(good_s, good_y, good_w)  # and the calibrator still works


def check_bounded_memory(cal: BinaryCalibrator) -> None:
    """When a window or grid parameter is set, the state stops growing with the stream."""
    if not _common.has_bounded_memory(cal):
        return

    def learn_chunk(c, chunk):
        s, y, w = yield_stream(1500, seed=10 + chunk, distinct=True)
        c.learn_many(_inputs(c, s), y, w)

    _common.check_state_stops_growing(cal, learn_chunk, 200)
