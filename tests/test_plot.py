"""Tests of streamcal.plot: the data behind the diagrams against oracles, the bands'
coverage, the drawings as PNG files, and the import without matplotlib.

Oracles: tests/references_plot.py (plain-Python binning, scikit-learn's
IsotonicRegression, brute-force resampling). Published CORP values on the Niamey data:
Dimitriadis, Gneiting and Jordan (2021), via tests/references_corp.py.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from scipy.special import expit, logit

import streamcal
from streamcal import plot
from streamcal.metrics import (
    CORP,
    ECE,
    ConfidenceECE,
    TopLabelECE,
    expected_calibration_error,
)
from tests import references_plot as ref

matplotlib = pytest.importorskip("matplotlib")

SEEDS = range(6)


def _stream(seed, n=300, ties=False, edges=False):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    if ties:
        p = np.round(p, 1)
    if edges:
        p[: n // 10] = 0.0
        p[n // 10 : n // 5] = 1.0
    y = (rng.uniform(size=n) < p).astype(np.int64)
    return p, y


def _png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


# ------------------------------------------------------------------ binned_reliability


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("seed", SEEDS)
def test_binned_matches_oracle(seed, strategy):
    for ties, edges in [(False, False), (True, False), (True, True)]:
        p, y = _stream(seed, ties=ties, edges=edges)
        for n_bins in (1, 3, 10):
            got = plot.binned_reliability(y, p, n_bins, strategy)
            want = ref.binned_points(p, y, n_bins, strategy)
            np.testing.assert_allclose(
                np.array(got, dtype=float), np.array(want), rtol=0, atol=1e-12
            )


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_binned_integer_weights_are_repetitions(strategy):
    p, y = _stream(0, ties=True)
    w = np.random.default_rng(1).integers(0, 4, size=len(p))
    got = plot.binned_reliability(y, p, 7, strategy, weights=w)
    P, Y = ref.expand(p, y, w)
    want = plot.binned_reliability(Y, P, 7, strategy)
    np.testing.assert_allclose(
        np.array(got, dtype=float), np.array(want, dtype=float), atol=1e-12
    )
    np.testing.assert_allclose(
        np.array(got, dtype=float),
        np.array(ref.binned_points(p, y, 7, strategy, w)),
        atol=1e-12,
    )


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_binned_ece_is_the_batch_ece(strategy):
    for seed in SEEDS:
        p, y = _stream(seed, ties=seed % 2 == 0)
        bins = plot.binned_reliability(y, p, 8, strategy)
        total = sum(b.weight for b in bins)
        ece = (
            sum(b.weight * abs(b.mean_outcome - b.mean_prediction) for b in bins)
            / total
        )
        assert ece == pytest.approx(
            expected_calibration_error(y, p, 8, strategy), abs=1e-12
        )


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_binned_matches_the_ece_metric_bins(strategy):
    p, y = _stream(3, ties=True, edges=True)
    w = np.random.default_rng(2).integers(0, 3, size=len(p)).astype(float)
    m = ECE(n_bins=6, strategy=strategy)
    for a, b, c in zip(p.tolist(), y.tolist(), w.tolist()):
        m.update(b, a, w=c)
    got = plot.binned_reliability(y, p, 6, strategy, weights=w)
    assert len(got) == len(m.bins)
    np.testing.assert_allclose(
        np.array(got, dtype=float), np.array(m.bins, dtype=float), atol=1e-12
    )


def test_binned_all_one_label_and_single_event():
    bins = plot.binned_reliability([1, 1, 1], [0.2, 0.9, 0.95], 2)
    assert [b.mean_outcome for b in bins] == [1.0, 1.0]
    (b,) = plot.binned_reliability([0], [1.0], 10)
    assert (b.lower, b.upper, b.weight, b.mean_prediction, b.mean_outcome) == (
        0.9,
        1.0,
        1.0,
        1.0,
        0.0,
    )


# ------------------------------------------------------------------ corp_reliability


@pytest.mark.parametrize("seed", SEEDS)
def test_corp_matches_sklearn_and_online_isotonic(seed):
    p, y = _stream(seed, ties=seed % 2 == 0, edges=seed % 3 == 0)
    w = np.random.default_rng(seed + 10).choice([0.0, 0.5, 1.0, 3.0], size=len(p))
    for weights in (None, w):
        blocks = plot.corp_reliability(y, p, weights)
        fit = ref.corp_fit(p, y, weights)
        for x, v in fit.items():
            (b,) = [b for b in blocks if b.score_min <= x <= b.score_max]
            assert b.value == pytest.approx(v, abs=1e-12)
        assert sum(b.n_cells for b in blocks) == len(fit)
        values = [b.value for b in blocks]
        assert values == sorted(values) and len(set(values)) == len(values)
        cal = streamcal.OnlineIsotonic()
        cal.learn_many(p, y, w=weights)
        online = cal.blocks
        assert len(online) == len(blocks)
        for a, b in zip(online, blocks):
            assert (a.score_min, a.score_max, a.n_events, a.n_cells) == (
                b.score_min, b.score_max, b.n_events, b.n_cells,
            )  # fmt: skip
            assert a.value == pytest.approx(b.value, abs=1e-12)
            assert a.weight == pytest.approx(b.weight, rel=1e-12)


def test_corp_decomposition_shown_matches_published_niamey_values():
    from streamcal.datasets import niamey_precipitation
    from tests.references_corp import NIAMEY_PUBLISHED

    data = niamey_precipitation()
    for name, (s, mcb, dsc, unc) in NIAMEY_PUBLISHED.items():
        fig = plot.reliability_diagram(data["obs"], data[name], kind="corp", bands=None)
        words = fig.axes[0].texts[0].get_text().split()
        shown = dict(zip(words[0::2], words[1::2]))
        for label, value in [("MCB", mcb), ("DSC", dsc), ("UNC", unc), ("S", s)]:
            assert float(shown[label]) == pytest.approx(value, abs=5e-5), (name, label)
        assert shown["n"] == "92"


# ------------------------------------------------------------------ consistency bands


@pytest.mark.parametrize("kind", ["binned", "corp"])
@pytest.mark.parametrize("seed", [0, 1])
def test_band_matches_brute_force_resampling(kind, seed):
    p, _ = _stream(seed, n=80, ties=True, edges=seed == 1)
    w = np.random.default_rng(seed).choice([0.0, 1.0, 2.0], size=len(p))
    for strategy in ("uniform", "quantile"):
        band = plot.consistency_band(
            p,
            kind,
            n_bins=5,
            strategy=strategy,
            weights=w,
            level=0.8,
            n_resamples=40,
            seed=seed,
        )
        x, lo, hi = ref.resampled_band(
            p, kind, 0.8, 40, seed, n_bins=5, strategy=strategy, weights=w
        )
        np.testing.assert_allclose(band.x, x, atol=1e-12)
        np.testing.assert_allclose(band.lower, lo, atol=1e-12)
        np.testing.assert_allclose(band.upper, hi, atol=1e-12)
        assert band.level == 0.8


def test_band_is_reproducible_and_depends_on_the_seed():
    p, _ = _stream(0)
    a = plot.consistency_band(p, "corp", n_resamples=30, seed=5)
    b = plot.consistency_band(p, "corp", n_resamples=30, seed=5)
    c = plot.consistency_band(p, "corp", n_resamples=30, seed=6)
    assert np.array_equal(a.lower, b.lower) and np.array_equal(a.upper, b.upper)
    assert not np.array_equal(a.upper, c.upper)


def test_corp_band_thins_many_distinct_forecasts():
    p = np.random.default_rng(0).uniform(size=3000)
    band = plot.consistency_band(p, "corp", n_resamples=3)
    assert len(band.x) == 1000
    assert band.x[0] == p.min() and band.x[-1] == p.max()
    assert np.all(np.diff(band.x) > 0) and np.isin(band.x, p).all()


def _inside(band, xs, ys):
    pos = {x: i for i, x in enumerate(band.x.tolist())}
    hits = [
        band.lower[pos[x]] <= y <= band.upper[pos[x]]
        for x, y in zip(xs, ys)
        if x in pos
    ]
    return sum(hits), len(hits)


def test_band_covers_calibrated_forecasts_at_about_the_nominal_rate():
    # Under calibration the observed curve and the resampled curves have the same
    # distribution, so each point lies in the 90% band with probability about 0.9.
    inside = {"binned": [0, 0], "corp": [0, 0]}
    for seed in range(12):
        rng = np.random.default_rng(100 + seed)
        p = np.round(rng.beta(2, 3, size=400), 2)
        y = rng.uniform(size=400) < p
        bins = plot.binned_reliability(y, p, 10)
        band = plot.consistency_band(p, "binned", n_resamples=200, seed=seed)
        h, n = _inside(
            band, [b.mean_prediction for b in bins], [b.mean_outcome for b in bins]
        )
        inside["binned"][0] += h
        inside["binned"][1] += n
        fit = ref.corp_fit(p, y)
        band = plot.consistency_band(p, "corp", n_resamples=200, seed=seed)
        h, n = _inside(band, list(fit), list(fit.values()))
        inside["corp"][0] += h
        inside["corp"][1] += n
    for kind, (h, n) in inside.items():
        assert 0.82 <= h / n <= 0.97, (kind, h / n)


def test_band_excludes_a_miscalibrated_forecaster():
    rng = np.random.default_rng(7)
    truth = rng.uniform(0.05, 0.95, size=2000)
    y = rng.uniform(size=2000) < truth
    p = expit(2.0 * logit(truth))  # over-confident
    bins = plot.binned_reliability(y, p, 10)
    band = plot.consistency_band(p, "binned", n_resamples=200)
    h, n = _inside(
        band, [b.mean_prediction for b in bins], [b.mean_outcome for b in bins]
    )
    assert h / n <= 0.4  # 3 of 10: the bins near 1/2, where the curves cross
    fit = ref.corp_fit(p, y)
    band = plot.consistency_band(p, "corp", n_resamples=100)
    h, n = _inside(band, list(fit), list(fit.values()))
    assert h / n <= 0.3  # 18%


def test_band_from_bins_is_binomial_and_matches_resampling_for_equal_forecasts():
    # every forecast of a bin at the same value: the resampled rate is Binomial / n
    p = np.repeat([0.05, 0.3, 0.5, 0.8], [40, 100, 60, 200])
    bins = plot.binned_reliability(np.zeros(len(p)), p, 10)
    from_bins = plot.consistency_band_from_bins(bins, 0.9)
    resampled = plot.consistency_band(p, "binned", level=0.9, n_resamples=4000, seed=1)
    np.testing.assert_allclose(from_bins.x, resampled.x)
    n = np.array([40, 100, 60, 200])
    assert np.all(np.abs(from_bins.lower - resampled.lower) <= 1.01 / n)
    assert np.all(np.abs(from_bins.upper - resampled.upper) <= 1.01 / n)
    # spread forecasts within a bin: the binomial band is the wider one (Hoeffding)
    q = np.random.default_rng(0).uniform(size=2000)
    bins = plot.binned_reliability(np.zeros(len(q)), q, 5)
    wide = plot.consistency_band_from_bins(bins, 0.9)
    narrow = plot.consistency_band(q, "binned", n_bins=5, n_resamples=1000)
    assert np.all(wide.upper - wide.lower >= narrow.upper - narrow.lower - 1e-3)


# ------------------------------------------------------------------ multiclass views


def test_multiclass_views_against_loops():
    rng = np.random.default_rng(0)
    P = rng.dirichlet([1.0, 2.0, 1.0], size=200)
    P[:5] = [1 / 3, 1 / 3, 1 / 3]  # ties: the first column is the top class
    labels = np.array([rng.choice(3, p=row) for row in P])
    conf = plot.multiclass_views(labels, P)["confidence"]
    assert conf[1].tolist() == [max(row) for row in P.tolist()]
    assert conf[0].tolist() == [
        float(row.index(max(row)) == c) for row, c in zip(P.tolist(), labels)
    ]
    top = plot.multiclass_views(labels, P, "top-label")
    for k in range(3):
        rows = [i for i in range(200) if P[i].tolist().index(max(P[i])) == k]
        assert top[f"predicted {k}"][1].tolist() == [P[i, k] for i in rows]
        assert top[f"predicted {k}"][0].tolist() == [
            float(labels[i] == k) for i in rows
        ]
    cw = plot.multiclass_views(labels, P, "classwise")
    assert list(cw) == ["class 0", "class 1", "class 2"]
    for k in range(3):
        assert cw[f"class {k}"][1].tolist() == P[:, k].tolist()
        assert cw[f"class {k}"][0].tolist() == (labels == k).astype(float).tolist()
    named = plot.multiclass_views(
        np.array(["a", "b", "c"])[labels], P, "classwise", classes="abc"
    )
    assert list(named) == ["class a", "class b", "class c"]
    assert named["class b"][0].tolist() == cw["class 1"][0].tolist()


def test_multiclass_views_errors():
    with pytest.raises(ValueError, match="must be an array of shape \\(n, K\\)"):
        plot.multiclass_views([0], [0.5, 0.5])
    with pytest.raises(
        ValueError,
        match="'y_true' argument of multiclass_views must be a sequence of classes",
    ):
        plot.multiclass_views([2], [[0.5, 0.5]])
    with pytest.raises(
        ValueError, match="'view' argument of multiclass_views must be a str among"
    ):
        plot.multiclass_views([1], [[0.5, 0.5]], "top")
    with pytest.raises(
        ValueError,
        match="'y_prob' argument of multiclass_views must be a real number in",
    ):
        plot.multiclass_views([1], [[1.5, -0.5]])


# ------------------------------------------------------------------ drawing


def test_single_diagrams_from_arrays_are_pngs_of_the_right_size(tmp_path):
    p, y = _stream(0)
    for kind in ("binned", "corp"):
        path = tmp_path / f"{kind}.png"
        fig = plot.reliability_diagram(
            y, p, kind=kind, n_resamples=20, title=kind, path=path, dpi=50
        )
        w, h = fig.get_size_inches()
        assert _png_size(path) == (round(w * 50), round(h * 50))
        assert os.path.getsize(path) > 5000
        main, hist = fig.axes
        assert main.get_title() == kind
        assert main.get_legend() is not None
        assert len(hist.patches) == 20  # the histogram's bars
        band_artists = main.collections if kind == "corp" else main.patches
        assert len(band_artists) >= 1


def test_several_diagrams_side_by_side(tmp_path):
    p, y = _stream(1)
    cal = streamcal.OnlineIsotonic()
    cal.learn_many(p, y)
    path = tmp_path / "several.png"
    fig = plot.reliability_diagrams(
        {"raw": p, "squared": p**2, "isotonic": cal.predict_many(p)}, y,
        kind="corp", n_resamples=10, suptitle="three", path=path, dpi=40,
    )  # fmt: skip
    w, h = fig.get_size_inches()
    assert _png_size(path) == (round(w * 40), round(h * 40))
    titles = [a.get_title() for a in fig.axes if a.get_title()]
    assert titles == ["raw", "squared", "isotonic"]
    mains = fig.axes[0::2]
    assert all(a.get_shared_x_axes().joined(mains[0], a) for a in mains)
    assert all(a.get_shared_y_axes().joined(mains[0], a) for a in mains)
    assert sum(a.get_legend() is not None for a in fig.axes) == 1
    # the histograms share one scale
    assert len({a.get_ylim() for a in fig.axes[1::2]}) == 1
    fig = plot.reliability_diagrams(
        {str(k): p for k in range(6)}, y, bands=None, ncols=4
    )
    assert len(fig.axes) == 12


def test_diagrams_from_metric_states(tmp_path):
    p, y = _stream(2, ties=True)
    ece, corp, cal = ECE(n_bins=8), CORP(), streamcal.OnlineIsotonic()
    for a, b in zip(p.tolist(), y.tolist()):
        ece.update(b, a)
        corp.update(b, a)
        cal.learn_one(a, b)
    path = tmp_path / "ece.png"
    fig = plot.reliability_diagram(metric=ece, path=path, dpi=40)
    assert _png_size(path)[0] > 100
    text = fig.axes[0].texts[0].get_text()
    assert f"ECE {ece.get():.4f}" in text
    fig = plot.reliability_diagram(metric=corp, path=tmp_path / "corp.png", dpi=40)
    text = fig.axes[0].texts[0].get_text()
    # a CORP metric keeps its distinct forecasts: the band is drawn (issue 12)
    assert f"MCB {corp.mcb:.4f}" in text and "no band" not in text
    assert [c.get_label() for c in fig.axes[0].collections] == ["90% consistency band"]
    # same curve as the arrays give
    line = fig.axes[0].lines[1]
    blocks = plot.corp_reliability(y, p)
    assert line.get_xdata().tolist() == [
        v for b in blocks for v in (b.score_min, b.score_max)
    ]
    path = tmp_path / "states.png"
    plot.reliability_diagrams(
        {"ECE": ece, "CORP": corp, "OnlineIsotonic": cal}, path=path, dpi=40
    )
    assert os.path.getsize(path) > 5000
    with pytest.raises(
        ValueError, match="'kind' argument of reliability_diagram must match the metric"
    ):
        plot.reliability_diagram(metric=ece, kind="corp")


def test_multiclass_diagrams(tmp_path):
    rng = np.random.default_rng(0)
    P = rng.dirichlet([2.0, 1.0, 1.0], size=300)
    labels = np.array([rng.choice(3, p=row) for row in P])
    conf, top = ConfidenceECE(n_bins=5), TopLabelECE(n_bins=5)
    for row, c in zip(P.tolist(), labels.tolist()):
        d = dict(enumerate(row))
        conf.update(c, d)
        top.update(c, d)
    views = plot.multiclass_views(labels, P, "top-label")
    fig = plot.reliability_diagrams(
        views, n_resamples=10, path=tmp_path / "top.png", dpi=40
    )
    assert [a.get_title() for a in fig.axes if a.get_title()] == list(views)
    # the confidence view drawn from arrays and from the metric's bins: same points
    yv, x = plot.multiclass_views(labels, P)["confidence"]
    fig = plot.reliability_diagrams(
        {"arrays": (yv, x), "metric": conf}, n_bins=5, bands=None
    )
    a, b = fig.axes[0].lines[1], fig.axes[2].lines[1]
    np.testing.assert_allclose(a.get_xydata(), b.get_xydata(), atol=1e-12)
    fig = plot.reliability_diagrams(
        top.bins_by_class, path=tmp_path / "bins.png", dpi=40
    )
    assert len(fig.axes) == 2 * len(top.bins_by_class)


def test_draw_into_given_axes(tmp_path):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 4))
    ax1, ax2 = fig.subplots(1, 2)
    p, y = _stream(4)
    assert plot.reliability_diagram(y, p, ax=ax1, n_resamples=10) is fig
    plot.reliability_diagram(y, p, ax=ax2, kind="corp", bands=None)
    assert len(fig.axes) == 4
    plot.save_png(fig, tmp_path / "given.png", dpi=30)
    assert _png_size(tmp_path / "given.png") == (240, 120)
    # an axes placed by hand: the histogram is appended below it
    fig = Figure(figsize=(4, 5))
    ax = fig.add_axes([0.15, 0.35, 0.8, 0.6])
    plot.reliability_diagram(y, p, ax=ax, bands=None)
    plot.save_png(fig, tmp_path / "by_hand.png", dpi=30)  # places the axes
    assert len(fig.axes) == 2 and fig.axes[1].get_position().y1 <= ax.get_position().y0


def test_weights_in_the_diagram_equal_repetition():
    p, y = _stream(5, n=60, ties=True)
    w = np.random.default_rng(0).integers(0, 3, size=len(p))
    P, Y = ref.expand(p, y, w)
    a = plot.reliability_diagram(y, p, weights=w, bands=None)
    b = plot.reliability_diagram(Y, P, bands=None)
    assert a.axes[0].texts[0].get_text() == b.axes[0].texts[0].get_text()
    np.testing.assert_allclose(
        a.axes[0].lines[1].get_xydata(), b.axes[0].lines[1].get_xydata()
    )


def test_argument_errors():
    p, y = _stream(0, n=20)
    with pytest.raises(
        ValueError, match="must be given, or else 'metric', but not both"
    ):
        plot.reliability_diagram()
    with pytest.raises(
        ValueError, match="must be given, or else 'metric', but not both"
    ):
        plot.reliability_diagram(y, p, metric=CORP())
    with pytest.raises(TypeError, match="'y_true' argument of reliability_diagram"):
        plot.reliability_diagram(y_prob=p)
    with pytest.raises(
        ValueError, match="'kind' argument of reliability_diagram must be a str among"
    ):
        plot.reliability_diagram(y, p, kind="isotonic")
    with pytest.raises(
        ValueError,
        match="'bands' argument of reliability_diagram must be a real number in \\(0, 1\\)",
    ):
        plot.reliability_diagram(y, p, bands=1.0)
    with pytest.raises(
        ValueError,
        match="'metric' argument of reliability_diagram must hold at least one",
    ):
        plot.reliability_diagram(metric=CORP())
    with pytest.raises(
        TypeError,
        match="'metric' argument of reliability_diagram must be an object with 'bins'",
    ):
        plot.reliability_diagram(metric=streamcal.OnlinePlatt())
    with pytest.raises(
        ValueError,
        match="'y_prob' argument of binned_reliability must be a real number in \\[0, 1\\]",
    ):
        plot.binned_reliability([0, 1], [0.5, 1.5])
    with pytest.raises(
        ValueError, match="'y_true' argument of corp_reliability must be a binary label"
    ):
        plot.corp_reliability([0, 2], [0.5, 0.5])
    with pytest.raises(
        ValueError, match="must hold at least one event of positive weight"
    ):
        plot.corp_reliability([1], [0.5], weights=[0.0])
    with pytest.raises(
        ValueError,
        match="'n_resamples' argument of consistency_band must be an int >= 1",
    ):
        plot.consistency_band(p, n_resamples=0)
    with pytest.raises(TypeError, match="'y_true' argument of reliability_diagrams"):
        plot.reliability_diagrams({"a": p})
    with pytest.raises(
        TypeError,
        match="'forecasts' argument of reliability_diagrams must be a non-empty dict",
    ):
        plot.reliability_diagrams([p], y)


def test_import_and_data_functions_without_matplotlib():
    # a fresh interpreter in which importing matplotlib fails
    code = textwrap.dedent(
        """
        import sys
        sys.modules["matplotlib"] = None
        import streamcal.plot as plot
        assert len(plot.binned_reliability([0, 1], [0.1, 0.9], 2)) == 2
        plot.consistency_band([0.1, 0.9], "corp", n_resamples=5)
        try:
            plot.reliability_diagram([0, 1], [0.1, 0.9])
        except ImportError as exc:
            print(exc)
        else:
            raise SystemExit("no ImportError")
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    assert "pip install 'streamcal[plot]'" in out.stdout


