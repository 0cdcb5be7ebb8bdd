"""The CORP decomposition of a proper score into miscalibration, discrimination and
uncertainty, kept up to date by the online isotonic (PAV) block store."""

from __future__ import annotations

import math

from streamcal import _merge
from streamcal import _validation as V
from streamcal.core.pav import (
    BlockView, IsotonicBlockStore, check_exactness_scale, check_residues, finer_scale,
    RESIDUE_UNKNOWN, merged_residue_bounds, residue_entry, upgrade_exactness_scale,
    upgrade_residues,
)
from streamcal.metrics import _kernels
from streamcal.metrics.base import BinaryCalibrationMetric

__all__ = ["CORP"]

_SCORES = ("brier", "log")
_DBL_MIN = 2.2250738585072014e-308  # the smallest normal double


def _brier_block(W: float, S: float) -> float:
    """Brier score summed over a block of weight ``W`` and label sum ``S`` forecast at
    its mean ``v = S / W``: ``S (1 - v)**2 + (W - S) v**2 = S (W - S) / W``."""
    if S <= 0.0 or S >= W:
        return 0.0
    return S * ((W - S) / W)  # not (S (W - S)) / W: that product overflows near 1e308


def _log_block(W: float, S: float) -> float:
    """Log loss summed over a block forecast at its mean ``v = S / W``:
    ``-(S log v + (W - S) log(1 - v))``, with ``0 log 0 = 0`` (a block of one label
    costs nothing)."""
    if S <= 0.0 or S >= W:
        return 0.0
    v = S / W
    # ``v`` underflows (to 0 or a subnormal) when ``S`` is tiny beside ``W`` (weights
    # 1e-200 and 2e200 in one block): then ``log v = log S - log W``, exactly enough
    log_v = math.log(v) if v >= _DBL_MIN else math.log(S) - math.log(W)
    return -(S * log_v + (W - S) * math.log1p(-v))


