"""The predict / reveal operations a replay records, cut into what each calibrator
executes at once.

The engine (:mod:`streamcal.replay._engine`) records the protocol's operations as it
reads the log: *predict* an event (every calibrator, from its score) and *reveal* the
label of an event predicted earlier (learn it). A calibrator's part of that sequence
depends on nothing but its own state, so each calibrator executes the whole recorded
sequence in one call of :func:`execute`, independently of the others (side by side in
threads when the sequence holds long runs): a maximal run of events each predicted
then revealed at once is one ``predict_learn_many``, a run of predictions one
``predict_many``, a run of reveals one ``learn_many``, and runs shorter than
``short_run`` (delayed labels interleave predictions and reveals one by one) go
through one ``predict_reveal_many`` (compiled, without the GIL, for the isotonic
family). The batch calls give the loop's floats and state (the shared checks), so the
predictions are the per-event protocol's whatever the cut.
"""

from __future__ import annotations

import numpy as np

from streamcal.base import PREDICT, PREDICT_REVEAL, REVEAL

__all__ = ["PREDICT", "PREDICT_REVEAL", "REVEAL", "OperationRuns", "execute", "execute_jointly"]

# The recorded operations: ``(PREDICT, score, slot)`` and
# ``(REVEAL, index, score, label, slot)``, ``slot`` the predicted event's list of
# predictions (one per calibrator name), filled once the sequence is executed. The
# entries of a flat segment are ``(kind, score, label)``, the kind one of
# ``predict_reveal_many``'s: PREDICT, REVEAL, or PREDICT_REVEAL for an event predicted
# then revealed at once.
_P, _L, _PL = PREDICT, REVEAL, PREDICT_REVEAL

# kinds of segment
_FLAT, _PREQUENTIAL, _PREDICTIONS, _REVEALS = range(4)


class OperationRuns:
    """A recorded sequence of operations, cut into segments.

    Parameters
    ----------
    ops
        The operations, in the order of the protocol (see ``PREDICT``).
    short_run
        Runs of fewer events go to flat segments, each one ``predict_reveal_many``;
        None: the whole sequence is one flat segment, without arrays (nothing to run
        in batches: a multiclass log, users' calibrators).

    Attributes
    ----------
    pred_scores, pred_slots
        The scores and slots of the predicted events, in order: the predictions
        :func:`execute` returns follow this order.
    rev_index, rev_labels, rev_slots
        The index, label and slot of each revealed event, in order.
    n_batched
        The events in batch segments.
    segments
        What :func:`execute` runs: ``(_FLAT, entries, arrays)`` with entries
        ``(kind, score, label)`` and the arrays of ``predict_reveal_many`` (or None),
        or a batch call's kind, its float64 arrays and its entries.

    Examples
    --------
    >>> a, b = [None], [None]
    >>> runs = OperationRuns([(PREDICT, 0.2, a), (PREDICT, 0.7, b), (REVEAL, 0, 0.2, 1, a)], 8)
    >>> runs.pred_scores, runs.rev_index
    ([0.2, 0.7], [0])

    """

    def __init__(self, ops: list, short_run: int | None):
        self.pred_scores, self.pred_slots = [], []
        self.rev_index, self.rev_labels, self.rev_slots = [], [], []
        # units: (kind, score, label) with kind _P, _L or _PL, consecutive ops of one
        # event predicted and revealed at once being one _PL unit
        units = []
        n = len(ops)
        i = 0
        while i < n:
            op = ops[i]
            if op[0] == PREDICT:
                self.pred_scores.append(op[1])
                self.pred_slots.append(op[2])
                if i + 1 < n and ops[i + 1][0] == REVEAL and ops[i + 1][4] is op[2]:
                    self._reveal(ops[i + 1])
                    units.append((_PL, op[1], ops[i + 1][3]))
                    i += 2
                    continue
                units.append((_P, op[1], None))
            else:
                self._reveal(op)
                units.append((_L, op[2], op[3]))
            i += 1
        self.segments = []
        self.n_batched = 0
        if short_run is None:
            self.segments.append((_FLAT, units, None))
        else:
            self._cut(units, short_run)

    def _reveal(self, op) -> None:
        _, index, s, y, slot = op
        self.rev_index.append(index)
        self.rev_labels.append(y)
        self.rev_slots.append(slot)

    def _cut(self, units: list, short_run: int) -> None:
        """Maximal runs of one kind of unit; the long ones batch segments, the short
        ones merged into flat segments."""
        flat = []
        n = len(units)
        i = 0
        while i < n:
            kind = units[i][0]
            j = i + 1
            while j < n and units[j][0] == kind:
                j += 1
            if j - i < short_run:
                flat.extend(units[i:j])
            else:
                if flat:
                    self.segments.append(_flat_segment(flat))
                    flat = []
                self.segments.append(_batch_segment(kind, units[i:j]))
                self.n_batched += j - i
            i = j
        if flat:
            self.segments.append(_flat_segment(flat))

    def flat(self):
        """The whole sequence as flat entries ``(kind, score, label)``."""
        for segment in self.segments:
            if segment[0] == _FLAT:
                yield from segment[1]
            else:
                yield from segment[3]


