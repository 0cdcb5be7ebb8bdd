"""Benchmarks of :class:`streamcal.OnlineIsotonic`, as ratios against peers timed in the
same run. Run by hand (never by CI or pytest):

    python benchmarks/bench_online_isotonic.py            # full sizes, ~5-10 minutes
    python benchmarks/bench_online_isotonic.py --quick    # smaller sizes, ~1 minute
    python benchmarks/bench_online_isotonic.py --json results.json

See benchmarks/README.md for what each target means and the last measured results.

The machine is assumed shared and noisy: the calibrator and its peer are timed in
alternation on consecutive chunks of the same stream (or on repeated copies of the same
state), and every figure comes with its spread over those paired measurements.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import json
import math
import os
import pickle
import platform
import pstats
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _timing  # noqa: E402
from _timing import (  # noqa: E402
    gc_paused,
    interleaved,
    run_calibrator,
    run_learn_only,
    run_river,
    spread,
    traced_memory,
)

import streamcal  # noqa: E402
from streamcal import OnlineIsotonic  # noqa: E402

perf_counter = time.perf_counter


# ---------------------------------------------------------------------------- data


def true_probability(s: np.ndarray) -> np.ndarray:
    """The miscalibration: P(y=1 | score s) = sigmoid(2 * logit(s)) = s^2 / (s^2 + (1-s)^2).

    Smooth and increasing; the model is under-confident, so the calibrator must stretch
    its scores away from 1/2.
    """
    return s * s / (s * s + (1.0 - s) * (1.0 - s))


def make_stream(n: int, seed: int):
    """Scores ~ Beta(2, 2) (distinct floats), labels ~ Bernoulli(true_probability)."""
    rng = np.random.default_rng(seed)
    scores = rng.beta(2.0, 2.0, size=n)
    labels = (rng.random(n) < true_probability(scores)).astype(np.int64)
    return scores, labels


def river_lr():
    from river import linear_model

    return linear_model.LogisticRegression()


# ---------------------------------------------------------------------------- target 1


def stream_race(params, scores, labels, tail, chunk, segment, repeats, gc_on, log):
    """Calibrator (``predict_one`` + ``learn_one``) against river's LogisticRegression
    (``predict_proba_one`` + ``learn_one`` on ``{"s": score}``) on the same stream.

    Both run through the stream in alternation, ``segment`` events at a time, each on
    its own state, so both see the same machine load; times are reported per chunk of
    ``chunk`` events. The last ``tail`` events, where the calibrator's state is largest,
    are then replayed ``repeats - 1`` more times, the same way, from pickled copies of
    both states taken just before the tail.
    """
    n = len(scores)
    cut = n - tail
    bounds = sorted(set(list(range(0, cut, chunk)) + [cut, n]))
    cal = OnlineIsotonic(**params)
    lr = river_lr()
    t_cal, t_lr, sizes = [], [], []
    snapshot = None
    with gc_paused(not gc_on):
        for a, b in zip(bounds[:-1], bounds[1:]):
            if a == cut:
                snapshot = (pickle.dumps(cal), pickle.dumps(lr))
            _, (tc, tl) = interleaved([(run_calibrator, cal), (run_river, lr)],
                                      scores[a:b], labels[a:b], segment)
            tc, tl = sum(tc), sum(tl)
            t_cal.append(tc)
            t_lr.append(tl)
            sizes.append(b - a)
            log(f"    events {a:>9,}-{b:>9,}: calibrator {tc / (b - a) * 1e6:7.2f} us/event, "
                f"river LR {tl / (b - a) * 1e6:6.2f} us/event, ratio {tc / tl:6.2f}")
        tail_cal = [t_cal[-1] / tail]
        tail_lr = [t_lr[-1] / tail]
        s, y = scores[cut:], labels[cut:]
        for r in range(repeats - 1):
            c = pickle.loads(snapshot[0])
            m = pickle.loads(snapshot[1])
            _, (tc, tl) = interleaved([(run_calibrator, c), (run_river, m)], s, y, segment)
            tc, tl = sum(tc), sum(tl)
            tail_cal.append(tc / tail)
            tail_lr.append(tl / tail)
            log(f"    tail replay {r + 1}: calibrator {tc / tail * 1e6:7.2f} us/event, "
                f"river LR {tl / tail * 1e6:6.2f} us/event, ratio {tc / tl:6.2f}")
            del c, m
    chunk_ratios = [c / l for c, l in zip(t_cal, t_lr)]
    tail_ratios = [c / l for c, l in zip(tail_cal, tail_lr)]
    views = cal.blocks
    return {
        "params": params,
        "n_events": n,
        "tail_events": tail,
        "stream": {
            "calibrator_us_per_event": sum(t_cal) / n * 1e6,
            "river_lr_us_per_event": sum(t_lr) / n * 1e6,
            "ratio": sum(t_cal) / sum(t_lr),
            "chunk_ratios": spread(chunk_ratios),
            "chunk_sizes": sizes,
            "chunk_calibrator_us_per_event": [t / k * 1e6 for t, k in zip(t_cal, sizes)],
            "chunk_river_lr_us_per_event": [t / k * 1e6 for t, k in zip(t_lr, sizes)],
        },
        "tail": {
            "calibrator_us_per_event": spread([t * 1e6 for t in tail_cal]),
            "river_lr_us_per_event": spread([t * 1e6 for t in tail_lr]),
            "ratio": spread(tail_ratios),
        },
        "final_state": {
            "blocks": len(views),
            "cells": sum(v.n_cells for v in views),
        },
        "_snapshot": snapshot[0],
    }


# ---------------------------------------------------------------------------- target 2


def run_sklearn_refit(iso, bx, by, pos, scores, labels):
    """Per event: predict the score with the current fit, put the event into the ring
    buffer (overwriting the oldest) and refit ``iso`` on the whole window."""
    size = len(bx)
    predict = iso.predict
    fit = iso.fit
    t0 = perf_counter()
    for s, y in zip(scores, labels):
        predict([s])
        bx[pos] = s
        by[pos] = y
        pos += 1
        if pos == size:
            pos = 0
        fit(bx, by)
    return perf_counter() - t0, pos


def window_race(window, scores, labels, online_events, sklearn_events, rounds, segment, gc_on, log):
    """``OnlineIsotonic(window_size=window)`` against refitting scikit-learn's
    ``IsotonicRegression(out_of_bounds="clip")`` on the last ``window`` events for
    every event (both also predict each score before learning it). Both are filled
    with the first ``window`` events (untimed), then timed in ``rounds`` rounds, each
    of ``online_events / rounds`` online events and ``sklearn_events / rounds`` refits,
    cut into slices of about ``segment`` online events that alternate with a few refits.
    Per-event times are compared.
    """
    from sklearn.isotonic import IsotonicRegression

    W = window
    cal = OnlineIsotonic(window_size=W)
    run_learn_only(cal, scores[:W], labels[:W])
    bx = np.array(scores[:W], dtype=np.float64)
    by = np.array(labels[:W], dtype=np.float64)
    iso = IsotonicRegression(out_of_bounds="clip")
    iso.fit(bx, by)
    pos = 0
    on_chunk = max(1, online_events // rounds)
    sk_chunk = max(1, sklearn_events // rounds)
    slices = max(1, min(on_chunk // segment, sk_chunk))
    on_cuts = [on_chunk * i // slices for i in range(slices + 1)]
    sk_cuts = [sk_chunk * i // slices for i in range(slices + 1)]
    oc = sc = W
    t_on, t_sk = [], []
    with gc_paused(not gc_on):
        for r in range(rounds):
            to = ts = 0.0
            for j in range(slices):
                o0, o1 = oc + on_cuts[j], oc + on_cuts[j + 1]
                s0, s1 = sc + sk_cuts[j], sc + sk_cuts[j + 1]
                if (r + j) % 2 == 0:
                    to += run_calibrator(cal, scores[o0:o1], labels[o0:o1])
                    dt, pos = run_sklearn_refit(iso, bx, by, pos, scores[s0:s1], labels[s0:s1])
                else:
                    dt, pos = run_sklearn_refit(iso, bx, by, pos, scores[s0:s1], labels[s0:s1])
                    to += run_calibrator(cal, scores[o0:o1], labels[o0:o1])
                ts += dt
            oc += on_chunk
            sc += sk_chunk
            t_on.append(to / on_chunk)
            t_sk.append(ts / sk_chunk)
            log(f"    round {r + 1}: online {t_on[-1] * 1e6:7.2f} us/event, "
                f"sklearn refit {t_sk[-1] * 1e6:9.1f} us/event, speed-up {t_sk[-1] / t_on[-1]:7.1f}x")
    views = cal.blocks
    return {
        "window_size": W,
        "online_events": on_chunk * rounds,
        "sklearn_events": sk_chunk * rounds,
        "online_us_per_event": spread([t * 1e6 for t in t_on]),
        "sklearn_us_per_event": spread([t * 1e6 for t in t_sk]),
        "speedup": spread([s / o for s, o in zip(t_sk, t_on)]),
        "final_state": {"blocks": len(views), "cells": sum(v.n_cells for v in views)},
    }


# ---------------------------------------------------------------------------- target 3


def batch_race(modes, scores, labels, repeats, gc_on, log):
    """``learn_many`` of the whole batch into a fresh calibrator, per mode, against
    scikit-learn's ``IsotonicRegression(out_of_bounds="clip").fit`` on the same arrays
    (the batch peer), in alternation, ``repeats`` times."""
    from sklearn.isotonic import IsotonicRegression

    n = len(scores)
    times = {name: [] for name in modes}
    t_sk = []
    for r in range(repeats):
        order = list(modes) if r % 2 == 0 else list(modes)[::-1]
        for name in order:
            cal = OnlineIsotonic(**modes[name])
            with gc_paused(not gc_on):
                t0 = perf_counter()
                cal.learn_many(scores, labels)
                times[name].append(perf_counter() - t0)
            del cal
        iso = IsotonicRegression(out_of_bounds="clip")
        with gc_paused(not gc_on):
            t0 = perf_counter()
            iso.fit(scores, labels)
            t_sk.append(perf_counter() - t0)
        del iso
        log(f"    repeat {r + 1}: " + ", ".join(f"{k} {n / times[k][-1] / 1e6:.2f} M events/s" for k in modes)
            + f", sklearn fit {n / t_sk[-1] / 1e6:.2f} M events/s")
    out = {"n_events": n, "sklearn_fit_events_per_s": spread([n / t for t in t_sk]), "modes": {}}
    for name, params in modes.items():
        out["modes"][name] = {
            "params": params,
            "events_per_s": spread([n / t for t in times[name]]),
            "speed_vs_sklearn_fit": spread([s / t for s, t in zip(t_sk, times[name])]),
        }
    return out


# ---------------------------------------------------------------------------- target 4


def scaling(modes, sizes, scores, labels, segment, gc_on, log):
    """Per-event time (against river's LR on the same events, interleaved ``segment``
    events at a time) and state size, per mode and stream length. Time and memory are
    measured in separate passes: tracemalloc slows Python down several times."""
    rows = []
    for name, params in modes.items():
        for n in sizes:
            s, y = scores[:n], labels[:n]
            cal = OnlineIsotonic(**params)
            lr = river_lr()
            with gc_paused(not gc_on):
                _, (tc, tl) = interleaved([(run_calibrator, cal), (run_river, lr)], s, y, segment)
            tc, tl = sum(tc), sum(tl)
            del cal, lr

            def build():
                c = OnlineIsotonic(**params)
                run_learn_only(c, s, y)
                return c

            cal, current, peak = traced_memory(build)
            views = cal.blocks
            cells = sum(v.n_cells for v in views)
            del cal
            row = {
                "mode": name,
                "params": params,
                "n_events": n,
                "calibrator_us_per_event": tc / n * 1e6,
                "river_lr_us_per_event": tl / n * 1e6,
                "ratio": tc / tl,
                "state_bytes": current,
                "peak_bytes": peak,
                "blocks": len(views),
                "cells": cells,
            }
            rows.append(row)
            log(f"    {name:>7} n={n:>9,}: {row['calibrator_us_per_event']:7.2f} us/event "
                f"(x{row['ratio']:.2f} river LR), state {current / 2**20:8.2f} MiB, "
                f"peak {peak / 2**20:8.2f} MiB, {len(views):,} blocks, {cells:,} cells")
    return rows


# ---------------------------------------------------------------------------- profile


def _short(key):
    filename, line, func = key
    if filename == "~":
        return func  # a C function
    for marker in ("site-packages" + os.sep, "streamcal" + os.sep, "benchmarks" + os.sep):
        i = filename.rfind(marker)
        if i >= 0:
            rest = filename[i + len(marker):] if marker == "site-packages" + os.sep else filename[i:]
            return f"{rest}:{line}({func})"
    return f"{os.path.basename(filename)}:{line}({func})"


def profile_loop(cal, scores, labels, top, dump=None):
    """cProfile the per-event loop on ``cal``; return the top functions by own time and
    by cumulative time. Under cProfile every Python call costs more, so absolute times
    are inflated (small Python functions the most): read shares and call counts."""
    prof = cProfile.Profile()
    t0 = perf_counter()
    prof.runcall(run_calibrator, cal, scores, labels)
    wall = perf_counter() - t0
    if dump:
        prof.dump_stats(dump)
    st = pstats.Stats(prof)
    total = st.total_tt
    entries = []
    for key, (cc, nc, tt, ct, _callers) in st.stats.items():
        entries.append({
            "function": _short(key),
            "ncalls": nc,
            "tottime_s": tt,
            "cumtime_s": ct,
            "tottime_share": tt / total if total else 0.0,
            "cumtime_share": ct / total if total else 0.0,
        })
    by_own = sorted(entries, key=lambda e: e["tottime_s"], reverse=True)[:top]
    by_cum = sorted(entries, key=lambda e: e["cumtime_s"], reverse=True)[:top]
    return {
        "events": len(scores),
        "profiled_wall_s": wall,
        "profiled_total_s": total,
        "by_own_time": by_own,
        "by_cumulative_time": by_cum,
    }


def print_profile(title, prof, log):
    log(f"\n  {title}: {prof['events']:,} events, {prof['profiled_wall_s']:.1f} s under cProfile")
    for label, key, rows in (
        ("own time", "tottime", prof["by_own_time"]),
        ("cumulative time", "cumtime", prof["by_cumulative_time"]),
    ):
        log(f"    top by {label}:")
        log(f"      {'ncalls':>10} {key + ' s':>10} {'share':>6}  function")
        for e in rows:
            log(f"      {e['ncalls']:>10,} {e[key + '_s']:>10.2f} {e[key + '_share']:>6.1%}  {e['function']}")


# ---------------------------------------------------------------------------- report


def _fmt(x, kind):
    if kind == "ratio":
        return f"{x:.2f}x"
    if kind == "rate":
        return f"{x / 1e6:.2f} M/s"
    return f"{x:.3g}"


def build_table(res, args):
    """Rows ``(target, configuration, measured, spread, goal, ok)``."""
    rows = []

    def add(name, config, value, lo, hi, kind, goal_text, ok):
        rows.append({
            "target": name,
            "configuration": config,
            "measured": value,
            "spread": [lo, hi],
            "kind": kind,
            "goal": goal_text,
            "pass": bool(ok),
        })

    if "stream" in res:
        for key, limit in (("grid", 2.0), ("exact", 10.0)):
            if key not in res["stream"]:
                continue
            r = res["stream"][key]
            cfg = f"OnlineIsotonic({_params_text(r['params'])})"
            st = r["stream"]
            add(f"1 {key}: whole stream", f"{cfg}, {r['n_events']:,} events / river LR",
                st["ratio"], st["chunk_ratios"]["min"], st["chunk_ratios"]["max"], "ratio",
                f"<= {limit:g}x", st["ratio"] <= limit)
            tl = r["tail"]["ratio"]
            before = r["n_events"] - r["tail_events"]
            add(f"1 {key}: last {r['tail_events']:,}", f"{cfg}, state of {before:,}+ events / river LR",
                tl["median"], tl["min"], tl["max"], "ratio", f"<= {limit:g}x", tl["median"] <= limit)
    if "window" in res:
        r = res["window"]
        sp = r["speedup"]
        add("2 window vs sklearn refit",
            f"OnlineIsotonic(window_size={r['window_size']:,}) vs IsotonicRegression refit per event",
            sp["median"], sp["min"], sp["max"], "ratio", ">= 1000x", sp["median"] >= 1000)
    if "batch" in res:
        r = res["batch"]
        for name, m in r["modes"].items():
            eps = m["events_per_s"]
            add(f"3 learn_many {name}",
                f"OnlineIsotonic({_params_text(m['params'])}).learn_many, {r['n_events']:,} events",
                eps["median"], eps["min"], eps["max"], "rate", ">= 1.00 M/s", eps["median"] >= 1e6)
    if "scaling" in res:
        grid = [row for row in res["scaling"] if row["mode"] == "grid"]
        if len(grid) >= 2:
            a, b = grid[-2], grid[-1]
            ratio = b["state_bytes"] / a["state_bytes"]
            bound = math.floor(1 / args.resolution + 0.5) + 1  # most cells the grid can hold
            add("4 grid memory flat",
                f"state bytes at {b['n_events']:,} / at {a['n_events']:,} events "
                f"({b['cells']:,} cells <= {bound:,})",
                ratio, ratio, ratio, "ratio", "<= 1.25x", ratio <= 1.25 and b["cells"] <= bound)
    return rows


def _params_text(params):
    return ", ".join(f"{k}={v!r}" for k, v in params.items()) if params else ""


def print_table(rows, log):
    log("\n" + "=" * 118)
    log(f"{'target':<28} {'measured':>10} {'spread (min-max)':>19} {'goal':>12} {'result':>6}  configuration")
    log("-" * 118)
    for r in rows:
        lo, hi = r["spread"]
        log(f"{r['target']:<28} {_fmt(r['measured'], r['kind']):>10} "
            f"{_fmt(lo, r['kind']) + ' - ' + _fmt(hi, r['kind']):>19} {r['goal']:>12} "
            f"{'PASS' if r['pass'] else 'FAIL':>6}  {r['configuration']}")
    log("=" * 118)


def print_scaling(rows, log):
    log(f"\n{'mode':>7} {'events':>10} {'us/event':>9} {'x LR':>6} {'state MiB':>10} {'peak MiB':>9} "
        f"{'B/cell':>7} {'blocks':>7} {'cells':>10}")
    for r in rows:
        per_cell = r["state_bytes"] / r["cells"] if r["cells"] else float("nan")
        log(f"{r['mode']:>7} {r['n_events']:>10,} {r['calibrator_us_per_event']:>9.2f} {r['ratio']:>6.2f} "
            f"{r['state_bytes'] / 2**20:>10.2f} {r['peak_bytes'] / 2**20:>9.2f} {per_cell:>7.1f} "
            f"{r['blocks']:>7,} {r['cells']:>10,}")


def machine_info():
    import river
    import scipy
    import sklearn

    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    here = os.path.dirname(os.path.abspath(streamcal.__file__))
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=here,
                                capture_output=True, text=True, check=True).stdout.strip()
        # uncommitted edits to the package under test make the commit alone ambiguous
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--", "."], cwd=here,
                                    capture_output=True, text=True, check=True).stdout.strip())
    except (OSError, subprocess.CalledProcessError):
        commit = dirty = None
    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "platform": platform.platform(),
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "river": river.__version__,
        "streamcal": streamcal.__version__,
        "streamcal_commit": commit,
        "streamcal_dirty": dirty,
    }


# ---------------------------------------------------------------------------- main

ALL_PARTS = ("stream", "window", "batch", "scaling", "profile")


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description="Benchmark streamcal.OnlineIsotonic against river and scikit-learn peers.",
    )
    p.add_argument("--quick", action="store_true",
                   help="smaller sizes for a ~1 minute run (explicit size flags still win)")
    p.add_argument("--n", type=int, help="stream length for target 1 (default 1,000,000; quick 100,000)")
    p.add_argument("--tail", type=int, help="last events timed separately in target 1 (default 100,000; quick 20,000)")
    p.add_argument("--chunk", type=int, help="chunk length of the interleaved race (default: --tail)")
    p.add_argument("--segment", type=int, default=1000,
                   help="events given to each side in turn when interleaving (default 1,000)")
    p.add_argument("--repeats", type=int, help="repeated measurements per figure (default 5; quick 3)")
    p.add_argument("--resolution", type=float, default=1e-4, help="grid width of the grid mode (default 1e-4)")
    p.add_argument("--window", type=int, default=10_000, help="window size of target 2 (default 10,000)")
    p.add_argument("--window-events", type=int, help="online events timed in target 2 (default 100,000; quick 20,000)")
    p.add_argument("--sklearn-events", type=int, help="refit events timed in target 2 (default 500; quick 150)")
    p.add_argument("--batch-n", type=int, help="learn_many batch size for target 3 (default 1,000,000)")
    p.add_argument("--sizes", type=lambda t: [int(float(x)) for x in t.split(",")],
                   help="comma-separated stream lengths of target 4 (default 1e4,1e5,1e6; quick 1e4,3e4,1e5)")
    p.add_argument("--only", type=lambda t: t.split(","), default=list(ALL_PARTS),
                   help=f"comma-separated parts to run among {','.join(ALL_PARTS)} (default all)")
    p.add_argument("--no-profile", action="store_true", help="skip the profile")
    p.add_argument("--profile-scope", choices=("stream", "tail", "both"), default="both",
                   help="profile the whole target-1 stream from scratch, the last --tail events "
                        "from the state built by the rest, or both (default both)")
    p.add_argument("--profile-top", type=int, default=15, help="functions listed per profile (default 15)")
    p.add_argument("--profile-dir", help="also write the raw cProfile stats (.prof) into this directory")
    p.add_argument("--gc", action="store_true",
                   help="keep the cyclic garbage collector running while timing (default: paused, as timeit does)")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated stream (default 0)")
    p.add_argument("--cpu", action="store_true",
                   help="time with the process's CPU time (time.process_time) instead of the wall "
                        "clock: on a machine shared with other jobs, the time spent descheduled "
                        "is then not counted")
    p.add_argument("--json", metavar="FILE", help="write every figure to FILE as JSON")
    args = p.parse_args(argv)
    q = args.quick
    defaults = {
        "n": 100_000 if q else 1_000_000,
        "tail": 20_000 if q else 100_000,
        "repeats": 3 if q else 5,
        "window_events": 20_000 if q else 100_000,
        "sklearn_events": 150 if q else 500,
        "batch_n": 1_000_000,
        "sizes": [10_000, 30_000, 100_000] if q else [10_000, 100_000, 1_000_000],
    }
    for k, v in defaults.items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    if args.chunk is None:
        args.chunk = args.tail
    if args.no_profile and "profile" in args.only:
        args.only.remove("profile")
    bad = set(args.only) - set(ALL_PARTS)
    if bad:
        p.error(f"unknown parts {sorted(bad)}; choose among {ALL_PARTS}")
    if not 0 < args.tail < args.n:
        p.error("--tail must be in (0, --n)")
    if args.repeats < 1:
        p.error("--repeats must be >= 1")
    return args


def main(argv=None):
    global perf_counter
    args = parse_args(argv)
    if args.cpu:
        # this module's timers and those of _timing read these globals at each call
        perf_counter = _timing.perf_counter = time.process_time
    started = perf_counter()

    def log(msg=""):
        print(msg, flush=True)

    info = machine_info()
    log(f"streamcal {info['streamcal']} ({info['streamcal_commit']}"
        f"{' + uncommitted edits' if info['streamcal_dirty'] else ''}), Python {info['python']}, "
        f"numpy {info['numpy']}, scipy {info['scipy']}, scikit-learn {info['scikit-learn']}, river {info['river']}")
    log(f"{info['cpu']} x{info['cpu_count']}, load average {info['load_average']}, {info['date']}")
    length = max(args.n, args.batch_n, max(args.sizes), args.window + args.window_events + args.sklearn_events)
    scores_arr, labels_arr = make_stream(length, args.seed)
    scores, labels = scores_arr.tolist(), labels_arr.tolist()
    n_distinct = int(np.unique(scores_arr[:args.n]).size)
    log(f"stream: {length:,} events, scores ~ Beta(2, 2), P(y=1|s) = sigmoid(2 logit s); "
        f"{n_distinct:,} distinct scores among the first {args.n:,}")
    grid = {"resolution": args.resolution}
    modes = {"grid": grid, "exact": {}}
    res = {"meta": {**info, "args": {k: v for k, v in vars(args).items()}, "n_distinct_scores": n_distinct}}
    snapshots = {}

    if "stream" in args.only:
        log(f"\n[1] predict_one + learn_one vs river LogisticRegression, {args.n:,} events "
            f"(interleaved {args.segment:,} events at a time, reported per {args.chunk:,}; "
            f"last {args.tail:,} replayed {args.repeats - 1} more times)")
        res["stream"] = {}
        for name, params in modes.items():
            log(f"  {name}: OnlineIsotonic({_params_text(params)})")
            r = stream_race(params, scores[:args.n], labels[:args.n], args.tail, args.chunk,
                            args.segment, args.repeats, args.gc, log)
            snapshots[name] = r.pop("_snapshot")
            res["stream"][name] = r

    if "window" in args.only:
        log(f"\n[2] OnlineIsotonic(window_size={args.window:,}) vs refitting sklearn IsotonicRegression per event")
        res["window"] = window_race(args.window, scores, labels, args.window_events, args.sklearn_events,
                                    args.repeats, args.segment, args.gc, log)

    if "batch" in args.only:
        log(f"\n[3] learn_many on {args.batch_n:,} events (vs sklearn IsotonicRegression.fit)")
        res["batch"] = batch_race(modes, scores_arr[:args.batch_n], labels_arr[:args.batch_n],
                                  args.repeats, args.gc, log)

    if "scaling" in args.only:
        log(f"\n[4] growth of cost and state with the stream length {args.sizes}")
        scale_modes = {"grid": grid, "exact": {}, "window": {"window_size": args.window}}
        res["scaling"] = scaling(scale_modes, args.sizes, scores, labels, args.segment, args.gc, log)

    if "profile" in args.only:
        log(f"\n[5] cProfile of the predict_one + learn_one loop ({args.profile_scope})")
        res["profile"] = {}
        scopes = ("stream", "tail") if args.profile_scope == "both" else (args.profile_scope,)
        jobs = [(name, params, scope) for name, params in modes.items() for scope in scopes]
        # the window mode (target 2): state filled with one window, then the next events
        jobs.append(("window", {"window_size": args.window}, "window"))
        for name, params, scope in jobs:
            if scope == "stream":
                cal = OnlineIsotonic(**params)
                s, y = scores[:args.n], labels[:args.n]
                title = f"{name}, whole stream of {args.n:,} events from scratch"
            elif scope == "tail":
                cut = args.n - args.tail
                if name in snapshots:
                    cal = pickle.loads(snapshots[name])
                else:
                    cal = OnlineIsotonic(**params)
                    run_learn_only(cal, scores[:cut], labels[:cut])
                s, y = scores[cut:args.n], labels[cut:args.n]
                title = f"{name}, last {args.tail:,} events (state built from the first {cut:,})"
            else:
                cal = OnlineIsotonic(**params)
                run_learn_only(cal, scores[:args.window], labels[:args.window])
                s = scores[args.window:args.window + args.tail]
                y = labels[args.window:args.window + args.tail]
                title = (f"window_size={args.window:,}, {len(s):,} events after the window "
                         f"was filled (state: {args.window:,} events)")
            dump = None
            if args.profile_dir:
                os.makedirs(args.profile_dir, exist_ok=True)
                dump = os.path.join(args.profile_dir, f"{name}_{scope}.prof")
            prof = profile_loop(cal, s, y, args.profile_top, dump)
            prof["title"] = title
            res["profile"][f"{name}_{scope}"] = prof
            print_profile(title, prof, log)
            del cal

    table = build_table(res, args)
    res["table"] = table
    res["meta"]["elapsed_s"] = perf_counter() - started
    res["meta"]["load_average_end"] = os.getloadavg() if hasattr(os, "getloadavg") else None
    if "scaling" in res:
        print_scaling(res["scaling"], log)
    print_table(table, log)
    if "stream" in res:
        for name, r in res["stream"].items():
            log(f"  river LR alone: {r['stream']['river_lr_us_per_event']:.2f} us/event over the {name} race; "
                f"OnlineIsotonic {name}: {r['stream']['calibrator_us_per_event']:.2f} us/event "
                f"(last {r['tail_events']:,}: {r['tail']['calibrator_us_per_event']['median']:.2f}), "
                f"final state {r['final_state']['blocks']:,} blocks, {r['final_state']['cells']:,} cells")
    if "window" in res:
        r = res["window"]
        log(f"  window: online {r['online_us_per_event']['median']:.2f} us/event, "
            f"sklearn refit {r['sklearn_us_per_event']['median']:.0f} us/event")
    log(f"total {res['meta']['elapsed_s']:.0f} s; load average at the end {res['meta']['load_average_end']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
        log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
