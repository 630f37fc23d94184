"""`pk.Tensor`: an n-d array living in a device buffer, and the functions that create one.

A tensor is a view: a buffer plus shape, strides and offset (both in elements), so transposes
and slices can share memory. Launches that write it are queued; `numpy()` waits for them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import dtypes as dt
from .dtypes import DType
from .runtime import get_device


def _shape(shape: int | Sequence[int]) -> tuple[int, ...]:
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if any(int(s) < 0 for s in shape):
        raise ValueError(f"negative dimension in shape {shape}")
    return tuple(int(s) for s in shape)


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides in elements."""
    strides, step = [], 1
    for s in reversed(shape):
        strides.append(step)
        step *= max(s, 1)
    return tuple(reversed(strides))


class Tensor:
    """An array on the device. Create one with `pk.asarray`, `pk.empty`, `pk.zeros`, ...

    Attributes: `shape`, `dtype` (a pk dtype), `ndim`, `size`, `strides` (bytes, as numpy),
    `device`. `t.numpy()` or `np.asarray(t)` copies it back to the host.
    """

    __slots__ = ("buffer", "shape", "dtype", "_strides", "offset", "__weakref__")

    def __init__(self, buffer: object, shape: tuple[int, ...], dtype: DType,
                 strides: tuple[int, ...] | None = None, offset: int = 0):
        self.buffer = buffer
        self.shape = shape
        self.dtype = dtype
        self._strides = contiguous_strides(shape) if strides is None else strides
        self.offset = offset

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def element_strides(self) -> tuple[int, ...]:
        """Strides in elements (what kernels use)."""
        return self._strides

    @property
    def strides(self) -> tuple[int, ...]:
        """Strides in bytes, as numpy reports them."""
        return tuple(s * self.dtype.itemsize for s in self._strides)

    @property
    def device(self) -> object:
        return self.buffer.device  # type: ignore[attr-defined]

    @property
    def is_contiguous(self) -> bool:
        return self._strides == contiguous_strides(self.shape)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def numpy(self) -> np.ndarray:
        """A numpy copy of the tensor; waits for the launches that write it."""
        out = np.empty(self.shape, self.dtype.numpy)
        if self.size == 0:
            return out
        if self.is_contiguous:
            self.buffer.read_into(out, self.offset * self.dtype.itemsize)  # type: ignore
            return out
        # a strided view: fetch the span it covers and let numpy gather
        span = self.offset + 1 + sum((s - 1) * st for s, st in zip(self.shape, self._strides))
        flat = np.empty(span, self.dtype.numpy)
        self.buffer.read_into(flat, 0)  # type: ignore[attr-defined]
        view = np.lib.stride_tricks.as_strided(flat[self.offset:], self.shape, self.strides)
        return view.copy()

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def __repr__(self) -> str:
        body = np.array2string(self.numpy(), separator=", ", prefix="pk.Tensor(")
        return f"pk.Tensor({body}, dtype={self.dtype!r})"


def empty(shape: int | Sequence[int], dtype: object = dt.f32) -> Tensor:
    """An uninitialised tensor. `pk.empty((2, 3), pk.f32)`."""
    d = dt.as_dtype(dtype)
    shape = _shape(shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * d.itemsize
    return Tensor(get_device().create_buffer(nbytes), shape, d)


def zeros(shape: int | Sequence[int], dtype: object = dt.f32) -> Tensor:
    """A tensor of zeros."""
    return asarray(np.zeros(_shape(shape), dt.as_dtype(dtype).numpy))


def asarray(obj: object, dtype: object = None) -> Tensor:
    """A tensor holding a copy of `obj` (a numpy array, a nested list, a scalar or a Tensor)."""
    if isinstance(obj, Tensor):
        if dtype is None or dt.as_dtype(dtype) == obj.dtype:
            return obj
        obj = obj.numpy()
    d = None if dtype is None else dt.as_dtype(dtype)
    arr = np.asarray(obj, dtype=None if d is None else d.numpy)
    if d is None:
        if arr.dtype == np.float64 and not isinstance(obj, np.ndarray):
            arr = arr.astype(np.float32)  # Python floats default to f32, as in kernels
        elif arr.dtype == np.int64 and not isinstance(obj, np.ndarray):
            arr = arr.astype(np.int32)
        try:
            d = dt.from_numpy(arr.dtype)
        except KeyError:
            raise TypeError(f"numpy dtype {arr.dtype} has no pykern equivalent") from None
    arr = np.ascontiguousarray(arr)
    t = Tensor(get_device().create_buffer(arr.nbytes), arr.shape, d)
    if arr.nbytes:
        t.buffer.upload(arr)  # type: ignore[attr-defined]
    return t


def empty_like(t: Tensor | np.ndarray, dtype: object = None) -> Tensor:
    return empty(t.shape, t.dtype if dtype is None else dtype) if isinstance(t, Tensor) else \
        empty(t.shape, dt.from_numpy(t.dtype) if dtype is None else dtype)


def zeros_like(t: Tensor | np.ndarray, dtype: object = None) -> Tensor:
    return zeros(t.shape, t.dtype if dtype is None else dtype) if isinstance(t, Tensor) else \
        zeros(t.shape, dt.from_numpy(t.dtype) if dtype is None else dtype)
