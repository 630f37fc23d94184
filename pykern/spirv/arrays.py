"""Array element access: parameters (storage buffers with launch-time shape and strides) and
declared arrays (`pk.shared` in Workgroup memory, `pk.local` in Private memory, row-major with
a constant shape). Lowering reaches both through the same `ArrayAccess` interface.

How an element sits in memory may differ from its value (`Encoding`): a bool_ buffer element is
a byte; a float array that takes atomics the device cannot do on floats is kept as its bit
pattern in an unsigned int (compare-and-swap loops need integers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

from pykern import ir
from pykern.lang.dtypes import BOOL as BOOL_KIND
from pykern.lang.dtypes import DType

from pykern.spirv.function import FunctionBuilder
from pykern.spirv.encoding.grammar import Scope, StorageClass
from pykern.spirv.binding_plan import offset_field, shape_field, stride_field
from pykern.spirv.encoding.module import ModuleBuilder
from pykern.spirv.resources import Resources
from pykern.runtime.feature import Feature
from pykern.spirv.target import Target
from pykern.spirv.typemap import BOOL_ELEMENT, value_type
from pykern.spirv.encoding.types import (
    BOOL, I32, U32, FixedArrayType, FloatType, IntType, PointerType, ScalarType)

# ---------------------------------------------------------------- encodings


class Encoding(Protocol):
    stored: ScalarType

    def decode(self, fn: FunctionBuilder, module: ModuleBuilder, raw: int) -> int: ...

    def encode(self, fn: FunctionBuilder, module: ModuleBuilder, value: int) -> int: ...


@dataclass(frozen=True)
class Plain:
    """The value as it is."""

    stored: ScalarType

    def decode(self, fn: FunctionBuilder, module: ModuleBuilder, raw: int) -> int:
        return raw

    def encode(self, fn: FunctionBuilder, module: ModuleBuilder, value: int) -> int:
        return value


@dataclass(frozen=True)
class BoolAsByte:
    """A bool in a buffer: the byte 0 or 1 (numpy's bool), read back as `!= 0`."""

    stored: ScalarType = BOOL_ELEMENT

    def decode(self, fn: FunctionBuilder, module: ModuleBuilder, raw: int) -> int:
        return fn.i_not_equal(BOOL, fn.u_convert(U32, raw), module.constant(U32, 0))

    def encode(self, fn: FunctionBuilder, module: ModuleBuilder, value: int) -> int:
        word = fn.select(U32, value, module.constant(U32, 1), module.constant(U32, 0))
        return fn.u_convert(self.stored, word)


@dataclass(frozen=True)
class FloatAsBits:
    """A float kept as the unsigned int of its bits."""

    value: FloatType

    @property
    def stored(self) -> IntType:
        return IntType(self.value.bits, False)

    def decode(self, fn: FunctionBuilder, module: ModuleBuilder, raw: int) -> int:
        return fn.bitcast(self.value, raw)

    def encode(self, fn: FunctionBuilder, module: ModuleBuilder, value: int) -> int:
        return fn.bitcast(self.stored, value)


# ---------------------------------------------------------------- arrays


class ArrayAccess(Protocol):
    """What lowering needs of an array, wherever it lives."""

    dtype: DType
    encoding: Encoding
    scope: Scope  # of atomics on its elements
    private: bool  # a `pk.local` array

    def pointer(self, fn: FunctionBuilder, indices: tuple[int, ...]) -> int: ...

    def shape(self, fn: FunctionBuilder, axis: int) -> int: ...

    def row_stride(self, fn: FunctionBuilder) -> int: ...


def load(fn: FunctionBuilder, module: ModuleBuilder, array: ArrayAccess,
         indices: tuple[int, ...]) -> int:
    """The value of `array[indices]`."""
    raw = fn.load(array.encoding.stored, array.pointer(fn, indices))
    return array.encoding.decode(fn, module, raw)


def store(fn: FunctionBuilder, module: ModuleBuilder, array: ArrayAccess,
          indices: tuple[int, ...], value: int) -> None:
    """`array[indices] = value`."""
    fn.store(array.pointer(fn, indices), array.encoding.encode(fn, module, value))


class ParamArray:
    """An array parameter: element `offset + sum(index[k] * stride[k])` of its storage buffer,
    in wrapping i32 arithmetic; offset, shape and strides come from the argument block."""

    scope = Scope.Device
    private = False

    def __init__(self, module: ModuleBuilder, resources: Resources, param: ir.Param,
                 encoding: Encoding) -> None:
        self._module, self._resources, self.name = module, resources, param.name
        self.dtype: DType = param.type.dtype  # type: ignore[union-attr]
        self._ndim: int = param.type.ndim  # type: ignore[union-attr]
        self.encoding = encoding

    def pointer(self, fn: FunctionBuilder, indices: tuple[int, ...]) -> int:
        address = self._resources.load_field(fn, offset_field(self.name))
        for axis, index in enumerate(indices):
            stride = self._resources.load_field(fn, stride_field(self.name, axis))
            address = fn.i_add(I32, address, fn.i_mul(I32, index, stride))
        stored = self.encoding.stored
        buffer = self._resources.buffer_variable(self.name, stored, self.dtype.itemsize)
        return fn.access_chain(PointerType(StorageClass.StorageBuffer, stored), buffer,
                               self._module.constant(I32, 0), address)

    def shape(self, fn: FunctionBuilder, axis: int) -> int:
        return self._resources.load_field(fn, shape_field(self.name, axis))

    def row_stride(self, fn: FunctionBuilder) -> int:
        """The stride of the second-to-last dimension, in elements (tiles' rows)."""
        return self._resources.load_field(fn, stride_field(self.name, self._ndim - 2))


class DeclaredArray:
    """A `pk.shared` (Workgroup) or `pk.local` (Private: per invocation, and reachable from
    device functions, which a Function variable would not be) array, row-major."""

    scope = Scope.Workgroup

    def __init__(self, module: ModuleBuilder, decl: ir.ArrayDecl, encoding: Encoding) -> None:
        self._module, self._decl = module, decl
        self.dtype = decl.dtype
        self.encoding = encoding
        self._storage = (StorageClass.Workgroup if decl.space == ir.MemorySpace.SHARED
                         else StorageClass.Private)
        self.private = self._storage == StorageClass.Private  # a pk.local array
        self._variable: int | None = None
        # row-major strides, in elements
        self._strides = [math.prod(decl.shape[k + 1:]) for k in range(len(decl.shape))]

    def pointer(self, fn: FunctionBuilder, indices: tuple[int, ...]) -> int:
        address = None
        for index, stride in zip(indices, self._strides, strict=True):
            term = index if stride == 1 else fn.i_mul(I32, index,
                                                       self._module.constant(I32, stride))
            address = term if address is None else fn.i_add(I32, address, term)
        assert address is not None
        stored = self.encoding.stored
        return fn.access_chain(PointerType(self._storage, stored), self._declare(), address)

    def shape(self, fn: FunctionBuilder, axis: int) -> int:
        return self._module.constant(I32, self._decl.shape[axis])

    def row_stride(self, fn: FunctionBuilder) -> int:
        """The stride of the second-to-last dimension, in elements (tiles' rows)."""
        return self._module.constant(I32, self._strides[-2])

    def clear(self, fn: FunctionBuilder) -> None:
        """Stores zeros over the whole array (a `pk.local` one, at the kernel's start), beside
        its variable's zero initializer. Added when NVIDIA (580) seemed to read garbage from
        elements never written (random kernels); those kernels still mismatched with the
        stores, so the cause lay elsewhere (docs/testing.md, "Not yet worked around"), and
        what the stores guard against is not established."""
        fn.store(self._declare(), self._module.constant_null(self._array_type()))

    def _array_type(self) -> FixedArrayType:
        return FixedArrayType(self.encoding.stored, math.prod(self._decl.shape))

    def _declare(self) -> int:
        if self._variable is None:
            array_type = self._array_type()
            # pk.local arrays start at zero, as in the interpreter; Workgroup memory cannot
            # have an initializer in Vulkan 1.2, so pk.shared starts undefined
            zero = self._module.constant_null(array_type) if self.private else None
            self._variable = self._module.global_variable(self._storage, array_type,
                                                          self._decl.name, zero)
        return self._variable


def kernel_arrays(kernel: ir.Kernel, module: ModuleBuilder, resources: Resources,
                  target: Target) -> dict[str, ArrayAccess]:
    """Every array a kernel (and its device functions) can name, by name."""
    float_atomics: dict[str, set[ir.AtomicOp]] = {}
    for node in ir.walk(kernel):
        if isinstance(node, ir.Atomic) and node.type.is_float:
            float_atomics.setdefault(node.array, set()).add(node.op)
    arrays: dict[str, ArrayAccess] = {}
    for p in kernel.params:
        if p.is_array:
            native = _native_float_atomics(p.type.dtype, target)  # type: ignore[union-attr]
            ops = float_atomics.get(p.name, set())
            encoding = _encoding(p.type.dtype, bits=not ops <= native, buffer=True)  # type: ignore[union-attr]
            arrays[p.name] = ParamArray(module, resources, p, encoding)
    for decl in kernel.arrays:
        # shared float atomics always go through compare-and-swap: the device features for
        # native ones are not among those the runtime reports
        encoding = _encoding(decl.dtype, bits=decl.name in float_atomics, buffer=False)
        arrays[decl.name] = DeclaredArray(module, decl, encoding)
    return arrays


def _encoding(dtype: DType, bits: bool, buffer: bool) -> Encoding:
    ty = value_type(dtype)
    if dtype.kind == BOOL_KIND:
        return BoolAsByte() if buffer else Plain(ty)  # type: ignore[arg-type]
    if bits:
        assert isinstance(ty, FloatType)
        return FloatAsBits(ty)
    return Plain(ty)  # type: ignore[arg-type]


def _native_float_atomics(dtype: DType, target: Target) -> set[ir.AtomicOp]:
    """The float atomics a storage buffer of `dtype` can do natively on `target`."""
    feature = {32: Feature.FLOAT32_ATOMIC_ADD, 64: Feature.FLOAT64_ATOMIC_ADD}.get(dtype.bits)
    if dtype.is_float and feature in target.features:
        return {ir.AtomicOp.ADD}
    return set()
