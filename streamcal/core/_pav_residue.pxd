# The rounding residue of a cell's sums in the compiled isotonic block store
# (streamcal/core/_pav.pyx): what lets a window remove events by subtraction and
# stay exact.
#
# A cell's weight ``w`` and label sum ``s`` are kept by adding each event's weight
# (label sum) and, in a window, subtracting it again when the event leaves. Each
# addition or subtraction rounds, and a subtraction does not undo the rounding of the
# addition: after a heavy event (weight 1e20) joined a cell of light ones and left it,
# the cell holds the light events' weight plus up to half an ulp of 1e20. A chain of
# such removals (each leaving much less than the cell held) can leave a cell whose
# stored weight is nothing like its events' (a weight 5.9e5 for one event of 1e-13,
# and a fit off by 0.93, before this bound was kept).
#
# Leaf.r[j] bounds the residue of cell j: |w - W| + |s - S| <= r[j] * w, with W and
# S the exact sums of the weights and label sums (each w * y as stored) of the events
# the cell holds. Every addition and subtraction adds its rounding error, found
# exactly by TwoSum, so exact arithmetic (integer or dyadic weights: every sum below
# 2**53 units) keeps r at 0 and never costs anything. A removal after which the bound
# exceeds SC_RESIDUE_MAX (2**-44) of what is left (or leaves no positive weight, or a
# label sum the bound cannot tell from 0 or from the weight: k_cell_remove)
# deletes the cell instead, and the caller, who knows the events, puts their sums back
# (IsotonicBlockStore.add_cell_c, from a compensated sum of the window's events of
# that key: IsotonicStream._readd). A new cell starts at r = 0; a rebuild takes the
# bounds it is given (snapshots keep them: the decision to delete depends on them, so
# a restored copy must make the same ones).
#
# The bound is a float, relative to w, rounded up (k_float_up). An addition
# adds at most 2**-52 to it (2**-54 on average), so a cell holding the same events is
# put back at most once per 2**8 (about 2**10) inexact operations on it, each time at
# the cost of one pass over the window (IsotonicStream._readd). Predictions then stay
# within about 2**-44 (relative) of the fit of the exact sums.

from libc.math cimport INFINITY, fabs, nextafterf

# a removal leaving a residue bound above this share of what is left deletes the cell
cdef extern from *:
    """
    #define SC_RESIDUE_MAX 5.684341886080802e-14  /* 2**-44 */
    #define SC_RESIDUE_UP 1.0000009536743164      /* 1 + 2**-20: float rounding, upwards */
    #define SC_RESIDUE_CAP 1.2676506002282294e30  /* 2**100, a float: "unknown" */
    """
    double SC_RESIDUE_MAX
    double SC_RESIDUE_UP
    double SC_RESIDUE_CAP


# The rounding error of ``s = a + b`` as computed (Knuth's TwoSum, exact in binary
# floating point without overflow).
cdef inline double k_sum_error(double a, double b, double s) noexcept nogil:
    cdef double bb = s - a
    return (a - (s - bb)) + (b - bb)


# ``v`` (>= 0) as a float, rounded up: a bound stays a bound (a tiny one does not
# round to 0).
cdef inline float k_float_up(double v) noexcept nogil:
    cdef float f
    if not v < SC_RESIDUE_CAP:
        return <float> SC_RESIDUE_CAP
    f = <float> v
    if <double> f < v:
        f = nextafterf(f, INFINITY)
    return f


# The bound relative to ``w_new`` of a cell whose bound was ``r`` relative to ``w_old``
# and whose last operation rounded by ``err`` (absolute, both sums).
cdef inline float k_residue_after(float r, double w_old, double w_new, double err) noexcept nogil:
    cdef double v
    if r == 0.0 and err == 0.0:
        return 0.0
    v = (<double> r * (w_old / w_new) + err / w_new) * SC_RESIDUE_UP
    return k_float_up(v)


# Add weight ``w`` and label sum ``wy`` (residue bound ``r_in``, relative to ``w``) to
# the sums ``cw``, ``cs`` of an existing cell whose residue bound is ``r``; with
# ``track`` off (a store that never removes events: IsotonicBlockStore.track_residues)
# the bound stays 0.
cdef inline void k_cell_add(bint track, float* r, double* cw, double* cs, double w,
                            double wy, float r_in) noexcept nogil:
    cdef double ow = cw[0], os = cs[0]
    cw[0] = ow + w
    cs[0] = os + wy
    if track:
        r[0] = k_residue_after(r[0], ow, cw[0], fabs(k_sum_error(ow, w, cw[0]))
                               + fabs(k_sum_error(os, wy, cs[0])) + <double> r_in * w)


# Subtract one event (``w``, ``wy``) from a cell holding more than that event, into
# ``cw_left``, ``cs_left`` (the label sum kept in [0, cw_left]) and ``r_left``;
# returns 0 when the cell must be deleted instead (no positive weight left, a
# residue bound above SC_RESIDUE_MAX of what is left, or a label sum that its bound
# cannot tell from 0 or from the weight: only the events can say whether every label
# left is 0 or 1, and an exact fit pools such a cell with an equal neighbour). A label
# sum of exactly 0 (the weight) is taken as all labels 0 (1): a positive (negative)
# event is then lost only if its weight was below a unit of roundoff of the cell's.
cdef inline bint k_cell_remove(float r, double cw, double cs, double w, double wy,
                               double* cw_left, double* cs_left, float* r_left) noexcept nogil:
    cdef double err, a = cw - w, b = cs - wy
    if not a > 0.0:
        return 0
    err = fabs(k_sum_error(cw, -w, a)) + fabs(k_sum_error(cs, -wy, b))
    if b < 0.0:
        err += -b
        b = 0.0
    elif b > a:
        err += b - a
        b = a
    r_left[0] = k_residue_after(r, cw, a, err)
    if not r_left[0] <= SC_RESIDUE_MAX:
        return 0
    if r_left[0] > 0.0 and ((b > 0.0 and b <= r_left[0] * a)
                            or (b < a and a - b <= r_left[0] * a)):
        # a label sum within its residue of 0 (of the weight): the events left may all
        # have label 0 (1), whose exact sum is 0 (the weight), and an exact fit pools
        # such a cell with its equal neighbours; put the cell back from its events
        return 0
    cw_left[0] = a
    cs_left[0] = b
    return 1


# Neumaier's compensated sum of positive terms: ``t`` added to the sum ``s`` whose
# compensation is ``c``; the sum is ``s + c``, within SC_READD_RESIDUE of the exact one
# relative to it (2 units of roundoff, and below 2**-80 more for up to 2**26 terms).
cdef extern from *:
    """
    #define SC_READD_RESIDUE 2.220446049250313e-16  /* 2**-52 */
    """
    double SC_READD_RESIDUE

cdef inline void k_compensated_add(double* s, double* c, double t) noexcept nogil:
    cdef double u = s[0] + t
    if fabs(s[0]) >= fabs(t):
        c[0] += (s[0] - u) + t
    else:
        c[0] += (t - u) + s[0]
    s[0] = u
