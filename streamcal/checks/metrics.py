"""Checks that every streaming metric must pass.

:func:`yield_metric_checks` yields the checks that apply to a metric (each a function
of a *fresh* metric, which it never mutates: it works on clones) and
:func:`check_metric` runs them all. The test-suite parametrises every metric exported
by :mod:`streamcal.metrics`, with each of its ``_unit_test_params()``, against every
check. A failed check raises AssertionError saying what broke.

Streams come from a local numpy Generator, one kind per family of metric:

- binary metrics (the default): :func:`yield_binary_events`, labels 0/1 and
  probabilities with heavy ties, the edge values 0 and 1, and unit, fractional and zero
  weights;
- multiclass metrics (class attribute ``_multiclass = True``):
  :func:`yield_multiclass_events`, ``y_pred`` dicts over three classes summing to 1,
  the third class appearing only after the first 40% of the events, some classes left
  out of ``y_pred`` (probability 0), one-hot forecasts, and the same weights;
- path metrics (class attribute ``_path = True``, a ``taxonomy`` parameter):
  :func:`yield_path_events`, ``y_pred`` dicts over the path of a node of the taxonomy,
  labels any node but the root, and the same weights.

The semantics the checks hold every metric to:

- ``update`` and ``revert`` return None; ``get()`` is 0.0 before any positive-weight
  event and a finite float after every event;
- an event of weight 0 changes nothing at all (not even a window's position or a decay
  clock): the whole internal state is byte-for-byte the same afterwards;
- bad input (NaN, out-of-range probability, label 2, negative weight, ...) raises a
  ValueError or TypeError whose message names the argument (``'y_true'``, ``'y_pred'``
  or ``'w'``), the expected domain ("must be") and the value received ("Got"), and
  leaves the state byte-for-byte unchanged, for ``update`` and ``revert``;
- pickle and ``to_dict()`` / ``from_dict()`` restore the whole state (same ``get()``,
  same bytes of internal state, same behaviour on further updates and reverts);
- revertible metrics (``_revertible = True``): reverting any subset of the events, in
  any order, gives the value of a fresh metric fed the remaining events (to
  :data:`TOL`), and reverting them all gives back exactly 0.0;
  ``river.utils.Rolling(type(m), window_size=k, **params)`` equals a fresh metric fed
  the last ``k`` events (to :data:`TOL`) and its memory does not grow with the stream;
- non-revertible metrics raise NotImplementedError from ``revert`` (state unchanged);
  with a ``window_size`` set they equal a fresh metric (same parameters) fed the last
  ``window_size`` positive-weight events (to :data:`TOL`).

Examples
--------
>>> from streamcal.metrics import Brier
>>> from streamcal.checks.metrics import check_metric, yield_metric_checks
>>> [check.__name__ for check in yield_metric_checks(Brier())][:3]
['check_docstring_has_example', 'check_protocol', 'check_get_empty_then_finite']
>>> check_metric(Brier())
"""

from __future__ import annotations

import inspect
import json
import math
import pickle
import typing

import numpy as np

from streamcal.checks import _common
from streamcal.checks._common import (
    BAD_LABELS,  # bad ``y_true`` for binary metrics
    BAD_SCORES,
    BAD_WEIGHTS,  # bad ``w`` for every metric
    check_docstring_has_example,
)

__all__ = [
    "check_huge_weights",
    "check_update_many_matches_update",
    "BAD_LABELS",
    "BAD_PROBABILITIES",
    "BAD_WEIGHTS",
    "TOL",
    "check_bad_input_leaves_state_unchanged",
    "check_bounded_memory",
    "check_clone_is_independent",
    "check_degenerate_streams",
    "check_dict_prediction_matches_float",
    "check_dict_roundtrip",
    "check_docstring_has_example",
    "check_get_empty_then_finite",
    "check_corrupted_snapshot_rejected",
    "check_malformed_snapshot_rejected",
    "check_metric",
    "check_pickle_roundtrip",
    "check_protocol",
    "check_revert_any_order",
    "check_revert_not_implemented",
    "check_rolling_matches_tail",
    "check_rolling_memory_bounded",
    "check_window_matches_tail",
    "check_zero_weight_changes_nothing",
    "yield_binary_events",
    "yield_events",
    "yield_metric_checks",
    "yield_multiclass_events",
    "yield_path_events",
]

