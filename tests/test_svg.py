"""The inline SVG figures drawn without matplotlib: the chart kit (streamcal._svg) and
the reliability diagrams as SVG (streamcal.plot.reliability_svgs), read back as numbers
(tests/svg_reading.py) and compared with the data functions they draw.

None of these tests needs matplotlib.
"""

from __future__ import annotations

import datetime
import math
import subprocess
import sys

import numpy as np
import pytest

from streamcal import _svg, plot
from streamcal.metrics import CORP, ECE, binned_reliability, consistency_band, corp_reliability
from tests import svg_reading as svgr


def _close(a, b, atol=1e-4):
    return np.allclose(np.asarray(a, float), np.asarray(b, float), rtol=0, atol=atol)


@pytest.mark.parametrize(
    "lo, hi", [(0.0, 1.0), (0.1731, 0.2094), (50.0, 300.0), (-3.2, 7.9), (1e-6, 3e-6), (0, 1e6)]
)
def test_ticks_are_round_inside_the_range_and_enough(lo, hi):
    values = _svg.ticks(lo, hi)
    assert 2 <= len(values) <= 7
    assert all(lo - 1e-12 <= v <= hi + 1e-12 for v in values)
    steps = np.diff(values)
    assert np.allclose(steps, steps[0])
    mantissa = steps[0] / 10 ** math.floor(math.log10(steps[0]))
    assert any(math.isclose(mantissa, m) for m in (1, 2, 2.5, 5))
    labels = [_svg.tick_label(v, values) for v in values]
    assert len(set(labels)) == len(labels)  # distinct labels
    assert all(math.isclose(float(t.replace(",", "")), v, abs_tol=steps[0] / 100) for t, v in zip(labels, values))


def test_time_ticks_are_round_utc_times():
    start = datetime.datetime(2021, 3, 3)
    for span, fmt in [(14 * 86400, "%Y-%m-%d"), (6 * 3600, "%H:%M"), (3 * 86400 / 2, "%m-%d %H:%M")]:
        lo = _svg.seconds(start) + 17.0
        values, got = _svg.time_ticks(lo, lo + span)
        assert got == fmt and 2 <= len(values) <= 6
        step = values[1] - values[0]
        assert all(v % step == 0 and lo <= v <= lo + span for v in values)


def test_frame_maps_data_to_pixels_and_escapes_text():
    f = _svg.Frame((0.0, 10.0), (-1.0, 1.0), (50, 20, 200, 100))
    assert (f.x(0), f.x(10), f.y(-1), f.y(1), f.y(0)) == (50, 250, 120, 20, 70)
    f.text(1, 2, "a < b & 'c'")
    out = _svg.svg(300, 150, f.parts, 'label "x"')
    assert "a &lt; b &amp; &#x27;c&#x27;" in out and 'aria-label="label &quot;x&quot;"' in out


def test_axes_draw_the_ticks_of_both_axes_alike():
    # x and y share one tick loop: a tick within 1e-9 of the range is drawn, one beyond
    # is not; each has its grid line across the box and its label beside the axis
    f = _svg.Frame((0.0, 10.0), (-1.0, 1.0), (50, 20, 200, 100))
    f.axes([-1e-9, 5, 10.5], [-1.5, 0, 1 + 1e-9], ["a", "b", "c"], ["d", "e", "f"], size=8)
    text = "".join(f.parts)
    assert [t for t in "abcdef" if f">{t}</text>" in text] == ["a", "b", "e", "f"]
    assert text.count("<line ") == 4
    assert '<line x1="150" y1="20" x2="150" y2="120"' in text  # x = 5, top to bottom
    assert '<line x1="50" y1="70" x2="250" y2="70"' in text  # y = 0, left to right
    assert 'class="xtick" data-v="5" x="150" y="131" text-anchor="middle"' in text
    assert 'class="ytick" data-v="0" x="46" y="70" dy="0.32em" text-anchor="end"' in text
    f = _svg.Frame((0.0, 10.0), (-1.0, 1.0), (50, 20, 200, 100))
    f.axes([5], [0], grid=False)
    assert "<line " not in "".join(f.parts) and "<text" not in "".join(f.parts)


def test_key_lists_every_entry_in_its_style():
    out = _svg.key([("raw", "#444444", "dashed"), ("<b>", "#1f77b4", "line"), ("band", "#9ecae1", "box")])
    assert out.count("<li>") == 3 and "&lt;b&gt;" in out
    assert 'stroke="#444444" stroke-width="2" stroke-dasharray' in out
    assert '<rect x="1" y="2" width="22" height="8" fill="#9ecae1"/>' in out


def _stream(seed=0, n=600):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p**1.5).astype(int)
    return y, p


