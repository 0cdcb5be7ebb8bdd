"""VennAbers().predict_learn_many on 2e5 events, CPU time, two builds interleaved.

Usage: ``python benchmarks/bench_venn_abers_window.py DIR_BEFORE DIR_AFTER [ROUNDS]``,
each DIR holding a built ``streamcal`` package (a copy of the tree at each commit).
Each round runs one child process per build (order alternating), which times
``cal.predict_learn_many`` over 8,192-event chunks of scores ~ Beta(2, 2), labels ~
Bernoulli(s^2 / (s^2 + (1 - s)^2)) (the replay log's law) with ``time.process_time``;
the medians and their ratio are printed.
"""
import statistics
import subprocess
import sys

CHILD = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
decimals = int(sys.argv[2])
import numpy as np
from streamcal.calibrators import VennAbers
rng = np.random.default_rng(0)
s = rng.beta(2.0, 2.0, 200_000)
if decimals >= 0:
    s = np.round(s, decimals)
y = (rng.random(200_000) < s**2 / (s**2 + (1 - s) ** 2)).astype(np.int64)
cal = VennAbers()
t = time.process_time()
for a in range(0, len(s), 8192):
    cal.predict_learn_many(s[a:a + 8192], y[a:a + 8192])
print(time.process_time() - t)
"""


def main():
    dirs = sys.argv[1:3]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    decimals = sys.argv[4] if len(sys.argv) > 4 else "-1"
    times = {d: [] for d in dirs}
    for r in range(rounds):
        for d in (dirs if r % 2 == 0 else dirs[::-1]):
            out = subprocess.run([sys.executable, "-c", CHILD, d, decimals], capture_output=True,
                                 text=True, check=True).stdout
            times[d].append(float(out))
    for d in dirs:
        print(f"{d}: median {statistics.median(times[d]):.3f} s  {sorted(times[d])}")
    print(f"after / before: {statistics.median(times[dirs[1]]) / statistics.median(times[dirs[0]]):.3f}")


if __name__ == "__main__":
    main()
