"""conv2d on the matrix engine: an implicit GEMM on cooperative-matrix tiles (tensor cores).

The convolution of x (N, C, H, W) with w (O, C, KH, KW) is the matrix product of A (M x K) and
B (K x O), M = N·OH·OW output pixels, K = C·KH·KW in the order (c, kh, kw): row m of A holds the
input values that pixel m's filter window covers (zero where it lies in the padding), and B is
w seen as an (O, K) row-major matrix, transposed. Neither is ever made: each workgroup gathers
the 128 x 32 slice of A it needs from x straight into shared memory, and copies the matching
32 x 128 slice of B from w in 8-byte words, one slice ahead in registers so that the loads
overlap the multiplies (the pipeline of `gemm_coop`). The multiply is `gemm_coop`'s too: 4
subgroups, each 4 x 4 accumulator tiles of 16 x 16 in f32.

The gather. Invocation t of the workgroup owns output pixel t of the block (row t of the A
slice) for the whole kernel, so the pixel's position is worked out once; what changes from one
k to the next — the channel and the filter tap, hence an input offset and a row and column step
— is the same for every pixel, so it is computed once per slice, by 32 invocations, into a
small table in shared memory that the others read as broadcasts. Each k of a pixel then costs
one bounds test and one 2-byte load; consecutive pixels of an output row read consecutive input
elements at stride 1. Four k are packed into one 64-bit word per shared store. x may have any
strides.

Channels-last x (memory NHWC, as PyTorch's channels_last: C contiguous, C a multiple of 4)
takes a second variant of the kernel, with k in the order (kh, kw, c): there four consecutive
k are four neighbouring channels of one input pixel, one aligned 8-byte word, so each word of
A is one 8-byte load (a quarter of the loads and bounds tests). w is then read in the order
(O, KH, KW, C): as it is where its memory is channels-last too, else from a reordered copy.

Edges: M, O and K need not be multiples of the block. Pixels past M, filters past O and k past
K are staged as zeros, and the results go through shared memory (one 16 x 16 tile per
subgroup at a time) to plain stores of the elements that exist.

`coop_conv2d` applies to f16 and bf16 x and w of one dtype, groups 1, an out of that dtype or
f32, where the device multiplies 16 x 16 x 16 tiles of the dtype into f32, w's rows are
contiguous (over (C, KH, KW), or (KH, KW, C) for the channels-last variant), and every index
fits in 32 bits (a w whose rows are not whole 8-byte words, K = C·KH·KW not a multiple of 4 as
in ResNet's first layer with C = 3, is first copied into rows padded with zeros); elsewhere it
returns False and does nothing. The bias is the caller's to add.
"""

import functools
from dataclasses import dataclass

import pykern as pk
from pykern.lang.dtypes import DType
from pykern.tensor.gemm.gemm_coop import _offers, staging
from pykern.tensor.core.strided import view
from pykern.tensor.core.tensor import Tensor, empty
from pykern.tensor.create.creation import fill
from pykern.tensor.elementwise.functions import assign

BM, BN, BK = 128, 128, 32  # the block of the output one workgroup computes; the k slice
LANES = BM // 4  # invocations of a subgroup: the block's pixels over 4 subgroups, one each
FAR = -(1 << 28)  # an input row offset that fails every bounds test (pixels past M, k past K)
INDEX_LIMIT = 1 << 30  # element indices must stay clear of i32 overflow, sentinels included

Pair = tuple[int, int]


def coop_conv2d(x: Tensor, w: Tensor, out: Tensor, stride: Pair, padding: Pair,
                dilation: Pair) -> bool:
    """out = conv2d(x, w) (no bias) on the matrix engine, with f32 accumulation; True when
    done, False (nothing done) where it does not apply (see the module's docstring).

    x is (N, C, H, W), w (O, C, KH, KW), out (N, O, OH, OW); stride, padding and dilation are
    (height, width) pairs, as `pk.conv2d` takes them."""
    if x.dtype.name not in ("f16", "bf16") or not _runs_on(out.device, x.dtype):
        return False
    launch = plan_coop_conv2d(x, w, out, stride, padding, dilation)
    if launch is None:
        return False
    launch.run()
    return True


def _runs_on(device: object, dtype: DType) -> bool:
    """The device multiplies 16 x 16 x 16 tiles of `dtype` into f32, in subgroups of LANES (the
    kernel's layout: invocation t owns pixel t of the block, its 4 subgroups the rows of its
    LANES x 4 workgroup), and loads 16-bit words from storage buffers (the element gather)."""
    f = device.info.features  # type: ignore[attr-defined]
    return f.subgroup_size == LANES and f.int16 and f.storage16 and _offers(device, dtype)


