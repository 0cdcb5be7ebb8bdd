"""The report of a replay: a JSON summary and an HTML page with inline SVG figures.

:func:`write_report` turns the result of :func:`streamcal.replay` into

- ``summary.json``: the final value of every metric for every calibrator, the metric
  time series, the malformed rows, and what was replayed (see :func:`write_report` for
  the schema);
- ``index.html``: one self-contained page (plain HTML, CSS and inline SVG; no script,
  no other file) showing the summary table (best value per column marked), each
  metric over the replay (one line per calibrator), and the calibrators' reliability
  diagrams side by side (:func:`streamcal.plot.reliability_svgs`), drawn from the
  final state of the replay's ``ece`` and ``corp`` metrics, when it has them, with
  their consistency bands (binomial for the bins; for CORP, resampled from the
  metric's distinct forecasts with the fixed seed :data:`BAND_SEED`, so the same
  replay gives the same figure). For a multiclass replay the binned diagrams are the
  top-class (confidence) view, and the page says so.

The figures are drawn as SVG by streamcal itself (:mod:`streamcal._svg`): the report
needs no matplotlib, and its figures scale to the page's width, their keys (HTML
lists) wrapping on a narrow screen. For PNG files of the diagrams, draw them with
:func:`streamcal.plot.reliability_diagrams` and :func:`streamcal.plot.save_png`
(matplotlib, the ``plot`` extra).

Each calibrator has the same colour in every figure and every report
(:func:`streamcal.plot.calibrator_color`); the over-time plots have the event time on
their horizontal axis when the log has a time column.

What each column is (its metric, component, window, direction and description) is
read from the replay's column table, ``ReplayResult.columns`` (built from the metric
catalogue, :mod:`streamcal.metrics.catalogue`), never parsed back from its key.

:func:`summary_table` is the table that both the page and ``streamcal replay`` show.
"""

from __future__ import annotations

import dataclasses
import datetime
import html
import json
import math
import os
import re

from streamcal import _json, _svg
from streamcal.metrics import catalogue
from streamcal.metrics.catalogue import Column, column_key

__all__ = [
    "BAND_SEED",
    "FORMAT",
    "column_groups",
    "column_label",
    "format_number",
    "summary_table",
    "write_report",
]

#: The value of the ``"format"`` key of ``summary.json``.
FORMAT = "streamcal-replay-report/2"

# At most this many malformed rows are listed in summary.json (all are counted).
_MAX_ERRORS_JSON = 1000
# ... and on the page.
_MAX_ERRORS_HTML = 50


def format_number(value) -> str:
    """A metric value as the table prints it: 4 decimals, or 3 significant digits when
    small, ``"-"`` when missing or not finite.

    Examples
    --------
    >>> format_number(0.123456), format_number(2.5e-05), format_number(None), format_number(0.0)
    ('0.1235', '2.50e-05', '-', '0.0000')

    """
    if value is None or not isinstance(value, (int, float)) or not math.isfinite(value):
        return "-"
    if value != 0 and abs(value) < 5e-4:
        return f"{value:.2e}"
    return f"{value:.4f}"


def _finite(value) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
    )


