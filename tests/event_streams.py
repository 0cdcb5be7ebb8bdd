"""Event streams shared by several test modules (not oracles: those are in
``tests/references*.py``)."""

from __future__ import annotations

import numpy as np


def edge_stream(rng: np.random.Generator, n: int, ties: bool, mixed_weights: bool):
    """``(scores, labels, weights)`` of ``n`` events: uniform scores (rounded to 0.01
    with ``ties``) with 2% set to 0.0 and 2% to 1.0, labels with probability
    ``0.1 + 0.8 s**2``; unit weights, or with ``mixed_weights`` 30% of them 0, 0.5 or 3.

    >>> s, y, w = edge_stream(np.random.default_rng(0), 5, ties=True, mixed_weights=False)
    >>> len(s), set(w.tolist())
    (5, {1.0})
    """
    s = rng.random(n)
    if ties:
        s = np.round(s, 2)
    s[rng.random(n) < 0.02] = 0.0
    s[rng.random(n) < 0.02] = 1.0
    y = (rng.random(n) < 0.1 + 0.8 * s**2).astype(np.float64)
    w = np.ones(n)
    if mixed_weights:
        w = np.where(rng.random(n) < 0.3, rng.choice([0.0, 0.5, 3.0], n), 1.0)
    return s, y, w
