"""``from_dict`` validates a snapshot before it builds anything (issue 13, item 4): the
crafted snapshots of the outside checks, each refused with a ValueError naming the
entry; the registry keyed so that a user class never replaces a built-in one."""

import json
import time

import pytest

import streamcal
from streamcal import (
    FIR,
    HistogramBinning,
    OnlineIsotonic,
    OnlinePlatt,
    TemperatureScaling,
)
from streamcal.base import BinaryCalibrator
from streamcal.monitor import CalibrationMonitor
from streamcal.checks._common import corrupted_snapshots


def _snap(obj):
    return json.loads(json.dumps(obj.to_dict()))


def _iso(**kw):
    cal = OnlineIsotonic(**kw)
    cal.learn_many([0.1, 0.3, 0.5, 0.7, 0.9] * 4, [0, 0, 1, 1, 1] * 4)
    return cal


def test_non_monotone_isotonic_blocks_are_refused():
    d = _snap(_iso())
    blocks = d["state"]["blocks"]
    assert len(blocks) >= 2
    # swap the label sums of the lowest and highest blocks: predicts 1 at 0.1, 0 at 0.9
    lo, hi = blocks[0], blocks[-1]
    lo[2], hi[2] = [w for w in lo[1]], [0.0 for _ in hi[1]]
    lo[5], hi[5] = lo[4], 0.0
    with pytest.raises(ValueError, match="OnlineIsotonic"):
        OnlineIsotonic.from_dict(d)


def test_unsorted_isotonic_cells_are_refused():
    d = _snap(_iso())
    first = d["state"]["blocks"][0]
    first[0] = list(reversed(first[0])) if len(first[0]) > 1 else [0.95]
    with pytest.raises(ValueError):
        OnlineIsotonic.from_dict(d)


def test_nan_token_is_refused_naming_the_entry():
    text = json.dumps(_snap(_iso())).replace("0.1,", "NaN,", 1)
    d = json.loads(text)  # json.loads accepts NaN
    with pytest.raises(ValueError, match=r"must be a finite real number\. Got nan"):
        OnlineIsotonic.from_dict(d)


def test_window_longer_than_window_size_is_refused():
    d = _snap(_iso(window_size=5))
    d["params"]["window_size"] = 3
    with pytest.raises(ValueError):
        OnlineIsotonic.from_dict(d)


def test_monotone_platt_with_negative_slope_is_refused():
    cal = OnlinePlatt(monotone=True)
    cal.learn_many([0.2, 0.8] * 10, [0, 1] * 10)
    d = _snap(cal)
    d["state"]["core"][0][0] = -5.0
    with pytest.raises(ValueError, match=r"state\['core'\]\[0\]\[0\].*Got -5\.0"):
        OnlinePlatt.from_dict(d)
    d["params"]["monotone"] = False  # without the constraint the slope is allowed
    assert OnlinePlatt.from_dict(d).predict_one(0.9) < OnlinePlatt.from_dict(d).predict_one(0.1)


def test_monitor_log_wealth_far_below_its_bound_is_refused():
    m = CalibrationMonitor(lam=(0.1, 0.3, 0.5, 0.7, 0.9))
    for i in range(50):
        m.update(0.3, i % 2)
    d = _snap(m)
    d["state"]["log_wealth"] = [-1e308] * 5
    with pytest.raises(ValueError, match=r"log_wealth'\]\[0\]"):
        CalibrationMonitor.from_dict(d)


def _multiclass(cls, **kw):
    cal = cls(window_size=20, refit_every=5, **kw)
    for i in range(12):
        cal.learn_one({"a": 0.7, "b": 0.2, "c": 0.1} if i % 2 else {"a": 0.2, "b": 0.5, "c": 0.3}, "abc"[i % 3])
    return cal


@pytest.mark.parametrize("cls", [FIR, TemperatureScaling])
@pytest.mark.parametrize(
    "entry, value, match",
    [
        ((1, 0), float("nan"), "finite"),
        ((0, 0), 7, r"\[0\]\[0\].*an int in \[0, 2\]"),
        ((3,), -1.0, r"\[3\].*>= 0"),
    ],
    ids=["score NaN", "class index out of range", "negative weight"],
)
def test_refit_window_entries_are_checked(cls, entry, value, match):
    d = _snap(_multiclass(cls))
    event = d["state"]["window"][-1]
    target = event
    for k in entry[:-1]:
        target = target[k]
    target[entry[-1]] = value
    with pytest.raises(ValueError, match=match):
        cls.from_dict(d)


