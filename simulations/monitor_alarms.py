"""False alarms and detection delays of streamcal's calibration monitors.

Question: on calibrated streams, how often does each monitor raise a false alarm (the
e-process promises at most ``alpha``, the river detectors promise nothing)? After a
realistic loss of calibration, how long does each take to notice?

Protocol (fixed seeds; common random numbers across methods and conditions):

- monitors: ``CalibrationMonitor()`` (the e-process, ``alpha = 0.05``, defaults
  otherwise), and ``CalibrationMonitor(method=m, residual=r)`` for river's ADWIN and
  Page-Hinkley with their default parameters, on the residual ``label - score``
  ("signed") or on it and ``(label - score) * (2 score - 1)`` ("both");
- scores: Beta(2, 5) (mean 0.29, a typical classifier on an unbalanced problem) or
  uniform on [0, 1], i.i.d., 5,000 events per stream; plus, for false alarms only, the
  rain forecasts of ``streamcal.datasets.rain_sequence`` (seasonal Markov-chain
  weather: the score is the true probability of rain given the past, the label the
  simulated rain, so the stream is calibrated but its labels are dependent);
- labels: ``label_t = u_t < truth_t`` with ``u_t`` uniform; calibrated streams have
  ``truth = score``; shifted streams keep it for ``t < 2000`` and from ``t = 2000`` on
  use a bias, ``truth = clip(score + b)`` with ``b = 0.05`` or ``0.1``, or a
  temperature change, ``truth = sigmoid(T * logit(score))`` with ``T = 1.5`` (the
  scores become under-confident) or ``T = 0.67`` (over-confident);
- false alarm: any alarm in the 5,000 events of a calibrated stream; its rate over the
  seeds with a 95% Clopper-Pearson interval, and the mean number of alarms per stream;
- delay: the number of events from the shift up to and including the first alarm at
  ``t >= 2000`` (an earlier false alarm resets the monitor and is reported separately),
  censored at 3,000 (the end of the stream).

Run::

    python simulations/monitor_alarms.py            # 200 seeds, a few minutes
    python simulations/monitor_alarms.py --seeds 20 # quicker, noisier

It writes ``simulations/results/monitor_alarms.md`` (the tables, also printed) and
``simulations/results/monitor_alarms.png`` (the e-process over time around a shift).
"""

from __future__ import annotations

import argparse
import copy
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from scipy import stats

from streamcal.datasets import rain_sequence
from streamcal.monitor import CalibrationMonitor

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")

N_EVENTS = 5000
T_SHIFT = 2000
ALPHA = 0.05
DISTRIBUTIONS = ("Beta(2,5)", "uniform")
SHIFTS = (("bias", 0.05), ("bias", 0.1), ("temperature", 1.5), ("temperature", 0.67))
METHODS = {
    "eprocess": {},
    "adwin (signed)": {"method": "adwin"},
    "adwin (both)": {"method": "adwin", "residual": "both"},
    "page-hinkley (signed)": {"method": "page-hinkley"},
    "page-hinkley (both)": {"method": "page-hinkley", "residual": "both"},
}
WITHIN = (500, 1000)


def make_monitor(method: str) -> CalibrationMonitor:
    return CalibrationMonitor(alpha=ALPHA, **METHODS[method])


def scores_and_uniforms(dist: str, seed: int, n: int = N_EVENTS):
    """The scores and the uniforms that draw the labels, for one stream."""
    rng = np.random.default_rng([seed, DISTRIBUTIONS.index(dist)])
    s = rng.beta(2.0, 5.0, n) if dist == "Beta(2,5)" else rng.random(n)
    return s, rng.random(n)


def truth_after_shift(s: np.ndarray, shift) -> np.ndarray:
    kind, v = shift
    if kind == "bias":
        return np.clip(s + v, 0.0, 1.0)
    with np.errstate(divide="ignore"):
        z = np.log(s) - np.log1p(-s)
    return 1.0 / (1.0 + np.exp(-v * z))


def shift_label(shift) -> str:
    kind, v = shift
    return f"bias +{v}" if kind == "bias" else f"temperature T={v}"