# ----------------------------------------------------------------- issue 12, part 7


def _cells_band_oracle(xs, ws, ns, kind, level, n_resamples, seed, n_bins=10):
    """The band with counts by brute force: per resample, ``rng.binomial(ns, xs)``
    (one draw per cell, cell order, the generator's stream row by row); each cell's
    outcome sum is ``ws / ns`` times its draw; refit with the plain oracles."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n_resamples):
        sums = rng.binomial(ns, xs) * (ws / ns)
        if kind == "binned":
            pts = ref.binned_points(xs, sums / ws, n_bins, "uniform", ws)
            rows.append([pt[4] for pt in pts])
        else:
            fit = ref.corp_fit(xs, sums / ws, ws)
            rows.append([fit[x] for x in sorted(fit)])
    if kind == "binned":
        x = [pt[3] for pt in ref.binned_points(xs, 0 * xs, n_bins, "uniform", ws)]
    else:
        x = sorted(set(xs.tolist()))
    qs = ((1.0 - level) / 2.0, (1.0 + level) / 2.0)
    lo, hi = np.quantile(np.array(rows), qs, axis=0)
    return np.array(x), lo, hi


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kind", ["corp", "binned"])
def test_band_with_counts_equals_the_brute_force_oracle(seed, kind):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 60))
    xs = rng.permutation(np.unique(np.round(rng.uniform(size=m), 3)))
    xs[: max(1, len(xs) // 8)] = [0.0, 1.0][seed % 2]  # edge forecasts, repeated
    xs = np.unique(xs)  # cells are distinct forecasts
    ns = rng.integers(1, 9, size=len(xs))
    ws = ns * (0.5 if seed % 3 == 0 else 1.0)  # equal weights inside a cell
    band = plot.consistency_band(
        xs, kind, weights=ws, counts=ns, level=0.8, n_resamples=40, seed=seed
    )
    x, lo, hi = _cells_band_oracle(xs, ws, ns, kind, 0.8, 40, seed)
    np.testing.assert_allclose(band.x, x, rtol=0, atol=1e-12)
    np.testing.assert_allclose(band.lower, lo, rtol=0, atol=1e-12)
    np.testing.assert_allclose(band.upper, hi, rtol=0, atol=1e-12)
    # the same seed gives the same band; weights default to the counts
    again = plot.consistency_band(
        xs, kind, counts=ns.tolist(), level=0.8, n_resamples=40, seed=seed
    )
    if seed % 3:
        np.testing.assert_array_equal(again.lower, band.lower)
        np.testing.assert_array_equal(again.upper, band.upper)


def test_band_with_counts_has_the_distribution_of_the_event_band():
    # the same events, as arrays (one Bernoulli each) and as cells (one binomial per
    # distinct forecast): the two bands estimate the same quantiles
    rng = np.random.default_rng(7)
    p = np.round(rng.uniform(size=2000), 2)
    xs, ns = np.unique(p, return_counts=True)
    for kind in ("binned", "corp"):
        a = plot.consistency_band(p, kind, n_resamples=1500, seed=1)
        b = plot.consistency_band(xs, kind, counts=ns, n_resamples=1500, seed=2)
        np.testing.assert_allclose(a.x, b.x, rtol=1e-14)
        assert np.max(np.abs(a.lower - b.lower)) < 0.06
        assert np.max(np.abs(a.upper - b.upper)) < 0.06
        assert abs(np.mean(a.upper - a.lower) - np.mean(b.upper - b.lower)) < 0.01


def test_band_counts_are_checked():
    with pytest.raises(TypeError, match="'counts' argument of consistency_band must be"):
        plot.consistency_band([0.2, 0.4], counts=[1])
    with pytest.raises(TypeError, match="'counts' argument of consistency_band must be"):
        plot.consistency_band([0.2, 0.4], counts=[1.5, 2])
    with pytest.raises(ValueError, match="integers >= 1. Got 0 instead"):
        plot.consistency_band([0.2, 0.4], counts=[1, 0])
    with pytest.raises(ValueError, match="'weights' argument of consistency_band must hold positive"):
        plot.consistency_band([0.2, 0.4], counts=[1, 2], weights=[1.0, 0.0])
    with pytest.raises(ValueError, match="'probs' argument of consistency_band must hold at least one"):
        plot.consistency_band([], counts=[])


def _corp_metric(p, y):
    m = CORP()
    for a, b in zip(p.tolist(), y.tolist()):
        m.update(b, a)
    return m


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_corp_metric_state_gets_the_band_of_its_cells(seed, monkeypatch):
    p, y = _stream(seed, n=400, ties=seed == 0, edges=seed == 1)
    m = _corp_metric(p, y)
    fig = plot.reliability_diagram(metric=m, n_resamples=30, seed=seed)
    band = fig.axes[0].collections[0]
    assert band.get_label() == "90% consistency band"
    xs, ns = np.unique(p, return_counts=True)
    expected = plot.consistency_band(xs, "corp", counts=ns, n_resamples=30, seed=seed)
    path = band.get_paths()[0].vertices
    # fill_between's outline: the lower curve forwards, then the upper one backwards
    k = len(expected.x)
    np.testing.assert_allclose(path[1 : k + 1, 1], expected.lower, atol=1e-12)
    np.testing.assert_allclose(path[k + 2 : 2 * k + 2, 1][::-1], expected.upper, atol=1e-12)
    # reproducible: the default seed draws the same band twice
    v1 = plot.reliability_diagram(metric=m, n_resamples=30).axes[0].collections[0]
    v2 = plot.reliability_diagram(metric=m, n_resamples=30).axes[0].collections[0]
    np.testing.assert_array_equal(v1.get_paths()[0].vertices, v2.get_paths()[0].vertices)
    # beyond the cap, adjacent cells pool into groups of about equal counts, each at
    # its mean forecast: group g holds the cells with floor(7 * events before / n) = g
    monkeypatch.setattr(plot, "_MAX_BAND_CELLS", 7)
    fig = plot.reliability_diagram(metric=m, n_resamples=30, seed=seed)
    before = np.cumsum(ns) - ns
    group = (7 * before) // ns.sum()
    X = [float(np.mean(np.repeat(xs[group == g], ns[group == g]))) for g in np.unique(group)]
    N = [int(ns[group == g].sum()) for g in np.unique(group)]
    expected = plot.consistency_band(X, "corp", counts=N, n_resamples=30, seed=seed)
    path = fig.axes[0].collections[0].get_paths()[0].vertices
    k = len(expected.x)
    assert k <= 7
    np.testing.assert_allclose(path[1 : k + 1, 0], X, atol=1e-12)
    np.testing.assert_allclose(path[1 : k + 1, 1], expected.lower, atol=1e-12)
    np.testing.assert_allclose(path[k + 2 : 2 * k + 2, 1][::-1], expected.upper, atol=1e-12)


def test_pool_cells_keeps_totals_and_never_splits_a_cell():
    rng = np.random.default_rng(3)
    xs = np.unique(rng.uniform(size=500))
    ns = rng.integers(1, 5, size=len(xs))
    ws = ns * rng.uniform(0.5, 2.0, size=len(xs))
    X, W, N = plot._pool_cells(xs, ws, ns, 40)
    assert len(X) <= 40 and np.all(np.diff(X) > 0)
    assert N.sum() == ns.sum() and abs(W.sum() - ws.sum()) < 1e-9
    # every group is a run of whole cells: its count is a sum of consecutive counts
    bounds = np.searchsorted(np.cumsum(ns), np.cumsum(N))
    assert np.array_equal(np.cumsum(ns)[bounds], np.cumsum(N))
    same = plot._pool_cells(xs, ws, ns, 500)
    assert all(np.array_equal(a, b) for a, b in zip(same, (xs, ws, ns)))


def _hist(fig):
    hax = fig.axes[1]
    return (
        np.array([r.get_x() for r in hax.patches]),
        np.array([r.get_width() for r in hax.patches]),
        np.array([r.get_height() for r in hax.patches]),
        hax.get_ylabel(),
    )


def test_histogram_bars_read_as_their_label_says():
    # issue 12: "share per 0.05 of forecast" over bars 0.1 wide, the first bar reading
    # 0.39 while 78% of the forecasts were in it
    rng = np.random.default_rng(0)
    p = np.where(rng.uniform(size=1000) < 0.78, rng.uniform(0, 0.1, 1000), rng.uniform(0.1, 1, 1000))
    y = (rng.uniform(size=1000) < p).astype(int)
    ece = ECE(n_bins=10)
    for a, b in zip(p.tolist(), y.tolist()):
        ece.update(b, a)
    _, widths, heights, label = _hist(plot.reliability_diagram(metric=ece, bands=None))
    total = sum(b.weight for b in ece.bins)
    np.testing.assert_allclose(heights, [b.weight / total for b in ece.bins], atol=1e-15)
    assert heights[0] == np.mean(p < 0.1) and np.allclose(widths, 0.1)
    assert label == "share per bar\n(0.1 wide)"
    # from arrays: 20 bars 0.05 wide, each its share of the events
    _, widths, heights, label = _hist(plot.reliability_diagram(y, p, bands=None))
    counts, _ = np.histogram(p, bins=20, range=(0, 1))
    np.testing.assert_allclose(heights, counts / 1000, atol=1e-15)
    assert label == "share per bar\n(0.05 wide)" and abs(heights.sum() - 1) < 1e-12
    # equal-mass bins of unequal widths: the label does not name a width
    q = ECE(n_bins=4, strategy="quantile")
    for a, b in zip(p.tolist(), y.tolist()):
        q.update(b, a)
    _, widths, heights, label = _hist(plot.reliability_diagram(metric=q, bands=None))
    assert label == "share of forecasts\nper bar" and abs(heights.sum() - 1) < 1e-12
    # a CORP state: the blocks' weights spread over 20 bars, shares again
    _, widths, heights, label = _hist(
        plot.reliability_diagram(metric=_corp_metric(p, y), bands=None)
    )
    assert label == "share per bar\n(0.05 wide)" and abs(heights.sum() - 1) < 1e-12


def test_calibrator_colors_are_fixed_by_name():
    from streamcal import registry

    names = ["raw", *registry.CALIBRATOR_NAMES]
    colors = [plot.calibrator_color(n) for n in names]
    assert len(set(colors)) == len(colors)  # binary names all differ
    mc = [plot.calibrator_color(n) for n in ["raw", *registry.MULTICLASS_CALIBRATOR_NAMES]]
    assert len(set(mc)) == len(mc)
    assert all(n in plot._NAME_COLORS for n in names + list(registry.MULTICLASS_CALIBRATOR_NAMES))
    # other names: a stable hash, the same in another interpreter whatever its
    # PYTHONHASHSEED, and never a colour of the table
    others = ["isotonic:resolution=0.0001", "my model", "platt:lr=0.1"]
    code = f"from streamcal.plot import calibrator_color; print([calibrator_color(n) for n in {others!r}])"
    outs = set()
    for hashseed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hashseed}
        run = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        outs.add(run.stdout.strip())
    assert outs == {str([plot.calibrator_color(n) for n in others])}
    assert not {plot.calibrator_color(n) for n in others} & set(plot._NAME_COLORS.values())
    with pytest.raises(TypeError, match="'name' argument of calibrator_color must be a str"):
        plot.calibrator_color(3)


def test_reliability_diagrams_draw_each_name_in_its_color():
    p, y = _stream(0)
    fig = plot.reliability_diagrams(
        {"platt": p, "other": p**2}, y, bands=None, colors={"platt": "#2ca02c"}
    )
    curves = [a.lines[1].get_color() for a in fig.axes if a.get_title()]
    assert curves == ["#2ca02c", plot._BINNED_COLOR]
    with pytest.raises(TypeError, match="'colors' argument of reliability_diagrams must be"):
        plot.reliability_diagrams({"a": p}, y, colors=["red"])


def test_consistency_band_from_bins_is_scipys_binomial_quantile():
    """The binned band is scipy.stats.binom.ppf of each bin's count and mean forecast
    (computed without importing scipy.stats), edges p = 0, 1 and n = 1 included."""
    from scipy.stats import binom

    from streamcal.metrics import ReliabilityBin
    from streamcal.plot import consistency_band_from_bins

    rng = np.random.default_rng(3)
    n = np.concatenate([rng.integers(1, 60, 300), rng.integers(1, 10**6, 300), [1, 1, 7, 7]])
    p = np.concatenate([rng.random(600), [0.0, 1.0, 0.0, 1.0]])
    p[:40] = np.round(p[:40], 1)
    bins = [ReliabilityBin(0.0, 1.0, float(k), float(x), 0.5) for k, x in zip(n, p)]
    for level in (0.9, 0.95, 0.99, 0.5):
        band = consistency_band_from_bins(bins, level=level)
        np.testing.assert_array_equal(band.lower, binom.ppf((1 - level) / 2, n, p) / n)
        np.testing.assert_array_equal(band.upper, binom.ppf((1 + level) / 2, n, p) / n)


def test_calibrators_drawn_together_get_distinct_colors():
    """An outside check: ``isotonic:window_size=500`` and ``...=5000`` hash to one
    colour, and a replay report drew both sweeps in the same red. The colours of one
    report are told apart (up to the 20 hashed colours); the first name of a colliding
    pair, and every registry name, keeps its own colour."""
    from streamcal._colors import HASHED_COLORS, calibrator_colors
    from streamcal.report import _colors

    names = ["raw", "isotonic", *[f"isotonic:window_size={n}" for n in range(100, 2100, 100)]]
    colors = calibrator_colors(names)
    assert len(set(colors[n] for n in names[2:])) == len(HASHED_COLORS)
    assert colors["raw"] == plot.calibrator_color("raw")
    assert colors["isotonic"] == plot.calibrator_color("isotonic")
    assert colors[names[2]] == plot.calibrator_color(names[2])
    pair = ["isotonic:window_size=500", "isotonic:window_size=5000"]
    assert plot.calibrator_color(pair[0]) == plot.calibrator_color(pair[1])
    assert len(set(_colors({name: None for name in pair}).values())) == 2
    assert calibrator_colors(pair) == calibrator_colors(list(pair))  # the same every run
