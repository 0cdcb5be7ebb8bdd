"""Log readers (streamcal.replay._readers) and field parsing (streamcal.replay._rows), and
the bundled rain-forecast log."""

from __future__ import annotations

import csv
import datetime as dt
import gzip
import importlib.util
import json
import math
import os

import numpy as np
import pytest

import streamcal
from streamcal.replay import _readers as R
from streamcal.replay import _rows as L
from streamcal.datasets import RAIN_FORECAST_LOG_COLUMNS, rain_forecast_log_path

HERE = os.path.dirname(os.path.abspath(__file__))


def rows_of(log, *columns):
    keys = [log.key(c, c) for c in columns]
    out = []
    for n, row in enumerate(log.rows, 1):
        out.append((log.line(n), *[row[k] for k in keys]))
    log.close()
    return out


# ---------------------------------------------------------------------- fields


@pytest.mark.parametrize(
    "value, expected",
    [
        ("0.25", 0.25),
        (" 1 ", 1.0),
        ("0", 0.0),
        ("1e-3", 1e-3),
        (0.5, 0.5),
        (1, 1.0),
        (np.float32(0.5), 0.5),
        (np.int64(0), 0.0),
    ],
)
def test_parse_score_accepts(value, expected):
    assert L.parse_score(value, "p") == expected


@pytest.mark.parametrize(
    "value, message",
    [
        ("abc", "non-numeric score 'abc' (column 'p')"),
        ("nan", "score is NaN (column 'p')"),
        (float("nan"), "score is NaN (column 'p')"),
        ("1.5", "score '1.5' out of range [0, 1] (column 'p')"),
        (-0.1, "score -0.1 out of range [0, 1] (column 'p')"),
        ("inf", "score 'inf' out of range [0, 1] (column 'p')"),
        (True, "score True is a bool, not a number (column 'p')"),
        (np.True_, "score np.True_ is a bool, not a number (column 'p')"),
        ([0.5], "non-numeric score [0.5] (column 'p')"),
    ],
)
def test_parse_score_rejects_with_reason(value, message):
    with pytest.raises(L.RowError) as info:
        L.parse_score(value, "p")
    assert str(info.value) == message


@pytest.mark.parametrize(
    "value, expected",
    [
        (0, 0),
        (1, 1),
        (True, 1),
        (False, 0),
        (0.0, 0),
        (1.0, 1),
        ("1", 1),
        ("0.0", 0),
        ("true", 1),
        ("False", 0),
        (np.int64(1), 1),
        (np.bool_(False), 0),
        (np.float64(1.0), 1),
    ],
)
def test_parse_binary_label_accepts(value, expected):
    y = L.parse_binary_label(value, "y")
    assert y == expected and type(y) is int


@pytest.mark.parametrize("value", [2, -1, 0.5, "2", "yes", "", float("nan"), None, [1]])
def test_parse_binary_label_rejects(value):
    with pytest.raises(
        L.RowError, match=r"unknown label .* \(column 'y'\): expected 0 or 1"
    ):
        L.parse_binary_label(value, "y")


def test_field_reports_missing_values():
    assert L.field(["a", "b"], 1, "b", "label") == "b"
    with pytest.raises(
        L.RowError, match=r"missing label \(column 'y'\): the row has 1 fields"
    ):
        L.field(["a"], 1, "y", "label")
    with pytest.raises(L.RowError, match=r"missing score \(column 's'\)"):
        L.field({"s": ""}, "s", "s", "score")
    with pytest.raises(L.RowError, match=r"missing score \(column 's'\)"):
        L.field({"s": None}, "s", "s", "score")
    with pytest.raises(L.RowError, match=r"missing score \(column 's'\)"):
        L.field({"t": 1}, "s", "s", "score")
    with pytest.raises(L.RowError, match="the row is not a record"):
        L.field([0.5, 1], "s", "s", "score")
    with pytest.raises(L.RowError, match="invalid JSON"):
        L.field(L.BadRow("invalid JSON (x)"), "s", "s", "score")


def test_parse_time_forms():
    t0 = dt.datetime(2013, 1, 1, 6, tzinfo=dt.timezone.utc).timestamp()
    same = [
        "2013-01-01T06:00:00Z",
        "2013-01-01T06:00:00+00:00",
        "2013-01-01 06:00",
        "2013-01-01T07:00:00+01:00",
        dt.datetime(2013, 1, 1, 6),
        dt.datetime(2013, 1, 1, 6, tzinfo=dt.timezone.utc),
        np.datetime64("2013-01-01T06"),
    ]
    for value in same:
        assert L.parse_time(value, "t") == t0, value
    assert L.parse_time("2013-01-01", "t") == t0 - 6 * 3600
    assert L.parse_time(dt.date(2013, 1, 1), "t") == t0 - 6 * 3600
    assert L.parse_time("12.5", "t") == 12.5
    assert L.parse_time(3, "t") == 3.0
    assert L.parse_time(np.int64(3), "t") == 3.0
    for bad, message in [
        (
            "yesterday",
            "time 'yesterday' is neither a number nor an ISO 8601 date (column 't')",
        ),
        ("nan", "time is NaN (column 't')"),
        (float("nan"), "time is NaN (column 't')"),
        (np.datetime64("NaT"), "missing time (column 't')"),
        ([1], "time [1] is not a time (column 't')"),
        (True, "time True is not a time (column 't')"),
    ]:
        with pytest.raises(L.RowError) as info:
            L.parse_time(bad, "t")
        assert str(info.value) == message


