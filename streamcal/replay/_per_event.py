"""The per-event replay engine: each event predicted, scored and learnt one at a time."""

from __future__ import annotations

import collections
import heapq
import json
import math
import os

from streamcal.replay import _readers, _rows
from streamcal import _validation as V
from streamcal.replay._rows import BINARY_LABELS, RowError, RowParser, parse_id
from streamcal.base import BinaryCalibrator
from streamcal.metrics.base import StreamingMetric
from streamcal.replay._errors import ReplayError
from streamcal.replay._metrics import (
    WINDOW_SUFFIX,
    _columns,
    _resolve_metrics,
    _values,
    _windowed,
)
from streamcal.replay._result import ReplayResult

#: Version tag of the checkpoint files written by :func:`replay`.
CHECKPOINT_FORMAT = "streamcal.replay/1"

def replay(
    events,
    calibrators,
    metrics=("brier", "log_loss", "ece"),
    *,
    score="score",
    label="label",
    time=None,
    label_time=None,
    id=None,
    labels=None,
    include_raw=True,
    every=1000,
    window=None,
    checkpoint=None,
    checkpoint_every=10000,
    resume=False,
    on_error="skip",
    progress=None,
    keep_forecasts=False,
    max_errors=1000,
    stop=None,
    format=None,
    delimiter=None,
) -> ReplayResult:
    """Replay a log of scores and labels through calibrators, prequentially.

    For each event, in the order of the log, every calibrator predicts from the score
    (using only the labels known at that moment), the prediction is scored by each
    metric once the label is known, and then the calibrator learns the label. The raw
    scores are scored too, as the calibrator ``"raw"``.

    Parameters
    ----------
    events
        The log: an iterable of dict records, a pandas DataFrame, or the path of a
        ``.csv`` / ``.tsv`` / ``.jsonl`` / ``.ndjson`` file (each may be gzipped,
        ``.gz``) or of a ``.parquet`` file (needs pyarrow: ``pip install
        "streamcal[fast]"``), or ``"-"`` for standard input (CSV unless ``format``
        says otherwise). pandas and pyarrow are imported only for those inputs. CSV
        header names are stripped of surrounding whitespace; a column used must be
        named once in the header. A row that cannot be read (a CSV field longer than
        the CSV reader's limit, a line that is not valid UTF-8, invalid or too deeply
        nested JSON) is a malformed row, reported with its line.
    calibrators
        Dict name -> calibrator. Each is used as given and learns in place. For a
        binary log, :class:`streamcal.base.BinaryCalibrator` objects (or anything with
        ``predict_one(score) -> float`` and ``learn_one(score, label)``); for a
        multiclass log, objects with ``predict_one(dict) -> dict`` and
        ``learn_one(dict, label)`` (streamcal has no multiclass calibrator yet: give an
        empty dict to score the raw forecasts alone). To checkpoint, each needs
        ``to_dict()`` and a class method ``from_dict``.
    metrics
        Metric short names, :class:`streamcal.metrics.base.StreamingMetric` objects
        (cloned, unfitted, per calibrator; keyed by their short name plus the parameters
        that differ from the defaults, e.g. ``"ece:n_bins=15"``), or a dict key ->
        short name or metric. Binary short names: ``"brier"``, ``"log_loss"``,
        ``"ece"``, ``"sharpness"``, ``"roc_auc"``, ``"calibration_refinement"``,
        ``"murphy"``, ``"corp"``. Multiclass short names: ``"brier"``
        (:class:`streamcal.metrics.MulticlassBrier`, ``sum_c (p_c - [y = c])**2``, in
        [0, 2]), ``"log_loss"`` (:class:`streamcal.metrics.CrossEntropy`, ``-log p_y``,
        clipped at 1e-15), ``"ece"`` (= ``"confidence_ece"``,
        :class:`streamcal.metrics.ConfidenceECE`), ``"top_label_ece"``,
        ``"classwise_ece"`` and ``"tece"``.
    score
        Binary log: the score column, a probability in [0, 1]. Multiclass log: a list
        (or tuple) of columns, one per class, each holding that class's probability;
        the class is named by its column, or give a dict class -> column. A row's
        probabilities must sum to 1 within 0.01 and are divided by their sum when it is
        off by more than 1e-9 (logs round their numbers).
    label
        The label column. Binary: 0, 1, True, False, 0.0, 1.0 or their text forms
        (``"0"``, ``"1"``, ``"0.0"``, ``"1.0"``, ``"true"``, ``"false"``, ...).
        Multiclass: a class (its column name, or its text form). Text labels are
        read without surrounding whitespace (``" 1"`` is 1).
    time
        Optional event-time column: numbers, or ISO 8601 text / datetimes (read as UTC
        when they have no zone). Kept in ``series["time"]``; needed for delayed labels,
        which also require the events to be in time order (an event earlier than the
        previous one is malformed).
    label_time
        Delayed labels, way 1: the column giving when each event's label becomes known
        (same form as ``time``).
    id, labels
        Delayed labels, way 2: ``labels`` is a second log (records, DataFrame or path)
        of label records with columns ``id``, ``label`` and ``time`` (when the label
        became known), in time order; ``id`` names the column joining them to the
        events (whose ``label`` column is then not read). A label record whose id
        matches no event waiting for its label is malformed. Ids are compared as text
        whatever the file format: text without surrounding whitespace, integral
        numbers as their integer text (``17``, ``17.0`` and ``"17"`` match), other
        finite floats by their ``repr``; bools and other values are malformed.
    include_raw
        Also score the raw scores, as the calibrator ``"raw"``.
    every
        Sample every metric into ``series`` every ``every`` events (and once at the
        end), and call ``progress``; None: only at the end.
    window
        If set, also follow every metric over the last ``window`` scored events (keys
        ``"<metric>@window"``). Costs O(window) memory per calibrator.
    checkpoint
        Path of a JSON file where the whole replay state (calibrators, metrics, series,
        errors, counts, pending delayed events, position in the log) is saved every
        ``checkpoint_every`` events, at the end of the log (before the labels still
        pending are revealed), and before raising a :class:`ReplayError`. Written
        atomically (a temporary file, synced, then ``os.replace``); each write costs
        O(state): the calibrators, metrics, series and pending events.
    checkpoint_every
        Events between checkpoints.
    resume
        Continue from ``checkpoint``: the rows already replayed are skipped and the
        results are exactly those of an uninterrupted replay. The log, columns,
        calibrators (their classes and parameters) and metrics must be those of the
        interrupted run (ValueError otherwise); the calibrators given are restored in
        place. A missing checkpoint file starts the replay from the beginning.
    on_error
        ``"skip"``: a malformed row (missing or non-numeric score, score outside [0, 1]
        or NaN, unknown label, bad time, duplicate id, ...) is recorded in ``errors``
        with its line number, counted in ``n_skipped``, and changes nothing.
        ``"raise"``: stop with :class:`ReplayError` naming the line and the reason;
        what was learnt stays in the calibrators (and, with ``checkpoint``, in the
        checkpoint, so that the run can resume once the row is fixed).
    progress
        Optional callable, called with the number of events replayed every ``every``
        events, and at the end with the final count (unless it was just called with
        it).
    keep_forecasts
        Keep every scored prediction in ``ReplayResult.forecasts`` (O(events) memory).
    max_errors
        How many malformed rows to keep in ``errors`` (all are counted).
    format
        How to read a file or standard input: ``"csv"``, ``"tsv"`` or ``"jsonl"``;
        None: from the file's suffix, CSV for standard input. Applies to ``events``
        (the label records are read by their suffix).
    delimiter
        The field delimiter of a CSV ``events`` log (one character); None: a tab for
        ``.tsv`` files and ``format="tsv"``, else a comma.

    Returns
    -------
    ReplayResult

    Notes
    -----
    **Prequential order.** With labels known at once (no ``label_time`` / ``id``), each
    event is predicted, scored, then learnt before the next is read. With delayed
    labels, an event is predicted when it is read and kept (with its predictions: the
    memory holds the pending events only) until its label arrives; then it is scored
    and learnt. A label known at time ``L`` is revealed before any event whose time is
    ``>= L`` is predicted (a label arriving at the same moment as an event counts as
    known to it, as in river's ``stream.simulate_qa``); labels revealed at once are
    taken in order of ``L``, then of the events (way 1), or in the order of the label
    records (way 2). An event's own label is never known to its own prediction: when
    ``L`` is not later than the event's time, the label is scored and learnt right
    after the prediction, before the next event (so ``label_time`` equal to ``time``
    replays exactly as labels known at once). Way 2: a label record whose id is not
    waiting yet is kept while events of its time may still come (so a label stamped
    with its event's own time works); otherwise it is malformed. At the end of the
    log, the labels still pending are revealed in that order (way 1) or the remaining
    label records are read (way 2); events left without a label are counted in
    ``n_unlabelled``.

    **Windows** count scored events; a revertible metric is updated and reverted by
    the replay, one that cannot revert (``ECE(strategy="quantile")``) is built with
    ``window_size=window``.

    **Line numbers** in ``errors`` and :class:`ReplayError`: for CSV and JSON Lines
    files, the line in the file (the CSV header is line 1); for records, DataFrames and
    Parquet files, the 0-based index of the row. Blank CSV lines are skipped.

    **Cost.** Per event: parsing (one ``float`` and one dict lookup for a binary CSV
    row), plus one ``predict_one``, one ``learn_one`` and the metric updates per
    calibrator. Memory: the calibrators and metrics, the series (one value per metric
    every ``every`` events), the pending events, and the window; nothing per event
    unless ``keep_forecasts``. Measured by ``benchmarks/bench_replay.py``.

    Examples
    --------
    >>> from streamcal import OnlineIsotonic, replay
    >>> rows = [{"score": 0.9, "label": i % 2} for i in range(100)]  # over-confident
    >>> result = replay(rows, {"isotonic": OnlineIsotonic()}, metrics=["brier", "ece"])
    >>> {name: round(v["brier"], 4) for name, v in result.summary.items()}
    {'raw': 0.41, 'isotonic': 0.2734}
    >>> result.n_events, result.n_learnt, result.n_skipped
    (100, 100, 0)

    Labels that arrive late: the first two events' labels are known only at time 2,
    so the third event is predicted with both of them, the second with neither:

    >>> rows = [{"t": t, "lt": lt, "score": s, "label": y} for t, lt, s, y in
    ...         [(0, 2, 0.3, 1), (1, 2, 0.3, 1), (2, 3, 0.3, 0)]]
    >>> result = replay(rows, {"isotonic": OnlineIsotonic()}, ["brier"], time="t",
    ...                 label_time="lt", keep_forecasts=True)
    >>> result.forecasts["isotonic"]
    [0.3, 0.3, 1.0]

    """
    from streamcal.replay._engine import ColumnarReplay

    return ColumnarReplay(
        calibrators,
        metrics,
        score=score,
        label=label,
        time=time,
        label_time=label_time,
        id=id,
        labels=labels,
        include_raw=include_raw,
        every=every,
        window=window,
        checkpoint=checkpoint,
        checkpoint_every=checkpoint_every,
        resume=resume,
        on_error=on_error,
        progress=progress,
        keep_forecasts=keep_forecasts,
        max_errors=max_errors,
        stop=stop,
        format=format,
        delimiter=delimiter,
    ).run(events)



