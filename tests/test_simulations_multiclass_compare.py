"""The multiclass comparison (``simulations/multiclass_compare.py``): its scores are the
plain formulas (NLL, Brier, accuracy, zeros) on the forecasts after the burn-in, its
ranks give ties their mean rank and leave out a calibrator that failed, its streams are
what its docstring says (the synthetic truth is calibrated and the forecast is not; the
ImageSegments log starts where the classifier knows every class), and every calibrator
of the registry is compared."""

from __future__ import annotations

import numpy as np
import pytest

from streamcal.registry import MULTICLASS_CALIBRATOR_NAMES
from tests.simulation_scripts import load

mc = load("multiclass_compare")


def test_every_registry_calibrator_and_both_venn_abers_reductions_are_compared():
    specs = mc.specs()
    assert set(MULTICLASS_CALIBRATOR_NAMES) <= set(specs)
    assert "top_label:calibrator=venn_abers" in specs
    assert "class_wise:calibrator=venn_abers" in specs
    assert len(set(specs)) == len(specs)


def test_scores_are_the_plain_formulas():
    Q, y = mc.synthetic_stream(500, 4, 2.0, seed=3)
    Q[7] = [1.0, 0.0, 0.0, 0.0]  # a zero on a true class below
    y[7] = 1
    got = mc.scores(Q, y)
    p_true = Q[np.arange(len(y)), y]
    assert got["NLL"] == pytest.approx(-np.mean(np.log(np.maximum(p_true, 1e-15))))
    onehot = np.eye(4)[y]
    assert got["Brier"] == pytest.approx(np.mean(((Q - onehot) ** 2).sum(axis=1)))
    assert got["accuracy"] == np.mean(np.argmax(Q, axis=1) == y)
    assert got["p(y) = 0"] == np.count_nonzero(p_true == 0.0) >= 1
    # confidence ECE over 15 equal-width bins of the top probability, by hand
    top, right = Q.max(axis=1), np.argmax(Q, axis=1) == y
    bins = np.minimum((top * 15).astype(int), 14)
    ece = sum(
        abs(top[bins == b].mean() - right[bins == b].mean()) * np.mean(bins == b)
        for b in np.unique(bins)
    )
    assert got["conf-ECE"] == pytest.approx(ece)


def test_synthetic_truth_is_calibrated_and_the_forecast_over_confident():
    Q, y = mc.synthetic_stream(20000, 5, 2.0, seed=0)
    rng = np.random.default_rng(0)
    q = rng.dirichlet(np.ones(5), size=20000)  # the generator's own truth
    np.testing.assert_allclose((q**2) / (q**2).sum(1, keepdims=True), Q)
    # labels drawn from q: the class frequencies among events follow q
    assert abs(np.mean(q[np.arange(len(y)), y]) - np.mean((q**2).sum(1))) < 0.01
    # the forecast's top probability exceeds its accuracy (over-confident)
    assert Q.max(axis=1).mean() > np.mean(np.argmax(Q, axis=1) == y) + 0.05


def test_ranks_share_ties_and_leave_out_failures():
    assert mc.ranks({"a": 0.3, "b": 0.1, "c": 0.3, "d": 0.5}) == {
        "b": 1.0,
        "a": 2.5,
        "c": 2.5,
        "d": 4.0,
    }
    ok = {m: 1.0 for m in mc.METRICS}
    results = {
        "s": {
            "raw": {"scores": {**ok, "NLL": 2.0}},
            "x": {"scores": ok},
            "broken": {"error": "ValueError: no"},
        }
    }
    by_rank = mc.rank_table(results)
    assert by_rank["s", "NLL"] == {"x": 1.0, "raw": 2.0}
    assert by_rank["s", "Brier"] == {"x": 1.5, "raw": 1.5}


def test_image_segments_log_starts_where_every_class_is_known():
    pytest.importorskip("river")
    P, y = mc.image_segments_stream("Gaussian naive Bayes", limit=60)
    assert P.shape == (60, 7) and y.shape == (60,)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert set(y) <= set(range(7))
