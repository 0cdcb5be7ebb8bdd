"""``streamcal replay``: check what argparse cannot, run :func:`streamcal.replay`, print
the metrics table and, with ``--out``, write the report."""

from __future__ import annotations

import math
import os
import sys
import time

from streamcal.cli._common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_MALFORMED,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
)

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

    from streamcal.replay import log_format

    fmt, gz = log_format(path, format)
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            return int(pq.ParquetFile(path).metadata.num_rows)
        is_csv, is_jsonl = fmt in ("csv", "tsv"), fmt == "jsonl"
        if not (is_csv or is_jsonl):
            return None
        import numpy as np

        # one reused buffer, the newlines counted by numpy: a third of the CPU of
        # ``bytes.count`` on fresh 1 MiB chunks (0.01 s against 0.025 s on a 10^6-row log)
        buf = bytearray(1 << 20)
        view = np.frombuffer(buf, dtype=np.uint8)
        lines, last = 0, 10
        with (gzip.open(path, "rb") if gz else open(path, "rb", buffering=0)) as f:
            while size := f.readinto(buf):
                lines += int(np.count_nonzero(view[:size] == 10))
                last = buf[size - 1]
        if last != 10:
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

    from streamcal.replay import read_header

    try:
        return read_header(path, delimiter, format)
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

    out, seen = {}, {}
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
        built = _built(obj)
        same = next((n for n, b in seen.items() if built is not None and b == built), None)
        if same is not None:
            what = "metric" if kind == "metric" else "calibrator"
            raise UsageError(
                argument,
                f"{spec!r} is given twice (it builds the same {what} as {same!r}).",
            )
        seen[name] = built
        out[name] = obj
    return out


def _built(obj) -> tuple | None:
    """What a freshly built calibrator or metric is (its class, parameters and state,
    as ``to_dict`` gives them), to tell specs that build the same object though spelt
    differently (``isotonic``, ``isotonic:prior_strength=0``, ``...=0.0``); None when
    it cannot be told."""
    try:
        return (type(obj), obj.to_dict())  # compared with ==: 0 and 0.0 are equal
    except Exception:  # noqa: BLE001 - any object the registry builds may be given
        return None


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


def _probe_folder(folder: str) -> None:
    """Create and remove a file in ``folder``: OSError if nothing can be written there.
    The one home of the up-front write checks of --out and --checkpoint."""
    import tempfile

    fd, probe = tempfile.mkstemp(prefix=".streamcal-probe-", dir=folder)
    os.close(fd)
    os.remove(probe)


def _check_out(out: str) -> list[str]:
    """Make sure the report can be written into ``out`` before replaying anything:
    create the folder (and its missing parents) and try a file in it. Returns the
    folders created (removed again if the replay writes no report); a UsageError naming
    --out says why not."""
    if not out:
        raise UsageError("--out", "the report folder's name is empty.")
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
    reason = None
    try:
        for folder in reversed(missing):
            os.mkdir(folder)
            created.append(folder)
        _probe_folder(out)
    except OSError as exc:
        reason = exc.strerror or str(exc)
    else:
        taken = [n for n in ("index.html", "summary.json") if os.path.isdir(os.path.join(out, n))]
        if taken:
            reason = f"{taken[0]} there is a directory"
    if reason is not None:
        _remove_folders(created)
        raise UsageError("--out", f"cannot write the report into {out!r}: {reason}.")
    return created


def _same_file(a: str, b: str) -> bool:
    """Whether the paths ``a`` and ``b`` name one file: the same file when both exist
    (symlinks and hard links followed), else the same resolved real path."""
    try:
        if os.path.exists(a) and os.path.exists(b):
            return os.path.samefile(a, b)
    except OSError:
        pass
    return os.path.realpath(a) == os.path.realpath(b)


