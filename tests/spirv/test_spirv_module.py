"""The instruction encoding and the module builder: ids, dedupe, sections, capabilities."""

from __future__ import annotations

import struct

import pytest

from pykern.spirv.function import FunctionBuilder
from pykern.spirv.encoding.grammar import (
    GLSL,
    MAGIC_NUMBER,
    Capability,
    Decoration,
    ExecutionMode,
    ExecutionModel,
    Op,
    StorageClass,
)
from pykern.spirv.encoding.instruction import (
    Instruction,
    encode_string,
    float_bits,
    literal_words,
)
from pykern.spirv.encoding.module import ModuleBuilder
from pykern.spirv.encoding.types import (
    BOOL,
    F32,
    I32,
    U32,
    FloatType,
    IntType,
    PointerType,
    RuntimeArrayType,
    StructType,
)
from pykern.spirv.encoding.validate import disassemble, validate


def words_of(module: bytes) -> list[int]:
    return list(struct.unpack(f"<{len(module) // 4}I", module))


def instructions(module: bytes) -> list[tuple[Op, list[int]]]:
    """(opcode, operand words) of every instruction after the header."""
    words, out, pos = words_of(module), [], 5
    while pos < len(words):
        count, opcode = words[pos] >> 16, words[pos] & 0xFFFF
        out.append((Op(opcode), words[pos + 1:pos + count]))
        pos += count
    return out


# ---------------------------------------------------------------- encoding


def test_string_is_nul_terminated_and_padded():
    assert encode_string("") == [0]
    assert encode_string("abc") == [0x00636261]
    assert encode_string("abcd") == [0x64636261, 0]
    assert encode_string("é") == [0x0000A9C3]  # UTF-8


def test_instruction_words():
    inst = Instruction(Op.Name, operands=(7, "main"))
    assert inst.words() == [(4 << 16) | Op.Name, 7, *encode_string("main")]
    assert Instruction(Op.TypeFloat, None, 3, (32,)).words() == [(3 << 16) | 22, 3, 32]
    with pytest.raises(ValueError):
        Instruction(Op.Constant, 1, 2, (1 << 32,)).words()


def test_literals():
    assert literal_words(-1, 32) == (0xFFFFFFFF,)
    assert literal_words(-1, 8) == (0xFFFFFFFF,)  # narrow signed: sign-extended
    assert literal_words(200, 8) == (200,)
    assert literal_words(-2, 64) == (0xFFFFFFFE, 0xFFFFFFFF)  # low-order word first
    assert literal_words(1 << 40, 64) == (0, 1 << 8)
    assert float_bits(1.0, 32) == 0x3F800000
    assert float_bits(-0.0, 32) == 0x80000000
    assert float_bits(1.0, 16) == 0x3C00
    assert float_bits(1.0, 64) == 0x3FF0000000000000


# ---------------------------------------------------------------- dedupe


def test_types_are_deduplicated():
    m = ModuleBuilder()
    assert m.type_id(I32) == m.type_id(IntType(32, True))
    assert m.type_id(I32) != m.type_id(U32)
    p1 = m.type_id(PointerType(StorageClass.Function, F32))
    assert p1 == m.type_id(PointerType(StorageClass.Function, FloatType(32)))
    assert p1 != m.type_id(PointerType(StorageClass.Private, F32))
    ops = [op for op, _ in instructions(m.assemble())]
    assert ops.count(Op.TypeInt) == 2 and ops.count(Op.TypeFloat) == 1


def test_decorated_types_are_not_merged_with_undecorated_ones():
    m = ModuleBuilder()
    plain = m.type_id(RuntimeArrayType(F32))
    strided = m.type_id(RuntimeArrayType(F32, 4))
    assert plain != strided
    block = m.type_id(StructType((I32,), (0,), block=True))
    assert block != m.type_id(StructType((I32,)))
    assert block == m.type_id(StructType((I32,), (0,), block=True))
    text = disassemble(m.assemble())
    assert text.count("ArrayStride 4") == 1 and text.count(" Block") == 1


def test_constants_are_deduplicated_by_type_and_bits():
    m = ModuleBuilder()
    assert m.constant(I32, 1) == m.constant(I32, 1)
    assert m.constant(I32, 1) != m.constant(U32, 1)
    assert m.constant(I32, 0xFFFFFFFF) == m.constant(I32, -1)  # wrapped to the type
    assert m.constant(F32, 0.0) != m.constant(F32, -0.0)
    assert m.constant(F32, float("nan")) == m.constant(F32, float("nan"))
    assert m.constant(BOOL, True) == m.constant(BOOL, 1) != m.constant(BOOL, False)
    consts = [op for op, _ in instructions(m.assemble()) if op.name.startswith("Constant")]
    assert consts == [Op.Constant] * 6 + [Op.ConstantTrue, Op.ConstantFalse]


