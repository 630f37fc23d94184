"""Lowering of IR expressions: one method per node class, dispatched by a table."""

from __future__ import annotations

from collections.abc import Callable

from pykern import ir
from pykern.ir import BinOpKind, LogicalKind, MathFn

from . import arith, casts
from .builtins import builtin
from .context import LoweringContext
from .control import selection
from .grammar import GLSL
from .layout import shape_field
from .pysemantics import float_pow
from .types import BOOL, FloatType

# GLSL.std.450 instruction of each one-argument math function
_MATH_GLSL = {
    MathFn.SQRT: GLSL.Sqrt,
    MathFn.EXP: GLSL.Exp,
    MathFn.LOG: GLSL.Log,
    MathFn.SIN: GLSL.Sin,
    MathFn.COS: GLSL.Cos,
    MathFn.TANH: GLSL.Tanh,
    MathFn.FLOOR: GLSL.Floor,
    MathFn.CEIL: GLSL.Ceil,
}
# GLSL.std.450 defines these for 16- and 32-bit floats only
_NOT_FOR_F64 = frozenset({MathFn.EXP, MathFn.LOG, MathFn.SIN, MathFn.COS, MathFn.TANH,
                          MathFn.POW})


class ExpressionLowering:
    """Turns an `ir.Expr` into instructions of the current block; returns the value's id."""

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

    def _const(self, e: ir.Const) -> int:
        return self.ctx.const(self.ctx.type_of(e.type), e.value)

    def _local(self, e: ir.LocalRef) -> int:
        return self.fn.load(self.ctx.type_of(e.type), self.ctx.locals[e.name])

    def _scalar_param(self, e: ir.ScalarParam) -> int:
        return self.ctx.resources.load_scalar_param(self.fn, e)

    def _array_load(self, e: ir.ArrayLoad) -> int:
        indices = tuple(self.lower(i) for i in e.indices)
        return self.ctx.resources.load_element(self.fn, e.array, indices)

    def _array_dim(self, e: ir.ArrayDim) -> int:
        return self.ctx.resources.load_field(self.fn, shape_field(e.array, e.axis))

    def _binop(self, e: ir.BinOp) -> int:
        lhs = self.lower(e.lhs)
        if _is_float_square(e):
            # x ** 2 is so common that it deserves numpy's exact answer, not exp2(2 * log2 x)
            return self.fn.f_mul(self.ctx.type_of(e.type), lhs, lhs)
        return arith.binary(self.ctx, e.op, e.lhs.type, lhs, self.lower(e.rhs))

    def _unaryop(self, e: ir.UnaryOp) -> int:
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

    def _cast(self, e: ir.Cast) -> int:
        return casts.cast(self.ctx, e.value.type, e.type, self.lower(e.value))

    def _math(self, e: ir.MathCall) -> int:
        ty = self.ctx.type_of(e.type)
        assert isinstance(ty, FloatType), f"{e.fn.name} on {e.type.name}"
        if ty.bits == 64 and e.fn in _NOT_FOR_F64:
            raise NotImplementedError(f"{e.fn.py_name} on f64 (GLSL.std.450 lacks it)")
        args = [self.lower(a) for a in e.args]
        if e.fn == MathFn.POW:
            return float_pow(self.ctx, ty, *args)
        return self.fn.glsl(ty, _MATH_GLSL[e.fn], *args)

    def _builtin(self, e: ir.Builtin) -> int:
        return builtin(self.ctx, e.kind, e.dim)


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
    ir.Cast: ExpressionLowering._cast,
    ir.MathCall: ExpressionLowering._math,
    ir.Builtin: ExpressionLowering._builtin,
}