def _flat_segment(units: list) -> tuple:
    kinds = np.fromiter((u[0] for u in units), dtype=np.int8, count=len(units))
    scores = np.fromiter((u[1] for u in units), dtype=np.float64, count=len(units))
    labels = np.fromiter(
        (0.0 if u[0] == _P else u[2] for u in units), dtype=np.float64, count=len(units)
    )
    return (_FLAT, units, (kinds, scores, labels))


def _batch_segment(kind: int, units: list) -> tuple:
    scores = np.asarray([u[1] for u in units], dtype=np.float64)
    labels = None if kind == _P else np.asarray([u[2] for u in units], dtype=np.float64)
    seg_kind = {_PL: _PREQUENTIAL, _P: _PREDICTIONS, _L: _REVEALS}[kind]
    return (seg_kind, scores, labels, units)


def execute(calibrator, runs: OperationRuns) -> list:
    """Execute ``runs`` on ``calibrator`` (see the module docstring); returns its
    predictions of ``runs.pred_scores``, as Python floats, in order.

    Examples
    --------
    >>> from streamcal import OnlinePlatt
    >>> a, b = [None], [None]
    >>> runs = OperationRuns([(PREDICT, 0.2, a), (PREDICT, 0.7, b), (REVEAL, 0, 0.2, 1, a)], 8)
    >>> cal = OnlinePlatt()
    >>> execute(cal, runs) == [OnlinePlatt().predict_one(0.2), OnlinePlatt().predict_one(0.7)]
    True
    >>> twin = OnlinePlatt()
    >>> twin.learn_one(0.2, 1)
    >>> cal.predict_one(0.5) == twin.predict_one(0.5)  # it learnt the one reveal
    True

    """
    out = []
    extend = out.extend
    for segment in runs.segments:
        kind = segment[0]
        if kind == _FLAT:
            extend(calibrator.predict_reveal_many(*segment[2]).tolist())
        elif kind == _PREQUENTIAL:
            extend(calibrator.predict_learn_many(segment[1], segment[2]).tolist())
        elif kind == _PREDICTIONS:
            extend(calibrator.predict_many(segment[1]).tolist())
        else:
            calibrator.learn_many(segment[1], segment[2])
    return out


def execute_jointly(calibrators: list, entries, blame=None) -> list:
    """Execute flat ``entries`` (:meth:`OperationRuns.flat`; ``PREDICT_REVEAL``
    entries for a run of events each predicted then revealed at once) on
    ``calibrators`` together, event by event: every one predicts an event before any
    learns it (the per-event protocol, which calibrators that share state need).
    Returns the predictions per calibrator; an error is passed to
    ``blame(position, error)`` (the position of the calibrator that raised it) before
    it propagates.

    Examples
    --------
    >>> from streamcal import OnlinePlatt
    >>> cal = OnlinePlatt()
    >>> execute_jointly([cal, cal], [(_PL, 0.2, 1), (_P, 0.7, None)])[0][1] == cal.predict_one(0.7)
    True

    """
    predicts = [c.predict_one for c in calibrators]
    learns = [c.learn_one for c in calibrators]
    columns = [[] for _ in calibrators]
    k = 0
    try:
        for entry, s, y in entries:
            if entry != _L:
                for k, predict in enumerate(predicts):
                    columns[k].append(predict(s))
            if entry != _P:
                for k, learn in enumerate(learns):
                    learn(s, y)
    except Exception as exc:
        if blame is not None:
            blame(k, exc)
        raise
    return columns
