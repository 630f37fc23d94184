"""The table of binary ops: for each, its element function (a `@pk.func` of two values of the
compute type, run by the generic binary kernel), its type rule, and its name for errors and
numpy's ufuncs. `pykern.tensor.elementwise.functions` runs them; `pk.Tensor`'s operators name their
entry (`ADD`, ...) directly.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

import pykern as pk

from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.lang.func import Func
from pykern.tensor.core import promotion as pr
from pykern.tensor.elementwise.unary_ops import log1p_f

# ---------------------------------------------------------------- element functions


@pk.func
def add_f(x, y):
    return x + y


@pk.func
def subtract_f(x, y):
    return x - y


@pk.func
def multiply_f(x, y):
    return x * y


@pk.func
def divide_f(x, y):
    return x / y


@pk.func
def floor_divide_f(x, y):
    return x // y


@pk.func
def floor_divide_float_f(x, y):
    # where an operand is infinite, the array API's preferred floor(x / y) (+-inf, +-0), where
    # Python's // gives nan (inf // 2.0) or -1.0 (1.0 // -inf); elsewhere Python's //
    q = x // y
    return pk.select(pk.isinf(x) or pk.isinf(y), pk.floor(x / y), q)


@pk.func
def remainder_f(x, y):
    return x % y


@pk.func
def pow_f(x, y):
    return x ** y


@pk.func
def maximum_f(x, y):
    return builtins.max(x, y)  # the kernel max and min are numpy's (nan propagates)


@pk.func
def minimum_f(x, y):
    return builtins.min(x, y)


@pk.func
def equal_f(x, y):
    return x == y


@pk.func
def not_equal_f(x, y):
    return x != y


@pk.func
def less_f(x, y):
    return x < y


@pk.func
def less_equal_f(x, y):
    return x <= y


@pk.func
def greater_f(x, y):
    return x > y


@pk.func
def greater_equal_f(x, y):
    return x >= y


@pk.func
def bitwise_and_f(x, y):
    return x & y


@pk.func
def bitwise_or_f(x, y):
    return x | y


@pk.func
def bitwise_xor_f(x, y):
    return x ^ y


@pk.func
def left_shift_f(x, y):
    return x << y


@pk.func
def right_shift_f(x, y):
    return x >> y


@pk.func
def logical_and_f(x, y):
    return x and y


@pk.func
def logical_or_f(x, y):
    return x or y


@pk.func
def atan2_f(x, y):
    return pk.atan2(x, y)


@pk.func
def copysign_f(x, y):
    return pk.copysign(x, y)


@pk.func
def hypot_f(x, y):
    ax = builtins.abs(x)
    ay = builtins.abs(y)
    m = pk.select(ax > ay, ax, ay)
    q = pk.select(ax > ay, ay, ax) / pk.select(m == 0.0, 1.0, m)
    r = pk.select(x != x or y != y, x + y, m * pk.sqrt(1.0 + q * q))
    return pk.select(pk.isinf(x) or pk.isinf(y), math.inf, r)


@pk.func
def nextafter_f(x, y):
    if x.dtype == pk.f64:
        return _nextafter_bits(x, y, pk.i64)
    if x.dtype == pk.f16:
        return _nextafter_bits(x, y, pk.i16)
    return _nextafter_bits(x, y, pk.i32)


@pk.func
def _nextafter_bits(x, y, it):
    # floats are ordered as their sign-magnitude bit patterns: one step away from zero adds
    # one to the pattern, one step toward zero subtracts one; from a zero the step is the
    # smallest subnormal with y's sign; x == y gives y (so nextafter(-0.0, 0.0) is +0.0)
    bits = pk.bitcast(x, it)
    away = (x > 0.0) == (y > x)
    step = pk.bitcast(pk.select(away, bits + it(1), bits - it(1)), x.dtype)
    tiny = pk.copysign(pk.bitcast(it(1), x.dtype), y)
    r = pk.select(x == 0.0, tiny, step)
    r = pk.select(x == y, y, r)
    return pk.select(x != x or y != y, x + y, r)


@pk.func
def logaddexp_f(x, y):
    d = x - y
    m = pk.select(x > y, x, y)
    return pk.select(d != d, x + y, m + log1p_f(pk.exp(-builtins.abs(d))))


# ---------------------------------------------------------------- type rules


@dataclass(frozen=True)
class BinaryPlan:
    """How one call runs: `fn` over operands converted to `compute`, stored as `result`."""

    fn: Func
    result: DType
    compute: DType


def _arith(op: BinaryOp, p: DType) -> BinaryPlan:
    """The promoted dtype; bools where numpy gives them a meaning (`op.for_bool`)."""
    if p == dt.bool_:
        if op.for_bool is None:
            raise TypeError(f"{op.name} is not supported for bool tensors; convert with "
                            ".astype() first")
        return BinaryPlan(op.for_bool, p, p)
    return BinaryPlan(op.fn, p, pr.compute_dtype(p))


def _floor_divide(op: BinaryOp, p: DType) -> BinaryPlan:
    """As `_arith`; floats take the standard's values where an operand is infinite."""
    if p.is_float:
        return BinaryPlan(floor_divide_float_f, p, pr.compute_dtype(p))
    return _arith(op, p)


