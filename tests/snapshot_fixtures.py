"""Snapshots written by an earlier version, kept as fixtures, and the behaviour they must
restore to.

Every calibrator, metric and monitor, with each of its ``_unit_test_params()``, learns a
short seeded stream; the fixture keeps its ``to_dict()`` and what it then did: its
outputs at fixed probes, then, while it learnt a further stretch of the stream, its
outputs after each event. ``tests/test_snapshot_fixtures.py`` restores each snapshot with
the current code and requires the same outputs, bit for bit: snapshots written by
earlier versions keep restoring with the meaning they had.

Run as a script to write the fixtures of the current version (only when the snapshot
format changes; the older files stay)::

    python tests/snapshot_fixtures.py tests/fixtures/snapshots-format2.json

or only some classes' (the path family's fixtures live in a file of their own)::

    python tests/snapshot_fixtures.py tests/fixtures/snapshots-format2-path.json PathCalibrator PathECE
"""

from __future__ import annotations

import json
import math
import pathlib
import sys

import numpy as np

import streamcal.calibrators
import streamcal.metrics
import streamcal.monitor
from streamcal.base import BinaryCalibrator, MulticlassCalibrator
from streamcal.checks import calibrators as CB
from streamcal.checks import metrics as CM
from streamcal.checks import monitors as CMon
from streamcal.checks import multiclass as CMC
from streamcal.checks import path as CP
from streamcal.checks._common import concrete_classes
from streamcal.metrics.base import BinaryCalibrationMetric, StreamingMetric
from streamcal.monitor.base import BaseMonitor

#: Events learnt before the snapshot, and after it while outputs are recorded.
N_BEFORE, N_AFTER = 120, 25

#: The fixtures written by the version before ``prior_strength`` existed.
FORMAT2 = pathlib.Path(__file__).parent / "fixtures" / "snapshots-format2.json"


def _families():
    """(family name, classes) of everything that snapshots."""
    metric_bases = {
        StreamingMetric,
        BinaryCalibrationMetric,
        getattr(streamcal.metrics, "MulticlassCalibrationMetric", StreamingMetric),
    }
    return [
        ("binary", concrete_classes(streamcal.calibrators, BinaryCalibrator)),
        ("multiclass", concrete_classes(streamcal.calibrators, MulticlassCalibrator)),
        ("metric", concrete_classes(streamcal.metrics, StreamingMetric, exclude=metric_bases)),
        ("monitor", concrete_classes(streamcal.monitor, BaseMonitor)),
        ("path", [streamcal.calibrators.PathCalibrator]),
    ]


