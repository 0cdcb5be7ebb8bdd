"""Inline SVG charts, drawn without matplotlib: the figures of the replay report.

A small kit, enough for line charts and reliability diagrams: :class:`Frame` maps data
to pixels in one plotting box and collects its elements (grid, ticks, lines, markers,
bars, shaded bands, text); :func:`svg` wraps elements into an ``<svg>`` whose
``viewBox`` lets a page scale it to any width; :func:`key` is a legend in HTML, so that
it wraps on a narrow page instead of being cut off.

Every tick carries its value in ``data-v`` and every curve its name in ``data-name``,
so that a test (or a reader) can map the drawn pixels back to the numbers. Text is
escaped; element ids (clip paths) are made unique by the caller's ``uid``.

:func:`ticks` and :func:`time_ticks` choose round tick values (1, 2, 2.5 or 5 times a
power of ten; for times, round seconds, minutes, hours or days in UTC).

Examples
--------
>>> f = Frame((0.0, 1.0), (0.0, 1.0), (40, 10, 200, 100))
>>> f.x(0.5), f.y(0.5)
(140.0, 60.0)
>>> ticks(0.0, 1.0)
[0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
"""

from __future__ import annotations

import datetime
import html
import math

__all__ = ["Frame", "esc", "key", "svg", "ticks", "time_ticks", "tick_label"]

_FONT = 'font-family="system-ui, -apple-system, \'Segoe UI\', Roboto, \'DejaVu Sans\', sans-serif"'
_EPOCH = datetime.datetime(1970, 1, 1)


def esc(text) -> str:
    """Text escaped for SVG / HTML content and attributes."""
    return html.escape(str(text), quote=True)


