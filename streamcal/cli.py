"""The ``streamcal`` command.

Subcommands:

- ``streamcal replay [LOG] [--score COL] [--label COL] [--time COL]
  [--label-time COL | --id COL --labels FILE] [--calibrator SPEC ...] [--metric SPEC ...]
  [--window N] [--every N] [--checkpoint FILE [--resume]] [--on-error skip|raise]
  [--out DIR]``: replay a log of scores and labels through several calibrators
  prequentially (:func:`streamcal.replay`), print a table of their metrics and, with
  ``--out``, write a report (JSON summary, plots, HTML page: :mod:`streamcal.report`).
  Without LOG it replays the bundled rain-forecast log. Calibrators and metrics are named
  by short specs such as ``isotonic:window_size=5000`` (:mod:`streamcal.registry`).
- ``streamcal simulate NAME [ARGS ...]`` (``--list``): run one of the simulation scripts
  of the repository's ``simulations/`` folder.
- ``streamcal demo [--n N] [--seed S] [--window W]``: recalibrate a stream of
  miscalibrated rain forecasts with :class:`streamcal.OnlineIsotonic`, prequentially
  (each event is predicted with the current state, then learnt), and print the Brier
  score and ECE before and after, the final number of PAV blocks and the throughput.

Exit status (:data:`EXIT_CODES`, also listed by ``--help``): 0 done; 1 the command
failed (a replay stopped on a malformed row, an unreadable log, a missing optional
package, a replay that learnt nothing); 2 usage error (the message names the bad
argument); 3 more malformed rows than ``--max-malformed`` allows; 130 interrupted
(Ctrl-C). ``python -m streamcal ...`` runs the same command.

Start-up is kept short: this module imports only the standard library, and each
subcommand imports what it uses (the calibrators, river's metrics, matplotlib,
pyarrow) when it runs.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

__all__ = ["EXIT_CODES", "build_parser", "main"]

#: Exit status -> what it means, as ``streamcal --help`` lists it.
EXIT_CODES = {
    0: "done",
    1: "failed: a malformed row stopped the replay (--on-error raise), the log could "
    "not be read, an optional package is missing, or no event was learnt",
    2: "usage error (the message names the argument)",
    3: "more malformed rows than --max-malformed allows (the results are printed)",
    130: "interrupted (Ctrl-C); a replay prints what it measured so far and, with "
    "--checkpoint, saves its state",
}
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_MALFORMED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def _exit_codes_epilog() -> str:
    lines = ["exit status:"]
    for code, meaning in EXIT_CODES.items():
        lines.append(f"  {code:>3}  {meaning}")
    return "\n".join(lines)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose epilog may be a callable, called only when the help is
    printed (the replay's lists of calibrators and metrics import them)."""

    def format_help(self):
        if callable(self.epilog):
            self.epilog = self.epilog()
        return super().format_help()


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(
            f"must be a fraction in [0, 1] (0.01: 1% of the rows). Got {text!r} instead."
        )
    return value


def _int_at_least(minimum: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"must be an int >= {minimum}. Got {text!r} instead."
            ) from None
        if value < minimum:
            raise argparse.ArgumentTypeError(
                f"must be an int >= {minimum}. Got {value} instead."
            )
        return value

    parse.__name__ = f"int >= {minimum}"
    return parse


class UsageError(Exception):
    """A bad command-line argument found after parsing; reported as argparse reports its
    own errors (usage line, then ``streamcal <command>: error: argument X: ...``), exit
    status 2."""

    def __init__(self, argument: str | None, message: str):
        super().__init__(message)
        self.argument = argument
        self.message = message


_REPLAY_DESCRIPTION = """\
Replay a log of scores and labels through several calibrators, prequentially: for
each event every calibrator predicts from the score (knowing only the labels that had
arrived), the prediction is scored, then the calibrator learns the label. Prints one
row per calibrator (and "raw", the log's own scores) and one column per metric, the
best value of each column marked; with --out, also writes summary.json, metric-over-time
plots, reliability diagrams and index.html into that directory.

Without LOG, replays the bundled rain-forecast log: every hour of 2013 at Newark
airport, the probability of rain in the next hour forecast by an online logistic
regression on the weather of the hour, the outcome known an hour later (--time time
--label-time label_time)."""


