"""Shared checks that some classes are known to fail, each with its reason: the test
suites mark those cases ``xfail(strict=True)``, so a fix shows up as an unexpected pass
and the mark must then go."""

import pytest

#: class name -> why it fails the weight rule's check (``check_huge_weights``)
HUGE_WEIGHTS = {
    "ClassWise": "the wrapper is not atomic: in a batch the events before a refused one "
    "have been learnt, and over OnlinePlatt a single event refused by a later class's "
    "calibrator has been learnt by the classes before it (needs a dry-run weight check "
    "from the binary calibrators; saving every state per event costs O(state))",
    "TopLabel": "the wrapper is not atomic in a batch: the events before a refused one "
    "have been learnt (single events are atomic: the calibrator learns before the class "
    "is registered)",
}

#: wrappers whose gap shows only over these inner calibrators (the ones that refuse)
_REFUSING_INNER = {"OnlineIsotonic", "OnlinePlatt"}


def marks(obj, check) -> list:
    """The marks of the case ``(obj, check)``: xfail for a known gap, else none."""
    name = type(obj).__name__
    if check.__name__ != "check_huge_weights" or name not in HUGE_WEIGHTS:
        return []
    inner = getattr(obj, "calibrator", None)
    if name in ("ClassWise", "TopLabel") and type(inner).__name__ not in _REFUSING_INNER:
        return []
    return [pytest.mark.xfail(strict=True, reason=HUGE_WEIGHTS[name])]
