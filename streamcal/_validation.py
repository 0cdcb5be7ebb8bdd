"""The only home of input checks and their error messages.

Every message follows one template, modelled on scikit-learn's parameter validation::

    The 'score' argument of OnlineIsotonic.learn_one must be a real number in [0, 1].
    Got nan instead.

It names the argument, the expected domain and the value received. Checks never touch
the state of the object they guard: callers validate everything first, then mutate.

The per-event checks (:func:`check_score`, :func:`check_label`, :func:`check_weight`)
have a fast path for the common exact types (``float``, ``int``, ``bool``) so that a
valid event costs a type test and a comparison.

The input rules, the same for single and batch calls:

- **Numbers.** A score, a probability or a weight is a real number, never a bool (in a
  list given to a batch call as well). Its domain is checked on the value as given and
  on its rounding to a double, so ``np.longdouble(1) + 1e-19`` is not a score (it is
  above 1) while ``np.longdouble(0.5) + 1e-19`` is, and counts as ``0.5``.
- **Labels.** A binary label is 0, 1, False or True (numpy twins, 0.0 and 1.0 too). A
  class label, and a class key of a score dict, is a JSON scalar: a str, an int, a bool
  or a finite float (:func:`check_class_label`), because every label goes into the
  JSON snapshots.
- **Binary probabilities** are floats in [0, 1], or dicts that are probability vectors
  over the binary labels (:func:`check_probability`).
- **Weights** (:func:`check_weight`, then :func:`check_weight_room`). A weight is a
  finite real number >= 0, and small enough for the state it joins to stay finite.
  The rule for "small enough" is one for every stateful object: it holds a total
  weight ``W`` (the weights of the events it holds, before a window evicts one; under
  forgetting, as stored) and has a *capacity* ``C``, the largest ``W`` for which every
  number it stores or derives stays finite, and an event of weight ``w`` is refused,
  before anything changes, when ``W + w > C``: a ValueError naming ``w``, the domain
  and the value, the state unchanged. Batch calls apply the same check event by
  event and are atomic. ``C`` follows from the state (:func:`weight_capacity`): when
  every number is at most ``c * W`` (``c = 1`` for sums of ``w * v`` with ``|v| <= 1``:
  counts, outcome and forecast sums, squared errors; ``-log(eps)`` for a log-loss sum;
  the number of bins when bin cuts or Foster's game multiply a weight by it),
  ``C = DBL_MAX / c``; when the state multiplies two weight sums (a bin's outcome sum
  squared, in Sharpness and the Murphy and Foster-Hart decompositions),
  ``C = sqrt(DBL_MAX / c)`` (the refit windows of the batch-refitted calibrators,
  whose fits multiply up to three sums, take its square root); under ``half_life``, whose stored weights grow by up to
  ``2 ** 64`` between renormalisations, ``C`` is that much smaller. So the bound
  depends on the state: 1e308 is accepted once by a Brier score and refused the
  second time.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from streamcal import _json

__all__ = [
    "argument_error", "check_class_label", "check_int", "check_key", "check_label",
    "check_labels_array", "check_param", "check_probability", "check_probability_vector",
    "check_real", "check_real_vector", "check_score", "check_scores_array", "check_weight",
    "check_weight_room", "check_weights_array", "field_error", "format_value", "is_integer",
    "is_real", "json_safe_scalar", "weight_capacity", "weight_overflow_error",
]

#: The largest finite double.
DBL_MAX = 1.7976931348623157e308

SCORE_DOMAIN = "a real number in [0, 1]"
LABEL_DOMAIN = "a binary label in {0, 1, False, True}"
WEIGHT_DOMAIN = "a finite real number >= 0"
#: How far from 1 the probabilities of a dict forecast may sum (binary or multiclass).
PROBABILITY_TOLERANCE = 1e-6
PROBABILITY_DOMAIN = (
    "a probability in [0, 1] or a dict of the probabilities of False and True summing "
    f"to 1 within {PROBABILITY_TOLERANCE:g}"
)


def _where(owner: str, method: str | None) -> str:
    return f"{owner}.{method}" if method else owner


def format_value(value) -> str:
    text = repr(value)
    if len(text) > 80:
        text = text[:77] + "..."
    return text


def check_param(owner: str, name: str, value, ok: bool, domain: str) -> None:
    """Raise a ValueError about a constructor parameter unless ``ok``.

    Examples
    --------
    >>> check_param("OnlineIsotonic", "window_size", 0, False, "an int >= 1 or None")
    Traceback (most recent call last):
    ...
    ValueError: The 'window_size' parameter of OnlineIsotonic must be an int >= 1 or None. Got 0 instead.

    """
    if not ok:
        raise ValueError(
            f"The {name!r} parameter of {owner} must be {domain}. Got {format_value(value)} instead."
        )


def check_instance_param(owner: str, name: str, value, classes: tuple) -> None:
    """:func:`check_param` for a parameter that must be an instance of one of ``classes``
    (the calibrator a wrapper or a keyed store is built around), the domain worded "a
    BinaryCalibrator or a MulticlassCalibrator instance" (tests/test_validation.py)."""
    domain = " or ".join(f"a {c.__name__}" for c in classes) + " instance"
    check_param(owner, name, value, isinstance(value, classes), domain)