def test_binned_svg_draws_the_bins_band_and_histogram():
    y, p = _stream()
    svgs = plot.reliability_svgs({"a": p, "b": p**2}, y, n_bins=8, hist_bins=10, colors={"a": "#123456"})
    assert list(svgs) == ["a", "b"]
    for name, forecasts in [("a", p), ("b", p**2)]:
        import xml.etree.ElementTree as ET

        svg = ET.fromstring(svgs[name])
        to_x, (to_y, to_h) = svgr.axes(svg)
        bins = binned_reliability(y, forecasts, 8)
        dots = svgr.dots(svg, to_x, to_y)
        assert _close([d[0] for d in dots], [b.mean_prediction for b in bins])
        assert _close([d[1] for d in dots], [b.mean_outcome for b in bins])
        band = consistency_band(forecasts, "binned", n_bins=8, seed=0)
        bars = svgr.rects(svg, "band", to_x, to_y)
        assert _close([(r[0] + r[1]) / 2 for r in bars], band.x)
        assert _close([r[2] for r in bars], band.lower, 1e-3)  # a bar is >= 0.6 px high
        assert _close([r[3] for r in bars], np.maximum(band.upper, band.lower), 2e-3)
        counts, _ = np.histogram(forecasts, bins=10, range=(0, 1))
        hist = svgr.rects(svg, "hist", to_x, to_h)
        assert _close([r[0] for r in hist], np.arange(10) / 10)
        assert _close([r[3] for r in hist], counts / len(y), 2e-4)
    assert ET.fromstring(svgs["a"]).find(f"{svgr.NS}polyline[@data-name='a']").get("stroke") == "#123456"


def test_corp_svg_from_arrays_and_from_a_metric_state():
    import xml.etree.ElementTree as ET

    y, p = _stream(1)
    metric = CORP()
    for label, x in zip(y.tolist(), p.tolist()):
        metric.update(label, x)
    svgs = plot.reliability_svgs({"arrays": p, "metric": metric}, y, kind="corp", n_resamples=60)
    blocks = corp_reliability(y, p)
    for name in svgs:
        svg = ET.fromstring(svgs[name])
        to_x, (to_y, _) = svgr.axes(svg)
        ((xs, ys),) = svgr.curves(svg, to_x, to_y).values()
        assert _close(xs, [v for b in blocks for v in (b.score_min, b.score_max)])
        assert _close(ys, [b.value for b in blocks for _ in (0, 1)])
    svg = ET.fromstring(svgs["arrays"])
    to_x, (to_y, _) = svgr.axes(svg)
    band = consistency_band(p, "corp", n_resamples=60, seed=0)
    bx, lower, upper = svgr.band_polygon(svg, to_x, to_y)
    assert _close(bx, band.x) and _close(lower, band.lower) and _close(upper, band.upper)
    # the statistics above the diagram are the metric's decomposition
    texts = " ".join(t.text for t in ET.fromstring(svgs["metric"]).iter(f"{svgr.NS}text"))
    assert f"MCB {metric.mcb:.4f}" in texts and f"S {metric.get():.4f}" in texts


def test_reliability_svgs_from_an_ece_metric_and_its_errors():
    y, p = _stream(2)
    m = ECE(n_bins=5)
    for label, x in zip(y.tolist(), p.tolist()):
        m.update(label, x)
    svgs = plot.reliability_svgs({"m": m})
    assert f"ECE {m.get():.4f}" in svgs["m"]
    with pytest.raises(TypeError, match="The 'forecasts' argument of reliability_svgs must be"):
        plot.reliability_svgs([p])
    with pytest.raises(TypeError, match="The 'colors' argument of reliability_svgs must be"):
        plot.reliability_svgs({"m": m}, colors=["red"])
    with pytest.raises(ValueError, match="The 'kind' argument of reliability_svgs"):
        plot.reliability_svgs({"m": m}, kind="corp")


def test_multi_panel_functions_share_their_argument_checks():
    # reliability_svgs and reliability_diagrams check forecasts and colors alike
    # (plot._check_forecasts, plot._colors_by_name): colours match names by str(name)
    y, p = _stream(3, 200)
    svgs = plot.reliability_svgs({1: p, "b": p}, y, bands=None, colors={1: "#123456"})
    assert 'stroke="#123456"' in svgs["1"] and 'stroke="#123456"' not in svgs["b"]
    for f in (plot.reliability_svgs, plot.reliability_diagrams):
        for bad, name in (({}, "forecasts"), ("x", "forecasts")):
            with pytest.raises(TypeError, match=f"^The '{name}' argument of {f.__name__} must be a non-empty dict"):
                f(bad, y)
        with pytest.raises(TypeError, match=f"^The 'colors' argument of {f.__name__} must be a dict of name -> colour, or None. Got 'red' instead."):
            f({"a": p}, y, colors="red")


def test_reliability_svgs_need_no_matplotlib():
    code = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "from streamcal import plot\n"
        "out = plot.reliability_svgs({'a': [0.1, 0.5, 0.9, 0.7]}, [0, 1, 1, 0], n_resamples=20)\n"
        "print(out['a'][:4])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "<svg"
