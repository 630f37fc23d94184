"""Scaled dot-product attention on the matrix engine: one flash-style pass over the keys with
cooperative-matrix tiles (tensor cores).

A workgroup of 4 subgroups takes 64 queries, 16 per subgroup. Q's tiles are loaded once and
stay in registers as MATRIX_A tiles; for each block of 64 keys:

1. K's 64 rows are staged in shared memory as 64-bit words (4 elements each), S = Q Kᵀ is
   multiplied on 16 x 16 f32 accumulator tiles (Kᵀ's tiles loaded with `transpose=True`) and
   stored to shared memory;
2. the 32 lanes of each subgroup do the online softmax of its 16 rows, two lanes per row: the
   block's row maximum, the sum of the probabilities and P = exp(S - m), written to shared
   memory in the input dtype; meanwhile V's 64 rows replace K's in the stage;
3. O += P @ V on accumulator tiles held in registers.

The words of the next K block are fetched into registers during 3 and those of V during 2, so
that the loads from memory overlap the multiplies and the softmax.

All softmax statistics are f32; the output is rounded once, to the input dtype.

Tiles have no per-element access, so the rows of O cannot be rescaled in registers when a row's
maximum grows. The reference maximum `m` of a row therefore moves only when the block's
maximum exceeds it by more than TAU (in log2 units; P stays below 2^TAU, far inside f16's
range): then every subgroup takes its O tiles through shared memory, scales each row there by
exp(m_old - m_new) and loads them back. With scores that do not keep growing, that happens in
a few blocks of a row's lifetime, not in every one. At the end O's rows are divided by their
sums and written out.

Shared memory: the K/V stage (64 rows of D/4 words, padded by 2 words against bank
conflicts), S (64 x 68 f32) and P (64 x 72 f16): 43 KiB for D = 128, 35 KiB for D = 64, under
the 48 KiB that devices with tensor cores offer. The S array doubles as the scratch of O's
rescaling and of the output.

`coop_attention` is used for f16 (and bf16) q, k, v of head dimension 64 or 128 and lengths that
are multiples of 64, with 16-byte aligned contiguous rows, on a device that multiplies 16 x 16
x 16 tiles of that dtype into f32; elsewhere the portable kernels of `nn.attention` run.
"""

import functools
import math

import numpy as np

import pykern as pk
from pykern.lang.dtypes import DType
from pykern.lang.func import Func
from pykern.tensor.gemm.gemm_coop import TILE_DTYPES, _offers, _words
from pykern.tensor.core.strided import batch_pieces, broadcast_strides, view
from pykern.tensor.core.tensor import Tensor, empty

BQ, BK = 64, 64  # queries per workgroup (16 per subgroup), keys per step
LANES = 2 * BQ // 4  # invocations of a subgroup: two lanes per row of its 16 rows
HEAD_DIMS = (64, 128)
TAU = 8.0  # log2 of how far P may exceed 1 before the rows of O are rescaled
LOG2E = 1.0 / math.log(2.0)
LN2 = math.log(2.0)
# tests set this to run the tile kernel in the interpreter, on any device (whose tile shapes
# are then not consulted), so that the path through `pk.attention` runs in CI
INTERPRET = False