#: Tolerance (absolute, and relative to the value) of the comparisons between a metric
#: whose state went through reverts and a fresh metric fed the remaining events: float
#: sums that had terms added and removed differ from fresh sums by rounding only.
TOL = 1e-9

_WEIGHTS = [1.0, 1.0, 1.0, 0.5, 0.7, 2.25, 0.0]  # 0.7 is not dyadic: sums keep residues

#: Classes of the multiclass streams: ints and strings, to catch JSON snapshots that
#: turn int keys into strings (the third class appears late in the stream).
INT_CLASSES = (0, 1, 2)
STR_CLASSES = ("cat", "dog", "bird")


# ---------------------------------------------------------------------------- streams


def yield_binary_events(
    n: int = 200, seed: int = 0, weights: bool = True, distinct: bool = False
) -> list:
    """A miscalibrated binary stream: a list of ``(y_true, y_pred, w)`` events.

    ``y_pred`` is a float rounded to two decimals (heavy ties) unless ``distinct``,
    about 3% exactly 0 or 1; ``y_true`` is an int label, Bernoulli(``y_pred ** 2``).
    Weights mix 1, 0.5, 0.7, 2.25 and 0 when ``weights``, else all 1.

    Examples
    --------
    >>> events = yield_binary_events(5, seed=1)
    >>> [sorted(set(type(v).__name__ for v in col)) for col in zip(*events)]
    [['int'], ['float'], ['float']]

    """
    rng = np.random.default_rng(seed)
    p = _common.tied_scores(rng, n, distinct)
    y = (rng.random(n) < p**2).astype(int)
    w = rng.choice(_WEIGHTS, n) if weights else np.ones(n)
    return list(zip(y.tolist(), p.tolist(), w.tolist()))


def yield_multiclass_events(
    n: int = 200,
    seed: int = 0,
    weights: bool = True,
    distinct: bool = False,
    classes: tuple = INT_CLASSES,
) -> list:
    """A miscalibrated multiclass stream: a list of ``(y_true, y_pred, w)`` events.

    ``y_pred`` is a dict class -> probability summing to 1 (within 1e-12). During the
    first 40% of the events only the first two classes exist (dicts with two keys);
    afterwards the third appears, in the labels and in the forecasts. Probabilities lie
    on a grid of 0.05 (heavy ties) unless ``distinct``; about 5% of the forecasts are
    one-hot, and about 10% of the later ones leave a class out of the dict (probability
    0). Labels are drawn from a sharpened version of the forecast (over-confident).

    Examples
    --------
    >>> events = yield_multiclass_events(10, seed=1)
    >>> all(abs(sum(p.values()) - 1.0) < 1e-12 for _, p, _ in events)
    True
    >>> sorted({y for y, _, _ in events} | {k for _, p, _ in events for k in p}) == [0, 1, 2]
    True

    """
    rng = np.random.default_rng(seed)
    late = int(0.4 * n)
    out = []
    for t in range(n):
        k = 2 if t < late else 3
        q = rng.dirichlet(np.full(k, 1.5))
        if not distinct:
            q = np.round(q * 20.0) / 20.0
            q[-1] = 0.0
            q[-1] = max(0.0, 1.0 - q.sum())
            if q.sum() > 1.0:  # rounding overshot: take it from the largest
                q[int(np.argmax(q))] -= q.sum() - 1.0
        if rng.random() < 0.05:
            q = np.zeros(k)
            q[rng.integers(k)] = 1.0
        sharp = q**2 / (q**2).sum()
        label = classes[int(rng.choice(k, p=sharp))]
        probs = [float(v) for v in q]
        probs[-1] = 1.0 - math.fsum(probs[:-1])  # sums to 1 to rounding
        probs[-1] = max(probs[-1], 0.0)
        pred = {c: v for c, v in zip(classes[:k], probs)}
        if k == 3 and rng.random() < 0.1:  # leave out a class whose probability is 0
            zero = [c for c, v in pred.items() if v == 0.0]
            if zero:
                del pred[zero[0]]
        out.append((label, pred, float(rng.choice(_WEIGHTS)) if weights else 1.0))
    return out