def check_optional_int_param(owner: str, name: str, value, minimum: int) -> None:
    """Raise a ValueError unless the constructor parameter ``value`` is None or an int >=
    ``minimum`` (the one home of the ``window_size`` / ``seed`` / ``max_keys`` rule).

    Examples
    --------
    >>> check_optional_int_param("OnlineIsotonic", "window_size", None, 1)
    >>> check_optional_int_param("OnlineIsotonic", "window_size", 0, 1)
    Traceback (most recent call last):
    ...
    ValueError: The 'window_size' parameter of OnlineIsotonic must be an int >= 1 or None. Got 0 instead.

    """
    check_param(
        owner,
        name,
        value,
        value is None or (is_integer(value) and value >= minimum),
        f"an int >= {minimum} or None",
    )


def check_nonnegative_param(owner: str, name: str, value):
    """Raise a ValueError unless the constructor parameter ``value`` is a finite real
    number >= 0 (not a bool); return it as a constructor stores it, JSON-safe (an int
    or a float as given, a numpy number as a float).

    Examples
    --------
    >>> check_nonnegative_param("IRP", "smoothing", 0)
    0
    >>> check_nonnegative_param("IRP", "smoothing", float("inf"))
    Traceback (most recent call last):
    ...
    ValueError: The 'smoothing' parameter of IRP must be a finite real number >= 0. Got inf instead.

    """
    check_param(
        owner, name, value, is_real(value) and 0.0 <= value < math.inf, "a finite real number >= 0"
    )
    return value if type(value) in (int, float) else float(value)


def argument_error(exc, name, owner, method, domain, value, suffix=""):
    """Build the error for argument ``name`` of ``owner.method`` (see the module docstring)."""
    return exc(
        f"The {name!r} argument of {_where(owner, method)} must be {domain}. "
        f"Got {format_value(value)}{suffix} instead."
    )


def is_real(value, _float_ints=2**1024 - 2**970) -> bool:
    """A real number that is not a bool, nor an int that float() refuses (10**400)."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)) and (
        type(value) is not int or -_float_ints < value < _float_ints)


def is_integer(value) -> bool:
    """An integer that is not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def check_int(value, owner: str, name: str, minimum: int = 0, method: str | None = None, allow_none: bool = False):
    """Return ``value`` as an int >= ``minimum`` (or None if allowed), or raise.

    Examples
    --------
    >>> check_int(3, "rain_sequence", "n_days")
    3
    >>> check_int(-1, "rain_sequence", "n_days")
    Traceback (most recent call last):
    ...
    ValueError: The 'n_days' argument of rain_sequence must be an int >= 0. Got -1 instead.

    """
    domain = f"an int >= {minimum}" + (" or None" if allow_none else "")
    if value is None and allow_none:
        return None
    if not is_integer(value):
        raise argument_error(TypeError, name, owner, method, domain, value)
    if value < minimum:
        raise argument_error(ValueError, name, owner, method, domain, value)
    return int(value)


def check_real(value, owner: str, name: str, ok, domain: str, method: str | None = None) -> float:
    """Return ``value`` as a float if it is real and ``ok(float(value))``, or raise.

    Examples
    --------
    >>> check_real(0.5, "log_loss", "eps", lambda x: 0 <= x < 0.5, "a real number in [0, 0.5)")
    Traceback (most recent call last):
    ...
    ValueError: The 'eps' argument of log_loss must be a real number in [0, 0.5). Got 0.5 instead.

    """
    if not is_real(value):
        raise argument_error(TypeError, name, owner, method, domain, value)
    if not ok(float(value)):
        raise argument_error(ValueError, name, owner, method, domain, value)
    return float(value)


def check_score(value, owner: str, method: str | None = None, name: str = "score") -> float:
    """Return ``value`` as a float in [0, 1], or raise naming ``name``.

    Booleans are rejected: a score is a number, not a label.

    Examples
    --------
    >>> check_score(0.25, "OnlineIsotonic", "learn_one")
    0.25
    >>> check_score(float("nan"), "OnlineIsotonic", "learn_one")
    Traceback (most recent call last):
    ...
    ValueError: The 'score' argument of OnlineIsotonic.learn_one must be a real number in [0, 1]. Got nan instead.

    """
    if type(value) is float and 0.0 <= value <= 1.0:  # fast path; NaN fails the test
        return value
    if not is_real(value):
        raise argument_error(TypeError, name, owner, method, SCORE_DOMAIN, value)
    x = float(value)
    if not (0.0 <= value <= 1.0 and 0.0 <= x <= 1.0):  # the value as given, and as a double
        raise argument_error(ValueError, name, owner, method, SCORE_DOMAIN, value)
    return x


