"""The snapshot machinery shared by calibrators, metrics and monitors (private).

The base class of each family (:class:`streamcal.base.BinaryCalibrator`,
:class:`streamcal.metrics.base.StreamingMetric`, :class:`streamcal.monitor.base.BaseMonitor`)
derives from :class:`Snapshot` and gives it a class registry of its own, which every
subclass joins when it is defined, so that ``Base.from_dict`` finds a subclass by the
name stored in the snapshot. A snapshot is::

    {"class": <class name>, "format": SNAPSHOT_FORMAT,
     "params": {<constructor argument>: <encoded value>}, "state": <_get_state()>}

Parameter values are encoded by :func:`encode_param`: numpy scalars become their Python
twins, tuples lists, dicts are encoded value by value, and an object of a family that
nests (a calibrator as a calibeater's ``base``, a monitor as a multiclass monitor's
template) becomes ``{<family key>: <its own full snapshot>}``, so that it comes back
with its learnt state. :func:`decode_param` undoes each step.

Restoring validates before it builds (:func:`from_dict`): the format tag, the class,
the parameters (through the constructor's own checks, the state not yet built), the
shape of the snapshot (JSON types, finite numbers, bounded nesting), the class's own
checks of its state (:meth:`Snapshot._validate_state`: domains and consistency with
the parameters), the entries of the state, and, on the object built from it, the
invariants (``_check()``) and that the state is the one the object writes back
(``_get_state()``), so that derived entries agree with what they derive from. Every
failure is a ValueError naming the first bad entry; nothing is returned or changed.

Classes are registered under :func:`class_key`: a streamcal class under its bare name
(as every format has written it), any other class under ``module.QualName``, so a user
class can never take the place of a built-in one.
"""

from __future__ import annotations

import abc
import contextlib
import copy
import importlib
import inspect
import math
import numbers
import typing

from streamcal import _json
from streamcal import _validation as V

__all__ = [
    "MAX_DEPTH",
    "READABLE_FORMATS",
    "SNAPSHOT_FORMAT",
    "Snapshot",
    "StateChecks",
    "class_key",
    "decode_param",
    "encode_param",
    "from_dict",
    "nest",
    "to_dict",
]

#: Version tag written into every snapshot. Format 2 (from format 1): ``OnlineBeta``'s
#: ``"ab"`` and ``"am"`` follow betacal's names (format 1 had them swapped) and ``ROCAUC``
#: keeps its weight sums as exact integers (format 1: floats). A class
#: whose snapshot changed meaning translates an older one in its
#: ``_upgrade_snapshot``; every older format listed in :data:`READABLE_FORMATS` keeps
#: loading.
SNAPSHOT_FORMAT = 2

#: The formats :func:`from_dict` reads.
READABLE_FORMATS = (1, 2)

#: The deepest nesting of lists and dicts a snapshot may have (the deepest snapshot
#: written, a multiclass wrapper's nested calibrators, has about 12 levels).
MAX_DEPTH = 64

# family key -> the family's base class, for parameters that are themselves snapshots
_NESTED: dict[str, type] = {}


def nest(key: str, base: type) -> None:
    """Let a parameter that is an instance of ``base`` travel as its own snapshot,
    under ``key``."""
    _NESTED[key] = base


def encode_param(value):
    """A constructor argument as JSON-safe data (see the module docstring; the rules
    are :func:`streamcal._json.encode`'s)."""
    return _json.encode(value, nested=_nested_snapshot)


def _nested_snapshot(value):
    """``{<family key>: <snapshot>}`` for an object of a family that nests, else None."""
    for key, base in _NESTED.items():
        if isinstance(value, base):
            return {key: value.to_dict()}
    return None


def decode_param(value):
    """The constructor argument :func:`encode_param` wrote."""
    if isinstance(value, dict):
        if len(value) == 1:
            (key,) = value
            base = _NESTED.get(key)
            if base is not None:
                return base.from_dict(value[key])
        return {k: decode_param(v) for k, v in value.items()}
    if isinstance(value, list):
        return tuple(decode_param(v) for v in value)
    return value


