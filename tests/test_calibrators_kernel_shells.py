"""The Python shells over compiled base classes (``IsotonicKernel`` under OnlineIsotonic
and VennAbers, ``LogisticKernel`` under OnlinePlatt and OnlineBeta): the per-event
methods are the kernel's own, every pickle protocol and ``copy`` keep the state in the
C fields, and an object whose ``__init__`` did not run says so."""

import copy
import pickle

import numpy as np
import pytest

from streamcal import OnlineBeta, OnlineIsotonic, OnlinePlatt, VennAbers
from streamcal.core.kernels import IsotonicKernel

MAKERS = {
    "isotonic": OnlineIsotonic,
    "isotonic-window": lambda: OnlineIsotonic(window_size=7),
    "isotonic-half-life": lambda: OnlineIsotonic(half_life=5.0, interpolation="linear"),
    "isotonic-prior": lambda: OnlineIsotonic(prior_strength=1.0, resolution=0.1),
    "venn-abers": VennAbers,
    "venn-abers-window": lambda: VennAbers(window_size=5),
    "platt": OnlinePlatt,
    "beta": OnlineBeta,
}


def _events(seed, n):
    rng = np.random.default_rng(seed)
    s = rng.random(n)
    return s.tolist(), (rng.random(n) < s).astype(int).tolist(), rng.choice([0.0, 0.5, 1.0, 3.0], n).tolist()


@pytest.mark.parametrize("name", MAKERS)
def test_every_pickle_protocol_and_copy_continue_bit_for_bit(name):
    s, y, w = _events(1, 60)
    cal = MAKERS[name]()
    for i in range(40):
        cal.learn_one(s[i], y[i], w[i])
    copies = [pickle.loads(pickle.dumps(cal, protocol=p)) for p in range(pickle.HIGHEST_PROTOCOL + 1)]
    copies.append(copy.deepcopy(cal))
    copies.append(cal.clone(include_attributes=True))  # river's fitted copy
    for other in copies:
        assert type(other) is type(cal)
        assert other.to_dict() == cal.to_dict()
    cal._check()
    for i in range(40, 60):
        for other in copies:
            assert other.predict_one(s[i]) == cal.predict_one(s[i])
            other.learn_one(s[i], y[i], w[i])
        cal.learn_one(s[i], y[i], w[i])
    for other in copies:
        assert other.to_dict() == cal.to_dict()
        other._check()


def test_river_clone_with_attributes_is_a_fitted_copy_and_clone_is_fresh():
    """river's ``clone(include_attributes=True)`` copies ``__dict__``: the state in the
    C fields was left behind (regression: a fitted OnlineIsotonic, VennAbers,
    OnlinePlatt, OnlineBeta or KeyedCalibrator came back unfitted); it is now a deep
    copy, independent of the original. ``new_params`` cannot go with it."""
    from streamcal import KeyedCalibrator

    s, y, _ = _events(2, 50)
    for make in [*MAKERS.values(), lambda: KeyedCalibrator(OnlinePlatt(), max_keys=2)]:
        cal = make()
        for si, yi in zip(s, y):
            if isinstance(cal, KeyedCalibrator):
                cal.learn_one(int(si * 3), si, yi)
            else:
                cal.learn_one(si, yi)
        before = cal.to_dict()
        twin = cal.clone(include_attributes=True)
        assert type(twin) is type(cal) and twin.to_dict() == before
        twin._check()
        if isinstance(cal, KeyedCalibrator):
            twin.learn_one(0, 0.9, 0)
        else:
            twin.learn_one(0.9, 0)
        assert cal.to_dict() == before and twin.to_dict() != before
        assert cal.clone().to_dict() == make().to_dict()  # without attributes: fresh
        with pytest.raises(ValueError, match="'new_params' argument of .*clone"):
            cal.clone({"half_life": 3.0}, include_attributes=True)
        assert cal.to_dict() == before


def test_a_deep_copy_owns_its_stream():
    cal = OnlineIsotonic(window_size=4)
    cal.learn_one(0.2, 0)
    twin = copy.deepcopy(cal)
    twin.learn_one(0.9, 1)
    assert cal.predict_one(0.9) == 0.0 and twin.predict_one(0.9) == 1.0


@pytest.mark.parametrize("klass", [OnlineIsotonic, VennAbers])
def test_the_per_event_methods_are_the_kernels(klass):
    assert klass.learn_one is IsotonicKernel.learn_one
    assert klass.predict_one is IsotonicKernel.predict_one
    assert "_stream" not in vars(klass())  # a C field: pickles carry it (above)


@pytest.mark.parametrize("klass", [OnlineIsotonic, VennAbers])
def test_an_object_whose_init_did_not_run_says_so(klass):
    blank = klass.__new__(klass)
    with pytest.raises(RuntimeError, match=f"{klass.__name__} was not initialised"):
        blank.learn_one(0.5, 1)
    with pytest.raises(RuntimeError, match=f"{klass.__name__} was not initialised"):
        blank.predict_one(0.5)


@pytest.mark.parametrize("klass", [OnlineIsotonic, VennAbers])
def test_bad_events_are_refused_before_anything_changes(klass):
    cal = klass(window_size=3)
    cal.learn_one(0.4, 1)
    before = cal.to_dict()
    for args, name in [((float("nan"), 1), "score"), ((1.5, 0), "score"), ((0.5, 2), "label"),
                       ((0.5, 1, -1.0), "w"), ((0.5, 1, float("inf")), "w"), (("0.5", 1), "score")]:
        with pytest.raises((ValueError, TypeError), match=f"'{name}' argument of {klass.__name__}.learn_one"):
            cal.learn_one(*args)
        assert cal.to_dict() == before
    with pytest.raises(ValueError, match=f"'score' argument of {klass.__name__}.predict_one"):
        cal.predict_one(-0.1)


def test_the_compiled_methods_carry_the_base_class_signatures():
    """``inspect.signature`` of a compiled ``learn_one`` / ``predict_one`` is the base
    class's, annotations included (they had none: tools that read them saw untyped
    methods)."""
    import inspect

    from streamcal.base import BinaryCalibrator
    from streamcal.calibrators import EpsilonCalibratedForecaster, HedgingCalibeater, TrackingCalibeater

    for cls in (OnlineIsotonic, VennAbers, OnlinePlatt, OnlineBeta, TrackingCalibeater, HedgingCalibeater,
                EpsilonCalibratedForecaster):
        for name in ("learn_one", "predict_one"):
            assert inspect.signature(getattr(cls, name)) == inspect.signature(getattr(BinaryCalibrator, name)), (
                cls.__name__, name)
