"""CalibratedClassifier before and after a change of ``streamcal/compose.py``, in one
process (issue 15). Run by hand (never by CI or pytest):

    mkdir -p /tmp/old && git archive <commit> streamcal/compose.py | tar -x -C /tmp/old
    python benchmarks/bench_compose_compare.py /tmp/old/streamcal/compose.py --rounds 15

The old ``compose.py`` is loaded as a module of its own beside the current one (both use
the current calibrators, so only the wrapper differs). Each round times, in rotating
order, one ``evaluate.progressive_val_score`` over Phishing's 1,250 events (read into a
list first) of ``LogisticRegression()`` alone and of the old and new
``CalibratedClassifier(LogisticRegression(), calibrator)``, a fresh model each, CPU time
(``time.process_time``), the GC paused; the figures are medians over rounds of the
per-round ratios. Every round also checks that old and new give the same log loss.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import old_new_rounds, timed_progressive_log_loss
from river import datasets, linear_model

from streamcal import OnlineIsotonic, OnlinePlatt, VennAbers
from streamcal.compose import CalibratedClassifier as New


def load_old(path: str):
    spec = importlib.util.spec_from_file_location("streamcal_compose_old", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CalibratedClassifier


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", help="path of the old compose.py")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calibrators", default="venn_abers,isotonic,platt")
    args = parser.parse_args(argv)
    Old = load_old(args.old)
    events = list(datasets.Phishing())
    makers = {"venn_abers": VennAbers, "isotonic": OnlineIsotonic, "platt": OnlinePlatt}
    print(f"Phishing ({len(events)} events), {args.rounds} rounds, CPU time")
    print(f"{'calibrator':<12} {'old / raw':>10} {'new / raw':>10} {'new / old':>10}   us per event (fastest: raw, old, new)")
    for name in args.calibrators.split(","):
        cal = makers[name]
        runs = {
            "raw": lambda: linear_model.LogisticRegression(),
            "old": lambda: Old(linear_model.LogisticRegression(), cal()),
            "new": lambda: New(linear_model.LogisticRegression(), cal()),
        }
        print(old_new_rounds(runs, args.rounds, lambda m: timed_progressive_log_loss(m, events), len(events), name, 12))

if __name__ == "__main__":
    main()
