"""Timing helpers shared by the hand-run benchmarks (not part of streamcal, not a test).

Every figure the benchmarks report is a ratio against a peer timed in the same run, with
the two measurements interleaved, because the machines these run on are shared and
noisy. The loops here are written the same way for the calibrator and for its peer
(methods bound to locals, inputs prepared outside the timed region) so that the ratio
compares the work done, not the harness.
"""

from __future__ import annotations

import contextlib
import gc
import statistics
import time
import tracemalloc

__all__ = [
    "gc_paused",
    "interleaved",
    "run_calibrator",
    "run_river",
    "run_learn_only",
    "spread",
    "traced_memory",
]

perf_counter = time.perf_counter


@contextlib.contextmanager
def gc_paused(enabled: bool = True):
    """Pause the cyclic garbage collector while timing, as :mod:`timeit` does.

    With ``enabled=False`` this does nothing (the collector keeps running).
    """
    if not enabled:
        yield
        return
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def run_calibrator(cal, scores: list, labels: list) -> float:
    """Seconds taken by ``predict_one`` then ``learn_one`` on each event, in order.

    ``scores`` and ``labels`` are Python lists (floats, ints) so that no conversion is
    timed; the calibrator's state is updated in place.
    """
    predict = cal.predict_one
    learn = cal.learn_one
    t0 = perf_counter()
    for s, y in zip(scores, labels):
        predict(s)
        learn(s, y)
    return perf_counter() - t0


def run_river(model, scores: list, labels: list) -> float:
    """Seconds taken by a river classifier doing ``predict_proba_one`` then
    ``learn_one`` on the one-feature dict ``{"s": score}`` of each event.

    Building the dict is timed: it is what a caller of the model has to do.
    """
    predict = model.predict_proba_one
    learn = model.learn_one
    t0 = perf_counter()
    for s, y in zip(scores, labels):
        x = {"s": s}
        predict(x)
        learn(x, y)
    return perf_counter() - t0


def run_learn_only(cal, scores: list, labels: list) -> float:
    """Seconds taken by ``learn_one`` alone on each event (used to build state)."""
    learn = cal.learn_one
    t0 = perf_counter()
    for s, y in zip(scores, labels):
        learn(s, y)
    return perf_counter() - t0


def interleaved(runs, scores: list, labels: list, segment: int):
    """Feed the same events to several runners in alternation, ``segment`` events at a
    time, and return each runner's time per segment.

    ``runs`` is a list of ``(run, state)`` pairs called as ``run(state, scores, labels)``
    (e.g. :func:`run_calibrator` and :func:`run_river`), each on its own state. Within
    each segment every runner goes once, and the order rotates from one segment to the
    next, so that a burst of load on a shared machine hits all of them alike. Returns
    ``(bounds, times)``: the segment boundaries and one list of seconds per runner.
    """
    n = len(scores)
    bounds = list(range(0, n, segment)) + [n]
    times = [[] for _ in runs]
    k = len(runs)
    for j, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        s = scores[a:b]
        y = labels[a:b]
        for i in range(k):
            r = (i + j) % k
            run, state = runs[r]
            times[r].append(run(state, s, y))
    return bounds, times


def spread(values) -> dict:
    """Median, min, max and count of a list of measurements."""
    values = list(values)
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "n": len(values),
    }


def traced_memory(build):
    """Run ``build()`` under :mod:`tracemalloc` and return ``(result, current, peak)``.

    ``current`` is the memory still allocated when ``build`` returns (with the result
    held: the size of the state it built), ``peak`` the highest allocated during the
    call, both in bytes and relative to the memory allocated before it started.
    Whatever ``build`` reads (e.g. its input lists) must exist before the call so it is
    not counted. Tracing slows Python down several times: never time under it.
    """
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        result = build()
        gc.collect()
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, current - base, peak - base
