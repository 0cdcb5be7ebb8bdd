"""Tests of streamcal.metrics.reliability: the analysis moved out of streamcal.plot
(issue 14, part C). The oracles of the values are in tests/test_plot.py
(tests/references_plot.py); these guard the move itself: one home, the same objects
under the old names, no matplotlib or scipy at import, and the core PAV behind CORP.
"""

from __future__ import annotations

import json
import warnings
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from scipy.optimize import isotonic_regression

from streamcal import metrics
from streamcal.core.pav import _SMALL
from streamcal.metrics import reliability

NAMES = [
    "ConsistencyBand",
    "binned_reliability",
    "consistency_band",
    "consistency_band_from_bins",
    "corp_reliability",
    "multiclass_views",
]


@pytest.mark.parametrize("name", NAMES)
def test_old_names_in_plot_are_the_metrics_functions(name):
    from streamcal import plot

    assert getattr(plot, name) is getattr(reliability, name) is getattr(metrics, name)
    assert name in metrics.__all__ and name in plot.__all__


def test_importing_metrics_imports_neither_matplotlib_nor_scipy():
    code = textwrap.dedent(
        """
        import json, sys
        import streamcal.metrics
        print(json.dumps(sorted(m for m in sys.modules
                                if m.split(".")[0] in ("matplotlib", "scipy"))))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


@pytest.mark.parametrize("n", [5, _SMALL, _SMALL + 1, 3 * _SMALL])
@pytest.mark.parametrize("seed", range(4))
def test_corp_blocks_are_scipys_isotonic_fit(n, seed):
    # CORP now uses core.pav.pav_blocks (plain Python for short inputs, scipy beyond):
    # both must give the blocks of scipy's weighted isotonic fit of the distinct forecasts
    rng = np.random.default_rng(seed)
    p = np.round(rng.uniform(size=n), 2 if seed % 2 else 6)
    y = (rng.uniform(size=n) < p).astype(float)
    w = rng.uniform(0.5, 2.0, size=n)
    blocks = reliability.corp_reliability(y, p, weights=w)
    xs = np.unique(p)
    W = np.array([w[p == x].sum() for x in xs])
    S = np.array([(w * y)[p == x].sum() for x in xs])
    fit = isotonic_regression(S / W, weights=W).x
    got = np.concatenate([[b.value] * b.n_cells for b in blocks])
    np.testing.assert_allclose(got, fit, rtol=1e-12, atol=1e-12)
    assert sum(b.n_cells for b in blocks) == len(xs)
    assert sum(b.n_events for b in blocks) == n
    assert all(a.value < b.value for a, b in zip(blocks, blocks[1:]))
    assert [b.score_min for b in blocks] == [float(xs[i]) for i in
                                             np.cumsum([0] + [b.n_cells for b in blocks[:-1]])]


# ---------------------------------------------------- (y_true, y_prob), old order deprecated


def _events(seed=0, n=200):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    return (rng.uniform(size=n) < p).astype(np.int64), p


@pytest.mark.parametrize(
    "name, extra", [("binned_reliability", {"n_bins": 5}), ("corp_reliability", {})]
)
def test_old_order_still_works_with_a_deprecation_warning(name, extra):
    f = getattr(reliability, name)
    y, p = _events()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new order warns about nothing
        want = f(y, p, **extra)
    with pytest.warns(DeprecationWarning, match=rf"{name} takes \(y_true, y_prob\)"):
        assert f(p, y, **extra) == want  # positional, old order: read as (probs, labels)
    with pytest.warns(DeprecationWarning, match="'probs' and 'labels' arguments"):
        assert f(probs=p, labels=y, **extra) == want
    with pytest.raises(TypeError, match="cannot be combined"):
        f(y, probs=p, **extra)


def test_ambiguous_order_is_read_as_the_new_one():
    # forecasts that are all 0 or 1 cannot be told from labels: the new order wins
    y, p = [0, 1, 1, 0], [1, 1, 0, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bins = reliability.binned_reliability(y, p, n_bins=2)
    assert [(b.mean_prediction, b.mean_outcome) for b in bins] == [(0.0, 0.5), (1.0, 0.5)]


def test_old_order_of_multiclass_views_and_of_the_pairs_it_made():
    rng = np.random.default_rng(1)
    P = rng.dirichlet([1.0, 1.0, 1.0], size=50)
    c = rng.integers(0, 3, size=50)
    want = reliability.multiclass_views(c, P, "classwise")
    assert all(np.array_equal(v[0], (c == k)) for k, v in enumerate(want.values()))
    with pytest.warns(DeprecationWarning, match="first argument is two-dimensional"):
        old = reliability.multiclass_views(P, c, "classwise")
    with pytest.warns(DeprecationWarning, match="'probs' and 'labels' arguments"):
        kw = reliability.multiclass_views(probs=P, labels=c, view="classwise")
    for got in (old, kw):
        assert list(got) == list(want)
        assert all(np.array_equal(got[k][i], want[k][i]) for k in want for i in (0, 1))


def test_plot_functions_take_y_true_first_and_read_old_pairs():
    pytest.importorskip("matplotlib")
    from streamcal import plot

    y, p = _events(2)

    def line(fig):
        return fig.axes[0].lines[1].get_xydata()

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = line(plot.reliability_diagram(y, p, bands=None))
        pairs = line(plot.reliability_diagrams({"a": (y, p)}, bands=None))
        shared = line(plot.reliability_diagrams({"a": p}, y, bands=None))
    with pytest.warns(DeprecationWarning, match=r"reliability_diagram takes \(y_true"):
        old = line(plot.reliability_diagram(p, y, bands=None))
    with pytest.warns(DeprecationWarning, match="'probs' and 'labels' arguments"):
        kw = line(plot.reliability_diagram(probs=p, labels=y, bands=None))
    with pytest.warns(DeprecationWarning, match=r"reliability_diagrams takes \(y_true"):
        old_pairs = line(plot.reliability_diagrams({"a": (p, y)}, bands=None))
    with pytest.warns(DeprecationWarning, match="'labels' arguments of reliability_diagrams"):
        old_kw = line(plot.reliability_diagrams({"a": p}, labels=y, bands=None))
    for got in (pairs, shared, old, kw, old_pairs, old_kw):
        np.testing.assert_array_equal(got, new)


def test_binned_band_quantile_is_scipys_on_small_counts_and_at_ties():
    """The binomial quantile of consistency_band_from_bins (computed without scipy)
    equals scipy.stats.binom.ppf for every small count, at dyadic probabilities where
    the distribution function hits the levels exactly, and at very skewed ones."""
    from scipy.stats import binom

    from streamcal.metrics import ReliabilityBin, consistency_band_from_bins

    ns = np.repeat(np.arange(1, 41), 9)
    ps = np.tile([1 / 8, 1 / 4, 1 / 2, 3 / 4, 0.3, 0.01, 0.999, 1e-7, 1 - 1e-7], 40)
    big = np.array([10**6, 10**7, 5 * 10**6, 10**6])
    ns = np.concatenate([ns, big])
    ps = np.concatenate([ps, [1e-6, 0.5, 1 - 1e-6, 0.2]])
    bins = [ReliabilityBin(0.0, 1.0, float(n), float(p), 0.5) for n, p in zip(ns, ps)]
    # 0.5: the level whose quantiles (1/4, 3/4) are values of the distribution function
    # of n = 2, p = 1/2 (exact ties)
    for level in (0.5, 0.9, 0.98):
        band = consistency_band_from_bins(bins, level=level)
        np.testing.assert_array_equal(band.lower, binom.ppf((1 - level) / 2, ns, ps) / ns)
        np.testing.assert_array_equal(band.upper, binom.ppf((1 + level) / 2, ns, ps) / ns)


def test_binned_band_does_not_import_scipy():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from streamcal.metrics import ReliabilityBin, consistency_band_from_bins\n"
        "consistency_band_from_bins([ReliabilityBin(0.0, 0.5, 100.0, 0.3, 0.28)])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
