"""The merge protocol shared by calibrators and metrics (private).

:class:`Mergeable` is a base of the calibrator families (:class:`streamcal.base.BinaryCalibrator`,
:class:`streamcal.base.MulticlassCalibrator`) and of :class:`streamcal.metrics.base.StreamingMetric`.
It gives them one public method, :meth:`Mergeable.merge`, which checks what every merge
checks (the other object's class, equal parameters) and hands the work to the class's
``_merge``.

A class whose state is a sum of per-event statistics (per score, per bin, per class)
implements ``_merge`` and sets ``_merge_refusal = None``; its merge is then *order
free*: the merged state is that of one object fed the two streams in any interleaving,
``a``'s events then ``b``'s included. Every other class keeps a ``_merge_refusal``
string that says why its state cannot be merged exactly, and ``merge`` raises a
TypeError quoting it. Windows and forgetting fall in the second group: what they hold
depends on how the two streams interleave, and the state records only each object's
own event count, not a time shared with the other object.
"""

from __future__ import annotations

import copy
import inspect
import typing

import numpy as np

from streamcal import _validation as V

__all__ = ["Mergeable", "add_lists", "merge_keyed", "order_refusal"]

#: the reason given by a window or a forgetting clock (see the module docstring)
ORDER_REFUSAL = (
    "with {what}, the state depends on how the two streams interleave, and it records "
    "only each object's own event count, not an event time shared with the other, so "
    "no merge can know which events are the newest"
)


def order_refusal(obj, *params: str) -> str | None:
    """The ``_merge_refusal`` of an object that forgets: :data:`ORDER_REFUSAL` naming the
    first of ``params`` (window and forgetting parameters) that ``obj`` sets (not None),
    or None when it sets none of them.

    Examples
    --------
    >>> class Metric:
    ...     window_size, half_life = None, 20.0
    >>> order_refusal(Metric(), "window_size", "half_life").startswith("with half_life,")
    True
    >>> order_refusal(Metric(), "window_size") is None
    True

    """
    for name in params:
        if getattr(obj, name) is not None:
            return ORDER_REFUSAL.format(what=name)
    return None


class Mergeable:
    """Mixin of the family base classes: :meth:`merge`.

    Subclasses that can merge set ``_merge_refusal = None`` (or make it a property
    that is None for the parameters that allow it) and implement ``_merge(other)``,
    which returns a new object and may assume ``other`` is of the same class with
    equal parameters. ``_merge_state`` helpers build the new object from a merged
    ``_get_state()`` dict with :meth:`_from_state`.
    """

    #: Why ``merge`` is refused (a clause completing "X cannot be merged exactly: "),
    #: or None when the class merges. Every non-mergeable class gives its own reason.
    _merge_refusal: typing.ClassVar[str | None] = (
        "its state is not a sum of per-event statistics"
    )

    def merge(self, other):
        """Combine two objects that learnt from two streams into a new one.

        The result is what one object would hold after seeing both streams: ``self``'s
        events, then ``other``'s (for the classes that merge, the order does not
        matter: their state is a sum of per-event statistics, kept per score, per bin
        or per class). Counts are exact; float sums equal those of one object up to
        the order of the additions (about 1e-16 relative per sum); classes keeping
        exact integer sums merge bit for bit. ``self`` and ``other`` are left
        unchanged. The cost depends on the state, never on the events seen (each
        class's ``_merge`` states its own):

        - ``OnlineIsotonic``, ``VennAbers``, ``CORP``: O(m log m) for ``m`` distinct
          scores (grid cells) held by the two, the block store rebuilt by PAV;
        - ``HistogramBinning``, ``ECE`` (uniform), ``Sharpness``,
          ``MurphyDecomposition``, ``TrackingCalibeater``: O(n_bins);
          ``MultiCalibeater``: O(joint bins held);
        - ``ECE`` (quantile), ``CalibrationRefinement``: O(m) distinct forecasts;
          ``ROCAUC``: O(m L) (``L`` limbs of its exact sums);
        - ``Brier``, ``LogLoss``, ``MulticlassBrier``, ``CrossEntropy``: O(1);
        - ``ConfidenceECE``: O(n_bins); ``TopLabelECE``, ``ClasswiseECE``: O(classes x
          n_bins); ``TECE``: O(entries held); ``TopLabel``: one merge of its binary
          calibrator per class; ``PathECE``: O(predicted nodes x depth x n_bins);
          ``PathCalibrator``: one HistogramBinning merge per node of each predicted
          leaf's path.

        Parameters
        ----------
        other
            An object of the same class with the same parameters.

        Returns
        -------
        A new object of the same class.

        Raises
        ------
        TypeError
            If the class (or these parameters: a window, forgetting, an expert that
            learns) cannot be merged exactly, saying why; or if ``other`` is not of the
            same class.
        ValueError
            If a parameter differs between the two objects (the error names it).

        Examples
        --------
        Two workers each calibrate a part of the stream; merged, they hold exactly what
        one calibrator fed the whole stream would:

        >>> from streamcal import OnlineIsotonic, OnlinePlatt
        >>> a, b, whole = OnlineIsotonic(), OnlineIsotonic(), OnlineIsotonic()
        >>> a.learn_many([0.1, 0.4, 0.7], [0, 1, 0])
        >>> b.learn_many([0.2, 0.4, 0.9], [0, 0, 1])
        >>> whole.learn_many([0.1, 0.4, 0.7, 0.2, 0.4, 0.9], [0, 1, 0, 0, 0, 1])
        >>> merged = a.merge(b)
        >>> [merged.predict_one(s) for s in (0.1, 0.5, 0.95)]
        [0.0, 0.3333333333333333, 1.0]
        >>> [whole.predict_one(s) for s in (0.1, 0.5, 0.95)]
        [0.0, 0.3333333333333333, 1.0]
        >>> a.n_events, merged.n_events
        (3, 6)

        Parameters must match, and a state that is not a sum of per-event statistics
        is refused:

        >>> OnlineIsotonic(resolution=0.1).merge(OnlineIsotonic(resolution=0.05))
        Traceback (most recent call last):
        ...
        ValueError: The 'resolution' parameter of the two OnlineIsotonic objects to merge must be equal. Got 0.1 and 0.05 instead.
        >>> OnlinePlatt().merge(OnlinePlatt())  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        TypeError: OnlinePlatt cannot be merged exactly: its parameters are fitted by ...

        """
        name = type(self).__name__
        reason = self._merge_refusal
        if reason is not None:
            raise TypeError(f"{name} cannot be merged exactly: {reason}.")
        if type(other) is not type(self):
            raise TypeError(
                f"The 'other' argument of {name}.merge must be a {name}. "
                f"Got {V.format_value(other)} instead."
            )
        mine, theirs = merge_params(self), merge_params(other)
        for key, value in mine.items():
            if theirs[key] != value:
                raise ValueError(
                    f"The {key!r} parameter of the two {name} objects to merge must be "
                    f"equal. Got {value!r} and {theirs[key]!r} instead."
                )
        return self._merge(other)

    def _merge(self, other):
        """The merged object (``other`` checked by :meth:`merge`)."""
        raise NotImplementedError

    def _from_state(self, state: dict):
        """A new object with this one's parameters and ``state`` (a ``_get_state()``
        dict), through the class's own ``_set_state``."""
        new = self.clone()
        new._set_state(state)
        return new