def check_label(value, owner: str, method: str | None = None, name: str = "label") -> float:
    """Return a binary label as 0.0 or 1.0, or raise naming ``name``.

    Accepted: ``0``, ``1``, ``False``, ``True``, their numpy counterparts, and the floats
    ``0.0`` and ``1.0`` (a label column read from a file is often float). Anything else,
    ``0.5``, ``2``, ``"1"`` or ``None``, is rejected.

    Examples
    --------
    >>> check_label(True, "OnlineIsotonic", "learn_one")
    1.0
    >>> check_label(2, "OnlineIsotonic", "learn_one")
    Traceback (most recent call last):
    ...
    ValueError: The 'label' argument of OnlineIsotonic.learn_one must be a binary label in {0, 1, False, True}. Got 2 instead.

    """
    t = type(value)
    if t is bool or t is int:
        if value == 1:
            return 1.0
        if value == 0:
            return 0.0
        raise argument_error(ValueError, name, owner, method, LABEL_DOMAIN, value)
    if not isinstance(value, (numbers.Real, np.bool_)):
        raise argument_error(TypeError, name, owner, method, LABEL_DOMAIN, value)
    if value == 1:
        return 1.0
    if value == 0:
        return 0.0
    raise argument_error(ValueError, name, owner, method, LABEL_DOMAIN, value)


def check_probability(value, owner: str, method: str | None = None, name: str = "y_pred") -> float:
    """Return the probability of the positive class as a float in [0, 1], or raise.

    Accepts a real number in [0, 1] (not a bool) or river's ``predict_proba_one``
    output for a binary task: a probability vector over the binary labels, a dict whose
    keys are binary labels (``False``/``True``, ``0``/``1``; ``True`` and ``1`` are one
    key) and whose values are real numbers in [0, 1] summing to 1 within
    :data:`PROBABILITY_TOLERANCE` (a missing label has probability 0, so ``{True: 1.0}``
    is a vector and ``{True: 0.7}`` is not). It returns the value at ``True``. Anything
    else raises, naming ``name``.

    Examples
    --------
    >>> check_probability({False: 0.25, True: 0.75}, "Brier", "update")
    0.75
    >>> check_probability(1.5, "Brier", "update")
    Traceback (most recent call last):
    ...
    ValueError: The 'y_pred' argument of Brier.update must be a probability in [0, 1] or a dict of the probabilities of False and True summing to 1 within 1e-06. Got 1.5 instead.
    >>> check_probability({True: 0.7, False: 0.9}, "Brier", "update")
    Traceback (most recent call last):
    ...
    ValueError: The 'y_pred' argument of Brier.update must be a probability in [0, 1] or a dict of the probabilities of False and True summing to 1 within 1e-06. Got {True: 0.7, False: 0.9} (sum 1.6) instead.

    """
    if type(value) is float and 0.0 <= value <= 1.0:  # fast path; NaN fails the test
        return value
    if isinstance(value, dict):
        return _binary_probability_vector(value, owner, method, name)
    if type(value) is bool or not is_real(value):
        raise argument_error(TypeError, name, owner, method, PROBABILITY_DOMAIN, value)
    x = float(value)
    if not (0.0 <= value <= 1.0 and 0.0 <= x <= 1.0):
        raise argument_error(ValueError, name, owner, method, PROBABILITY_DOMAIN, value)
    return x


def _binary_probability_vector(value: dict, owner, method, name) -> float:
    total = 0.0
    positive = 0.0
    for k, p in value.items():
        if not (isinstance(k, (numbers.Real, np.bool_)) and (k == 0 or k == 1)):
            raise argument_error(
                ValueError, name, owner, method, PROBABILITY_DOMAIN, value,
                suffix=f" (key {format_value(k)} is not a binary label)",
            )
        if type(p) is bool or not is_real(p):
            raise argument_error(
                TypeError, name, owner, method, PROBABILITY_DOMAIN, value,
                suffix=f" (probability {format_value(p)} for {format_value(k)})",
            )
        x = float(p)
        if not (0.0 <= p <= 1.0 and 0.0 <= x <= 1.0):
            raise argument_error(
                ValueError, name, owner, method, PROBABILITY_DOMAIN, value,
                suffix=f" (probability {format_value(p)} for {format_value(k)})",
            )
        total += x
        if k == 1:
            positive = x
    if not -PROBABILITY_TOLERANCE <= total - 1.0 <= PROBABILITY_TOLERANCE:
        raise argument_error(ValueError, name, owner, method, PROBABILITY_DOMAIN, value, suffix=f" (sum {total!r})")
    return positive


#: numpy scalars as their Python twins: the rule lives in :mod:`streamcal._json`.
json_safe_scalar = _json.scalar


