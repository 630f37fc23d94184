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
aligned; elsewhere the portable kernels of `linalg` run. The workgroup is 4 subgroups of the
device's subgroup size, whatever it is (8 to 256 invocations: NVIDIA's 32, AMD's 32 or 64,
Intel's 8, 16 or 32), each invocation copying its share of a slice.
"""

import functools

import pykern as pk
from pykern.lang.dtypes import DType
from pykern.lang.func import Func
from pykern.runtime.feature import Feature
from pykern.tensor.core.strided import view
from pykern.tensor.elementwise.functions import assign
from pykern.tensor.core.tensor import Tensor, empty

BM, BN = 128, 128  # the block of C one workgroup computes
# operand dtype -> the accumulator the tiles multiply into (and the results it may be stored as)
ACCUMULATORS = {"f16": "f32", "bf16": "f32", "i8": "i32", "u8": "u32"}
TILE_DTYPES = ("f16", "bf16")  # the float operands (16-bit: four to a 64-bit word)


# The tile kernels of the op library take a workgroup of 4 subgroups, of the device's subgroup
# size (`lanes`: 1024 words of a slice split evenly over 4 * lanes invocations), and shared
# memory for their stages: the largest of them (attention_coop at head dimension 128) takes 43
# KiB.
SHARED_BYTES = 48 * 1024
SLICE_WORDS = 1024  # 64-bit words of a staged 128 x 8-word slice


def lanes_fit(lanes: int) -> bool:
    """Whether 4 subgroups of `lanes` split a slice evenly (8 to 256 invocations a
    subgroup)."""
    return 8 <= lanes and SLICE_WORDS % (4 * lanes) == 0


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


def applies(info: object, a: Tensor, b: Tensor, c: Tensor) -> bool:
    """Whether the tile kernel takes c = a @ b for views (..., M, K) @ (..., K, N) ->
    (..., M, N) on the device `info` describes: its dtypes, block-divisible shapes, 16-byte
    aligned rows, and the device's tiles (matmul's first implementation)."""
    dtype = a.dtype
    acc = ACCUMULATORS.get(dtype.name)
    if acc is None or b.dtype != dtype or c.dtype.name not in (dtype.name, acc) \
            or (dtype.is_int and c.dtype.name != acc):
        return False
    m, k = a.shape[-2:]
    n = b.shape[-1]
    slice_k = 64 // dtype.itemsize  # 8 words of each row per k slice
    if m % BM or n % BN or k % slice_k or not offers(info, dtype):
        return False
    ca = c.element_strides
    if c.dtype.name != "bf16" and (ca[-1] != 1 or (c.offset * c.dtype.itemsize) % 16
                                   or (ca[-2] * c.dtype.itemsize) % 16):
        return False
    return _words(a, last_contiguous=True) is not None and (
        _words(b, last_contiguous=True) is not None
        or _words(b, last_contiguous=False) is not None)


def run(a: Tensor, b: Tensor, c: Tensor, lanes: int) -> None:
    """c = a @ b with the tile kernel (where `applies`), in subgroups of `lanes`."""
    b1, b2, m, _ = a.shape
    n = b.shape[3]
    aw = _words(a, last_contiguous=True)
    bw = _words(b, last_contiguous=True)
    transposed = bw is None
    if transposed:
        bw = _words(b, last_contiguous=False)
    # no device has bf16 accumulator tiles: a bf16 result is rounded from an f32 one
    direct = c.dtype.name != "bf16"
    result = c if direct else empty(c.shape, pk.f32)
    kern = _kernel(a.dtype, result.dtype, transposed, lanes)
    kern[(n // BN) * lanes, (m // BM) * 4, b1 * b2](aw, bw, result, b2)
    if not direct:
        assign(c, result)


def coop_matmul(a: Tensor, b: Tensor, c: Tensor) -> bool:
    """c = a @ b on the matrix engine where it `applies` on c's device; False (nothing done)
    elsewhere."""
    info = c.device.info  # type: ignore[attr-defined]
    if not applies(info, a, b, c):
        return False
    run(a, b, c, info.features.subgroup_size)
    return True


@functools.lru_cache(maxsize=None)
def staging(lanes: int, guarded: bool = False) -> tuple[Func, Func]:
    """The @pk.funcs that move a 128 x 8-word slice of an operand (1024 64-bit words) between
    memory and shared memory for a workgroup of 4 subgroups of `lanes` invocations: each
    invocation carries every NT-th word, NT = 4 * lanes. `fetch(t, z1, z2, r0, w0, tid)` reads
    rows r0.. and words w0.. of the 4-d word array t into a tuple (`guarded`: zero for the
    rows and words past t's end); `stash(s, words, tid)` stores that tuple into the
    (128, 8 + pad) shared array s. Shared by matmul's operands and conv2d's filters."""
    NT = 4 * lanes  # noqa: N806
    LOADS = SLICE_WORDS // NT  # noqa: N806
    GUARDED = guarded  # noqa: N806

    @pk.func
    def fetch(t, z1, z2, r0, w0, tid):
        words = (pk.u64(0),) * LOADS
        for j in pk.static_range(LOADS):
            e = tid + j * NT
            row = r0 + e // 8
            word = w0 + e % 8
            if GUARDED:
                if row < t.shape[2] and word < t.shape[3]:
                    words[j] = t[z1, z2, row, word]
            else:
                words[j] = t[z1, z2, row, word]
        return words

    @pk.func
    def stash(s, words, tid):
        for j in pk.static_range(LOADS):
            e = tid + j * NT
            s[e // 8, e % 8] = words[j]

    return fetch, stash


@functools.lru_cache(maxsize=None)
def _kernel(ab: DType, out: DType, b_transposed: bool, lanes: int = 32) -> pk.Kernel:
    AB = ab  # noqa: N806
    OUT = out  # noqa: N806
    ACC = pk.f32 if ab.is_float else (pk.i32 if ab.is_signed else pk.u32)  # noqa: N806
    TB = b_transposed  # noqa: N806
    EPW = 8 // ab.itemsize  # noqa: N806  (elements per 64-bit word)
    TK = 4 * EPW  # noqa: N806  (the k of one tile multiply: 16 for 16-bit, 32 for 8-bit)
    BK = 2 * TK  # noqa: N806  (the k slice staged at a time: 8 words per row)
    BW = 128 // EPW  # noqa: N806  (words per row of B's 128 columns)
    SG = lanes  # noqa: N806  (invocations per subgroup: a workgroup is 4 subgroups)
    NT = 4 * SG  # noqa: N806
    LOADS = 1024 // NT  # noqa: N806  (words of a slice each invocation copies)
    FETCH, STASH = staging(lanes)  # noqa: N806

    @pk.func
    def fetch_cols(b, z1, z2, k0, w0, tid):
        """B's BK x BW-word slice at row k0, word w0 (B as it is: k-major)."""
        words = (pk.u64(0),) * LOADS
        for j in pk.static_range(LOADS):
            e = tid + j * NT
            words[j] = b[z1, z2, k0 + e // BW, w0 + e % BW]
        return words

    @pk.func
    def stash_cols(sb, words, tid):
        for j in pk.static_range(LOADS):
            e = tid + j * NT
            sb[e // BW, e % BW] = words[j]

    @pk.func
    def b_tile(sb, sbt, wc, kw):
        """B's k-step tile for the columns wc..wc + 15 (loaded transposed from B's rows
        where B is a transposed view)."""
        if TB:
            return pk.coop_load(sbt, wc, kw, TK, 16, pk.MATRIX_B, dtype=AB, transpose=True)
        return pk.coop_load(sb, kw * EPW, wc // EPW, TK, 16, pk.MATRIX_B, dtype=AB)

    @pk.kernel(workgroup=(SG, 4, 1))
    def matmul_coop(a: pk.u64[:, :, :, :], b: pk.u64[:, :, :, :], c: out[:, :, :, :],
                    nb2: pk.i32):
        # a, b: the operands' elements as 64-bit words (EPW each), so that the copies into
        # shared memory move 8 bytes per load. Each k slice of BK is staged there: A's 128 x BK
        # block, and B's BK x 128 block (with TB, the 128 x BK block of B transposed); rows
        # padded by 2 words, so that the tile loads of a k step spread over the memory banks.
        # Subgroup s computes the 64 x 64 part (s // 2, s % 2) of the 128 x 128 block of C as
        # 4 x 4 accumulator tiles, acc[4 r + t] at rows 16 r, columns 16 t of the part.
        sa = pk.shared(pk.u64, (128, 10))
        sb = pk.shared(pk.u64, (BK, BW + 2))
        sbt = pk.shared(pk.u64, (128, 10))
        s = pk.local_id(1)
        tid = s * SG + pk.local_id(0)
        r0 = pk.group_id(1) * 128
        c0 = pk.group_id(0) * 128
        z1 = pk.group_id(2) // nb2
        z2 = pk.group_id(2) % nb2
        wr = (s // 2) * 64
        wc = (s % 2) * 64
        K = a.shape[3] * EPW
        acc = (pk.coop_fill(ACC, 16, 16, pk.ACCUMULATOR, 0),) * 16
        # the first k slice, fetched into registers; each iteration stores the slice it holds
        # and fetches the next one while the tiles of this one are multiplied
        xa = FETCH(a, z1, z2, r0, 0, tid)
        if TB:
            xb = FETCH(b, z1, z2, c0, 0, tid)
        else:
            xb = fetch_cols(b, z1, z2, 0, c0 // EPW, tid)
        for k in range(BK, K + BK, BK):
            STASH(sa, xa, tid)
            if TB:
                STASH(sbt, xb, tid)
            else:
                stash_cols(sb, xb, tid)
            pk.barrier()
            if k < K:
                xa = FETCH(a, z1, z2, r0, k // EPW, tid)
                if TB:
                    xb = FETCH(b, z1, z2, c0, k // EPW, tid)
                else:
                    xb = fetch_cols(b, z1, z2, k, c0 // EPW, tid)
            for kw in range(0, 8, 4):  # two k steps of TK elements (4 words each)
                ta = (pk.coop_load(sa, wr, kw, 16, TK, pk.MATRIX_A, dtype=AB),
                      pk.coop_load(sa, wr + 16, kw, 16, TK, pk.MATRIX_A, dtype=AB),
                      pk.coop_load(sa, wr + 32, kw, 16, TK, pk.MATRIX_A, dtype=AB),
                      pk.coop_load(sa, wr + 48, kw, 16, TK, pk.MATRIX_A, dtype=AB))
                for t in pk.static_range(4):
                    tb = b_tile(sb, sbt, wc + 16 * t, kw)
                    for r in pk.static_range(4):
                        acc[4 * r + t] = pk.coop_mma(ta[r], tb, acc[4 * r + t])
            pk.barrier()
        for r in pk.static_range(4):
            for t in pk.static_range(4):
                pk.coop_store(c, (z1, z2, r0 + wr + 16 * r), c0 + wc + 16 * t,
                              pk.coop_convert(acc[4 * r + t], OUT))

    return matmul_coop
