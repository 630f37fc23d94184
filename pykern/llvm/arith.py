"""Operators and conversions as LLVM instructions, in tables keyed by (operator, kind of
operand type) as `pykern.spirv.arith` and `pykern.interpret.ops` are.

f16 values live in `half` registers but every operation on them is computed in f32 and rounded
back (exact for + - * / and the same result as native f16 arithmetic: f32 has more than twice
f16's precision), as numpy computes float16. Integers wrap at their width (LLVM's add, sub, mul
and neg without nsw/nuw flags). No fast-math flag is set anywhere, so nothing is contracted or
reassociated: `+ - * /` give numpy's bits.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from llvmlite import ir as ll

from pykern import ir
from pykern.ir import BinOpKind as B
from pykern.ir import UnaryOpKind as U
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.llvm import pysemantics as py
from pykern.llvm.emitter import Emitter
from pykern.llvm.types import F32, I32, float_suffix, value_type

Binary = Callable[[Emitter, DType, ll.Value, ll.Value], ll.Value]
F32_TYPE = dt.f32


def promoted(op: Binary, result_is_float: bool = True) -> Binary:
    """`op` on floats, with f16 operands computed in f32 (and a float result rounded back)."""
    def emit(em: Emitter, t: DType, a: ll.Value, b: ll.Value) -> ll.Value:
        if t.bits != 16:
            return op(em, t, a, b)
        bld = em.builder
        result = op(em, F32_TYPE, bld.fpext(a, F32), bld.fpext(b, F32))
        return bld.fptrunc(result, value_type(t)) if result_is_float else result
    return emit


def _instr(name: str) -> Binary:
    return lambda em, t, a, b: getattr(em.builder, name)(a, b)


def _icmp(op: str) -> Binary:
    def emit(em: Emitter, t: DType, a: ll.Value, b: ll.Value) -> ll.Value:
        if t.kind == dt.INT:
            return em.builder.icmp_signed(op, a, b)
        return em.builder.icmp_unsigned(op, a, b)  # unsigned, and bool: False < True
    return emit


def _fcmp(op: str) -> Binary:
    # ordered (false with a NaN) but for !=, which is true with a NaN, as Python's
    if op == "!=":
        return promoted(lambda em, t, a, b: em.builder.fcmp_unordered(op, a, b), False)
    return promoted(lambda em, t, a, b: em.builder.fcmp_ordered(op, a, b), False)


def _int_min_max(less: bool) -> Binary:
    def emit(em: Emitter, t: DType, a: ll.Value, b: ll.Value) -> ll.Value:
        cmp = _icmp("<" if less else ">")(em, t, a, b)
        return em.builder.select(cmp, a, b)
    return emit


def _float_min_max(less: bool) -> Binary:
    """numpy's minimum/maximum: a NaN operand wins (the first of two), and of two equal values
    the second (`a if (a < b or a != a) else b`)."""
    def emit(em: Emitter, t: DType, a: ll.Value, b: ll.Value) -> ll.Value:
        bld = em.builder
        pick_a = bld.or_(bld.fcmp_ordered("<" if less else ">", a, b),
                         bld.fcmp_unordered("uno", a, a))
        return bld.select(pick_a, a, b)
    return emit


def _float_pow(em: Emitter, t: DType, a: ll.Value, b: ll.Value) -> ll.Value:
    return em.call(f"llvm.pow.{float_suffix(t)}", value_type(t), a, b)


INTS = (dt.INT, dt.UINT)
_COMPARISONS = {B.EQ: "==", B.NE: "!=", B.LT: "<", B.LE: "<=", B.GT: ">", B.GE: ">="}

BINARY: dict[tuple[B, str], Binary] = {
    **{(B.ADD, k): _instr("add") for k in INTS},
    **{(B.SUB, k): _instr("sub") for k in INTS},
    **{(B.MUL, k): _instr("mul") for k in INTS},
    **{(B.FLOORDIV, k): py.int_floordiv for k in INTS},
    **{(B.MOD, k): py.int_mod for k in INTS},
    **{(B.POW, k): py.int_pow for k in INTS},
    **{(B.LSHIFT, k): py.shift_left for k in INTS},
    **{(B.RSHIFT, k): py.shift_right for k in INTS},
    **{(op, k): _instr(name) for op, name in ((B.BIT_AND, "and_"), (B.BIT_OR, "or_"),
                                              (B.BIT_XOR, "xor"))
       for k in (dt.BOOL, *INTS)},
    **{(B.MIN, k): _int_min_max(True) for k in INTS},
    **{(B.MAX, k): _int_min_max(False) for k in INTS},
    (B.MIN, dt.BOOL): _instr("and_"),  # False < True
    (B.MAX, dt.BOOL): _instr("or_"),
    **{(op, k): _icmp(text) for op, text in _COMPARISONS.items() for k in (dt.BOOL, *INTS)},
    **{(op, dt.FLOAT): _fcmp(text) for op, text in _COMPARISONS.items()},
    (B.ADD, dt.FLOAT): promoted(_instr("fadd")),
    (B.SUB, dt.FLOAT): promoted(_instr("fsub")),
    (B.MUL, dt.FLOAT): promoted(_instr("fmul")),
    (B.DIV, dt.FLOAT): promoted(_instr("fdiv")),
    (B.FLOORDIV, dt.FLOAT): promoted(lambda em, t, a, b: py.float_divmod(em, t, a, b)[0]),
    (B.MOD, dt.FLOAT): promoted(lambda em, t, a, b: py.float_divmod(em, t, a, b)[1]),
    (B.POW, dt.FLOAT): promoted(_float_pow),
    (B.MIN, dt.FLOAT): _float_min_max(True),  # selects: exact in any width
    (B.MAX, dt.FLOAT): _float_min_max(False),
}

# ---------------------------------------------------------------- unary operators

Unary = Callable[[Emitter, DType, ll.Value], ll.Value]


def _int_abs(em: Emitter, t: DType, x: ll.Value) -> ll.Value:
    negative = em.builder.icmp_signed("<", x, ll.Constant(x.type, 0))
    return em.builder.select(negative, em.builder.neg(x), x)  # abs(INT_MIN) wraps


UNARY: dict[tuple[U, str], Unary] = {
    **{(U.NEG, k): (lambda em, t, x: em.builder.neg(x)) for k in INTS},
    (U.NEG, dt.FLOAT): lambda em, t, x: em.builder.fneg(x),
    (U.NOT, dt.BOOL): lambda em, t, x: em.builder.not_(x),
    **{(U.INVERT, k): (lambda em, t, x: em.builder.not_(x)) for k in INTS},
    (U.ABS, dt.INT): _int_abs,
    (U.ABS, dt.UINT): lambda em, t, x: x,
    (U.ABS, dt.FLOAT): lambda em, t, x: em.call(f"llvm.fabs.{float_suffix(t)}", x.type, x),
}

# ---------------------------------------------------------------- conversions

Cast = Callable[[Emitter, DType, DType, ll.Value], ll.Value]


def _bool_to_number(em: Emitter, src: DType, dst: DType, x: ll.Value) -> ll.Value:
    if dst.is_float:
        return em.builder.uitofp(x, value_type(dst))
    return em.builder.zext(x, value_type(dst))


def _to_bool(em: Emitter, src: DType, dst: DType, x: ll.Value) -> ll.Value:
    if src.is_float:
        return em.builder.fcmp_unordered("!=", x, ll.Constant(x.type, 0.0))  # NaN is True
    return em.builder.icmp_unsigned("!=", x, ll.Constant(x.type, 0))


def _int_to_int(em: Emitter, src: DType, dst: DType, x: ll.Value) -> ll.Value:
    to = value_type(dst)
    if dst.bits < src.bits:
        return em.builder.trunc(x, to)
    if dst.bits > src.bits:
        return em.builder.sext(x, to) if src.kind == dt.INT else em.builder.zext(x, to)
    return x  # same width: the same bits


def _int_to_float(em: Emitter, src: DType, dst: DType, x: ll.Value) -> ll.Value:
    to = value_type(dst)
    return em.builder.sitofp(x, to) if src.kind == dt.INT else em.builder.uitofp(x, to)


def _float_to_int(em: Emitter, src: DType, dst: DType, x: ll.Value) -> ll.Value:
    """Truncation toward zero, saturated at the type's limits, NaN to 0 (what LLVM's
    fptosi.sat computes). Written out: x86's code for a vector fptosi.sat converts one element
    at a time, and a loop of conversions ran 9x slower than this clamp in the float type
    followed by the plain conversion, which vectorises."""
    bld = em.builder
    if src.bits == 16:  # f16 holds neither limit of the wider types: clamp in f32 (exact)
        x, src = bld.fpext(x, F32), dt.f32
    ft, to = x.type, value_type(dst)
    signed = dst.kind == dt.INT
    low = -2.0 ** (dst.bits - 1) if signed else 0.0  # exact in f32 and f64
    past = 2.0 ** (dst.bits - 1) if signed else 2.0 ** dst.bits  # the first value too large
    below = np.float32 if src.bits == 32 else np.float64
    highest = float(np.nextafter(below(past), below(0)))  # the largest value below it
    # NaN fails the first comparison (clamped to `low`, then replaced by 0 at the end)
    clamped = bld.select(bld.fcmp_ordered(">", x, ll.Constant(ft, low)), x, ll.Constant(ft, low))
    clamped = bld.select(bld.fcmp_ordered("<", clamped, ll.Constant(ft, highest)), clamped,
                         ll.Constant(ft, highest))
    value = bld.fptosi(clamped, to) if signed else bld.fptoui(clamped, to)
    top = (1 << (dst.bits - 1)) - 1 if signed else (1 << dst.bits) - 1
    value = bld.select(bld.fcmp_ordered(">=", x, ll.Constant(ft, past)), ll.Constant(to, top),
                       value)
    return bld.select(bld.fcmp_unordered("uno", x, x), ll.Constant(to, 0), value)


def _float_to_float(em: Emitter, src: DType, dst: DType, x: ll.Value) -> ll.Value:
    to = value_type(dst)
    if dst.bits > src.bits:
        return em.builder.fpext(x, to)
    if src.bits == 64 and dst.bits == 16:
        # x86 has no f64 -> f16 instruction and the JIT no libcall for it: through f32
        # rounded to odd, which f32's 24 >= 11 + 2 bits make round once, correctly
        return em.builder.fptrunc(_f64_to_f32_odd(em, x), to)
    return em.builder.fptrunc(x, to)


def _f64_to_f32_odd(em: Emitter, x: ll.Value) -> ll.Value:
    """`x` rounded to f32 toward zero, with the last bit set where inexact (round to odd):
    the nearest f32, moved one step toward `x` where it is inexact and its last bit is even."""
    bld = em.builder
    nearest = bld.fptrunc(x, F32)
    bits = bld.bitcast(nearest, I32)
    inexact = bld.fcmp_ordered("!=", bld.fpext(nearest, x.type), x)  # NaN: exact enough
    even = bld.icmp_unsigned("==", bld.and_(bits, ll.Constant(I32, 1)), ll.Constant(I32, 0))
    fabs = f"llvm.fabs.{float_suffix(dt.f64)}"
    too_big = bld.fcmp_ordered(">", em.call(fabs, x.type, bld.fpext(nearest, x.type)),
                               em.call(fabs, x.type, x))
    # sign and magnitude: one less is one step toward zero, one more one step away
    stepped = bld.select(too_big, bld.sub(bits, ll.Constant(I32, 1)),
                         bld.add(bits, ll.Constant(I32, 1)))
    return bld.bitcast(bld.select(bld.and_(inexact, even), stepped, bits), F32)


CASTS: dict[tuple[str, str], Cast] = {
    **{(dt.BOOL, k): _bool_to_number for k in (dt.INT, dt.UINT, dt.FLOAT)},
    **{(k, dt.BOOL): _to_bool for k in (dt.INT, dt.UINT, dt.FLOAT)},
    **{(a, b): _int_to_int for a in INTS for b in INTS},
    **{(k, dt.FLOAT): _int_to_float for k in INTS},
    **{(dt.FLOAT, k): _float_to_int for k in INTS},
    (dt.FLOAT, dt.FLOAT): _float_to_float,
}


def binary(em: Emitter, op: B, t: DType, a: ll.Value, b: ll.Value, loc: ir.Loc) -> ll.Value:
    emit = BINARY.get((op, t.kind))
    if emit is None:
        raise AssertionError(f"no LLVM lowering of {op.name} on {t.name} at {loc}")
    return emit(em, t, a, b)


def unary(em: Emitter, op: U, t: DType, x: ll.Value, loc: ir.Loc) -> ll.Value:
    emit = UNARY.get((op, t.kind))
    if emit is None:
        raise AssertionError(f"no LLVM lowering of {op.name} on {t.name} at {loc}")
    return emit(em, t, x)


def cast(em: Emitter, src: DType, dst: DType, x: ll.Value) -> ll.Value:
    if src == dst:
        return x
    return CASTS[src.kind, dst.kind](em, src, dst, x)
