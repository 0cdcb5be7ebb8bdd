"""Tests of streamcal.spark (issue 16 items 1-3), in Spark's local mode.

The Spark tests are marked ``spark`` and skipped when pyspark is not installed (the
README's main test command); run them with ``pytest -m spark tests/test_spark.py`` in a
venv with ``.[spark,test]``. One SparkSession (``local[2]``) serves the whole module.
Every Spark result is compared with streamcal run in this process: :func:`streamcal.replay`
per key, a calibrator fitted per key, and a per-event loop for the stream.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from streamcal import HistogramBinning, OnlineIsotonic, OnlinePlatt, VennAbers, replay
from streamcal.base import BinaryCalibrator
from streamcal.monitor import CalibrationMonitor

# ------------------------------------------------------------------ without pyspark


def test_importing_streamcal_spark_imports_no_pyspark():
    code = (
        "import sys, streamcal, streamcal.spark; "
        "assert 'pyspark' not in sys.modules and 'pandas' not in sys.modules, "
        "sorted(m for m in sys.modules if m.startswith(('pyspark', 'pandas')))"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_missing_extra_names_it(monkeypatch):
    from streamcal import spark as sc

    monkeypatch.setitem(sys.modules, "pyspark", None)
    monkeypatch.setitem(sys.modules, "pyspark.sql", None)
    with pytest.raises(ImportError, match=r'pip install "streamcal\[spark\]"'):
        sc.replay_by_key(None, "k", "score", "label", {"isotonic": OnlineIsotonic()})


def test_merge_tree_equals_one_calibrator_fed_everything():
    rng = np.random.default_rng(3)
    scores = rng.random(300).round(2)
    labels = (rng.random(300) < scores).astype(int)
    from streamcal.spark import merge_tree

    whole = OnlineIsotonic()
    whole.learn_many(scores, labels)
    parts = []
    for chunk in np.array_split(np.arange(300), 7):  # an odd count: a lone leaf
        part = OnlineIsotonic()
        part.learn_many(scores[chunk], labels[chunk])
        parts.append(part)
    merged = merge_tree(parts)
    grid = np.linspace(0, 1, 101)
    assert merged.n_events == 300
    assert np.allclose(merged.predict_many(grid), whole.predict_many(grid), atol=1e-12)


# ------------------------------------------------------------------------ Spark

RUNS_SPARK = pytest.mark.spark


@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark")
    pytest.importorskip("pyarrow")
    pytest.importorskip("pandas")
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"  # loopback only
    session = (
        SparkSession.builder.master("local[2]")
        .appName("streamcal-tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.session.timeZone", "UTC")
        .config(
            "spark.sql.streaming.stateStore.providerClass",
            "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
        )
        .getOrCreate()
    )
    yield session
    session.stop()


def _events(n_per_key=(150, 90, 1, 240), seed=0):
    """A log over four keys, rows interleaved across keys, with ties in time (several
    events per time step) so that the tie rule matters."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    rows = []
    for k, n in enumerate(n_per_key):
        bias = 0.15 * (k - 1.5)
        for i in range(n):
            s = round(float(rng.random()), 3)
            y = int(rng.random() < min(max(s + bias, 0.0), 1.0))
            rows.append({"tenant": f"t{k}", "ts": int(i // 3), "score": s, "label": y})
    order = rng.permutation(len(rows))
    return pd.DataFrame([rows[i] for i in order]).reset_index(drop=True)


CALIBRATORS = {
    "isotonic": OnlineIsotonic(),
    "platt": OnlinePlatt(),
    "histogram": HistogramBinning(n_bins=5),
}
METRICS = ("brier", "log_loss", "ece", "corp")


def _in_process_replay(pdf, key):
    """key -> replay of that key's rows, in time order, ties in row order."""
    out = {}
    for k, rows in pdf.groupby("tenant", sort=True):
        rows = rows.sort_values("ts", kind="stable")
        out[k] = replay(
            rows[["score", "label"]],
            {n: c.clone() for n, c in CALIBRATORS.items()},
            METRICS,
            every=None,
        )
    return out


@RUNS_SPARK
def test_replay_by_key_equals_replay_run_per_key(spark):
    from streamcal.spark import replay_by_key

    pdf = _events()
    df = spark.createDataFrame(pdf)
    out = replay_by_key(
        df, "tenant", "score", "label", CALIBRATORS, METRICS, time="ts", return_state=True
    ).toPandas()
    expected = _in_process_replay(pdf, "tenant")
    assert len(out) == 4 * (1 + len(CALIBRATORS))
    for row in out.to_dict("records"):
        result = expected[row["tenant"]]
        assert row["n_events"] == result.n_events and row["n_skipped"] == 0
        for metric, value in result.summary[row["calibrator"]].items():
            if np.isnan(value):
                assert np.isnan(row[metric])
            else:
                assert abs(row[metric] - value) <= 1e-12, (row["tenant"], metric)
        if row["calibrator"] == "raw":
            assert row["snapshot"] is None or row["snapshot"] != row["snapshot"]  # null
        else:
            assert json.loads(row["snapshot"]) == json.loads(
                json.dumps(result.calibrators[row["calibrator"]].to_dict())
            )


@RUNS_SPARK
def test_replay_by_key_without_time_follows_the_rows_and_checks_its_arguments(spark):
    from streamcal.spark import replay_by_key

    pdf = _events(n_per_key=(60, 40), seed=1)
    df = spark.createDataFrame(pdf)
    out = replay_by_key(df, ["tenant"], "score", "label", {"p": OnlinePlatt()},
                        ["brier"], include_raw=False).toPandas()
    for row in out.to_dict("records"):
        rows = pdf[pdf["tenant"] == row["tenant"]]  # the order of the rows, no sort
        expected = replay(rows, {"p": OnlinePlatt()}, ["brier"], include_raw=False)
        assert abs(row["brier"] - expected.summary["p"]["brier"]) <= 1e-12
    with pytest.raises(ValueError, match="'score' parameter of replay_by_key"):
        replay_by_key(df, "tenant", "nope", "label", {"p": OnlinePlatt()})
    with pytest.raises(ValueError, match="'metrics' argument of replay"):
        replay_by_key(df, "tenant", "score", "label", {"p": OnlinePlatt()}, ["nope"])


@RUNS_SPARK
def test_fit_by_key_snapshots_restore_to_the_in_process_calibrators(spark):
    from streamcal.spark import fit_by_key

    pdf = _events(seed=2)
    df = spark.createDataFrame(pdf)
    grid = np.linspace(0, 1, 51)
    for template in (OnlineIsotonic(), OnlinePlatt(), VennAbers()):
        out = fit_by_key(df, "tenant", "score", "label", template, time="ts").toPandas()
        assert sorted(out["tenant"]) == ["t0", "t1", "t2", "t3"]
        for k, snapshot in zip(out["tenant"], out["snapshot"]):
            rows = pdf[pdf["tenant"] == k].sort_values("ts", kind="stable")
            expected = template.clone()
            for s, y in zip(rows["score"], rows["label"]):
                expected.learn_one(s, y)
            restored = BinaryCalibrator.from_dict(json.loads(snapshot))
            assert type(restored) is type(template)
            assert restored.to_dict() == json.loads(json.dumps(expected.to_dict()))
            assert restored.predict_many(grid).tolist() == expected.predict_many(grid).tolist()


@RUNS_SPARK
def test_fit_by_key_split_large_keys_equals_the_unsplit_fit(spark):
    from streamcal.spark import fit_by_key

    pdf = _events(n_per_key=(400, 90, 1, 333), seed=4)
    df = spark.createDataFrame(pdf).repartition(3)
    grid = np.linspace(0, 1, 201)
    for template in (OnlineIsotonic(), VennAbers(), HistogramBinning(n_bins=7)):
        whole = fit_by_key(df, "tenant", "score", "label", template).toPandas()
        split = fit_by_key(df, "tenant", "score", "label", template,
                           split_large_keys=40).toPandas()
        whole = dict(zip(whole["tenant"], whole["snapshot"]))
        split = dict(zip(split["tenant"], split["snapshot"]))
        assert whole.keys() == split.keys()
        for k in whole:
            a = BinaryCalibrator.from_dict(json.loads(whole[k]))
            b = BinaryCalibrator.from_dict(json.loads(split[k]))
            assert a.n_events == b.n_events == (pdf["tenant"] == k).sum()
            assert np.allclose(a.predict_many(grid), b.predict_many(grid), rtol=0,
                               atol=1e-12)
    with pytest.raises(TypeError, match="split_large_keys.*merges exactly"):
        fit_by_key(df, "tenant", "score", "label", OnlinePlatt(), split_large_keys=40)
    with pytest.raises(ValueError, match="'split_large_keys' argument of fit_by_key"):
        fit_by_key(df, "tenant", "score", "label", OnlineIsotonic(), split_large_keys=0)


# ------------------------------------------------------------------------ streaming


def _stream_batches(n_batches=4, per_batch=40, seed=5):
    """Rows of a keyed stream cut in micro-batches (one file each): score events, and
    label events arriving a few time steps later (some in a later batch), a few labels
    before their score, and a stretch where key a's scores stop being calibrated (so
    that the monitor alarms)."""
    rng = np.random.default_rng(seed)
    rows = []
    t = 0
    for b in range(n_batches):
        for _ in range(per_batch):
            key = "ab"[int(rng.random() < 0.4)]
            s = round(float(rng.random()), 2)
            p_true = 0.95 if (key == "a" and t >= 50) else s
            y = int(rng.random() < p_true)
            event = f"e{t}"
            delay = int(rng.integers(-1, 15))  # -1: the label comes before the score
            rows.append({"k": key, "id": event, "score": s, "label": None, "t": t})
            rows.append({"k": key, "id": event, "score": None, "label": y, "t": t + delay})
            t += 1
    horizon = per_batch * n_batches
    batches = [[] for _ in range(n_batches)]
    for r in rows:
        batches[min(max(r["t"], 0) * n_batches // (horizon + 15), n_batches - 1)].append(r)
    return batches


def _stream_oracle(batches):
    """The stream, per event in this process: rows in batch order, within a batch by
    (time, label first, id), as calibrate_stream documents."""
    cals, monitors, pending, early, out = {}, {}, {}, {}, []
    for batch in batches:
        ordered = sorted(
            batch, key=lambda r: (r["t"], 0 if r["score"] is None else 1, r["id"])
        )
        for r in ordered:
            k = r["k"]
            cal = cals.setdefault(k, OnlineIsotonic())
            mon = monitors.setdefault(k, CalibrationMonitor())

            def learn(s, p, y):
                cal.learn_one(s, y)
                mon.update(p, y)
                if mon.drift_detected:
                    out.append((k, "alarm", r["id"], s, p, y))

            if r["score"] is not None:
                p = cal.predict_one(r["score"])
                out.append((k, "prediction", r["id"], r["score"], p, None))
                if (k, r["id"]) in early:
                    learn(r["score"], p, early.pop((k, r["id"])))
                else:
                    pending[(k, r["id"])] = (r["score"], p)
            else:
                if (k, r["id"]) in pending:
                    s, p = pending.pop((k, r["id"]))
                    learn(s, p, r["label"])
                else:
                    early[(k, r["id"])] = r["label"]
    return sorted(out, key=repr)


def _write_batch(directory, index, rows):
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"part-{index:03d}.json")
    with open(path, "w") as f:  # labels as JSON ints (a long column), nulls as null
        f.writelines(json.dumps(r) + "\n" for r in rows)
    os.utime(path, (1_000_000 + index, 1_000_000 + index))  # the source reads by mtime


def _run_stream(spark, source, sink, checkpoint):
    from pyspark.sql import types as T

    from streamcal.spark import calibrate_stream

    schema = T.StructType([
        T.StructField("k", T.StringType()), T.StructField("id", T.StringType()),
        T.StructField("score", T.DoubleType()), T.StructField("label", T.LongType()),
        T.StructField("t", T.LongType()),
    ])
    stream = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(source)
    out = calibrate_stream(stream, "k", "score", OnlineIsotonic(), label="label",
                           time="t", monitor=CalibrationMonitor())
    query = (
        out.writeStream.format("parquet")
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start(sink)
    )
    query.awaitTermination()
    assert query.exception() is None


def _read_sink(spark, sink):
    rows = spark.read.parquet(sink).toPandas()
    out = []
    for r in rows.to_dict("records"):
        y = None if r["label"] is None or r["label"] != r["label"] else int(r["label"])
        out.append((r["k"], r["kind"], r["id"], r["score"], r["p"], y))
    return sorted(out, key=repr)


@RUNS_SPARK
def test_stream_restarted_from_its_checkpoint_equals_one_that_ran_through(spark, tmp_path):
    batches = _stream_batches()
    # one query over all the batches
    for i, rows in enumerate(batches):
        _write_batch(str(tmp_path / "in-through"), i, rows)
    _run_stream(spark, str(tmp_path / "in-through"), str(tmp_path / "out-through"),
                str(tmp_path / "ck-through"))
    through = _read_sink(spark, str(tmp_path / "out-through"))
    # a query that stops after two batches, then restarts from its checkpoint
    for i, rows in enumerate(batches[:2]):
        _write_batch(str(tmp_path / "in-restart"), i, rows)
    _run_stream(spark, str(tmp_path / "in-restart"), str(tmp_path / "out-restart"),
                str(tmp_path / "ck-restart"))
    first_part = _read_sink(spark, str(tmp_path / "out-restart"))
    for i, rows in enumerate(batches[2:], start=2):
        _write_batch(str(tmp_path / "in-restart"), i, rows)
    _run_stream(spark, str(tmp_path / "in-restart"), str(tmp_path / "out-restart"),
                str(tmp_path / "ck-restart"))
    restarted = _read_sink(spark, str(tmp_path / "out-restart"))

    assert 0 < len(first_part) < len(restarted)
    assert restarted == through
    expected = _stream_oracle(batches)
    assert len(through) == len(expected)
    for got, want in zip(through, expected):
        assert got[:4] == want[:4] and got[5] == want[5]
        assert abs(got[4] - want[4]) <= 1e-12
    kinds = [r[1] for r in through]
    assert kinds.count("prediction") == sum(r["score"] is not None for b in batches for r in b)
    assert "alarm" in kinds


_STREAM_SCHEMA = (("k", "string"), ("id", "string"), ("score", "double"),
                  ("label", "long"), ("t", "long"))


def _json_stream(spark, source, columns):
    """A file stream of ``source`` (one file per micro-batch) with ``columns``."""
    from pyspark.sql import types as T

    kinds = {"string": T.StringType(), "double": T.DoubleType(), "long": T.LongType()}
    schema = T.StructType([T.StructField(n, kinds[t]) for n, t in _STREAM_SCHEMA
                           if n in columns])
    return spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(source)


@RUNS_SPARK
def test_stream_with_labels_df_needs_no_label_column_in_the_score_stream(spark, tmp_path):
    # the score stream has no label column: the labels come from labels_df only
    # (calibrate_stream refused it, asking for 'label' in the score stream)
    from streamcal.spark import calibrate_stream

    batches = _stream_batches(n_batches=3, per_batch=30, seed=7)
    for i, rows in enumerate(batches):
        _write_batch(str(tmp_path / "scores"), i,
                     [{k: r[k] for k in ("k", "id", "score", "t")} for r in rows
                      if r["score"] is not None])
        _write_batch(str(tmp_path / "labels"), i,
                     [{k: r[k] for k in ("k", "id", "label", "t")} for r in rows
                      if r["score"] is None])
    scores = _json_stream(spark, str(tmp_path / "scores"), ("k", "id", "score", "t"))
    labels = _json_stream(spark, str(tmp_path / "labels"), ("k", "id", "label", "t"))
    assert "label" not in scores.columns
    out = calibrate_stream(scores, "k", "score", OnlineIsotonic(), label="label",
                           labels_df=labels, time="t", monitor=CalibrationMonitor())
    query = (out.writeStream.format("parquet")
             .option("checkpointLocation", str(tmp_path / "ck"))
             .trigger(availableNow=True).start(str(tmp_path / "out")))
    query.awaitTermination()
    assert query.exception() is None
    got = _read_sink(spark, str(tmp_path / "out"))
    expected = _stream_oracle(batches)
    assert len(got) == len(expected) > 0
    for g, w in zip(got, expected):
        assert g[:4] == w[:4] and g[5] == w[5] and abs(g[4] - w[4]) <= 1e-12
    # the label column must then be one of labels_df
    with pytest.raises(ValueError, match="'label' parameter of calibrate_stream must be "
                                         "a column of labels_df"):
        calibrate_stream(scores, "k", "score", OnlineIsotonic(), label="y",
                         labels_df=labels)
    with pytest.raises(ValueError, match="'label' parameter of calibrate_stream"):
        calibrate_stream(scores, "k", "score", OnlineIsotonic(), label="label")


def _malformed_events(spark):
    """Key t1's events, in time order, have a NaN score second (the DataFrame's fifth
    row); key t0's are all valid."""
    import pandas as pd

    rows = [("t0", 0, 0.2, 1), ("t1", 9, 0.7, 1), ("t0", 1, 0.4, 0), ("t0", 2, 0.6, 1),
            ("t1", 5, float("nan"), 0), ("t1", 1, 0.3, 0)]
    return spark.createDataFrame(pd.DataFrame(rows, columns=["tenant", "ts", "score", "label"]))


@RUNS_SPARK
def test_a_malformed_row_names_its_key_and_its_place_among_the_keys_events(spark):
    # replay_by_key said "malformed row 1 of the DataFrame" (1: the row's place in its
    # key's sorted group) without the key; fit_by_key gave the calibrator's "Got nan at
    # index 1" without the key
    from streamcal.spark import fit_by_key, replay_by_key

    df = _malformed_events(spark)
    with pytest.raises(Exception) as info:
        replay_by_key(df, "tenant", "score", "label", {"p": OnlinePlatt()}, ["brier"],
                      time="ts", on_error="raise").collect()
    assert (
        "malformed event 1 of key tenant='t1' (the key's events numbered from 0 in the "
        "order replayed: by 'ts', ties in the order of the DataFrame's rows; this one "
        "has ts=5): score is NaN (column 'score')"
    ) in str(info.value)
    with pytest.raises(Exception) as info:
        replay_by_key(df, "tenant", "score", "label", {"p": OnlinePlatt()}, ["brier"],
                      on_error="raise").collect()
    assert (
        "malformed event 1 of key tenant='t1' (the key's events numbered from 0 in the "
        "order replayed: in the order of the DataFrame's rows): score is NaN"
    ) in str(info.value)
    out = replay_by_key(df, "tenant", "score", "label", {"p": OnlinePlatt()}, ["brier"],
                        time="ts").toPandas()  # skipped and counted, as before
    assert dict(zip(out["tenant"], out["n_skipped"])) == {"t0": 0, "t1": 1}
    with pytest.raises(Exception) as info:
        fit_by_key(df, "tenant", "score", "label", OnlineIsotonic(), time="ts").collect()
    assert (
        "fit_by_key: key tenant='t1' (the key's events numbered from 0 in the order "
        "learnt: by 'ts', ties in the order of the DataFrame's rows): The 'scores' "
        "argument of OnlineIsotonic.learn_many must be a real number in [0, 1]. Got nan "
        "at index 1 instead."
    ) in str(info.value)
    with pytest.raises(Exception, match=r"fit_by_key: key tenant='t1' \(the events of "
                                        r"its chunk \d+ \(split_large_keys\) numbered"):
        fit_by_key(df, "tenant", "score", "label", OnlineIsotonic(),
                   split_large_keys=1).collect()


def _failing_stream(spark, tmp_path, batches, label_type="long", score_type="double"):
    """Run calibrate_stream over ``batches``; the text of the error stopping it."""
    from pyspark.sql import types as T

    from streamcal.spark import calibrate_stream

    for i, rows in enumerate(batches):
        _write_batch(str(tmp_path / "in"), i, rows)
    types = {"long": T.LongType(), "double": T.DoubleType(), "string": T.StringType()}
    schema = T.StructType([
        T.StructField("k", T.StringType()), T.StructField("id", T.StringType()),
        T.StructField("score", types[score_type]),
        T.StructField("label", types[label_type]),
    ])
    stream = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(
        str(tmp_path / "in"))
    out = calibrate_stream(stream, "k", "score", OnlineIsotonic(), label="label")
    query = (out.writeStream.format("parquet")
             .option("checkpointLocation", str(tmp_path / "ck"))
             .trigger(availableNow=True).start(str(tmp_path / "out")))
    with pytest.raises(Exception) as info:
        query.awaitTermination()
    return str(info.value)


@RUNS_SPARK
def test_a_nan_score_or_a_fractional_label_stops_the_stream_naming_the_event(spark, tmp_path):
    # a NaN score (not null) was taken for a missing one: the row became a lone label
    # waiting forever, with no prediction, no error; a label 0.5 was cast to 0
    first = [{"k": "a", "id": "e1", "score": 0.3, "label": None},
             {"k": "b", "id": "e2", "score": 0.6, "label": 1}]
    nan_score = [{"k": "b", "id": "e3", "score": 0.5, "label": None},
                 {"k": "a", "id": "e7", "score": float("nan"), "label": None}]
    text = _failing_stream(spark, tmp_path / "nan", [first, nan_score])
    assert ("calibrate_stream: the 'score' column of the event 'e7' of key k='a' must "
            "be a real number in [0, 1]. Got nan instead.") in text
    half_label = [{"k": "a", "id": "e1", "score": None, "label": 0.5}]
    text = _failing_stream(spark, tmp_path / "half", [first, half_label], "double")
    assert ("calibrate_stream: the 'label' column of the event 'e1' of key k='a' must "
            "be a binary label in {0, 1}. Got 0.5 instead.") in text


@RUNS_SPARK
def test_text_that_is_no_number_stops_the_stream_naming_the_event(spark, tmp_path):
    # text columns (a schema of strings): a value that is not null but no number was
    # cast to null and taken for a missing one: a score "n/a" became a lone label
    # record, a label "yes" left its event waiting for ever, with no error
    first = [{"k": "a", "id": "e1", "score": "0.3", "label": None},
             {"k": "b", "id": "e2", "score": "0.6", "label": "1"}]
    bad_score = [{"k": "a", "id": "e4", "score": "n/a", "label": "0"}]
    text = _failing_stream(spark, tmp_path / "score", [first, bad_score], "string", "string")
    assert ("calibrate_stream: the 'score' column of the event 'e4' of key k='a' must "
            "be a real number in [0, 1]. Got 'n/a' instead.") in text
    bad_label = [{"k": "a", "id": "e1", "score": None, "label": "yes"}]
    text = _failing_stream(spark, tmp_path / "label", [first, bad_label], "string", "string")
    assert ("calibrate_stream: the 'label' column of the event 'e1' of key k='a' must "
            "be a binary label in {0, 1}. Got 'yes' instead.") in text
