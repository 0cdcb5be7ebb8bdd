"""CalibratedClassifier: river's own estimator checks, the prequential order against a
loop written by hand (the obviously correct oracle), delayed labels against river's
question/answer schedule, the label sets and cold starts of river classifiers, and the
target of issue 15 (log loss and ECE below the raw classifier's on Phishing)."""

import copy
import itertools
import math
import pickle

import numpy as np
import pytest
from river import base, checks, compose, datasets, evaluate, linear_model, metrics
from river import naive_bayes, preprocessing, stream, utils

from streamcal import (
    FIR,
    CalibratedClassifier,
    ClassWise,
    HistogramBinning,
    OnlineIsotonic,
    OnlinePlatt,
    TemperatureScaling,
    TopLabel,
    VennAbers,
)
from streamcal.base import BinaryCalibrator
from streamcal.metrics import ECE


class Fixed(base.Classifier):
    """A classifier that predicts ``x["proba"]`` and records what it learnt."""

    def __init__(self):
        self.seen = []

    def learn_one(self, x, y, **kwargs):
        self.seen.append((y, kwargs))

    def predict_proba_one(self, x):
        return dict(x["proba"])


def _binary_stream(seed, n=300, d=4):
    rng = np.random.default_rng(seed)
    coef = rng.normal(size=d)
    for _ in range(n):
        x = {f"f{i}": float(v) for i, v in enumerate(rng.normal(size=d))}
        logit = sum(coef[i] * x[f"f{i}"] for i in range(d))
        yield x, bool(rng.random() < 1 / (1 + math.exp(-3 * logit)))


def _multiclass_stream(seed, n=300, classes="abc"):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        y = classes[int(rng.integers(len(classes)))]
        x = {"f0": float(rng.normal() + classes.index(y)), "f1": float(rng.normal())}
        yield x, y


# ---------------------------------------------------------------------- river's checks


@pytest.mark.parametrize(
    "params",
    [
        # the multiclass ones run river's checks on ImageSegments too: 40 s each
        pytest.param(p, marks=[pytest.mark.slow] if p["calibrator"]._more_tags() & {"multiclass"} else [])
        for p in CalibratedClassifier._unit_test_params()
    ],
    ids=lambda p: f"{type(p['classifier']).__name__}-{type(p['calibrator']).__name__}",
)
def test_river_check_estimator(params):
    checks.check_estimator(CalibratedClassifier(**params))


def test_river_check_estimator_venn_abers():
    """The combination of the issue's target, with its unbounded default store."""
    model = CalibratedClassifier(linear_model.LogisticRegression(), VennAbers(resolution=0.001))
    checks.check_estimator(model)


# ---------------------------------------------------------------------- the oracle


def _oracle_binary(classifier, calibrator, events):
    """The predictions of the loop the class promises, written out by hand."""
    clf, cal = copy.deepcopy(classifier), copy.deepcopy(calibrator)
    out = []
    for x, y in events:
        p = clf.predict_proba_one(x)
        q = cal.predict_one(p[True])
        out.append({False: 1.0 - q, True: q})
        cal.learn_one(clf.predict_proba_one(x)[True], y)
        clf.learn_one(x, y)
    return out, clf, cal


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("calibrator", [OnlineIsotonic(), VennAbers(), OnlinePlatt()], ids=repr)
def test_prequential_order_matches_hand_loop(seed, calibrator):
    events = list(_binary_stream(seed))
    expected, clf, cal = _oracle_binary(linear_model.LogisticRegression(), calibrator, events)
    model = CalibratedClassifier(linear_model.LogisticRegression(), calibrator.clone())
    got = []
    for x, y in events:
        got.append(model.predict_proba_one(x))
        model.learn_one(x, y)
    assert got == expected
    assert model.calibrator.to_dict() == cal.to_dict()
    assert model.classifier.weights == clf.weights


