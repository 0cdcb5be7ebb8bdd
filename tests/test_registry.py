"""Short names of calibrators and metrics (streamcal.registry)."""

from __future__ import annotations

import inspect

import pytest

from streamcal import (
    FIR,
    IRP,
    NAFIR,
    SCIR,
    ClassWise,
    DirichletCalibration,
    EpsilonCalibratedForecaster,
    HedgingCalibeater,
    HistogramBinning,
    MatrixScaling,
    MulticlassIRP,
    OneVsRestIsotonic,
    OnlineBeta,
    OnlineIsotonic,
    OnlinePlatt,
    TemperatureScaling,
    TopLabel,
    TrackingCalibeater,
    VectorScaling,
    VennAbers,
    metrics,
)
from streamcal.registry import (
    CALIBRATOR_NAMES,
    DEFAULT_CALIBRATORS,
    DEFAULT_METRICS,
    DEFAULT_MULTICLASS_CALIBRATORS,
    METRIC_NAMES,
    MULTICLASS_CALIBRATOR_NAMES,
    bigger_is_better,
    calibrator_description,
    calibrator_parameters,
    canonical_spec,
    make_calibrator,
    make_metric,
    make_multiclass_calibrator,
    metric_parameters,
    parse_spec,
    spec_value,
)

# the table of the issue: name -> class, and the parameters that differ from the defaults
EXPECTED_CALIBRATORS = {
    "isotonic": (OnlineIsotonic, {}),
    "histogram": (HistogramBinning, {}),
    "platt": (OnlinePlatt, {}),
    "beta": (OnlineBeta, {}),
    "tracking": (TrackingCalibeater, {}),
    "hedging": (HedgingCalibeater, {"seed": 0}),  # seeded: replays reproducible
    "foster": (EpsilonCalibratedForecaster, {"seed": 0}),
    "tops": (TrackingCalibeater, {"base": OnlinePlatt}),
    "hops": (HedgingCalibeater, {"base": OnlinePlatt, "seed": 0}),
    "irp": (IRP, {}),
    "venn_abers": (VennAbers, {}),
}

EXPECTED_MULTICLASS_CALIBRATORS = {
    "temperature": TemperatureScaling,
    "vector_scaling": VectorScaling,
    "matrix_scaling": MatrixScaling,
    "dirichlet": DirichletCalibration,
    "fir": FIR,
    "nafir": NAFIR,
    "ovr_isotonic": OneVsRestIsotonic,
    "scir": SCIR,
    "irp": MulticlassIRP,
    "top_label": TopLabel,
    "class_wise": ClassWise,
}

EXPECTED_METRICS = {
    "brier": metrics.Brier,
    "log_loss": metrics.LogLoss,
    "ece": metrics.ECE,
    "sharpness": metrics.Sharpness,
    "roc_auc": metrics.ROCAUC,
    "calibration_refinement": metrics.CalibrationRefinement,
    "murphy": metrics.MurphyDecomposition,
    "corp": metrics.CORP,
}


def params_of(obj) -> dict:
    return {p: getattr(obj, p) for p in inspect.signature(type(obj)).parameters}


def test_names_are_the_documented_ones():
    assert set(CALIBRATOR_NAMES) == set(EXPECTED_CALIBRATORS)
    assert set(METRIC_NAMES) == set(EXPECTED_METRICS)
    assert set(DEFAULT_CALIBRATORS) <= set(CALIBRATOR_NAMES)
    assert set(DEFAULT_METRICS) <= set(METRIC_NAMES)
    assert len(DEFAULT_CALIBRATORS) >= 3  # a side-by-side comparison