def check_weight(value, owner: str, method: str | None = None, name: str = "w") -> float:
    """Return a sample weight as a float, or raise naming ``name`` (the check of every
    argument that is a finite real number >= 0: a smoothing, a prior strength, a noise).

    Examples
    --------
    >>> check_weight(2, "OnlineIsotonic", "learn_one")
    2.0
    >>> check_weight(-1.0, "OnlineIsotonic", "learn_one")
    Traceback (most recent call last):
    ...
    ValueError: The 'w' argument of OnlineIsotonic.learn_one must be a finite real number >= 0. Got -1.0 instead.

    """
    if type(value) is float and 0.0 <= value < math.inf:
        return value
    if not is_real(value):
        raise argument_error(TypeError, name, owner, method, WEIGHT_DOMAIN, value)
    x = float(value)
    if not (0.0 <= value and 0.0 <= x < math.inf):  # the value as given, and as a double
        raise argument_error(ValueError, name, owner, method, WEIGHT_DOMAIN, value)
    return x


WEIGHT_ROOM_DOMAIN = WEIGHT_DOMAIN + " small enough for the state to stay finite"


def weight_overflow_error(owner: str, method: str | None, w, where: str = "") -> ValueError:
    """The error for a weight the state cannot hold (see the weight rule above)."""
    return argument_error(ValueError, "w", owner, method, WEIGHT_ROOM_DOMAIN, w, suffix=where)


def weight_capacity(factor: float = 1.0, quadratic: bool = False) -> float:
    """The capacity ``C`` of a state (see the weight rule in the module docstring):
    ``DBL_MAX / factor``, or its square root for a state that multiplies two sums.

    Examples
    --------
    >>> weight_capacity() == DBL_MAX, weight_capacity(quadratic=True) > 1e154
    (True, True)

    """
    c = DBL_MAX / max(1.0, factor)
    return math.sqrt(c) if quadratic else c


def check_weight_room(w: float, held: float, capacity: float, owner: str, method: str | None = None, where: str = "") -> None:
    """Raise :func:`weight_overflow_error` unless ``held + w <= capacity``.

    ``held`` is the total weight the state holds and ``capacity`` its ``C`` (see the
    weight rule in the module docstring, :func:`weight_capacity`); ``w`` a validated
    weight. O(1).

    Examples
    --------
    >>> check_weight_room(1e308, 0.0, DBL_MAX, "Brier", "update")
    >>> check_weight_room(1e308, 1e308, DBL_MAX, "Brier", "update")
    Traceback (most recent call last):
    ...
    ValueError: The 'w' argument of Brier.update must be a finite real number >= 0 small enough for the state to stay finite. Got 1e+308 instead.

    """
    if not held + w <= capacity:
        raise weight_overflow_error(owner, method, w, where)


def _as_1d(values, name, owner, method, domain, n=None, like="scores"):
    try:
        arr = np.asarray(values)
    except Exception as exc:  # ragged or exotic input
        raise TypeError(
            f"The {name!r} argument of {_where(owner, method)} must be a one-dimensional "
            f"sequence of {domain}s. Got {format_value(values)} instead."
        ) from exc
    if arr.ndim != 1:
        raise ValueError(
            f"The {name!r} argument of {_where(owner, method)} must be a one-dimensional "
            f"sequence. Got an array of shape {arr.shape} instead."
        )
    if n is not None and len(arr) != n:
        raise ValueError(
            f"The {name!r} argument of {_where(owner, method)} must be a sequence of the "
            f"same length as {like!r} ({n}). Got length {len(arr)} instead."
        )
    return arr


def _first_bad(arr, bad_mask, name, owner, method, domain, exc=ValueError):
    i = int(np.flatnonzero(bad_mask)[0])
    raise argument_error(
        exc, name, owner, method, domain, arr[i].item() if hasattr(arr[i], "item") else arr[i],
        suffix=f" at index {i}",
    )


