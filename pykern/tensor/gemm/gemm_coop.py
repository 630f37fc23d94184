"""Matrix products on the matrix engine: cooperative-matrix tiles (tensor cores).

A workgroup of subgroups computes a block of C (128 x 128 by 4 subgroups of 4 x 4 accumulator
tiles of 16 x 16 unless the device's tuning table names another `CoopTiling`), in f32 whatever
the inputs (f16 and bf16 products accumulate in f32, then round once to the output dtype).
Each k slice is staged in shared memory by plain 8-byte copies (the operands are read as 64-bit
words), fetched into registers one slice ahead so that the copies overlap the multiplies; the
tiles are then loaded from shared memory as packed 16-bit elements (`pk.coop_load(...,
dtype=)`). A B that is the transposed view of a row-major matrix is staged as such and loaded
with `transpose=True`. The kernel itself is in gemm_coop_kernel.

Any M, N and K: loads past an operand's end read zeros and the blocks at C's edges store only
the elements that exist. An operand whose rows are not whole 16-byte aligned words (K, or N for
a row-major B, not a multiple of 8 16-bit elements, or an odd offset) is first copied into a
zero-padded one; that copy reads and writes the operand once, small beside the product.

`coop_matmul` is used for f16 and bf16 (into f32, stored as f32 or rounded to the operands'
dtype) and i8 and u8 (into i32 and u32: `pk.matmul(a, b, dtype=pk.i32)`) where the device
multiplies 16 x 16 tiles of them; elsewhere the portable kernels of `matmul` run. A workgroup
is subgroups of the device's subgroup size, whatever it is (8 to 256 invocations: NVIDIA's 32,
AMD's 32 or 64, Intel's 8, 16 or 32), each invocation copying its share of a slice.
"""

import functools

import pykern as pk
from pykern.lang.dtypes import DType
from pykern.ops.choice import compute_units, config
from pykern.runtime.feature import Feature
from pykern.tensor.core.strided import cdiv, view
from pykern.tensor.core.tensor import Tensor, empty
from pykern.tensor.create.creation import fill
from pykern.tensor.elementwise.functions import assign
from pykern.tensor.gemm import coop_tiling
from pykern.tensor.gemm.coop_tiling import DEFAULT, CoopTiling
from pykern.tensor.gemm.gemm_coop_kernel import build
from pykern.tensor.gemm.gemm_coop_staging import SHARED_BYTES, SLICE_WORDS, lanes_fit, staging

__all__ = ["ACCUMULATORS", "SHARED_BYTES", "SLICE_WORDS", "TILE_DTYPES", "applies",
           "coop_matmul", "lanes_fit", "offers", "run", "staging", "tiling_for"]

# operand dtype -> the accumulator the tiles multiply into (and the results it may be stored as)
ACCUMULATORS = {"f16": "f32", "bf16": "f32", "i8": "i32", "u8": "u32"}
TILE_DTYPES = ("f16", "bf16")  # the float operands (16-bit: four to a 64-bit word)
# tests and `python -m benchmarks tune` set this to run one tiling on every shape
FORCE_TILING: CoopTiling | None = None
# tests set this to run the tile kernel in the interpreter, on any device (the device's tiles
# then not consulted), so that the path through `pk.matmul` runs in CI
INTERPRET = False


def _offers(device: object, dtype: DType) -> bool:
    """The device multiplies 16 x 16 tiles of `dtype` (k = 16, or 32 for 8-bit) into its
    accumulator type, with the shared memory the kernels take and a subgroup size they split
    their slices over."""
    return offers(device.info, dtype)  # type: ignore[attr-defined]


