"""The columnar replay engine against the per-event one (the oracle): the same results,
series, errors, calibrator and metric states and checkpoints, bit for bit, whatever the
chunk size; its fingerprint check on resume; its stop hook."""

from __future__ import annotations

import functools
import json
import random
import sys
import threading

import numpy as np
import pytest

from streamcal import (
    HistogramBinning,
    OnlineBeta,
    OnlineIsotonic,
    OnlinePlatt,
    ReplayError,
    TrackingCalibeater,
    VennAbers,
    replay,
)
from streamcal.base import BinaryCalibrator
from streamcal.replay import _engine
from streamcal.replay._engine import ColumnarReplay
from tests.references_replay import PerEventReplay as _Replay

from tests.references_replay import MixingCalibrator
from tests.test_replay import (
    ALL_BINARY,
    delayed_events,
    label_records,
    make_events,
    multiclass_events,
    state,
    write_csv,
)


class PlainCalibrator:
    """A user's calibrator with predict_one / learn_one only (run event by event)."""

    def __init__(self):
        self.n = 0
        self.s = 0.0

    def predict_one(self, x):
        return (self.s + 0.5) / (self.n + 1)

    def learn_one(self, x, y):
        self.n += 1
        self.s += y

    def to_dict(self):
        return {"class": "PlainCalibrator", "state": {"n": self.n, "s": self.s}}

    @classmethod
    def from_dict(cls, d):
        new = cls()
        new.n, new.s = d["state"]["n"], d["state"]["s"]
        return new


class _Stop(Exception):
    """Raised by :func:`_replay_until` to interrupt a replay."""


def _replay_until(n_stop, source, calibrators, **kw):
    """Run ``replay`` and interrupt it from its progress callback once it has read
    ``n_stop`` events or more (what it wrote before, its checkpoint, stays)."""

    def progress(n):
        if n >= n_stop:
            raise _Stop

    with pytest.raises(_Stop):
        replay(source, calibrators, progress=progress, **kw)


def cals(plain=False):
    out = {
        "isotonic": OnlineIsotonic(),
        "venn_abers": VennAbers(),
        "linear": OnlineIsotonic(interpolation="linear"),
        "window": OnlineIsotonic(window_size=30),
        "va_window": VennAbers(window_size=25),
        "grid": OnlineIsotonic(resolution=0.01, window_size=40),
        "platt": OnlinePlatt(),
        "histogram": HistogramBinning(n_bins=5),
        "tops": TrackingCalibeater(base=OnlinePlatt()),
    }
    if plain:
        out["plain"] = PlainCalibrator()
    return out


def run(engine, events, calibrators, chunk_rows=None, checkpoints=None, **kw):
    """One replay with ``engine``; with ``checkpoints`` (a list), every checkpoint state
    it writes is appended to it."""
    obj = engine(
        calibrators,
        kw.pop("metrics", ALL_BINARY),
        score=kw.pop("score", "score"),
        label=kw.pop("label", "label"),
        time=kw.pop("time", None),
        label_time=kw.pop("label_time", None),
        id=kw.pop("id", None),
        labels=kw.pop("labels", None),
        include_raw=kw.pop("include_raw", True),
        every=kw.pop("every", 1000),
        window=kw.pop("window", None),
        checkpoint=kw.pop("checkpoint", None),
        checkpoint_every=kw.pop("checkpoint_every", 10000),
        resume=False,
        on_error=kw.pop("on_error", "skip"),
        progress=None,
        keep_forecasts=kw.pop("keep_forecasts", False),
        max_errors=1000,
        **({"threads": kw.pop("threads")} if "threads" in kw else {}),
    )
    assert not kw, kw
    if chunk_rows is not None:
        obj.chunk_rows = chunk_rows
    if checkpoints is not None:
        save = obj._save_checkpoint

        def recording():
            state = obj._state()
            state.pop("fingerprint", None)
            checkpoints.append(json.loads(json.dumps(state)))
            save()

        obj._save_checkpoint = recording
    return obj.run(events)


def binary_rows(n, seed, bad=True):
    rows = [{"t": i // 3, "score": s, "label": y} for i, (s, y) in enumerate(make_events(n, seed))]
    if bad:
        rng = random.Random(seed)
        for i in rng.sample(range(n), n // 20):
            rows[i] = dict(rows[i], **rng.choice(
                [{"score": "x"}, {"score": 1.5}, {"label": 2}, {"score": float("nan")}, {"score": True}]
            ))
    return rows


def same(engine_kw, events_factory, plain=False, chunks=(1, 7, 64, 100000)):
    expected_ckpts = []
    expected = run(_Replay, events_factory(), cals(plain), checkpoints=expected_ckpts, **dict(engine_kw))
    # the calibrators of a run side by side in threads (None: one per CPU) or not: the
    # same results, forecasts and checkpoints
    # (every run through the pool, however short: POOL_RUN 1)
    for chunk_rows, threads in [(c, None) for c in chunks] + [(7, 1), (64, 4)]:
        ckpts = []
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_engine, "POOL_RUN", 1)
            got = run(ColumnarReplay, events_factory(), cals(plain), chunk_rows=chunk_rows, checkpoints=ckpts,
                      threads=threads, **dict(engine_kw))
        assert state(got) == state(expected), chunk_rows
        assert got.forecasts == expected.forecasts
        assert ckpts == expected_ckpts, chunk_rows


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"every": 10, "window": 25},
        {"every": 7, "keep_forecasts": True, "time": "t"},
        {"every": 50, "checkpoint": "CKPT", "checkpoint_every": 33},
    ],
    ids=["plain", "window", "forecasts", "checkpoints"],
)
def test_binary_labels_known_at_once(seed, kw, tmp_path):
    kw = {k: (str(tmp_path / "c.json") if v == "CKPT" else v) for k, v in kw.items()}
    same(kw, lambda: binary_rows(300, seed), plain=seed == 0)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("window", [None, 20])
def test_delayed_label_times(seed, window, tmp_path):
    events = delayed_events(250, seed)
    rows = [{"t": t, "lt": lt, "score": s, "label": y} for t, lt, s, y in events]
    rows[17]["score"] = "bad"
    rows[40]["t"] = -5  # out of time order
    kw = {"time": "t", "label_time": "lt", "window": window, "every": 9, "keep_forecasts": True,
          "checkpoint": str(tmp_path / "c.json"), "checkpoint_every": 31}
    same(kw, lambda: [dict(r) for r in rows], plain=True)


@pytest.mark.parametrize("seed", range(3))
def test_label_records_by_id(seed, tmp_path):
    events, labels = label_records(delayed_events(200, seed), seed)
    events[5]["id"] = events[4]["id"]  # a duplicate id while the first waits
    labels.append({"id": "nobody", "t": 10**6, "label": 1})
    kw = {"time": "t", "id": "id", "labels": labels, "every": 13, "window": 15,
          "checkpoint": str(tmp_path / "c.json"), "checkpoint_every": 29}
    same(kw, lambda: [dict(r) for r in events])


def test_multiclass():
    events = multiclass_events(200, 3)
    records = [{**{f"p_{c}": v for c, v in p.items()}, "y": y} for p, y in events]
    records[9]["p_rain"] = "?"
    score = {"rain": "p_rain", "snow": "p_snow", "dry": "p_dry"}

    def run_both(engine, chunk):
        return run(engine, [dict(r) for r in records], {"mix": MixingCalibrator()}, chunk_rows=chunk,
                   metrics=("brier", "log_loss", "ece"), score=score, label="y", every=11, window=17)

    expected = run_both(_Replay, None)
    for chunk in (1, 5, 1000):
        got = run_both(ColumnarReplay, chunk)
        assert got.to_dict() == expected.to_dict()
        assert got.calibrators["mix"].to_dict() == expected.calibrators["mix"].to_dict()


def test_raise_stops_at_the_row_with_the_state_before_it(tmp_path):
    rows = binary_rows(200, 5, bad=False)
    rows[123]["score"] = "nope"
    for engine, chunk in ((_Replay, None), (ColumnarReplay, 1), (ColumnarReplay, 50), (ColumnarReplay, 1000)):
        ckpts = []
        with pytest.raises(ValueError) as info:
            run(engine, [dict(r) for r in rows], cals(), chunk_rows=chunk, on_error="raise",
                checkpoint=str(tmp_path / "c.json"), checkpoint_every=1000, checkpoints=ckpts)
        assert info.value.line == 123 and ckpts[-1]["events_read"] == 123
        if engine is _Replay:
            expected = ckpts[-1]
        else:
            assert ckpts[-1] == expected