def feed(monitor, scores, labels, stop_at_first: bool = False) -> list:
    """Update with every event; the indices of the alarms (stop at the first one)."""
    alarms = []
    update = monitor.update
    for t, (s, y) in enumerate(zip(scores, labels)):
        update(s, y)
        if monitor.drift_detected:
            alarms.append(t)
            if stop_at_first:
                break
    return alarms


def run_seed(job):
    """All conditions for one (method, distribution, seed): the alarms of the calibrated
    stream, and the first post-shift alarm (or None) of each shifted stream."""
    method, dist, seed = job
    if dist == "rain":
        seq = rain_sequence(N_EVENTS, seed=seed)
        return {
            "calibrated": feed(
                make_monitor(method), seq.p_true.tolist(), seq.rain.tolist()
            )
        }
    s, u = scores_and_uniforms(dist, seed)
    y = (u < s).astype(int)
    monitor = make_monitor(method)
    pre = feed(monitor, s[:T_SHIFT].tolist(), y[:T_SHIFT].tolist())
    out = {"pre": pre}
    cont = copy.deepcopy(monitor)
    out["calibrated"] = pre + [
        T_SHIFT + t for t in feed(cont, s[T_SHIFT:].tolist(), y[T_SHIFT:].tolist())
    ]
    for shift in SHIFTS:
        ys = (u[T_SHIFT:] < truth_after_shift(s[T_SHIFT:], shift)).astype(int)
        alarms = feed(
            copy.deepcopy(monitor),
            s[T_SHIFT:].tolist(),
            ys.tolist(),
            stop_at_first=True,
        )
        out[shift] = (
            alarms[0] + 1 if alarms else None
        )  # delay in events, alarm included
    return out


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
    return ci.low, ci.high


def run(n_seeds: int = 200, workers: int = 1, methods=tuple(METHODS)) -> dict:
    """Every job; returns ``{(method, dist): [result per seed]}``."""
    jobs = [
        (m, d, seed)
        for m in methods
        for d in (*DISTRIBUTIONS, "rain")
        for seed in range(n_seeds)
    ]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            results = list(pool.map(run_seed, jobs, chunksize=8))
    else:
        results = [run_seed(j) for j in jobs]
    out: dict = {}
    for (m, d, _), r in zip(jobs, results):
        out.setdefault((m, d), []).append(r)
    return out


def false_alarm_rows(results: dict) -> list:
    rows = []
    for (m, d), rs in results.items():
        k = sum(1 for r in rs if r["calibrated"])
        lo, hi = clopper_pearson(k, len(rs))
        mean_alarms = sum(len(r["calibrated"]) for r in rs) / len(rs)
        rows.append((m, d, k, len(rs), lo, hi, mean_alarms))
    return rows


def delay_rows(results: dict) -> list:
    rows = []
    horizon = N_EVENTS - T_SHIFT
    for (m, d), rs in results.items():
        if d == "rain":
            continue
        pre = sum(1 for r in rs if r["pre"]) / len(rs)
        for shift in SHIFTS:
            delays = np.array(
                [r[shift] if r[shift] is not None else np.inf for r in rs], dtype=float
            )
            q1, med, q3 = np.quantile(delays, [0.25, 0.5, 0.75], method="inverted_cdf")
            within = [float(np.mean(delays <= w)) for w in WITHIN]
            rows.append(
                (
                    m,
                    d,
                    shift,
                    pre,
                    float(np.mean(np.isfinite(delays))),
                    q1,
                    med,
                    q3,
                    within,
                    horizon,
                )
            )
    return rows


def _fmt_delay(x: float, horizon: int) -> str:
    return f"> {horizon:,}" if not math.isfinite(x) else f"{x:,.0f}"


