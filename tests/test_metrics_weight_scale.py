"""The binary metrics are ratios of weighted sums, so multiplying every weight by one
factor must not change them. Squares of sums (``Y_b ** 2 / W_b``) underflowed for
weights below about 1e-155 (an outside check): MurphyDecomposition then gave
REL 0, WBV 0.85 and WBC 1.84 for one event of weight 1e-300 (its Brier score 0.0064),
CalibrationRefinement a refinement of 1.0. Each such term is now ``Y_b * (Y_b /
W_b)``, whose factors keep the scale of the weights."""

import random

import pytest

from streamcal.metrics import (
    CORP, ECE, Brier, CalibrationRefinement, LogLoss, MurphyDecomposition, ROCAUC, Sharpness,
)

_PARTS = {
    MurphyDecomposition: ("reliability", "resolution", "uncertainty", "within_bin_variance",
                          "within_bin_covariance"),
    CalibrationRefinement: ("calibration", "refinement"),
}


def _stream(seed, n):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        p = rng.choice([0.0, 1.0, rng.random(), round(rng.random(), 1)])
        out.append((float(rng.random() < p), p, rng.choice([1.0, 0.5, rng.random() + 0.01])))
    return out


def _read(metric):
    return [metric.get()] + [getattr(metric, name) for name in _PARTS.get(type(metric), ())]


@pytest.mark.parametrize("factor", [1e-300, 2.0**-1000, 1e-200, 1e-160, 1e100])
@pytest.mark.parametrize("cls", [Brier, LogLoss, ECE, Sharpness, MurphyDecomposition,
                                 CalibrationRefinement, CORP, ROCAUC])
@pytest.mark.parametrize("n", [1, 2, 40])
def test_a_common_weight_factor_changes_nothing(cls, factor, n):
    for seed in range(5):
        events = _stream(seed, n)
        unit, scaled = cls(), cls()
        for y, p, w in events:
            unit.update(y, p, w)
            scaled.update(y, p, w * factor)
            if hasattr(scaled, "_check"):
                scaled._check()
        assert _read(scaled) == pytest.approx(_read(unit), rel=1e-12, abs=1e-15), (seed, factor)


@pytest.mark.parametrize("cls", [MurphyDecomposition, CalibrationRefinement])
def test_the_decomposition_holds_at_tiny_weights(cls):
    """The outside check's event: Brier score 0.0064 at weight 1e-300, as at weight 1."""
    m = cls()
    m.update(1, 0.92, 1e-300)
    m._check()
    assert m.get() == pytest.approx(0.0064, rel=1e-12)
    if cls is MurphyDecomposition:
        assert m.reliability == pytest.approx(0.0064, rel=1e-12)
        assert m.within_bin_variance == m.within_bin_covariance == 0.0
        assert m.resolution == m.uncertainty == 0.0
    else:
        assert m.calibration == pytest.approx(0.0064, rel=1e-12)
        assert m.refinement == 0.0
