"""Cores of calibeating: per-bin outcome statistics, Foster's epsilon-calibrated game,
exponential weights, and a counter-based uniform generator. Plain Python, no river.

Calibeating (Foster and Hart, "Calibeating: beating forecasters at their own game",
Theoretical Economics 18, 2023; Gupta, thesis proposal 2022, section 3.1) keeps, for the
bins defined by an expert's forecast, statistics of the outcomes seen in each bin:

- :class:`BinOutcomes`: the weighted outcome sum and weight of every bin (the tracking
  forecast is the running mean of the outcomes in the expert's current bin);
- :class:`FosterGame`: Foster's (1999) epsilon-calibrated randomised forecaster on a
  grid of ``n`` cells, run once (no expert) or once per expert bin (hedging);
- :class:`ExponentialWeights`: the exponentially weighted average of several experts'
  forecasts under the Brier loss (the meta-expert of multi-calibeating);
- :func:`uniform`: the uniform draw of event ``t`` under a seed, a pure function of
  ``(seed, t)`` (SplitMix64), so that a randomised forecaster's prediction is a
  function of its state.

Bins and cells are the ``n`` equal-width intervals of [0, 1]: the index of ``x`` is
``floor(n * x)`` computed in floating point, so index ``i`` holds ``[i/n, (i+1)/n)`` and
1.0 falls in the last one (:func:`bin_index`).
"""

from __future__ import annotations

import math

__all__ = [
    "BinOutcomes",
    "ExponentialWeights",
    "FosterGame",
    "bin_index",
    "uniform",
]

_MASK64 = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15


def uniform(seed: int, t: int) -> float:
    """The ``t``-th output (from 0) of SplitMix64 seeded with ``seed``, as a float in [0, 1).

    SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
    OOPSLA 2014) is counter-based: its ``t``-th output is a bijective mix of
    ``seed + (t + 1) * 0x9E3779B97F4A7C15`` (mod 2**64), so no generator state needs
    to be stored or advanced. The top 53 bits give the float. Cost O(1).

    Examples
    --------
    >>> uniform(0, 0)           # the first output of SplitMix64 seeded with 0
    0.8833108082136426
    >>> uniform(0, 0) == uniform(0, 0) != uniform(0, 1)
    True

    """
    z = (seed + (t + 1) * _GAMMA) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    z ^= z >> 31
    return (z >> 11) * 1.1102230246251565e-16  # 2 ** -53


def bin_index(x: float, n: int) -> int:
    """Index of ``x`` in [0, 1] among ``n`` equal-width bins: ``min(floor(n * x), n - 1)``.

    Examples
    --------
    >>> bin_index(0.0, 10), bin_index(0.35, 10), bin_index(0.999, 10), bin_index(1.0, 10)
    (0, 3, 9, 9)

    """
    i = int(x * n)
    return n - 1 if i >= n else i


class BinOutcomes:
    """Weighted outcome statistics of bins identified by integer keys (sparse).

    For each key seen with a positive weight the store holds ``(weight, ysum)``: the
    total weight of the events of the bin and their weighted outcome sum. Zero weights
    are not stored. Memory is O(bins seen); every operation is O(1).

    Invariants (:meth:`_check`): for every stored bin, ``weight > 0`` is finite and
    ``0 <= ysum <= weight`` (outcomes are in [0, 1]), up to rounding.

    Examples
    --------
    >>> st = BinOutcomes()
    >>> st.add(3, 1.0, 1.0)
    >>> st.add(3, 0.0, 3.0)
    >>> st.get(3), st.get(4)
    ((4.0, 1.0), (0.0, 0.0))
    >>> st.mean(3, prior=0.5, prior_weight=0.0), st.mean(3, prior=0.5, prior_weight=1.0)
    (0.25, 0.3)
    >>> st.mean(4, prior=0.7, prior_weight=0.0)      # an empty bin: the prior point
    0.7

    """

    __slots__ = ("_bins",)

    def __init__(self):
        self._bins: dict[int, list[float]] = {}

    def add(self, key: int, y: float, w: float) -> None:
        """Add an outcome ``y`` in [0, 1] of weight ``w >= 0`` to bin ``key``; O(1)."""
        if w > 0.0:
            cell = self._bins.get(key)
            if cell is None:
                self._bins[key] = [w, w * y]
            else:
                cell[0] += w
                cell[1] += w * y

    def add_sums(self, key: int, weight: float, ysum: float) -> None:
        """Add a batch of events to bin ``key``: their total weight ``weight > 0`` and
        weighted outcome sum ``ysum``; O(1)."""
        cell = self._bins.get(key)
        if cell is None:
            self._bins[key] = [weight, ysum]
        else:
            cell[0] += weight
            cell[1] += ysum

    def get(self, key: int) -> tuple[float, float]:
        """``(weight, ysum)`` of bin ``key`` (zeros for a bin never seen); O(1)."""
        cell = self._bins.get(key)
        return (0.0, 0.0) if cell is None else (cell[0], cell[1])

    def mean(self, key: int, prior: float, prior_weight: float) -> float:
        """``(ysum + prior_weight * prior) / (weight + prior_weight)`` for bin ``key``,
        or ``prior`` when that denominator is 0; O(1)."""
        cell = self._bins.get(key)
        if cell is None:
            return prior
        return (cell[1] + prior_weight * prior) / (cell[0] + prior_weight)

    def __len__(self) -> int:
        return len(self._bins)

    def items(self):
        """``(key, weight, ysum)`` of every stored bin, keys increasing."""
        return [(k, c[0], c[1]) for k, c in sorted(self._bins.items())]

    def to_lists(self) -> list:
        """JSON-safe ``[[key, weight, ysum], ...]`` in the order the bins were first
        seen (so that a restored store is identical, dict order included)."""
        return [[k, c[0], c[1]] for k, c in self._bins.items()]

    @classmethod
    def from_lists(cls, rows) -> BinOutcomes:
        """Inverse of :meth:`to_lists`."""
        st = cls()
        st._bins = {int(k): [float(w), float(s)] for k, w, s in rows}
        return st

    def _check(self) -> None:
        for k, (w, s) in self._bins.items():
            assert isinstance(k, int), f"bin key {k!r} is not an int"
            assert 0.0 < w < math.inf, f"bin {k}: weight {w}"
            tol = 1e-9 * w
            assert -tol <= s <= w + tol, f"bin {k}: ysum {s} outside [0, weight={w}]"