def _check_column(value, name: str, allow_none: bool = True):
    if value is None:
        ok = allow_none
    elif isinstance(value, str):
        ok = value != ""
    else:  # DataFrame columns may be named by any hashable (an int, say)
        try:
            hash(value)
            ok = not isinstance(value, (bytes, bool, float))
        except TypeError:
            ok = False
    V.check_param(
        "replay", name, value, ok, "a column name" + (" or None" if allow_none else "")
    )


def _strip_state(snapshot):
    """A snapshot without learnt state (nested calibrators' too): what identifies the
    configuration of a calibrator."""
    if isinstance(snapshot, dict):
        return {k: _strip_state(v) for k, v in snapshot.items() if k != "state"}
    if isinstance(snapshot, list):
        return [_strip_state(v) for v in snapshot]
    return snapshot


def _restore_in_place(obj, snapshot) -> object:
    """Give ``obj`` the state of ``type(obj).from_dict(snapshot)``, keeping its
    identity (as unpickling does: through ``__setstate__`` when the class defines it, as
    the shells over compiled kernels do, else by replacing its ``__dict__``); returns
    the object that now holds the state (a new one if ``obj`` has neither)."""
    restored = type(obj).from_dict(snapshot)
    if type(restored) is not type(obj):  # pragma: no cover - from_dict of a subclass
        return restored
    if callable(getattr(type(obj), "__setstate__", None)):
        obj.__setstate__(restored.__getstate__())
        return obj
    if hasattr(obj, "__dict__"):
        obj.__dict__.clear()
        obj.__dict__.update(restored.__dict__)
        return obj
    return restored  # pragma: no cover - objects with __slots__



