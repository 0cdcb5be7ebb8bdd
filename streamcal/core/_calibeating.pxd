# Compiled cores of calibeating (see _calibeating.pyx, _calibeating_kernels.pyx and
# streamcal/core/calibeating.py).
#
# Stable interface for other compiled kernels: cimport BinOutcomes or FosterGame and
# call their cdef methods on validated inputs (keys in [0, dense) for the dense methods
# of BinOutcomes, cells in [0, n) for FosterGame), at C speed.

from libc.stdint cimport uint64_t


# Inline helpers of _calibeating.pyx and _calibeating_kernels.pyx (defined here, so
# that each module compiles them in: per-event code, no call across modules)

cdef inline double splitmix_uniform(uint64_t seed, uint64_t t) noexcept nogil:
    """The t-th output of SplitMix64 seeded with seed (mod 2**64), top 53 bits."""
    cdef uint64_t z = seed + (t + 1) * 0x9E3779B97F4A7C15ULL
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    z = z ^ (z >> 31)
    return <double>(z >> 11) * 1.1102230246251565e-16  # 2 ** -53


cdef inline Py_ssize_t bin_of(double x, Py_ssize_t n) noexcept nogil:
    # streamcal.core.bins.floor_bin, inlined for the per-event path (tests/test_core_bins.py)
    cdef Py_ssize_t i = <Py_ssize_t>(x * n)
    return n - 1 if i >= n else i


cdef inline double clip01(double p) noexcept nogil:
    # min(1.0, max(0.0, p)) as Python evaluates it
    if not (p > 0.0):
        p = 0.0
    if not (p < 1.0):
        p = 1.0
    return p


cdef class BinOutcomes:
    cdef readonly Py_ssize_t dense  # keys in [0, dense) are looked up in slot_of
    cdef Py_ssize_t* slot_of        # dense key -> slot, -1 for a bin never seen
    cdef dict sparse                # any other key -> slot
    cdef list keys                  # the key of every slot (slots in order of arrival)
    cdef Py_ssize_t size, cap
    cdef double* weight             # per slot: total weight (> 0)
    cdef double* ysum               # per slot: weighted outcome sum

    cdef Py_ssize_t c_slot(self, object key) except -2
    cdef Py_ssize_t c_new_slot(self, object key, double weight, double ysum) except -1
    cdef int c_add_dense(self, Py_ssize_t key, double y, double w) except -1
    cdef double c_mean_dense(self, Py_ssize_t key, double prior, double prior_weight) noexcept


cdef class FosterGame:
    cdef readonly Py_ssize_t n
    cdef double* w                  # per cell: N_i, the weight played on it
    cdef double* s                  # per cell: S_i, its weighted outcome sum
    cdef readonly double total_weight
    cdef readonly double total_ysum
    cdef readonly double capacity   # of the weight rule of streamcal._validation

    cdef void c_strategy(self, double prefer, Py_ssize_t* low, Py_ssize_t* high,
                         double* p_low) noexcept
    cdef void c_play(self, Py_ssize_t i, double y, double w) noexcept