def test_parse_time_pandas():
    pd = pytest.importorskip("pandas")
    assert L.parse_time(pd.Timestamp("2013-01-01T06:00Z"), "t") == L.parse_time(
        "2013-01-01T06:00:00Z", "t"
    )
    with pytest.raises(L.RowError, match="missing time"):
        L.parse_time(pd.NaT, "t")


def test_json_safe_time():
    assert L.json_safe_time("2013-01-01") == "2013-01-01"
    assert L.json_safe_time(3) == 3
    assert L.json_safe_time(float("nan")) is None
    assert L.json_safe_time(dt.datetime(2013, 1, 1, 6)) == "2013-01-01T06:00:00"
    assert L.json_safe_time(np.datetime64("2013-01-01T06")) == "2013-01-01T06"
    assert type(L.json_safe_time(np.int64(3))) is int
    assert L.json_safe_time(None) is None


# ---------------------------------------------------------------------- readers


def write_csv(path, header, rows, delimiter=","):
    opener = gzip.open if str(path).lower().endswith(".gz") else open
    with opener(path, "wt", newline="", encoding="utf-8") as f:
        w = csv.writer(f, delimiter=delimiter)
        w.writerow(header)
        w.writerows(rows)


@pytest.mark.parametrize("name", ["log.csv", "log.csv.gz", "log.tsv", "LOG.CSV.GZ"])
def test_csv_rows_and_line_numbers(tmp_path, name):
    path = tmp_path / name
    write_csv(
        path,
        ["score", "label"],
        [["0.1", "0"], ["0.2", "1"]],
        "\t" if ".tsv" in name else ",",
    )
    log = R.open_log(str(path))
    assert log.kind == "csv" and log.columns == ["score", "label"]
    assert rows_of(log, "score", "label") == [(2, "0.1", "0"), (3, "0.2", "1")]


