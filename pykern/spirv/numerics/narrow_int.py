"""8- and 16-bit integer arithmetic computed on 32-bit values and wrapped in the code.

NVIDIA's driver (580) lost the wrap of 8- and 16-bit results: `0 - x` on an i8 of -128 then
compared with 0 came out as +128 (`min(0 - x, 0)` gave 0), a u8 difference that wrapped to 202
was then used unwrapped, an i8 square was taken `% 9` before wrapping. Its registers are 32
bits wide, and some of its rewrites of narrow instructions forget that the high bits must be
redone. So an operator on a narrow integer is lowered as: both operands widened to 32 bits
(keeping their value), the 32-bit operation, the result wrapped to the narrow width on the
32-bit value (a mask, or a shift left and back for a signed type), and only then converted to
the narrow type. The driver is left no narrow arithmetic to rewrite, only conversions; every
device computes narrow integers in 32-bit registers anyway, so the cost is a shift or a mask.

`WIDEN` turns this off (a module constant so that a device diagnosis can compare the forms).
"""

from __future__ import annotations

from collections.abc import Callable

from pykern.spirv.casts import int_to_int
from pykern.spirv.context import LoweringContext
from pykern.spirv.encoding.types import IntType, ScalarType

WIDEN = True

Binary = Callable[[LoweringContext, ScalarType, int, int], int]
Unary = Callable[[LoweringContext, ScalarType, int], int]


def applies(ty: ScalarType) -> bool:
    """Whether operators on `ty` are computed in 32 bits here."""
    return WIDEN and isinstance(ty, IntType) and ty.bits < 32


def binary(ctx: LoweringContext, entry: Binary, ty: IntType, a: int, b: int,
           keeps_type: bool = True) -> int:
    """`entry` (an operator's lowering) applied to narrow `a` and `b` in 32 bits; the result
    wrapped back to `ty` where `keeps_type` (a comparison's bool is returned as it is)."""
    wide = IntType(32, ty.signed)
    result = entry(ctx, wide, widen(ctx, ty, a), widen(ctx, ty, b))
    return narrow(ctx, ty, result) if keeps_type else result


def unary(ctx: LoweringContext, entry: Unary, ty: IntType, a: int) -> int:
    """`entry` applied to narrow `a` in 32 bits, the result wrapped back to `ty`."""
    return narrow(ctx, ty, entry(ctx, IntType(32, ty.signed), widen(ctx, ty, a)))


def widen(ctx: LoweringContext, ty: IntType, value: int) -> int:
    """A narrow integer as the 32-bit integer of the same signedness and value."""
    return int_to_int(ctx, ty, IntType(32, ty.signed), value)


def narrow(ctx: LoweringContext, ty: IntType, value: int) -> int:
    """A 32-bit result wrapped to `ty`'s width on the 32-bit value, then converted to `ty`."""
    fn = ctx.fn
    u32 = IntType(32, False)
    bits = value if not ty.signed else fn.bitcast(u32, value)
    spare = 32 - ty.bits
    if ty.signed:  # the low bits sign-extended: shift up, then arithmetically back down
        i32 = IntType(32, True)
        up = fn.bitcast(i32, fn.shift_left_logical(u32, bits, ctx.const(u32, spare)))
        bits = fn.bitcast(u32, fn.shift_right_arithmetic(i32, up, ctx.const(u32, spare)))
    else:
        bits = fn.bitwise_and(u32, bits, ctx.const(u32, (1 << ty.bits) - 1))
    return int_to_int(ctx, u32, ty, bits)
