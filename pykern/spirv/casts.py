"""`ir.Cast`: conversions between dtypes, one table entry per (source kind, target kind).

Semantics (ir.Cast): float -> int truncates toward zero; int -> bool is `!= 0` (float -> bool
too, so NaN is True as in Python); bool -> number is 0/1; int -> int wraps or sign-extends
according to the source's signedness.
"""

from __future__ import annotations

from collections.abc import Callable

from pykern.dtypes import DType

from .context import LoweringContext
from .types import BOOL, FloatType, IntType, ScalarType

Convert = Callable[[LoweringContext, ScalarType, ScalarType, int], int]


def cast(ctx: LoweringContext, source: DType, target: DType, value: int) -> int:
    """`value` (of dtype `source`) converted to `target`."""
    src, dst = ctx.type_of(source), ctx.type_of(target)
    if src == dst:
        return value
    return CASTS[source.kind, target.kind](ctx, src, dst, value)


def _from_bool(ctx: LoweringContext, src: ScalarType, dst: ScalarType, value: int) -> int:
    return ctx.fn.select(dst, value, ctx.const(dst, 1), ctx.const(dst, 0))


def _int_to_bool(ctx: LoweringContext, src: ScalarType, dst: ScalarType, value: int) -> int:
    return ctx.fn.i_not_equal(BOOL, value, ctx.const(src, 0))


def _float_to_bool(ctx: LoweringContext, src: ScalarType, dst: ScalarType, value: int) -> int:
    return ctx.fn.f_unord_not_equal(BOOL, value, ctx.const(src, 0.0))


def _from_signed(ctx: LoweringContext, src: IntType, dst: IntType, value: int) -> int:
    # OpSConvert sign-extends or truncates into a type of any signedness
    if src.bits == dst.bits:
        return ctx.fn.bitcast(dst, value)
    return ctx.fn.s_convert(dst, value)


def _from_unsigned(ctx: LoweringContext, src: IntType, dst: IntType, value: int) -> int:
    # OpUConvert must produce an unsigned type: widen or narrow first, then reinterpret
    fn = ctx.fn
    if src.bits != dst.bits:
        value = fn.u_convert(IntType(dst.bits, False), value)
    return value if not dst.signed else fn.bitcast(dst, value)


def _float_to_signed(ctx: LoweringContext, src: FloatType, dst: IntType, value: int) -> int:
    return ctx.fn.convert_f_to_s(dst, value)


def _float_to_unsigned(ctx: LoweringContext, src: FloatType, dst: IntType, value: int) -> int:
    return ctx.fn.convert_f_to_u(dst, value)


def _signed_to_float(ctx: LoweringContext, src: IntType, dst: FloatType, value: int) -> int:
    return ctx.fn.convert_s_to_f(dst, value)


def _unsigned_to_float(ctx: LoweringContext, src: IntType, dst: FloatType, value: int) -> int:
    return ctx.fn.convert_u_to_f(dst, value)


def _float_to_float(ctx: LoweringContext, src: FloatType, dst: FloatType, value: int) -> int:
    return ctx.fn.f_convert(dst, value)


CASTS: dict[tuple[str, str], Convert] = {
    ("b", "i"): _from_bool,
    ("b", "u"): _from_bool,
    ("b", "f"): _from_bool,
    ("i", "b"): _int_to_bool,
    ("u", "b"): _int_to_bool,
    ("f", "b"): _float_to_bool,
    ("i", "i"): _from_signed,
    ("i", "u"): _from_signed,
    ("u", "u"): _from_unsigned,
    ("u", "i"): _from_unsigned,
    ("f", "i"): _float_to_signed,
    ("f", "u"): _float_to_unsigned,
    ("i", "f"): _signed_to_float,
    ("u", "f"): _unsigned_to_float,
    ("f", "f"): _float_to_float,
}
