"""The metric catalogue (streamcal.metrics.catalogue): one home for the names,
descriptions and directions of the metrics, read from the metric classes (issue 12,
part 3: ``registry.bigger_is_better("tece")`` was None and the names lived in four
tables)."""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
import random

import pytest

from streamcal import metrics as M
from streamcal import registry, replay
from streamcal.metrics import catalogue
from streamcal.metrics.catalogue import (
    WINDOW_SUFFIX,
    Column,
    MetricInfo,
    column_key,
    columns,
    metric_info,
    metric_key,
    metric_names,
    metric_table,
    metric_values,
)
from streamcal.replay._metrics import _columns, _resolve_metrics, _values

# The catalogue as the issue states it, written out by hand: name -> class, direction,
# components and their directions.
EXPECTED = {
    "binary": {
        "brier": (M.Brier, False, ()),
        "log_loss": (M.LogLoss, False, ()),
        "ece": (M.ECE, False, ()),
        "sharpness": (M.Sharpness, True, ()),
        "roc_auc": (M.ROCAUC, True, ()),
        "calibration_refinement": (
            M.CalibrationRefinement,
            False,
            (("calibration", False), ("refinement", False)),
        ),
        "murphy": (
            M.MurphyDecomposition,
            False,
            (
                ("reliability", False),
                ("resolution", True),
                ("uncertainty", None),
                ("within_bin_variance", None),
                ("within_bin_covariance", None),
            ),
        ),
        "corp": (M.CORP, False, (("mcb", False), ("dsc", True), ("unc", None))),
    },
    "multiclass": {
        "brier": (M.MulticlassBrier, False, ()),
        "log_loss": (M.CrossEntropy, False, ()),
        "ece": (M.ConfidenceECE, False, ()),
        "top_label_ece": (M.TopLabelECE, False, ()),
        "classwise_ece": (M.ClasswiseECE, False, ()),
        "tece": (M.TECE, False, ()),
    },
}

ENTRIES = [(task, name) for task, table in EXPECTED.items() for name in table]


