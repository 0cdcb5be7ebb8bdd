"""Slow, obviously correct batch oracles for the streaming calibrators.

Everything here refits from scratch, in plain Python (numpy only where it cannot hide a
mistake), so that each function can be checked by reading it. The streaming objects in
``streamcal`` are compared to these functions at many prefixes of random streams.

References
----------
- Pool-adjacent-violators: Ayer, Brunk, Ewing, Reid and Silverman (1955), "An empirical
  distribution function for sampling with incomplete information", Ann. Math. Statist.
  26(4); Barlow, Bartholomew, Bremner and Brunk (1972), *Statistical inference under
  order restrictions*, Wiley, ch. 1 (weighted PAV; ties in the predictor pooled by
  weighted mean).
- Linear interpolation between level sets: scikit-learn's
  ``sklearn.isotonic.IsotonicRegression(out_of_bounds="clip")``.
- Inductive Venn-ABERS predictors: Vovk, Petej and Fedorova (2015), "Large-scale
  probabilistic predictors with and without guarantees of validity", NeurIPS 28,
  section 3 (the two isotonic fits with the test object labelled 0 and 1).
"""

from __future__ import annotations

import math
from bisect import bisect_right

__all__ = [
    "aggregate",
    "decayed_weights",
    "grid_round",
    "FORGET_HALF_LIVES",
    "isotonic_blocks",
    "isotonic_fit",
    "online_isotonic_sample",
    "pav_cells",
    "predict_linear",
    "predict_step",
    "venn_abers",
]


def aggregate(scores, labels, weights=None):
    """Group events by exact distinct score, dropping zero-weight events.

    Returns ``(xs, ws, ss, ns)``: the distinct scores in increasing order, the summed
    weight, the summed ``weight * label`` and the number of (positive-weight) events of
    each score. Sums use :func:`math.fsum`, so they are correctly rounded.
    """
    if weights is None:
        weights = [1.0] * len(scores)
    assert len(scores) == len(labels) == len(weights)
    groups: dict[float, tuple[list, list]] = {}
    for x, y, w in zip(scores, labels, weights):
        w = float(w)
        assert w >= 0.0
        if w == 0.0:
            continue
        ws, ss = groups.setdefault(float(x), ([], []))
        ws.append(w)
        ss.append(w * float(y))
    xs = sorted(groups)
    return (
        xs,
        [math.fsum(groups[x][0]) for x in xs],
        [math.fsum(groups[x][1]) for x in xs],
        [len(groups[x][0]) for x in xs],
    )


def pav_cells(ws, ss):
    """Textbook weighted pool-adjacent-violators on cells already sorted by score.

    ``ws`` are positive cell weights, ``ss`` the weighted label sums. A stack of blocks
    ``[first cell, last cell + 1, W, S]`` is kept; each new cell is pushed and pooled
    with the block below while that block's mean is >= the new block's mean (so the
    result has strictly increasing block means: the maximal level sets of the fit).
    Returns the list of blocks ``(start, stop, W, S)``.
    """
    stack: list[list] = []
    for j, (w, s) in enumerate(zip(ws, ss)):
        assert w > 0.0
        block = [j, j + 1, w, s]
        while stack and stack[-1][3] / stack[-1][2] >= block[3] / block[2]:
            prev = stack.pop()
            block = [prev[0], block[1], prev[2] + block[2], prev[3] + block[3]]
        stack.append(block)
    return [tuple(b) for b in stack]


def isotonic_fit(scores, labels, weights=None):
    """Non-decreasing weighted isotonic regression of ``labels`` on ``scores``.

    Zero-weight events are dropped, events with the same score are aggregated (weighted
    mean label, summed weight), then :func:`pav_cells` (textbook PAV) is run.

    Returns ``(unique_x, fitted_values, weights)``: three lists, one entry per distinct
    score with positive weight, in increasing score order.
    """
    xs, ws, ss, _ = aggregate(scores, labels, weights)
    fitted = [0.0] * len(xs)
    for a, b, W, S in pav_cells(ws, ss):
        for j in range(a, b):
            fitted[j] = S / W
    return xs, fitted, ws


def isotonic_blocks(scores, labels, weights=None):
    """The level sets of :func:`isotonic_fit`, one tuple per block:
    ``(score_min, score_max, value, weight, n_events, n_cells)`` (the fields of
    ``streamcal.core.pav.BlockView``), in score order. ``n_events`` counts
    positive-weight events only."""
    xs, ws, ss, ns = aggregate(scores, labels, weights)
    return [
        (xs[a], xs[b - 1], S / W, W, sum(ns[a:b]), b - a)
        for a, b, W, S in pav_cells(ws, ss)
    ]


def predict_step(fit, s):
    """Step-function prediction of a fit returned by :func:`isotonic_fit`.

    The fitted value at the largest seen score ``<= s``; below the smallest seen score,
    the lowest fitted value. ``None`` when the fit is empty.
    """
    xs, fitted, _ = fit
    if not xs:
        return None
    i = bisect_right(xs, s) - 1
    return fitted[max(i, 0)]