def test_calibrator_learns_before_the_classifier():
    """The calibrator's pair is the prediction made *before* the classifier learns."""
    model = CalibratedClassifier(Fixed(), OnlineIsotonic())
    model.learn_one({"proba": {False: 0.3, True: 0.7}}, True)
    assert [b.score_min for b in model.calibrator.blocks] == [0.7]
    assert model.classifier.seen == [(True, {})]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(
    "calibrator",
    [ClassWise(OnlineIsotonic()), TopLabel(OnlinePlatt()), FIR(window_size=100, refit_every=10),
     TemperatureScaling(window_size=100, refit_every=10)],
    ids=repr,
)
def test_multiclass_matches_hand_loop(seed, calibrator):
    events = list(_multiclass_stream(seed))
    clf, cal = naive_bayes.GaussianNB(), calibrator.clone()
    model = CalibratedClassifier(naive_bayes.GaussianNB(), calibrator.clone())
    for x, y in events:
        p = clf.predict_proba_one(x)
        expected = cal.predict_one(p) if p else {}
        assert model.predict_proba_one(x) == expected
        if p:
            cal.learn_one(p, y)
        clf.learn_one(x, y)
        model.learn_one(x, y)
    assert model.calibrator.to_dict() == cal.to_dict()


# ---------------------------------------------------------------------- river's loops


def _qa_oracle(events, delay):
    """progressive validation with ``delay``, by hand, over river's own schedule: the
    calibrator learns, at reveal time, from the classifier's prediction then."""
    clf, cal = linear_model.LogisticRegression(), OnlineIsotonic()
    metric = metrics.LogLoss()
    preds = {}
    for i, x, y in stream.simulate_qa(events, moment=None, delay=delay):
        if y is None:
            q = cal.predict_one(clf.predict_proba_one(x)[True])
            preds[i] = {False: 1.0 - q, True: q}
        else:
            metric.update(y, preds.pop(i))
            cal.learn_one(clf.predict_proba_one(x)[True], y)
            clf.learn_one(x, y)
    return metric.get()


@pytest.mark.parametrize("delay", [0, 1, 7, 50])
def test_progressive_val_score_with_delay(delay):
    events = list(_binary_stream(3, n=400))
    model = CalibratedClassifier(linear_model.LogisticRegression(), OnlineIsotonic())
    metric = metrics.LogLoss()
    evaluate.progressive_val_score(events, model, metric, delay=delay)
    assert metric.get() == _qa_oracle(events, delay)


def test_pipeline_last_step_and_rolling_metrics():
    events = list(datasets.Phishing().take(400))
    model = preprocessing.StandardScaler() | CalibratedClassifier(
        linear_model.LogisticRegression(), VennAbers()
    )
    assert isinstance(model, compose.Pipeline)
    rolling = [utils.Rolling(metrics.LogLoss, window_size=100), utils.Rolling(ECE, window_size=100, n_bins=5)]
    for m in rolling:
        evaluate.progressive_val_score(events, model.clone(), m)
    # the same windows, by hand, over the same predictions
    by_hand = model.clone()
    preds = []
    for x, y in events:
        preds.append((y, by_hand.predict_proba_one(x)))
        by_hand.learn_one(x, y)
    tail = preds[-100:]
    ll = metrics.LogLoss()
    ece = ECE(n_bins=5)
    for y, p in tail:
        ll.update(y, p)
        ece.update(y, p)
    assert rolling[0].get() == pytest.approx(ll.get(), rel=1e-12)
    assert rolling[1].get() == pytest.approx(ece.get(), rel=1e-9, abs=1e-12)


def test_issue_target_phishing_log_loss_and_ece():
    """Issue 15's target: VennAbers behind LogisticRegression lowers both."""

    def score(model):
        out = []
        for m in (metrics.LogLoss(), ECE(n_bins=10)):
            evaluate.progressive_val_score(datasets.Phishing(), model.clone(), m)
            out.append(m.get())
        return out

    raw = score(preprocessing.StandardScaler() | linear_model.LogisticRegression())
    cal = score(
        preprocessing.StandardScaler()
        | CalibratedClassifier(linear_model.LogisticRegression(), VennAbers())
    )
    assert cal[0] < raw[0] and cal[1] < raw[1]


# ---------------------------------------------------------------------- label sets


