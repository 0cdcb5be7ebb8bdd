"""The compiled state machines that the shells of :mod:`streamcal.calibrators` drive.

Each shell (constructor checks, snapshots, repr, docs) keeps one of these as its state
and calls it once per event; the algorithms and invariants are documented where they
are built: :class:`IsotonicStream` (the PAV block store of
:mod:`streamcal.core.pav` with its window, forgetting clock and grid) and
:class:`Int64Binner` (histogram bins with integer counts, :mod:`streamcal.core.binning`).
:class:`IsotonicKernel` is the C base class of the isotonic shells: their
``learn_one`` / ``predict_one``, without a Python frame, on the stream it holds.
They are not a stable API: use the calibrators.

Examples
--------
>>> from streamcal.core.kernels import IsotonicStream, Int64Binner
>>> from streamcal import OnlineIsotonic
>>> isinstance(OnlineIsotonic()._stream, IsotonicStream)
True

"""

from streamcal.core._binning import Int64Binner
from streamcal.core._isotonic_kernel import IsotonicKernel
from streamcal.core._isotonic_stream import IsotonicStream

__all__ = ["Int64Binner", "IsotonicKernel", "IsotonicStream"]