def _check_checkpoint(path: str, others=()) -> None:
    """Make sure a checkpoint can be written at ``path`` before replaying anything (it
    is written beside itself, then renamed), and that it is none of the files
    ``others`` (``(what, path)`` pairs: the log, the label records, the report's
    files), which it would overwrite: a UsageError naming --checkpoint says why not."""
    if not path:
        raise UsageError("--checkpoint", "the checkpoint file's name is empty.")
    if os.path.isdir(path):
        raise UsageError("--checkpoint", f"{path!r} is a directory, not a file.")
    for what, other in others:
        if _same_file(path, other):
            named = "" if other == path else f" ({other!r})"
            raise UsageError(
                "--checkpoint",
                f"{path!r} is {what}{named}: the checkpoint must be another file, "
                "or writing it would overwrite that one.",
            )
    try:
        _probe_folder(os.path.dirname(os.path.abspath(path)))
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise UsageError(
            "--checkpoint", f"cannot write the checkpoint {path!r}: {reason}."
        ) from None


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
    for option, value in (
        ("--score", args.score),
        ("--label", args.label),
        ("--time", args.time),
        ("--label-time", args.label_time),
        ("--id", args.id),
    ):
        if value is not None and not value.strip():
            raise UsageError(
                option, f"must name a column of the log. Got {value!r} instead."
            )
    score = "score" if args.score is None else args.score
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
    label = "label" if args.label is None else args.label
    time_col = args.time
    label_time = args.label_time
    if bundled and header:  # the bundled log's own columns, unless told otherwise
        if time_col is None and "time" in header:
            time_col = "time"
        if label_time is None and args.id is None and "label_time" in header:
            label_time = "label_time"
    # which options go together (--id with --labels, --time for delayed labels) is
    # checked by streamcal.replay: its ValueError is reported as a usage error (exit
    # status 2) by _replay
    if args.resume and args.checkpoint is None:
        raise UsageError("--resume", "needs --checkpoint FILE: the checkpoint to go on from.")
    if args.id is not None and args.labels is not None and not os.path.isfile(args.labels):
        raise UsageError("--labels", f"no such file: {args.labels!r}.")
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
    label_header = None
    if args.labels is not None and args.id is not None:
        # read by its own suffix: --delimiter and --format are the log's
        label_header = _csv_header(args.labels)
    if label_header is not None:
        if time_col is None:
            raise UsageError(
                "--labels", "needs --time: label records are placed by their time column."
            )
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
    # last of the checks, as it creates the folder; then the checkpoint, which may be
    # in that folder (removed again if the checkpoint is refused)
    created = [] if args.out is None else _check_out(args.out)
    if args.checkpoint is not None:
        others = [] if stdin else [("the log (LOG)", log)]
        if args.labels is not None:
            others.append(("the --labels file", args.labels))
        if args.out is not None:
            others += [
                ("a file of the --out report", os.path.join(args.out, name))
                for name in ("index.html", "summary.json")
            ]
        try:
            _check_checkpoint(args.checkpoint, others)
        except UsageError:
            _remove_folders(created)
            raise

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
        "checkpoint_share": args.checkpoint_share if args.checkpoint else None,
        "resume": args.resume,
        "on_error": args.on_error,
    }
    if delimiter is not None:  # passed only when given (older replays lack it)
        kwargs["delimiter"] = delimiter
    if args.format is not None:
        kwargs["format"] = args.format
    if args.threads is not None:
        kwargs["threads"] = args.threads
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


def _print_errors(result, prog: str, shown: int = 5, report: bool = False) -> None:
    """The first ``shown`` malformed rows, then how many more (of all those skipped:
    ``result.errors`` keeps only the first ``max_errors``, listed in the summary.json
    of the report when ``report``: one is written)."""
    for line, message in result.errors[:shown]:
        print(f"  skipped line {line}: {message}", file=sys.stderr)
    listed = min(len(result.errors), shown)
    if result.n_skipped > listed:
        kept = ""
        if len(result.errors) > listed:
            which = (
                "all" if len(result.errors) >= result.n_skipped
                else f"the first {len(result.errors):,}"
            )
            kept = (
                f"; {which} are listed in summary.json"
                if report
                else f"; --out DIR lists {which} in summary.json"
            )
        print(
            f"  ... and {result.n_skipped - listed:,} more malformed rows "
            f"({result.n_skipped:,} skipped{kept})",
            file=sys.stderr,
        )


# the arguments of streamcal.replay that the options of the command set
_OPTIONS = {
    "events": "LOG",
    "score": "--score",
    "label": "--label",
    "time": "--time",
    "label_time": "--label-time",
    "id": "--id",
    "labels": "--labels",
    "calibrators": "--calibrator",
    "metrics": "--metric",
    "window": "--window",
    "every": "--every",
    "format": "--format",
    "delimiter": "--delimiter",
    "checkpoint": "--checkpoint",
    "checkpoint_every": "--checkpoint-every",
    "checkpoint_share": "--checkpoint-share",
    "resume": "--resume",
    "threads": "--threads",
    "on_error": "--on-error",
}


def _options_named(message: str) -> str:
    """A message of :func:`streamcal.replay` about its arguments, naming the command's
    options instead ("The 'id' and 'labels' arguments of replay" -> "The --id and
    --labels options"); other messages unchanged."""
    import re

    def option(name: str) -> str | None:
        return _OPTIONS.get(name)

    def pair(m):
        a, b = option(m.group(1)), option(m.group(2))
        return f"The {a} and {b} options" if a and b else m.group(0)

    def one(m):
        a = option(m.group(1))
        return f"The {a} option" if a else m.group(0)

    text = re.sub(r"The '(\w+)' and '(\w+)' arguments of replay", pair, message)
    text = re.sub(r"The '(\w+)' (?:argument|parameter) of replay", one, text)
    text = re.sub(  # "Delayed labels need the events' 'time' column"
        r"the events' '(\w+)' column",
        lambda m: f"the events' {option(m.group(1))} column" if option(m.group(1)) else m.group(0),
        text,
    )
    if text != message:  # the arguments named in parentheses, as "(labels)"
        text = re.sub(
            r"\((\w+)\)", lambda m: f"({option(m.group(1)) or m.group(1)})", text
        )
    return text


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
    if "threads" in kwargs and not _accepts(replay, "threads"):
        _remove_folders(created)
        raise UsageError("--threads", "this version of streamcal.replay cannot set it.")
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
        print(f"{prog}: error: {_options_named(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        if progress:
            progress.close()
    elapsed = time.perf_counter() - start
    stopped = bool(getattr(result, "stopped", False))

    print(f"streamcal replay: {shown}" + (" (interrupted)" if stopped else ""))
    _print_counts(result, elapsed, sys.stdout)
    # the report (and its summary.json) is written unless nothing was learnt or stopped
    _print_errors(
        result, prog, report=args.out is not None and result.n_learnt > 0 and not stopped
    )
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
                and (k not in ("checkpoint_every", "checkpoint_share") or kwargs["checkpoint"])
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

    # every row read, event rows and label records (older replays: the events only)
    rows = getattr(result, "n_rows", None)
    if rows is None:
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

