"""The backward of fused attention, flash-attention style: the probabilities are recomputed
from q, k and the forward's per-row log-sum-exp (LSE), block by block, and never stored.

With s_ij = scale · q_i·k_j, p_ij = exp(s_ij - LSE_i), o_i = Σ_j p_ij v_j and g = dL/do:

    dv_j = Σ_i p_ij g_i        dp_ij = g_i·v_j        ds_ij = p_ij (dp_ij - δ_i)
    dq_i = scale · Σ_j ds_ij k_j                       dk_j = scale · Σ_i ds_ij q_i

where δ_i = g_i·o_i (= Σ_j p_ij dp_ij). Two passes, so that no gradient is summed by more than
one invocation (f32 atomic adds are not on every device):

1. `attention_grad_q`, per query: its q row, g row and dq accumulator in registers, keys and
   values staged in shared memory GRAD_KEYS at a time; it also computes δ_i and writes it for
   the second pass;
2. `attention_grad_kv`, per key: its k and v rows and the dk, dv accumulators in registers,
   queries, g rows, LSE and δ staged GRAD_KV_QUERIES at a time.

A row (of a query, or a key) is held by `lanes` adjacent invocations of a subgroup, each with
every lanes-th column, so that no invocation holds more than 32 columns of a row: pass 2 holds
four rows' worth (k, v, dk, dv), which at head dimension 64 would pass the 255 registers an
NVIDIA invocation has. The lanes' partial dot products are added with subgroup shuffles.

Causal attention skips, in pass 1, the keys past the workgroup's last query and, in pass 2, the
queries before the workgroup's first key. Arithmetic is f32 (f64 for f64 inputs).
"""

import functools

import pykern as pk
from pykern.lang.dtypes import DType
from pykern.lang.func import Func
from pykern.runtime import get_device
from pykern.tensor.core.device_limits import loop_budget
from pykern.tensor.core.promotion import compute_float
from pykern.tensor.core.strided import batch_pieces, broadcast_strides, cdiv, prod, view
from pykern.tensor.core.tensor import Tensor, empty
from pykern.tensor.nnops.attention_stage import row_stager

GRAD_QUERIES = 64  # pass 1: queries per workgroup
GRAD_KEYS = 16  # pass 1: keys staged per step
GRAD_KV_KEYS = 64  # pass 2: keys per workgroup
GRAD_KV_QUERIES = 16  # pass 2: queries staged per step
LANE_COLUMNS = 32  # columns of a row one invocation holds at most (where the subgroup allows)
MAX_LANES = 4


def attention_grads(q: Tensor, k: Tensor, v: Tensor, out: Tensor, lse: Tensor, g: Tensor,
                    causal: bool, scale: float) -> tuple[Tensor, Tensor, Tensor]:
    """(dq, dk, dv) of fused attention for the gradient `g` of its result `out` (the forward's
    operands q (..., Lq, D), k (..., Lk, D), v (..., Lk, Dv), broadcasting batch dimensions,
    D, Dv, Lq, Lk >= 1, and its log-sum-exp `lse` (batch + (Lq,))). Each gradient has the full
    batch shape (the caller sums it back over what was broadcast); it has its input's dtype
    where that input spans the whole batch, else the compute dtype (f32, f64 for f64), so that
    the sum is not rounded to f16. The caller checks `fits_loop_budget` first."""
    batch = out.shape[:-2]
    lq, d = q.shape[-2:]
    lk, dv = v.shape[-2:]
    cf = compute_float(out.dtype)

    def grad_like(t: Tensor) -> Tensor:
        full = tuple(t.shape[:-2]) == tuple(batch)
        return empty(batch + t.shape[-2:], t.dtype if full else cf)

    dq, dk, dval = grad_like(q), grad_like(k), grad_like(v)
    delta = empty(batch + (lq,), cf)
    rows = [q, k, v, out, g, dq, dk, dval]
    vectors = [lse, delta]
    strides = [broadcast_strides(batch, t.shape[:-2], t.element_strides[:-2]) for t in rows] + \
        [broadcast_strides(batch, t.shape[:-1], t.element_strides[:-1]) for t in vectors]
    lanes = lanes_per_row(d, dv)
    kq = _grad_q_kernel(q.dtype, k.dtype, v.dtype, out.dtype, g.dtype, dq.dtype, cf, d, dv,
                        causal, lanes)
    kkv = _grad_kv_kernel(q.dtype, k.dtype, v.dtype, g.dtype, dk.dtype, dval.dtype, cf, d, dv,
                          causal, lanes)
    for deltas, bshape, bstrides in batch_pieces(batch or (1,), strides if batch else
                                                 [(0,)] * 10, 2):
        m = [view(t, bshape + t.shape[-2:], st + t.element_strides[-2:], t.offset + dl)
             for t, st, dl in zip(rows, bstrides, deltas)]
        ls, de = (view(t, bshape + t.shape[-1:], st + t.element_strides[-1:], t.offset + dl)
                  for t, st, dl in zip(vectors, bstrides[8:], deltas[8:]))
        zs = prod(bshape)
        kq[cdiv(lq, GRAD_QUERIES) * GRAD_QUERIES * lanes, zs](m[0], m[1], m[2], m[3], m[4],
                                                              ls, m[5], de, scale)
        kkv[cdiv(lk, GRAD_KV_KEYS) * GRAD_KV_KEYS * lanes, zs](m[0], m[1], m[2], m[4], ls, de,
                                                               m[6], m[7], scale)
    return dq, dk, dval


