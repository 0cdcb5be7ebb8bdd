"""Class labels, shared by the multiclass calibrators, metrics and monitors (private).

The one home of:

- how a class label is written into a snapshot and read back (:func:`encode_label`,
  :func:`decode_label`; a dict keyed by class as :func:`encode_by_class` pairs);
- which class a forecast puts on top (:func:`top_class`);
- the two ways an object keeps the classes it has met: :class:`ClassIndex`, append-only,
  each class with its index (the calibrators, whose fitted tables are indexed by it),
  and :class:`ClassCounts`, each class with the number of held events naming it (the
  metrics, whose windows forget a class when its last event is reverted).

A class label is any hashable value a stream uses: str, int, float, bool, None, a numpy
scalar, or a tuple of these. Snapshots store it as JSON data (:func:`encode_label`);
equal labels decode to one shared object, so a restored object holds one object per
class, as the saved one did.

Examples
--------
>>> encode_label(("rain", 2)), decode_label({"tuple": ["rain", 2]}, {})
({'tuple': ['rain', 2]}, ('rain', 2))
>>> top_class({"dry": 0.4, "rain": 0.6})
('rain', 0.6)

"""

from __future__ import annotations

from streamcal import _json

__all__ = [
    "ClassCounts",
    "ClassIndex",
    "decode_by_class",
    "decode_label",
    "encode_by_class",
    "encode_label",
    "top_class",
]


def top_class(p: dict):
    """The first key of ``p`` with the largest probability, and that probability.

    Ties go to the key first in the dict's order, what ``max(p, key=p.get)`` returns
    (as river's classifiers do), so the forecast itself breaks them. An empty ``p``
    gives ``(None, -1.0)``. O(len(p)).

    Examples
    --------
    >>> top_class({"a": 0.5, "b": 0.5}), top_class({})
    (('a', 0.5), (None, -1.0))

    """
    best = None
    h = -1.0
    for c, pc in p.items():
        if pc > h:
            best = c
            h = pc
    return best, h


def encode_label(label):
    """A class label as JSON data: tuples become ``{"tuple": [...]}``, numpy scalars
    their Python twins; str, int, float, bool and None pass unchanged.

    Examples
    --------
    >>> import numpy as np
    >>> encode_label((np.int64(1), "a")), encode_label(None)
    ({'tuple': [1, 'a']}, None)

    """
    return _json.encode(label, tuples="tag")


def decode_label(data, memo: dict):
    """The label :func:`encode_label` wrote; equal labels decode to one shared object
    (kept in ``memo``), as they usually are one object in the state that was saved.

    Raises KeyError or TypeError on data no label encodes to (a dict without ``"tuple"``,
    or one holding an unhashable value).

    Examples
    --------
    >>> memo = {}
    >>> a = decode_label({"tuple": [1, "a"]}, memo)
    >>> a, a is decode_label({"tuple": [1, "a"]}, memo)
    ((1, 'a'), True)

    """
    label = (
        tuple(decode_label(x, memo) for x in data["tuple"])
        if isinstance(data, dict)
        else data
    )
    return memo.setdefault(label, label)


def encode_by_class(by_class: dict, encode) -> list:
    """A dict keyed by class label as JSON data, ``[[label, encode(value)], ...]`` in the
    dict's order (a JSON object would turn int labels into strings).

    Examples
    --------
    >>> encode_by_class({1: 2.0, ("a",): 3.0}, float)
    [[1, 2.0], [{'tuple': ['a']}, 3.0]]

    """
    return [[encode_label(c), encode(v)] for c, v in by_class.items()]


def decode_by_class(pairs, decode, memo: dict) -> dict:
    """The dict :func:`encode_by_class` wrote, its values through ``decode``; labels are
    shared through ``memo`` (see :func:`decode_label`).

    Examples
    --------
    >>> decode_by_class([[1, 2.0], [{"tuple": ["a"]}, 3.0]], float, {})
    {1: 2.0, ('a',): 3.0}

    """
    return {decode_label(c, memo): decode(v) for c, v in pairs}


