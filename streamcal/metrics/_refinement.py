"""Foster and Hart's decomposition of the Brier score, kept up to date per event."""

from __future__ import annotations

import math

from streamcal import _validation as V
from streamcal.metrics.base import BinaryCalibrationMetric

__all__ = ["CalibrationRefinement"]


class CalibrationRefinement(BinaryCalibrationMetric):
    """The Brier score and its Foster-Hart parts: ``brier = calibration + refinement``.

    Group the events held by distinct forecast value ``p``; with ``W_p`` the weight of
    the group, ``ybar_p`` its weighted outcome frequency and ``W`` the total weight::

        brier       = sum_t w_t (p_t - y_t) ** 2 / W
        calibration = sum_p W_p (p - ybar_p) ** 2 / W          (K)
        refinement  = sum_p W_p ybar_p (1 - ybar_p) / W        (R)

    exactly as :func:`streamcal.metrics.calibration_refinement` computes them in batch
    (Foster and Hart, "Calibeating: beating forecasters at their own game", Theoretical
    Economics 18, 2023). ``get()`` is the Brier score; ``calibration`` is what
    recalibrating each forecast value to its outcome frequency would remove, and
    ``refinement`` what no recalibration of these forecasts can.

    Parameters
    ----------
    resolution
        If set, a real number in (0, 1]: forecasts are first pooled onto a grid of that
        width, ``p`` becoming ``min(1, k * resolution)`` with ``k = floor(p / resolution
        + 1/2)``, and everything, ``get()`` included, is the decomposition of the pooled
        forecasts (whose Brier score differs from the raw one by less than
        ``resolution``). Memory is then bounded by ``floor(1 / resolution + 1/2) + 1``
        groups, however long the stream. Without it, memory grows with the number of
        distinct forecast values held.

    Attributes
    ----------
    calibration
        ``K`` above (0.0 before any event); O(1).
    refinement
        ``R`` above (0.0 before any event); O(1).
    n_events
        Number of positive-weight events held.

    Notes
    -----
    Cost O(1) per event: the event's group gets its weight and outcome sum updated and
    its contributions ``(p W_p - Y_p) ** 2 / W_p`` to ``K`` and ``Y_p (W_p - Y_p) / W_p``
    to ``R`` replaced (``Y_p`` the weighted label sum). The three running sums are kept
    separately, so ``brier = calibration + refinement`` holds to float rounding (about
    1e-15 per event) as an identity of the state, not by construction. Revertible
    (``river.utils.Rolling`` works); a group whose events are all reverted is deleted, so
    Rolling keeps memory bounded by the window.

    Examples
    --------
    Forecast 0.8 twice (one rain) and 0.2 twice (no rain):

    >>> from streamcal.metrics import CalibrationRefinement
    >>> m = CalibrationRefinement()
    >>> for y, p in [(1, 0.8), (0, 0.8), (0, 0.2), (0, 0.2)]:
    ...     m.update(y, p)
    >>> [round(v, 6) for v in (m.get(), m.calibration, m.refinement)]
    [0.19, 0.065, 0.125]

    Pooled on a grid of width 0.1, 0.76 and 0.84 both count as 0.8:

    >>> m = CalibrationRefinement(resolution=0.1)
    >>> for y, p in [(1, 0.76), (0, 0.84), (0, 0.2), (0, 0.2)]:
    ...     m.update(y, p)
    >>> [round(v, 6) for v in (m.get(), m.calibration, m.refinement)]
    [0.19, 0.065, 0.125]

    """

    def __init__(self, resolution=None):
        V.check_param(
            "CalibrationRefinement",
            "resolution",
            resolution,
            resolution is None or (V.is_real(resolution) and 0.0 < resolution <= 1.0),
            "a real number in (0, 1] or None",
        )
        self.resolution = resolution
        super().__init__()

    _bounded_memory_params = ("resolution",)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"resolution": 0.05}
        yield {"resolution": 0.3}

    def _reset(self) -> None:
        self._groups = {}  # key -> [weight, weighted label sum, count]
        self._n = 0
        self._weight = 0.0
        self._score = 0.0  # sum w (p - y) ** 2
        self._cal = 0.0  # sum over groups of (p W - Y) ** 2 / W
        self._ref = 0.0  # sum over groups of Y (W - Y) / W

    def _value(self, key) -> float:
        """The (pooled) forecast of a group key."""
        return key if self.resolution is None else min(1.0, key * self.resolution)

    def _check(self) -> None:
        """Assert every invariant of the state (tests call it after each mutation)."""
        assert sum(g[2] for g in self._groups.values()) == self._n
        cal = ref = 0.0
        for key, (w, y, k) in self._groups.items():
            assert k >= 1 and w > 0.0 and -1e-9 * w <= y <= w * (1 + 1e-9), (
                f"bad group {key}: {(w, y, k)}"
            )
            if self.resolution is not None:
                assert isinstance(key, int) and 0 <= key <= math.floor(
                    1.0 / self.resolution + 0.5
                )
            p = self._value(key)
            cal += (p * w - y) ** 2 / w
            ref += y * (w - y) / w
        tol = 1e-9 * max(1.0, self._weight)
        assert abs(cal - self._cal) <= tol and abs(ref - self._ref) <= tol, (
            "running contributions drifted"
        )
        assert abs(math.fsum(g[0] for g in self._groups.values()) - self._weight) <= tol
        if self._n == 0:
            assert self._weight == self._score == self._cal == self._ref == 0.0

    def update(self, y_true, y_pred, w=1.0) -> None:
        """Add one event; O(1). Validation inlined as in
        :meth:`streamcal.metrics.Brier.update`."""
        t = type(y_true)
        if (t is int or t is bool) and (y_true == 1 or y_true == 0):
            y = 1.0 if y_true else 0.0
        else:
            y = V.check_label(y_true, "CalibrationRefinement", "update", "y_true")
        if type(y_pred) is not float or not 0.0 <= y_pred <= 1.0:
            y_pred = V.check_probability(y_pred, "CalibrationRefinement", "update")
        if type(w) is not float or not 0.0 <= w < math.inf:
            w = V.check_weight(w, "CalibrationRefinement", "update")
        p = y_pred
        if w > 0.0:
            if self.resolution is None:
                key = p
            else:
                key = int(p / self.resolution + 0.5)  # floor: the argument is >= 0
                p = key * self.resolution
                p = p if p <= 1.0 else 1.0  # noqa: FURB136 (a call to min costs more here)
            d = p - y
            wd = w * d
            self._score += wd * d
            self._weight += w
            self._n += 1
            g = self._groups.get(key)
            if g is None:
                wy = w * y
                self._groups[key] = [w, wy, 1]
                self._cal += wd * d  # (p w - w y) ** 2 / w
                self._ref += wy - wy * wy / w
            else:
                gw = g[0]
                gy = g[1]
                e = p * gw - gy
                cal = e * e / gw
                ref = gy * gy / gw  # Y (W - Y) / W = Y - Y ** 2 / W
                gw += w
                gy += w * y
                g[0] = gw
                g[1] = gy
                g[2] += 1
                e += wd
                self._cal += e * e / gw - cal
                self._ref += w * y + ref - gy * gy / gw

    def _update(self, y: float, p: float, w: float) -> None:
        self.update(y, p, w)  # the body lives in update, after its inlined checks

    def _revert(self, y: float, p: float, w: float) -> None:
        if w > 0.0:
            if self.resolution is None:
                key = p
            else:
                key = int(p / self.resolution + 0.5)
                p = min(1.0, key * self.resolution)
            g = self._groups.get(key)
            if g is None:
                raise self._not_held(y, p)
            self._n -= 1
            if self._n <= 0:  # back to exactly empty
                self._reset()
                return
            d = p - y
            self._score -= w * d * d
            self._weight -= w
            gw, gy, k = g
            e = p * gw - gy
            cal = e * e / gw
            ref = gy * (gw - gy) / gw
            if k == 1:
                del self._groups[key]
                self._cal -= cal
                self._ref -= ref
                return
            gw -= w
            gy -= w * y
            g[0] = gw
            g[1] = gy
            g[2] = k - 1
            e = p * gw - gy
            self._cal += e * e / gw - cal
            self._ref += gy * (gw - gy) / gw - ref

    def get(self) -> float:
        """The Brier score of the events held (0.0 before any); O(1)."""
        return self._score / self._weight if self._n else 0.0

    @property
    def calibration(self) -> float:
        """``sum_p W_p (p - ybar_p) ** 2 / W``; O(1)."""
        return self._cal / self._weight if self._n else 0.0

    @property
    def refinement(self) -> float:
        """``sum_p W_p ybar_p (1 - ybar_p) / W``; O(1)."""
        return self._ref / self._weight if self._n else 0.0

    def _get_state(self) -> dict:
        return {
            "n": self._n,
            "weight": self._weight,
            "score": self._score,
            "calibration": self._cal,
            "refinement": self._ref,
            "groups": [[key, w, y, k] for key, (w, y, k) in self._groups.items()],
        }

    def _set_state(self, state: dict) -> None:
        cast = float if self.resolution is None else int
        self._n = int(state["n"])
        self._weight = float(state["weight"])
        self._score = float(state["score"])
        self._cal = float(state["calibration"])
        self._ref = float(state["refinement"])
        self._groups = {
            cast(key): [float(w), float(y), int(k)] for key, w, y, k in state["groups"]
        }
