"""The replay command against reading the log and against river (issue 12). Run by hand
from the repository root (never by CI or pytest):

    python benchmarks/bench_replay_engine.py              # 10^6 rows, 5 rounds
    python benchmarks/bench_replay_engine.py --rows 100000 --rounds 3
    python benchmarks/bench_replay_engine.py --memory     # also peak RSS at 10^6 and 10^7 rows
    python benchmarks/bench_replay_engine.py --only 1     # target 1 only (2: target 2 only)
    python benchmarks/bench_replay_engine.py --only 1 --baseline /tmp/before  # also the
        # replay of another copy of the tree (e.g. `git archive main | tar -x -C
        # /tmp/before`, its compiled modules copied in), same rounds, rotated order
    python benchmarks/bench_replay_engine.py --only 2 --threads-one  # also the default
        # set with --threads 1 (its calibrators one after another, not side by side)
    python benchmarks/bench_replay_engine.py --per-calibrator  # CPU of each default
        # calibrator's predict_learn_many over the log, in the replay's 8,192-event chunks

Every figure is the time of a whole process (interpreter start and imports included),
measured in interleaved rounds on the same file (read once before timing, so from the
page cache), and quoted as the median ratio of the rounds. Two clocks: the CPU time of
the child (user + system, from ``os.wait4``: what the machine's other jobs do not
inflate; the primary figure on a shared machine) and its wall time (what the targets
literally say; pyarrow's reader uses threads, so its wall time can be below its CPU
time on an idle machine):

1. ``streamcal replay LOG --calibrator isotonic:resolution=1e-4 --out DIR`` (the default
   metrics) against ``python -c`` reading the same file with ``pyarrow.csv.read_csv``.
   Target: at most 3x.
2. ``streamcal replay LOG --out DIR`` (the default calibrator set) against river's
   ``evaluate.progressive_val_score`` with a ``NoChangeClassifier`` over the same events
   (``stream.iter_csv``, the score as the one feature, river's LogLoss). Target: the
   replay at least 3x faster.
3. With ``--memory``: the peak resident set size of ``streamcal replay`` with bounded
   calibrators (``isotonic:resolution=1e-4``, ``histogram``, ``platt``) on 10^6 and 10^7
   rows. Target: within 1.2x.

The streamcal trees timed (the working tree, and ``--baseline``) are byte-compiled first
(``python -m compileall``), as ``pip install`` leaves a package and as numpy and pyarrow
are: an editable install under ``PYTHONDONTWRITEBYTECODE=1`` (set on these machines)
would otherwise compile every streamcal module from source in every round, about 0.1 s
of CPU that the reference does not pay. ``--no-compile`` times the trees as they are.

The log: scores ~ Beta(2, 2) written with ``repr`` (distinct values), labels ~
Bernoulli(s^2 / (s^2 + (1 - s)^2)); files are generated once into ``--dir``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

PY = sys.executable


def make_log(path: str, n: int, seed: int = 0) -> str:
    if os.path.exists(path):
        return path
    rng = np.random.default_rng(seed)
    tmp = path + ".part"
    with open(tmp, "w") as f:
        f.write("score,label\n")
        step = 1_000_000
        for a in range(0, n, step):
            s = rng.beta(2.0, 2.0, min(step, n - a))
            y = (rng.random(len(s)) < s**2 / (s**2 + (1 - s) ** 2)).astype(int)
            f.write("".join(f"{v!r},{b}\n" for v, b in zip(s.tolist(), y.tolist())))
    os.replace(tmp, path)
    return path


def timed(cmd: list, cwd=None) -> tuple:
    """(wall seconds, CPU seconds: user + system) of the child process running ``cmd``."""
    t0 = time.perf_counter()
    child = subprocess.Popen(
        cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - t0
    child.returncode = os.waitstatus_to_exitcode(status)
    assert child.returncode == 0, cmd
    return wall, usage.ru_utime + usage.ru_stime


def peak_rss_mb(cmd: list) -> float:
    """Peak resident set size of a child process, MB (ru_maxrss of the waited child)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.execv(cmd[0], cmd)
    _, status, usage = os.wait4(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, cmd
    return usage.ru_maxrss / 1024


def interleaved_rounds(cmds: dict, cwds: dict, rounds: int) -> tuple:
    """Time each command of ``cmds`` (name -> argv, run in ``cwds.get(name)``) once per
    round, the order rotated each round; returns the wall and CPU seconds per name."""
    walls = {k: [] for k in cmds}
    cpus = {k: [] for k in cmds}
    for r in range(rounds):
        names = list(cmds)
        names = names[r % len(names):] + names[: r % len(names)]  # rotate the order
        for name in names:
            w, c = timed(cmds[name], cwds.get(name))
            walls[name].append(w)
            cpus[name].append(c)
        print(f"round {r + 1}: " + ", ".join(
            f"{k} {cpus[k][-1]:.2f}s CPU / {walls[k][-1]:.2f}s wall" for k in cmds), flush=True)
    return walls, cpus


RIVER = """
import sys
from river import evaluate, metrics, dummy, stream
events = stream.iter_csv(sys.argv[1], converters={"score": float, "label": int}, target="label")
evaluate.progressive_val_score(
    ((x, bool(y)) for x, y in events), dummy.NoChangeClassifier(), metrics.LogLoss()
)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "streamcal_bench_engine"))
    ap.add_argument("--memory", action="store_true")
    ap.add_argument("--only", choices=["1", "2"], help="time target 1 or 2 only")
    ap.add_argument("--baseline", help="a copy of the tree whose replays are timed too")
    ap.add_argument("--per-calibrator", action="store_true")
    ap.add_argument("--threads-one", action="store_true",
                    help="also time the default set with --threads 1")
    ap.add_argument("--no-compile", action="store_true",
                    help="do not byte-compile the timed trees first")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    log = make_log(os.path.join(args.dir, f"log{args.rows}.csv"), args.rows)
    with open(log, "rb") as f:  # into the page cache
        while f.read(1 << 24):
            pass
    out = os.path.join(args.dir, "out")
    cmds = {
        "replay isotonic:resolution=1e-4": [PY, "-m", "streamcal", "replay", log, "--calibrator",
                                            "isotonic:resolution=1e-4", "--out", out],
        "pyarrow read_csv": [PY, "-c", f"import pyarrow.csv as c; c.read_csv({log!r})"],
        "replay default set": [PY, "-m", "streamcal", "replay", log, "--out", out],
        "river NoChange progressive_val_score": [PY, "-c", RIVER, log],
    }
    if args.per_calibrator:
        per_calibrator(log)
        return
    if args.only:
        keep = {"1": ("replay isotonic:resolution=1e-4", "pyarrow read_csv"),
                "2": ("replay default set", "river NoChange progressive_val_score")}[args.only]
        cmds = {k: v for k, v in cmds.items() if k in keep}
    if args.threads_one and "replay default set" in cmds:
        cmds["replay default set, --threads 1"] = cmds["replay default set"] + ["--threads", "1"]
    cwds = {}
    if args.baseline:
        for k in [k for k in cmds if k.startswith("replay")]:
            cmds[f"{k} (baseline)"] = cmds[k]
            cwds[f"{k} (baseline)"] = os.path.abspath(args.baseline)
    if not args.no_compile:
        for tree in {os.getcwd(), *(os.path.abspath(c) for c in cwds.values())}:
            subprocess.run([PY, "-m", "compileall", "-q", "streamcal"], cwd=tree, check=True,
                           stdout=subprocess.DEVNULL)
    walls, cpus = interleaved_rounds(cmds, cwds, args.rounds)
    print(f"\n{args.rows:,} rows, {args.rounds} rounds, medians:")
    for k in cmds:
        print(f"  {k}: {statistics.median(cpus[k]):.2f} s CPU, {statistics.median(walls[k]):.2f} s wall")

    def ratio(times, a, b):
        return statistics.median(x / y for x, y in zip(times[a], times[b]))

    for tail in ("", " (baseline)"):
        a, b = "replay isotonic:resolution=1e-4" + tail, "pyarrow read_csv"
        if a in cmds and b in cmds:
            print(f"1. {a} / pyarrow read_csv: {ratio(cpus, a, b):.2f}x CPU, "
                  f"{ratio(walls, a, b):.2f}x wall (target <= 3x)")
        a, b = "river NoChange progressive_val_score", "replay default set" + tail
        if a in cmds and b in cmds:
            print(f"2. river progressive_val_score / {b}: {ratio(cpus, a, b):.2f}x CPU, "
                  f"{ratio(walls, a, b):.2f}x wall (target >= 3x)")
    a, b = "river NoChange progressive_val_score", "replay default set, --threads 1"
    if a in cmds and b in cmds:
        print(f"2. river progressive_val_score / {b}: {ratio(cpus, a, b):.2f}x CPU, "
              f"{ratio(walls, a, b):.2f}x wall")
        a = "replay default set"
        print(f"   {b} / {a}: {ratio(cpus, b, a):.2f}x CPU, {ratio(walls, b, a):.2f}x wall")
    for k in [k for k in cmds if k.endswith(" (baseline)")]:
        a = k[: -len(" (baseline)")]
        print(f"   {a}: this tree / baseline {ratio(cpus, a, k):.3f} CPU, "
              f"{ratio(walls, a, k):.3f} wall")
    if args.memory:
        bounded = ["--calibrator", "isotonic:resolution=1e-4", "--calibrator", "histogram",
                   "--calibrator", "platt"]
        small = make_log(os.path.join(args.dir, "log1000000.csv"), 1_000_000)
        big = make_log(os.path.join(args.dir, "log10000000.csv"), 10_000_000)
        m1 = peak_rss_mb([PY, "-m", "streamcal", "replay", small, *bounded, "--out", out])
        m2 = peak_rss_mb([PY, "-m", "streamcal", "replay", big, *bounded, "--out", out])
        print(f"3. peak RSS, bounded calibrators: 1e6 rows {m1:.0f} MB, 1e7 rows {m2:.0f} MB: "
              f"{m2 / m1:.2f}x (target <= 1.2x)")


def per_calibrator(log: str) -> None:
    """CPU seconds of each default calibrator's ``predict_learn_many`` over the log, in
    the replay's 8,192-event chunks (the replay's own batch calls, no reading)."""
    import pyarrow.csv as pacsv

    from streamcal import registry

    table = pacsv.read_csv(log)
    s = table.column("score").to_numpy().astype(np.float64)
    y = table.column("label").to_numpy().astype(np.float64)
    for name in registry.DEFAULT_CALIBRATORS:
        cal = registry.make_calibrator(name)
        t0 = time.process_time()
        for a in range(0, len(s), 8192):
            cal.predict_learn_many(s[a : a + 8192], y[a : a + 8192])
        print(f"{name}: {time.process_time() - t0:.2f} s CPU ({len(s):,} events)", flush=True)


if __name__ == "__main__":
    main()