def yield_path_events(
    taxonomy, n: int = 200, seed: int = 0, weights: bool = True, distinct: bool = False
) -> list:
    """A miscalibrated stream of path forecasts over ``taxonomy`` (a dict child ->
    parent): a list of ``(y_true, y_pred, w)`` events.

    ``y_pred`` is a dict over the path of a random node (root excluded), non-increasing
    down the path, on a grid of 0.05 (heavy ties) unless ``distinct``, about 5% of
    the forecasts at the edges 0 and 1; ``y_true`` is a node of that path (a hit) half
    of the time, else any node but the root. Weights as :func:`yield_binary_events`.

    Examples
    --------
    >>> events = yield_path_events({"r": None, "a": "r", "a1": "a", "b": "r"}, 20, seed=1)
    >>> all(list(p.values()) == sorted(p.values(), reverse=True) for _, p, _ in events)
    True

    """
    from streamcal._taxonomy import parse_taxonomy

    paths = parse_taxonomy("yield_path_events", taxonomy).paths
    nodes = list(paths)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        path = paths[nodes[int(rng.integers(len(nodes)))]]
        q = np.sort(rng.random(len(path)))[::-1]
        if not distinct:
            q = np.round(q * 20.0) / 20.0
        if rng.random() < 0.05:
            q = np.where(rng.random(len(path)) < 0.5, 1.0, 0.0)
            q = np.sort(q)[::-1]
        pool = path if rng.random() < 0.5 else nodes
        y = pool[int(rng.integers(len(pool)))]
        w = float(rng.choice(_WEIGHTS)) if weights else 1.0
        out.append((y, {c: float(v) for c, v in zip(path, q)}, w))
    return out


def _is_multiclass(metric) -> bool:
    return bool(getattr(metric, "_multiclass", False))


def _is_path(metric) -> bool:
    return bool(getattr(metric, "_path", False))


def _is_binary(metric) -> bool:
    return not _is_multiclass(metric) and not _is_path(metric)


def yield_events(
    metric,
    n: int = 200,
    seed: int = 0,
    weights: bool = True,
    distinct: bool = False,
    **kw,
) -> list:
    """The stream of the kind ``metric`` takes (multiclass, path or binary).

    Examples
    --------
    >>> from streamcal.metrics import Brier
    >>> yield_events(Brier(), 2, seed=0)[0][1] in [i / 100 for i in range(101)]
    True

    """
    if _is_multiclass(metric):
        return yield_multiclass_events(n, seed, weights, distinct, **kw)
    if _is_path(metric):
        return yield_path_events(metric.taxonomy, n, seed, weights, distinct)
    return yield_binary_events(n, seed, weights, distinct)


# ---------------------------------------------------------------------------- helpers


def _feed(metric, events) -> None:
    update = metric.update
    for y, p, w in events:
        update(y, p, w)


def _fed(metric, events):
    m = metric.clone()
    _feed(m, events)
    return m


def _close(a: float, b: float, tol: float = TOL) -> bool:
    return abs(a - b) <= tol * (1.0 + abs(b))


def _check_value(metric, where: str) -> float:
    v = metric.get()
    assert isinstance(v, float) and math.isfinite(v), (
        f"{where}: get() = {v!r}, not a finite float"
    )
    return v


def _further(metric, seed: int = 5) -> list:
    """Feed further events (then reverts, when revertible); ``get()`` after each."""
    events = yield_events(metric, 80, seed=seed)
    out = []
    for y, p, w in events:
        metric.update(y, p, w)
        out.append(metric.get())
    if metric._revertible:
        for y, p, w in events[::-3]:
            metric.revert(y, p, w)
            out.append(metric.get())
    return out


def _round_trip(metric, how, states) -> None:
    from streamcal.metrics.base import StreamingMetric

    _common.check_round_trip(
        how, states, lambda m: [m.get()], _further, StreamingMetric, metric.clone()
    )


# ---------------------------------------------------------------------------- checks


def check_protocol(metric) -> None:
    """river's metric protocol: ``update`` / ``revert`` return None, ``bigger_is_better``
    and ``works_with`` give bools, ``repr`` works."""
    from river import linear_model

    m = metric.clone()
    (y, p, _), (y2, p2, _) = yield_events(m, 2, seed=11)
    assert m.update(y, p) is None, "update must return None"
    assert m.update(y2, p2, 2.0) is None, "update must return None"
    if m._revertible:
        assert m.revert(y2, p2, 2.0) is None, "revert must return None"
    assert isinstance(m.bigger_is_better, bool), "bigger_is_better must be a bool"
    assert isinstance(m.works_with(linear_model.LogisticRegression()), bool), (
        "works_with must return a bool"
    )
    assert m.requires_labels is False, (
        "calibration metrics score probabilities: requires_labels must be False"
    )
    assert isinstance(repr(m), str) and type(m).__name__ in repr(m)