def _replay_epilog() -> str:
    """The lists of calibrators and metrics (built when ``replay --help`` is printed:
    it imports them) and the exit codes."""
    import textwrap

    from streamcal import registry

    def wrapped(names) -> list[str]:
        return textwrap.wrap(
            ", ".join(names), width=88, initial_indent="  ", subsequent_indent="  "
        )

    lines = [
        "calibrator specs: NAME[:PARAM=VALUE[,PARAM=VALUE ...]], e.g. isotonic:window_size=5000",
        "  or histogram:n_bins=20,strategy=quantile (values: int, float, None, True, False, str)",
        "binary calibrators (a log with one score column):",
    ]
    for name in registry.CALIBRATOR_NAMES:
        params = ", ".join(registry.calibrator_parameters(name))
        lines.append(f"  {name:<12} {registry.calibrator_description(name)}: {params}")
    lines.append(f"  default: {' '.join(registry.DEFAULT_CALIBRATORS)}")
    lines.append(
        "multiclass calibrators (a log with one probability column per class, "
        "--score a,b,c):"
    )
    for name in registry.MULTICLASS_CALIBRATOR_NAMES:
        description = registry.calibrator_description(name, task="multiclass")
        lines.append(f"  {name:<12} {description}")
    lines.append(f"  default: {' '.join(registry.DEFAULT_MULTICLASS_CALIBRATORS)}")
    lines.append("binary metrics (specs the same way, e.g. ece:n_bins=15):")
    lines += wrapped(registry.METRIC_NAMES)
    lines.append(
        "multiclass metrics (brier: the multiclass Brier score, in [0, 2]; log_loss: "
        "cross-entropy; ece: the confidence ECE, top-class view):"
    )
    lines += wrapped(registry.MULTICLASS_METRIC_NAMES)
    lines.append(f"  default (both): {' '.join(registry.DEFAULT_METRICS)}")
    lines.append("")
    lines.append(_exit_codes_epilog())
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the ``streamcal`` command (one subparser per
    subcommand, each with its handler as the ``handler`` default).

    Examples
    --------
    >>> args = build_parser().parse_args(["demo", "--n", "500"])
    >>> args.command, args.n, args.seed, args.window
    ('demo', 500, 0, None)
    >>> args = build_parser().parse_args(
    ...     ["replay", "log.csv", "--calibrator", "isotonic:window_size=5000", "platt"])
    >>> args.log, args.calibrators, args.out
    ('log.csv', ['isotonic:window_size=5000', 'platt'], None)

    """
    parser = _Parser(
        prog="streamcal",
        description="Streaming calibration of classifier and forecaster scores.",
        epilog=_exit_codes_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    _add_replay(sub)
    _add_simulate(sub)
    _add_demo(sub)
    return parser


def _add_demo(sub) -> None:
    demo = sub.add_parser(
        "demo",
        help="recalibrate miscalibrated rain forecasts online and report the gain",
        description=(
            "Stream generated, miscalibrated rain forecasts through OnlineIsotonic "
            "prequentially (predict each event with the current state, then learn it) "
            "and print Brier score and ECE of the raw and calibrated forecasts."
        ),
    )
    demo.add_argument(
        "--n",
        type=_int_at_least(2),
        default=20_000,
        help="number of days (events) to stream (default: 20000)",
    )
    demo.add_argument(
        "--seed",
        type=_int_at_least(0),
        default=0,
        help="seed of the generated data (default: 0)",
    )
    demo.add_argument(
        "--window",
        type=_int_at_least(1),
        default=None,
        help="calibrate on the last W events only (default: all events)",
    )
    demo.set_defaults(handler=_demo, subparser=demo)


def _add_replay(sub) -> None:
    replay = sub.add_parser(
        "replay",
        help="replay a log through several calibrators and compare them",
        description=_REPLAY_DESCRIPTION,
        epilog=_replay_epilog,  # a callable: built only when the help is printed
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    replay.add_argument(
        "log",
        nargs="?",
        metavar="LOG",
        help="the log: .csv, .tsv, .jsonl, .ndjson (each optionally .gz) or .parquet "
        '(needs pyarrow: pip install "streamcal[fast]"); one row per event; - reads '
        "standard input (default: the bundled rain-forecast log)",
    )
    cols = replay.add_argument_group("columns of the log")
    cols.add_argument(
        "--score",
        metavar="COL",
        help="the model's score, a probability in [0, 1] (default: score); for a "
        "multiclass log, one column per class separated by commas",
    )
    cols.add_argument(
        "--label",
        metavar="COL",
        help="the outcome (default: label): for a binary log 0 or 1 (also true/false, "
        "0.0/1.0); for a multiclass log the class, named as its --score column",
    )
    cols.add_argument(
        "--time",
        metavar="COL",
        help="the event time, kept in the time series (default: none; time for the bundled log)",
    )
    delayed = cols.add_mutually_exclusive_group()
    delayed.add_argument(
        "--label-time",
        metavar="COL",
        help="delayed labels: the time at which each event's label becomes known "
        "(compared with --time); predictions use only the labels known by then",
    )
    delayed.add_argument(
        "--id",
        metavar="COL",
        help="delayed labels: the event id column, joined with the records of --labels",
    )
    cols.add_argument(
        "--labels",
        metavar="FILE",
        help="delayed labels: a file of label records in time order, with the --id, "
        "--label and --time columns (the time is when the label became known)",
    )
    what = replay.add_argument_group("what to compare")
    what.add_argument(
        "--calibrator",
        dest="calibrators",
        metavar="SPEC",
        nargs="+",
        action="extend",
        help="calibrators to compare, e.g. isotonic platt:half_life=1000 (default: "
        "isotonic venn_abers histogram platt beta tops; on a multiclass log: temperature fir "
        "ovr_isotonic class_wise; see below)",
    )
    what.add_argument(
        "--metric",
        dest="metrics",
        metavar="SPEC",
        nargs="+",
        action="extend",
        help="metrics to report (default: brier log_loss ece; the multiclass ones on a "
        "multiclass log; see below)",
    )
    what.add_argument(
        "--window",
        type=_int_at_least(1),
        metavar="N",
        help="also follow each metric over the last N events (in the time series)",
    )
    what.add_argument(
        "--every",
        type=_int_at_least(1),
        metavar="N",
        help="sample the metrics every N events for the time series (default: about "
        "200 samples over the log, or every 1000 events when its length is unknown)",
    )
    cols.add_argument(
        "--format",
        choices=("csv", "tsv", "jsonl", "parquet"),
        help="how to read LOG (default: inferred from its suffix: .csv, .tsv, .jsonl or "
        ".ndjson, each optionally .gz, and .parquet; standard input is read as csv); "
        "the --labels file is always read by its suffix",
    )
    cols.add_argument(
        "--delimiter",
        metavar="CHAR",
        help="the field delimiter of a CSV log (default: ',' for .csv, tab for .tsv); "
        "'\\t' or tab for a tab",
    )
    run = replay.add_argument_group("running")
    run.add_argument(
        "--checkpoint",
        metavar="FILE",
        help="save the whole replay state to FILE every --checkpoint-every events",
    )
    run.add_argument(
        "--checkpoint-every",
        type=_int_at_least(1),
        default=10_000,
        metavar="N",
        help="events between checkpoints (default: 10000)",
    )
    run.add_argument(
        "--resume",
        action="store_true",
        help="continue the replay saved in --checkpoint (same log, same options): the "
        "results are those of an uninterrupted replay; starts from the beginning "
        "while FILE does not exist, so the same command can be rerun after a crash",
    )
    run.add_argument(
        "--on-error",
        choices=("skip", "raise"),
        default="skip",
        help="on a malformed row: report its line number and skip it (default), or "
        "stop (exit status 1; everything learnt before is kept)",
    )
    run.add_argument(
        "--max-malformed",
        type=_fraction,
        default=0.01,
        metavar="FRACTION",
        help="with --on-error skip: exit with status 3 when more than this fraction of "
        "the rows read were malformed (default: 0.01, i.e. 1%%; 1 never fails, 0 "
        "fails on the first)",
    )
    bar = run.add_mutually_exclusive_group()
    bar.add_argument(
        "--progress",
        dest="progress",
        action="store_const",
        const=True,
        default=None,
        help="show a progress bar on stderr (default: only when stderr is a terminal)",
    )
    bar.add_argument(
        "--no-progress",
        dest="progress",
        action="store_const",
        const=False,
        help="no progress bar",
    )
    run.add_argument(
        "--out",
        metavar="DIR",
        help="write the report into DIR: summary.json, PNG plots (with matplotlib) "
        "and index.html (default: print the table only); checked before the replay "
        "starts (created if missing)",
    )
    replay.set_defaults(handler=_replay, subparser=replay)


def _add_simulate(sub) -> None:
    simulate = sub.add_parser(
        "simulate",
        help="run one of the simulation scripts of the repository's simulations/ folder",
        description=(
            "Run a simulation script of the repository's simulations/ folder as "
            "`python simulations/NAME.py ARGS`, forwarding ARGS. The scripts are part of "
            "the source repository, not of the installed package: run from a clone of "
            "the repository, or point --dir at its simulations folder."
        ),
    )
    simulate.add_argument(
        "--list", action="store_true", help="list the available simulations and exit"
    )
    simulate.add_argument(
        "--dir",
        metavar="DIR",
        help="the simulations folder (default: ./simulations, else the one of the "
        "source checkout streamcal is imported from)",
    )
    simulate.add_argument(
        "name", nargs="?", metavar="NAME", help="the simulation to run"
    )
    simulate.add_argument(
        "args",
        nargs=argparse.REMAINDER,
        metavar="ARGS",
        help="arguments for the script",
    )
    simulate.set_defaults(handler=_simulate, subparser=simulate)


def main(argv: list[str] | None = None) -> int:
    """Run the ``streamcal`` command with ``argv`` (default: ``sys.argv[1:]``).

    Returns the exit status (:data:`EXIT_CODES`): 0 on success, 1 when the command
    failed, 2 on a usage error (including no subcommand, after printing the help to
    stderr), 3 when a replay met more malformed rows than ``--max-malformed`` allows,
    130 when interrupted (Ctrl-C).

    Examples
    --------
    >>> main(["demo", "--n", "200"])  # doctest: +ELLIPSIS
    streamcal demo: ...
    0

    """
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2), already printed
        return exc.code if isinstance(exc.code, int) else 2
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    args.argv = argv
    try:
        return args.handler(args)
    except UsageError as exc:
        sub = args.subparser
        sub.print_usage(sys.stderr)
        where = f"argument {exc.argument}: " if exc.argument else ""
        print(f"{sub.prog}: error: {where}{exc.message}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into e.g. `head`, which exited early
        # Point stdout at devnull so that the interpreter's final flush does not fail.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILED
    except KeyboardInterrupt:  # Ctrl-C outside a replay's own handling
        print(f"\n{args.subparser.prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


# ---------------------------------------------------------------------- demo


def _prequential(scores, labels, window_size: int | None):
    """Predict each event with the current calibrator, then learn it; return the
    predictions, the calibrator and the elapsed seconds of the loop."""
    import numpy as np

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

    name = (
        "OnlineIsotonic()"
        if window is None
        else f"OnlineIsotonic(window_size={window})"
    )
    print(
        f"streamcal demo: {name} calibrating prequentially (predict_one, then learn_one)"
    )
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
    print(
        f"throughput: {rate:,.0f} events/s (predict_one + learn_one, {elapsed:.2f} s)"
    )
    return 0


# ---------------------------------------------------------------------- replay

_BUNDLED = "the bundled rain-forecast log"
# With no --every, the metric time series get about this many samples.
_SAMPLES = 200


def _nice_ceiling(x: float) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50, ... that is >= x."""
    step = 1
    while True:
        for m in (1, 2, 5):
            if step * m >= x:
                return step * m
        step *= 10


