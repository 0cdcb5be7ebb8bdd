"""The only home of input checks and their error messages.

Every message follows one template, modelled on scikit-learn's parameter validation::

    The 'score' argument of OnlineIsotonic.learn_one must be a real number in [0, 1].
    Got nan instead.

It names the argument, the expected domain and the value received. Checks never touch
the state of the object they guard: callers validate everything first, then mutate.

The per-event checks (:func:`check_score`, :func:`check_label`, :func:`check_weight`)
have a fast path for the common exact types (``float``, ``int``, ``bool``) so that a
valid event costs a type test and a comparison.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "argument_error",
    "check_class_label",
    "check_int",
    "check_label",
    "check_labels_array",
    "check_param",
    "check_probability",
    "check_probability_vector",
    "check_real",
    "check_real_vector",
    "check_score",
    "check_scores_array",
    "check_weight",
    "check_weights_array",
    "format_value",
    "is_integer",
    "is_real",
    "json_safe_scalar",
]

SCORE_DOMAIN = "a real number in [0, 1]"
LABEL_DOMAIN = "a binary label in {0, 1, False, True}"
WEIGHT_DOMAIN = "a finite real number >= 0"
PROBABILITY_DOMAIN = "a probability in [0, 1] or a dict of class probabilities with key True or 1"


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


def argument_error(exc, name, owner, method, domain, value, suffix=""):
    """Build the error for argument ``name`` of ``owner.method`` (see the module docstring)."""
    return exc(
        f"The {name!r} argument of {_where(owner, method)} must be {domain}. "
        f"Got {format_value(value)}{suffix} instead."
    )


def is_real(value) -> bool:
    """A real number that is not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


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
    if not 0.0 <= x <= 1.0:
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

    Accepts a real number in [0, 1] or river's ``predict_proba_one`` output, a dict whose
    key ``True`` (else ``1``) holds that probability.

    Examples
    --------
    >>> check_probability({False: 0.25, True: 0.75}, "Brier", "update")
    0.75
    >>> check_probability(1.5, "Brier", "update")
    Traceback (most recent call last):
    ...
    ValueError: The 'y_pred' argument of Brier.update must be a probability in [0, 1] or a dict of class probabilities with key True or 1. Got 1.5 instead.

    """
    if type(value) is float and 0.0 <= value <= 1.0:  # fast path; NaN fails the test
        return value
    p = value
    if isinstance(value, dict):
        if True in value:  # also finds the key 1, since True == 1
            p = value[True]
        else:
            raise argument_error(ValueError, name, owner, method, PROBABILITY_DOMAIN, value)
    if type(p) is bool or not is_real(p):
        raise argument_error(TypeError, name, owner, method, PROBABILITY_DOMAIN, value)
    x = float(p)
    if not 0.0 <= x <= 1.0:
        raise argument_error(ValueError, name, owner, method, PROBABILITY_DOMAIN, value)
    return x


def json_safe_scalar(value):
    """``value`` with numpy scalars turned into their Python twins (for JSON snapshots).

    Examples
    --------
    >>> import numpy as np
    >>> type(json_safe_scalar(np.int64(3))), json_safe_scalar("uniform")
    (<class 'int'>, 'uniform')

    """
    return value.item() if isinstance(value, np.generic) else value


def check_weight(value, owner: str, method: str | None = None, name: str = "w") -> float:
    """Return a sample weight as a float, or raise naming ``name``.

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
    if not 0.0 <= x < math.inf:
        raise argument_error(ValueError, name, owner, method, WEIGHT_DOMAIN, value)
    return x


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


def _numeric_or_raise(arr, name, owner, method, domain, allow_bool=False):
    kind = arr.dtype.kind
    if kind == "b" and not allow_bool:
        _first_bad(arr, np.ones(len(arr), bool), name, owner, method, domain, TypeError)
    if kind in "biuf":
        return arr.astype(np.float64, copy=False)
    if kind == "O":
        ok = np.fromiter(
            (is_real(v) or (allow_bool and isinstance(v, (bool, np.bool_))) for v in arr),
            dtype=bool,
            count=len(arr),
        )
        if not ok.all():
            _first_bad(arr, ~ok, name, owner, method, domain, TypeError)
        return arr.astype(np.float64)
    if len(arr) == 0:
        return arr.astype(np.float64)
    _first_bad(arr, np.ones(len(arr), bool), name, owner, method, domain, TypeError)


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
    arr = _numeric_or_raise(
        _as_1d(values, name, owner, method, "real number", n, like), name, owner, method, SCORE_DOMAIN
    )
    bad = ~((arr >= 0.0) & (arr <= 1.0))
    if bad.any():
        _first_bad(arr, bad, name, owner, method, SCORE_DOMAIN)
    return arr


