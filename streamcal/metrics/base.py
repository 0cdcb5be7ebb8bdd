"""The streaming metric interfaces, river-compatible.

A streaming metric speaks river's metric protocol: ``update(y_true, y_pred, w=1.0)``,
``revert(y_true, y_pred, w=1.0)`` (the exact inverse of an update with the same
arguments, so that ``river.utils.Rolling`` can window it), ``get()``,
``bigger_is_better`` and ``works_with(model)``. On top of river, every metric

- validates its input (one template of error messages, from :mod:`streamcal._validation`)
  before touching its state, so a bad event leaves the metric exactly as it was;
- saves and restores like a calibrator: pickle, ``clone()``, and a JSON-safe
  ``to_dict()`` / ``from_dict()`` snapshot;
- returns 0.0 from ``get()`` before any (positive-weight) event, as river's metrics do;
- merges: ``a.merge(b)`` (:meth:`streamcal._merge.Mergeable.merge`) is a new metric equal
  to one metric fed ``a``'s events then ``b``'s, for every metric without a window or a
  half-life (a TypeError says why otherwise). There is no ``a + b``: on river's metrics
  ``+`` builds a ``Metrics`` collection (``Accuracy() + F1()``), and a ``+`` that merged
  would give the same operator two meanings in one pipeline.

Metrics whose state is not a sum of per-event terms (equal-mass bins, for instance)
cannot revert an event naturally; they raise ``NotImplementedError`` from ``revert`` and
take their own ``window_size`` / ``half_life`` parameters instead (``_revertible =
False``).
"""

from __future__ import annotations

import abc
import importlib.abc
import operator
import sys
import typing

from river import base as river_base

from streamcal import _merge, _snapshot
from streamcal import _validation as V
from streamcal.base import BinaryCalibrator

__all__ = ["BinaryCalibrationMetric", "MetricSnapshot", "StreamingMetric", "update_many_each"]

MetricSnapshot = dict