def binary_stream(n, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        p = rng.choice([0.0, 1.0, round(rng.random(), 2), rng.random()])
        out.append((1 if rng.random() < 0.3 + 0.4 * p else 0, p))
    return out


def multiclass_stream(n, seed, classes=("a", "b", "c")):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        w = [rng.random() ** 2 for _ in classes]
        total = sum(w)
        out.append((rng.choice(classes), {c: x / total for c, x in zip(classes, w)}))
    return out


def fed(cls, params=None, n=60, seed=0):
    m = cls(**(params or {}))
    stream = binary_stream if cls.task == "binary" else multiclass_stream
    for y, p in stream(n, seed):
        m.update(y, p)
    return m


# ---------------------------------------------------------------------- the entries


def test_names_in_display_order_and_the_registry_derives_from_them():
    for task, table in EXPECTED.items():
        assert metric_names(task) == tuple(table)
    assert registry.METRIC_NAMES == metric_names("binary")
    assert registry.MULTICLASS_METRIC_NAMES == metric_names("multiclass")
    assert set(registry.DEFAULT_METRICS) <= set(metric_names("binary"))
    assert set(registry.DEFAULT_METRICS) <= set(metric_names("multiclass"))
    assert list(metric_table("multiclass")) == [
        "brier",
        "log_loss",
        "ece",
        "confidence_ece",
        "top_label_ece",
        "classwise_ece",
        "tece",
    ]
    assert metric_table("multiclass")["confidence_ece"] is metric_info("ece", "multiclass")


@pytest.mark.parametrize("task, name", ENTRIES)
def test_entry_is_read_from_the_class_and_agrees_with_the_instance(task, name):
    cls, bigger, components = EXPECTED[task][name]
    info = metric_info(name, task)
    assert isinstance(info, MetricInfo)
    assert (info.name, info.task, info.cls) == (name, task, cls)
    assert info.bigger_is_better is bigger
    assert info.components == components
    # the class attributes are the entry (one home) ...
    assert cls.short_name == name and cls.task == task
    assert cls.bigger_is_better is bigger
    assert cls.component_directions == components
    assert cls.description == info.description and cls.aliases == info.aliases
    # ... and every instance says the same, before and after events
    for params in cls._unit_test_params():
        m = cls(**params)
        assert m.bigger_is_better is bigger and m.task == task
        m = fed(cls, params)
        assert m.bigger_is_better is bigger
        for component, _ in components:
            value = getattr(m, component)
            assert isinstance(value, float) and math.isfinite(value), (component, value)
    # name, class and instance give the same entry
    assert metric_info(cls) is info and metric_info(cls()) is info
    assert metric_info(cls(), task) is info
    for alias in info.aliases:
        assert metric_info(alias, task) is info


@pytest.mark.parametrize("task, name", ENTRIES)
def test_descriptions_are_one_sentence_each(task, name):
    d = metric_info(name, task).description
    assert d and d[0].isupper() and d.endswith(".") and "  " not in d
    assert d.count(". ") == 0, d  # one sentence
    assert "[" in d or name in ("calibration_refinement", "corp"), d  # a range
    others = [
        metric_info(n, t).description for t, n in ENTRIES if (t, n) != (task, name)
    ]
    assert d not in others


def test_multiclass_descriptions_say_which_view():
    # the report described multiclass brier as binary and never said ece is the
    # confidence ECE (issue 12)
    assert "top-class view" in metric_info("ece", "multiclass").description
    assert "Confidence ECE" in metric_info("ece", "multiclass").description
    brier = metric_info("brier", "multiclass").description
    assert "[0, 2]" in brier and "sum" in brier.lower()
    assert "[0, 1]" in metric_info("brier", "binary").description
    for name in ("classwise_ece", "tece"):
        assert "every class's view" in metric_info(name, "multiclass").description


def test_multiclass_brier_range_is_the_described_one():
    m = M.MulticlassBrier()
    m.update("a", {"a": 0.0, "b": 1.0})  # the worst forecast
    assert m.get() == 2.0
    b = M.Brier()
    b.update(1, 0.0)
    assert b.get() == 1.0


# ---------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "args, pieces",
    [
        (("brir", "binary"), ["Unknown binary metric 'brir'", "brier, log_loss, ece"]),
        (("tec", "multiclass"), ["Unknown multiclass metric 'tec'", "top_label_ece"]),
        (
            ("nonsense",),
            ["Unknown metric 'nonsense'", "Binary metrics", "multiclass metrics"],
        ),
        (
            ("sharpness", "multiclass"),
            ["'sharpness' is binary only", "Multiclass metrics: brier, log_loss, ece"],
        ),
        (
            ("tece", "binary"),
            ["'tece' is multiclass only", "Binary metrics: brier", "corp"],
        ),
        (("ece",), ["both a binary and a multiclass metric", "task="]),
        (("ece", "both"), ["'task' argument of metric_info", "'binary'", "'both'"]),
        ((M.TECE, "binary"), ["'tece' (TECE) is multiclass only"]),
        ((M.CORP(), "multiclass"), ["'corp' (CORP) is binary only"]),
    ],
)
def test_metric_info_errors(args, pieces):
    with pytest.raises(ValueError) as info:
        metric_info(*args)
    for piece in pieces:
        assert piece in str(info.value)


def test_metric_info_outside_the_catalogue():
    class MyBrier(M.Brier):
        pass

    with pytest.raises(ValueError, match="MyBrier is not in the metric catalogue"):
        metric_info(MyBrier())
    with pytest.raises(TypeError, match="must be a metric name, a metric class"):
        metric_info(3)
    with pytest.raises(TypeError, match="must be a metric name"):
        metric_info(int)
    with pytest.raises(ValueError, match="'task' argument of metric_names"):
        metric_names("Binary")
    # a spec's parameters are ignored, case and spaces too
    assert metric_info(" ECE:n_bins=15", "binary").cls is M.ECE


