"""What a replay measured: :class:`ReplayResult`."""

from __future__ import annotations

import dataclasses
import json

from streamcal import _json

__all__ = ["ReplayResult"]

#: a finite number as it is, anything else None (null)
_finite = _json.number


class ReplayResult:
    """What a :func:`replay` run measured.

    Attributes
    ----------
    summary
        Dict calibrator name (``"raw"`` first when the raw scores are scored) -> dict
        metric key -> final value; decompositions also give their components as
        ``"<metric>.<component>"`` (``"corp.mcb"``, ``"corp.dsc"``, ``"corp.unc"``,
        ``"calibration_refinement.calibration"``, ``"murphy.reliability"``, ...), and
        with ``window`` every key also appears as ``"<key>@window"``, the value over the
        last ``window`` scored events.
    series
        ``"t"``: the event counts at which the metrics were sampled (every ``every``
        events, and once at the end); ``"time"`` (when a time column was given): the
        time of the event at each sample, as found in the log (text, number, or ISO
        8601 for datetimes); and for each calibrator a dict metric key (as in
        ``summary``) -> list of ``(t, value)`` pairs (with ``window``, the windowed
        values under ``"<key>@window"``, e.g. ``"brier@window"``, ``"corp.mcb@window"``).
    n_events
        Events replayed (valid rows; each was predicted by every calibrator).
    n_learnt
        Events whose label was scored and learnt.
    n_skipped
        Malformed rows skipped (event rows and label records).
    n_unlabelled
        Events whose label never arrived (label records joined by id only).
    n_rows
        Rows read: the event rows and the label records, valid or malformed (blank
        lines are not rows), so ``n_skipped / n_rows`` is the share of malformed rows;
        None when not known (a result built without it).
    errors
        List of ``(line_number, message)`` of the malformed rows, the first
        ``max_errors`` of them (messages about label records start with ``"labels: "``).
    calibrators
        Dict name -> the calibrator objects (those given, which learnt in place).
    metrics
        Dict calibrator name -> dict metric key -> the metric objects (with ``window``,
        the windowed ones under ``"<key>@window"``), e.g. ``result.metrics["isotonic"]
        ["ece"].bins`` for a reliability diagram.
    forecasts
        With ``keep_forecasts=True``, a dict of equal-length lists, one entry per scored
        event in the order the labels were scored: ``"index"`` (the event's 0-based
        number), ``"label"``, and one list of predictions per calibrator (``"raw"``
        included); else None.
    stopped
        True when the replay was stopped before the end of the log (its ``stop``
        callable returned True): the figures are those of the events replayed so far.
    columns
        The column table: a tuple of :class:`streamcal.metrics.catalogue.Column`, one
        per key of each calibrator's ``summary`` (and of its ``series``), in that
        order. Each says what its column is, read from the metric catalogue rather
        than from the key: ``key``, ``metric`` (the metric's key), ``component`` (or
        None), ``window`` (the window's length in events, or None for all events),
        ``bigger_is_better`` (None: ranks nothing, like ``corp.unc``), ``name`` and
        ``task`` (the catalogue's; None for a metric outside it) and ``description``.
        Reports and tables rank, group and describe columns from it.
    time_range
        With a time column, ``(first, last)``: the times of the first and of the last
        event replayed, as in ``series["time"]``; else None.

    Examples
    --------
    >>> from streamcal import OnlineIsotonic, replay
    >>> rows = [{"score": s, "label": y} for s, y in [(0.2, 0), (0.7, 1), (0.6, 0), (0.9, 1)]]
    >>> result = replay(rows, {"isotonic": OnlineIsotonic()}, metrics=["brier"], every=2)
    >>> result.series["t"]
    [2, 4]
    >>> [(t, round(v, 4)) for t, v in result.series["raw"]["brier"]]
    [(2, 0.065), (4, 0.125)]
    >>> [(c.key, c.bigger_is_better) for c in result.columns]
    [('brier', False)]
    >>> sorted(result.to_dict())  # doctest: +NORMALIZE_WHITESPACE
    ['columns', 'errors', 'n_events', 'n_learnt', 'n_skipped', 'n_unlabelled',
     'series', 'summary', 'time_range']

    With a window, each column appears again over the window:

    >>> result = replay(rows, {"isotonic": OnlineIsotonic()}, metrics=["corp"], window=3)
    >>> [(c.key, c.component, c.window, c.bigger_is_better) for c in result.columns]
    ... # doctest: +NORMALIZE_WHITESPACE
    [('corp', None, None, False), ('corp.mcb', 'mcb', None, False),
     ('corp.dsc', 'dsc', None, True), ('corp.unc', 'unc', None, None),
     ('corp@window', None, 3, False), ('corp.mcb@window', 'mcb', 3, False),
     ('corp.dsc@window', 'dsc', 3, True), ('corp.unc@window', 'unc', 3, None)]

    """

    def __init__(
        self,
        summary,
        series,
        n_events,
        n_learnt,
        n_skipped,
        n_unlabelled,
        errors,
        calibrators,
        metrics,
        forecasts=None,
        stopped=False,
        columns=(),
        time_range=None,
        n_rows=None,
    ):
        self.summary = summary
        self.series = series
        self.n_events = n_events
        self.n_learnt = n_learnt
        self.n_skipped = n_skipped
        self.n_unlabelled = n_unlabelled
        self.errors = errors
        self.calibrators = calibrators
        self.metrics = metrics
        self.forecasts = forecasts
        self.stopped = stopped
        self.columns = tuple(columns)
        self.time_range = None if time_range is None else tuple(time_range)
        self.n_rows = n_rows

    def to_dict(self) -> dict:
        """JSON-safe copy of the counts, ``summary``, ``series``, ``errors``, the column
        table ``columns`` (one dict per :class:`~streamcal.metrics.catalogue.Column`,
        ``Column(**d)`` builds it back) and ``time_range`` (a list, or None), and the
        ``forecasts`` when kept (multiclass predictions as dicts with text keys).
        Pairs become lists, and NaN or infinite values None. O(size of the series)."""
        summary = {
            name: {k: _finite(v) for k, v in values.items()}
            for name, values in self.summary.items()
        }
        series = {}
        for name, value in self.series.items():
            if isinstance(value, dict):
                series[name] = {
                    k: [[t, _finite(v)] for t, v in pairs] for k, pairs in value.items()
                }
            else:
                series[name] = list(value)
        out = {
            "n_events": self.n_events,
            "n_learnt": self.n_learnt,
            "n_skipped": self.n_skipped,
            "n_unlabelled": self.n_unlabelled,
            "summary": summary,
            "series": series,
            "errors": [[line, message] for line, message in self.errors],
            "columns": [dataclasses.asdict(c) for c in self.columns],
            "time_range": None if self.time_range is None else list(self.time_range),
        }
        if self.forecasts is not None:
            out["forecasts"] = {
                k: [
                    (
                        {str(c): p for c, p in x.items()}
                        if isinstance(x, dict)
                        else (
                            x
                            if isinstance(x, (int, float, str)) or x is None
                            else str(x)
                        )
                    )
                    for x in v
                ]
                for k, v in self.forecasts.items()
            }
        return out

    def to_json(self, path) -> None:
        """Write :meth:`to_dict` to ``path`` as JSON (strict: no NaN)."""
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_dict(), f, allow_nan=False)

    def __repr__(self):
        return (
            f"ReplayResult(n_events={self.n_events}, n_learnt={self.n_learnt}, "
            f"n_skipped={self.n_skipped}, calibrators={list(self.summary)})"
        )

