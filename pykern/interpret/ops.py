"""The Python text of each operator, conversion and math function, in tables keyed by
(operator, kind of operand type) as in `pykern.spirv.arith`.

Every text returned is an atom: a name, a literal, a call, a subscript or a parenthesised
expression. Integer results are wrapped to their width inline (`(x + y + 0x80000000 &
0xffffffff) - 0x80000000` for i32); the rarer operations call the functions of `helpers`.
"""

from __future__ import annotations

from collections.abc import Callable

from pykern.lang import dtypes as dt
from pykern import ir
from pykern.lang.dtypes import DType
from pykern.ir import BinOpKind as B
from pykern.ir import MathFn as M
from pykern.ir import UnaryOpKind as U
from pykern.interpret.names import CodegenState

# ---------------------------------------------------------------- integer wrapping


def int_range(t: DType) -> tuple[int, int]:
    if t.kind == dt.UINT:
        return 0, (1 << t.bits) - 1
    return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1


def wrap(text: str, t: DType) -> str:
    """`text` (an expression without parentheses around it) reduced to the range of int type
    `t` in two's complement. `+`/`-`/`*`/unary minus bind tighter than `&`, so no inner
    parentheses are needed."""
    mask = f"{(1 << t.bits) - 1:#x}"
    if t.kind == dt.UINT:
        return f"({text} & {mask})"
    half = f"{1 << (t.bits - 1):#x}"
    return f"(({text} + {half} & {mask}) - {half})"


# ---------------------------------------------------------------- binary operators

Binary = Callable[[DType, str, str], str]


def _infix(op: str) -> Binary:
    return lambda t, a, b: f"({a} {op} {b})"


def _wrapped(op: str) -> Binary:
    return lambda t, a, b: wrap(f"{a} {op} {b}", t)


def _call(helper: str) -> Binary:
    return lambda t, a, b: f"{helper}({a}, {b})"


def _wrapped_call(helper: str, with_bits: bool = False) -> Binary:
    def emit(t: DType, a: str, b: str) -> str:
        extra = f", {t.bits}" if with_bits else ""
        return wrap(f"{helper}({a}, {b}{extra})", t)
    return emit


def _bits_call(helper: str) -> Binary:
    return lambda t, a, b: f"{helper}({a}, {b}, {t.bits})"


INTS = (dt.INT, dt.UINT)
ALL_KINDS = (dt.BOOL, dt.INT, dt.UINT, dt.FLOAT)
_COMPARISON_TEXT = {B.EQ: "==", B.NE: "!=", B.LT: "<", B.LE: "<=", B.GT: ">", B.GE: ">="}

BINARY: dict[tuple[B, str], Binary] = {
    **{(op, k): _wrapped(op.value) for op in (B.ADD, B.SUB, B.MUL) for k in INTS},
    # numpy scalars: + - * / rounded to the type; // and % are Python's (through fmod), and
    # division by zero gives inf or NaN
    **{(op, dt.FLOAT): _infix(op.value)
       for op in (B.ADD, B.SUB, B.MUL, B.DIV, B.FLOORDIV, B.MOD)},
    (B.FLOORDIV, dt.INT): _wrapped_call("_floordiv"),  # INT_MIN // -1 overflows
    (B.FLOORDIV, dt.UINT): _call("_floordiv"),
    **{(B.MOD, k): _call("_mod") for k in INTS},
    (B.POW, dt.INT): _wrapped_call("_int_pow", with_bits=True),
    (B.POW, dt.UINT): _bits_call("_int_pow"),
    (B.POW, dt.FLOAT): _call("_float_pow"),
    **{(op, k): _infix(op.value) for op in (B.BIT_AND, B.BIT_OR, B.BIT_XOR)
       for k in (dt.BOOL, dt.INT, dt.UINT)},
    **{(B.LSHIFT, k): _wrapped_call("_shl", with_bits=True) for k in INTS},
    (B.RSHIFT, dt.INT): _bits_call("_sar"),
    (B.RSHIFT, dt.UINT): _bits_call("_shr"),
    # bools order False < True, so min is `and` and max is `or`, as in the SPIR-V lowering
    **{(B.MIN, k): _call("min") for k in (dt.BOOL, dt.INT, dt.UINT)},
    **{(B.MAX, k): _call("max") for k in (dt.BOOL, dt.INT, dt.UINT)},
    (B.MIN, dt.FLOAT): _call("_minimum"),  # numpy's: NaN propagates
    (B.MAX, dt.FLOAT): _call("_maximum"),
    # numpy float comparisons are ordered (False with a NaN) except !=, as Python's are
    **{(op, k): _infix(text) for op, text in _COMPARISON_TEXT.items() for k in ALL_KINDS},
}

# ---------------------------------------------------------------- unary operators

Unary = Callable[[DType, str], str]


def _invert_unsigned(t: DType, x: str) -> str:
    return f"({x} ^ {(1 << t.bits) - 1:#x})"


UNARY: dict[tuple[U, str], Unary] = {
    **{(U.NEG, k): (lambda t, x: wrap(f"-{x}", t)) for k in INTS},  # wraps, also unsigned
    (U.NEG, dt.FLOAT): lambda t, x: f"(-{x})",
    (U.NOT, dt.BOOL): lambda t, x: f"(not {x})",
    (U.INVERT, dt.INT): lambda t, x: f"(~{x})",  # stays in range for a value in range
    (U.INVERT, dt.UINT): _invert_unsigned,
    (U.ABS, dt.INT): lambda t, x: wrap(f"abs({x})", t),  # abs(INT_MIN) wraps to INT_MIN
    (U.ABS, dt.UINT): lambda t, x: x,
    (U.ABS, dt.FLOAT): lambda t, x: f"abs({x})",
}

