"""Calibeating a rain forecaster: Brier = calibration + refinement, before and after.

Question: Foster and Hart ("Calibeating: beating forecasters at their own game",
Theoretical Economics 2023) show that tracking (the running frequency of rain among the
past days on which the expert's forecast fell in the same bin) removes the expert's
calibration score and keeps its refinement: for any outcome sequence, its Brier score
is at most the refinement of the expert's binned forecasts plus O(log T / T); hedging
(Foster's randomised forecaster in each bin) does the same with a guarantee that
survives an adversary, at some cost. On rain-like sequences, how much of each
forecaster's Brier score is calibration, how much of it do the calibeaters remove, and
when do they lose?

Protocol:

- weather: ``streamcal.datasets.rain_sequence(20_000, seed=s)`` (a wet/dry Markov
  chain, base rate 0.3, persistence 0.35, seasonal amplitude 0.15, one-year period),
  seeds 0-4;
- experts (``streamcal.datasets.forecast``): the true probability ("calibrated"),
  climatology (0.3), persistence (``0.5 * 0.3 + 0.5 * rain yesterday``),
  over-confident (logit doubled), under-confident (logit halved), biased (+0.75 on the
  logit scale: too wet) and drifting bias (-1 to +1 on the logit scale over the
  stream);
- calibeaters, learning prequentially from the expert's forecast (predict, then learn
  the day's rain): ``TrackingCalibeater(n_bins=10)`` (the running mean of the bin,
  with one pseudo-event at the expert's forecast) and ``HedgingCalibeater(n_bins=10,
  seed=s)`` (the forecast actually issued, a draw from its mixed strategy);
- reported, mean over the seeds: the Brier score and its Foster-Hart decomposition
  ``brier = calibration + refinement`` (``streamcal.metrics.calibration_refinement`` on
  the forecasts rounded to the nearest 0.01, so that nearby values form one group), and
  ``Brier - R10``, where ``R10`` is the refinement of the expert's 10-bin partition
  (the target of tracking; its guarantee bounds ``Brier - R10`` for tracking by
  ``sum_b [1 + ln n_b + 2 ln(1 + n_b)] / T``, about 0.012 here).

Run (needs the ``simulations`` extra: ``pip install -e ".[simulations]"``)::

    python simulations/rain_calibeating.py            # about 6 s
    python simulations/rain_calibeating.py --quick    # a smoke run, 2 s

It writes ``rain_calibeating.md`` (the table, also printed) and ``rain_calibeating.png``
(calibration and refinement of every forecaster; the running calibration score of the
over-confident expert and of its calibeaters) into ``--out`` (default
``simulations/results``).
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from streamcal import HedgingCalibeater, TrackingCalibeater
from streamcal.datasets import forecast, rain_sequence
from streamcal.metrics import CalibrationRefinement, calibration_refinement

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # the shared helpers, also when this file is loaded by path
import _common  # noqa: E402

NAME = "rain_calibeating"

N_BINS = 10
GRID = 0.01  # forecasts are grouped on this grid for the decomposition
EXPERTS = (
    ("calibrated", "calibrated (true probability)", {}),
    ("climatology", "climatology", {}),
    ("persistence", "persistence", {}),
    ("overconfident", "over-confident", {}),
    ("underconfident", "under-confident", {}),
    ("biased", "biased (too wet)", {}),
    ("drifting_bias", "drifting bias", {}),
)
FORECASTERS = ("expert", "tracking", "hedging")


def pooled(p: np.ndarray) -> np.ndarray:
    """Forecasts rounded to the nearest multiple of GRID."""
    return np.minimum(1.0, np.floor(p / GRID + 0.5) * GRID)


def expert_bins(q: np.ndarray) -> np.ndarray:
    """The calibeaters' bin of each expert forecast."""
    return np.minimum(np.floor(q * N_BINS), N_BINS - 1).astype(np.int64)


def calibeat(q: np.ndarray, rain: np.ndarray, seed: int) -> dict[str, np.ndarray]:
    """Prequential forecasts of the calibeaters of the expert forecasts ``q``, through
    ``streamcal.replay``."""
    calibrators = {
        "expert": None,
        "tracking": TrackingCalibeater(n_bins=N_BINS),
        "hedging": HedgingCalibeater(n_bins=N_BINS, seed=seed),
    }
    return _common.prequential(calibrators, q, rain)


def tracking_bound(q: np.ndarray) -> float:
    """Foster-Hart bound on Brier - R10 for tracking with one pseudo-event per bin."""
    n_b = np.bincount(expert_bins(q), minlength=N_BINS)
    n_b = n_b[n_b > 0]
    return float(np.sum(1 + np.log(n_b) + 2 * np.log1p(n_b)) / len(q))


def running_calibration(rain, p, every):
    """(t, calibration score of the first t forecasts), every ``every`` events."""
    metric = CalibrationRefinement(resolution=GRID)
    ts, ks = [], []
    for t, (y, x) in enumerate(zip(rain.tolist(), p.tolist()), start=1):
        metric.update(y, x)
        if t % every == 0:
            ts.append(t)
            ks.append(metric.calibration)
    return np.array(ts), np.array(ks)


def fmt(x: float, digits: int = 4) -> str:
    return f"{x:.{digits}f}"


