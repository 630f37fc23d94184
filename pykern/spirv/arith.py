"""Binary and unary operators: one table entry per (operator, kind of operand type).

Kinds are numpy's letters, as `DType.kind`: 'i' signed int, 'u' unsigned int, 'f' float, 'b'
bool. An entry takes the lowering context, the operand SPIR-V type and the operand ids, and
returns the result id. A missing entry is a frontend bug (it must have inserted a cast).
"""

from __future__ import annotations

from collections.abc import Callable

from pykern.lang.dtypes import DType
from pykern.ir import BinOpKind as B
from pykern.ir import UnaryOpKind as U

from pykern.spirv.numerics import pysemantics as py
from pykern.spirv.numerics import strict
from pykern.spirv.numerics import int_equality, narrow_int, wide_int
from pykern.spirv.context import LoweringContext
from pykern.spirv.function import FunctionBuilder as FB
from pykern.spirv.encoding.grammar import GLSL
from pykern.spirv.numerics.mathfns import is_nan
from pykern.spirv.encoding.types import BOOL, F16, F32, U32, FloatType, IntType, ScalarType
from pykern.spirv.numerics.half_rounding import narrow_to_f16
from pykern.spirv.typemap import unsigned

Binary = Callable[[LoweringContext, ScalarType, int, int], int]
Unary = Callable[[LoweringContext, ScalarType, int], int]


def binary(ctx: LoweringContext, op: B, dtype: DType, a: int, b: int) -> int:
    """`a op b` for operands of `dtype` (the result type follows from the operator)."""
    entry = BINARY.get((op, dtype.kind))
    if entry is None:
        raise AssertionError(f"no lowering for {op.name} on {dtype.name} (frontend bug?)")
    return _apply(ctx, op, entry, ctx.type_of(dtype), a, b)


def on_ints(ctx: LoweringContext, op: B, ty: IntType, a: int, b: int) -> int:
    """`a op b` for operands of the integer type `ty` (for code that has no dtype at hand)."""
    return _apply(ctx, op, BINARY[op, "i" if ty.signed else "u"], ty, a, b)


def _apply(ctx: LoweringContext, op: B, entry: Binary, ty: ScalarType, a: int, b: int) -> int:
    if narrow_int.applies(ty):  # 8/16-bit integers: in 32 bits, wrapped in the code
        return narrow_int.binary(ctx, entry, ty, a, b,  # type: ignore[arg-type]
                                 keeps_type=op not in _TESTS)
    return entry(ctx, ty, a, b)


def unary(ctx: LoweringContext, op: U, dtype: DType, a: int) -> int:
    """`op a` for an operand of `dtype`."""
    entry = UNARY.get((op, dtype.kind))
    if entry is None:
        raise AssertionError(f"no lowering for {op.name} on {dtype.name} (frontend bug?)")
    ty = ctx.type_of(dtype)
    if narrow_int.applies(ty):
        return narrow_int.unary(ctx, entry, ty, a)  # type: ignore[arg-type]
    return entry(ctx, ty, a)


# ---------------------------------------------------------------- entry makers


def _same(method: Callable[[FB, ScalarType, int, int], int]) -> Binary:
    """An instruction whose result has the operand type."""
    return lambda ctx, ty, a, b: method(ctx.fn, ty, a, b)


def _test(method: Callable[[FB, ScalarType, int, int], int]) -> Binary:
    """A comparison: the result is a bool."""
    return lambda ctx, ty, a, b: method(ctx.fn, BOOL, a, b)


def _divide(ctx: LoweringContext, ty: ScalarType, a: int, b: int) -> int:
    # Vulkan allows 2.5 ULP; strict floating point promises numpy's correctly rounded quotient
    if ctx.target.strict_float:
        return strict.divide(ctx, ty, a, b)  # type: ignore[arg-type]
    return ctx.fn.f_div(ty, a, b)


