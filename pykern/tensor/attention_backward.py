"""The backward of fused attention, flash-attention style: the probabilities are recomputed
from q, k and the forward's per-row log-sum-exp (LSE), block by block, and never stored.

With s_ij = scale · q_i·k_j, p_ij = exp(s_ij - LSE_i), o_i = Σ_j p_ij v_j and g = dL/do:

    dv_j = Σ_i p_ij g_i        dp_ij = g_i·v_j        ds_ij = p_ij (dp_ij - δ_i)
    dq_i = scale · Σ_j ds_ij k_j                       dk_j = scale · Σ_i ds_ij q_i

where δ_i = g_i·o_i (= Σ_j p_ij dp_ij). Two passes, so that no gradient is summed by more than
one invocation (f32 atomic adds are not on every device):

1. `attention_grad_q`: one invocation per query, as in the forward (its q row, g row and dq
   accumulator in registers, keys and values staged in shared memory ATT_KEYS at a time); it
   also computes δ_i and writes it for the second pass;
2. `attention_grad_kv`: one invocation per key (its k and v rows and the dk, dv accumulators in
   registers), queries, g rows, LSE and δ staged GRAD_QUERIES at a time.

Causal attention skips, in pass 1, the keys past the workgroup's last query and, in pass 2, the
queries before the workgroup's first key. Arithmetic is f32 (f64 for f64 inputs).
"""

import functools

import pykern as pk
from pykern.lang.dtypes import DType
from pykern.tensor.device_limits import loop_budget
from pykern.tensor.promotion import compute_float
from pykern.tensor.strided import batch_pieces, broadcast_strides, cdiv, prod, view
from pykern.tensor.tensor import Tensor, empty

GRAD_QUERIES = 64  # pass 1: queries per workgroup, one per invocation
GRAD_KEYS = 16  # pass 1: keys staged per step
GRAD_KV_KEYS = 64  # pass 2: keys per workgroup, one per invocation
GRAD_KV_QUERIES = 16  # pass 2: queries staged per step


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
    kq = _grad_q_kernel(q.dtype, k.dtype, v.dtype, out.dtype, g.dtype, dq.dtype, cf, d, dv,
                        causal)
    kkv = _grad_kv_kernel(q.dtype, k.dtype, v.dtype, g.dtype, dk.dtype, dval.dtype, cf, d, dv,
                          causal)
    for deltas, bshape, bstrides in batch_pieces(batch or (1,), strides if batch else
                                                 [(0,)] * 10, 2):
        m = [view(t, bshape + t.shape[-2:], st + t.element_strides[-2:], t.offset + dl)
             for t, st, dl in zip(rows, bstrides, deltas)]
        ls, de = (view(t, bshape + t.shape[-1:], st + t.element_strides[-1:], t.offset + dl)
                  for t, st, dl in zip(vectors, bstrides[8:], deltas[8:]))
        zs = prod(bshape)
        kq[cdiv(lq, GRAD_QUERIES) * GRAD_QUERIES, zs](m[0], m[1], m[2], m[3], m[4], ls, m[5],
                                                      de, scale)
        kkv[cdiv(lk, GRAD_KV_KEYS) * GRAD_KV_KEYS, zs](m[0], m[1], m[2], m[4], ls, de, m[6],
                                                       m[7], scale)
    return dq, dk, dval


def fits_loop_budget(lq: int, lk: int, d: int, dv: int) -> bool:
    """Whether each invocation's loop iterations stay within the device's cap (lavapipe cuts
    an invocation short after 65,535 in all). Counted as if the driver unrolled nothing: each
    block of keys (pass 1) or queries (pass 2) runs its staging loops and, per key or query,
    the loops over D and Dv."""
    budget = loop_budget()
    if budget is None:
        return True
    per_key = cdiv(GRAD_KEYS * d, GRAD_QUERIES) + cdiv(GRAD_KEYS * dv, GRAD_QUERIES) \
        + GRAD_KEYS * (1 + 2 * d + dv)
    per_query = cdiv(GRAD_KV_QUERIES * d, GRAD_KV_KEYS) + cdiv(GRAD_KV_QUERIES * dv,
                                                               GRAD_KV_KEYS) \
        + GRAD_KV_QUERIES * (1 + 2 * d + 2 * dv)
    setup = 2 * (d + dv)
    return max(cdiv(lk, GRAD_KEYS) * per_key, cdiv(lq, GRAD_KV_QUERIES) * per_query) + setup \
        <= budget