@pytest.mark.parametrize("name", CALIBRATOR_NAMES)
def test_each_calibrator_name_builds_its_class(name):
    cls, special = EXPECTED_CALIBRATORS[name]
    cal = make_calibrator(name)
    assert type(cal) is cls
    defaults = params_of(cls())
    for param, value in params_of(cal).items():
        if param not in special:
            assert value == defaults[param] or (
                value is None and defaults[param] is None
            )
        elif isinstance(special[param], type):
            assert type(value) is special[param]
        else:
            assert value == special[param]
    # fresh and independent every time
    other = make_calibrator(name)
    assert other is not cal
    if "base" in special:
        assert other.base is not cal.base
    assert calibrator_parameters(name) == tuple(inspect.signature(cls).parameters)
    # the calibrator works: cold start returns the score
    assert cal.predict_one(0.3) == pytest.approx(0.3) or name in (
        "foster",
        "hops",
        "hedging",
    )


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_each_metric_name_builds_its_class(name):
    m = make_metric(name)
    assert type(m) is EXPECTED_METRICS[name]
    assert make_metric(name) is not m
    assert metric_parameters(name) == tuple(inspect.signature(type(m)).parameters)


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("isotonic", ("isotonic", {})),
        ("isotonic:window_size=5000", ("isotonic", {"window_size": 5000})),
        ("isotonic:window_size=5_000", ("isotonic", {"window_size": 5000})),
        ("isotonic:resolution=1e-4", ("isotonic", {"resolution": 1e-4})),
        ("isotonic:half_life=2.5", ("isotonic", {"half_life": 2.5})),
        ("isotonic:window_size=-3", ("isotonic", {"window_size": -3})),
        ("isotonic:window_size=None", ("isotonic", {"window_size": None})),
        ("isotonic:window_size=none", ("isotonic", {"window_size": None})),
        ("platt:monotone=True", ("platt", {"monotone": True})),
        ("platt:monotone=false", ("platt", {"monotone": False})),
        (
            "histogram:n_bins=20,strategy=quantile",
            ("histogram", {"n_bins": 20, "strategy": "quantile"}),
        ),
        ("histogram:strategy='quantile'", ("histogram", {"strategy": "quantile"})),
        ('histogram:strategy="1"', ("histogram", {"strategy": "1"})),
        (
            " Histogram : n_bins = 20 , strategy = uniform ",
            ("histogram", {"n_bins": 20, "strategy": "uniform"}),
        ),
    ],
)
def test_parse_spec_values(spec, expected):
    name, params = parse_spec(spec)
    assert (name, params) == expected
    for key, value in params.items():  # types, not just equality (True == 1)
        assert type(value) is type(expected[1][key])


def test_parameters_reach_the_object():
    cal = make_calibrator("histogram:n_bins=20,strategy=quantile")
    assert (cal.n_bins, cal.strategy) == (20, "quantile")
    cal = make_calibrator("isotonic:window_size=5000,interpolation=linear")
    assert (cal.window_size, cal.interpolation) == (5000, "linear")
    assert make_calibrator("isotonic:resolution=1e-4").resolution == 1e-4
    assert make_calibrator("platt:monotone=True").monotone is True
    tops = make_calibrator("tops:n_bins=5")
    assert tops.n_bins == 5 and type(tops.base) is OnlinePlatt
    hops = make_calibrator("hops:seed=3")
    assert hops.seed == 3 and type(hops.base) is OnlinePlatt
    # base by short name, and None for the class default
    assert type(make_calibrator("tracking:base=isotonic").base) is OnlineIsotonic
    assert make_calibrator("tops:base=None").base is None
    m = make_metric("ece:n_bins=15,strategy=quantile")
    assert (m.n_bins, m.strategy) == (15, "quantile")


