"""Calibrate a live Redis stream of scores, exactly once: :class:`Consumer`, the loop
that ``streamcal consume`` runs and that a service can run itself.

A :class:`Consumer` reads two Redis streams through consumer groups: *score events*
(fields ``id``, ``score`` and, with ``key``, the key) and *label events* (``id``,
``label``). For each score event it writes the calibrated probability to the output
stream (``id``, ``score``, ``p``); when the label of an event arrives (joined by ``id``
with the score events still waiting for theirs, which the state keeps) every calibrator
learns it and, with ``monitor=True``, a calibration monitor watches the published ``p``
against it (an alarm is written to the output stream as an entry with ``alarm=1``).
A malformed message goes to a dead-letter stream with the reason; it never stops the
consumer.

The join. Entry ids of two streams added in the same millisecond are not ordered by
time (each stream numbers its own entries within a millisecond), so a label may come
before its score event in the merged order. It then waits: the score event, when it
comes in the same millisecond, is calibrated first and its label learnt at once. A
label whose score event has not come by the end of its millisecond (or that comes
after the score event's label was learnt) is a dead letter.

Exactly once
------------
- **Deterministic order.** The two input streams are merged by entry id (a score event
  before a label event of the same id), so the sequence of applied messages is a
  function of the streams' contents, not of when they were read. An entry of one stream
  is applied only once the other stream is known complete up to its id: read in the
  same MULTI/EXEC as the server's ``TIME`` and the stream's last generated id, a stream
  drained by the read holds no entry below ``max(last generated id, TIME - 1 ms)``
  that was not delivered, because auto-generated ids (``XADD stream * ...``) only grow.
  Producers must let Redis generate the ids (``*``).
- **One commit.** The outputs, the dead letters, the XACK of the applied entries and
  the JSON snapshot of the whole state (calibrators' and monitor's ``to_dict``, the
  pending score events, the id of the last applied entry of each stream) are written
  in one MULTI/EXEC transaction. Nothing else writes.
- **Restart.** A new consumer loads the snapshot, claims the group's pending entries
  (``XAUTOCLAIM``), re-reads them (delivered, but not acknowledged because their commit
  never ran) and applies them again from the committed state, skipping any entry at
  or below the snapshot's last applied ids. So after a crash at any moment the output
  stream receives exactly the entries an uninterrupted run writes. A snapshot that
  cannot be resumed from (not JSON, a missing or malformed entry, a key of another
  Redis type) is checked before anything is built from it and refused with one
  ValueError naming the Redis key, the entry, what it must be and what it holds.
- **Deterministic output ids.** The output entry of the input entry ``ms-seq`` has id
  ``ms-(3 seq)`` for a score event and ``ms-(3 seq + 2)`` for a label event (an alarm;
  ``+ 1``: the alarm of a score event whose label came first),
  increasing in the merged order: the output stream of a restarted consumer equals an
  uninterrupted run's entry for entry, ids included. Dead letters are numbered
  ``0-1``, ``0-2``, ... in their own stream.
- ``checkpoint_every=N`` commits once at least N messages were applied since the last
  commit, and whenever no more input can be applied right now: outputs are buffered
  until then, so they appear at most N messages late under load and at once when idle.
  A crash loses only the uncommitted buffer, which the restart recomputes.

Bounded state
-------------
The state keeps every score event until its label arrives. Two options bound it, both
decided by the streams' contents alone (entry ids, not the wall clock), so they keep
the exactly-once guarantee and every shard takes the same decisions:

- ``label_timeout_ms=T``: before an entry of millisecond ``ms`` is applied, the score
  events whose entry's millisecond is below ``ms - T`` stop waiting;
- ``max_pending=N``: after a score event is applied, the oldest waiting score events
  (by entry id, over all shards: every shard sees every score event) stop waiting
  while more than ``N`` wait.

A score event that stops waiting is a dead letter (its reason says which limit), and
its label, if it comes later, is one too ("matches no score event"). Without these
options (the default, as in earlier versions) nothing is dropped.

Several consumers
-----------------
``shard=(i, n)`` makes this consumer the ``i``-th of ``n``: it reads both streams in its
own group ``"{group}:{i}"`` (every shard sees every message), applies the score events
whose key hashes (CRC-32 of its text) to ``i`` and the labels of those events, and
writes to ``"{out}:{i}"`` (with its own dead-letter stream and state). Each shard is
thus a single consumer of the whole streams, exactly once as above, and each event is
calibrated by exactly one shard, by the calibrator of its key. Every shard finds the
same malformed messages; the one its entry id hashes to dead-letters it. Run one live process
per shard (two processes on one shard would both write).

Examples
--------
A consumer needs a Redis server; without one the example is skipped:

>>> import redis                                          # doctest: +SKIP
>>> from streamcal.consumer import Consumer
>>> client = redis.Redis.from_url("redis://localhost:6379/0")  # doctest: +SKIP
>>> consumer = Consumer(client, events="scores", labels="labels", out="calibrated",
...                     key="tenant", calibrators=("isotonic", "platt"))  # doctest: +SKIP
>>> consumer.step()      # read, apply, commit: the number of messages applied  # doctest: +SKIP
0

The parts that need no server: the output id of an input entry, and the shard of a key.

>>> output_id("1700000000000-3", "events"), output_id("1700000000000-3", "labels")
('1700000000000-9', '1700000000000-11')
>>> shard_of("tenant-7", 4)
2
"""

