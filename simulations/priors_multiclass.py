"""Priors on the pieces of the multiclass isotonic calibrators (FIR, NA-FIR, one-vs-rest,
multiclass IRP, and the top-label and class-wise reductions over isotonic regression):
how strong, measured on Covertype and on the multiclass comparison streams.

Question: ``FIR``, ``NAFIR`` and ``OneVsRestIsotonic`` fit isotonic maps whose pieces
may say 0 (or 1) where few pairs stand behind them; after the ``epsilon`` floor and the
normalisation a class can get probability 1e-6 and a forecast be all but certain. The
prior of :mod:`streamcal.core.prior` (a pseudo-event of weight ``a`` and label 1/2,
pooled into the query's piece: ``prior_strength=a``) keeps them off 0 and 1. Which
strength, measured by the negative log-likelihood (cross entropy)? ``MulticlassIRP``
has no floor at all: its regions give probability exactly 0 to a class they never saw;
the same prior (label vector 1/K per class, :mod:`streamcal.core.irp_simplex`) values
each region. ``TopLabel`` and ``ClassWise`` over ``OnlineIsotonic()`` inherit the exact
fit's 0 and 1; over ``OnlineIsotonic(prior_strength=a)`` they do not. Which strengths?

Protocol:

- data: ``streamcal.datasets.covtype_predictions(K)``, K = 2, 3, 4 (a logistic
  regression's predictions on UCI Covertype, Berta, Bach and Jordan 2024): 500
  calibration rows then 1,000 test rows, one stream of 1,500 events;
- candidates: ``FIR``, ``NAFIR`` and ``OneVsRestIsotonic`` with ``prior_strength`` in
  0, 0.5, 1, 2, 4, 8, step interpolation, ``epsilon = 1e-6``;
- *batch*: ``window_size = refit_every = 500``: one fit on the calibration rows, then
  the 1,000 test rows predicted;
- *stream*: the defaults ``window_size = 2000, refit_every = 200``, prequential over
  the 1,500 events (predict, then learn), scored from the first fit on (events 201 to
  1,500);
- reported: mean negative log-likelihood (nats) of the observed class (clipped at
  1e-15, as ``streamcal.metrics.CrossEntropy`` does), Brier score
  (sum over classes), and how many forecasts gave the observed class less than 1e-3
  (`<1e-3`); the raw model's for reference. Deterministic.
- ``MulticlassIRP`` runs the same two protocols (its default grid).
- second table, the streams of ``multiclass_compare.py`` (covtype K=3 and K=4,
  ImageSegments under naive Bayes and under a logistic regression, the synthetic
  over-confident stream), prequential through ``streamcal.replay`` and scored from the
  300th event on, as there: ``irp:prior_strength=a``,
  ``top_label:calibrator='isotonic:prior_strength=a'`` and
  ``class_wise:calibrator='isotonic:prior_strength=a'`` for the same strengths
  (``a = 0`` is what the short names built before); reported: NLL (clipped at 1e-15,
  ``CrossEntropy``), conf-ECE (15 bins) and the number of scored events whose observed
  class got probability exactly 0.

Run (needs the ``simulations`` extra)::

    python simulations/priors_multiclass.py            # a few CPU minutes
    python simulations/priors_multiclass.py --quick    # a smoke run: K = 3, a in 0 and 2, fewer events

It writes ``priors_multiclass.md`` (the table, also printed) into ``--out`` (default
``simulations/results``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from streamcal import FIR, NAFIR, MulticlassIRP, OneVsRestIsotonic
from streamcal.datasets import covtype_predictions
from streamcal.registry import make_multiclass_calibrator

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # the shared helpers, also when this file is loaded by path
import _common  # noqa: E402

RESULTS = os.path.join(HERE, "results")
NAME = "priors_multiclass"
STRENGTHS = (0, 0.5, 1, 2, 4, 8)
KS = (2, 3, 4)
CLASSES = {
    "FIR": FIR,
    "NAFIR": NAFIR,
    "OneVsRestIsotonic": OneVsRestIsotonic,
    "MulticlassIRP": MulticlassIRP,
}
N_CAL, FIRST_FIT = 500, 200
#: the second table's calibrators: display name -> spec of strength ``a``
STREAM_SPECS = {
    "MulticlassIRP": "irp:prior_strength={a}",
    "TopLabel(isotonic)": "top_label:calibrator='isotonic:prior_strength={a}'",
    "ClassWise(isotonic)": "class_wise:calibrator='isotonic:prior_strength={a}'",
}
#: the smoke run: Covertype cut to 700 rows, the comparison streams to 400
QUICK = {"strengths": (0, 2), "ks": (3,), "covtype": 700, "limit": 400, "burn_in": 100}


def stream(K: int, limit=None):
    """The 1,500 events ``(scores, label)``, calibration rows first, and the labels."""
    P_cal, Y_cal, P_test, Y_test = covtype_predictions(K)
    P = np.vstack([P_cal, P_test])[:limit]
    y = np.argmax(np.vstack([Y_cal, Y_test]), axis=1)[:limit]
    return [(dict(enumerate(p.tolist())), int(c)) for p, c in zip(P, y)], P, y


def scores(Q: np.ndarray, y: np.ndarray) -> dict:
    """Mean NLL, Brier score and the count of observed classes given < 1e-3."""
    q = Q[np.arange(len(y)), y]
    onehot = np.eye(Q.shape[1])[y]
    return {
        "nll": float(-np.mean(np.log(np.maximum(q, 1e-15)))),  # CrossEntropy's clip
        "brier": float(np.mean(((Q - onehot) ** 2).sum(axis=1))),
        "low": int((q < 1e-3).sum()),
    }


def run(klass, a: float, events, K: int, protocol: str) -> np.ndarray:
    """The forecasts the protocol scores, as a matrix."""
    if protocol == "batch":
        cal = klass(window_size=N_CAL, refit_every=N_CAL, prior_strength=a)
        for s, c in events[:N_CAL]:
            cal.learn_one(s, c)
        out = [cal.predict_one(s) for s, _ in events[N_CAL:]]
    else:
        cal = klass(prior_strength=a)
        out = []
        for t, (s, c) in enumerate(events):
            if t >= FIRST_FIT:
                out.append(cal.predict_one(s))
            cal.learn_one(s, c)
    return np.array([[q[k] for k in range(K)] for q in out])


def compare_streams(strengths, limit=None, burn_in=None) -> tuple[dict, dict]:
    """The second table: ``(stream, name, a) -> scores`` of :data:`STREAM_SPECS` on the
    streams of ``multiclass_compare.py`` (and the uncalibrated forecasts as
    ``(stream, "raw", 0)``), and ``stream -> (events, K)``."""
    compare = _common.sibling("multiclass_compare")
    burn_in = compare.BURN_IN if burn_in is None else burn_in
    out, sizes = {}, {}
    for name, make in compare.streams(limit).items():
        P, y = make()
        sizes[name] = (len(y), P.shape[1])
        out[name, "raw", 0] = compare.scores(P[burn_in:], y[burn_in:])
        for label, spec in STREAM_SPECS.items():
            for a in strengths:
                s = spec.format(a=a)
                Q = _common.prequential({s: make_multiclass_calibrator(s)}, P, y)[s]
                out[name, label, a] = compare.scores(Q[burn_in:], y[burn_in:])
    return out, sizes


def compare_lines(res: dict, sizes: dict, strengths, burn_in: int) -> list:
    """The second table's lines: NLL / conf-ECE / events with p(y) = 0."""
    streams = list(sizes)
    lines = [
        "## The streams of `multiclass_compare.py`",
        "",
        "Prequential through `streamcal.replay`, scored from the "
        f"{burn_in}th event on; NLL (nats, clipped at 1e-15) / conf-ECE (15 bins) / "
        "scored events whose observed class got probability exactly 0. Lowest NLL of "
        "each calibrator and stream in bold. Streams: "
        + "; ".join(f"{s} ({n} events, K = {k})" for s, (n, k) in sizes.items())
        + ".",
        "",
        "| calibrator | a | " + " | ".join(streams) + " |",
        "| --- | ---: | " + " | ".join(["---:"] * len(streams)) + " |",
    ]

    def cell(r, bold=False):
        nll = f"{r['NLL']:.4f}"
        return f"{'**' + nll + '**' if bold else nll} / {r['conf-ECE']:.4f} / {r['p(y) = 0']}"

    lines.append("| uncalibrated | | " + " | ".join(cell(res[s, "raw", 0]) for s in streams) + " |")
    for label in STREAM_SPECS:
        best = {s: min(res[s, label, a]["NLL"] for a in strengths) for s in streams}
        for a in strengths:
            cells = [cell(res[s, label, a], res[s, label, a]["NLL"] == best[s]) for s in streams]
            lines.append(f"| {label} | {a:g} | " + " | ".join(cells) + " |")
    return lines


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=RESULTS, help="output directory")
    parser.add_argument(
        "--quick", action="store_true",
        help="smoke run: K = 3, strengths 0 and 2, 400 events a stream",
    )
    args = parser.parse_args(argv)
    strengths, ks = (QUICK["strengths"], QUICK["ks"]) if args.quick else (STRENGTHS, KS)
    limit = QUICK["limit"] if args.quick else None
    start = time.process_time()
    results = {}
    for K in ks:
        events, P, y = stream(K, QUICK["covtype"] if args.quick else None)
        results[K, "batch", "raw", 0] = scores(P[N_CAL:], y[N_CAL:])
        results[K, "stream", "raw", 0] = scores(P[FIRST_FIT:], y[FIRST_FIT:])
        for name, klass in CLASSES.items():
            for a in strengths:
                for protocol, y_scored in (("batch", y[N_CAL:]), ("stream", y[FIRST_FIT:])):
                    Q = run(klass, a, events, K, protocol)
                    results[K, protocol, name, a] = scores(Q, y_scored)
    burn_in = QUICK["burn_in"] if args.quick else None
    compared, sizes = compare_streams(strengths, limit, burn_in)
    cols = [(K, p) for K in ks for p in ("batch", "stream")]
    lines = [
        f"# Priors of the multiclass isotonic calibrators, IRP and the isotonic reductions (`simulations/{NAME}.py`)",
        "",
        "## Covertype",
        "",
        "Covertype (K classes), mean negative log-likelihood (nats) / Brier score / "
        "forecasts giving the observed class < 1e-3; *batch*: fitted on the 500 "
        "calibration rows, scored on the 1,000 test rows; *stream*: defaults "
        "(window 2000, refit every 200), prequential, scored from event 201 on. Lowest "
        "NLL of each calibrator and column in bold.",
        "",
        "| calibrator | a | " + " | ".join(f"K={K} {p}" for K, p in cols) + " |",
        "| --- | ---: | " + " | ".join(["---:"] * len(cols)) + " |",
    ]

    def cell(r, bold=False):
        nll = f"{r['nll']:.4f}"
        return f"{'**' + nll + '**' if bold else nll} / {r['brier']:.4f} / {r['low']}"

    lines.append("| raw | | " + " | ".join(cell(results[K, p, "raw", 0]) for K, p in cols) + " |")
    for name in CLASSES:
        best = {c: min(results[c[0], c[1], name, a]["nll"] for a in strengths) for c in cols}
        for a in strengths:
            cells = [
                cell(results[K, p, name, a], results[K, p, name, a]["nll"] == best[K, p])
                for K, p in cols
            ]
            lines.append(f"| {name} | {a:g} | " + " | ".join(cells) + " |")
    lines += ["", *compare_lines(compared, sizes, strengths, burn_in or 300)]
    lines += ["", f"CPU time of the whole run: {time.process_time() - start:.0f} s."]
    _common.write_table("\n".join(lines) + "\n", args.out, NAME)
    return {"covertype": results, "streams": compared}


if __name__ == "__main__":
    main()