# ---------------------------------------------------------------------- resume checks


def test_resume_refuses_an_edited_or_another_log(tmp_path):
    path, ckpt = tmp_path / "log.csv", tmp_path / "state.json"
    events = make_events(400, 1)
    write_csv(path, ["score", "label"], events)
    kw = {"checkpoint": str(ckpt), "checkpoint_every": 100, "every": 100}

    _replay_until(200, str(path), {"iso": OnlineIsotonic()}, **kw)
    # labels flipped in the rows already replayed
    edited = [(s, 1 - y) if i == 50 else (s, y) for i, (s, y) in enumerate(events)]
    write_csv(path, ["score", "label"], edited)
    with pytest.raises(ValueError, match="fingerprint differs"):
        replay(str(path), {"iso": OnlineIsotonic()}, resume=True, **kw)
    # another log of the same length
    write_csv(path, ["score", "label"], make_events(400, 2))
    with pytest.raises(ValueError, match="fingerprint differs"):
        replay(str(path), {"iso": OnlineIsotonic()}, resume=True, **kw)
    # the log as it was, with rows appended: resumes
    write_csv(path, ["score", "label"], events + make_events(50, 3))
    resumed = replay(str(path), {"iso": OnlineIsotonic()}, resume=True, **kw)
    assert resumed.n_events == 450


def _id_logs(tmp_path, n, seed, bad_label_at=None):
    rng = random.Random(seed)
    events, labels = [], []
    for i in range(n):
        s = rng.random()
        events.append({"id": i, "score": s, "t": i})
        labels.append((str(i), "maybe" if i == bad_label_at else int(rng.random() < s), i + 3))
    ev, lab = tmp_path / "events.jsonl", tmp_path / "labels.csv"
    ev.write_text("".join(json.dumps(e) + "\n" for e in events))
    lab.write_text("id,label,t\n" + "".join(f"{a},{b},{c}\n" for a, b, c in labels))
    return ev, lab, labels


def test_resume_refuses_edited_label_records(tmp_path):
    """The checkpoint keeps a fingerprint of the label records consumed too (issue 12):
    resuming after one of them was edited is refused; unchanged, the resumed run equals
    an uninterrupted one; a malformed record that stopped the run can be fixed and the
    run resumed."""
    ev, lab, labels = _id_logs(tmp_path, 400, 4)
    ckpt = tmp_path / "state.json"
    kw = {"id": "id", "time": "t", "labels": str(lab), "checkpoint": str(ckpt),
          "checkpoint_every": 100, "every": 100}

    _replay_until(200, str(ev), {"platt": OnlinePlatt()}, **kw)
    saved = ckpt.read_bytes()
    fresh = replay(str(ev), {"platt": OnlinePlatt()}, **{k: v for k, v in kw.items() if k != "checkpoint"})
    resumed = replay(str(ev), {"platt": OnlinePlatt()}, resume=True, **kw)
    assert resumed.to_dict() == fresh.to_dict()
    ckpt.write_bytes(saved)
    edited = list(labels)
    edited[20] = (edited[20][0], 1 - edited[20][1], edited[20][2])
    lab.write_text("id,label,t\n" + "".join(f"{a},{b},{c}\n" for a, b, c in edited))
    with pytest.raises(ValueError, match="label records of labels.csv are not those"):
        replay(str(ev), {"platt": OnlinePlatt()}, resume=True, **kw)
    # a malformed record stops the run (on_error="raise"); fixed, the run resumes
    ev, lab, labels = _id_logs(tmp_path, 400, 5, bad_label_at=150)
    ckpt.unlink()
    with pytest.raises(ReplayError):
        replay(str(ev), {"platt": OnlinePlatt()}, on_error="raise", **kw)
    fixed = [(a, 0 if b == "maybe" else b, c) for a, b, c in labels]
    lab.write_text("id,label,t\n" + "".join(f"{a},{b},{c}\n" for a, b, c in fixed))
    resumed = replay(str(ev), {"platt": OnlinePlatt()}, resume=True, on_error="raise", **kw)
    fresh = replay(str(ev), {"platt": OnlinePlatt()}, **{k: v for k, v in kw.items() if k != "checkpoint"})
    assert resumed.to_dict() == fresh.to_dict()


def test_resume_refuses_parameters_edited_inside_the_state(tmp_path):
    path, ckpt = tmp_path / "log.csv", tmp_path / "state.json"
    write_csv(path, ["score", "label"], make_events(300, 1))
    kw = {"checkpoint": str(ckpt), "checkpoint_every": 100}
    replay(str(path), {"iso": OnlineIsotonic(window_size=50)}, **kw)
    saved = json.loads(ckpt.read_text())
    snapshot = saved["calibrators"]["iso"]
    assert snapshot["params"]["window_size"] == 50
    snapshot["params"]["window_size"] = 60
    ckpt.write_text(json.dumps(saved))
    with pytest.raises(ValueError, match="other parameters"):
        replay(str(path), {"iso": OnlineIsotonic(window_size=50)}, resume=True, **kw)


def test_stop_hook_ends_at_a_chunk_with_a_checkpoint(tmp_path):
    path, ckpt = tmp_path / "log.csv", tmp_path / "state.json"
    events = make_events(300_000, 4, ties=False)
    write_csv(path, ["score", "label"], events)
    polls = []

    def stop():
        polls.append(1)
        return True

    result = replay(str(path), {"iso": OnlineIsotonic()}, checkpoint=str(ckpt), stop=stop)
    assert result.stopped and len(polls) == 1
    assert 0 < result.n_events < 300_000
    saved = json.loads(ckpt.read_text())
    assert saved["events_read"] == result.n_events
    # resuming finishes the replay exactly as an uninterrupted one
    resumed = replay(str(path), {"iso": OnlineIsotonic()}, checkpoint=str(ckpt), resume=True)
    fresh = replay(str(path), {"iso": OnlineIsotonic()})
    assert resumed.to_dict() == fresh.to_dict() and not fresh.stopped


RESUMING_SCRIPT = """
import sys
import threading
from streamcal import OnlineIsotonic, OnlinePlatt, TrackingCalibeater, replay
log, ckpt, out = sys.argv[1:4]
result = replay(
    log,
    {"isotonic": OnlineIsotonic(), "tops": TrackingCalibeater(base=OnlinePlatt())},
    metrics=("brier", "log_loss", "ece", "roc_auc"),
    time="t", label_time="lt", window=50, every=100,
    checkpoint=ckpt or None, checkpoint_every=150, resume=bool(ckpt),
)
result.to_json(out)
"""