def check_get_empty_then_finite(metric) -> None:
    """``get()`` is 0.0 before any event and after zero-weight events only, and a finite
    float after every event of a stream."""
    m = metric.clone()
    assert m.get() == 0.0, f"get() before any event must be 0.0, got {m.get()!r}"
    for y, p, _ in yield_events(m, 5, seed=12):
        m.update(y, p, 0.0)
    assert m.get() == 0.0, (
        f"get() after zero-weight events only must be 0.0, got {m.get()!r}"
    )
    for i, (y, p, w) in enumerate(yield_events(m, 200, seed=1)):
        m.update(y, p, w)
        _check_value(m, f"after event {i}")


def check_huge_weights(metric) -> None:
    """The weight rule (:mod:`streamcal._validation`): weights of 1e308 and 1.7e308,
    fed to a fresh and a fed metric, are accepted with a finite state and value, or
    refused with a ValueError naming ``w`` and the state unchanged."""
    (y, p, _), = yield_events(metric, 1, seed=22)

    def step(m, w):
        m.update(y, p, w)

    for m in (metric.clone(), _fed(metric, yield_events(metric, 100, seed=21))):
        _common.assert_huge_weights_refused_or_finite(m, step, lambda m: [m.get()])
    if _is_binary(metric):
        for m in (metric.clone(), _fed(metric, yield_events(metric, 100, seed=21))):
            _common.assert_huge_weights_refused_or_finite(
                m, lambda m, w: m.update_many([y, y], [p, p], [1.0, w]), lambda m: [m.get()]
            )


def check_zero_weight_changes_nothing(metric) -> None:
    """An event of weight 0 changes nothing: the whole state is byte-for-byte the same
    after ``update(..., w=0)`` (and ``revert(..., w=0)`` when revertible)."""
    for m in (metric.clone(), _fed(metric, yield_events(metric, 150, seed=2))):
        before = _common.fingerprint(m)
        value = m.get()
        for y, p, _ in yield_events(m, 40, seed=13):
            m.update(y, p, 0.0)
            m.update(y, p, 0)
            if m._revertible:
                m.revert(y, p, 0.0)
        assert m.get() == value, "a zero-weight event changed get()"
        assert _common.fingerprint(m) == before, "a zero-weight event changed the state"


def check_clone_is_independent(metric) -> None:
    """``clone()`` gives a fresh metric with the same parameters; updating a clone or a
    deep copy does not affect the original
    (:func:`~streamcal.checks._common.check_round_trip`)."""
    trained = _fed(metric, yield_events(metric, 150, seed=3))
    fresh = trained.clone()
    assert fresh.get() == 0.0, "a clone must not carry the original's events"
    assert _common.fingerprint(fresh) == _common.fingerprint(metric.clone()), (
        "a clone is not in the fresh state"
    )
    _round_trip(metric, "clone", [("", trained)])


def check_pickle_roundtrip(metric) -> None:
    """A pickled metric has the same value and state, and continues identically
    (:func:`~streamcal.checks._common.check_round_trip`)."""
    _round_trip(
        metric,
        "pickle",
        [("fresh", metric.clone()), ("fed", _fed(metric, yield_events(metric, 150, seed=6)))],
    )


def check_dict_roundtrip(metric) -> None:
    """``to_dict()`` is JSON-safe (no NaN or inf either) and ``from_dict`` restores the
    whole state, through the metric's class and through ``StreamingMetric``; the metric
    then continues identically (:func:`~streamcal.checks._common.check_round_trip`).
    Checked with int and str class labels for multiclass metrics."""
    kinds = (
        [{"classes": INT_CLASSES}, {"classes": STR_CLASSES}]
        if _is_multiclass(metric)
        else [{}]
    )
    for kw in kinds:
        fed = _fed(metric, yield_events(metric, 150, seed=7, **kw))
        _round_trip(metric, "dict", [("fresh", metric.clone()), (f"fed {kw}", fed)])


