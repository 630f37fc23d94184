"""numpy's ndarray methods that `pk.Tensor` has besides its own (a base class of Tensor):
`t.dot(u)`, `t.fill(v)`, `t.nonzero()`, `t.argsort()`, `t.sort()`, `t.cumsum()`,
`t.cumprod()`, `t.trace()`, `t.diagonal()`, `t.ptp()`, `t.repeat()`, `t.take()`,
`t.searchsorted()`, each with numpy's signature and meaning (`sort` and `fill` work in place,
as numpy's do), running pykern's ops on the tensor's device.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any


# The op modules these methods run (ndarray_helpers, numpy_functions, numpy_ufuncs, reduction,
# searching, sort): they import pykern.tensor.core.tensor, whose Tensor derives from this class,
# so that module binds them here once it has defined Tensor and imported them (`LIBRARY`).
LIBRARY = SimpleNamespace()


def _ops() -> Any:
    return LIBRARY


class NdarrayMethods:
    """numpy's ndarray methods on pk.Tensor (see the module's docstring)."""

    __slots__ = ()

    def dot(self, b: object, out: Any = None) -> Any:
        """numpy's `a.dot(b)`: the matrix product for 1-D and 2-D operands, the elementwise
        product with a scalar (a new tensor, or `out`)."""
        return _ops().numpy_functions.FUNCTIONS["dot"](self, b, out)

    def fill(self, value: object) -> None:
        """Sets every element to `value`, in place (numpy's `a.fill`)."""
        self[...] = value  # type: ignore[index]

    def nonzero(self) -> tuple[Any, ...]:
        """The indices of the non-zero elements, one tensor per dimension (numpy's)."""
        return _ops().searching.nonzero(self)

    def argsort(self, axis: int | None = -1, kind: object = None, order: object = None, *,
                descending: bool = False, stable: object = None) -> Any:
        """The indices that sort the tensor along `axis` (flattened for None); stable."""
        x = self.reshape(-1) if axis is None else self  # type: ignore[attr-defined]
        return _ops().sort.argsort(x, -1 if axis is None else axis, descending=descending)

    def sort(self, axis: int = -1, kind: object = None, order: object = None, *,
             descending: bool = False, stable: object = None) -> None:
        """Sorts the tensor along `axis` in place, as numpy's `a.sort()` (`pk.sort(t)` returns a
        sorted copy instead)."""
        self[...] = _ops().sort.sort(self, axis, descending=descending)  # type: ignore

    def cumsum(self, axis: int | None = None, dtype: object = None, out: Any = None) -> Any:
        """Cumulative sum along `axis` (the flattened tensor for None), as numpy's."""
        return _ops().numpy_functions.FUNCTIONS["cumsum"](self, axis, dtype, out)

    def cumprod(self, axis: int | None = None, dtype: object = None, out: Any = None) -> Any:
        """Cumulative product along `axis` (the flattened tensor for None), as numpy's."""
        return _ops().numpy_functions.FUNCTIONS["cumprod"](self, axis, dtype, out)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
        """The `offset`-th diagonal of the planes (axis1, axis2), last in the result, as
        numpy's (a copy)."""
        return _ops().ndarray_helpers.diagonal(self, offset, axis1, axis2)

    def trace(self, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: object = None,
              out: Any = None) -> Any:
        """The sum of the `offset`-th diagonal of the planes (axis1, axis2), as numpy's."""
        ops = _ops()
        result = ops.reduction.sum(self.diagonal(offset, axis1, axis2), -1, dtype=dtype)
        return ops.numpy_ufuncs.into(ops.numpy_ufuncs.single_out("Tensor.trace", out), result)

    def ptp(self, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
        """Peak to peak: max - min along `axis`."""
        ops = _ops()
        result = ops.reduction.max(self, axis, keepdims=keepdims) - \
            ops.reduction.min(self, axis, keepdims=keepdims)
        return ops.numpy_ufuncs.into(ops.numpy_ufuncs.single_out("Tensor.ptp", out), result)

    def repeat(self, repeats: Any, axis: int | None = None) -> Any:
        """Each element repeated `repeats` times (an int or one count per element) along
        `axis` (the flattened tensor for None), as numpy's."""
        return _ops().numpy_functions.FUNCTIONS["repeat"](self, repeats, axis)

    def take(self, indices: Any, axis: int | None = None, out: Any = None,
             mode: str = "raise") -> Any:
        """The elements at `indices` along `axis` (of the flattened tensor for None)."""
        return _ops().numpy_functions.FUNCTIONS["take"](self, indices, axis, out, mode)

    def searchsorted(self, v: Any, side: str = "left", sorter: Any = None) -> Any:
        """Where `v`'s values would go in this sorted 1-D tensor to keep it sorted."""
        return _ops().searching.searchsorted(self, v, side=side, sorter=sorter)