def test_killed_at_random_moments_then_resumed_is_byte_identical(tmp_path):
    """SIGKILL a replay at random moments, checkpoint writes included, resuming each
    time: the final result file is byte-identical to an uninterrupted run's, and no
    temporary file is left beside the checkpoint."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.test_replay import ROOT, write_delayed_log

    path, ckpt = tmp_path / "log.csv", tmp_path / "state.json"
    write_delayed_log(path, 12000, 5)
    script = tmp_path / "run.py"
    script.write_text(RESUMING_SCRIPT)
    env = dict(os.environ, PYTHONPATH=ROOT)
    whole = tmp_path / "whole.json"
    subprocess.run([sys.executable, str(script), str(path), "", str(whole)], env=env, check=True)
    out = tmp_path / "resumed.json"
    # what a write killed midway leaves (as a kill below may also leave)
    (tmp_path / "state.json.tmp99999").write_text('{"format": "streamcal.rep')
    rng = random.Random(7)
    kills = 0
    for _ in range(40):
        proc = subprocess.Popen([sys.executable, str(script), str(path), str(ckpt), str(out)], env=env)
        try:
            proc.wait(timeout=rng.uniform(0.3, 2.5))
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            kills += 1
            continue
        assert proc.returncode == 0
        break
    else:  # pragma: no cover - the machine is too slow for this test
        pytest.skip("the replay never finished between kills")
    assert kills >= 1
    assert out.read_bytes() == whole.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["log.csv", "state.json", "run.py", "whole.json", "resumed.json"]
    )


# ---------------------------------------------------------------------- plain CSV blocks (pyarrow)


def _csv_text(events, crlf=False, sep=","):
    end = "\r\n" if crlf else "\n"
    return f"score{sep}label{end}" + "".join(f"{s!r}{sep}{y}{end}" for s, y in events)


@pytest.mark.parametrize(
    "variant",
    [
        "plain", "crlf", "tsv", "gz", "no_final_newline", "bad_row_late", "quoted", "blank_line",
        "bom", "word_labels", "bad_digit_label", "empty_label", "two_digit_label",
    ],
)
def test_plain_blocks_equal_the_row_reader(variant, tmp_path, monkeypatch):
    """The pyarrow block reader gives the row reader's results, errors, line numbers and
    checkpoints (fingerprints included), and hands over to it at the first block that is
    not plain."""
    pytest.importorskip("pyarrow")
    import gzip

    from streamcal.replay import _engine, _fastcsv

    monkeypatch.setattr(_fastcsv, "BLOCK_BYTES", 997)  # many blocks, cut anywhere
    monkeypatch.setattr(_fastcsv, "MIN_BYTES", 0)
    events = make_events(3000, 11)
    sep = "\t" if variant == "tsv" else ","
    text = _csv_text(events, crlf=variant == "crlf", sep=sep)
    lines = text.split("\n")
    if variant == "no_final_newline":
        text = text[:-1]
    elif variant == "bad_row_late":
        lines[2500] = "0.7,maybe"
        text = "\n".join(lines)
    elif variant == "quoted":
        lines[1800] = '"0.25",1'
        text = "\n".join(lines)
    elif variant == "blank_line":
        lines[1200] = ""
        text = "\n".join(lines)
    elif variant == "bom":
        text = "\ufeff" + text
    elif variant == "word_labels":  # other text forms in some blocks: the slow label path
        words = {"0": ["false", "0.0", "FALSE"], "1": ["true", "1.0", "TRUE"]}
        for k in range(1, len(lines) - 1, 7):
            score, label = lines[k].split(",")
            lines[k] = f"{score},{words[label][k % 3]}"
        text = "\n".join(lines)
    elif variant == "bad_digit_label":  # one byte, but not a label
        lines[2000] = "0.3,2"
        text = "\n".join(lines)
    elif variant == "empty_label":
        lines[900] = "0.3,"
        text = "\n".join(lines)
    elif variant == "two_digit_label":  # lengths 0 and 2 in one block: n bytes in all
        lines[1500] = "0.3,"
        lines[1501] = "0.4,10"
        text = "\n".join(lines)
    name = "log.tsv" if variant == "tsv" else "log.csv"
    path = tmp_path / (name + (".gz" if variant == "gz" else ""))
    if variant == "gz":
        with gzip.open(path, "wt", newline="") as f:
            f.write(text)
    else:
        path.write_bytes(text.encode("utf-8"))
    kw = {"metrics": ("brier", "ece"), "every": 250, "checkpoint_every": 700}

    opened = []

    def spy(*args):
        reader = _fastcsv.open_fast_csv(*args)
        opened.append(reader is not None)
        return reader

    def one(fast):
        monkeypatch.setattr(_engine, "open_fast_csv", spy if fast else (lambda *a: None))
        ckpts = []
        ckpt = tmp_path / f"c{fast}.json"
        obj = ColumnarReplay(
            {"iso": OnlineIsotonic(), "platt": OnlinePlatt()}, kw["metrics"], score="score",
            label="label", time=None, label_time=None, id=None, labels=None, include_raw=True,
            every=kw["every"], window=None, checkpoint=str(ckpt), checkpoint_every=kw["checkpoint_every"],
            resume=False, on_error="skip", progress=None, keep_forecasts=False, max_errors=100,
        )
        save = obj._save_checkpoint

        def recording():
            ckpts.append(json.loads(json.dumps(obj._state())))
            save()

        obj._save_checkpoint = recording
        result = obj.run(str(path))
        return state(result), ckpts

    fast, fast_ckpts = one(True)
    assert opened == [variant != "bom"]  # the block reader read it (a BOM: the row reader)
    rows, row_ckpts = one(False)
    assert fast == rows
    assert fast_ckpts == row_ckpts
    errors = fast["result"]["errors"]
    bad_lines = {
        "bad_row_late": [2501], "bad_digit_label": [2001], "empty_label": [901],
        "two_digit_label": [1501, 1502],
    }.get(variant, [])
    assert [line for line, _ in errors] == bad_lines
    if variant == "bad_row_late":
        assert "maybe" in errors[0][1]
    n_bad = len(bad_lines) + (variant == "blank_line")
    assert fast["result"]["n_events"] == 3000 - n_bad


def test_digit_labels_are_read_without_pyarrow_compute(monkeypatch):
    """A label column of "0" and "1" is decoded from its buffers (sliced and chunked
    arrays too); any other text goes through pyarrow.compute, and a text that is no
    label gives None."""
    pa = pytest.importorskip("pyarrow")
    import sys

    from streamcal.replay import _fastcsv

    labels = ["0", "1", "1", "0", "1"]
    column = pa.chunked_array([pa.array(labels[:2]), pa.array(labels)[1:]])
    real = sys.modules.get("pyarrow.compute")
    monkeypatch.setitem(sys.modules, "pyarrow.compute", None)  # importing it now fails
    assert _fastcsv.text_label_values(column, pa).tolist() == [0.0, 1.0, 1.0, 1.0, 0.0, 1.0]
    with pytest.raises(ImportError):
        _fastcsv.text_label_values(pa.array(["1", "true"]), pa)
    if real is None:
        monkeypatch.delitem(sys.modules, "pyarrow.compute")
    else:
        monkeypatch.setitem(sys.modules, "pyarrow.compute", real)
    assert _fastcsv.text_label_values(pa.array(["1", "true", "0.0", "FALSE"]), pa).tolist() == [
        1.0, 1.0, 0.0, 0.0,
    ]
    for bad in (["1", "2"], ["1", ""], ["", "10"], ["0", None]):
        assert _fastcsv.text_label_values(pa.array(bad, pa.string()), pa) is None


def test_plain_blocks_resume_from_a_checkpoint_written_by_the_row_reader(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    from streamcal.replay import _engine

    path, ckpt = tmp_path / "log.csv", tmp_path / "state.json"
    events = make_events(2000, 12)
    path.write_text(_csv_text(events))
    kw = {"checkpoint": str(ckpt), "checkpoint_every": 500, "every": 500}

    monkeypatch.setattr(_engine, "open_fast_csv", lambda *a: None)
    _replay_until(1000, str(path), {"iso": OnlineIsotonic()}, **kw)
    monkeypatch.undo()
    resumed = replay(str(path), {"iso": OnlineIsotonic()}, resume=True, **kw)
    fresh = replay(str(path), {"iso": OnlineIsotonic()}, **{k: v for k, v in kw.items() if k != "checkpoint"})
    assert resumed.to_dict() == fresh.to_dict()


# ---------------------------------------------------------------------- fingerprint required


@pytest.mark.parametrize(
    "damage", ["missing", "none", "not_a_dict", "rows", "digest", "label_part_missing"]
)
def test_resume_refuses_a_checkpoint_without_a_well_formed_fingerprint(damage, tmp_path):
    """A checkpoint without a fingerprint, or with a malformed one, is refused on resume
    (it could not tell an edited log); the checkpoint as written resumes."""
    ev, lab, _ = _id_logs(tmp_path, 300, 6)
    ckpt = tmp_path / "state.json"
    kw = {"id": "id", "time": "t", "labels": str(lab), "checkpoint": str(ckpt),
          "checkpoint_every": 100}

    _replay_until(200, str(ev), {"platt": OnlinePlatt()}, every=100, **kw)
    written = ckpt.read_text()
    saved = json.loads(written)
    assert saved["fingerprint"]["rows"] == saved["events_read"] == 100
    fingerprint = saved["fingerprint"]
    if damage == "missing":
        del saved["fingerprint"]
    elif damage == "none":
        saved["fingerprint"] = None
    elif damage == "not_a_dict":
        saved["fingerprint"] = fingerprint["blake2b"]
    elif damage == "rows":
        fingerprint["rows"] = 199
    elif damage == "digest":
        fingerprint["blake2b"] = "not a digest"
    else:
        del fingerprint["labels_blake2b"]
    damaged = json.dumps(saved)
    ckpt.write_text(damaged)
    with pytest.raises(ValueError, match="fingerprint of the rows it replayed") as info:
        replay(str(ev), {"platt": OnlinePlatt()}, resume=True, every=100, **kw)
    expected = "has no fingerprint" if damage in ("missing", "none") else "malformed fingerprint"
    assert expected in str(info.value)
    assert ckpt.read_text() == damaged  # refused before anything was written
    # the checkpoint as it was written resumes, to the uninterrupted result
    ckpt.write_text(written)
    resumed = replay(str(ev), {"platt": OnlinePlatt()}, resume=True, every=100, **kw)
    fresh = replay(str(ev), {"platt": OnlinePlatt()}, every=100,
                   **{k: v for k, v in kw.items() if k != "checkpoint"})
    assert resumed.to_dict() == fresh.to_dict()


# ---------------------------------------------------------------------- stop (Ctrl-C)


@pytest.mark.parametrize("path", ["fast_csv", "row_csv", "delayed", "jsonl"])
def test_stop_takes_effect_within_a_bounded_number_of_events(path, tmp_path, monkeypatch):
    """The stop hook (the command's Ctrl-C) is polled at least every STOP_EVENTS events,
    on every path, not only between chunks of 65,536 rows or blocks of 4 MiB: a stop
    requested at the first poll ends the replay after at most STOP_EVENTS events; the
    checkpoint then holds exactly those events, and resuming from it ends as an
    uninterrupted replay."""
    from streamcal.replay import _engine

    n = 100_000
    log, ckpt = tmp_path / ("log.jsonl" if path == "jsonl" else "log.csv"), tmp_path / "state.json"
    kw = {"every": None, "checkpoint": str(ckpt), "checkpoint_every": 10**9}
    if path == "delayed":
        events = delayed_events(n, 3)
        write_csv(log, ["t", "lt", "score", "label"], [list(e) for e in events])
        kw.update(time="t", label_time="lt")
    else:
        events = make_events(n, 3)
        if path == "jsonl":
            log.write_text("".join(json.dumps({"score": s, "label": y}) + "\n" for s, y in events))
        else:
            write_csv(log, ["score", "label"], events)
    if path == "fast_csv":
        pytest.importorskip("pyarrow")
    else:
        monkeypatch.setattr(_engine, "open_fast_csv", lambda *a: None)
    polls = []

    def stop():
        polls.append(1)
        return True

    result = replay(str(log), {"platt": OnlinePlatt()}, stop=stop, **kw)
    assert result.stopped and len(polls) == 1
    assert 0 < result.n_events <= _engine.STOP_EVENTS
    saved = json.loads(ckpt.read_text())
    assert saved["events_read"] == saved["fingerprint"]["rows"]
    assert saved["n_events"] == result.n_events
    resumed = replay(str(log), {"platt": OnlinePlatt()}, resume=True, **kw)
    fresh = replay(str(log), {"platt": OnlinePlatt()}, **dict(kw, checkpoint=None))
    assert resumed.to_dict() == fresh.to_dict() and resumed.n_events == n


# ---------------------------------------------------------------------- JSON Lines and Parquet blocks (pyarrow)


def _jsonl_variant(variant, events):
    rows = []
    for i, (s, y) in enumerate(events):
        label = {"bool_labels": bool(y), "text_labels": str(y), "float_labels": float(y)}.get(variant, y)
        rows.append(json.dumps({"t": i, "score": s, "label": label, "note": "x"}))
    if variant == "bad_rows":
        rows[100] = '{"t": 100, "score": "high", "label": 1}'
        rows[1500] = '{"t": 1500, "score": 0.5, "label": tru'
        rows[2500] = '{"t": 2500, "score": 0.5, "label": 2}'
    elif variant == "nested":
        rows[700] = '{"t": 700, "score": 0.25, "label": 1, "extra": {"a": [1, 2]}}'
    elif variant == "blank_line":
        rows[1200] = "   "
    elif variant == "tab":
        rows[300] = rows[300].replace(", ", ",\t")
    elif variant == "lone_cr":
        rows[2200] = rows[2200] + "\r" + rows[2201]
        del rows[2201]
    end = "\r\n" if variant == "crlf" else "\n"
    text = end.join(rows) + end
    if variant == "no_final_newline":
        text = text[:-1]
    elif variant == "bom":
        text = "\ufeff" + text
    return text


def _fast_and_row_results(path, tmp_path, monkeypatch, time="t"):
    """The replay of ``path`` with the pyarrow block readers and with the row reader:
    (state, checkpoints, how many plain chunks the block reader gave) each."""
    from streamcal.replay import _engine, _fastblocks

    plain = []

    def spy(*args):
        reader = _fastblocks.open_fast_blocks(*args)
        if reader is not None:
            original = reader.blocks

            def blocks(fallback):
                for chunk in original(fallback):
                    plain.append(isinstance(chunk, _fastblocks._PlainChunk))
                    yield chunk

            reader.blocks = blocks
        return reader

    def one(fast):
        monkeypatch.setattr(_engine, "open_fast_blocks", spy if fast else (lambda *a: None))
        ckpts = []
        obj = ColumnarReplay(
            {"iso": OnlineIsotonic(), "platt": OnlinePlatt()}, ("brier", "ece"), score="score",
            label="label", time=time, label_time=None, id=None, labels=None, include_raw=True,
            every=250, window=None, checkpoint=str(tmp_path / f"c{fast}.json"), checkpoint_every=700,
            resume=False, on_error="skip", progress=None, keep_forecasts=False, max_errors=100,
        )
        save = obj._save_checkpoint

        def recording():
            ckpts.append(json.loads(json.dumps(obj._state())))
            save()

        obj._save_checkpoint = recording
        return state(obj.run(str(path))), ckpts

    fast = one(True)
    rows = one(False)
    return fast, rows, plain


@pytest.mark.parametrize(
    "variant",
    ["plain", "crlf", "gz", "no_final_newline", "bad_rows", "nested", "blank_line", "tab",
     "bom", "bool_labels", "text_labels", "float_labels", "lone_cr"],
)
def test_jsonl_blocks_equal_the_row_reader(variant, tmp_path, monkeypatch):
    """JSON Lines read in pyarrow blocks give the row reader's results, errors (line
    numbers, columns, values), series and checkpoints (fingerprints included); a block
    that is not plain is read by the row reader's code, the blocks after it in blocks
    again (but after a lone carriage return, where the row reader takes over)."""
    pytest.importorskip("pyarrow")
    import gzip

    from streamcal.replay import _fastcsv

    monkeypatch.setattr(_fastcsv, "BLOCK_BYTES", 1999)  # many blocks, cut anywhere
    monkeypatch.setattr(_fastcsv, "MIN_BYTES", 0)
    events = make_events(3000, 13)
    text = _jsonl_variant(variant, events)
    path = tmp_path / ("log.jsonl.gz" if variant == "gz" else "log.jsonl")
    if variant == "gz":
        with gzip.open(path, "wt", newline="") as f:
            f.write(text)
    else:
        path.write_bytes(text.encode("utf-8"))
    (fast, fast_ckpts), (rows, row_ckpts), plain = _fast_and_row_results(path, tmp_path, monkeypatch)
    assert fast == rows
    assert fast_ckpts == row_ckpts
    assert sum(plain) >= 10  # most blocks were read as columns
    if variant in ("nested", "tab", "bad_rows", "blank_line"):
        assert not all(plain)  # that block went through the row reader's code
    if variant == "bad_rows":
        assert [line for line, _ in fast["result"]["errors"]] == [101, 1501, 2501]
        assert "'high' (column 'score')" in fast["result"]["errors"][0][1]


@pytest.mark.parametrize("variant", ["plain", "int_scores", "bool_labels", "text_labels", "bad_rows", "nulls"])
def test_parquet_batches_equal_the_row_reader(variant, tmp_path, monkeypatch):
    """Parquet record batches read as columns give the row reader's results, errors
    (row numbers), series and checkpoints; a batch that is not plain is read row by
    row, the others as columns."""
    pytest.importorskip("pyarrow")
    import pyarrow as pa
    import pyarrow.parquet as pq

    from streamcal.replay import _fastblocks

    monkeypatch.setattr(_fastblocks, "BATCH_ROWS", 400)
    events = make_events(3000, 14)
    scores = [s for s, _ in events]
    labels = [y for _, y in events]
    if variant == "int_scores":
        scores = [int(s >= 0.5) for s in scores]
    elif variant == "bool_labels":
        labels = [bool(y) for y in labels]
    elif variant == "text_labels":
        labels = [str(y) for y in labels]
    elif variant == "bad_rows":
        labels = [str(y) for y in labels]
        labels[1000], labels[2100] = "maybe", " 1"
    elif variant == "nulls":
        scores = [None if i == 1700 else s for i, s in enumerate(scores)]
    table = pa.table({"t": list(range(3000)), "score": scores, "label": labels})
    path = tmp_path / "log.parquet"
    pq.write_table(table, path, row_group_size=1000)
    (fast, fast_ckpts), (rows, row_ckpts), plain = _fast_and_row_results(path, tmp_path, monkeypatch)
    assert fast == rows
    assert fast_ckpts == row_ckpts
    assert sum(plain) >= 5
    if variant in ("bad_rows", "nulls"):
        assert not all(plain)
    if variant == "bad_rows":
        assert [line for line, _ in fast["result"]["errors"]] == [1000]


def test_resume_after_an_unreadable_row(tmp_path):
    """A checkpoint written after a row that could not be read (invalid JSON) resumes:
    the fingerprint hashes the row's reason, not an object's address (it was refused
    as "fingerprint differs" in another process)."""
    import subprocess
    import sys

    from tests.test_replay import ROOT

    path, ckpt = tmp_path / "log.jsonl", tmp_path / "state.json"
    rows = [json.dumps({"score": s, "label": y}) for s, y in make_events(600, 8)]
    rows[10] = '{"score": 0.5, "label": '
    path.write_text("\n".join(rows) + "\n")
    script = (
        "import sys\nfrom streamcal import OnlinePlatt, replay\n"
        "class Stop(Exception): pass\n"
        "def progress(n):\n    if n >= 300: raise Stop\n"
        "try:\n    replay(sys.argv[1], {'p': OnlinePlatt()}, every=100, progress=progress,"
        " checkpoint=sys.argv[2], checkpoint_every=100)\nexcept Stop:\n    pass\n"
    )
    subprocess.run([sys.executable, "-c", script, str(path), str(ckpt)], check=True,
                   env={**__import__("os").environ, "PYTHONPATH": ROOT})
    assert json.loads(ckpt.read_text())["n_skipped"] == 1
    resumed = replay(str(path), {"p": OnlinePlatt()}, every=100, checkpoint=str(ckpt),
                     checkpoint_every=100, resume=True)
    fresh = replay(str(path), {"p": OnlinePlatt()}, every=100)
    assert resumed.to_dict() == fresh.to_dict()


def test_fast_reader_gates_are_shared(tmp_path, monkeypatch):
    """The size and pyarrow gates of the CSV and JSONL/Parquet fast readers have one
    home in _fastcsv (issue 14); both honour a patched MIN_BYTES and a hidden pyarrow."""
    import sys

    from streamcal.replay import _fastcsv

    path = tmp_path / "small.csv"
    path.write_text("score,label\n0.5,1\n")
    assert not _fastcsv.big_enough(path)
    assert not _fastcsv.big_enough(tmp_path / "missing.csv")
    monkeypatch.setattr(_fastcsv, "MIN_BYTES", 0)
    assert _fastcsv.big_enough(path)
    monkeypatch.setitem(sys.modules, "pyarrow.json", None)
    assert not _fastcsv.pyarrow_has("json")
    try:
        import pyarrow.csv  # noqa: F401
    except ImportError:
        assert not _fastcsv.pyarrow_has("csv")
    else:
        assert _fastcsv.pyarrow_has("csv")


# ---------------------------------------------------------------------- resume with the block readers


@pytest.mark.parametrize(
    "variant", ["csv", "csv_bad_rows", "csv_quoted_early", "csv_quoted_late", "jsonl_bad_rows", "parquet"]
)
def test_resume_reads_with_the_block_readers(variant, tmp_path, monkeypatch):
    """A resume skips the rows already replayed with the pyarrow block reader (hashing
    them for the fingerprint), starts again in the middle of the block the checkpoint
    fell in, and reads the rest of the log in blocks (before, the row reader read the
    whole log after a resume); the result is the uninterrupted replay's. A block that
    is not plain among the rows skipped hands over to the row reader as in a run from
    the start (``csv_quoted_early``)."""
    pytest.importorskip("pyarrow")
    from streamcal.replay import _engine, _fastblocks, _fastcsv

    monkeypatch.setattr(_fastcsv, "BLOCK_BYTES", 1999)  # checkpoints fall inside blocks
    monkeypatch.setattr(_fastcsv, "MIN_BYTES", 0)
    monkeypatch.setattr(_fastblocks, "BATCH_ROWS", 333)
    events = make_events(3000, 21)
    if variant == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = tmp_path / "log.parquet"
        pq.write_table(pa.table({"score": [s for s, _ in events], "label": [y for _, y in events]}), path)
    elif variant.startswith("jsonl"):
        path = tmp_path / "log.jsonl"
        lines = [json.dumps({"score": s, "label": y}) for s, y in events]
        lines[150], lines[2400] = '{"score": "high", "label": 1}', '{"score": 0.5, "label": tru'
        path.write_text("\n".join(lines) + "\n")
    else:
        path = tmp_path / "log.csv"
        lines = _csv_text(events).split("\n")
        if variant == "csv_bad_rows":
            lines[1700], lines[1703], lines[2500] = "0.7,maybe", "1.5,1", "x,0"  # after the checkpoint
        elif variant == "csv_quoted_early":
            lines[400] = '"0.25",1'
        elif variant == "csv_quoted_late":
            lines[2600] = '"0.25",1'
        path.write_text("\n".join(lines))
    ckpt = tmp_path / "state.json"
    kw = {"metrics": ("brier", "ece"), "every": 250, "checkpoint": str(ckpt), "checkpoint_every": 700}

    def calibrators():
        return {"iso": OnlineIsotonic(), "platt": OnlinePlatt()}

    _replay_until(1500, str(path), calibrators(), **kw)
    saved = json.loads(ckpt.read_text())
    assert saved["n_events"] == 1400

    chunks = []
    original = _engine.ColumnarReplay._lean_chunk

    def spy(self, chunk, log):
        chunks.append(type(chunk).__name__)
        return original(self, chunk, log)

    monkeypatch.setattr(_engine.ColumnarReplay, "_lean_chunk", spy)
    resumed = replay(str(path), calibrators(), resume=True, **kw)
    monkeypatch.undo()
    fresh = replay(str(path), calibrators(), **dict(kw, checkpoint=None))
    assert resumed.to_dict() == fresh.to_dict()
    assert json.loads(ckpt.read_text())["n_events"] == fresh.n_events
    if variant == "csv_quoted_early":
        assert "PlainBlock" not in chunks  # the row reader took over among the rows skipped
    else:
        assert chunks[0] == "_ChunkTail"  # the rest of the block the checkpoint fell in
        assert "PlainBlock" in chunks or "_PlainChunk" in chunks
    if variant in ("csv_quoted_late", "csv_bad_rows"):
        assert chunks[-1] == "_RowChunk"  # handed over to the row reader after the resume
    if variant == "csv_bad_rows":
        assert [line for line, _ in resumed.errors] == [1701, 1704, 2501]


@pytest.mark.parametrize("edit", ["before_checkpoint", "shorter"])
def test_resume_with_the_block_readers_refuses_another_log(edit, tmp_path, monkeypatch):
    """The rows skipped by the block reader are fingerprinted as the row reader's: an
    edit among them, or a log shorter than the checkpoint's position, is refused
    before anything changes."""
    pytest.importorskip("pyarrow")
    from streamcal.replay import _fastcsv

    monkeypatch.setattr(_fastcsv, "BLOCK_BYTES", 1999)
    monkeypatch.setattr(_fastcsv, "MIN_BYTES", 0)
    events = make_events(2000, 22)
    path, ckpt = tmp_path / "log.csv", tmp_path / "state.json"
    path.write_text(_csv_text(events))
    kw = {"every": 500, "checkpoint": str(ckpt), "checkpoint_every": 500}

    _replay_until(1500, str(path), {"p": OnlinePlatt()}, **kw)
    written = ckpt.read_text()
    if edit == "before_checkpoint":
        s, y = events[700]
        path.write_text(_csv_text(events[:700] + [(s, 1 - y)] + events[701:]))
        expected = "fingerprint differs"
    else:
        path.write_text(_csv_text(events[:800]))  # the checkpoint is at 1,000
        expected = "has 800 rows"
    cal = OnlinePlatt()
    before = cal.to_dict()
    with pytest.raises(ValueError, match=expected):
        replay(str(path), {"p": cal}, resume=True, **kw)
    assert cal.to_dict() == before and ckpt.read_text() == written


def test_the_csv_block_reader_does_not_import_pandas(tmp_path):
    """pyarrow imports pandas (1 to 2 s of CPU) the first time it converts Python
    objects or gives a numpy array; the CSV block reader builds and reads its arrays
    from their buffers, so a CSV replay never imports it (issue 12, start-up)."""
    pytest.importorskip("pyarrow")
    pytest.importorskip("pandas")
    import os
    import subprocess
    import sys

    from tests.test_replay import ROOT

    path = tmp_path / "log.csv"
    events = make_events(3000, 23)
    path.write_text(_csv_text(events))
    script = (
        "import sys\nfrom streamcal.replay import _engine, _fastcsv\n"
        "_fastcsv.MIN_BYTES = 0\n"
        "opened = []\n"
        "def spy(*a):\n    r = _fastcsv.open_fast_csv(*a)\n    opened.append(r is not None)\n    return r\n"
        "_engine.open_fast_csv = spy\n"
        "from streamcal import OnlinePlatt, replay\n"
        "r = replay(sys.argv[1], {'p': OnlinePlatt()})\n"
        "print(opened, r.n_events, 'pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", script, str(path)], check=True, capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": ROOT}).stdout.split()
    assert out == ["[True]", "3000", "False"]


def test_kept_forecasts_of_the_block_reader_are_python_floats(tmp_path, monkeypatch):
    """The lean path hands the batch calls' arrays to the metrics as they are, and
    converts them to lists only for what keeps them (the forecasts, the window): those
    stay Python floats, as the row reader's, and equal."""
    pytest.importorskip("pyarrow")
    from streamcal.replay import _engine, _fastcsv

    monkeypatch.setattr(_fastcsv, "MIN_BYTES", 0)
    path = tmp_path / "log.csv"
    path.write_text(_csv_text(make_events(2000, 24)))
    kw = {"keep_forecasts": True, "window": 300, "every": 250}
    fast = replay(str(path), {"iso": OnlineIsotonic(), "platt": OnlinePlatt()}, **kw)
    monkeypatch.setattr(_engine, "open_fast_csv", lambda *a: None)
    rows = replay(str(path), {"iso": OnlineIsotonic(), "platt": OnlinePlatt()}, **kw)
    assert fast.to_dict() == rows.to_dict()
    for name in ("raw", "iso", "platt"):
        assert all(type(v) is float for v in fast.forecasts[name])