def check_malformed_snapshot_rejected(metric) -> None:
    """``from_dict`` rejects malformed snapshots with a ValueError and leaves the metric
    it was read from unchanged."""
    from streamcal.metrics.base import StreamingMetric

    m = _fed(metric, yield_events(metric, 60, seed=8))
    before = _common.fingerprint(m)
    good = json.loads(json.dumps(m.to_dict()))
    other = next(
        name
        for name, k in StreamingMetric._registry.items()
        if not issubclass(k, type(m)) and not inspect.isabstract(k)
    )
    for d in _common.malformed_snapshots(good, "Metric"):
        for reader in (type(m).from_dict, StreamingMetric.from_dict):
            _common.expect_raises(
                reader, (d,), (ValueError,), f"from_dict({str(d)[:60]})"
            )
    _common.expect_raises(
        type(m).from_dict,
        ({**good, "class": other},),
        (ValueError,),
        "a snapshot of another class",
    )
    _common.expect_raises(
        type(m).from_dict,
        ({**good, "state": {}},),
        (ValueError,),
        "an empty state",
    )
    assert _common.fingerprint(m) == before, (
        "reading a snapshot changed the metric it came from"
    )


def _sane(metric) -> None:
    """``get()`` finite after a few more events."""
    _feed(metric, yield_events(metric, 20, seed=3))
    _check_value(metric, "restored from a corrupted snapshot")


def check_corrupted_snapshot_rejected(metric) -> None:
    """``from_dict`` refuses the snapshots of a fed metric corrupted entry by entry
    with a ValueError, unless the corruption gives a valid state (see
    :func:`~streamcal.checks._common.check_corrupted_snapshots`)."""
    _common.check_corrupted_snapshots(_fed(metric, yield_events(metric, 60, seed=8)), _sane)


#: Bad ``y_pred`` for binary metrics: NaN, infinities, out of [0, 1], wrong types, dicts
#: that are not probability vectors over the binary labels (without the positive class
#: and not summing to 1, holding NaN, summing to more than 1, with other keys).
BAD_PROBABILITIES = [
    *BAD_SCORES,
    {False: 0.5},
    {True: float("nan")},
    {True: 0.7, False: 0.9},
    {True: 0.7},
    {True: 0.5, "other": 0.5},
]

#: Bad ``y_pred`` for multiclass metrics: NaN, negative or > 1 values, a sum far from 1,
#: not a dict, an empty dict.
BAD_MULTICLASS_PREDICTIONS = [
    *_common.BAD_PROBABILITY_DICTS,
    {float("nan"): 1.0},
    {b"x": 1.0},
    0.5,
    None,
    {},
]
#: Bad ``y_true`` for multiclass metrics: anything but a JSON scalar (str, int, bool,
#: finite float).
BAD_MULTICLASS_LABELS = [[1], {0: 1}, b"x", frozenset({1}), (float("nan"),), ("t", 1), None, float("nan")]


def check_update_many_matches_update(metric) -> None:
    """``update_many`` leaves exactly the state (and value) of a loop of ``update``,
    whatever the batch sizes; a bad element names its index and adds nothing."""
    events = yield_binary_events(600, seed=9)
    y, p, w = (list(col) for col in zip(*events))
    loop = _fed(metric, events)
    for cuts in ([600], [1, 299, 300], [250, 350]):
        batch = metric.clone()
        start = 0
        for n in cuts:
            batch.update_many(y[start : start + n], p[start : start + n], w[start : start + n])
            start += n
        assert batch.get() == loop.get(), f"update_many {cuts}: {batch.get()} != {loop.get()}"
        assert _common.snapshot(batch) == _common.snapshot(loop), f"update_many {cuts}: states differ"
    unweighted = metric.clone()
    unweighted.update_many(y, p)
    assert _common.snapshot(unweighted) == _common.snapshot(_fed(metric, [(a, b, 1.0) for a, b in zip(y, p)])), (
        "w=None is not unit weights"
    )
    _common.expect_bad_batches_rejected(
        loop,
        loop.update_many,
        (
            (([0, 2, 1], [0.1, 0.5, 0.9]), "y_true", 1),
            (([0, 1, 1], [0.1, 0.5, 1.5]), "y_pred", 2),
            (([0, 1, 1], [0.1, 0.5, 0.9], [1.0, float("nan"), 1.0]), "w", 1),
        ),
    )


