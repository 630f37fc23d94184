"""2-D pooling with PyTorch's semantics and argument names: `max_pool2d` (with dilation and
`return_indices`), `avg_pool2d` (`count_include_pad`, `divisor_override`),
`adaptive_avg_pool2d`; all with `ceil_mode` where PyTorch has it, and their backward.

Inputs are (N, C, H, W) or unbatched (C, H, W) float tensors of any strides; results are
row-major (N, C, OH, OW) in the input's dtype. The kernels are in `pool_kernels`; under grad
each op records a backward that runs the matching gather kernel (max pooling reads the
indices its forward saved).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pykern.autograd.graph import needs_grad, record
from pykern.ops.public import declare, torch_names
from pykern.autograd.mode import no_grad
from pykern.lang import dtypes as dt
from pykern.tensor.conv import pool_kernels as kernels
from pykern.tensor.core.checks import check_dtype_in, check_int
from pykern.tensor.conv.conv_args import pair
from pykern.tensor.elementwise.functions import as_tensor
from pykern.tensor.core.promotion import FLOATS
from pykern.tensor.reduce.reduction import mean
from pykern.tensor.core.tensor import Tensor, empty

PairArg = int | tuple[int, int]


def max_pool2d(x: object, kernel_size: PairArg, stride: PairArg | None = None,
               padding: PairArg = 0, dilation: PairArg = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """The largest element of each kernel_size window, windows `stride` apart (default:
    kernel_size), the input padded by `padding` (-inf: never chosen; at most half the
    kernel) and the window's elements `dilation` apart. `ceil_mode` rounds the output size
    up (the last window may then hang over the padded input). With `return_indices`, also
    the i64 index (ih·W + iw) of each maximum in its input plane, as PyTorch.

        y = pk.nn.functional.max_pool2d(x, 2)   # halves H and W
    """
    op = "max_pool2d"
    x4, batched = _as_4d(x, op)
    k = pair(kernel_size, op, "kernel_size", 1)
    s = k if stride is None or stride == [] else pair(stride, op, "stride", 1)
    p = pair(padding, op, "padding", 0)
    d = pair(dilation, op, "dilation", 1)
    _check_padding(p, k, op)
    oh, ow = (_output_size(x4.shape[2 + i], k[i], s[i], p[i], d[i], ceil_mode, op)
              for i in (0, 1))
    geometry = (*k, *s, *p, *d)
    out = empty((x4.shape[0], x4.shape[1], oh, ow), x4.dtype)
    indices = empty(out.shape, dt.i64)
    if out.size:
        kernels.max_pool_forward(x4.dtype)[out.size](x4, out, indices, *geometry)
    if needs_grad(x4):
        def back(g: Tensor) -> tuple[Tensor]:
            kern = kernels.max_pool_backward(g.dtype, x4.dtype)
            return (_input_grad(x4, lambda gx: kern[gx.size](g, indices, gx, *geometry)),)

        out = record(op, out, (x4,), back, saved=(indices,))
    out, indices = _unbatch(out, batched), _unbatch(indices, batched)
    return (out, indices) if return_indices else out


def avg_pool2d(x: object, kernel_size: PairArg, stride: PairArg | None = None,
               padding: PairArg = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each kernel_size window, windows `stride` apart (default: kernel_size),
    the input padded with zeros by `padding` (at most half the kernel). The divisor is the
    window's size within the padded input (`count_include_pad`, the default) or within the
    input itself, or `divisor_override` when given. `ceil_mode` as max_pool2d's."""
    op = "avg_pool2d"
    x4, batched = _as_4d(x, op)
    k = pair(kernel_size, op, "kernel_size", 1)
    s = k if stride is None or stride == [] else pair(stride, op, "stride", 1)
    p = pair(padding, op, "padding", 0)
    _check_padding(p, k, op)
    divisor = 0 if divisor_override is None else check_int(divisor_override, op,
                                                           "divisor_override", 1)
    oh, ow = (_output_size(x4.shape[2 + i], k[i], s[i], p[i], 1, ceil_mode, op)
              for i in (0, 1))
    geometry = (*k, *s, *p, int(bool(count_include_pad)), divisor)
    out = empty((x4.shape[0], x4.shape[1], oh, ow), x4.dtype)
    if out.size:
        kernels.avg_pool_forward(x4.dtype)[out.size](x4, out, *geometry)
    if needs_grad(x4):
        def back(g: Tensor) -> tuple[Tensor]:
            kern = kernels.avg_pool_backward(g.dtype, x4.dtype)
            return (_input_grad(x4, lambda gx: kern[gx.size](g, gx, *geometry)),)

        out = record(op, out, (x4,), back, saved=())
    return _unbatch(out, batched)