def _count_rows(path: str, format: str | None = None) -> int | None:
    """The number of events in a log file (data lines of a CSV, lines of a JSON Lines
    file, rows of a Parquet file), or None when it cannot be told cheaply. ``format``
    (as ``--format``) overrides the suffix. Cost: one pass over the bytes (no
    parsing)."""
    import gzip

    lower = path.lower()
    try:
        if format == "parquet" or (format is None and lower.endswith(".parquet")):
            import pyarrow.parquet as pq

            return int(pq.ParquetFile(path).metadata.num_rows)
        if format is None:
            is_csv = lower.endswith((".csv", ".csv.gz", ".tsv", ".tsv.gz"))
            is_jsonl = lower.endswith((".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz"))
        else:
            is_csv, is_jsonl = format in ("csv", "tsv"), format == "jsonl"
        if not (is_csv or is_jsonl):
            return None
        opener = gzip.open if lower.endswith(".gz") else open
        lines, last = 0, b"\n"
        with opener(path, "rb") as f:
            while chunk := f.read(1 << 20):
                lines += chunk.count(b"\n")
                last = chunk[-1:]
        if last != b"\n":
            lines += 1
        return max(lines - 1, 0) if is_csv else lines
    except (OSError, ImportError, ValueError, EOFError):
        return None