class StreamingMetric(_snapshot.Snapshot, _merge.Mergeable, river_base.Base, abc.ABC):
    """Base class of every streamcal metric.

    It implements river's metric interface (``river.metrics.base.Metric``) and is
    registered as a virtual subclass of it as soon as ``river.metrics`` is imported,
    rather than inheriting from it: importing ``river.metrics`` imports scipy.stats, a
    second of start-up that a replay does not need.

    Subclasses implement ``_reset``, ``update``, ``revert`` (or set ``_revertible =
    False`` and raise), ``get``, ``_get_state`` and ``_set_state``, and keep the number
    of positive-weight events held in ``_n`` (or override :attr:`n_events`); those whose
    bigger values are better (sharpness, AUC) set the class attribute
    :attr:`bigger_is_better` to True. The metrics of the catalogue
    (:mod:`streamcal.metrics.catalogue`) also set :attr:`short_name`,
    :attr:`description` and, for decompositions, :attr:`component_directions`.

    Examples
    --------
    Any concrete metric, here :class:`streamcal.metrics.Brier`:

    >>> import json
    >>> from streamcal.metrics import Brier
    >>> from streamcal.metrics.base import StreamingMetric
    >>> m = Brier()
    >>> for y, p in [(1, 0.8), (0, 0.4), (1, 0.6)]:
    ...     m.update(y, p)
    >>> round(m.get(), 4)
    0.12
    >>> StreamingMetric.from_dict(json.loads(json.dumps(m.to_dict()))).get() == m.get()
    True

    """

    _fmt = ".6f"
    #: whether ``revert`` is the exact inverse of ``update`` (river.utils.Rolling works)
    _revertible: typing.ClassVar[bool] = True
    _registry: typing.ClassVar[dict[str, type]] = {}
    _package = "streamcal.metrics"

    # What the metric is, read by :mod:`streamcal.metrics.catalogue` (the registry, the
    # replay, the command line and the report derive their tables from these).

    #: Whether bigger values are better (river's flag): False, as for scores and
    #: calibration errors, unless the metric says otherwise. A class attribute, so that
    #: the direction is known without building the metric.
    bigger_is_better: typing.ClassVar[bool] = False
    #: The short name of the metric in the catalogue (``"brier"``); None outside it.
    short_name: typing.ClassVar[str | None] = None
    #: Other names the catalogue accepts for the metric (``("confidence_ece",)``).
    aliases: typing.ClassVar[tuple[str, ...]] = ()
    #: One sentence: what the metric measures and its range (and, for a multiclass
    #: metric, which view of the forecast it takes).
    description: typing.ClassVar[str] = ""
    #: The terms of the metric's decomposition that are reported next to its value, in
    #: report order: ``((attribute, bigger_is_better or None), ...)``, None for a term
    #: that does not rank forecasters (an uncertainty term depends on the labels only).
    #: Each attribute is a float property of the metric.
    component_directions: typing.ClassVar[tuple[tuple[str, bool | None], ...]] = ()

    def __init__(self):
        self._reset()

    @abc.abstractmethod
    def _reset(self) -> None:
        """Build the empty state (called by the constructor)."""

    # ------------------------------------------------------------------ river glue

    @property
    def n_events(self) -> int:
        """Number of positive-weight events held."""
        return self._n

    def works_with(self, model) -> bool:
        """Calibrators and river classifiers produce probabilities this metric can score."""
        return isinstance(model, (BinaryCalibrator, river_base.Classifier))

    def _check_revertible(self) -> None:
        """Raise NotImplementedError from ``revert`` unless the metric is revertible."""
        if not self._revertible:
            raise NotImplementedError(
                f"{type(self).__name__} cannot revert an event; use its window_size or "
                "half_life parameter instead."
            )

    @property
    def requires_labels(self) -> bool:
        """Probabilities, not predicted labels, are scored (river's flag)."""
        return False

    @property
    def works_with_weights(self) -> bool:
        """Sample weights are taken into account (river's flag)."""
        return True

    def __add__(self, other):
        """Both metrics in one river ``Metrics`` (``Brier() + ECE()``, ``Brier() +
        river.metrics.LogLoss()``), as river's classification metrics combine: a
        metric of probability forecasts of classes adds to another such metric (river's
        or streamcal's); anything else is a ValueError, as in river."""
        from river.metrics import base as river_metrics  # river's metrics: on use only

        classification = tuple(_CLASSIFICATION_BASES)
        if not (isinstance(self, classification)
                and isinstance(other, river_metrics.ClassificationMetric)):
            raise ValueError(
                f"{type(self).__name__} and {type(other).__name__} metrics are not compatible"
            )
        return river_metrics.Metrics([self, other])

    def is_better_than(self, other) -> bool:
        """Whether this metric's value is better than ``other``'s (river's comparison)."""
        op = operator.gt if self.bigger_is_better else operator.lt
        return op(self.get(), other.get())

    def __gt__(self, other):
        return self.is_better_than(other)

    def __repr__(self):
        value = self.get()
        return f"{type(self).__name__}: {value:{self._fmt}}"

    def __str__(self):
        return repr(self)


#: the bases of the metrics of probability forecasts of classes, registered as river's
#: ``ClassificationMetric`` (:func:`registered_as_classification`)
_CLASSIFICATION_BASES: list = []


def _register(module) -> None:
    """Register the metric bases with river's ``river.metrics.base`` ``module``."""
    module.Metric.register(StreamingMetric)
    for cls in _CLASSIFICATION_BASES:
        module.ClassificationMetric.register(cls)


def registered_as_classification(cls):
    """Class decorator: ``cls`` (a base of classification metrics) becomes a virtual
    subclass of river's ``ClassificationMetric`` when river's metrics are imported
    (at once if they are), as :class:`StreamingMetric` of ``Metric``. river asks that
    class whether a metric scores classifiers: ``river.metrics.LogLoss() + Brier()``
    and the multi-output wrappers do.

    Examples
    --------
    >>> import river.metrics.base
    >>> from streamcal.metrics import ECE
    >>> isinstance(ECE(), river.metrics.base.ClassificationMetric)
    True

    """
    _CLASSIFICATION_BASES.append(cls)
    module = sys.modules.get(_RegisterWithRiver._module)
    if module is not None and hasattr(module, "ClassificationMetric"):
        module.ClassificationMetric.register(cls)
    return cls


