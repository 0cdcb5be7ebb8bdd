"""Reading the next chunk of a log while the engine runs the current one.

The columnar engine alternates two kinds of work per chunk: reading, parsing and
validating it (file reads, pyarrow's parser, numpy's checks: much of it without the
GIL), then the calibrators' compiled passes over it (the grid isotonic store's loop
releases the GIL). :class:`ReadAhead` runs the first kind in a thread, at most
``depth`` chunks ahead of the engine, so the two overlap on a machine with two cores.

The engine sees the same chunks in the same order as without it, and nothing it does
depends on the thread's timing: an exception the reader raises is raised again in the
engine's thread, with the same object (so the same message), when the engine asks for
the chunk that raised it, after every chunk before it; when the engine stops early
(Ctrl-C, a checkpoint's stop, an error of its own) :meth:`ReadAhead.close` stops the
thread and waits for it, and the chunks read ahead are dropped, as an unread iterator
would be. The reader must not share mutable state with the engine.
"""

from __future__ import annotations

import queue
import sys
import threading

__all__ = ["ReadAhead"]

_ITEM, _END, _ERROR = 0, 1, 2

#: The interpreter's thread switch interval (seconds) while a reader thread runs.
SWITCH_INTERVAL = 0.0002

# The switch interval is the process's: readers running at once (replays in several
# threads) lower it once, and the last one to close puts back what it was before the
# first, whatever order they close in.
_switch_lock = threading.Lock()
_switch_users = 0
_switch_saved = 0.0


def _lower_switch_interval() -> None:
    global _switch_users, _switch_saved
    with _switch_lock:
        if _switch_users == 0:
            _switch_saved = sys.getswitchinterval()
            sys.setswitchinterval(min(_switch_saved, SWITCH_INTERVAL))
        _switch_users += 1


def _restore_switch_interval() -> None:
    global _switch_users
    with _switch_lock:
        _switch_users -= 1
        if _switch_users == 0:
            sys.setswitchinterval(_switch_saved)


class ReadAhead:
    """Iterate over ``items`` in a thread, up to ``depth`` items ahead of the caller.

    Parameters
    ----------
    items : iterable
        Iterated in the thread only (from :meth:`__init__` on).
    depth : int, default 1
        How many items may wait, read, for the caller.

    Notes
    -----
    Use it as a context manager (or call :meth:`close`): leaving the block stops and
    joins the thread, whether the iteration ended, raised or was abandoned.

    Examples
    --------
    >>> with ReadAhead(iter([1, 2, 3])) as chunks:
    ...     [c * 10 for c in chunks]
    [10, 20, 30]
    >>> def failing():
    ...     yield 1
    ...     raise ValueError("bad line 7")
    >>> seen = []
    >>> with ReadAhead(failing()) as chunks:
    ...     try:
    ...         for c in chunks:
    ...             seen.append(c)
    ...     except ValueError as exc:
    ...         print(seen, exc)
    [1] bad line 7
    """

    def __init__(self, items, depth: int = 1):
        if not (isinstance(depth, int) and depth >= 1):
            raise ValueError(
                f"The 'depth' parameter of ReadAhead must be an int >= 1. Got {depth!r} instead."
            )
        self._lowered = False
        self._items = iter(items)
        self._queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._finished = False
        self._thread = threading.Thread(
            target=self._run, name="streamcal-replay-reader", daemon=True
        )
        # the engine's thread takes the GIL back after each pass without it: by default
        # it would wait up to 5 ms for the reader's Python code to hand it over
        _lower_switch_interval()
        self._lowered = True
        try:
            self._thread.start()
        except BaseException:  # no thread (e.g. none can be made): the interval back
            self._lowered = False
            _restore_switch_interval()
            raise

    def _run(self) -> None:
        try:
            for item in self._items:
                if not self._put((_ITEM, item)):
                    return
        except BaseException as exc:  # handed over to the caller's thread
            self._put((_ERROR, exc))
        else:
            self._put((_END, None))

    def _put(self, entry) -> bool:
        """Queue ``entry``; False (not queued) once :meth:`close` asked to stop."""
        while not self._stop.is_set():
            try:
                self._queue.put(entry, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def __iter__(self):
        return self

    def __next__(self):
        if self._finished:
            raise StopIteration
        kind, value = self._queue.get()
        if kind == _ITEM:
            return value
        self._finished = True
        self._thread.join()
        if kind == _ERROR:
            try:
                raise value
            finally:
                value = None  # no reference cycle through the traceback
        raise StopIteration

    def close(self) -> None:
        """Stop the thread (after the item it is reading, if any) and wait for it."""
        self._finished = True
        self._stop.set()
        self._thread.join()
        if self._lowered:
            self._lowered = False
            _restore_switch_interval()
        # drop what was read ahead
        while True:
            try:
                self._queue.get_nowait()
            except queue.Empty:
                break

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
