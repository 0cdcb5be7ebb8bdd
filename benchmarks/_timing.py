"""Timing helpers shared by the hand-run benchmarks (not part of streamcal, not a test).

Every figure the benchmarks report is a ratio against a peer timed in the same run, with
the two measurements interleaved, because the machines these run on are shared and
noisy. The loops here are written the same way for the calibrator and for its peer
(methods bound to locals, inputs prepared outside the timed region) so that the ratio
compares the work done, not the harness.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import gc
import itertools
import json
import platform
import statistics
import subprocess
import time
import tracemalloc

__all__ = [
    "old_new_rounds",
    "add_run_arguments",
    "gc_paused",
    "git_commit",
    "interleaved",
    "race_river",
    "run_calibrator",
    "run_learn_only",
    "run_river",
    "spread",
    "start_run",
    "traced_memory",
    "verdict",
    "write_results",
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
    for j, (a, b) in enumerate(itertools.pairwise(bounds)):
        s = scores[a:b]
        y = labels[a:b]
        for i in range(k):
            r = (i + j) % k
            run, state = runs[r]
            times[r].append(run(state, s, y))
    return bounds, times


def timed_progressive_log_loss(model, events) -> tuple:
    """CPU seconds of river's ``progressive_val_score`` of ``model`` over ``events``
    (river's LogLoss), and that log loss: the ``timed`` of :func:`old_new_rounds` in the
    compose and package comparisons."""
    from river import evaluate, metrics

    metric = metrics.LogLoss()
    t0 = time.process_time()
    evaluate.progressive_val_score(events, model, metric)
    return time.process_time() - t0, metric.get()


def old_new_rounds(runs: dict, rounds: int, timed, n_events: int, label: str, width: int) -> str:
    """Time each model maker of ``runs`` ("raw", "old", "new") once a round, in rotating
    order, the GC paused: ``timed(model)`` returns (CPU seconds, a result that old and new
    must agree on). Returns the line "label old/raw new/raw new/old fastest us per event"
    of the medians of the per-round ratios (the compose and package comparisons)."""
    t = {k: [] for k in runs}
    with gc_paused(True):
        for r in range(rounds):
            order = list(runs)[r % 3 :] + list(runs)[: r % 3]
            out = {}
            for k in order:
                dt, out[k] = timed(runs[k]())
                t[k].append(dt)
            assert out["old"] == out["new"], (out["old"], out["new"])
    ratio = lambda a, b: statistics.median(x / y for x, y in zip(t[a], t[b]))  # noqa: E731
    fastest = ", ".join(f"{1e6 * min(t[k]) / n_events:.1f}" for k in runs)
    return (
        f"{label:<{width}} {ratio('old', 'raw'):>9.3f}x {ratio('new', 'raw'):>9.3f}x "
        f"{ratio('new', 'old'):>9.3f}x   {fastest}"
    )


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


def race_river(
    run, state, scores: list, labels: list, segment: int, gc_on: bool
) -> dict:
    """Race ``run(state, scores, labels)`` against a fresh river LogisticRegression
    (:func:`run_river`) on the same events, interleaved (:func:`interleaved`), with the
    garbage collector paused unless ``gc_on``.

    Returns the ratio of the times on each segment (:func:`spread` of them) and both
    costs in microseconds per event: ``{"ratio", "us_per_event",
    "river_us_per_event"}``.
    """
    from river import linear_model

    runs = [(run, state), (run_river, linear_model.LogisticRegression())]
    with gc_paused(not gc_on):
        _, (t_run, t_lr) = interleaved(runs, scores, labels, segment)
    n = len(scores)
    return {
        "ratio": spread(a / b for a, b in zip(t_run, t_lr)),
        "us_per_event": 1e6 * sum(t_run) / n,
        "river_us_per_event": 1e6 * sum(t_lr) / n,
    }


def add_run_arguments(parser: argparse.ArgumentParser, *extra) -> None:
    """The options of every ratio benchmark: ``--quick``, ``--n``, ``--segment``, then
    ``extra`` (``(flags, kwargs)`` pairs), then ``--gc`` and ``--json``."""
    parser.add_argument(
        "--quick", action="store_true", help="40,000 events instead of 200,000"
    )
    parser.add_argument("--n", type=int, default=None)
    parser.add_argument("--segment", type=int, default=2000)
    for flags, kwargs in extra:
        parser.add_argument(*flags, **kwargs)
    parser.add_argument(
        "--gc", action="store_true", help="leave the garbage collector running"
    )
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="time with the process's CPU time (time.process_time) instead of the wall "
        "clock: on a machine shared with other jobs, the time spent descheduled is "
        "then not counted",
    )
    parser.add_argument("--json", default=None, help="write the results to this file")


def start_run(parser: argparse.ArgumentParser, argv, version: str, make_stream):
    """Parse the options (see :func:`add_run_arguments`), make the stream of ``n``
    events with ``make_stream(n, seed=0)`` and print what is timed, where, on how many
    events. Returns ``(args, n, commit, stream)``."""
    global perf_counter
    args = parser.parse_args(argv)
    # the timers of this module read this global at each call
    perf_counter = time.process_time if args.cpu else time.perf_counter
    n = args.n or (40_000 if args.quick else 200_000)
    stream = make_stream(n, seed=0)
    commit = git_commit()
    print(
        f"streamcal {version} @ {commit}, Python {platform.python_version()}, {n} events"
        + (", CPU time" if args.cpu else "")
    )
    return args, n, commit, stream


def git_commit() -> str:
    """The short hash of the checked-out commit ("" outside a git checkout)."""
    return subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        check=False,
        capture_output=True,
        text=True,
    ).stdout.strip()


def verdict(median: float, target: float | None) -> str:
    """``"<= 1.0x PASS"`` or ``"... FAIL"`` for a median ratio against its target, ""
    without one."""
    if target is None:
        return ""
    return f"<= {target}x " + ("PASS" if median <= target else "FAIL")


def write_results(path: str, commit: str, n: int, segment: int, results: list) -> None:
    """Write the results of a run, dated, as JSON."""
    with open(path, "w") as f:
        json.dump(
            {
                "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                "commit": commit,
                "n": n,
                "segment": segment,
                "results": results,
            },
            f,
            indent=2,
        )
