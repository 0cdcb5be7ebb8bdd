"""Checks that every path calibrator (:class:`streamcal.calibrators.PathCalibrator`)
must pass, built as the multiclass suite is: :func:`yield_path_checks` yields the checks
that apply (each a function of a *fresh* calibrator, which it never mutates: it works
on clones) and :func:`check_path_calibrator` runs them all. The test-suite parametrises
every ``_unit_test_params()`` against every check.

Streams come from :func:`yield_path_stream`: leaf scores on a grid (ties), some leaves
left out, labels on the predicted path or anywhere (inner nodes too), unit, fractional
and zero weights.

The semantics the checks hold a path calibrator to:

- ``learn_one`` returns None; before any learning ``predict_one`` returns the raw path
  probabilities (each node the total score of the leaves below it);
- every output is a dict over the path of the top leaf (root excluded, top first),
  values in [0, 1], non-increasing down the path; ``_check()`` holds after every event;
- ``predict_one`` changes nothing and neither it nor ``learn_one`` mutates or keeps
  its input;
- bad ``leaf_scores``, ``label`` or ``w`` raise a ValueError or TypeError naming the
  argument, and leave the state unchanged;
- huge weights are accepted with finite outputs or refused with the state unchanged;
- pickle, ``to_dict()`` / ``from_dict()`` and ``clone()`` behave as for every family,
  and corrupted snapshots are refused or restore a sane calibrator.

Examples
--------
>>> from streamcal.calibrators import PathCalibrator
>>> from streamcal.checks.path import check_path_calibrator, yield_path_checks
>>> cal = PathCalibrator({"r": None, "a": "r", "a1": "a", "a2": "a", "b": "r"}, n_bins=3)
>>> [c.__name__ for c in yield_path_checks(cal)][:3]
['check_docstring_has_example', 'check_learn_one_returns_none', 'check_cold_start']
>>> check_path_calibrator(cal)
"""

from __future__ import annotations

import copy
import math
import pickle
import typing

import numpy as np

from streamcal import _taxonomy as T
from streamcal.checks import _common
from streamcal.checks._common import BAD_WEIGHTS, check_docstring_has_example

__all__ = [
    "check_bad_input_leaves_state_unchanged",
    "check_clone_is_independent",
    "check_cold_start",
    "check_corrupted_snapshot_rejected",
    "check_dict_roundtrip",
    "check_huge_weights",
    "check_input_not_mutated_or_kept",
    "check_learn_one_returns_none",
    "check_outputs_are_monotone_paths",
    "check_path_calibrator",
    "check_pickle_roundtrip",
    "check_predict_does_not_change_state",
    "yield_path_checks",
    "yield_path_stream",
]

_WEIGHTS = [1.0, 1.0, 1.0, 0.5, 0.7, 2.25, 0.0]


def _tax(cal) -> T.Taxonomy:
    return T.parse_taxonomy(type(cal).__name__, cal.taxonomy)


def yield_path_stream(taxonomy, n: int = 200, seed: int = 0, weights: bool = True) -> list:
    """Events ``(leaf_scores, label, w)`` over ``taxonomy`` (see the module docstring).

    Examples
    --------
    >>> events = yield_path_stream({"r": None, "a": "r", "b": "r"}, 5, seed=1)
    >>> all(abs(sum(s.values()) - 1.0) < 1e-12 for s, _, _ in events)
    True

    """
    tax = T.parse_taxonomy("yield_path_stream", taxonomy)
    leaves, nodes = list(tax.leaves), list(tax.paths)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        k = int(rng.integers(1, len(leaves) + 1))
        chosen = rng.permutation(len(leaves))[:k].tolist()
        cuts = np.sort(rng.integers(0, 21, k - 1))
        parts = np.diff(np.concatenate([[0], cuts, [20]])).tolist()
        scores = {leaves[i]: v / 20 for i, v in zip(chosen, parts) if v > 0}
        top = max(scores, key=scores.get)
        pool = tax.paths[top] if rng.random() < 0.6 else nodes
        y = pool[int(rng.integers(len(pool)))]
        out.append((scores, y, float(rng.choice(_WEIGHTS)) if weights else 1.0))
    return out


def _trained(cal, n: int = 200, seed: int = 0):
    c = cal.clone()
    for s, y, w in yield_path_stream(cal.taxonomy, n, seed):
        c.learn_one(s, y, w)
    return c