# ---------------------------------------------------------------------- keys


def all_parameter_sets():
    for task, name in ENTRIES:
        cls = EXPECTED[task][name][0]
        for params in cls._unit_test_params():
            yield task, cls, params
    yield "binary", M.ECE, {"n_bins": 15, "strategy": "quantile", "window_size": 100}
    yield "binary", M.ECE, {"half_life": 50.0}
    yield "binary", M.LogLoss, {"eps": 1e-6}
    yield "multiclass", M.TECE, {"n_bins": 4, "threshold": 0.01}
    yield "multiclass", M.ConfidenceECE, {"n_bins": 3, "strategy": "uniform"}


@pytest.mark.parametrize("task, cls, params", list(all_parameter_sets()))
def test_metric_key_builds_the_metric_back(task, cls, params):
    m = cls(**params)
    key = metric_key(m)
    assert key.partition(":")[0] == cls.short_name
    assert (":" in key) == any(
        params[p] != inspect.signature(cls).parameters[p].default for p in params
    )
    back = registry.make_metric(key, task=task)
    assert type(back) is cls
    for p in inspect.signature(cls).parameters:
        assert getattr(back, p) == getattr(m, p), p
    assert metric_key(back) == key
    assert registry.canonical_spec(key, "metric") == key


def test_metric_key_examples_and_outside_the_catalogue():
    assert metric_key(M.ECE(n_bins=15)) == "ece:n_bins=15"
    assert metric_key(M.LogLoss(eps=1e-6)) == "log_loss:eps=1e-06"
    assert metric_key(M.CORP(score="log")) == "corp:score=log"
    assert metric_key(M.ConfidenceECE()) == "ece"

    class MyCORP(M.CORP):
        pass

    # a subclass may measure something else: keyed by its class name, not "corp"
    assert metric_key(MyCORP()) == "MyCORP"
    assert [c.key for c in columns("mine", MyCORP())] == [
        "mine",
        "mine.mcb",
        "mine.dsc",
        "mine.unc",
    ]
    assert columns("mine", MyCORP())[0].name is None


# ---------------------------------------------------------------------- columns


@pytest.mark.parametrize("task, name", ENTRIES)
@pytest.mark.parametrize("window", [None, 40])
def test_columns_match_the_values_and_the_directions(task, name, window):
    cls, bigger, components = EXPECTED[task][name]
    m = fed(cls)
    cols = columns(name, m, window=window)
    values = metric_values(m)
    assert list(values) == [None, *(c for c, _ in components)]
    assert values[None] == m.get()
    for component, _ in components:
        assert values[component] == getattr(m, component)
    assert [c.component for c in cols] == list(values)
    assert [c.bigger_is_better for c in cols] == [bigger, *(d for _, d in components)]
    assert all(c.metric == name and c.window == window for c in cols)
    assert all(c.name == name and c.task == task for c in cols)
    # every column carries its metric's description, the catalogue's
    assert all(c.description == metric_info(name, task).description for c in cols)
    assert [c.key for c in cols] == [
        column_key(name, c.component, window) for c in cols
    ]
    # the replay's keys are the columns' keys
    out: dict = {}
    _values(m, name, out, WINDOW_SUFFIX if window is not None else "")
    assert list(out) == [c.key for c in cols]
    assert list(out.values()) == list(values.values())
    # the class gives the same columns as an instance
    assert columns(name, cls, window=window) == cols
    # the old string API agrees with the column table, for multiclass names too
    for c in cols:
        assert registry.bigger_is_better(c.key) is c.bigger_is_better, c.key
    # JSON-safe
    for c in cols:
        d = json.loads(json.dumps(dataclasses.asdict(c)))
        assert Column(**d) == c


