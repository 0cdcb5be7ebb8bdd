"""What a block array would cost in place of the grid store's tree (issue 11, a design
question, counted rather than timed).

Run by hand from the repository root (not a test)::

    python benchmarks/bench_grid_block_design.py                 # 10^6 events, last 20,000 read
    python benchmarks/bench_grid_block_design.py --n 100000 --tail 5000

The alternative to ``streamcal/core/_grid_pav.pyx``'s tree: keep the PAV solution as
blocks of cells with their sums (a block-start bit set, the block of a cell one bit
search away); an event adds weight to one cell, so only its block's sums change, the
prediction reads one block mean, and the block can only merge with its neighbours
(O(1) tests) or split. With the block mean ``v`` before the event and label ``y``, the
block splits only if, for ``y > v``, a prefix of the block ending before the event's
cell has a mean below the new block mean, or, for ``y < v``, a suffix starting after it
has a mean above it (the other prefixes move towards ``y``). Without a hull of the
block's points that check is a scan of the present cells on one side of the event's
cell. This script measures, on the grid store of ``OnlineIsotonic(resolution=1e-4)``
after ``n - tail`` events of a stream, over the last ``tail`` events (one
``GridIsotonicStore.hull()`` before and after each), what that design would do:

- ``changed``: share of events after which the hull's vertices (the block boundaries)
  are not the same cells: the events a block array must restructure (its slow path);
- ``scan``: cells the one-sided split check scans, mean and 99th percentile;
- ``block``: cells of the block the event falls in, mean (weighted by events);
- ``tree``: the tree's counted steps per event over the same events (``_op_hull``:
  leaf cells scanned plus descent steps), for scale.

``--check N`` first tests the rule on N random events over small grids (leaf capacity 4,
weights 0.5, 1 and 2, labels 0 or 1): whenever the one-sided check and the two merge
tests pass, the hull's vertices must not change, and the other side of the block must
never hold a point below the new chord. It prints the counts and fails on a miss.

Streams as ``bench_isotonic_streams.py``: Beta(2, 2) scores with labels
Bernoulli(sigmoid(2 logit s)) (``random``), labels Bernoulli(0.5) (``independent``),
1% positives (``rare``).
"""

from __future__ import annotations

import argparse
import bisect

import numpy as np

from streamcal import OnlineIsotonic
from streamcal.core._grid_pav import GridIsotonicStore

RES = 1e-4