def _n(v: float) -> str:
    """A pixel coordinate, 2 decimals, no trailing zeros."""
    text = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """Round tick values covering ``[lo, hi]``, at most about ``n + 1`` of them."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return []
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / n
    mag = 10.0 ** math.floor(math.log10(raw))
    for m in (1.0, 2.0, 2.5, 5.0, 10.0):
        step = m * mag
        if (hi - lo) / step <= n + 1e-9:
            break
    first = math.ceil(lo / step - 1e-9)
    last = math.floor(hi / step + 1e-9)
    return [round(i * step, 12) for i in range(first, last + 1)]


def tick_label(v: float, values) -> str:
    """The label of tick ``v`` among ``values``: as few decimals as tell them apart,
    thousands separated."""
    step = min((b - a for a, b in zip(values, values[1:])), default=abs(v) or 1.0)
    decimals = 0 if step >= 1 else min(12, max(0, -math.floor(math.log10(step) + 1e-9)))
    # one more while a tick would lose digits (steps of 2.5 or 0.25 need it)
    while decimals < 12 and any(abs(round(x, decimals) - x) > 1e-6 * step for x in values):
        decimals += 1
    return f"{v:,.{decimals}f}"


_TIME_STEPS = (
    1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200,
    86400, 2 * 86400, 3 * 86400, 7 * 86400, 14 * 86400, 28 * 86400, 91 * 86400, 182 * 86400,
    364 * 86400,
)  # fmt: skip


def seconds(d: datetime.datetime) -> float:
    """A naive datetime (read as UTC) as seconds since 1970."""
    return (d - _EPOCH).total_seconds()


def time_ticks(lo: float, hi: float, n: int = 5) -> tuple[list[float], str]:
    """Round tick times (seconds since 1970, UTC) covering ``[lo, hi]`` and the
    ``strftime`` format of their labels."""
    span = hi - lo
    step = next((s for s in _TIME_STEPS if span / s <= n), None)
    if step is None:  # years: fall back to round numbers of days
        step = 86400 * max(1.0, ticks(0, span / 86400, n)[1])
    first = math.ceil(lo / step - 1e-9)
    last = math.floor(hi / step + 1e-9)
    values = [i * step for i in range(first, last + 1)] or [lo]
    if step >= 86400:
        fmt = "%Y-%m-%d"
    elif span <= 86400 and step < 60:
        fmt = "%H:%M:%S"
    elif span <= 86400:
        fmt = "%H:%M"
    else:
        fmt = "%m-%d %H:%M"
    return values, fmt


class Frame:
    """One plotting box: data ranges ``xlim`` and ``ylim`` drawn into the pixel box
    ``(left, top, width, height)``; its methods append SVG elements to ``parts``.
    ``right_margin``: the room between the box and the figure's right edge, which an x
    tick label may use."""

    def __init__(self, xlim, ylim, box, right_margin: float = 10.0):
        self.xlim, self.ylim = xlim, ylim
        self.left, self.top, self.width, self.height = box
        self.right_margin = right_margin
        self.parts: list[str] = []

    def x(self, v: float) -> float:
        lo, hi = self.xlim
        return self.left + (v - lo) / ((hi - lo) or 1.0) * self.width

    def y(self, v: float) -> float:
        lo, hi = self.ylim
        return self.top + self.height - (v - lo) / ((hi - lo) or 1.0) * self.height

    def axes(self, xticks=(), yticks=(), xlabels=None, ylabels=None, grid=True, size=10):
        """The frame, grid lines and tick labels (``xlabels`` / ``ylabels``: the texts
        of the ticks, None to draw the ticks without labels)."""
        p, bottom, right = self.parts, self.top + self.height, self.left + self.width
        # one loop for both axes: a tick's grid line and label differ only in where
        # they go (a tick within 1e-9 of its axis' range counts as inside)
        for axis, ticks, labels, (lo, hi) in (
            ("x", xticks, xlabels, self.xlim),
            ("y", yticks, ylabels, self.ylim),
        ):
            slack = 1e-9 * abs(hi - lo)
            for i, v in enumerate(ticks):
                if not lo - slack <= v <= hi + slack:
                    continue
                if axis == "x":
                    x = _n(self.x(v))
                    rule = (x, _n(self.top), x, _n(bottom))
                    # a label that would cross the figure's right edge (the frame's
                    # margin is narrower than half a label) ends at its tick instead
                    half = text_width(labels[i], size) / 2 if labels is not None else 0.0
                    anchor = "end" if self.x(v) + half > right + self.right_margin else "middle"
                    place = f'x="{x}" y="{_n(bottom + 3 + size)}" text-anchor="{anchor}"'
                else:
                    y = _n(self.y(v))
                    rule = (_n(self.left), y, _n(right), y)
                    place = f'x="{_n(self.left - 4)}" y="{y}" dy="0.32em" text-anchor="end"'
                if grid:
                    p.append(
                        '<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#e4e4e4" '
                        'stroke-width="0.8"/>'.format(*rule)
                    )
                if labels is not None:
                    p.append(
                        f'<text class="{axis}tick" data-v="{v!r}" {place} '
                        f'font-size="{size}" fill="#333">{esc(labels[i])}</text>'
                    )
        p.append(
            f'<rect x="{_n(self.left)}" y="{_n(self.top)}" width="{_n(self.width)}" '
            f'height="{_n(self.height)}" fill="none" stroke="#888" stroke-width="0.8"/>'
        )

    def clip(self, uid: str) -> str:
        """Define a clip path of the box, id ``uid``; returns the attribute using it."""
        self.parts.append(
            f'<clipPath id="{esc(uid)}"><rect x="{_n(self.left)}" y="{_n(self.top)}" '
            f'width="{_n(self.width)}" height="{_n(self.height)}"/></clipPath>'
        )
        return f' clip-path="url(#{esc(uid)})"'

    def line(self, xs, ys, color, width=1.4, dash=None, name=None, cls="curve", clip=""):
        """A polyline through the points ``(xs[i], ys[i])``."""
        points = " ".join(f"{_n(self.x(a))},{_n(self.y(b))}" for a, b in zip(xs, ys))
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        extra += f' data-name="{esc(name)}"' if name is not None else ""
        self.parts.append(
            f'<polyline class="{cls}" points="{points}" fill="none" stroke="{esc(color)}" '
            f'stroke-width="{width}" stroke-linejoin="round"{extra}{clip}/>'
        )

    def dots(self, xs, ys, radii, color, name=None):
        """A circle of radius ``radii[i]`` (pixels) at each point."""
        attr = f' data-name="{esc(name)}"' if name is not None else ""
        self.parts.append(f'<g class="dots" fill="{esc(color)}"{attr}>')
        self.parts += [
            f'<circle cx="{_n(self.x(a))}" cy="{_n(self.y(b))}" r="{_n(r)}"/>'
            for a, b, r in zip(xs, ys, radii)
        ]
        self.parts.append("</g>")

    def bars(self, lefts, widths, bottoms, heights, color, cls="bars", stroke=None):
        """Rectangles from ``(lefts[i], bottoms[i])``, ``widths[i]`` wide and
        ``heights[i]`` high (data units)."""
        edge = f' stroke="{stroke}" stroke-width="0.5"' if stroke else ""
        self.parts.append(f'<g class="{cls}" fill="{esc(color)}"{edge}>')
        for a, w, b, h in zip(lefts, widths, bottoms, heights):
            x0, x1 = self.x(a), self.x(a + w)
            y0, y1 = self.y(b + h), self.y(b)
            self.parts.append(
                f'<rect x="{_n(x0)}" y="{_n(y0)}" width="{_n(max(x1 - x0, 0.0))}" '
                f'height="{_n(max(y1 - y0, 0.6))}"/>'
            )
        self.parts.append("</g>")

    def area(self, xs, lower, upper, color, cls="band"):
        """The region between ``lower`` and ``upper`` over ``xs``."""
        top = [f"{_n(self.x(a))},{_n(self.y(b))}" for a, b in zip(xs, upper)]
        low = [f"{_n(self.x(a))},{_n(self.y(b))}" for a, b in zip(xs, lower)]
        self.parts.append(
            f'<polygon class="{cls}" points="{" ".join(top + low[::-1])}" fill="{esc(color)}"/>'
        )

    def text(self, x, y, content, size=10, anchor="start", weight=None, rotate=False, mono=False, fill="#222"):
        """Text at pixel ``(x, y)``; ``rotate`` turns it to read upwards."""
        extra = f' font-weight="{weight}"' if weight else ""
        extra += ' font-family="ui-monospace, \'DejaVu Sans Mono\', Menlo, monospace"' if mono else ""
        extra += f' transform="rotate(-90 {_n(x)} {_n(y)})"' if rotate else ""
        self.parts.append(
            f'<text x="{_n(x)}" y="{_n(y)}" font-size="{size}" text-anchor="{anchor}" '
            f'fill="{fill}"{extra}>{esc(content)}</text>'
        )


def text_width(text: str, size: float) -> float:
    """A generous estimate of the width of ``text`` at font size ``size`` in the
    report's sans-serif font (0.6 em per character), to keep labels inside a figure.

    >>> text_width("3,000", 10)
    30.0
    """
    return 0.6 * size * len(text)


def fit_size(text: str, room: float, size: float, smallest: float) -> float:
    """The font size, at most ``size`` and at least ``smallest``, at which ``text`` fits
    in ``room`` pixels (:func:`text_width`); ``smallest`` if it fits at none.

    >>> fit_size("abc", 100.0, 12.0, 8.0), fit_size("a" * 40, 120.0, 12.0, 8.0)
    (12.0, 8.0)
    """
    return max(smallest, min(size, size * room / text_width(text, size)))


def svg(width: float, height: float, parts, label: str, cls: str = "chart") -> str:
    """An ``<svg>`` of the given size (its ``viewBox``: a page scales it to its width)
    holding ``parts``, with ``label`` as its accessible name and tooltip."""
    return (
        f'<svg class="{cls}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_n(width)} {_n(height)}" '
        f'role="img" aria-label="{esc(label)}" {_FONT}><title>{esc(label)}</title>'
        + "".join(parts)
        + "</svg>"
    )


def key(items) -> str:
    """A legend in HTML: ``items`` are ``(label, color, style)`` with style ``"line"``,
    ``"dashed"``, ``"dot"`` (a line with a marker) or ``"box"`` (a shaded area)."""
    out = ['<ul class="key">']
    for label, color, style in items:
        c = esc(color)
        if style == "box":
            mark = f'<rect x="1" y="2" width="22" height="8" fill="{c}"/>'
        else:
            dash = ' stroke-dasharray="5 3"' if style == "dashed" else ""
            mark = f'<line x1="1" y1="6" x2="23" y2="6" stroke="{c}" stroke-width="2"{dash}/>'
            if style == "dot":
                mark += f'<circle cx="12" cy="6" r="3.2" fill="{c}"/>'
        out.append(
            f'<li><svg width="24" height="12" viewBox="0 0 24 12" aria-hidden="true">{mark}</svg>'
            f"{esc(label)}</li>"
        )
    out.append("</ul>")
    return "".join(out)


_BAND = "#9ecae1"
_HIST = "#737373"


def reliability_panel(
    panel, name, color, lines, hist_label, hist_top, n_lines=0, uid="p"
) -> str:
    """One reliability diagram (``panel``: ``kind``, ``points``, ``band``, ``hist`` as
    :mod:`streamcal.plot` computes them) with its histogram beneath: the diagonal, the
    band, the curve in ``color``, the statistics ``lines`` above (room is left for
    ``n_lines`` of them, so that panels side by side align) and the histogram on the
    vertical range ``[0, hist_top]``."""
    n_lines = max(n_lines, len(lines))
    side, left, hist_h = 232.0, 54.0, 56.0
    top = 26.0 + 12.0 * n_lines + 4.0
    width, height = left + side + 14.0, top + side + 8.0 + hist_h + 34.0
    lim = (-0.02, 1.02)
    f = Frame(lim, lim, (left, top, side, side))
    grid = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    f.axes(grid, grid, None, [tick_label(v, grid) for v in grid])
    f.text(left + side / 2, 16, name, size=12, anchor="middle", weight="600")
    for i, text in enumerate(lines):
        f.text(left + side / 2, 30 + 12 * i, text, size=9, anchor="middle", mono=True, fill="#333")
    clip = f.clip(f"{uid}-clip")
    f.line([0.0, 1.0], [0.0, 1.0], "#737373", width=0.9, dash="4 3", cls="diagonal")
    band = panel.band
    if band is not None:
        if panel.kind == "binned":
            gaps = [b - a for a, b in zip(band.x, band.x[1:])]
            w = min(0.03, max(0.004, 0.8 * min(gaps))) if gaps else 0.03
            f.bars(
                [x - w / 2 for x in band.x], [w] * len(band.x), list(band.lower),
                [u - lo for u, lo in zip(band.upper, band.lower)], _BAND, cls="band",
            )  # fmt: skip
        else:
            f.area(list(band.x), list(band.lower), list(band.upper), _BAND)
    if panel.kind == "binned":
        xs = [p.mean_prediction for p in panel.points]
        ys = [p.mean_outcome for p in panel.points]
        ws = [p.weight for p in panel.points]
        radii = [0.45 * math.sqrt(10.0 + 90.0 * w / max(ws)) for w in ws]
        f.line(xs, ys, color, width=1.3, name=name, clip=clip)
        f.dots(xs, ys, radii, color, name=name)
    else:
        xs = [v for b in panel.points for v in (b.score_min, b.score_max)]
        ys = [b.value for b in panel.points for _ in (0, 1)]
        f.line(xs, ys, color, width=1.7, name=name, clip=clip)
    label = "observed frequency" if panel.kind == "binned" else "conditional event probability"
    f.text(13, top + side / 2, label, size=10, anchor="middle", rotate=True)
    # the histogram: each bar's share of the weight
    h = Frame(lim, (0.0, hist_top), (left, top + side + 8.0, side, hist_h))
    hticks = ticks(0.0, hist_top, 2)
    h.axes(grid, hticks, [tick_label(v, grid) for v in grid], [tick_label(v, hticks) for v in hticks])
    lefts, widths, heights = panel.hist
    h.bars(list(lefts), list(widths), [0.0] * len(heights), list(heights), _HIST, cls="hist", stroke="#fff")
    for i, text in enumerate(hist_label.split("\n")):
        h.text(9 + 9 * i, top + side + 8.0 + hist_h / 2, text, size=7.5, anchor="middle", rotate=True)
    h.text(left + side / 2, height - 6, "forecast probability", size=10, anchor="middle")
    title = f"{name}: {'binned' if panel.kind == 'binned' else 'CORP'} reliability diagram"
    return svg(width, height, f.parts + h.parts, title, cls="panel")
