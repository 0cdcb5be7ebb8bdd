"""A checkpoint is sealed by a checksum that a resume verifies: a checkpoint edited or
damaged after it was written (one number of a metric's state) was resumed silently,
with wrong results. Checkpoints without a checksum (earlier versions) still resume."""

from __future__ import annotations

import json

import pytest

from streamcal import OnlinePlatt, replay
from streamcal.cli import main

from tests.test_cli_replay import write_log
from tests.test_replay_engine import _replay_until


@pytest.fixture
def interrupted(tmp_path):
    """A log, the checkpoint of a replay stopped after 200 of its 600 events, the
    replay's options and its uninterrupted result."""
    log = tmp_path / "log.csv"
    write_log(log, n=600)
    ckpt = tmp_path / "state.json"
    kw = {"checkpoint": str(ckpt), "checkpoint_every": 100, "every": 100}
    _replay_until(200, str(log), {"platt": OnlinePlatt()}, **kw)
    fresh = replay(str(log), {"platt": OnlinePlatt()}, every=100)
    return log, ckpt, kw, fresh.to_dict()


def _resume(log, kw):
    return replay(str(log), {"platt": OnlinePlatt()}, resume=True, **kw).to_dict()


def test_a_checkpoint_ends_with_its_checksum(interrupted):
    _, ckpt, _, _ = interrupted
    text = ckpt.read_text()
    saved = json.loads(text)
    assert list(saved)[-1] == "checksum" and len(saved["checksum"]) == 64
    assert json.dumps(saved) == text  # json's defaults give back the same text


def _edit_metric(saved):
    saved["metrics"]["raw"]["brier"]["state"]["total"] *= 3


def _edit_calibrator(saved):
    saved["calibrators"]["platt"]["state"]["core"][0][0] += 1e-9


@pytest.mark.parametrize("edit", [_edit_metric, _edit_calibrator])
def test_an_edited_checkpoint_is_refused_naming_it(edit, interrupted):
    log, ckpt, kw, _ = interrupted
    saved = json.loads(ckpt.read_text())
    edit(saved)
    damaged = json.dumps(saved)
    ckpt.write_text(damaged)
    with pytest.raises(ValueError, match="does not match its checksum") as info:
        _resume(log, kw)
    assert repr(str(ckpt)) in str(info.value)
    assert ckpt.read_text() == damaged  # refused before anything was written


def test_damaged_bytes_or_a_malformed_checksum_are_refused(interrupted):
    log, ckpt, kw, _ = interrupted
    written = ckpt.read_text()
    pos = written.index('"n_skipped": 0') + len('"n_skipped": ')
    ckpt.write_text(written[:pos] + "1" + written[pos + 1:])
    with pytest.raises(ValueError, match="does not match its checksum"):
        _resume(log, kw)
    saved = json.loads(written)
    saved["checksum"] = "not a checksum"
    ckpt.write_text(json.dumps(saved))
    with pytest.raises(ValueError, match="has a malformed checksum"):
        _resume(log, kw)
    # the same document in another spacing: its text is not the one sealed
    ckpt.write_text(json.dumps(json.loads(written), indent=1))
    with pytest.raises(ValueError, match="does not match its checksum"):
        _resume(log, kw)


def test_intact_and_checksum_less_checkpoints_resume(interrupted):
    log, ckpt, kw, fresh = interrupted
    written = ckpt.read_text()
    ckpt.write_text(written + "\n")  # a final line break changes nothing
    assert _resume(log, kw) == fresh
    # a checkpoint of an earlier version: no checksum entry
    saved = json.loads(written)
    del saved["checksum"]
    ckpt.write_text(json.dumps(saved))
    assert _resume(log, kw) == fresh
    # the resumed run's own checkpoints are sealed again
    assert "checksum" in json.loads(ckpt.read_text())


def test_the_command_refuses_an_edited_checkpoint(tmp_path, capsys):
    log = tmp_path / "log.csv"
    write_log(log, n=300)
    ckpt = tmp_path / "state.json"
    argv = ["replay", str(log), "--calibrator", "platt", "--checkpoint", str(ckpt),
            "--checkpoint-every", "100"]
    assert main(argv) == 0
    intact = capsys.readouterr().out
    saved = json.loads(ckpt.read_text())
    _edit_metric(saved)
    ckpt.write_text(json.dumps(saved))
    assert main(argv + ["--resume"]) == 2
    captured = capsys.readouterr()
    assert "calibrator" not in captured.out  # no table
    assert str(ckpt) in captured.err and "does not match its checksum" in captured.err
    del saved["checksum"]  # the edit stays, but an earlier version's file is not checked
    saved["metrics"]["raw"]["brier"]["state"]["total"] /= 6  # (a sum no events can give,
    ckpt.write_text(json.dumps(saved))  # such as 3x, is refused by the metric's invariants)
    assert main(argv + ["--resume"]) == 0
    assert capsys.readouterr().out.splitlines()[3:] != intact.splitlines()[3:]
