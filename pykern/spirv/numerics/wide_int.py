"""64-bit integer order comparisons, sums, differences and products spelled out on 32-bit
halves.

NVIDIA's driver (580) computed `b - a if a < b else 0` on u64 operands with the high word all
ones (3 - 2**32 for 3), and so counted 64-bit `range` loops with run-time bounds past their
end: a 64-bit comparison next to a 64-bit difference of the same operands gets a wrong carry.
Every device takes 64-bit integers apart into 32-bit words anyway, so spelling the operations
out on halves costs next to nothing, and the driver then has no 64-bit pattern to rewrite.

`SPLIT_ORDER`, `SPLIT_SUM` and `SPLIT_MUL` say which are spelled out (module constants so that a
device diagnosis can compare the forms); integers of other widths take SPIR-V's instructions.
"""

from __future__ import annotations

from pykern.spirv.context import LoweringContext
from pykern.spirv.encoding.types import BOOL, U32, IntType
from pykern.spirv.function import FunctionBuilder as FB

SPLIT_ORDER = True
SPLIT_SUM = True
SPLIT_MUL = True

_I32 = IntType(32, True)
_NATIVE = {("<", True): FB.s_less_than, ("<=", True): FB.s_less_than_equal,
           (">", True): FB.s_greater_than, (">=", True): FB.s_greater_than_equal,
           ("<", False): FB.u_less_than, ("<=", False): FB.u_less_than_equal,
           (">", False): FB.u_greater_than, (">=", False): FB.u_greater_than_equal}


def _wide(ty: IntType) -> bool:
    return ty.bits == 64


def halves(ctx: LoweringContext, ty: IntType, a: int) -> tuple[int, int]:
    """(low word as u32, high word as u32) of a 64-bit integer."""
    fn = ctx.fn
    u64 = IntType(64, False)
    bits = a if not ty.signed else fn.bitcast(u64, a)
    low = fn.u_convert(U32, bits)
    high = fn.u_convert(U32, fn.shift_right_logical(u64, bits, ctx.const(u64, 32)))
    return low, high


def _join(ctx: LoweringContext, ty: IntType, low: int, high: int) -> int:
    fn = ctx.fn
    u64 = IntType(64, False)
    bits = fn.bitwise_or(u64, fn.u_convert(u64, low),
                         fn.shift_left_logical(u64, fn.u_convert(u64, high), ctx.const(u64, 32)))
    return bits if not ty.signed else fn.bitcast(ty, bits)


def less_than(ctx: LoweringContext, ty: IntType, a: int, b: int) -> int:
    """`a < b` (signed or unsigned as `ty`)."""
    fn = ctx.fn
    if not (_wide(ty) and SPLIT_ORDER):
        return (fn.s_less_than if ty.signed else fn.u_less_than)(BOOL, a, b)
    low_a, high_a = halves(ctx, ty, a)
    low_b, high_b = halves(ctx, ty, b)
    if ty.signed:  # the high words carry the sign
        high_less = fn.s_less_than(BOOL, fn.bitcast(_I32, high_a), fn.bitcast(_I32, high_b))
    else:
        high_less = fn.u_less_than(BOOL, high_a, high_b)
    return fn.select(BOOL, fn.i_equal(BOOL, high_a, high_b),
                     fn.u_less_than(BOOL, low_a, low_b), high_less)


def order(ctx: LoweringContext, op: str, ty: IntType, a: int, b: int) -> int:
    """`a op b` for op one of `<`, `<=`, `>`, `>=`, all from `less_than`."""
    fn = ctx.fn
    if not (_wide(ty) and SPLIT_ORDER):
        return _NATIVE[op, ty.signed](fn, BOOL, a, b)
    if op == "<":
        return less_than(ctx, ty, a, b)
    if op == ">":
        return less_than(ctx, ty, b, a)
    if op == "<=":
        return fn.logical_not(BOOL, less_than(ctx, ty, b, a))
    assert op == ">=", op
    return fn.logical_not(BOOL, less_than(ctx, ty, a, b))


def add(ctx: LoweringContext, ty: IntType, a: int, b: int) -> int:
    """`a + b`, wrapping."""
    return _sum(ctx, ty, a, b, subtract=False)


def sub(ctx: LoweringContext, ty: IntType, a: int, b: int) -> int:
    """`a - b`, wrapping."""
    return _sum(ctx, ty, a, b, subtract=True)


def _sum(ctx: LoweringContext, ty: IntType, a: int, b: int, subtract: bool) -> int:
    """`a - b` or `a + b`, wrapping; a wide one as two 32-bit halves where SPLIT_SUM, the
    carry (borrow) out of the low halves added to (taken from) the high ones."""
    fn = ctx.fn
    op = fn.i_sub if subtract else fn.i_add
    if not (_wide(ty) and SPLIT_SUM):
        return op(ty, a, b)
    low_a, high_a = halves(ctx, ty, a)
    low_b, high_b = halves(ctx, ty, b)
    low = op(U32, low_a, low_b)
    # a borrow where low_a < low_b; a carry where the low sum wrapped below low_a
    out = fn.u_less_than(BOOL, low_a, low_b) if subtract else fn.u_less_than(BOOL, low, low_a)
    carry = fn.select(U32, out, ctx.const(U32, 1), ctx.const(U32, 0))
    return _join(ctx, ty, low, op(U32, op(U32, high_a, high_b), carry))


def mul(ctx: LoweringContext, ty: IntType, a: int, b: int) -> int:
    """`a * b`, wrapping; a wide one as 32-bit halves where SPLIT_MUL: the full product of the
    low halves (OpUMulExtended), its high word plus the two cross products. NVIDIA (580) gave
    u64 `q * (q % 2)` and `q * (q & 1)` as `q` for an even `q` (found by random kernels): a
    64-bit product by a 0/1 value it rewrote wrongly; the product on halves it computes right.
    The low 64 bits of a product do not depend on the operands' signedness."""
    fn = ctx.fn
    if not (_wide(ty) and SPLIT_MUL):
        return fn.i_mul(ty, a, b)
    low_a, high_a = halves(ctx, ty, a)
    low_b, high_b = halves(ctx, ty, b)
    low, carry = fn.u_mul_extended(U32, low_a, low_b)
    cross = fn.i_add(U32, fn.i_mul(U32, low_a, high_b), fn.i_mul(U32, high_a, low_b))
    return _join(ctx, ty, low, fn.i_add(U32, carry, cross))