@pytest.mark.parametrize(
    "key, value, match",
    [
        ("beta", float("nan"), r"state\['beta'\].*finite"),
        ("beta", 1e6, r"state\['beta'\].*\[0.01, 100.0\]"),
        ("beta", "2", r"state\['beta'\]"),
        ("fit_classes", ["a", "z"], r"state\['fit_classes'\]\[1\].*a class of state\['classes'\]"),
        ("fit_classes", ["a", "a"], r"state\['fit_classes'\]\[1\].*not listed before"),
    ],
)
def test_temperature_scaling_fit_is_checked(key, value, match):
    cal = _multiclass(TemperatureScaling)
    d = _snap(cal)
    assert d["state"]["beta"] is not None  # a fit exists
    assert TemperatureScaling.from_dict(d).predict_one({"a": 0.6, "b": 0.3, "c": 0.1}) == \
        cal.predict_one({"a": 0.6, "b": 0.3, "c": 0.1})
    d["state"][key] = value
    with pytest.raises(ValueError, match=match):
        TemperatureScaling.from_dict(d)


def test_histogram_binning_huge_n_bins_raises_before_allocating():
    d = _snap(HistogramBinning(n_bins=10))
    d["params"]["n_bins"] = 10**9
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"state\['edges'\]"):
        HistogramBinning.from_dict(d)
    assert time.perf_counter() - start < 1.0  # 10**9 bins would take seconds and GBs


@pytest.mark.parametrize("fmt", [None, True, 2.0, "2", 0])
def test_format_is_required_and_an_int(fmt):
    d = _snap(_iso())
    if fmt is None:
        del d["format"]
    else:
        d["format"] = fmt
    with pytest.raises(ValueError, match="format"):
        OnlineIsotonic.from_dict(d)


def test_unknown_entries_are_refused():
    d = _snap(_iso())
    for bad in (
        {**d, "params": {**d["params"], "colour": "red"}},
        {**d, "state": {**d["state"], "colour": "red"}},
    ):
        with pytest.raises(ValueError, match="colour"):
            OnlineIsotonic.from_dict(bad)


def test_deep_nesting_is_a_value_error_not_a_recursion_error():
    d = _snap(_iso())
    deep: list = []
    for _ in range(200_000):
        deep = [deep]
    with pytest.raises(ValueError, match="nested"):
        OnlineIsotonic.from_dict({**d, "state": {**d["state"], "window": deep}})


def test_a_class_named_like_a_built_in_does_not_replace_it():
    snap = _snap(_iso())

    class OnlineIsotonic(BinaryCalibrator):  # noqa: F811 - the name is the point
        """Same name, other class. Examples: none, >>> 1"""

        def __init__(self):
            self._reset()

        def _reset(self):
            pass

        def learn_one(self, score, label, w=1.0):
            pass

        def predict_one(self, score):
            return 0.5

        def _get_state(self):
            return {}

        def _set_state(self, state):
            pass

    restored = BinaryCalibrator.from_dict(snap)
    assert type(restored) is streamcal.OnlineIsotonic
    # the user class registers under its qualified name and restores through it
    own = OnlineIsotonic().to_dict()
    assert own["class"].endswith("<locals>.OnlineIsotonic") and "." in own["class"]
    assert type(BinaryCalibrator.from_dict(own)) is OnlineIsotonic


def test_old_snapshots_with_bare_built_in_names_restore():
    d = _snap(_iso())
    assert d["class"] == "OnlineIsotonic"
    d["format"] = 1
    assert BinaryCalibrator.from_dict(d).predict_one(0.5) == _iso().predict_one(0.5)


def test_a_failing_from_dict_changes_nothing():
    cal = _iso(window_size=10)
    before = json.dumps(cal.to_dict())
    for what, d, invalid in corrupted_snapshots(_snap(cal)):
        if what == "state entry 'exactness_scale' dropped":
            # written before that entry existed: derived from the cells (weights 2:
            # 2**1), as every restore did then; the rest as written
            got = OnlineIsotonic.from_dict(d).to_dict()
            assert got["state"].pop("exactness_scale") == 1
            assert got["state"] == d["state"] and got["params"] == d["params"]
        elif what == "state entry 'residues' dropped":
            # written before that entry existed: no bounds, as every restore held then
            # (this stream's integer weights leave none anyway)
            got = OnlineIsotonic.from_dict(d).to_dict()
            assert got["state"].pop("residues") == []
            assert got["state"] == d["state"] and got["params"] == d["params"]
        elif invalid:
            with pytest.raises(ValueError):
                OnlineIsotonic.from_dict(d)
    assert json.dumps(cal.to_dict()) == before


def _fed_metric(metric, multiclass=False):
    for i in range(40):
        p = (i * 37 % 100) / 100
        if multiclass:
            metric.update("ab"[i % 2], {"a": p, "b": 1 - p})
        else:
            metric.update(i % 2, p)
    return metric


