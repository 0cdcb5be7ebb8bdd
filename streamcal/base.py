"""The calibrator interfaces.

A *binary calibrator* learns from one ``(score, label)`` pair at a time and maps a raw
score in [0, 1] to a calibrated probability in [0, 1], in the style of river:
``learn_one`` returns None, parameters are stored under their own names, state is built
by ``_reset()``, and ``clone()`` / ``repr`` come from the parameters.

Every calibrator can be saved and restored three ways: ``pickle``, ``clone()`` (a fresh,
unfitted copy) and ``to_dict()`` / ``from_dict()``, a JSON-safe snapshot of the whole
state that restores exactly (floats survive ``json`` exactly because Python writes the
shortest repr that round-trips).

Every calibrator has ``merge(other)`` (:meth:`streamcal._merge.Mergeable.merge`): the
calibrators whose state is a sum of per-event statistics return a new calibrator holding
what one calibrator fed both streams would; the others raise a TypeError saying why.
"""

from __future__ import annotations

import abc
import collections.abc
import copy
import typing

import numpy as np
from river import base

from streamcal import _merge, _snapshot
from streamcal import _validation as V

__all__ = [
    "PREDICT",
    "PREDICT_REVEAL",
    "REVEAL",
    "BinaryCalibrator",
    "MulticlassCalibrator",
    "SNAPSHOT_FORMAT",
]

#: Version tag written into every snapshot made by :meth:`BinaryCalibrator.to_dict`.
SNAPSHOT_FORMAT = _snapshot.SNAPSHOT_FORMAT


#: The operations of :meth:`BinaryCalibrator.predict_reveal_many`: predict a score,
#: learn a labelled event (reveal its label), or both at once.
PREDICT, REVEAL, PREDICT_REVEAL = 0, 1, 2


def _check_kinds(kinds, name: str) -> np.ndarray:
    """``kinds`` of :meth:`BinaryCalibrator.predict_reveal_many` as an int8 array, or
    raise naming the first element that is not 0, 1 or 2 (bools refused)."""

    def refuse(value, index=None):
        where = "" if index is None else f" at index {index}"
        raise ValueError(
            f"The 'kinds' argument of {name}.predict_reveal_many must be a sequence of "
            f"0 (predict), 1 (reveal) or 2 (both). Got {value!r}{where} instead."
        )

    if not isinstance(kinds, np.ndarray) and hasattr(kinds, "__array__"):
        # an array-like one (a pandas Series or extension array, as the scores and
        # labels may be): judged as its array (a set or a dict has no __array__)
        kinds = np.asarray(kinds)
    if isinstance(kinds, np.ndarray):
        if kinds.ndim != 1:
            refuse(kinds)
        if kinds.dtype.kind in "iu":
            outside = np.flatnonzero((kinds < PREDICT) | (kinds > PREDICT_REVEAL))
            if outside.size:
                i = int(outside[0])
                refuse(kinds[i].item(), i)
            return kinds.astype(np.int8)
        listed = kinds.tolist()
    elif isinstance(kinds, (str, bytes)) or not isinstance(kinds, collections.abc.Sequence):
        refuse(kinds)  # a set or a dict has no order; a text is not a sequence of kinds
    else:
        listed = list(kinds)
    for i, v in enumerate(listed):
        if type(v) is bool or not isinstance(v, (int, np.integer)) or not PREDICT <= v <= PREDICT_REVEAL:
            refuse(v, i)
    return np.asarray(listed, dtype=np.int8)


def _unused_at(values, unused: np.ndarray, fill):
    """``values`` (labels or weights, one per operation) with ``fill`` where ``unused``
    (a prediction's): a float array for numeric input, a list for other one-dimensional
    input (objects, text, None among numbers); bool arrays and anything that is not one
    value per operation are returned as they are, for the batch check to judge by name."""
    try:
        arr = np.asarray(values)
    except Exception:  # ragged or exotic: the batch check names it
        return values
    if arr.ndim != 1 or arr.dtype.kind == "b":
        return values
    if arr.dtype.kind in "iuf":
        return np.where(unused, fill, arr)
    return [fill if u else v for v, u in zip(arr.tolist(), unused.tolist())]


