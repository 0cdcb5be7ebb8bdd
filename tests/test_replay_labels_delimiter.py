"""``--delimiter`` is the log's: the --labels file is read by its own suffix (the help
says so). The command checked the label file's header with the log's delimiter, so a
';' log with a comma labels file was refused ("no column 'id'")."""

from __future__ import annotations

import pytest

from streamcal.cli import main


@pytest.mark.parametrize(
    "name, text",
    [("labels.csv", "id,label,t\n1,0,5\n2,1,5\n"),
     ("labels.tsv", "id\tlabel\tt\n1\t0\t5\n2\t1\t5\n")],
)
@pytest.mark.parametrize("delimiter", [";", "|", "\\t"])
def test_labels_are_read_by_their_suffix_whatever_the_log_delimiter(
    name, text, delimiter, tmp_path, capsys
):
    sep = "\t" if delimiter == "\\t" else delimiter
    log = tmp_path / "ev.txt"
    log.write_text(f"id{sep}score{sep}t\n1{sep}0.2{sep}1\n2{sep}0.7{sep}2\n")
    labels = tmp_path / name
    labels.write_text(text)
    argv = ["replay", str(log), "--format", "csv", "--delimiter", delimiter, "--time", "t",
            "--id", "id", "--labels", str(labels), "--calibrator", "platt"]
    assert main(argv) == 0, capsys.readouterr().err
    assert "2 events, 2 learnt, 0 malformed rows skipped" in capsys.readouterr().out


def test_a_misspelt_label_column_is_still_a_usage_error(tmp_path, capsys):
    log = tmp_path / "ev.txt"
    log.write_text("id;score;t\n1;0.2;1\n")
    labels = tmp_path / "labels.csv"
    labels.write_text("key,label,t\n1,0,5\n")
    argv = ["replay", str(log), "--format", "csv", "--delimiter", ";", "--time", "t",
            "--id", "id", "--labels", str(labels), "--calibrator", "platt"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "argument --labels: no column 'id'" in err and "Its columns: key, label, t." in err
