"""IR expressions to Python expression text, dispatched by tables keyed by node class and by
(operator, kind of operand type).

Every text returned is an atom: a name, a literal, a call, a subscript or a parenthesised
expression, so callers can put it anywhere without thinking of precedence. Integer results are
wrapped to their width inline (`(x + y + 0x80000000 & 0xFFFFFFFF) - 0x80000000` for i32), the
rarer operations call the functions of `helpers`.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import dtypes as dt
from .. import ir
from ..dtypes import DType
from ..ir import BinOpKind as B
from ..ir import UnaryOpKind as U
from . import names
from .names import CodegenState

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
    **{(op, dt.FLOAT): _infix(op.value) for op in (B.ADD, B.SUB, B.MUL, B.DIV)},
    (B.FLOORDIV, dt.INT): _wrapped_call("_floordiv"),  # INT_MIN // -1 overflows
    (B.FLOORDIV, dt.UINT): _call("_floordiv"),
    (B.FLOORDIV, dt.FLOAT): _call("_float_floordiv"),
    **{(B.MOD, k): _call("_mod") for k in INTS},
    (B.MOD, dt.FLOAT): _call("_float_mod"),
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
    (B.MIN, dt.FLOAT): _call("_fmin"),
    (B.MAX, dt.FLOAT): _call("_fmax"),
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
Cast = Callable[["ExprCodegen", DType, DType, str], str]


def _bool_to_int(g: ExprCodegen, src: DType, dst: DType, x: str) -> str:
    return f"(1 if {x} else 0)"


def _bool_to_float(g: ExprCodegen, src: DType, dst: DType, x: str) -> str:
    one, zero = g.state.float_constant(1.0, dst), g.state.float_constant(0.0, dst)
    return f"({one} if {x} else {zero})"


def _to_bool(g: ExprCodegen, src: DType, dst: DType, x: str) -> str:
    return f"({x} != 0)"  # a NaN is True, as in Python


def _int_to_int(g: ExprCodegen, src: DType, dst: DType, x: str) -> str:
    (slo, shi), (dlo, dhi) = int_range(src), int_range(dst)
    return x if dlo <= slo and shi <= dhi else wrap(x, dst)


def _int_to_float(g: ExprCodegen, src: DType, dst: DType, x: str) -> str:
    to = NUMPY_FLOAT[dst.bits]
    if src.bits == 64:  # beyond 2**53 a conversion through a double would round twice
        return f"_int64_to_float({x}, {src.kind == dt.INT}, {to})"
    return f"{to}({x})"


def _float_to_int(g: ExprCodegen, src: DType, dst: DType, x: str) -> str:
    lo, hi = int_range(dst)
    return f"_float_to_int({x}, {lo}, {hi})"


def _float_to_float(g: ExprCodegen, src: DType, dst: DType, x: str) -> str:
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

# ---------------------------------------------------------------- math and builtins

MATH: dict[ir.MathFn, str] = {
    ir.MathFn.SQRT: "np.sqrt", ir.MathFn.EXP: "np.exp", ir.MathFn.LOG: "np.log",
    ir.MathFn.SIN: "np.sin", ir.MathFn.COS: "np.cos", ir.MathFn.TANH: "np.tanh",
    ir.MathFn.FLOOR: "np.floor", ir.MathFn.CEIL: "np.ceil",
    ir.MathFn.POW: "_float_pow",  # the same semantics as BinOpKind.POW on floats
}

BUILTINS: dict[ir.BuiltinKind, Callable[[ir.Kernel, int], str]] = {
    ir.BuiltinKind.GLOBAL_ID: lambda k, d: names.GLOBAL_IDS[d],
    ir.BuiltinKind.LOCAL_ID: lambda k, d: names.LOCAL_IDS[d],
    ir.BuiltinKind.GROUP_ID: lambda k, d: names.GROUP_IDS[d],
    ir.BuiltinKind.GROUP_SIZE: lambda k, d: str(k.workgroup[d]),
    ir.BuiltinKind.NUM_GROUPS: lambda k, d: names.NUM_GROUPS[d],
    ir.BuiltinKind.GRID: lambda k, d: names.GRID[d],
}

# ---------------------------------------------------------------- the generator


# expressions that read a value no expression can change: an error message can re-read them
_PLAIN = (ir.LocalRef, ir.ScalarParam, ir.Const, ir.Builtin, ir.ArrayDim)


class ExprCodegen:
    """Turns `ir.Expr` trees of one kernel into Python expression text."""

    def __init__(self, kernel: ir.Kernel, state: CodegenState):
        self.kernel = kernel
        self.state = state

    def expr(self, e: ir.Expr) -> str:
        method = _DISPATCH.get(type(e))
        if method is None:
            raise AssertionError(f"no interpretation for IR expression {type(e).__name__}")
        return method(self, e)

    def address(self, array: str, indices: tuple[ir.Expr, ...], loc: ir.Loc
                ) -> tuple[str, str, str]:
        """For an access to `array[indices]`: (the temporary that will hold the element
        address, the expression text that assigns it and tests it is inside the buffer, the
        call that raises KernelIndexError otherwise)."""
        addr = self.state.temp()
        terms, index_values = [names.offset(array)], []
        for k, index in enumerate(indices):
            text = self.expr(index)
            if not isinstance(index, _PLAIN):  # kept in a temporary for the error message
                value = self.state.temp()
                text, value = f"({value} := {text})", value
            else:
                value = text
            terms.append(f"{text} * {names.stride(array, k)}")
            index_values.append(value)
        inside = f"0 <= ({addr} := {' + '.join(terms)}) < {names.length(array)}"
        site = self.state.site(array, loc)
        fail = f"{names.OUT_OF_BOUNDS}({site}, ({', '.join(index_values)},))"
        return addr, inside, fail

    # ------------------------------------------------------------ one method per node class

    def _const(self, e: ir.Const) -> str:
        if e.type == dt.bool_:
            return repr(bool(e.value))
        if e.type.is_float:
            return self.state.float_constant(e.value, e.type)
        return str(e.value) if e.value >= 0 else f"({e.value})"

    def _local(self, e: ir.LocalRef) -> str:
        return names.local(e.name)

    def _scalar_param(self, e: ir.ScalarParam) -> str:
        return names.scalar(e.name)

    def _array_load(self, e: ir.ArrayLoad) -> str:
        addr, inside, fail = self.address(e.array, e.indices, e.loc)
        return f"({names.buffer(e.array)}[{addr}] if {inside} else {fail})"

    def _array_dim(self, e: ir.ArrayDim) -> str:
        return names.shape(e.array, e.axis)

    def _binop(self, e: ir.BinOp) -> str:
        t = e.lhs.type
        emit = BINARY.get((e.op, t.kind))
        if emit is None:
            raise AssertionError(f"no interpretation of {e.op.name} on {t.name} at {e.loc}")
        return emit(t, self.expr(e.lhs), self.expr(e.rhs))

    def _unaryop(self, e: ir.UnaryOp) -> str:
        t = e.operand.type
        emit = UNARY.get((e.op, t.kind))
        if emit is None:
            raise AssertionError(f"no interpretation of {e.op.name} on {t.name} at {e.loc}")
        return emit(t, self.expr(e.operand))

    def _logical(self, e: ir.Logical) -> str:
        return f"({self.expr(e.lhs)} {e.op.value} {self.expr(e.rhs)})"

    def _ifexp(self, e: ir.IfExp) -> str:
        return f"({self.expr(e.then)} if {self.expr(e.cond)} else {self.expr(e.orelse)})"

    def _cast(self, e: ir.Cast) -> str:
        src, dst = e.value.type, e.type
        value = self.expr(e.value)
        if src == dst:
            return value
        return CASTS[src.kind, dst.kind](self, src, dst, value)

    def _math(self, e: ir.MathCall) -> str:
        return f"{MATH[e.fn]}({', '.join(self.expr(a) for a in e.args)})"

    def _builtin(self, e: ir.Builtin) -> str:
        return BUILTINS[e.kind](self.kernel, e.dim)


_DISPATCH: dict[type, Callable[[ExprCodegen, ir.Expr], str]] = {
    ir.Const: ExprCodegen._const,
    ir.LocalRef: ExprCodegen._local,
    ir.ScalarParam: ExprCodegen._scalar_param,
    ir.ArrayLoad: ExprCodegen._array_load,
    ir.ArrayDim: ExprCodegen._array_dim,
    ir.BinOp: ExprCodegen._binop,
    ir.UnaryOp: ExprCodegen._unaryop,
    ir.Logical: ExprCodegen._logical,
    ir.IfExp: ExprCodegen._ifexp,
    ir.Cast: ExprCodegen._cast,
    ir.MathCall: ExprCodegen._math,
    ir.Builtin: ExprCodegen._builtin,
}
