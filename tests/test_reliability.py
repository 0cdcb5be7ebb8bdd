"""Tests of streamcal.metrics.reliability: the analysis moved out of streamcal.plot
(issue 14, part C). The oracles of the values are in tests/test_plot.py
(tests/references_plot.py); these guard the move itself: one home, the same objects
under the old names, no matplotlib or scipy at import, and the core PAV behind CORP.
"""

from __future__ import annotations

import json
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
    blocks = reliability.corp_reliability(p, y, weights=w)
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