def _divide(op: BinaryOp, p: DType) -> BinaryPlan:
    """True division: a float result (f32 for integers)."""
    out = p if p.is_float else pr.DEFAULT_FLOAT
    return BinaryPlan(op.fn, out, pr.compute_dtype(out))


def _compare(op: BinaryOp, p: DType) -> BinaryPlan:
    return BinaryPlan(op.fn, dt.bool_, pr.compute_dtype(p))


def _bitwise(op: BinaryOp, p: DType) -> BinaryPlan:
    if p.is_float:
        raise TypeError(f"{op.name} needs integer or bool operands, not {p.name}")
    return BinaryPlan(op.fn, p, p)


def _shift(op: BinaryOp, p: DType) -> BinaryPlan:
    if not p.is_int:
        raise TypeError(f"{op.name} needs integer operands, not {p.name}")
    return BinaryPlan(op.fn, p, p)


def _float_math(op: BinaryOp, p: DType) -> BinaryPlan:
    """Float result, transcendental: computed in f32, f64 for f64 (where the device lacks f64
    math, `pykern.passes.decompose` supplies it)."""
    out = p if p.is_float else pr.DEFAULT_FLOAT
    return BinaryPlan(op.fn, out, pr.compute_float(out))


def _float(op: BinaryOp, p: DType) -> BinaryPlan:
    """Float result, exact in every float type."""
    out = p if p.is_float else pr.DEFAULT_FLOAT
    return BinaryPlan(op.fn, out, pr.compute_dtype(out))


def _logical(op: BinaryOp, p: DType) -> BinaryPlan:
    return BinaryPlan(op.fn, dt.bool_, dt.bool_)


# ---------------------------------------------------------------- the table


@dataclass(frozen=True, eq=False)
class BinaryOp:
    """A binary op: `name` (for errors and numpy's ufunc names), `fn` its element function,
    `rule` its type rule. `for_bool` is the element function for bool operands where numpy
    has one (add is or). For a
    comparison, `beyond_range` is its truth for `int_tensor OP scalar` with the scalar above
    (first) or below (second) the dtype's range (numpy 2 allows such scalars there only)."""

    name: str
    fn: Func
    rule: Callable[[BinaryOp, DType], BinaryPlan]
    for_bool: Func | None = None
    beyond_range: tuple[bool, bool] | None = None
    _plans: dict[DType, BinaryPlan] = field(default_factory=dict, repr=False)

    def plan(self, p: DType) -> BinaryPlan:
        """How this op runs on operands promoted to `p` (TypeError where it does not)."""
        plan = self._plans.get(p)
        if plan is None:
            plan = self._plans[p] = self.rule(self, p)
        return plan

    @property
    def doc(self) -> str:
        return (f"Elementwise {self.name} of two tensors (or a tensor and a scalar) with numpy "
                "broadcasting and pykern's type promotion (a new tensor, or `out`).")