def test_peak_memory_is_flat_in_the_length_of_the_log(tmp_path):
    """Issue 12's memory target at a small scale: with bounded calibrators, the peak
    Python allocation of a replay (tracemalloc, in a fresh process, imports excluded)
    of a 10x longer log stays within 1.2x. The block size is shrunk so that both logs
    span many blocks (the full-size figure: benchmarks/bench_replay_engine.py
    --memory)."""
    pytest.importorskip("pyarrow")
    import os
    import subprocess
    import sys

    from tests.test_replay import ROOT

    script = (
        "import sys, tracemalloc\n"
        "from streamcal.replay import _engine, _fastcsv\n"
        "_fastcsv.BLOCK_BYTES = 1 << 16\n_fastcsv.MIN_BYTES = 0\n"
        "from streamcal import HistogramBinning, OnlineIsotonic, OnlinePlatt, replay\n"
        "cals = {'iso': OnlineIsotonic(resolution=1e-2), 'hist': HistogramBinning(), 'platt': OnlinePlatt()}\n"
        "tracemalloc.start()\n"
        "r = replay(sys.argv[1], cals)\n"
        "print(r.n_events, tracemalloc.get_traced_memory()[1])\n"
    )
    peaks = {}
    for n in (20_000, 200_000):
        path = tmp_path / f"log{n}.csv"
        path.write_text(_csv_text(make_events(n, 25)))
        out = subprocess.run([sys.executable, "-c", script, str(path)], check=True, capture_output=True,
                             text=True, env={**os.environ, "PYTHONPATH": ROOT}).stdout.split()
        assert int(out[0]) == n
        peaks[n] = int(out[1])
    assert peaks[200_000] <= 1.2 * peaks[20_000], peaks


