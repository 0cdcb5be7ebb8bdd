"""Parsing and checking the fields of a log's rows (private).

A row comes from a :class:`streamcal.replay._readers.Log`; this module turns its fields
into a score, a label, a time or an id, or raises :class:`RowError` with a message
saying what is wrong (without the line number, which the engine adds).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping

__all__ = [
    "BINARY_LABELS",
    "BadRow",
    "RowError",
    "field",
    "json_safe_time",
    "parse_binary_label",
    "parse_score",
    "parse_time",
    "short_repr",
]

#: Label values of binary logs and the label each stands for (dict lookup: ``1``,
#: ``1.0``, ``True`` and their numpy forms hash alike, so one key covers them).
BINARY_LABELS = {
    0: 0,
    1: 1,
    "0": 0,
    "1": 1,
    "0.0": 0,
    "1.0": 1,
    "False": 0,
    "True": 1,
    "false": 0,
    "true": 1,
    "FALSE": 0,
    "TRUE": 1,
}



class RowError(ValueError):
    """A malformed row; the message says what is wrong (without the line number)."""


class BadRow:
    """Stands for a row that could not even be read (invalid JSON, say): indexing it
    raises KeyError, so the fast paths reject it, and :func:`field` reports
    ``reason``."""

    __slots__ = ("reason",)

    def __init__(self, reason: str):
        self.reason = reason

    def __getitem__(self, key):
        raise KeyError(key)


# ---------------------------------------------------------------------- fields


def short_repr(value) -> str:
    """``repr(value)``, cut to 40 characters: how a bad value is shown in a message."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def field(row, key, column: str, role: str):
    """The value of ``column`` (looked up by ``key``) in ``row``, or raise
    :class:`RowError` when the row has no such field or it is empty (``""``, None)."""
    if isinstance(row, BadRow):
        raise RowError(row.reason)
    try:
        value = row[key]
    except (LookupError, TypeError):
        if isinstance(key, str) and not isinstance(row, Mapping):
            raise RowError(f"the row is not a record (a dict): {short_repr(row)}") from None
        if isinstance(key, int):
            raise RowError(
                f"missing {role} (column {column!r}): the row has {len(row)} fields"
            ) from None
        raise RowError(f"missing {role} (column {column!r})") from None
    if value is None or (type(value) is str and value == ""):
        raise RowError(f"missing {role} (column {column!r})")
    return value


def parse_score(value, column: str, role: str = "score") -> float:
    """``value`` as a float in [0, 1], or raise :class:`RowError`.

    Accepts what ``float()`` accepts (numbers, numeric text) except bools; rejects NaN
    and values outside [0, 1].
    """
    if value is True or value is False:
        raise RowError(f"{role} {value!r} is a bool, not a number (column {column!r})")
    try:
        s = float(value)
    except (TypeError, ValueError):
        raise RowError(
            f"non-numeric {role} {short_repr(value)} (column {column!r})"
        ) from None
    if math.isnan(s):
        raise RowError(f"{role} is NaN (column {column!r})")
    if not 0.0 <= s <= 1.0:
        raise RowError(
            f"{role} {short_repr(value)} out of range [0, 1] (column {column!r})"
        )
    return s


def parse_binary_label(value, column: str) -> int:
    """A binary label (see :data:`BINARY_LABELS`) as the int 0 or 1, or raise."""
    try:
        return BINARY_LABELS[value]
    except (KeyError, TypeError):
        raise RowError(
            f"unknown label {short_repr(value)} (column {column!r}): expected 0 or 1"
        ) from None


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def _datetime_seconds(d: dt.datetime) -> float:
    if d.tzinfo is None:
        d = d.replace(tzinfo=dt.timezone.utc)
    return (d - _EPOCH).total_seconds()


def parse_time(value, column: str, role: str = "time") -> float:
    """A point in time as a float, or raise :class:`RowError`.

    Numbers (and numeric text) are taken as they are; ISO 8601 text
    (``"2013-01-01T06:00:00Z"``, ``"2013-01-01 06:00"``, ``"2013-01-01"``), Python
    datetimes and dates, pandas Timestamps and numpy datetime64 become seconds since
    1970-01-01 UTC, a time without a zone being read as UTC. The two time columns of a
    log must use the same form (numbers are not converted to dates).
    """
    t = type(value)
    if t is float or t is int:
        x = float(value)
        if math.isnan(x):
            raise RowError(f"{role} is NaN (column {column!r})")
        return x
    if t is str:
        try:
            x = float(value)
        except ValueError:
            pass
        else:
            if math.isnan(x):
                raise RowError(f"{role} is NaN (column {column!r})")
            return x
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            return _datetime_seconds(dt.datetime.fromisoformat(text))
        except ValueError:
            raise RowError(
                f"{role} {short_repr(value)} is neither a number nor an ISO 8601 date "
                f"(column {column!r})"
            ) from None
    if isinstance(value, dt.datetime):
        if value != value:  # noqa: PLR0124 - pandas NaT
            raise RowError(f"missing {role} (column {column!r})")
        return _datetime_seconds(value)
    if isinstance(value, dt.date):
        return _datetime_seconds(dt.datetime(value.year, value.month, value.day))
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    if kind == "M":  # numpy datetime64
        import numpy as np

        if np.isnat(value):
            raise RowError(f"missing {role} (column {column!r})")
        return float(value.astype("datetime64[us]").astype(np.int64)) / 1e6
    if value is not True and value is not False and kind in ("i", "u", "f"):
        return parse_time(value.item(), column, role)
    raise RowError(f"{role} {short_repr(value)} is not a time (column {column!r})")


def json_safe_time(value):
    """``value`` (a time as found in the log) as JSON data: text and finite numbers as
    they are, dates in ISO 8601, numpy scalars as their Python twins, else ``str``."""
    t = type(value)
    if t is str or t is int or value is None:
        return value
    if t is float:
        return value if math.isfinite(value) else None
    if isinstance(value, (dt.datetime, dt.date)):
        return None if value != value else value.isoformat()  # noqa: PLR0124 - NaT
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    if kind == "M":
        return str(value)
    if kind in ("b", "i", "u", "f"):
        return json_safe_time(value.item())
    return str(value)
