"""``streamcal replay`` and ``streamcal simulate`` (streamcal.cli)."""

from __future__ import annotations

import csv
import gzip
import json
import re
import sys
from pathlib import Path

import pytest

import streamcal
from streamcal import OnlineIsotonic, OnlinePlatt
from streamcal.cli import _count_rows, _nice_ceiling, build_parser, main
from streamcal.datasets import miscalibrated_rain_forecasts
from streamcal.metrics import brier_score, expected_calibration_error, log_loss
from streamcal.registry import MULTICLASS_CALIBRATOR_NAMES, make_multiclass_calibrator

REPO = Path(__file__).resolve().parent.parent
SIMULATIONS = REPO / "simulations"


def write_log(path, n=300, seed=0, bad=None, label_time=None, gz=False):
    """A small binary log (time, score, label[, label_time]); ``bad``: {row index: score
    text} to corrupt. Returns the scores and labels of the rows."""
    scores, labels = miscalibrated_rain_forecasts(n=n, seed=seed)
    scores, labels = scores.tolist(), [int(y) for y in labels.tolist()]
    opener = gzip.open if gz else open
    with opener(path, "wt", newline="") as f:
        w = csv.writer(f)
        w.writerow(["time", "score", "label"] + (["label_time"] if label_time else []))
        for i, (s, y) in enumerate(zip(scores, labels)):
            text = (bad or {}).get(i, repr(s))
            w.writerow([i, text, y] + ([label_time(i)] if label_time else []))
    return scores, labels


def prequential(cal, scores, labels):
    out = []
    for s, y in zip(scores, labels):
        out.append(cal.predict_one(s))
        cal.learn_one(s, y)
    return out


def table(out: str) -> dict:
    """The summary tables printed by ``streamcal replay``: row -> column -> (value,
    best); the columns of the table over the window get their "@window" suffix back."""
    rows: dict = {}
    suffix, columns = "", None
    for line in out.splitlines():
        if line.startswith("over the last "):
            suffix = "@window"
        elif line.startswith("calibrator "):
            columns = [c + suffix for c in line.split()[1:]]
        elif columns is not None and line.strip() and not line.startswith("* best"):
            name, *cells = line.split()
            assert len(cells) == len(columns), line
            for c, v in zip(columns, cells):
                rows.setdefault(name, {})[c] = (float(v.rstrip("*")), v.endswith("*"))
        else:
            columns = None
    assert rows, out
    return rows


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "log.csv"
    scores, labels = write_log(path)
    return path, scores, labels


# ---------------------------------------------------------------------- parsing


def test_parser_defaults():
    args = build_parser().parse_args(["replay"])
    assert args.log is None and args.out is None
    assert (
        args.score,
        args.label,
        args.time,
        args.label_time,
        args.id,
        args.labels,
    ) == (None,) * 6
    assert args.calibrators is None and args.metrics is None
    assert (args.window, args.every, args.checkpoint, args.resume) == (
        None,
        None,
        None,
        False,
    )
    assert (args.on_error, args.progress, args.checkpoint_every) == (
        "skip",
        None,
        10_000,
    )


def test_parser_lists_and_flags():
    args = build_parser().parse_args(
        ["replay", "x.csv", "--calibrator", "isotonic", "platt:half_life=100", "--calibrator", "beta",
         "--metric", "brier", "--metric", "ece:n_bins=15", "--window", "500", "--every", "10",
         "--on-error", "raise", "--no-progress", "--label-time", "lt", "--out", "rep"]
    )  # fmt: skip
    assert args.calibrators == ["isotonic", "platt:half_life=100", "beta"]
    assert args.metrics == ["brier", "ece:n_bins=15"]
    assert (args.window, args.every, args.on_error, args.progress) == (
        500,
        10,
        "raise",
        False,
    )
    assert (args.label_time, args.out) == ("lt", "rep")
    assert build_parser().parse_args(["replay", "--progress"]).progress is True


def test_nice_ceiling_and_row_count(tmp_path):
    assert [_nice_ceiling(x) for x in (0.3, 1, 1.5, 3, 7, 11, 131, 5000)] == [
        1,
        1,
        2,
        5,
        10,
        20,
        200,
        5000,
    ]
    write_log(tmp_path / "a.csv", n=123)
    write_log(tmp_path / "a.csv.gz", n=45, gz=True)
    (tmp_path / "a.jsonl").write_text(
        '{"score": 0.1, "label": 0}\n\n{"score": 0.2, "label": 1}'
    )
    assert _count_rows(str(tmp_path / "a.csv")) == 123
    assert _count_rows(str(tmp_path / "a.csv.gz")) == 45
    assert (
        _count_rows(str(tmp_path / "a.jsonl")) == 3
    )  # an estimate: the blank line counts
    assert _count_rows(str(tmp_path / "a.txt")) is None
    assert _count_rows(str(tmp_path / "missing.csv")) is None


