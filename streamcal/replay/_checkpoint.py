"""Replay checkpoints: the format (its version tag, the document a replay's state
becomes, and how each value is encoded), reading one back with every check a resume
makes (format, settings, parameters inside the state, fingerprint), the atomic write,
the clean-up of a write that was cut short, and the fingerprint of the rows a replay
consumed.

A checkpoint is one JSON document (format tag :data:`CHECKPOINT_FORMAT`, see
:func:`streamcal.replay`), sealed by a checksum (:func:`seal`: the SHA-256 of the
document's text without its last entry, :data:`CHECKSUM_KEY`, which holds it) that a
resume verifies, so a checkpoint damaged or edited after it was written is refused
rather than resumed with wrong results; one without the key (written before checksums)
still resumes. It is written to a temporary file beside the target, flushed
and synced, then renamed over the target (atomic on POSIX file systems), and the
directory is synced, so a reader sees either the previous checkpoint or the new one,
never a part of one, whenever the process is killed. A process killed during the write
leaves its temporary file behind; the next write of the same checkpoint removes it.
"""

from __future__ import annotations

import glob
import json
import math
import os
import re

__all__ = [
    "CHECKPOINT_FORMAT",
    "CHECKSUM_KEY",
    "Codec",
    "RowFingerprint",
    "document",
    "read_checkpoint",
    "remove_partial_writes",
    "same_file",
    "seal",
    "strip_state",
    "write_atomic",
]

#: Version tag of the checkpoint files written by :func:`streamcal.replay`.
CHECKPOINT_FORMAT = "streamcal.replay/1"

#: The key of a checkpoint's checksum (see :func:`seal`).
CHECKSUM_KEY = "checksum"

_DIGEST = re.compile(r"[0-9a-f]{32}\Z")
_SHA256 = re.compile(r"[0-9a-f]{64}\Z")


def same_file(a: str, b: str) -> bool:
    """Whether the paths ``a`` and ``b`` name one file: the same file when both exist
    (symlinks and hard links followed), else the same resolved real path.

    Examples
    --------
    >>> same_file("a/../b.json", "b.json"), same_file("a.json", "b.json")
    (True, False)

    """
    try:
        if os.path.exists(a) and os.path.exists(b):
            return os.path.samefile(a, b)
    except OSError:  # pragma: no cover - a file removed meanwhile
        pass
    return os.path.realpath(a) == os.path.realpath(b)


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


