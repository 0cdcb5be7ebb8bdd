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
import gzip
import io
import itertools
import json
import os
from collections.abc import Mapping

from streamcal.replay._rows import BadRow

__all__ = ["Log", "SUPPORTED", "csv_header", "open_log"]

_CSV_SUFFIXES = {".csv": ",", ".tsv": "\t"}
_JSONL_SUFFIXES = (".jsonl", ".ndjson")
_PARQUET_SUFFIXES = (".parquet", ".pq")
SUPPORTED = ".csv, .tsv, .jsonl, .ndjson (each optionally .gz), .parquet"

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


def csv_header(path, delimiter=None) -> list | None:
    """The column names of the CSV (or TSV) log at ``path``, read as :func:`open_log`
    reads them, or None when ``path`` is not a CSV or TSV file (by its suffix)."""
    path = os.fspath(path)
    ext, gz = _suffixes(path)
    if ext not in _CSV_SUFFIXES:
        return None
    with _open_text(path, gz) as f:
        return next(csv.reader(f, delimiter=delimiter or _CSV_SUFFIXES[ext]), None)


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
