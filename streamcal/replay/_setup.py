"""What both replay engines share: the arguments checked, the calibrators and metrics
set up, the configuration a checkpoint records, the run's outline (open the logs,
resume, replay the rows, finish), sampling, malformed rows, the result, and restoring
the state of a checkpoint.

:class:`ReplayRun` holds all of it; the columnar engine
(:mod:`streamcal.replay._engine`, the one :func:`streamcal.replay` runs) and the
per-event test oracle (``tests/references_replay.py``) subclass it and add their loops.
"""

from __future__ import annotations

import collections
import heapq
import json
import math
import os
import time

from streamcal import _validation as V
from streamcal.base import BinaryCalibrator
from streamcal.metrics.base import StreamingMetric
from streamcal.replay import _readers, _rows
from streamcal.replay._checkpoint import (
    Codec,
    document,
    read_checkpoint,
    remove_partial_writes,
    same_file,
    seal,
    strip_state,
    write_atomic,
)
from streamcal.replay._errors import ReplayError
from streamcal.replay._metrics import (
    WINDOW_SUFFIX,
    _columns,
    _resolve_metrics,
    _values,
    _windowed,
)
from streamcal.replay._result import ReplayResult
from streamcal.replay._rows import RowParser, parse_id
from streamcal.replay._schedule import Schedule

__all__ = ["ReplayRun"]


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




