"""Checks that every multiclass calibrator must pass.

Each check takes a *fresh* (unfitted) :class:`~streamcal.base.MulticlassCalibrator`,
works on clones of it, and raises AssertionError with a message saying what broke. The
streams come from :func:`yield_multiclass_stream`: probability vectors over three to
five classes drawn from an over-confident Dirichlet model, heavy ties, one-hot vectors,
classes left out of the dict, a class that appears late, and a mix of unit, fractional
and zero weights; the class labels are ints, strings, or a mix of ints, a string, a
tuple and a float (JSON snapshots must bring each back as it was).

The rules checked are those of :class:`~streamcal.base.MulticlassCalibrator`:

- **Outputs.** ``predict_one(scores)`` is a new dict of finite floats in [0, 1] summing
  to 1 within 1e-9 (not required of a calibrator tagged ``"unnormalised"``, such as
  ``ClassWise(normalize=False)``). Its keys are every key of ``scores`` plus, possibly, classes the
  calibrator knows (in :attr:`classes`): a known class absent from ``scores`` (raw
  probability 0) may receive calibrated mass, no other key may appear. This is what
  :meth:`~streamcal.base.MulticlassCalibrator._merge_unknown` gives when the calibrated
  part covers the known classes.
- **Unknown classes.** A class the calibrator has never seen, in ``scores`` at
  prediction time, keeps its raw probability exactly (the calibrated classes share the
  rest); one first seen as a ``label`` is learnt without error.
- **Cold start.** Before any fit, ``predict_one(scores)`` equals ``scores`` (a new dict).
- **Bad input** raises a ValueError / TypeError naming the argument (``'scores'``,
  ``'label'``, ``'w'``; ``'labels'`` / ``'w'`` for batch lengths) and leaves the whole
  state (its fingerprint: the pickled attributes) unchanged; ``predict_one`` never
  changes the state; neither method mutates or keeps a live reference to the caller's
  ``scores`` dict.

Hooks a calibrator may define:

- ``_logits = True`` (class attribute or property): the calibrator takes logits or
  log-probabilities. The checks then feed ``log(max(p, 1e-9))`` for each probability
  vector ``p`` of the streams and bad values that are not finite reals.
- ``_cold_start_value(scores) -> dict``: the documented prediction before any fit, when
  it is not ``scores`` itself (for logits: their softmax, say).
- ``_fit_events(events) -> None`` (**required of refittable calibrators**, those with
  ``window_size`` and ``refit_every`` parameters): replace the fit, everything
  ``predict_one`` reads, by the batch algorithm applied to ``events``, a list of
  ``(scores, label, w)`` tuples exactly as they were passed to ``learn_one`` (valid
  ones), oldest first; the refit inside ``learn_one`` must do the same thing on the
  window. :func:`check_refit_matches_window` feeds a stream, keeps its own
  ``deque(maxlen=window_size)`` of the events, and after every ``refit_every``-th
  ``learn_one`` compares the calibrator's predictions with those of a fresh clone on
  which ``_fit_events(list(tail))`` was called (to 1e-12); between refits predictions
  must not move, and before the first refit they are the cold start. The fit must
  depend on the window's events only (for example, the classes the fit calibrates are
  those of the window, not every class ever seen).
"""

from __future__ import annotations

import collections
import math
import pickle
import typing

import numpy as np

from streamcal.base import BinaryCalibrator, MulticlassCalibrator
from streamcal.checks import _common
from streamcal.checks._common import BAD_WEIGHTS, check_docstring_has_example

__all__ = [
    "BAD_CLASS_LABELS",
    "BAD_LOGIT_VECTORS",
    "BAD_PROBABILITY_VECTORS",
    "INT_CLASSES",
    "MIXED_CLASSES",
    "STR_CLASSES",
    "check_bad_input_leaves_state_unchanged",
    "check_bounded_memory",
    "check_classes_discovered",
    "check_clone_is_independent",
    "check_corrupted_snapshot_rejected",
    "check_cold_start",
    "check_dict_roundtrip",
    "check_docstring_has_example",
    "check_huge_weights",
    "check_input_not_mutated_or_kept",
    "check_learn_many_matches_learn_one",
    "check_learn_one_returns_none",
    "check_multiclass_calibrator",
    "check_outputs_are_probability_vectors",
    "check_pickle_roundtrip",
    "check_predict_does_not_change_state",
    "check_predict_many_matches_predict_one",
    "check_refit_matches_window",
    "check_unknown_classes",
    "yield_multiclass_checks",
    "yield_multiclass_stream",
]

