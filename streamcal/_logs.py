"""Reading prediction logs for :func:`streamcal.replay` (private).

A *log* is a table of events, one row each: a score (binary logs) or one probability
per class (multiclass logs), a label, and optional time, label-time and id columns.
This module opens a log, whatever its form, as a :class:`Log`: an iterator of rows that
can be indexed by a key resolved once per column (an int position for CSV files,
DataFrames and Parquet files, the column name for dict records and JSON Lines), with
the line number of each row for error messages. It also holds the parsing of one field
(score, label, time) with the message that names what is wrong with a bad one.

Line numbers
------------
- CSV (``.csv``, ``.tsv``, gzip-compressed or not): the physical line in the file,
  the header being line 1 (a quoted field spanning lines counts all its lines; the row's
  last line is reported).
- JSON Lines (``.jsonl``, ``.ndjson``, gzip-compressed or not): the line in the file,
  the first being line 1; blank lines are skipped (but counted).
- Records (an iterable of dicts), pandas DataFrames and Parquet files: the 0-based
  index of the row.

Blank CSV rows are skipped (they are not events, and not errors).

Nothing here imports pandas or pyarrow unless the log is a DataFrame or a Parquet file.
"""

from __future__ import annotations

import csv
import datetime as dt
import gzip
import io
import itertools
import json
import math
import os
from collections.abc import Mapping

__all__ = [
    "BINARY_LABELS",
    "BadRow",
    "Log",
    "RowError",
    "field",
    "json_safe_time",
    "open_log",
    "parse_binary_label",
    "parse_score",
    "parse_time",
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

_CSV_SUFFIXES = {".csv": ",", ".tsv": "\t"}
_JSONL_SUFFIXES = (".jsonl", ".ndjson")
_PARQUET_SUFFIXES = (".parquet", ".pq")
SUPPORTED = ".csv, .tsv, .jsonl, .ndjson (each optionally .gz), .parquet"


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


def _short(value) -> str:
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
            raise RowError(f"the row is not a record (a dict): {_short(row)}") from None
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
            f"non-numeric {role} {_short(value)} (column {column!r})"
        ) from None
    if math.isnan(s):
        raise RowError(f"{role} is NaN (column {column!r})")
    if not 0.0 <= s <= 1.0:
        raise RowError(
            f"{role} {_short(value)} out of range [0, 1] (column {column!r})"
        )
    return s