def to_dict(obj) -> dict:
    """The snapshot of ``obj``: its constructor arguments, as stored under their own
    names, and its ``_get_state()``."""
    return {
        "class": class_key(type(obj)),
        "format": SNAPSHOT_FORMAT,
        "params": {
            name: encode_param(getattr(obj, name))
            for name in inspect.signature(type(obj).__init__).parameters
            if name != "self"
        },
        "state": obj._get_state(),
    }


def _is_builtin(module: str) -> bool:
    return module == "streamcal" or module.startswith("streamcal.")


def class_key(klass: type) -> str:
    """The name a snapshot of ``klass`` stores: the bare name of a streamcal class,
    ``module.QualName`` of any other (a user subclass).

    Examples
    --------
    >>> from streamcal import OnlineIsotonic
    >>> class OnlineIsotonicVariant(OnlineIsotonic):
    ...     __module__ = "myapp.calibrators"  # a user's module
    >>> class_key(OnlineIsotonic), class_key(OnlineIsotonicVariant)
    ('OnlineIsotonic', 'myapp.calibrators.OnlineIsotonicVariant')

    """
    if _is_builtin(klass.__module__):
        return klass.__name__
    return f"{klass.__module__}.{klass.__qualname__}"


class StateChecks:
    """Checks of the entries of one snapshot: each failure raises a ValueError naming
    the class, the entry (``where``, e.g. ``"state['window'][3]"``), the domain and the
    value (:func:`streamcal._validation.snapshot_error`). Each check returns the value
    as the type it was checked to be.

    Examples
    --------
    >>> check = StateChecks("OnlineIsotonic")
    >>> check.int(3, "state['n_events']")
    3
    >>> check.weight(-1.0, "state['window'][0][2]")
    Traceback (most recent call last):
    ...
    ValueError: The snapshot entry state['window'][0][2] of OnlineIsotonic must be a finite real number >= 0. Got -1.0 instead.

    """

    def __init__(self, owner: str):
        self.owner = owner

    @staticmethod
    def at(where: str, key) -> str:
        """The name of entry ``key`` of the entry ``where``."""
        return f"{where}[{key!r}]"

    def fail(self, where: str, domain: str, value, suffix: str = ""):
        """Raise the error for ``where``."""
        raise V.snapshot_error(self.owner, where, domain, _shown(value), suffix)

    def require(self, ok: bool, where: str, domain: str, value) -> None:
        """Raise the error for ``where`` unless ``ok``."""
        if not ok:
            self.fail(where, domain, value)

    def int(self, value, where: str, lo: int = 0, hi: int | None = None) -> int:
        """An int (not a bool) in ``[lo, hi]``."""
        domain = f"an int >= {lo}" if hi is None else f"an int in [{lo}, {hi}]"
        ok = V.is_integer(value) and value >= lo and (hi is None or value <= hi)
        self.require(ok, where, domain, value)
        return int(value)

    def real(self, value, where: str, lo: float = -math.inf, hi: float = math.inf, domain: str | None = None) -> float:
        """A finite real number (not a bool) in ``[lo, hi]``."""
        if domain is None:
            domain = V.FINITE_DOMAIN
            if lo > -math.inf and hi < math.inf:
                domain = f"a real number in [{lo:g}, {hi:g}]"
            elif lo > -math.inf:
                domain += f" >= {lo:g}"
            elif hi < math.inf:
                domain += f" <= {hi:g}"
        # (is_real refuses an int too large for a float: 10**400, which JSON allows)
        ok = V.is_real(value) and math.isfinite(value) and lo <= value <= hi
        self.require(ok, where, domain, value)
        return float(value)

    def weight(self, value, where: str) -> float:
        """A finite real number >= 0."""
        return self.real(value, where, 0.0, domain=V.WEIGHT_DOMAIN)

    def weight_total(self, weights, where: str, capacity: float) -> float:
        """The weights (each checked already) sum to at most ``capacity``: the weight
        rule (:mod:`streamcal._validation`) for a state restored, which must hold what
        it held when written."""
        total = math.fsum(weights)
        if not total <= capacity:
            self.fail(where, f"entries whose weights sum to at most {capacity:.6g} (the weight rule)", total, " (their sum)")
        return total

    def label(self, value, where: str) -> float:
        """A binary label, 0 or 1 (as an int, a float or a bool)."""
        ok = isinstance(value, numbers.Real) and value in (0, 1)
        self.require(ok, where, V.LABEL_DOMAIN, value)
        return float(value)

    def bool(self, value, where: str) -> bool:
        """A bool."""
        self.require(isinstance(value, bool), where, "a bool", value)
        return value

    def list(self, value, where: str, n: int | None = None, max_n: int | None = None, what: str = "") -> list:
        """A list, of exactly ``n`` or at most ``max_n`` entries (``what``: of what)."""
        domain = "a list" + (f" of {n}" if n is not None else f" of at most {max_n}" if max_n is not None else "")
        domain += f" {what}" if what else ""
        ok = isinstance(value, (list, tuple)) and (n is None or len(value) == n) and (
            max_n is None or len(value) <= max_n
        )
        if not ok and isinstance(value, (list, tuple)):
            self.fail(where, domain, value, suffix=f" (length {len(value)})")
        self.require(ok, where, domain, value)
        return list(value)

    def holds(self, check: typing.Callable[[], None], where: str = "state") -> None:
        """Run ``check`` (a ``_check()`` of something built from the entry ``where``
        only to be checked) and turn its failure into the error naming ``where``."""
        try:
            check()
        except (AssertionError, ArithmeticError, IndexError, KeyError, TypeError, ValueError) as exc:
            raise ValueError(
                f"The snapshot entry {where} of {self.owner} breaks an invariant: "
                f"{type(exc).__name__}: {exc}"
            ) from exc

    def entry(self, state: dict, key: str, where: str = "state"):
        """``state[key]``, or the error naming the missing entry."""
        if key not in state:
            raise ValueError(f"The snapshot entry {self.at(where, key)} of {self.owner} is missing.")
        return state[key]

    def binary_events(self, events, where: str, max_n: int, label_first: bool = False) -> list:
        """A list of at most ``max_n`` events ``[score, label, weight]`` (a score in
        [0, 1], a binary label, a weight >= 0), as tuples of floats; with
        ``label_first``, events ``[label, score, weight]``."""
        out = []
        what = "(label, score, weight)" if label_first else "(score, label, weight)"
        s_at, y_at = ("[1]", "[0]") if label_first else ("[0]", "[1]")
        for i, e in enumerate(self.list(events, where, max_n=max_n, what="events")):
            at = f"{where}[{i}]"
            a, b, w = self.list(e, at, n=3, what=what)
            s, y = (b, a) if label_first else (a, b)
            event = (self.real(s, at + s_at, 0.0, 1.0), self.label(y, at + y_at), self.weight(w, at + "[2]"))
            out.append((event[1], event[0], event[2]) if label_first else event)
        return out

    def keys(self, value: dict, where: str, expected) -> None:
        """The dict ``value`` has exactly the keys ``expected``: names the first
        unknown or missing one."""
        expected = list(expected)
        for k in value:
            if k not in expected:
                self.fail(self.at(where, k), f"absent (the entries are {expected})", value[k], " (an unknown entry)")
        for k in expected:
            if k not in value:
                raise ValueError(
                    f"The snapshot entry {self.at(where, k)} of {self.owner} is missing "
                    f"(the entries are {expected})."
                )


