"""Slow, obviously correct batch oracles of path calibration (Gupta's thesis, section
4.3.2) and of the path ECE, written from the text, for
``streamcal.calibrators.PathCalibrator`` and ``streamcal.metrics.PathECE``.

Everything is recomputed from the list of events at each call: no running state,
exact rational arithmetic (``fractions.Fraction``) for the bin estimates.
"""

from __future__ import annotations

import math
from fractions import Fraction


def ancestors(taxonomy: dict, node) -> list:
    """``a(node)`` minus the root: ``node`` and its parents up to (not including) the
    root, walking ``taxonomy`` (child -> parent, the root's parent None)."""
    out = []
    while taxonomy[node] is not None:
        out.append(node)
        node = taxonomy[node]
    return out


def path_of(taxonomy: dict, node) -> list:
    """The nodes from the top of the tree down to ``node``, root excluded."""
    return list(reversed(ancestors(taxonomy, node)))


def predicted_leaf(scores: dict):
    """``c(x)``: the leaf with the largest score, the first such key on ties."""
    best = max(scores.values())
    return next(k for k, v in scores.items() if v == best)


def bin_index(g: float, edges) -> int:
    """Histogram binning's rule: the number of inner edges ``<= g``."""
    return sum(1 for e in edges[1:-1] if e <= g)


def raw_path(taxonomy: dict, scores: dict) -> dict:
    """Each node of the predicted leaf's path: the total score of the leaves below."""
    leaf = predicted_leaf(scores)
    return {
        node: min(1.0, math.fsum(s for k, s in scores.items() if node in ancestors(taxonomy, k)))
        for node in path_of(taxonomy, leaf)
    }


def path_calibrate(
    taxonomy: dict,
    events: list,
    scores: dict,
    n_bins: int,
    prior_strength: float = 0.0,
    window_size: int | None = None,
    edges=None,
) -> dict:
    """The section 4.3.2 prediction for ``scores`` after the ``(leaf_scores, label, w)``
    ``events``.

    1. ``D_l``: the events whose predicted leaf is ``l = c(x)`` (with ``window_size``,
       the last ``window_size`` of them, zero weights included);
    2. bins of the leaf's confidence ``g``: equal-width ``j / n_bins`` unless ``edges``
       are given;
    3. for each node ``l'`` of ``l``'s path, in the bin ``b`` of ``g(x)``:
       ``(sum w 1[l' in a(Y)] + a m_b) / (sum w + a)``, ``m_b`` the bin's midpoint,
       computed exactly and rounded once;
    4. a bin without positive weight (or a leaf never predicted): the raw path.
    """
    leaf = predicted_leaf(scores)
    d_l = [(s[leaf], y, w) for s, y, w in events if predicted_leaf(s) == leaf]
    if window_size is not None:
        d_l = d_l[-window_size:]
    if edges is None:
        edges = [j / n_bins for j in range(n_bins + 1)]
    b = bin_index(scores[leaf], edges)
    in_bin = [(y, w) for g, y, w in d_l if bin_index(g, edges) == b]
    weight = sum(Fraction(w) for _, w in in_bin)
    if weight == 0:
        return raw_path(taxonomy, scores)
    a = Fraction(prior_strength)
    m = Fraction((edges[b] + edges[b + 1]) / 2)
    out = {}
    for node in path_of(taxonomy, leaf):
        hits = sum(Fraction(w) for y, w in in_bin if node in ancestors(taxonomy, y))
        out[node] = float((hits + a * m) / (weight + a))
    return out


def path_ece(taxonomy: dict, events: list, n_bins: int) -> float:
    """``sum_c sum_{l in path(c)} sum_b |sum w (1[l in a(y)] - h_l)| / (d_c sum w)`` over
    ``(y_true, y_pred, w)`` events (``y_pred`` a dict over the path of its deepest node
    ``c``), equal-width bins of ``h_l``; 0.0 without positive weight."""
    groups: dict = {}
    total = math.fsum(w for _, _, w in events if w > 0)
    if total == 0:
        return 0.0
    for y, p, w in events:
        if w <= 0:
            continue
        c = max(p, key=lambda k: len(ancestors(taxonomy, k)))
        d = len(p)
        for node, h in p.items():
            b = min(int(h * n_bins), n_bins - 1)
            while b > 0 and h < b / n_bins:
                b -= 1
            while b + 1 < n_bins and h >= (b + 1) / n_bins:
                b += 1
            hit = 1.0 if node in ancestors(taxonomy, y) else 0.0
            groups.setdefault((c, node, b, d), []).append(w * hit - w * h)
    return math.fsum(abs(math.fsum(v)) / d for (_, _, _, d), v in groups.items()) / total
