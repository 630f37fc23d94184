"""Matrix products on the matrix engine: cooperative-matrix tiles (tensor cores).

One workgroup of 4 subgroups computes a 128 x 128 block of C; each subgroup a 64 x 64 part as
4 x 4 accumulator tiles of 16 x 16, in f32 whatever the inputs (f16 and bf16 products
accumulate in f32, then round once to the output dtype). Each k slice of 32 is staged in
shared memory by plain 8-byte copies (the operands are read as 64-bit words), fetched into
registers one slice ahead so that the copies overlap the multiplies; the tiles are then loaded
from shared memory as packed 16-bit elements (`pk.coop_load(..., dtype=)`). A B that is the
transposed view of a row-major matrix is staged as such and loaded with `transpose=True`.

`coop_matmul` is used for f16 and bf16 (into f32, stored as f32 or rounded to the operands'
dtype) and i8 and u8 (into i32 and u32: `pk.matmul(a, b, dtype=pk.i32)`) where the device
multiplies 16 x 16 tiles of them, the shapes divide into blocks and the rows are 16-byte
aligned; elsewhere the portable kernels of `linalg` run.
"""

import functools

import pykern as pk
from pykern.lang.dtypes import DType
from pykern.runtime.feature import Feature
from pykern.tensor.core.strided import view
from pykern.tensor.elementwise.functions import assign
from pykern.tensor.core.tensor import Tensor, empty

BM, BN = 128, 128  # the block of C one workgroup computes
# operand dtype -> the accumulator the tiles multiply into (and the results it may be stored as)
ACCUMULATORS = {"f16": "f32", "bf16": "f32", "i8": "i32", "u8": "u32"}
TILE_DTYPES = ("f16", "bf16")  # the float operands (16-bit: four to a 64-bit word)


# The kernels' configuration per device: the tile kernels of the op library take a
# workgroup of 4 subgroups as (32, 4) and name a subgroup by local_id(1), so they need
# 32-wide subgroups (NVIDIA's; AMD's wave64 and Intel's 8/16 take the portable kernels), and
# 48 KiB of shared memory: the largest of them (attention_coop at head dimension 128) takes 43.
SUBGROUP_SIZE = 32
SHARED_BYTES = 48 * 1024


