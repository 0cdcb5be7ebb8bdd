"""Binary CSV logs read a block at a time by pyarrow (the ``fast`` extra).

The row reader of :mod:`streamcal.replay` parses a CSV file one row at a time in
Python, about 1.5 microseconds a row with the checks. This module reads the same file
as blocks of bytes (a few MiB, cut after a newline) and hands each *plain* block to
pyarrow's multithreaded CSV parser, which converts the score column to float64 and the
label column to text in one pass; a block is plain when it can only mean one thing to
both readers:

- it is valid UTF-8 and holds no quote character, no NUL byte, no lone carriage return
  and no blank line, so each line is one row and row ``k`` of the block is line
  ``first_line + k`` of the file;
- pyarrow parses it with the header's number of fields on every line;
- every score is a number in [0, 1] and every label one of the text forms of
  :data:`BINARY_LABELS`.

These are the rows the row reader accepts with the same values: pyarrow's number parser
and Python's ``float`` both round correctly, and a text that either refuses is not
plain. The first block that is not plain ends the fast reading: the engine goes on with
the row reader from that block's first row, so every malformed row is reported by one
parser with its line number and reason.

Nothing here imports pyarrow unless the log is a CSV file and pyarrow is installed.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import importlib
import io
import os

import numpy as np

from streamcal.replay._readers import DAMAGED_COMPRESSED
from streamcal.replay._rows import BINARY_LABELS

__all__ = [
    "FastCsv",
    "PlainBlock",
    "numpy_values",
    "open_fast_csv",
    "string_array",
    "text_label_values",
]

#: Bytes read at a time.
BLOCK_BYTES = 1 << 22
#: Bytes of the first block (at most :data:`BLOCK_BYTES`; each next one 4 times the
#: previous, up to it): the engine waits for the first block, while each next one is read
#: ahead during the calibrators' passes over the previous one.
FIRST_BLOCK_BYTES = 1 << 18
#: Files smaller than this (on disk) are left to the row reader: importing pyarrow costs
#: about what the row reader spends on a megabyte of log.
MIN_BYTES = 1 << 20

_TEXT_LABELS = [k for k in BINARY_LABELS if isinstance(k, str)]
_LABEL_VALUES = np.array([BINARY_LABELS[k] for k in _TEXT_LABELS], dtype=np.float64)


class PlainBlock:
    """A plain block: its scores and labels, and how to get back a row or its bytes
    for the fingerprint."""

    def __init__(self, data: bytes, delimiter: str, scores, labels, first_line: int, ends=None):
        self.data = data
        self.delimiter = delimiter
        self.scores = scores
        self.labels = labels
        self.n_rows = len(scores)
        self.rows_at = range(1, self.n_rows + 1)  # every row is an event
        self.bad = []
        self.first_line = first_line
        self._ends = ends  # positions of the newlines, found when first needed

    def line(self, pos: int) -> int:
        """Line number in the file of row ``pos`` (1-based) of the block."""
        return self.first_line + pos - 1

    def _line_ends(self):
        if self._ends is None:
            self._ends = np.flatnonzero(np.frombuffer(self.data, dtype=np.uint8) == 10)
        return self._ends

    def _span(self, a: int, b: int) -> bytes:
        """Bytes of rows a+1..b (1-based positions), line endings as ``\n``."""
        ends = self._line_ends()
        start = 0 if a == 0 else int(ends[a - 1]) + 1
        return self.data[start:int(ends[b - 1]) + 1].replace(b"\r\n", b"\n")

    def row(self, pos: int) -> list:
        """Row ``pos`` as the row reader gives it: the list of its fields as text."""
        return self._span(pos - 1, pos)[:-1].decode("utf-8").split(self.delimiter)

    def fingerprint_bytes(self, a: int, b: int) -> bytes:
        """What rows a+1..b add to :class:`streamcal.replay._checkpoint.RowFingerprint`
        (the same bytes as the rows the row reader gives)."""
        if a >= b:
            return b""
        data = self._span(a, b)
        return data.replace(self.delimiter.encode(), b"\x1f").replace(b"\n", b"\x1e")


def line_blocks(reader, end_last_line: bool, strip_bom: bool = False):
    """Yield the blocks of whole lines (about :data:`BLOCK_BYTES` each, the first ones
    smaller from :data:`FIRST_BLOCK_BYTES` on, a longer line whole) that
    ``reader._file`` holds from where it stands, the fast readers' one block splitter
    (FastCsv, and the JSON lines reader of ``_fastblocks``). ``reader.done`` turns True
    at the end of the file; a damaged compressed file ends the blocks with ``done``
    False (the row reader reads up to the damage and reports it), and so does a last
    line without newline unless ``end_last_line`` (then it is yielded with a newline
    added). ``strip_bom`` drops a UTF-8 BOM from the first bytes (the row
    reader drops it too)."""
    carry = b""
    size = min(FIRST_BLOCK_BYTES, BLOCK_BYTES)
    while True:
        try:
            data = carry + reader._file.read(size)
            size = min(4 * size, BLOCK_BYTES)
        except DAMAGED_COMPRESSED:
            return
        if strip_bom:
            strip_bom = False
            if data.startswith(codecs.BOM_UTF8):
                data = data[len(codecs.BOM_UTF8):]
        if not data:
            reader.done = True
            return
        cut = data.rfind(b"\n")
        if cut < 0:
            try:
                more = reader._file.read(BLOCK_BYTES)
            except DAMAGED_COMPRESSED:
                return
            if more:  # a line longer than a block
                carry = data + more
                continue
            if not end_last_line:
                return
            data += b"\n"
            cut = len(data) - 1
        block, carry = data[: cut + 1], data[cut + 1:]
        yield block


class FastCsv:
    """Plain blocks of a binary CSV log, from its second line on, until the first block
    that is not plain (see the module docstring); then :attr:`rows_read` rows have been
    given and the row reader takes over."""

    def __init__(self, path: str, delimiter: str, header: list, score: str, label: str):
        import pyarrow as pa
        import pyarrow.csv as pacsv

        self._pa, self._csv = pa, pacsv
        self.path = path
        self.delimiter = delimiter
        self.header = header
        self.score = score
        self.label = label
        self.rows_read = 0
        self.done = False
        gz = path.lower().endswith(".gz")
        self._file = gzip.open(path, "rb") if gz else open(path, "rb")
        first = self._file.readline()
        self._next_line = 2
        if not first.endswith(b"\n"):
            self.done = True  # a header alone, or no newline: nothing to read fast
        # one thread: pyarrow's threads cost more CPU than they save on a block of a
        # few MiB (benchmarks/README.md, replay-t1)
        self._read_options = pacsv.ReadOptions(column_names=header, use_threads=False)
        self._parse_options = pacsv.ParseOptions(delimiter=delimiter, quote_char=False)
        self._convert_options = pacsv.ConvertOptions(
            include_columns=[score, label],
            column_types={score: pa.float64(), label: pa.string()},
            null_values=[],
            strings_can_be_null=False,
        )

    def close(self) -> None:
        self._file.close()

    def blocks(self, fallback=None):
        """Yield plain blocks; stop at the end of the file or at a block that is not
        plain (then ``done`` is False: the row reader must go on from row
        ``rows_read + 1``). ``fallback`` is not used (the row reader takes over)."""
        if self.done:
            return
        # the last line has no newline: not read here, the row reader reads it
        for block in line_blocks(self, end_last_line=False):
            plain = self._plain(block)
            if plain is None:
                return
            self.rows_read += plain.n_rows
            self._next_line += plain.n_rows
            yield plain

    def _plain(self, block: bytes):
        # one memchr each for the rare bytes; the line ends (needed anyway for the row
        # count and kept for the block's rows) show blank lines; the carriage-return
        # and UTF-8 checks run only on blocks that hold such bytes
        if b'"' in block or b"\x00" in block:
            return None
        ends = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10)
        if not len(ends) or ends[0] == 0 or bool(np.any(np.diff(ends) == 1)):
            return None  # a blank line (the block ends with a newline: len(ends) >= 1)
        if b"\r" in block and (
            b"\n\r\n" in block
            or block.startswith(b"\r\n")
            or block.count(b"\r") != block.count(b"\r\n")
        ):
            return None
        if not block.isascii():
            try:
                codecs.decode(block, "utf-8")
            except UnicodeDecodeError:
                return None
        try:
            table = self._csv.read_csv(
                io.BytesIO(block),
                read_options=self._read_options,
                parse_options=self._parse_options,
                convert_options=self._convert_options,
            )
        except (self._pa.ArrowInvalid, ValueError):
            return None
        if table.num_rows != len(ends):
            return None
        scores = numpy_values(table.column(self.score), np.float64)
        if not bool(np.all((scores >= 0.0) & (scores <= 1.0))):
            return None
        labels = text_label_values(table.column(self.label), self._pa)
        if labels is None:
            return None
        return PlainBlock(block, self.delimiter, scores, labels, self._next_line, ends)


# pyarrow imports pandas, when it is installed, the first time it converts Python
# objects or gives a numpy array (``pa.array``, ``Array.to_numpy``): 1 to 2 s of CPU,
# more than reading a 10^6-row log. The two helpers below build and read arrays from
# their buffers instead.


def string_array(pa, values: list):
    """A pyarrow string array of ``values`` (text), built from its buffers."""
    data = [v.encode("utf-8") for v in values]
    offsets = np.cumsum([0] + [len(v) for v in data], dtype=np.int32)
    return pa.StringArray.from_buffers(
        len(values), pa.py_buffer(offsets.tobytes()), pa.py_buffer(b"".join(data))
    )


def _digit_labels(chunk):
    """The float64 labels of a string array whose every value is ``"0"`` or ``"1"``,
    read from its buffers; None when any value is something else."""
    n = len(chunk)
    if chunk.null_count:
        return None
    _, offsets_buffer, data_buffer = chunk.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int32, count=n + 1, offset=chunk.offset * 4)
    if int(offsets[n]) - int(offsets[0]) != n or not bool(np.all(np.diff(offsets) == 1)):
        return None
    digits = np.frombuffer(data_buffer, dtype=np.uint8, count=n, offset=int(offsets[0]))
    values = digits.astype(np.float64) - 48.0
    if not bool(np.all((values == 0.0) | (values == 1.0))):
        return None
    return values


def text_label_values(column, pa):
    """The labels of a pyarrow string column (array or chunked array) as float64 0/1,
    or None when one is not a text form of a binary label.

    ``pa`` is the pyarrow module. A column of only ``"0"`` and ``"1"`` (the usual log)
    is decoded from its buffers with numpy, without importing ``pyarrow.compute``
    (about 0.05 s of CPU); any other text goes through ``pyarrow.compute.index_in``
    against the text forms of :data:`BINARY_LABELS`.
    """
    chunks = getattr(column, "chunks", None)
    if chunks is None:
        chunks = [column]
    parts = [_digit_labels(c) for c in chunks if len(c)]
    if all(part is not None for part in parts):
        return np.concatenate(parts) if parts else np.empty(0, dtype=np.float64)
    import pyarrow.compute as pc

    codes = pc.index_in(column, value_set=string_array(pa, _TEXT_LABELS))
    if codes.null_count:
        return None
    return _LABEL_VALUES[numpy_values(codes, np.int32)]


def numpy_values(column, dtype) -> np.ndarray:
    """The values of a pyarrow array or chunked array of a fixed-width numeric type
    without nulls, as a numpy array of ``dtype`` (that type's numpy twin), read from
    its data buffers."""
    chunks = getattr(column, "chunks", None)
    if chunks is None:
        chunks = [column]
    size = np.dtype(dtype).itemsize
    parts = [
        np.frombuffer(c.buffers()[1], dtype=dtype, count=len(c), offset=c.offset * size)
        for c in chunks
        if len(c)
    ]
    if not parts:
        return np.empty(0, dtype=dtype)
    return parts[0].copy() if len(parts) == 1 else np.concatenate(parts)


def big_enough(path) -> bool:
    """Whether the file at ``path`` holds at least :data:`MIN_BYTES` (False when it
    cannot be read): below that the row reader is as fast."""
    try:
        return os.path.getsize(path) >= MIN_BYTES
    except OSError:
        return False


def pyarrow_has(module: str) -> bool:
    """Whether pyarrow and its reader ``pyarrow.<module>`` import."""
    try:
        importlib.import_module("pyarrow")
        importlib.import_module(f"pyarrow.{module}")
    except ImportError:
        return False
    return True


def open_fast_csv(source, log, score: str, label: str):
    """A :class:`FastCsv` for ``source`` when it is a CSV/TSV file (gzipped or not)
    that ``log`` (the row reader's view of it) reads with a plain header, and pyarrow
    is installed; else None."""
    if not isinstance(source, (str, os.PathLike)) or log.kind != "csv":
        return None
    path = os.fspath(source)
    name = path.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    if name.endswith(".csv"):
        delimiter = ","
    elif name.endswith(".tsv"):
        delimiter = "\t"
    else:
        return None
    delimiter = getattr(log, "delimiter", None) or delimiter
    if not big_enough(path) or not pyarrow_has("csv"):
        return None
    header = list(log.columns or [])
    if len(set(header)) != len(header) or score not in header or label not in header:
        return None
    # the header as pyarrow would name it must be the row reader's
    try:
        with (gzip.open(path, "rb") if path.lower().endswith(".gz") else open(path, "rb")) as f:
            first = f.readline()
    except DAMAGED_COMPRESSED:
        return None  # the row reader reports it
    if first.startswith(codecs.BOM_UTF8):
        return None  # the row reader strips it; keep it simple: no fast path
    try:
        raw = next(csv.reader([first.decode("utf-8").rstrip("\r\n")], delimiter=delimiter))
    except (UnicodeDecodeError, StopIteration, csv.Error):
        return None
    if raw != header:
        return None
    return FastCsv(path, delimiter, header, score, label)