def coop_attention(q: Tensor, k: Tensor, v: Tensor, out: Tensor, causal: bool,
                   scale: float, lse: Tensor | None = None) -> bool:
    """out = softmax(q @ kᵀ · scale, causal mask) @ v on the matrix engine, q (..., Lq, D),
    k (..., Lk, D), v (..., Lk, D) with broadcasting batch dimensions; False (nothing done)
    where it does not apply (see `applies`) or the device has no such tiles. With `lse`
    (batch + (Lq,), f32), each row's log-sum-exp of its scaled scores is written there too."""
    if applies(q, k, v, out) is not None or not (INTERPRET or (
            _offers(out.device, q.dtype)
            and out.device.info.features.subgroup_size == LANES)):  # type: ignore[attr-defined]
        return False
    batch = out.shape[:-2]
    save = lse is not None
    if lse is None:  # the kernel's lse operand, never written
        lse = empty((1,) * (len(batch) + 1), pk.f32)
    strides = [broadcast_strides(batch, t.shape[:-2], t.element_strides[:-2])
               for t in (q, k, v)] + [out.element_strides[:-2],
                                      broadcast_strides(batch, lse.shape[:-1],
                                                        lse.element_strides[:-1])]
    kern = _kernel(q.dtype, q.shape[-1], causal, save)
    if INTERPRET:
        kern = interpreted(kern)
    for deltas, bshape, bstrides in batch_pieces(batch or (1,), strides if batch else
                                                 [(0,)] * 5, 2):
        views = [view(t, bshape + t.shape[-2:], st + t.element_strides[-2:], t.offset + delta)
                 for t, st, delta in zip((q, k, v, out), bstrides, deltas)]
        words = [_words(t, last_contiguous=True) for t in views[:3]]
        assert all(w is not None for w in words), "applies() let an unaligned view through"
        lv = view(lse, bshape + lse.shape[-1:], bstrides[4] + lse.element_strides[-1:],
                  lse.offset + deltas[4])
        launch(kern, *words, views[3], scale, lv)
    return True


def applies(q: Tensor, k: Tensor, v: Tensor, out: Tensor) -> str | None:
    """Why the tile kernel does not take these operands (None: it does, given the device)."""
    dtype = q.dtype
    if dtype.name not in TILE_DTYPES or k.dtype != dtype or v.dtype != dtype \
            or out.dtype != dtype:
        return f"dtypes {q.dtype.name}, {k.dtype.name}, {v.dtype.name}: tiles take f16 or bf16"
    lq, d = q.shape[-2:]
    lk, dv = v.shape[-2:]
    if d not in HEAD_DIMS or dv != d:
        return f"head dimensions {d} and {dv}: tiles take {HEAD_DIMS} (equal)"
    if lq % BQ or lk % BK:
        return f"lengths {lq} and {lk}: tiles take multiples of {BQ}"
    for t in (q, k, v):
        st = t.element_strides
        if st[-1] != 1 or st[-2] % 8 or t.offset % 8 or any(s % 8 for s in st[:-2]):
            return "rows that are not contiguous and 16-byte aligned"
    if out.element_strides[-1] != 1:
        return "an output whose rows are not contiguous"
    return None


