"""Test martingales for the calibration of binary forecasts.

The null hypothesis is that every forecast is right: for each event ``t`` the score
``p_t`` is the probability that ``y_t = 1`` given everything that came before (the past
events and ``p_t`` itself). An alternative forecast ``g_t`` chosen *before* ``y_t`` is
seen (a recalibration of ``p_t`` learnt from past events only) is turned into a bet: the
forecast ``q_t = (1 - lam) * g_t + lam * p_t`` and the factor

    f_t = q_t(y_t) / p_t(y_t),   where p(1) = p and p(0) = 1 - p,

the likelihood ratio of the label under ``q_t`` and under ``p_t``. Under the null
``E[f_t | past] = p_t * q_t / p_t + (1 - p_t) * (1 - q_t) / (1 - p_t) = 1`` whatever
``g_t``, so the running product ``M_t = f_1 * ... * f_t`` is a nonnegative martingale
with ``M_0 = 1`` (a test martingale), and by Ville's inequality
``P(sup_t M_t >= 1 / alpha) <= alpha``. A uniform average of such martingales, one per
mixing weight ``lam``, is again one: :class:`MixtureEProcess` keeps that average.

With ``lam > 0`` the factor is at least ``lam``: one surprising label can never wipe the
wealth out. Forecasts of exactly 0 or 1 are not bet against (``q = p``): the factor is 1
when the label agrees and infinite when it contradicts the forecast, an event of
probability 0 under the null (the forecast is then certainly wrong).

This module is pure: plain Python floats, no river.

References
----------
- Ville (1939), *Etude critique de la notion de collectif*, Gauthier-Villars (the maximal
  inequality for nonnegative supermartingales).
- Shafer and Vovk (2019), *Game-Theoretic Foundations for Probability and Finance*,
  Wiley, ch. 1 (testing forecasts by betting).
- Ramdas, Grunwald, Vovk and Shafer (2023), "Game-theoretic statistics and safe
  anytime-valid inference", Statist. Sci. 38(4) (e-processes, mixtures of martingales).
"""

from __future__ import annotations

import math

__all__ = ["MixtureEProcess", "likelihood_ratio", "log_mean_exp"]

_INF = math.inf


def likelihood_ratio(p: float, g: float, y: float) -> float:
    """``g(y) / p(y)``: the likelihood of label ``y`` under forecast ``g`` over that
    under ``p`` (both probabilities of ``y = 1``), with the conventions of the module
    for ``p`` in {0, 1}: 1 when the label agrees with ``p``, ``inf`` when it contradicts
    it. May overflow to ``inf`` when ``y = 1`` and ``p < g * 2**-1024``. O(1).

    Examples
    --------
    >>> likelihood_ratio(0.25, 0.5, 1.0), likelihood_ratio(0.25, 0.5, 0.0)
    (2.0, 0.6666666666666666)
    >>> likelihood_ratio(0.0, 0.5, 0.0), likelihood_ratio(0.0, 0.5, 1.0)
    (1.0, inf)

    """
    if 0.0 < p < 1.0:
        return g / p if y else (1.0 - g) / (1.0 - p)
    return 1.0 if y == p else _INF  # a forecast of 0 or 1: no bet


def log_mean_exp(values) -> float:
    """``log(mean(exp(v) for v in values))`` without overflow; ``inf`` if any value is
    ``inf``. O(len(values)).

    Examples
    --------
    >>> log_mean_exp([0.0, 0.0])
    0.0
    >>> round(log_mean_exp([1000.0, 1000.0 - math.log(3.0)]), 12)  # log((1 + 1/3) / 2) + 1000
    999.594534891892

    """
    m = max(values)
    if m == _INF:
        return _INF
    exp = math.exp
    return m + math.log(math.fsum(exp(v - m) for v in values) / len(values))


