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

from . import ir
from .dtypes import ArrayType, DType
from .frontend.typerules import int_range
from .launch import bind_array, check_array, scalar_value
from .runtime.layout import BindingLayout
from .tensor import Tensor


@dataclass(frozen=True)
class _ScalarSlot:
    arg: int
    name: str
    type: DType
    field: int
    kind: type  # the Python type that needs no conversion
    lo: float
    hi: float


@dataclass(frozen=True)
class _ArraySlot:
    arg: int
    param: ir.Param
    dtype: DType
    ndim: int
    buffer: int  # position in the buffer list
    offset_field: int
    shape_fields: tuple[int, ...]
    stride_fields: tuple[int, ...]


class ArgBinder:
    """Binds the runtime arguments of one variant (constexpr arguments already removed)."""

    def __init__(self, kernel_name: str, params: tuple[ir.Param, ...], layout: BindingLayout):
        self.kernel_name = kernel_name
        self.layout = layout
        index = {f.name: i for i, f in enumerate(layout.fields)}
        buffer_pos = {slot.name: i for i, slot in enumerate(layout.buffers)}
        self.nbuffers = len(layout.buffers)
        self.scalars: list[_ScalarSlot] = []
        self.arrays: list[_ArraySlot] = []
        for i, p in enumerate(params):
            t = p.type
            if isinstance(t, ArrayType):
                self.arrays.append(_ArraySlot(
                    i, p, t.dtype, t.ndim, buffer_pos[p.name], index[f"{p.name}.offset"],
                    tuple(index[f"{p.name}.shape{k}"] for k in range(t.ndim)),
                    tuple(index[f"{p.name}.stride{k}"] for k in range(t.ndim))))
            else:
                kind = float if t.is_float else bool if t.kind == "b" else int
                lo, hi = (-np.inf, np.inf) if t.is_float else (0, 1) if t.kind == "b" \
                    else int_range(t)
                self.scalars.append(_ScalarSlot(i, p.name, t, index[p.name], kind, lo, hi))
        self.template = [0] * len(layout.fields)

    def bind(self, args: list) -> tuple[bytearray, list, list[tuple[np.ndarray, Tensor]]]:
        """The packed block, the buffers in binding order (debug buffer slot left None) and the
        (numpy array, tensor) pairs to copy back after the launch."""
        values = self.template.copy()
        buffers: list = [None] * self.nbuffers
        copy_back: list[tuple[np.ndarray, Tensor]] = []
        for s in self.scalars:
            v = args[s.arg]
            if type(v) is s.kind and s.lo <= v <= s.hi:
                values[s.field] = v
            else:
                values[s.field] = scalar_value(self.kernel_name, s.name, s.type, v)
        for a in self.arrays:
            t = args[a.arg]
            if not (type(t) is Tensor and t.dtype is a.dtype and len(t.shape) == a.ndim):
                check_array(self.kernel_name, a.param.name, a.param.type,  # type: ignore[arg-type]
                            t)
                bound = bind_array(a.param, t)
                if bound.copy_back_to is not None:
                    copy_back.append((bound.copy_back_to, bound.tensor))
                t = bound.tensor
            buffers[a.buffer] = t.buffer
            values[a.offset_field] = t.offset
            for f, v in zip(a.shape_fields, t.shape):
                values[f] = v
            for f, v in zip(a.stride_fields, t.element_strides):
                values[f] = v
        return self.layout.pack(values), buffers, copy_back