def summary_table(summary: dict, columns=()) -> tuple[list[str], list[Column], dict]:
    """Rows, columns and best rows of a replay summary.

    Parameters
    ----------
    summary
        ``ReplayResult.summary``: calibrator name -> column key -> final value.
    columns
        ``ReplayResult.columns``, the column table: what each column is and its
        direction. A key of ``summary`` missing from it is a column of unknown
        direction (ranks nothing).

    Returns
    -------
    rows : list of str
        The calibrator names, in the summary's order.
    columns : list of :class:`~streamcal.metrics.catalogue.Column`
        The columns holding a value, in the table's order, then the summary's keys the
        table does not know, in order of first appearance.
    best : dict
        column key -> list of the rows holding its best value (lowest, or highest for
        the columns whose ``bigger_is_better`` is true; ties all marked); columns that
        rank nothing (``corp.unc``, unknown ones) are absent.

    Examples
    --------
    >>> from streamcal.metrics import ROCAUC, Brier
    >>> from streamcal.metrics.catalogue import columns
    >>> table = columns("brier", Brier) + columns("roc_auc", ROCAUC)
    >>> summary = {"raw": {"brier": 0.2, "roc_auc": 0.7}, "isotonic": {"brier": 0.18, "roc_auc": 0.7}}
    >>> rows, cols, best = summary_table(summary, table)
    >>> rows, [c.key for c in cols], best
    (['raw', 'isotonic'], ['brier', 'roc_auc'], {'brier': ['isotonic'], 'roc_auc': ['raw', 'isotonic']})

    """
    rows = list(summary)
    present = {key for values in summary.values() for key in values}
    out: list[Column] = []
    seen = set()
    for column in columns:
        if column.key in present and column.key not in seen:
            out.append(column)
            seen.add(column.key)
    for values in summary.values():
        for key in values:
            if key not in seen:
                out.append(Column(key, key, None, None, None))
                seen.add(key)
    best = {}
    for column in out:
        bigger = column.bigger_is_better
        if bigger is None:
            continue
        values = {r: summary[r].get(column.key) for r in rows}
        values = {r: v for r, v in values.items() if _finite(v)}
        if len(values) < 2:
            continue
        target = max(values.values()) if bigger else min(values.values())
        best[column.key] = [r for r, v in values.items() if v == target]
    return rows, out, best


def column_groups(columns) -> list[tuple[int | None, list[Column]]]:
    """Split columns by window: those over all events (window None) first, then those
    over the replay's window (its length), each group in the given order.

    Examples
    --------
    >>> from streamcal.metrics import ECE, Brier
    >>> from streamcal.metrics.catalogue import columns
    >>> table = columns("brier", Brier) + columns("ece", ECE)
    >>> table += columns("brier", Brier, window=500) + columns("ece", ECE, window=500)
    >>> [(w, [c.key for c in group]) for w, group in column_groups(table)]
    [(None, ['brier', 'ece']), (500, ['brier@window', 'ece@window'])]

    """
    groups: dict = {}
    for column in columns:
        groups.setdefault(column.window, []).append(column)
    return sorted(groups.items(), key=lambda item: item[0] is not None)


def column_label(column: Column) -> str:
    """The name a table shows for a column: its metric's key and component, without
    the window (the table's caption says which window).

    Examples
    --------
    >>> from streamcal.metrics import CORP
    >>> from streamcal.metrics.catalogue import columns
    >>> [column_label(c) for c in columns("corp", CORP, window=500)[:2]]
    ['corp', 'corp.mcb']

    """
    return column_key(column.metric, column.component)


def _direction_hint(bigger) -> str:
    if bigger is None:
        return ""
    return " (higher is better)" if bigger else " (lower is better)"


def _json_safe(value):
    """Non-finite floats become None (strict JSON), tuples lists, keys and other
    objects strings (the rules are :func:`streamcal._json.encode`'s)."""
    return _json.encode(value, non_finite="null", keys="str", other="str")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "metric"


# ---------------------------------------------------------------------- plots


def _metric_series(series: dict, rows: list[str]) -> dict:
    """metric key -> {calibrator: [(t, value), ...]} for the calibrators in ``rows``."""
    out: dict = {}
    for name in rows:
        per_metric = series.get(name)
        if not isinstance(per_metric, dict):
            continue
        for key, points in per_metric.items():
            out.setdefault(key, {})[name] = points
    return out


def _colors(rows) -> dict:
    """calibrator -> its colour, fixed by its name (:func:`streamcal.plot.calibrator_color`)
    and told apart from the others' (:func:`streamcal._colors.calibrator_colors`)."""
    from streamcal._colors import calibrator_colors

    return calibrator_colors(list(rows))


def _task(result, options, columns=()) -> str:
    """``"multiclass"`` when the replay scored multiclass forecasts, else ``"binary"``."""
    from streamcal.metrics import MulticlassCalibrationMetric

    tasks = {c.task for c in columns if c.task is not None}
    if len(tasks) == 1:
        return tasks.pop()

    for per_metric in (getattr(result, "metrics", None) or {}).values():
        for m in (per_metric or {}).values():
            if isinstance(m, MulticlassCalibrationMetric):
                return "multiclass"
    score = (options or {}).get("score")
    if isinstance(score, (list, tuple)) and len(score) > 1:
        return "multiclass"
    if isinstance(score, str) and "," in score:
        return "multiclass"
    return "binary"


