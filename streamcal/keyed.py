"""One calibrator per key: per-segment calibration with bounded memory.

A deployment often calibrates per segment (per tenant, country, device, model
version): :class:`KeyedCalibrator` holds one copy of a calibrator per key, created on
the key's first event, and forgets the least recently used key when a bound on the
number of keys is reached. The keyed drift monitor is
:class:`streamcal.monitor.KeyedCalibrationMonitor`.
"""

from __future__ import annotations

import copy

import types
import typing

from river import base as river_base

from streamcal import _snapshot
from streamcal import _validation as V
from streamcal._kernel_pickle import KernelShellPickle
from streamcal._keyed_kernel import KeyedKernel, compiled_logistic
from streamcal._keyed_store import KeyedStore, Spawner, check_max_keys
from streamcal.base import BinaryCalibrator, MulticlassCalibrator

__all__ = ["KeyedCalibrator", "Spawner"]

_NAME = "KeyedCalibrator"
class KeyedCalibrator(KeyedKernel, KernelShellPickle, _snapshot.Snapshot, river_base.Base):
    """One calibrator per key, created on the key's first event; at most ``max_keys``
    of them, the least recently used forgotten first.

    ``learn_one(key, score, label, w)`` updates the calibrator of ``key`` (a fresh,
    unfitted copy of ``calibrator`` the first time the key is seen);
    ``predict_one(key, score)`` predicts with it. A key that has no calibrator (never
    seen, or evicted) predicts with the shared fallback calibrator when ``fallback`` is
    True (a copy of ``calibrator`` that learns from every event, whatever its key),
    else with a fresh copy of ``calibrator``, that is the score itself for the binary
    calibrators (their cold start).

    With a :class:`~streamcal.base.MulticlassCalibrator` template, scores are dicts
    class -> probability and predictions dicts, as for the template.

    Parameters
    ----------
    calibrator
        The template, a binary or multiclass calibrator; it is never updated (each key
        gets a fresh copy, as ``calibrator.clone()`` would make).
    max_keys
        At most this many keys hold a calibrator (an int >= 1), or None for no bound.
        When a new key arrives and the bound is reached, the key whose latest
        ``learn_one`` is the oldest is evicted (least recently used, LRU; counted in
        :attr:`n_evicted`); if it comes back, it starts again from a fresh calibrator.
        Memory is then ``max_keys`` calibrators (plus the fallback).
    fallback
        Keep a shared calibrator, learnt on all events, to predict for keys that have
        no calibrator of their own.

    Attributes
    ----------
    calibrators
        A read-only view key -> calibrator, least recently used first.
    fallback_calibrator
        The shared calibrator (None unless ``fallback``).
    n_evicted
        The number of evictions so far.

    Notes
    -----
    **Keys** are JSON scalars: str, int, bool or finite float (numpy scalars are taken
    as their Python twins), so that snapshots can hold them. They compare as dict keys
    do: ``1``, ``1.0`` and ``True`` are one key (the first spelling seen is kept).

    **Recency** is the order of ``learn_one`` calls: ``predict_one`` changes no state,
    so a key that is only queried, never labelled, ages and can be evicted. In a
    prequential stream (predict, then learn, each event) this is the order of use.

    **Bad input** (a bad key, score, label or weight) raises with the template message
    and changes nothing: no calibrator is created, no key evicted or moved.

    Cost per event: ``learn_one`` is O(1) on top of one ``learn_one`` of the key's
    calibrator (a dict lookup and an LRU move; with ``fallback``, a second
    ``learn_one``); a new key costs one constructor call of the template's class (and
    an O(1) eviction). ``predict_one`` is O(1) plus one ``predict_one``. Both are
    compiled; for an :class:`~streamcal.OnlinePlatt` or :class:`~streamcal.OnlineBeta`
    template they call the calibrators' compiled entry points directly, so that a keyed
    event costs about an unkeyed one plus a dict lookup and a move (with many keys,
    plus the cache misses of reaching another calibrator's memory). A call given the
    very key object (a str or an int) of the previous call that found or created a
    calibrator skips the lookup (``predict_one(key, s)`` then ``learn_one(key, s, y)``),
    and a ``learn_one`` on the most recently used key skips the move.

    ``to_dict`` / ``from_dict`` save every key with its calibrator's own snapshot, in
    LRU order, so a restored object evicts in the same order; pickle and ``clone()``
    work as for calibrators.

    Examples
    --------
    Two segments with opposite miscalibration:

    >>> from streamcal import KeyedCalibrator, OnlineIsotonic
    >>> cal = KeyedCalibrator(OnlineIsotonic(), max_keys=1000, fallback=True)
    >>> for _ in range(50):
    ...     cal.learn_one("JFK", 0.8, 0)      # says 0.8, never happens
    ...     cal.learn_one("LGA", 0.2, 1)      # says 0.2, always happens
    >>> cal.predict_one("JFK", 0.8), cal.predict_one("LGA", 0.2)
    (0.0, 1.0)
    >>> cal.predict_one("EWR", 0.2)           # unseen: the shared fit, which pools both
    0.5
    >>> sorted(cal.calibrators), cal.n_evicted
    (['JFK', 'LGA'], 0)

    A bound of one key evicts the least recently used:

    >>> small = KeyedCalibrator(OnlineIsotonic(), max_keys=1)
    >>> small.learn_one("a", 0.9, 1)
    >>> small.learn_one("b", 0.9, 0)
    >>> list(small.calibrators), small.n_evicted, small.predict_one("a", 0.9)
    (['b'], 1, 0.9)

    """

    _registry: typing.ClassVar[dict[str, type]] = {}

    def __init__(self, calibrator, max_keys: int | None = None, fallback: bool = False):
        kinds = (BinaryCalibrator, MulticlassCalibrator)
        V.check_instance_param(_NAME, "calibrator", calibrator, kinds)
        check_max_keys(_NAME, max_keys)
        V.check_param(_NAME, "fallback", fallback, isinstance(fallback, bool), "a bool")
        self.calibrator = calibrator
        self.max_keys = max_keys
        self.fallback = fallback
        self._reset()

    # the store, the fallback, the spawner and the blank calibrator live in the C fields of
    # KeyedKernel (the compiled per-event path), not in __dict__: pickle carries them
    # (KernelShellPickle)
    _kernel_fields = ("_spawn", "_store", "_fallback", "_blank")

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        KeyedStore.adopt(state, _NAME, "_calibrators")  # pickles written before the store
        super().__setstate__(state)
        if self._spawn is None:  # derived from the template: rebuilt if a pickle lacks them
            self._spawn = Spawner(self.calibrator)
        if self._blank is None:
            self._blank = self._spawn()
        self._logistic = compiled_logistic(self.calibrator)

    def __copy__(self):
        # A shallow copy would share the store of keys with this object while each kept
        # its own lookup cache: one could then learn on a calibrator the other evicted.
        # copy.copy gives an independent copy, as clone(include_attributes) would.
        return copy.deepcopy(self)

    def _check(self) -> None:
        """Assert the invariants: at most ``max_keys`` keys, every calibrator (and the
        fallback) of the template's class and valid by its own ``_check``, a
        non-negative eviction count, and a lookup cache that agrees with the store."""
        template = type(self.calibrator)
        items = self._store.items
        assert self.max_keys is None or len(items) <= self.max_keys, "max_keys"
        assert self.n_evicted >= 0, "n_evicted"
        others = [] if self._fallback is None else [self._fallback]
        for cal in [*items.values(), *others]:
            assert type(cal) is template, "calibrator class"
            check = getattr(cal, "_check", None)
            if check is not None:
                check()
        assert (self._fallback is not None) == self.fallback, "fallback"
        self._check_cache()

    def _reset(self) -> None:
        self._spawn = Spawner(self.calibrator)
        self._store = KeyedStore(_NAME, self.max_keys)
        self._fallback = self._spawn() if self.fallback else None
        self._blank = self._spawn()  # predicts for keys without a calibrator
        self._logistic = compiled_logistic(self.calibrator)  # KeyedKernel calls its C entry points

    @classmethod
    def _unit_test_params(cls):
        from streamcal.calibrators import (
            ClassWise,
            HistogramBinning,
            OnlineIsotonic,
            OnlinePlatt,
            TrackingCalibeater,
        )

        yield {"calibrator": OnlineIsotonic()}
        yield {"calibrator": OnlinePlatt(), "max_keys": 3, "fallback": True}
        yield {"calibrator": HistogramBinning(n_bins=5, window_size=40), "max_keys": 2}
        yield {"calibrator": TrackingCalibeater(base=OnlinePlatt()), "fallback": True}
        yield {"calibrator": ClassWise(OnlineIsotonic()), "max_keys": 3, "fallback": True}

    # ------------------------------------------------------------------ views

    @property
    def _multiclass(self) -> bool:
        return isinstance(self.calibrator, MulticlassCalibrator)

    @property
    def _calibrators(self):
        """The ordered dict key -> calibrator of the store, least recently used first."""
        return self._store.items

    @property
    def _n_evicted(self) -> int:
        return self._store.n_evicted

    @_n_evicted.setter
    def _n_evicted(self, value: int) -> None:
        self._store.n_evicted = value

    @property
    def calibrators(self) -> types.MappingProxyType:
        """Read-only view key -> calibrator, least recently used first."""
        return types.MappingProxyType(self._store.items)

    @property
    def fallback_calibrator(self):
        """The shared calibrator learnt on every event (None unless ``fallback``)."""
        return self._fallback

    @property
    def n_evicted(self) -> int:
        """Number of keys evicted so far (``max_keys``)."""
        return self._store.n_evicted

    # ------------------------------------------------------------------ learning

    # learn_one(key, score, label, w=1.0) and predict_one(key, score) are KeyedKernel's
    # (streamcal/_keyed_kernel.pyx): the per-event path, compiled

    # ------------------------------------------------------------------ snapshots

    def _family(self):
        return MulticlassCalibrator if self._multiclass else BinaryCalibrator

    def _get_state(self) -> dict:
        return {
            "keys": self._store.entries(),
            "fallback": None if self._fallback is None else self._fallback.to_dict(),
            "n_evicted": self._store.n_evicted,
        }

    def _restore_calibrator(self, d, what: str):
        return self._store.check_like(self._family().from_dict(d), self.calibrator, what)

    def _set_state(self, state: dict) -> None:
        if not isinstance(state, dict) or not {"keys", "fallback", "n_evicted"} <= state.keys():
            raise ValueError(
                f"The state of a {_NAME} snapshot must be a dict with the entries 'keys', "
                f"'fallback' and 'n_evicted'. Got {V.format_value(state)} instead."
            )
        entries, fb, n_evicted = state["keys"], state["fallback"], state["n_evicted"]
        if not V.is_integer(n_evicted) or n_evicted < 0:
            raise ValueError(
                f"The 'n_evicted' entry of a {_NAME} snapshot must be an int >= 0. "
                f"Got {V.format_value(n_evicted)} instead."
            )
        cals = self._store.read_entries(
            entries, lambda key, d: self._restore_calibrator(d, f"calibrator of key {key!r}"), "calibrator"
        )
        if (fb is None) != (not self.fallback):
            raise ValueError(
                f"The 'fallback' entry of a {_NAME} snapshot must be a calibrator snapshot "
                f"if and only if fallback=True. Got {V.format_value(fb)} instead."
            )
        fallback = None if fb is None else self._restore_calibrator(fb, "fallback")
        store = KeyedStore(_NAME, self.max_keys)
        store.items, store.n_evicted = cals, int(n_evicted)
        self._store = store  # a whole new store: the kernel caches its items
        self._fallback = fallback


# the family's base class is the class itself: BaseClass.from_dict finds it by name
KeyedCalibrator._registry[KeyedCalibrator.__name__] = KeyedCalibrator
