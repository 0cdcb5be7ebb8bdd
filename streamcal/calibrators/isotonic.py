"""Online isotonic calibration: the river-style shell over the PAV block store."""

from __future__ import annotations

import collections
import math

import numpy as np

from streamcal import _validation as V
from streamcal.base import BinaryCalibrator
from streamcal.core.pav import BlockView, IsotonicBlockStore

__all__ = ["OnlineIsotonic"]

# With ``half_life``, stored weights grow as 2**(age/h) and are renormalised by an exact
# power of two once a new event would weigh 2**_RENORM_EXPONENT or more.
_RENORM_EXPONENT = 512
# ... and what has decayed by more than this many half-lives is forgotten.
_FORGET_HALF_LIVES = 1000


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
    Cost per event (``b`` blocks, ``m`` distinct scores in the block the event falls
    into): O(log b + log m) to locate it, plus O(m) work done in C (a new distinct score
    is inserted by a memory move; the check for a split is skipped while per-block gap
    bounds rule it out, and otherwise scans that block with numpy). A split or a merge costs O(m); merges are amortised O(1) per block
    created. With ``resolution=r``, ``m <= floor(1/r + 1/2) + 1``. Prediction is O(log b).
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
        self._store = IsotonicBlockStore()
        # (key, label, stored weight, event index) of the events in the window
        self._window = collections.deque() if self.window_size is not None else None
        self._n_events = 0
        # half-life bookkeeping: a new event at index t weighs
        # w * 2 ** ((t - self._t_ref) / half_life + self._phase)
        self._t_ref = 0
        self._phase = 0.0

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

    def _weight_factor(self) -> float:
        """Factor applied to the weight of the next event (half-life only)."""
        e = (self._n_events - self._t_ref) / self.half_life + self._phase
        if e >= _RENORM_EXPONENT:
            self._renormalise(e)
            e = self._phase
        return 2.0**e

    def _renormalise(self, e: float) -> None:
        shift = math.floor(e)
        # exact: scaling by a power of two does not round (ldexp, so no 2**-shift underflow)
        self._store.scale_by_power_of_two(-shift)
        if self._window is not None:
            ldexp = math.ldexp
            self._window = collections.deque((x, y, ldexp(w, -shift), t) for x, y, w, t in self._window)
        else:
            self._store.drop_light_cells(2.0 ** (-_FORGET_HALF_LIVES))
        self._t_ref = self._n_events
        self._phase = e - shift

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
        name = "OnlineIsotonic"
        s = V.check_score(score, name, "learn_one")
        y = V.check_label(label, name, "learn_one")
        w = V.check_weight(w, name, "learn_one")
        x = self._key(s)
        t = self._n_events
        window = self._window
        if self.half_life is not None:
            if window is not None:
                # events beyond the forgetting horizon leave first, before any
                # renormalisation could push their weights below the normal range
                horizon = _FORGET_HALF_LIVES * self.half_life
                while window and t - window[0][3] > horizon:
                    self._forget(window.popleft())
            w = w * self._weight_factor()
            window = self._window  # a renormalisation replaces the deque
        if window is not None:
            window.append((x, y, w, t))
            if len(window) > self.window_size:
                self._forget(window.popleft())
        if w > 0.0:
            self._store.add(x, w, y)
        self._n_events = t + 1

    def _forget(self, event) -> None:
        """Remove an event that left the window from the store."""
        x, y, w, _ = event
        if w > 0.0 and self._store.remove(x, w, y):
            # the other events of this score weigh far less than the removed one:
            # rather than keep a rounding residue, the store dropped the cell; re-add
            # them exactly from the window
            for x2, y2, w2, _ in self._window:
                if x2 == x and w2 > 0.0:
                    self._store.add(x2, w2, y2)

    def _learn_many_validated(self, scores, labels, w) -> None:
        n = len(scores)
        if n == 0:
            return
        store = self._store
        if self.half_life is not None or n * 256 < store.n_cells or n < 16:
            super()._learn_many_validated(scores, labels, w)
            return
        keys = self._keys(scores)
        t0 = self._n_events
        if self._window is None:
            old = store.cells()
            xs = np.concatenate([old[0], keys])
            ws = np.concatenate([old[1], w])
            ss = np.concatenate([old[2], w * labels])
            ns = np.concatenate([old[3], np.ones(n, dtype=np.int64)])
        else:
            N = self.window_size
            if n * 8 < N:
                super()._learn_many_validated(scores, labels, w)
                return
            kept = list(self._window)[max(0, len(self._window) + n - N):] if n < N else []
            tail = slice(max(0, n - N), n)
            tk = np.arange(t0, t0 + n)[tail]
            xs = np.concatenate([np.array([e[0] for e in kept], dtype=np.float64), keys[tail]])
            ys = np.concatenate([np.array([e[1] for e in kept], dtype=np.float64), labels[tail]])
            wk = np.concatenate([np.array([e[2] for e in kept], dtype=np.float64), w[tail]])
            self._window = collections.deque(kept)
            self._window.extend(zip(keys[tail].tolist(), labels[tail].tolist(), w[tail].tolist(), tk.tolist()))
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
        self._n_events = t0 + n

    # ------------------------------------------------------------------ prediction

    def predict_one(self, score: float) -> float:
        """Return the calibrated probability for ``score``; O(log blocks).

        Before any positive-weight event has been learnt, ``score`` itself.
        """
        s = V.check_score(score, "OnlineIsotonic", "predict_one")
        store = self._store
        if not store._blocks:
            return s
        x = self._key(s)
        v = store.predict_step(x) if self.interpolation == "step" else store.predict_linear(x)
        return 1.0 if v > 1.0 else (0.0 if v < 0.0 else v)

    def _predict_many_validated(self, scores: np.ndarray) -> np.ndarray:
        store = self._store
        if not store._blocks:
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
        w = 1.0
        if self.half_life is not None:
            # the weight the next event would get; capped where it would overflow (only
            # for half_life < 1/500, where the new event outweighs everything by > 2**480)
            e = (self._n_events - self._t_ref) / self.half_life + self._phase
            w = 2.0 ** min(e, 1000.0)
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
        rel = 1.0
        if self.half_life is not None:
            rel = 2.0 ** -((self._n_events - 1 - self._t_ref) / self.half_life + self._phase)
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
        return self._n_events

    # ------------------------------------------------------------------ state

    def _get_state(self) -> dict:
        return {
            "blocks": self._store.to_lists(),
            "window": None if self._window is None else [list(e) for e in self._window],
            "n_events": self._n_events,
            "t_ref": self._t_ref,
            "phase": self._phase,
        }

    def _set_state(self, state: dict) -> None:
        self._store = IsotonicBlockStore.from_lists(state["blocks"])
        win = state["window"]
        self._window = None if win is None else collections.deque((float(x), float(y), float(w), int(t)) for x, y, w, t in win)
        self._n_events = int(state["n_events"])
        self._t_ref = int(state["t_ref"])
        self._phase = float(state["phase"])

    def _check(self) -> None:
        """Assert the block invariants and that the window matches the stored cells."""
        self._store._check()
        if self._window is not None:
            assert len(self._window) <= self.window_size, "window too long"
            agg: dict = {}
            for x, y, w, _ in self._window:
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