def adaptive_avg_pool2d(x: object, output_size: int | None | tuple[int | None, int | None]
                        ) -> Tensor:
    """The mean over windows chosen so that the output is `output_size` (an int for a square
    output, or (OH, OW), None keeping the input's size): window o spans the input rows
    floor(o·H/OH) to ceil((o + 1)·H/OH) - 1, as PyTorch's. Where OH divides H and OW divides
    W (global pooling, say) the windows are equal and this is a mean over reshaped axes.

        features = pk.nn.functional.adaptive_avg_pool2d(x, 1)   # global average pooling
    """
    op = "adaptive_avg_pool2d"
    x4, batched = _as_4d(x, op)
    sizes = output_size if isinstance(output_size, (tuple, list)) else (output_size,) * 2
    if len(sizes) != 2:
        raise ValueError(f"{op}: output_size must be an int or a pair, got {output_size!r}")
    oh, ow = (x4.shape[2 + i] if sizes[i] is None else
              check_int(sizes[i], op, "output_size", 0) for i in (0, 1))
    if (x4.shape[2] == 0 or x4.shape[3] == 0) and oh * ow:
        raise ValueError(f"{op}: the input's H and W must be non-zero, got shape {x4.shape}")
    n, c, h, w = x4.shape
    if oh and ow and h % oh == 0 and w % ow == 0 and x4.size:
        # equal windows (global pooling among them): a mean over reshaped axes, which the
        # reduction kernels split however large the windows are
        return _unbatch(mean(x4.reshape(n, c, oh, h // oh, ow, w // ow), axis=(3, 5)), batched)
    out = empty((n, c, oh, ow), x4.dtype)
    if out.size:
        kernels.adaptive_avg_forward(x4.dtype)[out.size](x4, out)
    if needs_grad(x4):
        def back(g: Tensor) -> tuple[Tensor]:
            kern = kernels.adaptive_avg_backward(g.dtype, x4.dtype)
            return (_input_grad(x4, lambda gx: kern[gx.size](g, gx)),)

        out = record(op, out, (x4,), back, saved=())
    return _unbatch(out, batched)


max_pool2d = declare(max_pool2d, "pool", grad="inline", exports=("nn.functional",),
                     aliases=torch_names("nn.functional.max_pool2d", "aten::max_pool2d",
                                         "aten::max_pool2d_with_indices"))
avg_pool2d = declare(avg_pool2d, "pool", grad="inline", exports=("nn.functional",),
                     aliases=torch_names("nn.functional.avg_pool2d", "aten::avg_pool2d"))
adaptive_avg_pool2d = declare(adaptive_avg_pool2d, "pool", grad="inline",
                              exports=("nn.functional",),
                              aliases=torch_names("nn.functional.adaptive_avg_pool2d",
                                                  "aten::adaptive_avg_pool2d",
                                                  "aten::_adaptive_avg_pool2d"))


# ---------------------------------------------------------------- helpers


def _as_4d(x: object, op: str) -> tuple[Tensor, bool]:
    """x as an (N, C, H, W) float tensor, and whether it had its batch dimension."""
    t = as_tensor(x, f"{op}: input")
    check_dtype_in(t, FLOATS, op, "input")
    if t.ndim not in (3, 4):
        raise ValueError(f"{op}: input must be 3-d (C, H, W) or 4-d (N, C, H, W), got shape "
                         f"{t.shape}")
    return (t, True) if t.ndim == 4 else (t.unsqueeze(0), False)


def _unbatch(t: Tensor, batched: bool) -> Tensor:
    return t if batched else t.squeeze(0)


def _check_padding(padding: tuple[int, int], kernel: tuple[int, int], op: str) -> None:
    if padding[0] > kernel[0] // 2 or padding[1] > kernel[1] // 2:
        raise ValueError(f"{op}: padding {padding} must be at most half of kernel_size "
                         f"{kernel}")


def _output_size(size: int, kernel: int, stride: int, padding: int, dilation: int,
                 ceil_mode: bool, op: str) -> int:
    """PyTorch's pooling output size; with ceil_mode the last window must still start inside
    the input or its left padding."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    out = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    if out < 1:
        raise ValueError(f"{op}: the output would be empty (input size {size}, kernel "
                         f"{kernel}, stride {stride}, padding {padding}, dilation {dilation})")
    return out


def _input_grad(x: Tensor, launch: Callable[[Tensor], Any]) -> Tensor:
    """The gradient of `x`, written by `launch(gx)`: one invocation of a backward kernel per
    element of x."""
    with no_grad():
        gx = empty(x.shape, x.dtype)
        if gx.size:
            launch(gx)
    return gx
