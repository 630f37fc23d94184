"""ATen's arguments as pykern operands, and pykern results written back into ATen's outputs.

An operator implementation receives torch tensors (on "pykern", or 0-d CPU tensors that
PyTorch lets stand for numbers), Python numbers and ATen's other argument types; it computes
on `pk.Tensor` views of the same memory and writes its result into the output tensor that
PyTorch allocated (for `.out` overloads) or returns a fresh one (`memory.result`).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

import pykern as pk
from pykern.torch import dtypes
from pykern.torch.memory import adopt, is_pykern, pk_view, result

Number = bool | int | float | complex


def pk_dtype(dtype: torch.dtype) -> pk.DType:
    """pykern's dtype of a torch dtype."""
    return dtypes.to_pk(dtype)


def operand(x: object, dtype: torch.dtype | None = None) -> pk.Tensor | Number:
    """`x` as a pykern operand: a "pykern" tensor as its pk.Tensor view (converted to `dtype`
    when given), a 0-d CPU tensor or a number as a Python number."""
    if isinstance(x, torch.Tensor):
        if is_pykern(x):
            p = pk_view(x)
            if dtype is not None and p.dtype != pk_dtype(dtype):
                p = p.astype(pk_dtype(dtype))
            return p
        if x.dim() == 0:
            x = x.item()
        else:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found a "
                               f"tensor on {x.device} among the pykern operands")
    if dtype is not None and isinstance(x, (bool, int, float, complex)):
        return _scalar_as(x, dtype)
    return x  # type: ignore[return-value]


def _scalar_as(x: Number, dtype: torch.dtype) -> Number:
    if dtype == torch.bool:
        return bool(x)
    if dtype.is_complex:
        return complex(x)
    if dtype.is_floating_point:
        return float(x) if not isinstance(x, complex) else x
    return int(x) if not isinstance(x, complex) else x  # ATen truncates a Scalar to an int


def tensor(x: object, dtype: torch.dtype | None = None) -> pk.Tensor:
    """`x` as a pk.Tensor (a number becomes a 0-d tensor of `dtype`)."""
    v = operand(x, dtype)
    if isinstance(v, pk.Tensor):
        return v
    return pk.full((), v, dtype=pk_dtype(dtype) if dtype is not None else None)


def opt(x: torch.Tensor | None, dtype: torch.dtype | None = None) -> pk.Tensor | None:
    """An optional tensor argument as a pk.Tensor or None."""
    return None if x is None else tensor(x, dtype)


def write(out: torch.Tensor, value: pk.Tensor | Number) -> torch.Tensor:
    """Writes `value` (broadcast, converted to out's dtype) into `out`; returns `out`. An
    `out` of another shape that `value` does not broadcast to is resized first (PyTorch's
    rule for out= tensors: non-structured operators get an empty one)."""
    if isinstance(value, pk.Tensor):
        if tuple(out.shape) != value.shape and (
                (out.numel() == 0 and value.size > 0) or
                not _broadcasts(value.shape, tuple(out.shape))):
            out.resize_(value.shape)
        if adopt(out, value):
            return out  # out takes value's memory: no copy
    target = pk_view(out)
    if isinstance(value, pk.Tensor) and value.buffer is target.buffer and \
            value.offset == target.offset and value.shape == target.shape and \
            value.element_strides == target.element_strides and value.dtype == target.dtype:
        return out  # computed in place already
    if out.numel():
        target[...] = value
    return out


def _broadcasts(shape: tuple[int, ...], to: tuple[int, ...]) -> bool:
    if len(shape) > len(to):
        return False
    return all(s in (1, t) for s, t in zip(shape[::-1], to[::-1]))


def new(value: pk.Tensor | Number, dtype: torch.dtype | None = None) -> torch.Tensor:
    """A fresh "pykern" torch tensor holding `value` (converted to `dtype` when given)."""
    if not isinstance(value, pk.Tensor):
        value = pk.full((), value, dtype=pk_dtype(dtype) if dtype is not None else None)
    elif dtype is not None and value.dtype != pk_dtype(dtype):
        value = value.astype(pk_dtype(dtype))
    return result(value)


def dims(dim: int | Sequence[int] | None, ndim: int) -> tuple[int, ...]:
    """ATen's `dim` argument (an int, a list, None or [] for all) as sorted non-negative
    axes."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = [dim]
    if len(dim) == 0:
        return tuple(range(ndim))
    return tuple(sorted({d % max(ndim, 1) for d in dim}))