def tables(results: dict, n_seeds: int) -> str:
    lines = [
        "# Calibration monitors: false alarms and detection delays",
        "",
        (
            f"Produced by `python simulations/monitor_alarms.py --seeds {n_seeds}` "
            "(see the script's docstring for the protocol). alpha = 0.05 for the e-process; "
            "river's default parameters for ADWIN and Page-Hinkley."
        ),
        "",
        f"## False alarms on calibrated streams ({N_EVENTS:,} events, {n_seeds} seeds)",
        "",
        "| method | scores | streams with an alarm | rate | 95% Clopper-Pearson | alarms per stream |",
        "| --- | --- | ---: | ---: | --- | ---: |",
    ]
    for m, d, k, n, lo, hi, mean_alarms in false_alarm_rows(results):
        lines.append(
            f"| {m} | {d} | {k} / {n} | {k / n:.3f} | [{lo:.3f}, {hi:.3f}] | {mean_alarms:.2f} |"
        )
    lines += [
        "",
        f"## Detection delay after a shift at t = {T_SHIFT:,} ({n_seeds} seeds)",
        "",
        (
            "Delay: events from the shift up to and including the first alarm at or after it, "
            f"censored at {N_EVENTS - T_SHIFT:,}. 'alarm before' is the share of streams with a "
            "false alarm before the shift (the monitor then reset and kept watching)."
        ),
        "",
        "| method | scores | shift | alarm before | detected | Q1 | median | Q3 | within 500 | within 1,000 |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for m, d, shift, pre, det, q1, med, q3, within, horizon in delay_rows(results):
        lines.append(
            f"| {m} | {d} | {shift_label(shift)} | {pre:.2f} | {det:.2f} | {_fmt_delay(q1, horizon)} | "
            f"{_fmt_delay(med, horizon)} | {_fmt_delay(q3, horizon)} | {within[0]:.2f} | {within[1]:.2f} |"
        )
    return "\n".join(lines) + "\n"


def e_process_paths(shift, seeds, dist: str = "Beta(2,5)"):
    """log10 e-value after every event of the e-process monitor, for each seed."""
    paths, alarms = [], []
    for seed in seeds:
        s, u = scores_and_uniforms(dist, seed)
        truth = s.copy()
        if shift is not None:
            truth[T_SHIFT:] = truth_after_shift(s[T_SHIFT:], shift)
        y = (u < truth).astype(int)
        m = make_monitor("eprocess")
        path, hits = [], []
        for t, (a, b) in enumerate(zip(s.tolist(), y.tolist())):
            m.update(a, b)
            path.append(m.log_e_value / math.log(10.0))
            if m.drift_detected:
                hits.append(t)
        paths.append(path)
        alarms.append(hits)
    return paths, alarms


def figure(path: str, seeds=range(8)) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [
        (None, "calibrated throughout"),
        (("bias", 0.1), "bias +0.1 from t = 2,000"),
        (("temperature", 0.67), "temperature T = 0.67 (over-confident) from t = 2,000"),
    ]
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 9), sharex=True, sharey=True)
    threshold = math.log10(1.0 / ALPHA)
    for ax, (shift, title) in zip(axes, panels):
        paths, alarms = e_process_paths(shift, seeds)
        for i, (p, hits) in enumerate(zip(paths, alarms)):
            color = plt.cm.tab10(i % 10)
            ax.plot(range(1, len(p) + 1), p, lw=0.8, color=color)
            ax.plot([t + 1 for t in hits], [p[t] for t in hits], "v", color=color, ms=6)
        ax.axhline(threshold, color="black", ls="--", lw=1)
        ax.text(30, threshold + 0.1, "alarm threshold 1/alpha = 20", fontsize=8)
        ax.axhline(0.0, color="grey", lw=0.5)
        if shift is not None:
            ax.axvline(T_SHIFT, color="red", lw=1)
            ax.text(T_SHIFT + 30, -2.7, "shift", color="red", fontsize=8)
        ax.set_title(f"Beta(2,5) scores, {title}", fontsize=10)
        ax.set_ylabel("log10 e-value")
        ax.set_ylim(-3.0, 2.0)
    axes[-1].set_xlabel(
        "event t (the e-value restarts at 1 after each alarm, marked by a triangle)"
    )
    fig.suptitle(
        f"CalibrationMonitor() e-process, {len(seeds)} seeds per panel", fontsize=11
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-figure", action="store_true")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    results = run(args.seeds, args.workers)
    text = tables(results, args.seeds)
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "monitor_alarms.md"), "w") as f:
        f.write(text)
    if not args.no_figure:
        figure(os.path.join(RESULTS, "monitor_alarms.png"))
    sys.stdout.write(text)
    sys.stdout.write(f"\n({time.perf_counter() - start:.0f} s)\n")


if __name__ == "__main__":
    main()