@pytest.mark.parametrize(
    "spec, pieces",
    [
        (
            "isotonc",
            [
                "Unknown calibrator 'isotonc'",
                "spec 'isotonc'",
                "isotonic, histogram, platt, beta",
            ],
        ),
        (
            "isotonic:windowsize=5000",
            [
                "'isotonic:windowsize=5000'",
                "no parameter 'windowsize'",
                "window_size, half_life",
            ],
        ),
        ("isotonic:window_size", ["'window_size' is not of the form param=value"]),
        ("isotonic:", ["nothing after ':'"]),
        ("isotonic:=3", ["'=3' is not of the form param=value"]),
        ("isotonic:window_size=1,window_size=2", ["'window_size' is given twice"]),
        ("isotonic:window-size=1", ["'window-size' is not a parameter name"]),
        ("", ["must start with a calibrator name"]),
        ("3d", ["must start with a calibrator name"]),
        (
            "isotonic:window_size=0",
            [
                "Invalid calibrator spec 'isotonic:window_size=0'",
                "'window_size' parameter of OnlineIsotonic",
            ],
        ),
        (
            "histogram:strategy=wide",
            [
                "'histogram:strategy=wide'",
                "'strategy' parameter of HistogramBinning",
                "'wide'",
            ],
        ),
        (
            "tracking:base=bogus",
            ["'base' parameter must be a calibrator name", "'bogus'"],
        ),
    ],
)
def test_calibrator_spec_errors_name_the_spec_and_the_problem(spec, pieces):
    with pytest.raises((ValueError, TypeError)) as info:
        make_calibrator(spec)
    for piece in pieces:
        assert piece in str(info.value)


def test_wrong_value_type_quotes_the_spec_and_the_constructor_message():
    with pytest.raises(
        (TypeError, ValueError),
        match=r"Invalid calibrator spec 'isotonic:window_size=2.5': The 'window_size' parameter",
    ):
        make_calibrator("isotonic:window_size=2.5")
    with pytest.raises(TypeError, match="must be a str"):
        make_calibrator(3)


@pytest.mark.parametrize(
    "spec, pieces",
    [
        ("ecee", ["Unknown metric 'ecee'", "brier, log_loss, ece"]),
        (
            "ece:bins=3",
            [
                "Invalid metric spec 'ece:bins=3'",
                "no parameter 'bins'",
                "n_bins, strategy",
            ],
        ),
        ("brier:eps=1", ["no parameter 'eps'", "Its parameters: (none)"]),
        ("ece:n_bins=0", ["Invalid metric spec 'ece:n_bins=0'", "'n_bins'"]),
    ],
)
def test_metric_spec_errors(spec, pieces):
    with pytest.raises((ValueError, TypeError)) as info:
        make_metric(spec)
    for piece in pieces:
        assert piece in str(info.value)


@pytest.mark.parametrize(
    "spec",
    [
        "isotonic",
        "Isotonic : window_size = 5_000",
        "isotonic:resolution=1e-4,half_life=None",
        "histogram:n_bins=20,strategy=quantile,prior_strength=0.5",
        "platt:monotone=true",
        "histogram:strategy='None'",
    ],
)
def test_canonical_spec_is_stable_and_builds_the_same_object(spec):
    canon = canonical_spec(spec)
    assert canonical_spec(canon) == canon
    assert " " not in canon and canon == canon.strip()
    assert parse_spec(canon) == parse_spec(spec)


def test_canonical_spec_examples():
    assert canonical_spec("isotonic") == "isotonic"
    assert canonical_spec("histogram: strategy = quantile, n_bins = 20") == (
        "histogram:strategy=quantile,n_bins=20"
    )
    assert canonical_spec("histogram:strategy='None'") == "histogram:strategy='None'"


def test_bigger_is_better():
    for name in METRIC_NAMES:
        assert bigger_is_better(name) == EXPECTED_METRICS[name]().bigger_is_better
    assert bigger_is_better("roc_auc") is True
    assert bigger_is_better("ece:n_bins=15") is False
    assert bigger_is_better("log_loss:eps=0.001") is False
    assert bigger_is_better("corp.mcb") is False
    assert bigger_is_better("corp.dsc") is True
    assert bigger_is_better("corp.unc") is None
    assert bigger_is_better("murphy.resolution") is True
    assert bigger_is_better("murphy.uncertainty") is None
    assert bigger_is_better("calibration_refinement.calibration") is False
    assert bigger_is_better("nonsense") is None
    assert bigger_is_better("brier@window") is False
    assert bigger_is_better("roc_auc@window") is True
    assert bigger_is_better("corp.unc@window") is None
    assert bigger_is_better("corp.dsc@window") is True
    assert bigger_is_better("ece:n_bins=15@window") is False


