"""The compiled state machines that the shells of :mod:`streamcal.calibrators` drive.

Each shell (constructor checks, snapshots, repr, docs) keeps one of these as its state
and calls it once per event; the algorithms and invariants are documented where they
are built: :class:`IsotonicStream` (the PAV block store of
:mod:`streamcal.core.pav` with its window, forgetting clock and grid) and
:class:`Int64Binner` (histogram bins with integer counts, :mod:`streamcal.core.binning`).
They are not a stable API: use the calibrators.

Examples
--------
>>> from streamcal.core.kernels import IsotonicStream, Int64Binner
>>> from streamcal import OnlineIsotonic
>>> isinstance(OnlineIsotonic()._stream, IsotonicStream)
True

"""

from streamcal.core._binning import Int64Binner
from streamcal.core._isotonic_stream import IsotonicStream

__all__ = ["Int64Binner", "IsotonicStream"]
