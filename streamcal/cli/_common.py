"""Shared pieces of the ``streamcal`` command: exit codes, the parser class, usage
errors and the argument types argparse calls."""

from __future__ import annotations

import argparse
import math

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


def _share(text: str) -> float:
    """A fraction in (0, 1]: ``--checkpoint-share``."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(
            "must be a fraction in (0, 1] (0.1: at most about 10% of the time spent "
            f"writing checkpoints; 1: no limit). Got {text!r} instead."
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