def _plain(x):
    """JSON-safe, key-order-preserving form of an output (dict keys may be ints)."""
    if isinstance(x, dict):
        return [[_plain(k), _plain(v)] for k, v in x.items()]
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return x if math.isfinite(x) else repr(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    return x


def _protocol(events, learn, first, after_each):
    """``before(o)``: ``learn(o, event)`` on the first ``N_BEFORE`` events; ``after(o)``:
    ``first(o)``, then ``after_each(o, event)`` after learning each further event."""

    def before(o):
        for e in events[:N_BEFORE]:
            learn(o, e)

    def after(o):
        out = [first(o)]
        for e in events[N_BEFORE:]:
            learn(o, e)
            out.append(after_each(o, e))
        return out

    return before, after


def _calibrator(events, probes):
    """Binary and multiclass calibrators: the predictions at ``probes``, then the
    prediction at each further event's input after learning it."""
    return _protocol(
        events,
        lambda o, e: o.learn_one(*e),
        lambda o: [o.predict_one(q) for q in probes],
        lambda o, e: o.predict_one(e[0]),
    )


def _binary(obj, seed: int):
    s, y, w = CB.yield_stream(N_BEFORE + N_AFTER, seed)
    inputs = list(CB._inputs(obj, s.tolist()))
    probes = list(CB._inputs(obj, CB.QUERY.tolist()))
    return _calibrator(list(zip(inputs, y.tolist(), w.tolist())), probes)


def _multiclass(obj, seed: int):
    events = CMC._stream(obj, N_BEFORE + N_AFTER, seed)
    return _calibrator(events, [CMC._input(obj, p) for p in CMC._probes(CMC.INT_CLASSES)])


def _path(obj, seed: int):
    events = CP.yield_path_stream(obj.taxonomy, N_BEFORE + N_AFTER, seed)
    return _calibrator(events, CP._probes(obj))


def _metric(obj, seed: int):
    events = CM.yield_events(obj, N_BEFORE + N_AFTER, seed)
    return _protocol(events, lambda o, e: o.update(*e), lambda o: o.get(), lambda o, e: o.get())


def _monitor(obj, seed: int):
    events = CMon.yield_monitor_events(obj, N_BEFORE + N_AFTER, seed)
    drift = lambda o, *_: o.drift_detected  # noqa: E731
    return _protocol(events, lambda o, e: o.update(*e), drift, drift)


PROTOCOLS = {
    "binary": _binary,
    "multiclass": _multiclass,
    "metric": _metric,
    "monitor": _monitor,
    "path": _path,
}


def cases():
    """``(family, class, params, seed)`` of every fixture."""
    for family, classes in _families():
        for klass in classes:
            for i, params in enumerate(klass._unit_test_params()):
                yield family, klass, params, 7 + i


def record(family: str, obj, seed: int) -> dict:
    """The fixture entry of ``obj`` (unfitted) on the stream of ``seed``."""
    before, after = PROTOCOLS[family](obj, seed)
    before(obj)
    snap = obj.to_dict()
    return {
        "family": family,
        "seed": seed,
        "snapshot": snap,
        "outputs": _plain(after(obj)),
    }


def restore(entry: dict):
    """The object restored from ``entry``'s snapshot by its family's base class."""
    base = {
        "binary": BinaryCalibrator,
        "multiclass": MulticlassCalibrator,
        "metric": StreamingMetric,
        "monitor": BaseMonitor,
        "path": streamcal.calibrators.PathCalibrator,
    }[entry["family"]]
    return base.from_dict(entry["snapshot"])


def replay_restored(entry: dict):
    """The outputs of the object restored from ``entry``'s snapshot, recorded as the
    fixture's were."""
    obj = restore(entry)
    _, after = PROTOCOLS[entry["family"]](obj, entry["seed"])
    return _plain(after(obj))


# The multiclass calibrators refit through numpy and scipy (linear algebra, optimisers),
# whose last bits may change between their releases (seen: numpy 2.4 / scipy 1.17 moved
# NAFIR's and the scaling fits' outputs by one or two units in the last place): their
# outputs are compared to this relative tolerance. Every other family: bit for bit.
MULTICLASS_RTOL = 1e-12


def outputs_match(got, expected, rtol: float = 0.0) -> bool:
    """``got == expected``, floats to ``rtol`` relative (nested lists, tuples, dicts)."""
    if isinstance(expected, float) and isinstance(got, float) and rtol:
        return got == expected or abs(got - expected) <= rtol * max(abs(got), abs(expected))
    if isinstance(expected, (list, tuple)) and isinstance(got, (list, tuple)):
        return len(got) == len(expected) and all(
            outputs_match(a, b, rtol) for a, b in zip(got, expected)
        )
    if isinstance(expected, dict) and isinstance(got, dict):
        return got.keys() == expected.keys() and all(
            outputs_match(got[k], expected[k], rtol) for k in expected
        )
    return got == expected


def restored_continues(entry: dict) -> bool:
    """Does the object restored from ``entry`` give the recorded outputs (bit for bit,
    or to :data:`MULTICLASS_RTOL` for the multiclass family)?"""
    rtol = MULTICLASS_RTOL if entry["family"] == "multiclass" else 0.0
    return outputs_match(replay_restored(entry), entry["outputs"], rtol)


def entries_of(classes, path=FORMAT2) -> list:
    """The fixture entries of ``path`` whose snapshot is of one of ``classes`` (names)."""
    return [e for e in json.loads(path.read_text()) if e["snapshot"]["class"] in classes]


def check_restores_without_prior(classes, n_entries: int) -> None:
    """The ``n_entries`` format-2 snapshots of ``classes``, written before
    ``prior_strength`` existed, restore as the calibrator they were: with
    ``prior_strength=0``, their state untouched, continuing exactly as the object that
    wrote them did."""
    entries = entries_of(classes)
    assert len(entries) == n_entries
    for entry in entries:
        snap = entry["snapshot"]
        assert "prior_strength" not in snap["params"]
        cal = restore(entry)
        assert cal.prior_strength == 0.0
        new = cal.to_dict()
        assert new["params"]["prior_strength"] == 0.0 and new["state"] == snap["state"]
        assert restored_continues(entry)


def main(path: str, only=()) -> None:
    entries = [
        record(f, k(**p), seed) for f, k, p, seed in cases() if not only or k.__name__ in only
    ]
    with open(path, "w") as fh:
        json.dump(entries, fh, allow_nan=False, separators=(",", ":"))
        fh.write("\n")
    print(f"{len(entries)} snapshots written to {path}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
