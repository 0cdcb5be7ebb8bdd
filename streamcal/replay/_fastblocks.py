"""Binary JSON Lines and Parquet logs read a chunk at a time by pyarrow (the ``fast``
extra), for the columnar engine (labels known at once).

The row readers of :mod:`streamcal.replay._readers` give one Python object per row
(``json.loads`` per line; a tuple per Parquet row); these readers give the score and
label columns of a whole chunk as numpy arrays instead, and the engine runs them as it
runs the plain CSV blocks of :mod:`streamcal.replay._fastcsv`. A chunk is *plain* when
both readers can only read it one way, and then gives exactly the row reader's events:

- **JSON Lines**: a block of whole lines (a few MiB) that is valid UTF-8, has no blank
  line, no control character but line endings, no lone carriage return, and exactly
  one flat object per line (one ``{``, no ``[``), parsed by ``pyarrow.json.read_json``
  with the score typed float64 and the label float64, bool or text (pyarrow refuses a
  value of another JSON type, a duplicated key and invalid JSON; its number parser
  rounds correctly, as ``float`` does); every score a number in [0, 1] and every label
  one of :data:`streamcal.replay._rows.BINARY_LABELS`.
- **Parquet**: a record batch (``ParquetFile.iter_batches``) whose score column is an
  integer or floating column and label column an integer, floating, bool or text one,
  without nulls, with the same value checks.

A chunk that is not plain is read by the row reader's own code (a JSON Lines block
line by line with :func:`streamcal.replay._readers.jsonl_row`, a Parquet batch row by
row), so each malformed row is reported with its line number, column and value as the
row reader reports it; only a JSON Lines block with a lone carriage return (a line
break to the row reader, not to this one) ends the fast reading, the row reader going
on from its first row. Ids are not read here: logs with delayed labels are read by the
row reader (and parsed a chunk at a time by the engine).

Nothing here imports pyarrow unless the log is such a file and pyarrow is installed.
"""

from __future__ import annotations

import codecs
import gzip
import io
import os

import numpy as np

from streamcal.replay import _fastcsv
from streamcal.replay._checkpoint import RowFingerprint
from streamcal.replay._readers import jsonl_row, parquet_batches

__all__ = ["open_fast_blocks"]

#: Parquet rows per batch.
BATCH_ROWS = 65536

def _labels(column, pa):
    """The labels of an arrow column as float64 0/1, or None when one is not a plain
    binary label (or the column's type is not one the row reader reads alike)."""
    if column.null_count:
        return None
    t = column.type
    if pa.types.is_boolean(t):
        return column.to_numpy(zero_copy_only=False).astype(np.float64)
    if pa.types.is_integer(t) or pa.types.is_floating(t):
        values = column.to_numpy(zero_copy_only=False).astype(np.float64)
        if not bool(np.all((values == 0.0) | (values == 1.0))):
            return None
        return values
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return _fastcsv.text_label_values(column, pa)
    return None


def _scores(column, pa):
    """The scores of an arrow column as float64 in [0, 1], or None."""
    t = column.type
    if column.null_count or not (pa.types.is_integer(t) or pa.types.is_floating(t)):
        return None
    scores = column.to_numpy(zero_copy_only=False).astype(np.float64)
    if not bool(np.all((scores >= 0.0) & (scores <= 1.0))):
        return None
    return scores


class _PlainChunk:
    """A plain chunk: its scores and labels, every row an event; rows (for a time
    column, and the fingerprint) are built only when asked for."""

    def __init__(self, scores, labels, first_line: int, row_of, rows_of):
        self.scores = scores
        self.labels = labels
        self.n_rows = len(scores)
        self.rows_at = range(1, self.n_rows + 1)
        self.bad = []
        self.first_line = first_line
        self._row_of = row_of
        self._rows_of = rows_of

    def line(self, pos: int) -> int:
        return self.first_line + pos - 1

    def row(self, pos: int):
        """Row ``pos`` (1-based) as the row reader gives it."""
        return self._row_of(pos - 1)

    def fingerprint_bytes(self, a: int, b: int) -> bytes:
        """What rows a+1..b add to the row fingerprint (the row reader's rows)."""
        if a >= b:
            return b""
        return RowFingerprint.encode(self._rows_of(a, b))