@pytest.mark.parametrize(
    "proba, expected_keys",
    [
        ({False: 0.4, True: 0.6}, (False, True)),
        ({0: 0.4, 1: 0.6}, (0, 1)),
        ({True: 1.0}, (False, True)),  # seen one class only
        ({1: 1.0}, (0, 1)),
        ({False: 1.0}, (False, True)),
        ({0.0: 0.25, 1.0: 0.75}, (0.0, 1.0)),
    ],
)
def test_binary_label_sets_and_one_class_cold_start(proba, expected_keys):
    model = CalibratedClassifier(Fixed(), OnlineIsotonic())
    out = model.predict_proba_one({"proba": proba})
    p1 = proba.get(1, 1.0 - proba.get(0, 0.0))
    assert list(out) == list(expected_keys)
    assert [type(k) for k in out] == [type(k) for k in expected_keys]
    assert out[expected_keys[1]] == p1 and out[expected_keys[0]] == 1.0 - p1
    model.learn_one({"proba": proba}, 1)
    assert model.calibrator.n_events == 1


def test_unnormalised_binary_prediction_is_normalised():
    model = CalibratedClassifier(Fixed(), OnlineIsotonic())
    p = 0.6 / (0.2 + 0.6)
    assert model.predict_proba_one({"proba": {False: 0.2, True: 0.6}}) == {False: 1.0 - p, True: p}
    assert model.predict_proba_one({"proba": {False: 0.0, True: 0.0}}) == {False: 0.5, True: 0.5}


def test_empty_prediction_teaches_nothing():
    for cal in (OnlineIsotonic(), ClassWise(OnlineIsotonic())):
        model = CalibratedClassifier(Fixed(), cal)
        assert model.predict_proba_one({"proba": {}}) == {}
        assert model.predict_one({"proba": {}}) is None
        before = pickle.dumps(model.calibrator)
        model.learn_one({"proba": {}}, True)
        assert pickle.dumps(model.calibrator) == before
        assert model.classifier.seen == [(True, {})]


def test_gaussian_nb_cold_start_binary():
    """GaussianNB predicts {} before any event and {True: 1.0} after only positives."""
    model = CalibratedClassifier(naive_bayes.GaussianNB(), OnlineIsotonic())
    x = {"a": 1.0}
    assert model.predict_proba_one(x) == {}
    model.learn_one(x, True)
    assert model.predict_proba_one(x) == {False: 0.0, True: 1.0}
    model.learn_one({"a": 2.0}, True)
    assert model.calibrator.n_events == 1  # the first event had no prediction


def test_multiclass_prediction_normalised():
    model = CalibratedClassifier(Fixed(), ClassWise(OnlineIsotonic()))
    model.learn_one({"proba": {"a": 2.0, "b": 6.0}}, "b")
    assert model.calibrator.calibrators["a"].blocks[0].score_min == 0.25


def test_binary_calibrator_rejects_other_classes():
    model = CalibratedClassifier(Fixed(), OnlineIsotonic())
    with pytest.raises(ValueError, match="'classifier' parameter of CalibratedClassifier must be a classifier of the classes"):
        model.predict_proba_one({"proba": {"spam": 0.4, "ham": 0.6}})
    with pytest.raises(ValueError, match="ClassWise or TopLabel"):
        model.learn_one({"proba": {"spam": 0.4, "ham": 0.6}}, 1)
    assert model.classifier.seen == [] and model.calibrator.n_events == 0


@pytest.mark.parametrize(
    "cal, y, w",
    [
        (OnlineIsotonic(), 2, 1.0),
        (OnlineIsotonic(), "spam", 1.0),
        (OnlineIsotonic(), None, 1.0),
        (OnlineIsotonic(), 0.5, 1.0),
        (OnlineIsotonic(), 1, -1.0),
        (OnlineIsotonic(), 1, float("nan")),
        (ClassWise(OnlineIsotonic()), float("nan"), 1.0),
        (ClassWise(OnlineIsotonic()), ["a"], 1.0),
        (ClassWise(OnlineIsotonic()), "a", float("inf")),
    ],
)
def test_bad_label_or_weight_leaves_state_unchanged(cal, y, w):
    model = CalibratedClassifier(linear_model.LogisticRegression(), cal)
    proba_events = list(_binary_stream(0, n=30))
    for x, yy in proba_events:
        model.learn_one(x, yy)
    before = pickle.dumps(model)
    with pytest.raises((ValueError, TypeError), match="'(y|w)' argument of CalibratedClassifier.learn_one must be"):
        model.learn_one(proba_events[0][0], y, w=w)
    assert pickle.dumps(model) == before