def _csv_header(
    path: str, delimiter: str | None = None, format: str | None = None
) -> list[str] | None:
    """The column names of a CSV (or TSV) log, else None; the file is opened as
    :func:`streamcal.replay` opens it (``format``: as ``--format``)."""
    import csv

    from streamcal.replay._readers import csv_header

    try:
        return csv_header(path, delimiter, format)
    except (OSError, UnicodeDecodeError, EOFError, csv.Error, ValueError):
        return None


class _Progress:
    """A plain-text progress line on ``stream``, redrawn in place with a carriage
    return at most 10 times per second: a bar when the number of events is known,
    a count otherwise, and the rate."""

    def __init__(self, label: str, total: int | None, stream):
        self.label, self.total, self.stream = label, total, stream
        self.start = time.perf_counter()
        self.last = -math.inf  # draw at the first call
        self.width = 0
        self.n = 0

    def __call__(self, n: int) -> None:
        self.n = n
        now = time.perf_counter()
        if now - self.last >= 0.1:
            self.last = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        elapsed = now - self.start
        rate = f"{self.n / elapsed:,.0f} events/s" if elapsed > 0 else ""
        if self.total:
            frac = min(self.n / self.total, 1.0)
            bar = "#" * int(30 * frac)
            text = (
                f"{self.label} [{bar:<30}] {100 * frac:3.0f}%  "
                f"{self.n:,}/{self.total:,} events  {rate}"
            )
        else:
            text = f"{self.label}: {self.n:,} events  {rate}"
        pad = " " * max(self.width - len(text), 0)
        self.width = len(text)
        self.stream.write("\r" + text + pad)
        self.stream.flush()

    def close(self) -> None:
        if self.width:  # wipe the line: the summary follows
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0


def _specs(specs, kind, make, argument, other=None):
    """Canonical spec -> fresh object, or a UsageError naming ``argument``. ``other``:
    ``(names, text)``, the names of the other task (binary or multiclass), so that one
    of them is reported as such (``text`` says what to do) rather than as unknown."""
    from streamcal import registry

    out = {}
    for spec in specs:
        try:
            name = registry.canonical_spec(spec, kind)
            if other is not None:
                bare = registry.parse_spec(spec, kind)[0]
                names, text = other
                if bare in names:
                    raise UsageError(argument, text.format(name=bare, spec=spec))
            obj = make(spec)
        except (ValueError, TypeError) as exc:
            message = str(exc)
            if os.path.isfile(spec):
                message += (
                    f" ({spec!r} is a file: to replay it, put LOG before {argument}.)"
                )
            raise UsageError(argument, message) from None
        if name in out:
            raise UsageError(argument, f"{spec!r} is given twice (as {name!r}).")
        out[name] = obj
    return out


