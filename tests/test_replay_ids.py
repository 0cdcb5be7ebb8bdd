"""Ids joining events to label records are compared as text whatever the format: a
float id written as text (``"17.0"`` in a CSV file) did not match the same id as a JSON
number (``17.0``, read as ``"17"``), so the labels found no event."""

from __future__ import annotations

import json
import random

import pytest

from streamcal import OnlinePlatt, replay
from streamcal.cli import main
from streamcal.replay._rows import RowError, parse_id

from tests.test_replay_engine import _replay_until


def test_the_commands_reproduction(tmp_path, capsys):
    ev, lab = tmp_path / "ev.jsonl", tmp_path / "lab.csv"
    ev.write_text('{"id":1.0,"score":0.2,"t":1}\n{"id":2.0,"score":0.7,"t":2}\n')
    lab.write_text("id,label,t\n1.0,0,5\n2.0,1,5\n")
    argv = ["replay", str(ev), "--time", "t", "--id", "id", "--labels", str(lab),
            "--calibrator", "platt"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "2 events, 2 learnt, 0 malformed rows skipped" in out


@pytest.mark.parametrize(
    "value, text",
    [(17, "17"), (17.0, "17"), ("17", "17"), (" 17.0 ", "17"), ("17.00", "17"),
     ("-3.0", "-3"), (-3.0, "-3"), ("-0.0", "0"), (-0.0, "0"), ("0.0", "0"),
     (1.5, "1.5"), ("1.5", "1.5"),
     # distinct ids stay distinct: leading zeros, signs, exponents, other decimals
     ("017", "017"), ("017.0", "017.0"), ("+17.0", "+17.0"), ("17.", "17."),
     ("1e1", "1e1"), ("1.50", "1.50"), ("17.01", "17.01"), ("abc.0", "abc.0")],
)
def test_parse_id(value, text):
    assert parse_id(value, "id") == text


def test_a_long_integral_text_is_kept_digit_for_digit():
    digits = "9" * 5000  # longer than int() takes from text
    assert parse_id(digits + ".000", "id") == digits


@pytest.mark.parametrize("value", [True, float("nan"), float("inf"), [1], " "])
def test_parse_id_refuses(value):
    with pytest.raises(RowError):
        parse_id(value, "id")


def _events(n, seed):
    rng = random.Random(seed)
    return [(i, rng.random(), i) for i in range(n)]


def _labels(events, seed):
    rng = random.Random(seed + 1)
    return [(i, int(rng.random() < s), t + 2) for i, s, t in events]


EVENT_FORMS = {
    "jsonl_int": lambda i: i,
    "jsonl_float": lambda i: float(i),
    "jsonl_text": lambda i: f"{i}.0",
    "csv_int": lambda i: str(i),
    "csv_float": lambda i: f"{i}.0",
    "csv_fixed": lambda i: f"{i}.00",
}
LABEL_FORMS = {
    "csv_int": lambda i: str(i),
    "csv_float": lambda i: f"{i}.0",
    "jsonl_float": lambda i: float(i),
    "jsonl_text": lambda i: f" {i}.0 ",
}


def _write(path, rows, form):
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps({"id": form(i), "score": s, "label": y, "t": t}) + "\n"
                                for i, s, y, t in rows))
    else:
        path.write_text("id,score,label,t\n" + "".join(f"{form(i)},{s!r},{y},{t}\n"
                                                        for i, s, y, t in rows))


@pytest.mark.parametrize("event_form", sorted(EVENT_FORMS))
@pytest.mark.parametrize("label_form", sorted(LABEL_FORMS))
def test_the_same_ids_match_whatever_their_format(event_form, label_form, tmp_path):
    events = _events(60, 3)
    labels = _labels(events, 3)
    ev = tmp_path / ("ev." + event_form.split("_")[0])
    lab = tmp_path / ("lab." + label_form.split("_")[0])
    _write(ev, [(i, s, 0, t) for i, s, t in events], EVENT_FORMS[event_form])
    _write(lab, [(i, 0.5, y, t) for i, y, t in labels], LABEL_FORMS[label_form])
    got = replay(str(ev), {"platt": OnlinePlatt()}, time="t", id="id", labels=str(lab))
    assert (got.n_learnt, got.n_skipped, got.n_unlabelled) == (60, 0, 0)
    expected = replay([{"id": i, "score": s, "t": t} for i, s, t in events],
                      {"platt": OnlinePlatt()}, time="t", id="id",
                      labels=[{"id": i, "label": y, "t": t} for i, y, t in labels])
    assert got.summary == expected.summary


def test_parquet_float_and_int_ids_match_csv_text(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    events = _events(40, 5)
    labels = _labels(events, 5)
    lab = tmp_path / "lab.csv"
    _write(lab, [(i, 0.5, y, t) for i, y, t in labels], lambda i: f"{i}.0")
    for ids in ([float(i) for i, _, _ in events], [i for i, _, _ in events]):
        ev = tmp_path / "ev.parquet"
        pq.write_table(pa.table({"id": ids, "score": [s for _, s, _ in events],
                                 "t": [t for _, _, t in events]}), ev)
        got = replay(str(ev), {"platt": OnlinePlatt()}, time="t", id="id", labels=str(lab))
        assert (got.n_learnt, got.n_skipped) == (40, 0)


def test_distinct_texts_are_not_merged(tmp_path):
    ev = tmp_path / "ev.csv"
    ev.write_text("id,score,t\n17,0.2,1\n10,0.7,2\n")
    lab = tmp_path / "lab.csv"
    lab.write_text("id,label,t\n017,0,5\n1e1,1,5\n")
    got = replay(str(ev), {"platt": OnlinePlatt()}, time="t", id="id", labels=str(lab))
    assert (got.n_learnt, got.n_skipped, got.n_unlabelled) == (0, 2, 2)
    assert "'017'" in got.errors[0][1] and "'1e1'" in got.errors[1][1]


def test_a_resume_matches_float_text_ids_with_integer_labels(tmp_path):
    events = _events(400, 7)
    labels = _labels(events, 7)
    ev, lab = tmp_path / "ev.csv", tmp_path / "lab.jsonl"
    _write(ev, [(i, s, 0, t) for i, s, t in events], lambda i: f"{i}.0")
    _write(lab, [(i, 0.5, y, t) for i, y, t in labels], lambda i: i)
    kw = {"time": "t", "id": "id", "labels": str(lab), "every": 100}
    fresh = replay(str(ev), {"platt": OnlinePlatt()}, **kw)
    assert fresh.n_learnt == 400
    ckpt = tmp_path / "state.json"
    kw.update(checkpoint=str(ckpt), checkpoint_every=100)
    _replay_until(200, str(ev), {"platt": OnlinePlatt()}, **kw)
    assert json.loads(ckpt.read_text())["pending"]  # ids waiting for their label
    resumed = replay(str(ev), {"platt": OnlinePlatt()}, resume=True, **kw)
    assert resumed.to_dict() == fresh.to_dict()
