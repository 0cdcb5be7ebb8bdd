"""Fixed per-event driver for instruction counts (callgrind), not a timing benchmark.

Usage (instructions inside the compiled entry points only, divided by N by hand)::

    PYTHONHASHSEED=0 valgrind --tool=callgrind --collect-atstart=no \
        --toggle-collect='__pyx_pw_9streamcal_4core_16_isotonic_*learn_one' \
        --toggle-collect='__pyx_pw_9streamcal_4core_16_isotonic_*predict_one' \
        python benchmarks/instructions_per_event.py iso 4000 .

(``_isotonic_*``: the calibrators' entry points are ``_isotonic_kernel``'s since
2026-11-29, ``_isotonic_stream``'s before; the pattern counts either build.)

Scenarios: platt, beta, beta_anti (labels drawn against the score, so that the
monotone projection runs), brier, refine, ece, sharp, murphy (per-event ``update``),
brier_many, refine_many, ece_many (100 ``update_many`` of the N events: collect
``*Store_*update_many``), hist_q (4th argument: the HistogramBinning keyword
arguments as a dict literal), iso, iso_lin, iso_grid, iso_win, iso_win10k (a window of
10,000 filled first), iso_hl (half_life=200:
non-dyadic weights, the store's floating-point path), iso_tied / iso_tied_real and
ece_win / ece_win_real / ece_win_q (windows whose sums do not add exactly: collect
``*binned_update`` for the ECE ones), and va_phish / iso_phish
(``VennAbers()`` / ``OnlineIsotonic()`` ``predict_one`` then ``learn_one`` over the 1,250
prequential ``LogisticRegression()`` scores of river's Phishing, N passes: the setting of
issue 15's CalibratedClassifier target; a fresh calibrator each pass). The third argument is
the directory holding the ``streamcal`` package to measure (a copy of another build).
"""
import sys, random
sys.path.insert(0, sys.argv[3] if len(sys.argv) > 3 else ".")
S, N = sys.argv[1], int(sys.argv[2])
rng = random.Random(7)
xs = [rng.random() for _ in range(N)]
ys = [int(rng.random() < x) for x in xs]
from streamcal.calibrators import OnlineBeta, OnlinePlatt, HistogramBinning, OnlineIsotonic
from streamcal.metrics import Brier, CalibrationRefinement
if S == "beta_anti":
    ys = [1 - y for y in ys]
if S in ("platt", "beta", "beta_anti"):
    m = OnlinePlatt() if S == "platt" else OnlineBeta()
    for x, y in zip(xs, ys):
        m.predict_one(x); m.learn_one(x, y)
elif S == "brier":
    m = Brier()
    for x, y in zip(xs, ys):
        m.update(y, x)
elif S == "refine":
    m = CalibrationRefinement()
    for x, y in zip(xs, ys):
        m.update(y, x)
elif S in ("ece", "sharp", "murphy"):
    from streamcal.metrics import ECE, Sharpness, MurphyDecomposition
    m = {"ece": ECE, "sharp": Sharpness, "murphy": MurphyDecomposition}[S]()
    for x, y in zip(xs, ys):
        m.update(y, x)
elif S.endswith("_many"):
    import numpy as np
    from streamcal.metrics import ECE
    m = {"brier_many": Brier, "refine_many": CalibrationRefinement, "ece_many": ECE}[S]()
    Y, X = np.array(ys, dtype=float), np.array(xs)
    for _ in range(100):
        m.update_many(Y, X)
elif S == "hist_q":
    m = HistogramBinning(**eval(sys.argv[4]))
    for x, y in zip(xs, ys):
        m.predict_one(x); m.learn_one(x, y)
elif S in ("va_phish", "iso_phish"):
    from river import datasets, linear_model
    from streamcal.calibrators import VennAbers
    clf, scores, labels = linear_model.LogisticRegression(), [], []
    for x, y in datasets.Phishing():
        scores.append(clf.predict_proba_one(x).get(True, 0.0))
        labels.append(int(y))
        clf.learn_one(x, y)
    for _ in range(N):
        m = VennAbers() if S == "va_phish" else OnlineIsotonic()
        for x, y in zip(scores, labels):
            m.predict_one(x); m.learn_one(x, y)
elif S in ("iso_tied", "iso_tied_real"):
    # window_size=2000, scores rounded to 0.01 (ties), unit or U(0.01, 10) weights: the
    # residue bounds of cells whose sums do not add exactly (core/_pav_residue.pxd)
    ws = [rng.uniform(0.01, 10.0) if S == "iso_tied_real" else 1.0 for _ in range(N)]
    m = OnlineIsotonic(window_size=2000)
    for x, y, w in zip(xs, ys, ws):
        x = round(x, 2)
        m.predict_one(x); m.learn_one(x, y, w)
elif S in ("ece_win", "ece_win_real", "ece_win_q"):
    # collect *binned_update: ECE(window_size=1000), unit or U(0.01, 10) weights
    from streamcal.metrics import ECE
    ws = [rng.uniform(0.01, 10.0) if S == "ece_win_real" else 1.0 for _ in range(N)]
    m = ECE(window_size=1000, strategy="quantile" if S == "ece_win_q" else "uniform")
    for x, y, w in zip(xs, ys, ws):
        m.update(y, x, w)
elif S == "iso_win10k":
    # issue 11's window target: 10,000 Beta(2, 2) events learnt in one batch (not
    # collected), then N events of the same stream through predict_one + learn_one
    bx = [rng.betavariate(2, 2) for _ in range(10_000 + N)]
    by = [int(rng.random() < x) for x in bx]
    m = OnlineIsotonic(window_size=10_000)
    m.learn_many(bx[:10_000], by[:10_000])
    for x, y in zip(bx[10_000:], by[10_000:]):
        m.predict_one(x); m.learn_one(x, y)
elif S in ("iso", "iso_lin", "iso_grid", "iso_win", "iso_hl"):
    kw = {"iso": {}, "iso_lin": {"interpolation": "linear"}, "iso_grid": {"resolution": 1e-3},
          "iso_win": {"window_size": 500}, "iso_hl": {"half_life": 200.0}}[S]
    m = OnlineIsotonic(**kw)
    for x, y in zip(xs, ys):
        m.predict_one(x); m.learn_one(x, y)
