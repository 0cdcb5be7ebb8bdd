"""The replay report: summary.json and index.html with its inline SVG figures (streamcal.report)."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys
from html.parser import HTMLParser
from types import SimpleNamespace

import numpy as np

from streamcal import OnlineIsotonic, OnlinePlatt
from streamcal.metrics import CORP, ECE, ROCAUC, Brier, LogLoss
from streamcal.metrics.catalogue import Column
from streamcal.metrics.catalogue import columns as catalogue_columns
from streamcal.report import FORMAT, format_number, summary_table, write_report
from tests import svg_reading as svgr


def fake_result(n=300, seed=0, metric_classes=(Brier, LogLoss, ECE, CORP), every=50):
    """A ReplayResult-like object built by hand, per the replay contract: a prequential
    loop over generated over-confident forecasts, raw scores included."""
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0.05, 0.95, n)
    scores = np.clip(truth + 0.3 * (truth - 0.5), 0.0, 1.0)
    labels = rng.uniform(size=n) < truth
    cals = {"isotonic": OnlineIsotonic(), "platt": OnlinePlatt()}
    names = ["raw", *cals]
    keys = {Brier: "brier", LogLoss: "log_loss", ECE: "ece", CORP: "corp"}
    metrics = {c: {keys[m]: m() for m in metric_classes} for c in names}
    series = {c: {k: [] for k in metrics[c]} for c in names}
    series["t"], series["time"] = [], []
    for t, (s, y) in enumerate(zip(scores.tolist(), labels.tolist()), start=1):
        preds = {"raw": s, **{k: c.predict_one(s) for k, c in cals.items()}}
        for c in names:
            for m in metrics[c].values():
                m.update(y, preds[c])
        for cal in cals.values():
            cal.learn_one(s, y)
        if t % every == 0:
            series["t"].append(t)
            series["time"].append(f"2013-01-01T00:00:{t}")
            for c in names:
                for k, m in metrics[c].items():
                    series[c][k].append((t, m.get()))
    summary = {}
    for c in names:
        summary[c] = {k: m.get() for k, m in metrics[c].items()}
        if "corp" in metrics[c]:
            corp = metrics[c]["corp"]
            summary[c].update(
                {"corp.mcb": corp.mcb, "corp.dsc": corp.dsc, "corp.unc": corp.unc}
            )
    return SimpleNamespace(
        summary=summary,
        series=series,
        n_events=n,
        n_learnt=n,
        n_skipped=0,
        errors=[],
        calibrators=cals,
        metrics=metrics,
        columns=tuple(
            c for m in metric_classes for c in catalogue_columns(keys[m], m)
        ),
    )


class PageParser(HTMLParser):
    """The images, links, table cells and text of a page."""

    def __init__(self):
        super().__init__()
        self.images, self.links, self.rows, self.text = [], [], [], []
        self.scripts = 0
        self._row = None
        self._cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "img":
            self.images.append(attrs)
        elif tag == "a":
            self.links.append(attrs.get("href"))
        elif tag == "script":
            self.scripts += 1
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = {"text": "", "class": attrs.get("class", "")}

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._cell["text"] = self._cell["text"].strip()
            self._row.append(self._cell)
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell["text"] += data


def parse_page(path):
    parser = PageParser()
    with open(path, encoding="utf-8") as f:
        parser.feed(f.read())
    return parser


def strict_json(path):
    def no_constants(name):
        raise AssertionError(f"non-standard JSON constant {name}")

    with open(path, encoding="utf-8") as f:
        return json.load(f, parse_constant=no_constants)


def test_report_files_json_schema_and_page(tmp_path):
    result = fake_result()
    out = tmp_path / "report"
    doc = write_report(
        result,
        out,
        title="streamcal replay: test",
        source={"log": "log.csv"},
        options={"calibrators": ["isotonic", "platt"], "every": 50},
    )
    # one self-contained page: the figures are inline SVG, no other file
    assert set(os.listdir(out)) == {"summary.json", "index.html"}
    expected_ids = {
        "over_time_brier",
        "over_time_log_loss",
        "over_time_ece",
        "over_time_corp",
        "reliability_binned",
        "reliability_corp",
    }

    # the JSON: strict, as returned, with the documented keys
    data = strict_json(out / "summary.json")
    assert data == doc
    assert set(data) == {
        "format", "title", "created", "streamcal_version", "source", "options", "n_events",
        "n_learnt", "n_skipped", "n_errors", "errors", "columns", "bigger_is_better", "best",
        "summary", "series", "images", "notes", "task", "time_range", "column_table",
    }  # fmt: skip
    assert data["task"] == "binary" and data["time_range"] is None
    assert data["format"] == FORMAT
    assert (
        data["n_events"],
        data["n_learnt"],
        data["n_skipped"],
        data["n_errors"],
    ) == (300, 300, 0, 0)
    assert data["columns"] == [
        "brier",
        "log_loss",
        "ece",
        "corp",
        "corp.mcb",
        "corp.dsc",
        "corp.unc",
    ]
    assert data["bigger_is_better"]["corp.dsc"] is True
    assert data["bigger_is_better"]["corp.unc"] is None
    # the column table, saved as the result's: Column(**d) builds each back
    assert [Column(**d) for d in data["column_table"]] == list(result.columns)
    assert data["summary"] == result.summary  # floats round-trip exactly
    assert data["series"]["isotonic"]["brier"] == [
        list(p) for p in result.series["isotonic"]["brier"]
    ]
    assert data["series"]["t"] == list(range(50, 301, 50))
    assert data["source"]["log"] == "log.csv"
    assert data["options"] == {"calibrators": ["isotonic", "platt"], "every": 50}
    assert data["notes"] == []
    for column, best in data["best"].items():
        values = [result.summary[r][column] for r in result.summary]
        target = max(values) if data["bigger_is_better"][column] else min(values)
        assert best == [
            r for r in result.summary if result.summary[r][column] == target
        ]
    assert "corp.unc" not in data["best"]
    assert {i["id"] for i in data["images"]["over_time"]} | {
        i["id"] for i in data["images"]["reliability"]
    } == expected_ids

    # the page: the table, the best cells marked, every image linked and present
    page = parse_page(out / "index.html")
    assert page.scripts == 0
    header, *body = page.rows
    assert [c["text"].rstrip(" \u2193\u2191") for c in header[1:]] == data["columns"]
    assert [row[0]["text"] for row in body] == ["raw", "isotonic", "platt"]
    for row in body:
        for column, cell in zip(data["columns"], row[1:]):
            value = result.summary[row[0]["text"]][column]
            assert cell["text"].startswith(format_number(value))
            is_best = row[0]["text"] in data["best"].get(column, ())
            assert ("best" in cell["class"]) == is_best
            assert ("\u2605" in cell["text"]) == is_best
    assert page.images == []
    html = (out / "index.html").read_text(encoding="utf-8")
    figs = svgr.figures(html)
    assert set(figs) == expected_ids
    assert all(len(figs[f"over_time_{k}"]) == 1 for k in ("brier", "log_loss", "ece", "corp"))
    # one panel per calibrator, each with its name as accessible label
    for kind in ("binned", "corp"):
        labels = [svg.get("aria-label") for svg in figs[f"reliability_{kind}"]]
        assert [label.split(":")[0] for label in labels] == ["raw", "isotonic", "platt"]
    assert "summary.json" in page.links
    text = " ".join(page.text)
    assert "300 events replayed" in text
    # without the result's time_range only the sampled times are known, and the
    # header says which events they are (issue 12: not "the first event time")
    assert (
        "Event times sampled from 2013-01-01T00:00:50 (event 50) to "
        "2013-01-01T00:00:300 (event 300)" in text
    )
    assert "lower is better" in text


def test_nan_values_are_null_in_json_and_a_dash_on_the_page(tmp_path):
    result = fake_result(n=100, metric_classes=(Brier,))
    result.summary["platt"]["brier"] = float("nan")
    result.summary["raw"]["roc_auc"] = float("inf")
    doc = write_report(result, tmp_path, plots=False)
    data = strict_json(tmp_path / "summary.json")
    assert data["summary"]["platt"]["brier"] is None
    assert data["summary"]["raw"]["roc_auc"] is None
    assert doc["best"]["brier"] in (["raw"], ["isotonic"])
    rows = parse_page(tmp_path / "index.html").rows
    platt = next(r for r in rows if r[0]["text"] == "platt")
    assert platt[1]["text"] == "-"


def test_figures_without_matplotlib(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` fails
    doc = write_report(fake_result(n=100), tmp_path)
    assert sorted(os.listdir(tmp_path)) == ["index.html", "summary.json"]
    assert len(doc["images"]["over_time"]) == 4 and len(doc["images"]["reliability"]) == 2
    assert doc["notes"] == []
    figs = svgr.figures((tmp_path / "index.html").read_text(encoding="utf-8"))
    assert len(figs["reliability_corp"]) == 3
    assert len(parse_page(tmp_path / "index.html").rows) == 4  # the table


def test_a_report_does_not_import_matplotlib(tmp_path):
    # the figures are drawn without it: a report costs no matplotlib import (issue 12,
    # target 1: the import alone was 0.7 s of a 10^6-row replay)
    code = f"""
