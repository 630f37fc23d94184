"""`t.size`: numpy's element count, an int, which PyTorch code can also call.

numpy's `a.size` is an int attribute; PyTorch's `t.size()` is a method that returns the shape
(`t.size(dim)` one dimension's length). A pk.Tensor's `size` is a `Size`: an int (the number of
elements, in arithmetic, comparisons, `range`, formatting, pickling and numpy calls exactly
as numpy's) that answers a call as PyTorch's method does, so both kinds of code run unchanged:

    t = pk.zeros((2, 3))
    t.size == 6, t.size + 1      # numpy: 6 elements
    B, T = t.size()              # PyTorch: the shape (2, 3)
    t.size(-1)                   # 3
"""

from __future__ import annotations

import operator
from typing import Any

_CACHE_LIMIT = 4096  # distinct shapes kept; past it the cache starts again


class Size(int):
    """The number of elements of a tensor of a given shape (see the module's docstring).
    `size()` gives the shape, a tuple of ints; `size(dim)` the length of dimension `dim`
    (negative counts from the end; IndexError outside the tensor's dimensions, as
    PyTorch)."""

    _shape: tuple[int, ...]

    def __new__(cls, shape: tuple[int, ...]) -> Size:
        n = 1
        for s in shape:
            n *= s
        self = super().__new__(cls, n)
        self._shape = tuple(int(s) for s in shape)
        return self

    def __call__(self, dim: Any = None) -> Any:
        if dim is None:
            return self._shape
        ndim = len(self._shape)
        d = operator.index(dim)
        if not -ndim <= d < ndim:
            raise IndexError(f"size(): dimension {dim} is out of range for a tensor of "
                             f"{ndim} dimension(s)")
        return self._shape[d]

    def __reduce__(self) -> tuple[Any, tuple]:
        return int, (int(self),)  # pickled and copied as the plain number


_BY_SHAPE: dict[tuple[int, ...], Size] = {}


def size_of(shape: tuple[int, ...]) -> Size:
    """The `Size` of `shape` (one object per shape, made once: `t.size` is read often)."""
    found = _BY_SHAPE.get(shape)
    if found is None:
        if len(_BY_SHAPE) >= _CACHE_LIMIT:
            _BY_SHAPE.clear()
        found = _BY_SHAPE[shape] = Size(shape)
    return found