def check_bad_input_leaves_state_unchanged(metric) -> None:
    """Bad ``y_true``, ``y_pred`` and ``w`` raise a ValueError/TypeError naming the
    argument, for ``update`` and (revertible metrics) ``revert``, and leave the state
    byte-for-byte unchanged; the metric still works afterwards."""
    multi = _is_multiclass(metric)
    for m in (metric.clone(), _fed(metric, yield_events(metric, 150, seed=9))):
        before = _common.fingerprint(m)
        value = m.get()
        if multi:
            good_y, good_p = 0, {0: 0.25, 1: 0.75}
            bad_p, bad_y = BAD_MULTICLASS_PREDICTIONS, BAD_MULTICLASS_LABELS
        elif _is_path(metric):
            good_y, good_p, _ = yield_path_events(metric.taxonomy, 1, seed=30)[0]
            bad_p, bad_y = _bad_path_input(metric.taxonomy, good_p)
        else:
            good_y, good_p = 1, 0.5
            bad_p, bad_y = BAD_PROBABILITIES, BAD_LABELS
        methods = [m.update, m.revert] if m._revertible else [m.update]
        for method in methods:
            for bad in bad_p:
                _common.expect_error(method, (good_y, bad), "y_pred", bad)
                _common.expect_error(method, (good_y, bad, 0.0), "y_pred", bad)
            for bad in bad_y:
                _common.expect_error(method, (bad, good_p), "y_true", bad)
            for bad in BAD_WEIGHTS:
                _common.expect_error(method, (good_y, good_p, bad), "w", bad)
            assert _common.fingerprint(m) == before, (
                f"bad input to {method.__name__} changed the state"
            )
        assert m.get() == value, "bad input changed get()"
        m.update(good_y, good_p)  # and the metric still works
        _check_value(m, "after bad input")


def check_revert_not_implemented(metric) -> None:
    """A non-revertible metric raises NotImplementedError from ``revert`` (pointing to
    its window parameters) and keeps its state."""
    m = _fed(metric, yield_events(metric, 50, seed=10))
    before = _common.fingerprint(m)
    y, p, w = yield_events(m, 50, seed=10)[-1]
    _common.expect_raises(
        m.revert,
        (y, p, w),
        (NotImplementedError,),
        "revert on a non-revertible metric",
    )
    assert _common.fingerprint(m) == before, "a refused revert changed the state"


def check_revert_any_order(metric) -> None:
    """Reverting any subset of the events, in any order, gives the value of a fresh
    metric fed the remaining events in their order (to :data:`TOL`); reverting them all
    gives back the empty value exactly, and the metric then behaves like a fresh one."""
    if not metric._revertible:
        return
    n = 160
    for seed, how in ((20, "random"), (20, "lifo"), (21, "late first")):
        events = yield_events(metric, n, seed=seed)
        m = _fed(metric, events)
        rng = np.random.default_rng(seed)
        if how == "random":
            order = rng.permutation(n).tolist()
        elif how == "lifo":  # last in, first out
            order = list(range(n - 1, -1, -1))
        else:  # the late events first (a multiclass metric must then forget the late class)
            cut = int(0.4 * n)
            order = (cut + rng.permutation(n - cut)).tolist() + rng.permutation(
                cut
            ).tolist()
        alive = [True] * n
        checkpoints = {10, 40, 80, n - int(0.4 * n), 120, 150}
        for j, i in enumerate(order, 1):
            y, p, w = events[i]
            m.revert(y, p, w)
            alive[i] = False
            if j in checkpoints:
                ref = _fed(metric, [e for e, a in zip(events, alive) if a])
                got, want = _check_value(m, f"after {j} reverts"), ref.get()
                assert _close(got, want), (
                    f"after reverting {j} events ({how} order): get() = {got!r}, a fresh metric on the rest gives {want!r}"
                )
        assert m.get() == 0.0, (
            f"after reverting every event get() must be 0.0, got {m.get()!r}"
        )
        tail = yield_events(metric, 60, seed=seed + 100)
        ref = _fed(metric, tail)
        _feed(m, tail)
        assert _close(m.get(), ref.get()), (
            f"after reverting everything, a new stream gives {m.get()!r}, a fresh metric {ref.get()!r}"
        )


