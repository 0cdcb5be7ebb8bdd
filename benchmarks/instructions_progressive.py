"""Fixed driver for whole-process instruction counts (callgrind) of issue 15's setting:
``progressive_val_score`` over river's Phishing (1,250 events) of
``LogisticRegression()`` alone (``raw``) or inside ``CalibratedClassifier`` with
``VennAbers()`` (``va``) or ``OnlineIsotonic()`` (``iso``), N runs, a fresh model each.
Not a timing benchmark. Per event = (count with N runs - count with 0 runs) / (1250 N)::

    PYTHONHASHSEED=0 OPENBLAS_NUM_THREADS=1 valgrind --tool=callgrind \
        --callgrind-out-file=/dev/null python benchmarks/instructions_progressive.py va 4

A third argument names the directory of another build's ``streamcal`` package (loaded as
``bench_package_compare.py`` loads it).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
which, n = sys.argv[1], int(sys.argv[2])
if len(sys.argv) > 3:
    from bench_package_compare import load_old

    names = load_old(sys.argv[3])
else:
    import streamcal

    names = {k: getattr(streamcal, k) for k in ("CalibratedClassifier", "VennAbers", "OnlineIsotonic")}
from river import datasets, evaluate, linear_model, metrics

events = list(datasets.Phishing())
for _ in range(n):
    if which == "raw":
        model = linear_model.LogisticRegression()
    else:
        cal = names["VennAbers" if which == "va" else "OnlineIsotonic"]()
        model = names["CalibratedClassifier"](linear_model.LogisticRegression(), cal)
    evaluate.progressive_val_score(events, model, metrics.LogLoss())
