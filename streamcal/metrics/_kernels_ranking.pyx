"""Compiled per-event state of :class:`streamcal.metrics.ROCAUC` (the shell is in
``_ranking.py``): the distinct scores in sorted blocks with exact per-class weight sums
(see ``_limbs.pxd``) and the doubled Mann-Whitney numerator. The conventions of every
metric store (snapshot state, ``add``, ``update_many``, the module-level ``update``)
are described in ``_kernels.pyx``.
"""

cimport cython
from libc.math cimport frexp, ldexp
from libc.stdint cimport uint64_t
from libc.string cimport memcpy, memmove, memset
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc

from streamcal.core._search cimport bisect_left
from streamcal.metrics._kernels cimport check_event
from streamcal.metrics._limbs cimport (
    MAXL,
    big_add,
    big_cmp,
    big_is_zero,
    big_mul,
    big_sub,
    big_to_int,
    floor32,
    int_to_big,
    limb,
    rows_sum,
    weight_units,
)


# Superblocks: consecutive runs of SB blocks whose per-class totals are kept too, each
# recomputed from its blocks' totals whenever one changes. A sum over the blocks before
# a score then costs at most about nb / (2 SB) + SB / 2 row additions.
DEF SB = 64


cdef struct Block:
    Py_ssize_t size
    Py_ssize_t cap
    double* keys
    limb* neg_w
    limb* pos_w
    long long* neg_n
    long long* pos_n


cdef int block_alloc(Block* blk, Py_ssize_t cap, Py_ssize_t nl) except -1:
    cdef double* d = <double*>PyMem_Malloc(cap * sizeof(double))
    cdef limb* w = <limb*>PyMem_Malloc(2 * cap * nl * sizeof(limb))
    cdef long long* c = <long long*>PyMem_Malloc(2 * cap * sizeof(long long))
    if d == NULL or w == NULL or c == NULL:
        PyMem_Free(d)
        PyMem_Free(w)
        PyMem_Free(c)
        raise MemoryError()
    blk.size = 0
    blk.cap = cap
    blk.keys = d
    blk.neg_w = w
    blk.pos_w = w + cap * nl
    blk.neg_n = c
    blk.pos_n = c + cap
    return 0


cdef void block_free(Block* blk) noexcept:
    PyMem_Free(blk.keys)
    PyMem_Free(blk.neg_w)
    PyMem_Free(blk.neg_n)
    blk.keys = NULL
    blk.neg_w = NULL
    blk.neg_n = NULL


@cython.final

cdef inline uint64_t weight_parts(double w, Py_ssize_t* e, int* x) noexcept nogil:
    """``w = m 2**e`` with ``m`` an integer < 2**53 and ``e >= -1074`` (the exponent of
    the smallest subnormal: a subnormal's mantissa is shifted down to it, exactly, since
    its low bits are 0), and ``w < 2**x``; returns ``m``. Without the floor a subnormal
    ``w`` would give ``e`` down to ``-1126`` and a scale below the snapshot's range."""
    cdef uint64_t m = <uint64_t>ldexp(frexp(w, x), 53)
    cdef Py_ssize_t ee = x[0] - 53
    if ee < -1074:
        m >>= (-1074 - ee)
        ee = -1074
    e[0] = ee
    return m