def lanes_per_row(d: int, dv: int) -> int:
    """Invocations per row: 1, 2 or 4, so that each holds at most LANE_COLUMNS columns where
    the device's subgroups are that large."""
    lanes = 1
    while cdiv(max(d, dv), lanes) > LANE_COLUMNS and lanes < MAX_LANES:
        lanes *= 2
    return min(lanes, get_device().info.features.subgroup_size)


def fits_loop_budget(lq: int, lk: int, d: int, dv: int) -> bool:
    """Whether each invocation's loop iterations stay within the device's cap (lavapipe cuts
    an invocation short after 65,535 in all). Counted as if the driver unrolled nothing: each
    block of keys (pass 1) or queries (pass 2) runs its staging loops and, per key or query,
    the loops over the invocation's columns."""
    budget = loop_budget()
    if budget is None:
        return True
    lanes = lanes_per_row(d, dv)
    dl, dvl = cdiv(d, lanes), cdiv(dv, lanes)
    per_key = cdiv(GRAD_KEYS * d, GRAD_QUERIES) + cdiv(GRAD_KEYS * dv, GRAD_QUERIES) \
        + GRAD_KEYS * (1 + 2 * dl + dvl)
    per_query = cdiv(GRAD_KV_QUERIES * d, GRAD_KV_KEYS) \
        + cdiv(GRAD_KV_QUERIES * dv, GRAD_KV_KEYS) + GRAD_KV_QUERIES * (1 + 2 * dl + 2 * dvl)
    setup = 2 * (dl + dvl)
    return max(cdiv(lk, GRAD_KEYS) * per_key, cdiv(lq, GRAD_KV_QUERIES) * per_query) + setup \
        <= budget


def _lane_funcs(cf: DType, d: int, dv: int, lanes: int) -> tuple[Func, Func, Func, Func]:
    """(lane_sum, row_dots, load_row, store_row): the per-row work both passes share, for a
    row held by `lanes` invocations, each with columns h, h + lanes, h + 2·lanes, ..."""
    CF, D, P = cf, d, lanes  # noqa: N806
    DL, DVL = cdiv(d, lanes), cdiv(dv, lanes)  # noqa: N806  (columns per invocation)

    @pk.func
    def lane_sum(x):
        """The sum of x over the row's lanes (adjacent invocations of a subgroup)."""
        if P >= 2:
            x += pk.subgroup_shuffle_xor(x, 1)
        if P >= 4:
            x += pk.subgroup_shuffle_xor(x, 2)
        return x

    @pk.func
    def row_dots(ra, sa, rb, sb, j, h):
        """(ra·sa[j], rb·sb[j]) over whole rows: the registers ra (D columns) and rb (Dv)
        against row j of the stages sa and sb."""
        s: CF = 0.0
        for cc in range(DL):
            s = pk.fma(ra[cc], sa[j, h + cc * P], s)
        dp: CF = 0.0
        for cc in range(DVL):
            dp = pk.fma(rb[cc], sb[j, h + cc * P], dp)
        return lane_sum(s), lane_sum(dp)

    @pk.func
    def load_row(regs, zeroed, src, z1, z2, row, h, scale):
        """regs = this lane's columns of src[z1, z2, row] (D of them) times scale, zeroed = 0."""
        for cc in range(DL):
            x: CF = 0.0
            if h + cc * P < D:
                x = CF(src[z1, z2, row, h + cc * P]) * scale
            regs[cc] = x
            zeroed[cc] = 0.0

    @pk.func
    def store_row(dst, regs, z1, z2, row, h, scale):
        """dst[z1, z2, row] = this lane's columns of regs (D of them) times scale."""
        for cc in range(DL):
            if h + cc * P < D:
                dst[z1, z2, row, h + cc * P] = regs[cc] * scale

    return lane_sum, row_dots, load_row, store_row