class MixtureEProcess:
    """The uniform mixture, over mixing weights ``lams``, of the test martingales of the
    module docstring; state: one log-wealth per weight.

    Parameters
    ----------
    lams
        Mixing weights, each in (0, 1]; ``lam = 1`` makes ``q = p`` (a component that
        never bets: its wealth stays 1 and floors the mixture at ``1 / len(lams)``).

    Attributes
    ----------
    log_wealth
        ``log M_t`` of each component (a list, same order as ``lams``).
    log_e
        Log of the mixture: ``log_mean_exp(log_wealth)``.

    Notes
    -----
    :meth:`update` costs O(len(lams)): one division, then one ``log`` per weight and the
    ``exp`` / ``log`` of the mixture. Logs are kept rather than products so that long
    runs under the null neither underflow nor lose components.

    Examples
    --------
    >>> proc = MixtureEProcess((0.5,))
    >>> proc.update(0.25, 0.5, 1.0)          # q = 0.375: factor 0.375 / 0.25 = 1.5
    0.4054651081081644
    >>> round(proc.update(0.25, 0.5, 0.0), 12)   # factor 0.625 / 0.75
    0.223143551314
    >>> round(math.exp(proc.log_e), 12)          # 1.5 * 5 / 6
    1.25

    """

    def __init__(self, lams):
        lams = tuple(float(x) for x in lams)
        if not lams or not all(0.0 < x <= 1.0 for x in lams):
            raise ValueError(
                f"lams must be a non-empty sequence of numbers in (0, 1]. Got {lams!r} instead."
            )
        self.lams = lams
        self._coef = tuple((x, 1.0 - x) for x in lams)
        self.reset()

    def reset(self) -> None:
        """Back to ``M = 1`` for every component. O(len(lams))."""
        self.log_wealth = [0.0] * len(self.lams)
        self.log_e = 0.0

    def update(self, p: float, g: float, y: float) -> float:
        """Multiply every component by its factor for forecast ``p``, alternative ``g``
        and label ``y`` (0.0 or 1.0); return the new :attr:`log_e`. O(len(lams)).

        ``p`` and ``g`` must lie in [0, 1] (not checked: callers validate).
        """
        r = likelihood_ratio(p, g, y)
        lw = self.log_wealth
        log = math.log
        if r == _INF:
            if y and p > 0.0:
                # a finite ratio g / p too large for a float (p below about 2**-1022 * g):
                # log(lam + mix * r) = lr + log(mix + lam * exp(-lr)) with lr = log(r)
                lr = log(g) - log(p)
                for k, (lam, mix) in enumerate(self._coef):
                    if mix > 0.0:
                        lw[k] += lr + log(mix + lam * math.exp(-lr))
            else:  # the label contradicts a forecast of 0 or 1
                for k in range(len(lw)):
                    lw[k] = _INF
        else:
            for k, (lam, mix) in enumerate(self._coef):
                lw[k] += log(lam + mix * r)
        self.log_e = le = log_mean_exp(lw)
        return le

    def _check(self) -> None:
        """Assert the invariants: one finite or ``+inf`` log-wealth per weight, the
        never-betting components (``lam = 1``) at exactly 0, and ``log_e`` equal to the
        mixture of the log-wealths."""
        lw = self.log_wealth
        assert isinstance(lw, list) and len(lw) == len(self.lams), (
            f"log_wealth {lw!r} for lams {self.lams!r}"
        )
        assert all(0.0 < x <= 1.0 for x in self.lams), f"lams {self.lams!r}"
        for lam, v in zip(self.lams, lw):
            assert isinstance(v, float) and (math.isfinite(v) or v == _INF), (
                f"log wealth {v!r} (lam {lam})"
            )
            if lam == 1.0:
                assert v in (0.0, _INF), f"the lam = 1 component moved: {v!r}"
        # all components see the same contradictions, so either all or none are inf
        assert len({v == _INF for v in lw}) == 1, (
            f"some but not all components infinite: {lw!r}"
        )
        assert self.log_e == log_mean_exp(lw), (
            f"log_e {self.log_e!r} != mixture of {lw!r}"
        )

    def to_lists(self) -> list:
        """JSON-safe state: the log-wealths, ``inf`` written as the string ``"inf"``."""
        return [v if v != _INF else "inf" for v in self.log_wealth]

    def set_lists(self, state) -> None:
        """Restore the state written by :meth:`to_lists` (same ``lams``)."""
        if not isinstance(state, list) or len(state) != len(self.lams):
            raise ValueError(
                f"The e-process state must be a list of {len(self.lams)} log-wealths. Got {state!r} instead."
            )
        lw = [_INF if v == "inf" else float(v) for v in state]
        if not all(math.isfinite(v) or v == _INF for v in lw):
            raise ValueError(
                f"The e-process state must hold finite log-wealths or 'inf'. Got {state!r} instead."
            )
        self.log_wealth = lw
        self.log_e = log_mean_exp(lw)
