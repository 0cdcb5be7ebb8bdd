"""The compiled kernels and the calibeating shells split by idea (issue 14, part F):
pickles written before the split name the old module paths, and must still load, bit
for bit; the public names keep their homes' aliases.

A pickle of protocol 0 names each class as ``module\\nname\\n`` (GLOBAL opcode), so
writing the old module path in place of the new one gives exactly the bytes the
previous version wrote.
"""

import importlib
import pickle

import pytest

from streamcal.calibrators import (
    EpsilonCalibratedForecaster,
    HedgingCalibeater,
    MultiCalibeater,
    TrackingCalibeater,
)
from streamcal.metrics import ECE, ROCAUC, Brier, CalibrationRefinement

# (new module, old module) of every class that moved
MOVED = [
    ("streamcal.core._calibeating_kernels", "streamcal.core._calibeating"),
    ("streamcal.metrics._kernels_refinement", "streamcal.metrics._kernels"),
    ("streamcal.metrics._kernels_ranking", "streamcal.metrics._kernels"),
    ("streamcal.calibrators.foster", "streamcal.calibrators.calibeating"),
    ("streamcal.calibrators.multi_calibeating", "streamcal.calibrators.calibeating"),
    ("streamcal.calibrators._calibeating_common", "streamcal.calibrators.calibeating"),
]


def _as_old_pickle(obj):
    data = pickle.dumps(obj, protocol=0)
    for new, old in MOVED:
        data = data.replace(b"c" + new.encode() + b"\n", b"c" + old.encode() + b"\n")
    return data


def _stream(n=300):
    import random

    rng = random.Random(7)
    xs = [rng.random() for _ in range(n)]
    return xs, [int(rng.random() < x) for x in xs]


@pytest.mark.parametrize(
    "make",
    [
        TrackingCalibeater,
        lambda: HedgingCalibeater(seed=3),
        lambda: EpsilonCalibratedForecaster(seed=3),
    ],
)
def test_old_pickles_of_calibeaters_load_and_continue(make):
    xs, ys = _stream()
    a = make()
    for x, y in zip(xs[:200], ys[:200]):
        a.learn_one(x, y)
    data = _as_old_pickle(a)
    new_paths = [new.encode() + b"\n" for new, _ in MOVED]
    assert not any(p in data for p in new_paths)  # only the old paths are named
    b = pickle.loads(data)
    for x, y in zip(xs[200:], ys[200:]):
        assert a.predict_one(x) == b.predict_one(x)
        a.learn_one(x, y)
        b.learn_one(x, y)


def test_old_pickle_of_multi_calibeater_loads():
    xs, ys = _stream()
    a = MultiCalibeater(n_experts=2)
    for x, y in zip(xs[:200], ys[:200]):
        a.learn_one((x, 1.0 - x), y)
    b = pickle.loads(_as_old_pickle(a))
    for x, y in zip(xs[200:], ys[200:]):
        assert a.predict_one((x, 1.0 - x)) == b.predict_one((x, 1.0 - x))
        a.learn_one((x, 1.0 - x), y)
        b.learn_one((x, 1.0 - x), y)


@pytest.mark.parametrize("make", [ECE, Brier, CalibrationRefinement, ROCAUC])
def test_old_pickles_of_metrics_load_and_continue(make):
    xs, ys = _stream()
    a = make()
    for x, y in zip(xs[:200], ys[:200]):
        a.update(y, x)
    b = pickle.loads(_as_old_pickle(a))
    assert b.get() == a.get()
    for x, y in zip(xs[200:], ys[200:]):
        a.update(y, x)
        b.update(y, x)
    assert b.get() == a.get()


@pytest.mark.parametrize(
    "old, name",
    [
        ("streamcal.core._calibeating", "TrackingKernel"),
        ("streamcal.core._calibeating", "HedgingKernel"),
        ("streamcal.core._calibeating", "FosterKernel"),
        ("streamcal.metrics._kernels", "Groups"),
        ("streamcal.metrics._kernels", "groups_update"),
        ("streamcal.metrics._kernels", "Ranks"),
        ("streamcal.metrics._kernels", "ranks_update"),
        ("streamcal.metrics._kernels", "MAX_LIMBS"),
        ("streamcal.metrics._kernels", "SUPERBLOCK"),
        ("streamcal.calibrators.calibeating", "EpsilonCalibratedForecaster"),
        ("streamcal.calibrators.calibeating", "MultiCalibeater"),
        ("streamcal.calibrators.calibeating", "MixedForecast"),
    ],
)
def test_moved_names_resolve_from_their_old_modules(old, name):
    new = next(n for n, o in MOVED if o == old and hasattr(importlib.import_module(n), name))
    assert getattr(importlib.import_module(old), name) is getattr(
        importlib.import_module(new), name
    )


def test_unknown_names_still_raise_attribute_error():
    for old in ("streamcal.core._calibeating", "streamcal.metrics._kernels"):
        with pytest.raises(AttributeError, match="no_such_name"):
            getattr(importlib.import_module(old), "no_such_name")
