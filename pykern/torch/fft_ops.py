"""FFTs: PyTorch's three FFT primitives on pk.fft. `normalization` is ATen's mode, applied
whatever the direction: 0 none, 1 divide by sqrt(n), 2 divide by n (n the product of the
transformed sizes)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

import pykern as pk
from pykern.torch.args import operand, write


def _scaled(p: pk.Tensor, sizes: Sequence[int], normalization: int) -> pk.Tensor:
    n = math.prod(sizes)
    if normalization == 1:
        return pk.divide(p, math.sqrt(n))
    if normalization == 2:
        return pk.divide(p, float(n))
    return p


def fft_r2c_out(self: torch.Tensor, dim: Sequence[int], normalization: int, onesided: bool, *,
                out: torch.Tensor) -> torch.Tensor:
    """`_fft_r2c.out`: the transform of a real tensor (its non-negative frequencies along the
    last dim when onesided)."""
    x = operand(self)
    axes = [d % x.ndim for d in dim]  # type: ignore[union-attr]
    if onesided:
        y = pk.fft.rfftn(x, axes=axes, norm="backward")
    else:
        y = pk.fft.fftn(x.astype(pk.c128 if x.dtype == pk.f64 else pk.c64),  # type: ignore
                        axes=axes, norm="backward")
    return write(out, _scaled(y, [x.shape[a] for a in axes], normalization))  # type: ignore


def fft_c2c_out(self: torch.Tensor, dim: Sequence[int], normalization: int, forward: bool, *,
                out: torch.Tensor) -> torch.Tensor:
    """`_fft_c2c.out`: the forward or inverse complex transform, unnormalised then scaled."""
    x = operand(self)
    axes = [d % x.ndim for d in dim]  # type: ignore[union-attr]
    if not axes:
        return write(out, x)
    y = pk.fft.fftn(x, axes=axes, norm="backward") if forward else \
        pk.fft.ifftn(x, axes=axes, norm="forward")
    return write(out, _scaled(y, [x.shape[a] for a in axes], normalization))  # type: ignore


def fft_c2r_out(self: torch.Tensor, dim: Sequence[int], normalization: int,
                last_dim_size: int, *, out: torch.Tensor) -> torch.Tensor:
    """`_fft_c2r.out`: the real inverse of a one-sided spectrum, last_dim_size long along the
    last transformed dim."""
    x = operand(self)
    axes = [d % x.ndim for d in dim]  # type: ignore[union-attr]
    sizes = [x.shape[a] for a in axes[:-1]] + [last_dim_size]  # type: ignore[union-attr]
    y = pk.fft.irfftn(x, s=sizes, axes=axes, norm="forward")
    return write(out, _scaled(y, sizes, normalization))


def _complex_of(dtype: torch.dtype) -> torch.dtype:
    return {torch.float64: torch.complex128, torch.complex128: torch.complex128}.get(
        dtype, torch.complex64)


def _real_of(dtype: torch.dtype) -> torch.dtype:
    return torch.float64 if dtype == torch.complex128 else torch.float32


def fft_r2c(self: torch.Tensor, dim: Sequence[int], normalization: int,
            onesided: bool) -> torch.Tensor:
    """`_fft_r2c` (not structured)."""
    shape = list(self.shape)
    if onesided:
        last = dim[-1] % self.dim()
        shape[last] = shape[last] // 2 + 1
    out = torch.empty(shape, dtype=_complex_of(self.dtype), device=self.device)
    return fft_r2c_out(self, dim, normalization, onesided, out=out)


def fft_c2c(self: torch.Tensor, dim: Sequence[int], normalization: int,
            forward: bool) -> torch.Tensor:
    """`_fft_c2c` (not structured)."""
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    return fft_c2c_out(self, dim, normalization, forward, out=out)


def fft_c2r(self: torch.Tensor, dim: Sequence[int], normalization: int,
            last_dim_size: int) -> torch.Tensor:
    """`_fft_c2r` (not structured)."""
    shape = list(self.shape)
    shape[dim[-1] % self.dim()] = last_dim_size
    out = torch.empty(shape, dtype=_real_of(self.dtype), device=self.device)
    return fft_c2r_out(self, dim, normalization, last_dim_size, out=out)
