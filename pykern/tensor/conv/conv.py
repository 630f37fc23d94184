"""Convolutions: `pk.conv2d` and `pk.conv_transpose2d`, with PyTorch's semantics and argument
names (groups, dilation, "same"/"valid" padding for conv2d, output_padding for the transposed
one).

Each entry point checks its arguments and allocates the output here; `_launch` then picks the
kernel. Today those are portable, for every device: the implicit GEMM of conv_igemm, and the
one-output-per-invocation kernel of conv_direct for groups with few output channels. A kernel
for a device feature (cooperative matrices) goes into `_launch` ahead of them, with the
portable ones as the fallback, and needs no change to the entry points.

Layout: x may have any strides. An x that keeps its channels adjacent in memory (channels-last,
as `x_nhwc.permute(0, 3, 1, 2)` gives) is read in place, and the output is then channels-last
too (PyTorch does the same), so a network kept in NHWC stays in NHWC.
"""

from __future__ import annotations

from pykern.ops.public import declare, torch_names
from pykern.tensor.conv import conv_backward
from pykern.tensor.core.autocast import low_precision
from pykern.tensor.conv.conv_args import (ConvGeometry, check_bias, check_groups, conv_operands,
                                     conv_output_size, conv_padding, is_channels_last, pair,
                                     transposed_output_size)
from pykern.tensor.conv.conv_coop import coop_conv2d
from pykern.tensor.conv.conv_direct import direct_fits, launch_direct
from pykern.tensor.conv.conv_igemm import launch_igemm
from pykern.tensor.create.creation import fill
from pykern.tensor.elementwise.functions import assign
from pykern.tensor.core.promotion import promote
from pykern.tensor.core.strided import view
from pykern.tensor.core.tensor import Tensor, empty

PairArg = int | tuple[int, int]


def conv2d(x: object, w: object, bias: object = None, stride: PairArg = 1,
           padding: PairArg | str = 0, dilation: PairArg = 1, groups: int = 1) -> Tensor:
    """2-D cross-correlation, as PyTorch's `conv2d`: x of shape (N, C, H, W), w of
    (O, C/groups, KH, KW), optional bias (O,). The result is (N, O, OH, OW) with
    OH = (H + pad_top + pad_bottom - dh·(KH - 1) - 1) // sh + 1 (likewise OW), in the promoted
    dtype of x and w (bias is converted to it).

    `stride`, `dilation` and `padding` are an int or an (h, w) pair; `padding` may also be
    "valid" (no padding) or "same" (output as large as the input; stride 1 only; an odd total
    pads one more at the bottom/right). `groups` splits the C input and O output channels into
    that many groups convolved separately (both divisible by it); groups == C is a depthwise
    convolution. Every numeric dtype; f16 accumulates in f32, narrow integers in 32 bits
    (wrapping). A channels-last x gives a channels-last result.

        y = pk.conv2d(images, filters, bias, stride=2, padding=1)
        y = pk.conv2d(x, w_depthwise, padding="same", groups=x.shape[1])
    """
    low = low_precision(x, w)
    if low is not None:  # pk.autocast: 16-bit operands and result
        return conv2d(low[0], low[1], bias, stride, padding, dilation, groups)
    op = "conv2d"
    x, w = conv_operands(x, w, op, "(O, C/groups, KH, KW)")
    c, o = x.shape[1], w.shape[0]
    g = check_groups(groups, op, c, o, "output channels (w.shape[0])")
    if w.shape[1] * g != c:
        raise ValueError(f"{op}: x has {c} channels but w expects {w.shape[1] * g} "
                         f"(w.shape[1] = {w.shape[1]} per group, groups={g}; shapes "
                         f"{x.shape}, {w.shape})")
    b = check_bias(bias, op, o)
    stride_ = pair(stride, op, "stride", 1)
    dilation_ = pair(dilation, op, "dilation", 1)
    pads = conv_padding(padding, op, w.shape[2:], stride_, dilation_)
    oh, ow = conv_output_size(op, x.shape[2:], w.shape[2:], stride_, pads, dilation_)
    geo = ConvGeometry(stride_, (pads[0][0], pads[1][0]), dilation_, g, transposed=False)
    return _run(x, w, b, (x.shape[0], o, oh, ow), geo, op)


