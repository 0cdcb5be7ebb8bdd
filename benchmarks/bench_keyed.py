"""KeyedCalibrator: memory with an LRU bound over a stream of ever new keys, and the
per-event cost of the keyed calibrator against the same calibrator unkeyed, timed in the
same run (issue 15). Run by hand (never by CI or pytest):

    python benchmarks/bench_keyed.py             # 1,000,000 keys, ~3 minutes
    python benchmarks/bench_keyed.py --quick     # 200,000 keys
    python benchmarks/bench_keyed.py --json out.json

**Memory.** ``KeyedCalibrator(OnlineIsotonic(), max_keys=10_000)`` learns one event for
each of ``--keys`` distinct keys (str keys "k0", "k1", ...; keys made before the run).
After 10,000 keys every new key evicts the least recently used one, so the state must
stay flat: the figure is the ratio of the pickled size of the state, and of the
process's resident memory (``/proc/self/statm``) growth over the first 10,000 keys,
between the end of the run and a fifth of it (at 200,000 keys of 1,000,000).
Target: flat (ratio at most 1.05).

**Per-event cost.** A stream of ``--n`` events (200,000) over 10,000 keys drawn
uniformly, scores rounded to two decimals (so that a key's store and the unkeyed store
both hold at most 101 cells and the ratio compares the keying, not the store sizes):
the keyed calibrator (warmed: every key already has its calibrator) does
``predict_one(key, s)`` then ``learn_one(key, s, y)``; the unkeyed calibrator does
``predict_one(s)`` then ``learn_one(s, y)`` on the same events. The two run in
alternation, ``--segment`` events at a time; the figure is the median over segments of
the time ratio. Target: at most 1.5x, for OnlineIsotonic and OnlinePlatt. The same is
measured with a single key (no cache misses: the cost of the keying alone), and against
a plain dict of calibrators fed by hand (the same memory layout, no LRU, no checks), for
information. The cost of a new key (one constructor call) is reported from the memory
run.

**A fallback** (``--fallback``, for information, no target). ``KeyedCalibrator(...,
fallback=True)`` also teaches every event to one shared calibrator, and must leave the
key's calibrator unchanged when that calibrator refuses the event (a weight it cannot
hold): it asks the fallback whether the weight surely fits, and copies the key's state
to restore it only when the fallback cannot vouch. The figure is the keyed calibrator
with a fallback against the same work done by hand (a keyed calibrator without one,
plus an unkeyed calibrator that learns every event), on the same stream over 100 keys,
for OnlineIsotonic, OnlinePlatt, HistogramBinning and TrackingCalibeater: about 1.0x
when the guard costs nothing.
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import gc_paused, git_commit, interleaved, spread, verdict, write_results

import streamcal
from streamcal import (
    HistogramBinning,
    KeyedCalibrator,
    OnlineIsotonic,
    OnlinePlatt,
    TrackingCalibeater,
)


# CPU time of this process: the machine is shared, wall time counts the others' load
_clock = time.process_time


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def memory(n_keys: int, max_keys: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    keys = [f"k{i}" for i in range(n_keys)]
    scores = rng.random(n_keys).tolist()
    labels = (rng.random(n_keys) < 0.5).astype(int).tolist()
    keyed = KeyedCalibrator(OnlineIsotonic(), max_keys=max_keys)
    learn = keyed.learn_one
    checkpoints = {max_keys: None, n_keys // 5: None, n_keys: None}
    rss0 = _rss()
    t0 = time.perf_counter()
    done = 0
    for stop in sorted(checkpoints):
        for i in range(done, stop):
            learn(keys[i], scores[i], labels[i])
        done = stop
        checkpoints[stop] = (len(pickle.dumps(keyed)), _rss() - rss0)
    elapsed = time.perf_counter() - t0
    first, fifth, last = (checkpoints[k] for k in sorted(checkpoints))
    return {
        "keys": n_keys,
        "max_keys": max_keys,
        "pickled_bytes": {str(k): v[0] for k, v in checkpoints.items()},
        "rss_growth_bytes": {str(k): v[1] for k, v in checkpoints.items()},
        "pickled_ratio_end_vs_fifth": last[0] / fifth[0],
        "rss_ratio_end_vs_fifth": last[1] / max(fifth[1], 1),
        "n_evicted": keyed.n_evicted,
        "us_per_new_key": 1e6 * elapsed / n_keys,
    }


def _run_keyed(keyed, events, _):
    predict, learn = keyed.predict_one, keyed.learn_one
    t0 = _clock()
    for k, s, y in events:
        predict(k, s)
        learn(k, s, y)
    return _clock() - t0


def _run_plain(cal, events, _):
    predict, learn = cal.predict_one, cal.learn_one
    t0 = _clock()
    for _, s, y in events:
        predict(s)
        learn(s, y)
    return _clock() - t0


def _run_dict(cals, events, _):
    """The hand-written alternative: a plain dict of calibrators, no LRU, no checks."""
    t0 = _clock()
    for k, s, y in events:
        cal = cals[k]
        cal.predict_one(s)
        cal.learn_one(s, y)
    return _clock() - t0


def _run_by_hand_fallback(pair, events, _):
    """A keyed calibrator without a fallback, and a shared calibrator fed by hand."""
    keyed, shared = pair
    predict, learn = keyed.predict_one, keyed.learn_one
    learn_shared = shared.learn_one
    t0 = _clock()
    for k, s, y in events:
        predict(k, s)
        learn(k, s, y)
        learn_shared(s, y)
    return _clock() - t0


def _stream(n: int, n_keys: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    keys = [f"k{i}" for i in rng.integers(0, n_keys, n).tolist()]
    scores = np.round(rng.beta(2, 2, n), 2).tolist()
    labels = (rng.random(n) < np.asarray(scores) ** 2).astype(int).tolist()
    return list(zip(keys, scores, labels))


def fallback_cost(template, n: int, n_keys: int, segment: int, gc_on: bool, seed: int = 0) -> dict:
    events = _stream(n, n_keys, seed)
    with_fallback = KeyedCalibrator(template.clone(), fallback=True)
    by_hand = (KeyedCalibrator(template.clone()), template.clone())
    for i in range(n_keys):  # warm: every key has its calibrator
        with_fallback.learn_one(f"k{i}", 0.5, i % 2)
        by_hand[0].learn_one(f"k{i}", 0.5, i % 2)
        by_hand[1].learn_one(0.5, i % 2)
    runs = [(_run_keyed, with_fallback), (_run_by_hand_fallback, by_hand)]
    with gc_paused(not gc_on):
        _, (t_fallback, t_hand) = interleaved(runs, events, [None] * n, segment)
    return {
        "calibrator": repr(template).replace("\n", " "),
        "ratio": spread(a / b for a, b in zip(t_fallback, t_hand)),
        "fallback_us_per_event": 1e6 * sum(t_fallback) / n,
        "by_hand_us_per_event": 1e6 * sum(t_hand) / n,
    }


def per_event(template, n: int, n_keys: int, segment: int, gc_on: bool, seed: int = 0) -> dict:
    events = _stream(n, n_keys, seed)
    keyed = KeyedCalibrator(template.clone(), max_keys=n_keys)
    plain = template.clone()
    by_hand = {}
    for i in range(n_keys):  # warm: every key has its calibrator; all see these events
        keyed.learn_one(f"k{i}", 0.5, i % 2)
        plain.learn_one(0.5, i % 2)
        by_hand.setdefault(f"k{i}", template.clone()).learn_one(0.5, i % 2)
    runs = [(_run_keyed, keyed), (_run_plain, plain), (_run_dict, by_hand)]
    with gc_paused(not gc_on):
        _, (t_keyed, t_plain, t_dict) = interleaved(runs, events, [None] * n, segment)
    return {
        "calibrator": repr(template).replace("\n", " "),
        "ratio": spread(a / b for a, b in zip(t_keyed, t_plain)),
        "ratio_to_dict": spread(a / b for a, b in zip(t_keyed, t_dict)),
        "keyed_us_per_event": 1e6 * sum(t_keyed) / n,
        "plain_us_per_event": 1e6 * sum(t_plain) / n,
        "dict_us_per_event": 1e6 * sum(t_dict) / n,
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200,000 keys, 50,000 events")
    parser.add_argument("--keys", type=int, default=None)
    parser.add_argument("--max-keys", type=int, default=10_000)
    parser.add_argument("--n", type=int, default=None)
    parser.add_argument("--segment", type=int, default=2000)
    parser.add_argument("--gc", action="store_true")
    parser.add_argument("--fallback", action="store_true", help="also time a fallback")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    n_keys = args.keys or (200_000 if args.quick else 1_000_000)
    n = args.n or (50_000 if args.quick else 200_000)
    commit = git_commit()
    print(f"streamcal {streamcal.__version__} @ {commit}, {n_keys} keys, {n} timed events")
    mem = memory(n_keys, args.max_keys)
    print(
        f"memory: pickled {mem['pickled_bytes']}, RSS growth {mem['rss_growth_bytes']}, "
        f"{mem['n_evicted']} evicted, {mem['us_per_new_key']:.1f} us per new key"
    )
    results = [{"target": "memory", **mem}]
    rows = [
        ("pickled state, end / fifth", mem["pickled_ratio_end_vs_fifth"], 1.05),
        ("RSS growth, end / fifth", mem["rss_ratio_end_vs_fifth"], 1.05),
    ]
    for n_k in sorted({1, args.max_keys}):
        for template in (OnlineIsotonic(), OnlinePlatt()):
            r = per_event(template, n, n_k, args.segment, args.gc)
            results.append({"target": "per_event", "n_keys": n_k, **r})
            name = f"{type(template).__name__}, {n_k} keys"
            print(
                f"{name}: keyed {r['keyed_us_per_event']:.2f} us/event, unkeyed "
                f"{r['plain_us_per_event']:.2f}, dict of calibrators {r['dict_us_per_event']:.2f}"
            )
            rows.append((f"{name}: keyed / unkeyed", r["ratio"]["median"], 1.5, r["ratio"]))
            rows.append((f"{name}: keyed / dict", r["ratio_to_dict"]["median"], None, r["ratio_to_dict"]))
    if args.fallback:
        templates = (
            OnlineIsotonic(),
            OnlinePlatt(),
            HistogramBinning(),
            TrackingCalibeater(base=OnlinePlatt()),
        )
        for template in templates:
            r = fallback_cost(template, n, 100, args.segment, args.gc)
            results.append({"target": "fallback", "n_keys": 100, **r})
            name = f"{type(template).__name__}, fallback / by hand"
            print(
                f"{name}: {r['fallback_us_per_event']:.2f} us/event, by hand "
                f"{r['by_hand_us_per_event']:.2f}"
            )
            rows.append((name, r["ratio"]["median"], None, r["ratio"]))
    print()
    print(f"{'figure':<44} {'value':>8}  {'spread':<18} goal")
    for row in rows:
        name, value, target = row[:3]
        sp = f"[{row[3]['min']:.2f}, {row[3]['max']:.2f}]" if len(row) > 3 else ""
        print(f"{name:<44} {value:>7.3f}x  {sp:<18} {verdict(value, target)}")
    if args.json:
        write_results(args.json, commit, n, args.segment, results)


if __name__ == "__main__":
    main()