from __future__ import annotations

import json
import math
import time
import zlib
from collections import deque

from streamcal import _validation as V

__all__ = ["Consumer", "connect", "output_id", "shard_of"]

_OWNER = "Consumer"
_FORMAT = 2  # 2: pending score events keep their entry id; foreign ids are a dict
_MAX_ID = (2**64 - 1, 2**64 - 1)
_ABSENT = object()  # an entry missing from a saved state
_FIELDS = {"id": "id", "score": "score", "label": "label", "p": "p"}
_LABELS = {"0": 0, "1": 1, "0.0": 0, "1.0": 1, "false": 0, "true": 1}
_BIT = {"events": 0, "labels": 1}
_SLOT = {"events": 0, "joined": 1, "labels": 2}  # output id = ms-(3 seq + slot)


def connect(url: str):
    """A redis-py client for ``url`` (``redis://host:port/db``); a clear ImportError
    naming the extra to install when redis-py is missing."""
    try:
        import redis
    except ImportError:
        raise ImportError(
            'streamcal.consumer needs redis-py, which is not installed: '
            'pip install "streamcal[redis]"'
        ) from None
    return redis.Redis.from_url(url)


def _parse_id(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def _format_id(pair: tuple[int, int]) -> str:
    return f"{pair[0]}-{pair[1]}"


def output_id(entry_id: str, stream: str) -> str:
    """The id of the output of input entry ``entry_id`` of ``stream``: ``"events"`` (the
    calibrated probability), ``"labels"`` (an alarm on learning the label) or
    ``"joined"`` (an alarm on a score event whose label came first in the same
    millisecond): increasing in the merged order of the two streams."""
    ms, seq = _parse_id(entry_id)
    return f"{ms}-{3 * seq + _SLOT[stream]}"


def shard_of(key: str, n_shards: int) -> int:
    """The shard, in ``range(n_shards)``, of a key (or of an id): CRC-32 of its UTF-8
    text, modulo ``n_shards``; the same in every process (unlike ``hash``)."""
    return zlib.crc32(str(key).encode("utf-8")) % n_shards


def _text(value) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def _fields(raw) -> dict:
    return {_text(k): _text(v) for k, v in (raw or {}).items()}


def _parse_score(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        value = math.nan
    if not 0.0 <= value <= 1.0:
        raise ValueError
    return value


class Consumer:
    """Calibrate the score events of a Redis stream and learn their labels, exactly once.

    Parameters
    ----------
    client
        A redis-py client (``redis.Redis``; :func:`connect` builds one from a URL).
    events, labels, out
        The names of the stream of score events, of label events and of the outputs.
    group
        The consumer group read on both input streams (created at the start if
        missing, from the streams' beginning).
    consumer
        This consumer's name in the group.
    key
        The field of a score event holding its key (a tenant, a segment): one
        calibrator (and monitor) per key (:class:`streamcal.KeyedCalibrator`). None:
        one calibrator for all events.
    calibrators
        Calibrator specs (:mod:`streamcal.registry`, e.g. ``"isotonic:window_size=5000"``).
        The first one's probability is the field ``p``; each other one's is
        ``p:<spec>``.
    monitor
        Watch the published ``p`` against the labels with a
        :class:`streamcal.monitor.CalibrationMonitor` (one per key with ``key``); an
        alarm is an output entry with the fields ``id``, ``alarm`` (1) and the key.
    checkpoint_every
        Commit (outputs, acknowledgements and state together) once this many messages
        were applied since the last commit, and whenever no more input can be applied.
    fields
        Renamed fields: a dict from ``"id"``, ``"score"``, ``"label"``, ``"p"`` to the
        names used in the streams.
    shard
        ``(i, n)``: this consumer is shard ``i`` of ``n`` (see the module docstring);
        ``n > 1`` needs ``key``.
    batch_size
        Entries read from each stream per read.
    block_ms
        How long a read waits for new entries when there is nothing to do.
    label_timeout_ms
        None, or an int >= 0: a score event whose label has not come within this many
        milliseconds of entry-id time stops waiting (a dead letter; see the module
        docstring, "Bounded state").
    max_pending
        None, or an int >= 1: at most this many score events (of all shards) wait for
        their labels; the oldest beyond it stops waiting (a dead letter).
    max_keys
        None, or an int >= 1 (needs ``key``): at most this many keys keep a calibrator
        (and a monitor) in this consumer's state; past it, the key learnt least recently
        is forgotten and, if it comes back, starts afresh (``max_keys`` of
        :class:`streamcal.KeyedCalibrator`). The order is the applied messages', so a
        restart evicts exactly as an uninterrupted run.

    Attributes
    ----------
    out_stream, dead_letter_stream, state_key, group_name
        Where this consumer writes and what it reads as (shard-suffixed when ``n > 1``).
    n_applied, n_dead
        Messages applied and dead-lettered, since the start of the streams.

    Notes
    -----
    A score event whose id is still waiting for its label is a dead letter (a
    duplicate), as is a label without a score event (see the module docstring). The
    state keeps every score event until its label arrives unless ``label_timeout_ms``
    or ``max_pending`` bounds it: an event waiting holds its id, score, key and
    published probability (about 300 bytes of process memory).
    """

    def __init__(
        self,
        client,
        events: str,
        labels: str,
        out: str,
        group: str = "streamcal",
        consumer: str = "consumer-1",
        key: str | None = None,
        calibrators=("isotonic",),
        monitor: bool = False,
        checkpoint_every: int = 1000,
        fields: dict | None = None,
        shard: tuple[int, int] = (0, 1),
        batch_size: int = 500,
        block_ms: int = 100,
        label_timeout_ms: int | None = None,
        max_pending: int | None = None,
        max_keys: int | None = None,
    ):
        from streamcal import registry

        self.client = client
        self.events, self.labels, self.out = events, labels, out
        self.group, self.consumer, self.key = group, consumer, key
        self.calibrators = tuple(calibrators)
        self.monitor = bool(monitor)
        self.checkpoint_every = V.check_int(checkpoint_every, _OWNER, "checkpoint_every", 1)
        self.batch_size = V.check_int(batch_size, _OWNER, "batch_size", 1)
        self.block_ms = V.check_int(block_ms, _OWNER, "block_ms", 0)
        self.label_timeout_ms = V.check_int(label_timeout_ms, _OWNER, "label_timeout_ms", 0,
                                            allow_none=True)
        self.max_pending = V.check_int(max_pending, _OWNER, "max_pending", 1, allow_none=True)
        self.max_keys = V.check_int(max_keys, _OWNER, "max_keys", 1, allow_none=True)
        V.check_param(_OWNER, "max_keys", max_keys, max_keys is None or key is not None,
                      "None without key (one calibrator for all events)")
        unknown = set(fields or ()) - set(_FIELDS)
        V.check_param(_OWNER, "fields", fields, not unknown,
                      "a dict with keys among {'id', 'score', 'label', 'p'}")
        self.fields = {**_FIELDS, **(fields or {})}
        i, n = shard
        V.check_param(_OWNER, "shard", shard, V.is_integer(n) and n >= 1
                      and V.is_integer(i) and 0 <= i < n and (n == 1 or key is not None),
                      "a pair (i, n) with 0 <= i < n, and n == 1 unless key is given")
        self.shard = (int(i), int(n))
        V.check_param(_OWNER, "calibrators", calibrators, len(self.calibrators) >= 1,
                      "a non-empty sequence of calibrator specs")
        self._specs = [registry.canonical_spec(s) for s in self.calibrators]
        suffix = "" if n == 1 else f":{i}"
        self.out_stream = out + suffix
        self.dead_letter_stream = f"{out}{suffix}:dead-letters"
        self.state_key = f"{out}{suffix}:state"
        self.group_name = group + suffix
        self._ready = False

    # ------------------------------------------------------------------ state

    def _config(self) -> dict:
        config = {
            "events": self.events, "labels": self.labels, "key": self.key,
            "calibrators": self._specs, "monitor": self.monitor,
            "fields": self.fields, "shard": list(self.shard),
        }
        # the bounds enter the configuration only when set: states saved before they
        # existed restore into a consumer without them
        if self.label_timeout_ms is not None:
            config["label_timeout_ms"] = self.label_timeout_ms
        if self.max_pending is not None:
            config["max_pending"] = self.max_pending
        if self.max_keys is not None:
            config["max_keys"] = self.max_keys
        return config

    def _fresh(self) -> None:
        from streamcal import KeyedCalibrator, registry
        from streamcal.monitor import CalibrationMonitor, KeyedCalibrationMonitor

        cals = [registry.make_calibrator(s) for s in self._specs]
        if self.key is not None:
            cals = [KeyedCalibrator(c, max_keys=self.max_keys) for c in cals]
        self._cals = cals
        self._monitor = None
        if self.monitor:
            m = CalibrationMonitor()
            self._monitor = (KeyedCalibrationMonitor(m, max_keys=self.max_keys)
                             if self.key is not None else m)
        self._pending: dict = {}  # id -> [score, key, p, entry id] of this shard's events
        self._foreign: dict = {}  # id -> entry id of the other shards' score events
        self._waiting: deque = deque()  # ((ms, seq), id) of both, by entry id; may hold
        # ids no longer waiting (labelled), skipped when they reach the head
        self._early: dict = {}  # id -> [entry id, label, fields] of labels before their score
        self._applied = {"events": (0, 0), "labels": (0, 0)}
        self.n_applied = self.n_dead = 0

    def _snapshot(self) -> str:
        return json.dumps({
            "format": _FORMAT,
            "config": self._config(),
            "applied": {s: _format_id(v) for s, v in self._applied.items()},
            "calibrators": [c.to_dict() for c in self._cals],
            "monitor": None if self._monitor is None else self._monitor.to_dict(),
            "pending": self._pending,
            "foreign": self._foreign,
            "early": self._early,
            "n_applied": self.n_applied,
            "n_dead": self.n_dead,
        }, separators=(",", ":"))

    def _state_error(self, why: str) -> ValueError:
        return ValueError(
            f"The state saved at {self.state_key!r} is unreadable or invalid: {why}. "
            "It cannot be resumed from: restore a good copy, or delete the state, the "
            "output and the group to start over."
        )

    def _entry_error(self, entry: str, domain: str, value) -> ValueError:
        got = "no such entry" if value is _ABSENT else V.format_value(value)
        return self._state_error(f"its entry {entry} must be {domain}. Got {got} instead")

    def _decode_state(self, text) -> dict:
        """The saved JSON as a dict whose entries :meth:`_restore` can use, or the
        ValueError naming the Redis key and what is wrong."""
        if isinstance(text, bytes):
            try:
                text = text.decode("utf-8")
            except UnicodeDecodeError:
                raise self._state_error(
                    f"it is not UTF-8 text (it starts with {V.format_value(text[:40])})"
                ) from None
        if not text.strip():
            raise self._state_error("it is empty, not the JSON text a consumer saves")
        try:
            d = json.loads(text)
        except ValueError as exc:  # JSONDecodeError, or a number too long to parse
            raise self._state_error(
                f"it is not JSON ({exc}; it starts with {V.format_value(text[:40])})"
            ) from None
        if not isinstance(d, dict):
            raise self._state_error(
                f"it must be a JSON object. Got {V.format_value(d)} instead")
        if d.get("format") not in (1, _FORMAT):
            raise self._entry_error("'format'", f"1 or {_FORMAT}", d.get("format", _ABSENT))
        if not isinstance(d.get("config"), dict):
            raise self._entry_error("'config'", "a JSON object (the consumer's options)",
                                    d.get("config", _ABSENT))
        return d

    def _check_state(self, d: dict) -> None:
        """Every entry of a decoded state of this consumer's options, checked before
        anything is built from it: the ValueError names the first bad one."""
        fmt = d["format"]
        d = {name: d.get(name, _ABSENT) for name in (
            "applied", "calibrators", "monitor", "pending", "foreign", "early", "n_applied",
            "n_dead")}

        def is_id(v):
            if not isinstance(v, str):
                return False
            ms, dash, seq = v.partition("-")
            return (dash == "-" and ms.isascii() and ms.isdigit() and seq.isascii()
                    and seq.isdigit() and int(ms) <= _MAX_ID[0] and int(seq) <= _MAX_ID[1])

        def is_prob(v):
            return V.is_real(v) and not isinstance(v, bool) and 0.0 <= v <= 1.0

        def count(v):
            return V.is_integer(v) and not isinstance(v, bool) and v >= 0

        ID = "an entry id 'ms-seq'"
        applied = d["applied"]
        if not (isinstance(applied, dict) and set(applied) == set(_BIT)):
            raise self._entry_error("'applied'", "a JSON object {'events': id, 'labels': "
                                    "id}", applied)
        for s, v in applied.items():
            if not is_id(v):
                raise self._entry_error(f"'applied'[{s!r}]", ID, v)
        cals = d["calibrators"]
        if not (isinstance(cals, list) and len(cals) == len(self._cals)
                and all(isinstance(c, dict) for c in cals)):
            raise self._entry_error("'calibrators'", f"a list of {len(self._cals)} "
                                    "calibrator snapshots (JSON objects)", cals)
        if self.monitor and not isinstance(d["monitor"], dict):
            raise self._entry_error("'monitor'", "a monitor snapshot (a JSON object)",
                                    d["monitor"])
        key_ok = (lambda k: isinstance(k, str)) if self.key is not None else (
            lambda k: k is None)
        key_domain = "a str (the key)" if self.key is not None else "null (no key)"
        pending = d["pending"]
        n = 4 if fmt == _FORMAT else 3
        shape = "[score, key, p, entry id]" if n == 4 else "[score, key, p]"
        if not isinstance(pending, dict):
            raise self._entry_error("'pending'", f"a JSON object: event id -> {shape}",
                                    pending)
        for i, v in pending.items():
            if not (isinstance(v, list) and len(v) == n and is_prob(v[0])
                    and key_ok(v[1]) and is_prob(v[2]) and (n == 3 or is_id(v[3]))):
                raise self._entry_error(
                    f"'pending'[{i!r}]", f"{shape} with score and p in [0, 1], key "
                    f"{key_domain}" + (f", entry id {ID}" if n == 4 else ""), v)
        foreign = d["foreign"]
        if fmt == _FORMAT:
            ok = isinstance(foreign, dict) and all(is_id(v) for v in foreign.values())
            domain = f"a JSON object: event id -> {ID}"
        else:
            ok = isinstance(foreign, (list, dict)) and all(isinstance(v, str) for v in foreign)
            domain = "a list of event ids"
        if not ok:
            raise self._entry_error("'foreign'", domain, foreign)
        early = d["early"]
        if not isinstance(early, dict):
            raise self._entry_error("'early'", "a JSON object: event id -> [entry id, "
                                    "label, fields]", early)
        for i, v in early.items():
            if not (isinstance(v, list) and len(v) == 3 and is_id(v[0])
                    and v[1] in (0, 1) and not isinstance(v[1], (bool, float))
                    and isinstance(v[2], dict)):
                raise self._entry_error(f"'early'[{i!r}]", f"[entry id, label, fields] "
                                        f"with {ID}, a label 0 or 1, fields an object", v)
        for name in ("n_applied", "n_dead"):
            if not count(d[name]):
                raise self._entry_error(repr(name), "an int >= 0", d[name])

    def _from_snapshot(self, entry: str, cls, snapshot):
        """``cls.from_dict(snapshot)``, a snapshot error naming the state's entry."""
        try:
            return cls.from_dict(snapshot)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
            raise self._state_error(f"its entry {entry} is not a snapshot of "
                                    f"{cls.__name__}: {exc}") from None

    def _restore(self, text) -> None:
        d = self._decode_state(text)
        if d["config"] != json.loads(json.dumps(self._config())):
            raise ValueError(
                f"The state saved at {self.state_key!r} was written by a consumer with "
                f"other options ({d.get('config')!r}); this one has {self._config()!r}. "
                "Use another output stream, or delete the state, the output and the "
                "group to start over."
            )
        self._check_state(d)
        self._cals = [self._from_snapshot(f"'calibrators'[{i}]", type(c), s)
                      for i, (c, s) in enumerate(zip(self._cals, d["calibrators"]))]
        if self._monitor is not None:
            self._monitor = self._from_snapshot("'monitor'", type(self._monitor),
                                                d["monitor"])
        self._applied = {s: _parse_id(v) for s, v in d["applied"].items()}
        self._pending, self._foreign = d["pending"], d["foreign"]
        if d["format"] == 1:  # no entry ids kept: the last applied one bounds them
            stamp = d["applied"]["events"]
            self._pending = {i: v + [stamp] for i, v in self._pending.items()}
            self._foreign = dict.fromkeys(self._foreign, stamp)
        self._waiting = deque(sorted(
            [(_parse_id(v[3]), i) for i, v in self._pending.items()]
            + [(_parse_id(v), i) for i, v in self._foreign.items()]))
        self._early = d["early"]
        self.n_applied, self.n_dead = d["n_applied"], d["n_dead"]

    def _start(self) -> None:
        """Create the groups, load the state, claim the group's pending entries."""
        import redis

        client = self.client
        self._fresh()  # imports the calibrators first: the groups appear once ready
        for stream in (self.events, self.labels):
            try:
                client.xgroup_create(stream, self.group_name, id="0", mkstream=True)
            except redis.exceptions.ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise
        try:
            saved = client.get(self.state_key)
        except redis.exceptions.ResponseError as exc:  # WRONGTYPE: not a string
            kind = _text(client.type(self.state_key))
            raise self._state_error(
                f"the Redis key holds a {kind}, not a string (the JSON text a consumer "
                f"saves): {exc}") from None
        if saved is not None:
            self._restore(saved)
        for stream in (self.events, self.labels):  # a previous consumer's pending entries
            start = "0-0"
            while True:
                reply = client.xautoclaim(stream, self.group_name, self.consumer, 0,
                                          start_id=start, count=1000)
                start = _text(reply[0])
                if start == "0-0":
                    break
        # re-read this consumer's pending entries (after the applied ones) first
        self._cursor = {s: _format_id(self._applied[s]) for s in _BIT}
        self._complete = {s: self._applied[s] for s in _BIT}
        self._buffer = {"events": [], "labels": []}
        self._uncommitted = 0
        self._outputs, self._dead, self._acks = [], [], {"events": [], "labels": []}
        self._last_generated = {"events": "0-0", "labels": "0-0"}
        self._ready = True

    # ------------------------------------------------------------------ reading

    def _read(self) -> int:
        """One read of both streams, atomic with the server time and the streams' last
        ids: buffers the entries, advances how far each stream is known complete."""
        names = {"events": self.events, "labels": self.labels}
        pipe = self.client.pipeline(transaction=True)
        pipe.time()
        for s in _BIT:
            pipe.xinfo_stream(names[s])
        pipe.xreadgroup(self.group_name, self.consumer,
                        {names[s]: self._cursor[s] for s in _BIT}, count=self.batch_size)
        now, info_e, info_l, reply = pipe.execute()
        now_bound = (int(now[0]) * 1000 + int(now[1]) // 1000 - 1, _MAX_ID[1])
        got = {names[s]: [] for s in _BIT}
        if isinstance(reply, dict):  # RESP3
            reply = list(reply.items())
        for stream, entries in reply or ():
            got[_text(stream)] = entries
        n = 0
        self._more = any(len(got[names[s]]) >= self.batch_size for s in _BIT)
        for s, info in (("events", info_e), ("labels", info_l)):
            generated = _text(info["last-generated-id"] if "last-generated-id" in info
                              else info[b"last-generated-id"])
            self._last_generated[s] = generated
            entries = got[names[s]]
            last = None
            for entry_id, raw in entries:
                entry_id = _text(entry_id)
                last = _parse_id(entry_id)
                if raw is None:  # deleted before it was read
                    self._acks[s].append(entry_id)
                    continue
                if last <= self._applied[s]:  # applied and committed already
                    self._acks[s].append(entry_id)
                    continue
                self._buffer[s].append((last, entry_id, raw))
                n += 1
            live = self._cursor[s] == ">"
            if last is not None and not live:
                self._cursor[s] = _format_id(last)
            if len(entries) < self.batch_size:
                if live:  # drained: every entry up to now is delivered
                    bound = max(_parse_id(generated), now_bound)
                    self._complete[s] = max(self._complete[s], bound)
                else:  # this consumer's pending entries are all re-read
                    self._cursor[s] = ">"
                    if last is not None:
                        self._complete[s] = max(self._complete[s], last)
            elif last is not None:
                self._complete[s] = max(self._complete[s], last)
        return n

    # ------------------------------------------------------------------ applying

    def _next(self):
        """The next entry of the merged order if it can be applied now, else None."""
        ev, lab = self._buffer["events"], self._buffer["labels"]
        if ev and (not lab or ev[0][0] <= lab[0][0]):
            s, other = "events", "labels"
        elif lab:
            s, other = "labels", "events"
        else:
            return None
        head = self._buffer[s][0]
        if self._complete[other] < head[0]:
            return None
        self._buffer[s].pop(0)
        return s, head

    def _dead_letter(self, s: str, entry_id: str, raw: dict, reason: str) -> None:
        self._dead.append((f"0-{self.n_dead + 1}", {
            "stream": self.events if s == "events" else self.labels,
            "entry": entry_id,
            "reason": reason,
            "fields": json.dumps(raw, sort_keys=True),
        }))
        self.n_dead += 1

    def _apply(self, s: str, entry) -> None:
        pair, entry_id, raw = entry
        raw = _fields(raw)
        if self._early:
            self._expire(pair[0])
        if self.label_timeout_ms is not None:
            self._stop_waiting(pair[0] - self.label_timeout_ms, None)
        try:
            if s == "events":
                self._apply_event(entry_id, raw)
            else:
                self._apply_label(entry_id, raw)
        except ValueError as exc:  # every shard sees it: the shard of its entry id writes it
            if shard_of(entry_id, self.shard[1]) == self.shard[0]:
                self._dead_letter(s, entry_id, raw, str(exc))
        self._applied[s] = pair
        self._acks[s].append(entry_id)
        self.n_applied += 1
        self._uncommitted += 1

    def _expire(self, ms: int) -> None:
        """Dead-letter the waiting labels of a millisecond before ``ms``."""
        for event_id in list(self._early):
            label_entry, _, raw = self._early[event_id]
            if _parse_id(label_entry)[0] >= ms:
                break  # the rest came later (the dict keeps the merged order)
            del self._early[event_id]
            i, n = self.shard
            if shard_of(label_entry, n) == i:
                self._dead_letter("labels", label_entry, raw, (
                    f"The label event of id {event_id!r} matches no score event (never "
                    "sent, already labelled, or sent after the label)."))

    def _entry_of(self, event_id: str):
        """The entry id of a waiting score event, None if it does not wait."""
        v = self._pending.get(event_id)
        return v[3] if v is not None else self._foreign.get(event_id)

    def _stop_waiting(self, before_ms, keep) -> None:
        """Drop the oldest waiting score events: those of a millisecond below
        ``before_ms``, or (``before_ms`` None) all but the ``keep`` newest."""
        waiting = self._waiting
        while waiting:
            (ms, seq), event_id = waiting[0]
            entry_id = self._entry_of(event_id)
            if entry_id is None or _parse_id(entry_id) != (ms, seq):
                waiting.popleft()  # labelled (or a later event reusing the id)
                continue
            if before_ms is not None:
                if ms >= before_ms:
                    break
                reason = (f"The score event of id {event_id!r} got no label within "
                          f"label_timeout_ms={self.label_timeout_ms}.")
            else:
                if len(self._pending) + len(self._foreign) <= keep:
                    break
                reason = (f"The score event of id {event_id!r} stopped waiting for its "
                          f"label: more than max_pending={self.max_pending} score events "
                          "were waiting.")
            waiting.popleft()
            if self._foreign.pop(event_id, None) is None:
                score, key, p, _ = self._pending.pop(event_id)
                raw = {self.fields["id"]: event_id, self.fields["score"]: repr(score)}
                if key is not None:
                    raw[self.key] = key
                self._dead_letter("events", entry_id, raw, reason)

    def _wait(self, event_id: str, entry_id: str) -> None:
        """``event_id`` (applied by this shard or not) waits for its label."""
        waiting = self._waiting
        waiting.append((_parse_id(entry_id), event_id))
        if len(waiting) > 2 * (len(self._pending) + len(self._foreign)) + 64:
            # most of the queue is labelled events: keep it in proportion to the state
            self._waiting = deque(
                item for item in waiting if self._entry_of(item[1]) is not None
                and _parse_id(self._entry_of(item[1])) == item[0])
        if self.max_pending is not None:
            self._stop_waiting(None, self.max_pending)

    def _learn(self, event_id: str, label: int, alarm_id: str) -> None:
        score, key, p, _ = self._pending.pop(event_id)
        for c in self._cals:
            if key is None:
                c.learn_one(score, label)
            else:
                c.learn_one(key, score, label)
        if self._monitor is not None:
            if key is None:
                self._monitor.update(p, label)
            else:
                self._monitor.update(key, p, label)
            if self._monitor.drift_detected:
                alarm = {self.fields["id"]: event_id, "alarm": "1"}
                if key is not None:
                    alarm[self.key] = key
                self._outputs.append((alarm_id, alarm))

    def _event_id(self, raw: dict, what: str) -> str:
        """The id of a score or label event, or the ValueError naming the field."""
        event_id = raw.get(self.fields["id"])
        if event_id is None or event_id == "":
            raise V.field_error(what, self.fields["id"], "a non-empty str", event_id)
        return event_id

    def _apply_event(self, entry_id: str, raw: dict) -> None:
        f = self.fields
        event_id = self._event_id(raw, "score event")
        text = raw.get(f["score"])
        try:
            score = _parse_score(text)
        except ValueError:
            raise V.field_error("score event", f["score"], V.SCORE_DOMAIN, text) from None
        key = None
        if self.key is not None:
            key = raw.get(self.key)
            if key is None:
                raise V.field_error("score event", self.key, "a str (the key)", None)
        if event_id in self._pending or event_id in self._foreign:
            raise ValueError(
                f"The score event id {event_id!r} is already waiting for its label: a "
                "duplicate score event."
            )
        i, n = self.shard
        if n > 1 and shard_of(key, n) != i:
            if self._early.pop(event_id, None) is None:
                self._foreign[event_id] = entry_id
                self._wait(event_id, entry_id)
            return
        if key is None:
            ps = [c.predict_one(score) for c in self._cals]
        else:
            ps = [c.predict_one(key, score) for c in self._cals]
        out = {f["id"]: event_id, f["score"]: text, f["p"]: repr(ps[0])}
        for spec, p in zip(self._specs[1:], ps[1:]):
            out[f"{f['p']}:{spec}"] = repr(p)
        if key is not None:
            out[self.key] = key
        self._outputs.append((output_id(entry_id, "events"), out))
        self._pending[event_id] = [score, key, ps[0], entry_id]
        early = self._early.pop(event_id, None)
        if early is not None:  # its label came first, in the same millisecond
            self._learn(event_id, early[1], output_id(entry_id, "joined"))
        else:
            self._wait(event_id, entry_id)

    def _apply_label(self, entry_id: str, raw: dict) -> None:
        f = self.fields
        event_id = self._event_id(raw, "label event")
        text = raw.get(f["label"])
        label = _LABELS.get(text.strip().lower() if text is not None else None)
        if label is None:
            raise V.field_error("label event", f["label"], "0, 1, true or false", text)
        if event_id in self._foreign:
            del self._foreign[event_id]
            return
        if event_id in self._pending:
            self._learn(event_id, label, output_id(entry_id, "labels"))
            return
        if event_id in self._early:
            raise ValueError(
                f"The label event of id {event_id!r} repeats a label still waiting for "
                "its score event: a duplicate label event."
            )
        self._early[event_id] = [entry_id, label, raw]  # waits for its score event

    # ------------------------------------------------------------------ committing

    def _commit(self) -> None:
        """Outputs, dead letters, acknowledgements and the state, in one MULTI/EXEC."""
        if not (self._uncommitted or self._acks["events"] or self._acks["labels"]):
            return
        pipe = self.client.pipeline(transaction=True)
        for entry_id, fields in self._outputs:
            pipe.xadd(self.out_stream, fields, id=entry_id)
        for entry_id, fields in self._dead:
            pipe.xadd(self.dead_letter_stream, fields, id=entry_id)
        for s, name in (("events", self.events), ("labels", self.labels)):
            if self._acks[s]:
                pipe.xack(name, self.group_name, *self._acks[s])
        pipe.set(self.state_key, self._snapshot())
        pipe.execute()
        self._outputs, self._dead, self._acks = [], [], {"events": [], "labels": []}
        self._uncommitted = 0

    # ------------------------------------------------------------------ the loop

    def step(self) -> int:
        """Read once, apply every message that can be applied, committing every
        ``checkpoint_every`` messages and at the end; return how many were applied.
        Waits up to ``block_ms`` for new entries when there was nothing to apply."""
        if not self._ready:
            self._start()
        n_read = self._read()
        applied = 0
        while True:
            nxt = self._next()
            if nxt is None:
                break
            self._apply(*nxt)
            applied += 1
            if self._uncommitted >= self.checkpoint_every:
                self._commit()
        if not self._more:
            self._commit()  # nothing more to apply right now: publish what is done
        if n_read or applied:
            return applied
        if self._buffer["events"] or self._buffer["labels"]:
            time.sleep(0.001)  # waiting for the server clock to pass the buffered ids
        elif self.block_ms:
            self.client.xread(
                {self.events: self._last_generated["events"],
                 self.labels: self._last_generated["labels"]},
                count=1, block=self.block_ms,
            )
        return applied

    def run(self, stop_event=None) -> None:
        """Call :meth:`step` until ``stop_event`` (a ``threading.Event``, or anything
        with ``is_set()``) is set; then commit what was applied and return."""
        while stop_event is None or not stop_event.is_set():
            self.step()
        if self._ready:
            self._commit()

    def close(self) -> None:
        """Commit what was applied (nothing is lost without it: the rest is re-read)."""
        if self._ready:
            self._commit()

    def __repr__(self) -> str:
        return (f"Consumer(events={self.events!r}, labels={self.labels!r}, "
                f"out={self.out_stream!r}, group={self.group_name!r}, "
                f"consumer={self.consumer!r}, key={self.key!r}, "
                f"calibrators={self.calibrators!r}, monitor={self.monitor}"
                + ("" if self.label_timeout_ms is None else
                   f", label_timeout_ms={self.label_timeout_ms}")
                + ("" if self.max_pending is None else f", max_pending={self.max_pending}")
                + ")")
