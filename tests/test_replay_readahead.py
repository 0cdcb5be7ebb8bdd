"""The replay's read-ahead thread (streamcal/replay/_readahead.py): the chunks in order,
a reader's error raised in the engine's thread after the chunks before it, the thread
stopped and joined on every way out (end, error, stop hook, KeyboardInterrupt), and the
engine's results the same with and without it."""

from __future__ import annotations

import sys
import threading

import pytest

from streamcal import OnlineIsotonic, OnlinePlatt, ReplayError, replay
from streamcal.replay._readahead import ReadAhead
from tests.test_replay import make_events


def _readers() -> list:
    return [t for t in threading.enumerate() if t.name == "streamcal-replay-reader"]


@pytest.mark.parametrize("depth", [1, 2])
def test_items_in_order(depth):
    with ReadAhead((k * k for k in range(200)), depth) as chunks:
        got = list(chunks)
    assert got == [k * k for k in range(200)]
    assert not _readers()


def test_depth_is_checked():
    with pytest.raises(ValueError, match="'depth' parameter of ReadAhead.*Got 0"):
        ReadAhead(iter([]), 0)
    with pytest.raises(ValueError, match="'depth'.*Got 1.5"):
        ReadAhead(iter([]), 1.5)


def test_error_in_a_later_chunk_while_an_earlier_one_is_processed():
    """The reader raises while the consumer still holds the chunk before: the consumer
    gets that chunk's successors in order, then the same exception object."""
    error = OSError("line 9: disk gone")
    raised = threading.Event()

    def chunks():
        yield from range(4)
        raised.set()
        raise error

    seen = []
    with ReadAhead(chunks()) as ahead:
        with pytest.raises(OSError) as info:
            for c in ahead:
                if c == 3:
                    # the reader reaches its error while chunk 3 is being processed
                    assert raised.wait(10.0)
                seen.append(c)
    assert seen == [0, 1, 2, 3]
    assert info.value is error
    assert str(info.value) == "line 9: disk gone"
    assert not _readers()


def test_close_stops_a_reader_waiting_on_a_full_queue():
    made = []

    def endless():
        k = 0
        while True:
            made.append(k)
            yield k
            k += 1

    interval = sys.getswitchinterval()
    ahead = ReadAhead(endless(), 2)
    assert [next(ahead), next(ahead)] == [0, 1]
    ahead.close()
    assert not _readers()
    assert len(made) <= 2 + 2 + 1  # consumed, queued, the one waiting to be queued
    assert sys.getswitchinterval() == interval
    with pytest.raises(StopIteration):
        next(ahead)


def test_keyboard_interrupt_in_the_consumer_joins_the_thread():
    interval = sys.getswitchinterval()
    with pytest.raises(KeyboardInterrupt):
        with ReadAhead(iter(range(10**9))) as ahead:
            for c in ahead:
                if c == 5:
                    raise KeyboardInterrupt
    assert not _readers()
    assert sys.getswitchinterval() == interval


@pytest.mark.parametrize("order", ["first-closes-first", "last-closes-first"])
def test_readers_open_at_once_put_the_switch_interval_back(order):
    """Replays in several threads of one process: the interval is the process's, and
    it comes back to what it was before the first reader, whatever the closing order."""
    interval = sys.getswitchinterval()
    a = ReadAhead(iter(range(3)))
    lowered = sys.getswitchinterval()
    b = ReadAhead(iter(range(3)))
    assert sys.getswitchinterval() == lowered <= interval
    first, second = (a, b) if order == "first-closes-first" else (b, a)
    first.close()
    assert sys.getswitchinterval() == lowered  # the other reader still runs
    first.close()  # closing twice counts once
    assert sys.getswitchinterval() == lowered
    second.close()
    assert sys.getswitchinterval() == interval
    assert not _readers()


# ---------------------------------------------------------------------- in the engine


