"""Checks and conversions shared by the spectral functions of `pk.linalg`: which dtype a
decomposition computes in, and the stack-of-matrices shape it needs."""

from __future__ import annotations

from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.runtime import get_device
from pykern.tensor.elementwise.functions import as_tensor
from pykern.tensor.core.promotion import DEFAULT_FLOAT
from pykern.tensor.core.tensor import Tensor


def compute_dtype(d: DType, op: str) -> DType:
    """The dtype a decomposition of a `d` input computes in: f64 where the device has it (the
    thousands of rotations of the Jacobi sweeps then leave f32 results rounded as f32), else
    f32; complex input computes in c128 where the device has fp64, else c64."""
    wide = d.real_dtype == dt.f64 or get_device().info.features.fp64
    if d.is_complex:
        return dt.c128 if wide else dt.c64
    return dt.f64 if wide else dt.f32


def result_dtype(d: DType) -> DType:
    """The dtype of a decomposition's results: the input's float or complex dtype, the default
    float for integers and bool (singular values and eigenvalues take its `real_dtype`)."""
    return d if d.is_float or d.is_complex else DEFAULT_FLOAT


def stack_of_matrices(x: object, op: str, square: bool = False) -> Tensor:
    """`x` as a tensor of at least 2 dimensions (square in the last two with `square`), else a
    ValueError naming the argument."""
    t = as_tensor(x, f"linalg.{op}: x")
    check_matrix_shape(t, f"linalg.{op}: x", square)
    return t


def check_matrix_shape(t: Tensor, who: str, square: bool) -> None:
    """A ValueError (`who` names the function and argument, "linalg.svd: x") unless `t` has
    at least 2 dimensions, square in the last two when `square`."""
    if t.ndim < 2:
        raise ValueError(f"{who} must have at least 2 dimensions (a matrix or a stack of "
                         f"matrices), got shape {t.shape}")
    if square and t.shape[-1] != t.shape[-2]:
        raise ValueError(f"{who} must be square in its last two dimensions, got shape "
                         f"{t.shape}")


def as_batch(t: Tensor, dtype: DType) -> Tensor:
    """A contiguous (B, M, N) copy of the (..., M, N) tensor `t` in `dtype` (B ≥ 1)."""
    m, n = t.shape[-2:]
    batch = 1
    for d in t.shape[:-2]:
        batch *= d
    out = t.astype(dtype) if t.dtype != dtype else t
    return out.reshape((batch, m, n)).contiguous()