def _numeric_or_raise(arr, name, owner, method, domain, allow_bool=False, source=None):
    """``arr`` as a numeric array (float64, or longdouble kept as it is so that the
    domain is checked on the values as given), or the template error naming the first
    element that is not a real number. Unless ``allow_bool``, a bool is not a real
    number here, as in the per-event checks, also inside a list that numpy would have
    turned into numbers (``source`` is the sequence ``arr`` was built from)."""
    kind = arr.dtype.kind
    if kind == "b" and not allow_bool:
        _first_bad(arr, np.ones(len(arr), bool), name, owner, method, domain, TypeError)
    if kind in "iuf" and not allow_bool and isinstance(source, (list, tuple)):
        types = set(map(type, source))
        if bool in types or np.bool_ in types:
            bad = np.fromiter((type(v) in (bool, np.bool_) for v in source), dtype=bool, count=len(source))
            _first_bad(np.asarray(source, dtype=object), bad, name, owner, method, domain, TypeError)
    if kind == "f" and arr.dtype.itemsize > 8:
        return arr  # long double: checked as given, converted by _to_double
    if kind in "biuf":
        return arr.astype(np.float64, copy=False)
    if kind in "SU" and isinstance(source, (list, tuple)) and len(source) == len(arr):
        arr = np.empty(len(source), dtype=object)  # all text because one was: which?
        arr[:] = source
        kind = "O"
    if kind == "O":
        ok = np.fromiter(
            (is_real(v) or (allow_bool and isinstance(v, (bool, np.bool_))) for v in arr),
            dtype=bool,
            count=len(arr),
        )
        if not ok.all():
            _first_bad(arr, ~ok, name, owner, method, domain, TypeError)
        if any(isinstance(v, np.longdouble) for v in arr):
            return arr.astype(np.longdouble)
        return arr.astype(np.float64)
    if len(arr) == 0:
        return arr.astype(np.float64)
    _first_bad(arr, np.ones(len(arr), bool), name, owner, method, domain, TypeError)


def _to_double(arr, ok, name, owner, method, domain):
    """``arr`` (checked with ``ok`` as given) as contiguous float64, checked again after rounding."""
    if arr.dtype == np.float64:
        return np.ascontiguousarray(arr)
    with np.errstate(over="ignore"):  # a long double beyond float64 becomes inf: named below
        out = arr.astype(np.float64)
    bad = ~ok(out)
    if bad.any():
        _first_bad(arr, bad, name, owner, method, domain)
    return out


def check_scores_array(
    values, owner: str, method: str | None = None, name: str = "scores", n: int | None = None, like: str = "scores"
):
    """Return a float64 array of scores in [0, 1], or raise naming the first bad entry.

    Examples
    --------
    >>> check_scores_array([0.1, 1.5], "OnlineIsotonic", "learn_many")
    Traceback (most recent call last):
    ...
    ValueError: The 'scores' argument of OnlineIsotonic.learn_many must be a real number in [0, 1]. Got 1.5 at index 1 instead.

    """
    if _float64_vector(values, n) and (not len(values) or bool(values.min() >= 0.0 and values.max() <= 1.0)):
        return values  # what the general path returns (a NaN makes min NaN: that path names it)
    arr = _numeric_or_raise(
        _as_1d(values, name, owner, method, "real number", n, like), name, owner, method, SCORE_DOMAIN,
        source=values,
    )
    bad = ~_in_unit_interval(arr)
    if bad.any():
        _first_bad(arr, bad, name, owner, method, SCORE_DOMAIN)
    return _to_double(arr, _in_unit_interval, name, owner, method, SCORE_DOMAIN)


def _float64_vector(values, n=None) -> bool:
    """Whether ``values`` is a float64 numpy vector (of length ``n`` if given): a batch of
    the replay or a calibrator, whose domain is then checked without temporary arrays."""
    return (type(values) is np.ndarray and values.dtype == np.float64 and values.ndim == 1
            and values.flags.c_contiguous and (n is None or len(values) == n))


def _in_unit_interval(arr):
    return (arr >= 0.0) & (arr <= 1.0)


def _weight_ok(arr):
    return (arr >= 0.0) & (arr < np.inf)


def check_labels_array(values, n: int, owner: str, method: str | None = None, name: str = "labels"):
    """Return a float64 array of 0.0/1.0 labels of length ``n``, or raise.

    Examples
    --------
    >>> check_labels_array([True, 0, 1], 3, "OnlineIsotonic", "learn_many")
    array([1., 0., 1.])

    """
    if _float64_vector(values, n) and np.count_nonzero(values) == np.count_nonzero(values == 1.0):
        return values  # every non-zero is 1.0 (a NaN is non-zero, not 1.0): the general path's result
    raw = _as_1d(values, name, owner, method, "binary label", n)
    arr = _numeric_or_raise(raw, name, owner, method, LABEL_DOMAIN, allow_bool=True, source=values)
    bad = ~((arr == 0.0) | (arr == 1.0))
    if bad.any():
        _first_bad(raw, bad, name, owner, method, LABEL_DOMAIN)
    return np.ascontiguousarray(arr, dtype=np.float64)


def check_weights_array(values, n: int, owner: str, method: str | None = None, name: str = "w"):
    """Return a float64 array of ``n`` weights (ones when ``values`` is None), or raise.

    Examples
    --------
    >>> check_weights_array(None, 2, "OnlineIsotonic", "learn_many")
    array([1., 1.])

    """
    if values is None:
        return np.ones(n)
    arr = _numeric_or_raise(
        _as_1d(values, name, owner, method, "real number", n), name, owner, method, WEIGHT_DOMAIN,
        source=values,
    )
    bad = ~_weight_ok(arr)
    if bad.any():
        _first_bad(arr, bad, name, owner, method, WEIGHT_DOMAIN)
    return _to_double(arr, _weight_ok, name, owner, method, WEIGHT_DOMAIN)