class FastJsonl:
    """Blocks of a binary JSON Lines log (see the module docstring); after the first
    block with a lone carriage return, ``done`` is False and the row reader goes on
    from row ``rows_read + 1``."""

    def __init__(self, path: str, score, label):
        import pyarrow as pa
        import pyarrow.json as pj

        self._pa, self._pj = pa, pj
        self.score, self.label = score, label
        self.rows_read = 0
        self.done = False
        self._file = gzip.open(path, "rb") if path.lower().endswith(".gz") else open(path, "rb")
        self._next_line = 1
        # the label's JSON type: float64 (0, 1, 0.0, 1.0), bool or text; the one that
        # parsed the last block is tried first
        self._label_types = [pa.float64(), pa.bool_(), pa.string()]

    def close(self) -> None:
        self._file.close()

    def blocks(self, fallback):
        """Yield a chunk per block of lines: plain, or read line by line by
        ``fallback(rows, lines)`` (the engine's row chunk)."""
        if self.done:
            return
        for block in _fastcsv.line_blocks(self, end_last_line=True, strip_bom=True):
            if block.count(b"\r") != block.count(b"\r\n"):
                return  # a lone CR: a line break to the row reader only
            chunk = self._plain(block)
            if chunk is None:
                chunk = self._row_chunk(block, fallback)
            yield chunk
            self.rows_read += chunk.n_rows

    def _lines(self, block: bytes) -> list:
        return block[:-1].split(b"\n")

    def _row_chunk(self, block: bytes, fallback):
        """A block read line by line as the row reader reads it (blank lines skipped,
        but counted)."""
        rows, lines = [], []
        for k, raw in enumerate(self._lines(block)):
            text = raw.decode("utf-8", "surrogateescape")
            if not text.strip():
                continue
            rows.append(jsonl_row(text))
            lines.append(self._next_line + k)
        self._next_line += block.count(b"\n")
        return fallback(rows, lines)

    def _plain(self, block: bytes):
        n_lines = block.count(b"\n")
        raw = np.frombuffer(block, dtype=np.uint8)
        if (
            int(np.count_nonzero(raw < 32)) != n_lines + block.count(b"\r")
            or block.count(b"{") != n_lines
            or b"[" in block
            or b"\n\n" in block
            or b"\n\r\n" in block
            or block.startswith((b"\n", b"\r\n"))
        ):
            return None
        try:
            codecs.decode(block, "utf-8")
        except UnicodeDecodeError:
            return None
        pa, pj = self._pa, self._pj
        table = None
        for i, label_type in enumerate(self._label_types):
            schema = pa.schema([(self.score, pa.float64()), (self.label, label_type)])
            try:
                table = pj.read_json(
                    io.BytesIO(block),
                    read_options=pj.ReadOptions(use_threads=True, block_size=len(block) + 1),
                    parse_options=pj.ParseOptions(
                        explicit_schema=schema, unexpected_field_behavior="ignore"
                    ),
                )
            except (pa.ArrowInvalid, ValueError):
                continue
            if i:
                self._label_types.insert(0, self._label_types.pop(i))
            break
        if table is None or table.num_rows != n_lines:
            return None
        scores = _scores(table.column(self.score), pa)
        labels = _labels(table.column(self.label), pa)
        if scores is None or labels is None:
            return None
        first = self._next_line
        self._next_line += n_lines
        spans = self._lines(block)

        def row_of(k):
            return jsonl_row(spans[k].decode("utf-8"), False)

        def rows_of(a, b):
            return [jsonl_row(s.decode("utf-8"), False) for s in spans[a:b]]

        return _PlainChunk(scores, labels, first, row_of, rows_of)


class FastParquet:
    """Record batches of a binary Parquet log (see the module docstring)."""

    def __init__(self, path: str, score, label):
        import pyarrow as pa
        import pyarrow.parquet as pq

        self._pa = pa
        self._pf = pq.ParquetFile(path)
        self._name = os.path.basename(path)
        self.score, self.label = score, label
        self.rows_read = 0
        self.done = False

    def close(self) -> None:
        self._pf.close()

    def blocks(self, fallback):
        pa = self._pa
        for batch in parquet_batches(self._pf, self._name, BATCH_ROWS):
            first = self.rows_read
            scores = _scores(batch.column(self.score), pa)
            labels = None if scores is None else _labels(batch.column(self.label), pa)
            if labels is None:
                rows = list(zip(*(column.to_pylist() for column in batch.columns)))
                chunk = fallback(rows, list(range(first, first + len(rows))))
            else:

                def rows_of(a, b, batch=batch):
                    part = batch.slice(a, b - a)
                    return list(zip(*(column.to_pylist() for column in part.columns)))

                chunk = _PlainChunk(
                    scores, labels, first, lambda k, f=rows_of: f(k, k + 1)[0], rows_of
                )
            yield chunk
            self.rows_read += chunk.n_rows
        self.done = True


def open_fast_blocks(source, log, score, label):
    """A :class:`FastJsonl` or :class:`FastParquet` for ``source`` when it is a JSON
    Lines file (gzipped or not, of at least ``_fastcsv.MIN_BYTES``) or a Parquet file
    that ``log`` (the row reader's view of it) reads, and pyarrow is installed; else
    None."""
    if not isinstance(source, (str, os.PathLike)) or log.kind not in ("jsonl", "parquet"):
        return None
    path = os.fspath(source)
    if path == "-":
        return None
    if log.kind == "jsonl":
        if not isinstance(score, str) or not isinstance(label, str):
            return None
        if not _fastcsv.big_enough(path):
            return None
    if not _fastcsv.pyarrow_has("json"):
        return None
    if log.kind == "parquet":
        columns = list(log.columns or [])
        if columns.count(score) != 1 or columns.count(label) != 1:
            return None
        return FastParquet(path, score, label)
    return FastJsonl(path, score, label)
