# Exact sums of weights in 32-bit limbs, for the compiled ROC AUC store
# (_kernels_ranking.pyx): inline helpers, compiled into the module that cimports them.

from libc.stdint cimport uint32_t, uint64_t
from libc.string cimport memset


# Exact weights. Every finite double is an integer multiple of 2**-1074, so a weight
# ``w = M 2**e`` (``M`` an integer < 2**53) is, at the store's scale ``2**s`` (``s`` a
# multiple of 32, ``s <= e``), the integer ``M 2**(e - s)``. The store keeps every sum
# of weights (per score, per block, per superblock, per class) as such an integer of
# ``L`` 32-bit limbs, and the Mann-Whitney numerator doubled, ``U2 = sum w_i (2 W_below
# + W_at)``, at scale ``2**(2 s)`` in ``2 L + 1`` limbs: additions, subtractions and
# products are exact, so the state after any sequence of updates and reverts is the
# state of the events held, whatever their order or history (reverts are exact), and
# nothing underflows or overflows. ``s`` and ``L`` adapt to the weights held: a weight
# below the scale or a class total near ``2**(32 L - 1)`` widens the store (a rebuild,
# O(m L), at most once per 32 bits of range gained); an emptied store starts afresh
# at the range of its next weight. Limbs are 32 bits with 64-bit products, so the code
# is plain C (no 128-bit integers).
ctypedef uint32_t limb

# Limbs per sum at most: 2**-1088 ... 2**(1024 + 63 + 32) spans 2,207 bits, 69 limbs, so
# any finite weights and up to 2**63 events fit; the shell may set a lower cap.
cdef enum:
    MAXL = 72


cdef inline Py_ssize_t floor32(Py_ssize_t e) noexcept nogil:
    cdef Py_ssize_t r = e % 32
    if r < 0:
        r += 32
    return e - r


cdef inline void big_add(limb* dst, const limb* src, Py_ssize_t n) noexcept nogil:
    """``dst += src`` (``n`` limbs each, modulo ``2**(32 n)``)."""
    cdef uint64_t c = 0
    cdef Py_ssize_t k
    for k in range(n):
        c += <uint64_t>dst[k] + src[k]
        dst[k] = <limb>c
        c >>= 32


cdef inline void big_sub(limb* dst, const limb* src, Py_ssize_t n) noexcept nogil:
    """``dst -= src`` (``n`` limbs each, modulo ``2**(32 n)``)."""
    cdef uint64_t b = 0, x
    cdef Py_ssize_t k
    for k in range(n):
        x = <uint64_t>dst[k] - src[k] - b
        dst[k] = <limb>x
        b = x >> 63


cdef inline bint big_is_zero(const limb* x, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(n):
        if x[k]:
            return False
    return True


cdef inline int big_cmp(const limb* a, const limb* b, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(n - 1, -1, -1):
        if a[k] != b[k]:
            return 1 if a[k] > b[k] else -1
    return 0


cdef inline void big_mul(limb* out, const limb* a, Py_ssize_t na, const limb* b,
                         Py_ssize_t nb) noexcept nogil:
    """``out = a * b`` (``na + nb`` limbs), schoolbook; zero limbs of ``a`` skipped."""
    cdef Py_ssize_t i, j
    cdef uint64_t c
    memset(out, 0, (na + nb) * sizeof(limb))
    for i in range(na):
        if a[i] == 0:
            continue
        c = 0
        for j in range(nb):
            c += <uint64_t>a[i] * b[j] + out[i + j]
            out[i + j] = <limb>c
            c >>= 32
        out[i + nb] = <limb>c


cdef inline void rows_sum(limb* out, const limb* rows, Py_ssize_t lo, Py_ssize_t hi,
                          Py_ssize_t n) noexcept nogil:
    """``out = rows[lo] + ... + rows[hi - 1]`` (rows of ``n`` limbs, modulo): each limb
    position summed in 64 bits, carries resolved once (fewer than 2**32 rows)."""
    cdef uint64_t acc[MAXL]
    cdef uint64_t c = 0
    cdef Py_ssize_t k, j
    cdef const limb* row
    for j in range(n):
        acc[j] = 0
    for k in range(lo, hi):
        row = rows + k * n
        for j in range(n):
            acc[j] += row[j]
    for j in range(n):
        c += acc[j]
        out[j] = <limb>c
        c >>= 32


cdef inline void weight_units(limb* out, Py_ssize_t n, uint64_t m, Py_ssize_t shift) noexcept nogil:
    """``out = m * 2**shift`` in ``n`` limbs (``m < 2**53``, the caller checked it fits)."""
    cdef Py_ssize_t k = shift >> 5
    cdef int b = shift & 31
    cdef uint64_t x0, x1
    memset(out, 0, n * sizeof(limb))
    x0 = (m & 0xFFFFFFFFULL) << b
    x1 = ((m >> 32) << b) + (x0 >> 32)
    out[k] = <limb>x0
    if k + 1 < n:
        out[k + 1] = <limb>x1
    if k + 2 < n:
        out[k + 2] = <limb>(x1 >> 32)


cdef inline object big_to_int(const limb* x, Py_ssize_t n):
    """The non-negative Python int of ``n`` limbs."""
    cdef bytearray buf = bytearray(4 * n)
    cdef unsigned char* out = buf
    cdef Py_ssize_t k
    for k in range(n):
        out[4 * k] = x[k] & 0xFF
        out[4 * k + 1] = (x[k] >> 8) & 0xFF
        out[4 * k + 2] = (x[k] >> 16) & 0xFF
        out[4 * k + 3] = x[k] >> 24
    return int.from_bytes(buf, "little")


cdef inline int int_to_big(object v, limb* x, Py_ssize_t n) except -1:
    """Write the Python int ``0 <= v < 2**(32 n)`` into ``n`` limbs."""
    cdef bytes data = v.to_bytes(4 * n, "little")
    cdef const unsigned char* src = data
    cdef Py_ssize_t k
    for k in range(n):
        x[k] = (<limb>src[4 * k] | (<limb>src[4 * k + 1] << 8)
                | (<limb>src[4 * k + 2] << 16) | (<limb>src[4 * k + 3] << 24))
    return 0
