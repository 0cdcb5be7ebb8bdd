"""Reliability diagrams: binned and CORP (isotonic), with consistency bands.

A reliability diagram plots, against the forecast probability ``x``, how often the
event happened among the events forecast ``x``. A calibrated forecaster lies on the
diagonal. Two estimates of that curve are drawn:

- **binned**: the forecasts are cut into bins (equal width or equal mass); each bin is
  a point at (weighted mean forecast, weighted outcome rate) of its events;
- **CORP** (Dimitriadis, Gneiting and Jordan, "Stable reliability diagrams for
  probabilistic classifiers", PNAS 118, 2021): the isotonic (PAV) recalibration of the
  forecasts, a non-decreasing step function with no tuning parameter, drawn as
  scikit-learn's ``IsotonicRegression`` predicts it (flat within a PAV block, linear
  between blocks). The panel also shows the CORP decomposition of the Brier score,
  ``S = MCB - DSC + UNC``.

**Consistency bands** show how far from the diagonal a *calibrated* forecaster with the
same forecasts would wander by chance: for each of ``n_resamples`` resamples, outcomes
``y* ~ Bernoulli(x)`` are drawn for the same forecasts ``x``, the binned outcome rates
(or the PAV recalibration) are recomputed, and the band runs between the pointwise
``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles (Broecker and Smith, 2007, for
bins; the ``"resampling_Bernoulli"`` consistency band of the R package reliabilitydiag
for CORP). Points outside the band are evidence of miscalibration at that forecast
value (pointwise: with many points, some fall outside by chance).

Below each diagram a small panel shows the distribution of the forecasts: each bar's
height is the share of the total weight whose forecasts fall in it (bars ``1 /
hist_bins`` wide, or the metric's own bins for a binned state; the panel's label says
which): where forecasts are rare the curve is poorly determined.

The data behind the diagrams is computed in :mod:`streamcal.metrics.reliability`
(numpy and scipy only; re-exported here under the same names):
:func:`binned_reliability`, :func:`corp_reliability`, :func:`consistency_band`,
:func:`consistency_band_from_bins`, :func:`multiclass_views`. This module draws:
:func:`reliability_diagram` (one forecaster), :func:`reliability_diagrams` (several
side by side, shared axes) and :func:`save_png` with matplotlib, and
:func:`reliability_svgs` (the same diagrams as inline SVG, without matplotlib: the
replay report's).

matplotlib is an optional dependency (``pip install "streamcal[plot]"``): it is imported
only inside the drawing functions, so ``import streamcal.plot`` and the data functions
work without it; a drawing function called without matplotlib raises an ImportError
that says how to install it. Figures are built with :class:`matplotlib.figure.Figure`
on the Agg canvas (no pyplot, no GUI backend, no global figure registry), so they can be
made in scripts, tests and servers; in a notebook, a returned Figure is displayed as
usual.

**From a metric's state.** The drawing functions also accept, instead of arrays, a
metric or calibrator (duck-typed) or the records it exposes:

- an object with ``bins`` (the binary ``ECE`` metric, the multiclass ``ConfidenceECE``),
  or a sequence of :class:`streamcal.metrics.ReliabilityBin` records ``(lower, upper,
  weight, mean_prediction, mean_outcome)`` (an entry of a multiclass metric's
  ``bins_by_class``), gives a binned diagram. The forecasts themselves are gone, so
  the band is the binomial one of :func:`consistency_band_from_bins` (exact when the
  forecasts within a bin are equal, otherwise conservative) and the histogram shows
  the bins' weights;
- an object with ``recalibration`` (the ``CORP`` metric) or ``blocks``
  (:class:`streamcal.OnlineIsotonic`), or a sequence of
  :class:`streamcal.core.pav.BlockView` PAV blocks, gives a CORP diagram. A ``CORP``
  metric keeps one cell per distinct forecast (its weight and event count, read from
  its snapshot ``to_dict()``), which is all the resampling needs: its band is
  :func:`consistency_band` with ``counts`` (exact for unit event weights), with the
  same ``seed`` (0 by default, so the same state draws the same band). Beyond 2000
  distinct forecasts, adjacent ones are pooled into 2000 groups of about equal event
  counts at their mean forecast (which bounds the cost to ``n_resamples`` PAV fits of
  2000 points; pooling makes the band slightly wider, by Hoeffding's bound, and
  resolves it no finer than the groups). Blocks alone
  do not keep the forecasts: no band is drawn for them (the panel says so; pass the
  arrays for a band). The histogram spreads each block's weight evenly over its score
  range. The decomposition shown is the metric's ``mcb``, ``dsc``, ``unc`` and
  ``get()`` when it has them, else the ``DSC`` and ``UNC`` that the blocks determine.

**Multiclass.** :func:`multiclass_views` turns an ``(n, K)`` probability array and
labels into binary views, the *confidence* view (top probability, whether the top class
was right), the *top-label* views (one per predicted class: its probability, whether it
was right, on the events where it was predicted) or the *class-wise* views (one per
class: its probability, whether it happened); pass the result to
:func:`reliability_diagrams`.
"""

