"""The kernels of the 2-D pooling ops (`pykern.tensor.conv.pool`): one invocation per output
element forward, one per input element backward.

Every kernel takes (N, C, H, W) arrays of any strides and walks one window. The backward
kernels gather: input element (ih, iw) finds the windows that hold it (at most KH·KW of
them; for the adaptive pool, the few whose ranges cover it) and sums their gradients, so no
two invocations write the same element and no atomics are needed. Sums run in the compute
dtype (f32 for f16/bf16, else the dtype itself).

Geometry as PyTorch's: window (oh, ow) starts at (oh·sh - ph, ow·sw - pw); max pooling
steps through it by the dilation and skips the padding; average pooling clips the window to
the padded input [-p, H + p) for its divisor when padding counts (count_include_pad), and
to the input itself for the sum and for the divisor when it does not.
"""

import functools
import math

import pykern as pk

from pykern.lang.dtypes import DType
from pykern.tensor.core.promotion import compute_float

WORKGROUP = 64


@functools.lru_cache(maxsize=None)
def max_pool_forward(x_dt: DType) -> pk.Kernel:
    """out = the largest element of each window, idx = its flat index ih·W + iw in the input
    plane; a NaN wins (the last one, as in PyTorch), ties keep the first."""

    @pk.kernel(workgroup=(WORKGROUP, 1, 1))
    def max_pool2d_forward(x: x_dt[:, :, :, :], out: x_dt[:, :, :, :], idx: pk.i64[:, :, :, :],
                           kh: int, kw: int, sh: int, sw: int, ph: int, pw: int, dh: int,
                           dw: int):
        i = pk.global_id(0)
        n, c, oh, ow = pk.unravel(i, out.shape)
        h0 = oh * sh - ph
        w0 = ow * sw - pw
        best: x_dt = -math.inf
        at: pk.i64 = -1
        for a in range(kh):
            ih = h0 + a * dh
            if ih >= 0 and ih < x.shape[2]:
                for b in range(kw):
                    iw = w0 + b * dw
                    if iw >= 0 and iw < x.shape[3]:
                        v = x[n, c, ih, iw]
                        here = pk.i64(ih) * x.shape[3] + iw
                        if at < 0:
                            at = here  # the first element: kept when all are -inf
                        if v > best or pk.isnan(v):
                            best = v
                            at = here
        out[n, c, oh, ow] = best
        idx[n, c, oh, ow] = at

    return max_pool2d_forward


@functools.lru_cache(maxsize=None)
def max_pool_backward(g_dt: DType, o_dt: DType) -> pk.Kernel:
    """gx[ih, iw] = the sum of g over the windows whose maximum was (ih, iw), in the order of
    the windows (as PyTorch accumulates them)."""
    CF = compute_float(o_dt)  # noqa: N806

    @pk.kernel(workgroup=(WORKGROUP, 1, 1))
    def max_pool2d_backward(g: g_dt[:, :, :, :], idx: pk.i64[:, :, :, :],
                            gx: o_dt[:, :, :, :], kh: int, kw: int, sh: int, sw: int, ph: int,
                            pw: int, dh: int, dw: int):
        i = pk.global_id(0)
        n, c, ih, iw = pk.unravel(i, gx.shape)
        me = pk.i64(ih) * gx.shape[3] + iw
        acc: CF = 0.0
        for ka in range(kh):
            t = ih + ph - (kh - 1 - ka) * dh  # windows in increasing oh
            if t >= 0 and t % sh == 0 and t // sh < g.shape[2]:
                oh = t // sh
                for kb in range(kw):
                    u = iw + pw - (kw - 1 - kb) * dw
                    if u >= 0 and u % sw == 0 and u // sw < g.shape[3]:
                        ow = u // sw
                        if idx[n, c, oh, ow] == me:
                            acc += CF(g[n, c, oh, ow])
        gx[n, c, ih, iw] = acc

    return max_pool2d_backward


@pk.func
def avg_divisor(oh, ow, kh, kw, sh, sw, ph, pw, height, width, include_pad, divisor):
    """The divisor of window (oh, ow): `divisor` when it is not 0, else its size clipped to
    the padded input (include_pad) or to the input."""
    h0 = oh * sh - ph
    w0 = ow * sw - pw
    h1 = min(h0 + kh, height + ph)
    w1 = min(w0 + kw, width + pw)
    size = (h1 - h0) * (w1 - w0)
    if include_pad == 0:
        size = (min(h1, height) - max(h0, 0)) * (min(w1, width) - max(w0, 0))
    if divisor != 0:
        size = divisor
    return size


@functools.lru_cache(maxsize=None)
def avg_pool_forward(x_dt: DType) -> pk.Kernel:
    """out = the sum over each window's elements inside the input / its divisor."""
    CF = compute_float(x_dt)  # noqa: N806

    @pk.kernel(workgroup=(WORKGROUP, 1, 1))
    def avg_pool2d_forward(x: x_dt[:, :, :, :], out: x_dt[:, :, :, :], kh: int, kw: int,
                           sh: int, sw: int, ph: int, pw: int, include_pad: int, divisor: int):
        i = pk.global_id(0)
        n, c, oh, ow = pk.unravel(i, out.shape)
        h0 = oh * sh - ph
        w0 = ow * sw - pw
        acc: CF = 0.0
        for ih in range(max(h0, 0), min(h0 + kh, x.shape[2])):
            for iw in range(max(w0, 0), min(w0 + kw, x.shape[3])):
                acc += CF(x[n, c, ih, iw])
        size = avg_divisor(oh, ow, kh, kw, sh, sw, ph, pw, x.shape[2], x.shape[3],
                           include_pad, divisor)
        out[n, c, oh, ow] = acc / CF(size)

    return avg_pool2d_forward