def test_weight_reaches_calibrator_and_classifier():
    model = CalibratedClassifier(Fixed(), OnlineIsotonic())
    model.learn_one({"proba": {False: 0.5, True: 0.5}}, 1, w=2.5)
    assert model.calibrator.blocks[0].weight == 2.5
    assert model.classifier.seen == [(1, {"w": 2.5})]


def test_labels_and_keyword_arguments_on_the_fast_paths():
    # learn_one skips the label check's call for True/False/0/1 and the ** call without
    # keyword arguments: every other label still goes through the check, every keyword
    # still reaches the classifier
    model = CalibratedClassifier(Fixed(), OnlineIsotonic())
    x = {"proba": {False: 0.5, True: 0.5}}
    for y in (True, False, 1, 0, np.bool_(True), np.int64(0), 1.0):
        model.learn_one(x, y)
    assert [kw for _, kw in model.classifier.seen] == [{}] * 7
    assert model.calibrator.n_events == 7 and model.calibrator.blocks[0].weight == 7.0
    for y in (-1, 2, True + 1):
        with pytest.raises(ValueError, match="The 'y' argument of CalibratedClassifier.learn_one must be"):
            model.learn_one(x, y)
    model.learn_one(x, 1, w=0.5, other="kept")
    assert model.classifier.seen[-1] == (1, {"w": 0.5, "other": "kept"})
    assert model.calibrator.n_events == 8


def test_parameters_validated():
    with pytest.raises(ValueError, match="'calibrator' parameter of CalibratedClassifier must be"):
        CalibratedClassifier(linear_model.LogisticRegression(), "isotonic")
    with pytest.raises(ValueError, match="'classifier' parameter of CalibratedClassifier must be"):
        CalibratedClassifier(preprocessing.StandardScaler(), OnlineIsotonic())
    # a binary calibrator is fed one probability: not a tuple of experts' forecasts
    # (regression: a MultiCalibeater was accepted, then every event failed)
    from streamcal import KeyedCalibrator, MultiCalibeater

    with pytest.raises(ValueError, match="'calibrator' parameter of CalibratedClassifier must be a calibrator taking a float score"):
        CalibratedClassifier(linear_model.LogisticRegression(), MultiCalibeater(2))
    with pytest.raises(ValueError, match="'calibrator' parameter of CalibratedClassifier must be"):
        CalibratedClassifier(linear_model.LogisticRegression(), KeyedCalibrator(OnlineIsotonic()))
    # the classifier gives probabilities: a scaling of logits took them for logits
    from streamcal import TemperatureScaling

    with pytest.raises(ValueError, match="must be a calibrator of probabilities"):
        CalibratedClassifier(linear_model.LogisticRegression(), TemperatureScaling(input="logits"))
    CalibratedClassifier(linear_model.LogisticRegression(), TemperatureScaling())


# ---------------------------------------------------------------------- snapshots


def test_pickle_and_clone():
    events = list(_binary_stream(1, n=200))
    model = CalibratedClassifier(linear_model.LogisticRegression(), VennAbers())
    for x, y in events[:150]:
        model.learn_one(x, y)
    restored = pickle.loads(pickle.dumps(model))
    fresh = model.clone()
    assert fresh.calibrator.n_events == 0 and fresh.classifier.weights == {}
    for x, y in events[150:]:
        assert restored.predict_proba_one(x) == model.predict_proba_one(x)
        model.learn_one(x, y)
        restored.learn_one(x, y)
    # the calibrator's JSON snapshot, rewrapped, continues identically
    from streamcal.base import BinaryCalibrator

    again = CalibratedClassifier(
        pickle.loads(pickle.dumps(model.classifier)),
        BinaryCalibrator.from_dict(model.calibrator.to_dict()),
    )
    for x, _ in itertools.islice(_binary_stream(9), 50):
        assert again.predict_proba_one(x) == model.predict_proba_one(x)


