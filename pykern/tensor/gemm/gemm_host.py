"""matmul's kernel on the host device (`pk.set_device("host")`): a register-blocked GEMM for
LLVM's vectorisers, without shared memory or barriers.

Each invocation computes a strip of the output: MB rows by TN columns (TN = 64 bytes of the
accumulator, two AVX vectors of f32). K is walked in slices of KB: the invocation first copies
the KB×TN slice of B into a `pk.local` panel (a loop over B's row that the loop vectoriser
turns into vector loads), then runs a TM×TN micro-kernel over each TM rows of its strip: the
accumulator block is a `pk.local` indexed only by constants, so LLVM keeps it in registers,
and each k costs TN/8 panel loads, TM broadcasts of A and TM·TN/8 vector FMAs. Between slices
the blocks wait in a per-invocation strip array. Every output element is one chain of
`step(a, b, acc)` over k in order (an fma for floats), as in the other matmul kernels, so the
result is the same.
"""

import functools

import pykern as pk

from pykern.lang.dtypes import DType
from pykern.tensor.gemm.gemm_tile import step_for
from pykern.tensor.core.promotion import accumulator
from pykern.tensor.core.strided import cdiv
from pykern.tensor.core.tensor import Tensor

TM = 6  # rows of the micro-kernel: 6 × 2 vectors of accumulators fit AVX2's 16 registers
ROW_BLOCKS = 16  # micro-kernel blocks per strip: MB = 96 rows share one B panel
KB = 128  # k per panel
PANEL_BYTES = 64  # TN = this many bytes of accumulator: 16 f32, 8 f64


def launch(a: Tensor, b: Tensor, c: Tensor, accumulate: int) -> None:
    """c = a @ b (+ c where `accumulate`) for 4-D views (batch, batch, M, K) @ (.., K, N)."""
    b1, b2, m, _ = a.shape
    n = b.shape[3]
    tn = _columns(accumulator(c.dtype))
    kern = _kernel(a.dtype, b.dtype, c.dtype)
    kern[cdiv(m, TM * ROW_BLOCKS), cdiv(n, tn), b1 * b2](a, b, c, accumulate)


def _columns(acc: DType) -> int:
    return PANEL_BYTES // acc.itemsize


@functools.lru_cache(maxsize=None)
def _kernel(a_dt: DType, b_dt: DType, c_dt: DType) -> pk.Kernel:
    ACC = accumulator(c_dt)  # noqa: N806
    STEP = step_for(ACC)  # noqa: N806
    TN = _columns(ACC)  # noqa: N806
    NB = ROW_BLOCKS  # noqa: N806
    MB = TM * NB  # noqa: N806

    @pk.kernel
    def matmul_host(a: a_dt[:, :, :, :], b: b_dt[:, :, :, :], c: c_dt[:, :, :, :],
                    accumulate: int):
        mr = pk.global_id(0) * MB  # this invocation's rows [mr, mr + MB)
        n0 = pk.global_id(1) * TN  # and columns [n0, n0 + TN)
        z1, z2 = pk.unravel(pk.global_id(2), c.shape[:2])
        M = a.shape[2]
        K = a.shape[3]
        nt = min(TN, b.shape[3] - n0)
        strip = pk.local(ACC, (MB, TN))
        panel = pk.local(ACC, (KB, TN))
        acc = pk.local(ACC, (TM, TN))
        for k0 in range(0, K, KB):
            kb = min(KB, K - k0)
            # the loop variables index B directly, so B's rows load as vectors
            for kk in range(k0, k0 + kb):
                for j in range(n0, n0 + nt):
                    panel[kk - k0, j - n0] = ACC(b[z1, z2, kk, j])
            for blk in range(NB):
                m0 = mr + blk * TM
                if m0 < M:
                    for i in range(TM):
                        for j in range(TN):
                            acc[i, j] = strip[blk * TM + i, j]
                    for kk in range(kb):
                        for i in range(TM):
                            # rows past the end: computed from the last row, never stored
                            ai = ACC(a[z1, z2, min(m0 + i, M - 1), k0 + kk])
                            for j in range(TN):
                                acc[i, j] = STEP(ai, panel[kk, j], acc[i, j])
                    for i in range(TM):
                        for j in range(TN):
                            strip[blk * TM + i, j] = acc[i, j]
        for r in range(MB):
            if mr + r < M:
                for j in range(TN):
                    if j < nt:
                        v = strip[r, j]
                        if accumulate != 0:
                            v += ACC(c[z1, z2, mr + r, n0 + j])
                        c[z1, z2, mr + r, n0 + j] = v

    return matmul_host
