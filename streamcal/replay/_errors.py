"""The error a replay raises when a malformed row stops it (``on_error="raise"``)."""

from __future__ import annotations

__all__ = ["ReplayError"]


class ReplayError(ValueError):
    """A malformed row stopped a replay run with ``on_error="raise"``.

    Attributes
    ----------
    line
        Line number of the row (see :func:`replay` for how rows are numbered).
    reason
        What is wrong with it.
    source
        ``"events"``, or ``"labels"`` for a row of the label records.
    n_events
        Events replayed before the row (all of them learnt or waiting for their label).
    checkpoint
        Path of the checkpoint holding the state just before the row, or None.

    Examples
    --------
    >>> from streamcal import OnlineIsotonic, ReplayError, replay
    >>> rows = [{"score": 0.2, "label": 0}, {"score": "high", "label": 1}]
    >>> try:
    ...     replay(rows, {"isotonic": OnlineIsotonic()}, on_error="raise")
    ... except ReplayError as exc:
    ...     print(exc.line, "|", exc.reason)
    1 | non-numeric score 'high' (column 'score')

    """

    def __init__(
        self,
        line,
        reason,
        source="events",
        name="",
        n_events=0,
        checkpoint=None,
        unit="line",
    ):
        self.line = line
        self.reason = reason
        self.source = source
        self.n_events = n_events
        self.checkpoint = checkpoint
        where = unit
        of = f" of {name}" if name else ""
        labels = "label record, " if source == "labels" else ""
        text = f"malformed {labels}{where} {line}{of}: {reason}"
        if checkpoint is not None:
            text += f" (the state before this row is saved in {checkpoint!r})"
        super().__init__(text)

