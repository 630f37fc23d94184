"""Builds one function body: blocks, Function-storage variables, one method per opcode.

Methods take result types as keys (`pykern.spirv.encoding.types`) and operands as ids, and return
the result id. A block ends with a terminator (branch, return, unreachable); after it the builder
has no open block until `begin_block`, and emitting into a closed block is a bug (AssertionError).
"""

from __future__ import annotations

from collections.abc import Sequence

from pykern.spirv.encoding.grammar import (
    GLSL,
    Decoration,
    FunctionControl,
    GroupOperation,
    LoopControl,
    Op,
    SelectionControl,
    StorageClass,
)
from pykern.spirv.encoding.instruction import Instruction
from pykern.spirv.encoding.module import ModuleBuilder
from pykern.spirv.encoding.types import (VOID, CoopMatrixType, FloatType, FunctionType, IntType,
                                PointerType, SpirvType, StructType)

GLSL_STD_450 = "GLSL.std.450"

# pykern promises numpy's results for float + - *: the driver may never fuse them into an FMA
ALWAYS_EXACT = frozenset({Op.FAdd, Op.FSub, Op.FMul})
# ... and in strict mode (`FunctionBuilder(strict=True)`) every float operation stays as
# written: Mesa and others skip their inexact algebraic rewrites for NoContraction ("exact")
# instructions
STRICT_EXACT = ALWAYS_EXACT | {Op.FDiv, Op.FNegate, Op.FRem, Op.FMod, Op.ExtInst, Op.FConvert,
                               Op.ConvertSToF, Op.ConvertUToF}


