"""Online isotonic calibration and streaming Venn-ABERS: river-style shells over the PAV
block store.

:class:`OnlineIsotonic` predicts the isotonic fit at a score; :class:`VennAbers` predicts
the merged Venn-ABERS probability of the two fits with the score's event labelled 0 and
1. Both learn the same way, through the private base :class:`_IsotonicStoreCalibrator`:
one compiled :class:`~streamcal.core._isotonic_stream.IsotonicStream` (window,
forgetting clock, grid) over one :class:`~streamcal.core.pav.IsotonicBlockStore`.
"""

from __future__ import annotations

import collections
import math
import sys

import numpy as np

from streamcal import _merge
from streamcal import _validation as V
from streamcal._kernel_pickle import KernelShellPickle
from streamcal.base import BinaryCalibrator
from streamcal.core import decay
from streamcal.core.kernels import IsotonicKernel, IsotonicStream
from streamcal.core.pav import (
    WEIGHT_LIMIT,
    BlockView, IsotonicBlockStore, check_exactness_scale, check_residues, finer_scale,
    finest_bit, observed_residues, residue_entry, upgrade_exactness_scale, upgrade_residues,
)

__all__ = ["OnlineIsotonic", "VennAbers"]


def _integer_weights_fit(w, window_size: int) -> bool:
    """Are the weights integers whose sums over any ``window_size`` of them stay exact
    (below 2**53)? Then adding and subtracting them, in any order, is exact: no cell
    ever holds a residue (``_pav_residue.pxd``)."""
    top = float(np.max(w))
    return bool(np.all(w == np.floor(w))) and top < 2.0**20 and top * window_size < 2.0**53


_SURELY_LIMIT = WEIGHT_LIMIT * (1.0 - 2.0**-30)  # the margin of _weights_fit's ``surely``

#: The smallest ``half_life`` (the clock's, :data:`streamcal.core.decay.MIN_HALF_LIFE`).
MIN_HALF_LIFE = decay.MIN_HALF_LIFE

#: The smallest ``resolution``, the smallest normal float: a subnormal one overflows
#: ``s / resolution`` (the cell of a score), and ``resolution=1e-310`` kept no block at
#: all (every event lost, the prediction a constant).
MIN_RESOLUTION = sys.float_info.min


def _weights_fit(weights, surely: bool = False) -> bool:
    """Is the sum of ``weights`` (those held and those to learn) at most the isotonic
    stores' ``WEIGHT_LIMIT``? Summed exactly (``math.fsum``); with ``surely``, with a
    margin of 2**-30 of it, which the per-event tests of a batch then all pass (the
    compiled stream's ``check_batch`` takes the same shortcut).

    >>> _weights_fit([1e308, 1e308]), _weights_fit([1e308, 7.9e307])
    (False, True)
    """
    try:
        total = math.fsum(weights)
    except OverflowError:
        return False
    return total <= (_SURELY_LIMIT if surely else WEIGHT_LIMIT)


