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
- ``streamcal consume --redis URL --events STREAM --labels STREAM --out STREAM [--key
  FIELD] [--calibrator SPEC ...] [--monitor] [--checkpoint-every N] [--shard I/N]``:
  calibrate a Redis stream of scores exactly once, learning labels as they arrive
  (:class:`streamcal.consumer.Consumer`; needs ``pip install "streamcal[redis]"``).
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
import os
import sys

from streamcal.cli._commands import _demo, _simulate
from streamcal.cli._consume import _consume
from streamcal.cli._common import (
    EXIT_CODES,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    UsageError,
    _exit_codes_epilog,
    _fraction,
    _int_at_least,
    _share,
    _Parser,
)
from streamcal.cli._replay import _count_rows, _nice_ceiling, _replay  # noqa: F401 (tests use the first two)

__all__ = ["EXIT_CODES", "build_parser", "main"]




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
    _add_consume(sub)
    return parser


def _add_command(sub, name: str, handler, **kwargs) -> argparse.ArgumentParser:
    """The subparser of command ``name`` (``kwargs`` as for ``add_parser``), run by
    ``handler(args)``; :func:`main` also reads the subparser back from its arguments
    to report usage errors."""
    parser = sub.add_parser(name, **kwargs)
    parser.set_defaults(handler=handler, subparser=parser)
    return parser


def _add_consume(sub) -> None:
    consume = _add_command(
        sub,
        "consume",
        _consume,
        help="calibrate a Redis stream of scores, learning labels as they arrive",
        description=(
            "Read score events and label events from Redis streams through consumer "
            "groups, write each calibrated probability to the output stream, learn each "
            "label when it arrives, and keep the state in Redis: outputs, "
            "acknowledgements and state are committed together (MULTI/EXEC), so a "
            "consumer killed and restarted writes what one that never stopped writes. "
            "Malformed messages go to OUT:dead-letters. Stops on SIGTERM or Ctrl-C "
            'after committing. Needs redis-py: pip install "streamcal[redis]".'
        ),
        epilog=_exit_codes_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    consume.add_argument("--redis", required=True, metavar="URL",
                         help="the server, e.g. redis://localhost:6379/0")
    consume.add_argument("--events", required=True, metavar="STREAM",
                         help="the stream of score events (fields id, score, and --key)")
    consume.add_argument("--labels", required=True, metavar="STREAM",
                         help="the stream of label events (fields id, label)")
    consume.add_argument("--out", required=True, metavar="STREAM",
                         help="the output stream (fields id, score, p); its state is "
                         "kept at OUT:state")
    consume.add_argument("--key", metavar="FIELD",
                         help="the field of a score event holding its key: one "
                         "calibrator per key (default: one for all events)")
    consume.add_argument("--calibrator", dest="calibrators", metavar="SPEC", nargs="+",
                         action="extend",
                         help="calibrators (specs as for replay; default: isotonic); "
                         "the first one's probability is p, the others' p:SPEC")
    consume.add_argument("--monitor", action="store_true",
                         help="watch p against the labels; alarms are output entries "
                         "with alarm=1")
    consume.add_argument("--checkpoint-every", type=_int_at_least(1), default=1000,
                         metavar="N",
                         help="commit every N messages, and whenever the input is "
                         "drained (default: 1000)")
    consume.add_argument("--group", default="streamcal",
                         help="the consumer group (default: streamcal)")
    consume.add_argument("--consumer", default="consumer-1", metavar="NAME",
                         help="this consumer's name in the group (default: consumer-1)")
    consume.add_argument("--shard", metavar="I/N",
                         help="be shard I of N (keys split by hash; needs --key; "
                         "writes OUT:I)")
    consume.add_argument("--batch-size", type=_int_at_least(1), default=500, metavar="N",
                         help="entries read per stream per read (default: 500)")
    consume.add_argument("--label-timeout", dest="label_timeout_ms", type=_int_at_least(0),
                         metavar="MS",
                         help="a score event whose label has not come within MS "
                         "milliseconds (of entry-id time) stops waiting and is a dead "
                         "letter (default: it waits for ever)")
    consume.add_argument("--max-pending", type=_int_at_least(1), metavar="N",
                         help="at most N score events wait for their labels; the oldest "
                         "beyond N are dead letters (default: no bound)")
    consume.add_argument("--max-keys", type=_int_at_least(1), metavar="N",
                         help="with --key: at most N keys keep a calibrator; the key "
                         "learnt least recently is forgotten and starts afresh if it "
                         "comes back (default: no bound)")
    for name in ("id", "score", "label", "p"):
        consume.add_argument(f"--{name}-field", default=name, metavar="FIELD",
                             help=f"the name of the {name} field (default: {name})")


def _add_demo(sub) -> None:
    demo = _add_command(
        sub,
        "demo",
        _demo,
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


def _add_replay(sub) -> None:
    replay = _add_command(
        sub,
        "replay",
        _replay,
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
        "standard input (default: the bundled rain-forecast log). A JSON Lines log's "
        "columns are the keys of its first 1,000 records: a record lacking one is "
        "skipped as malformed, a column in none of them is a usage error",
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
        help="save the whole replay state to FILE every --checkpoint-every events "
        "(or more, see --checkpoint-share), at the end and on Ctrl-C",
    )
    run.add_argument(
        "--checkpoint-every",
        type=_int_at_least(1),
        default=10_000,
        metavar="N",
        help="events between checkpoints, at least (default: 10000)",
    )
    run.add_argument(
        "--checkpoint-share",
        type=_share,
        default=0.1,
        metavar="FRACTION",
        help="spend at most about this share of the time writing checkpoints: after a "
        "write that took d seconds, the next waits until 9 d (for 0.1) have passed "
        "too, so a state growing with the log (exact isotonic) costs no quadratic "
        "time (default: 0.1; 1: every --checkpoint-every events, however long it "
        "takes); the results are the same",
    )
    run.add_argument(
        "--resume",
        action="store_true",
        help="continue the replay saved in --checkpoint (same log, same options): the "
        "results are those of an uninterrupted replay; starts from the beginning "
        "while FILE does not exist, so the same command can be rerun after a crash",
    )
    run.add_argument(
        "--threads",
        type=_int_at_least(1),
        metavar="N",
        help="threads running the calibrators side by side (default: one per CPU, at "
        "most one per calibrator; 1: one after another); the results are the same",
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
        "the rows read (event rows and --labels records) were malformed (default: "
        "0.01, i.e. 1%%; 1 never fails, 0 "
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
        help="write the report into DIR: summary.json and index.html, one page with "
        "its figures drawn inline as SVG (default: print the table only); checked before the replay "
        "starts (created if missing)",
    )


def _add_simulate(sub) -> None:
    simulate = _add_command(
        sub,
        "simulate",
        _simulate,
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

