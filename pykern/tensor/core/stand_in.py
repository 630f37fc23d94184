"""Stand-in tensors: a small zero tensor bound to a kernel parameter that the launch does not
read (no bias, no weight, an unused scratch slot), so that every kernel keeps one signature.

One per device, dtype and shape, made on first use: a tensor of one device cannot be bound on
another, so the cache is keyed on the current device (a process that changes devices gets one
for each).
"""

import functools

from pykern.lang.dtypes import DType
from pykern.runtime import get_device
from pykern.tensor.create.creation import fill
from pykern.tensor.core.tensor import Tensor, empty


def stand_in(dtype: DType, shape: tuple[int, ...] = (1,)) -> Tensor:
    """A zero tensor of `dtype` and `shape` on the current device, shared by every caller: never
    write to it."""
    return _made(get_device(), dtype, tuple(shape))


@functools.lru_cache(maxsize=None)
def _made(device: object, dtype: DType, shape: tuple[int, ...]) -> Tensor:
    t = empty(shape, dtype)
    fill(t, 0)
    return t
