"""Every multiclass calibrator on every multiclass stream, ranked as in Arad and Rosset's Table 2.

Question: Arad and Rosset (2025, Table 2) rank NA-FIR, SCIR, FIR, IR-OvR, TS, VS, MS and
the uncalibrated model by NLL, Brier score, conf-ECE, cw-ECE and TECE over seven data
sets (batch calibration: a fit on a validation set, scores on a test set), and find
NA-FIR best on NLL and SCIR best on conf-ECE. Run online (each calibrator predicts an
event, then learns it), on the streams streamcal has, with the calibrators streamcal
has (theirs, plus Dirichlet calibration, multiclass IRP, and the top-label and
class-wise reductions over isotonic regression and Venn-ABERS), does that ranking hold?

Protocol:

- streams (the events in their order; the first ``BURN_IN`` = 300 of each are learnt
  but not scored, so that every calibrator is past its cold start):

  - ``covtype K=3`` and ``covtype K=4``: the logistic regression's predictions of
    ``streamcal.datasets.covtype_predictions(K)`` (Berta, Bach and Jordan, 2024), the
    500 calibration rows then the 1,000 test rows, 1,500 events;
  - ``ImageSegments, naive Bayes`` and ``ImageSegments, logistic``: river's
    ``datasets.ImageSegments()`` (2,310 regions, 7 classes) under the two online
    classifiers of ``multiclass_stream.py`` (``GaussianNB()``, and ``StandardScaler() |
    OneVsRestClassifier(LogisticRegression())``), each region predicted then learnt by
    the classifier; the calibrators see the classifier's ``predict_proba_one`` from the
    first region where it knows all 7 classes (the classifier never sees the
    calibrators, so its forecasts are computed first);
  - ``synthetic over-confident``: 3,000 events, 5 classes, a true vector ``q`` drawn
    from Dirichlet(1, ..., 1) and the label from ``q``; the forecast is ``q ** 2``
    renormalised (seed 0);

- calibrators: every name of ``streamcal.registry.MULTICLASS_CALIBRATOR_NAMES`` at its
  defaults (the refittable ones: ``window_size=2000, refit_every=200``; ``top_label`` and
  ``class_wise`` over ``OnlineIsotonic`` under the prior their short names give it,
  see :mod:`streamcal.registry`), plus ``top_label`` and ``class_wise`` over
  ``VennAbers`` (``"top_label:calibrator=venn_abers"``); each runs alone through
  ``streamcal.replay`` (``_common.prequential``), timed in CPU seconds;
- metrics (``streamcal.metrics``, 15 bins as in the paper): NLL (``CrossEntropy``, the
  true class's probability clipped at 1e-15), Brier (``MulticlassBrier``, sum over the
  classes), conf-ECE (``ConfidenceECE``, equal width), cw-ECE (``ClasswiseECE``, equal
  width), TECE (``TECE``, equal mass, threshold 1/K); also the accuracy, the number of
  scored events whose true class got probability 0 (34.5 nats each) and the CPU time
  per event (after a warm-up run of every calibrator through one refit, so that no
  time includes the first import of a module);
- ranks: per stream and metric, 1 for the lowest value (ties share their mean rank),
  the uncalibrated forecasts ranked too; reported as the mean rank over the streams and
  the share of streams where the method ranks first. A calibrator that raises is
  reported with its error and left out of that stream's ranks.

Run (needs the ``simulations`` extra: ``pip install -e ".[simulations]"``)::

    python simulations/multiclass_compare.py            # a few minutes
    python simulations/multiclass_compare.py --quick    # a smoke run: 400 events a stream

It writes ``multiclass_compare.md`` (the tables, also printed) and
``multiclass_compare.csv`` (every value and rank) into ``--out`` (default
``simulations/results``).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import sys
import time

import numpy as np

from streamcal.datasets import covtype_predictions
from streamcal.metrics import (
    TECE,
    ClasswiseECE,
    ConfidenceECE,
    CrossEntropy,
    MulticlassBrier,
)
from streamcal.registry import MULTICLASS_CALIBRATOR_NAMES, make_multiclass_calibrator

NAME = "multiclass_compare"
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # the shared helpers, also when this file is loaded by path
import _common  # noqa: E402

RESULTS = os.path.join(HERE, "results")

BURN_IN = 300
N_BINS = 15
SYNTHETIC = {"n": 3000, "n_classes": 5, "power": 2.0, "seed": 0}
#: the reductions over a second binary calibrator, besides the registry's defaults
EXTRA_SPECS = ("top_label:calibrator=venn_abers", "class_wise:calibrator=venn_abers")
#: display names (the paper's where it has one); a spec not listed shows as itself
LABELS = {
    "temperature": "TS",
    "vector_scaling": "VS",
    "matrix_scaling": "MS",
    "dirichlet": "Dirichlet",
    "fir": "FIR",
    "nafir": "NA-FIR",
    "ovr_isotonic": "IR-OvR",
    "scir": "SCIR",
    "irp": "MulticlassIRP",
    "top_label": "TopLabel(isotonic)",
    "class_wise": "ClassWise(isotonic)",
    "top_label:calibrator=venn_abers": "TopLabel(Venn-ABERS)",
    "class_wise:calibrator=venn_abers": "ClassWise(Venn-ABERS)",
}
RAW = "uncalibrated"
METRICS = ("NLL", "Brier", "conf-ECE", "cw-ECE", "TECE")


def specs() -> tuple[str, ...]:
    """Every multiclass calibrator name of the registry, then the extra reductions."""
    return (*MULTICLASS_CALIBRATOR_NAMES, *EXTRA_SPECS)


# ----------------------------------------------------------------------- streams


def covtype_stream(n_classes: int, limit=None):
    """The calibration rows then the test rows: (P (n, K), labels (n,))."""
    P_cal, Y_cal, P_test, Y_test = covtype_predictions(n_classes)
    P = np.vstack([P_cal, P_test])[:limit]
    y = np.argmax(np.vstack([Y_cal, Y_test]), axis=1)[:limit]
    return P, y


def image_segments_stream(classifier: str, limit=None):
    """A river classifier's prequential forecasts on ImageSegments, from the first
    region where it knows every class: (P (n, 7), labels (n,)), classes in sorted
    order."""
    stream = _common.sibling("multiclass_stream")  # its classifiers and its rows
    model = stream.classifiers()[classifier]()
    data = list(stream.rows())
    classes = sorted({y for _, y in data})
    P, y = [], []
    for x, label in data:
        p = model.predict_proba_one(x)
        if len(P) or set(p) >= set(classes):
            P.append([p.get(c, 0.0) for c in classes])
            y.append(classes.index(label))
        model.learn_one(x, label)
        if limit is not None and len(P) >= limit:
            break
    P = np.array(P)
    return P / P.sum(axis=1, keepdims=True), np.array(y)


def synthetic_stream(n: int, n_classes: int, power: float, seed: int):
    """True vectors q ~ Dirichlet(1), labels ~ q, forecasts q ** power renormalised
    (over-confident for power > 1)."""
    rng = np.random.default_rng(seed)
    q = rng.dirichlet(np.ones(n_classes), size=n)
    y = (rng.random(n)[:, None] > np.cumsum(q, axis=1)).sum(axis=1)
    y = np.minimum(y, n_classes - 1)  # a rounding of the last cumulative sum
    P = q**power
    return P / P.sum(axis=1, keepdims=True), y


def streams(limit=None) -> dict:
    synthetic = dict(SYNTHETIC)
    if limit is not None:
        synthetic["n"] = min(synthetic["n"], limit)
    return {
        "covtype K=3": lambda: covtype_stream(3, limit),
        "covtype K=4": lambda: covtype_stream(4, limit),
        "ImageSegments, naive Bayes": lambda: image_segments_stream(
            "Gaussian naive Bayes", limit
        ),
        "ImageSegments, logistic": lambda: image_segments_stream(
            "one-vs-rest logistic", limit
        ),
        "synthetic over-confident": lambda: synthetic_stream(**synthetic),
    }


# ----------------------------------------------------------------------- scoring


def scores(Q: np.ndarray, y: np.ndarray) -> dict:
    """The metrics of forecasts ``Q`` (n, K) against labels ``y``, through
    streamcal's streaming metrics fed ``{k: Q[i, k]}``."""
    metrics = {
        "NLL": CrossEntropy(),
        "Brier": MulticlassBrier(),
        "conf-ECE": ConfidenceECE(n_bins=N_BINS),
        "cw-ECE": ClasswiseECE(n_bins=N_BINS),
        "TECE": TECE(n_bins=N_BINS),
    }
    for row, label in zip(Q.tolist(), y.tolist()):
        q = dict(enumerate(row))
        for m in metrics.values():
            m.update(label, q)
    out = {name: m.get() for name, m in metrics.items()}
    out["accuracy"] = float(np.mean(np.argmax(Q, axis=1) == y))
    out["p(y) = 0"] = int(np.count_nonzero(Q[np.arange(len(y)), y] == 0.0))
    return out


