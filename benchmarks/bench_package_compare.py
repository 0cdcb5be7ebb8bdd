"""CalibratedClassifier over two builds of the whole package, in one process (issue 15).
Run by hand (never by CI or pytest), from the repository root:

    rm -rf /tmp/vaold && mkdir -p /tmp/vaold && git archive main | tar -x -C /tmp/vaold
    (cd /tmp/vaold && python setup.py build_ext --inplace)
    python benchmarks/bench_package_compare.py /tmp/vaold --rounds 9

Where ``bench_compose_compare.py`` swaps only ``compose.py``, this loads the old
``streamcal`` package (its compiled modules included) beside the current one: the old
one is imported first from its directory, its modules are moved out of
``sys.modules`` under their own names (the objects keep their references to each
other), then this checkout's is imported. Each round times, in rotating order, one
``evaluate.progressive_val_score`` over Phishing's 1,250 events (read into a list
first) of ``LogisticRegression()`` alone and of the old and new
``CalibratedClassifier(LogisticRegression(), calibrator)``, a fresh model each, CPU time
(``time.process_time``), the GC paused; the figures are medians over rounds of the
per-round ratios. Every round also checks that old and new give the same log loss.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load_old(path: str) -> dict:
    """The old package's CalibratedClassifier and calibrators, imported from ``path``
    and then removed from ``sys.modules`` (the current package is imported afresh)."""
    # an editable install's finder would serve this checkout's modules: set it aside
    finders = [f for f in sys.meta_path if "__editable__" in getattr(f, "__module__", "")]
    sys.meta_path[:] = [f for f in sys.meta_path if f not in finders]
    sys.path.insert(0, os.path.abspath(path))
    try:
        old = importlib.import_module("streamcal")
        names = {n: getattr(old, n) for n in ("CalibratedClassifier", "VennAbers", "OnlineIsotonic", "OnlinePlatt")}
        for n in ("compose", "calibrators.isotonic", "core._isotonic_stream", "core._pav"):
            importlib.import_module("streamcal." + n)
        for m in [m for m in sys.modules if m == "streamcal" or m.startswith("streamcal.")]:
            where = getattr(sys.modules[m], "__file__", None)
            assert where is None or os.path.abspath(where).startswith(os.path.abspath(path)), where
    finally:
        sys.path.pop(0)
        sys.meta_path.extend(finders)
    for m in [m for m in sys.modules if m == "streamcal" or m.startswith("streamcal.")]:
        del sys.modules[m]
    return names


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", help="directory holding the old build's streamcal package")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calibrators", default="VennAbers,OnlineIsotonic,OnlinePlatt")
    args = parser.parse_args(argv)
    old = load_old(args.old)
    sys.path.insert(0, os.path.dirname(HERE))
    sys.path.insert(0, HERE)
    import streamcal
    from _timing import old_new_rounds, timed_progressive_log_loss
    from river import datasets, linear_model

    assert not os.path.abspath(streamcal.__file__).startswith(os.path.abspath(args.old))
    new = {n: getattr(streamcal, n) for n in old}

    events = list(datasets.Phishing())
    print(f"Phishing ({len(events)} events), {args.rounds} rounds, CPU time; old = {args.old}")
    print(f"{'calibrator':<15} {'old / raw':>10} {'new / raw':>10} {'new / old':>10}   us per event (fastest: raw, old, new)")
    for name in args.calibrators.split(","):
        runs = {
            "raw": lambda: linear_model.LogisticRegression(),
            "old": lambda: old["CalibratedClassifier"](linear_model.LogisticRegression(), old[name]()),
            "new": lambda: new["CalibratedClassifier"](linear_model.LogisticRegression(), new[name]()),
        }
        print(old_new_rounds(runs, args.rounds, lambda m: timed_progressive_log_loss(m, events), len(events), name, 15))

if __name__ == "__main__":
    main()
