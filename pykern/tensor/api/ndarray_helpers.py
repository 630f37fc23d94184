"""Helpers of numpy's ndarray methods on tensors (`pykern.tensor.api.ndarray_methods`)."""

from __future__ import annotations

from pykern.linalg.products import diagonal as _last_two_diagonal
from pykern.tensor.index import manipulation
from pykern.tensor.core.tensor import Tensor, normalize_axis


def diagonal(t: Tensor, offset: int, axis1: int, axis2: int) -> Tensor:
    """numpy's `diagonal`: the planes (axis1, axis2) moved last, then their diagonals."""
    a1 = normalize_axis(axis1, t.ndim, "axis1", op="diagonal")
    a2 = normalize_axis(axis2, t.ndim, "axis2", op="diagonal")
    if a1 == a2:
        raise ValueError("diagonal: axis1 and axis2 cannot be the same")
    planes = manipulation.moveaxis(t, (a1, a2), (-2, -1))
    return _last_two_diagonal(planes, offset=offset)