#: Class labels of the streams: ints, strings, and a mix that JSON cannot keep apart
#: unless the snapshot encodes labels (the last class appears late in the stream).
INT_CLASSES = (0, 1, 2, 3)
STR_CLASSES = ("cat", "dog", "bird", "fish")
MIXED_CLASSES = (0, "b", "0", 3.5)

#: Bad probability vectors: NaN, out of [0, 1], sums far from 1, wrong types, a NaN
#: class, not a dict, empty.
BAD_PROBABILITY_VECTORS = [
    *_common.BAD_PROBABILITY_DICTS,
    {0: True, 1: False},
    {0: float("inf"), 1: 0.0},
    {float("nan"): 0.5, 1: 0.5},
    {b"x": 0.5, 1: 0.5},
    {(0, 1): 0.5, 1: 0.5},
    0.5,
    None,
    [0.5, 0.5],
    {},
]
#: Bad logit vectors (for calibrators with ``_logits``): not finite, wrong types.
BAD_LOGIT_VECTORS = [
    {0: float("nan"), 1: 0.5},
    {0: float("inf"), 1: 0.0},
    {0: -float("inf"), 1: 0.0},
    {0: "1", 1: 0.0},
    {0: True, 1: 0.0},
    {float("nan"): 1.0, 1: 0.0},
    {b"x": 1.0, 1: 0.0},
    0.5,
    None,
    [0.5, 0.5],
    {},
]
#: Bad class labels: anything but a JSON scalar (str, int, bool, finite float).
BAD_CLASS_LABELS = [[1], {0: 1}, {1}, float("nan"), b"x", frozenset({1}), (float("nan"),), None]

_WEIGHTS = [1.0, 1.0, 1.0, 0.5, 2.25, 0.0]
_NEW = "never-seen-class"  # a class no stream uses
_LOG_FLOOR = 1e-9
_CALIBRATORS = (BinaryCalibrator, MulticlassCalibrator)


# ------------------------------------------------------------------------- streams


def _grid(q: np.ndarray, units: int, rng) -> list:
    """``q`` rounded to multiples of ``1 / units`` that sum to 1 (largest remainders)."""
    scaled = q * units
    counts = np.floor(scaled).astype(int)
    rest = units - int(counts.sum())
    order = np.argsort(-(scaled - counts) + 1e-9 * rng.random(len(q)))
    counts[order[:rest]] += 1
    return [int(c) / units for c in counts]


def yield_multiclass_stream(
    n: int = 300,
    seed: int = 0,
    classes: tuple = INT_CLASSES,
    weights: bool = True,
    distinct: bool = False,
    temperature: float = 2.5,
) -> list:
    """A miscalibrated multiclass stream: a list of ``(scores, label, w)`` events.

    For each event a true probability vector ``q`` is drawn from a Dirichlet(0.8) and
    the label from ``q``; the forecast ``scores`` is ``q ** temperature`` renormalised
    (over-confident for ``temperature > 1``), a dict over ``classes`` summing to 1
    within 1e-12. The last class exists only from 40% of the stream on (in the labels
    and in the forecasts). Unless ``distinct``, forecasts lie on a grid of 0.05 (ties
    within and across vectors); about 5% are one-hot, and about 10% leave out a class
    of probability 0 (absent from the dict). Weights mix 1, 0.5, 2.25 and 0 when
    ``weights``, else all 1.

    Examples
    --------
    >>> events = yield_multiclass_stream(200, seed=1)
    >>> all(abs(sum(s.values()) - 1.0) < 1e-12 for s, _, _ in events)
    True
    >>> sorted({k for s, _, _ in events for k in s}), events[0][1] in (0, 1, 2)
    ([0, 1, 2, 3], True)

    """
    rng = np.random.default_rng(seed)
    late = int(0.4 * n)
    out = []
    for t in range(n):
        k = len(classes) - 1 if t < late else len(classes)
        q = rng.dirichlet(np.full(k, 0.8))
        label = classes[int(rng.choice(k, p=q))]
        sharp = q**temperature
        sharp /= sharp.sum()
        if rng.random() < 0.05:
            probs = [0.0] * k
            probs[int(rng.integers(k))] = 1.0
        elif distinct:
            probs = [float(v) for v in sharp]
        else:
            probs = _grid(sharp, 20, rng)
        probs[-1] = max(0.0, 1.0 - math.fsum(probs[:-1]))
        scores = dict(zip(classes[:k], probs))
        if rng.random() < 0.1:
            zero = [c for c, v in scores.items() if v == 0.0]
            if zero:
                del scores[zero[0]]
        w = float(rng.choice(_WEIGHTS)) if weights else 1.0
        out.append((scores, label, w))
    return out


