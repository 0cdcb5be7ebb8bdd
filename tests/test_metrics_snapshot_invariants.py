"""Metric states no events can give are refused. A metric snapshot whose sums cannot come from any events is refused before anything
is built (``from_dict``'s step 7: the built object's ``_check()``). An outside check
built a Brier score of 5.0 and of -1.0, a LogLoss of inf, a CrossEntropy of negative
weight, an ECE of 4.1e299 under forgetting and a ConfidenceECE of 2.95 from edited
snapshots; MurphyDecomposition, CalibrationRefinement and CORP took sums outside their
domains too. Each case below edits one entry of a real snapshot. A revert of an event
the metric cannot hold is refused too, and changes nothing."""

import json

import pytest

from streamcal.metrics import (
    CORP, ECE, Brier, CalibrationRefinement, ClasswiseECE, ConfidenceECE, CrossEntropy,
    LogLoss, MulticlassBrier, MurphyDecomposition, Sharpness, TopLabelECE,
)
from streamcal.metrics.base import StreamingMetric


def _binary(metric):
    for y, p in ((1, 0.2), (0, 0.7), (1, 0.9), (0, 0.1)):
        metric.update(y, p)
    return metric


def _multiclass(metric):
    for y, p in (("a", {"a": 0.95, "b": 0.05}), ("b", {"a": 0.3, "b": 0.7})):
        metric.update(y, p)
    return metric


def _set(path, value):
    def edit(state):
        target = state
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value(target[path[-1]]) if callable(value) else value
    return edit


CASES = [
    ("brier_above", lambda: _binary(Brier()), _set(["total"], 5.0)),
    ("brier_negative", lambda: _binary(Brier()), _set(["total"], -1.0)),
    ("log_loss_tiny_weight", lambda: _binary(LogLoss()), _set(["weight"], 1e-320)),
    ("cross_entropy_negative_weight", lambda: _multiclass(CrossEntropy()), _set(["weight"], -1e-300)),
    ("multiclass_brier_above", lambda: _multiclass(MulticlassBrier()), _set(["total"], 9.0)),
    ("ece_half_life_bin", lambda: _binary(ECE(n_bins=2, half_life=2.0)), _set(["bins", 1, 0], 1e300)),
    ("confidence_ece_label_sum", lambda: _multiclass(ConfidenceECE(n_bins=2)), _set(["bins", "y", 1], -2.0)),
    ("murphy_score", lambda: _binary(MurphyDecomposition()), _set(["score"], 7.0)),
    ("refinement_score", lambda: _binary(CalibrationRefinement()), _set(["score"], 7.0)),
    ("corp_loss", lambda: _binary(CORP()), _set(["loss"], 9.0)),
    ("corp_label", lambda: _binary(CORP()), _set(["label"], -3.0)),
]


@pytest.mark.parametrize("make, edit", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_an_impossible_sum_is_refused(make, edit):
    metric = make()
    snapshot = json.loads(json.dumps(metric.to_dict()))
    assert StreamingMetric.from_dict(snapshot).get() == metric.get()  # the real one restores
    edit(snapshot["state"])
    with pytest.raises(ValueError, match="breaks an invariant"):
        StreamingMetric.from_dict(snapshot)


@pytest.mark.parametrize("cls", [TopLabelECE, ClasswiseECE])
def test_multiclass_bin_sums_outside_their_weight_are_refused(cls):
    snapshot = json.loads(json.dumps(_multiclass(cls(n_bins=2)).to_dict()))
    state = snapshot["state"]
    text = json.dumps(state)
    assert StreamingMetric.from_dict(snapshot)
    # every label sum of every bin made 3 times its bin's weight (plus 1)
    def scale(node):
        if isinstance(node, dict):
            if {"w", "y"} <= node.keys():
                node["y"] = [3.0 * w + 1.0 if w else y for w, y in zip(node["w"], node["y"])]
            for v in node.values():
                scale(v)
        elif isinstance(node, list):
            for v in node:
                scale(v)
    scale(state)
    assert json.dumps(state) != text
    with pytest.raises(ValueError, match="breaks an invariant"):
        StreamingMetric.from_dict(snapshot)


REVERTIBLE = [
    ("ece", lambda: ECE()), ("ece_quantile", lambda: ECE(strategy="quantile")),
    ("sharpness", Sharpness),
    ("murphy", MurphyDecomposition), ("refinement", CalibrationRefinement),
    ("refinement_grid", lambda: CalibrationRefinement(resolution=0.1)), ("corp", CORP),
    ("brier", Brier), ("log_loss", LogLoss),
]


@pytest.mark.parametrize("make", [c[1] for c in REVERTIBLE], ids=[c[0] for c in REVERTIBLE])
@pytest.mark.parametrize("event", [(0, 0.3, 5.0), (1, 0.3, 1.0), (0, 0.8, 1.0), (1, 0.3, 2.5)])
def test_a_revert_of_an_event_not_held_is_refused_and_changes_nothing(make, event):
    """Two label-0 events at 0.3 and a label-1 one at 0.8 are held: reverting more
    weight than is held at 0.3, a label 1 at 0.3 or a label 0 at 0.8 was accepted
    (an ECE of -0.55, a negative group weight, and a state its own from_dict then
    refused). Brier and LogLoss know only the total: they refuse more weight than it."""
    metric = make()
    for y, p in ((0, 0.3), (0, 0.3), (1, 0.8)):
        metric.update(y, p)
    before = json.dumps(metric.to_dict())
    if isinstance(metric, (Brier, LogLoss)) and event[2] <= 3.0:
        return  # within the total: they cannot tell
    with pytest.raises(ValueError, match="must be|does not hold"):
        metric.revert(*event)
    assert json.dumps(metric.to_dict()) == before
    metric.revert(0, 0.3)  # one that is held still goes
    if hasattr(metric, "_check"):
        metric._check()