def predict_linear(fit, s):
    """Linear-interpolation prediction of a fit, as scikit-learn's
    ``IsotonicRegression(increasing=True, out_of_bounds="clip", y_min=0, y_max=1)``.

    Constant on each level set (from its first to its last seen score), linear between
    the last seen score of one level set and the first seen score of the next, constant
    (clipped) outside the range of the seen scores, then clipped to [0, 1]. ``None``
    when the fit is empty.
    """
    xs, fitted, _ = fit
    if not xs:
        return None
    if s <= xs[0]:
        v = fitted[0]
    elif s >= xs[-1]:
        v = fitted[-1]
    else:
        i = bisect_right(xs, s) - 1  # xs[i] <= s < xs[i + 1]
        x0, x1, v0, v1 = xs[i], xs[i + 1], fitted[i], fitted[i + 1]
        if s == x0 or v0 == v1:  # on a seen score, or inside one level set
            v = v0
        else:  # xs[i] ends one level set and xs[i + 1] starts the next
            v = v0 + (v1 - v0) * (s - x0) / (x1 - x0)
    return min(1.0, max(0.0, v))


def venn_abers(scores, labels, weights, s, w_new=1.0):
    """Inductive Venn-ABERS pair ``(p0, p1)`` at score ``s``.

    ``p0`` (resp. ``p1``) is the isotonic fit, refitted from scratch, at ``s`` after
    adding the event ``(s, label 0, weight w_new)`` (resp. label 1) to the given events
    (Vovk, Petej and Fedorova 2015).
    """
    if weights is None:
        weights = [1.0] * len(scores)
    out = []
    for y in (0, 1):
        fit = isotonic_fit(list(scores) + [s], list(labels) + [y], list(weights) + [w_new])
        out.append(predict_step(fit, s))
    return tuple(out)


def isotonic_with_prior(scores, labels, weights, s, prior_strength, prior_mean=0.5,
                        interpolation="step"):
    """The read-out at ``s`` of the isotonic fit under a prior, as documented in
    ``streamcal.core.prior``: refit from scratch with one pseudo-event of weight
    ``prior_strength`` and label ``prior_mean`` added at the cell the read-out uses
    (the largest seen score ``<= s``, the smallest one below them all), and read the
    step fit there. With ``"linear"``, in the gap between the last seen score ``x0`` of
    one level set of the fit *without* the pseudo-event and the first ``x1`` of the
    next, the prior read-outs at ``x0`` and ``x1`` interpolated linearly. ``None`` when
    no event has positive weight.
    """
    fit = isotonic_fit(scores, labels, weights)
    xs, fitted, _ = fit
    if not xs:
        return None

    def at(c):
        g = isotonic_fit(list(scores) + [c], list(labels) + [prior_mean],
                         list(weights) + [prior_strength])
        return min(1.0, max(0.0, predict_step(g, c)))

    i = bisect_right(xs, s) - 1
    if interpolation == "linear" and 0 <= i < len(xs) - 1 and s > xs[i] and fitted[i] != fitted[i + 1]:
        x0, x1 = xs[i], xs[i + 1]
        v0, v1 = at(x0), at(x1)
        return v0 + (v1 - v0) * ((s - x0) / (x1 - x0))
    return at(xs[max(i, 0)])


def grid_round(s, r):
    """The grid cell of score ``s`` at resolution ``r``: ``floor(s / r + 1/2)``, as
    documented by ``OnlineIsotonic(resolution=r)`` (the cell's score is ``k * r``)."""
    return float(math.floor(s / r + 0.5))


def decayed_weights(weights, half_life, offset=0):
    """Exponential-forgetting weights ``w_i * 2 ** (-age_i / half_life)``.

    ``weights`` are the user weights in arrival order; the newest event has age
    ``offset`` (0 for the fit after the last event, 1 for a hypothetical next event).
    """
    n = len(weights)
    return [w * 2.0 ** (-(n - 1 - i + offset) / half_life) for i, w in enumerate(weights)]


#: ``OnlineIsotonic(half_life=h)`` forgets what has decayed by more than this many
#: half-lives (documented in its docstring).
FORGET_HALF_LIVES = 1000


def online_isotonic_sample(events, window_size=None, half_life=None, resolution=None, next_event=False):
    """The weighted sample ``(keys, labels, weights)`` whose batch isotonic fit
    ``OnlineIsotonic(window_size=..., half_life=..., resolution=...)`` documents after
    learning ``events`` (a list of ``(score, label, w)`` in arrival order):

    - ``window_size=N``: the last ``N`` events, zero-weight ones included (they take a
      slot);
    - ``half_life=h``: each weight multiplied by ``2 ** (-age / h)``, the newest event
      having age 0; with a window, events with ``age > 1000 * h`` have left it (the
      documented horizon; the product is the one the implementation compares with,
      both read "decayed by more than 1000 half-lives"). Without a window the events
      past the horizon are kept here; the calibrator may or may not still hold them
      (they are dropped at its next renormalisation), so comparisons must only use
      what they cannot move (see the tests);
    - ``resolution=r``: each score replaced by its grid key :func:`grid_round`.

    With ``next_event`` the ages are those a hypothetical next event would see (every
    age plus one), the window and the horizon unchanged: the sample that
    ``predict_interval_one`` adds its test event to.
    """
    n = len(events)
    first = 0 if window_size is None else max(0, n - window_size)
    keys, labels, weights = [], [], []
    for i in range(first, n):
        s, y, w = events[i]
        age = n - 1 - i
        if half_life is not None:
            if window_size is not None and age > FORGET_HALF_LIVES * half_life:
                continue
            w = w * 2.0 ** (-(age + (1 if next_event else 0)) / half_life)
        keys.append(s if resolution is None else grid_round(s, resolution))
        labels.append(float(y))
        weights.append(float(w))
    return keys, labels, weights