def _calibrators_and_metrics(args, multiclass: bool) -> tuple[dict, dict]:
    from streamcal import registry

    binary_only = set(registry.CALIBRATOR_NAMES) - set(
        registry.MULTICLASS_CALIBRATOR_NAMES
    )
    multiclass_only = set(registry.MULTICLASS_CALIBRATOR_NAMES) - set(
        registry.CALIBRATOR_NAMES
    )
    if multiclass:
        calibrators = _specs(
            args.calibrators or registry.DEFAULT_MULTICLASS_CALIBRATORS,
            "calibrator",
            registry.make_multiclass_calibrator,
            "--calibrator",
            other=(
                binary_only,
                "{name} is a binary calibrator (for a log with one score column), and "
                "--score gives one column per class. Multiclass calibrators: "
                + ", ".join(registry.MULTICLASS_CALIBRATOR_NAMES)
                + " (class_wise:calibrator={name} runs it one class against the rest).",
            ),
        )
        names = registry.MULTICLASS_METRIC_NAMES
        metrics = _specs(
            args.metrics or registry.DEFAULT_METRICS,
            "metric",
            lambda spec: registry.make_metric(spec, task="multiclass"),
            "--metric",
            other=(
                set(registry.METRIC_NAMES) - set(names),
                "{spec!r} is not a multiclass metric (it scores binary probabilities). "
                "Multiclass metrics: " + ", ".join(names) + ".",
            ),
        )
    else:
        calibrators = _specs(
            args.calibrators or registry.DEFAULT_CALIBRATORS,
            "calibrator",
            registry.make_calibrator,
            "--calibrator",
            other=(
                multiclass_only,
                "{name} is a multiclass calibrator: it needs a log with one probability "
                "column per class (--score a,b,c). Binary calibrators: "
                + ", ".join(registry.CALIBRATOR_NAMES)
                + ".",
            ),
        )
        metrics = _specs(
            args.metrics or registry.DEFAULT_METRICS,
            "metric",
            registry.make_metric,
            "--metric",
            other=(
                set(registry.MULTICLASS_METRIC_NAMES) - set(registry.METRIC_NAMES),
                "{spec!r} is a multiclass metric: it needs a log with one probability "
                "column per class (--score a,b,c). Binary metrics: "
                + ", ".join(registry.METRIC_NAMES)
                + ".",
            ),
        )
    return calibrators, metrics


def _check_out(out: str) -> list[str]:
    """Make sure the report can be written into ``out`` before replaying anything:
    create the folder (and its missing parents) and try a file in it. Returns the
    folders created (removed again if the replay writes no report); a UsageError naming
    --out says why not."""
    import tempfile

    if os.path.exists(out) and not os.path.isdir(out):
        raise UsageError("--out", f"{out!r} exists and is not a directory.")
    created = []
    missing, head = [], os.path.abspath(out)
    while not os.path.exists(head):
        missing.append(head)
        parent = os.path.dirname(head)
        if parent == head:
            break
        head = parent
    if os.path.exists(head) and not os.path.isdir(head):
        raise UsageError(
            "--out", f"{out!r} cannot be created: {head!r} is a file, not a directory."
        )
    try:
        for folder in reversed(missing):
            os.mkdir(folder)
            created.append(folder)
        fd, probe = tempfile.mkstemp(prefix=".streamcal-probe-", dir=out)
        os.close(fd)
        os.remove(probe)
    except OSError as exc:
        _remove_folders(created)
        reason = exc.strerror or str(exc)
        raise UsageError(
            "--out", f"cannot write the report into {out!r}: {reason}."
        ) from None
    return created


def _remove_folders(folders) -> None:
    """Remove the (empty) folders that :func:`_check_out` created, innermost first."""
    for folder in reversed(folders):
        try:
            os.rmdir(folder)
        except OSError:
            pass


def _replay_inputs(args) -> dict:
    """Check the arguments that argparse cannot check; return the arguments of
    :func:`streamcal.replay` and what the report says about them."""
    score = args.score or "score"
    score_cols = [c.strip() for c in score.split(",")]
    multiclass = len(score_cols) > 1
    if any(not c for c in score_cols):
        raise UsageError("--score", f"empty column name in {score!r}.")
    calibrators, metrics = _calibrators_and_metrics(args, multiclass)
    delimiter = args.delimiter
    if delimiter is not None:
        delimiter = "\t" if delimiter in ("\\t", "tab", "TAB") else delimiter
        if len(delimiter) != 1 or delimiter in "\r\n\"":
            raise UsageError(
                "--delimiter",
                "must be one character (not a quote or a line break), or '\\t' for a "
                f"tab. Got {args.delimiter!r} instead.",
            )
    bundled = args.log is None
    stdin = args.log == "-"
    if bundled:
        from streamcal.datasets import rain_forecast_log_path

        log = str(rain_forecast_log_path())
    else:
        log = args.log
        if not stdin and not os.path.exists(log):
            raise UsageError("LOG", f"no such file: {log!r}.")
        if os.path.isdir(log):
            raise UsageError("LOG", f"{log!r} is a directory, not a log file.")
    # standard input can be read once only: its header is checked by the replay
    header = None if stdin else _csv_header(log, delimiter, args.format)
    label = args.label or "label"
    time_col = args.time
    label_time = args.label_time
    if bundled and header:  # the bundled log's own columns, unless told otherwise
        if time_col is None and "time" in header:
            time_col = "time"
        if label_time is None and args.id is None and "label_time" in header:
            label_time = "label_time"
    if args.labels is not None and args.id is None:
        raise UsageError(
            "--labels",
            "needs --id COL, the event id column to join the label records on.",
        )
    if args.id is not None and args.labels is None:
        raise UsageError(
            "--id", "needs --labels FILE, the file of label records to join on it."
        )
    if args.labels is not None and not os.path.isfile(args.labels):
        raise UsageError("--labels", f"no such file: {args.labels!r}.")
    for option, value in (("--label-time", label_time), ("--id", args.id)):
        if value is not None and time_col is None:
            raise UsageError(
                option,
                "delayed labels need --time COL, the events' time, to know which "
                "labels have arrived when each event is predicted.",
            )
    if args.resume and args.checkpoint is None:
        raise UsageError(
            "--resume", "needs --checkpoint FILE, the checkpoint to resume from."
        )
    if header is not None:  # catch a misspelt column before replaying anything
        options = [("--score", c) for c in score_cols]
        if args.id is None:  # with label records, the events' labels are not read
            options.append(("--label", label))
        options += [
            ("--time", time_col),
            ("--label-time", label_time),
            ("--id", args.id),
        ]
        for option, column in options:
            if column is not None and column not in header:
                raise UsageError(
                    option,
                    f"no column {column!r} in {log!r}. Its columns: {', '.join(header)}.",
                )
    label_header = None if args.labels is None else _csv_header(args.labels, delimiter)
    if label_header is not None:
        for option, column in (
            ("--id", args.id),
            ("--label", label),
            ("--time", time_col),
        ):
            if column not in label_header:
                raise UsageError(
                    "--labels",
                    f"no column {column!r} (the {option} column) in {args.labels!r}. "
                    f"Its columns: {', '.join(label_header)}.",
                )
    # last of the checks, as it creates the folder
    created = [] if args.out is None else _check_out(args.out)

    total = None
    every = args.every
    show = args.progress if args.progress is not None else sys.stderr.isatty()
    if not stdin and (every is None or show):
        total = _count_rows(log, args.format)
    if every is None:
        every = _nice_ceiling(total / _SAMPLES) if total else 1000
    kwargs = {
        "score": score_cols if multiclass else score_cols[0],
        "label": label,
        "time": time_col,
        "label_time": label_time,
        "id": args.id,
        "labels": args.labels,
        "every": every,
        "window": args.window,
        "checkpoint": args.checkpoint,
        "checkpoint_every": args.checkpoint_every,
        "resume": args.resume,
        "on_error": args.on_error,
    }
    if delimiter is not None:  # passed only when given (older replays lack it)
        kwargs["delimiter"] = delimiter
    if args.format is not None:
        kwargs["format"] = args.format
    return {
        "log": log,
        "bundled": bundled,
        "stdin": stdin,
        "calibrators": calibrators,
        "metrics": metrics,
        "kwargs": kwargs,
        "total": total,
        "progress": show,
        "created": created,
    }


