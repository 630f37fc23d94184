"""The table of binary ops: for each, its element function (a `@pk.func` of two values of the
compute type, run by the generic binary kernel), its type rule, and its name for errors and
numpy's ufuncs. `pykern.tensor.elementwise.functions` runs them; `pk.Tensor`'s operators name their
entry (`ADD`, ...) directly.
"""

from __future__ import annotations

import builtins
import cmath
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import pykern as pk

from pykern.lang import builtins as bi
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.lang.func import Func
from pykern.ops.registry import Aliases, Op, register
from pykern.tensor.core import promotion as pr
from pykern.tensor.elementwise.unary_ops import HOLOMORPHIC, holomorphic, log1p_f

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


# ---------------------------------------------------------------- the declarations


class BinaryOp(Op):
    """A binary op: `name` (for errors and numpy's ufunc names), `fn` its element function,
    `rule` its type rule. `for_bool` is the element function for bool operands where numpy
    has one (add is or). For a comparison, `beyond_range` is its truth for
    `int_tensor OP scalar` with the scalar above (first) or below (second) the dtype's range
    (numpy 2 allows such scalars there only). `grads` are the formulas of the gradients of
    the two inputs (each of `g` and, by name, the tensors it reads: `a`, `b`, `out`), run
    only for an input that requires grad; `complex_grads` those for complex operands
    ("holomorphic": the real ones conjugated, `pykern.tensor.complex.complex_grads`). `domain`:
    where the test matrix's samples lie (default -2..2)."""

    def __init__(self, name: str, fn: Func, rule: Callable[[BinaryOp, DType], BinaryPlan], *,
                 for_bool: Func | None = None, beyond_range: tuple[bool, bool] | None = None,
                 grads: tuple[Callable[..., Any], Callable[..., Any]] | None = None,
                 complex_grads: tuple[Callable[..., Any], Callable[..., Any]] | str | None = None,
                 aliases: Aliases | None = None, exports: tuple[str, ...] = ("pk", "array_api"),
                 builtin: Any = None, doc: str | None = None,
                 domain: tuple[float, float] | None = None) -> None:
        float_result = rule in (_arith, _floor_divide, _divide, _float_math, _float)
        super().__init__(name, doc or _doc(name), "binary", exports=exports,
                         aliases=aliases if aliases is not None else _aliases(name),
                         types=(rule.__doc__ or "").split("\n")[0],
                         grad=("formula" if grads is not None else
                               "refused" if float_result else "none"),
                         backward=grads, complex_grad=complex_grads is not None,
                         builtin=builtin, samples={"domain": domain} if domain else None)
        self.fn, self.rule, self.for_bool, self.beyond_range = fn, rule, for_bool, beyond_range
        if complex_grads == HOLOMORPHIC:
            complex_grads = grads
        self.complex_backward = None if not complex_grads else \
            (holomorphic(complex_grads[0]), holomorphic(complex_grads[1]))
        self._plans: dict[DType, BinaryPlan] = {}

    def plan(self, p: DType) -> BinaryPlan:
        """How this op runs on operands promoted to `p` (TypeError where it does not)."""
        plan = self._plans.get(p)
        if plan is None:
            plan = self._plans[p] = self.rule(self, p)
        return plan


def _doc(name: str) -> str:
    return (f"Elementwise {name} of two tensors (or a tensor and a scalar) with numpy "
            "broadcasting and pykern's type promotion (a new tensor, or `out`).")


def _aliases(name: str, numpy: tuple[str, ...] | None = None, torch: str | None = None,
             aten: tuple[str, ...] | None = None, array_api: bool = True) -> Aliases:
    """A binary op's names elsewhere: by default its own name in numpy, the array API and
    PyTorch, and `aten::<torch name>.Tensor`."""
    torch = torch or name
    return Aliases(numpy=(name,) if numpy is None else numpy,
                   array_api=name if array_api else None, torch=(torch,),
                   aten=(f"aten::{torch}.Tensor",) if aten is None else aten)


def _zero(g: Any, *_: Any) -> Any:
    return g * 0.0


def _max_share(a: Any, b: Any) -> Any:
    """The share of maximum(a, b)'s gradient that goes to `a`: ties split it equally, as
    PyTorch's do."""
    return pk.where(a > b, 1.0, pk.where(a == b, 0.5, 0.0))


def _pow_a(g: Any, a: Any, b: Any) -> Any:
    """d a**b / da = b·a^(b-1), and 0 where b == 0 (a**0 is constant; the formula would give
    0·0^-1 = NaN at a = 0), as PyTorch's."""
    if isinstance(b, (int, float, complex)):
        return g * 0.0 if b == 0 else g * b * a ** (b - 1)
    return pk.where(b == 0, 0.0, g * b * a ** (b - 1))


