"""Slow, obviously correct oracles for streamcal.replay.

- :func:`prequential`: the hand-written test-then-train loop, event by event.
- :func:`delayed_predictions`: a brute-force simulation of delayed labels: for each event,
  a *fresh* calibrator learns exactly the labels known at that event's time (those of
  earlier events whose label time is <= its time, in order of label time then event),
  then predicts. Quadratic, and independent of any scheduling code.
- :class:`MixingCalibrator`: a tiny multiclass calibrator (predict_one / learn_one on
  dicts, to_dict / from_dict) to replay multiclass logs with.
- :class:`PerEventReplay`: the per-event replay engine, each event parsed, predicted,
  scored and learnt one at a time with ``predict_one`` / ``learn_one`` / ``update``,
  delayed labels scheduled by its own loop (a heap of label times, a dict of ids): the
  oracle the columnar engine (``streamcal/replay/_engine.py``) must equal, results,
  series, errors and checkpoints, bit for bit. It shares the columnar engine's set-up
  (``streamcal/replay/_setup.py``: argument checks, calibrators, metrics, the
  checkpoint document) so that both can be compared, and none of its execution.

References: river's ``stream.simulate_qa`` (a label whose time has come is revealed
before the next question; ties reveal first).
"""

from __future__ import annotations

import heapq
import math

from streamcal.replay._rows import BINARY_LABELS, RowError, short_repr
from streamcal.replay._setup import ReplayRun

__all__ = [
    "MixingCalibrator",
    "PerEventReplay",
    "delayed_predictions",
    "delayed_scoring_order",
    "prequential",
]


def prequential(events, calibrators: dict, make_metrics, every=None):
    """Predict, score, learn, one event at a time.

    ``events`` is a list of ``(score, label)``; ``calibrators`` a dict name ->
    calibrator (``"raw"`` scores the score itself); ``make_metrics()`` returns a fresh
    dict key -> metric. Returns ``(predictions, metrics, samples)``: name -> list of
    predictions, name -> dict of metrics, and ``[(t, name -> key -> value)]`` every
    ``every`` events.
    """
    preds = {name: [] for name in calibrators}
    metrics = {name: make_metrics() for name in calibrators}
    samples = []
    for t, (s, y) in enumerate(events, 1):
        for name, cal in calibrators.items():
            p = s if name == "raw" else cal.predict_one(s)
            preds[name].append(p)
            for m in metrics[name].values():
                m.update(y, p)
            if name != "raw":
                cal.learn_one(s, y)
        if every and t % every == 0:
            samples.append(
                (
                    t,
                    {
                        n: {k: m.get() for k, m in ms.items()}
                        for n, ms in metrics.items()
                    },
                )
            )
    return preds, metrics, samples


def delayed_predictions(events, make_calibrator):
    """Prediction of each event by a fresh calibrator that has learnt the labels known
    at its time. ``events``: list of ``(time, label_time, score, label)``."""
    out = []
    for i, (t, _, s, _) in enumerate(events):
        known = sorted((events[j][1], j) for j in range(i) if events[j][1] <= t)
        cal = make_calibrator()
        for _, j in known:
            cal.learn_one(events[j][2], events[j][3])
        out.append(cal.predict_one(s))
    return out


def delayed_scoring_order(events):
    """The order in which the labels are scored when every label time is >= its
    event's time: by label time, then event."""
    return [j for _, j in sorted((e[1], j) for j, e in enumerate(events))]


class MixingCalibrator:
    """Multiclass: mixes the forecast with the label frequencies seen so far,
    ``(1 - a) p_c + a f_c`` with ``f_c = (n_c + 1) / (n + k)`` over the classes seen in
    forecasts and labels (``a`` grows as ``n / (n + 10)``)."""

    def __init__(self, strength=10):
        self.strength = strength
        self.counts = {}
        self.n = 0

    def predict_one(self, p: dict) -> dict:
        if not self.n:
            return dict(p)
        classes = list(p) + [c for c in self.counts if c not in p]
        a = self.n / (self.n + self.strength)
        k = len(classes)
        return {
            c: (1 - a) * p.get(c, 0.0) + a * (self.counts.get(c, 0) + 1) / (self.n + k)
            for c in classes
        }

    def learn_one(self, p: dict, y) -> None:
        self.counts[y] = self.counts.get(y, 0) + 1
        self.n += 1

    def to_dict(self) -> dict:
        return {
            "class": "MixingCalibrator",
            "params": {"strength": self.strength},
            "state": {"counts": list(self.counts.items()), "n": self.n},
        }

    @classmethod
    def from_dict(cls, d):
        obj = cls(**d["params"])
        obj.counts = {c: k for c, k in d["state"]["counts"]}
        obj.n = d["state"]["n"]
        return obj


class PerEventReplay(ReplayRun):
    """The per-event replay engine (the test oracle, see the module docstring); built
    with the arguments of ``ColumnarReplay`` (all of them keywords but the calibrators
    and metrics), run with :meth:`run`."""

    def _run_rows(self, log, keys) -> None:
        lean = not (self.multiclass or self.delay or self.window or self.keep_forecasts)
        if lean:
            self._run_lean(log, keys)
        else:
            self._run_general(log, keys)

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
            # every calibrator predicts before any learns (the same as one after
            # another, unless two share state)
            preds = [predict(s) for predict, _, _ in units]
            for (_, ups, _), p in zip(units, preds):
                for up in ups:
                    up(y, p)
            for _, _, learn in units:
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
        heap = self.schedule.heap
        pending = self.schedule.pending
        early = self.schedule.early
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
                        f"duplicate id {short_repr(eid)} (column {self.id!r}): an event "
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

    _reveal = _score_learn

    def _release(self, t) -> None:
        """Reveal, score and learn every label known at time ``t``."""
        schedule = self.schedule
        if self.delay == "time":
            heap = schedule.heap
            pop = heapq.heappop
            while heap and heap[0][0] <= t:
                _, index, s, y, preds = pop(heap)
                self._score_learn(index, s, y, preds)
            return
        pending, early = schedule.pending, schedule.early
        if early:  # labels kept for an event of their time that did not come
            for eid in [e for e, (lt, _, _) in early.items() if lt < t]:
                _, _, line = early.pop(eid)
                self._bad(line, self._no_match(eid), "labels")
        while schedule.next_label is not None and schedule.next_label[0] <= t:
            lt, eid, y, line = schedule.next_label
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
            schedule.last_label_time = lt
            schedule.labels_read += 1
            schedule.read_next_label()

    def _no_match(self, eid) -> str:
        return (
            f"the id {short_repr(eid)} (column {self.id!r}) matches no event waiting "
            "for its label (an unknown id, a second label, or a label earlier than its "
            "event)"
        )

    def _finish(self) -> None:
        """The end of the log: reveal the pending labels, take the last sample."""
        if self.delay == "time":
            self._release(math.inf)
        elif self.delay == "id":
            self._release(math.inf)
            self.n_unlabelled = len(self.schedule.pending)
            self.schedule.pending = {}
        self._sample()
        n = self.n_events
        if self.progress is not None and not (self.every and n and n % self.every == 0):
            self.progress(n)