def _probes(classes: tuple) -> list:
    """Probability vectors to predict on: uniform, one-hot, ties, a missing class, a
    single key, the late class, edge values."""
    a, b, c, d = classes[:4]
    return [
        {a: 1 / 3, b: 1 / 3, c: 1 - 2 / 3},
        {a: 1.0, b: 0.0, c: 0.0},
        {a: 0.0, b: 1.0},
        {c: 1.0},
        {a: 0.45, b: 0.45, c: 0.1},
        {a: 0.7, c: 0.3},
        {a: 0.1, b: 0.2, c: 0.3, d: 0.4},
        {d: 0.97, a: 0.01, b: 0.01, c: 0.01},
        {a: 0.25, b: 0.25, c: 0.25, d: 0.25},
        {b: 1e-12, a: 0.5, c: 0.5 - 1e-12},
    ]


# ------------------------------------------------------------------------- helpers


def _fingerprint(obj) -> bytes:
    """:func:`streamcal.checks._common.fingerprint`, except that calibrators nested in
    the state (attributes, or items of lists, tuples and dict values) are fingerprinted
    one by one: pickle shares equal objects between them (a parameter string, say) in
    the original and not in a copy restored from JSON, which changes the bytes but not
    the state."""
    getstate = getattr(type(obj), "__getstate__", None)
    custom = getstate is not None and getstate is not getattr(
        object, "__getstate__", None
    )
    state = obj.__getstate__() if custom else vars(obj)
    return pickle.dumps(sorted((k, _part(v)) for k, v in state.items()), protocol=4)


def _part(value):
    if isinstance(value, _CALIBRATORS):
        return ("calibrator", _fingerprint(value))
    if isinstance(value, (list, tuple)) and any(
        isinstance(v, _CALIBRATORS) for v in value
    ):
        return (type(value).__name__, [_part(v) for v in value])
    if isinstance(value, dict) and any(
        isinstance(v, _CALIBRATORS) for v in value.values()
    ):
        return ("dict", [(k, _part(v)) for k, v in value.items()])
    return value


def _is_logits(cal) -> bool:
    return bool(getattr(cal, "_logits", False))


def _input(cal, scores: dict) -> dict:
    """What the calibrator takes for the probability vector ``scores``."""
    if _is_logits(cal):
        return {k: math.log(max(p, _LOG_FLOOR)) for k, p in scores.items()}
    return dict(scores)


def _events(cal, events: list) -> list:
    return [(_input(cal, s), y, w) for s, y, w in events]


def _stream(cal, n=300, seed=0, **kw) -> list:
    return _events(cal, yield_multiclass_stream(n, seed, **kw))


def _cold_start(cal, x: dict) -> dict:
    hook = getattr(cal, "_cold_start_value", None)
    return dict(x) if hook is None else hook(x)


def _learn(cal, events) -> None:
    for s, y, w in events:
        cal.learn_one(s, y, w)


def _trained(cal, n=300, seed=0, **kw):
    c = cal.clone()
    _learn(c, _stream(c, n, seed, **kw))
    return c