def _pow_b(g: Any, a: Any, b: Any, out: Any) -> Any:
    """d a**b / db = a**b·log a, and 0 where a == 0 and b >= 0 (0**b is constant there; the
    formula would give 0·-inf = NaN), as PyTorch's. A base of 0 given as a Python number has
    log -inf."""
    if isinstance(a, (int, float)):
        if a == 0:
            return pk.where(b >= 0, 0.0, g * out * float("-inf"))
        return g * out * math.log(a)
    return pk.where((a == 0) & (b >= 0), 0.0, g * out * pk.log(a))


def _pow_b_complex(g: Any, a: Any, out: Any) -> Any:
    """d a**b / db = a**b log a, 0 where a == 0 (log 0 = -inf; 0**b is 0 or nan there)."""
    if isinstance(a, (int, float, complex)):
        return g * 0.0 if a == 0 else g * out * cmath.log(a)
    return pk.where(a == 0, 0.0, g * out * pk.log(a))


def _hypot_a(g: Any, a: Any, out: Any) -> Any:
    return g * a / out


def _hypot_b(g: Any, b: Any, out: Any) -> Any:
    return g * b / out




def _cmp(name: str, torch: str, beyond: tuple[bool, bool]) -> BinaryOp:
    """A comparison: a bool result (nothing to differentiate)."""
    return BinaryOp(name, _COMPARISONS[name], _compare, beyond_range=beyond,
                    aliases=_aliases(name, torch=torch,
                                     aten=(f"aten::{torch}.Tensor", f"aten::{torch}.Scalar")))


_COMPARISONS = {"equal": equal_f, "not_equal": not_equal_f, "less": less_f,
                "less_equal": less_equal_f, "greater": greater_f,
                "greater_equal": greater_equal_f}

ADD = BinaryOp("add", add_f, _arith, for_bool=logical_or_f, grads=(lambda g: g, lambda g: g),
               complex_grads=HOLOMORPHIC,
               aliases=_aliases("add", aten=("aten::add.Tensor", "aten::add.Scalar")))
SUBTRACT = BinaryOp("subtract", subtract_f, _arith, grads=(lambda g: g, lambda g: -g),
                    complex_grads=HOLOMORPHIC, aliases=_aliases(
                        "subtract", torch="sub", aten=("aten::sub.Tensor", "aten::sub.Scalar")))
MULTIPLY = BinaryOp("multiply", multiply_f, _arith, for_bool=logical_and_f,
                    grads=(lambda g, b: g * b, lambda g, a: g * a), complex_grads=HOLOMORPHIC,
                    aliases=_aliases("multiply", torch="mul",
                                     aten=("aten::mul.Tensor", "aten::mul.Scalar")))
DIVIDE = BinaryOp("divide", divide_f, _divide,
                  grads=(lambda g, b: g / b, lambda g, b, out: -g * out / b),
                  complex_grads=HOLOMORPHIC,
                  aliases=_aliases("divide", numpy=("divide", "true_divide"), torch="div",
                                   aten=("aten::div.Tensor", "aten::div.Scalar")))
FLOOR_DIVIDE = BinaryOp("floor_divide", floor_divide_f, _floor_divide, grads=(_zero, _zero),
                        aliases=_aliases("floor_divide", aten=("aten::floor_divide",)))
REMAINDER = BinaryOp("remainder", remainder_f, _arith,
                     grads=(lambda g: g, lambda g, a, b: -g * pk.floor(a / b)),
                     aliases=_aliases("remainder", numpy=("remainder", "mod")))
POW = BinaryOp("pow", pow_f, _arith, grads=(_pow_a, _pow_b), complex_grads=(_pow_a, _pow_b_complex),
               builtin=bi.pow, domain=(0.5, 2.0),
               aliases=_aliases("pow", numpy=("power", "pow"), aten=(
                   "aten::pow.Tensor_Tensor", "aten::pow.Tensor_Scalar", "aten::pow.Scalar")))
MAXIMUM = BinaryOp("maximum", maximum_f, _arith, for_bool=logical_or_f,
                   grads=(lambda g, a, b: g * _max_share(a, b),
                          lambda g, a, b: g * _max_share(b, a)),
                   aliases=_aliases("maximum", aten=("aten::maximum",)))
MINIMUM = BinaryOp("minimum", minimum_f, _arith, for_bool=logical_and_f,
                   grads=(lambda g, a, b: g * _max_share(b, a),
                          lambda g, a, b: g * _max_share(a, b)),
                   aliases=_aliases("minimum", aten=("aten::minimum",)))
EQUAL = _cmp("equal", "eq", (False, False))
NOT_EQUAL = _cmp("not_equal", "ne", (True, True))
LESS = _cmp("less", "lt", (True, False))
LESS_EQUAL = _cmp("less_equal", "le", (True, False))
GREATER = _cmp("greater", "gt", (False, True))
GREATER_EQUAL = _cmp("greater_equal", "ge", (False, True))
BITWISE_AND = BinaryOp("bitwise_and", bitwise_and_f, _bitwise)
BITWISE_OR = BinaryOp("bitwise_or", bitwise_or_f, _bitwise)
BITWISE_XOR = BinaryOp("bitwise_xor", bitwise_xor_f, _bitwise)
LEFT_SHIFT = BinaryOp("bitwise_left_shift", left_shift_f, _shift, aliases=_aliases(
    "bitwise_left_shift", numpy=("left_shift", "bitwise_left_shift")))
