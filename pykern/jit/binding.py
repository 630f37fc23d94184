"""Turning a launch's arguments into an argument block and a buffer list, fast.

An `ArgBinder` is built once per compiled variant from its parameters and binding layout: for
each parameter it knows which fields of the block it fills. Binding then runs a short loop
with cheap checks for the common cases (a `pk.Tensor` of the right dtype and ndim, a Python
float or int in range); anything else goes through the thorough checks of `launch`, which
convert numpy arrays or raise `pk.LaunchError` naming the parameter.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pykern import ir
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import ArrayType, DType
from pykern.frontend.typerules import float_overflow, int_range
from pykern.jit.arguments import (bind_array, check_array, check_tiles, complex_fields,
                                  scalar_value)
from pykern.passes.complex import lowered_param
from pykern.runtime.layout import BindingLayout
from pykern.spirv.binding_plan import HEADER_FIELDS, block_fields
from pykern.jit.arrays import ARRAY_TYPES, DeviceArray


@dataclass(frozen=True)
class _ScalarSlot:
    arg: int
    name: str
    type: DType
    kind: type  # the Python type that needs no conversion
    lo: float
    hi: float


@dataclass(frozen=True)
class _ArraySlot:
    arg: int
    param: ir.Param
    dtype: DType
    ndim: int

    @property
    def parts(self) -> bool:
        """Complex: the kernel sees a real array of one more axis (`complex_fields`)."""
        return self.dtype.is_complex


_HEADER_COUNT = len(HEADER_FIELDS)


def scalar_values(kernel_name: str, slot: _ScalarSlot, value: object) -> tuple:
    """The block values of a scalar argument off the fast path: one, or a complex one's two
    parts (the lowered kernel's two parameters)."""
    v = scalar_value(kernel_name, slot.name, slot.type, value)
    return (v.real, v.imag) if isinstance(v, complex) else (v,)


def bound_tensor(kernel_name: str, slot: _ArraySlot, value: object,
                 copy_back: list[tuple[np.ndarray, DeviceArray]]) -> DeviceArray:
    """The tensor an array argument off the binders' fast path (not a tensor of the slot's
    dtype and ndim) binds as: checked (a LaunchError naming the parameter), numpy arrays
    converted, and a copy back after the launch added to `copy_back` where one is needed."""
    check_array(kernel_name, slot.param.name, slot.param.type, value)  # type: ignore[arg-type]
    bound = bind_array(kernel_name, slot.param, value)  # type: ignore[arg-type]
    if bound.copy_back_to is not None:
        copy_back.append((bound.copy_back_to, bound.tensor))
    return bound.tensor


def _scalar_slot(arg: int, name: str, t: DType) -> _ScalarSlot:
    """The slot of a scalar parameter: the Python type and range that need no checks."""
    kind = float if t.is_float else bool if t.kind == "b" else int
    if t == dt.bf16 or t.is_complex:
        kind = type(None)  # no fast path: every value is rounded to bf16 by scalar_value
    if t.is_complex:
        return _ScalarSlot(arg, name, t, kind, 0.0, 0.0)
    if t.is_float:  # finite values within range: inf, nan and the rest are checked
        hi = float(np.nextafter(float_overflow(t), 0.0))
        lo = -hi
    else:
        lo, hi = (0, 1) if t.kind == "b" else int_range(t)
    return _ScalarSlot(arg, name, t, kind, lo, hi)


class ArgBinder:
    """Binds the runtime arguments of one variant (constexpr arguments already removed).

    The argument block's fields are, in order (`pykern.spirv.binding_plan.block_fields`): the grid
    and base fields, each scalar parameter, then for each array parameter its offset, shape
    and strides; buffers follow the array parameters, then the debug buffer if any. The binder
    relies on that order to build the field list by appending, and checks it once, here."""

    def __init__(self, kernel_name: str, params: tuple[ir.Param, ...], layout: BindingLayout):
        self.kernel_name = kernel_name
        self.layout = layout
        self.scalars: list[_ScalarSlot] = []
        self.arrays: list[_ArraySlot] = []
        for i, p in enumerate(params):
            t = p.type
            if isinstance(t, ArrayType):
                self.arrays.append(_ArraySlot(i, p, t.dtype, t.ndim))
            else:
                self.scalars.append(_scalar_slot(i, p.name, t))
        array_names = [a.param.name for a in self.arrays]
        lowered = tuple(q for p in params for q in lowered_param(p))
        if [name for name, _ in block_fields(lowered)] != [f.name for f in layout.fields] or \
                [s.name for s in layout.buffers[:len(self.arrays)]] != array_names:
            raise AssertionError(f"argument block of {kernel_name} is not laid out as the "
                                 "binder expects")
        self.extra_buffers = [None] * (len(layout.buffers) - len(self.arrays))
        self.pack = layout.packer.pack
        # what `bind` asks of each array parameter, computed once (enum flags are slow to test)
        self._array_plan = [(a, a.arg, a.dtype, a.ndim, bool(a.param.access & ir.Access.TILES),
                             a.parts) for a in self.arrays]

    def bind(self, args: list) -> tuple[bytes, list, list[tuple[np.ndarray, DeviceArray]]]:
        """The packed block, the buffers in binding order (the debug buffer's slot left None)
        and the (numpy array, tensor) pairs to copy back after the launch."""
        values: list = [0] * _HEADER_COUNT  # grid and base: the runtime fills them in
        for s in self.scalars:
            v = args[s.arg]
            if type(v) is s.kind and s.lo <= v <= s.hi:
                values.append(v)
            else:
                values += scalar_values(self.kernel_name, s, v)
        buffers: list = []
        copy_back: list[tuple[np.ndarray, DeviceArray]] = []
        for a, arg, dtype, ndim, tiles, parts in self._array_plan:
            t = args[arg]
            if not (type(t) in ARRAY_TYPES and t.dtype is dtype and len(t.shape) == ndim):
                t = bound_tensor(self.kernel_name, a, t, copy_back)
            if tiles:
                check_tiles(self.kernel_name, a.param.name, t)
            buffers.append(t.buffer)
            if parts:
                values += complex_fields(t)
                continue
            values.append(t.offset)
            values += t.shape
            values += t.element_strides
        if self.extra_buffers:
            buffers += self.extra_buffers
        return self.pack(*values), buffers, copy_back
