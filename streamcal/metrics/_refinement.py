"""Foster and Hart's decomposition of the Brier score, kept up to date per event."""

from __future__ import annotations

import math

from streamcal import _merge
from streamcal import _validation as V
from streamcal.metrics import _kernels, _kernels_refinement
from streamcal.metrics._functional import product_over
from streamcal.metrics.base import BinaryCalibrationMetric

__all__ = ["CalibrationRefinement"]


#: The smallest ``resolution``: the compiled store keys a forecast by its grid index
#: ``int(p / resolution + 0.5)``, a C integer, as is the number of cells; below about
#: 1.1e-19 they overflowed it (``resolution=1e-300`` reported a Brier score of 1.0 for
#: ``p = 0.3, y = 1``, and from_dict of a snapshot with ``resolution=5e-324`` raised
#: OverflowError). At 1e-18 every pooled forecast is within 1e-18 of the raw one.
MIN_RESOLUTION = 1e-18


class CalibrationRefinement(_kernels.StoreShell, BinaryCalibrationMetric):
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
        If set, a real number in [1e-18, 1]: forecasts are first pooled onto a grid of that
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

    # the catalogue entry (streamcal.metrics.catalogue)
    short_name = "calibration_refinement"
    description = (
        "Foster-Hart decomposition of the Brier score (in [0, 1]) over the distinct "
        "forecast values: Brier = calibration + refinement."
    )
    component_directions = (
        ("calibration", False),
        ("refinement", False),
    )

    def __init__(self, resolution=None):
        V.check_param(
            "CalibrationRefinement",
            "resolution",
            resolution,
            resolution is None or (V.is_real(resolution) and MIN_RESOLUTION <= resolution <= 1.0),
            f"a real number in [{MIN_RESOLUTION:g}, 1] or None",
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
        # groups and running sums live in the compiled store, which also runs update
        # (its checks in compiled code) and update_many
        r = self.resolution
        self._store = _kernels_refinement.Groups(
            "CalibrationRefinement", 0.0 if r is None else float(r)
        )

    update = _kernels_refinement.groups_update

    @property
    def _groups(self) -> dict:
        """Group key -> ``[weight, weighted label sum, count]`` (a copy)."""
        return {key: [w, y, k] for key, w, y, k in self._store.group_list()}

    def _value(self, key) -> float:
        """The (pooled) forecast of a group key."""
        return key if self.resolution is None else min(1.0, key * self.resolution)

    def _check(self) -> None:
        """Assert every invariant of the state (tests call it after each mutation)."""
        store = self._store
        groups = self._groups
        assert sum(g[2] for g in groups.values()) == store.n
        cal = ref = 0.0
        for key, (w, y, k) in groups.items():
            assert k >= 1 and w > 0.0 and -1e-9 * w <= y <= w * (1 + 1e-9), (
                f"bad group {key}: {(w, y, k)}"
            )
            if self.resolution is not None:
                assert isinstance(key, int) and 0 <= key <= math.floor(
                    1.0 / self.resolution + 0.5
                )
            p = self._value(key)
            e = p * w - y
            cal += product_over(e, e, w)
            ref += product_over(y, w - y, w)
        tol = 1e-9 * store.weight  # relative: every sum scales with the weights
        assert abs(cal - store.cal) <= tol and abs(ref - store.ref) <= tol, (
            "running contributions drifted"
        )
        assert -tol <= store.score <= store.weight + tol, "the Brier sum is not in [0, the weight]"
        assert abs(math.fsum(g[0] for g in groups.values()) - store.weight) <= tol
        if store.n == 0:
            assert store.weight == store.score == store.cal == store.ref == 0.0

    def _revert(self, y: float, p: float, w: float) -> None:
        if not self._store.revert(y, p, w):
            if self.resolution is not None:
                p = min(1.0, int(p / self.resolution + 0.5) * self.resolution)
            raise self._not_held(y, p)

    def get(self) -> float:
        """The Brier score of the events held (0.0 before any); O(1)."""
        store = self._store
        return store.score / store.weight if store.n else 0.0

    @property
    def calibration(self) -> float:
        """``sum_p W_p (p - ybar_p) ** 2 / W``; O(1)."""
        store = self._store
        return store.cal / store.weight if store.n else 0.0

    @property
    def refinement(self) -> float:
        """``sum_p W_p ybar_p (1 - ybar_p) / W``; O(1)."""
        store = self._store
        return store.ref / store.weight if store.n else 0.0

    _merge_refusal = None

    @classmethod
    def _upgrade_snapshot(cls, params: dict, state: dict, fmt: int):
        """A format-1 snapshot lists grid cells in the order they were first met; the
        state now lists them in key order (the same groups)."""
        if fmt == 1 and params.get("resolution") is not None and isinstance(state, dict):
            groups = state.get("groups")
            if isinstance(groups, list) and all(
                isinstance(g, list) and g and isinstance(g[0], int) for g in groups
            ):
                state = {**state, "groups": sorted(groups, key=lambda g: g[0])}
        return params, state

    def _merge(self, other):
        """The decomposition of both streams: the weight, label sum and count of each
        forecast group added (``self``'s groups first), the totals added; the running
        calibration and refinement sums are added too, and for each group both hold,
        the two parts' contributions are replaced by the merged group's, as one metric
        replaces a group's contribution when an event joins it. O(groups held)."""
        a, b = self._get_state(), other._get_state()
        cal, ref = a["calibration"] + b["calibration"], a["refinement"] + b["refinement"]
        mine = {row[0]: row for row in a["groups"]}
        for key, w, y, _ in b["groups"]:
            row = mine.get(key)
            if row is not None:
                p, W, Y = self._value(key), row[1] + w, row[2] + y
                e, e0, e1 = p * W - Y, p * row[1] - row[2], p * w - y
                cal += product_over(e, e, W) - product_over(e0, e0, row[1]) - product_over(e1, e1, w)
                ref += product_over(y, y, w) + product_over(row[2], row[2], row[1]) - product_over(Y, Y, W)
        groups = _merge.merge_keyed(a["groups"], b["groups"])
        if self.resolution is not None:
            groups.sort()
        state = {
            "n": a["n"] + b["n"],
            "weight": a["weight"] + b["weight"],
            "score": a["score"] + b["score"],
            "calibration": cal,
            "refinement": ref,
            "groups": groups,
        }
        return self._from_state(state)

    def _validate_state(self, state: dict, check) -> None:
        # the compiled store reads each group's four entries unchecked
        r = self.resolution
        hi = None if r is None else math.floor(1.0 / r + 0.5)
        for i, g in enumerate(check.list(check.entry(state, "groups"), "state['groups']")):
            at = f"state['groups'][{i}]"
            key, w, y, k = check.list(g, at, n=4, what="(key, weight, label sum, count)")
            if r is None:
                check.real(key, at + "[0]", 0.0, 1.0)
            else:
                check.int(key, at + "[0]", 0, hi)
            w = check.weight(w, at + "[1]")
            check.real(y, at + "[2]", 0.0, w)
            check.int(k, at + "[3]", 1)

    def _set_state(self, state: dict) -> None:
        self._store.set_state(state)