def check_huge_weights(cal: MulticlassCalibrator) -> None:
    """The weight rule (:mod:`streamcal._validation`): weights of 1e308 and 1.7e308,
    fed to a fresh and a trained calibrator by ``learn_one`` and ``learn_many``, are
    accepted with a finite state and probability vectors, or refused with a ValueError
    naming ``w`` and the state unchanged (through a refit when there is one)."""
    n = 2 + (getattr(cal, "refit_every", 0) or 0)
    (s, y, _), (s2, y2, _) = _stream(cal, 2, seed=22)

    def outputs(c):
        return [v for out in _predictions(c) for v in out.values()]

    def one(c, w):
        c.learn_one(s, y, w)

    def batch(c, w):
        c.learn_many([s2, s], [y2, y], [1.0, w])

    for step in (one, batch):
        for c in (cal.clone(), _trained(cal, 100, seed=21)):
            _common.assert_huge_weights_refused_or_finite(c, step, outputs, n)


def _predictions(cal, classes=INT_CLASSES) -> list:
    return [cal.predict_one(_input(cal, p)) for p in _probes(classes)]


def _same(a: dict, b: dict, tol: float = 0.0) -> bool:
    """Same keys and values within ``tol``."""
    return a.keys() == b.keys() and all(abs(a[k] - b[k]) <= tol for k in a)


def _assert_vector(cal, out, scores: dict, where: str) -> None:
    """``out`` is a valid prediction for ``scores`` (see the module docstring)."""
    assert isinstance(out, dict), f"{where}: predict_one returned {type(out).__name__}"
    assert out is not scores, f"{where}: predict_one returned the input dict itself"
    for k, p in out.items():
        assert type(p) is float and math.isfinite(p) and 0.0 <= p <= 1.0, (
            f"{where}: probability {p!r} for class {k!r}"
        )
    if "unnormalised" not in cal._tags:
        total = math.fsum(out.values())
        assert abs(total - 1.0) <= 1e-9, f"{where}: the output sums to {total!r}"
    missing = scores.keys() - out.keys()
    assert not missing, f"{where}: classes {missing} of the scores missing"
    extra = out.keys() - scores.keys() - set(cal.classes)
    assert not extra, f"{where}: classes {extra} neither in the scores nor known"


def _expect_error(fn, args, names, value, must="must be") -> None:
    """``fn(*args)`` raises a ValueError / TypeError naming one of ``names`` and stating
    the domain (``must``) and the value ("Got")."""
    try:
        fn(*args)
    except (ValueError, TypeError) as exc:
        msg = str(exc)
        assert any(f"'{n}'" in msg for n in names), (
            f"the error for {value!r} names none of {names}: {msg}"
        )
        assert must in msg and "Got" in msg, (
            f"the error does not state the domain and the value: {msg}"
        )
        return
    raise AssertionError(f"no ValueError/TypeError for {names[0]}={value!r}")


def _is_refittable(cal) -> bool:
    return hasattr(cal, "window_size") and hasattr(cal, "refit_every")


# -------------------------------------------------------------------------- checks


def check_learn_one_returns_none(cal: MulticlassCalibrator) -> None:
    """``learn_one`` and ``learn_many`` return None, as in river."""
    c = cal.clone()
    x = _input(c, {0: 0.3, 1: 0.7})
    assert c.learn_one(x, 1) is None, "learn_one must return None"
    assert c.learn_many([x, x], [0, 1]) is None, "learn_many must return None"


def check_cold_start(cal: MulticlassCalibrator) -> None:
    """Before any fit, ``predict_one`` returns a new dict equal to the scores (or the
    documented ``_cold_start_value``) and never raises; so does ``predict_many``."""
    c = cal.clone()
    inputs = [_input(c, p) for p in _probes(INT_CLASSES)]
    for x in inputs:
        out = c.predict_one(x)
        expected = _cold_start(c, x)
        assert out is not x, "the cold start must return a new dict"
        assert _same(out, expected), f"predict_one({x}) before learning: {out}"
    many = c.predict_many(inputs)
    assert all(_same(o, _cold_start(c, x)) for o, x in zip(many, inputs)), (
        "predict_many before learning"
    )
    c.learn_one(_input(c, {0: 0.4, 1: 0.6}), 1, 0.0)  # a zero weight
    for x in inputs:
        _assert_vector(c, c.predict_one(x), x, "after a zero-weight event")


