"""The LU factorization of small matrices, one invocation per matrix: no barriers and no
shared memory, which suits large batches of tiny matrices (on CPU devices a workgroup that
synchronises costs far more than the few hundred operations of an 8×8 factorization)."""

import functools
import math

import pykern as pk

from pykern.lang.dtypes import DType
from pykern.linalg.pivots import pivot_size
from pykern.tensor.core.tensor import Tensor

GPU_LARGEST = 8  # GPUs: beyond this the one-workgroup panel kernel is faster
CPU_LARGEST = 32  # CPU devices: up to the panel width


def factor_small(a: Tensor, pivots: Tensor, info: Tensor) -> None:
    """Factors each (n, n) matrix of the (B, n, n) stack `a` in place, as lu_panel does
    (same pivots, same multipliers), each in one invocation."""
    _small_kernel(a.dtype)[a.shape[0]](a, pivots, info)


@functools.lru_cache(maxsize=None)
def _small_kernel(dtype: DType) -> pk.Kernel:
    RT = dtype.real_dtype  # noqa: N806

    @pk.kernel
    def linalg_lu_small(a: dtype[:, :, :], pivots: pk.i32[:, :], info: pk.i32[:]):
        b = pk.global_id(0)
        n = a.shape[1]
        for k in range(n):
            bv: RT = -1.0
            p = k
            for i in range(k, n):
                v = pivot_size(a[b, i, k])
                if i == k and pk.isnan(v):  # LAPACK's idamax keeps a NaN in row k
                    v = math.inf
                if v > bv:
                    bv = v
                    p = i
            pivots[b, k] = p
            if p != k:
                for j in range(n):
                    x = a[b, k, j]
                    a[b, k, j] = a[b, p, j]
                    a[b, p, j] = x
            d = a[b, k, k]
            if d == 0:
                if info[b] == 0:
                    info[b] = k + 1
            else:
                for i in range(k + 1, n):
                    ell = a[b, i, k] / d
                    a[b, i, k] = ell
                    for j in range(k + 1, n):
                        a[b, i, j] = a[b, i, j] - ell * a[b, k, j]

    return linalg_lu_small
