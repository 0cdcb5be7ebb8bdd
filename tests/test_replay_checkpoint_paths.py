"""A checkpoint path that names an input of the replay (the log, the label records) or a
file of the --out report is refused before anything is written: it overwrote the log
with a JSON checkpoint, silently."""

from __future__ import annotations

import os

import pytest

from streamcal import OnlinePlatt, replay
from streamcal.cli import main

from tests.test_cli_replay import write_log


def _refused(capsys, argv, name):
    assert main(argv) == 2, argv
    captured = capsys.readouterr()
    assert "argument --checkpoint" in captured.err, captured.err
    assert name in captured.err and "Traceback" not in captured.err
    assert "calibrator" not in captured.out  # nothing replayed


def test_checkpoint_on_the_log_is_a_usage_error_and_the_log_is_kept(tmp_path, capsys):
    log = tmp_path / "victim.csv"
    write_log(log, n=50)
    before = log.read_bytes()
    _refused(
        capsys, ["replay", str(log), "--calibrator", "platt", "--checkpoint", str(log)],
        "the log (LOG)",
    )
    # the same file by another spelling, or through a symlink either way
    os.symlink(log, tmp_path / "link.csv")
    sub = tmp_path / "sub"
    sub.mkdir()
    for log_arg, ckpt in (
        (str(log), str(sub / ".." / "victim.csv")),
        (str(log), str(tmp_path / "link.csv")),
        (str(tmp_path / "link.csv"), str(log)),
    ):
        _refused(
            capsys,
            ["replay", log_arg, "--calibrator", "platt", "--checkpoint", ckpt, "--resume"],
            "the log (LOG)",
        )
    assert log.read_bytes() == before
    assert os.path.islink(tmp_path / "link.csv")
    assert sorted(os.listdir(tmp_path)) == ["link.csv", "sub", "victim.csv"]


def test_checkpoint_on_the_labels_or_the_report_is_a_usage_error(tmp_path, capsys):
    log = tmp_path / "log.csv"
    write_log(log, n=20)
    labels = tmp_path / "labels.csv"
    labels.write_text("time,label,t\n0,1,3\n")
    before = labels.read_bytes()
    _refused(
        capsys,
        ["replay", str(log), "--time", "time", "--id", "time", "--labels", str(labels),
         "--calibrator", "platt", "--checkpoint", str(labels)],
        "the --labels file",
    )
    assert labels.read_bytes() == before
    out = tmp_path / "rep"
    for name in ("summary.json", "index.html"):
        _refused(
            capsys,
            ["replay", str(log), "--calibrator", "platt", "--out", str(out),
             "--checkpoint", str(out / name)],
            "a file of the --out report",
        )
    assert not out.exists()  # refused before the report folder was created
    # a checkpoint beside them is fine
    out.mkdir()
    assert main(["replay", str(log), "--calibrator", "platt", "--out", str(out),
                 "--checkpoint", str(out / "state.json")]) == 0
    capsys.readouterr()
    assert (out / "state.json").exists() and (out / "summary.json").exists()


def test_replay_refuses_a_checkpoint_that_is_its_log(tmp_path):
    log = tmp_path / "log.csv"
    write_log(log, n=20)
    os.symlink(log, tmp_path / "link.csv")
    before = log.read_bytes()
    for ckpt in (log, str(tmp_path / "link.csv")):
        with pytest.raises(ValueError, match="'checkpoint' argument of replay must be another file"):
            replay(str(log), {"platt": OnlinePlatt()}, checkpoint=ckpt, checkpoint_every=5)
    labels = tmp_path / "labels.csv"
    labels.write_text("time,label,t\n0,1,3\n")
    with pytest.raises(ValueError, match="than the labels log"):
        replay(str(log), {"platt": OnlinePlatt()}, time="time", id="time",
               labels=str(labels), checkpoint=str(labels))
    assert log.read_bytes() == before
    assert labels.read_text() == "time,label,t\n0,1,3\n"
