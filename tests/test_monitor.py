"""Tests of streamcal.monitor: the e-process against a literal oracle (refit the isotonic
regression before every event, multiply the likelihood ratios), the martingale property,
alarm and reset semantics, the river detectors against river fed the residuals
directly, the multiclass views, parameters, and a reduced version of
``simulations/monitor_alarms.py``. The shared checks (round trips, clone, bad input) run
in tests/test_checks_monitors.py."""

import copy
import importlib.util
import json
import math
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from river import drift

import streamcal.monitor
from streamcal.core.eprocess import MixtureEProcess, likelihood_ratio, log_mean_exp
from streamcal.monitor import (
    BaseMonitor,
    CalibrationMonitor,
    MulticlassCalibrationMonitor,
)
from tests import references_monitor as RM

# ---------------------------------------------------------------------- streams


def stream(n, seed, ties=True, edges=True):
    """Scores (ties, some exactly 0 or 1 with agreeing labels) and labels that are
    calibrated for the first third, then over-confident, then biased."""
    rng = np.random.default_rng(seed)
    s = rng.beta(2.0, 3.0, n)
    if ties:
        s = np.round(s, 2)
    truth = s.copy()
    truth[n // 3 : 2 * n // 3] = s[n // 3 : 2 * n // 3] ** 3
    truth[2 * n // 3 :] = np.clip(s[2 * n // 3 :] + 0.3, 0, 1)
    y = (rng.random(n) < truth).astype(int)
    if edges:
        edge = rng.random(n) < 0.03
        s[edge] = rng.integers(0, 2, edge.sum())
        y[edge] = s[edge].astype(int)  # agreeing labels: no contradiction
    return s.tolist(), y.tolist()


ORACLE_CONFIGS = [
    {},
    {
        "alpha": 0.2,
        "lam": 0.5,
        "half_life": None,
        "resolution": None,
        "prior_weight": 0.0,
    },
    {
        "alpha": 0.1,
        "lam": (0.2, 1.0),
        "half_life": 20.0,
        "window_size": 60,
        "resolution": 0.05,
        "prior_weight": 5.0,
    },
    {
        "alpha": 0.3,
        "lam": (0.05, 0.5, 0.95),
        "half_life": None,
        "window_size": 40,
        "resolution": None,
    },
]


def oracle_kwargs(params):
    m = CalibrationMonitor(**params)
    return {
        "alpha": m.alpha,
        "lams": m.lam if isinstance(m.lam, tuple) else (m.lam,),
        "half_life": m.half_life,
        "window_size": m.window_size,
        "resolution": m.resolution,
        "prior_weight": m.prior_weight,
    }


# ---------------------------------------------------------------------- the e-process


@pytest.mark.parametrize(
    "params",
    ORACLE_CONFIGS,
    ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()) or "default",
)
def test_eprocess_matches_literal_oracle_at_every_step(params):
    total_alarms = 0
    for seed in (0, 1, 2):
        s, y = stream(360, seed, ties=seed != 2)
        expected = RM.eprocess_trace(s, y, **oracle_kwargs(params))
        m = CalibrationMonitor(**params)
        n_alarms = 0
        for t, (a, b) in enumerate(zip(s, y)):
            m.update(a, b)
            m._process._check()
            m._recal._check()
            e, alarm = expected[t]
            assert m.drift_detected == alarm, f"seed {seed}, event {t}"
            assert math.isclose(m.e_value, e, rel_tol=1e-9), (
                f"seed {seed}, event {t}: {m.e_value} != {e}"
            )
            assert m.log_e_value == m._process.log_e
            n_alarms += alarm
        assert m.n_alarms == n_alarms and m.n_events == len(s)
        total_alarms += n_alarms
    assert total_alarms >= 1  # so that the resets are compared too


def test_one_step_expectation_is_exactly_one():
    """Under the null, E[e_t | past] = e_{t-1}: p * e(label 1) + (1 - p) * e(label 0)
    equals the e-value before the event, in every state, for every score."""
    for params in ORACLE_CONFIGS:
        m = CalibrationMonitor(**params)
        s, y = stream(150, 5)
        probes = [0.0, 1e-9, 0.013, 0.31, 0.5, 0.77, 1.0 - 1e-9, 1.0]
        for t, (a, b) in enumerate(zip(s, y)):
            if t % 15 == 0:
                before = 1.0 if m.drift_detected else m.e_value
                for p in probes:
                    e1, e0 = copy.deepcopy(m), copy.deepcopy(m)
                    e1.update(p, 1)
                    e0.update(p, 0)
                    mean = (p * e1.e_value if p > 0 else 0.0) + (
                        (1 - p) * e0.e_value if p < 1 else 0.0
                    )
                    assert math.isclose(mean, before, rel_tol=1e-11), (
                        params,
                        t,
                        p,
                        mean,
                        before,
                    )
            m.update(a, b)


@settings(max_examples=200, deadline=None)
@given(
    p=st.floats(0.0, 1.0),
    g=st.floats(0.0, 1.0),
    lams=st.lists(st.floats(1e-6, 1.0), min_size=1, max_size=5),
)
def test_core_factor_has_expectation_one(p, g, lams):
    """Each component's factor is lam + (1 - lam) * r with p * r(1) + (1 - p) * r(0) = 1."""
    r1, r0 = likelihood_ratio(p, g, 1.0), likelihood_ratio(p, g, 0.0)
    if 0.0 < p < 1.0 and math.isfinite(r1):
        assert math.isclose(p * r1 + (1 - p) * r0, 1.0, rel_tol=1e-12, abs_tol=1e-12)
    for y in (0.0, 1.0):
        proc = MixtureEProcess(lams)
        proc.update(p, g, y)
        proc._check()
        r = likelihood_ratio(p, g, y)
        for lam, lw in zip(proc.lams, proc.log_wealth):
            if math.isfinite(r):
                assert math.isclose(
                    lw, math.log(lam + (1 - lam) * r), rel_tol=1e-12, abs_tol=1e-15
                )
            elif 0.0 < p < 1.0 and lam == 1.0:  # the component ignores the ratio
                assert lw == 0.0
            elif 0.0 < p < 1.0:  # overflow of r = g / p (y = 1): computed in log space
                expected = np.logaddexp(math.log(lam), math.log1p(-lam) + math.log(g) - math.log(p))
                assert math.isfinite(lw) and math.isclose(lw, expected, rel_tol=1e-9)
            else:
                assert lw == math.inf


def test_core_random_walk_keeps_invariants():
    rng = np.random.default_rng(3)
    proc = MixtureEProcess((0.1, 0.5, 1.0))
    for _ in range(2000):
        p, g = rng.random(), rng.random()
        proc.update(p, g, float(rng.random() < p))
        proc._check()
    assert proc.log_wealth[2] == 0.0  # lam = 1 never bets
    state = json.loads(json.dumps(proc.to_lists()))
    other = MixtureEProcess((0.1, 0.5, 1.0))
    other.set_lists(state)
    other._check()
    assert other.log_wealth == proc.log_wealth and other.log_e == proc.log_e
    with pytest.raises(ValueError):
        other.set_lists([0.0])
    with pytest.raises(ValueError):
        other.set_lists([0.0, float("nan"), 0.0])
    with pytest.raises(ValueError):
        MixtureEProcess((0.0,))


def test_log_mean_exp():
    assert log_mean_exp([0.0]) == 0.0
    assert log_mean_exp([-math.inf, 0.0]) == pytest.approx(math.log(0.5))
    assert log_mean_exp([math.inf, -5.0]) == math.inf
    assert log_mean_exp([800.0, 800.0]) == 800.0


# ---------------------------------------------------------------------- edge scores


def test_label_contradicting_a_certain_score_alarms_at_once():
    for score, label in [(0.0, 1), (1.0, 0)]:
        m = CalibrationMonitor(alpha=1e-9)
        m.update(0.4, 1)
        m.update(score, label)
        assert m.drift_detected and m.e_value == math.inf and m.log_e_value == math.inf
        assert m.n_alarms == 1
        snapshot = json.dumps(m.to_dict(), allow_nan=False)  # inf stored as "inf"
        restored = CalibrationMonitor.from_dict(json.loads(snapshot))
        assert restored.e_value == math.inf and restored.drift_detected
        m.update(0.3, 0)  # the reset: a fresh recalibrator predicts the score, factor 1
        assert not m.drift_detected and m.e_value == 1.0 and m.n_events == 3


def test_agreeing_certain_scores_are_not_bet_on():
    m = CalibrationMonitor(prior_weight=0.0)
    for a, b in [(0.2, 1), (0.6, 0), (0.9, 1)]:
        m.update(a, b)
    e = m.e_value
    m.update(0.0, 0)
    m.update(1.0, 1)
    assert m.e_value == e


def test_huge_likelihood_ratio_does_not_overflow():
    """A tiny score followed by its label: the ratio g / p overflows a float; the
    log-wealth is computed in log space and the e-value reads inf, not an error."""
    m = CalibrationMonitor(alpha=1e-300, prior_weight=0.0, lam=(0.5, 1.0))
    m.update(1e-310, 1)  # first event: no bet
    m.update(1e-310, 1)  # the fit says 1: q = 0.5 + 0.5e-310, ratio ~ 5e309
    expected = math.log(0.5 + 0.5e-310) - math.log(1e-310)
    assert m._process.log_wealth[0] == pytest.approx(expected, rel=1e-12)
    assert m._process.log_wealth[1] == 0.0
    assert m.log_e_value == pytest.approx(expected - math.log(2), rel=1e-12)
    assert (
        m.e_value == math.inf and m.drift_detected
    )  # e ~ 2.5e309 >= 1 / alpha = 1e300
    m._process._check()


# ---------------------------------------------------------------------- alarm semantics


def test_drift_detected_only_on_the_alarm_update_then_fresh():
    m = CalibrationMonitor(alpha=0.05, prior_weight=0.0)
    flags = []
    for _ in range(40):
        m.update(0.1, 1)
        flags.append(m.drift_detected)
    first = flags.index(True)
    assert flags[first + 1] is False
    # the update after an alarm starts again from wealth 1 and an empty recalibrator:
    # exactly the path of a fresh monitor
    fresh = CalibrationMonitor(alpha=0.05, prior_weight=0.0)
    replay = []
    for _ in range(40 - first - 1):
        fresh.update(0.1, 1)
        replay.append(fresh.drift_detected)
    assert replay == flags[first + 1 :]
    assert m.n_alarms == sum(flags) and m.n_events == 40


def test_no_alarm_while_calibrated_then_alarm_after_a_large_shift():
    rng = np.random.default_rng(0)
    m = CalibrationMonitor()
    for t in range(3000):
        s = rng.random()
        truth = s if t < 1500 else min(1.0, s + 0.3)
        m.update(s, int(rng.random() < truth))
        if m.drift_detected:
            break
    assert 1500 <= t < 1900, t


def test_e_value_before_any_event_and_for_detectors():
    assert CalibrationMonitor().e_value == 1.0
    assert CalibrationMonitor().log_e_value == 0.0
    for method in ("adwin", "page-hinkley"):
        m = CalibrationMonitor(method=method)
        m.update(0.3, 1)
        assert m.e_value is None and m.log_e_value is None


# ---------------------------------------------------------------------- river detectors


@pytest.mark.parametrize("method", ["adwin", "page-hinkley"])
@pytest.mark.parametrize("residual", ["signed", "spread", "both"])
def test_detectors_match_river_fed_the_residuals(method, residual):
    params = (
        {"delta": 0.2, "clock": 1}
        if method == "adwin"
        else {"threshold": 3.0, "min_instances": 10}
    )
    klass = drift.ADWIN if method == "adwin" else drift.PageHinkley
    s, y = stream(900, 4, edges=False)
    expected = RM.detector_alarms(lambda: klass(**params), s, y, residual)
    m = CalibrationMonitor(method=method, residual=residual, detector_params=params)
    flags = []
    for a, b in zip(s, y):
        m.update(a, b)
        flags.append(m.drift_detected)
    assert flags == expected
    assert sum(flags) >= 1 and m.n_alarms == sum(flags)


def test_detector_snapshot_restores_river_state():
    m = CalibrationMonitor(
        method="adwin", residual="both", detector_params={"delta": 0.2, "clock": 1}
    )
    s, y = stream(300, 6)
    for a, b in zip(s, y):
        m.update(a, b)
    restored = CalibrationMonitor.from_dict(json.loads(json.dumps(m.to_dict())))
    for d0, d1 in zip(m._detectors, restored._detectors):
        assert (d0.width, d0.total, d0.variance, d0.n_detections) == (
            d1.width,
            d1.total,
            d1.variance,
            d1.n_detections,
        )


# ---------------------------------------------------------------------- multiclass


def multiclass_stream(n, seed, classes=("a", "b", "c")):
    rng = np.random.default_rng(seed)
    out = []
    for t in range(n):
        truth = rng.dirichlet(np.ones(len(classes)))
        f = truth if t < n // 2 else truth**3 / (truth**3).sum()
        proba = {c: float(v) for c, v in zip(classes, f)}
        out.append((proba, classes[int(rng.choice(len(classes), p=truth))]))
    return out


def test_top_label_view_is_the_binary_monitor_on_confidence_and_correctness():
    template = CalibrationMonitor(alpha=0.1, lam=(0.3, 0.6))
    mc = MulticlassCalibrationMonitor(template, view="top-label")
    binary = template.clone()
    events = multiclass_stream(600, 1)
    for proba, label in events:
        mc.update(proba, label)
        top = max(proba, key=proba.get)  # first maximum in the dict's order
        binary.update(proba[top], label == top)
        assert mc.drift_detected == binary.drift_detected
        assert mc.log_e_value == binary.log_e_value
        assert mc.e_values == {"top-label": binary.e_value}
    assert mc.n_alarms == binary.n_alarms >= 1
    assert template.n_events == 0  # the template is never updated


def test_top_label_ties_go_to_the_first_class():
    mc = MulticlassCalibrationMonitor(CalibrationMonitor(prior_weight=0.0))
    binary = CalibrationMonitor(prior_weight=0.0)
    for proba, label in [
        ({"x": 0.5, "y": 0.5}, "x"),
        ({"y": 0.5, "x": 0.5}, "x"),
        ({"x": 0.5, "y": 0.5}, "x"),
    ]:
        mc.update(proba, label)
        binary.update(0.5, label == next(iter(proba)))
        assert mc.e_value == binary.e_value


def test_class_wise_e_value_is_the_mean_of_per_class_e_processes():
    classes = ("a", "b", "c")
    template = CalibrationMonitor(alpha=0.05, half_life=None)
    mc = MulticlassCalibrationMonitor(template, view="class-wise", classes=classes)
    # per-class monitors that never alarm on their own (alpha tiny), same bets
    per_class = {c: template.clone(new_params={"alpha": 1e-300}) for c in classes}
    for t, (proba, label) in enumerate(multiclass_stream(800, 2, classes)):
        mc.update(proba, label)
        for c in classes:
            per_class[c].update(proba[c], label == c)
        assert mc.e_values == {c: per_class[c].e_value for c in classes}
        expected = log_mean_exp([per_class[c].log_e_value for c in classes])
        assert mc.log_e_value == expected
        assert mc.drift_detected == (expected >= -math.log(0.05))
        if mc.drift_detected:
            break
    assert mc.drift_detected, "the over-confident half must be detected"
    mc.update(*multiclass_stream(1, 9, classes)[0])
    assert mc.e_values == {"a": 1.0, "b": 1.0, "c": 1.0}  # all classes restarted


def test_class_wise_label_with_zero_probability_contradicts():
    mc = MulticlassCalibrationMonitor(view="class-wise", classes=(0, 1, 2))
    mc.update({0: 0.5, 1: 0.5}, 2)  # class 2 left out: probability 0
    assert mc.drift_detected and mc.e_value == math.inf
    assert json.dumps(mc.to_dict(), allow_nan=False)


def test_multiclass_with_detectors():
    template = CalibrationMonitor(
        method="page-hinkley", detector_params={"threshold": 3.0}
    )
    mc = MulticlassCalibrationMonitor(
        template, view="class-wise", classes=("a", "b", "c")
    )
    alarms = 0
    for proba, label in multiclass_stream(600, 3):
        mc.update(proba, label)
        alarms += mc.drift_detected
    assert alarms == mc.n_alarms >= 1
    assert mc.e_value is None and mc.e_values is None


def test_multiclass_input_errors_name_the_argument():
    mc = MulticlassCalibrationMonitor(classes=("a", "b"))
    with pytest.raises(
        ValueError,
        match=r"The 'label' argument of MulticlassCalibrationMonitor.update must be one of the classes \('a', 'b'\)\. Got 'z' instead\.",
    ):
        mc.update({"a": 1.0}, "z")
    with pytest.raises(
        ValueError,
        match=r"The 'proba' argument .* Got \{'a': 0.5, 'z': 0.5\} \(class 'z'\) instead\.",
    ):
        mc.update({"a": 0.5, "z": 0.5}, "a")
    with pytest.raises(ValueError, match="'proba'.*sum"):
        mc.update({"a": 0.5, "b": 0.6}, "a")
    assert mc.n_events == 0


# ---------------------------------------------------------------------- parameters


@pytest.mark.parametrize(
    "params, name",
    [
        ({"alpha": 0.0}, "alpha"),
        ({"alpha": 1.0}, "alpha"),
        ({"alpha": "0.05"}, "alpha"),
        ({"method": "cusum"}, "method"),
        ({"lam": 0.0}, "lam"),
        ({"lam": ()}, "lam"),
        ({"lam": (0.5, 1.5)}, "lam"),
        ({"lam": [0.5]}, "lam"),
        ({"half_life": 0.0}, "half_life"),
        ({"window_size": 0}, "window_size"),
        ({"resolution": 2.0}, "resolution"),
        ({"prior_weight": -1.0}, "prior_weight"),
        ({"prior_weight": math.inf}, "prior_weight"),
        ({"residual": "abs"}, "residual"),
        ({"method": "adwin", "detector_params": {"no_such": 1}}, "detector_params"),
        (
            {"method": "page-hinkley", "detector_params": {"mode": "sideways"}},
            "detector_params",
        ),
        ({"detector_params": {"delta": [1]}}, "detector_params"),
        ({"detector_params": "delta=1"}, "detector_params"),
    ],
)
def test_bad_parameters_are_rejected(params, name):
    with pytest.raises(
        ValueError,
        match=rf"The '{name}' parameter of CalibrationMonitor must be .* Got .* instead\.",
    ):
        CalibrationMonitor(**params)


@pytest.mark.parametrize(
    "params, name",
    [
        ({"monitor": "eprocess"}, "monitor"),
        ({"view": "confidence"}, "view"),
        ({"view": "class-wise"}, "classes"),
        ({"classes": ("a",)}, "classes"),
        ({"classes": ("a", "a")}, "classes"),
        ({"classes": ["a", "b"]}, "classes"),
        ({"classes": ("a", float("nan"))}, "classes"),
        ({"classes": ("a", ["b"])}, "classes"),
    ],
)
def test_bad_multiclass_parameters_are_rejected(params, name):
    with pytest.raises(
        ValueError,
        match=rf"The '{name}' parameter of MulticlassCalibrationMonitor must be",
    ):
        MulticlassCalibrationMonitor(**params)


def test_error_message_template():
    m = CalibrationMonitor()
    with pytest.raises(
        ValueError,
        match=r"^The 'score' argument of CalibrationMonitor.update must be a real number in \[0, 1\]\. Got nan instead\.$",
    ):
        m.update(float("nan"), 1)
    with pytest.raises(
        ValueError,
        match=r"^The 'label' argument of CalibrationMonitor.update must be a binary label",
    ):
        m.update(0.5, 2)


def test_snapshot_nests_the_recalibrator_and_round_trips_parameters():
    m = CalibrationMonitor(lam=(0.2, 0.4), detector_params=None, window_size=30)
    s, y = stream(80, 8)
    for a, b in zip(s, y):
        m.update(a, b)
    d = json.loads(json.dumps(m.to_dict()))
    assert d["class"] == "CalibrationMonitor" and d["params"]["lam"] == [0.2, 0.4]
    assert d["state"]["recalibrator"]["class"] == "OnlineIsotonic"
    assert d["state"]["recalibrator"]["params"]["window_size"] == 30
    restored = BaseMonitor.from_dict(d)
    assert restored.lam == (0.2, 0.4) and restored.e_value == m.e_value
    mc = MulticlassCalibrationMonitor(
        CalibrationMonitor(method="adwin", detector_params={"delta": 0.01}),
        classes=(1, "b"),
    )
    back = BaseMonitor.from_dict(json.loads(json.dumps(mc.to_dict())))
    assert back.classes == (1, "b") and back.monitor.detector_params == {"delta": 0.01}


# ---------------------------------------------------------------------- the simulation


def _simulation():
    path = os.path.join(
        os.path.dirname(__file__), os.pardir, "simulations", "monitor_alarms.py"
    )
    spec = importlib.util.spec_from_file_location("monitor_alarms", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _check_simulation(n_seeds):
    sim = _simulation()
    results = sim.run(n_seeds, workers=1, methods=("eprocess",))
    rows = sim.false_alarm_rows(results)
    k = sum(r[2] for r in rows)
    n = sum(r[3] for r in rows)
    lo, _ = sim.clopper_pearson(k, n)
    assert lo <= sim.ALPHA, f"false-alarm rate {k}/{n} significantly above alpha"
    delays = {(r[1], r[2]): r for r in sim.delay_rows(results)}
    for dist in sim.DISTRIBUTIONS:
        assert delays[(dist, ("bias", 0.1))][4] >= 0.9, (
            "bias +0.1 must be detected within 3,000 events"
        )
    return results


def test_reduced_simulation():
    """A few seeds of simulations/monitor_alarms.py: plausible false-alarm rate for the
    e-process and the large shift detected."""
    _check_simulation(6)


@pytest.mark.slow
def test_simulation_many_seeds():
    _check_simulation(100)


_MONITORS = [
    lambda: streamcal.monitor.CalibrationMonitor(),
    lambda: streamcal.monitor.MulticlassCalibrationMonitor(),
    lambda: streamcal.monitor.KeyedCalibrationMonitor(streamcal.monitor.CalibrationMonitor()),
]


@pytest.mark.parametrize("make", _MONITORS)
@pytest.mark.parametrize(
    "counters",
    [
        {"n_alarms": 3, "n_events": 2},  # more alarms than events
        {"n_alarms": -1},
        {"n_events": 2.5},
        {"drift_detected": 1},  # not a bool
    ],
)
def test_snapshot_counters_are_checked_in_one_place(make, counters):
    # monitor/base.BaseMonitor._counters_valid: every monitor's snapshot refuses the same
    # bad counters (drift_detected a bool, ints 0 <= n_alarms <= n_events)
    m = make()
    d = m.to_dict()
    assert m._counters_valid(d["state"])
    d["state"].update(counters)
    assert not m._counters_valid(d["state"])
    with pytest.raises(ValueError, match="n_alarms|n_events|drift_detected"):
        type(m).from_dict(d)


@pytest.mark.parametrize(
    "entry",
    [("log_wealth", 0), ("n_events", None)],
    ids=["log_wealth", "n_events"],
)
def test_snapshot_with_an_int_too_large_for_a_float_is_refused(entry):
    # JSON allows ints of any size; 10**400 as a log-wealth (or as n_events, which
    # bounds the log-wealths) made from_dict raise OverflowError instead of ValueError
    m = CalibrationMonitor()
    m.update(0.3, 1)
    d = json.loads(json.dumps(m.to_dict()))
    key, index = entry
    if index is None:
        d["state"][key] = 10**400
    else:
        d["state"][key][index] = 10**400
    for reader in (CalibrationMonitor.from_dict, BaseMonitor.from_dict):
        if key == "n_events":  # a valid (if absurd) count: accepted, and continues
            restored = reader(d)
            assert restored.n_events == 10**400
            restored.update(0.3, 1)
        else:
            with pytest.raises(ValueError, match=r"state\['log_wealth'\]\[0\]"):
                reader(d)


_FLAG_MONITORS = [
    lambda: CalibrationMonitor(alpha=0.2, prior_weight=0.0),
    lambda: CalibrationMonitor(method="adwin", residual="both", detector_params={"delta": 0.5, "clock": 1}),
    lambda: CalibrationMonitor(method="page-hinkley", detector_params={"threshold": 2.0}),
    lambda: MulticlassCalibrationMonitor(CalibrationMonitor(alpha=0.2, prior_weight=0.0)),
    lambda: MulticlassCalibrationMonitor(
        CalibrationMonitor(alpha=0.2, prior_weight=0.0), view="class-wise", classes=("a", "b", "c")
    ),
    lambda: MulticlassCalibrationMonitor(
        CalibrationMonitor(method="page-hinkley", detector_params={"threshold": 2.0}),
        view="class-wise",
        classes=("a", "b", "c"),
    ),
]


def _quiet_and_alarmed(m):
    """JSON snapshots of ``m`` fed a miscalibrated stream: one right at an alarm, one
    later, between alarms."""
    if getattr(m, "_multiclass", False):
        events = multiclass_stream(2000, 3)
    else:
        s, y = stream(2000, 3, edges=False)
        events = list(zip(s, y))
    at_alarm = quiet = None
    for f, y in events:
        m.update(f, y)
        if m.drift_detected and at_alarm is None:
            at_alarm = json.loads(json.dumps(m.to_dict()))
        elif at_alarm is not None and not m.drift_detected and m.n_events % 7 == 0:
            quiet = json.loads(json.dumps(m.to_dict()))
            break
    assert at_alarm is not None and quiet is not None
    return at_alarm, quiet


@pytest.mark.parametrize("make", _FLAG_MONITORS)
def test_snapshot_alarm_flag_must_match_the_evidence(make):
    # a monitor alarms exactly when its evidence (e-value >= 1 / alpha, or a river
    # detector's flag) does, and counts it: from_dict accepted a cleared flag at an
    # alarm (the alarm lost), a flag set without evidence (a phantom alarm, then a
    # reset that throws the evidence away) and a flag with n_alarms = 0
    at_alarm, quiet = _quiet_and_alarmed(make())
    for d in (at_alarm, quiet):
        assert type(make()).from_dict(d).drift_detected == d["state"]["drift_detected"]
    cleared = copy.deepcopy(at_alarm)
    cleared["state"]["drift_detected"] = False
    phantom = copy.deepcopy(quiet)
    phantom["state"]["drift_detected"] = True
    uncounted = copy.deepcopy(at_alarm)
    uncounted["state"]["n_alarms"] = 0
    for d in (cleared, phantom, uncounted):
        for reader in (type(make()).from_dict, BaseMonitor.from_dict):
            with pytest.raises(ValueError, match="drift_detected|n_alarms >= 1"):
                reader(d)


@pytest.mark.parametrize("multiclass", [False, True], ids=["binary", "multiclass"])
@pytest.mark.parametrize(
    "corrupt",
    ["below the bound", "lam = 1 component moved", "some but not all infinite", "recalibrator ahead"],
)
def test_snapshot_eprocess_invariants_are_checked(multiclass, corrupt):
    # the e-process invariants (MixtureEProcess._check, each factor >= lam, the
    # recalibrator learns each event once) were not checked by from_dict: the binary
    # monitor accepted a moved lam = 1 component, some components infinite and a
    # recalibrator that learnt more events than the monitor saw, and the parts of a
    # multiclass monitor also a log-wealth below n_events * log(lam) (-1e300: a
    # monitor that can never alarm)
    template = CalibrationMonitor(lam=(0.5, 1.0), alpha=0.2)
    m = MulticlassCalibrationMonitor(template) if multiclass else template.clone()
    for _ in range(2):
        if multiclass:
            m.update({0: 0.3, 1: 0.7}, 1)
        else:
            m.update(0.3, 1)
    d = json.loads(json.dumps(m.to_dict()))
    state = d["state"]
    target = state["parts"][0] if multiclass else state
    if corrupt == "below the bound":
        target["log_wealth"] = [-1e300, 0.0]
    elif corrupt == "lam = 1 component moved":
        target["log_wealth"] = [0.1, 0.3]
    elif corrupt == "some but not all infinite":
        target["log_wealth"] = ["inf", 0.0]
        state["drift_detected"], state["n_alarms"] = True, 1
    else:
        state["n_events"] = 1
    for reader in (type(m).from_dict, BaseMonitor.from_dict):
        with pytest.raises(ValueError, match="log_wealth|invariant"):
            reader(d)
    assert type(m).from_dict(json.loads(json.dumps(m.to_dict())))._check() is None


def test_adwin_snapshot_bytes_river_would_panic_on_or_with_other_parameters_are_refused():
    # river's Rust ADWIN reads bytes whose parameters differ from detector_params
    # (its state starts with delta, clock, max_buckets, min_window_length,
    # grace_period): from_dict accepted clock = 0, whose next update panicked
    # (PanicException, a BaseException: "remainder with a divisor of zero"), and a
    # delta of 0.999 against detector_params' 0.5; and bytes with buckets river
    # panics on at a later update ("index out of bounds")
    import base64
    import random
    import struct

    m = CalibrationMonitor(method="adwin", detector_params={"delta": 0.5, "clock": 1})
    for i in range(300):
        m.update(0.5, i % 2)
    good = json.loads(json.dumps(m.to_dict()))
    raw = base64.b64decode(good["state"]["detectors"][0]["helper"])
    assert raw.startswith(struct.pack("<diQdd", 0.5, 1, 5, 5.0, 10.0))  # river's layout

    def with_bytes(b):
        d = copy.deepcopy(good)
        d["state"]["detectors"][0]["helper"] = base64.b64encode(bytes(b)).decode()
        return d

    for corrupt in (raw[:8] + struct.pack("<i", 0) + raw[12:], struct.pack("<d", 0.999) + raw[8:]):
        with pytest.raises(ValueError, match=r"state\['detectors'\]\[0\]\['helper'\]"):
            CalibrationMonitor.from_dict(with_bytes(corrupt))
    rng = random.Random(3)
    for _ in range(150):  # random byte changes: refused, or a monitor that keeps working
        b = bytearray(raw)
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(36, len(b))] = rng.randrange(256)
        try:
            restored = CalibrationMonitor.from_dict(with_bytes(b))
        except ValueError:
            continue
        for i in range(300):
            restored.update(0.5, i % 2)


def test_monitor_names_itself_for_a_recalibrator_parameter_out_of_range():
    # OnlineIsotonic refuses half_life < 1e-18 and a subnormal resolution; the monitor
    # passes its own on to its recalibrator and must refuse them under its own name
    from streamcal.monitor import CalibrationMonitor

    for kw in ({"half_life": 1e-310}, {"resolution": 5e-324}):
        name = next(iter(kw))
        with pytest.raises(ValueError, match=rf"The '{name}' parameter of CalibrationMonitor must be"):
            CalibrationMonitor(**kw)