class _IsotonicStoreCalibrator(IsotonicKernel, KernelShellPickle, BinaryCalibrator):
    """What :class:`OnlineIsotonic` and :class:`VennAbers` share: the parameters
    ``window_size``, ``half_life`` and ``resolution`` (checked by
    :meth:`_check_store_params`), learning, the Venn-ABERS pair, the block view,
    snapshots and ``_check``. ``learn_one`` and ``predict_one`` are the compiled
    kernel's (:class:`~streamcal.core.kernels.IsotonicKernel`, which holds the stream in
    a C field); a subclass chooses what a prediction reads from the store
    (:meth:`_stream_mode`) and implements ``predict_many``."""

    _monotone = True
    _bounded_memory_params = ("window_size", "resolution")
    # pickled with __dict__ (KernelShellPickle): a C field of the kernel (pickles written
    # before the kernel held it in __dict__: the same state)
    _kernel_fields = ("_stream",)

    def _check_store_params(self, window_size, half_life, resolution) -> None:
        name = type(self).__name__
        V.check_optional_int_param(name, "window_size", window_size, 1)
        V.check_param(
            name, "half_life", half_life,
            half_life is None or (V.is_real(half_life) and MIN_HALF_LIFE <= half_life < math.inf),
            f"a finite real number >= {MIN_HALF_LIFE:g} or None",
        )
        V.check_param(
            name, "resolution", resolution,
            resolution is None or (V.is_real(resolution) and MIN_RESOLUTION <= resolution <= 1),
            f"a real number in [{MIN_RESOLUTION!r}, 1] (the smallest normal float to 1) or None",
        )

    def _stream_mode(self) -> dict:
        """The stream's prediction mode: ``{"linear": bool}`` or ``{"venn_abers": True}``."""
        raise NotImplementedError

    def _leaf_capacity(self) -> int:
        """Cells per leaf of the store: 256 with a window of at least 4,096 events and no
        forgetting, else 128. A full window's event removes a cell and adds one, each an
        exact leaf update that rechains only the points below the segment around the
        change (its cost grows slowly with the leaf), then updates the nodes above both:
        larger leaves leave a level fewer (about 9% less time per event at
        ``window_size=10_000``, ``benchmarks/README.md``). A leaf is allocated at its
        full capacity, so small stores (one calibrator per key) keep 128; without exact
        coordinates (forgetting) a leaf update rechains the whole leaf, and 128 is
        faster."""
        window = self.window_size is not None and self.window_size >= 4096
        return 256 if window and self.half_life is None else 128

    def _reset(self) -> None:
        self._stream = IsotonicStream(
            IsotonicBlockStore(leaf_capacity=self._leaf_capacity()),
            resolution=self.resolution or 0.0,
            half_life=self.half_life or 0.0,
            window_size=self.window_size or 0,
            **self._stream_mode(),
        )

    @property
    def releases_gil(self) -> bool:
        """True on the exact store without forgetting, grid or prior (with or without a
        window): then the batch loops run without the GIL."""
        return self.half_life is None and self.resolution is None and not getattr(self, "prior_strength", 0.0)

    @property
    def _store(self) -> IsotonicBlockStore:
        """The PAV block store (keys are grid cells with ``resolution``)."""
        return self._stream.store

    @property
    def _t_ref(self) -> int:
        """Index of the event of the latest renormalisation (half-life only)."""
        return self._stream.t_ref

    # ------------------------------------------------------------------ helpers

    def _key(self, s: float) -> float:
        r = self.resolution
        return s if r is None else float(math.floor(s / r + 0.5))

    def _keys(self, s: np.ndarray) -> np.ndarray:
        r = self.resolution
        return s if r is None else np.floor(s / r + 0.5)

    def _score_of_key(self, k: float) -> float:
        r = self.resolution
        return k if r is None else k * r

    # ------------------------------------------------------------------ learning

    def _weights_surely_fit(self, w) -> bool:
        # without forgetting the rule is "the weights held stay <= WEIGHT_LIMIT"; with
        # it, one event whose stored weight needs no search for a shift surely fits,
        # and the dry run of the base class decides the rest
        if self.half_life is not None:
            return len(w) == 1 and self._stream.plan_surely_fits(w[0])
        if len(w) == 1:  # one event (KeyedCalibrator's fallback): the plain sum is
            hi, lo = self._stream.total_weight_parts()  # within 2**-52 of the exact one
            return hi + lo + w[0] <= _SURELY_LIMIT
        return _weights_fit([*self._stream.total_weight_parts(), *w], surely=True)

    def _learn_many_validated(self, scores, labels, w) -> None:
        n = len(scores)
        if n == 0:
            return
        stream = self._stream
        if (self.half_life is not None or n * 256 < stream.n_cells or n < 16
                or stream.grid_store is not None):
            # the compiled loop (a grid store's is as fast as a rebuild, and leaves the
            # grid at the event the loop would)
            stream.learn_many(scores, labels, w)
            return
        store = stream.store
        keys = self._keys(scores)
        t0 = stream.n_events
        if self.window_size is None:
            if not _weights_fit([*stream.total_weight_parts(), *w.tolist()], surely=True):
                # the sums would overflow somewhere in the batch: the loop names the event
                stream.learn_many(scores, labels, w)
                return
            old = store.cells()
            xs = np.concatenate([old[0], keys])
            ws = np.concatenate([old[1], w])
            ss = np.concatenate([old[2], w * labels])
            ns = np.concatenate([old[3], np.ones(n, dtype=np.int64)])
        else:
            # The window's bulk path sums the last N events afresh, while the loop adds
            # and subtracts as events come and go: the same floats only when every sum
            # is an exact integer (integer weights, those held before the batch too,
            # whose window sums stay below 2**53: the loop subtracts the held events
            # from cells that may hold new ones) and every event held before the batch
            # leaves in it (n >= N). Otherwise the loop, compiled and without the GIL,
            # which also refuses a weight that would overflow the sums as learn_one does.
            N = self.window_size
            held = np.array([e[2] for e in stream.window_events()], dtype=np.float64)
            if n < N or not _integer_weights_fit(np.concatenate([held, w]), N):
                stream.learn_many(scores, labels, w)
                return
            tail = slice(n - N, n)
            tk = np.arange(t0, t0 + n)[tail]
            xs, ys, ws = keys[tail], labels[tail], w[tail]
            window = [list(e) for e in zip(xs.tolist(), ys.tolist(), ws.tolist(), tk.tolist())]
            ss, ns = ws * ys, np.ones(len(xs), dtype=np.int64)
        pos = ws > 0
        xs, ws, ss, ns = xs[pos], ws[pos], ss[pos], ns[pos]
        ux, inv = np.unique(xs, return_inverse=True)
        # the scale of exact coordinates the loop would leave: every weight and label
        # sum it adds
        qexp = finer_scale(store.exactness_scale, finest_bit(w), finest_bit(w * labels))
        # the store first: its rebuild changes nothing when it fails (out of memory)
        store.rebuild(
            ux,
            np.bincount(inv, weights=ws, minlength=len(ux)),
            np.bincount(inv, weights=ss, minlength=len(ux)),
            np.bincount(inv, weights=ns, minlength=len(ux)).astype(np.int64),
            qexp,
        )
        if self.window_size is not None:
            stream.set_window_events(window)
        stream.n_events = t0 + n
        stream.reset_total()

    def _predict_learn_many_validated(self, scores, labels, w) -> np.ndarray:
        return self._stream.predict_learn_many(scores, labels, w)

    def _predict_reveal_many_validated(self, kinds, scores, labels, w) -> np.ndarray:
        return self._stream.predict_reveal_many(kinds, scores, labels, w)

    # ------------------------------------------------------------------ Venn-ABERS

    def predict_interval_one(self, score: float) -> tuple[float, float]:
        """Inductive Venn-ABERS pair ``(p0, p1)`` at ``score``.

        ``p0`` (resp. ``p1``) is the isotonic fit at ``score`` (its grid cell with
        ``resolution``) after adding the event ``(score, 0)`` (resp. ``(score, 1)``),
        with the weight a new unit-weight event would get, to the events currently held
        (the window is not shifted). ``p0 <= p1``. The state is not changed: with exact
        coordinates (dyadic weights: no forgetting) each fit is a read-only query of
        the block store, O(log² n + B); otherwise the event is added to the store and
        removed again, restoring each cell's exact sums, O(log² n) amortised. With no
        data the pair is ``(0.0, 1.0)``.

        Examples
        --------
        >>> cal = OnlineIsotonic()
        >>> cal.learn_many([0.2, 0.4, 0.6, 0.8], [0, 1, 0, 1])
        >>> cal.predict_interval_one(0.5)
        (0.3333333333333333, 0.6666666666666666)

        """
        return self._stream.predict_interval_one(score)

    # ------------------------------------------------------------------ views

    @property
    def blocks(self) -> tuple[BlockView, ...]:
        """The current PAV blocks in score order (a fresh tuple of named tuples).

        Scores are reported on the original scale (cell centres with ``resolution``);
        with ``half_life`` weights are relative to the newest event's weight.
        """
        views = self._store.blocks()
        if self.resolution is None and self.half_life is None:
            return views
        rel = self._stream.weight_scale()
        return tuple(
            b._replace(
                score_min=self._score_of_key(b.score_min),
                score_max=self._score_of_key(b.score_max),
                weight=b.weight * rel,
            )
            for b in views
        )

    @property
    def n_events(self) -> int:
        """Number of events learnt (``learn_one`` calls, including zero weights)."""
        return self._stream.n_events

    # ------------------------------------------------------------------ merge

    @property
    def _merge_refusal(self) -> str | None:
        return _merge.order_refusal(self, "window_size", "half_life")

    def _merge(self, other):
        """The fit of both streams: the per-score cells (per grid cell with
        ``resolution``: total weight, weighted label sum, event count) are summed and
        the block store is rebuilt from them by PAV, as ``learn_many`` does.

        Cost O(m log m) for ``m`` cells held by the two, in numpy and C (against
        O(n log² m) to learn the ``n`` events again). Counts are exact; a cell's sums
        are its two parts' sums added, so with unit or integer weights the fit is the
        one-object fit bit for bit, otherwise equal to it to rounding (1e-12
        relative). A total weight past ``WEIGHT_LIMIT`` raises ValueError (one object
        would have refused the event that took it there).
        """
        a, b = self._stream, other._stream
        if not _weights_fit([*a.total_weight_parts(), *b.total_weight_parts()]):
            raise ValueError(
                f"The total weight of the two {type(self).__name__} objects to merge must "
                f"be at most {WEIGHT_LIMIT!r}. Got "
                f"{a.total_weight_parts()[0] + b.total_weight_parts()[0]!r} instead."
            )
        new = self.clone()
        stream = new._stream
        cells = _merge.merge_cells(a.store.cells(), b.store.cells())
        # the scale of exact coordinates one object fed both streams would have (a
        # grid store's copy derives it from the cells)
        qexp = finer_scale(a.store.exactness_scale, b.store.exactness_scale)
        if a.grid_store is not None and b.grid_store is not None:
            qexp = None
        if len(cells[0]):
            stream.store.rebuild(*cells, qexp=qexp)
        stream.n_events = a.n_events + b.n_events
        stream.reset_total()
        return new

    # ------------------------------------------------------------------ state

    @classmethod
    def _upgrade_snapshot(cls, params: dict, state: dict, fmt: int):
        return params, upgrade_residues(upgrade_exactness_scale(state))

    def _get_state(self) -> dict:
        stream = self._stream
        return {
            "blocks": stream.store.to_lists(),
            "exactness_scale": stream.store.exactness_scale,
            # only a window removes events, the one use of the bounds
            "residues": [] if stream.window_size == 0 else residue_entry(stream.store),
            "window": stream.window_events(),
            "n_events": stream.n_events,
            "t_ref": stream.t_ref,
            "phase": stream.phase,
        }

    def _validate_state(self, state: dict, check) -> None:
        # the forgetting clock: weights are stored relative to the event count t_ref of
        # the last renormalisation (0 and 0.0 without half_life); the blocks and the
        # window are checked by the store's own _check() once built
        n = check.int(check.entry(state, "n_events"), "state['n_events']")
        check_exactness_scale(state, check)
        check_residues(state, check)
        if self.half_life is None:
            check.int(check.entry(state, "t_ref"), "state['t_ref']", 0, 0)
            check.real(check.entry(state, "phase"), "state['phase']", 0.0, 0.0)
        else:
            check.int(check.entry(state, "t_ref"), "state['t_ref']", 0, n)
            check.real(check.entry(state, "phase"), "state['phase']")

    def _set_state(self, state: dict) -> None:
        self._reset()
        stream = self._stream
        stream.store = IsotonicBlockStore.from_lists(
            state["blocks"], state["exactness_scale"], state["residues"],
            leaf_capacity=self._leaf_capacity())
        if state["window"] is not None:
            stream.set_window_events(state["window"])
        stream.n_events = int(state["n_events"])
        stream.t_ref = int(state["t_ref"])
        stream.phase = float(state["phase"])
        stream.reset_total()

    def _check(self) -> None:
        """Assert the block invariants and that the window matches the stored cells
        (with a grid store: its own invariants, and its fit equal to the general
        store's of the same cells)."""
        self._store._check()
        grid = self._stream.grid_store
        if grid is not None:
            grid._check()
            xs, ws, ss, ns = grid.cells()
            for x in xs.tolist():
                assert grid.predict_step(x) == self._store.predict_step(x), f"grid fit at {x}"
        window = self._stream.window_events()
        if window is not None:
            assert len(window) <= self.window_size, "window too long"
            counts = collections.Counter(x for x, _, w, _ in window if w > 0)
            xs, _, _, ns = self._store.cells()
            assert sorted(counts) == xs.tolist(), "window keys differ from stored cells"
            for x, n in zip(xs.tolist(), ns.tolist()):
                assert counts[x] == n, f"cell {x}: {n} events stored, {counts[x]} in the window"
            # each cell within its residue bound (core/_pav_residue.pxd) of the sums of
            # the window's events (correctly rounded), plus their own rounding
            bounds = dict(zip(xs.tolist(), self._store.residue_bounds().tolist()))
            for x, off in observed_residues(self._store.to_lists(), window):
                assert off <= bounds[x] + 2.0**-50, f"cell {x}: sums off the window's by {off} (bound {bounds[x]})"



