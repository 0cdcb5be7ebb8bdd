# The equal-width bin rule of streamcal.core.bins.uniform_bin, compiled in by the
# per-event kernels that bin on the edges ``j / n`` (metrics/_kernels.pyx: ECE,
# Sharpness, MurphyDecomposition; core/_binning.pyx: HistogramBinning "uniform").
# tests/test_core_bins.py checks it against the Python function and bisect_right.


cdef inline Py_ssize_t uniform_bin(double p, Py_ssize_t n, const double* edges) noexcept nogil:
    """Bin of ``p`` in [0, 1] among ``n`` equal-width bins, ``edges[i] <= p <
    edges[i + 1]`` (last bin closed; ``edges[j] = j / n``, ``uniform_edges(n)``): ``p *
    n`` rounds, so ``int(p * n)`` can be one off near an edge, and two comparisons
    correct it (streamcal.core.bins)."""
    cdef Py_ssize_t b = <Py_ssize_t>(p * n)
    if b >= n:
        return n - 1
    if p < edges[b]:
        return b - 1
    if b + 1 < n and p >= edges[b + 1]:
        return b + 1
    return b
