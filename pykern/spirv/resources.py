"""A kernel's interface variables: storage buffers, the argument block and builtin inputs.

Each is declared on first use, with its decorations, so a module only holds what its kernel
touches; every one declared is part of the entry point's interface (SPIR-V ≥ 1.4 lists all).
"""

from __future__ import annotations

from pykern import ir
from pykern.runtime.layout import PUSH_CONSTANT, BindingLayout, BufferSlot

from pykern.spirv.function import FunctionBuilder
from pykern.spirv.encoding.grammar import BuiltIn, Decoration, StorageClass
from pykern.spirv.encoding.module import ModuleBuilder
from pykern.spirv.typemap import FIELD_TYPES, storage_capabilities, value_type
from pykern.spirv.encoding.types import (
    BOOL,
    I32,
    U32,
    UVEC3,
    FloatType,
    IntType,
    PointerType,
    RuntimeArrayType,
    ScalarType,
    StructType,
)

DESCRIPTOR_SET = 0

# builtins that are a uvec3 (the others pykern reads are a u32)
_VECTOR_BUILTINS = frozenset({BuiltIn.GlobalInvocationId, BuiltIn.LocalInvocationId,
                              BuiltIn.WorkgroupId, BuiltIn.NumWorkgroups})


class Resources:
    """Declares and reads the interface variables of one kernel's module."""

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
        """A scalar parameter's value. Bools travel as a u32 0/1; 8- and 16-bit numbers in a
        32-bit field (see `pykern.spirv.binding_plan`), converted back here."""
        raw = self.load_field(fn, param.name)
        field, ty = self.field_type(param.name), value_type(param.type)
        if ty == BOOL:
            return fn.i_not_equal(BOOL, raw, self._module.constant(U32, 0))
        if ty == field:
            return raw
        if isinstance(ty, FloatType):
            return fn.f_convert(ty, raw)
        assert isinstance(ty, IntType) and isinstance(field, IntType)
        return fn.s_convert(ty, raw) if ty.signed else fn.u_convert(ty, raw)

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

    def buffer_variable(self, array: str, element: ScalarType, stride: int,
                        access_decorations: bool = True) -> int:
        """The StorageBuffer variable of array parameter `array`: a Block struct holding one
        runtime array of `element` (ArrayStride `stride`), at the array's binding; NonWritable
        or NonReadable as its slot says, unless `access_decorations` is False (a buffer that
        its slot describes for the runtime's hazard tracking only, see `plan_layout`)."""
        if array not in self._buffers:
            slot = self._slots[array]
            self._module.require(*storage_capabilities(StorageClass.StorageBuffer, element))
            # one block type per buffer, as glslang declares them: NVIDIA's driver (580, H200)
            # read a buffer written earlier in the invocation through a stale, read-only path
            # when another buffer of the same block type was NonWritable
            block_type = StructType((RuntimeArrayType(element, stride),), (0,), block=True,
                                    tag=array)
            var = self._module.global_variable(StorageClass.StorageBuffer, block_type, array)
            self._module.name(self._module.type_id(block_type), f"{array}_{_type_name(element)}")
            self._module.decorate(var, Decoration.DescriptorSet, DESCRIPTOR_SET)
            self._module.decorate(var, Decoration.Binding, slot.binding)
            if access_decorations and not slot.writable:
                self._module.decorate(var, Decoration.NonWritable)
            if access_decorations and not slot.readable:
                self._module.decorate(var, Decoration.NonReadable)
            self._buffers[array] = var
        return self._buffers[array]

    # ------------------------------------------------------------ builtin inputs

    def load_builtin(self, fn: FunctionBuilder, builtin: BuiltIn, dim: int | None = None) -> int:
        """A builtin input as u32: component `dim` of a uvec3 one (GlobalInvocationId, ...),
        or a scalar one (SubgroupSize, ...) with `dim` None."""
        vector = builtin in _VECTOR_BUILTINS
        assert vector == (dim is not None), builtin
        if builtin not in self._inputs:
            var = self._module.global_variable(StorageClass.Input, UVEC3 if vector else U32,
                                               builtin.name)
            self._module.decorate(var, Decoration.BuiltIn, builtin)
            self._inputs[builtin] = var
        if not vector:
            return fn.load(U32, self._inputs[builtin])
        return fn.composite_extract(U32, fn.load(UVEC3, self._inputs[builtin]), dim)


def _type_name(ty: ScalarType) -> str:
    if isinstance(ty, FloatType):
        return f"f{ty.bits}"
    if isinstance(ty, IntType):
        return f"{'i' if ty.signed else 'u'}{ty.bits}"
    return "bool"
