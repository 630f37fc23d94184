"""Matrix products on the matrix engine: cooperative-matrix tiles (tensor cores).

One workgroup of 4 subgroups computes a 128 x 128 block of C; each subgroup a 64 x 64 part as
4 x 4 accumulator tiles of 16 x 16, in f32 whatever the inputs (f16 and bf16 products
accumulate in f32, then round once to the output dtype). Each k step of 32 stages the slices
of A and B in shared memory, copied by the subgroups as 16 x 16 tiles; a B that is the
transposed view of a row-major matrix is loaded with `transpose=True`, never copied.

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

BM, BN, TK = 128, 128, 32  # the block of C one workgroup computes; the k step
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
    AB = ab  # noqa: N806

    @pk.kernel(workgroup=(32, 4, 1))
    def matmul_coop(a: ab[:, :, :, :], b: ab[:, :, :, :], c: out[:, :, :, :], nb2: pk.i32):
        # the 128 x 32 slice of A and 32 x 128 slice of B a k step needs are staged in shared
        # memory (each subgroup copies four 16 x 16 tiles of each); subgroup s then computes
        # the 64 x 64 part (s // 2, s % 2) of the workgroup's 128 x 128 block of C
        # rows padded by 8 elements (16 bytes): unpadded, the tile loads of a k step hit the
        # same shared-memory banks (77 against 51 TFLOP/s at 8192^3 f16 on an H200)
        sa = pk.shared(AB, (128, 40))
        sb = pk.shared(AB, (32, 136))
        s = pk.local_id(1)
        r0 = pk.group_id(1) * 128
        c0 = pk.group_id(0) * 128
        z1 = pk.group_id(2) // nb2
        z2 = pk.group_id(2) % nb2
        wr = (s // 2) * 64
        wc = (s % 2) * 64
        row = r0 + wr
        col = c0 + wc
        c00 = pk.coop_fill(pk.f32, 16, 16, pk.ACCUMULATOR, 0.0)
        c01 = c00
        c02 = c00
        c03 = c00
        c10 = c00
        c11 = c00
        c12 = c00
        c13 = c00
        c20 = c00
        c21 = c00
        c22 = c00
        c23 = c00
        c30 = c00
        c31 = c00
        c32 = c00
        c33 = c00
        for k in range(0, a.shape[3], 32):
            for t in range(4):  # this subgroup's share of the copies
                i = t // 2
                j = t % 2
                ta = pk.coop_load(a, (z1, z2, r0 + s * 32 + i * 16), k + j * 16, 16, 16,
                                  pk.MATRIX_A)
                pk.coop_store(sa, s * 32 + i * 16, j * 16, ta)
                if TB:
                    tb = pk.coop_load(b, (z1, z2, c0 + (s * 2 + j) * 16), k + i * 16, 16, 16,
                                      pk.MATRIX_A, transpose=True)
                else:
                    tb = pk.coop_load(b, (z1, z2, k + i * 16), c0 + (s * 2 + j) * 16, 16, 16,
                                      pk.MATRIX_A)
                pk.coop_store(sb, i * 16, (s * 2 + j) * 16, tb)
            pk.barrier()
            for kk in range(0, 32, 16):
                a0 = pk.coop_load(sa, wr + 0, kk, 16, 16, pk.MATRIX_A)
                a1 = pk.coop_load(sa, wr + 16, kk, 16, 16, pk.MATRIX_A)
                a2 = pk.coop_load(sa, wr + 32, kk, 16, 16, pk.MATRIX_A)
                a3 = pk.coop_load(sa, wr + 48, kk, 16, 16, pk.MATRIX_A)
                b0 = pk.coop_load(sb, kk, wc + 0, 16, 16, pk.MATRIX_B)
                b1 = pk.coop_load(sb, kk, wc + 16, 16, 16, pk.MATRIX_B)
                b2 = pk.coop_load(sb, kk, wc + 32, 16, 16, pk.MATRIX_B)
                b3 = pk.coop_load(sb, kk, wc + 48, 16, 16, pk.MATRIX_B)
                c00 = pk.coop_mma(a0, b0, c00)
                c01 = pk.coop_mma(a0, b1, c01)
                c02 = pk.coop_mma(a0, b2, c02)
                c03 = pk.coop_mma(a0, b3, c03)
                c10 = pk.coop_mma(a1, b0, c10)
                c11 = pk.coop_mma(a1, b1, c11)
                c12 = pk.coop_mma(a1, b2, c12)
                c13 = pk.coop_mma(a1, b3, c13)
                c20 = pk.coop_mma(a2, b0, c20)
                c21 = pk.coop_mma(a2, b1, c21)
                c22 = pk.coop_mma(a2, b2, c22)
                c23 = pk.coop_mma(a2, b3, c23)
                c30 = pk.coop_mma(a3, b0, c30)
                c31 = pk.coop_mma(a3, b1, c31)
                c32 = pk.coop_mma(a3, b2, c32)
                c33 = pk.coop_mma(a3, b3, c33)
            pk.barrier()
        pk.coop_store(c, (z1, z2, row + 0), col + 0, pk.coop_convert(c00, OUT))
        pk.coop_store(c, (z1, z2, row + 0), col + 16, pk.coop_convert(c01, OUT))
        pk.coop_store(c, (z1, z2, row + 0), col + 32, pk.coop_convert(c02, OUT))
        pk.coop_store(c, (z1, z2, row + 0), col + 48, pk.coop_convert(c03, OUT))
        pk.coop_store(c, (z1, z2, row + 16), col + 0, pk.coop_convert(c10, OUT))
        pk.coop_store(c, (z1, z2, row + 16), col + 16, pk.coop_convert(c11, OUT))
        pk.coop_store(c, (z1, z2, row + 16), col + 32, pk.coop_convert(c12, OUT))
        pk.coop_store(c, (z1, z2, row + 16), col + 48, pk.coop_convert(c13, OUT))
        pk.coop_store(c, (z1, z2, row + 32), col + 0, pk.coop_convert(c20, OUT))
        pk.coop_store(c, (z1, z2, row + 32), col + 16, pk.coop_convert(c21, OUT))
        pk.coop_store(c, (z1, z2, row + 32), col + 32, pk.coop_convert(c22, OUT))
        pk.coop_store(c, (z1, z2, row + 32), col + 48, pk.coop_convert(c23, OUT))
        pk.coop_store(c, (z1, z2, row + 48), col + 0, pk.coop_convert(c30, OUT))
        pk.coop_store(c, (z1, z2, row + 48), col + 16, pk.coop_convert(c31, OUT))
        pk.coop_store(c, (z1, z2, row + 48), col + 32, pk.coop_convert(c32, OUT))
        pk.coop_store(c, (z1, z2, row + 48), col + 48, pk.coop_convert(c33, OUT))

    return matmul_coop
