"""A kernel's global variables: storage buffers, the argument block and builtin inputs.

Each is declared on first use, with its decorations, so a module only holds what its kernel
touches; every one declared is part of the entry point's interface (SPIR-V ≥ 1.4 lists all).
"""

from __future__ import annotations

from pykern import ir
from pykern.dtypes import BOOL as BOOL_KIND
from pykern.dtypes import DType
from pykern.runtime.layout import PUSH_CONSTANT, BindingLayout, BufferSlot

from .function import FunctionBuilder
from .grammar import BuiltIn, Decoration, StorageClass
from .layout import offset_field, stride_field
from .module import ModuleBuilder
from .typemap import FIELD_TYPES, element_type, storage_capabilities, value_type
from .types import BOOL, I32, U32, UVEC3, PointerType, RuntimeArrayType, ScalarType, StructType

DESCRIPTOR_SET = 0


class Resources:
    """Declares and addresses the global variables of one kernel's module."""

    def __init__(self, module: ModuleBuilder, kernel: ir.Kernel, layout: BindingLayout) -> None:
        self._module = module
        self._kernel = kernel
        self._layout = layout
        self._slots: dict[str, BufferSlot] = {b.name: b for b in layout.buffers}
        self._members = {f.name: index for index, f in enumerate(layout.fields)}
        self._block_storage = (StorageClass.PushConstant if layout.block == PUSH_CONSTANT
                               else StorageClass.Uniform)
        self._block: int | None = None
        self._buffers: dict[str, int] = {}
        self._inputs: dict[BuiltIn, int] = {}

    # ------------------------------------------------------------ argument block

    def load_field(self, fn: FunctionBuilder, name: str) -> int:
        """Loads argument-block field `name` (its type is `field_type(name)`)."""
        member = self._members[name]
        ty = self.field_type(name)
        pointer = fn.access_chain(PointerType(self._block_storage, ty), self._block_variable(),
                                  self._module.constant(I32, member))
        return fn.load(ty, pointer)

    def field_type(self, name: str) -> ScalarType:
        return FIELD_TYPES[self._layout.fields[self._members[name]].fmt]

    def load_scalar_param(self, fn: FunctionBuilder, param: ir.ScalarParam) -> int:
        """A scalar parameter's value; bools travel as a u32 0/1."""
        raw = self.load_field(fn, param.name)
        if value_type(param.type) == BOOL:
            return fn.i_not_equal(BOOL, raw, self._module.constant(U32, 0))
        return raw

    def _block_variable(self) -> int:
        if self._block is None:
            fields = self._layout.fields
            members = tuple(FIELD_TYPES[f.fmt] for f in fields)
            for ty in set(members):
                self._module.require(*storage_capabilities(self._block_storage, ty))
            block_type = StructType(members, tuple(f.offset for f in fields), block=True)
            self._block = self._module.global_variable(self._block_storage, block_type, "args")
            struct_id = self._module.type_id(block_type)
            self._module.name(struct_id, f"{self._kernel.name}_args")
            for index, f in enumerate(fields):
                self._module.member_name(struct_id, index, f.name)
            if self._block_storage == StorageClass.Uniform:
                self._module.decorate(self._block, Decoration.DescriptorSet, DESCRIPTOR_SET)
                self._module.decorate(self._block, Decoration.Binding, self._layout.uniform_binding)
        return self._block

    # ------------------------------------------------------------ storage buffers

    def load_element(self, fn: FunctionBuilder, array: str, indices: tuple[int, ...]) -> int:
        """The value of `array[indices]` (a bool_ element is a byte, read as `!= 0`)."""
        elem = self.element_type(array)
        raw = fn.load(elem, self.element_pointer(fn, array, indices))
        if self._dtype(array).kind == BOOL_KIND:
            widened = fn.u_convert(U32, raw)
            return fn.i_not_equal(BOOL, widened, self._module.constant(U32, 0))
        return raw

    def store_element(self, fn: FunctionBuilder, array: str, indices: tuple[int, ...],
                      value: int) -> None:
        """Stores `value` to `array[indices]` (a bool_ as the byte 0 or 1)."""
        elem = self.element_type(array)
        if self._dtype(array).kind == BOOL_KIND:
            word = fn.select(U32, value, self._module.constant(U32, 1),
                             self._module.constant(U32, 0))
            value = fn.u_convert(elem, word)
        fn.store(self.element_pointer(fn, array, indices), value)

    def element_pointer(self, fn: FunctionBuilder, array: str, indices: tuple[int, ...]) -> int:
        """A pointer to `array[indices]`: element `offset + sum(index[k] * stride[k])`, in
        wrapping i32 arithmetic. `indices` are i32 ids."""
        address = self.load_field(fn, offset_field(array))
        for axis, index in enumerate(indices):
            stride = self.load_field(fn, stride_field(array, axis))
            address = fn.i_add(I32, address, fn.i_mul(I32, index, stride))
        elem = self.element_type(array)
        return fn.access_chain(PointerType(StorageClass.StorageBuffer, elem),
                               self._buffer_variable(array), self._module.constant(I32, 0),
                               address)

    def element_type(self, array: str) -> ScalarType:
        return element_type(self._dtype(array))

    def _dtype(self, array: str) -> DType:
        return self._kernel.param(array).type.dtype

    def _buffer_variable(self, array: str) -> int:
        if array not in self._buffers:
            slot = self._slots[array]
            elem = self.element_type(array)
            self._module.require(*storage_capabilities(StorageClass.StorageBuffer, elem))
            dtype = self._dtype(array)
            block_type = StructType((RuntimeArrayType(elem, dtype.itemsize),), (0,), block=True)
            var = self._module.global_variable(StorageClass.StorageBuffer, block_type, array)
            self._module.name(self._module.type_id(block_type), f"{dtype.name}_buffer")
            self._module.decorate(var, Decoration.DescriptorSet, DESCRIPTOR_SET)
            self._module.decorate(var, Decoration.Binding, slot.binding)
            if not slot.writable:
                self._module.decorate(var, Decoration.NonWritable)
            if not slot.readable:
                self._module.decorate(var, Decoration.NonReadable)
            self._buffers[array] = var
        return self._buffers[array]

    # ------------------------------------------------------------ builtin inputs

    def load_builtin(self, fn: FunctionBuilder, builtin: BuiltIn, dim: int) -> int:
        """Component `dim` (u32) of a uvec3 builtin input such as GlobalInvocationId."""
        if builtin not in self._inputs:
            var = self._module.global_variable(StorageClass.Input, UVEC3, builtin.name)
            self._module.decorate(var, Decoration.BuiltIn, builtin)
            self._inputs[builtin] = var
        vector = fn.load(UVEC3, self._inputs[builtin])
        return fn.composite_extract(U32, vector, dim)