# ---------------------------------------------------------------------- reused predictions
#
# learn_one reuses the classifier's prediction of the preceding predict_proba_one when
# it is provably the one a new call would return. The oracle below never reuses: it
# asks the classifier again in every learn_one, as the loop the class promises does.


class Counting(base.Classifier):
    """A river classifier around another, counting its ``predict_proba_one`` calls."""

    def __init__(self, classifier):
        self.classifier = classifier
        self.n_predict = 0

    def learn_one(self, x, y, **kwargs):
        self.classifier.learn_one(x, y)

    def predict_proba_one(self, x, **kwargs):  # keyword arguments are ignored
        self.n_predict += 1
        return self.classifier.predict_proba_one(x)


class _Oracle:
    """The hand-written loop, binary or multiclass, that asks the classifier again in
    every learn_one (no reuse)."""

    def __init__(self, classifier, calibrator):
        self.clf, self.cal = copy.deepcopy(classifier), copy.deepcopy(calibrator)
        self.binary = isinstance(calibrator, BinaryCalibrator)

    def _scores(self, x):
        p = self.clf.predict_proba_one(x)
        if self.binary:
            return p.get(True, 1.0 - p.get(False, 1.0)) if p else None
        return dict(p) if p else None

    def predict_proba_one(self, x):
        s = self._scores(x)
        if s is None:
            return {}
        if self.binary:
            q = self.cal.predict_one(s)
            return {False: 1.0 - q, True: q}
        return self.cal.predict_one(s)

    def learn_one(self, x, y):
        s = self._scores(x)
        if s is not None:
            self.cal.learn_one(s, y)
        self.clf.learn_one(x, y)


def _random_operations(model, oracle, events, seed, n_ops=600):
    """Drive ``model`` and ``oracle`` through the same random mix of predictions and
    learns on different, repeated, equal-copied and changed-in-place feature dicts;
    every prediction must be equal."""
    rng = np.random.default_rng(seed)
    pool = [(dict(x), y) for x, y in events]
    last_x = None
    for _ in range(n_ops):
        op = rng.random()
        x, y = pool[int(rng.integers(len(pool)))]
        if last_x is not None and op < 0.45:
            x = last_x  # the x just predicted: reused, unless changed below
        if op < 0.08 and last_x is not None:
            k = sorted(x)[int(rng.integers(len(x)))]
            x[k] = x[k] + 1.0  # changed in place after its prediction
        elif op < 0.15 and last_x is not None:
            x = dict(x)  # an equal copy
        elif op < 0.2 and last_x is not None:
            k = sorted(x)[int(rng.integers(len(x)))]
            x = {**x, k: int(x[k]) if float(x[k]).is_integer() else x[k]}  # 1.0 -> 1
        if rng.random() < 0.55:
            assert model.predict_proba_one(x) == oracle.predict_proba_one(x)
            last_x = x
        else:
            model.learn_one(x, y)
            oracle.learn_one(x, y)
    for x, _ in pool[:20]:
        assert model.predict_proba_one(x) == oracle.predict_proba_one(x)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("calibrator", [VennAbers(), OnlineIsotonic(), OnlinePlatt()], ids=repr)
def test_reused_prediction_matches_oracle_binary(seed, calibrator):
    # features rounded to few values: equal dicts come from different events too
    events = [({k: round(v) for k, v in x.items()}, y) for x, y in _binary_stream(seed, n=60)]
    model = CalibratedClassifier(linear_model.LogisticRegression(), calibrator.clone())
    oracle = _Oracle(linear_model.LogisticRegression(), calibrator)
    _random_operations(model, oracle, events, seed)
    assert model.calibrator.to_dict() == oracle.cal.to_dict()
    assert model.classifier.weights == oracle.clf.weights


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(
    "calibrator",
    [ClassWise(OnlineIsotonic()), TopLabel(VennAbers()), FIR(window_size=50, refit_every=7)],
    ids=repr,
)
def test_reused_prediction_matches_oracle_multiclass(seed, calibrator):
    events = [({k: round(v, 1) for k, v in x.items()}, y) for x, y in _multiclass_stream(seed, n=60)]
    model = CalibratedClassifier(naive_bayes.GaussianNB(), calibrator.clone())
    oracle = _Oracle(naive_bayes.GaussianNB(), calibrator)
    _random_operations(model, oracle, events, seed, n_ops=400)
    assert model.calibrator.to_dict() == oracle.cal.to_dict()


