"""Exact, weighted, revertible area under the ROC curve."""

from __future__ import annotations

import itertools

from streamcal import _validation as V
from streamcal.metrics import _kernels
from streamcal.metrics.base import BinaryCalibrationMetric

__all__ = ["ROCAUC"]

# Distinct scores are kept in sorted blocks of at most 2 * _LOAD keys (split in two
# beyond), each with its per-class weight totals, in the manner of sortedcontainers; the
# blocks live in the compiled store ``_kernels.Ranks``, read when a metric is reset.
_LOAD = 256


class ROCAUC(_kernels.StoreShell, BinaryCalibrationMetric):
    """Area under the ROC curve, exact, weighted and revertible.

    The probability that a random positive event outranks a random negative one, ties
    counting one half, with the pair of a positive ``i`` and a negative ``j`` weighing
    ``w_i * w_j``::

        AUC = sum_{i pos, j neg} w_i w_j ([p_i > p_j] + [p_i = p_j] / 2) / (W+ W-)

    which is scikit-learn's ``roc_auc_score(y, p, sample_weight=w)`` (the trapezoidal
    area under the exact weighted ROC curve). Until both classes have positive weight
    the AUC is undefined and ``get()`` returns 0.0, as river's ``ROCAUC`` does.

    Notes
    -----
    The metric keeps the weighted Mann-Whitney numerator (the sum above) and the class
    weights; an event adds or removes its pairs with the events held, found from the
    weight of the other class below (or above) and at its score. The ``m`` distinct
    scores held are kept, in compiled code, in sorted blocks of at most 512 (split in
    two beyond, in the manner of sortedcontainers; an emptied block is dropped) with
    per-block weight totals, and runs of 64 blocks with their totals too (recomputed
    from the blocks' totals when one changes, so a restored snapshot continues bit for
    bit). An update or a revert costs O(log m) comparisons, at most about ``m / 49152
    + 64 + 256`` float additions (partial sums over the shorter side of each level)
    and a memory move of at most 512 entries. Measured with
    ``benchmarks/bench_metrics.py``: about 1.3 us per event at 4 10^4 distinct scores
    and 1.9 us per event (``update_many``) over 10^6 events of distinct scores. Memory
    O(m); ``get()`` is O(1). Revert is exact to float rounding (a score whose events are
    all reverted is deleted, and the metric empties exactly), so ``river.utils.Rolling``
    works and keeps memory bounded by its window.

    Examples
    --------
    >>> from streamcal.metrics import ROCAUC
    >>> m = ROCAUC()
    >>> for y, p in [(0, 0.1), (0, 0.4), (1, 0.35), (1, 0.8)]:
    ...     m.update(y, p)
    >>> m.get()                                # 3 of the 4 pairs well ordered
    0.75
    >>> m.update(0, 0.8)                       # a tie counts one half
    >>> round(m.get(), 6)
    0.583333

    Weights act on pairs; here the two negatives weigh 3 and 1:

    >>> m = ROCAUC()
    >>> for y, p, w in [(0, 0.1, 3.0), (0, 0.4, 1.0), (1, 0.35, 1.0)]:
    ...     m.update(y, p, w)
    >>> m.get()                                # 3 / (1 * 4)
    0.75

    """

    # the catalogue entry (streamcal.metrics.catalogue)
    short_name = "roc_auc"
    bigger_is_better = True
    description = (
        "ROC AUC: probability that a random positive event is scored above a random "
        "negative one (ties count half), in [0, 1]."
    )

    def __init__(self):
        super().__init__()

    def _reset(self) -> None:
        self._store = _kernels.Ranks("ROCAUC", _LOAD)

    update = _kernels.ranks_update

    @property
    def _keys(self) -> list:
        """The distinct scores held, block by block (a copy)."""
        return self._store.block_lists()[0]

    @property
    def _u(self) -> float:
        """``sum over (pos, neg) pairs of w_i w_j (1 if ordered, 1/2 if tied)``."""
        return self._store.u

    def _check(self) -> None:
        """Assert every invariant of the state (tests call it after each mutation)."""
        store = self._store
        keys, neg_w, pos_w, neg_n, pos_n = store.block_lists()
        state = store.get_state()
        block_neg, block_pos = state["block_neg"], state["block_pos"]
        nb = len(keys)
        assert nb == store.n_blocks == len(block_neg) == len(block_pos)
        flat = [k for block in keys for k in block]
        assert all(a < b for a, b in itertools.pairwise(flat)), (
            "scores not strictly increasing"
        )
        n_pos = n_neg = 0
        for b in range(nb):
            assert 0 < len(keys[b]) <= 2 * store.load, (
                f"block {b} has {len(keys[b])} keys"
            )
            for nw, pw, nn, pn in zip(neg_w[b], pos_w[b], neg_n[b], pos_n[b]):
                assert nn + pn >= 1, "a score without events was kept"
                assert (nn or nw == 0.0) and (pn or pw == 0.0), (
                    "a weight without events"
                )
                assert nw >= 0.0 and pw >= 0.0
            scale = 1e-12 * max(1.0, store.w_pos + store.w_neg)
            assert abs(block_neg[b] - sum(neg_w[b])) <= scale, "block total drifted"
            assert abs(block_pos[b] - sum(pos_w[b])) <= scale, "block total drifted"
            n_pos += sum(pos_n[b])
            n_neg += sum(neg_n[b])
        assert (n_pos, n_neg) == (store.n_pos, store.n_neg), "class counts disagree"
        tol = 1e-9 * max(1.0, store.w_pos + store.w_neg)
        assert (
            abs(sum(block_pos) - store.w_pos) <= tol
            and abs(sum(block_neg) - store.w_neg) <= tol
        )
        # superblock totals: exactly the sums of their blocks' totals, in order
        sup_neg, sup_pos = store.superblock_totals()
        step = _kernels.SUPERBLOCK
        assert len(sup_neg) == len(sup_pos) == -(-nb // step)
        for j in range(len(sup_neg)):
            assert sup_neg[j] == sum(block_neg[j * step : (j + 1) * step])
            assert sup_pos[j] == sum(block_pos[j * step : (j + 1) * step])
        # the numerator against a direct pairwise sum over distinct scores
        u = 0.0
        below = 0.0
        for b in range(nb):
            for nw, pw in zip(neg_w[b], pos_w[b]):
                u += pw * (below + 0.5 * nw)
                below += nw
        assert abs(u - store.u) <= 1e-9 * max(1.0, store.w_pos * store.w_neg), (
            f"numerator {store.u} != {u}"
        )
        if n_pos + n_neg == 0:
            assert nb == 0 and store.u == store.w_pos == store.w_neg == 0.0

    # ------------------------------------------------------------------ events

    def _revert(self, y: float, p: float, w: float) -> None:
        if not self._store.revert(y, p, w):
            raise self._not_held(y, p)

    def get(self) -> float:
        """The AUC of the events held; 0.0 until both classes have positive weight; O(1)."""
        store = self._store
        if store.n_pos and store.n_neg:
            auc = store.u / (store.w_pos * store.w_neg)
            return min(1.0, max(0.0, auc))  # rounding at the ends
        return 0.0

    @property
    def n_events(self) -> int:
        """Number of positive-weight events held."""
        return self._store.n_pos + self._store.n_neg

    def _set_state(self, state: dict) -> None:
        lists = [state[k] for k in ("keys", "neg_w", "pos_w", "neg_n", "pos_n")]
        if len({len(x) for x in lists}) != 1:
            raise ValueError(
                "The 'keys', 'neg_w', 'pos_w', 'neg_n' and 'pos_n' entries of the ROCAUC state must "
                f"have the same length. Got {V.format_value(state)} instead."
            )
        if not len(state["block_neg"]) == len(state["block_pos"]) == len(lists[0]):
            raise ValueError(
                "The 'block_neg' and 'block_pos' entries of the ROCAUC state must have one "
                f"total per block. Got {V.format_value(state)} instead."
            )
        self._store.set_state(state)