def test_64_bit_constant_takes_two_words():
    m = ModuleBuilder()
    m.constant(IntType(64, True), -2)
    m.constant(FloatType(64), 1.0)
    body = [ops for op, ops in instructions(m.assemble()) if op == Op.Constant]
    assert body[0][2:] == [0xFFFFFFFE, 0xFFFFFFFF]
    assert body[1][2:] == [0, 0x3FF00000]
    assert {Capability.Int64, Capability.Float64} <= m.capabilities


def test_capabilities_are_added_on_use_and_emitted_once_sorted():
    m = ModuleBuilder()
    assert m.capabilities == frozenset()
    m.require(Capability.Shader)
    m.require(Capability.Int8, Capability.Shader)
    m.require(Capability.Int16)
    caps = [ops[0] for op, ops in instructions(m.assemble()) if op == Op.Capability]
    assert caps == sorted({Capability.Shader, Capability.Int8, Capability.Int16})


def test_ext_import_and_decorations_once():
    m = ModuleBuilder()
    assert m.ext_import("GLSL.std.450") == m.ext_import("GLSL.std.450")
    t = m.type_id(F32)
    m.decorate(t, Decoration.RelaxedPrecision)
    m.decorate(t, Decoration.RelaxedPrecision)
    ops = [op for op, _ in instructions(m.assemble())]
    assert ops.count(Op.ExtInstImport) == 1 and ops.count(Op.Decorate) == 1


# ---------------------------------------------------------------- sections and functions


def small_module() -> ModuleBuilder:
    """A valid compute module that touches every section."""
    m = ModuleBuilder()
    m.require(Capability.Shader)
    fn = FunctionBuilder(m, name="main_fn")
    var = fn.variable(F32, "x")
    value = fn.glsl(F32, GLSL.Sqrt, m.constant(F32, 2.0))
    fn.store(var, fn.f_add(F32, value, m.constant(F32, 1.0)))
    out = m.global_variable(StorageClass.Private, F32, "out")
    fn.store(out, fn.load(F32, var))
    fn.return_()
    fn.finish()
    m.entry_point(ExecutionModel.GLCompute, fn.id, "main", m.global_variables)
    m.execution_mode(fn.id, ExecutionMode.LocalSize, 1, 1, 1)
    return m


SECTION_OPS = [
    {Op.Capability}, {Op.Extension}, {Op.ExtInstImport}, {Op.MemoryModel}, {Op.EntryPoint},
    {Op.ExecutionMode}, {Op.Name, Op.MemberName}, {Op.Decorate, Op.MemberDecorate},
    {Op.TypeVoid, Op.TypeFloat, Op.TypePointer, Op.TypeFunction, Op.Constant, Op.Variable},
]


def test_sections_come_in_spec_order_and_the_module_validates():
    m = small_module()
    module = m.assemble()
    validate(module)
    ops = [op for op, _ in instructions(module)]
    first_function = ops.index(Op.Function)
    rank = [next(i for i, s in enumerate(SECTION_OPS) if op in s) for op in ops[:first_function]]
    assert rank == sorted(rank)
    assert ops[-1] == Op.FunctionEnd


def test_header():
    m = small_module()
    words = words_of(m.assemble())
    assert words[0] == MAGIC_NUMBER
    assert words[1] == 0x00010500
    assert words[3] == m.new_id()  # the bound is one past the largest id
    assert words[4] == 0


def test_variables_go_to_the_top_of_the_entry_block():
    m = ModuleBuilder()
    m.require(Capability.Shader)
    fn = FunctionBuilder(m)
    label = fn.new_label()
    fn.branch(label)
    fn.begin_block(label)
    late = fn.variable(I32)  # asked for in a later block
    fn.store(late, m.constant(I32, 1))
    fn.return_()
    fn.finish()
    ops = [op for op, _ in instructions(m.assemble())]
    start = ops.index(Op.Function)
    assert ops[start + 1:start + 3] == [Op.Label, Op.Variable]


def test_float_add_sub_mul_are_not_contracted():
    m = ModuleBuilder()
    m.require(Capability.Shader)
    fn = FunctionBuilder(m)
    one = m.constant(F32, 1.0)
    ids = [fn.f_add(F32, one, one), fn.f_sub(F32, one, one), fn.f_mul(F32, one, one)]
    fn.f_div(F32, one, one)
    fn.return_()
    fn.finish()
    decorated = [ops[0] for op, ops in instructions(m.assemble())
                 if op == Op.Decorate and ops[1] == Decoration.NoContraction]
    assert decorated == ids


def test_emitting_after_a_terminator_is_a_bug():
    m = ModuleBuilder()
    fn = FunctionBuilder(m)
    fn.return_()
    assert not fn.is_open
    with pytest.raises(AssertionError):
        fn.i_add(I32, m.constant(I32, 1), m.constant(I32, 1))