def test_windowed_ece_window_score_out_of_range_is_refused():
    # the compiled store bins a window's event as it leaves: a score of 1e300 indexed
    # outside the bins (a segmentation fault later on)
    from streamcal.metrics import ECE

    d = _snap(_fed_metric(ECE(n_bins=7, window_size=30)))
    d["state"]["window"][5][1] = 1e300
    with pytest.raises(ValueError, match=r"state\['window'\]\[5\]\[1\] of ECE must be a real number in \[0, 1\]"):
        ECE.from_dict(d)


@pytest.mark.parametrize("name", ["ConfidenceECE", "TopLabelECE", "ClasswiseECE"])
@pytest.mark.parametrize("entry", ["n", "w", "p", "y"])
def test_multiclass_ece_bin_lists_shorter_than_n_bins_are_refused(name, entry):
    import streamcal.metrics

    cls = getattr(streamcal.metrics, name)
    d = _snap(_fed_metric(cls(n_bins=5), multiclass=True))
    state = d["state"]
    for sums in [state["bins"]] if "bins" in state else [v for _, v in state["classes"]]:
        sums[entry] = sums[entry][:-1]
    with pytest.raises(ValueError, match=rf"\[{entry!r}\] of {name} must be a list of 5 bin sums"):
        cls.from_dict(d)


def _monitor(method, **kw):
    m = CalibrationMonitor(method=method, **kw)
    for i in range(60):
        m.update(0.3, i % 3 == 0)
    return m


def test_page_hinkley_detector_with_a_negative_count_is_refused():
    # river divided by zero on the next update
    d = _snap(_monitor("page-hinkley"))
    d["state"]["detectors"][0]["n"] = -1.0
    with pytest.raises(ValueError, match=r"state\['detectors'\]\[0\]\['n'\] of CalibrationMonitor must be"):
        CalibrationMonitor.from_dict(d)


def test_multiclass_monitor_page_hinkley_part_with_a_negative_count_is_refused():
    from streamcal.monitor import MulticlassCalibrationMonitor

    m = MulticlassCalibrationMonitor(CalibrationMonitor(method="page-hinkley"), view="class-wise", classes=("a", "b"))
    for i in range(40):
        m.update({"a": 0.3, "b": 0.7}, "ab"[i % 3 == 0])
    d = _snap(m)
    d["state"]["parts"][1]["detectors"][0]["n"] = -1.0
    with pytest.raises(ValueError, match=r"state\['parts'\]\[1\]\['detectors'\]\[0\]\['n'\]"):
        MulticlassCalibrationMonitor.from_dict(d)


@pytest.mark.parametrize("cut", [3, 600])
def test_adwin_helper_bytes_river_cannot_read_are_a_value_error(cut):
    # river's Rust ADWIN panicked (pyo3's PanicException, a BaseException)
    import base64

    d = _snap(_monitor("adwin"))
    raw = base64.b64decode(d["state"]["detectors"][0]["helper"])
    d["state"]["detectors"][0]["helper"] = base64.b64encode(raw[:-cut]).decode()
    with pytest.raises(ValueError, match=r"state\['detectors'\]\[0\]\['helper'\] of CalibrationMonitor must be the bytes of a river ADWIN"):
        CalibrationMonitor.from_dict(d)


@pytest.mark.parametrize("name", ["ConfidenceECE", "TopLabelECE", "ClasswiseECE"])
def test_multiclass_ece_huge_n_bins_is_refused_before_allocating(name):
    # n_bins=10**18 against a state of 5 bins filled the memory building the edges
    import streamcal.metrics

    cls = getattr(streamcal.metrics, name)
    d = _snap(_fed_metric(cls(n_bins=5), multiclass=True))
    d["params"]["n_bins"] = 10**18
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=rf"of {name} must be a list of 1000000000000000000 bin sums"):
        cls.from_dict(d)
    assert time.perf_counter() - t0 < 1.0



def test_int_too_large_for_a_float_is_refused_naming_the_entry():
    # JSON text may hold an int of any size; a real-valued entry holding one beyond the
    # float range was an OverflowError ("int too large to convert to float")
    cal = OnlinePlatt()
    cal.learn_one(0.3, 1)
    d = _snap(cal)
    d["state"]["core"][0][0] = json.loads("1" + "0" * 400)
    with pytest.raises(ValueError, match=r"state\['core'\]\[0\]\[0\] of OnlinePlatt must be"):
        OnlinePlatt.from_dict(d)
    d = _snap(_iso())
    d["state"]["n_events"] = 10**400  # an int entry: refused as before
    with pytest.raises(ValueError):
        OnlineIsotonic.from_dict(d)