import sys
sys.path.insert(0, {os.getcwd()!r})
from tests.test_report import fake_result
from streamcal.report import write_report
doc = write_report(fake_result(n=120), {str(tmp_path)!r})
assert len(doc["images"]["reliability"]) == 2, doc["images"]
print(sorted(m for m in sys.modules if m.split(".")[0] == "matplotlib"))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_no_reliability_metric_gives_a_note_not_a_failure(tmp_path):
    doc = write_report(fake_result(n=100, metric_classes=(Brier, LogLoss)), tmp_path)
    assert doc["images"]["reliability"] == []
    assert [i["id"] for i in doc["images"]["over_time"]] == [
        "over_time_brier",
        "over_time_log_loss",
    ]
    assert any("ece or corp" in note for note in doc["notes"])


def test_malformed_rows_are_listed_and_capped(tmp_path):
    result = fake_result(n=100, metric_classes=(Brier,))
    result.errors = [(i + 2, f"bad score {i!r}") for i in range(1500)]
    result.n_skipped = 1500
    doc = write_report(result, tmp_path, plots=False)
    assert doc["n_errors"] == 1500 and len(doc["errors"]) == 1000
    assert doc["errors"][0] == [2, "bad score 0"]
    text = " ".join(parse_page(tmp_path / "index.html").text)
    assert "1,500 malformed rows skipped" in text
    assert "line 2: bad score 0" in text
    assert "and 1,450 more" in text
    # the section: its heading, its note, then the list (report._section)
    html = (tmp_path / "index.html").read_text(encoding="utf-8")
    note = '<p class="note">1,500 rows were skipped (line number: reason).</p>'
    assert html.index("<h2>Malformed rows</h2>") < html.index(note) < html.index("line 2: bad score 0")