def _parse_times(times):
    """The sampled event times as numbers or naive datetimes (aware ones converted to
    UTC), and the unit to show (``""`` or ``" (UTC)"``); None when they are missing
    or not all of one kind (numbers, or ISO 8601 text)."""
    if not times or any(v is None or isinstance(v, bool) for v in times):
        return None
    try:
        values = [float(v) for v in times]
        if all(math.isfinite(v) for v in values):
            return values, ""
        return None
    except (TypeError, ValueError):
        pass
    try:
        parsed = [datetime.datetime.fromisoformat(str(v).strip()) for v in times]
    except ValueError:
        return None
    aware = [d.utcoffset() is not None for d in parsed]
    if all(aware):
        utc = datetime.timezone.utc
        return [d.astimezone(utc).replace(tzinfo=None) for d in parsed], " (UTC)"
    if any(aware):
        return None
    return parsed, ""


def _time_axis(series: dict, column, notes: list) -> tuple | None:
    """``(event count -> time, axis label)`` when the replay kept the event times
    (``series["time"]``, one per sample of ``series["t"]``) and they never go back,
    else None; times out of order (a log not sorted by its time column) add a note to
    ``notes`` and leave the plots on the events replayed, since lines drawn against
    them would run back and forth across the axis."""
    ts, times = series.get("t") or [], series.get("time") or []
    if not ts or len(ts) != len(times):
        return None
    parsed = _parse_times(times)
    if parsed is None:
        return None
    values, unit = parsed
    order = sorted(range(len(ts)), key=ts.__getitem__)
    if any(values[i] > values[j] for i, j in zip(order, order[1:])):
        notes.append(
            f"The time column {column!r} is not in order in the log: the plots over "
            "time show the number of events replayed instead."
        )
        return None
    name = f" ({column})" if column and column != "time" else ""
    return dict(zip(ts, values)), f"event time{name}{unit}"


def _over_time_svg(column, lines, colors, time_axis=None, uid="ot") -> str | None:
    """The inline SVG of one column (a :class:`~streamcal.metrics.catalogue.Column`)
    over the replay, one line per calibrator (dashed: ``raw``), or None when no line
    has a finite value. With ``time_axis`` (see :func:`_time_axis`) the horizontal
    axis is the event time (UTC), else the number of events replayed. The key is the
    page's (:func:`streamcal._svg.key`), so it wraps on a narrow page."""
    to_x = time_axis[0] if time_axis else None
    dated = to_x is not None and isinstance(next(iter(to_x.values())), datetime.datetime)
    curves = {}
    for name, points in lines.items():
        pts = [(t, v) for t, v in points if _finite(v)]
        if to_x is not None:
            pts = [(to_x[t], v) for t, v in pts if t in to_x]
            if dated:
                pts = [(_svg.seconds(t), v) for t, v in pts]
        if pts:
            curves[name] = pts
    if not curves:
        return None
    xs = [t for pts in curves.values() for t, _ in pts]
    x_lo, x_hi = min(xs), max(xs)
    ylim = _fit_ylim(curves)
    width, height, left, top = 480.0, 300.0, 60.0, 30.0
    f = _svg.Frame((x_lo, x_hi), ylim, (left, top, width - left - 14.0, height - top - 50.0), 14.0)
    if dated:
        xticks, fmt = _svg.time_ticks(x_lo, x_hi, 5)
        epoch = datetime.datetime(1970, 1, 1)
        xlabels = [(epoch + datetime.timedelta(seconds=v)).strftime(fmt) for v in xticks]
    else:
        xticks = _svg.ticks(x_lo, x_hi, 4)
        xlabels = [_svg.tick_label(v, xticks) for v in xticks]
    yticks = _svg.ticks(*ylim)
    f.axes(xticks, yticks, xlabels, [_svg.tick_label(v, yticks) for v in yticks], size=11)
    clip = f.clip(f"{uid}-clip")
    for name, pts in curves.items():
        t, v = zip(*pts)
        dash = "6 4" if name == "raw" else None
        f.line(t, v, colors[name], width=1.6 if dash else 1.4, dash=dash, name=name, clip=clip)
    title = f"{column.key}{_direction_hint(column.bigger_is_better)}"
    f.text(left, 18, title, size=_svg.fit_size(title, width - left - 4.0, 14.0, 11.0), weight="600")
    over = "over all events so far" if column.window is None else f"over the last {column.window:,} events"
    ytitle = f"{column_label(column)}, {over}"
    # a long title (calibration_refinement.calibration, ...) shrinks to the figure's
    # height, down to 9.5 px, then goes on two lines
    room = height - 10.0
    size = _svg.fit_size(ytitle, room, 11.0, 9.5)
    if _svg.text_width(ytitle, size) <= room:
        f.text(14, top + f.height / 2, ytitle, size=size, anchor="middle", rotate=True)
    else:
        f.text(10, top + f.height / 2, f"{column_label(column)},", size=size, anchor="middle", rotate=True)
        f.text(21, top + f.height / 2, over, size=size, anchor="middle", rotate=True)
    xlabel = "events replayed" if time_axis is None else time_axis[1]
    f.text(left + f.width / 2, height - 8, xlabel, size=12, anchor="middle")
    return _svg.svg(width, height, f.parts, f"{column.key} over time, one line per calibrator")


