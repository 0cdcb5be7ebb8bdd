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

from streamcal import _merge
from streamcal import _validation as V
from streamcal.core.bins import edge_bins, linear_quantile_edges, uniform_edges
from streamcal.core.bins import uniform_bin  # (also its old home: the name is kept)
from streamcal.core.decay import MIN_HALF_LIFE, weight_scale
from streamcal.metrics import _kernels
from streamcal.metrics._functional import product_over
from streamcal.metrics.base import BinaryCalibrationMetric

__all__ = ["ECE", "MurphyDecomposition", "ReliabilityBin", "Sharpness"]

_STRATEGIES = ("uniform", "quantile")

# The per-event state of every metric here lives in the compiled store
# ``_kernels.Binned`` (sums per bin, the distinct forecasts of equal-mass bins, the
# window, the half-life clock). With ``half_life``, stored weights grow as 2 ** (t /
# half_life) (t counts the positive-weight events) and the state is rescaled by an exact
# power of two once a new event would weigh 2 ** 64 or more; at each rescaling, what
# weighs less than 2 ** -64 of the total weight (below the resolution of any float sum
# over the state) is dropped, so that memory stays bounded (the clock's home:
# streamcal.core.decay, METRIC_RENORM_EXPONENT).
_KIND = {"Sharpness": 0, "ECE": 1, "MurphyDecomposition": 2}


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


def _check_n_bins(owner: str, n_bins) -> None:
    V.check_param(
        owner, "n_bins", n_bins, V.is_integer(n_bins) and n_bins >= 1, "an int >= 1"
    )


def _observed_residues(state: dict, uniform: bool, n_bins: int) -> dict:
    """The residue bounds of a windowed ECE ``state`` written without them: per bin
    (per forecast value) and for the total, how far the sums are from those of the
    window's events ``(y, p, w)``, correctly rounded (``_kernels.Binned``)."""
    groups: dict = {}
    for y, p, w in state["window"]:
        groups.setdefault(uniform_bin(p, n_bins) if uniform else p, []).append((w, w * y, w * p))

    def off(key, sums):
        held = groups.get(key, [])
        return math.fsum(abs(s - math.fsum(e[i] for e in held)) for i, s in enumerate(sums))

    total = abs(state["weight"] - math.fsum(e[0] for g in groups.values() for e in g))
    if uniform:
        w, y, p, _ = state["bins"]
        return {"weight": total, "bins": [off(b, (w[b], y[b], p[b])) for b in range(n_bins)]}
    return {"weight": total, "values": sorted(
        [v, off(v, (w, s))] for v, w, s, _ in state["values"] if off(v, (w, s)) > 0)}


