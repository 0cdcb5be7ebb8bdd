"""The ``streamcal`` command.

Subcommands:

- ``streamcal demo [--n N] [--seed S] [--window W]``: recalibrate a stream of
  miscalibrated rain forecasts with :class:`streamcal.OnlineIsotonic`, prequentially
  (each event is predicted with the current state, then learnt), and print the Brier
  score and ECE before and after, the final number of PAV blocks and the throughput.

``python -m streamcal ...`` runs the same command.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

__all__ = ["build_parser", "main"]


def _int_at_least(minimum: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an int >= {minimum}. Got {text!r} instead.") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an int >= {minimum}. Got {value} instead.")
        return value

    parse.__name__ = f"int >= {minimum}"
    return parse


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the ``streamcal`` command (one subparser per
    subcommand, each with its handler as the ``handler`` default).

    Examples
    --------
    >>> args = build_parser().parse_args(["demo", "--n", "500"])
    >>> args.command, args.n, args.seed, args.window
    ('demo', 500, 0, None)

    """
    parser = argparse.ArgumentParser(
        prog="streamcal",
        description="Streaming calibration of classifier and forecaster scores.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = sub.add_parser(
        "demo",
        help="recalibrate miscalibrated rain forecasts online and report the gain",
        description=(
            "Stream generated, miscalibrated rain forecasts through OnlineIsotonic "
            "prequentially (predict each event with the current state, then learn it) "
            "and print Brier score and ECE of the raw and calibrated forecasts."
        ),
    )
    demo.add_argument("--n", type=_int_at_least(2), default=20_000,
                      help="number of days (events) to stream (default: 20000)")
    demo.add_argument("--seed", type=_int_at_least(0), default=0,
                      help="seed of the generated data (default: 0)")
    demo.add_argument("--window", type=_int_at_least(1), default=None,
                      help="calibrate on the last W events only (default: all events)")
    demo.set_defaults(handler=_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the ``streamcal`` command with ``argv`` (default: ``sys.argv[1:]``).

    Returns the exit status: 0 on success, 2 on a usage error (including no
    subcommand, after printing the help to stderr).

    Examples
    --------
    >>> main(["demo", "--n", "200"])  # doctest: +ELLIPSIS
    streamcal demo: ...
    0

    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2), already printed
        return exc.code if isinstance(exc.code, int) else 2
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return args.handler(args)
    except BrokenPipeError:  # output piped into e.g. `head`, which exited early
        # Point stdout at devnull so that the interpreter's final flush does not fail.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


# ---------------------------------------------------------------------- demo


def _prequential(scores: np.ndarray, labels: np.ndarray, window_size: int | None):
    """Predict each event with the current calibrator, then learn it; return the
    predictions, the calibrator and the elapsed seconds of the loop."""
    from streamcal import OnlineIsotonic

    cal = OnlineIsotonic(window_size=window_size)
    predict, learn = cal.predict_one, cal.learn_one
    out = [0.0] * len(scores)
    start = time.perf_counter()
    for i, (s, y) in enumerate(zip(scores.tolist(), labels.tolist())):
        out[i] = predict(s)
        learn(s, y)
    elapsed = time.perf_counter() - start
    return np.array(out), cal, elapsed


def _demo(args) -> int:
    from streamcal.datasets import miscalibrated_rain_forecasts
    from streamcal.metrics import brier_score, expected_calibration_error

    n, seed, window = args.n, args.seed, args.window
    scores, labels = miscalibrated_rain_forecasts(n=n, seed=seed)
    calibrated, cal, elapsed = _prequential(scores, labels, window)

    name = "OnlineIsotonic()" if window is None else f"OnlineIsotonic(window_size={window})"
    print(f"streamcal demo: {name} calibrating prequentially (predict_one, then learn_one)")
    print(
        f"data: miscalibrated_rain_forecasts(n={n}, seed={seed}): {n:,} days of simulated "
        f"seasonal rain ({labels.mean():.1%} wet), forecasts over-confident "
        "(logit = 2 x true logit + 0.5 + noise)"
    )
    print()
    print(f"{'':<22}{' Brier score ':-^22}   {' ECE (10 bins) ':-^22}")
    print(f"{'':<22}{'raw':>9}{'calibrated':>13}   {'raw':>9}{'calibrated':>13}")
    half = n // 2
    for label, part in (
        (f"whole stream ({n:,})", slice(None)),
        (f"second half ({n - half:,})", slice(half, None)),
    ):
        y = labels[part]
        b_raw, b_cal = brier_score(y, scores[part]), brier_score(y, calibrated[part])
        e_raw = expected_calibration_error(y, scores[part], n_bins=10)
        e_cal = expected_calibration_error(y, calibrated[part], n_bins=10)
        print(f"{label:<22}{b_raw:>9.4f}{b_cal:>13.4f}   {e_raw:>9.4f}{e_cal:>13.4f}")
    print()
    print(f"PAV blocks at the end: {len(cal.blocks)}")
    rate = n / elapsed if elapsed > 0 else float("inf")
    print(f"throughput: {rate:,.0f} events/s (predict_one + learn_one, {elapsed:.2f} s)")
    return 0