from __future__ import annotations

import math
import typing

import numpy as np

from streamcal import _validation as V
from streamcal._colors import HASHED_COLORS as _HASHED_COLORS  # noqa: F401
from streamcal._colors import NAME_COLORS as _NAME_COLORS  # noqa: F401
from streamcal._colors import calibrator_color
from streamcal.metrics import reliability as _reliability

__all__ = [
    "ConsistencyBand",
    "binned_reliability",
    "calibrator_color",
    "consistency_band",
    "consistency_band_from_bins",
    "corp_reliability",
    "multiclass_views",
    "reliability_diagram",
    "reliability_diagrams",
    "reliability_svgs",
    "save_png",
]

# The band of a CORP metric's state resamples at most this many cells (distinct
# forecasts); beyond it adjacent cells are pooled, which bounds the cost per panel to
# n_resamples PAV fits of this size.
_MAX_BAND_CELLS = 2000



def __getattr__(name):
    # the data functions moved to streamcal.metrics.reliability; their old names here
    # (streamcal.plot.binned_reliability, ...) still work
    if name in _reliability.__all__:
        return getattr(_reliability, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_BAND_COLOR = "#9ecae1"
_BINNED_COLOR = "#08519c"
_CORP_COLOR = "#cb181d"
_HIST_COLOR = "#737373"


# --------------------------------------------------------------------- drawing


def _matplotlib():
    """Import matplotlib lazily; say how to install it when it is missing."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError(
            "streamcal.plot needs matplotlib to draw: pip install 'streamcal[plot]' "
            "(or pip install 'matplotlib>=3.5')."
        ) from exc
    return Figure, FigureCanvasAgg


class _Panel(typing.NamedTuple):
    """Everything one diagram needs, computed before any drawing."""

    kind: str
    points: tuple  # ReliabilityBin (binned) or BlockView (corp)
    band: _reliability.ConsistencyBand | None
    hist: tuple  # (lefts, widths, heights): share of the total weight in each bar
    stats: list  # (label, value) pairs shown above the diagram
    note: str | None  # e.g. why there is no band


def _fmt_n(w: float) -> str:
    return f"{round(w):,}" if abs(w - round(w)) < 1e-9 else f"{w:,.1f}"


def _ece(bins) -> float:
    total = sum(b.weight for b in bins)
    return sum(b.weight * abs(b.mean_outcome - b.mean_prediction) for b in bins) / total


def _spread_hist(lo, hi, w, hist_bins):
    """Share of the weight per equal-width bin, each interval's weight spread evenly
    over ``[lo, hi]`` (all of it in one bin when ``lo == hi``)."""
    lo, hi, w = (np.asarray(a, dtype=np.float64) for a in (lo, hi, w))
    edges = np.arange(hist_bins + 1) / hist_bins
    width = hi - lo
    point = width <= 0
    overlap = np.clip(
        np.minimum(hi[:, None], edges[None, 1:])
        - np.maximum(lo[:, None], edges[None, :-1]),
        0.0,
        None,
    )
    share = np.where(
        point[:, None], 0.0, overlap / np.where(point, 1.0, width)[:, None]
    )
    # bin i is [e_i, e_{i+1}), the last one also holds its right edge (the rule of
    # streamcal.metrics.binned_reliability)
    at = np.clip(np.digitize(lo[point], edges) - 1, 0, hist_bins - 1)
    share[np.flatnonzero(point), at] = 1.0
    return share.T @ w / w.sum()


class _Options(typing.NamedTuple):
    """The drawing options shared by :func:`reliability_diagram` and
    :func:`reliability_diagrams`, validated by :func:`_options`."""

    kind: str | None
    n_bins: int
    strategy: str
    bands: float | None
    n_resamples: int
    seed: int | None
    hist_bins: int


def _panel_from_arrays(y, p, w, opts: _Options, owner) -> _Panel:
    kind, n_bins, strategy, bands, n_resamples, seed, hist_bins = opts
    kind = kind or "binned"
    p, y, w = V.check_forecast_events(y, p, w, owner)
    total = float(w.sum())
    counts, edges = np.histogram(p, bins=hist_bins, range=(0.0, 1.0), weights=w)
    hist = (edges[:-1], np.diff(edges), counts / total)
    band = None
    if kind == "binned":
        points = _reliability.binned_reliability(y, p, n_bins, strategy, weights=w)
        stats = [("ECE", _ece(points)), ("n", _fmt_n(total))]
    else:
        points = _reliability.corp_reliability(y, p, weights=w)
        s = float(np.sum(w * (p - y) ** 2) / total)
        stats = [*_corp_stats(points, s), ("n", _fmt_n(total))]
    if bands is not None:
        band = _reliability.consistency_band(
            p, kind, n_bins=n_bins, strategy=strategy, weights=w, level=bands,
            n_resamples=n_resamples, seed=seed,
        )  # fmt: skip
    return _Panel(kind, points, band, hist, stats, None)


def _corp_stats(blocks, s=None, metric=None):
    """CORP components of the Brier score: S_rc, UNC and DSC follow from the blocks,
    MCB needs the score S of the raw forecasts; a CORP metric knows all of them."""
    if metric is not None and all(hasattr(metric, a) for a in ("mcb", "dsc", "unc")):
        stats = [("MCB", metric.mcb), ("DSC", metric.dsc), ("UNC", metric.unc)]
        stats.append(("S", metric.get()))
        if getattr(metric, "score", "brier") != "brier":
            stats.append(("score", str(metric.score)))
        return stats
    W = sum(b.weight for b in blocks)
    ybar = sum(b.weight * b.value for b in blocks) / W
    s_rc = sum(b.weight * b.value * (1.0 - b.value) for b in blocks) / W
    unc = ybar * (1.0 - ybar)
    if s is None:
        return [("DSC", unc - s_rc), ("UNC", unc)]
    return [("MCB", s - s_rc), ("DSC", unc - s_rc), ("UNC", unc), ("S", s)]


def _state_kind(source):
    """``("binned" | "corp", records)`` if ``source`` is a metric, a calibrator or a
    sequence of bins / blocks, else None (arrays)."""
    if hasattr(source, "bins"):
        return "binned", source.bins
    if hasattr(source, "recalibration"):
        return "corp", source.recalibration
    if hasattr(source, "blocks"):
        return "corp", source.blocks
    if isinstance(source, (tuple, list)) and source:
        if all(hasattr(r, "mean_prediction") for r in source):
            return "binned", source
        if all(hasattr(r, "score_min") for r in source):
            return "corp", source
    return None


_STATE_DOMAIN = (
    "an object with 'bins' (a binned metric), 'recalibration' (CORP) or 'blocks' "
    "(OnlineIsotonic), or a sequence of bins or PAV blocks"
)


def _panel_from_state(source, opts: _Options, owner) -> _Panel:
    kind, bands, hist_bins = opts.kind, opts.bands, opts.hist_bins
    found = _state_kind(source)
    if found is None:
        raise V.argument_error(TypeError, "metric", owner, None, _STATE_DOMAIN, source)
    found, records = found
    if kind is not None and kind != found:
        raise ValueError(
            f"The 'kind' argument of {owner} must match the metric, which holds a "
            f"{found} reliability curve. Got {kind!r} instead."
        )
    points = tuple(r for r in records if r.weight > 0)
    if not points:
        raise ValueError(
            f"The 'metric' argument of {owner} must hold at least one event of "
            f"positive weight. Got {V.format_value(source)} instead."
        )
    total = sum(b.weight for b in points)
    band, note = None, None
    if found == "binned":
        lo = np.array([b.lower for b in points])
        width = np.array([b.upper - b.lower for b in points])
        # one bar per bin of the metric, its height the bin's share of the weight; a
        # bin of zero width (ties at an equal-mass edge) is drawn 1 / hist_bins wide
        heights = np.array([b.weight / total for b in points])
        point = width <= 0
        width = np.where(point, 1.0 / hist_bins, width)
        lo = np.where(point, lo - 0.5 / hist_bins, lo)
        hist = (lo, width, heights)
        value = source.get() if callable(getattr(source, "get", None)) else None
        ece = value if isinstance(value, float) else _ece(points)
        stats = [("ECE", ece), ("n", _fmt_n(total))]
        if bands is not None:
            band = _reliability.consistency_band_from_bins(points, bands)
    else:
        edges = np.arange(hist_bins + 1) / hist_bins
        heights = _spread_hist(
            [b.score_min for b in points], [b.score_max for b in points],
            [b.weight for b in points], hist_bins,
        )  # fmt: skip
        hist = (edges[:-1], np.diff(edges), heights)
        stats = [*_corp_stats(points, metric=source), ("n", _fmt_n(total))]
        if bands is not None:
            cells = _corp_cells(source)
            if cells is None:
                note = "no band: needs the forecasts"
            else:
                xs, ws, ns = cells
                band = _reliability.consistency_band(
                    xs, "corp", n_bins=opts.n_bins, strategy=opts.strategy,
                    weights=ws, level=bands, n_resamples=opts.n_resamples,
                    seed=opts.seed, counts=ns,
                )  # fmt: skip
    return _Panel(found, points, band, hist, stats, note)


def _corp_cells(source):
    """``(xs, ws, ns)`` of a ``CORP`` metric: its distinct forecasts, their total
    weights and event counts, read from the metric's snapshot (:meth:`to_dict`, whose
    state holds its block store's cells per PAV block); None for anything else (an
    ``OnlineIsotonic``'s blocks are its training data, not forecasts to test)."""
    if not hasattr(source, "recalibration") or not callable(
        getattr(source, "to_dict", None)
    ):
        return None
    try:
        blocks = source.to_dict()["state"]["blocks"]
        xs = np.array([x for b in blocks for x in b[0]], dtype=np.float64)
        ws = np.array([w for b in blocks for w in b[1]], dtype=np.float64)
        ns = np.array([n for b in blocks for n in b[3]], dtype=np.int64)
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    if not (len(xs) == len(ws) == len(ns)):
        return None
    keep = (ws > 0) & (ns > 0)
    if not keep.any():
        return None
    return _pool_cells(xs[keep], ws[keep], ns[keep], _MAX_BAND_CELLS)


def _pool_cells(xs, ws, ns, max_cells):
    """At most ``max_cells`` cells: when there are more, adjacent cells (in forecast
    order) are pooled into groups of about equal event counts, each at its weighted
    mean forecast with the group's total weight and count."""
    m = len(xs)
    if m <= max_cells:
        return xs, ws, ns
    order = np.argsort(xs, kind="stable")
    xs, ws, ns = xs[order], ws[order], ns[order]
    before = np.cumsum(ns) - ns
    group = (before * max_cells) // int(ns.sum())
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    W = np.add.reduceat(ws, starts)
    X = np.minimum(1.0, np.add.reduceat(ws * xs, starts) / W)
    return X, W, np.add.reduceat(ns, starts)


def _stat_lines(panel: _Panel) -> list:
    """The statistics shown above a diagram, up to three entries per line."""
    items = [
        f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in panel.stats
    ]
    lines = ["   ".join(items[i : i + 3]) for i in range(0, len(items), 3)]
    if panel.note:
        lines.append(panel.note)
    return lines


def _draw(
    ax, hax, panel: _Panel, title, hist_label, show_legend, ylabel=True, n_lines=0,
    color=None,
):  # fmt: skip
    """Draw one diagram into ``ax`` and its histogram into ``hax`` (the curve in
    ``color``, default the kind's own)."""
    from matplotlib.lines import Line2D

    ax.plot([0, 1], [0, 1], ls="--", lw=0.9, color="0.45", zorder=1)
    handles = []
    if panel.band is not None:
        b = panel.band
        if panel.kind == "binned":
            # one bar per bin: the outcome rates a calibrated forecaster would show;
            # the edge line keeps a bar of zero height (forecasts of 0 or 1) visible
            gaps = np.diff(b.x)
            width = (
                min(0.03, max(0.004, 0.8 * float(gaps.min()))) if len(gaps) else 0.03
            )
            h = ax.bar(
                b.x, b.upper - b.lower, bottom=b.lower, width=width, color=_BAND_COLOR,
                edgecolor=_BAND_COLOR, lw=0.8, zorder=2,
            )  # fmt: skip
        else:
            h = ax.fill_between(
                b.x, b.lower, b.upper, color=_BAND_COLOR, lw=0, zorder=2
            )
        h.set_label(f"{round(100 * b.level):d}% consistency band")
        handles.append(h)
    if panel.kind == "binned":
        xs = [p.mean_prediction for p in panel.points]
        ys = [p.mean_outcome for p in panel.points]
        # marker area grows with the bin's weight, so that a bin of a few events does
        # not look as certain as a full one (its band says the same)
        ws = np.array([p.weight for p in panel.points])
        sizes = 10.0 + 90.0 * ws / ws.max()
        color = color or _BINNED_COLOR
        (h,) = ax.plot(xs, ys, "-", color=color, lw=1.2, zorder=3)
        ax.scatter(xs, ys, s=sizes, color=color, zorder=3, lw=0)
        h = Line2D(
            [], [], color=color, lw=1.2, marker="o", ms=5,
            label="outcome rate per bin (area ∝ events)",
        )  # fmt: skip
    else:
        xs = [v for b in panel.points for v in (b.score_min, b.score_max)]
        ys = [b.value for b in panel.points for _ in (0, 1)]
        label = "CORP (isotonic) recalibration"
        color = color or _CORP_COLOR
        (h,) = ax.plot(xs, ys, "-", color=color, lw=1.6, zorder=3, label=label)
    handles.insert(0, h)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_box_aspect(1.0)
    ax.grid(True, lw=0.4, color="0.88")
    ax.tick_params(labelbottom=False, labelsize=8)
    if ylabel:
        text = (
            "observed frequency"
            if panel.kind == "binned"
            else "conditional event probability"
        )
        ax.set_ylabel(text, fontsize=9)
    # the statistics go above the diagram, where they hide nothing
    lines = _stat_lines(panel)
    ax.annotate(
        "\n".join(lines), xy=(0.5, 1.0), xycoords="axes fraction", xytext=(0, 4),
        textcoords="offset points", ha="center", va="bottom", fontsize=7.5,
        family="monospace", color="0.2",
    )  # fmt: skip
    if title:  # n_lines: the most lines of any panel in the row, to align the titles
        ax.set_title(title, fontsize=10, pad=8 + 9.5 * max(n_lines, len(lines)))
    if show_legend:  # the key, where it hides least of the curve and band
        ax.legend(handles=handles, loc="best", fontsize=7.5, framealpha=0.75)
    lefts, widths, heights = panel.hist
    hax.bar(
        lefts,
        heights,
        width=widths,
        align="edge",
        color=_HIST_COLOR,
        edgecolor="white",
        lw=0.4,
    )
    hax.set_xlim(-0.02, 1.02)
    hax.set_box_aspect(0.25)
    hax.tick_params(labelsize=8)
    hax.set_xlabel("forecast probability", fontsize=9)
    if ylabel:
        hax.set_ylabel(hist_label, fontsize=7.5)


def _hist_label(panels) -> str:
    """The histograms' vertical label: each bar's height is its share of the weight;
    the bars' width is named when every bar of every panel has the same one."""
    widths = np.concatenate([np.asarray(p.hist[1], dtype=np.float64) for p in panels])
    if len(widths) and np.allclose(widths, widths[0], rtol=1e-9, atol=0.0):
        return f"share per bar\n({float(widths[0]):.3g} wide)"
    return "share of forecasts\nper bar"


def _set_hist_ylim(haxes, panels):
    top = max(float(np.max(p.hist[2])) for p in panels)
    for hax in haxes:
        hax.set_ylim(0.0, max(top, 1e-12) * 1.08)


def _options(
    owner, kind, n_bins, strategy, bands, n_resamples, seed, hist_bins, dpi
) -> _Options:
    if kind is not None:
        V.check_choice(kind, owner, "kind", _reliability.KINDS)
    V.check_int(n_bins, owner, "n_bins", minimum=1)
    V.check_choice(strategy, owner, "strategy", _reliability.STRATEGIES)
    if bands is not None:
        V.check_level(bands, owner, "bands")
    V.check_int(n_resamples, owner, "n_resamples", minimum=1)
    V.check_int(seed, owner, "seed", minimum=0, allow_none=True)
    V.check_int(hist_bins, owner, "hist_bins", minimum=1)
    V.check_real(
        dpi, owner, "dpi", lambda v: 0 < v < math.inf, "a finite real number > 0"
    )
    return _Options(kind, n_bins, strategy, bands, n_resamples, seed, hist_bins)


def reliability_diagram(
    y_true=None,
    y_prob=None,
    *,
    metric=None,
    kind: str | None = None,
    n_bins: int = 10,
    strategy: str = "uniform",
    weights=None,
    bands: float | None = 0.9,
    n_resamples: int = 500,
    seed: int | None = 0,
    hist_bins: int = 20,
    ax=None,
    title: str | None = None,
    path=None,
    dpi: float = 150,
    probs=None,
    labels=None,
):
    """Draw one reliability diagram, with its consistency band and forecast histogram.

    The diagram (diagonal dashed) shows the binned outcome rates (points joined by a
    line, marker area growing with the bin's weight; the band as one bar per bin) or
    the CORP recalibration (red; the band shaded around the diagonal). Above it, under
    the title, are the ECE (binned) or the CORP decomposition ``MCB``, ``DSC``,
    ``UNC`` and the Brier score ``S = MCB - DSC + UNC`` (CORP), and the total weight
    ``n``; the key is placed where it hides least of the data. A small panel beneath
    shows the share of the forecasts' weight in each bar (bars ``1 / hist_bins`` wide,
    or the bins of a binned metric's state). Cost: that of :func:`consistency_band`
    (the resampling dominates; ``bands=None`` skips it), plus drawing.

    The arguments are ``(y_true, y_prob)``; the old order ``(probs, labels)`` still works
    for one release with a DeprecationWarning, recognised as by
    :func:`binned_reliability`.

    Parameters
    ----------
    y_true, y_prob
        Binary outcomes and forecast probabilities in [0, 1], one-dimensional
        sequences of the same length. Give these, or ``metric``.
    metric
        Draw from a state instead (see the module docstring): an object with ``bins``
        (a binned metric such as ``ECE`` or ``ConfidenceECE``; binomial band), with
        ``recalibration`` (``CORP``: resampled band from its cells) or ``blocks``
        (``OnlineIsotonic``: no band), or
        a sequence of such bins or blocks (e.g. one entry of a multiclass metric's
        ``bins_by_class``).
    kind
        ``"binned"`` or ``"corp"``; default ``"binned"`` for arrays, and the state's
        own kind for ``metric`` (giving the other one is an error).
    n_bins, strategy
        Bins of the binned diagram (see :func:`binned_reliability`).
    weights
        Optional non-negative event weights for ``y_true`` / ``y_prob``.
    bands
        Nominal pointwise coverage of the consistency band, a real number in (0, 1),
        or None for no band.
    n_resamples, seed
        Resampling of the band (see :func:`consistency_band`).
    hist_bins
        Number of equal-width bars of the forecast histogram (a binned metric's state
        shows its own bins instead).
    ax
        A matplotlib Axes to draw into (the histogram is appended below it); default:
        a new Figure.
    title
        Title of the diagram.
    path
        If given, the figure is also saved there as a PNG (see :func:`save_png`).
    dpi
        Resolution of the saved PNG.
    probs, labels
        Deprecated names of ``y_prob`` and ``y_true``.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (``ax.figure`` when ``ax`` is given).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(size=1000)
    >>> y = rng.uniform(size=1000) < x
    >>> fig = reliability_diagram(y, x, kind="corp", n_resamples=50, title="calibrated")
    >>> [a.get_title() for a in fig.axes]
    ['calibrated', '']

    From a metric's state:

    >>> from streamcal.metrics import CORP
    >>> m = CORP()
    >>> for p, label in zip(x[:200].tolist(), y[:200].tolist()):
    ...     m.update(label, p)
    >>> fig = reliability_diagram(metric=m)

    """
    owner = "reliability_diagram"
    opts = _options(
        owner, kind, n_bins, strategy, bands, n_resamples, seed, hist_bins, dpi
    )
    y_true, y_prob = V.labels_then_probs(y_true, y_prob, owner, probs, labels)
    if (metric is None) == (y_prob is None):
        raise ValueError(
            f"The 'y_prob' argument of {owner} must be given, or else 'metric', but not "
            f"both. Got y_prob={V.format_value(y_prob)} and "
            f"metric={V.format_value(metric)} instead."
        )
    if metric is not None:
        panel = _panel_from_state(metric, opts, owner)
    else:
        panel = _panel_from_arrays(y_true, y_prob, weights, opts, owner)
    Figure, FigureCanvasAgg = _matplotlib()
    if ax is None:
        fig = Figure(figsize=(4.2, 5.2), layout="constrained")
        FigureCanvasAgg(fig)
        grid = {"height_ratios": [4, 1]}
        ax, hax = fig.subplots(2, 1, sharex=True, gridspec_kw=grid)
    else:
        fig = ax.figure
        spec = ax.get_subplotspec()
        if spec is not None:
            # the given axes keeps the top 4/5 of its grid cell, the histogram takes
            # the rest: layout engines (constrained, tight) then place both
            cell = spec.subgridspec(2, 1, height_ratios=[4, 1])
            ax.set_subplotspec(cell[0])
            hax = fig.add_subplot(cell[1], sharex=ax)
        else:  # an axes placed by hand (fig.add_axes): append below it
            from mpl_toolkits.axes_grid1 import make_axes_locatable

            divider = make_axes_locatable(ax)
            hax = divider.append_axes("bottom", size="25%", pad=0.08, sharex=ax)
    _draw(ax, hax, panel, title, _hist_label([panel]), show_legend=True)
    _set_hist_ylim([hax], [panel])
    if path is not None:
        save_png(fig, path, dpi=dpi)
    return fig


def _check_forecasts(forecasts, owner) -> None:
    """``forecasts`` of the multi-panel functions: a non-empty dict, or TypeError."""
    if not isinstance(forecasts, dict) or not forecasts:
        raise V.argument_error(
            TypeError, "forecasts", owner, None, "a non-empty dict of name -> forecasts",
            forecasts,
        )  # fmt: skip


def _colors_by_name(colors, owner) -> dict:
    """``colors`` of the multi-panel functions (a dict or None) keyed by ``str(name)``,
    as the panels are named; TypeError for anything else."""
    if colors is not None and not isinstance(colors, dict):
        raise V.argument_error(
            TypeError, "colors", owner, None, "a dict of name -> colour, or None", colors
        )
    return {str(k): v for k, v in (colors or {}).items()}


def _panels(forecasts, y_true, weights, labels, opts, owner) -> list:
    """``[(name, panel)]`` of :func:`reliability_diagrams`' ``forecasts``."""
    if labels is not None:
        if y_true is not None:
            raise TypeError(
                f"{owner} takes y_true; the deprecated 'labels' argument cannot be "
                "combined with it."
            )
        y_true, _ = V.labels_then_probs(None, None, owner, None, labels)
    panels = []
    for name, source in forecasts.items():
        if _state_kind(source) is not None:
            panel = _panel_from_state(source, opts, owner)
        else:
            src_labels, src_weights = y_true, weights
            if isinstance(source, tuple) and len(source) == 2:
                src_labels, source = V.labels_then_probs(*source, owner)
                src_weights = None
            panel = _panel_from_arrays(src_labels, source, src_weights, opts, owner)
        panels.append((str(name), panel))
    return panels


def reliability_diagrams(
    forecasts,
    y_true=None,
    *,
    kind: str | None = None,
    n_bins: int = 10,
    strategy: str = "uniform",
    weights=None,
    bands: float | None = 0.9,
    n_resamples: int = 500,
    seed: int | None = 0,
    hist_bins: int = 20,
    ncols: int | None = None,
    suptitle: str | None = None,
    colors: dict | None = None,
    path=None,
    dpi: float = 150,
    labels=None,
):
    """Draw several forecasters' reliability diagrams side by side, on shared axes.

    One panel per forecaster (its name as title) with its histogram beneath, in rows
    of ``ncols`` panels; all diagrams share their axes, and so do all histograms; the
    key is drawn in the first panel only. Every panel uses the same options and the same
    ``seed``. Cost: one :func:`reliability_diagram` per panel.

    Parameters
    ----------
    forecasts
        A dict, name -> source, where a source is an array of forecasts (scored
        against the shared ``y_true``), a ``(y_true, y_prob)`` pair (as made by
        :func:`multiclass_views`; a ``(probs, labels)`` pair, the old order, is
        read as in :func:`reliability_diagram`, with a DeprecationWarning), or a state to draw from: a metric or calibrator,
        or a sequence of bins or PAV blocks (see :func:`reliability_diagram`), so
        that a multiclass metric's ``bins_by_class`` can be passed as it is.
    y_true
        Binary outcomes shared by the array sources.
    kind, n_bins, strategy, weights, bands, n_resamples, seed, hist_bins
        As in :func:`reliability_diagram`; ``weights`` go with the shared ``y_true``.
    ncols
        Panels per row, an int >= 1 (default: all in one row, up to 4 per row).
    suptitle
        Title of the whole figure.
    colors
        Optional dict, name -> matplotlib colour of that forecaster's curve (e.g.
        ``{name: calibrator_color(name) for name in forecasts}``, as the replay report
        draws them); names not in it get the kind's default colour.
    path, dpi
        If ``path`` is given, the figure is also saved there as a PNG.
    labels
        Deprecated name of ``y_true``.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(size=1000)
    >>> y = rng.uniform(size=1000) < x
    >>> forecasts = {"calibrated": x, "overconfident": x**2}
    >>> fig = reliability_diagrams(forecasts, y, n_resamples=50)
    >>> [a.get_title() for a in fig.axes if a.get_title()]
    ['calibrated', 'overconfident']

    Multiclass forecasts, one panel per class:

    >>> P = rng.dirichlet([1.0, 1.0, 1.0], size=300)
    >>> classes = np.array([rng.choice(3, p=row) for row in P])
    >>> from streamcal.metrics import multiclass_views
    >>> views = multiclass_views(classes, P, "classwise")
    >>> fig = reliability_diagrams(views, kind="corp", n_resamples=20)
    >>> [a.get_title() for a in fig.axes if a.get_title()]
    ['class 0', 'class 1', 'class 2']

    """
    owner = "reliability_diagrams"
    opts = _options(
        owner, kind, n_bins, strategy, bands, n_resamples, seed, hist_bins, dpi
    )
    _check_forecasts(forecasts, owner)
    ncols = V.check_int(ncols, owner, "ncols", minimum=1, allow_none=True)
    colors = _colors_by_name(colors, owner)
    panels = _panels(forecasts, y_true, weights, labels, opts, owner)
    k = len(panels)
    ncols = min(k, 4) if ncols is None else min(ncols, k)
    nrows = math.ceil(k / ncols)
    Figure, FigureCanvasAgg = _matplotlib()
    height = 4.5 * nrows + (0.3 if suptitle else 0.0)
    fig = Figure(figsize=(0.5 + 3.4 * ncols, height), layout="constrained")
    FigureCanvasAgg(fig)
    grid = fig.add_gridspec(2 * nrows, ncols, height_ratios=[4, 1] * nrows)
    n_lines = max(len(_stat_lines(p)) for _, p in panels)
    hist_label = _hist_label([p for _, p in panels])
    first = first_h = None
    haxes = []
    for i, (name, panel) in enumerate(panels):
        r, c = divmod(i, ncols)
        ax = fig.add_subplot(grid[2 * r, c], sharex=first, sharey=first)
        hax = fig.add_subplot(grid[2 * r + 1, c], sharex=first, sharey=first_h)
        _draw(
            ax, hax, panel, name, hist_label, show_legend=i == 0, ylabel=c == 0,
            n_lines=n_lines, color=colors.get(name),
        )  # fmt: skip
        if c > 0:
            ax.tick_params(labelleft=False)
            hax.tick_params(labelleft=False)
        first = first or ax
        first_h = first_h or hax
        haxes.append(hax)
    _set_hist_ylim(haxes, [p for _, p in panels])
    if suptitle:
        fig.suptitle(suptitle, fontsize=11)
    if path is not None:
        save_png(fig, path, dpi=dpi)
    return fig


def reliability_svgs(
    forecasts,
    y_true=None,
    *,
    kind: str | None = None,
    n_bins: int = 10,
    strategy: str = "uniform",
    weights=None,
    bands: float | None = 0.9,
    n_resamples: int = 500,
    seed: int | None = 0,
    hist_bins: int = 20,
    colors: dict | None = None,
) -> dict:
    """The diagrams of :func:`reliability_diagrams` as inline SVG, without matplotlib.

    One ``<svg>`` per forecaster (the same curve, band, statistics and histogram, the
    histograms on a shared vertical range), each scaling to the width of the page that
    shows it; the replay report (:func:`streamcal.report.write_report`) lays them out
    in a grid with an HTML key. Each tick holds its value in ``data-v`` and each curve
    the forecaster's name in ``data-name``. Cost: that of the panels' bands (see
    :func:`consistency_band`) plus O(points) text.

    Parameters
    ----------
    forecasts, y_true, kind, n_bins, strategy, weights, bands, n_resamples, seed, hist_bins, colors
        As in :func:`reliability_diagrams`; ``colors`` are ``"#rrggbb"`` strings.

    Returns
    -------
    dict
        name -> the ``<svg>`` element of its diagram, as text.

    Examples
    --------
    >>> svgs = reliability_svgs({"a": [0.2, 0.4, 0.6, 0.8]}, [0, 1, 0, 1], bands=None)
    >>> list(svgs), svgs["a"].startswith("<svg")
    (['a'], True)

    """
    from streamcal import _svg

    owner = "reliability_svgs"
    opts = _options(
        owner, kind, n_bins, strategy, bands, n_resamples, seed, hist_bins, 1
    )
    _check_forecasts(forecasts, owner)
    colors = _colors_by_name(colors, owner)
    panels = _panels(forecasts, y_true, weights, None, opts, owner)
    hist_label = _hist_label([p for _, p in panels])
    top = max(float(np.max(p.hist[2])) for _, p in panels)
    top = max(top, 1e-12) * 1.08
    n_lines = max(len(_stat_lines(p)) for _, p in panels)
    default = {"binned": _BINNED_COLOR, "corp": _CORP_COLOR}
    return {
        name: _svg.reliability_panel(
            panel, name, colors.get(name) or default[panel.kind], _stat_lines(panel),
            hist_label, top, n_lines, uid=f"rel-{panel.kind}-{i}",
        )  # fmt: skip
        for i, (name, panel) in enumerate(panels)
    }


def save_png(fig, path, dpi: float = 150):
    """Save ``fig`` as a PNG file at ``path``, rendered by Agg; return ``path``.

    Works for a figure made with pyplot as well: ``savefig`` renders a PNG with Agg
    whatever the figure's interactive backend. Cost: one render of the figure.

    Examples
    --------
    >>> import os, tempfile
    >>> fig = reliability_diagram([0, 1, 0, 1], [0.2, 0.4, 0.6, 0.8], bands=None)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out = save_png(fig, os.path.join(d, "diagram.png"), dpi=50)
    ...     open(out, "rb").read(8) == b"\\x89PNG\\r\\n\\x1a\\n"
    True

    """
    V.check_real(
        dpi, "save_png", "dpi", lambda v: 0 < v < math.inf, "a finite real number > 0"
    )
    _matplotlib()
    fig.savefig(path, format="png", dpi=dpi)
    return path
