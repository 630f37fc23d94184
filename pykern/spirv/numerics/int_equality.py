"""Integer `==`, `!=` and truthiness spelled as a sign test.

NVIDIA's driver (580) miscompiled code around a zero test kept in a variable: with `b = x != 0`
used as a branch or a select's condition and also stored, a value computed from `x` where `b`
is False came out as if `x` were all ones (`~x` gave 0 for x = 0; `7 if b else u32(x)` took
the wrong arm for a u64 x = 0). Its optimizer evidently substitutes what the zero test tells
it about `x` and gets the value wrong. `x > 0` in its place computed right, so the driver is
given no equality instruction to learn from: `a != b` is lowered as

    d = a ^ b;  (d | -d) < 0   (signed; d = a where b is the constant 0)

which is True exactly when d has a set bit (the sign of d or of -d is set; for the most
negative d both are), and `a == b` as `(d | -d) >= 0`. 64-bit operands are folded to one
32-bit word first (the low word or the high word), as `wide_int` spells their other
operations on halves. The cost is two ALU instructions per test.

`SIGN_TEST` turns this off (a module constant so that a device diagnosis can compare forms).
"""

from __future__ import annotations

from pykern.spirv.context import LoweringContext
from pykern.spirv.encoding.types import BOOL, U32, IntType
from pykern.spirv.numerics import wide_int

SIGN_TEST = True


def nonzero(ctx: LoweringContext, ty: IntType, x: int) -> int:
    """`x != 0` for an integer `x` of type `ty` (at least 32 bits wide)."""
    return _sign_test(ctx, ty, x, nonzero=True)


def not_equal(ctx: LoweringContext, ty: IntType, a: int, b: int) -> int:
    """`a != b` for integers of type `ty`."""
    return _sign_test(ctx, ty, _difference(ctx, ty, a, b), nonzero=True)


def equal(ctx: LoweringContext, ty: IntType, a: int, b: int) -> int:
    """`a == b` for integers of type `ty`."""
    return _sign_test(ctx, ty, _difference(ctx, ty, a, b), nonzero=False)


def _difference(ctx: LoweringContext, ty: IntType, a: int, b: int) -> int:
    """A value that is 0 exactly where a == b (a itself against a constant 0)."""
    return a if b == ctx.const(ty, 0) else ctx.fn.bitwise_xor(ty, a, b)


def _sign_test(ctx: LoweringContext, ty: IntType, d: int, nonzero: bool) -> int:
    fn = ctx.fn
    if not SIGN_TEST:
        return (fn.i_not_equal if nonzero else fn.i_equal)(BOOL, d, ctx.const(ty, 0))
    if ty.bits == 64:
        low, high = wide_int.halves(ctx, ty, d)
        d, ty = fn.bitwise_or(U32, low, high), U32
    spread = fn.bitwise_or(ty, d, fn.s_negate(ty, d))
    return (fn.s_less_than if nonzero else fn.s_greater_than_equal)(
        BOOL, spread, ctx.const(ty, 0))
