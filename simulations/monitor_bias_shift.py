"""The calibration monitor's alarms after a rain forecaster's bias shifts, stream by stream.

Question: ``simulations/monitor_alarms.py`` measures false-alarm rates and detection
delays over hundreds of streams. What does it look like on one stream: when does each
monitor raise its alarm after a calibrated rain forecaster turns too dry, does it
raise false alarms before, and what does the alarm buy if it is used to restart the
recalibrator whose forecasts the monitor watches?

Protocol:

- weather: ``streamcal.datasets.rain_sequence(6000, seed=s)`` (base rate 0.3,
  persistence 0.35, seasonal amplitude 0.15), seeds 0-9, with its true probability of
  rain ``p``;
- forecaster: calibrated (``q = p``) for days 0-2,999; from day 3,000 on too dry by
  0.5 on the logit scale, ``q = expit(logit(p) - 0.5)`` (at ``p = 0.3``, 0.21);
- monitors, each fed ``(q, rain)`` day by day: ``CalibrationMonitor()`` (the
  e-process, ``alpha = 0.05``; its isotonic recalibrator forgets with a half-life of
  500 events), ``CalibrationMonitor(half_life=None)`` (the e-process without
  forgetting), ``CalibrationMonitor(method="adwin")`` and
  ``CalibrationMonitor(method="page-hinkley")`` (river's detectors on ``rain - q``,
  river's defaults); after an alarm a monitor resets itself and goes on watching;
- reported per stream: alarms before the shift (false alarms) and the delay, in days,
  from the shift to the first alarm at or after it (``-`` if none by day 5,999);
- acting on the alarm: an ``OnlineIsotonic()`` recalibrator serves ``f =
  clip(iso.predict_one(q), 0.01, 0.99)`` (an isotonic fit says 0 or 1 where it has
  seen only dry or only wet days; a monitor alarms at once on a rain forecast at 0);
  the default e-process monitor watches ``(f, rain)``; on each alarm the recalibrator
  is replaced by a fresh one fitted on the last 500 days. Compared, by the mean
  squared distance to the truth ``mean((f - p)**2)`` over the 3,000 days after the
  shift (units of 1e-3), with the same recalibrator never reset and with
  ``OnlineIsotonic(half_life=500)`` (forgetting without a monitor), both clipped
  alike. The alarms on the served forecasts are counted in the first year (when an
  isotonic fit on a few dozen days is itself miscalibrated, so they are not false),
  from then to the shift, and after it.

Run (needs the ``simulations`` extra: ``pip install -e ".[simulations]"``)::

    python simulations/monitor_bias_shift.py            # about 12 s
    python simulations/monitor_bias_shift.py --quick    # a smoke run, 2 s

It writes ``monitor_bias_shift.md`` (the tables, also printed) and
``monitor_bias_shift.png`` (seed 0: the stream, the e-values and alarms, the served
forecasts) into ``--out`` (default ``simulations/results``).
"""

from __future__ import annotations

import math
import os
import sys
import time

import numpy as np
from scipy.special import expit, logit

from streamcal import OnlineIsotonic
from streamcal.datasets import rain_sequence
from streamcal.monitor import CalibrationMonitor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # the shared helpers, also when this file is loaded by path
import _common  # noqa: E402

NAME = "monitor_bias_shift"

ALPHA = 0.05
LOGIT_SHIFT = -0.5
MONITORS = {
    "e-process": {},
    "e-process, no forgetting": {"half_life": None},
    "ADWIN": {"method": "adwin"},
    "Page-Hinkley": {"method": "page-hinkley"},
}
CLIP = 0.01  # served forecasts are kept in [CLIP, 1 - CLIP]
REFIT = 500  # on an alarm, the recalibrator is refitted on this many last days
YEAR = 365  # alarms in the first year: the recalibrator is still young


def stream(n_days: int, shift: int, seed: int):
    """(forecasts, true probabilities, rain) of one stream."""
    seq = rain_sequence(n_days, seed=seed)
    p = seq.p_true
    q = p.copy()
    q[shift:] = expit(logit(p[shift:]) + LOGIT_SHIFT)
    return q, p, seq.rain


def watch(params: dict, q: np.ndarray, rain: np.ndarray):
    """Alarm days and, for the e-process, the log e-value after each day."""
    monitor = CalibrationMonitor(alpha=ALPHA, **params)
    alarms, log_e = [], []
    for t, (s, y) in enumerate(zip(q.tolist(), rain.tolist())):
        monitor.update(s, y)
        if monitor.drift_detected:
            alarms.append(t)
        if monitor.log_e_value is not None:
            log_e.append(monitor.log_e_value)
    return alarms, np.array(log_e) if log_e else None


