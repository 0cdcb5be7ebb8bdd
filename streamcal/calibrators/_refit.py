"""The sliding window shared by the refittable calibrators (batch algorithms refitted on
the last ``window_size`` events every ``refit_every`` events).

A refittable calibrator keeps a :class:`RefitWindow` of its events; ``learn_one`` pushes
the event (evicting the oldest once the window is full) and, when :meth:`RefitWindow.push`
says a refit is due, applies its pure batch algorithm from :mod:`streamcal.core` to
:meth:`RefitWindow.events`. ``predict_one`` uses the latest fit; before the first refit
the calibrator predicts the scores themselves (cold start).
"""

from __future__ import annotations

import collections
import math
from itertools import chain

import numpy as np

from streamcal import _validation as V
from streamcal.base import MulticlassCalibrator
from streamcal._classes import ClassIndex
from streamcal._kernel_pickle import SlotsPickle

__all__ = [
    "DEFAULT_REFIT_EVERY",
    "DEFAULT_WINDOW_SIZE",
    "PriorAddedLater",
    "RefitWindow",
    "check_refit_params",
]

#: defaults shared by every refittable calibrator
DEFAULT_WINDOW_SIZE = 2000
DEFAULT_REFIT_EVERY = 200

#: The capacity of a refit window under the weight rule (:mod:`streamcal._validation`):
#: the batch fits (isotonic and Bayesian binning, Newton steps on logits, SCIR's split
#: scores) multiply up to three weight sums together (SCIR's fit turns NaN, and loops,
#: with window weights near 1e151), so the window's weight stays below the fourth root
#: of ``DBL_MAX / 4``, about 3.7e76, which leaves a margin.
REFIT_WEIGHT_CAPACITY = V.weight_capacity(4.0, quadratic=True) ** 0.5


class PriorAddedLater:
    """Mixin (placed first) of the calibrators whose ``prior_strength`` parameter came
    after their first snapshots: IRP, MulticlassIRP and the windowed isotonic ones."""

    @classmethod
    def _upgrade_snapshot(cls, params, state, fmt):
        """A snapshot written before ``prior_strength`` existed restores with
        ``prior_strength=0``, the calibrator it was (its fitted values are those of the
        fit without a prior; a prior set by hand in its parameters starts at the next
        refit)."""
        if isinstance(params, dict) and "prior_strength" not in params:
            params = {**params, "prior_strength": 0.0}
        return params, state


def check_refit_params(owner: str, window_size, refit_every) -> None:
    """Validate ``window_size`` (int >= 1) and ``refit_every`` (int >= 1)."""
    V.check_int(window_size, owner, "window_size", minimum=1)
    V.check_int(refit_every, owner, "refit_every", minimum=1)


