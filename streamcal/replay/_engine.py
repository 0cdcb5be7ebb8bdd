"""The columnar replay engine: the log read in chunks, each calibrator run once per run
of events.

The per-event protocol (see :func:`streamcal.replay`) is a sequence of operations:
*predict* event ``i`` (every calibrator, with the labels known so far) and *reveal* the
label of event ``j`` (score the predictions stored for ``j``, then learn ``j``). This
engine records that sequence and executes it a stretch at a time
(:mod:`streamcal.replay._ops`): each calibrator runs the whole stretch in one call,
independently of the others, its maximal runs as batch calls:

- a run of events each predicted and then revealed at once (labels known at once, or a
  label time not after the event's) is one ``predict_learn_many`` call;
- a run of predictions with no reveal between them is one ``predict_many`` call;
- a run of reveals is one ``learn_many`` call;
- runs shorter than ``SHORT_RUN`` events (delayed labels interleave predictions and
  reveals one by one) go together into one ``predict_reveal_many`` call;

then the metrics take the stretch's reveals, in order, with one ``update_many`` call
each. These batch calls return exactly the floats of the per-event loop and leave
exactly its state (the shared checks ``check_predict_learn_many_matches_loop`` and
``check_update_many_matches_update`` test every calibrator and metric), so the results,
the series and the checkpoints are the per-event protocol's, bit for bit, whatever the
chunk size. Stretches end where the protocol samples the metrics, reports progress or
writes a checkpoint, so that each of these sees the state after exactly that event.

Binary logs with labels known at once are parsed a chunk at a time (one ``float`` per
score, a dict lookup per label, and a numpy check of the chunk); a chunk holding a
malformed row is parsed row by row, so each malformed row is reported with its line and
reason exactly as the row parser words it. With pyarrow installed, CSV, JSON Lines and
Parquet files are read as columns a block at a time instead
(:mod:`streamcal.replay._fastcsv`, :mod:`streamcal.replay._fastblocks`), a block that is
not plain going through the row path; a resume skips the rows already replayed with
the same block reader and goes on with it. Binary logs with delayed labels are parsed a
chunk at a time too (:meth:`RowParser.parse_events_at_once`); with a label-time column,
the schedule of reveals (:mod:`streamcal.replay._schedule`) then takes a chunk's events
at once (:meth:`Schedule.events_at_once`), and with label records joined by id it takes
them one by one. Multiclass logs, and chunks holding a malformed row, are parsed row by
row.

Calibrators side by side. The calibrators are independent, so when a stretch holds
``POOL_RUN`` events or more, in long batch runs or with a calibrator whose loops release
the GIL (``releases_gil``), each calibrator's part of it goes to a pool
of threads (``threads``: by default one per CPU available to the process, at most one
per calibrator), and the engine waits for all of them before it scores the stretch.
The isotonic family's compiled loops release the GIL, so several run at once on
several cores; the results are the same floats as one after another, since each
calibrator sees the same calls in the same order. Calibrators that share state (are,
or hold, the same object: :mod:`streamcal.replay._sharing`) leave the batch passes:
with the calibrators that have none, they run event by event in one loop, every one
predicting an event before any learns it.
"""

from __future__ import annotations

import bisect
import contextlib
import gc
import itertools
import os
from concurrent.futures import ThreadPoolExecutor, wait

import numpy as np

from streamcal import _validation as V
from streamcal.base import BinaryCalibrator
from streamcal.metrics import update_many_each
from streamcal.replay._checkpoint import RowFingerprint
from streamcal.replay._fastblocks import open_fast_blocks
from streamcal.replay._fastcsv import open_fast_csv
from streamcal.replay._ops import (
    PREDICT,
    PREDICT_REVEAL,
    REVEAL,
    OperationRuns,
    execute,
    execute_jointly,
)
from streamcal.replay._readahead import ReadAhead
from streamcal.replay._rows import RowError, binary_columns_at_once
from streamcal.replay._setup import ReplayRun
from streamcal.replay._sharing import sharing_names

__all__ = ["ColumnarReplay"]

