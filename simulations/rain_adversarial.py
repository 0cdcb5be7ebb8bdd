"""Rain that reacts to the forecast: who stays calibrated against an adversarial nature?

Question: a deterministic forecaster can be made miscalibrated by a nature that sees
its forecast before deciding (Dawid 1982, Oakes 1985: rain exactly when the forecast is
below 1/2). Foster's (1999) randomised forecaster, and hedging (Foster's game inside
each expert bin, Foster and Hart 2023), stay calibrated when nature sees only the mixed
strategy, not the draw. On the rain chain, with nature contrary on a share ``strength``
of the days, how miscalibrated do the expert, the deterministic recalibrators
(tracking, isotonic, Platt) and the randomised ones (hedging, Foster) end up, and what
does the randomisation cost in Brier score?

Protocol:

- nature: ``streamcal.datasets.AdversarialNature(strength, threshold=0.5, seed=s)``,
  the seasonal wet/dry chain of ``rain_sequence`` (base rate 0.3, persistence 0.35,
  amplitude 0.15) which, on each day with probability ``strength``, rains if the
  forecast is below 0.5 and stays dry otherwise; ``strength`` 0, 0.25, 0.5 and 1;
  10,000 days, seeds 0-4. Each forecaster plays its own nature (same seed: the same
  draws, but the weather diverges as the forecasts do);
- the expert's score is the chain's own probability of rain (``nature.p_rain``): it
  knows the weather, not the adversary;
- forecasters, prequential (forecast, nature responds, learn): the expert itself;
  ``TrackingCalibeater(n_bins=10)``, ``OnlineIsotonic()`` and ``OnlinePlatt()`` on the
  expert's score (deterministic); ``HedgingCalibeater(n_bins=10, seed=s)`` on it and
  ``EpsilonCalibratedForecaster(n_bins=10, seed=s)`` (ignores it), randomised: nature
  reacts to the mean of their mixed strategy, and the forecast scored is their draw;
- reported, mean over the seeds: ECE (10 equal-width bins; nature's threshold 0.5 is a
  bin edge), the Brier score, and the rate of rain nature produced. Figures: ECE and
  Brier against ``strength``; reliability diagrams at ``strength = 0.5`` (seed 0).

Run (needs the ``simulations`` extra: ``pip install -e ".[simulations]"``)::

    python simulations/rain_adversarial.py            # about 11 s
    python simulations/rain_adversarial.py --quick    # a smoke run, 2 s

It writes ``rain_adversarial.md`` (the table, also printed), ``rain_adversarial.png``
and ``rain_adversarial_reliability.png`` into ``--out`` (default ``simulations/results``).
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from streamcal import (
    EpsilonCalibratedForecaster,
    HedgingCalibeater,
    OnlineIsotonic,
    OnlinePlatt,
    TrackingCalibeater,
)
from streamcal.datasets import AdversarialNature
from streamcal.metrics import brier_score, expected_calibration_error

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # the shared helpers, also when this file is loaded by path
import _common  # noqa: E402

NAME = "rain_adversarial"

STRENGTHS = (0.0, 0.25, 0.5, 1.0)
FORECASTERS = ("expert", "tracking", "isotonic", "platt", "hedging", "foster")
RANDOMISED = ("hedging", "foster")


def make(name: str, seed: int):
    return {
        "expert": lambda: None,
        "tracking": lambda: TrackingCalibeater(n_bins=10),
        "isotonic": lambda: OnlineIsotonic(),
        "platt": lambda: OnlinePlatt(),
        "hedging": lambda: HedgingCalibeater(n_bins=10, seed=seed),
        "foster": lambda: EpsilonCalibratedForecaster(n_bins=10, seed=seed),
    }[name]()


def play(name: str, strength: float, n_days: int, seed: int):
    """Forecasts issued and rain received by forecaster ``name`` against its nature."""
    nature = AdversarialNature(strength=strength, seed=seed)
    model = make(name, seed)
    forecasts, rain = [], []
    randomised = name in RANDOMISED
    for _ in range(n_days):
        s = nature.p_rain
        if model is None:
            f = shown = s
        elif randomised:
            shown = model.predict_distribution_one(s).mean
            f = model.predict_one(s)
        else:
            f = shown = model.predict_one(s)
        y = nature.respond(shown)
        if model is not None:
            model.learn_one(s, y)
        forecasts.append(f)
        rain.append(y)
    return np.array(forecasts), np.array(rain)


def main(argv=None) -> dict:
    args = _common.parse_args(
        argv, __doc__, "smoke run: 500 days, one seed", days=(10_000, "days per game", 500), seeds=5
    )
    start = time.perf_counter()

    summary = {}
    shown_runs = {}
    for strength in STRENGTHS:
        for name in FORECASTERS:
            rows = []
            for seed in range(args.seeds):
                f, y = play(name, strength, args.days, seed)
                rows.append(
                    (expected_calibration_error(y, f), brier_score(y, f), y.mean())
                )
                if strength == 0.5 and seed == 0:
                    shown_runs[name] = (y, f)
            summary[strength, name] = tuple(np.mean(rows, axis=0))

    lines = [
        f"# Forecasters against a nature that reacts to the forecast (`simulations/{NAME}.py`)",
        "",
        (
            f"{args.days:,} days per game, seeds 0-{args.seeds - 1} (means over the seeds). "
            "ECE: 10 equal-width bins. Nature is contrary (rain iff forecast < 0.5) on a "
            "share `strength` of the days; randomised forecasters are seen by nature "
            "through the mean of their mixed strategy."
        ),
        "",
        "| forecaster | "
        + " | ".join(f"ECE, strength {s:g}" for s in STRENGTHS)
        + " | "
        + " | ".join(f"Brier, strength {s:g}" for s in STRENGTHS)
        + " |",
        "| --- | " + " | ".join(["---:"] * (2 * len(STRENGTHS))) + " |",
    ]
    for name in FORECASTERS:
        eces = [f"{summary[s, name][0]:.4f}" for s in STRENGTHS]
        briers = [f"{summary[s, name][1]:.4f}" for s in STRENGTHS]
        lines.append(f"| {name} | " + " | ".join(eces + briers) + " |")
    lines += [
        "",
        "Rate of rain nature produced against each forecaster:",
        "",
        "| forecaster | " + " | ".join(f"strength {s:g}" for s in STRENGTHS) + " |",
        "| --- | " + " | ".join(["---:"] * len(STRENGTHS)) + " |",
    ]
    for name in FORECASTERS:
        lines.append(
            f"| {name} | "
            + " | ".join(f"{summary[s, name][2]:.3f}" for s in STRENGTHS)
            + " |"
        )
    _common.write_table("\n".join(lines) + "\n", args.out, NAME)

    plot(summary, shown_runs, args)
    print(
        f"wrote {NAME}.md, {NAME}.png and {NAME}_reliability.png in {args.out} "
        f"({time.perf_counter() - start:.1f} s)"
    )
    return summary


def plot(summary, shown_runs, args):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from streamcal.plot import reliability_diagrams

    styles = {
        "expert": ("0.4", "o", "-"),
        "tracking": ("C0", "s", "-"),
        "isotonic": ("C1", "^", "-"),
        "platt": ("C4", "v", "-"),
        "hedging": ("C2", "D", "--"),
        "foster": ("C3", "P", "--"),
    }
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
    for j, (ax, what) in enumerate(zip(axes, ("ECE (10 bins)", "Brier score"))):
        for name in FORECASTERS:
            colour, marker, ls = styles[name]
            ax.plot(
                STRENGTHS,
                [summary[s, name][j] for s in STRENGTHS],
                color=colour,
                marker=marker,
                ls=ls,
                label=name + (" (randomised)" if name in RANDOMISED else ""),
            )
        ax.set_xlabel("strength: share of days nature is contrary")
        ax.set_ylabel(what)
        ax.set_xticks(STRENGTHS)
        ax.grid(alpha=0.3)
    axes[0].set_title(
        "Deterministic forecasters are driven out of calibration;\n"
        "the randomised ones (dashed) stay calibrated",
        fontsize=10,
    )
    axes[1].set_title(
        "What it costs in Brier score (without an adversary,\n"
        "Foster ignores the expert and pays for it)",
        fontsize=10,
    )
    axes[0].legend(fontsize=8)
    fig.suptitle(
        f"Rain chain against a contrary nature, {args.days:,} days, mean of "
        f"{args.seeds} seeds",
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, f"{NAME}.png"), dpi=110)
    plt.close(fig)

    chosen = ("expert", "tracking", "isotonic", "hedging")
    reliability_diagrams(
        {name: shown_runs[name] for name in chosen},
        n_resamples=200,
        suptitle="Strength 0.5, seed 0: nature rains iff the forecast is below 0.5 "
        "on half the days (binned, 90% consistency bands)",
        path=os.path.join(args.out, f"{NAME}_reliability.png"),
        dpi=100,
    )


if __name__ == "__main__":
    main()