@pytest.mark.parametrize(
    "block, plain",
    [
        (b"0.5,1,a\n0.25,0,b\n", True),
        (b"0.5,1,caf\xc3\xa9\n0.25,0,b\n", True),  # valid UTF-8, not ASCII
        (b"0.5,1,a\r\n0.25,0,b\r\n", True),  # CRLF
        (b"0.5,1,caf\xe9\n0.25,0,b\n", False),  # invalid UTF-8
        (b"0.5,1,a\n\n0.25,0,b\n", False),  # a blank line
        (b"\n0.5,1,a\n", False),  # a blank first line
        (b"0.5,1,a\r\n\r\n0.25,0,b\r\n", False),  # a blank CRLF line
        (b"\r\n0.5,1,a\r\n", False),  # a blank first CRLF line
        (b"0.5,1,a\r0.25,0,b\n", False),  # a lone carriage return
        (b"0.5,1,a\n0.25,0,b\r", False),  # a carriage return ending the block
        (b'0.5,1,"a"\n', False),  # a quote
        (b"0.5,1,a\x00\n", False),  # a NUL byte
        (b"0.5,1,a\n1.5,0,b\n", False),  # a score out of [0, 1]
        (b"0.5,1,a\n0.25,2,b\n", False),  # not a label
        (b"0.5,1,a\n0.25,0\n", False),  # a field missing
    ],
)
def test_plain_block_checks(block, plain, tmp_path):
    """A block is plain exactly when it holds whole, unquoted, non-blank lines of valid
    UTF-8 (carriage returns only before a newline) with the header's fields and valid
    values; the newline positions found by the checks are the block's rows."""
    pytest.importorskip("pyarrow")
    from streamcal.replay import _fastcsv

    path = tmp_path / "log.csv"
    path.write_bytes(b"score,label,note\n" + block)
    reader = _fastcsv.FastCsv(str(path), ",", ["score", "label", "note"], "score", "label")
    try:
        out = reader._plain(block)
    finally:
        reader.close()
    assert (out is not None) == plain
    if plain:
        assert out.n_rows == 2
        assert out.row(1)[:2] == ["0.5", "1"]
        assert out.row(2) == ["0.25", "0", "b"]
        assert out.fingerprint_bytes(0, 2) == block.replace(b"\r\n", b"\n").replace(
            b",", b"\x1f"
        ).replace(b"\n", b"\x1e")