def _print_table(summary: dict, columns=(), file=None) -> None:
    """One table per window (all events; the window), best values starred; what each
    column is comes from the result's column table ``columns``."""
    from streamcal.report import column_groups, column_label, summary_table

    file = file or sys.stdout
    rows, columns, best = summary_table(summary, columns)
    groups = column_groups(columns)
    for i, (window, group) in enumerate(groups):
        if len(groups) > 1:
            if i:
                print(file=file)
            if window is None:
                print("over all events:", file=file)
            else:
                print(f"over the last {window:,} events:", file=file)
        _print_group(summary, rows, group, best, file)
    directions = {column_label(c): c.bigger_is_better for c in columns}
    lower = [c for c, bigger in directions.items() if bigger is False]
    higher = [c for c, bigger in directions.items() if bigger is True]
    legend = "* best in its column"
    if lower:
        legend += f"; lower is better: {', '.join(lower)}"
    if higher:
        legend += f"; higher is better: {', '.join(higher)}"
    print(legend, file=file)


def _print_group(summary, rows, columns, best, file) -> None:
    from streamcal.report import column_label, format_number

    keys = [c.key for c in columns]
    labels = {c.key: column_label(c) for c in columns}
    cells = {
        (r, k): format_number(summary[r].get(k)) + ("*" if r in best.get(k, ()) else " ")
        for r in rows
        for k in keys
    }
    first = max([len("calibrator")] + [len(r) for r in rows])
    widths = {
        k: max([len(labels[k]) + 1] + [len(cells[r, k]) for r in rows]) for k in keys
    }
    print(
        f"{'calibrator':<{first}}"
        + "".join(f"  {labels[k] + ' ':>{widths[k]}}" for k in keys),
        file=file,
    )
    for r in rows:
        print(
            f"{r:<{first}}" + "".join(f"  {cells[r, k]:>{widths[k]}}" for k in keys),
            file=file,
        )


class _StopOnInterrupt:
    """While active, the first Ctrl-C (SIGINT) asks the replay to stop (:attr:`requested`,
    polled through ``stop=`` at least every few thousand events); a second one raises
    KeyboardInterrupt at once. Only in the main thread (where signals are handled)."""

    def __init__(self, prog: str):
        self.prog = prog
        self.requested = False
        self._previous = None

    def is_set(self) -> bool:
        return self.requested

    def _handle(self, signum, frame) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        print(
            f"\n{self.prog}: interrupted: stopping within the next few thousand events "
            "(Ctrl-C again to stop at once)",
            file=sys.stderr,
            flush=True,
        )

    def __enter__(self):
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        if self._previous is not None:
            import signal

            signal.signal(signal.SIGINT, self._previous)
            self._previous = None


def _accepts(function, name: str) -> bool:
    import inspect

    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return False
    return name in parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
    )