def check_outputs_are_probability_vectors(cal: MulticlassCalibrator) -> None:
    """After every event, predictions are dicts of finite floats in [0, 1] summing to
    1 within 1e-9 whose keys are those of the scores plus, possibly, known classes."""
    c = cal.clone()
    probes = [_input(c, p) for p in _probes(INT_CLASSES)]
    for t, (s, y, w) in enumerate(_stream(c, 200, seed=1)):
        c.learn_one(s, y, w)
        for x in probes + [s]:
            _assert_vector(c, c.predict_one(x), x, f"event {t}, scores {x}")
    for x, out in zip(probes, c.predict_many(probes)):
        _assert_vector(c, out, x, "predict_many")


def check_predict_does_not_change_state(cal: MulticlassCalibrator) -> None:
    """``predict_one`` and ``predict_many`` leave the whole state unchanged."""
    for c in (cal.clone(), _trained(cal, 250, seed=11)):
        before = _fingerprint(c)
        probes = [_input(c, p) for p in _probes(INT_CLASSES)]
        probes.append(_input(c, {0: 0.5, _NEW: 0.5}))
        for x in probes:
            c.predict_one(x)
        c.predict_many(probes)
        assert _fingerprint(c) == before, "predicting changed the state"


def check_input_not_mutated_or_kept(cal: MulticlassCalibrator) -> None:
    """The caller's ``scores`` dicts are neither mutated nor kept: changing them after
    the call does not change the calibrator."""
    c = cal.clone()
    events = _stream(c, 150, seed=12)
    originals = [dict(s) for s, _, _ in events]
    for s, y, w in events:
        c.learn_one(s, y, w)
    assert [s for s, _, _ in events] == originals, "learn_one mutated its input"
    probes = [_input(c, p) for p in _probes(INT_CLASSES)]
    copies = [dict(x) for x in probes]
    for x in probes:
        c.predict_one(x)
    c.predict_many(probes)
    assert probes == copies, "predict_one mutated its input"
    before = _common.snapshot(c)
    preds = _predictions(c)
    for s, _, _ in events:
        for k in s:
            s[k] = 0.0
        s["garbage"] = 1.0
    assert _common.snapshot(c) == before, "the calibrator kept the caller's dicts"
    assert _predictions(c) == preds, "the calibrator kept the caller's dicts"


def check_predict_many_matches_predict_one(cal: MulticlassCalibrator) -> None:
    """``predict_many`` equals ``predict_one`` element by element (1e-12)."""
    c = cal.clone()
    events = _stream(c, 400, seed=7)
    queries = [_input(c, p) for p in _probes(INT_CLASSES)] + [
        s for s, _, _ in events[:60]
    ]
    for start in range(0, 400, 100):
        _learn(c, events[start : start + 100])
        one = [c.predict_one(x) for x in queries]
        many = c.predict_many(queries)
        assert isinstance(many, list) and len(many) == len(queries)
        for a, b in zip(one, many):
            assert _same(a, b, 1e-12), f"predict_many {b} != predict_one {a}"
    assert list(c.predict_many([])) == [], "predict_many of nothing"


def check_learn_many_matches_learn_one(cal: MulticlassCalibrator) -> None:
    """``learn_many`` gives what a loop of ``learn_one`` gives (predictions to 1e-12),
    whatever the batch sizes; ``w=None`` means unit weights."""
    events = _stream(cal, 900, seed=6)
    s, y, w = (list(col) for col in zip(*events))
    loop = cal.clone()
    _learn(loop, events)
    for cuts in ([900], [7, 593, 300], [1, 1, 898]):
        batch = cal.clone()
        start = 0
        for n in cuts:
            batch.learn_many(
                s[start : start + n], y[start : start + n], w[start : start + n]
            )
            start += n
        for a, b in zip(_predictions(loop), _predictions(batch)):
            assert _same(a, b, 1e-12), f"learn_many {cuts}: {b} != loop {a}"
    unweighted = cal.clone()
    unweighted.learn_many(s[:300], y[:300])
    ref = cal.clone()
    _learn(ref, [(a, b, 1.0) for a, b in zip(s[:300], y[:300])])
    for a, b in zip(_predictions(ref), _predictions(unweighted)):
        assert _same(a, b, 1e-12), "w=None is not unit weights"