def test_names_are_escaped(tmp_path):
    result = fake_result(n=50, metric_classes=(Brier,))
    result.summary = {"<b>x</b>": {"brier": 0.1}, "raw": {"brier": 0.2}}
    result.series = {}
    write_report(result, tmp_path, title="a & b <script>", plots=False)
    html = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html
    assert "<script>" not in html and "a &amp; b" in html
    # in the figures too: the keys, the curves' names and the panels' titles
    result = fake_result(n=60, metric_classes=(Brier, ECE))
    for table in (result.summary, result.series, result.metrics):
        table["<i>p</i>"] = table.pop("platt")
    doc = write_report(result, tmp_path / "figs")
    html = (tmp_path / "figs" / "index.html").read_text(encoding="utf-8")
    assert len(doc["images"]["over_time"]) == 2 and len(doc["images"]["reliability"]) == 1
    assert "<i>" not in html and html.count("&lt;i&gt;p&lt;/i&gt;") >= 5


def test_summary_table_directions_ties_and_missing_values():
    summary = {
        "raw": {"brier": 0.2, "roc_auc": 0.7, "corp.unc": 0.25, "corp.dsc": 0.1},
        "a": {"brier": 0.1, "roc_auc": 0.7, "corp.unc": 0.25, "corp.dsc": 0.2},
        "b": {
            "brier": float("nan"),
            "roc_auc": 0.6,
            "corp.unc": 0.25,
            "corp.dsc": 0.2,
            "ece": 0.1,
        },
    }
    table = [
        *catalogue_columns("brier", Brier),
        *catalogue_columns("roc_auc", ROCAUC),
        *catalogue_columns("corp", CORP),
        *catalogue_columns("ece", ECE),
    ]
    rows, columns, best = summary_table(summary, table)
    assert rows == ["raw", "a", "b"]
    # the table's order, only the columns holding values
    assert [c.key for c in columns] == ["brier", "roc_auc", "corp.dsc", "corp.unc", "ece"]
    assert best == {"brier": ["a"], "roc_auc": ["raw", "a"], "corp.dsc": ["a", "b"]}
    # a column with a single value ranks nothing
    assert "ece" not in best
    # the directions are the table's, not parsed from the keys: a column named like
    # a metric but whose table entry says larger is better is ranked that way
    flipped = [dataclasses.replace(c, bigger_is_better=True) if c.key == "brier" else c for c in table]
    assert summary_table(summary, flipped)[2]["brier"] == ["raw"]
    # a key the table does not know is shown, unranked, after the known ones
    rows, columns, best = summary_table({"a": {"mine": 1.0, "brier": 0.1}, "b": {"mine": 2.0, "brier": 0.2}}, table)
    assert [(c.key, c.bigger_is_better) for c in columns] == [("brier", False), ("mine", None)]
    assert best == {"brier": ["a"]}