def stream(kind: str, n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    s = rng.beta(2.0, 2.0, n)
    if kind == "random":
        f = s**2 / (s**2 + (1 - s) ** 2)
    else:
        f = {"independent": 0.5, "rare": 0.01}[kind]
    return s, (rng.random(n) < f).astype(float)


def measure(kind: str, n: int, tail: int) -> dict:
    s, y = stream(kind, n)
    cal = OnlineIsotonic(resolution=RES)
    cal.predict_learn_many(s[: n - tail], y[: n - tail])
    st = cal._stream.grid_store
    changed, scans, blocks = 0, [], []
    hull = st.hull()
    ops0 = st._op_hull
    for si, yi in zip(s[n - tail :], y[n - tail :]):
        c = int(np.floor(si / RES + 0.5)) + 1  # the event's cell (cell = key + 1)
        present = np.asarray(st.cells()[0], dtype=np.int64) + 1
        cells = [h[0] for h in hull]
        j = bisect.bisect_left(cells, c)  # the first vertex >= c: the block's last cell
        if c not in set(present.tolist()) or j == len(cells):
            scans.append(0)  # a new cell: the slow path in any design
            blocks.append(0)
        else:
            (ka, wa, sa), (kb, wb, sb) = hull[j - 1], hull[j]
            inside = present[(present > ka) & (present <= kb)]
            blocks.append(len(inside))
            v_num, v_den = sb - sa, wb - wa  # block mean in units (exact integers)
            if yi * v_den > v_num:
                scans.append(int(np.sum(inside < c)))  # prefixes ending before c
            elif yi * v_den < v_num:
                scans.append(int(np.sum((inside >= c) & (inside < kb))))  # suffixes after c
            else:
                scans.append(0)
        st.add(c - 1, 1.0, float(yi))
        new = st.hull()
        changed += [h[0] for h in new] != cells
        hull = new
    return {
        "changed": changed / tail,
        "scan_mean": float(np.mean(scans)),
        "scan_p99": float(np.percentile(scans, 99)),
        "block_mean": float(np.mean(blocks)),
        "tree": (st._op_hull - ops0) / tail,
        "n_blocks": len(hull) - 1,
    }


def check_rule(n_events: int, seed: int = 3) -> None:
    """The block array's fast-path rule against the store's own hull, on small grids."""
    rng = np.random.default_rng(seed)
    kept = changed = events = 0
    while events < n_events:
        K = int(rng.integers(3, 60))
        st = GridIsotonicStore(K, leaf_capacity=4)
        f = rng.random()
        for _ in range(400):
            x = int(rng.integers(0, K))
            y = float(rng.random() < f)
            w = float(rng.choice([0.5, 1.0, 2.0]))
            xs, ws, ss, _ = st.cells()
            hull = st.hull()
            cells = [h[0] for h in hull]
            c = x + 1
            fast = False
            if x in set(xs.tolist()):
                j = bisect.bisect_left(cells, c)
                (ka, wa, sa), (kb, wb, sb) = hull[j - 1], hull[j]
                inside = (xs + 1 > ka) & (xs + 1 <= kb)
                # hull units per unit of weight; every sum here is a small dyadic number,
                # so the float arithmetic below is exact
                unit = (wb - wa) / float(np.sum(ws[inside]))
                dw, ds = w * unit, w * y * unit
                W2, S2 = wb - wa + dw, sb - sa + ds  # the block's new sums
                up, down = y * (wb - wa) > sb - sa, y * (wb - wa) < sb - sa
                fast = True
                pw = ps = 0.0
                for k, wk, sk in zip(xs[inside] + 1, ws[inside], ss[inside]):
                    if k == kb:
                        break
                    pw += wk * unit + (dw if k == c else 0.0)
                    ps += sk * unit + (ds if k == c else 0.0)
                    below = ps * W2 - S2 * pw < 0  # an interior point below the new chord
                    if (up and k < c) or (down and k >= c):
                        fast = fast and not below
                    elif below:
                        raise AssertionError("a point below the chord on the side not checked")
                if j >= 2:
                    _, wp, sp = hull[j - 2]
                    fast = fast and (sa - sp) * W2 < S2 * (wa - wp)
                if j + 1 < len(hull):
                    _, wn, sn = hull[j + 1]
                    fast = fast and S2 * (wn - wb) < (sn - sb) * W2
            st.add(x, w, y)
            moved = [h[0] for h in st.hull()] != cells
            if fast and moved:
                raise AssertionError("the fast-path rule passed but the blocks changed")
            kept += fast
            changed += moved
            events += 1
    print(f"rule checked on {events:,} events: {kept:,} passed it (blocks unchanged), "
          f"{changed:,} changed the blocks, no miss")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1_000_000, help="events of each stream")
    p.add_argument("--tail", type=int, default=20_000, help="last events measured")
    p.add_argument("--streams", default="random,independent,rare")
    p.add_argument("--check", type=int, default=0, help="first check the rule on N events")
    args = p.parse_args()
    if args.check:
        check_rule(args.check)
    print(f"resolution={RES}, {args.n:,} events, the last {args.tail:,} measured")
    print("stream        blocks  changed  scan mean  scan p99  block mean  tree steps")
    for kind in args.streams.split(","):
        r = measure(kind, args.n, args.tail)
        print(f"{kind:12s} {r['n_blocks']:7d}  {r['changed']:7.2%}  {r['scan_mean']:9.1f}  "
              f"{r['scan_p99']:8.0f}  {r['block_mean']:10.1f}  {r['tree']:10.1f}")


if __name__ == "__main__":
    main()