cdef class Ranks:
    """The distinct scores held, in sorted blocks of at most ``2 * load`` (split in two
    beyond, dropped when emptied, as sortedcontainers does), each score with its
    per-class weight and count, each block and superblock with its per-class totals,
    the class totals and the doubled Mann-Whitney numerator ``U2``
    (streamcal.metrics._ranking); every weight sum an exact integer at scale ``2**s``
    (see the comment above ``limb``)."""

    cdef readonly str owner
    cdef readonly Py_ssize_t load
    cdef readonly Py_ssize_t max_limbs
    cdef readonly Py_ssize_t scale   # s: a sum's value is its integer times 2**s
    cdef readonly Py_ssize_t limbs   # L: limbs per sum
    cdef Block* blocks
    cdef limb* block_neg
    cdef limb* block_pos
    cdef limb* sup_neg
    cdef limb* sup_pos
    cdef double* maxes
    cdef limb* w_neg_
    cdef limb* w_pos_
    cdef limb* u2
    cdef Py_ssize_t nb
    cdef Py_ssize_t nb_cap
    cdef readonly long long n_pos
    cdef readonly long long n_neg

    def __cinit__(self, str owner, Py_ssize_t load, Py_ssize_t max_limbs=MAXL):
        if not 2 <= max_limbs <= MAXL:
            raise ValueError(f"max_limbs must be in [2, {MAXL}]. Got {max_limbs} instead.")
        self.owner = owner
        self.load = load
        self.max_limbs = max_limbs
        self.nb = 0
        self.nb_cap = 0
        self.scale = 0
        self.limbs = 2
        self.alloc_totals()
        self.grow(8)

    def __dealloc__(self):
        cdef Py_ssize_t b
        if self.blocks != NULL:
            for b in range(self.nb):
                block_free(&self.blocks[b])
        PyMem_Free(self.blocks)
        PyMem_Free(self.block_neg)
        PyMem_Free(self.block_pos)
        PyMem_Free(self.sup_neg)
        PyMem_Free(self.sup_pos)
        PyMem_Free(self.maxes)
        PyMem_Free(self.w_neg_)

    cdef int alloc_totals(self) except -1:
        """The class totals and ``U2`` for the current ``limbs``, zeroed."""
        cdef Py_ssize_t nl = self.limbs
        cdef limb* x = <limb*>PyMem_Realloc(self.w_neg_, (4 * nl + 1) * sizeof(limb))
        if x == NULL:
            raise MemoryError()
        memset(x, 0, (4 * nl + 1) * sizeof(limb))
        self.w_neg_ = x
        self.w_pos_ = x + nl
        self.u2 = x + 2 * nl
        return 0

    cdef int grow(self, Py_ssize_t cap) except -1:
        """Room for ``cap`` blocks (and as many superblocks) at the current ``limbs``."""
        cdef void* x
        cdef int name
        if cap <= self.nb_cap:
            return 0
        x = PyMem_Realloc(self.blocks, cap * sizeof(Block))
        if x == NULL:
            raise MemoryError()
        self.blocks = <Block*>x
        x = PyMem_Realloc(self.maxes, cap * sizeof(double))
        if x == NULL:
            raise MemoryError()
        self.maxes = <double*>x
        for name in range(4):
            x = PyMem_Realloc(self.array(name), cap * self.limbs * sizeof(limb))
            if x == NULL:
                raise MemoryError()
            self.set_array(name, <limb*>x)
        self.nb_cap = cap
        return 0

    cdef limb* array(self, int name) noexcept:
        if name == 0:
            return self.block_neg
        if name == 1:
            return self.block_pos
        if name == 2:
            return self.sup_neg
        return self.sup_pos

    cdef void set_array(self, int name, limb* x) noexcept:
        if name == 0:
            self.block_neg = x
        elif name == 1:
            self.block_pos = x
        elif name == 2:
            self.sup_neg = x
        else:
            self.sup_pos = x

    cdef int clear(self, Py_ssize_t scale=0, Py_ssize_t limbs=2) except -1:
        """Empty the store and set its range (reallocating the per-block totals when
        ``limbs`` changes)."""
        cdef Py_ssize_t b, cap = self.nb_cap
        for b in range(self.nb):
            block_free(&self.blocks[b])
        self.nb = 0
        self.n_pos = self.n_neg = 0
        self.scale = scale
        if limbs != self.limbs:
            self.limbs = limbs
            self.nb_cap = 0
            self.grow(cap)
        self.alloc_totals()
        return 0

    # ------------------------------------------------------------------ blocks

    cdef inline limb* row(self, limb* rows, Py_ssize_t k) noexcept:
        return rows + k * self.limbs

    cdef void resum(self, Py_ssize_t j) noexcept:
        """Recompute the totals of superblock ``j`` from its blocks."""
        cdef Py_ssize_t lo = j * SB
        cdef Py_ssize_t hi = lo + SB if lo + SB < self.nb else self.nb
        rows_sum(self.row(self.sup_neg, j), self.block_neg, lo, hi, self.limbs)
        rows_sum(self.row(self.sup_pos, j), self.block_pos, lo, hi, self.limbs)

    cdef void resum_from(self, Py_ssize_t b) noexcept:
        """Recompute every superblock from the one holding block ``b`` on."""
        cdef Py_ssize_t j
        for j in range(b // SB, (self.nb + SB - 1) // SB):
            self.resum(j)

    cdef inline void resum_class(self, Py_ssize_t b, bint positive) noexcept:
        cdef Py_ssize_t j = b // SB
        cdef Py_ssize_t lo = j * SB
        cdef Py_ssize_t hi = lo + SB if lo + SB < self.nb else self.nb
        if positive:
            rows_sum(self.row(self.sup_pos, j), self.block_pos, lo, hi, self.limbs)
        else:
            rows_sum(self.row(self.sup_neg, j), self.block_neg, lo, hi, self.limbs)

    cdef inline void superblock(self, Py_ssize_t b, Py_ssize_t* ns, Py_ssize_t* j,
                                Py_ssize_t* lo, Py_ssize_t* hi) noexcept:
        """The superblocks' count ``ns``, and the superblock ``j`` of block ``b`` with
        its blocks ``[lo, hi)`` (prefix and suffix; inline, on the per-event path)."""
        ns[0] = (self.nb + SB - 1) // SB
        j[0] = b // SB
        lo[0] = j[0] * SB
        hi[0] = lo[0] + SB if lo[0] + SB < self.nb else self.nb

    cdef void prefix(self, limb* out, const limb* blocks, const limb* sup, Py_ssize_t b,
                     const limb* grand) noexcept:
        """``out`` = total of ``blocks[:b]``, each sum taken over its shorter side (the
        other side being a known total minus it: exact, the sums are integers)."""
        cdef Py_ssize_t nl = self.limbs, ns, j, lo, hi
        cdef limb part[MAXL]
        self.superblock(b, &ns, &j, &lo, &hi)
        if 2 * j <= ns:
            rows_sum(out, sup, 0, j, nl)
        else:
            rows_sum(part, sup, j, ns, nl)
            memcpy(out, grand, nl * sizeof(limb))
            big_sub(out, part, nl)
        if b - lo <= hi - b:
            rows_sum(part, blocks, lo, b, nl)
            big_add(out, part, nl)
        elif j < ns:
            big_add(out, sup + j * nl, nl)
            rows_sum(part, blocks, b, hi, nl)
            big_sub(out, part, nl)

    cdef void suffix(self, limb* out, const limb* blocks, const limb* sup, Py_ssize_t b,
                     const limb* grand) noexcept:
        """``out`` = total of ``blocks[b:]``, each sum over its shorter side."""
        cdef Py_ssize_t nl = self.limbs, ns, j, lo, hi
        cdef limb part[MAXL]
        self.superblock(b, &ns, &j, &lo, &hi)
        if 2 * (j + 1) >= ns:
            rows_sum(out, sup, j + 1, ns, nl)
        else:
            rows_sum(part, sup, 0, j + 1, nl)
            memcpy(out, grand, nl * sizeof(limb))
            big_sub(out, part, nl)
        if j >= ns:
            return
        if hi - b <= b - lo:
            rows_sum(part, blocks, b, hi, nl)
            big_add(out, part, nl)
        else:
            big_add(out, sup + j * nl, nl)
            rows_sum(part, blocks, lo, b, nl)
            big_sub(out, part, nl)

    cdef inline Py_ssize_t locate(self, double p, Py_ssize_t* i, bint* found) noexcept:
        """Block ``b`` and position ``i`` of score ``p`` (or where it would go)."""
        cdef Py_ssize_t lo, b = bisect_left(self.maxes, self.nb, p)
        cdef Block* blk
        if b == self.nb:
            found[0] = False
            if b == 0:
                i[0] = 0
                return 0
            i[0] = self.blocks[b - 1].size
            return b - 1
        blk = &self.blocks[b]
        lo = bisect_left(blk.keys, blk.size, p)
        i[0] = lo
        found[0] = blk.keys[lo] == p  # lo < size since p <= maxes[b]
        return b

    cdef int new_block(self, Py_ssize_t b, Py_ssize_t size) except -1:
        """Insert an empty block (room for ``size`` keys and more) at position ``b``."""
        cdef Py_ssize_t cap = 2 * self.load + 1
        cdef Py_ssize_t tail = self.nb - b
        cdef Py_ssize_t nl = self.limbs
        if size + 1 > cap:
            cap = size + 1
        if self.nb == self.nb_cap:
            self.grow(2 * self.nb_cap)
        memmove(&self.blocks[b + 1], &self.blocks[b], tail * sizeof(Block))
        memmove(self.block_neg + (b + 1) * nl, self.block_neg + b * nl, tail * nl * sizeof(limb))
        memmove(self.block_pos + (b + 1) * nl, self.block_pos + b * nl, tail * nl * sizeof(limb))
        memmove(&self.maxes[b + 1], &self.maxes[b], tail * sizeof(double))
        self.blocks[b].keys = NULL
        self.blocks[b].neg_w = NULL
        self.blocks[b].neg_n = NULL
        self.nb += 1
        try:
            block_alloc(&self.blocks[b], cap, nl)
        except MemoryError:
            self.drop_block(b)
            raise
        memset(self.block_neg + b * nl, 0, nl * sizeof(limb))
        memset(self.block_pos + b * nl, 0, nl * sizeof(limb))
        return 0

    cdef void drop_block(self, Py_ssize_t b) noexcept:
        cdef Py_ssize_t tail = self.nb - b - 1
        cdef Py_ssize_t nl = self.limbs
        block_free(&self.blocks[b])
        memmove(&self.blocks[b], &self.blocks[b + 1], tail * sizeof(Block))
        memmove(self.block_neg + b * nl, self.block_neg + (b + 1) * nl, tail * nl * sizeof(limb))
        memmove(self.block_pos + b * nl, self.block_pos + (b + 1) * nl, tail * nl * sizeof(limb))
        memmove(&self.maxes[b], &self.maxes[b + 1], tail * sizeof(double))
        self.nb -= 1

    cdef int insert(self, Py_ssize_t b, Py_ssize_t i, double p) except -1:
        """Insert the new score ``p`` at position ``i`` of block ``b``."""
        cdef Block* blk
        cdef Py_ssize_t tail
        cdef Py_ssize_t nl = self.limbs
        if self.nb == 0:
            self.new_block(0, 1)
            self.resum_from(0)
        blk = &self.blocks[b]
        tail = blk.size - i
        memmove(&blk.keys[i + 1], &blk.keys[i], tail * sizeof(double))
        memmove(blk.neg_w + (i + 1) * nl, blk.neg_w + i * nl, tail * nl * sizeof(limb))
        memmove(blk.pos_w + (i + 1) * nl, blk.pos_w + i * nl, tail * nl * sizeof(limb))
        memmove(&blk.neg_n[i + 1], &blk.neg_n[i], tail * sizeof(long long))
        memmove(&blk.pos_n[i + 1], &blk.pos_n[i], tail * sizeof(long long))
        blk.keys[i] = p
        memset(blk.neg_w + i * nl, 0, nl * sizeof(limb))
        memset(blk.pos_w + i * nl, 0, nl * sizeof(limb))
        blk.neg_n[i] = blk.pos_n[i] = 0
        blk.size += 1
        self.maxes[b] = blk.keys[blk.size - 1]
        return 0

    cdef int split_if_full(self, Py_ssize_t b) except -1:
        cdef Block* blk = &self.blocks[b]
        cdef Block* new
        cdef Py_ssize_t load = self.load, m
        cdef Py_ssize_t nl = self.limbs
        if blk.size <= 2 * load:
            return 0
        m = blk.size - load
        self.new_block(b + 1, m)
        blk = &self.blocks[b]  # the array may have moved
        new = &self.blocks[b + 1]
        memmove(new.keys, &blk.keys[load], m * sizeof(double))
        memmove(new.neg_w, blk.neg_w + load * nl, m * nl * sizeof(limb))
        memmove(new.pos_w, blk.pos_w + load * nl, m * nl * sizeof(limb))
        memmove(new.neg_n, &blk.neg_n[load], m * sizeof(long long))
        memmove(new.pos_n, &blk.pos_n[load], m * sizeof(long long))
        new.size = m
        blk.size = load
        self.maxes[b] = blk.keys[load - 1]
        self.maxes[b + 1] = new.keys[m - 1]
        rows_sum(self.row(self.block_neg, b), blk.neg_w, 0, load, nl)
        rows_sum(self.row(self.block_pos, b), blk.pos_w, 0, load, nl)
        rows_sum(self.row(self.block_neg, b + 1), new.neg_w, 0, m, nl)
        rows_sum(self.row(self.block_pos, b + 1), new.pos_w, 0, m, nl)
        self.resum_from(b)
        return 0

    cdef void delete(self, Py_ssize_t b, Py_ssize_t i) noexcept:
        """Delete the score at position ``i`` of block ``b`` (it holds no event)."""
        cdef Block* blk = &self.blocks[b]
        cdef Py_ssize_t tail = blk.size - i - 1
        cdef Py_ssize_t nl = self.limbs
        if blk.size == 1:
            self.drop_block(b)
            self.resum_from(b)
            return
        memmove(&blk.keys[i], &blk.keys[i + 1], tail * sizeof(double))
        memmove(blk.neg_w + i * nl, blk.neg_w + (i + 1) * nl, tail * nl * sizeof(limb))
        memmove(blk.pos_w + i * nl, blk.pos_w + (i + 1) * nl, tail * nl * sizeof(limb))
        memmove(&blk.neg_n[i], &blk.neg_n[i + 1], tail * sizeof(long long))
        memmove(&blk.pos_n[i], &blk.pos_n[i + 1], tail * sizeof(long long))
        blk.size -= 1
        self.maxes[b] = blk.keys[blk.size - 1]

    # ------------------------------------------------------------------ events

    cdef void pairs(self, limb* out, bint positive, Py_ssize_t b, Py_ssize_t i,
                    bint found) noexcept:
        """``out`` (``L + 1`` limbs) = twice the weight of the other class below
        (``positive``) or above the score at ``(b, i)``, plus the weight at it."""
        cdef Py_ssize_t nl = self.limbs
        cdef Block* blk
        cdef limb total[MAXL]
        cdef limb part[MAXL + 1]
        cdef const limb* other
        cdef Py_ssize_t j
        memset(out, 0, (nl + 1) * sizeof(limb))
        if self.nb == 0:
            return
        blk = &self.blocks[b]
        if positive:  # negative weight below the score
            other = blk.neg_w
            self.prefix(total, self.block_neg, self.sup_neg, b, self.w_neg_)
            if 2 * i <= blk.size:
                rows_sum(part, other, 0, i, nl)
                big_add(total, part, nl)
            else:
                big_add(total, self.row(self.block_neg, b), nl)
                rows_sum(part, other, i, blk.size, nl)
                big_sub(total, part, nl)
        else:  # positive weight above the score
            other = blk.pos_w
            self.suffix(total, self.block_pos, self.sup_pos, b + 1, self.w_pos_)
            j = i + found
            if 2 * j >= blk.size:
                rows_sum(part, other, j, blk.size, nl)
                big_add(total, part, nl)
            else:
                big_add(total, self.row(self.block_pos, b), nl)
                rows_sum(part, other, 0, j, nl)
                big_sub(total, part, nl)
        memcpy(out, total, nl * sizeof(limb))
        big_add(out, out, nl + 1)  # twice (the top limb absorbs the carry)
        if found:
            memcpy(part, other + i * nl, nl * sizeof(limb))
            part[nl] = 0
            big_add(out, part, nl + 1)

    cdef void move_u2(self, uint64_t m, Py_ssize_t shift, const limb* t, bint add) noexcept:
        """``U2 += (or -=) w * t``, ``w = m 2**shift`` at scale ``2**s``, exactly."""
        cdef Py_ssize_t nl = self.limbs
        cdef limb wu[MAXL]
        cdef limb prod[2 * MAXL + 2]
        weight_units(wu, nl, m, shift)
        big_mul(prod, wu, nl, t, nl + 1)  # 2 L + 1 limbs
        if add:
            big_add(self.u2, prod, 2 * nl + 1)
        else:
            big_sub(self.u2, prod, 2 * nl + 1)

    cdef bint fits(self, uint64_t m, Py_ssize_t e, int x, bint positive) noexcept:
        """Whether a weight ``m 2**e < 2**x`` can be added at the current range: at or
        above the scale, and its class total stays below ``2**(32 L - 1)`` (then every
        partial sum, and twice it, fits in ``L + 1`` limbs)."""
        cdef Py_ssize_t nl = self.limbs
        cdef limb tmp[MAXL]
        cdef limb wu[MAXL]
        if e < self.scale or x - self.scale > 32 * nl - 2:
            return False
        weight_units(wu, nl, m, e - self.scale)
        memcpy(tmp, self.w_pos_ if positive else self.w_neg_, nl * sizeof(limb))
        big_add(tmp, wu, nl)
        return tmp[nl - 1] < 0x80000000U and big_cmp(tmp, wu, nl) >= 0

    cdef int widen(self, Py_ssize_t e, int x, double w) except -1:
        """Rebuild at a range that admits the weight ``w = m 2**e < 2**x`` (scale at
        most ``e``, 32 bits of headroom above the class total with it); ValueError
        naming ``w`` (nothing changed) beyond ``max_limbs``."""
        cdef Py_ssize_t scale = self.scale if self.n_pos + self.n_neg else e
        cdef Py_ssize_t new_scale = floor32(scale if scale < e else e)
        state = self.get_state()
        shift = self.scale - new_scale if self.n_pos + self.n_neg else 0
        big_total = max(big_to_int(self.w_pos_, self.limbs), big_to_int(self.w_neg_, self.limbs))
        bits = max((big_total << shift).bit_length(), x - new_scale) + 1 + 32
        limbs = max(2, -(-bits // 32))
        if limbs > self.max_limbs:
            raise ValueError(
                f"The 'w' argument of {self.owner}.update must be a finite weight >= 0 "
                f"whose sums with the weights held the metric can represent exactly (at "
                f"most {32 * self.max_limbs} bits from the smallest to the largest). Got "
                f"{w!r} instead."
            )
        if shift:
            for name in ("neg_w", "pos_w"):
                state[name] = [[v << shift for v in blk] for blk in state[name]]
        state["scale"] = new_scale
        self.restore(state, limbs)
        return 0

    cdef int add(self, double y, double p, double w) except -1:
        cdef Py_ssize_t b, i, e
        cdef int x
        cdef uint64_t m
        cdef bint found
        cdef bint positive
        cdef Block* blk
        cdef Py_ssize_t nl
        cdef limb t[MAXL + 1]
        cdef limb wu[MAXL]
        if not w > 0.0:
            return 0
        m = weight_parts(w, &e, &x)
        positive = y == 1.0
        if self.n_pos + self.n_neg == 0 and not self.fits(m, e, x, positive):
            # an empty store takes the range of its weight, with 32 bits of headroom
            self.clear(floor32(e), (x - floor32(e) + 33 + 31) // 32)
        while not self.fits(m, e, x, positive):
            self.widen(e, x, w)
        nl = self.limbs
        b = self.locate(p, &i, &found)
        self.pairs(t, positive, b, i, found)
        self.move_u2(m, e - self.scale, t, True)
        if not found:
            self.insert(b, i, p)
        blk = &self.blocks[b]
        weight_units(wu, nl, m, e - self.scale)
        if positive:
            big_add(blk.pos_w + i * nl, wu, nl)
            blk.pos_n[i] += 1
            big_add(self.row(self.block_pos, b), wu, nl)
            big_add(self.w_pos_, wu, nl)
            self.n_pos += 1
        else:
            big_add(blk.neg_w + i * nl, wu, nl)
            blk.neg_n[i] += 1
            big_add(self.row(self.block_neg, b), wu, nl)
            big_add(self.w_neg_, wu, nl)
            self.n_neg += 1
        if blk.size > 2 * self.load:
            self.split_if_full(b)
        else:
            self.resum_class(b, positive)
        return 0

    def revert(self, double y, double p, double w):
        """Remove a validated event; False (nothing changed) if it is not held: no event
        of that class at that score, or less weight there than ``w`` (or exactly ``w``
        with other events of that class at that score, whose weights are positive)."""
        cdef Py_ssize_t b, i, e
        cdef int x
        cdef uint64_t m
        cdef bint found
        cdef bint positive = y == 1.0
        cdef Block* blk
        cdef limb* weights
        cdef long long* counts
        cdef Py_ssize_t nl = self.limbs
        cdef limb t[MAXL + 1]
        cdef limb wu[MAXL]
        cdef int c
        if not w > 0.0:
            return True
        b = self.locate(p, &i, &found)
        if not found:
            return False
        m = weight_parts(w, &e, &x)
        if e < self.scale or x - self.scale > 32 * nl - 2:
            return False  # not a weight the sums can hold
        blk = &self.blocks[b]
        weights, counts = (blk.pos_w, blk.pos_n) if positive else (blk.neg_w, blk.neg_n)
        if counts[i] == 0:
            return False
        weight_units(wu, nl, m, e - self.scale)
        c = big_cmp(weights + i * nl, wu, nl)
        if c < 0 or (c == 0) != (counts[i] == 1):
            return False
        if self.n_pos + self.n_neg == 1:  # back to exactly empty
            self.clear(self.scale, self.limbs)
            return True
        self.pairs(t, positive, b, i, found)
        self.move_u2(m, e - self.scale, t, False)
        counts[i] -= 1
        big_sub(weights + i * nl, wu, nl)
        if positive:
            self.n_pos -= 1
            big_sub(self.row(self.block_pos, b), wu, nl)
            big_sub(self.w_pos_, wu, nl)
        else:
            self.n_neg -= 1
            big_sub(self.row(self.block_neg, b), wu, nl)
            big_sub(self.w_neg_, wu, nl)
        self.resum_class(b, positive)
        if blk.pos_n[i] + blk.neg_n[i] == 0:
            self.delete(b, i)
        return True

    def update_one(self, double y, double p, double w):
        """Add a validated event."""
        self.add(y, p, w)

    def update_many(self, const double[:] y, const double[:] p, const double[:] w):
        """Add validated arrays of events, as a loop of ``update_one``. Atomic: the
        range the whole batch needs is checked first (a bound: the batch's extreme
        weights and its length; never reached at the default ``max_limbs``), and a
        batch too wide raises ValueError naming ``w`` before anything is added."""
        cdef Py_ssize_t i, n = y.shape[0], emin = 0, imax = -1, imin = -1
        cdef int x, xmax = 0
        for i in range(n):
            if w[i] > 0.0:
                frexp(w[i], &x)
                if imax < 0 or x > xmax:
                    xmax, imax = x, i
                if imin < 0 or max(x - 53, -1074) < emin:
                    emin, imin = max(x - 53, -1074), i
        if imax >= 0:
            held = self.n_pos + self.n_neg > 0
            scale = floor32(emin if not held or emin < self.scale else self.scale)
            shift = self.scale - scale if held else 0
            total = max(self.w_pos_units, self.w_neg_units) << shift
            bits = max(total.bit_length(), xmax - scale) + n.bit_length() + 1 + 33
            if -(-bits // 32) > self.max_limbs:
                raise ValueError(
                    f"The 'w' argument of {self.owner}.update_many must hold finite "
                    f"weights >= 0 whose sums the metric can represent exactly (at most "
                    f"{32 * self.max_limbs} bits from the smallest to the largest). Got "
                    f"{w[imax]!r} and {w[imin]!r} at indices {imax} and {imin} instead."
                )
        for i in range(n):
            self.add(y[i], p[i], w[i])

    def auc(self):
        """``U2 / (2 W+ W-)`` correctly rounded (Python's int division), or 0.0 until
        both classes have positive weight."""
        if not (self.n_pos and self.n_neg):
            return 0.0
        return big_to_int(self.u2, 2 * self.limbs + 1) / (
            2 * big_to_int(self.w_pos_, self.limbs) * big_to_int(self.w_neg_, self.limbs)
        )

    # ------------------------------------------------------------------ state

    @property
    def n_blocks(self):
        return self.nb

    @property
    def u2_units(self):
        """``U2`` as an int at scale ``2**(2 s)``."""
        return big_to_int(self.u2, 2 * self.limbs + 1)

    @property
    def w_pos_units(self):
        return big_to_int(self.w_pos_, self.limbs)

    @property
    def w_neg_units(self):
        return big_to_int(self.w_neg_, self.limbs)

    def totals(self):
        """``(block_neg, block_pos, sup_neg, sup_pos)`` as lists of ints (``_check``)."""
        cdef Py_ssize_t k, nl = self.limbs, ns = (self.nb + SB - 1) // SB
        return (
            [big_to_int(self.block_neg + k * nl, nl) for k in range(self.nb)],
            [big_to_int(self.block_pos + k * nl, nl) for k in range(self.nb)],
            [big_to_int(self.sup_neg + k * nl, nl) for k in range(ns)],
            [big_to_int(self.sup_pos + k * nl, nl) for k in range(ns)],
        )

    def block_lists(self):
        """``(keys, neg_w, pos_w, neg_n, pos_n)``, each a list of per-block lists (the
        weights as ints at scale ``2**s``)."""
        cdef Py_ssize_t b, k, nl = self.limbs
        cdef Block* blk
        out = ([], [], [], [], [])
        for b in range(self.nb):
            blk = &self.blocks[b]
            out[0].append([blk.keys[k] for k in range(blk.size)])
            out[1].append([big_to_int(blk.neg_w + k * nl, nl) for k in range(blk.size)])
            out[2].append([big_to_int(blk.pos_w + k * nl, nl) for k in range(blk.size)])
            out[3].append([blk.neg_n[k] for k in range(blk.size)])
            out[4].append([blk.pos_n[k] for k in range(blk.size)])
        return out

    def get_state(self):
        keys, neg_w, pos_w, neg_n, pos_n = self.block_lists()
        return {
            "scale": self.scale,
            "keys": keys,
            "neg_w": neg_w,
            "pos_w": pos_w,
            "neg_n": neg_n,
            "pos_n": pos_n,
        }

    def set_state(self, dict state):
        """Restore ``get_state()``: the per-score weights and counts (the shell has
        checked their types and invariants); every total and ``U2`` is recomputed from
        them, exactly."""
        self.restore(state, 2)

    cdef int restore(self, dict state, Py_ssize_t min_limbs) except -1:
        cdef Py_ssize_t b, k, size, nl, j
        cdef Block* blk
        cdef limb t[MAXL + 1]
        cdef limb below[MAXL]
        cdef limb prod[2 * MAXL + 2]
        keys = state["keys"]
        neg_w, pos_w = state["neg_w"], state["pos_w"]
        neg_n, pos_n = state["neg_n"], state["pos_n"]
        totals = [sum(sum(x) for x in rows) for rows in (neg_w, pos_w)]
        bits = max(max(totals).bit_length() + 1 + 32, 64)
        nl = max(min_limbs, -(-bits // 32))
        if nl > self.max_limbs:
            raise ValueError(
                f"The weights of the {self.owner} state must span at most "
                f"{32 * self.max_limbs - 33} bits. Got {bits - 33} instead."
            )
        self.clear(int(state["scale"]), nl)
        for b in range(len(keys)):
            size = len(keys[b])
            self.new_block(b, size)
            blk = &self.blocks[b]
            for k in range(size):
                blk.keys[k] = keys[b][k]
                int_to_big(neg_w[b][k], blk.neg_w + k * nl, nl)
                int_to_big(pos_w[b][k], blk.pos_w + k * nl, nl)
                blk.neg_n[k] = neg_n[b][k]
                blk.pos_n[k] = pos_n[b][k]
                self.n_neg += blk.neg_n[k]
                self.n_pos += blk.pos_n[k]
            blk.size = size
            self.maxes[b] = blk.keys[size - 1]
            rows_sum(self.row(self.block_neg, b), blk.neg_w, 0, size, nl)
            rows_sum(self.row(self.block_pos, b), blk.pos_w, 0, size, nl)
            big_add(self.w_neg_, self.row(self.block_neg, b), nl)
            big_add(self.w_pos_, self.row(self.block_pos, b), nl)
        self.resum_from(0)
        # U2 = sum over scores of (positive weight) * (2 * negative below + negative at)
        memset(below, 0, nl * sizeof(limb))
        for b in range(self.nb):
            blk = &self.blocks[b]
            for k in range(blk.size):
                memcpy(t, below, nl * sizeof(limb))
                t[nl] = 0
                big_add(t, t, nl + 1)
                for j in range(nl):
                    prod[j] = blk.neg_w[k * nl + j]
                prod[nl] = 0
                big_add(t, prod, nl + 1)
                big_mul(prod, blk.pos_w + k * nl, nl, t, nl + 1)
                big_add(self.u2, prod, 2 * nl + 1)
                big_add(below, blk.neg_w + k * nl, nl)
        return 0

    def __reduce__(self):
        return Ranks, (self.owner, self.load, self.max_limbs), self.get_state()

    def __setstate__(self, state):
        self.set_state(state)


def ranks_update(self, y_true, y_pred, w=1.0):
    """Add one event; O(log m) comparisons plus at most about ``m / (2 SB load) + SB +
    load`` row additions of ``L`` limbs and a move of at most ``2 load`` entries, for
    ``m`` distinct scores held. The checks of :mod:`streamcal._validation` run in
    compiled code (their messages unchanged): a bad event raises and changes nothing."""
    cdef Ranks s = self._store
    cdef double e[3]
    check_event(y_true, y_pred, w, s.owner, e)
    s.add(e[0], e[1], e[2])


#: Blocks per superblock of :class:`Ranks` (for the shell's ``_check``).
SUPERBLOCK = SB
#: The most limbs a :class:`Ranks` sum may take (its ``max_limbs`` by default).
MAX_LIMBS = MAXL