def test_multiclass_scores_changed_after_prediction_are_not_reused():
    """The calibrator's predict_one (or the caller, given the dict it returns) may
    change the dict it was given: the prediction kept for learn_one is a copy."""
    model = CalibratedClassifier(naive_bayes.GaussianNB(), ClassWise(OnlineIsotonic()))
    oracle = _Oracle(naive_bayes.GaussianNB(), ClassWise(OnlineIsotonic()))
    calibrated = model.calibrator.predict_one

    def in_place(scores):  # writes the calibrated vector into its argument
        scores.update(calibrated(scores))
        return scores

    model.calibrator.predict_one = in_place
    for x, y in _multiclass_stream(0, n=60):
        out = model.predict_proba_one(x)
        assert out == oracle.predict_proba_one(x)
        model.learn_one(x, y)
        oracle.learn_one(x, y)
    assert model.calibrator.to_dict() == oracle.cal.to_dict()


@pytest.mark.parametrize("delay", [0, 1, 3, 20])
@pytest.mark.parametrize("calibrator", [VennAbers(), TopLabel(OnlinePlatt())], ids=repr)
def test_reused_prediction_with_delay(delay, calibrator):
    """progressive validation with delayed labels and repeated feature dicts, against
    river's question/answer schedule run by hand with the oracle."""
    binary = isinstance(calibrator, BinaryCalibrator)
    if binary:
        events = [({k: round(v) for k, v in x.items()}, y) for x, y in _binary_stream(5, n=300)]
        clf = linear_model.LogisticRegression()
    else:
        events = [({k: round(v) for k, v in x.items()}, y) for x, y in _multiclass_stream(5, n=300)]
        clf = naive_bayes.GaussianNB()
    model = CalibratedClassifier(Counting(copy.deepcopy(clf)), calibrator.clone())
    metric = metrics.LogLoss()
    evaluate.progressive_val_score(events, model, metric, delay=delay)
    oracle = _Oracle(clf, calibrator)
    expected = metrics.LogLoss()
    preds = {}
    for i, x, y in stream.simulate_qa(events, moment=None, delay=delay):
        if y is None:
            preds[i] = oracle.predict_proba_one(x)
        else:
            expected.update(y, preds.pop(i))
            oracle.learn_one(x, y)
    assert metric.get() == expected.get()
    assert model.calibrator.to_dict() == oracle.cal.to_dict()
    if delay == 0:  # each learn_one reused the prediction just made
        assert model.classifier.n_predict == len(events)


def _counting_model():
    model = CalibratedClassifier(Counting(linear_model.LogisticRegression()), VennAbers())
    for x, y in itertools.islice(_binary_stream(2), 30):
        model.learn_one(x, y)
    model.classifier.n_predict = 0
    return model


def test_reuse_happens_only_when_it_is_exact():
    events = list(itertools.islice(_binary_stream(4), 10))
    (x, y), (x2, y2) = events[0], events[1]
    model = _counting_model()
    model.predict_proba_one(x)
    model.learn_one(dict(x), y)  # an equal dict: reused
    assert model.classifier.n_predict == 1
    model.predict_proba_one(x)
    model.learn_one(x2, y2)  # another x
    model.learn_one(x, y)  # the learn_one before forgot the prediction
    assert model.classifier.n_predict == 4
    model.predict_proba_one(x)
    x["f0"] += 1.0  # changed in place
    model.learn_one(x, y)
    assert model.classifier.n_predict == 6
    model.predict_proba_one(x, extra=1)  # keyword arguments: learn_one asks without them
    model.learn_one(x, y)
    assert model.classifier.n_predict == 8
    model.predict_proba_one(x)
    model.classifier = Counting(model.classifier.classifier)  # another classifier object
    model.learn_one(x, y)
    assert model.classifier.n_predict == 1
    model.predict_one(x)  # predict_one goes through predict_proba_one
    model.learn_one(x, y)
    assert model.classifier.n_predict == 2