def _over_time_columns(columns, by_key) -> list:
    """The columns that get an over-time plot, in order: each metric's value and its
    components that rank forecasters (not ``corp.unc``, the same for all), each
    followed by its version over the window."""
    chosen = [
        c
        for c in columns
        if c.key in by_key and (c.component is None or c.bigger_is_better is not None)
    ]
    position = {}
    for c in chosen:
        position.setdefault((c.metric, c.component), len(position))
    return sorted(
        chosen, key=lambda c: (position[c.metric, c.component], c.window is not None)
    )


def _fit_ylim(curves) -> tuple:
    """The vertical range: fitted to the last 90% of the replay when the first values
    (metrics of a handful of events, noisy) would squash the rest of the curves."""
    points = [(t, v) for pts in curves.values() for t, v in pts]
    all_lo, all_hi = min(v for _, v in points), max(v for _, v in points)
    t_lo, t_hi = min(t for t, _ in points), max(t for t, _ in points)
    late = [v for t, v in points if t >= t_lo + 0.1 * (t_hi - t_lo)]
    lo, hi = (min(late), max(late)) if len(late) >= 3 else (all_lo, all_hi)
    pad = 0.08 * (hi - lo) if hi > lo else 0.05 * (abs(hi) or 1.0)
    if all_lo < lo - pad or all_hi > hi + pad:
        return lo - pad, hi + pad
    return all_lo - pad, all_hi + pad


def _reliability_sources(metrics: dict, rows, attribute: str, columns) -> dict:
    """calibrator -> its first metric (not a windowed one: a metric of a column over
    all events) that has ``attribute`` (``bins``: ECE; ``recalibration``: CORP) and has
    seen an event."""
    overall = {c.metric for c in columns if c.window is None}
    sources = {}
    for name in rows:
        for key, m in (metrics.get(name) or {}).items():
            if key not in overall or not hasattr(m, attribute):
                continue
            if getattr(m, "n_events", 1):
                sources[name] = m
            break
    return sources


#: Seed of the resampled consistency bands of the report's CORP diagrams (fixed, so
#: that the same replay draws the same figure).
BAND_SEED = 0


# ---------------------------------------------------------------------- HTML

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       color: #1a1a1a; background: #fff; max-width: 1100px; margin: 2em auto; padding: 0 1.5em;
       line-height: 1.5; font-size: 16px; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
