"""Matrix products on the matrix engine: cooperative-matrix tiles (tensor cores).

One workgroup of 4 subgroups computes a 64 x 128 block of C; each subgroup a 32 x 64 part as
2 x 4 accumulator tiles of 16 x 16, in f32 whatever the inputs (f16 and bf16 products
accumulate in f32, then round once to the output dtype). A and B tiles are loaded straight
from the operands (the caches keep the block's rows and columns for the four subgroups); a
B that is the transposed view of a row-major matrix is loaded with `transpose=True`, never
copied.

`coop_matmul` is used where the device multiplies 16 x 16 x 16 tiles of the operands' dtype
into f32, the shapes divide into blocks, and the rows are 16-byte aligned; elsewhere the
portable kernels of `linalg` run.
"""


import functools

import pykern as pk
from pykern.lang.dtypes import DType
from pykern.runtime.feature import Feature
from pykern.tensor.tensor import Tensor
from pykern.tensor.strided import view

BM, BN, TK = 64, 128, 16  # the block of C one workgroup computes; the k step
TILE_DTYPES = ("f16", "bf16")


def _offers(device: object, dtype: DType) -> bool:
    info = device.info  # type: ignore[attr-defined]
    if not info.features.has(Feature.COOPERATIVE_MATRIX):
        return False
    return any((s[0], s[1], s[2]) == (16, 16, 16) and getattr(s[3], "name", s[3]) == dtype.name
               and getattr(s[4], "name", s[4]) == "f32" for s in info.coop_shapes)


def _rows_aligned(t: Tensor, last_contiguous: bool) -> bool:
    item = t.dtype.itemsize
    inner, outer = (-1, -2) if last_contiguous else (-2, -1)
    return (t.element_strides[inner] == 1 and (t.element_strides[outer] * item) % 16 == 0
            and (t.offset * item) % 16 == 0)


def coop_matmul(a: Tensor, b: Tensor, c: Tensor) -> bool:
    """c = a @ b on the matrix engine for 4-d views (B1, B2, M, K) @ (B1, B2, K, N) ->
    (B1, B2, M, N) (batch strides may be 0); False (nothing done) where it does not apply."""
    dtype = a.dtype
    if dtype.name not in TILE_DTYPES or b.dtype != dtype or c.dtype not in (dtype, pk.f32):
        return False
    b1, b2, m, k = a.shape
    n = b.shape[3]
    if m % BM or n % BN or k % TK or not _offers(c.device, dtype):
        return False
    b_rows = _rows_aligned(b, last_contiguous=True)
    if not (_rows_aligned(a, True) and _rows_aligned(c, True)
            and (b_rows or _rows_aligned(b, last_contiguous=False))):
        return False
    if not b_rows:  # B is the transposed view of a row-major (N, K) matrix
        b = view(b, b.shape[:2] + (n, k),
                 b.element_strides[:2] + (b.element_strides[3], b.element_strides[2]), b.offset)
    kern = _kernel(dtype, c.dtype, not b_rows)
    kern[(n // BN) * 32, (m // BM) * 4, b1 * b2](a, b, c, b2)
    return True


@functools.lru_cache(maxsize=None)
def _kernel(ab: DType, out: DType, b_transposed: bool) -> pk.Kernel:
    OUT = out  # noqa: N806
    TB = b_transposed  # noqa: N806

    @pk.kernel(workgroup=(32, 4, 1))
    def matmul_coop(a: ab[:, :, :, :], b: ab[:, :, :, :], c: out[:, :, :, :], nb2: pk.i32):
        # subgroup s of the workgroup (its 32 invocations share local_id(1)) takes the 32 x 64
        # part (s // 2, s % 2) of the 64 x 128 block
        s = pk.local_id(1)
        row = pk.group_id(1) * 64 + (s // 2) * 32
        col = pk.group_id(0) * 128 + (s % 2) * 64
        z1 = pk.group_id(2) // nb2
        z2 = pk.group_id(2) % nb2
        c00 = pk.coop_fill(pk.f32, 16, 16, pk.ACCUMULATOR, 0.0)
        c01 = c00
        c02 = c00
        c03 = c00
        c10 = c00
        c11 = c00
        c12 = c00
        c13 = c00
        for k in range(0, a.shape[3], 16):
            a0 = pk.coop_load(a, (z1, z2, row), k, 16, 16, pk.MATRIX_A)
            a1 = pk.coop_load(a, (z1, z2, row + 16), k, 16, 16, pk.MATRIX_A)
            if TB:
                b0 = pk.coop_load(b, (z1, z2, col), k, 16, 16, pk.MATRIX_B, transpose=True)
                b1 = pk.coop_load(b, (z1, z2, col + 16), k, 16, 16, pk.MATRIX_B, transpose=True)
                b2 = pk.coop_load(b, (z1, z2, col + 32), k, 16, 16, pk.MATRIX_B, transpose=True)
                b3 = pk.coop_load(b, (z1, z2, col + 48), k, 16, 16, pk.MATRIX_B, transpose=True)
            else:
                b0 = pk.coop_load(b, (z1, z2, k), col, 16, 16, pk.MATRIX_B)
                b1 = pk.coop_load(b, (z1, z2, k), col + 16, 16, 16, pk.MATRIX_B)
                b2 = pk.coop_load(b, (z1, z2, k), col + 32, 16, 16, pk.MATRIX_B)
                b3 = pk.coop_load(b, (z1, z2, k), col + 48, 16, 16, pk.MATRIX_B)
            c00 = pk.coop_mma(a0, b0, c00)
            c01 = pk.coop_mma(a0, b1, c01)
            c02 = pk.coop_mma(a0, b2, c02)
            c03 = pk.coop_mma(a0, b3, c03)
            c10 = pk.coop_mma(a1, b0, c10)
            c11 = pk.coop_mma(a1, b1, c11)
            c12 = pk.coop_mma(a1, b2, c12)
            c13 = pk.coop_mma(a1, b3, c13)
        pk.coop_store(c, (z1, z2, row), col, pk.coop_convert(c00, OUT))
        pk.coop_store(c, (z1, z2, row), col + 16, pk.coop_convert(c01, OUT))
        pk.coop_store(c, (z1, z2, row), col + 32, pk.coop_convert(c02, OUT))
        pk.coop_store(c, (z1, z2, row), col + 48, pk.coop_convert(c03, OUT))
        pk.coop_store(c, (z1, z2, row + 16), col, pk.coop_convert(c10, OUT))
        pk.coop_store(c, (z1, z2, row + 16), col + 16, pk.coop_convert(c11, OUT))
        pk.coop_store(c, (z1, z2, row + 16), col + 32, pk.coop_convert(c12, OUT))
        pk.coop_store(c, (z1, z2, row + 16), col + 48, pk.coop_convert(c13, OUT))

    return matmul_coop
