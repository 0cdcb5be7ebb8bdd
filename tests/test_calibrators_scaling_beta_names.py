"""Regression tests for issue 13: ``OnlineBeta``'s ``parameters`` follow betacal's names.

betacal (Kull, Silva Filho and Flach's package, ``betacal/beta_calibration.py``):
``"am"`` fits ``a`` and ``m`` with ``a = b`` (``_BetaAMCal``: logistic regression on
``logit s`` with an intercept), ``"ab"`` fits ``a`` and ``b`` with ``m = 1/2``
(``_BetaABCal``: on ``ln 2s`` and ``ln 2(1 - s)``, no intercept). streamcal 0.1.0 had
the two names the other way round; its snapshots (format 1) must restore the model
they were written from.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from streamcal import OnlineBeta
from streamcal.base import BinaryCalibrator
from streamcal.calibrators import OnlinePlatt

betacal = pytest.importorskip("betacal")


def stationary(n, seed):
    """Scores ~ U(0, 1), labels from a beta map with a != b and m != 1/2 (a = 1.5,
    b = 0.5, c = 0.3), so that the two two-parameter models differ, and where none of
    the fits hits streamcal's a, b >= 0 (betacal constrains only "abm")."""
    rng = np.random.default_rng(seed)
    s = rng.random(n)
    z = 1.5 * np.log(s) - 0.5 * np.log1p(-s) + 0.3
    return s, (rng.random(n) < 1.0 / (1.0 + np.exp(-z))).astype(int)


GRID = np.linspace(0.02, 0.98, 49)


@pytest.fixture(scope="module")
def fits():
    s, y = stationary(20_000, seed=13)
    out = {}
    for name in ("abm", "am", "ab"):
        cal = OnlineBeta(name)
        cal.learn_many(s, y)
        batch = betacal.BetaCalibration(parameters=name).fit(s, y)
        out[name] = cal, batch
    return out


def test_beta_am_fixes_a_equals_b_as_betacal_does(fits):
    cal, batch = fits["am"]
    assert batch.calibrator_.map_[0] == batch.calibrator_.map_[1]  # betacal's form
    assert cal.a == cal.b and cal.m is not None and cal.m != 0.5
    # the map is linear in logit s: sigmoid(a logit s + c)
    x = np.log(GRID / (1 - GRID))
    np.testing.assert_allclose(
        cal.predict_many(GRID), 1 / (1 + np.exp(-(cal.a * x + cal.c))), rtol=1e-12
    )


def test_beta_ab_fixes_the_midpoint_at_one_half_as_betacal_does(fits):
    cal, batch = fits["ab"]
    assert batch.calibrator_.map_[2] == 0.5 and batch.predict([0.5])[0] == pytest.approx(0.5)
    assert cal.m == 0.5 and cal.predict_one(0.5) == 0.5 and cal.a != cal.b
    assert cal.c == (cal.a - cal.b) * math.log(2.0)


@pytest.mark.parametrize("name", ["abm", "am", "ab"])
def test_beta_names_predict_as_betacal_batch_fit_of_the_same_name(fits, name):
    """Name for name, the online estimate is close to betacal's batch fit on 20,000
    stationary events (within 0.01 on a grid, the online fit's error, about 0.001
    here; see test_calibrators_scaling.py's convergence tests), and far from the other
    two-parameter model's fit (the 0.1.0 names were off by 0.14 here)."""
    cal, batch = fits[name]
    online = cal.predict_many(GRID)
    assert np.max(np.abs(online - batch.predict(GRID))) < 0.01
    for other in {"am", "ab"} - {name, "abm"} if name != "abm" else ():
        assert np.max(np.abs(online - fits[other][1].predict(GRID))) > 0.1


def test_beta_am_is_monotone_platt():
    """betacal's "am" is Platt scaling on logit s with a >= 0 (Kull et al., Prop. 1)."""
    s, y = stationary(500, seed=3)
    platt, beta = OnlinePlatt(monotone=True), OnlineBeta("am")
    platt.learn_many(s, y)
    beta.learn_many(s, y)
    assert (platt.a, platt.b) == (beta.a, beta.c)


def test_beta_unknown_name_lists_each_name_with_its_model():
    with pytest.raises(ValueError) as info:
        OnlineBeta("a")
    message = str(info.value)
    assert "'parameters' parameter of OnlineBeta" in message
    assert "'am' fixes a = b" in message and "'ab' fixes m = 1/2" in message


# Written by streamcal 0.1.0 (snapshot format 1) after 40 weighted events, with the
# predictions it made then: its "ab" was the a = b model, its "am" the m = 1/2 one.
OLD_BETA_SNAPSHOTS = [
    (
        '{"class": "OnlineBeta", "format": 1, "params": {"parameters": "ab", '
        '"regularization": 1.0, "half_life": null}, "state": {"core": '
        "[[0.18146747272454192, -0.08470242968701379], [0.02281128912006709, "
        '0.018604493692656883, 0.12391167330818252]], "fitted": true}}',
        "am",
        [(0.05, 0.35000383988627254), (0.3, 0.44066603458451653), (0.5, 0.47883704387075393),
         (0.9, 0.5778667690506125)],
    ),
    (
        '{"class": "OnlineBeta", "format": 1, "params": {"parameters": "am", '
        '"regularization": 1.0, "half_life": null}, "state": {"core": '
        "[[0.13773569002055033, 0.5913334321971013], [0.06528893179568004, "
        '-0.06342758964596719, 0.2211964855121556]], "fitted": true}}',
        "ab",
        [(0.05, 0.3325447724685451), (0.3, 0.4330725188621255), (0.5, 0.5),
         (0.9, 0.7374339095498197)],
    ),
]


@pytest.mark.parametrize("text, new_name, predictions", OLD_BETA_SNAPSHOTS)
def test_beta_old_snapshot_restores_with_the_meaning_it_had(text, new_name, predictions):
    snapshot = json.loads(text)
    for cal in (BinaryCalibrator.from_dict(snapshot), OnlineBeta.from_dict(snapshot)):
        cal._check()
        assert cal.parameters == new_name
        assert [cal.predict_one(q) for q in (q for q, _ in predictions)] == [
            p for _, p in predictions
        ]
        if new_name == "am":
            assert cal.a == cal.b
        else:
            assert cal.m == 0.5
        again = cal.to_dict()
        assert again["format"] == 2 and again["params"]["parameters"] == new_name
        assert again["state"] == snapshot["state"]
        # a current snapshot is not translated again
        assert BinaryCalibrator.from_dict(again).predict_one(0.3) == predictions[1][1]


def test_beta_current_snapshot_keeps_its_name():
    for name in ("abm", "am", "ab"):
        cal = OnlineBeta(name)
        cal.learn_many([0.1, 0.4, 0.8], [0, 1, 1])
        back = BinaryCalibrator.from_dict(json.loads(json.dumps(cal.to_dict())))
        assert back.parameters == name and back.to_dict() == cal.to_dict()


@pytest.mark.parametrize("fmt", [0, 3, True, 1.0, "1", None])
def test_snapshot_format_outside_the_readable_ones_is_refused(fmt):
    snapshot = OnlineBeta().to_dict()
    with pytest.raises(ValueError, match="snapshot format"):
        BinaryCalibrator.from_dict({**snapshot, "format": fmt})