class FunctionBuilder:
    """A function returning `result`, with parameters of types `params` (their ids are
    `self.params`).

    The entry block is open after construction. Variables are collected apart and placed at the
    top of the entry block by `finish`, as SPIR-V requires, wherever in the body they were asked
    for.
    """

    def __init__(self, module: ModuleBuilder, result: SpirvType = VOID,
                 params: Sequence[SpirvType] = (), name: str | None = None,
                 strict: bool = False) -> None:
        self.module = module
        # strict floating point: every float operation NoContraction
        self._exact_ops = STRICT_EXACT if strict else ALWAYS_EXACT
        self.result = result
        self.param_types = tuple(params)
        self.id = module.new_id()
        self.params = [module.new_id() for _ in self.param_types]
        if name is not None:
            module.name(self.id, name)
        self._variables: list[Instruction] = []
        self._blocks: list[tuple[int, list[Instruction]]] = []
        self._current: list[Instruction] | None = None
        self.begin_block(self.new_label())

    # ------------------------------------------------------------ blocks

    def new_label(self) -> int:
        """An id for a block that `begin_block` will start later."""
        return self.module.new_id()

    def begin_block(self, label: int) -> None:
        assert self._current is None, "the previous block has no terminator"
        self._current = []
        self._blocks.append((label, self._current))

    @property
    def is_open(self) -> bool:
        """True while the current block has no terminator (code emitted now is reachable)."""
        return self._current is not None

    def variable(self, pointee: SpirvType, name: str | None = None,
                 initializer: int | None = None) -> int:
        """A Function-storage variable (starting as the constant `initializer` if given);
        returns the pointer id."""
        pointer = self.module.type_id(PointerType(StorageClass.Function, pointee))
        result = self.module.new_id()
        init = () if initializer is None else (initializer,)
        self._variables.append(
            Instruction(Op.Variable, pointer, result, (StorageClass.Function, *init)))
        if name is not None:
            self.module.name(result, name)
        return result

    def finish(self) -> None:
        """Adds the finished function (every block terminated) to the module."""
        assert not self.is_open, "the last block has no terminator"
        fn_type = self.module.type_id(FunctionType(self.result, self.param_types))
        out = [Instruction(Op.Function, self.module.type_id(self.result), self.id,
                           (FunctionControl.None_, fn_type))]
        out += [Instruction(Op.FunctionParameter, self.module.type_id(ty), param)
                for ty, param in zip(self.param_types, self.params, strict=True)]
        for index, (label, body) in enumerate(self._blocks):
            out.append(Instruction(Op.Label, None, label))
            if index == 0:
                out.extend(self._variables)
            out.extend(body)
        out.append(Instruction(Op.FunctionEnd))
        self.module.add_function(out)

    # ------------------------------------------------------------ emission primitives

    def _emit(self, opcode: Op, result_type: SpirvType, *operands: int) -> int:
        assert self._current is not None, f"Op{opcode.name} after a terminator"
        result = self.module.new_id()
        self._current.append(
            Instruction(opcode, self.module.type_id(result_type), result, operands))
        if opcode in self._exact_ops and (isinstance(result_type, FloatType) or (
                isinstance(result_type, CoopMatrixType)
                and isinstance(result_type.component, FloatType))):
            self.module.decorate(result, Decoration.NoContraction)
        return result

    def instruction(self, opcode: Op, result_type: SpirvType, *operands: int) -> int:
        """Any instruction with a result (what has no helper of its own here: the
        cooperative-matrix instructions, arithmetic and conversions on tiles)."""
        return self._emit(opcode, result_type, *operands)

    def instruction_void(self, opcode: Op, *operands: int) -> None:
        """Any instruction without a result."""
        self._emit_void(opcode, *operands)

    def _emit_void(self, opcode: Op, *operands: int) -> None:
        assert self._current is not None, f"Op{opcode.name} after a terminator"
        self._current.append(Instruction(opcode, operands=operands))

    def _terminate(self, opcode: Op, *operands: int) -> None:
        self._emit_void(opcode, *operands)
        self._current = None

    # ------------------------------------------------------------ memory

    def load(self, ty: SpirvType, pointer: int) -> int:
        return self._emit(Op.Load, ty, pointer)

    def store(self, pointer: int, value: int) -> None:
        self._emit_void(Op.Store, pointer, value)

    def access_chain(self, pointer_type: PointerType, base: int, *indices: int) -> int:
        return self._emit(Op.AccessChain, pointer_type, base, *indices)

    def composite_extract(self, ty: SpirvType, composite: int, *indices: int) -> int:
        return self._emit(Op.CompositeExtract, ty, composite, *indices)

    def composite_insert(self, ty: SpirvType, value: int, composite: int, *indices: int) -> int:
        return self._emit(Op.CompositeInsert, ty, value, composite, *indices)

    # ------------------------------------------------------------ integer arithmetic

    def i_add(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.IAdd, ty, a, b)

    def i_sub(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.ISub, ty, a, b)

    def i_mul(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.IMul, ty, a, b)

    def u_div(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.UDiv, ty, a, b)

    def u_mod(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.UMod, ty, a, b)

    def s_negate(self, ty: SpirvType, a: int) -> int:
        return self._emit(Op.SNegate, ty, a)

    def u_mul_extended(self, ty: IntType, a: int, b: int) -> tuple[int, int]:
        """The low and high halves of the full product of two unsigned ints (OpUMulExtended)."""
        product = self._emit(Op.UMulExtended, StructType((ty, ty)), a, b)
        return self.composite_extract(ty, product, 0), self.composite_extract(ty, product, 1)

    # ------------------------------------------------------------ float arithmetic

    def f_add(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.FAdd, ty, a, b)

    def f_sub(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.FSub, ty, a, b)

    def f_mul(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.FMul, ty, a, b)

    def f_div(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.FDiv, ty, a, b)

    def f_negate(self, ty: SpirvType, a: int) -> int:
        return self._emit(Op.FNegate, ty, a)

    # ------------------------------------------------------------ bits and logic

    def bitwise_and(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.BitwiseAnd, ty, a, b)

    def bitwise_or(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.BitwiseOr, ty, a, b)

    def bitwise_xor(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.BitwiseXor, ty, a, b)

    def not_(self, ty: SpirvType, a: int) -> int:
        return self._emit(Op.Not, ty, a)

    def shift_left_logical(self, ty: SpirvType, a: int, count: int) -> int:
        return self._emit(Op.ShiftLeftLogical, ty, a, count)

    def shift_right_logical(self, ty: SpirvType, a: int, count: int) -> int:
        return self._emit(Op.ShiftRightLogical, ty, a, count)

    def shift_right_arithmetic(self, ty: SpirvType, a: int, count: int) -> int:
        return self._emit(Op.ShiftRightArithmetic, ty, a, count)

    def logical_and(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.LogicalAnd, ty, a, b)

    def logical_or(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.LogicalOr, ty, a, b)

    def logical_not(self, ty: SpirvType, a: int) -> int:
        return self._emit(Op.LogicalNot, ty, a)

    def logical_equal(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.LogicalEqual, ty, a, b)

    def logical_not_equal(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.LogicalNotEqual, ty, a, b)

    def select(self, ty: SpirvType, cond: int, a: int, b: int) -> int:
        return self._emit(Op.Select, ty, cond, a, b)

    # ------------------------------------------------------------ comparisons

    def i_equal(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.IEqual, ty, a, b)

    def i_not_equal(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.INotEqual, ty, a, b)

    def s_less_than(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.SLessThan, ty, a, b)

    def s_less_than_equal(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.SLessThanEqual, ty, a, b)

    def s_greater_than(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.SGreaterThan, ty, a, b)

    def s_greater_than_equal(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.SGreaterThanEqual, ty, a, b)

    def u_less_than(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.ULessThan, ty, a, b)

    def u_less_than_equal(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.ULessThanEqual, ty, a, b)

    def u_greater_than(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.UGreaterThan, ty, a, b)

    def u_greater_than_equal(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.UGreaterThanEqual, ty, a, b)

    def f_ord_equal(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.FOrdEqual, ty, a, b)

    def f_unord_not_equal(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.FUnordNotEqual, ty, a, b)

    def f_ord_less_than(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.FOrdLessThan, ty, a, b)

    def f_ord_less_than_equal(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.FOrdLessThanEqual, ty, a, b)

    def f_ord_greater_than(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.FOrdGreaterThan, ty, a, b)

    def f_ord_greater_than_equal(self, ty: SpirvType, a: int, b: int) -> int:
        return self._emit(Op.FOrdGreaterThanEqual, ty, a, b)

    # ------------------------------------------------------------ conversions

    def convert_f_to_s(self, ty: SpirvType, a: int) -> int:
        return self._emit(Op.ConvertFToS, ty, a)

    def convert_f_to_u(self, ty: SpirvType, a: int) -> int:
        return self._emit(Op.ConvertFToU, ty, a)

    def convert_s_to_f(self, ty: SpirvType, a: int) -> int:
        return self._emit(Op.ConvertSToF, ty, a)

    def convert_u_to_f(self, ty: SpirvType, a: int) -> int:
        return self._emit(Op.ConvertUToF, ty, a)

    def s_convert(self, ty: SpirvType, a: int) -> int:
        return self._emit(Op.SConvert, ty, a)

    def u_convert(self, ty: SpirvType, a: int) -> int:
        return self._emit(Op.UConvert, ty, a)

    def f_convert(self, ty: SpirvType, a: int) -> int:
        return self._emit(Op.FConvert, ty, a)

    def bitcast(self, ty: SpirvType, a: int) -> int:
        return self._emit(Op.Bitcast, ty, a)

    def is_nan(self, ty: SpirvType, a: int) -> int:
        return self._emit(Op.IsNan, ty, a)

    def is_inf(self, ty: SpirvType, a: int) -> int:
        return self._emit(Op.IsInf, ty, a)

    # ------------------------------------------------------------ calls

    def function_call(self, ty: SpirvType, function: int, *args: int) -> int:
        return self._emit(Op.FunctionCall, ty, function, *args)

    # ------------------------------------------------------------ atomics and barriers
    # scopes and memory semantics are <id>s of u32 constants

    def atomic_load(self, ty: SpirvType, pointer: int, scope: int, semantics: int) -> int:
        return self._emit(Op.AtomicLoad, ty, pointer, scope, semantics)

    def atomic_exchange(self, ty: SpirvType, pointer: int, scope: int, semantics: int,
                        value: int) -> int:
        return self._emit(Op.AtomicExchange, ty, pointer, scope, semantics, value)

    def atomic_compare_exchange(self, ty: SpirvType, pointer: int, scope: int, equal: int,
                                unequal: int, value: int, comparator: int) -> int:
        return self._emit(Op.AtomicCompareExchange, ty, pointer, scope, equal, unequal, value,
                          comparator)

    def atomic_i_add(self, ty: SpirvType, pointer: int, scope: int, semantics: int,
                     value: int) -> int:
        return self._emit(Op.AtomicIAdd, ty, pointer, scope, semantics, value)

    def atomic_i_sub(self, ty: SpirvType, pointer: int, scope: int, semantics: int,
                     value: int) -> int:
        return self._emit(Op.AtomicISub, ty, pointer, scope, semantics, value)

    def atomic_s_min(self, ty: SpirvType, pointer: int, scope: int, semantics: int,
                     value: int) -> int:
        return self._emit(Op.AtomicSMin, ty, pointer, scope, semantics, value)

    def atomic_u_min(self, ty: SpirvType, pointer: int, scope: int, semantics: int,
                     value: int) -> int:
        return self._emit(Op.AtomicUMin, ty, pointer, scope, semantics, value)

    def atomic_s_max(self, ty: SpirvType, pointer: int, scope: int, semantics: int,
                     value: int) -> int:
        return self._emit(Op.AtomicSMax, ty, pointer, scope, semantics, value)

    def atomic_u_max(self, ty: SpirvType, pointer: int, scope: int, semantics: int,
                     value: int) -> int:
        return self._emit(Op.AtomicUMax, ty, pointer, scope, semantics, value)

    def atomic_and(self, ty: SpirvType, pointer: int, scope: int, semantics: int,
                   value: int) -> int:
        return self._emit(Op.AtomicAnd, ty, pointer, scope, semantics, value)

    def atomic_or(self, ty: SpirvType, pointer: int, scope: int, semantics: int,
                  value: int) -> int:
        return self._emit(Op.AtomicOr, ty, pointer, scope, semantics, value)

    def atomic_xor(self, ty: SpirvType, pointer: int, scope: int, semantics: int,
                   value: int) -> int:
        return self._emit(Op.AtomicXor, ty, pointer, scope, semantics, value)

    def atomic_f_add(self, ty: SpirvType, pointer: int, scope: int, semantics: int,
                     value: int) -> int:
        """OpAtomicFAddEXT (SPV_EXT_shader_atomic_float_add; the caller declares it)."""
        return self._emit(Op.AtomicFAddEXT, ty, pointer, scope, semantics, value)

    def control_barrier(self, execution: int, memory: int, semantics: int) -> None:
        self._emit_void(Op.ControlBarrier, execution, memory, semantics)

    # ------------------------------------------------------------ subgroup operations
    # `scope` is the <id> of the constant Scope.Subgroup

    def group_non_uniform_all(self, ty: SpirvType, scope: int, predicate: int) -> int:
        return self._emit(Op.GroupNonUniformAll, ty, scope, predicate)

    def group_non_uniform_any(self, ty: SpirvType, scope: int, predicate: int) -> int:
        return self._emit(Op.GroupNonUniformAny, ty, scope, predicate)

    def group_non_uniform_broadcast(self, ty: SpirvType, scope: int, value: int,
                                    lane: int) -> int:
        return self._emit(Op.GroupNonUniformBroadcast, ty, scope, value, lane)

    def group_non_uniform_shuffle(self, ty: SpirvType, scope: int, value: int,
                                  lane: int) -> int:
        return self._emit(Op.GroupNonUniformShuffle, ty, scope, value, lane)

    def group_non_uniform_shuffle_xor(self, ty: SpirvType, scope: int, value: int,
                                      mask: int) -> int:
        return self._emit(Op.GroupNonUniformShuffleXor, ty, scope, value, mask)

    def group_non_uniform_arithmetic(self, opcode: Op, ty: SpirvType, scope: int,
                                     operation: GroupOperation, value: int) -> int:
        """OpGroupNonUniformIAdd / FAdd / SMin / UMin / FMin / SMax / UMax / FMax."""
        assert opcode.name.startswith("GroupNonUniform"), opcode
        return self._emit(opcode, ty, scope, operation, value)

    # ------------------------------------------------------------ extended instructions

    def glsl(self, ty: SpirvType, instruction: GLSL, *args: int) -> int:
        """A GLSL.std.450 instruction (the set is imported on first use)."""
        ext = self.module.ext_import(GLSL_STD_450)
        return self._emit(Op.ExtInst, ty, ext, instruction, *args)

    # ------------------------------------------------------------ control flow

    def selection_merge(self, merge: int) -> None:
        self._emit_void(Op.SelectionMerge, merge, SelectionControl.None_)

    def loop_merge(self, merge: int, continue_target: int) -> None:
        self._emit_void(Op.LoopMerge, merge, continue_target, LoopControl.None_)

    def branch(self, target: int) -> None:
        self._terminate(Op.Branch, target)

    def branch_conditional(self, cond: int, true_label: int, false_label: int) -> None:
        self._terminate(Op.BranchConditional, cond, true_label, false_label)

    def return_(self) -> None:
        self._terminate(Op.Return)

    def return_value(self, value: int) -> None:
        self._terminate(Op.ReturnValue, value)

    def unreachable(self) -> None:
        self._terminate(Op.Unreachable)
