"""The per-segment simulation (``simulations/segments.py``): its pooled log is the
three airports' logs of ``real_rain.py`` interleaved in time order, and its keyed run
gives exactly the forecasts of three separate calibrators, each fed only its airport's
events (the claim the table rests on: a keyed calibrator is one calibrator per segment,
nothing shared)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("river")

from streamcal import KeyedCalibrator  # noqa: E402
from tests.simulation_scripts import load  # noqa: E402

LIMIT = 150  # hours per airport

segments = load("segments")
real_rain = load("real_rain")
common = load("_common")


@pytest.fixture(scope="module")
def log():
    return segments.pooled_log(LIMIT)


def test_pooled_log_interleaves_each_airports_real_rain_events_in_time_order(log):
    hours = [h for h, _, _, _ in log]
    assert hours == sorted(hours)
    assert len(log) == 3 * LIMIT
    for origin in segments.AIRPORTS:
        mine = [(x, y) for _, o, x, y in log if o == origin]
        assert mine == real_rain.nyc_events(origin, LIMIT)
    # the airports really are interleaved, not concatenated
    assert {o for _, o, _, _ in log[:3]} == set(segments.AIRPORTS)


def test_own_model_scores_are_each_airports_real_rain_scores(log):
    s, y = segments.scores(log, "own model")
    keys = np.array([o for _, o, _, _ in log])
    for origin in segments.AIRPORTS:
        ref_s, ref_y = real_rain.model_scores(real_rain.nyc_events(origin, LIMIT))
        assert np.array_equal(s[keys == origin], ref_s)
        assert np.array_equal(y[keys == origin], ref_y)


@pytest.fixture(scope="module")
def scored(log):
    return {scenario: segments.scores(log, scenario) for scenario in segments.SCENARIOS}


@pytest.mark.parametrize("scenario", segments.SCENARIOS)
@pytest.mark.parametrize("name", sorted(segments.CALIBRATORS))
def test_keyed_run_equals_three_separate_calibrators(log, scored, scenario, name):
    make = segments.CALIBRATORS[name]
    s, y = scored[scenario]
    keys = np.array([o for _, o, _, _ in log])
    keyed = segments.keyed_forecasts(KeyedCalibrator(make()), keys.tolist(), s, y)
    separate = np.empty(len(s))
    for origin in segments.AIRPORTS:
        m = keys == origin
        separate[m] = common.prequential({"c": make()}, s[m], y[m])["c"]
    assert np.array_equal(keyed, separate)  # exact floats
    # and it is not the global calibrator's run, which the comparison is about
    pooled = common.prequential({"c": make()}, s, y)["c"]
    assert not np.array_equal(keyed, pooled)


def test_fallback_changes_only_the_first_event_of_each_airport(log, scored):
    s, y = scored["own model"]
    keys = [o for _, o, _, _ in log]
    make = segments.CALIBRATORS["platt"]
    plain = segments.keyed_forecasts(KeyedCalibrator(make()), keys, s, y)
    fb = segments.keyed_forecasts(KeyedCalibrator(make(), fallback=True), keys, s, y)
    first = {keys.index(o) for o in segments.AIRPORTS}
    assert all(plain[i] == fb[i] for i in range(len(keys)) if i not in first)
