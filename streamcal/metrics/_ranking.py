"""Exact, weighted, revertible area under the ROC curve."""

from __future__ import annotations

import bisect
import itertools

from streamcal import _validation as V
from streamcal.metrics.base import BinaryCalibrationMetric

__all__ = ["ROCAUC"]

# Distinct scores are kept in sorted blocks of at most 2 * _LOAD keys (split in two
# beyond), each with its per-class weight totals, in the manner of sortedcontainers.
_LOAD = 256


class ROCAUC(BinaryCalibrationMetric):
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
    scores held are kept in sorted blocks of at most 512 (split in two beyond; in the
    manner of sortedcontainers; an emptied block is dropped) with per-block weight
    totals, so an update or a revert costs O(log m) comparisons plus O(B + 512) float
    additions and a memory move of at most 512 entries, done in C, for ``B`` blocks
    (``B`` is about ``m / 384`` when scores only arrive; a partial sum over the block
    totals and one within a block, each over its shorter side). Measured with
    ``benchmarks/bench_metrics.py`` against river's LogisticRegression step (about 2.5
    us): 1.2x at 2 10^4 events, 2.6x at 2 10^5 and 3.7x at 10^6 events of distinct
    scores, i.e. about 3 to 9 us per event. Memory O(m); ``get()`` is O(1). Revert is
    exact to float rounding (a score whose events are all reverted is deleted, and the
    metric empties exactly), so ``river.utils.Rolling`` works and keeps memory bounded
    by its window.

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

    def __init__(self):
        super().__init__()

    def _reset(self) -> None:
        # per block: sorted distinct scores, per-class weight and count at each score
        self._keys = []
        self._neg_w = []
        self._pos_w = []
        self._neg_n = []
        self._pos_n = []
        # per block: per-class weight totals and the largest score
        self._block_neg = []
        self._block_pos = []
        self._maxes = []
        self._u = (
            0.0  # sum over (pos, neg) pairs of w_i w_j (1 if ordered, 1/2 if tied)
        )
        self._w_pos = 0.0
        self._w_neg = 0.0
        self._n_pos = 0
        self._n_neg = 0

    def _per_block(self) -> tuple:
        """The lists holding one entry per block, in step."""
        return (
            self._keys,
            self._neg_w,
            self._pos_w,
            self._neg_n,
            self._pos_n,
            self._block_neg,
            self._block_pos,
            self._maxes,
        )

    def _check(self) -> None:
        """Assert every invariant of the state (tests call it after each mutation)."""
        nb = len(self._keys)
        assert all(len(x) == nb for x in self._per_block()), (
            "per-block lists out of step"
        )
        flat = [k for block in self._keys for k in block]
        assert all(a < b for a, b in itertools.pairwise(flat)), (
            "scores not strictly increasing"
        )
        n_pos = n_neg = 0
        for b in range(nb):
            keys = self._keys[b]
            assert 0 < len(keys) <= 2 * _LOAD, f"block {b} has {len(keys)} keys"
            assert self._maxes[b] == keys[-1]
            assert all(
                len(x[b]) == len(keys)
                for x in (self._neg_w, self._pos_w, self._neg_n, self._pos_n)
            )
            for nw, pw, nn, pn in zip(
                self._neg_w[b], self._pos_w[b], self._neg_n[b], self._pos_n[b]
            ):
                assert nn + pn >= 1, "a score without events was kept"
                assert (nn or nw == 0.0) and (pn or pw == 0.0), (
                    "a weight without events"
                )
                assert nw >= 0.0 and pw >= 0.0
            scale = 1e-12 * max(1.0, self._w_pos + self._w_neg)
            assert abs(self._block_neg[b] - sum(self._neg_w[b])) <= scale, (
                "block total drifted"
            )
            assert abs(self._block_pos[b] - sum(self._pos_w[b])) <= scale, (
                "block total drifted"
            )
            n_pos += sum(self._pos_n[b])
            n_neg += sum(self._neg_n[b])
        assert (n_pos, n_neg) == (self._n_pos, self._n_neg), "class counts disagree"
        tol = 1e-9 * max(1.0, self._w_pos + self._w_neg)
        assert (
            abs(sum(self._block_pos) - self._w_pos) <= tol
            and abs(sum(self._block_neg) - self._w_neg) <= tol
        )
        # the numerator against a direct pairwise sum over distinct scores
        u = 0.0
        below = 0.0
        for b in range(nb):
            for nw, pw in zip(self._neg_w[b], self._pos_w[b]):
                u += pw * (below + 0.5 * nw)
                below += nw
        assert abs(u - self._u) <= 1e-9 * max(1.0, self._w_pos * self._w_neg), (
            f"numerator {self._u} != {u}"
        )
        if self._n_pos + self._n_neg == 0:
            assert nb == 0 and self._u == self._w_pos == self._w_neg == 0.0

    # ------------------------------------------------------------------ blocks

    def _locate(self, p: float):
        """``(b, i, found)``: block and position of score ``p`` (or where it would go)."""
        maxes = self._maxes
        b = bisect.bisect_left(maxes, p)
        if b == len(maxes):
            if b == 0:
                return 0, 0, False
            b -= 1
            return b, len(self._keys[b]), False
        keys = self._keys[b]
        i = bisect.bisect_left(keys, p)
        return b, i, keys[i] == p  # i < len(keys) since p <= maxes[b]

    def _insert(self, b: int, i: int, p: float) -> None:
        """Insert the new score ``p`` at position ``i`` of block ``b``."""
        if not self._keys:
            self._keys.append([p])
            for x in (self._neg_w, self._pos_w):
                x.append([0.0])
            for x in (self._neg_n, self._pos_n):
                x.append([0])
            self._block_neg.append(0.0)
            self._block_pos.append(0.0)
            self._maxes.append(p)
            return
        keys = self._keys[b]
        keys.insert(i, p)
        self._neg_w[b].insert(i, 0.0)
        self._pos_w[b].insert(i, 0.0)
        self._neg_n[b].insert(i, 0)
        self._pos_n[b].insert(i, 0)
        self._maxes[b] = keys[-1]

    def _split_if_full(self, b: int) -> None:
        if len(self._keys[b]) <= 2 * _LOAD:
            return
        for x in (self._keys, self._neg_w, self._pos_w, self._neg_n, self._pos_n):
            block = x[b]
            x.insert(b + 1, block[_LOAD:])
            del block[_LOAD:]
        self._maxes[b] = self._keys[b][-1]
        self._maxes.insert(b + 1, self._keys[b + 1][-1])
        self._block_neg[b] = sum(self._neg_w[b])
        self._block_pos[b] = sum(self._pos_w[b])
        self._block_neg.insert(b + 1, sum(self._neg_w[b + 1]))
        self._block_pos.insert(b + 1, sum(self._pos_w[b + 1]))

    def _delete(self, b: int, i: int) -> None:
        """Delete the score at position ``i`` of block ``b`` (it holds no event)."""
        keys = self._keys[b]
        if len(keys) == 1:
            for x in self._per_block():
                del x[b]
            return
        for x in (self._keys, self._neg_w, self._pos_w, self._neg_n, self._pos_n):
            del x[b][i]
        self._maxes[b] = keys[-1]

    # ------------------------------------------------------------------ events

    def _pairs(self, positive: bool, b: int, i: int, found: bool) -> float:
        """Weight of the other class below (``positive``) or above the score at
        ``(b, i)``, plus half the weight at it.

        Each of the two sums (over the blocks before or after ``b``, over the scores
        before or after ``i`` in block ``b``) is taken over the shorter side, the other
        side then being a known total minus it: at most half the blocks and half a block
        are added, in C. The subtraction costs an absolute error of about 1e-16 of the
        class weight, far below the tolerance of the metric.
        """
        keys = self._keys
        if not keys:
            return 0.0
        nb = len(keys)
        if positive:  # negative weight below the score
            blocks, other, grand = self._block_neg, self._neg_w[b], self._w_neg
            if 2 * b <= nb:
                total = sum(blocks[:b])
            else:
                total = grand - sum(blocks[b:])
            if 2 * i <= len(other):
                total += sum(other[:i])
            else:
                total += blocks[b] - sum(other[i:])
        else:  # positive weight above the score
            blocks, other, grand = self._block_pos, self._pos_w[b], self._w_pos
            if 2 * (b + 1) >= nb:
                total = sum(blocks[b + 1 :])
            else:
                total = grand - sum(blocks[: b + 1])
            j = i + found
            if 2 * j >= len(other):
                total += sum(other[j:])
            else:
                total += blocks[b] - sum(other[:j])
        if found:
            total += 0.5 * other[i]
        return total

    def _update(self, y: float, p: float, w: float) -> None:
        if w > 0.0:
            b, i, found = self._locate(p)
            positive = y == 1.0
            self._u += w * self._pairs(positive, b, i, found)
            if not found:
                self._insert(b, i, p)
            if positive:
                self._pos_w[b][i] += w
                self._pos_n[b][i] += 1
                self._block_pos[b] += w
                self._w_pos += w
                self._n_pos += 1
            else:
                self._neg_w[b][i] += w
                self._neg_n[b][i] += 1
                self._block_neg[b] += w
                self._w_neg += w
                self._n_neg += 1
            self._split_if_full(b)

    def _revert(self, y: float, p: float, w: float) -> None:
        if w > 0.0:
            b, i, found = self._locate(p)
            positive = y == 1.0
            if not found or not (self._pos_n if positive else self._neg_n)[b][i]:
                raise self._not_held(y, p)
            if self._n_pos + self._n_neg == 1:  # back to exactly empty
                self._reset()
                return
            self._u -= w * self._pairs(positive, b, i, found)
            if positive:
                weights, counts = self._pos_w[b], self._pos_n[b]
                self._n_pos -= 1
                self._w_pos = self._w_pos - w if self._n_pos else 0.0
            else:
                weights, counts = self._neg_w[b], self._neg_n[b]
                self._n_neg -= 1
                self._w_neg = self._w_neg - w if self._n_neg else 0.0
            counts[i] -= 1
            weights[i] = weights[i] - w if counts[i] else 0.0
            if positive:
                self._block_pos[b] -= w
            else:
                self._block_neg[b] -= w
            if not (self._n_pos and self._n_neg):
                self._u = 0.0  # no pair left
            if self._pos_n[b][i] + self._neg_n[b][i] == 0:
                self._delete(b, i)

    def get(self) -> float:
        """The AUC of the events held; 0.0 until both classes have positive weight; O(1)."""
        if self._n_pos and self._n_neg:
            auc = self._u / (self._w_pos * self._w_neg)
            return min(1.0, max(0.0, auc))  # rounding at the ends
        return 0.0

    @property
    def n_events(self) -> int:
        """Number of positive-weight events held."""
        return self._n_pos + self._n_neg

    @property
    def bigger_is_better(self) -> bool:
        return True

    def _get_state(self) -> dict:
        return {
            "u": self._u,
            "w_pos": self._w_pos,
            "w_neg": self._w_neg,
            "n_pos": self._n_pos,
            "n_neg": self._n_neg,
            "keys": [list(x) for x in self._keys],
            "neg_w": [list(x) for x in self._neg_w],
            "pos_w": [list(x) for x in self._pos_w],
            "neg_n": [list(x) for x in self._neg_n],
            "pos_n": [list(x) for x in self._pos_n],
            "block_neg": list(self._block_neg),
            "block_pos": list(self._block_pos),
        }

    def _set_state(self, state: dict) -> None:
        self._reset()
        self._u = float(state["u"])
        self._w_pos = float(state["w_pos"])
        self._w_neg = float(state["w_neg"])
        self._n_pos = int(state["n_pos"])
        self._n_neg = int(state["n_neg"])
        self._keys = [[float(v) for v in x] for x in state["keys"]]
        self._neg_w = [[float(v) for v in x] for x in state["neg_w"]]
        self._pos_w = [[float(v) for v in x] for x in state["pos_w"]]
        self._neg_n = [[int(v) for v in x] for x in state["neg_n"]]
        self._pos_n = [[int(v) for v in x] for x in state["pos_n"]]
        if (
            not len(self._keys)
            == len(self._neg_w)
            == len(self._pos_w)
            == len(self._neg_n)
            == len(self._pos_n)
        ):
            raise ValueError(
                "The 'keys', 'neg_w', 'pos_w', 'neg_n' and 'pos_n' entries of the ROCAUC state must "
                f"have the same length. Got {V.format_value(state)} instead."
            )
        self._block_neg = [float(v) for v in state["block_neg"]]
        self._block_pos = [float(v) for v in state["block_pos"]]
        if not len(self._block_neg) == len(self._block_pos) == len(self._keys):
            raise ValueError(
                "The 'block_neg' and 'block_pos' entries of the ROCAUC state must have one "
                f"total per block. Got {V.format_value(state)} instead."
            )
        self._maxes = [x[-1] for x in self._keys]
