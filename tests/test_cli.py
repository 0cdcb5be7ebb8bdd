"""The ``streamcal`` command (streamcal.cli)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from streamcal import OnlineIsotonic
from streamcal.cli import main
from streamcal.datasets import miscalibrated_rain_forecasts
from streamcal.metrics import brier_score, expected_calibration_error


def table_row(out: str, prefix: str) -> list[float]:
    """The four numbers (Brier raw, calibrated; ECE raw, calibrated) of a table row."""
    [line] = [line for line in out.splitlines() if line.startswith(prefix)]
    numbers = re.findall(r"\d+\.\d{4}", line)
    assert len(numbers) == 4, line
    return [float(x) for x in numbers]


def test_demo_prints_the_table_and_calibration_helps(capsys):
    n = 3000
    assert main(["demo", "--n", str(n)]) == 0
    out = capsys.readouterr().out
    for piece in ["OnlineIsotonic()", "prequential", "Brier score", "ECE (10 bins)", "raw",
                  "calibrated", "PAV blocks at the end:", "events/s"]:
        assert piece in out
    [data_line] = [line for line in out.splitlines() if line.startswith("data:")]
    assert "3,000 days" in data_line and "rain" in data_line

    whole = table_row(out, "whole stream (3,000)")
    second = table_row(out, "second half (1,500)")
    brier_raw, brier_cal, ece_raw, ece_cal = second
    # the forecaster is over-confident: recalibration must cut the ECE after warm-up
    assert ece_cal < ece_raw
    assert ece_cal < 0.5 * ece_raw
    assert brier_cal < brier_raw

    # the table reports what it claims: recompute the numbers independently
    scores, labels = miscalibrated_rain_forecasts(n=n, seed=0)
    cal, preds = OnlineIsotonic(), []
    for s, y in zip(scores.tolist(), labels.tolist()):
        preds.append(cal.predict_one(s))
        cal.learn_one(s, y)
    for row, part in [(whole, slice(None)), (second, slice(n // 2, None))]:
        expected = [
            brier_score(labels[part], scores[part]),
            brier_score(labels[part], preds[part]),
            expected_calibration_error(labels[part], scores[part], n_bins=10),
            expected_calibration_error(labels[part], preds[part], n_bins=10),
        ]
        assert row == pytest.approx(expected, abs=5.1e-5)
    blocks = int(re.search(r"PAV blocks at the end: (\d+)", out).group(1))
    assert blocks == len(cal.blocks)


def test_demo_options(capsys):
    assert main(["demo", "--n", "400", "--seed", "3", "--window", "100"]) == 0
    out = capsys.readouterr().out
    assert "OnlineIsotonic(window_size=100)" in out
    assert "seed=3" in out
    assert "second half (200)" in out


def test_demo_is_deterministic_apart_from_timing(capsys):
    main(["demo", "--n", "500", "--seed", "1"])
    first = capsys.readouterr().out
    main(["demo", "--n", "500", "--seed", "1"])
    second = capsys.readouterr().out
    strip = lambda text: [line for line in text.splitlines() if not line.startswith("throughput")]  # noqa: E731
    assert strip(first) == strip(second)


def test_no_subcommand_prints_help_and_returns_2(capsys):
    assert main([]) == 2
    captured = capsys.readouterr()
    assert "usage: streamcal" in captured.err
    assert "demo" in captured.err
    assert captured.out == ""


@pytest.mark.parametrize(
    "argv, piece",
    [
        (["demo", "--n", "1"], "--n: must be an int >= 2. Got 1 instead."),
        (["demo", "--n", "many"], "--n: must be an int >= 2. Got 'many' instead."),
        (["demo", "--window", "0"], "--window: must be an int >= 1"),
        (["demo", "--seed", "-1"], "--seed: must be an int >= 0"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
)
def test_usage_errors_return_2(capsys, argv, piece):
    assert main(argv) == 2
    assert piece in capsys.readouterr().err


def test_help_returns_0(capsys):
    assert main(["--help"]) == 0
    assert "demo" in capsys.readouterr().out
    assert main(["demo", "--help"]) == 0
    assert "--window" in capsys.readouterr().out


def test_python_dash_m_streamcal():
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    done = subprocess.run(
        [sys.executable, "-m", "streamcal", "demo", "--n", "300"],
        capture_output=True, text=True, timeout=120, env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "second half (150)" in done.stdout
    done = subprocess.run([sys.executable, "-m", "streamcal"], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 2
    assert "usage: streamcal" in done.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["demo"],
        ["replay", "log.csv"],
        ["simulate", "--list"],
        ["consume", "--redis", "u", "--events", "e", "--labels", "l", "--out", "o"],
    ],
)
def test_every_command_carries_its_handler_and_subparser(argv):
    # cli._add_command: one place gives each subparser the handler main() runs and the
    # subparser it reports usage errors with
    import streamcal.cli as cli

    args = cli.build_parser().parse_args(argv)
    assert args.handler is getattr(cli, f"_{argv[0]}")
    assert args.subparser.prog == f"streamcal {argv[0]}"