class ReplayRun:
    """One replay run: its configuration and state (see :func:`streamcal.replay`); the
    loops are the subclasses'."""

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
        stop=None,
        checkpoint_share=None,
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
        if checkpoint_share is not None:
            checkpoint_share = V.check_real(
                checkpoint_share,
                "replay",
                "checkpoint_share",
                lambda x: 0 < x <= 1,
                "None or a real number in (0, 1]",
            )
        # None: write at every checkpoint_every events; else also wait, after a write
        # that took d seconds, d * (1 - share) / share seconds
        self.checkpoint_share = checkpoint_share
        self._write_end = None  # perf_counter at the end of the last periodic write
        self._write_cost = 0.0  # how long it took
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
        self.last_time = -math.inf
        self.schedule = Schedule(self.delay, self._reveal, self._bad_label, id)
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
        self.config = None
        self.stop = stop
        self.stopped = False
        self.codec = Codec(self.classes)
        self._cleaned = False

    # ------------------------------------------------------------------ configuration

    def _config(self) -> dict:
        cals = {}
        for name, cal in self.cals.items():
            if callable(getattr(cal, "to_dict", None)):
                cals[name] = strip_state(cal.to_dict())
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
                k: strip_state(m.to_dict()) for k, m in self.templates.items()
            },
        }

    # ------------------------------------------------------------------ run

    def run(self, events) -> ReplayResult:
        """Replay ``events`` (see :func:`streamcal.replay`): open the logs, resume from
        the checkpoint when asked, run :meth:`_run_rows`, save the last checkpoint,
        finish."""
        if self.checkpoint is not None:  # before anything is read or written
            for what, source in (("events", events), ("labels", self.labels_source)):
                if (
                    isinstance(source, (str, os.PathLike))
                    and not _readers.is_stdin(source)
                    and same_file(self.checkpoint, os.fspath(source))
                ):
                    raise ValueError(
                        f"The 'checkpoint' argument of replay must be another file than "
                        f"the {what} log; got {self.checkpoint!r}, which is "
                        f"{os.fspath(source)!r}: writing it would overwrite the log."
                    )
        config = self._config() if self.checkpoint is not None else None
        self.config = json.loads(json.dumps(config))  # as it reads back from the file
        saved = None
        if self.resume and os.path.exists(self.checkpoint):
            saved = read_checkpoint(
                self.checkpoint, self.config, labels=self.delay == "id"
            )
        if _readers.is_stdin(events) and _readers.is_stdin(self.labels_source):
            raise ValueError(
                "The events and the label records cannot both be read from standard "
                "input ('-')."
            )
        self.source = events
        self.log = log = _readers.open_log(
            events, "events", format=self.format, delimiter=self.delimiter
        )
        try:
            keys = self._resolve_keys(log)
            if self.delay == "id":
                self.label_log = _readers.open_log(self.labels_source, "labels")
                self._resolve_label_keys(self.label_log)
            if saved is not None:  # nothing changes before the log is known to fit
                self._skip_read(saved)
                self._restore(saved)
            if self.delay == "id":
                self.schedule.read_next_label()
            self.next_mark = self._next_mark()
            self._run_rows(log, keys)
            if self.checkpoint is not None:
                self._save_checkpoint()
            self._finish()
        finally:
            log.close()
            if self.label_log is not None:
                self.label_log.close()
        return self._result()

    def _run_rows(self, log, keys) -> None:  # pragma: no cover - abstract
        """Replay the rows of ``log`` from the current position (each engine's loop)."""
        raise NotImplementedError

    def _finish(self) -> None:  # pragma: no cover - abstract
        """The end of the log (or a stop): the pending labels, the last sample."""
        raise NotImplementedError

    def _reveal(self, index, s, y, preds) -> None:  # pragma: no cover - abstract
        """The schedule reveals the label ``y`` of event ``index``: score its
        predictions ``preds``, then learn ``(s, y)``."""
        raise NotImplementedError

    def _bad_label(self, line, reason) -> None:
        self._bad(line, reason, "labels")

    def _resolve_keys(self, log):
        self.parser = self._row_parser(log)
        self.score_keys = self.parser.score_keys
        self.keys = self.parser.keys
        return self.keys

    def _resolve_label_keys(self, log):
        self.parser = self._row_parser(self.log, log)
        self.schedule.open_labels(log, self.parser.parse_label_record)

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

    def _skip_read(self, saved: dict) -> None:
        """Skip the rows the checkpoint ``saved`` has replayed (ValueError if there are
        fewer)."""
        events_read, labels_read = saved["events_read"], saved["labels_read"]
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

    def _first_event(self, row) -> None:
        """Note the time of the first event replayed (``row``): the start of
        ``ReplayResult.time_range``."""
        self.first_time_raw = self._time_raw(row)

    def _mark(self, row) -> int:
        """Sample, report progress, checkpoint, as due after ``n_events`` events."""
        n = self.n_events
        self.last_time_raw = self._time_raw(row)
        if self.every is not None and n % self.every == 0:
            self._sample()
            if self.progress is not None:
                self.progress(n)
        if self.checkpoint is not None and n % self.checkpoint_every == 0:
            self._periodic_checkpoint()
        return self._next_mark()

    def _periodic_checkpoint(self) -> None:
        """The checkpoint due every ``checkpoint_every`` events: written, unless
        ``checkpoint_share`` is set and the time since the last periodic write is less
        than that write's duration times ``(1 - share) / share`` (so that writing
        takes at most about that share of the run, however the state grows). Which
        marks are written changes nothing else: the results do not depend on it."""
        share = self.checkpoint_share
        start = time.perf_counter()
        if share is not None and self._write_end is not None:
            if start - self._write_end < self._write_cost * (1 - share) / share:
                return
        self._save_checkpoint()
        self._write_end = time.perf_counter()
        self._write_cost = self._write_end - start

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

    # ------------------------------------------------------------------ the result

    def _result(self) -> ReplayResult:
        """The :class:`ReplayResult` of the run so far."""
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
            n_rows=self.events_read + self.schedule.labels_read,
            errors=self.errors,
            calibrators=dict(self.cals),
            metrics=metrics,
            forecasts=self.forecasts,
            stopped=self.stopped,
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

    def _fingerprint(self):
        """The fingerprint of the rows consumed, kept in the checkpoint (None: none)."""
        return None

    def _state(self) -> dict:
        """The checkpoint document of the current state."""
        return document(self, self.codec, self._fingerprint())

    def _save_checkpoint(self) -> None:
        if not self._cleaned:  # what writes killed midway left, once per run
            remove_partial_writes(self.checkpoint)
            self._cleaned = True
        write_atomic(self.checkpoint, seal(self._state()))

    def _restore(self, state: dict) -> None:
        """Take the state of a checkpoint (calibrators restored in place)."""
        dec = self.codec.decode
        schedule = self.schedule
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
        schedule.heap = [
            (lt, i, dec(s), dec(y), [dec(p) for p in preds])
            for lt, i, s, y, preds in state["heap"]
        ]
        heapq.heapify(schedule.heap)  # a no-op on the heaps checkpoints hold
        # ids are compared as text (checkpoints of earlier versions kept integer ids)
        schedule.pending = {
            parse_id(eid, self.id): (i, dec(s), [dec(p) for p in preds])
            for eid, i, s, preds in state["pending"]
        }
        schedule.early = {
            parse_id(eid, self.id): (lt, dec(y), line)
            for eid, lt, y, line in state["early"]
        }
        self.n_events = state["n_events"]
        self.n_learnt = state["n_learnt"]
        self.n_skipped = state["n_skipped"]
        self.errors = [tuple(e) for e in state["errors"]]
        self.events_read = state["events_read"]
        schedule.labels_read = state["labels_read"]
        lt = state["last_time"]
        self.last_time = -math.inf if lt is None else lt
        lt = state["last_label_time"]
        schedule.last_label_time = -math.inf if lt is None else lt
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

