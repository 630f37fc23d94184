"""Creation and layout operators: fills, ranges, eye, triangles, cat, flip, roll."""

from __future__ import annotations

from collections.abc import Sequence

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
    """`arange.start_out`: start + i * step for the i PyTorch's meta function counted (the
    products in float64 for floating outputs, as PyTorch's CPU kernel)."""
    n = out.numel()
    if n == 0:
        return out
    if out.dtype.is_floating_point:
        i = pk.arange(n, dtype=pk.f64 if _has_f64(out) else pk.f32)
        return write(out, pk.add(pk.multiply(i, float(step)), float(start)))
    i = pk.arange(n, dtype=pk.i64)
    return write(out, pk.add(pk.multiply(i, int(step)), int(start)))


def _has_f64(t: torch.Tensor) -> bool:
    return bool(operand(t).device.features.fp64)  # type: ignore[union-attr]


def linspace_out(start: object, end: object, steps: int, *, out: torch.Tensor) -> torch.Tensor:
    """`linspace.out`: PyTorch's formula, start + i * step for the first half and
    end - (steps - 1 - i) * step for the second, so both ends are exact."""
    if isinstance(start, torch.Tensor):
        start = start.item()
    if isinstance(end, torch.Tensor):
        end = end.item()
    if steps == 0:
        return out
    if steps == 1:
        return write(out, start)
    fdt = pk.f64 if _has_f64(out) else pk.f32
    if not (out.dtype.is_floating_point or out.dtype.is_complex):
        step = (float(end) - float(start)) / (steps - 1)  # type: ignore[arg-type]
    else:
        step = (end - start) / (steps - 1)  # type: ignore[operator]
    i = pk.arange(steps, dtype=fdt)
    half = steps // 2
    low = pk.add(pk.multiply(i, step), start)
    high = pk.subtract(end, pk.multiply(pk.subtract(steps - 1, i), step))
    values = pk.where(pk.less(i, half), low, high)
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
        return new(xp.roll(x.reshape(-1), list(shifts)).reshape(x.shape))  # type: ignore
    return new(xp.roll(x, list(shifts), axis=list(dims)))
