"""CalibratedClassifier: quality and per-event overhead on river's Phishing data set, in
``evaluate.progressive_val_score`` (issue 15). Run by hand (never by CI or pytest):

    python benchmarks/bench_calibrated_classifier.py              # 21 repeats, ~1 minute
    python benchmarks/bench_calibrated_classifier.py --repeats 5
    python benchmarks/bench_calibrated_classifier.py --json out.json

**Quality.** Log loss and ECE (10 equal-width bins) of
``CalibratedClassifier(LogisticRegression(), VennAbers())`` and of the
``LogisticRegression()`` alone, each in a progressive validation over the 1,250 events
of Phishing (river's defaults, no feature scaling: the setting of the target), then
with a ``StandardScaler`` in front of both. Target: both lower when calibrated.

**Overhead.** The time of one ``progressive_val_score`` run over Phishing (events read
into a list first) of the calibrated model against the classifier alone, a fresh model
each, the two run in alternation ``--repeats`` times in rotating order; the figure is the
median of the per-repeat ratios. Target: at most 1.5x. The same with ``OnlineIsotonic``
(whose ``predict_one`` is a lookup, where Venn-ABERS inserts and removes a hypothetical
event twice) separates the cost of the wrapper from the calibrator's, for information;
``VennAbers(resolution=0.01)`` (a store of at most 101 cells) is timed too.

**Where the time goes** (for information): the wrapper's ``predict_proba_one`` and
``learn_one`` against the same calls written by hand (classifier, binary split,
calibrator) on 500 Phishing events, interleaved rounds; and ``VennAbers().predict_one``
per call on the store of 1,250 events with scores rounded to 3 decimals.

All times are the process's CPU time (``time.process_time``): the machine is shared.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import gc_paused, git_commit, spread, verdict, write_results
from river import datasets, evaluate, linear_model, metrics, preprocessing

import streamcal
from streamcal import CalibratedClassifier, OnlineIsotonic, VennAbers
from streamcal.metrics import ECE


def quality(model, events) -> dict:
    out = {}
    for name, metric in (("log_loss", metrics.LogLoss()), ("ece", ECE(n_bins=10))):
        evaluate.progressive_val_score(events, model.clone(), metric)
        out[name] = metric.get()
    return out


def timed(model, events) -> float:
    # CPU time of this process: the machine is shared, wall time counts the others' load
    t0 = time.process_time()
    evaluate.progressive_val_score(events, model, metrics.LogLoss())
    return time.process_time() - t0


def glue(rounds: int = 15) -> dict:
    """Microseconds per event more than the hand-written calls, for the wrapper's
    ``predict_proba_one`` and ``learn_one`` (medians over interleaved rounds)."""
    events = list(datasets.Phishing())
    clf, cal = linear_model.LogisticRegression(), OnlineIsotonic()
    model = CalibratedClassifier(linear_model.LogisticRegression(), OnlineIsotonic())
    for x, y in events[:600]:
        model.learn_one(x, y)
        cal.learn_one(clf.predict_proba_one(x).get(True, 0.0), y)
        clf.learn_one(x, y)
    xs = [x for x, _ in events[600:1100]]
    ys = [y for _, y in events[600:1100]]

    def wrapped_predict():
        f = model.predict_proba_one
        t0 = time.process_time()
        for x in xs:
            f(x)
        return time.process_time() - t0

    def hand_predict():
        pp, cp = clf.predict_proba_one, cal.predict_one
        t0 = time.process_time()
        for x in xs:
            q = cp(pp(x).get(True, 0.0))
            {False: 1.0 - q, True: q}
        return time.process_time() - t0

    def wrapped_learn():
        f = copy.deepcopy(model).learn_one
        t0 = time.process_time()
        for x, y in zip(xs, ys):
            f(x, y)
        return time.process_time() - t0

    def hand_learn():
        a, b = copy.deepcopy(clf), copy.deepcopy(cal)
        pp, cl, ll = a.predict_proba_one, b.learn_one, a.learn_one
        t0 = time.process_time()
        for x, y in zip(xs, ys):
            cl(pp(x).get(True, 0.0), y)
            ll(x, y)
        return time.process_time() - t0

    runs = {"wrapped_predict": wrapped_predict, "hand_predict": hand_predict,
            "wrapped_learn": wrapped_learn, "hand_learn": hand_learn}
    t = {k: [] for k in runs}
    for r in range(rounds):
        order = list(runs)[r % 4 :] + list(runs)[: r % 4]
        for k in order:
            t[k].append(runs[k]())
    us = {k: 1e6 * statistics.median(v) / len(xs) for k, v in t.items()}
    return {**us, "predict_extra_us": us["wrapped_predict"] - us["hand_predict"],
            "learn_extra_us": us["wrapped_learn"] - us["hand_learn"]}


def venn_abers_predict_us(n: int = 200_000) -> float:
    """Microseconds per ``VennAbers().predict_one`` on 1,250 events (scores rounded to 3
    decimals: about 700 distinct), at random scores."""
    rng = np.random.default_rng(0)
    va = VennAbers()
    for s, y in zip(np.round(rng.random(1250), 3).tolist(), (rng.random(1250) < 0.5).tolist()):
        va.learn_one(s, y)
    f = va.predict_one
    q = rng.random(n).tolist()
    t0 = time.process_time()
    for x in q:
        f(x)
    return 1e6 * (time.process_time() - t0) / n


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--gc", action="store_true")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    events = list(datasets.Phishing())
    commit = git_commit()
    print(f"streamcal {streamcal.__version__} @ {commit}, Phishing ({len(events)} events)")
    raw = linear_model.LogisticRegression()
    cal = CalibratedClassifier(linear_model.LogisticRegression(), VennAbers())
    results = []
    rows = []
    for label, a, b in (
        ("LogisticRegression", raw, cal),
        ("StandardScaler | LogisticRegression", preprocessing.StandardScaler() | raw,
         preprocessing.StandardScaler() | cal),
    ):
        qa, qb = quality(a, events), quality(b, events)
        print(f"{label}: raw {qa}, calibrated {qb}")
        results.append({"target": "quality", "model": label, "raw": qa, "calibrated": qb})
        for m in ("log_loss", "ece"):
            rows.append((f"{label}: {m} calibrated / raw", qb[m] / qa[m], 1.0))
    iso = CalibratedClassifier(linear_model.LogisticRegression(), OnlineIsotonic())
    grid = CalibratedClassifier(linear_model.LogisticRegression(), VennAbers(resolution=0.01))
    ratios = {"cal": [], "iso": [], "grid": []}
    costs = {"raw": [], "cal": [], "iso": [], "grid": []}
    with gc_paused(not args.gc):
        for r in range(args.repeats):
            trio = [(raw, "raw"), (cal, "cal"), (iso, "iso"), (grid, "grid")]
            trio = trio[r % 4 :] + trio[: r % 4]  # rotate the order
            t = {name: timed(m.clone(), events) for m, name in trio}
            for name in ratios:
                ratios[name].append(t[name] / t["raw"])
            for name in costs:
                costs[name].append(1e6 * t[name] / len(events))
    sp = spread(ratios["cal"])
    sp_iso = spread(ratios["iso"])
    sp_grid = spread(ratios["grid"])
    us = {name: min(v) for name, v in costs.items()}
    print(f"fastest run, us per event: {us}")
    results.append({"target": "overhead", "ratio": sp, "ratio_isotonic": sp_iso, "ratio_grid": sp_grid, "us_per_event_min": us})
    rows.append(("time per event, VennAbers calibrated / raw", sp["median"], 1.5, sp))
    rows.append(("time per event, OnlineIsotonic calibrated / raw", sp_iso["median"], None, sp_iso))
    rows.append(("time per event, VennAbers(resolution=0.01) / raw", sp_grid["median"], 1.5, sp_grid))
    g = glue()
    va_us = venn_abers_predict_us()
    print(
        f"wrapper glue: predict_proba_one +{g['predict_extra_us']:.2f} us, learn_one "
        f"+{g['learn_extra_us']:.2f} us per event over the hand-written calls; "
        f"VennAbers().predict_one {va_us:.2f} us per call"
    )
    results.append({"target": "where_the_time_goes", "glue": g, "venn_abers_predict_us": va_us})
    print()
    print(f"{'figure':<58} {'value':>7}  {'spread':<16} goal")
    for row in rows:
        name, value, target = row[:3]
        s = f"[{row[3]['min']:.2f}, {row[3]['max']:.2f}]" if len(row) > 3 else ""
        print(f"{name:<58} {value:>6.3f}x  {s:<16} {verdict(value, target)}")
    if args.json:
        write_results(args.json, commit, len(events), 0, results)


if __name__ == "__main__":
    main()
