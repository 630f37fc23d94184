"""Lowering of IR expressions: one method per node class, dispatched by a table."""

from __future__ import annotations

from collections.abc import Callable

from pykern import ir
from pykern.ir import BinOpKind, LogicalKind

from pykern.lang.coop import CoopType
from pykern.spirv import arith, arrays, casts, coop
from pykern.spirv.numerics import f16_bits, strict
from pykern.spirv.atomics import atomic
from pykern.spirv.builtins import builtin
from pykern.spirv.context import LoweringContext
from pykern.spirv.control import selection
from pykern.spirv.numerics.mathfns import math_call
from pykern.spirv.subgroups import subgroup
from pykern.spirv.encoding.types import BOOL, F16, FloatType


class ExpressionLowering:
    """Turns an `ir.Expr` into instructions of the current block; returns the value's id.

    Operands are evaluated left to right, as Python does."""

    def __init__(self, ctx: LoweringContext) -> None:
        self.ctx = ctx
        self.fn = ctx.fn

    def lower(self, expr: ir.Expr) -> int:
        """Emits `expr` and returns the id of its value."""
        self.ctx.type_of(expr.type)  # declares the capability values of this type need
        method = _DISPATCH.get(type(expr))
        if method is None:
            raise AssertionError(f"no lowering for IR expression {type(expr).__name__}")
        return method(self, expr)

    def _indices(self, indices: tuple[ir.Expr, ...]) -> tuple[int, ...]:
        return tuple(self.lower(i) for i in indices)

    def _const(self, e: ir.Const) -> int:
        ty = self.ctx.type_of(e.type)
        if self.ctx.target.strict_float and isinstance(ty, FloatType):
            # hidden from the driver's constant folding (see strict.runtime_constant)
            return strict.runtime_constant(self.ctx, ty, e.value)
        return self.ctx.const(ty, e.value)

    def _local(self, e: ir.LocalRef) -> int:
        return self.fn.load(self.ctx.type_of(e.type), self.ctx.locals[e.name])

    def _scalar_param(self, e: ir.ScalarParam) -> int:
        return self.ctx.resources.load_scalar_param(self.fn, e)

    def _array_load(self, e: ir.ArrayLoad) -> int:
        array = self.ctx.arrays[e.array]
        indices = self._indices(e.indices)

        def access() -> int:
            return arrays.load(self.fn, self.ctx.module, array,
                               self.ctx.local_indices(array, indices))

        if self.ctx.debug is None:
            return access()
        return self.ctx.debug.checked_access(self.ctx, e, e.array, array, indices, access,
                                             self.ctx.type_of(e.type))  # type: ignore[return-value]

    def _array_dim(self, e: ir.ArrayDim) -> int:
        return self.ctx.arrays[e.array].shape(self.fn, e.axis)

    def _binop(self, e: ir.BinOp) -> int:
        lhs = self.lower(e.lhs)
        if _is_float_square(e):
            # x ** 2 is so common that it deserves numpy's exact answer, not exp2(2 * log2 x)
            return self.fn.f_mul(self.ctx.type_of(e.type), lhs, lhs)
        if isinstance(e.type, CoopType):
            return coop.binary(self.ctx, e.op, e.type, lhs, self.lower(e.rhs))
        return arith.binary(self.ctx, e.op, e.lhs.type, lhs, self.lower(e.rhs))

    def _unaryop(self, e: ir.UnaryOp) -> int:
        if isinstance(e.type, CoopType):
            return coop.negate(self.ctx, e.type, self.lower(e.operand))
        return arith.unary(self.ctx, e.op, e.operand.type, self.lower(e.operand))

    def _logical(self, e: ir.Logical) -> int:
        # `rhs` runs only when it decides the result: through a branch, into a variable
        result = self.fn.variable(BOOL, e.op.value)
        lhs = self.lower(e.lhs)
        self.fn.store(result, lhs)

        def rhs() -> None:
            self.fn.store(result, self.lower(e.rhs))

        if e.op == LogicalKind.AND:
            selection(self.fn, lhs, rhs, None)
        else:
            selection(self.fn, lhs, None, rhs)
        return self.fn.load(BOOL, result)

    def _ifexp(self, e: ir.IfExp) -> int:
        ty = self.ctx.type_of(e.type)
        result = self.fn.variable(ty, "ifexp")
        cond = self.lower(e.cond)
        selection(self.fn, cond,
                  lambda: self.fn.store(result, self.lower(e.then)),
                  lambda: self.fn.store(result, self.lower(e.orelse)))
        return self.fn.load(ty, result)

    def _select(self, e: ir.Select) -> int:
        cond, then, orelse = self.lower(e.cond), self.lower(e.then), self.lower(e.orelse)
        return self.fn.select(self.ctx.type_of(e.type), cond, then, orelse)

    def _cast(self, e: ir.Cast) -> int:
        if isinstance(e.type, CoopType):
            return coop.convert(self.ctx, e.value.type, e.type,  # type: ignore[arg-type]
                                self.lower(e.value))
        return casts.cast(self.ctx, e.value.type, e.type, self.lower(e.value))

    def _bitcast(self, e: ir.Bitcast) -> int:
        dst, src = self.ctx.type_of(e.type), self.ctx.type_of(e.value.type)
        if F16 in (dst, src):  # an f16's bits through its f32 (see `f16_bits`)
            return f16_bits.bitcast(self.ctx, dst, src, self.lower(e.value))  # type: ignore[arg-type]
        return self.fn.bitcast(dst, self.lower(e.value))

    def _math(self, e: ir.MathCall) -> int:
        ty = self.ctx.type_of(e.args[0].type)
        assert isinstance(ty, FloatType), f"{e.fn.name} on {e.args[0].type.name}"
        return math_call(self.ctx, e.fn, ty, [self.lower(a) for a in e.args])

    def _builtin(self, e: ir.Builtin) -> int:
        return builtin(self.ctx, e.kind, e.dim)

    def _atomic(self, e: ir.Atomic) -> int:
        indices = self._indices(e.indices)
        comparator = self.lower(e.comparator) if e.comparator is not None else None
        value = self.lower(e.value)

        def access() -> int:
            return atomic(self.ctx, e, indices, value, comparator)

        if self.ctx.debug is None:
            return access()
        return self.ctx.debug.checked_access(self.ctx, e, e.array, self.ctx.arrays[e.array],
                                             indices, access, self.ctx.type_of(e.type))  # type: ignore[return-value]

    def _subgroup(self, e: ir.Subgroup) -> int:
        return subgroup(self.ctx, e, [self.lower(a) for a in e.args])

    def _call(self, e: ir.Call) -> int:
        callee = self.ctx.functions[e.function]
        args = [self.lower(a) for a in e.args]
        return self.fn.function_call(callee.result, callee.id, *args)


    def _coop_fill(self, e: ir.CoopFill) -> int:
        return coop.fill(self.ctx, e, self.lower(e.value))

    def _coop_load(self, e: ir.CoopLoad) -> int:
        return coop.load(self.ctx, e, self._indices(e.indices))

    def _coop_mma(self, e: ir.CoopMma) -> int:
        a, b = self.lower(e.a), self.lower(e.b)
        return coop.mma(self.ctx, e, a, b, self.lower(e.c))

    def _coop_scale(self, e: ir.CoopScale) -> int:
        matrix = self.lower(e.matrix)
        return coop.scale(self.ctx, e, matrix, self.lower(e.scalar))