def run_stream(P, y, burn_in: int) -> dict:
    """Each calibrator alone through the replay: its scores from ``burn_in`` on, its CPU
    microseconds per event, or its error."""
    out = {RAW: {"scores": scores(P[burn_in:], y[burn_in:]), "micro": None}}
    for spec in specs():
        t0 = time.process_time()
        try:
            Q = _common.prequential({spec: make_multiclass_calibrator(spec)}, P, y)[spec]
        except Exception as exc:  # noqa: BLE001 (reported in the table, not hidden)
            out[spec] = {"error": f"{type(exc).__name__}: {exc}"[:200]}
            continue
        micro = 1e6 * (time.process_time() - t0) / len(y)
        out[spec] = {"scores": scores(Q[burn_in:], y[burn_in:]), "micro": micro}
    return out


def ranks(values: dict) -> dict:
    """name -> rank of its value, 1 for the lowest, ties sharing their mean rank."""
    order = sorted(values, key=values.get)
    out, i = {}, 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for name in order[i : j + 1]:
            out[name] = (i + j) / 2 + 1
        i = j + 1
    return out


def rank_table(results: dict) -> dict:
    """(stream, metric) -> name -> rank, over the methods that ran on that stream."""
    out = {}
    for stream, res in results.items():
        ok = {n: r["scores"] for n, r in res.items() if "scores" in r}
        for metric in METRICS:
            out[stream, metric] = ranks({n: s[metric] for n, s in ok.items()})
    return out


