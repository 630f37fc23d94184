"""The QR factorization of small matrices on CPU devices, one invocation per matrix: no
barriers and no shared memory, which suits large batches of tiny matrices (a workgroup that
synchronises costs a CPU device more than the few thousand operations of an 8×8 QR). The
reflectors are LAPACK's, as the panel kernel's (`qr_panel`): the same R and Q up to rounding."""

import functools

import pykern as pk

from pykern.lang.dtypes import DType
from pykern.tensor.core.device_limits import is_cpu_device, loop_budget
from pykern.tensor.core.tensor import Tensor

LARGEST = 32  # rows and columns


def small(m: int, n: int) -> bool:
    """Whether m×n matrices take this kernel on the current device (within its loop budget)."""
    budget = loop_budget()
    work = 2 * max(m, n) ** 3
    return is_cpu_device() and max(m, n) <= LARGEST and (budget is None or work < budget)


def factor_small(a: Tensor, q: Tensor) -> None:
    """Householder-factors each matrix of the (B, m, n) stack `a` in place (R on and above
    the diagonal, the reflectors below) and writes Q's first q.shape[2] columns to `q`."""
    _small_kernel(a.dtype)[a.shape[0]](a, q)


@functools.lru_cache(maxsize=None)
def _small_kernel(dtype: DType) -> pk.Kernel:
    DT, RT, W = dtype, dtype.real_dtype, LARGEST  # noqa: N806

    @pk.kernel
    def linalg_qr_small(a: DT[:, :, :], q: DT[:, :, :]):
        b = pk.global_id(0)
        m = a.shape[1]
        n = a.shape[2]
        k = min(m, n)
        taus = pk.local(DT, W)
        for j in range(k):
            sigma = RT(0.0)
            for i in range(j + 1, m):
                x = a[b, i, j]
                sigma += x.real * x.real + x.imag * x.imag
            alpha = a[b, j, j]
            ar = alpha.real
            ai = alpha.imag
            tau = DT(0.0)
            if sigma != 0 or ai != 0:
                beta = -pk.copysign(pk.sqrt(ar * ar + ai * ai + sigma), ar)
                tau = (beta - alpha) / beta
                scale = 1 / (alpha - beta)
                for i in range(j + 1, m):
                    a[b, i, j] = a[b, i, j] * scale
                a[b, j, j] = DT(beta)
            taus[j] = tau
            for c in range(j + 1, n):  # Hᴴ: a_c -= conj(τ) v (vᴴ a_c)
                d = a[b, j, c]
                for i in range(j + 1, m):
                    d += pk.conj(a[b, i, j]) * a[b, i, c]
                f = pk.conj(tau) * d
                a[b, j, c] = a[b, j, c] - f
                for i in range(j + 1, m):
                    a[b, i, c] = a[b, i, c] - f * a[b, i, j]
        cols = q.shape[2]
        for i in range(m):
            for c in range(cols):
                q[b, i, c] = DT(1.0) if i == c else DT(0.0)
        for step in range(k):  # Q = H_0 ··· H_k-1 I, the last reflector first
            j = k - 1 - step
            tau = taus[j]
            for c in range(j, cols):  # H: q_c -= τ v (vᴴ q_c)
                d = q[b, j, c]
                for i in range(j + 1, m):
                    d += pk.conj(a[b, i, j]) * q[b, i, c]
                f = tau * d
                q[b, j, c] = q[b, j, c] - f
                for i in range(j + 1, m):
                    q[b, i, c] = q[b, i, c] - f * a[b, i, j]

    return linalg_qr_small