class RefitWindow(SlotsPickle):
    """The last ``window_size`` events and the refit schedule.

    A refit is due after every ``refit_every``-th push (pushes are counted whatever the
    event's weight: the schedule depends on the stream only, not on its values). Cost
    O(1) per push; memory O(window_size) events.

    Examples
    --------
    >>> win = RefitWindow(window_size=3, refit_every=2)
    >>> [win.push((s, 1, 1.0)) for s in (0.1, 0.2, 0.3, 0.4)]
    [False, True, False, True]
    >>> [e[0] for e in win.events()], win.n_pushed
    ([0.2, 0.3, 0.4], 4)

    """

    __slots__ = ("_events", "held", "n_pushed", "refit_every", "window_size")

    def __init__(self, window_size: int, refit_every: int):
        self.window_size = int(window_size)
        self.refit_every = int(refit_every)
        self._events = collections.deque(maxlen=self.window_size)
        self.n_pushed = 0
        self.held = 0.0  # the weight of the events held (each event's last entry)

    def push(self, event) -> bool:
        """Add ``event`` (evicting the oldest if full); True when a refit is due."""
        self.held = _pushed(self.held, event[-1], self._events[0][-1] if len(self._events) == self.window_size else 0.0)
        self._events.append(event)
        self.n_pushed += 1
        return self.n_pushed % self.refit_every == 0

    def check_room(self, w: float, owner: str, method: str) -> None:
        """The weight rule (:mod:`streamcal._validation`) for one event of weight ``w``:
        raise, naming ``w``, unless the window can hold it with what it holds (before
        an eviction). O(1), O(window) when near the capacity (the sum is then made
        exact)."""
        if w > 0.0 and not self.held + w <= REFIT_WEIGHT_CAPACITY:
            self.held = math.fsum(e[-1] for e in self._events)
            V.check_weight_room(w, self.held, REFIT_WEIGHT_CAPACITY, owner, method)

    def surely_fits(self, ws) -> bool:
        """True when the window holds the weights ``ws`` pushed in turn whatever it
        evicts: their sum with the weight held is within the capacity (a sum beyond
        the double range is not). O(n)."""
        try:
            total = math.fsum(ws)
        except OverflowError:  # "intermediate overflow": beyond the double range
            return False
        return self.held + total <= REFIT_WEIGHT_CAPACITY

    def check_batch(self, ws, owner: str, method: str) -> None:
        """:meth:`check_room` for each weight of a batch pushed in turn (the window
        simulated, nothing changed): the error names the first refused index."""
        if self.surely_fits(ws):
            return
        held = self.held
        weights = collections.deque((e[-1] for e in self._events), maxlen=self.window_size)
        for i, w in enumerate(ws):
            if w > 0.0 and not held + w <= REFIT_WEIGHT_CAPACITY:
                held = math.fsum(weights)
                V.check_weight_room(w, held, REFIT_WEIGHT_CAPACITY, owner, method, f" at index {i}")
            held = _pushed(held, w, weights[0] if len(weights) == self.window_size else 0.0)
            weights.append(w)

    def events(self) -> list:
        """The events in the window, oldest first (a new list)."""
        return list(self._events)

    def __len__(self) -> int:
        return len(self._events)

    def to_list(self) -> list:
        """JSON-safe state (the events must be JSON-safe themselves)."""
        return [self.n_pushed, [list(e) for e in self._events]]

    def load(self, data) -> None:
        """Restore a state written by :meth:`to_list`."""
        self.n_pushed = int(data[0])
        self._events = collections.deque(
            (tuple(e) for e in data[1]), maxlen=self.window_size
        )
        self.held = math.fsum(e[-1] for e in self._events)

    def _check(self) -> None:
        assert len(self._events) <= self.window_size
        assert len(self._events) == min(self.n_pushed, self.window_size)


def _pushed(held: float, w: float, evicted: float) -> float:
    """The held weight after a push of ``w`` that evicts ``evicted`` (never below 0)."""
    return max(0.0, held + w - evicted)


# ------------------------------------------------------------------ multiclass


