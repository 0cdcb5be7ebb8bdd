"""Small defects of ``streamcal replay``'s checks and messages, each with its regression
test."""

from __future__ import annotations

import gzip

import pytest

from streamcal.cli import main

from tests.test_cli_replay import write_log


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "log.csv"
    write_log(path, n=200)
    return str(path)


def _usage(capsys, argv):
    assert main(argv) == 2, argv
    captured = capsys.readouterr()
    assert captured.out == "" and "usage: streamcal replay" in captured.err
    return captured.err


@pytest.mark.parametrize(
    "specs, option, message",
    [
        (
            ["--calibrator", "isotonic", "isotonic:prior_strength=0",
             "isotonic:prior_strength=0.0"],
            "--calibrator",
            "'isotonic:prior_strength=0' is given twice (it builds the same calibrator "
            "as 'isotonic').",
        ),
        (
            ["--calibrator", "isotonic:prior_strength=0.0", "isotonic:prior_strength=0"],
            "--calibrator",
            "'isotonic:prior_strength=0' is given twice (it builds the same calibrator "
            "as 'isotonic:prior_strength=0.0').",
        ),
        (
            ["--calibrator", "tops", "tracking:base=platt"],
            "--calibrator",
            "'tracking:base=platt' is given twice (it builds the same calibrator as 'tops').",
        ),
        (
            ["--metric", "ece", "ece:n_bins=10"],
            "--metric",
            "'ece:n_bins=10' is given twice (it builds the same metric as 'ece').",
        ),
    ],
)
def test_equivalent_specs_are_duplicates(log, capsys, specs, option, message):
    err = _usage(capsys, ["replay", log, *specs])
    assert f"argument {option}: {message}" in err


def test_different_parameters_are_not_duplicates(log, capsys):
    argv = ["replay", log, "--calibrator", "isotonic", "isotonic:prior_strength=1",
            "--metric", "ece", "ece:n_bins=15", "--no-progress"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "isotonic:prior_strength=1" in out and "ece:n_bins=15" in out


@pytest.mark.parametrize("option", ["--score", "--label", "--time", "--label-time", "--id"])
@pytest.mark.parametrize("value", ["", " "])
def test_an_empty_column_option_is_a_usage_error(log, capsys, option, value):
    err = _usage(capsys, ["replay", log, option, value, "--calibrator", "platt"])
    assert f"argument {option}: must name a column of the log. Got {value!r} instead." in err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--id", "time"], "The --id and --labels options go together: label records "
         "(--labels) joined to the events by an id column (--id)."),
        (["--label-time", "time"], "Delayed labels need the events' --time column"),
        (["--score", "a,a", "--calibrator", "fir"],
         "The --score option must be columns naming distinct classes. Got ['a', 'a']"),
    ],
)
def test_messages_name_the_options(log, tmp_path, capsys, argv, message):
    if argv[0] == "--score":
        log = str(tmp_path / "classes.csv")
        with open(log, "w") as f:
            f.write("a,label\n0.5,a\n")
    err = _usage(capsys, ["replay", log, *argv])
    assert message in err
    assert "of replay" not in err


def test_delimiter_of_a_json_lines_log_names_the_option(tmp_path, capsys):
    path = tmp_path / "log.jsonl"
    path.write_text('{"score": 0.5, "label": 1}\n')
    err = _usage(capsys, ["replay", str(path), "--delimiter", ";"])
    assert "The --delimiter option applies to CSV and TSV logs only" in err


def _malformed_log(path):
    with open(path, "w") as f:
        f.write("score,label\n" + "x,1\n" * 20 + "0.4,1\n0.6,0\n" * 150)


def test_the_summary_json_hint_only_with_a_report(tmp_path, capsys):
    path = tmp_path / "m.csv"
    _malformed_log(path)
    base = ["replay", str(path), "--calibrator", "platt", "--no-progress",
            "--max-malformed", "1"]
    assert main(base) == 0
    err = capsys.readouterr().err
    assert "... and 15 more malformed rows (20 skipped; --out DIR lists all in summary.json)" in err
    assert "are listed in summary.json" not in err
    out = tmp_path / "report"
    assert main([*base, "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "(20 skipped; all are listed in summary.json)" in err
    assert (out / "summary.json").exists()


def test_a_gzip_crc_error_says_the_file_is_damaged(tmp_path, capsys):
    data = b"score,label\n" + b"0.4,1\n0.6,0\n" * 2000
    z = bytearray(gzip.compress(data))
    z[-8] ^= 0xFF  # the CRC-32 of the trailer
    path = tmp_path / "log.csv.gz"
    path.write_bytes(bytes(z))
    assert main(["replay", str(path), "--calibrator", "platt", "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "cannot read the log 'log.csv.gz': the file is damaged (CRC check failed 0x" in err
    assert "not a gzip file" not in err
    path.write_bytes(b"plain text, not gzip\n")
    assert main(["replay", str(path), "--calibrator", "platt", "--no-progress"]) == 1
    assert "it is not a gzip file" in capsys.readouterr().err


def test_a_checkpoint_in_the_out_folder_to_create(log, tmp_path, capsys):
    out = tmp_path / "new" / "report"
    ckpt = out / "state.json"
    argv = ["replay", log, "--calibrator", "platt", "--no-progress", "--out", str(out),
            "--checkpoint", str(ckpt)]
    assert main(argv) == 0, capsys.readouterr().err
    assert ckpt.exists() and (out / "summary.json").exists()
    capsys.readouterr()
    # a folder --out does not create is still refused, and the folders created are
    # removed again
    out2 = tmp_path / "other"
    argv = ["replay", log, "--calibrator", "platt", "--out", str(out2),
            "--checkpoint", str(out2 / "sub" / "state.json")]
    err = _usage(capsys, argv)
    assert "argument --checkpoint: cannot write the checkpoint" in err
    assert not out2.exists()