def test_format_number():
    assert format_number(0.123456) == "0.1235"
    assert format_number(1e-5) == "1.00e-05"
    assert format_number(float("nan")) == "-"
    assert format_number(None) == "-"
    assert format_number(3) == "3.0000"
    assert not math.isnan(0.0) and format_number(0.0) == "0.0000"


# ---------------------------------------------------------------------- issue 12's defects


def _replay_with_times(n=400, every=50, metrics=("brier", "ece", "corp"), names=None):
    from streamcal import replay

    rng = np.random.default_rng(4)
    p = rng.uniform(0.05, 0.95, n)
    y = (rng.uniform(size=n) < p).astype(int)
    rows = [
        {"t": f"2021-03-{1 + i // 24:02d}T{i % 24:02d}:00:00+01:00", "score": float(s), "label": int(v)}
        for i, (s, v) in enumerate(zip(p, y))
    ]  # fmt: skip
    names = names or ["isotonic", "platt"]
    cals = {k: (OnlineIsotonic() if i % 2 == 0 else OnlinePlatt()) for i, k in enumerate(names)}
    return rows, replay(rows, cals, list(metrics), time="t", every=every)


def test_header_gives_the_first_event_time_not_the_first_sample(tmp_path):
    rows, result = _replay_with_times()
    write_report(result, tmp_path, options={"time": "t"}, plots=False)
    text = " ".join(parse_page(tmp_path / "index.html").text)
    assert (
        f"Event times: {rows[0]['t']} (first event) to {rows[-1]['t']} (last event)" in text
    )
    assert "sampled" not in text and rows[49]["t"] not in text


def _figs(out):
    return svgr.figures((out / "index.html").read_text(encoding="utf-8"))


def _close(a, b, span):
    """Equal up to the drawing's rounding (0.01 px on a frame of >= 180 px)."""
    return np.allclose(a, b, rtol=0, atol=1e-4 * span)