.meta { color: #555; margin-top: 0; }
table.summary { border-collapse: collapse; margin: 1em 0 1.5em; font-variant-numeric: tabular-nums; }
table.summary caption { text-align: left; font-weight: 600; padding-bottom: 0.3em; }
table.summary th, table.summary td { padding: 0.4em 0.9em; border-bottom: 1px solid #e3e3e3; }
table.summary th { background: #f3f5f8; text-align: right; font-weight: 600; }
table.summary th:first-child, table.summary td:first-child { text-align: left; }
table.summary td { white-space: nowrap; text-align: right; font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; }
table.summary td:first-child { font-family: inherit; }
table.summary tr.raw td { color: #555; font-style: italic; }
table.summary td.best { background: #e6f4ea; font-weight: 700; color: #0b5b25; }
.dir { color: #666; font-weight: normal; }
.note { color: #444; font-size: 0.93em; }
.warning { background: #fff6e0; border-left: 4px solid #e0a000; padding: 0.6em 1em; }
figure { margin: 1.2em 0; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(480px, 100%), 1fr)); gap: 0 1.5em; }
.grid figure { margin: 0.6em 0; }
figure svg.chart, figure svg.panel { display: block; width: 100%; height: auto; }
.panels { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(260px, 100%), 1fr)); gap: 0.4em 1em; }
.panels .cell { max-width: 380px; }
ul.key { list-style: none; padding: 0; margin: 0.5em 0; display: flex; flex-wrap: wrap; gap: 0.2em 1.2em;
         font-size: 0.9em; }
ul.key li { display: inline-flex; align-items: center; gap: 0.4em; overflow-wrap: anywhere; }
ul.key svg { flex: none; }
figcaption { color: #444; font-size: 0.93em; }
dl.settings { display: grid; grid-template-columns: minmax(0, max-content) minmax(0, 1fr); gap: 0.2em 1.2em; }
dl.settings dt { font-weight: 600; }
dl.settings dd { margin: 0; font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace;
                 overflow-wrap: anywhere; }
.scroll { overflow-x: auto; }
ul.errors { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; font-size: 0.9em;
            overflow-wrap: anywhere; }
@media (max-width: 560px) {
  body { margin: 1em auto; padding: 0 0.7em; font-size: 15px; }
  table.summary th, table.summary td { padding: 0.3em 0.45em; }
  dl.settings { grid-template-columns: minmax(0, 1fr); }
  dl.settings dd { margin-bottom: 0.4em; }
}
"""


def _section(title: str, note: str) -> list:
    """A section's heading and the note beneath it (both HTML, written as they are)."""
    return [f"<h2>{title}</h2>", f'<p class="note">{note}</p>']


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _html_table(summary: dict, columns: list, best: dict, caption: str | None) -> str:
    rows = list(summary)
    head = ["<th>calibrator</th>"]
    for column in columns:
        bigger = column.bigger_is_better
        arrow = "" if bigger is None else (" &uarr;" if bigger else " &darr;")
        name = column_label(column)
        head.append(f'<th scope="col">{_e(name)}<span class="dir">{arrow}</span></th>')
    body = []
    for row in rows:
        cells = [
            f'<th scope="row" style="text-align:left;background:none;font-weight:600">{_e(row)}</th>'
        ]
        for column in columns:
            text = _e(format_number(summary[row].get(column.key)))
            if row in best.get(column.key, ()):
                cells.append(
                    f'<td class="best" title="best in this column">{text} &#9733;</td>'
                )
            else:
                cells.append(f"<td>{text}</td>")
        cls = ' class="raw"' if row == "raw" else ""
        body.append(f"<tr{cls}>" + "".join(cells) + "</tr>")
    caption = f"<caption>{_e(caption)}</caption>" if caption else ""
    return (
        f'<table class="summary">{caption}\n<thead><tr>' + "".join(head) + "</tr></thead>\n<tbody>\n"
        + "\n".join(body) + "\n</tbody>\n</table>"
    )  # fmt: skip


def _panel_grid(kind: str, svgs: dict, colors: dict) -> str:
    """The reliability diagrams of one kind: their key, then one panel per calibrator
    in a grid that wraps to the page's width."""
    curve = "outcome rate per bin (area \u221d events)" if kind == "binned" else "CORP (isotonic) recalibration"
    items = [
        (curve, "#555", "dot" if kind == "binned" else "line"),
        ("90% consistency band", "#9ecae1", "box"),
        ("calibrated (diagonal)", "#737373", "dashed"),
    ]
    panels = "".join(f'<div class="cell">{svg}</div>' for svg in svgs.values())
    return _svg.key(items) + f'<div class="panels">{panels}</div>'


def _html_page(
    doc: dict, summary: dict, columns: list, images: dict, notes: list[str], figures: dict
) -> str:
    title = doc["title"]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        f"<h1>{_e(title)}</h1>",
    ]
    n, learnt, skipped = doc["n_events"], doc["n_learnt"], doc["n_skipped"]
    meta = f"{n:,} events replayed, {learnt:,} learnt"
    if skipped:
        meta += f", {skipped:,} malformed rows skipped"
    source = doc.get("source") or {}
    series = doc.get("series") or {}
    times, ts = series.get("time") or [], series.get("t") or []
    if doc.get("time_range"):
        first, last = doc["time_range"]
        meta += f". Event times: {first} (first event) to {last} (last event)"
    elif times and len(times) == len(ts):
        # only the sampled times are known: say which events they are
        meta += (
            f". Event times sampled from {times[0]} (event {ts[0]:,}) to {times[-1]} "
            f"(event {ts[-1]:,})"
        )
    if doc.get("task") == "multiclass":
        meta += (
            ". Multiclass forecasts: the ece column and the binned diagrams show the "
            "top-class (confidence) view"
        )
    parts.append(
        f'<p class="meta">{_e(meta)}.<br>Written {_e(doc["created"])} by streamcal {_e(doc["streamcal_version"])}.</p>'
    )
    for note in notes:
        parts.append(f'<p class="warning">{_e(note)}</p>')

    parts += _section(
        "Summary",
        "Each event is first predicted by every calibrator from the labels known at that "
        "moment, the prediction is scored, and only then is the event learnt (prequential "
        "evaluation). <em>raw</em> is the log's own score, uncalibrated.",
    )
    best = doc.get("best") or {}
    groups = column_groups(columns)
    for window, group in groups:
        caption = None
        if len(groups) > 1:
            caption = (
                "Over all events" if window is None else f"Over the last {window:,} events"
            )
        parts.append(
            '<div class="scroll">' + _html_table(summary, group, best, caption) + "</div>"
        )
    parts.append(
        '<p class="note">&darr; lower is better, &uarr; higher is better; '
        '<span style="background:#e6f4ea;font-weight:700;color:#0b5b25;padding:0 0.3em">'
        "bold &#9733;</span> marks the best value in each column.</p>"
    )
    # one description per metric, from the column table (the metric catalogue)
    descriptions = {}
    for column in columns:
        if column.description and column.metric not in descriptions:
            descriptions[column.metric] = column.description
    if descriptions:
        parts.append('<ul class="note">')
        parts += [
            f"<li><strong>{_e(k)}</strong>: {_e(text)}</li>"
            for k, text in descriptions.items()
        ]
        parts.append("</ul>")

    by_key = {c.key: c for c in columns}
    over_time = images.get("over_time", [])
    if over_time:
        parts += _section(
            "Metrics over time",
            "The value of each metric on the events replayed so far (dashed: the raw "
            "scores). The first values, on a handful of events, are noisy: the vertical "
            "axis is fitted to the last 90% of the replay.",
        )
        colors = _colors(summary)
        parts.append(
            _svg.key(
                (name, colors[name], "dashed" if name == "raw" else "line")
                for name in summary
            )
        )
        parts.append('<div class="grid">')
        for item in over_time:
            caption = ""
            if doc.get("task") == "multiclass":
                # which view of the forecast the metric takes is in its description
                column = by_key.get(item["metric"])
                text = None if column is None else descriptions.get(column.metric)
                caption = f"<figcaption>{_e(text)}</figcaption>" if text else ""
            parts.append(f'<figure id="{_e(item["id"])}">{figures[item["id"]]}{caption}</figure>')
        parts.append("</div>")
    reliability = images.get("reliability", [])
    if reliability:
        parts += _section(
            "Reliability diagrams",
            "At the end of the replay: how often the event happened (vertical) among the "
            "events given each forecast probability (horizontal). A calibrated forecaster "
            "follows the diagonal; the small panel below each diagram shows how the "
            "forecasts are spread.",
        )
        for item in reliability:
            parts.append(
                f'<figure id="{_e(item["id"])}"><figcaption>{_e(item["caption"])}</figcaption>'
                f'{figures[item["id"]]}</figure>'
            )

    errors = doc.get("errors") or []
    if skipped or errors:
        shown = errors[:_MAX_ERRORS_HTML]
        more = max(skipped, len(errors)) - len(shown)
        parts += _section("Malformed rows", f"{skipped:,} rows were skipped (line number: reason).")
        parts.append('<ul class="errors">')
        parts += [f"<li>line {_e(line)}: {_e(msg)}</li>" for line, msg in shown]
        if more > 0:
            parts.append(f"<li>... and {more:,} more (see summary.json)</li>")
        parts.append("</ul>")

    settings = {
        **({"log": source.get("log")} if source.get("log") else {}),
        **(doc.get("options") or {}),
    }
    if settings:
        parts.append("<h2>Settings</h2>")
        parts.append('<dl class="settings">')
        for key, value in settings.items():
            shown = (
                ", ".join(map(str, value))
                if isinstance(value, (list, tuple))
                else value
            )
            parts.append(f"<dt>{_e(key)}</dt><dd>{_e(shown)}</dd>")
        parts.append("</dl>")
    parts.append(
        '<p class="note">Full numbers and time series: <a href="summary.json">summary.json</a>.</p>'
    )
    parts += ["</body>", "</html>", ""]
    return "\n".join(parts)


# ---------------------------------------------------------------------- entry point


def write_report(
    result,
    out,
    *,
    title: str | None = None,
    source: dict | None = None,
    options: dict | None = None,
    plots: bool = True,
) -> dict:
    """Write the report of a replay into the directory ``out`` (created if needed).

    Cost: O(size of the series) for the JSON, the HTML and the over-time figures,
    plus the consistency bands of the reliability diagrams (for CORP, 500 PAV fits of
    at most 2000 cells per calibrator).

    Parameters
    ----------
    result
        What :func:`streamcal.replay` returned (a ``ReplayResult``: ``summary``,
        ``series``, ``n_events``, ``n_learnt``, ``n_skipped``, ``errors``, ``metrics``,
        ``columns``, ``time_range``). The column table ``columns`` says what each
        column is: its direction (arrows, best values), window (one table per window),
        description, and which columns get an over-time plot (the metrics and the
        components that rank forecasters); a summary key missing from it is shown,
        unranked. When the log has a time column, the over-time plots use the event
        times of ``series["time"]`` (numbers or ISO 8601 text, one per sample of
        ``series["t"]``; datetimes with a zone are shown in UTC) on their horizontal
        axis, and ``time_range`` (the first and the last event's time) gives the
        header's time span; without it (a result built by hand, or resumed from a
        checkpoint of an earlier version) the header gives the span of the sampled
        times, and says so.
    out
        The directory to write into; existing files of the same names are replaced.
    title
        The page's title (default: ``"streamcal replay"``).
    source
        What was replayed, stored under ``"source"``: e.g. ``{"log": path}``.
    options
        The settings of the replay, shown on the page and stored under ``"options"``.
    plots
        Draw the figures (inline SVG; False: the table and texts only).

    Returns
    -------
    dict
        The content of ``summary.json``, whose keys are: ``format`` (:data:`FORMAT`),
        ``title``, ``created`` (ISO 8601), ``streamcal_version``, ``source``,
        ``options``, ``task`` (``"binary"`` or ``"multiclass"``), ``time_range``
        (``[first, last]`` event time, or null), ``n_events``, ``n_learnt``, ``n_skipped``, ``n_errors``,
        ``errors`` (the first 1000 ``[line, message]`` pairs), ``columns`` (the
        column keys, in table order), ``column_table`` (one dict per column, the
        fields of :class:`~streamcal.metrics.catalogue.Column`: ``key``, ``metric``,
        ``component``, ``window``, ``bigger_is_better``, ``name``, ``task``,
        ``description``), ``bigger_is_better`` (column key -> true, false or null),
        ``best`` (column key -> best calibrators), ``summary`` (calibrator -> column ->
        value), ``series`` (as ``ReplayResult.series``, pairs as lists), ``images``
        (the figures on the page: ``{"over_time": [{"metric", "id"}], "reliability":
        [{"kind", "id", "caption"}]}``, ``id`` the figure's element id in
        ``index.html``, so ``index.html#<id>`` links to it) and ``notes``. Non-finite
        numbers are written as null.

    Examples
    --------
    >>> import os, tempfile
    >>> from streamcal import OnlineIsotonic, replay
    >>> rows = [{"score": 0.9, "label": i % 2} for i in range(100)]
    >>> result = replay(rows, {"isotonic": OnlineIsotonic()}, metrics=["brier"])
    >>> with tempfile.TemporaryDirectory() as out:
    ...     doc = write_report(result, out, plots=False)
    ...     sorted(os.listdir(out))
    ['index.html', 'summary.json']
    >>> doc["best"], doc["column_table"][0]["bigger_is_better"]
    ({'brier': ['isotonic']}, False)

    """
    import streamcal

    os.makedirs(out, exist_ok=True)
    summary = {str(k): dict(v) for k, v in result.summary.items()}
    table = tuple(getattr(result, "columns", None) or ())
    rows, columns, best = summary_table(summary, table)
    series = dict(getattr(result, "series", {}) or {})
    errors = list(getattr(result, "errors", []) or [])
    notes: list[str] = []
    images: dict = {"over_time": [], "reliability": []}
    task = _task(result, options, table)
    time_range = getattr(result, "time_range", None)

    figures: dict = {}  # element id -> its inline SVG (or the HTML of a panel grid)
    if plots:
        colors = _colors(rows)
        time_axis = _time_axis(series, (options or {}).get("time"), notes)
        by_key = _metric_series(series, rows)
        for column in _over_time_columns(columns, by_key):
            uid = f"over_time_{_slug(column.key)}"
            figure = _over_time_svg(column, by_key[column.key], colors, time_axis, uid)
            if figure is not None:
                figures[uid] = figure
                images["over_time"].append({"metric": column.key, "id": uid})
        metrics = getattr(result, "metrics", None) or {}
        view = (
            "top-class view: the top probability against whether the top class was "
            "right; " if task == "multiclass" else ""
        )
        for attribute, kind, caption in [
            ("bins", "binned",
             f"Binned reliability diagrams ({view}from the ece metric's bins, final state), "
             "with 90% binomial consistency bands."),
            ("recalibration", "corp",
             "CORP reliability diagrams (final state of the corp metric): the isotonic "
             "recalibration of each calibrator's forecasts, with 90% consistency bands: "
             "where the recalibration of a calibrated forecaster with the same forecasts "
             "would lie, from 500 resamples of the outcomes under calibration "
             f"(seed {BAND_SEED})."),
        ]:  # fmt: skip
            sources = _reliability_sources(metrics, rows, attribute, columns)
            if sources:
                from streamcal.plot import reliability_svgs

                uid = f"reliability_{kind}"
                svgs = reliability_svgs(sources, kind=kind, colors=colors, seed=BAND_SEED)
                figures[uid] = _panel_grid(kind, svgs, colors)
                images["reliability"].append({"kind": kind, "id": uid, "caption": caption})
        if not images["reliability"]:
            # only the metrics of this task that hold a diagram (the catalogue's)
            names = [
                name
                for name in catalogue.metric_names(task)
                if any(
                    hasattr(catalogue.metric_info(name, task).cls, a)
                    for a in ("bins", "recalibration")
                )
            ]
            notes.append(
                f"No reliability diagrams: add the metric {' or '.join(names)} to the "
                "replay to draw them."
            )

    doc = {
        "format": FORMAT,
        "title": title or "streamcal replay",
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(
            timespec="seconds"
        ),
        "streamcal_version": streamcal.__version__,
        "source": source or {},
        "options": options or {},
        "task": task,
        "time_range": list(time_range) if time_range else None,
        "n_events": int(result.n_events),
        "n_learnt": int(result.n_learnt),
        "n_skipped": int(result.n_skipped),
        "n_errors": len(errors),
        "errors": [[line, str(msg)] for line, msg in errors[:_MAX_ERRORS_JSON]],
        "columns": [c.key for c in columns],
        "column_table": [dataclasses.asdict(c) for c in columns],
        "bigger_is_better": {c.key: c.bigger_is_better for c in columns},
        "best": best,
        "summary": summary,
        "series": series,
        "images": images,
        "notes": notes,
    }
    doc = _json_safe(doc)
    with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, allow_nan=False)
        f.write("\n")
    page = _html_page(doc, summary, columns, images, notes, figures)
    with open(os.path.join(out, "index.html"), "w", encoding="utf-8") as f:
        f.write(page)
    return doc
