"""Online isotonic calibration: the river-style shell over the PAV block store."""

from __future__ import annotations

import math

import numpy as np

from streamcal import _validation as V
from streamcal.base import BinaryCalibrator
from streamcal.core._isotonic_stream import IsotonicStream
from streamcal.core.pav import BlockView, IsotonicBlockStore

__all__ = ["OnlineIsotonic"]



class OnlineIsotonic(BinaryCalibrator):
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
          at both ends.
    window_size
        If set, the fit is exactly the isotonic regression of the last ``window_size``
        events; the oldest event is removed on each arrival (no periodic refit).
    half_life
        If set, exponential forgetting: the fit is the weighted isotonic regression with
        each event's weight multiplied by ``2 ** (-age / half_life)``, age counted in
        events (the newest has age 0; every ``learn_one`` call ages the others by one,
        whatever its weight). Weights are stored relative to a moving reference and
        renormalised by exact powers of two, so arbitrarily long streams neither
        overflow nor underflow. What has decayed by more than 1000 half-lives (weight
        below ``2 ** -1000`` of a new event) is forgotten: with ``window_size`` such
        events leave the window; without, a score whose total weight fell below that
        threshold is dropped when weights are renormalised (every 512 half-lives).
    resolution
        If set, scores are pooled onto a grid of width ``r``: a score ``s`` (when learning
        and when predicting) is replaced by its cell ``k = floor(s / r + 1/2)``, the
        score ``k * r``. At most ``floor(1/r + 1/2) + 1`` cells exist, so memory is
        O(1 / r) however long the stream, and the
        calibrator is exactly the isotonic regression of the rounded scores.

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
    leaf's 64 cells of memory. Prediction is O(log n). With ``resolution=r``,
    ``n <= floor(1/r + 1/2) + 1``. The window, the forgetting clock and the grid run in
    compiled code (:mod:`streamcal.core._isotonic_stream`), as does
    ``predict_learn_many``.
    ``learn_many`` refits from aggregated cells in C when the batch is large compared to
    the state (O((n + cells) log(n + cells))) and loops otherwise; with ``half_life``
    it always loops.

    Before any positive-weight label, ``predict_one`` returns the score unchanged.

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

    """

    _monotone = True
    _bounded_memory_params = ("window_size", "resolution")

    def __init__(
        self,
        interpolation: str = "step",
        window_size: int | None = None,
        half_life: float | None = None,
        resolution: float | None = None,
    ):
        name = type(self).__name__
        V.check_param(
            name, "interpolation", interpolation, interpolation in ("step", "linear"),
            "a str among {'step', 'linear'}",
        )
        V.check_param(
            name, "window_size", window_size,
            window_size is None or (V.is_integer(window_size) and window_size >= 1),
            "an int >= 1 or None",
        )
        V.check_param(
            name, "half_life", half_life,
            half_life is None or (V.is_real(half_life) and 0 < half_life < math.inf),
            "a finite real number > 0 or None",
        )
        V.check_param(
            name, "resolution", resolution,
            resolution is None or (V.is_real(resolution) and 0 < resolution <= 1),
            "a real number in (0, 1] or None",
        )
        self.interpolation = interpolation
        self.window_size = window_size
        self.half_life = half_life
        self.resolution = resolution
        self._reset()

    def _reset(self) -> None:
        self._stream = IsotonicStream(
            IsotonicBlockStore(),
            resolution=self.resolution or 0.0,
            half_life=self.half_life or 0.0,
            window_size=self.window_size or 0,
            linear=self.interpolation == "linear",
        )

    @property
    def _store(self) -> IsotonicBlockStore:
        """The PAV block store (keys are grid cells with ``resolution``)."""
        return self._stream.store

    @property
    def _t_ref(self) -> int:
        """Index of the event of the latest renormalisation (half-life only)."""
        return self._stream.t_ref

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"interpolation": "linear"}
        yield {"window_size": 50}
        yield {"half_life": 30.0}
        yield {"resolution": 0.01, "interpolation": "linear"}
        yield {"window_size": 40, "half_life": 15.0, "resolution": 0.05}

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

    def learn_one(self, score: float, label: bool | int, w: float = 1.0) -> None:
        """Update the fit with one event. Amortised cost: see the class Notes.

        Parameters
        ----------
        score
            The model's score, a real number in [0, 1].
        label
            The observed outcome: 0, 1, False or True.
        w
            Sample weight, a finite real number >= 0 (0: the event only ages the others
            and takes a window slot).
        """
        self._stream.learn_one(score, label, w)

    def _learn_many_validated(self, scores, labels, w) -> None:
        n = len(scores)
        if n == 0:
            return
        stream = self._stream
        store = stream.store
        if self.half_life is not None or n * 256 < store.n_cells or n < 16:
            stream.learn_many(scores, labels, w)
            return
        keys = self._keys(scores)
        t0 = stream.n_events
        if self.window_size is None:
            total = stream.total_weight() + float(np.sum(w))
            if not total < math.inf:
                # the sums would overflow somewhere in the batch: the loop names the event
                stream.learn_many(scores, labels, w)
                return
            old = store.cells()
            xs = np.concatenate([old[0], keys])
            ws = np.concatenate([old[1], w])
            ss = np.concatenate([old[2], w * labels])
            ns = np.concatenate([old[3], np.ones(n, dtype=np.int64)])
        else:
            N = self.window_size
            if n * 8 < N:
                stream.learn_many(scores, labels, w)
                return
            window = stream.window_events()
            kept = window[max(0, len(window) + n - N):] if n < N else []
            tail = slice(max(0, n - N), n)
            tk = np.arange(t0, t0 + n)[tail]
            xs = np.concatenate([np.array([e[0] for e in kept], dtype=np.float64), keys[tail]])
            ys = np.concatenate([np.array([e[1] for e in kept], dtype=np.float64), labels[tail]])
            wk = np.concatenate([np.array([e[2] for e in kept], dtype=np.float64), w[tail]])
            if not float(np.sum(wk)) < math.inf:
                stream.learn_many(scores, labels, w)
                return
            stream.set_window_events(kept + [list(e) for e in zip(keys[tail].tolist(), labels[tail].tolist(), w[tail].tolist(), tk.tolist())])
            ws, ss, ns = wk, wk * ys, np.ones(len(xs), dtype=np.int64)
        pos = ws > 0
        xs, ws, ss, ns = xs[pos], ws[pos], ss[pos], ns[pos]
        ux, inv = np.unique(xs, return_inverse=True)
        store.rebuild(
            ux,
            np.bincount(inv, weights=ws, minlength=len(ux)),
            np.bincount(inv, weights=ss, minlength=len(ux)),
            np.bincount(inv, weights=ns, minlength=len(ux)).astype(np.int64),
        )
        stream.n_events = t0 + n
        stream.reset_total()

    def _predict_learn_many_validated(self, scores, labels, w) -> np.ndarray:
        return self._stream.predict_learn_many(scores, labels, w)

    # ------------------------------------------------------------------ prediction

    def predict_one(self, score: float) -> float:
        """Return the calibrated probability for ``score``; O(log blocks).

        Before any positive-weight event has been learnt, ``score`` itself.
        """
        return self._stream.predict_one(score)

    def _predict_many_validated(self, scores: np.ndarray) -> np.ndarray:
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

    def predict_interval_one(self, score: float) -> tuple[float, float]:
        """Inductive Venn-ABERS interval ``(p0, p1)`` at ``score``.

        ``p0`` (resp. ``p1``) is the isotonic fit at ``score`` after adding the event
        ``(score, 0)`` (resp. ``(score, 1)``), with the weight a new event would get, to
        the events currently held (the window is not shifted). The state is not changed.
        With no data the interval is ``(0.0, 1.0)``. Cost O(m + cascade), like one update.

        Examples
        --------
        >>> cal = OnlineIsotonic()
        >>> cal.learn_many([0.2, 0.4, 0.6, 0.8], [0, 1, 0, 1])
        >>> cal.predict_interval_one(0.5)
        (0.3333333333333333, 0.6666666666666666)

        """
        s = V.check_score(score, "OnlineIsotonic", "predict_interval_one")
        x = self._key(s)
        # the weight the next event would get; capped where it would overflow (only
        # for half_life < 1/500, where the new event outweighs everything by > 2**480)
        w = self._stream.next_weight()
        p0 = self._store.hypothetical_value(x, w, 0.0)
        p1 = self._store.hypothetical_value(x, w, 1.0)
        return (min(1.0, max(0.0, p0)), min(1.0, max(0.0, p1)))

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

    # ------------------------------------------------------------------ state

    def _get_state(self) -> dict:
        stream = self._stream
        return {
            "blocks": stream.store.to_lists(),
            "window": stream.window_events(),
            "n_events": stream.n_events,
            "t_ref": stream.t_ref,
            "phase": stream.phase,
        }

    def _set_state(self, state: dict) -> None:
        self._reset()
        stream = self._stream
        stream.store = IsotonicBlockStore.from_lists(state["blocks"])
        if state["window"] is not None:
            stream.set_window_events(state["window"])
        stream.n_events = int(state["n_events"])
        stream.t_ref = int(state["t_ref"])
        stream.phase = float(state["phase"])
        stream.reset_total()

    def _check(self) -> None:
        """Assert the block invariants and that the window matches the stored cells."""
        self._store._check()
        window = self._stream.window_events()
        if window is not None:
            assert len(window) <= self.window_size, "window too long"
            agg: dict = {}
            for x, y, w, _ in window:
                if w > 0:
                    W, S, n = agg.get(x, (0.0, 0.0, 0))
                    agg[x] = (W + w, S + w * y, n + 1)
            xs, ws, ss, ns = self._store.cells()
            assert sorted(agg) == xs.tolist(), "window keys differ from stored cells"
            for x, W, S, n in zip(xs.tolist(), ws.tolist(), ss.tolist(), ns.tolist()):
                eW, eS, en = agg[x]
                assert en == n, f"cell {x}: {n} events stored, {en} in the window"
                tol = 1e-12 * max(W, eW)  # rounding residue is relative to the cell's weight
                assert math.isclose(W, eW, rel_tol=1e-9, abs_tol=tol), f"cell {x}: weight {W} != {eW}"
                assert math.isclose(S, eS, rel_tol=1e-9, abs_tol=tol), f"cell {x}: label sum {S} != {eS}"
