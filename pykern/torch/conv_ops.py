"""Convolutions: PyTorch hands every convolution on a PrivateUse1 device to
`convolution_overrideable` and its backward to `convolution_backward_overrideable`; both run
on pykern's conv2d / conv_transpose2d (1-d convolutions as 2-d ones of height 1). The backward
takes pykern's own convolution gradients."""

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
    if spatial not in (1, 2):
        raise NotImplementedError(f"the pykern device has no {spatial}-d convolution "
                                  "(aten::convolution_overrideable)")
    return spatial


def _conv(x: pk.Tensor, w: pk.Tensor, b: pk.Tensor | None, spatial: int,
          stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int],
          transposed: bool, output_padding: Sequence[int], groups: int) -> pk.Tensor:
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
