"""The grid isotonic store of two builds, interleaved in one process.

Run by hand from the repository root (not a test)::

    mkdir -p /tmp/sc_old && git archive <commit> | tar -x -C /tmp/sc_old
    (cd /tmp/sc_old && python setup.py build_ext --inplace)
    python benchmarks/bench_grid_store_compare.py /tmp/sc_old --n 1000000

Both builds' ``streamcal/core/_grid_pav`` extension modules are loaded side by side (the
grid store imports nothing else of the package), each gets its own
``GridIsotonicStore(10_001)`` (``resolution=1e-4``), and each event of one stream
(uniform scores, labels Bernoulli(score), seed 0) is a ``predict_step`` then an ``add``
on the key, the two stores taking ``--segment`` events in turn, the order alternating,
CPU time (``time.process_time``), the GC paused. On a machine shared with other jobs,
separate processes (``bench_isotonic_compare.py``) see the load change between runs;
here both builds see the same load. The Python call of each method (about 0.1 us) is
in both figures.
"""

from __future__ import annotations

import argparse
import gc
import glob
import importlib.util
import time
from pathlib import Path

import numpy as np


def _load(root):
    (path,) = glob.glob(str(Path(root) / "streamcal" / "core" / "_grid_pav*.so"))
    spec = importlib.util.spec_from_file_location("streamcal.core._grid_pav", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("old", help="directory holding the old build's streamcal package")
    p.add_argument("--n", type=int, default=1_000_000)
    p.add_argument("--segment", type=int, default=20_000)
    args = p.parse_args(argv)
    builds = {"old": _load(args.old), "new": _load(Path(__file__).resolve().parent.parent)}
    rng = np.random.default_rng(0)
    s = rng.random(args.n)
    labels = (rng.random(args.n) < s).astype(float).tolist()
    keys = np.floor(s / 1e-4 + 0.5).tolist()
    stores = {name: mod.GridIsotonicStore(10_001) for name, mod in builds.items()}
    spent = {name: 0.0 for name in builds}
    preds = {name: [] for name in builds}
    gc.disable()
    for i, a in enumerate(range(0, args.n, args.segment)):
        for name in ("old", "new") if i % 2 == 0 else ("new", "old"):
            st = stores[name]
            add, pred, out = st.add, st.predict_step, preds[name]
            t = time.process_time()
            for x, y in zip(keys[a:a + args.segment], labels[a:a + args.segment]):
                out.append(pred(x))
                add(x, 1.0, y)
            spent[name] += time.process_time() - t
    gc.enable()
    assert preds["old"] == preds["new"], "the two builds predict differently"
    print("  ".join(f"{name} {spent[name] / args.n * 1e9:.0f} ns/event "
                    f"(hull steps/event {stores[name]._op_hull / args.n:.1f})" for name in builds)
          + f"  new/old {spent['new'] / spent['old']:.3f}  (same predictions)")


if __name__ == "__main__":
    main()
