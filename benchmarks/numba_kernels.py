"""The Numba peers of the `host` benchmark (imported only where Numba is): each case written
plainly as a parallel `@njit` loop (`prange` over elements or rows), the algorithm a CPU user
would write first, with Numba's defaults otherwise (no fastmath: IEEE arithmetic, as pykern's).

`cache=True` keeps the machine code between runs (in NUMBA_CACHE_DIR, which
benchmarks/host_peers.py points at the user's cache directory), so only the first run compiles.
Every function writes its result into `out`.
"""

import numpy as np
from numba import njit, prange

EPS = np.float32(1e-5)  # layer_norm's (a compile-time constant)


@njit(parallel=True, cache=True)
def add(a, b, out):
    for i in prange(out.size):
        out[i] = a[i] + b[i]


@njit(parallel=True, cache=True)
def saxpy(alpha, x, y, out):
    for i in prange(out.size):
        out[i] = alpha * x[i] + y[i]


@njit(parallel=True, cache=True)
def sum_rows(x, out):
    for i in prange(x.shape[0]):
        s = np.float32(0.0)
        for j in range(x.shape[1]):
            s += x[i, j]
        out[i] = s


@njit(parallel=True, cache=True)
def sum_cols(x, out):
    for j in prange(x.shape[1]):
        s = np.float32(0.0)
        for i in range(x.shape[0]):
            s += x[i, j]
        out[j] = s


@njit(parallel=True, cache=True)
def softmax(x, out):
    for i in prange(x.shape[0]):
        m = x[i, 0]
        for j in range(x.shape[1]):
            m = max(m, x[i, j])
        s = np.float32(0.0)
        for j in range(x.shape[1]):
            e = np.exp(x[i, j] - m)
            out[i, j] = e
            s += e
        for j in range(x.shape[1]):
            out[i, j] /= s


@njit(parallel=True, cache=True)
def layer_norm(x, out):
    n = np.float32(x.shape[1])  # in f32, as the others: an int would promote to f64
    for i in prange(x.shape[0]):
        mean = np.float32(0.0)
        for j in range(x.shape[1]):
            mean += x[i, j]
        mean /= n
        var = np.float32(0.0)
        for j in range(x.shape[1]):
            d = x[i, j] - mean
            var += d * d
        scale = np.float32(1.0) / np.sqrt(var / n + EPS)
        for j in range(x.shape[1]):
            out[i, j] = (x[i, j] - mean) * scale


@njit(parallel=True, cache=True)
def matmul(a, b, out):
    for i in prange(a.shape[0]):
        for j in range(b.shape[1]):
            out[i, j] = 0.0
        for k in range(a.shape[1]):
            aik = a[i, k]
            for j in range(b.shape[1]):
                out[i, j] += aik * b[k, j]