def merge_params(obj) -> dict:
    """The constructor arguments of ``obj`` as comparable values: a nested object (a
    calibrator given as a parameter) by its class and its own parameters, not its
    learnt state."""
    out = {}
    for name in inspect.signature(type(obj).__init__).parameters:
        if name == "self":
            continue
        value = getattr(obj, name)
        if isinstance(value, Mergeable):
            value = (type(value).__name__, merge_params(value))
        out[name] = value
    return out


def add_lists(a: list, b: list) -> list:
    """Element-wise sums of two equally long lists of numbers (ints stay ints)."""
    return [x + y for x, y in zip(a, b, strict=True)]


def merge_keyed(a, b) -> list:
    """Merge two lists of rows ``[key, v1, v2, ...]`` (each with distinct keys) into one
    row per key, values summed (``a``'s first, then ``b``'s), keys in order of first
    appearance (``a``'s, then those only ``b`` holds). O(m_a + m_b).

    Examples
    --------
    >>> merge_keyed([[0.5, 1.0, 2], [0.1, 1.0, 1]], [[0.5, 2.0, 1], [0.9, 3.0, 1]])
    [[0.5, 3.0, 3], [0.1, 1.0, 1], [0.9, 3.0, 1]]

    """
    out: dict = {}
    for row in a:
        out[row[0]] = list(row)
    for row in b:
        mine = out.get(row[0])
        if mine is None:
            out[row[0]] = list(row)
        else:
            out[row[0]] = [mine[0], *(x + y for x, y in zip(mine[1:], row[1:], strict=True))]
    return list(out.values())


def merge_by_key(a: dict, b: dict, both, one=copy.deepcopy) -> dict:
    """Merge two dicts of per-key values: ``both(x, y)`` where both hold the key, else
    ``one(x)`` of the side that holds it (default: a deep copy); keys in order of first
    appearance (``a``'s, then those only ``b`` holds). The values are not shared with
    ``a`` or ``b`` (``both`` and ``one`` must return new ones). The per-class sums of
    the multiclass metrics, PathECE's bins and the path calibrators' binners merge
    through it. O(keys) calls.

    Examples
    --------
    >>> merge_by_key({"a": [1], "c": [2]}, {"b": [5], "a": [10]}, lambda x, y: [x[0] + y[0]])
    {'a': [11], 'c': [2], 'b': [5]}

    """
    out = {k: (both(v, b[k]) if k in b else one(v)) for k, v in a.items()}
    for k, v in b.items():
        if k not in out:
            out[k] = one(v)
    return out


def merge_cells(a: tuple, b: tuple) -> tuple:
    """Merge two sets of cells ``(xs, ws, ss, ns)`` (numpy arrays, distinct sorted
    keys each): one cell per key, sums ``a``'s then ``b``'s. O(m log m) in numpy."""
    xs = np.concatenate([a[0], b[0]])
    ux, inv = np.unique(xs, return_inverse=True)
    m = len(ux)
    return (
        ux,
        np.bincount(inv, weights=np.concatenate([a[1], b[1]]), minlength=m),
        np.bincount(inv, weights=np.concatenate([a[2], b[2]]), minlength=m),
        np.bincount(inv, weights=np.concatenate([a[3], b[3]]), minlength=m).astype(np.int64),
    )