def _probes(cal) -> list:
    return [s for s, _, _ in yield_path_stream(cal.taxonomy, 15, seed=99)]


def _outputs(cal) -> list:
    return [cal.predict_one(p) for p in _probes(cal)]


def _further(obj) -> list:
    seen = []
    for s, y, w in yield_path_stream(obj.taxonomy, 40, seed=7):
        seen.append(obj.predict_one(s))
        obj.learn_one(s, y, w)
    return seen


def _fingerprint(obj) -> bytes:
    """The state as its snapshot's JSON text and the pickled remaining attributes (the
    nested binners are compared by their snapshots: pickle shares equal objects in the
    original and not in a copy, which changes the bytes but not the state)."""
    rest = {k: v for k, v in vars(obj).items() if k not in ("_cals", "_template", "_tax")}
    return pickle.dumps((_common.snapshot(obj), sorted(rest.items())), protocol=4)


def _assert_path(cal, out, scores: dict, where: str) -> None:
    tax = _tax(cal)
    top = max(scores, key=scores.get)
    assert isinstance(out, dict) and list(out) == list(tax.paths[top]), (
        f"{where}: {out!r} is not the path of the top leaf {top!r}"
    )
    vals = list(out.values())
    assert all(isinstance(v, float) and 0.0 <= v <= 1.0 for v in vals), f"{where}: {out!r}"
    assert all(a >= b for a, b in zip(vals, vals[1:])), f"{where}: not monotone: {out!r}"


# ---------------------------------------------------------------------------- checks


def check_learn_one_returns_none(cal) -> None:
    """``learn_one`` returns None (river's protocol)."""
    c = cal.clone()
    for s, y, w in yield_path_stream(cal.taxonomy, 5, seed=1):
        assert c.learn_one(s, y, w) is None, "learn_one must return None"


def check_cold_start(cal) -> None:
    """Before any learning, ``predict_one`` returns the raw path probabilities (each
    node the correctly rounded total score of the leaves below it)."""
    c = cal.clone()
    tax = _tax(c)
    for p in _probes(c):
        top = max(p, key=p.get)
        want = {
            n: min(1.0, math.fsum(v for k, v in p.items() if n in tax.paths[k]))
            for n in tax.paths[top]
        }
        assert c.predict_one(p) == want, f"cold start: {c.predict_one(p)!r} != {want!r}"


def check_outputs_are_monotone_paths(cal) -> None:
    """After every event: ``_check()`` holds and every output is a path dict, in [0,
    1], non-increasing down the path."""
    c = cal.clone()
    probes = _probes(c)
    for t, (s, y, w) in enumerate(yield_path_stream(cal.taxonomy, 150, seed=2)):
        c.learn_one(s, y, w)
        c._check()
        _assert_path(c, c.predict_one(s), s, f"event {t}")
        if t % 25 == 0:
            for p in probes:
                _assert_path(c, c.predict_one(p), p, f"event {t}, probe {p!r}")


def check_predict_does_not_change_state(cal) -> None:
    """``predict_one`` (and ``raw_path``) leave the state unchanged."""
    c = _trained(cal)
    before = _fingerprint(c)
    _outputs(c)
    for p in _probes(c):
        c.raw_path(p)
    assert _fingerprint(c) == before, "predict_one changed the state"


def check_input_not_mutated_or_kept(cal) -> None:
    """Neither ``learn_one`` nor ``predict_one`` mutates its ``leaf_scores``, nor keeps
    a reference that a later mutation by the caller would change."""
    c = cal.clone()
    events = yield_path_stream(cal.taxonomy, 60, seed=4)
    for s, y, w in events:
        kept = dict(s)
        c.learn_one(s, y, w)
        c.predict_one(s)
        assert s == kept, "learn_one / predict_one mutated leaf_scores"
    before = _fingerprint(c)
    for s, _, _ in events:
        for k in s:
            s[k] = 0.0
    assert _fingerprint(c) == before, "the calibrator kept a reference to its input"