def parse_binary_label(value, column: str) -> int:
    """A binary label (see :data:`BINARY_LABELS`) as the int 0 or 1, or raise."""
    try:
        return BINARY_LABELS[value]
    except (KeyError, TypeError):
        raise RowError(
            f"unknown label {_short(value)} (column {column!r}): expected 0 or 1"
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
                f"{role} {_short(value)} is neither a number nor an ISO 8601 date "
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
    raise RowError(f"{role} {_short(value)} is not a time (column {column!r})")


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


# ---------------------------------------------------------------------- sources


class Log:
    """An open log: iterate :attr:`rows`; look fields up with :meth:`key`.

    Attributes
    ----------
    name
        What to call the log in messages (the file name, or ``"records"``).
    kind
        ``"csv"``, ``"jsonl"``, ``"parquet"``, ``"dataframe"`` or ``"records"``.
    columns
        The column names when the log declares them (CSV header, DataFrame, Parquet
        schema, or the keys of the first record), else None.
    rows
        Iterator over the rows (lists, tuples or dicts).
    """

    def __init__(self, name, kind, columns, rows, line, close=None, by_name=False):
        self.name = name
        self.kind = kind
        self.columns = columns
        self.rows = rows
        self._line = line
        self._close = close
        self._by_name = by_name

    def key(self, column, role: str):
        """The key that looks ``column`` up in a row; ValueError if the log declares
        its columns and ``column`` is not one of them."""
        if self.columns is not None and column not in self.columns:
            shown = ", ".join(repr(c) for c in self.columns[:30])
            raise ValueError(
                f"The {role} column {column!r} is not in {self.name}. "
                f"Its columns: {shown}."
            )
        if self._by_name:
            return column
        return self.columns.index(column)

    def line(self, n_read: int) -> int:
        """Line number (see the module docstring) of the ``n_read``-th row read (1-based
        count of rows taken from :attr:`rows`)."""
        return self._line(n_read)

    def skip(self, n: int) -> int:
        """Consume the first ``n`` rows; return how many there were (<= n)."""
        count = 0
        for _ in itertools.islice(self.rows, n):
            count += 1
        return count

    def close(self) -> None:
        if self._close is not None:
            self._close()
            self._close = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _suffixes(path: str) -> tuple[str, bool]:
    name = os.path.basename(path).lower()
    gz = name.endswith(".gz")
    if gz:
        name = name[:-3]
    return os.path.splitext(name)[1], gz


def _open_text(path: str, gz: bool):
    if gz:
        return gzip.open(path, "rt", encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")


def _csv_log(path, f, delimiter) -> Log:
    reader = csv.reader(f, delimiter=delimiter)
    try:
        header = next(reader)
    except StopIteration:
        header = []
    rows = (row for row in reader if row)  # blank lines are no events
    return Log(
        os.path.basename(path), "csv", header, rows, lambda n: reader.line_num, f.close
    )


def _jsonl_rows(f, cell):
    loads = json.loads
    for lineno, text in enumerate(f, 1):
        if not text.strip():
            continue
        cell[0] = lineno
        try:
            yield loads(text)
        except ValueError as exc:
            yield BadRow(f"invalid JSON ({exc.args[0].split(':')[0]})")


def _peek_first(rows):
    """The first row (None if there is none) and an iterator giving every row."""
    try:
        first = next(rows)
    except StopIteration:
        return None, iter(())
    return first, itertools.chain((first,), rows)


def _jsonl_log(path, f) -> Log:
    cell = [0]
    first, rows = _peek_first(_jsonl_rows(f, cell))
    columns = list(first) if isinstance(first, Mapping) else None
    return Log(
        os.path.basename(path),
        "jsonl",
        columns,
        rows,
        lambda n: cell[0],
        f.close,
        by_name=True,
    )


def _parquet_rows(pf, batch_size=65536):
    for batch in pf.iter_batches(batch_size=batch_size):
        yield from zip(*(column.to_pylist() for column in batch.columns))


def _parquet_log(path) -> Log:
    try:
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(
            f"Reading the Parquet file {path!r} needs pyarrow (pip install pyarrow)."
        ) from None
    pf = pq.ParquetFile(path)
    columns = list(pf.schema_arrow.names)
    return Log(
        os.path.basename(path),
        "parquet",
        columns,
        _parquet_rows(pf),
        lambda n: n - 1,
        pf.close,
    )


def _is_dataframe(obj) -> bool:
    return type(obj).__module__.split(".")[0] == "pandas" and hasattr(obj, "itertuples")


def open_log(source, what: str = "events") -> Log:
    """Open ``source`` (a path, a pandas DataFrame or an iterable of dicts) as a
    :class:`Log`; ``what`` names it in messages (``"events"``, ``"labels"``)."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        ext, gz = _suffixes(path)
        if ext in _CSV_SUFFIXES:
            return _csv_log(path, _open_text(path, gz), _CSV_SUFFIXES[ext])
        if ext in _JSONL_SUFFIXES:
            return _jsonl_log(path, _open_text(path, gz))
        if ext in _PARQUET_SUFFIXES and not gz:
            return _parquet_log(path)
        raise ValueError(
            f"The {what} log {path!r} has an unsupported file type. Supported: {SUPPORTED}."
        )
    if isinstance(source, (bytes, io.IOBase)):
        raise TypeError(
            f"The {what} log must be a path, a pandas DataFrame or an iterable of dicts. "
            f"Got {type(source).__name__} instead."
        )
    if _is_dataframe(source):
        columns = list(source.columns)
        rows = source.itertuples(index=False, name=None)
        return Log("the DataFrame", "dataframe", columns, rows, lambda n: n - 1)
    try:
        it = iter(source)
    except TypeError:
        raise TypeError(
            f"The {what} log must be a path, a pandas DataFrame or an iterable of dicts. "
            f"Got {type(source).__name__} instead."
        ) from None
    first, rows = _peek_first(it)
    columns = list(first) if isinstance(first, Mapping) else None
    return Log("the records", "records", columns, rows, lambda n: n - 1, by_name=True)