def test_csv_line_numbers_count_blank_and_multiline_rows(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text(
        '\ufeffnote,score,label\n"a",0.1,0\n\n"multi\nline",0.2,1\n"b",0.3,0\n'
    )
    log = R.open_log(path)  # PathLike works; the BOM is not part of the first column
    assert log.columns == ["note", "score", "label"]
    assert rows_of(log, "score") == [(2, "0.1"), (5, "0.2"), (6, "0.3")]


def test_csv_short_rows_are_rows(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("score,label\n0.1\n0.2,1\n")
    log = R.open_log(str(path))
    rows = list(log.rows)
    assert rows == [["0.1"], ["0.2", "1"]]


def test_empty_csv(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("")
    # not even a header: a log of no events, as a header-only one (there are no
    # columns to check a name against; it was "score is not in log.csv")
    log = R.open_log(str(path))
    assert log.columns is None and list(log.rows) == []
    assert log.key("score", "score") == "score"
    assert R.read_header(str(path)) is None
    result = streamcal.replay(str(path), {"p": streamcal.OnlinePlatt()})
    assert (result.n_events, result.n_skipped) == (0, 0)


def test_missing_column_is_named(tmp_path):
    path = tmp_path / "log.csv"
    write_csv(path, ["p", "y"], [["0.1", "0"]])
    log = R.open_log(str(path))
    with pytest.raises(
        ValueError,
        match=r"The score column 'score' is not in log.csv. Its columns: 'p', 'y'.",
    ):
        log.key("score", "score")
    log.close()


@pytest.mark.parametrize("name", ["log.jsonl", "log.ndjson.gz"])
def test_jsonl_rows_line_numbers_and_bad_json(tmp_path, name):
    path = tmp_path / name
    text = '{"score": 0.1, "label": 0}\n\n{"score": 0.2, "label": 1}\n{oops\n[1, 2]\n'
    if name.endswith(".gz"):
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        path.write_text(text)
    log = R.open_log(str(path))
    assert log.kind == "jsonl" and log.columns == ["score", "label"]
    key = log.key("score", "score")
    seen = []
    for n, row in enumerate(log.rows, 1):
        try:
            seen.append((log.line(n), row[key]))
        except (KeyError, TypeError) as exc:
            seen.append((log.line(n), type(exc).__name__))
    assert seen == [(1, 0.1), (3, 0.2), (4, "KeyError"), (5, "TypeError")]
    log.close()


def test_records_and_skip():
    records = ({"score": i / 10, "label": i % 2} for i in range(5))
    log = R.open_log(records)
    assert log.kind == "records" and log.columns == ["score", "label"]
    assert log.skip(2) == 2
    assert [(log.line(n), r["score"]) for n, r in enumerate(log.rows, 3)] == [
        (2, 0.2),
        (3, 0.3),
        (4, 0.4),
    ]
    assert R.open_log([]).skip(3) == 0
    with pytest.raises(ValueError, match="The label column 'y' is not in the records"):
        R.open_log([{"score": 0.1}]).key("y", "label")


def test_unsupported_inputs(tmp_path):
    with pytest.raises(ValueError, match="unsupported file type"):
        R.open_log(str(tmp_path / "log.xlsx"))
    with pytest.raises(ValueError, match="unsupported file type"):
        R.open_log(str(tmp_path / "log.parquet.gz"))
    with pytest.raises(
        TypeError, match="must be a path, a pandas DataFrame or an iterable"
    ):
        R.open_log(3.5)
    with pytest.raises(TypeError, match="must be a path"):
        R.open_log(b"score,label")


def test_dataframe():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"score": [0.1, 0.2], "label": [0, 1], 7: ["a", "b"]})
    log = R.open_log(df)
    assert log.kind == "dataframe" and log.key(7, "id") == 2
    assert rows_of(log, "score", "label") == [(0, 0.1, 0), (1, 0.2, 1)]


def test_parquet(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "log.parquet"
    pq.write_table(pa.table({"score": [0.1, 0.2, 0.3], "label": [0, 1, 0]}), str(path))
    log = R.open_log(str(path))
    assert log.kind == "parquet" and log.columns == ["score", "label"]
    assert rows_of(log, "score", "label") == [(0, 0.1, 0), (1, 0.2, 1), (2, 0.3, 0)]


# ---------------------------------------------------------------------- the bundled log


def test_bundled_rain_log():
    path = rain_forecast_log_path()
    assert os.path.getsize(path) < 300_000
    with gzip.open(path, "rt", newline="") as f:
        rows = list(csv.reader(f))
    assert tuple(rows[0]) == RAIN_FORECAST_LOG_COLUMNS
    rows = rows[1:]
    assert len(rows) == 8685
    hour = dt.timedelta(hours=1)
    previous = None
    for time, score, label, label_time in rows:
        t = dt.datetime.fromisoformat(time.replace("Z", "+00:00"))
        assert dt.datetime.fromisoformat(label_time.replace("Z", "+00:00")) == t + hour
        assert previous is None or t > previous
        previous = t
        s = float(score)
        assert 0.0 <= s <= 1.0 and len(score.split(".")[1]) == 4
        assert label in ("0", "1")
    rate = sum(r[2] == "1" for r in rows) / len(rows)
    assert math.isclose(rate, 0.0686, abs_tol=5e-4)


def test_bundled_rain_log_is_reproducible():
    """simulations/make_rain_log.py rebuilds the shipped file (byte for byte with the
    river version that built it; scores to 1e-3 whatever river's rounding)."""
    script = os.path.join(HERE, "..", "simulations", "make_rain_log.py")
    if not os.path.exists(
        script
    ):  # pragma: no cover - an installed package without the repo
        pytest.skip("simulations/ is not here")
    spec = importlib.util.spec_from_file_location("make_rain_log", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    data, figures = module.build()
    assert figures["rows"] == 8685
    json.dumps(figures)
    with open(rain_forecast_log_path(), "rb") as f:
        shipped = f.read()
    if data == shipped:
        return
    new = list(csv.reader(gzip.decompress(data).decode().splitlines()))
    old = list(csv.reader(gzip.decompress(shipped).decode().splitlines()))
    assert len(new) == len(old) and new[0] == old[0]
    for a, b in zip(new[1:], old[1:]):
        assert (a[0], a[2], a[3]) == (b[0], b[2], b[3])
        assert abs(float(a[1]) - float(b[1])) <= 1e-3


@pytest.mark.parametrize("end_last_line", [False, True])
@pytest.mark.parametrize("tail", [b"", b"last"])
def test_line_blocks_cut_whole_lines_and_say_where_they_end(monkeypatch, tmp_path, end_last_line, tail):
    # the block splitter of both fast readers (FastCsv, FastJsonl): blocks end at a
    # newline, a line longer than a block comes whole, a BOM is dropped on request,
    # and the last line without newline is handed over (done False) or completed
    import codecs
    import types

    from streamcal.replay import _fastcsv

    monkeypatch.setattr(_fastcsv, "BLOCK_BYTES", 7)
    lines = [b"a,1", b"bb,0", b"x" * 20, b"", b"c,1", b"d" * 6]
    data = b"\n".join(lines) + b"\n" + tail
    path = tmp_path / "log.csv"
    path.write_bytes(codecs.BOM_UTF8 + data)
    with open(path, "rb") as f:
        reader = types.SimpleNamespace(_file=f, done=False)
        blocks = list(_fastcsv.line_blocks(reader, end_last_line, strip_bom=True))
    assert all(b.endswith(b"\n") for b in blocks)
    if tail and not end_last_line:
        assert b"".join(blocks) == data[: -len(tail)] and reader.done is False
    else:
        assert b"".join(blocks) == data + (b"\n" if tail else b"")
        assert reader.done is True  # the whole file given
    with open(path, "rb") as f:  # without strip_bom the BOM stays
        reader = types.SimpleNamespace(_file=f, done=False)
        assert next(_fastcsv.line_blocks(reader, end_last_line)).startswith(codecs.BOM_UTF8)
