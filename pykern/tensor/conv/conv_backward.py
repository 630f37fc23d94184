"""Backward of `conv2d` and `conv_transpose2d`, each made of the other and of itself.

For conv2d(x, w) with stride s, padding p, dilation d and groups G:
- x's gradient is conv_transpose2d(g, w) with the same s, p, d and G (an output_padding
  recovers the input rows the strided forward never reached);
- w's is the correlation of x with g: a conv2d whose batch is the channels of one group,
  whose input channels are (group, image) pairs and whose filters are g, with stride and
  dilation exchanged, grouped by G so that each group only meets its own channels;
- the bias's is g summed over the images and the pixels.
conv_transpose2d(x, w) is conv2d's adjoint, so x's gradient is a conv2d of g with w, and w's
the correlation of g with x, arranged likewise. Padding that differs between two borders
(padding="same" with an even kernel) is applied first as a differentiable concat of zeros.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pykern as pk
from pykern.autograd.graph import record
from pykern.autograd.mode import no_grad
from pykern.tensor.core.autocast import low_precision
from pykern.tensor.conv.conv_args import conv_operands, conv_padding, pair


def _wants(t: Any) -> bool:
    return bool(getattr(t, "requires_grad", False))


def conv2d(fused: Any, x: Any, w: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Any:
    """conv2d recorded; `fused(x, w, bias, stride, padding, dilation, groups)` is the forward
    kernel call. Under `pk.autocast` on the 16-bit operands (the casts are recorded)."""
    low = low_precision(x, w)
    if low is not None:
        x, w = low
    x, w = conv_operands(x, w, "conv2d", "(O, C/groups, KH, KW)")
    s, d = pair(stride, "conv2d", "stride", 1), pair(dilation, "conv2d", "dilation", 1)
    k = (w.shape[2], w.shape[3])
    (top, bottom), (left, right) = conv_padding(padding, "conv2d", k, s, d)
    if top != bottom or left != right:
        x = _zero_pad(x, (top, bottom), (left, right))
        top = left = 0
    p = (top, left)
    with no_grad():
        out = fused(x, w, bias, s, p, d, groups)

    def input_grad(g: Any) -> Any:
        extra = tuple(x.shape[2 + i] - ((out.shape[2 + i] - 1) * s[i] - 2 * p[i]
                                        + d[i] * (k[i] - 1) + 1) for i in (0, 1))
        return pk.conv_transpose2d(g, w, stride=s, padding=p, output_padding=extra,
                                   dilation=d, groups=groups)

    return _recorded("conv2d", out, x, w, bias, input_grad,
                     lambda g: _correlate(x, g, groups, s, p, d, k))


def conv_transpose2d(fused: Any, x: Any, w: Any, bias: Any = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                     dilation: Any = 1) -> Any:
    """conv_transpose2d recorded; `fused(x, w, bias, stride, padding, output_padding, groups,
    dilation)` is the forward kernel call. Under `pk.autocast` on the 16-bit operands."""
    low = low_precision(x, w)
    if low is not None:
        x, w = low
    x, w = conv_operands(x, w, "conv_transpose2d", "(C, O/groups, KH, KW)")
    with no_grad():
        out = fused(x, w, bias, stride, padding, output_padding, groups, dilation)
    op = "conv_transpose2d"
    s, p = pair(stride, op, "stride", 1), pair(padding, op, "padding", 0)
    d = pair(dilation, op, "dilation", 1)
    k = (w.shape[2], w.shape[3])

    def input_grad(g: Any) -> Any:
        # an output_padding >= the stride gives this conv2d rows past x's: cut them
        gx = pk.conv2d(g, w, stride=s, padding=p, dilation=d, groups=groups)
        return gx[:, :, :x.shape[2], :x.shape[3]]

    return _recorded("conv_transpose2d", out, x, w, bias, input_grad,
                     lambda g: _correlate(g, x, groups, s, p, d, k))


def _recorded(op: str, out: Any, x: Any, w: Any, bias: Any, input_grad: Callable[[Any], Any],
              weight_grad: Callable[[Any], Any]) -> Any:
    """`out` recorded as `op` of (x, w, bias): the gradient of the output `g` gives
    input_grad(g), weight_grad(g) and the bias's sum over batch and space, each where wanted."""
    def back(g: Any) -> tuple[Any, Any, Any]:
        gx = input_grad(g) if _wants(x) else None
        gw = weight_grad(g) if _wants(w) else None
        gb = pk.sum(g, axis=(0, 2, 3)) if _wants(bias) else None
        return gx, gw, gb

    return record(op, out, (x, w, bias), back)


def _correlate(a: Any, b: Any, groups: int, s: tuple[int, int], p: tuple[int, int],
               d: tuple[int, int], k: tuple[int, int]) -> Any:
    """r[j, i, u, v] = sum over images n and pixels q of a[n, i, q·s + (u, v)·d - p] ·
    b[n, j, q], for each channel j of b and channel i (within j's group) of a, cropped to
    k: the filter gradient of conv2d (a = x, b = g) and of conv_transpose2d (a = g, b = x),
    in each one's filter layout (b's channels, a's channels per group, KH, KW)."""
    n, ca, ha, wa = a.shape
    per = ca // groups
    rows = a.reshape(n, groups, per, ha, wa).permute(2, 1, 0, 3, 4)
    rows = rows.reshape(per, groups * n, ha, wa)
    r = pk.conv2d(rows, b.permute(1, 0, 2, 3), stride=d, padding=p, dilation=s, groups=groups)
    return r.permute(1, 0, 2, 3)[:, :, :k[0], :k[1]]


def _zero_pad(x: Any, rows: tuple[int, int], cols: tuple[int, int]) -> Any:
    """x with zero rows above/below and zero columns left/right (a concat, so x's gradient is
    the middle of the padded one)."""
    for axis, (lo, hi) in ((2, rows), (3, cols)):
        parts = []
        for size in (lo, hi):
            shape = list(x.shape)
            shape[axis] = size
            parts.append(pk.zeros(tuple(shape), x.dtype) if size else None)
        pieces = [t for t in (parts[0], x, parts[1]) if t is not None]
        if len(pieces) > 1:
            x = pk.concat(pieces, axis=axis)
    return x
