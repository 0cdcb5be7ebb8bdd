"""Reading the numbers back from streamcal's inline SVG figures (tests only).

Every tick of a figure holds its value in ``data-v`` and sits at its pixel position,
so two ticks give the linear map from pixels back to data; curves, dots, bars and
bands are then read as data and compared with the numbers they were drawn from.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def figures(page: str) -> dict:
    """figure element id -> the list of its chart / panel ``<svg>`` elements (parsed)."""
    out = {}
    for fid, body in re.findall(r'<figure id="([^"]+)">(.*?)</figure>', page, re.S):
        svgs = re.findall(r'<svg class="(?:chart|panel)".*?</svg>', body, re.S)
        out[fid] = [ET.fromstring(s) for s in svgs]
    return out


def _inverse(pairs):
    """The map pixel -> value through the ticks ``(value, pixel)``; checks they agree."""
    (v0, p0), (v1, p1) = pairs[0], pairs[-1]
    scale = (v1 - v0) / (p1 - p0)
    for v, p in pairs:  # every tick is where the same linear map puts it
        assert abs(v0 + (p - p0) * scale - v) <= 0.01 * abs(scale) + 1e-9 * abs(v)
    return lambda p: v0 + (p - p0) * scale


def axes(svg) -> tuple:
    """(x map, [y map of each frame, in drawing order]): pixel -> data."""
    xs = [
        (float(t.get("data-v")), float(t.get("x")))
        for t in svg.iter(f"{NS}text")
        if t.get("class") == "xtick"
    ]
    runs, run = [], []
    for el in svg:  # a frame's y ticks come before its outline, a <rect>
        if el.tag == f"{NS}text" and el.get("class") == "ytick":
            run.append((float(el.get("data-v")), float(el.get("y"))))
        elif el.tag == f"{NS}rect" and run:
            runs.append(run)
            run = []
    return _inverse(xs), [_inverse(r) for r in runs]


def points(text: str) -> list:
    """The ``points`` attribute of a polyline or polygon as (x, y) pixel pairs."""
    return [tuple(map(float, p.split(","))) for p in text.split()]


def curves(svg, to_x, to_y) -> dict:
    """name -> (xs, ys) of each named curve (``polyline.curve``), in data units."""
    out = {}
    for el in svg.iter(f"{NS}polyline"):
        if el.get("class") == "curve" and el.get("data-name") is not None:
            pts = points(el.get("points"))
            out[el.get("data-name")] = ([to_x(x) for x, _ in pts], [to_y(y) for _, y in pts])
    return out


def rects(svg, cls, to_x, to_y) -> list:
    """(left, right, bottom, top) of each rectangle of the group ``g.<cls>``, in data
    units."""
    out = []
    for g in svg.iter(f"{NS}g"):
        if g.get("class") == cls:
            for r in g:
                x, y = float(r.get("x")), float(r.get("y"))
                w, h = float(r.get("width")), float(r.get("height"))
                out.append((to_x(x), to_x(x + w), to_y(y + h), to_y(y)))
    return out


def dots(svg, to_x, to_y) -> list:
    """(x, y, radius in pixels) of each circle of the ``g.dots`` groups."""
    return [
        (to_x(float(c.get("cx"))), to_y(float(c.get("cy"))), float(c.get("r")))
        for g in svg.iter(f"{NS}g")
        if g.get("class") == "dots"
        for c in g
    ]


def band_polygon(svg, to_x, to_y):
    """(xs, lower, upper) of a shaded band drawn as one polygon (upper edge left to
    right, then the lower edge back)."""
    (poly,) = [p for p in svg.iter(f"{NS}polygon") if p.get("class") == "band"]
    pts = [(to_x(x), to_y(y)) for x, y in points(poly.get("points"))]
    half = len(pts) // 2
    upper, lower = pts[:half], pts[half:][::-1]
    return [x for x, _ in upper], [y for _, y in lower], [y for _, y in upper]
