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
    (the rounding residue of its sums could grow too large, or its label sum could not
    be told from 0 or from its weight: see ``IsotonicBlockStore.remove``), put back
    their sums, summed afresh as the window sums them. Returns what
    ``remove`` returned."""
    x, w, y = live.pop(i)
    dropped = store.remove(x, w, y)
    if dropped:
        rest = [e for e in live if e[0] == x and e[1] > 0]
        assert len(rest) == dropped
        W = _compensated_sum(e[1] for e in rest)
        S = min(max(_compensated_sum(e[1] * e[2] for e in rest), 0.0), W)
        store.add_cell(x, W, S, len(rest), 2.0**-50)
    return dropped


def _compensated_sum(terms):
    """Neumaier's compensated sum, in order: the sum a window puts back
    (``IsotonicStream._readd``, ``k_compensated_add``), within ``2**-52`` of the exact
    one (its bound there: ``4 * 2**-52`` for both sums)."""
    s = c = 0.0
    for t in terms:
        u = s + t
        c += (s - u) + t if abs(s) >= abs(t) else (t - u) + s
        s = u
    return s + c