ADD = BinaryOp("add", add_f, _arith, for_bool=logical_or_f)
SUBTRACT = BinaryOp("subtract", subtract_f, _arith)
MULTIPLY = BinaryOp("multiply", multiply_f, _arith, for_bool=logical_and_f)
DIVIDE = BinaryOp("divide", divide_f, _divide)
FLOOR_DIVIDE = BinaryOp("floor_divide", floor_divide_f, _floor_divide)
REMAINDER = BinaryOp("remainder", remainder_f, _arith)
POW = BinaryOp("pow", pow_f, _arith)
MAXIMUM = BinaryOp("maximum", maximum_f, _arith, for_bool=logical_or_f)
MINIMUM = BinaryOp("minimum", minimum_f, _arith, for_bool=logical_and_f)
EQUAL = BinaryOp("equal", equal_f, _compare, beyond_range=(False, False))
NOT_EQUAL = BinaryOp("not_equal", not_equal_f, _compare, beyond_range=(True, True))
LESS = BinaryOp("less", less_f, _compare, beyond_range=(True, False))
LESS_EQUAL = BinaryOp("less_equal", less_equal_f, _compare, beyond_range=(True, False))
GREATER = BinaryOp("greater", greater_f, _compare, beyond_range=(False, True))
GREATER_EQUAL = BinaryOp("greater_equal", greater_equal_f, _compare, beyond_range=(False, True))
BITWISE_AND = BinaryOp("bitwise_and", bitwise_and_f, _bitwise)
BITWISE_OR = BinaryOp("bitwise_or", bitwise_or_f, _bitwise)
BITWISE_XOR = BinaryOp("bitwise_xor", bitwise_xor_f, _bitwise)
LEFT_SHIFT = BinaryOp("bitwise_left_shift", left_shift_f, _shift)
RIGHT_SHIFT = BinaryOp("bitwise_right_shift", right_shift_f, _shift)
ATAN2 = BinaryOp("atan2", atan2_f, _float_math)
LOGADDEXP = BinaryOp("logaddexp", logaddexp_f, _float_math)
HYPOT = BinaryOp("hypot", hypot_f, _float)
COPYSIGN = BinaryOp("copysign", copysign_f, _float)
NEXTAFTER = BinaryOp("nextafter", nextafter_f, _float)
LOGICAL_AND = BinaryOp("logical_and", logical_and_f, _logical)
LOGICAL_OR = BinaryOp("logical_or", logical_or_f, _logical)
LOGICAL_XOR = BinaryOp("logical_xor", not_equal_f, _logical)

BINARY: dict[str, BinaryOp] = {op.name: op for op in (
    ADD, SUBTRACT, MULTIPLY, DIVIDE, FLOOR_DIVIDE, REMAINDER, POW, MAXIMUM, MINIMUM, EQUAL,
    NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL, BITWISE_AND, BITWISE_OR, BITWISE_XOR,
    LEFT_SHIFT, RIGHT_SHIFT, ATAN2, LOGADDEXP, HYPOT, COPYSIGN, NEXTAFTER, LOGICAL_AND,
    LOGICAL_OR, LOGICAL_XOR)}
"""Every binary op by name (numpy's ufuncs look them up; operators name their entry)."""


def beyond_range(op: BinaryOp, a: object, b: object, p: DType) -> tuple[object, bool] | None:
    """For a comparison of an integer operand of dtype `p` with a Python int outside `p`'s
    range (`i8_tensor < 1000`: numpy 2 allows such scalars for comparisons only), the operand
    that is not the scalar and the comparison's truth, the same for every element; else None.
    The eager ops and `pk.fuse` both decide it here."""
    if op.beyond_range is None:
        return None
    if pr.is_python_scalar(b) and not pr.is_python_scalar(a):
        operand, value, scalar_first = a, b, False
    elif pr.is_python_scalar(a) and not pr.is_python_scalar(b):
        operand, value, scalar_first = b, a, True
    else:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    info = np.iinfo(p.numpy)
    if info.min <= value <= info.max:
        return None
    above = value > info.max  # every element is below the scalar
    # `scalar OP t` is `t OP' scalar` with OP' the mirrored comparison, whose truth table is
    # this one's reversed (less <-> greater; equal and not_equal are symmetric)
    return operand, op.beyond_range[int(above == scalar_first)]
