"""The fitted map of the multiclass isotonic calibrators (:mod:`streamcal.core.fir`): a
non-decreasing piecewise-constant function of a probability, with each piece's
statistics.

This module is pure: numpy, no river.
"""

from __future__ import annotations

import math
from bisect import bisect_right

import numpy as np

from streamcal._kernel_pickle import SlotsPickle

__all__ = ["IsotonicMap"]


class IsotonicMap(SlotsPickle):
    """A non-decreasing piecewise-constant map fitted on scores: piece ``j`` covers the
    fitted scores ``lo[j] .. hi[j]`` and has value ``values[j]``.

    Between pieces and outside them the map is read in one of two ways (as
    :class:`streamcal.calibrators.OnlineIsotonic` does):

    - ``"step"``: the value of the last piece starting at or below ``x`` (the first
      piece's value below every piece);
    - ``"linear"``: constant on each piece, linear between the last score of a piece
      and the first score of the next, constant beyond both ends (scikit-learn's
      ``IsotonicRegression(out_of_bounds="clip")``).

    At a fitted score both readings give the piece's value.

    A fit also records each piece's statistics, ``weights[j]`` (the total weight of
    the pairs it covers) and ``sums[j]`` (their weighted label sum), so that a prior
    can be pooled into its pieces (:func:`streamcal.core.prior.prior_piece_values`);
    both are None for a map built from values alone (and in snapshots written before
    they existed).

    Invariants (:meth:`_check`): as many ``lo``, ``hi`` and ``values``, at least one;
    ``lo[j] <= hi[j] < lo[j + 1]``; values finite, in [0, 1], strictly increasing;
    ``weights`` and ``sums`` both None, or one of each per piece with
    ``0 <= sums[j] <= weights[j]``, weights finite and positive.

    Examples
    --------
    >>> g = IsotonicMap([0.0, 0.4], [0.2, 0.6], [0.1, 0.5])
    >>> g(0.3), round(g(0.3, "linear"), 12), g(0.9), g(-1.0)
    (0.1, 0.3, 0.5, 0.1)
    >>> g.predict_array(np.array([0.3, 0.5]), "linear").round(12).tolist()
    [0.3, 0.5]

    """

    __slots__ = ("hi", "lo", "sums", "values", "weights")

    def __init__(self, lo, hi, values, weights=None, sums=None):
        self.lo = [float(v) for v in lo]
        self.hi = [float(v) for v in hi]
        self.values = [float(v) for v in values]
        self.weights = None if weights is None else [float(v) for v in weights]
        self.sums = None if sums is None else [float(v) for v in sums]

    def __call__(self, x: float, interpolation: str = "step") -> float:
        """``g(x)``. O(log pieces)."""
        lo = self.lo
        values = self.values
        i = bisect_right(lo, x) - 1
        if i < 0:
            return values[0]
        if interpolation == "step" or i + 1 == len(lo):
            return values[i]
        last = self.hi[i]
        if x <= last:
            return values[i]
        v0 = values[i]
        return v0 + (values[i + 1] - v0) * ((x - last) / (lo[i + 1] - last))

    def predict_array(self, x, interpolation: str = "step") -> np.ndarray:
        """``g`` of every entry of ``x`` (any shape), vectorised; equal to calling the
        map on each entry. O(n log pieces)."""
        x = np.asarray(x, dtype=np.float64)
        lo = np.asarray(self.lo)
        values = np.asarray(self.values)
        i = np.searchsorted(lo, x, side="right") - 1
        i0 = np.maximum(i, 0)
        out = values[i0]
        if interpolation == "linear" and len(lo) > 1:
            hi = np.asarray(self.hi)
            j = np.minimum(i0 + 1, len(lo) - 1)
            between = (i >= 0) & (i + 1 < len(lo)) & (x > hi[i0])
            with np.errstate(invalid="ignore", divide="ignore"):
                v0 = values[i0]
                lin = v0 + (values[j] - v0) * ((x - hi[i0]) / (lo[j] - hi[i0]))
            out = np.where(between, lin, out)
        return out

    def to_lists(self) -> list:
        """JSON-safe state ``[lo, hi, values, weights, sums]``, or ``[lo, hi, values]``
        for a map without piece statistics (as every map was written before them)."""
        out = [list(self.lo), list(self.hi), list(self.values)]
        if self.weights is not None:
            out += [list(self.weights), list(self.sums)]
        return out

    @classmethod
    def from_lists(cls, data) -> IsotonicMap:
        """The map :meth:`to_lists` wrote."""
        return cls(*data)

    def __eq__(self, other) -> bool:
        if not isinstance(other, IsotonicMap):
            return NotImplemented
        return self.to_lists() == other.to_lists()

    __hash__ = None

    def __len__(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:
        return f"IsotonicMap(n_pieces={len(self.values)})"

    def _check(self) -> None:
        lo, hi, values = self.lo, self.hi, self.values
        assert len(lo) == len(hi) == len(values) >= 1, (
            f"{len(lo)}/{len(hi)}/{len(values)} pieces"
        )
        assert (self.weights is None) == (self.sums is None), "weights without sums"
        if self.weights is not None:
            assert len(self.weights) == len(self.sums) == len(values), (
                f"{len(self.weights)} weights and {len(self.sums)} sums for {len(values)} pieces"
            )
            for j, (ww, ss) in enumerate(zip(self.weights, self.sums)):
                assert 0.0 < ww < math.inf and 0.0 <= ss <= ww, (
                    f"piece {j}: weight {ww}, label sum {ss}"
                )
        for j, (a, b, v) in enumerate(zip(lo, hi, values)):
            assert a <= b, f"piece {j}: lo {a} > hi {b}"
            assert math.isfinite(v) and 0.0 <= v <= 1.0, f"piece {j}: value {v}"
            if j:
                assert hi[j - 1] < a, f"pieces {j - 1} and {j} overlap"
                assert values[j - 1] < v, (
                    f"values not strictly increasing at piece {j}: {values[j - 1]} >= {v}"
                )


def _map_from_cells(ux: np.ndarray, starts, stops, values, weights, sums) -> IsotonicMap:
    """The map of pieces ``[starts[j], stops[j])`` of the sorted distinct scores ``ux``,
    with their values and statistics, equal neighbours pooled."""
    lo, hi, vals, ws, ss = [], [], [], [], []
    for a, b, v, ww, sv in zip(starts, stops, values, weights, sums):
        if vals and vals[-1] == v:
            hi[-1] = float(ux[b - 1])
            ws[-1] += float(ww)
            ss[-1] += float(sv)
        else:
            lo.append(float(ux[a]))
            hi.append(float(ux[b - 1]))
            vals.append(float(v))
            ws.append(float(ww))
            ss.append(float(sv))
    return IsotonicMap(lo, hi, vals, ws, ss)