# ----------------------------------------------------------------------- report


def label(name: str) -> str:
    return LABELS.get(name, name)


def mean_rank_lines(results: dict, by_rank: dict) -> list:
    names = [RAW, *specs()]
    n_streams = len(results)
    lines = [
        "| method | " + " | ".join(METRICS) + " | all five |",
        "| --- | " + " | ".join(["---:"] * (len(METRICS) + 1)) + " |",
    ]
    rows = []
    for name in names:
        cells, every = [], []
        for metric in METRICS:
            got = [by_rank[s, metric][name] for s in results if name in by_rank[s, metric]]
            wins = sum(by_rank[s, metric].get(name) == 1 for s in results)
            every += got
            cells.append(
                f"{np.mean(got):.1f} ({100 * wins / n_streams:.0f}%)" if got else "-"
            )
        rows.append((np.mean(every) if every else math.inf, name, cells))
    for mean, name, cells in sorted(rows, key=lambda r: r[0]):
        lines.append(f"| {label(name)} | " + " | ".join(cells) + f" | {mean:.1f} |")
    return lines


def stream_lines(stream: str, res: dict, n_events: int, burn_in: int) -> list:
    lines = [
        f"### {stream}",
        "",
        f"{n_events} events, {n_events - burn_in} scored (from the {burn_in}th on); "
        "in brackets the method's rank among those that ran.",
        "",
        "| method | "
        + " | ".join(METRICS)
        + " | accuracy | p(y) = 0 | CPU µs / event |",
        "| --- | " + " | ".join(["---:"] * (len(METRICS) + 3)) + " |",
    ]
    ok = {n: r["scores"] for n, r in res.items() if "scores" in r}
    rk = {m: ranks({n: s[m] for n, s in ok.items()}) for m in METRICS}
    for name, r in res.items():
        if "error" in r:
            lines.append(
                f"| {label(name)} | failed: {r['error']} |" + " |" * (len(METRICS) + 2)
            )
            continue
        s = r["scores"]
        cells = [f"{s[m]:.4f} ({rk[m][name]:g})" for m in METRICS]
        micro = "-" if r["micro"] is None else f"{r['micro']:,.0f}"
        lines.append(
            f"| {label(name)} | "
            + " | ".join(cells)
            + f" | {s['accuracy']:.4f} | {s['p(y) = 0']} | {micro} |"
        )
    return [*lines, ""]


def write_csv(results: dict, by_rank: dict, path: str) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["stream", "method", "spec", "metric", "value", "rank"])
        for stream, res in results.items():
            for name, r in res.items():
                if "error" in r:
                    writer.writerow([stream, label(name), name, "error", r["error"], ""])
                    continue
                for metric, value in r["scores"].items():
                    rank = by_rank.get((stream, metric), {}).get(name, "")
                    writer.writerow([stream, label(name), name, metric, value, rank])
                writer.writerow(
                    [stream, label(name), name, "cpu_us_per_event", r["micro"], ""]
                )


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=RESULTS, help="output directory")
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: 400 events a stream"
    )
    args = parser.parse_args(argv)
    limit, burn_in = (400, 100) if args.quick else (None, BURN_IN)
    start = time.process_time()
    # every calibrator through one refit first, so that no stream's times include the
    # first import of a module (a lazily imported fit)
    run_stream(*synthetic_stream(250, 3, 2.0, seed=1), burn_in=0)
    results, sizes = {}, {}
    for stream, make in streams(limit).items():
        P, y = make()
        sizes[stream] = (len(y), P.shape[1])
        results[stream] = run_stream(P, y, burn_in)
    by_rank = rank_table(results)
    lines = [
        f"# Multiclass calibrators ranked as in Arad and Rosset's Table 2 (`simulations/{NAME}.py`)",
        "",
        (
            "Prequential (each calibrator predicts an event, then learns it); metrics over "
            f"the events from the {burn_in}th on, {N_BINS} bins, TECE threshold 1/K. "
            "Streams: "
            + "; ".join(f"{s} ({n} events, K = {k})" for s, (n, k) in sizes.items())
            + ". Calibrators at their registry defaults."
        ),
        "",
        "## Mean rank over the streams (share of streams ranked first)",
        "",
        *mean_rank_lines(results, by_rank),
        "",
        "## Values per stream",
        "",
    ]
    for stream, res in results.items():
        lines += stream_lines(stream, res, sizes[stream][0], burn_in)
    lines.append(f"CPU time of the whole run: {time.process_time() - start:.0f} s.")
    _common.write_table("\n".join(lines) + "\n", args.out, NAME)
    write_csv(results, by_rank, os.path.join(args.out, f"{NAME}.csv"))
    return {"results": results, "ranks": by_rank, "sizes": sizes}


if __name__ == "__main__":
    main()