def test_multiclass_names_build_their_classes():
    assert set(MULTICLASS_CALIBRATOR_NAMES) == set(EXPECTED_MULTICLASS_CALIBRATORS)
    assert set(DEFAULT_MULTICLASS_CALIBRATORS) <= set(MULTICLASS_CALIBRATOR_NAMES)
    for name, cls in EXPECTED_MULTICLASS_CALIBRATORS.items():
        assert type(make_multiclass_calibrator(name)) is cls
    wrapped = make_multiclass_calibrator("top_label:calibrator=histogram")
    assert type(wrapped.calibrator) is HistogramBinning
    assert type(make_multiclass_calibrator("class_wise").calibrator) is OnlineIsotonic
    assert (
        make_multiclass_calibrator("scir:window_size=300,refit_every=50").refit_every
        == 50
    )


@pytest.mark.parametrize(
    "spec, message",
    [
        ("isotonic", "Unknown calibrator 'isotonic'"),
        ("fir:windowsize=3", "has no parameter 'windowsize'"),
        ("top_label:calibrator=fir", "must be a binary calibrator name"),
        ("fir:window_size=0", "'window_size'"),
    ],
)
def test_multiclass_spec_errors(spec, message):
    with pytest.raises((ValueError, TypeError), match=message):
        make_multiclass_calibrator(spec)


# ---------------------------------------------------------------------- multiclass metrics
# (issue 12: registry.bigger_is_better("tece") was None; the names now come from the
# metric catalogue, streamcal.metrics.catalogue)

EXPECTED_MULTICLASS_METRICS = {
    "brier": metrics.MulticlassBrier,
    "log_loss": metrics.CrossEntropy,
    "ece": metrics.ConfidenceECE,
    "confidence_ece": metrics.ConfidenceECE,
    "top_label_ece": metrics.TopLabelECE,
    "classwise_ece": metrics.ClasswiseECE,
    "tece": metrics.TECE,
}


def test_multiclass_metric_names_build_their_classes():
    from streamcal.registry import MULTICLASS_METRIC_NAMES

    assert set(MULTICLASS_METRIC_NAMES) == set(EXPECTED_MULTICLASS_METRICS) - {
        "confidence_ece"
    }
    for name, cls in EXPECTED_MULTICLASS_METRICS.items():
        m = make_metric(name, task="multiclass")
        assert type(m) is cls
        assert metric_parameters(name, task="multiclass") == tuple(
            inspect.signature(cls).parameters
        )
    m = make_metric("tece:n_bins=4,threshold=0.01", task="multiclass")
    assert (m.n_bins, m.threshold) == (4, 0.01)


@pytest.mark.parametrize(
    "spec, task, pieces",
    [
        (
            "tece",
            "binary",
            [
                "Invalid metric spec 'tece'",
                "'tece' is a multiclass metric only",
                "binary metrics: brier",
            ],
        ),
        (
            "roc_auc",
            "multiclass",
            [
                "'roc_auc' is a binary metric only",
                "multiclass metrics: brier, log_loss, ece, top_label_ece",
            ],
        ),
        (
            "ecee",
            "multiclass",
            ["Unknown multiclass metric 'ecee'", "Known multiclass metrics: brier"],
        ),
        ("tece:bins=3", "multiclass", ["TECE", "no parameter 'bins'", "n_bins, threshold"]),
        (
            "tece:n_bins=0",
            "multiclass",
            ["Invalid metric spec 'tece:n_bins=0'", "'n_bins'"],
        ),
        ("brier", "ternary", ["'task' argument of make_metric", "'ternary'"]),
    ],
)
def test_metric_spec_errors_name_the_task(spec, task, pieces):
    with pytest.raises((ValueError, TypeError)) as info:
        make_metric(spec, task=task)
    for piece in pieces:
        assert piece in str(info.value)