@pytest.mark.parametrize(
    "argv, pieces",
    [
        (
            ["--calibrator", "isotonc"],
            [
                "argument --calibrator",
                "Unknown calibrator 'isotonc'",
                "isotonic, histogram",
            ],
        ),
        (
            ["--calibrator", "isotonic:windowsize=5"],
            ["argument --calibrator", "no parameter 'windowsize'", "window_size"],
        ),
        (
            ["--calibrator", "isotonic:window_size=0"],
            ["argument --calibrator", "'window_size' parameter of OnlineIsotonic"],
        ),
        (
            ["--calibrator", "isotonic", "isotonic"],
            ["argument --calibrator", "'isotonic' is given twice"],
        ),
        (["--metric", "ecee"], ["argument --metric", "Unknown metric 'ecee'"]),
        (["--score", "p"], ["argument --score", "no column 'p'", "time, score, label"]),
        (["--label", "y"], ["argument --label", "no column 'y'"]),
        (["--time", "when"], ["argument --time", "no column 'when'"]),
        (
            ["--time", "time", "--label-time", "lt"],
            ["argument --label-time", "no column 'lt'"],
        ),
        (
            ["--label-time", "time"],
            ["Delayed labels need the events' --time column"],
        ),
        (["--labels", "x.csv"], ["The --id and --labels options go together"]),
        (["--resume"], ["argument --resume: needs --checkpoint"]),
        (["--window", "0"], ["argument --window", "must be an int >= 1"]),
        (["--every", "x"], ["argument --every", "must be an int >= 1. Got 'x'"]),
        (["--on-error", "ignore"], ["argument --on-error", "invalid choice: 'ignore'"]),
        (["--label-time", "t", "--id", "i"], ["not allowed with argument"]),
    ],
)
def test_usage_errors_exit_2_naming_the_argument(log, capsys, argv, pieces):
    path = log[0]
    assert main(["replay", str(path), *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "usage: streamcal replay" in captured.err
    for piece in pieces:
        assert piece in captured.err


def test_usage_errors_about_files(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "missing.csv")]) == 2
    assert "argument LOG: no such file" in capsys.readouterr().err
    assert main(["replay", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    write_log(tmp_path / "log.csv", n=10)
    (tmp_path / "file").write_text("")
    assert (
        main(["replay", str(tmp_path / "log.csv"), "--out", str(tmp_path / "file")])
        == 2
    )
    assert "argument --out" in capsys.readouterr().err
    assert main(["replay", str(tmp_path / "log.csv"), "--id", "time"]) == 2
    assert "The --id and --labels options go together" in capsys.readouterr().err


def test_out_and_checkpoint_paths_are_checked_before_the_replay(tmp_path, capsys):
    """An empty --out, a report file name taken by a folder, and a checkpoint that
    cannot be written (empty name, a folder, a missing folder) are usage errors named
    by option before any event is replayed (they failed with a traceback, or an
    unnamed error, after the whole replay)."""
    log = str(tmp_path / "log.csv")
    write_log(tmp_path / "log.csv", n=10)
    (tmp_path / "rep" / "index.html").mkdir(parents=True)
    for extra, option in (
        (["--out", ""], "--out"),
        (["--out", str(tmp_path / "rep")], "--out"),
        (["--checkpoint", ""], "--checkpoint"),
        (["--checkpoint", str(tmp_path)], "--checkpoint"),
        (["--checkpoint", str(tmp_path / "nodir" / "x.ckpt")], "--checkpoint"),
    ):
        assert main(["replay", log, "--calibrator", "platt", *extra]) == 2, extra
        captured = capsys.readouterr()
        assert f"argument {option}" in captured.err and "Traceback" not in captured.err
        assert "calibrator" not in captured.out  # no table: nothing was replayed
    assert not (tmp_path / "nodir").exists()
    lab = tmp_path / "labels.csv"
    lab.write_text("id,label,t\n1,1,3\n")
    assert main(["replay", log, "--id", "time", "--labels", str(lab)]) == 2
    assert "argument --labels: needs --time" in capsys.readouterr().err


@pytest.mark.parametrize("source", ["file", "stdin"])
def test_an_empty_log_says_no_events(source, tmp_path, capsys, monkeypatch):
    """A 0-byte log (not even a header), as a file or on standard input, is a log of no
    events: exit 1 and "no events", as a header-only log (it was a usage error listing
    no columns), and no report."""
    path = tmp_path / "empty.csv"
    path.write_bytes(b"")
    out = tmp_path / "rep"
    if source == "stdin":
        _stdin_bytes(monkeypatch, b"")
    arg = str(path) if source == "file" else "-"
    assert main(["replay", arg, "--no-progress", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "no events:" in err and "Its columns" not in err
    assert not out.exists()
    from streamcal.replay import read_header

    assert read_header(str(path)) is None  # no columns to check


@pytest.mark.parametrize("damage", ["cut_short", "not_gzip", "corrupt"])
@pytest.mark.parametrize("fast", [False, True])
def test_a_damaged_gzip_log_is_one_line_naming_the_file(damage, fast, tmp_path, capsys, monkeypatch):
    """A gzip log cut short, not gzip at all, or with corrupt data: exit 1 and one line
    naming the file, never a traceback (issue 12), by the row reader and the block
    reader alike."""
    from streamcal.replay import _fastcsv

    if fast:
        pytest.importorskip("pyarrow")
        monkeypatch.setattr(_fastcsv, "MIN_BYTES", 0)
        monkeypatch.setattr(_fastcsv, "BLOCK_BYTES", 4096)
    text = "score,label\n" + "".join(f"{(i % 97) / 97!r},{i % 2}\n" for i in range(20000))
    data = gzip.compress(text.encode())
    if damage == "cut_short":
        data = data[: len(data) // 2]
    elif damage == "not_gzip":
        data = text.encode()
    else:
        data = data[:2000] + bytes(b ^ 0x5A for b in data[2000:2100]) + data[2100:]
    path = tmp_path / "log.csv.gz"
    path.write_bytes(data)
    assert main(["replay", str(path), "--calibrator", "platt", "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "cannot read the log 'log.csv.gz'" in err


def test_a_log_given_after_calibrator_gets_a_hint(log, capsys):
    # `--calibrator isotonic LOG` makes LOG a calibrator spec: say how to fix it
    assert main(["replay", "--calibrator", "isotonic", str(log[0])]) == 2
    err = capsys.readouterr().err
    assert "is a file: to replay it, put LOG before --calibrator" in err


# ---------------------------------------------------------------------- replaying


def test_replay_prints_the_table_with_the_right_numbers(log, capsys):
    path, scores, labels = log
    argv = ["replay", str(path), "--calibrator", "isotonic", "platt", "--no-progress"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "\r" not in captured.err
    out = captured.out
    assert "300 events, 300 learnt, 0 malformed rows skipped" in out
    rows = table(out)
    assert list(rows) == ["raw", "isotonic", "platt"]
    assert list(rows["raw"]) == ["brier", "log_loss", "ece"]
    predictions = {
        "raw": scores,
        "isotonic": prequential(OnlineIsotonic(), scores, labels),
        "platt": prequential(OnlinePlatt(), scores, labels),
    }
    for name, p in predictions.items():
        assert rows[name]["brier"][0] == pytest.approx(
            brier_score(labels, p), abs=5.1e-5
        )
        assert rows[name]["log_loss"][0] == pytest.approx(
            log_loss(labels, p), abs=5.1e-5
        )
        assert rows[name]["ece"][0] == pytest.approx(
            expected_calibration_error(labels, p, n_bins=10), abs=5.1e-5
        )
    for column in ["brier", "log_loss", "ece"]:  # the best value (lowest) is starred
        best = min(r[column][0] for r in rows.values())
        for r in rows.values():
            assert r[column][1] == (r[column][0] == best)
    assert "* best in its column; lower is better: brier, log_loss, ece" in out


def test_default_calibrators_and_spec_names(log, capsys):
    assert (
        main(["replay", str(log[0]), "--metric", "brier", "roc_auc", "--no-progress"])
        == 0
    )
    out = capsys.readouterr().out
    rows = table(out)
    assert list(rows) == ["raw", "isotonic", "venn_abers", "histogram", "platt", "beta", "tops"]
    assert "higher is better: roc_auc" in out
    argv = [
        "replay",
        str(log[0]),
        "--calibrator",
        "Isotonic: window_size = 100",
        "--metric",
        "ece:n_bins=5",
    ]
    assert main([*argv, "--no-progress"]) == 0
    rows = table(capsys.readouterr().out)
    assert list(rows) == ["raw", "isotonic:window_size=100"]
    assert list(rows["raw"]) == ["ece:n_bins=5"]


def test_report_directory(log, tmp_path, capsys):
    path, scores, labels = log
    out_dir = tmp_path / "report"
    argv = [
        "replay",
        str(path),
        "--calibrator",
        "isotonic",
        "--metric",
        "brier",
        "ece",
        "corp",
    ]
    assert main([*argv, "--every", "50", "--out", str(out_dir), "--no-progress"]) == 0
    assert f"report: {out_dir / 'index.html'}" in capsys.readouterr().out
    data = json.loads((out_dir / "summary.json").read_text())
    assert data["n_events"] == 300
    assert list(data["summary"]) == ["raw", "isotonic"]
    iso = prequential(OnlineIsotonic(), scores, labels)
    assert data["summary"]["isotonic"]["brier"] == pytest.approx(
        brier_score(labels, iso), abs=1e-12
    )
    assert data["options"]["calibrators"] == ["isotonic"]
    assert data["options"]["every"] == 50
    assert data["options"]["command"].startswith("streamcal replay ")
    assert data["source"]["log"] == str(path)
    assert [t for t, _ in data["series"]["isotonic"]["brier"]] == list(
        range(50, 301, 50)
    )
    html = (out_dir / "index.html").read_text()
    ids = {
        "reliability_binned",
        "reliability_corp",
        "over_time_brier",
        "over_time_ece",
        "over_time_corp",
        "over_time_corp.mcb",
        "over_time_corp.dsc",  # not corp.unc: the same for every calibrator
    }
    figures = data["images"]["over_time"] + data["images"]["reliability"]
    assert {f["id"] for f in figures} == ids
    for name in ids:  # each drawn inline, as SVG
        start = html.index(f'<figure id="{name}">')
        assert html.index("<svg", start) < html.index("</figure>", start)
    assert sorted(p.name for p in out_dir.iterdir()) == ["index.html", "summary.json"]


def test_report_without_matplotlib(log, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` fails
    out_dir = tmp_path / "report"
    argv = ["replay", str(log[0]), "--calibrator", "isotonic", "--out", str(out_dir)]
    assert main([*argv, "--no-progress"]) == 0
    assert "note:" not in capsys.readouterr().err  # the figures need no matplotlib
    data = json.loads((out_dir / "summary.json").read_text())
    assert [f["kind"] for f in data["images"]["reliability"]] == ["binned"]  # ece: a default
    assert data["notes"] == []
    assert sorted(p.name for p in out_dir.iterdir()) == ["index.html", "summary.json"]


def test_malformed_rows_skip_or_stop(tmp_path, capsys):
    path = tmp_path / "log.csv"
    write_log(path, n=100, bad={3: "abc", 50: "1.5"})  # rows 3 and 50: lines 5 and 52
    argv = ["replay", str(path), "--calibrator", "isotonic", "--no-progress"]
    # 2% of the rows malformed: more than the default --max-malformed (1%) allows
    assert main(argv) == 3
    captured = capsys.readouterr()
    assert "98 events, 98 learnt, 2 malformed rows skipped" in captured.out
    assert "line 5" in captured.err and "line 52" in captured.err
    assert "2 of 100 rows malformed (2.0%), more than --max-malformed 0.01" in captured.err
    assert main([*argv, "--max-malformed", "0.02"]) == 0  # at most 2%: done
    assert "malformed (" not in capsys.readouterr().err

    assert (
        main(
            [
                "replay",
                str(path),
                "--calibrator",
                "isotonic",
                "--on-error",
                "raise",
                "--no-progress",
            ]
        )
        == 1
    )
    captured = capsys.readouterr()
    assert "line 5" in captured.err
    assert "--on-error skip" in captured.err
    assert "calibrator" not in captured.out  # no table


def test_delayed_labels_pass_through(tmp_path, capsys):
    # every label arrives after the last event: no calibrator learns anything before
    # predicting, so each predicts the raw score (cold start)
    path = tmp_path / "late.csv"
    write_log(path, n=120, label_time=lambda i: 10_000)
    argv = [
        "replay",
        str(path),
        "--time",
        "time",
        "--label-time",
        "label_time",
        "--calibrator",
        "isotonic",
    ]
    assert main([*argv, "--no-progress"]) == 0
    rows = table(capsys.readouterr().out)
    assert rows["isotonic"]["brier"][0] == rows["raw"]["brier"][0]
    # the same log without --label-time: immediate labels, isotonic differs from raw
    assert main(["replay", str(path), "--calibrator", "isotonic", "--no-progress"]) == 0
    rows = table(capsys.readouterr().out)
    assert rows["isotonic"]["brier"][0] != rows["raw"]["brier"][0]


def test_window_columns_and_plots(log, tmp_path, capsys):
    out_dir = tmp_path / "report"
    argv = [
        "replay",
        str(log[0]),
        "--calibrator",
        "isotonic",
        "--metric",
        "brier",
        "ece",
    ]
    argv += ["--window", "100", "--every", "50", "--out", str(out_dir), "--no-progress"]
    assert main(argv) == 0
    rows = table(capsys.readouterr().out)
    assert list(rows["raw"]) == ["brier", "ece", "brier@window", "ece@window"]
    data = json.loads((out_dir / "summary.json").read_text())
    assert [i["metric"] for i in data["images"]["over_time"]] == [
        "brier",
        "brier@window",
        "ece",
        "ece@window",
    ]
    # the reliability diagram is the one of all events, not of the window
    assert [i["kind"] for i in data["images"]["reliability"]] == ["binned"]


def test_jsonl_log_and_label_records_joined_by_id(tmp_path, capsys):
    scores, labels = miscalibrated_rain_forecasts(n=200, seed=1)
    events = tmp_path / "events.jsonl"
    rows = [
        json.dumps({"id": f"e{i}", "t": i, "p": s}) + "\n"
        for i, s in enumerate(scores.tolist())
    ]
    events.write_text("".join(rows))
    # no label column: a usage error, from the replay, which reads the first record
    assert main(["replay", str(events), "--score", "p", "--label", "y"]) == 2
    assert "The label column 'y' is not in events.jsonl" in capsys.readouterr().err

    label_file = tmp_path / "labels.csv"
    with open(label_file, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "y", "t"])
        for i, y in enumerate(labels.tolist()):
            w.writerow([f"e{i}", int(y), i + 5])  # each label known 5 steps later
    argv = ["replay", str(events), "--score", "p", "--label", "y", "--time", "t"]
    argv += ["--id", "id", "--labels", str(label_file), "--calibrator", "isotonic"]
    assert main([*argv, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "200 events, 200 learnt, 0 malformed rows skipped" in out
    # event i is predicted knowing the labels of events 0 .. i - 5 only
    cal, preds = OnlineIsotonic(), []
    s, y = scores.tolist(), [int(v) for v in labels.tolist()]
    for i in range(200):
        if i >= 5:
            cal.learn_one(s[i - 5], y[i - 5])
        preds.append(cal.predict_one(s[i]))
    rows = table(out)
    assert rows["isotonic"]["brier"][0] == pytest.approx(
        brier_score(y, preds), abs=5.1e-5
    )
    bad = [*argv[:-4], "--labels", str(events), "--calibrator", "isotonic"]
    assert main(bad) == 2  # a label file without the columns: a usage error
    # (events.jsonl is not a CSV: the check is left to the replay, which names it)
    assert "The label column 'y' is not in events.jsonl" in capsys.readouterr().err
    with open(label_file, "w") as f:
        f.write("id,label,t\n")
    assert main(argv) == 2
    assert (
        "argument --labels: no column 'y' (the --label column)"
        in capsys.readouterr().err
    )


def test_multiclass_log(tmp_path, capsys):
    path = tmp_path / "mc.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["a", "b", "c", "label"])
        for i in range(60):
            w.writerow([0.5, 0.3, 0.2, "abc"[i % 3]])
    argv = ["replay", str(path), "--score", "a,b,c", "--no-progress"]
    assert main(argv) == 0
    rows = table(capsys.readouterr().out)
    assert list(rows) == ["raw", "temperature", "fir", "ovr_isotonic", "class_wise"]
    assert list(rows["raw"]) == ["brier", "log_loss", "ece"]
    assert (
        main(
            [
                *argv,
                "--calibrator",
                "scir",
                "class_wise:calibrator=platt",
                "--metric",
                "tece",
                "top_label_ece",
            ]
        )
        == 0
    )
    rows = table(capsys.readouterr().out)
    assert list(rows) == ["raw", "scir", "class_wise:calibrator=platt"]
    assert list(rows["raw"]) == ["tece", "top_label_ece"]
    assert main([*argv, "--calibrator", "isotonic"]) == 2
    # issue 12: a binary calibrator is named as such, not as unknown
    assert (
        "argument --calibrator: isotonic is a binary calibrator"
        in capsys.readouterr().err
    )
    assert main([*argv, "--calibrator", "isotonc"]) == 2
    assert "argument --calibrator: Unknown calibrator 'isotonc'" in capsys.readouterr().err
    assert main([*argv, "--metric", "roc_auc"]) == 2
    assert (
        "argument --metric: 'roc_auc' is not a multiclass metric"
        in capsys.readouterr().err
    )
    assert main(["replay", str(path), "--score", "a,,c"]) == 2
    assert "argument --score: empty column name" in capsys.readouterr().err


@pytest.mark.parametrize("name", MULTICLASS_CALIBRATOR_NAMES)
def test_every_multiclass_name_replays_a_multiclass_log(name, tmp_path, capsys):
    """Issue 17's "must show": each multiclass short name, at its defaults, runs in
    ``streamcal replay`` on a multiclass log, and prints the log loss and Brier score
    of the per-event loop (predict, then learn) of the calibrator its name builds."""
    import numpy as np

    from streamcal.metrics import CrossEntropy, MulticlassBrier

    rng = np.random.default_rng(17)
    classes = ["oak", "pine", "fir", "elm"]
    q = rng.dirichlet(np.ones(4), size=450)
    labels = [classes[rng.choice(4, p=row)] for row in q]
    sharp = q**2  # over-confident
    sharp /= sharp.sum(axis=1, keepdims=True)
    path = tmp_path / "mc.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow([*classes, "label"])
        for row, y in zip(sharp.tolist(), labels):
            w.writerow([*map(repr, row), y])
    argv = ["replay", str(path), "--score", ",".join(classes), "--no-progress"]
    assert main([*argv, "--calibrator", name, "--metric", "log_loss", "brier"]) == 0
    rows = table(capsys.readouterr().out)
    assert list(rows) == ["raw", name]
    cal = make_multiclass_calibrator(name)
    nll, brier = CrossEntropy(), MulticlassBrier()
    for row, y in zip(sharp.tolist(), labels):
        scores = dict(zip(classes, row))
        forecast = cal.predict_one(scores)
        nll.update(y, forecast)
        brier.update(y, forecast)
        cal.learn_one(scores, y)
    assert rows[name]["log_loss"][0] == pytest.approx(nll.get(), abs=5e-5)
    assert rows[name]["brier"][0] == pytest.approx(brier.get(), abs=5e-5)
    assert rows[name]["log_loss"][0] != rows["raw"]["log_loss"][0]  # it recalibrated


def test_stop_on_a_bad_row_fix_it_and_resume(tmp_path, capsys):
    # the workflow the error message suggests: --on-error raise stops at a bad row with
    # the state saved; fix the row, rerun the same command with --resume: the results
    # are those of an uninterrupted replay of the fixed log
    good, broken = tmp_path / "good.csv", tmp_path / "log.csv"
    write_log(good, n=300)
    write_log(broken, n=300, bad={200: "oops"})  # line 202
    ckpt = tmp_path / "replay.ckpt"
    options = ["--calibrator", "isotonic", "tops", "--every", "50", "--no-progress"]
    assert main(["replay", str(good), *options, "--out", str(tmp_path / "a")]) == 0
    uninterrupted = json.loads((tmp_path / "a" / "summary.json").read_text())

    argv = ["replay", str(broken), *options, "--on-error", "raise"]
    argv += ["--checkpoint", str(ckpt), "--checkpoint-every", "70", "--resume"]
    assert (
        not ckpt.exists()
    )  # --resume without a checkpoint yet: starts from the beginning
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "line 202" in err and "--resume" in err
    assert ckpt.is_file()
    write_log(broken, n=300)  # the row fixed
    assert main([*argv, "--out", str(tmp_path / "b")]) == 0
    resumed = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert resumed["summary"] == uninterrupted["summary"]
    assert resumed["series"] == uninterrupted["series"]
    assert resumed["n_events"] == 300


def test_progress_bar_on_stderr(log, capsys):
    assert (
        main(
            [
                "replay",
                str(log[0]),
                "--calibrator",
                "isotonic",
                "--every",
                "10",
                "--progress",
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "\rreplaying log.csv [" in err
    assert re.search(r"\d+%", err) and "/300 events" in err


def test_stdin_not_a_tty_means_no_progress(log, capsys, monkeypatch):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    assert main(["replay", str(log[0]), "--calibrator", "isotonic"]) == 0
    assert "\r" not in capsys.readouterr().err


def test_bundled_log_is_the_default(tmp_path, capsys):
    from streamcal.datasets import rain_forecast_log_path

    out_dir = tmp_path / "report"
    argv = [
        "replay",
        "--calibrator",
        "isotonic",
        "--metric",
        "brier",
        "ece",
        "--out",
        str(out_dir),
    ]
    assert main([*argv, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "the bundled rain-forecast log" in out
    assert str(rain_forecast_log_path()) in out
    rows = table(out)
    assert list(rows) == ["raw", "isotonic"]
    data = json.loads((out_dir / "summary.json").read_text())
    assert data["n_events"] > 1000
    assert data["source"]["bundled"] is True
    assert 150 <= len(data["series"]["isotonic"]["brier"]) <= 500  # about 200 samples


# ---------------------------------------------------------------------- simulate


def test_simulate_list_of_the_repository(capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    assert main(["simulate", "--list"]) == 0
    out = capsys.readouterr().out
    expected = sorted(
        p.stem
        for p in SIMULATIONS.glob("*.py")
        if not p.stem.startswith("_") and "__main__" in p.read_text()
    )
    assert expected  # the repository has simulations
    listed = [line.split()[0] for line in out.splitlines()[1:]]
    assert listed == expected
    # found from elsewhere too: next to the source checkout streamcal is imported from
    monkeypatch.chdir(Path("/"))
    assert main(["simulate", "--list"]) == 0
    assert capsys.readouterr().out == out


def test_simulate_runs_a_script_as_main_with_its_arguments(tmp_path, capsys):
    (tmp_path / "echo.py").write_text(
        '"""Echo the arguments."""\n'
        "import sys\n"
        'if __name__ == "__main__":\n'
        "    print('args', sys.argv[1:])\n"
        "    sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else None)\n"
    )
    (tmp_path / "helper.py").write_text(
        "X = 1\n"
    )  # no __main__ block: not a simulation
    (tmp_path / "_private.py").write_text('if __name__ == "__main__":\n    pass\n')
    argv_before = list(sys.argv)
    assert main(["simulate", "--dir", str(tmp_path), "echo", "3", "--flag", "-x"]) == 3
    assert capsys.readouterr().out == "args ['3', '--flag', '-x']\n"
    assert sys.argv == argv_before
    assert main(["simulate", "--dir", str(tmp_path), "echo.py"]) == 0
    assert main(["simulate", "--dir", str(tmp_path), "--list"]) == 0
    out = capsys.readouterr().out
    assert "echo  Echo the arguments." in out
    assert "helper" not in out and "_private" not in out


def test_simulate_errors(tmp_path, capsys, monkeypatch):
    (tmp_path / "sims").mkdir()
    (tmp_path / "sims" / "one.py").write_text('if __name__ == "__main__":\n    pass\n')
    assert main(["simulate", "--dir", str(tmp_path / "sims"), "two"]) == 2
    err = capsys.readouterr().err
    assert "argument NAME: no simulation 'two'" in err and "Available: one." in err
    assert main(["simulate", "--dir", str(tmp_path / "sims")]) == 2
    assert "give the NAME" in capsys.readouterr().err
    assert main(["simulate", "--dir", str(tmp_path / "nowhere"), "--list"]) == 2
    assert "argument --dir: no such folder" in capsys.readouterr().err
    # installed from a wheel: no ./simulations, no source checkout around the package
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(
        streamcal, "__file__", str(tmp_path / "site" / "streamcal" / "__init__.py")
    )
    assert main(["simulate", "--list"]) == 2
    err = capsys.readouterr().err
    assert "the simulations folder was not found" in err
    assert "not of the installed package" in err and "--dir" in err


def test_help_mentions_the_subcommands(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "replay" in out and "simulate" in out and "demo" in out
    assert main(["replay", "--help"]) == 0
    out = capsys.readouterr().out
    for piece in [
        "--calibrator SPEC",
        "isotonic:window_size=5000",
        "tops",
        "hops",
        "exit status",
    ]:
        assert piece in out


# ---------------------------------------------------------------------- --format


def _stdin_bytes(monkeypatch, data: bytes):
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(data))))


@pytest.mark.parametrize("fmt", ["jsonl", "parquet", "csv"])
def test_format_reads_standard_input_and_overrides_the_suffix(fmt, tmp_path, capsys, monkeypatch):
    """--format: JSON Lines (or Parquet) on standard input is read as such, not as CSV;
    a file whose suffix says nothing is read in the format given; the results are those
    of the same log read from a file with the right suffix."""
    scores, labels = miscalibrated_rain_forecasts(n=300, seed=2)
    rows = [{"score": s, "label": int(y)} for s, y in zip(scores.tolist(), labels.tolist())]
    named = tmp_path / f"log.{fmt}"
    if fmt == "jsonl":
        named.write_text("".join(json.dumps(r) + "\n" for r in rows))
    elif fmt == "csv":
        named.write_text("score,label\n" + "".join(f"{r['score']!r},{r['label']}\n" for r in rows))
    else:
        pq = pytest.importorskip("pyarrow.parquet")
        import pyarrow as pa

        pq.write_table(pa.Table.from_pylist(rows), named)
    argv = ["--calibrator", "isotonic", "--every", "50", "--no-progress"]
    assert main(["replay", str(named), *argv]) == 0
    expected = table(capsys.readouterr().out)
    data = named.read_bytes()
    # a suffix that says nothing: unsupported, unless --format says how to read it
    blank = tmp_path / "log.dat"
    blank.write_bytes(data)
    assert main(["replay", str(blank), *argv]) == 2
    assert "unsupported file type" in capsys.readouterr().err
    assert main(["replay", str(blank), "--format", fmt, *argv]) == 0
    assert table(capsys.readouterr().out) == expected
    # standard input
    _stdin_bytes(monkeypatch, data)
    assert main(["replay", "-", "--format", fmt, *argv]) == 0
    assert table(capsys.readouterr().out) == expected
    if fmt == "jsonl":  # without --format, standard input is CSV: the columns are missing
        _stdin_bytes(monkeypatch, data)
        assert main(["replay", "-", *argv]) == 2
        assert "The score column 'score' is not in <stdin>" in capsys.readouterr().err


def test_format_in_the_help(capsys):
    assert main(["replay", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--format {csv,tsv,jsonl,parquet}" in out
    assert "inferred from its suffix" in out and "standard input is read as csv" in out


# ---------------------------------------------------------------------- Ctrl-C


def test_ctrl_c_stops_soon_prints_the_partial_summary_and_resumes(tmp_path):
    """SIGINT to a running `streamcal replay`: exit 130 after the partial summary, the
    checkpoint on the last event replayed; --resume then ends with the results of an
    uninterrupted replay (summary.json compared)."""
    import os
    import signal
    import subprocess

    path, ckpt = tmp_path / "log.csv", tmp_path / "state.json"
    write_log(path, n=400_000, seed=3)
    base = [sys.executable, "-m", "streamcal", "replay", str(path), "--calibrator", "platt",
            "--every", "1000", "--checkpoint", str(ckpt)]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([*base, "--progress"], env=env, cwd=tmp_path, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stderr.read(1)  # the progress line: the replay is running
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    assert "interrupted: stopping" in err and "Traceback" not in err
    match = re.search(r"interrupted after ([\d,]+) events", err)
    assert match, err
    n = int(match.group(1).replace(",", ""))
    assert 0 < n < 400_000
    assert f"partial results, over the {n:,} events replayed" in out
    saved = json.loads(ckpt.read_text())
    assert saved["n_events"] == saved["events_read"] == n
    resumed = subprocess.run([*base, "--resume", "--out", str(tmp_path / "a"), "--no-progress"],
                             env=env, cwd=tmp_path, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    whole = subprocess.run([*base[:-2], "--out", str(tmp_path / "b"), "--no-progress"],
                           env=env, cwd=tmp_path, capture_output=True, text=True)
    assert whole.returncode == 0, whole.stderr
    a = json.loads((tmp_path / "a" / "summary.json").read_text())
    b = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert a["summary"] == b["summary"] and a["series"] == b["series"]


def test_table_stars_and_directions_come_from_the_column_table(tmp_path, capsys):
    # issue 12: multiclass columns were never starred (their directions were unknown
    # to the key-parsing table); the CLI reads the result's column table
    import random

    rng = random.Random(5)
    path = tmp_path / "mc.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["a", "b", "c", "label"])
        for _ in range(120):
            p = [rng.random() ** 2 + 0.01 for _ in range(3)]
            p = [x / sum(p) for x in p]
            w.writerow([*p, rng.choices("abc", weights=p)[0]])
    argv = ["replay", str(path), "--score", "a,b,c", "--no-progress", "--metric",
            "brier", "tece", "classwise_ece", "--window", "40"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    rows = table(out)
    columns = ["brier", "tece", "classwise_ece"]
    assert list(rows["raw"]) == columns + [c + "@window" for c in columns]
    for column in rows["raw"]:
        values = [rows[r][column][0] for r in rows]
        starred = [r for r in rows if rows[r][column][1]]
        assert starred and all(rows[r][column][0] == min(values) for r in starred), column
    assert "over the last 40 events:" in out
    assert "lower is better: brier, tece, classwise_ece" in out


def test_readme_shows_what_the_default_command_prints(capsys):
    """The README's headline table (between the replay-output markers) is the table
    that ``streamcal replay`` with no argument prints, line for line (issue 13, item 2:
    a calibrator of the default set beats the raw model on all three metrics)."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    block = readme.split("<!-- replay-output -->")[1].split("<!-- /replay-output -->")[0]
    shown = block.strip().removeprefix("```text").removesuffix("```").strip().splitlines()
    assert main(["replay", "--no-progress"]) == 0
    out = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(out) if line.startswith("calibrator "))
    printed = [line.rstrip() for line in out[start : start + len(shown)]]
    assert printed == shown
    rows = table("\n".join(out))
    raw = rows.pop("raw")
    assert any(all(r[m][0] < raw[m][0] for m in ("brier", "log_loss", "ece")) for r in rows.values())


# ----------------------------------------------------------- issue 14, part C: cli only parses


def test_option_pairs_are_checked_by_replay_itself(log, tmp_path, capsys):
    # an existing label file without --id: the CLI no longer checks the pair itself,
    # streamcal.replay does, and its ValueError is a usage error; --out is left as it was
    path = log[0]
    labels = tmp_path / "labels.csv"
    labels.write_text("time,id,label\n1,a,1\n")
    out = tmp_path / "report"
    argv = ["replay", str(path), "--labels", str(labels), "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "usage: streamcal replay" in err
    assert "The --id and --labels options go together" in err
    assert not out.exists()
    with pytest.raises(ValueError, match="The 'id' and 'labels' arguments of replay go together"):
        streamcal.replay(str(path), {"isotonic": streamcal.OnlineIsotonic()}, labels=str(labels))


def test_cli_uses_no_private_name_of_another_subpackage():
    import ast
    import pathlib

    import streamcal.cli as cli

    shared = {"streamcal._validation", "streamcal._snapshot", "streamcal._merge", "streamcal._classes"}
    bad = []
    for file in pathlib.Path(cli.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(file.read_text())):
            if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith("streamcal"):
                continue
            if node.module == "streamcal.cli" or node.module.startswith("streamcal.cli."):
                continue
            private_module = any(p.startswith("_") for p in node.module.split(".")[1:])
            if (private_module and node.module not in shared) or any(
                a.name.startswith("_") for a in node.names
            ):
                bad.append((file.name, node.module, [a.name for a in node.names]))
    assert bad == []


def test_read_header_and_log_format_are_public(tmp_path):
    from streamcal.replay import log_format, read_header

    path = tmp_path / "events.tsv"
    path.write_text(" score\tlabel \n0.5\t1\n")
    assert read_header(path) == ["score", "label"]
    assert read_header(path, format="jsonl") is None
    assert read_header("-") is None
    assert log_format(path) == ("tsv", False)
    assert log_format("x.CSV.gz") == ("csv", True)
    assert log_format("x.pq") == ("parquet", False)
    assert log_format("x.txt") == (None, False)
    assert _count_rows(str(path)) == 1


@pytest.mark.parametrize("final_newline", [True, False])
@pytest.mark.parametrize("gz", [False, True])
def test_count_rows_of_a_log_longer_than_its_buffer(tmp_path, final_newline, gz):
    """_count_rows reads in 1 MiB buffers (replay-t1): lines split across buffers, a
    buffer ending on a newline, and a last line without one count as the text says."""
    import gzip

    def write(name, text):
        data = text.encode()
        path = tmp_path / (name + (".gz" if gz else ""))
        path.write_bytes(gzip.compress(data) if gz else data)
        return str(path)

    rows = "".join(f"0.{k:07d},{k % 2}\n" for k in range(100_000))  # 12 bytes each
    text = "score,label\n" + rows
    assert _count_rows(write("log.csv", text if final_newline else text[:-1])) == 100_000
    # the first buffer ends exactly on a newline: a 4-byte header, 87,381 rows
    exact = "s,l\n" + rows[: 87_381 * 12]
    assert len(exact) == 1 << 20
    more = "0.5,1\n0.25,0" + ("\n" if final_newline else "")
    assert _count_rows(write("exact.csv", exact + more)) == 87_381 + 2
    assert _count_rows(write("only.csv", exact)) == 87_381