class _TooDeep:
    def __repr__(self) -> str:
        return "<data nested too deep to show>"


def _shown(value):
    """``value``, or a stand-in when it is nested too deep for ``repr``."""
    stack = [(value, 0)]
    seen = 0
    while stack and seen < 10_000:
        v, depth = stack.pop()
        seen += 1
        if isinstance(v, (dict, list, tuple)):
            if depth >= MAX_DEPTH:
                return _TooDeep()
            stack.extend((x, depth + 1) for x in (v.values() if isinstance(v, dict) else v))
    return value


def _check_tree(d, owner: str) -> None:
    """The snapshot ``d`` is JSON data (dicts with str keys, lists, str, bools, None and
    finite numbers) nested at most :data:`MAX_DEPTH` deep. Iterative, so that no input
    can exhaust the stack."""
    check = StateChecks(owner)
    stack = [(v, k, 1) for k, v in d.items()]  # entries named state['window'][3]
    while stack:
        value, where, depth = stack.pop()
        if isinstance(value, (dict, list, tuple)):
            if depth >= MAX_DEPTH:
                check.fail(where, f"JSON data nested at most {MAX_DEPTH} deep", "...", " (nested deeper)")
            if isinstance(value, dict):
                for k, v in value.items():
                    if type(k) is not str:
                        check.fail(check.at(where, k), "an entry with a str key", k)
                    stack.append((v, check.at(where, k), depth + 1))
            else:
                stack.extend((v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value))
        elif isinstance(value, numbers.Real) and not isinstance(value, bool):
            if not isinstance(value, int) and not math.isfinite(value):  # an int may exceed a float
                check.fail(where, V.FINITE_DOMAIN, value)
        elif value is not None and not isinstance(value, (str, bool)):
            check.fail(where, "JSON data (a dict, list, str, number, bool or None)", value)