def check_rolling_matches_tail(metric) -> None:
    """``river.utils.Rolling(type(m), window_size=k, **params)`` equals a fresh metric
    fed the last ``k`` events (zero-weight ones included: they occupy the window but
    weigh nothing), at many points of the stream, to :data:`TOL`."""
    if not metric._revertible:
        return
    from river import utils

    # a metric's own ``window_size`` (None when it is revertible) would clash with Rolling's
    params = {k: v for k, v in metric._get_params().items() if k != "window_size"}
    events = yield_events(metric, 220, seed=22)
    for k in (1, 7, 40):
        rolling = utils.Rolling(type(metric), window_size=k, **params)
        for t, (y, p, w) in enumerate(events, 1):
            rolling.update(y, p, w)
            if t % 23 == 0 or t == len(events) or t == k:
                ref = _fed(metric, events[max(0, t - k) : t])
                got, want = rolling.get(), ref.get()
                assert isinstance(got, float) and math.isfinite(got)
                assert _close(got, want), (
                    f"Rolling(window_size={k}) after {t} events: {got!r}; the last {k} events give {want!r}"
                )


def _pickled_size(obj) -> int:
    return len(pickle.dumps(obj, protocol=4))


def check_rolling_memory_bounded(metric) -> None:
    """In ``river.utils.Rolling`` over distinct forecasts, the metric's state stops
    growing: reverted events leave no residue (no empty per-value entries, no log)."""
    if not metric._revertible:
        return
    from river import utils

    params = {k: v for k, v in metric._get_params().items() if k != "window_size"}
    rolling = utils.Rolling(type(metric), window_size=30, **params)
    sizes = []
    for chunk in range(4):
        for y, p, w in yield_events(metric, 400, seed=30 + chunk, distinct=True):
            rolling.update(y, p, w)
        sizes.append(_pickled_size(rolling.obj))
    _common.assert_stops_growing(sizes, 200, "the state under Rolling")


