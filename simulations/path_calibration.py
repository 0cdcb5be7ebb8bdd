"""Path calibration on a synthetic hierarchy (issue 17 item 3, the path experiment).

Question: Gupta's thesis (section 4.3.2) proposes path calibration by histogram
binning on the predicted leaf's confidence, with one bin mean per node of the leaf's
path, and expects it to inherit the guarantee of top-label histogram binning: the
path-calibration error should fall towards 0 as the calibration data grow, while the
path stays monotone (an ancestor at least as likely as its descendant). Does the
streaming ``PathCalibrator`` do that on a stream whose true path probabilities are
known, and what does monotonicity cost or save against calibrating each node of the
path separately?

Protocol:

- data: ``streamcal.datasets.hierarchical_stream`` (the news-topic taxonomy of the
  thesis's Figure 4.1, ten classes, depth 1 to 3, labels at inner nodes too, leaf scores
  over-confident: ``sharpness = 2``), ``n`` training events and 10,000 fresh test
  events, seeds 0, 1, 2 (test seeds 1000, 1001, 1002);
- methods, each trained on the first ``n`` events then frozen and scored on the test
  events: the raw path (each node the total score of the leaves below it);
  ``PathCalibrator`` with 10 equal-width bins (default prior, strength 2), with no prior,
  with 10 uniform-mass bins (``strategy="quantile"``), and with a window of the last
  2,000 events of each leaf; a per-node baseline, one ``HistogramBinning`` (10 bins,
  prior 2) per (predicted leaf, node) fed the node's *own* raw path probability, which
  calibrates each node separately and so can break monotonicity; the true
  probabilities, whose error is the test set's own binning and sampling noise;
- reported: ``PathECE`` (10 bins) of the test forecasts, mean and standard deviation over
  the seeds, at ``n`` = 250, 1,000, 4,000, 16,000, 32,000; the share of test forecasts
  that are not path monotone, at the smallest and the largest ``n``.

Run::

    python simulations/path_calibration.py            # about 30 s of CPU
    python simulations/path_calibration.py --quick    # a smoke run

It writes ``path_calibration.md`` (the table, also printed) into ``--out`` (default
``simulations/results``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # the shared helpers, also when this file is loaded by path
import _common  # noqa: E402

from streamcal import HistogramBinning  # noqa: E402
from streamcal.calibrators import PathCalibrator  # noqa: E402
from streamcal.datasets import hierarchical_stream  # noqa: E402
from streamcal.metrics import PathECE  # noqa: E402


class PerNodeBinning:
    """The baseline: one HistogramBinning per (predicted leaf, node), fed the node's own
    raw path probability and the event's ``1[node in a(Y)]``."""

    def __init__(self, taxonomy):
        self.raw = PathCalibrator(taxonomy)  # only its raw_path
        self.taxonomy = taxonomy
        self.cals: dict = {}

    def _below(self, y) -> set:
        out = set()
        while self.taxonomy[y] is not None:
            out.add(y)
            y = self.taxonomy[y]
        return out

    def learn_one(self, scores, y):
        raw = self.raw.raw_path(scores)
        leaf = list(raw)[-1]
        below = self._below(y)
        for node, p in raw.items():
            cal = self.cals.setdefault((leaf, node), HistogramBinning(n_bins=10))
            cal.learn_one(p, node in below)

    def predict_one(self, scores):
        raw = self.raw.raw_path(scores)
        leaf = list(raw)[-1]
        return {
            node: self.cals[(leaf, node)].predict_one(p) if (leaf, node) in self.cals else p
            for node, p in raw.items()
        }


def methods(taxonomy) -> dict:
    return {
        "PathCalibrator, 10 bins": PathCalibrator(taxonomy),
        "PathCalibrator, 10 bins, no prior": PathCalibrator(taxonomy, prior_strength=0),
        "PathCalibrator, 10 uniform-mass bins": PathCalibrator(taxonomy, strategy="quantile"),
        "PathCalibrator, 10 bins, window 2000": PathCalibrator(taxonomy, window_size=2000),
        "per-node histogram binning (baseline)": PerNodeBinning(taxonomy),
    }


def _monotone(out: dict) -> bool:
    v = list(out.values())
    return all(a >= b for a, b in zip(v, v[1:]))


def run(seed: int, sizes: list, n_test: int) -> dict:
    """PathECE of every method at every size, and the non-monotone share at the last."""
    train = hierarchical_stream(max(sizes), seed=seed)
    test = hierarchical_stream(n_test, seed=1000 + seed)
    tax = train.taxonomy
    cals = methods(tax)
    out: dict = {}

    def score(forecasts) -> float:
        m = PathECE(tax)
        for y, f in zip(test.labels, forecasts):
            m.update(y, f)
        return m.get()

    raw = [cals["PathCalibrator, 10 bins"].raw_path(s) for s in test.leaf_scores]
    out["raw path (leaf scores summed)"] = {n: score(raw) for n in sizes}
    out["true probabilities"] = {n: score(test.true_paths) for n in sizes}
    share = float(np.mean([not _monotone(f) for f in raw]))
    out["non-monotone"] = {"raw path (leaf scores summed)": {n: share for n in sizes}}
    out["non-monotone"]["true probabilities"] = {n: 0.0 for n in sizes}
    done = 0
    for n in sizes:
        for s, y in zip(train.leaf_scores[done:n], train.labels[done:n]):
            for cal in cals.values():
                cal.learn_one(s, y)
        done = n
        for name, cal in cals.items():
            forecasts = [cal.predict_one(s) for s in test.leaf_scores]
            out.setdefault(name, {})[n] = score(forecasts)
            share = float(np.mean([not _monotone(f) for f in forecasts]))
            out["non-monotone"].setdefault(name, {})[n] = share
    return out


def table(results: list, sizes: list, n_test: int, seconds: float) -> str:
    names = [
        "raw path (leaf scores summed)",
        *methods({"r": None, "a": "r"}),
        "true probabilities",
    ]
    lines = [
        "# Path calibration on the synthetic news-topic hierarchy",
        "",
        f"PathECE (10 bins) of {n_test:,} test forecasts after n training events; mean "
        f"(sd) over {len(results)} seed(s); last column: share of test forecasts that "
        f"are not path monotone at n = {sizes[0]:,} / {sizes[-1]:,}. CPU {seconds:.0f} s.",
        "",
        "| method | " + " | ".join(f"n = {n:,}" for n in sizes) + " | not monotone |",
        "| --- | " + " | ".join("---:" for _ in sizes) + " | ---: |",
    ]
    for name in names:
        cells = []
        for n in sizes:
            v = np.array([r[name][n] for r in results])
            cells.append(f"{v.mean():.4f} ({v.std():.4f})")
        nm = [np.mean([r["non-monotone"][name][n] for r in results]) for n in (sizes[0], sizes[-1])]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {100 * nm[0]:.1f}% / {100 * nm[1]:.1f}% |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--out", default=os.path.join(HERE, "results"))
    args = parser.parse_args(argv)
    if args.quick:
        sizes, n_test, seeds = [100, 400], 500, [0]
    else:
        sizes, n_test, seeds = [250, 1000, 4000, 16000, 32000], 10000, [0, 1, 2]
    t0 = time.process_time()
    results = [run(seed, sizes, n_test) for seed in seeds]
    _common.write_table(table(results, sizes, n_test, time.process_time() - t0), args.out, "path_calibration")


if __name__ == "__main__":
    main()
