"""JSON Lines logs and records have no header: their columns are the keys of their first
rows, not of the first record alone (a first record lacking a field is a malformed row,
as the same record further on is)."""

from __future__ import annotations

import json

import pytest

import streamcal
from streamcal.cli import main
from streamcal.replay import _readers as R


def _write(path, records, blank_after=()):
    with open(path, "w") as f:
        for i, r in enumerate(records):
            f.write((r if isinstance(r, str) else json.dumps(r)) + "\n")
            if i in blank_after:
                f.write("\n")


def test_first_record_lacking_the_label_is_skipped_at_line_1(tmp_path, capsys):
    path = tmp_path / "f.jsonl"
    _write(path, [{"score": 0.5}] + [{"score": 0.4, "label": 1}] * 300)
    code = main(["replay", str(path), "--calibrator", "platt", "--no-progress"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "300 events, 300 learnt, 1 malformed rows skipped" in captured.out
    assert "skipped line 1: missing label (column 'label')" in captured.err


def test_line_numbers_of_the_rows_read_ahead(tmp_path):
    path = tmp_path / "f.jsonl"
    n = R.KEY_SCAN + 5
    records = [{"score": 0.5}, "{bad"] + [{"score": 0.1, "label": 0}] * n
    _write(path, records, blank_after={0, R.KEY_SCAN + 2})
    log = R.open_log(str(path))
    assert log.columns == ["score", "label"] and log.scanned == R.KEY_SCAN
    key = log.key("label", "label")
    lines = []
    for i, row in enumerate(log.rows, 1):
        lines.append((log.line(i), row.get(key) if isinstance(row, dict) else "bad"))
    log.close()
    # a blank line after the first record, another after record KEY_SCAN + 2
    expected = [(1, None), (3, "bad")]
    expected += [(k + 2, 0) for k in range(2, R.KEY_SCAN + 3)]
    expected += [(k + 3, 0) for k in range(R.KEY_SCAN + 3, n + 2)]
    assert lines == expected


def test_a_column_in_none_of_the_first_rows_is_a_usage_error(tmp_path, capsys):
    path = tmp_path / "f.jsonl"
    _write(path, [{"score": 0.4, "label": 1}] * 20)
    assert main(["replay", str(path), "--label", "y", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert (
        "The label column 'y' is not in f.jsonl (none of its 20 rows has it; they have "
        "the keys 'score', 'label')." in err
    )
    # a column first seen after the rows looked at is refused too: it is in none
    late = tmp_path / "late.jsonl"
    _write(late, [{"score": 0.4}] * R.KEY_SCAN + [{"score": 0.4, "label": 1}] * 5)
    assert main(["replay", str(late), "--no-progress"]) == 2
    assert f"none of its first {R.KEY_SCAN:,} rows has it" in capsys.readouterr().err


def test_records_first_lacking_a_field(tmp_path):
    records = [{"score": 0.5}] + [{"score": 0.25, "label": i % 2} for i in range(50)]
    result = streamcal.replay(iter(records), {"platt": streamcal.OnlinePlatt()})
    assert result.n_events == 50 and result.n_skipped == 1
    assert result.errors[0] == (0, "missing label (column 'label')")


def test_big_log_read_by_blocks(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    # over a MiB: read by pyarrow's JSON reader, the first block falling back to rows
    path = tmp_path / "big.jsonl"
    _write(path, [{"score": 0.5}] + [{"score": 0.4, "label": 1}] * 60000)
    assert main(["replay", str(path), "--calibrator", "platt", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "60,000 events, 60,000 learnt, 1 malformed rows skipped" in captured.out
    assert "skipped line 1: missing label (column 'label')" in captured.err