CLASS_LABEL_DOMAIN = "a class label: a str, an int, a bool or a finite float"


def check_class_label(value, owner: str, method: str | None = None, name: str = "y_true"):
    """Return a multiclass label as a JSON scalar, or raise naming ``name``.

    A class label is a JSON scalar: a ``str``, an ``int``, a ``bool`` or a finite
    ``float`` (numpy scalars of those kinds are returned as their Python twins). Labels
    are compared as dict keys are, so ``1``, ``1.0`` and ``True`` are one class. Anything
    else is refused, because every label ends up in the JSON snapshots of
    ``to_dict()``: bytes, tuples, frozensets and None (TypeError), NaN and infinities
    (ValueError; NaN is not even equal to itself, so it could match no class).

    Examples
    --------
    >>> check_class_label("cat", "ConfidenceECE", "update")
    'cat'
    >>> check_class_label(("cat", 1), "ConfidenceECE", "update")
    Traceback (most recent call last):
    ...
    TypeError: The 'y_true' argument of ConfidenceECE.update must be a class label: a str, an int, a bool or a finite float. Got ('cat', 1) instead.

    """
    return _json_scalar(value, owner, method, name, CLASS_LABEL_DOMAIN)


def _json_scalar(value, owner: str, method: str | None, name: str, domain: str):
    """``value`` as a Python str, int, bool or finite float (a numpy scalar of those
    kinds as its Python twin; ``np.longdouble``, which has no Python twin, refused), or
    the template error naming ``name`` and ``domain``: the rule of class labels and
    segment keys."""
    t = type(value)
    if t is str or t is int or t is bool:  # fast path
        return value
    if t is float:
        if math.isfinite(value):
            return value
        raise argument_error(ValueError, name, owner, method, domain, value)
    if isinstance(value, (np.str_, np.bool_, np.integer, np.floating)) and not isinstance(value, np.longdouble):
        return _json_scalar(value.item(), owner, method, name, domain)
    raise argument_error(TypeError, name, owner, method, domain, value)


def _class_key(key, value, name, owner, method, domain):
    """``key`` of the dict ``value`` as a class label (see :func:`check_class_label`), or
    the template error about ``value`` (argument ``name``) naming the bad key."""
    try:
        return check_class_label(key, owner, method, name)
    except (TypeError, ValueError) as exc:
        raise argument_error(
            type(exc), name, owner, method, domain, value,
            suffix=f" (class label {format_value(key)} is not {CLASS_LABEL_DOMAIN[len('a class label: '):]})",
        ) from None


def _probability_vector_domain(tol) -> str:
    return (
        "a non-empty dict mapping class labels to probabilities in [0, 1] "
        f"that sum to 1 within {tol:g}"
    )


def check_probability_vector(
    value, owner: str, method: str | None = None, name: str = "y_pred", tol: float = PROBABILITY_TOLERANCE
):
    """Return a dict of class probabilities, or raise naming ``name``.

    ``value`` must be a non-empty dict (river's ``predict_proba_one`` output) whose keys
    are class labels (see :func:`check_class_label`) and whose values are real numbers in [0, 1]
    (not bools) with ``|sum - 1| <= tol``. A class absent from the dict has probability
    0. The returned dict has float values and the keys in the same order: it is
    ``value`` itself when every value is already a float (no copy is made, so do not
    mutate it), otherwise a new dict. Cost O(number of keys).

    Examples
    --------
    >>> check_probability_vector({"a": 0.25, "b": 0.75}, "ConfidenceECE", "update")
    {'a': 0.25, 'b': 0.75}
    >>> check_probability_vector({"a": 0.25, "b": 0.5}, "ConfidenceECE", "update")
    Traceback (most recent call last):
    ...
    ValueError: The 'y_pred' argument of ConfidenceECE.update must be a non-empty dict mapping class labels to probabilities in [0, 1] that sum to 1 within 1e-06. Got {'a': 0.25, 'b': 0.5} (sum 0.75) instead.
    >>> check_probability_vector({"a": -0.5, "b": 1.5}, "ConfidenceECE", "update")
    Traceback (most recent call last):
    ...
    ValueError: The 'y_pred' argument of ConfidenceECE.update must be a non-empty dict mapping class labels to probabilities in [0, 1] that sum to 1 within 1e-06. Got {'a': -0.5, 'b': 1.5} (probability -0.5 for class 'a') instead.

    """
    if isinstance(value, dict):
        total = 0.0
        for k, p in value.items():  # fast path: float values in [0, 1], str/int/bool keys
            tk = type(k)
            if type(p) is float and 0.0 <= p <= 1.0 and (tk is str or tk is int or tk is bool):
                total += p
            else:
                break
        else:
            if value and -tol <= total - 1.0 <= tol:
                return value
    if not isinstance(value, dict):
        raise argument_error(TypeError, name, owner, method, _probability_vector_domain(tol), value)
    if not value:
        raise argument_error(ValueError, name, owner, method, _probability_vector_domain(tol), value)
    out = {}
    total = 0.0
    for k, p in value.items():
        k = _class_key(k, value, name, owner, method, _probability_vector_domain(tol))
        if type(p) is bool or not is_real(p):
            raise argument_error(
                TypeError, name, owner, method, _probability_vector_domain(tol), value,
                suffix=f" (probability {format_value(p)} for class {format_value(k)})",
            )
        x = float(p)
        if not 0.0 <= x <= 1.0:
            raise argument_error(
                ValueError, name, owner, method, _probability_vector_domain(tol), value,
                suffix=f" (probability {format_value(p)} for class {format_value(k)})",
            )
        out[k] = x
        total += x
    if not -tol <= total - 1.0 <= tol:
        raise argument_error(
            ValueError, name, owner, method, _probability_vector_domain(tol), value, suffix=f" (sum {total!r})"
        )
    return out