def test_feature_values_that_can_change_in_place_are_not_reused():
    model = CalibratedClassifier(Fixed(), OnlineIsotonic())
    proba = {False: 0.3, True: 0.7}
    x = {"proba": proba}
    model.predict_proba_one(x)
    proba[True], proba[False] = 0.2, 0.8  # x is equal to itself, its value is not
    model.learn_one(x, True)
    assert [b.score_min for b in model.calibrator.blocks] == [0.2]


def test_feature_values_whose_equality_is_not_a_bool():
    """An array value compared with the remembered float: no reuse, no error."""
    model = _counting_model()
    x = {"f0": 0.5, "f1": 0.1, "f2": 0.2, "f3": 0.3}
    model.predict_proba_one(x)
    oracle_clf = copy.deepcopy(model.classifier.classifier)
    y = {"f0": np.array([0.5, 0.5]), "f1": 0.1, "f2": 0.2, "f3": 0.3}
    with pytest.raises(Exception):
        oracle_clf.predict_proba_one(y)  # LogisticRegression itself refuses it
    with pytest.raises(Exception):
        model.learn_one(y, True)
    assert model.classifier.n_predict == 2


def test_learn_during_predict_is_not_reused():
    """Under river's learn_during_predict a pipeline's prediction teaches its scaler:
    learn_one must predict again, as the oracle does."""
    events = list(_binary_stream(6, n=120))
    make = lambda: preprocessing.StandardScaler() | linear_model.LogisticRegression()  # noqa: E731
    model = CalibratedClassifier(make(), VennAbers())
    oracle = _Oracle(make(), VennAbers())
    with compose.learn_during_predict():
        for x, y in events:
            assert model.predict_proba_one(x) == oracle.predict_proba_one(x)
            model.learn_one(x, y)
            oracle.learn_one(x, y)
    assert model.calibrator.to_dict() == oracle.cal.to_dict()
    assert model.classifier["LogisticRegression"].weights == oracle.clf["LogisticRegression"].weights


@pytest.mark.parametrize("how", ["pickle", "deepcopy", "clone"])
def test_copies_do_not_carry_the_reused_prediction(how):
    events = list(itertools.islice(_binary_stream(7), 40))
    model = _counting_model()
    x, y = events[0]
    model.predict_proba_one(x)
    if how == "pickle":
        other = pickle.loads(pickle.dumps(model))
    elif how == "deepcopy":
        other = copy.deepcopy(model)
    else:
        other = model.clone()
    other.classifier.n_predict = 0
    # the copy's classifier learns before it sees x again: a carried prediction would
    # be stale; without one, the copy predicts again
    other.classifier.classifier.learn_one(events[1][0], events[1][1])
    other.learn_one(x, y)
    assert other.classifier.n_predict == 1
    model.learn_one(x, y)  # the original still reuses its own
    assert model.classifier.n_predict == 1


def _binary_split_reference(proba):
    """The binary split as the Python code read it before it was compiled (the oracle
    of _compose_kernel.binary_split)."""
    pos = neg = None
    pp = pn = 0.0
    for k, v in proba.items():
        if k == 1:
            pos, pp = k, v
        elif k == 0:
            neg, pn = k, v
        else:
            raise ValueError("other class")
    if pos is None:
        if neg is None:
            return None
        pos, p = type(neg)(1), 1.0 - pn
    elif neg is None:
        neg, p = type(pos)(0), pp
    else:
        total = pp + pn
        p = pp / total if total > 0.0 else 0.5
    if not 0.0 <= p <= 1.0:
        p = min(max(p, 0.0), 1.0) if p == p else 0.5
    return p, neg, pos


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy scalars' inf - inf
def test_compiled_binary_split_matches_reference():
    from streamcal._compose_kernel import binary_split

    rng = np.random.default_rng(0)
    values = [0.0, -0.0, 1.0, 0.3, -0.2, 1.7, math.nan, math.inf, -math.inf, 0, 1, 2, True,
              False, np.float32(0.3), np.float64(0.9), 1e-320, 5e-324]
    keys = [(False, True), (0, 1), (0.0, 1.0), (np.int64(0), np.int64(1)), (np.bool_(False), np.bool_(True))]
    for _ in range(5000):
        neg, pos = keys[int(rng.integers(len(keys)))]
        order = (neg, pos) if rng.random() < 0.5 else (pos, neg)
        proba = {k: values[int(rng.integers(len(values)))] for k in order if rng.random() < 0.8}
        expected, got = _binary_split_reference(proba), binary_split(proba)
        assert repr(got) == repr(expected), proba
        if got is not None:
            assert [type(v) for v in got] == [type(v) for v in expected]
    with pytest.raises(ValueError, match="must be a classifier of the classes"):
        binary_split({"spam": 0.4, "ham": 0.6})