def write_atomic(path: str, state) -> None:
    """Write ``state`` as JSON (or ``state`` itself, a text: a :func:`seal`-ed
    document) to ``path`` atomically (see the module docstring).

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
        if isinstance(state, str):
            f.write(state)
        else:
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
        import hashlib  # here: a replay without checkpoints does not import OpenSSL

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


# ---------------------------------------------------------------------- the document


def strip_state(snapshot):
    """A snapshot without learnt state (nested calibrators' too): what identifies the
    configuration of a calibrator or a metric.

    Examples
    --------
    >>> strip_state({"class": "A", "params": {"base": {"class": "B", "state": 1}}, "state": 2})
    {'class': 'A', 'params': {'base': {'class': 'B'}}}

    """
    if isinstance(snapshot, dict):
        return {k: strip_state(v) for k, v in snapshot.items() if k != "state"}
    if isinstance(snapshot, list):
        return [strip_state(v) for v in snapshot]
    return snapshot


class Codec:
    """Scores, labels and predictions as JSON data and back. Binary logs: as they are.
    Multiclass logs: a class is its index in ``classes``; a dict of probabilities the
    list of its ``[class index, p]`` pairs in its own order (which decides ties).

    Examples
    --------
    >>> codec = Codec(["rain", "dry"])
    >>> codec.encode({"dry": 0.25, "rain": 0.75}), codec.encode("dry")
    ([[1, 0.25], [0, 0.75]], 1)
    >>> codec.decode([[1, 0.25], [0, 0.75]]), codec.decode(1)
    ({'dry': 0.25, 'rain': 0.75}, 'dry')

    """

    def __init__(self, classes=None):
        self.classes = None if classes is None else list(classes)
        self._index = None if classes is None else {c: i for i, c in enumerate(classes)}

    def encode(self, x):
        if self.classes is None:
            return x
        index = self._index
        if isinstance(x, dict):
            try:
                return [[index[c], p] for c, p in x.items()]
            except KeyError as exc:
                raise ValueError(
                    f"Cannot checkpoint a forecast of the class {exc.args[0]!r}, which is "
                    "not among the log's classes."
                ) from None
        return index[x]

    def decode(self, x):
        if self.classes is None:
            return x
        if isinstance(x, list):
            return {self.classes[i]: p for i, p in x}
        return self.classes[x]


def _heap_order(entry) -> tuple:
    """The order a pending label leaves the schedule's heap in: label time, event."""
    return entry[0], entry[1]


def document(run, codec: Codec, fingerprint=None) -> dict:
    """The checkpoint document of the replay ``run`` (its configuration, counts,
    calibrators, metrics, window, schedule, series and forecasts), with the
    ``fingerprint`` of the rows it consumed when given."""
    enc = codec.encode
    schedule = run.schedule
    forecasts = None
    if run.forecasts is not None:
        forecasts = {
            k: (v if k == "index" else [enc(x) for x in v])
            for k, v in run.forecasts.items()
        }
    state = {
        "format": CHECKPOINT_FORMAT,
        "config": run.config,
        "n_events": run.n_events,
        "n_learnt": run.n_learnt,
        "n_skipped": run.n_skipped,
        "errors": [list(e) for e in run.errors],
        "events_read": run.events_read,
        "labels_read": schedule.labels_read,
        "last_time": run.last_time if run.last_time > -math.inf else None,
        "last_label_time": schedule.last_label_time
        if schedule.last_label_time > -math.inf
        else None,
        "last_time_raw": run.last_time_raw,
        "first_time_raw": run.first_time_raw,
        "calibrators": {n: cal.to_dict() for n, cal in run.cals.items()},
        "metrics": {
            n: {k: m.to_dict() for k, m in ms.items()} for n, ms in run.metrics.items()
        },
        "window": None
        if run.wmetrics is None
        else {
            "metrics": {
                n: {k: m.to_dict() for k, m in ms.items()}
                for n, ms in run.wmetrics.items()
            },
            "events": [[enc(y), [enc(p) for p in preds]] for y, preds in run.wbuf],
        },
        # sorted: a valid heap, the same whatever order the events were pushed in
        "heap": [
            [lt, i, enc(s), enc(y), [enc(p) for p in preds]]
            for lt, i, s, y, preds in sorted(schedule.heap, key=_heap_order)
        ],
        "pending": [
            [eid, i, enc(s), [enc(p) for p in preds]]
            for eid, (i, s, preds) in schedule.pending.items()
        ],
        "early": [
            [eid, lt, enc(y), line] for eid, (lt, y, line) in schedule.early.items()
        ],
        "series": {
            k: (
                v
                if not isinstance(v, dict)
                else {m: [list(tv) for tv in pairs] for m, pairs in v.items()}
            )
            for k, v in run.series.items()
        },
        "forecasts": forecasts,
    }
    if fingerprint is not None:
        state["fingerprint"] = fingerprint
    return state


def _sha256(text: str) -> str:
    import hashlib  # here: a replay without checkpoints does not import OpenSSL

    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _checksum_entry(digest: str) -> str:
    """The text that ends a sealed document: its checksum entry and the closing brace."""
    return f', "{CHECKSUM_KEY}": "{digest}"}}'


def seal(state: dict) -> str:
    """The JSON text of ``state`` (a non-empty dict, encoded as :func:`json.dumps`
    encodes it by default) sealed by a checksum: a last entry :data:`CHECKSUM_KEY`
    holding the SHA-256 of the text without it. Any change to the text before that
    entry (a number edited, a byte damaged, the document rewritten in another spacing)
    no longer matches; loading and dumping it again with :mod:`json`'s defaults gives
    back the same text. Cost: one SHA-256 pass over the text (milliseconds for
    megabytes, against the encoding's tenths of a second).

    Examples
    --------
    >>> text = seal({"format": CHECKPOINT_FORMAT, "n_events": 3})
    >>> text[:50]
    '{"format": "streamcal.replay/1", "n_events": 3, "c'
    >>> _checksum_problem(text, json.loads(text))
    >>> _checksum_problem(text.replace("3", "4", 1), json.loads(text))
    'does not match its checksum'

    """
    body = json.dumps(state)
    return body[:-1] + _checksum_entry(_sha256(body))


def _checksum_problem(text: str, state: dict) -> str | None:
    """What is wrong with the checksum of the checkpoint ``text`` (``state``: its
    document), or None when it matches or there is none (a checkpoint of an earlier
    version, or one whose entry was removed)."""
    if CHECKSUM_KEY not in state:
        return None
    saved = state[CHECKSUM_KEY]
    if not (isinstance(saved, str) and _SHA256.match(saved)):
        return "has a malformed checksum"
    text = text.rstrip()  # a final line break added by an editor changes nothing
    entry = _checksum_entry(saved)
    if not text.endswith(entry) or _sha256(text[: -len(entry)] + "}") != saved:
        return "does not match its checksum"
    return None


# ---------------------------------------------------------------------- reading back


def read_checkpoint(path: str, config: dict, labels: bool = False) -> dict:
    """The checkpoint document at ``path``, once every check of a resume passed:
    ValueError when it is not a replay checkpoint of this format, was written with
    other settings than ``config`` (the replay's configuration, as it reads back from
    JSON), holds calibrators or metrics with other parameters than those configured,
    or has no well-formed fingerprint of the rows it consumed (of the label records
    too when ``labels``): without one, a resume could not tell an edited log; last,
    when its content does not match its checksum (:func:`seal`): it was damaged or
    edited after it was written. A checkpoint without a checksum (written before
    checksums) is read.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "state.json")
    >>> write_atomic(path, {"format": CHECKPOINT_FORMAT, "config": {}})
    >>> read_checkpoint(path, {})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: The checkpoint ... has no fingerprint of the rows it replayed (...

    """
    with open(path, encoding="utf-8") as f:
        try:
            text = f.read()
            state = json.loads(text)
        except ValueError:  # not JSON, or not UTF-8
            state = None
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path!r} is not a replay checkpoint ({CHECKPOINT_FORMAT}).")
    saved = state.get("config")
    saved = saved if isinstance(saved, dict) else {}
    differ = [k for k in sorted(set(saved) | set(config)) if saved.get(k) != config.get(k)]
    if differ:
        raise ValueError(
            f"The checkpoint {path!r} was written by a replay with other settings "
            f"({', '.join(differ)} differ); resume with the same log, columns, "
            "calibrators and metrics."
        )
    # the calibrators' and metrics' parameters inside the saved state must be those
    # configured (the check above compares the settings saved beside it)
    for name, snapshot in state.get("calibrators", {}).items():
        if strip_state(snapshot) != config["calibrators"].get(name):
            raise ValueError(
                f"The checkpoint {path!r} holds the calibrator {name!r} with other "
                "parameters than those given; resume with the same calibrators."
            )
    for name, metrics in state.get("metrics", {}).items():
        for key, snapshot in metrics.items():
            if strip_state(snapshot) != config["metrics"].get(key):
                raise ValueError(
                    f"The checkpoint {path!r} holds the metric {key!r} with other "
                    "parameters than those given; resume with the same metrics."
                )
    _check_fingerprint(path, state, labels)
    problem = _checksum_problem(text, state)
    if problem is not None:
        raise ValueError(
            f"The checkpoint {path!r} {problem} (a SHA-256 of its text): it was "
            "damaged or edited after it was written, and resuming from it would give "
            "wrong results. Resume from an intact copy, or start again without "
            "--resume (resume=False)."
        )
    return state


def _check_fingerprint(path: str, state: dict, labels: bool) -> None:
    """ValueError unless ``state`` has a well-formed fingerprint of its rows."""
    fingerprint = state.get("fingerprint")
    if fingerprint is None:
        problem = "has no fingerprint of the rows it replayed"
    else:
        fields = [("rows", "events_read", "blake2b")]
        if labels:
            fields.append(("label_rows", "labels_read", "labels_blake2b"))
        ok = isinstance(fingerprint, dict)
        for count, read, digest in fields if ok else ():
            n = fingerprint.get(count)
            ok = ok and type(n) is int and n == state.get(read)
            ok = ok and isinstance(fingerprint.get(digest), str)
            ok = ok and _DIGEST.match(fingerprint[digest]) is not None
        problem = None if ok else "has a malformed fingerprint of the rows it replayed"
    if problem is not None:
        raise ValueError(
            f"The checkpoint {path!r} {problem} (written by an older streamcal, or "
            "edited), so resuming could not check that the log is the one it "
            "replayed. Start again without --resume (resume=False)."
        )
