"""Pieces shared by the check suites of calibrators, metrics and monitors (private).

The suites differ in what they feed and what they compare; what they share is here:
the stream of tied scores they are built on, the bad values of the input checks, how a
state is written down to be compared (a JSON snapshot, a fingerprint of every
attribute), and the assertions about errors, snapshots and memory.
"""

from __future__ import annotations

import copy
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
    "check_corrupted_snapshots",
    "check_round_trip",
    "check_docstring_has_example",
    "concrete_classes",
    "corrupted_snapshots",
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

# Probability dicts that every multiclass input check refuses (a non-finite, out of
# range, not summing to 1 or non-real value): the shared head of the multiclass
# calibrators' and metrics' bad-prediction lists.
BAD_PROBABILITY_DICTS = [
    {0: float("nan"), 1: 0.5},
    {0: 1.5, 1: -0.5},
    {0: -0.0001, 1: 1.0001},
    {0: 0.5, 1: 0.3},
    {0: 0.9, 1: 0.9},
    {0: "0.5", 1: 0.5},
]


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


def expect_bad_batches_rejected(obj, fn, cases) -> None:
    """Each ``(args, argument, index)`` of ``cases`` makes the batch method ``fn`` of
    ``obj`` raise the template error naming ``argument`` and ``index``, and leaves the
    state of ``obj`` unchanged (the shared tail of the ``*_many`` checks)."""
    before = snapshot(obj)
    for args, argument, index in cases:
        expect_error(fn, args, argument, f"a bad element at index {index}")
        try:
            fn(*args)
        except (ValueError, TypeError) as exc:
            assert f"index {index}" in str(exc), f"the error does not name index {index}: {exc}"
    assert snapshot(obj) == before, "a bad batch changed the state"


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
    try:
        restored = type(obj).from_dict(json.loads(text))
    except ValueError as exc:  # the object's own snapshot: refusing it is the bug
        raise AssertionError(f"{label}: from_dict refused the object's own snapshot: {exc}") from exc
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


def check_round_trip(how: str, states, outputs, further, base: type, fresh, fp=fingerprint):
    """The round-trip check of every family (calibrators, metrics, monitors, keyed
    calibrators): ``how`` is ``"pickle"``, ``"dict"`` (``to_dict`` through JSON text and
    ``from_dict``, see :func:`restore_from_dict`, ``base`` the family's base class) or
    ``"clone"``; ``states`` is a list of ``(where, obj)``, objects that the check may
    feed further.

    - ``"pickle"`` (at every protocol) and ``"dict"``: the copy has the class, the outputs
      (``outputs(obj)``, a list compared exactly), the snapshot and the whole state
      (``fp``) of the original; fed the same further events (``further(obj)`` feeds
      them and returns what an observer saw along the way), both see exactly the same
      and end with the same snapshot.
    - ``"clone"``: the clone has the class and parameters of the original and the
      snapshot and outputs of ``fresh`` (an unfitted object); feeding the clone, or a
      deep copy, leaves the original's snapshot and state (``fp``) unchanged.

    Examples
    --------
    >>> from streamcal.metrics import Brier
    >>> m = Brier()
    >>> m.update(1, 0.8)
    >>> def further(o):
    ...     o.update(0, 0.3)
    ...     return [o.get()]
    >>> for how in ("pickle", "dict", "clone"):
    ...     check_round_trip(how, [("fed", m)], lambda o: [o.get()], further, Brier, Brier())

    """
    for where, obj in states:
        label = f"{how} {where}" if where else how
        if how == "clone":
            before = fp(obj), snapshot(obj)
            clone = obj.clone()
            assert type(clone) is type(obj), f"{label}: the class changed"
            assert clone._get_params() == obj._get_params(), f"{label}: the parameters changed"
            assert snapshot(clone) == snapshot(fresh), f"{label}: the clone is not fresh"
            assert outputs(clone) == outputs(fresh), f"{label}: the clone carries learnt state"
            further(clone)
            assert (fp(obj), snapshot(obj)) == before, (
                f"{label}: feeding the clone changed the original"
            )
            further(copy.deepcopy(obj))
            assert (fp(obj), snapshot(obj)) == before, (
                f"{label}: feeding a deep copy changed the original"
            )
            continue
        if how == "pickle":  # every protocol, each copy of the object as it is then
            copies = [(f"{label} protocol {protocol}", lambda p=protocol: pickle.loads(pickle.dumps(obj, p)))
                      for protocol in range(pickle.HIGHEST_PROTOCOL + 1)]
        elif how == "dict":
            copies = [(label, lambda: restore_from_dict(obj, base, f" {where}" if where else "", fp))]
        else:
            raise ValueError(f"how must be 'pickle', 'dict' or 'clone', not {how!r}")
        for label, restore in copies:
            restored = restore()
            assert type(restored) is type(obj), f"{label}: the class changed"
            assert outputs(restored) == outputs(obj), f"{label}: the outputs changed"
            assert snapshot(restored) == snapshot(obj), f"{label}: the snapshot changed"
            assert fp(restored) == fp(obj), f"{label}: the whole state was not restored"
            assert further(restored) == further(obj), f"{label}: the outputs diverged later"
            assert snapshot(restored) == snapshot(obj), (
                f"{label}: the snapshots diverged after further events"
            )