def check_labels_array(values, n: int, owner: str, method: str | None = None, name: str = "labels"):
    """Return a float64 array of 0.0/1.0 labels of length ``n``, or raise.

    Examples
    --------
    >>> check_labels_array([True, 0, 1], 3, "OnlineIsotonic", "learn_many")
    array([1., 0., 1.])

    """
    raw = _as_1d(values, name, owner, method, "binary label", n)
    arr = _numeric_or_raise(raw, name, owner, method, LABEL_DOMAIN, allow_bool=True)
    bad = ~((arr == 0.0) | (arr == 1.0))
    if bad.any():
        _first_bad(raw, bad, name, owner, method, LABEL_DOMAIN)
    return arr


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
        _as_1d(values, name, owner, method, "real number", n), name, owner, method, WEIGHT_DOMAIN
    )
    bad = ~((arr >= 0.0) & (arr < np.inf))
    if bad.any():
        _first_bad(arr, bad, name, owner, method, WEIGHT_DOMAIN)
    return arr


CLASS_LABEL_DOMAIN = "a hashable class label other than NaN"


def check_class_label(value, owner: str, method: str | None = None, name: str = "y_true"):
    """Return a multiclass label unchanged if it is hashable and not NaN, or raise.

    Any hashable value names a class (``"cat"``, ``3``, ``True``, ``("a", 1)``);
    labels are compared as dict keys are, so ``1``, ``1.0`` and ``True`` are one class.
    NaN is rejected because it is not equal to itself and so could match no class.

    Examples
    --------
    >>> check_class_label("cat", "ConfidenceECE", "update")
    'cat'
    >>> check_class_label(["cat"], "ConfidenceECE", "update")
    Traceback (most recent call last):
    ...
    TypeError: The 'y_true' argument of ConfidenceECE.update must be a hashable class label other than NaN. Got ['cat'] instead.

    """
    t = type(value)
    if t is str or t is int or t is bool:  # fast path
        return value
    try:
        hash(value)
    except TypeError:
        raise argument_error(TypeError, name, owner, method, CLASS_LABEL_DOMAIN, value) from None
    if is_real(value) and math.isnan(value):
        raise argument_error(ValueError, name, owner, method, CLASS_LABEL_DOMAIN, value)
    return value


def _probability_vector_domain(tol) -> str:
    return (
        "a non-empty dict mapping class labels to probabilities in [0, 1] "
        f"that sum to 1 within {tol:g}"
    )


def check_probability_vector(value, owner: str, method: str | None = None, name: str = "y_pred", tol: float = 1e-6):
    """Return a dict of class probabilities, or raise naming ``name``.

    ``value`` must be a non-empty dict (river's ``predict_proba_one`` output) whose keys
    are class labels (hashable, not NaN) and whose values are real numbers in [0, 1]
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
        for k, p in value.items():  # fast path: float values in [0, 1], no float key
            if type(p) is float and 0.0 <= p <= 1.0 and type(k) is not float:
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
        if is_real(k) and math.isnan(k):
            raise argument_error(
                ValueError, name, owner, method, _probability_vector_domain(tol), value, suffix=" (a NaN class label)"
            )
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
        try:
            hash(k)
        except TypeError:
            raise argument_error(TypeError, name, owner, method, _REAL_VECTOR_DOMAIN, value) from None
        out[k] = f
    return out


# ------------------------------------------------------------------ snapshots
# The messages of ``from_dict`` (see :mod:`streamcal._snapshot`): they name the entry
# of the snapshot (``state['window'][3][2]``), the class, the domain and the value.

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


def check_snapshot_entry(owner: str, where: str, value, ok: bool, domain: str) -> None:
    """Raise :func:`snapshot_error` unless ``ok``.

    Examples
    --------
    >>> check_snapshot_entry("ECE", "state['bins']", [1, 2], False, "a list of 10 bins")
    Traceback (most recent call last):
    ...
    ValueError: The snapshot entry state['bins'] of ECE must be a list of 10 bins. Got [1, 2] instead.

    """
    if not ok:
        raise snapshot_error(owner, where, domain, value)