def _missing_package(exc: ImportError) -> str:
    """The message for a missing optional package, naming the extra to install."""
    name = (getattr(exc, "name", None) or "").partition(".")[0]
    text = str(exc)
    if name == "pyarrow" or "pyarrow" in text:
        return (
            "reading this log needs pyarrow, which is not installed: "
            'pip install "streamcal[fast]"'
        )
    return text or f"the module {name!r} is not installed"


def _print_counts(result, elapsed: float, file) -> None:
    rate = f", {result.n_events / elapsed:,.0f} events/s" if elapsed > 0 else ""
    unlabelled = (
        f", {result.n_unlabelled:,} never labelled" if result.n_unlabelled else ""
    )
    print(
        f"{result.n_events:,} events, {result.n_learnt:,} learnt{unlabelled}, "
        f"{result.n_skipped:,} malformed rows skipped ({elapsed:.1f} s{rate})",
        file=file,
    )


def _print_errors(result, prog: str, shown: int = 5) -> None:
    """The first ``shown`` malformed rows, then how many more (of all those skipped:
    ``result.errors`` keeps only the first ``max_errors``)."""
    for line, message in result.errors[:shown]:
        print(f"  skipped line {line}: {message}", file=sys.stderr)
    listed = min(len(result.errors), shown)
    if result.n_skipped > listed:
        kept = (
            f"; the first {len(result.errors):,} are listed in summary.json with --out"
            if len(result.errors) > listed
            else ""
        )
        print(
            f"  ... and {result.n_skipped - listed:,} more malformed rows "
            f"({result.n_skipped:,} skipped{kept})",
            file=sys.stderr,
        )


def _nothing_learnt(result, log: str) -> str:
    """Why a replay learnt no event."""
    if result.n_events == 0 and result.n_skipped == 0:
        return f"no events: {log} has no rows (a header only, or empty)."
    if result.n_events == 0:
        return (
            f"no events: all {result.n_skipped:,} rows of {log} were malformed "
            "(the first ones are listed above); check --score, --label and the log."
        )
    return (
        f"no event was learnt: none of the {result.n_events:,} events got its label "
        "(check the delayed-label options, --label-time or --id and --labels)."
    )