def _is_float_square(e: ir.BinOp) -> bool:
    return (e.op == BinOpKind.POW and e.type.is_float and isinstance(e.rhs, ir.Const)
            and e.rhs.value == 2)


_DISPATCH: dict[type, Callable[[ExpressionLowering, ir.Expr], int]] = {
    ir.Const: ExpressionLowering._const,
    ir.LocalRef: ExpressionLowering._local,
    ir.ScalarParam: ExpressionLowering._scalar_param,
    ir.ArrayLoad: ExpressionLowering._array_load,
    ir.ArrayDim: ExpressionLowering._array_dim,
    ir.BinOp: ExpressionLowering._binop,
    ir.UnaryOp: ExpressionLowering._unaryop,
    ir.Logical: ExpressionLowering._logical,
    ir.IfExp: ExpressionLowering._ifexp,
    ir.Select: ExpressionLowering._select,
    ir.Cast: ExpressionLowering._cast,
    ir.Bitcast: ExpressionLowering._bitcast,
    ir.MathCall: ExpressionLowering._math,
    ir.Builtin: ExpressionLowering._builtin,
    ir.Atomic: ExpressionLowering._atomic,
    ir.Subgroup: ExpressionLowering._subgroup,
    ir.Call: ExpressionLowering._call,
    ir.CoopFill: ExpressionLowering._coop_fill,
    ir.CoopLoad: ExpressionLowering._coop_load,
    ir.CoopMma: ExpressionLowering._coop_mma,
    ir.CoopScale: ExpressionLowering._coop_scale,
}
