"""Slow, obviously correct batch oracles for the multiclass calibration baselines
(:mod:`streamcal.calibrators.multiclass`).

Each function refits from scratch on the whole list of events ``(scores, label, w)``
(``scores`` a dict class -> probability, or -> logit), with plain Python loops and
scipy, so that it can be checked by reading it.

References
----------
- Temperature scaling: Guo, Pleiss, Sun and Weinberger (2017), "On calibration of
  modern neural networks", ICML, section 4.2 (``softmax(z / T)``, ``T`` minimising the
  NLL on held-out data).
- Top-label and class-wise reductions: Gupta and Ramdas (2022), "Top-label calibration
  and multiclass-to-binary reductions", ICLR; Gupta (2022), thesis, chapter 4.
- Isotonic regression with linear interpolation: the textbook PAV of
  :func:`tests.references.isotonic_fit` with :func:`tests.references.predict_linear`
  (scikit-learn's ``IsotonicRegression(out_of_bounds="clip", y_min=0, y_max=1)``,
  except that scikit-learn also pools scores that differ by rounding, such as 0.05
  and 0.05000000000000004, which the streams here contain).
"""

from __future__ import annotations

import math

from scipy.optimize import minimize_scalar

from tests import references

__all__ = [
    "class_wise_isotonic",
    "log_scores",
    "temperature_fit",
    "temperature_nll",
    "tempered",
    "top_label_isotonic",
]


def log_scores(scores: dict, logits: bool) -> dict:
    """The logits of an event: the scores themselves, or ``log p`` (``-inf`` for 0)."""
    if logits:
        return dict(scores)
    return {c: (math.log(p) if p > 0 else -math.inf) for c, p in scores.items()}


def temperature_nll(T: float, events, logits: bool = False) -> float:
    """Weighted NLL of ``softmax(z / T)`` summed over the events, one by one, leaving
    out zero-weight events and those whose label has no finite logit (infinite at
    every ``T``)."""
    total = []
    for scores, label, w in events:
        z = log_scores(scores, logits)
        if w == 0 or not math.isfinite(z.get(label, -math.inf)):
            continue
        finite = [v / T for v in z.values() if math.isfinite(v)]
        m = max(finite)
        lse = m + math.log(math.fsum(math.exp(v - m) for v in finite))
        total.append(w * (lse - z[label] / T))
    return math.fsum(total)


def temperature_fit(events, logits: bool = False, t_min=0.01, t_max=100.0) -> float:
    """The ``T`` in ``[t_min, t_max]`` minimising :func:`temperature_nll`, by scipy's
    bounded scalar minimisation on ``beta = 1 / T`` (tight tolerance); the bracket
    ends are compared too, since the optimum may lie on one."""
    f = lambda b: temperature_nll(1.0 / b, events, logits)
    lo, hi = 1.0 / t_max, 1.0 / t_min
    res = minimize_scalar(
        f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-11}
    )
    best = min([res.x, lo, hi], key=f)
    return 1.0 / best


def tempered(scores: dict, T: float, logits: bool = False) -> dict:
    """``softmax(z / T)`` over the classes of ``scores`` (probability 0 stays 0)."""
    z = log_scores(scores, logits)
    m = max(z.values())
    e = {c: (math.exp((v - m) / T) if math.isfinite(v) else 0.0) for c, v in z.items()}
    s = math.fsum(e.values())
    return {c: v / s for c, v in e.items()}


def _isotonic(xs, ys, ws):
    """A predict function of the weighted isotonic fit, positive weights only; the
    identity when there is none (the binary calibrators' cold start)."""
    if not any(w > 0 for w in ws):
        return lambda s: s
    fit = references.isotonic_fit(xs, ys, ws)
    return lambda s: references.predict_linear(fit, s)


def _top(scores: dict):
    return max(scores, key=scores.get)  # the first key with the largest probability


def top_label_isotonic(events, query: dict) -> dict:
    """Top-label calibration of ``query`` with one isotonic fit per top class, on the
    events where that class was on top: ``(top probability, 1[label == top])``.

    The top class ``t`` of ``query`` gets the fit's value ``h'`` at its probability;
    the other classes share ``1 - h'`` in proportion to their scores. Assumes every
    class of ``query`` was seen and ``t`` was on top of some event, and that the other
    classes have positive mass.
    """
    t = _top(query)
    sub = [(s[t], float(y == t), w) for s, y, w in events if _top(s) == t]
    assert sub, "the top class was never on top"
    h = _isotonic(*zip(*sub))(query[t])
    others = {c: p for c, p in query.items() if c != t}
    mass = math.fsum(others.values())
    out = {t: h}
    out.update({c: p * (1.0 - h) / mass for c, p in others.items()})
    return out


def class_wise_isotonic(events, query: dict, normalize: bool = True) -> dict:
    """Class-wise calibration of ``query``: for each class, in order of first
    appearance, an isotonic fit of ``(p_c, 1[label == c])`` on the events from the
    class's first appearance on (``p_c = 0`` when missing), evaluated at ``query``'s
    ``p_c``; normalised unless ``normalize`` is false."""
    first = {}
    for i, (s, y, _) in enumerate(events):
        for c in [*s, y]:
            first.setdefault(c, i)
    raw = {}
    for c, i0 in first.items():
        sub = [(s.get(c, 0.0), float(y == c), w) for s, y, w in events[i0:]]
        raw[c] = _isotonic(*zip(*sub))(query.get(c, 0.0))
    if not normalize:
        return raw
    total = math.fsum(raw.values())
    if total == 0:
        return {c: 1.0 / len(raw) for c in raw}
    return {c: v / total for c, v in raw.items()}
