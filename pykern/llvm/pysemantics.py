"""Python's meaning of `//`, `%`, integer `**` and shifts, built from LLVM instructions that
are defined for every operand.

LLVM's sdiv/srem truncate and are undefined for a zero divisor or INT_MIN / -1, its shifts
are poison past the width, so these are spelled out with selects. Where Python raises, the
result is the one the interpreter defines (`pykern.interpret.helpers`): integer `//` and `%`
by zero give 0, INT_MIN // -1 wraps to INT_MIN, shifts out of range shift everything out
(`<<` gives 0, signed `>>` the sign), a negative integer exponent gives 0 but for a base of
+-1. Float `//` and `%` follow numpy's `npy_divmod` step for step (see `float_divmod`).
"""

from __future__ import annotations

from llvmlite import ir as ll

from pykern.lang.dtypes import DType
from pykern.llvm.emitter import Emitter
from pykern.llvm.types import float_suffix, value_type

# ---------------------------------------------------------------- integers


def _safe_divisor(em: Emitter, t: DType, b: ll.Value) -> tuple[ll.Value, ll.Value]:
    """(b, or 1 where b is 0 or (signed) -1: the divisions that trap; whether b is 0)."""
    bld, ty = em.builder, value_type(t)
    zero = bld.icmp_signed("==", b, ll.Constant(ty, 0))
    trap = zero
    if t.is_signed:
        trap = bld.or_(zero, bld.icmp_signed("==", b, ll.Constant(ty, -1)))
    return bld.select(trap, ll.Constant(ty, 1), b), zero


def int_floordiv(em: Emitter, t: DType, a: ll.Value, b: ll.Value) -> ll.Value:
    bld, ty = em.builder, value_type(t)
    safe, zero = _safe_divisor(em, t, b)
    if not t.is_signed:
        return bld.select(zero, ll.Constant(ty, 0), bld.udiv(a, safe))
    q = bld.sdiv(a, safe)
    r = bld.srem(a, safe)
    # rounding toward -inf: one less where the remainder and the divisor differ in sign
    adjust = bld.and_(bld.icmp_signed("!=", r, ll.Constant(ty, 0)),
                      bld.icmp_signed("<", bld.xor(r, b), ll.Constant(ty, 0)))
    q = bld.select(adjust, bld.sub(q, ll.Constant(ty, 1)), q)
    q = bld.select(bld.icmp_signed("==", b, ll.Constant(ty, -1)), bld.neg(a), q)
    return bld.select(zero, ll.Constant(ty, 0), q)


def int_mod(em: Emitter, t: DType, a: ll.Value, b: ll.Value) -> ll.Value:
    bld, ty = em.builder, value_type(t)
    safe, zero = _safe_divisor(em, t, b)
    if not t.is_signed:
        return bld.select(zero, ll.Constant(ty, 0), bld.urem(a, safe))
    r = bld.srem(a, safe)  # x % -1 is 0, as srem by 1 gives
    adjust = bld.and_(bld.icmp_signed("!=", r, ll.Constant(ty, 0)),
                      bld.icmp_signed("<", bld.xor(r, b), ll.Constant(ty, 0)))
    r = bld.select(adjust, bld.add(r, b), r)
    return bld.select(zero, ll.Constant(ty, 0), r)


def shift_left(em: Emitter, t: DType, a: ll.Value, count: ll.Value) -> ll.Value:
    bld, ty = em.builder, value_type(t)
    inside = bld.icmp_unsigned("<", count, ll.Constant(ty, t.bits))  # negative is huge
    return bld.select(inside, bld.shl(a, count), ll.Constant(ty, 0))


def shift_right(em: Emitter, t: DType, a: ll.Value, count: ll.Value) -> ll.Value:
    bld, ty = em.builder, value_type(t)
    inside = bld.icmp_unsigned("<", count, ll.Constant(ty, t.bits))
    if t.is_signed:
        return bld.ashr(a, bld.select(inside, count, ll.Constant(ty, t.bits - 1)))
    return bld.select(inside, bld.lshr(a, count), ll.Constant(ty, 0))


def int_pow(em: Emitter, t: DType, a: ll.Value, e: ll.Value) -> ll.Value:
    """`a ** e` modulo 2**bits, by a helper function with a square-and-multiply loop."""
    return em.builder.call(_int_pow_function(em, t), (a, e))


