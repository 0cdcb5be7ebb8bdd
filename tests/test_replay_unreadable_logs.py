"""A log that cannot be read at all (a CSV header field over the CSV reader's limit, a
header that is not valid UTF-8, a Parquet file cut short, a corrupt Parquet page) is
exit status 1 with one line naming the file, as the help says ("the log could not be
read"): it was a usage error (status 2, the usage banner), and a corrupt page's
message did not name the file."""

from __future__ import annotations

import pytest

from streamcal import OnlinePlatt, replay
from streamcal.cli import main
from streamcal.replay import _engine
from streamcal.replay._readers import UnreadableLog


def _write_parquet(path, n=1000, row_group_size=None):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    scores = [(i % 97) / 97 for i in range(n)]
    labels = [i % 2 for i in range(n)]
    pq.write_table(pa.table({"score": scores, "label": labels}), path,
                   row_group_size=row_group_size)
    return path.read_bytes()


def _corrupt_page(tmp_path):
    """A Parquet file whose second row group's score page cannot be decoded."""
    import pyarrow.parquet as pq

    path = tmp_path / "corrupt.parquet"
    data = bytearray(_write_parquet(path, n=2000, row_group_size=1000))
    column = pq.ParquetFile(path).metadata.row_group(1).column(0)
    start = column.dictionary_page_offset or column.data_page_offset
    for pos in range(start, start + 4):  # the page header's first bytes
        data[pos] = 0xFF
    path.write_bytes(bytes(data))
    return path


def _logs(tmp_path):
    long_header = tmp_path / "long.csv"
    long_header.write_text("score," + "x" * 140_000 + ",label\n0.5,1,1\n")
    bad_utf8 = tmp_path / "badutf.csv"
    bad_utf8.write_bytes(b"score,lab\xffel\n0.5,1\n")
    return [long_header, bad_utf8]


def _exit_1_naming(argv, name, capsys, *pieces):
    assert main(argv) == 1, argv
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and name in lines[0], captured.err
    assert "usage:" not in captured.err and "Traceback" not in captured.err
    for piece in pieces:
        assert piece in lines[0]
    assert "calibrator" not in captured.out


def test_an_unreadable_csv_header_is_exit_1(tmp_path, capsys):
    for path in _logs(tmp_path):
        _exit_1_naming(["replay", str(path), "--calibrator", "platt"], path.name, capsys)


def test_an_unreadable_labels_header_is_exit_1(tmp_path, capsys):
    log = tmp_path / "ev.csv"
    log.write_text("id,score,t\n1,0.5,1\n")
    labels = tmp_path / "labels.csv"
    labels.write_bytes(b"id,lab\xffel,t\n1,1,3\n")
    argv = ["replay", str(log), "--time", "t", "--id", "id", "--labels", str(labels),
            "--calibrator", "platt"]
    _exit_1_naming(argv, "labels.csv", capsys)


def test_a_parquet_file_cut_short_is_exit_1(tmp_path, capsys):
    data = _write_parquet(tmp_path / "good.parquet")
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(data[: len(data) // 2])
    _exit_1_naming(["replay", str(cut), "--calibrator", "platt"], "cut.parquet", capsys)


@pytest.mark.parametrize("fast", [True, False])
def test_a_corrupt_parquet_page_names_the_file_and_row_group(fast, tmp_path, capsys, monkeypatch):
    path = _corrupt_page(tmp_path)
    if not fast:
        monkeypatch.setattr(_engine, "open_fast_blocks", lambda *a: None)
    _exit_1_naming(["replay", str(path), "--calibrator", "platt"], "'corrupt.parquet'",
                   capsys, "row group 1 of 2 (rows 1000 to 1999)")


def test_replay_raises_an_unreadable_log_that_is_still_a_value_error(tmp_path):
    pytest.importorskip("pyarrow")
    for path in _logs(tmp_path) + [_corrupt_page(tmp_path)]:
        with pytest.raises(UnreadableLog, match=path.name) as info:
            replay(str(path), {"platt": OnlinePlatt()})
        assert isinstance(info.value, OSError) and isinstance(info.value, ValueError)


def test_parquet_logs_in_row_groups_replay_as_one(tmp_path):
    one = tmp_path / "one.parquet"
    _write_parquet(one, n=3000)
    groups = tmp_path / "groups.parquet"
    _write_parquet(groups, n=3000, row_group_size=700)
    a = replay(str(one), {"platt": OnlinePlatt()}, every=500)
    b = replay(str(groups), {"platt": OnlinePlatt()}, every=500)
    assert a.to_dict() == b.to_dict() and a.n_events == 3000
