"""Slow, obviously correct batch oracles for the multiclass calibration metrics.

Each function takes the whole list of events ``(y_true, y_pred, w)`` (``y_pred`` a dict
class -> probability) and recomputes the metric from scratch with numpy, following the
definitions in :mod:`streamcal.metrics._multiclass`:

- zero-weight events are dropped first (they name no class);
- the classes are those named by the remaining events, as ``y_true`` or as a key of
  ``y_pred``, in order of first appearance; a class absent from ``y_pred`` has
  probability 0 (the matrix :func:`as_matrix` builds);
- the top class of a forecast is ``max(y_pred, key=y_pred.get)``, the first key in
  the dict's order with the largest probability;
- equal-width bins: bin ``k`` holds ``edges[k] <= p < edges[k + 1]``, the last bin
  also 1, with ``edges = arange(B + 1) / B`` (as ``np.searchsorted(edges, p, "right") -
  1``, clipped);
- the binned ECE of ``(p, y, w)`` is ``sum_b |sum_b w y - sum_b w p| / sum w``.

References
----------
- Guo, Pleiss, Sun and Weinberger (2017), "On calibration of modern neural networks"
  (confidence ECE).
- Gupta and Ramdas (2022), "Top-label calibration and multiclass-to-binary reductions",
  ICLR; Gupta (2022), thesis proposal, section 4.1 (top-label calibration).
- Nixon, Dusenberry, Zhang, Jerfel and Tran (2019), "Measuring calibration in deep
  learning" (class-wise ECE as SCE; thresholded adaptive calibration error, TACE).
- Arad and Rosset, "Normalization-aware isotonic calibration", section 2.2 (conf-ECE,
  cw-ECE, TECE with the threshold 1/k).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "as_matrix",
    "binned_ece",
    "classwise_ece",
    "confidence_ece",
    "equal_mass_bins",
    "tece",
    "top_label_ece",
    "uniform_bins",
]


def as_matrix(events):
    """``(classes, P, Y, w)``: the classes in order of first appearance, the ``n x K``
    probability matrix (0 for a class absent from a forecast), the one-hot outcomes and
    the weights, over the positive-weight events."""
    events = [(y, p, float(w)) for y, p, w in events if w > 0]
    classes = []
    index = {}
    for y, p, _ in events:
        for c in (*p, y):
            if c not in index:
                index[c] = len(classes)
                classes.append(c)
    n, k = len(events), len(classes)
    P = np.zeros((n, k))
    Y = np.zeros((n, k))
    w = np.array([e[2] for e in events], dtype=float)
    for i, (y, p, _) in enumerate(events):
        for c, pc in p.items():
            P[i, index[c]] = pc
        Y[i, index[y]] = 1.0
    return classes, P, Y, w


def uniform_bins(p, n_bins):
    """Equal-width bin of each probability."""
    edges = np.arange(n_bins + 1, dtype=float) / n_bins
    return np.clip(
        np.searchsorted(edges, np.asarray(p, dtype=float), side="right") - 1,
        0,
        n_bins - 1,
    )


def binned_ece(p, y, w, idx, n_bins):
    """``sum_b |sum w y - sum w p| / sum w`` for the bin indices ``idx`` (0 if empty)."""
    p, y, w = (np.asarray(a, dtype=float) for a in (p, y, w))
    if len(p) == 0 or w.sum() == 0:
        return 0.0
    sy = np.bincount(idx, weights=w * y, minlength=n_bins)
    sp = np.bincount(idx, weights=w * p, minlength=n_bins)
    return float(np.abs(sy - sp).sum() / w.sum())


def _top(events):
    """Top probability and correctness of each positive-weight event."""
    h, correct, top, w = [], [], [], []
    for y, p, wt in events:
        if wt > 0:
            c = max(p, key=p.get)
            top.append(c)
            h.append(p[c])
            correct.append(1.0 if c == y else 0.0)
            w.append(float(wt))
    return np.array(h), np.array(correct), top, np.array(w)


def confidence_ece(events, n_bins):
    """ECE of ``(max prob, 1[argmax == y])`` over equal-width bins."""
    h, correct, _, w = _top(events)
    return binned_ece(h, correct, w, uniform_bins(h, n_bins), n_bins)


def top_label_ece(events, n_bins):
    """``sum_c P(pred = c) ECE_c``, ``ECE_c`` the confidence ECE of the events predicted c."""
    h, correct, top, w = _top(events)
    if len(h) == 0:
        return 0.0
    total = 0.0
    for c in dict.fromkeys(top):
        m = np.array([t == c for t in top])
        total += (
            w[m].sum()
            / w.sum()
            * binned_ece(h[m], correct[m], w[m], uniform_bins(h[m], n_bins), n_bins)
        )
    return float(total)


def classwise_ece(events, n_bins):
    """Mean over the classes of the binary ECE of each column ``(P[:, c], Y[:, c])``."""
    classes, P, Y, w = as_matrix(events)
    if not classes:
        return 0.0
    return float(
        np.mean(
            [
                binned_ece(P[:, j], Y[:, j], w, uniform_bins(P[:, j], n_bins), n_bins)
                for j in range(len(classes))
            ]
        )
    )


def equal_mass_bins(p, w, n_bins):
    """Equal-mass bin of each probability: a group of ties whose smaller values weigh
    ``W_below`` goes to bin ``min(B - 1, floor(B * W_below / W))``."""
    p = np.asarray(p, dtype=float)
    w = np.asarray(w, dtype=float)
    idx = np.zeros(len(p), dtype=int)
    if len(p) == 0:
        return idx
    total = w.sum()
    for v in np.unique(p):
        below = w[p < v].sum()
        idx[p == v] = min(n_bins - 1, int(np.floor(n_bins * below / total)))
    return idx


def tece(events, n_bins, threshold=None):
    """``(1 / K) sum_c ECE_c`` over the events with ``p_c > threshold`` (``1 / K`` when
    None), in equal-mass bins; ``ECE_c = 0`` when no event is kept for ``c``."""
    classes, P, Y, w = as_matrix(events)
    if not classes:
        return 0.0
    t = 1.0 / len(classes) if threshold is None else threshold
    eces = []
    for j in range(len(classes)):
        keep = P[:, j] > t
        p, y, wk = P[keep, j], Y[keep, j], w[keep]
        eces.append(binned_ece(p, y, wk, equal_mass_bins(p, wk, n_bins), n_bins))
    return float(np.mean(eces))
