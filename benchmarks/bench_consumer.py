"""``streamcal consume`` against Redis itself (issue 16): sustained throughput with one
consumer and with two (shards 0/2 and 1/2), as a ratio to ``redis-benchmark``'s XADD
rate on the same server measured in the same round, and the end-to-end latency from
the XADD of a score event to the calibrated output being readable.

Starts its own ``redis-server`` on a free loopback port. Run from the repository root:

    python benchmarks/bench_consumer.py             # 20,000 events, 3 rounds
    python benchmarks/bench_consumer.py --quick     # 5,000 events, 2 rounds

Throughput: the streams are filled first (N score events over 100 keys and their N
labels, each label 0-30 events after its score), then the consumers drain them; the
rate is N / wall-clock seconds (an "event" is a score event plus its label: two
messages), and the CPU seconds of the consumer processes are reported too. The peer:
``redis-benchmark -t``-style XADD of the same fields with 50 clients (``-P 1``), and
pipelined by 50 (``-P 50``, closer to the consumer's batched commits). Rounds
interleave the three measurements; medians are reported.

Latency: a producer XADDs score events at ``--rate`` per second (and their labels 10
events later) while one consumer runs; a reader blocked on the output stream records
when each output arrives. The output id carries the input's XADD time in ms (the
consumer numbers outputs after their input), so latency = arrival - XADD time, at 1 ms
resolution.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import redis


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(folder):
    port = free_port()
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", folder],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = redis.Redis(port=port)
    for _ in range(200):
        try:
            client.ping()
            return proc, port, client
        except redis.exceptions.ConnectionError:
            time.sleep(0.02)
    raise RuntimeError("redis-server did not start")


def produce(client, n, seed=0, keys=100):
    rng = random.Random(seed)
    waiting = []
    pipe = client.pipeline(transaction=False)
    for i in range(n):
        score = rng.random()
        pipe.xadd("events", {"id": f"e{i}", "score": repr(score), "key": f"k{rng.randrange(keys)}"})
        waiting.append((i + rng.randrange(31), f"e{i}", int(rng.random() < score)))
        waiting.sort()
        while waiting and waiting[0][0] <= i:
            _, event_id, y = waiting.pop(0)
            pipe.xadd("labels", {"id": event_id, "label": str(y)})
        if i % 1000 == 999:
            pipe.execute()
    for _, event_id, y in waiting:
        pipe.xadd("labels", {"id": event_id, "label": str(y)})
    pipe.execute()


def command(port, out, group, *extra, events="events", labels="labels"):
    return [sys.executable, "-m", "streamcal", "consume", "--redis",
            f"redis://127.0.0.1:{port}/0", "--events", events, "--labels", labels,
            "--out", out, "--group", group, "--key", "key", *extra]


def finished(client, state_key):
    state = client.get(state_key)
    if state is None:
        return False
    applied = json.loads(state)["applied"]
    last = {s: client.xrevrange(s, count=1)[0][0].decode() for s in ("events", "labels")}
    return applied == last


def drain(port, client, n_consumers, tag):
    """Wall seconds and consumer CPU seconds to drain the filled streams."""
    if n_consumers == 1:
        cmds = [command(port, f"out{tag}", f"g{tag}")]
        states = [f"out{tag}:state"]
    else:
        cmds = [command(port, f"out{tag}", f"g{tag}", "--shard", f"{i}/{n_consumers}",
                        "--consumer", f"c{i}") for i in range(n_consumers)]
        states = [f"out{tag}:{i}:state" for i in range(n_consumers)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    procs = [subprocess.Popen(c, stderr=subprocess.DEVNULL) for c in cmds]
    # the clock starts when every consumer has written its first commit (start-up,
    # imports and group creation excluded)
    while not all(client.exists(s) for s in states):
        time.sleep(0.001)
    start = time.perf_counter()
    while not all(finished(client, s) for s in states):
        time.sleep(0.002)
    wall = time.perf_counter() - start
    for p in procs:
        p.send_signal(signal.SIGTERM)
    for p in procs:
        p.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, cpu


def xadd_rate(port, n, pipeline):
    out = subprocess.run(
        ["redis-benchmark", "-p", str(port), "-n", str(n), "-c", "50", "-P", str(pipeline),
         "-q", "XADD", "bench:xadd", "*", "id", "e1", "score", "0.123456789", "key", "k1"],
        capture_output=True, text=True, check=True).stdout
    rate = float(re.findall(r"([\d.]+) requests per second", out)[-1])
    subprocess.run(["redis-cli", "-p", str(port), "DEL", "bench:xadd"], capture_output=True)
    return rate


def latency(port, client, n, rate):
    # streams of their own, empty when the consumer starts
    proc = subprocess.Popen(command(port, "lat", "glat", "--batch-size", "200",
                                    events="lat-events", labels="lat-labels"),
                            stderr=subprocess.DEVNULL)
    arrivals = {}

    def reader():
        last = "0-0"
        while len(arrivals) < n:
            reply = client.xread({"lat": last}, count=1000, block=1000)
            now = time.time() * 1000.0
            for _, entries in reply or ():
                for entry_id, fields in entries:
                    last = entry_id.decode()
                    if b"alarm" not in fields:
                        arrivals[last] = now

    while not client.exists("lat-labels"):  # created with the consumer's groups
        time.sleep(0.01)
    time.sleep(0.5)
    thread = threading.Thread(target=reader)
    thread.start()
    producer = redis.Redis(port=port)
    lag = []
    start = time.perf_counter()
    for i in range(n):
        producer.xadd("lat-events", {"id": f"l{i}", "score": "0.3", "key": f"k{i % 100}"})
        lag.append(f"l{i}")
        if len(lag) > 10:
            producer.xadd("lat-labels", {"id": lag.pop(0), "label": str(int(i % 3 == 0))})
        delay = start + (i + 1) / rate - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
    thread.join(timeout=60)
    proc.send_signal(signal.SIGTERM)
    proc.wait()
    lat = sorted(t - int(entry_id.split("-")[0]) for entry_id, t in arrivals.items())
    q = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))]  # noqa: E731
    return {"n": len(lat), "p50_ms": q(0.50), "p99_ms": q(0.99), "max_ms": lat[-1]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20_000, help="events per throughput run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rate", type=float, default=1000.0, help="events/s of the latency run")
    parser.add_argument("--latency-n", type=int, default=5000)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.rounds, args.latency_n = 5000, 2, 2000
    if shutil.which("redis-server") is None:
        sys.exit("needs redis-server (apt-get install -y redis-server)")
    folder = tempfile.mkdtemp()
    server, port, client = start_server(folder)
    try:
        produce(client, args.n)
        rows = {"xadd -P 1": [], "xadd -P 50": [], "1 consumer": [], "2 consumers": [],
                "1 consumer cpu": [], "2 consumers cpu": []}
        for r in range(args.rounds):
            rows["xadd -P 1"].append(xadd_rate(port, 100_000, 1))
            rows["xadd -P 50"].append(xadd_rate(port, 200_000, 50))
            for k in (1, 2):
                wall, cpu = drain(port, client, k, f"{r}-{k}")
                name = "1 consumer" if k == 1 else "2 consumers"
                rows[name].append(args.n / wall)
                rows[name + " cpu"].append(args.n / cpu)
            print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:,.0f}" for k, v in rows.items()),
                  flush=True)
        med = {k: statistics.median(v) for k, v in rows.items()}
        print(f"\nthroughput, {args.n:,} events (score + label) over 100 keys, "
              f"median of {args.rounds} interleaved rounds:")
        print(f"  redis-benchmark XADD, 50 clients, -P 1:  {med['xadd -P 1']:>10,.0f} XADD/s")
        print(f"  redis-benchmark XADD, 50 clients, -P 50: {med['xadd -P 50']:>10,.0f} XADD/s")
        for name in ("1 consumer", "2 consumers"):
            print(f"  {name:<12} {med[name]:>10,.0f} events/s (wall), "
                  f"{med[name + ' cpu']:>8,.0f} events per CPU-second of the consumers; "
                  f"{med[name] / med['xadd -P 1']:.3f} x XADD -P 1, "
                  f"{2 * med[name] / med['xadd -P 50']:.3f} x XADD -P 50 in messages")
        lat = latency(port, client, args.latency_n, args.rate)
        print(f"\nlatency XADD -> calibrated output readable, {lat['n']:,} events at "
              f"{args.rate:,.0f}/s, one consumer: p50 {lat['p50_ms']:.0f} ms, "
              f"p99 {lat['p99_ms']:.0f} ms, max {lat['max_ms']:.0f} ms")
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
