"""The portable conv kernel: an implicit GEMM on the GEMM micro-kernel of gemm_tile, for conv2d
and conv_transpose2d, with groups, on x, w and out of any strides.

Per group g (the grid's third dimension) it is the product of a patch matrix and the group's
filters: rows are output pixels (n, oh, ow), columns the group's output channels, and the
reduction runs over the group's input channels × the kernel taps. The patch entries are
gathered from x on the fly into shared memory (no im2col buffer): conv2d reads input row
ih = oh·s - p + kh·d; conv_transpose2d, the gradient of conv2d with respect to its input, reads
the ih with ih·s - p + kh·d = oh, and is launched once per output phase (conv_phases) so that
each launch reduces only over the taps that reach its rows and columns. When x keeps
its channels adjacent (channels-last), the reduction walks channels innermost and neighbouring
invocations load neighbouring channels, so the gathers stay coalesced in either layout.
"""

import functools

import pykern as pk

from pykern.lang.dtypes import DType
from pykern.tensor.gemm import matmul as linalg
from pykern.tensor.conv.conv_args import ConvGeometry
from pykern.tensor.conv.conv_phases import output_phases
from pykern.tensor.conv.conv_taps import bias_or_zero, forward_source, transposed_source
from pykern.tensor.core.device_limits import is_cpu_device, loop_budget
from pykern.tensor.gemm.gemm_tile import multiply_tiles, step_for, tile_position
from pykern.tensor.core.promotion import accumulator
from pykern.tensor.core.strided import cdiv, view
from pykern.tensor.core.tensor import Tensor


def launch_igemm(x: Tensor, w: Tensor, bias: Tensor | None, out: Tensor, geo: ConvGeometry,
                 channels_inner: bool, op: str) -> None:
    """out = conv(x, w) + bias through the implicit GEMM: one launch per output phase (one for
    conv2d, stride_h·stride_w for a strided conv_transpose2d), every group in each;
    `channels_inner` orders the reduction channels-innermost (for channels-last x)."""
    per_group_out = out.shape[1] // geo.groups
    wide = per_group_out >= 128 and not is_cpu_device()
    cfg = linalg.GPU_TILE if wide else linalg.GPU_SMALL
    phases = output_phases(geo, w.shape[2:], out.shape[2:])
    ksize = x.shape[1] // geo.groups * max(rows.taps * cols.taps for rows, cols in phases)
    budget = loop_budget()
    if budget is not None and cdiv(ksize, cfg.bk) > budget:
        raise ValueError(f"{op}: C/groups·KH·KW = {ksize} is more than this device runs in one "
                         "invocation")
    bv = bias_or_zero(bias, out.dtype)
    kern = _igemm_kernel(x.dtype, w.dtype, bv.dtype, out.dtype, cfg, bias is not None,
                         geo.transposed, channels_inner)
    sn, sc, sh, sw = out.element_strides
    for rows, cols in phases:
        part = view(out, (out.shape[0], out.shape[1], rows.count, cols.count),
                    (sn, sc, sh * rows.step, sw * cols.step),
                    out.offset + rows.first * sh + cols.first * sw)
        m = out.shape[0] * rows.count * cols.count
        grid = (cdiv(per_group_out, cfg.bn) * cfg.wgx, cdiv(m, cfg.bm) * cfg.wgy, geo.groups)
        kern[grid](x, w, bv, part, *geo.kernel_args(), *rows.kernel_args(),
                   *cols.kernel_args())


@pk.func
def split_reduction(gk, cg, kk, channels_inner):
    """(channel in the group, kernel tap) of reduction index gk: channels innermost when
    `channels_inner`, else taps innermost (the order of w's memory)."""
    if channels_inner:
        return gk % cg, gk // cg
    return gk // kk, gk % kk


