"""Mixed precision: `pk.autocast(dtype=pk.bf16)` runs the matrix products of f32 tensors in a
16-bit float on the matrix engine, as PyTorch's autocast does.

Inside the block, `matmul` (and so `pk.nn.Linear` and `F.linear`), `conv2d`,
`conv_transpose2d` and `attention` convert their f32 operands to the autocast dtype (the
conversions are recorded, so gradients reach the f32 tensors, the master weights, in f32) and
accumulate in f32. matmul gives f32 results, the others the 16-bit dtype, as PyTorch's do;
every other op runs in the dtype it is given, so normalisations, softmax and losses stay in
f32. Operands of other dtypes are left alone.
The mode is per thread, like grad mode.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType

_state = threading.local()
LOW_DTYPES = (dt.f16, dt.bf16)


def autocast_dtype() -> DType | None:
    """The 16-bit dtype matrix products run in now, or None outside `pk.autocast`."""
    return getattr(_state, "dtype", None)


class autocast(contextlib.ContextDecorator):  # noqa: N801 (PyTorch's name)
    """`with pk.autocast(dtype=pk.bf16): loss = model(x)...` (or a decorator). `device_type`
    is accepted for PyTorch's signature (`pk.autocast("cuda", dtype=...)`) and ignored: the
    block applies on every device. `enabled=False` turns autocast off inside the block."""

    def __init__(self, device_type: str | None = None, dtype: object = dt.bf16,
                 enabled: bool = True) -> None:
        if device_type is not None and not isinstance(device_type, str):
            raise TypeError(f"autocast: device_type must be a string or None, not "
                            f"{type(device_type).__name__} (pass the dtype as dtype=)")
        low = dt.as_dtype(dtype)
        if low not in LOW_DTYPES:
            raise TypeError(f"autocast: dtype must be pk.f16 or pk.bf16, not {low.name}")
        self.dtype = low if enabled else None
        self._previous: list[DType | None] = []

    def __enter__(self) -> None:
        self._previous.append(autocast_dtype())
        _state.dtype = self.dtype

    def __exit__(self, *exc: object) -> None:
        _state.dtype = self._previous.pop()


def low_precision(*tensors: Any) -> tuple[Any, ...] | None:
    """The tensors with their f32 ones converted to the autocast dtype, when autocast is on and
    every one is f32 or already of that dtype (one at least f32); None otherwise (the op then
    runs as usual)."""
    low = autocast_dtype()
    if low is None:
        return None
    dtypes = [getattr(t, "dtype", None) for t in tensors]
    if dt.f32 not in dtypes or not all(d in (dt.f32, low) for d in dtypes):
        return None
    return tuple(t.astype(low) if t.dtype == dt.f32 else t for t in tensors)
