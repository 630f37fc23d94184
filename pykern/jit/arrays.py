"""What a kernel binds as an array argument: any object that offers a device buffer, a shape,
a dtype, element strides and an offset (`DeviceArray`), and numpy arrays, which the layer that
owns an array type converts (`from_host`, `wrap_host`).

The jit knows no array type of its own: `pk.Tensor` registers itself here when its module is
imported (`register_array_type`), and so can any other type that offers the protocol and keeps
its elements in a runtime buffer (a PyTorch device's tensors).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from pykern.lang.dtypes import DType


class DeviceArray(Protocol):
    """The array protocol of kernel arguments: elements of `dtype` in `buffer` (a runtime
    buffer), element (i0, i1, ...) at `offset + sum(i_k * element_strides[k])`."""

    buffer: Any
    shape: tuple[int, ...]
    dtype: DType
    offset: int

    @property
    def element_strides(self) -> tuple[int, ...]: ...


ARRAY_TYPES: set[type] = set()
"""The registered array types (exact types: the binders test `type(value) in ARRAY_TYPES`)."""

_NAMES: dict[type, str] = {}
_FROM_HOST: list[Callable[[np.ndarray], Any]] = []
_WRAP_HOST: list[Callable[[np.ndarray], Any]] = []


def register_array_type(cls: type, name: str, from_host: Callable[[np.ndarray], Any],
                        wrap_host: Callable[[np.ndarray], Any | None]) -> None:
    """Registers `cls` as a device array type, called `name` in errors; `from_host(a)` copies a
    numpy array into a new one on the current device, `wrap_host(a)` gives one over the
    array's own memory where the device can (the host), else None. The first registration's
    converters are the ones numpy arguments take."""
    ARRAY_TYPES.add(cls)
    _NAMES[cls] = name
    _FROM_HOST.append(from_host)
    _WRAP_HOST.append(wrap_host)


def type_name(value: object) -> str:
    """How errors name an array argument's type (`pk.Tensor`, for its subclasses too)."""
    return next((name for cls, name in _NAMES.items() if isinstance(value, cls)),
                type(value).__name__)


def is_device_array(value: object) -> bool:
    """Whether `value` binds as a device array: an object of a registered type (or of a
    subclass of one, such as pk.nn.Parameter)."""
    return type(value) in ARRAY_TYPES or isinstance(value, tuple(ARRAY_TYPES))


def from_host(array: np.ndarray) -> Any:
    """A device array holding a copy of `array` (on the current device)."""
    return _FROM_HOST[0](array)


def wrap_host(array: np.ndarray) -> Any:
    """A device array over `array`'s own memory, or None where the device cannot."""
    return _WRAP_HOST[0](array)