class _Replay:
    """One replay run: configuration, state, and the loops (see :func:`replay`)."""

    def __init__(
        self,
        calibrators,
        metrics,
        *,
        score,
        label,
        time,
        label_time,
        id,
        labels,
        include_raw,
        every,
        window,
        checkpoint,
        checkpoint_every,
        resume,
        on_error,
        progress,
        keep_forecasts,
        max_errors,
        format=None,
        delimiter=None,
    ):
        # ---- arguments
        if not isinstance(calibrators, dict):
            raise TypeError(
                "The 'calibrators' argument of replay must be a dict name -> calibrator. "
                f"Got {V.format_value(calibrators)} instead."
            )
        multiclass = isinstance(score, (list, tuple, dict))
        if multiclass:
            pairs = (
                list(score.items())
                if isinstance(score, dict)
                else [(c, c) for c in score]
            )
            V.check_param(
                "replay",
                "score",
                score,
                len(pairs) >= 2,
                "a column name, or a list of at least two columns (one per class)",
            )
            for _, col in pairs:
                _check_column(col, "score", allow_none=False)
            classes = [c for c, _ in pairs]
            if len(set(classes)) != len(classes) or len(
                {col for _, col in pairs}
            ) != len(pairs):
                V.check_param(
                    "replay", "score", score, False, "columns naming distinct classes"
                )
            self.classes = classes
            self.score_columns = [col for _, col in pairs]
            self._class_index = {c: i for i, c in enumerate(classes)}
        else:
            _check_column(score, "score", allow_none=False)
            self.classes = None
            self.score_columns = [score]
        self.multiclass = multiclass
        self.score = score
        _check_column(label, "label", allow_none=False)
        for name, value in (("time", time), ("label_time", label_time), ("id", id)):
            _check_column(value, name)
        if label_time is not None and id is not None:
            raise ValueError(
                "Delayed labels come either from a 'label_time' column or from label "
                "records joined by 'id', not both."
            )
        if (id is None) != (labels is None):
            raise ValueError(
                "The 'id' and 'labels' arguments of replay go together: label records "
                "(labels) joined to the events by an id column (id)."
            )
        if (label_time is not None or id is not None) and time is None:
            raise ValueError(
                "Delayed labels need the events' 'time' column, to know which labels "
                "have arrived when each event is predicted."
            )
        self.label, self.time, self.label_time, self.id = label, time, label_time, id
        self.labels_source = labels
        self.delay = (
            "time" if label_time is not None else ("id" if id is not None else None)
        )
        V.check_param(
            "replay",
            "include_raw",
            include_raw,
            isinstance(include_raw, bool),
            "a bool",
        )
        self.every = V.check_int(every, "replay", "every", minimum=1, allow_none=True)
        self.window = V.check_int(
            window, "replay", "window", minimum=1, allow_none=True
        )
        self.checkpoint_every = V.check_int(
            checkpoint_every, "replay", "checkpoint_every", minimum=1
        )
        self.max_errors = V.check_int(max_errors, "replay", "max_errors", minimum=0)
        V.check_param(
            "replay",
            "on_error",
            on_error,
            on_error in ("skip", "raise"),
            "a str among {'skip', 'raise'}",
        )
        V.check_param(
            "replay",
            "checkpoint",
            checkpoint,
            checkpoint is None or isinstance(checkpoint, (str, os.PathLike)),
            "a path or None",
        )
        V.check_param(
            "replay",
            "resume",
            resume,
            isinstance(resume, bool) and (not resume or checkpoint is not None),
            "a bool, True only with a checkpoint",
        )
        V.check_param(
            "replay",
            "progress",
            progress,
            progress is None or callable(progress),
            "a callable or None",
        )
        V.check_param(
            "replay",
            "keep_forecasts",
            keep_forecasts,
            isinstance(keep_forecasts, bool),
            "a bool",
        )
        self.on_error = on_error
        self.checkpoint = None if checkpoint is None else os.fspath(checkpoint)
        self.resume = resume
        self.progress = progress
        self.keep_forecasts = keep_forecasts
        self.format = format
        self.delimiter = delimiter

        # ---- calibrators
        self.cals = {}
        for name, cal in calibrators.items():
            if not isinstance(name, str) or not name:
                raise TypeError(
                    f"Calibrator names must be non-empty strings. Got {name!r} instead."
                )
            if include_raw and name == "raw":
                raise ValueError(
                    "'raw' names the raw scores (include_raw=True); give the calibrator another name."
                )
            if not (
                callable(getattr(cal, "predict_one", None))
                and callable(getattr(cal, "learn_one", None))
            ):
                raise TypeError(
                    f"The calibrator {name!r} must have predict_one and learn_one methods. "
                    f"Got {V.format_value(cal)} instead."
                )
            if multiclass and isinstance(cal, BinaryCalibrator):
                raise TypeError(
                    f"The calibrator {name!r} is a binary calibrator ({type(cal).__name__}); "
                    "a multiclass log (several score columns) needs calibrators whose "
                    "predict_one takes and returns a dict of class probabilities."
                )
            if self.checkpoint is not None and not (
                callable(getattr(cal, "to_dict", None))
                and callable(getattr(type(cal), "from_dict", None))
            ):
                raise TypeError(
                    f"The calibrator {name!r} has no to_dict/from_dict, so it cannot be "
                    "checkpointed; drop 'checkpoint' or use a calibrator that has them."
                )
            self.cals[name] = cal
        self.names = (["raw"] if include_raw else []) + list(self.cals)
        if not self.names:
            raise ValueError("Nothing to replay: no calibrators and include_raw=False.")
        self.include_raw = include_raw

        # ---- metrics
        self.templates = _resolve_metrics(metrics, multiclass)
        self.metrics = {
            n: {k: m.clone() for k, m in self.templates.items()} for n in self.names
        }
        self.wmetrics = None
        self.wbuf = None
        if self.window is not None:
            self.wmetrics = {}
            self.wrevert = {}
            for n in self.names:
                self.wmetrics[n] = {}
                for k, m in self.templates.items():
                    wm, rev = _windowed(m, self.window)
                    self.wmetrics[n][k] = wm
                    self.wrevert[k] = rev
            self.wbuf = collections.deque()

        # ---- state
        self.n_events = 0
        self.n_learnt = 0
        self.n_skipped = 0
        self.n_unlabelled = 0
        self.errors = []
        self.events_read = 0
        self.labels_read = 0
        self.last_time = -math.inf
        self.last_label_time = -math.inf
        self.heap = []  # way 1: (label_time, index, score, label, predictions)
        self.pending = {}  # way 2: id -> (index, score, predictions)
        self.next_label = None  # way 2: the next label record, read ahead
        self.early = {}  # way 2: id -> (time, label, line): labels at the time of the last event
        self.series = {"t": []}
        if time is not None:
            self.series["time"] = []
        for n in self.names:
            self.series[n] = {}
        self.forecasts = None
        if keep_forecasts:
            self.forecasts = {"index": [], "label": []}
            for n in self.names:
                self.forecasts[n] = []
        self.last_time_raw = None
        self.first_time_raw = None  # the time of the first event (see _first_event)
        self.log = None
        self.label_log = None

    # ------------------------------------------------------------------ configuration

    def _config(self) -> dict:
        cals = {}
        for name, cal in self.cals.items():
            if callable(getattr(cal, "to_dict", None)):
                cals[name] = _strip_state(cal.to_dict())
            else:
                cals[name] = {"class": type(cal).__name__}
        return {
            "score": self.score
            if not isinstance(self.score, dict)
            else [[c, col] for c, col in self.score.items()],
            "label": self.label,
            "time": self.time,
            "label_time": self.label_time,
            "id": self.id,
            "include_raw": self.include_raw,
            "every": self.every,
            "window": self.window,
            "keep_forecasts": self.keep_forecasts,
            "calibrators": cals,
            "metrics": {
                k: _strip_state(m.to_dict()) for k, m in self.templates.items()
            },
        }

    # ------------------------------------------------------------------ run

    def run(self, events) -> ReplayResult:
        config = self._config() if self.checkpoint is not None else None
        self.config = json.loads(json.dumps(config))  # as it reads back from the file
        saved = None
        if self.resume and os.path.exists(self.checkpoint):
            saved = self._read_checkpoint()
        if _readers.is_stdin(events) and _readers.is_stdin(self.labels_source):
            raise ValueError(
                "The events and the label records cannot both be read from standard "
                "input ('-')."
            )
        self.log = log = _readers.open_log(
            events, "events", format=self.format, delimiter=self.delimiter
        )
        try:
            keys = self._resolve_keys(log)
            if self.delay == "id":
                self.label_log = _readers.open_log(self.labels_source, "labels")
                self._resolve_label_keys(self.label_log)
            if saved is not None:  # nothing changes before the log is known to fit
                self._skip_read(saved["events_read"], saved["labels_read"])
                self._restore(saved)
            if self.delay == "id":
                self._read_next_label()
            self.next_mark = self._next_mark()
            lean = not (
                self.multiclass or self.delay or self.window or self.keep_forecasts
            )
            if lean:
                self._run_lean(log, keys)
            else:
                self._run_general(log, keys)
            if self.checkpoint is not None:
                self._save_checkpoint()
            self._finish()
        finally:
            log.close()
            if self.label_log is not None:
                self.label_log.close()
        return self._result()

    def _resolve_keys(self, log):
        self.parser = self._row_parser(log)
        self.score_keys = self.parser.score_keys
        self.keys = self.parser.keys
        return self.keys

    def _resolve_label_keys(self, log):
        self.parser = self._row_parser(self.log, log)

    def _row_parser(self, log, labels=None) -> RowParser:
        return RowParser(
            log,
            score_columns=self.score_columns,
            classes=self.classes,
            label=self.label,
            time=self.time,
            label_time=self.label_time,
            id=self.id,
            delay=self.delay,
            labels=labels,
        )

    def _skip_read(self, events_read: int, labels_read: int) -> None:
        """Skip the rows a checkpoint has replayed (ValueError if there are fewer)."""
        got = self.log.skip(events_read)
        if got < events_read:
            raise ValueError(
                f"The log {self.log.name} has {got} rows, but the checkpoint "
                f"{self.checkpoint!r} was written after {events_read}: it belongs "
                "to another log."
            )
        if self.label_log is not None:
            got = self.label_log.skip(labels_read)
            if got < labels_read:
                raise ValueError(
                    f"The label records {self.label_log.name} have {got} rows, but the "
                    f"checkpoint {self.checkpoint!r} was written after {labels_read}."
                )

    def _next_mark(self) -> int:
        n = self.n_events
        marks = (
            [(n // self.checkpoint_every + 1) * self.checkpoint_every]
            if self.checkpoint
            else []
        )
        if self.every is not None:
            marks.append((n // self.every + 1) * self.every)
        return min(marks) if marks else -1

    def _mark(self, row) -> int:
        """Sample, report progress, checkpoint, as due after ``n_events`` events."""
        n = self.n_events
        self.last_time_raw = self._time_raw(row)
        if self.every is not None and n % self.every == 0:
            self._sample()
            if self.progress is not None:
                self.progress(n)
        if self.checkpoint is not None and n % self.checkpoint_every == 0:
            self._save_checkpoint()
        return self._next_mark()

    def _first_event(self, row) -> None:
        """Note the time of the first event replayed (``row``): the start of
        ``ReplayResult.time_range``."""
        self.first_time_raw = self._time_raw(row)

    def _time_raw(self, row):
        key = self.keys["time"]
        if key is None:
            return None
        try:
            return _rows.json_safe_time(row[key])
        except (LookupError, TypeError):
            return None

    def _sample(self) -> None:
        series = self.series
        n = self.n_events
        if series["t"] and series["t"][-1] == n:  # the end, right after a sample
            series["t"].pop()
            if "time" in series:
                series["time"].pop()
            for name in self.names:
                for pairs in series[name].values():
                    pairs.pop()
        series["t"].append(n)
        if "time" in series:
            series["time"].append(self.last_time_raw)
        values = {}
        for name in self.names:
            values.clear()
            for k, m in self.metrics[name].items():
                _values(m, k, values)
            if self.wmetrics is not None:
                for k, m in self.wmetrics[name].items():
                    _values(m, k, values, WINDOW_SUFFIX)
            out = series[name]
            for k, v in values.items():
                pairs = out.get(k)
                if pairs is None:
                    out[k] = pairs = []
                pairs.append((n, v))

    # ------------------------------------------------------------------ errors

    def _bad(self, line, reason, source="events") -> None:
        """A malformed row: record it, or save the state and raise."""
        if self.on_error == "raise":
            path = None
            if self.checkpoint is not None:
                self._save_checkpoint()
                path = self.checkpoint
            log = self.label_log if source == "labels" else self.log
            unit = "line" if log.kind in ("csv", "jsonl") else "row"
            raise ReplayError(line, reason, source, log.name, self.n_events, path, unit)
        self.n_skipped += 1
        if len(self.errors) < self.max_errors:
            self.errors.append(
                (line, ("labels: " + reason) if source == "labels" else reason)
            )

    # ------------------------------------------------------------------ parsing

    def _parse_event(self, row):
        """(score, label, time, label_time, id) of an event row, or raise RowError."""
        return self.parser.parse_event(row, self.last_time)

    def _parse_label_record(self, row):
        """(time, id, label) of a label record, or raise RowError."""
        return self.parser.parse_label_record(row, self.last_label_time)

    # ------------------------------------------------------------------ the loops

    def _run_lean(self, log, keys) -> None:
        """Binary log, labels known at once, no window, no kept forecasts: the fast
        loop. Same results as :meth:`_run_general` (tested)."""
        si, li = keys["score"], keys["label"]
        labmap = BINARY_LABELS
        raw_ups = (
            tuple(m.update for m in self.metrics["raw"].values())
            if self.include_raw
            else ()
        )
        units = tuple(
            (
                cal.predict_one,
                tuple(m.update for m in self.metrics[name].values()),
                cal.learn_one,
            )
            for name, cal in self.cals.items()
        )
        n = self.n_events
        mark = self.next_mark
        last = None
        read = start = self.events_read
        for read, row in enumerate(log.rows, start + 1):
            try:
                v = row[si]
                s = float(v)
                y = labmap[row[li]]
            except (LookupError, TypeError, ValueError):
                s = -1.0
            if not 0.0 <= s <= 1.0 or v is True or v is False:
                self.n_events = self.n_learnt = n
                self.events_read = read - 1
                self._bad_row(log, read, row)
                continue
            for up in raw_ups:
                up(y, s)
            for predict, ups, learn in units:
                p = predict(s)
                for up in ups:
                    up(y, p)
                learn(s, y)
            n += 1
            last = row
            if n == 1:
                self._first_event(row)
            if n == mark:
                self.n_events = self.n_learnt = n
                self.events_read = read
                mark = self._mark(row)
        self.n_events = self.n_learnt = n
        self.events_read = read
        if last is not None:
            self.last_time_raw = self._time_raw(last)

    def _bad_row(self, log, read, row) -> None:
        """Report a row the lean loop rejected, with the reason the careful parser
        gives (both accept exactly the same rows)."""
        try:
            self._parse_event(row)
        except RowError as exc:
            self._bad(log.line(read), str(exc))
            self.events_read = read
            return
        message = f"row {row!r} rejected by the fast path only"  # pragma: no cover
        raise AssertionError(message)  # pragma: no cover

    def _run_general(self, log, keys) -> None:
        parse = self._parse_event
        delay = self.delay
        predicts = [
            None if n == "raw" else self.cals[n].predict_one for n in self.names
        ]
        score_learn = self._score_learn
        heap = self.heap
        pending = self.pending
        early = self.early
        push = heapq.heappush
        mark = self.next_mark
        last = None
        read = start = self.events_read
        for read, row in enumerate(log.rows, start + 1):
            try:
                s, y, t, lt, eid = parse(row)
            except RowError as exc:
                self.events_read = read - 1
                self._bad(log.line(read), str(exc))
                self.events_read = read
                continue
            if delay is not None:
                # Labels known at t are revealed even if the row then proves malformed
                # (a duplicate id): the next event, at a time >= t, would reveal them
                # first anyway, in the same order.
                self.events_read = read - 1  # in case a label record stops the run
                self._release(t)
                if delay == "id" and eid in pending:
                    self._bad(
                        log.line(read),
                        f"duplicate id {_rows.short_repr(eid)} (column {self.id!r}): an event "
                        "with this id is still waiting for its label",
                    )
                    self.events_read = read
                    continue
                self.last_time = t
            preds = [s if f is None else f(s) for f in predicts]
            index = self.n_events
            self.n_events = index + 1
            if delay is None:
                score_learn(index, s, y, preds)
            elif delay == "time":
                push(heap, (lt, index, s, y, preds))
                if lt <= t:  # known already: learnt now, before the next event
                    self._release(t)
            elif eid in early:  # its label came at its own time, before it was read
                score_learn(index, s, early.pop(eid)[1], preds)
            else:
                pending[eid] = (index, s, preds)
            self.events_read = read
            last = row
            if index == 0:
                self._first_event(row)
            if index + 1 == mark:
                mark = self._mark(row)
        self.events_read = read
        if last is not None:
            self.last_time_raw = self._time_raw(last)

    def _score_learn(self, index, s, y, preds) -> None:
        """Score the stored predictions of event ``index`` against its label ``y``,
        then let each calibrator learn ``(s, y)``."""
        for name, p in zip(self.names, preds):
            for m in self.metrics[name].values():
                m.update(y, p)
        if self.wmetrics is not None:
            buf = self.wbuf
            buf.append((y, preds))
            old = buf.popleft() if len(buf) > self.window else None
            revert = self.wrevert
            for i, (name, p) in enumerate(zip(self.names, preds)):
                for k, m in self.wmetrics[name].items():
                    m.update(y, p)
                    if old is not None and revert[k]:
                        m.revert(old[0], old[1][i])
        for name, cal in self.cals.items():
            cal.learn_one(s, y)
        if self.forecasts is not None:
            f = self.forecasts
            f["index"].append(index)
            f["label"].append(y)
            for name, p in zip(self.names, preds):
                f[name].append(p)
        self.n_learnt += 1

    def _release(self, t) -> None:
        """Reveal, score and learn every label known at time ``t``."""
        if self.delay == "time":
            heap = self.heap
            pop = heapq.heappop
            while heap and heap[0][0] <= t:
                _, index, s, y, preds = pop(heap)
                self._score_learn(index, s, y, preds)
            return
        pending, early = self.pending, self.early
        if early:  # labels kept for an event of their time that did not come
            for eid in [e for e, (lt, _, _) in early.items() if lt < t]:
                _, _, line = early.pop(eid)
                self._bad(line, self._no_match(eid), "labels")
        while self.next_label is not None and self.next_label[0] <= t:
            lt, eid, y, line = self.next_label
            entry = pending.pop(eid, None)
            if entry is not None:
                index, s, preds = entry
                self._score_learn(index, s, y, preds)
            elif lt == t and eid not in early:
                # an event of this id may still come at time t (the events of one time
                # are read one by one): keep the label until the time moves on
                early[eid] = (lt, y, line)
            else:
                self._bad(line, self._no_match(eid), "labels")
            self.last_label_time = lt
            self.labels_read += 1
            self._read_next_label()

    def _no_match(self, eid) -> str:
        return (
            f"the id {_rows.short_repr(eid)} (column {self.id!r}) matches no event waiting "
            "for its label (an unknown id, a second label, or a label earlier than its "
            "event)"
        )

    def _read_next_label(self) -> None:
        """Read ahead the next valid label record (recording the malformed ones)."""
        log = self.label_log
        parse = self._parse_label_record
        self.next_label = None
        for row in log.rows:
            try:
                lt, eid, y = parse(row)
            except RowError as exc:
                self._bad(log.line(self.labels_read + 1), str(exc), "labels")
                self.labels_read += 1
                continue
            self.next_label = (lt, eid, y, log.line(self.labels_read + 1))
            return

    def _finish(self) -> None:
        """The end of the log: reveal the pending labels, take the last sample."""
        if self.delay == "time":
            self._release(math.inf)
        elif self.delay == "id":
            self._release(math.inf)
            self.n_unlabelled = len(self.pending)
            self.pending = {}
        self._sample()
        n = self.n_events
        if self.progress is not None and not (self.every and n and n % self.every == 0):
            self.progress(n)

    def _result(self) -> ReplayResult:
        summary = {}
        metrics = {}
        for name in self.names:
            values = {}
            for k, m in self.metrics[name].items():
                _values(m, k, values)
            metrics[name] = dict(self.metrics[name])
            if self.wmetrics is not None:
                for k, m in self.wmetrics[name].items():
                    _values(m, k, values, WINDOW_SUFFIX)
                for k, m in self.wmetrics[name].items():
                    metrics[name][k + WINDOW_SUFFIX] = m
            summary[name] = values
        return ReplayResult(
            summary=summary,
            series=self.series,
            n_events=self.n_events,
            n_learnt=self.n_learnt,
            n_skipped=self.n_skipped,
            n_unlabelled=self.n_unlabelled,
            errors=self.errors,
            calibrators=dict(self.cals),
            metrics=metrics,
            forecasts=self.forecasts,
            columns=_columns(self.templates, self.window),
            time_range=(
                (self.first_time_raw, self.last_time_raw)
                if "time" in self.series
                and self.n_events
                and self.first_time_raw is not None
                else None
            ),
        )

    # ------------------------------------------------------------------ checkpoints

    def _encode(self, x):
        """A score, label or prediction as JSON data (multiclass: a class is its index
        in ``classes``; a dict of probabilities the list of its ``[class index, p]``
        pairs in its own order, which decides ties)."""
        if not self.multiclass:
            return x
        index = self._class_index
        if isinstance(x, dict):
            try:
                return [[index[c], p] for c, p in x.items()]
            except KeyError as exc:
                raise ValueError(
                    f"Cannot checkpoint a forecast of the class {exc.args[0]!r}, which is "
                    "not among the log's classes."
                ) from None
        return index[x]

    def _decode(self, x):
        if not self.multiclass:
            return x
        if isinstance(x, list):
            return {self.classes[i]: p for i, p in x}
        return self.classes[x]

    def _state(self) -> dict:
        enc = self._encode
        forecasts = None
        if self.forecasts is not None:
            forecasts = {
                k: (v if k == "index" else [enc(x) for x in v])
                for k, v in self.forecasts.items()
            }
        return {
            "format": CHECKPOINT_FORMAT,
            "config": self.config,
            "n_events": self.n_events,
            "n_learnt": self.n_learnt,
            "n_skipped": self.n_skipped,
            "errors": [list(e) for e in self.errors],
            "events_read": self.events_read,
            "labels_read": self.labels_read,
            "last_time": self.last_time if self.last_time > -math.inf else None,
            "last_label_time": self.last_label_time
            if self.last_label_time > -math.inf
            else None,
            "last_time_raw": self.last_time_raw,
            "first_time_raw": self.first_time_raw,
            "calibrators": {n: cal.to_dict() for n, cal in self.cals.items()},
            "metrics": {
                n: {k: m.to_dict() for k, m in ms.items()}
                for n, ms in self.metrics.items()
            },
            "window": None
            if self.wmetrics is None
            else {
                "metrics": {
                    n: {k: m.to_dict() for k, m in ms.items()}
                    for n, ms in self.wmetrics.items()
                },
                "events": [[enc(y), [enc(p) for p in preds]] for y, preds in self.wbuf],
            },
            "heap": [
                [lt, i, enc(s), enc(y), [enc(p) for p in preds]]
                for lt, i, s, y, preds in self.heap
            ],
            "pending": [
                [eid, i, enc(s), [enc(p) for p in preds]]
                for eid, (i, s, preds) in self.pending.items()
            ],
            "early": [
                [eid, lt, enc(y), line] for eid, (lt, y, line) in self.early.items()
            ],
            "series": {
                k: (
                    v
                    if not isinstance(v, dict)
                    else {m: [list(tv) for tv in pairs] for m, pairs in v.items()}
                )
                for k, v in self.series.items()
            },
            "forecasts": forecasts,
        }

    def _save_checkpoint(self) -> None:
        path = self.checkpoint
        tmp = f"{path}.tmp{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(self._state(), f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)

    def _read_checkpoint(self) -> dict:
        """The saved state, if it was written by a replay with these settings."""
        with open(self.checkpoint, encoding="utf-8") as f:
            state = json.load(f)
        if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
            raise ValueError(
                f"{self.checkpoint!r} is not a replay checkpoint ({CHECKPOINT_FORMAT})."
            )
        saved = state["config"]
        differ = [
            k
            for k in sorted(set(saved) | set(self.config))
            if saved.get(k) != self.config.get(k)
        ]
        if differ:
            raise ValueError(
                f"The checkpoint {self.checkpoint!r} was written by a replay with other "
                f"settings ({', '.join(differ)} differ); resume with the same log, "
                "columns, calibrators and metrics."
            )
        return state

    def _restore(self, state: dict) -> None:
        """Take the state of a checkpoint (calibrators restored in place)."""
        dec = self._decode
        for name, cal in list(self.cals.items()):
            self.cals[name] = _restore_in_place(cal, state["calibrators"][name])
        self.metrics = {
            n: {k: StreamingMetric.from_dict(d) for k, d in ms.items()}
            for n, ms in state["metrics"].items()
        }
        if self.wmetrics is not None:
            w = state["window"]
            self.wmetrics = {
                n: {k: StreamingMetric.from_dict(d) for k, d in ms.items()}
                for n, ms in w["metrics"].items()
            }
            self.wbuf = collections.deque(
                (dec(y), [dec(p) for p in preds]) for y, preds in w["events"]
            )
        self.heap = [
            (lt, i, dec(s), dec(y), [dec(p) for p in preds])
            for lt, i, s, y, preds in state["heap"]
        ]
        # ids are compared as text (checkpoints of earlier versions kept integer ids)
        self.pending = {
            parse_id(eid, self.id): (i, dec(s), [dec(p) for p in preds])
            for eid, i, s, preds in state["pending"]
        }
        self.early = {
            parse_id(eid, self.id): (lt, dec(y), line)
            for eid, lt, y, line in state["early"]
        }
        self.n_events = state["n_events"]
        self.n_learnt = state["n_learnt"]
        self.n_skipped = state["n_skipped"]
        self.errors = [tuple(e) for e in state["errors"]]
        self.events_read = state["events_read"]
        self.labels_read = state["labels_read"]
        lt = state["last_time"]
        self.last_time = -math.inf if lt is None else lt
        lt = state["last_label_time"]
        self.last_label_time = -math.inf if lt is None else lt
        self.last_time_raw = state["last_time_raw"]
        # checkpoints of earlier versions did not keep it: the time range is then unknown
        self.first_time_raw = state.get("first_time_raw")
        self.series = {
            k: (
                v
                if not isinstance(v, dict)
                else {m: [tuple(tv) for tv in pairs] for m, pairs in v.items()}
            )
            for k, v in state["series"].items()
        }
        if state["forecasts"] is not None:
            self.forecasts = {
                k: (v if k == "index" else [dec(x) for x in v])
                for k, v in state["forecasts"].items()
            }