def _further(classes):
    """Learn a further stretch of stream with ``classes``; the prediction after each
    event, then at the probes."""

    def further(cal) -> list:
        out = []
        for s, y, w in _stream(cal, 150, seed=5, classes=classes):
            cal.learn_one(s, y, w)
            out.append(cal.predict_one(s))
        return out + _predictions(cal, classes)

    return further


def _round_trip(cal, how, states, classes=INT_CLASSES) -> None:
    def outputs(c):
        return [tuple(c.classes)] + _predictions(c, classes)

    further = _further(classes)
    _common.check_round_trip(
        how, states, outputs, further, MulticlassCalibrator, cal.clone(), _fingerprint
    )


def check_clone_is_independent(cal: MulticlassCalibrator) -> None:
    """``clone()`` gives a fresh copy with the same parameters (no class known, the
    documented cold start); learning in a clone or a deep copy does not affect the
    original (:func:`~streamcal.checks._common.check_round_trip`)."""
    trained = _trained(cal)
    fresh = trained.clone()
    assert tuple(fresh.classes) == (), "a clone must not know any class"
    for p in _probes(INT_CLASSES):
        x = _input(fresh, p)
        assert _same(fresh.predict_one(x), _cold_start(fresh, x)), (
            "a clone must not carry learnt state"
        )
    _round_trip(cal, "clone", [("", trained)])


def check_pickle_roundtrip(cal: MulticlassCalibrator) -> None:
    """A pickled calibrator predicts and keeps learning exactly like the original, with
    int, str and mixed class labels (:func:`~streamcal.checks._common.check_round_trip`)."""
    for classes in (INT_CLASSES, STR_CLASSES, MIXED_CLASSES):
        trained = _trained(cal, 250, seed=13, classes=classes)
        _round_trip(cal, "pickle", [(f"classes {classes}", trained)], classes)


def _assert_probability_vectors(cal: MulticlassCalibrator) -> None:
    for p in _probes(INT_CLASSES):
        x = _input(cal, p)
        _assert_vector(cal, cal.predict_one(x), x, "restored from a corrupted snapshot")


def check_corrupted_snapshot_rejected(cal: MulticlassCalibrator) -> None:
    """A trained calibrator's snapshots corrupted entry by entry: ``from_dict`` refuses
    each with a ValueError, or restores a calibrator whose predictions are probability
    vectors before and after it learns a short stream (see
    :func:`~streamcal.checks._common.check_corrupted_snapshots`)."""
    sane = _common.sane_while_learning(
        _assert_probability_vectors, lambda c: _learn(c, _stream(c, 20, seed=3))
    )
    _common.check_corrupted_snapshots(_trained(cal, 120), sane)


def check_dict_roundtrip(cal: MulticlassCalibrator) -> None:
    """``to_dict()`` is JSON-safe and ``from_dict`` restores the exact state (the class
    labels too: ints stay ints, tuples tuples), which then continues identically
    (:func:`~streamcal.checks._common.check_round_trip`)."""
    for classes in (INT_CLASSES, STR_CLASSES, MIXED_CLASSES):
        trained = _trained(cal, 250, seed=14, classes=classes)
        states = [("fresh", cal.clone()), (f"classes {classes}", trained)]
        _round_trip(cal, "dict", states, classes)


