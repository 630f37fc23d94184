"""How pykern dtypes become SPIR-V types, in registers and in memory, and the capabilities each
use needs."""

from __future__ import annotations

from pykern.lang.dtypes import BOOL as BOOL_KIND
from pykern.lang.dtypes import FLOAT, DType

from pykern.lang.coop import CoopType, CoopUse
from pykern.spirv.encoding.grammar import Capability, StorageClass
from pykern.spirv.encoding.grammar_ext import CooperativeMatrixUse
from pykern.spirv.encoding.types import (BOOL, VOID, BoolType, CoopMatrixType, FloatType, IntType,
                                ScalarType, VoidType)

VOID_KIND = "v"  # the kind of `dtypes.void`

# capability for arithmetic on a type narrower or wider than 32 bits (64-bit ones are required
# by the module builder when the type is declared)
_VALUE_CAPABILITIES: dict[tuple[str, int], Capability] = {
    ("int", 8): Capability.Int8,
    ("int", 16): Capability.Int16,
    ("float", 16): Capability.Float16,
}

# capability for 8/16-bit types in each kind of memory (64-bit types need only Int64/Float64)
_STORAGE_CAPABILITIES: dict[tuple[StorageClass, int], Capability] = {
    (StorageClass.StorageBuffer, 8): Capability.StorageBuffer8BitAccess,
    (StorageClass.StorageBuffer, 16): Capability.StorageBuffer16BitAccess,
    (StorageClass.PushConstant, 8): Capability.StoragePushConstant8,
    (StorageClass.PushConstant, 16): Capability.StoragePushConstant16,
    (StorageClass.Uniform, 8): Capability.UniformAndStorageBuffer8BitAccess,
    (StorageClass.Uniform, 16): Capability.StorageUniform16,
}

# the SPIR-V type of each `struct` format an argument-block field may have
FIELD_TYPES: dict[str, ScalarType] = {
    "b": IntType(8, True), "B": IntType(8, False), "h": IntType(16, True),
    "H": IntType(16, False), "e": FloatType(16), "i": IntType(32, True),
    "I": IntType(32, False), "f": FloatType(32), "q": IntType(64, True),
    "Q": IntType(64, False), "d": FloatType(64),
}

# bools are never stored: a bool array element is one byte (as numpy stores it)
BOOL_ELEMENT = IntType(8, False)


_USES = {CoopUse.MATRIX_A: CooperativeMatrixUse.MatrixAKHR,
         CoopUse.MATRIX_B: CooperativeMatrixUse.MatrixBKHR,
         CoopUse.ACCUMULATOR: CooperativeMatrixUse.MatrixAccumulatorKHR}


def value_type(dtype: DType | CoopType) -> ScalarType | VoidType | CoopMatrixType:
    """The SPIR-V type of a `dtype` value in registers (bool_ is OpTypeBool; `dtypes.void`, the
    type of a call that returns nothing, is OpTypeVoid; a tile type an OpTypeCooperativeMatrixKHR
    whose bf16 elements are in bfloat16's own encoding)."""
    if isinstance(dtype, CoopType):
        # a bf16 tile is the one place bf16 is a SPIR-V type (SPV_KHR_bfloat16)
        component = FloatType(16, bfloat=True) if dtype.dtype.name == "bf16" else \
            value_type(dtype.dtype)
        return CoopMatrixType(component, dtype.rows, dtype.cols,  # type: ignore[arg-type]
                              int(_USES[dtype.use]))
    if dtype.kind == VOID_KIND:
        return VOID
    if dtype.kind == BOOL_KIND:
        return BOOL
    if dtype.kind == FLOAT:
        # bf16 is f32 values on u16 words by then (pykern.passes.bf16), never a SPIR-V type
        assert dtype.name != "bf16", "bf16 in the IR given to the SPIR-V backend"
        return FloatType(dtype.bits)
    return IntType(dtype.bits, dtype.is_signed)


def value_capabilities(ty: ScalarType | VoidType) -> tuple[Capability, ...]:
    """Capabilities needed to compute with values of type `ty`."""
    if isinstance(ty, CoopMatrixType):
        if isinstance(ty.component, FloatType) and ty.component.bfloat:
            return ()  # declaring the type requires what it needs
        return value_capabilities(ty.component)
    if isinstance(ty, (BoolType, VoidType)):
        return ()
    family = "float" if isinstance(ty, FloatType) else "int"
    cap = _VALUE_CAPABILITIES.get((family, ty.bits))
    return (cap,) if cap is not None else ()


def storage_capabilities(storage: StorageClass, ty: ScalarType) -> tuple[Capability, ...]:
    """Capabilities needed to keep values of type `ty` in memory of class `storage`."""
    if isinstance(ty, BoolType):
        return ()
    cap = _STORAGE_CAPABILITIES.get((storage, ty.bits))
    return (cap,) if cap is not None else ()


def unsigned(ty: IntType) -> IntType:
    return IntType(ty.bits, False)

