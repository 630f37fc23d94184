"""Mixed precision: `pk.autocast(dtype=pk.bf16)` runs the matrix products of f32 tensors in a
16-bit float on the matrix engine, as PyTorch's autocast does.

Inside the block, `matmul` (and so `pk.nn.Linear` and `F.linear`), `conv2d`,
`conv_transpose2d` and `attention` convert their f32 operands to the autocast dtype (the
conversions are recorded, so gradients reach the f32 tensors, the master weights, in f32) and
accumulate in f32. matmul gives f32 results, the others the 16-bit dtype, as PyTorch's do;
every other op runs in the dtype it is given, so normalisations, softmax and losses stay in
f32. Operands of other dtypes are left alone.
The mode is per thread, like grad mode.

Inside a block, the conversion of a weight (a leaf tensor that requires grad) is made once and
kept until the block ends, as PyTorch's autocast cache does: a weight used by several matrix
products (the forward pass and its backward, tied embeddings) is converted once. An entry is
used only while the weight's memory is at the version it was converted from, so a weight
written in place meanwhile (an optimizer's step inside the block) is converted again. Not
inside a `pk.compile` recording, whose replays must convert the weight each call.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

from pykern.autograd.mode import is_grad_enabled
from pykern.autograd.version import version_of
from pykern.jit import compiling
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
        if _state.dtype is None:  # the outermost block ended: its conversions go
            _cache().clear()


def _cache() -> dict[int, tuple[Any, int, DType, Any]]:
    """This thread's converted weights: id -> (weight, version, dtype, conversion)."""
    cache = getattr(_state, "cache", None)
    if cache is None:
        cache = _state.cache = {}
    return cache


def _converted(t: Any, low: DType) -> Any:
    """`t.astype(low)`, from the cache for a weight (see the module docstring)."""
    if not (t.requires_grad and t.grad_fn is None and is_grad_enabled()) \
            or compiling.ACTIVE[0] is not None:
        return t.astype(low)
    cache = _cache()
    version = version_of(t.buffer)
    hit = cache.get(id(t))
    if hit is not None and hit[0] is t and hit[1] == version and hit[2] is low:
        return hit[3]
    out = t.astype(low)
    cache[id(t)] = (t, version, low, out)
    return out


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
    return tuple(_converted(t, low) if t.dtype == dt.f32 else t for t in tensors)