_REAL_VECTOR_DOMAIN = "a non-empty dict mapping class labels to finite real numbers"


def check_real_vector(value, owner: str, method: str | None = None, name: str = "scores") -> dict:
    """Return a dict class -> finite float (logits or log-probabilities), or raise.

    The keys are class labels (see :func:`check_class_label`; numpy scalars become
    their Python twins).

    Examples
    --------
    >>> check_real_vector({"a": 1, "b": -2.5}, "TemperatureScaling", "learn_one")
    {'a': 1.0, 'b': -2.5}
    >>> check_real_vector({"a": float("inf")}, "TemperatureScaling", "learn_one")
    Traceback (most recent call last):
    ...
    ValueError: The 'scores' argument of TemperatureScaling.learn_one must be a non-empty dict mapping class labels to finite real numbers. Got {'a': inf} instead.

    """
    if not isinstance(value, dict):
        raise argument_error(TypeError, name, owner, method, _REAL_VECTOR_DOMAIN, value)
    if not value:
        raise argument_error(ValueError, name, owner, method, _REAL_VECTOR_DOMAIN, value)
    out = {}
    for k, x in value.items():
        if type(x) is bool or not is_real(x):
            raise argument_error(TypeError, name, owner, method, _REAL_VECTOR_DOMAIN, value)
        f = float(x)
        if not math.isfinite(f):
            raise argument_error(ValueError, name, owner, method, _REAL_VECTOR_DOMAIN, value)
        out[_class_key(k, value, name, owner, method, _REAL_VECTOR_DOMAIN)] = f
    return out


KEY_DOMAIN = "a JSON scalar: a str, an int, a bool or a finite float"


def check_key(value, owner: str, method: str | None = None, name: str = "key"):
    """Return a segment key as a Python str, int, bool or finite float, or raise.

    Keys are JSON scalars so that a keyed object's snapshot can hold them; numpy
    scalars become their Python twins. Keys compare as dict keys do: ``1``, ``1.0``
    and ``True`` are one key. None, NaN, infinities, containers and other objects are
    rejected.

    Examples
    --------
    >>> check_key("tenant-7", "KeyedCalibrator", "learn_one")
    'tenant-7'
    >>> check_key(float("nan"), "KeyedCalibrator", "learn_one")
    Traceback (most recent call last):
    ...
    ValueError: The 'key' argument of KeyedCalibrator.learn_one must be a JSON scalar: a str, an int, a bool or a finite float. Got nan instead.

    """
    return _json_scalar(value, owner, method, name, KEY_DOMAIN)

# ------------------------------------------------------------------ snapshots
# The messages of ``from_dict`` (:mod:`streamcal._snapshot`): entry, class, domain, value.

FINITE_DOMAIN = "a finite real number"


def snapshot_error(owner: str, where: str, domain: str, value, suffix: str = "") -> ValueError:
    """The error for the entry ``where`` of a snapshot of ``owner``.

    Examples
    --------
    >>> print(snapshot_error("OnlineIsotonic", "state['n_events']", "an int >= 0", -1))
    The snapshot entry state['n_events'] of OnlineIsotonic must be an int >= 0. Got -1 instead.

    """
    return ValueError(
        f"The snapshot entry {where} of {owner} must be {domain}. "
        f"Got {format_value(value)}{suffix} instead."
    )


def check_choice(value, owner: str, name: str, choices):
    """``value`` if it is one of the strings ``choices``; else a TypeError (not a str) or
    a ValueError (another str) in the argument template.

    Examples
    --------
    >>> check_choice("quantile", "binned_reliability", "strategy", ("uniform", "quantile"))
    'quantile'
    >>> check_choice("equal", "binned_reliability", "strategy", ("uniform", "quantile"))
    Traceback (most recent call last):
    ...
    ValueError: The 'strategy' argument of binned_reliability must be a str among {'uniform', 'quantile'}. Got 'equal' instead.

    """
    if not isinstance(value, str) or value not in choices:
        domain = "a str among {" + ", ".join(repr(c) for c in choices) + "}"
        exc = ValueError if isinstance(value, str) else TypeError
        raise argument_error(exc, name, owner, None, domain, value)
    return value


