"""All history vs a sliding window vs exponential forgetting, on drifting rain forecasts.

Question: learning from all the history makes a recalibrator precise on a stationary
stream and slow after a change; a window (``window_size``) or exponential forgetting
(``half_life``) follows a change at the price of noise. On the streams of
``simulations/rain_drift.py``, how much does each variant gain under drift, how much
does it lose when nothing changes, and how fast does it recover after a regime shift?

Protocol:

- streams: exactly those of ``simulations/rain_drift.py`` (12,000 days, seeds 0-4;
  stationary, drifting bias, seasonal bias, regime shift on day 6,000; the true
  probability of rain ``p`` is known);
- calibrators, prequential, each in its all-history form and in windowed or forgetting
  forms: ``OnlineIsotonic`` (``window_size`` 1,000 or 3,000; ``half_life`` 500 or
  2,000), ``HistogramBinning`` (``window_size`` 1,000 or 3,000; it has no
  ``half_life``), ``OnlinePlatt`` and ``OnlineBeta`` (``half_life`` 500 or 2,000;
  they have no window);
- reported, mean over the seeds: the mean squared distance to the truth ``mean((f -
  p)**2)`` over each whole stream, and over the 1,000 days after the regime shift
  (recovery). The all-history rows repeat ``rain_drift.py``'s numbers. The figure
  shows the distance over a trailing window of 365 days (seed 0) on the drifting-bias
  and regime-shift streams.

Run (needs the ``simulations`` extra: ``pip install -e ".[simulations]"``)::

    python simulations/rain_forgetting.py            # about 35 s
    python simulations/rain_forgetting.py --quick    # a smoke run, 2 s

It writes ``rain_forgetting.md`` (the table, also printed) and ``rain_forgetting.png``
into ``--out`` (default ``simulations/results``).
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from streamcal import HistogramBinning, OnlineBeta, OnlineIsotonic, OnlinePlatt

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # the shared helpers, also when this file is loaded by path
import _common  # noqa: E402

NAME = "rain_forgetting"
RECOVERY = 1000  # days after the regime shift

VARIANTS = {
    "isotonic, all history": (OnlineIsotonic, {}),
    "isotonic, window 1,000": (OnlineIsotonic, {"window_size": 1000}),
    "isotonic, window 3,000": (OnlineIsotonic, {"window_size": 3000}),
    "isotonic, half-life 500": (OnlineIsotonic, {"half_life": 500}),
    "isotonic, half-life 2,000": (OnlineIsotonic, {"half_life": 2000}),
    "histogram, all history": (HistogramBinning, {}),
    "histogram, window 1,000": (HistogramBinning, {"window_size": 1000}),
    "histogram, window 3,000": (HistogramBinning, {"window_size": 3000}),
    "platt, all history": (OnlinePlatt, {}),
    "platt, half-life 500": (OnlinePlatt, {"half_life": 500}),
    "platt, half-life 2,000": (OnlinePlatt, {"half_life": 2000}),
    "beta, all history": (OnlineBeta, {}),
    "beta, half-life 500": (OnlineBeta, {"half_life": 500}),
    "beta, half-life 2,000": (OnlineBeta, {"half_life": 2000}),
}


def main(argv=None) -> dict:
    args = _common.parse_args(
        argv, __doc__, "smoke run: 800 days, one seed", days=(12_000, "days per stream", 800), seeds=5
    )
    start = time.perf_counter()
    drift = _common.sibling("rain_drift")  # its streams and its run
    streams = drift.STREAMS
    columns = (*streams, "regime shift: recovery")

    summary = {}  # (column, variant) -> list over seeds
    curves = {}
    for seed in range(args.seeds):
        for stream, (q, p, rain, shift) in drift.streams(args.days, seed).items():
            cals = {name: cls(**params) for name, (cls, params) in VARIANTS.items()}
            for name, f in drift.run(cals, q, rain).items():
                sq = (f - p) ** 2
                summary.setdefault((stream, name), []).append(sq.mean())
                if shift is not None:
                    summary.setdefault((columns[-1], name), []).append(
                        sq[shift : shift + RECOVERY].mean()
                    )
                if seed == 0 and stream in ("drifting bias", "regime shift"):
                    curves[stream, name] = _common.trailing_mean(sq, 365)
    summary = {k: float(np.mean(v)) for k, v in summary.items()}

    lines = [
        f"# All history vs window vs forgetting (`simulations/{NAME}.py`)",
        "",
        (
            f"{args.days:,} days per stream, seeds 0-{args.seeds - 1} (means over the "
            "seeds), the streams of `rain_drift.py`. Distance to the truth: mean (f - p)^2 "
            f"in units of 1e-3, over the whole stream; recovery: over the {RECOVERY:,} "
            "days after the regime shift. Best of each column in bold."
        ),
        "",
        "| calibrator | " + " | ".join(columns) + " |",
        "| --- | " + " | ".join(["---:"] * len(columns)) + " |",
    ]
    best = {c: min(summary[c, n] for n in VARIANTS) for c in columns}
    for name in VARIANTS:
        cells = []
        for c in columns:
            v = f"{1e3 * summary[c, name]:.2f}"
            cells.append(f"**{v}**" if summary[c, name] == best[c] else v)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    _common.write_table("\n".join(lines) + "\n", args.out, NAME)

    plot(curves, args, drift.PERIOD, os.path.join(args.out, f"{NAME}.png"))
    print(
        f"wrote {NAME}.md and {NAME}.png in {args.out} ({time.perf_counter() - start:.1f} s)"
    )
    return summary


def plot(curves, args, period, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    families = (
        (
            "isotonic and histogram",
            {
                "isotonic, all history": ("C1", "-"),
                "isotonic, window 1,000": ("C1", ":"),
                "isotonic, half-life 500": ("C1", "--"),
                "histogram, all history": ("C2", "-"),
                "histogram, window 1,000": ("C2", ":"),
            },
        ),
        (
            "Platt and beta",
            {
                "platt, all history": ("C4", "-"),
                "platt, half-life 500": ("C4", "--"),
                "beta, all history": ("C0", "-"),
                "beta, half-life 500": ("C0", "--"),
            },
        ),
    )
    fig, axes = plt.subplots(2, 2, figsize=(12, 8), sharey=True)
    years = np.arange(args.days) / period
    for i, stream in enumerate(("drifting bias", "regime shift")):
        for j, (family, styles) in enumerate(families):
            ax = axes[i, j]
            for name, (colour, ls) in styles.items():
                ax.semilogy(
                    years, curves[stream, name], color=colour, ls=ls, lw=1.4, label=name
                )
            if stream == "regime shift":
                ax.axvline(args.days // 2 / period, color="k", ls=":", lw=1)
            ax.set_title(f"{stream}: {family}", fontsize=10)
            ax.grid(alpha=0.3, which="both")
            ax.set_ylim(5e-6, 0.15)
            ax.legend(fontsize=8, loc="lower right" if i == 0 else "lower left", ncol=2)
            if j == 0:
                ax.set_ylabel("mean (f - p)^2, last 365 days")
            if i == 1:
                ax.set_xlabel("year")
    fig.suptitle(
        "All history (solid) vs window (dotted) vs forgetting (dashed): distance to "
        "the true probability (seed 0)",
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
