"""streamcal.replay: prequential replay of logs, delayed labels, checkpoints, errors.

The replay is compared, exactly (floats equal, not close), with a hand-written
test-then-train loop and with a brute-force simulation of delayed labels
(tests/references_replay.py); a replay interrupted (by SIGKILL in a subprocess, or by an
exception) and resumed from its checkpoint must give exactly the outputs of an
uninterrupted one.
"""

from __future__ import annotations

import csv
import gzip
import json
import math
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from streamcal import (
    HistogramBinning,
    OnlineIsotonic,
    OnlinePlatt,
    ReplayError,
    ReplayResult,
    TrackingCalibeater,
    replay,
)
from streamcal.checks.metrics import check_metric
from streamcal.datasets import rain_forecast_log_path
from streamcal.metrics import (
    CORP,
    ECE,
    ROCAUC,
    TECE,
    Brier,
    CalibrationRefinement,
    ClasswiseECE,
    ConfidenceECE,
    CrossEntropy,
    LogLoss,
    MulticlassBrier,
    MurphyDecomposition,
    Sharpness,
    TopLabelECE,
)
from tests import references_replay as R

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALL_BINARY = (
    "brier",
    "log_loss",
    "ece",
    "sharpness",
    "roc_auc",
    "calibration_refinement",
    "murphy",
    "corp",
)
CLASSES = {
    "brier": Brier,
    "log_loss": LogLoss,
    "ece": ECE,
    "sharpness": Sharpness,
    "roc_auc": ROCAUC,
    "calibration_refinement": CalibrationRefinement,
    "murphy": MurphyDecomposition,
    "corp": CORP,
}