class ClassIndex:
    """Mixin: the classes met, append-only, in order of first appearance.

    ``_classes`` maps each class to its index in ``_class_list``. Every label the state
    holds is the object in ``_class_list`` (so snapshots, which share equal labels,
    restore the state exactly). The owner calls :meth:`_reset_classes` in its
    ``_reset``.

    Examples
    --------
    >>> idx = ClassIndex()
    >>> idx._reset_classes()
    >>> idx._discover({"a": 0.7, "b": 0.3}, "c")
    >>> idx.classes, idx._classes["c"], idx._classes_state()
    (('a', 'b', 'c'), 2, ['a', 'b', 'c'])

    """

    def _reset_classes(self) -> None:
        self._classes: dict = {}
        self._class_list: list = []

    def _discover(self, scores: dict, label) -> None:
        """Add the classes of an event not met before: the keys of ``scores``, then
        ``label`` (O(K))."""
        index = self._classes
        for k in scores:
            if k not in index:
                index[k] = len(self._class_list)
                self._class_list.append(k)
        if label not in index:
            index[label] = len(self._class_list)
            self._class_list.append(label)

    @property
    def classes(self) -> tuple:
        """The classes seen so far, as labels or keys of ``scores``, in order of
        first appearance."""
        return tuple(self._class_list)

    def _classes_state(self) -> list:
        return [encode_label(c) for c in self._class_list]

    @staticmethod
    def _validate_classes(data, check, where: str = "state['classes']") -> list:
        """The labels of a snapshot's list of classes, distinct, or the error naming
        the first bad one."""
        memo: dict = {}
        labels = []
        for i, c in enumerate(check.list(data, where, what="class labels")):
            try:
                label = decode_label(c, memo)
            except (KeyError, TypeError):
                label = None
                check.fail(f"{where}[{i}]", "a class label (a str, number, bool, None or {'tuple': [...]})", c)
            check.require(label not in labels, f"{where}[{i}]", "a class label not listed before", c)
            labels.append(label)
        return labels

    def _load_classes(self, data, memo: dict) -> None:
        self._class_list = [decode_label(c, memo) for c in data]
        self._classes = {c: i for i, c in enumerate(self._class_list)}


class ClassCounts:
    """Mixin: the classes held, each with the number of held events that name it (as
    ``y_true`` or as a key of ``y_pred``), in order of first appearance, in ``_refs``.

    A class whose events have all been reverted is forgotten, so a windowed metric knows
    exactly the classes of its window. The owner sets ``_refs = {}`` in its ``_reset``.

    Examples
    --------
    >>> counts = ClassCounts()
    >>> counts._refs = {}
    >>> counts._mention("a", {"a": 0.6, "b": 0.4}); counts._mention("c", {"a": 1.0})
    >>> counts.classes, counts._refs["a"]
    (('a', 'b', 'c'), 2)
    >>> counts._unmention("a", {"a": 0.6, "b": 0.4}), counts.classes
    (['b'], ('a', 'c'))

    """

    def _mention(self, y, p: dict) -> None:
        refs = self._refs
        for c in p:
            refs[c] = refs.get(c, 0) + 1
        if y not in p:
            refs[y] = refs.get(y, 0) + 1

    def _held(self, y, p: dict) -> bool:
        refs = self._refs
        return y in refs and all(c in refs for c in p)

    def _unmention(self, y, p: dict) -> list:
        """Decrement the counts; return the classes forgotten."""
        refs = self._refs
        gone = []
        for c in p if y in p else (*p, y):
            left = refs[c] - 1
            if left:
                refs[c] = left
            else:
                del refs[c]
                gone.append(c)
        return gone

    @property
    def classes(self) -> tuple:
        """The classes held, in order of first appearance."""
        return tuple(self._refs)