class FosterGame:
    """Foster's (1999) epsilon-calibrated forecaster on ``n`` cells of width ``1/n``.

    Cell ``i`` is the interval ``[i/n, (i+1)/n]`` and the forecaster announces its
    midpoint ``m_i = (i + 1/2) / n``; ``epsilon = 1/n``. After the events so far, let
    ``N_i`` be the total weight of the events on which cell ``i`` was played and
    ``S_i`` their weighted outcome sum, so that ``ybar_i = S_i / N_i`` is the frequency
    of the outcome when ``m_i`` was forecast. Cell ``i`` is *calibrated* when
    ``N_i = 0`` or ``ybar_i`` lies in the cell, ``|ybar_i - m_i| <= epsilon / 2``.
    Its violations, scaled by ``n`` so that they are exact with integer weights, are

    - ``up_i = n * S_i - (i + 1) * N_i`` (outcomes too frequent: positive when
      ``ybar_i > (i+1)/n``),
    - ``down_i = i * N_i - n * S_i`` (too rare: positive when ``ybar_i < i/n``);

    ``(up_i)+ / (n * W)`` and ``(down_i)+ / (n * W)`` (``W`` the total weight) are the
    frequency-weighted distances ``(N_i / W) * dist(ybar_i, cell i)``; their sum over
    the cells is the *epsilon-calibration error* (:meth:`calibration_error`).

    The strategy for the next event (:meth:`strategy`), given a preferred point
    ``prefer`` in [0, 1]:

    1. if some cell is calibrated, play the calibrated cell whose midpoint is nearest
       to ``prefer``: the smallest ``|i + 1/2 - n * prefer|``, with ``n * prefer``
       rounded to floating point as in :func:`bin_index`, ties to the higher index (so
       the cell holding ``prefer`` by the edge rule of :func:`bin_index` comes first);
    2. otherwise cell 0 has ``up > 0`` and cell ``n - 1`` has ``down > 0`` (every
       uncalibrated cell has exactly one positive violation, as ``up + down = -N < 0``),
       so some adjacent pair has ``up_i > 0`` and ``down_{i+1} > 0``; take the pair
       whose common edge is nearest, the smallest ``|i + 1 - n * prefer|`` (ties to
       the lower), and
       play ``m_i`` with probability ``down_{i+1} / (up_i + down_{i+1})``, ``m_{i+1}``
       with probability ``up_i / (up_i + down_{i+1})``: each point with the other
       point's violation.

    Why it is calibrated (Blackwell approachability; Foster 1999): with the potential
    ``Phi = sum_i (up_i)+ ** 2 + (down_i)+ ** 2``, an event ``(y, w)`` played on cell
    ``j`` changes ``up_j`` by ``w * (n y - (j+1))`` and ``down_j`` by
    ``w * (j - n y)``. In case 1 the played cell has no positive violation, and in
    case 2 the expected first-order change is ``w * (n y - (i+1)) * (p_i up_i -
    p_{i+1} down_{i+1}) = 0`` for *either* outcome, so whatever nature does, even
    knowing the mixed strategy, ``E[Phi] <= sum_t w_t**2 * max_y((n y - j - 1)**2 +
    (j - n y)**2) <= 2 n**2 sum_t w_t**2``. By Cauchy-Schwarz (at most one violation
    per cell is positive) the epsilon-calibration error is at most
    ``sqrt(n * Phi) / (n * W)``, so in expectation at most
    ``sqrt(2 n sum_t w_t**2) / W`` (``sqrt(2 n / T)`` with ``T`` unit weights). Foster
    and Hart's calibration score of the midpoints, ``K = sum_i (N_i/W) (m_i -
    ybar_i)**2``, is then at most ``epsilon**2 / 4 + (1 + epsilon) * error``.

    Cost: :meth:`strategy` O(n), :meth:`play` O(1).

    Examples
    --------
    >>> g = FosterGame(10)
    >>> g.strategy(prefer=0.3)       # nothing played: every cell is calibrated
    (3, 3, 1.0)
    >>> g.play(3, 1.0)               # cell 3 saw rain: ybar_3 = 1 > 0.4
    >>> g.strategy(prefer=0.3)       # the nearest calibrated cell
    (2, 2, 1.0)
    >>> for i in range(10):          # every cell played once, rain on cells 0-5 only
    ...     g.play(i, 1.0 if i < 6 else 0.0)
    >>> g.calibrated(3), g.calibrated(5), g.calibrated(6)
    (False, False, False)
    >>> g.violations(5), g.violations(6)
    ((4.0, -5.0), (-7.0, 6.0))
    >>> g.strategy(prefer=0.3)       # hedge: 0.55 with probability 6 / (4 + 6)
    (5, 6, 0.6)

    """

    __slots__ = ("n", "total_weight", "total_ysum", "weight", "ysum")

    def __init__(self, n: int):
        self.n = n
        self.weight = [0.0] * n
        self.ysum = [0.0] * n
        self.total_weight = 0.0
        self.total_ysum = 0.0

    def violations(self, i: int) -> tuple[float, float]:
        """``(up_i, down_i)``, both scaled by ``n`` (see the class docstring); O(1)."""
        n, N, S = self.n, self.weight[i], self.ysum[i]
        return n * S - (i + 1) * N, i * N - n * S

    def calibrated(self, i: int) -> bool:
        """Whether cell ``i`` is calibrated (never played, or ``ybar_i`` in the cell)."""
        up, down = self.violations(i)
        return up <= 0.0 and down <= 0.0

    def strategy(self, prefer: float) -> tuple[int, int, float]:
        """The mixed strategy for the next event: ``(low, high, p_low)``; O(n).

        Cell ``low`` is played with probability ``p_low`` and cell ``high`` (``low``
        or ``low + 1``) otherwise; a deterministic play has ``low == high`` and
        ``p_low == 1.0``.
        """
        n, W, S = self.n, self.weight, self.ysum
        nx = n * prefer  # distances in units of the cell width
        best = -1
        best_d = math.inf
        pair = -1
        pair_d = math.inf
        prev_up = 0.0
        for i in range(n):
            N = W[i]
            nS = n * S[i]
            up = nS - (i + 1) * N
            down = i * N - nS
            if up <= 0.0 and down <= 0.0:
                d = abs(i + 0.5 - nx)
                if d <= best_d:  # ties to the higher cell: the one holding prefer
                    best, best_d = i, d
            elif best < 0 and down > 0.0 and prev_up > 0.0:
                d = abs(nx - i)
                if d < pair_d:
                    pair, pair_d = i - 1, d
            prev_up = up
        if best >= 0:
            return best, best, 1.0
        i = pair
        up_i = n * S[i] - (i + 1) * W[i]
        down_j = (i + 1) * W[i + 1] - n * S[i + 1]
        return i, i + 1, down_j / (up_i + down_j)

    def play(self, i: int, y: float, w: float = 1.0) -> None:
        """Record an event (outcome ``y`` in [0, 1], weight ``w``) played on cell ``i``; O(1)."""
        if w > 0.0:
            self.weight[i] += w
            wy = w * y
            self.ysum[i] += wy
            self.total_weight += w
            self.total_ysum += wy

    def midpoint(self, i: int) -> float:
        """``(i + 1/2) / n``."""
        return (i + 0.5) / self.n

    def calibration_error(self) -> float:
        """Epsilon-calibration error: ``sum_i (N_i / W) * dist(ybar_i, cell i)`` (0 before
        any weight); O(n)."""
        if self.total_weight <= 0.0:
            return 0.0
        total = 0.0
        for i in range(self.n):
            up, down = self.violations(i)
            total += max(up, down, 0.0)
        return total / (self.n * self.total_weight)

    def to_lists(self) -> list:
        """JSON-safe ``[weights, ysums, total_weight, total_ysum]``."""
        return [list(self.weight), list(self.ysum), self.total_weight, self.total_ysum]

    @classmethod
    def from_lists(cls, data) -> FosterGame:
        """Inverse of :meth:`to_lists`."""
        weight, ysum, tw, ts = data
        g = cls(len(weight))
        g.weight = [float(v) for v in weight]
        g.ysum = [float(v) for v in ysum]
        g.total_weight = float(tw)
        g.total_ysum = float(ts)
        return g

    def _check(self) -> None:
        n = self.n
        assert n >= 1 and len(self.weight) == len(self.ysum) == n
        for i in range(n):
            N, S = self.weight[i], self.ysum[i]
            assert 0.0 <= N < math.inf, f"cell {i}: weight {N}"
            tol = 1e-9 * N
            assert -tol <= S <= N + tol, f"cell {i}: ysum {S} outside [0, {N}]"
        tw, ts = math.fsum(self.weight), math.fsum(self.ysum)
        assert abs(self.total_weight - tw) <= 1e-9 * max(1.0, tw), (
            self.total_weight,
            tw,
        )
        assert abs(self.total_ysum - ts) <= 1e-9 * max(1.0, ts), (self.total_ysum, ts)
        low, high, p = self.strategy(0.5)
        assert 0 <= low <= high <= min(low + 1, n - 1) and 0.0 <= p <= 1.0
        if low == high:
            assert p == 1.0 and self.calibrated(low)
        else:
            assert not any(self.calibrated(i) for i in range(n)), (
                "hedged with a calibrated cell"
            )
            assert self.violations(low)[0] > 0.0 and self.violations(high)[1] > 0.0


