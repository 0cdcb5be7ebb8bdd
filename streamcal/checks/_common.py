"""Pieces shared by the check suites of calibrators, metrics and monitors (private).

The suites differ in what they feed and what they compare; what they share is here:
the stream of tied scores they are built on, the bad values of the input checks, how a
state is written down to be compared (a JSON snapshot, a fingerprint of every
attribute), and the assertions about errors, snapshots and memory.
"""

from __future__ import annotations

import inspect
import json
import pickle

import numpy as np

__all__ = [
    "BAD_LABELS",
    "BAD_SCORES",
    "BAD_WEIGHTS",
    "assert_huge_weights_refused_or_finite",
    "assert_stops_growing",
    "check_docstring_has_example",
    "concrete_classes",
    "expect_error",
    "expect_raises",
    "fingerprint",
    "malformed_snapshots",
    "restore_from_dict",
    "snapshot",
    "tied_scores",
    "yield_cases",
]

#: Bad scores (or binary probabilities): NaN, infinity, out of [0, 1], wrong types.
BAD_SCORES = [float("nan"), float("inf"), -0.1, 1.5, "0.5", None, True, 1 + 0j]
#: Bad binary labels.
BAD_LABELS = [2, -1, 0.5, float("nan"), "1", None]
#: Bad sample weights.
BAD_WEIGHTS = [-1.0, float("nan"), float("inf"), "1", None]


def tied_scores(rng: np.random.Generator, n: int, distinct: bool = False) -> np.ndarray:
    """``n`` scores ~ Beta(2, 2) drawn from ``rng``; unless ``distinct``, rounded to two
    decimals (heavy ties) with about 3% set to exactly 0 or 1.

    Examples
    --------
    >>> s = tied_scores(np.random.default_rng(0), 400)
    >>> len(set(s.tolist())) <= 101, {0.0, 1.0} <= set(s.tolist())
    (True, True)

    """
    s = rng.beta(2.0, 2.0, n)
    if not distinct:
        s = np.round(s, 2)
        edge = rng.random(n) < 0.03
        s[edge] = rng.integers(0, 2, edge.sum())
    return s


def check_docstring_has_example(obj) -> None:
    """The class documents itself with a doctest example."""
    doc = inspect.getdoc(type(obj)) or ""
    assert "Examples" in doc and ">>>" in doc, (
        f"{type(obj).__name__} lacks a doctest example"
    )


def snapshot(obj) -> str:
    """``obj.to_dict()`` as canonical JSON text (NaN and infinity refused)."""
    return json.dumps(obj.to_dict(), sort_keys=True, allow_nan=False)


def fingerprint(obj) -> bytes:
    """Bytes of the whole internal state, attribute order aside: catches hidden state
    that a snapshot forgets, or that a failed update touched, even when the outputs do
    not show it yet. A class that pickles a reduced state (``__getstate__``) is
    fingerprinted by that state."""
    getstate = getattr(type(obj), "__getstate__", None)
    custom = getstate is not None and getstate is not getattr(
        object, "__getstate__", None
    )
    state = obj.__getstate__() if custom else vars(obj)
    return pickle.dumps(sorted(state.items()), protocol=4)


def expect_error(fn, args: tuple, argument: str, value) -> None:
    """``fn(*args)`` raises a ValueError or TypeError whose message names ``argument``
    and states the domain ("must be") and the value ("Got")."""
    try:
        fn(*args)
    except (ValueError, TypeError) as exc:
        msg = str(exc)
        assert f"'{argument}'" in msg, (
            f"the error for {value!r} does not name '{argument}': {msg}"
        )
        assert "must be" in msg and "Got" in msg, (
            f"the error does not state the domain and the value: {msg}"
        )
        return
    raise AssertionError(f"no ValueError/TypeError for {argument}={value!r}")


