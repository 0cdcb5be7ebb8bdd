"""Reading prediction logs for :func:`streamcal.replay` (private).

A *log* is a table of events, one row each: a score (binary logs) or one probability
per class (multiclass logs), a label, and optional time, label-time and id columns.
This module opens a log, whatever its form, as a :class:`Log`: an iterator of rows that
can be indexed by a key resolved once per column (an int position for CSV files,
DataFrames and Parquet files, the column name for dict records and JSON Lines), with
the line number of each row for error messages. Parsing the fields of a row is
:mod:`streamcal.replay._rows`'s job.

Sources
-------
- A path: ``.csv``, ``.tsv``, ``.jsonl``, ``.ndjson`` (each optionally ``.gz``) or
  ``.parquet``; ``format`` (``"csv"``, ``"tsv"``, ``"jsonl"``, ``"parquet"``)
  overrides the suffix.
- ``"-"``: standard input, CSV unless ``format`` says otherwise (gzip-compressed CSV
  and JSON Lines input is recognised by its first bytes; Parquet input is read into
  memory whole, as the format keeps its index at the end).
- A pandas DataFrame, or an iterable of dicts (records).

CSV header names are stripped of surrounding whitespace (``a, b`` names ``'a'`` and
``'b'``). A column the replay uses must appear once in the header (ValueError naming
it and the log otherwise); other duplicated names are harmless. JSON Lines files and
records have no header: their columns are the keys found in the first :data:`KEY_SCAN`
rows, read ahead (a row lacking a column that others have is a malformed row, reported
at its line; a column in none of these rows is a ValueError naming it and the log, as
a misspelt column is the likelier cause).

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

Rows that cannot be read
------------------------
A row that cannot be read is given as a :class:`streamcal.replay._rows.BadRow` with the
reason, which the row parser reports as a malformed row at its line: a CSV field longer
than the CSV reader's limit (``csv.field_size_limit()``, 131,072 characters unless the
program raised it: this module does not change that process-wide setting), a line that
is not valid UTF-8 (the other lines are read), invalid JSON, or JSON nested too deep for
the parser. A log that cannot be read at all stops the replay with an
:class:`UnreadableLog` (an OSError, and a ValueError as before) naming the file: a CSV
header that cannot be read (a field over the limit, not valid UTF-8), a Parquet file
that cannot be opened (cut short, not Parquet) or whose data cannot be decoded (a
corrupt page: the message names the row group), a damaged gzip file.

Nothing here imports pandas or pyarrow unless the log is a DataFrame or a Parquet file.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import itertools
import json
import os
import re
import sys
import zlib
from collections.abc import Mapping

from streamcal.replay._rows import BadRow

__all__ = [
    "FORMATS",
    "STDIN",
    "SUPPORTED",
    "Log",
    "UnreadableLog",
    "csv_header",
    "is_stdin",
    "jsonl_row",
    "open_log",
]

#: The ``format`` values of :func:`open_log`.
FORMATS = ("csv", "tsv", "jsonl", "parquet")
#: The path that stands for standard input.
STDIN = "-"
SUPPORTED = ".csv, .tsv, .jsonl, .ndjson (each optionally .gz), .parquet"

_SUFFIX_FORMATS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}
_DELIMITERS = {"csv": ",", "tsv": "\t"}
_FAST_EXTRA = 'pip install "streamcal[fast]"'
# invalid UTF-8 bytes, as the "surrogateescape" error handler decodes them
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")
#: JSON Lines logs and records have no header: their columns are the keys found in this
#: many first rows (a column in none of them is a usage error).
KEY_SCAN = 1000

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
        schema), or for JSON Lines and records, which have no header, the keys found in
        the first :data:`KEY_SCAN` records (in the order they first appear); else None.
    scanned
        For JSON Lines and records: how many rows :attr:`columns` was gathered from
        (a column in none of them is refused by :meth:`key`; a row lacking a column
        that others have is a malformed row, reported at its line), else None.
    rows
        Iterator over the rows (lists, tuples or dicts; a row that could not be read
        is a :class:`streamcal.replay._rows.BadRow`).
    delimiter
        The field delimiter of a CSV log, else None.

    Examples
    --------
    >>> log = open_log([{"score": 0.5, "label": 1}, {"score": 0.25, "label": 0}])
    >>> key = log.key("score", "score")
    >>> [(log.line(n), row[key]) for n, row in enumerate(log.rows, 1)]
    [(0, 0.5), (1, 0.25)]
    """

    def __init__(
        self,
        name,
        kind,
        columns,
        rows,
        line,
        close=None,
        by_name=False,
        delimiter=None,
        scanned=None,
    ):
        self.name = name
        self.scanned = scanned
        self.kind = kind
        self.columns = columns
        self.rows = rows
        self.delimiter = delimiter
        self._line = line
        self._close = close
        self._by_name = by_name

    def key(self, column, role: str):
        """The key that looks ``column`` up in a row; ValueError if the log declares
        its columns and ``column`` is not one of them, or is more than one of them."""
        if self.columns is not None and column not in self.columns:
            shown = ", ".join(repr(c) for c in self.columns[:30])
            if self.scanned is not None:
                if self.scanned == 1:
                    which = "its only row has"
                elif self.scanned < KEY_SCAN:
                    which = f"none of its {self.scanned:,} rows has it; they have"
                else:
                    which = f"none of its first {self.scanned:,} rows has it; they have"
                raise ValueError(
                    f"The {role} column {column!r} is not in {self.name} ({which} the "
                    f"keys {shown or '(none)'})."
                )
            raise ValueError(
                f"The {role} column {column!r} is not in {self.name}. "
                f"Its columns: {shown}."
            )
        if self.columns is not None and self.columns.count(column) > 1:
            raise ValueError(
                f"The {role} column {column!r} appears {self.columns.count(column)} "
                f"times in the header of {self.name}: rename the duplicates so that "
                "the column to read is named once."
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


class UnreadableLog(OSError, ValueError):
    """A log that cannot be read (see the module docstring): an OSError (the command's
    exit status 1, "the log could not be read"), and a ValueError, as these errors were
    before. The message names the file."""


#: What reading a damaged gzip file raises: cut short, not gzip, corrupt deflate data.
DAMAGED_COMPRESSED = (EOFError, zlib.error, gzip.BadGzipFile)


def damaged_log(name: str, exc: BaseException) -> OSError:
    """The error that stops a replay whose compressed log ``name`` cannot be read on
    (the rows read before it are kept: a checkpoint written before it stays valid)."""
    if isinstance(exc, EOFError):
        reason = "the compressed file ends before its end-of-stream marker (cut short)"
    elif isinstance(exc, gzip.BadGzipFile) and str(exc).startswith(
        ("CRC check failed", "Incorrect length")
    ):  # a gzip file whose trailer does not match its data
        reason = f"the file is damaged ({exc})"
    elif isinstance(exc, gzip.BadGzipFile):
        reason = f"it is not a gzip file ({exc})"
    else:
        reason = f"its compressed data is corrupt ({exc})"
    return UnreadableLog(f"cannot read the log {name!r}: {reason}")


class _Utf8Watch(io.RawIOBase):
    """The bytes of a binary stream, passed through unchanged and checked as UTF-8 on
    the way: :attr:`invalid` becomes True once a byte that is not valid UTF-8 has
    passed. The text layer above reads ahead of the rows it gives, so no row made of
    bytes that passed before that moment can hold one: the readers check rows for
    escaped bytes only from then on."""

    def __init__(self, raw, close_raw: bool = True, name: str = "<stdin>"):
        self._raw = raw
        self._name = name
        self._close_raw = close_raw
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self.invalid = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        try:
            n = self._raw.readinto(buffer)
        except DAMAGED_COMPRESSED as exc:
            raise damaged_log(self._name, exc) from None
        if not self.invalid:
            try:
                if n:
                    self._decoder.decode(memoryview(buffer)[:n])
                else:  # the end: a sequence cut short is invalid too
                    self._decoder.decode(b"", True)
            except UnicodeDecodeError:
                self.invalid = True
        return n

    def close(self) -> None:
        if not self.closed and self._close_raw:
            self._raw.close()
        super().close()


def _text(raw, close_raw: bool = True, name: str = "<stdin>"):
    """A text stream over the binary stream ``raw`` (UTF-8, BOM dropped, invalid bytes
    escaped) and the watch that says whether any were met; ``name`` is the file's, for
    the error a damaged compressed file raises."""
    watch = _Utf8Watch(raw, close_raw, name)
    text = io.TextIOWrapper(
        io.BufferedReader(watch, 1 << 16),
        encoding="utf-8-sig",
        errors="surrogateescape",
        newline="",
    )
    return text, watch


def _invalid_utf8(text: str) -> str | None:
    """The reason a line that went through :func:`_text` is not valid UTF-8, or None."""
    found = _ESCAPED_BYTE.search(text)
    if found is None:
        return None
    return f"invalid UTF-8 (byte 0x{ord(found.group()) - 0xDC00:02x})"


def _open_binary(path: str, gz: bool):
    return gzip.open(path, "rb") if gz else open(path, "rb", buffering=0)


def _check_delimiter(delimiter) -> None:
    if delimiter is None:
        return
    if not (
        isinstance(delimiter, str) and len(delimiter) == 1 and delimiter not in '\r\n"'
    ):
        raise ValueError(
            "The 'delimiter' argument of replay must be None or one character other "
            f"than a quote or a line break. Got {delimiter!r} instead."
        )


def log_format(path, format=None) -> tuple:
    """``(format, compressed)``: how :func:`open_log` reads the log file at ``path``.

    ``format`` is ``format`` if given, else the one of the suffix (``"csv"``,
    ``"tsv"``, ``"jsonl"`` or ``"parquet"``; None for an unknown suffix), and
    ``compressed`` whether the name ends in ``.gz``.

    Examples
    --------
    >>> log_format("events.ndjson.gz"), log_format("events.txt", "csv")
    (('jsonl', True), ('csv', False))
    """
    ext, gz = _suffixes(os.fspath(path))
    return format or _SUFFIX_FORMATS.get(ext), gz


def read_header(path, delimiter=None, format=None) -> list | None:
    """The column names of the CSV (or TSV) log at ``path``, read as :func:`open_log`
    reads them (stripped of surrounding whitespace), or None when ``path`` is not a
    CSV or TSV file (by its suffix, or ``format``), is standard input (``"-"``,
    which cannot be read twice) or is empty (not even a header: a log of no events).
    :class:`UnreadableLog` (a ValueError) if the header cannot be read (not valid
    UTF-8, a field over the CSV reader's limit).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "log.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("score, label\\n0.5,1\\n")
    >>> read_header(path)
    ['score', 'label']
    """
    path = os.fspath(path)
    if path == STDIN:
        return None
    fmt, gz = log_format(path, format)
    if fmt not in _DELIMITERS:
        return None
    text, watch = _text(_open_binary(path, gz), name=os.path.basename(path))
    with text:
        reader = csv.reader(text, delimiter=delimiter or _DELIMITERS[fmt])
        return _csv_header(reader, watch, os.path.basename(path), "events")


#: The former name of :func:`read_header`.
csv_header = read_header


def _csv_header(reader, watch, name: str, what: str) -> list | None:
    """The stripped column names of the first line, None for an empty file."""
    try:
        header = next(reader)
    except StopIteration:
        return None
    except csv.Error as exc:
        raise UnreadableLog(
            f"The {what} log {name}: line {reader.line_num} (the header) cannot be read "
            f"({_csv_reason(exc)})."
        ) from None
    if watch.invalid:
        reason = _invalid_utf8("".join(header))
        if reason is not None:
            raise UnreadableLog(
                f"The {what} log {name}: line {reader.line_num} (the header) is not "
                f"valid UTF-8: {reason}."
            )
    return [h.strip() for h in header]


def _csv_reason(exc: csv.Error) -> str:
    text = str(exc)
    if "field larger than field limit" in text:
        return (
            f"a field longer than {csv.field_size_limit():,} characters, the limit of "
            "Python's CSV reader"
        )
    return f"unreadable CSV: {text}"


def _csv_rows(reader, watch):
    """The non-blank rows of ``reader``; a row that cannot be read (a field over the
    reader's limit, invalid UTF-8) is a BadRow, and reading goes on at the next line."""
    while True:
        try:
            for row in reader:
                if not row:
                    continue  # blank lines are no events
                if watch.invalid:
                    reason = _invalid_utf8("".join(row))
                    if reason is not None:
                        yield BadRow(reason)
                        continue
                yield row
            return
        except csv.Error as exc:
            # the reader gives up the rest of the line it was in, and starts afresh
            yield BadRow(_csv_reason(exc))


def _csv_log(name, text, watch, delimiter, what) -> Log:
    reader = csv.reader(text, delimiter=delimiter)
    try:
        header = _csv_header(reader, watch, name, what)
    except BaseException:
        text.close()
        raise
    return Log(
        name,
        "csv",
        header,
        _csv_rows(reader, watch),
        lambda n: reader.line_num,
        text.close,
        by_name=header is None,  # an empty file: no columns to look up, no rows
        delimiter=delimiter,
    )


def jsonl_row(text: str, check_utf8: bool = True):
    """The row of a non-blank JSON Lines line ``text`` (decoded with the
    ``surrogateescape`` error handler, as the readers decode), or a BadRow saying why it
    cannot be read; ``check_utf8=False`` skips looking for escaped invalid bytes (when
    none can be there).

    Examples
    --------
    >>> jsonl_row('{"score": 0.5}\\n'), jsonl_row('{"score": }').reason
    ({'score': 0.5}, 'invalid JSON (Expecting value)')
    """
    if check_utf8:
        reason = _invalid_utf8(text)
        if reason is not None:
            return BadRow(reason)
    try:
        return json.loads(text)
    except ValueError as exc:
        return BadRow(f"invalid JSON ({exc.args[0].split(':')[0]})")
    except RecursionError:
        return BadRow("invalid JSON (nested too deep)")


def _jsonl_rows(f, cell, watch):
    for lineno, text in enumerate(f, 1):
        if not text.strip():
            continue
        cell[0] = lineno
        yield jsonl_row(text, watch.invalid)


def _peek_keys(rows, cell=None):
    """The keys of the records among the first :data:`KEY_SCAN` rows of ``rows``, in
    the order they first appear (None when none of these rows is a record), the number
    of rows looked at, and an iterator giving every row. ``cell``: the one-item list
    holding the line number of the row last read (JSON Lines), set again as each
    peeked row is given."""
    peeked, lines = [], []
    for row in rows:
        peeked.append(row)
        if cell is not None:
            lines.append(cell[0])
        if len(peeked) >= KEY_SCAN:
            break
    keys = {}
    for row in peeked:
        if isinstance(row, Mapping):
            keys.update(dict.fromkeys(row))
    columns = list(keys) if keys or any(isinstance(r, Mapping) for r in peeked) else None
    if cell is None:
        given = iter(peeked)
    else:
        def given():
            for line, row in zip(lines, peeked):
                cell[0] = line
                yield row

        given = given()
    return columns, len(peeked), itertools.chain(given, rows)


def _jsonl_log(name, text, watch) -> Log:
    cell = [0]
    try:
        columns, scanned, rows = _peek_keys(_jsonl_rows(text, cell, watch), cell)
    except BaseException:
        text.close()
        raise
    return Log(
        name, "jsonl", columns, rows, lambda n: cell[0], text.close, by_name=True,
        scanned=scanned,
    )


def _one_line(exc: BaseException) -> str:
    """pyarrow's message of ``exc`` on one line (its messages may span lines and hold
    control characters)."""
    text = "".join(c if c.isprintable() else " " for c in str(exc))
    return " ".join(text.split()).rstrip(":") or type(exc).__name__


def parquet_batches(pf, name: str, batch_size: int):
    """The record batches of the ``pyarrow.parquet.ParquetFile`` ``pf`` (the log
    ``name``), a row group at a time; data that cannot be decoded (a corrupt page)
    raises :class:`UnreadableLog` naming the file and the row group."""
    first = 0
    n_groups = pf.num_row_groups
    for group in range(n_groups):
        n_rows = pf.metadata.row_group(group).num_rows
        batches = pf.iter_batches(batch_size=batch_size, row_groups=[group])
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                break
            except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
                raise UnreadableLog(
                    f"cannot read the log {name!r}: row group {group} of {n_groups} "
                    f"(rows {first} to {first + n_rows - 1}) cannot be decoded: {_one_line(exc)}"
                ) from None
            yield batch
        first += n_rows


def _parquet_rows(pf, name, batch_size=65536):
    for batch in parquet_batches(pf, name, batch_size):
        yield from zip(*(column.to_pylist() for column in batch.columns))


def _parquet_log(path, name=None) -> Log:
    """``path``: a file name, or a file object (standard input's bytes)."""
    name = name or os.path.basename(path)
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError(
            f"Reading the Parquet file {name!r} needs pyarrow: {_FAST_EXTRA}."
        ) from None
    try:
        pf = pq.ParquetFile(path)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise UnreadableLog(
            f"The Parquet log {name} cannot be read: {_one_line(exc)}"
        ) from None
    columns = list(pf.schema_arrow.names)
    return Log(
        name,
        "parquet",
        columns,
        _parquet_rows(pf, name),
        lambda n: n - 1,
        pf.close,
    )


def _is_dataframe(obj) -> bool:
    return type(obj).__module__.split(".")[0] == "pandas" and hasattr(obj, "itertuples")


def is_stdin(source) -> bool:
    """Whether ``source`` stands for standard input (the path ``"-"``)."""
    return isinstance(source, (str, os.PathLike)) and os.fspath(source) == STDIN


def _stdin_text():
    """Standard input as text (gzip-compressed input recognised by its first bytes),
    the watch, and whether it can be checked for invalid UTF-8."""
    stdin = sys.stdin
    raw = getattr(stdin, "buffer", None)
    if raw is None:  # already text (a StringIO put there by a caller)
        return stdin, None
    peek = getattr(raw, "peek", None)
    if peek is not None and peek(2)[:2] == b"\x1f\x8b":
        return _text(gzip.GzipFile(fileobj=raw, mode="rb"))  # closing it leaves raw open
    return _text(raw, close_raw=False)


class _NoWatch:
    invalid = False


def open_log(source, what: str = "events", *, format=None, delimiter=None) -> Log:
    """Open ``source`` as a :class:`Log`; ``what`` names it in messages
    (``"events"``, ``"labels"``).

    Parameters
    ----------
    source
        A path (``"-"``: standard input), a pandas DataFrame or an iterable of dicts.
    what
        What the log holds, for messages.
    format
        ``"csv"``, ``"tsv"``, ``"jsonl"`` or ``"parquet"``: how to read a path or
        standard input; None: from the path's suffix (see :data:`SUPPORTED`), CSV for
        standard input.
    delimiter
        The field delimiter of a CSV log (one character); None: a tab for ``.tsv``
        files and ``format="tsv"``, else a comma.

    Examples
    --------
    >>> log = open_log([{"score": 0.5, "label": 1}])
    >>> log.kind, log.columns, log.name
    ('records', ['score', 'label'], 'the records')
    >>> open_log([], format="xml")
    Traceback (most recent call last):
    ...
    ValueError: The 'format' argument of replay must be None or a str among {'csv', 'jsonl', 'parquet', 'tsv'}. Got 'xml' instead.
    """
    if format is not None and format not in FORMATS:
        raise ValueError(
            "The 'format' argument of replay must be None or a str among "
            f"{{'csv', 'jsonl', 'parquet', 'tsv'}}. Got {format!r} instead."
        )
    _check_delimiter(delimiter)
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if is_stdin(path):
            name, fmt = "<stdin>", format or "csv"
            if fmt == "parquet":
                _no_delimiter(delimiter, what, name, "a Parquet file")
                stdin = getattr(sys.stdin, "buffer", None)
                if stdin is None:
                    raise ValueError("A Parquet log on standard input must be bytes.")
                return _parquet_log(io.BytesIO(stdin.read()), name)
            text, watch = _stdin_text()
            watch = watch or _NoWatch()
        else:
            name = os.path.basename(path)
            ext, gz = _suffixes(path)
            fmt = format or _SUFFIX_FORMATS.get(ext)
            if fmt == "parquet" and not gz:
                _no_delimiter(delimiter, what, name, "a Parquet file")
                return _parquet_log(path)
            if fmt not in FORMATS or fmt == "parquet":  # a gzipped Parquet file
                raise ValueError(
                    f"The {what} log {path!r} has an unsupported file type. "
                    f"Supported: {SUPPORTED}; or give the format (csv, tsv, jsonl, "
                    "parquet)."
                )
            text, watch = _text(_open_binary(path, gz), name=name)
        if fmt == "jsonl":
            _no_delimiter(delimiter, what, name, "JSON Lines")
            return _jsonl_log(name, text, watch)
        return _csv_log(name, text, watch, delimiter or _DELIMITERS[fmt], what)
    if isinstance(source, (bytes, io.IOBase)):
        raise TypeError(
            f"The {what} log must be a path, a pandas DataFrame or an iterable of dicts. "
            f"Got {type(source).__name__} instead."
        )
    _no_delimiter(delimiter, what, "", "not a CSV file")
    if format is not None:
        raise ValueError(
            f"The 'format' argument of replay applies to files and standard input; the "
            f"{what} log is a {type(source).__name__}."
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
    columns, scanned, rows = _peek_keys(it)
    return Log(
        "the records", "records", columns, rows, lambda n: n - 1, by_name=True,
        scanned=scanned,
    )


def _no_delimiter(delimiter, what: str, name: str, kind: str) -> None:
    if delimiter is not None:
        where = f"{name} is {kind}" if name else f"is {kind}"
        raise ValueError(
            f"The 'delimiter' argument of replay applies to CSV and TSV logs only; the "
            f"{what} log {where}."
        )
