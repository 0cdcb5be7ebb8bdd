"""A river classifier with a streaming calibrator behind it.

:class:`CalibratedClassifier` plays the part of scikit-learn's
``CalibratedClassifierCV`` in a stream: a river ``base.Classifier`` (and
``base.Wrapper``) around any river classifier whose ``predict_proba_one`` returns the
calibrated distribution, learnt prequentially from the classifier's own predictions.
"""

from __future__ import annotations

import inspect

import math

from river import base
from river import compose as river_compose

from streamcal import _validation as V
from streamcal._compose_kernel import binary_split, immutable_copy, reusable
from streamcal.base import BinaryCalibrator, MulticlassCalibrator, takes_float_score

__all__ = ["CalibratedClassifier"]

_NAME = "CalibratedClassifier"


def _as_probabilities(proba: dict):
    """A multiclass ``predict_proba_one`` output as a probability vector: negative
    values (rounding) set to 0, the whole divided by its sum when that is more than
    1e-9 away from 1. None when no class has positive probability (or the dict is
    empty). O(K)."""
    total = 0.0
    clean = True
    for v in proba.values():
        if v >= 0.0:
            total += v
        else:
            clean = False
    if not total > 0.0 or math.isinf(total):
        return None
    if clean and abs(total - 1.0) <= 1e-9:
        return proba
    return {k: (v / total if v > 0.0 else 0.0) for k, v in proba.items()}


_KEYWORDS_TAKEN: dict = {}  # (type of classifier, keyword names) -> None or the refusal


def _check_keywords(classifier, kwargs) -> None:
    """Raise the TypeError the classifier's ``learn_one`` would raise for the keyword
    arguments ``kwargs`` (river's KNNClassifier, GaussianNB and PriorClassifier take
    no ``w``), before anything learns; the answer is cached per classifier type and
    set of names."""
    key = (type(classifier), tuple(sorted(kwargs)))
    if key not in _KEYWORDS_TAKEN:
        try:
            inspect.signature(classifier.learn_one).bind({}, None, **kwargs)
            _KEYWORDS_TAKEN[key] = None
        except TypeError as exc:
            _KEYWORDS_TAKEN[key] = (
                f"{type(classifier).__name__}.learn_one() does not take the keyword "
                f"arguments {sorted(kwargs)} passed to {_NAME}.learn_one: {exc}"
            )
        except ValueError:  # no signature to read (a builtin): let the call decide
            _KEYWORDS_TAKEN[key] = None
    refusal = _KEYWORDS_TAKEN[key]
    if refusal is not None:
        raise TypeError(refusal)