@functools.lru_cache(maxsize=None)
def avg_pool_backward(g_dt: DType, o_dt: DType) -> pk.Kernel:
    """gx[ih, iw] = the sum of g / divisor over the windows that hold (ih, iw)."""
    CF = compute_float(o_dt)  # noqa: N806

    @pk.kernel(workgroup=(WORKGROUP, 1, 1))
    def avg_pool2d_backward(g: g_dt[:, :, :, :], gx: o_dt[:, :, :, :], kh: int, kw: int,
                            sh: int, sw: int, ph: int, pw: int, include_pad: int,
                            divisor: int):
        i = pk.global_id(0)
        n, c, ih, iw = pk.unravel(i, gx.shape)
        acc: CF = 0.0
        for ka in range(kh):
            t = ih + ph - (kh - 1 - ka)
            if t >= 0 and t % sh == 0 and t // sh < g.shape[2]:
                oh = t // sh
                for kb in range(kw):
                    u = iw + pw - (kw - 1 - kb)
                    if u >= 0 and u % sw == 0 and u // sw < g.shape[3]:
                        ow = u // sw
                        size = avg_divisor(oh, ow, kh, kw, sh, sw, ph, pw, gx.shape[2],
                                           gx.shape[3], include_pad, divisor)
                        acc += CF(g[n, c, oh, ow]) / CF(size)
        gx[n, c, ih, iw] = acc

    return avg_pool2d_backward


@pk.func
def adaptive_start(o, size, out_size):
    """The first input index of adaptive window o: floor(o · size / out_size)."""
    return (o * size) // out_size


@pk.func
def adaptive_end(o, size, out_size):
    """One past the last input index of adaptive window o: ceil((o + 1) · size / out_size)."""
    return ((o + 1) * size + out_size - 1) // out_size


@functools.lru_cache(maxsize=None)
def adaptive_avg_forward(x_dt: DType) -> pk.Kernel:
    """out = the mean of each adaptive window (PyTorch's: floor and ceil of o·H/OH)."""
    CF = compute_float(x_dt)  # noqa: N806

    @pk.kernel(workgroup=(WORKGROUP, 1, 1))
    def adaptive_avg_pool2d_forward(x: x_dt[:, :, :, :], out: x_dt[:, :, :, :]):
        i = pk.global_id(0)
        n, c, oh, ow = pk.unravel(i, out.shape)
        h0 = adaptive_start(oh, x.shape[2], out.shape[2])
        h1 = adaptive_end(oh, x.shape[2], out.shape[2])
        w0 = adaptive_start(ow, x.shape[3], out.shape[3])
        w1 = adaptive_end(ow, x.shape[3], out.shape[3])
        acc: CF = 0.0
        for ih in range(h0, h1):
            for iw in range(w0, w1):
                acc += CF(x[n, c, ih, iw])
        out[n, c, oh, ow] = acc / CF((h1 - h0) * (w1 - w0))

    return adaptive_avg_pool2d_forward


@functools.lru_cache(maxsize=None)
def adaptive_avg_backward(g_dt: DType, o_dt: DType) -> pk.Kernel:
    """gx[ih, iw] = the sum of g / window size over the adaptive windows that hold (ih, iw):
    those from floor(ih·OH/H) to ceil((ih + 1)·OH/H) - 1 (each one checked)."""
    CF = compute_float(o_dt)  # noqa: N806

    @pk.kernel(workgroup=(WORKGROUP, 1, 1))
    def adaptive_avg_pool2d_backward(g: g_dt[:, :, :, :], gx: o_dt[:, :, :, :]):
        i = pk.global_id(0)
        n, c, ih, iw = pk.unravel(i, gx.shape)
        height = gx.shape[2]
        width = gx.shape[3]
        oh_n = g.shape[2]
        ow_n = g.shape[3]
        acc: CF = 0.0
        for oh in range((ih * oh_n) // height, min(oh_n, ((ih + 1) * oh_n + height - 1) // height)):
            h0 = adaptive_start(oh, height, oh_n)
            h1 = adaptive_end(oh, height, oh_n)
            if h0 <= ih and ih < h1:
                for ow in range((iw * ow_n) // width,
                                min(ow_n, ((iw + 1) * ow_n + width - 1) // width)):
                    w0 = adaptive_start(ow, width, ow_n)
                    w1 = adaptive_end(ow, width, ow_n)
                    if w0 <= iw and iw < w1:
                        acc += CF(g[n, c, oh, ow]) / CF((h1 - h0) * (w1 - w0))
        gx[n, c, ih, iw] = acc

    return adaptive_avg_pool2d_backward