def check_bad_input_leaves_state_unchanged(cal: MulticlassCalibrator) -> None:
    """Bad scores, labels and weights raise a clear ValueError/TypeError naming the
    argument and leave the state exactly as it was, for single events and for batches
    (validated whole); the calibrator still works afterwards."""
    bad_vectors = BAD_LOGIT_VECTORS if _is_logits(cal) else BAD_PROBABILITY_VECTORS
    for c in (cal.clone(), _trained(cal, 250, seed=15)):
        before = _fingerprint(c)
        preds = _predictions(c)
        good = _input(c, {0: 0.25, 1: 0.75})
        for bad in bad_vectors:
            _expect_error(c.learn_one, (bad, 1), ("scores",), bad)
            _expect_error(c.learn_one, (bad, 1, 0.0), ("scores",), bad)
            _expect_error(c.predict_one, (bad,), ("scores",), bad)
            _expect_error(c.learn_many, ([good, bad], [0, 1]), ("scores",), bad)
            _expect_error(c.predict_many, ([good, bad],), ("scores",), bad)
        for bad in BAD_CLASS_LABELS:
            _expect_error(c.learn_one, (good, bad), ("label",), bad)
            _expect_error(
                c.learn_many, ([good, good], [1, bad]), ("label", "labels"), bad
            )
        for bad in BAD_WEIGHTS:
            _expect_error(c.learn_one, (good, 1, bad), ("w",), bad)
            _expect_error(c.learn_many, ([good, good], [0, 1], [1.0, bad]), ("w",), bad)
        short = ([good, good], [0]), ([good, good], [0, 1], [1.0])
        _expect_error(c.learn_many, short[0], ("labels",), "a short batch", "must")
        _expect_error(c.learn_many, short[1], ("w",), "short weights", "must")
        assert _fingerprint(c) == before, "bad input changed the state"
        assert _predictions(c) == preds, "bad input changed the predictions"
        c.learn_many([good, good], [0, 1])  # and the calibrator still works
        for x in (good, _input(c, {1: 1.0})):
            _assert_vector(c, c.predict_one(x), x, "after bad input")


def check_classes_discovered(cal: MulticlassCalibrator) -> None:
    """``classes`` lists distinct classes, each seen in a label or in the scores, and
    includes every class seen in an event of positive weight."""
    for classes in (INT_CLASSES, MIXED_CLASSES):
        c = cal.clone()
        assert tuple(c.classes) == ()
        events = _stream(c, 200, seed=16, classes=classes)
        _learn(c, events)
        known = tuple(c.classes)
        assert len(set(known)) == len(known), f"duplicated classes: {known}"
        seen = {y for _, y, _ in events} | {k for s, _, _ in events for k in s}
        strong = {y for _, y, w in events if w > 0} | {
            k for s, _, w in events if w > 0 for k in s
        }
        assert set(known) <= seen, f"classes {set(known) - seen} were never seen"
        assert strong <= set(known), (
            f"classes {strong - set(known)} were not discovered"
        )


def check_unknown_classes(cal: MulticlassCalibrator) -> None:
    """A class never seen before never crashes a stream: in ``scores`` at prediction
    time it keeps its raw probability exactly; as a label (even of another type) it is
    learnt, and predictions stay valid."""
    for classes in (INT_CLASSES, STR_CLASSES):
        c = _trained(cal, 300, seed=17, classes=classes)
        a, b, d = classes[0], classes[1], classes[3]
        for new, raw in ((_NEW, 0.2), (99, 0.5), (2.5, 0.0), (-1, 1.0)):
            p = {a: 0.5 * (1 - raw), b: 0.25 * (1 - raw), d: 0.25 * (1 - raw), new: raw}
            x = _input(c, p)
            out = c.predict_one(x)
            _assert_vector(c, out, x, f"new class {new!r} in the scores")
            if not _is_logits(c):
                assert out[new] == raw, (
                    f"a class never seen must keep its raw probability {raw}: {out}"
                )
        for y in (_NEW, 99, 2.5, -1):
            c.learn_one(_input(c, {a: 0.6, b: 0.4}), y, 1.0)
            c.learn_one(_input(c, {y: 0.7, a: 0.3}), y, 1.0)
            c.learn_one(_input(c, {y: 1.0}), a, 2.0)
        assert {_NEW, 99, 2.5, -1} <= set(c.classes)
        for s, _, _ in _stream(c, 80, seed=18, classes=classes):
            c.learn_one(s, _NEW, 1.0)
            for x in (s, _input(c, {_NEW: 0.5, a: 0.5}), _input(c, {99: 1.0})):
                _assert_vector(c, c.predict_one(x), x, "after unknown labels")