class ECE(_kernels.StoreShell, BinaryCalibrationMetric):
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

        - ``"uniform"`` (default): equal widths, ``e_i = i / n_bins``, computed as
          that division. ``np.linspace(0, 1, n_bins + 1)`` (netcal's edges) rounds
          some edges differently (for ``n_bins = 10``, ``linspace`` gives
          ``0.30000000000000004`` for ``3 / 10 = 0.3``), so a forecast exactly on such
          an edge can fall in the neighbouring bin there. The state is four sums per bin.
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
        strategy to the distinct forecasts of roughly the last 130 half-lives. At least
        ``1e-18``. Not revertible. At most one of ``window_size`` and ``half_life`` may be set.

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

    # the catalogue entry (streamcal.metrics.catalogue)
    short_name = "ece"
    description = (
        "Expected calibration error: weighted mean gap between the mean forecast and the "
        "outcome rate per bin of the forecast, in [0, 1]."
    )

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
        V.check_optional_int_param("ECE", "window_size", window_size, 1)
        V.check_param(
            "ECE",
            "half_life",
            half_life,
            half_life is None or (V.is_real(half_life) and MIN_HALF_LIFE <= half_life < math.inf),
            f"a finite real number >= {MIN_HALF_LIFE:g} or None",
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
        self._uniform = self.strategy == "uniform"
        self._edges = uniform_edges(int(self.n_bins))
        self._store = _kernels.Binned(
            "ECE",
            _KIND["ECE"],
            int(self.n_bins),
            self._uniform,
            0 if self.window_size is None else int(self.window_size),
            0.0 if self.half_life is None else float(self.half_life),
        )

    update = _kernels.binned_update

    @property
    def _values(self) -> dict:
        """Equal-mass bins: forecast -> [weight, weighted label sum, count] (read only)."""
        return self._store.values

    def _check(self) -> None:
        """Assert every invariant of the state (tests call it after each mutation)."""
        store = self._store
        if self._uniform:
            bw, by, bp, _, _, bn = store.bin_lists()
            assert len(bw) == len(bn) == self.n_bins
            assert sum(bn) == store.n, "bin counts do not add up to n"
            for w, y, p, k in zip(bw, by, bp, bn):
                assert k >= 0
                if k == 0:
                    assert w == y == p == 0.0, "an empty bin keeps a residue"
                else:  # with forgetting too: the decayed sums scale alike
                    assert (
                        w > 0.0
                        and -1e-9 * w <= y <= w * (1 + 1e-12)
                        and -1e-9 * w <= p <= w * (1 + 1e-12)
                    ), f"a bin's sums (weight, labels, forecasts) {(w, y, p)} out of order"
            total = math.fsum(bw)
        else:
            values = store.values
            assert sum(v[2] for v in values.values()) == store.n, (
                "value counts do not add up to n"
            )
            for p, (w, y, k) in values.items():
                assert 0.0 <= p <= 1.0 and k >= 1 and w > 0.0, (
                    f"bad entry {p}: {(w, y, k)}"
                )
                assert -1e-9 * w <= y <= w * (1 + 1e-9)
            total = math.fsum(v[0] for v in values.values())
        assert abs(total - store.weight) <= 1e-9 * max(1.0, total), (
            f"total weight {store.weight} != {total}"
        )
        if store.n == 0:
            assert store.weight == 0.0
        if store.window is not None:
            assert len(store.window) == store.n <= self.window_size
            self._check_window_sums(store)

    def _check_window_sums(self, store) -> None:
        """Each bin (forecast value) and the total within its residue bound of the
        window's own sums (correctly rounded), plus their rounding."""
        state = store.get_state()
        bounds, off = state["residues"], _observed_residues(state, self._uniform, self.n_bins)
        slack = 2.0**-48 * state["weight"]  # a bin's three sums are at most 3 W
        assert off["weight"] <= bounds["weight"] + slack, f"total weight off by {off['weight']}"
        if self._uniform:
            pairs = zip(range(self.n_bins), off["bins"], bounds["bins"])
        else:
            held = dict((v, r) for v, r in bounds["values"])
            pairs = ((v, r, held.get(v, 0.0)) for v, r in off["values"])
        for key, r, bound in pairs:
            assert r <= bound + slack, f"bin {key}: sums off the window's by {r} (bound {bound})"

    @property
    def _merge_refusal(self) -> str | None:
        return _merge.order_refusal(self, "window_size", "half_life")

    def _merge(self, other):
        """The ECE of both streams (no window, no forgetting): ``"uniform"``, the four
        sums of each bin added, O(n_bins); ``"quantile"``, the weight, label sum and
        count of each distinct forecast added, O(m_a + m_b), the edges then following
        from the merged values as for one metric. Sums equal one metric's to rounding;
        with ``"quantile"`` and weights whose sums are exact (unit, integer) the edges,
        hence the bins, are the same."""
        a, b = self._get_state(), other._get_state()
        state = dict(a, n=a["n"] + b["n"], weight=a["weight"] + b["weight"])
        if self._uniform:
            state["bins"] = [_merge.add_lists(x, y) for x, y in zip(a["bins"], b["bins"])]
        else:
            state["values"] = _merge.merge_keyed(a["values"], b["values"])
        return self._from_state(state)

    def _validate_state(self, state: dict, check) -> None:
        # the compiled store bins each event of the window unchecked when it leaves
        # (a score out of [0, 1] would index outside the bins)
        if self.window_size is not None:
            check.binary_events(check.entry(state, "window"), "state['window']", self.window_size, label_first=True)
            self._validate_residues(check.entry(state, "residues"), check, state.get("values"))

    @classmethod
    def _upgrade_snapshot(cls, params: dict, state: dict, fmt: int):
        """A windowed ECE written before the window kept residue bounds: a bin's (a
        value's, the total's) sums may hold a residue of the events that left; its
        bound is what they are off the sums of the window's events (correctly
        rounded). A malformed entry is left to the checks."""
        if params.get("window_size") is not None and isinstance(state, dict) and "residues" not in state:
            try:
                residues = _observed_residues(state, params.get("strategy", "uniform") == "uniform",
                                              params.get("n_bins", 10))
            except (KeyError, IndexError, TypeError, ValueError):
                residues = None
            state = {**state, "residues": residues}
        return params, state

    def _validate_residues(self, residues, check, values=None) -> None:
        """The window's residue bounds (``_kernels.Binned``): finite reals >= 0, one
        per bin, or ``[value, bound]`` pairs for distinct forecast values."""
        where = "state['residues']"
        uniform = self.strategy == "uniform"
        if not isinstance(residues, dict):
            check.fail(where, "a dict", residues)
        check.keys(residues, where, ["weight", "bins" if uniform else "values"])
        check.real(residues["weight"], where + "['weight']", 0.0)
        key = "bins" if uniform else "values"
        held = None
        if isinstance(values, list):  # the values' own checks come later
            held = {e[0] for e in values if isinstance(e, (list, tuple)) and e
                    and isinstance(e[0], (int, float))}
        entries = check.list(residues[key], f"{where}[{key!r}]",
                             n=self.n_bins if uniform else None)
        for i, entry in enumerate(entries):
            at = f"{where}[{key!r}][{i}]"
            if uniform:
                check.real(entry, at, 0.0)
            else:
                v, r = check.list(entry, at, n=2)
                check.real(v, at + "[0]", 0.0, 1.0)
                check.real(r, at + "[1]", 0.0)
                check.require(i == 0 or v > entries[i - 1][0], at + "[0]", "above the value before it", v)
                check.require(held is None or v in held, at + "[0]", "a forecast value held", v)

    def _set_state(self, state: dict) -> None:
        if self._uniform:
            w, y, p, k = state["bins"]
            if not len(w) == len(y) == len(p) == len(k) == self.n_bins:
                raise ValueError(
                    f"The 'bins' state of ECE must hold {self.n_bins} bins. Got {len(w)} instead."
                )
        self._store.set_state(state)

    # ------------------------------------------------------------------ events

    def _revert(self, y: float, p: float, w: float) -> None:
        if not self._store.revert(y, p, w):
            raise self._not_held(y, p)

    # ------------------------------------------------------------------ values

    def _unit(self) -> float:
        """Factor turning stored weights into weights with the newest event at its own."""
        store = self._store
        if self.half_life is None or store.t == 0:
            return 1.0
        return weight_scale(store.t, store.t_ref, self.half_life, store.phase)

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
        idx = edge_bins(x, edges)
        bw = np.bincount(idx, weights=w, minlength=n_bins)
        by = np.bincount(idx, weights=ys, minlength=n_bins)
        bp = np.bincount(idx, weights=w * x, minlength=n_bins)
        return edges, bw, by, bp

    def get(self) -> float:
        """The ECE of the events held (0.0 before any); O(n_bins) or O(m log m)."""
        if self._uniform:
            return self._store.get()
        if self._store.n == 0:
            return 0.0
        _, bw, by, bp = self._quantile_bins()
        return float(np.sum(np.abs(by - bp)) / np.sum(bw))

    @property
    def bins(self) -> tuple:
        """The non-empty bins as :class:`ReliabilityBin` tuples, in increasing order."""
        if self._store.n == 0:
            return ()
        if self._uniform:
            bw, by, bp, _, _, counts = self._store.bin_lists()
            edges = self._edges
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


class _EqualWidthSums(_kernels.StoreShell, BinaryCalibrationMetric):
    """Base of :class:`Sharpness` and :class:`MurphyDecomposition`: weighted sums per
    equal-width bin of the forecast (bin weights and label sums first, then the
    subclass's own), each bin with the number of events behind it, so that a bin whose
    events are all reverted is exactly zero. The sums live in the compiled store
    ``_kernels.Binned``, which also runs ``update`` (checks in compiled code, their
    messages those of :mod:`streamcal._validation`) and ``update_many``."""

    update = _kernels.binned_update

    def __init__(self, n_bins: int = 10):
        _check_n_bins(self._kind_name, n_bins)
        self.n_bins = n_bins
        super().__init__()

    def _reset(self) -> None:
        name = type(self).__name__
        self._store = _kernels.Binned(
            name, _KIND[self._kind_name], int(self.n_bins)
        )

    def _lists(self) -> list:
        """The bin sums the metric keeps (weights and label sums first)."""
        return self._store.bin_lists()[: self._n_sums]

    def _check(self) -> None:
        """Assert every invariant of the bins (tests call it after each mutation)."""
        counts = self._store.bin_lists()[-1]
        assert sum(counts) == self._n
        for k, w, y, *rest in zip(counts, *self._lists()):
            assert k >= 0
            if k == 0:
                assert w == y == 0.0 and not any(rest), "an empty bin keeps a residue"
            else:
                assert w > 0.0 and -1e-9 * w <= y <= w * (1 + 1e-12)
        assert abs(math.fsum(self._lists()[0]) - self._weight) <= 1e-9 * max(
            1.0, self._weight
        )

    def _revert(self, y: float, p: float, w: float) -> None:
        if not self._store.revert(y, p, w):
            raise self._not_held(y, p)

    _merge_refusal = None

    def _merge(self, other):
        """The bins of both streams: every sum and count of each bin added (and, for
        :class:`MurphyDecomposition`, the Brier score sum). O(n_bins). Sums equal one
        metric's to rounding."""
        a, b = self._get_state(), other._get_state()
        state = dict(a, n=a["n"] + b["n"], weight=a["weight"] + b["weight"])
        state["bins"] = [_merge.add_lists(x, y) for x, y in zip(a["bins"], b["bins"], strict=True)]
        if "score" in a:
            state["score"] = a["score"] + b["score"]
        return self._from_state(state)

    def _set_state(self, state: dict) -> None:
        bins = state["bins"]
        if len(bins) != self._n_sums + 1 or any(len(a) != self.n_bins for a in bins):
            raise ValueError(
                f"The 'bins' state of {type(self).__name__} must hold {self._n_sums + 1} "
                f"lists of {self.n_bins} values. Got {V.format_value(bins)} instead."
            )
        self._store.set_state(state)


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

    # the catalogue entry (streamcal.metrics.catalogue)
    short_name = "sharpness"
    bigger_is_better = True
    description = (
        "Sharpness: weighted mean of the squared outcome rate per equal-width bin of the "
        "forecast, in [0, 1] (larger is sharper)."
    )

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"n_bins": 3}

    _kind_name = "Sharpness"
    _n_sums = 2

    def get(self) -> float:
        """The sharpness of the events held (0.0 before any); O(n_bins)."""
        return self._store.get()


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

    # the catalogue entry (streamcal.metrics.catalogue)
    short_name = "murphy"
    description = (
        "Murphy decomposition of the Brier score (in [0, 1]) over equal-width bins: Brier "
        "= reliability - resolution + uncertainty + within-bin variance - within-bin "
        "covariance."
    )
    component_directions = (
        ("reliability", False),
        ("resolution", True),
        ("uncertainty", None),
        ("within_bin_variance", None),
        ("within_bin_covariance", None),
    )

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"n_bins": 4}

    _kind_name = "MurphyDecomposition"
    _n_sums = 5

    def _check(self) -> None:
        """Assert every invariant of the state."""
        super()._check()
        for w, _, p, pp, _ in zip(*self._lists()):
            assert w == 0.0 or p * (p / w) <= pp * (1 + 1e-9) + 1e-12 * w, (
                "Cauchy-Schwarz fails within a bin"
            )
        assert -1e-9 * self._weight <= self._store.score <= self._weight * (1 + 1e-9), (
            "the Brier sum is not in [0, the weight]"
        )
        if self._n == 0:
            assert self._weight == self._store.score == 0.0

    def get(self) -> float:
        """The Brier score of the events held (0.0 before any); O(1)."""
        store = self._store
        return store.score / store.weight if store.n else 0.0

    def _filled(self):
        return [
            (w, y, p, pp, py)
            for w, y, p, pp, py, k in zip(*self._store.bin_lists())
            if k
        ]

    @property
    def reliability(self) -> float:
        """``sum_b W_b (pbar_b - ybar_b) ** 2 / W``; O(n_bins)."""
        if not self._n:
            return 0.0
        return sum(product_over(p - y, p - y, w) for w, y, p, _, _ in self._filled()) / self._weight

    @property
    def resolution(self) -> float:
        """``sum_b W_b (ybar_b - ybar) ** 2 / W``; O(n_bins)."""
        if not self._n:
            return 0.0
        ybar = sum(self._lists()[1]) / self._weight
        return (
            sum(w * (y / w - ybar) ** 2 for w, y, _, _, _ in self._filled())
            / self._weight
        )

    @property
    def uncertainty(self) -> float:
        """``ybar (1 - ybar)``; O(n_bins)."""
        if not self._n:
            return 0.0
        ybar = sum(self._lists()[1]) / self._weight
        return ybar * (1.0 - ybar)

    @property
    def within_bin_variance(self) -> float:
        """``sum_t w_t (p_t - pbar_b(t)) ** 2 / W`` (WBV); O(n_bins)."""
        if not self._n:
            return 0.0
        return sum(pp - product_over(p, p, w) for w, _, p, pp, _ in self._filled()) / self._weight

    @property
    def within_bin_covariance(self) -> float:
        """``2 sum_t w_t (p_t - pbar_b(t)) (y_t - ybar_b(t)) / W`` (WBC); O(n_bins)."""
        if not self._n:
            return 0.0
        return (
            2.0
            * sum(py - product_over(p, y, w) for w, y, p, _, py in self._filled())
            / self._weight
        )
