"""Pooling beyond pykern's own 2-d max/avg pools: adaptive max pooling of any window split
(1-d to 3-d), 3-d max pooling with indices and its backward, and the shrink activations'
backward. The forwards are gathers of every window (padded by repeating its last element,
which leaves a maximum and its first position unchanged) and a max over them, written as ATen
operators that run on pykern; the backwards add each gradient at its recorded position."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch

import pykern as pk
from pykern.torch.args import new, operand, write


def _adaptive_windows(size_in: int, size_out: int) -> list[list[int]]:
    """For each output position, the input positions of its window (PyTorch's adaptive split:
    from floor(i·in/out) to ceil((i+1)·in/out)), padded to the longest window by repeating the
    last position."""
    starts = [i * size_in // size_out for i in range(size_out)]
    ends = [-(-(i + 1) * size_in // size_out) for i in range(size_out)]
    k = max((e - s for s, e in zip(starts, ends)), default=1)
    return [[min(s + j, e - 1) for j in range(k)] for s, e in zip(starts, ends)]


def adaptive_max_pool(spatial: int) -> Callable[..., tuple[torch.Tensor, torch.Tensor]]:
    """`adaptive_max_pool{2,3}d.out`: the maxima of PyTorch's adaptive windows and their flat
    positions within each plane (first maximum in row-major order, as the CPU scans)."""
    def impl(self: torch.Tensor, output_size: Sequence[int], *, out: torch.Tensor,
             indices: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        sizes_in = list(self.shape[-spatial:])
        windows = [_adaptive_windows(i, o) for i, o in zip(sizes_in, output_size)]
        values, positions = _max_over_windows(self, windows, list(output_size))
        out.resize_(values.shape).copy_(values)
        indices.resize_(positions.shape).copy_(positions)
        return out, indices
    impl.__name__ = f"adaptive_max_pool{spatial}d_out"
    return impl


def _strided_windows(size_in: int, kernel: int, stride: int, pad: int, dilation: int,
                     ceil_mode: bool) -> list[list[int]]:
    """For each output position of a max pool along one axis, the input positions of its
    window; the positions in the padding become the window's nearest position inside the
    input (a repeat, which leaves the maximum and its first position unchanged)."""
    span = dilation * (kernel - 1) + 1
    room = size_in + 2 * pad - span
    count = (-(-room // stride) if ceil_mode else room // stride) + 1
    if ceil_mode and (count - 1) * stride >= size_in + pad:  # a window starting in the pad
        count -= 1
    windows = []
    for i in range(max(count, 0)):
        taps = [i * stride - pad + j * dilation for j in range(kernel)]
        inside = [t for t in taps if 0 <= t < size_in]
        windows.append([min(max(t, inside[0]), inside[-1]) for t in taps])
    return windows


def max_pool3d_with_indices(self: torch.Tensor, kernel_size: Sequence[int],
                            stride: Sequence[int] = (), padding: Sequence[int] = (0,),
                            dilation: Sequence[int] = (1,), ceil_mode: bool = False
                            ) -> tuple[torch.Tensor, torch.Tensor]:
    """`max_pool3d_with_indices`: the maxima of each window and their flat positions within
    each (D, H, W) volume (the first maximum in row-major order, as the CPU scans)."""
    def three(v: Sequence[int], default: Sequence[int]) -> list[int]:
        v = list(v) or list(default)
        return v * 3 if len(v) == 1 else v
    kernel = three(kernel_size, ())
    steps = three(stride, kernel)
    pads, dilations = three(padding, (0,)), three(dilation, (1,))
    windows = [_strided_windows(n, k, s, p, d, ceil_mode) for n, k, s, p, d in
               zip(self.shape[-3:], kernel, steps, pads, dilations)]
    return _max_over_windows(self, windows, [len(w) for w in windows])


def _max_over_windows(self: torch.Tensor, windows: list[list[list[int]]],
                      sizes_out: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """The maximum over each window (per axis, the input positions of each output position's
    window, all of one length) and its flat position within the trailing spatial dims."""
    spatial = len(windows)
    sizes_in = list(self.shape[-spatial:])
    batch = list(self.shape[:-spatial])
    if self.numel() == 0 or math.prod(sizes_out) == 0:
        shape = batch + sizes_out
        return self.new_empty(shape), self.new_empty(shape, dtype=torch.int64)
    index, flat = [], None
    place = 1
    for d in reversed(range(spatial)):
        w = torch.tensor(windows[d], dtype=torch.int64, device=self.device)
        shape = [1] * (2 * spatial)
        shape[2 * d], shape[2 * d + 1] = w.shape
        w = w.reshape(shape)
        index.insert(0, w)
        flat = w * place if flat is None else flat + w * place
        place *= sizes_in[d]
    gathered = self[(Ellipsis, *index)]  # (..., o0, k0, o1, k1, ...)
    nb = len(batch)
    order = [nb + 2 * d for d in range(spatial)] + [nb + 2 * d + 1 for d in range(spatial)]
    gathered = gathered.permute(*range(nb), *order)
    gathered = gathered.reshape(*batch, *sizes_out, -1)
    values, arg = gathered.max(dim=-1)
    assert flat is not None
    flat = flat.permute(*[2 * d for d in range(spatial)],
                        *[2 * d + 1 for d in range(spatial)]).reshape(*sizes_out, -1)
    positions = flat.expand(*batch, *flat.shape).gather(-1, arg.unsqueeze(-1)).squeeze(-1)
    return values, positions


def _scatter_back(grad_output: torch.Tensor, self: torch.Tensor, indices: torch.Tensor,
                  spatial: int, grad_input: torch.Tensor) -> torch.Tensor:
    """Each output gradient added at the flat position (within its plane) `indices` records."""
    size = math.prod(self.shape[-spatial:])
    planes = self.numel() // size if size else 0
    if planes == 0:
        if grad_input.shape != self.shape:
            grad_input.resize_(self.shape)
        return write(grad_input, 0)
    g = operand(grad_output).reshape(planes, -1)  # type: ignore[union-attr]
    i = operand(indices).reshape(planes, -1)  # type: ignore[union-attr]
    grad = pk.scatter_add(pk.zeros((planes, size), dtype=g.dtype), 1, i, g)
    return write(grad_input, grad.reshape(tuple(self.shape)))


def adaptive_max_pool_backward(spatial: int) -> Callable[..., torch.Tensor]:
    """`adaptive_max_pool{2,3}d_backward.grad_input`."""
    def impl(grad_output: torch.Tensor, self: torch.Tensor, indices: torch.Tensor, *,
             grad_input: torch.Tensor) -> torch.Tensor:
        return _scatter_back(grad_output, self, indices, spatial, grad_input)
    impl.__name__ = f"adaptive_max_pool{spatial}d_backward"
    return impl


def max_pool3d_backward(grad_output: torch.Tensor, self: torch.Tensor,
                        kernel_size: Sequence[int], stride: Sequence[int],
                        padding: Sequence[int], dilation: Sequence[int], ceil_mode: bool,
                        indices: torch.Tensor, *,
                        grad_input: torch.Tensor | None = None) -> torch.Tensor:
    """`max_pool3d_with_indices_backward` and its `.grad_input`."""
    if grad_input is None:
        grad_input = torch.empty_like(self)
    return _scatter_back(grad_output, self, indices, 3, grad_input)


def shrink_backward(hard: bool) -> Callable[..., torch.Tensor]:
    """`hardshrink_backward.grad_input` / `softshrink_backward.grad_input`: the gradient where
    |x| > lambd, else 0 (both shrinks have slope 1 outside the band)."""
    def impl(grad_out: torch.Tensor, self: torch.Tensor, lambd: float, *,
             grad_input: torch.Tensor) -> torch.Tensor:
        x = operand(self)
        g = operand(grad_out)
        inside = pk.abs(x) <= float(lambd)  # type: ignore[arg-type]
        return write(grad_input, pk.where(inside, pk.zeros((), dtype=g.dtype), g))
    impl.__name__ = "hardshrink_backward" if hard else "softshrink_backward"
    return impl


# Average pools are separable: a window's mean is a product of 1-d box averages (PyTorch's
# divisors, count_include_pad's and ceil_mode's included, are products of per-axis counts), so
# each spatial axis is one matrix product with an (out × in) matrix of box weights, and the
# backward the products with the transposed matrices.

_LOW = (torch.float16, torch.bfloat16)


def _adaptive_weights(size_in: int, size_out: int) -> list[list[float]]:
    rows = []
    for i in range(size_out):
        start, end = i * size_in // size_out, -(-(i + 1) * size_in // size_out)
        rows.append([1.0 / (end - start) if start <= j < end else 0.0 for j in range(size_in)])
    return rows


def _avg_weights(size_in: int, kernel: int, stride: int, pad: int, ceil_mode: bool,
                 count_include_pad: bool, divided: bool) -> list[list[float]]:
    """The box weights of one axis of avg_pool (PyTorch's output size and divisors; all ones
    where `divided` is false, a divisor_override then divides once)."""
    span = size_in + 2 * pad - kernel
    size_out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (size_out - 1) * stride >= size_in + pad:
        size_out -= 1
    rows = []
    for o in range(size_out):
        start = o * stride - pad
        end = min(start + kernel, size_in + pad)
        pool = end - start
        start, end = max(start, 0), min(end, size_in)
        divisor = (pool if count_include_pad else end - start) if divided else 1
        rows.append([1.0 / divisor if start <= j < end else 0.0 for j in range(size_in)])
    return rows


def _per_axis(x: pk.Tensor, matrices: list[list[list[float]]], transpose: bool) -> pk.Tensor:
    """x with its last len(matrices) axes each multiplied by its matrix (its transpose when
    `transpose`): (…, in) @ (in × out)."""
    spatial = len(matrices)
    for d, rows in enumerate(matrices):
        m = pk.asarray(rows, dtype=x.dtype)
        m = m if transpose else m.T
        axis = x.ndim - spatial + d
        x = pk.matmul(x.swapaxes(axis, -1), m).swapaxes(axis, -1)
    return x


def _pooled(self: torch.Tensor, matrices: list[list[list[float]]], transpose: bool,
            dtype: torch.dtype, scale: float = 1.0) -> pk.Tensor:
    if not dtype.is_floating_point:
        raise NotImplementedError("the pykern device has no integer average pooling")
    x = operand(self, torch.float32 if dtype in _LOW else dtype)
    y = _per_axis(x, matrices, transpose)  # type: ignore[arg-type]
    return y if scale == 1.0 else y * scale


def adaptive_avg_pool3d(self: torch.Tensor, output_size: Sequence[int]) -> torch.Tensor:
    """`_adaptive_avg_pool3d`."""
    mats = [_adaptive_weights(i, o) for i, o in zip(self.shape[-3:], output_size)]
    return new(_pooled(self, mats, False, self.dtype), self.dtype)


def adaptive_avg_pool3d_backward(grad_output: torch.Tensor,
                                 self: torch.Tensor) -> torch.Tensor:
    """`_adaptive_avg_pool3d_backward`."""
    mats = [_adaptive_weights(i, o) for i, o in zip(self.shape[-3:], grad_output.shape[-3:])]
    return new(_pooled(grad_output, mats, True, self.dtype), self.dtype)


def _avg_matrices(self: torch.Tensor, kernel_size: Sequence[int], stride: Sequence[int],
                  padding: Sequence[int], ceil_mode: bool, count_include_pad: bool,
                  divisor_override: int | None) -> tuple[list[list[list[float]]], float]:
    def three(v: Sequence[int], default: Sequence[int]) -> list[int]:
        v = list(v) or list(default)
        return v if len(v) == 3 else v * 3
    k = three(kernel_size, kernel_size)
    s, p = three(stride, k), three(padding, [0])
    mats = [_avg_weights(n, kk, ss, pp, ceil_mode, count_include_pad, divisor_override is None)
            for n, kk, ss, pp in zip(self.shape[-3:], k, s, p)]
    return mats, 1.0 if divisor_override is None else 1.0 / divisor_override


def avg_pool3d_out(self: torch.Tensor, kernel_size: Sequence[int], stride: Sequence[int] = (),
                   padding: Sequence[int] = (0,), ceil_mode: bool = False,
                   count_include_pad: bool = True, divisor_override: int | None = None, *,
                   out: torch.Tensor) -> torch.Tensor:
    """`avg_pool3d.out`."""
    mats, scale = _avg_matrices(self, kernel_size, stride, padding, ceil_mode,
                                count_include_pad, divisor_override)
    return write(out, _pooled(self, mats, False, self.dtype, scale))


def avg_pool3d_backward_out(grad_output: torch.Tensor, self: torch.Tensor,
                            kernel_size: Sequence[int], stride: Sequence[int],
                            padding: Sequence[int], ceil_mode: bool, count_include_pad: bool,
                            divisor_override: int | None, *,
                            grad_input: torch.Tensor) -> torch.Tensor:
    """`avg_pool3d_backward.grad_input`."""
    mats, scale = _avg_matrices(self, kernel_size, stride, padding, ceil_mode,
                                count_include_pad, divisor_override)
    return write(grad_input, _pooled(grad_output, mats, True, self.dtype, scale))
