"""The per-event entry points of :class:`streamcal.OnlineIsotonic` and
:class:`streamcal.VennAbers`, compiled (private).

:class:`IsotonicKernel` is the C base class of both (as ``LogisticKernel`` is
OnlinePlatt's and ``KeyedKernel`` KeyedCalibrator's): it holds the
:class:`~streamcal.core._isotonic_stream.IsotonicStream` in a C field and runs
``learn_one`` / ``predict_one`` without a Python frame of their own, through the
stream's C entry points (``learn_checked`` / ``predict_checked``: the checks of the
score, label and weight, with the messages of :mod:`streamcal._validation`, then the
event). Everything else (parameters, snapshots, batches, merges, documentation) is the
Python shells'.
"""

cimport cython

from streamcal.core._isotonic_stream cimport IsotonicStream

__all__ = ["IsotonicKernel"]


cdef int _not_initialised(object self) except -1:
    raise RuntimeError(f"{type(self).__name__} was not initialised (its __init__ did not run)")


# pickled by the Python shells (KernelShellPickle: _kernel_fields carries the stream)
@cython.auto_pickle(False)
cdef class IsotonicKernel:
    """The stream of an isotonic calibrator (``_stream``, set by the shell's ``_reset``)
    and its per-event methods.

    Examples
    --------
    >>> from streamcal import OnlineIsotonic
    >>> from streamcal.core._isotonic_kernel import IsotonicKernel
    >>> cal = OnlineIsotonic()
    >>> isinstance(cal, IsotonicKernel), type(cal).learn_one is IsotonicKernel.learn_one
    (True, True)
    >>> cal.learn_one(0.2, 0); cal.learn_one(0.8, 1)
    >>> cal.predict_one(0.8)
    1.0

    """

    cdef public IsotonicStream _stream

    @cython.annotation_typing(False)  # annotations for readers (inspect), not C types
    def learn_one(self, score: float, label: bool | int, w: float = 1.0) -> None:
        """Update the fit with one event. Amortised cost: see the class Notes.

        Parameters
        ----------
        score
            The model's score, a real number in [0, 1].
        label
            The observed outcome: 0, 1, False or True.
        w
            Sample weight, a finite real number >= 0 (0: the event only ages the others
            and takes a window slot). Without ``half_life``, the weights held sum to at
            most :data:`streamcal.core.pav.WEIGHT_LIMIT` (2**-20 of the float range
            below its top); a weight that would pass it raises ValueError naming ``w``.
        """
        if self._stream is None:
            _not_initialised(self)
        self._stream.learn_checked(score, label, w)

    @cython.annotation_typing(False)
    def predict_one(self, score: float) -> float:
        """Return the calibrated probability for ``score``; the state is not changed.

        :class:`~streamcal.OnlineIsotonic`: the fit at ``score``, O(log blocks)
        (O(log² blocks) amortised with ``prior_strength > 0``).
        :class:`~streamcal.VennAbers`: the merged probability ``p1 / (1 - p0 + p1)`` of
        the two fits with the event ``(score, 0)`` or ``(score, 1)`` added
        (:meth:`~streamcal.VennAbers.predict_interval_one`), amortised O(log² n).
        Before any positive-weight event has been learnt, ``score`` itself.
        """
        if self._stream is None:
            _not_initialised(self)
        return self._stream.predict_checked(score)
