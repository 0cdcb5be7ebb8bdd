"""replay_by_key on Spark (local[2]) against streamcal's single-process replay of the
same events (issue 16). Run by hand (never by CI or pytest), in a venv with the spark
extra:

    python benchmarks/bench_spark.py                 # 1,000,000 events, 1,000 keys
    python benchmarks/bench_spark.py --n 200000 --keys 200 --rounds 2
    python benchmarks/bench_spark.py --json out.json

**The log.** ``--n`` events over ``--keys`` keys drawn uniformly (so ~n/keys events per
key), scores uniform in [0, 1] rounded to 3 decimals, labels Bernoulli(score**1.5), an
integer time column (the event's index). Calibrators: ``OnlineIsotonic()`` and
``OnlinePlatt()``; metrics: brier, log_loss, ece (and the raw scores), as in
``streamcal replay``.

**Spark.** ``replay_by_key(df, "key", "score", "label", ..., time="t")`` on a DataFrame
cached in memory (``--partitions`` partitions, built and counted before timing), forced
with ``.collect()``; ``spark.sql.shuffle.partitions`` = 2 x cores. Timed in wall-clock
seconds and in CPU seconds of the whole Spark process tree (the JVM and its Python
workers, summed from ``/proc/<pid>/stat``: utime + stime + cutime + cstime), since the
work runs outside this process.

**The peer: one process.** The same events (already in a pandas DataFrame) replayed
key by key in a loop, ``streamcal.replay`` on each key's rows sorted by time (what
each Spark task does, without Spark): CPU time of this process (``time.process_time``).

Rounds alternate Spark and the peer (``--rounds``, 3); the figures are medians and the
ratios Spark / peer, for wall time and CPU time, and the per-core throughput of the
Spark tasks (events per Spark CPU-second) from which benchmarks/README.md projects a
cluster.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import git_commit

from streamcal import OnlineIsotonic, OnlinePlatt, replay

CALIBRATORS = {"isotonic": OnlineIsotonic(), "platt": OnlinePlatt()}
METRICS = ("brier", "log_loss", "ece")
_TICK = os.sysconf("SC_CLK_TCK")


def make_log(n: int, keys: int, seed: int):
    import pandas as pd

    rng = np.random.default_rng(seed)
    scores = rng.random(n).round(3)
    return pd.DataFrame({
        "key": rng.integers(0, keys, n).astype(np.int64),
        "t": np.arange(n, dtype=np.int64),
        "score": scores,
        "label": (rng.random(n) < scores ** 1.5).astype(np.int64),
    })


def _children(pid: int) -> list:
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out += [int(c) for c in f.read().split()]
    except OSError:
        pass
    return out


def tree_cpu(root: int) -> float:
    """CPU seconds of ``root`` and every live descendant (with their reaped children)."""
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
        except OSError:
            continue
        todo += _children(pid)
    return total / _TICK


def spark_jvm_pid(spark) -> int:
    """The pid of the JVM (the Spark driver, executors and Python daemon below it)."""
    name = spark.sparkContext._jvm.java.lang.management.ManagementFactory \
        .getRuntimeMXBean().getName()
    return int(name.split("@")[0])


def run_single(pdf) -> tuple:
    start_cpu, start = time.process_time(), time.perf_counter()
    summaries = {}
    for k, rows in pdf.groupby("key", sort=False):
        rows = rows.sort_values("t", kind="stable")
        result = replay(rows[["score", "label"]],
                        {n: c.clone() for n, c in CALIBRATORS.items()}, METRICS,
                        every=None)
        summaries[k] = result.summary
    return time.process_time() - start_cpu, time.perf_counter() - start, summaries


def run_spark(spark, df, jvm: int) -> tuple:
    from streamcal.spark import replay_by_key

    cpu0, start = tree_cpu(jvm), time.perf_counter()
    rows = replay_by_key(df, "key", "score", "label", CALIBRATORS, METRICS,
                         time="t").collect()
    wall = time.perf_counter() - start
    return tree_cpu(jvm) - cpu0, wall, rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)

    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"  # loopback only
    spark = (SparkSession.builder.master("local[2]").appName("bench_spark")
             .config("spark.sql.shuffle.partitions", "4")
             .config("spark.ui.enabled", "false")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.driver.memory", "4g")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    jvm = spark_jvm_pid(spark)
    pdf = make_log(args.n, args.keys, args.seed)
    df = spark.createDataFrame(pdf).repartition(args.partitions).cache()
    df.count()
    print(f"{args.n:,} events over {args.keys:,} keys; calibrators {list(CALIBRATORS)}, "
          f"metrics {list(METRICS)}; commit {git_commit()}", flush=True)

    run_spark(spark, df, jvm)  # warm-up: worker start, imports, code generation
    spark_cpu, spark_wall, single_cpu, single_wall = [], [], [], []
    for r in range(args.rounds):
        c, w, rows = run_spark(spark, df, jvm)
        spark_cpu.append(c), spark_wall.append(w)
        c1, w1, summaries = run_single(pdf)
        single_cpu.append(c1), single_wall.append(w1)
        print(f"round {r}: spark {w:.2f} s wall, {c:.2f} s cpu; "
              f"single process {w1:.2f} s wall, {c1:.2f} s cpu", flush=True)
    # the two agree (a check that both did the same work)
    worst = max(abs(row["brier"] - summaries[row["key"]][row["calibrator"]]["brier"])
                for row in rows)
    med = statistics.median
    out = {
        "n": args.n, "keys": args.keys, "rounds": args.rounds,
        "spark_wall_s": med(spark_wall), "spark_cpu_s": med(spark_cpu),
        "single_wall_s": med(single_wall), "single_cpu_s": med(single_cpu),
        "wall_ratio": med(w / w1 for w, w1 in zip(spark_wall, single_wall)),
        "cpu_ratio": med(c / c1 for c, c1 in zip(spark_cpu, single_cpu)),
        "spark_events_per_cpu_s": args.n / med(spark_cpu),
        "single_events_per_cpu_s": args.n / med(single_cpu),
        "max_brier_difference": worst,
        "commit": git_commit(),
    }
    for k, v in out.items():
        print(f"{k:>26}: {v:,.6g}" if isinstance(v, float) else f"{k:>26}: {v}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
    spark.stop()


if __name__ == "__main__":
    main()
