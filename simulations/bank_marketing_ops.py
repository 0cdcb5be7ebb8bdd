"""The Online Platt Scaling protocol (Gupta and Ramdas, ICML 2023) on UCI Bank Marketing.

Question: when a fixed base classifier's scores are recalibrated online, event by event,
do OnlinePlatt and its calibeating versions (TOPS = tracking, HOPS = hedging) cut the
calibration error without losing sharpness, with and without covariate drift?

Protocol:

- data: ``simulations/data/bank_marketing.csv.gz``, an unmodified gzip copy of
  ``shared/data/bank_marketing.csv`` (12,870 rows of the UCI Bank Marketing data, CC BY
  4.0, as used by Gupta and Ramdas); label ``y == "yes"`` (31% of rows);
- two orders: the file's order, and sorted by ``age`` (stable sort), which makes the
  stream drift: the base model only ever saw the youngest clients;
- base classifier: scikit-learn ``RandomForestClassifier(n_estimators=100,
  min_samples_leaf=5, random_state=0)`` on one-hot features, trained on the first 1,000
  rows of the order; the remaining 11,870 rows are streamed;
- every calibrator starts cold at the first streamed row; for each row it predicts the
  base score, then learns the (score, label) pair (prequential);
- metrics of all predictions made up to time t, for t on a grid: ECE with 10 equal-width
  bins (``streamcal.metrics.expected_calibration_error``) and sharpness, the
  count-weighted mean of squared bin outcome rates on the same 10 bins,
  ``sum_b (n_b / t) * ybar_b**2`` (larger is sharper; on binned forecasts the
  refinement term of Brier = calibration + refinement is ``mean(y) - sharpness``).

Run (needs the ``simulations`` extra: ``pip install -e ".[simulations]"``)::

    python simulations/bank_marketing_ops.py

writes ``simulations/results/bank_marketing_ops.csv`` (metrics over time),
``bank_marketing_ops.md`` (the final table) and ``bank_marketing_ops.png``.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import os
import sys

import numpy as np

import streamcal
from streamcal.metrics import expected_calibration_error

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # the shared helpers, also when this file is loaded by path
import _common  # noqa: E402

DATA = os.path.join(HERE, "data", "bank_marketing.csv.gz")
RESULTS = os.path.join(HERE, "results")

NUMERIC = ["age", "balance", "day", "campaign", "pdays", "previous"]
CATEGORICAL = ["job", "marital", "education", "default", "housing", "loan", "contact", "month", "poutcome"]
N_TRAIN = 1000
N_BINS = 10


def load_rows():
    with gzip.open(DATA, "rt", newline="") as f:
        return list(csv.DictReader(f))


def encode(rows, categories):
    """Numeric columns as floats, categorical ones one-hot on ``categories``."""
    cols = [np.array([float(r[c]) for r in rows]) for c in NUMERIC]
    for c in CATEGORICAL:
        values = np.array([r[c] for r in rows])
        cols.extend((values == v).astype(float) for v in categories[c])
    return np.column_stack(cols)


def calibrators():
    """The calibrators compared, by display name (fresh instances)."""
    return {
        "base": None,
        "OnlinePlatt": streamcal.OnlinePlatt(),
        "OnlineBeta": streamcal.OnlineBeta(),
        "TOPS": streamcal.TrackingCalibeater(base=streamcal.OnlinePlatt()),
        "HOPS": streamcal.HedgingCalibeater(base=streamcal.OnlinePlatt(), seed=0),
        "OnlineIsotonic": streamcal.OnlineIsotonic(),
        "HistogramBinning": streamcal.HistogramBinning(),
    }


def sharpness(labels: np.ndarray, probs: np.ndarray, n_bins: int = N_BINS) -> float:
    """``sum_b (n_b / n) * ybar_b**2`` over ``n_bins`` equal-width bins of ``probs``."""
    bins = np.minimum((probs * n_bins).astype(int), n_bins - 1)
    n = np.bincount(bins, minlength=n_bins)
    pos = np.bincount(bins, weights=labels, minlength=n_bins)
    filled = n > 0
    return float(np.sum(pos[filled] ** 2 / n[filled]) / len(labels))


def stream(scores, labels):
    """Prequential predictions of every calibrator on the streamed rows, through
    ``streamcal.replay``."""
    return _common.prequential(calibrators(), scores, labels)


def run_order(rows, order_name, categories, checkpoints):
    from sklearn.ensemble import RandomForestClassifier

    X = encode(rows, categories)
    y = np.array([r["y"] == "yes" for r in rows], dtype=int)
    model = RandomForestClassifier(n_estimators=100, min_samples_leaf=5, random_state=0, n_jobs=1)
    model.fit(X[:N_TRAIN], y[:N_TRAIN])
    scores = model.predict_proba(X[N_TRAIN:])[:, 1].tolist()
    labels = y[N_TRAIN:].tolist()
    preds = stream(scores, labels)
    lab = np.asarray(labels, dtype=float)
    series = []
    for name, p in preds.items():
        for t in checkpoints:
            if t > len(lab):
                continue
            series.append(
                {
                    "order": order_name,
                    "calibrator": name,
                    "t": t,
                    "ece": expected_calibration_error(lab[:t], p[:t], n_bins=N_BINS),
                    "sharpness": sharpness(lab[:t], p[:t]),
                }
            )
    return series, len(lab), float(lab.mean())


def plot(series, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    orders = list(dict.fromkeys(r["order"] for r in series))
    names = list(dict.fromkeys(r["calibrator"] for r in series))
    fig, axes = plt.subplots(2, len(orders), figsize=(6 * len(orders), 7), sharex="col", squeeze=False)
    styles = {"base": dict(color="black", lw=2.2, ls="--")}
    for j, order in enumerate(orders):
        for name in names:
            rows = [r for r in series if r["order"] == order and r["calibrator"] == name]
            t = [r["t"] for r in rows]
            kw = styles.get(name, {})
            axes[0, j].plot(t, [r["ece"] for r in rows], label=name, **kw)
            axes[1, j].plot(t, [r["sharpness"] for r in rows], label=name, **kw)
        axes[0, j].set_title(f"Bank Marketing, {order}")
        axes[0, j].set_ylabel("ECE (10 equal-width bins)")
        axes[1, j].set_ylabel("sharpness  sum_b (n_b/t) ybar_b^2")
        axes[1, j].set_xlabel("streamed events t")
        axes[0, j].set_ylim(bottom=0)
        for ax in axes[:, j]:
            ax.grid(alpha=0.3)
    axes[0, 0].legend(loc="upper right", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Online Platt Scaling protocol on Bank Marketing")
    parser.add_argument("--out", default=RESULTS, help="directory for the table and figure")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    rows = load_rows()
    categories = {c: sorted({r[c] for r in rows}) for c in CATEGORICAL}
    checkpoints = list(range(250, 12_000, 250)) + [len(rows) - N_TRAIN]
    series = []
    orders = {"original order": rows, "sorted by age (drift)": sorted(rows, key=lambda r: int(r["age"]))}
    summary = []
    for order_name, ordered in orders.items():
        s, n, rate = run_order(ordered, order_name, categories, checkpoints)
        series.extend(s)
        final = [r for r in s if r["t"] == n]
        summary.extend((order_name, r["calibrator"], r["ece"], r["sharpness"], n, rate) for r in final)
    with open(os.path.join(args.out, "bank_marketing_ops.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["order", "calibrator", "t", "ece", "sharpness"])
        w.writeheader()
        w.writerows(series)
    lines = [
        "| order | calibrator | ECE (10 bins) | sharpness | streamed events | base rate |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    lines += [f"| {o} | {c} | {e:.4f} | {sh:.4f} | {n} | {r:.3f} |" for o, c, e, sh, n, r in summary]
    table = "\n".join(lines)
    with open(os.path.join(args.out, "bank_marketing_ops.md"), "w") as f:
        f.write(table + "\n")
    plot(series, os.path.join(args.out, "bank_marketing_ops.png"))
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
