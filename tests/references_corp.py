"""Slow, obviously correct batch oracle for the CORP score decomposition.

Everything is recomputed from the events: the isotonic recalibration by textbook PAV
(:func:`tests.references.isotonic_fit`: zero weights dropped, ties pooled by weighted
mean), then each forecast's weighted mean score event by event with :func:`math.fsum`.
No closed forms per block are used, so the streaming metric's block formulas are checked
rather than repeated.

References
----------
- Dimitriadis, Gneiting and Jordan (2021), "Stable reliability diagrams for
  probabilistic classifiers", PNAS 118(8), e2016191118: the CORP decomposition
  ``S = MCB - DSC + UNC`` with ``MCB = S(x) - S(x_hat)``, ``DSC = S(r) - S(x_hat)``,
  ``UNC = S(r)``, ``x_hat`` the PAV recalibration and ``r`` the mean outcome.
- Published values on the Niamey 2016 data: the reliabilitydiag package documentation,
  as listed in the project's ``shared/data/README.md`` (:data:`NIAMEY_PUBLISHED`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

try:  # tests/ as a package (tests/__init__.py) or as a plain directory on sys.path
    from tests import references as ref
except ImportError:  # pragma: no cover
    import references as ref

__all__ = [
    "NIAMEY_PUBLISHED",
    "Decomposition",
    "corp_decomposition",
    "event_score",
    "recalibrated",
]

#: CORP decomposition of the Brier score on niamey_precip_2016.csv, to 4 decimals:
#: forecast -> (S, MCB, DSC, UNC).
NIAMEY_PUBLISHED = {
    "Logistic": (0.2057, 0.0171, 0.0555, 0.2442),
    "EMOS": (0.2320, 0.0183, 0.0305, 0.2442),
    "ENS": (0.2662, 0.0661, 0.0441, 0.2442),
    "EPC": (0.2343, 0.0223, 0.0323, 0.2442),
}


class Decomposition(NamedTuple):
    S: float
    MCB: float
    DSC: float
    UNC: float


def event_score(p, y, score="brier", eps=None):
    """Score of forecast ``p`` for outcome ``y``. Log loss: ``-log`` of the probability
    ``q`` given to the outcome, 0 when ``q`` is 1, inf when it is 0; with ``eps``, ``q``
    is first clipped to ``[eps, 1 - eps]`` (so a confident miss costs exactly
    ``-log(eps)``, as in ``streamcal.metrics.LogLoss``)."""
    p, y = float(p), float(y)
    if score == "brier":
        return (p - y) ** 2
    q = p if y == 1.0 else 1.0 - p
    if eps is not None:
        q = min(max(q, eps), 1.0 - eps)
    return math.inf if q == 0.0 else -math.log(q)


def recalibrated(forecasts, labels, weights):
    """The PAV-recalibrated forecast of each event (None for zero-weight events)."""
    xs, fitted, _ = ref.isotonic_fit(forecasts, labels, weights)
    value = dict(zip(xs, fitted))
    return [value[float(x)] if w > 0 else None for x, w in zip(forecasts, weights)]


def corp_decomposition(forecasts, labels, weights=None, score="brier", eps=1e-15):
    """CORP decomposition of the weighted mean score of ``forecasts``.

    The raw forecasts are clipped at ``eps`` for the log loss (as ``CORP`` documents);
    the recalibrated and climatological forecasts are not (their 0s and 1s only meet
    outcomes they give probability 1, costing 0). All zeros when no event has positive
    weight.
    """
    if weights is None:
        weights = [1.0] * len(forecasts)
    events = [
        (float(x), float(y), float(w))
        for x, y, w in zip(forecasts, labels, weights)
        if w > 0
    ]
    if not events:
        return Decomposition(0.0, 0.0, 0.0, 0.0)
    xs, ys, ws = zip(*events)
    W = math.fsum(ws)
    r = math.fsum(w * y for y, w in zip(ys, ws)) / W
    x_hat = recalibrated(xs, ys, ws)

    def mean(forecast, clip):
        return (
            math.fsum(
                w * event_score(p, y, score, clip) for p, y, w in zip(forecast, ys, ws)
            )
            / W
        )

    s_x = mean(xs, eps if score == "log" else None)
    s_hat = mean(x_hat, None)
    unc = mean([r] * len(xs), None)
    return Decomposition(s_x, s_x - s_hat, unc - s_hat, unc)