def _unit(w: np.ndarray) -> bool:
    """Every weight of a validated batch is 1: its loop calls ``learn_one(s, y)``, as a
    caller without weights does (a user's ``learn_one`` may take no ``w``)."""
    return bool((w == 1.0).all())


def takes_float_score(calibrator) -> bool:
    """Whether ``calibrator`` is a binary calibrator of one float score: any
    :class:`BinaryCalibrator` but :class:`~streamcal.MultiCalibeater`, whose score is a
    tuple of experts' forecasts (it says so by its ``_check_inputs`` hook). What a
    wrapper that feeds its calibrator one probability needs (``ClassWise``,
    ``TopLabel``, ``CalibratedClassifier``, a calibeater's ``base``). O(1).

    Examples
    --------
    >>> from streamcal import MultiCalibeater, OnlinePlatt
    >>> takes_float_score(OnlinePlatt()), takes_float_score(MultiCalibeater(2))
    (True, False)

    """
    return isinstance(calibrator, BinaryCalibrator) and not hasattr(calibrator, "_check_inputs")


class _Calibrator(abc.ABC):
    """What the binary and the multiclass interface share: the class attributes the
    shared checks read, the package that exports the classes (snapshots import it), the
    abstract ``_reset`` and river's supervised flag. Each family's base keeps its own
    ``_registry`` (a snapshot names a class within its family)."""

    #: names of parameters which, when set (not None), bound the memory used however
    #: long the stream
    _bounded_memory_params: typing.ClassVar[tuple[str, ...]] = ()
    _package = "streamcal.calibrators"

    @abc.abstractmethod
    def _reset(self) -> None:
        """Build the learnt state from scratch (called by the constructor)."""

    @property
    def _supervised(self) -> bool:
        return True