class ExponentialWeights:
    """Exponentially weighted average of ``n`` experts' forecasts under the Brier loss.

    Expert ``k`` has cumulative loss ``L_k = sum_t w_t (x_{k,t} - y_t) ** 2`` and weight
    ``exp(-eta * L_k)`` (computed as ``exp(-eta * (L_k - min L))`` so it never
    underflows to all zeros); the aggregate forecast is the weighted mean of the
    experts' forecasts. The squared loss on [0, 1] is ``eta``-exp-concave for
    ``eta <= 1/2``, so with ``eta = 1/2`` and weights ``w_t <= 1`` the aggregate's
    cumulative Brier loss exceeds the best expert's by at most ``ln(n) / eta = 2 ln n``
    (Kivinen and Warmuth 1999; Cesa-Bianchi and Lugosi 2006, section 3.3). Cost O(n)
    per call.

    Examples
    --------
    >>> ew = ExponentialWeights(2, learning_rate=0.5)
    >>> ew.aggregate((0.2, 0.8))
    0.5
    >>> for _ in range(20):
    ...     ew.update((0.2, 0.8), 1.0)
    >>> [round(v, 4) for v in ew.weights()]       # the second expert is better
    [0.0025, 0.9975]

    """

    __slots__ = ("learning_rate", "losses", "n")

    def __init__(self, n: int, learning_rate: float):
        self.n = n
        self.learning_rate = learning_rate
        self.losses = [0.0] * n

    def weights(self) -> list[float]:
        """Normalised weights of the experts (summing to 1); O(n)."""
        eta, L = self.learning_rate, self.losses
        lo = min(L)
        e = [math.exp(-eta * (v - lo)) for v in L]
        tot = math.fsum(e)
        return [v / tot for v in e]

    def aggregate(self, forecasts) -> float:
        """The weighted mean of ``forecasts`` (one per expert), clipped to [0, 1]; O(n)."""
        eta, L = self.learning_rate, self.losses
        lo = min(L)
        num = 0.0
        den = 0.0
        for v, x in zip(L, forecasts):
            e = math.exp(-eta * (v - lo))
            num += e * x
            den += e
        a = num / den
        return min(1.0, max(0.0, a))

    def update(self, forecasts, y: float, w: float = 1.0) -> None:
        """Add each expert's weighted Brier loss on outcome ``y``; O(n)."""
        if w > 0.0:
            L = self.losses
            for k, x in enumerate(forecasts):
                d = x - y
                L[k] += w * d * d

    def _check(self) -> None:
        assert len(self.losses) == self.n >= 1
        for v in self.losses:
            assert 0.0 <= v < math.inf, f"loss {v}"
        ws = self.weights()
        assert abs(math.fsum(ws) - 1.0) <= 1e-12 and max(ws) > 0.0
