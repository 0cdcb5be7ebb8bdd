"""Binned calibration metrics of binary forecasts: ECE, sharpness, Murphy decomposition.

Every metric here bins the forecast ``p`` the way
:func:`streamcal.metrics.expected_calibration_error` does: bin ``i`` of ``n_bins``
holds ``[e_i, e_{i+1})`` and the last bin also its right edge, with ``e_i = i /
n_bins`` (equal width) or the ``i / n_bins`` quantiles of the forecasts held (equal
mass, :class:`ECE` only). The state is a few sums per bin (per distinct forecast value
for equal-mass bins), each with the count of events behind it, so that reverting every
event of a bin (or of the metric) returns its sums to exactly zero.
"""

from __future__ import annotations

import collections
import math
import typing

import numpy as np

from streamcal import _validation as V
from streamcal.core.binning import uniform_edges
from streamcal.metrics.base import BinaryCalibrationMetric

__all__ = ["ECE", "MurphyDecomposition", "ReliabilityBin", "Sharpness"]

_STRATEGIES = ("uniform", "quantile")

# With ``half_life``, stored weights grow as 2 ** (t / half_life) (t counts the
# positive-weight events) and the state is rescaled by an exact power of two once a new
# event would weigh 2 ** _RENORM_EXPONENT or more; at each rescaling, what weighs less
# than _FORGET of the total weight (below the resolution of any float sum over the
# state) is dropped, so that memory stays bounded.
_RENORM_EXPONENT = 64
_FORGET = 2.0**-64


class ReliabilityBin(typing.NamedTuple):
    """One bin of a reliability diagram.

    ``lower`` and ``upper`` are the bin's edges (the last bin includes ``upper``),
    ``weight`` the total weight of the events in it, ``mean_prediction`` and
    ``mean_outcome`` their weighted mean forecast and outcome frequency.

    Examples
    --------
    >>> b = ReliabilityBin(0.2, 0.3, 4.0, 0.25, 0.5)
    >>> b.mean_outcome - b.mean_prediction
    0.25

    """

    lower: float
    upper: float
    weight: float
    mean_prediction: float
    mean_outcome: float


def uniform_bin(p: float, n_bins: int, edges) -> int:
    """Index of the equal-width bin holding ``p`` in [0, 1] under the rule ``edges[i] <=
    p < edges[i + 1]`` (last bin closed), ``edges`` being ``uniform_edges(n_bins)`` of
    :mod:`streamcal.core.binning` (bit for bit the edges ``np.arange(n + 1) / n`` of the
    batch functions). ``int(p * n)`` can be one off near an edge, since ``p * n``
    rounds; the two comparisons correct it. O(1)."""
    b = int(p * n_bins)
    if b >= n_bins:
        return n_bins - 1
    if p < edges[b]:
        return b - 1
    if b + 1 < n_bins and p >= edges[b + 1]:
        return b + 1
    return b


