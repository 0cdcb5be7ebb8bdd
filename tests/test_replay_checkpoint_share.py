"""Periodic checkpoints take a bounded share of the run: a state growing with the log
(exact isotonic calibrators) made writing it every --checkpoint-every events cost
quadratic time (a 10^6-row log: 197 s with --checkpoint against 8 s without). A write is
now skipped while the time since the last one is under (1 - share) / share times its
duration; the end of the log and a stop still write, and the results do not change."""

from __future__ import annotations

import json
import types

import pytest

from streamcal import OnlineIsotonic, OnlinePlatt, replay
from streamcal.cli import main
from streamcal.replay import _engine, _setup

from tests.test_cli_replay import write_log


def _rows(n):
    return [
        {"t": i, "lt": i + 1 + i % 7, "score": (i * 37 % 100) / 100, "label": i * 13 % 3 % 2}
        for i in range(n)
    ]


@pytest.fixture
def clock(monkeypatch):
    """A fake clock: every mark (100 events here) takes 0.1 s, every write 1 s; the
    writes are listed (the clock after each)."""
    now = [0.0]
    writes = []
    monkeypatch.setattr(_setup, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
    write = _setup.write_atomic

    def slow_write(path, text):
        now[0] += 1.0
        writes.append(now[0])
        write(path, text)

    monkeypatch.setattr(_setup, "write_atomic", slow_write)
    mark = _engine.ColumnarReplay._mark

    def timed_mark(self, row):
        now[0] += 0.1
        return mark(self, row)

    monkeypatch.setattr(_engine.ColumnarReplay, "_mark", timed_mark)
    return now, writes


def _run(path, checkpoint_share=0.1, **kw):
    return replay(
        _rows(10_000), {"iso": OnlineIsotonic(), "platt": OnlinePlatt()}, ["brier"],
        time="t", label_time="lt", every=None, checkpoint=str(path),
        checkpoint_every=100, checkpoint_share=checkpoint_share, **kw,
    )


def test_writes_take_at_most_about_the_share(tmp_path, clock):
    now, writes = clock
    result = _run(tmp_path / "a.json")
    # 100 marks of 0.1 s: 10 s of replay. The first mark writes (1 s), the next write
    # waits 9 s (90 marks), then the end of the log writes
    assert len(writes) == 3, writes
    assert result.n_events == 10_000
    del writes[:]
    fixed = _run(tmp_path / "b.json", checkpoint_share=1)
    assert len(writes) == 101  # every 100 events, and the end
    assert fixed.summary == result.summary
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    del writes[:]
    replay(  # replay()'s default: every checkpoint_every events
        _rows(10_000), {"iso": OnlineIsotonic()}, ["brier"], time="t", label_time="lt",
        every=None, checkpoint=str(tmp_path / "c.json"), checkpoint_every=100,
    )
    assert len(writes) == 101


@pytest.mark.parametrize("share", [0, -0.1, 1.5, "x"])
def test_bad_share_is_refused(share, tmp_path):
    with pytest.raises((ValueError, TypeError), match="'checkpoint_share' argument of replay"):
        _run(tmp_path / "a.json", checkpoint_share=share)


def test_resume_after_a_stop_equals_the_whole_run(tmp_path):
    # the command's share, real time: wherever the checkpoints fell, a stop writes one
    # and resuming from it gives the uninterrupted result
    rows = _rows(20_000)
    whole = replay(rows, {"iso": OnlineIsotonic()}, ["brier", "ece"], time="t",
                   label_time="lt", every=500)
    ckpt = tmp_path / "c.json"
    calls = [0]

    def stop():
        calls[0] += 1
        return calls[0] == 2

    first = replay(rows, {"iso": OnlineIsotonic()}, ["brier", "ece"], time="t",
                   label_time="lt", every=500, checkpoint=str(ckpt), checkpoint_every=300,
                   checkpoint_share=0.1, stop=stop)
    assert first.stopped and first.n_events < 20_000
    resumed = replay(rows, {"iso": OnlineIsotonic()}, ["brier", "ece"], time="t",
                     label_time="lt", every=500, checkpoint=str(ckpt), checkpoint_every=300,
                     checkpoint_share=0.1, resume=True)
    assert json.dumps(resumed.summary) == json.dumps(whole.summary)
    assert resumed.series == whole.series


def test_cli_checkpoint_share(tmp_path, capsys):
    log = tmp_path / "log.csv"
    write_log(log, n=300)
    base = ["replay", str(log), "--calibrator", "platt", "--no-progress"]
    ckpt = ["--checkpoint", str(tmp_path / "c.json")]
    assert main([*base, *ckpt, "--checkpoint-share", "0"]) == 2
    err = capsys.readouterr().err
    assert "argument --checkpoint-share: must be a fraction in (0, 1]" in err and "'0'" in err
    out = tmp_path / "report"
    assert main([*base, *ckpt, "--checkpoint-share", "1", "--out", str(out)]) == 0
    options = json.loads((out / "summary.json").read_text())["options"]
    assert options["checkpoint_share"] == 1.0 and options["checkpoint_every"] == 10_000
    out2 = tmp_path / "report2"
    assert main([*base, *ckpt, "--out", str(out2)]) == 0  # the command's default
    assert json.loads((out2 / "summary.json").read_text())["options"]["checkpoint_share"] == 0.1
    capsys.readouterr()
    assert main(["replay", "--help"]) == 0
    assert "--checkpoint-share FRACTION" in capsys.readouterr().out
