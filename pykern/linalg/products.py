"""The products and views of the `linalg` extension: `cross`, `diagonal`, `matmul`,
`matrix_power`, `matrix_transpose`, `outer`, `tensordot`, `trace`, `vecdot`. The ones the main
namespace has already (`matmul`, `matrix_transpose`, `tensordot`, `vecdot`) are the same
functions under the extension's signatures."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from pykern.linalg import gradients
from pykern.linalg.gradients import differentiable
from pykern.linalg.solve import inv
from pykern.tensor.elementwise import functions as ew
from pykern.tensor.reduce import reduction as red
from pykern.tensor.create.creation import eye, zeros_like
from pykern.tensor.index.indexing import stack
from pykern.tensor.gemm.matmul import matmul as _matmul
from pykern.tensor.index.manipulation import matrix_transpose as _matrix_transpose
from pykern.tensor.index.manipulation import moveaxis
from pykern.tensor.core.strided import broadcast_shapes, view
from pykern.tensor.core.tensor import Tensor, normalize_axis
from pykern.tensor.api import namespace


def _namespace() -> Any:
    # imported when called: the namespace imports this package while it loads

    return namespace


def matmul(x1: object, x2: object, /) -> Tensor:
    """The matrix product, as `pk.matmul` (batched, broadcasting)."""
    return _matmul(x1, x2)


def matrix_transpose(x: object, /) -> Tensor:
    """The transpose of each matrix of the stack `x` (a view)."""
    return _matrix_transpose(x)


def tensordot(x1: object, x2: object, /, *, axes: int | tuple[Sequence[int], Sequence[int]] = 2
              ) -> Tensor:
    """Sum of products over `axes` (the last `axes` of x1 with the first of x2, or two
    sequences of axes), as the main namespace's `tensordot`."""
    return _namespace().tensordot(ew.as_tensor(x1), ew.as_tensor(x2), axes=axes)


def vecdot(x1: object, x2: object, /, *, axis: int = -1) -> Tensor:
    """The dot product of the vectors along `axis` (negative), the other axes broadcast."""
    return _namespace().vecdot(ew.as_tensor(x1), ew.as_tensor(x2), axis=axis)


def diagonal(x: object, /, *, offset: int = 0) -> Tensor:
    """The `offset`-th diagonals (above the main one for offset > 0, below for < 0) of the
    matrices of the (..., M, N) stack `x`: (..., K), a copy.

        pk.linalg.diagonal(a, offset=1)
    """
    t = ew.as_tensor(x, "linalg.diagonal: x")
    if t.ndim < 2:
        raise ValueError(f"linalg.diagonal: x must have at least 2 dimensions, got shape "
                         f"{t.shape}")
    k = _int(offset, "diagonal", "offset")
    m, n = t.shape[-2:]
    sm, sn = t.element_strides[-2:]
    length = max(0, min(m + min(k, 0), n - max(k, 0)))
    start = t.offset + (k * sn if k >= 0 else -k * sm) if length else t.offset

    def forward(a: Tensor) -> Tensor:
        return view(a, a.shape[:-2] + (length,), a.element_strides[:-2] + (sm + sn,),
                    start).copy()

    return differentiable("linalg.diagonal", (t,), forward,
                          lambda a, out: gradients.diagonal(a, k, out), complex_ok=True)


def trace(x: object, /, *, offset: int = 0, dtype: object = None) -> Tensor:
    """The sum of the `offset`-th diagonal of each matrix of the stack `x`: (...). The dtype
    is the sum's (integers widen to the default integer) unless `dtype` is given."""
    d = diagonal(x, offset=offset)
    return red.sum(d, axis=-1, dtype=dtype)


def outer(x1: object, x2: object, /) -> Tensor:
    """The outer product of the 1-d tensors `x1` (M) and `x2` (N): (M, N)."""
    a = ew.as_tensor(x1, "linalg.outer: x1")
    b = ew.as_tensor(x2, "linalg.outer: x2")
    for name, t in (("x1", a), ("x2", b)):
        if t.ndim != 1:
            raise ValueError(f"linalg.outer: {name} must be 1-d, got shape {t.shape}")
    return ew.multiply(a.reshape((a.shape[0], 1)), b.reshape((1, b.shape[0])))


def cross(x1: object, x2: object, /, *, axis: int = -1) -> Tensor:
    """The cross product of the 3-vectors along `axis` of `x1` and `x2`, the other axes
    broadcast.

        pk.linalg.cross(u, v)
    """
    a = ew.as_tensor(x1, "linalg.cross: x1")
    b = ew.as_tensor(x2, "linalg.cross: x2")
    shape = broadcast_shapes(a.shape, b.shape, op="linalg.cross")
    ax = normalize_axis(_int(axis, "cross", "axis"), len(shape), op="linalg.cross")
    a, b = a.broadcast_to(shape), b.broadcast_to(shape)
    if shape[ax] != 3:
        raise ValueError(f"linalg.cross: axis {axis} must have size 3 in both x1 and x2, got "
                         f"{shape[ax]}")
    u, v = moveaxis(a, ax, -1), moveaxis(b, ax, -1)
    parts = [ew.subtract(ew.multiply(u[..., i], v[..., j]), ew.multiply(u[..., j], v[..., i]))
             for i, j in ((1, 2), (2, 0), (0, 1))]
    return moveaxis(stack(parts, axis=-1), -1, ax)


def matrix_power(x: object, n: int, /) -> Tensor:
    """Each matrix of the square stack `x` to the integer power `n` (by repeated squaring);
    n = 0 gives identities, negative n powers of the inverse.

        pk.linalg.matrix_power(a, 3)
    """
    t = ew.as_tensor(x, "linalg.matrix_power: x")
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ValueError(f"linalg.matrix_power: x must be a stack of square matrices, got "
                         f"shape {t.shape}")
    power = _int(n, "matrix_power", "n")
    if power == 0:  # identities: a zero gradient (PyTorch's), recorded so backward() runs
        size = t.shape[-1]
        return differentiable("linalg.matrix_power", (t,),
                              lambda a: eye(size, dtype=a.dtype).broadcast_to(a.shape).copy(),
                              lambda a, out: [lambda g: (zeros_like(a),)], complex_ok=True)
    if power < 0:
        t = inv(t)
        power = -power
    result = None
    base = t
    while True:
        if power & 1:
            result = base if result is None else _matmul(result, base)
        power >>= 1
        if not power:
            break
        base = _matmul(base, base)
    assert result is not None
    return result.copy() if result is t else result


def _int(value: object, op: str, name: str) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"linalg.{op}: {name} must be an int, got {value!r}")
    return operator.index(value)  # type: ignore[arg-type]
