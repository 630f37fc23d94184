"""`cholesky`: A = L Lᴴ for Hermitian (real: symmetric) positive-definite A, reading A's lower
triangle only (and the real part of its diagonal).

Right-looking and blocked: each diagonal block of up to `block_size` columns is factored by a
kernel that holds it in registers, one workgroup per matrix, which also inverts the factor (a
matrix of up to that many columns is one block: a batch of them is one launch); the block
column below it is L₂₁ = A₂₁ L₁₁⁻ᴴ, a matrix product, and the trailing matrix is updated with
one more, A₂₂ -= L₂₁ L₂₁ᴴ, so nearly all the work runs in the device's GEMM. A factorization
is four launches per block, with no wait for the device inside; the launches of a shape are
recorded on its first call and replayed after (`pykern.tensor.core.dispatch`), CHUNK blocks at
a time, each submitted as soon as recorded (`blocks.in_chunks`). A pivot whose
real part is not positive (or NaN) raises `LinAlgError`, naming the matrix of the batch.
One kernel serves real and complex dtypes: `pk.conj` and `.real` are identities on reals.
"""

from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.linalg import gradients
from pykern.linalg.blocks import block, in_chunks
from pykern.linalg.checks import Matrices, adjoint, finish, first_flagged, matrices
from pykern.linalg.cholesky_kernels import diagonal_kernel, small_kernel, update_kernel
from pykern.linalg.errors import LinAlgError
from pykern.linalg.gradients import differentiable
from pykern.tensor.core.device_limits import is_cpu_device
from pykern.tensor.core.strided import cdiv
from pykern.tensor.core.tensor import Tensor, empty
from pykern.tensor.create.creation import tril, zeros
from pykern.tensor.elementwise.functions import as_tensor
from pykern.tensor.gemm.matmul import matmul

# (G, TS) of the diagonal block kernel: G×G invocations holding TS×TS tiles of a G·TS block,
# by the bytes of an element: GPUs keep 32 words of tiles per invocation of 1,024 (registers),
# and take fewer invocations (a power of two) for smaller matrices. CPU devices run a
# workgroup's invocations in turn: their tiles are larger, and G is fixed, as every (G, TS) is
# a kernel to compile (LLVM takes about a second for 4×4 tiles, ten for 8×8)
GPU_TILES = {4: (32, 4), 8: (32, 2), 16: (16, 2)}
CPU_TILES = {4: (16, 4), 8: (16, 4), 16: (16, 2)}
SMALL = 32  # CPU devices: up to this many columns, one invocation per matrix
CHUNK = 8  # blocks recorded (and submitted to the device) at a time
# tests set this to factor in small blocks (several blocks at small sizes)
FORCE_TILES: tuple[int, int] | None = None


def cholesky(x: object, /, *, upper: bool = False) -> Tensor:
    """The lower Cholesky factor L of each Hermitian (real: symmetric) positive-definite
    matrix of `x` (..., n, n), with x = L @ Lᴴ; with `upper=True`, U = Lᴴ (x = Uᴴ @ U). Only
    the lower triangle of `x` is read (of the diagonal, the real part). Raises `LinAlgError`
    when a matrix is not positive definite.

        pk.linalg.cholesky(pk.asarray([[4.0, 2.0], [2.0, 5.0]]))   # [[2, 0], [1, 2]]
    """
    if not isinstance(upper, (bool, int)):
        raise TypeError("cholesky: upper must be a bool")
    t = as_tensor(x, "cholesky: x")
    return differentiable("linalg.cholesky", (t,), lambda a: _cholesky(a, bool(upper)),
                          gradients.cholesky(bool(upper)), complex_ok=True)


def _cholesky(x: Tensor, upper: bool) -> Tensor:
    m = matrices(x, "cholesky", square=True)
    a = m.batch
    n = m.rows
    if a.shape[0] and n:
        info = _factor(a)
        _check_positive(info, m)
    lower = tril(a)
    if upper:
        lower = adjoint(lower).contiguous()
    return finish(lower, m, (n, n))


def tiles(dtype: DType, n: int) -> tuple[int, int]:
    """(G, TS) of the diagonal block kernel for matrices of n columns: blocks of G·TS columns,
    G no larger than n needs."""
    if FORCE_TILES is not None:
        return FORCE_TILES
    if is_cpu_device():
        return CPU_TILES[dtype.itemsize]
    g, ts = GPU_TILES[dtype.itemsize]
    while g > 2 and (g // 2) * ts >= n:
        g //= 2
    return g, ts


def small(n: int) -> bool:
    """Whether n×n matrices are factored one invocation each (CPU devices, up to 32 columns,
    where a workgroup that synchronises costs more than the whole factorization)."""
    return is_cpu_device() and n <= SMALL and FORCE_TILES is None


def _factor(a: Tensor) -> Tensor:
    """Factors the (B, n, n) stack `a` in place (its lower triangle); returns the info codes:
    0, or 1 + the first pivot that is not positive."""
    bsz, n = a.shape[0], a.shape[1]
    info = zeros((bsz,), dt.i32)
    if small(n):
        small_kernel(a.dtype)[bsz](a, info)
        return info
    g, ts = tiles(a.dtype, n)
    nb = g * ts
    inv_h = empty((bsz, nb, nb), a.dtype)
    in_chunks(("linalg.cholesky", g, ts), (a, inv_h, info), cdiv(n, nb),
              lambda lo, hi: _blocks(a, inv_h, info, g, ts, lo, hi), CHUNK)
    return info


def _blocks(a: Tensor, inv_h: Tensor, info: Tensor, g: int, ts: int, lo: int, hi: int) -> None:
    """Diagonal blocks lo..hi of the factorization: four launches each."""
    bsz, n = a.shape[0], a.shape[1]
    nb = g * ts
    diag = diagonal_kernel(a.dtype, g, ts)
    for k0 in range(lo * nb, min(n, hi * nb), nb):
        w = min(nb, n - k0)
        rest = n - k0 - w
        diag[g * g, bsz](a, inv_h, info, k0, w, int(rest > 0))
        if rest:
            p = matmul(block(a, k0 + w, k0, rest, w), block(inv_h, 0, 0, w, w))
            q = matmul(p, adjoint(p))
            update_kernel(a.dtype)[w + rest, rest, bsz](a, p, q, k0, w)


def _check_positive(info: Tensor, m: Matrices) -> None:
    failed = first_flagged(info.numpy(), m.batch_shape)
    if failed:
        where, code = failed
        raise LinAlgError(f"cholesky: x is not positive definite{where}: pivot {code - 1} is "
                          "not positive")