def _int_pow_function(em: Emitter, t: DType) -> ll.Function:
    name = f"pk_int_pow_{t.name}"
    if name in em.helpers:
        return em.helpers[name]
    ty = value_type(t)
    fn = ll.Function(em.module, ll.FunctionType(ty, (ty, ty)), name=name)
    fn.linkage = "internal"
    em.helpers[name] = fn
    base, exponent = fn.args
    entry, loop, done = (fn.append_basic_block(n) for n in ("entry", "loop", "done"))
    bld = ll.IRBuilder(entry)
    zero, one = ll.Constant(ty, 0), ll.Constant(ty, 1)
    if t.is_signed:
        negative = bld.icmp_signed("<", exponent, zero)
        odd = bld.icmp_signed("!=", bld.and_(exponent, one), zero)
        minus_one = bld.select(odd, ll.Constant(ty, -1), one)
        small = bld.select(bld.icmp_signed("==", base, one), one,
                           bld.select(bld.icmp_signed("==", base, ll.Constant(ty, -1)),
                                      minus_one, zero))
        start = bld.select(negative, zero, exponent)
    else:
        negative, small, start = ll.Constant(ll.IntType(1), 0), zero, exponent
    bld.branch(loop)
    bld.position_at_end(loop)
    acc = bld.phi(ty)
    b = bld.phi(ty)
    n = bld.phi(ty)
    acc.add_incoming(one, entry)
    b.add_incoming(base, entry)
    n.add_incoming(start, entry)
    bit = bld.icmp_unsigned("!=", bld.and_(n, one), zero)
    acc_next = bld.select(bit, bld.mul(acc, b), acc)
    n_next = bld.lshr(n, one)
    b_next = bld.mul(b, b)
    acc.add_incoming(acc_next, loop)
    b.add_incoming(b_next, loop)
    n.add_incoming(n_next, loop)
    bld.cbranch(bld.icmp_unsigned("!=", n_next, zero), loop, done)
    bld.position_at_end(done)
    result = bld.phi(ty)
    result.add_incoming(acc_next, loop)
    bld.ret(bld.select(negative, small, result))
    return fn


# ---------------------------------------------------------------- floats


def float_divmod(em: Emitter, t: DType, a: ll.Value, b: ll.Value) -> tuple[ll.Value, ll.Value]:
    """numpy's `npy_divmod` (f16 is computed in f32 by the caller):

        mod = fmod(a, b); div = (a - mod) / b
        if mod != 0 and (b < 0) != (mod < 0): mod += b; div -= 1
        if mod == 0: mod = copysign(0, b)
        floordiv = floor(div), plus 1 where div - floor(div) > 0.5; copysign(0, a / b) where
        div == 0; a / b where b == 0.
    Returns (floordiv, mod)."""
    bld, ty = em.builder, value_type(t)
    zero, one, half = ll.Constant(ty, 0.0), ll.Constant(ty, 1.0), ll.Constant(ty, 0.5)
    mod = bld.frem(a, b)
    div = bld.fdiv(bld.fsub(a, mod), b)
    nonzero = bld.fcmp_unordered("!=", mod, zero)
    signs_differ = bld.xor(bld.fcmp_ordered("<", b, zero), bld.fcmp_ordered("<", mod, zero))
    adjust = bld.and_(nonzero, signs_differ)
    mod = bld.select(adjust, bld.fadd(mod, b), mod)
    div = bld.select(adjust, bld.fsub(div, one), div)
    suffix = float_suffix(t)
    signed_zero_b = em.call(f"llvm.copysign.{suffix}", ty, zero, b)
    remainder = bld.select(nonzero, mod, signed_zero_b)
    floordiv = em.call(f"llvm.floor.{suffix}", ty, div)
    snap = bld.fcmp_ordered(">", bld.fsub(div, floordiv), half)
    floordiv = bld.select(snap, bld.fadd(floordiv, one), floordiv)
    quotient = bld.fdiv(a, b)
    signed_zero_q = em.call(f"llvm.copysign.{suffix}", ty, zero, quotient)
    floordiv = bld.select(bld.fcmp_ordered("==", div, zero), signed_zero_q, floordiv)
    floordiv = bld.select(bld.fcmp_ordered("==", b, zero), quotient, floordiv)
    return floordiv, remainder
