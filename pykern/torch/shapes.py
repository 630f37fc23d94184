"""Creation and layout operators: fills, ranges, eye, triangles, cat, flip, roll."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch

import pykern as pk
from pykern.torch.args import new, operand, pk_dtype, write


def fill_(self: torch.Tensor, value: object) -> torch.Tensor:
    """`fill_.Scalar` / `fill_.Tensor`: every element set to `value`."""
    if isinstance(value, torch.Tensor):
        value = value.item()
    return write(self, value)


def zero_(self: torch.Tensor) -> torch.Tensor:
    """`zero_`."""
    return write(self, 0)


def arange_out(start: float, end: float, step: float = 1, *,
               out: torch.Tensor) -> torch.Tensor:
    """`arange.start_out`: start + i * step for i below ceil((end - start) / step), out
    resized to that. As PyTorch's CPU kernel: an integer output takes start, end and step
    truncated to integers first; a floating one computes the products in float64."""
    integral = not (out.dtype.is_floating_point or out.dtype.is_complex)
    if integral:
        start, end, step = int(start), int(end), int(step)  # type: ignore[call-overload]
    n = _arange_length(start, end, step)
    if tuple(out.shape) != (n,):
        out.resize_((n,))
    if n == 0:
        return out
    if not integral:
        i = pk.arange(n, dtype=pk.f64 if _has_f64(out) else pk.f32)
        return write(out, pk.add(pk.multiply(i, float(step)), float(start)))
    i = pk.arange(n, dtype=pk.i64)
    return write(out, pk.add(pk.multiply(i, step), start))


def _arange_length(start: object, end: object, step: object) -> int:
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if all(isinstance(v, int) for v in (start, end, step)):
        n = -((int(start) - int(end)) // int(step))  # type: ignore[call-overload]
    else:
        n = math.ceil((float(end) - float(start)) / float(step))  # type: ignore[arg-type]
    if n < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    return n


def _has_f64(t: torch.Tensor) -> bool:
    return bool(operand(t).device.features.fp64)  # type: ignore[union-attr]


def _spaced(start: object, end: object, steps: int, out: torch.Tensor) -> pk.Tensor:
    """PyTorch's linspace values (its CPU kernel's arithmetic): start + step * i for the first
    half, end - step * (steps - 1 - i) for the second, with step = (end - start) / (steps - 1)
    in out's dtype (float64 for integers, whose start and end are truncated first)."""
    if isinstance(start, torch.Tensor):
        start = start.item()
    if isinstance(end, torch.Tensor):
        end = end.item()
    floating = out.dtype.is_floating_point or out.dtype.is_complex
    d = out.dtype if floating else torch.float64
    if not floating:
        start, end = int(start), int(end)  # type: ignore[call-overload]
    if d == torch.float64 and not _has_f64(out):
        d = torch.float32
    one = torch.tensor(0, dtype=d)  # the scalar steps in d's arithmetic, on the host
    lo, hi = one + start, one + end
    pd = pk_dtype(d)
    if steps == 1:
        return pk.full((1,), lo.item(), dtype=pd)
    step = ((hi - lo) / (steps - 1)).item()
    i = pk.arange(steps, dtype=pd)
    low = pk.add(pk.multiply(i, step), lo.item())
    high = pk.subtract(hi.item(), pk.multiply(pk.subtract(steps - 1, i), step))
    return pk.where(pk.less(i, steps // 2), low, high)


def linspace_out(start: object, end: object, steps: int, *, out: torch.Tensor) -> torch.Tensor:
    """`linspace.out` (and its Tensor overloads)."""
    if tuple(out.shape) != (steps,):
        out.resize_((steps,))
    if steps == 0:
        return out
    values = _spaced(start, end, steps, out)
    if not (out.dtype.is_floating_point or out.dtype.is_complex):
        values = pk.trunc(values)
    return write(out, values)


def logspace_out(start: object, end: object, steps: int, base: float = 10.0, *,
                 out: torch.Tensor) -> torch.Tensor:
    """`logspace.out`: base ** linspace(start, end, steps), the power in float64."""
    if tuple(out.shape) != (steps,):
        out.resize_((steps,))
    if steps == 0:
        return out
    exponents = _spaced(start, end, steps, out)
    fd = pk.f64 if _has_f64(out) else pk.f32
    values = pk.pow(float(base), exponents.astype(fd))
    if not (out.dtype.is_floating_point or out.dtype.is_complex):
        values = pk.trunc(values)
    return write(out, values)


def eye_out(n: int, m: int | None = None, *, out: torch.Tensor) -> torch.Tensor:
    """`eye.out` / `eye.m_out`."""
    m = n if m is None else m
    return write(out, pk.eye(n, m, dtype=pk_dtype(out.dtype)))


def tril_out(self: torch.Tensor, diagonal: int = 0, *, out: torch.Tensor) -> torch.Tensor:
    """`tril.out`: the lower triangle (of every matrix of a batch)."""
    return write(out, pk.tril(operand(self), k=diagonal))


def triu_out(self: torch.Tensor, diagonal: int = 0, *, out: torch.Tensor) -> torch.Tensor:
    """`triu.out`."""
    return write(out, pk.triu(operand(self), k=diagonal))


def efficient_zeros(size: Sequence[int], *, dtype: torch.dtype | None = None,
                    layout: object = None, device: torch.device | None = None,
                    pin_memory: bool | None = None) -> torch.Tensor:
    """`_efficientzerotensor` (the zero gradients of some backward formulas): plain zeros, as
    PyTorch makes them for devices without its zero-tensor bit."""
    return torch.zeros(size, dtype=dtype, device=device)


def triangle_indices(upper: bool) -> Callable[..., torch.Tensor]:
    """`tril_indices` / `triu_indices`: the coordinates of the triangle's elements in row-major
    order, as the nonzeros of the triangle of a matrix of ones."""
    def impl(row: int, col: int, offset: int = 0, *, dtype: torch.dtype | None = None,
             layout: object = None, device: torch.device | None = None,
             pin_memory: bool | None = None) -> torch.Tensor:
        ones = torch.ones(row, col, dtype=torch.bool, device=device)
        mask = ones.triu(offset) if upper else ones.tril(offset)
        return mask.nonzero().t().to(dtype or torch.int64).contiguous()
    impl.__name__ = "triu_indices" if upper else "tril_indices"
    return impl


def cat_out(tensors: Sequence[torch.Tensor], dim: int = 0, *,
            out: torch.Tensor) -> torch.Tensor:
    """`cat.out`: joined along `dim` (1-d empty tensors are skipped, as PyTorch's legacy
    rule)."""
    parts = [operand(t, out.dtype) for t in tensors if not (t.dim() == 1 and t.numel() == 0)]
    if not parts:
        return out
    dim = dim % out.dim() if out.dim() else 0
    return write(out, pk.concat(parts, axis=dim))


def flip(self: torch.Tensor, dims: Sequence[int]) -> torch.Tensor:
    """`flip`: a copy with the order reversed along `dims`."""
    x = operand(self)
    if x.ndim == 0 or not dims:  # type: ignore[union-attr]
        return new(x.copy())  # type: ignore[union-attr]
    return new(x.flip([d % x.ndim for d in dims]))  # type: ignore[union-attr]


def roll(self: torch.Tensor, shifts: Sequence[int], dims: Sequence[int] = ()) -> torch.Tensor:
    """`roll`: elements shifted cyclically along `dims` (the flattened tensor when none)."""
    x = operand(self)
    xp = pk.array_api
    if not dims:
        flat = x.reshape(-1)  # type: ignore[union-attr]
        return new(xp.roll(flat, int(shifts[0])).reshape(x.shape))  # type: ignore
    return new(xp.roll(x, list(shifts), axis=list(dims)))