def _replay(args) -> int:
    import shlex

    inputs = _replay_inputs(args)
    prog = args.subparser.prog
    log, kwargs = inputs["log"], inputs["kwargs"]
    if inputs["bundled"]:
        shown = f"{_BUNDLED} ({log})"
    elif inputs["stdin"]:
        shown = "standard input"
    else:
        shown = log
    created = inputs["created"]

    from streamcal import ReplayError, replay

    if "delimiter" in kwargs and not _accepts(replay, "delimiter"):
        _remove_folders(created)
        raise UsageError("--delimiter", "this version of streamcal.replay cannot set it.")
    progress = None
    if inputs["progress"]:
        progress = _Progress(
            f"replaying {os.path.basename(log)}", inputs["total"], sys.stderr
        )
    interrupt = _StopOnInterrupt(prog)
    if _accepts(replay, "stop"):
        kwargs = {**kwargs, "stop": interrupt.is_set}
    start = time.perf_counter()
    try:
        with interrupt:
            result = replay(
                "-" if inputs["stdin"] else log,
                inputs["calibrators"],
                inputs["metrics"],  # a dict key -> metric: the keys name the columns
                progress=progress,
                **kwargs,
            )
    except KeyboardInterrupt:
        if progress:
            progress.close()
        _remove_folders(created)
        saved = (
            f"; the checkpoint {args.checkpoint!r} holds the state of its last write"
            if args.checkpoint
            else ""
        )
        print(f"\n{prog}: interrupted: no summary{saved}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except ReplayError as exc:
        if progress:
            progress.close()
        _remove_folders(created)
        print(f"{prog}: stopped: {exc}", file=sys.stderr)
        if exc.checkpoint is not None:
            print(
                "fix the row, then run the same command with --resume to go on; or use "
                "--on-error skip to report malformed rows and go on",
                file=sys.stderr,
            )
        else:
            print(
                "use --on-error skip to report malformed rows and go on",
                file=sys.stderr,
            )
        return EXIT_FAILED
    except ImportError as exc:  # an optional package the log needs
        if progress:
            progress.close()
        _remove_folders(created)
        print(f"{prog}: error: {_missing_package(exc)}", file=sys.stderr)
        return EXIT_FAILED
    except OSError as exc:  # reading the log, or writing the checkpoint
        if progress:
            progress.close()
        _remove_folders(created)
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        print(f"{prog}: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return EXIT_FAILED
    except (ValueError, TypeError) as exc:  # about the log or the options
        if progress:
            progress.close()
        _remove_folders(created)
        args.subparser.print_usage(sys.stderr)
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        if progress:
            progress.close()
    elapsed = time.perf_counter() - start
    stopped = bool(getattr(result, "stopped", False))

    print(f"streamcal replay: {shown}" + (" (interrupted)" if stopped else ""))
    _print_counts(result, elapsed, sys.stdout)
    _print_errors(result, prog)
    if result.n_learnt == 0:
        _remove_folders(created)
        print(f"{prog}: {_nothing_learnt(result, shown)}", file=sys.stderr)
        return EXIT_INTERRUPTED if stopped else EXIT_FAILED
    print()
    if stopped:
        print(f"partial results, over the {result.n_events:,} events replayed:")
    _print_table(result.summary, result.columns)

    if stopped:
        _remove_folders(created)
        if args.checkpoint:
            print(
                f"{prog}: interrupted after {result.n_events:,} events; the state is "
                f"saved in {args.checkpoint!r}: run the same command with --resume to "
                "go on",
                file=sys.stderr,
            )
        else:
            print(
                f"{prog}: interrupted after {result.n_events:,} events (no report "
                "written; --checkpoint FILE lets a replay be resumed)",
                file=sys.stderr,
            )
        return EXIT_INTERRUPTED

    if args.out is not None:
        from streamcal.report import write_report

        source = {"log": "-" if inputs["stdin"] else log, "bundled": inputs["bundled"]}
        options = {
            "command": "streamcal " + shlex.join(args.argv),
            "calibrators": list(inputs["calibrators"]),
            "metrics": list(inputs["metrics"]),
            **{
                k: v
                for k, v in kwargs.items()
                if v is not None
                and k not in ("resume", "stop")
                and (k != "checkpoint_every" or kwargs["checkpoint"])
            },
        }
        if isinstance(options.get("score"), list):
            options["score"] = ",".join(options["score"])
        if inputs["bundled"]:
            name = "the bundled rain-forecast log"
        elif inputs["stdin"]:
            name = "standard input"
        else:
            name = os.path.basename(log)
        doc = write_report(
            result,
            args.out,
            title=f"streamcal replay: {name}",
            source=source,
            options=options,
        )
        for note in doc["notes"]:
            print(f"note: {note}", file=sys.stderr)
        print(f"\nreport: {os.path.join(args.out, 'index.html')}")

    rows = result.n_events + result.n_skipped
    if args.on_error == "skip" and rows and result.n_skipped / rows > args.max_malformed:
        print(
            f"{prog}: {result.n_skipped:,} of {rows:,} rows malformed "
            f"({result.n_skipped / rows:.1%}), more than --max-malformed "
            f"{args.max_malformed:g} ({args.max_malformed:.1%}) allows",
            file=sys.stderr,
        )
        return EXIT_MALFORMED
    return EXIT_OK


# ---------------------------------------------------------------------- simulate

# import name -> package name, for the packages of the simulations extra
_EXTRA_PACKAGES = {"sklearn": "scikit-learn", "matplotlib": "matplotlib"}


def _simulations_dir(given: str | None):
    from pathlib import Path

    if given is not None:
        path = Path(given)
        if not path.is_dir():
            raise UsageError("--dir", f"no such folder: {given!r}.")
        return path
    here = Path.cwd() / "simulations"
    if here.is_dir():
        return here
    import streamcal

    checkout = Path(streamcal.__file__).resolve().parent.parent
    if (checkout / "simulations").is_dir() and (checkout / "pyproject.toml").is_file():
        return checkout / "simulations"
    raise UsageError(
        None,
        "the simulations folder was not found (looked in ./simulations and "
        f"{checkout / 'simulations'}). The simulation scripts are part of the source "
        "repository, not of the installed package: run from a clone of the repository, "
        "or pass --dir.",
    )


def _simulation_scripts(folder) -> dict:
    """name -> (path, first line of its docstring) for each runnable script (a .py
    file not starting with ``_`` that has an ``if __name__ == "__main__"`` block)."""
    import ast
    out = {}
    for path in sorted(folder.glob("*.py")):
        if path.name.startswith("_"):
            continue
        try:
            source = path.read_text(encoding="utf-8")
            tree = ast.parse(source)
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue
        if "__main__" not in source:
            continue
        doc = ast.get_docstring(tree) or ""
        out[path.stem] = (path, doc.strip().splitlines()[0] if doc.strip() else "")
    return out


def _print_simulations(folder, scripts: dict, file) -> None:
    print(f"simulations in {folder}:", file=file)
    width = max((len(n) for n in scripts), default=0)
    for name, (_, summary) in scripts.items():
        print(f"  {name:<{width}}  {summary}", file=file)
    if not scripts:
        print("  (none)", file=file)


def _simulate(args) -> int:
    folder = _simulations_dir(args.dir)
    scripts = _simulation_scripts(folder)
    if args.list:
        _print_simulations(folder, scripts, sys.stdout)
        return 0
    if args.name is None:
        args.subparser.print_usage(sys.stderr)
        print(
            f"{args.subparser.prog}: error: give the NAME of a simulation to run",
            file=sys.stderr,
        )
        _print_simulations(folder, scripts, sys.stderr)
        return 2
    name = args.name.removesuffix(".py")
    if name not in scripts:
        known = ", ".join(scripts) or "(none)"
        raise UsageError(
            "NAME",
            f"no simulation {args.name!r} in {str(folder)!r}. Available: {known}.",
        )
    import runpy

    path = scripts[name][0]
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [str(path), *args.args]
    sys.path.insert(0, str(path.parent))  # as `python simulations/NAME.py` does
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return EXIT_FAILED
    except ModuleNotFoundError as exc:  # an optional package the script needs
        package = _EXTRA_PACKAGES.get((exc.name or "").partition(".")[0], exc.name)
        print(
            f"{args.subparser.prog}: error: the simulation {name!r} needs {package}, "
            f'which is not installed: pip install "streamcal[simulations]" installs '
            "what the simulations need.",
            file=sys.stderr,
        )
        return EXIT_FAILED
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    return 0