def check_bad_input_leaves_state_unchanged(cal) -> None:
    """Bad ``leaf_scores`` (a non-leaf key, a sum off 1, NaN, not a dict, empty), bad
    ``label`` (the root, no node, NaN, not a class label) and bad ``w`` raise a
    ValueError or TypeError naming the argument, and change nothing."""
    tax = _tax(cal)
    inner = [n for n in tax.paths if n not in tax.leaf_set]
    leaf = tax.leaves[0]
    bad_scores = [{leaf: 0.5}, {leaf: float("nan")}, {"no such node": 1.0}, 0.5, None, {}]
    bad_scores += [{n: 1.0} for n in inner[:1]]
    bad_labels = [tax.root, "no such node", float("nan"), [leaf], None]
    for c in (cal.clone(), _trained(cal, 80, seed=5)):
        before = _fingerprint(c)
        for bad in bad_scores:
            _common.expect_error(c.learn_one, (bad, leaf), "leaf_scores", bad)
            _common.expect_error(c.predict_one, (bad,), "leaf_scores", bad)
        for bad in bad_labels:
            _common.expect_error(c.learn_one, ({leaf: 1.0}, bad), "label", bad)
        for bad in BAD_WEIGHTS:
            _common.expect_error(c.learn_one, ({leaf: 1.0}, leaf, bad), "w", bad)
        assert _fingerprint(c) == before, "bad input changed the state"
        c.learn_one({leaf: 1.0}, leaf)
        c._check()


def check_huge_weights(cal) -> None:
    """Weights of 1e308 and 1.7e308 are accepted with finite outputs and state, or
    refused with the state unchanged (:mod:`streamcal._validation`'s weight rule)."""
    (s, y, _), = yield_path_stream(cal.taxonomy, 1, seed=22)

    def outputs(c):
        return [v for out in _outputs(c) for v in out.values()]

    for c in (cal.clone(), _trained(cal, 100, seed=21)):
        _common.assert_huge_weights_refused_or_finite(c, lambda c, w: c.learn_one(s, y, w), outputs)


def _round_trip(cal, how: str, states) -> None:
    from streamcal.calibrators import PathCalibrator

    _common.check_round_trip(how, states, _outputs, _further, PathCalibrator, cal.clone(), _fingerprint)


def check_clone_is_independent(cal) -> None:
    """``clone()`` is fresh (cold start) and independent of the original."""
    _round_trip(cal, "clone", [("", _trained(cal))])


def check_pickle_roundtrip(cal) -> None:
    """A pickled calibrator predicts and learns exactly like the original."""
    _round_trip(cal, "pickle", [("fresh", cal.clone()), ("trained", _trained(cal, 150, seed=13))])


def check_dict_roundtrip(cal) -> None:
    """``to_dict()`` is JSON-safe and ``from_dict`` restores a calibrator that predicts
    and learns exactly like the original (its taxonomy as a dict, whatever form it was
    given in)."""
    _round_trip(cal, "dict", [("fresh", cal.clone()), ("trained", _trained(cal, 150, seed=14))])


def _assert_paths(cal) -> None:
    for p in _probes(cal):
        _assert_path(cal, cal.predict_one(p), p, "restored from a corrupted snapshot")


def _learn_short_stream(cal) -> None:
    for s, y, w in yield_path_stream(cal.taxonomy, 20, seed=3):
        cal.learn_one(s, y, w)


def check_corrupted_snapshot_rejected(cal) -> None:
    """``from_dict`` refuses corrupted snapshots with a ValueError, unless the
    corruption gives a valid, sane state."""
    sane = _common.sane_while_learning(_assert_paths, _learn_short_stream)
    _common.check_corrupted_snapshots(_trained(cal, 60), sane)


# ---------------------------------------------------------------------------- drivers


def yield_path_checks(cal) -> typing.Iterator[typing.Callable]:
    """Yield the checks that apply to the path calibrator ``cal`` (a fresh instance)."""
    yield check_docstring_has_example
    yield check_learn_one_returns_none
    yield check_cold_start
    yield check_outputs_are_monotone_paths
    yield check_predict_does_not_change_state
    yield check_input_not_mutated_or_kept
    yield check_bad_input_leaves_state_unchanged
    yield check_huge_weights
    yield check_clone_is_independent
    yield check_pickle_roundtrip
    yield check_dict_roundtrip
    yield check_corrupted_snapshot_rejected


def check_path_calibrator(cal) -> None:
    """Run every applicable check on ``cal``; raise on the first failure."""
    for check in yield_path_checks(cal):
        check(copy.deepcopy(cal))