def test_column_keys():
    assert column_key("brier") == "brier"
    assert column_key("corp", "dsc") == "corp.dsc"
    assert column_key("ece:n_bins=15", None, 500) == "ece:n_bins=15@window"
    assert column_key("ece:n_bins=15", None, None) == "ece:n_bins=15"
    assert WINDOW_SUFFIX == "@window"
    cols = columns("ece:n_bins=15", M.ECE(n_bins=15), window=500)
    assert [(c.key, c.metric, c.name, c.window) for c in cols] == [
        ("ece:n_bins=15@window", "ece:n_bins=15", "ece", 500)
    ]


@pytest.mark.parametrize("window", [None, 40])
def test_replay_summary_keys_are_the_columns_keys(window):
    rng = random.Random(3)
    records = [{"score": rng.random(), "label": rng.random() < 0.4} for _ in range(120)]
    metrics = ["brier", "corp", "murphy", "roc_auc", M.ECE(n_bins=15)]
    result = replay(records, {}, metrics, window=window)
    table = _columns(_resolve_metrics(metrics, False), window)
    assert list(result.summary["raw"]) == [c.key for c in table]
    # the engine builds the same table into the result, one column per summary key
    assert result.columns == table
    assert list(result.series["raw"]) == [c.key for c in table]
    assert [c.key for c in table if c.window is None] == [
        c.key
        for k in metrics[:4]
        for c in columns(k, metric_info(k, "binary").cls)
    ] + ["ece:n_bins=15"]
    assert all(c.window == window for c in table[len(table) // 2 :])
    for c in table:
        assert c.key == column_key(c.metric, c.component, c.window)


def test_replay_multiclass_names_and_wrong_task():
    records = [
        {"p_a": p["a"], "p_b": p["b"], "p_c": p["c"], "y": y}
        for y, p in multiclass_stream(50, 1)
    ]
    score = {"a": "p_a", "b": "p_b", "c": "p_c"}
    result = replay(records, {}, ["tece", "confidence_ece"], score=score, label="y")
    assert list(result.summary["raw"]) == ["tece", "confidence_ece"]
    with pytest.raises(ValueError, match="Got 'corp' instead, a binary metric only"):
        replay(records, {}, ["corp"], score=score, label="y")
    with pytest.raises(ValueError, match="Got 'tece' instead, a multiclass metric only"):
        replay([{"score": 0.5, "label": 1}], {}, ["tece"])


def test_catalogue_refuses_incomplete_or_clashing_classes(monkeypatch):
    # the catalogue is built from the classes' attributes, checked when it is built
    class Nameless(M.Brier):
        short_name = None

    class Clash(M.LogLoss):
        short_name = "brier"

    assert MetricInfo.of(M.Brier) == metric_info("brier", "binary")
    for classes, message in [
        ((Nameless,), "Incomplete catalogue entry for Nameless"),
        ((M.Brier, Clash), "Two binary metrics are named 'brier'"),
        ((M.TECE,), "Incomplete catalogue entry for TECE"),  # a multiclass class
    ]:
        monkeypatch.setattr(catalogue, "_CLASSES", {"binary": classes})
        with pytest.raises(RuntimeError, match=message):
            catalogue._build()


def test_log_losses_share_one_eps_constructor():
    # LogLoss and CrossEntropy take the constructor of their clipping level from one mixin
    # (metrics/_scoring._ClippedLogScore): the parameter, its default, the clone, the
    # catalogue name and the message naming the class are each class's own, as before
    for cls in (M.LogLoss, M.CrossEntropy):
        params = inspect.signature(cls).parameters
        assert list(params) == ["eps"] and params["eps"].default == 1e-15
        m = cls(eps=0.01)
        assert m._get_params() == {"eps": 0.01} and m.clone().eps == 0.01
        assert cls.short_name == "log_loss" and cls(eps=0.01).short_name == "log_loss"
        with pytest.raises(ValueError, match=f"The 'eps' argument of {cls.__name__} must"):
            cls(eps=0.5)