class _ReprClassifier(base.Classifier):
    """A classifier that tells feature values apart by their text, as a one-hot encoder
    does: {"a": True}, {"a": 1}, {"a": 1.0} and {"a": -0.0} all predict differently."""

    def __init__(self):
        self.n_predict = 0

    def learn_one(self, x, y):
        pass

    def predict_proba_one(self, x):
        self.n_predict += 1
        p = (sum(map(ord, repr(sorted(x.items(), key=repr)))) % 97 + 1) / 99
        return {False: 1.0 - p, True: p}


@pytest.mark.parametrize(
    "seen, learnt",
    [({"a": True}, {"a": 1}), ({"a": 1}, {"a": 1.0}), ({"a": 0.0}, {"a": -0.0}),
     ({1: 0.5}, {1.0: 0.5}), ({1: 0.5}, {True: 0.5}), ({"a": 1.0}, {"a": np.float64(1.0)})],
    ids=repr,
)
def test_equal_features_of_another_type_or_sign_are_not_reused(seen, learnt):
    """learn_one pairs y with the prediction of the x it is given: a value equal to the
    one just predicted but of another type (or a zero of another sign) is asked again."""
    model = CalibratedClassifier(_ReprClassifier(), OnlineIsotonic())
    oracle = _Oracle(_ReprClassifier(), OnlineIsotonic())
    assert model.classifier.predict_proba_one(seen) != model.classifier.predict_proba_one(learnt)
    model.classifier.n_predict = 0
    model.predict_proba_one(seen)
    model.learn_one(learnt, True)
    oracle.learn_one(learnt, True)
    assert model.classifier.n_predict == 2
    assert model.calibrator.to_dict() == oracle.cal.to_dict()
    model.predict_proba_one(learnt)
    model.learn_one(dict(learnt), False)  # the very same features: reused, unless a key
    # is not a str or an int (never kept: 1.0 or True would find the key 1)
    reusable = all(type(k) in (str, int) for k in learnt)
    assert model.classifier.n_predict == (3 if reusable else 4)


def test_a_keyword_the_classifier_refuses_teaches_the_calibrator_nothing():
    """An outside check: ``learn_one(x, y, w=2.0)`` with a classifier whose learn_one
    takes no ``w`` (river's KNNClassifier, GaussianNB, PriorClassifier) let the
    calibrator learn the event before the classifier's TypeError; a caller retrying
    without ``w`` then taught it twice. The keyword is now checked first."""
    from river import naive_bayes, neighbors
    from streamcal import OnlinePlatt
    for classifier in (neighbors.KNNClassifier(), naive_bayes.GaussianNB()):
        model = CalibratedClassifier(classifier, OnlinePlatt())
        for i in range(6):
            model.learn_one({"x": float(i)}, i % 2 == 0)
        before = model.calibrator.to_dict()
        for _ in range(2):  # the second time from the cache
            with pytest.raises(TypeError, match=r"does not take the keyword arguments \['w'\]"):
                model.learn_one({"x": 0.5}, True, w=2.0)
            assert model.calibrator.to_dict() == before
        model.learn_one({"x": 0.5}, True)  # without it the event is learnt
        assert model.calibrator.to_dict() != before
