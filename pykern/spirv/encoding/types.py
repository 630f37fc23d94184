"""Keys of SPIR-V types and constants.

Each key is a frozen dataclass whose equality means "SPIR-V allows (or we want) one id for
this": the module builder looks ids up in dicts keyed by them. Decorations that belong to a type
(ArrayStride, Block, member Offsets) are part of its key, so a decorated type is never merged
with an undecorated one of the same shape.
"""

from __future__ import annotations

from dataclasses import dataclass

from pykern.spirv.encoding.grammar import StorageClass


@dataclass(frozen=True)
class VoidType:
    pass


@dataclass(frozen=True)
class BoolType:
    pass


@dataclass(frozen=True)
class IntType:
    bits: int
    signed: bool


@dataclass(frozen=True)
class FloatType:
    bits: int
    bfloat: bool = False  # 16 bits in bfloat16's encoding (SPV_KHR_bfloat16): tiles only


ScalarType = BoolType | IntType | FloatType


@dataclass(frozen=True)
class VectorType:
    component: ScalarType
    count: int


@dataclass(frozen=True)
class RuntimeArrayType:
    """`element[]`; `stride` (bytes) is its ArrayStride decoration, None for none."""

    element: SpirvType
    stride: int | None = None


@dataclass(frozen=True)
class FixedArrayType:
    """`element[length]`, without explicit layout (for Workgroup and Private memory)."""

    element: SpirvType
    length: int


@dataclass(frozen=True)
class StructType:
    """A struct; with `offsets` its members get Offset decorations, `block` adds Block. `tag`
    keeps structs that are otherwise equal apart (each storage buffer has a block type of its
    own, see `Resources.buffer_variable`)."""

    members: tuple[SpirvType, ...]
    offsets: tuple[int, ...] | None = None
    block: bool = False
    tag: str = ""


@dataclass(frozen=True)
class PointerType:
    storage: StorageClass
    pointee: SpirvType


@dataclass(frozen=True)
class FunctionType:
    result: SpirvType
    params: tuple[SpirvType, ...] = ()


@dataclass(frozen=True)
class CoopMatrixType:
    """OpTypeCooperativeMatrixKHR with Subgroup scope; `use` is a CooperativeMatrixUse."""

    component: ScalarType
    rows: int
    cols: int
    use: int


SpirvType = (CoopMatrixType | VoidType | BoolType | IntType | FloatType | VectorType
             | RuntimeArrayType | FixedArrayType | StructType | PointerType | FunctionType)


@dataclass(frozen=True)
class ScalarConstant:
    """An OpConstant / OpConstantTrue / OpConstantFalse.

    `value` is the bit pattern for floats (so -0.0 and 0.0 are two constants and every NaN with
    the same bits one), the integer itself for ints (already wrapped to the type's range), and a
    bool for bools.
    """

    type: ScalarType
    value: int | bool


# the scalar types lowering uses all the time
VOID = VoidType()
BOOL = BoolType()
I32 = IntType(32, True)
U32 = IntType(32, False)
F16 = FloatType(16)
F32 = FloatType(32)
UVEC3 = VectorType(U32, 3)
