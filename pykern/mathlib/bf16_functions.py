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
    """From f64:

        f = f32(v); bits = bitcast_u32(f); back = f64(f)
        if back != v and bits & 1 == 0 and v == v:      # inexact and even (NaN stays)
            bits += -1 if abs(back) > abs(v) else 1    # towards v in magnitude
        return bitcast_f32(bits)"""
    v, f, bits, back = (_local("v", dt.f64), _local("f", dt.f32), _local("bits", dt.u32),
                        _local("back", dt.f64))
    inexact = ir.Logical(op=ir.LogicalKind.AND, lhs=_cmp(B.NE, back, v),
                         rhs=_cmp(B.EQ, v, v), type=dt.bool_, loc=_LOC)
    above = _cmp(B.GT, _abs(back), _abs(v))
    body = (
        _assign(f, ir.Cast(value=v, type=dt.f32, loc=_LOC)),
        _assign(bits, ir.Bitcast(value=f, type=dt.u32, loc=_LOC)),
        _assign(back, ir.Cast(value=f, type=dt.f64, loc=_LOC)),
        ir.If(cond=_both(inexact, _is_even(bits)), body=(_step(bits, above),), loc=_LOC),
        ir.Return(value=ir.Bitcast(value=bits, type=dt.f32, loc=_LOC), loc=_LOC),
    )
    return _function(odd_name(dt.f64), ("v", dt.f64), (f, bits, back), body)


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
