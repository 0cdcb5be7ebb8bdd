"""streamcal.consumer and ``streamcal consume`` against a real redis-server (issue 16,
items 4-6).

The tests marked ``redis`` start their own ``redis-server`` on a free loopback port and
skip when the binary or redis-py is missing. The reference is an in-process loop written
here from the specification (merge the two streams by entry id, join labels to score
events by id, predict then learn), independent of the consumer's reading, buffering and
committing.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

from streamcal import KeyedCalibrator, registry

try:
    import redis
except ImportError:  # the tests below that need it are skipped
    redis = None

from streamcal.consumer import Consumer, connect, output_id, shard_of  # noqa: E402



def needs_server(test):
    """Mark ``test`` redis, skipped without redis-py or the redis-server binary."""
    for mark in (
        pytest.mark.redis,
        pytest.mark.skipif(redis is None, reason="redis-py is not installed"),
        pytest.mark.skipif(shutil.which("redis-server") is None, reason="no redis-server binary"),
    ):
        test = mark(test)
    return test


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    port = _free_port()
    folder = tmp_path_factory.mktemp("redis")
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(folder)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis.from_url(url)
    for _ in range(200):
        try:
            client.ping()
            break
        except redis.exceptions.ConnectionError:
            time.sleep(0.02)
    yield url
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture
def client(server):
    c = redis.Redis.from_url(server)
    c.flushdb()
    return c


# ---------------------------------------------------------------------- producing


def _produce(client, n, seed, keys=5, bad=()):
    """XADD n score events and their labels, each label 0 to 30 events after its score
    event, and the planted malformed messages ``bad``: (stream, fields, at) with ``at``
    the position among the score events. Returns the ids of the score events."""
    rng = random.Random(seed)
    waiting, ids = [], []
    planted = {}
    for stream, fields, at in bad:
        planted.setdefault(at, []).append((stream, fields))
    pipe = client.pipeline(transaction=False)
    for i in range(n):
        for stream, fields in planted.get(i, ()):
            pipe.xadd(stream, fields)
        key = f"k{rng.randrange(keys)}"
        truth = rng.random()
        score = min(1.0, max(0.0, truth + rng.gauss(0.0, 0.2)))
        pipe.xadd("events", {"id": f"e{i}", "score": repr(score), "key": key})
        ids.append(f"e{i}")
        waiting.append((i + rng.randrange(31), f"e{i}", int(rng.random() < truth)))
        waiting.sort()
        while waiting and waiting[0][0] <= i:
            _, event_id, label = waiting.pop(0)
            pipe.xadd("labels", {"id": event_id, "label": str(label)})
        if i % 500 == 499:
            pipe.execute()
    for _, event_id, label in waiting:
        pipe.xadd("labels", {"id": event_id, "label": str(label)})
    pipe.execute()
    # a label without a score event is known as such once its millisecond is over:
    # end with an entry of a later millisecond (itself a label waiting for its event)
    time.sleep(0.002)
    client.xadd("labels", {"id": "end", "label": "0"})
    return ids


def _text(v):
    return v.decode() if isinstance(v, bytes) else v


def _entries(client, stream):
    return [(_text(i), {_text(k): _text(v) for k, v in f.items()})
            for i, f in client.xrange(stream)]


def _reference(client, specs, key="key", monitor=False, label_timeout_ms=None,
               max_pending=None, max_keys=None, shards=1):
    """The outputs and dead letters of the specification, computed in-process from the
    streams' contents: [(output id, fields)] and [source entry id of each dead letter].
    ``label_timeout_ms`` / ``max_pending``: score events stop waiting for their labels
    (dead letters) as the consumer's docstring says. ``max_keys`` bounds each shard's
    keys (of ``shards``, split by the CRC-32 of the key's text)."""
    import zlib

    from streamcal.monitor import CalibrationMonitor, KeyedCalibrationMonitor

    def pair(i):
        return tuple(map(int, i.split("-")))

    merged = sorted(
        [(pair(i), 0, "events", i, f) for i, f in _entries(client, "events")]
        + [(pair(i), 1, "labels", i, f) for i, f in _entries(client, "labels")]
    )
    by_shard = [([KeyedCalibrator(registry.make_calibrator(s), max_keys=max_keys)
                  for s in specs],
                 KeyedCalibrationMonitor(CalibrationMonitor(), max_keys=max_keys)
                 if monitor else None) for _ in range(shards)]

    def shard(k):
        return by_shard[zlib.crc32(k.encode("utf-8")) % shards]
    pending, early, outputs, dead = {}, {}, [], []

    def learn(event_id, label, out_id):
        score, k, p, _, _ = pending.pop(event_id)
        cals, mon = shard(k)
        for c in cals:
            c.learn_one(k, score, label)
        if mon is not None:
            mon.update(k, p, label)
            if mon.drift_detected:
                outputs.append((out_id, {"id": event_id, "alarm": "1", key: k}))

    for (ms, seq), _, stream, entry_id, f in merged:
        for event_id, (label_ms, label_entry, _) in list(early.items()):
            if label_ms < ms:  # no score event in the label's millisecond
                dead.append(label_entry)
                del early[event_id]
        if label_timeout_ms is not None:
            for event_id, (_, _, _, (event_ms, _), event_entry) in list(pending.items()):
                if event_ms < ms - label_timeout_ms:
                    dead.append(event_entry)
                    del pending[event_id]
        if stream == "events":
            try:
                score = float(f["score"])
                ok = 0.0 <= score <= 1.0 and f.get("id") and key in f and f["id"] not in pending
            except (KeyError, ValueError):
                ok = False
            if not ok:
                dead.append(entry_id)
                continue
            ps = [c.predict_one(f[key], score) for c in shard(f[key])[0]]
            out = {"id": f["id"], "score": f["score"], "p": repr(ps[0]), key: f[key]}
            for spec, p in zip(specs[1:], ps[1:]):
                out[f"p:{registry.canonical_spec(spec)}"] = repr(p)
            outputs.append((f"{ms}-{3 * seq}", out))
            pending[f["id"]] = (score, f[key], ps[0], (ms, seq), entry_id)
            if f["id"] in early:
                learn(f["id"], early.pop(f["id"])[2], f"{ms}-{3 * seq + 1}")
            while max_pending is not None and len(pending) > max_pending:
                oldest = min(pending, key=lambda i: pending[i][3])
                dead.append(pending.pop(oldest)[4])
        elif f.get("label") not in ("0", "1") or not f.get("id") or f["id"] in early:
            dead.append(entry_id)
        elif f["id"] in pending:
            learn(f["id"], int(f["label"]), f"{ms}-{3 * seq + 2}")
        else:
            early[f["id"]] = (ms, entry_id, int(f["label"]))
    return outputs, dead


_BAD = [
    ("events", {"id": "bad-score", "score": "1.5", "key": "k1"}, 10),
    ("events", {"id": "nan-score", "score": "nan", "key": "k1"}, 20),
    ("events", {"id": "no-key", "score": "0.5"}, 30),
    ("events", {"score": "0.5", "key": "k2"}, 40),
    ("events", {"id": "dup", "score": "0.5", "key": "k2"}, 45),  # valid, never labelled
    ("events", {"id": "dup", "score": "0.25", "key": "k2"}, 50),  # "dup" waits: a duplicate
    ("labels", {"id": "e3", "label": "maybe"}, 60),
    ("labels", {"id": "nobody", "label": "1"}, 70),
    ("labels", {"label": "1"}, 80),
]


def _drain(consumer, client, until_applied):
    for _ in range(10_000):
        consumer.step()
        if consumer.n_applied >= until_applied:
            consumer.close()
            return
    raise AssertionError("the consumer did not apply every message")


# ---------------------------------------------------------------------- in-process


@needs_server
@pytest.mark.parametrize("checkpoint_every,n", [(1, 300), (7, 1500), (1000, 1500)])
def test_outputs_match_the_in_process_loop(client, checkpoint_every, n):
    _produce(client, n, seed=checkpoint_every, bad=_BAD)
    specs = ["isotonic", "platt:half_life=200"]
    consumer = Consumer(client, "events", "labels", "out", key="key", calibrators=specs,
                        monitor=True, checkpoint_every=checkpoint_every, batch_size=97)
    _drain(consumer, client, client.xlen("events") + client.xlen("labels"))
    outputs, dead = _reference(client, specs, monitor=True)
    assert _entries(client, "out") == outputs
    assert [f["entry"] for _, f in _entries(client, "out:dead-letters")] == dead
    assert len(dead) == len(_BAD) - 1
    # every message acknowledged, nothing waiting
    for stream in ("events", "labels"):
        assert client.xpending(stream, "streamcal")["pending"] == 0


@needs_server
def test_dead_letters_give_the_reason(client):
    _produce(client, 100, seed=1, bad=_BAD)
    consumer = Consumer(client, "events", "labels", "out", key="key")
    _drain(consumer, client, client.xlen("events") + client.xlen("labels"))
    reasons = {json.loads(f["fields"]).get("id"): f["reason"]
               for _, f in _entries(client, "out:dead-letters")}
    assert reasons["bad-score"] == (
        "The 'score' field of a score event must be a real number in [0, 1]. Got '1.5' instead.")
    assert "'key' field of a score event" in reasons["no-key"]
    assert "duplicate score event" in reasons["dup"]
    assert "matches no score event" in reasons["nobody"]
    assert "'label' field of a label event must be 0, 1, true or false" in reasons["e3"]
    assert consumer.n_dead == len(_BAD) - 1


@needs_server
def test_restart_in_process_continues_exactly(client):
    """Stop after a few steps without committing (a crash), restart: same outputs."""
    _produce(client, 800, seed=3)
    total = client.xlen("events") + client.xlen("labels")
    crashed = Consumer(client, "events", "labels", "out", key="key", checkpoint_every=50,
                       batch_size=64)
    for _ in range(5):
        crashed.step()
    crashed._outputs.append(("0-1", {"never": "committed"}))  # lost with the crash
    restarted = Consumer(client, "events", "labels", "out", key="key", checkpoint_every=50,
                         batch_size=64, consumer="another-name")
    _drain(restarted, client, total)
    assert _entries(client, "out") == _reference(client, ["isotonic"])[0]


@needs_server
def test_two_shards_split_the_keys(client):
    _produce(client, 1000, seed=4, keys=8, bad=_BAD)
    total = client.xlen("events") + client.xlen("labels")
    shards = [Consumer(client, "events", "labels", "out", key="key", shard=(i, 2),
                       consumer=f"c{i}") for i in range(2)]
    for c in shards:
        _drain(c, client, total)
    outputs, dead = _reference(client, ["isotonic"])
    got0, got1 = _entries(client, "out:0"), _entries(client, "out:1")
    assert {f["key"] for _, f in got0}.isdisjoint({f["key"] for _, f in got1})
    assert sorted(got0 + got1) == sorted(outputs)
    dead_got = _entries(client, "out:0:dead-letters") + _entries(client, "out:1:dead-letters")
    assert sorted(f["entry"] for _, f in dead_got) == sorted(dead)


@needs_server
def test_options_of_a_saved_state_must_match(client):
    _produce(client, 50, seed=5)
    _drain(Consumer(client, "events", "labels", "out", key="key"), client, 100)
    other = Consumer(client, "events", "labels", "out", key="key", calibrators=("platt",))
    with pytest.raises(ValueError, match="other options"):
        other.step()


# ---------------------------------------------------------------------- the command


def _command(url, out, group, *extra):
    # no --monitor: importing the monitors imports river.drift and scikit-learn, seconds
    # per restart on a busy machine (the monitor's outputs are tested in-process above)
    return [sys.executable, "-m", "streamcal", "consume", "--redis", url, "--events",
            "events", "--labels", "labels", "--out", out, "--group", group, "--key", "key",
            "--calibrator", "isotonic", "--batch-size", "100",
            "--checkpoint-every", "250", *extra]


def _finished(client, out):
    state = client.get(f"{out}:state")
    if state is None:
        return False
    applied = json.loads(state)["applied"]
    last = {s: _text(client.xrevrange(s, count=1)[0][0]) for s in ("events", "labels")}
    return applied == last


def _run_to_end(url, client, out, group, timeout=120):
    proc = subprocess.Popen(_command(url, out, group), stderr=subprocess.PIPE)
    deadline = time.monotonic() + timeout
    while not _finished(client, out):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err.decode()
    return err.decode()


@needs_server
def test_twenty_kill_9_give_the_uninterrupted_output(server, client):
    """10,000 score events and their labels; 20 ``kill -9`` at random moments (after a
    random amount of progress, plus a random delay), each followed by a restart; the
    output stream and the dead letters equal an uninterrupted run's entry for entry."""
    bad = [(s, f, 300 + 900 * j) for j, (s, f, _) in enumerate(_BAD)]
    _produce(client, 10_000, seed=6, bad=bad)
    total = client.xlen("events") + client.xlen("labels")
    err = _run_to_end(server, client, "base", "g-base")
    assert "stopped after" in err

    rng = random.Random(7)
    marks = sorted(rng.randrange(1, 10_000) for _ in range(20))
    kills = 0
    for mark in marks:
        proc = subprocess.Popen(_command(server, "killed", "g-killed"),
                                stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while client.xlen("killed") < mark and time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            time.sleep(0.002)
        time.sleep(rng.random() * 0.05)
        assert proc.poll() is None, "the consumer exited by itself"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        kills += 1
    assert kills == 20
    _run_to_end(server, client, "killed", "g-killed")

    base, killed = _entries(client, "base"), _entries(client, "killed")
    assert killed == base
    assert _entries(client, "killed:dead-letters") == _entries(client, "base:dead-letters")
    ids = [f["id"] for _, f in base if "alarm" not in f]
    assert len(ids) == len(set(ids)) == 10_001  # with the first "dup"; the second is dead
    assert len(_entries(client, "base:dead-letters")) == len(_BAD) - 1
    assert base == _reference(client, ["isotonic"])[0]
    assert json.loads(client.get("killed:state"))["n_applied"] == total


@needs_server
def test_sigterm_stops_gracefully(server, client):
    _produce(client, 3000, seed=8)
    proc = subprocess.Popen(_command(server, "out", "g"), stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while client.xlen("out") < 500 and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and b"stopped after" in err
    # what it committed is a prefix of the full run, its state matches its outputs
    done = _entries(client, "out")
    state = json.loads(client.get("out:state"))
    assert 0 < len(done) and state["n_applied"] >= len(done)
    _run_to_end(server, client, "out", "g")
    assert _entries(client, "out")[: len(done)] == done
    assert _entries(client, "out") == _reference(client, ["isotonic"])[0]


# ---------------------------------------------------------------------- no server


def test_import_streamcal_does_not_import_redis():
    code = ("import sys, streamcal, streamcal.consumer, streamcal.cli; "
            "assert 'redis' not in sys.modules, 'redis imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_redis_py_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "redis", None)
    with pytest.raises(ImportError, match=r'pip install "streamcal\[redis\]"'):
        connect("redis://127.0.0.1:1/0")


def test_output_ids_increase_in_the_merged_order():
    merged = [("5-0", "events"), ("5-0", "joined"), ("5-0", "labels"), ("5-1", "events"),
              ("6-0", "labels")]
    ids = [tuple(map(int, output_id(i, s).split("-"))) for i, s in merged]
    assert ids == sorted(ids) and len(set(ids)) == 5


def test_shard_of_is_stable_and_spreads():
    assert shard_of("tenant-7", 4) == shard_of("tenant-7", 4)
    assert {shard_of(f"k{i}", 4) for i in range(100)} == {0, 1, 2, 3}


def test_bad_parameters():
    with pytest.raises(ValueError, match="'shard' parameter of Consumer"):
        Consumer(None, "e", "l", "o", shard=(0, 2))  # two shards need a key
    with pytest.raises(ValueError, match="'checkpoint_every' argument of Consumer"):
        Consumer(None, "e", "l", "o", checkpoint_every=0)
    with pytest.raises(ValueError, match="'fields' parameter of Consumer"):
        Consumer(None, "e", "l", "o", fields={"scor": "s"})
    with pytest.raises(ValueError, match="'max_keys' argument of Consumer"):
        Consumer(None, "e", "l", "o", key="k", max_keys=0)
    with pytest.raises(ValueError, match="'max_keys' parameter of Consumer"):
        Consumer(None, "e", "l", "o", max_keys=3)  # bounds keys: needs a key


def test_command_usage_errors_and_missing_extra(monkeypatch, capsys):
    from streamcal.cli import main

    base = ["consume", "--redis", "redis://127.0.0.1:1/0", "--events", "e", "--labels",
            "l", "--out", "o"]
    assert main(base + ["--shard", "2/2", "--key", "k"]) == 2
    assert "argument --shard: must be I/N" in capsys.readouterr().err
    assert main(base + ["--shard", "0/2"]) == 2
    assert "give --key" in capsys.readouterr().err
    assert main(base + ["--max-keys", "3"]) == 2
    assert "argument --max-keys: it bounds the keys' calibrators: give --key" in (
        capsys.readouterr().err)
    assert main(base + ["--max-keys", "0", "--key", "k"]) == 2
    assert "--max-keys" in capsys.readouterr().err
    assert main(base + ["--calibrator", "isotonc"]) == 2
    assert "Unknown calibrator 'isotonc'" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "redis", None)
    assert main(base) == 1
    assert 'pip install "streamcal[redis]"' in capsys.readouterr().err


# ---------------------------------------------------------------------- bounded waiting


@pytest.mark.parametrize("name,value", [("label_timeout_ms", -1), ("max_pending", 0),
                                        ("max_pending", 2.5)])
def test_bounds_are_validated(name, value):
    with pytest.raises((ValueError, TypeError), match=f"'{name}' argument of Consumer"):
        Consumer(None, "events", "labels", "out", **{name: value})


@needs_server
@pytest.mark.parametrize("bounds", [{"max_pending": 7}, {"label_timeout_ms": 0},
                                    {"label_timeout_ms": 1, "max_pending": 12}])
def test_bounded_waiting_matches_the_specification(client, bounds):
    _produce(client, 1500, seed=11, bad=_BAD)
    consumer = Consumer(client, "events", "labels", "out", key="key", checkpoint_every=40,
                        batch_size=97, **bounds)
    total = client.xlen("events") + client.xlen("labels")
    _drain(consumer, client, total)
    outputs, dead = _reference(client, ["isotonic"], **bounds)
    got_dead = _entries(client, "out:dead-letters")
    assert _entries(client, "out") == outputs
    assert [f["entry"] for _, f in got_dead] == dead
    reasons = [f["reason"] for _, f in got_dead]
    limit = "max_pending" if "max_pending" in bounds else "label_timeout_ms"
    assert any(limit in r for r in reasons)  # the bound did drop events here
    assert len(consumer._pending) <= bounds.get("max_pending", total)
    assert len(consumer._waiting) <= 2 * len(consumer._pending) + 64


@needs_server
def test_bounded_waiting_with_shards_and_a_restart(client):
    _produce(client, 1200, seed=12, keys=6, bad=_BAD)
    total = client.xlen("events") + client.xlen("labels")
    crashed = Consumer(client, "events", "labels", "out", key="key", shard=(0, 2),
                       consumer="c0", checkpoint_every=30, batch_size=64, max_pending=9)
    for _ in range(6):
        crashed.step()
    shards = [Consumer(client, "events", "labels", "out", key="key", shard=(i, 2),
                       consumer=f"r{i}", checkpoint_every=30, batch_size=64, max_pending=9)
              for i in range(2)]
    for c in shards:
        _drain(c, client, total)
    outputs, dead = _reference(client, ["isotonic"], max_pending=9)
    assert sorted(_entries(client, "out:0") + _entries(client, "out:1")) == sorted(outputs)
    dead_got = _entries(client, "out:0:dead-letters") + _entries(client, "out:1:dead-letters")
    assert sorted(f["entry"] for _, f in dead_got) == sorted(dead)


@needs_server
def test_a_state_of_format_1_keeps_restoring(client):
    """States written before the bounds existed (no entry ids kept) restore exactly."""
    _produce(client, 900, seed=13, keys=8)
    total = client.xlen("events") + client.xlen("labels")
    first = Consumer(client, "events", "labels", "out", key="key", shard=(1, 2),
                     checkpoint_every=25, batch_size=50)
    for _ in range(8):
        first.step()
    first.close()
    state = json.loads(client.get("out:1:state"))
    assert state["format"] == 2 and state["pending"] and state["foreign"]
    state["format"] = 1
    state["pending"] = {i: v[:3] for i, v in state["pending"].items()}
    state["foreign"] = sorted(state["foreign"])
    client.set("out:1:state", json.dumps(state))
    second = Consumer(client, "events", "labels", "out", key="key", shard=(1, 2),
                      consumer="later", checkpoint_every=25, batch_size=50)
    _drain(second, client, total)
    outputs, _ = _reference(client, ["isotonic"])
    assert _entries(client, "out:1") == [o for o in outputs if shard_of(o[1]["key"], 2) == 1]


@pytest.mark.parametrize("apply, what", [("_apply_event", "score event"), ("_apply_label", "label event")])
@pytest.mark.parametrize("event_id", [None, ""])
def test_an_event_without_an_id_is_a_dead_letter_naming_the_field(apply, what, event_id):
    # score and label events share one id check (issue 14: once written twice)
    consumer = Consumer(None, "e", "l", "o", fields={"id": "event"})
    consumer._fresh()  # the state a started consumer has
    raw = {"score": "0.5", "label": "1"}
    if event_id is not None:
        raw["event"] = event_id
    got = "no such field" if event_id is None else "''"
    with pytest.raises(ValueError, match=(
        f"^The 'event' field of a {what} must be a non-empty str. Got {got} instead.$"
    )):
        getattr(consumer, apply)("1-0", raw)
    assert consumer._pending == {} and not consumer._foreign and consumer._early == {}


# ------------------------------------------------------------- a corrupted saved state

_UNREADABLE = r"^The state saved at 'out:state' is unreadable or invalid: "


def _corrupt(state: bytes) -> dict:
    """Corruptions of a saved state: name -> (the stored bytes, what the error says)."""
    d = json.loads(state)

    def changed(**entries):
        return json.dumps({**d, **entries}).encode()

    missing = json.dumps({k: v for k, v in d.items() if k != "calibrators"}).encode()
    return {
        "truncated": (state[: len(state) // 2], r"it is not JSON \(Expecting"),
        "garbage bytes": (b"\xff\xfe\x00garbage", r"it is not UTF-8 text \(it starts "
                          r"with b'\\xff\\xfe\\x00garbage'\)"),
        "empty": (b"", "it is empty"),
        "not an object": (b"[1, 2]", r"it must be a JSON object. Got \[1, 2\] instead"),
        "missing calibrators": (missing, r"its entry 'calibrators' must be a list of 1 "
                                r"calibrator snapshots \(JSON objects\). Got no such entry"),
        "calibrators 5": (changed(calibrators=5), "its entry 'calibrators' must be a "
                          "list of 1 calibrator snapshots .*Got 5 instead"),
        "calibrator garbage": (changed(calibrators=[{"class": "Nope"}]),
                               r"its entry 'calibrators'\[0\] is not a snapshot of "
                               "KeyedCalibrator: "),
        "pending a list": (changed(pending=[1, 2]), r"its entry 'pending' must be a JSON "
                           r"object: event id -> \[score, key, p, entry id\]. Got \[1, 2\]"),
        "pending score 2": (changed(pending={"e1": [2.0, "k1", 0.5, "1-0"]}),
                            r"its entry 'pending'\['e1'\] must be \[score, key, p, "
                            r"entry id\] with score and p in \[0, 1\].*Got \[2.0, "),
        "applied x-y": (changed(applied={"events": "x-y", "labels": "0-0"}),
                        r"its entry 'applied'\['events'\] must be an entry id 'ms-seq'. "
                        "Got 'x-y' instead"),
        "n_dead -1": (changed(n_dead=-1), "its entry 'n_dead' must be an int >= 0. Got -1"),
        "format 7": (changed(format=7), "its entry 'format' must be 1 or 2. Got 7"),
    }


def _saved_state(client) -> bytes:
    _produce(client, 200, seed=1)
    consumer = Consumer(client, "events", "labels", "out", key="key", checkpoint_every=50)
    for _ in range(3):
        consumer.step()
    consumer.close()
    return client.get("out:state")


@needs_server
def test_a_corrupted_state_is_refused_naming_the_key_and_the_entry(client):
    # each of these gave a raw JSONDecodeError, KeyError, TypeError, AttributeError or
    # ValueError from int(); the state is checked before anything is built from it
    state = _saved_state(client)
    for name, (stored, says) in _corrupt(state).items():
        client.set("out:state", stored)
        consumer = Consumer(client, "events", "labels", "out", key="key")
        with pytest.raises(ValueError, match=_UNREADABLE + says) as info:
            consumer.step()
        assert "delete the state, the output and the group" in str(info.value), name
        assert client.get("out:state") == stored and consumer.n_applied == 0, name
    client.delete("out:state")
    client.hset("out:state", "a", "b")  # gave Redis' WRONGTYPE ResponseError
    with pytest.raises(ValueError, match=_UNREADABLE + "the Redis key holds a hash, not "
                                         "a string"):
        Consumer(client, "events", "labels", "out", key="key").step()


@needs_server
def test_the_command_reports_a_corrupted_state_in_one_line(server, client):
    state = _saved_state(client)
    for stored in (state[:-10], None):
        if stored is None:
            client.delete("out:state")
            client.rpush("out:state", "x")
        else:
            client.set("out:state", stored)
        proc = subprocess.run(
            [sys.executable, "-m", "streamcal", "consume", "--redis", server, "--events",
             "events", "--labels", "labels", "--out", "out", "--key", "key"],
            capture_output=True, text=True, timeout=60)
        assert proc.returncode == 1
        last = proc.stderr.strip().splitlines()[-1]
        assert last.startswith("streamcal consume: ValueError: The state saved at "
                               "'out:state' is unreadable or invalid: "), last
        assert ("it is not JSON" if stored else "holds a list, not a string") in last
        assert "Traceback" not in proc.stderr


# ---------------------------------------------------------------------- bounded keys


@needs_server
def test_bounded_keys_match_the_specification_across_a_restart(client):
    """max_keys: the least recently learnt key is forgotten (calibrator and monitor) and
    starts afresh; a restart from the saved state evicts exactly as one run."""
    _produce(client, 1500, seed=21, keys=9, bad=_BAD)
    total = client.xlen("events") + client.xlen("labels")
    specs = ["isotonic", "platt"]
    options = dict(key="key", calibrators=specs, monitor=True, checkpoint_every=35,
                   batch_size=61, max_keys=3)
    crashed = Consumer(client, "events", "labels", "out", consumer="c0", **options)
    for _ in range(9):
        crashed.step()
    assert crashed._cals[0].n_evicted > 0  # keys were forgotten before the crash
    restarted = Consumer(client, "events", "labels", "out", consumer="c1", **options)
    _drain(restarted, client, total)
    outputs, dead = _reference(client, specs, monitor=True, max_keys=3)
    unbounded, _ = _reference(client, specs, monitor=True)
    assert outputs != unbounded  # the bound changed the predictions
    assert _entries(client, "out") == outputs
    assert [f["entry"] for _, f in _entries(client, "out:dead-letters")] == dead
    assert all(len(c.calibrators) <= 3 for c in restarted._cals)
    # another bound is another configuration: its state is refused
    other = Consumer(client, "events", "labels", "out", consumer="c2",
                     **{**options, "max_keys": 4})
    with pytest.raises(ValueError, match="written by a consumer with"):
        other.step()


@needs_server
def test_bounded_keys_with_shards(client):
    """Each shard bounds its own keys: two shards of max_keys=2 over 9 keys."""
    _produce(client, 1200, seed=22, keys=9)
    total = client.xlen("events") + client.xlen("labels")
    shards = [Consumer(client, "events", "labels", "out", key="key", shard=(i, 2),
                       consumer=f"s{i}", checkpoint_every=45, batch_size=70, max_keys=2)
              for i in range(2)]
    for c in shards:
        _drain(c, client, total)
    assert all(c._cals[0].n_evicted > 0 for c in shards)
    outputs, _ = _reference(client, ["isotonic"], max_keys=2, shards=2)
    assert sorted(_entries(client, "out:0") + _entries(client, "out:1")) == sorted(outputs)
