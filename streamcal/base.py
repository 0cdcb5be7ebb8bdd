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
import typing

import numpy as np
from river import base

from streamcal import _snapshot
from streamcal import _validation as V

__all__ = ["SNAPSHOT_FORMAT", "BinaryCalibrator"]

#: Version tag written into every snapshot made by :meth:`BinaryCalibrator.to_dict`.
SNAPSHOT_FORMAT = _snapshot.SNAPSHOT_FORMAT


class BinaryCalibrator(_snapshot.Snapshot, base.Estimator):
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
    _registry: typing.ClassVar[dict[str, type]] = {}

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
_snapshot.nest("__calibrator__", BinaryCalibrator)