# ---------------------------------------------------------------- casts

NUMPY_FLOAT = {16: "np.float16", 32: "np.float32", 64: "np.float64"}
Cast = Callable[[CodegenState, DType, DType, str], str]


def _bool_to_int(state: CodegenState, src: DType, dst: DType, x: str) -> str:
    return f"(1 if {x} else 0)"


def _bool_to_float(state: CodegenState, src: DType, dst: DType, x: str) -> str:
    one, zero = state.float_constant(1.0, dst), state.float_constant(0.0, dst)
    return f"({one} if {x} else {zero})"


def _to_bool(state: CodegenState, src: DType, dst: DType, x: str) -> str:
    return f"({x} != 0)"  # a NaN is True, as in Python


def _int_to_int(state: CodegenState, src: DType, dst: DType, x: str) -> str:
    (slo, shi), (dlo, dhi) = int_range(src), int_range(dst)
    return x if dlo <= slo and shi <= dhi else wrap(x, dst)


def _int_to_float(state: CodegenState, src: DType, dst: DType, x: str) -> str:
    to = NUMPY_FLOAT[dst.bits]
    if src.bits == 64:  # beyond 2**53 a conversion through a double would round twice
        return f"_int64_to_float({x}, {src.kind == dt.INT}, {to})"
    return f"{to}({x})"


def _float_to_int(state: CodegenState, src: DType, dst: DType, x: str) -> str:
    lo, hi = int_range(dst)
    return f"_float_to_int({x}, {lo}, {hi})"


def _float_to_float(state: CodegenState, src: DType, dst: DType, x: str) -> str:
    return f"{NUMPY_FLOAT[dst.bits]}({x})"


CASTS: dict[tuple[str, str], Cast] = {
    (dt.BOOL, dt.INT): _bool_to_int,
    (dt.BOOL, dt.UINT): _bool_to_int,
    (dt.BOOL, dt.FLOAT): _bool_to_float,
    **{(k, dt.BOOL): _to_bool for k in (dt.INT, dt.UINT, dt.FLOAT)},
    **{(a, b): _int_to_int for a in INTS for b in INTS},
    **{(k, dt.FLOAT): _int_to_float for k in INTS},
    **{(dt.FLOAT, k): _float_to_int for k in INTS},
    (dt.FLOAT, dt.FLOAT): _float_to_float,
}

# ---------------------------------------------------------------- math functions

MathText = Callable[[CodegenState, DType, list[str]], str]


def _function(name: str) -> MathText:
    return lambda state, t, args: f"{name}({', '.join(args)})"


def _rsqrt(state: CodegenState, t: DType, args: list[str]) -> str:
    return f"({state.float_constant(1.0, t)} / np.sqrt({args[0]}))"


# numpy's functions keep the scalar's type (np.sqrt of an np.float32 is an np.float32)
MATH: dict[M, MathText] = {
    **{fn: _function(f"np.{fn.py_name}") for fn in (
        M.SQRT, M.EXP, M.LOG, M.SIN, M.COS, M.TAN, M.TANH, M.SINH, M.COSH, M.FLOOR, M.CEIL,
        M.TRUNC, M.EXP2, M.LOG2, M.COPYSIGN, M.ISNAN, M.ISINF)},
    M.ASIN: _function("np.arcsin"),
    M.ACOS: _function("np.arccos"),
    M.ATAN: _function("np.arctan"),
    M.ATAN2: _function("np.arctan2"),  # (y, x), as Python's
    M.ROUND: _function("np.rint"),  # halves to even, as Python's round()
    M.RSQRT: _rsqrt,
    M.POW: _function("_float_pow"),  # the semantics of BinOpKind.POW on floats
    M.ERF: _function("_erf"),
    M.FMA: _function("_fma"),
}

# ---------------------------------------------------------------- atomics

# the binary operator whose result an atomic stores (EXCHANGE stores the value, CAS is apart)
ATOMIC_UPDATES: dict[ir.AtomicOp, B] = {
    ir.AtomicOp.ADD: B.ADD, ir.AtomicOp.SUB: B.SUB, ir.AtomicOp.MIN: B.MIN,
    ir.AtomicOp.MAX: B.MAX, ir.AtomicOp.AND: B.BIT_AND, ir.AtomicOp.OR: B.BIT_OR,
    ir.AtomicOp.XOR: B.BIT_XOR,
}


# float atomic min/max keep the non-NaN operand (GLSL NMin/NMax, as the SPIR-V CAS loop)
_FLOAT_ATOMIC_MIN_MAX = {ir.AtomicOp.MIN: "_fmin", ir.AtomicOp.MAX: "_fmax"}


def atomic_update(state: CodegenState, op: ir.AtomicOp, t: DType) -> str:
    """The name of a module-level function `(old, value) -> new` for atomic `op` on `t`."""
    name = f"_atomic_{op.value}_{t.name}"
    if op is ir.AtomicOp.EXCHANGE:
        body = "value"
    elif t.is_float and op in _FLOAT_ATOMIC_MIN_MAX:
        body = f"{_FLOAT_ATOMIC_MIN_MAX[op]}(old, value)"
    else:
        body = BINARY[ATOMIC_UPDATES[op], t.kind](t, "old", "value")
    return state.define((op, t), name, f"def {name}(old, value): return {body}")
