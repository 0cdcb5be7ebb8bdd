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
forecasters are distortions of it (see :func:`forecast`). ``regimes`` switch the
chain's base rate and persistence abruptly on given days (regime drift).

:class:`AdversarialNature` is the same chain played interactively: it sees each
forecast before deciding whether it rains, and with probability ``strength`` does the
opposite of what the forecast says, so that no deterministic forecaster can be
calibrated against it (the setting of Foster's randomised forecaster).
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
    "AdversarialNature",
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


_REGIMES_DOMAIN = (
    "None or a sequence of (start_day, base_rate, persistence) triples with strictly "
    "increasing start days (ints >= 1), base_rate in (0, 1) and persistence in [0, 1)"
)


def _check_regimes(owner, regimes) -> list[tuple[int, float, float]]:
    """The validated regimes as a list of ``(start_day, base_rate, persistence)``."""
    if regimes is None:
        return []
    try:
        items = [tuple(r) for r in regimes]
    except TypeError:
        raise _argument_error(
            owner, "regimes", regimes, _REGIMES_DOMAIN, TypeError
        ) from None
    out, previous = [], 0
    for item in items:
        if len(item) != 3:
            raise _argument_error(owner, "regimes", regimes, _REGIMES_DOMAIN, TypeError)
        start, rate, pers = item
        if not (V.is_integer(start) and V.is_real(rate) and V.is_real(pers)):
            raise _argument_error(owner, "regimes", regimes, _REGIMES_DOMAIN, TypeError)
        if not (
            start > previous and 0.0 < float(rate) < 1.0 and 0.0 <= float(pers) < 1.0
        ):
            raise _argument_error(owner, "regimes", regimes, _REGIMES_DOMAIN)
        out.append((int(start), float(rate), float(pers)))
        previous = start
    return out


def rain_sequence(
    n_days: int,
    seed: int | None = None,
    base_rate: float = 0.3,
    persistence: float = 0.35,
    seasonal_amplitude: float = 0.15,
    period: float = 365.25,
    drift: float = 0.0,
    regimes=None,
) -> RainSequence:
    """Generate ``n_days`` of wet/dry weather from a seasonal two-state Markov chain.

    Day ``t`` (from 0) has climatological wet-day probability
    ``c_t = base_rate + seasonal_amplitude * sin(2 pi t / period) + drift * t / period``
    and rains with probability ``p_t = c_t + persistence * (rain[t-1] - c_t)``
    (``p_0 = c_0``): after a wet day the chance of rain is raised towards 1, after a dry
    day lowered towards 0. With ``regimes``, ``base_rate`` and ``persistence`` change
    on the given days. Cost O(n_days + len(regimes)), one uniform draw per day (the
    draws do not depend on the parameters, so sequences with the same seed share them).

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
    regimes
        Abrupt regime drift: None (default), or a sequence of ``(start_day, base_rate,
        persistence)`` triples with strictly increasing ``start_day`` (ints >= 1),
        ``base_rate`` in (0, 1) and ``persistence`` in [0, 1). From ``start_day`` on
        (until the next regime) the chain uses that base rate and persistence instead
        of the arguments of the same names, which hold before the first regime; the
        seasonal cycle and ``drift`` still apply on top. Regimes starting at or after
        ``n_days`` have no effect. ``RainSequence.base_rate`` stays the initial one.

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

    A wetter regime from day 365 on, with longer spells:

    >>> seq = rain_sequence(730, seed=0, regimes=[(365, 0.5, 0.6)])
    >>> round(float(seq.climate[364]), 3), round(float(seq.climate[365]), 3)
    (0.297, 0.499)
    >>> bool(seq.rain[:365].mean() < seq.rain[365:].mean())
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
    seasonal_amplitude = V.check_weight(seasonal_amplitude, owner, name="seasonal_amplitude")
    period = V.check_real(
        period,
        owner,
        "period",
        lambda x: 0.0 < x < math.inf,
        "a finite real number > 0",
    )
    drift = V.check_real(drift, owner, "drift", math.isfinite, "a finite real number")
    regimes = _check_regimes(owner, regimes)

    t = np.arange(n_days, dtype=np.float64)
    rates = np.full(n_days, base_rate)
    rho = np.full(n_days, persistence)
    for start, rate, pers in regimes:
        rates[start:] = rate
        rho[start:] = pers
    climate = (
        rates
        + seasonal_amplitude * np.sin(2.0 * np.pi * t / period)
        + drift * t / period
    )
    if n_days and not (climate.min() > 0.0 and climate.max() < 1.0):
        day = (
            int(np.argmin(climate)) if climate.min() <= 0.0 else int(np.argmax(climate))
        )
        with_regimes = " and the regimes" if regimes else ""
        raise ValueError(
            "The arguments 'base_rate', 'seasonal_amplitude' and 'drift' of rain_sequence "
            "must keep the climatological wet-day probability inside (0, 1). Got "
            f"base_rate={base_rate!r}, seasonal_amplitude={seasonal_amplitude!r}, "
            f"drift={drift!r}{with_regimes}, which give {climate[day]:.4g} on day {day} "
            "instead."
        )

    # Conditional rain probability after a dry day and after a wet day.
    # Clipped to the open interval: with c_t within an ulp of 0 or 1 rounding could
    # otherwise give exactly 0 or 1.
    p_dry = np.maximum((1.0 - rho) * climate, np.finfo(np.float64).tiny)
    p_wet = np.minimum((1.0 - rho) * climate + rho, np.nextafter(1.0, 0.0))
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
    noise = V.check_weight(noise, owner, name="noise")
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


class AdversarialNature:
    """Rain that sees the forecast before it falls: the seasonal Markov chain of
    :func:`rain_sequence`, played one day at a time, which with probability
    ``strength`` does the opposite of what the forecast says.

    Each day ``t`` (from 0) the chain has the chance of rain :attr:`p_rain`, ``p_t =
    c_t + persistence * (rain[t-1] - c_t)`` with ``c_t = base_rate + seasonal_amplitude
    * sin(2 pi t / period)`` and ``p_0 = c_0``, as in :func:`rain_sequence`. The
    forecaster announces its forecast ``q_t``; then :meth:`respond` decides the
    weather with two uniform draws ``u_t`` and ``v_t``:

    - if ``v_t < strength``, nature is contrary: it rains if ``q_t < threshold`` and
      stays dry otherwise;
    - otherwise the chain rains if ``u_t < p_t``.

    So the chance of rain given the past and the forecast is ``(1 - strength) * p_t +
    strength * [q_t < threshold]``. When ``(1 - strength) * p_t < threshold <= (1 -
    strength) * p_t + strength`` no forecast is right (a forecast below the threshold
    brings the higher chance, one at or above it the lower one), and a deterministic
    forecaster cannot be calibrated; a randomised one can, if nature sees only its mixed
    strategy and not the draw (Foster 1999, :class:`streamcal.EpsilonCalibratedForecaster`):
    pass the mean of the mixed forecast to :meth:`respond` (as nature sees the strategy,
    the forecaster's own draw must not reach it). ``strength=0`` is the plain chain:
    with the same seed and parameters its days and rain are exactly those of
    :func:`rain_sequence`.

    Parameters
    ----------
    strength
        Probability in [0, 1] that nature reacts to the forecast on a given day.
    threshold
        Nature, when contrary, rains exactly when the forecast is below this, a real
        number in [0, 1] (default 1/2, Dawid's and Oakes's contrary sequence).
    base_rate, persistence, seasonal_amplitude, period
        The chain, as in :func:`rain_sequence` (``base_rate +- seasonal_amplitude`` must
        lie inside (0, 1)).
    seed
        Seed (an int >= 0) of the draws, or None for fresh entropy. The ``u`` draws are
        those of :func:`rain_sequence` with the same seed; the ``v`` draws come from a
        second generator. Both are made every day, whatever the forecast, so
        forecasters played against natures with the same seed face the same draws.

    Attributes
    ----------
    p_rain
        Today's chance of rain of the chain, before nature sees the forecast.
    n_days
        Number of days played so far.

    Notes
    -----
    :meth:`respond` costs O(1): two uniform draws and a sine.

    Examples
    --------
    A forecaster that always says 0.3 gets rain every time nature reacts:

    >>> from streamcal.datasets import AdversarialNature
    >>> nature = AdversarialNature(strength=1.0, seed=0)
    >>> [nature.respond(0.3) for _ in range(5)], nature.n_days
    ([1, 1, 1, 1, 1], 5)
    >>> round(nature.p_rain, 4)     # the chain remembers the (forced) wet days
    0.5534

    With ``strength=0`` it is :func:`rain_sequence` played day by day:

    >>> plain, seq = AdversarialNature(strength=0.0, seed=3), rain_sequence(50, seed=3)
    >>> [plain.respond(0.5) for _ in range(50)] == seq.rain.tolist()
    True

    """

    def __init__(
        self,
        strength: float = 0.5,
        threshold: float = 0.5,
        base_rate: float = 0.3,
        persistence: float = 0.35,
        seasonal_amplitude: float = 0.15,
        period: float = 365.25,
        seed: int | None = None,
    ):
        owner = type(self).__name__
        V.check_param(
            owner,
            "strength",
            strength,
            V.is_real(strength) and 0.0 <= strength <= 1.0,
            "a real number in [0, 1]",
        )
        V.check_param(
            owner,
            "threshold",
            threshold,
            V.is_real(threshold) and 0.0 <= threshold <= 1.0,
            "a real number in [0, 1]",
        )
        V.check_param(
            owner,
            "base_rate",
            base_rate,
            V.is_real(base_rate) and 0.0 < base_rate < 1.0,
            "a real number in (0, 1)",
        )
        V.check_param(
            owner,
            "persistence",
            persistence,
            V.is_real(persistence) and 0.0 <= persistence < 1.0,
            "a real number in [0, 1)",
        )
        V.check_param(
            owner,
            "seasonal_amplitude",
            seasonal_amplitude,
            V.is_real(seasonal_amplitude)
            and 0.0 <= seasonal_amplitude < min(base_rate, 1.0 - base_rate),
            "a real number >= 0 below min(base_rate, 1 - base_rate)",
        )
        V.check_param(
            owner,
            "period",
            period,
            V.is_real(period) and 0.0 < period < math.inf,
            "a finite real number > 0",
        )
        V.check_optional_int_param(owner, "seed", seed, 0)
        self.strength = strength
        self.threshold = threshold
        self.base_rate = base_rate
        self.persistence = persistence
        self.seasonal_amplitude = seasonal_amplitude
        self.period = period
        self.seed = seed
        self._reset()

    def _reset(self) -> None:
        seed = self.seed
        if seed is None:
            seed = np.random.SeedSequence().entropy
        self._rng_u = np.random.default_rng(seed)
        self._rng_v = np.random.default_rng([seed, 1])
        self._t = 0
        self._p = self._climate(0)

    def _climate(self, t: int) -> float:
        return float(self.base_rate) + float(self.seasonal_amplitude) * math.sin(
            2.0 * math.pi * t / float(self.period)
        )

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(strength={self.strength!r}, "
            f"threshold={self.threshold!r}, n_days={self._t})"
        )

    @property
    def p_rain(self) -> float:
        return self._p

    @property
    def n_days(self) -> int:
        return self._t

    def respond(self, forecast: float) -> int:
        """Today's weather (1 wet, 0 dry) given the forecast; then move to the next day.

        Parameters
        ----------
        forecast
            The forecast announced for today, in [0, 1] (for a randomised forecaster,
            the mean of its mixed strategy).

        Returns
        -------
        int
            1 if it rains, 0 otherwise. Cost O(1).

        """
        q = V.check_score(forecast, type(self).__name__, "respond", name="forecast")
        u = float(self._rng_u.random())
        v = float(self._rng_v.random())
        if v < self.strength:
            wet = q < self.threshold
        else:
            wet = u < self._p
        self._t += 1
        c = self._climate(self._t)
        rho = float(self.persistence)
        if wet:
            self._p = min((1.0 - rho) * c + rho, math.nextafter(1.0, 0.0))
        else:
            self._p = max((1.0 - rho) * c, 2.2250738585072014e-308)
        return int(wet)
