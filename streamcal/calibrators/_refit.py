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

from streamcal import _validation as V

__all__ = ["DEFAULT_REFIT_EVERY", "DEFAULT_WINDOW_SIZE", "RefitWindow", "check_refit_params"]

#: defaults shared by every refittable calibrator
DEFAULT_WINDOW_SIZE = 2000
DEFAULT_REFIT_EVERY = 200


def check_refit_params(owner: str, window_size, refit_every) -> None:
    """Validate ``window_size`` (int >= 1) and ``refit_every`` (int >= 1)."""
    V.check_int(window_size, owner, "window_size", minimum=1)
    V.check_int(refit_every, owner, "refit_every", minimum=1)


class RefitWindow:
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

    __slots__ = ("_events", "n_pushed", "refit_every", "window_size")

    def __init__(self, window_size: int, refit_every: int):
        self.window_size = int(window_size)
        self.refit_every = int(refit_every)
        self._events = collections.deque(maxlen=self.window_size)
        self.n_pushed = 0

    def push(self, event) -> bool:
        """Add ``event`` (evicting the oldest if full); True when a refit is due."""
        self._events.append(event)
        self.n_pushed += 1
        return self.n_pushed % self.refit_every == 0

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
        self._events = collections.deque((tuple(e) for e in data[1]), maxlen=self.window_size)

    def _check(self) -> None:
        assert len(self._events) <= self.window_size
        assert len(self._events) == min(self.n_pushed, self.window_size)
