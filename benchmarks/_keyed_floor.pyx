# cython: language_level=3, boundscheck=False, wraparound=False
"""Lower bounds of a keyed calibrator's per-event cost (bench_keyed_floor.py; not part
of streamcal). Each ``Floor`` has KeyedCalibrator's signature (``predict_one(key, s)``,
``learn_one(key, s, y)``) and does the same unkeyed work on ONE shared, always cached
OnlinePlatt (its C entry points), plus only the keying work its ``mode`` names:

0 "call"        nothing: the cost of the extra argument
2 "lookup"      one dict lookup of the key (key -> row int) per event (the key object of
                predict_one remembered for learn_one, as the kernel does)
3 "lookup+row"  2 and a 128-byte row of a per-key table read by predict, written by learn
                (the state of a struct-of-arrays table, without the objects)
4 "hash+row"    the key's hash picks the row, no dict: no key comparison, no LRU (what
                no exact design can beat)
5 "...+odict"   3 through an OrderedDict, with OrderedDict.move_to_end per learn (LRU)
6 "...+array"   3 and an exact LRU kept as a doubly linked list in two int arrays
"""

import collections

from cpython.dict cimport PyDict_GetItem
from cpython.ref cimport PyObject
from libc.stdlib cimport free, malloc

from streamcal.core._newton cimport LogisticKernel

cdef object _move_to_end = collections.OrderedDict.move_to_end


cdef class Floor:
    cdef object d
    cdef LogisticKernel k
    cdef object last_key
    cdef Py_ssize_t last_row, nrows
    cdef int mode
    cdef double* rows
    cdef int* prv
    cdef int* nxt

    def __init__(self, d, LogisticKernel k, int mode):
        cdef Py_ssize_t i, n = len(d)
        self.d, self.k, self.mode, self.nrows = d, k, mode, n
        self.last_key = None
        self.rows = <double*>malloc(n * 16 * sizeof(double))
        self.prv = <int*>malloc((n + 1) * sizeof(int))  # row n: the sentinel
        self.nxt = <int*>malloc((n + 1) * sizeof(int))
        for i in range(n * 16):
            self.rows[i] = 0.0
        for i in range(n + 1):
            self.prv[i] = i - 1 if i > 0 else n
            self.nxt[i] = i + 1 if i < n else 0

    def __dealloc__(self):
        free(self.rows)
        free(self.prv)
        free(self.nxt)

    cdef inline Py_ssize_t row(self, key):
        if self.mode == 0:
            return 0
        if self.mode == 4:
            return <Py_ssize_t>((<size_t>hash(key)) % <size_t>self.nrows)
        if key is self.last_key:
            return self.last_row
        self.last_row = <Py_ssize_t><object>PyDict_GetItem(self.d, key)
        self.last_key = key
        return self.last_row

    cdef inline void move(self, Py_ssize_t r):
        cdef int sent = <int>self.nrows
        if self.prv[sent] == r:
            return
        self.nxt[self.prv[r]] = self.nxt[r]
        self.prv[self.nxt[r]] = self.prv[r]
        self.prv[r] = self.prv[sent]
        self.nxt[r] = sent
        self.nxt[self.prv[sent]] = <int>r
        self.prv[sent] = <int>r

    def predict_one(self, key, double s):
        cdef Py_ssize_t r = self.row(key)
        if self.mode >= 3:
            s += self.rows[16 * r] * 0.0
        return self.k.c_predict(s)

    def learn_one(self, key, double s, y):
        cdef Py_ssize_t r = self.row(key)
        if self.mode >= 3:
            self.rows[16 * r + 1] += s
        if self.mode == 5:
            _move_to_end(self.d, key)
        elif self.mode == 6:
            self.move(r)
        self.k.c_learn(s, <double>y, 1.0)
