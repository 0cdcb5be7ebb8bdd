"""streamcal: streaming calibration of classifier and forecaster scores.

A calibrator learns from one ``(score, label)`` pair at a time, river-style
(``learn_one`` / ``predict_one``), and turns new scores into calibrated probabilities.

Subpackages
-----------
- :mod:`streamcal.base`: the calibrator interfaces.
- :mod:`streamcal.calibrators`: the calibrators (also re-exported here).
- :mod:`streamcal.core`: pure algorithm cores (PAV block store, bins, online Newton
  steps, Foster's game, ...).
- :mod:`streamcal.checks`: the shared check suite every calibrator runs through.
- :mod:`streamcal.compose`: :class:`CalibratedClassifier`, a river classifier with a
  calibrator behind it (also exported here).
- :mod:`streamcal.keyed`: :class:`KeyedCalibrator`, one calibrator per key (also
  exported here).
- :mod:`streamcal.datasets`: generated rain-forecast sequences.
- :mod:`streamcal.metrics`: streaming calibration metrics and batch functions.
- :mod:`streamcal.monitor`: calibration drift monitors.
- :mod:`streamcal.plot`: reliability diagrams (matplotlib, optional).

Public names are imported on first use (PEP 562): ``import streamcal`` costs little
more than importing numpy, and ``from streamcal import OnlineIsotonic`` imports only
what that calibrator needs (scipy, river's metrics and matplotlib are imported by the
modules that use them).

Examples
--------
>>> import streamcal
>>> from streamcal import OnlineIsotonic
>>> OnlineIsotonic is streamcal.OnlineIsotonic
True
>>> "OnlineIsotonic" in dir(streamcal)
True
"""

import sys
import types

from streamcal import calibrators as _calibrators  # lazy itself: no calibrator imported
from streamcal._lazy import lazy_attributes

__version__ = "0.1.0"

# public name -> the module defining it, imported on first access
_LAZY = {
    "BinaryCalibrator": "streamcal.base",
    "CalibratedClassifier": "streamcal.compose",
    "KeyedCalibrator": "streamcal.keyed",
    "ReplayError": "streamcal.replay",
    "ReplayResult": "streamcal.replay",
    "replay": "streamcal.replay",
    **{name: "streamcal.calibrators" for name in _calibrators.__all__},
}

__all__ = [*sorted(_LAZY), "__version__"]


__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)


class _Package(types.ModuleType):
    """The type of this module: ``replay`` is both a subpackage and the function it
    exports, and the import system binds the subpackage to the package's attribute when
    it first imports it (``import streamcal.replay._readers``, say); the public name
    stays the function."""

    def __setattr__(self, name, value):
        if name == "replay" and isinstance(value, types.ModuleType):
            value = value.replay
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
