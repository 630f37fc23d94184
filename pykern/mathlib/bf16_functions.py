"""The device functions that `pykern.passes.bf16` adds to a kernel, built as IR (they work on a
float's bits, which user code has no words for):

- `pk_prelude_bf16_round(x: f32) -> f32`: `x` rounded to the nearest bf16, ties to even;
- `pk_prelude_bf16_odd_<T>(v: T) -> f32` for T in i32, u32, i64, u64, f64: `v` rounded to f32
  *to odd* (an inexact result gets an odd last bit). Rounding that once more to bf16 gives the
  correctly rounded bf16 of `v` (24 >= 8 + 2 bits), as ml_dtypes converts; rounding to nearest
  twice would not (16842753 would become 2**24, not 16908288).

Only integer operations decide the rounding, so no float control or fast-math setting of a
device changes it.
"""

from __future__ import annotations

import functools

from pykern import ir
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.passes.decompose import PRELUDE_PREFIX

ROUND = f"{PRELUDE_PREFIX}bf16_round"
B = ir.BinOpKind
_LOC = ir.UNKNOWN_LOC
_UNSIGNED = {dt.i32: dt.u32, dt.u32: dt.u32, dt.i64: dt.u64, dt.u64: dt.u64}


def odd_name(source: DType) -> str:
    """The name of the round-to-odd function from `source` to f32."""
    return f"{PRELUDE_PREFIX}bf16_odd_{source.name}"


def round_function() -> ir.Function:
    """`x` to the nearest bf16, on its bits:

        bits = bitcast_u32(x)
        if bits & 0x7FFFFFFF > 0x7F800000:        # NaN: quiet, sign and payload's top kept
            return bitcast_f32((bits | 0x00400000) & 0xFFFF0000)
        return bitcast_f32((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000)
    """
    bits = _local("bits", dt.u32)
    is_nan = _cmp(B.GT, _op(B.BIT_AND, bits, _u32(0x7FFFFFFF)), _u32(0x7F800000))
    odd = _op(B.BIT_AND, _op(B.RSHIFT, bits, _u32(16)), _u32(1))
    nearest = _op(B.ADD, bits, _op(B.ADD, _u32(0x7FFF), odd))
    body = (
        _assign(bits, ir.Bitcast(value=_local("x", dt.f32), type=dt.u32, loc=_LOC)),
        ir.If(cond=is_nan, body=(_return_high_half(_op(B.BIT_OR, bits, _u32(0x00400000))),),
              loc=_LOC),
        _return_high_half(nearest),
    )
    return _function(ROUND, ("x", dt.f32), (bits,), body)


def odd_function(source: DType) -> ir.Function:
    """`v` (an int or f64) as the f32 rounded to odd: the f32 nearest to it (the conversion's
    result), moved one step towards `v` where that was inexact and left the last bit even."""
    if source == dt.f64:
        return _odd_from_f64()
    return _odd_from_int(source)


