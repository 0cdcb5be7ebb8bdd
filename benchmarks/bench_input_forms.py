"""Per-event cost of a ``predict_one`` + ``learn_one`` loop by the form of its inputs.

Run by hand from the repository root (never by CI or pytest)::

    python benchmarks/bench_input_forms.py               # 200,000 events, 5 rounds
    python benchmarks/bench_input_forms.py --n 50000 --rounds 3

Users feed calibrators Python floats and ints, float labels read from files, or the
numpy scalars that a loop over numpy arrays hands over (``for s, y in zip(scores,
labels)``). Every form is accepted with the same result (the shared check
``check_input_forms_agree``); this measures what each costs. The forms run in
interleaved rounds on the same events, CPU time of this process; the figure is the
median microseconds per event, and its ratio to Python float scores with int labels.
Calibrators: ``OnlineIsotonic(resolution=1e-4)`` and ``OnlinePlatt()``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from streamcal import OnlineIsotonic, OnlinePlatt


def forms(n: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    s = rng.beta(2.0, 2.0, n)
    y = (rng.random(n) < s**2 / (s**2 + (1 - s) ** 2)).astype(np.int64)
    return {
        "float scores, int labels": (s.tolist(), y.tolist()),
        "float scores, float labels": (s.tolist(), y.astype(float).tolist()),
        "float scores, bool labels": (s.tolist(), y.astype(bool).tolist()),
        "numpy float64 scores, int64 labels": (list(s), list(y)),
        "numpy float64 scores, float64 labels": (list(s), list(y.astype(float))),
    }


def loop(cal, scores, labels) -> float:
    predict, learn = cal.predict_one, cal.learn_one
    t = time.process_time()
    for a, b in zip(scores, labels):
        predict(a)
        learn(a, b)
    return time.process_time() - t


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=200_000, help="events per run")
    p.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    args = p.parse_args()
    data = forms(args.n)
    makers = {"OnlineIsotonic(resolution=1e-4)": lambda: OnlineIsotonic(resolution=1e-4),
              "OnlinePlatt()": OnlinePlatt}
    for name, make in makers.items():
        times = {form: [] for form in data}
        for _ in range(args.rounds):
            for form, (s, y) in data.items():
                times[form].append(loop(make(), s, y) / args.n * 1e6)
        base = statistics.median(times["float scores, int labels"])
        print(f"\n{name}, {args.n:,} events, median of {args.rounds} rounds")
        print("| inputs | us per event | / float, int |\n| --- | ---: | ---: |")
        for form, ts in times.items():
            m = statistics.median(ts)
            print(f"| {form} | {m:.2f} | {m / base:.2f}x |")


if __name__ == "__main__":
    main()
