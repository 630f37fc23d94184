"""The module builder: ids, deduplicated types and constants, and the module's sections.

Sections are kept apart and assembled in the order of the SPIR-V spec §2.4 (logical layout):
capabilities, extensions, extended-instruction imports, memory model, entry points, execution
modes, debug strings and names, annotations, types/constants/global variables, function definitions.
Function bodies are built by `pykern.spirv.function.FunctionBuilder` and handed back here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from pykern.spirv.encoding.grammar import (
    MAGIC_NUMBER,
    AddressingModel,
    Capability,
    Decoration,
    ExecutionMode,
    ExecutionModel,
    MemoryModel,
    Op,
    Scope,
    StorageClass,
)
from pykern.spirv.encoding.grammar_ext import (BFLOAT16_EXTENSION, COOPERATIVE_MATRIX_EXTENSION,
                                      CoopCapability, CoopOp, FPEncoding)
from pykern.spirv.encoding.instruction import Instruction, encode_module, float_bits, literal_words
from pykern.spirv.encoding.types import (
    U32,
    BoolType,
    CoopMatrixType,
    FixedArrayType,
    FloatType,
    FunctionType,
    IntType,
    PointerType,
    RuntimeArrayType,
    ScalarConstant,
    ScalarType,
    SpirvType,
    StructType,
    VectorType,
    VoidType,
)

# Tools register a generator id with Khronos; 0 means "unregistered", which is allowed.
GENERATOR = 0


class ModuleBuilder:
    """Collects one module. Ask for types and constants by key; each key gets one id.

    >>> m = ModuleBuilder()
    >>> m.type_id(IntType(32, True)) == m.type_id(IntType(32, True))
    True
    """

    def __init__(self, version: tuple[int, int] = (1, 5)) -> None:
        self.version = version
        self._bound = 1
        self._capabilities: set[Capability] = set()
        self._extensions: set[str] = set()
        self._ext_imports: dict[str, int] = {}
        self._memory_model = Instruction(
            Op.MemoryModel, operands=(AddressingModel.Logical, MemoryModel.GLSL450))
        self._entry_points: list[Instruction] = []
        self._execution_modes: list[Instruction] = []
        self._strings: list[Instruction] = []
        self._names: dict[tuple[int, int | None], Instruction] = {}
        self._annotations: dict[Instruction, None] = {}  # an ordered set
        self._globals: list[Instruction] = []
        self._functions: list[Instruction] = []
        self._types: dict[SpirvType, int] = {}
        self._constants: dict[ScalarConstant, int] = {}
        self._nulls: dict[SpirvType, int] = {}
        self._global_variables: list[int] = []

    # ------------------------------------------------------------ ids and module-level state

    @property
    def vulkan_memory_model(self) -> bool:
        return self._memory_model.operands[1] == MemoryModel.Vulkan

    def use_vulkan_memory_model(self) -> None:
        """The Vulkan memory model instead of GLSL450 (cooperative matrices require it):
        barriers then make their writes available and visible explicitly."""
        self.require(Capability.VulkanMemoryModel)
        self._memory_model = Instruction(
            Op.MemoryModel, operands=(AddressingModel.Logical, MemoryModel.Vulkan))

    def new_id(self) -> int:
        """A fresh result id."""
        result = self._bound
        self._bound += 1
        return result

    @property
    def capabilities(self) -> frozenset[Capability]:
        return frozenset(self._capabilities)

    @property
    def float_widths(self) -> frozenset[int]:
        """The widths of the float types declared so far."""
        return frozenset(t.bits for t in self._types if isinstance(t, FloatType))

    @property
    def global_variables(self) -> tuple[int, ...]:
        """Every global OpVariable so far, in creation order (the entry point's interface)."""
        return tuple(self._global_variables)

    def require(self, *capabilities: Capability) -> None:
        """Declares capabilities; each is emitted once, however often it is required."""
        self._capabilities.update(capabilities)

    def extension(self, name: str) -> None:
        self._extensions.add(name)

    def ext_import(self, name: str) -> int:
        """The id of an extended instruction set such as "GLSL.std.450", imported on first use."""
        if name not in self._ext_imports:
            self._ext_imports[name] = self.new_id()
        return self._ext_imports[name]

    def entry_point(self, model: ExecutionModel, function: int, name: str,
                    interface: Iterable[int]) -> None:
        self._entry_points.append(
            Instruction(Op.EntryPoint, operands=(model, function, name, *interface)))

    def execution_mode(self, function: int, mode: ExecutionMode, *literals: int) -> None:
        self._execution_modes.append(
            Instruction(Op.ExecutionMode, operands=(function, mode, *literals)))

    def string(self, text: str) -> int:
        """An OpString (debug information: the module carries `text`, nothing refers to it
        unless asked); returns its id."""
        result = self.new_id()
        self._strings.append(Instruction(Op.String, None, result, (text,)))
        return result

    def name(self, target: int, text: str) -> None:
        """An OpName for the disassembly; the first name given to an id wins."""
        self._names.setdefault((target, None), Instruction(Op.Name, operands=(target, text)))

    def member_name(self, struct: int, member: int, text: str) -> None:
        self._names.setdefault(
            (struct, member), Instruction(Op.MemberName, operands=(struct, member, text)))

    def decorate(self, target: int, decoration: Decoration, *literals: int) -> None:
        self._annotations[Instruction(Op.Decorate, operands=(target, decoration, *literals))] = None

    def member_decorate(self, struct: int, member: int, decoration: Decoration,
                        *literals: int) -> None:
        inst = Instruction(Op.MemberDecorate, operands=(struct, member, decoration, *literals))
        self._annotations[inst] = None

    # ------------------------------------------------------------ types

    def type_id(self, ty: SpirvType) -> int:
        """The id of type `ty`, declared (with its decorations) on first request.

        Int64 and Float64 are required here because no SPIR-V use of those types goes without
        them; 8- and 16-bit types need a capability that depends on their use, which the
        caller declares.
        """
        found = self._types.get(ty)
        if found is None:
            found = _TYPE_EMITTERS[type(ty)](self, ty)
            self._types[ty] = found
        return found

    def _declare(self, opcode: Op, *operands: int) -> int:
        result = self.new_id()
        self._globals.append(Instruction(opcode, None, result, operands))
        return result

    def _type_void(self, ty: VoidType) -> int:
        return self._declare(Op.TypeVoid)

    def _type_bool(self, ty: BoolType) -> int:
        return self._declare(Op.TypeBool)

    def _type_int(self, ty: IntType) -> int:
        if ty.bits == 64:
            self.require(Capability.Int64)
        return self._declare(Op.TypeInt, ty.bits, int(ty.signed))

    def _type_float(self, ty: FloatType) -> int:
        if ty.bits == 64:
            self.require(Capability.Float64)
        if ty.bfloat:
            self.require(CoopCapability.BFloat16TypeKHR)  # type: ignore[arg-type]
            self.extension(BFLOAT16_EXTENSION)
            return self._declare(Op.TypeFloat, ty.bits, FPEncoding.BFloat16KHR)
        return self._declare(Op.TypeFloat, ty.bits)

    def _type_coop_matrix(self, ty: CoopMatrixType) -> int:
        self.require(CoopCapability.CooperativeMatrixKHR)  # type: ignore[arg-type]
        self.extension(COOPERATIVE_MATRIX_EXTENSION)
        if isinstance(ty.component, FloatType) and ty.component.bfloat:
            self.require(CoopCapability.BFloat16CooperativeMatrixKHR)  # type: ignore[arg-type]
        return self._declare(CoopOp.TypeCooperativeMatrixKHR,  # type: ignore[arg-type]
                             self.type_id(ty.component), self.constant(U32, Scope.Subgroup),
                             self.constant(U32, ty.rows), self.constant(U32, ty.cols),
                             self.constant(U32, ty.use))

    def _type_vector(self, ty: VectorType) -> int:
        return self._declare(Op.TypeVector, self.type_id(ty.component), ty.count)

    def _type_runtime_array(self, ty: RuntimeArrayType) -> int:
        result = self._declare(Op.TypeRuntimeArray, self.type_id(ty.element))
        if ty.stride is not None:
            self.decorate(result, Decoration.ArrayStride, ty.stride)
        return result

    def _type_fixed_array(self, ty: FixedArrayType) -> int:
        return self._declare(Op.TypeArray, self.type_id(ty.element), self.constant(U32, ty.length))

    def _type_struct(self, ty: StructType) -> int:
        result = self._declare(Op.TypeStruct, *(self.type_id(m) for m in ty.members))
        if ty.block:
            self.decorate(result, Decoration.Block)
        for index, offset in enumerate(ty.offsets or ()):
            self.member_decorate(result, index, Decoration.Offset, offset)
        return result

    def _type_pointer(self, ty: PointerType) -> int:
        return self._declare(Op.TypePointer, ty.storage, self.type_id(ty.pointee))

    def _type_function(self, ty: FunctionType) -> int:
        return self._declare(
            Op.TypeFunction, self.type_id(ty.result), *(self.type_id(p) for p in ty.params))

    # ------------------------------------------------------------ constants

    def constant(self, ty: ScalarType, value: bool | int | float) -> int:
        """The id of the constant `value` of scalar type `ty` (floats rounded to the type,
        ints wrapped to its width)."""
        return self.constant_of(_constant_key(ty, value))

    def constant_null(self, ty: SpirvType) -> int:
        """The id of OpConstantNull of `ty`: zero, false, or an array of those."""
        found = self._nulls.get(ty)
        if found is None:
            found = self.new_id()
            self._globals.append(Instruction(Op.ConstantNull, self.type_id(ty), found))
            self._nulls[ty] = found
        return found

    def constant_of(self, key: ScalarConstant) -> int:
        found = self._constants.get(key)
        if found is None:
            found = self._emit_constant(key)
            self._constants[key] = found
        return found

    def _emit_constant(self, key: ScalarConstant) -> int:
        type_id = self.type_id(key.type)
        result = self.new_id()
        if isinstance(key.type, BoolType):
            opcode = Op.ConstantTrue if key.value else Op.ConstantFalse
            self._globals.append(Instruction(opcode, type_id, result))
        else:
            words = literal_words(int(key.value), key.type.bits)
            self._globals.append(Instruction(Op.Constant, type_id, result, words))
        return result

    # ------------------------------------------------------------ variables and functions

    def global_variable(self, storage: StorageClass, pointee: SpirvType,
                        name: str | None = None, initializer: int | None = None) -> int:
        """A module-scope OpVariable of `pointee` in `storage` (starting as the constant
        `initializer` if given); listed in `global_variables`."""
        pointer = self.type_id(PointerType(storage, pointee))
        result = self.new_id()
        init = () if initializer is None else (initializer,)
        self._globals.append(Instruction(Op.Variable, pointer, result, (storage, *init)))
        self._global_variables.append(result)
        if name is not None:
            self.name(result, name)
        return result

    def add_function(self, instructions: Sequence[Instruction]) -> None:
        """Appends a finished function (OpFunction … OpFunctionEnd)."""
        self._functions.extend(instructions)

    # ------------------------------------------------------------ output

    def sections(self) -> list[list[Instruction]]:
        """The instructions of each §2.4 section, in order."""
        return [
            [Instruction(Op.Capability, operands=(c,)) for c in sorted(self._capabilities)],
            [Instruction(Op.Extension, operands=(e,)) for e in sorted(self._extensions)],
            [Instruction(Op.ExtInstImport, None, i, (name,))
             for name, i in sorted(self._ext_imports.items())],
            [self._memory_model],
            list(self._entry_points),
            list(self._execution_modes),
            list(self._strings) + list(self._names.values()),
            list(self._annotations),
            list(self._globals),
            list(self._functions),
        ]

    def assemble(self) -> bytes:
        """The binary module (header and all sections)."""
        major, minor = self.version
        header = (MAGIC_NUMBER, (major << 16) | (minor << 8), GENERATOR, self._bound, 0)
        return encode_module(header, (i for section in self.sections() for i in section))


def _constant_key(ty: ScalarType, value: bool | int | float) -> ScalarConstant:
    if isinstance(ty, BoolType):
        return ScalarConstant(ty, bool(value))
    if isinstance(ty, FloatType):
        return ScalarConstant(ty, float_bits(float(value), ty.bits))
    value = int(value) & ((1 << ty.bits) - 1)
    if ty.signed and value >> (ty.bits - 1):
        value -= 1 << ty.bits
    return ScalarConstant(ty, value)


_TYPE_EMITTERS: dict[type, Callable[[ModuleBuilder, SpirvType], int]] = {
    VoidType: ModuleBuilder._type_void,
    BoolType: ModuleBuilder._type_bool,
    IntType: ModuleBuilder._type_int,
    FloatType: ModuleBuilder._type_float,
    VectorType: ModuleBuilder._type_vector,
    RuntimeArrayType: ModuleBuilder._type_runtime_array,
    FixedArrayType: ModuleBuilder._type_fixed_array,
    StructType: ModuleBuilder._type_struct,
    PointerType: ModuleBuilder._type_pointer,
    FunctionType: ModuleBuilder._type_function,
    CoopMatrixType: ModuleBuilder._type_coop_matrix,
}
