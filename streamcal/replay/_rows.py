"""Parsing and checking the fields of a log's rows (private).

A row comes from a :class:`streamcal.replay._readers.Log`; this module turns its fields
into a score, a label, a time or an id, or raises :class:`RowError` with a message
saying what is wrong (without the line number, which the engine adds).
"""

from __future__ import annotations

import datetime as dt
import gc
import math
import numbers
import re
import sys
from collections.abc import Mapping

__all__ = [
    "BINARY_LABELS",
    "BadRow",
    "RowError",
    "RowParser",
    "binary_columns_at_once",
    "field",
    "json_safe_time",
    "parse_binary_label",
    "parse_id",
    "parse_score",
    "parse_time",
    "short_repr",
]

class _BinaryLabels(dict):
    """The binary label table: a text label with surrounding whitespace (``" 1"``) is
    looked up without it, as ``float`` reads a score ``" 0.5"``. Only a missed lookup
    pays for this (``__missing__``), so the fast paths' dict lookups cost what they did."""

    __slots__ = ()

    def __missing__(self, key):
        if isinstance(key, str):
            stripped = key.strip()
            if stripped != key:
                return self[stripped]
        raise KeyError(key)


#: Label values of binary logs and the label each stands for (dict lookup: ``1``,
#: ``1.0``, ``True`` and their numpy forms hash alike, so one key covers them; text is
#: looked up without surrounding whitespace).
BINARY_LABELS = _BinaryLabels(
    {
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
)

# A multiclass row's probabilities are divided by their sum when it differs from 1 by
# more than SUM_EXACT, and the row is malformed when it differs by more than SUM_TOL.
SUM_EXACT = 1e-9
SUM_TOL = 0.01


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

    def __repr__(self) -> str:
        # what the row fingerprint of a checkpoint hashes: the same in every process
        return f"BadRow({self.reason!r})"


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


def _is_bool(value) -> bool:
    """A Python or numpy bool (refused where a number is expected)."""
    return value is True or value is False or getattr(getattr(value, "dtype", None), "kind", None) == "b"


def parse_score(value, column: str, role: str = "score") -> float:
    """``value`` as a float in [0, 1], or raise :class:`RowError`.

    Accepts what ``float()`` accepts (numbers, numeric text) except bools; rejects NaN
    and values outside [0, 1].
    """
    if _is_bool(value):
        raise RowError(f"{role} {value!r} is a bool, not a number (column {column!r})")
    try:
        s = float(value)
    except (TypeError, ValueError):
        raise RowError(
            f"non-numeric {role} {short_repr(value)} (column {column!r})"
        ) from None
    except OverflowError:  # an integer beyond the doubles
        raise RowError(
            f"{role} {short_repr(value)} out of range [0, 1] (column {column!r})"
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


# an id written as a float with an integral value is: "17.0", "-3.00" (no sign "+", no
# leading zeros, no exponent); group 1 is its integer part
_INTEGRAL_DECIMAL = re.compile(r"(-?(?:0|[1-9][0-9]*))\.0+\Z")


def parse_id(value, column: str) -> str:
    """An event id as the text it is compared by, or raise :class:`RowError`.

    Ids join events to label records that may come from files of other formats (JSON
    numbers, CSV text, Parquet integers or floats), so every id is compared as text,
    whatever the format, and an integral value has one text:

    - a number with an integral value (``17``, ``17.0``, a numpy integer or float) is
      its integer text ``"17"``; another finite float its ``repr`` (``1.5`` as
      ``"1.5"``);
    - text is taken without surrounding whitespace; text that is a decimal number with
      an integral value, written as a float is (digits without leading zeros, an
      optional ``-``, a point and only zeros after it: ``"17.0"``, ``"17.00"``,
      ``"-3.0"``), is the integer text (``"17"``, ``"-3"``; ``"-0.0"`` is ``"0"``),
      so ``17``, ``17.0``, ``"17"`` and ``"17.0"`` all match;
    - any other text is kept as it is: ``"017"``, ``"017.0"``, ``"+17"``, ``"17."``,
      ``"1e1"`` (hexadecimal ids look like exponents) and ``"1.50"`` do not match
      ``17``, ``10`` or ``1.5``;
    - bools, NaN, infinities and anything else (lists, dicts, dates) are refused.

    Floats beyond 2**53 are not exact: ids that large should be integers or text.

    Examples
    --------
    >>> parse_id(17, "id"), parse_id(" 17 ", "id"), parse_id(17.0, "id")
    ('17', '17', '17')
    >>> parse_id("17.0", "id"), parse_id("17.00", "id"), parse_id("017", "id"), parse_id("1e1", "id")
    ('17', '17', '017', '1e1')
    """
    if type(value) is str:
        text = value.strip()
        if not text:
            raise RowError(f"missing id (column {column!r})")
        if "." in text:
            integral = _INTEGRAL_DECIMAL.match(text)
            if integral is not None:  # (no int(): the text may have any length)
                whole = integral.group(1)
                return "0" if whole == "-0" else whole
        return text
    if _is_bool(value):
        raise RowError(f"id {short_repr(value)} is a bool, not a text or a number (column {column!r})")
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        x = float(value)
        if not math.isfinite(x):
            raise RowError(f"id {short_repr(value)} is not finite (column {column!r})")
        return str(int(x)) if x.is_integer() else repr(x)
    raise RowError(
        f"id {short_repr(value)} is neither a text nor a number (column {column!r})"
    )


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
# the largest integer ``float`` takes (beyond it, OverflowError)
_MAX_INT_TIME = int(sys.float_info.max)


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
    if t is int and not -_MAX_INT_TIME <= value <= _MAX_INT_TIME:
        raise RowError(f"{role} {short_repr(value)} is beyond the range of a float (column {column!r})")
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


# ---------------------------------------------------------------------- rows


def binary_columns_at_once(rows, score_key, label_key=None):
    """The scores (floats) and, with ``label_key``, the binary labels (ints) of
    ``rows``, a column at a time: ``(scores, labels or None)``, or None when a row is
    not plain (a field missing or unreadable, a bool score, a score outside [0, 1] or
    NaN, an unknown label): the caller then parses the rows one by one, which words
    each row's error. The same values as :func:`parse_score` and
    :func:`parse_binary_label`.

    Examples
    --------
    >>> binary_columns_at_once([{"s": "0.5", "y": " 1"}, {"s": 0.25, "y": 0}], "s", "y")
    ([0.5, 0.25], [1, 0])
    >>> binary_columns_at_once([{"s": 1.5, "y": 1}], "s", "y") is None
    True
    """
    import numpy as np  # only where a chunk is parsed (start-up: see the package)

    collecting = gc.isenabled()
    gc.disable()  # tens of thousands of containers that all stay alive
    try:
        raw = [row[score_key] for row in rows]
        if any(t is bool or issubclass(t, np.bool_) for t in set(map(type, raw))):
            return None  # the row parser refuses bools, numpy's included
        scores = list(map(float, raw))
        labels = None if label_key is None else [BINARY_LABELS[row[label_key]] for row in rows]
    except (LookupError, TypeError, ValueError, OverflowError):
        return None
    finally:
        if collecting:
            gc.enable()
    s = np.asarray(scores, dtype=np.float64)
    if not bool(np.all((s >= 0.0) & (s <= 1.0))):  # NaN fails too
        return None
    return scores, labels


_NUMBER_TYPES = {str, float, int}


def _times_at_once(rows, key, column: str, role: str) -> list:
    """:func:`parse_time` of the field ``key`` of each row: numbers and numeric text
    (the common case) by one ``float`` each, else value by value; raises RowError (or
    LookupError, TypeError) for a row :func:`parse_time` refuses."""
    raw = [row[key] for row in rows]
    if set(map(type, raw)) <= _NUMBER_TYPES:
        try:
            times = list(map(float, raw))
        except ValueError:  # dates as text
            pass
        else:
            if any(map(math.isnan, times)):
                raise RowError(f"{role} is NaN (column {column!r})")
            return times
    return [parse_time(v, column, role) for v in raw]


class RowParser:
    """The one home of row validation: a log's rows parsed into events and label
    records, or :class:`RowError` saying what is wrong with the row.

    Parameters
    ----------
    log
        The :class:`streamcal.replay._readers.Log` of the events; the columns are
        resolved once with :meth:`~streamcal.replay._readers.Log.key` (ValueError when
        one is missing, or duplicated).
    score_columns
        The score column (binary logs), or one probability column per class.
    classes
        The classes of a multiclass log, in the order of ``score_columns``; None for
        a binary log.
    label, time, label_time, id
        The label, event-time, label-time and id columns (None when not used).
    delay
        None (labels known at once), ``"time"`` (a label-time column) or ``"id"``
        (label records joined by id: the events' label column is not read).
    labels
        With ``delay="id"``, the log of the label records (columns ``id``, ``label``
        and ``time``).

    Attributes
    ----------
    keys
        Role (``"score"``, ``"label"``, ``"time"``, ``"label_time"``, ``"id"``) -> the
        key of its column in an event row (None for the roles not used).
    score_keys
        The keys of the score columns.

    Examples
    --------
    >>> from streamcal.replay._readers import open_log
    >>> log = open_log([{"p": 0.25, "y": " 1", "t": 3}])
    >>> parser = RowParser(log, score_columns=["p"], classes=None, label="y", time="t",
    ...                    label_time=None, id=None, delay=None)
    >>> parser.parse_event({"p": "0.25", "y": " 1", "t": 3})
    (0.25, 1, None, None, None)
    >>> parser.parse_event({"p": 1.5, "y": 0})
    Traceback (most recent call last):
    ...
    streamcal.replay._rows.RowError: score 1.5 out of range [0, 1] (column 'p')
    """

    def __init__(
        self, log, *, score_columns, classes, label, time, label_time, id, delay, labels=None
    ):
        self.score_columns = list(score_columns)
        self.classes = None if classes is None else list(classes)
        self.label = label
        self.time = time
        self.label_time = label_time
        self.id = id
        self.delay = delay
        self.score_keys = [log.key(c, "score") for c in self.score_columns]
        keys = {"score": self.score_keys[0]}
        if delay != "id":
            keys["label"] = log.key(label, "label")
        for role in ("time", "label_time", "id"):
            column = getattr(self, role)
            keys[role] = None if column is None else log.key(column, role)
        self.keys = keys
        self.label_keys = None
        if labels is not None:
            self.label_keys = {
                "label": labels.key(label, "label"),
                "time": labels.key(time, "time"),
                "id": labels.key(id, "id"),
            }
        self._class_lookup = None
        if self.classes is not None:
            lookup = {}
            for c in self.classes:  # a label read as text finds its class by str(class)
                lookup.setdefault(str(c), c)
            for c in self.classes:
                lookup[c] = c
            self._class_lookup = lookup

    def parse_event(self, row, last_time: float = -math.inf) -> tuple:
        """``(score, label, time, label_time, id)`` of an event row, or raise
        :class:`RowError`. The score is a float (binary) or a dict class -> probability
        (multiclass); the label is None with label records, the times None without
        delayed labels, the id None unless joined by id. With delayed labels, an event
        earlier than ``last_time`` (the previous event's) is malformed."""
        keys = self.keys
        if self.classes is not None:
            s = self._parse_probabilities(row)
        else:
            s = parse_score(
                field(row, keys["score"], self.score_columns[0], "score"),
                self.score_columns[0],
            )
        y = None
        if self.delay != "id":
            y = self.parse_label(field(row, keys["label"], self.label, "label"))
        t = lt = eid = None
        if self.delay is not None:
            t = parse_time(field(row, keys["time"], self.time, "time"), self.time)
            if t < last_time:
                raise RowError(
                    f"time {short_repr(row[keys['time']])} is earlier than the previous "
                    f"event's (column {self.time!r}): delayed labels need the log in time order"
                )
            if self.delay == "time":
                lt = parse_time(
                    field(row, keys["label_time"], self.label_time, "label_time"),
                    self.label_time,
                    "label_time",
                )
            else:
                eid = parse_id(field(row, keys["id"], self.id, "id"), self.id)
        return s, y, t, lt, eid

    def parse_events_at_once(self, rows, last_time: float = -math.inf):
        """The columns of the :meth:`parse_event` tuples of ``rows`` of a binary log with
        delayed labels (scores, labels, times, label times, ids: five lists), each
        field taken a column at a time, or None when a row is not plain: one that
        :meth:`parse_event` would refuse (a caller then parses the rows one by one,
        which words each row's error), a bool score, or an event earlier than the one
        before it (or than ``last_time``). The same floats as :meth:`parse_event`: each
        field goes through the same conversion.

        Examples
        --------
        >>> from streamcal.replay._readers import open_log
        >>> rows = [{"p": "0.25", "y": "1", "t": "3", "lt": "5"}, {"p": 0.5, "y": 0, "t": 4, "lt": 4}]
        >>> parser = RowParser(open_log(rows), score_columns=["p"], classes=None, label="y",
        ...                    time="t", label_time="lt", id=None, delay="time")
        >>> parser.parse_events_at_once(rows)
        ([0.25, 0.5], [1, 0], [3.0, 4.0], [5.0, 4.0], [None, None])
        >>> parser.parse_events_at_once(rows[::-1]) is None  # out of time order
        True
        """
        delay = self.delay
        if self.classes is not None or delay is None:
            return None
        keys = self.keys
        n = len(rows)
        columns = binary_columns_at_once(rows, keys["score"], keys["label"] if delay != "id" else None)
        if columns is None:
            return None
        scores, labels = columns
        collecting = gc.isenabled()
        gc.disable()  # tens of thousands of containers that all stay alive
        try:
            times = _times_at_once(rows, keys["time"], self.time, "time")
            label_times = ids = [None] * n
            if delay == "time":
                label_times = _times_at_once(rows, keys["label_time"], self.label_time, "label_time")
            else:
                key, column = keys["id"], self.id
                ids = [parse_id(row[key], column) for row in rows]
        except (LookupError, TypeError, ValueError, OverflowError):  # RowError is a ValueError
            return None
        finally:
            if collecting:
                gc.enable()
        previous = last_time
        for t in times:
            if t < previous:
                return None
            previous = t
        return scores, [None] * n if labels is None else labels, times, label_times, ids

    def parse_label_record(self, row, last_label_time: float = -math.inf) -> tuple:
        """``(time, id, label)`` of a label record, or raise :class:`RowError` (also
        when its time is earlier than ``last_label_time``, the previous record's)."""
        keys = self.label_keys
        y = self.parse_label(field(row, keys["label"], self.label, "label"))
        t = parse_time(field(row, keys["time"], self.time, "time"), self.time)
        if t < last_label_time:
            raise RowError(
                f"time {short_repr(row[keys['time']])} is earlier than the previous "
                f"label record's (column {self.time!r}): label records must be in time order"
            )
        eid = parse_id(field(row, keys["id"], self.id, "id"), self.id)
        return t, eid, y

    def parse_label(self, value):
        """A label: 0 or 1 (binary log), or one of the classes (text is matched to a
        class by ``str(class)``, without surrounding whitespace); else RowError."""
        lookup = self._class_lookup
        if lookup is None:
            return parse_binary_label(value, self.label)
        try:
            return lookup[value]
        except (KeyError, TypeError):
            pass
        try:
            return lookup[str(value).strip()]
        except KeyError:
            shown = ", ".join(repr(c) for c in self.classes[:10])
            raise RowError(
                f"unknown label {short_repr(value)} (column {self.label!r}): expected "
                f"one of {shown}"
            ) from None

    def _parse_probabilities(self, row) -> dict:
        values = [
            parse_score(field(row, key, col, "probability"), col, "probability")
            for key, col in zip(self.score_keys, self.score_columns)
        ]
        total = math.fsum(values)
        if not -SUM_TOL <= total - 1.0 <= SUM_TOL:
            raise RowError(
                f"the class probabilities sum to {total!r}, not 1 (within {SUM_TOL})"
            )
        if not -SUM_EXACT <= total - 1.0 <= SUM_EXACT:
            values = [v / total for v in values]
        return dict(zip(self.classes, values))