def _is_snapshot(d: dict) -> bool:
    return d.keys() == {"class", "format", "params", "state"}


def _differ(a, b, where: str):
    """The first entry where ``a`` (what the built object writes) and ``b`` (the
    snapshot) differ, as ``(where, a's value, b's value)``, or None. Numbers compare by
    value (``1 == 1.0``), lists and tuples alike; nested snapshots by class only.
    Iterative."""
    stack = [(a, b, where)]
    while stack:
        x, y, w = stack.pop()
        if isinstance(x, dict) and isinstance(y, dict):
            if _is_snapshot(x) and _is_snapshot(y):
                # a nested snapshot was validated by its own from_dict, which upgrades
                # earlier formats (a parameter added since, a state entry derived anew):
                # only its class must be the one written back
                stack.append((x["class"], y["class"], StateChecks.at(w, "class")))
                continue
            if x.keys() != y.keys():
                return w, x, y
            stack.extend((x[k], y[k], StateChecks.at(w, k)) for k in reversed(list(x)))
        elif isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
            if len(x) != len(y):
                return w, x, y
            stack.extend((x[i], y[i], f"{w}[{i}]") for i in reversed(range(len(x))))
        elif isinstance(x, bool) or isinstance(y, bool) or x is None or y is None or isinstance(x, str) or isinstance(y, str):
            if type(x) is not type(y) or x != y:
                return w, x, y
        elif not (isinstance(x, numbers.Real) and isinstance(y, numbers.Real) and x == y):
            return w, x, y
    return None


