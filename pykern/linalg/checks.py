"""Argument checks shared by the `pk.linalg` functions: operands are stacks of matrices in
their last two dimensions, of a float or complex dtype to compute in.

Dtypes: f32, f64, c64 and c128 compute in themselves; f16 and bf16 compute in f32 and the
results are rounded back to the input's dtype; integers and bool are promoted to pykern's
default float, f32 (numpy promotes them to float64). The public functions record their
backward (`gradients`) and run these on inputs cut from the graph; an input that still
requires grad here belongs to a path without a backward and is refused (NotImplementedError).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pykern.autograd.graph import refuse_grad
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.linalg.blocks import transposed
from pykern.linalg.inputs import check_matrix_shape
from pykern.tensor.complex.complex_elementwise import conj
from pykern.tensor.elementwise.functions import as_tensor
from pykern.tensor.core.strided import prod
from pykern.tensor.core.tensor import Tensor
from pykern.tensor.elementwise.functions import exp2, floor, isfinite, log2, where
from pykern.tensor.reduce.reduction import max as pk_max


@dataclass(frozen=True)
class Matrices:
    """An operand checked and copied for factoring in place: `batch` is a fresh row-major
    (B, rows, cols) tensor in `compute` dtype; `batch_shape` the leading dimensions it came
    with; `result` the dtype results are given in."""

    batch: Tensor
    batch_shape: tuple[int, ...]
    compute: DType
    result: DType

    @property
    def rows(self) -> int:
        return self.batch.shape[1]

    @property
    def cols(self) -> int:
        return self.batch.shape[2]


def float_dtypes(d: DType, op: str, name: str) -> tuple[DType, DType]:
    """(compute dtype, result dtype) for an operand of dtype `d`."""
    if d in (dt.f32, dt.f64, dt.c64, dt.c128):
        return d, d
    if d in (dt.f16, dt.bf16):
        return dt.f32, d
    return dt.f32, dt.f32  # integers and bool: the default float


def matrix_stack(x: object, op: str, name: str = "x", square: bool = False) -> Tensor:
    """`x` as a tensor of at least 2 dimensions (square in the last two when `square`), with a
    ValueError naming the shape otherwise; an input that requires grad (with grad mode on)
    is refused: the differentiable functions pass detached inputs (see `gradients`)."""
    t = as_tensor(x, f"{op}: {name}")
    refuse_grad(f"linalg.{op}", t)
    check_matrix_shape(t, f"{op}: {name}", square)
    float_dtypes(t.dtype, op, name)
    return t


def matrices(x: object, op: str, name: str = "x", square: bool = False,
             compute: DType | None = None, batch_shape: tuple[int, ...] | None = None
             ) -> Matrices:
    """The checked operand as a fresh (B, rows, cols) copy to factor in place (in `compute`
    dtype when given, else its own compute dtype; broadcast to `batch_shape` when given)."""
    t = matrix_stack(x, op, name, square)
    own, result = float_dtypes(t.dtype, op, name)
    compute = own if compute is None else compute
    copy = t.detach() if t.requires_grad else t  # under pk.no_grad()
    if batch_shape is None:
        batch_shape = tuple(t.shape[:-2])
    else:
        copy = copy.broadcast_to(batch_shape + tuple(t.shape[-2:]))
    copy = copy.astype(compute, copy=True)
    batch = copy.reshape((prod(batch_shape),) + tuple(t.shape[-2:]))
    return Matrices(batch, batch_shape, compute, result)


def batch_index(flat: int, batch_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The index in the leading dimensions of the `flat`-th matrix of a batch."""
    index = []
    for s in reversed(batch_shape):
        index.append(flat % s)
        flat //= s
    return tuple(reversed(index))


def first_flagged(flags: np.ndarray, batch_shape: tuple[int, ...]) -> tuple[str, int] | None:
    """The first nonzero of the per-matrix `flags` (flattened over the batch): (" (matrix
    (i, j) of the batch)" or "" for a single matrix, its flag); None when all are zero."""
    bad = flags.nonzero()[0]
    if not bad.size:
        return None
    first = int(bad[0])
    where = f" (matrix {batch_index(first, batch_shape)} of the batch)" if batch_shape else ""
    return where, int(flags[first])


def adjoint(t: Tensor) -> Tensor:
    """The conjugate transpose of each matrix of a (B, rows, cols) tensor: a transposed view
    for real dtypes, a new conjugated tensor for complex ones."""
    flipped = transposed(t)
    return conj(flipped) if t.dtype.is_complex else flipped


def finish(t: Tensor, m: Matrices, shape: tuple[int, ...], dtype: DType | None = None
           ) -> Tensor:
    """A (B, ...) result reshaped to the batch shape + `shape`, in the result dtype (or in
    `dtype`: the real part dtype of a real result of complex input)."""
    out = t.reshape(m.batch_shape + shape)
    dtype = m.result if dtype is None else dtype
    return out if out.dtype == dtype else out.astype(dtype)


def power_of_two_scale(mag: Tensor) -> tuple[Tensor, Tensor]:
    """For the magnitudes `mag` (B, rows, cols) of a batch of matrices: a power of two near
    each matrix's largest magnitude, (B, 1, 1), to divide the matrix by so that sums of
    squares neither underflow nor overflow (exactly: no rounding, results as unscaled ones
    wherever those did not underflow or overflow); 1 for a zero matrix or one holding an inf or
    nan. Also whether that largest magnitude is finite, (B, 1, 1)."""

    largest = pk_max(mag, axis=(-2, -1), keepdims=True)
    finite = isfinite(largest)
    usable = finite & (largest > 0)
    scale = exp2(floor(log2(where(usable, largest, 1.0))))
    return where(usable & (scale > 0) & isfinite(scale), scale, 1.0).astype(
        mag.dtype, copy=False), finite


def unscaled(values: Tensor, scale: Tensor, finite: Tensor) -> Tensor:
    """The (B, k) singular values or eigenvalues of matrices that `power_of_two_scale`'s
    `scale` divided, multiplied back; nan for the matrices that held an inf or a nan."""
    return where(finite[:, :, 0], values * scale[:, :, 0], float("nan")).astype(
        values.dtype, copy=False)