class BinaryCalibrator(_Calibrator, _snapshot.Snapshot, _merge.Mergeable, base.Estimator):
    """Base class of calibrators that map a binary classifier's score to a probability.

    Subclasses implement ``_reset``, ``learn_one``, ``predict_one``, ``_get_state`` and
    ``_set_state``; they may override ``learn_many`` / ``predict_many`` with vectorised
    versions that give the same results as the one-at-a-time loop.

    Class attributes describe promises that the shared checks in
    :mod:`streamcal.checks` verify:

    - ``_monotone``: predictions are non-decreasing in the score;
    - ``_bounded_memory_params``: names of parameters which, when set (not None), bound
      the memory used however long the stream.

    Examples
    --------
    Any concrete calibrator, here :class:`streamcal.OnlineIsotonic`:

    >>> import json
    >>> from streamcal import OnlineIsotonic
    >>> from streamcal.base import BinaryCalibrator
    >>> cal = OnlineIsotonic()
    >>> cal.predict_one(0.3)          # before any label: the score itself
    0.3
    >>> for s, y in [(0.2, 0), (0.4, 1), (0.6, 0), (0.8, 1)]:
    ...     cal.learn_one(s, y)
    >>> cal.predict_one(0.5)
    0.5
    >>> snapshot = json.loads(json.dumps(cal.to_dict()))
    >>> BinaryCalibrator.from_dict(snapshot).predict_one(0.5)
    0.5

    """

    _monotone: typing.ClassVar[bool] = False
    _registry: typing.ClassVar[dict[str, type]] = {}

    # ------------------------------------------------------------------ interface

    @property
    def releases_gil(self) -> bool:
        """Whether :meth:`predict_reveal_many` (and the other batch methods) run as
        compiled loops that release the GIL, so that threads running several such
        calibrators at once use several cores; False by default. A replay hands its
        calibrators to a pool of threads only when one of them does (or long batch runs
        do).

        Examples
        --------
        >>> from streamcal import OnlineIsotonic, OnlinePlatt
        >>> OnlineIsotonic().releases_gil, OnlinePlatt().releases_gil
        (True, False)

        """
        return False

    @abc.abstractmethod
    def learn_one(self, score: float, label: bool | int, w: float = 1.0) -> None:
        """Update the calibrator with one labelled score."""

    @abc.abstractmethod
    def predict_one(self, score: float) -> float:
        """Return the calibrated probability for ``score``."""

    # ------------------------------------------------------------------ batch API

    def learn_many(self, scores, labels, w=None) -> None:
        """Learn from a batch of events, exactly as a loop of ``learn_one`` would.

        The whole batch is validated before any state changes: if one event is bad,
        nothing is learnt.

        Parameters
        ----------
        scores
            Sequence of scores in [0, 1].
        labels
            Sequence of binary labels, same length.
        w
            Optional sequence of non-negative sample weights (default: all 1).
        """
        self._learn_many_validated(*self._check_batch(scores, labels, w, "learn_many"))

    def _check_batch(self, scores, labels, w, method: str):
        """Validate a whole batch (scores, labels, weights) for ``method``; returns
        float64 arrays, or raises naming the first bad element's index."""
        name = type(self).__name__
        s = V.check_scores_array(scores, name, method)
        y = V.check_labels_array(labels, len(s), name, method)
        return s, y, V.check_weights_array(w, len(s), name, method)

    def _learn_many_validated(
        self, scores: np.ndarray, labels: np.ndarray, w: np.ndarray
    ) -> None:
        learn = self.learn_one
        if _unit(w):  # as the replay's per-event loop calls it: no weight, int labels
            for s, y in zip(scores.tolist(), labels.astype(np.int64).tolist()):
                learn(s, y)
            return
        for s, y, wi in zip(scores.tolist(), labels.tolist(), w.tolist()):
            learn(s, y, wi)

    def _weight_refusal(self, scores, labels, w) -> int:
        """The index of the first event the weight rule (:mod:`streamcal._validation`)
        would refuse if the validated events ``(scores[i], labels[i], w[i])`` were learnt
        in turn from the current state, or -1 when it would refuse none; nothing
        changes (a dry run).

        The wrappers that feed one event to several calibrators (``ClassWise``,
        ``TopLabel``) ask every calibrator before any learns, so that a refused weight
        leaves all of them as they were. When :meth:`_weights_surely_fit` says so, this
        costs O(n); otherwise the events are learnt by a copy, O(state + n learnt
        events), which is exact whatever the calibrator's rule.

        Parameters
        ----------
        scores, labels, w
            Sequences of the same length: scores in [0, 1], binary labels, and weights
            that passed :func:`~streamcal._validation.check_weight`.

        Examples
        --------
        >>> from streamcal import OnlinePlatt
        >>> cal = OnlinePlatt()
        >>> cal._weight_refusal([0.5, 0.7], [1, 0], [1.0, 2.0])
        -1
        >>> cal._weight_refusal([0.5, 0.7], [1, 0], [1.0, 1.7e308])
        1
        >>> cal.predict_one(0.7)  # nothing learnt
        0.7

        """
        if self._weights_surely_fit(w):
            return -1
        trial = copy.deepcopy(self)
        learn = trial.learn_one
        for i, (s, y, wi) in enumerate(zip(scores, labels, w)):
            try:
                learn(s, y, wi)
            except ValueError:  # validated inputs: only the weight rule refuses
                return i
        return -1

    def _weights_surely_fit(self, w) -> bool:
        """True when events of the weights ``w``, learnt in turn, are surely all
        accepted by the weight rule whatever their scores and labels (a cheap
        sufficient condition for :meth:`_weight_refusal`); False when unknown (the
        default). O(n)."""
        return False

    def predict_learn_many(self, scores, labels, w=None) -> np.ndarray:
        """Predict then learn each event in turn (prequential), in one pass.

        Returns the predictions of the loop ``p[i] = predict_one(s[i]);
        learn_one(s[i], y[i], w[i])``, exactly (the same floats), and leaves the
        calibrator in the state that loop would. It is the primitive a replay, a keyed
        runner or a distributed job is built on: compiled calibrators run it in one
        pass without a Python call per event.

        The whole batch is validated first: if an element is bad, the error names its
        argument and index and nothing is learnt.

        Parameters
        ----------
        scores
            Sequence of scores in [0, 1].
        labels
            Sequence of binary labels, same length.
        w
            Optional sequence of non-negative sample weights (default: all 1).

        Returns
        -------
        numpy.ndarray
            The prequential predictions, float64, one per event.

        Examples
        --------
        >>> from streamcal import OnlineIsotonic
        >>> cal = OnlineIsotonic()
        >>> cal.predict_learn_many([0.2, 0.8, 0.4, 0.6], [0, 1, 0, 1]).tolist()
        [0.2, 0.0, 0.0, 0.0]
        >>> cal.predict_one(0.7)
        1.0

        """
        return self._predict_learn_many_validated(*self._check_batch(scores, labels, w, "predict_learn_many"))

    def _predict_learn_many_validated(
        self, scores: np.ndarray, labels: np.ndarray, w: np.ndarray
    ) -> np.ndarray:
        out = np.empty(len(scores), dtype=np.float64)
        predict = self.predict_one
        learn = self.learn_one
        if _unit(w):  # as the replay's per-event loop calls it: no weight, int labels
            for i, (s, y) in enumerate(zip(scores.tolist(), labels.astype(np.int64).tolist())):
                out[i] = predict(s)
                learn(s, y)
            return out
        for i, (s, y, wi) in enumerate(zip(scores.tolist(), labels.tolist(), w.tolist())):
            out[i] = predict(s)
            learn(s, y, wi)
        return out

    def predict_reveal_many(self, kinds, scores, labels, w=None) -> np.ndarray:
        """Predict and learn events in the order given: labels that arrive late.

        Operation ``i`` is ``kinds[i]``: ``PREDICT`` (0) predicts ``scores[i]`` (its
        label and weight are not used: any value, NaN or None, will do), ``REVEAL`` (1)
        learns ``(scores[i], labels[i], w[i])`` (the label of an event predicted
        earlier has arrived), ``PREDICT_REVEAL`` (2) predicts ``scores[i]`` then learns
        it. Returns the predictions of the operations 0 and 2, in order: exactly those
        of the loop of ``predict_one`` / ``learn_one`` doing the same, which it leaves
        the calibrator as. It is the stream of questions and answers of river's
        ``stream.simulate_qa`` in one call, what a replay with delayed labels runs on;
        the isotonic family runs it compiled, without the GIL.

        The whole batch is validated first: if an element is bad, the error names its
        argument and index and nothing is learnt.

        Parameters
        ----------
        kinds
            Sequence of 0, 1 or 2, one per operation.
        scores
            Sequence of scores in [0, 1], same length.
        labels
            Sequence of binary labels, same length (unused for predictions).
        w
            Optional sequence of non-negative sample weights (default: all 1; unused
            for predictions).

        Returns
        -------
        numpy.ndarray
            The predictions, float64, one per operation 0 or 2.

        Examples
        --------
        >>> from streamcal import OnlineIsotonic
        >>> cal = OnlineIsotonic()
        >>> # predict events a and b, then a's label (0) arrives, then c is predicted
        >>> # and its label (1) is known at once
        >>> cal.predict_reveal_many([0, 0, 1, 2], [0.2, 0.8, 0.2, 0.6], [None, None, 0, 1]).tolist()
        [0.2, 0.8, 0.0]
        >>> cal.predict_one(0.7)
        1.0

        """
        name = type(self).__name__
        k = _check_kinds(kinds, name)
        for argument, values in (("scores", scores), ("labels", labels), ("w", w)):
            if values is not None and hasattr(values, "__len__") and len(values) != len(k):
                raise ValueError(
                    f"The 'kinds' argument of {name}.predict_reveal_many must have one element "
                    f"per operation: '{argument}' has {len(values)}. Got {len(k)} elements instead."
                )
        asking = k == PREDICT
        labels = _unused_at(labels, asking, 0)
        w = None if w is None else _unused_at(w, asking, 0.0)
        s, y, ww = self._check_batch(scores, labels, w, "predict_reveal_many")
        return self._predict_reveal_many_validated(k, s, y, np.where(asking, 0.0, ww))

    def _predict_reveal_many_validated(
        self, kinds: np.ndarray, scores: np.ndarray, labels: np.ndarray, w: np.ndarray
    ) -> np.ndarray:
        # atomic under the weight rule: a weight the state cannot hold is refused
        # before anything is learnt (the predictions change nothing, so the learns
        # alone decide). A class that does not state its rule (a user's, without
        # _weights_surely_fit) is not dry-run on a copy (its learn_one would run twice,
        # side effects and all): its state is saved, and restored if the loop raises.
        learning = kinds != PREDICT
        if type(self)._weights_surely_fit is BinaryCalibrator._weights_surely_fit:
            with _snapshot.restored_on_error(self):
                return self._operations_loop(kinds, scores, labels, w)
        refused = self._weight_refusal(scores[learning], labels[learning], w[learning])
        if refused >= 0:
            i = int(np.flatnonzero(learning)[refused])
            raise V.weight_overflow_error(type(self).__name__, "predict_reveal_many", float(w[i]), f" at index {i}")
        return self._operations_loop(kinds, scores, labels, w)

    def _operations_loop(self, kinds, scores, labels, w) -> np.ndarray:
        """The loop of :meth:`predict_reveal_many` over validated arrays."""
        learning = kinds != PREDICT
        preds = []
        append = preds.append
        predict = self.predict_one
        learn = self.learn_one
        if _unit(w[learning]):  # as the replay's per-event loop calls it: no weight, int labels
            for k, s, y in zip(kinds.tolist(), scores.tolist(), labels.astype(np.int64).tolist()):
                if k != REVEAL:
                    append(predict(s))
                if k != PREDICT:
                    learn(s, y)
        else:
            for k, s, y, wi in zip(kinds.tolist(), scores.tolist(), labels.tolist(), w.tolist()):
                if k != REVEAL:
                    append(predict(s))
                if k != PREDICT:
                    learn(s, y, wi)
        return np.array(preds, dtype=np.float64)

    def predict_many(self, scores) -> np.ndarray:
        """Return calibrated probabilities for a batch of scores (no learning)."""
        s = V.check_scores_array(scores, type(self).__name__, "predict_many")
        return self._predict_many_validated(s)

    def _predict_many_validated(self, scores: np.ndarray) -> np.ndarray:
        return np.array(
            [self.predict_one(x) for x in scores.tolist()], dtype=np.float64
        )

    # ------------------------------------------------------------------ river glue

    def _more_tags(self) -> set[str]:
        tags = {"calibrator"}
        if self._monotone:
            tags.add("monotone")
        return tags