RIGHT_SHIFT = BinaryOp("bitwise_right_shift", right_shift_f, _shift, aliases=_aliases(
    "bitwise_right_shift", numpy=("right_shift", "bitwise_right_shift")))
ATAN2 = BinaryOp("atan2", atan2_f, _float_math, builtin=bi.atan2,
                 grads=(lambda g, a, b: g * b / (a * a + b * b),
                        lambda g, a, b: -g * a / (a * a + b * b)),
                 aliases=_aliases("atan2", numpy=("arctan2", "atan2"), aten=("aten::atan2",)))
LOGADDEXP = BinaryOp("logaddexp", logaddexp_f, _float_math,
                     grads=(lambda g, a, out: g * pk.exp(a - out),
                            lambda g, b, out: g * pk.exp(b - out)),
                     aliases=_aliases("logaddexp", aten=("aten::logaddexp",)))
HYPOT = BinaryOp("hypot", hypot_f, _float, grads=(_hypot_a, _hypot_b),
                 aliases=_aliases("hypot", aten=("aten::hypot",)))
COPYSIGN = BinaryOp("copysign", copysign_f, _float, builtin=bi.copysign,
                    grads=(lambda g, a, out: g * pk.sign(a) * pk.sign(out), _zero))
# nextafter is one ulp from x: x's own slope; y only picks the direction
NEXTAFTER = BinaryOp("nextafter", nextafter_f, _float, grads=(lambda g: g, _zero),
                     aliases=_aliases("nextafter", aten=("aten::nextafter",)))
LOGICAL_AND = BinaryOp("logical_and", logical_and_f, _logical,
                       aliases=_aliases("logical_and", aten=("aten::logical_and",)))
LOGICAL_OR = BinaryOp("logical_or", logical_or_f, _logical,
                      aliases=_aliases("logical_or", aten=("aten::logical_or",)))
LOGICAL_XOR = BinaryOp("logical_xor", not_equal_f, _logical,
                       aliases=_aliases("logical_xor", aten=("aten::logical_xor",)))

BINARY: dict[str, BinaryOp] = {register(op).name: op for op in (
    ADD, SUBTRACT, MULTIPLY, DIVIDE, FLOOR_DIVIDE, REMAINDER, POW, MAXIMUM, MINIMUM, EQUAL,
    NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL, BITWISE_AND, BITWISE_OR, BITWISE_XOR,
    LEFT_SHIFT, RIGHT_SHIFT, ATAN2, LOGADDEXP, HYPOT, COPYSIGN, NEXTAFTER, LOGICAL_AND,
    LOGICAL_OR, LOGICAL_XOR)}
"""Every binary op by name (numpy's ufuncs look them up; operators name their entry)."""


# ---------------------------------------------------------------- fused backward ops


@pk.func
def gelu_grad_f(g, x):
    cdf = 0.5 * (1.0 + pk.erf(x * _SQRT1_2))
    return g * (cdf + x * pk.exp(-0.5 * x * x) * _INV_SQRT_2PI)


@pk.func
def silu_grad_f(g, x):
    s = 1.0 / (1.0 + pk.exp(-x))
    return g * (s * (1.0 + x * (1.0 - s)))


@pk.func
def relu_grad_f(g, x):
    return g if x > 0 else 0.0  # 0 where x <= 0 or nan, even for an infinite g


_SQRT1_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)

# The backward formulas of relu, gelu and silu fused into one element function each, so that the
# gradient of an activation is one kernel over (g, x) instead of a chain of ops (and of
# launches): internal ops (exported nowhere) with the type rule of the float ops they
# differentiate, which those formulas reach through the registry.
GELU_GRAD = register(BinaryOp("gelu_backward", gelu_grad_f, _float_math, exports=(),
                              aliases=Aliases(aten=("aten::gelu_backward",)),
                              doc="The gradient of gelu (erf form): g · (Φ(x) + x φ(x))."))
RELU_GRAD = register(BinaryOp("relu_backward", relu_grad_f, _float_math, exports=(),
                              aliases=Aliases(),  # (ATen's is threshold_backward, with a
                              # threshold argument)
                              doc="The gradient of relu: g where x > 0, else 0."))
SILU_GRAD = register(BinaryOp("silu_backward", silu_grad_f, _float_math, exports=(),
                              aliases=Aliases(aten=("aten::silu_backward",)),
                              doc="The gradient of silu: g · σ(x) (1 + x (1 − σ(x)))."))


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