def _stage_funcs(cf: DType, d: int, dv: int, lanes: int, rows: int,
                 wg: int) -> tuple[Func, Func, Func]:
    """(zero_padding, stage_d, stage_dv): the shared-memory stages of `rows` rows of D (Dv)
    columns that the `wg` invocations of a workgroup fill together (rows past the operand's
    last repeat it: their results are never used)."""
    DL, DVL = cdiv(d, lanes), cdiv(dv, lanes)  # noqa: N806
    D, DV, ROWS = d, dv, rows  # noqa: N806
    PAD, PADV = DL * lanes - d, DVL * lanes - dv  # noqa: N806  (zero columns of the stage)

    @pk.func
    def zero_padding(sd, sdv, t):
        """The stages' columns past D (Dv) stay zero; written once, before the first barrier
        (fewer than ROWS * lanes of them: one per invocation at most)."""
        if PAD > 0 and t < ROWS * PAD:
            sd[t // max(PAD, 1), D + t % max(PAD, 1)] = 0.0
        if PADV > 0 and t < ROWS * PADV:
            sdv[t // max(PADV, 1), DV + t % max(PADV, 1)] = 0.0

    return (zero_padding, row_stager(cf, d, rows, wg, repeat_last=True),
            row_stager(cf, dv, rows, wg, repeat_last=True))


@functools.lru_cache(maxsize=None)
def _grad_q_kernel(q_dt: DType, k_dt: DType, v_dt: DType, o_dt: DType, g_dt: DType,
                   dq_dt: DType, cf: DType, d: int, dv: int, causal: bool,
                   lanes: int) -> pk.Kernel:
    CF, DV, CAUSAL, P = cf, dv, causal, lanes  # noqa: N806
    DL, DVL = cdiv(d, lanes), cdiv(dv, lanes)  # noqa: N806  (columns per invocation)
    BQ, BK, WG = GRAD_QUERIES, GRAD_KEYS, GRAD_QUERIES * lanes  # noqa: N806
    lane_sum, row_dots, load_row, store_row = _lane_funcs(cf, d, dv, lanes)
    zero_padding, stage_k, stage_v = _stage_funcs(cf, d, dv, lanes, BK, WG)

    @pk.kernel(workgroup=(WG, 1, 1))
    def attention_grad_q(q: q_dt[:, :, :, :], k: k_dt[:, :, :, :], v: v_dt[:, :, :, :],
                         o: o_dt[:, :, :, :], g: g_dt[:, :, :, :], lse: CF[:, :, :],
                         dq: dq_dt[:, :, :, :], delta: CF[:, :, :], scale: CF):
        Ks = pk.shared(CF, (BK, DL * P))  # columns past D are zeros
        Vs = pk.shared(CF, (BK, DVL * P))
        qr = pk.local(CF, DL)  # columns h, h + P, h + 2P, ... of the row
        gr = pk.local(CF, DVL)
        acc = pk.local(CF, DL)
        t = pk.local_id(0)
        h = t % P
        qi = pk.group_id(0) * BQ + t // P
        z1, z2 = pk.unravel(pk.global_id(1), dq.shape[:2])
        lq = q.shape[2]
        lk = k.shape[2]
        row = min(qi, lq - 1)  # invocations past the last query compute, but do not store
        load_row(qr, acc, q, z1, z2, row, h, scale)
        di: CF = 0.0
        for cc in range(DVL):
            y: CF = 0.0
            if h + cc * P < DV:
                y = CF(g[z1, z2, row, h + cc * P])
                di = pk.fma(y, CF(o[z1, z2, row, h + cc * P]), di)
            gr[cc] = y
        di = lane_sum(di)
        li = lse[z1, z2, row]
        zero_padding(Ks, Vs, t)
        kend = lk
        if CAUSAL:  # no key beyond this workgroup's last query (a uniform bound)
            kend = min(lk, (pk.group_id(0) + 1) * BQ)
        for k0 in range(0, kend, BK):
            stage_k(Ks, k, z1, z2, k0, lk, t)
            stage_v(Vs, v, z1, z2, k0, lk, t)
            pk.barrier()
            for j in range(BK):
                s, dp = row_dots(qr, Ks, gr, Vs, j, h)
                ok = k0 + j < lk
                if CAUSAL:
                    ok = ok and k0 + j <= qi
                if ok:
                    ds = pk.exp(s - li) * (dp - di)
                    for cc in range(DL):
                        acc[cc] = pk.fma(ds, Ks[j, h + cc * P], acc[cc])
            pk.barrier()
        if qi < lq:
            store_row(dq, acc, z1, z2, qi, h, scale)
            if h == 0:
                delta[z1, z2, qi] = di

    return attention_grad_q


@functools.lru_cache(maxsize=None)
def _grad_kv_kernel(q_dt: DType, k_dt: DType, v_dt: DType, g_dt: DType, dk_dt: DType,
                    dv_dt: DType, cf: DType, d: int, dv: int, causal: bool,
                    lanes: int) -> pk.Kernel:
    CF, DV, CAUSAL, P = cf, dv, causal, lanes  # noqa: N806
    DL, DVL = cdiv(d, lanes), cdiv(dv, lanes)  # noqa: N806  (columns per invocation)
    BK, BQ, WG = GRAD_KV_KEYS, GRAD_KV_QUERIES, GRAD_KV_KEYS * lanes  # noqa: N806
    _, row_dots, load_row, store_row = _lane_funcs(cf, d, dv, lanes)
    zero_padding, stage_q, stage_g = _stage_funcs(cf, d, dv, lanes, BQ, WG)

    @pk.kernel(workgroup=(WG, 1, 1))
    def attention_grad_kv(q: q_dt[:, :, :, :], k: k_dt[:, :, :, :], v: v_dt[:, :, :, :],
                          g: g_dt[:, :, :, :], lse: CF[:, :, :], delta: CF[:, :, :],
                          dk: dk_dt[:, :, :, :], dval: dv_dt[:, :, :, :], scale: CF):
        Qs = pk.shared(CF, (BQ, DL * P))  # columns past D are zeros
        Gs = pk.shared(CF, (BQ, DVL * P))
        Ls = pk.shared(CF, BQ)
        Es = pk.shared(CF, BQ)
        kr = pk.local(CF, DL)  # columns h, h + P, h + 2P, ... of the row
        vr = pk.local(CF, DVL)
        ak = pk.local(CF, DL)
        av = pk.local(CF, DVL)
        t = pk.local_id(0)
        h = t % P
        kj = pk.group_id(0) * BK + t // P
        z1, z2 = pk.unravel(pk.global_id(1), dk.shape[:2])
        lq = q.shape[2]
        lk = k.shape[2]
        col = min(kj, lk - 1)  # invocations past the last key compute, but do not store
        load_row(kr, ak, k, z1, z2, col, h, scale)
        for cc in range(DVL):
            y: CF = 0.0
            if h + cc * P < DV:
                y = CF(v[z1, z2, col, h + cc * P])
            vr[cc] = y
            av[cc] = 0.0
        zero_padding(Qs, Gs, t)
        qstart = 0
        if CAUSAL:  # no query before this workgroup's first key sees any of its keys
            qstart = pk.group_id(0) * BK
        for q0 in range(qstart, lq, BQ):
            stage_q(Qs, q, z1, z2, q0, lq, t)
            stage_g(Gs, g, z1, z2, q0, lq, t)
            if t < BQ:
                Ls[t] = lse[z1, z2, min(q0 + t, lq - 1)]
                Es[t] = delta[z1, z2, min(q0 + t, lq - 1)]
            pk.barrier()
            for i in range(BQ):
                s, dp = row_dots(kr, Qs, vr, Gs, i, h)
                ok = q0 + i < lq
                if CAUSAL:
                    ok = ok and kj <= q0 + i
                if ok:
                    p = pk.exp(s - Ls[i])
                    ds = p * (dp - Es[i])
                    for cc in range(DVL):
                        av[cc] = pk.fma(p, Gs[i, h + cc * P], av[cc])
                    for cc in range(DL):
                        ak[cc] = pk.fma(ds, Qs[i, h + cc * P], ak[cc])
            pk.barrier()
        if kj < lk:
            store_row(dk, ak, z1, z2, kj, h, scale)
            for cc in range(DVL):
                if h + cc * P < DV:
                    dval[z1, z2, kj, h + cc * P] = av[cc]

    return attention_grad_kv


def lse_like(out: Tensor) -> Tensor:
    """The forward's log-sum-exp buffer for `out` (batch + (Lq, Dv)): batch + (Lq,), f32
    (f64 for f64)."""
    return empty(out.shape[:-1], compute_float(out.dtype))
