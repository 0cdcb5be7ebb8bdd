"""The helpers the simulation scripts share (``simulations/_common.py``): their
prequential runs go through :func:`streamcal.replay` and must give exactly the forecasts
of the hand-written loop they replaced (predict each event with the state before it,
then learn it), also with labels revealed late; the trailing mean must be the mean of
the last ``window`` values."""

from __future__ import annotations

import pathlib
import re
import sys

import numpy as np
import pytest

from streamcal import (
    HedgingCalibeater,
    HistogramBinning,
    OnlineIsotonic,
    OnlinePlatt,
    TrackingCalibeater,
)
from tests.simulation_scripts import SIMULATIONS, load

common = load("_common")


def loop(calibrator, scores, labels, reveal=None):
    """The per-event prequential loop the scripts used to write by hand; ``reveal[i]``:
    how many labels are known when event ``i`` is predicted (default ``i``)."""
    out, j = [], 0
    for i, s in enumerate(scores):
        known = i if reveal is None else reveal[i]
        while j < known:
            calibrator.learn_one(scores[j], labels[j])
            j += 1
        out.append(calibrator.predict_one(s))
        if reveal is None:
            calibrator.learn_one(s, labels[i])
            j += 1
    return np.array(out)


def factories():
    return {
        "isotonic": OnlineIsotonic,
        "histogram": HistogramBinning,
        "platt": OnlinePlatt,
        "tracking": lambda: TrackingCalibeater(n_bins=10),
        "hedging": lambda: HedgingCalibeater(n_bins=10, seed=3),
        "tops": lambda: TrackingCalibeater(base=OnlinePlatt()),
    }


def stream(n, seed):
    rng = np.random.default_rng(seed)
    scores = rng.beta(2, 5, n)
    scores[::7] = np.round(scores[::7], 1)  # ties
    labels = (rng.random(n) < np.sqrt(scores)).astype(int)
    return scores, labels


@pytest.mark.parametrize("seed", [0, 1])
def test_prequential_is_the_per_event_loop(seed):
    scores, labels = stream(700, seed)
    expected = {
        name: loop(make(), scores.tolist(), labels.tolist())
        for name, make in factories().items()
    }
    cals = {name: make() for name, make in factories().items()}
    got = common.prequential({"raw": None, **cals}, scores, labels)
    assert list(got) == ["raw", *factories()]
    np.testing.assert_array_equal(got["raw"], scores)
    for name in factories():
        np.testing.assert_array_equal(got[name], expected[name])
    # the calibrators given learnt in place, every event
    assert cals["isotonic"].predict_one(0.3) == loop(
        OnlineIsotonic(), [*scores.tolist(), 0.3], [*labels.tolist(), 0]
    )[-1]


def test_prequential_with_delayed_labels_is_the_loop_with_reveals():
    """Labels known at their label time, in the order of the events (priors.py's
    bundled log): the forecasts come back in the order of the events."""
    pd = pytest.importorskip("pandas")
    scores, labels = stream(300, 2)
    time = np.arange(300)
    label_time = time + np.random.default_rng(5).integers(0, 4, 300)
    label_time = np.maximum.accumulate(label_time)  # revealed in event order
    # event i sees the labels whose time has come, never its own
    reveal = np.minimum(np.searchsorted(label_time, time, side="right"), time)
    events = pd.DataFrame(
        {"time": time, "label_time": label_time, "score": scores, "label": labels}
    )
    for name, make in factories().items():
        got = common.prequential(
            {name: make()}, events, None, time="time", label_time="label_time"
        )[name]
        expected = loop(make(), scores.tolist(), labels.tolist(), reveal)
        np.testing.assert_array_equal(got, expected, err_msg=name)
    assert not np.array_equal(reveal, time)  # some labels were late