@functools.lru_cache(maxsize=None)
def _igemm_kernel(x_dt: DType, w_dt: DType, b_dt: DType, o_dt: DType, cfg: linalg.TileConfig,
                  has_bias: bool, transposed: bool, channels_inner: bool) -> pk.Kernel:
    ACC = accumulator(o_dt)  # noqa: N806
    STEP = step_for(ACC)  # noqa: N806
    WGX, WGY, TM, TN, BK = cfg.wgx, cfg.wgy, cfg.tm, cfg.tn, cfg.bk  # noqa: N806
    BM, BN = cfg.bm, cfg.bn  # noqa: N806
    NT, LOADS_A, LOADS_B = cfg.threads, cfg.loads_a, cfg.loads_b  # noqa: N806
    HAS_BIAS, TRANSPOSED, CIN = has_bias, transposed, channels_inner  # noqa: N806
    SOURCE = transposed_source if transposed else forward_source  # noqa: N806

    @pk.func
    def tap_weight(w, g, gn, gk, CG, OG, KK, nkw, kh0, khs, kw0, kws):
        """Filter gn's weight at reduction index gk (its channel and tap) of group g."""
        ci, tap = split_reduction(gk, CG, KK, CIN)
        kh = kh0 + (tap // nkw) * khs
        kw = kw0 + (tap % nkw) * kws
        if TRANSPOSED:  # w is (C, O/groups, KH, KW)
            return ACC(w[g * CG + ci, gn, kh, kw])
        return ACC(w[g * OG + gn, ci, kh, kw])  # w is (O, C/groups, KH, KW)

    @pk.func
    def write_pixel(out, bias, acc, i, pn, oh, ow, o0, n, OG):
        """Row i of the invocation's block, output pixel (pn, oh, ow): its TN channels
        o0 + n + j·WGX that exist, plus the bias."""
        for j in range(TN):
            gn = n + j * WGX
            if gn < OG:
                v = acc[i, j]
                if HAS_BIAS:
                    v += ACC(bias[o0 + gn])
                out[pn, o0 + gn, oh, ow] = v

    # out is one output phase: its row oh is row oh0 + oh·ohs of the whole output, reached
    # through taps kh0 + j·khs, j < nkh (likewise for columns)
    @pk.kernel(workgroup=(WGX, WGY, 1))
    def conv2d_igemm(x: x_dt[:, :, :, :], w: w_dt[:, :, :, :], bias: b_dt[:],
                     out: o_dt[:, :, :, :], sh: int, sw: int, ph: int, pw: int, dh: int,
                     dw: int, groups: int, oh0: int, ohs: int, kh0: int, khs: int, nkh: int,
                     ow0: int, ows: int, kw0: int, kws: int, nkw: int):
        As = pk.shared(ACC, (BK, BM + 1))
        Bs = pk.shared(ACC, (BK, BN + 1))
        acc = pk.local(ACC, (TM, TN))
        av = pk.local(ACC, TM)
        bv = pk.local(ACC, TN)
        tx, ty, m0, n0 = tile_position(BM, BN)
        g = pk.group_id(2)
        tid = ty * WGX + tx
        H = x.shape[2]
        W = x.shape[3]
        OH = out.shape[2]
        OW = out.shape[3]
        CG = x.shape[1] // groups
        OG = out.shape[1] // groups
        M = out.shape[0] * OH * OW
        KK = nkh * nkw
        K = CG * KK
        for k0 in range(0, K, BK):
            for r in range(LOADS_A):
                e = tid + r * NT
                if e < BM * BK:
                    row = e % BM  # neighbouring invocations: neighbouring output pixels
                    kk = e // BM
                    if CIN:  # ... or neighbouring channels
                        row = e // BK
                        kk = e % BK
                    gm = m0 + row
                    gk = k0 + kk
                    va: ACC = 0
                    if gm < M and gk < K:
                        pn, oh, ow = pk.unravel(gm, (out.shape[0], OH, OW))
                        ci, tap = split_reduction(gk, CG, KK, CIN)
                        ih = SOURCE(oh0 + oh * ohs, kh0 + (tap // nkw) * khs, sh, ph, dh, H)
                        iw = SOURCE(ow0 + ow * ows, kw0 + (tap % nkw) * kws, sw, pw, dw, W)
                        if ih >= 0 and iw >= 0:
                            va = ACC(x[pn, g * CG + ci, ih, iw])
                    As[kk, row] = va
            for r in range(LOADS_B):
                e = tid + r * NT
                if e < BN * BK:
                    kb = e % BK
                    col = e // BK
                    gn = n0 + col
                    gk = k0 + kb
                    vb: ACC = 0
                    if gn < OG and gk < K:
                        vb = tap_weight(w, g, gn, gk, CG, OG, KK, nkw, kh0, khs, kw0, kws)
                    Bs[kb, col] = vb
            pk.barrier()
            multiply_tiles(As, Bs, acc, av, bv, tx, ty, WGX, WGY, STEP)
            pk.barrier()
        for i in range(TM):
            gm = m0 + ty + i * WGY
            if gm < M:
                pn, oh, ow = pk.unravel(gm, (out.shape[0], OH, OW))
                write_pixel(out, bias, acc, i, pn, oh, ow, g * OG, n0 + tx, OG)

    return conv2d_igemm