@pytest.mark.parametrize("threads", [0, -1, 1.5, True, "2"])
def test_threads_must_be_a_positive_int(threads):
    rows = binary_rows(20, 0, bad=False)
    with pytest.raises((TypeError, ValueError), match="'threads' argument of replay must be an int >= 1 or None. Got"):
        replay(rows, cals(), threads=threads)


def test_threads_bound_by_calibrators_and_shut_down(monkeypatch):
    # a pool only with two batch calibrators or more, never more threads than them, and
    # no worker left once the replay returns
    import threading

    monkeypatch.setattr(_engine, "POOL_RUN", 1)
    rows = binary_rows(400, 1, bad=False)
    before = {t.name for t in threading.enumerate()}
    obj = ColumnarReplay({"iso": OnlineIsotonic(), "va": VennAbers()}, ["brier"], score="score", label="label",
                         time=None, label_time=None, id=None, labels=None, include_raw=True, every=100,
                         window=None, checkpoint=None, checkpoint_every=10000, resume=False, on_error="skip",
                         progress=None, keep_forecasts=False, max_errors=10, threads=8)
    pools = []
    side = obj._pool_for

    def spy(count, n_events):
        pool = side(count, n_events)
        pools.append(pool)
        return pool

    obj._pool_for = spy
    obj.run(rows)
    used = [p for p in pools if p is not None]
    assert used and used[0]._max_workers == 2
    assert {t.name for t in threading.enumerate()} - before == set()
    one = replay(rows, {"iso": OnlineIsotonic()}, ["brier"], threads=8)
    assert one.n_learnt == 400


def test_short_runs_skip_the_pool(monkeypatch):
    # runs below POOL_RUN events run one after another: no pool is ever made
    made = []
    real = _engine.ThreadPoolExecutor
    monkeypatch.setattr(_engine, "ThreadPoolExecutor", lambda *a, **k: made.append(1) or real(*a, **k))
    replay(binary_rows(_engine.POOL_RUN - 1, 2, bad=False), cals(), threads=4, every=None)
    assert made == []
    replay(binary_rows(_engine.POOL_RUN + 100, 2, bad=False), cals(), threads=4, every=None)
    assert made == [1]


class _Holder:
    """A plain object (not a river estimator) holding a calibrator."""

    def __init__(self, cal):
        self.cal = cal

    def __eq__(self, other):  # a snapshot's parameters compare by the held state
        return type(other) is _Holder and self.cal.to_dict() == other.cal.to_dict()