def check_refit_matches_window(cal: MulticlassCalibrator) -> None:
    """Refittable calibrators: before the first refit, the cold start; after every
    ``refit_every``-th event, the predictions of a fresh clone fitted (``_fit_events``)
    on the last ``window_size`` events (to 1e-12); in between, unchanged."""
    if not _is_refittable(cal):
        return
    c = cal.clone()
    assert hasattr(c, "_fit_events"), (
        "a refittable calibrator needs _fit_events(events)"
    )
    size, every = c.window_size, c.refit_every
    n = min(max(3 * size + every + 7, 4 * every + 7), 3000)
    tail = collections.deque(maxlen=size)
    probes = [_input(c, p) for p in _probes(INT_CLASSES)] + [
        _input(c, {0: 0.3, 1: 0.3, _NEW: 0.4})
    ]
    last = [_cold_start(c, x) for x in probes]
    for t, (s, y, w) in enumerate(_stream(c, n, seed=19), start=1):
        c.learn_one(s, y, w)
        tail.append((s, y, w))
        now = [c.predict_one(x) for x in probes]
        if t % every == 0:
            fresh = cal.clone()
            fresh._fit_events(list(tail))
            expected = [fresh.predict_one(x) for x in probes]
            for x, a, e in zip(probes, now, expected):
                _assert_vector(c, a, x, f"refit at event {t}")
                assert _same(a, e, 1e-12), (
                    f"refit at event {t}: predict_one({x}) = {a}, a fit on the window "
                    f"gives {e}"
                )
            last = now
        else:
            for x, a, e in zip(probes, now, last):
                assert _same(a, e), (
                    f"event {t}: predict_one({x}) moved between refits: {e} -> {a}"
                )


def check_bounded_memory(cal: MulticlassCalibrator) -> None:
    """When a window (or another bounding parameter) is set, the pickled state stops
    growing with the stream."""
    if not _common.has_bounded_memory(cal):
        return
    n = max(600, -(-getattr(cal, "window_size", 0) // 2))  # two chunks fill a window

    def learn_chunk(c, chunk):
        events = _stream(c, n, seed=20 + chunk, distinct=True)
        s, y, w = (list(col) for col in zip(*events))
        c.learn_many(s, y, w)

    _common.check_state_stops_growing(cal, learn_chunk, 400)


# ------------------------------------------------------------------------- drivers


def yield_multiclass_checks(
    calibrator: MulticlassCalibrator,
) -> typing.Iterator[typing.Callable]:
    """Yield the checks that apply to ``calibrator`` (a fresh instance).

    Each check is a function taking the calibrator and raising AssertionError on
    failure. :func:`check_refit_matches_window` applies to calibrators with
    ``window_size`` and ``refit_every``; :func:`check_bounded_memory` to those with a
    ``_bounded_memory_params`` entry set.

    Examples
    --------
    >>> from streamcal import ClassWise, OnlinePlatt
    >>> names = [c.__name__ for c in yield_multiclass_checks(ClassWise(OnlinePlatt()))]
    >>> names[:3], "check_refit_matches_window" in names
    (['check_docstring_has_example', 'check_learn_one_returns_none', 'check_cold_start'], False)

    """
    yield check_docstring_has_example
    yield check_learn_one_returns_none
    yield check_cold_start
    yield check_outputs_are_probability_vectors
    yield check_predict_does_not_change_state
    yield check_input_not_mutated_or_kept
    yield check_predict_many_matches_predict_one
    yield check_learn_many_matches_learn_one
    yield check_clone_is_independent
    yield check_pickle_roundtrip
    yield check_dict_roundtrip
    yield check_corrupted_snapshot_rejected
    yield check_bad_input_leaves_state_unchanged
    yield check_huge_weights
    yield check_classes_discovered
    yield check_unknown_classes
    if _is_refittable(calibrator):
        yield check_refit_matches_window
    if _common.has_bounded_memory(calibrator):
        yield check_bounded_memory


def check_multiclass_calibrator(calibrator: MulticlassCalibrator) -> None:
    """Run every applicable check on ``calibrator``; raise on the first failure.

    Examples
    --------
    >>> from streamcal import TemperatureScaling
    >>> check_multiclass_calibrator(TemperatureScaling(window_size=60, refit_every=20))

    """
    for check in yield_multiclass_checks(calibrator):
        check(calibrator)
