"""Generated rain sequences and forecasters (streamcal.datasets.rain).

Tolerances come from the model: within a bin of forecasts chosen from the past,
``sum(rain - p_true)`` is a sum of martingale differences whose variance is
``sum(p_true * (1 - p_true))``, so for the calibrated forecaster the standardised bin
error is about N(0, 1); a bound of 5 fails by chance with probability < 1e-5 over ten
bins (and the seeds are fixed, so the tests are deterministic anyway).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from streamcal.datasets import (
    FORECAST_KINDS,
    RainSequence,
    forecast,
    miscalibrated_rain_forecasts,
    rain_sequence,
)


def max_bin_z(q, rain, n_bins=10, min_count=200):
    """Largest |standardised calibration error| over equal-width bins of the forecast
    ``q``, treating ``q`` as the true probability: |sum(rain - q)| / sqrt(sum q (1 - q))."""
    idx = np.minimum((q * n_bins).astype(int), n_bins - 1)
    zs = []
    for b in range(n_bins):
        m = idx == b
        if m.sum() >= min_count:
            zs.append(
                abs(np.sum(rain[m] - q[m])) / math.sqrt(np.sum(q[m] * (1 - q[m])))
            )
    assert zs, "no bin has enough events"
    return max(zs)


@pytest.fixture(scope="module")
def long_seq():
    return rain_sequence(100_000, seed=42)


# ---------------------------------------------------------------------- the sequence


@pytest.mark.parametrize("n_days", [0, 1, 2, 500])
@pytest.mark.parametrize(
    "params",
    [
        {},
        {"persistence": 0.0},
        {"persistence": 0.95, "base_rate": 0.05, "seasonal_amplitude": 0.04},
        {"seasonal_amplitude": 0.0, "drift": 0.05},
        {"period": 7.0, "base_rate": 0.6},
    ],
)
def test_shapes_dtypes_and_ranges(n_days, params):
    seq = rain_sequence(n_days, seed=3, **params)
    assert isinstance(seq, RainSequence) and len(seq) == n_days
    for arr, dtype in [
        (seq.p_true, np.float64),
        (seq.rain, np.int64),
        (seq.climate, np.float64),
    ]:
        assert arr.shape == (n_days,) and arr.dtype == dtype
        assert not arr.flags.writeable
    assert np.all((seq.p_true > 0) & (seq.p_true < 1))
    assert np.all((seq.climate > 0) & (seq.climate < 1))
    assert set(seq.rain.tolist()) <= {0, 1}


def test_p_true_follows_the_markov_rule():
    rho = 0.35
    seq = rain_sequence(1000, seed=5, persistence=rho)
    c = seq.climate
    assert seq.p_true[0] == c[0]
    expected = c[1:] + rho * (seq.rain[:-1] - c[1:])
    np.testing.assert_allclose(seq.p_true[1:], expected, rtol=0, atol=1e-15)
    t = np.arange(1000)
    np.testing.assert_allclose(
        c, 0.3 + 0.15 * np.sin(2 * np.pi * t / 365.25), atol=1e-15
    )


def test_determinism_and_seeds():
    a, b = rain_sequence(2000, seed=7), rain_sequence(2000, seed=7)
    assert np.array_equal(a.rain, b.rain) and np.array_equal(a.p_true, b.p_true)
    c = rain_sequence(2000, seed=8)
    assert not np.array_equal(a.rain, c.rain)
    # a prefix does not depend on the length asked for
    assert np.array_equal(rain_sequence(500, seed=7).rain, a.rain[:500])
    # seed=None draws fresh entropy
    assert not np.array_equal(rain_sequence(2000).rain, rain_sequence(2000).rain)


@pytest.mark.parametrize(
    "base_rate, persistence", [(0.3, 0.35), (0.1, 0.0), (0.6, 0.7)]
)
def test_wet_fraction_is_near_the_base_rate(base_rate, persistence):
    n, amplitude, period = 60_000, 0.08, 365.25
    seq = rain_sequence(
        n,
        seed=11,
        base_rate=base_rate,
        persistence=persistence,
        seasonal_amplitude=amplitude,
        period=period,
    )
    # sd of the mean of a two-state chain with lag-one autocorrelation rho:
    # sqrt(b (1 - b) / n * (1 + rho) / (1 - rho)); the unfinished last season moves the
    # mean climate by at most amplitude * period / (pi * n).
    sd = math.sqrt(
        base_rate * (1 - base_rate) / n * (1 + persistence) / (1 - persistence)
    )
    partial = amplitude * period / (math.pi * n)
    assert abs(seq.rain.mean() - base_rate) < 5 * sd + partial


def test_persistence_makes_spells():
    seq = rain_sequence(50_000, seed=1, persistence=0.6, seasonal_amplitude=0.0)
    r = seq.rain.astype(float)
    lag1 = np.corrcoef(r[:-1], r[1:])[0, 1]
    assert lag1 == pytest.approx(0.6, abs=5 / math.sqrt(50_000))


def test_seasonal_cycle_and_drift_show_in_the_rain():
    seq = rain_sequence(20 * 365, seed=2, seasonal_amplitude=0.2, period=365.0)
    day = np.arange(len(seq)) % 365
    wet_season = seq.rain[(day > 30) & (day < 150)].mean()  # sin > 0.5
    dry_season = seq.rain[(day > 213) & (day < 333)].mean()  # sin < -0.5
    assert wet_season - dry_season > 0.2
    seq = rain_sequence(
        20 * 365, seed=2, drift=0.02, seasonal_amplitude=0.0, period=365.0
    )
    first, last = seq.rain[: 5 * 365].mean(), seq.rain[-5 * 365 :].mean()
    assert last - first > 0.2  # expected 0.3, sd about 0.01
    assert seq.climate[-1] == pytest.approx(0.3 + 0.02 * (20 * 365 - 1) / 365)


# ---------------------------------------------------------------------- forecasters


def test_calibrated_forecaster_is_calibrated(long_seq):
    q = forecast(long_seq, "calibrated")
    assert np.array_equal(q, long_seq.p_true)
    assert max_bin_z(q, long_seq.rain) < 5


@pytest.mark.parametrize(
    "kind", ["overconfident", "underconfident", "biased", "drifting_bias"]
)
def test_distorted_forecasters_are_not_calibrated(long_seq, kind):
    assert max_bin_z(forecast(long_seq, kind), long_seq.rain) > 10


def test_the_calibration_check_has_power_but_not_noise(long_seq):
    # a small distortion is detected on this sample, and the tolerance is not loose
    q = forecast(long_seq, "overconfident", scale=1.15)
    assert max_bin_z(q, long_seq.rain) > 5


def test_logit_kinds_match_their_formula(long_seq):
    from scipy.special import expit, logit

    p = long_seq.p_true
    n = len(p)
    np.testing.assert_allclose(
        forecast(long_seq, "overconfident"), expit(2 * logit(p)), atol=1e-15
    )
    np.testing.assert_allclose(
        forecast(long_seq, "underconfident"), expit(0.5 * logit(p)), atol=1e-15
    )
    np.testing.assert_allclose(
        forecast(long_seq, "biased", shift=-0.4), expit(logit(p) - 0.4), atol=1e-15
    )
    drift = forecast(long_seq, "drifting_bias", shift=-1.0, shift_end=1.0)
    np.testing.assert_allclose(
        drift, expit(logit(p) + np.linspace(-1, 1, n)), atol=1e-15
    )
    # the bias moves: too dry early, too wet late
    assert np.mean(drift[: n // 5] - p[: n // 5]) < -0.05
    assert np.mean(drift[-n // 5 :] - p[-n // 5 :]) > 0.05


def test_naive_forecasters():
    seq = rain_sequence(3000, seed=4, base_rate=0.4)
    clim = forecast(seq, "climatology")
    assert np.all(clim == 0.4)
    assert np.all(forecast(seq, "climatology", base_rate=0.25) == 0.25)
    pers = forecast(seq, "persistence", weight=0.5)
    assert pers[0] == 0.4
    np.testing.assert_allclose(pers[1:], 0.2 + 0.5 * seq.rain[:-1], atol=1e-15)
    # persistence beats climatology in Brier score when days are persistent
    r = seq.rain
    assert np.mean((pers - r) ** 2) < np.mean((clim - r) ** 2)


@pytest.mark.parametrize("kind", FORECAST_KINDS)
@pytest.mark.parametrize("noise", [0.0, 0.5, 50.0])
def test_forecasts_are_in_the_unit_interval_and_never_nan(kind, noise):
    seq = rain_sequence(
        2000, seed=9, base_rate=0.1, persistence=0.9, seasonal_amplitude=0.09
    )
    params = {"weight": 1.0} if kind == "persistence" else {}
    q = forecast(seq, kind, noise=noise, seed=1, **params)
    assert q.shape == (2000,) and q.dtype == np.float64
    assert not np.isnan(q).any()
    assert np.all((q >= 0.0) & (q <= 1.0))


def test_noise_is_seeded():
    seq = rain_sequence(1000, seed=0)
    a = forecast(seq, "calibrated", noise=0.3, seed=5)
    assert np.array_equal(a, forecast(seq, "calibrated", noise=0.3, seed=5))
    assert not np.array_equal(a, forecast(seq, "calibrated", noise=0.3, seed=6))
    assert not np.array_equal(a, seq.p_true)


def test_miscalibrated_rain_forecasts():
    scores, labels = miscalibrated_rain_forecasts(n=20_000, seed=0)
    assert scores.shape == labels.shape == (20_000,)
    assert scores.dtype == np.float64 and labels.dtype == np.int64
    assert np.all((scores >= 0) & (scores <= 1)) and set(labels.tolist()) == {0, 1}
    s2, l2 = miscalibrated_rain_forecasts(n=20_000, seed=0)
    assert np.array_equal(scores, s2) and np.array_equal(labels, l2)
    assert not np.array_equal(labels, miscalibrated_rain_forecasts(n=20_000, seed=1)[1])
    assert max_bin_z(scores, labels) > 10
    # over-confident: the spread of the forecasts exceeds that of the true probabilities
    p_true = rain_sequence(20_000, seed=0).p_true
    assert np.array_equal(labels, rain_sequence(20_000, seed=0).rain)
    assert scores.std() > 1.5 * p_true.std()


# ---------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "kwargs, exc, pieces",
    [
        ({"n_days": -1}, ValueError, ["'n_days'", "int >= 0", "-1"]),
        ({"n_days": 10.0}, TypeError, ["'n_days'", "10.0"]),
        ({"n_days": True}, TypeError, ["'n_days'"]),
        ({"seed": -3}, ValueError, ["'seed'", "-3"]),
        ({"seed": 1.5}, TypeError, ["'seed'", "1.5"]),
        ({"base_rate": 0.0}, ValueError, ["'base_rate'", "(0, 1)"]),
        ({"base_rate": "0.3"}, TypeError, ["'base_rate'"]),
        ({"persistence": 1.0}, ValueError, ["'persistence'", "[0, 1)"]),
        ({"persistence": -0.1}, ValueError, ["'persistence'"]),
        ({"seasonal_amplitude": -0.1}, ValueError, ["'seasonal_amplitude'"]),
        ({"period": 0}, ValueError, ["'period'", "> 0"]),
        ({"drift": float("inf")}, ValueError, ["'drift'"]),
        (
            {"seasonal_amplitude": 0.31},
            ValueError,
            ["'seasonal_amplitude'", "inside (0, 1)", "day"],
        ),
        ({"drift": -0.2}, ValueError, ["'drift'", "inside (0, 1)"]),
    ],
)
def test_bad_rain_sequence_arguments(kwargs, exc, pieces):
    args = {"n_days": 1000, **kwargs}
    with pytest.raises(exc) as info:
        rain_sequence(**args)
    for piece in ["rain_sequence", *pieces]:
        assert piece in str(info.value)


@pytest.mark.parametrize(
    "args, kwargs, exc, pieces",
    [
        (("rainy",), {}, ValueError, ["'kind'", "'calibrated'", "'rainy'"]),
        ((None,), {}, TypeError, ["'kind'"]),
        (("calibrated",), {"scale": 2.0}, TypeError, ["'scale'", "'calibrated'"]),
        (
            ("biased",),
            {"weight": 0.5},
            TypeError,
            ["'weight'", "('scale', 'shift', 'shift_end')"],
        ),
        (
            ("overconfident",),
            {"scale": float("nan")},
            ValueError,
            ["'scale'", "finite"],
        ),
        (("drifting_bias",), {"shift_end": "up"}, TypeError, ["'shift_end'"]),
        (("persistence",), {"weight": 1.5}, ValueError, ["'weight'", "[0, 1]"]),
        (("climatology",), {"base_rate": -0.1}, ValueError, ["'base_rate'"]),
        (("calibrated",), {"noise": -1.0}, ValueError, ["'noise'", ">= 0"]),
        (("calibrated",), {"seed": "x"}, TypeError, ["'seed'"]),
    ],
)
def test_bad_forecast_arguments(args, kwargs, exc, pieces):
    seq = rain_sequence(100, seed=0)
    with pytest.raises(exc) as info:
        forecast(seq, *args, **kwargs)
    for piece in ["forecast", *pieces]:
        assert piece in str(info.value)


def test_forecast_needs_a_rain_sequence():
    with pytest.raises(
        TypeError, match="'sequence' argument of forecast must be a RainSequence"
    ):
        forecast(np.array([0.2, 0.5]), "calibrated")


def test_bad_miscalibrated_arguments():
    with pytest.raises(
        ValueError, match="'n' argument of miscalibrated_rain_forecasts"
    ):
        miscalibrated_rain_forecasts(n=-5)
    with pytest.raises(
        TypeError, match="'seed' argument of miscalibrated_rain_forecasts"
    ):
        miscalibrated_rain_forecasts(n=5, seed="0")


# ---------------------------------------------------------------- shipped real data


def test_nyc_hourly_weather_matches_published_shape():
    from streamcal.datasets import NYC_ORIGINS, nyc_hourly_rain, nyc_hourly_weather

    all_rows = nyc_hourly_weather()
    assert len(all_rows["origin"]) == 26115
    assert set(all_rows) == {
        "origin",
        "time_hour",
        "temp",
        "dewp",
        "humid",
        "wind_dir",
        "wind_speed",
        "precip",
        "pressure",
        "visib",
    }
    # sorted by origin then strictly increasing time within an origin
    for origin in NYC_ORIGINS:
        rows = nyc_hourly_weather(origin)
        assert (rows["origin"] == origin).all()
        assert (np.diff(rows["time_hour"].astype(np.int64)) > 0).all()
        rain = nyc_hourly_rain(origin)
        assert rain.dtype == np.int64 and set(np.unique(rain).tolist()) <= {0, 1}
        assert np.array_equal(rain, (rows["precip"] > 0).astype(int))
    # documented base rate: about 6.7% of hours over the three airports
    assert abs((all_rows["precip"] > 0).mean() - 0.067) < 0.002
    assert np.isnan(all_rows["pressure"]).sum() == 2729  # empty fields read as NaN


def test_weather_loaders_reject_unknown_origin():
    from streamcal.datasets import nyc_hourly_rain, nyc_hourly_weather

    with pytest.raises(ValueError, match="'origin'.*'EWR'.*Got 'XYZ'"):
        nyc_hourly_weather("XYZ")
    with pytest.raises(ValueError, match="'origin'"):
        nyc_hourly_rain(None)


def test_seattle_daily_weather():
    from streamcal.datasets import seattle_daily_weather

    sea = seattle_daily_weather()
    assert len(sea["date"]) == 1461
    assert str(sea["date"][0]) == "2012-01-01" and str(sea["date"][-1]) == "2015-12-31"
    assert set(sea["weather"].tolist()) == {"drizzle", "fog", "rain", "snow", "sun"}


# ------------------------------------------------------------- regime drift (regimes)


def test_regimes_switch_rate_and_persistence():
    n, regimes = 3000, [(1000, 0.5, 0.7), (2000, 0.2, 0.0)]
    seq = rain_sequence(n, seed=5, regimes=regimes)
    t = np.arange(n)
    rate = np.where(t < 1000, 0.3, np.where(t < 2000, 0.5, 0.2))
    rho = np.where(t < 1000, 0.35, np.where(t < 2000, 0.7, 0.0))
    np.testing.assert_allclose(
        seq.climate, rate + 0.15 * np.sin(2 * np.pi * t / 365.25), atol=1e-15
    )
    c = seq.climate
    assert seq.p_true[0] == c[0]
    expected = c[1:] + rho[1:] * (seq.rain[:-1] - c[1:])
    np.testing.assert_allclose(seq.p_true[1:], expected, rtol=0, atol=1e-15)
    assert seq.base_rate == 0.3
    # the uniform draws are shared: before the first regime, the plain sequence
    plain = rain_sequence(n, seed=5)
    assert np.array_equal(seq.rain[:1000], plain.rain[:1000])
    assert np.array_equal(seq.p_true[:1000], plain.p_true[:1000])


def test_no_regimes_and_late_regimes_change_nothing():
    plain = rain_sequence(800, seed=2, drift=0.01)
    for regimes in (None, [], (), [(800, 0.6, 0.1)], [(10_000, 0.9, 0.9)]):
        seq = rain_sequence(800, seed=2, drift=0.01, regimes=regimes)
        assert np.array_equal(seq.rain, plain.rain)
        assert np.array_equal(seq.p_true, plain.p_true)
        assert np.array_equal(seq.climate, plain.climate)


def test_regimes_show_in_the_rain():
    seq = rain_sequence(
        40_000, seed=3, seasonal_amplitude=0.0, regimes=[(20_000, 0.6, 0.7)]
    )
    first, second = seq.rain[:20_000].astype(float), seq.rain[20_000:].astype(float)
    # sd of the mean of a two-state chain (see test_wet_fraction_is_near_the_base_rate)
    sd1 = math.sqrt(0.3 * 0.7 / 20_000 * 1.35 / 0.65)
    sd2 = math.sqrt(0.6 * 0.4 / 20_000 * 1.7 / 0.3)
    assert abs(first.mean() - 0.3) < 5 * sd1 and abs(second.mean() - 0.6) < 5 * sd2
    lag1 = np.corrcoef(second[:-1], second[1:])[0, 1]
    assert lag1 == pytest.approx(0.7, abs=5 / math.sqrt(20_000 * 0.3))


@pytest.mark.parametrize(
    "regimes, exc",
    [
        (5, TypeError),
        ([(10, 0.3)], TypeError),
        ([(10.0, 0.3, 0.2)], TypeError),
        ([(10, "wet", 0.2)], TypeError),
        ([(0, 0.3, 0.2)], ValueError),
        ([(10, 0.3, 0.2), (10, 0.4, 0.2)], ValueError),
        ([(20, 0.3, 0.2), (10, 0.4, 0.2)], ValueError),
        ([(10, 1.0, 0.2)], ValueError),
        ([(10, 0.3, 1.0)], ValueError),
        ([(10, 0.3, -0.1)], ValueError),
    ],
)
def test_bad_regimes(regimes, exc):
    with pytest.raises(exc) as info:
        rain_sequence(100, seed=0, regimes=regimes)
    message = str(info.value)
    assert "'regimes' argument of rain_sequence" in message
    assert "(start_day, base_rate, persistence)" in message


def test_regimes_must_keep_the_climate_inside_the_unit_interval():
    with pytest.raises(ValueError, match="and the regimes, which give"):
        rain_sequence(400, seed=0, regimes=[(200, 0.05, 0.2)])


# ----------------------------------------------- adversarial nature (AdversarialNature)


def play(nature, forecasts):
    """Outcomes and chain probabilities of ``nature`` facing the given forecasts."""
    p, rain = [], []
    for q in forecasts:
        p.append(nature.p_rain)
        rain.append(nature.respond(q))
    return np.array(p), np.array(rain)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    "params",
    [{}, {"persistence": 0.0}, {"base_rate": 0.6, "persistence": 0.8, "period": 7.0}],
)
def test_a_nature_that_never_reacts_is_the_rain_sequence(seed, params):
    from streamcal.datasets import AdversarialNature

    nature = AdversarialNature(strength=0.0, seed=seed, **params)
    rng = np.random.default_rng(seed + 100)
    p, rain = play(nature, rng.random(3000))
    seq = rain_sequence(3000, seed=seed, **params)
    assert np.array_equal(rain, seq.rain)
    np.testing.assert_allclose(p, seq.p_true, rtol=0, atol=1e-15)
    assert nature.n_days == 3000


@pytest.mark.parametrize("threshold", [0.0, 0.3, 0.5, 1.0])
def test_a_nature_that_always_reacts_is_contrary(threshold):
    from streamcal.datasets import AdversarialNature

    nature = AdversarialNature(strength=1.0, threshold=threshold, seed=4)
    q = np.random.default_rng(1).random(2000)
    q[:10] = threshold  # exactly at the threshold: dry
    p, rain = play(nature, q)
    assert np.array_equal(rain, (q < threshold).astype(int))
    # the chain still runs on the forced weather
    c = 0.3 + 0.15 * np.sin(2 * np.pi * np.arange(2000) / 365.25)
    np.testing.assert_allclose(p[1:], c[1:] + 0.35 * (rain[:-1] - c[1:]), atol=1e-15)


@pytest.mark.parametrize("strength", [0.25, 0.5, 0.75])
def test_nature_reacts_with_the_given_probability(strength):
    from streamcal.datasets import AdversarialNature

    n = 20_000
    nature_low = AdversarialNature(strength=strength, persistence=0.0, seed=9)
    nature_high = AdversarialNature(strength=strength, persistence=0.0, seed=9)
    _, low = play(nature_low, np.zeros(n))  # always below the threshold
    _, high = play(nature_high, np.ones(n))  # never below it
    # with persistence 0 the chain rains with probability c_t (mean 0.3 over the
    # seasons, up to 0.15 * 365.25 / (pi n) for the unfinished season)
    sd = math.sqrt(0.25 / n)
    assert abs(low.mean() - ((1 - strength) * 0.3 + strength)) < 5 * sd + 0.001
    assert abs(high.mean() - (1 - strength) * 0.3) < 5 * sd + 0.001
    # common random numbers: the same days are contrary for both forecasters
    contrary = low != high
    assert abs(contrary.mean() - strength) < 5 * sd


def test_no_deterministic_constant_forecast_is_calibrated():
    from streamcal.datasets import AdversarialNature

    # (1 - s) * 0.3 < 1/2 <= (1 - s) * 0.3 + s for s = 0.5: every constant forecast
    # misses its outcome frequency by more than 0.1
    for q in np.linspace(0, 1, 21):
        nature = AdversarialNature(strength=0.5, persistence=0.0, seed=0)
        _, rain = play(nature, np.full(5000, q))
        assert abs(rain.mean() - q) > 0.1


def test_nature_seeds():
    from streamcal.datasets import AdversarialNature

    q = np.random.default_rng(0).random(1000)
    a = play(AdversarialNature(seed=3), q)[1]
    assert np.array_equal(a, play(AdversarialNature(seed=3), q)[1])
    assert not np.array_equal(a, play(AdversarialNature(seed=4), q)[1])
    assert not np.array_equal(
        play(AdversarialNature(), q)[1], play(AdversarialNature(), q)[1]
    )
    assert "AdversarialNature(strength=0.5" in repr(AdversarialNature(seed=0))


@pytest.mark.parametrize(
    "kwargs, pieces",
    [
        ({"strength": 1.5}, ["'strength'", "[0, 1]", "1.5"]),
        ({"strength": "x"}, ["'strength'"]),
        ({"threshold": -0.1}, ["'threshold'", "[0, 1]"]),
        ({"base_rate": 1.0}, ["'base_rate'", "(0, 1)"]),
        ({"persistence": 1.0}, ["'persistence'", "[0, 1)"]),
        ({"seasonal_amplitude": 0.3}, ["'seasonal_amplitude'", "min(base_rate"]),
        ({"period": 0.0}, ["'period'", "> 0"]),
        ({"seed": -1}, ["'seed'", "int >= 0 or None"]),
        ({"seed": 1.0}, ["'seed'"]),
    ],
)
def test_bad_nature_parameters(kwargs, pieces):
    from streamcal.datasets import AdversarialNature

    with pytest.raises(ValueError) as info:
        AdversarialNature(**kwargs)
    for piece in ["parameter of AdversarialNature", *pieces]:
        assert piece in str(info.value)


@pytest.mark.parametrize("bad", [float("nan"), -0.1, 1.5, "0.5", None])
def test_a_bad_forecast_leaves_nature_unchanged(bad):
    from streamcal.datasets import AdversarialNature

    nature, twin = AdversarialNature(seed=1), AdversarialNature(seed=1)
    for _ in range(10):
        nature.respond(0.2), twin.respond(0.2)
    with pytest.raises(
        (ValueError, TypeError),
        match="'forecast' argument of AdversarialNature.respond",
    ):
        nature.respond(bad)
    assert nature.n_days == 10 and nature.p_rain == twin.p_rain
    assert [nature.respond(0.6) for _ in range(50)] == [
        twin.respond(0.6) for _ in range(50)
    ]
