"""Generated rain-forecast sequences: a seasonal wet/dry Markov chain and forecasters of it.

The weather is a two-state (dry = 0, wet = 1) Markov chain whose climatological wet-day
probability ``c_t`` follows a seasonal cycle and an optional linear trend::

    c_t = base_rate + seasonal_amplitude * sin(2 pi t / period) + drift * t / period
    P(wet on day t | the past) = c_t + persistence * (rain[t-1] - c_t)

``persistence`` is the lag-one autocorrelation of the wet/dry indicator: 0 gives
independent days, values near 1 long wet and dry spells. With ``c_t`` held constant the
chain's stationary wet-day rate is exactly ``c_t``, so over whole seasonal cycles the
fraction of wet days is close to ``base_rate``. The conditional probability (``p_true``)
is known exactly, which is what makes the sequence useful for testing calibration: a
forecaster that issues ``p_true`` is calibrated by construction, and miscalibrated
forecasters are distortions of it (see :func:`forecast`).
"""

from __future__ import annotations

import dataclasses
import math
import types

import numpy as np
from scipy.special import expit, logit

from streamcal import _validation as V

__all__ = [
    "FORECAST_KINDS",
    "RainSequence",
    "forecast",
    "miscalibrated_rain_forecasts",
    "rain_sequence",
]

# kind -> default parameters (read-only; forecast() copies them into a fresh dict).
_KIND_DEFAULTS = types.MappingProxyType(
    {
        "calibrated": (),
        "overconfident": (("scale", 2.0), ("shift", 0.0), ("shift_end", None)),
        "underconfident": (("scale", 0.5), ("shift", 0.0), ("shift_end", None)),
        "biased": (("scale", 1.0), ("shift", 0.75), ("shift_end", None)),
        "drifting_bias": (("scale", 1.0), ("shift", -1.0), ("shift_end", 1.0)),
        "climatology": (("base_rate", None),),
        "persistence": (("weight", 0.5), ("base_rate", None)),
    }
)

#: The forecaster kinds accepted by :func:`forecast`.
FORECAST_KINDS = tuple(_KIND_DEFAULTS)


def _argument_error(owner, name, value, domain, exc=ValueError):
    return V.argument_error(exc, name, owner, None, domain, value)


def _check_seed(owner, seed):
    return V.check_int(seed, owner, "seed", minimum=0, allow_none=True)


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class RainSequence:
    """A generated rain sequence (see :func:`rain_sequence`).

    The arrays are read-only; copy them to modify them.

    Attributes
    ----------
    p_true
        ``float64`` array, ``p_true[t]`` is the probability of rain on day ``t`` given
        days ``0 .. t-1``; strictly inside (0, 1).
    rain
        ``int64`` array of outcomes, 1 (wet) or 0 (dry).
    climate
        ``float64`` array, the climatological wet-day probability ``c_t`` of each day
        (seasonal cycle plus trend), strictly inside (0, 1).
    base_rate
        The ``base_rate`` the sequence was generated with.

    Examples
    --------
    >>> seq = rain_sequence(10, seed=1)
    >>> len(seq), seq.p_true.shape, seq.rain.shape
    (10, (10,), (10,))
    >>> seq
    RainSequence(n_days=10, base_rate=0.3, wet_days=2)

    """

    p_true: np.ndarray
    rain: np.ndarray
    climate: np.ndarray
    base_rate: float

    def __len__(self) -> int:
        return len(self.rain)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(n_days={len(self)}, base_rate={self.base_rate!r}, "
            f"wet_days={int(self.rain.sum())})"
        )