@dataclass(frozen=True)
class ConvLaunch:
    """One launch of the tile kernel: the kernel, its grid and its arguments."""

    kernel: pk.Kernel
    grid: tuple[int, int]
    args: tuple

    def run(self, interpret: bool = False) -> None:
        """Launches it; `interpret=True` runs it in the interpreter instead (any device)."""
        kern = self.kernel
        if interpret:
            kern = pk.kernel(kern.__wrapped__, interpret=True, workgroup=kern.workgroup)
        kern[self.grid](*self.args)


def plan_coop_conv2d(x: Tensor, w: Tensor, out: Tensor, stride: Pair, padding: Pair,
                     dilation: Pair) -> ConvLaunch | None:
    """The launch that computes out = conv2d(x, w) on tiles, or None where the kernel does
    not apply to these operands (whatever the device). A channels-last x takes the kernel
    that copies 8-byte words of 4 channels (w is reordered to (O, KH, KW, C) for it unless
    its memory already is)."""
    dtype = x.dtype
    if dtype.name not in ("f16", "bf16") or w.dtype != dtype \
            or out.dtype.name not in (dtype.name, "f32"):
        return None
    if x.ndim != 4 or w.ndim != 4 or out.ndim != 4 or w.shape[1] != x.shape[1] \
            or out.shape[:2] != (x.shape[0], w.shape[0]) or 0 in out.shape or x.shape[1] == 0:
        return None
    channels_last = _channels_last(x)
    words = _filter_words(w.permute(0, 2, 3, 1) if channels_last else w)
    if words is None:  # a reordered or zero-padded copy of w (K = C·KH·KW = 27, say)
        words = _padded_filter_words(w.permute(0, 2, 3, 1) if channels_last else w)
    length = x.buffer.nbytes // dtype.itemsize
    if words is None or length >= INDEX_LIMIT or out.offset + _extent(out) >= INDEX_LIMIT \
            or x.shape[0] * out.shape[2] * out.shape[3] + BM >= INDEX_LIMIT:
        return None
    # x as the 16-bit words of its whole buffer (bf16 tensors already hold their elements
    # as such words), or channels-last as its 64-bit words: the kernel computes the addresses
    per_word = 4 if channels_last else 1
    flat = Tensor(x.buffer, (length // per_word,), pk.u64 if channels_last else pk.u16, (1,), 0)
    where = tuple(v // per_word for v in (x.offset, *x.element_strides))
    h, wd = x.shape[2:]
    kh, kw = w.shape[2:]
    m = x.shape[0] * out.shape[2] * out.shape[3]
    grid = (-(-w.shape[0] // BN) * LANES, -(-m // BM) * 4)
    words4 = view(words, (1, 1) + words.shape, (0, 0) + words.element_strides, words.offset)
    k = x.shape[1] * kh * kw
    args = (flat, words4, out, *where, h, wd, kh, kw, *stride, *padding, *dilation, k)
    return ConvLaunch(_kernel(dtype, out.dtype, channels_last), grid, args)


def _channels_last(x: Tensor) -> bool:
    """x's memory is NHWC (channels contiguous) with whole 8-byte words of 4 channels."""
    c = x.shape[1]
    strides = x.element_strides
    return c > 1 and c % 4 == 0 and strides[1] == 1 and x.offset % 4 == 0 \
        and all(s % 4 == 0 for s in (strides[0], strides[2], strides[3]))


def _filter_words(w: Tensor) -> Tensor | None:
    """w (O, A, B, C) as the (O, K / 4) matrix of 64-bit words of its rows (four elements
    each), K = A·B·C in that order, or None where a row is not contiguous, K is not a multiple
    of 4 or the rows do not start at multiples of 8 bytes."""
    o, a, b, c = w.shape
    k = a * b * c
    inner = (b * c, c, 1)
    if any(n > 1 and s != t for n, s, t in zip(w.shape[1:], w.element_strides[1:], inner)):
        return None
    row = w.element_strides[0] if o > 1 else k
    if k % 4 or row % 4 or w.offset % 4:
        return None
    words = Tensor(w.buffer, (o, k), pk.u64, (row, 1), 0)  # the same memory
    return view(words, (o, k // 4), (row // 4, 1), w.offset // 4)


def _padded_filter_words(w: Tensor) -> Tensor:
    """w (O, A, B, C) copied into an (O, K') matrix of whole 8-byte words, K = A·B·C elements
    of each row in that order and zeros up to K' (a multiple of 4), as its words."""
    o = w.shape[0]
    k = w.shape[1] * w.shape[2] * w.shape[3]
    kp = -(-k // 4) * 4
    padded = empty((o, kp), w.dtype)
    fill(padded, 0)
    assign(view(padded, w.shape, (kp, w.shape[2] * w.shape[3], w.shape[3], 1), 0), w)
    words = _filter_words(view(padded, (o, kp, 1, 1), (kp, 1, 1, 1), 0))
    assert words is not None  # a fresh row-major matrix of whole words
    return words


def _extent(t: Tensor) -> int:
    """One past the largest element index of `t` relative to its offset."""
    return 1 + sum((n - 1) * abs(s) for n, s in zip(t.shape, t.element_strides))


# ---------------------------------------------------------------- the kernel's pieces


@pk.func
def tap_table(taps, k0, K, KH, KW, dh, dw, sc, sy, sx, tid):
    """Column kk of `taps` (invocations kk < BK write it) for k = k0 + kk: the input offset
    of channel and tap from a pixel's window origin, and the row and column steps of the tap
    (a row step of FAR past K, which no pixel passes)."""
    if tid < taps.shape[1]:
        kt = k0 + tid
        off = 0
        dy = FAR
        dx = 0
        if kt < K:
            ci = kt // (KH * KW)
            tap = kt % (KH * KW)
            dy = (tap // KW) * dh
            dx = (tap % KW) * dw
            off = ci * sc + dy * sy + dx * sx
        taps[0, tid] = off
        taps[1, tid] = dy
        taps[2, tid] = dx


@pk.func
def tap_table_cl(taps, k0, K, KH, KW, dh, dw, sc, sy, sx, tid):
    """`tap_table` for a channels-last x (k in the order (kh, kw, c), x in 64-bit words of 4
    channels, strides in words): column q < BK / 4 for the word of k = k0 + 4q."""
    if tid < taps.shape[1] // 4:
        kt = k0 + 4 * tid
        off = 0
        dy = FAR
        dx = 0
        if kt < K:
            C = K // (KH * KW)
            tap = kt // C
            dy = (tap // KW) * dh
            dx = (tap % KW) * dw
            off = (kt % C) // 4 + dy * sy + dx * sx
        taps[0, tid] = off
        taps[1, tid] = dy
        taps[2, tid] = dx


@pk.func
def gather_cl(x, taps, kk, base, iy, ix, H, W):
    """`gather_word` for a channels-last x: the word of 4 channels at k0 + kk, one load."""
    word = pk.u64(0)
    q = kk // 4
    y = iy + taps[1, q]
    xx = ix + taps[2, q]
    if 0 <= y < H and 0 <= xx < W:
        word = x[base + taps[0, q]]
    return word


@pk.func
def gather_word(x, taps, kk, base, iy, ix, H, W):
    """The elements k0 + kk .. k0 + kk + 3 of one pixel's row of A packed into a 64-bit word
    (the first in the low bits): x at the pixel's window origin `base` (row iy, column ix)
    plus each tap's offset, zero where the tap falls outside the input."""
    word = pk.u64(0)
    for e in range(4):
        y = iy + taps[1, kk + e]
        xx = ix + taps[2, kk + e]
        if 0 <= y < H and 0 <= xx < W:
            word = word | (pk.u64(x[base + taps[0, kk + e]]) << pk.u64(16 * e))
    return word


@pk.func
def window_origin(gm, P, OW, M, x0, sn, sy, sx, sh, sw, ph, pw):
    """Output pixel gm's input window: its first element's index in x, its top row and left
    column (a row of FAR past the M pixels, so that every tap fails its bounds test)."""
    pn = gm // P
    p = gm % P
    iy = (p // OW) * sh - ph
    ix = (p % OW) * sw - pw
    base = x0 + pn * sn + iy * sy + ix * sx
    if gm >= M:
        iy = FAR
    return base, iy, ix


@pk.func
def write_tile(stage, out, srow, m0, n0, lane, M, P, OW):
    """Writes the 16 x 16 tile of results staged transposed in stage[srow:srow + 16, :]
    (element (i, j) at stage[srow + j, i]: pixel m0 + i, filter n0 + j) to out, where the
    pixel and the filter exist. Lanes 0-15 and 16-31 write consecutive pixels of a filter."""
    i = lane % 16
    gm = m0 + i
    if gm < M:
        pn = gm // P
        p = gm % P
        oy = p // OW
        ox = p % OW
        for r in range(8):
            j = lane // 16 + 2 * r
            if n0 + j < out.shape[1]:
                out[pn, n0 + j, oy, ox] = stage[srow + j, i]


@functools.lru_cache(maxsize=None)
def _kernel(ab: DType, out: DType, channels_last: bool) -> pk.Kernel:
    AB = ab  # noqa: N806
    OUT = out  # noqa: N806
    XW = pk.u64 if channels_last else pk.u16  # noqa: N806  (x's words)
    TABLE = tap_table_cl if channels_last else tap_table  # noqa: N806
    GATHER = gather_cl if channels_last else gather_word  # noqa: N806
    # the B slice: 128 filters x 8 words, zero past the filters or the row
    FETCH_B, STASH_B = staging(LANES, guarded=True)  # noqa: N806

    @pk.func
    def gather_row(x, taps, base, iy, ix, H, W):
        """This invocation's row of the A slice: 8 words of 4 k each."""
        words = (pk.u64(0),) * 8
        for j in pk.static_range(8):
            words[j] = GATHER(x, taps, 4 * j, base, iy, ix, H, W)
        return words

    # The kernel's shared arrays: sa, the A slice, row t = pixel t of the block, 8 words of 4
    # k (rows padded by 2 words so that the tile loads spread over the memory banks); sbt, the
    # B slice as rows of w (128 filters x 8 words), loaded transposed; taps, the next slice's
    # table (see tap_table); stage, one 16 x 16 result tile per subgroup on its way out.
    # Subgroup s computes the 64 x 64 part (s // 2, s % 2) of the block as 4 x 4 accumulator
    # tiles, acc[4 r + t] at pixels 16 r, filters 16 t of the part.
    @pk.kernel(workgroup=(LANES, 4, 1))
    def conv2d_coop(x: XW[:], w: pk.u64[:, :, :, :], out: OUT[:, :, :, :], x0: int, sn: int,
                    sc: int, sy: int, sx: int, H: int, W: int, KH: int, KW: int,
                    sh: int, sw: int, ph: int, pw: int, dh: int, dw: int, kreal: int):
        sa = pk.shared(pk.u64, (128, 10))
        sbt = pk.shared(pk.u64, (128, 10))
        taps = pk.shared(pk.i32, (3, BK))
        stage = pk.shared(pk.f32, (64, 16))
        s = pk.local_id(1)
        lane = pk.local_id(0)
        tid = s * LANES + lane
        r0 = pk.group_id(1) * 128
        c0 = pk.group_id(0) * 128
        OH = out.shape[2]
        OW = out.shape[3]
        P = OH * OW
        M = out.shape[0] * P
        K = w.shape[3] * 4
        # this invocation's pixel: its window's origin in x (row iy, column ix, index base)
        base, iy, ix = window_origin(r0 + tid, P, OW, M, x0, sn, sy, sx, sh, sw, ph, pw)
        wr = (s // 2) * 64
        wc = (s % 2) * 64
        acc = (pk.coop_fill(pk.f32, 16, 16, pk.ACCUMULATOR, 0.0),) * 16
        TABLE(taps, 0, kreal, KH, KW, dh, dw, sc, sy, sx, tid)
        pk.barrier()
        # the first slice in registers; each iteration stores the slice it holds and fetches
        # the next one while the tiles of this one are multiplied
        xa = gather_row(x, taps, base, iy, ix, H, W)
        wb = FETCH_B(w, 0, 0, c0, 0, tid)
        pk.barrier()  # every invocation has read the table before the loop rewrites it
        for k in range(BK, K + BK, BK):
            for j in pk.static_range(8):
                sa[tid, j] = xa[j]
            STASH_B(sbt, wb, tid)
            # the table was last read before the previous iteration's second barrier
            if k < K:
                TABLE(taps, k, kreal, KH, KW, dh, dw, sc, sy, sx, tid)
            pk.barrier()
            if k < K:
                xa = gather_row(x, taps, base, iy, ix, H, W)
                wb = FETCH_B(w, 0, 0, c0, k // 4, tid)
            for kq in range(0, 8, 4):  # two k steps of 16 (4 words each)
                ta = (pk.coop_load(sa, wr, kq, 16, 16, pk.MATRIX_A, dtype=AB),
                      pk.coop_load(sa, wr + 16, kq, 16, 16, pk.MATRIX_A, dtype=AB),
                      pk.coop_load(sa, wr + 32, kq, 16, 16, pk.MATRIX_A, dtype=AB),
                      pk.coop_load(sa, wr + 48, kq, 16, 16, pk.MATRIX_A, dtype=AB))
                for t in pk.static_range(4):
                    tb = pk.coop_load(sbt, wc + 16 * t, kq, 16, 16, pk.MATRIX_B, dtype=AB,
                                      transpose=True)
                    for r in pk.static_range(4):
                        acc[4 * r + t] = pk.coop_mma(ta[r], tb, acc[4 * r + t])
            pk.barrier()
        # each result tile through this subgroup's part of `stage` to the elements that exist
        sr = s * 16
        for r in pk.static_range(4):
            for t in pk.static_range(4):
                pk.coop_store(stage, sr, 0, acc[4 * r + t], transpose=True)
                pk.barrier()
                write_tile(stage, out, sr, r0 + wr + 16 * r, c0 + wc + 16 * t, lane, M, P, OW)
                pk.barrier()

    return conv2d_coop