def conv_transpose2d(x: object, w: object, bias: object = None, stride: PairArg = 1,
                     padding: PairArg = 0, output_padding: PairArg = 0, groups: int = 1,
                     dilation: PairArg = 1) -> Tensor:
    """The transposed convolution, as PyTorch's `conv_transpose2d` (the gradient of conv2d with
    respect to its input; a "deconvolution"): x of shape (N, C, H, W), w of
    (C, O/groups, KH, KW), optional bias (O,). The result is (N, O, OH, OW) with
    OH = (H - 1)·sh - 2·ph + dh·(KH - 1) + output_padding_h + 1 (likewise OW).

    `padding` removes that many rows and columns from each border of the full result;
    `output_padding` (smaller than the stride or the dilation) adds rows and columns at the
    bottom and right, to pick among the input sizes that a strided conv2d maps to x's size.
    Groups, dtypes and layouts as conv2d.

        up = pk.conv_transpose2d(features, filters, stride=2, padding=1, output_padding=1)
    """
    low = low_precision(x, w)
    if low is not None:  # pk.autocast
        return conv_transpose2d(low[0], low[1], bias, stride, padding, output_padding, groups,
                                dilation)
    op = "conv_transpose2d"
    x, w = conv_operands(x, w, op, "(C, O/groups, KH, KW)")
    c = x.shape[1]
    if w.shape[0] != c:
        raise ValueError(f"{op}: x has {c} channels but w has {w.shape[0]} (w is (C, O/groups, "
                         f"KH, KW); shapes {x.shape}, {w.shape})")
    g = check_groups(groups, op, c)
    o = w.shape[1] * g
    b = check_bias(bias, op, o)
    if isinstance(padding, str):
        raise TypeError(f"{op}: padding must be an int or a pair of ints (no padding strings, "
                        f"as PyTorch), got {padding!r}")
    stride_ = pair(stride, op, "stride", 1)
    padding_ = pair(padding, op, "padding", 0)
    output_padding_ = pair(output_padding, op, "output_padding", 0)
    dilation_ = pair(dilation, op, "dilation", 1)
    oh, ow = transposed_output_size(op, x.shape[2:], w.shape[2:], stride_, padding_,
                                    output_padding_, dilation_)
    geo = ConvGeometry(stride_, padding_, dilation_, g, transposed=True)
    return _run(x, w, b, (x.shape[0], o, oh, ow), geo, op)


conv2d = declare(conv2d, "conv", grad="rule", backward=conv_backward.conv2d, autocast="lower",
                 aliases=torch_names("nn.functional.conv2d", "aten::conv2d",
                                     "aten::convolution"))
conv_transpose2d = declare(conv_transpose2d, "conv", grad="rule",
                           backward=conv_backward.conv_transpose2d, autocast="lower",
                           aliases=torch_names("nn.functional.conv_transpose2d",
                                               "aten::conv_transpose2d.input"))


def _run(x: Tensor, w: Tensor, b: Tensor | None, shape: tuple[int, int, int, int],
         geo: ConvGeometry, op: str) -> Tensor:
    """Allocates the output (channels-last when x is) and fills it."""
    out = _allocate(shape, promote(x.dtype, w.dtype), is_channels_last(x))
    if out.size == 0:
        return out
    if x.shape[1] == 0 or x.shape[2] * x.shape[3] == 0:  # nothing to reduce: the bias alone
        if b is None:
            fill(out, 0)
        else:
            assign(out, view(b, out.shape, (0, b.element_strides[0], 0, 0)))
        return out
    _launch(x, w, b, out, geo, op)
    return out


def _allocate(shape: tuple[int, int, int, int], dtype: object, channels_last: bool) -> Tensor:
    """An (N, C, H, W) tensor, in NHWC memory when `channels_last`."""
    if not channels_last:
        return empty(shape, dtype)
    n, c, h, w = shape
    return empty((n, h, w, c), dtype).permute(0, 3, 1, 2)


def _launch(x: Tensor, w: Tensor, b: Tensor | None, out: Tensor, geo: ConvGeometry,
            op: str) -> None:
    """The kernel choice. Portable kernels, on every device: one invocation per output for
    groups of a few output channels (depthwise), else the implicit GEMM; ahead of them, on a
    device with cooperative matrices, the implicit GEMM on tiles (f16/bf16 conv2d, groups 1),
    whose bias is added after it."""
    if not geo.transposed and geo.groups == 1 and \
            coop_conv2d(x, w, out, geo.stride, geo.padding, geo.dilation):
        if b is not None:
            assign(out, out + view(b, out.shape, (0, b.element_strides[0], 0, 0), b.offset))
        return
    channels_last = is_channels_last(x)
    if direct_fits(x, w, out, geo):
        launch_direct(x, w, b, out, geo, channels_last)
    else:
        launch_igemm(x, w, b, out, geo, channels_inner=channels_last, op=op)
