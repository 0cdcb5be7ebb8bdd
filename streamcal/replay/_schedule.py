"""The predict/reveal schedule of a replay: when each event's label becomes known.

A replay is a sequence of two operations: *predict* event ``i`` (every calibrator, with
the labels known so far) and *reveal* the label of event ``j`` (score the predictions
stored for ``j``, then learn it), in the spirit of river's ``stream.simulate_qa``. With
labels known at once, each event is revealed right after its prediction. With delayed
labels, a :class:`Schedule` decides when each label is revealed, from a label-time
column (way 1) or from label records joined to the events by id (way 2); the engine
only predicts the events in the order of the log and executes the reveals the schedule
hands it, so it holds no scheduling state of its own.

The rules (see :func:`streamcal.replay`, Notes): a label known at time ``L`` is
revealed before any event whose time is ``>= L`` is predicted; labels revealed at once
are taken in order of ``L``, then of the events (way 1), or in the order of the label
records (way 2); an event's own label is never known to its own prediction (revealed
right after it when ``L`` is not later than the event's time); way 2 keeps a label
record whose id is not waiting yet while events of its time may still come.
"""

from __future__ import annotations

import bisect
import heapq
import math

from streamcal.replay._rows import RowError, short_repr

__all__ = ["Schedule"]


class Schedule:
    """When each event's label is revealed (see the module docstring).

    Parameters
    ----------
    delay
        None (labels known at once), ``"time"`` (a label-time column) or ``"id"``
        (label records joined by id).
    reveal
        Called as ``reveal(index, score, label, payload)`` for each label revealed, in
        the order of the protocol (``payload``: what :meth:`event` was given with the
        event, its predictions).
    report
        Called as ``report(line, reason)`` for a malformed label record (way 2).
    id
        The id column, for messages (way 2).

    Attributes
    ----------
    heap
        Way 1: ``(label_time, index, score, label, payload)`` of the events waiting.
    pending
        Way 2: id -> ``(index, score, payload)`` of the events waiting.
    early
        Way 2: id -> ``(time, label, line)`` of label records read before their event,
        kept while events of their time may still come.
    next_label
        Way 2: the next valid label record, read ahead: ``(time, id, label, line)``.
    labels_read, last_label_time
        Way 2: label records read (and consumed) so far, and the time of the last one.

    Examples
    --------
    >>> done = []
    >>> schedule = Schedule("time", lambda i, s, y, payload: done.append(i), None)
    >>> for i, (t, lt) in enumerate([(0, 2), (1, 1), (2, 3)]):
    ...     schedule.release(t)
    ...     schedule.event(i, 0.5, 1, t, lt, None, None)
    >>> done  # event 1's label is known at its own time: revealed after its prediction
    [1, 0]
    >>> schedule.finish()  # events left without a label (way 2 only)
    0
    >>> done
    [1, 0, 2]

    """

    def __init__(self, delay, reveal, report, id=None):
        self.delay = delay
        self.reveal = reveal
        self.report = report
        self.id = id
        self.heap = []
        self.pending = {}
        self.early = {}
        self.next_label = None
        self.labels_read = 0
        self.last_label_time = -math.inf
        self._label_log = None
        self._parse_label = None

    def open_labels(self, log, parse) -> None:
        """Way 2: read the label records from ``log`` (a
        :class:`streamcal.replay._readers.Log`), each parsed by
        ``parse(row, last_label_time) -> (time, id, label)`` (or RowError)."""
        self._label_log = log
        self._parse_label = parse

    def read_next_label(self) -> None:
        """Way 2: read ahead the next valid label record (reporting the malformed ones)."""
        log = self._label_log
        self.next_label = None
        for row in log.rows:
            try:
                lt, eid, y = self._parse_label(row, self.last_label_time)
            except RowError as exc:
                self.report(log.line(self.labels_read + 1), str(exc))
                self.labels_read += 1
                continue
            self.next_label = (lt, eid, y, log.line(self.labels_read + 1))
            return

    def duplicate(self, eid):
        """Way 2: why an event of id ``eid`` cannot be taken now (an event with this id
        still waits for its label), or None."""
        if eid in self.pending:
            return (
                f"duplicate id {short_repr(eid)} (column {self.id!r}): an event with "
                "this id is still waiting for its label"
            )
        return None

    def release(self, t) -> None:
        """Reveal every label known at time ``t`` (before an event of time ``t`` is
        predicted)."""
        if self.delay == "time":
            heap = self.heap
            pop = heapq.heappop
            reveal = self.reveal
            while heap and heap[0][0] <= t:
                _, index, s, y, payload = pop(heap)
                reveal(index, s, y, payload)
            return
        if self.delay != "id":
            return
        pending, early = self.pending, self.early
        if early:  # labels kept for an event of their time that did not come
            for eid in [e for e, (lt, _, _) in early.items() if lt < t]:
                _, _, line = early.pop(eid)
                self.report(line, self._no_match(eid))
        while self.next_label is not None and self.next_label[0] <= t:
            lt, eid, y, line = self.next_label
            entry = pending.pop(eid, None)
            if entry is not None:
                index, s, payload = entry
                self.reveal(index, s, y, payload)
            elif lt == t and eid not in early:
                # an event of this id may still come at time t (the events of one time
                # are read one by one): keep the label until the time moves on
                early[eid] = (lt, y, line)
            else:
                self.report(line, self._no_match(eid))
            self.last_label_time = lt
            self.labels_read += 1
            self.read_next_label()

    def event(self, index, s, y, t, lt, eid, payload) -> None:
        """Event ``index`` (score ``s``, label ``y`` or None, time ``t``, label time
        ``lt``, id ``eid``) has just been predicted (``payload``: its predictions):
        reveal its label now if it is known, else keep it waiting."""
        delay = self.delay
        if delay is None:
            self.reveal(index, s, y, payload)
        elif delay == "time":
            heapq.heappush(self.heap, (lt, index, s, y, payload))
            if lt <= t:  # known already: learnt now, before the next event
                self.release(t)
        elif eid in self.early:  # its label came at its own time, before it was read
            self.reveal(index, s, self.early.pop(eid)[1], payload)
        else:
            self.pending[eid] = (index, s, payload)

    def events_at_once(self, first, scores, labels, times, label_times, predict) -> None:
        """Way 1: the events ``first``, ``first + 1``, ... (their scores, labels, times
        and label times: the times in order, none earlier than a previous event's) each
        predicted in turn by ``predict(score) -> payload``, with the labels revealed
        exactly as :meth:`release` and :meth:`event` would reveal them one event at a
        time, in the same order. A label due within the run is revealed before the
        first event whose time is at or after its label time (a binary search), those
        due before one event in order of label time, then of the events; the labels
        due later are kept waiting.

        Examples
        --------
        >>> done = []
        >>> schedule = Schedule("time", lambda i, s, y, payload: done.append(i), None)
        >>> schedule.events_at_once(0, [0.5] * 3, [1] * 3, [0, 1, 2], [2, 1, 3], lambda s: done.append("p"))
        >>> done, len(schedule.heap)  # as in the class's example; event 2's label waits
        (['p', 'p', 1, 0, 'p'], 1)

        """
        m = len(scores)
        if not m:
            return
        heap = self.heap
        last = times[-1]
        # the labels due within the run: (position of the event they come before,
        # label time, index, score, label, payload or None for an event of the run)
        due = []
        while heap and heap[0][0] <= last:
            lt, index, s, y, payload = heapq.heappop(heap)
            due.append((bisect.bisect_left(times, lt), lt, index, s, y, payload))
        waiting = []
        for j, (t, lt) in enumerate(zip(times, label_times)):
            if lt <= t:
                continue  # revealed right after its own prediction
            if lt <= last:
                due.append((bisect.bisect_left(times, lt, j + 1), lt, first + j, scores[j], labels[j], None))
            else:
                waiting.append(j)
        due.sort(key=_due_order)
        payloads = [None] * m
        reveal = self.reveal
        d, n_due = 0, len(due)
        for j in range(m):
            while d < n_due and due[d][0] == j:
                _, _, index, s, y, payload = due[d]
                reveal(index, s, y, payloads[index - first] if payload is None else payload)
                d += 1
            payload = payloads[j] = predict(scores[j])
            if label_times[j] <= times[j]:
                reveal(first + j, scores[j], labels[j], payload)
        for j in waiting:
            heapq.heappush(heap, (label_times[j], first + j, scores[j], labels[j], payloads[j]))

    def finish(self) -> int:
        """The end of the log: reveal every label still pending (way 1) or read the
        remaining label records (way 2); returns the number of events left without a
        label (way 2), which are then dropped."""
        if self.delay is None:
            return 0
        self.release(math.inf)
        unlabelled = len(self.pending)
        self.pending = {}
        return unlabelled

    def _no_match(self, eid) -> str:
        return (
            f"the id {short_repr(eid)} (column {self.id!r}) matches no event waiting "
            "for its label (an unknown id, a second label, or a label earlier than its "
            "event)"
        )


def _due_order(entry) -> tuple:
    """The order of the labels due within a run: before which event, then as the
    heap would give them (label time, event)."""
    return entry[0], entry[1], entry[2]