def assert_huge_weights_refused_or_finite(obj, step, outputs, n: int = 2) -> None:
    """The weight rule of :mod:`streamcal._validation`, whatever the object: events of
    weight 1e308, then 1.7e308 (``step(obj, w)`` feeds one), ``n`` of each, are either
    accepted with a finite state (a snapshot without NaN or infinity, ``outputs(obj)``
    finite numbers) or refused with a ValueError naming ``w`` that leaves the state
    exactly as it was; a refused weight stays refused."""
    for w in (1e308, 1.7e308):
        refused = 0
        for _ in range(n):
            before, text = fingerprint(obj), snapshot(obj)
            try:
                step(obj, w)
            except ValueError as exc:
                msg = str(exc)
                assert "'w' argument" in msg and "must be" in msg and f"Got {w!r}" in msg, msg
                assert fingerprint(obj) == before and snapshot(obj) == text, (
                    f"a refused weight {w!r} changed the state"
                )
                refused += 1
                if refused == 2:
                    break
                continue
            assert not refused, f"a weight of {w!r} was refused, then accepted"
            try:
                snapshot(obj)
            except ValueError:
                raise AssertionError(f"a weight of {w!r} left NaN or infinity in the state") from None
            values = outputs(obj)
            assert all(np.isfinite(v) for v in values), f"outputs {values} after a weight of {w!r}"


def expect_raises(fn, args: tuple, exc_types, what: str) -> None:
    """``fn(*args)`` raises one of ``exc_types``."""
    try:
        fn(*args)
    except exc_types:
        return
    raise AssertionError(f"no {' / '.join(e.__name__ for e in exc_types)} for {what}")


def restore_from_dict(obj, base: type, where: str = "", fp=fingerprint):
    """Round-trip ``obj`` through JSON text with ``to_dict`` / ``from_dict`` and return
    the copy, after checking that it has the class, parameters, snapshot (stable) and
    fingerprint (``fp``) of the original and that ``base.from_dict`` finds the class
    too."""
    label = f"from_dict{where}"
    text = json.dumps(obj.to_dict(), allow_nan=False)
    restored = type(obj).from_dict(json.loads(text))
    assert type(restored) is type(obj), f"{label}: the class changed"
    assert restored._get_params() == obj._get_params(), (
        f"{label}: the parameters changed"
    )
    assert json.dumps(restored.to_dict(), allow_nan=False) == text, (
        f"{label}: to_dict is not stable across a round trip"
    )
    assert fp(restored) == fp(obj), f"{label}: the whole state was not restored"
    assert type(base.from_dict(json.loads(text))) is type(obj), (
        f"{base.__name__}.from_dict picked the wrong class"
    )
    return restored


def malformed_snapshots(good: dict, kind: str) -> list:
    """Malformed versions of the snapshot ``good`` that every ``from_dict`` rejects with
    a ValueError or TypeError before building anything: not a dict, missing entries, an
    unknown ``kind`` class, a wrong format, ``params`` or ``state`` not a dict."""
    name = good["class"]
    return [
        None,
        [],
        {},
        {"class": name},
        {**good, "class": f"NoSuch{kind}"},
        {**good, "format": -1},
        {**good, "params": []},
        {**good, "state": []},
    ]


def assert_stops_growing(sizes: list, slack: int, what: str = "the state") -> None:
    """``sizes`` (pickled sizes after equal chunks of a stream) stop growing: the last is
    at most 1.25 times the second plus ``slack`` bytes."""
    assert sizes[3] <= 1.25 * sizes[1] + slack, (
        f"{what} keeps growing: pickled sizes {sizes}"
    )


def concrete_classes(module, base: type, exclude=()) -> list:
    """The concrete subclasses of ``base`` that ``module`` exports (its ``__all__``),
    but those in ``exclude``: what the test-suite runs the checks on."""
    return [
        obj
        for name in module.__all__
        if inspect.isclass(obj := getattr(module, name))
        and issubclass(obj, base)
        and not inspect.isabstract(obj)
        and obj not in exclude
    ]


def yield_cases(classes, yield_checks):
    """``(name, obj, check)`` for each class, each of its ``_unit_test_params()`` and
    each check that ``yield_checks(obj)`` yields; ``name`` names the three, e.g.
    ``"ECE(n_bins=5)-check_protocol"``. The test-suite parametrises over these."""
    for klass in classes:
        for params in klass._unit_test_params():
            obj = klass(**params)
            args = ", ".join(f"{k}={v!r}" for k, v in params.items())
            for check in yield_checks(obj):
                yield f"{klass.__name__}({args})-{check.__name__}", obj, check