def _offers(device: object, dtype: DType) -> bool:
    """The device multiplies 16 x 16 tiles of `dtype` (k = 16, or 32 for 8-bit) into its
    accumulator type, with the subgroup size and shared memory the kernels are laid out for."""
    info = device.info  # type: ignore[attr-defined]
    if not info.features.has(Feature.COOPERATIVE_MATRIX) or not info.features.int64 \
            or info.features.subgroup_size != SUBGROUP_SIZE \
            or info.limits.max_shared_memory < SHARED_BYTES:
        return False
    want = (16, 16, 32 // dtype.itemsize, dtype.name, ACCUMULATORS[dtype.name])
    return any((s[0], s[1], s[2], getattr(s[3], "name", s[3]), getattr(s[4], "name", s[4]))
               == want for s in info.coop_shapes)


def _words(t: Tensor, last_contiguous: bool) -> Tensor | None:
    """`t` as 64-bit words along its contiguous dimension — the last, or with
    `last_contiguous` False the one before (then the two are swapped, so the words are the last
    dimension again) — or None where the view's offset and strides do not fall on whole,
    16-byte aligned rows."""
    per_word, per_row = 8 // t.dtype.itemsize, 16 // t.dtype.itemsize
    strides = list(t.element_strides)
    shape = list(t.shape)
    if not last_contiguous:
        strides[-1], strides[-2] = strides[-2], strides[-1]
        shape[-1], shape[-2] = shape[-2], shape[-1]
    if strides[-1] != 1 or shape[-1] % per_word or t.offset % per_row or strides[-2] % per_row \
            or any(s % per_word for s in strides[:-2]):
        return None
    words = Tensor(t.buffer, t.shape, pk.u64, t.element_strides, 0)  # the same memory
    return view(words, tuple(shape[:-1]) + (shape[-1] // per_word,),
                tuple(s // per_word for s in strides[:-1]) + (1,), t.offset // per_word)


def coop_matmul(a: Tensor, b: Tensor, c: Tensor) -> bool:
    """c = a @ b on the matrix engine for 4-d views (B1, B2, M, K) @ (B1, B2, K, N) ->
    (B1, B2, M, N) (batch strides may be 0); False (nothing done) where it does not apply."""
    dtype = a.dtype
    acc = ACCUMULATORS.get(dtype.name)
    if acc is None or b.dtype != dtype or c.dtype.name not in (dtype.name, acc) \
            or (dtype.is_int and c.dtype.name != acc):
        return False
    b1, b2, m, k = a.shape
    n = b.shape[3]
    slice_k = 64 // dtype.itemsize  # 8 words of each row per k slice
    if m % BM or n % BN or k % slice_k or not _offers(c.device, dtype):
        return False
    ca = c.element_strides
    if c.dtype.name != "bf16" and (ca[-1] != 1 or (c.offset * c.dtype.itemsize) % 16
                                   or (ca[-2] * c.dtype.itemsize) % 16):
        return False
    aw = _words(a, last_contiguous=True)
    bw = _words(b, last_contiguous=True)
    transposed = bw is None
    if transposed:
        bw = _words(b, last_contiguous=False)
    if aw is None or bw is None:
        return False
    # no device has bf16 accumulator tiles: a bf16 result is rounded from an f32 one
    direct = c.dtype.name != "bf16"
    result = c if direct else empty(c.shape, pk.f32)
    kern = _kernel(dtype, result.dtype, transposed)
    kern[(n // BN) * 32, (m // BM) * 4, b1 * b2](aw, bw, result, b2)
    if not direct:
        assign(c, result)
    return True


@functools.lru_cache(maxsize=None)
def _kernel(ab: DType, out: DType, b_transposed: bool) -> pk.Kernel:
    AB = ab  # noqa: N806
    OUT = out  # noqa: N806
    ACC = pk.f32 if ab.is_float else (pk.i32 if ab.is_signed else pk.u32)  # noqa: N806
    TB = b_transposed  # noqa: N806
    EPW = 8 // ab.itemsize  # noqa: N806  (elements per 64-bit word)
    TK = 4 * EPW  # noqa: N806  (the k of one tile multiply: 16 for 16-bit, 32 for 8-bit)
    BK = 2 * TK  # noqa: N806  (the k slice staged at a time: 8 words per row)
    BW = 128 // EPW  # noqa: N806  (words per row of B's 128 columns)

    @pk.kernel(workgroup=(32, 4, 1))
    def matmul_coop(a: pk.u64[:, :, :, :], b: pk.u64[:, :, :, :], c: out[:, :, :, :],
                    nb2: pk.i32):
        # a, b: the operands' elements as 64-bit words (EPW each), so that the copies into
        # shared memory move 8 bytes per load. Each k slice of BK is staged there: A's 128 x BK
        # block, and B's BK x 128 block (with TB, the 128 x BK block of B transposed); rows
        # padded by 2 words, so that the tile loads of a k step spread over the memory banks.
        # Subgroup s computes the 64 x 64 part (s // 2, s % 2) of the 128 x 128 block of C.
        sa = pk.shared(pk.u64, (128, 10))
        sb = pk.shared(pk.u64, (BK, BW + 2))
        sbt = pk.shared(pk.u64, (128, 10))
        s = pk.local_id(1)
        tid = s * 32 + pk.local_id(0)
        r0 = pk.group_id(1) * 128
        c0 = pk.group_id(0) * 128
        z1 = pk.group_id(2) // nb2
        z2 = pk.group_id(2) % nb2
        wr = (s // 2) * 64
        wc = (s % 2) * 64
        row = r0 + wr
        col = c0 + wc
        c00 = pk.coop_fill(ACC, 16, 16, pk.ACCUMULATOR, 0)
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
        # the first k slice, fetched into registers; each iteration stores the slice it holds
        # and fetches the next one while the tiles of this one are multiplied
        x0 = a[z1, z2, r0 + (tid + 0) // 8, 0 // EPW + (tid + 0) % 8]
        x1 = a[z1, z2, r0 + (tid + 128) // 8, 0 // EPW + (tid + 128) % 8]
        x2 = a[z1, z2, r0 + (tid + 256) // 8, 0 // EPW + (tid + 256) % 8]
        x3 = a[z1, z2, r0 + (tid + 384) // 8, 0 // EPW + (tid + 384) % 8]
        x4 = a[z1, z2, r0 + (tid + 512) // 8, 0 // EPW + (tid + 512) % 8]
        x5 = a[z1, z2, r0 + (tid + 640) // 8, 0 // EPW + (tid + 640) % 8]
        x6 = a[z1, z2, r0 + (tid + 768) // 8, 0 // EPW + (tid + 768) % 8]
        x7 = a[z1, z2, r0 + (tid + 896) // 8, 0 // EPW + (tid + 896) % 8]
        if TB:
            y0 = b[z1, z2, c0 + (tid + 0) // 8, 0 // EPW + (tid + 0) % 8]
            y1 = b[z1, z2, c0 + (tid + 128) // 8, 0 // EPW + (tid + 128) % 8]
            y2 = b[z1, z2, c0 + (tid + 256) // 8, 0 // EPW + (tid + 256) % 8]
            y3 = b[z1, z2, c0 + (tid + 384) // 8, 0 // EPW + (tid + 384) % 8]
            y4 = b[z1, z2, c0 + (tid + 512) // 8, 0 // EPW + (tid + 512) % 8]
            y5 = b[z1, z2, c0 + (tid + 640) // 8, 0 // EPW + (tid + 640) % 8]
            y6 = b[z1, z2, c0 + (tid + 768) // 8, 0 // EPW + (tid + 768) % 8]
            y7 = b[z1, z2, c0 + (tid + 896) // 8, 0 // EPW + (tid + 896) % 8]
        else:
            y0 = b[z1, z2, 0 + (tid + 0) // BW, c0 // EPW + (tid + 0) % BW]
            y1 = b[z1, z2, 0 + (tid + 128) // BW, c0 // EPW + (tid + 128) % BW]
            y2 = b[z1, z2, 0 + (tid + 256) // BW, c0 // EPW + (tid + 256) % BW]
            y3 = b[z1, z2, 0 + (tid + 384) // BW, c0 // EPW + (tid + 384) % BW]
            y4 = b[z1, z2, 0 + (tid + 512) // BW, c0 // EPW + (tid + 512) % BW]
            y5 = b[z1, z2, 0 + (tid + 640) // BW, c0 // EPW + (tid + 640) % BW]
            y6 = b[z1, z2, 0 + (tid + 768) // BW, c0 // EPW + (tid + 768) % BW]
            y7 = b[z1, z2, 0 + (tid + 896) // BW, c0 // EPW + (tid + 896) % BW]
        for k in range(BK, a.shape[3] * EPW + BK, BK):
            sa[(tid + 0) // 8, (tid + 0) % 8] = x0
            sa[(tid + 128) // 8, (tid + 128) % 8] = x1
            sa[(tid + 256) // 8, (tid + 256) % 8] = x2
            sa[(tid + 384) // 8, (tid + 384) % 8] = x3
            sa[(tid + 512) // 8, (tid + 512) % 8] = x4
            sa[(tid + 640) // 8, (tid + 640) % 8] = x5
            sa[(tid + 768) // 8, (tid + 768) % 8] = x6
            sa[(tid + 896) // 8, (tid + 896) % 8] = x7
            if TB:
                sbt[(tid + 0) // 8, (tid + 0) % 8] = y0
                sbt[(tid + 128) // 8, (tid + 128) % 8] = y1
                sbt[(tid + 256) // 8, (tid + 256) % 8] = y2
                sbt[(tid + 384) // 8, (tid + 384) % 8] = y3
                sbt[(tid + 512) // 8, (tid + 512) % 8] = y4
                sbt[(tid + 640) // 8, (tid + 640) % 8] = y5
                sbt[(tid + 768) // 8, (tid + 768) % 8] = y6
                sbt[(tid + 896) // 8, (tid + 896) % 8] = y7
            else:
                sb[(tid + 0) // BW, (tid + 0) % BW] = y0
                sb[(tid + 128) // BW, (tid + 128) % BW] = y1
                sb[(tid + 256) // BW, (tid + 256) % BW] = y2
                sb[(tid + 384) // BW, (tid + 384) % BW] = y3
                sb[(tid + 512) // BW, (tid + 512) % BW] = y4
                sb[(tid + 640) // BW, (tid + 640) % BW] = y5
                sb[(tid + 768) // BW, (tid + 768) % BW] = y6
                sb[(tid + 896) // BW, (tid + 896) % BW] = y7
            pk.barrier()
            if k < a.shape[3] * EPW:
                x0 = a[z1, z2, r0 + (tid + 0) // 8, k // EPW + (tid + 0) % 8]
                x1 = a[z1, z2, r0 + (tid + 128) // 8, k // EPW + (tid + 128) % 8]
                x2 = a[z1, z2, r0 + (tid + 256) // 8, k // EPW + (tid + 256) % 8]
                x3 = a[z1, z2, r0 + (tid + 384) // 8, k // EPW + (tid + 384) % 8]
                x4 = a[z1, z2, r0 + (tid + 512) // 8, k // EPW + (tid + 512) % 8]
                x5 = a[z1, z2, r0 + (tid + 640) // 8, k // EPW + (tid + 640) % 8]
                x6 = a[z1, z2, r0 + (tid + 768) // 8, k // EPW + (tid + 768) % 8]
                x7 = a[z1, z2, r0 + (tid + 896) // 8, k // EPW + (tid + 896) % 8]
                if TB:
                    y0 = b[z1, z2, c0 + (tid + 0) // 8, k // EPW + (tid + 0) % 8]
                    y1 = b[z1, z2, c0 + (tid + 128) // 8, k // EPW + (tid + 128) % 8]
                    y2 = b[z1, z2, c0 + (tid + 256) // 8, k // EPW + (tid + 256) % 8]
                    y3 = b[z1, z2, c0 + (tid + 384) // 8, k // EPW + (tid + 384) % 8]
                    y4 = b[z1, z2, c0 + (tid + 512) // 8, k // EPW + (tid + 512) % 8]
                    y5 = b[z1, z2, c0 + (tid + 640) // 8, k // EPW + (tid + 640) % 8]
                    y6 = b[z1, z2, c0 + (tid + 768) // 8, k // EPW + (tid + 768) % 8]
                    y7 = b[z1, z2, c0 + (tid + 896) // 8, k // EPW + (tid + 896) % 8]
                else:
                    y0 = b[z1, z2, k + (tid + 0) // BW, c0 // EPW + (tid + 0) % BW]
                    y1 = b[z1, z2, k + (tid + 128) // BW, c0 // EPW + (tid + 128) % BW]
                    y2 = b[z1, z2, k + (tid + 256) // BW, c0 // EPW + (tid + 256) % BW]
                    y3 = b[z1, z2, k + (tid + 384) // BW, c0 // EPW + (tid + 384) % BW]
                    y4 = b[z1, z2, k + (tid + 512) // BW, c0 // EPW + (tid + 512) % BW]
                    y5 = b[z1, z2, k + (tid + 640) // BW, c0 // EPW + (tid + 640) % BW]
                    y6 = b[z1, z2, k + (tid + 768) // BW, c0 // EPW + (tid + 768) % BW]
                    y7 = b[z1, z2, k + (tid + 896) // BW, c0 // EPW + (tid + 896) % BW]
            for kw in range(0, 8, 4):  # two k steps of TK elements (4 words each)
                a0 = pk.coop_load(sa, wr + 0, kw, 16, TK, pk.MATRIX_A, dtype=AB)
                a1 = pk.coop_load(sa, wr + 16, kw, 16, TK, pk.MATRIX_A, dtype=AB)
                a2 = pk.coop_load(sa, wr + 32, kw, 16, TK, pk.MATRIX_A, dtype=AB)
                a3 = pk.coop_load(sa, wr + 48, kw, 16, TK, pk.MATRIX_A, dtype=AB)
                if TB:
                    b0 = pk.coop_load(sbt, wc + 0, kw, TK, 16, pk.MATRIX_B, dtype=AB,
                                       transpose=True)
                    b1 = pk.coop_load(sbt, wc + 16, kw, TK, 16, pk.MATRIX_B, dtype=AB,
                                       transpose=True)
                    b2 = pk.coop_load(sbt, wc + 32, kw, TK, 16, pk.MATRIX_B, dtype=AB,
                                       transpose=True)
                    b3 = pk.coop_load(sbt, wc + 48, kw, TK, 16, pk.MATRIX_B, dtype=AB,
                                       transpose=True)
                else:
                    b0 = pk.coop_load(sb, kw * EPW, (wc + 0) // EPW, TK, 16, pk.MATRIX_B,
                                       dtype=AB)
                    b1 = pk.coop_load(sb, kw * EPW, (wc + 16) // EPW, TK, 16, pk.MATRIX_B,
                                       dtype=AB)
                    b2 = pk.coop_load(sb, kw * EPW, (wc + 32) // EPW, TK, 16, pk.MATRIX_B,
                                       dtype=AB)
                    b3 = pk.coop_load(sb, kw * EPW, (wc + 48) // EPW, TK, 16, pk.MATRIX_B,
                                       dtype=AB)
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