#: Rows read and parsed at a time.
CHUNK_ROWS = 65536
#: Runs shorter than this are merged with their neighbours into one
#: ``predict_reveal_many`` call: a batch call costs a few microseconds of array
#: conversion, which a run of one or two events does not repay (delayed labels
#: interleave predictions and reveals one by one). All give the same floats (the
#: shared checks).
SHORT_RUN = 8
#: Stretches with fewer events than this run their calibrators one after another even
#: with a pool of threads: handing work to the pool and waiting costs tens of
#: microseconds.
POOL_RUN = 256
#: With a ``stop`` hook, it is polled at least every this many events (and the work
#: done between two polls is at most this many events through every calibrator and
#: metric, plus the reading and parsing of one chunk): a Ctrl-C takes effect within a
#: bounded, small amount of work, on an event boundary where the state is consistent
#: (the one a checkpoint would save at a sample).
STOP_EVENTS = 8192
#: Blocks of the fast readers (pyarrow) read, parsed and checked ahead in a thread while
#: the calibrators run over the current one (:class:`ReadAhead`); 0: in the engine's
#: thread. The same blocks in the same order either way.
READ_AHEAD = 1



class ColumnarReplay(ReplayRun):
    """A replay run executed a run of events at a time (see the module docstring)."""

    chunk_rows = CHUNK_ROWS

    def __init__(self, *args, threads=None, **kwargs):
        threads = V.check_int(threads, "replay", "threads", minimum=1, allow_none=True)
        super().__init__(*args, **kwargs)
        self.threads = threads
        self._pool = None
        self.ops = []
        self.hash = RowFingerprint() if self.checkpoint else None
        # batch paths of each calibrator (None: run event by event)
        self.batch = {
            name: isinstance(cal, BinaryCalibrator) and not self.multiclass
            for name, cal in self.cals.items()
        }

    # ------------------------------------------------------------------ fingerprint

    def _hash_rows(self, rows) -> None:
        if self.hash is not None:
            self.hash.update(rows)

    # ------------------------------------------------------------------ executing runs

    def _score_run(self, indices, labels, preds_by_name) -> None:
        """Score a run of revealed events: the metrics, the window, the forecasts."""
        batch = not self.multiclass and len(labels) >= SHORT_RUN
        batches = []  # the metrics' batch calls: the labels and each column checked once
        for name, preds in zip(self.names, preds_by_name):
            array = None
            for m in self.metrics[name].values():
                if batch and hasattr(m, "update_many"):
                    if array is None:
                        array = np.asarray(preds, dtype=np.float64)
                    batches.append((m, array))
                else:
                    update = m.update
                    for yi, pi in zip(labels, preds):
                        update(yi, pi)
        if batches:
            update_many_each(batches, np.asarray(labels, dtype=np.float64))
        if self.wmetrics is not None:
            buf, window, revert = self.wbuf, self.window, self.wrevert
            names = self.names
            for k, yi in enumerate(labels):
                preds = [column[k] for column in preds_by_name]
                buf.append((yi, preds))
                old = buf.popleft() if len(buf) > window else None
                for i, name in enumerate(names):
                    p = preds[i]
                    for key, m in self.wmetrics[name].items():
                        m.update(yi, p)
                        if old is not None and revert[key]:
                            m.revert(old[0], old[1][i])
        if self.forecasts is not None:
            f = self.forecasts
            f["index"].extend(indices)
            f["label"].extend(labels)
            for name, preds in zip(self.names, preds_by_name):
                f[name].extend(preds)
        self.n_learnt += len(labels)

    def run(self, events):
        try:
            return super().run(events)
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None

    def _pool_for(self, count: int, n_events: int):
        """The pool running the batch calls of ``count`` calibrators over a run of
        ``n_events`` side by side, or None when they run one after another (fewer than
        two of them, a run shorter than ``POOL_RUN``, or one thread allowed or
        available). Calibrators sharing state never get here (:meth:`_run_rows`)."""
        if count < 2 or n_events < POOL_RUN:
            return None
        if self._pool is None:
            n = self.threads
            if n is None:
                try:
                    n = len(os.sched_getaffinity(0))
                except (AttributeError, OSError):  # not on Linux
                    n = os.cpu_count() or 1
            n = min(n, sum(self.batch.values()))
            if n < 2:
                return None
            self._pool = ThreadPoolExecutor(n, thread_name_prefix="streamcal-replay")
        return self._pool

    def _predict_learn_run(self, indices, scores, labels, as_lists=True) -> list:
        """A run of events each predicted then learnt at once: one prequential pass per
        calibrator (side by side in threads, see the module docstring). Returns the
        predictions per name: lists of floats, or with ``as_lists`` False, the batch
        calls' arrays as they are (the metrics take arrays; a list per chunk and
        calibrator cost about as much as the metrics)."""
        out = []
        short = len(scores) < SHORT_RUN
        batched = [] if short else [n for n in self.names if n != "raw" and self.batch[n]]
        done = self._batch_calls(batched, "predict_learn_many", scores, labels)
        singles = self._event_by_event(
            [n for n in self.names if n != "raw" and n not in batched],
            ((PREDICT_REVEAL, s, y) for s, y in zip(scores, labels)),
        )
        for name in self.names:
            if name == "raw":
                out.append(scores)
            elif name in done:
                out.append(done[name].tolist() if as_lists else done[name])
            else:
                out.append(singles[name])
        self._score_run(indices, labels, out)
        return out

    def _event_by_event(self, names: list, entries) -> dict:
        """The calibrators ``names`` (those without batch passes, or sharing state)
        over flat ``entries`` (:func:`execute_jointly`) in one loop. Returns the
        predictions per name."""
        if not names:
            return {}
        columns = execute_jointly(
            [self.cals[n] for n in names], entries, lambda k, exc: _note_calibrator(exc, names[k])
        )
        return dict(zip(names, columns))

    def _batch_calls(self, names: list, method: str, *args) -> dict:
        """``method(*args)`` of each calibrator of ``names`` (a batch pass over a run,
        the arguments as float64 arrays): see :meth:`_each`."""
        args = [np.asarray(a, dtype=np.float64) for a in args]
        return self._each(names, lambda cal: getattr(cal, method)(*args), len(args[0]) if args else 0)

    def _each(self, names: list, call, n_events: int) -> dict:
        """``call(calibrator)`` for each calibrator of ``names``, work over
        ``n_events`` in compiled batch passes: side by side in threads when there are
        enough of them (:meth:`_pool_for`), else one after another. Returns the results
        per name; an error names the calibrator that raised it (a note, from Python
        3.11)."""
        if not names:
            return {}
        pool = self._pool_for(len(names), n_events)
        if pool is not None:
            futures = [pool.submit(call, self.cals[n]) for n in names]
            return dict(zip(names, _results(futures, names)))
        done = {}
        for name in names:
            with _raised_by(name):
                done[name] = call(self.cals[name])
        return done

    def _flush(self) -> None:
        """Execute the recorded operations: each calibrator runs the whole sequence
        (:mod:`streamcal.replay._ops`; those without batch passes, or sharing state,
        together event by event), then the reveals are scored in their order."""
        ops = self.ops
        if not ops:
            return
        self.ops = []
        batched = [n for n in self.names if n != "raw" and self.batch[n]]
        runs = OperationRuns(ops, SHORT_RUN if batched else None)
        # side by side in threads when that can use several cores: long batch runs, or
        # a calibrator whose loops release the GIL (else the flat loops would contend)
        releasing = runs.n_batched >= POOL_RUN or any(self.cals[n].releases_gil for n in batched)
        columns = self._each(batched, lambda cal: execute(cal, runs), len(ops) if releasing else 0)
        columns.update(
            self._event_by_event([n for n in self.names if n != "raw" and n not in columns], runs.flat())
        )
        slots = runs.pred_slots
        for i_name, name in enumerate(self.names):
            for slot, p in zip(slots, runs.pred_scores if name == "raw" else columns[name]):
                slot[i_name] = p
        if runs.rev_index:
            preds_by_name = [[slot[k] for slot in runs.rev_slots] for k in range(len(self.names))]
            self._score_run(runs.rev_index, runs.rev_labels, preds_by_name)

    # ------------------------------------------------------------------ the protocol's hooks

    def _predicted(self, s) -> list:
        """Record the prediction of an event; its slot list is filled when the run is
        executed."""
        slot = [None] * len(self.names)
        self.ops.append((PREDICT, s, slot))
        return slot

    def _reveal(self, index, s, y, preds) -> None:
        """Record the reveal of event ``index`` (executed with its run)."""
        self.ops.append((REVEAL, index, s, y, preds))

    def _bad(self, line, reason, source="events") -> None:
        self._flush()  # the state before the row, for a checkpoint and the error
        super()._bad(line, reason, source)

    def _mark(self, row) -> int:
        self._flush()
        return super()._mark(row)

    def _finish(self) -> None:
        """The end of the log (or a stop): reveal the pending labels (not on a stop),
        take the last sample."""
        if not self.stopped:
            self.n_unlabelled = self.schedule.finish()
        self._flush()
        self._sample()
        n = self.n_events
        if self.progress is not None and not (self.every and n and n % self.every == 0):
            self.progress(n)

    # ------------------------------------------------------------------ the loops

    def _chunks(self, log):
        """Chunks of rows of the log, with the line number of each row (taken as it is
        read: a CSV reader knows only its current line); polls ``stop`` between them."""
        rows = log.rows
        size = self.chunk_rows
        line = log.line
        read = self.events_read
        while True:
            chunk, lines = [], []
            append, append_line = chunk.append, lines.append
            # a chunk is tens of thousands of new containers that all stay alive: the
            # cyclic collector would traverse them again and again (about a third of
            # the reading time); they hold no cycles
            collecting = gc.isenabled()
            gc.disable()
            try:
                for row in itertools.islice(rows, size):
                    read += 1
                    append(row)
                    append_line(line(read))
            finally:
                if collecting:
                    gc.enable()
            if not chunk:
                return
            self._lines = lines
            yield chunk
            if self._poll_stop():
                return

    def _run_rows(self, log, keys) -> None:
        # calibrators sharing state run event by event (after a resume's restore,
        # which may have given a calibrator new parts)
        for name in sharing_names(self.cals):
            self.batch[name] = False
        if self.delay is None and not self.multiclass:
            self._run_lean(log, keys)
        else:
            self._run_general(log, keys)

    def _run_general(self, log, keys) -> None:
        """Row-by-row parsing (delayed labels, multiclass), the schedule deciding the
        reveals, batched runs."""
        parse = self._parse_event
        delay = self.delay
        schedule = self.schedule
        release, event = schedule.release, schedule.event
        mark = self.next_mark
        last = None
        read = self.events_read
        predicted = self._predicted
        polling = self.stop is not None
        at_once = self.parser.parse_events_at_once
        for chunk in self._chunks(log):
            first = read + 1
            # a chunk of plain rows parsed a column at a time; else row by row
            parsed = at_once(chunk, self.last_time)
            if parsed is not None and delay == "time":
                self.next_mark = mark
                read = self._delayed_chunk(chunk, parsed, read)
                mark = self.next_mark
                last = chunk[read - first] if read >= first else last
                self._flush()
                if self.stopped:
                    break
                continue
            if parsed is not None:
                parsed = list(zip(*parsed))
            for row in chunk:
                if polling and read - first + 1 and (read - first + 1) % STOP_EVENTS == 0:
                    # every STOP_EVENTS rows: execute what was recorded, then ask
                    self._flush()
                    if self._poll_stop():
                        break
                read += 1
                if parsed is not None:
                    s, y, t, lt, eid = parsed[read - first]
                else:
                    try:
                        s, y, t, lt, eid = parse(row)
                    except RowError as exc:
                        self.events_read = read - 1
                        self._bad(self._lines[read - first], str(exc))
                        self._hash_rows((row,))
                        self.events_read = read
                        continue
                if delay is not None:
                    # labels known at t are revealed even if the row then proves
                    # malformed (a duplicate id): the next event, at a time >= t,
                    # would reveal them first anyway, in the same order
                    self.events_read = read - 1  # in case a label record stops the run
                    release(t)
                    duplicate = schedule.duplicate(eid) if delay == "id" else None
                    if duplicate is not None:
                        self._bad(self._lines[read - first], duplicate)
                        self._hash_rows((row,))
                        self.events_read = read
                        continue
                    self.last_time = t
                preds = predicted(s)
                index = self.n_events
                self.n_events = index + 1
                event(index, s, y, t, lt, eid, preds)
                self._hash_rows((row,))
                self.events_read = read
                last = row
                if index == 0:
                    self._first_event(row)
                if index + 1 == mark:
                    mark = self._mark(row)
            self._flush()
            if self.stopped:
                break
        self.events_read = read
        if last is not None:
            self.last_time_raw = self._time_raw(last)

    def _delayed_chunk(self, chunk, columns, read) -> int:
        """A chunk of plain rows of a log with a label-time column (``columns``:
        :meth:`RowParser.parse_events_at_once`), the schedule taking a segment of it at
        a time (:meth:`Schedule.events_at_once`); segments end where the row loop of
        :meth:`_run_general` would sample, checkpoint or poll ``stop``, leaving the
        same state there. Returns the rows read."""
        scores, labels, times, label_times, _ = columns
        m = len(chunk)
        mark = self.next_mark
        polling = self.stop is not None
        at_once = self.schedule.events_at_once
        start = 0
        while start < m:
            n = self.n_events
            stop = m if mark < 0 else min(m, start + (mark - n))
            if polling:
                stop = min(stop, (start // STOP_EVENTS + 1) * STOP_EVENTS)
            at_once(n, scores[start:stop], labels[start:stop], times[start:stop],
                    label_times[start:stop], self._predicted)
            self._hash_rows(chunk[start:stop])
            if n == 0:
                self._first_event(chunk[start])
            self.n_events = n + stop - start
            self.events_read = read + stop
            self.last_time = times[stop - 1]
            if self.n_events == mark:
                mark = self._mark(chunk[stop - 1])
            start = stop
            if polling and start < m and start % STOP_EVENTS == 0:
                self._flush()
                if self._poll_stop():
                    break
        self.next_mark = mark
        return read + start

    def _run_lean(self, log, keys) -> None:
        """Binary log, labels known at once: chunks parsed at once (plain CSV blocks by
        pyarrow when it is installed), one prequential pass per calibrator and segment
        (a segment ends where the protocol samples, checkpoints, or, with
        ``on_error="raise"``, meets a malformed row)."""
        self._keys_lean = (keys["score"], keys["label"])
        fast, blocks = self._fast, self._fast_blocks  # opened by a resume's skip
        if fast is None and self.events_read == 0:
            fast = self._open_fast(log)
            blocks = None if fast is None else fast.blocks(self._row_chunk)
        if fast is not None:
            tail, self._fast_tail = self._fast_tail, None
            if tail is not None:
                blocks = itertools.chain((tail,), blocks)
            # the next block is read, parsed and checked in a thread while the
            # calibrators' compiled passes (without the GIL) run over this one
            ahead = ReadAhead(blocks, READ_AHEAD) if READ_AHEAD else None
            try:
                for block in blocks if ahead is None else ahead:
                    self._lean_chunk(block, log)
                    if self._poll_stop():
                        break
                if ahead is not None:
                    ahead.close()  # before fast.done is read: the reader has stopped
                if fast.done or self.stopped:
                    self.last_time_raw = self._time_raw_of(self._last_row)
                    return
                rest = fast.rows_read
            finally:
                if ahead is not None:
                    ahead.close()  # the thread stops before its file is closed
                fast.close()
                self._fast = self._fast_blocks = None
            # the first block that is not plain: the row reader from its first row on
            for _ in itertools.islice(log.rows, rest):
                pass
        for chunk in self._chunks(log):
            self._lean_chunk(self._row_chunk(chunk, self._lines), log)
            if self.stopped:
                break
        self.last_time_raw = self._time_raw_of(self._last_row)

    # set by a resume's skip (:meth:`_skip_fast`): the block reader, its iterator of
    # blocks, and the rest of the block the checkpoint fell in (or None)
    _fast = _fast_blocks = _fast_tail = None

    def _open_fast(self, log):
        """The pyarrow block reader of the log from its first row (CSV, else JSON Lines
        or Parquet), or None when the log is not such a file or pyarrow is missing."""
        fast = open_fast_csv(self.source, log, self.score_columns[0], self.label)
        if fast is None:
            fast = open_fast_blocks(self.source, log, self.score_columns[0], self.label)
        return fast

    def _row_chunk(self, rows, lines):
        """A chunk of rows read by the row reader's code (``lines``: their line
        numbers), parsed."""
        return _RowChunk(rows, lines, self, *self._keys_lean)

    def _poll_stop(self) -> bool:
        """Whether the replay is to stop here (asks the ``stop`` hook once)."""
        if self.stop is not None and not self.stopped and self.stop():
            self.stopped = True
        return self.stopped

    _last_row = None

    def _time_raw_of(self, row):
        return self.last_time_raw if row is None else self._time_raw(row)

    def _lean_chunk(self, chunk, log) -> None:
        """One chunk of a binary log with labels known at once."""
        mark = self.next_mark
        read = self.events_read
        raising = self.on_error == "raise"
        plain_lists = self.wmetrics is not None or self.forecasts is not None
        self._chunk = chunk
        self._hashed = 0
        scores, labels, rows_at, bad = chunk.scores, chunk.labels, chunk.rows_at, chunk.bad
        start = 0
        m = len(scores)
        polling = self.stop is not None
        while start < m:
            n = self.n_events
            stop = m if mark < 0 else min(m, start + (mark - n))
            if polling:
                stop = min(stop, start + STOP_EVENTS)
            if raising and bad:
                # the events before the first malformed row, then the row stops it
                first = bisect.bisect_left(rows_at, bad[0][0], start, stop)
                if first == start:
                    self._record_bad_rows(read, bad[0][0])
                stop = first
            end_row = rows_at[stop - 1]
            self._record_bad_rows(read, end_row)
            self._hash_upto(end_row)
            seg_s, seg_y = scores[start:stop], labels[start:stop]
            if plain_lists and isinstance(seg_s, np.ndarray):
                seg_s, seg_y = seg_s.tolist(), seg_y.astype(np.int64).tolist()
            self._predict_learn_run(range(n, n + stop - start), seg_s, seg_y, plain_lists)
            if n == 0 and stop > start:
                self._first_event(chunk.row(rows_at[start]))
            self.n_events = n + stop - start
            self.events_read = read + end_row
            start = stop
            if self.n_events == mark:
                self._last_row = chunk.row(end_row)
                mark = self._mark(self._last_row)
                self.next_mark = mark
            if polling and start < m and self._poll_stop():
                # stop after this segment: the rows after it are not consumed
                self._last_row = chunk.row(end_row)
                self.next_mark = mark
                return
        self._record_bad_rows(read, chunk.n_rows)
        self._hash_upto(chunk.n_rows)
        if m:
            self._last_row = chunk.row(rows_at[m - 1])
        self.next_mark = mark
        self.events_read = read + chunk.n_rows

    def _hash_upto(self, pos: int) -> None:
        """Hash the rows of the current chunk up to position ``pos`` (1-based)."""
        if self.hash is not None and self._hashed < pos:
            self.hash.update_bytes(self._chunk.fingerprint_bytes(self._hashed, pos))
        self._hashed = max(self._hashed, pos)

    _hashed = 0

    def _record_bad_rows(self, read, upto) -> None:
        """Report the malformed rows of the chunk at positions <= ``upto``."""
        bad = self._chunk.bad
        while bad and bad[0][0] <= upto:
            pos, reason = bad.pop(0)
            self.events_read = read + pos - 1
            self._hash_upto(pos - 1)
            self._bad(self._chunk.line(pos), reason)
            self._hash_upto(pos)
            self.events_read = read + pos

    # ------------------------------------------------------------------ checkpoints

    def _resolve_label_keys(self, log):
        """Open the label records for fingerprinting too: every row read is hashed, and
        the hash before the last row kept, since the record read ahead (the next label
        to reveal) is not yet consumed."""
        super()._resolve_label_keys(log)
        if self.hash is not None:
            self.label_hash = RowFingerprint()
            self._label_hash_before_last = self.label_hash.copy()
            self._label_rows_hashed = 0
            log.rows = self._hashed_label_rows(log.rows)

    def _hashed_label_rows(self, rows):
        for row in rows:
            self._label_hash_before_last = self.label_hash.copy()
            self.label_hash.update((row,))
            self._label_rows_hashed += 1
            yield row

    def _label_fingerprint(self, consumed: int) -> str:
        """The hash of the first ``consumed`` label records: all those read, or all but
        the last (read ahead, or being reported as malformed)."""
        if self._label_rows_hashed == consumed:
            return self.label_hash.hexdigest()
        assert self._label_rows_hashed == consumed + 1, (self._label_rows_hashed, consumed)
        return self._label_hash_before_last.hexdigest()

    def _fingerprint(self):
        if self.hash is None:
            return None
        out = {"rows": self.events_read, "blake2b": self.hash.hexdigest()}
        if self.label_log is not None:
            labels_read = self.schedule.labels_read
            out["label_rows"] = labels_read
            out["labels_blake2b"] = self._label_fingerprint(labels_read)
        return out

    def _skip_read(self, state: dict) -> None:
        """Skip the rows the checkpoint ``state`` has replayed, checking that they are
        the rows it replayed (their fingerprint: :func:`read_checkpoint` made sure it
        has one). A binary log with labels known at once is skipped with the pyarrow
        block reader when it reads the log (:meth:`_skip_fast`), which then goes on
        replaying it; else with the row reader."""
        events_read, labels_read = state["events_read"], state["labels_read"]
        saved = state.get("fingerprint")
        fast = None
        if self.delay is None and not self.multiclass and self.hash is not None:
            fast = self._open_fast(self.log)
        try:
            skipped = 0 if fast is None else self._skip_fast(fast, events_read)
            rows = []
            if self._fast is None:  # the row reader (from the rows the block reader gave)
                rows = list(itertools.islice(self.log.rows, events_read - skipped))
            if skipped + len(rows) < events_read:
                raise ValueError(
                    f"The log {self.log.name} has {skipped + len(rows)} rows, but the "
                    f"checkpoint {self.checkpoint!r} was written after {events_read}: it "
                    "belongs to another log."
                )
            self._hash_rows(rows)
            if saved is not None and self.hash is not None and (
                saved.get("rows") != events_read or saved.get("blake2b") != self.hash.hexdigest()
            ):
                raise ValueError(
                    f"The first {events_read} rows of {self.log.name} are not those the "
                    f"checkpoint {self.checkpoint!r} replayed (their fingerprint differs): "
                    "the log was edited, or it is another log. Resume with the same log, "
                    "or start again without --resume."
                )
        except BaseException:
            self._close_fast()
            raise
        super()._skip_read({"events_read": 0, "labels_read": labels_read})
        if saved is not None and self.hash is not None and self.label_log is not None:
            if (
                saved.get("label_rows") != labels_read
                or saved.get("labels_blake2b") != self._label_fingerprint(labels_read)
            ):
                raise ValueError(
                    f"The first {labels_read} label records of {self.label_log.name} are "
                    f"not those the checkpoint {self.checkpoint!r} replayed (their "
                    "fingerprint differs): the label file was edited, or it is another "
                    "file. Resume with the same label records, or start again without "
                    "--resume."
                )

    def _skip_fast(self, fast, events_read: int) -> int:
        """Skip (and hash) the first ``events_read`` rows with the block reader ``fast``
        (a resume); returns how many it skipped. The reader and its iterator of blocks
        are kept for :meth:`_run_lean`, with the rest of the block the checkpoint fell
        in the middle of. When the reader hands over to the row reader (a block that is
        not plain, or a last line without a newline) before that, it is closed and the
        row reader is moved past the rows it gave: the caller skips the rest."""
        self._keys_lean = (self.keys["score"], self.keys["label"])
        self._fast, self._fast_blocks = fast, fast.blocks(self._row_chunk)
        skipped = 0
        while skipped < events_read:
            block = next(self._fast_blocks, None)
            if block is None:
                break
            k = min(block.n_rows, events_read - skipped)
            self.hash.update_bytes(block.fingerprint_bytes(0, k))
            skipped += k
            if k < block.n_rows:
                self._fast_tail = _ChunkTail(block, k)
        if skipped < events_read and not fast.done:
            rest = fast.rows_read  # the rows the block reader gave
            self._close_fast()
            for _ in itertools.islice(self.log.rows, rest):
                pass
        return skipped

    def _close_fast(self) -> None:
        if self._fast is not None:
            self._fast.close()
        self._fast = self._fast_blocks = self._fast_tail = None


def _note_calibrator(exc: BaseException, name: str) -> None:
    """Add to ``exc`` a note naming the calibrator that raised it (Python 3.11+)."""
    add_note = getattr(exc, "add_note", None)
    if add_note is not None:
        add_note(f"(raised by the replay's calibrator {name!r})")


@contextlib.contextmanager
def _raised_by(name: str):
    """An error raised inside names the calibrator ``name``."""
    try:
        yield
    except Exception as exc:
        _note_calibrator(exc, name)
        raise


def _results(futures: list, names: list) -> list:
    """The results of ``futures`` (one per calibrator of ``names``) in order; returns or
    raises (the first error in that order, naming its calibrator) only once every one
    has finished, so that no calibrator is still learning in a worker when the caller
    goes on (after an error, or a second Ctrl-C during the wait: it waits on)."""
    try:
        out = []
        for future, name in zip(futures, names):
            with _raised_by(name):
                out.append(future.result())
        return out
    finally:
        while True:
            try:
                wait(futures)
                break
            except KeyboardInterrupt:
                continue


class _ChunkTail:
    """The rows of a parsed chunk (a plain block or a row chunk) after its first ``k``,
    with the same interface, positions counted from the first row kept."""

    def __init__(self, chunk, k: int):
        self._chunk, self._k = chunk, k
        self.n_rows = chunk.n_rows - k
        first = bisect.bisect_right(chunk.rows_at, k)
        self.scores = chunk.scores[first:]
        self.labels = chunk.labels[first:]
        self.rows_at = [pos - k for pos in chunk.rows_at[first:]]
        self.bad = [(pos - k, reason) for pos, reason in chunk.bad if pos > k]

    def line(self, pos: int) -> int:
        return self._chunk.line(pos + self._k)

    def row(self, pos: int):
        return self._chunk.row(pos + self._k)

    def fingerprint_bytes(self, a: int, b: int) -> bytes:
        return self._chunk.fingerprint_bytes(a + self._k, b + self._k)

class _RowChunk:
    """A chunk of rows from the row reader, parsed: the scores, labels and positions of
    its valid events and the malformed rows with their reasons. The rows are parsed a
    chunk at a time (one ``float`` per score, a dict lookup per label, a numpy range
    check); a chunk with a malformed row goes through the row parser row by row."""

    def __init__(self, rows, lines, replay, si, li):
        self.rows = rows
        self.lines = lines
        self.n_rows = len(rows)
        self.bad = []
        parsed = self._at_once(rows, si, li)
        if parsed is None:
            parsed = self._row_by_row(rows, replay)
        self.scores, self.labels, self.rows_at = parsed

    @staticmethod
    def _at_once(rows, si, li):
        columns = binary_columns_at_once(rows, si, li)
        return None if columns is None else (*columns, range(1, len(rows) + 1))

    def _row_by_row(self, rows, replay):
        parse = replay._parse_event
        scores, labels, rows_at = [], [], []
        for pos, row in enumerate(rows, 1):
            try:
                s, y, _, _, _ = parse(row)
            except RowError as exc:
                self.bad.append((pos, str(exc)))
                continue
            scores.append(s)
            labels.append(y)
            rows_at.append(pos)
        return scores, labels, rows_at

    def line(self, pos: int) -> int:
        return self.lines[pos - 1]

    def row(self, pos: int):
        return self.rows[pos - 1]

    def fingerprint_bytes(self, a: int, b: int) -> bytes:
        out = RowFingerprint.encode(self.rows[a:b])
        return out