def _build(klass: type, params: dict, state: dict, owner: str):
    """The object of ``klass`` restored from checked ``params`` and ``state``, or a
    ValueError naming what is wrong (see :func:`from_dict`, steps 4 to 7)."""
    check = StateChecks(owner)
    # 4. the parameters, through the constructor's own checks; the state is not built
    #    yet (an instance attribute hides the class's ``_reset`` meanwhile), so that a
    #    parameter the state disagrees with (n_bins=10**9) allocates nothing
    obj = klass.__new__(klass)
    obj._reset = lambda: None
    try:
        klass.__init__(obj, **{name: decode_param(v) for name, v in params.items()})
    except (OverflowError, TypeError) as exc:  # a wrong type, a required parameter missing
        raise ValueError(f"The snapshot params of {owner} are invalid: {exc}") from exc
    finally:
        del obj._reset
    # 5. the class's own checks of its state, against those parameters
    obj._validate_state(state, check)
    # 6. the entries: exactly those a fresh object writes
    try:
        obj._reset()
    except (MemoryError, OverflowError) as exc:  # parameters too large for any state
        raise ValueError(
            f"The snapshot params of {owner} are too large to build a state: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    check.keys(state, "state", obj._get_state())
    try:
        obj._set_state(state)
    except (ArithmeticError, AttributeError, IndexError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(
            f"The snapshot state of {owner} is malformed: {type(exc).__name__}: {exc}"
        ) from exc
    # 7. the invariants of the built object, and the state it writes back is the one
    #    read (entries derived from others agree with them)
    if hasattr(obj, "_check"):
        check.holds(obj._check)
    diff = _differ(obj._get_state(), state, "state")
    if diff is not None:
        where, expected, got = diff
        check.fail(where, f"consistent with the rest of the state ({V.format_value(expected)})", got)
    return obj


def from_dict(cls: type, d, registry: dict):
    """Rebuild an object from a snapshot written by :func:`to_dict`, validating it
    before anything is built.

    In order, the first failure raising a ValueError that names the entry, the domain
    and the value:

    1. ``d`` is a dict with the entries ``class``, ``format``, ``params`` and
       ``state``, holding JSON data (finite numbers) at most :data:`MAX_DEPTH` deep;
    2. ``format`` is an int (not a bool) among :data:`READABLE_FORMATS`;
    3. ``class`` names a registered concrete subclass of ``cls`` (:func:`class_key`);
    4. ``params`` names constructor arguments only, each passing the constructor's own
       checks (the state not built yet);
    5. ``state`` passes the class's :meth:`Snapshot._validate_state`;
    6. ``state`` has exactly the entries ``_get_state()`` writes, and ``_set_state``
       accepts them;
    7. the object built passes its ``_check()`` (its invariants) and writes back the
       state it was given.

    Examples
    --------
    >>> from streamcal import OnlineIsotonic
    >>> snap = OnlineIsotonic(window_size=2).to_dict()
    >>> OnlineIsotonic.from_dict({**snap, "format": True})
    Traceback (most recent call last):
    ...
    ValueError: The snapshot entry format of OnlineIsotonic must be an int among {1, 2}. Got True instead.

    """
    owner = cls.__name__
    check = StateChecks(owner)
    if not isinstance(d, dict) or not {"class", "params", "state"} <= d.keys():
        raise ValueError(
            "The 'd' argument of from_dict must be a snapshot dict with keys "
            f"'class', 'format', 'params' and 'state'. Got {V.format_value(_shown(d))} instead."
        )
    check.keys(d, "snapshot", ["class", "format", "params", "state"])
    fmt = d["format"]
    check.require(
        type(fmt) is int and fmt in READABLE_FORMATS,
        "format", f"an int among {set(READABLE_FORMATS)}", fmt,
    )
    name = d["class"]
    klass = registry.get(name) if isinstance(name, str) else None
    if klass is None and isinstance(name, str):
        klass = _import_public(cls, name, registry)
    if klass is None or not issubclass(klass, cls) or inspect.isabstract(klass):
        check.fail("class", f"the name of a registered subclass of {owner}", name)
    owner = klass.__name__
    check = StateChecks(owner)
    if not isinstance(d["params"], dict) or not isinstance(d["state"], dict):
        raise ValueError(
            f"The 'params' and 'state' entries of the {owner} snapshot must be dicts. "
            f"Got {V.format_value(_shown(d['params']))} and {V.format_value(_shown(d['state']))} instead."
        )
    _check_tree(d, owner)
    params, state = d["params"], d["state"]
    params, state = klass._upgrade_snapshot(params, state, fmt)
    names = [p for p in inspect.signature(klass.__init__).parameters if p != "self"]
    for key in params:
        if key not in names:
            check.fail(check.at("params", key), f"absent (the parameters are {names})", params[key], " (an unknown parameter)")
    return _build(klass, params, state, owner)


@contextlib.contextmanager
def restored_on_error(*objects, errors=(Exception,)):
    """Run the block; if it raises one of ``errors``, put the state of every object back
    as it was (``_get_state()`` deep-copied before, ``_set_state`` after) and re-raise.
    The one home of the atomic slow paths: a batch that may hold a weight the state
    cannot take, a KeyedCalibrator's fallback that may refuse what the key's calibrator
    took. O(state).

    Examples
    --------
    >>> from streamcal import OnlinePlatt
    >>> cal = OnlinePlatt()
    >>> try:
    ...     with restored_on_error(cal):
    ...         cal.learn_one(0.7, 1)
    ...         raise ValueError("refused later")
    ... except ValueError:
    ...     pass
    >>> cal.to_dict() == OnlinePlatt().to_dict()
    True

    """
    saved = [copy.deepcopy(obj._get_state()) for obj in objects]
    try:
        yield
    except errors:
        for obj, state in zip(objects, saved):
            obj._set_state(state)
        raise


def _import_public(cls: type, name: str, registry: dict):
    """The class ``name`` of the public package of ``cls``'s family, imported (and so
    registered) now if it was not yet: the packages import their classes on first use,
    so in a fresh process a snapshot may name a class whose module nobody imported."""
    name_of_package = getattr(cls, "_package", None)
    if name_of_package is None:  # a family whose classes are all imported with it
        return registry.get(name)
    package = importlib.import_module(name_of_package)
    if name in getattr(package, "__all__", ()):
        getattr(package, name)
    return registry.get(name)


class Snapshot(abc.ABC):
    """Mixin of the families' base classes: ``to_dict`` / ``from_dict`` and the class
    registry.

    A family's base class sets ``_registry`` (a dict of its own) in its body; every
    class derived from it is registered under its name when it is defined. Subclasses
    implement ``_get_state`` and ``_set_state``.
    """

    _registry: typing.ClassVar[dict[str, type]]
    #: The public package that exports the family's classes (imported on first use).
    _package: typing.ClassVar[str]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "_registry" not in cls.__dict__:  # not a family's base class itself
            key = class_key(cls)
            if not _is_builtin(cls.__module__) and _is_builtin(
                getattr(cls._registry.get(key), "__module__", "")
            ):  # pragma: no cover - a user class in a module named streamcal.*
                return
            cls._registry[key] = cls

    @classmethod
    def _upgrade_snapshot(cls, params: dict, state: dict, fmt: int):
        """The ``(params, state)`` of a snapshot of format ``fmt``, as the current
        version writes them (called by ``from_dict`` on every snapshot, before anything
        is checked or built: an override must tolerate malformed entries and leave them
        to the checks). A parameter added since has its default already; override where
        a meaning changed, or where a state entry was added within a format. By default
        they are unchanged."""
        return params, state

    def _validate_state(self, state: dict, check: StateChecks) -> None:
        """Check the entries of a snapshot's ``state`` before anything is built from
        them (called by ``from_dict`` on an object whose parameters are set and checked
        but whose state is not built yet): their types and domains, and their
        consistency with the parameters, raising through ``check``. The default checks
        nothing more than :func:`from_dict` does for every class; a class overrides it
        to state its own invariants, most importantly those that size what
        ``_set_state`` allocates."""

    @abc.abstractmethod
    def _get_state(self) -> dict:
        """Return the whole (learnt) state as JSON-safe data."""

    @abc.abstractmethod
    def _set_state(self, state: dict) -> None:
        """Restore the state written by ``_get_state``."""

    def to_dict(self) -> dict:
        """Return a JSON-serialisable snapshot of the parameters and the whole state.

        ``type(self).from_dict(self.to_dict())`` (or ``from_dict`` on the family's base
        class) restores an object that continues exactly like this one: a calibrator
        predicts and learns, a metric reports and updates, a monitor watches as this one
        would.
        """
        return to_dict(self)

    @classmethod
    def from_dict(cls, d: dict):
        """Rebuild an object from a snapshot written by :meth:`to_dict`.

        Called on the family's base class, the class is looked up by the name stored
        in the snapshot; called on a subclass, the snapshot must be of that class.
        """
        return from_dict(cls, d, cls._registry)