class _RefitMulticlass(ClassIndex, MulticlassCalibrator):
    """Shared shell of the multiclass calibrators refitted on a :class:`RefitWindow`
    of events ``(class indices, values, label index, w)`` (indices into
    ``_class_list``: no label object twice). Subclasses build the rest of their state
    in ``_reset`` after :meth:`_reset_window`, define the refit hook ``_fit_events``
    (or override :meth:`_refit_window`, which :meth:`learn_one` calls when a refit is
    due), and extend :meth:`_window_state` / :meth:`_load_window_state` with their
    fit."""

    _bounded_memory_params = ("window_size",)

    _merge_refusal = (
        "it is refitted on its last window_size events every refit_every events; that "
        "window, and the schedule of refits, depend on how the two streams interleave"
    )

    def _weights_surely_fit(self, w) -> bool:
        # the window's room is the only weight rule of these calibrators
        return self._window.surely_fits(w)

    def _reset_window(self) -> None:
        self._reset_classes()
        self._window = RefitWindow(self.window_size, self.refit_every)

    def learn_one(self, scores: dict, label, w: float = 1.0) -> None:
        """Add one event to the window; refit when due. O(K), plus the refit (see
        the class Notes).

        Parameters
        ----------
        scores
            Dict class -> probability, a probability vector (a class left out has
            probability 0); with ``input="logits"``, where the calibrator takes it,
            dict class -> logit.
        label
            The observed class (any hashable value but NaN).
        w
            Sample weight, a finite real number >= 0.
        """
        if self._push(scores, label, w):
            self._refit_window()

    def _refit_window(self) -> None:
        """Refit on the window (called by :meth:`learn_one` when a refit is due): the
        batch fit ``_fit_events`` on the window's events, unless a subclass reads the
        window more directly."""
        self._fit_events(self._window_events())

    def _push(self, scores: dict, label, w) -> bool:
        """Validate an event, register its classes and push it to the window; True
        when a refit is due. O(K)."""
        scores, label, w = self._check_event(scores, label, w)
        self._window.check_room(w, type(self).__name__, "learn_one")
        self._discover(scores, label)
        reg = self._classes
        event = (tuple([reg[k] for k in scores]), tuple(scores.values()), reg[label], w)
        return self._window.push(event)

    def _check_batch_weights(self, ws: list, method: str) -> None:
        self._window.check_batch(ws, type(self).__name__, method)

    def _window_events(self) -> list:
        """The window's events as ``(scores, label, w)``."""
        labels = self._class_list
        return [
            (dict(zip([labels[i] for i in idx], vals)), labels[y], w)
            for idx, vals, y, w in self._window.events()
        ]

    def _window_arrays(self):
        """:func:`~streamcal.core.fir.events_to_arrays` of the window's events, read
        from the stored class indices without building dicts (same arrays). O(nK)."""
        kept = [e for e in self._window.events() if e[3] > 0.0]
        n = len(kept)
        if not n:
            return [], np.zeros((0, 0)), np.zeros(0, dtype=np.intp), np.zeros(0)
        lens = np.fromiter((len(e[0]) for e in kept), np.intp, n)
        keys = np.fromiter(
            chain.from_iterable(e[0] for e in kept), np.intp, int(lens.sum())
        )
        values = np.fromiter(
            chain.from_iterable(e[1] for e in kept), np.float64, len(keys)
        )
        labels = np.fromiter((e[2] for e in kept), np.intp, n)
        w = np.fromiter((e[3] for e in kept), np.float64, n)
        # the classes in order of first appearance: each event's keys, then its label
        at_label = np.cumsum(lens + 1) - 1
        seq = np.empty(len(keys) + n, dtype=np.intp)
        is_key = np.ones(len(seq), dtype=bool)
        is_key[at_label] = False
        seq[is_key] = keys
        seq[at_label] = labels
        uniq, first = np.unique(seq, return_index=True)
        order = uniq[np.argsort(first)]
        column = np.empty(int(uniq[-1]) + 1, dtype=np.intp)
        column[order] = np.arange(len(order))
        P = np.zeros((n, len(order)))
        P[np.repeat(np.arange(n), lens), column[keys]] = values
        names = self._class_list
        return [names[i] for i in order.tolist()], P, column[labels], w

    def _window_state(self) -> dict:
        """JSON-safe state of the classes and the window (keys ``classes``,
        ``n_pushed``, ``window``)."""
        n, events = self._window.to_list()
        return {
            "classes": self._classes_state(),
            "n_pushed": n,
            "window": [[list(i), list(v), y, w] for i, v, y, w in events],
        }

    def _validate_state(self, state: dict, check) -> None:
        """The classes and the window (see :meth:`_window_state`); a subclass extends
        it with its fit."""
        K = len(self._validate_classes(check.entry(state, "classes"), check))
        N = self.window_size
        n_pushed = check.int(check.entry(state, "n_pushed"), "state['n_pushed']")
        window = check.list(check.entry(state, "window"), "state['window']", n=min(n_pushed, N), what="events")
        lo, hi = (-math.inf, math.inf) if self._logits else (0.0, 1.0)
        weights = []
        for i, e in enumerate(window):
            at = f"state['window'][{i}]"
            idx, vals, y, w = check.list(e, at, n=4, what="(class indices, scores, label index, weight)")
            idx = check.list(idx, at + "[0]")
            for j, k in enumerate(idx):
                check.int(k, f"{at}[0][{j}]", 0, K - 1)
            check.require(len(set(idx)) == len(idx), at + "[0]", "distinct class indices", idx)
            for j, v in enumerate(check.list(vals, at + "[1]", n=len(idx), what="scores")):
                check.real(v, f"{at}[1][{j}]", lo, hi)
            check.int(y, at + "[2]", 0, K - 1)
            weights.append(check.weight(w, at + "[3]"))
        check.weight_total(weights, "state['window']", REFIT_WEIGHT_CAPACITY)

    def _load_window_state(self, state: dict, memo: dict) -> None:
        """Restore what :meth:`_window_state` wrote."""
        self._load_classes(state["classes"], memo)
        self._window = RefitWindow(self.window_size, self.refit_every)
        self._window.load(
            [
                state["n_pushed"],
                [(tuple(i), tuple(v), y, w) for i, v, y, w in state["window"]],
            ]
        )
