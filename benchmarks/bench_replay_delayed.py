"""Replaying a log whose labels arrive late (a label-time column). Run by hand from the
repository root (never by CI or pytest):

    python benchmarks/bench_replay_delayed.py                     # 10^6 rows, 3 rounds
    python benchmarks/bench_replay_delayed.py --rows 200000 --baseline /tmp/before
        # also the replays of another copy of the tree (e.g. `git archive main | tar -x
        # -C /tmp/before`, its compiled modules copied in), same rounds, rotated order

Whole processes (interpreter start and imports included), interleaved rounds, medians;
CPU time (user + system of the child) and wall time, as ``bench_replay_engine.py``:

- ``streamcal replay LOG --time t --label-time lt`` with the default calibrator set,
  and with two cheap calibrators (``histogram platt``: what the engine itself costs);
- the peer: river's ``evaluate.progressive_val_score`` with a ``NoChangeClassifier``
  over the same events, each label revealed ``lt - t`` after its event (``moment="t"``,
  ``delay``), river's LogLoss.

The log: event times 0, 1, 2, ... (one event per time unit); each label arrives after
a delay drawn uniformly from 0 to 2,000 events, so predictions and reveals interleave
one by one, the hard case for a batched engine; scores ~ Beta(2, 2) written with
``repr``, labels ~ Bernoulli(s^2 / (s^2 + (1 - s)^2)). Generated once into ``--dir``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_replay_engine import PY, interleaved_rounds  # noqa: E402


def make_log(path: str, n: int, max_delay: int, seed: int = 0) -> str:
    if os.path.exists(path):
        return path
    rng = np.random.default_rng(seed)
    tmp = path + ".part"
    with open(tmp, "w") as f:
        f.write("t,lt,score,label\n")
        step = 1_000_000
        for a in range(0, n, step):
            m = min(step, n - a)
            s = rng.beta(2.0, 2.0, m)
            y = (rng.random(m) < s**2 / (s**2 + (1 - s) ** 2)).astype(int)
            t = np.arange(a, a + m)
            lt = t + rng.integers(0, max_delay + 1, m)
            f.write("".join(f"{ti},{li},{v!r},{b}\n"
                            for ti, li, v, b in zip(t.tolist(), lt.tolist(), s.tolist(), y.tolist())))
    os.replace(tmp, path)
    return path


RIVER = """
import sys
from river import evaluate, metrics, dummy, stream
events = stream.iter_csv(sys.argv[1], converters={"t": int, "lt": int, "score": float, "label": int},
                         target="label")
evaluate.progressive_val_score(
    ((x, bool(y)) for x, y in events), dummy.NoChangeClassifier(), metrics.LogLoss(),
    moment="t", delay=lambda x, y: x["lt"] - x["t"],
)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max-delay", type=int, default=2000)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "streamcal_bench_delayed"))
    ap.add_argument("--baseline", help="a copy of the tree whose replays are timed too")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    log = make_log(os.path.join(args.dir, f"delayed{args.rows}_{args.max_delay}.csv"), args.rows,
                   args.max_delay)
    with open(log, "rb") as f:  # into the page cache
        while f.read(1 << 24):
            pass
    replay = [PY, "-m", "streamcal", "replay", log, "--time", "t", "--label-time", "lt", "--no-progress"]
    cmds = {
        "replay default set": replay,
        "replay histogram platt": replay + ["--calibrator", "histogram", "platt"],
        "river NoChange progressive_val_score, delayed": [PY, "-c", RIVER, log],
    }
    cwds = {}
    if args.baseline:
        for k in [k for k in cmds if k.startswith("replay")]:
            cmds[f"{k} (baseline)"] = cmds[k]
            cwds[f"{k} (baseline)"] = os.path.abspath(args.baseline)
    for tree in {os.getcwd(), *cwds.values()}:
        subprocess.run([PY, "-m", "compileall", "-q", "streamcal"], cwd=tree, check=True,
                       stdout=subprocess.DEVNULL)
    walls, cpus = interleaved_rounds(cmds, cwds, args.rounds)
    print(f"\n{args.rows:,} rows, delays 0..{args.max_delay} events, {args.rounds} rounds, medians:")
    for k in cmds:
        print(f"  {k}: {statistics.median(cpus[k]):.2f} s CPU, {statistics.median(walls[k]):.2f} s wall, "
              f"{args.rows / statistics.median(walls[k]):,.0f} events/s")

    def ratio(times, a, b):
        return statistics.median(x / y for x, y in zip(times[a], times[b]))

    river = "river NoChange progressive_val_score, delayed"
    for k in [k for k in cmds if k.startswith("replay")]:
        print(f"  river / {k}: {ratio(cpus, river, k):.2f}x CPU, {ratio(walls, river, k):.2f}x wall")
    for k in [k for k in cmds if k.endswith(" (baseline)")]:
        a = k[: -len(" (baseline)")]
        print(f"  {a}: this tree / baseline {ratio(cpus, a, k):.3f} CPU, {ratio(walls, a, k):.3f} wall")


if __name__ == "__main__":
    main()
