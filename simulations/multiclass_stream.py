"""Multiclass calibrators side by side on a real stream (river's ImageSegments).

Question: an online multiclass classifier learnt from a stream gives probability
vectors that are over-confident (Gaussian naive Bayes) or under-confident (one-vs-rest
logistic regressions). Which of streamcal's multiclass calibrators, recalibrating those
vectors online, improves the log loss, the Brier score and the calibration errors,
what does each cost in time, and does any of them hurt the accuracy?

Protocol:

- data: ``river.datasets.ImageSegments()`` (UCI image segmentation, 2,310 regions of
  outdoor images, 19 numeric features, 7 classes of 330, in the file's order, which is
  shuffled); and its 4-class sub-stream (the classes brickface, cement, foliage and
  grass, 1,320 regions), for the calibrators limited to 3 or 4 classes;
- classifiers, learnt online (each region is first predicted, then learnt):
  ``river.naive_bayes.GaussianNB()`` and ``StandardScaler() |
  OneVsRestClassifier(LogisticRegression())`` (river's defaults);
- calibrators, prequential on the classifier's ``predict_proba_one`` output (each
  predicts the region, then learns its label, before the classifier learns it):
  ``TemperatureScaling``, ``TopLabel(OnlineIsotonic())``,
  ``TopLabel(HistogramBinning())``, ``ClassWise(OnlineIsotonic())``,
  ``ClassWise(OnlinePlatt())``, and whichever of ``OneVsRestIsotonic``, ``FIR``,
  ``NAFIR``, ``SCIR`` and ``MulticlassIRP`` streamcal exports when the script runs
  (looked up by name, skipped if missing). The refittable ones run with
  ``window_size=2000, refit_every=100`` (the window holds almost the whole stream);
  the wrappers learn from every event;
- reported, over the events from the 300th on (the classifier's first 300 regions
  are its own warm-up): negative log-likelihood (nats; the probability of the true
  class clipped at 1e-15: a class missing from the vector has probability 0), Brier
  score (sum over the classes of the squared error), confidence ECE and class-wise ECE
  (``streamcal.metrics.ConfidenceECE()`` / ``ClasswiseECE()``, 10 equal-width bins),
  accuracy of the top class, how many forecasts gave the true class probability 0
  (each costs 34.5 nats), and the time spent in the calibrator's ``predict_one``
  and ``learn_one`` (microseconds per event, the classifier's own time excluded).
  A calibrator that raises is reported with its error and dropped from that run.

Run (needs the ``simulations`` extra: ``pip install -e ".[simulations]"``)::

    python simulations/multiclass_stream.py            # about 45 s
    python simulations/multiclass_stream.py --quick    # a smoke run: first 400 rows

It writes ``multiclass_stream.md`` (the tables, also printed) and
``multiclass_stream.png`` (NLL per calibrator, and confidence reliability diagrams)
into ``--out`` (default ``simulations/results``).
"""

from __future__ import annotations

import argparse
import inspect
import math
import os
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from river import datasets, linear_model, multiclass, naive_bayes, preprocessing

import streamcal
from streamcal import (
    ClassWise,
    HistogramBinning,
    OnlineIsotonic,
    OnlinePlatt,
    TemperatureScaling,
    TopLabel,
)
from streamcal.metrics import ClasswiseECE, ConfidenceECE

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
NAME = "multiclass_stream"

WINDOW_SIZE = 2000
REFIT_EVERY = 100
BURN_IN = 300
FOUR_CLASSES = ("brickface", "cement", "foliage", "grass")
#: calibrators of other modules, looked up by name in ``streamcal``
OTHERS = ("OneVsRestIsotonic", "FIR", "NAFIR", "SCIR", "MulticlassIRP")


def classifiers():
    return {
        "Gaussian naive Bayes": naive_bayes.GaussianNB,
        "one-vs-rest logistic": lambda: (
            preprocessing.StandardScaler()
            | multiclass.OneVsRestClassifier(linear_model.LogisticRegression())
        ),
    }


def _windowed(klass):
    params = inspect.signature(klass).parameters
    kw = {}
    if "window_size" in params:
        kw["window_size"] = WINDOW_SIZE
    if "refit_every" in params:
        kw["refit_every"] = REFIT_EVERY
    return kw


def calibrators() -> dict:
    """Name -> factory of every calibrator present in streamcal."""
    out = {
        "temperature scaling": lambda: TemperatureScaling(
            **_windowed(TemperatureScaling)
        ),
        "top-label isotonic": lambda: TopLabel(OnlineIsotonic()),
        "top-label histogram": lambda: TopLabel(HistogramBinning()),
        "class-wise isotonic": lambda: ClassWise(OnlineIsotonic()),
        "class-wise Platt": lambda: ClassWise(OnlinePlatt()),
    }
    for name in OTHERS:
        klass = getattr(streamcal, name, None)
        if klass is not None:
            out[name] = lambda klass=klass: klass(**_windowed(klass))
    return out


def rows(limit=None, classes=None):
    n = 0
    for x, y in datasets.ImageSegments():
        if classes is not None and y not in classes:
            continue
        if limit is not None and n >= limit:
            return
        n += 1
        yield x, y