def main(argv=None) -> dict:
    args = _common.parse_args(
        argv, __doc__, "smoke run: 600 days, one seed", days=(20_000, "days per sequence", 600), seeds=5
    )
    start = time.perf_counter()

    # results[kind][forecaster] -> list over seeds of (brier, K, R, brier - R10)
    results = {kind: {f: [] for f in FORECASTERS} for kind, _, _ in EXPERTS}
    bounds = []
    curves = None
    for seed in range(args.seeds):
        seq = rain_sequence(args.days, seed=seed)
        rain = seq.rain
        for kind, _, params in EXPERTS:
            q = forecast(seq, kind, **params)
            r10 = calibration_refinement(rain, expert_bins(q) / N_BINS).refinement
            bounds.append(tracking_bound(q))
            runs = calibeat(q, rain, seed)
            for name, p in runs.items():
                d = calibration_refinement(rain, pooled(p))
                results[kind][name].append(
                    (d.brier, d.calibration, d.refinement, d.brier - r10)
                )
            if seed == 0 and kind == "overconfident":
                every = max(1, args.days // 400)
                curves = {
                    name: running_calibration(rain, p, every)
                    for name, p in runs.items()
                }

    header = (
        f"{args.days:,} days per sequence, seeds 0-{args.seeds - 1} (means over the "
        f"seeds); calibration and refinement of the forecasts rounded to {GRID}; R10 = "
        "refinement of the expert's 10-bin partition. Tracking's guarantee: Brier - R10 "
        f"<= {max(bounds):.4f} for every expert and seed (its largest value)."
    )
    lines = [
        f"# Calibeating rain forecasters (`simulations/{NAME}.py`)",
        "",
        header,
        "",
        "| expert | forecaster | Brier | calibration | refinement | Brier - R10 |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    summary = {}
    for kind, label, _ in EXPERTS:
        for name in FORECASTERS:
            b, k, r, excess = np.mean(results[kind][name], axis=0)
            summary[kind, name] = (b, k, r, excess)
            lines.append(
                f"| {label} | {name} | {fmt(b)} | {fmt(k, 5)} | {fmt(r)} | "
                f"{excess:+.4f} |"
            )
    _common.write_table("\n".join(lines) + "\n", args.out, NAME)

    plot(summary, curves, args, os.path.join(args.out, f"{NAME}.png"))
    print(
        f"wrote {NAME}.md and {NAME}.png in {args.out} ({time.perf_counter() - start:.1f} s)"
    )
    return summary


def plot(summary, curves, args, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, bx) = plt.subplots(
        1, 2, figsize=(13, 6.2), gridspec_kw={"width_ratios": [1.25, 1]}
    )
    colours = {"expert": "0.45", "tracking": "C0", "hedging": "C2"}
    y, ticks, labels = 0.0, [], []
    for kind, label, _ in EXPERTS:
        for name in FORECASTERS:
            b, k, r, _ = summary[kind, name]
            ax.barh(y, r, color=colours[name], alpha=0.55, height=0.8)
            ax.barh(y, k, left=r, color="C3", height=0.8)
            ax.text(b + 0.002, y, f"{b:.3f}", va="center", fontsize=7)
            ticks.append(y)
            labels.append(f"{label}: {name}" if name == "expert" else name)
            y -= 1
        y -= 0.6
    ax.set_yticks(ticks)
    ax.set_yticklabels(labels, fontsize=7.5)
    ax.set_xlim(0.12, 0.225)
    ax.set_xlabel("Brier score = refinement (pale) + calibration (red)")
    handles = [
        plt.Rectangle((0, 0), 1, 1, color=colours[n], alpha=0.55) for n in FORECASTERS
    ] + [plt.Rectangle((0, 0), 1, 1, color="C3")]
    ax.legend(
        handles,
        [
            "refinement: expert",
            "refinement: tracking",
            "refinement: hedging",
            "calibration",
        ],
        fontsize=7.5,
        loc="lower right",
    )
    ax.set_title(
        f"Mean over {args.seeds} sequences of {args.days:,} days\n"
        "(x axis starts at 0.12)",
        fontsize=10,
    )

    for name in FORECASTERS:
        t, k = curves[name]
        keep = k > 0
        bx.loglog(t[keep], k[keep], color=colours[name], lw=1.5, label=name)
    t = curves["expert"][0]
    bx.loglog(
        t,
        N_BINS * (1 + np.log(np.maximum(t / N_BINS, 1))) / t,
        color="k",
        ls=":",
        lw=1,
        label="n_bins (1 + ln(T / n_bins)) / T\n(tracking's bound on Brier - R10, no prior)",
    )
    bx.set_xlabel("day T")
    bx.set_ylabel("calibration score of the first T forecasts")
    bx.set_title(
        "Over-confident expert (seed 0): tracking's calibration\n"
        "score falls like log(T) / T, the expert's stays",
        fontsize=10,
    )
    bx.legend(fontsize=8)
    bx.grid(True, which="major", alpha=0.3)
    fig.suptitle(
        "Calibeating rain forecasters: Brier = refinement + calibration of each expert "
        "(grey) and of its calibeaters, tracking (blue) and hedging (green)",
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