def _log(tmp_path, n=4000, bad=()):
    lines = ["score,label"] + [f"{s!r},{y}" for s, y in make_events(n, 5)]
    for k in bad:
        lines[k] = "0.5,maybe"
    path = tmp_path / "log.csv"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _small_blocks(monkeypatch):
    pytest.importorskip("pyarrow")
    from streamcal.replay import _fastcsv

    monkeypatch.setattr(_fastcsv, "BLOCK_BYTES", 1999)  # many blocks
    monkeypatch.setattr(_fastcsv, "MIN_BYTES", 0)


def _cals():
    return {"grid": OnlineIsotonic(resolution=1e-3), "iso": OnlineIsotonic(), "platt": OnlinePlatt()}


def _both(monkeypatch, run):
    """``run()`` with the blocks read ahead in a thread, then in the engine's thread."""
    from streamcal.replay import _engine

    out = []
    for ahead in (1, 0):
        monkeypatch.setattr(_engine, "READ_AHEAD", ahead)
        out.append(run())
        assert not _readers()
    return out


def test_same_results_with_and_without_the_thread(tmp_path, monkeypatch):
    """Malformed rows in later blocks (skipped, reported in order with their line
    numbers), the grid store's pass without the GIL, samples and checkpoints."""
    _small_blocks(monkeypatch)
    log = _log(tmp_path, bad=(700, 1500, 3999))
    ckpt = tmp_path / "c.json"

    def run():
        r = replay(log, _cals(), every=300, checkpoint=str(ckpt), checkpoint_every=900)
        return r.to_dict(), ckpt.read_text()

    (threaded, ck1), (inline, ck0) = _both(monkeypatch, run)
    assert threaded == inline
    assert ck1 == ck0
    assert [line for line, _ in threaded["errors"]] == [700 + 1, 1500 + 1, 3999 + 1]
    assert threaded["n_events"] == 4000 - 3


def test_a_reader_error_in_a_later_block_surfaces_with_its_message(tmp_path, monkeypatch):
    _small_blocks(monkeypatch)
    from streamcal.replay import _fastcsv

    log = _log(tmp_path)
    plain = _fastcsv.FastCsv._plain
    calls = []

    def failing(self, block):
        calls.append(len(block))
        if len(calls) == 5:
            raise OSError("Input/output error reading block 5")
        return plain(self, block)

    monkeypatch.setattr(_fastcsv.FastCsv, "_plain", failing)

    def run():
        calls.clear()
        with pytest.raises(OSError) as info:
            replay(log, _cals())
        return str(info.value), len(calls)

    (msg1, n1), (msg0, n0) = _both(monkeypatch, run)
    assert msg1 == msg0 == "Input/output error reading block 5"
    assert n1 == n0 == 5  # no block read past the error


def test_a_malformed_row_that_stops_the_replay_while_the_next_block_is_read(tmp_path, monkeypatch):
    _small_blocks(monkeypatch)
    log = _log(tmp_path, bad=(120,))

    def run():
        with pytest.raises(ReplayError) as info:
            replay(log, _cals(), on_error="raise")
        return str(info.value)

    threaded, inline = _both(monkeypatch, run)
    assert threaded == inline
    assert "line 121" in threaded


def test_a_stop_hook_stops_the_reader(tmp_path, monkeypatch):
    _small_blocks(monkeypatch)
    log = _log(tmp_path)

    def run():
        polls = []

        def stop():
            polls.append(bool(_readers()))  # whether a reader thread runs meanwhile
            return len(polls) > 3

        return replay(log, _cals(), every=100, stop=stop).to_dict(), any(polls)

    (threaded, used1), (inline, used0) = _both(monkeypatch, run)
    assert threaded == inline
    assert 0 < threaded["n_events"] < 4000
    assert used1 and not used0


def test_a_reader_that_cannot_start_puts_the_switch_interval_back(monkeypatch):
    interval = sys.getswitchinterval()

    def refuse(self):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)
    with pytest.raises(RuntimeError, match="can't start"):
        ReadAhead(iter(range(3)))
    monkeypatch.undo()
    assert sys.getswitchinterval() == interval
    with ReadAhead(iter(range(3))) as ahead:  # the count is right for the next ones
        assert list(ahead) == [0, 1, 2]
    assert sys.getswitchinterval() == interval