def rain_sequence(
    n_days: int,
    seed: int | None = None,
    base_rate: float = 0.3,
    persistence: float = 0.35,
    seasonal_amplitude: float = 0.15,
    period: float = 365.25,
    drift: float = 0.0,
) -> RainSequence:
    """Generate ``n_days`` of wet/dry weather from a seasonal two-state Markov chain.

    Day ``t`` (from 0) has climatological wet-day probability
    ``c_t = base_rate + seasonal_amplitude * sin(2 pi t / period) + drift * t / period``
    and rains with probability ``p_t = c_t + persistence * (rain[t-1] - c_t)``
    (``p_0 = c_0``): after a wet day the chance of rain is raised towards 1, after a dry
    day lowered towards 0. Cost O(n_days), one uniform draw per day.

    Parameters
    ----------
    n_days
        Length of the sequence, an int >= 0.
    seed
        Seed of the local random generator (an int >= 0), or None for fresh entropy.
        The same seed and parameters give the same sequence.
    base_rate
        Mean climatological wet-day probability, in (0, 1). Over whole seasonal cycles
        (and with ``drift=0``) the fraction of wet days is close to it.
    persistence
        Lag-one autocorrelation of the wet/dry indicator, in [0, 1): 0 makes days
        independent given the season; larger values give longer wet and dry spells.
    seasonal_amplitude
        Amplitude (>= 0) of the sinusoidal seasonal cycle of ``c_t``; day 0 is at the
        cycle's mean, going into the wet season.
    period
        Length of the seasonal cycle in days, a finite number > 0.
    drift
        Linear trend of ``c_t``: change of the climatological rate per ``period``
        (a slow regime shift, e.g. ``0.02`` makes each year 2 points wetter). ``c_t``
        must stay inside (0, 1) over the whole sequence.

    Returns
    -------
    RainSequence
        ``p_true`` (the probability of rain given the past), ``rain`` (0/1 outcomes),
        ``climate`` (``c_t``) and ``base_rate``.

    Examples
    --------
    >>> seq = rain_sequence(730, seed=0)
    >>> seq.p_true.shape, seq.rain.dtype
    ((730,), dtype('int64'))
    >>> bool(((seq.p_true > 0) & (seq.p_true < 1)).all()), set(seq.rain.tolist())
    (True, {0, 1})
    >>> bool(np.array_equal(seq.rain, rain_sequence(730, seed=0).rain))
    True

    After a wet day the chance of rain is higher than after a dry one:

    >>> wet_before = seq.rain[:-1] == 1
    >>> bool(seq.p_true[1:][wet_before].mean() > seq.p_true[1:][~wet_before].mean())
    True

    """
    owner = "rain_sequence"
    n_days = V.check_int(n_days, owner, "n_days")
    seed = _check_seed(owner, seed)
    base_rate = V.check_real(
        base_rate,
        owner,
        "base_rate",
        lambda x: 0.0 < x < 1.0,
        "a real number in (0, 1)",
    )
    persistence = V.check_real(
        persistence,
        owner,
        "persistence",
        lambda x: 0.0 <= x < 1.0,
        "a real number in [0, 1)",
    )
    seasonal_amplitude = V.check_real(
        seasonal_amplitude,
        owner,
        "seasonal_amplitude",
        lambda x: 0.0 <= x < math.inf,
        "a finite real number >= 0",
    )
    period = V.check_real(
        period,
        owner,
        "period",
        lambda x: 0.0 < x < math.inf,
        "a finite real number > 0",
    )
    drift = V.check_real(drift, owner, "drift", math.isfinite, "a finite real number")

    t = np.arange(n_days, dtype=np.float64)
    climate = (
        base_rate
        + seasonal_amplitude * np.sin(2.0 * np.pi * t / period)
        + drift * t / period
    )
    if n_days and not (climate.min() > 0.0 and climate.max() < 1.0):
        day = (
            int(np.argmin(climate)) if climate.min() <= 0.0 else int(np.argmax(climate))
        )
        raise ValueError(
            "The arguments 'base_rate', 'seasonal_amplitude' and 'drift' of rain_sequence "
            "must keep the climatological wet-day probability inside (0, 1). Got "
            f"base_rate={base_rate!r}, seasonal_amplitude={seasonal_amplitude!r}, "
            f"drift={drift!r}, which give {climate[day]:.4g} on day {day} instead."
        )

    # Conditional rain probability after a dry day and after a wet day.
    # Clipped to the open interval: with c_t within an ulp of 0 or 1 rounding could
    # otherwise give exactly 0 or 1.
    p_dry = np.maximum((1.0 - persistence) * climate, np.finfo(np.float64).tiny)
    p_wet = np.minimum(
        (1.0 - persistence) * climate + persistence, np.nextafter(1.0, 0.0)
    )
    u = np.random.default_rng(seed).random(n_days)

    rain = np.zeros(n_days, dtype=np.int64)
    p_true = np.empty(n_days, dtype=np.float64)
    if n_days:
        p_true[0] = climate[0]
        wet = u[0] < p_true[0]
        # The chain is sequential; a plain loop over Python floats is the fast way.
        pd, pw, uu = p_dry.tolist(), p_wet.tolist(), u.tolist()
        out = [0] * n_days
        out[0] = int(wet)
        for i in range(1, n_days):
            wet = uu[i] < (pw[i] if wet else pd[i])
            out[i] = wet
        rain[:] = out
        p_true[1:] = np.where(rain[:-1] == 1, p_wet[1:], p_dry[1:])

    for arr in (p_true, rain, climate):
        arr.flags.writeable = False
    return RainSequence(p_true=p_true, rain=rain, climate=climate, base_rate=base_rate)