@functools.lru_cache(maxsize=None)
def _grad_q_kernel(q_dt: DType, k_dt: DType, v_dt: DType, o_dt: DType, g_dt: DType,
                   dq_dt: DType, cf: DType, d: int, dv: int, causal: bool) -> pk.Kernel:
    CF, D, DV, CAUSAL = cf, d, dv, causal  # noqa: N806
    BQ, BK = GRAD_QUERIES, GRAD_KEYS  # noqa: N806
    LOADS_K = cdiv(BK * d, BQ)  # noqa: N806
    LOADS_V = cdiv(BK * dv, BQ)  # noqa: N806

    @pk.kernel(workgroup=(BQ, 1, 1))
    def attention_grad_q(q: q_dt[:, :, :, :], k: k_dt[:, :, :, :], v: v_dt[:, :, :, :],
                         o: o_dt[:, :, :, :], g: g_dt[:, :, :, :], lse: CF[:, :, :],
                         dq: dq_dt[:, :, :, :], delta: CF[:, :, :], scale: CF):
        Ks = pk.shared(CF, (BK, D))
        Vs = pk.shared(CF, (BK, DV))
        qr = pk.local(CF, D)
        gr = pk.local(CF, DV)
        acc = pk.local(CF, D)
        t = pk.local_id(0)
        qi = pk.global_id(0)
        z1, z2 = pk.unravel(pk.global_id(1), dq.shape[:2])
        lq = q.shape[2]
        lk = k.shape[2]
        row = min(qi, lq - 1)  # invocations past the last query compute, but do not store
        for c in range(D):
            qr[c] = CF(q[z1, z2, row, c]) * scale
            acc[c] = 0.0
        di: CF = 0.0
        for c in range(DV):
            gr[c] = CF(g[z1, z2, row, c])
            di = pk.fma(gr[c], CF(o[z1, z2, row, c]), di)
        li = lse[z1, z2, row]
        kend = lk
        if CAUSAL:  # no key beyond this workgroup's last query (a uniform bound)
            kend = min(lk, (pk.group_id(0) + 1) * BQ)
        for k0 in range(0, kend, BK):
            for r in range(LOADS_K):
                e = t + r * BQ
                if e < BK * D:
                    kv: CF = 0.0
                    if k0 + e // D < lk:
                        kv = CF(k[z1, z2, k0 + e // D, e % D])
                    Ks[e // D, e % D] = kv
            for r in range(LOADS_V):
                e = t + r * BQ
                if e < BK * DV:
                    vv: CF = 0.0
                    if k0 + e // DV < lk:
                        vv = CF(v[z1, z2, k0 + e // DV, e % DV])
                    Vs[e // DV, e % DV] = vv
            pk.barrier()
            for j in range(BK):
                ok = k0 + j < lk
                if CAUSAL:
                    ok = ok and k0 + j <= qi
                if ok:
                    s: CF = 0.0
                    for c in range(D):
                        s = pk.fma(qr[c], Ks[j, c], s)
                    dp: CF = 0.0
                    for c in range(DV):
                        dp = pk.fma(gr[c], Vs[j, c], dp)
                    ds = pk.exp(s - li) * (dp - di)
                    for c in range(D):
                        acc[c] = pk.fma(ds, Ks[j, c], acc[c])
            pk.barrier()
        if qi < lq:
            for c in range(D):
                dq[z1, z2, qi, c] = acc[c] * scale
            delta[z1, z2, qi] = di

    return attention_grad_q


@functools.lru_cache(maxsize=None)
def _grad_kv_kernel(q_dt: DType, k_dt: DType, v_dt: DType, g_dt: DType, dk_dt: DType,
                    dv_dt: DType, cf: DType, d: int, dv: int, causal: bool) -> pk.Kernel:
    CF, D, DV, CAUSAL = cf, d, dv, causal  # noqa: N806
    BK, BQ = GRAD_KV_KEYS, GRAD_KV_QUERIES  # noqa: N806
    LOADS_Q = cdiv(BQ * d, BK)  # noqa: N806
    LOADS_G = cdiv(BQ * dv, BK)  # noqa: N806

    @pk.kernel(workgroup=(BK, 1, 1))
    def attention_grad_kv(q: q_dt[:, :, :, :], k: k_dt[:, :, :, :], v: v_dt[:, :, :, :],
                          g: g_dt[:, :, :, :], lse: CF[:, :, :], delta: CF[:, :, :],
                          dk: dk_dt[:, :, :, :], dval: dv_dt[:, :, :, :], scale: CF):
        Qs = pk.shared(CF, (BQ, D))
        Gs = pk.shared(CF, (BQ, DV))
        Ls = pk.shared(CF, BQ)
        Es = pk.shared(CF, BQ)
        kr = pk.local(CF, D)
        vr = pk.local(CF, DV)
        ak = pk.local(CF, D)
        av = pk.local(CF, DV)
        t = pk.local_id(0)
        kj = pk.global_id(0)
        z1, z2 = pk.unravel(pk.global_id(1), dk.shape[:2])
        lq = q.shape[2]
        lk = k.shape[2]
        col = min(kj, lk - 1)  # invocations past the last key compute, but do not store
        for c in range(D):
            kr[c] = CF(k[z1, z2, col, c]) * scale
            ak[c] = 0.0
        for c in range(DV):
            vr[c] = CF(v[z1, z2, col, c])
            av[c] = 0.0
        qstart = 0
        if CAUSAL:  # no query before this workgroup's first key sees any of its keys
            qstart = pk.group_id(0) * BK
        for q0 in range(qstart, lq, BQ):
            for r in range(LOADS_Q):
                e = t + r * BK
                if e < BQ * D:
                    qv: CF = 0.0
                    if q0 + e // D < lq:
                        qv = CF(q[z1, z2, q0 + e // D, e % D])
                    Qs[e // D, e % D] = qv
            for r in range(LOADS_G):
                e = t + r * BK
                if e < BQ * DV:
                    gv: CF = 0.0
                    if q0 + e // DV < lq:
                        gv = CF(g[z1, z2, q0 + e // DV, e % DV])
                    Gs[e // DV, e % DV] = gv
            if t < BQ:
                lv: CF = 0.0
                ev: CF = 0.0
                if q0 + t < lq:
                    lv = lse[z1, z2, q0 + t]
                    ev = delta[z1, z2, q0 + t]
                Ls[t] = lv
                Es[t] = ev
            pk.barrier()
            for i in range(BQ):
                ok = q0 + i < lq
                if CAUSAL:
                    ok = ok and kj <= q0 + i
                if ok:
                    s: CF = 0.0
                    for c in range(D):
                        s = pk.fma(Qs[i, c], kr[c], s)
                    p = pk.exp(s - Ls[i])
                    dp: CF = 0.0
                    for c in range(DV):
                        dp = pk.fma(Gs[i, c], vr[c], dp)
                        av[c] = pk.fma(p, Gs[i, c], av[c])
                    ds = p * (dp - Es[i])
                    for c in range(D):
                        ak[c] = pk.fma(ds, Qs[i, c], ak[c])
            pk.barrier()
        if kj < lk:
            for c in range(D):
                dk[z1, z2, kj, c] = ak[c] * scale
            for c in range(DV):
                dval[z1, z2, kj, c] = av[c]

    return attention_grad_kv


def lse_like(out: Tensor) -> Tensor:
    """The forward's log-sum-exp buffer for `out` (batch + (Lq, Dv)): batch + (Lq,), f32
    (f64 for f64)."""
    return empty(out.shape[:-1], compute_float(out.dtype))