def linear_quantile_edges(x: np.ndarray, cum: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-mass edges: the ``i / n_bins`` quantiles (numpy's default "linear" rule) of
    the forecasts ``x`` (increasing) repeated as often as their weights, ``cum`` being
    the cumulative weights (frequency weights; ``np.quantile`` itself for unit weights).
    Made non-decreasing; ``n_bins + 1`` edges. O(n_bins log len(x)).

    Examples
    --------
    >>> linear_quantile_edges(np.array([0.1, 0.2, 0.9]), np.array([1.0, 2.0, 3.0]), 2).tolist()
    [0.1, 0.2, 0.9]

    """
    # the expanded sample's index k holds the first value whose cumulative weight
    # exceeds k, and the quantile q sits at the virtual index (W - 1) q
    levels = np.arange(n_bins + 1, dtype=np.float64) / n_bins
    virtual = (cum[-1] - 1.0) * levels
    below = np.floor(virtual)
    last = len(x) - 1
    lo = np.minimum(np.searchsorted(cum, np.maximum(below, 0.0), side="right"), last)
    hi = np.minimum(
        np.searchsorted(cum, np.maximum(below + 1.0, 0.0), side="right"), last
    )
    a, b = x[lo], x[hi]
    gamma = virtual - below
    diff = b - a
    q = np.where(gamma >= 0.5, b - diff * (1.0 - gamma), a + diff * gamma)
    return np.maximum.accumulate(q)


def _check_n_bins(owner: str, n_bins) -> None:
    V.check_param(
        owner, "n_bins", n_bins, V.is_integer(n_bins) and n_bins >= 1, "an int >= 1"
    )


class ECE(BinaryCalibrationMetric):
    """Expected calibration error over bins of the forecast, kept up to date per event.

    ``sum over bins b of (W_b / W) * |mean outcome in b - mean forecast in b|`` with
    ``W_b`` the weight of the events in bin ``b`` and ``W`` the total: on the events
    held, exactly :func:`streamcal.metrics.expected_calibration_error` (which it equals
    to rounding for unit weights), with weights acting as frequency weights (an event of
    weight 2 counts as two events of weight 1, equal-mass edges included).

    Parameters
    ----------
    n_bins
        Number of bins, an int >= 1.
    strategy
        How the bins are cut (bin ``i`` holds ``[e_i, e_{i+1})``, the last bin is
        closed on the right).

        - ``"uniform"`` (default): equal widths, ``e_i = i / n_bins``. The state is
          four sums per bin.
        - ``"quantile"``: equal mass, ``e_i`` the ``i / n_bins`` quantile of the
          forecasts held (numpy's default linear interpolation, generalised to
          frequency weights: the expanded sample holds each distinct forecast for as
          many index units as its weight). The state is the weight, label sum and count
          per distinct forecast value, so memory grows with the number of distinct
          forecasts held (round the forecasts, or set ``window_size`` or
          ``half_life``, to bound it).
    window_size
        If set, the value is that of the last ``window_size`` positive-weight events
        (the metric then keeps them and cannot ``revert``). Without it the metric is
        revertible and ``river.utils.Rolling(ECE, window_size=n, n_bins=...)`` does the
        same (Rolling's ``window_size`` counts every event, zero weights included).
    half_life
        If set, exponential forgetting: each event's weight is multiplied by ``2 **
        (-age / half_life)``, the age counted in positive-weight events (the newest has
        age 0). Weights are stored relative to a moving reference rescaled by exact
        powers of two; what weighs less than ``2 ** -64`` of the total is dropped at a
        rescaling (every 64 half-lives), which bounds the memory of the quantile
        strategy to the distinct forecasts of roughly the last 130 half-lives. Not
        revertible. At most one of ``window_size`` and ``half_life`` may be set.

    Attributes
    ----------
    bins
        The non-empty bins, in increasing order, as :class:`ReliabilityBin` named
        tuples ``(lower, upper, weight, mean_prediction, mean_outcome)`` (weights after
        forgetting, the newest event at its own weight).
    n_events
        Number of positive-weight events held.

    Notes
    -----
    Cost per event: O(1) for both strategies (one bin, or one distinct value, is
    touched), plus the eviction of one event with ``window_size``. ``get()`` costs
    O(n_bins) ("uniform") or O(m log m) with ``m`` distinct forecast values held
    ("quantile": the values are sorted, the edges interpolated and the bins summed in
    numpy). Revert is exact to float rounding (about 1e-15 of the largest sums held; a
    bin, or a value, whose events are all reverted returns to exactly zero).

    Equal-mass edges are a discontinuous function of the cumulative weights: where a
    quantile's index falls exactly on a cumulative weight, the rounding of the weight
    sums decides which forecast it takes. With unit weights (or integers, halves: any
    weights whose sums are exact) the edges are exactly numpy's.

    Examples
    --------
    >>> from streamcal.metrics import ECE
    >>> m = ECE(n_bins=2)
    >>> for y, p in [(0, 0.1), (0, 0.2), (1, 0.7), (1, 0.9), (1, 0.8), (0, 0.3)]:
    ...     m.update(y, p)
    >>> round(m.get(), 6)                      # (3 * 0.2 + 3 * 0.2) / 6
    0.2
    >>> [(b.lower, b.upper, b.weight) for b in m.bins]
    [(0.0, 0.5, 3.0), (0.5, 1.0, 3.0)]

    Equal-mass bins, here three: {0.1, 0.2}, {0.3, 0.7} and {0.8, 0.9}:

    >>> m = ECE(n_bins=3, strategy="quantile")
    >>> for y, p in [(0, 0.1), (0, 0.2), (1, 0.7), (1, 0.9), (1, 0.8), (0, 0.3)]:
    ...     m.update(y, p)
    >>> round(m.get(), 6)
    0.1

    In a river rolling window (or with ``window_size``):

    >>> from river import utils
    >>> rolling = utils.Rolling(ECE, window_size=2, n_bins=2)
    >>> for y, p in [(0, 0.1), (1, 0.2), (1, 0.7)]:
    ...     rolling.update(y, p)
    >>> round(rolling.get(), 6)                # (|1 - 0.2| + |1 - 0.7|) / 2
    0.55

    """

    def __init__(
        self,
        n_bins: int = 10,
        strategy: str = "uniform",
        window_size: int | None = None,
        half_life=None,
    ):
        _check_n_bins("ECE", n_bins)
        V.check_param(
            "ECE",
            "strategy",
            strategy,
            isinstance(strategy, str) and strategy in _STRATEGIES,
            "a str among {'uniform', 'quantile'}",
        )
        V.check_param(
            "ECE",
            "window_size",
            window_size,
            window_size is None or (V.is_integer(window_size) and window_size >= 1),
            "an int >= 1 or None",
        )
        V.check_param(
            "ECE",
            "half_life",
            half_life,
            half_life is None or (V.is_real(half_life) and 0.0 < half_life < math.inf),
            "a finite real number > 0 or None",
        )
        V.check_param(
            "ECE",
            "half_life",
            half_life,
            half_life is None or window_size is None,
            "None when window_size is set (at most one of the two)",
        )
        self.n_bins = n_bins
        self.strategy = strategy
        self.window_size = window_size
        self.half_life = half_life
        super().__init__()

    _bounded_memory_params = ("window_size", "half_life")

    @property
    def _revertible(self) -> bool:
        return self.window_size is None and self.half_life is None

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"n_bins": 5, "strategy": "quantile"}
        yield {"n_bins": 7, "window_size": 30}
        yield {"n_bins": 4, "strategy": "quantile", "window_size": 25}
        yield {"n_bins": 3, "half_life": 20.0}
        yield {"strategy": "quantile", "half_life": 8.0}

    # ------------------------------------------------------------------ state

    def _reset(self) -> None:
        n = int(self.n_bins)
        self._uniform = self.strategy == "uniform"
        self._plain = (
            self._uniform and self.window_size is None and self.half_life is None
        )
        self._edges = uniform_edges(n)
        self._n = 0  # positive-weight events held
        self._weight = 0.0  # their total (stored) weight
        if self._uniform:
            self._bin_w = [0.0] * n
            self._bin_y = [0.0] * n
            self._bin_p = [0.0] * n
            self._bin_n = [0] * n
        else:
            self._values = {}  # forecast -> [weight, weighted label sum, count]
        self._window = collections.deque() if self.window_size is not None else None
        # half-life clock: the next event weighs w * 2 ** ((t - t_ref) / h + phase)
        self._t = 0
        self._t_ref = 0
        self._phase = 0.0

    def _check(self) -> None:
        """Assert every invariant of the state (tests call it after each mutation)."""
        if self._uniform:
            assert len(self._bin_w) == len(self._bin_n) == self.n_bins
            assert sum(self._bin_n) == self._n, "bin counts do not add up to n"
            for w, y, p, k in zip(self._bin_w, self._bin_y, self._bin_p, self._bin_n):
                assert k >= 0
                if k == 0:
                    assert w == y == p == 0.0, "an empty bin keeps a residue"
                elif self.half_life is None:
                    assert (
                        w > 0.0
                        and -1e-9 * w <= y <= w * (1 + 1e-12)
                        and -1e-9 * w <= p <= w * (1 + 1e-12)
                    )
            total = math.fsum(self._bin_w)
        else:
            assert sum(v[2] for v in self._values.values()) == self._n, (
                "value counts do not add up to n"
            )
            for p, (w, y, k) in self._values.items():
                assert 0.0 <= p <= 1.0 and k >= 1 and w > 0.0, (
                    f"bad entry {p}: {(w, y, k)}"
                )
                assert -1e-9 * w <= y <= w * (1 + 1e-9)
            total = math.fsum(v[0] for v in self._values.values())
        assert abs(total - self._weight) <= 1e-9 * max(1.0, total), (
            f"total weight {self._weight} != {total}"
        )
        if self._n == 0:
            assert self._weight == 0.0
        if self._window is not None:
            assert len(self._window) == self._n <= self.window_size

    def _get_state(self) -> dict:
        state = {
            "n": self._n,
            "weight": self._weight,
            "t": self._t,
            "t_ref": self._t_ref,
            "phase": self._phase,
        }
        if self._uniform:
            state["bins"] = [
                list(self._bin_w),
                list(self._bin_y),
                list(self._bin_p),
                list(self._bin_n),
            ]
        else:
            state["values"] = [[p, w, y, k] for p, (w, y, k) in self._values.items()]
        if self._window is not None:
            state["window"] = [list(e) for e in self._window]
        return state

    def _set_state(self, state: dict) -> None:
        self._reset()
        self._n = int(state["n"])
        self._weight = float(state["weight"])
        self._t, self._t_ref, self._phase = (
            int(state["t"]),
            int(state["t_ref"]),
            float(state["phase"]),
        )
        if self._uniform:
            w, y, p, k = state["bins"]
            if not len(w) == len(y) == len(p) == len(k) == self.n_bins:
                raise ValueError(
                    f"The 'bins' state of ECE must hold {self.n_bins} bins. Got {len(w)} instead."
                )
            self._bin_w = [float(v) for v in w]
            self._bin_y = [float(v) for v in y]
            self._bin_p = [float(v) for v in p]
            self._bin_n = [int(v) for v in k]
        else:
            self._values = {
                float(p): [float(w), float(y), int(k)] for p, w, y, k in state["values"]
            }
        if self._window is not None:
            self._window = collections.deque(
                (float(y), float(p), float(w)) for y, p, w in state["window"]
            )

    # ------------------------------------------------------------------ events

    def _weight_factor(self) -> float:
        """Factor applied to the weight of the next event (half-life only)."""
        e = (self._t - self._t_ref) / self.half_life + self._phase
        if e >= _RENORM_EXPONENT:
            self._renormalise(e)
            e = self._phase
        self._t += 1
        return 2.0**e

    def _renormalise(self, e: float) -> None:
        shift = -math.floor(e)
        ldexp = math.ldexp
        self._phase = e + shift
        self._t_ref = self._t
        total = ldexp(self._weight, shift)
        cut = total * _FORGET
        if self._uniform:
            bw, by, bp, bn = self._bin_w, self._bin_y, self._bin_p, self._bin_n
            for b in range(self.n_bins):
                if bn[b] and ldexp(bw[b], shift) < cut:
                    bw[b] = by[b] = bp[b] = 0.0
                    self._n -= bn[b]
                    bn[b] = 0
                bw[b], by[b], bp[b] = (
                    ldexp(bw[b], shift),
                    ldexp(by[b], shift),
                    ldexp(bp[b], shift),
                )
            self._weight = math.fsum(bw)
        else:
            kept = {}
            for p, (w, y, k) in self._values.items():
                w = ldexp(w, shift)
                if w < cut:
                    self._n -= k
                else:
                    kept[p] = [w, ldexp(y, shift), k]
            self._values = kept
            self._weight = math.fsum(v[0] for v in kept.values())

    def _add(self, y: float, p: float, w: float) -> None:
        self._n += 1
        self._weight += w
        if self._uniform:
            b = uniform_bin(p, self.n_bins, self._edges)
            self._bin_w[b] += w
            self._bin_y[b] += w * y
            self._bin_p[b] += w * p
            self._bin_n[b] += 1
        else:
            entry = self._values.get(p)
            if entry is None:
                self._values[p] = [w, w * y, 1]
            else:
                entry[0] += w
                entry[1] += w * y
                entry[2] += 1

    def _remove(self, y: float, p: float, w: float) -> None:
        self._n -= 1
        if self._n <= 0:  # back to exactly empty (no float residue)
            self._n = 0
            self._weight = 0.0
            if self._uniform:
                n = self.n_bins
                self._bin_w, self._bin_y, self._bin_p, self._bin_n = (
                    [0.0] * n,
                    [0.0] * n,
                    [0.0] * n,
                    [0] * n,
                )
            else:
                self._values = {}
            return
        self._weight -= w
        if self._uniform:
            b = uniform_bin(p, self.n_bins, self._edges)
            self._bin_n[b] -= 1
            if self._bin_n[b] == 0:
                self._bin_w[b] = self._bin_y[b] = self._bin_p[b] = 0.0
            else:
                self._bin_w[b] -= w
                self._bin_y[b] -= w * y
                self._bin_p[b] -= w * p
        else:
            entry = self._values[p]
            entry[2] -= 1
            if entry[2] == 0:
                del self._values[p]
            else:
                entry[0] -= w
                entry[1] -= w * y

    def update(self, y_true, y_pred, w=1.0) -> None:
        """Add one event; O(1) (plus the eviction of one event with window_size).
        Validation inlined as in :meth:`streamcal.metrics.Brier.update`."""
        t = type(y_true)
        if (t is int or t is bool) and (y_true == 1 or y_true == 0):
            y = 1.0 if y_true else 0.0
        else:
            y = V.check_label(y_true, "ECE", "update", "y_true")
        if type(y_pred) is not float or not 0.0 <= y_pred <= 1.0:
            y_pred = V.check_probability(y_pred, "ECE", "update")
        if type(w) is not float or not 0.0 <= w < math.inf:
            w = V.check_weight(w, "ECE", "update")
        if w > 0.0:
            if not self._plain:  # window, half-life or equal-mass bins
                self._update(y, y_pred, w)
                return
            # the common case, inlined: uniform bins, no window, no decay (as _add does)
            p = y_pred
            n = self.n_bins
            b = int(p * n)
            if b >= n:
                b = n - 1
            else:  # int(p * n) can be one off near an edge: correct it
                edges = self._edges
                if p < edges[b]:
                    b -= 1
                elif p >= edges[b + 1] and b + 1 < n:
                    b += 1
            self._bin_w[b] += w
            self._bin_y[b] += w * y
            self._bin_p[b] += w * p
            self._bin_n[b] += 1
            self._weight += w
            self._n += 1

    def _update(self, y: float, p: float, w: float) -> None:
        if w > 0.0:
            if self.half_life is not None:
                w *= self._weight_factor()
            self._add(y, p, w)
            window = self._window
            if window is not None:
                window.append((y, p, w))
                if len(window) > self.window_size:
                    self._remove(*window.popleft())

    def _revert(self, y: float, p: float, w: float) -> None:
        if w > 0.0:
            if self._n == 0 or (not self._uniform and p not in self._values):
                raise self._not_held(y, p)
            self._remove(y, p, w)

    # ------------------------------------------------------------------ values

    def _unit(self) -> float:
        """Factor turning stored weights into weights with the newest event at its own."""
        if self.half_life is None or self._t == 0:
            return 1.0
        return 2.0 ** -((self._t - 1 - self._t_ref) / self.half_life + self._phase)

    def _quantile_bins(self):
        """Per-bin ``(edges, weight, label sum, forecast sum)`` arrays, equal mass."""
        items = sorted(self._values.items())
        x = np.fromiter((p for p, _ in items), dtype=np.float64, count=len(items))
        w = np.fromiter((v[0] for _, v in items), dtype=np.float64, count=len(items))
        ys = np.fromiter((v[1] for _, v in items), dtype=np.float64, count=len(items))
        n_bins = self.n_bins
        unit = self._unit()
        edges = linear_quantile_edges(
            x, np.cumsum(w * unit if unit != 1.0 else w), n_bins
        )
        idx = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, n_bins - 1)
        bw = np.bincount(idx, weights=w, minlength=n_bins)
        by = np.bincount(idx, weights=ys, minlength=n_bins)
        bp = np.bincount(idx, weights=w * x, minlength=n_bins)
        return edges, bw, by, bp

    def get(self) -> float:
        """The ECE of the events held (0.0 before any); O(n_bins) or O(m log m)."""
        if self._n == 0:
            return 0.0
        if self._uniform:
            total = 0.0
            for y, p in zip(self._bin_y, self._bin_p):
                total += abs(y - p)
            return total / self._weight
        _, bw, by, bp = self._quantile_bins()
        return float(np.sum(np.abs(by - bp)) / np.sum(bw))

    @property
    def bins(self) -> tuple:
        """The non-empty bins as :class:`ReliabilityBin` tuples, in increasing order."""
        if self._n == 0:
            return ()
        if self._uniform:
            edges, bw, by, bp = self._edges, self._bin_w, self._bin_y, self._bin_p
            counts = self._bin_n
        else:
            edges, bw, by, bp = self._quantile_bins()
            edges, bw, by, bp = edges.tolist(), bw.tolist(), by.tolist(), bp.tolist()
            counts = bw
        unit = self._unit()
        # a mean of numbers in [0, 1] may round just outside: clip
        return tuple(
            ReliabilityBin(
                edges[b],
                edges[b + 1],
                bw[b] * unit,
                min(1.0, max(0.0, bp[b] / bw[b])),
                min(1.0, max(0.0, by[b] / bw[b])),
            )
            for b in range(self.n_bins)
            if counts[b]
        )


class _EqualWidthSums(BinaryCalibrationMetric):
    """Base of :class:`Sharpness` and :class:`MurphyDecomposition`: weighted sums per
    equal-width bin of the forecast (the lists ``_lists()`` returns, bin weights
    ``_bin_w`` and label sums ``_bin_y`` first), each bin with the number of events
    behind it (``_bin_n``), so that a bin whose events are all reverted is exactly
    zero. Subclasses build their sums in ``_reset_sums(n_bins)``."""

    def _reset(self) -> None:
        n = int(self.n_bins)
        self._edges = uniform_edges(n)
        self._n = 0
        self._weight = 0.0
        self._reset_sums(n)

    def _check(self) -> None:
        """Assert every invariant of the bins (tests call it after each mutation)."""
        assert sum(self._bin_n) == self._n
        for k, w, y, *rest in zip(self._bin_n, *self._lists()):
            assert k >= 0
            if k == 0:
                assert w == y == 0.0 and not any(rest), "an empty bin keeps a residue"
            else:
                assert w > 0.0 and -1e-9 * w <= y <= w * (1 + 1e-12)
        assert abs(math.fsum(self._bin_w) - self._weight) <= 1e-9 * max(
            1.0, self._weight
        )


class Sharpness(_EqualWidthSums):
    """Binned sharpness: ``sum_b (W_b / W) * ybar_b ** 2`` over equal-width bins.

    ``W_b`` is the weight of the events whose forecast falls in bin ``b`` (the bins of
    :class:`ECE`, ``[i / n_bins, (i + 1) / n_bins)``, the last one closed), ``ybar_b``
    their weighted outcome frequency and ``W`` the total weight. This is the sharpness
    Gupta and Ramdas report for online Platt scaling ("Online Platt Scaling with
    Calibeating", ICML 2023), as in ``simulations/bank_marketing_ops.py``: bigger is
    sharper, and on binned forecasts ``mean(y) - sharpness`` is the refinement of the
    Foster-Hart decomposition (the resolution of the bins, up to the constant ``mean(y)
    ** 2``).

    Parameters
    ----------
    n_bins
        Number of equal-width bins, an int >= 1.

    Notes
    -----
    Revertible (use ``river.utils.Rolling`` for a window), exact to float rounding; a
    bin whose events are all reverted returns to exactly zero. Cost O(1) per event,
    O(n_bins) for ``get()``; memory O(n_bins).

    Examples
    --------
    >>> from streamcal.metrics import Sharpness
    >>> m = Sharpness(n_bins=2)
    >>> for y, p in [(0, 0.1), (1, 0.2), (1, 0.7), (1, 0.9)]:
    ...     m.update(y, p)
    >>> m.get()                                # (2 * 0.5 ** 2 + 2 * 1.0 ** 2) / 4
    0.625

    """

    def __init__(self, n_bins: int = 10):
        _check_n_bins("Sharpness", n_bins)
        self.n_bins = n_bins
        super().__init__()

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"n_bins": 3}

    def _reset_sums(self, n: int) -> None:
        self._bin_w = [0.0] * n
        self._bin_y = [0.0] * n
        self._bin_n = [0] * n

    def _lists(self):
        return self._bin_w, self._bin_y

    def update(self, y_true, y_pred, w=1.0) -> None:
        """Add one event; O(1). Validation inlined as in
        :meth:`streamcal.metrics.Brier.update`."""
        t = type(y_true)
        if (t is int or t is bool) and (y_true == 1 or y_true == 0):
            y = 1.0 if y_true else 0.0
        else:
            y = V.check_label(y_true, "Sharpness", "update", "y_true")
        if type(y_pred) is not float or not 0.0 <= y_pred <= 1.0:
            y_pred = V.check_probability(y_pred, "Sharpness", "update")
        if type(w) is not float or not 0.0 <= w < math.inf:
            w = V.check_weight(w, "Sharpness", "update")
        if w > 0.0:
            n = self.n_bins
            b = int(y_pred * n)  # uniform_bin, inlined
            if b >= n:
                b = n - 1
            else:
                edges = self._edges
                if y_pred < edges[b]:
                    b -= 1
                elif y_pred >= edges[b + 1] and b + 1 < n:
                    b += 1
            self._bin_w[b] += w
            self._bin_y[b] += w * y
            self._bin_n[b] += 1
            self._weight += w
            self._n += 1

    def _update(self, y: float, p: float, w: float) -> None:
        self.update(y, p, w)  # the body lives in update, after its inlined checks

    def _revert(self, y: float, p: float, w: float) -> None:
        if w > 0.0:
            self._n -= 1
            if self._n <= 0:
                self._reset()
                return
            self._weight -= w
            b = uniform_bin(p, self.n_bins, self._edges)
            self._bin_n[b] -= 1
            if self._bin_n[b] == 0:
                self._bin_w[b] = self._bin_y[b] = 0.0
            else:
                self._bin_w[b] -= w
                self._bin_y[b] -= w * y

    def get(self) -> float:
        """The sharpness of the events held (0.0 before any); O(n_bins)."""
        if self._n == 0:
            return 0.0
        total = 0.0
        for w, y, k in zip(self._bin_w, self._bin_y, self._bin_n):
            if k:
                total += y * y / w
        return total / self._weight

    @property
    def bigger_is_better(self) -> bool:
        return True

    def _get_state(self) -> dict:
        return {
            "n": self._n,
            "weight": self._weight,
            "bins": [list(self._bin_w), list(self._bin_y), list(self._bin_n)],
        }

    def _set_state(self, state: dict) -> None:
        w, y, k = state["bins"]
        if not len(w) == len(y) == len(k) == self.n_bins:
            raise ValueError(
                f"The 'bins' state of Sharpness must hold {self.n_bins} bins. Got {len(w)} instead."
            )
        self._n = int(state["n"])
        self._weight = float(state["weight"])
        self._bin_w = [float(v) for v in w]
        self._bin_y = [float(v) for v in y]
        self._bin_n = [int(v) for v in k]


class MurphyDecomposition(_EqualWidthSums):
    """The Brier score and its Murphy decomposition on equal-width bins of the forecast.

    With ``W_b``, ``pbar_b`` and ``ybar_b`` the weight, mean forecast and outcome
    frequency of bin ``b`` (the bins of :class:`ECE`), ``ybar`` the overall frequency
    and ``W`` the total weight::

        reliability = sum_b W_b (pbar_b - ybar_b) ** 2 / W            (REL)
        resolution  = sum_b W_b (ybar_b - ybar) ** 2 / W              (RES)
        uncertainty = ybar (1 - ybar)                                 (UNC)

    Because forecasts vary within a bin, the Brier score is not REL - RES + UNC but
    (Stephenson, Coelho and Jolliffe, "Two extra components in the Brier score
    decomposition", Weather and Forecasting 23, 2008)::

        brier = REL - RES + UNC + WBV - WBC

    with the within-bin variance of the forecasts ``WBV = sum_t w_t (p_t - pbar_b(t))
    ** 2 / W`` and twice their within-bin covariance with the outcomes ``WBC = 2 sum_t
    w_t (p_t - pbar_b(t)) (y_t - ybar_b(t)) / W``. Both vanish when the forecasts take
    one value per bin.

    Parameters
    ----------
    n_bins
        Number of equal-width bins, an int >= 1.

    Attributes
    ----------
    reliability, resolution, uncertainty, within_bin_variance, within_bin_covariance
        The five terms above (0.0 before any event); each costs O(n_bins).

    Notes
    -----
    ``get()`` is the Brier score itself, kept as its own running sum, so that the
    identity above is a check, not a definition. Revertible (``river.utils.Rolling``
    works), exact to float rounding; a bin whose events are all reverted returns to
    exactly zero. Cost O(1) per event; memory O(n_bins).

    Examples
    --------
    >>> from streamcal.metrics import MurphyDecomposition
    >>> m = MurphyDecomposition(n_bins=2)
    >>> for y, p in [(1, 0.8), (0, 0.6), (0, 0.2), (0, 0.2)]:
    ...     m.update(y, p)
    >>> round(m.get(), 6)                      # (0.04 + 0.36 + 0.04 + 0.04) / 4
    0.12

    Bins {0.2, 0.2} (no event) and {0.8, 0.6} (one event): the mean forecasts 0.2 and
    0.7 miss the frequencies 0 and 0.5 by 0.2 each; the overall frequency is 0.25.

    >>> [round(v, 6) for v in (m.reliability, m.resolution, m.uncertainty)]
    [0.04, 0.0625, 0.1875]
    >>> [round(v, 6) for v in (m.within_bin_variance, m.within_bin_covariance)]
    [0.005, 0.05]
    >>> terms = m.reliability - m.resolution + m.uncertainty
    >>> round(terms + m.within_bin_variance - m.within_bin_covariance, 6)
    0.12

    """

    def __init__(self, n_bins: int = 10):
        _check_n_bins("MurphyDecomposition", n_bins)
        self.n_bins = n_bins
        super().__init__()

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"n_bins": 4}

    def _reset_sums(self, n: int) -> None:
        self._score = 0.0  # sum w (p - y) ** 2
        # per bin: weight, sum w y, sum w p, sum w p**2, sum w p y, count
        self._bin_w = [0.0] * n
        self._bin_y = [0.0] * n
        self._bin_p = [0.0] * n
        self._bin_pp = [0.0] * n
        self._bin_py = [0.0] * n
        self._bin_n = [0] * n

    def _lists(self):
        return self._bin_w, self._bin_y, self._bin_p, self._bin_pp, self._bin_py

    def _check(self) -> None:
        """Assert every invariant of the state."""
        super()._check()
        for w, _, p, pp, _ in zip(*self._lists()):
            assert p * p <= pp * w * (1 + 1e-9) + 1e-12, (
                "Cauchy-Schwarz fails within a bin"
            )
        if self._n == 0:
            assert self._weight == self._score == 0.0

    def update(self, y_true, y_pred, w=1.0) -> None:
        """Add one event; O(1). Validation inlined as in
        :meth:`streamcal.metrics.Brier.update`."""
        t = type(y_true)
        if (t is int or t is bool) and (y_true == 1 or y_true == 0):
            y = 1.0 if y_true else 0.0
        else:
            y = V.check_label(y_true, "MurphyDecomposition", "update", "y_true")
        if type(y_pred) is not float or not 0.0 <= y_pred <= 1.0:
            y_pred = V.check_probability(y_pred, "MurphyDecomposition", "update")
        if type(w) is not float or not 0.0 <= w < math.inf:
            w = V.check_weight(w, "MurphyDecomposition", "update")
        self._update(y, y_pred, w)

    def _update(self, y: float, p: float, w: float) -> None:
        if w > 0.0:
            b = uniform_bin(p, self.n_bins, self._edges)
            wp = w * p
            wy = w * y
            d = p - y
            self._bin_w[b] += w
            self._bin_y[b] += wy
            self._bin_p[b] += wp
            self._bin_pp[b] += wp * p
            self._bin_py[b] += wp * y
            self._bin_n[b] += 1
            self._weight += w
            self._score += w * d * d
            self._n += 1

    def _revert(self, y: float, p: float, w: float) -> None:
        if w > 0.0:
            self._n -= 1
            if self._n <= 0:
                self._reset()
                return
            b = uniform_bin(p, self.n_bins, self._edges)
            d = p - y
            self._weight -= w
            self._score -= w * d * d
            self._bin_n[b] -= 1
            if self._bin_n[b] == 0:
                for arr in self._lists():
                    arr[b] = 0.0
            else:
                wp = w * p
                self._bin_w[b] -= w
                self._bin_y[b] -= w * y
                self._bin_p[b] -= wp
                self._bin_pp[b] -= wp * p
                self._bin_py[b] -= wp * y

    def get(self) -> float:
        """The Brier score of the events held (0.0 before any); O(1)."""
        return self._score / self._weight if self._n else 0.0

    def _filled(self):
        return [
            (w, y, p, pp, py)
            for w, y, p, pp, py, k in zip(*self._lists(), self._bin_n)
            if k
        ]

    @property
    def reliability(self) -> float:
        """``sum_b W_b (pbar_b - ybar_b) ** 2 / W``; O(n_bins)."""
        if not self._n:
            return 0.0
        return sum((p - y) ** 2 / w for w, y, p, _, _ in self._filled()) / self._weight

    @property
    def resolution(self) -> float:
        """``sum_b W_b (ybar_b - ybar) ** 2 / W``; O(n_bins)."""
        if not self._n:
            return 0.0
        ybar = sum(self._bin_y) / self._weight
        return (
            sum(w * (y / w - ybar) ** 2 for w, y, _, _, _ in self._filled())
            / self._weight
        )

    @property
    def uncertainty(self) -> float:
        """``ybar (1 - ybar)``; O(n_bins)."""
        if not self._n:
            return 0.0
        ybar = sum(self._bin_y) / self._weight
        return ybar * (1.0 - ybar)

    @property
    def within_bin_variance(self) -> float:
        """``sum_t w_t (p_t - pbar_b(t)) ** 2 / W`` (WBV); O(n_bins)."""
        if not self._n:
            return 0.0
        return sum(pp - p * p / w for w, _, p, pp, _ in self._filled()) / self._weight

    @property
    def within_bin_covariance(self) -> float:
        """``2 sum_t w_t (p_t - pbar_b(t)) (y_t - ybar_b(t)) / W`` (WBC); O(n_bins)."""
        if not self._n:
            return 0.0
        return (
            2.0
            * sum(py - p * y / w for w, y, p, _, py in self._filled())
            / self._weight
        )

    def _get_state(self) -> dict:
        return {
            "n": self._n,
            "weight": self._weight,
            "score": self._score,
            "bins": [list(a) for a in self._lists()] + [list(self._bin_n)],
        }

    def _set_state(self, state: dict) -> None:
        bins = state["bins"]
        if len(bins) != 6 or any(len(a) != self.n_bins for a in bins):
            raise ValueError(
                f"The 'bins' state of MurphyDecomposition must hold 6 lists of {self.n_bins} values. "
                f"Got {V.format_value(bins)} instead."
            )
        self._n = int(state["n"])
        self._weight = float(state["weight"])
        self._score = float(state["score"])
        w, y, p, pp, py, k = bins
        self._bin_w = [float(v) for v in w]
        self._bin_y = [float(v) for v in y]
        self._bin_p = [float(v) for v in p]
        self._bin_pp = [float(v) for v in pp]
        self._bin_py = [float(v) for v in py]
        self._bin_n = [int(v) for v in k]
