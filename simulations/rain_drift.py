"""Online isotonic vs histogram binning vs Platt vs beta calibration under drift.

Question: a rain forecaster's miscalibration rarely stays put: its bias drifts, swings
with the seasons, or the climate changes under it. Learning from all the history,
how close to the true probability of rain does each online recalibrator get, on a
stationary stream and under three kinds of drift, and which loses where?

Protocol:

- weather: ``streamcal.datasets.rain_sequence(12_000, seed=s)`` (about 33 years; base
  rate 0.3, persistence 0.35, seasonal amplitude 0.15), seeds 0-4; the true
  probability of rain given the past, ``p``, is known;
- four streams of forecasts ``q`` (``L = logit``, ``S = expit``):

  - *stationary*: over-confident and too wet, ``q = S(2 L(p) + 0.5)``;
  - *drifting bias*: ``q = S(1.5 L(p) + b_t)``, ``b_t`` going linearly from -1 (too
    dry) to +1 (too wet) over the stream (``forecast(seq, "drifting_bias",
    scale=1.5)``);
  - *seasonal bias*: ``q = S(1.5 L(p) + 0.8 sin(2 pi t / 365.25))``, too wet in one
    half of the year and too dry in the other;
  - *regime shift*: the weather switches on day 6,000 to a wetter, more persistent
    regime (``regimes=[(6000, 0.45, 0.6)]``: base rate 0.45, persistence 0.6), and the
    forecaster does not notice: ``q = S(1.5 L(p_old))``, ``p_old`` the chance of rain
    the old regime's chain would give after the same weather;

- calibrators, each learning prequentially from ``(q, rain)`` with its default
  parameters (all history): ``OnlineIsotonic()``, ``HistogramBinning()`` (10
  equal-width bins), ``OnlinePlatt()``, ``OnlineBeta()``; and the raw forecasts;
- reported, mean over the seeds: the mean squared distance to the truth, ``mean((f -
  p)**2)`` (the expected excess Brier score over the true probability), over the whole
  stream, and the ECE (10 equal-width bins) over the whole stream. The figure shows
  the distance to the truth over a trailing window of 1,000 days (seed 0).
  ``simulations/rain_forgetting.py`` runs the windowed and forgetting variants on the
  same streams.

Run (needs the ``simulations`` extra: ``pip install -e ".[simulations]"``)::

    python simulations/rain_drift.py            # about 8 s
    python simulations/rain_drift.py --quick    # a smoke run, 2 s

It writes ``rain_drift.md`` (the table, also printed) and ``rain_drift.png`` into
``--out`` (default ``simulations/results``).
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np
from scipy.special import expit, logit

from streamcal import HistogramBinning, OnlineBeta, OnlineIsotonic, OnlinePlatt
from streamcal.datasets import forecast, rain_sequence
from streamcal.metrics import expected_calibration_error

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # the shared helpers, also when this file is loaded by path
import _common  # noqa: E402

NAME = "rain_drift"

STREAMS = ("stationary", "drifting bias", "seasonal bias", "regime shift")
CALIBRATORS = {
    "raw": None,
    "isotonic": OnlineIsotonic,
    "histogram": HistogramBinning,
    "platt": OnlinePlatt,
    "beta": OnlineBeta,
}
PERIOD = 365.25


def streams(n_days: int, seed: int) -> dict[str, tuple]:
    """Stream name -> (forecasts, true probabilities, rain, shift day or None)."""
    seq = rain_sequence(n_days, seed=seed)
    p, rain = seq.p_true, seq.rain
    t = np.arange(n_days)
    out = {
        "stationary": (
            forecast(seq, "overconfident", scale=2.0, shift=0.5),
            p,
            rain,
            None,
        ),
        "drifting bias": (
            forecast(seq, "drifting_bias", scale=1.5, shift=-1.0, shift_end=1.0),
            p,
            rain,
            None,
        ),
        "seasonal bias": (
            expit(1.5 * logit(p) + 0.8 * np.sin(2 * np.pi * t / PERIOD)),
            p,
            rain,
            None,
        ),
    }
    shift = n_days // 2
    new = rain_sequence(n_days, seed=seed, regimes=[(shift, 0.45, 0.6)])
    c_old = 0.3 + 0.15 * np.sin(2 * np.pi * t / PERIOD)
    p_old = c_old.copy()
    p_old[1:] += 0.35 * (new.rain[:-1] - c_old[1:])
    out["regime shift"] = (expit(1.5 * logit(p_old)), new.p_true, new.rain, shift)
    return out


def run(calibrators: dict, q: np.ndarray, rain: np.ndarray) -> dict:
    """Prequential forecasts (predict, then learn) of each calibrator on ``(q, rain)``,
    through ``streamcal.replay``; a calibrator None gives the raw forecasts ``q``."""
    return _common.prequential(calibrators, q, rain)


def main(argv=None) -> dict:
    args = _common.parse_args(
        argv, __doc__, "smoke run: 800 days, one seed", days=(12_000, "days per stream", 800), seeds=5
    )
    start = time.perf_counter()

    summary = {}  # (stream, calibrator) -> [(mse, ece), ...] over seeds
    curves = {}
    for seed in range(args.seeds):
        for stream, (q, p, rain, _) in streams(args.days, seed).items():
            cals = {n: None if c is None else c() for n, c in CALIBRATORS.items()}
            for name, f in run(cals, q, rain).items():
                sq = (f - p) ** 2
                summary.setdefault((stream, name), []).append(
                    (sq.mean(), expected_calibration_error(rain, f))
                )
                if seed == 0:
                    curves[stream, name] = _common.trailing_mean(sq, 1000)
    summary = {k: tuple(np.mean(v, axis=0)) for k, v in summary.items()}

    lines = [
        f"# Online recalibrators under drift (`simulations/{NAME}.py`)",
        "",
        (
            f"{args.days:,} days per stream, seeds 0-{args.seeds - 1} (means over the "
            "seeds); every calibrator with its defaults (all history). Distance to the "
            "truth: mean (f - p)^2 in units of 1e-3; ECE: 10 equal-width bins."
        ),
        "",
        "| calibrator | "
        + " | ".join(f"{s}: distance" for s in STREAMS)
        + " | "
        + " | ".join(f"{s}: ECE" for s in STREAMS)
        + " |",
        "| --- | " + " | ".join(["---:"] * (2 * len(STREAMS))) + " |",
    ]
    for name in CALIBRATORS:
        dist = [f"{1e3 * summary[s, name][0]:.2f}" for s in STREAMS]
        ece = [f"{summary[s, name][1]:.4f}" for s in STREAMS]
        lines.append(f"| {name} | " + " | ".join(dist + ece) + " |")
    _common.write_table("\n".join(lines) + "\n", args.out, NAME)

    plot(curves, args, os.path.join(args.out, f"{NAME}.png"))
    print(
        f"wrote {NAME}.md and {NAME}.png in {args.out} ({time.perf_counter() - start:.1f} s)"
    )
    return summary


def plot(curves, args, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = {
        "raw": "0.5",
        "isotonic": "C1",
        "histogram": "C2",
        "platt": "C4",
        "beta": "C0",
    }
    fig, axes = plt.subplots(2, 2, figsize=(12, 8), sharex=True, sharey=True)
    years = np.arange(args.days) / PERIOD
    for ax, stream in zip(axes.flat, STREAMS):
        for name in CALIBRATORS:
            ax.semilogy(
                years,
                curves[stream, name],
                color=colours[name],
                lw=1.6 if name != "raw" else 1.0,
                label=name,
            )
        if stream == "regime shift":
            ax.axvline(args.days // 2 / PERIOD, color="k", ls=":", lw=1)
            ax.text(
                args.days // 2 / PERIOD,
                0.95,
                " regime shift",
                fontsize=8,
                va="top",
                transform=ax.get_xaxis_transform(),
            )
        ax.set_title(stream, fontsize=10)
        ax.grid(alpha=0.3, which="both")
    for ax in axes[1]:
        ax.set_xlabel("year")
    for ax in axes[:, 0]:
        ax.set_ylabel("mean (f - p)^2, last 1,000 days")
    axes[0, 0].legend(fontsize=8, ncol=2)
    fig.suptitle(
        "Distance to the true probability of rain, all-history recalibrators (seed 0)",
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
