"""The back substitution U X = Y that finishes `solve` and `inv`, on the transposed factors of
`lu` (Uᵀ in the lower triangle of lu[:, :n, :], the eliminated right-hand sides Yᵀ in its rows
n..): Xᵀ Uᵀ = Yᵀ, solved in place of Yᵀ.

Blocked, from the last block of columns to the first: a diagonal block of up to
`block_rows` columns is solved by substitution — on GPUs one workgroup per right-hand side,
one invocation per column of the block and a barrier per column; on CPU devices one
invocation per right-hand side, in turn — and the columns still to solve are then updated with
one matrix product (`blocks.subtract_product`), so nearly all the work runs in the GEMM.
"""

import functools

import pykern as pk

from pykern.lang.dtypes import DType
from pykern.linalg.blocks import block, subtract_product
from pykern.tensor.core.device_limits import is_cpu_device
from pykern.tensor.core.tensor import Tensor

GPU_BLOCK = 256  # columns of a diagonal block on GPUs (its workgroup's invocations)
CPU_BLOCK = 64


def block_rows() -> int:
    """Columns of a diagonal block of the substitution on the current device."""
    return CPU_BLOCK if is_cpu_device() else GPU_BLOCK


def solve_upper(x: Tensor) -> None:
    """Rows n.. of the transposed factors `x` (B, n + k, n) := those rows times U⁻ᵀ (the right
    -hand sides' solutions, transposed)."""
    n = x.shape[2]
    k = x.shape[1] - n
    if n == 0 or k == 0:
        return
    nb = block_rows()
    for i0 in reversed(range(0, n, nb)):
        w = min(nb, n - i0)
        _solve_block(x, i0, w, k)
        if i0:
            subtract_product(block(x, n, 0, k, i0), block(x, n, i0, k, w),
                             block(x, i0, 0, w, i0))


def _solve_block(x: Tensor, i0: int, w: int, k: int) -> None:
    bsz = x.shape[0]
    if is_cpu_device():
        _sequential_kernel(x.dtype)[k, bsz](x, i0, w)
        return
    threads = max(32, 1 << (w - 1).bit_length())
    _workgroup_kernel(x.dtype, threads)[threads, k, bsz](x, i0, w)


@functools.lru_cache(maxsize=None)
def _workgroup_kernel(dtype: DType, threads: int) -> pk.Kernel:
    T = threads  # noqa: N806

    @pk.kernel(workgroup=(T, 1, 1))
    def linalg_back_substitution(x: dtype[:, :, :], i0: int, w: int):
        c = pk.local_id(0)
        z = x.shape[2] + pk.group_id(1)
        b = pk.global_id(2)
        solved = pk.shared(dtype, 2)
        zc = dtype(0.0)
        if c < w:
            zc = x[b, z, i0 + c]
        for step in range(w):
            i = w - 1 - step
            if c == i:
                zc = zc / x[b, i0 + i, i0 + i]
                solved[step % 2] = zc
            pk.barrier()
            if c < i:
                zc -= solved[step % 2] * x[b, i0 + i, i0 + c]
        if c < w:
            x[b, z, i0 + c] = zc

    return linalg_back_substitution


@functools.lru_cache(maxsize=None)
def _sequential_kernel(dtype: DType) -> pk.Kernel:
    @pk.kernel
    def linalg_back_substitution_rows(x: dtype[:, :, :], i0: int, w: int):
        z = x.shape[2] + pk.global_id(0)
        b = pk.global_id(1)
        for step in range(w):  # row i of Uᵀ is a row of x: taken from the unknowns before i
            i = w - 1 - step
            s = x[b, z, i0 + i] / x[b, i0 + i, i0 + i]
            x[b, z, i0 + i] = s
            for c in range(i):
                x[b, z, i0 + c] = x[b, z, i0 + c] - s * x[b, i0 + i, i0 + c]

    return linalg_back_substitution_rows