def launch(kern: pk.Kernel, q: object, k: object, v: object, out: object,
           scale: float, lse: object = None) -> None:
    """Runs `kern` (from `_kernel`, or its interpreted twin) on 4-d operands: q, k, v as 64-bit
    words (B1, B2, L, D/4), out (B1, B2, Lq, D) of the input dtype, and the f32 log-sum-exp
    (B1, B2, Lq) for a kernel that saves it (else None); numpy arrays or tensors."""
    b1, b2, lq = out.shape[:3]  # type: ignore[attr-defined]
    if lse is None:
        lse = np.empty((1, 1, 1), np.float32) if isinstance(out, np.ndarray) \
            else empty((1, 1, 1), pk.f32)
    kern[(lq // BQ) * LANES, 4, b1 * b2](q, k, v, out, lse, scale * LOG2E)


@functools.lru_cache(maxsize=None)
def interpreted(kern: pk.Kernel) -> pk.Kernel:
    """The interpreter's twin of a kernel of `_kernel` (the same body and workgroup)."""
    return pk.kernel(kern.__wrapped__, interpret=True, workgroup=kern.workgroup)


@pk.func
def scale_rows(ss, row, half, alpha):
    """ss[row, :BK] *= alpha, this lane's half of the columns (the even or the odd ones)."""
    for c in range(BK // 2):
        ss[row, 2 * c + half] = ss[row, 2 * c + half] * alpha


@functools.lru_cache(maxsize=None)
def _row_steps(causal: bool, dtype: DType) -> tuple[Func, Func]:
    """The online softmax's two walks over a lane's half of its row of S (keys kb.., scores
    scaled to log2 units, keys past query qi masked where `causal`): the block's maximum, and
    P = 2^(x - m) written to sp in `dtype`, added to the running sum `total`."""
    CAUSAL, AB = causal, dtype  # noqa: N806

    @pk.func
    def block_max(ss, row, half, kb, qi, scale_log2):
        bm: pk.f32 = -math.inf
        for c in range(BK // 2):
            j = 2 * c + half
            x = ss[row, j] * scale_log2
            if CAUSAL and kb + j > qi:
                x = -math.inf
            bm = max(bm, x)
        return bm

    @pk.func
    def probabilities(ss, sp, row, half, kb, qi, scale_log2, m, total):
        for c in range(BK // 2):
            j = 2 * c + half
            x = ss[row, j] * scale_log2
            if CAUSAL and kb + j > qi:
                x = -math.inf
            p = AB(pk.exp2(x - m))
            sp[row, j] = p
            total += pk.f32(p)  # the sum of what is multiplied, rounded as it is
        return total

    return block_max, probabilities


@functools.lru_cache(maxsize=None)
def _stage_steps(w: int) -> tuple[Func, Func]:
    """Moving a block of BK rows of W words between memory and the stage: each invocation
    carries STAGE words, NT apart, through its registers (`fetched`)."""
    W, NT = w, 4 * LANES  # noqa: N806
    STAGE = BK * W // NT  # noqa: N806

    @pk.func
    def fetch(t, fetched, z1, z2, r0, tid):
        for e in range(STAGE):
            i = tid + e * NT
            fetched[e] = t[z1, z2, r0 + i // W, i % W]

    @pk.func
    def stash(skv, fetched, tid):
        for e in range(STAGE):
            i = tid + e * NT
            skv[i // W, i % W] = fetched[e]

    return fetch, stash


@functools.lru_cache(maxsize=None)
def _kernel(dtype: DType, d: int, causal: bool, save_lse: bool = False) -> pk.Kernel:
    AB, D, CAUSAL, SAVE_LSE = dtype, d, causal, save_lse  # noqa: N806
    W = d // 4  # noqa: N806  (64-bit words per row)
    STAGE = BK * W // (4 * LANES)  # noqa: N806  (words each invocation copies per block)
    NQ = D // 16  # noqa: N806  (tiles across a row of Q and of O: 4 or 8)
    BLOCK_MAX, PROBABILITIES = _row_steps(causal, dtype)  # noqa: N806
    FETCH, STASH = _stage_steps(W)  # noqa: N806

    @pk.kernel(workgroup=(LANES, 4, 1))
    def attention_coop(q: pk.u64[:, :, :, :], k: pk.u64[:, :, :, :], v: pk.u64[:, :, :, :],
                       out: AB[:, :, :, :], lse: pk.f32[:, :, :], scale_log2: pk.f32):
        skv = pk.shared(pk.u64, (BK, W + 2))  # Q's block once, then each K and V block
        ss = pk.shared(pk.f32, (BQ, BK + 4))  # S; the scratch of O's rescaling and output
        sp = pk.shared(AB, (BQ, BK + 8))  # P
        sflag = pk.shared(pk.i32, 4)  # per subgroup: a row of it needs O rescaled
        # the words this invocation copies into the stage, fetched into registers ahead of
        # the store, so that the loads from memory overlap other work: the first K block here,
        # V's during the softmax, the next K block's during O += P @ V
        fetched = pk.local(pk.u64, STAGE)
        lane = pk.local_id(0)
        sg = pk.local_id(1)
        tid = sg * LANES + lane
        z1, z2 = pk.unravel(pk.group_id(2), out.shape[:2])
        q0 = (pk.num_groups(0) - 1 - pk.group_id(0)) * BQ  # causal: the longest rows first
        r0 = sg * 16  # the subgroup's rows in the block
        row = r0 + lane // 2  # two lanes per row: the even and the odd columns
        half = lane % 2
        qi = q0 + row
        FETCH(q, fetched, z1, z2, q0, tid)
        STASH(skv, fetched, tid)
        pk.barrier()
        # Q's tiles across the row (qa[t]: columns 16 t) and O's (o[t]), held in registers
        qa = (pk.coop_load(skv, r0, 0, 16, 16, pk.MATRIX_A, dtype=AB),) * NQ
        for t in pk.static_range(1, NQ):
            qa[t] = pk.coop_load(skv, r0, 4 * t, 16, 16, pk.MATRIX_A, dtype=AB)
        zero = pk.coop_fill(pk.f32, 16, 16, pk.ACCUMULATOR, 0.0)
        o = (zero,) * NQ
        m: pk.f32 = -math.inf  # the row's reference maximum (log2 units), P = 2^(x - m)
        lsum: pk.f32 = 0.0  # this lane's half of the row's sum of P
        kend = k.shape[2]
        if CAUSAL:  # no key past the block's last query
            kend = min(kend, q0 + BQ)
        FETCH(k, fetched, z1, z2, 0, tid)
        pk.barrier()  # every subgroup holds its Q tiles: the stage is free
        for kb in range(0, kend, BK):
            STASH(skv, fetched, tid)
            pk.barrier()
            for j in range(4):  # S's 16 x 16 tile of keys kb + 16j ...
                s = zero
                for t in pk.static_range(NQ):
                    s = pk.coop_mma(qa[t], pk.coop_load(skv, j * 16, 4 * t, 16, 16,
                                                        pk.MATRIX_B, dtype=AB, transpose=True),
                                    s)
                pk.coop_store(ss, r0, j * 16, s)
            pk.barrier()  # S is complete and K's stage is read
            FETCH(v, fetched, z1, z2, kb, tid)
            # the online softmax of this lane's half of its row
            bm = BLOCK_MAX(ss, row, half, kb, qi, scale_log2)
            bm = max(bm, pk.subgroup_shuffle_xor(bm, 1))
            alpha: pk.f32 = 1.0
            grown = False
            if m == -math.inf:  # the first block: nothing accumulated yet
                m = bm
            elif bm > m + TAU:
                alpha = pk.exp2(m - bm)
                m = bm
                grown = True
            lsum = PROBABILITIES(ss, sp, row, half, kb, qi, scale_log2, m, lsum * alpha)
            STASH(skv, fetched, tid)
            rescale = pk.subgroup_any(grown)
            if lane == 0:
                sflag[sg] = 1 if rescale else 0
            pk.barrier()  # P and V are in place, the flags set
            if sflag[0] + sflag[1] + sflag[2] + sflag[3] > 0:  # the same for the workgroup
                for h in pk.static_range(NQ // 4):  # four of O's tiles at a time through S
                    if h > 0:
                        pk.barrier()
                    for t in pk.static_range(4):
                        pk.coop_store(ss, r0, 16 * t, o[4 * h + t])
                    pk.barrier()
                    scale_rows(ss, row, half, alpha)
                    pk.barrier()
                    for t in pk.static_range(4):
                        o[4 * h + t] = pk.coop_load(ss, r0, 16 * t, 16, 16, pk.ACCUMULATOR)
            if kb + BK < kend:
                FETCH(k, fetched, z1, z2, kb + BK, tid)
            for kk in range(4):  # O += P @ V, 16 keys a step
                pt = pk.coop_load(sp, r0, kk * 16, 16, 16, pk.MATRIX_A)
                for t in pk.static_range(NQ):
                    o[t] = pk.coop_mma(pt, pk.coop_load(skv, kk * 16, 4 * t, 16, 16,
                                                        pk.MATRIX_B, dtype=AB), o[t])
            pk.barrier()  # the stage, S and P are free for the next block
        total = lsum + pk.subgroup_shuffle_xor(lsum, 1)
        inv = 1.0 / total
        if SAVE_LSE and half == 0:  # in natural-log units of the scaled scores
            lse[z1, z2, qi] = (m + pk.log2(total)) * LN2
        for h in pk.static_range(NQ // 4):  # the output, four tiles (64 columns) at a time
            if h > 0:
                pk.barrier()
            for t in pk.static_range(4):
                pk.coop_store(ss, r0, 16 * t, o[4 * h + t])
            pk.barrier()
            for c in range(BK // 2):
                out[z1, z2, qi, 64 * h + 2 * c + half] = AB(ss[row, 2 * c + half] * inv)

    return attention_coop
