"""The streaming metric interfaces, river-compatible.

A streaming metric speaks river's metric protocol: ``update(y_true, y_pred, w=1.0)``,
``revert(y_true, y_pred, w=1.0)`` (the exact inverse of an update with the same
arguments, so that ``river.utils.Rolling`` can window it), ``get()``,
``bigger_is_better`` and ``works_with(model)``. On top of river, every metric

- validates its input (one template of error messages, from :mod:`streamcal._validation`)
  before touching its state, so a bad event leaves the metric exactly as it was;
- saves and restores like a calibrator: pickle, ``clone()``, and a JSON-safe
  ``to_dict()`` / ``from_dict()`` snapshot;
- returns 0.0 from ``get()`` before any (positive-weight) event, as river's metrics do.

Metrics whose state is not a sum of per-event terms (equal-mass bins, for instance)
cannot revert an event naturally; they raise ``NotImplementedError`` from ``revert`` and
take their own ``window_size`` / ``half_life`` parameters instead (``_revertible =
False``).
"""

from __future__ import annotations

import abc
import inspect
import typing

from river import base as river_base
from river.metrics import base as river_metrics

from streamcal import _validation as V
from streamcal.base import SNAPSHOT_FORMAT, BinaryCalibrator

__all__ = ["BinaryCalibrationMetric", "MetricSnapshot", "StreamingMetric"]

_REGISTRY: dict[str, type] = {}

MetricSnapshot = dict


class StreamingMetric(river_metrics.Metric):
    """Base class of every streamcal metric.

    Subclasses implement ``_reset``, ``update``, ``revert`` (or set ``_revertible =
    False`` and raise), ``get``, ``bigger_is_better``, ``_get_state`` and ``_set_state``.

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

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _REGISTRY[cls.__name__] = cls

    def __init__(self):
        self._reset()

    @abc.abstractmethod
    def _reset(self) -> None:
        """Build the empty state (called by the constructor)."""

    @abc.abstractmethod
    def _get_state(self) -> dict:
        """Return the state as JSON-safe data."""

    @abc.abstractmethod
    def _set_state(self, state: dict) -> None:
        """Restore the state written by ``_get_state``."""

    # ------------------------------------------------------------------ snapshots

    def to_dict(self) -> dict:
        """A JSON-serialisable snapshot of parameters and state; ``from_dict`` restores a
        metric that reports and continues exactly like this one."""
        params = {
            name: V.json_safe_scalar(getattr(self, name))
            for name in inspect.signature(type(self).__init__).parameters
            if name != "self"
        }
        return {
            "class": type(self).__name__,
            "format": SNAPSHOT_FORMAT,
            "params": params,
            "state": self._get_state(),
        }

    @classmethod
    def from_dict(cls, d: dict) -> StreamingMetric:
        """Rebuild a metric from a snapshot written by :meth:`to_dict`.

        Called on :class:`StreamingMetric` itself, the class is looked up by the name in
        the snapshot; called on a subclass, the snapshot must be of that class.
        """
        if not isinstance(d, dict) or not {"class", "params", "state"} <= d.keys():
            raise ValueError(
                "The 'd' argument of from_dict must be a snapshot dict with keys "
                f"'class', 'params' and 'state'. Got {V.format_value(d)} instead."
            )
        if d.get("format", SNAPSHOT_FORMAT) != SNAPSHOT_FORMAT:
            raise ValueError(f"The snapshot format must be {SNAPSHOT_FORMAT}. Got {d.get('format')!r} instead.")
        klass = _REGISTRY.get(d["class"])
        if klass is None or not issubclass(klass, cls):
            raise ValueError(
                f"The 'class' entry of the snapshot must name a subclass of {cls.__name__}. "
                f"Got {d['class']!r} instead."
            )
        obj = klass(**d["params"])
        obj._set_state(d["state"])
        return obj

    # ------------------------------------------------------------------ river glue

    def works_with(self, model) -> bool:
        """Calibrators and river classifiers produce probabilities this metric can score."""
        return isinstance(model, (BinaryCalibrator, river_base.Classifier))

    @property
    def requires_labels(self) -> bool:
        """Probabilities, not predicted labels, are scored (river's flag)."""
        return False

    def __repr__(self):
        value = self.get()
        return f"{type(self).__name__}: {value:{self._fmt}}"


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

    def update(self, y_true, y_pred, w=1.0) -> None:
        """Add one event; O(1) unless the metric says otherwise."""
        name = type(self).__name__
        y = V.check_label(y_true, name, "update", "y_true")
        p = V.check_probability(y_pred, name, "update")
        w = V.check_weight(w, name, "update")
        self._update(y, p, w)

    def revert(self, y_true, y_pred, w=1.0) -> None:
        """Remove one event previously added with the same arguments."""
        name = type(self).__name__
        if not self._revertible:
            raise NotImplementedError(
                f"{name} cannot revert an event; use its window_size or half_life parameter instead."
            )
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