class CORP(BinaryCalibrationMetric):
    """CORP decomposition of the mean Brier score (or log loss) of probability forecasts:
    ``S = MCB - DSC + UNC``.

    With ``x`` the forecasts, ``x_hat`` their isotonic (pool-adjacent-violators)
    recalibration on the same events (non-decreasing, ties pooled, weights honoured) and
    ``r`` the climatological forecast (the weighted mean outcome), and ``S(.)`` the
    weighted mean score of a forecast over the events:

    - ``S = S(x)``, the score itself (:meth:`get`);
    - ``MCB = S(x) - S(x_hat)``, miscalibration: what recalibration would save, >= 0;
    - ``DSC = S(r) - S(x_hat)``, discrimination: what the recalibrated forecast gains
      over climatology, >= 0;
    - ``UNC = S(r)``, uncertainty of the outcomes.

    Parameters
    ----------
    score
        The proper score decomposed.

        - ``"brier"`` (default): ``(p - y) ** 2``.
        - ``"log"``: log loss, ``-log(p)`` if ``y = 1`` else ``-log(1 - p)``. The raw
          forecast is clipped to ``[eps, 1 - eps]`` (as in
          :class:`streamcal.metrics.LogLoss`), so that a forecast of exactly 0 or 1 with
          the wrong outcome costs ``-log(eps)`` rather than infinity. The recalibrated
          and climatological forecasts are not clipped: they are 0 (or 1) only on runs of
          events whose labels are all 0 (or all 1), which cost ``0 log 0 = 0``.
    eps
        Clipping level of the raw forecast for ``score="log"``, a real number in
        (0, 0.5); unused by the Brier score.

    Attributes
    ----------
    mcb
        Miscalibration, ``S(x) - S(x_hat)``.
    dsc
        Discrimination, ``S(r) - S(x_hat)``.
    unc
        Uncertainty, ``S(r)``.
    recalibration
        The current PAV blocks of the recalibration ``x_hat`` (the CORP reliability
        curve), as :class:`streamcal.core.pav.BlockView` named tuples.
    n_events
        Number of positive-weight events held.

    Notes
    -----
    The state is an :class:`streamcal.core.pav.IsotonicBlockStore` holding the events
    (one cell per distinct forecast value) and their isotonic fit, plus running sums.
    ``S(x)`` is a running sum of per-event scores. ``S(x_hat)`` is a sum over the PAV
    blocks of closed forms: a block of weight ``W`` and label sum ``S`` is forecast at
    ``v = S / W`` and contributes ``S (W - S) / W`` to the Brier sum, ``-(S log v +
    (W - S) log(1 - v))`` to the log loss. That sum is derived from the store's blocks
    (``math.fsum``) when a component is read after an update, so it carries no drift.

    Cost per event: one store insertion (``update``) or removal (``revert``),
    amortised O(log^2 m) with ``m`` distinct forecasts (see
    :mod:`streamcal.core.pav`). :meth:`get` and :attr:`unc` are O(1); :attr:`mcb`,
    :attr:`dsc` and :attr:`recalibration` are O(distinct forecasts) when the store
    changed since the last read, O(1) otherwise.

    ``revert`` removes one event previously added with the same arguments (so
    ``river.utils.Rolling(CORP, window_size=n)`` gives the decomposition on the last
    ``n`` events), and raises ValueError for a forecast value the metric does not hold.
    Sums are floats: after reverts the values differ from a fresh computation by rounding
    only (about 1e-12 relative). With weights at one forecast value spanning many
    binades, a revert may leave that value's other events with a rounding residue larger
    than that (as for any float sum, :class:`streamcal.metrics.Brier` included: the
    metric does not hold the events to sum them again); the totals are summed again
    from the cells when a revert leaves far less than it removed, so they stay those
    of the cells held. Reverting every event gives back the empty state exactly.

    Before any positive-weight event every value is 0.0.

    References
    ----------
    Dimitriadis, Gneiting and Jordan (2021), "Stable reliability diagrams for
    probabilistic classifiers", PNAS 118(8), e2016191118.

    Examples
    --------
    >>> from streamcal.metrics import CORP
    >>> m = CORP()
    >>> for y, p in [(0, 0.1), (1, 0.3), (0, 0.5), (1, 0.7), (1, 0.9)]:
    ...     m.update(y, p)
    >>> round(m.get(), 4), round(m.mcb, 4), round(m.dsc, 4), round(m.unc, 4)
    (0.17, 0.07, 0.14, 0.24)
    >>> abs(m.get() - (m.mcb - m.dsc + m.unc)) < 1e-12
    True
    >>> [(b.score_min, b.score_max, b.value) for b in m.recalibration]
    [(0.1, 0.1, 0.0), (0.3, 0.5, 0.5), (0.7, 0.9, 1.0)]

    The log loss, and a sliding window with river:

    >>> round(CORP(score="log").get(), 4)
    0.0
    >>> from river import utils
    >>> rolling = utils.Rolling(CORP, window_size=3, score="log")
    >>> for y, p in [(0, 0.1), (1, 0.3), (0, 0.5), (1, 0.7), (1, 0.9)]:
    ...     rolling.update(y, p)
    >>> round(rolling.get(), 4), round(rolling.mcb, 4)  # last 3: recalibrated to 0, 1, 1
    (0.3851, 0.3851)

    """

    # the catalogue entry (streamcal.metrics.catalogue)
    short_name = "corp"
    description = (
        "CORP decomposition (isotonic recalibration) of the Brier score or log loss: "
        "score = MCB (miscalibration) - DSC (discrimination) + UNC (uncertainty)."
    )
    component_directions = (
        ("mcb", False),
        ("dsc", True),
        ("unc", None),
    )

    def __init__(self, score: str = "brier", eps: float = 1e-15):
        V.check_param(
            "CORP", "score", score, score in _SCORES, "a str among {'brier', 'log'}"
        )
        V.check_clip_level(eps, "CORP")
        self.score = score
        self.eps = eps
        super().__init__()

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"score": "log"}
        yield {"score": "log", "eps": 1e-6}

    def _reset(self) -> None:
        self._store = IsotonicBlockStore()
        self._weight = 0.0  # sum of w
        self._label = 0.0  # sum of w * y
        self._loss = 0.0  # sum of w * score(x, y)
        # sum over blocks of the block's score at its mean value: W * S(x_hat); derived
        # from the store's blocks when read after an update (_fit_stale)
        self._fit = 0.0
        self._fit_stale = False
        self._n = 0
        self._block_score = _brier_block if self.score == "brier" else _log_block

    # ------------------------------------------------------------------ per event

    def _event_loss(self, y: float, p: float) -> float:
        if self.score == "brier":
            d = p - y
            return d * d
        eps = self.eps
        q = p if y == 1.0 else 1.0 - p
        return -math.log(min(max(q, eps), 1.0 - eps))

    @property
    def _weight_capacity(self) -> float:
        """The capacity of the weight rule (:mod:`streamcal._validation`): every sum the
        metric keeps or derives is at most the largest per-event score (1 for Brier,
        ``-log(eps)`` for the clipped log loss; a block's fitted log loss is at most
        ``log 2`` per unit weight) times the weight held."""
        return V.weight_capacity(1.0 if self.score == "brier" else -math.log(self.eps))

    def update(self, y_true, y_pred, w=1.0) -> None:
        """Add one event. A weight the state cannot hold (see the weight rule of
        :mod:`streamcal._validation`) raises ValueError naming ``w`` and changes
        nothing."""
        y = V.check_label(y_true, "CORP", "update", "y_true")
        p = V.check_probability(y_pred, "CORP", "update")
        w = V.check_weight(w, "CORP", "update")
        V.check_weight_room(w, self._weight, self._weight_capacity, "CORP", "update")
        self._update(y, p, w)

    def _update_many_validated(self, y, p, w) -> None:
        """The loop of :meth:`update`, the weight rule checked for the whole batch
        first: a weight it refuses names its index and nothing is added."""
        held, capacity = self._weight, self._weight_capacity
        for i, wi in enumerate(w.tolist()):
            V.check_weight_room(wi, held, capacity, "CORP", "update_many", f" at index {i}")
            held += wi
        super()._update_many_validated(y, p, w)

    def _update(self, y: float, p: float, w: float) -> None:
        if w > 0.0:
            self._store.add(p, w, y)
            self._fit_stale = True
            self._weight += w
            self._label += w * y
            self._loss += w * self._event_loss(y, p)
            self._n += 1

    def _revert(self, y: float, p: float, w: float) -> None:
        if w <= 0.0:
            return
        store = self._store
        cell = self._cell(p)
        if cell is None:
            raise ValueError(
                "The 'y_pred' argument of CORP.revert must be the forecast of an event "
                f"held by the metric. Got {V.format_value(p)} instead."
            )
        if not _kernels.cell_holds_event(cell[0], cell[1], y, w):
            raise self._not_held(y, p)  # more (label-1, label-0) weight than held at p
        self._n -= 1
        if self._n <= 0:
            self._reset()
            return
        dropped = store.remove(p, w, y)
        self._fit_stale = True
        if dropped:
            # The store dropped the cell rather than keep a subtraction whose rounding
            # residue could exceed 2**-44 of what is left. Only the totals are known: put
            # them back as one cell, its residue unknown (the largest bound).
            cw = cell[0] - w
            if not cw > 0.0:
                cw = w * 2.0**-53
            store.add_cell(p, cw, min(max(cell[1] - w * y, 0.0), cw), dropped, RESIDUE_UNKNOWN)
        self._weight -= w
        self._label -= w * y
        self._loss -= w * self._event_loss(y, p)
        if dropped or not w <= 2.0**20 * self._weight:
            # what is left weighs far less than what left (or nothing): the totals,
            # kept by subtraction, could hold its residue (a total of 0.0 after 1e20
            # left events of 1e4, then a snapshot refused as inconsistent). Sum them
            # again from the store's cells, each one forecast p with W - S of label 0
            # and S of label 1. Chains of smaller drops drift as any float sum does.
            self._totals_from_cells()

    def _totals_from_cells(self) -> None:
        """The weight, label and score sums as sums over the store's cells. O(cells)."""
        xs, ws, ss, _ = self._store.cells()
        loss0 = [self._event_loss(0.0, p) for p in xs.tolist()]
        loss1 = [self._event_loss(1.0, p) for p in xs.tolist()]
        self._weight = math.fsum(ws.tolist())
        self._label = math.fsum(ss.tolist())
        self._loss = math.fsum(
            [(w - s) * a for w, s, a in zip(ws.tolist(), ss.tolist(), loss0)]
            + [s * b for s, b in zip(ss.tolist(), loss1)]
        )

    def _cell(self, x: float):
        """``(W, S)`` of the store's cell at forecast ``x``, None if there is none.
        O(log b + log m)."""
        return self._store.cell(x)

    def _current_fit(self) -> float:
        """``W * S(x_hat)``: the sum over the store's blocks of their closed-form
        scores, recomputed (with ``math.fsum``) only after the store changed.
        O(distinct forecasts)."""
        if self._fit_stale:
            f = self._block_score
            self._fit = math.fsum(f(b.W, b.S) for b in self._store.live_blocks)
            self._fit_stale = False
        return self._fit

    # ------------------------------------------------------------------ values

    def get(self) -> float:
        """The weighted mean score ``S`` of the forecasts (0.0 before any event); O(1)."""
        return self._loss / self._weight if self._weight > 0.0 else 0.0

    def _fitted_score(self) -> float:
        """``S(x_hat)``, the mean score of the isotonic recalibration."""
        return self._current_fit() / self._weight if self._weight > 0.0 else 0.0

    @property
    def unc(self) -> float:
        """Uncertainty ``UNC = S(r)``, the mean score of the climatological forecast
        (the weighted mean outcome); O(1)."""
        W = self._weight
        if W <= 0.0:
            return 0.0
        return self._block_score(W, min(max(self._label, 0.0), W)) / W

    @property
    def mcb(self) -> float:
        """Miscalibration ``MCB = S(x) - S(x_hat)``, >= 0 up to rounding; O(distinct
        forecasts) after an update, O(1) otherwise."""
        return self.get() - self._fitted_score()

    @property
    def dsc(self) -> float:
        """Discrimination ``DSC = S(r) - S(x_hat)``, >= 0 up to rounding; O(distinct
        forecasts) after an update, O(1) otherwise."""
        return self.unc - self._fitted_score()

    @property
    def recalibration(self) -> tuple[BlockView, ...]:
        """The PAV blocks of the isotonic recalibration, in forecast order: each block's
        forecast range, recalibrated value, weight and counts. O(b + distinct
        forecasts)."""
        return self._store.blocks()

    def __repr__(self):
        return (
            f"CORP: {self.get():{self._fmt}} (MCB {self.mcb:{self._fmt}}, "
            f"DSC {self.dsc:{self._fmt}}, UNC {self.unc:{self._fmt}})"
        )

    # ------------------------------------------------------------------ state

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_fit"] = self._current_fit()
        state["_fit_stale"] = False
        del state["_block_score"]  # derived, rebuilt on restore
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._block_score = _brier_block if self.score == "brier" else _log_block

    _merge_refusal = None

    def _merge(self, other):
        """The decomposition of both streams: the per-forecast cells of the two
        isotonic stores (weight, label sum, count) are summed and the store rebuilt by
        PAV; the weight, label and score sums and the counts are added; the fitted
        score is recomputed from the merged blocks when read. O(m log m) for ``m``
        distinct forecasts held by the two. Equal to one metric fed both streams to
        rounding (the cells' sums, bit for bit with unit or integer weights)."""
        new = self.clone()
        cells = _merge.merge_cells(self._store.cells(), other._store.cells())
        # the scale of exact coordinates one metric fed both streams would have
        qexp = finer_scale(self._store.exactness_scale, other._store.exactness_scale)
        if len(cells[0]):
            residues = merged_residue_bounds(self._store, other._store, cells)
            new._store.rebuild(*cells, qexp=qexp, residues=residues)
        new._weight = self._weight + other._weight
        new._label = self._label + other._label
        new._loss = self._loss + other._loss
        new._n = self._n + other._n
        new._fit_stale = True
        return new

    @classmethod
    def _upgrade_snapshot(cls, params: dict, state: dict, fmt: int):
        return params, upgrade_residues(upgrade_exactness_scale(state))

    def _validate_state(self, state: dict, check) -> None:
        super()._validate_state(state, check)
        check_exactness_scale(state, check)
        check_residues(state, check)

    def _get_state(self) -> dict:
        return {
            "blocks": self._store.to_lists(),
            "exactness_scale": self._store.exactness_scale,
            "residues": residue_entry(self._store),
            "weight": self._weight,
            "label": self._label,
            "loss": self._loss,
            "fit": self._current_fit(),
            "n": self._n,
        }

    def _set_state(self, state: dict) -> None:
        self._store = IsotonicBlockStore.from_lists(
            state["blocks"], state["exactness_scale"], state["residues"])
        self._weight = float(state["weight"])
        self._label = float(state["label"])
        self._loss = float(state["loss"])
        self._fit = float(state["fit"])
        self._n = int(state["n"])
        self._fit_stale = False

    def _check(self, rtol: float = 1e-9) -> None:
        """Assert every invariant: the store's, the shadow in step with the store, the
        incremental sum equal to a fresh one, and the counts consistent."""
        store = self._store
        store._check()
        blocks = store.live_blocks
        f = self._block_score
        fresh = math.fsum(f(b.W, b.S) for b in blocks)
        fit = self._current_fit()
        assert abs(fit - fresh) <= rtol * (1.0 + fresh), f"fit sum {fit} != {fresh}"
        assert self._n == sum(b.n_events for b in store.blocks()), (
            "event count out of step with the store"
        )
        if self._n == 0:
            assert (
                not blocks
                and self._weight == self._label == self._loss == self._current_fit() == 0.0
            )
        else:
            W = math.fsum(b.W for b in blocks)
            assert abs(self._weight - W) <= rtol * W, (
                f"weight {self._weight} != store weight {W}"
            )
            # each event adds w * y and w * loss, y in {0, 1} and a loss in [0, max]
            top = 1.0 if self.score == "brier" else -math.log(self.eps)
            assert -rtol * W <= self._label <= W * (1 + rtol), f"label sum {self._label}"
            assert -rtol * W <= self._loss <= W * top * (1 + rtol), f"loss sum {self._loss}"
