"""Convolutions: PyTorch hands every convolution on a PrivateUse1 device to
`convolution_overrideable` and its backward to `convolution_backward_overrideable`; both run
on pykern's conv2d / conv_transpose2d (1-d convolutions as 2-d ones of height 1, 3-d ones as
one 2-d convolution per depth tap over the depth slices folded into the batch). The backward
takes pykern's own autograd through them."""

from __future__ import annotations

from collections.abc import Sequence

import torch

import pykern as pk
from pykern.torch.args import new, operand


def _as_2d(x: pk.Tensor, spatial: int) -> pk.Tensor:
    return x.reshape(*x.shape[:2], 1, x.shape[2]) if spatial == 1 else x


def _params(values: Sequence[int], spatial: int, fill: int) -> tuple[int, int]:
    v = list(values) if len(values) == spatial else list(values) * spatial
    return (fill, v[0]) if spatial == 1 else (v[0], v[1])


def _check(input: torch.Tensor) -> int:  # noqa: A002
    spatial = input.dim() - 2
    if spatial not in (1, 2, 3):
        raise NotImplementedError(f"the pykern device has no {spatial}-d convolution "
                                  "(aten::convolution_overrideable)")
    return spatial


def _pad_depth(x: pk.Tensor, before: int, after: int) -> pk.Tensor:
    """x (N, D, ...) with zero planes added before and after along axis 1."""
    parts = [x]
    if before:
        parts.insert(0, pk.zeros((x.shape[0], before, *x.shape[2:]), dtype=x.dtype))
    if after:
        parts.append(pk.zeros((x.shape[0], after, *x.shape[2:]), dtype=x.dtype))
    return pk.concat(parts, axis=1) if len(parts) > 1 else x


def _conv3d(x: pk.Tensor, w: pk.Tensor, b: pk.Tensor | None, stride: Sequence[int],
            padding: Sequence[int], dilation: Sequence[int], transposed: bool,
            output_padding: Sequence[int], groups: int) -> pk.Tensor:
    """A 3-d convolution as one 2-d convolution per depth tap kd, the depth slices it reads
    (or, transposed, writes) folded into the batch, the taps' results summed."""
    sd, pd, dd = stride[0], padding[0], dilation[0]
    n, depth, kd_count = x.shape[0], x.shape[2], w.shape[2]
    s2, p2, d2 = tuple(stride[1:]), tuple(padding[1:]), tuple(dilation[1:])
    xt = x.swapaxes(1, 2)  # (N, D, C, H, W)
    total = None
    if not transposed:
        xt = _pad_depth(xt, pd, pd)
        out_depth = (depth + 2 * pd - dd * (kd_count - 1) - 1) // sd + 1
        for kd in range(kd_count):
            start = kd * dd
            sl = xt[:, start:start + (out_depth - 1) * sd + 1:sd]
            y = pk.conv2d(sl.reshape(n * out_depth, *sl.shape[2:]), w[:, :, kd], None, s2, p2,
                          d2, groups)
            total = y if total is None else total + y
        assert total is not None
        y = total.reshape(n, out_depth, *total.shape[1:])
    else:
        full = (depth - 1) * sd + dd * (kd_count - 1) + 1 + output_padding[0]
        flat = xt.reshape(n * depth, *xt.shape[2:])
        for kd in range(kd_count):
            z = pk.conv_transpose2d(flat, w[:, :, kd], None, s2, p2, tuple(output_padding[1:]),
                                    groups, d2)
            z = z.reshape(n, depth, *z.shape[1:])
            if sd > 1:  # input plane i lands on output plane i·sd + kd·dd
                gaps = pk.zeros((n, depth, sd - 1, *z.shape[2:]), dtype=z.dtype)
                z = pk.concat([z.reshape(n, depth, 1, *z.shape[2:]), gaps], axis=2)
                z = z.reshape(n, depth * sd, *z.shape[3:])[:, :(depth - 1) * sd + 1]
            z = _pad_depth(z, kd * dd, full - kd * dd - z.shape[1])
            total = z if total is None else total + z
        assert total is not None
        out_depth = full - 2 * pd
        y = total[:, pd:pd + out_depth]
    y = y.swapaxes(1, 2)
    if b is not None:
        y = y + b.reshape(1, -1, 1, 1, 1)
    return y


def _conv(x: pk.Tensor, w: pk.Tensor, b: pk.Tensor | None, spatial: int,
          stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int],
          transposed: bool, output_padding: Sequence[int], groups: int) -> pk.Tensor:
    if spatial == 3:
        def three(v: Sequence[int]) -> list[int]:
            return list(v) if len(v) == 3 else list(v) * 3
        return _conv3d(x, w, b, three(stride), three(padding), three(dilation), transposed,
                       three(output_padding), groups)
    x2, w2 = _as_2d(x, spatial), _as_2d(w, spatial)
    s, p, d = _params(stride, spatial, 1), _params(padding, spatial, 0), \
        _params(dilation, spatial, 1)
    if transposed:
        y = pk.conv_transpose2d(x2, w2, b, s, p, _params(output_padding, spatial, 0), groups, d)
    else:
        y = pk.conv2d(x2, w2, b, s, p, d, groups)
    return y.reshape(y.shape[0], y.shape[1], y.shape[3]) if spatial == 1 else y


def convolution(input: torch.Tensor, weight: torch.Tensor,  # noqa: A002
                bias: torch.Tensor | None, stride: Sequence[int], padding: Sequence[int],
                dilation: Sequence[int], transposed: bool, output_padding: Sequence[int],
                groups: int) -> torch.Tensor:
    """`convolution_overrideable`."""
    spatial = _check(input)
    d = torch.result_type(input, weight)
    y = _conv(operand(input, d), operand(weight, d), None if bias is None else
              operand(bias, d), spatial, stride, padding, dilation, transposed,  # type: ignore
              output_padding, groups)
    return new(y, d)


def convolution_backward(grad_output: torch.Tensor, input: torch.Tensor,  # noqa: A002
                         weight: torch.Tensor, stride: Sequence[int], padding: Sequence[int],
                         dilation: Sequence[int], transposed: bool,
                         output_padding: Sequence[int], groups: int,
                         output_mask: Sequence[bool]) -> tuple[torch.Tensor | None, ...]:
    """`convolution_backward_overrideable`: the gradients of input, weight and bias."""
    spatial = _check(input)
    x = operand(input).detach()  # type: ignore[union-attr]
    w = operand(weight).detach()  # type: ignore[union-attr]
    g = operand(grad_output)
    wanted = [t for t, m in zip((x, w), output_mask[:2]) if m]
    for t in wanted:
        t.requires_grad_()
    grads: list[pk.Tensor] = []
    if wanted:
        y = _conv(x, w, None, spatial, stride, padding, dilation, transposed, output_padding,
                  groups)
        grads = list(pk.autograd.grad([y], wanted, grad_outputs=[g]))
    results: list[torch.Tensor | None] = []
    for mask, t in zip(output_mask[:2], (input, weight)):
        results.append(new(grads.pop(0), t.dtype) if mask else None)
    if output_mask[2]:
        axes = (0,) + tuple(range(2, grad_output.dim()))
        results.append(new(pk.sum(g, axis=axes), grad_output.dtype))
    else:
        results.append(None)
    return tuple(results)
