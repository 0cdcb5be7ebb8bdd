"""The share of malformed rows that --max-malformed bounds counts every row read: with
label records, a malformed record was counted in the malformed rows but the records
were not counted in the rows read (1 malformed record of 200, with 200 events, was
"1 of 201 rows malformed (0.5%)", exit 3 at --max-malformed 0.004)."""

from __future__ import annotations

import random

from streamcal import OnlinePlatt, replay
from streamcal.cli import main

from tests.test_replay_engine import _replay_until


def _logs(tmp_path, n=200, bad_labels=(50,), bad_events=()):
    rng = random.Random(2)
    ev, lab = tmp_path / "ev.csv", tmp_path / "lab.csv"
    ev.write_text("id,score,t\n" + "".join(
        f"{i},{'x' if i in bad_events else round(rng.random(), 3)},{i}\n" for i in range(n)))
    lab.write_text("id,label,t\n\n" + "".join(  # a blank line is no row
        f"{i},{'maybe' if i in bad_labels else rng.randint(0, 1)},{i + 1}\n" for i in range(n)))
    return ev, lab


def test_the_denominator_counts_the_label_records(tmp_path, capsys):
    ev, lab = _logs(tmp_path)
    argv = ["replay", str(ev), "--time", "t", "--id", "id", "--labels", str(lab),
            "--calibrator", "platt"]
    assert main(argv + ["--max-malformed", "0.004"]) == 0  # 1 of 400: 0.25%
    capsys.readouterr()
    assert main(argv + ["--max-malformed", "0.002"]) == 3
    assert "1 of 400 rows malformed (0.2%)" in capsys.readouterr().err


def test_n_rows_counts_events_and_label_records_and_survives_a_resume(tmp_path):
    ev, lab = _logs(tmp_path, n=400, bad_labels=(50, 300), bad_events=(10, 250))
    kw = {"time": "t", "id": "id", "labels": str(lab), "every": 100}
    fresh = replay(str(ev), {"platt": OnlinePlatt()}, **kw)
    # 2 malformed events, 2 malformed records, and the records of those 2 events
    assert (fresh.n_rows, fresh.n_skipped, fresh.n_events) == (800, 6, 398)
    ckpt = tmp_path / "state.json"
    kw.update(checkpoint=str(ckpt), checkpoint_every=100)
    _replay_until(200, str(ev), {"platt": OnlinePlatt()}, **kw)
    resumed = replay(str(ev), {"platt": OnlinePlatt()}, resume=True, **kw)
    assert resumed.n_rows == 800 and resumed.to_dict() == fresh.to_dict()


def test_n_rows_without_label_records_is_the_event_rows():
    rows = [{"score": 0.5 if i % 10 else "x", "label": i % 2} for i in range(100)]
    result = replay(rows, {"platt": OnlinePlatt()})
    assert (result.n_rows, result.n_skipped) == (100, 10)