def _half_through_f32(entry: Binary) -> Binary:
    """A float operation that computes f16 in f32 and rounds the result onto f16's grid in
    code (`narrow_to_f16`): exact for + - * / (f32 holds every f16 sum, difference and
    product exactly, and a quotient rounded once more to f16 gives the f16 quotient). NVIDIA
    (580) kept an f16 quotient unrounded in its f32 register: `h / 1e-3 / -2.5` came out
    finite where the first quotient overflows f16 to inf (found by random kernels)."""
    def lower(ctx: LoweringContext, ty: ScalarType, a: int, b: int) -> int:
        if ty != F16:
            return entry(ctx, ty, a, b)
        fn = ctx.fn
        wide = entry(ctx, F32, fn.f_convert(F32, a), fn.f_convert(F32, b))
        return narrow_to_f16(ctx, F32, wide)
    return lower


def _bool_order(method: Callable[[FB, ScalarType, int, int], int]) -> Binary:
    """An ordering of bools (False < True), compared as the u32 0/1."""
    def compare(ctx: LoweringContext, ty: ScalarType, a: int, b: int) -> int:
        one, zero = ctx.const(U32, 1), ctx.const(U32, 0)
        fn = ctx.fn
        return method(fn, BOOL, fn.select(U32, a, one, zero), fn.select(U32, b, one, zero))
    return compare


def _nan_or_pick(better: Callable[[FB, ScalarType, int, int], int]) -> Binary:
    """numpy's minimum/maximum: a NaN operand is the result (the first, if both are);
    otherwise `a` where `better(a, b)` (a < b for min, a > b for max), else `b` (of -0.0 and
    0.0, the second, as numpy). The NaN tests are on the bits: GLSL's FMin/FMax leave NaN
    undefined, NMin/NMax drop it, and a fast-math driver may fold a float NaN test."""
    def lower(ctx: LoweringContext, ty: ScalarType, a: int, b: int) -> int:
        assert isinstance(ty, FloatType)
        fn = ctx.fn
        result = fn.select(ty, better(fn, BOOL, a, b), a, b)
        result = fn.select(ty, is_nan(ctx, ty, b), b, result)
        return fn.select(ty, is_nan(ctx, ty, a), a, result)
    return lower


def _int_pick(better: str) -> Binary:
    """Integer min/max as a compare and a select: NVIDIA (driver 580) folded GLSL's SMax/SMin
    nested in another of a shared operand, `max(x % -5, max(b, x))`, into its first operand
    (-2 for max(-2, 3)); the select form it computes right. `better` is `<` for min."""
    def lower(ctx: LoweringContext, ty: ScalarType, a: int, b: int) -> int:
        assert isinstance(ty, IntType)
        return ctx.fn.select(ty, wide_int.order(ctx, better, ty, a, b), a, b)
    return lower


def _int_order(op: str) -> Binary:
    """An integer comparison (64-bit ones on 32-bit halves: `wide_int`)."""
    def lower(ctx: LoweringContext, ty: ScalarType, a: int, b: int) -> int:
        assert isinstance(ty, IntType)
        return wide_int.order(ctx, op, ty, a, b)
    return lower


_ORDERS = {B.LT: "<", B.LE: "<=", B.GT: ">", B.GE: ">="}
_TESTS = frozenset((B.EQ, B.NE, *_ORDERS))  # operators whose result is a bool


def _unary(method: Callable[[FB, ScalarType, int], int]) -> Unary:
    return lambda ctx, ty, a: method(ctx.fn, ty, a)


def _unary_glsl(instruction: GLSL) -> Unary:
    return lambda ctx, ty, a: ctx.fn.glsl(ty, instruction, a)


def _identity(ctx: LoweringContext, ty: ScalarType, a: int) -> int:
    return a


def _signed_abs(ctx: LoweringContext, ty: ScalarType, a: int) -> int:
    """`abs(a)` wrapping as numpy (`abs(INT_MIN)` is INT_MIN): `(a ^ m) + (m >>> (bits - 1))`
    with `m = a >> (bits - 1)`, all ones for a negative `a`. NVIDIA takes GLSL's SAbs, and the
    usual idioms it recognises as abs (`a < 0 ? -a : a`, `(a ^ m) - m`, `a * sign`), to be
    non-negative, so a later `% n` or `< 0` of `abs(INT_MIN)` went wrong there; this form it
    does not rewrite."""
    assert isinstance(ty, IntType)
    fn, uty = ctx.fn, unsigned(ty)
    m = fn.shift_right_arithmetic(ty, a, ctx.const(ty, ty.bits - 1))
    sign_bit = fn.shift_right_logical(uty, fn.bitcast(uty, m), ctx.const(uty, ty.bits - 1))
    return fn.i_add(ty, fn.bitwise_xor(ty, a, m), fn.bitcast(ty, sign_bit))


