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
from pykern.tensor.gemm.gemm_coop import TILE_DTYPES, _offers, _words
from pykern.tensor.core.strided import batch_pieces, broadcast_strides, view
from pykern.tensor.core.tensor import Tensor, empty

BQ, BK = 64, 64  # queries per workgroup (16 per subgroup), keys per step
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
    if applies(q, k, v, out) is not None or not (INTERPRET or _offers(out.device, q.dtype)):
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
    kern[(lq // BQ) * 32, 4, b1 * b2](q, k, v, out, lse, scale * LOG2E)


@functools.lru_cache(maxsize=None)
def interpreted(kern: pk.Kernel) -> pk.Kernel:
    """The interpreter's twin of a kernel of `_kernel` (the same body and workgroup)."""
    return pk.kernel(kern.__wrapped__, interpret=True, workgroup=kern.workgroup)


@functools.lru_cache(maxsize=None)
def _kernel(dtype: DType, d: int, causal: bool, save_lse: bool = False) -> pk.Kernel:
    AB, D, CAUSAL, SAVE_LSE = dtype, d, causal, save_lse  # noqa: N806
    W = d // 4  # noqa: N806  (64-bit words per row)
    STAGE = BK * W // 128  # noqa: N806  (words each invocation copies per block)
    BIG = D == 128  # noqa: N806  (8 tiles across a row instead of 4)

    @pk.kernel(workgroup=(32, 4, 1))
    def attention_coop(q: pk.u64[:, :, :, :], k: pk.u64[:, :, :, :], v: pk.u64[:, :, :, :],
                       out: AB[:, :, :, :], lse: pk.f32[:, :, :], scale_log2: pk.f32):
        skv = pk.shared(pk.u64, (BK, W + 2))  # Q's block once, then each K and V block
        ss = pk.shared(pk.f32, (BQ, BK + 4))  # S; the scratch of O's rescaling and output
        sp = pk.shared(AB, (BQ, BK + 8))  # P
        sflag = pk.shared(pk.i32, 4)  # per subgroup: a row of it needs O rescaled
        lane = pk.local_id(0)
        sg = pk.local_id(1)
        tid = sg * 32 + lane
        z1, z2 = pk.unravel(pk.group_id(2), out.shape[:2])
        q0 = (pk.num_groups(0) - 1 - pk.group_id(0)) * BQ  # causal: the longest rows first
        r0 = sg * 16  # the subgroup's rows in the block
        row = r0 + lane // 2  # two lanes per row: the even and the odd columns
        half = lane % 2
        qi = q0 + row
        for e in range(STAGE):
            w = tid + e * 128
            skv[w // W, w % W] = q[z1, z2, q0 + w // W, w % W]
        pk.barrier()
        a0 = pk.coop_load(skv, r0, 0, 16, 16, pk.MATRIX_A, dtype=AB)
        a1 = pk.coop_load(skv, r0, 4, 16, 16, pk.MATRIX_A, dtype=AB)
        a2 = pk.coop_load(skv, r0, 8, 16, 16, pk.MATRIX_A, dtype=AB)
        a3 = pk.coop_load(skv, r0, 12, 16, 16, pk.MATRIX_A, dtype=AB)
        if BIG:
            a4 = pk.coop_load(skv, r0, 16, 16, 16, pk.MATRIX_A, dtype=AB)
            a5 = pk.coop_load(skv, r0, 20, 16, 16, pk.MATRIX_A, dtype=AB)
            a6 = pk.coop_load(skv, r0, 24, 16, 16, pk.MATRIX_A, dtype=AB)
            a7 = pk.coop_load(skv, r0, 28, 16, 16, pk.MATRIX_A, dtype=AB)
        zero = pk.coop_fill(pk.f32, 16, 16, pk.ACCUMULATOR, 0.0)
        o0 = zero
        o1 = zero
        o2 = zero
        o3 = zero
        o4 = zero
        o5 = zero
        o6 = zero
        o7 = zero
        m: pk.f32 = -math.inf  # the row's reference maximum (log2 units), P = 2^(x - m)
        lsum: pk.f32 = 0.0  # this lane's half of the row's sum of P
        kend = k.shape[2]
        if CAUSAL:  # no key past the block's last query
            kend = min(kend, q0 + BQ)
        # the words this invocation copies into the stage, fetched into registers ahead of
        # the store, so that the loads from memory overlap other work: the first K block here,
        # V's during the softmax, the next K block's during O += P @ V
        fetched = pk.local(pk.u64, STAGE)
        for e in range(STAGE):
            w = tid + e * 128
            fetched[e] = k[z1, z2, w // W, w % W]
        pk.barrier()  # every subgroup holds its Q tiles: the stage is free
        for kb in range(0, kend, BK):
            for e in range(STAGE):
                w = tid + e * 128
                skv[w // W, w % W] = fetched[e]
            pk.barrier()
            for j in range(4):  # S's 16 x 16 tile of keys kb + 16j ...
                s = pk.coop_mma(a0, pk.coop_load(skv, j * 16, 0, 16, 16, pk.MATRIX_B,
                                                 dtype=AB, transpose=True), zero)
                s = pk.coop_mma(a1, pk.coop_load(skv, j * 16, 4, 16, 16, pk.MATRIX_B,
                                                 dtype=AB, transpose=True), s)
                s = pk.coop_mma(a2, pk.coop_load(skv, j * 16, 8, 16, 16, pk.MATRIX_B,
                                                 dtype=AB, transpose=True), s)
                s = pk.coop_mma(a3, pk.coop_load(skv, j * 16, 12, 16, 16, pk.MATRIX_B,
                                                 dtype=AB, transpose=True), s)
                if BIG:
                    s = pk.coop_mma(a4, pk.coop_load(skv, j * 16, 16, 16, 16, pk.MATRIX_B,
                                                     dtype=AB, transpose=True), s)
                    s = pk.coop_mma(a5, pk.coop_load(skv, j * 16, 20, 16, 16, pk.MATRIX_B,
                                                     dtype=AB, transpose=True), s)
                    s = pk.coop_mma(a6, pk.coop_load(skv, j * 16, 24, 16, 16, pk.MATRIX_B,
                                                     dtype=AB, transpose=True), s)
                    s = pk.coop_mma(a7, pk.coop_load(skv, j * 16, 28, 16, 16, pk.MATRIX_B,
                                                     dtype=AB, transpose=True), s)
                pk.coop_store(ss, r0, j * 16, s)
            pk.barrier()  # S is complete and K's stage is read
            for e in range(STAGE):
                w = tid + e * 128
                fetched[e] = v[z1, z2, kb + w // W, w % W]
            # the online softmax of this lane's half of its row
            bm: pk.f32 = -math.inf
            for c in range(BK // 2):
                j = 2 * c + half
                x = ss[row, j] * scale_log2
                if CAUSAL and kb + j > qi:
                    x = -math.inf
                bm = max(bm, x)
            bm = max(bm, pk.subgroup_shuffle_xor(bm, 1))
            alpha: pk.f32 = 1.0
            grown = False
            if m == -math.inf:  # the first block: nothing accumulated yet
                m = bm
            elif bm > m + TAU:
                alpha = pk.exp2(m - bm)
                m = bm
                grown = True
            lsum = lsum * alpha
            for c in range(BK // 2):
                j = 2 * c + half
                x = ss[row, j] * scale_log2
                if CAUSAL and kb + j > qi:
                    x = -math.inf
                p = AB(pk.exp2(x - m))
                sp[row, j] = p
                lsum += pk.f32(p)  # the sum of what is multiplied, rounded as it is
            for e in range(STAGE):
                w = tid + e * 128
                skv[w // W, w % W] = fetched[e]
            rescale = pk.subgroup_any(grown)
            if lane == 0:
                sflag[sg] = 1 if rescale else 0
            pk.barrier()  # P and V are in place, the flags set
            if sflag[0] + sflag[1] + sflag[2] + sflag[3] > 0:  # the same for the workgroup
                pk.coop_store(ss, r0, 0, o0)
                pk.coop_store(ss, r0, 16, o1)
                pk.coop_store(ss, r0, 32, o2)
                pk.coop_store(ss, r0, 48, o3)
                pk.barrier()
                for c in range(BK // 2):
                    ss[row, 2 * c + half] = ss[row, 2 * c + half] * alpha
                pk.barrier()
                o0 = pk.coop_load(ss, r0, 0, 16, 16, pk.ACCUMULATOR)
                o1 = pk.coop_load(ss, r0, 16, 16, 16, pk.ACCUMULATOR)
                o2 = pk.coop_load(ss, r0, 32, 16, 16, pk.ACCUMULATOR)
                o3 = pk.coop_load(ss, r0, 48, 16, 16, pk.ACCUMULATOR)
                if BIG:
                    pk.barrier()
                    pk.coop_store(ss, r0, 0, o4)
                    pk.coop_store(ss, r0, 16, o5)
                    pk.coop_store(ss, r0, 32, o6)
                    pk.coop_store(ss, r0, 48, o7)
                    pk.barrier()
                    for c in range(BK // 2):
                        ss[row, 2 * c + half] = ss[row, 2 * c + half] * alpha
                    pk.barrier()
                    o4 = pk.coop_load(ss, r0, 0, 16, 16, pk.ACCUMULATOR)
                    o5 = pk.coop_load(ss, r0, 16, 16, 16, pk.ACCUMULATOR)
                    o6 = pk.coop_load(ss, r0, 32, 16, 16, pk.ACCUMULATOR)
                    o7 = pk.coop_load(ss, r0, 48, 16, 16, pk.ACCUMULATOR)
            if kb + BK < kend:
                for e in range(STAGE):
                    w = tid + e * 128
                    fetched[e] = k[z1, z2, kb + BK + w // W, w % W]
            for kk in range(4):  # O += P @ V, 16 keys a step
                pt = pk.coop_load(sp, r0, kk * 16, 16, 16, pk.MATRIX_A)
                o0 = pk.coop_mma(pt, pk.coop_load(skv, kk * 16, 0, 16, 16, pk.MATRIX_B,
                                                  dtype=AB), o0)
                o1 = pk.coop_mma(pt, pk.coop_load(skv, kk * 16, 4, 16, 16, pk.MATRIX_B,
                                                  dtype=AB), o1)
                o2 = pk.coop_mma(pt, pk.coop_load(skv, kk * 16, 8, 16, 16, pk.MATRIX_B,
                                                  dtype=AB), o2)
                o3 = pk.coop_mma(pt, pk.coop_load(skv, kk * 16, 12, 16, 16, pk.MATRIX_B,
                                                  dtype=AB), o3)
                if BIG:
                    o4 = pk.coop_mma(pt, pk.coop_load(skv, kk * 16, 16, 16, 16, pk.MATRIX_B,
                                                      dtype=AB), o4)
                    o5 = pk.coop_mma(pt, pk.coop_load(skv, kk * 16, 20, 16, 16, pk.MATRIX_B,
                                                      dtype=AB), o5)
                    o6 = pk.coop_mma(pt, pk.coop_load(skv, kk * 16, 24, 16, 16, pk.MATRIX_B,
                                                      dtype=AB), o6)
                    o7 = pk.coop_mma(pt, pk.coop_load(skv, kk * 16, 28, 16, 16, pk.MATRIX_B,
                                                      dtype=AB), o7)
            pk.barrier()  # the stage, S and P are free for the next block
        total = lsum + pk.subgroup_shuffle_xor(lsum, 1)
        inv = 1.0 / total
        if SAVE_LSE and half == 0:  # in natural-log units of the scaled scores
            lse[z1, z2, qi] = (m + pk.log2(total)) * LN2
        pk.coop_store(ss, r0, 0, o0)
        pk.coop_store(ss, r0, 16, o1)
        pk.coop_store(ss, r0, 32, o2)
        pk.coop_store(ss, r0, 48, o3)
        pk.barrier()
        for c in range(BK // 2):
            out[z1, z2, qi, 2 * c + half] = AB(ss[row, 2 * c + half] * inv)
        if BIG:
            pk.barrier()
            pk.coop_store(ss, r0, 0, o4)
            pk.coop_store(ss, r0, 16, o5)
            pk.coop_store(ss, r0, 32, o6)
            pk.coop_store(ss, r0, 48, o7)
            pk.barrier()
            for c in range(BK // 2):
                out[z1, z2, qi, 64 + 2 * c + half] = AB(ss[row, 2 * c + half] * inv)

    return attention_coop