def test_over_time_figures_draw_the_series_numbers(tmp_path):
    result = fake_result(n=300, every=25)
    write_report(result, tmp_path)
    figs = _figs(tmp_path)
    for key in ("brier", "log_loss", "ece", "corp"):
        (svg,) = figs[f"over_time_{key}"]
        to_x, (to_y,) = svgr.axes(svg)
        drawn = svgr.curves(svg, to_x, to_y)
        assert set(drawn) == {"raw", "isotonic", "platt"}
        for name, (xs, ys) in drawn.items():
            t, v = map(list, zip(*result.series[name][key]))
            assert _close(xs, t, 300) and _close(ys, v, max(v) - min(v))
        # the vertical range is fitted to the last 90% of the replay, with a margin
        late = [v for n in drawn for t, v in result.series[n][key] if t >= 25 + 0.1 * 275]
        bottom, top = to_y(float(svg.find(f"{svgr.NS}rect").get("y")) + float(svg.find(f"{svgr.NS}rect").get("height"))), to_y(float(svg.find(f"{svgr.NS}rect").get("y")))
        assert bottom < min(late) and max(late) < top
        title = [t.text for t in svg.iter(f"{svgr.NS}text") if t.get("font-weight") == "600"]
        assert title == [f"{key} (lower is better)"]


def test_over_time_plots_have_the_event_time_fixed_colours_and_a_key_that_wraps(tmp_path):
    import datetime

    from streamcal.plot import calibrator_color

    names = ["isotonic", "platt", "a-rather-long-calibrator-name", "venn_abers", "beta", "tops"]
    rows, result = _replay_with_times(names=names)
    write_report(result, tmp_path, options={"time": "t"})
    (svg,) = _figs(tmp_path)["over_time_brier"]
    texts = [t.text for t in svg.iter(f"{svgr.NS}text")]
    assert "event time (t) (UTC)" in texts
    to_x, (to_y,) = svgr.axes(svg)
    # the first sample: the 50th event, in UTC, as seconds since 1970
    first = datetime.datetime.fromisoformat(rows[49]["t"]).astimezone(datetime.timezone.utc)
    assert first.replace(tzinfo=None) == datetime.datetime(2021, 3, 3, 0, 0)
    drawn = svgr.curves(svg, to_x, to_y)
    last = datetime.datetime.fromisoformat(rows[399]["t"]).timestamp()
    assert _close(drawn["isotonic"][0][0], first.timestamp(), last - first.timestamp())
    assert _close(drawn["isotonic"][0][-1], last, last - first.timestamp())
    # the tick labels are the dates at their positions
    for t in svg.iter(f"{svgr.NS}text"):
        if t.get("class") == "xtick":
            day = datetime.datetime.fromtimestamp(float(t.get("data-v")), datetime.timezone.utc)
            assert t.text == day.strftime("%Y-%m-%d")
    # the colour of a calibrator is fixed by its name, in every report
    for el in svg.iter(f"{svgr.NS}polyline"):
        if el.get("data-name"):
            assert el.get("stroke") == calibrator_color(el.get("data-name"))
    # the key is an HTML list (it wraps on a narrow page): every name, in its colour
    html = (tmp_path / "index.html").read_text(encoding="utf-8")
    key = html[html.index("<h2>Metrics over time</h2>"):html.index('<div class="grid">')]
    for name in ["raw", *names]:
        assert f'stroke="{calibrator_color(name)}"' in key and f"</svg>{name}</li>" in key
    # without a time column: the events replayed
    result.series.pop("time")
    write_report(result, tmp_path / "b")
    (svg,) = _figs(tmp_path / "b")["over_time_brier"]
    assert "events replayed" in [t.text for t in svg.iter(f"{svgr.NS}text")]