def test_bigger_is_better_of_multiclass_names():
    for name in ("tece", "top_label_ece", "classwise_ece", "confidence_ece"):
        assert bigger_is_better(name) is False
        assert bigger_is_better(name + "@window") is False
    assert bigger_is_better("tece:n_bins=4@window") is False
    # names of both tasks: their directions agree
    for name in ("brier", "log_loss", "ece"):
        assert bigger_is_better(name) is False
    # a parameter value with a dot is not a component
    assert bigger_is_better("calibration_refinement:resolution=0.1") is False
    assert bigger_is_better("calibration_refinement:resolution=0.1.refinement") is False
    assert bigger_is_better("roc_auc:x=0.5") is True
    # a metric named by the user: the catalogue's component names still rank
    assert bigger_is_better("mine.dsc") is True and bigger_is_better("mine") is None


@pytest.mark.parametrize("name", ["class_wise", "top_label"])
def test_wrapper_spec_passes_a_prior_and_more_to_the_inner_calibrator(name):
    # issue 13: the spec could not give class_wise's (or top_label's) binary calibrator
    # more than one parameter (the comma ended the 'calibrator' value, and the rest was
    # read as the wrapper's own), so a prior came only alone
    one = make_multiclass_calibrator(f"{name}:calibrator=isotonic:prior_strength=1")
    assert one.calibrator._get_params() == OnlineIsotonic(prior_strength=1)._get_params()
    spec = f"{name}:calibrator='isotonic:prior_strength=2,window_size=50'"
    built = make_multiclass_calibrator(spec)
    assert built.calibrator._get_params() == OnlineIsotonic(prior_strength=2, window_size=50)._get_params()
    again = make_multiclass_calibrator(canonical_spec(spec))
    assert again.calibrator._get_params() == built.calibrator._get_params()
    double = make_multiclass_calibrator(f'{name}:calibrator="histogram:n_bins=4,prior_strength=0.5"')
    assert double.calibrator._get_params() == HistogramBinning(n_bins=4, prior_strength=0.5)._get_params()
    with pytest.raises(ValueError, match="has no parameter 'n_bins'"):
        make_multiclass_calibrator(f"{name}:calibrator='isotonic:n_bins=4,prior_strength=1'")


def test_spec_values_with_commas_read_back():
    # spec_value quotes a string holding a comma; parse_spec must then read it whole
    for text in ("a,b", "isotonic:prior_strength=1,window_size=5", 'x,"y"'):
        name, params = parse_spec(f"histogram:strategy={spec_value(text)},n_bins=3")
        assert params == {"strategy": text, "n_bins": 3}


@pytest.mark.parametrize("name, a", [("class_wise", 0.5), ("top_label", 2)])
def test_wrapper_short_names_wrap_isotonic_under_the_prior(name, a):
    # issue 13, item 2: the short names built the exact fit OnlineIsotonic(), whose 0
    # and 1 the wrappers passed on (the observed class got probability 0 on 2 to 40
    # events per stream of simulations/multiclass_compare.py); now a prior (strengths
    # from simulations/priors_multiclass.py), and the exact fit only when asked for
    built = make_multiclass_calibrator(name)
    assert built.calibrator._get_params() == OnlineIsotonic(prior_strength=a)._get_params()
    exact = make_multiclass_calibrator(f"{name}:calibrator=isotonic")
    assert exact.calibrator._get_params() == OnlineIsotonic()._get_params()
    assert calibrator_description(name, task="multiclass").endswith(
        f"(calibrator=OnlineIsotonic(prior_strength={a}))"
    )
    for s, y in [({"a": 0.8, "b": 0.2}, "a"), ({"a": 0.6, "b": 0.4}, "b"), ({"a": 0.9, "b": 0.1}, "a")]:
        built.learn_one(s, y)
        exact.learn_one(s, y)
    assert 0.0 in exact.predict_one({"a": 0.9, "b": 0.1}).values()
    assert all(0.0 < p < 1.0 for p in built.predict_one({"a": 0.9, "b": 0.1}).values())
