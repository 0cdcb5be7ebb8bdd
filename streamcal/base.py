"""The calibrator interfaces.

A *binary calibrator* learns from one ``(score, label)`` pair at a time and maps a raw
score in [0, 1] to a calibrated probability in [0, 1], in the style of river:
``learn_one`` returns None, parameters are stored under their own names, state is built
by ``_reset()``, and ``clone()`` / ``repr`` come from the parameters.

Every calibrator can be saved and restored three ways: ``pickle``, ``clone()`` (a fresh,
unfitted copy) and ``to_dict()`` / ``from_dict()``, a JSON-safe snapshot of the whole
state that restores exactly (floats survive ``json`` exactly because Python writes the
shortest repr that round-trips).
"""

from __future__ import annotations

import abc
import inspect
import typing

import numpy as np
from river import base

from streamcal import _validation as V

__all__ = ["BinaryCalibrator", "SNAPSHOT_FORMAT"]

#: Version tag written into every snapshot made by :meth:`BinaryCalibrator.to_dict`.
SNAPSHOT_FORMAT = 1

_REGISTRY: dict[str, type] = {}


class BinaryCalibrator(base.Estimator):
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
    _bounded_memory_params: typing.ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _REGISTRY[cls.__name__] = cls

    # ------------------------------------------------------------------ interface

    @abc.abstractmethod
    def _reset(self) -> None:
        """Build the learnt state from scratch (called by the constructor)."""

    @abc.abstractmethod
    def learn_one(self, score: float, label: bool | int, w: float = 1.0) -> None:
        """Update the calibrator with one labelled score."""

    @abc.abstractmethod
    def predict_one(self, score: float) -> float:
        """Return the calibrated probability for ``score``."""

    @abc.abstractmethod
    def _get_state(self) -> dict:
        """Return the learnt state as JSON-safe data."""

    @abc.abstractmethod
    def _set_state(self, state: dict) -> None:
        """Restore the learnt state written by ``_get_state``."""

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
        name = type(self).__name__
        s = V.check_scores_array(scores, name, "learn_many")
        y = V.check_labels_array(labels, len(s), name, "learn_many")
        ws = V.check_weights_array(w, len(s), name, "learn_many")
        self._learn_many_validated(s, y, ws)

    def _learn_many_validated(
        self, scores: np.ndarray, labels: np.ndarray, w: np.ndarray
    ) -> None:
        for s, y, wi in zip(scores.tolist(), labels.tolist(), w.tolist()):
            self.learn_one(s, y, wi)

    def predict_many(self, scores) -> np.ndarray:
        """Return calibrated probabilities for a batch of scores (no learning)."""
        s = V.check_scores_array(scores, type(self).__name__, "predict_many")
        return self._predict_many_validated(s)

    def _predict_many_validated(self, scores: np.ndarray) -> np.ndarray:
        return np.array(
            [self.predict_one(x) for x in scores.tolist()], dtype=np.float64
        )

    # ------------------------------------------------------------------ snapshots

    def to_dict(self) -> dict:
        """Return a JSON-serialisable snapshot of parameters and the whole learnt state.

        ``type(self).from_dict(self.to_dict())`` (or ``BinaryCalibrator.from_dict``)
        restores a calibrator that predicts and continues learning exactly like this one.
        """
        return {
            "class": type(self).__name__,
            "format": SNAPSHOT_FORMAT,
            "params": {
                name: _encode_param(value)
                for name, value in self._param_values().items()
            },
            "state": self._get_state(),
        }

    def _param_values(self) -> dict:
        """The constructor arguments as stored (nested calibrators as objects)."""
        return {
            name: getattr(self, name)
            for name in inspect.signature(type(self).__init__).parameters
            if name != "self"
        }

    @classmethod
    def from_dict(cls, d: dict) -> BinaryCalibrator:
        """Rebuild a calibrator from a snapshot written by :meth:`to_dict`.

        Called on :class:`BinaryCalibrator` itself, the class is looked up by the name
        stored in the snapshot; called on a subclass, the snapshot must be of that class.
        """
        if not isinstance(d, dict) or not {"class", "params", "state"} <= d.keys():
            raise ValueError(
                "The 'd' argument of from_dict must be a snapshot dict with keys "
                f"'class', 'params' and 'state'. Got {V.format_value(d)} instead."
            )
        if d.get("format", SNAPSHOT_FORMAT) != SNAPSHOT_FORMAT:
            raise ValueError(
                f"The snapshot format must be {SNAPSHOT_FORMAT}. Got {d.get('format')!r} instead."
            )
        klass = _REGISTRY.get(d["class"])
        if klass is None or not issubclass(klass, cls):
            raise ValueError(
                f"The 'class' entry of the snapshot must name a subclass of {cls.__name__}. "
                f"Got {d['class']!r} instead."
            )
        obj = klass(
            **{name: _decode_param(value) for name, value in d["params"].items()}
        )
        obj._set_state(d["state"])
        return obj

    # ------------------------------------------------------------------ river glue

    @property
    def _supervised(self) -> bool:
        return True

    def _more_tags(self) -> set[str]:
        tags = {"calibrator"}
        if self._monotone:
            tags.add("monotone")
        return tags


# A parameter that is itself a calibrator (the ``base`` of a calibeater, say) is stored as
# its own full snapshot under this key, so it comes back with its learnt state.
_NESTED_KEY = "__calibrator__"


def _encode_param(value):
    if isinstance(value, BinaryCalibrator):
        return {_NESTED_KEY: value.to_dict()}
    if isinstance(value, np.generic):  # numpy scalars as given by the user: JSON-safe twins
        return V.json_safe_scalar(value)
    if isinstance(value, tuple):
        return [_encode_param(v) for v in value]
    return value


def _decode_param(value):
    if isinstance(value, dict) and set(value) == {_NESTED_KEY}:
        return BinaryCalibrator.from_dict(value[_NESTED_KEY])
    if isinstance(value, list):
        return tuple(_decode_param(v) for v in value)
    return value