INTS = ("i", "u")

BINARY: dict[tuple[B, str], Binary] = {
    **{(B.ADD, k): wide_int.add for k in INTS},
    **{(B.SUB, k): wide_int.sub for k in INTS},
    **{(B.MUL, k): wide_int.mul for k in INTS},
    (B.ADD, "f"): _half_through_f32(_same(FB.f_add)),
    (B.SUB, "f"): _half_through_f32(_same(FB.f_sub)),
    (B.MUL, "f"): _half_through_f32(_same(FB.f_mul)),
    (B.DIV, "f"): _half_through_f32(_divide),
    (B.FLOORDIV, "i"): py.signed_floordiv,
    (B.FLOORDIV, "u"): py.unsigned_floordiv,
    (B.FLOORDIV, "f"): py.float_floordiv,
    (B.MOD, "i"): py.signed_mod,
    (B.MOD, "u"): py.unsigned_mod,
    (B.MOD, "f"): py.float_mod,
    **{(B.POW, k): py.int_pow for k in INTS},
    (B.POW, "f"): py.float_pow,
    **{(B.BIT_AND, k): _same(FB.bitwise_and) for k in INTS},
    **{(B.BIT_OR, k): _same(FB.bitwise_or) for k in INTS},
    **{(B.BIT_XOR, k): _same(FB.bitwise_xor) for k in INTS},
    (B.BIT_AND, "b"): _same(FB.logical_and),
    (B.BIT_OR, "b"): _same(FB.logical_or),
    (B.BIT_XOR, "b"): _same(FB.logical_not_equal),
    **{(B.LSHIFT, k): py.shift_left for k in INTS},
    **{(B.RSHIFT, k): py.shift_right for k in INTS},
    **{(B.MIN, k): _int_pick("<") for k in INTS},
    (B.MIN, "f"): _nan_or_pick(FB.f_ord_less_than),
    (B.MIN, "b"): _same(FB.logical_and),
    **{(B.MAX, k): _int_pick(">") for k in INTS},
    (B.MAX, "f"): _nan_or_pick(FB.f_ord_greater_than),
    (B.MAX, "b"): _same(FB.logical_or),
    **{(B.EQ, k): int_equality.equal for k in INTS},
    **{(B.NE, k): int_equality.not_equal for k in INTS},
    (B.EQ, "f"): _test(FB.f_ord_equal),
    (B.NE, "f"): _test(FB.f_unord_not_equal),  # nan != nan is True, as in Python
    (B.EQ, "b"): _test(FB.logical_equal),
    (B.NE, "b"): _test(FB.logical_not_equal),
    **{(op, k): _int_order(symbol) for op, symbol in _ORDERS.items() for k in INTS},
    (B.LT, "f"): _test(FB.f_ord_less_than),
    (B.LE, "f"): _test(FB.f_ord_less_than_equal),
    (B.GT, "f"): _test(FB.f_ord_greater_than),
    (B.GE, "f"): _test(FB.f_ord_greater_than_equal),
    (B.LT, "b"): _bool_order(FB.u_less_than),
    (B.LE, "b"): _bool_order(FB.u_less_than_equal),
    (B.GT, "b"): _bool_order(FB.u_greater_than),
    (B.GE, "b"): _bool_order(FB.u_greater_than_equal),
}

UNARY: dict[tuple[U, str], Unary] = {
    **{(U.NEG, k): _unary(FB.s_negate) for k in INTS},  # wraps, also for unsigned
    (U.NEG, "f"): _unary(FB.f_negate),
    (U.NOT, "b"): _unary(FB.logical_not),
    **{(U.INVERT, k): _unary(FB.not_) for k in INTS},
    (U.ABS, "i"): _signed_abs,
    (U.ABS, "u"): _identity,
    (U.ABS, "f"): _unary_glsl(GLSL.FAbs),
}
