"""`solve` and `inv`: through the LU factorization with partial pivoting (`lu`), which carries
the right-hand sides (for `inv`, the identity) along, then a blocked back substitution with U
(`triangular`). The launches of a shape are recorded on its first call and replayed after
(`pykern.tensor.core.dispatch`); the only wait for the device is the read of one integer per
matrix at the end. An exactly zero pivot raises `LinAlgError`, naming the matrix of the
batch."""

from __future__ import annotations

from pykern.lang import dtypes as dt
from pykern.linalg.checks import Matrices, first_flagged, float_dtypes, matrices, matrix_stack
from pykern.linalg import gradients
from pykern.linalg.gradients import differentiable
from pykern.linalg.errors import LinAlgError
from pykern.linalg.lu import lu_factor, panel_width, small
from pykern.tensor.core.device_limits import loop_budget
from pykern.linalg.lu_small import solve_small
from pykern.linalg.triangular import block_rows, solve_upper
from pykern.tensor.core.dispatch import dispatch
from pykern.tensor.core.tensor import empty
from pykern.tensor.create.creation import zeros
from pykern.tensor.create.creation import eye
from pykern.tensor.elementwise.functions import as_tensor
from pykern.tensor.core.promotion import promote
from pykern.tensor.core.strided import broadcast_shapes
from pykern.tensor.core.tensor import Tensor


def solve(x1: object, x2: object, /) -> Tensor:
    """The solution X of `x1 @ X = x2` for square `x1` (..., n, n). `x2` of shape (n,) is one
    right-hand side (the result has shape x1.shape[:-1]); of shape (..., n, k), a stack of
    them, whose leading dimensions broadcast against x1's. Raises `LinAlgError` when a matrix
    of x1 is exactly singular.

        pk.linalg.solve(pk.asarray([[3.0, 1.0], [1.0, 2.0]]), pk.asarray([9.0, 8.0]))
    """
    a, b = as_tensor(x1, "solve: x1"), as_tensor(x2, "solve: x2")
    return differentiable("linalg.solve", (a, b), _solve, gradients.solve, complex_ok=True)


def _solve(x1: Tensor, x2: Tensor) -> Tensor:
    op = "solve"
    a = matrix_stack(x1, op, "x1", square=True)
    b = x2
    n = a.shape[-1]
    vector = b.ndim == 1
    if b.ndim == 0 or b.shape[-1 if vector else -2] != n:
        raise ValueError(f"{op}: x2 must have shape ({n},) or (..., {n}, k) to match x1 of "
                         f"shape {a.shape}, got shape {b.shape}")
    compute, result = _dtypes(a, b, op)
    if vector:
        batch = tuple(a.shape[:-2])
        b = b.reshape((n, 1))
    else:
        batch = broadcast_shapes(a.shape[:-2], b.shape[:-2], op=op)
    ma = matrices(a, op, "x1", compute=compute, batch_shape=batch)
    mb = matrices(b, op, "x2", compute=compute, batch_shape=batch)
    y = _solve_stack(ma, mb.batch, op, "x1")
    out = y.reshape(batch + ((n,) if vector else (n, b.shape[-1])))
    return out if out.dtype == result else out.astype(result)


def inv(x: object, /) -> Tensor:
    """The inverse of each square matrix of `x` (..., n, n). Raises `LinAlgError` when one is
    exactly singular.

        pk.linalg.inv(pk.asarray([[2.0, 0.0], [0.0, 4.0]]))   # [[0.5, 0], [0, 0.25]]
    """
    t = as_tensor(x, "inv: x")
    return differentiable("linalg.inv", (t,), _inv, gradients.inv, complex_ok=True)


def _inv(x: Tensor) -> Tensor:
    op = "inv"
    m = matrices(x, op, square=True)
    n = m.rows
    ident = eye(n, dtype=m.compute).reshape((1, n, n)).broadcast_to(m.batch.shape)
    y = _solve_stack(m, ident, op, "x")
    out = y.reshape(m.batch_shape + (n, n))
    return out if out.dtype == m.result else out.astype(m.result)


def _dtypes(a: Tensor, b: Tensor, op: str) -> tuple[dt.DType, dt.DType]:
    ca, ra = float_dtypes(a.dtype, op, "x1")
    cb, rb = float_dtypes(b.dtype, op, "x2")
    return promote(ca, cb), promote(ra, rb)


def _solve_stack(m: Matrices, rhs: Tensor, op: str, name: str) -> Tensor:
    """The solutions (B, n, k) of m's matrices times X = `rhs` (B, n, k); LinAlgError naming
    the first singular matrix."""
    a = m.batch
    key = ("linalg.solve", small_solve(a.shape[1], rhs.shape[2]), panel_width(a.dtype),
           block_rows())
    y, info = dispatch(key, (a, rhs), lambda: _factor_and_solve(a, rhs))
    check_nonsingular(info, m, op, name)
    return y


def small_solve(n: int, k: int) -> bool:
    """Whether n×n systems with k right-hand sides are solved one invocation per matrix: tiny
    matrices (`lu.small`), within the device's loop budget (lavapipe) for that many."""
    budget = loop_budget()
    return small(n) and (budget is None or n * n * (n + 2 * k) // 2 + n < budget)


def _factor_and_solve(a: Tensor, rhs: Tensor) -> tuple[Tensor, Tensor]:
    n, k = a.shape[1], rhs.shape[2]
    if small_solve(n, k):  # one invocation per matrix, on `a` (a copy `matrices` made)
        y = rhs.astype(rhs.dtype, copy=True)
        info = zeros((a.shape[0],), dt.i32)
        if a.shape[0] and n:
            solve_small(a, y, info)
        return y, info
    f = lu_factor(a, rhs)
    solve_upper(f.lu)
    y = empty((a.shape[0], n, k), a.dtype)
    if y.size:
        y[...] = f.lu[:, n:, :].mT
    return y, f.info


def check_nonsingular(info: Tensor, m: Matrices, op: str, name: str) -> None:
    """Raises LinAlgError when a zero pivot was met in some matrix of the batch."""
    failed = first_flagged(info.numpy(), m.batch_shape)
    if failed:
        where, code = failed
        raise LinAlgError(f"{op}: {name} is singular{where}: pivot {code - 1} of its LU "
                          "factorization is exactly 0")