def make_events(n, seed, ties=True):
    """Scores with ties and the edge values 0 and 1; labels from a miscalibrated truth."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        u = rng.random()
        if ties and u < 0.3:
            s = rng.choice([0.0, 0.2, 0.5, 0.8, 1.0])
        else:
            s = rng.betavariate(2, 2)
        y = int(rng.random() < s * s / (s * s + (1 - s) ** 2))
        out.append((s, y))
    return out


def calibrators():
    return {
        "isotonic": OnlineIsotonic(),
        "platt": OnlinePlatt(),
        "histogram": HistogramBinning(n_bins=5),
        "tops": TrackingCalibeater(base=OnlinePlatt()),
    }


def write_csv(path, header, rows):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for row in rows:
            w.writerow([repr(v) if isinstance(v, float) else v for v in row])


def load_json(path):
    with open(path) as f:
        return json.load(f)


def state(result):
    """Everything a replay produced, as JSON data."""
    return {
        "result": result.to_dict(),
        "calibrators": {n: c.to_dict() for n, c in result.calibrators.items()},
        "metrics": {
            n: {k: m.to_dict() for k, m in ms.items()}
            for n, ms in result.metrics.items()
        },
    }


# ---------------------------------------------------------------------- exactness


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    "keep_forecasts", [False, True]
)  # the lean loop and the general one
def test_equals_hand_written_loop(seed, keep_forecasts):
    events = make_events(400, seed)
    records = [{"score": s, "label": y} for s, y in events]
    result = replay(
        records, calibrators(), ALL_BINARY, every=37, keep_forecasts=keep_forecasts
    )
    oracle_cals = {"raw": None, **calibrators()}
    preds, metrics, samples = R.prequential(
        events, oracle_cals, lambda: {k: CLASSES[k]() for k in ALL_BINARY}, every=37
    )
    assert list(result.summary) == ["raw", "isotonic", "platt", "histogram", "tops"]
    for name, ms in metrics.items():
        for k, m in ms.items():
            assert result.summary[name][k] == m.get(), (name, k)
        assert result.summary[name]["corp.mcb"] == ms["corp"].mcb
        assert (
            result.summary[name]["calibration_refinement.refinement"]
            == ms["calibration_refinement"].refinement
        )
        assert result.summary[name]["murphy.resolution"] == ms["murphy"].resolution
        assert result.metrics[name]["ece"].bins == ms["ece"].bins
    assert result.series["t"] == [t for t, _ in samples] + [400]
    for name in oracle_cals:
        for k in ALL_BINARY:
            got = result.series[name][k]
            assert got[:-1] == [(t, values[name][k]) for t, values in samples]
            assert got[-1] == (400, metrics[name][k].get())
    for name, cal in result.calibrators.items():
        assert cal.to_dict() == oracle_cals[name].to_dict()
    if keep_forecasts:
        assert result.forecasts["index"] == list(range(400))
        assert result.forecasts["label"] == [y for _, y in events]
        for name in oracle_cals:
            assert result.forecasts[name] == preds[name]
    else:
        assert result.forecasts is None
    assert (result.n_events, result.n_learnt, result.n_skipped, result.errors) == (
        400,
        400,
        0,
        [],
    )


def test_calibrators_learn_in_place_and_raw_is_optional():
    events = make_events(100, 3)
    cal = OnlineIsotonic()
    result = replay(
        [{"score": s, "label": y} for s, y in events],
        {"iso": cal},
        include_raw=False,
        every=None,
    )
    assert result.calibrators["iso"] is cal and cal.n_events == 100
    assert list(result.summary) == ["iso"] and result.series["t"] == [100]
    result = replay([{"score": s, "label": y} for s, y in events], {}, ["brier"])
    assert list(result.summary) == ["raw"]
    assert result.summary["raw"]["brier"] == sum((s - y) ** 2 for s, y in events) / 100


# ---------------------------------------------------------------------- inputs


def test_every_input_form_gives_the_same_result(tmp_path):
    events = make_events(300, 4)
    times = [f"2013-01-01T{i // 60:02d}:{i % 60:02d}:00Z" for i in range(300)]
    records = [{"time": t, "score": s, "label": y} for t, (s, y) in zip(times, events)]
    header = ["time", "score", "label"]
    rows = [[r["time"], r["score"], r["label"]] for r in records]
    inputs = {"records": records}
    for name in ("log.csv", "log.csv.gz"):
        write_csv(tmp_path / name, header, rows)
        inputs[name] = str(tmp_path / name)
    for name in ("log.jsonl", "log.jsonl.gz"):
        opener = gzip.open if name.endswith(".gz") else open
        with opener(tmp_path / name, "wt") as f:
            for r in records:
                f.write(json.dumps(r) + "\n")
        inputs[name] = tmp_path / name  # PathLike
    try:
        import pandas as pd

        inputs["DataFrame"] = pd.DataFrame(records)
    except ImportError:
        pass
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(records), str(tmp_path / "log.parquet"))
        inputs["parquet"] = str(tmp_path / "log.parquet")
    except ImportError:
        pass
    results = {
        name: replay(
            src, calibrators(), ("brier", "ece", "corp"), time="time", every=50
        ).to_dict()
        for name, src in inputs.items()
    }
    expected = results.pop("records")
    assert expected["series"]["time"][0] == "2013-01-01T00:49:00Z"
    for name, got in results.items():
        assert got == expected, name


def test_dataframe_with_numpy_values_and_datetimes():
    pd = pytest.importorskip("pandas")
    events = make_events(200, 5)
    df = pd.DataFrame(
        {
            "time": pd.date_range("2013-01-01", periods=200, freq="h"),
            "score": [s for s, _ in events],
            "label": [bool(y) for _, y in events],
        }
    )
    df["label_time"] = df["time"] + pd.Timedelta(hours=3)
    got = replay(df, calibrators(), time="time", label_time="label_time", every=40)
    records = [
        {"time": i * 3600, "lt": i * 3600 + 3 * 3600, "score": s, "label": y}
        for i, (s, y) in enumerate(events)
    ]
    want = replay(records, calibrators(), time="time", label_time="lt", every=40)
    assert got.summary == want.summary
    assert got.series["time"][0] == "2013-01-02T15:00:00"


def test_parquet_skipped_without_pyarrow_is_the_only_optional_input():
    """Parquet needs pyarrow (imported only for .parquet paths)."""
    pytest.importorskip("pyarrow")
    import pyarrow as pa
    import pyarrow.parquet as pq

    assert pa and pq


# ---------------------------------------------------------------------- multiclass


def multiclass_events(n, seed, classes=("rain", "snow", "dry")):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        w = [rng.random() ** 2 for _ in classes]
        if rng.random() < 0.1:
            w = [1.0 if i == 0 else 0.0 for i in range(len(classes))]  # one-hot
        total = sum(w)
        p = [x / total for x in w]
        y = rng.choices(classes, weights=[0.2, 0.1, 0.7])[0]
        out.append((dict(zip(classes, p)), y))
    return out


def test_multiclass_raw_and_calibrator_equal_hand_loop(tmp_path):
    events = multiclass_events(300, 0)
    records = [{**{f"p_{c}": v for c, v in p.items()}, "y": y} for p, y in events]
    score = {"rain": "p_rain", "snow": "p_snow", "dry": "p_dry"}
    names = ("brier", "log_loss", "ece", "top_label_ece", "classwise_ece", "tece")
    result = replay(
        records,
        {"mix": R.MixingCalibrator()},
        names,
        score=score,
        label="y",
        keep_forecasts=True,
        every=100,
    )
    table = {
        "brier": MulticlassBrier,
        "log_loss": CrossEntropy,
        "ece": ConfidenceECE,
        "top_label_ece": TopLabelECE,
        "classwise_ece": ClasswiseECE,
        "tece": TECE,
    }
    cal = R.MixingCalibrator()
    metrics = {name: {k: table[k]() for k in names} for name in ("raw", "mix")}
    preds = []
    for p, y in events:
        q = cal.predict_one(p)
        preds.append(q)
        for m in metrics["raw"].values():
            m.update(y, p)
        for m in metrics["mix"].values():
            m.update(y, q)
        cal.learn_one(p, y)
    for name, ms in metrics.items():
        for k, m in ms.items():
            assert result.summary[name][k] == m.get(), (name, k)
    assert result.forecasts["mix"] == preds
    assert result.forecasts["raw"] == [p for p, _ in events]
    json.dumps(result.to_dict(), allow_nan=False)
    brier = sum(sum((p[c] - (c == y)) ** 2 for c in p) for p, y in events) / 300
    assert math.isclose(result.summary["raw"]["brier"], brier, rel_tol=1e-12)
    logloss = -sum(math.log(max(p[y], 1e-15)) for p, y in events) / 300
    assert math.isclose(result.summary["raw"]["log_loss"], logloss, rel_tol=1e-12)
    # the same log as a CSV file, classes named by their columns, labels as text
    write_csv(
        tmp_path / "mc.csv",
        ["rain", "snow", "dry", "y"],
        [[p["rain"], p["snow"], p["dry"], y] for p, y in events],
    )
    again = replay(
        str(tmp_path / "mc.csv"),
        {"mix": R.MixingCalibrator()},
        names,
        score=["rain", "snow", "dry"],
        label="y",
        every=100,
    )
    assert again.to_dict()["summary"] == result.to_dict()["summary"]


def test_multiclass_rows_int_classes_normalisation_and_errors():
    rows = [
        {"a": "0.2", "b": "0.3", "c": "0.5", "y": "2"},  # text label -> class 2
        {"a": 0.2, "b": 0.3, "c": 0.505, "y": 1},  # sum 1.005: normalised
        {"a": 0.2, "b": 0.3, "c": 0.6, "y": 0},  # sum 1.1: malformed
        {"a": 0.2, "b": 0.3, "c": 0.5, "y": 3},  # unknown class
        {"a": 0.2, "b": "x", "c": 0.5, "y": 0},  # non-numeric
        {"a": 0.2, "b": 1.3, "c": -0.5, "y": 0},  # out of range
    ]
    result = replay(
        rows,
        {},
        ["brier"],
        score={0: "a", 1: "b", 2: "c"},
        label="y",
        keep_forecasts=True,
    )
    assert result.n_events == 2 and result.n_skipped == 4
    assert result.forecasts["label"] == [2, 1]
    p = result.forecasts["raw"][1]
    assert list(p) == [0, 1, 2] and math.isclose(sum(p.values()), 1.0, abs_tol=1e-15)
    assert p[2] == 0.505 / 1.005
    assert [line for line, _ in result.errors] == [2, 3, 4, 5]
    assert "sum to 1.1" in result.errors[0][1]
    assert (
        result.errors[1][1] == "unknown label 3 (column 'y'): expected one of 0, 1, 2"
    )
    assert result.errors[2][1] == "non-numeric probability 'x' (column 'b')"
    assert result.errors[3][1] == "probability 1.3 out of range [0, 1] (column 'b')"


def test_multiclass_needs_multiclass_metrics_and_calibrators():
    rows = [{"a": 0.5, "b": 0.5, "label": "a"}]
    with pytest.raises(ValueError, match="must name multiclass metrics"):
        replay(rows, {}, ["roc_auc"], score=["a", "b"])
    with pytest.raises(ValueError, match="must hold multiclass metrics"):
        replay(rows, {}, [Brier()], score=["a", "b"])
    with pytest.raises(ValueError, match="must hold binary metrics"):
        replay([{"score": 0.5, "label": 1}], {}, [ConfidenceECE()])
    with pytest.raises(TypeError, match="is a binary calibrator"):
        replay(rows, {"iso": OnlineIsotonic()}, score=["a", "b"])


def test_multiclass_scores_check_suite():
    for metric in (
        MulticlassBrier(),
        CrossEntropy(),
        CrossEntropy(eps=0.01),
    ):
        check_metric(metric)


# ---------------------------------------------------------------------- delayed labels


def delayed_events(n, seed, max_delay=6):
    """(time, label_time, score, label): times with repeats, delays 0..max_delay."""
    rng = random.Random(seed)
    t = 0
    out = []
    for s, y in make_events(n, seed):
        t += rng.choice([0, 1, 1, 2])
        out.append((t, t + rng.randint(0, max_delay), s, y))
    return out


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(
    "make",
    [OnlineIsotonic, OnlinePlatt, lambda: TrackingCalibeater(base=OnlinePlatt())],
    ids=["isotonic", "platt", "tops"],
)
def test_delayed_labels_equal_brute_force(seed, make):
    events = delayed_events(150, seed)
    records = [{"t": t, "lt": lt, "score": s, "label": y} for t, lt, s, y in events]
    result = replay(
        records,
        {"cal": make()},
        ALL_BINARY,
        time="t",
        label_time="lt",
        keep_forecasts=True,
    )
    order = R.delayed_scoring_order(events)
    assert result.forecasts["index"] == order
    preds = R.delayed_predictions(events, make)
    assert result.forecasts["cal"] == [preds[j] for j in order]
    for k in ALL_BINARY:
        m = CLASSES[k]()
        for j in order:
            m.update(events[j][3], preds[j])
        assert result.summary["cal"][k] == m.get(), k
    # the calibrator ends having learnt every label, in label-time order
    cal = make()
    for j in order:
        cal.learn_one(events[j][2], events[j][3])
    assert result.calibrators["cal"].to_dict() == cal.to_dict()
    assert (result.n_events, result.n_learnt, result.n_unlabelled) == (150, 150, 0)


def test_label_at_the_same_time_is_known_and_own_label_never():
    rows = [
        {"t": 0, "lt": 1, "score": 0.3, "label": 1},
        {"t": 1, "lt": 1, "score": 0.3, "label": 1},  # sees event 0 (tie), not itself
        {"t": 1, "lt": 0, "score": 0.3, "label": 0},  # label "before" its time: still
        {"t": 2, "lt": 9, "score": 0.3, "label": 0},  # only after its own prediction
    ]
    result = replay(
        rows,
        {"iso": OnlineIsotonic()},
        ["brier"],
        time="t",
        label_time="lt",
        keep_forecasts=True,
    )
    by_index = dict(zip(result.forecasts["index"], result.forecasts["iso"]))
    assert by_index == {0: 0.3, 1: 1.0, 2: 1.0, 3: 2 / 3}
    assert result.forecasts["index"] == [0, 1, 2, 3]


def test_zero_delays_equal_plain_replay():
    events = make_events(300, 7)
    plain = replay(
        [{"score": s, "label": y, "t": i} for i, (s, y) in enumerate(events)],
        calibrators(),
        ALL_BINARY,
        time="t",
        every=50,
    )
    delayed = replay(
        [{"score": s, "label": y, "t": i, "lt": i} for i, (s, y) in enumerate(events)],
        calibrators(),
        ALL_BINARY,
        time="t",
        label_time="lt",
        every=50,
    )
    assert delayed.to_dict() == plain.to_dict()


def test_bundled_log_delayed_by_an_hour():
    """Each forecast's outcome is known an hour later, when the next forecast is issued
    (a tie: known to it), so every prediction is that of a replay without delay; only
    the samples of the series lag by one scored event."""
    path = rain_forecast_log_path()
    kw = {"metrics": ("brier", "ece"), "time": "time", "keep_forecasts": True}
    a = replay(path, {"platt": OnlinePlatt()}, label_time="label_time", **kw)
    b = replay(path, {"platt": OnlinePlatt()}, **kw)
    assert a.summary == b.summary and a.forecasts == b.forecasts and a.n_events == 8685
    assert a.series["time"] == b.series["time"]
    assert a.series["platt"]["brier"][-1] == b.series["platt"]["brier"][-1]


def label_records(events, seed):
    """Events with ids, and label records sorted by arrival time (ties in event order)."""
    ev = [{"id": f"e{j}", "t": t, "score": s} for j, (t, _, s, _) in enumerate(events)]
    labs = sorted(
        (
            {"id": f"e{j}", "t": lt, "label": y}
            for j, (_, lt, _, y) in enumerate(events)
        ),
        key=lambda r: r["t"],
    )
    return ev, labs


@pytest.mark.parametrize("seed", range(3))
def test_label_records_joined_by_id_equal_label_time_column(seed, tmp_path):
    events = delayed_events(200, seed)
    ev, labs = label_records(events, seed)
    with open(tmp_path / "labels.jsonl", "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in labs)
    got = replay(
        ev,
        calibrators(),
        ALL_BINARY,
        time="t",
        id="id",
        labels=str(tmp_path / "labels.jsonl"),
        every=30,
        window=25,
    )
    want = replay(
        [{"t": t, "lt": lt, "score": s, "label": y} for t, lt, s, y in events],
        calibrators(),
        ALL_BINARY,
        time="t",
        label_time="lt",
        every=30,
        window=25,
    )
    assert got.to_dict() == want.to_dict()


def test_label_records_errors_and_unlabelled_events():
    ev = [
        {"id": "a", "t": 0, "score": 0.2},
        {"id": "b", "t": 1, "score": 0.4},
        {"id": "a", "t": 2, "score": 0.6},  # duplicate: a still waits for its label
        {"id": "c", "t": 3, "score": 0.8},  # never labelled
        {"id": "a", "t": 4, "score": 0.9},  # a was labelled at 3: a new event a
    ]
    labs = [
        {"id": "b", "t": 1, "label": 1},
        {"id": "zz", "t": 2, "label": 0},  # no such event
        {"id": "a", "t": 3, "label": 0},
        {"id": "b", "t": 3, "label": 1},  # second label for b
        {"id": "a", "t": 2.5, "label": 0},  # out of time order
        {"id": "a", "t": 5, "label": "x"},  # bad label
        {"id": "a", "t": 6, "label": 1},
    ]
    result = replay(
        ev,
        {"iso": OnlineIsotonic()},
        ["brier"],
        time="t",
        id="id",
        labels=labs,
        keep_forecasts=True,
    )
    assert (result.n_events, result.n_learnt, result.n_unlabelled) == (4, 3, 1)
    assert result.forecasts["index"] == [1, 0, 3]
    no_match = (
        "(column 'id') matches no event waiting for its label (an unknown id, a "
        "second label, or a label earlier than its event)"
    )
    assert result.errors == [
        (
            2,
            (
                "duplicate id 'a' (column 'id'): an event with this id is still waiting for "
                "its label"
            ),
        ),
        (1, f"labels: the id 'zz' {no_match}"),
        (
            4,
            (
                "labels: time 2.5 is earlier than the previous label record's (column 't'): "
                "label records must be in time order"
            ),
        ),
        (5, "labels: unknown label 'x' (column 'label'): expected 0 or 1"),
        (3, f"labels: the id 'b' {no_match}"),
    ]
    assert result.n_skipped == 5


def test_events_out_of_time_order_are_malformed():
    rows = [
        {"t": "2013-01-01T05:00Z", "lt": "2013-01-01T06:00Z", "score": 0.5, "label": 1},
        {"t": "2013-01-01T04:00Z", "lt": "2013-01-01T06:00Z", "score": 0.5, "label": 1},
        {"t": "2013-01-01T05:00Z", "lt": "soon", "score": 0.5, "label": 1},
    ]
    result = replay(rows, {}, ["brier"], time="t", label_time="lt")
    assert result.n_events == 1
    assert result.errors == [
        (
            1,
            (
                "time '2013-01-01T04:00Z' is earlier than the previous event's (column 't'): "
                "delayed labels need the log in time order"
            ),
        ),
        (2, "label_time 'soon' is neither a number nor an ISO 8601 date (column 'lt')"),
    ]


# ---------------------------------------------------------------------- windows


@pytest.mark.parametrize("delayed", [False, True])
def test_window_equals_metrics_of_the_tail(delayed):
    events = delayed_events(300, 11)
    records = [{"t": t, "lt": lt, "score": s, "label": y} for t, lt, s, y in events]
    metrics = {
        "brier": "brier",
        "ece": "ece",
        "corp": "corp",
        "qece": ECE(n_bins=4, strategy="quantile"),
    }
    kw = {"time": "t", "label_time": "lt"} if delayed else {}
    result = replay(
        records,
        {"iso": OnlineIsotonic()},
        metrics,
        window=40,
        every=25,
        keep_forecasts=True,
        **kw,
    )
    f = result.forecasts
    make = {
        "brier": Brier,
        "ece": ECE,
        "corp": CORP,
        "qece": lambda: ECE(n_bins=4, strategy="quantile"),
    }
    for k, factory in make.items():  # the end: the last 40 scored events
        m = factory()
        for y, p in zip(f["label"][-40:], f["iso"][-40:]):
            m.update(y, p)
        assert math.isclose(
            result.summary["iso"][k + "@window"], m.get(), rel_tol=1e-9, abs_tol=1e-12
        ), k
    if not delayed:  # and at every sample, the last 40 events before it
        for k, factory in make.items():
            for t, v in result.series["iso"][k + "@window"]:
                m = factory()
                for y, p in zip(
                    f["label"][max(0, t - 40) : t], f["iso"][max(0, t - 40) : t]
                ):
                    m.update(y, p)
                assert math.isclose(v, m.get(), rel_tol=1e-9, abs_tol=1e-12), (k, t)
    assert set(result.metrics["iso"]) == {
        "brier",
        "ece",
        "corp",
        "qece",
        "brier@window",
        "ece@window",
        "corp@window",
        "qece@window",
    }
    assert (
        result.summary["iso"]["corp.mcb@window"]
        == result.metrics["iso"]["corp@window"].mcb
    )


# ---------------------------------------------------------------------- errors


BAD_CSV = (
    "time,score,label\n"
    "0,0.1,0\n"  # line 2
    "1,,1\n"  # 3: missing score
    "2,abc,1\n"  # 4: non-numeric
    "\n"  # 5: blank, ignored
    "3,1.5,0\n"  # 6: out of range
    "4,nan,0\n"  # 7: NaN
    "5,0.5,2\n"  # 8: unknown label
    "6,0.5\n"  # 9: short row
    "7,0.7,1\n"  # 10
    "8,0.3,yes\n"  # 11: unknown label
    "9,0.9,true\n"  # 12
)
BAD_ERRORS = [
    (3, "missing score (column 'score')"),
    (4, "non-numeric score 'abc' (column 'score')"),
    (6, "score '1.5' out of range [0, 1] (column 'score')"),
    (7, "score is NaN (column 'score')"),
    (8, "unknown label '2' (column 'label'): expected 0 or 1"),
    (9, "missing label (column 'label'): the row has 2 fields"),
    (11, "unknown label 'yes' (column 'label'): expected 0 or 1"),
]


@pytest.mark.parametrize("keep_forecasts", [False, True])
def test_malformed_rows_are_reported_with_line_numbers_and_skipped(
    tmp_path, keep_forecasts
):
    path = tmp_path / "bad.csv"
    path.write_text(BAD_CSV)
    result = replay(str(path), {"iso": OnlineIsotonic()}, keep_forecasts=keep_forecasts)
    assert result.errors == BAD_ERRORS
    assert (result.n_events, result.n_learnt, result.n_skipped) == (3, 3, 7)
    clean = replay(
        [
            {"score": 0.1, "label": 0},
            {"score": 0.7, "label": 1},
            {"score": 0.9, "label": 1},
        ],
        {"iso": OnlineIsotonic()},
    )
    assert result.summary == clean.summary
    capped = replay(str(path), {}, max_errors=2)
    assert capped.errors == BAD_ERRORS[:2] and capped.n_skipped == 7


def test_malformed_records_use_the_index():
    rows = [
        {"score": 0.2, "label": 0},
        {"score": True, "label": 1},
        ["not", "a", "dict"],
        {"label": 1},
        {"score": 0.5, "label": None},
        {"score": 0.5, "label": 1.0},
    ]
    result = replay(rows, {"iso": OnlineIsotonic()}, ["brier"])
    assert result.errors == [
        (1, "score True is a bool, not a number (column 'score')"),
        (2, "the row is not a record (a dict): ['not', 'a', 'dict']"),
        (3, "missing score (column 'score')"),
        (4, "missing label (column 'label')"),
    ]
    assert result.n_events == 2


def test_malformed_json_lines(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text(
        '{"score": 0.2, "label": 0}\n\n{"score": 0.3, label: 1}\n[0.5, 1]\n'
        '{"score": 0.9, "label": true}\n'
    )
    result = replay(path, {"iso": OnlineIsotonic()}, ["brier"])
    assert result.n_events == 2
    assert result.errors == [
        (3, "invalid JSON (Expecting property name enclosed in double quotes)"),
        (4, "the row is not a record (a dict): [0.5, 1]"),
    ]


def test_one_shot_iterators():
    events = make_events(50, 6)
    result = replay(({"score": s, "label": y} for s, y in events), {}, ["brier"])
    assert result.n_events == 50


def test_on_error_raise_keeps_what_was_learnt(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text(BAD_CSV)
    cal = OnlineIsotonic()
    with pytest.raises(ReplayError) as info:
        replay(str(path), {"iso": cal}, on_error="raise")
    exc = info.value
    assert (exc.line, exc.reason, exc.source, exc.n_events, exc.checkpoint) == (
        3,
        "missing score (column 'score')",
        "events",
        1,
        None,
    )
    assert str(exc) == "malformed line 3 of bad.csv: missing score (column 'score')"
    assert cal.n_events == 1  # the first row was learnt
    with pytest.raises(
        ReplayError, match=r"malformed row 1 of the records: missing label"
    ):
        replay([{"score": 0.1, "label": 0}, {"score": 0.1}], {}, on_error="raise")
    with pytest.raises(
        ReplayError, match=r"malformed label record, row 0 of the records"
    ):
        replay(
            [{"id": 1, "t": 0, "score": 0.1}],
            {},
            time="t",
            id="id",
            labels=[{"id": 2, "t": 0, "label": 1}],
            on_error="raise",
        )


def test_fix_the_row_and_resume(tmp_path):
    """With a checkpoint, a run stopped by a malformed row resumes once it is fixed."""
    path, ckpt = tmp_path / "log.csv", tmp_path / "state.json"
    rows = [[i, i, s, y] for i, (s, y) in enumerate(make_events(500, 8))]
    rows[300][2] = "oops"
    write_csv(path, ["t", "lt", "score", "label"], rows)
    kw = {
        "metrics": ALL_BINARY,
        "time": "t",
        "label_time": "lt",
        "checkpoint": str(ckpt),
        "checkpoint_every": 100,
        "window": 30,
        "on_error": "raise",
    }
    with pytest.raises(ReplayError) as info:
        replay(str(path), calibrators(), **kw)
    assert info.value.line == 302 and info.value.checkpoint == str(ckpt)
    assert load_json(ckpt)["events_read"] == 300
    rows[300][2] = 0.5
    write_csv(path, ["t", "lt", "score", "label"], rows)
    resumed = replay(str(path), calibrators(), resume=True, **kw)
    os.remove(ckpt)
    fresh = replay(str(path), calibrators(), **kw)
    assert state(resumed) == state(fresh)


# ---------------------------------------------------------------------- checkpoints


class Interrupt(Exception):
    pass


def stop_at(n):
    def progress(done):
        if done >= n:
            raise Interrupt(done)

    return progress


def write_delayed_log(path, n, seed, errors=True):
    events = delayed_events(n, seed, max_delay=40)
    rows = [[t, lt, s, y] for t, lt, s, y in events]
    if errors:
        for i in range(17, n, 97):
            rows[i][2] = "n/a"
    write_csv(path, ["t", "lt", "score", "label"], rows)


CONFIGS = {
    "plain": {"metrics": ALL_BINARY},
    "window-forecasts": {
        "metrics": {
            "b": "brier",
            "q": ECE(n_bins=5, strategy="quantile"),
            "corp": "corp",
        },
        "window": 60,
        "keep_forecasts": True,
    },
    "label-time": {
        "metrics": ALL_BINARY,
        "time": "t",
        "label_time": "lt",
        "window": 50,
    },
}


@pytest.mark.parametrize("config", list(CONFIGS))
def test_interrupted_and_resumed_equals_uninterrupted(config, tmp_path):
    path, ckpt = tmp_path / "log.csv", tmp_path / "state.json"
    write_delayed_log(path, 1200, 21)
    kw = dict(CONFIGS[config], checkpoint=str(ckpt), checkpoint_every=250, every=50)
    with pytest.raises(Interrupt):
        replay(str(path), calibrators(), progress=stop_at(730), **kw)
    saved = load_json(ckpt)
    assert saved["n_events"] == 500 and saved["format"] == "streamcal.replay/1"
    assert not [p for p in os.listdir(tmp_path) if ".tmp" in p]
    cals = calibrators()
    resumed = replay(str(path), cals, resume=True, **kw)
    assert resumed.calibrators["isotonic"] is cals["isotonic"]  # restored in place
    uninterrupted = replay(str(path), calibrators(), **dict(kw, checkpoint=None))
    assert state(resumed) == state(uninterrupted)
    assert resumed.n_skipped == 13 and resumed.n_events == 1187


def test_resume_label_records_and_multiclass(tmp_path):
    events = delayed_events(600, 5, max_delay=30)
    ev, labs = label_records(events, 5)
    ckpt = tmp_path / "ids.json"
    kw = {
        "metrics": ALL_BINARY,
        "time": "t",
        "id": "id",
        "labels": labs,
        "checkpoint": str(ckpt),
        "checkpoint_every": 100,
        "every": 40,
        "keep_forecasts": True,
    }
    with pytest.raises(Interrupt):
        replay(ev, calibrators(), progress=stop_at(360), **kw)
    resumed = replay(ev, calibrators(), resume=True, **kw)
    want = replay(ev, calibrators(), **dict(kw, checkpoint=None))
    assert state(resumed) == state(want)

    mc = multiclass_events(500, 2)
    rows = [
        {"t": i // 2, "lt": i // 2 + (i % 7), **p, "y": y}
        for i, (p, y) in enumerate(mc)
    ]
    ckpt = tmp_path / "mc.json"
    kw = {
        "metrics": ("brier", "log_loss", "ece", "classwise_ece", "tece"),
        "score": ["rain", "snow", "dry"],
        "label": "y",
        "time": "t",
        "label_time": "lt",
        "window": 30,
        "keep_forecasts": True,
        "checkpoint": str(ckpt),
        "checkpoint_every": 100,
    }
    with pytest.raises(Interrupt):
        replay(
            rows, {"mix": R.MixingCalibrator()}, progress=stop_at(300), every=100, **kw
        )
    resumed = replay(rows, {"mix": R.MixingCalibrator()}, resume=True, every=100, **kw)
    want = replay(
        rows, {"mix": R.MixingCalibrator()}, every=100, **dict(kw, checkpoint=None)
    )
    assert resumed.to_dict() == want.to_dict()
    assert resumed.forecasts == want.forecasts


def test_resume_a_growing_log(tmp_path):
    """The checkpoint written at the end of a log precedes the revealing of the labels
    still pending, so resuming on the log grown since gives the full replay."""
    events = delayed_events(800, 9, max_delay=20)
    rows = [{"t": t, "lt": lt, "score": s, "label": y} for t, lt, s, y in events]
    ckpt = tmp_path / "state.json"
    kw = {
        "metrics": ALL_BINARY,
        "time": "t",
        "label_time": "lt",
        "checkpoint": str(ckpt),
        "checkpoint_every": 10_000,
        "every": 100,
    }
    replay(rows[:555], calibrators(), **kw)
    grown = replay(rows, calibrators(), resume=True, **kw)
    full = replay(rows, calibrators(), **dict(kw, checkpoint=None))
    assert state(grown) == state(full)
    again = replay(rows, calibrators(), resume=True, **kw)  # nothing new: same result
    assert again.to_dict() == full.to_dict()


def test_resume_checks_the_settings(tmp_path):
    path, ckpt = tmp_path / "log.csv", tmp_path / "state.json"
    write_delayed_log(path, 300, 1)
    replay(str(path), calibrators(), checkpoint=str(ckpt), checkpoint_every=100)
    with pytest.raises(ValueError, match=r"other settings \(calibrators differ\)"):
        replay(
            str(path),
            {"isotonic": OnlineIsotonic(resolution=0.01)},
            checkpoint=str(ckpt),
            resume=True,
        )
    with pytest.raises(ValueError, match=r"\(metrics differ\)"):
        replay(str(path), calibrators(), ["brier"], checkpoint=str(ckpt), resume=True)
    cals = calibrators()
    with pytest.raises(ValueError, match="belongs to another log"):
        replay([{"score": 0.5, "label": 1}], cals, checkpoint=str(ckpt), resume=True)
    for cal, fresh in zip(cals.values(), calibrators().values()):
        assert cal.to_dict() == fresh.to_dict()  # nothing restored
    (tmp_path / "junk.json").write_text("{}")
    with pytest.raises(ValueError, match="is not a replay checkpoint"):
        replay(
            str(path),
            calibrators(),
            checkpoint=str(tmp_path / "junk.json"),
            resume=True,
        )
    missing = replay(
        str(path), calibrators(), checkpoint=str(tmp_path / "new.json"), resume=True
    )  # no checkpoint yet: from the beginning
    assert missing.n_events == 297


KILLED_SCRIPT = textwrap.dedent(
    """
    import sys, time
    from streamcal import OnlineIsotonic, OnlinePlatt, TrackingCalibeater, replay
    from streamcal.metrics import ECE

    def slow(n):  # slow enough for the test to kill the run midway
        time.sleep(0.02)

    replay(
        sys.argv[1],
        {"isotonic": OnlineIsotonic(), "tops": TrackingCalibeater(base=OnlinePlatt())},
        ("brier", "log_loss", "roc_auc", ECE(n_bins=5, strategy="quantile")),
        time="t", label_time="lt", window=80, every=100, progress=slow,
        checkpoint=sys.argv[2], checkpoint_every=500,
    )
    print("finished")
    """
)


def test_killed_replay_resumes_exactly(tmp_path):
    """SIGKILL a replay running in a subprocess once its first checkpoint is written;
    resumed in this process, it ends exactly as an uninterrupted replay."""
    path, ckpt = tmp_path / "log.csv", tmp_path / "state.json"
    write_delayed_log(path, 5000, 3)
    script = tmp_path / "run.py"
    script.write_text(KILLED_SCRIPT)
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(path), str(ckpt)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while not ckpt.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no checkpoint written"
            time.sleep(0.005)
        time.sleep(0.1)  # let it run on past the first checkpoint
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    saved = load_json(ckpt)  # written atomically: always whole
    assert 0 < saved["n_events"] < 4500, saved["n_events"]

    kw = {
        "metrics": ("brier", "log_loss", "roc_auc", ECE(n_bins=5, strategy="quantile")),
        "time": "t",
        "label_time": "lt",
        "window": 80,
        "every": 100,
        "checkpoint_every": 500,
    }

    def cals():
        return {
            "isotonic": OnlineIsotonic(),
            "tops": TrackingCalibeater(base=OnlinePlatt()),
        }

    resumed = replay(str(path), cals(), checkpoint=str(ckpt), resume=True, **kw)
    uninterrupted = replay(str(path), cals(), **kw)
    assert resumed.to_dict() == uninterrupted.to_dict()
    assert state(resumed) == state(uninterrupted)


# ---------------------------------------------------------------------- series, names, API


def test_progress_and_sampling():
    records = [{"score": s, "label": y} for s, y in make_events(250, 1)]
    calls = []
    result = replay(records, {}, ["brier"], every=100, progress=calls.append)
    assert calls == [100, 200, 250] and result.series["t"] == [100, 200, 250]
    calls.clear()
    result = replay(records[:200], {}, ["brier"], every=100, progress=calls.append)
    assert calls == [100, 200] and result.series["t"] == [100, 200]
    result = replay(records, {}, ["brier"], every=None, progress=calls.append)
    assert result.series["t"] == [250] and calls[-1] == 250
    result = replay([], {}, ["brier"])
    assert result.series == {"t": [0], "raw": {"brier": [(0, 0.0)]}}
    assert result.summary == {"raw": {"brier": 0.0}}


def test_metric_keys():
    records = [{"score": s, "label": y} for s, y in make_events(50, 1)]
    result = replay(
        records,
        {},
        [
            ECE(n_bins=15),
            Brier(),
            LogLoss(eps=1e-6),
            CalibrationRefinement(resolution=0.1),
            "corp",
        ],
    )
    assert list(result.summary["raw"]) == [
        "ece:n_bins=15",
        "brier",
        "log_loss:eps=1e-06",
        "calibration_refinement:resolution=0.1",
        "calibration_refinement:resolution=0.1.calibration",
        "calibration_refinement:resolution=0.1.refinement",
        "corp",
        "corp.mcb",
        "corp.dsc",
        "corp.unc",
    ]
    result = replay(records, {}, {"fine": ECE(n_bins=20), "coarse": "ece"})
    assert list(result.summary["raw"]) == ["fine", "coarse"]
    assert result.metrics["raw"]["fine"].n_bins == 20
    with pytest.raises(ValueError, match="Two metrics are named 'ece'"):
        replay(records, {}, ["ece", ECE()])
    with pytest.raises(ValueError, match="must name binary metrics among"):
        replay(records, {}, ["auc"])
    with pytest.raises(
        TypeError, match="metric short names or StreamingMetric objects"
    ):
        replay(records, {}, [len])


def test_argument_checks():
    rows = [{"score": 0.5, "label": 1}]
    cases = [
        (
            {"calibrators": [OnlineIsotonic()]},
            TypeError,
            "must be a dict name -> calibrator",
        ),
        (
            {"calibrators": {"raw": OnlineIsotonic()}},
            ValueError,
            "'raw' names the raw scores",
        ),
        (
            {"calibrators": {"x": object()}},
            TypeError,
            "must have predict_one and learn_one",
        ),
        ({"include_raw": False}, ValueError, "Nothing to replay"),
        ({"label_time": "lt"}, ValueError, "need the events' 'time' column"),
        (
            {"time": "t", "label_time": "lt", "id": "id", "labels": []},
            ValueError,
            "not both",
        ),
        ({"id": "id"}, ValueError, "go together"),
        ({"resume": True}, ValueError, "'resume' parameter of replay"),
        ({"on_error": "ignore"}, ValueError, "'on_error' parameter of replay"),
        ({"every": 0}, ValueError, "'every' argument of replay"),
        ({"window": 0}, ValueError, "'window' argument of replay"),
        ({"score": ""}, ValueError, "'score' parameter of replay"),
        ({"score": ["a"]}, ValueError, "at least two columns"),
        ({"score": ["a", "a"]}, ValueError, "distinct classes"),
        ({"score": "p"}, ValueError, "The score column 'p' is not in the records"),
        ({"window": 5, "metrics": [Sharpness()]}, None, None),
    ]
    for kwargs, exc, match in cases:
        kwargs = dict(kwargs)
        cals = kwargs.pop("calibrators", {})
        if exc is None:
            replay(rows, cals, **kwargs)
            continue
        with pytest.raises(exc, match=match):
            replay(rows, cals, **kwargs)


def test_to_dict_and_to_json(tmp_path):
    records = [
        {"score": s, "label": y, "time": f"t{i}"}
        for i, (s, y) in enumerate(make_events(120, 2))
    ]
    records[5]["score"] = "?"
    result = replay(
        records,
        calibrators(),
        ALL_BINARY,
        time="time",
        every=50,
        window=20,
        keep_forecasts=True,
    )
    assert isinstance(result, ReplayResult) and "n_events=119" in repr(result)
    d = result.to_dict()
    json.dumps(d, allow_nan=False)
    assert d["series"]["time"] == ["t50", "t100", "t119"]
    assert d["series"]["tops"]["brier"][0] == [50, result.series["tops"]["brier"][0][1]]
    assert d["errors"] == [[5, "non-numeric score '?' (column 'score')"]]
    result.to_json(tmp_path / "r.json")
    assert load_json(tmp_path / "r.json") == d


# ---------------------------------------------------------------------- the result's tables


@pytest.mark.parametrize("source", ["records", "csv"])
@pytest.mark.parametrize("delayed", [False, True])
def test_time_range_is_the_first_and_the_last_event(tmp_path, source, delayed):
    # issue 12: the report's "first event time" was the first sample's (event `every`);
    # the result keeps the time of the first event replayed (malformed rows before it
    # are not events) and of the last
    rows = [[f"2020-01-01T00:{i // 60:02d}:{i % 60:02d}", i + 2, s, y]
            for i, (s, y) in enumerate(make_events(300, 5))]  # fmt: skip
    rows[0][2] = "bad"
    rows[1][3] = 7
    rows[-1][2] = 1.5
    header = ["t", "lt", "score", "label"]
    if source == "csv":
        write_csv(tmp_path / "log.csv", header, rows)
        events = str(tmp_path / "log.csv")
    else:
        events = [dict(zip(header, r)) for r in rows]
    kw = {"time": "t", "label_time": "lt"} if delayed else {"time": "t"}
    result = replay(events, {"isotonic": OnlineIsotonic()}, ["brier"], every=50, **kw)
    assert result.n_skipped == 3
    assert result.time_range == (rows[2][0], rows[-2][0])
    assert result.series["time"][0] == rows[51][0]  # event 50: not the first event
    assert result.to_dict()["time_range"] == [rows[2][0], rows[-2][0]]
    # without a time column there is none
    assert replay(events, {}, ["brier"]).time_range is None


def test_time_range_survives_a_resume_and_old_checkpoints_give_none(tmp_path):
    from streamcal.replay._engine import ColumnarReplay

    path, ckpt, old = tmp_path / "log.csv", tmp_path / "state.json", tmp_path / "old.json"
    rows = [[i * 10, s, y] for i, (s, y) in enumerate(make_events(400, 9))]
    write_csv(path, ["t", "score", "label"], rows)
    kw = {"time": "t", "every": 100, "checkpoint_every": 100}
    # stopped after the first chunk (as by Ctrl-C): the checkpoint is written
    first = ColumnarReplay(
        {"isotonic": OnlineIsotonic()}, ["brier"], score="score", label="label",
        time="t", label_time=None, id=None, labels=None, include_raw=True, every=100,
        window=None, checkpoint=str(ckpt), checkpoint_every=100, resume=False,
        on_error="skip", progress=None, keep_forecasts=False, max_errors=10,
        stop=lambda: True,
    )  # fmt: skip
    first.chunk_rows = 150
    part = first.run(str(path))
    # it stops at the first boundary where a stop is honoured (a checkpoint's, here)
    n = part.n_events
    assert part.stopped and 0 < n < 400 and part.time_range == ("0", str((n - 1) * 10))
    # a checkpoint of an earlier version, which did not keep the first event's time
    saved = load_json(ckpt)
    assert saved["first_time_raw"] == "0"
    del saved["first_time_raw"]
    del saved["checksum"]  # nor a checksum
    with open(old, "w") as f:
        json.dump(saved, f)
    resumed = replay(str(path), {"isotonic": OnlineIsotonic()}, ["brier"], resume=True,
                     checkpoint=str(ckpt), **kw)  # fmt: skip
    assert resumed.n_events == 400 and resumed.time_range == ("0", "3990")
    # unknown, not wrong: the report then says the sampled times are what it shows
    again = replay(str(path), {"isotonic": OnlineIsotonic()}, ["brier"], resume=True,
                   checkpoint=str(old), **kw)  # fmt: skip
    assert again.n_events == 400 and again.time_range is None


def test_the_column_table_is_saved_with_the_result():
    from streamcal.metrics.catalogue import Column, metric_info

    rows = [{"score": s, "label": y} for s, y in make_events(200, 2)]
    result = replay(rows, {"isotonic": OnlineIsotonic()}, ["brier", "corp", "roc_auc"],
                    window=50)  # fmt: skip
    d = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    back = tuple(Column(**c) for c in d["columns"])
    assert back == result.columns
    assert [c.key for c in back] == list(result.summary["isotonic"])
    by_key = {c.key: c for c in back}
    assert by_key["corp.dsc@window"].window == 50 and by_key["corp.dsc"].window is None
    assert by_key["corp.dsc@window"].bigger_is_better is True
    assert by_key["corp.unc"].bigger_is_better is None
    assert by_key["roc_auc"].bigger_is_better is True
    assert by_key["corp.mcb"].description == metric_info("corp", "binary").description
    # a multiclass replay: the multiclass metrics' directions (issue 12: None before)
    mc = [{"a": 0.5, "b": 0.3, "c": 0.2, "y": "abc"[i % 3]} for i in range(30)]
    result = replay(mc, {}, ["tece", "ece"], score=["a", "b", "c"], label="y")
    assert [(c.key, c.name, c.task, c.bigger_is_better) for c in result.columns] == [
        ("tece", "tece", "multiclass", False),
        ("ece", "ece", "multiclass", False),
    ]
    assert "top-class view" in result.columns[1].description
