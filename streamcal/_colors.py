"""The colour of each calibrator, fixed by its name: the one home of the palette that
the reliability diagrams (:mod:`streamcal.plot`) and the replay report
(:mod:`streamcal.report`) share. :func:`streamcal.plot.calibrator_color` is its public
name."""

from __future__ import annotations

import zlib

from streamcal import _validation as V

__all__ = ["HASHED_COLORS", "NAME_COLORS", "calibrator_color", "calibrator_colors"]


#: The colour of each registry calibrator name (and of ``"raw"``, the log's own
#: scores). Binary and multiclass names share hues: a replay shows only one kind.
#: Append new names, never reorder: reports must keep their colours.
NAME_COLORS = {
    "raw": "#444444",
    # binary (streamcal.registry.CALIBRATOR_NAMES)
    "isotonic": "#1f77b4",
    "histogram": "#d62728",
    "platt": "#2ca02c",
    "beta": "#9467bd",
    "tops": "#ff7f0e",
    "tracking": "#8c564b",
    "hedging": "#e377c2",
    "foster": "#17becf",
    "hops": "#bcbd22",
    "irp": "#393b79",
    "venn_abers": "#aec7e8",
    # multiclass (streamcal.registry.MULTICLASS_CALIBRATOR_NAMES)
    "temperature": "#1f77b4",
    "fir": "#d62728",
    "ovr_isotonic": "#2ca02c",
    "class_wise": "#9467bd",
    "nafir": "#ff7f0e",
    "scir": "#8c564b",
    "top_label": "#e377c2",
    "vector_scaling": "#17becf",
    "matrix_scaling": "#bcbd22",
    "dirichlet": "#aec7e8",
}
# Other names (parameters given, e.g. "isotonic:resolution=0.0001", or user names) are
# hashed into this palette, whose colours differ from the table's.
HASHED_COLORS = (
    "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354",
    "#756bb1", "#5254a3", "#ad494a", "#a55194", "#6b6ecf", "#b5cf6b", "#e7ba52",
    "#d6616b", "#ce6dbd", "#9c9ede", "#fd8d3c", "#74c476", "#969696",
)  # fmt: skip


def calibrator_color(name: str) -> str:
    """The colour of a calibrator, fixed by its name: the same in every figure and report.

    The registry's calibrator names (:data:`streamcal.registry.CALIBRATOR_NAMES` and
    :data:`streamcal.registry.MULTICLASS_CALIBRATOR_NAMES`) and ``"raw"`` have a colour
    of their own; any other name (a spec with parameters such as
    ``"isotonic:resolution=0.0001"``, a name of your own) gets one of 20 other colours
    by a stable hash of its text (CRC-32, the same in every run and on every machine),
    so two such names may share a colour (a report tells the names it draws apart:
    :func:`calibrator_colors`). Cost O(len(name)).

    Parameters
    ----------
    name
        The calibrator's name, as in a replay's ``summary``.

    Returns
    -------
    str
        A colour as ``"#rrggbb"``.

    Examples
    --------
    >>> calibrator_color("isotonic"), calibrator_color("raw")
    ('#1f77b4', '#444444')
    >>> calibrator_color("isotonic:resolution=0.0001") == calibrator_color("isotonic:resolution=0.0001")
    True

    """
    if not isinstance(name, str):
        raise V.argument_error(TypeError, "name", "calibrator_color", None, "a str", name)
    if name in NAME_COLORS:
        return NAME_COLORS[name]
    return HASHED_COLORS[_slot(name)]


def _slot(name: str) -> int:
    return zlib.crc32(name.encode("utf-8")) % len(HASHED_COLORS)


def calibrator_colors(names) -> dict:
    """The colours of calibrators drawn together (one report): each its
    :func:`calibrator_color`, unless a name before it in ``names`` already has that
    colour; it then takes the next colour of the hashed palette that no name has yet
    (from its own slot on), so that up to 20 names outside the registry's table are told
    apart (a sweep such as ``isotonic:window_size=500`` and ``...=5000`` hashed to one
    colour). A name keeps its colour from report to report unless it collides there.

    Examples
    --------
    >>> from streamcal._colors import calibrator_color
    >>> a, b = "isotonic:window_size=500", "isotonic:window_size=5000"
    >>> calibrator_color(a) == calibrator_color(b)
    True
    >>> colors = calibrator_colors(["raw", a, b])
    >>> colors[a] == calibrator_color(a) != colors[b]
    True

    """
    out: dict = {}
    taken: set = set()
    for name in names:
        color = calibrator_color(name)
        if color in taken and name not in NAME_COLORS:
            start = _slot(name)
            for k in range(len(HASHED_COLORS)):
                candidate = HASHED_COLORS[(start + k) % len(HASHED_COLORS)]
                if candidate not in taken:
                    color = candidate
                    break
        out[name] = color
        taken.add(color)
    return out