class _RegisterWithRiver(importlib.abc.MetaPathFinder):
    """Registers :class:`StreamingMetric` as a virtual subclass of river's ``Metric``
    (and the bases of :func:`registered_as_classification` of ``ClassificationMetric``)
    when ``river.metrics.base`` is imported (at once if it already is), so that
    ``isinstance(metric, river.metrics.base.Metric)`` holds without importing river's
    metrics, and scipy with them, at start-up."""

    _module = "river.metrics.base"

    @classmethod
    def install(cls) -> None:
        module = sys.modules.get(cls._module)
        if module is not None:
            _register(module)
        elif not any(isinstance(f, cls) for f in sys.meta_path):
            sys.meta_path.insert(0, cls())

    def find_spec(self, fullname, path, target=None):
        if fullname != self._module:
            return None
        sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        exec_module = spec.loader.exec_module

        def exec_and_register(module):
            exec_module(module)
            _register(module)

        spec.loader.exec_module = exec_and_register
        return spec


@registered_as_classification
class BinaryCalibrationMetric(StreamingMetric):
    """Base class of metrics of binary probability forecasts.

    ``y_true`` is a binary label (0, 1, False, True, or their numpy / 0.0 / 1.0 forms);
    ``y_pred`` is the predicted probability of the positive class, a real number in
    [0, 1], or river's ``predict_proba_one`` output, a dict whose key ``True`` (or ``1``)
    gives that probability. ``w`` is a finite weight >= 0.

    Subclasses implement ``_update(y, p, w)`` and ``_revert(y, p, w)`` on validated
    floats; :meth:`update` / :meth:`revert` validate first, so a bad event changes
    nothing.

    Examples
    --------
    >>> from streamcal.metrics import Brier
    >>> m = Brier()
    >>> m.update(True, {False: 0.3, True: 0.7})      # river's predict_proba_one output
    >>> round(m.get(), 4)
    0.09

    """

    #: The forecasts the metric scores: binary probabilities.
    task: typing.ClassVar[str] = "binary"

    def update(self, y_true, y_pred, w=1.0) -> None:
        """Add one event; O(1) unless the metric says otherwise."""
        name = type(self).__name__
        y = V.check_label(y_true, name, "update", "y_true")
        p = V.check_probability(y_pred, name, "update")
        w = V.check_weight(w, name, "update")
        self._update(y, p, w)

    def update_many(self, y_true, y_pred, w=None) -> None:
        """Add a batch of events, exactly as a loop of :meth:`update` would.

        ``y_true`` is a sequence of binary labels, ``y_pred`` a sequence of
        probabilities in [0, 1] (floats: the dicts of ``predict_proba_one`` go through
        :meth:`update`), ``w`` optional non-negative weights. The whole batch is
        validated first: a bad element raises an error naming its argument and index,
        and nothing is added. Compiled metrics run it in one pass.

        Examples
        --------
        >>> from streamcal.metrics import Brier
        >>> m = Brier()
        >>> m.update_many([1, 0, 1], [0.8, 0.4, 0.6])
        >>> round(m.get(), 4)
        0.12

        """
        name = type(self).__name__
        p = V.check_scores_array(y_pred, name, "update_many", name="y_pred")
        y = V.check_labels_array(y_true, len(p), name, "update_many", name="y_true")
        ws = V.check_weights_array(w, len(p), name, "update_many")
        self._update_many_validated(y, p, ws)

    def _update_many_validated(self, y, p, w) -> None:
        """Add validated arrays of events (compiled metrics override this)."""
        update = self._update
        for yi, pi, wi in zip(y.tolist(), p.tolist(), w.tolist()):
            update(yi, pi, wi)

    def revert(self, y_true, y_pred, w=1.0) -> None:
        """Remove one event previously added with the same arguments.

        An event the metric cannot hold (nothing held at its forecast, or more weight,
        label-1 or label-0 weight there than held) raises a ValueError and changes
        nothing. The sums are floats kept by subtraction, which does not undo the
        rounding of the addition: reverting an event ``r`` times heavier than the
        events left leaves a residue of about ``r * 1e-16`` of their weight (1e-12
        relative for ``r = 1e4``; weights of 1e17 and 1 leave nothing of the light
        events, and the revert of a light event may then be refused as not held: in
        ``river.utils.Rolling``, keep the weights of one window within about 1e12 of
        each other). ``ROCAUC`` and ``CORP`` are exact there; ECE's own
        ``window_size`` sums its bins again when a residue grows."""
        self._check_revertible()
        name = type(self).__name__
        y = V.check_label(y_true, name, "revert", "y_true")
        p = V.check_probability(y_pred, name, "revert")
        w = V.check_weight(w, name, "revert")
        self._revert(y, p, w)

    @abc.abstractmethod
    def _update(self, y: float, p: float, w: float) -> None:
        """Add a validated event."""

    def _revert(self, y: float, p: float, w: float) -> None:
        """Remove a validated event (revertible metrics override this)."""
        raise NotImplementedError

    def _not_held(self, y: float, p: float) -> ValueError:
        """The error for a revert of an event ``(y, p)`` the metric cannot hold."""
        return ValueError(
            f"The event (y_true={y!r}, y_pred={p!r}) passed to {type(self).__name__}.revert "
            "must be one previously added. Got an event the metric does not hold instead."
        )


