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


def remove_event(store, live, i):
    """Remove ``live[i]`` (an event ``(x, w, y)`` held by the isotonic block ``store``)
    from both, as a window does: when the store deletes the cell with its other events
    (the rounding residue of its sums could grow too large, see
    ``IsotonicBlockStore.remove``), put back their sums, summed afresh. Returns what
    ``remove`` returned."""
    import math

    x, w, y = live.pop(i)
    dropped = store.remove(x, w, y)
    if dropped:
        rest = [e for e in live if e[0] == x and e[1] > 0]
        assert len(rest) == dropped
        W = math.fsum(e[1] for e in rest)
        S = min(math.fsum(e[1] * e[2] for e in rest), W)
        store.add_cell(x, W, S, len(rest), 2.0**-52)
    return dropped
