"""Replay checkpoints on disk: the atomic write, the clean-up of a write that was cut
short, and the fingerprint of the rows a replay consumed.

A checkpoint is one JSON document (format tag ``CHECKPOINT_FORMAT``, see
:func:`streamcal.replay`). It is written to a temporary file beside the target, flushed
and synced, then renamed over the target (atomic on POSIX file systems), and the
directory is synced, so a reader sees either the previous checkpoint or the new one,
never a part of one, whenever the process is killed. A process killed during the write
leaves its temporary file behind; the next write of the same checkpoint removes it.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os

__all__ = ["RowFingerprint", "remove_partial_writes", "write_atomic"]


def _temporary_name(path: str) -> str:
    return f"{path}.tmp{os.getpid()}"


def remove_partial_writes(path: str) -> list:
    """Remove the temporary files that writes of the checkpoint ``path`` killed midway
    left behind; returns their names.

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "state.json")
    >>> open(path + ".tmp123", "w").close()
    >>> [os.path.basename(p) for p in remove_partial_writes(path)]
    ['state.json.tmp123']

    """
    removed = []
    for name in glob.glob(glob.escape(path) + ".tmp*"):
        suffix = name[len(path) + 4:]
        if suffix.isdigit():
            try:
                os.remove(name)
                removed.append(name)
            except FileNotFoundError:  # pragma: no cover - removed meanwhile
                pass
    return removed


def write_atomic(path: str, state: dict) -> None:
    """Write ``state`` as JSON to ``path`` atomically (see the module docstring).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "state.json")
    >>> write_atomic(path, {"n_events": 3})
    >>> open(path).read()
    '{"n_events": 3}'

    """
    tmp = _temporary_name(path)
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    try:
        fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    except OSError:  # pragma: no cover - a directory that cannot be opened
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - file systems without directory sync
        pass
    finally:
        os.close(fd)


class RowFingerprint:
    """A running hash (BLAKE2b, 128 bits) of the rows a replay consumed.

    Each row contributes its fields as text separated by the unit separator and ended by
    the record separator (a CSV row, a list of text) or its ``repr`` (records, JSON
    Lines values, DataFrame and Parquet rows), so the digest depends on the rows, not on
    how they were read in chunks.

    Examples
    --------
    >>> a, b = RowFingerprint(), RowFingerprint()
    >>> a.update([["0.5", "1"], ["0.2", "0"]])
    >>> b.update([["0.5", "1"]]); b.update([["0.2", "0"]])
    >>> a.hexdigest() == b.hexdigest()
    True
    >>> b.update([["0.9", "1"]]); a.hexdigest() == b.hexdigest()
    False

    """

    def __init__(self):
        self._hash = hashlib.blake2b(digest_size=16)

    def update(self, rows) -> None:
        """Add rows (lists of text, or any rows: see the class docstring)."""
        self._hash.update(self.encode(rows))

    @staticmethod
    def encode(rows) -> bytes:
        """The bytes :meth:`update` adds for ``rows``."""
        return b"".join(map(_row_bytes, rows))

    def update_bytes(self, data: bytes) -> None:
        """Add rows already encoded as :meth:`update` encodes them."""
        self._hash.update(data)

    def hexdigest(self) -> str:
        return self._hash.hexdigest()

    def copy(self) -> "RowFingerprint":
        """An independent fingerprint of the same rows."""
        other = RowFingerprint.__new__(RowFingerprint)
        other._hash = self._hash.copy()
        return other


def _row_bytes(row) -> bytes:
    if isinstance(row, list) and all(type(v) is str for v in row):
        return ("\x1f".join(row) + "\x1e").encode("utf-8", "surrogatepass")
    return (repr(row) + "\x1e").encode("utf-8", "surrogatepass")