def check_window_matches_tail(metric) -> None:
    """With ``window_size`` set, the metric equals a fresh metric with the same
    parameters fed the last ``window_size`` positive-weight events (to :data:`TOL`)."""
    k = getattr(metric, "window_size", None)
    if k is None:
        return
    events = yield_events(metric, 3 * k + 17, seed=23)
    m = metric.clone()
    positive = []
    for t, (y, p, w) in enumerate(events, 1):
        m.update(y, p, w)
        if w > 0:
            positive.append((y, p, w))
        if t % max(1, k // 2) == 0 or t == len(events):
            ref = _fed(metric, positive[-k:])
            got, want = _check_value(m, f"after {t} events"), ref.get()
            assert _close(got, want), (
                f"window_size={k} after {t} events: {got!r}; the last {k} events give {want!r}"
            )


def check_bounded_memory(metric) -> None:
    """With a window or grid parameter set (``_bounded_memory_params``), the state stops
    growing with the stream."""
    if not _common.has_bounded_memory(metric):
        return

    def learn_chunk(m, chunk):
        _feed(m, yield_events(m, 1500, seed=40 + chunk, distinct=True))

    _common.check_state_stops_growing(metric, learn_chunk, 200, _pickled_size)


def _bad_path_input(taxonomy, good_p: dict) -> tuple[list, list]:
    """Bad ``y_pred`` and ``y_true`` for a path metric: a forecast with a probability
    out of [0, 1], NaN, a bool or a string, with its top node left out or a stranger
    added, not a dict, empty; a label that is the root, no node, or no class label."""
    from streamcal._taxonomy import parse_taxonomy

    tax = parse_taxonomy("check", taxonomy)
    top = next(iter(good_p))
    bad_p = [
        {**good_p, top: 1.5},
        {**good_p, top: -0.1},
        {**good_p, top: float("nan")},
        {**good_p, top: True},
        {**good_p, top: "0.5"},
        {k: v for k, v in good_p.items() if k != top} or {"no such node": 0.5},
        {**good_p, "no such node": 0.5},
        0.5,
        None,
        {},
    ]
    return bad_p, [*BAD_MULTICLASS_LABELS, tax.root, "no such node"]


def check_degenerate_streams(metric) -> None:
    """``get()`` stays finite on degenerate streams: all labels 0, all labels 1, a
    constant forecast, forecasts only at 0 and 1 (confident misses), a single event."""
    multi = _is_multiclass(metric)
    base = yield_events(metric, 60, seed=24)
    if multi:
        streams = {
            "one class only": [(0, p, w) for _, p, w in base],
            "constant forecast": [(y, {0: 0.2, 1: 0.3, 2: 0.5}, w) for y, _, w in base],
            "one-hot misses": [(y, {0: 1.0, 1: 0.0}, w) for y, _, w in base if y != 0]
            + [(0, {1: 1.0}, 1.0)],
            "single event": [(2, {2: 1.0}, 1.0)],
        }
    elif _is_path(metric):
        y0, p0, _ = base[0]
        streams = {
            "one label only": [(y0, p, w) for _, p, w in base],
            "constant forecast": [(y, p0, w) for y, _, w in base],
            "forecasts 0 and 1": [
                (y, {c: float(i % 2) for c in p}, w) for i, (y, p, w) in enumerate(base)
            ],
            "single event": [(y0, p0, 1.0)],
        }
    else:
        streams = {
            "all labels 0": [(0, p, w) for _, p, w in base],
            "all labels 1": [(1, p, w) for _, p, w in base],
            "constant forecast": [(y, 0.3, w) for y, _, w in base],
            "forecasts 0 and 1": [
                (y, float(i % 2), w) for i, (y, _, w) in enumerate(base)
            ],
            "single event": [(1, 1.0, 1.0)],
        }
    for name, events in streams.items():
        m = metric.clone()
        for i, (y, p, w) in enumerate(events):
            m.update(y, p, w)
            _check_value(m, f"{name}, event {i}")
        if m._revertible:
            for y, p, w in events:
                m.revert(y, p, w)
            assert m.get() == 0.0, (
                f"{name}: reverting every event must give 0.0, got {m.get()!r}"
            )


def check_dict_prediction_matches_float(metric) -> None:
    """A binary metric fed river's ``predict_proba_one`` dicts ``{False: 1 - p, True:
    p}`` (or ``{0: .., 1: ..}``) ends in exactly the state it reaches when fed ``p``."""
    if not _is_binary(metric):
        return
    events = yield_events(metric, 120, seed=25)
    a = _fed(metric, events)
    b = metric.clone()
    for i, (y, p, w) in enumerate(events):
        b.update(bool(y), {False: 1.0 - p, True: p} if i % 2 else {0: 1.0 - p, 1: p}, w)
    assert _common.fingerprint(a) == _common.fingerprint(b), (
        "a dict y_pred is not scored like the float it holds"
    )


# ---------------------------------------------------------------------------- drivers


def yield_metric_checks(metric) -> typing.Iterator[typing.Callable]:
    """Yield the checks that apply to ``metric`` (a fresh instance).

    Each check is a function taking the metric and raising AssertionError on failure.

    Examples
    --------
    >>> from streamcal.metrics import LogLoss
    >>> names = [c.__name__ for c in yield_metric_checks(LogLoss())]
    >>> "check_rolling_matches_tail" in names, "check_revert_not_implemented" in names
    (True, False)

    """
    yield check_docstring_has_example
    yield check_protocol
    yield check_get_empty_then_finite
    yield check_zero_weight_changes_nothing
    yield check_huge_weights
    yield check_clone_is_independent
    yield check_pickle_roundtrip
    yield check_dict_roundtrip
    yield check_malformed_snapshot_rejected
    yield check_corrupted_snapshot_rejected
    yield check_bad_input_leaves_state_unchanged
    yield check_degenerate_streams
    if _is_binary(metric):
        yield check_dict_prediction_matches_float
        yield check_update_many_matches_update
    if metric._revertible:
        yield check_revert_any_order
        yield check_rolling_matches_tail
        yield check_rolling_memory_bounded
    else:
        yield check_revert_not_implemented
    if getattr(metric, "window_size", None) is not None:
        yield check_window_matches_tail
    if _common.has_bounded_memory(metric):
        yield check_bounded_memory


def check_metric(metric) -> None:
    """Run every applicable check on ``metric``; raise on the first failure.

    Examples
    --------
    >>> from streamcal.metrics import Brier
    >>> check_metric(Brier())

    """
    for check in yield_metric_checks(metric):
        check(metric)
