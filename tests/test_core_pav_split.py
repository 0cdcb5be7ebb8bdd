"""The compiled block store split over _pav.pyx, _pav_ops.pyx and _pav_tree.pxd (issue 14)
keeps its pickles naming ``streamcal.core._pav`` and its Python API on the class."""

import pickle
import pickletools

import numpy as np

from streamcal.core._pav import IsotonicBlockStore


def _store():
    store = IsotonicBlockStore(4)
    rng = np.random.default_rng(3)
    for x, y in zip(rng.integers(0, 50, 200), rng.integers(0, 2, 200)):
        store.add(float(x) / 50, 1.0, float(y))
    return store


def test_pickles_name_the_class_module_and_restore_the_same_cells():
    store = _store()
    data = pickle.dumps(store)
    names = {arg for op, arg, _ in pickletools.genops(data) if op.name in ("GLOBAL", "SHORT_BINUNICODE")}
    assert "streamcal.core._pav" in names and "_restore" in names
    assert "streamcal.core._pav_ops" not in names
    back = pickle.loads(data)
    back._check()
    for a, b in zip(store.cells(), back.cells()):
        np.testing.assert_array_equal(a, b)


def test_moved_methods_stay_on_the_class_and_agree():
    store = _store()
    store._check()
    xs, ws, ss, ns = store.cells()
    starts, ends, values = store.arrays()
    assert len(starts) == len(store) == len(store.blocks()) == len(store.live_blocks)
    assert [b.value for b in store.blocks()] == values.tolist()
    copy = IsotonicBlockStore.from_lists(store.to_lists())
    copy._check()
    np.testing.assert_array_equal(copy.arrays()[2], values)
    store.scale_by_power_of_two(-3)
    np.testing.assert_array_equal(store.cells()[1], ws / 8)
    assert store.drop_light_cells(0.2) == int((ws / 8 < 0.2).sum())
    store._check()
