"""One object per key, least recently used first (private): the bookkeeping shared by
:class:`streamcal.KeyedCalibrator` and :class:`streamcal.monitor.KeyedCalibrationMonitor`.

A :class:`KeyedStore` holds the objects (calibrators, monitors) in an ordered dict,
least recently used first, makes a fresh copy of a template for a new key
(:class:`Spawner`), evicts the least recently used key when ``max_keys`` is reached,
and writes and reads its ``[key, snapshot]`` pairs. The owner keeps the per-event fast
path (a dict lookup and a move) on :attr:`KeyedStore.items` itself.

**Keys** are JSON scalars: str, int, bool or finite float (numpy scalars are taken as
their Python twins, :func:`streamcal._validation.check_key`), so that snapshots can hold
them. They compare as dict keys do: ``1``, ``1.0`` and ``True`` are one key (the first
spelling seen is kept).
"""

from __future__ import annotations

import collections
import inspect

from streamcal import _validation as V
from streamcal._kernel_pickle import SlotsPickle

__all__ = ["KeyedStore", "Spawner", "check_max_keys"]

_SCALARS = (type(None), bool, int, float, str)


def _immutable(value) -> bool:
    if isinstance(value, tuple):
        return all(_immutable(v) for v in value)
    return isinstance(value, _SCALARS)


class Spawner:
    """Makes fresh, unfitted copies of ``template`` (a river estimator), equal to
    ``template.clone()``; picklable.

    When every constructor argument is an immutable scalar (or a tuple of them) the
    copies are built by the constructor directly, which skips ``clone()``'s recursive
    deep copy of the parameters (about ten times faster: a new key costs one
    constructor call); otherwise ``clone()`` is used.

    Examples
    --------
    >>> from streamcal import OnlineIsotonic
    >>> new = Spawner(OnlineIsotonic(resolution=0.01))
    >>> fresh = new()
    >>> fresh.resolution, fresh.n_events
    (0.01, 0)

    """

    __slots__ = ("klass", "params", "template")

    def __init__(self, template):
        names = [n for n in inspect.signature(type(template).__init__).parameters if n != "self"]
        params = {n: getattr(template, n) for n in names}
        self.template = template
        self.klass = type(template)
        self.params = params if all(_immutable(v) for v in params.values()) else None

    def __call__(self):
        if self.params is not None:
            return self.klass(**self.params)
        return self.template.clone()

    def __getstate__(self):
        return {"template": self.template}

    def __setstate__(self, state):
        self.__init__(state["template"])


def check_max_keys(owner: str, max_keys) -> None:
    """Validate the ``max_keys`` parameter of ``owner``: an int >= 1 or None."""
    V.check_optional_int_param(owner, "max_keys", max_keys, 1)


class KeyedStore(SlotsPickle):
    """The objects of the keys, least recently used first, at most ``max_keys``.

    Parameters
    ----------
    owner
        The name of the owning class, for error messages.
    max_keys
        At most this many keys (an int >= 1), or None for no bound.

    Examples
    --------
    >>> store = KeyedStore("Owner", max_keys=2)
    >>> for key in ("a", "b", "a", "c"):
    ...     if store.items.get(key) is None:
    ...         store.add(key, key.upper())
    ...     else:
    ...         store.items.move_to_end(key)
    >>> list(store.items), store.n_evicted
    (['a', 'c'], 1)

    """

    __slots__ = ("items", "max_keys", "n_evicted", "owner")

    def __init__(self, owner: str, max_keys: int | None):
        self.owner = owner
        self.max_keys = max_keys
        self.items: collections.OrderedDict = collections.OrderedDict()
        self.n_evicted = 0

    @classmethod
    def adopt(cls, state: dict, owner: str, items_attr: str) -> None:
        """Rewrite the ``__dict__`` ``state`` of a keyed object pickled before the store
        existed (its items under ``items_attr``, its count under ``_n_evicted``) to hold
        a store instead; a current state is left as it is."""
        if "_store" in state or items_attr not in state:
            return
        store = cls(owner, state.get("max_keys"))
        store.items = state.pop(items_attr)
        store.n_evicted = state.pop("_n_evicted", 0)
        state["_store"] = store

    def add(self, key, obj) -> None:
        """Store ``obj`` under the new ``key``, most recently used, evicting the least
        recently used key first when ``max_keys`` are held. O(1)."""
        items = self.items
        if self.max_keys is not None and len(items) >= self.max_keys:
            items.popitem(last=False)
            self.n_evicted += 1
        items[key] = obj

    def last(self):
        """The most recently used object (None when empty). O(1)."""
        return next(reversed(self.items.values()), None)

    def check_like(self, obj, template, what: str):
        """``obj`` (restored from a snapshot) if it has the class and parameters of
        ``template``, else a ValueError naming ``what`` (e.g. "calibrator of key 'a'")."""
        if type(obj) is not type(template) or obj._get_params() != template._get_params():
            raise ValueError(
                f"The {what} of a {self.owner} snapshot must have the template's class "
                f"and parameters. Got {V.format_value(obj)} instead."
            )
        return obj

    def entries(self) -> list:
        """The ``[key, obj.to_dict()]`` pairs, least recently used first."""
        return [[k, v.to_dict()] for k, v in self.items.items()]

    def read_entries(self, entries, restore, what: str) -> collections.OrderedDict:
        """The objects of the ``[key, snapshot]`` pairs :meth:`entries` wrote, each
        through ``restore(key, snapshot)``, in their order; nothing is changed. Raises,
        naming the first bad pair, unless ``entries`` is a list of at most
        ``max_keys`` pairs with distinct keys (``what`` names the object in the
        messages, e.g. ``"calibrator"``)."""
        owner = self.owner
        if not isinstance(entries, list) or (self.max_keys is not None and len(entries) > self.max_keys):
            raise ValueError(
                f"The 'keys' entry of a {owner} snapshot must be a list of at most "
                f"max_keys={self.max_keys} [key, {what}] pairs. Got {V.format_value(entries)} instead."
            )
        out: collections.OrderedDict = collections.OrderedDict()
        for entry in entries:
            if not isinstance(entry, (list, tuple)) or len(entry) != 2:
                raise ValueError(
                    f"Each item of the 'keys' entry of a {owner} snapshot must be a "
                    f"[key, {what} snapshot] pair. Got {V.format_value(entry)} instead."
                )
            key = entry[0]
            if type(key) not in (str, int, bool, float):
                raise TypeError(
                    f"A key of a {owner} snapshot must be {V.KEY_DOMAIN}. Got {V.format_value(key)} instead."
                )
            key = V.check_key(key, owner, "from_dict")
            if key in out:
                raise ValueError(
                    f"The keys of a {owner} snapshot must be distinct (as dict keys). "
                    f"Got {key!r} twice instead."
                )
            out[key] = restore(key, entry[1])
        return out
