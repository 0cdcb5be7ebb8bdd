"""Slow, obviously correct oracles for the calibration monitors.

The e-process is recomputed literally from its definition: before each event, the
isotonic regression of the events since the last reset is refitted from scratch (with
the weights, window and grid that ``OnlineIsotonic`` documents, via
:func:`tests.references.online_isotonic_sample`), shrunk towards the score by
``prior_weight`` pseudo-events, mixed with the score, and the likelihood ratios are
multiplied, as plain products, one per mixing weight.

References
----------
- Ville (1939), *Etude critique de la notion de collectif* (the maximal inequality).
- Shafer and Vovk (2019), *Game-Theoretic Foundations for Probability and Finance*,
  ch. 1 (testing probability forecasts by betting: the wealth process is the product
  of the likelihood ratios of the bettor's forecasts to the forecaster's).
"""

from __future__ import annotations

import math

from tests import references as R

__all__ = ["detector_alarms", "eprocess_trace"]


def eprocess_trace(
    scores,
    labels,
    alpha=0.05,
    lams=(0.1, 0.3, 0.5, 0.7, 0.9),
    half_life=500.0,
    window_size=None,
    resolution=0.01,
    prior_weight=100.0,
):
    """For each event, ``(e_value, alarm)`` of the e-process monitor, from scratch.

    After an alarm the next event starts from wealth 1 with no events learnt.
    """
    out = []
    since_reset = []  # (score, label, weight 1) of the events since the last reset
    wealth = [1.0] * len(lams)
    alarm = False
    for p, y in zip(scores, labels):
        p, y = float(p), int(y)
        if alarm:
            since_reset, wealth = [], [1.0] * len(lams)
        if p in (0.0, 1.0):
            factors = [1.0 if y == p else math.inf] * len(lams)
        else:
            keys, ys, ws = R.online_isotonic_sample(
                since_reset, window_size, half_life, resolution
            )
            fit = R.isotonic_fit(keys, ys, ws)
            key = p if resolution is None else R.grid_round(p, resolution)
            iso = R.predict_step(fit, key)
            if iso is None:  # nothing learnt: the score itself
                iso = p
            n = len(since_reset)
            g = (n * iso + prior_weight * p) / (n + prior_weight) if n else iso
            factors = []
            for lam in lams:
                q = (1.0 - lam) * g + lam * p
                factors.append(q / p if y == 1 else (1.0 - q) / (1.0 - p))
        wealth = [w * f for w, f in zip(wealth, factors)]
        e = sum(wealth) / len(wealth)
        alarm = e >= 1.0 / alpha
        out.append((e, alarm))
        since_reset.append((p, y, 1.0))
    return out


def detector_alarms(detector_factory, scores, labels, residual="signed"):
    """Alarm flags of river detectors fed the calibration residuals directly, with
    fresh detectors after each alarm; ``residual`` as in ``CalibrationMonitor``."""
    kinds = ("signed", "spread") if residual == "both" else (residual,)
    dets = [detector_factory() for _ in kinds]
    flags = []
    alarm = False
    for p, y in zip(scores, labels):
        if alarm:
            dets = [detector_factory() for _ in kinds]
        r = {"signed": y - p, "spread": (y - p) * (2 * p - 1)}
        for kind, det in zip(kinds, dets):
            det.update(r[kind])
        alarm = any(det.drift_detected for det in dets)
        flags.append(alarm)
    return flags