def malformed_snapshots(good: dict, kind: str) -> list:
    """Malformed versions of the snapshot ``good`` that every ``from_dict`` rejects with
    a ValueError before building anything: not a dict, missing entries, an
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


def has_bounded_memory(obj) -> bool:
    """Whether a parameter that bounds ``obj``'s memory (one it names in
    ``_bounded_memory_params``: a window, a grid) is set; then the family's
    ``check_bounded_memory`` applies."""
    names = getattr(obj, "_bounded_memory_params", ())
    return any(getattr(obj, name, None) is not None for name in names)


def check_state_stops_growing(obj, learn_chunk, slack: int, size=None) -> None:
    """Learn four equal chunks of a stream into a clone of ``obj`` (``learn_chunk(clone,
    i)`` for the i-th); the size after each (``size(clone)``, by default the length of
    its pickle) stops growing (:func:`assert_stops_growing`)."""
    c = obj.clone()
    sizes = []
    for chunk in range(4):
        learn_chunk(c, chunk)
        sizes.append(len(pickle.dumps(c)) if size is None else size(c))
    assert_stops_growing(sizes, slack)


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


# ------------------------------------------------------------------ corrupted snapshots

#: How many entries of each kind the corruptions touch (chosen at random, seeded).
_PER_KIND = 12


def _paths(tree, prefix=()):
    """``(path, value)`` of every entry of ``tree`` (dicts and lists), depth first."""
    stack = [(prefix, tree)]
    while stack:
        path, value = stack.pop()
        if path:
            yield path, value
        if isinstance(value, dict):
            stack.extend((path + (k,), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((path + (i,), v) for i, v in enumerate(value))


def _replaced(d: dict, path: tuple, value=None, drop: bool = False) -> dict:
    """A deep copy of ``d`` with the entry at ``path`` replaced by ``value`` (or
    dropped)."""
    out = json.loads(json.dumps(d))
    node = out
    for key in path[:-1]:
        node = node[key]
    if drop:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return out


def _where(path: tuple) -> str:
    """The name ``from_dict`` gives the entry at ``path`` (``state['window'][3]``)."""
    return path[0] + "".join(f"[{k!r}]" if isinstance(k, str) else f"[{k}]" for k in path[1:])


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def corrupted_snapshots(good: dict, seed: int = 0):
    """Corrupted versions of the (JSON) snapshot ``good``, built from its entries, as
    ``(what, snapshot, invalid)``. ``invalid`` is True when the corruption is invalid
    by construction (``from_dict`` must refuse it); otherwise it may happen to give a
    valid state, which must then restore to an object that passes its checks.

    Invalid by construction: no ``format`` or a ``format`` that is ``True``, a float or
    unknown; an unknown class; an unknown entry in ``params``, ``state`` or the snapshot;
    a missing state entry; NaN or an infinity in place of a number (of the parameters
    or the state); a structure nested 100,000 deep in place of an entry. Possibly valid:
    a number made negative, huge, or one more (an int); a list shortened, lengthened or
    emptied; an entry of the wrong type; a parameter changed so that it may disagree
    with the state; a parameter dropped (its default).

    Examples
    --------
    >>> from streamcal.metrics import Brier
    >>> cases = list(corrupted_snapshots(Brier().to_dict()))
    >>> [what for what, _, invalid in cases if invalid][:3]
    ['no format', 'format True', 'format 2.0']

    """
    rng = np.random.default_rng(seed)
    state, params = good["state"], good["params"]

    def sample(items):
        items = list(items)
        if len(items) > _PER_KIND:
            items = [items[i] for i in sorted(rng.choice(len(items), _PER_KIND, replace=False))]
        return items

    rest = {k: v for k, v in good.items() if k != "format"}
    yield "no format", rest, True
    yield "format True", {**good, "format": True}, True
    yield "format 2.0", {**good, "format": float(good["format"])}, True
    yield "format 99", {**good, "format": 99}, True
    yield "unknown class", {**good, "class": "NoSuchClass"}, True
    yield "unknown top-level entry", {**good, "extra": 1}, True
    yield "unknown parameter", {**good, "params": {**params, "no_such_param": 1}}, True
    yield "unknown state entry", {**good, "state": {**state, "no_such_entry": 1}}, True
    for key in state:
        yield f"state entry {key!r} dropped", _replaced(good, ("state", key), drop=True), True
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    for key in list(state)[:2]:
        yield f"state entry {key!r} nested 100,000 deep", {**good, "state": {**state, key: deep}}, True

    entries = list(_paths(state, ("state",))) + list(_paths(params, ("params",)))
    numbers = sample((p, v) for p, v in entries if _is_number(v))
    for path, v in numbers:
        for bad in (float("nan"), float("inf"), float("-inf")):
            yield f"{_where(path)} = {bad}", _replaced(good, path, bad), True
        yield f"{_where(path)} negative", _replaced(good, path, -abs(v) - 1), False
        yield f"{_where(path)} huge", _replaced(good, path, 1e300 if isinstance(v, float) else 10**18), False
        if isinstance(v, int):
            yield f"{_where(path)} + 1", _replaced(good, path, v + 1), False
        yield f"{_where(path)} a string", _replaced(good, path, "1"), False
    lists = sample((p, v) for p, v in entries if isinstance(v, list))
    for path, v in lists:
        if v:
            yield f"{_where(path)} shortened", _replaced(good, path, v[:-1]), False
            yield f"{_where(path)} lengthened", _replaced(good, path, v + v[-1:]), False
            yield f"{_where(path)} emptied", _replaced(good, path, []), False
        yield f"{_where(path)} a number", _replaced(good, path, 0), False
    others = sample((p, v) for p, v in entries if isinstance(v, (dict, str, bool)) or v is None)
    for path, v in others:
        yield f"{_where(path)} a list", _replaced(good, path, [v]), False
        yield f"{_where(path)} a number", _replaced(good, path, 2), False
    for key in params:
        yield f"parameter {key!r} dropped", _replaced(good, ("params", key), drop=True), False


def sane_while_learning(assert_outputs, learn):
    """The ``sane`` function of :func:`check_corrupted_snapshots` for a calibrator:
    twice, ``assert_outputs(cal)`` (its predictions valid), then ``learn(cal)`` (a short
    stream) and ``cal._check()`` (when it has one); a restored calibrator must predict,
    learn and predict again."""

    def sane(cal) -> None:
        for _ in range(2):
            assert_outputs(cal)
            learn(cal)
            if hasattr(cal, "_check"):
                cal._check()

    return sane


def check_corrupted_snapshots(obj, sane, seed: int = 0) -> None:
    """``from_dict`` refuses each of :func:`corrupted_snapshots` of ``obj.to_dict()``
    that is invalid by construction with a ValueError (naming the entry, for a NaN or
    an infinity; a state entry dropped may be derived again, as from a snapshot an
    earlier version wrote, and is then checked as the valid ones are), and any
    other either with a ValueError or by restoring an object
    that passes ``_check()`` (when it has one) and ``sane``, a function of the family's
    suite that uses the object and raises AssertionError if it misbehaves; a failing
    ``from_dict`` leaves ``obj`` unchanged. Never another exception."""
    good = json.loads(json.dumps(obj.to_dict(), allow_nan=False))
    before = fingerprint(obj)
    for what, d, invalid in corrupted_snapshots(good, seed):
        try:
            restored = type(obj).from_dict(d)
        except ValueError as exc:
            if "= nan" in what or "= inf" in what or "= -inf" in what:
                where = what.split(" = ")[0]
                assert where in str(exc), f"the error for {what} does not name the entry: {exc}"
            continue
        except Exception as exc:
            raise AssertionError(
                f"from_dict raised {type(exc).__name__} (not ValueError) for {what}: {exc}"
            ) from exc
        # a state entry an earlier version did not write is derived from the rest by
        # the class's ``_upgrade_snapshot`` (only then is a dropped entry accepted)
        invalid = invalid and not (what.startswith("state entry") and what.endswith("dropped"))
        assert not invalid, f"from_dict accepted a snapshot with {what}"
        try:
            if hasattr(restored, "_check"):
                restored._check()
            sane(restored)
        except Exception as exc:
            raise AssertionError(
                f"from_dict accepted a snapshot with {what}, which then misbehaves: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
    assert fingerprint(obj) == before, "reading snapshots changed the object they came from"