def serve(q: np.ndarray, rain: np.ndarray, policy: str):
    """Forecasts served by an isotonic recalibrator and the alarm days of the monitor
    that watches them. ``policy``: "kept" (all history), "forgetting" (half-life 500)
    or "refit" (refitted on the last REFIT days at each alarm)."""
    iso = OnlineIsotonic(half_life=500) if policy == "forgetting" else OnlineIsotonic()
    monitor = CalibrationMonitor(alpha=ALPHA)
    served, alarms = [], []
    qs, ys = q.tolist(), rain.tolist()
    for t, (s, y) in enumerate(zip(qs, ys)):
        f = min(1.0 - CLIP, max(CLIP, iso.predict_one(s)))
        served.append(f)
        monitor.update(f, y)
        iso.learn_one(s, y)
        if monitor.drift_detected:
            alarms.append(t)
            if policy == "refit":
                iso = OnlineIsotonic()
                lo = max(0, t + 1 - REFIT)
                iso.learn_many(qs[lo : t + 1], ys[lo : t + 1])
    return np.array(served), alarms


def main(argv=None) -> dict:
    args = _common.parse_args(
        argv, __doc__, "smoke run: 600 days, one seed", days=(6000, "days per stream", 600), seeds=10
    )
    shift = args.days // 2
    start = time.perf_counter()

    rows, serving, example = [], [], None
    for seed in range(args.seeds):
        q, p, rain = stream(args.days, shift, seed)
        row = {}
        for name, params in MONITORS.items():
            alarms, log_e = watch(params, q, rain)
            before = sum(1 for t in alarms if t < shift)
            after = [t for t in alarms if t >= shift]
            row[name] = (before, after[0] - shift + 1 if after else None, len(after))
            if seed == 0:
                example = example or {"q": q, "p": p, "rain": rain}
                example[name] = (alarms, log_e)
        rows.append(row)
        kept, _ = serve(q, rain, "kept")
        forgetting, _ = serve(q, rain, "forgetting")
        reset, reset_alarms = serve(q, rain, "refit")
        after = slice(shift, None)
        serving.append(
            (
                np.mean((q[after] - p[after]) ** 2),
                np.mean((kept[after] - p[after]) ** 2),
                np.mean((forgetting[after] - p[after]) ** 2),
                np.mean((reset[after] - p[after]) ** 2),
                sum(1 for t in reset_alarms if t < YEAR),
                sum(1 for t in reset_alarms if YEAR <= t < shift),
                sum(1 for t in reset_alarms if t >= shift),
            )
        )
        if seed == 0:
            example["kept"], example["forgetting"] = kept, forgetting
            example["reset"], example["reset_alarms"] = reset, reset_alarms

    def cell(before, delay, n_after):
        d = "-" if delay is None else f"{delay:,}"
        return f"{d} ({before})"

    lines = [
        f"# The monitor after a bias shift, stream by stream (`simulations/{NAME}.py`)",
        "",
        (
            f"{args.days:,} days per stream; the forecaster is calibrated until day "
            f"{shift:,}, then too dry by {-LOGIT_SHIFT} on the logit scale. Each cell: days "
            "from the shift to the first alarm (`-`: none by the end), and in parentheses "
            "the false alarms before the shift."
        ),
        "",
        "| seed | " + " | ".join(MONITORS) + " |",
        "| ---: | " + " | ".join(["---:"] * len(MONITORS)) + " |",
    ]
    for seed, row in enumerate(rows):
        lines.append(
            f"| {seed} | " + " | ".join(cell(*row[m]) for m in MONITORS) + " |"
        )
    medians = []
    for m in MONITORS:
        delays = [r[m][1] if r[m][1] is not None else math.inf for r in rows]
        med = float(np.median(delays))
        medians.append("-" if math.isinf(med) else f"{med:,.0f}")
    lines.append("| median | " + " | ".join(medians) + " |")
    lines += [
        "",
        (
            "Acting on the alarm: an `OnlineIsotonic` recalibrator serves the forecasts "
            f"(clipped to [{CLIP}, {1 - CLIP}]), the e-process watches what it serves and "
            f"each alarm refits it on the last {REFIT} days; distance to the truth mean "
            f"(f - p)^2 over the {args.days - shift:,} days after the shift, in units of "
            "1e-3:"
        ),
        "",
        (
            "| seed | raw forecasts | isotonic, never reset | isotonic, half-life 500 | "
            "isotonic, refitted on alarm | its alarms: first year | "
            f"then to day {shift - 1:,} | after the shift |"
        ),
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for seed, (raw, kept, forg, reset, *alarms) in enumerate(serving):
        lines.append(
            f"| {seed} | {1e3 * raw:.2f} | {1e3 * kept:.2f} | {1e3 * forg:.2f} | "
            f"{1e3 * reset:.2f} | " + " | ".join(map(str, alarms)) + " |"
        )
    m = np.mean(serving, axis=0)
    lines.append(
        f"| mean | {1e3 * m[0]:.2f} | {1e3 * m[1]:.2f} | {1e3 * m[2]:.2f} | "
        f"{1e3 * m[3]:.2f} | {m[4]:.1f} | {m[5]:.1f} | {m[6]:.1f} |"
    )
    _common.write_table("\n".join(lines) + "\n", args.out, NAME)

    plot(example, shift, args, os.path.join(args.out, f"{NAME}.png"))
    print(
        f"wrote {NAME}.md and {NAME}.png in {args.out} ({time.perf_counter() - start:.1f} s)"
    )
    return {"rows": rows, "serving": serving}


def plot(ex, shift, args, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    days = np.arange(args.days)
    window = 180
    fig, axes = plt.subplots(3, 1, figsize=(11, 10), sharex=True)

    ax = axes[0]
    ax.plot(days, _common.trailing_mean(ex["rain"].astype(float), window), color="C0", lw=1.0,
            label="rain frequency")  # fmt: skip
    ax.plot(days, _common.trailing_mean(ex["p"], window), color="k", lw=1.2,
            label="true probability")  # fmt: skip
    ax.plot(days, _common.trailing_mean(ex["q"], window), color="C3", lw=1.5,
            label="forecast")  # fmt: skip
    ax.set_ylabel(f"mean over the last {window} days")
    ax.set_title(
        f"Seed 0: a calibrated rain forecaster turns too dry on day {shift:,}",
        fontsize=10,
    )
    ax.legend(fontsize=8, loc="upper left")

    ax = axes[1]
    colours = {
        "e-process": "C0",
        "e-process, no forgetting": "C2",
        "ADWIN": "C1",
        "Page-Hinkley": "C4",
    }
    threshold = math.log10(1 / ALPHA)
    for name in ("e-process", "e-process, no forgetting"):
        alarms, log_e = ex[name]
        ax.plot(days, log_e / math.log(10), color=colours[name], lw=1.2, label=name)
        ax.plot(alarms, [threshold] * len(alarms), "v", color=colours[name], ms=9)
    ax.axhline(
        threshold, color="k", ls="--", lw=1, label=f"alarm: e-value {1 / ALPHA:g}"
    )
    low = ax.get_ylim()[0]
    for i, name in enumerate(("ADWIN", "Page-Hinkley")):
        alarms = ex[name][0]
        y = low - 0.35 * (i + 1)
        ax.plot(alarms, [y] * len(alarms), "|", color=colours[name], ms=14, mew=2,
                label=f"{name} alarms")  # fmt: skip
    ax.set_ylim(low - 1.0, threshold + 0.8)
    ax.set_ylabel("log10 e-value since the last reset")
    ax.set_title(
        "The monitors (each resets after an alarm; triangles and ticks mark alarms)",
        fontsize=10,
    )
    ax.legend(fontsize=8, loc="upper left", ncol=2)

    ax = axes[2]
    for key, colour, label in (
        ("kept", "C1", "isotonic, never reset"),
        ("forgetting", "C4", "isotonic, half-life 500"),
        ("reset", "C2", "isotonic, refitted on the last 500 days at each alarm"),
    ):
        ax.semilogy(
            days,
            _common.trailing_mean((ex[key] - ex["p"]) ** 2, window),
            color=colour,
            lw=1.4,
            label=label,
        )
    raw = _common.trailing_mean((ex["q"] - ex["p"]) ** 2, window)
    raw[:shift] = np.nan  # 0 before the shift: the raw forecast is the truth
    ax.semilogy(days, raw, color="C3", lw=1.0, ls=":", label="raw forecast")
    ax.set_ylim(2e-4, 0.05)
    for t in ex["reset_alarms"]:
        ax.axvline(t, color="C2", lw=0.8, ls="--")
    ax.set_ylabel(f"mean (f - p)^2, last {window} days")
    ax.set_xlabel("day")
    ax.set_title(
        "Acting on the alarm: the served (recalibrated) forecasts' distance to the "
        "truth; dashed: alarms that refit the recalibrator",
        fontsize=10,
    )
    ax.legend(fontsize=8, loc="upper left")
    for a in axes:
        a.axvline(shift, color="k", ls=":", lw=1)
        a.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    main()
