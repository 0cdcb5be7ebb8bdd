# Compiled cores of calibeating (see _calibeating.pyx and streamcal/core/calibeating.py).
#
# Stable interface for other compiled kernels: cimport BinOutcomes or FosterGame and
# call their cdef methods on validated inputs (keys in [0, dense) for the dense methods
# of BinOutcomes, cells in [0, n) for FosterGame), at C speed.

from libc.stdint cimport uint64_t


cdef double splitmix_uniform(uint64_t seed, uint64_t t) noexcept nogil


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