def multiclass_stream(n, k, seed):
    """Over-confident probability vectors (a sharpened Dirichlet draw) with labels from
    the unsharpened one; rows on a grid of 0.05 (ties) and some exact zeros."""
    rng = np.random.default_rng(seed)
    q = rng.dirichlet(np.full(k, 0.8), size=n)
    labels = np.array([rng.choice(k, p=row) for row in q])
    sharp = q**2.5
    sharp /= sharp.sum(axis=1, keepdims=True)
    sharp[::5] = np.round(sharp[::5] * 20) / 20
    sharp[::5, -1] = np.maximum(0.0, 1.0 - sharp[::5, :-1].sum(axis=1))
    sharp /= sharp.sum(axis=1, keepdims=True)  # rows sum to 1 (the replay's tolerance)
    return sharp, labels


def multiclass_factories():
    from streamcal.registry import make_multiclass_calibrator

    specs = ("temperature:refit_every=50", "fir:refit_every=50", "class_wise", "top_label")
    return {spec: (lambda spec=spec: make_multiclass_calibrator(spec)) for spec in specs}


@pytest.mark.parametrize("k", [3, 4])
def test_multiclass_prequential_is_the_per_event_loop(k):
    """(n, K) scores: each calibrator gets ``{k: p_k}`` dicts through the replay and
    its forecasts come back as (n, K) arrays, those of the per-event loop."""
    scores, labels = multiclass_stream(400, k, seed=k)
    rows = [dict(enumerate(row)) for row in scores.tolist()]
    cals = {name: make() for name, make in multiclass_factories().items()}
    got = common.prequential({"raw": None, **cals}, scores, labels)
    np.testing.assert_array_equal(got["raw"], scores)
    for name, make in multiclass_factories().items():
        expected = loop(make(), rows, labels.tolist())
        expected = np.array([[q.get(c, 0.0) for c in range(k)] for q in expected])
        assert got[name].shape == (400, k)
        np.testing.assert_array_equal(got[name], expected, err_msg=name)
        assert not np.allclose(got[name], scores), name  # the calibrator did something


def test_prequential_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="differ in length"):
        common.prequential({"iso": OnlineIsotonic()}, [0.1, 0.2], [1])


@pytest.mark.parametrize("window", [1, 3, 50])
def test_trailing_mean_is_the_mean_of_the_last_values(window):
    x = np.random.default_rng(0).random(40)
    expected = [x[max(0, i + 1 - window) : i + 1].mean() for i in range(len(x))]
    np.testing.assert_allclose(common.trailing_mean(x, window), expected, rtol=1e-12)


def test_write_table_prints_and_writes(tmp_path, capsys):
    path = common.write_table("# T\n\n| a |\n", str(tmp_path / "new"), "name")
    assert pathlib.Path(path).read_text() == "# T\n\n| a |\n"
    assert "# T" in capsys.readouterr().out


def test_no_script_hand_rolls_what_common_holds():
    """One home: no script redefines the trailing mean, and the scripts whose loop is a
    replay call the shared prequential run rather than a loop of their own."""
    for path in SIMULATIONS.glob("*.py"):
        if path.name != "_common.py":
            assert "def trailing_mean" not in path.read_text(), path.name
    replayed = (
        "bank_marketing_ops",
        "multiclass_compare",
        "priors",
        "rain_calibeating",
        "rain_drift",
        "real_rain",
        "reliability_diagrams",
    )
    loop_shape = re.compile(r"\.predict_one\([^)]*\)[^\n]*\n[^\n]*\.learn_one\(")
    for name in replayed:
        text = (SIMULATIONS / f"{name}.py").read_text()
        assert "_common.prequential(" in text, name
        assert not loop_shape.search(text), name
    # rain_forgetting runs its variants through rain_drift's run
    text = (SIMULATIONS / "rain_forgetting.py").read_text()
    assert "drift.run(" in text and not loop_shape.search(text)


def test_scripts_find_common_when_loaded_by_path(monkeypatch):
    """A script loaded by its path (as the tests load them) imports _common without
    simulations/ being on sys.path beforehand."""
    monkeypatch.setattr(sys, "path", [p for p in sys.path if "simulations" not in p])
    monkeypatch.delitem(sys.modules, "_common", raising=False)
    module = load("rain_drift")
    assert module._common.prequential.__name__ == "prequential"