def forecast(
    sequence: RainSequence,
    kind: str = "calibrated",
    *,
    seed: int | None = None,
    noise: float = 0.0,
    **params,
) -> np.ndarray:
    """Forecasts of a :class:`RainSequence` by a forecaster of the given ``kind``.

    The forecast for day ``t`` uses only days before ``t`` (and ``p_true[t]``, itself a
    function of the past). Five kinds distort the true probability on the logit scale,
    ``logit(q_t) = scale * logit(p_true[t]) + shift_t``, with ``shift_t`` going linearly
    from ``shift`` on the first day to ``shift_end`` on the last (default: constant).
    The kinds are presets of those parameters, which can be overridden:

    ================  ===================================================================
    kind              forecast
    ================  ===================================================================
    "calibrated"      ``p_true`` itself (no parameters)
    "overconfident"   ``scale=2.0``: too close to 0 and 1
    "underconfident"  ``scale=0.5``: too close to 1/2
    "biased"          ``shift=0.75``: too wet (a negative shift: too dry)
    "drifting_bias"   ``shift=-1.0, shift_end=1.0``: too dry, drifting to too wet
    "climatology"     the constant ``base_rate`` (default: the sequence's)
    "persistence"     ``(1 - weight) * base_rate + weight * rain[t-1]`` (``weight=0.5``),
                      ``base_rate`` on day 0
    ================  ===================================================================

    Parameters
    ----------
    sequence
        The :class:`RainSequence` to forecast.
    kind
        One of :data:`FORECAST_KINDS`.
    seed
        Seed (an int >= 0, or None) of the generator drawing the noise; unused when
        ``noise`` is 0.
    noise
        Standard deviation (>= 0) of independent Gaussian noise added to every forecast
        on the logit scale (0: none). Noise makes any kind miscalibrated, even
        "calibrated".
    **params
        The kind's parameters, as in the table: ``scale`` (a finite number),
        ``shift`` and ``shift_end`` (finite numbers; ``shift_end=None`` means
        ``shift``), ``base_rate`` (in [0, 1]; None: the sequence's), ``weight``
        (in [0, 1]).

    Returns
    -------
    numpy.ndarray
        ``float64`` forecasts, one per day, in [0, 1] (never NaN).

    Examples
    --------
    >>> seq = rain_sequence(1000, seed=0)
    >>> q = forecast(seq, "overconfident")
    >>> q.shape, bool(((q >= 0) & (q <= 1)).all())
    ((1000,), True)
    >>> bool(np.array_equal(forecast(seq, "calibrated"), seq.p_true))
    True
    >>> forecast(seq, "persistence", weight=1.0)[:4].tolist() == [0.3, *seq.rain[:3]]
    True
    >>> q = forecast(seq, "biased", shift=-0.5, noise=0.3, seed=1)
    >>> bool(q.mean() < seq.p_true.mean())
    True
    >>> forecast(seq, "biased", scale=2.0, weight=0.5)
    Traceback (most recent call last):
    ...
    TypeError: The 'weight' argument of forecast is not a parameter of the 'biased' kind, whose parameters are ('scale', 'shift', 'shift_end').

    """
    owner = "forecast"
    if not isinstance(sequence, RainSequence):
        raise _argument_error(owner, "sequence", sequence, "a RainSequence", TypeError)
    if not isinstance(kind, str) or kind not in _KIND_DEFAULTS:
        raise _argument_error(
            owner,
            "kind",
            kind,
            "a str among {" + ", ".join(map(repr, FORECAST_KINDS)) + "}",
            ValueError if isinstance(kind, str) else TypeError,
        )
    seed = _check_seed(owner, seed)
    noise = V.check_real(
        noise,
        owner,
        "noise",
        lambda x: 0.0 <= x < math.inf,
        "a finite real number >= 0",
    )
    p = dict(_KIND_DEFAULTS[kind])
    for name, value in params.items():
        if name not in p:
            raise TypeError(
                f"The {name!r} argument of forecast is not a parameter of the {kind!r} kind, "
                f"whose parameters are {tuple(p)}."
            )
        p[name] = value

    n = len(sequence)
    p_true = sequence.p_true
    if kind == "calibrated":
        q = p_true.copy()
    elif kind in ("climatology", "persistence"):
        base = p["base_rate"]
        if base is None:
            base = sequence.base_rate
        else:
            base = V.check_real(
                base,
                owner,
                "base_rate",
                lambda x: 0.0 <= x <= 1.0,
                "a real number in [0, 1] or None",
            )
        q = np.full(n, base, dtype=np.float64)
        if kind == "persistence":
            w = V.check_real(
                p["weight"],
                owner,
                "weight",
                lambda x: 0.0 <= x <= 1.0,
                "a real number in [0, 1]",
            )
            q[1:] = (1.0 - w) * base + w * sequence.rain[:-1]
    else:
        scale = V.check_real(
            p["scale"], owner, "scale", math.isfinite, "a finite real number"
        )
        shift = V.check_real(
            p["shift"], owner, "shift", math.isfinite, "a finite real number"
        )
        end = p["shift_end"]
        if end is None:
            end = shift
        else:
            end = V.check_real(
                end, owner, "shift_end", math.isfinite, "a finite real number or None"
            )
        shifts = np.linspace(shift, end, n) if n > 1 else np.full(n, shift)
        q = expit(scale * logit(p_true) + shifts)
    if noise > 0.0:
        eps = np.random.default_rng(seed).standard_normal(n)
        with np.errstate(divide="ignore"):  # logit(0) = -inf, logit(1) = inf: kept
            q = expit(logit(q) + noise * eps)
    return np.clip(q, 0.0, 1.0)