class OnlineIsotonic(_IsotonicStoreCalibrator):
    """Isotonic calibration kept exact after every event by pool-adjacent-violators
    with block maintenance.

    The calibrator is the non-decreasing isotonic regression of the labels on the scores
    (ties pooled by weighted mean, sample weights honoured, zero weights ignored), as a
    batch fit of every event seen would give it, but updated in place: the store keeps
    the PAV blocks (score range, weight, weighted label sum) and, when an event arrives,
    only the block it falls into can split; the pieces then merge with their neighbours
    in a cascade. See :mod:`streamcal.core.pav` for the invariants and costs.

    Parameters
    ----------
    interpolation
        How to predict between the distinct scores seen.

        - ``"step"`` (default): the fitted value at the largest seen score <= ``score``;
          below the smallest seen score, the lowest block's value.
        - ``"linear"``: scikit-learn's ``IsotonicRegression(increasing=True,
          out_of_bounds="clip", y_min=0, y_max=1)``: constant within a block, linear
          between the last score of one block and the first score of the next, clipped
          at both ends. One difference: scikit-learn first merges scores closer than
          ``1e-15`` (its ``_make_unique``, after sorting), while this store keeps every
          distinct float as its own score, so the two fits differ when such near-equal
          scores carry different labels.
    window_size
        If set, the fit is exactly the isotonic regression of the last ``window_size``
        events; the oldest event is removed on each arrival (no periodic refit). With
        weights whose sums round (not integers or dyadic), each score's weight and
        label sum stay within ``2 ** -44`` (relative) of the exact sums of its events
        in the window, and a score whose events there all have label 0 (1) holds a
        label sum of exactly 0 (its weight), so it pools with an equal neighbour as
        the batch fit does.
    half_life
        If set, exponential forgetting: the fit is the weighted isotonic regression with
        each event's weight multiplied by ``2 ** (-age / half_life)``, age counted in
        events (the newest has age 0; every ``learn_one`` call ages the others by one,
        whatever its weight). Weights are stored relative to a moving reference and
        renormalised by exact powers of two, so arbitrarily long streams neither
        overflow nor underflow. What has decayed by more than 1000 half-lives (weight
        below ``2 ** -1000`` of a new event) is forgotten: with ``window_size`` such
        events leave the window; without, a score whose total weight fell below that
        threshold is dropped when weights are renormalised (every 512 half-lives), and
        a score's weighted label sum that the renormalisation would make subnormal (a
        light score beside much heavier ones) is set to 0: its fitted value moves by
        less than ``2 ** -52``, though a value such as 1e-18 then reads 0. At least
        ``1e-18`` (where only the newest event counts already).
    resolution
        If set, scores are pooled onto a grid of width ``r``: a score ``s`` (when learning
        and when predicting) is replaced by its cell ``k = floor(s / r + 1/2)``, the
        score ``k * r``. At most ``floor(1/r + 1/2) + 1`` cells exist, so memory is
        O(1 / r) however long the stream, and the
        calibrator is exactly the isotonic regression of the rounded scores. At least
        the smallest normal float, ``2.2250738585072014e-308``.
    prior_strength
        ``a >= 0`` (default 0: the exact fit). With ``a > 0`` a prediction reads the fit
        with one pseudo-event of weight ``a`` (relative to a new event: ``a = 1`` weighs
        what one unit-weight event would, forgetting included) and label 1/2 pooled in
        at the cell the read-out uses, the fit itself unchanged: the posterior mean
        ``(S + a / 2) / (W + a)`` of the block the pseudo-event joins (see
        :mod:`streamcal.core.prior`). Predictions then lie strictly inside (0, 1) and
        stay non-decreasing in the score; a block of many events barely moves, one of
        a few is held off 0 and 1. On hourly rain logs ``a = 1`` or ``2`` turned a log
        loss worse than the raw model's into a better one (``simulations/priors.py``).

    Attributes
    ----------
    blocks
        Read-only view of the current PAV blocks.
    n_events
        Number of ``learn_one`` calls so far (all weights, inside the window or not).

    Notes
    -----
    Cost per event (``n`` distinct scores held): amortised O(log² n), whatever the
    stream (ascending, flat or one-sided fits included): the block store is one
    balanced tree over the scores whose nodes keep the bridges of their children's
    lower hulls (see :mod:`streamcal.core.pav`), so an event re-bridges the O(log n)
    nodes above its score, O(log n) steps each, and a new score moves at most one
    leaf's cells of memory (128; 256 with a window of 4,096 events or more and no
    ``half_life``). Prediction is O(log n). With ``resolution=r``,
    ``n <= floor(1/r + 1/2) + 1``; with ``resolution`` alone (no window, forgetting or
    prior, at most 65,536 cells) the events go to a store specialised for the fixed grid
    (:mod:`streamcal.core._grid_pav`: exact integer coordinates; the fit kept as its
    blocks, an event costing O(1) plus a scan of one side of its block, while those
    scans stay short, else a static tree in flat arrays, O(log² n) per event without
    amortisation), with the same fit bit for bit; weights it cannot hold exactly (sums beyond 2**40 units of their finest power
    of two) move the cells back to the general store. The window, the forgetting clock and the grid run in
    compiled code (:mod:`streamcal.core._isotonic_stream`), as does
    ``predict_learn_many``.
    ``learn_many`` refits from aggregated cells in C when the batch is large compared to
    the state (O((n + cells) log(n + cells))) and loops otherwise; with ``half_life``
    it always loops. Without ``half_life`` or ``prior_strength``, the compiled loops of
    ``predict_learn_many`` and ``learn_many`` release the GIL: calibrators fed in
    several threads (as :func:`streamcal.replay` runs them) use several cores.

    Before any positive-weight label, ``predict_one`` returns the score unchanged.

    With ``prior_strength > 0``, a prediction adds the pseudo-event to the store, reads
    the fit and removes it again (as :class:`VennAbers` does): O(log² n) amortised
    (two with ``"linear"`` between blocks), and ``predict_many`` loops in C.

    With non-integer weights, weights are added and (with a window) subtracted as
    floats, so the fit matches a batch fit to rounding (about 1e-12); with unit or
    integer weights the sums are exact.

    Examples
    --------
    >>> from streamcal import OnlineIsotonic
    >>> cal = OnlineIsotonic()
    >>> cal.predict_one(0.7)
    0.7
    >>> for s, y in [(0.1, 0), (0.3, 1), (0.5, 0), (0.7, 1), (0.9, 1)]:
    ...     cal.learn_one(s, y)
    >>> [round(cal.predict_one(s), 3) for s in (0.1, 0.4, 0.7)]
    [0.0, 0.5, 1.0]
    >>> cal.blocks[1]
    BlockView(score_min=0.3, score_max=0.5, value=0.5, weight=2.0, n_events=2, n_cells=2)

    The inductive Venn-ABERS interval at a score:

    >>> cal.predict_interval_one(0.4)
    (0.3333333333333333, 0.6666666666666666)
    >>> cal.predict_interval_one(0.6)
    (0.3333333333333333, 1.0)

    A sliding window keeps exactly the last events:

    >>> win = OnlineIsotonic(window_size=2)
    >>> win.learn_many([0.2, 0.8, 0.5], [1, 0, 1])
    >>> win.predict_one(0.5), win.n_events
    (0.5, 3)

    A prior keeps forecasts off 0 and 1 where few events stand behind them:

    >>> shrunk = OnlineIsotonic(prior_strength=1.0)
    >>> shrunk.learn_many([0.1, 0.3, 0.5, 0.7, 0.9], [0, 1, 0, 1, 1])
    >>> [round(shrunk.predict_one(s), 3) for s in (0.1, 0.4, 0.7)]
    [0.25, 0.5, 0.75]

    """


    def __init__(
        self,
        interpolation: str = "step",
        window_size: int | None = None,
        half_life: float | None = None,
        resolution: float | None = None,
        prior_strength: float = 0.0,
    ):
        V.check_param(
            type(self).__name__, "interpolation", interpolation, interpolation in ("step", "linear"),
            "a str among {'step', 'linear'}",
        )
        self._check_store_params(window_size, half_life, resolution)
        # a numpy number is stored as the Python number it equals (to_dict stays JSON-safe)
        prior_strength = V.check_nonnegative_param(
            type(self).__name__, "prior_strength", prior_strength
        )
        self.interpolation = interpolation
        self.window_size = window_size
        self.half_life = half_life
        self.resolution = resolution
        self.prior_strength = prior_strength
        self._reset()

    def _stream_mode(self) -> dict:
        return {
            "linear": self.interpolation == "linear",
            "prior_strength": float(self.prior_strength),
        }

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"interpolation": "linear"}
        yield {"window_size": 50}
        yield {"half_life": 30.0}
        yield {"resolution": 0.01, "interpolation": "linear"}
        yield {"window_size": 40, "half_life": 15.0, "resolution": 0.05}
        yield {"prior_strength": 1.0}
        yield {"prior_strength": 0.5, "interpolation": "linear", "window_size": 30}
        yield {"prior_strength": 2.0, "half_life": 20.0, "resolution": 0.05}


    def _predict_many_validated(self, scores: np.ndarray) -> np.ndarray:
        if self.prior_strength > 0 or self._stream.grid_store is not None:
            # the compiled loop (the grid store's read-outs need no block arrays)
            return self._stream.predict_many(np.ascontiguousarray(scores, dtype=np.float64))
        store = self._store
        if not len(store):
            return scores.astype(np.float64, copy=True)
        x = self._keys(scores)
        starts, ends, values = store.arrays()
        i = np.searchsorted(starts, x, side="right") - 1
        i0 = np.maximum(i, 0)
        out = values[i0]
        if self.interpolation == "linear" and len(starts) > 1:
            j = np.minimum(i0 + 1, len(starts) - 1)
            between = (i >= 0) & (i + 1 < len(starts)) & (x > ends[i0])
            with np.errstate(invalid="ignore", divide="ignore"):
                frac = (x - ends[i0]) / (starts[j] - ends[i0])
                out = np.where(between, values[i0] + (values[j] - values[i0]) * frac, out)
        return np.clip(out, 0.0, 1.0)