def check_level(level, owner: str, name: str = "level") -> float:
    """A coverage level: a real number in (0, 1)."""
    return check_real(level, owner, name, lambda v: 0.0 < v < 1.0, "a real number in (0, 1)")


def check_clip_level(eps, owner: str) -> float:
    """The clipping level ``eps`` of a log score (forecasts clipped to [eps, 1 - eps])."""
    return check_real(eps, owner, "eps", lambda v: 0.0 < v < 0.5, "a real number in (0, 0.5)")


def check_forecasts(probs, weights, owner: str, labels=None, names=("probs", "labels")):
    """Validated float arrays ``(p, y, w)`` of forecasts, labels and weights (argument
    names ``names`` and ``weights``), events of zero weight dropped, at least one left;
    ``y`` is None when ``labels`` is."""
    p = check_scores_array(probs, owner, None, name=names[0])
    y = None
    if labels is not None:
        y = check_labels_array(labels, len(p), owner, None, name=names[1])
    w = check_weights_array(weights, len(p), owner, None, name="weights")
    keep = w > 0
    if not keep.any():
        raise ValueError(
            f"The {names[0]!r} argument of {owner} must hold at least one event of "
            f"positive weight. Got {format_value(probs)} instead."
        )
    if not keep.all():
        p, w = p[keep], w[keep]
        y = None if y is None else y[keep]
    return p, y, w


def check_forecast_events(y_true, y_prob, weights, owner: str):
    """:func:`check_forecasts` of the arguments ``y_true`` (required) and ``y_prob``."""
    if y_true is None:
        domain = "a sequence of binary labels"
        raise argument_error(TypeError, "y_true", owner, None, domain, y_true)
    return check_forecasts(y_prob, weights, owner, y_true, names=("y_prob", "y_true"))


def _all_binary(values) -> bool:
    """True if ``values`` is a non-empty 1-D sequence of numbers all 0 or 1."""
    try:
        a = np.asarray(values)
    except (TypeError, ValueError):
        return False
    if a.ndim != 1 or a.size == 0 or a.dtype.kind not in "biuf":
        return False
    return bool(np.all((a == 0) | (a == 1)))


def labels_then_probs(y_true, y_prob, owner: str, probs=None, labels=None, stacklevel=3):
    """``(y_true, y_prob)`` of a function that took ``(probs, labels)`` before, for one
    release of deprecation (a DeprecationWarning whenever the old order is used).

    The old order is recognised when the old keywords ``probs`` / ``labels`` are used,
    or positionally when ``y_prob`` holds only 0/1 values and ``y_true`` does not
    (labels are 0/1; probabilities that are all 0 or 1 are not told from labels). When
    it is ambiguous (both all 0/1, or neither), the new order is assumed.

    Examples
    --------
    >>> labels_then_probs([0, 1], [0.2, 0.7], "f")
    ([0, 1], [0.2, 0.7])

    """
    import warnings

    if probs is not None or labels is not None:
        if y_true is not None or y_prob is not None:
            raise TypeError(
                f"{owner} takes (y_true, y_prob); the deprecated 'probs' and 'labels' "
                "arguments cannot be combined with them."
            )
        warnings.warn(
            f"The 'probs' and 'labels' arguments of {owner} are deprecated and will be "
            "removed in the next release: pass y_true (the labels) and y_prob (the "
            "probabilities), in that order.",
            DeprecationWarning,
            stacklevel=stacklevel,
        )
        return labels, probs
    if y_true is not None and y_prob is not None:
        if _all_binary(y_prob) and not _all_binary(y_true):
            warnings.warn(
                f"{owner} takes (y_true, y_prob): the first argument holds values other "
                "than 0 and 1 and the second only 0 and 1, so they are read in the old "
                "order (probs, labels), which is deprecated and will stop working in "
                "the next release. (When both hold only 0 and 1, the new order is "
                "assumed.)",
                DeprecationWarning,
                stacklevel=stacklevel,
            )
            return y_prob, y_true
    return y_true, y_prob



def field_error(message: str, field: str, domain: str, value) -> ValueError:
    """A dead letter's reason: field ``field`` of a ``message``, missing (None) or not in ``domain``.

    >>> print(field_error("score event", "score", "a real number in [0, 1]", None))
    The 'score' field of a score event must be a real number in [0, 1]. Got no such field instead.
    """
    got = "no such field" if value is None else format_value(value)
    return ValueError(f"The {field!r} field of a {message} must be {domain}. Got {got} instead.")