class _Delegate(BinaryCalibrator):
    """A user's calibrator delegating to one held inside a plain object."""

    def __init__(self, holder=None):
        self.holder = holder

    def _reset(self):
        pass

    def predict_one(self, s):
        return self.holder.cal.predict_one(s)

    def learn_one(self, s, y, w=1.0):
        self.holder.cal.learn_one(s, y, w)

    def _get_state(self):
        return {}

    def _set_state(self, state):
        pass


def _shared_sets():
    iso, platt, va, hist = OnlineIsotonic(), OnlinePlatt(), VennAbers(), HistogramBinning()
    return {
        "a": iso, "b": iso,  # one object under two names
        "c": TrackingCalibeater(base=platt), "d": TrackingCalibeater(base=platt),
        "e": va, "f": _Delegate(_Holder(va)),  # held through a plain object
        "g": hist, "h": _Delegate(_Holder(hist)),
        "i": VennAbers(), "j": OnlineIsotonic(window_size=50),  # independent
    }


@pytest.mark.parametrize(
    "kw",
    [{}, {"every": 10}, {"every": 333, "keep_forecasts": True}, {"time": "t", "label_time": "lt", "every": 50}],
    ids=["plain", "every-10", "every-333", "label-times"],
)
def test_calibrators_sharing_state_follow_the_per_event_protocol(kw, monkeypatch):
    """Calibrators that are, or hold, the same object (through a river estimator, a
    plain object, a partial) run event by event: every one predicts an event before any
    learns it, so the results are the per-event oracle's whatever the runs, the
    sampling or the threads (before: batch passes, one calibrator after another,
    predicted events whose labels the shared object had already learnt, and in threads
    corrupted it)."""
    monkeypatch.setattr(_engine, "POOL_RUN", 1)
    rows = binary_rows(900, 3, bad=False)
    if "label_time" in kw:
        rng = random.Random(0)
        rows = [dict(r, lt=r["t"] + rng.choice([0, 0, 5, 40])) for r in rows]
    metrics = ["brier", "log_loss"]
    expected = run(_Replay, rows, _shared_sets(), metrics=metrics, **dict(kw))
    for threads in (1, 4):
        got = run(ColumnarReplay, rows, _shared_sets(), metrics=metrics, threads=threads, **dict(kw))
        assert state(got) == state(expected), threads
        assert got.forecasts == expected.forecasts
    # the per-event protocol itself: both names of one object predict the same
    if kw.get("keep_forecasts"):
        assert expected.forecasts["a"] == expected.forecasts["b"]


def test_sharing_names():
    from streamcal.replay._sharing import sharing_names

    assert sharing_names(_shared_sets()) == set("abcdefgh")
    assert sharing_names(cals()) == set()
    assert sharing_names({"x": TrackingCalibeater(base=OnlinePlatt()), "y": OnlinePlatt()}) == set()
    # cycles end; text, numbers and read-only arrays shared are not state
    a, b = OnlinePlatt(), OnlinePlatt()
    a.loop, b.tag = [a], "same text"
    a.tag = b.tag
    assert sharing_names({"a": a, "b": b}) == set()
    # through a partial or a bound method
    hist = HistogramBinning()
    assert sharing_names({"p": hist, "q": _Holder(functools.partial(max, hist))}) == {"p", "q"}
    assert sharing_names({"p": hist, "q": _Holder(hist.predict_one)}) == {"p", "q"}


def test_sharing_names_see_the_compiled_bases_fields():
    """An isotonic calibrator keeps its stream in a C field of its compiled base
    (``IsotonicKernel``), not in ``__dict__``: a shallow copy shares the stream, and so
    does an object holding it. Properties of compiled bases that return a new object
    each time (OnlinePlatt's store) are not taken for shared state."""
    import copy

    from streamcal.replay._sharing import sharing_names

    for cal in (OnlineIsotonic(), VennAbers(window_size=5), OnlineIsotonic(half_life=3.0)):
        assert sharing_names({"a": cal, "b": copy.copy(cal), "c": copy.deepcopy(cal)}) == {"a", "b"}
        assert sharing_names({"a": cal, "h": _Holder(cal._stream)}) == {"a", "h"}
    platt = OnlinePlatt()
    assert sharing_names({"p": platt, "q": copy.copy(platt), "r": OnlinePlatt(), "s": OnlineBeta()}) == set()


class _OneSlot:
    __slots__ = "inner"  # one slot, given as a string

    def __init__(self, inner):
        self.inner = inner


class _PrivateSlot:
    __slots__ = ("__inner",)  # stored name-mangled

    def __init__(self, inner):
        self.__inner = inner


class _Answers:
    """``__getattr__`` answering anything, or raising what a dict raises."""

    __slots__ = ("inner", "table")

    def __init__(self, inner, table):
        self.inner, self.table = inner, table

    def __getattr__(self, name):
        if self.table:
            return self.table[name]
        return None


def test_sharing_names_on_users_objects():
    from streamcal.replay._sharing import sharing_names

    iso = OnlineIsotonic()
    log = []

    def closure(s):
        return iso.predict_one(s)

    for holder in (_OneSlot(iso), _PrivateSlot(iso), _Answers(iso, {}), _Answers(iso, None), _Holder(closure)):
        assert sharing_names({"a": iso, "b": holder}) == {"a", "b"}, type(holder).__name__
    assert sharing_names({"a": _Holder(log.append), "b": _Holder(log.append)}) == {"a", "b"}
    # shared, but not state: loggers, enum members, patterns, module functions, dtypes
    import enum
    import logging
    import math
    import re

    class Mode(enum.Enum):
        FAST = 1

    def plain():
        return _Holder([logging.getLogger("streamcal.x"), Mode.FAST, re.compile("x"), math.log,
                        np.dtype("float64"), ..., closure.__name__, len, print])

    assert sharing_names({"a": plain(), "b": plain()}) == set()
    nested = ()
    for _ in range(40):  # shared nested tuples: walked once each, not once per path
        nested = (nested, nested)
    assert sharing_names({"a": _Holder(nested), "b": _Holder(nested)}) == set()


class _FailsAt(BinaryCalibrator):
    """Raises ValueError in its ``learn_one`` at its ``at``-th event."""

    def __init__(self, at=300):
        self.at = at
        self.seen = 0

    def _reset(self):
        self.seen = 0

    def predict_one(self, s):
        return s

    def learn_one(self, s, y, w=1.0):
        self.seen += 1
        if self.seen == self.at:
            raise ValueError("learnt too much")

    def _get_state(self):
        return {"seen": self.seen}

    def _set_state(self, state):
        self.seen = state["seen"]


class _PlainFailsAt:
    """The same, river-style (no batch passes)."""

    def __init__(self, at=300):
        self.inner = _FailsAt(at)

    def predict_one(self, s):
        return s

    def learn_one(self, s, y):
        self.inner.learn_one(s, y)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception notes: Python 3.11+")
@pytest.mark.parametrize("threads", [1, 4])
@pytest.mark.parametrize("kind", ["batch", "event-by-event"])
@pytest.mark.parametrize("delayed", [False, True])
def test_an_error_of_a_calibrator_names_it(kind, threads, delayed, monkeypatch):
    monkeypatch.setattr(_engine, "POOL_RUN", 1)
    rows = binary_rows(900, 4, bad=False)
    kw = {}
    if delayed:
        rows = [dict(r, lt=r["t"] + 7) for r in rows]
        kw = {"time": "t", "label_time": "lt"}
    failing = _FailsAt() if kind == "batch" else _PlainFailsAt()
    calibrators = {"iso": OnlineIsotonic(), "bad one": failing, "platt": OnlinePlatt()}
    with pytest.raises(ValueError, match="learnt too much") as info:
        replay(rows, calibrators, ["brier"], threads=threads, **kw)
    assert "(raised by the replay's calibrator 'bad one')" in getattr(info.value, "__notes__", [])


class _NoWeight(BinaryCalibrator):
    """A user's calibrator whose ``learn_one`` takes no weight, keeping the labels it
    is given as they are."""

    def __init__(self):
        self.labels = []

    def _reset(self):
        self.labels = []

    def predict_one(self, s):
        return sum(self.labels[-5:]) / 5 if self.labels else s

    def learn_one(self, s, y):
        self.labels.append(y)

    def _get_state(self):
        return {"labels": self.labels}

    def _set_state(self, state):
        self.labels = state["labels"]