def miscalibrated_rain_forecasts(
    n: int = 20_000, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """The default demo stream: an over-confident, wet-biased forecaster of seasonal rain.

    ``n`` days of :func:`rain_sequence` with its defaults (base rate 0.3, persistence
    0.35, seasonal amplitude 0.15, one-year period), forecast with
    ``forecast(seq, "overconfident", scale=2.0, shift=0.5, noise=0.25)``: the true
    probability's logit doubled, shifted 0.5 towards rain, plus a little logit noise.
    A monotone recalibration map recovers most of the lost calibration.

    Parameters
    ----------
    n
        Number of days, an int >= 0.
    seed
        Seed (an int >= 0, or None for fresh entropy) of the weather; the forecast
        noise is seeded with ``seed + 1``.

    Returns
    -------
    scores, labels
        ``float64`` forecasts in [0, 1] and ``int64`` 0/1 outcomes, both of length ``n``.

    Examples
    --------
    >>> scores, labels = miscalibrated_rain_forecasts(n=500, seed=0)
    >>> scores.shape, labels.shape, scores.dtype, labels.dtype
    ((500,), (500,), dtype('float64'), dtype('int64'))
    >>> bool(((scores >= 0) & (scores <= 1)).all()), set(labels.tolist())
    (True, {0, 1})

    """
    seed = _check_seed("miscalibrated_rain_forecasts", seed)
    n = V.check_int(n, "miscalibrated_rain_forecasts", "n")
    seq = rain_sequence(n, seed=seed)
    noise_seed = (
        None if seed is None else seed + 1
    )  # not seed: its draws would match the weather's
    scores = forecast(
        seq, "overconfident", scale=2.0, shift=0.5, noise=0.25, seed=noise_seed
    )
    return scores, seq.rain.copy()