def test_a_time_column_out_of_order_leaves_the_plots_on_the_events_replayed(tmp_path):
    """An outside check: a log whose time column is shuffled was drawn against its
    times, every line running back and forth across the axis. The plots now use the
    events replayed, and the page says why."""
    from streamcal import replay

    rows, _ = _replay_with_times()
    shuffled = [dict(r, t=rows[(i * 37) % len(rows)]["t"]) for i, r in enumerate(rows)]
    result = replay(shuffled, {"platt": OnlinePlatt()}, ["brier"], time="t", every=50)
    write_report(result, tmp_path, options={"time": "t"})
    (svg,) = _figs(tmp_path)["over_time_brier"]
    assert "events replayed" in [t.text for t in svg.iter(f"{svgr.NS}text")]
    text = " ".join(parse_page(tmp_path / "index.html").text)
    assert "The time column 't' is not in order in the log" in text
    write_report(replay(rows, {"platt": OnlinePlatt()}, ["brier"], time="t", every=50),
                 tmp_path / "sorted", options={"time": "t"})
    assert "not in order" not in " ".join(parse_page(tmp_path / "sorted" / "index.html").text)


def test_corp_diagram_of_a_replay_draws_the_metrics_curve_and_band(tmp_path):
    from streamcal.metrics import consistency_band

    _, result = _replay_with_times(metrics=("corp",))
    doc = write_report(result, tmp_path)
    assert [i["kind"] for i in doc["images"]["reliability"]] == ["corp"]
    panels = _figs(tmp_path)["reliability_corp"]
    assert len(panels) == 3  # raw, isotonic, platt
    for name, svg in zip(["raw", "isotonic", "platt"], panels):
        metric = result.metrics[name]["corp"]
        to_x, (to_y, _) = svgr.axes(svg)
        ((xs, ys),) = svgr.curves(svg, to_x, to_y).values()
        blocks = metric.recalibration
        assert _close(xs, [v for b in blocks for v in (b.score_min, b.score_max)], 1)
        assert _close(ys, [b.value for b in blocks for _ in (0, 1)], 1)
        # the band: resampled from the metric's cells (its distinct forecasts) with
        # the report's seed
        cells = metric.to_dict()["state"]["blocks"]
        band = consistency_band(
            [x for b in cells for x in b[0]], "corp", weights=[w for b in cells for w in b[1]],
            counts=[n for b in cells for n in b[3]], seed=0,
        )  # fmt: skip
        bx, lower, upper = svgr.band_polygon(svg, to_x, to_y)
        assert _close(bx, band.x, 1) and _close(lower, band.lower, 1) and _close(upper, band.upper, 1)


def test_binned_diagram_of_a_replay_draws_the_ece_bins(tmp_path):
    result = fake_result(n=300)
    write_report(result, tmp_path)
    panels = _figs(tmp_path)["reliability_binned"]
    for name, svg in zip(["raw", "isotonic", "platt"], panels):
        bins = [b for b in result.metrics[name]["ece"].bins if b.weight > 0]
        to_x, (to_y, to_h) = svgr.axes(svg)
        drawn = svgr.dots(svg, to_x, to_y)
        assert _close([d[0] for d in drawn], [b.mean_prediction for b in bins], 1)
        assert _close([d[1] for d in drawn], [b.mean_outcome for b in bins], 1)
        # a heavier bin has a larger marker
        order = np.argsort([b.weight for b in bins], kind="stable")
        assert np.all(np.diff(np.array([d[2] for d in drawn])[order]) >= -1e-9)
        # the histogram: each bin's share of the weight, over the bin
        total = sum(b.weight for b in bins)
        bars = svgr.rects(svg, "hist", to_x, to_h)
        assert _close([r[0] for r in bars], [b.lower for b in bins], 1)
        assert _close([r[1] for r in bars], [b.upper for b in bins], 1)
        assert _close([r[3] for r in bars], [b.weight / total for b in bins], 1)


