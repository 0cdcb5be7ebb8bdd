"""Python values as JSON data (private): the one home of how streamcal writes numpy
scalars, tuples, dict keys and non-finite floats into JSON, and reads them back.

Every writer of JSON goes through :func:`encode` (or :func:`number` for one number),
choosing what its format has always done as parameters:

- snapshot parameters (:mod:`streamcal._snapshot`): ``encode(value, nested=...)``,
  tuples as lists, non-finite floats as they are (the snapshot's checks refuse them);
- class labels (:mod:`streamcal._classes`): ``encode(label, tuples="tag")``, a tuple as
  ``{"tuple": [...]}`` so that it reads back as a tuple;
- replay result summaries and series (``ReplayResult.to_dict``): ``number(x)``, a
  finite number, or None (null) for anything else;
- the report's ``summary.json``: ``encode(doc, non_finite="null", keys="str",
  other="str")``;
- river detector states (the monitors): ``number(x, non_finite="text")``, infinities
  as the strings ``'inf'`` / ``'-inf'``, read back by :func:`decode_number`.

Examples
--------
>>> import numpy as np
>>> encode({"a": (np.float64(0.5), float("nan"))}, non_finite="null")
{'a': [0.5, None]}
>>> number(float("-inf"), non_finite="text"), decode_number("-inf")
('-inf', -inf)

"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["decode_number", "encode", "number", "scalar"]

_NON_FINITE = ("keep", "null", "text")


def scalar(value):
    """``value`` with numpy scalars turned into their Python twins; anything else
    unchanged.

    Examples
    --------
    >>> type(scalar(np.int64(3))), scalar("uniform")
    (<class 'int'>, 'uniform')

    """
    return value.item() if isinstance(value, np.generic) else value


def number(x, non_finite: str = "null"):
    """``x`` as a JSON number.

    An int (bool included) or a finite float is returned as it is. Otherwise, with
    ``non_finite="null"``, None: non-finite floats and anything that is not a Python
    number (what a replay result writes); with ``non_finite="text"``, an infinity as the
    string ``'inf'`` or ``'-inf'`` (a ValueError for NaN, which no reader expects).

    Examples
    --------
    >>> number(2), number(float("inf")), number("a"), number(float("inf"), "text")
    (2, None, None, 'inf')

    """
    if isinstance(x, int) or (isinstance(x, float) and math.isfinite(x)):
        return x
    if non_finite == "null":
        return None
    if non_finite == "text" and math.isinf(x):
        return repr(float(x))
    if non_finite == "text" and math.isnan(x):
        raise ValueError("NaN cannot be written as JSON text.")
    return x


def decode_number(v, what: str = "A number"):
    """The number :func:`number` wrote with ``non_finite="text"``; a ValueError
    starting with ``what`` for anything else.

    Examples
    --------
    >>> decode_number(1), decode_number("inf")
    (1, inf)
    >>> decode_number("nan")
    Traceback (most recent call last):
    ...
    ValueError: A number must be an int, a float, 'inf' or '-inf'. Got 'nan' instead.

    """
    if type(v) is int or type(v) is float:
        return v
    if v in ("inf", "-inf"):
        return float(v)
    raise ValueError(
        f"{what} must be an int, a float, 'inf' or '-inf'. Got {v!r} instead."
    )


def encode(
    value,
    *,
    tuples: str = "list",
    non_finite: str = "keep",
    keys: str = "keep",
    other: str = "keep",
    nested=None,
):
    """``value`` as JSON data, through lists, tuples and dict values.

    Numpy scalars become their Python twins. O(size of ``value``).

    Parameters
    ----------
    value
        What to encode.
    tuples
        ``"list"``: a tuple becomes a list; ``"tag"``: ``{"tuple": [...]}`` (what a
        class label needs to read back as a tuple).
    non_finite
        What a NaN or infinite float becomes: ``"keep"`` itself, ``"null"`` None,
        ``"text"`` the string ``'inf'`` or ``'-inf'`` (see :func:`number`).
    keys
        ``"keep"`` dict keys as they are, or ``"str"`` turned into strings.
    other
        What a value that is not None, a bool, a number, a str, a list, a tuple or a
        dict becomes: ``"keep"`` itself, ``"str"`` its ``str()``.
    nested
        None, or a function called first on every value: what it returns, unless
        None, is the encoding (a snapshot parameter that is itself a calibrator).

    Examples
    --------
    >>> encode((1, np.int64(2)), tuples="tag")
    {'tuple': [1, 2]}
    >>> encode({1: [float("inf"), object]}, non_finite="null", keys="str", other="str")
    {'1': [None, "<class 'object'>"]}

    """
    if non_finite not in _NON_FINITE:
        raise ValueError(f"non_finite must be one of {_NON_FINITE}. Got {non_finite!r} instead.")
    return _encode(value, tuples == "tag", non_finite, keys == "str", other == "str", nested)


def _encode(value, tag, non_finite, str_keys, to_str, nested):
    if nested is not None:
        out = nested(value)
        if out is not None:
            return out
    value = scalar(value)
    if isinstance(value, float):
        return value if non_finite == "keep" else number(value, non_finite)
    if isinstance(value, (tuple, list)):
        items = [_encode(v, tag, non_finite, str_keys, to_str, nested) for v in value]
        return {"tuple": items} if tag and isinstance(value, tuple) else items
    if isinstance(value, dict):
        return {
            (str(k) if str_keys else k): _encode(v, tag, non_finite, str_keys, to_str, nested)
            for k, v in value.items()
        }
    if not to_str or value is None or isinstance(value, (bool, int, str)):
        return value
    return str(value)