def _odd_from_f64() -> ir.Function:
    """From f64, on its bits alone (NVIDIA's driver drops an f64 -> f32 -> f64 round trip, so
    a float test of exactness is always true there):

        b = bitcast_u64(v); sign = (b >> 32) & 0x80000000
        exp = (b >> 52) & 0x7FF; man = b & (2**52 - 1)
        if exp == 0x7FF:                                  # inf, or NaN kept quiet
            return bitcast_f32(sign | 0x7F800000 | (0x400000 | man >> 29 if man else 0))
        e = exp - 896                                     # the f32 exponent field
        if e >= 255: return bitcast_f32(sign | 0x7F7FFFFF)   # beyond f32: odd, inexact
        if e >= 1: kept, drop = e << 23 | man >> 29, 29     # f32 normal
        else: man |= 2**52 if exp else 0; drop = min(30 - e, 63); kept = man >> drop
        return bitcast_f32(sign | kept | (man & (2**drop - 1) != 0))   # odd where inexact"""
    v, b, man, e, drop, kept = (_local("v", dt.f64), _local("b", dt.u64), _local("man", dt.u64),
                                _local("e", dt.i64), _local("drop", dt.u64),
                                _local("kept", dt.u64))
    u64 = functools.partial(_const, t=dt.u64)
    exp = _op(B.BIT_AND, _op(B.RSHIFT, b, u64(52)), u64(0x7FF))
    sign = _op(B.BIT_AND, _op(B.RSHIFT, b, u64(32)), u64(0x80000000))
    quiet = ir.Select(cond=_cmp(B.NE, man, u64(0)),
                      then=_op(B.BIT_OR, u64(0x400000), _op(B.RSHIFT, man, u64(29))),
                      orelse=u64(0), type=dt.u64, loc=_LOC)
    normal = (_assign(kept, _op(B.BIT_OR, _op(B.LSHIFT, ir.Cast(value=e, type=dt.u64, loc=_LOC),
                                                  u64(23)), _op(B.RSHIFT, man, u64(29)))),
              _assign(drop, u64(29)))
    shift = ir.Cast(value=_op(B.SUB, _const(30, dt.i64), e), type=dt.u64, loc=_LOC)
    hidden = ir.Select(cond=_cmp(B.NE, exp, u64(0)), then=u64(1 << 52), orelse=u64(0),
                       type=dt.u64, loc=_LOC)
    subnormal = (_assign(man, _op(B.BIT_OR, man, hidden)),
                 _assign(drop, ir.Select(cond=_cmp(B.LT, shift, u64(63)), then=shift,
                                         orelse=u64(63), type=dt.u64, loc=_LOC)),
                 _assign(kept, _op(B.RSHIFT, man, drop)))
    dropped = _op(B.BIT_AND, man, _op(B.SUB, _op(B.LSHIFT, u64(1), drop), u64(1)))
    inexact = ir.Select(cond=_cmp(B.NE, dropped, u64(0)), then=u64(1), orelse=u64(0),
                        type=dt.u64, loc=_LOC)
    body = (
        _assign(b, ir.Bitcast(value=v, type=dt.u64, loc=_LOC)),
        _assign(man, _op(B.BIT_AND, b, u64((1 << 52) - 1))),
        ir.If(cond=_cmp(B.EQ, exp, u64(0x7FF)),
              body=(_return_bits(_op(B.BIT_OR, sign, _op(B.BIT_OR, u64(0x7F800000), quiet))),),
              loc=_LOC),
        _assign(e, _op(B.SUB, ir.Cast(value=exp, type=dt.i64, loc=_LOC), _const(896, dt.i64))),
        ir.If(cond=_cmp(B.GE, e, _const(255, dt.i64)),
              body=(_return_bits(_op(B.BIT_OR, sign, u64(0x7F7FFFFF))),), loc=_LOC),
        ir.If(cond=_cmp(B.GE, e, _const(1, dt.i64)), body=normal, orelse=subnormal, loc=_LOC),
        _return_bits(_op(B.BIT_OR, sign, _op(B.BIT_OR, kept, inexact))),
    )
    return _function(odd_name(dt.f64), ("v", dt.f64), (b, man, e, drop, kept), body)


def _return_bits(bits: ir.Expr) -> ir.Stmt:
    """Returns the f32 whose bits are the low 32 of the u64 `bits`."""
    word = ir.Cast(value=bits, type=dt.u32, loc=_LOC)
    return ir.Return(value=ir.Bitcast(value=word, type=dt.f32, loc=_LOC), loc=_LOC)


