"""Hand-run (not CI): ClassWise.learn_one CPU time (time.process_time) per event with
the atomic weight check, against the same code with the dry run skipped
(``_weight_refusal`` -> -1: the old cost plus the planning), 5 interleaved rounds,
median ratio. Run: ``.venv/bin/python benchmarks/bench_multiclass_atomic.py``."""
import statistics, time
from streamcal import ClassWise, OnlineIsotonic, OnlinePlatt, HistogramBinning
from streamcal.base import BinaryCalibrator
from streamcal.checks.multiclass import yield_multiclass_stream

events = list(yield_multiclass_stream(2000, 4))
real = BinaryCalibrator._weight_refusal

def run(inner, skip):
    BinaryCalibrator._weight_refusal = (lambda self, s, y, w: -1) if skip else real
    cal = ClassWise(inner)
    learn = cal.learn_one
    t = time.process_time()
    for s, y, w in events:
        learn(s, y, w)
    out = time.process_time() - t
    BinaryCalibrator._weight_refusal = real
    return out

for inner in (OnlineIsotonic(), OnlinePlatt(), HistogramBinning(n_bins=5, window_size=40)):
    ratios = []
    for _ in range(5):
        a = run(inner, False); b = run(inner, True)
        ratios.append(a / b)
    print(f"{type(inner).__name__}: with/without dry run, median of 5 interleaved rounds: {statistics.median(ratios):.2f}"
          f"  (last: {a/len(events)*1e6:.1f} vs {b/len(events)*1e6:.1f} us/event, K={len(ClassWise(inner).classes) or 4})")