def test_a_learn_one_without_weights_works_whatever_the_run_length(monkeypatch):
    """The default batch loops call ``learn_one(s, y)`` with int labels when every
    weight is 1, as the per-event loop does: a user's ``learn_one`` without ``w`` works
    in short runs and long ones alike, with the same results."""
    rows = binary_rows(900, 5, bad=False)
    expected = run(_Replay, rows, {"user": _NoWeight()}, metrics=["brier"], keep_forecasts=True)
    got = run(ColumnarReplay, rows, {"user": _NoWeight()}, metrics=["brier"], keep_forecasts=True)
    assert state(got) == state(expected)
    assert got.forecasts == expected.forecasts
    cal = _NoWeight()
    cal.predict_learn_many([0.2, 0.4], [1, 0])
    cal.learn_many([0.3], [True])
    assert cal.labels == [1, 0, 1] and all(type(y) is int for y in cal.labels)
    with pytest.raises(TypeError):  # weights given: passed on, as the loop would
        cal.learn_many([0.3], [1], [2.0])


# ---------------------------------------------------------------------- delayed labels, a chunk at a time


def _plain_delayed_rows(n, seed, dates=False):
    """Delayed-label rows with nothing malformed (the chunks go through the columnar
    schedule): label times before, at and after the event's, ties, long delays that
    cross chunks and segments, and labels that never come before the end."""
    rng = random.Random(seed)
    rows = []
    for i, (t, lt, s, y) in enumerate(delayed_events(n, seed, max_delay=6)):
        kind = rng.random()
        if kind < 0.1:
            lt = t - rng.randint(1, 3)  # known before the event: revealed right after it
        elif kind < 0.2:
            lt = t + rng.randint(50, 400)  # long after
        elif kind < 0.22:
            lt = float("inf")  # only at the end
        row = {"t": t, "lt": lt, "score": s, "label": y}
        if dates:
            base = 1_356_998_400  # 2013-01-01
            row["t"] = _iso(base + 60 * t)
            row["lt"] = "9999-12-31T00:00:00" if lt == float("inf") else _iso(base + 60 * lt)
        elif i % 3 == 0:
            row = {k: str(v) for k, v in row.items()}  # numbers as text, as a CSV gives them
        rows.append(row)
    return rows


def _iso(seconds):
    import datetime as dt

    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("dates", [False, True], ids=["numbers", "dates"])
@pytest.mark.parametrize("window", [None, 20])
def test_delayed_label_times_a_chunk_at_a_time(seed, dates, window, tmp_path, monkeypatch):
    """Chunks of plain rows go through the columnar schedule
    (``Schedule.events_at_once``): the results, series, forecasts and checkpoints of
    the per-event oracle, bit for bit, whatever the chunk size and with the stop hook
    polled every few events."""
    rows = _plain_delayed_rows(250, seed, dates)
    kw = {"time": "t", "label_time": "lt", "window": window, "every": 11, "keep_forecasts": True,
          "checkpoint": str(tmp_path / "c.json"), "checkpoint_every": 37}
    calls = []
    real = _engine.ColumnarReplay._delayed_chunk

    def spy(self, chunk, columns, read):
        calls.append(len(chunk))
        return real(self, chunk, columns, read)

    monkeypatch.setattr(_engine.ColumnarReplay, "_delayed_chunk", spy)
    same(kw, lambda: [dict(r) for r in rows], plain=seed == 0)
    assert sum(calls) >= 6 * 250  # every chunk of every run went the columnar way
    # a stop hook polled every 5 events that never stops: the same again
    monkeypatch.setattr(_engine, "STOP_EVENTS", 5)
    expected = run(_Replay, [dict(r) for r in rows], cals(), **dict(kw, checkpoint=None))
    for chunk_rows in (3, 64):
        obj_kw = dict(kw, checkpoint=None)
        got = _engine.ColumnarReplay(
            cals(), ALL_BINARY, score="score", label="label", time="t", label_time="lt", id=None,
            labels=None, include_raw=True, every=11, window=window, checkpoint=None,
            checkpoint_every=10000, resume=False, on_error="skip", progress=None,
            keep_forecasts=True, max_errors=1000, stop=lambda: False,
        )
        got.chunk_rows = chunk_rows
        got = got.run([dict(r) for r in rows])
        assert state(got) == state(expected), (chunk_rows, obj_kw)
        assert got.forecasts == expected.forecasts


def test_parse_events_at_once_agrees_with_the_row_parser():
    """``RowParser.parse_events_at_once`` gives the row parser's values for plain rows,
    and None as soon as one row is one the row parser refuses (or a bool score)."""
    from streamcal.replay._readers import open_log
    from streamcal.replay._rows import RowError, RowParser

    good = [{"s": 0.25, "y": 1, "t": 1, "lt": 3}, {"s": "0.5", "y": " 0", "t": "2", "lt": "2.5"},
            {"s": 1, "y": "true", "t": 2.0, "lt": "2013-01-01T00:00:00Z"}]
    bad_values = [("s", "x"), ("s", 1.5), ("s", float("nan")), ("s", True), ("s", None), ("s", ""),
                  ("y", 2), ("y", ""), ("y", None), ("t", "noon"), ("t", float("nan")), ("t", True),
                  ("t", 0), ("lt", None), ("lt", "nan"), ("lt", [1])]
    for delay, extra in (("time", {"label_time": "lt", "id": None}), ("id", {"label_time": None, "id": "t"})):
        parser = RowParser(open_log(good), score_columns=["s"], classes=None, label="y", time="t",
                           delay=delay, **extra)
        columns = parser.parse_events_at_once(good)
        rows_parsed, last = [], -float("inf")
        for row in good:
            rows_parsed.append(parser.parse_event(row, last))
            last = rows_parsed[-1][2]
        assert list(zip(*columns)) == rows_parsed
        assert parser.parse_events_at_once(good, last_time=1.5) is None  # before the last event
        for key, value in bad_values:
            rows = [dict(r) for r in good]
            rows[1][key] = value
            if (key == "lt" and delay == "id") or (key == "y" and delay == "id"):
                continue  # no label time; the labels come from the label records
            assert parser.parse_events_at_once(rows) is None, (delay, key, value)
            if not (key == "s" and value is True):
                with pytest.raises(RowError):
                    last = -float("inf")
                    for row in rows:
                        last = parser.parse_event(row, last)[2]
        assert parser.parse_events_at_once([good[0], ["not", "a", "record"]]) is None


class _CountingLocked(BinaryCalibrator):
    """A user's calibrator with a side effect outside the object (a count of its
    learns) and an attribute that cannot be copied (a lock)."""

    calls = 0

    def __init__(self):
        self.n, self.s = 0, 0.0
        self._lock = threading.Lock()

    def _reset(self):
        self.n, self.s = 0, 0.0

    def learn_one(self, score, label, w=1.0):
        type(self).calls += 1
        self.n += 1
        self.s += label

    def predict_one(self, score):
        return (self.s + 0.5) / (self.n + 1)

    def _get_state(self):
        return {"n": self.n, "s": self.s}

    def _set_state(self, state):
        self.n, self.s = state["n"], state["s"]


def test_a_users_calibrator_learns_each_event_once_with_delayed_labels():
    """Regression: the short runs of delayed labels go through ``predict_reveal_many``,
    whose default once ran every operation on a deep copy first (a dry run for the
    weight rule): a user's ``learn_one`` ran twice per event, and a calibrator holding
    a lock could not be replayed. A class that does not state a weight rule now runs
    its loop once, as ``learn_many`` does."""
    rows = [{"t": i, "lt": i + (3 if i % 2 else 0), "score": 0.5, "label": i % 2} for i in range(200)]
    _CountingLocked.calls = 0
    result = replay([dict(r) for r in rows], {"c": _CountingLocked()}, ["brier"], time="t", label_time="lt")
    assert _CountingLocked.calls == result.n_events == 200
    expected = run(_Replay, [dict(r) for r in rows], {"c": _CountingLocked()}, metrics=["brier"],
                   time="t", label_time="lt")
    assert state(result) == state(expected)


def test_integers_beyond_the_doubles_are_malformed_rows():
    """Regression: a score, time or label time given as an integer too large for a
    float (JSON ``1e400`` written out in digits) crashed both engines with
    OverflowError; each such row is now reported as malformed."""
    rows = [{"t": i, "lt": i + 1, "score": 0.5, "label": i % 2} for i in range(30)]
    for k, column in enumerate(("t", "lt", "score")):
        rows[5 + k][column] = 10**400
    for kw in ({"time": "t", "label_time": "lt"}, {}):
        result = replay([dict(r) for r in rows], {"p": OnlinePlatt()}, ["brier"], **kw)
        bad = [line for line, _ in result.errors]
        assert (bad == [5, 6, 7]) if kw else (bad == [7]), (kw, result.errors)