def _odd_from_int(source: DType) -> ir.Function:
    """From an integer type of W = 32 or 64 bits:

        m = unsigned(abs(v))                # wraps: abs(INT_MIN) is 2**(W-1) as unsigned
        bits = bitcast_u32(f32(m))
        if bits == bits of 2**W:            # rounded up beyond the type: inexact, even
            bits -= 1
        elif bits & 1 == 0:
            back = unsigned(bitcast_f32(bits))
            if back != m: bits += -1 if back > m else 1
        return bitcast_f32(bits | sign of v)"""
    wide = _UNSIGNED[source]
    v, m, bits, back = (_local("v", source), _local("m", wide), _local("bits", dt.u32),
                        _local("back", wide))
    magnitude: ir.Expr = v
    if source.is_signed:
        negated = ir.UnaryOp(op=ir.UnaryOpKind.NEG, operand=v, type=source, loc=_LOC)
        magnitude = ir.Select(cond=_cmp(B.LT, v, _const(0, source)), then=negated, orelse=v,
                              type=source, loc=_LOC)
    as_f32 = ir.Bitcast(value=bits, type=dt.f32, loc=_LOC)
    exact_check = (
        _assign(back, ir.Cast(value=as_f32, type=wide, loc=_LOC)),
        ir.If(cond=_cmp(B.NE, back, m), body=(_step(bits, _cmp(B.GT, back, m)),), loc=_LOC),
    )
    beyond = 0x4F800000 if wide == dt.u32 else 0x5F800000  # the f32 bits of 2**32, 2**64
    body: tuple[ir.Stmt, ...] = (
        _assign(m, ir.Cast(value=magnitude, type=wide, loc=_LOC)),
        _assign(bits, ir.Bitcast(value=ir.Cast(value=m, type=dt.f32, loc=_LOC), type=dt.u32,
                                 loc=_LOC)),
        ir.If(cond=_cmp(B.EQ, bits, _u32(beyond)),
              body=(_assign(bits, _op(B.SUB, bits, _u32(1))),),
              orelse=(ir.If(cond=_is_even(bits), body=exact_check, loc=_LOC),), loc=_LOC),
    )
    if source.is_signed:
        sign = ir.IfExp(cond=_cmp(B.LT, v, _const(0, source)), then=_u32(0x80000000),
                        orelse=_u32(0), type=dt.u32, loc=_LOC)
        body += (_assign(bits, _op(B.BIT_OR, bits, sign)),)
    body += (ir.Return(value=as_f32, loc=_LOC),)
    return _function(odd_name(source), ("v", source), (m, bits, back), body)


# ---------------------------------------------------------------- building blocks


def _function(name: str, param: tuple[str, DType], locals_: tuple[ir.LocalRef, ...],
              body: tuple[ir.Stmt, ...]) -> ir.Function:
    return ir.Function(name=name, params=(ir.Local(name=param[0], type=param[1], loc=_LOC),),
                       locals=tuple(ir.Local(name=v.name, type=v.type, loc=_LOC)
                                    for v in locals_),
                       body=body, return_type=dt.f32, loc=_LOC)


def _step(bits: ir.LocalRef, down: ir.Expr) -> ir.Stmt:
    """`bits` one step down where `down`, else one step up (towards the exact value)."""
    step = ir.Select(cond=down, then=_u32(0xFFFFFFFF), orelse=_u32(1), type=dt.u32, loc=_LOC)
    return _assign(bits, _op(B.ADD, bits, step))  # + 0xFFFFFFFF wraps to - 1


def _is_even(bits: ir.Expr) -> ir.Expr:
    return _cmp(B.EQ, _op(B.BIT_AND, bits, _u32(1)), _u32(0))


def _both(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return ir.Logical(op=ir.LogicalKind.AND, lhs=a, rhs=b, type=dt.bool_, loc=_LOC)


def _abs(x: ir.Expr) -> ir.Expr:
    return ir.UnaryOp(op=ir.UnaryOpKind.ABS, operand=x, type=x.type, loc=_LOC)


def _return_high_half(bits: ir.Expr) -> ir.Stmt:
    """Returns the f32 of `bits` with the low 16 bits cleared."""
    masked = _op(B.BIT_AND, bits, _u32(0xFFFF0000))
    return ir.Return(value=ir.Bitcast(value=masked, type=dt.f32, loc=_LOC), loc=_LOC)


def _local(name: str, t: DType) -> ir.LocalRef:
    return ir.LocalRef(name=name, type=t, loc=_LOC)


def _assign(target: ir.LocalRef, value: ir.Expr) -> ir.Stmt:
    return ir.Assign(name=target.name, value=value, loc=_LOC)


def _op(op: ir.BinOpKind, lhs: ir.Expr, rhs: ir.Expr) -> ir.Expr:
    return ir.BinOp(op=op, lhs=lhs, rhs=rhs, type=lhs.type, loc=_LOC)


def _cmp(op: ir.BinOpKind, lhs: ir.Expr, rhs: ir.Expr) -> ir.Expr:
    return ir.BinOp(op=op, lhs=lhs, rhs=rhs, type=dt.bool_, loc=_LOC)


def _const(value: int, t: DType) -> ir.Expr:
    return ir.Const(value=value, type=t, loc=_LOC)


def _u32(value: int) -> ir.Expr:
    return _const(value, dt.u32)