def run(model, data, factories, burn_in: int = BURN_IN) -> dict:
    """Prequential run; returns per-method lists of (forecast, label) after the
    burn-in, times and errors."""
    cals = {name: make() for name, make in factories.items()}
    out = {name: [] for name in ["raw", *cals]}
    seconds = dict.fromkeys(cals, 0.0)
    errors = {}
    clock = time.perf_counter
    for t, (x, y) in enumerate(data):
        p = model.predict_proba_one(x)
        if p:
            if t >= burn_in:
                out["raw"].append((p, y))
            for name, cal in list(cals.items()):
                t0 = clock()
                try:
                    q = cal.predict_one(p)
                    cal.learn_one(p, y)
                except Exception as exc:  # noqa: BLE001 (reported in the table, not hidden)
                    errors[name] = f"{type(exc).__name__}: {exc}"[:160]
                    del cals[name]
                    out.pop(name)
                    continue
                seconds[name] += clock() - t0
                if t >= burn_in:
                    out[name].append((q, y))
        model.learn_one(x, y)
    n_events = t + 1
    micro = {name: 1e6 * s / n_events for name, s in seconds.items() if name in out}
    return {"forecasts": out, "micro": micro, "errors": errors, "burn_in": burn_in}


def scores(pairs) -> dict:
    nll = brier = right = 0.0
    zero = 0
    conf, cw = ConfidenceECE(), ClasswiseECE()
    for q, y in pairs:
        nll -= math.log(max(q.get(y, 0.0), 1e-15))
        zero += q.get(y, 0.0) == 0.0
        brier += math.fsum((v - (c == y)) ** 2 for c, v in q.items()) + (
            0.0 if y in q else 1.0
        )
        right += max(q, key=q.get) == y
        conf.update(y, q)
        cw.update(y, q)
    n = len(pairs)
    return {
        "NLL": nll / n,
        "Brier": brier / n,
        "conf-ECE": conf.get(),
        "cw-ECE": cw.get(),
        "accuracy": right / n,
        "zero": zero,
        "bins": conf.bins,
    }


def table(title: str, result: dict) -> list:
    lines = [
        f"## {title}",
        "",
        f"{len(result['forecasts']['raw'])} events scored (from the {result['burn_in']}th on).",
        "",
        "| calibrator | NLL | Brier | conf-ECE | cw-ECE | accuracy | p(y) = 0 | µs / event |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name in result["forecasts"]:
        s = result["scores"][name]
        micro = result["micro"].get(name)
        lines.append(
            f"| {name} | {s['NLL']:.4f} | {s['Brier']:.4f} | {s['conf-ECE']:.4f} | "
            f"{s['cw-ECE']:.4f} | {s['accuracy']:.4f} | {s['zero']} | "
            f"{'-' if micro is None else f'{micro:,.0f}'} |"
        )
    for name, err in result["errors"].items():
        lines.append(f"| {name} | failed: {err} | | | | | | |")
    lines.append("")
    return lines


def figure(results: dict, path: str) -> None:
    keys = list(results)
    fig, axes = plt.subplots(
        2, len(keys), figsize=(5.2 * len(keys), 9.5), squeeze=False
    )
    for j, key in enumerate(keys):
        res = results[key]
        names = list(res["forecasts"])
        nll = [res["scores"][n]["NLL"] for n in names]
        ax = axes[0, j]
        colors = ["0.4" if n == "raw" else "C0" for n in names]
        ax.barh(range(len(names)), nll, color=colors)
        ax.set_yticks(range(len(names)), names, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("NLL (nats), lower is better")
        ax.set_title(key, fontsize=9)
        ax.axvline(res["scores"]["raw"]["NLL"], color="0.4", lw=0.8, ls=":")
        ax = axes[1, j]
        ax.plot([0, 1], [0, 1], color="0.7", lw=0.8)
        best = sorted(
            (n for n in names if n != "raw"), key=lambda n: res["scores"][n]["NLL"]
        )
        for n in ["raw", *best[:3]]:
            bins = [b for b in res["scores"][n]["bins"] if b.weight >= 10]
            ax.plot(
                [b.mean_prediction for b in bins],
                [b.mean_outcome for b in bins],
                marker="o",
                ms=3,
                label=n,
                color="0.3" if n == "raw" else None,
            )
        ax.set_xlabel("top probability (bin mean)")
        ax.set_ylabel("accuracy of the top class")
        ax.set_title("confidence reliability (bins with >= 10 events)", fontsize=9)
        ax.legend(fontsize=7)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=RESULTS, help="output directory")
    parser.add_argument("--quick", action="store_true", help="first 400 rows only")
    args = parser.parse_args(argv)
    limit = 400 if args.quick else None
    burn_in = 100 if args.quick else BURN_IN
    factories = calibrators()
    results = {}
    for clf_name, make_clf in classifiers().items():
        for stream, classes in (("7 classes", None), ("4 classes", FOUR_CLASSES)):
            res = run(make_clf(), rows(limit, classes), factories, burn_in)
            res["scores"] = {n: scores(p) for n, p in res["forecasts"].items()}
            results[f"{clf_name}, {stream}"] = res
    lines = [
        "# Multiclass calibrators on ImageSegments",
        "",
        (
            f"Calibrators present: {', '.join(factories)}. Refittable ones: "
            f"window_size={WINDOW_SIZE}, refit_every={REFIT_EVERY}."
        ),
        "",
    ]
    for key, res in results.items():
        lines += table(key, res)
    text = "\n".join(lines)
    print(text)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"{NAME}.md"), "w") as fh:
        fh.write(text)
    figure(results, os.path.join(args.out, f"{NAME}.png"))
    return results


if __name__ == "__main__":
    main()
