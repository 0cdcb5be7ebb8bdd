"""Example reliability diagrams drawn with ``streamcal.plot``.

Question: do the binned and CORP reliability diagrams, with their consistency bands,
show at a glance what online recalibration does to a miscalibrated forecaster, and do
they reproduce the CORP diagrams of the Niamey forecasts (Dimitriadis, Gneiting and
Jordan, PNAS 2021, figure 2)?

Protocol:

- rain: ``streamcal.datasets.miscalibrated_rain_forecasts(n=20_000, seed=0)`` (an
  over-confident, wet-biased forecaster of seasonal rain); recalibrated online by
  ``OnlineIsotonic()`` and ``OnlinePlatt()``, prequentially (each day's forecast is
  recalibrated by the calibrator that has learnt the days before only, then it learns
  the day). Diagrams of the raw, isotonic and Platt forecasts, binned (10 equal-width
  bins) and CORP, with 90% consistency bands from 500 resamples (seed 0);
- the same stream fed to the streaming metrics ``ECE(n_bins=10)`` and ``CORP()``, drawn
  from their states (binomial band for the bins; no band for the CORP blocks);
- Niamey: ``streamcal.datasets.niamey_precipitation()``, the four forecasts of
  92 days, CORP diagrams with 90% bands (500 resamples);
- multiclass: 5,000 synthetic three-class events, a model over-confident by
  temperature 0.6 (true class probabilities from Dirichlet(1, 1, 1), forecasts
  ``softmax(log p / 0.6)``): the confidence view and the class-wise views, binned.

Run (needs the ``simulations`` extra, which includes matplotlib)::

    python simulations/reliability_diagrams.py

prints a table and writes ``simulations/results/reliability_*.png``.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from streamcal import OnlineIsotonic, OnlinePlatt, plot
from streamcal.datasets import miscalibrated_rain_forecasts, niamey_precipitation
from streamcal.metrics import CORP, ECE

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # the shared helpers, also when this file is loaded by path
import _common  # noqa: E402

RESULTS = os.path.join(HERE, "results")
N = 20_000


def prequential(calibrator, scores, labels):
    """Each forecast recalibrated by what was learnt before it (``streamcal.replay``)."""
    return _common.prequential({"cal": calibrator}, scores, labels)["cal"]


def outside(band, xs, ys):
    """Share of the points (x, y) whose y lies outside the band at x."""
    pos = {x: i for i, x in enumerate(band.x.tolist())}
    hits = [
        not band.lower[pos[x]] <= y <= band.upper[pos[x]]
        for x, y in zip(xs, ys)
        if x in pos
    ]
    return sum(hits) / len(hits)


def summary(name, probs, labels):
    bins = plot.binned_reliability(labels, probs, 10)
    total = sum(b.weight for b in bins)
    ece = sum(b.weight * abs(b.mean_outcome - b.mean_prediction) for b in bins) / total
    band = plot.consistency_band(probs, "binned", n_resamples=500)
    out_bins = outside(
        band, [b.mean_prediction for b in bins], [b.mean_outcome for b in bins]
    )
    corp = CORP()
    for p, y in zip(probs.tolist(), labels.tolist()):
        corp.update(y, p)
    blocks = plot.corp_reliability(labels, probs)
    band = plot.consistency_band(probs, "corp", n_resamples=500)
    fit = {
        x: b.value
        for b in blocks
        for x in band.x.tolist()
        if b.score_min <= x <= b.score_max
    }
    out_corp = outside(band, list(fit), list(fit.values()))
    print(
        f"| {name} | {ece:.4f} | {out_bins:.0%} | {corp.mcb:.4f} | {corp.dsc:.4f} | "
        f"{corp.unc:.4f} | {corp.get():.4f} | {out_corp:.0%} |"
    )


def main():
    os.makedirs(RESULTS, exist_ok=True)
    written = []

    def out(name):
        path = os.path.join(RESULTS, name)
        written.append(os.path.relpath(path))
        return path

    scores, labels = miscalibrated_rain_forecasts(n=N, seed=0)
    rain = {
        "raw forecast": scores,
        "OnlineIsotonic": prequential(OnlineIsotonic(), scores, labels),
        "OnlinePlatt": prequential(OnlinePlatt(), scores, labels),
    }
    print(
        "| forecaster | ECE (10 bins) | bins outside band | MCB | DSC | UNC | S (Brier) "
        "| CORP points outside band |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, probs in rain.items():
        summary(name, probs, labels)
    title = f"Miscalibrated rain forecasts ({N:,} days), recalibrated online"
    plot.reliability_diagrams(
        rain, labels, kind="binned", suptitle=title + ": binned",
        path=out("reliability_rain_binned.png"),
    )  # fmt: skip
    plot.reliability_diagrams(
        rain, labels, kind="corp", suptitle=title + ": CORP",
        path=out("reliability_rain_corp.png"),
    )  # fmt: skip

    ece, corp, ece_iso = ECE(n_bins=10), CORP(), ECE(n_bins=10)
    for p, q, y in zip(
        scores.tolist(), rain["OnlineIsotonic"].tolist(), labels.tolist()
    ):
        ece.update(y, p)
        corp.update(y, p)
        ece_iso.update(y, q)
    plot.reliability_diagrams(
        {"ECE state, raw": ece, "ECE state, OnlineIsotonic": ece_iso, "CORP state, raw": corp},
        suptitle="Drawn from streaming metrics' states (no forecasts kept)",
        path=out("reliability_rain_states.png"),
    )  # fmt: skip

    data = niamey_precipitation()
    niamey = {k: data[k] for k in ("Logistic", "EMOS", "ENS", "EPC")}
    print("\nNiamey, July-September 2016 (92 days):\n")
    print(
        "| forecaster | ECE (10 bins) | bins outside band | MCB | DSC | UNC | S (Brier) "
        "| CORP points outside band |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, probs in niamey.items():
        summary(name, probs, data["obs"])
    plot.reliability_diagrams(
        niamey, data["obs"], kind="corp",
        suptitle="Probability of precipitation at Niamey, July-September 2016: CORP",
        path=out("reliability_niamey_corp.png"),
    )  # fmt: skip

    rng = np.random.default_rng(0)
    truth = rng.dirichlet([1.0, 1.0, 1.0], size=5000)
    classes = (rng.uniform(size=(5000, 1)) > truth.cumsum(axis=1)).sum(axis=1)
    logits = np.log(truth) / 0.6
    model = np.exp(logits - logits.max(axis=1, keepdims=True))
    model /= model.sum(axis=1, keepdims=True)
    views = {
        **plot.multiclass_views(classes, model, "confidence"),
        **plot.multiclass_views(classes, model, "classwise"),
    }
    plot.reliability_diagrams(
        views, kind="binned",
        suptitle="Three classes, over-confident model (temperature 0.6): confidence and class-wise views",
        path=out("reliability_multiclass.png"),
    )  # fmt: skip
    for path in written:
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
