"""Lowering of cooperative-matrix tiles (SPV_KHR_cooperative_matrix, Subgroup scope).

A tile lives in registers spread over the subgroup; loads and stores name the first element
and the row stride (for parameters read from the argument block, for `pk.shared` arrays a
constant), RowMajor for a plain access and ColumnMajor for a transposed one. The array's
element type in memory may differ from the tile's dtype only in encoding (bf16 arrays are
stored as 16-bit words), which the extension allows: the pointer's type is the memory's.
"""

from __future__ import annotations

from pykern import ir
from pykern.lang.coop import CoopType
from pykern.spirv.context import LoweringContext
from pykern.spirv.encoding.grammar import Op
from pykern.spirv.encoding.grammar_ext import (
    CoopOp, CooperativeMatrixLayout, CooperativeMatrixOperands)
from pykern.spirv.encoding.types import U32

_FLOAT_OPS = {ir.BinOpKind.ADD: Op.FAdd, ir.BinOpKind.SUB: Op.FSub, ir.BinOpKind.MUL: Op.FMul,
              ir.BinOpKind.DIV: Op.FDiv}
_INT_OPS = {ir.BinOpKind.ADD: Op.IAdd, ir.BinOpKind.SUB: Op.ISub, ir.BinOpKind.MUL: Op.IMul}


def _layout(ctx: LoweringContext, transpose: bool) -> int:
    layout = (CooperativeMatrixLayout.ColumnMajorKHR if transpose
              else CooperativeMatrixLayout.RowMajorKHR)
    return ctx.const(U32, int(layout))


def _pointer_and_stride(ctx: LoweringContext, array_name: str, indices: tuple[int, ...]
                        ) -> tuple[int, int]:
    array = ctx.arrays[array_name]
    return array.pointer(ctx.fn, indices), array.row_stride(ctx.fn)


def fill(ctx: LoweringContext, e: ir.CoopFill, value: int) -> int:
    return ctx.fn.instruction(Op.CompositeConstruct, ctx.type_of(e.type), value)  # type: ignore


def load(ctx: LoweringContext, e: ir.CoopLoad, indices: tuple[int, ...]) -> int:
    pointer, stride = _pointer_and_stride(ctx, e.array, indices)
    return ctx.fn.instruction(CoopOp.CooperativeMatrixLoadKHR, ctx.type_of(e.type),  # type: ignore
                        pointer, _layout(ctx, e.transpose), stride)


def store(ctx: LoweringContext, s: ir.CoopStore, indices: tuple[int, ...], value: int) -> None:
    pointer, stride = _pointer_and_stride(ctx, s.array, indices)
    ctx.fn.instruction_void(CoopOp.CooperativeMatrixStoreKHR, pointer, value,  # type: ignore
                      _layout(ctx, s.transpose), stride)


def mma(ctx: LoweringContext, e: ir.CoopMma, a: int, b: int, c: int) -> int:
    operands = CooperativeMatrixOperands.NoneKHR
    signed = (
        (e.a, CooperativeMatrixOperands.MatrixASignedComponentsKHR),
        (e.b, CooperativeMatrixOperands.MatrixBSignedComponentsKHR),
        (e.c, CooperativeMatrixOperands.MatrixCSignedComponentsKHR),
        (e, CooperativeMatrixOperands.MatrixResultSignedComponentsKHR),
    )
    for node, flag in signed:
        dtype = node.type.dtype  # type: ignore[attr-defined]
        if dtype.is_int and dtype.is_signed:
            operands |= flag
    extra = (int(operands),) if operands else ()
    return ctx.fn.instruction(CoopOp.CooperativeMatrixMulAddKHR, ctx.type_of(e.type),  # type: ignore
                        a, b, c, *extra)


def binary(ctx: LoweringContext, op: ir.BinOpKind, t: CoopType, a: int, b: int) -> int:
    opcode = (_FLOAT_OPS if t.dtype.is_float else _INT_OPS).get(op)
    if opcode is None:
        raise AssertionError(f"no tile lowering for {op.name} on {t.name} (frontend bug?)")
    return ctx.fn.instruction(opcode, ctx.type_of(t), a, b)  # type: ignore[arg-type]


def negate(ctx: LoweringContext, t: CoopType, a: int) -> int:
    opcode = Op.FNegate if t.dtype.is_float else Op.SNegate
    return ctx.fn.instruction(opcode, ctx.type_of(t), a)  # type: ignore[arg-type]


def scale(ctx: LoweringContext, e: ir.CoopScale, matrix: int, scalar: int) -> int:
    t: CoopType = e.type  # type: ignore[assignment]
    if t.dtype.is_float:
        return ctx.fn.instruction(Op.MatrixTimesScalar, ctx.type_of(t), matrix, scalar)  # type: ignore
    splat = ctx.fn.instruction(Op.CompositeConstruct, ctx.type_of(t), scalar)  # type: ignore
    return ctx.fn.instruction(Op.IMul, ctx.type_of(t), matrix, splat)  # type: ignore[arg-type]


def convert(ctx: LoweringContext, source: CoopType, target: CoopType, value: int) -> int:
    """Elementwise conversion, with the scalar rules of the IR where SPIR-V has one instruction
    for them (float to int truncates toward zero; int to int wraps or extends by the source's
    signedness)."""
    s, d = source.dtype, target.dtype
    if s.is_float and d.is_float:
        opcode = Op.FConvert
    elif s.is_float:
        opcode = Op.ConvertFToS if d.is_signed else Op.ConvertFToU
    elif d.is_float:
        opcode = Op.ConvertSToF if s.is_signed else Op.ConvertUToF
    else:
        opcode = Op.SConvert if s.is_signed else Op.UConvert
        if s.bits == d.bits:
            opcode = Op.Bitcast
    return ctx.fn.instruction(opcode, ctx.type_of(target), value)  # type: ignore[arg-type]
