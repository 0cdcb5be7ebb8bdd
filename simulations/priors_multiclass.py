"""Priors on the pieces of the multiclass isotonic calibrators (FIR, NA-FIR, one-vs-rest):
how strong, measured on Covertype.

Question: ``FIR``, ``NAFIR`` and ``OneVsRestIsotonic`` fit isotonic maps whose pieces
may say 0 (or 1) where few pairs stand behind them; after the ``epsilon`` floor and the
normalisation a class can get probability 1e-6 and a forecast be all but certain. The
prior of :mod:`streamcal.core.prior` (a pseudo-event of weight ``a`` and label 1/2,
pooled into the query's piece: ``prior_strength=a``) keeps them off 0 and 1. Which
strength, measured by the negative log-likelihood (cross entropy)?

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
- reported: mean negative log-likelihood (nats) of the observed class, Brier score
  (sum over classes), and how many forecasts gave the observed class less than 1e-3
  (`<1e-3`); the raw model's for reference. Deterministic.

Run (needs the ``simulations`` extra)::

    python simulations/priors_multiclass.py     # about a minute

It writes ``priors_multiclass.md`` (the table, also printed) into ``--out`` (default
``simulations/results``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from streamcal import FIR, NAFIR, OneVsRestIsotonic
from streamcal.datasets import covtype_predictions

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # the shared helpers, also when this file is loaded by path
import _common  # noqa: E402

RESULTS = os.path.join(HERE, "results")
NAME = "priors_multiclass"
STRENGTHS = (0, 0.5, 1, 2, 4, 8)
KS = (2, 3, 4)
CLASSES = {"FIR": FIR, "NAFIR": NAFIR, "OneVsRestIsotonic": OneVsRestIsotonic}
N_CAL, FIRST_FIT = 500, 200


def stream(K: int):
    """The 1,500 events ``(scores, label)``, calibration rows first, and the labels."""
    P_cal, Y_cal, P_test, Y_test = covtype_predictions(K)
    P = np.vstack([P_cal, P_test])
    y = np.argmax(np.vstack([Y_cal, Y_test]), axis=1)
    return [(dict(enumerate(p.tolist())), int(c)) for p, c in zip(P, y)], P, y


def scores(Q: np.ndarray, y: np.ndarray) -> dict:
    """Mean NLL, Brier score and the count of observed classes given < 1e-3."""
    q = Q[np.arange(len(y)), y]
    onehot = np.eye(Q.shape[1])[y]
    return {
        "nll": float(-np.mean(np.log(q))),
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


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=RESULTS, help="output directory")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    results = {}
    for K in KS:
        events, P, y = stream(K)
        results[K, "batch", "raw", 0] = scores(P[N_CAL:], y[N_CAL:])
        results[K, "stream", "raw", 0] = scores(P[FIRST_FIT:], y[FIRST_FIT:])
        for name, klass in CLASSES.items():
            for a in STRENGTHS:
                for protocol, y_scored in (("batch", y[N_CAL:]), ("stream", y[FIRST_FIT:])):
                    Q = run(klass, a, events, K, protocol)
                    results[K, protocol, name, a] = scores(Q, y_scored)
    cols = [(K, p) for K in KS for p in ("batch", "stream")]
    lines = [
        f"# Priors on the pieces of FIR, NA-FIR and one-vs-rest isotonic (`simulations/{NAME}.py`)",
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
        best = {c: min(results[c[0], c[1], name, a]["nll"] for a in STRENGTHS) for c in cols}
        for a in STRENGTHS:
            cells = [
                cell(results[K, p, name, a], results[K, p, name, a]["nll"] == best[K, p])
                for K, p in cols
            ]
            lines.append(f"| {name} | {a:g} | " + " | ".join(cells) + " |")
    lines += ["", f"Run time {time.perf_counter() - start:.0f} s."]
    _common.write_table("\n".join(lines) + "\n", args.out, NAME)
    return results


if __name__ == "__main__":
    main()