def offers(info: object, dtype: DType) -> bool:
    """`_offers` from the device's description."""
    features, limits = info.features, info.limits  # type: ignore[attr-defined]
    if not features.has(Feature.COOPERATIVE_MATRIX) or not features.int64 \
            or not lanes_fit(features.subgroup_size) \
            or limits.max_shared_memory < SHARED_BYTES:
        return False
    want = (16, 16, 32 // dtype.itemsize, dtype.name, ACCUMULATORS[dtype.name])
    return any((s[0], s[1], s[2], getattr(s[3], "name", s[3]), getattr(s[4], "name", s[4]))
               == want for s in info.coop_shapes)  # type: ignore[attr-defined]


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


def _padded_words(t: Tensor) -> Tensor:
    """`t` copied into a zero-filled array whose rows are whole 16-byte units, as words."""
    per_row = 16 // t.dtype.itemsize
    cols = cdiv(t.shape[-1], per_row) * per_row
    padded = empty(t.shape[:-1] + (cols,), t.dtype)
    fill(padded, 0)
    assign(view(padded, t.shape, padded.element_strides, 0), t)
    words = _words(padded, last_contiguous=True)
    assert words is not None  # a fresh row-major array of whole units
    return words


def applies(info: object, a: Tensor, b: Tensor, c: Tensor) -> bool:
    """Whether the tile kernel takes c = a @ b for views (..., M, K) @ (..., K, N) ->
    (..., M, N) on the device `info` describes: the operands' dtype has tiles on the device
    and c is of that dtype or its accumulator's (matmul's first implementation). Any shapes
    and strides (operands whose rows are not aligned words are copied first)."""
    dtype = a.dtype
    acc = ACCUMULATORS.get(dtype.name)
    if acc is None or b.dtype != dtype or c.dtype.name not in (dtype.name, acc) \
            or (dtype.is_int and c.dtype.name != acc):
        return False
    return INTERPRET or offers(info, dtype)


def tiling_for(info: object, m: int, n: int, batch: int, dtype: DType) -> CoopTiling:
    """The tiling for an (M x N) x batch product: the device table's (`coop_tiling`, or
    `coop_tiling_small` where the large one's blocks would not give every compute unit
    `coop_small_below` of them), else the default; one that does not fit the device (its
    subgroup size, shared memory) falls back to the default."""
    if FORCE_TILING is not None:
        return FORCE_TILING
    cfg = config("matmul", info)
    tiling = coop_tiling.by_name(cfg["coop_tiling"])
    blocks = cdiv(m, tiling.bm) * cdiv(n, tiling.bn) * batch
    if blocks < cfg["coop_small_below"] * compute_units(info):
        tiling = coop_tiling.by_name(cfg["coop_tiling_small"])
    lanes = info.features.subgroup_size  # type: ignore[attr-defined]
    shared = info.limits.max_shared_memory  # type: ignore[attr-defined]
    return tiling if tiling.fits(lanes, shared, 8 // dtype.itemsize) else DEFAULT


def run(a: Tensor, b: Tensor, c: Tensor, lanes: int, tiling: CoopTiling = DEFAULT) -> None:
    """c = a @ b with the tile kernel (where `applies`), in subgroups of `lanes`, for 4-d views
    (b1, b2, M, K) @ (b1, b2, K, N) -> (b1, b2, M, N)."""
    b1, b2, m, _ = a.shape
    n = b.shape[3]
    aw = _words(a, last_contiguous=True)
    if aw is None:
        aw = _padded_words(a)
    bw = _words(b, last_contiguous=True)
    transposed = bw is None
    if transposed:
        bw = _words(b, last_contiguous=False)
    if bw is None:  # neither layout has aligned rows: a row-major copy, N padded
        bw, transposed = _padded_words(b), False
    # no device has bf16 accumulator tiles: a bf16 result is rounded from an f32 one
    direct = c.dtype.name != "bf16"
    result = c if direct else empty(c.shape, pk.f32)
    k_words = aw.shape[3]
    b_k = bw.shape[3] * (8 // a.dtype.itemsize) if transposed else bw.shape[2]
    # guards where a block or slice runs past an operand (B's K short of A's padded K too)
    ragged = bool(m % tiling.bm or n % tiling.bn or k_words % tiling.k_words
                  or b_k < k_words * (8 // a.dtype.itemsize))
    kern = build(a.dtype, result.dtype, transposed, lanes, tiling, ragged, _aligned(result))
    if INTERPRET:
        kern = interpreted(kern)
    kern[cdiv(n, tiling.bn) * lanes, cdiv(m, tiling.bm) * tiling.subgroups, b1 * b2](
        aw, bw, result, b2)
    if not direct:
        assign(c, result)


@functools.lru_cache(maxsize=None)
def interpreted(kern: pk.Kernel) -> pk.Kernel:
    """The interpreter's twin of a kernel of `build` (the same body and workgroup)."""
    return pk.kernel(kern.__wrapped__, interpret=True, workgroup=kern.workgroup)


def _aligned(c: Tensor) -> bool:
    """Whether tiles may be stored into c directly: rows contiguous and 16-byte aligned."""
    item = c.dtype.itemsize
    strides = c.element_strides
    return strides[-1] == 1 and (c.offset * item) % 16 == 0 and (strides[-2] * item) % 16 == 0 \
        and all((s * item) % 16 == 0 for s in strides[:-2])


def coop_matmul(a: Tensor, b: Tensor, c: Tensor) -> bool:
    """c = a @ b on the matrix engine where it `applies` on c's device; False (nothing done)
    elsewhere."""
    info = c.device.info  # type: ignore[attr-defined]
    if not applies(info, a, b, c):
        return False
    run(a, b, c, info.features.subgroup_size,
        tiling_for(info, a.shape[-2], b.shape[-1], 1, a.dtype))
    return True