def update_many_each(batches, y_true, w=None) -> None:
    """Add one batch of events to several metrics, each with its own predictions:
    ``m.update_many(y_true, y_pred, w)`` for every ``(m, y_pred)`` of ``batches``, in
    order, with ``y_true`` and ``w`` checked once and each ``y_pred`` array once (a
    replay scores every calibrator's predictions with several metrics, run after run).

    Every input of the binary metrics is checked before any metric is updated: a bad
    element raises the error ``update_many`` would raise (naming the first metric given
    that array) and changes nothing. After the checks it is the loop of ``update_many``
    calls, each metric atomic as there (a weight that a metric's sums cannot take
    stops the loop at that metric, the ones before it updated). Other objects (a
    subclass with its own ``update_many``, a river metric) get their ``update_many``
    called as it is.

    Examples
    --------
    >>> from streamcal.metrics import ECE, Brier
    >>> a, b, c = Brier(), ECE(), Brier()
    >>> update_many_each([(a, [0.8, 0.4]), (b, [0.8, 0.4]), (c, [0.5, 0.5])], [1, 0])
    >>> round(a.get(), 4), round(b.get(), 4), round(c.get(), 4)
    (0.1, 0.3, 0.25)

    """
    checked = {}  # id(y_pred) -> (the array given, its checked form)
    plan, y, ws = [], None, None
    for m, p in batches:
        if type(m).update_many is not BinaryCalibrationMetric.update_many:
            plan.append((m, p, False))
            continue
        name = type(m).__name__
        seen = checked.get(id(p))
        if seen is None:
            seen = checked[id(p)] = (p, V.check_scores_array(p, name, "update_many", name="y_pred"))
        if y is None:
            y = V.check_labels_array(y_true, len(seen[1]), name, "update_many", name="y_true")
            ws = V.check_weights_array(w, len(seen[1]), name, "update_many")
        elif len(seen[1]) != len(y):
            V.check_labels_array(y_true, len(seen[1]), name, "update_many", name="y_true")
        plan.append((m, seen[1], True))
    for m, p, validated in plan:
        if validated:
            m._update_many_validated(y, p, ws)
        elif w is None:
            m.update_many(y_true, p)
        else:
            m.update_many(y_true, p, w)


_RegisterWithRiver.install()
