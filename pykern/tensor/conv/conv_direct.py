"""The portable conv kernel for groups with few output channels (depthwise convolutions): one
invocation per output element, summing over its group's input channels and the kernel taps.

With one or a few output channels per group, the implicit GEMM's tiles (64 output channels
wide) would be mostly empty columns; here every invocation does useful work, and its reads of
x repeat only across the few channels of a group, which the caches serve. Output elements are
numbered in the output's memory order, so neighbouring invocations write (and, for conv2d,
read) neighbouring elements in NCHW and in channels-last layouts alike.
"""

import functools

import pykern as pk

from pykern.lang.dtypes import DType
from pykern.tensor.conv.conv_args import ConvGeometry
from pykern.tensor.conv.conv_taps import bias_or_zero, forward_source, transposed_source
from pykern.tensor.core.device_limits import loop_budget
from pykern.tensor.gemm.gemm_tile import step_for
from pykern.tensor.core.promotion import accumulator
from pykern.tensor.core.tensor import Tensor

WORKGROUP = 64
# up to this many output channels per group: this kernel. On lavapipe (8×64×28×28, 3×3,
# as many input as output channels per group) it takes 0.1 / 0.2 / 0.5 / 1.0 of the implicit
# GEMM's time at 2 / 4 / 8 / 16; a GPU's GEMM tiles are 64 channels wide, so 8 fills an eighth
MAX_OUTPUTS_PER_GROUP = 8


def direct_fits(x: Tensor, w: Tensor, out: Tensor, geo: ConvGeometry) -> bool:
    """Whether this kernel suits the problem: few output channels per group, and a reduction
    that an invocation of this device can walk on its own (its loops, all of them counted)."""
    if out.shape[1] // geo.groups > MAX_OUTPUTS_PER_GROUP:
        return False
    budget = loop_budget()
    kh, kw = w.shape[2:]
    # each loop's last, failing test counts too: channels, then rows per channel, then
    # columns per row
    iterations = x.shape[1] // geo.groups * (kh * kw + 2 * kh + 2) + 1
    return budget is None or iterations <= budget


def launch_direct(x: Tensor, w: Tensor, bias: Tensor | None, out: Tensor, geo: ConvGeometry,
                  channels_last: bool) -> None:
    """out = conv(x, w) + bias, one invocation per output element (in NHWC order when
    `channels_last`)."""
    bv = bias_or_zero(bias, out.dtype)
    kern = _direct_kernel(x.dtype, w.dtype, bv.dtype, out.dtype, bias is not None,
                          geo.transposed, channels_last)
    kern[out.size](x, w, bv, out, *geo.kernel_args())


@functools.lru_cache(maxsize=None)
def _direct_kernel(x_dt: DType, w_dt: DType, b_dt: DType, o_dt: DType, has_bias: bool,
                   transposed: bool, channels_last: bool) -> pk.Kernel:
    ACC = accumulator(o_dt)  # noqa: N806
    STEP = step_for(ACC)  # noqa: N806
    HAS_BIAS, TRANSPOSED, CL = has_bias, transposed, channels_last  # noqa: N806
    SOURCE = transposed_source if transposed else forward_source  # noqa: N806

    @pk.kernel(workgroup=(WORKGROUP, 1, 1))
    def conv2d_direct(x: x_dt[:, :, :, :], w: w_dt[:, :, :, :], bias: b_dt[:],
                      out: o_dt[:, :, :, :], sh: int, sw: int, ph: int, pw: int, dh: int,
                      dw: int, groups: int):
        i = pk.global_id(0)
        pn, oc, oh, ow = pk.unravel(i, out.shape)
        if CL:
            pn, oh, ow, oc = pk.unravel(i, (out.shape[0], out.shape[2], out.shape[3],
                                            out.shape[1]))
        CG = x.shape[1] // groups
        OG = out.shape[1] // groups
        g = oc // OG
        o = oc % OG
        acc: ACC = 0
        for ci in range(CG):
            c = g * CG + ci
            for kh in range(w.shape[2]):
                ih = SOURCE(oh, kh, sh, ph, dh, x.shape[2])
                if ih >= 0:
                    for kw in range(w.shape[3]):
                        iw = SOURCE(ow, kw, sw, pw, dw, x.shape[3])
                        if iw >= 0:
                            if TRANSPOSED:  # w is (C, O/groups, KH, KW)
                                wv = ACC(w[c, o, kh, kw])
                            else:  # w is (O, C/groups, KH, KW)
                                wv = ACC(w[oc, ci, kh, kw])
                            acc = STEP(ACC(x[pn, c, ih, iw]), wv, acc)
        if HAS_BIAS:
            acc += ACC(bias[oc])
        out[pn, oc, oh, ow] = acc

    return conv2d_direct
