# Compiled online Newton steps (see _newton.pyx and streamcal/core/newton.py).
#
# Stable interface for other compiled kernels (e.g. a calibeater wrapping OnlinePlatt or
# OnlineBeta): cimport LogisticKernel and, for an instance `k` (OnlinePlatt and
# OnlineBeta are Python subclasses of it), call
#
#     k.c_predict(s)         s a validated score in [0, 1]: the calibrated probability,
#                            exactly what predict_one returns
#     k.c_learn(s, y, w)     s in [0, 1], y 0.0 or 1.0, w finite >= 0 (validated): what
#                            learn_one does; raises the ValueError naming 'w' (state
#                            unchanged) for a weight the state cannot represent
#
# at C speed, without a Python call.

cdef class NewtonLogistic:
    cdef int d                  # number of features, 2 or 3
    cdef double t[3]            # theta
    cdef double p[6]            # P = H^-1, upper triangle row by row
    cdef double t0[3]           # theta0, the start and centre of the penalty
    cdef double reg             # regularization
    cdef double decay           # forgetting factor in [0, 1]
    cdef int nonneg_mask        # bit j set: theta_j >= 0 is enforced
    cdef int n_active_sets      # candidate active sets of the projection, in order
    cdef int active_sets[7]     # (bit masks, as itertools.combinations lists them)

    cdef int c_update2(self, double x0, double x1, double y, double w) noexcept
    cdef int c_update3(self, double x0, double x1, double x2, double y, double w) noexcept
    cdef void c_project(self, double* t, const double* p) noexcept
    cdef void c_save(self, double* buf) noexcept
    cdef void c_restore(self, const double* buf) noexcept


cdef class LogisticKernel:
    cdef public NewtonLogistic _core   # the Newton store
    cdef public int _features          # FEATURES_LOGIT, FEATURES_ABM or FEATURES_AM
    cdef public bint _fitted           # an event of positive weight has been learnt
    cdef public bint _ages             # forgetting: zero weights age the others
    cdef str _name                     # the class name, for error messages

    cdef double c_predict(self, double s) noexcept
    cdef int c_learn(self, double s, double y, double w) except -1
    cdef int c_learn_unchecked(self, double s, double y, double w) noexcept
    cdef int _refuse(self, double w, str method=*, Py_ssize_t index=*) except -1
