"""Argument checking for `conv2d` and `conv_transpose2d`: the pairs of ints (stride, padding,
dilation, output_padding), the padding strings, the shapes that `groups` asks for, the output
size, and the channels-last layout test. Every check raises before anything is launched, with
the op's name and the argument's name in the message."""

from __future__ import annotations

from dataclasses import dataclass

from pykern.tensor.core.checks import check_dtype_in, check_int
from pykern.tensor.elementwise.functions import as_tensor
from pykern.tensor.core.promotion import NUMERIC
from pykern.tensor.core.tensor import Tensor

PADDING_STRINGS = ("valid", "same")


@dataclass(frozen=True)
class ConvGeometry:
    """Where each output pixel reads: `stride`, `padding` (the zeros before the first row and
    column; the far side follows from the output size), `dilation` as (height, width) pairs,
    `groups`, and `transposed` for conv_transpose2d (which scatters where conv2d gathers)."""

    stride: tuple[int, int]
    padding: tuple[int, int]
    dilation: tuple[int, int]
    groups: int
    transposed: bool

    def kernel_args(self) -> tuple[int, ...]:
        """The scalar arguments of the conv kernels: sh, sw, ph, pw, dh, dw, groups."""
        return (*self.stride, *self.padding, *self.dilation, self.groups)


def pair(v: object, op: str, what: str, minimum: int) -> tuple[int, int]:
    """An int or a pair of ints (a tuple or list of two) as (height, width)."""
    if isinstance(v, (tuple, list)):
        if len(v) != 2:
            raise ValueError(f"{op}: {what} must be an int or a pair of ints, got {v!r}")
        return check_int(v[0], op, what, minimum), check_int(v[1], op, what, minimum)
    n = check_int(v, op, what, minimum)
    return n, n


def conv_operands(x: object, w: object, op: str, w_layout: str) -> tuple[Tensor, Tensor]:
    """x and w as 4-d numeric tensors (`w_layout` names w's dimensions in the error)."""
    x, w = as_tensor(x, f"{op}: x"), as_tensor(w, f"{op}: w")
    check_dtype_in(x, NUMERIC, op, "x")
    check_dtype_in(w, NUMERIC, op, "w")
    if x.ndim != 4:
        raise ValueError(f"{op}: x must be 4-d (N, C, H, W), got shape {x.shape}")
    if w.ndim != 4:
        raise ValueError(f"{op}: w must be 4-d {w_layout}, got shape {w.shape}")
    if w.shape[2] == 0 or w.shape[3] == 0:
        raise ValueError(f"{op}: the kernel size must be at least 1x1, got w of shape "
                         f"{w.shape}")
    return x, w


def check_groups(groups: object, op: str, channels: int, outputs: int | None = None,
                 outputs_name: str = "") -> int:
    """`groups` as an int (>= 1) that divides `channels` (x's C) and, when given, `outputs`
    (named `outputs_name` in the error), as PyTorch requires."""
    g = check_int(groups, op, "groups", 1)
    if channels % g:
        raise ValueError(f"{op}: groups={g} must divide the {channels} input channels of x")
    if outputs is not None and outputs % g:
        raise ValueError(f"{op}: groups={g} must divide the {outputs} {outputs_name}")
    return g


def check_bias(bias: object, op: str, channels: int) -> Tensor | None:
    """The bias as a (channels,) numeric tensor, or None."""
    if bias is None:
        return None
    b = as_tensor(bias, f"{op}: bias")
    check_dtype_in(b, NUMERIC, op, "bias")
    if b.shape != (channels,):
        raise ValueError(f"{op}: bias must have shape ({channels},), got {b.shape}")
    return b


def conv_padding(padding: object, op: str, kernel: tuple[int, int], stride: tuple[int, int],
                 dilation: tuple[int, int]) -> tuple[tuple[int, int], tuple[int, int]]:
    """conv2d's padding as ((top, bottom), (left, right)): an int, a pair, or "valid" (none) or
    "same" (the output keeps the input's size: stride 1 only; an odd total puts the extra row
    or column at the bottom or right, as PyTorch)."""
    if isinstance(padding, str):
        if padding not in PADDING_STRINGS:
            raise ValueError(f"{op}: padding must be an int, a pair of ints, 'valid' or "
                             f"'same', got {padding!r}")
        if padding == "valid":
            return (0, 0), (0, 0)
        if stride != (1, 1):
            raise ValueError(f"{op}: padding='same' needs stride 1, got stride {stride}")
        sides = []
        for k, d in zip(kernel, dilation):
            total = d * (k - 1)
            sides.append((total // 2, total - total // 2))
        return sides[0], sides[1]
    ph, pw = pair(padding, op, "padding", 0)
    return (ph, ph), (pw, pw)


def conv_output_size(op: str, size: tuple[int, int], kernel: tuple[int, int],
                     stride: tuple[int, int], padding: tuple[tuple[int, int], tuple[int, int]],
                     dilation: tuple[int, int]) -> tuple[int, int]:
    """conv2d's (OH, OW); ValueError when the dilated kernel does not fit the padded input."""
    padded = [n + lo + hi for n, (lo, hi) in zip(size, padding)]
    span = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    if padded[0] < span[0] or padded[1] < span[1]:
        raise ValueError(f"{op}: the kernel ({kernel[0]}x{kernel[1]}, dilation "
                         f"{dilation[0]}x{dilation[1]}) is larger than the padded input "
                         f"({padded[0]}x{padded[1]})")
    return (padded[0] - span[0]) // stride[0] + 1, (padded[1] - span[1]) // stride[1] + 1


def transposed_output_size(op: str, size: tuple[int, int], kernel: tuple[int, int],
                           stride: tuple[int, int], padding: tuple[int, int],
                           output_padding: tuple[int, int], dilation: tuple[int, int]
                           ) -> tuple[int, int]:
    """conv_transpose2d's (OH, OW) = (H - 1)·s - 2p + d·(K - 1) + output_padding + 1;
    output_padding must be smaller than the stride or the dilation (PyTorch's rule: it picks
    one of the input sizes that a strided conv2d maps to the same output size)."""
    out = []
    for n, k, s, p, op_, d in zip(size, kernel, stride, padding, output_padding, dilation):
        if op_ >= s and op_ >= d:
            raise ValueError(f"{op}: output_padding {output_padding} must be smaller than the "
                             f"stride {stride} or the dilation {dilation}")
        out.append((n - 1) * s - 2 * p + d * (k - 1) + op_ + 1)
    if out[0] < 1 or out[1] < 1:
        raise ValueError(f"{op}: the output would be {out[0]}x{out[1]}; padding {padding} is "
                         f"too large for an input of {size[0]}x{size[1]}")
    return out[0], out[1]


def is_channels_last(t: Tensor) -> bool:
    """Whether the (N, C, H, W) tensor `t` keeps its channels adjacent in memory, as a
    channels-last (NHWC) tensor seen through `permute(0, 3, 1, 2)` does: C > 1 with stride 1
    and every other dimension of more than one element further apart than C elements. A
    tensor that is also row-major NCHW (H = W = 1) counts as NCHW."""
    n, c, h, w = t.shape
    sn, sc, sh, sw = t.element_strides
    if c <= 1 or sc != 1 or t.is_contiguous:
        return False
    return all(size <= 1 or abs(st) >= c for size, st in ((n, sn), (h, sh), (w, sw)))