class VennAbers(_IsotonicStoreCalibrator):
    """Streaming Venn-ABERS calibration: the merged probability of the two isotonic fits
    with the new event labelled 0 and labelled 1.

    For a score ``s``, ``p0`` (resp. ``p1``) is the isotonic regression, at ``s``, of
    the events held plus the hypothetical event ``(s, label 0)`` (resp. ``(s, label
    1)``): the inductive Venn-ABERS pair of Vovk, Petej and Fedorova (2015), with every
    event learnt so far as the calibration set. :meth:`predict_interval_one` returns
    ``(p0, p1)`` and :meth:`predict_one` the merged probability ``p1 / (1 - p0 + p1)``
    (their eq. for the log-loss-minimax merge), which lies in ``[p0, p1]``. The events
    are kept in the same exact isotonic block store as :class:`OnlineIsotonic`'s, with
    the same options; a prediction reads each fit with its hypothetical event from the
    store without changing it (or, without exact coordinates, adds the event, reads
    the fit and removes it again), leaving the state exactly as it was.

    Where :class:`OnlineIsotonic` says 0.0 about a score whose block holds only
    negatives, the pair has ``p0 = 0`` but ``p1 > 0`` (the hypothetical positive is
    pooled with the ``m`` negatives at or above the score: ``p1 = 1 / (m + 1)``), so
    the merged forecast ``p1 / (1 + p1)`` stays off 0 by what one more event could
    change; symmetrically off 1.

    Parameters
    ----------
    window_size
        If set, the calibration set is exactly the last ``window_size`` events (the
        hypothetical event is added to them; the window is not shifted).
    half_life
        If set, exponential forgetting as in :class:`OnlineIsotonic`: event weights are
        multiplied by ``2 ** (-age / half_life)``; the hypothetical event has the weight
        the next event would get (age 0, the others one event older).
    resolution
        If set, scores are pooled on a grid of width ``r`` (cell
        ``floor(s / r + 1/2)``), when learning and when predicting; memory O(1 / r).

    Attributes
    ----------
    blocks
        Read-only view of the PAV blocks of the events held (without any hypothetical
        event).
    n_events
        Number of ``learn_one`` calls so far.

    Notes
    -----
    **Cost.** ``learn_one``: amortised O(log² n) for ``n`` distinct scores held, as
    :class:`OnlineIsotonic`. ``predict_one`` and ``predict_interval_one``: with exact
    coordinates (integer or dyadic weights, so without forgetting; the
    default), two read-only queries of the store, O(log² n + B) (``B`` its leaf
    capacity): the fit with the hypothetical event at ``s`` is the slope of the
    bridge of the lower hulls of the cumulative sums before ``s`` and from ``s`` on
    (the latter translated by the event), found from the tree's bridges without
    inserting anything; the same floats as inserting (the correctly rounded quotient
    of the same exact sums). Otherwise one hypothetical insertion, relabelled between
    the two fits, and its removal, amortised O(log² n) (against O(log n) for
    :class:`OnlineIsotonic`). Memory: O(distinct scores), O(window) or O(1 / r).
    ``predict_many`` and ``predict_learn_many`` run the same per-event code in C and
    return exactly the floats of the loop. Without a window, ``predict_learn_many``
    learns an event of unit weight in three store operations instead of four: the
    hypothetical fit of the other label, the learn, and one read at the event's score
    (the fit after the learn is the hypothetical fit of the event's own label, bit for
    bit); a window or another weight takes the pair. In the same setting, with unit
    weights only and when the read-only queries are not available (a store once
    holding inexact coordinates), ``predict_one`` leaves its hypothetical event in the
    store with label 1 if the score is at least 0.5, else 0, so that a ``learn_one`` of
    that very event next (``predict_one(s)`` then ``learn_one(s, y)``, as
    :class:`streamcal.CalibratedClassifier` calls them) keeps it instead of adding it
    again (relabelled if ``y`` is the other label); any other call removes it first,
    exactly (the sums are integers), so it is never observed: not by a method, a
    snapshot, a copy or ``_check``.

    **Cold start.** Before any positive-weight event, ``predict_one`` returns the
    score itself (the project's convention for binary calibrators) and
    ``predict_interval_one`` returns ``(0.0, 1.0)``, the pair of an empty calibration
    set (whose merge would be 0.5).

    **What is guaranteed.** Venn-ABERS predictors are Venn predictors (Vovk and Petej
    2014): if the calibration events and the new one are *exchangeable* (for instance
    i.i.d.) and the scores come from a model fitted on other data, the pair is
    perfectly calibrated in the sense that the element for the label that occurs
    (``p0`` if the label is 0, ``p1`` if it is 1), ``p_Y``, satisfies
    ``P(Y = 1 | p_Y) = p_Y``. Here the calibration set grows by one event each step
    (an inductive predictor run online), and the statement holds at every step; it is a
    property of the pair, in expectation, not a promise that an unknown "true
    probability" lies between ``p0`` and ``p1``.

    **What is not.**

    - The merged probability ``p1 / (1 - p0 + p1)`` is not itself guaranteed to be
      calibrated; it is the single forecast that is nearly as good as whichever of
      ``p0``, ``p1`` is the valid one under log loss, and is usually close to
      calibrated when ``p1 - p0`` is small.
    - A stream that drifts, labels that depend on each other in time (hourly weather),
      a scoring model that learns from the same events, or delayed labels: the events
      are then not exchangeable and nothing is guaranteed.
    - ``half_life`` weights the new event above the old ones, so the fit is not a
      symmetric function of the events and the guarantee fails even for i.i.d. data;
      the same holds for non-unit sample weights ``w``.
    - ``window_size``: for an exchangeable stream the last events and the new one are
      still exchangeable, so the per-step statement survives; but a window is chosen
      because the stream is believed not to be exchangeable, and then it does not
      apply. Treat windowed and forgetting versions as heuristics that track drift.
    - ``resolution`` only coarsens the scores (the same map for every event) and keeps
      the guarantee.

    This is not the full (transductive) Venn-ABERS predictor of Vovk and Petej (2014),
    which refits the scoring model with the test object; the model that produced the
    scores is outside streamcal.

    References
    ----------
    Vovk, V. and Petej, I. (2014). Venn-Abers predictors. *UAI 2014*, 829-838.
    Vovk, V., Petej, I. and Fedorova, V. (2015). Large-scale probabilistic predictors
    with and without guarantees of validity. *NeurIPS 28*.

    Examples
    --------
    >>> from streamcal import VennAbers
    >>> cal = VennAbers()
    >>> cal.predict_one(0.7)                   # nothing learnt yet: the score itself
    0.7
    >>> for s, y in [(0.1, 0), (0.3, 1), (0.5, 0), (0.7, 1), (0.9, 1)]:
    ...     cal.learn_one(s, y)
    >>> cal.predict_interval_one(0.7)
    (0.5, 1.0)
    >>> cal.predict_one(0.7)                   # 1.0 / (1 - 0.5 + 1.0)
    0.6666666666666666
    >>> [round(cal.predict_one(s), 3) for s in (0.1, 0.4, 0.95)]
    [0.333, 0.5, 0.75]

    The isotonic fit itself says 0.0 at 0.1 and 1.0 at 0.7; the events held are those
    of that fit:

    >>> cal.blocks[0]
    BlockView(score_min=0.1, score_max=0.1, value=0.0, weight=1.0, n_events=1, n_cells=1)

    """

    def __init__(
        self,
        window_size: int | None = None,
        half_life: float | None = None,
        resolution: float | None = None,
    ):
        self._check_store_params(window_size, half_life, resolution)
        self.window_size = window_size
        self.half_life = half_life
        self.resolution = resolution
        self._reset()

    def _stream_mode(self) -> dict:
        return {"venn_abers": True}

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"window_size": 50}
        yield {"half_life": 30.0}
        yield {"resolution": 0.01}
        yield {"window_size": 40, "half_life": 15.0, "resolution": 0.05}

    # ------------------------------------------------------------------ prediction

    def _predict_many_validated(self, scores: np.ndarray) -> np.ndarray:
        return self._stream.predict_many(scores)