class CalibratedClassifier(base.Wrapper, base.Classifier):
    """A river classifier whose probabilities are recalibrated online by a streamcal
    calibrator.

    ``learn_one(x, y)`` first asks the classifier for its prediction on ``x``, lets the
    calibrator learn from that prediction and ``y``, and only then lets the classifier
    learn ``(x, y)``: the calibrator sees each label paired with a prediction made
    without it (prequential, as in a held-out calibration set, but with every event
    used by both). ``predict_proba_one(x)`` returns the calibrated distribution and
    ``predict_one(x)`` its most probable class.

    - A :class:`~streamcal.base.BinaryCalibrator` (``OnlineIsotonic``, ``VennAbers``,
      ``OnlinePlatt``, ...) needs a binary classifier whose classes are ``{False,
      True}`` or ``{0, 1}`` (river's binary classifiers predict ``{False: p0, True:
      p1}``); it calibrates the probability of the class equal to 1, and the output
      uses the classifier's own class labels. ``y`` must be a binary label.
    - A :class:`~streamcal.base.MulticlassCalibrator` calibrates the whole
      distribution of any classifier, binary or multiclass: ``TemperatureScaling``,
      ``FIR``, ..., or a binary calibrator made multiclass by the user's choice of
      reduction, ``ClassWise(calibrator)`` (one calibrator per class) or
      ``TopLabel(calibrator)`` (one per predicted class, on the confidence).

    Parameters
    ----------
    classifier
        A river classifier (or a pipeline ending in one), used in place: it learns
        from every event, as it would on its own.
    calibrator
        A binary or multiclass streamcal calibrator, used in place (read its fitted
        state from ``model.calibrator``).

    Notes
    -----
    **Cold start.** Until the classifier has seen both classes its prediction names
    one class, or none: a binary prediction with one class is read as certainty
    about that class (``{True: 1.0}`` is ``p = 1``) and the output names both classes
    (``{False: 1 - q, True: q}``); an empty prediction (a classifier that knows no
    class yet) is returned empty, as river does, and teaches the calibrator nothing.
    Before the calibrator has learnt anything it returns the classifier's prediction
    (a binary calibrator's cold start is the score itself). A multiclass prediction
    whose values do not sum to 1 (some river classifiers) is normalised first.

    **Delayed labels.** With ``evaluate.progressive_val_score(..., delay=...)`` the
    label of an event arrives after later events have been predicted; ``learn_one``
    then pairs the label with the classifier's prediction *at the time the label
    arrives* (the classifier has learnt from the labels revealed so far, never from
    this one), not with the prediction served when the question was asked. That
    prediction is as much out of sample, needs no store of pending predictions (memory
    would grow with the delay, and ``predict_proba_one`` would have to change state),
    and is what a deployed system that joins labels to features can compute. Without
    delay the two are the same.

    **Calibrating the output or training differently.** A calibrator in front of the
    classifier fixes the map from its scores to probabilities (a biased intercept, an
    over- or under-confident slope, a non-linear distortion) without touching the
    classifier, so the ranking of events (its AUC) is unchanged, except where an
    isotonic calibrator pools scores into ties. Training differently (another loss,
    regularisation, learning rate, a better model) can improve the ranking itself, but
    may still leave it miscalibrated, and drift can spoil calibration however it was
    trained. Calibrate when the probabilities feed a decision (a threshold, an
    expected cost, a bid) and the classifier's ranking is good enough; change the
    training when the ranking is the problem.

    **Weights.** A ``w`` keyword argument of ``learn_one`` is passed to the calibrator
    (and, with every other keyword argument, to the classifier).

    **Snapshots.** ``pickle`` and ``clone()`` work as for any river estimator. A JSON
    snapshot (``to_dict``) cannot hold an arbitrary river classifier, so this class has
    none: save ``model.calibrator.to_dict()``, restore it with the family's
    ``from_dict`` and wrap it again with the (pickled) classifier.

    **The prediction learn_one pairs with y.** ``learn_one(x, y)`` reuses the
    classifier's prediction made by the ``predict_proba_one`` just before it, instead
    of asking the classifier again, when that is provably the same answer: the same
    classifier object made it, on a dict with the same features as ``x`` (the same
    ``str`` or ``int`` keys, each value equal and of the same type, a zero of the same
    sign: ``1``, ``1.0`` and ``True`` differ), no ``learn_one`` of this wrapper
    ran in between, the call had no keyword arguments, every feature value is a
    number, a string or None (an object that can change in place, a list or an array,
    is never trusted), and river's ``compose.learn_during_predict`` is off (a
    prediction would then teach a pipeline). Otherwise it asks the classifier again.
    The classifier's ``predict_proba_one`` must depend only on its state and ``x`` (river's
    classifiers do); if you make ``model.classifier`` learn directly, not through this
    wrapper, between the two calls, the reused prediction is the one made before. Copies
    (``pickle``, ``copy.deepcopy``, ``clone``) never carry the kept prediction.

    Cost per event: ``learn_one`` is one ``learn_one`` of the classifier and of the
    calibrator, plus one ``predict_proba_one`` of the classifier unless the prediction
    is reused (O(d) to check, d the number of features); ``predict_proba_one`` is one
    classifier ``predict_proba_one`` plus one calibrator ``predict_one``, and an O(d)
    copy of ``x``.

    Examples
    --------
    A logistic regression on river's phishing data set, calibrated by Venn-ABERS, in
    river's progressive validation:

    >>> from river import datasets, evaluate, linear_model, metrics, preprocessing
    >>> from streamcal import CalibratedClassifier, VennAbers
    >>> from streamcal.metrics import ECE
    >>> def score(model):
    ...     scores = [metrics.LogLoss(), ECE(n_bins=10)]
    ...     for m in scores:
    ...         evaluate.progressive_val_score(datasets.Phishing(), model.clone(), m)
    ...     return [round(m.get(), 4) for m in scores]
    >>> raw = preprocessing.StandardScaler() | linear_model.LogisticRegression()
    >>> calibrated = preprocessing.StandardScaler() | CalibratedClassifier(
    ...     linear_model.LogisticRegression(), VennAbers())
    >>> score(raw)                 # log loss, ECE
    [0.3301, 0.112]
    >>> score(calibrated)
    [0.2793, 0.0176]

    The calibrated distribution, and its most probable class:

    >>> model = CalibratedClassifier(linear_model.LogisticRegression(), VennAbers())
    >>> for x, y in datasets.Phishing().take(200):
    ...     model.learn_one(x, y)
    >>> x, _ = next(iter(datasets.Phishing()))
    >>> {c: round(p, 3) for c, p in model.predict_proba_one(x).items()}
    {False: 0.258, True: 0.742}
    >>> model.predict_one(x)
    True

    A multiclass classifier, calibrated class by class:

    >>> from river import naive_bayes
    >>> from streamcal import ClassWise, HistogramBinning
    >>> model = CalibratedClassifier(naive_bayes.GaussianNB(), ClassWise(HistogramBinning(n_bins=10)))
    >>> for x, y in datasets.ImageSegments().take(300):
    ...     model.learn_one(x, y)
    >>> sorted(model.calibrator.classes)[:3]
    ['brickface', 'cement', 'foliage']

    """

    def __init__(self, classifier, calibrator):
        V.check_param(
            _NAME,
            "classifier",
            classifier,
            callable(getattr(classifier, "predict_proba_one", None))
            and callable(getattr(classifier, "learn_one", None)),
            "a river classifier (with predict_proba_one and learn_one)",
        )
        kinds = (BinaryCalibrator, MulticlassCalibrator)
        V.check_instance_param(_NAME, "calibrator", calibrator, kinds)
        if isinstance(calibrator, BinaryCalibrator):  # fed one probability per event
            V.check_param(_NAME, "calibrator", calibrator, takes_float_score(calibrator),
                          "a calibrator taking a float score, or a MulticlassCalibrator")
        # predict_proba_one gives probabilities: a scaling reading logits would take them
        # for logits (silently another model)
        V.check_param(_NAME, "calibrator", calibrator,
                      getattr(calibrator, "input", "probabilities") == "probabilities",
                      "a calibrator of probabilities (input='probabilities'): the "
                      "classifier's predict_proba_one gives probabilities")
        self.classifier = classifier
        self.calibrator = calibrator
        self._reset()

    def _reset(self) -> None:
        # read on every event: an isinstance check of river's estimator classes costs
        # microseconds (their metaclass and the ABC machinery)
        self._binary = isinstance(self.calibrator, BinaryCalibrator)
        # (classifier, copy of x, its binary split or multiclass probabilities) of the
        # latest predict_proba_one, for a learn_one of the same x (see the class Notes);
        # not state: never pickled or copied
        self._last = None

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_last"] = None  # a copy starts without a remembered prediction
        return state

    @classmethod
    def _unit_test_params(cls):
        from river import linear_model, naive_bayes

        from streamcal.calibrators import (
            ClassWise,
            HistogramBinning,
            OnlineIsotonic,
            OnlinePlatt,
            TopLabel,
        )

        yield {
            "classifier": linear_model.LogisticRegression(),
            "calibrator": OnlineIsotonic(resolution=0.01),
        }
        yield {
            "classifier": naive_bayes.GaussianNB(),
            "calibrator": ClassWise(HistogramBinning(n_bins=10)),
        }
        yield {
            "classifier": naive_bayes.GaussianNB(),
            "calibrator": TopLabel(OnlinePlatt()),
        }

    # ------------------------------------------------------------------ river glue

    @property
    def _wrapped_model(self):
        return self.classifier

    @property
    def _multiclass(self) -> bool:
        return not self._binary and bool(getattr(self.classifier, "_multiclass", False))

    @property
    def _supervised(self) -> bool:
        return True

    # ------------------------------------------------------------------ learning

    def learn_one(self, x: dict, y, **kwargs) -> None:
        """Let the calibrator learn from the classifier's prediction on ``x`` and ``y``,
        then let the classifier learn ``(x, y)``.

        Parameters
        ----------
        x
            The features.
        y
            The class: a binary label (0, 1, False or True) with a binary calibrator,
            any hashable class but NaN with a multiclass one.
        **kwargs
            Passed to the classifier's ``learn_one``; ``w``, if given, is also the
            calibrator's sample weight.
        """
        cal = self.calibrator
        binary = self._binary
        if binary:
            if not (y is True or y is False or (type(y) is int and (y == 1 or y == 0))):
                V.check_label(y, _NAME, "learn_one", "y")  # the common labels skip a call
        else:
            V.check_class_label(y, _NAME, "learn_one", "y")
        w = V.check_weight(kwargs["w"], _NAME, "learn_one") if "w" in kwargs else 1.0
        # the prediction kept by predict_proba_one is the one the classifier would give
        # now if the same classifier object made it on a dict with the same features as
        # x, no learn_one ran since (it forgets it) and a prediction teaches no pipeline
        last = self._last
        if reusable(last, self.classifier, x):  # one compiled call for the three checks
            value = last[2]
        else:
            proba = self.classifier.predict_proba_one(x)
            value = binary_split(proba) if binary else _as_probabilities(proba)
        if kwargs:  # a keyword the classifier refuses must stop the event before the
            _check_keywords(self.classifier, kwargs)  # calibrator learns it
        self._last = None  # the classifier learns below: its predictions change
        if value is not None:
            # y itself: a bool or int takes the calibrator's fast path
            cal.learn_one(value[0] if binary else value, y, w)
        if kwargs:
            self.classifier.learn_one(x, y, **kwargs)
        else:  # a call without ** unpacking is about 0.2 us cheaper
            self.classifier.learn_one(x, y)

    # ------------------------------------------------------------------ prediction

    def predict_proba_one(self, x: dict, **kwargs) -> dict:
        """The calibrated class probabilities for ``x`` (empty while the classifier
        knows no class).

        Parameters
        ----------
        x
            The features.
        **kwargs
            Passed to the classifier's ``predict_proba_one``.
        """
        if kwargs:
            proba = self.classifier.predict_proba_one(x, **kwargs)
            self._last = None  # learn_one asks without the keyword arguments
            remember = False
        else:  # a call without ** unpacking is about 0.2 us cheaper
            proba = self.classifier.predict_proba_one(x)
            remember = True
        # kept for a learn_one of the same x with a copy of x, unless a value of x can
        # change in place (then the copy would not show it): see the class Notes
        kept = immutable_copy(x) if remember else None
        if self._binary:
            split = binary_split(proba)
            self._last = None if kept is None else (self.classifier, kept, split)
            if split is None:
                return {}
            p, neg, pos = split
            q = self.calibrator.predict_one(p)
            return {neg: 1.0 - q, pos: q}
        scores = _as_probabilities(proba)
        if kept is not None:
            # a copy of the scores: the calibrator or the caller (given the calibrator's
            # output) may change the dict
            self._last = (self.classifier, kept, None if scores is None else scores.copy())
        else:
            self._last = None
        if scores is None:
            return {}
        return self.calibrator.predict_one(scores)

    def predict_one(self, x: dict, **kwargs):
        """The most probable class of the calibrated distribution (None while the
        classifier knows no class)."""
        y_pred = self.predict_proba_one(x, **kwargs)
        if y_pred:
            return max(y_pred, key=y_pred.get)
        return None