class MulticlassCalibrator(_Calibrator, _snapshot.Snapshot, _merge.Mergeable, base.Estimator):
    """Base class of calibrators that map a multiclass classifier's probability vector
    to a calibrated one.

    ``learn_one(scores, label, w=1.0)`` learns from one event: ``scores`` a dict class ->
    probability (river's ``predict_proba_one`` output), ``label`` the observed class
    (any hashable value). ``predict_one(scores)`` returns a dict class -> probability
    that sums to 1.

    Rules every subclass follows (the shared checks verify them):

    - **Validation.** ``scores`` must be a probability vector (values in [0, 1], sum
      within 1e-6 of 1; a class absent from the dict has probability 0), checked by
      :func:`streamcal._validation.check_probability_vector`, unless the class sets
      ``_logits = True`` and documents that it takes logits or log-probabilities (then
      any finite reals). ``label`` must be hashable and not NaN. Bad input raises with
      the template message and leaves the state unchanged.
    - **Classes** are discovered as they appear, as labels or as keys of ``scores``;
      :attr:`classes` lists them in order of first appearance.
    - **A class the fit has never seen** (new in ``scores`` at prediction time, or seen
      only after the latest refit) never crashes a stream: its raw probability passes
      through unchanged, and the calibrated probabilities of the known classes are
      rescaled to fill the rest of the unit mass (:meth:`_merge_unknown`).
    - **Cold start.** Before any fit, ``predict_one`` returns the scores themselves (a
      new dict, with every key of ``scores``).

    Examples
    --------
    >>> from streamcal.base import MulticlassCalibrator
    >>> MulticlassCalibrator._merge_unknown({"a": 0.5, "b": 0.5}, {"a": 0.2, "b": 0.6, "z": 0.2})
    {'a': 0.4, 'b': 0.4, 'z': 0.2}

    """

    #: the calibrator takes logits / log-probabilities rather than probabilities
    _logits: typing.ClassVar[bool] = False
    _registry: typing.ClassVar[dict[str, type]] = {}

    @abc.abstractmethod
    def learn_one(self, scores: dict, label, w: float = 1.0) -> None:
        """Update the calibrator with one labelled probability vector."""

    @abc.abstractmethod
    def predict_one(self, scores: dict) -> dict:
        """Return the calibrated probability vector for ``scores``."""

    @property
    @abc.abstractmethod
    def classes(self) -> tuple:
        """The classes seen so far, in order of first appearance."""

    def _check_event(self, scores, label, w, method: str = "learn_one"):
        """Validate one event; returns ``(scores, label, w)`` (no state change)."""
        name = type(self).__name__
        if self._logits:
            scores = V.check_real_vector(scores, name, method, "scores")
        else:
            scores = V.check_probability_vector(scores, name, method, "scores")
        label = V.check_class_label(label, name, method, "label")
        w = V.check_weight(w, name, method)
        return scores, label, w

    def _check_batch(self, scores, labels, w, method: str = "learn_many") -> list:
        """Validate a batch (the lengths of ``labels`` and ``w`` against that of
        ``scores``, then every event); returns the list of events ``(scores, label,
        w)`` (no state change)."""
        name = type(self).__name__
        scores = list(scores)
        labels = list(labels)
        if len(labels) != len(scores):
            raise ValueError(
                f"The 'labels' argument of {name}.{method} must have the length of 'scores' "
                f"({len(scores)}). Got {len(labels)} instead."
            )
        ws = [1.0] * len(scores) if w is None else list(w)
        if len(ws) != len(scores):
            raise ValueError(
                f"The 'w' argument of {name}.{method} must have the length of 'scores' "
                f"({len(scores)}). Got {len(ws)} instead."
            )
        return [self._check_event(s, y, wi, method) for s, y, wi in zip(scores, labels, ws)]

    def _check_scores(self, scores, method: str = "predict_one"):
        name = type(self).__name__
        if self._logits:
            return V.check_real_vector(scores, name, method, "scores")
        return V.check_probability_vector(scores, name, method, "scores")

    def _weights_surely_fit(self, w) -> bool:
        """True when events of the weights ``w``, learnt in turn, are surely all
        accepted by the weight rule whatever their scores and labels (a cheap
        sufficient condition, as :meth:`BinaryCalibrator._weights_surely_fit`: a
        :class:`~streamcal.KeyedCalibrator`'s fallback asks it before the key's
        calibrator learns); False when unknown (the default). O(n)."""
        return False

    @staticmethod
    def _merge_unknown(calibrated: dict, scores: dict) -> dict:
        """Combine a calibrated vector over the known classes with the raw probability
        of the classes of ``scores`` it does not cover.

        Classes of ``scores`` missing from ``calibrated`` keep their raw probability;
        the calibrated ones are rescaled to sum to one minus that mass (if the known
        classes' calibrated mass is 0, the rest is spread evenly over them). O(K).
        """
        unknown = {c: p for c, p in scores.items() if c not in calibrated}
        if not unknown:
            return dict(calibrated)
        rest = 1.0 - sum(unknown.values())
        total = sum(calibrated.values())
        if total > 0.0:
            out = {c: p * rest / total for c, p in calibrated.items()}
        else:
            out = {c: rest / len(calibrated) for c in calibrated} if calibrated else {}
        out.update(unknown)
        return out

    def learn_many(self, scores, labels, w=None) -> None:
        """Learn from a batch (a sequence of score dicts and of labels), exactly as a
        loop of ``learn_one`` would; the whole batch is validated first."""
        events = self._check_batch(scores, labels, w, "learn_many")
        self._check_batch_weights([wi for _, _, wi in events], "learn_many")
        for s, y, wi in events:
            self.learn_one(s, y, wi)

    def _check_batch_weights(self, ws: list, method: str) -> None:
        """Raise, before anything is learnt, if the weight rule
        (:mod:`streamcal._validation`) refuses an event of the batch (subclasses
        whose state can refuse a weight override this)."""

    def predict_many(self, scores) -> list[dict]:
        """Calibrated probability vectors for a sequence of score dicts (no learning)."""
        scores = [self._check_scores(s, "predict_many") for s in scores]
        return [self.predict_one(s) for s in scores]

    def _more_tags(self) -> set[str]:
        return {"calibrator", "multiclass"}


# A parameter that is itself a calibrator (the ``base`` of a calibeater, say) is stored as
# its own full snapshot under this key, so it comes back with its learnt state.
_snapshot.nest("__calibrator__", BinaryCalibrator)
_snapshot.nest("__multiclass_calibrator__", MulticlassCalibrator)