def test_multiclass_report_names_its_views_and_suggests_only_metrics_that_apply(tmp_path):
    from streamcal import replay
    from streamcal.metrics.catalogue import metric_info

    rng = np.random.default_rng(2)
    records = []
    for i in range(150):
        w = rng.uniform(size=3) ** 2
        p = w / w.sum()
        records.append({"a": p[0], "b": p[1], "c": p[2], "y": "abc"[rng.choice(3, p=p)]})
    kw = {"score": ["a", "b", "c"], "label": "y"}
    from streamcal import TemperatureScaling

    result = replay(records, {"temperature": TemperatureScaling()}, ["brier", "ece", "tece"], **kw)
    doc = write_report(result, tmp_path / "a", options={"score": "a,b,c"})
    assert doc["task"] == "multiclass"
    text = " ".join(parse_page(tmp_path / "a" / "index.html").text)
    assert "the ece column and the binned diagrams show the top-class (confidence) view" in text
    for name in ("brier", "ece", "tece"):  # each described as the catalogue describes it
        assert metric_info(name, "multiclass").description in text
    assert "top-class view" in doc["images"]["reliability"][0]["caption"]
    # the multiclass columns rank (issue 12: never marked best)
    assert set(doc["best"]) == {"brier", "ece", "tece"}
    assert doc["bigger_is_better"] == {"brier": False, "ece": False, "tece": False}
    # without ece, no diagram: the note suggests ece only (corp is binary only)
    result = replay(records, {}, ["brier", "tece"], **kw)
    doc = write_report(result, tmp_path / "b")
    (note,) = doc["notes"]
    assert "add the metric ece to the replay" in note and "corp" not in note
    # a binary replay may add either
    doc = write_report(fake_result(n=60, metric_classes=(Brier,)), tmp_path / "c")
    assert "add the metric ece or corp to the replay" in doc["notes"][0]


def test_the_page_reads_the_column_table(tmp_path):
    # windows, directions and descriptions come from the result's column table; the
    # page needs neither the replay's options nor the keys' spelling
    from streamcal import replay
    from streamcal.metrics import ECE as ECEMetric

    rows, _ = _replay_with_times(n=200)
    result = replay(rows, {"isotonic": OnlineIsotonic()}, {"binned": ECEMetric(n_bins=5), "corp": "corp"}, window=60)
    doc = write_report(result, tmp_path, plots=False)
    page = parse_page(tmp_path / "index.html")
    text = " ".join(page.text)
    assert "Over all events" in text and "Over the last 60 events" in text
    # the user's name "binned" is described as the ECE it is
    assert f"binned: {ECEMetric.description}" in "".join(page.text)
    header = [c["text"] for c in page.rows[0]]
    assert header[1:] == ["binned \u2193", "corp \u2193", "corp.mcb \u2193", "corp.dsc \u2191", "corp.unc"]
    assert doc["bigger_is_better"]["binned@window"] is False
    assert [d["window"] for d in doc["column_table"]] == [None] * 5 + [60] * 5


def test_tick_labels_and_long_axis_titles_stay_inside_the_figure(tmp_path):
    """An outside check (Chromium at 1280 px): the last x tick label ("3,000") was
    centred on the frame's right edge, 14 px from the figure's, and cut in half; the
    rotated title "calibration_refinement.calibration, over all events so far" was
    longer than the figure is high. Text is measured at 0.6 em per character."""
    from streamcal import replay
    from streamcal._svg import text_width

    rng = np.random.default_rng(2)
    rows = [{"score": float(s), "label": int(rng.random() < s)} for s in rng.random(3000)]
    result = replay(rows, {"platt": OnlinePlatt()}, ["calibration_refinement"], every=20)
    write_report(result, tmp_path)
    figs = _figs(tmp_path)
    assert "over_time_calibration_refinement.calibration" in figs
    for uid, svgs in figs.items():
        if not uid.startswith("over_time"):
            continue
        (svg,) = svgs
        width, height = (float(v) for v in svg.get("viewBox").split()[2:])
        for t in svg.iter(f"{svgr.NS}text"):
            size, x, w = float(t.get("font-size")), float(t.get("x")), 0.0
            w = text_width(t.text, size)
            if t.get("transform"):  # rotated: its length runs along the height
                assert w <= height, (uid, t.text)
                continue
            anchor = t.get("text-anchor")
            left = x - (w / 2 if anchor == "middle" else w if anchor == "end" else 0.0)
            assert 0.0 <= left and left + w <= width, (uid, t.text, anchor)
