"""Three parts of ``streamcal replay`` timed alone, a baseline tree against the working
tree, in alternating child processes (CPU time of the part, ``time.process_time``,
imports done before timing). Run by hand from the repository root (not a test)::

    mkdir -p /tmp/before && git archive main | tar -x -C /tmp/before  # + its .so files
    python benchmarks/bench_replay_engine.py --rows 1000000 --rounds 1 --only 1  # the log
    python benchmarks/bench_replay_parts.py /tmp/before --rounds 7

Parts: ``read``, the pyarrow block reader of the 10^6-row CSV (``FastCsv.blocks``, each
block's newline positions included, as the replay's samples ask for them); ``metrics``,
the default metrics' ``update_many`` (brier, log_loss, ece, twice: raw and one
calibrator) over 205 batches of 4,878 events (the replay's segments); ``score``, the
same batches as the engine hands them over (``streamcal.metrics.update_many_each``: the
labels and each column checked once per batch; a tree without it: one ``update_many``
per metric); ``count``, the CLI's ``_count_rows`` of the log.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import sys, time, importlib, numpy as np
part, log = sys.argv[1], sys.argv[2]
if part == "read":
    F = importlib.import_module("streamcal.replay._fastcsv")
    import pyarrow.csv
    t = time.process_time()
    r = F.FastCsv(log, ",", ["score", "label"], "score", "label")
    for b in r.blocks():
        b._line_ends()
    r.close()
elif part == "metrics":
    from streamcal import registry
    rng = np.random.default_rng(0)
    p = rng.random(4878)
    y = (rng.random(4878) < p).astype(np.float64)
    ms = [registry.make_metric(k) for k in ("brier", "log_loss", "ece")] * 2
    for m in ms:
        m.update_many(y, p)
    t = time.process_time()
    for _ in range(205):
        for m in ms:
            m.update_many(y, p)
elif part == "score":
    from streamcal import registry
    try:
        from streamcal.metrics import update_many_each
    except ImportError:  # a tree before it: the engine's loop of update_many
        def update_many_each(batches, y):
            for m, p in batches:
                m.update_many(y, p)
    rng = np.random.default_rng(0)
    p = rng.random(4878)
    q = rng.random(4878)
    y = (rng.random(4878) < p).astype(np.float64)
    names = ("brier", "log_loss", "ece")
    batches = [(registry.make_metric(k), c) for c in (p, q) for k in names]
    update_many_each(batches, y)
    t = time.process_time()
    for _ in range(205):
        update_many_each(batches, y)
elif part == "count":
    from streamcal.cli._replay import _count_rows
    import streamcal.replay
    _count_rows(log + ".missing.csv")
    t = time.process_time()
    _count_rows(log)
print(time.process_time() - t)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("baseline", help="a copy of the tree (with its compiled modules)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--log", default=os.path.join(
        tempfile.gettempdir(), "streamcal_bench_engine", "log1000000.csv"))
    ap.add_argument("--parts", default="read,metrics,score,count")
    args = ap.parse_args()
    trees = {"before": os.path.abspath(args.baseline), "after": os.getcwd()}
    for part in args.parts.split(","):
        res = {k: [] for k in trees}
        for r in range(args.rounds):
            for k in list(trees) if r % 2 == 0 else list(trees)[::-1]:
                out = subprocess.run(
                    [sys.executable, "-c", CHILD, part, args.log], cwd=trees[k], check=True,
                    capture_output=True, text=True, env={**os.environ, "PYTHONPATH": trees[k]},
                )
                res[k].append(float(out.stdout.split()[-1]))
        b, a = statistics.median(res["before"]), statistics.median(res["after"])
        ratio = statistics.median(x / y for x, y in zip(res["after"], res["before"]))
        print(f"{part}: before {b:.4f} s, after {a:.4f} s CPU (medians of {args.rounds}); "
              f"after/before {ratio:.2f}", flush=True)


if __name__ == "__main__":
    main()
